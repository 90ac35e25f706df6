/**
 * Scheduling-fidelity cases (issue 3's acceptance suite): each is a complete small scenario and what Karpenter v1
 * semantics say must come of it — NodeClaims launched (per NodePool), instance types, zones, capacity types and
 * placements, or exactly which pods stay pending and why.
 *
 * EXPECTATIONS ARE DERIVED BY HAND from Kubernetes / Karpenter semantics, never copied from a run. Where a case
 * checks documented Karpenter behaviour the comment cites docs/karpenter-semantics.md#<anchor> or Karpenter's source
 * (kubernetes-sigs/karpenter `pkg/controllers/provisioning/scheduling/*`).
 *
 * Numbers used below (shared/core/instancetypes/catalog-data.ts + the allocatable formula of
 * docs/karpenter-semantics.md#allocatable:
 * capacity − kube-reserved − eviction threshold, 7.5 % VM memory overhead; on-demand us-east-1 list prices):
 *
 *   type           vCPU  alloc cpu  alloc memory  max pods (ENI)  price $/h   extended
 *   t3.small         2    1930m       1418Mi          11          0.0208     —
 *   c5.large         2    1930m       3114Mi          29          0.085      pod-eni 9
 *   m5.large         2    1930m       6903Mi          29          0.096      pod-eni 9
 *   m5.xlarge        4    3920m      14162Mi          58          0.192      pod-eni 18
 *   m5.2xlarge       8    7910m      29317Mi          58          0.384
 *   m5.4xlarge      16   15890m      57691Mi         234          0.768
 *   g4dn.xlarge      4    3920m      14481Mi          29          0.526      nvidia.com/gpu 1
 *   g5.xlarge        4    3920m      14162Mi          58          1.006      nvidia.com/gpu 1
 *   inf1.xlarge      4    3920m       6804Mi          38          0.228      aws.amazon.com/neuron 1
 *   inf1.6xlarge    24   23870m      42536Mi         234          1.18       aws.amazon.com/neuron 4
 *   inf2.xlarge      4    3920m      14162Mi          58          0.7582     aws.amazon.com/neuron 1
 *   inf2.24xlarge   96   95690m     355262Mi         737          6.49063    aws.amazon.com/neuron 6
 *   ephemeral-storage on every type with the default 20 GiB root volume: 20480 − 1024 (kube-reserved) − 2048 (10 %
 *   nodefs eviction) = 17408Mi (17 GiB).
 *
 * So, for pod sizing: one m5.large holds 1 pod of 1200m, 2 of 800m, 3 of 500m; one m5.xlarge holds 3 of 1 cpu.
 * m5 prices are linear in size (xlarge = 2 × large), so where two placements would cost the same the cases either
 * pin a single instance type or size pods so the count is forced; prices only decide where the cheapest type is
 * unique. Capacity types are on-demand unless a case is about capacity type (spot prices are simulated).
 *
 * Zones: us-west-2 has a–d in the simulation; NodePools here allow a, b, c unless said otherwise. Karpenter counts
 * the zones of NodePool requirements × offerings as spread domains, so an empty zone counts as 0 (topology.go
 * `buildDomainGroups`); for hostname, every new NodeClaim is its own domain and the global minimum is 0
 * (topologygroup.go `domainMinCount`).
 */
import { expect } from 'vitest';
import {
  A,
  B,
  C,
  CAPACITY_TYPE,
  D,
  FAMILY,
  HOST,
  INSTANCE_TYPE,
  View,
  ZONE,
  inReq,
  nodeAffinity,
  podAffinity,
  spread,
  term,
  type PoolSpec,
  type ScenarioSpec,
} from './builder.js';

export interface FidelityCase {
  /** Unique, kebab-case; the test name. */
  readonly name: string;
  /** Which acceptance constraint it covers. */
  readonly constraint: string;
  /** One line: what must happen. */
  readonly expectation: string;
  readonly scenario: ScenarioSpec;
  /**
   * How many pods must still be pending at the end (`unschedulable[]`); every other pod must be running.
   * @default 0
   */
  readonly pending?: number;
  /** Assertions on the Result (violations.placement === 0 and the pending count are checked for every case by the test). */
  readonly expect: (v: View) => void;
}

// ---- shared NodePools --------------------------------------------------------------------------------------------

/** NodePool `general`: on-demand m5 (any size), zones a, b, c. */
const m5 = (extra: Partial<PoolSpec> = {}): PoolSpec => ({ name: 'general', families: ['m5'], ...extra });
/** NodePool `general`: on-demand m5.large only, zones a, b, c — one type, so NodeClaim counts follow from pod sizes. */
const large = (extra: Partial<PoolSpec> = {}): PoolSpec => ({ name: 'general', types: ['m5.large'], ...extra });

const cpu = (c: string, memory = '256Mi'): Record<string, string> => ({ cpu: c, memory });

/** The values of the NodeClaim's instance-type requirement (its instance type options). */
function instanceTypeOptions(v: View, i = 0): string[] {
  return v.launched()[i]?.requirements.find((r) => r.key === INSTANCE_TYPE)?.values ?? [];
}

/** Max pods of the workloads on any one node. */
const maxPerNode = (v: View, ...names: string[]): number => Math.max(0, ...v.perNode(...names).values());

const TOPOLOGY_REASON = /topology|spread|skew|minDomains/i;
const AFFINITY_REASON = /affinity/i;

export const cases: readonly FidelityCase[] = [
  // =================================================================================================================
  // Node affinity: required terms are ORed; preferences are honoured, then relaxed one at a time
  // (docs/karpenter-semantics.md#preference-relaxation).
  // =================================================================================================================
  {
    name: 'node-affinity-required-single-term',
    constraint: 'node affinity (required)',
    expectation: '1 m5.large in us-west-2b',
    scenario: { pools: [m5()], workloads: [{ name: 'web', requests: cpu('500m'), spec: { affinity: nodeAffinity({ required: [[inReq(ZONE, B)]] }) } }] },
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large']);
      expect(v.zones()).toEqual([B]);
      expect(v.podZones('web')).toEqual([B]);
    },
  },
  {
    name: 'node-affinity-required-terms-ored-zone',
    constraint: 'node affinity (required, terms ORed)',
    expectation: 'term 1 (zone d) impossible in the NodePool, term 2 (zone c) used: 1 m5.large in us-west-2c',
    scenario: { pools: [m5()], workloads: [{ name: 'web', requests: cpu('500m'), spec: { affinity: nodeAffinity({ required: [[inReq(ZONE, D)], [inReq(ZONE, C)]] }) } }] },
    // Karpenter tries term 0, and on failure drops it and tries the next (preferences.go removeRequiredNodeAffinityTerm).
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large']);
      expect(v.zones()).toEqual([C]);
      expect(v.pendingPods()).toEqual([]);
    },
  },
  {
    name: 'node-affinity-required-terms-ored-undefined-label',
    constraint: 'node affinity (required, terms ORed)',
    expectation: 'term 1 needs a label no NodePool defines, term 2 (instance-size xlarge) used: 1 m5.xlarge',
    scenario: {
      pools: [m5()],
      workloads: [
        {
          name: 'web',
          requests: cpu('500m'),
          spec: { affinity: nodeAffinity({ required: [[inReq('example.com/tier', 'gold')], [inReq('karpenter.k8s.aws/instance-size', 'xlarge')]] }) },
        },
      ],
    },
    // Term 1 is incompatible (a non-well-known label the NodePool neither requires nor sets,
    // docs/karpenter-semantics.md#well-known-labels); term 2 leaves only the xlarge size: m5.xlarge is the only m5 of
    // that size.
    expect: (v) => {
      expect(v.types()).toEqual(['m5.xlarge']);
      expect(v.pendingPods()).toEqual([]);
    },
  },
  {
    name: 'node-affinity-required-unsatisfiable',
    pending: 1,
    constraint: 'node affinity (required)',
    expectation: 'only term needs zone d, outside the NodePool: nothing launched, pod pending (reason names the zone)',
    scenario: { pools: [m5()], workloads: [{ name: 'web', requests: cpu('500m'), spec: { affinity: nodeAffinity({ required: [[inReq(ZONE, D)]] }) } }] },
    expect: (v) => {
      expect(v.launched()).toHaveLength(0);
      expect(v.pending('web')).toHaveLength(1);
      expect(v.pending('web')[0]!.reason).toMatch(/zone|us-west-2d/i);
    },
  },
  {
    name: 'node-affinity-required-gt-and-notin',
    constraint: 'node affinity (required)',
    expectation: 'instance-cpu Gt 4 and zone NotIn [a, b]: 1 m5.2xlarge in us-west-2c',
    scenario: {
      pools: [m5()],
      workloads: [
        {
          name: 'web',
          requests: cpu('500m'),
          spec: {
            affinity: nodeAffinity({
              required: [[{ key: 'karpenter.k8s.aws/instance-cpu', operator: 'Gt', values: ['4'] }, { key: ZONE, operator: 'NotIn', values: [A, B] }]],
            }),
          },
        },
      ],
    },
    // m5.xlarge has exactly 4 vCPU (not > 4); the cheapest m5 with more is m5.2xlarge (8). Zones left: c.
    expect: (v) => {
      expect(v.types()).toEqual(['m5.2xlarge']);
      expect(v.zones()).toEqual([C]);
      expect(v.podZones('web')).toEqual([C]);
    },
  },
  {
    name: 'node-affinity-preferred-honoured',
    constraint: 'node affinity (preferred)',
    expectation: 'preference zone c is satisfiable, so it is honoured: 1 m5.large in us-west-2c',
    scenario: { pools: [m5()], workloads: [{ name: 'web', requests: cpu('500m'), spec: { affinity: nodeAffinity({ preferred: [{ weight: 50, match: [inReq(ZONE, C)] }] }) } }] },
    // Karpenter treats the heaviest preferred term as a requirement first
    // (docs/karpenter-semantics.md#preference-relaxation; pkg/scheduling/requirements.go NewPodRequirements).
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large']);
      expect(v.zones()).toEqual([C]);
    },
  },
  {
    name: 'node-affinity-preferred-relaxed',
    constraint: 'node affinity (preferred)',
    expectation: 'preference zone d cannot be met, so it is dropped: 1 m5.large in a, b or c, pod running',
    scenario: { pools: [m5()], workloads: [{ name: 'web', requests: cpu('500m'), spec: { affinity: nodeAffinity({ preferred: [{ weight: 50, match: [inReq(ZONE, D)] }] }) } }] },
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large']);
      expect([A, B, C]).toContain(v.zones()[0]);
      expect(v.scheduled('web')).toHaveLength(1);
      expect(v.pendingPods()).toEqual([]);
    },
  },
  {
    name: 'node-affinity-preferred-heaviest-relaxed-first',
    constraint: 'node affinity (preferred, relaxed one at a time)',
    expectation: 'weight 80 (zone d) impossible and dropped first; weight 20 (zone b) then honoured: 1 m5.large in us-west-2b',
    scenario: {
      pools: [m5()],
      workloads: [
        {
          name: 'web',
          requests: cpu('500m'),
          spec: { affinity: nodeAffinity({ preferred: [{ weight: 20, match: [inReq(ZONE, B)] }, { weight: 80, match: [inReq(ZONE, D)] }] }) },
        },
      ],
    },
    // preferences.go removePreferredNodeAffinityTerm sorts by weight descending and removes one term per retry.
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large']);
      expect(v.zones()).toEqual([B]);
    },
  },
  {
    name: 'node-affinity-preferred-size-honoured-over-cheaper',
    constraint: 'node affinity (preferred)',
    expectation: 'preference instance-size 2xlarge is honoured although m5.large would fit: 1 m5.2xlarge',
    scenario: {
      pools: [m5()],
      workloads: [{ name: 'web', requests: cpu('500m'), spec: { affinity: nodeAffinity({ preferred: [{ weight: 10, match: [inReq('karpenter.k8s.aws/instance-size', '2xlarge')] }] }) } }],
    },
    expect: (v) => expect(v.types()).toEqual(['m5.2xlarge']),
  },

  // =================================================================================================================
  // Pod affinity and anti-affinity, required and preferred, on hostname and zone, against running pods and pods of
  // the same solve (docs/karpenter-semantics.md#topology; topologygroup.go nextDomainAffinity /
  // nextDomainAntiAffinity; topology.go inverse anti-affinity).
  // =================================================================================================================
  {
    name: 'pod-anti-affinity-required-hostname-self',
    constraint: 'pod anti-affinity (required, hostname, same solve)',
    expectation: '3 replicas that would share one m5.large get one node each: 3 m5.large, 1 pod per node',
    scenario: { pools: [m5()], workloads: [{ name: 'web', replicas: 3, requests: cpu('500m'), spec: { affinity: podAffinity('podAntiAffinity', { required: [term(HOST, 'web')] }) } }] },
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large', 'm5.large', 'm5.large']);
      expect(v.nodesOf('web')).toHaveLength(3);
      expect(maxPerNode(v, 'web')).toBe(1);
    },
  },
  {
    name: 'pod-anti-affinity-required-zone-self',
    pending: 1,
    constraint: 'pod anti-affinity (required, zone, same solve)',
    expectation: '4 replicas, 3 zones: one pod in each of a, b, c (3 m5.large), the 4th pending for anti-affinity',
    scenario: {
      pools: [m5()],
      duration: '1h',
      workloads: [{ name: 'web', replicas: 4, requests: cpu('500m'), spec: { affinity: podAffinity('podAntiAffinity', { required: [term(ZONE, 'web')] }) } }],
    },
    // Karpenter commits zones late, so this can take several provisioning passes (topology_test.go "should support
    // pod anti-affinity with a zone topology": one more zone per pass); the run is 1h so all passes happen.
    expect: (v) => {
      expect(v.launched()).toHaveLength(3);
      expect(v.distinctZones()).toEqual([A, B, C]);
      expect(v.perZone('web')).toEqual({ [A]: 1, [B]: 1, [C]: 1 });
      expect(v.pending('web')).toHaveLength(1);
      expect(v.pending('web')[0]!.reason).toMatch(AFFINITY_REASON);
    },
  },
  {
    name: 'pod-anti-affinity-required-zone-vs-running-pod',
    constraint: 'pod anti-affinity (required, zone, running pods)',
    expectation: 'existing node in zone a runs app=db; web avoids zone a although the node has room: 1 m5.large in b or c',
    scenario: {
      pools: [m5()],
      nodes: [{ name: 'n1', instanceType: 'm5.xlarge', zone: A, nodePool: 'general' }],
      workloads: [
        { kind: 'Pod', name: 'db', requests: cpu('500m'), spec: { nodeName: 'n1' } },
        { name: 'web', replicas: 2, requests: cpu('500m'), spec: { affinity: podAffinity('podAntiAffinity', { required: [term(ZONE, 'db')] }) } },
      ],
    },
    // Both web pods (2 × 500m) fit one m5.large; they do not select each other, so they may share it.
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large']);
      expect([B, C]).toContain(v.zones()[0]);
      expect(v.podZones('web')).toHaveLength(2);
      expect(v.podZones('web')).not.toContain(A);
    },
  },
  {
    name: 'pod-anti-affinity-inverse-from-running-pod',
    constraint: 'pod anti-affinity (required, hostname, running pods — symmetric)',
    expectation: 'a running pod on n1 repels app=web by hostname; web has no terms of its own yet avoids n1: 1 new node',
    scenario: {
      pools: [m5()],
      nodes: [{ name: 'n1', instanceType: 'm5.xlarge', zone: A, nodePool: 'general' }],
      workloads: [
        { kind: 'Pod', name: 'db', requests: cpu('500m'), spec: { nodeName: 'n1', affinity: podAffinity('podAntiAffinity', { required: [term(HOST, 'web')] }) } },
        { name: 'web', requests: cpu('500m') },
      ],
    },
    // kube-scheduler checks existing pods' required anti-affinity against the incoming pod; Karpenter tracks these
    // as inverse anti-affinities (topology.go updateInverseAffinities).
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large']);
      expect(v.scheduled('web')).toHaveLength(1);
      expect(v.scheduled('web')[0]!.node).not.toBe('n1');
    },
  },
  {
    name: 'pod-affinity-required-zone-to-running-pod',
    constraint: 'pod affinity (required, zone, running pods)',
    expectation: 'cache runs on a full node in zone b; api must join its zone: 1 m5.large in us-west-2b holding both api pods',
    scenario: {
      pools: [m5()],
      nodes: [{ name: 'n1', instanceType: 'm5.large', zone: B, nodePool: 'general' }],
      workloads: [
        { kind: 'Pod', name: 'cache', requests: cpu('1800m'), spec: { nodeName: 'n1' } },
        { name: 'api', replicas: 2, requests: cpu('500m'), spec: { affinity: podAffinity('podAffinity', { required: [term(ZONE, 'cache')] }) } },
      ],
    },
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large']);
      expect(v.zones()).toEqual([B]);
      expect(v.podZones('api')).toEqual([B, B]);
    },
  },
  {
    name: 'pod-affinity-required-hostname-to-running-pod-with-room',
    constraint: 'pod affinity (required, hostname, running pods)',
    expectation: 'cache runs on n1, which has room: both api pods join n1, nothing launched',
    scenario: {
      pools: [m5()],
      nodes: [{ name: 'n1', instanceType: 'm5.xlarge', zone: A, nodePool: 'general' }],
      workloads: [
        { kind: 'Pod', name: 'cache', requests: cpu('500m'), spec: { nodeName: 'n1' } },
        { name: 'api', replicas: 2, requests: cpu('500m'), spec: { affinity: podAffinity('podAffinity', { required: [term(HOST, 'cache')] }) } },
      ],
    },
    expect: (v) => {
      expect(v.launched()).toHaveLength(0);
      expect(v.nodesOf('api')).toEqual(['n1']);
    },
  },
  {
    name: 'pod-affinity-required-hostname-to-running-pod-full',
    pending: 1,
    constraint: 'pod affinity (required, hostname, running pods)',
    expectation: 'cache runs on a full n1: no new node can host api next to it, so nothing is launched and api stays pending',
    scenario: {
      pools: [m5()],
      nodes: [{ name: 'n1', instanceType: 'm5.large', zone: A, nodePool: 'general' }],
      workloads: [
        { kind: 'Pod', name: 'cache', requests: cpu('1800m'), spec: { nodeName: 'n1' } },
        { name: 'api', requests: cpu('500m'), spec: { affinity: podAffinity('podAffinity', { required: [term(HOST, 'cache')] }) } },
      ],
    },
    // A new NodeClaim is a new hostname domain with count 0; api does not select itself, so it cannot bootstrap one.
    expect: (v) => {
      expect(v.launched()).toHaveLength(0);
      expect(v.pending('api')).toHaveLength(1);
      expect(v.pending('api')[0]!.reason).toMatch(AFFINITY_REASON);
    },
  },
  {
    name: 'pod-affinity-required-zone-self',
    constraint: 'pod affinity (required, zone, same solve)',
    expectation: '3 replicas with self zone affinity bootstrap one zone: 3 m5.large, all in the same zone',
    scenario: { pools: [large()], workloads: [{ name: 'web', replicas: 3, requests: cpu('1200m'), spec: { affinity: podAffinity('podAffinity', { required: [term(ZONE, 'web')] }) } }] },
    // The first self-selecting pod picks a domain (nextDomainAffinity), the others must follow it.
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large', 'm5.large', 'm5.large']);
      expect(v.distinctZones()).toHaveLength(1);
      expect(new Set(v.podZones('web')).size).toBe(1);
      expect(v.scheduled('web')).toHaveLength(3);
    },
  },
  {
    name: 'pod-affinity-required-zone-cross-workload-same-solve',
    constraint: 'pod affinity (required, zone, same solve)',
    expectation: 'frontend needs the zone of backend, pending in the same batch: every frontend pod lands in a zone running backend, 4 m5.large, nothing pending',
    scenario: {
      pools: [large()],
      duration: '1h',
      workloads: [
        { name: 'backend', replicas: 2, requests: cpu('1200m') },
        { name: 'frontend', replicas: 2, requests: cpu('1200m'), spec: { affinity: podAffinity('podAffinity', { required: [term(ZONE, 'backend')] }) } },
      ],
    },
    // topology_test.go "should support pod affinity with zone topology (unconstrained target)": the target's zone is
    // only known once its node is created, so frontend may need a second pass.
    expect: (v) => {
      expect(v.launched()).toHaveLength(4);
      expect(v.pendingPods()).toEqual([]);
      const backendZones = new Set(v.podZones('backend'));
      expect(v.podZones('frontend')).toHaveLength(2);
      for (const z of v.podZones('frontend')) expect(backendZones).toContain(z);
    },
  },
  {
    name: 'pod-affinity-required-zone-cross-workload-constrained-target',
    constraint: 'pod affinity (required, zone, same solve)',
    expectation: 'backend is pinned to zone c, frontend follows it within the same batch: 4 m5.large, all in us-west-2c',
    scenario: {
      pools: [large()],
      workloads: [
        { name: 'backend', replicas: 2, requests: cpu('1200m'), spec: { affinity: nodeAffinity({ required: [[inReq(ZONE, C)]] }) } },
        { name: 'frontend', replicas: 2, requests: cpu('1200m'), spec: { affinity: podAffinity('podAffinity', { required: [term(ZONE, 'backend')] }) } },
      ],
    },
    // topology_test.go "should support pod affinity with zone topology (constrained target)".
    expect: (v) => {
      expect(v.zones()).toEqual([C, C, C, C]);
      expect(v.podZones('frontend')).toEqual([C, C]);
    },
  },
  {
    name: 'pod-affinity-required-beats-schedule-anyway-spread',
    constraint: 'pod affinity (required) vs topology spread (ScheduleAnyway): relaxation order',
    expectation: 'required self zone affinity and a ScheduleAnyway zone spread conflict; only the spread can be relaxed: 3 m5.large in one zone',
    scenario: {
      pools: [large()],
      workloads: [
        {
          name: 'web',
          replicas: 3,
          requests: cpu('1200m'),
          spec: {
            affinity: podAffinity('podAffinity', { required: [term(ZONE, 'web')] }),
            topologySpreadConstraints: [spread(ZONE, 1, 'web', { whenUnsatisfiable: 'ScheduleAnyway' })],
          },
        },
      ],
    },
    expect: (v) => {
      expect(v.launched()).toHaveLength(3);
      expect(v.distinctZones()).toHaveLength(1);
      expect(v.scheduled('web')).toHaveLength(3);
    },
  },
  {
    name: 'pod-affinity-preferred-relaxed-before-schedule-anyway-spread',
    constraint: 'pod affinity (preferred) vs topology spread (ScheduleAnyway): relaxation order',
    expectation: 'preferred self zone affinity conflicts with a ScheduleAnyway zone spread; the preferred affinity is relaxed first (step 2 before step 5): 2 m5.large in 2 zones',
    scenario: {
      pools: [large()],
      workloads: [
        {
          name: 'web',
          replicas: 2,
          requests: cpu('1200m'),
          spec: {
            affinity: podAffinity('podAffinity', { preferred: [{ weight: 100, term: term(ZONE, 'web') }] }),
            topologySpreadConstraints: [spread(ZONE, 1, 'web', { whenUnsatisfiable: 'ScheduleAnyway' })],
          },
        },
      ],
    },
    // docs/karpenter-semantics.md#preference-relaxation: relaxation drops the heaviest preferred podAffinity term
    // (step 2) before any ScheduleAnyway constraint (step 5), so the spread survives and the pods land in different zones.
    expect: (v) => {
      expect(v.launched()).toHaveLength(2);
      expect(v.distinctZones()).toHaveLength(2);
    },
  },
  {
    name: 'pod-anti-affinity-preferred-zone-vs-running-pod',
    constraint: 'pod anti-affinity (preferred, zone, running pods)',
    expectation: 'db runs on a full node in zone a; web prefers to avoid its zone, which is possible: 1 m5.large in b or c',
    scenario: {
      pools: [m5()],
      nodes: [{ name: 'n1', instanceType: 'm5.large', zone: A, nodePool: 'general' }],
      workloads: [
        { kind: 'Pod', name: 'db', requests: cpu('1800m'), spec: { nodeName: 'n1' } },
        { name: 'web', requests: cpu('500m'), spec: { affinity: podAffinity('podAntiAffinity', { preferred: [{ weight: 100, term: term(ZONE, 'db') }] }) } },
      ],
    },
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large']);
      expect([B, C]).toContain(v.zones()[0]);
    },
  },
  {
    name: 'pod-affinity-preferred-zone-to-running-pod',
    constraint: 'pod affinity (preferred, zone, running pods)',
    expectation: 'cache runs on a full node in zone c; api prefers its zone, which is possible: 1 m5.large in us-west-2c',
    scenario: {
      pools: [m5()],
      nodes: [{ name: 'n1', instanceType: 'm5.large', zone: C, nodePool: 'general' }],
      workloads: [
        { kind: 'Pod', name: 'cache', requests: cpu('1800m'), spec: { nodeName: 'n1' } },
        { name: 'api', requests: cpu('500m'), spec: { affinity: podAffinity('podAffinity', { preferred: [{ weight: 100, term: term(ZONE, 'cache') }] }) } },
      ],
    },
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large']);
      expect(v.zones()).toEqual([C]);
    },
  },
  {
    name: 'pod-affinity-required-hostname-cross-workload-same-solve',
    constraint: 'pod affinity (required, hostname, same solve)',
    expectation: 'b must share a node with a (both pending): 1 m5.large hosting both',
    scenario: {
      pools: [m5()],
      workloads: [
        { name: 'alpha', requests: cpu('500m') },
        { name: 'beta', requests: cpu('500m'), spec: { affinity: podAffinity('podAffinity', { required: [term(HOST, 'alpha')] }) } },
      ],
    },
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large']);
      expect(v.nodesOf('alpha', 'beta')).toHaveLength(1);
      expect(v.pendingPods()).toEqual([]);
    },
  },
  {
    name: 'pod-anti-affinity-required-hostname-cross-workload-same-solve',
    constraint: 'pod anti-affinity (required, hostname, same solve)',
    expectation: 'b must not share a node with a, though both would fit one: 2 m5.large, a and b apart',
    scenario: {
      pools: [m5()],
      workloads: [
        { name: 'alpha', requests: cpu('500m') },
        { name: 'beta', requests: cpu('500m'), spec: { affinity: podAffinity('podAntiAffinity', { required: [term(HOST, 'alpha')] }) } },
      ],
    },
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large', 'm5.large']);
      expect(v.scheduled('alpha')[0]!.node).not.toBe(v.scheduled('beta')[0]!.node);
    },
  },
  {
    name: 'pod-affinity-preferred-zone-self-honoured',
    constraint: 'pod affinity (preferred)',
    expectation: 'preferred self zone affinity is satisfiable, so honoured: 2 m5.large in one zone',
    scenario: {
      pools: [large()],
      workloads: [{ name: 'web', replicas: 2, requests: cpu('1200m'), spec: { affinity: podAffinity('podAffinity', { preferred: [{ weight: 100, term: term(ZONE, 'web') }] }) } }],
    },
    // Karpenter builds topology groups from required and preferred terms alike (topology.go newForAffinities) and
    // only drops a preferred term when the pod fails (preferences.go removePreferredPodAffinityTerm).
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large', 'm5.large']);
      expect(v.distinctZones()).toHaveLength(1);
    },
  },
  {
    name: 'pod-anti-affinity-preferred-hostname-honoured',
    constraint: 'pod anti-affinity (preferred)',
    expectation: 'preferred self anti-affinity is satisfiable with new nodes, so honoured: 3 m5.large, 1 pod each',
    scenario: {
      pools: [m5()],
      workloads: [{ name: 'web', replicas: 3, requests: cpu('500m'), spec: { affinity: podAffinity('podAntiAffinity', { preferred: [{ weight: 100, term: term(HOST, 'web') }] }) } }],
    },
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large', 'm5.large', 'm5.large']);
      expect(maxPerNode(v, 'web')).toBe(1);
    },
  },
  {
    name: 'pod-anti-affinity-preferred-relaxed-at-node-limit',
    constraint: 'pod anti-affinity (preferred, relaxed when it blocks)',
    expectation: 'limits.nodes 3 stops a 4th node, so the 4th pod drops its preference and shares: 3 m5.large, all 4 running',
    scenario: {
      pools: [m5({ limits: { nodes: '3' } })],
      workloads: [{ name: 'web', replicas: 4, requests: cpu('500m'), spec: { affinity: podAffinity('podAntiAffinity', { preferred: [{ weight: 100, term: term(HOST, 'web') }] }) } }],
    },
    // docs/karpenter-semantics.md#preference-relaxation step 3 (drop the heaviest preferred podAntiAffinity term);
    // 2 × 500m fit m5.large.
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large', 'm5.large', 'm5.large']);
      expect(v.scheduled('web')).toHaveLength(4);
      expect(v.nodesOf('web')).toHaveLength(3);
      expect(v.result.violations.limits).toBe(0);
    },
  },
  {
    name: 'pod-affinity-preferred-missing-target-relaxed',
    constraint: 'pod affinity (preferred, relaxed when it blocks)',
    expectation: 'preferred affinity to pods that do not exist is dropped: 1 m5.large, pod running',
    scenario: { pools: [m5()], workloads: [{ name: 'web', requests: cpu('500m'), spec: { affinity: podAffinity('podAffinity', { preferred: [{ weight: 100, term: term(ZONE, 'ghost') }] }) } }] },
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large']);
      expect(v.scheduled('web')).toHaveLength(1);
    },
  },

  // =================================================================================================================
  // Topology spread constraints (docs/karpenter-semantics.md#topology: zone, hostname, capacity type;
  // minDomains, nodeTaintsPolicy, nodeAffinityPolicy and matchLabelKeys honoured).
  // =================================================================================================================
  {
    name: 'spread-zone-three-replicas',
    constraint: 'topology spread (zone, maxSkew 1)',
    expectation: '3 replicas over zones a, b, c (all empty, count 0): 3 m5.large, one per zone',
    scenario: { pools: [m5()], workloads: [{ name: 'web', replicas: 3, requests: cpu('800m'), spec: { topologySpreadConstraints: [spread(ZONE, 1, 'web')] } }] },
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large', 'm5.large', 'm5.large']);
      expect(v.zones()).toEqual([A, B, C]);
      expect(v.perZone('web')).toEqual({ [A]: 1, [B]: 1, [C]: 1 });
    },
  },
  {
    name: 'spread-zone-six-replicas',
    constraint: 'topology spread (zone, maxSkew 1)',
    expectation: '6 × 800m: 2 per zone; pods 4–6 join the zone NodeClaims (2 fit an m5.large): 3 m5.large',
    scenario: { pools: [m5()], workloads: [{ name: 'web', replicas: 6, requests: cpu('800m'), spec: { topologySpreadConstraints: [spread(ZONE, 1, 'web')] } }] },
    // In-flight NodeClaims are tried before new ones (docs/karpenter-semantics.md#placement-order).
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large', 'm5.large', 'm5.large']);
      expect(v.distinctZones()).toEqual([A, B, C]);
      expect(v.perZone('web')).toEqual({ [A]: 2, [B]: 2, [C]: 2 });
    },
  },
  {
    name: 'spread-zone-existing-pod-counts-empty-zones-count',
    constraint: 'topology spread (zone, running pods, empty zones count as 0)',
    expectation: 'one replica fits the existing node in zone a; the other must go to an empty zone: 1 m5.large in b or c',
    scenario: {
      pools: [large()],
      nodes: [{ name: 'n1', instanceType: 'm5.large', zone: A, nodePool: 'general' }],
      workloads: [{ name: 'web', replicas: 2, requests: cpu('1200m'), spec: { topologySpreadConstraints: [spread(ZONE, 1, 'web')] } }],
    },
    // With a = 1 and the NodePool's empty zones b, c at 0, a second pod in zone a would make skew 2.
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large']);
      expect([B, C]).toContain(v.zones()[0]);
      expect(v.nodesOf('web')).toContain('n1');
      expect(v.podZones('web')).toEqual([A, v.zones()[0]].sort());
    },
  },
  {
    name: 'spread-zone-maxskew-2',
    constraint: 'topology spread (zone, maxSkew 2)',
    expectation: '4 × 800m with maxSkew 2: 2 zones with 2 pods each (skew 2 vs the empty zone): 2 m5.large',
    scenario: { pools: [m5()], workloads: [{ name: 'web', replicas: 4, requests: cpu('800m'), spec: { topologySpreadConstraints: [spread(ZONE, 2, 'web')] } }] },
    // Pod 2 may join NodeClaim 1 (count 2 − min 0 ≤ 2), pod 3 may not (3 − 0 > 2) and opens a second zone, pod 4
    // joins NodeClaim 2 (fewest pods first).
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large', 'm5.large']);
      expect(v.distinctZones()).toHaveLength(2);
      expect(Object.values(v.perZone('web'))).toEqual([2, 2]);
    },
  },
  {
    name: 'spread-hostname-maxskew-1',
    constraint: 'topology spread (hostname, maxSkew 1)',
    expectation: 'each new NodeClaim is a hostname domain and the minimum is 0: 4 replicas → 4 m5.large, 1 pod each',
    scenario: { pools: [m5()], workloads: [{ name: 'web', replicas: 4, requests: cpu('500m'), spec: { topologySpreadConstraints: [spread(HOST, 1, 'web')] } }] },
    expect: (v) => {
      expect(v.launched()).toHaveLength(4);
      expect(maxPerNode(v, 'web')).toBe(1);
    },
  },
  {
    name: 'spread-hostname-maxskew-2',
    constraint: 'topology spread (hostname, maxSkew 2)',
    expectation: 'maxSkew 2 on hostname: at most 2 per node: 4 replicas → 2 m5.large with 2 pods each',
    scenario: { pools: [m5()], workloads: [{ name: 'web', replicas: 4, requests: cpu('500m'), spec: { topologySpreadConstraints: [spread(HOST, 2, 'web')] } }] },
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large', 'm5.large']);
      expect(maxPerNode(v, 'web')).toBe(2);
      expect(v.scheduled('web')).toHaveLength(4);
    },
  },
  {
    name: 'spread-zone-schedule-anyway-relaxed',
    constraint: 'topology spread (whenUnsatisfiable ScheduleAnyway)',
    expectation: 'a tainted NodePool adds zone d as an empty domain; the 4th pod cannot satisfy skew, the ScheduleAnyway constraint is dropped: 4 m5.large in a/b/c, none pending',
    scenario: {
      pools: [large(), large({ name: 'dedicated', zones: [D], taints: [{ key: 'dedicated', value: 'infra', effect: 'NoSchedule' }] })],
      workloads: [{ name: 'web', replicas: 4, requests: cpu('1200m'), spec: { topologySpreadConstraints: [spread(ZONE, 1, 'web', { whenUnsatisfiable: 'ScheduleAnyway' })] } }],
    },
    // docs/karpenter-semantics.md#preference-relaxation step 5 (drop a ScheduleAnyway constraint).
    expect: (v) => {
      expect(v.launched('general')).toHaveLength(4);
      expect(v.launched('dedicated')).toHaveLength(0);
      expect(v.distinctZones()).toEqual([A, B, C]);
      expect(v.pendingPods()).toEqual([]);
    },
  },
  {
    name: 'spread-zone-node-taints-policy-ignore',
    pending: 1,
    constraint: 'topology spread (nodeTaintsPolicy Ignore, the default)',
    expectation: 'zone d of a NodePool the pods do not tolerate still counts (0): one pod per a, b, c, the 4th pending',
    scenario: {
      pools: [large(), large({ name: 'dedicated', zones: [D], taints: [{ key: 'dedicated', value: 'infra', effect: 'NoSchedule' }] })],
      workloads: [{ name: 'web', replicas: 4, requests: cpu('1200m'), spec: { topologySpreadConstraints: [spread(ZONE, 1, 'web')] } }],
    },
    // Domains come from every NodePool (topology.go buildDomainGroups); with Ignore all of them count
    // (topologydomaingroup.go ForEachDomain), so min stays 0 while zone d is empty.
    expect: (v) => {
      expect(v.launched('general')).toHaveLength(3);
      expect(v.launched('dedicated')).toHaveLength(0);
      expect(v.zones()).toEqual([A, B, C]);
      expect(v.pending('web')).toHaveLength(1);
      expect(v.pending('web')[0]!.reason).toMatch(TOPOLOGY_REASON);
    },
  },
  {
    name: 'spread-zone-node-taints-policy-honor',
    constraint: 'topology spread (nodeTaintsPolicy Honor)',
    expectation: 'with Honor the untolerated zone d is not a domain: 4 m5.large in a/b/c (2-1-1), none pending',
    scenario: {
      pools: [large(), large({ name: 'dedicated', zones: [D], taints: [{ key: 'dedicated', value: 'infra', effect: 'NoSchedule' }] })],
      workloads: [{ name: 'web', replicas: 4, requests: cpu('1200m'), spec: { topologySpreadConstraints: [spread(ZONE, 1, 'web', { nodeTaintsPolicy: 'Honor' })] } }],
    },
    expect: (v) => {
      expect(v.launched('general')).toHaveLength(4);
      expect(v.launched('dedicated')).toHaveLength(0);
      expect(v.distinctZones()).toEqual([A, B, C]);
      expect(Object.values(v.perZone('web')).sort()).toEqual([1, 1, 2]);
      expect(v.pendingPods()).toEqual([]);
    },
  },
  {
    name: 'spread-zone-min-domains',
    pending: 1,
    constraint: 'topology spread (minDomains)',
    expectation: 'NodePool has 2 zones < minDomains 3, so the global minimum is 0: one pod in a, one in b, the 3rd pending',
    scenario: {
      pools: [large({ zones: [A, B] })],
      workloads: [{ name: 'web', replicas: 3, requests: cpu('1200m'), spec: { topologySpreadConstraints: [spread(ZONE, 1, 'web', { minDomains: 3 })] } }],
    },
    // Kubernetes: "when the number of eligible domains is less than minDomains, the global minimum is treated as 0";
    // Karpenter topologygroup.go domainMinCount does the same.
    expect: (v) => {
      expect(v.zones()).toEqual([A, B]);
      expect(v.perZone('web')).toEqual({ [A]: 1, [B]: 1 });
      expect(v.pending('web')).toHaveLength(1);
      expect(v.pending('web')[0]!.reason).toMatch(TOPOLOGY_REASON);
    },
  },
  {
    name: 'spread-zone-without-min-domains',
    constraint: 'topology spread (minDomains absent: baseline)',
    expectation: 'same as above without minDomains: 3 m5.large over a and b (2-1), none pending',
    scenario: { pools: [large({ zones: [A, B] })], workloads: [{ name: 'web', replicas: 3, requests: cpu('1200m'), spec: { topologySpreadConstraints: [spread(ZONE, 1, 'web')] } }] },
    expect: (v) => {
      expect(v.launched()).toHaveLength(3);
      expect(v.distinctZones()).toEqual([A, B]);
      expect(Object.values(v.perZone('web')).sort()).toEqual([1, 2]);
      expect(v.pendingPods()).toEqual([]);
    },
  },
  {
    name: 'spread-zone-node-affinity-policy-honor',
    constraint: 'topology spread (nodeAffinityPolicy Honor, the default)',
    expectation: 'matching pods on a node outside the nodeSelector do not count: one api pod in each of a, b, c',
    scenario: {
      pools: [large({ labels: { 'pool-tier': 'standard' } })],
      nodes: [{ name: 'n1', instanceType: 'm5.large', zone: A, labels: { 'pool-tier': 'legacy' } }],
      workloads: [
        { kind: 'Pod', name: 'legacy-1', labels: { app: 'api', track: 'legacy' }, requests: cpu('800m'), spec: { nodeName: 'n1' } },
        { kind: 'Pod', name: 'legacy-2', labels: { app: 'api', track: 'legacy' }, requests: cpu('800m'), spec: { nodeName: 'n1' } },
        {
          name: 'api',
          replicas: 3,
          labels: { app: 'api', track: 'new' },
          requests: cpu('1200m'),
          spec: { nodeSelector: { 'pool-tier': 'standard' }, topologySpreadConstraints: [spread(ZONE, 1, { app: 'api' })] },
        },
      ],
    },
    expect: (v) => {
      expect(v.zones()).toEqual([A, B, C]);
      expect(v.perZone('api')).toEqual({ [A]: 1, [B]: 1, [C]: 1 });
    },
  },
  {
    name: 'spread-zone-node-affinity-policy-ignore',
    constraint: 'topology spread (nodeAffinityPolicy Ignore)',
    expectation: 'with Ignore the 2 legacy pods in zone a count: api avoids zone a, 3 m5.large over b and c',
    scenario: {
      pools: [large({ labels: { 'pool-tier': 'standard' } })],
      nodes: [{ name: 'n1', instanceType: 'm5.large', zone: A, labels: { 'pool-tier': 'legacy' } }],
      workloads: [
        { kind: 'Pod', name: 'legacy-1', labels: { app: 'api', track: 'legacy' }, requests: cpu('800m'), spec: { nodeName: 'n1' } },
        { kind: 'Pod', name: 'legacy-2', labels: { app: 'api', track: 'legacy' }, requests: cpu('800m'), spec: { nodeName: 'n1' } },
        {
          name: 'api',
          replicas: 3,
          labels: { app: 'api', track: 'new' },
          requests: cpu('1200m'),
          spec: { nodeSelector: { 'pool-tier': 'standard' }, topologySpreadConstraints: [spread(ZONE, 1, { app: 'api' }, { nodeAffinityPolicy: 'Ignore' })] },
        },
      ],
    },
    // a = 2 from the start: pod 1 → b, pod 2 → c, pod 3 → b or c (a would be 3 − 1 = 2 > 1).
    expect: (v) => {
      expect(v.launched()).toHaveLength(3);
      expect(v.distinctZones()).toEqual([B, C]);
      expect(v.podZones('api')).not.toContain(A);
      expect(v.scheduled('api')).toHaveLength(3);
    },
  },
  {
    name: 'spread-zone-match-label-keys',
    constraint: 'topology spread (matchLabelKeys)',
    expectation: 'matchLabelKeys [version] ignores the 2 v1 pods in zone a: the 2 v2 pods go one to a, one to b',
    scenario: {
      pools: [large({ zones: [A, B] })],
      nodes: [{ name: 'n1', instanceType: 'm5.large', zone: A, nodePool: 'general' }],
      workloads: [
        { kind: 'Pod', name: 'web-v1-0', labels: { app: 'web', version: 'v1' }, requests: cpu('900m'), spec: { nodeName: 'n1' } },
        { kind: 'Pod', name: 'web-v1-1', labels: { app: 'web', version: 'v1' }, requests: cpu('900m'), spec: { nodeName: 'n1' } },
        {
          name: 'canary',
          replicas: 2,
          labels: { app: 'web', version: 'v2' },
          requests: cpu('1200m'),
          spec: { topologySpreadConstraints: [spread(ZONE, 1, { app: 'web' }, { matchLabelKeys: ['version'] })] },
        },
      ],
    },
    // Karpenter adds `version In [v2]` to the selector (topology.go newForTopologies).
    expect: (v) => {
      expect(v.launched()).toHaveLength(2);
      expect(v.distinctZones()).toEqual([A, B]);
      expect(v.perZone('canary')).toEqual({ [A]: 1, [B]: 1 });
    },
  },
  {
    name: 'spread-zone-without-match-label-keys',
    constraint: 'topology spread (matchLabelKeys absent: baseline)',
    expectation: 'same without matchLabelKeys: the v1 pods make a = 2, so both v2 pods go to b',
    scenario: {
      pools: [large({ zones: [A, B] })],
      nodes: [{ name: 'n1', instanceType: 'm5.large', zone: A, nodePool: 'general' }],
      workloads: [
        { kind: 'Pod', name: 'web-v1-0', labels: { app: 'web', version: 'v1' }, requests: cpu('900m'), spec: { nodeName: 'n1' } },
        { kind: 'Pod', name: 'web-v1-1', labels: { app: 'web', version: 'v1' }, requests: cpu('900m'), spec: { nodeName: 'n1' } },
        { name: 'canary', replicas: 2, labels: { app: 'web', version: 'v2' }, requests: cpu('1200m'), spec: { topologySpreadConstraints: [spread(ZONE, 1, { app: 'web' })] } },
      ],
    },
    expect: (v) => {
      expect(v.zones()).toEqual([B, B]);
      expect(v.perZone('canary')).toEqual({ [B]: 2 });
    },
  },
  {
    name: 'spread-capacity-type',
    constraint: 'topology spread (karpenter.sh/capacity-type)',
    expectation: 'spread over spot and on-demand: 4 replicas → 2 spot and 2 on-demand m5.large',
    scenario: {
      pools: [large({ capacityTypes: ['spot', 'on-demand'] })],
      workloads: [{ name: 'web', replicas: 4, requests: cpu('1200m'), spec: { topologySpreadConstraints: [spread(CAPACITY_TYPE, 1, 'web')] } }],
    },
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large', 'm5.large', 'm5.large', 'm5.large']);
      expect(v.launched().map((c) => c.capacityType).sort()).toEqual(['on-demand', 'on-demand', 'spot', 'spot']);
      expect(v.pods('web').map((p) => v.nodeOf(p)?.capacityType).sort()).toEqual(['on-demand', 'on-demand', 'spot', 'spot']);
    },
  },

  // =================================================================================================================
  // Taints: NoSchedule, PreferNoSchedule, NoExecute; startupTaints (docs/karpenter-semantics.md#fit-check step 1,
  // docs/karpenter-semantics.md#taints; pkg/scheduling/taints.go checks every effect, PreferNoSchedule included).
  // =================================================================================================================
  {
    name: 'taint-noschedule-untolerated-pool-skipped',
    constraint: 'taints (NoSchedule)',
    expectation: 'the heavier NodePool is tainted and not tolerated: 1 m5.large from NodePool general',
    scenario: {
      pools: [m5({ weight: 10 }), m5({ name: 'dedicated', weight: 50, taints: [{ key: 'dedicated', value: 'infra', effect: 'NoSchedule' }] })],
      workloads: [{ name: 'web', requests: cpu('500m') }],
    },
    expect: (v) => {
      expect(v.launched('general')).toHaveLength(1);
      expect(v.launched('dedicated')).toHaveLength(0);
    },
  },
  {
    name: 'taint-noschedule-tolerated-weight-wins',
    constraint: 'taints (NoSchedule) and NodePool weight',
    expectation: 'the pod tolerates the heavier tainted NodePool: 1 m5.large from dedicated, carrying the taint',
    scenario: {
      pools: [m5({ weight: 10 }), m5({ name: 'dedicated', weight: 50, taints: [{ key: 'dedicated', value: 'infra', effect: 'NoSchedule' }] })],
      workloads: [{ name: 'web', requests: cpu('500m'), spec: { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'infra', effect: 'NoSchedule' }] } }],
    },
    expect: (v) => {
      expect(v.launched('dedicated')).toHaveLength(1);
      expect(v.launched('general')).toHaveLength(0);
      expect(v.launched('dedicated')[0]!.taints).toContainEqual(expect.objectContaining({ key: 'dedicated', effect: 'NoSchedule' }));
    },
  },
  {
    name: 'taint-noexecute',
    pending: 1,
    constraint: 'taints (NoExecute)',
    expectation: 'only NodePool is tainted NoExecute: the tolerating pod gets 1 m5.large, the other stays pending (reason: taint)',
    scenario: {
      pools: [m5({ taints: [{ key: 'isolated', value: 'true', effect: 'NoExecute' }] })],
      workloads: [
        { name: 'tolerant', requests: cpu('500m'), spec: { tolerations: [{ key: 'isolated', operator: 'Exists', effect: 'NoExecute' }] } },
        { name: 'intolerant', requests: cpu('500m') },
      ],
    },
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large']);
      expect(v.scheduled('tolerant')).toHaveLength(1);
      expect(v.pending('intolerant')).toHaveLength(1);
      expect(v.pending('intolerant')[0]!.reason).toMatch(/taint|tolerat/i);
    },
  },
  {
    name: 'taint-prefernoschedule-avoided',
    constraint: 'taints (PreferNoSchedule)',
    expectation: 'a PreferNoSchedule NodePool is avoided while an untainted one can serve: 1 m5.large from plain',
    scenario: {
      pools: [m5({ name: 'soft', weight: 50, taints: [{ key: 'example.com/soft', effect: 'PreferNoSchedule' }] }), m5({ name: 'plain', weight: 10 })],
      workloads: [{ name: 'web', requests: cpu('500m') }],
    },
    // Karpenter's taint check covers PreferNoSchedule; tolerating it is the last relaxation
    // (docs/karpenter-semantics.md#preference-relaxation step 6).
    expect: (v) => {
      expect(v.launched('plain')).toHaveLength(1);
      expect(v.launched('soft')).toHaveLength(0);
    },
  },
  {
    name: 'taint-prefernoschedule-relaxed',
    constraint: 'taints (PreferNoSchedule)',
    expectation: 'the only NodePool has a PreferNoSchedule taint: tolerated after relaxation, 1 m5.large from soft, pod running',
    scenario: { pools: [m5({ name: 'soft', taints: [{ key: 'example.com/soft', effect: 'PreferNoSchedule' }] })], workloads: [{ name: 'web', requests: cpu('500m') }] },
    expect: (v) => {
      expect(v.launched('soft')).toHaveLength(1);
      expect(v.scheduled('web')).toHaveLength(1);
    },
  },
  {
    name: 'taint-startup-ignored-never-relaunch',
    constraint: 'NodePool startupTaints',
    expectation: 'startup taint ignored for fit; a pod arriving while the node still has it joins that node: 1 m5.large for 2 pods',
    scenario: {
      pools: [m5({ startupTaints: [{ key: 'example.com/agent-not-ready', effect: 'NoSchedule' }] })],
      workloads: [{ name: 'web', requests: cpu('500m') }],
      // The NodeClaim launches at ~1s, its node registers (NotReady, startup taint on) ~45s later; scale at 50s.
      events: [{ at: '50s', scale: { kind: 'Deployment', name: 'web', replicas: 2 } }],
    },
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large']);
      expect(v.scheduled('web')).toHaveLength(2);
      expect(v.nodesOf('web')).toHaveLength(1);
    },
  },
  {
    name: 'taint-existing-node-untolerated',
    constraint: 'taints (NoSchedule) on an existing node',
    expectation: 'existing node with room is tainted and not tolerated: 1 new m5.large, pod not on n1',
    scenario: {
      pools: [m5()],
      nodes: [{ name: 'n1', instanceType: 'm5.xlarge', zone: A, taints: [{ key: 'maintenance', value: 'true', effect: 'NoSchedule' }] }],
      workloads: [{ name: 'web', requests: cpu('500m') }],
    },
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large']);
      expect(v.nodesOf('web')).not.toContain('n1');
      expect(v.scheduled('web')).toHaveLength(1);
    },
  },

  // =================================================================================================================
  // Effective requests (k8s.io/component-helpers resource.PodRequests): max(Σ containers + Σ sidecars, max over init
  // containers of (request + sidecars started before it)) + overhead. Extended resources, ephemeral storage, host
  // ports, max pods (docs/karpenter-semantics.md#fit-check, docs/karpenter-semantics.md#allocatable,
  // docs/karpenter-semantics.md#max-pods).
  // =================================================================================================================
  {
    name: 'requests-init-container-dominates',
    constraint: 'effective requests (init containers)',
    expectation: 'app 1 cpu, init 3 cpu → 3 cpu effective: m5.xlarge (m5.large has 1930m)',
    scenario: {
      pools: [m5()],
      workloads: [{ name: 'web', requests: cpu('1'), spec: { initContainers: [{ name: 'migrate', image: 'busybox', resources: { requests: cpu('3') } }] } }],
    },
    expect: (v) => expect(v.types()).toEqual(['m5.xlarge']),
  },
  {
    name: 'requests-sidecar-then-init',
    constraint: 'effective requests (restartable sidecar init containers)',
    expectation: 'sidecar 1 cpu runs while init 1.5 cpu runs: max(1+1, 1.5+1) = 2.5 cpu → m5.xlarge',
    scenario: {
      pools: [m5()],
      workloads: [
        {
          name: 'web',
          requests: cpu('1'),
          spec: {
            initContainers: [
              { name: 'proxy', image: 'envoy', restartPolicy: 'Always', resources: { requests: cpu('1') } },
              { name: 'migrate', image: 'busybox', resources: { requests: cpu('1500m') } },
            ],
          },
        },
      ],
    },
    // Treating the sidecar as an ordinary init container would give max(1, 1, 1.5) = 1.5 cpu → m5.large.
    expect: (v) => expect(v.types()).toEqual(['m5.xlarge']),
  },
  {
    name: 'requests-sidecar-adds-to-app',
    constraint: 'effective requests (restartable sidecar init containers)',
    expectation: 'sidecar 800m keeps running beside app 1200m: 2 cpu → m5.xlarge',
    scenario: {
      pools: [m5()],
      workloads: [{ name: 'web', requests: cpu('1200m'), spec: { initContainers: [{ name: 'proxy', image: 'envoy', restartPolicy: 'Always', resources: { requests: cpu('800m') } }] } }],
    },
    expect: (v) => expect(v.types()).toEqual(['m5.xlarge']),
  },
  {
    name: 'requests-pod-overhead',
    constraint: 'effective requests (pod overhead)',
    expectation: '1800m + overhead 200m = 2 cpu > 1930m: m5.xlarge',
    scenario: { pools: [m5()], workloads: [{ name: 'web', requests: cpu('1800m'), spec: { overhead: { cpu: '200m', memory: '64Mi' } } }] },
    // NOTE: RuntimeClass is not a scenario kind, so the pod carries spec.overhead as RuntimeClass admission would set it.
    expect: (v) => expect(v.types()).toEqual(['m5.xlarge']),
  },
  {
    name: 'ephemeral-storage-root-volume-100gi',
    constraint: 'ephemeral-storage (root volume from blockDeviceMappings)',
    expectation: '50Gi ephemeral fits a 100Gi root volume (102400 − 1024 − 10240 = 91136Mi): 1 m5.large',
    scenario: {
      nodeClasses: [{ name: 'bigdisk', blockDeviceMappings: [{ deviceName: '/dev/xvda', ebs: { volumeSize: '100Gi', volumeType: 'gp3' } }] }],
      pools: [m5({ nodeClass: 'bigdisk' })],
      workloads: [{ name: 'web', requests: { cpu: '500m', memory: '512Mi', 'ephemeral-storage': '50Gi' } }],
    },
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large']);
      expect(v.scheduled('web')).toHaveLength(1);
    },
  },
  {
    name: 'ephemeral-storage-default-root-volume-too-small',
    pending: 1,
    constraint: 'ephemeral-storage (default 20Gi root volume)',
    expectation: '50Gi ephemeral exceeds the 17408Mi every type gets from the default 20Gi volume: nothing launched, pending',
    scenario: { pools: [m5()], workloads: [{ name: 'web', requests: { cpu: '500m', memory: '512Mi', 'ephemeral-storage': '50Gi' } }] },
    expect: (v) => {
      expect(v.launched()).toHaveLength(0);
      expect(v.pending('web')).toHaveLength(1);
      expect(v.pending('web')[0]!.reason).toMatch(/ephemeral-storage/);
    },
  },
  {
    name: 'extended-resource-gpu',
    constraint: 'extended resources (nvidia.com/gpu)',
    expectation: '1 GPU + 2 cpu + 8Gi in a NodePool of m5 and g4dn: the cheapest type with a GPU, g4dn.xlarge ($0.526)',
    scenario: {
      pools: [{ name: 'general', families: ['m5', 'g4dn'] }],
      workloads: [{ name: 'infer', requests: { cpu: '2', memory: '8Gi', 'nvidia.com/gpu': '1' }, limits: { 'nvidia.com/gpu': '1' } }],
    },
    expect: (v) => expect(v.types()).toEqual(['g4dn.xlarge']),
  },
  {
    name: 'extended-resource-neuron',
    constraint: 'extended resources (aws.amazon.com/neuron)',
    expectation: '2 Neuron devices: inf1.xlarge/inf2.xlarge have 1; cheapest with ≥ 2 is inf1.6xlarge (4, $1.18) vs inf2.24xlarge ($6.49)',
    scenario: {
      pools: [{ name: 'general', families: ['inf1', 'inf2'] }],
      workloads: [{ name: 'infer', requests: { cpu: '1', memory: '2Gi', 'aws.amazon.com/neuron': '2' }, limits: { 'aws.amazon.com/neuron': '2' } }],
    },
    expect: (v) => expect(v.types()).toEqual(['inf1.6xlarge']),
  },
  {
    name: 'extended-resource-pod-eni',
    constraint: 'extended resources (vpc.amazonaws.com/pod-eni)',
    expectation: 'pod-eni 1 in a NodePool of t3 (no branch ENIs) and c5: c5.large ($0.085), not a cheaper t3',
    scenario: {
      pools: [{ name: 'general', families: ['t3', 'c5'] }],
      workloads: [{ name: 'web', requests: { cpu: '500m', memory: '512Mi', 'vpc.amazonaws.com/pod-eni': '1' }, limits: { 'vpc.amazonaws.com/pod-eni': '1' } }],
    },
    expect: (v) => expect(v.types()).toEqual(['c5.large']),
  },
  {
    name: 'host-port-same-workload',
    constraint: 'hostPorts',
    expectation: '3 replicas binding hostPort 8080 cannot share a node (3 × 500m would fit one): 3 m5.large',
    scenario: { pools: [m5()], workloads: [{ name: 'web', replicas: 3, requests: cpu('500m'), hostPorts: [8080] }] },
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large', 'm5.large', 'm5.large']);
      expect(maxPerNode(v, 'web')).toBe(1);
    },
  },
  {
    name: 'host-port-clash-with-daemonset',
    constraint: 'hostPorts (clash with a DaemonSet)',
    expectation: 'a DaemonSet binds 9100 on c5 nodes; a pod binding 9100 must avoid c5: m5.large ($0.096) instead of c5.large ($0.085)',
    scenario: {
      pools: [{ name: 'general', families: ['c5', 'm5'] }],
      workloads: [
        {
          kind: 'DaemonSet',
          name: 'node-exporter',
          requests: cpu('100m', '64Mi'),
          hostPorts: [9100],
          spec: { affinity: nodeAffinity({ required: [[inReq(FAMILY, 'c5')]] }) },
        },
        { name: 'scraper', requests: cpu('500m', '512Mi'), hostPorts: [9100] },
      ],
    },
    // Karpenter checks host ports per daemon-overhead group (docs/karpenter-semantics.md#fit-check step 6).
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large']);
      expect(v.scheduled('scraper')).toHaveLength(1);
    },
  },
  {
    name: 'max-pods-eni-limit',
    constraint: 'max pods (ENI formula)',
    expectation: 't3.small: 3 ENIs × (4 − 1) + 2 = 11 pods; 12 tiny pods → 2 t3.small, at most 11 pods per node',
    scenario: { pools: [{ name: 'general', types: ['t3.small'] }], workloads: [{ name: 'web', replicas: 12, requests: cpu('50m', '32Mi') }] },
    expect: (v) => {
      expect(v.types()).toEqual(['t3.small', 't3.small']);
      expect(maxPerNode(v, 'web')).toBeLessThanOrEqual(11);
      expect(v.scheduled('web')).toHaveLength(12);
    },
  },
  {
    name: 'max-pods-kubelet-max-pods',
    constraint: 'max pods (EC2NodeClass kubelet.maxPods)',
    expectation: 'kubelet.maxPods 5 on m5.large: 8 tiny pods → 2 m5.large, at most 5 per node',
    scenario: {
      nodeClasses: [{ name: 'dense', kubelet: { maxPods: 5 } }],
      pools: [{ name: 'general', types: ['m5.large'], nodeClass: 'dense' }],
      workloads: [{ name: 'web', replicas: 8, requests: cpu('50m', '64Mi') }],
    },
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large', 'm5.large']);
      expect(maxPerNode(v, 'web')).toBeLessThanOrEqual(5);
      expect(v.scheduled('web')).toHaveLength(8);
    },
  },
  {
    name: 'max-pods-pods-per-core',
    constraint: 'max pods (EC2NodeClass kubelet.podsPerCore)',
    expectation: 'podsPerCore 2 × 2 vCPU = 4 pods on m5.large (below ENI 29): 6 tiny pods → 2 m5.large, at most 4 per node',
    scenario: {
      nodeClasses: [{ name: 'percore', kubelet: { podsPerCore: 2 } }],
      pools: [{ name: 'general', types: ['m5.large'], nodeClass: 'percore' }],
      workloads: [{ name: 'web', replicas: 6, requests: cpu('50m', '64Mi') }],
    },
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large', 'm5.large']);
      expect(maxPerNode(v, 'web')).toBeLessThanOrEqual(4);
      expect(v.scheduled('web')).toHaveLength(6);
    },
  },

  // =================================================================================================================
  // minValues; NodePool template labels (docs/karpenter-semantics.md#fit-check step 8,
  // docs/karpenter-semantics.md#min-values).
  // =================================================================================================================
  {
    name: 'min-values-satisfied',
    constraint: 'minValues on NodePool requirements',
    expectation: 'instance-family In [c5, m5, r5] minValues 3: launched c5.large (cheapest) with options spanning all 3 families',
    scenario: {
      pools: [{ name: 'general', requirements: [{ key: FAMILY, operator: 'In', values: ['c5', 'm5', 'r5'], minValues: 3 }] }],
      workloads: [{ name: 'web', requests: cpu('1', '1Gi') }],
    },
    expect: (v) => {
      expect(v.types()).toEqual(['c5.large']);
      expect(new Set(instanceTypeOptions(v).map(View.family))).toEqual(new Set(['c5', 'm5', 'r5']));
    },
  },
  {
    name: 'min-values-unsatisfiable',
    pending: 1,
    constraint: 'minValues on NodePool requirements',
    expectation: '180Gi fits only m5.16xlarge+ (c5 tops out at 173400Mi): 1 family < minValues 2, nothing launched, pending',
    scenario: {
      pools: [{ name: 'general', requirements: [{ key: FAMILY, operator: 'In', values: ['c5', 'm5'], minValues: 2 }] }],
      workloads: [{ name: 'big', requests: cpu('1', '180Gi') }],
    },
    // MIN_VALUES_POLICY defaults to Strict: the NodeClaim fails (docs/karpenter-semantics.md#min-values).
    expect: (v) => {
      expect(v.launched()).toHaveLength(0);
      expect(v.pending('big')).toHaveLength(1);
      expect(v.pending('big')[0]!.reason).toMatch(/minValues|min values/i);
    },
  },
  {
    name: 'template-labels-satisfy-node-selector',
    constraint: 'NodePool template labels satisfy nodeSelectors',
    expectation: 'nodeSelector team=a matches only NodePool team-a template labels (team-b is heavier): 1 m5.large from team-a labelled team=a',
    scenario: {
      pools: [m5({ name: 'team-a', labels: { team: 'a' } }), m5({ name: 'team-b', weight: 50, labels: { team: 'b' } })],
      workloads: [{ name: 'web', requests: cpu('500m'), spec: { nodeSelector: { team: 'a' } } }],
    },
    expect: (v) => {
      expect(v.launched('team-a')).toHaveLength(1);
      expect(v.launched('team-b')).toHaveLength(0);
      expect(v.launched('team-a')[0]!.labels.team).toBe('a');
    },
  },
  {
    name: 'template-labels-undefined-value',
    pending: 1,
    constraint: 'NodePool template labels satisfy nodeSelectors',
    expectation: 'nodeSelector team=c: no NodePool sets it, nothing launched, pending (reason names team)',
    scenario: {
      pools: [m5({ name: 'team-a', labels: { team: 'a' } }), m5({ name: 'team-b', weight: 50, labels: { team: 'b' } })],
      workloads: [{ name: 'web', requests: cpu('500m'), spec: { nodeSelector: { team: 'c' } } }],
    },
    expect: (v) => {
      expect(v.launched()).toHaveLength(0);
      expect(v.pending('web')).toHaveLength(1);
      expect(v.pending('web')[0]!.reason).toMatch(/team/);
    },
  },

  // =================================================================================================================
  // LimitRange admission (k8s LimitRanger; API defaulting of LimitRange items: default ← max, defaultRequest ←
  // default), StatefulSet and Job pods scheduled like any other.
  // =================================================================================================================
  {
    name: 'limitrange-default-request',
    constraint: 'LimitRange defaults',
    expectation: 'container without requests gets defaultRequest 2500m: m5.xlarge',
    scenario: { pools: [m5()], limitRanges: [{ type: 'Container', defaultRequest: { cpu: '2500m', memory: '512Mi' } }], workloads: [{ name: 'web', requests: null }] },
    expect: (v) => expect(v.types()).toEqual(['m5.xlarge']),
  },
  {
    name: 'limitrange-max-only',
    constraint: 'LimitRange defaults',
    expectation: 'LimitRange with only max cpu 3: the API server defaults default ← max and defaultRequest ← default, so the pod requests 3 cpu: m5.xlarge',
    scenario: { pools: [m5()], limitRanges: [{ type: 'Container', max: { cpu: '3', memory: '4Gi' } }], workloads: [{ name: 'web', requests: null }] },
    // k8s.io/kubernetes pkg/apis/core/v1/defaults.go SetDefaults_LimitRangeItem.
    expect: (v) => expect(v.types()).toEqual(['m5.xlarge']),
  },
  {
    name: 'limitrange-min-only',
    constraint: 'LimitRange defaults',
    expectation: 'LimitRange with only min cpu 2500m: defaultRequest ← min, so the pod requests 2500m: m5.xlarge',
    scenario: { pools: [m5()], limitRanges: [{ type: 'Container', min: { cpu: '2500m' } }], workloads: [{ name: 'web', requests: null }] },
    // Same SetDefaults_LimitRangeItem: "if a default request is not specified, but the min is provided, default
    // request to the min".
    expect: (v) => expect(v.types()).toEqual(['m5.xlarge']),
  },
  {
    name: 'limitrange-limit-without-request',
    constraint: 'LimitRange defaults',
    expectation: 'a container with limit 2500m and no request gets request = limit (API defaulting), not the LimitRange 100m: m5.xlarge',
    scenario: {
      pools: [m5()],
      limitRanges: [{ type: 'Container', defaultRequest: { cpu: '100m' } }],
      workloads: [{ name: 'web', requests: null, limits: { cpu: '2500m', memory: '1Gi' } }],
    },
    expect: (v) => expect(v.types()).toEqual(['m5.xlarge']),
  },
  {
    name: 'limitrange-init-container',
    constraint: 'LimitRange defaults (init containers)',
    expectation: 'LimitRanger also defaults init containers: init gets 3 cpu, app asks 500m → 3 cpu effective: m5.xlarge',
    scenario: {
      pools: [m5()],
      limitRanges: [{ type: 'Container', defaultRequest: { cpu: '3' } }],
      workloads: [{ name: 'web', requests: cpu('500m'), spec: { initContainers: [{ name: 'init', image: 'busybox' }] } }],
    },
    expect: (v) => expect(v.types()).toEqual(['m5.xlarge']),
  },
  {
    name: 'statefulset-zone-spread',
    constraint: 'StatefulSet pods',
    expectation: 'StatefulSet db, 3 replicas spread over zones: db-0..2 in a, b, c on 3 m5.large',
    scenario: { pools: [m5()], workloads: [{ kind: 'StatefulSet', name: 'db', replicas: 3, requests: cpu('800m'), spec: { topologySpreadConstraints: [spread(ZONE, 1, 'db')] } }] },
    expect: (v) => {
      expect(v.pods('db').map((p) => p.name).sort()).toEqual(['db-0', 'db-1', 'db-2']);
      expect(v.zones()).toEqual([A, B, C]);
      expect(v.perZone('db')).toEqual({ [A]: 1, [B]: 1, [C]: 1 });
    },
  },
  {
    name: 'statefulset-anti-affinity',
    constraint: 'StatefulSet pods',
    expectation: 'StatefulSet kv, 2 replicas with hostname anti-affinity: 2 m5.large, one pod each',
    scenario: {
      pools: [m5()],
      workloads: [{ kind: 'StatefulSet', name: 'kv', replicas: 2, requests: cpu('500m'), spec: { affinity: podAffinity('podAntiAffinity', { required: [term(HOST, 'kv')] }) } }],
    },
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large', 'm5.large']);
      expect(maxPerNode(v, 'kv')).toBe(1);
    },
  },
  {
    name: 'job-hostname-spread',
    constraint: 'Job pods',
    expectation: 'Job with parallelism 3 and hostname spread maxSkew 1: 3 m5.large, one pod each',
    scenario: { pools: [m5()], workloads: [{ kind: 'Job', name: 'crunch', replicas: 3, requests: cpu('500m'), spec: { topologySpreadConstraints: [spread(HOST, 1, 'crunch')] } }] },
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large', 'm5.large', 'm5.large']);
      expect(v.scheduled('crunch')).toHaveLength(3);
      expect(maxPerNode(v, 'crunch')).toBe(1);
    },
  },
  {
    name: 'job-on-tainted-labelled-pool',
    constraint: 'Job pods (nodeSelector on template labels + toleration)',
    expectation: 'Job pods select workload-type=batch and tolerate its taint: 1 m5.large from batch holding all 3 (3 × 500m)',
    scenario: {
      pools: [m5(), m5({ name: 'batch', labels: { 'workload-type': 'batch' }, taints: [{ key: 'workload-type', value: 'batch', effect: 'NoSchedule' }] })],
      workloads: [
        {
          kind: 'Job',
          name: 'nightly',
          replicas: 3,
          requests: cpu('500m'),
          spec: { nodeSelector: { 'workload-type': 'batch' }, tolerations: [{ key: 'workload-type', operator: 'Equal', value: 'batch', effect: 'NoSchedule' }] },
        },
      ],
    },
    expect: (v) => {
      expect(v.types('batch')).toEqual(['m5.large']);
      expect(v.launched('general')).toHaveLength(0);
      expect(v.scheduled('nightly')).toHaveLength(3);
    },
  },

  // =================================================================================================================
  // Existing nodes (spec.nodes) and in-flight NodeClaims are filled before anything new is launched
  // (docs/karpenter-semantics.md#placement-order).
  // =================================================================================================================
  {
    name: 'existing-node-filled-first',
    constraint: 'existing nodes',
    expectation: 'existing m5.xlarge has room for 3 × 1 cpu: nothing launched, all on n1',
    scenario: { pools: [m5()], nodes: [{ name: 'n1', instanceType: 'm5.xlarge', zone: A, nodePool: 'general' }], workloads: [{ name: 'web', replicas: 3, requests: cpu('1') }] },
    expect: (v) => {
      expect(v.launched()).toHaveLength(0);
      expect(v.nodesOf('web')).toEqual(['n1']);
    },
  },
  {
    name: 'existing-node-partly-filled',
    constraint: 'existing nodes',
    expectation: 'existing m5.large takes 2 × 800m; the 3rd gets 1 new m5.large',
    scenario: { pools: [m5()], nodes: [{ name: 'n1', instanceType: 'm5.large', zone: A, nodePool: 'general' }], workloads: [{ name: 'web', replicas: 3, requests: cpu('800m') }] },
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large']);
      expect(v.perNode('web').get('n1')).toBe(2);
      expect(v.scheduled('web')).toHaveLength(3);
    },
  },
  {
    name: 'existing-unmanaged-node-filled-first',
    constraint: 'existing nodes (not owned by a NodePool)',
    expectation: 'an unmanaged node with room takes the pods: nothing launched',
    scenario: { pools: [m5()], nodes: [{ name: 'n1', instanceType: 'm5.xlarge', zone: B }], workloads: [{ name: 'web', replicas: 2, requests: cpu('1') }] },
    expect: (v) => {
      expect(v.launched()).toHaveLength(0);
      expect(v.nodesOf('web')).toEqual(['n1']);
    },
  },
  {
    name: 'in-flight-nodeclaim-filled',
    constraint: 'in-flight NodeClaims',
    expectation: 'scale 1 → 3 while the first m5.xlarge is still coming up: the 2 new pods ride on it, 1 NodeClaim in total',
    scenario: {
      pools: [{ name: 'general', types: ['m5.xlarge'] }],
      workloads: [{ name: 'web', requests: cpu('1') }],
      events: [{ at: '20s', scale: { kind: 'Deployment', name: 'web', replicas: 3 } }],
    },
    expect: (v) => {
      expect(v.types()).toEqual(['m5.xlarge']);
      expect(v.scheduled('web')).toHaveLength(3);
      expect(v.nodesOf('web')).toHaveLength(1);
    },
  },
  {
    name: 'in-flight-nodeclaim-overflow',
    constraint: 'in-flight NodeClaims',
    expectation: 'scale 1 → 5 while the first m5.xlarge is coming up: 2 more fit it (3 × 1 cpu ≤ 3920m), 2 need 1 new m5.xlarge',
    scenario: {
      pools: [{ name: 'general', types: ['m5.xlarge'] }],
      workloads: [{ name: 'web', requests: cpu('1') }],
      events: [{ at: '20s', scale: { kind: 'Deployment', name: 'web', replicas: 5 } }],
    },
    expect: (v) => {
      expect(v.types()).toEqual(['m5.xlarge', 'm5.xlarge']);
      expect(v.scheduled('web')).toHaveLength(5);
      expect(v.result.violations.duplicateLaunches).toBe(0);
    },
  },

  // =================================================================================================================
  // Capacity types (docs/karpenter-semantics.md#offerings, getCapacityType: reserved > spot > on-demand).
  // =================================================================================================================
  {
    name: 'capacity-type-spot-preferred',
    constraint: 'capacity types',
    expectation: 'NodePool allows spot and on-demand: 1 spot m5 node',
    scenario: { pools: [m5({ capacityTypes: ['spot', 'on-demand'] })], workloads: [{ name: 'web', requests: cpu('500m') }] },
    // Which m5 size spot lands on is EC2's price-capacity-optimized choice (simulated prices): only the family is asserted.
    expect: (v) => {
      expect(v.launched()).toHaveLength(1);
      expect(v.launched()[0]!.capacityType).toBe('spot');
      expect(View.family(v.launched()[0]!.instanceType)).toBe('m5');
    },
  },
  {
    name: 'capacity-type-node-selector-on-demand',
    constraint: 'capacity types',
    expectation: 'nodeSelector capacity-type=on-demand in a spot+on-demand NodePool: 1 on-demand m5.large',
    scenario: {
      pools: [m5({ capacityTypes: ['spot', 'on-demand'] })],
      workloads: [{ name: 'web', requests: cpu('500m'), spec: { nodeSelector: { [CAPACITY_TYPE]: 'on-demand' } } }],
    },
    expect: (v) => {
      expect(v.types()).toEqual(['m5.large']);
      expect(v.launched()[0]!.capacityType).toBe('on-demand');
    },
  },
];
