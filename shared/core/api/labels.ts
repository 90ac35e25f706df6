/**
 * Well-known labels and restricted label domains, as Karpenter v1 defines them.
 *
 * Sources: kubernetes-sigs/karpenter `pkg/apis/v1/labels.go` (core well-known labels, restricted domains) and
 * aws/karpenter-provider-aws `pkg/apis/v1/labels.go` (the `karpenter.k8s.aws/*` labels); see
 * docs/karpenter-semantics.md#well-known-labels.
 */
import { distance } from 'fastest-levenshtein';

/**
 * The value of `key` in a label map (or any map read from a manifest: annotations, a nodeSelector, tags), only when
 * the map holds the key itself. `labels[key]` would read a member of Object.prototype for a key such as
 * `constructor`, `toString` or `valueOf`, all valid label keys: a node without the label would seem to carry a
 * function. Lookups whose key comes from input (a requirement's, a selector's, a topology key) go through this.
 * @example ownValue({}, 'constructor') // undefined
 */
export function ownValue<V>(map: Readonly<Record<string, V>>, key: string): V | undefined {
  return Object.hasOwn(map, key) ? map[key] : undefined;
}

/** `karpenter.sh/nodepool`: the NodePool that launched a node. */
export const LABEL_NODEPOOL = 'karpenter.sh/nodepool';
/**
 * The EC2 tag Skiff puts on every instance it launches (value: the EKS cluster name). Garbage collection terminates
 * only instances carrying it, so instances another controller launched with Karpenter's tags — a Karpenter being
 * replaced by Skiff — are never touched.
 */
export const TAG_SKIFF_CLUSTER = 'skiff.dev/cluster';
/** `karpenter.sh/capacity-type`: `spot`, `on-demand` or `reserved`. */
export const LABEL_CAPACITY_TYPE = 'karpenter.sh/capacity-type';
/** `topology.kubernetes.io/zone`. */
export const LABEL_ZONE = 'topology.kubernetes.io/zone';
/** `topology.kubernetes.io/region`. */
export const LABEL_REGION = 'topology.kubernetes.io/region';
/** `node.kubernetes.io/instance-type`. */
export const LABEL_INSTANCE_TYPE = 'node.kubernetes.io/instance-type';
/** `kubernetes.io/arch`: `amd64` or `arm64`. */
export const LABEL_ARCH = 'kubernetes.io/arch';
/** `kubernetes.io/os`. */
export const LABEL_OS = 'kubernetes.io/os';
/** `kubernetes.io/hostname` (restricted in NodePool requirements). */
export const LABEL_HOSTNAME = 'kubernetes.io/hostname';
/** `node.kubernetes.io/windows-build`. */
export const LABEL_WINDOWS_BUILD = 'node.kubernetes.io/windows-build';
/** `karpenter.k8s.aws/ec2nodeclass`. */
export const LABEL_EC2NODECLASS = 'karpenter.k8s.aws/ec2nodeclass';
/** `karpenter.sh/registered`, set when a node registers. */
export const LABEL_REGISTERED = 'karpenter.sh/registered';
/** `karpenter.sh/initialized`, set when a node is initialized. */
export const LABEL_INITIALIZED = 'karpenter.sh/initialized';
/** `topology.k8s.aws/zone-id`. */
export const LABEL_ZONE_ID = 'topology.k8s.aws/zone-id';

/** Capacity types Karpenter v1 knows. */
export const CAPACITY_TYPES = ['spot', 'on-demand', 'reserved'] as const;
/** One of {@link CAPACITY_TYPES}. */
export type CapacityType = (typeof CAPACITY_TYPES)[number];

/** The AWS provider's instance labels, all under `karpenter.k8s.aws/`. Numeric ones support Gt/Lt/Gte/Lte. */
export const AWS_INSTANCE_LABELS = [
  'karpenter.k8s.aws/instance-category',
  'karpenter.k8s.aws/instance-family',
  'karpenter.k8s.aws/instance-generation',
  'karpenter.k8s.aws/instance-size',
  'karpenter.k8s.aws/instance-cpu',
  'karpenter.k8s.aws/instance-cpu-manufacturer',
  'karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz',
  'karpenter.k8s.aws/instance-memory',
  'karpenter.k8s.aws/instance-hypervisor',
  'karpenter.k8s.aws/instance-capability-flex',
  'karpenter.k8s.aws/instance-tenancy',
  'karpenter.k8s.aws/instance-ebs-bandwidth',
  'karpenter.k8s.aws/instance-network-bandwidth',
  'karpenter.k8s.aws/instance-local-nvme',
  'karpenter.k8s.aws/instance-encryption-in-transit-supported',
  'karpenter.k8s.aws/nitro-sandbox',
  'karpenter.k8s.aws/instance-gpu-name',
  'karpenter.k8s.aws/instance-gpu-manufacturer',
  'karpenter.k8s.aws/instance-gpu-count',
  'karpenter.k8s.aws/instance-gpu-memory',
  'karpenter.k8s.aws/instance-accelerator-name',
  'karpenter.k8s.aws/instance-accelerator-manufacturer',
  'karpenter.k8s.aws/instance-accelerator-count',
  'karpenter.k8s.aws/instance-pods',
  'karpenter.k8s.aws/capacity-reservation-id',
  'karpenter.k8s.aws/capacity-reservation-type',
  'karpenter.k8s.aws/capacity-reservation-interruptible',
  'karpenter.k8s.aws/placement-group-id',
  'karpenter.k8s.aws/placement-group-partition',
  LABEL_EC2NODECLASS,
] as const;

/**
 * Well-known labels the AWS provider puts on every instance type's requirements as `DoesNotExist` and then fills in
 * when the type has a value (aws `pkg/providers/instancetype/types.go` `computeRequirements`): a type without local
 * NVMe, a GPU, an accelerator, a Windows AMI or a capacity reservation carries `<key> DoesNotExist`, so a NodePool or
 * pod requirement `In`, `Exists`, `Gt`, `Lt`, `Gte` or `Lte` on the key rules the type out while `NotIn` and
 * `DoesNotExist` keep it.
 *
 * `karpenter.k8s.aws/instance-hypervisor` is not among them: every type carries it, with the empty string for metal
 * types (EC2 reports no hypervisor for them), as Karpenter's `In [string(info.Hypervisor)]` gives.
 */
export const DOES_NOT_EXIST_UNLESS_SET_LABELS: readonly string[] = [
  LABEL_WINDOWS_BUILD,
  'karpenter.k8s.aws/instance-cpu-manufacturer',
  'karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz',
  'karpenter.k8s.aws/instance-ebs-bandwidth',
  'karpenter.k8s.aws/instance-network-bandwidth',
  'karpenter.k8s.aws/instance-category',
  'karpenter.k8s.aws/instance-capability-flex',
  'karpenter.k8s.aws/instance-family',
  'karpenter.k8s.aws/instance-generation',
  'karpenter.k8s.aws/instance-local-nvme',
  'karpenter.k8s.aws/instance-size',
  'karpenter.k8s.aws/instance-gpu-name',
  'karpenter.k8s.aws/instance-gpu-manufacturer',
  'karpenter.k8s.aws/instance-gpu-count',
  'karpenter.k8s.aws/instance-gpu-memory',
  'karpenter.k8s.aws/instance-accelerator-name',
  'karpenter.k8s.aws/instance-accelerator-manufacturer',
  'karpenter.k8s.aws/instance-accelerator-count',
  'karpenter.k8s.aws/capacity-reservation-id',
  'karpenter.k8s.aws/capacity-reservation-type',
  'karpenter.k8s.aws/capacity-reservation-interruptible',
];

/**
 * Every label Skiff knows values for without a NodePool defining it. A pod may select on these even when no
 * NodePool requirement mentions them (Karpenter's `AllowUndefinedWellKnownLabels`).
 */
export const WELL_KNOWN_LABELS: ReadonlySet<string> = new Set<string>([
  LABEL_NODEPOOL,
  LABEL_ZONE,
  LABEL_REGION,
  LABEL_INSTANCE_TYPE,
  LABEL_ARCH,
  LABEL_OS,
  LABEL_CAPACITY_TYPE,
  LABEL_WINDOWS_BUILD,
  LABEL_ZONE_ID,
  ...AWS_INSTANCE_LABELS,
]);

/**
 * Deprecated beta labels and the v1 label each stands for; pods using them are normalised
 * (Karpenter `NormalizedLabels`).
 */
export const NORMALIZED_LABELS: Readonly<Record<string, string>> = Object.assign(Object.create(null) as Record<string, string>, {
  // No prototype: it is looked up by any label key a pod uses, `constructor` included (see ownValue).
  'failure-domain.beta.kubernetes.io/zone': LABEL_ZONE,
  'failure-domain.beta.kubernetes.io/region': LABEL_REGION,
  'beta.kubernetes.io/arch': LABEL_ARCH,
  'beta.kubernetes.io/os': LABEL_OS,
  'beta.kubernetes.io/instance-type': LABEL_INSTANCE_TYPE,
  'topology.ebs.csi.aws.com/zone': LABEL_ZONE,
});

/**
 * The v1 label a deprecated beta key stands for, or the key itself (Karpenter `NormalizedLabels`, applied by core
 * `scheduling/requirement.go` `NewRequirementWithFlexibility` to every requirement's key).
 * @example normalizedLabelKey('beta.kubernetes.io/arch') // 'kubernetes.io/arch'
 */
export function normalizedLabelKey(key: string): string {
  return NORMALIZED_LABELS[key] ?? key;
}

/** Label domains users may not put in NodePool requirements or template labels (unless the key is well-known). */
export const RESTRICTED_LABEL_DOMAINS = ['kubernetes.io', 'k8s.io', 'karpenter.sh', 'karpenter.k8s.aws'] as const;

/** Sub-domains of restricted domains that users may still use (Karpenter's `LabelDomainExceptions`). */
export const LABEL_DOMAIN_EXCEPTIONS = ['kops.k8s.io', 'node.kubernetes.io', 'node-restriction.kubernetes.io'] as const;

/**
 * Why a label key may not be used in a NodePool's requirements or template labels, or undefined when it may.
 * Karpenter rejects `kubernetes.io/hostname` and any key in a restricted domain that is not well-known.
 */
export function restrictedLabelReason(key: string): string | undefined {
  if (key === LABEL_HOSTNAME) return `label ${key} is restricted: a NodePool cannot choose a node's hostname`;
  if (WELL_KNOWN_LABELS.has(key)) return undefined;
  const slash = key.indexOf('/');
  if (slash < 0) return undefined;
  const domain = key.slice(0, slash);
  if (LABEL_DOMAIN_EXCEPTIONS.some((d) => domain === d || domain.endsWith(`.${d}`))) return undefined;
  const restricted = RESTRICTED_LABEL_DOMAINS.find((d) => domain === d || domain.endsWith(`.${d}`));
  if (!restricted) return undefined;
  const near = nearWellKnownLabel(key);
  return `label ${key} is in the restricted domain ${restricted} and is not a well-known label${near ? ` — did you mean ${near}?` : ''}`;
}

/**
 * The well-known label one typo away from `key` (`karpenter.k8s.aws/instance-generaton` → `…/instance-generation`): at
 * most 2 edits, the closest first; undefined when none is that close.
 */
function nearWellKnownLabel(key: string): string | undefined {
  let best: { label: string; edits: number } | undefined;
  for (const label of WELL_KNOWN_LABELS) {
    const edits = distance(key, label);
    if (edits <= 2 && (!best || edits < best.edits)) best = { label, edits };
  }
  return best?.label;
}

/** Labels whose values are integers, so Gt/Lt/Gte/Lte make sense on them. */
export const NUMERIC_LABELS: ReadonlySet<string> = new Set([
  'karpenter.k8s.aws/instance-generation',
  'karpenter.k8s.aws/instance-cpu',
  'karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz',
  'karpenter.k8s.aws/instance-memory',
  'karpenter.k8s.aws/instance-ebs-bandwidth',
  'karpenter.k8s.aws/instance-network-bandwidth',
  'karpenter.k8s.aws/instance-local-nvme',
  'karpenter.k8s.aws/instance-gpu-count',
  'karpenter.k8s.aws/instance-gpu-memory',
  'karpenter.k8s.aws/instance-accelerator-count',
  'karpenter.k8s.aws/instance-pods',
]);

/** Taint applied to every node Skiff disrupts (Karpenter's `karpenter.sh/disrupted:NoSchedule`). */
export const DISRUPTED_TAINT_KEY = 'karpenter.sh/disrupted';
/** Taint a node carries until it registers (`karpenter.sh/unregistered:NoExecute`). */
export const UNREGISTERED_TAINT_KEY = 'karpenter.sh/unregistered';
/**
 * The finalizer registration puts on every Node (Karpenter `v1.TerminationFinalizer`, core
 * `pkg/controllers/nodeclaim/lifecycle/registration.go` `syncNode`): a deleted Node stays, with a deletionTimestamp,
 * until its drain is over and its instance terminated (core `pkg/controllers/node/termination/controller.go`).
 */
export const TERMINATION_FINALIZER = 'karpenter.sh/termination';
/** The `karpenter.sh/do-not-disrupt` annotation on pods and nodes. */
export const DO_NOT_DISRUPT_ANNOTATION = 'karpenter.sh/do-not-disrupt';
