/**
 * The disruption Lambda: an EventBridge schedule (every minute, reserved concurrency 1) runs one disruption pass —
 * consolidation, drift and expiration within budgets, PDBs and do-not-disrupt — under the `disruption` lease, so a
 * late or retried invocation that overlaps a running pass backs off. The pass keeps its state on the NodeClaim
 * records, so a crashed pass is simply resumed by the next one. A failing pass throws (Lambda's retry and the next
 * schedule try again). A pass that leaves work in flight asks for a follow-up pass 20 s later
 * (`DisruptionReport.followUpAfterMs`, `shared/ports/follow-up-passes.ts`), which arrives as an SQS message from the
 * follow-up queue and runs one pass the same way. Any other event is logged and dropped.
 */
import middy from '@middy/core';
import type { ScheduledEvent, SQSEvent } from 'aws-lambda';
import * as z from 'zod';
import type { DisruptionReport } from '../../shared/controllers/disruption/deps.js';
import { disruptionDecisions, publishDecisions } from '../../shared/lambda/decisions.js';
import type { Log } from '../../shared/lambda/log.js';
import { disruptionMetrics, publishMetrics, type MetricsPublisher } from '../../shared/lambda/metrics.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { DecisionPublisher } from '../../shared/ports/decisions.js';
import type { FollowUpPasses } from '../../shared/ports/follow-up-passes.js';
import { runUnderLease, type InvocationContext, type PeriodicLease } from '../../shared/lambda/periodic-lease.js';

/** Name of the disruption controller's lease (the table item `LEASE#disruption`). */
export const DISRUPTION_LEASE_NAME = 'disruption';

/** What the handler needs: one disruption pass, a log and, optionally, the lease that serialises passes. */
export interface DisruptionHandlerDeps {
  /** Runs the disruption controller once (the composition root binds its ports). */
  readonly disrupt: () => Promise<DisruptionReport>;
  readonly log: Log;
  /** Without it, overlapping passes could both start disruptions: production always passes one. */
  readonly lease?: PeriodicLease;
  /** Karpenter-named metrics of each pass (`shared/lambda/metrics.ts`); none when absent. */
  readonly metrics?: MetricsPublisher;
  /** Where the pass's decisions go (EventBridge in production); none when absent. Its failures are only logged. */
  readonly decisions?: DecisionPublisher;
  /**
   * Where a pass with work in flight asks for its follow-up (an SQS FIFO queue in production, the virtual clock in the
   * simulation), and the clock its delay counts from. Without it passes run on the schedule only. Failures are logged.
   */
  readonly followUps?: { readonly passes: FollowUpPasses; readonly clock: Clock };
}

/** What one invocation did: the pass's report, `backedOff`, or `ignored` for an event that is not the schedule. */
export type DisruptionHandlerResult = { readonly report: DisruptionReport } | { readonly backedOff: true } | { readonly ignored: true };

const ScheduledEventSchema = z.looseObject({ source: z.literal('aws.events'), 'detail-type': z.literal('Scheduled Event') });

/** A batch from the follow-up queue (its messages carry nothing the pass needs: each asks for one pass). */
const FollowUpEventSchema = z.looseObject({ Records: z.array(z.looseObject({ eventSource: z.literal('aws:sqs') })).min(1) });

/** The events that run a pass: the schedule's, or a follow-up batch. */
export type DisruptionEvent = ScheduledEvent | SQSEvent;

/**
 * Builds the handler.
 * @throws whatever the pass throws (so Lambda retries), and DynamoDB failures taking the lease
 * @example
 * export const handler = createHandler({ disrupt: () => disrupt(deps), log, lease: { leases, clock } });
 */
export function createHandler(deps: DisruptionHandlerDeps): (event: DisruptionEvent, context?: unknown) => Promise<DisruptionHandlerResult> {
  const run = async (event: unknown, context: InvocationContext): Promise<DisruptionHandlerResult> => {
    if (!ScheduledEventSchema.safeParse(event).success && !FollowUpEventSchema.safeParse(event).success) {
      deps.log.error('dropping disruption invocation: neither an EventBridge scheduled event nor a follow-up batch', { keys: event && typeof event === 'object' ? Object.keys(event) : typeof event });
      return { ignored: true };
    }
    const outcome = await runUnderLease(DISRUPTION_LEASE_NAME, deps.lease, context, deps.disrupt, deps.log);
    if ('backedOff' in outcome) return outcome;
    const r = outcome.report;
    for (const p of r.proposed) deps.log.info('disruption proposed', { ...p });
    for (const command of r.started) deps.log.info('disruption started', { command });
    for (const nodeClaim of r.expired) deps.log.info('nodeclaim expired', { NodeClaim: nodeClaim });
    for (const d of r.deleted) deps.log.info('disrupted node deleted', { ...d });
    for (const x of r.rejected) deps.log.info('disruption abandoned', { ...x });
    for (const b of r.blocked) deps.log.info('disruption blocked', { NodeClaim: b.nodeClaim, Node: b.node, reason: b.reason });
    for (const b of r.budgetBlocked) deps.log.info('disruption blocked by budget', { NodePool: b.nodePool, reason: b.reason });
    if (r.evicted.length > 0) deps.log.info('pods evicted', { evicted: r.evicted });
    if (r.forceDeleted?.length) deps.log.info('pods deleted at the terminationGracePeriod deadline', { deleted: r.forceDeleted });
    if (r.waiting.length > 0) deps.log.info('drain waiting', { waiting: r.waiting });
    if (r.skipped.length > 0) deps.log.debug('candidates skipped', { skipped: r.skipped });
    publishMetrics(deps.metrics, disruptionMetrics(r), deps.log);
    await publishDecisions(deps.decisions, disruptionDecisions(r), deps.log, deps.metrics);
    if (r.followUpAfterMs !== undefined && deps.followUps) {
      const atMs = deps.followUps.clock.now() + r.followUpAfterMs;
      try {
        await deps.followUps.passes.request(atMs);
      } catch (e) {
        deps.log.warn('follow-up pass not requested; the next scheduled pass goes on', { error: e instanceof Error ? e.message : String(e) });
      }
    }
    return outcome;
  };
  const handler = middy<DisruptionEvent, DisruptionHandlerResult>().handler(run);
  return (event, context) => handler(event, (context ?? {}) as never);
}
