/**
 * Skiff's own computation of an instance type's capacity, overhead and allocatable, reproducing the formulas
 * Karpenter's AWS provider documents and uses (aws/karpenter-provider-aws `pkg/providers/instancetype/types.go`;
 * kubernetes-sigs/karpenter `pkg/cloudprovider/types.go` for `allocatable = capacity − overhead`).
 *
 * Units follow `ResourceList`: cpu in millicores; memory and ephemeral-storage in MiB (fractions allowed);
 * pods and extended resources as counts.
 *
 * With default options the result equals Karpenter's published allocatable (AL2023, no blockDeviceMappings) for
 * every type in the catalogue; `test/core/instancetypes/allocatable-agreement.test.ts` checks this.
 */
import { QuantityError } from '../errors.js';
import { mebibytes } from '../resources/quantity.js';
import { parseResourceList, type ResourceList } from '../resources/resource-list.js';
import type { InstanceTypeInfo } from './instance-type.js';

/** Bytes per MiB. */
const MIB = 2 ** 20;

/** AMI families of an EC2NodeClass (`spec.amiSelectorTerms[].alias` family, or `Custom`). */
export type AmiFamily = 'AL2023' | 'AL2' | 'Bottlerocket' | 'Windows2019' | 'Windows2022' | 'Windows2025' | 'Custom';

/**
 * What an AMI family changes in the allocatable computation (Karpenter's `amifamily.FeatureFlags` and default
 * block device mappings).
 */
export interface AmiFamilyTraits {
  /** Max pods comes from the ENI formula; otherwise it is 110 (Windows). */
  readonly supportsENILimitedPodDensity: boolean;
  /** kube-reserved memory is computed from the ENI-limited pod count, whatever `maxPods`/`podsPerCore` say (AL2, AL2023, Custom). */
  readonly usesENILimitedMemoryOverhead: boolean;
  /** `kubelet.podsPerCore` is honoured (not on Bottlerocket). */
  readonly podsPerCoreEnabled: boolean;
  /** Size of the volume kubelet's nodefs lives on when no blockDeviceMappings are given, in MiB. */
  readonly defaultEphemeralVolumeMiB: number;
  /** The node reports `vpc.amazonaws.com/PrivateIPv4Address` (Windows IPAM). */
  readonly privateIPv4Address: boolean;
}

/** Karpenter's default EBS volume size for the ephemeral block device (`amifamily.DefaultEBS`): 20 GiB, in MiB. */
export const DEFAULT_ROOT_VOLUME_MIB = 20 * 1024;

const DEFAULT_FAMILY: AmiFamilyTraits = {
  supportsENILimitedPodDensity: true,
  usesENILimitedMemoryOverhead: true,
  podsPerCoreEnabled: true,
  defaultEphemeralVolumeMiB: DEFAULT_ROOT_VOLUME_MIB,
  privateIPv4Address: false,
};
const WINDOWS: AmiFamilyTraits = {
  supportsENILimitedPodDensity: false,
  usesENILimitedMemoryOverhead: false,
  podsPerCoreEnabled: true,
  defaultEphemeralVolumeMiB: 50 * 1024,
  privateIPv4Address: true,
};

/**
 * The traits of each AMI family. Source: aws/karpenter-provider-aws `pkg/providers/amifamily/{resolver,al2023,al2,
 * bottlerocket,windows,custom}.go` (`FeatureFlags`, `DefaultBlockDeviceMappings`: 20 GiB `/dev/xvda` for AL2/AL2023,
 * 20 GiB `/dev/xvdb` data volume for Bottlerocket, 50 GiB `/dev/sda1` for Windows, `DefaultEBS` for Custom).
 */
export const AMI_FAMILY_TRAITS: Readonly<Record<AmiFamily, AmiFamilyTraits>> = {
  AL2023: DEFAULT_FAMILY,
  AL2: DEFAULT_FAMILY,
  Custom: DEFAULT_FAMILY,
  Bottlerocket: { ...DEFAULT_FAMILY, usesENILimitedMemoryOverhead: false, podsPerCoreEnabled: false },
  Windows2019: WINDOWS,
  Windows2022: WINDOWS,
  Windows2025: WINDOWS,
};

/** The kubelet fields of an EC2NodeClass (`spec.kubelet`) that change allocatable. Field names as in Karpenter v1. */
export interface KubeletAllocatableConfig {
  /** Explicit max pods; replaces the ENI formula. */
  readonly maxPods?: number;
  /** Pods per vCPU; caps max pods at `podsPerCore × vCPU` when > 0 (ignored on Bottlerocket). */
  readonly podsPerCore?: number;
  /** Per-resource overrides of the computed kube-reserved, as Kubernetes quantities (`{cpu: "200m", memory: "1Gi"}`). */
  readonly kubeReserved?: Readonly<Record<string, string>>;
  /** system-reserved, as Kubernetes quantities. Karpenter reserves nothing for the system unless this is set. */
  readonly systemReserved?: Readonly<Record<string, string>>;
  /**
   * Hard eviction thresholds. Only `memory.available` and `nodefs.available` change allocatable; values are a
   * quantity (`"100Mi"`) or a percentage of capacity (`"10%"`; `"100%"` disables the threshold).
   */
  readonly evictionHard?: Readonly<Record<string, string>>;
}

/** A network interface of an EC2NodeClass (`spec.networkInterfaces[]`), as far as allocatable cares. */
export interface NetworkInterfaceConfig {
  /** Network card the interface is attached to. */
  readonly networkCardIndex: number;
  /** `interface` (ENA, carries IPs) or `efa-only` (consumes an ENI slot, carries no IPs). */
  readonly interfaceType: 'interface' | 'efa-only';
}

/** Settings that change an instance type's capacity, overhead or allocatable. All optional. */
export interface AllocatableOptions {
  /** EC2NodeClass `spec.kubelet`. @default {} */
  readonly kubelet?: KubeletAllocatableConfig;
  /** AMI family of the EC2NodeClass. @default 'AL2023' */
  readonly amiFamily?: AmiFamily;
  /**
   * Fraction of instance memory assumed lost to the hypervisor and kernel (Karpenter's
   * `VM_MEMORY_OVERHEAD_PERCENT`, a fraction despite its name). @default 0.075
   */
  readonly vmMemoryOverheadPercent?: number;
  /** ENIs reserved for other uses (Karpenter's `RESERVED_ENIS`); lowers ENI-limited max pods. @default 0 */
  readonly reservedENIs?: number;
  /**
   * Size of the volume kubelet's nodefs lives on (root volume, or the blockDeviceMapping Karpenter picks), in MiB.
   * @default the AMI family's default: 20480 (20 GiB), 51200 (50 GiB) for Windows
   */
  readonly ephemeralVolumeMiB?: number;
  /** EC2NodeClass `spec.networkInterfaces`; when set, EFA-only interfaces replace the instance's EFA count. @default undefined */
  readonly networkInterfaces?: readonly NetworkInterfaceConfig[];
}

/** Karpenter's default `VM_MEMORY_OVERHEAD_PERCENT` (a fraction: 7.5 %). Source: aws `pkg/operator/options/options.go`. */
export const DEFAULT_VM_MEMORY_OVERHEAD_PERCENT = 0.075;

/** Max pods when the AMI family does not support ENI-limited density (Windows). Source: aws `types.go pods`. */
export const DEFAULT_MAX_PODS = 110;

/** Memory Graviton (arm64) instances reserve for CMA and never expose, in MiB. Source: aws `types.go memory`. */
export const ARM64_CMA_RESERVED_MIB = 64;

/** Default hard eviction threshold for `memory.available`, in MiB. Source: aws `types.go evictionThreshold`. */
export const DEFAULT_EVICTION_MEMORY_MIB = 100;

/** Default hard eviction threshold for `nodefs.available`, in percent of the ephemeral volume. Source: aws `types.go`. */
export const DEFAULT_EVICTION_NODEFS_PERCENT = 10;

/** Default kube-reserved ephemeral storage, in MiB (1 GiB). Source: aws `types.go kubeReservedResources`. */
export const KUBE_RESERVED_EPHEMERAL_STORAGE_MIB = 1024;

/**
 * The EC2NodeClass settings an instance-type query carries (the CloudProvider port's `InstanceTypeQuery` is
 * assignable to this): the kubelet fields that change allocatable and the root volume size.
 */
export interface NodeClassAllocatableSettings {
  /** EC2NodeClass `spec.kubelet`. @default {} */
  readonly kubelet?: KubeletAllocatableConfig;
  /** Size of the root volume from `spec.blockDeviceMappings`, in GiB. @default the AMI family's default (20 GiB) */
  readonly rootVolumeGiB?: number;
}

/**
 * The {@link AllocatableOptions} for an EC2NodeClass's settings: its kubelet as is, its root volume as the ephemeral
 * volume (GiB → MiB), and the deployment's VM memory overhead. Every CloudProvider (simulated and EC2) builds its
 * options here, so the same EC2NodeClass gets the same allocatable everywhere.
 * @param settings kubelet and root volume (GiB) of the EC2NodeClass
 * @param vmMemoryOverheadPercent Karpenter's `VM_MEMORY_OVERHEAD_PERCENT`, a fraction (0.075 = 7.5 %)
 * @example nodeClassAllocatableOptions({ rootVolumeGiB: 100 }, 0.075) // { vmMemoryOverheadPercent: 0.075, ephemeralVolumeMiB: 102400 }
 */
export function nodeClassAllocatableOptions(settings: NodeClassAllocatableSettings, vmMemoryOverheadPercent: number): AllocatableOptions {
  return {
    vmMemoryOverheadPercent,
    ...(settings.kubelet ? { kubelet: settings.kubelet } : {}),
    ...(settings.rootVolumeGiB !== undefined ? { ephemeralVolumeMiB: settings.rootVolumeGiB * 1024 } : {}),
  };
}

/** The three parts of an instance type's overhead (Karpenter's `InstanceTypeOverhead`), in canonical units. */
export interface InstanceTypeOverhead {
  /** Reserved for kubelet and the container runtime. */
  readonly kubeReserved: ResourceList;
  /** Reserved for OS daemons (only what `kubelet.systemReserved` sets). */
  readonly systemReserved: ResourceList;
  /** Hard eviction thresholds, as amounts. */
  readonly evictionThreshold: ResourceList;
}

/** Resolves the traits of the options' AMI family (AL2023 by default). */
export function amiFamilyTraits(options: AllocatableOptions = {}): AmiFamilyTraits {
  return AMI_FAMILY_TRAITS[options.amiFamily ?? 'AL2023'];
}

/**
 * Pods the VPC CNI can give an IP to: `usableENIs × (IPv4PerENI − 1) + 2`, where usable ENIs are the default card's
 * ENIs minus reserved ENIs minus EFA-only interfaces on card 0; 0 when no ENI is usable.
 *
 * Source: awslabs/amazon-eks-ami `eni-max-pods.txt` formula (the first IP of each ENI is the ENI's own; +2 for the
 * host-network pods aws-node and kube-proxy), as aws `types.go ENILimitedPods` applies it.
 * @param type the instance type (uses `defaultMaxENIs`, `ipv4AddressesPerInterface`)
 * @param reservedENIs ENIs not available to pods @default 0
 * @param efaOnlyInterfaces EFA-only interfaces on network card 0 @default 0
 * @returns a pod count
 * @example eniLimitedPods(m5large) // 3 × (10 − 1) + 2 = 29
 */
export function eniLimitedPods(type: InstanceTypeInfo, reservedENIs = 0, efaOnlyInterfaces = 0): number {
  const usable = Math.max(type.defaultMaxENIs - reservedENIs - efaOnlyInterfaces, 0);
  return usable === 0 ? 0 : usable * (type.ipv4AddressesPerInterface - 1) + 2;
}

/**
 * The node's max pods: `kubelet.maxPods` if set, else the ENI formula ({@link eniLimitedPods} with
 * `reservedENIs`), else 110 for Windows; then capped at `podsPerCore × vCPU` when `podsPerCore > 0` (not on
 * Bottlerocket). Karpenter applies no 110/250 cap: a c8i.48xlarge gets 1514 pods.
 *
 * Source: aws `types.go pods`.
 * @returns a pod count
 * @example maxPods(m5large, { kubelet: { podsPerCore: 10 } }) // min(29, 10 × 2) = 20
 */
export function maxPods(type: InstanceTypeInfo, options: AllocatableOptions = {}): number {
  const traits = amiFamilyTraits(options);
  const kubelet = options.kubelet ?? {};
  let count: number;
  if (kubelet.maxPods !== undefined) count = kubelet.maxPods;
  else if (traits.supportsENILimitedPodDensity) count = eniLimitedPods(type, options.reservedENIs ?? 0, efaOnlyOnDefaultCard(options));
  else count = DEFAULT_MAX_PODS;
  const podsPerCore = kubelet.podsPerCore ?? 0;
  if (podsPerCore > 0 && traits.podsPerCoreEnabled) count = Math.min(podsPerCore * type.vcpu, count);
  return count;
}

/**
 * The CPU kube-reserved for a node: 6 % of the first core, 1 % of the second, 0.5 % of cores 3–4 and 0.25 % of
 * every core above 4, each tier truncated to whole millicores.
 *
 * Source: aws `types.go kubeReservedResources`, from the GKE/Bottlerocket reservation table.
 * @param vcpu number of vCPUs
 * @returns millicores
 * @example kubeReservedCpu(2) // 60 + 10 = 70
 */
export function kubeReservedCpu(vcpu: number): number {
  const cpu = vcpu * 1000;
  let reserved = 0;
  for (const [start, end, fraction] of CPU_TIERS) {
    if (cpu < start) break;
    reserved += Math.trunc((Math.min(cpu, end) - start) * fraction);
  }
  return reserved;
}

/** `[start, end, fraction]` of each kube-reserved CPU tier, in millicores. */
const CPU_TIERS: readonly (readonly [number, number, number])[] = [
  [0, 1000, 0.06],
  [1000, 2000, 0.01],
  [2000, 4000, 0.005],
  [4000, 2 ** 31, 0.0025],
];

/**
 * The memory kube-reserved for a node: `11 MiB × pods + 255 MiB`.
 *
 * Source: aws `types.go kubeReservedResources` (the amazon-eks-ami formula).
 * @param pods the pod count the reservation is sized for (see {@link kubeReserved} for which count)
 * @returns MiB
 * @example kubeReservedMemory(29) // 574
 */
export function kubeReservedMemory(pods: number): number {
  return 11 * pods + 255;
}

/**
 * The full kube-reserved: cpu from {@link kubeReservedCpu}, memory from {@link kubeReservedMemory}, 1 GiB of
 * ephemeral storage, then `kubelet.kubeReserved` replaces any resource it names.
 *
 * The memory is sized for the ENI-limited pod count (RESERVED_ENIS not applied) on AL2, AL2023 and Custom, even
 * when `maxPods` or `podsPerCore` lower the node's max pods; on Bottlerocket and Windows it is sized for
 * {@link maxPods}. Source: aws `types.go NewInstanceType` (`UsesENILimitedMemoryOverhead`).
 * @returns cpu millicores, memory MiB, ephemeral-storage MiB (plus whatever the override names)
 * @throws {QuantityError} when a `kubeReserved` value is not a quantity
 */
export function kubeReserved(type: InstanceTypeInfo, options: AllocatableOptions = {}): ResourceList {
  const pods = amiFamilyTraits(options).usesENILimitedMemoryOverhead
    ? eniLimitedPods(type, 0, efaOnlyOnDefaultCard(options))
    : maxPods(type, options);
  return {
    cpu: kubeReservedCpu(type.vcpu),
    memory: kubeReservedMemory(pods),
    'ephemeral-storage': KUBE_RESERVED_EPHEMERAL_STORAGE_MIB,
    ...parseResourceList(options.kubelet?.kubeReserved),
  };
}

/**
 * system-reserved: exactly what `kubelet.systemReserved` says (Karpenter reserves nothing by default).
 * Source: aws `types.go systemReservedResources`.
 * @throws {QuantityError} when a value is not a quantity
 */
export function systemReserved(options: AllocatableOptions = {}): ResourceList {
  return parseResourceList(options.kubelet?.systemReserved);
}

/**
 * Memory capacity: instance memory, minus 64 MiB of CMA on arm64 (Graviton), minus the VM overhead
 * `ceil(memory × vmMemoryOverheadPercent)` in whole MiB.
 *
 * Source: aws `types.go memory` (Karpenter uses this estimate until it has measured a real node of the type).
 * @returns MiB (an integer)
 * @example memoryCapacity(m5large) // 8192 − ceil(614.4) = 7577
 */
export function memoryCapacity(type: InstanceTypeInfo, options: AllocatableOptions = {}): number {
  const mib = type.memoryMiB - (type.arch === 'arm64' ? ARM64_CMA_RESERVED_MIB : 0);
  const overheadPercent = options.vmMemoryOverheadPercent ?? DEFAULT_VM_MEMORY_OVERHEAD_PERCENT;
  // Same operation order as Karpenter (bytes × fraction / 1024 / 1024) so ceil sees the same float.
  return mib - Math.ceil((mib * MIB * overheadPercent) / 1024 / 1024);
}

/**
 * Ephemeral-storage capacity: the size of the volume kubelet's nodefs lives on.
 * Source: aws `types.go ephemeralStorage` (default block device of the AMI family, else `DefaultEBS` 20 GiB).
 * @returns MiB
 */
export function ephemeralStorageCapacity(options: AllocatableOptions = {}): number {
  return options.ephemeralVolumeMiB ?? amiFamilyTraits(options).defaultEphemeralVolumeMiB;
}

/**
 * Capacity the node reports: cpu (vCPU × 1000), memory ({@link memoryCapacity}), ephemeral-storage
 * ({@link ephemeralStorageCapacity}), pods ({@link maxPods}), and the instance's extended resources (GPUs, Neuron
 * devices and cores, EFA, pod-eni; EFA is the count of EFA-only interfaces when `networkInterfaces` is set;
 * `vpc.amazonaws.com/PrivateIPv4Address = IPv4PerENI − 1` on Windows). Zero-valued extended resources are left out.
 *
 * Source: aws `types.go computeCapacity`, `efas`, `privateIPv4Address`.
 * @returns a ResourceList in canonical units
 */
export function computeCapacity(type: InstanceTypeInfo, options: AllocatableOptions = {}): ResourceList {
  const capacity: Record<string, number> = {
    cpu: type.vcpu * 1000,
    memory: memoryCapacity(type, options),
    'ephemeral-storage': ephemeralStorageCapacity(options),
    pods: maxPods(type, options),
    ...type.extendedResources,
  };
  if (options.networkInterfaces !== undefined) {
    const efaOnly = options.networkInterfaces.filter((nic) => nic.interfaceType === 'efa-only').length;
    if (efaOnly > 0) capacity['vpc.amazonaws.com/efa'] = efaOnly;
    else delete capacity['vpc.amazonaws.com/efa'];
  }
  if (amiFamilyTraits(options).privateIPv4Address) {
    capacity['vpc.amazonaws.com/PrivateIPv4Address'] = type.ipv4AddressesPerInterface - 1;
  }
  return capacity;
}

/**
 * Hard eviction thresholds as amounts: memory 100 MiB and nodefs 10 % of ephemeral storage (rounded up to whole
 * bytes), each replaced by `evictionHard['memory.available']` / `evictionHard['nodefs.available']` when set.
 * A percentage is taken of the memory or ephemeral-storage capacity and rounded up to whole bytes; `100%` means 0
 * (disabled). Other signals (imagefs, inodes, pid) do not change allocatable.
 *
 * Source: aws `types.go evictionThreshold`, `computeEvictionSignal`; kubelet eviction signals
 * (kubernetes.io/docs/concepts/scheduling-eviction/node-pressure-eviction/).
 * @param capacity the node capacity from {@link computeCapacity} (memory and ephemeral-storage in MiB)
 * @returns memory and ephemeral-storage in MiB
 * @throws {QuantityError} when a threshold is neither a quantity nor a percentage
 */
export function evictionThreshold(capacity: ResourceList, options: AllocatableOptions = {}): ResourceList {
  const memory = capacity.memory ?? 0;
  const storage = capacity['ephemeral-storage'] ?? 0;
  const hard = options.kubelet?.evictionHard ?? {};
  const memorySignal = hard['memory.available'];
  const nodefsSignal = hard['nodefs.available'];
  return {
    memory: memorySignal === undefined ? DEFAULT_EVICTION_MEMORY_MIB : evictionSignal(memory, memorySignal),
    'ephemeral-storage':
      nodefsSignal === undefined ? percentOf(storage, DEFAULT_EVICTION_NODEFS_PERCENT) : evictionSignal(storage, nodefsSignal),
  };
}

/**
 * kube-reserved, system-reserved and eviction threshold for a type (Karpenter's `InstanceTypeOverhead`).
 * @throws {QuantityError} when a kubelet quantity is malformed
 */
export function computeOverhead(type: InstanceTypeInfo, options: AllocatableOptions = {}): InstanceTypeOverhead {
  return {
    kubeReserved: kubeReserved(type, options),
    systemReserved: systemReserved(options),
    evictionThreshold: evictionThreshold(computeCapacity(type, options), options),
  };
}

/**
 * What pods can request on a node of this type: `capacity − (kubeReserved + systemReserved + evictionThreshold)`,
 * resource by resource over the capacity's resources (an overhead on a resource the node does not have is
 * ignored). Extended resources (GPUs, pod-eni, EFA, Neuron) appear as their counts. Unlike Karpenter, a negative
 * result is clamped to 0 (it only happens with reservations larger than the node, and fits nothing either way).
 *
 * Source: kubernetes-sigs/karpenter `pkg/cloudprovider/types.go computeAllocatable`; the parts are documented on
 * {@link computeCapacity}, {@link kubeReserved}, {@link systemReserved} and {@link evictionThreshold}.
 * @param type a catalogue row
 * @param options EC2NodeClass kubelet settings, AMI family and Karpenter options; all default to Karpenter's defaults
 * @returns cpu millicores, memory and ephemeral-storage MiB, pods and extended resources as counts
 * @throws {QuantityError} when a kubelet quantity is malformed
 * @example
 * computeAllocatable(instanceTypeByName('m5.large')!)
 * // { cpu: 1930, memory: 6903, 'ephemeral-storage': 17408, pods: 29, 'vpc.amazonaws.com/pod-eni': 9 }
 */
export function computeAllocatable(type: InstanceTypeInfo, options: AllocatableOptions = {}): ResourceList {
  const capacity = computeCapacity(type, options);
  const overhead = computeOverhead(type, options);
  const allocatable: Record<string, number> = {};
  for (const [name, amount] of Object.entries(capacity)) {
    const reserved =
      (overhead.kubeReserved[name] ?? 0) + (overhead.systemReserved[name] ?? 0) + (overhead.evictionThreshold[name] ?? 0);
    allocatable[name] = Math.max(amount - reserved, 0);
  }
  return allocatable;
}

function efaOnlyOnDefaultCard(options: AllocatableOptions): number {
  return (options.networkInterfaces ?? []).filter((nic) => nic.networkCardIndex === 0 && nic.interfaceType === 'efa-only').length;
}

/** An eviction signal value as an amount in MiB: a percentage of `capacityMiB`, or a quantity. */
function evictionSignal(capacityMiB: number, value: string): number {
  const trimmed = value.trim();
  if (!trimmed.endsWith('%')) return mebibytes(trimmed);
  const percent = Number(trimmed.slice(0, -1));
  if (trimmed.length === 1 || !Number.isFinite(percent) || percent < 0 || percent > 100) {
    throw new QuantityError(value, 'not a valid eviction threshold percentage');
  }
  return percentOf(capacityMiB, percent === 100 ? 0 : percent);
}

/** `ceil(bytes / 100 × percent)` in MiB, in Karpenter's operation order. */
function percentOf(capacityMiB: number, percent: number): number {
  return Math.ceil(((capacityMiB * MIB) / 100) * percent) / MIB;
}
