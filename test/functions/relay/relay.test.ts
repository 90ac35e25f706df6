// The in-cluster relay: its batch window, its poster (against the real webhook handler behind a local HTTP server,
// so every request's signature is really verified), and the whole program against the fake kube-apiserver's watch
// streams, with its probes and graceful shutdown.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { EventBatcher } from '../../../functions/relay/batcher.js';
import { messageGroupId } from '../../../shared/core/api/pod-event.js';
import { relayConfigFromEnv, RelayConfigError } from '../../../functions/relay/config.js';
import { startHealthServer, type HealthServer } from '../../../functions/relay/health-server.js';
import { secretReader } from '../../../functions/relay/main.js';
import { batchBodies, WebhookPoster } from '../../../functions/relay/poster.js';
import { Relay } from '../../../functions/relay/relay.js';
import { nodeTimers, type Timers } from '../../../functions/relay/timers.js';
import { createHandler } from '../../../functions/webhook/handler.js';
import { ClusterWatch } from '../../../shared/adapters/kubernetes/cluster-watch.js';
import type { PodEvent } from '../../../shared/core/api/pod-event.js';
import { MAX_WEBHOOK_BATCH_EVENTS, MAX_WEBHOOK_BODY_BYTES } from '../../../shared/core/api/webhook-batch.js';
import { silentLog, type Log } from '../../../shared/lambda/log.js';
import type { WebhookQueueMessage } from '../../../shared/lambda/webhook-request.js';
import { eventually, startFakeKubeApiServer, type FakeKubeApiServer, type Json } from '../../support/fake-kube-apiserver.js';

const CLUSTER = 'prod';
const SECRET = 'relay-shared-secret';

const pod = (name: string, resourceVersion = '1'): PodEvent => ({ kind: 'pod', cluster: CLUSTER, namespace: 'default', name, uid: `uid-${name}`, resourceVersion });

/** Timers that run only when the test advances the clock. */
class ManualTimers implements Timers {
  now = 0;
  #next = 0;
  readonly #due = new Map<number, { at: number; callback: () => void }>();
  setTimeout(callback: () => void, ms: number): unknown {
    const id = ++this.#next;
    this.#due.set(id, { at: this.now + ms, callback });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.#due.delete(handle as number);
  }
  /** Moves the clock forward, running what falls due, in order. */
  advance(ms: number): void {
    const until = this.now + ms;
    for (;;) {
      const next = [...this.#due.entries()].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
      if (!next) break;
      this.#due.delete(next[0]);
      this.now = next[1].at;
      next[1].callback();
    }
    this.now = until;
  }
}

/** Timers that fire at once (on the next turn), recording every requested delay. */
function instantTimers(delays: number[]): Timers {
  return {
    setTimeout: (callback, ms) => {
      delays.push(ms);
      return setImmediate(callback);
    },
    clearTimeout: (handle) => clearImmediate(handle as NodeJS.Immediate),
  };
}

/** The real webhook handler behind a local HTTP server; `answer` can override the response of a request. */
interface LocalWebhook {
  readonly url: string;
  readonly enqueued: WebhookQueueMessage[];
  readonly statuses: number[];
  /** Statuses to answer instead of the handler's, one per request, first in first out. */
  readonly forced: number[];
  /** A proxy's body limit in front of the handler: larger bodies get 413. @default none */
  maxBodyBytes: number;
  secret: string;
  close(): Promise<void>;
}

async function startWebhook(): Promise<LocalWebhook> {
  const hook = { enqueued: [] as WebhookQueueMessage[], statuses: [] as number[], forced: [] as number[], maxBodyBytes: Number.POSITIVE_INFINITY, secret: SECRET };
  const handle = createHandler({
    cluster: CLUSTER,
    secret: async () => hook.secret,
    enqueue: async (messages) => void hook.enqueued.push(...messages),
    clock: { now: () => Date.now() },
    log: silentLog,
  });
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const forced = hook.forced.shift() ?? (Buffer.concat(chunks).length > hook.maxBodyBytes ? 413 : undefined);
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : (v ?? '')]));
      const event = { headers, body: Buffer.concat(chunks).toString('utf8'), isBase64Encoded: false, requestContext: { http: { method: req.method ?? 'GET' } } } as unknown as APIGatewayProxyEventV2;
      const response = forced !== undefined ? { statusCode: forced, body: 'forced' } : await handle(event);
      hook.statuses.push(response.statusCode ?? 200);
      res.writeHead(response.statusCode ?? 200, { 'content-type': 'text/plain' }).end(response.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(hook, {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  });
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function webhook(): Promise<LocalWebhook> {
  const hook = await startWebhook();
  cleanups.push(() => hook.close());
  return hook;
}

function poster(hook: LocalWebhook, delays: number[] = [], log: Log = silentLog): WebhookPoster {
  return new WebhookPoster({ url: hook.url, cluster: CLUSTER, secret: async () => SECRET, log, timers: instantTimers(delays), now: () => Date.now(), random: () => 0.5 });
}

const names = (messages: readonly WebhookQueueMessage[]) => messages.map((m) => (JSON.parse(m.body) as PodEvent).name);

describe('relay', () => {
  describe('EventBatcher', () => {
    function batcher(timers: ManualTimers) {
      const flushed: string[][] = [];
      const b = new EventBatcher<PodEvent>({ idleMs: 1000, maxMs: 10_000, key: (e) => e.uid, flush: (events) => flushed.push(events.map((e) => `${e.name}@${e.resourceVersion}`)), timers, now: () => timers.now });
      return { b, flushed };
    }

    it('closes the window after 1 s without an event', () => {
      const timers = new ManualTimers();
      const { b, flushed } = batcher(timers);
      b.add(pod('a'));
      timers.advance(999);
      expect(flushed).toEqual([]);
      b.add(pod('b'));
      timers.advance(999);
      expect(flushed).toEqual([]);
      timers.advance(1);
      expect(flushed).toEqual([['a@1', 'b@1']]);
    });

    it('closes a busy window 10 s after it opened', () => {
      const timers = new ManualTimers();
      const { b, flushed } = batcher(timers);
      for (let i = 0; i < 40; i++) {
        b.add(pod(`p${i}`));
        timers.advance(500);
      }
      expect(flushed.map((f) => f.length)).toEqual([20, 20]);
    });

    it('keeps one event per object, the latest', () => {
      const timers = new ManualTimers();
      const { b, flushed } = batcher(timers);
      b.add(pod('a', '1'));
      b.add(pod('b', '1'));
      b.add(pod('a', '2'));
      expect(b.size).toBe(2);
      timers.advance(1000);
      expect(flushed).toEqual([['b@1', 'a@2']]);
    });

    it('refuses an idle duration longer than the maximum', () => {
      expect(() => new EventBatcher({ idleMs: 20_000, maxMs: 10_000, key: () => '', flush: () => {}, timers: new ManualTimers(), now: () => 0 })).toThrow(/0 < idle/);
    });
  });

  describe('batchBodies', () => {
    it('splits at 500 events and keeps every body under 256 KiB, in order', () => {
      const many = Array.from({ length: 1201 }, (_, i) => pod(`p${i}`));
      expect(batchBodies(CLUSTER, many).map((b) => (JSON.parse(b) as { events: unknown[] }).events.length)).toEqual([MAX_WEBHOOK_BATCH_EVENTS, MAX_WEBHOOK_BATCH_EVENTS, 201]);
      const long = Array.from({ length: 900 }, (_, i) => pod(`${'x'.repeat(240)}-${i}`));
      const bodies = batchBodies(CLUSTER, long);
      expect(bodies.length).toBeGreaterThan(2);
      for (const b of bodies) expect(Buffer.byteLength(b)).toBeLessThanOrEqual(MAX_WEBHOOK_BODY_BYTES);
      expect(bodies.flatMap((b) => (JSON.parse(b) as { events: PodEvent[] }).events.map((e) => e.name))).toEqual(long.map((e) => e.name));
    });
  });

  describe('WebhookPoster', () => {
    it('posts a signed batch the webhook accepts', async () => {
      const hook = await webhook();
      const outcome = await poster(hook).post([pod('a'), pod('b')]);
      expect(outcome).toEqual({ delivered: 2, rejected: 0, abandoned: 0, requests: 1, refused: {}, splits: 0 });
      expect(names(hook.enqueued)).toEqual(['a', 'b']);
    });

    it('retries 5xx, 429 and 401 with growing backoff until the webhook accepts', async () => {
      const hook = await webhook();
      hook.forced.push(503, 429, 500);
      hook.secret = 'rotating';
      const delays: number[] = [];
      const p = poster(hook, delays);
      const posting = p.post([pod('a')]);
      // Retries run at once here (instant timers): by the time the check sees the first 401 more may have followed.
      await eventually(() => expect(hook.statuses.slice(0, 4)).toEqual([503, 429, 500, 401]));
      hook.secret = SECRET; // the rotation reached the webhook
      expect(await posting).toMatchObject({ delivered: 1, requests: expect.any(Number) });
      expect(new Set(hook.statuses.slice(3, -1))).toEqual(new Set([401])); // 401s until the rotation, then accepted
      expect(delays.slice(0, 4)).toEqual([250, 500, 1000, 2000]); // 0.5 × 500 ms × 2^(n−1)
      expect(names(hook.enqueued)).toEqual(['a']);
    });

    it('retries when the webhook cannot be reached', async () => {
      const hook = await webhook();
      const delays: number[] = [];
      let calls = 0;
      const flaky: typeof fetch = async (input, init) => {
        if (++calls <= 2) throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED') });
        return fetch(input, init);
      };
      const p = new WebhookPoster({ url: hook.url, cluster: CLUSTER, secret: async () => SECRET, log: silentLog, timers: instantTimers(delays), now: () => Date.now(), fetch: flaky, random: () => 0.5 });
      expect(await p.post([pod('a')])).toEqual({ delivered: 1, rejected: 0, abandoned: 0, requests: 3, refused: {}, splits: 0 });
      expect(delays).toHaveLength(2);
    });

    it('drops a batch the webhook refuses for good (400) and logs it', async () => {
      const hook = await webhook();
      const errors: string[] = [];
      const log: Log = { ...silentLog, error: (m, a) => errors.push(`${m} ${JSON.stringify(a)}`) };
      const wrongCluster = { ...pod('a'), cluster: 'staging' };
      const outcome = await poster(hook, [], log).post([wrongCluster]);
      expect(outcome).toEqual({ delivered: 0, rejected: 1, abandoned: 0, requests: 1, refused: { 400: 1 }, splits: 0 });
      expect(errors[0]).toMatch(/webhook refused a batch; dropping it .*400/);
      expect(poster(hook).lastRequestSucceeded).toBe(true);
    });

    it('splits a batch answered 413 until the halves pass, and drops only a single event still too large', async () => {
      const hook = await webhook();
      const one = Buffer.byteLength(JSON.stringify({ cluster: CLUSTER, events: [pod('a0')] }));
      hook.maxBodyBytes = one * 3; // about three events a request
      const events = Array.from({ length: 10 }, (_, i) => pod(`a${i}`));
      const outcome = await poster(hook).post(events);
      expect(outcome).toMatchObject({ delivered: 10, rejected: 0, refused: {} });
      expect(outcome.splits).toBeGreaterThanOrEqual(3);
      expect(names(hook.enqueued)).toEqual(events.map((e) => e.name)); // in order
      expect(hook.statuses.filter((s) => s === 413)).toHaveLength(outcome.splits);

      hook.maxBodyBytes = 10;
      expect(await poster(hook).post([pod('b')])).toMatchObject({ delivered: 0, rejected: 1, refused: { 413: 1 }, splits: 0 });
    });

    it('stops retrying when the signal aborts and counts the events as abandoned', async () => {
      const hook = await webhook();
      hook.forced.push(...Array.from({ length: 1000 }, () => 503));
      const abort = new AbortController();
      const p = poster(hook);
      const posting = p.post([pod('a'), pod('b')], abort.signal);
      await eventually(() => expect(hook.statuses.length).toBeGreaterThanOrEqual(3));
      abort.abort();
      expect(await posting).toMatchObject({ delivered: 0, abandoned: 2 });
      expect(p.lastRequestSucceeded).toBe(false);
    });
  });

  describe('the relay program', () => {
    async function cluster(setup?: (api: FakeKubeApiServer) => void) {
      const api = await startFakeKubeApiServer();
      cleanups.push(() => api.close());
      setup?.(api);
      return api;
    }

    function wirePod(name: string): Json {
      return {
        metadata: { name, namespace: 'default', uid: `uid-${name}` },
        spec: { containers: [{ name: 'app', image: 'nginx' }] },
        status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available' }] },
      };
    }

    async function relay(api: FakeKubeApiServer, hook: LocalWebhook, options: { batchIdleMs?: number; batchMaxMs?: number; resyncIntervalMs?: number } = {}) {
      const source = new ClusterWatch({ connection: { kind: 'server', server: api.url, token: 'k8s-aws-v1.relay', allowInsecureHttp: true }, cluster: CLUSTER, clock: { now: () => Date.now() }, log: silentLog, resyncIntervalMs: options.resyncIntervalMs ?? 0, restartDelayMs: 1, maxRestartDelayMs: 5 });
      const sink = new WebhookPoster({ url: hook.url, cluster: CLUSTER, secret: async () => SECRET, log: silentLog, timers: nodeTimers, now: () => Date.now(), baseDelayMs: 1, maxDelayMs: 5 });
      const r = new Relay({ source, sink, log: silentLog, timers: nodeTimers, now: () => Date.now(), batchIdleMs: options.batchIdleMs ?? 10, batchMaxMs: options.batchMaxMs ?? 100 });
      const health = await startHealthServer(() => r.health(), 0, '127.0.0.1');
      cleanups.push(async () => {
        await r.stop();
        await health.close();
      });
      return { r, health };
    }

    const probe = async (health: HealthServer, path: string) => {
      const response = await fetch(`${health.url}${path}`);
      return { status: response.status, body: (await response.json()) as { problems: string[] } };
    };

    it('relays unschedulable pods and node changes from the watch streams to the webhook, which enqueues them', async () => {
      const api = await cluster((a) => a.put('pods', wirePod('web-1')));
      const hook = await webhook();
      await relay(api, hook).then(({ r }) => r.start());
      await eventually(() => expect(names(hook.enqueued)).toEqual(['web-1']));
      api.put('pods', wirePod('web-2'));
      api.put('nodes', { metadata: { name: 'ip-10-0-1-2.ec2.internal', uid: 'n-1' }, status: { conditions: [{ type: 'Ready', status: 'False' }] } });
      // pods and nodes are separate streams: their events may share a batch in either order
      await eventually(() => expect(names(hook.enqueued).sort()).toEqual(['ip-10-0-1-2.ec2.internal', 'web-1', 'web-2']));
      expect(hook.enqueued.find((m) => m.deduplicationId === `n-1:${(api.get('nodes', 'ip-10-0-1-2.ec2.internal')!.metadata as Json).resourceVersion}`)).toBeDefined();
      // Each object's events go to one of the cluster's message groups, by uid (`messageGroupId`).
      expect(hook.enqueued.every((m) => m.groupId === messageGroupId(CLUSTER, JSON.parse(m.body) as { uid: string }))).toBe(true);
      expect(hook.statuses.every((s) => s === 202)).toBe(true);
    });

    it('keeps relaying across a watch timeout and a 410 relist', async () => {
      const api = await cluster();
      const hook = await webhook();
      await relay(api, hook).then(({ r }) => r.start());
      await eventually(() => expect(api.watchers('pods')).toBe(1));
      api.endWatches();
      api.put('pods', wirePod('web-1'));
      await eventually(() => expect(names(hook.enqueued)).toEqual(['web-1']));
      api.compact();
      api.endWatches();
      api.put('pods', wirePod('web-2'));
      await eventually(() => expect(names(hook.enqueued)).toEqual(['web-1', 'web-2']));
    });

    it('recovers a batch the webhook refused, and a watch event it missed, within one resync period', async () => {
      const api = await cluster((a) => a.put('pods', wirePod('web-1')));
      const hook = await webhook();
      hook.forced.push(400); // the first batch (web-1) is refused for good and dropped
      const { r, health } = await relay(api, hook, { resyncIntervalMs: 300 });
      await r.start();
      // the totals are added once the post returns, a moment after the webhook answered
      await eventually(() => expect(r.totals).toMatchObject({ rejected: 1, refused: { 400: 1 } }));
      expect(hook.statuses[0]).toBe(400);
      api.putUnwatched('pods', wirePod('web-2')); // a watch event the relay never gets
      // the next resync lists both from the API server and delivers them
      await eventually(() => expect(new Set(names(hook.enqueued))).toEqual(new Set(['web-1', 'web-2'])));
      expect((await probe(health, '/readyz')).body).toMatchObject({ totals: { refused: { 400: 1 } } });
    });

    it('is ready once both informers listed, and not live after a watch failed for too long', async () => {
      const api = await cluster();
      const hook = await webhook();
      const { r, health } = await relay(api, hook);
      expect((await probe(health, '/readyz')).status).toBe(503);
      await r.start();
      await eventually(async () => expect((await probe(health, '/readyz')).status).toBe(200));
      expect((await probe(health, '/healthz')).status).toBe(200);
      expect((await fetch(`${health.url}/metrics`)).status).toBe(404);
      const unhealthy = new Relay({
        source: { onEvent() {}, start: async () => {}, stop: async () => {}, status: () => [{ resource: 'pods', synced: true, healthy: false, unhealthySinceMs: 0, lastError: '403 Forbidden' }] },
        sink: { post: async () => ({ delivered: 0, rejected: 0, abandoned: 0, requests: 0, refused: {}, splits: 0 }), lastRequestSucceeded: true },
        log: silentLog,
        timers: nodeTimers,
        now: () => 300_001,
      });
      expect(unhealthy.health()).toMatchObject({ live: false, ready: false });
      expect(unhealthy.health().problems).toContain('pods: watch failing for 300 s: 403 Forbidden');
    });

    it('delivers the open batch window on shutdown and reports not ready while stopping', async () => {
      const api = await cluster();
      const hook = await webhook();
      const { r, health } = await relay(api, hook, { batchIdleMs: 60_000, batchMaxMs: 600_000 });
      await r.start();
      await eventually(() => expect(api.watchers('pods')).toBe(1));
      api.put('pods', wirePod('web-1'));
      await eventually(() => expect(r.health().pending).toBe(1));
      expect(hook.enqueued).toEqual([]); // the window stays open for a minute
      const stopping = r.stop();
      expect((await probe(health, '/readyz')).body.problems).toContain('relay is stopping');
      await stopping;
      expect(names(hook.enqueued)).toEqual(['web-1']);
      expect(r.totals).toMatchObject({ events: 1, delivered: 1, abandoned: 0 });
    });
  });

  describe('configuration', () => {
    it('reads the environment with Karpenter-style batch durations', () => {
      expect(relayConfigFromEnv({ WEBHOOK_URL: 'https://abc.lambda-url.eu-west-1.on.aws/', SKIFF_CLUSTER: 'prod', BATCH_IDLE_DURATION: '500ms' })).toEqual({
        webhookUrl: 'https://abc.lambda-url.eu-west-1.on.aws/',
        cluster: 'prod',
        secret: { file: '/var/run/secrets/skiff/webhook-secret' },
        healthPort: 8080,
        batchIdleMs: 500,
        batchMaxMs: 10_000,
        logLevel: 'info',
        serviceAccountPathPrefix: '',
      });
    });

    it('names every bad variable at once', () => {
      const error = (() => {
        try {
          relayConfigFromEnv({ WEBHOOK_URL: 'http://example.com/hook', SKIFF_CLUSTER: 'not a name', HEALTH_PORT: '99999', BATCH_MAX_DURATION: 'soon' });
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(RelayConfigError);
      expect((error as RelayConfigError).problems).toEqual([
        'WEBHOOK_URL: must be https:// (plain http only to localhost), got http:',
        'SKIFF_CLUSTER: "not a name" is not an EKS cluster name (1–100 letters, digits, - and _)',
        'HEALTH_PORT: must be a port number (1–65535), got "99999"',
        expect.stringMatching(/^BATCH_MAX_DURATION: /),
      ]);
      expect(() => relayConfigFromEnv({})).toThrow(/WEBHOOK_URL: required[\s\S]*SKIFF_CLUSTER: required/);
    });

    it('reads the secret from the environment or from the mounted file without its trailing newline', async () => {
      expect(await secretReader({ value: 'abc' })()).toBe('abc');
      const { mkdtemp, writeFile } = await import('node:fs/promises');
      const { join } = await import('node:path');
      const { tmpdir } = await import('node:os');
      const dir = await mkdtemp(join(tmpdir(), 'relay-'));
      await writeFile(join(dir, 'secret'), 'from-file\n');
      expect(await secretReader({ file: join(dir, 'secret') })()).toBe('from-file');
      await writeFile(join(dir, 'empty'), '');
      await expect(secretReader({ file: join(dir, 'empty') })()).rejects.toThrow(/is empty/);
    });
  });

  describe('manifests (infra/k8s)', () => {
    const docs = (file: string) => parseAllDocuments(readFileSync(new URL(`../../../infra/k8s/${file}`, import.meta.url), 'utf8')).map((d) => d.toJS() as Json);
    const rulesOf = (doc: Json) => (doc.rules as { apiGroups: string[]; resources: string[]; verbs: string[] }[]).flatMap((r) => r.apiGroups.flatMap((g) => r.resources.map((res) => `${g || 'core'}/${res}: ${[...r.verbs].sort().join(',')}`)));

    it('gives the relay read access to pods and nodes only, and probes the paths its health server serves', () => {
      const relay = docs('relay.yaml');
      expect(relay.map((d) => d.kind)).toEqual(['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Deployment']);
      expect(rulesOf(relay[2]!)).toEqual(['core/pods: list,watch', 'core/nodes: list,watch']);
      const container = ((((relay[4]!.spec as Json).template as Json).spec as Json).containers as Json[])[0]!;
      expect([(container.livenessProbe as { httpGet: Json }).httpGet.path, (container.readinessProbe as { httpGet: Json }).httpGet.path]).toEqual(['/healthz', '/readyz']);
      const env = Object.fromEntries((container.env as { name: string; value: string }[]).map((e) => [e.name, e.value]));
      expect(() => relayConfigFromEnv({ ...env, WEBHOOK_URL: 'https://abc.lambda-url.eu-west-1.on.aws/', SKIFF_CLUSTER: 'prod' })).not.toThrow();
      expect(env.SKIFF_WEBHOOK_SECRET_FILE).toBe('/var/run/secrets/skiff/webhook-secret');
    });

    it('gives the Lambdas exactly the access their controllers use', () => {
      const [role, binding] = docs('lambda-rbac.yaml');
      expect(rulesOf(role!)).toEqual([
        'core/pods: delete,get,list,watch',
        'core/nodes: delete,get,list,patch,watch',
        'core/pods/eviction: create',
        'core/events: create,get,patch',
        'policy/poddisruptionbudgets: get,list,watch',
        'apps/daemonsets: get,list,watch',
        'karpenter.sh/nodepools: get,list,watch',
        'karpenter.k8s.aws/ec2nodeclasses: get,list,watch',
        'karpenter.sh/nodeclaims: create,delete,get,list,patch,watch',
        'karpenter.sh/nodeclaims/status: get,patch',
      ]);
      expect(binding).toMatchObject({ kind: 'ClusterRoleBinding', roleRef: { name: 'skiff-controllers' }, subjects: [{ kind: 'Group', name: 'skiff:controllers' }] });
    });
  });
});
