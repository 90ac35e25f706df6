// SqsFollowUpPasses against local-aws-sqs (the SQS JSON protocol, FIFO deduplication, queue-level delivery delay, and
// SQS's refusal of a per-message DelaySeconds on a FIFO queue).
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateQueueCommand, DeleteMessageBatchCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient, type Message } from '@aws-sdk/client-sqs';
import { createSqsServer } from 'local-aws-sqs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SqsFollowUpPasses } from '../../../shared/adapters/aws/sqs-follow-up-passes.js';
import { CloudProviderError } from '../../../shared/core/errors.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

/** 08:00:05 UTC: a request 20 s later (08:00:25) falls in the slot ending 08:00:40. */
const NOW = Date.UTC(2026, 2, 2, 8, 0, 5);
const at = (s: number) => Date.UTC(2026, 2, 2, 8, 0, s);

let server: Server;
let sqs: SQSClient;
let base: string;
let queueUrl: string;
let queues = 0;

/** A new FIFO queue (each test its own, so deduplication ids of one test do not meet another's). */
async function fifoQueue(attributes: Record<string, string> = {}): Promise<string> {
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `follow-ups-${++queues}.fifo`, Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'false', VisibilityTimeout: '120', ...attributes } }));
  return QueueUrl!;
}

/** Receives and deletes what is visible now. */
async function drain(url = queueUrl): Promise<Message[]> {
  const out: Message[] = [];
  for (;;) {
    const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, AttributeNames: ['All'], MessageSystemAttributeNames: ['All'] }));
    if (Messages.length === 0) return out;
    out.push(...Messages);
    await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: url, Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })) }));
  }
}

const passes = (now = NOW, url = queueUrl, deliveryDelayMs?: number) =>
  new SqsFollowUpPasses({ client: sqs, queueUrl: url, clock: { now: () => now }, ...(deliveryDelayMs !== undefined ? { deliveryDelayMs } : {}) });

beforeAll(async () => {
  server = await createSqsServer({ port: 0, hostname: '127.0.0.1' });
  const { port } = server.address() as AddressInfo;
  base = `http://127.0.0.1:${port}`;
  sqs = new SQSClient({ region: 'us-east-1', endpoint: base, credentials: { accessKeyId: 'fake', secretAccessKey: 'fake' }, maxAttempts: 1 });
});

afterAll(async () => {
  sqs.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(async () => {
  queueUrl = await fifoQueue();
});

describe('SqsFollowUpPasses', () => {
  it('sends one message in the one group, deduplicated by its 20 s slot', async () => {
    await passes().request(NOW + 20_000);
    const [message, ...more] = await drain();
    expect(more).toEqual([]);
    expect(message!.Attributes).toMatchObject({ MessageGroupId: 'disruption', MessageDeduplicationId: String(at(40)) });
    expect(JSON.parse(message!.Body!)).toEqual({ kind: 'disruption-follow-up', slot: '2026-03-02T08:00:40.000Z', requestedAt: '2026-03-02T08:00:05.000Z' });
  });

  it('names the lifecycle controller in the group and the body when it is the lifecycle controller’s queue', async () => {
    await new SqsFollowUpPasses({ client: sqs, queueUrl, clock: { now: () => NOW }, controller: 'lifecycle' }).request(NOW + 20_000);
    const [message, ...rest] = await drain();
    expect(rest).toEqual([]);
    expect(message!.Attributes).toMatchObject({ MessageGroupId: 'lifecycle', MessageDeduplicationId: String(at(40)) });
    expect(JSON.parse(message!.Body!)).toMatchObject({ kind: 'lifecycle-follow-up', slot: '2026-03-02T08:00:40.000Z' });
  });

  it('coalesces requests for one slot, from one pass or from two, and keeps the next slot apart', async () => {
    await passes().request(at(25));
    await passes(at(9)).request(at(29)); // another pass, 4 s later: same slot
    await passes(at(9)).request(at(40)); // the slot's end itself
    await passes(at(21)).request(at(41)); // the next slot
    const messages = await drain();
    expect(messages.map((m) => m.Attributes?.MessageDeduplicationId)).toEqual([String(at(40)), String(at(60))]);
  });

  it('leaves the delay to the queue: nothing is visible before the queue’s DelaySeconds, the message after it', async () => {
    const delayed = await fifoQueue({ DelaySeconds: '1' });
    await passes(Date.now(), delayed, 1000).request(Date.now() + 1000);
    expect(await drain(delayed)).toEqual([]);
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: delayed, AttributeNames: ['ApproximateNumberOfMessagesDelayed'] }));
    expect(Attributes?.ApproximateNumberOfMessagesDelayed).toBe('1');
    await new Promise((r) => setTimeout(r, 1300));
    expect(await drain(delayed)).toHaveLength(1);
  });

  it('refuses a request its queue delay would run over a slot early, and sends nothing', async () => {
    // sent at 08:00:05, the queue delivers at 08:00:25: in the slot ending 08:00:40, 15 s before the next one begins
    await expect(passes().request(at(41))).rejects.toThrow(RangeError);
    await expect(passes().request(at(70))).rejects.toThrow(RangeError);
    await passes().request(at(40));
    expect((await drain()).map((m) => m.Attributes?.MessageDeduplicationId)).toEqual([String(at(40))]);
  });

  it('throws a CloudProviderError naming the SQS error when the queue does not exist', async () => {
    const error = await passes(NOW, `${base}/000000000000/missing.fifo`).request(NOW + 20_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CloudProviderError);
    expect((error as CloudProviderError).code).toMatch(/NonExistentQueue|QueueDoesNotExist/);
  });

  it('rejects a delivery delay SQS cannot set', () => {
    expect(() => passes(NOW, queueUrl, 901_000)).toThrow(RangeError);
  });
});
