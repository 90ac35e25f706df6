/**
 * The lifecycle Lambda: an EventBridge schedule (every minute) runs one lifecycle pass — registration,
 * initialization, the registration timeout and garbage collection. A relay node event (a Node registered, turned
 * Ready or NotReady, or was deleted) also runs one, so a new node is registered at once instead of at the next
 * minute; in the stack those events reach the provisioner's queue, and the provisioner runs that pass itself
 * (`functions/provisioner/handler.ts`). A batch from the lifecycle follow-up queue runs one too: a pass that found
 * a Node to register asked for it 20 s later before writing anything (`LifecycleDeps.followUps`), so a pass cut
 * short is resumed without waiting for the schedule.
 *
 * A second schedule (every 12 h) invokes it with `{"task": "refresh-prices"}`: it refreshes the on-demand and spot
 * price snapshot (`shared/lambda/price-refresh.ts`). After a scheduled pass it also refreshes when the snapshot is
 * missing or over 12.5 h old (a new deployment, a failed refresh), at most every 15 minutes per container; a failed
 * catch-up is logged and counted (`skiff_price_refresh_failures_total`), never the pass's failure. A failed
 * scheduled refresh throws (the function's Errors metric; the catch-up retries it).
 *
 * The event is a trigger, not an instruction: the controller reads the current state, so a duplicate, late or
 * overlapping invocation is harmless. An event that is none of these is logged and dropped (retrying it would not help).
 * A failing pass throws, so the next scheduled run tries again.
 *
 * With a {@link LifecycleLease}, a pass runs only while its invocation holds the `lifecycle` lease
 * (docs/architecture.md#leases): an invocation that overlaps a running pass backs off and returns
 * `backedOff: true` — the running pass reads the same state. The holder is the Lambda request id (kept across
 * Lambda's asynchronous retries, so a retry of a crashed invocation may take its own lease back at once). Price
 * refreshes take the `prices` lease instead, so they never hold up a pass.
 */
import middy from '@middy/core';
import type { ScheduledEvent, SQSEvent } from 'aws-lambda';
import * as z from 'zod';
import { PodEventSchema, type PodEvent } from '../../shared/core/api/pod-event.js';
import { metricPoint } from '../../shared/core/metrics.js';
import type { LifecycleReport } from '../../shared/controllers/lifecycle.js';
import type { Log } from '../../shared/lambda/log.js';
import { lifecycleMetrics, publishMetrics, type MetricsPublisher, type PodStartupTracker } from '../../shared/lambda/metrics.js';
import { LIFECYCLE_LEASE_NAME, runUnderLease, type InvocationContext, type PeriodicLease } from '../../shared/lambda/periodic-lease.js';
import type { PriceRefresher, PriceRefreshOutcome } from '../../shared/lambda/price-refresh.js';

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
  /** Measures `karpenter_pods_startup_duration_seconds` across passes (one per container); none when absent. */
  readonly podStartup?: PodStartupTracker;
  /** The price refresh (the 12-hourly task and the catch-up after a scheduled pass); none when absent. */
  readonly prices?: PriceRefresher;
}

/** A relay node event (`kind: node`). */
export type NodeEvent = Extract<PodEvent, { kind: 'node' }>;

/** The 12-hourly price refresh task the stack's `PriceRefresh` schedule sends. */
export interface PriceRefreshEvent {
  readonly task: 'refresh-prices';
}

/** What the lifecycle Lambda may be invoked with. */
export type LifecycleEvent = ScheduledEvent | NodeEvent | PriceRefreshEvent | SQSEvent;

/**
 * What one invocation did: which trigger it recognised and either the pass's report, or `backedOff: true` when
 * another invocation held the lease (no pass ran). A dropped event has neither. `prices`: what a price refresh did
 * (the task, or the catch-up after a scheduled pass).
 */
export interface LifecycleHandlerResult {
  readonly trigger: 'schedule' | 'node' | 'follow-up' | 'refresh-prices' | 'ignored';
  readonly report?: LifecycleReport;
  /** True when another invocation's pass held the `lifecycle` lease, so this one did nothing. */
  readonly backedOff?: true;
  readonly prices?: PriceRefreshOutcome;
}

/** The EventBridge scheduled event fields the handler checks. */
const ScheduledEventSchema = z.looseObject({ source: z.literal('aws.events'), 'detail-type': z.literal('Scheduled Event') });

/** A batch from the lifecycle follow-up queue (its messages carry nothing the pass needs: each asks for one pass). */
const FollowUpEventSchema = z.looseObject({ Records: z.array(z.looseObject({ eventSource: z.literal('aws:sqs') })).min(1) });

/** The price refresh task's event. */
const PriceRefreshEventSchema = z.looseObject({ task: z.literal('refresh-prices') });

/**
 * Builds the handler: a middy chain that recognises the trigger, runs one pass (under the lease, when given) and
 * logs its report, or refreshes prices. Mirror failures are logged at `warn`; they never fail the pass.
 * @throws whatever the pass or a scheduled price refresh throws (so the invocation counts as failed), and DynamoDB
 *   failures taking a lease
 * @example
 * export const handler = createHandler({ reconcile: () => reconcileLifecycle(deps), log, lease: { leases, clock } });
 */
export function createHandler(deps: LifecycleHandlerDeps): (event: LifecycleEvent, context?: unknown) => Promise<LifecycleHandlerResult> {
  const run = async (event: unknown, context: InvocationContext): Promise<LifecycleHandlerResult> => {
    const trigger = triggerOf(event);
    if (trigger === 'ignored' || (trigger === 'refresh-prices' && !deps.prices)) {
      deps.log.error('dropping lifecycle invocation: neither an EventBridge scheduled event, a relay node event, a follow-up batch nor a price refresh task (with a refresher)', {
        keys: event && typeof event === 'object' ? Object.keys(event) : typeof event,
      });
      return { trigger: 'ignored' };
    }
    if (trigger === 'refresh-prices') {
      let prices: PriceRefreshOutcome;
      try {
        prices = await deps.prices!.refresh(context);
      } catch (e) {
        publishMetrics(deps.metrics, [metricPoint('priceRefreshFailures', 1)], deps.log);
        throw e;
      }
      logPrices(prices, deps.log);
      if (prices.status === 'refreshed') publishMetrics(deps.metrics, [metricPoint('priceSnapshotAge', 0)], deps.log);
      return { trigger, prices };
    }
    const outcome = await runUnderLease(LIFECYCLE_LEASE_NAME, deps.lease, context, deps.reconcile, deps.log);
    if ('backedOff' in outcome) return { trigger, backedOff: true };
    const report = outcome.report;
    const { usage: _usage, ...logged } = report;
    if (report.mirrorFailures.length > 0) deps.log.warn('NodeClaim mirror failed (the pass went on; the next pass retries)', { trigger, mirrorFailures: report.mirrorFailures });
    if (report.followUpFailure !== undefined) deps.log.warn('follow-up lifecycle pass not requested; the next scheduled pass goes on', { trigger, error: report.followUpFailure });
    if ((report.failures ?? []).length > 0) deps.log.warn('NodeClaim steps throttled (the pass went on with the others; the next pass retries them)', { trigger, failures: report.failures });
    const acted = Object.entries(logged).some(([k, v]) => k !== 'mirrorFailures' && k !== 'failures' && Array.isArray(v) && v.length > 0);
    if (acted) deps.log.info('lifecycle pass', { trigger, ...logged });
    else deps.log.debug('lifecycle pass: nothing to do', { trigger, conflicts: report.conflicts });
    publishMetrics(deps.metrics, lifecycleMetrics(report, deps.podStartup), deps.log);
    const prices = trigger === 'schedule' && deps.prices ? await catchUpPrices(deps.prices, context, deps) : undefined;
    return { trigger, report, ...(prices ? { prices } : {}) };
  };
  const handler = middy<LifecycleEvent, LifecycleHandlerResult>().handler(run);
  return (event, context) => handler(event, (context ?? {}) as never);
}

/** The catch-up refresh after a scheduled pass: best effort (logged and counted, never thrown). */
async function catchUpPrices(prices: PriceRefresher, context: InvocationContext, deps: LifecycleHandlerDeps): Promise<PriceRefreshOutcome | undefined> {
  try {
    const outcome = await prices.refreshIfStale(context);
    if (outcome.status === 'fresh') publishMetrics(deps.metrics, [metricPoint('priceSnapshotAge', outcome.ageMs / 1000)], deps.log);
    if (outcome.status === 'refreshed') publishMetrics(deps.metrics, [metricPoint('priceSnapshotAge', 0)], deps.log);
    logPrices(outcome, deps.log);
    return outcome;
  } catch (e) {
    deps.log.warn('price refresh failed (the previous prices stay; retried within 15 minutes)', { error: e instanceof Error ? e.message : String(e) });
    publishMetrics(deps.metrics, [metricPoint('priceRefreshFailures', 1)], deps.log);
    return undefined;
  }
}

function logPrices(outcome: PriceRefreshOutcome, log: Log): void {
  if (outcome.status === 'refreshed') log.info('prices refreshed', { ...outcome.result, ...(outcome.previousAgeMs !== undefined ? { previousAgeMs: outcome.previousAgeMs } : {}) });
  else if (outcome.status === 'backedOff') log.info('price refresh skipped: another invocation holds the prices lease');
}

function triggerOf(event: unknown): LifecycleHandlerResult['trigger'] {
  if (ScheduledEventSchema.safeParse(event).success) return 'schedule';
  if (PriceRefreshEventSchema.safeParse(event).success) return 'refresh-prices';
  if (FollowUpEventSchema.safeParse(event).success) return 'follow-up';
  const relay = PodEventSchema.safeParse(event);
  if (relay.success && relay.data.kind === 'node') return 'node';
  return 'ignored';
}
