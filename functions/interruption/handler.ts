/**
 * The interruption Lambda: consumes the standard SQS interruption queue that five EventBridge rules feed (spot
 * interruption warnings, rebalance recommendations, instance state changes, AWS Health scheduled changes for EC2,
 * Capacity Reservation interruption warnings; docs/karpenter-semantics.md#interruption) and runs the interruption
 * controller once
 * per message.
 *
 * Karpenter deletes a message it cannot parse and every message it handled; so does this handler: a malformed message
 * is logged, counted and acknowledged (retrying it would never succeed), as is one about an instance Skiff does not
 * own. A message whose controller call fails is reported in `batchItemFailures` and comes back after the visibility
 * timeout (the controller is idempotent, so the retry resumes where the failed call stopped); a crash acknowledges
 * nothing, and the whole batch comes back the same way. Messages of one batch are handled one after the other (two
 * messages about one instance — a spot warning and its state change — then never race each other).
 *
 * The batch's counts are returned, logged and published as `karpenter_interruption_*` metrics; the decisions (each
 * disrupted NodeClaim, its replacements) go to the decisions port, best effort.
 */
import middy from '@middy/core';
import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { parseInterruptionMessage, type InterruptionMessage } from '../../shared/core/api/interruption-events.js';
import type { InterruptionReport } from '../../shared/controllers/interruption.js';
import { interruptionDecisions, publishDecisions } from '../../shared/lambda/decisions.js';
import type { Log } from '../../shared/lambda/log.js';
import { interruptionMetrics, publishMetrics, type MetricsPublisher } from '../../shared/lambda/metrics.js';
import type { DecisionPublisher } from '../../shared/ports/decisions.js';

/** What the handler needs: the controller for one message, and a log. */
export interface InterruptionHandlerDeps {
  /** Handles one parsed message (the composition root binds the controller's ports). */
  readonly handle: (message: InterruptionMessage) => Promise<InterruptionReport>;
  readonly log: Log;
  /** Where the batch's `karpenter_interruption_*` metrics go (EMF in the Lambda); none in tests and the simulation. */
  readonly metrics?: MetricsPublisher;
  /** Where the batch's decisions go (EventBridge in production); none when absent. Its failures are only logged. */
  readonly decisions?: DecisionPublisher;
}

/** Counts of one invocation (what issue 9 turns into `karpenter_interruption_*` metrics). */
export interface InterruptionBatchCounts {
  /** Records in the batch (`karpenter_interruption_received_messages_total`). */
  readonly received: number;
  /** Records dropped as malformed (not JSON, not one of the five events, a required field missing). */
  readonly malformed: number;
  /** Records about instances Skiff does not own, already deleted NodeClaims, or events it does not act on. */
  readonly ignored: number;
  /** Records that disrupted a NodeClaim (CordonAndDrain). */
  readonly acted: number;
  /** Records that only recorded an Event (rebalance recommendation, an instance starting). */
  readonly noAction: number;
  /** Records whose controller call failed: reported in `batchItemFailures`, retried. */
  readonly failed: number;
}

/** The SQS partial batch response, plus the counts and per-message reports (Lambda ignores the extra fields). */
export interface InterruptionBatchResponse extends SQSBatchResponse {
  readonly counts: InterruptionBatchCounts;
  readonly reports: readonly InterruptionReport[];
}

/**
 * Builds the handler: a middy chain that parses each record, runs the controller for the well-formed ones, and
 * returns `batchItemFailures` for the records to redeliver.
 * @example
 * export const handler = createHandler({ handle: (m) => handleInterruption(deps, m), log });
 */
export function createHandler(deps: InterruptionHandlerDeps): (event: SQSEvent, context?: unknown) => Promise<InterruptionBatchResponse> {
  const run = async (event: SQSEvent, context: InvocationResult): Promise<PromiseSettledResult<unknown>[]> => {
    const counts = { received: event.Records.length, malformed: 0, ignored: 0, acted: 0, noAction: 0, failed: 0 };
    const reports: InterruptionReport[] = [];
    const outcomes: PromiseSettledResult<unknown>[] = [];
    for (const record of event.Records) {
      const parsed = parseInterruptionMessage(record.body);
      if (!parsed.ok) {
        counts.malformed++;
        deps.log.error('dropping malformed interruption message', { messageId: record.messageId, reason: parsed.reason });
        outcomes.push({ status: 'fulfilled', value: undefined });
        continue;
      }
      if (parsed.message.kind === 'ignored') {
        counts.ignored++;
        deps.log.debug('interruption message not acted on', { messageId: record.messageId, why: parsed.message.why });
        outcomes.push({ status: 'fulfilled', value: undefined });
        continue;
      }
      try {
        const report = await deps.handle(parsed.message);
        reports.push(report);
        if (report.instances.some((i) => i.kind === 'acted')) counts.acted++;
        else if (report.instances.some((i) => i.kind === 'noAction')) counts.noAction++;
        else counts.ignored++;
        for (const i of report.instances) {
          if (i.kind === 'acted') deps.log.info('interruption handled', { messageId: record.messageId, messageKind: report.kind, ...i });
          else if (i.kind === 'noAction') deps.log.info('interruption message recorded', { messageId: record.messageId, messageKind: report.kind, ...i });
          else deps.log.debug('interruption message ignored', { messageId: record.messageId, messageKind: report.kind, ...i });
        }
        outcomes.push({ status: 'fulfilled', value: report });
      } catch (error) {
        counts.failed++;
        outcomes.push({ status: 'rejected', reason: error });
      }
    }
    deps.log.info('interruption batch', { ...counts });
    publishMetrics(deps.metrics, interruptionMetrics(counts, reports), deps.log);
    await publishDecisions(deps.decisions, reports.flatMap(interruptionDecisions), deps.log, deps.metrics);
    context.skiffResult = { counts, reports };
    return outcomes;
  };
  const handler = middy<SQSEvent, SQSBatchResponse>()
    .use(sqsPartialBatchFailure({ logger: (reason: unknown, record: SQSRecord) => deps.log.warn('interruption message will be retried', { messageId: record.messageId, reason: String(reason) }) }))
    .handler(run as unknown as (event: SQSEvent) => Promise<SQSBatchResponse>);
  return async (event, context) => {
    // A context of its own per invocation: overlapping invocations never see each other's counts.
    const invocation: InvocationResult = Object.assign(Object.create(null) as object, context && typeof context === 'object' ? context : {});
    const response = await handler(event, invocation as never);
    const { counts, reports } = invocation.skiffResult ?? { counts: { received: event.Records.length, malformed: 0, ignored: 0, acted: 0, noAction: 0, failed: 0 }, reports: [] };
    return { ...response, counts, reports };
  };
}

/** The Lambda context as the handler uses it: where one invocation leaves its counts for the wrapper. */
interface InvocationResult {
  skiffResult?: { readonly counts: InterruptionBatchCounts; readonly reports: readonly InterruptionReport[] };
}
