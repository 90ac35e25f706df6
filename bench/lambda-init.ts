/**
 * B7's init measure: a Lambda bundle imported in a fresh `node` process and its handler invoked once, against local
 * adapters — DynamoDB on dynalite (Skiff's table), the fake kube-apiserver of `test/support` behind TLS (the
 * controllers speak `https://` only, with the cluster CA from the environment, as on EKS), and a stub for every other
 * AWS API (Secrets Manager answers the webhook key, SQS takes the webhook's messages, the rest answer 400 at once, so
 * a call the first invocation makes to EC2 or Pricing fails fast and is handled as the handler handles it).
 *
 * The environment is the one the CDK stack gives each function (`shared/lambda/env.ts`), with `AWS_ENDPOINT_URL_*`
 * pointing the SDK's clients at the local servers. Each handler gets the event it sees first after idle: the
 * provisioner a pod event, the interruption handler a health event for an instance Skiff does not know, the
 * disruption and lifecycle functions their schedule, the webhook a signed batch of one pod event. The cluster is
 * empty, so the invocation is the handler's fixed cost: building its clients, the first requests, lazy modules.
 */
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { startDynalite, type LocalDynamoDb } from '../shared/cli/local-dynamodb.js';
import { CONTROLLER_ENV, WEBHOOK_ENV } from '../shared/lambda/env.js';
import { signWebhookBody } from '../shared/lambda/webhook-signature.js';
import { startFakeKubeApiServer, type FakeKubeApiServer } from '../test/support/fake-kube-apiserver.js';

/** The cluster name of the measure. */
const CLUSTER = 'bench';
/** The webhook HMAC key the Secrets Manager stub returns. */
const WEBHOOK_KEY = 'bench-webhook-key';

/** Local servers the bundles are invoked against. */
export interface LocalAdapters {
  /** The environment of a function, by function name (`provisioner`, …, `webhook`). */
  env(name: string): Record<string, string>;
  /** The first event of a function's handler after idle. */
  event(name: string): unknown;
  close(): Promise<void>;
}

const listen = (server: Server): Promise<number> => new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
const closeServer = (server: Server): Promise<void> => new Promise((resolve) => server.close(() => resolve()));

/**
 * The AWS stub: Secrets Manager `GetSecretValue` returns {@link WEBHOOK_KEY}, SQS `SendMessageBatch` takes every entry
 * (with the MD5 the SDK checks), an EC2 action returns its empty result, anything else is a 400
 * `UnrecognizedClientException`.
 */
function awsStub(): Server {
  return createHttpServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
        res.end(JSON.stringify(value));
      };
      if (target === 'secretsmanager.GetSecretValue') return json(200, { ARN: 'arn:aws:secretsmanager:us-west-2:111122223333:secret:bench', Name: 'bench', SecretString: WEBHOOK_KEY, VersionId: 'v1' });
      if (target === 'AmazonSQS.SendMessageBatch') {
        const entries = (JSON.parse(body) as { Entries: { Id: string; MessageBody: string }[] }).Entries;
        return json(200, { Successful: entries.map((e) => ({ Id: e.Id, MessageId: `m-${e.Id}`, MD5OfMessageBody: createHash('md5').update(e.MessageBody).digest('hex') })), Failed: [] });
      }
      const ec2Action = /(?:^|&)Action=([A-Za-z]+)/.exec(body)?.[1];
      if (ec2Action) {
        // EC2's query protocol: an empty result of the action (no instances, no spot prices, …).
        res.writeHead(200, { 'content-type': 'text/xml;charset=UTF-8' });
        return res.end(`<?xml version="1.0" encoding="UTF-8"?><${ec2Action}Response xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>bench</requestId></${ec2Action}Response>`);
      }
      return json(400, { __type: 'UnrecognizedClientException', message: 'local stub: not served' });
    });
  });
}

/** A self-signed certificate for 127.0.0.1 (openssl), PEM. */
function selfSignedCertificate(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-bench-tls-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Starts dynalite, the fake kube-apiserver behind a TLS proxy, and the AWS stub. */
export async function startLocalAdapters(): Promise<LocalAdapters> {
  const db: LocalDynamoDb = await startDynalite();
  const kube: FakeKubeApiServer = await startFakeKubeApiServer();
  const kubeUrl = new URL(kube.url);
  const tls = selfSignedCertificate();
  const proxy = createHttpsServer(tls, (req, res) => {
    const upstream = httpRequest({ host: kubeUrl.hostname, port: kubeUrl.port, method: req.method, path: req.url, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    req.pipe(upstream);
  });
  const kubePort = await listen(proxy);
  const stub = awsStub();
  const stubUrl = `http://127.0.0.1:${await listen(stub)}`;
  const common = {
    PATH: process.env.PATH ?? '',
    AWS_REGION: 'us-west-2',
    AWS_ACCESS_KEY_ID: 'AKIDBENCH',
    AWS_SECRET_ACCESS_KEY: 'bench',
    AWS_ENDPOINT_URL: stubUrl,
    AWS_ENDPOINT_URL_DYNAMODB: db.endpoint,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    POWERTOOLS_DEV: 'true',
    POWERTOOLS_LOG_LEVEL: 'ERROR',
    [WEBHOOK_ENV.cluster]: CLUSTER,
  };
  const controller = {
    ...common,
    [CONTROLLER_ENV.tableName]: db.tableName,
    [CONTROLLER_ENV.clusterEndpoint]: `https://127.0.0.1:${kubePort}`,
    [CONTROLLER_ENV.clusterCertificateAuthority]: Buffer.from(tls.cert).toString('base64'),
    [CONTROLLER_ENV.kubernetesVersion]: '1.31',
  };
  const now = Date.now();
  const sqsRecord = (body: string) => ({
    messageId: 'm-1',
    receiptHandle: 'm-1',
    body,
    attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(now), SenderId: 'bench', ApproximateFirstReceiveTimestamp: String(now) },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-west-2:111122223333:bench',
    awsRegion: 'us-west-2',
  });
  const scheduled = { version: '0', id: 'e-1', 'detail-type': 'Scheduled Event', source: 'aws.events', account: '111122223333', time: new Date(now).toISOString(), region: 'us-west-2', resources: ['arn:aws:events:us-west-2:111122223333:rule/bench'], detail: {} };
  const podEvent = { kind: 'pod', cluster: CLUSTER, namespace: 'default', name: 'web-1', uid: 'uid-web-1', resourceVersion: '1' };
  const healthEvent = {
    version: '0',
    id: 'h-1',
    'detail-type': 'AWS Health Event',
    source: 'aws.health',
    account: '111122223333',
    time: new Date(now).toISOString(),
    region: 'us-west-2',
    resources: ['i-0123456789abcdef0'],
    detail: { service: 'EC2', eventTypeCode: 'AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED', eventTypeCategory: 'scheduledChange', affectedEntities: [{ entityValue: 'i-0123456789abcdef0' }] },
  };
  const webhookBody = JSON.stringify({ cluster: CLUSTER, events: [podEvent] });
  const events: Record<string, unknown> = {
    provisioner: { Records: [sqsRecord(JSON.stringify(podEvent))] },
    interruption: { Records: [sqsRecord(JSON.stringify(healthEvent))] },
    disruption: scheduled,
    lifecycle: scheduled,
    webhook: {
      version: '2.0',
      routeKey: '$default',
      rawPath: '/',
      rawQueryString: '',
      headers: { 'content-type': 'application/json', ...signWebhookBody(WEBHOOK_KEY, webhookBody, now) },
      requestContext: { accountId: 'anonymous', apiId: 'bench', domainName: 'bench.lambda-url.us-west-2.on.aws', domainPrefix: 'bench', http: { method: 'POST', path: '/', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'skiff-relay' }, requestId: 'r-1', routeKey: '$default', stage: '$default', time: '', timeEpoch: now },
      body: webhookBody,
      isBase64Encoded: false,
    },
  };
  return {
    env: (name) =>
      name === 'webhook'
        ? { ...common, [WEBHOOK_ENV.podEventsQueueUrl]: `${stubUrl}/111122223333/bench-pod-events.fifo`, [WEBHOOK_ENV.webhookSecretId]: 'bench' }
        : controller,
    event: (name) => {
      const e = events[name];
      if (e === undefined) throw new Error(`no first event for function ${name}`);
      return e;
    },
    close: async () => {
      await Promise.all([closeServer(proxy), closeServer(stub), kube.close(), db.close()]);
    },
  };
}

/** The figures of one cold start: import, then the first invocation, ms. */
export interface ColdStart {
  readonly importMs: number;
  /** The first invocation (client construction, first requests, lazily loaded code), after the import. */
  readonly firstInvocationMs: number;
  /** What the handler returned, as JSON (to tell a refused invocation from a served one). */
  readonly outcome: string;
}

/**
 * Imports `file` in a fresh `node` process with `env` and invokes its `handler` once with `event`. Asynchronous: the
 * local adapters run in this process and must keep answering while the child runs.
 * @throws {Error} when the process fails (the import failed) or runs over 2 minutes
 */
export async function coldStart(file: string, env: Record<string, string>, event: unknown): Promise<ColdStart> {
  const marker = '@@skiff-cold-start@@';
  const script = [
    `const t0 = performance.now();`,
    `const m = await import(${JSON.stringify(pathToFileURL(file).href)});`,
    `const t1 = performance.now();`,
    `const context = { awsRequestId: 'bench-1', functionName: 'bench', getRemainingTimeInMillis: () => 60000 };`,
    `let outcome;`,
    `try { outcome = await m.handler(JSON.parse(process.env.SKIFF_BENCH_EVENT), context); } catch (e) { outcome = { threw: String(e) }; }`,
    `const t2 = performance.now();`,
    `process.stdout.write('\\n${marker}' + JSON.stringify({ importMs: t1 - t0, firstInvocationMs: t2 - t1, outcome: JSON.stringify(outcome ?? null).slice(0, 300) }) + '\\n');`,
    `process.exit(0);`,
  ].join('\n');
  const { stdout: output } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { env: { ...env, SKIFF_BENCH_EVENT: JSON.stringify(event) }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: 120_000 });
  const line = output.split('\n').find((l) => l.startsWith(marker));
  if (!line) throw new Error(`no measure in the output of ${file}: ${output.slice(-500)}`);
  return JSON.parse(line.slice(marker.length)) as ColdStart;
}
