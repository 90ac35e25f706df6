// The webhook Lambda end to end: a Function URL event in, the real SQS adapter against local-aws-sqs (the SQS JSON
// protocol, FIFO deduplication) out. The fuzz property posts 10,000 bad requests and checks that none gets a 5xx
// and none reaches the queue.
import { createHmac } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DeleteMessageBatchCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient, type Message } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import fc from 'fast-check';
import { createSqsServer } from 'local-aws-sqs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createHandler, type WebhookHandlerDeps } from '../../../functions/webhook/handler.js';
import { POD_EVENT_GROUPS } from '../../../shared/core/api/pod-event.js';
import { fnv1a } from '../../../shared/core/hash.js';
import { METRIC_NAMES, METRIC_NAMESPACE, alarmDimensions } from '../../../infra/metric-names.js';
import { SqsQueue } from '../../../shared/adapters/aws/sqs-queue.js';
import type { PodEvent } from '../../../shared/core/api/pod-event.js';
import { MAX_WEBHOOK_BATCH_EVENTS, MAX_WEBHOOK_BODY_BYTES } from '../../../shared/core/api/webhook-batch.js';
import type { MetricDataPoint } from '../../../shared/core/metrics.js';
import { silentLog } from '../../../shared/lambda/log.js';
import { createEmfPublisher } from '../../../shared/lambda/metrics.js';
import type { WebhookQueueMessage } from '../../../shared/lambda/webhook-request.js';
import { signWebhookBody } from '../../../shared/lambda/webhook-signature.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

const CLUSTER = 'prod';
const SECRET = 'relay-shared-secret-0123456789';
const NOW = Date.UTC(2026, 2, 2, 8, 0, 0);
const QUEUE = 'skiff-pod-events.fifo';

let server: Server;
let sqs: SQSClient;
let queueUrl: string;

beforeAll(async () => {
  server = await createSqsServer({
    port: 0,
    hostname: '127.0.0.1',
    queues: [{ QueueName: QUEUE, Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'false', VisibilityTimeout: 30 } }],
  });
  const { port } = server.address() as AddressInfo;
  sqs = new SQSClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${port}`, credentials: { accessKeyId: 'fake', secretAccessKey: 'fake' } });
  queueUrl = `http://127.0.0.1:${port}/123456789012/${QUEUE}`;
});

afterAll(async () => {
  sqs.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(async () => {
  await drain(); // each test starts from an empty queue
});

/** Receives and deletes every message in the queue (FIFO hands out a group's messages one batch at a time). */
async function drain(): Promise<Message[]> {
  const out: Message[] = [];
  for (;;) {
    const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, AttributeNames: ['All'], MessageSystemAttributeNames: ['All'] }));
    if (Messages.length === 0) return out;
    out.push(...Messages);
    await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })) }));
  }
}

async function depth(): Promise<number> {
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }));
  return Number(Attributes?.ApproximateNumberOfMessages ?? 0) + Number(Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
}

interface Harness {
  readonly handle: ReturnType<typeof createHandler>;
  /** Every enqueue call's messages. */
  readonly enqueued: WebhookQueueMessage[][];
  readonly secretReads: { refresh: boolean }[];
  /** Every metric point the handler published. */
  readonly points: MetricDataPoint[];
  now: number;
}

function harness(overrides: Partial<WebhookHandlerDeps> & { secrets?: (refresh: boolean) => string } = {}): Harness {
  const queue = new SqsQueue({ client: sqs, queueUrl, sleep: async () => {} });
  const h: Harness = {
    enqueued: [],
    secretReads: [],
    points: [],
    now: NOW,
    handle: undefined as never,
  };
  const deps: WebhookHandlerDeps = {
    cluster: CLUSTER,
    secret: async (options) => {
      const refresh = options?.refresh === true;
      h.secretReads.push({ refresh });
      return overrides.secrets ? overrides.secrets(refresh) : SECRET;
    },
    enqueue: async (messages) => {
      h.enqueued.push([...messages]);
      await queue.sendBatch(messages);
    },
    clock: { now: () => h.now },
    log: silentLog,
    metrics: { publish: (points) => void h.points.push(...points) },
    ...overrides,
  };
  (h as { handle: Harness['handle'] }).handle = createHandler(deps);
  return h;
}

const pod = (name: string, resourceVersion = '100', uid = `uid-${name}`): PodEvent => ({ kind: 'pod', cluster: CLUSTER, namespace: 'default', name, uid, resourceVersion });
const node = (name: string, event: 'registered' | 'ready' | 'notReady' | 'deleted'): PodEvent => ({ kind: 'node', cluster: CLUSTER, name, uid: `uid-${name}`, resourceVersion: '7', event });

/** A Function URL (payload 2.0) event. */
function urlEvent(body: string, headers: Record<string, string>, options: { method?: string; base64?: boolean } = {}): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: '/',
    rawQueryString: '',
    headers,
    requestContext: {
      accountId: 'anonymous',
      apiId: 'abc123',
      domainName: 'abc123.lambda-url.eu-west-1.on.aws',
      domainPrefix: 'abc123',
      http: { method: options.method ?? 'POST', path: '/', protocol: 'HTTP/1.1', sourceIp: '203.0.113.7', userAgent: 'skiff-relay' },
      requestId: 'r-1',
      routeKey: '$default',
      stage: '$default',
      time: '02/Mar/2026:08:00:00 +0000',
      timeEpoch: NOW,
    },
    body: options.base64 ? Buffer.from(body, 'utf8').toString('base64') : body,
    isBase64Encoded: options.base64 ?? false,
  };
}

/** A correctly signed request for `body` at `at` (epoch ms). */
function signed(body: string, at = NOW, secret = SECRET, options: { method?: string; base64?: boolean } = {}): APIGatewayProxyEventV2 {
  return urlEvent(body, { 'content-type': 'application/json', ...signWebhookBody(secret, body, at) }, options);
}

const batchBody = (events: readonly PodEvent[], cluster = CLUSTER) => JSON.stringify({ cluster, events });

describe('webhook handler', () => {
  describe('a valid signed batch', () => {
    it('enqueues one FIFO message per event, grouped by the cluster and the object\'s uid, deduplicated by uid:resourceVersion, and answers 202', async () => {
      const h = harness();
      const events = [pod('web-1'), pod('web-2', '101'), node('ip-10-0-1-2.ec2.internal', 'ready')];
      const response = await h.handle(signed(batchBody(events)));
      expect(response).toMatchObject({ statusCode: 202, body: JSON.stringify({ accepted: 3 }) });
      const messages = await drain();
      expect(messages.map((m) => JSON.parse(m.Body!))).toEqual(events);
      // One of the cluster's message groups per object (by uid), so a message held in flight holds back only its own.
      expect(messages.map((m) => m.Attributes?.MessageGroupId)).toEqual(events.map((e) => `${CLUSTER}#${fnv1a(e.uid) % POD_EVENT_GROUPS}`));
      expect(messages.map((m) => m.Attributes?.MessageDeduplicationId)).toEqual(['uid-web-1:100', 'uid-web-2:101', 'uid-ip-10-0-1-2.ec2.internal:7']);
    });

    it('enqueues a batch posted twice only once', async () => {
      const h = harness();
      const body = batchBody([pod('web-1'), pod('web-2')]);
      expect((await h.handle(signed(body))).statusCode).toBe(202);
      h.now += 2_000;
      expect((await h.handle(signed(body, h.now))).statusCode).toBe(202);
      expect(h.enqueued).toHaveLength(2);
      const messages = await drain();
      expect(messages.map((m) => JSON.parse(m.Body!).name)).toEqual(['web-1', 'web-2']);
    });

    it('enqueues a pod again when its resourceVersion changed', async () => {
      const h = harness();
      await h.handle(signed(batchBody([pod('web-1', '100')])));
      await h.handle(signed(batchBody([pod('web-1', '105')])));
      expect((await drain()).map((m) => JSON.parse(m.Body!).resourceVersion)).toEqual(['100', '105']);
    });

    it('enqueues more than 10 events through several SendMessageBatch calls, in order', async () => {
      const h = harness();
      const events = Array.from({ length: 23 }, (_, i) => pod(`web-${i}`));
      expect((await h.handle(signed(batchBody(events)))).statusCode).toBe(202);
      expect((await drain()).map((m) => JSON.parse(m.Body!).name)).toEqual(events.map((e) => e.name));
    });

    it('accepts a base64-encoded body (Function URLs encode non-text content types)', async () => {
      const h = harness();
      expect((await h.handle(signed(batchBody([pod('web-1')]), NOW, SECRET, { base64: true }))).statusCode).toBe(202);
      expect(await drain()).toHaveLength(1);
    });

    it('accepts a signature computed independently from the contract: HMAC-SHA256 of "<timestamp>.<body>", hex', async () => {
      const h = harness();
      const body = batchBody([pod('web-1')]);
      const timestamp = String(NOW / 1000);
      const hex = createHmac('sha256', SECRET).update(`${timestamp}.${body}`).digest('hex');
      const response = await h.handle(urlEvent(body, { 'x-skiff-timestamp': timestamp, 'x-skiff-signature': `sha256=${hex}` }));
      expect(response.statusCode).toBe(202);
      expect(signWebhookBody(SECRET, body, NOW)).toEqual({ 'x-skiff-timestamp': timestamp, 'x-skiff-signature': `sha256=${hex}` });
    });

    it('reads the signature headers whatever their case', async () => {
      const h = harness();
      const body = batchBody([pod('web-1')]);
      const headers = signWebhookBody(SECRET, body, NOW);
      const response = await h.handle(urlEvent(body, { 'X-Skiff-Timestamp': headers['x-skiff-timestamp'], 'X-SKIFF-SIGNATURE': headers['x-skiff-signature'] }));
      expect(response.statusCode).toBe(202);
    });

    it('accepts a timestamp up to 300 s old or ahead, and refuses 301 s', async () => {
      const h = harness();
      const body = batchBody([pod('web-1')]);
      expect((await h.handle(signed(body, NOW - 300_000))).statusCode).toBe(202);
      expect((await h.handle(signed(body, NOW + 300_000))).statusCode).toBe(202);
      expect((await h.handle(signed(body, NOW - 301_000))).statusCode).toBe(401);
      expect((await h.handle(signed(body, NOW + 301_000))).statusCode).toBe(401);
    });

    it('accepts the new secret right after a rotation by re-reading it once', async () => {
      let current = SECRET;
      const h = harness({ secrets: (refresh) => (refresh ? current : SECRET) });
      current = 'rotated-secret';
      const response = await h.handle(signed(batchBody([pod('web-1')]), NOW, 'rotated-secret'));
      expect(response.statusCode).toBe(202);
      expect(h.secretReads).toEqual([{ refresh: false }, { refresh: true }]);
    });
  });

  describe('a refused request', () => {
    it('answers 401 without enqueuing when the signature is missing, wrong or made with another secret', async () => {
      const h = harness();
      const body = batchBody([pod('web-1')]);
      const good = signWebhookBody(SECRET, body, NOW);
      const cases: Record<string, string>[] = [
        {},
        { 'x-skiff-timestamp': good['x-skiff-timestamp'] },
        { 'x-skiff-signature': good['x-skiff-signature'] },
        { ...good, 'x-skiff-signature': good['x-skiff-signature'].replace(/.$/, (c) => (c === '0' ? '1' : '0')) },
        { ...good, 'x-skiff-signature': good['x-skiff-signature'].slice('sha256='.length) },
        { ...good, 'x-skiff-timestamp': `${good['x-skiff-timestamp']}.5` },
        signWebhookBody('another-secret', body, NOW),
      ];
      for (const headers of cases) {
        const response = await h.handle(urlEvent(body, headers));
        expect(response.statusCode, JSON.stringify(headers)).toBe(401);
      }
      expect(h.enqueued).toEqual([]);
      expect(await depth()).toBe(0);
    });

    it('refuses an unsigned, malformed or stale request with 401 and the problem’s message, without reading the secret', async () => {
      const h = harness();
      const body = batchBody([pod('web-1')]);
      const good = signWebhookBody(SECRET, body, NOW);
      const ts = good['x-skiff-timestamp'];
      const sig = good['x-skiff-signature'];
      const cases: [Record<string, string>, RegExp][] = [
        [{}, /^missing x-skiff-timestamp header$/],
        [{ 'x-skiff-signature': sig }, /^missing x-skiff-timestamp header$/],
        [{ 'x-skiff-timestamp': '', 'x-skiff-signature': sig }, /^missing x-skiff-timestamp header$/],
        [{ 'x-skiff-timestamp': `${ts}.5`, 'x-skiff-signature': sig }, /^x-skiff-timestamp must be unix seconds \(decimal digits\)$/],
        [{ 'x-skiff-timestamp': `-${ts}`, 'x-skiff-signature': sig }, /^x-skiff-timestamp must be unix seconds/],
        [{ 'x-skiff-timestamp': String(NOW / 1000 - 301), 'x-skiff-signature': sig }, /^x-skiff-timestamp is more than 300 s from the webhook's clock/],
        [{ 'x-skiff-timestamp': String(NOW / 1000 + 301), 'x-skiff-signature': sig }, /^x-skiff-timestamp is more than 300 s from the webhook's clock/],
        [{ 'x-skiff-timestamp': ts }, /^missing x-skiff-signature header$/],
        [{ 'x-skiff-timestamp': ts, 'x-skiff-signature': sig.slice('sha256='.length) }, /^x-skiff-signature must be sha256=<64 hex digits>$/],
        [{ 'x-skiff-timestamp': ts, 'x-skiff-signature': sig.slice(0, -1) }, /^x-skiff-signature must be sha256=<64 hex digits>$/],
        [{ 'x-skiff-timestamp': ts, 'x-skiff-signature': `${sig.slice(0, -1)}g` }, /^x-skiff-signature must be sha256=<64 hex digits>$/],
      ];
      for (const [headers, message] of cases) {
        const response = await h.handle(urlEvent(body, headers));
        expect(response.statusCode, JSON.stringify(headers)).toBe(401);
        expect(response.body, JSON.stringify(headers)).toMatch(message);
      }
      expect(h.secretReads).toEqual([]);
      expect(h.enqueued).toEqual([]);
    });

    it('reads the secret for a well-formed request: once when it matches, and once more, refreshed, when it does not', async () => {
      const h = harness();
      const body = batchBody([pod('web-1')]);
      expect((await h.handle(signed(body))).statusCode).toBe(202);
      expect(h.secretReads).toEqual([{ refresh: false }]);
      h.secretReads.length = 0;
      const forged = await h.handle(signed(body, NOW, 'another-secret'));
      expect(forged).toMatchObject({ statusCode: 401, body: 'signature does not match' });
      expect(h.secretReads).toEqual([{ refresh: false }, { refresh: true }]);
      h.secretReads.length = 0;
      expect((await h.handle(urlEvent(body.replace('web-1', 'web-2'), signWebhookBody(SECRET, body, NOW)))).statusCode).toBe(401);
      expect(h.secretReads).toEqual([{ refresh: false }, { refresh: true }]);
    });

    it('answers 401 to a body changed after signing', async () => {
      const h = harness();
      const body = batchBody([pod('web-1')]);
      const headers = signWebhookBody(SECRET, body, NOW);
      expect((await h.handle(urlEvent(body.replace('web-1', 'web-2'), headers))).statusCode).toBe(401);
      expect(h.enqueued).toEqual([]);
    });

    it('answers 413 to a body over 256 KiB before verifying or parsing it, and not to one of exactly 256 KiB', async () => {
      const h = harness();
      const over = ' '.repeat(MAX_WEBHOOK_BODY_BYTES + 1);
      const exact = `${batchBody([pod('web-1')])}${' '.repeat(MAX_WEBHOOK_BODY_BYTES - batchBody([pod('web-1')]).length)}`;
      expect((await h.handle(urlEvent(over, {}))).statusCode).toBe(413);
      expect((await h.handle(urlEvent(over, {}, { base64: true }))).statusCode).toBe(413);
      expect(h.secretReads).toEqual([]);
      expect(Buffer.byteLength(exact)).toBe(MAX_WEBHOOK_BODY_BYTES);
      expect((await h.handle(signed(exact))).statusCode).toBe(202);
    });

    it('answers 400 to a signed body that is not JSON, or not a batch, and names the field', async () => {
      const h = harness();
      const notJson = await h.handle(signed('{"cluster": "prod", '));
      expect(notJson).toMatchObject({ statusCode: 400 });
      expect(notJson.body).toMatch(/not JSON/);
      const badKind = await h.handle(signed(JSON.stringify({ cluster: CLUSTER, events: [{ ...pod('web-1'), kind: 'deployment' }] })));
      expect(badKind.statusCode).toBe(400);
      expect(badKind.body).toMatch(/events\.0\.kind/);
      const tooMany = await h.handle(signed(batchBody(Array.from({ length: MAX_WEBHOOK_BATCH_EVENTS + 1 }, (_, i) => pod(`p${i}`)))));
      expect(tooMany.statusCode).toBe(400);
      expect(tooMany.body).toMatch(/at most 500 events/);
      expect(h.enqueued).toEqual([]);
    });

    it('answers 400 to a batch for another cluster, or with an event of another cluster', async () => {
      const h = harness();
      const other = await h.handle(signed(batchBody([{ ...pod('web-1'), cluster: 'staging' }], 'staging')));
      expect(other.statusCode).toBe(400);
      expect(other.body).toMatch(/this webhook serves "prod"/);
      const mixed = await h.handle(signed(batchBody([pod('web-1'), { ...pod('web-2'), cluster: 'staging' }])));
      expect(mixed.statusCode).toBe(400);
      expect(mixed.body).toMatch(/events\.1\.cluster/);
      expect(h.enqueued).toEqual([]);
    });

    it('answers 405 to anything but POST', async () => {
      const h = harness();
      expect((await h.handle(signed(batchBody([pod('web-1')]), NOW, SECRET, { method: 'GET' }))).statusCode).toBe(405);
      expect(h.enqueued).toEqual([]);
    });
  });

  describe('a failure behind the webhook', () => {
    it('answers 503 when the queue does not take the events, so the relay retries', async () => {
      const h = harness({ enqueue: (m) => new SqsQueue({ client: sqs, queueUrl: `${queueUrl}-missing`, sleep: async () => {} }).sendBatch(m) });
      expect((await h.handle(signed(batchBody([pod('web-1')])))).statusCode).toBe(503);
    });

    it('answers 500 without details when the secret cannot be read', async () => {
      const h = harness({
        secret: async () => {
          throw new Error('AccessDeniedException: not allowed');
        },
      });
      const response = await h.handle(signed(batchBody([pod('web-1')])));
      expect(response.statusCode).toBe(500);
      expect(response.body ?? '').not.toMatch(/AccessDenied/);
    });
  });

  describe('the refusal metric', () => {
    const refused = (code: number, reason: string): MetricDataPoint => ({ name: 'skiff_webhook_requests_refused_total', unit: 'Count', value: 1, dimensions: { code: String(code), reason } });

    it('counts each refused request once, by HTTP status (code) and problem (reason)', async () => {
      const h = harness();
      const body = batchBody([pod('web-1')]);
      const cases: [APIGatewayProxyEventV2, number, string][] = [
        [signed(body, NOW, SECRET, { method: 'GET' }), 405, 'method'],
        [urlEvent(' '.repeat(MAX_WEBHOOK_BODY_BYTES + 1), {}), 413, 'too-large'],
        [urlEvent(body, {}), 401, 'missing-timestamp'],
        [signed(body, NOW - 301_000), 401, 'stale-timestamp'],
        [urlEvent(body, { 'x-skiff-timestamp': String(NOW / 1000), 'x-skiff-signature': 'sha256=00' }), 401, 'malformed-signature'],
        [signed(body, NOW, 'another-secret'), 401, 'wrong-signature'],
        [signed('{"cluster": '), 400, 'not-json'],
        [signed(JSON.stringify({ cluster: CLUSTER, events: [] })), 400, 'schema'],
        [signed(batchBody([{ ...pod('web-1'), cluster: 'staging' }], 'staging')), 400, 'wrong-cluster'],
      ];
      for (const [event, status] of cases) expect((await h.handle(event)).statusCode).toBe(status);
      expect(h.points).toEqual(cases.map(([, status, reason]) => refused(status, reason)));
    });

    it('counts nothing for an accepted batch, a queue failure (503) or an unreadable secret (500)', async () => {
      const accepted = harness();
      expect((await accepted.handle(signed(batchBody([pod('web-1')])))).statusCode).toBe(202);
      const queueDown = harness({ enqueue: async () => Promise.reject(new Error('SQS down')) });
      expect((await queueDown.handle(signed(batchBody([pod('web-1')])))).statusCode).toBe(503);
      const noSecret = harness({ secret: async () => Promise.reject(new Error('AccessDeniedException')) });
      expect((await noSecret.handle(signed(batchBody([pod('web-1')])))).statusCode).toBe(500);
      expect([...accepted.points, ...queueDown.points, ...noSecret.points]).toEqual([]);
    });

    it('answers the request even when publishing the metric fails', async () => {
      const h = harness({ metrics: { publish: () => { throw new Error('stdout closed'); } } });
      expect((await h.handle(urlEvent(batchBody([pod('web-1')]), {}))).statusCode).toBe(401);
    });

    describe('as EMF', () => {
      let lines: string[];
      beforeEach(() => {
        lines = [];
        vi.stubEnv('POWERTOOLS_DEV', '');
        vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
        vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
          lines.push(String(chunk));
          return true;
        });
      });
      afterEach(() => {
        vi.restoreAllMocks();
        vi.unstubAllEnvs();
      });

      it('writes one EMF line per refusal, with the dimension set the stack’s alarm reads and the per-problem one', async () => {
        const h = harness({ metrics: createEmfPublisher({ clusterName: CLUSTER, serviceName: 'skiff' }) });
        expect((await h.handle(urlEvent(batchBody([pod('web-1')]), {}))).statusCode).toBe(401);
        expect(lines).toHaveLength(1);
        const emf = JSON.parse(lines[0]!) as Record<string, unknown> & { _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] } };
        const [directive] = emf._aws.CloudWatchMetrics;
        expect(directive).toEqual({ Namespace: METRIC_NAMESPACE, Dimensions: [Object.keys(alarmDimensions(CLUSTER)), [...Object.keys(alarmDimensions(CLUSTER)), 'code', 'reason']], Metrics: [{ Name: METRIC_NAMES.webhookRequestsRefused, Unit: 'Count' }] });
        expect(emf).toMatchObject({ ...alarmDimensions(CLUSTER), code: '401', reason: 'missing-timestamp', [METRIC_NAMES.webhookRequestsRefused]: 1 });
      });
    });
  });

  describe('fuzzing', () => {
    /** Ways a validly signed body can be made invalid, each one certainly invalid. */
    const invalidBatches: fc.Arbitrary<unknown> = fc.oneof(
      fc.anything().filter((v) => typeof v !== 'object' || v === null || Array.isArray(v)),
      fc.record({ cluster: fc.constant(CLUSTER), events: fc.constant([]) }),
      fc.record({ cluster: fc.string().filter((c) => c !== CLUSTER), events: fc.constant([pod('web-1')]) }),
      fc.constantFrom('kind', 'cluster', 'namespace', 'name', 'uid', 'resourceVersion').map((field) => {
        const e: Record<string, unknown> = { ...pod('web-1') };
        delete e[field];
        return { cluster: CLUSTER, events: [e] };
      }),
      fc.record({ field: fc.constantFrom('kind', 'namespace', 'name', 'uid', 'resourceVersion'), value: fc.oneof(fc.constant(''), fc.integer(), fc.constant(null), fc.string().map((s) => `${s} x`), fc.constant('UPPER')) }).map(({ field, value }) => ({
        cluster: CLUSTER,
        events: [{ ...pod('web-1'), [field]: field === 'uid' || field === 'resourceVersion' ? (typeof value === 'string' && value !== '' ? `${value} ` : value) : value }],
      })),
      fc.record({ cluster: fc.constant(CLUSTER), events: fc.array(fc.dictionary(fc.string(), fc.jsonValue()), { minLength: 1, maxLength: 3 }) }),
      fc.record({ cluster: fc.constant(CLUSTER), events: fc.constant([{ ...node('n1', 'ready'), event: 'exploded' }]) }),
    );

    const LARGE = batchBody([pod('web-1')]).padEnd(MAX_WEBHOOK_BODY_BYTES + 4096, ' ');
    const LARGE_HEADERS = signWebhookBody(SECRET, LARGE, NOW);
    type Case = { readonly label: string; readonly event: APIGatewayProxyEventV2; readonly expect: readonly number[] };
    const cases: fc.Arbitrary<Case> = fc.oneof(
      // garbage: any body, any headers, unsigned or signed with junk
      fc
        .record({ body: fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.json()), ts: fc.option(fc.string()), sig: fc.option(fc.string()), base64: fc.boolean() })
        .map(({ body, ts, sig, base64 }) => ({
          label: 'garbage',
          event: urlEvent(body, { ...(ts !== null ? { 'x-skiff-timestamp': ts } : {}), ...(sig !== null ? { 'x-skiff-signature': sig } : {}) }, { base64 }),
          expect: [401],
        })),
      // a valid batch with a stale, future or malformed timestamp, or a forged signature
      fc
        .record({ skew: fc.oneof(fc.integer({ min: 301, max: 10 ** 9 }), fc.integer({ min: -(10 ** 9), max: -301 })), forged: fc.boolean(), hex: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex')) })
        .map(({ skew, forged, hex }) => {
          const body = batchBody([pod('web-1')]);
          const headers = forged ? { 'x-skiff-timestamp': String(NOW / 1000), 'x-skiff-signature': `sha256=${hex}` } : signWebhookBody(SECRET, body, NOW + skew * 1000);
          return { label: forged ? 'forged' : 'stale', event: urlEvent(body, headers), expect: [401] };
        }),
      // signed with the right secret, but not a valid batch
      fc.record({ value: invalidBatches, base64: fc.boolean() }).map(({ value, base64 }) => ({ label: 'invalid batch', event: signed(JSON.stringify(value) ?? 'undefined', NOW, SECRET, { base64 }), expect: [400] })),
      // signed, but not JSON at all
      fc.string().filter((s) => { try { JSON.parse(s); return false; } catch { return true; } }).map((s) => ({ label: 'not JSON', event: signed(s), expect: [400] })),
      // too large (signed headers present; the size is checked first, so they are not even read)
      fc.record({ extra: fc.integer({ min: 1, max: 4096 }), base64: fc.boolean() }).map(({ extra, base64 }) => ({
        label: 'too large',
        event: urlEvent(LARGE.slice(0, MAX_WEBHOOK_BODY_BYTES + extra), LARGE_HEADERS, { base64 }),
        expect: [413],
      })),
      // wrong method
      fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS').map((method) => ({ label: 'method', event: signed(batchBody([pod('web-1')]), NOW, SECRET, { method }), expect: [405] })),
    );

    it('answers every one of 10,000 bad requests with the right 4xx, reads the secret only for well-formed fresh headers, and enqueues nothing', async () => {
      const h = harness();
      const seen = new Map<string, number>();
      await fc.assert(
        fc.asyncProperty(cases, async (c) => {
          const readsBefore = h.secretReads.length;
          const pointsBefore = h.points.length;
          const response = await h.handle(c.event);
          seen.set(c.label, (seen.get(c.label) ?? 0) + 1);
          // Only a request whose headers are well-formed and fresh gets as far as the secret.
          if (['garbage', 'stale', 'too large', 'method'].includes(c.label)) expect(h.secretReads.length, `${c.label} read the secret`).toBe(readsBefore);
          // …and every refusal is counted once, under its status.
          expect(h.points.slice(pointsBefore).map((p) => p.dimensions.code), c.label).toEqual([String(response.statusCode)]);
          expect(response.statusCode, c.label).toBeGreaterThanOrEqual(400);
          expect(response.statusCode, c.label).toBeLessThan(500);
          expect(c.expect, `${c.label}: ${response.body}`).toContain(response.statusCode);
        }),
        { numRuns: 10_000, seed: 20260302 },
      );
      expect(h.enqueued).toEqual([]);
      expect(await depth()).toBe(0);
      expect([...seen.keys()].sort()).toEqual(['forged', 'garbage', 'invalid batch', 'method', 'not JSON', 'stale', 'too large']);
    });
  });
});
