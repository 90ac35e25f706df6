// The lifecycle controller's NodeClaim mirroring through the real Kubernetes adapter, against the fake kube-apiserver,
// with NodeClaim records in the in-memory store (the DynamoDB adapter's semantics, test/support/nodeclaim-store-contract.ts).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KubernetesCluster, NODECLAIM_VERSION_ANNOTATION } from '../../shared/adapters/kubernetes/kubernetes-cluster.js';
import { reconcileLifecycle, type LifecycleDeps } from '../../shared/controllers/lifecycle.js';
import type { NodeClaim } from '../../shared/core/api/nodeclaim.js';
import { loadCatalog } from '../../shared/core/instancetypes/catalog.js';
import { MemoryNodeClaimStore } from '../../shared/sim/memory-nodeclaim-store.js';
import { SimulatedEc2 } from '../../shared/sim/simulated-ec2.js';
import { VirtualClock } from '../../shared/sim/virtual-clock.js';
import { startFakeKubeApiServer, type FakeKubeApiServer, type Json } from '../support/fake-kube-apiserver.js';

const TOKEN = 'k8s-aws-v1.dGVzdA';
const START = Date.parse('2026-03-02T08:00:00Z');
const iso = new Date(START).toISOString();

let api: FakeKubeApiServer;
let store: MemoryNodeClaimStore;
let deps: LifecycleDeps;

beforeEach(async () => {
  api = await startFakeKubeApiServer();
  const clock = new VirtualClock(START);
  store = new MemoryNodeClaimStore({ cluster: 'mirror' });
  const cluster = new KubernetesCluster({ server: api.url, token: async () => TOKEN, clock, allowInsecureHttp: true, log: { warn: () => undefined } });
  const cloud = new SimulatedEc2(clock, { region: 'us-west-2', catalog: loadCatalog(), vmMemoryOverheadPercent: 0.075, clusterName: 'mirror', onRegister: () => undefined });
  deps = { cluster, cloud, store, clock };
});
afterEach(async () => {
  await api.close();
});

function record(name: string, extra: Partial<NodeClaim> = {}): Omit<NodeClaim, 'version'> {
  return { name, nodePool: 'general', nodeClass: 'default', state: 'Pending', requirements: [], instanceTypes: ['m5.large'], resources: { cpu: 500 }, labels: {}, taints: [], startupTaints: [], nominatedPods: [], createdAt: iso, ...extra };
}

const conditions = (name: string): string[] =>
  ((api.get('nodeclaims', name)?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).map((c) => `${c.type}=${c.status}`);
const annotations = (name: string): Record<string, string> => ((api.get('nodeclaims', name)?.metadata as Json).annotations ?? {}) as Record<string, string>;
const mirrorWrites = () => api.requests.filter((r) => r.path.startsWith('/apis/karpenter.sh/v1/nodeclaims/') && r.method !== 'GET');

describe('reconcileLifecycle with the Kubernetes adapter', () => {
  it('mirrors every live NodeClaim as a karpenter.sh/v1 NodeClaim with its conditions, and none that is over', async () => {
    await store.create(record('general-p'));
    await store.create(record('general-l', { state: 'Launched', instanceId: 'i-0abc', providerId: 'aws:///us-west-2a/i-0abc', instanceType: 'm5.large', zone: 'us-west-2a', capacityType: 'spot', launchedAt: iso }));
    await store.create(record('general-d', { state: 'Deleted', deletedAt: iso }));
    await store.create(record('general-f', { state: 'Failed', launchError: 'InsufficientInstanceCapacity' }));

    const report = await reconcileLifecycle(deps);

    expect([...report.mirrored].sort()).toEqual(['general-l', 'general-p']);
    expect(report.mirrorFailures).toEqual([]);
    expect([...api.objects['nodeclaims']!.keys()].sort()).toEqual(['general-l', 'general-p']);
    expect(conditions('general-p')).toEqual(['Launched=Unknown', 'Registered=Unknown', 'Initialized=Unknown', 'Ready=Unknown']);
    expect(conditions('general-l')).toEqual(['Launched=True', 'Registered=Unknown', 'Initialized=Unknown', 'Ready=Unknown']);
    expect(annotations('general-l')).toEqual({ 'skiff.dev/nodeclaim-state': 'Launched', [NODECLAIM_VERSION_ANNOTATION]: '1' });
    expect((api.get('nodeclaims', 'general-l')!.metadata as Json).labels).toMatchObject({ 'node.kubernetes.io/instance-type': 'm5.large', 'karpenter.sh/capacity-type': 'spot' });
  });

  it('writes nothing in a pass where no record changed, and rewrites only the changed one', async () => {
    await store.create(record('general-a'));
    const b = await store.create(record('general-b'));
    await reconcileLifecycle(deps);
    const before = mirrorWrites().length;

    expect((await reconcileLifecycle(deps)).mirrored).toEqual([]);
    expect(mirrorWrites()).toHaveLength(before);

    await store.update({ ...b, state: 'Launched', launchedAt: iso, instanceType: 'm5.large' });
    expect((await reconcileLifecycle(deps)).mirrored).toEqual(['general-b']);
    expect(annotations('general-b')[NODECLAIM_VERSION_ANNOTATION]).toBe('2');
  });

  it("deletes Skiff's mirrors of NodeClaims that are over or gone, and never another controller's NodeClaim", async () => {
    const a = await store.create(record('general-a'));
    await reconcileLifecycle(deps);
    api.put('nodeclaims', { metadata: { name: 'general-gone', annotations: { 'skiff.dev/nodeclaim-state': 'Launched' } }, spec: {} });
    api.put('nodeclaims', { metadata: { name: 'default-karpenter', labels: { 'karpenter.sh/nodepool': 'default' } }, spec: {} });
    await store.update({ ...a, state: 'Deleted', deletedAt: iso });

    const report = await reconcileLifecycle(deps);

    expect([...report.mirrorsDeleted].sort()).toEqual(['general-a', 'general-gone']);
    expect([...api.objects['nodeclaims']!.keys()]).toEqual(['default-karpenter']);
  });

  it('does not fail the pass when the API server refuses a mirror, and completes the mirror in the next pass', async () => {
    await store.create(record('general-a'));
    await store.create(record('general-b'));
    api.failNext({ method: 'PATCH', path: '/apis/karpenter.sh/v1/nodeclaims/general-a/status', status: 503, reason: 'ServiceUnavailable' });

    const report = await reconcileLifecycle(deps);

    expect(report.mirrored).toEqual(['general-b']);
    expect(report.mirrorFailures).toEqual([{ operation: 'apply', name: 'general-a', error: expect.stringContaining('general-a') }]);
    // The object was created but its status and version stamp were not written: it reads as out of date.
    expect(annotations('general-a')[NODECLAIM_VERSION_ANNOTATION]).toBeUndefined();
    const next = await reconcileLifecycle(deps);
    expect(next).toMatchObject({ mirrored: ['general-a'], mirrorFailures: [] });
    expect(conditions('general-a')).toContain('Ready=Unknown');
  });

  it('reports a cluster without the NodeClaim CRD as one list failure and goes on', async () => {
    await store.create(record('general-a'));
    api.failNext({ method: 'GET', path: '/apis/karpenter.sh/v1/nodeclaims', status: 404, reason: 'NotFound' });
    const report = await reconcileLifecycle(deps);
    expect(report.mirrorFailures).toEqual([{ operation: 'list', error: expect.any(String) }]);
    expect(report.mirrored).toEqual([]);
  });
});
