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
 *
 * Also what an EC2NodeClass's AMI family changes besides allocatable: the OS labels of its nodes
 * ({@link amiFamilyLabels}) and which instance types it can boot ({@link launchableWithAmiFamily}).
 */
import { LABEL_OS, LABEL_WINDOWS_BUILD } from '../api/labels.js';
import { QuantityError } from '../errors.js';
import { mebibytes } from '../resources/quantity.js';
import { parseResourceList, type ResourceList } from '../resources/resource-list.js';
import type { InstanceTypeInfo } from './instance-type.js';

/** Bytes per MiB. */
const MIB = 2 ** 20;

/** AMI families of an EC2NodeClass (`spec.amiSelectorTerms[].alias` family, or `Custom`). */
export type AmiFamily = 'AL2023' | 'AL2' | 'Bottlerocket' | 'Windows2019' | 'Windows2022' | 'Windows2025' | 'Custom';

/**
 * What an AMI family changes in an instance type: its OS labels, whether it can boot the type at all, and the
 * allocatable computation (Karpenter's `amifamily.FeatureFlags`, `EphemeralBlockDevice` and default block device
 * mappings).
 */
export interface AmiFamilyTraits {
  /** Max pods comes from the ENI formula; otherwise it is 110 (Windows). */
  readonly supportsENILimitedPodDensity: boolean;
  /** kube-reserved memory is computed from the ENI-limited pod count, whatever `maxPods`/`podsPerCore` say (AL2, AL2023, Custom). */
  readonly usesENILimitedMemoryOverhead: boolean;
  /** `kubelet.podsPerCore` is honoured (not on Bottlerocket). */
  readonly podsPerCoreEnabled: boolean;
  /**
   * The device kubelet's nodefs lives on (Karpenter's `EphemeralBlockDevice`): `/dev/xvda` for AL2/AL2023,
   * Bottlerocket's data volume `/dev/xvdb`, `/dev/sda1` for Windows; undefined for Custom (unknown to Karpenter).
   */
  readonly ephemeralBlockDevice: string | undefined;
  /**
   * Size of the family's default mapping for {@link ephemeralBlockDevice}, in MiB (20 GiB; 50 GiB for Windows); for
   * Custom, which has no default mappings, Karpenter's `DefaultEBS` size (20 GiB).
   */
  readonly defaultEphemeralVolumeMiB: number;
  /** The node reports `vpc.amazonaws.com/PrivateIPv4Address` (Windows IPAM). */
  readonly privateIPv4Address: boolean;
  /** `kubernetes.io/os` of the nodes: `windows` for the Windows families, else `linux`. */
  readonly os: 'linux' | 'windows';
  /** `node.kubernetes.io/windows-build` of the nodes (Windows families only). */
  readonly windowsBuild?: string;
}

/** Karpenter's default EBS volume size for the ephemeral block device (`amifamily.DefaultEBS`): 20 GiB, in MiB. */
export const DEFAULT_ROOT_VOLUME_MIB = 20 * 1024;

/**
 * `node.kubernetes.io/windows-build` of each Windows family. Source: aws `pkg/apis/v1/labels.go`
 * (`Windows2019Build`, `Windows2022Build`, `Windows2025Build`).
 */
export const WINDOWS_BUILDS = { Windows2019: '10.0.17763', Windows2022: '10.0.20348', Windows2025: '10.0.26100' } as const;

const LINUX_FAMILY: AmiFamilyTraits = {
  supportsENILimitedPodDensity: true,
  usesENILimitedMemoryOverhead: true,
  podsPerCoreEnabled: true,
  ephemeralBlockDevice: '/dev/xvda',
  defaultEphemeralVolumeMiB: DEFAULT_ROOT_VOLUME_MIB,
  privateIPv4Address: false,
  os: 'linux',
};
const windows = (build: string): AmiFamilyTraits => ({
  supportsENILimitedPodDensity: false,
  usesENILimitedMemoryOverhead: false,
  podsPerCoreEnabled: true,
  ephemeralBlockDevice: '/dev/sda1',
  defaultEphemeralVolumeMiB: 50 * 1024,
  privateIPv4Address: true,
  os: 'windows',
  windowsBuild: build,
});

/**
 * The traits of each AMI family. Source: aws/karpenter-provider-aws `pkg/providers/amifamily/{resolver,al2023,al2,
 * bottlerocket,windows,custom}.go` (`FeatureFlags`, `EphemeralBlockDevice`, `DefaultBlockDeviceMappings`: 20 GiB
 * `/dev/xvda` for AL2/AL2023, a 4 GiB `/dev/xvda` OS volume and a 20 GiB `/dev/xvdb` data volume for Bottlerocket,
 * 50 GiB `/dev/sda1` for Windows, none for Custom) and `pkg/providers/instancetype/types.go` (`getOS`, the
 * `LabelWindowsBuild` requirement).
 */
export const AMI_FAMILY_TRAITS: Readonly<Record<AmiFamily, AmiFamilyTraits>> = {
  AL2023: LINUX_FAMILY,
  AL2: LINUX_FAMILY,
  Custom: { ...LINUX_FAMILY, ephemeralBlockDevice: undefined },
  Bottlerocket: { ...LINUX_FAMILY, usesENILimitedMemoryOverhead: false, podsPerCoreEnabled: false, ephemeralBlockDevice: '/dev/xvdb' },
  Windows2019: windows(WINDOWS_BUILDS.Windows2019),
  Windows2022: windows(WINDOWS_BUILDS.Windows2022),
  Windows2025: windows(WINDOWS_BUILDS.Windows2025),
};

/**
 * Whether an EC2NodeClass of `family` can launch `type`. Two rules, each as Karpenter applies it:
 * - `a1.*` (first-generation Graviton) cannot boot AL2023. Source: aws
 *   `pkg/providers/instancetype/compatibility/compatibility.go` `amiFamilyCheck` (since v1.11; Karpenter marks every
 *   offering of the type unavailable, `offering/base_resolver.go`, so it is never launched).
 * - The Windows families boot amd64 only: `types.go getOS` gives an arm64 type no `kubernetes.io/os` value under a
 *   Windows family, and the Windows AMIs (`amifamily/windows.go`, x86_64 images) serve no arm64 type, so
 *   `amifamily.MapToInstanceTypes` never launches one.
 *
 * Skiff leaves such types out of the EC2NodeClass's instance types altogether (as Karpenter's
 * `FilterForNodeClass` does for EC2NodeClass validation); the launch outcome is the same. Nothing else is excluded
 * per family: Windows launches GPU types, as Karpenter's Windows AMI carries no GPU-variant requirement.
 * @param type a catalogue row (uses `name` and `arch`)
 * @param family the EC2NodeClass's AMI family @default 'AL2023'
 * @example launchableWithAmiFamily(instanceTypeByName('a1.large')!, 'AL2023') // false
 */
export function launchableWithAmiFamily(type: Pick<InstanceTypeInfo, 'name' | 'arch'>, family: AmiFamily = 'AL2023'): boolean {
  if (family === 'AL2023' && type.name.startsWith('a1.')) return false;
  if (AMI_FAMILY_TRAITS[family].os === 'windows' && type.arch !== 'amd64') return false;
  return true;
}

/**
 * The well-known labels a node of `type` carries under `family`: the catalogue's labels with `kubernetes.io/os` from
 * the family (`windows` for Windows2019/2022/2025, else `linux`) and, for Windows, `node.kubernetes.io/windows-build`.
 * Source: aws `pkg/providers/instancetype/types.go computeRequirements` (`getOS`; `LabelWindowsBuild` is
 * `DoesNotExist` unless the family is Windows, then its `Build`).
 * @param type a catalogue row (uses `labels`)
 * @param family the EC2NodeClass's AMI family @default 'AL2023'
 * @returns a new label map
 * @example amiFamilyLabels(m5large, 'Windows2022')['node.kubernetes.io/windows-build'] // '10.0.20348'
 */
export function amiFamilyLabels(type: Pick<InstanceTypeInfo, 'labels'>, family: AmiFamily = 'AL2023'): Record<string, string> {
  const traits = AMI_FAMILY_TRAITS[family];
  const labels: Record<string, string> = { ...type.labels, [LABEL_OS]: traits.os };
  delete labels[LABEL_WINDOWS_BUILD];
  if (traits.windowsBuild !== undefined) labels[LABEL_WINDOWS_BUILD] = traits.windowsBuild;
  return labels;
}

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

/**
 * A block device mapping as far as ephemeral storage cares (EC2NodeClass `spec.blockDeviceMappings[]`; the parsed
 * schema type is assignable to it).
 */
export interface EphemeralBlockDeviceMapping {
  /** e.g. `/dev/xvda`. */
  readonly deviceName?: string;
  /** Marks the mapping as the root volume (Skiff and Karpenter then use it as the ephemeral volume). */
  readonly rootVolume?: boolean;
  /** `volumeSize` is a Kubernetes quantity (`100Gi`, `100G`) or a byte count. */
  readonly ebs?: { readonly volumeSize?: string | number };
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
   * EC2NodeClass `spec.blockDeviceMappings`; the one {@link ephemeralStorageCapacity} picks sets ephemeral storage.
   * @default the AMI family's default mappings
   */
  readonly blockDeviceMappings?: readonly EphemeralBlockDeviceMapping[];
  /** EC2NodeClass `spec.instanceStorePolicy`: `RAID0` puts ephemeral storage on the instance-store NVMe disks. @default undefined */
  readonly instanceStorePolicy?: 'RAID0';
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
 * assignable to this): the AMI family, the kubelet fields that change allocatable, the block device mappings and
 * the instance store policy.
 */
export interface NodeClassAllocatableSettings {
  /** The EC2NodeClass's AMI family (`ec2NodeClassAmiFamily`). @default 'AL2023' */
  readonly amiFamily?: AmiFamily;
  /** EC2NodeClass `spec.kubelet`. @default {} */
  readonly kubelet?: KubeletAllocatableConfig;
  /** EC2NodeClass `spec.blockDeviceMappings`. @default the AMI family's default mappings */
  readonly blockDeviceMappings?: readonly EphemeralBlockDeviceMapping[];
  /** EC2NodeClass `spec.instanceStorePolicy`. @default undefined */
  readonly instanceStorePolicy?: 'RAID0';
}

/**
 * The {@link AllocatableOptions} for an EC2NodeClass's settings: its AMI family, kubelet, block device mappings and
 * instance store policy as they are, and the deployment's VM memory overhead. Every CloudProvider (simulated and
 * EC2) builds its options here, so the same EC2NodeClass gets the same allocatable everywhere.
 * @param settings AMI family, kubelet, block device mappings and instance store policy of the EC2NodeClass
 * @param vmMemoryOverheadPercent Karpenter's `VM_MEMORY_OVERHEAD_PERCENT`, a fraction (0.075 = 7.5 %)
 * @example nodeClassAllocatableOptions({ amiFamily: 'Bottlerocket' }, 0.075) // { vmMemoryOverheadPercent: 0.075, amiFamily: 'Bottlerocket' }
 */
export function nodeClassAllocatableOptions(settings: NodeClassAllocatableSettings, vmMemoryOverheadPercent: number): AllocatableOptions {
  return {
    vmMemoryOverheadPercent,
    ...(settings.amiFamily !== undefined ? { amiFamily: settings.amiFamily } : {}),
    ...(settings.kubelet ? { kubelet: settings.kubelet } : {}),
    ...(settings.blockDeviceMappings !== undefined ? { blockDeviceMappings: settings.blockDeviceMappings } : {}),
    ...(settings.instanceStorePolicy !== undefined ? { instanceStorePolicy: settings.instanceStorePolicy } : {}),
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

/** `karpenter.k8s.aws/instance-local-nvme`: total instance-store NVMe size in GB (decimal). */
const LABEL_INSTANCE_LOCAL_NVME = 'karpenter.k8s.aws/instance-local-nvme';

/**
 * Ephemeral-storage capacity: the size of the volume kubelet's nodefs lives on, in this order:
 * 1. `instanceStorePolicy: RAID0` and the type has instance-store NVMe: their total (`instance-local-nvme` GB, decimal);
 * 2. with `blockDeviceMappings`: the `rootVolume: true` mapping's size; else, for Custom, the last mapping's size
 *    (20 GiB when it has none); else the mapping on the family's ephemeral device (`/dev/xvda` AL2/AL2023,
 *    `/dev/xvdb` Bottlerocket, `/dev/sda1` Windows) when it has a size;
 * 3. the family's default for its ephemeral device: 20 GiB (Bottlerocket's 20 GiB data volume, not its 4 GiB OS
 *    volume), 50 GiB for Windows, Karpenter's `DefaultEBS` 20 GiB for Custom.
 *
 * Source: aws `pkg/providers/instancetype/types.go ephemeralStorage`, `pkg/providers/amifamily/*.go
 * EphemeralBlockDevice` and `DefaultBlockDeviceMappings`. Karpenter's RAID0 rule reads `InstanceStorageInfo.
 * TotalSizeInGB`; Skiff reads the NVMe total label, so a type with only non-NVMe instance store (e.g. d2, h1) keeps
 * its EBS volume here.
 * @param type a catalogue row (only its `instance-local-nvme` label is read)
 * @returns MiB (fractions when a size is decimal, e.g. `100G` = 95367.43 MiB)
 * @throws {QuantityError} when a volume size is not a quantity (schemas reject this earlier)
 * @example ephemeralStorageCapacity(m5large, { amiFamily: 'Bottlerocket', blockDeviceMappings: [{ deviceName: '/dev/xvdb', ebs: { volumeSize: '100Gi' } }] }) // 102400
 */
export function ephemeralStorageCapacity(type: Pick<InstanceTypeInfo, 'labels'>, options: AllocatableOptions = {}): number {
  const traits = amiFamilyTraits(options);
  if (options.instanceStorePolicy === 'RAID0') {
    const nvme = type.labels[LABEL_INSTANCE_LOCAL_NVME];
    if (nvme !== undefined) return mebibytes(`${nvme}G`);
  }
  const mappings = options.blockDeviceMappings ?? [];
  if (mappings.length > 0) {
    const root = mappings.find((m) => m.rootVolume === true)?.ebs?.volumeSize;
    if (root !== undefined) return mebibytes(root);
    if (traits.ephemeralBlockDevice === undefined) {
      const last = mappings[mappings.length - 1]?.ebs?.volumeSize;
      return last !== undefined ? mebibytes(last) : DEFAULT_ROOT_VOLUME_MIB;
    }
    const device = mappings.find((m) => m.deviceName === traits.ephemeralBlockDevice)?.ebs?.volumeSize;
    if (device !== undefined) return mebibytes(device);
  }
  return traits.defaultEphemeralVolumeMiB;
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
    'ephemeral-storage': ephemeralStorageCapacity(type, options),
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
