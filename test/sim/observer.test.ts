import { describe, expect, it } from 'vitest';
import type { NodeClaim } from '../../shared/core/api/nodeclaim.js';
import { loadCatalog } from '../../shared/core/instancetypes/catalog.js';
import { LEAK_GRACE_MS, Observer } from '../../shared/sim/observer.js';
import type { SimNode, SimPod } from '../../shared/sim/simulated-cluster.js';
import type { SimInstance } from '../../shared/sim/simulated-ec2.js';

const T = Date.parse('2026-03-02T08:00:00Z');
const iso = (s: number) => new Date(T + s * 1000).toISOString();
const observer = () => new Observer(new Map(loadCatalog().map((t) => [t.name, t])), () => T);

function claim(name: string, instanceId: string, launchedAtS: number, pods: string[], extra: Partial<NodeClaim> = {}): NodeClaim {
  return {
    name,
    nodePool: 'general',
    nodeClass: 'default',
    state: 'Launched',
    requirements: [],
    instanceTypes: ['m5.large'],
    resources: {},
    labels: {},
    taints: [],
    startupTaints: [],
    nominatedPods: pods,
    instanceId,
    createdAt: iso(launchedAtS),
    launchedAt: iso(launchedAtS),
    version: 2,
    ...extra,
  };
}

function instance(id: string, nodeClaim: string, extra: Partial<SimInstance> = {}): SimInstance {
  return {
    instanceId: id,
    instanceType: 'm5.large',
    zone: 'us-west-2a',
    capacityType: 'spot',
    state: 'running',
    tags: { 'karpenter.sh/nodeclaim': nodeClaim, 'karpenter.sh/nodepool': 'general' },
    launchedAt: T,
    nodeClaim,
    price: 0.04,
    labels: {},
    taints: [],
    startupTaints: [],
    allocatable: { cpu: 1930, memory: 6903, pods: 29 },
    ...extra,
  };
}

describe('Observer', () => {
  describe('finish', () => {
    it('counts a second launch for a pod whose first launch had not come up yet', () => {
      const o = observer();
      const a = claim('a', 'i-a', 0, ['default/web-1']);
      const b = claim('b', 'i-b', 30, ['default/web-1']);
      o.finish([instance('i-a', 'a'), instance('i-b', 'b')], [a, b], new Map([['i-a', T + 60_000]]));
      expect(o.counts.duplicateLaunches).toBe(1);
    });

    it('does not count a relaunch after the first node was Ready or its NodeClaim was gone', () => {
      const o = observer();
      const a = claim('a', 'i-a', 0, ['default/web-1']);
      const b = claim('b', 'i-b', 120, ['default/web-1']);
      const c = claim('c', 'i-c', 0, ['default/web-2'], { state: 'Failed', deletedAt: iso(5) });
      const d = claim('d', 'i-d', 10, ['default/web-2']);
      o.finish([instance('i-a', 'a'), instance('i-b', 'b'), instance('i-d', 'd')], [a, b, c, d], new Map([['i-a', T + 60_000]]));
      expect(o.counts.duplicateLaunches).toBe(0);
    });

    it('counts only the pods a launch was for, not pods nominated to it later while it had room', () => {
      // b launched for web-2; web-1 (first nominated to a) joined b's record later, when a's node came up.
      const o = observer();
      o.noteLaunchedFor('a', ['default/web-1']);
      o.noteLaunchedFor('b', ['default/web-2']);
      const a = claim('a', 'i-a', 0, ['default/web-1']);
      const b = claim('b', 'i-b', 30, ['default/web-2', 'default/web-1']);
      o.finish([instance('i-a', 'a'), instance('i-b', 'b')], [a, b], new Map([['i-a', T + 60_000]]));
      expect(o.counts.duplicateLaunches).toBe(0);
      // Had b's launch been for web-1 too, it is a duplicate.
      const o2 = observer();
      o2.noteLaunchedFor('a', ['default/web-1']);
      o2.noteLaunchedFor('b', ['default/web-2', 'default/web-1']);
      o2.finish([instance('i-a', 'a'), instance('i-b', 'b')], [a, b], new Map([['i-a', T + 60_000]]));
      expect(o2.counts.duplicateLaunches).toBe(1);
    });

    it('counts an instance running with no live NodeClaim for longer than garbage collection takes as leaked', () => {
      const o = new Observer(new Map(), () => T + LEAK_GRACE_MS + 1000);
      o.finish([instance('i-a', 'a'), instance('i-b', 'b')], [claim('a', 'i-a', 0, []), claim('b', 'i-b', 0, [], { state: 'Failed' })], new Map());
      expect(o.counts.leakedInstances).toBe(1);
      expect(o.records[0]!.message).toMatch(/i-b .* no NodeClaim for 271 s/);
    });

    it('does not count an orphan garbage collection has not had time to terminate (its NodeClaim deleted just before the end)', () => {
      const end = T + 3_600_000;
      const o = new Observer(new Map(), () => end);
      const deletedAt = new Date(end - 60_000).toISOString();
      o.finish([instance('i-a', 'a')], [claim('a', 'i-a', 0, [], { state: 'Deleted', deletedAt })], new Map());
      expect(o.counts.leakedInstances).toBe(0);
      // the same orphan, deleted long before the end, is a leak
      const o2 = new Observer(new Map(), () => end);
      o2.finish([instance('i-a', 'a')], [claim('a', 'i-a', 0, [], { state: 'Deleted', deletedAt: new Date(end - LEAK_GRACE_MS - 1).toISOString() })], new Map());
      expect(o2.counts.leakedInstances).toBe(1);
    });
  });

  describe('onLaunch', () => {
    it('counts a second instance for one NodeClaim', () => {
      const o = observer();
      o.onLaunch(instance('i-a', 'a'), [instance('i-a', 'a')], () => undefined);
      o.onLaunch(instance('i-b', 'a'), [instance('i-a', 'a'), instance('i-b', 'a')], () => undefined);
      expect(o.counts.duplicateLaunches).toBe(1);
    });

    it('counts a launch that takes a NodePool over its cpu limit', () => {
      const o = observer();
      const running = [instance('i-a', 'a'), instance('i-b', 'b')];
      o.onLaunch(running[1]!, running, () => ({ cpu: '3' }));
      expect(o.counts.limits).toBe(1);
    });

    it('does not count a node being replaced: its replacement may overlap it, as Karpenter checks limits before the launch', () => {
      const o = observer();
      o.onReplaceStart({ nodeClaim: 'a', nodePool: 'general', reason: 'Underutilized', replacements: ['b'], spec: 's', workload: 'w' });
      const running = [instance('i-a', 'a'), instance('i-b', 'b')];
      o.onLaunch(running[1]!, running, () => ({ cpu: '3' }));
      expect(o.counts.limits).toBe(0);
    });

    it('does not count an instance whose NodeClaim is marked for deletion (interrupted, expiring), as Karpenter leaves it out of the NodePool usage', () => {
      const o = observer();
      const running = [instance('i-a', 'a'), instance('i-b', 'b')];
      o.onLaunch(running[1]!, running, () => ({ cpu: '3' }), (i) => i.instanceId === 'i-a');
      expect(o.counts.limits).toBe(0);
      // The launched instance itself always counts, and so does every instance not marked.
      const o2 = observer();
      o2.onLaunch(running[1]!, running, () => ({ cpu: '3' }), (i) => i.instanceId === 'i-b');
      expect(o2.counts.limits).toBe(1);
    });
  });

  describe('onBind', () => {
    const node = (labels: Record<string, string>, taints: SimNode['taints'] = []): SimNode =>
      ({ name: 'n1', labels, taints, allocatable: { cpu: 1930, memory: 6903, pods: 29 } }) as unknown as SimNode;
    let seq = 0;
    const pod = (spec: object): SimPod =>
      ({ namespace: 'default', name: `p${seq++}`, labels: {}, nodeName: 'n1', spec: { containers: [{ name: 'c', resources: { requests: { cpu: '500m' } } }], ...spec } }) as unknown as SimPod;

    it('counts a pod bound to a node missing its nodeSelector label', () => {
      const o = observer();
      const p = pod({ nodeSelector: { 'workload-type': 'general' } });
      o.onBind(p, node({}), () => [p]);
      expect(o.counts.placement).toBe(1);
    });

    it('counts a pod bound to a node with a taint it does not tolerate', () => {
      const o = observer();
      const p = pod({});
      o.onBind(p, node({}, [{ key: 'gpu', effect: 'NoSchedule' }]), () => [p]);
      expect(o.counts.placement).toBe(1);
    });

    it('counts a pod bound to a node without room', () => {
      const o = observer();
      const pods = [pod({}), pod({}), pod({}), pod({}), pod({})];
      o.onBind(pods[4]!, node({}), () => pods);
      expect(o.counts.placement).toBe(1);
    });

    it('counts a pod whose required anti-affinity a pod in the same zone breaks, naming the constraint', () => {
      const o = observer();
      const zoned = (name: string, zone: string): SimNode => ({ ...node({ 'topology.kubernetes.io/zone': zone, 'kubernetes.io/hostname': name }), name }) as SimNode;
      const anti = { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'db' } }, topologyKey: 'topology.kubernetes.io/zone' }] } };
      const first = { ...pod({ affinity: anti }), labels: { app: 'db' }, nodeName: 'a1' } as SimPod;
      const second = { ...pod({ affinity: anti }), labels: { app: 'db' }, nodeName: 'a2' } as SimPod;
      const nodes = [zoned('a1', 'us-west-2a'), zoned('a2', 'us-west-2a'), zoned('b1', 'us-west-2b')];
      o.onBind(second, nodes[1]!, () => [first, second], () => nodes);
      expect(o.counts.placement).toBe(1);
      expect(o.records[0]!.message).toMatch(/anti-affinity .* topology.kubernetes.io\/zone=us-west-2a/);
      o.onBind({ ...second, nodeName: 'b1' } as SimPod, nodes[2]!, () => [first, { ...second, nodeName: 'b1' } as SimPod], () => nodes);
      expect(o.counts.placement).toBe(1);
    });

    it('checks a bind from the node index alone when no topology can matter (still counting a pod without room), and reads every pod when a bound pod has required anti-affinity', () => {
      const o = observer();
      const onNode = [pod({}), pod({}), pod({}), pod({})];
      const everyPod = (): Iterable<SimPod> => ({
        [Symbol.iterator]: () => {
          throw new Error('every pod was read');
        },
      });
      o.onBind(onNode[2]!, node({}), everyPod, () => [node({})], () => ({ podsOnNode: onNode.slice(0, 2), boundRequiredAntiAffinity: false }));
      expect(o.counts.placement).toBe(0);
      o.onBind(pod({}), node({}), everyPod, () => [node({})], () => ({ podsOnNode: onNode, boundRequiredAntiAffinity: false }));
      expect(o.counts.placement).toBe(1);
      expect(o.records[0]!.message).toMatch(/insufficient cpu/);
      // A bound pod with required anti-affinity: every pod is read, and the break is found.
      const anti = { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'db' } }, topologyKey: 'kubernetes.io/hostname' }] } };
      const n = node({ 'kubernetes.io/hostname': 'n1' });
      const first = { ...pod({ affinity: anti }), labels: { app: 'db' } } as SimPod;
      const second = { ...pod({}), labels: { app: 'db' } } as SimPod;
      o.onBind(second, n, () => [first, second], () => [n], () => ({ podsOnNode: [first], boundRequiredAntiAffinity: true }));
      expect(o.counts.placement).toBe(2);
      expect(o.records[1]!.message).toMatch(/anti-affinity/);
    });

    it('accepts a pod that fits and is satisfied', () => {
      const o = observer();
      const p = pod({ nodeSelector: { 'workload-type': 'general' }, tolerations: [{ key: 'gpu', operator: 'Exists' }] });
      o.onBind(p, node({ 'workload-type': 'general' }, [{ key: 'gpu', effect: 'NoSchedule' }]), () => [p]);
      expect(o.counts.placement).toBe(0);
    });
  });

  describe('onNodeClaimLaunched', () => {
    const node = { name: 'ip-10-0-0-1', labels: { 'node.kubernetes.io/instance-type': 'm5.large', 'kubernetes.io/hostname': 'ip-10-0-0-1', 'topology.kubernetes.io/zone': 'us-west-2a' }, taints: [], allocatable: { cpu: 1930, memory: 6903, pods: 29 } };
    const pod = (name: string, spec: object = {}, labels: Record<string, string> = {}) => ({
      namespace: 'default',
      name,
      labels,
      spec: { containers: [{ name: 'c', resources: { requests: { cpu: '500m', memory: '512Mi' } } }], ...spec },
    });
    const agent = pod('agent', { containers: [{ name: 'a', resources: { requests: { cpu: '900m' } }, ports: [{ containerPort: 9100, hostPort: 9100 }] }] });

    it('accepts nominated pods that fit beside the DaemonSet pods', () => {
      const o = observer();
      o.onNodeClaimLaunched({ nodeClaim: 'general-a', node, nominated: [pod('a'), pod('b')], daemonSets: [agent] });
      expect(o.records).toEqual([]);
    });

    it('counts nominated pods that only fit without the DaemonSet pods the node will run', () => {
      const o = observer();
      o.onNodeClaimLaunched({ nodeClaim: 'general-a', node, nominated: [pod('a'), pod('b'), pod('c')], daemonSets: [agent] });
      expect(o.counts.placement).toBe(1);
      expect(o.records[0]!.message).toMatch(/^NodeClaim general-a \(m5.large\) was launched for default\/c, which cannot run there: insufficient cpu/);
    });

    it('ignores a DaemonSet that does not tolerate the NodePool taints', () => {
      const o = observer();
      const tainted = { ...node, taints: [{ key: 'dedicated', effect: 'NoSchedule' as const }] };
      const tolerant = { tolerations: [{ key: 'dedicated', operator: 'Exists' as const }] };
      o.onNodeClaimLaunched({ nodeClaim: 'general-a', node: tainted, nominated: [pod('a', tolerant), pod('b', tolerant), pod('c', tolerant)], daemonSets: [agent] });
      expect(o.records).toEqual([]);
    });

    it('counts a nominated pod that does not tolerate a NodePool taint or match the node labels', () => {
      const o = observer();
      const tainted = { ...node, taints: [{ key: 'dedicated', effect: 'NoSchedule' as const }] };
      o.onNodeClaimLaunched({ nodeClaim: 'general-a', node: tainted, nominated: [pod('a'), pod('b', { nodeSelector: { 'kubernetes.io/arch': 'arm64' } })], daemonSets: [] });
      expect(o.records.map((r) => r.message)).toEqual([expect.stringMatching(/default\/a.*taint dedicated:NoSchedule/), expect.stringMatching(/default\/b.*nodeSelector kubernetes.io\/arch=arm64/)]);
    });

    it('counts a host-port clash with a DaemonSet pod and required anti-affinity between nominated pods', () => {
      const o = observer();
      const ported = pod('web', { containers: [{ name: 'c', ports: [{ containerPort: 80, hostPort: 9100 }] }] });
      const anti = { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'db' } }, topologyKey: 'kubernetes.io/hostname' }] } } };
      o.onNodeClaimLaunched({ nodeClaim: 'general-a', node, nominated: [ported, pod('db-0', anti, { app: 'db' }), pod('db-1', anti, { app: 'db' })], daemonSets: [agent] });
      expect(o.records.map((r) => r.message)).toEqual([expect.stringMatching(/default\/web.*host port TCP\/9100.*default\/agent/), expect.stringMatching(/default\/db-1.*anti-affinity/)]);
    });

    it('does not judge required pod affinity, which depends on pods elsewhere', () => {
      const o = observer();
      const affine = { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'cache' } }, topologyKey: 'kubernetes.io/hostname' }] } } };
      o.onNodeClaimLaunched({ nodeClaim: 'general-a', node, nominated: [pod('web', affine)], daemonSets: [] });
      expect(o.records).toEqual([]);
    });
  });

  describe('onEviction (eviction loops)', () => {
    const world = { pods: [], readyNodes: new Set(['n1']), pdbs: [] };
    const evicted = (scheduledAtMs: number) => ({ namespace: 'default', name: 'agent-x', labels: {}, annotations: {}, createdAt: scheduledAtMs, phase: 'Running', nodeName: 'n1', scheduledAt: scheduledAtMs });

    it('counts a pod evicted from a node it was bound to after the node was tainted for its drain', () => {
      let now = T;
      const o = new Observer(new Map(), () => now);
      o.onDrainTaint('n1');
      now = T + 60_000;
      o.onEviction(evicted(T + 1), 'Drifted', world);
      expect(o.counts.evictionLoops).toBe(1);
      expect(o.records[0]!.message).toContain('after the node');
    });

    it('does not count the first eviction of a pod that was there before the drain began, nor evictions from an untainted node', () => {
      let now = T;
      const o = new Observer(new Map(), () => now);
      o.onEviction(evicted(T), undefined, world);
      now = T + 60_000;
      o.onDrainTaint('n1');
      o.onEviction(evicted(T), 'Drifted', world);
      expect(o.counts.evictionLoops).toBe(0);
    });
  });

  describe('disruptions a crash bent out of shape (issue 21)', () => {
    const world = { pods: [], readyNodes: new Set(['n1']), pdbs: [] };
    const pod = { namespace: 'default', name: 'late-x', labels: {}, annotations: {}, createdAt: T, phase: 'Running', nodeName: 'n1', scheduledAt: T };
    const pool = { name: 'general', budgets: [{ nodes: '2' }] };
    const nodes = (disrupted: number, total: number) => Array.from({ length: total }, (_, i) => ({ name: `n${i + 1}`, ready: true, disrupted: i > 0 && i <= disrupted }));

    it('counts a pod evicted by an Empty disruption as a budget violation: its node was not empty', () => {
      const o = observer();
      o.onEviction(pod, 'Empty', world);
      expect(o.counts.budget).toBe(1);
      expect(o.records[0]!.message).toContain('by an Empty disruption');
      o.onEviction(pod, 'Underutilized', world);
      expect(o.counts.budget).toBe(1);
    });

    it('checks the budget where a voluntary disruption first acts on a node it never tainted, once, and counts that node as disrupted after', () => {
      const o = observer();
      // Two of four already tainted, budget 2: a third disruption acting untainted is over the budget.
      o.onUntaintedDisruption('n1', 'Empty', pool, nodes(2, 4));
      expect(o.counts.budget).toBe(1);
      o.onUntaintedDisruption('n1', 'Empty', pool, nodes(2, 4));
      expect(o.counts.budget).toBe(1);
      // Within budget alone, but it keeps counting as disrupted: a later taint of another node sees it.
      const p = observer();
      p.onUntaintedDisruption('n1', 'Drifted', pool, nodes(0, 4));
      expect(p.counts.budget).toBe(0);
      p.onDisruptionStart('n2', 'Drifted', pool, nodes(1, 4).map((n) => ({ ...n, disrupted: n.name === 'n3' })));
      expect(p.counts.budget).toBe(1);
      // Forceful reasons are not budgeted.
      const q = observer();
      q.onUntaintedDisruption('n1', 'Expired', pool, nodes(2, 4));
      expect(q.counts.budget).toBe(0);
    });
  });
});

describe('Observer.onPodDeletion (a drain deleting pods directly)', () => {
  const pod = (name: string, annotations: Record<string, string> = {}) => ({ namespace: 'default', name, labels: { app: 'db' }, annotations, createdAt: T - 3_600_000, phase: 'Running', nodeName: 'n1' });
  const pdb = { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'db', namespace: 'default' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'db' } } } };
  const world = (pods: ReturnType<typeof pod>[]) => ({ pods, readyNodes: new Set(['n1']), pdbs: [pdb] }) as unknown as Parameters<Observer['onPodDeletion']>[2];

  it('counts a do-not-disrupt or PDB-protected pod deleted before its deadline minus grace, or with no deadline', () => {
    const o = observer();
    const guarded = pod('guarded', { 'karpenter.sh/do-not-disrupt': 'true' });
    o.onPodDeletion(guarded, 'Drifted', world([guarded]), T + 1000);
    expect(o.counts.doNotDisrupt).toBe(1);
    expect(o.counts.pdb).toBe(1);
    o.onPodDeletion(guarded, 'Drifted', world([guarded]), Number.POSITIVE_INFINITY);
    expect(o.counts.doNotDisrupt).toBe(2);
  });

  it('accepts the same deletions from the deadline minus grace on', () => {
    const o = observer();
    const guarded = pod('guarded', { 'karpenter.sh/do-not-disrupt': 'true' });
    o.onPodDeletion(guarded, 'Drifted', world([guarded]), T);
    o.onPodDeletion(guarded, 'Drifted', world([guarded]), T - 60_000);
    expect(o.counts.doNotDisrupt).toBe(0);
    expect(o.counts.pdb).toBe(0);
  });
});

describe('Observer churn (replace loops)', () => {
  const start = (nodeClaim: string, reason: string, replacements: string[], spec = 'spec-1', workload = 'w-1') => ({ nodeClaim, nodePool: 'general', reason, replacements, spec, workload });
  const requirements = [{ key: 'team', operator: 'Exists' }];

  it('counts a Drifted replacement that is itself drifted (its node lacks a label the requirements need), once', () => {
    const o = observer();
    o.onReplaceStart(start('a', 'Drifted', ['b']));
    o.onDriftedTermination('a', 'spec-1', requirements, new Map([['b', { name: 'node-b', labels: { 'kubernetes.io/arch': 'amd64' } }]]));
    expect(o.counts.churn).toBe(1);
    expect(o.records[0]!.message).toContain('team Exists');
    // The loop goes on: b is replaced as Drifted in turn, and its replacement c is drifted too.
    o.onReplaceStart(start('b', 'Drifted', ['c']));
    o.onDriftedTermination('b', 'spec-1', requirements, new Map([['c', { name: 'node-c', labels: {} }]]));
    expect(o.counts.churn).toBe(2);
  });

  it('does not count a Drifted replacement that satisfies the requirements, nor one launched before the spec changed again', () => {
    const o = observer();
    o.onReplaceStart(start('a', 'Drifted', ['b']));
    o.onDriftedTermination('a', 'spec-1', [...requirements, { key: 'tier', operator: 'Gte', values: ['3'] }], new Map([['b', { name: 'node-b', labels: { team: '0', tier: '3' } }]]));
    o.onReplaceStart(start('x', 'Drifted', ['y']));
    o.onDriftedTermination('x', 'spec-2', requirements, new Map([['y', { name: 'node-y', labels: {} }]]));
    expect(o.counts.churn).toBe(0);
  });

  it('checks a replacement launched in another NodePool against that NodePool’s requirements, not the drifted node’s', () => {
    const o = observer();
    o.onReplaceStart(start('a', 'Drifted', ['b']));
    const spotPool = [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }];
    o.onDriftedTermination('a', 'spec-1', [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }], new Map([['b', { name: 'node-b', labels: { 'karpenter.sh/capacity-type': 'spot' }, requirements: spotPool }]]));
    expect(o.counts.churn).toBe(0);
  });

  it('counts a replacement replaced again for the same reason with no spec change in between (Drifted)', () => {
    const o = observer();
    o.onReplaceStart(start('a', 'Drifted', ['b']));
    o.onReplaceStart(start('b', 'Drifted', ['c'], 'spec-1', 'w-2'));
    expect(o.counts.churn).toBe(1);
    expect(o.records[0]!.message).toContain('NodeClaim b, launched to replace a (Drifted), is itself being replaced for Drifted');
  });

  it('does not count a second drift after the NodePool changed, nor a replacement consolidated after the workload changed', () => {
    const o = observer();
    o.onReplaceStart(start('a', 'Drifted', ['b']));
    o.onReplaceStart(start('b', 'Drifted', ['c'], 'spec-2'));
    o.onReplaceStart(start('p', 'Underutilized', ['q']));
    o.onReplaceStart(start('q', 'Underutilized', ['r'], 'spec-1', 'w-2'));
    // Another reason is not a loop either: a drifted node replaced, its replacement consolidated later.
    o.onReplaceStart(start('m', 'Drifted', ['n']));
    o.onReplaceStart(start('n', 'Underutilized', [], 'spec-1', 'w-1'));
    expect(o.counts.churn).toBe(0);
  });

  describe('consolidation undone', () => {
    /** The observer sees a launch of `claim` at `price` USD/h (only the fields it reads). */
    const launch = (o: Observer, claim: string, price: number) =>
      o.onLaunch({ instanceId: `i-${claim}`, tags: { 'karpenter.sh/nodeclaim': claim }, price } as unknown as Parameters<Observer['onLaunch']>[0], [], () => undefined);

    it('counts a replacement consolidated again, alone and with nothing changed, into an instance no cheaper than what it replaced', () => {
      const o = observer();
      launch(o, 'p', 0.2);
      o.onReplaceStart(start('p', 'Underutilized', ['q']));
      launch(o, 'q', 0.1);
      o.onReplaceStart(start('q', 'Underutilized', ['r']));
      launch(o, 'r', 0.2);
      expect(o.counts.churn).toBe(1);
      expect(o.records[0]!.message).toContain('the two consolidations saved nothing');
    });

    it('counts it whichever comes first, the launch of the second replacement or the start of its disruption', () => {
      const o = observer();
      launch(o, 'p', 0.2);
      o.onReplaceStart(start('p', 'Underutilized', ['q']));
      launch(o, 'q', 0.1);
      launch(o, 'r', 0.25);
      o.onReplaceStart(start('q', 'Underutilized', ['r']));
      expect(o.counts.churn).toBe(1);
    });

    it('does not count a replacement consolidated again into something cheaper (convergence), nor after the workload changed', () => {
      const o = observer();
      launch(o, 'p', 0.4);
      o.onReplaceStart(start('p', 'Underutilized', ['q']));
      launch(o, 'q', 0.2);
      o.onReplaceStart(start('q', 'Underutilized', ['r']));
      launch(o, 'r', 0.1);
      launch(o, 'x', 0.2);
      o.onReplaceStart(start('x', 'Underutilized', ['y']));
      launch(o, 'y', 0.1);
      o.onReplaceStart(start('y', 'Underutilized', ['z'], 'spec-1', 'w-2'));
      launch(o, 'z', 0.3);
      expect(o.counts.churn).toBe(0);
    });

    it('sums the nodes a multi-node consolidation replaced: two nodes into one and back into one as dear as both is churn', () => {
      const o = observer();
      launch(o, 'a', 0.1);
      launch(o, 'b', 0.1);
      o.onReplaceStart(start('a', 'Underutilized', ['c']));
      o.onReplaceStart(start('b', 'Underutilized', ['c']));
      launch(o, 'c', 0.15);
      o.onReplaceStart(start('c', 'Underutilized', ['d']));
      launch(o, 'd', 0.19);
      expect(o.counts.churn).toBe(0);
      o.onReplaceStart(start('d', 'Underutilized', ['e']));
      launch(o, 'e', 0.15);
      expect(o.counts.churn).toBe(1);
    });
  });
});
