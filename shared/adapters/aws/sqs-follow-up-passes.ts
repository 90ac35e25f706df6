/**
 * Follow-up passes on an SQS FIFO queue (the `FollowUpPasses` port, `shared/ports/follow-up-passes.ts`), one queue per
 * controller: a disruption pass with work in flight, or a lifecycle pass with a Node to register, sends one message;
 * the queue's event source mapping invokes that controller's Lambda with it, which runs one pass
 * (`functions/disruption/handler.ts`, `functions/lifecycle/handler.ts`).
 *
 * - **Coalescing.** Every message of a queue has the same `MessageGroupId` (the controller's name) and the slot
 *   (`followUpSlot(atMs)`, epoch ms) as its `MessageDeduplicationId`, so SQS FIFO accepts and drops a second request
 *   for a slot within its 5-minute deduplication interval: one pass per slot, however many passes asked for it
 *   (Amazon SQS Developer Guide, "Exactly-once processing in Amazon SQS"). One group also means the mapping hands
 *   the function one follow-up at a time, never two at once.
 * - **Delay.** SQS FIFO queues take no per-message delay: "When you set FifoQueue, you can't set DelaySeconds per
 *   message. You can set this parameter only on a queue level" (SQS API Reference, `SendMessage` `DelaySeconds`;
 *   local-aws-sqs refuses it the same way). So the queue itself delays every message by its `DelaySeconds` — the
 *   stack sets {@link FOLLOW_UP_AFTER_MS} (20 s), `infra/constructs/follow-up-queue.ts` — and the message is sent at
 *   once. Where Skiff differs from the port's ideal: the pass runs `deliveryDelayMs` after the request, which for a
 *   request at now + 20 s is up to one 20 s slot before the slot's end rather than at it; the slot only names the
 *   deduplication window. A request whose slot begins more than one slot after now + `deliveryDelayMs` is refused
 *   ({@link RangeError}): the fixed delay would run it too early.
 * - **Failures.** Sent through {@link SqsQueue} (its server-side and throttling retries; a resend is safe, it carries
 *   the same deduplication id). What still fails is thrown; the handler logs it and the schedule's next pass does the
 *   work. A lost follow-up is harmless, so the queue has no dead-letter queue.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Clock } from '../../ports/clock.js';
import { FOLLOW_UP_AFTER_MS, FOLLOW_UP_SLOT_MS, followUpSlot, type FollowUpController, type FollowUpPasses } from '../../ports/follow-up-passes.js';
import { SqsQueue } from './sqs-queue.js';

/** The `MessageGroupId` of every disruption follow-up (one group: the mapping delivers one at a time, in order). */
export const FOLLOW_UP_GROUP_ID = 'disruption';

export type { FollowUpController } from '../../ports/follow-up-passes.js';

/** The body of a follow-up message (the handler needs nothing from it; it tells an operator what the message is). */
export interface FollowUpMessage {
  readonly kind: `${FollowUpController}-follow-up`;
  /** The slot the pass was asked for, ISO 8601 UTC. */
  readonly slot: string;
  /** When it was asked for, ISO 8601 UTC. */
  readonly requestedAt: string;
}

/** Options of {@link SqsFollowUpPasses}. */
export interface SqsFollowUpPassesOptions {
  readonly client: SQSClient;
  /** The FIFO queue's URL, e.g. `https://sqs.us-west-2.amazonaws.com/123456789012/skiff-FollowUps.fifo`. */
  readonly queueUrl: string;
  /** What "now" is for the delay (the wall clock in production). */
  readonly clock: Clock;
  /** The queue's `DelaySeconds`, ms (what the stack sets). @default {@link FOLLOW_UP_AFTER_MS} */
  readonly deliveryDelayMs?: number;
  /** Attempts per message, the first included ({@link SqsQueue}). @default 3 */
  readonly maxAttempts?: number;
  /** Whose passes the queue asks for: the message group and the body's `kind`. @default 'disruption' */
  readonly controller?: FollowUpController;
}

/**
 * `FollowUpPasses` on an SQS FIFO queue with a queue-level delivery delay.
 * @example
 * const passes = new SqsFollowUpPasses({ client: new SQSClient({ region }), queueUrl, clock: systemClock });
 * await passes.request(systemClock.now() + FOLLOW_UP_AFTER_MS);
 */
export class SqsFollowUpPasses implements FollowUpPasses {
  readonly #queue: SqsQueue;
  readonly #clock: Clock;
  readonly #deliveryDelayMs: number;
  readonly #controller: FollowUpController;

  /** @throws {RangeError} when `deliveryDelayMs` is not in [0, 900 000] (SQS's `DelaySeconds` range) */
  constructor(options: SqsFollowUpPassesOptions) {
    const delay = options.deliveryDelayMs ?? FOLLOW_UP_AFTER_MS;
    if (!(delay >= 0 && delay <= 900_000)) throw new RangeError(`deliveryDelayMs must be within 0..900000 (SQS DelaySeconds 0..900), got ${delay}`);
    this.#queue = new SqsQueue({ client: options.client, queueUrl: options.queueUrl, maxAttempts: options.maxAttempts ?? 3 });
    this.#clock = options.clock;
    this.#deliveryDelayMs = delay;
    this.#controller = options.controller ?? 'disruption';
  }

  /**
   * Sends the follow-up for `atMs`'s slot now (the queue delays it); a second request for the same slot within 5
   * minutes is dropped by SQS.
   * @param atMs when the pass is wanted, epoch ms (UTC)
   * @throws {RangeError} when the slot begins more than one slot after now + the delivery delay (it would run early)
   * @throws {QueueSendError} · {ThrottledError} · {CloudProviderError} as `SqsQueue.send`
   */
  async request(atMs: number): Promise<void> {
    const now = this.#clock.now();
    const slot = followUpSlot(atMs);
    const arrives = now + this.#deliveryDelayMs;
    if (slot - FOLLOW_UP_SLOT_MS > arrives) {
      throw new RangeError(`a follow-up for ${new Date(slot).toISOString()} would arrive at ${new Date(arrives).toISOString()}, over a slot early: the queue delays every message by ${this.#deliveryDelayMs} ms`);
    }
    const body: FollowUpMessage = { kind: `${this.#controller}-follow-up`, slot: new Date(slot).toISOString(), requestedAt: new Date(now).toISOString() };
    await this.#queue.send(JSON.stringify(body), { groupId: this.#controller, deduplicationId: String(slot) });
  }
}
