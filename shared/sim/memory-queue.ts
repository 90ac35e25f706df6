/**
 * An in-memory SQS FIFO queue on the virtual clock: per-group ordering, 5-minute deduplication window,
 * visibility timeout with redelivery, and receive counts. Batches are delivered to a consumer after the batch
 * window closes (idle / max, Karpenter's `BATCH_IDLE_DURATION` 1 s and `BATCH_MAX_DURATION` 10 s).
 */
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import type { Queue } from '../ports/queue.js';
import type { VirtualClock } from './virtual-clock.js';

/** SQS FIFO's deduplication window: 5 minutes. */
export const DEDUPLICATION_WINDOW_MS = 5 * 60 * 1000;

interface Message {
  readonly id: string;
  readonly body: string;
  readonly groupId: string;
  readonly deduplicationId: string;
  readonly sentAt: number;
  receiveCount: number;
  visibleAt: number;
  /** Already delivered once more after an acknowledgement (a `duplicateDelivery` fault hits a message at most once). */
  duplicated?: boolean;
}

/** Options of {@link MemoryFifoQueue}. Durations in ms. */
export interface MemoryFifoQueueOptions {
  readonly queueArn: string;
  readonly batchIdleMs: number;
  readonly batchMaxMs: number;
  /** How long a received message stays invisible before it is delivered again. @default 30000 */
  readonly visibilityTimeoutMs?: number;
  /** Most messages per delivered batch (SQS FIFO → Lambda allows 10). @default 10 */
  readonly maxBatchSize?: number;
  /**
   * Fault injection (`duplicateDelivery`): asked for each message the consumer acknowledged; true keeps it, as if
   * its deletion was lost, so it is delivered again after its visibility timeout (a redelivery: the deduplication
   * window does not apply, the receive count goes up, and like any in-flight FIFO message it holds back its group
   * until then). Asked at most once per message.
   * @default never
   */
  readonly redeliverAcknowledged?: (messageId: string) => boolean;
}

/** Consumer of delivered batches; returns the ids of the records that failed (SQS partial batch response). */
export type BatchConsumer = (event: SQSEvent) => Promise<{ batchItemFailures: { itemIdentifier: string }[] }>;

/** In-memory FIFO queue that delivers batches to a consumer on the virtual clock. */
export class MemoryFifoQueue implements Queue {
  private readonly messages: Message[] = [];
  private readonly seen = new Map<string, number>();
  private windowOpenedAt: number | undefined;
  private lastArrival = 0;
  private timerAt: number | undefined;
  private consuming = false;
  private consumer: BatchConsumer | undefined;
  private nextId = 0;
  /** Every batch delivered: time (epoch ms) and the number of records. */
  readonly deliveries: { at: number; records: number }[] = [];

  constructor(
    private readonly clock: VirtualClock,
    private readonly options: MemoryFifoQueueOptions,
  ) {}

  /** Sets the function batches are delivered to. */
  subscribe(consumer: BatchConsumer): void {
    this.consumer = consumer;
  }

  async send(body: string, options: { groupId: string; deduplicationId: string }): Promise<void> {
    const now = this.clock.now();
    const seenAt = this.seen.get(options.deduplicationId);
    if (seenAt !== undefined && now - seenAt < DEDUPLICATION_WINDOW_MS) return;
    this.seen.set(options.deduplicationId, now);
    this.messages.push({ id: `msg-${++this.nextId}`, body, ...options, sentAt: now, receiveCount: 0, visibleAt: now });
    this.lastArrival = now;
    this.windowOpenedAt ??= now;
    this.arm();
  }

  /** Messages not yet deleted (visible or in flight). */
  get depth(): number {
    return this.messages.length;
  }

  private arm(): void {
    if (this.windowOpenedAt === undefined) return;
    const due = Math.min(this.lastArrival + this.options.batchIdleMs, this.windowOpenedAt + this.options.batchMaxMs);
    if (this.timerAt !== undefined && this.timerAt <= due) return;
    this.timerAt = due;
    this.clock.at(due, 'queue batch window', () => this.onTimer(due));
  }

  private async onTimer(due: number): Promise<void> {
    if (this.timerAt !== due) return;
    this.timerAt = undefined;
    const now = this.clock.now();
    const idleDue = this.lastArrival + this.options.batchIdleMs;
    const maxDue = (this.windowOpenedAt ?? now) + this.options.batchMaxMs;
    if (now < Math.min(idleDue, maxDue)) return this.arm();
    this.windowOpenedAt = undefined;
    await this.deliver();
  }

  private async deliver(): Promise<void> {
    if (!this.consumer || this.consuming) return;
    this.consuming = true;
    try {
      for (;;) {
        const now = this.clock.now();
        // SQS FIFO returns no message of a group while an earlier one of that group is in flight.
        const inFlight = new Set(this.messages.filter((m) => m.visibleAt > now).map((m) => m.groupId));
        const visible = this.messages.filter((m) => m.visibleAt <= now && !inFlight.has(m.groupId)).slice(0, this.options.maxBatchSize ?? 10);
        if (visible.length === 0) break;
        const timeout = this.options.visibilityTimeoutMs ?? 30_000;
        for (const m of visible) {
          m.receiveCount++;
          m.visibleAt = now + timeout;
        }
        this.deliveries.push({ at: now, records: visible.length });
        const records = visible.map((m) => this.toRecord(m));
        // A consumer that throws fails the whole batch, as Lambda does: every record comes back after the timeout.
        const response = await this.consumer({ Records: records }).catch(() => ({ batchItemFailures: records.map((r) => ({ itemIdentifier: r.messageId })) }));
        const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
        for (const m of visible) {
          const duplicate = !failed.has(m.id) && !m.duplicated && (this.options.redeliverAcknowledged?.(m.id) ?? false);
          if (duplicate) m.duplicated = true;
          if (failed.has(m.id) || duplicate) {
            this.clock.at(m.visibleAt, 'queue redelivery', () => this.deliver());
          } else {
            this.messages.splice(this.messages.indexOf(m), 1);
          }
        }
      }
    } finally {
      this.consuming = false;
    }
  }

  private toRecord(m: Message): SQSRecord {
    return {
      messageId: m.id,
      receiptHandle: `${m.id}-${m.receiveCount}`,
      body: m.body,
      attributes: {
        ApproximateReceiveCount: String(m.receiveCount),
        SentTimestamp: String(m.sentAt),
        SenderId: 'skiff-webhook',
        ApproximateFirstReceiveTimestamp: String(m.sentAt),
        MessageGroupId: m.groupId,
        MessageDeduplicationId: m.deduplicationId,
        SequenceNumber: String(this.nextId),
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: this.options.queueArn,
      awsRegion: this.options.queueArn.split(':')[3] ?? 'us-west-2',
    };
  }
}
