import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { DEDUPLICATION_WINDOW_MS, MemoryFifoQueue, type BatchConsumer, type MemoryFifoQueueOptions } from '../../shared/sim/memory-queue.js';
import { VirtualClock } from '../../shared/sim/virtual-clock.js';

const T0 = Date.UTC(2026, 2, 2, 8, 0, 0);
const QUEUE_ARN = 'arn:aws:sqs:us-west-2:000000000000:skiff-pod-events.fifo';

interface Delivery {
  /** Ms after T0. */
  readonly at: number;
  readonly records: readonly SQSRecord[];
}

/**
 * A queue on a fresh virtual clock with Karpenter's batch window (1 s idle, 10 s max), subscribed to a consumer that
 * records every batch and fails the records `fail` picks.
 */
function setup(options: Partial<MemoryFifoQueueOptions> = {}, fail: (record: SQSRecord, at: number) => boolean = () => false) {
  const clock = new VirtualClock(T0);
  const queue = new MemoryFifoQueue(clock, { queueArn: QUEUE_ARN, batchIdleMs: 1_000, batchMaxMs: 10_000, ...options });
  const deliveries: Delivery[] = [];
  const consumer: BatchConsumer = async (event: SQSEvent) => {
    const at = clock.now() - T0;
    deliveries.push({ at, records: event.Records });
    return { batchItemFailures: event.Records.filter((r) => fail(r, at)).map((r) => ({ itemIdentifier: r.messageId })) };
  };
  queue.subscribe(consumer);
  /** Sends `body` at `offsetMs` after T0 (deduplication id defaults to the body). */
  const sendAt = (offsetMs: number, body: string, deduplicationId = body, groupId = 'cluster'): void =>
    clock.at(T0 + offsetMs, `send ${body}`, () => queue.send(body, { groupId, deduplicationId }));
  const bodies = (): string[] => deliveries.flatMap((d) => d.records.map((r) => r.body));
  return { clock, queue, deliveries, sendAt, bodies };
}

describe('MemoryFifoQueue', () => {
  describe('send (batch window)', () => {
    it('delivers a single message 1 s after it arrives', async () => {
      const { clock, deliveries, sendAt } = setup();
      sendAt(0, 'm0');
      await clock.runUntil(T0 + 999);
      expect(deliveries).toEqual([]);
      await clock.runUntil(T0 + 60_000);
      expect(deliveries.map((d) => [d.at, d.records.map((r) => r.body)])).toEqual([[1_000, ['m0']]]);
    });

    it('delivers a batch 1 s after the last message when messages keep arriving less than 1 s apart', async () => {
      const { clock, deliveries, sendAt } = setup();
      const offsets = [0, 400, 800, 1_700, 2_600];
      offsets.forEach((offset, i) => sendAt(offset, `m${i}`));
      await clock.runUntil(T0 + 3_599);
      expect(deliveries).toEqual([]);
      await clock.runUntil(T0 + 60_000);
      expect(deliveries.map((d) => [d.at, d.records.map((r) => r.body)])).toEqual([[3_600, ['m0', 'm1', 'm2', 'm3', 'm4']]]);
    });

    it('delivers at most 10 s after the first message even when messages keep arriving', async () => {
      const { clock, deliveries, sendAt } = setup();
      // every 900 ms from 0 to 18 000: the idle timer never fires on its own
      const offsets = Array.from({ length: 21 }, (_, i) => i * 900);
      offsets.forEach((offset, i) => sendAt(offset, `m${i}`));
      await clock.runUntil(T0 + 9_999);
      expect(deliveries).toEqual([]);
      await clock.runUntil(T0 + 10_000);
      const firstWindow = offsets.filter((o) => o <= 10_000).map((_, i) => `m${i}`);
      expect(deliveries.every((d) => d.at === 10_000)).toBe(true);
      expect(deliveries.flatMap((d) => d.records.map((r) => r.body))).toEqual(firstWindow);
    });

    it('opens a new window with the first message after a delivery', async () => {
      const { clock, deliveries, sendAt } = setup();
      const offsets = Array.from({ length: 21 }, (_, i) => i * 900); // 0 … 18 000
      offsets.forEach((offset, i) => sendAt(offset, `m${i}`));
      await clock.runUntil(T0 + 60_000);
      // window 1: 0 → max at 10 000; window 2 opens at 10 800 (m12), last message 18 000 → idle at 19 000
      expect([...new Set(deliveries.map((d) => d.at))]).toEqual([10_000, 19_000]);
      expect(deliveries.filter((d) => d.at === 19_000).flatMap((d) => d.records.map((r) => r.body))).toEqual(
        offsets.map((_, i) => `m${i}`).slice(12),
      );
    });
  });

  describe('send (deduplication)', () => {
    it('drops a message whose deduplication id was sent less than 5 minutes earlier', async () => {
      const { clock, queue, bodies, sendAt } = setup();
      sendAt(0, 'original', 'pod-1@7');
      sendAt(500, 'duplicate-in-window', 'pod-1@7');
      sendAt(DEDUPLICATION_WINDOW_MS - 1, 'duplicate-at-edge', 'pod-1@7');
      await clock.runUntil(T0 + DEDUPLICATION_WINDOW_MS - 1);
      expect(queue.depth).toBe(0);
      await clock.runUntil(T0 + DEDUPLICATION_WINDOW_MS + 60_000);
      expect(bodies()).toEqual(['original']);
    });

    it('drops a duplicate even after the original was delivered and deleted', async () => {
      const { clock, bodies, sendAt } = setup();
      sendAt(0, 'original', 'pod-1@7');
      sendAt(120_000, 'duplicate', 'pod-1@7');
      await clock.runUntil(T0 + 200_000);
      expect(bodies()).toEqual(['original']);
    });

    it('accepts the same deduplication id again 5 minutes after it was first sent', async () => {
      const { clock, bodies, sendAt } = setup();
      sendAt(0, 'original', 'pod-1@7');
      sendAt(DEDUPLICATION_WINDOW_MS, 'again', 'pod-1@7');
      await clock.runUntil(T0 + DEDUPLICATION_WINDOW_MS + 60_000);
      expect(bodies()).toEqual(['original', 'again']);
    });

    it('keeps messages with different deduplication ids and the same body', async () => {
      const { clock, bodies, sendAt } = setup();
      sendAt(0, 'same body', 'a');
      sendAt(10, 'same body', 'b');
      await clock.runUntil(T0 + 60_000);
      expect(bodies()).toEqual(['same body', 'same body']);
    });
  });

  describe('deliver (batch size)', () => {
    it('holds at most 10 records per batch and delivers the rest in further batches, in order', async () => {
      const { clock, deliveries, bodies, sendAt } = setup();
      for (let i = 0; i < 25; i++) sendAt(0, `m${i}`);
      await clock.runUntil(T0 + 60_000);
      expect(deliveries.map((d) => d.records.length)).toEqual([10, 10, 5]);
      expect(deliveries.every((d) => d.at === 1_000)).toBe(true);
      expect(bodies()).toEqual(Array.from({ length: 25 }, (_, i) => `m${i}`));
    });

    it('records every delivery with its time and size', async () => {
      const { clock, queue, sendAt } = setup();
      for (let i = 0; i < 12; i++) sendAt(0, `m${i}`);
      await clock.runUntil(T0 + 60_000);
      expect(queue.deliveries).toEqual([
        { at: T0 + 1_000, records: 10 },
        { at: T0 + 1_000, records: 2 },
      ]);
    });
  });

  describe('deliver (partial batch failures)', () => {
    it('deletes the records that did not fail and redelivers the failed ones after the visibility timeout', async () => {
      const { clock, queue, deliveries, sendAt } = setup({ visibilityTimeoutMs: 30_000 }, (r) => r.body === 'bad' && r.attributes.ApproximateReceiveCount === '1');
      sendAt(0, 'good-1');
      sendAt(0, 'bad');
      sendAt(0, 'good-2');
      await clock.runUntil(T0 + 1_000);
      expect(deliveries.map((d) => d.records.map((r) => r.body))).toEqual([['good-1', 'bad', 'good-2']]);
      expect(queue.depth).toBe(1);
      await clock.runUntil(T0 + 30_999);
      expect(deliveries).toHaveLength(1);
      await clock.runUntil(T0 + 31_000);
      expect(deliveries.map((d) => [d.at, d.records.map((r) => [r.body, r.attributes.ApproximateReceiveCount])])).toEqual([
        [1_000, [['good-1', '1'], ['bad', '1'], ['good-2', '1']]],
        [31_000, [['bad', '2']]],
      ]);
      expect(queue.depth).toBe(0);
    });

    it('keeps the message id and increments ApproximateReceiveCount on every redelivery', async () => {
      const { clock, queue, deliveries, sendAt } = setup({ visibilityTimeoutMs: 5_000 }, (_r, at) => at < 12_000);
      sendAt(0, 'flaky');
      await clock.runUntil(T0 + 60_000);
      expect(deliveries.map((d) => d.at)).toEqual([1_000, 6_000, 11_000, 16_000]);
      expect(deliveries.map((d) => d.records[0]?.attributes.ApproximateReceiveCount)).toEqual(['1', '2', '3', '4']);
      expect(new Set(deliveries.map((d) => d.records[0]?.messageId)).size).toBe(1);
      expect(queue.depth).toBe(0);
    });

    it('uses a 30 s visibility timeout by default', async () => {
      const { clock, deliveries, sendAt } = setup({}, (r) => r.attributes.ApproximateReceiveCount === '1');
      sendAt(0, 'm');
      await clock.runUntil(T0 + 120_000);
      expect(deliveries.map((d) => d.at)).toEqual([1_000, 31_000]);
    });

    it('holds back later messages of a group while an earlier one of that group is in flight', async () => {
      const { clock, bodies, sendAt } = setup({ visibilityTimeoutMs: 30_000 }, (r) => r.body === 'first' && r.attributes.ApproximateReceiveCount === '1');
      sendAt(0, 'first', 'first', 'cluster');
      sendAt(5_000, 'second', 'second', 'cluster');
      sendAt(5_000, 'other-group', 'other-group', 'other');
      await clock.runUntil(T0 + 120_000);
      expect(bodies()).toEqual(['first', 'other-group', 'first', 'second']);
    });
  });

  describe('deliver (record shape)', () => {
    it('delivers SQS records with the message group, deduplication id, receive count and queue', async () => {
      const { clock, deliveries, sendAt } = setup();
      sendAt(250, '{"pod":"default/web-1"}', 'uid-1@42', 'skiff-test');
      await clock.runUntil(T0 + 60_000);
      const record = deliveries[0]?.records[0];
      expect(record).toMatchObject({
        body: '{"pod":"default/web-1"}',
        eventSource: 'aws:sqs',
        eventSourceARN: QUEUE_ARN,
        awsRegion: 'us-west-2',
        attributes: {
          MessageGroupId: 'skiff-test',
          MessageDeduplicationId: 'uid-1@42',
          ApproximateReceiveCount: '1',
          SentTimestamp: String(T0 + 250),
        },
      });
      expect(record?.messageId).toEqual(expect.any(String));
      expect(record?.messageId).not.toBe('');
      expect(record?.receiptHandle).toEqual(expect.any(String));
    });

    it('gives every message its own message id', async () => {
      const { clock, deliveries, sendAt } = setup();
      for (let i = 0; i < 5; i++) sendAt(0, `m${i}`);
      await clock.runUntil(T0 + 60_000);
      const ids = deliveries.flatMap((d) => d.records.map((r) => r.messageId));
      expect(new Set(ids).size).toBe(5);
    });

    it('gives a redelivered record a new receipt handle', async () => {
      const { clock, deliveries, sendAt } = setup({ visibilityTimeoutMs: 1_000 }, (r) => r.attributes.ApproximateReceiveCount === '1');
      sendAt(0, 'm');
      await clock.runUntil(T0 + 60_000);
      const handles = deliveries.map((d) => d.records[0]?.receiptHandle);
      expect(handles).toHaveLength(2);
      expect(handles[0]).not.toBe(handles[1]);
    });
  });

  describe('redeliverAcknowledged (duplicateDelivery fault)', () => {
    it('delivers an acknowledged message once more after its visibility timeout, past the deduplication window', async () => {
      const asked: string[] = [];
      const { clock, deliveries, sendAt, queue } = setup({ visibilityTimeoutMs: 30_000, redeliverAcknowledged: (id) => (asked.push(id), true) });
      sendAt(0, 'm');
      await clock.runUntil(T0 + 120_000);
      expect(deliveries.map((d) => d.at)).toEqual([1_000, 31_000]);
      const [first, second] = deliveries.map((d) => d.records[0]!);
      expect(second!.messageId).toBe(first!.messageId);
      expect(second!.attributes.ApproximateReceiveCount).toBe('2');
      // Asked once per message: the duplicate itself is deleted when acknowledged.
      expect(asked).toHaveLength(1);
      expect(queue.depth).toBe(0);
    });

    it('holds back the message group while the duplicate waits, as any in-flight FIFO message does', async () => {
      const { clock, deliveries, sendAt } = setup({ visibilityTimeoutMs: 30_000, redeliverAcknowledged: () => true });
      sendAt(0, 'a');
      sendAt(5_000, 'b');
      await clock.runUntil(T0 + 120_000);
      expect(deliveries.map((d) => [d.at, d.records.map((r) => r.body)])).toEqual([
        [1_000, ['a']],
        [31_000, ['a', 'b']],
        [61_000, ['b']],
      ]);
    });

    it('is not asked about records the consumer failed', async () => {
      const asked: string[] = [];
      const { clock, deliveries, sendAt } = setup({ visibilityTimeoutMs: 1_000, redeliverAcknowledged: (id) => (asked.push(id), false) }, (r) => r.attributes.ApproximateReceiveCount === '1');
      sendAt(0, 'm');
      await clock.runUntil(T0 + 60_000);
      expect(deliveries).toHaveLength(2);
      expect(asked).toHaveLength(1);
    });
  });

  describe('depth', () => {
    it('counts messages not yet deleted, in flight included', async () => {
      const { clock, queue, sendAt } = setup({ visibilityTimeoutMs: 30_000 }, (r) => r.body === 'bad');
      sendAt(0, 'good');
      sendAt(0, 'bad');
      await clock.runUntil(T0 + 500);
      expect(queue.depth).toBe(2);
      await clock.runUntil(T0 + 1_000);
      expect(queue.depth).toBe(1);
    });
  });
});
