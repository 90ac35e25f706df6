/**
 * The solver's pod affinity, anti-affinity, topology spread, preference relaxation, minValues and DaemonSet host
 * ports, at the solver's own level (scenario-level cases live in test/fidelity).
 */
import { describe, expect, it } from 'vitest';
import { LABEL_CAPACITY_TYPE, LABEL_HOSTNAME, LABEL_ZONE } from '../../../shared/core/api/labels.js';
import type { PodSpecLike } from '../../../shared/core/provisioning/pod.js';
import { placedPod, toSchedulingPod } from '../../../shared/core/provisioning/pod.js';
import { solve } from '../../../shared/core/provisioning/scheduler.js';
import type { ExistingCapacity, NodeClaimPlan, SchedulingResults } from '../../../shared/core/provisioning/types.js';
import { instanceType, pod, pods, template } from '../../support/builders.js';
import { Requirements } from '../../../shared/core/scheduling/requirements.js';

const ZONES = ['us-west-2a', 'us-west-2b', 'us-west-2c'];
const WEB = { app: 'web' };
const WEB_SELECTOR = { matchLabels: WEB };
const ON_DEMAND = [{ key: LABEL_CAPACITY_TYPE, operator: 'In' as const, values: ['on-demand'] }];

/** m5.large holds 4 × 450m pods; m5.xlarge 8. On-demand prices equal in every zone, so zones tie on price. */
function types(zones = ZONES) {
  return [instanceType('m5.large', { cpu: 1930, memory: 6903, price: 0.096, zones }), instanceType('m5.xlarge', { cpu: 3920, memory: 14162, price: 0.192, zones })];
}

function zoneOf(c: NodeClaimPlan): string {
  const r = c.requirements.get(LABEL_ZONE);
  expect(r.size(), `NodeClaim for ${c.pods.join(',')} is pinned to one zone`).toBe(1);
  return r.any()!;
}

function podsPerZone(r: SchedulingResults): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of r.newNodeClaims) out[zoneOf(c)] = (out[zoneOf(c)] ?? 0) + c.pods.length;
  return out;
}

const spread = (key: string, maxSkew = 1, extra: Partial<NonNullable<PodSpecLike['topologySpreadConstraints']>[number]> = {}) => [
  { maxSkew, topologyKey: key, whenUnsatisfiable: 'DoNotSchedule' as const, labelSelector: WEB_SELECTOR, ...extra },
];
const anti = (key: string) => ({ podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: key, labelSelector: WEB_SELECTOR }] } });
const affinity = (key: string, labels: Record<string, string>) => ({ podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: key, labelSelector: { matchLabels: labels } }] } });

/** A node in `zone` with room, holding `on` pods. */
function node(name: string, zone: string, on: { labels: Record<string, string>; spec?: PodSpecLike }[] = [], free = { cpu: 1000, memory: 2000, pods: 50 }): ExistingCapacity {
  return {
    name,
    kind: 'node',
    nodePool: 'general',
    labels: { [LABEL_ZONE]: zone, [LABEL_HOSTNAME]: name, [LABEL_CAPACITY_TYPE]: 'on-demand' },
    taints: [],
    available: free,
    hostPorts: [],
    pods: on.map((p) => placedPod({ namespace: 'default', labels: p.labels, spec: p.spec ?? { containers: [{ name: 'c' }] } })),
  };
}

describe('topology spread', () => {
  it('spreads 6 replicas over 3 zones, 2 per zone (maxSkew 1; empty zones count as 0)', () => {
    const r = solve(pods('web', 6, { cpu: '450m', labels: WEB, topologySpreadConstraints: spread(LABEL_ZONE) }), [template('general', types(), { requirements: ON_DEMAND })], []);
    expect(r.unschedulable).toEqual([]);
    expect(podsPerZone(r)).toEqual({ 'us-west-2a': 2, 'us-west-2b': 2, 'us-west-2c': 2 });
  });

  it('counts pods already running: with 2 in zone a, new replicas go to b and c first', () => {
    const existing = [node('n-a', 'us-west-2a', [{ labels: WEB }, { labels: WEB }], { cpu: 0, memory: 0, pods: 0 })];
    const r = solve(pods('web', 4, { cpu: '450m', labels: WEB, topologySpreadConstraints: spread(LABEL_ZONE) }), [template('general', types(), { requirements: ON_DEMAND })], existing);
    expect(r.unschedulable).toEqual([]);
    expect(podsPerZone(r)).toEqual({ 'us-west-2b': 2, 'us-west-2c': 2 });
  });

  it('maxSkew 2 lets a zone run 2 ahead', () => {
    const existing = [node('n-a', 'us-west-2a', [], { cpu: 10000, memory: 20000, pods: 50 })];
    const r = solve(pods('web', 3, { cpu: '450m', labels: WEB, topologySpreadConstraints: spread(LABEL_ZONE, 2) }), [template('general', types(), { requirements: ON_DEMAND })], existing);
    // Two fit zone a's existing node (counts 0→1→2 against a minimum of 0); the third must go elsewhere.
    expect(r.existing.map((e) => e.target)).toEqual(['n-a', 'n-a']);
    expect(r.newNodeClaims).toHaveLength(1);
    expect(zoneOf(r.newNodeClaims[0]!)).not.toBe('us-west-2a');
  });

  it('minDomains above the number of zones keeps the minimum at 0: one pod per zone, the rest pending', () => {
    const pool = template('general', types(['us-west-2a', 'us-west-2b']), { requirements: ON_DEMAND });
    const r = solve(pods('web', 4, { cpu: '450m', labels: WEB, topologySpreadConstraints: spread(LABEL_ZONE, 1, { minDomains: 3 }) }), [pool], []);
    expect(podsPerZone(r)).toEqual({ 'us-west-2a': 1, 'us-west-2b': 1 });
    expect(r.unschedulable).toHaveLength(2);
    expect(r.unschedulable[0]!.reason).toContain('topology spread');
    expect(r.unschedulable[0]!.reason).toContain('fewer than minDomains 3, so the global minimum counts as 0; allow more topology.kubernetes.io/zone values (the NodePool\'s requirements, the pod\'s node affinity, the EC2NodeClass\'s subnets) or lower minDomains');
  });

  it('nodeAffinityPolicy Honor ignores zones the pod cannot use; Ignore counts them and blocks', () => {
    const onlyAB = { nodeSelector: undefined, affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: LABEL_ZONE, operator: 'In' as const, values: ['us-west-2a', 'us-west-2b'] }] }] } } } };
    const pool = template('general', types(), { requirements: ON_DEMAND });
    const honor = solve(pods('web', 4, { cpu: '450m', labels: WEB, ...onlyAB, topologySpreadConstraints: spread(LABEL_ZONE) }), [pool], []);
    expect(honor.unschedulable).toEqual([]);
    expect(podsPerZone(honor)).toEqual({ 'us-west-2a': 2, 'us-west-2b': 2 });
    const ignore = solve(pods('web2', 4, { cpu: '450m', labels: WEB, ...onlyAB, topologySpreadConstraints: spread(LABEL_ZONE, 1, { nodeAffinityPolicy: 'Ignore' }) }), [pool], []);
    // Zone c stays at 0 and counts: a and b can hold one each.
    expect(podsPerZone(ignore)).toEqual({ 'us-west-2a': 1, 'us-west-2b': 1 });
    expect(ignore.unschedulable).toHaveLength(2);
  });

  it('nodeTaintsPolicy Honor drops zones only a tainted NodePool reaches', () => {
    const general = template('general', types(['us-west-2a', 'us-west-2b']), { requirements: ON_DEMAND });
    const tainted = template('gpu', types(['us-west-2c']), { requirements: ON_DEMAND, taints: [{ key: 'gpu', effect: 'NoSchedule' }] });
    const ignore = solve(pods('web', 4, { cpu: '450m', labels: WEB, topologySpreadConstraints: spread(LABEL_ZONE) }), [general, tainted], []);
    expect(ignore.unschedulable).toHaveLength(2);
    const honor = solve(pods('web2', 4, { cpu: '450m', labels: WEB, topologySpreadConstraints: spread(LABEL_ZONE, 1, { nodeTaintsPolicy: 'Honor' }) }), [general, tainted], []);
    expect(honor.unschedulable).toEqual([]);
    expect(podsPerZone(honor)).toEqual({ 'us-west-2a': 2, 'us-west-2b': 2 });
  });

  it('matchLabelKeys counts only pods with the same value (one rollout revision)', () => {
    const existing = [node('n-a', 'us-west-2a', [{ labels: { ...WEB, rev: 'old' } }, { labels: { ...WEB, rev: 'old' } }], { cpu: 10000, memory: 20000, pods: 50 })];
    const tsc = spread(LABEL_ZONE, 1, { matchLabelKeys: ['rev'] });
    const r = solve(pods('web', 1, { cpu: '450m', labels: { ...WEB, rev: 'new' }, topologySpreadConstraints: tsc }), [template('general', types(), { requirements: ON_DEMAND })], existing);
    // The old revision's pods do not count, so zone a (with room) is as good as any.
    expect(r.existing).toEqual([{ pod: 'default/web-0', target: 'n-a' }]);
    const without = solve(pods('webx', 1, { cpu: '450m', labels: { ...WEB, rev: 'new' }, topologySpreadConstraints: spread(LABEL_ZONE) }), [template('general', types(), { requirements: ON_DEMAND })], existing);
    expect(without.existing).toEqual([]);
  });

  it('hostname spread puts at most maxSkew matching pods on each node (a new node is an empty domain)', () => {
    const r = solve(pods('web', 4, { cpu: '100m', labels: WEB, topologySpreadConstraints: spread(LABEL_HOSTNAME) }), [template('general', types(), { requirements: ON_DEMAND })], []);
    expect(r.newNodeClaims.map((c) => c.pods.length)).toEqual([1, 1, 1, 1]);
  });

  it('capacity-type spread splits replicas between spot and on-demand', () => {
    const r = solve(pods('web', 2, { cpu: '450m', labels: WEB, topologySpreadConstraints: spread(LABEL_CAPACITY_TYPE) }), [template('general', types())], []);
    const capacityTypes = r.newNodeClaims.map((c) => c.requirements.get(LABEL_CAPACITY_TYPE).any()).sort();
    expect(capacityTypes).toEqual(['on-demand', 'spot']);
  });
});

describe('pod anti-affinity', () => {
  it('hostname: one replica per node', () => {
    const r = solve(pods('web', 3, { cpu: '100m', labels: WEB, affinity: anti(LABEL_HOSTNAME) }), [template('general', types())], []);
    expect(r.newNodeClaims.map((c) => c.pods.length)).toEqual([1, 1, 1]);
  });

  it('zone: three replicas launch together in three zones; a fourth cannot schedule', () => {
    const r = solve(pods('web', 4, { cpu: '100m', labels: WEB, affinity: anti(LABEL_ZONE) }), [template('general', types(), { requirements: ON_DEMAND })], []);
    expect(Object.keys(podsPerZone(r)).sort()).toEqual(ZONES);
    expect(r.unschedulable).toHaveLength(1);
    expect(r.unschedulable[0]!.reason).toContain('anti-affinity');
  });

  it('symmetry: a running pod whose anti-affinity matches the newcomer keeps it out of its zone', () => {
    const guard = { labels: { app: 'guard' }, spec: { containers: [{ name: 'c' }], affinity: anti(LABEL_ZONE) } };
    const existing = [node('n-a', 'us-west-2a', [guard], { cpu: 10000, memory: 20000, pods: 50 })];
    const r = solve([pod('web-0', { cpu: '450m', labels: WEB })], [template('general', types(), { requirements: ON_DEMAND })], existing);
    expect(r.existing).toEqual([]);
    expect(zoneOf(r.newNodeClaims[0]!)).not.toBe('us-west-2a');
  });
});

describe('pod affinity', () => {
  it('follows a running pod into its zone', () => {
    const existing = [node('db-node', 'us-west-2b', [{ labels: { app: 'db' } }], { cpu: 0, memory: 0, pods: 0 })];
    const r = solve(pods('web', 2, { cpu: '450m', labels: WEB, affinity: affinity(LABEL_ZONE, { app: 'db' }) }), [template('general', types(), { requirements: ON_DEMAND })], existing);
    expect(podsPerZone(r)).toEqual({ 'us-west-2b': 2 });
  });

  it('follows a pod placed later in the same solve (retry loop)', () => {
    // The web pods are bigger, so they are tried before the cache pod they need.
    const web = pods('web', 2, { cpu: '900m', labels: WEB, affinity: affinity(LABEL_HOSTNAME, { app: 'cache' }) });
    const cache = pod('cache-0', { cpu: '100m', labels: { app: 'cache' } });
    const r = solve([...web, cache], [template('general', types(), { requirements: ON_DEMAND })], []);
    expect(r.unschedulable).toEqual([]);
    expect(r.newNodeClaims).toHaveLength(1);
    expect([...r.newNodeClaims[0]!.pods].sort()).toEqual(['default/cache-0', 'default/web-0', 'default/web-1']);
  });

  it('self-affinity on zone keeps every replica in the first replica’s zone', () => {
    const r = solve(pods('web', 12, { cpu: '450m', labels: WEB, affinity: affinity(LABEL_ZONE, WEB) }), [template('general', types(), { requirements: ON_DEMAND })], []);
    expect(r.unschedulable).toEqual([]);
    expect(Object.keys(podsPerZone(r))).toHaveLength(1);
  });

  it('without any matching pod, a pod that does not match its own term cannot schedule', () => {
    const r = solve([pod('web-0', { labels: WEB, affinity: affinity(LABEL_ZONE, { app: 'db' }) })], [template('general', types())], []);
    expect(r.newNodeClaims).toEqual([]);
    expect(r.unschedulable[0]!.reason).toContain('app=db');
  });
});

describe('preferences are honoured, then relaxed', () => {
  it('preferred zone anti-affinity spreads 3 replicas, then places the 4th anyway', () => {
    const prefer = { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { topologyKey: LABEL_ZONE, labelSelector: WEB_SELECTOR } }] } };
    const r = solve(pods('web', 4, { cpu: '100m', labels: WEB, affinity: prefer }), [template('general', types(), { requirements: ON_DEMAND })], []);
    expect(r.unschedulable).toEqual([]);
    const placed = r.newNodeClaims.reduce((n, c) => n + c.pods.length, 0);
    expect(placed).toBe(4);
    expect(new Set(r.newNodeClaims.map((c) => c.requirements.get(LABEL_ZONE).any())).size).toBe(3);
  });

  it('preferred node affinity picks the preferred zone, and is dropped when that zone has no capacity', () => {
    const preferC = { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 10, preference: { matchExpressions: [{ key: LABEL_ZONE, operator: 'In' as const, values: ['us-west-2c'] }] } }] } };
    const r = solve([pod('web-0', { affinity: preferC })], [template('general', types(), { requirements: ON_DEMAND })], []);
    expect(r.newNodeClaims[0]!.requirements.get(LABEL_ZONE).sortedValues()).toEqual(['us-west-2c']);
    const noC = solve([pod('web-1', { affinity: preferC })], [template('general', types(['us-west-2a']), { requirements: ON_DEMAND })], []);
    expect(noC.unschedulable).toEqual([]);
    expect(noC.newNodeClaims).toHaveLength(1);
  });

  it('ScheduleAnyway spread is honoured while it can be, then relaxed', () => {
    const soft = [{ maxSkew: 1, topologyKey: LABEL_ZONE, whenUnsatisfiable: 'ScheduleAnyway' as const, labelSelector: WEB_SELECTOR }];
    const r = solve(pods('web', 3, { cpu: '450m', labels: WEB, topologySpreadConstraints: soft }), [template('general', types(), { requirements: ON_DEMAND })], []);
    expect(Object.keys(podsPerZone(r)).sort()).toEqual(ZONES);
  });

  it('PreferNoSchedule taints are avoided while another NodePool can serve, tolerated otherwise', () => {
    const soft = template('soft', types(), { weight: 100, requirements: ON_DEMAND, taints: [{ key: 'soft', effect: 'PreferNoSchedule' }] });
    const plain = template('plain', types(), { requirements: ON_DEMAND });
    const r = solve([pod('a')], [soft, plain], []);
    expect(r.newNodeClaims[0]!.nodePool).toBe('plain');
    const only = solve([pod('b')], [soft], []);
    expect(only.newNodeClaims[0]!.nodePool).toBe('soft');
  });
});

describe('minValues and DaemonSet host ports', () => {
  it('a pod that narrows a NodePool below minValues instance families cannot use it (Strict)', () => {
    const all = [...types(), instanceType('c5.large', { cpu: 1930, memory: 3055, price: 0.085 }), instanceType('r5.large', { cpu: 1930, memory: 14162, price: 0.126 })];
    const pool = template('general', all, { requirements: [{ key: 'karpenter.k8s.aws/instance-family', operator: 'Exists', minValues: 2 }] });
    const fine = solve([pod('a')], [pool], []);
    expect(fine.newNodeClaims).toHaveLength(1);
    const narrow = solve([pod('b', { nodeSelector: { 'karpenter.k8s.aws/instance-family': 'c5' } })], [pool], []);
    expect(narrow.newNodeClaims).toEqual([]);
    expect(narrow.unschedulable[0]!.reason).toContain('minValues');
  });

  it('a pod asking for a host port a DaemonSet binds on the pool cannot go to a new node of it', () => {
    const pool = { ...template('general', types()), daemonHostPorts: [{ port: 'TCP/9100', requirements: [Requirements.none], daemonSet: 'monitoring/node-exporter' }] };
    const r = solve([pod('exporter', { hostPort: 9100 })], [pool], []);
    expect(r.newNodeClaims).toEqual([]);
    expect(r.unschedulable[0]!.reason).toContain('9100');
    const other = solve([pod('web', { hostPort: 8080 })], [pool], []);
    expect(other.newNodeClaims).toHaveLength(1);
  });
});

describe('edge cases kube-scheduler decides differently from a naive reading', () => {
  it('an empty node selector term, or one by node name (matchFields), matches no node: nothing is launched', () => {
    const empty = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{}] } } };
    const byName = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In' as const, values: ['n1'] }] }] } } };
    for (const affinity of [empty, byName]) {
      const r = solve([pod('x', { affinity })], [template('general', types())], []);
      expect(r.newNodeClaims).toEqual([]);
      expect(r.unschedulable[0]!.reason).toContain('matches no node');
    }
    // An empty term ORed with a real one: only the real one counts.
    const mixed = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{}, { matchExpressions: [{ key: LABEL_ZONE, operator: 'In' as const, values: ['us-west-2b'] }] }] } } };
    const r = solve([pod('y', { affinity: mixed })], [template('general', types())], []);
    expect(r.newNodeClaims[0]!.requirements.get(LABEL_ZONE).sortedValues()).toEqual(['us-west-2b']);
  });

  it('anti-affinity through a namespaceSelector on the namespace name keeps the pod away from that namespace’s pods', () => {
    const anchor = { labels: { app: 'anchor' } };
    const existing = [{ ...node('n-a', 'us-west-2a', [], { cpu: 10000, memory: 20000, pods: 50 }), pods: [placedPod({ namespace: 'team-b', labels: anchor.labels, spec: { containers: [{ name: 'c' }] } })] }];
    const term = { topologyKey: LABEL_HOSTNAME, labelSelector: { matchLabels: { app: 'anchor' } }, namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'team-b' } } };
    const r = solve([pod('x', { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term] } } })], [template('general', types())], existing);
    expect(r.existing).toEqual([]);
    expect(r.newNodeClaims).toHaveLength(1);
    const other = { ...term, namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'team-c' } } };
    const s = solve([pod('y', { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [other] } } })], [template('general', types())], existing);
    expect(s.existing).toEqual([{ pod: 'default/y', target: 'n-a' }]);
  });

  it('mismatchLabelKeys: anti-affinity only against the other tenant lets one tenant share nodes', () => {
    const anti = (tenant: string) => ({
      labels: { app: 'svc', tenant },
      affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: LABEL_HOSTNAME, labelSelector: { matchLabels: { app: 'svc' } }, mismatchLabelKeys: ['tenant'] }] } },
    });
    const r = solve([...pods('a', 3, anti('a')), ...pods('b', 3, anti('b'))], [template('general', types(), { requirements: ON_DEMAND })], []);
    expect(r.unschedulable).toEqual([]);
    expect(r.newNodeClaims).toHaveLength(2);
    for (const claim of r.newNodeClaims) expect(new Set(claim.pods.map((p) => p.split('/')[1]![0])).size).toBe(1);
  });

  it('hostNetwork makes every container port a host port: replicas cannot share a node', () => {
    const spec = { containers: [{ name: 'c', resources: { requests: { cpu: '100m' } }, ports: [{ containerPort: 8080 }] }], hostNetwork: true };
    const hostNet = [0, 1, 2].map((i) => toSchedulingPod({ namespace: 'default', name: `h-${i}`, spec }, i));
    const r = solve(hostNet, [template('general', types())], []);
    expect(r.newNodeClaims).toHaveLength(3);
  });
});
