/**
 * Seeded random solver inputs with every pod constraint the solver honours, and an independent verification of
 * its plan: each NodeClaim is materialised as the node it would launch as (cheapest option, its pinned or cheapest
 * zone and capacity type), every pod is bound where the plan put it, and the simulation's placement checker
 * (`shared/sim/placement-check.ts`, which shares no code with the solver) must accept every placement.
 */
import type { Taint } from '../../shared/core/api/kubernetes.js';
import { LABEL_CAPACITY_TYPE, LABEL_HOSTNAME, LABEL_ZONE } from '../../shared/core/api/labels.js';
import { cheapestOffering, type InstanceType } from '../../shared/core/instancetypes/offering.js';
import { placedPod, podRequests, toSchedulingPod, type PodSpecLike } from '../../shared/core/provisioning/pod.js';
import { solve } from '../../shared/core/provisioning/scheduler.js';
import type { ExistingCapacity, NodePoolTemplate, SchedulingResults } from '../../shared/core/provisioning/types.js';
import { subtract } from '../../shared/core/resources/resource-list.js';
import { mulberry32 } from '../../shared/ports/ids.js';
import { placementProblem, type MaybeBoundPod, type PlacementNode } from '../../shared/sim/placement-check.js';
import { instanceType, template } from './builders.js';

const ZONES = ['us-west-2a', 'us-west-2b', 'us-west-2c'];
const APPS = ['web', 'api', 'db', 'cache'];

interface RawPod {
  readonly namespace: string;
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly spec: PodSpecLike;
}

/** One generated case. */
export interface ConstrainedCase {
  readonly seed: number;
  readonly templates: NodePoolTemplate[];
  readonly existingNodes: { node: PlacementNode; pods: RawPod[] }[];
  readonly pending: RawPod[];
}

/** What a verification found. */
export interface ConstrainedOutcome {
  readonly placed: number;
  readonly unschedulable: number;
  readonly nodeClaims: number;
  /** One line per breach: `pod on node: why`. Empty when every placement satisfies every constraint. */
  readonly breaches: string[];
}

/** Builds a random case from `seed`. */
export function constrainedCase(seed: number): ConstrainedCase {
  const rnd = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const chance = (p: number) => rnd() < p;
  const zonesOf = () => (chance(0.3) ? ZONES.slice(0, 2) : ZONES);
  const types = (zones: readonly string[]): InstanceType[] => [
    instanceType('c5.large', { cpu: 1930, memory: 3055, price: 0.085, zones }),
    instanceType('m5.large', { cpu: 1930, memory: 6903, price: 0.096, zones }),
    instanceType('m5.xlarge', { cpu: 3920, memory: 14162, price: 0.192, zones }),
    instanceType('m5.2xlarge', { cpu: 7910, memory: 29317, price: 0.384, zones }),
    instanceType('r5.large', { cpu: 1930, memory: 14162, price: 0.126, zones }),
  ];
  const templates: NodePoolTemplate[] = [template('general', types(zonesOf()), chance(0.5) ? { requirements: [{ key: LABEL_CAPACITY_TYPE, operator: 'In', values: ['on-demand'] }] } : {})];
  const dedicatedTaint: Taint = { key: 'dedicated', value: 'db', effect: chance(0.5) ? 'NoSchedule' : 'PreferNoSchedule' };
  if (chance(0.5)) templates.push(template('dedicated', types(zonesOf()), { weight: 10, taints: [dedicatedTaint], labels: { dedicated: 'db' } }));

  const workloads = APPS.filter(() => chance(0.7)).map((app) => {
    const spec: {
      nodeSelector?: Record<string, string>;
      tolerations?: PodSpecLike['tolerations'];
      affinity?: NonNullable<PodSpecLike['affinity']>;
      topologySpreadConstraints?: PodSpecLike['topologySpreadConstraints'];
      hostPort?: number;
    } = {};
    const self = { matchLabels: { app } };
    const key = () => (chance(0.5) ? LABEL_ZONE : LABEL_HOSTNAME);
    if (chance(0.2)) spec.nodeSelector = { [LABEL_ZONE]: pick(ZONES) };
    if (chance(0.3)) spec.tolerations = [{ key: 'dedicated', operator: 'Equal', value: 'db', effect: dedicatedTaint.effect }];
    const affinity: { podAntiAffinity?: object; podAffinity?: object } = {};
    if (chance(0.3)) affinity.podAntiAffinity = { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: key(), labelSelector: self }] };
    else if (chance(0.2)) affinity.podAntiAffinity = { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 50, podAffinityTerm: { topologyKey: key(), labelSelector: self } }] };
    if (chance(0.25)) affinity.podAffinity = { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: key(), labelSelector: { matchLabels: { app: chance(0.5) ? app : pick(APPS) } } }] };
    if (affinity.podAffinity || affinity.podAntiAffinity) spec.affinity = affinity as NonNullable<PodSpecLike['affinity']>;
    if (chance(0.35)) {
      spec.topologySpreadConstraints = [
        {
          maxSkew: chance(0.7) ? 1 : 2,
          topologyKey: key(),
          whenUnsatisfiable: chance(0.8) ? 'DoNotSchedule' : 'ScheduleAnyway',
          labelSelector: self,
          ...(chance(0.2) ? { minDomains: 3 } : {}),
          ...(chance(0.2) ? { nodeTaintsPolicy: 'Honor' as const } : {}),
        },
      ];
    }
    if (chance(0.15)) spec.hostPort = 8000 + APPS.indexOf(app);
    return { app, spec, cpu: pick(['100m', '250m', '500m', '900m', '1500m']), memory: pick(['128Mi', '512Mi', '1Gi', '2Gi']), replicas: 1 + Math.floor(rnd() * 6) };
  });

  const podOf = (app: string, name: string, w: (typeof workloads)[number]): RawPod => ({
    namespace: 'default',
    name,
    labels: { app },
    spec: {
      containers: [{ name: 'main', resources: { requests: { cpu: w.cpu, memory: w.memory } }, ...(w.spec.hostPort ? { ports: [{ containerPort: 80, hostPort: w.spec.hostPort }] } : {}) }],
      ...(w.spec.nodeSelector ? { nodeSelector: w.spec.nodeSelector } : {}),
      ...(w.spec.tolerations ? { tolerations: w.spec.tolerations } : {}),
      ...(w.spec.affinity ? { affinity: w.spec.affinity } : {}),
      ...(w.spec.topologySpreadConstraints ? { topologySpreadConstraints: w.spec.topologySpreadConstraints } : {}),
    },
  });

  // Existing nodes run a few pods of the same workloads (placed without checking: a cluster can start skewed,
  // but never with a running pod breaking a required constraint, so only constraint-free copies run there).
  const existingNodes = Array.from({ length: Math.floor(rnd() * 3) }, (_, i) => {
    const zone = pick(ZONES);
    const node: PlacementNode = {
      name: `node-${i}`,
      labels: { [LABEL_ZONE]: zone, [LABEL_HOSTNAME]: `node-${i}`, [LABEL_CAPACITY_TYPE]: 'on-demand', 'karpenter.sh/nodepool': 'general' },
      taints: [],
      allocatable: { cpu: 3920, memory: 14162, pods: 58 },
    };
    const running = workloads.filter(() => chance(0.3)).map((w, j) => podOf(w.app, `running-${i}-${j}`, { ...w, spec: {} }));
    return { node, pods: running };
  });
  const pending = workloads.flatMap((w) => Array.from({ length: w.replicas }, (_, i) => podOf(w.app, `${w.app}-${i}`, w)));
  return { seed, templates, existingNodes, pending };
}

/**
 * Solves `c` and verifies every placement with the independent checker.
 * @param tamper rewrites the solver's plan before it is checked (to prove the check can fail)
 */
export function verifyConstrainedCase(c: ConstrainedCase, tamper: (r: SchedulingResults) => SchedulingResults = (r) => r): ConstrainedOutcome & { results: SchedulingResults } {
  const pods = c.pending.map((p, i) => toSchedulingPod(p, i));
  const existing: ExistingCapacity[] = c.existingNodes.map(({ node, pods: running }) => ({
    name: node.name,
    kind: 'node',
    nodePool: 'general',
    labels: node.labels,
    taints: node.taints,
    available: subtract(node.allocatable, running.reduce((sum, p) => addTo(sum, podRequests(p.spec)), {} as Record<string, number>)),
    hostPorts: [],
    pods: running.map(placedPod),
  }));
  const results = tamper(solve(pods, c.templates, existing));

  const nodes: PlacementNode[] = c.existingNodes.map((e) => e.node);
  const bound: MaybeBoundPod[] = c.existingNodes.flatMap((e) => e.pods.map((p) => ({ ...p, nodeName: e.node.name })));
  const byKey = new Map(c.pending.map((p) => [`${p.namespace}/${p.name}`, p]));
  const placements: { pod: MaybeBoundPod; node: PlacementNode }[] = [];
  for (const e of results.existing) {
    const pod = { ...byKey.get(e.pod)!, nodeName: e.target };
    bound.push(pod);
    placements.push({ pod, node: nodes.find((n) => n.name === e.target)! });
  }
  results.newNodeClaims.forEach((claim, i) => {
    const t = c.templates.find((x) => x.name === claim.nodePool)!;
    const type = t.instanceTypes.find((x) => x.name === claim.instanceTypes[0]!.name)!;
    const offering = cheapestOffering(type, claim.requirements)!;
    const name = `claim-${i}`;
    const node: PlacementNode = {
      name,
      labels: { ...type.labels, ...claim.labels, [LABEL_ZONE]: offering.zone, [LABEL_CAPACITY_TYPE]: offering.capacityType, [LABEL_HOSTNAME]: name },
      taints: claim.taints,
      allocatable: subtract(type.allocatable, t.daemonOverhead),
    };
    nodes.push(node);
    for (const key of claim.pods) {
      const pod = { ...byKey.get(key)!, nodeName: name };
      bound.push(pod);
      placements.push({ pod, node });
    }
  });
  const breaches: string[] = [];
  for (const { pod, node } of placements) {
    const problem = placementProblem({ pod, node, nodes, pods: bound });
    if (problem) breaches.push(`seed ${c.seed}: ${pod.namespace}/${pod.name} on ${node.name} (${node.labels[LABEL_ZONE]}): ${problem}`);
  }
  return { placed: placements.length, unschedulable: results.unschedulable.length, nodeClaims: results.newNodeClaims.length, breaches, results };
}

function addTo(sum: Record<string, number>, r: Readonly<Record<string, number>>): Record<string, number> {
  for (const [k, v] of Object.entries(r)) sum[k] = (sum[k] ?? 0) + v;
  return sum;
}
