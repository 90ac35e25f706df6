import { describe, expect, it } from 'vitest';
import { parseManifests } from '../../shared/core/api/manifest.js';
import { isNotFoundError } from '../../shared/core/errors.js';
import { seededIds } from '../../shared/ports/ids.js';
import { NOT_READY_TOLERATION_MS, SimulatedCluster, type SimNode, type SimNodeEvent } from '../../shared/sim/simulated-cluster.js';
import type { SimInstance } from '../../shared/sim/simulated-ec2.js';
import { VirtualClock } from '../../shared/sim/virtual-clock.js';

const START = Date.parse('2026-03-02T08:00:00Z');

function instance(id: string, over: Partial<SimInstance> = {}): SimInstance {
  return {
    instanceId: id,
    instanceType: 'm5.xlarge',
    zone: 'us-west-2a',
    capacityType: 'on-demand',
    state: 'running',
    tags: {},
    launchedAt: START,
    nodeClaim: '',
    price: 0.192,
    labels: { 'kubernetes.io/arch': 'amd64', 'kubernetes.io/os': 'linux' },
    taints: [],
    startupTaints: [],
    allocatable: { cpu: 3920, memory: 14000, pods: 58 },
    ...over,
  };
}

const web = (replicas: number) => `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: nginx, resources: {requests: {cpu: 100m}}}]
`;

const pdb = (minAvailable: number | string) => `
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  minAvailable: ${JSON.stringify(minAvailable)}
  selector: {matchLabels: {app: web}}
`;

async function setup(yaml: string, options: { unregisteredTaint?: boolean } = {}) {
  const clock = new VirtualClock(START);
  const cluster = new SimulatedCluster(clock, { region: 'us-west-2', ids: seededIds(1), registerWithUnregisteredTaint: options.unregisteredTaint ?? false });
  const events: [string, SimNodeEvent][] = [];
  cluster.hooks = { onNodeEvent: (n, e) => void events.push([n.name, e]) };
  const node = cluster.registerNode(instance('i-1'), { ready: true, name: 'n1' });
  for (const m of parseManifests(yaml, 'test.yaml')) cluster.apply(m);
  await clock.runUntil(clock.now());
  return { clock, cluster, node, events };
}

describe('SimulatedCluster', () => {
  it('gives every replica its own name when generated suffixes collide (the controller retries, as against the API server)', async () => {
    const clock = new VirtualClock(START);
    // Each suffix comes up twice in a row: without a retry the second pod would replace the first.
    const suffixes = ['bbbbb', 'bbbbb', 'ccccc', 'ccccc', 'ddddd', 'ddddd', 'fffff'];
    let i = 0;
    const cluster = new SimulatedCluster(clock, { region: 'us-west-2', ids: () => suffixes[i++ % suffixes.length]!, registerWithUnregisteredTaint: false });
    for (const m of parseManifests(web(3), 'test.yaml')) cluster.apply(m);
    await clock.runUntil(clock.now());
    const names = [...cluster.pods.values()].map((p) => p.name);
    expect(names).toHaveLength(3);
    expect(new Set(names).size).toBe(3);
  });

  describe('lastPodEventTimes and forceDeletePod', () => {
    it('stamps a node at each bind and each deletion of a non-DaemonSet pod; forceDeletePod deletes whatever the PDB says', async () => {
      const { clock, cluster } = await setup(`${web(2)}\n---\n${pdb(2)}`);
      expect(await cluster.lastPodEventTimes()).toEqual({ byNode: new Map([['n1', START]]), complete: true });
      await clock.runUntil(START + 90_000);
      const [victim] = [...cluster.pods.values()];
      expect(await cluster.evictPod('default', victim!.name)).toBe('blocked');
      expect((await cluster.lastPodEventTimes()).byNode.get('n1')).toBe(START);
      expect(await cluster.forceDeletePod('default', victim!.name, 30)).toBe('deleted');
      expect(cluster.pods.has(`default/${victim!.name}`)).toBe(false);
      expect((await cluster.lastPodEventTimes()).byNode.get('n1')).toBe(START + 90_000);
      expect(await cluster.forceDeletePod('default', victim!.name, 30)).toBe('gone');
    });
  });

  describe('evictPod', () => {
    it('evicts when the PDB allows a disruption; the controller replaces the pod under a new name', async () => {
      const { cluster } = await setup(`${web(3)}\n---\n${pdb(2)}`);
      const [victim] = [...cluster.pods.values()];
      expect(await cluster.evictPod('default', victim!.name)).toBe('evicted');
      expect(victim!.evictions).toBe(1);
      expect(cluster.pods.has(`default/${victim!.name}`)).toBe(false);
      expect(cluster.pods.size).toBe(3);
    });

    it('answers blocked (429) when the PDB allows no disruption', async () => {
      const { cluster } = await setup(`${web(2)}\n---\n${pdb(2)}`);
      const [victim] = [...cluster.pods.values()];
      expect(await cluster.evictPod('default', victim!.name)).toBe('blocked');
      expect(cluster.pods.has(`default/${victim!.name}`)).toBe(true);
    });

    it('counts only healthy pods, and rounds a percentage up', async () => {
      const { cluster } = await setup(`${web(3)}\n---\n${pdb('50%')}`);
      const pods = [...cluster.pods.values()];
      expect(await cluster.evictPod('default', pods[0]!.name)).toBe('evicted');
      // Now 3 selected pods, 2 healthy (the replacement is still pending): ceil(50% × 3) = 2 must stay → 0 allowed.
      expect(await cluster.evictPod('default', pods[1]!.name)).toBe('blocked');
    });

    it('answers gone (404) for a pod that does not exist', async () => {
      const { cluster } = await setup(web(1));
      expect(await cluster.evictPod('default', 'nope')).toBe('gone');
    });

    it('recreates an evicted bare pod under the same name', async () => {
      const { cluster } = await setup(`
apiVersion: v1
kind: Pod
metadata: {name: solo, labels: {app: solo}}
spec:
  containers: [{name: app, image: nginx}]
`);
      const before = cluster.pods.get('default/solo')!;
      expect(await cluster.evictPod('default', 'solo')).toBe('evicted');
      const after = cluster.pods.get('default/solo')!;
      expect(after).not.toBe(before);
      expect(after.labels).toEqual({ app: 'solo' });
    });

    it('lists PodDisruptionBudgets', async () => {
      const { cluster } = await setup(pdb(1));
      expect((await cluster.listPodDisruptionBudgets()).map((p) => p.metadata.name)).toEqual(['web']);
    });
  });

  describe('patchNode', () => {
    it('merges labels, deletes null ones, and replaces taints when given', async () => {
      const { cluster, node } = await setup('');
      await cluster.patchNode('n1', { labels: { a: '1', 'kubernetes.io/os': null } });
      expect(node.labels).toMatchObject({ a: '1' });
      expect(node.labels['kubernetes.io/os']).toBeUndefined();
      await cluster.patchNode('n1', { taints: [{ key: 'k', effect: 'NoSchedule' }] });
      expect(node.taints).toEqual([{ key: 'k', effect: 'NoSchedule' }]);
      await cluster.patchNode('n1', { labels: { b: '2' } });
      expect(node.taints).toEqual([{ key: 'k', effect: 'NoSchedule' }]);
    });

    it('throws NotFoundError for a missing Node', async () => {
      const { cluster } = await setup('');
      await expect(cluster.patchNode('nope', { labels: {} })).rejects.toSatisfy(isNotFoundError);
    });

    it('lets pods schedule once the unregistered taint is removed', async () => {
      const { cluster, clock } = await setup('', { unregisteredTaint: true });
      const fresh: SimNode = cluster.registerNode(instance('i-2'), { name: 'n2' });
      cluster.delete('Node', '', 'n1');
      for (const m of parseManifests(web(1), 'web.yaml')) cluster.apply(m);
      await clock.runUntil(clock.now() + 15_000);
      expect([...cluster.pods.values()][0]!.nodeName).toBeUndefined();
      await cluster.patchNode('n2', { taints: fresh.taints.filter((t) => t.key !== 'karpenter.sh/unregistered') });
      await clock.runUntil(clock.now());
      expect([...cluster.pods.values()][0]!.nodeName).toBe('n2');
    });
  });

  describe('deleteNode', () => {
    it('deletes the Node and its pods, and a second delete is not an error', async () => {
      const { cluster, events } = await setup(web(2));
      await cluster.deleteNode('n1');
      await cluster.deleteNode('n1');
      expect(cluster.nodes.size).toBe(0);
      expect([...cluster.pods.values()].every((p) => !p.nodeName)).toBe(true);
      expect(events.filter(([, e]) => e === 'deleted')).toEqual([['n1', 'deleted']]);
    });

    it('only sets the deletionTimestamp of a Node with finalizers (its pods keep running), and deletes it once they are removed', async () => {
      const { cluster, clock, node, events } = await setup(web(2));
      node.finalizers = ['karpenter.sh/termination'];
      await cluster.deleteNode('n1');
      await cluster.deleteNode('n1');
      expect(cluster.nodes.get('n1')?.deletionTimestamp).toBe(clock.now());
      expect([...cluster.pods.values()].filter((p) => p.nodeName === 'n1')).toHaveLength(2);
      expect(events.filter(([, e]) => e === 'deleting' || e === 'deleted')).toEqual([['n1', 'deleting']]);
      await cluster.patchNode('n1', { finalizers: [] });
      expect(cluster.nodes.size).toBe(0);
      expect(events.filter(([, e]) => e === 'deleting' || e === 'deleted')).toEqual([['n1', 'deleting'], ['n1', 'deleted']]);
    });
  });

  describe('setNodeReady', () => {
    it('taints a NotReady node and evicts its pods after the 300 s toleration, DaemonSet-style tolerations excepted', async () => {
      const { cluster, clock, node } = await setup(web(2));
      cluster.setNodeReady(node, false);
      expect(node.taints.map((t) => `${t.key}:${t.effect}`)).toEqual(['node.kubernetes.io/not-ready:NoSchedule', 'node.kubernetes.io/not-ready:NoExecute']);
      await clock.runUntil(clock.now() + NOT_READY_TOLERATION_MS - 1);
      expect([...cluster.pods.values()].every((p) => p.nodeName === 'n1')).toBe(true);
      await clock.runUntil(clock.now() + 1);
      expect(cluster.podHistory.filter((p) => p.evictions === 1)).toHaveLength(2);
    });

    it('removes the taints when Ready again, and evicts nothing', async () => {
      const { cluster, clock, node, events } = await setup(web(2));
      cluster.setNodeReady(node, false);
      await clock.runUntil(clock.now() + 60_000);
      cluster.setNodeReady(node, true);
      await clock.runUntil(clock.now() + NOT_READY_TOLERATION_MS);
      expect(node.taints).toEqual([]);
      expect(cluster.podHistory.every((p) => p.evictions === 0)).toBe(true);
      expect(events.map(([, e]) => e)).toEqual(['registered', 'notReady', 'ready']);
    });
  });

  describe("kube-scheduler's PodScheduled condition (handleSchedulingFailure → updatePod)", () => {
    const big = (replicas: number) => `
apiVersion: apps/v1
kind: Deployment
metadata: {name: big}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: big}}
  template:
    metadata: {labels: {app: big}}
    spec:
      containers: [{name: app, image: nginx, resources: {requests: {cpu: "3"}}}]
`;
    /** One Ready node (3,920m) and two 3-cpu replicas: one binds, the other is unschedulable. */
    async function oneLeftOver() {
      const clock = new VirtualClock(START);
      const cluster = new SimulatedCluster(clock, { region: 'us-west-2', ids: seededIds(1) });
      const reports: { pod: string; resourceVersion: string; at: number }[] = [];
      cluster.hooks = { onUnschedulable: (p) => void reports.push({ pod: p.name, resourceVersion: p.resourceVersion, at: clock.now() }) };
      cluster.registerNode(instance('i-1'), { ready: true, name: 'n1' });
      for (const m of parseManifests(big(2), 'big.yaml')) cluster.apply(m);
      await clock.runUntil(clock.now());
      const pending = [...cluster.pods.values()].find((p) => !p.nodeName)!;
      return { clock, cluster, reports, pending };
    }

    it('writes the reason as kube-scheduler does: the node count and, per reason, how many nodes it rejected', async () => {
      const { clock, cluster, pending } = await oneLeftOver();
      expect(pending.schedulingMessage).toBe('0/1 nodes are available: 1 Insufficient cpu.');
      cluster.registerNode(instance('i-2'), { name: 'n2' });
      await clock.runUntil(clock.now());
      expect(pending.schedulingMessage).toBe('0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }.');
    });

    it('patches the pod again (a new resourceVersion the relay reports) as soon as a retry fails for other reasons, not 5 minutes later', async () => {
      const { clock, cluster, reports, pending } = await oneLeftOver();
      expect(reports).toHaveLength(1);
      // A node joins that is too small for the pod: kube-scheduler retries it (Node add), fails, and the message now
      // counts two nodes, so the condition is patched at once.
      await clock.runUntil(clock.now() + 20_000);
      cluster.registerNode(instance('i-2', { allocatable: { cpu: 1000, memory: 4000, pods: 20 } }), { ready: true, name: 'n2' });
      await clock.runUntil(clock.now());
      expect(reports).toHaveLength(2);
      expect(reports[1]).toEqual({ pod: pending.name, resourceVersion: pending.resourceVersion, at: START + 20_000 });
      expect(reports[1]!.resourceVersion).not.toBe(reports[0]!.resourceVersion);
      expect(pending.schedulingMessage).toBe('0/2 nodes are available: 2 Insufficient cpu.');
    });

    it('writes nothing when a retry fails for the same reasons: another pod binding, or the 5-minute flush', async () => {
      const { clock, cluster, reports, pending } = await oneLeftOver();
      const version = pending.resourceVersion;
      for (const m of parseManifests(web(1), 'web.yaml')) cluster.apply(m);
      await clock.runUntil(clock.now() + 11 * 60_000);
      expect([...cluster.pods.values()].find((p) => p.name.startsWith('web-'))!.nodeName).toBe('n1');
      expect(pending.nodeName).toBeUndefined();
      expect(pending.resourceVersion).toBe(version);
      expect(reports).toHaveLength(1);
    });
  });
});

describe('listPods while nothing changes', () => {
  it('lists the same read-only copies until a pod changes, and every change shows in the next list', async () => {
    const { clock, cluster } = await setup(web(2));
    const first = await cluster.listPods();
    const again = await cluster.listPods();
    expect(again).not.toBe(first);
    expect(again.map((p) => p)).toEqual(first);
    again.forEach((p, i) => expect(p).toBe(first[i]));
    expect(first.every((p) => p.nodeName === 'n1' && p.phase === 'Running')).toBe(true);

    const [a, b] = [...cluster.pods.values()];
    cluster.annotate(a!, { note: 'x' });
    const annotated = await cluster.listPods();
    expect(annotated.find((p) => p.name === a!.name)!.annotations).toEqual({ note: 'x' });
    expect(first.find((p) => p.name === a!.name)!.annotations).toEqual({});

    cluster.deletePod(b!);
    await clock.runUntil(clock.now());
    const replaced = await cluster.listPods();
    expect(replaced.map((p) => p.name)).not.toContain(b!.name);
    expect(replaced).toHaveLength(2);
    expect(replaced.find((p) => p.name !== a!.name)).toMatchObject({ nodeName: 'n1', phase: 'Running' });
  });

  it('lists a node\'s pods from its index in creation order, and none once they are gone', async () => {
    const { clock, cluster, node } = await setup(web(3));
    expect(cluster.podsOn('n1').map((p) => p.name)).toEqual([...cluster.pods.values()].map((p) => p.name));
    cluster.removeNode(node);
    await clock.runUntil(clock.now());
    expect(cluster.podsOn('n1')).toEqual([]);
    expect([...cluster.pods.values()].every((p) => p.nodeName === undefined)).toBe(true);
  });
});

describe('listNodes while nothing changes', () => {
  it('lists the same read-only copies until a node changes, and every change shows in the next list', async () => {
    const { clock, cluster, node } = await setup(web(1));
    const first = await cluster.listNodes();
    const again = await cluster.listNodes();
    expect(again).not.toBe(first);
    expect(again[0]).toBe(first[0]);
    expect((first[0] as { used?: unknown }).used).toEqual({ cpu: 100, pods: 1 });

    await cluster.patchNode('n1', { taints: [{ key: 'k', effect: 'NoSchedule' }] });
    const tainted = await cluster.listNodes();
    expect(tainted[0]!.taints).toEqual([{ key: 'k', effect: 'NoSchedule' }]);
    expect(first[0]!.taints).toEqual([]);

    cluster.setNodeReady(node, false);
    expect((await cluster.listNodes())[0]!.ready).toBe(false);
    cluster.registerNode(instance('i-2'), { ready: true, name: 'n2' });
    expect((await cluster.listNodes()).map((n) => n.name)).toEqual(['n1', 'n2']);
    cluster.removeNode(node);
    await clock.runUntil(clock.now());
    expect((await cluster.listNodes()).map((n) => n.name)).toEqual(['n2']);
  });
});
