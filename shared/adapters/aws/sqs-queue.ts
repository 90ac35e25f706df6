/**
 * The pod-event FIFO queue on Amazon SQS (Queue port), with `SendMessageBatch`.
 *
 * - Messages go out in batches of at most {@link SQS_MAX_BATCH_ENTRIES} (10, the SQS limit per `SendMessageBatch`),
 *   one batch after another so the FIFO order within a message group is the order given.
 * - A batch call can succeed with some entries failed (`Failed[]`). Entries that failed on the server's side
 *   (`SenderFault: false`, e.g. `InternalError`) or were throttled are sent again, up to `maxAttempts` in all, after
 *   an exponential backoff with full jitter (AWS Architecture Blog, "Exponential Backoff and Jitter"); entries the
 *   sender got wrong (`SenderFault: true`, e.g. `InvalidParameterValue`) are not. What still failed is thrown as one
 *   {@link QueueSendError}. Re-sending is safe: SQS FIFO drops a message whose deduplication id it saw in the last
 *   5 minutes, so an entry that was in fact stored is not stored twice.
 * - A failed call as a whole (network, throttling, access denied) was already retried by the SDK (standard retry
 *   mode); it leaves as {@link ThrottledError} or {@link CloudProviderError} (`sdk-errors.ts`).
 */
import { SendMessageBatchCommand, type SendMessageBatchRequestEntry, type SQSClient } from '@aws-sdk/client-sqs';
import { SkiffError } from '../../core/errors.js';
import type { Queue } from '../../ports/queue.js';
import { awsError, THROTTLING_CODES } from './sdk-errors.js';

/** Most entries in one `SendMessageBatch` (SQS quota). */
export const SQS_MAX_BATCH_ENTRIES = 10;

/** One message for a FIFO queue. */
export interface FifoMessage {
  /** The message body (SQS allows up to 256 KiB of XML-safe Unicode). */
  readonly body: string;
  /** `MessageGroupId`: messages of one group are delivered in order, one batch at a time. */
  readonly groupId: string;
  /** `MessageDeduplicationId`: a second message with this id within 5 minutes is accepted and dropped. */
  readonly deduplicationId: string;
}

/** One entry SQS did not store. */
export interface QueueSendFailure {
  readonly deduplicationId: string;
  /** The SQS error code, e.g. `InternalError`, `InvalidParameterValue`. */
  readonly code: string;
  readonly message: string;
  /** True when the fault was the sender's (retrying the same entry cannot help). */
  readonly senderFault: boolean;
}

/** Some messages could not be enqueued (after retries for those worth retrying). */
export class QueueSendError extends SkiffError {
  /**
   * @param failures the entries not stored
   * @param sent how many entries of the call were stored
   */
  constructor(
    readonly failures: readonly QueueSendFailure[],
    readonly sent: number,
  ) {
    super(`SQS did not store ${failures.length} message(s) (${sent} stored): ${failures.slice(0, 5).map((f) => `${f.deduplicationId}: ${f.code}: ${f.message}`).join('; ')}`);
  }
}

/** True when `e` is a {@link QueueSendError}. */
export const isQueueSendError = (e: unknown): e is QueueSendError => e instanceof QueueSendError;

/** Options of {@link SqsQueue}. */
export interface SqsQueueOptions {
  readonly client: SQSClient;
  /** The FIFO queue's URL, e.g. `https://sqs.eu-west-1.amazonaws.com/123456789012/skiff-pod-events.fifo`. */
  readonly queueUrl: string;
  /** Attempts per entry, the first included. @default 4 */
  readonly maxAttempts?: number;
  /** Backoff before the second attempt, ms; doubles each attempt, full jitter. @default 100 */
  readonly baseDelayMs?: number;
  /** Longest backoff, ms. @default 2000 */
  readonly maxDelayMs?: number;
  /** Waits `ms` milliseconds. @default a `setTimeout` promise */
  readonly sleep?: (ms: number) => Promise<void>;
  /** A number in [0, 1) for the jitter. @default Math.random */
  readonly random?: () => number;
}

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends to one SQS FIFO queue.
 * @example
 * const queue = new SqsQueue({ client: new SQSClient({}), queueUrl });
 * await queue.sendBatch(events.map((e) => ({ body: JSON.stringify(e), groupId: e.cluster, deduplicationId: deduplicationId(e) })));
 */
export class SqsQueue implements Queue {
  readonly #client: SQSClient;
  readonly #queueUrl: string;
  readonly #maxAttempts: number;
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #random: () => number;

  /** @throws {RangeError} when `maxAttempts` is not a positive integer */
  constructor(options: SqsQueueOptions) {
    const maxAttempts = options.maxAttempts ?? 4;
    if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw new RangeError(`maxAttempts must be a positive integer, got ${maxAttempts}`);
    this.#client = options.client;
    this.#queueUrl = options.queueUrl;
    this.#maxAttempts = maxAttempts;
    this.#baseDelayMs = options.baseDelayMs ?? 100;
    this.#maxDelayMs = options.maxDelayMs ?? 2000;
    this.#sleep = options.sleep ?? defaultSleep;
    this.#random = options.random ?? Math.random;
  }

  /**
   * Enqueues one message (Queue port).
   * @throws as {@link SqsQueue.sendBatch}
   */
  async send(body: string, options: { readonly groupId: string; readonly deduplicationId: string }): Promise<void> {
    await this.sendBatch([{ body, groupId: options.groupId, deduplicationId: options.deduplicationId }]);
  }

  /**
   * Enqueues `messages` in order, {@link SQS_MAX_BATCH_ENTRIES} per call, retrying entries that failed on the
   * server's side or were throttled.
   * @throws {QueueSendError} when some entries were still not stored (every chunk is attempted first)
   * @throws {ThrottledError} when a call was throttled past the SDK's retries · {CloudProviderError} when it failed
   */
  async sendBatch(messages: readonly FifoMessage[]): Promise<void> {
    const failures: QueueSendFailure[] = [];
    for (let i = 0; i < messages.length; i += SQS_MAX_BATCH_ENTRIES) {
      failures.push(...(await this.#sendChunk(messages.slice(i, i + SQS_MAX_BATCH_ENTRIES))));
    }
    if (failures.length > 0) throw new QueueSendError(failures, messages.length - failures.length);
  }

  /** Sends up to 10 messages; returns the entries still failed after the retries. */
  async #sendChunk(chunk: readonly FifoMessage[]): Promise<QueueSendFailure[]> {
    let pending = chunk.map((message, i) => ({ id: String(i), message }));
    const final: QueueSendFailure[] = [];
    for (let attempt = 1; pending.length > 0; attempt++) {
      let failed;
      try {
        const entries: SendMessageBatchRequestEntry[] = pending.map(({ id, message }) => ({
          Id: id,
          MessageBody: message.body,
          MessageGroupId: message.groupId,
          MessageDeduplicationId: message.deduplicationId,
        }));
        failed = (await this.#client.send(new SendMessageBatchCommand({ QueueUrl: this.#queueUrl, Entries: entries }))).Failed ?? [];
      } catch (e) {
        throw awsError(e, `SendMessageBatch to ${this.#queueUrl}`);
      }
      const byId = new Map(pending.map((p) => [p.id, p]));
      const retry: typeof pending = [];
      for (const f of failed) {
        const entry = byId.get(f.Id ?? '');
        const code = f.Code ?? 'UnknownError';
        const failure: QueueSendFailure = {
          deduplicationId: entry?.message.deduplicationId ?? `entry ${f.Id}`,
          code,
          message: f.Message ?? '',
          senderFault: f.SenderFault === true && !THROTTLING_CODES.has(code),
        };
        if (entry && !failure.senderFault && attempt < this.#maxAttempts) retry.push(entry);
        else final.push(failure);
      }
      pending = retry;
      if (pending.length > 0) await this.#sleep(this.#backoffMs(attempt));
    }
    return final;
  }

  /** Full-jitter exponential backoff after attempt `attempt` (1-based), ms. */
  #backoffMs(attempt: number): number {
    return Math.floor(this.#random() * Math.min(this.#maxDelayMs, this.#baseDelayMs * 2 ** (attempt - 1)));
  }
}
