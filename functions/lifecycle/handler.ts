/**
 * The lifecycle Lambda: an EventBridge schedule (every minute) runs one lifecycle pass — registration,
 * initialization, the registration timeout and garbage collection. The relay may also invoke it with a node event
 * (a Node registered, turned Ready or NotReady, or was deleted) so a new node is registered at once instead of at
 * the next minute.
 *
 * The event is a trigger, not an instruction: the controller reads the current state, so a duplicate, late or
 * overlapping invocation is harmless. An event that is neither is logged and dropped (retrying it would not help).
 * A failing pass throws, so Lambda's asynchronous retry (and the next scheduled run) tries again.
 *
 * With a {@link LifecycleLease}, a pass runs only while its invocation holds the `lifecycle` lease
 * (../shared/DESIGN.md "State and idempotency"): an invocation that overlaps a running pass backs off and returns
 * `backedOff: true` — the running pass reads the same state. The holder is the Lambda request id (kept across
 * Lambda's asynchronous retries, so a retry of a crashed invocation may take its own lease back at once).
 */
import middy from '@middy/core';
import type { ScheduledEvent } from 'aws-lambda';
import { z } from 'zod';
import { PodEventSchema, type PodEvent } from '../../shared/core/api/pod-event.js';
import type { LifecycleReport } from '../../shared/controllers/lifecycle.js';
import type { Log } from '../../shared/lambda/log.js';
import { lifecycleMetrics, publishMetrics, type MetricsPublisher } from '../../shared/lambda/metrics.js';
import { runUnderLease, type InvocationContext, type PeriodicLease } from '../../shared/lambda/periodic-lease.js';

/** Name of the lifecycle controller's lease (the table item `LEASE#lifecycle`). */
export const LIFECYCLE_LEASE_NAME = 'lifecycle';

/**
 * The lease that serialises lifecycle passes (`shared/lambda/periodic-lease.ts`): its duration defaults to the
 * invocation's remaining time plus a margin, so a crashed invocation blocks the next passes only until it would have
 * timed out anyway.
 */
export type LifecycleLease = PeriodicLease;

/** What the handler needs: one lifecycle pass, a log and, optionally, the lease that serialises passes. */
export interface LifecycleHandlerDeps {
  /** Runs the lifecycle controller once (the composition root binds its ports). */
  readonly reconcile: () => Promise<LifecycleReport>;
  readonly log: Log;
  /** Without it, overlapping passes both run (each is safe — every write is conditional — just wasteful). */
  readonly lease?: LifecycleLease;
  /** Karpenter-named metrics of each pass (`shared/lambda/metrics.ts`); none when absent. */
  readonly metrics?: MetricsPublisher;
}

/** A relay node event (`kind: node`). */
export type NodeEvent = Extract<PodEvent, { kind: 'node' }>;

/** What the lifecycle Lambda may be invoked with. */
export type LifecycleEvent = ScheduledEvent | NodeEvent;

/**
 * What one invocation did: which trigger it recognised and either the pass's report, or `backedOff: true` when
 * another invocation held the lease (no pass ran). A dropped event has neither.
 */
export interface LifecycleHandlerResult {
  readonly trigger: 'schedule' | 'node' | 'ignored';
  readonly report?: LifecycleReport;
  /** True when another invocation's pass held the `lifecycle` lease, so this one did nothing. */
  readonly backedOff?: true;
}

/** The EventBridge scheduled event fields the handler checks. */
const ScheduledEventSchema = z.looseObject({ source: z.literal('aws.events'), 'detail-type': z.literal('Scheduled Event') });

/**
 * Builds the handler: a middy chain that recognises the trigger, runs one pass (under the lease, when given) and
 * logs its report. Mirror failures are logged at `warn`; they never fail the pass.
 * @throws whatever the pass throws (so Lambda retries), and DynamoDB failures taking the lease
 * @example
 * export const handler = createHandler({ reconcile: () => reconcileLifecycle(deps), log, lease: { leases, clock } });
 */
export function createHandler(deps: LifecycleHandlerDeps): (event: LifecycleEvent, context?: unknown) => Promise<LifecycleHandlerResult> {
  const run = async (event: unknown, context: InvocationContext): Promise<LifecycleHandlerResult> => {
    const trigger = triggerOf(event);
    if (trigger === 'ignored') {
      deps.log.error('dropping lifecycle invocation: neither an EventBridge scheduled event nor a relay node event', { keys: event && typeof event === 'object' ? Object.keys(event) : typeof event });
      return { trigger };
    }
    const outcome = await runUnderLease(LIFECYCLE_LEASE_NAME, deps.lease, context, deps.reconcile, deps.log);
    if ('backedOff' in outcome) return { trigger, backedOff: true };
    const report = outcome.report;
    if (report.mirrorFailures.length > 0) deps.log.warn('NodeClaim mirror failed (the pass went on; the next pass retries)', { trigger, mirrorFailures: report.mirrorFailures });
    const acted = Object.entries(report).some(([k, v]) => k !== 'mirrorFailures' && Array.isArray(v) && v.length > 0);
    if (acted) deps.log.info('lifecycle pass', { trigger, ...report });
    else deps.log.debug('lifecycle pass: nothing to do', { trigger, conflicts: report.conflicts });
    publishMetrics(deps.metrics, lifecycleMetrics(report), deps.log);
    return { trigger, report };
  };
  const handler = middy<LifecycleEvent, LifecycleHandlerResult>().handler(run);
  return (event, context) => handler(event, (context ?? {}) as never);
}

function triggerOf(event: unknown): LifecycleHandlerResult['trigger'] {
  if (ScheduledEventSchema.safeParse(event).success) return 'schedule';
  const relay = PodEventSchema.safeParse(event);
  if (relay.success && relay.data.kind === 'node') return 'node';
  return 'ignored';
}
