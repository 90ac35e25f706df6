/**
 * The benchmark's inputs, built with the project's own types: NodePool templates over the instance-type catalogue
 * (as the provisioner builds them: `SimulatedEc2.getInstanceTypes` → `buildNodePoolTemplate`) and seeded pod mixes
 * (`toSchedulingPod`). Every generator is deterministic for a given seed.
 *
 * Units: cpu in millicores, memory in MiB, prices in USD per hour.
 */
import { LABEL_CAPACITY_TYPE, LABEL_HOSTNAME, LABEL_OS, LABEL_ZONE } from '../shared/core/api/labels.js';
import type { NodeSelectorRequirement } from '../shared/core/api/kubernetes.js';
import { loadCatalog } from '../shared/core/instancetypes/catalog.js';
import type { InstanceType } from '../shared/core/instancetypes/offering.js';
import { buildNodePoolTemplate, type DaemonSetLike, type NodePoolLike } from '../shared/core/provisioning/nodepool-template.js';
import { toSchedulingPod, type PodSpecLike, type SchedulingPod } from '../shared/core/provisioning/pod.js';
import type { NodePoolTemplate } from '../shared/core/provisioning/types.js';
import { SimulatedEc2 } from '../shared/sim/simulated-ec2.js';
import { VirtualClock } from '../shared/sim/virtual-clock.js';
import { pick, seededRandom, type Random } from './stats.js';

/** The region every benchmark input uses (4 zones in the simulation). */
export const BENCH_REGION = 'us-west-2';

/** Creation time of generated pods, epoch ms (only a tie-breaker in the solve order). */
const CREATED_MS = Date.parse('2026-03-02T08:00:00Z');

/**
 * The DaemonSets every benchmark NodePool runs, typical of an EKS cluster: the VPC CNI (`aws-node`, 25m),
 * `kube-proxy` (100m) and a log shipper (100m, 200 MiB). Their requests are the daemonset overhead of every node.
 */
export const BENCH_DAEMONSETS: readonly DaemonSetLike[] = [
  daemonSet('aws-node', { cpu: '25m' }),
  daemonSet('kube-proxy', { cpu: '100m' }),
  daemonSet('log-shipper', { cpu: '100m', memory: '200Mi' }),
];

function daemonSet(name: string, requests: Record<string, string>): DaemonSetLike {
  return {
    metadata: { name, namespace: 'kube-system' },
    spec: { template: { spec: { containers: [{ name, resources: { requests } }], tolerations: [{ operator: 'Exists' }] } } },
  };
}

/**
 * The instance types the simulated EC2 offers in {@link BENCH_REGION}: every catalogue type with an on-demand
 * price, in every zone, on-demand (list price) and spot (simulated, 25–55 % of on-demand), with Skiff's
 * allocatable (AL2023 defaults, 7.5 % VM memory overhead).
 */
export async function catalogueInstanceTypes(): Promise<readonly InstanceType[]> {
  const ec2 = new SimulatedEc2(new VirtualClock(0), { region: BENCH_REGION, catalog: loadCatalog(), vmMemoryOverheadPercent: 0.075, clusterName: 'bench', onRegister: () => {} });
  return ec2.getInstanceTypes({ nodeClass: 'default' });
}

/** Which capacity types a benchmark NodePool allows. */
export type CapacityChoice = 'on-demand' | 'spot-and-on-demand';

/**
 * A NodePool over the whole catalogue: its only requirements are Linux and the capacity types, no instance
 * category, family, size or architecture restriction; daemonset overhead from {@link BENCH_DAEMONSETS}.
 * @param capacity which capacity types it allows
 * @param cmr restrict it to instance categories c, m, r of generation > 4 (the seed's general NodePool)
 */
export function catalogueNodePool(capacity: CapacityChoice, cmr = false): NodePoolLike {
  const requirements: NodeSelectorRequirement[] = [
    { key: LABEL_OS, operator: 'In', values: ['linux'] },
    { key: LABEL_CAPACITY_TYPE, operator: 'In', values: capacity === 'on-demand' ? ['on-demand'] : ['spot', 'on-demand'] },
    // The c/m/r price list of the issue: the seed's general NodePool's categories and generations.
    ...(cmr
      ? [
          { key: 'karpenter.k8s.aws/instance-category', operator: 'In' as const, values: ['c', 'm', 'r'] },
          { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt' as const, values: ['4'] },
        ]
      : []),
  ];
  return { metadata: { name: 'bench' }, spec: { template: { spec: { nodeClassRef: { name: 'default' }, requirements } } } };
}

/**
 * The solver template of {@link catalogueNodePool}, built as the provisioner builds it.
 * @param types from {@link catalogueInstanceTypes}
 * @param cmr as {@link catalogueNodePool}'s
 */
export function catalogueTemplate(types: readonly InstanceType[], capacity: CapacityChoice, cmr = false): NodePoolTemplate {
  return buildNodePoolTemplate(catalogueNodePool(capacity, cmr), types, BENCH_DAEMONSETS, {});
}

/** A pod's requests: cpu millicores, memory MiB, optional GPUs. */
export interface PodShape {
  readonly cpu: number;
  readonly memory: number;
  readonly gpu?: number;
}

/** Builds a plain pod (no constraints) of `shape` named `name` in namespace `default`. */
export function plainPod(name: string, shape: PodShape, index = 0, extra: Partial<PodSpecLike> = {}, labels: Readonly<Record<string, string>> = {}): SchedulingPod {
  const requests: Record<string, string | number> = { cpu: `${shape.cpu}m`, memory: `${shape.memory}Mi` };
  if (shape.gpu) requests['nvidia.com/gpu'] = shape.gpu;
  const spec: PodSpecLike = { containers: [{ name: 'app', resources: { requests } }], ...extra };
  return toSchedulingPod({ namespace: 'default', name, labels, spec }, CREATED_MS + index);
}

/** CPU requests of the diverse mix, millicores. */
export const DIVERSE_CPU = [100, 250, 500, 1000, 1500] as const;
/** Memory requests of the diverse mix, MiB. */
export const DIVERSE_MEMORY = [100, 256, 512, 1024, 2048, 4096] as const;

/** The five pod kinds of the diverse mix, 20 % each. */
export const DIVERSE_KINDS = ['plain', 'zone-spread', 'hostname-spread', 'zone-affinity', 'hostname-anti-affinity'] as const;
/** One of {@link DIVERSE_KINDS}. */
export type DiverseKind = (typeof DIVERSE_KINDS)[number];

/** Pods per workload (label group) of the constrained kinds in the diverse mix. */
export const DIVERSE_GROUP_SIZE = 10;

/**
 * The diverse mix (B1): `n` pods, 20 % of each {@link DIVERSE_KINDS} (pod i is of kind i mod 5). The constrained
 * pods come in workloads of {@link DIVERSE_GROUP_SIZE} sharing an `app` label, and each constraint selects its own
 * workload: zone and hostname spread are `maxSkew: 1, DoNotSchedule`; zone self-affinity and hostname
 * self-anti-affinity are required terms. Requests are drawn per pod from {@link DIVERSE_CPU} × {@link DIVERSE_MEMORY}.
 * @param n number of pods
 * @param seed seeds the requests
 */
export function diverseMix(n: number, seed = 1): SchedulingPod[] {
  const rng = seededRandom(seed);
  const pods: SchedulingPod[] = [];
  for (let i = 0; i < n; i++) {
    const kind = DIVERSE_KINDS[i % DIVERSE_KINDS.length]!;
    const group = Math.floor(i / DIVERSE_KINDS.length / DIVERSE_GROUP_SIZE);
    const app = `${kind}-${group}`;
    const shape = { cpu: pick(rng, DIVERSE_CPU), memory: pick(rng, DIVERSE_MEMORY) };
    pods.push(plainPod(`diverse-${i}`, shape, i, constraintOf(kind, app), kind === 'plain' ? {} : { app }));
  }
  return pods;
}

function constraintOf(kind: DiverseKind, app: string): Partial<PodSpecLike> {
  const selector = { matchLabels: { app } };
  const spread = (topologyKey: string) => ({ topologySpreadConstraints: [{ maxSkew: 1, topologyKey, whenUnsatisfiable: 'DoNotSchedule' as const, labelSelector: selector }] });
  switch (kind) {
    case 'plain':
      return {};
    case 'zone-spread':
      return spread(LABEL_ZONE);
    case 'hostname-spread':
      return spread(LABEL_HOSTNAME);
    case 'zone-affinity':
      return { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: selector, topologyKey: LABEL_ZONE }] } } };
    case 'hostname-anti-affinity':
      return { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: selector, topologyKey: LABEL_HOSTNAME }] } } };
  }
}

/**
 * Plain pods (B2): no constraints, requests drawn per pod from {@link DIVERSE_CPU} × {@link DIVERSE_MEMORY}.
 * @param n number of pods
 * @param seed seeds the requests
 */
export function plainMix(n: number, seed = 2): SchedulingPod[] {
  const rng = seededRandom(seed);
  return Array.from({ length: n }, (_, i) => plainPod(`plain-${i}`, { cpu: pick(rng, DIVERSE_CPU), memory: pick(rng, DIVERSE_MEMORY) }, i));
}

/** The synthetic request distributions of the cost benchmark (B3). */
export const COST_MIXES = ['uniform', 'bimodal', 'heavy-tailed'] as const;
/** One of {@link COST_MIXES}. */
export type CostMix = (typeof COST_MIXES)[number];

/**
 * The shape of one pod of a cost mix, drawn with `rng`:
 * - `uniform`: cpu uniform over {250, 500, 750, 1000, 1500, 2000} m, memory uniform over {256, 512, 1024, 2048,
 *   4096} MiB, independently;
 * - `bimodal`: 70 % small (cpu {100, 250} m, memory {128, 256} MiB), 30 % large (cpu {2000, 4000} m, memory
 *   {4096, 8192} MiB);
 * - `heavy-tailed`: cpu = 100 m × 2^k with P(k) ∝ 0.55^k for k = 0…7 (100 m to 12.8 cores; half the pods at
 *   100–200 m, about 1 % at 12.8 cores), memory = cpu × {1, 2, 4, 8} GiB per core.
 */
export function costMixShape(mix: CostMix, rng: Random): PodShape {
  switch (mix) {
    case 'uniform':
      return { cpu: pick(rng, [250, 500, 750, 1000, 1500, 2000]), memory: pick(rng, [256, 512, 1024, 2048, 4096]) };
    case 'bimodal':
      return rng() < 0.7 ? { cpu: pick(rng, [100, 250]), memory: pick(rng, [128, 256]) } : { cpu: pick(rng, [2000, 4000]), memory: pick(rng, [4096, 8192]) };
    case 'heavy-tailed': {
      const weights = Array.from({ length: 8 }, (_, k) => 0.55 ** k);
      let u = rng() * weights.reduce((a, b) => a + b, 0);
      let k = 0;
      while (k < 7 && u >= weights[k]!) u -= weights[k++]!;
      const cpu = 100 * 2 ** k;
      return { cpu, memory: (cpu / 1000) * 1024 * pick(rng, [1, 2, 4, 8]) };
    }
  }
}

/**
 * `n` plain pods of a cost mix (see {@link costMixShape}).
 * @param seed seeds the requests
 */
export function costMix(mix: CostMix, n: number, seed = 3): SchedulingPod[] {
  const rng = seededRandom(seed + COST_MIXES.indexOf(mix) * 1000);
  return Array.from({ length: n }, (_, i) => plainPod(`${mix}-${i}`, costMixShape(mix, rng), i));
}
