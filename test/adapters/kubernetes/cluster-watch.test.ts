// ClusterWatch against the fake kube-apiserver's watch streams (chunked JSON lines, BOOKMARK, 410 Gone).
import { afterEach, describe, expect, it } from 'vitest';
import { ClusterWatch, UNBOUND_POD_SELECTOR, isUnschedulable, restartBackoffMs, type ClusterWatchOptions, type Timers } from '../../../shared/adapters/kubernetes/cluster-watch.js';
import type { PodEvent } from '../../../shared/core/api/pod-event.js';
import { eventually, startFakeKubeApiServer, type FakeKubeApiServer, type Json } from '../../support/fake-kube-apiserver.js';

const CLUSTER = 'prod';
let api: FakeKubeApiServer | undefined;
let watch: ClusterWatch | undefined;

afterEach(async () => {
  await watch?.stop();
  await api?.close();
  watch = api = undefined;
});

/** A wire Pod as kube-scheduler leaves it: Pending, with the PodScheduled condition when given. */
export function wirePod(name: string, scheduled?: { status: 'True' | 'False'; reason?: string }, extra: { nodeName?: string; phase?: string } = {}): Json {
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: { containers: [{ name: 'app', image: 'nginx' }], ...(extra.nodeName ? { nodeName: extra.nodeName } : {}) },
    status: {
      phase: extra.phase ?? 'Pending',
      ...(scheduled ? { conditions: [{ type: 'PodScheduled', status: scheduled.status, ...(scheduled.reason ? { reason: scheduled.reason } : {}), message: '0/3 nodes are available: 3 Insufficient cpu.' }] } : {}),
    },
  };
}

/** A wire Node with its Ready condition. */
export function wireNode(name: string, ready: boolean, heartbeat = '2026-03-02T08:00:00Z'): Json {
  return { metadata: { name, uid: `uid-${name}` }, spec: {}, status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastHeartbeatTime: heartbeat }] } };
}

const UNSCHEDULABLE = { status: 'False', reason: 'Unschedulable' } as const;

/** Starts the fake and the watch; waits for both watch streams unless `setup` breaks them (`awaitWatches: false`). */
async function start(setup?: (api: FakeKubeApiServer) => void, overrides: Partial<ClusterWatchOptions> = {}, awaitWatches = true): Promise<{ api: FakeKubeApiServer; watch: ClusterWatch; events: PodEvent[]; warnings: string[] }> {
  api = await startFakeKubeApiServer();
  setup?.(api);
  const events: PodEvent[] = [];
  const warnings: string[] = [];
  watch = new ClusterWatch({
    connection: { kind: 'server', server: api.url, token: 'k8s-aws-v1.relay', allowInsecureHttp: true },
    cluster: CLUSTER,
    clock: { now: () => Date.now() },
    log: { info() {}, warn: (message, attributes) => warnings.push(`${message} ${JSON.stringify(attributes)}`) },
    restartDelayMs: 1,
    maxRestartDelayMs: 5,
    resyncIntervalMs: 0,
    ...overrides,
  });
  watch.onEvent((e) => events.push(e));
  await watch.start();
  const a = api;
  if (awaitWatches) await eventually(() => expect(a.watchers('pods') + a.watchers('nodes')).toBe(2));
  return { api: a, watch, events, warnings };
}

/**
 * Timers fired by the test on a virtual clock: a restart happens only when the test fires it, so counts over a
 * virtual time window do not depend on how fast the machine is.
 */
function manualTimers(): { timers: Timers; clock: { now(): number }; delays: number[]; pending(): number; nextAtMs(): number; fireNext(): void } {
  let nowMs = 0;
  const pending: { atMs: number; callback: () => void }[] = [];
  const delays: number[] = [];
  const next = () => pending.reduce((a, b) => (b.atMs < a.atMs ? b : a));
  return {
    timers: {
      setTimeout: (callback, ms) => {
        delays.push(ms);
        const timer = { atMs: nowMs + ms, callback };
        pending.push(timer);
        return timer;
      },
      clearTimeout: (handle) => {
        const i = pending.indexOf(handle as (typeof pending)[number]);
        if (i >= 0) pending.splice(i, 1);
      },
    },
    clock: { now: () => nowMs },
    delays,
    pending: () => pending.length,
    nextAtMs: () => next().atMs,
    fireNext: () => {
      const timer = next();
      pending.splice(pending.indexOf(timer), 1);
      nowMs = timer.atMs;
      timer.callback();
    },
  };
}

const podNames = (events: readonly PodEvent[]) => events.filter((e) => e.kind === 'pod').map((e) => e.name);
const nodeEvents = (events: readonly PodEvent[]) => events.flatMap((e) => (e.kind === 'node' ? [`${e.name}:${e.event}`] : []));
const watchRequests = (api: FakeKubeApiServer, path: string) => api.requestsTo('GET', path).filter((r) => r.query.get('watch') === 'true');
const listRequests = (api: FakeKubeApiServer, path: string) => api.requestsTo('GET', path).filter((r) => r.query.get('watch') === null);

describe('ClusterWatch', () => {
  describe('pods', () => {
    it('reports the pods kube-scheduler marked Unschedulable, and only those, from the first list', async () => {
      const { events, api } = await start((a) => {
        a.put('pods', wirePod('pending', UNSCHEDULABLE));
        a.put('pods', wirePod('not-yet-tried'));
        a.put('pods', wirePod('gated', { status: 'False', reason: 'SchedulingGated' }));
        a.put('pods', wirePod('running', { status: 'True' }, { nodeName: 'n1', phase: 'Running' }));
      });
      expect(podNames(events)).toEqual(['pending']);
      const rv = (api.get('pods', 'default/pending')!.metadata as Json).resourceVersion;
      expect(events[0]).toEqual({ kind: 'pod', cluster: CLUSTER, namespace: 'default', name: 'pending', uid: 'uid-pending', resourceVersion: rv });
      expect(listRequests(api, '/api/v1/pods')[0]!.query.get('fieldSelector')).toBe(UNBOUND_POD_SELECTOR);
    });

    it('reports a pod when the scheduler marks it Unschedulable on the watch, with the new resourceVersion', async () => {
      const { events, api } = await start((a) => a.put('pods', wirePod('web-1')));
      expect(events).toEqual([]);
      api.put('pods', wirePod('web-1', UNSCHEDULABLE));
      await eventually(() => expect(podNames(events)).toEqual(['web-1']));
      expect(events[0]!.resourceVersion).toBe((api.get('pods', 'default/web-1')!.metadata as Json).resourceVersion);
    });

    it('stops reporting a pod once it is bound (it leaves the field selector)', async () => {
      const { events, api } = await start((a) => a.put('pods', wirePod('web-1', UNSCHEDULABLE)));
      api.put('pods', wirePod('web-1', { status: 'True' }, { nodeName: 'n1' }));
      api.put('pods', wirePod('web-2', UNSCHEDULABLE));
      await eventually(() => expect(podNames(events)).toEqual(['web-1', 'web-2']));
      expect(await watch!.resync()).toBe(1); // only web-2 is still unschedulable
      expect(podNames(events)).toEqual(['web-1', 'web-2', 'web-2']);
    });

    it('resyncs from a fresh list, so a pod whose watch event was missed is reported within one resync', async () => {
      const timers = manualTimers();
      const { events, api } = await start(undefined, { resyncIntervalMs: 6 * 60_000, timers: timers.timers, clock: timers.clock });
      api.putUnwatched('pods', wirePod('missed', UNSCHEDULABLE));
      api.put('pods', wirePod('seen', UNSCHEDULABLE));
      await eventually(() => expect(podNames(events)).toEqual(['seen']));
      const lists = listRequests(api, '/api/v1/pods').length;
      expect(timers.nextAtMs()).toBe(6 * 60_000);
      timers.fireNext();
      await eventually(() => expect(podNames(events).sort()).toEqual(['missed', 'seen', 'seen']));
      expect(listRequests(api, '/api/v1/pods').length).toBe(lists + 1);
      // the re-reported event carries the pod's current resourceVersion (a new FIFO deduplication id upstream)
      expect(events.find((e) => e.name === 'missed')!.resourceVersion).toBe((api.get('pods', 'default/missed')!.metadata as Json).resourceVersion);
      // and the timer is armed again
      await eventually(() => expect(timers.nextAtMs()).toBe(12 * 60_000));
    });

    it('re-reports from the cache when the resync list fails', async () => {
      const { events, api, warnings } = await start((a) => a.put('pods', wirePod('web-1', UNSCHEDULABLE)));
      await eventually(() => expect(podNames(events)).toEqual(['web-1']));
      api.failNext({ method: 'GET', path: '/api/v1/pods', status: 500, reason: 'InternalError', match: (r) => r.query.get('watch') === null });
      expect(await watch!.resync()).toBe(1);
      expect(podNames(events)).toEqual(['web-1', 'web-1']);
      expect(warnings.join('\n')).toMatch(/resync list failed/);
    });
  });

  describe('nodes', () => {
    it('reports registration, readiness changes and deletion, but not heartbeats', async () => {
      const { events, api } = await start((a) => a.put('nodes', wireNode('old', true)));
      api.put('nodes', wireNode('new', false));
      api.put('nodes', wireNode('new', true));
      api.put('nodes', wireNode('new', true, '2026-03-02T08:00:40Z'));
      api.put('nodes', wireNode('old', false));
      api.remove('nodes', 'new');
      await eventually(() => expect(nodeEvents(events)).toEqual(['old:ready', 'new:registered', 'new:ready', 'old:notReady', 'new:deleted']));
      const deleted = events.at(-1)!;
      expect(Number(deleted.resourceVersion)).toBeGreaterThan(Number(events.at(-2)!.resourceVersion));
    });

    it('reports a deletion a finalizer holds (deletionTimestamp set) once, then the deletion itself', async () => {
      const { events, api } = await start((a) => a.put('nodes', wireNode('n1', true)));
      const deleting = (heartbeat: string) => {
        const wire = wireNode('n1', true, heartbeat);
        return { ...wire, metadata: { ...(wire.metadata as Json), deletionTimestamp: '2026-03-02T08:01:00Z', finalizers: ['karpenter.sh/termination'] } };
      };
      api.put('nodes', deleting('2026-03-02T08:01:00Z'));
      api.put('nodes', deleting('2026-03-02T08:01:40Z'));
      api.remove('nodes', 'n1');
      await eventually(() => expect(nodeEvents(events)).toEqual(['n1:ready', 'n1:deleting', 'n1:deleted']));
    });
  });

  describe('watch restarts', () => {
    it('re-watches from the last resourceVersion when the server ends the stream, without relisting, and misses nothing', async () => {
      const { events, api } = await start((a) => a.put('pods', wirePod('web-1', UNSCHEDULABLE)));
      const seen = api.resourceVersion();
      api.endWatches('pods');
      api.put('pods', wirePod('web-2', UNSCHEDULABLE)); // while no watch is open
      await eventually(() => expect(podNames(events)).toEqual(['web-1', 'web-2']));
      expect(listRequests(api, '/api/v1/pods')).toHaveLength(1);
      expect(watchRequests(api, '/api/v1/pods').map((r) => r.query.get('resourceVersion'))).toEqual([seen, seen]);
      expect(watch!.status().find((s) => s.resource === 'pods')).toMatchObject({ synced: true, healthy: true, lists: 1, restarts: 0 });
    });

    it('resumes from a BOOKMARK’s resourceVersion', async () => {
      const { api } = await start();
      api.put('nodes', wireNode('n1', true));
      api.put('nodes', wireNode('n2', true));
      const listed = watchRequests(api, '/api/v1/pods')[0]!.query.get('resourceVersion');
      api.bookmark('pods'); // the pod stream saw no event since the list; the bookmark moves it past the node writes
      const bookmarked = api.resourceVersion();
      api.endWatches('pods');
      await eventually(() => expect(watchRequests(api, '/api/v1/pods')).toHaveLength(2));
      expect(watchRequests(api, '/api/v1/pods')[1]!.query.get('resourceVersion')).toBe(bookmarked);
      expect(bookmarked).not.toBe(listed);
    });

    it('relists after a 410 Expired ERROR event and reports what changed meanwhile', async () => {
      const { events, api } = await start((a) => a.put('pods', wirePod('web-1', UNSCHEDULABLE)));
      api.endWatches('pods');
      api.put('pods', wirePod('web-2', UNSCHEDULABLE));
      api.compact();
      api.endWatches('pods');
      await eventually(() => expect(podNames(events)).toEqual(['web-1', 'web-2']));
      await eventually(() => expect(listRequests(api, '/api/v1/pods')).toHaveLength(2));
      // the relist's watch resumes from the list's resourceVersion, which the server still serves: no second 410
      await eventually(() => expect(api.watchers('pods')).toBe(1));
      expect(watchRequests(api, '/api/v1/pods').at(-1)!.query.get('resourceVersion')).toBe(api.resourceVersion());
      expect(listRequests(api, '/api/v1/pods')).toHaveLength(2);
      expect(watch!.status().find((s) => s.resource === 'pods')).toMatchObject({ lists: 2, healthy: true, restarts: 0 });
    });

    it('resumes watching after a relist when the server compacted before the list', async () => {
      const { events, api } = await start();
      api.compact();
      api.failNext({ method: 'GET', path: '/api/v1/pods', status: 410, reason: 'Gone', match: (r) => r.query.get('watch') === 'true' });
      api.endWatches('pods');
      await eventually(() => expect(listRequests(api, '/api/v1/pods')).toHaveLength(2));
      await eventually(() => expect(api.watchers('pods')).toBe(1));
      api.put('pods', wirePod('web-1', UNSCHEDULABLE));
      await eventually(() => expect(podNames(events)).toEqual(['web-1']));
      expect(listRequests(api, '/api/v1/pods')).toHaveLength(2);
    });

    it('relists after a watch answered with HTTP 410 Gone', async () => {
      const { events, api } = await start();
      api.failNext({ method: 'GET', path: '/api/v1/nodes', status: 410, reason: 'Gone', match: (r) => r.query.get('watch') === 'true' });
      api.endWatches('nodes');
      api.put('nodes', wireNode('n1', false));
      await eventually(() => expect(listRequests(api, '/api/v1/nodes')).toHaveLength(2));
      await eventually(() => expect(nodeEvents(events)).toEqual(['n1:registered']));
    });

    it('restarts an informer after a failure with backoff and reports it unhealthy meanwhile', async () => {
      const { events, api, warnings } = await start();
      api.failNext({ method: 'GET', path: '/api/v1/pods', status: 500, reason: 'InternalError', match: (r) => r.query.get('watch') === 'true', times: 2 });
      api.endWatches('pods');
      api.put('pods', wirePod('web-1', UNSCHEDULABLE));
      await eventually(() => expect(podNames(events)).toEqual(['web-1']));
      await eventually(() => expect(watch!.status().find((s) => s.resource === 'pods')).toMatchObject({ healthy: true, restarts: 2 }));
      expect(warnings[0]).toMatch(/watch failed; restarting .*"resource":"pods".*500/);
    });
  });

  describe('restart backoff', () => {
    // random = 0: the shortest delays the jitter allows, the worst case for request rate
    const BASE_MS = 1000;
    const CAP_MS = 30_000;
    const WINDOW_MS = 120_000;
    /** Shortest delays: half of 1, 2, 4, 8, 16 s, then half the 30 s cap. */
    const SHORTEST = [500, 1000, 2000, 4000, 8000, 15_000, 15_000, 15_000, 15_000, 15_000, 15_000, 15_000];
    /** Restarts that fit in the window: the delays' running sums up to 120 s (500, 1500, …, 105 500). */
    const RESTARTS_IN_WINDOW = 11;

    const faults: Record<string, { fault?: (api: FakeKubeApiServer) => void; endStreams?: boolean; lists: number; watches: number }> = {
      'answers 410 Gone to every watch': {
        fault: (a) => a.failNext({ method: 'GET', path: '/api/v1/pods', status: 410, reason: 'Gone', match: (r) => r.query.get('watch') === 'true', times: Infinity }),
        lists: 1 + RESTARTS_IN_WINDOW,
        watches: 1 + RESTARTS_IN_WINDOW,
      },
      'answers 500 to every watch': {
        fault: (a) => a.failNext({ method: 'GET', path: '/api/v1/pods', status: 500, reason: 'InternalError', match: (r) => r.query.get('watch') === 'true', times: Infinity }),
        lists: 1,
        watches: 1 + RESTARTS_IN_WINDOW,
      },
      'ends every watch stream at once': { endStreams: true, lists: 1, watches: 1 + RESTARTS_IN_WINDOW },
    };

    it.each(Object.entries(faults))('bounds the requests over a time window when the server %s', async (_, { fault, endStreams, lists, watches }) => {
      const t = manualTimers();
      const { api } = await start(fault, { timers: t.timers, clock: t.clock, random: () => 0, restartDelayMs: BASE_MS, maxRestartDelayMs: CAP_MS }, false);
      for (;;) {
        // wait for the pod informer's attempt to end and its restart to be scheduled (the node watch stays open)
        await eventually(() => {
          if (endStreams && api.watchers('pods') > 0) api.endWatches('pods');
          expect(t.pending()).toBe(1);
        });
        if (t.nextAtMs() > WINDOW_MS) break;
        t.fireNext();
      }
      expect(t.delays).toEqual(SHORTEST);
      expect(listRequests(api, '/api/v1/pods')).toHaveLength(lists);
      expect(watchRequests(api, '/api/v1/pods')).toHaveLength(watches);
    });

    it('resets the backoff once a watch makes progress', async () => {
      const t = manualTimers();
      const { api, events } = await start(undefined, { timers: t.timers, clock: t.clock, random: () => 0, restartDelayMs: BASE_MS, maxRestartDelayMs: CAP_MS });
      api.failNext({ method: 'GET', path: '/api/v1/pods', status: 500, reason: 'InternalError', match: (r) => r.query.get('watch') === 'true', times: 3 });
      api.endWatches('pods');
      for (let i = 0; i < 4; i++) {
        await eventually(() => expect(t.pending()).toBe(1));
        t.fireNext();
      }
      await eventually(() => expect(api.watchers('pods')).toBe(1));
      api.put('pods', wirePod('web-1', UNSCHEDULABLE));
      await eventually(() => expect(podNames(events)).toEqual(['web-1']));
      api.endWatches('pods');
      await eventually(() => expect(t.pending()).toBe(1));
      expect(t.delays).toEqual([500, 1000, 2000, 4000, 500]);
    });

    it('restartBackoffMs doubles per attempt up to the cap, between half a step and a step', () => {
      expect([1, 2, 3, 4, 5, 6, 7, 40].map((n) => restartBackoffMs(n, BASE_MS, CAP_MS, 0))).toEqual([500, 1000, 2000, 4000, 8000, 15_000, 15_000, 15_000]);
      expect([1, 2, 6, 40].map((n) => restartBackoffMs(n, BASE_MS, CAP_MS, 0.999_999))).toEqual([1000, 2000, 30_000, 30_000]);
      expect(restartBackoffMs(3, BASE_MS, CAP_MS, 0.5)).toBe(3000);
      expect(restartBackoffMs(1, 1, 1, 0)).toBe(1); // never 0, even with a 1 ms step
    });

    it('rejects a restart delay under 1 ms or a cap under it', async () => {
      const connection = { kind: 'server', server: 'http://127.0.0.1:1', token: 'k8s-aws-v1.x', allowInsecureHttp: true } as const;
      const base = { connection, cluster: CLUSTER, clock: { now: () => 0 }, log: { info() {}, warn() {} } };
      expect(() => new ClusterWatch({ ...base, restartDelayMs: 0 })).toThrow(RangeError);
      expect(() => new ClusterWatch({ ...base, restartDelayMs: 100, maxRestartDelayMs: 50 })).toThrow(RangeError);
    });
  });

  describe('isUnschedulable', () => {
    it('is true only for a pending, unbound, live pod with PodScheduled=False reason Unschedulable', () => {
      const base = wirePod('p', UNSCHEDULABLE) as never;
      expect(isUnschedulable(base)).toBe(true);
      expect(isUnschedulable(wirePod('p', { status: 'False', reason: 'SchedulingGated' }) as never)).toBe(false);
      expect(isUnschedulable(wirePod('p', { status: 'True', reason: 'Unschedulable' }) as never)).toBe(false);
      expect(isUnschedulable(wirePod('p', UNSCHEDULABLE, { nodeName: 'n1' }) as never)).toBe(false);
      expect(isUnschedulable(wirePod('p', UNSCHEDULABLE, { phase: 'Failed' }) as never)).toBe(false);
      expect(isUnschedulable({ ...(base as Json), metadata: { name: 'p', deletionTimestamp: '2026-03-02T08:00:00Z' } } as never)).toBe(false);
    });
  });
});
