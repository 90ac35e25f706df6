/**
 * The provisioner Lambda: consumes the FIFO pod-event queue, runs one provisioning pass per batch, and reports
 * partial batch failures so SQS redelivers what must be retried.
 *
 * Messages are triggers, not instructions: the controller reads the cluster's current state, so a duplicate,
 * stale or reordered message is harmless. Malformed messages are logged, counted and dropped (retrying them
 * would never succeed). When the controller fails, or a NodeClaim gave way to an overlapping one in the last solve
 * round, every well-formed record is reported failed and comes back after the visibility timeout; the retry resumes
 * from the NodeClaim records. A launch that a throttled API refused does not fail the batch (issue 21: every failed
 * batch holds back the whole FIFO message group — the cluster's — for the visibility timeout): its NodeClaim stays
 * `Pending` and the lifecycle controller launches it again within a minute, NodeClaim by NodeClaim, as Karpenter's
 * launch controller requeues one NodeClaim (`ProvisionReport.retrying`).
 * A crash (the Lambda dies or times out) acknowledges nothing either, so the whole batch comes back the same way; two
 * invocations of one batch (a redelivery while the first still runs) are safe because the controller is.
 *
 * It also consumes its own follow-up queue (FIFO, 20 s delay): a pass that left pods unschedulable while offerings were
 * marked unavailable asked for another pass (`ProvisionDeps.followUps`); such a record is a trigger like a pod event.
 *
 * Relay node events (a Node registered, turned Ready or NotReady, was deleted) arrive on the same queue. Besides the
 * provisioning pass, a batch with one runs a lifecycle pass (when the composition root gives {@link
 * ProvisionerHandlerDeps.lifecycle}) alongside it, so a new node is registered and initialized at once rather than at
 * the lifecycle schedule's next minute. That pass takes the `lifecycle` lease (it backs off when a scheduled pass is
 * running, which covers the event) and is best effort: its failure is logged and never fails the batch — the
 * schedule runs the same pass within a minute.
 */
import middy from '@middy/core';
import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import * as z from 'zod';
import { PodEventSchema, type PodEvent } from '../../shared/core/api/pod-event.js';
import { SkiffError } from '../../shared/core/errors.js';
import type { LifecycleReport } from '../../shared/controllers/lifecycle.js';
import type { ProvisionReport, ProvisionTrigger } from '../../shared/controllers/provision.js';
import { provisionDecisions, publishDecisions } from '../../shared/lambda/decisions.js';
import type { Log } from '../../shared/lambda/log.js';
import { lifecycleMetrics, nodePoolOfNodeClaim, provisionMetrics, publishMetrics, type MetricsPublisher } from '../../shared/lambda/metrics.js';
import type { InvocationContext } from '../../shared/lambda/periodic-lease.js';
import type { DecisionPublisher } from '../../shared/ports/decisions.js';

/** Most pending pods logged one by one per pass (the rest are counted in `unschedulable`). */
export const MAX_LOGGED_UNSCHEDULABLE = 50;

/** What the handler needs: one provisioning pass, a log and, optionally, where metrics and decisions go. */
export interface ProvisionerHandlerDeps {
  /** Runs the provision controller once (the composition root binds its ports). */
  readonly provision: (trigger: ProvisionTrigger) => Promise<ProvisionReport>;
  readonly log: Log;
  /** Karpenter-named metrics of each pass (`shared/lambda/metrics.ts`); none when absent. */
  readonly metrics?: MetricsPublisher;
  /** Where the pass's decisions go (EventBridge in production); none when absent. Its failures are only logged. */
  readonly decisions?: DecisionPublisher;
  /**
   * Runs one lifecycle pass under the `lifecycle` lease (`runUnderLease` of `shared/lambda/periodic-lease.ts`), for
   * batches with a relay node event; none when absent (node events then only trigger provisioning).
   */
  readonly lifecycle?: (context: InvocationContext) => Promise<{ readonly report: LifecycleReport } | { readonly backedOff: true }>;
}

/**
 * Some NodeClaims gave way to an overlapping pass's NodeClaim in the last round (their pods may have no NodeClaim
 * now): the batch is retried.
 */
export class ProvisioningIncompleteError extends SkiffError {
  /** @param nodeClaims the NodeClaims left to a retry */
  constructor(readonly nodeClaims: readonly string[]) {
    super(`launch of ${nodeClaims.join(', ')} is not done (superseded by an overlapping pass); retrying the batch`);
  }
}

/**
 * Builds the handler: a middy chain that parses SQS records, runs the controller once, and returns
 * `batchItemFailures` for the records to redeliver.
 * @example
 * export const handler = createHandler({ provision: () => provision(deps), log });
 */
export function createHandler(deps: ProvisionerHandlerDeps): (event: SQSEvent, context?: unknown) => Promise<SQSBatchResponse> {
  const run = async (event: SQSEvent, context: InvocationContext): Promise<PromiseSettledResult<unknown>[]> => {
    const parsed = event.Records.map((r) => parseRecord(r, deps.log));
    const valid = parsed.map((e) => e !== undefined);
    const lifecycle = deps.lifecycle && parsed.some((e) => e?.kind === 'node') ? lifecyclePass(deps, deps.lifecycle, context) : Promise.resolve();
    if (!valid.some(Boolean)) return event.Records.map(() => ({ status: 'fulfilled', value: undefined }));
    // The batch's latest send time: a pass that started after it already covers every record.
    const sentAtMs = Math.max(...event.Records.filter((_, i) => valid[i]).map((r) => sentAt(r)));
    const pass = deps.provision({ sentAtMs }).then(async (report) => {
      if (report.coveredByPassAt !== undefined) {
        deps.log.debug('batch already covered by a later pass', { coveredByPassAt: report.coveredByPassAt });
        return report;
      }
      deps.log.info('provisioned', {
        launched: report.launched,
        failed: report.failed,
        nominated: Object.keys(report.nominated).length,
        unschedulable: report.unschedulable.length,
      });
      logDecisions(report, deps.log);
      if (report.followUpFailure !== undefined) deps.log.warn('follow-up provisioning pass not requested; the relay\'s re-list of pending pods still triggers one', { error: report.followUpFailure });
      publishMetrics(deps.metrics, provisionMetrics(report), deps.log);
      await publishDecisions(deps.decisions, provisionDecisions(report), deps.log, deps.metrics);
      if (report.retry.length > 0) throw new ProvisioningIncompleteError(report.retry);
      return report;
    });
    const settled = await Promise.allSettled(event.Records.map((_, i) => (valid[i] ? pass : Promise.resolve(undefined))));
    await lifecycle;
    return settled;
  };
  const handler = middy<SQSEvent, SQSBatchResponse>()
    .use(sqsPartialBatchFailure({ logger: (reason: unknown, record: SQSRecord) => deps.log.warn('record will be retried', { messageId: record.messageId, reason: String(reason) }) }))
    .handler(run as unknown as (event: SQSEvent) => Promise<SQSBatchResponse>);
  return (event, context) => handler(event, (context ?? {}) as never);
}

/**
 * One structured line per decision, with Karpenter's context keys (docs/karpenter-semantics.md#logs): `launched nodeclaim`
 * {NodeClaim, NodePool}; `nodeclaim launch failed` {NodeClaim, NodePool, error}; `pod unschedulable` {Pod, reason,
 * nodePools} for at most {@link MAX_LOGGED_UNSCHEDULABLE} pods (the `provisioned` line counts them all).
 */
function logDecisions(report: ProvisionReport, log: Log): void {
  for (const name of report.launched) log.info('launched nodeclaim', { NodeClaim: name, NodePool: nodePoolOfNodeClaim(name) });
  for (const f of report.failed) log.warn('nodeclaim launch failed', { NodeClaim: f.nodeClaim, NodePool: nodePoolOfNodeClaim(f.nodeClaim), error: f.error });
  for (const r of report.retrying ?? []) log.warn('nodeclaim launch refused, retrying', { NodeClaim: r.nodeClaim, NodePool: nodePoolOfNodeClaim(r.nodeClaim), error: r.error });
  for (const u of report.unschedulable.slice(0, MAX_LOGGED_UNSCHEDULABLE)) log.info('pod unschedulable', { Pod: u.pod, reason: u.reason, nodePools: u.nodePools });
}

/** A record's SentTimestamp (epoch ms); unknown counts as "just now" so the record is never skipped. */
function sentAt(record: SQSRecord): number {
  const ms = Number(record.attributes.SentTimestamp);
  return Number.isFinite(ms) && record.attributes.SentTimestamp !== '' ? ms : Number.POSITIVE_INFINITY;
}

/** A record of the provisioner's follow-up queue: it asks for one pass and carries nothing else the pass needs. */
const FollowUpBodySchema = z.looseObject({ kind: z.literal('provisioner-follow-up') });

/** The record's event (a follow-up is a trigger like any pod event), or undefined (logged) when it is malformed. */
function parseRecord(record: SQSRecord, log: Log): PodEvent | { readonly kind: 'follow-up' } | undefined {
  let body: unknown;
  try {
    body = JSON.parse(record.body);
  } catch {
    log.error('dropping malformed pod event: body is not JSON', { messageId: record.messageId });
    return undefined;
  }
  if (FollowUpBodySchema.safeParse(body).success) return { kind: 'follow-up' };
  const parsed = PodEventSchema.safeParse(body);
  if (!parsed.success) {
    log.error('dropping malformed pod event', { messageId: record.messageId, issues: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`) });
    return undefined;
  }
  return parsed.data;
}

/** The node-triggered lifecycle pass: logged and counted like the lifecycle Lambda's; a failure is only logged. */
async function lifecyclePass(deps: ProvisionerHandlerDeps, run: NonNullable<ProvisionerHandlerDeps['lifecycle']>, context: InvocationContext): Promise<void> {
  try {
    const outcome = await run(context);
    if ('backedOff' in outcome) return;
    const { usage: _usage, ...report } = outcome.report;
    if (report.registered.length + report.initialized.length > 0) deps.log.info('lifecycle pass (node event)', { registered: report.registered, initialized: report.initialized });
    if (report.followUpFailure !== undefined) deps.log.warn('follow-up lifecycle pass not requested; the next scheduled pass goes on', { error: report.followUpFailure });
    publishMetrics(deps.metrics, lifecycleMetrics(outcome.report), deps.log);
  } catch (e) {
    deps.log.warn('lifecycle pass after a node event failed (the scheduled pass retries)', { error: e instanceof Error ? e.message : String(e) });
  }
}
