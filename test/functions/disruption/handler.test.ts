// The disruption Lambda's handler with follow-up passes through the real SQS adapter on local-aws-sqs (a FIFO queue
// as the stack creates it, without the delay so a test can receive at once) and the real lease on dynalite: a pass
// with work in flight asks for exactly one follow-up 20 s later, a failed request is only a warning, a message from
// the queue runs a pass, a follow-up meeting a held lease backs off without asking for another, and anything else is
// dropped.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateQueueCommand, DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient, type Message } from '@aws-sdk/client-sqs';
import type { ScheduledEvent, SQSEvent } from 'aws-lambda';
import { createSqsServer } from 'local-aws-sqs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHandler, DISRUPTION_LEASE_NAME, type DisruptionHandlerDeps } from '../../../functions/disruption/handler.js';
import { DynamoDbLeaseStore } from '../../../shared/adapters/aws/lease-store.js';
import { SqsFollowUpPasses } from '../../../shared/adapters/aws/sqs-follow-up-passes.js';
import { startDynalite, type LocalDynamoDb } from '../../../shared/cli/local-dynamodb.js';
import type { DisruptionReport } from '../../../shared/controllers/disruption/deps.js';
import type { Log } from '../../../shared/lambda/log.js';
import type { FollowUpPasses } from '../../../shared/ports/follow-up-passes.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

/** 08:00:05 UTC; a follow-up 20 s later (08:00:25) is in the slot ending 08:00:40. */
const NOW = Date.UTC(2026, 2, 2, 8, 0, 5);
const clock = { now: () => NOW };

const QUIET: DisruptionReport = { proposed: [], started: [], rejected: [], expired: [], evicted: [], waiting: [], deleted: [], skipped: [], blocked: [], budgetBlocked: [] };
const IN_FLIGHT: DisruptionReport = { ...QUIET, proposed: [{ command: 'cmd-1', reason: 'Underutilized', decision: 'delete', candidates: ['general-bcdfg'] }], followUpAfterMs: 20_000 };

const scheduled: ScheduledEvent = {
  version: '0',
  id: 'e-1',
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: '123456789012',
  time: '2026-03-02T08:00:00Z',
  region: 'us-west-2',
  resources: ['arn:aws:events:us-west-2:123456789012:rule/disruption'],
  detail: {},
};

/** A log that keeps `[level, message, attributes]`. */
function recordingLog(): Log & { readonly lines: [string, string, Record<string, unknown> | undefined][] } {
  const lines: [string, string, Record<string, unknown> | undefined][] = [];
  const at = (level: string) => (message: string, attributes?: Record<string, unknown>) => void lines.push([level, message, attributes]);
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

let server: Server;
let sqs: SQSClient;
let base: string;
let queueUrl: string;
let queues = 0;
let db: LocalDynamoDb;

beforeAll(async () => {
  server = await createSqsServer({ port: 0, hostname: '127.0.0.1' });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  sqs = new SQSClient({ region: 'us-west-2', endpoint: base, credentials: { accessKeyId: 'fake', secretAccessKey: 'fake' }, maxAttempts: 1 });
  db = await startDynalite();
});

afterAll(async () => {
  sqs.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await db.close();
});

beforeEach(async () => {
  ({ QueueUrl: queueUrl } = (await sqs.send(new CreateQueueCommand({ QueueName: `follow-ups-${++queues}.fifo`, Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'false', VisibilityTimeout: '120' } }))) as { QueueUrl: string });
});

/** Receives and deletes what is visible now. */
async function drain(): Promise<Message[]> {
  const out: Message[] = [];
  for (;;) {
    const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, AttributeNames: ['All'], MessageSystemAttributeNames: ['All'] }));
    if (Messages.length === 0) return out;
    out.push(...Messages);
    await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })) }));
  }
}

/** The adapter on this test's queue, recording each `atMs` it was asked for. */
function followUps(url = queueUrl): { passes: FollowUpPasses; asked: number[] } {
  const real = new SqsFollowUpPasses({ client: sqs, queueUrl: url, clock });
  const asked: number[] = [];
  return { asked, passes: { request: (atMs) => (asked.push(atMs), real.request(atMs)) } };
}

/** The event the follow-up queue's event source mapping would invoke the function with. */
const asEvent = (messages: readonly Message[]): SQSEvent => ({
  Records: messages.map((m) => ({
    messageId: m.MessageId!,
    receiptHandle: m.ReceiptHandle!,
    body: m.Body ?? '',
    attributes: m.Attributes as never,
    messageAttributes: {},
    md5OfBody: m.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-west-2:123456789012:skiff-FollowUps.fifo',
    awsRegion: 'us-west-2',
  })),
});

function handlerWith(report: DisruptionReport, extra: Partial<DisruptionHandlerDeps> = {}) {
  const log = recordingLog();
  let passes = 0;
  const handler = createHandler({ disrupt: async () => (passes++, report), log, ...extra });
  return { handler, log, passes: () => passes };
}

describe('the disruption handler’s follow-up passes', () => {
  it('asks for exactly one follow-up at clock.now() + 20 s after a pass with work in flight: one message, deduplicated by its slot', async () => {
    const f = followUps();
    const { handler, log } = handlerWith(IN_FLIGHT, { followUps: { passes: f.passes, clock } });
    expect(await handler(scheduled)).toEqual({ report: IN_FLIGHT });
    expect(f.asked).toEqual([NOW + 20_000]);
    const messages = await drain();
    expect(messages.map((m) => [m.Attributes?.MessageGroupId, m.Attributes?.MessageDeduplicationId])).toEqual([['disruption', String(Date.UTC(2026, 2, 2, 8, 0, 40))]]);
    expect(log.lines.filter(([level]) => level === 'warn' || level === 'error')).toEqual([]);
  });

  it('asks for none after a pass with nothing in flight', async () => {
    const f = followUps();
    const { handler } = handlerWith(QUIET, { followUps: { passes: f.passes, clock } });
    expect(await handler(scheduled)).toEqual({ report: QUIET });
    expect(f.asked).toEqual([]);
    expect(await drain()).toEqual([]);
  });

  it('logs a request SQS refused as a warning, and the invocation still succeeds', async () => {
    const f = followUps(`${base}/000000000000/missing.fifo`);
    const { handler, log } = handlerWith(IN_FLIGHT, { followUps: { passes: f.passes, clock } });
    expect(await handler(scheduled)).toEqual({ report: IN_FLIGHT });
    expect(f.asked).toEqual([NOW + 20_000]);
    expect(log.lines.filter(([level]) => level === 'warn')).toEqual([['warn', 'follow-up pass not requested; the next scheduled pass goes on', { error: expect.any(String) }]]);
  });

  it('runs one pass for the follow-up queue’s message, which asks for the next one while work is still in flight', async () => {
    const first = followUps();
    await handlerWith(IN_FLIGHT, { followUps: { passes: first.passes, clock } }).handler(scheduled);
    const delivered = await drain();
    expect(delivered).toHaveLength(1);
    const f = followUps();
    const { handler, passes } = handlerWith(IN_FLIGHT, { followUps: { passes: f.passes, clock } });
    expect(await handler(asEvent(delivered))).toEqual({ report: IN_FLIGHT });
    expect(passes()).toBe(1);
    expect(f.asked).toEqual([NOW + 20_000]);
  });

  it('backs off a follow-up that meets a held disruption lease, asking for no other, so the mapping deletes it', async () => {
    const leases = new DynamoDbLeaseStore({ client: db.client, tableName: db.tableName, cluster: 'followups' });
    await leases.acquire(DISRUPTION_LEASE_NAME, 'scheduled-pass', 120, NOW);
    const f = followUps();
    await f.passes.request(NOW + 20_000);
    const delivered = await drain();
    f.asked.length = 0;
    const { handler, passes } = handlerWith(IN_FLIGHT, { followUps: { passes: f.passes, clock }, lease: { leases, clock, ttlSeconds: 120, holder: () => 'follow-up' } });
    expect(await handler(asEvent(delivered))).toEqual({ backedOff: true });
    expect(passes()).toBe(0);
    expect(f.asked).toEqual([]);
  });

  it.each([
    ['an empty object', {}],
    ['a batch from another source', { Records: [{ eventSource: 'aws:s3' }] }],
    ['an empty batch', { Records: [] }],
    ['an event of another rule', { ...scheduled, 'detail-type': 'EC2 Spot Instance Interruption Warning', source: 'aws.ec2' }],
  ])('drops %s without a pass or a follow-up', async (_, event) => {
    const f = followUps();
    const { handler, log, passes } = handlerWith(IN_FLIGHT, { followUps: { passes: f.passes, clock } });
    expect(await handler(event as never)).toEqual({ ignored: true });
    expect(passes()).toBe(0);
    expect(f.asked).toEqual([]);
    expect(log.lines.map(([level]) => level)).toEqual(['error']);
  });
});
