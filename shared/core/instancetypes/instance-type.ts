/**
 * The shape of one row of Skiff's instance-type catalogue (`catalog-data.ts`, built by `npm run catalog:build`).
 *
 * A row holds facts about an EC2 instance type (vCPUs, memory, GPUs, ENI limits), the well-known labels
 * Karpenter sets for it, its on-demand list price, and Karpenter's published allocatable as a reference
 * column. Skiff computes its own allocatable from these facts (see `allocatable.ts`).
 *
 * Sources: aws/karpenter-provider-aws `website/content/en/docs/reference/instance-types.md` (labels, allocatable),
 * `pkg/providers/pricing/zz_generated.pricing_aws.go` (prices) and awslabs/amazon-eks-ami
 * `nodeadm/internal/kubelet/instance-info.jsonl` (ENI limits).
 */

/** CPU architectures as Kubernetes names them (`kubernetes.io/arch`). */
export type Architecture = 'amd64' | 'arm64';

/** The GPUs of an instance type, from Karpenter's `karpenter.k8s.aws/instance-gpu-*` labels. */
export interface GpuInfo {
  /** GPU model in lower kebab case, e.g. `a100`, `l40s`, `radeon-pro-v520`. */
  readonly name: string;
  /** GPU manufacturer in lower kebab case: `nvidia` or `amd`. */
  readonly manufacturer: string;
  /** Number of whole GPUs on the instance; 0 for fractional-GPU types (g6f, gr6f), which expose no `nvidia.com/gpu`. */
  readonly count: number;
  /** Memory of one GPU, in MiB. */
  readonly memoryMiB: number;
}

/** The inference/training accelerators of an instance type (Inferentia, Trainium, Qualcomm AI 100). */
export interface AcceleratorInfo {
  /** Accelerator model in lower kebab case, e.g. `inferentia2`, `trainium`. */
  readonly name: string;
  /** Accelerator manufacturer in lower kebab case, e.g. `aws`, `qualcomm`. */
  readonly manufacturer: string;
  /** Number of accelerator devices on the instance. */
  readonly count: number;
}

/**
 * Karpenter's published allocatable for an instance type: amiFamily AL2023, no blockDeviceMappings (20 GiB root
 * volume), default kubelet settings, `VM_MEMORY_OVERHEAD_PERCENT=0.075`. Keys and units match Skiff's
 * `ResourceList` (a type alias, not an interface, so it is assignable to `ResourceList`), so it can be compared
 * directly with `computeAllocatable`.
 */
export type KarpenterAllocatable = {
  /** CPU in millicores. */
  readonly cpu: number;
  /** Memory in MiB. */
  readonly memory: number;
  /** Ephemeral storage in MiB. */
  readonly 'ephemeral-storage': number;
  /** Maximum number of pods. */
  readonly pods: number;
};

/** One EC2 instance type in Skiff's catalogue. Every field is a fact about the type, never a computed overhead. */
export interface InstanceTypeInfo {
  /** EC2 instance type name, e.g. `m5.large`. */
  readonly name: string;
  /** Default number of vCPUs (`karpenter.k8s.aws/instance-cpu`). */
  readonly vcpu: number;
  /** Instance memory in MiB as EC2 reports it (`karpenter.k8s.aws/instance-memory`), before any overhead. */
  readonly memoryMiB: number;
  /** CPU architecture (`kubernetes.io/arch`). */
  readonly arch: Architecture;
  /** Operating system label of the source data (`kubernetes.io/os`); `linux` for every row (AL2023). */
  readonly os: string;
  /** Every well-known label Karpenter sets for this type, as Karpenter publishes them (values are strings). */
  readonly labels: Readonly<Record<string, string>>;
  /** GPUs, or `null` when the type has none. */
  readonly gpu: GpuInfo | null;
  /** Accelerators, or `null` when the type has none. */
  readonly accelerator: AcceleratorInfo | null;
  /**
   * Extended resources the instance offers, as counts: `nvidia.com/gpu`, `amd.com/gpu`, `aws.amazon.com/neuron`,
   * `aws.amazon.com/neuroncore`, `vpc.amazonaws.com/efa`, `vpc.amazonaws.com/pod-eni`. Absent means zero.
   */
  readonly extendedResources: Readonly<Record<string, number>>;
  /** ENIs on the default network card (the ENI max-pods formula's ENI count). */
  readonly defaultMaxENIs: number;
  /** Private IPv4 addresses per ENI (the ENI max-pods formula's address count). */
  readonly ipv4AddressesPerInterface: number;
  /**
   * On-demand Linux list price in USD per instance-hour (us-east-1, also used for us-east-2 and us-west-2), or
   * `null` when the price table has no entry for the type.
   */
  readonly onDemandPrice: number | null;
  /** Karpenter's published allocatable (reference column for tests; Skiff computes its own). */
  readonly karpenterAllocatable: KarpenterAllocatable;
}

/** Extended resource names the catalogue carries in {@link InstanceTypeInfo.extendedResources}. */
export const EXTENDED_RESOURCES = [
  'nvidia.com/gpu',
  'amd.com/gpu',
  'aws.amazon.com/neuron',
  'aws.amazon.com/neuroncore',
  'vpc.amazonaws.com/efa',
  'vpc.amazonaws.com/pod-eni',
] as const;

/** One of {@link EXTENDED_RESOURCES}. */
export type ExtendedResourceName = (typeof EXTENDED_RESOURCES)[number];
