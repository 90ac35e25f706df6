/**
 * The deployed composition on one machine (`npm run e2e`): the stack's template synthesised offline and "deployed"
 * locally (`deployment.ts`), and every part running as it runs in AWS and in the cluster, speaking its real protocol.
 *
 * - **Kubernetes:** the fake API server over HTTPS (`test/support/fake-kube-apiserver.ts`), with the kubelet,
 *   kube-scheduler, ReplicaSet controller and node lifecycle of `cluster-fakes.ts`.
 * - **Relay:** `functions/relay/main.ts` as a child process, with the Deployment's environment from
 *   `infra/k8s/relay.yaml`, the in-cluster service-account files, and the secret file.
 * - **Webhook:** its production handler behind a local HTTP listener shaped like a Function URL (payload 2.0), with
 *   the template's `AuthType` (`AWS_IAM` would refuse the relay's unsigned requests with 403, as Lambda does).
 * - **SQS:** local-aws-sqs, with the queues and redrive of the template. A poller per event source mapping invokes
 *   its function with real SQS batches, deletes what succeeded and honours `batchItemFailures`; a failed record is
 *   made visible again after {@link CompositionOptions.retryAfterSeconds} (the stack's visibility timeout, minutes,
 *   is shortened — its receive count still moves it to the dead-letter queue after `maxReceiveCount`).
 * - **Schedules:** the template's EventBridge schedules invoke the disruption and lifecycle functions with a Scheduled
 *   Event, their rates scaled by {@link CompositionOptions.secondsPerMinute}.
 * - **DynamoDB:** dynalite over HTTP. **EC2, IAM, SSM, Pricing, EventBridge, Secrets Manager:** `local-aws.ts`.
 * - **Functions:** each built by its production factory (`shared/lambda/wiring.ts`, `webhook-wiring.ts`) from the
 *   template's environment on its first invocation (a cold start), as `functions/<name>/index.ts` does. The SDK
 *   clients find the local services through `AWS_ENDPOINT_URL_<SERVICE>` (what the Lambda runtime's environment would
 *   be with an endpoint override) — no code path differs from AWS.
 *
 * The EMF and log lines the functions print are captured as parsed JSON ({@link Composition.logs}).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ChangeMessageVisibilityBatchCommand, DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient, type Message } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEventV2, SQSEvent } from 'aws-lambda';
import dynalite from 'dynalite';
import { createSqsServer } from 'local-aws-sqs';
import { parseAllDocuments } from 'yaml';
import { createHandler as createDisruptionHandler } from '../../../functions/disruption/handler.js';
import { createHandler as createInterruptionHandler } from '../../../functions/interruption/handler.js';
import { createHandler as createLifecycleHandler } from '../../../functions/lifecycle/handler.js';
import { createHandler as createProvisionerHandler } from '../../../functions/provisioner/handler.js';
import { createHandler as createWebhookHandler } from '../../../functions/webhook/handler.js';
import { ec2LaunchTemplates } from '../../../shared/lambda/launch-wiring.js';
import { disruptionDepsFromEnv, interruptionDepsFromEnv, lifecycleDepsFromEnv, provisionerDepsFromEnv } from '../../../shared/lambda/wiring.js';
import { webhookDepsFromEnv } from '../../../shared/lambda/webhook-wiring.js';
import { SAMPLE_CONFIG, logicalId, synth } from '../../infra/stack-fixture.js';
import { startFakeKubeApiServer, type FakeKubeApiServer } from '../../support/fake-kube-apiserver.js';
import { startClusterFakes, type ClusterFakes } from './cluster-fakes.js';
import { deployLocally, FUNCTIONS, type CfnTemplate, type FunctionName, type LocalDeployment } from './deployment.js';
import { startLocalAws, type LocalAws } from './local-aws.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Options of {@link startComposition}. */
export interface CompositionOptions {
  /** @default 'e2e' */
  readonly clusterName?: string;
  /**
   * Changes the synthesised template before it is deployed (a wiring mistake made on purpose).
   * @param functionIds logical id of each function in `template`
   */
  readonly mutateTemplate?: (template: CfnTemplate, functionIds: Readonly<Record<FunctionName, string>>) => void;
  /** Wall-clock seconds per scheduled minute. @default 2 */
  readonly secondsPerMinute?: number;
  /** Launch → kubelet registers, ms. @default 300 */
  readonly bootDelayMs?: number;
  /** A failed SQS record is visible again after this, s. @default 1 */
  readonly retryAfterSeconds?: number;
  /** Extra NodePool spec fields (merged over the default pool's). */
  readonly nodePool?: Record<string, unknown>;
}

/** One function invocation. */
export interface Invocation {
  readonly function: FunctionName;
  readonly at: number;
  readonly ok: boolean;
  readonly error?: string;
  readonly result?: unknown;
  /** For an SQS batch: each record's body, and whether it was acknowledged (deleted from the queue). */
  readonly records?: { readonly body: string; readonly acknowledged: boolean }[];
}

/** The running composition. */
export interface Composition {
  readonly api: FakeKubeApiServer;
  readonly aws: LocalAws;
  readonly fakes: ClusterFakes;
  readonly deployment: LocalDeployment;
  readonly template: CfnTemplate;
  readonly sqs: SQSClient;
  readonly dynamoEndpoint: string;
  readonly webhookUrl: string;
  readonly invocations: Invocation[];
  /** Every JSON line the functions printed (Powertools logs and EMF). */
  readonly logs: Record<string, unknown>[];
  /** Relay stderr/stdout lines. */
  readonly relayLogs: string[];
  /** Writes the relay's mounted secret file (the Kubernetes Secret's new value). */
  writeRelaySecret(value: string): void;
  /**
   * Restarts one component: a function's container (the next invocation is a cold start), or the relay process
   * (resolves once the new process is running).
   */
  restart(component: FunctionName | 'relay'): Promise<void>;
  /** Stops a component until {@link Composition.resume} (`relay`: the process is killed; a function: its invocations fail). */
  stop(component: FunctionName | 'relay'): Promise<void>;
  /**
   * Stops polling `f`'s queue (messages accumulate, as while an event source mapping is disabled) until released; what
   * a receive already in flight brings back is returned to the queue, not invoked.
   */
  hold(f: FunctionName): void;
  release(f: FunctionName): void;
  /** Starts a stopped component again (`relay`: a new process, resolved once it runs; a function: a cold start). */
  resume(component: FunctionName | 'relay'): Promise<void>;
  close(): Promise<void>;
}

/** The NodePool and EC2NodeClass the run applies (discovery tags of the local subnets and security group). */
function karpenterObjects(cluster: string, nodePool: Record<string, unknown> = {}) {
  return {
    nodeClass: {
      apiVersion: 'karpenter.k8s.aws/v1',
      kind: 'EC2NodeClass',
      metadata: { name: 'default' },
      spec: {
        amiSelectorTerms: [{ alias: 'al2023@latest' }],
        subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': cluster } }],
        securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': cluster } }],
        role: `KarpenterNodeRole-${cluster}`,
      },
    },
    nodePool: {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: 'general' },
      spec: {
        template: {
          spec: {
            nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
            requirements: [
              { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] },
              { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['m'] },
              { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
            ],
            expireAfter: 'Never',
          },
        },
        disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '0s', budgets: [{ nodes: '100%' }] },
        ...nodePool,
      },
    },
  };
}

/** A self-signed certificate for 127.0.0.1 (openssl), as PEM. */
function selfSignedCertificate(dir: string): { key: string; cert: string } {
  const key = join(dir, 'tls.key');
  const cert = join(dir, 'tls.crt');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=kubernetes', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: 'ignore' });
  return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
}

/** The relay Deployment's container environment (`infra/k8s/relay.yaml`). */
function relayManifestEnv(): Record<string, string> {
  for (const doc of parseAllDocuments(readFileSync(join(ROOT, 'infra/k8s/relay.yaml'), 'utf8'))) {
    const o = doc.toJSON() as { kind?: string; spec?: { template?: { spec?: { containers?: { env?: { name: string; value: string }[] }[] } } } };
    if (o?.kind !== 'Deployment') continue;
    return Object.fromEntries((o.spec?.template?.spec?.containers?.[0]?.env ?? []).map((e) => [e.name, String(e.value)]));
  }
  throw new Error('infra/k8s/relay.yaml has no Deployment');
}

const listen = (server: Server) =>
  new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
const closeServer = (server: Server) =>
  new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections?.();
  });

/**
 * Starts everything. The caller must {@link Composition.close} it (the process environment is restored then).
 * @throws when a part cannot start (openssl missing, a port, the template cannot be deployed)
 */
export async function startComposition(options: CompositionOptions = {}): Promise<Composition> {
  const clusterName = options.clusterName ?? 'e2e';
  const region = 'us-west-2';
  const account = '111122223333';
  const secondsPerMinute = options.secondsPerMinute ?? 2;
  const dir = mkdtempSync(join(tmpdir(), 'skiff-e2e-'));
  const savedEnv = { ...process.env };
  const closers: (() => Promise<void> | void)[] = [];
  const relayToken = `relay-sa-${randomUUID()}`;
  const controlPlaneToken = `control-plane-${randomUUID()}`;

  // Kubernetes
  const tls = selfSignedCertificate(dir);
  const api = await startFakeKubeApiServer({ tls, acceptToken: (t) => t.startsWith('k8s-aws-v1.') || t === relayToken || t === controlPlaneToken });
  closers.push(() => api.close());
  let fakes: ClusterFakes | undefined;
  const aws = await startLocalAws({
    region,
    account,
    clusterName,
    bootDelayMs: options.bootDelayMs ?? 300,
    onBoot: (b) => fakes?.boot(b),
    onTerminated: (i) => fakes?.terminated(i),
  });
  closers.push(() => aws.close());
  fakes = startClusterFakes(api, { periodMs: 150, token: controlPlaneToken, ca: tls.cert, region });
  closers.push(() => fakes!.stop());

  // DynamoDB and SQS
  const dynamoServer = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 }) as unknown as Server;
  const dynamoEndpoint = `http://127.0.0.1:${await listen(dynamoServer)}`;
  closers.push(() => closeServer(dynamoServer));
  const sqsServer = await createSqsServer({ port: 0, hostname: '127.0.0.1', region, accountId: account });
  const sqsEndpoint = `http://127.0.0.1:${(sqsServer.address() as AddressInfo).port}`;
  closers.push(() => closeServer(sqsServer));

  // The stack, synthesised offline for this cluster, and deployed here
  const { stack, template: synthesised } = synth({
    ...SAMPLE_CONFIG,
    clusterName,
    region,
    account,
    cluster: { ...(SAMPLE_CONFIG.cluster as object), endpoint: api.url, certificateAuthorityData: Buffer.from(tls.cert).toString('base64'), kubernetesVersion: '1.31' },
    schedules: { disruptionMinutes: 1, lifecycleMinutes: 1 },
  });
  const template = synthesised.toJSON() as CfnTemplate;
  const functionIds = Object.fromEntries(FUNCTIONS.map((f) => [f, logicalId(stack, `${f}/Handler/Function`)])) as Record<FunctionName, string>;
  options.mutateTemplate?.(template, functionIds);
  const deployment = await deployLocally(template, { stackName: stack.stackName, functionIds, region, account, dynamoEndpoint, sqsEndpoint, aws });

  // What the Lambda runtime gives every function: credentials, region, and here the endpoint overrides.
  for (const k of Object.keys(process.env)) if (k.startsWith('AWS_') || k.startsWith('POWERTOOLS_')) delete process.env[k];
  Object.assign(process.env, {
    AWS_REGION: region,
    AWS_DEFAULT_REGION: region,
    AWS_ACCESS_KEY_ID: 'ASIAE2ELOCAL',
    AWS_SECRET_ACCESS_KEY: 'e2e-local-secret',
    AWS_SESSION_TOKEN: 'e2e-local-session',
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    AWS_ENDPOINT_URL_DYNAMODB: dynamoEndpoint,
    AWS_ENDPOINT_URL_SQS: sqsEndpoint,
    ...aws.endpointEnv,
    // the same on every function of the stack (SkiffFunction sets them); Powertools reads them from the process
    POWERTOOLS_SERVICE_NAME: deployment.functions.Provisioner.env.POWERTOOLS_SERVICE_NAME ?? '',
    POWERTOOLS_METRICS_NAMESPACE: deployment.functions.Provisioner.env.POWERTOOLS_METRICS_NAMESPACE ?? '',
  });

  // Function output: Powertools writes JSON lines to stdout.
  const logs: Record<string, unknown>[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    const other: string[] = [];
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        const parsed = JSON.parse(line) as unknown;
        if (parsed && typeof parsed === 'object') logs.push(parsed as Record<string, unknown>);
        else other.push(line);
      } catch {
        other.push(line);
      }
    }
    if (other.length > 0) return (write as (c: string, ...r: unknown[]) => boolean)(`${other.join('\n')}\n`, ...rest);
    return true;
  }) as typeof process.stdout.write;
  closers.push(() => void (process.stdout.write = write));

  // Karpenter objects
  const k = karpenterObjects(clusterName, options.nodePool);
  api.put('ec2nodeclasses', k.nodeClass);
  api.put('nodepools', k.nodePool);

  // Functions: a container per function, built by its production factory on the first invocation
  const invocations: Invocation[] = [];
  const stopped = new Set<string>();
  const containers = new Map<FunctionName, (event: unknown, context: unknown) => Promise<unknown>>();
  const envOf = (f: FunctionName) => ({ ...deployment.functions[f].env, AWS_REGION: region, AWS_LAMBDA_FUNCTION_NAME: deployment.functions[f].logicalId });
  const factories: Record<FunctionName, () => (event: unknown, context: unknown) => Promise<unknown>> = {
    Webhook: () => createWebhookHandler(webhookDepsFromEnv(envOf('Webhook'))) as never,
    Provisioner: () => createProvisionerHandler(provisionerDepsFromEnv(envOf('Provisioner'), ec2LaunchTemplates)) as never,
    Interruption: () => createInterruptionHandler(interruptionDepsFromEnv(envOf('Interruption'), ec2LaunchTemplates)) as never,
    Disruption: () => createDisruptionHandler(disruptionDepsFromEnv(envOf('Disruption'), ec2LaunchTemplates)) as never,
    Lifecycle: () => createLifecycleHandler(lifecycleDepsFromEnv(envOf('Lifecycle'))) as never,
  };
  const serial = new Map<FunctionName, Promise<unknown>>();
  /** Invokes `f` (one at a time per function, as reserved concurrency 1 would for the periodic ones). */
  const invoke = (f: FunctionName, event: unknown): Promise<unknown> => {
    const run = async () => {
      if (stopped.has(f)) {
        invocations.push({ function: f, at: Date.now(), ok: false, error: `${f} is stopped` });
        throw new Error(`${f} is stopped`);
      }
      const deadline = Date.now() + deployment.functions[f].timeoutSeconds * 1000;
      const context = { awsRequestId: randomUUID(), functionName: deployment.functions[f].logicalId, getRemainingTimeInMillis: () => deadline - Date.now() };
      try {
        let handler = containers.get(f);
        if (!handler) {
          handler = factories[f]();
          containers.set(f, handler);
        }
        const result = await handler(event, context);
        invocations.push({ function: f, at: Date.now(), ok: true, result });
        return result;
      } catch (e) {
        invocations.push({ function: f, at: Date.now(), ok: false, error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) });
        throw e;
      }
    };
    // queue-driven functions may run concurrently in Lambda; here each function runs its invocations in order
    const next = (serial.get(f) ?? Promise.resolve()).catch(() => undefined).then(run);
    serial.set(f, next.catch(() => undefined));
    return next;
  };

  // Webhook: the Function URL
  const webhookServer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(Object.entries(req.headers).map(([h, v]) => [h, Array.isArray(v) ? v.join(',') : String(v)]));
      const url = new URL(req.url ?? '/', 'http://localhost');
      const now = new Date();
      const event: APIGatewayProxyEventV2 = {
        version: '2.0',
        routeKey: '$default',
        rawPath: url.pathname,
        rawQueryString: url.search.slice(1),
        headers,
        requestContext: {
          accountId: 'anonymous',
          apiId: 'e2elocal',
          domainName: `e2elocal.lambda-url.${region}.on.aws`,
          domainPrefix: 'e2elocal',
          http: { method: req.method ?? 'GET', path: url.pathname, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: headers['user-agent'] ?? '' },
          requestId: randomUUID(),
          routeKey: '$default',
          stage: '$default',
          time: now.toUTCString(),
          timeEpoch: now.getTime(),
        },
        ...(body !== '' ? { body } : {}),
        isBase64Encoded: false,
      };
      if (deployment.webhookUrlAuthType !== 'NONE') {
        // A Function URL with AWS_IAM auth refuses a request without a SigV4 signature before the function runs.
        res.writeHead(403, { 'content-type': 'application/json' });
        res.end('{"Message":"Forbidden"}');
        return;
      }
      invoke('Webhook', event).then(
        (r) => {
          const result = r as { statusCode: number; headers?: Record<string, string>; body?: string };
          res.writeHead(result.statusCode, result.headers ?? {});
          res.end(result.body ?? '');
        },
        // Lambda answers a failed invocation 502 through the Function URL
        () => {
          res.writeHead(502, { 'content-type': 'application/json' });
          res.end('{"Message":"Internal Server Error"}');
        },
      );
    });
  });
  const webhookUrl = `http://127.0.0.1:${await listen(webhookServer)}/`;
  closers.push(() => closeServer(webhookServer));

  // The schedules' first tick, before any pod event: the lifecycle pass stores the first price snapshot (a real
  // deployment gets it within a minute), so the first launches already see spot offerings.
  const first = deployment.schedules.find((s) => s.function === 'Lifecycle' && s.input === undefined);
  if (first) await invoke('Lifecycle', { version: '0', id: randomUUID(), 'detail-type': 'Scheduled Event', source: 'aws.events', account, time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'), region, resources: [`arn:aws:events:${region}:${account}:rule/${first.rule}`], detail: {} });

  // Relay: the program as the Deployment runs it
  const relayLogs: string[] = [];
  const saDir = join(dir, 'pod');
  const saPath = join(saDir, 'var/run/secrets/kubernetes.io/serviceaccount');
  mkdirSync(saPath, { recursive: true });
  writeFileSync(join(saPath, 'token'), relayToken);
  writeFileSync(join(saPath, 'ca.crt'), tls.cert);
  writeFileSync(join(saPath, 'namespace'), 'skiff-system');
  const secretFile = join(dir, 'webhook-secret');
  writeFileSync(secretFile, `${deployment.secretValue}\n`);
  const apiPort = new URL(api.url).port;
  const healthServer = createServer();
  const healthPort = await listen(healthServer);
  await closeServer(healthServer);
  let relay: ChildProcess | undefined;
  const startRelay = () => {
    const manifest = relayManifestEnv();
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? dir,
      ...manifest,
      WEBHOOK_URL: webhookUrl,
      SKIFF_CLUSTER: clusterName,
      SKIFF_WEBHOOK_SECRET_FILE: secretFile,
      HEALTH_PORT: String(healthPort),
      KUBERNETES_SERVICE_HOST: '127.0.0.1',
      KUBERNETES_SERVICE_PORT: apiPort,
      SKIFF_SERVICE_ACCOUNT_PATH_PREFIX: saDir,
    };
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'functions/relay/main.ts')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    relay = child;
    // running: it printed `relay running` (its informers listed and watch); failed: it exited first
    return new Promise<void>((resolve, reject) => {
      const collect = (b: Buffer) => {
        const lines = b.toString('utf8').split('\n').filter((l) => l !== '');
        relayLogs.push(...lines);
        if (lines.some((l) => l.includes('"relay running"'))) resolve();
      };
      child.stdout!.on('data', collect);
      child.stderr!.on('data', collect);
      child.once('exit', (code) => reject(new Error(`relay exited with ${code}: ${relayLogs.slice(-5).join('\n')}`)));
    });
  };
  const stopRelay = async (signal: NodeJS.Signals = 'SIGTERM') => {
    const child = relay;
    relay = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    await exited;
  };
  await startRelay();
  closers.push(() => stopRelay('SIGKILL'));

  // SQS event sources
  const sqs = new SQSClient({ region, endpoint: sqsEndpoint, credentials: { accessKeyId: 'lambda-service', secretAccessKey: 'lambda-service' } });
  let polling = true;
  const held = new Set<FunctionName>();
  const record = (m: Message, queueArn: string) => ({
    messageId: m.MessageId!,
    receiptHandle: m.ReceiptHandle!,
    body: m.Body ?? '',
    attributes: m.Attributes as never,
    messageAttributes: {},
    md5OfBody: m.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: region,
  });
  const pollers = deployment.eventSources.map(async (es) => {
    while (polling) {
      if (held.has(es.function)) {
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      let messages: Message[] = [];
      try {
        ({ Messages: messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: es.queueUrl, MaxNumberOfMessages: es.batchSize, WaitTimeSeconds: 1, AttributeNames: ['All'], MessageSystemAttributeNames: ['All'] })));
      } catch {
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      if (messages.length === 0 || !polling) continue;
      if (held.has(es.function)) {
        // Held while this receive was in flight (a loaded machine can stretch it past any wait): put them back.
        await sqs.send(new ChangeMessageVisibilityBatchCommand({ QueueUrl: es.queueUrl, Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle!, VisibilityTimeout: 0 })) })).catch(() => undefined);
        continue;
      }
      const event: SQSEvent = { Records: messages.map((m) => record(m, es.queueArn)) };
      let failed: Set<string>;
      try {
        const response = (await invoke(es.function, event)) as { batchItemFailures?: { itemIdentifier: string }[] } | undefined;
        failed = new Set(es.reportBatchItemFailures ? (response?.batchItemFailures ?? []).map((f) => f.itemIdentifier) : []);
      } catch {
        failed = new Set(messages.map((m) => m.MessageId!)); // a failed invocation acknowledges nothing
      }
      const last = invocations.findLast((i) => i.function === es.function);
      if (last) (last as { records?: Invocation['records'] }).records = messages.map((m) => ({ body: m.Body ?? '', acknowledged: !failed.has(m.MessageId!) }));
      const done = messages.filter((m) => !failed.has(m.MessageId!));
      const retry = messages.filter((m) => failed.has(m.MessageId!));
      if (done.length > 0) await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: es.queueUrl, Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })) })).catch(() => undefined);
      if (retry.length > 0) {
        await sqs.send(new ChangeMessageVisibilityBatchCommand({ QueueUrl: es.queueUrl, Entries: retry.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle!, VisibilityTimeout: options.retryAfterSeconds ?? 1 })) })).catch(() => undefined);
      }
    }
  });
  closers.push(async () => {
    polling = false;
    await Promise.allSettled(pollers);
  });

  // Schedules
  const timers = deployment.schedules.map((s) =>
    setInterval(
      () => {
        const event = s.input !== undefined ? JSON.parse(s.input) : { version: '0', id: randomUUID(), 'detail-type': 'Scheduled Event', source: 'aws.events', account, time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'), region, resources: [`arn:aws:events:${region}:${account}:rule/${s.rule}`], detail: {} };
        invoke(s.function, event).catch(() => undefined);
      },
      (s.rateSeconds / 60) * secondsPerMinute * 1000,
    ),
  );
  closers.push(() => timers.forEach(clearInterval));

  return {
    api,
    aws,
    fakes,
    deployment,
    template,
    sqs,
    dynamoEndpoint,
    webhookUrl,
    invocations,
    logs,
    relayLogs,
    hold: (f) => void held.add(f),
    release: (f) => void held.delete(f),
    writeRelaySecret: (value) => writeFileSync(secretFile, `${value}\n`),
    restart: async (component) => {
      if (component === 'relay') {
        await stopRelay('SIGKILL');
        return startRelay();
      }
      containers.delete(component);
    },
    stop: async (component) => {
      if (component === 'relay') return stopRelay('SIGKILL');
      stopped.add(component);
      containers.delete(component);
    },
    resume: async (component) => {
      if (component === 'relay') {
        if (!relay) await startRelay();
        return;
      }
      stopped.delete(component);
    },
    close: async () => {
      for (const close of closers.reverse()) await close();
      sqs.destroy();
      await Promise.allSettled([...serial.values()]);
      process.env = savedEnv;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
