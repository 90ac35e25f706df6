/**
 * Builders for test fixtures: instance types with offerings, NodePool templates, scheduling pods.
 * Defaults are small and explicit so each test states only what matters to it.
 */
import type { NodeSelectorRequirement, Taint, Toleration } from '../../shared/core/api/kubernetes.js';
import { LABEL_ARCH, LABEL_INSTANCE_TYPE, LABEL_NODEPOOL } from '../../shared/core/api/labels.js';
import { buildInstanceType, type InstanceType, type Offering } from '../../shared/core/instancetypes/offering.js';
import { toSchedulingPod, type PodSpecLike, type SchedulingPod } from '../../shared/core/provisioning/pod.js';
import type { NodePoolTemplate } from '../../shared/core/provisioning/types.js';
import type { ResourceList } from '../../shared/core/resources/resource-list.js';
import { Requirements } from '../../shared/core/scheduling/requirements.js';

/** An instance type with `cpu` millicores and `memory` MiB allocatable, offered in `zones` at `price` (spot at half). */
export function instanceType(
  name: string,
  opts: {
    cpu: number;
    memory: number;
    pods?: number;
    price: number;
    spotPrice?: number;
    zones?: readonly string[];
    labels?: Record<string, string>;
    extra?: ResourceList;
    unavailable?: readonly string[];
  },
): InstanceType {
  const zones = opts.zones ?? ['us-west-2a', 'us-west-2b'];
  const family = name.split('.')[0]!;
  const offerings: Offering[] = zones.flatMap((zone) => [
    { zone, capacityType: 'on-demand' as const, price: opts.price, available: !opts.unavailable?.includes(`${zone}/on-demand`) },
    { zone, capacityType: 'spot' as const, price: opts.spotPrice ?? opts.price / 2, available: !opts.unavailable?.includes(`${zone}/spot`) },
  ]);
  const allocatable = { cpu: opts.cpu, memory: opts.memory, pods: opts.pods ?? 110, ...(opts.extra ?? {}) };
  return buildInstanceType({
    name,
    labels: {
      [LABEL_INSTANCE_TYPE]: name,
      [LABEL_ARCH]: 'amd64',
      'kubernetes.io/os': 'linux',
      'karpenter.k8s.aws/instance-family': family,
      'karpenter.k8s.aws/instance-category': family[0]!,
      'karpenter.k8s.aws/instance-generation': family.replace(/\D/g, '') || '1',
      ...(opts.labels ?? {}),
    },
    capacity: { ...allocatable, cpu: Math.ceil(opts.cpu / 1000) * 1000 },
    allocatable,
    offerings,
  });
}

/** A small catalogue: m5.large/xlarge/2xlarge, c5.large, r5.large, g4dn.xlarge (1 GPU), g4dn.12xlarge (4 GPUs). */
export function catalogue(): InstanceType[] {
  return [
    instanceType('m5.large', { cpu: 1930, memory: 6903, price: 0.096 }),
    instanceType('m5.xlarge', { cpu: 3920, memory: 14162, price: 0.192 }),
    instanceType('m5.2xlarge', { cpu: 7910, memory: 29317, price: 0.384 }),
    instanceType('c5.large', { cpu: 1930, memory: 3055, price: 0.085 }),
    instanceType('r5.large', { cpu: 1930, memory: 14162, price: 0.126 }),
    instanceType('g4dn.xlarge', { cpu: 3920, memory: 14162, price: 0.526, extra: { 'nvidia.com/gpu': 1 } }),
    instanceType('g4dn.12xlarge', { cpu: 47810, memory: 178933, price: 3.912, extra: { 'nvidia.com/gpu': 4 } }),
  ];
}

/** A NodePool template over `types`. */
export function template(
  name: string,
  types: readonly InstanceType[],
  opts: {
    requirements?: NodeSelectorRequirement[];
    labels?: Record<string, string>;
    taints?: Taint[];
    weight?: number;
    daemonOverhead?: ResourceList;
    remaining?: ResourceList;
    /** The NodePool's `spec.limits` in all (canonical units). */
    limits?: ResourceList;
  } = {},
): NodePoolTemplate {
  const labels = { ...(opts.labels ?? {}), [LABEL_NODEPOOL]: name };
  const requirements = Requirements.from(opts.requirements ?? []).intersect(Requirements.fromLabels(labels));
  return {
    name,
    nodeClass: 'default',
    weight: opts.weight ?? 0,
    requirements,
    labels,
    taints: opts.taints ?? [],
    startupTaints: [],
    instanceTypes: types.filter((t) => requirements.intersects(t.requirements) === undefined),
    daemonOverhead: opts.daemonOverhead ?? {},
    ...(opts.remaining ? { remaining: opts.remaining } : {}),
    ...(opts.limits ? { limits: opts.limits } : {}),
  };
}

let created = 0;

/** A pending pod requesting `cpu` (e.g. `"500m"`) and `memory` (e.g. `"1Gi"`). */
export function pod(
  name: string,
  opts: {
    cpu?: string;
    memory?: string;
    gpu?: number;
    nodeSelector?: Record<string, string>;
    tolerations?: Toleration[];
    affinity?: PodSpecLike['affinity'];
    hostPort?: number;
    namespace?: string;
    labels?: Record<string, string>;
    topologySpreadConstraints?: PodSpecLike['topologySpreadConstraints'];
  } = {},
): SchedulingPod {
  const requests: Record<string, string | number> = { cpu: opts.cpu ?? '100m', memory: opts.memory ?? '128Mi' };
  if (opts.gpu) requests['nvidia.com/gpu'] = opts.gpu;
  const spec: PodSpecLike = {
    containers: [{ name: 'main', resources: { requests }, ...(opts.hostPort ? { ports: [{ containerPort: 80, hostPort: opts.hostPort }] } : {}) }],
    ...(opts.nodeSelector ? { nodeSelector: opts.nodeSelector } : {}),
    ...(opts.tolerations ? { tolerations: opts.tolerations } : {}),
    ...(opts.affinity ? { affinity: opts.affinity } : {}),
    ...(opts.topologySpreadConstraints ? { topologySpreadConstraints: opts.topologySpreadConstraints } : {}),
  };
  return toSchedulingPod({ namespace: opts.namespace ?? 'default', name, spec, ...(opts.labels ? { labels: opts.labels } : {}) }, created++);
}

/** `n` identical pods named `<prefix>-<i>`. */
export function pods(prefix: string, n: number, opts: Parameters<typeof pod>[1] = {}): SchedulingPod[] {
  return Array.from({ length: n }, (_, i) => pod(`${prefix}-${i}`, opts));
}
