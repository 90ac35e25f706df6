/**
 * Builds a catalogue row ({@link InstanceTypeInfo}) from Karpenter's well-known labels of an instance type plus the
 * facts labels do not carry (extended resources, ENI limits, price). The one mapping shared by the catalogue build
 * (`scripts/build-catalog.ts`, whose labels are the ones Karpenter publishes) and the EC2 adapter
 * (`shared/adapters/aws/instance-types.ts`, which derives the same labels from `DescribeInstanceTypes`), so both
 * produce identical rows for the same type.
 *
 * Label keys and value formats: aws/karpenter-provider-aws `pkg/apis/v1/labels.go` and
 * `pkg/providers/instancetype/types.go computeRequirements`.
 */
import { ValidationError } from '../errors.js';
import { computeAllocatable } from './allocatable.js';
import { EXTENDED_RESOURCES, type InstanceTypeInfo, type KarpenterAllocatable } from './instance-type.js';

/** `karpenter.k8s.aws/instance-cpu`: default vCPUs. */
export const LABEL_INSTANCE_CPU = 'karpenter.k8s.aws/instance-cpu';
/** `karpenter.k8s.aws/instance-memory`: memory in MiB. */
export const LABEL_INSTANCE_MEMORY = 'karpenter.k8s.aws/instance-memory';
/** `karpenter.k8s.aws/instance-gpu-name`. */
export const LABEL_INSTANCE_GPU_NAME = 'karpenter.k8s.aws/instance-gpu-name';
/** `karpenter.k8s.aws/instance-gpu-manufacturer`. */
export const LABEL_INSTANCE_GPU_MANUFACTURER = 'karpenter.k8s.aws/instance-gpu-manufacturer';
/** `karpenter.k8s.aws/instance-gpu-count`. */
export const LABEL_INSTANCE_GPU_COUNT = 'karpenter.k8s.aws/instance-gpu-count';
/** `karpenter.k8s.aws/instance-gpu-memory`: memory of one GPU in MiB. */
export const LABEL_INSTANCE_GPU_MEMORY = 'karpenter.k8s.aws/instance-gpu-memory';
/** `karpenter.k8s.aws/instance-accelerator-name`. */
export const LABEL_INSTANCE_ACCELERATOR_NAME = 'karpenter.k8s.aws/instance-accelerator-name';
/** `karpenter.k8s.aws/instance-accelerator-manufacturer`. */
export const LABEL_INSTANCE_ACCELERATOR_MANUFACTURER = 'karpenter.k8s.aws/instance-accelerator-manufacturer';
/** `karpenter.k8s.aws/instance-accelerator-count`. */
export const LABEL_INSTANCE_ACCELERATOR_COUNT = 'karpenter.k8s.aws/instance-accelerator-count';

/** What {@link instanceTypeInfoFromLabels} needs to know about one instance type. */
export interface InstanceTypeFacts {
  /** EC2 instance type name, e.g. `m5.large`. */
  readonly name: string;
  /**
   * Karpenter's well-known labels of the type, one value each, as a node of the type carries them (no zone, region or
   * capacity type). Must include `kubernetes.io/arch`, `kubernetes.io/os`, `karpenter.k8s.aws/instance-cpu` and
   * `-instance-memory`; the GPU and accelerator labels come as complete groups or not at all.
   */
  readonly labels: Readonly<Record<string, string>>;
  /** Extended resource counts; only the names in {@link EXTENDED_RESOURCES} with a count above 0 are kept. */
  readonly extendedResources: Readonly<Record<string, number>>;
  /** ENIs on the default network card. */
  readonly defaultMaxENIs: number;
  /** Private IPv4 addresses per ENI. */
  readonly ipv4AddressesPerInterface: number;
  /** On-demand price in USD per instance-hour, or `null` when unknown. */
  readonly onDemandPrice: number | null;
  /**
   * Karpenter's published allocatable. When omitted it is computed with Karpenter's defaults (AL2023, 20 GiB root
   * volume, default kubelet, `VM_MEMORY_OVERHEAD_PERCENT=0.075`), which reproduces the published column exactly for
   * every catalogue type (`test/core/instancetypes/allocatable-agreement.test.ts`).
   */
  readonly karpenterAllocatable?: KarpenterAllocatable;
  /** Where the facts come from, for error messages (a file name or an API). @default the type name */
  readonly source?: string;
}

/**
 * Builds a catalogue row from an instance type's labels and facts: vCPUs, memory, arch and OS from the labels,
 * GPU and accelerator groups from the `instance-gpu-*` / `instance-accelerator-*` labels, labels sorted by key,
 * extended resources filtered to {@link EXTENDED_RESOURCES} with counts above 0 and sorted by name. Pure; the key
 * order of the result is the catalogue's, so `JSON.stringify` of a row is canonical.
 * @throws {ValidationError} when a required label is missing, a numeric label is not a non-negative integer, or the
 * arch is neither `amd64` nor `arm64` (one issue per problem found first; `file` is `facts.source`)
 * @example
 * instanceTypeInfoFromLabels({ name: 'm5.large', labels, extendedResources: { 'vpc.amazonaws.com/pod-eni': 9 },
 *   defaultMaxENIs: 3, ipv4AddressesPerInterface: 10, onDemandPrice: 0.096 }).vcpu // 2
 */
export function instanceTypeInfoFromLabels(facts: InstanceTypeFacts): InstanceTypeInfo {
  const { name, labels } = facts;
  const file = facts.source ?? name;
  const fail = (key: string, message: string): never => {
    throw new ValidationError([{ file, path: `${name}.labels.${key}`, message }]);
  };
  const label = (key: string): string => labels[key] ?? fail(key, `${name} has no label ${key}`);
  const count = (key: string): number => {
    const text = label(key);
    const n = Number(text);
    return Number.isSafeInteger(n) && n >= 0 && text.trim() !== '' ? n : fail(key, `${name} ${key} is not a non-negative integer: ${text}`);
  };
  const arch = label('kubernetes.io/arch');
  if (arch !== 'amd64' && arch !== 'arm64') fail('kubernetes.io/arch', `${name} has unknown arch ${arch}`);

  const extendedResources: Record<string, number> = {};
  for (const resource of [...EXTENDED_RESOURCES].sort()) {
    const amount = facts.extendedResources[resource];
    if (amount !== undefined && amount > 0) extendedResources[resource] = amount;
  }
  const row: Omit<InstanceTypeInfo, 'karpenterAllocatable'> = {
    name,
    vcpu: count(LABEL_INSTANCE_CPU),
    memoryMiB: count(LABEL_INSTANCE_MEMORY),
    arch: arch as InstanceTypeInfo['arch'],
    os: label('kubernetes.io/os'),
    labels: Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    gpu:
      labels[LABEL_INSTANCE_GPU_COUNT] === undefined
        ? null
        : {
            name: label(LABEL_INSTANCE_GPU_NAME),
            manufacturer: label(LABEL_INSTANCE_GPU_MANUFACTURER),
            count: count(LABEL_INSTANCE_GPU_COUNT),
            memoryMiB: count(LABEL_INSTANCE_GPU_MEMORY),
          },
    accelerator:
      labels[LABEL_INSTANCE_ACCELERATOR_COUNT] === undefined
        ? null
        : {
            name: label(LABEL_INSTANCE_ACCELERATOR_NAME),
            manufacturer: label(LABEL_INSTANCE_ACCELERATOR_MANUFACTURER),
            count: count(LABEL_INSTANCE_ACCELERATOR_COUNT),
          },
    extendedResources,
    defaultMaxENIs: facts.defaultMaxENIs,
    ipv4AddressesPerInterface: facts.ipv4AddressesPerInterface,
    onDemandPrice: facts.onDemandPrice,
  };
  return { ...row, karpenterAllocatable: facts.karpenterAllocatable ?? defaultAllocatable(row) };
}

/** Karpenter's allocatable with every default (what its published table shows), in catalogue units. */
function defaultAllocatable(row: Omit<InstanceTypeInfo, 'karpenterAllocatable'>): KarpenterAllocatable {
  const placeholder: KarpenterAllocatable = { cpu: 0, memory: 0, 'ephemeral-storage': 0, pods: 0 };
  const allocatable = computeAllocatable({ ...row, karpenterAllocatable: placeholder });
  return { cpu: allocatable.cpu ?? 0, memory: allocatable.memory ?? 0, 'ephemeral-storage': allocatable['ephemeral-storage'] ?? 0, pods: allocatable.pods ?? 0 };
}
