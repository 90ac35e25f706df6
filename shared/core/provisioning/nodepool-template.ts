/**
 * Turns NodePools, their instance types, DaemonSets and current usage into solver templates (limits become
 * `remaining` = limit − usage on the limited keys only).
 * Structural input types keep this independent of the manifest schemas (any parsed `karpenter.sh/v1` NodePool fits).
 */
import type { NodeSelectorRequirement, Taint } from '../api/kubernetes.js';
import { LABEL_NODEPOOL, LABEL_OS, WELL_KNOWN_LABELS } from '../api/labels.js';
import { type InstanceType } from '../instancetypes/offering.js';
import { add, parseResourceList, subtract, type ResourceList } from '../resources/resource-list.js';
import { Requirements } from '../scheduling/requirements.js';
import { firstUntolerated } from '../scheduling/taints.js';
import { podHostPorts, podRequests, podRequirementAlternatives, type PodSpecLike } from './pod.js';
import type { DaemonHostPort, NodePoolTemplate } from './scheduler.js';

/** The NodePool fields provisioning reads (`karpenter.sh/v1` NodePool after defaults). */
export interface NodePoolLike {
  readonly metadata: { readonly name: string };
  readonly spec: {
    readonly weight?: number;
    readonly limits?: Readonly<Record<string, string | number>>;
    readonly template: {
      readonly metadata?: { readonly labels?: Readonly<Record<string, string>> };
      readonly spec: {
        readonly nodeClassRef: { readonly name: string };
        readonly requirements: readonly NodeSelectorRequirement[];
        readonly taints?: readonly Taint[];
        readonly startupTaints?: readonly Taint[];
      };
    };
  };
}

/** The DaemonSet fields provisioning reads. */
export interface DaemonSetLike {
  readonly metadata: { readonly name: string; readonly namespace?: string };
  readonly spec: { readonly template: { readonly spec: PodSpecLike } };
}

/** The requirements of a NodePool: its `requirements` ∩ template labels (as `In`) ∩ `karpenter.sh/nodepool In [name]`. */
export function nodePoolRequirements(nodePool: NodePoolLike): Requirements {
  return Requirements.from(nodePool.spec.template.spec.requirements)
    .intersect(Requirements.fromLabels(nodePool.spec.template.metadata?.labels ?? {}))
    .intersect(Requirements.fromLabels({ [LABEL_NODEPOOL]: nodePool.metadata.name }));
}

/**
 * Sum of the requests of the DaemonSets whose pods would run on this NodePool's nodes: they tolerate its taints
 * and their node requirements are compatible with its requirements. Karpenter computes this per instance type and
 * keeps the minimum (`buildDaemonOverheadGroups`); Skiff v1 computes it per NodePool.
 */
export function daemonOverhead(nodePool: NodePoolLike, daemonSets: readonly DaemonSetLike[]): ResourceList {
  return add({}, ...daemonSetsOn(nodePool, daemonSets).map((ds) => podRequests(ds.spec.template.spec)));
}

/**
 * Host ports (`protocol/port`) the DaemonSets of this NodePool's nodes bind, each with the DaemonSet's node
 * requirement alternatives: a pod binding one of them cannot share a node with that DaemonSet (kube-scheduler
 * `NodePorts`), so only instance types the DaemonSet does not run on can host it (Karpenter checks host ports per
 * group of instance types with the same DaemonSets, `scheduling/hostportusage.go`).
 */
export function daemonHostPorts(nodePool: NodePoolLike, daemonSets: readonly DaemonSetLike[]): DaemonHostPort[] {
  return daemonSetsOn(nodePool, daemonSets).flatMap((ds) => {
    const spec = ds.spec.template.spec;
    const requirements = podRequirementAlternatives(spec);
    return [...new Set(podHostPorts(spec))].map((port) => ({ port, requirements, daemonSet: `${ds.metadata.namespace ?? 'default'}/${ds.metadata.name}` }));
  });
}

/** The DaemonSets whose pods would run on this NodePool's nodes (taints tolerated, node affinity compatible). */
function daemonSetsOn(nodePool: NodePoolLike, daemonSets: readonly DaemonSetLike[]): DaemonSetLike[] {
  const requirements = nodePoolRequirements(nodePool);
  const taints = nodePool.spec.template.spec.taints ?? [];
  return daemonSets.filter((ds) => {
    const spec = ds.spec.template.spec;
    if (firstUntolerated(taints, spec.tolerations ?? [])) return false;
    return podRequirementAlternatives(spec).some((alt) => requirements.compatible(alt, WELL_KNOWN_LABELS) === undefined);
  });
}

/**
 * Builds the solver's view of a NodePool.
 * @param instanceTypes the EC2NodeClass's instance types (unavailable offerings already marked)
 * @param usage capacity of the NodePool's live NodeClaims (cpu millicores, memory MiB, …, plus `nodes`)
 * @throws {QuantityError} when a limit is not a quantity (schemas reject this earlier)
 */
export function buildNodePoolTemplate(
  nodePool: NodePoolLike,
  instanceTypes: readonly InstanceType[],
  daemonSets: readonly DaemonSetLike[],
  usage: ResourceList,
): NodePoolTemplate {
  const requirements = nodePoolRequirements(nodePool);
  const limits = nodePool.spec.limits;
  const compatible = compatibleTypes(requirements, instanceTypes);
  return {
    name: nodePool.metadata.name,
    nodeClass: nodePool.spec.template.spec.nodeClassRef.name,
    weight: nodePool.spec.weight ?? 0,
    requirements,
    labels: { ...(nodePool.spec.template.metadata?.labels ?? {}), [LABEL_NODEPOOL]: nodePool.metadata.name },
    taints: nodePool.spec.template.spec.taints ?? [],
    startupTaints: nodePool.spec.template.spec.startupTaints ?? [],
    instanceTypes: compatible,
    nodeClassOs: osOf(instanceTypes),
    ...(compatible.length === 0 ? { noInstanceTypes: noInstanceTypesReason(requirements, instanceTypes) } : {}),
    daemonOverhead: daemonOverhead(nodePool, daemonSets),
    daemonHostPorts: daemonHostPorts(nodePool, daemonSets),
    ...(limits ? { remaining: subtract(limitList(limits), pick(usage, Object.keys(limits))) } : {}),
  };
}

/** The sorted `kubernetes.io/os` values of an EC2NodeClass's instance types, memoized by the list's identity. */
function osOf(instanceTypes: readonly InstanceType[]): readonly string[] {
  let hit = OS_MEMO.get(instanceTypes);
  if (!hit) {
    hit = [...new Set(instanceTypes.flatMap((t) => (t.labels[LABEL_OS] !== undefined ? [t.labels[LABEL_OS]] : [])))].sort();
    OS_MEMO.set(instanceTypes, hit);
  }
  return hit;
}

/** {@link osOf}'s results by input list. */
const OS_MEMO = new WeakMap<readonly InstanceType[], readonly string[]>();

/** The instance types compatible with a NodePool's requirements, memoized by the list's identity and the requirements. */
function compatibleTypes(requirements: Requirements, instanceTypes: readonly InstanceType[]): InstanceType[] {
  const key = requirements.toString();
  let byRequirements = COMPATIBLE_MEMO.get(instanceTypes);
  if (!byRequirements) COMPATIBLE_MEMO.set(instanceTypes, (byRequirements = new Map()));
  let hit = byRequirements.get(key);
  if (!hit) {
    hit = instanceTypes.filter((t) => requirements.intersects(t.requirements) === undefined);
    if (byRequirements.size >= 64) byRequirements.clear();
    byRequirements.set(key, hit);
  }
  return hit;
}

const COMPATIBLE_MEMO = new WeakMap<readonly InstanceType[], Map<string, InstanceType[]>>();

/**
 * Why a NodePool's requirements leave no instance type: each requirement that alone rules every type out (a type
 * without the label has it `DoesNotExist`, aws `computeRequirements`), or else that they only do together.
 * @param instanceTypes the EC2NodeClass's instance types
 */
function noInstanceTypesReason(requirements: Requirements, instanceTypes: readonly InstanceType[]): string {
  const count = instanceTypes.length.toLocaleString('en-US');
  const alone = requirements.values().filter((r) => instanceTypes.every((t) => Requirements.of(r).intersects(t.requirements) !== undefined));
  if (alone.length === 0) return `no instance type satisfies all of them together (${requirements}), though each alone is met by some of the ${count}`;
  return alone
    .map((r) => {
      const having = instanceTypes.filter((t) => t.requirements.has(r.key) && t.requirements.get(r.key).size() > 0).length;
      return `${r}: ${having === 0 ? `none of the ${count} instance types has the label ${r.key}` : `none of the ${count} instance types has such a value (${having.toLocaleString('en-US')} have a ${r.key} at all)`}`;
    })
    .join('; ');
}

/** NodePool limits in canonical units; `nodes` is a count. */
function limitList(limits: Readonly<Record<string, string | number>>): ResourceList {
  return parseResourceList(limits);
}

function pick(list: ResourceList, keys: readonly string[]): ResourceList {
  return Object.fromEntries(keys.map((k) => [k, list[k] ?? 0]));
}
