// ClusterWatch against the fake kube-apiserver's watch streams (chunked JSON lines, BOOKMARK, 410 Gone).
import { afterEach, describe, expect, it } from 'vitest';
import { ClusterWatch, UNBOUND_POD_SELECTOR, isUnschedulable } from '../../../shared/adapters/kubernetes/cluster-watch.js';
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

async function start(setup?: (api: FakeKubeApiServer) => void): Promise<{ api: FakeKubeApiServer; watch: ClusterWatch; events: PodEvent[]; warnings: string[] }> {
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
  });
  watch.onEvent((e) => events.push(e));
  await watch.start();
  const a = api;
  await eventually(() => expect(a.watchers('pods') + a.watchers('nodes')).toBe(2));
  return { api: a, watch, events, warnings };
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
      expect(watch!.resync()).toBe(1); // only web-2 is still unschedulable in the cache
      expect(podNames(events)).toEqual(['web-1', 'web-2', 'web-2']);
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
      expect(watch!.status().find((s) => s.resource === 'pods')).toMatchObject({ lists: 2, healthy: true, restarts: 0 });
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
