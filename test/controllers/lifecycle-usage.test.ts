// The lifecycle pass's optional usage report (observeUsage): per managed node, its allocatable and the requests of the
// pods bound to it (DaemonSet pods apart), and every pod's phase — what the lifecycle Lambda turns into metrics.
import { describe, expect, it } from 'vitest';
import { reconcileLifecycle, type LifecycleDeps } from '../../shared/controllers/lifecycle.js';
import type { CloudProvider } from '../../shared/ports/cloud-provider.js';
import type { Cluster, ClusterNode, ClusterPod } from '../../shared/ports/cluster.js';
import type { NodeClaimStore } from '../../shared/ports/nodeclaim-store.js';

const NOW = Date.parse('2026-03-02T08:00:00Z');

const node = (name: string, labels: Record<string, string>): ClusterNode => ({
  name,
  providerId: `aws:///us-west-2a/i-${name}`,
  labels,
  annotations: {},
  taints: [],
  allocatable: { cpu: 1930, memory: 7134, pods: 29 },
  ready: true,
  createdAt: NOW - 60_000,
});

const pod = (name: string, nodeName: string | undefined, cpu: string, owner: string | null = 'ReplicaSet/web-1'): ClusterPod => ({
  namespace: 'default',
  name,
  uid: `uid-${name}`,
  resourceVersion: '1',
  labels: {},
  annotations: {},
  spec: { containers: [{ name: 'c', resources: { requests: { cpu, memory: '256Mi' } } }] },
  ...(nodeName ? { nodeName } : {}),
  phase: nodeName ? 'Running' : 'Pending',
  unschedulable: !nodeName,
  owner,
  createdAt: NOW - 30_000,
});

/** Ports with nothing to reconcile: no NodeClaims, the given nodes and pods, each node's instance running (untagged). */
function deps(nodes: ClusterNode[], pods: ClusterPod[], observeUsage?: boolean): LifecycleDeps & { podLists: () => number } {
  let podLists = 0;
  const cluster = {
    listNodes: async () => nodes,
    listPods: async () => (podLists++, pods),
    listNodePools: async () => [],
    deleteNode: async () => undefined,
  } as unknown as Cluster<never, unknown, unknown>;
  return {
    cluster,
    cloud: { list: async () => nodes.map((n) => ({ instanceId: `i-${n.name}`, state: 'running', tags: {}, zone: 'us-west-2a', launchedAt: NOW - 120_000 })) } as unknown as CloudProvider,
    store: { list: async () => [] } as unknown as NodeClaimStore,
    clock: { now: () => NOW },
    ...(observeUsage !== undefined ? { observeUsage } : {}),
    podLists: () => podLists,
  };
}

describe('reconcileLifecycle', () => {
  describe('with observeUsage', () => {
    it('reports each managed node’s allocatable, pod and DaemonSet requests, labels, and every pod’s phase', async () => {
      const nodes = [node('a', { 'karpenter.sh/nodepool': 'general', 'karpenter.sh/capacity-type': 'spot', 'topology.kubernetes.io/zone': 'us-west-2a' }), node('unmanaged', {})];
      const pods = [pod('web-1', 'a', '500m'), pod('web-2', 'a', '250m'), pod('fluent-bit', 'a', '100m', 'DaemonSet/fluent-bit'), pod('pending', undefined, '1')];
      const report = await reconcileLifecycle(deps(nodes, pods, true));
      expect(report.usage?.observedAt).toBe(NOW);
      expect(report.usage?.nodes).toEqual([
        {
          node: 'a',
          nodePool: 'general',
          capacityType: 'spot',
          zone: 'us-west-2a',
          allocatable: { cpu: 1930, memory: 7134, pods: 29 },
          podRequests: { cpu: 750, memory: 512, pods: 2 },
          daemonRequests: { cpu: 100, memory: 256, pods: 1 },
        },
      ]);
      expect(report.usage?.pods.map((p) => [p.uid, p.phase])).toEqual([
        ['uid-web-1', 'Running'],
        ['uid-web-2', 'Running'],
        ['uid-fluent-bit', 'Running'],
        ['uid-pending', 'Pending'],
      ]);
    });
  });

  describe('without observeUsage', () => {
    it('lists no pods and reports no usage', async () => {
      const d = deps([node('a', { 'karpenter.sh/nodepool': 'general' })], [pod('web-1', 'a', '500m')]);
      const report = await reconcileLifecycle(d);
      expect(report.usage).toBeUndefined();
      expect(d.podLists()).toBe(0);
    });
  });
});
