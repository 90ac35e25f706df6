/**
 * Drift: a NodeClaim no longer matches what its NodePool and EC2NodeClass would launch today (Karpenter
 * `nodeclaim/disruption/drift.go`; AWS `pkg/cloudprovider/drift.go`). Drifted nodes are replaced (replacement first)
 * within the NodePool's budgets for reason `Drifted`.
 *
 * - `NodePoolDrifted`: the hash of `spec.template` — labels, annotations, taints, startupTaints, nodeClassRef,
 *   expireAfter, terminationGracePeriod — differs from the one recorded at launch (annotation
 *   `karpenter.sh/nodepool-hash`). Requirements are left out of the hash (their own check below), and so are the
 *   behavioural fields `weight`, `limits` and `disruption`, which never cause drift (docs `concepts/disruption.md`
 *   "Drift", "Behavioral Fields").
 * - `RequirementsDrifted`: the node's labels no longer satisfy the NodePool's requirements.
 * - `NodeClassDrifted`: the hash of the EC2NodeClass `spec` (AMI, subnet and security-group selectors, userData,
 *   block devices, kubelet, tags, metadata options, role…) differs from the one recorded at launch. Karpenter AWS
 *   resolves AMIs, subnets and security groups and compares them with the instance's; Skiff's record keeps the spec
 *   hash, so a changed selector drifts every node launched under the old one.
 */
import { LABEL_CAPACITY_TYPE, LABEL_REGION, LABEL_ZONE } from '../api/labels.js';
import { cheapestOffering, type InstanceType } from '../instancetypes/offering.js';
import type { Requirement } from '../scheduling/requirement.js';
import type { Requirements } from '../scheduling/requirements.js';
import { structuralHash } from '../hash.js';

/** Karpenter's drift reasons that Skiff detects. */
export type DriftReason = 'NodePoolDrifted' | 'RequirementsDrifted' | 'NodeClassDrifted';

/** The NodePool fields the template hash covers (any parsed `karpenter.sh/v1` NodePool fits). */
export interface NodePoolTemplateLike {
  readonly spec: {
    readonly template: {
      readonly metadata?: { readonly labels?: Readonly<Record<string, string>>; readonly annotations?: Readonly<Record<string, string>> };
      readonly spec: {
        readonly nodeClassRef: unknown;
        readonly requirements?: unknown;
        readonly taints?: unknown;
        readonly startupTaints?: unknown;
        readonly expireAfter?: string;
        readonly terminationGracePeriod?: string;
      };
    };
  };
}

/**
 * The NodePool template hash recorded on each NodeClaim at launch (16 hex digits).
 * @example nodePoolHash(np) === nodePoolHash({ ...np, spec: { ...np.spec, weight: 50 } }) // true: weight is behavioural
 */
export function nodePoolHash(nodePool: NodePoolTemplateLike): string {
  const { metadata, spec } = nodePool.spec.template;
  return structuralHash({
    labels: metadata?.labels ?? {},
    annotations: metadata?.annotations ?? {},
    taints: spec.taints ?? [],
    startupTaints: spec.startupTaints ?? [],
    nodeClassRef: spec.nodeClassRef,
    expireAfter: spec.expireAfter ?? null,
    terminationGracePeriod: spec.terminationGracePeriod ?? null,
  });
}

/** The EC2NodeClass hash recorded on each NodeClaim at launch: its whole `spec` (16 hex digits). */
export function nodeClassHash(nodeClass: { readonly spec: unknown }): string {
  return structuralHash(nodeClass.spec);
}

/** What a drift check compares: the hashes recorded at launch and the node's labels. */
export interface DriftSubject {
  readonly nodePoolHash?: string;
  readonly nodeClassHash?: string;
  /** The node's labels (or the NodeClaim's while it has no node). */
  readonly labels: Readonly<Record<string, string>>;
}

/**
 * Why a NodeClaim has drifted, or undefined. A record without a hash (launched before hashes were kept) is not
 * drifted on that count.
 * @param requirements the NodePool's requirements (`nodePoolRequirements(np)`)
 */
export function driftReason(subject: DriftSubject, currentNodePoolHash: string, requirements: Requirements, currentNodeClassHash: string | undefined): DriftReason | undefined {
  if (subject.nodePoolHash !== undefined && subject.nodePoolHash !== currentNodePoolHash) return 'NodePoolDrifted';
  if (!requirements.isSatisfiedBy(subject.labels)) return 'RequirementsDrifted';
  if (subject.nodeClassHash !== undefined && currentNodeClassHash !== undefined && subject.nodeClassHash !== currentNodeClassHash) return 'NodeClassDrifted';
  return undefined;
}

/**
 * A drift reason in words, as the `Drifted` disruption's message and the Result say it.
 * @param nodePool the NodeClaim's NodePool
 * @param nodeClass the NodeClaim's EC2NodeClass
 * @example driftMessage('NodeClassDrifted', 'general', 'default') // 'NodeClassDrifted: EC2NodeClass default changed since the node was launched'
 */
export function driftMessage(reason: DriftReason, nodePool: string, nodeClass: string): string {
  switch (reason) {
    case 'NodePoolDrifted':
      return `NodePoolDrifted: NodePool ${nodePool}'s template changed since the node was launched`;
    case 'RequirementsDrifted':
      return `RequirementsDrifted: the node no longer satisfies NodePool ${nodePool}'s requirements`;
    case 'NodeClassDrifted':
      return `NodeClassDrifted: EC2NodeClass ${nodeClass} changed since the node was launched`;
    default:
      return reason satisfies never;
  }
}

/** A replacement that would be drifted as soon as it registered: the instance type and the requirement its node would miss. */
export interface ReplacementDrift {
  readonly instanceType: string;
  readonly requirement: Requirement;
}

/**
 * Whether a replacement planned for a drifted NodeClaim would itself be `RequirementsDrifted`: for each instance type
 * it may launch as, the labels its node would carry — the type's labels, the plan's (template labels, single-valued
 * requirements, generated custom labels), the zone and capacity type of the cheapest offering the plan allows, and the
 * region — must satisfy the NodePool's requirements. Launching such a replacement would only start a replace loop
 * (the replacement drifted, replaced, and so on), so the drift path launches none and leaves the node as it is.
 * Hashes are not checked: a replacement always records the current NodePool and EC2NodeClass hashes.
 * @param requirements the NodePool's requirements (`nodePoolRequirements(np)`), as {@link driftReason} checks them
 * @param plan the replacement: its labels, requirements (zone and capacity type) and instance type options by name
 * @param types the EC2NodeClass's instance types (options missing from it are skipped)
 * @param region the cluster's region (`topology.kubernetes.io/region` of every node)
 * @returns the first option whose node would be drifted and the requirement it would miss, or undefined
 */
export function replacementDrift(
  requirements: Requirements,
  plan: { readonly labels: Readonly<Record<string, string>>; readonly requirements: Requirements; readonly instanceTypes: readonly { readonly name: string }[] },
  types: readonly InstanceType[],
  region: string,
): ReplacementDrift | undefined {
  const byName = new Map(types.map((t) => [t.name, t]));
  for (const option of plan.instanceTypes) {
    const type = byName.get(option.name);
    if (!type) continue;
    const offering = cheapestOffering(type, plan.requirements);
    const labels = {
      ...type.labels,
      ...plan.labels,
      ...(offering ? { [LABEL_ZONE]: offering.zone, [LABEL_CAPACITY_TYPE]: offering.capacityType } : {}),
      [LABEL_REGION]: region,
    };
    const requirement = requirements.firstUnsatisfied(labels);
    if (requirement) return { instanceType: type.name, requirement };
  }
  return undefined;
}
