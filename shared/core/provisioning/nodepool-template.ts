/**
 * Turns NodePools, their instance types, DaemonSets and current usage into solver templates (limits become
 * `remaining` = limit − usage on the limited keys only).
 * Structural input types keep this independent of the manifest schemas (any parsed `karpenter.sh/v1` NodePool fits).
 */
import type { NodeSelectorRequirement, Taint } from '../api/kubernetes.js';
import { LABEL_INITIALIZED, LABEL_NODEPOOL, LABEL_OS, LABEL_REGISTERED, LABEL_ZONE, WELL_KNOWN_LABELS, normalizedLabelKey } from '../api/labels.js';
import { type InstanceType } from '../instancetypes/offering.js';
import { add, parseResourceList, subtract, type ResourceList } from '../resources/resource-list.js';
import { Requirement, sortValues } from '../scheduling/requirement.js';
import { Requirements } from '../scheduling/requirements.js';
import { resolveCustomLabels } from './custom-labels.js';
import { isNearMiss, nearValue } from './hints.js';
import { firstUntolerated } from '../scheduling/taints.js';
import { podHostPorts, podRequests, podRequirementAlternatives, type PodSpecLike } from './pod.js';
import type { DaemonHostPort, NodePoolTemplate } from './types.js';

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
  // Deprecated beta keys stand for their v1 labels (core `scheduling/requirement.go` `NewRequirementWithFlexibility`
  // normalizes every requirement's key through `NormalizedLabels`): `beta.kubernetes.io/arch In [amd64]` narrows.
  return Requirements.from(nodePool.spec.template.spec.requirements.map((r) => ({ ...r, key: normalizedLabelKey(r.key) })))
    .intersect(Requirements.fromLabels(nodePool.spec.template.metadata?.labels ?? {}))
    .intersect(Requirements.fromLabels({ [LABEL_NODEPOOL]: nodePool.metadata.name }));
}

/**
 * The requirements DaemonSet pods are matched against: the NodePool's requirements plus `karpenter.sh/registered In
 * [true]` and `karpenter.sh/initialized In [true]`, labels every node of the NodePool carries once it runs pods, so a
 * DaemonSet selecting them counts on new NodeClaims. Core `scheduling/nodeclaimtemplate.go` `NewNodeClaimTemplate`.
 */
export function daemonRequirements(nodePool: NodePoolLike): Requirements {
  return nodePoolRequirements(nodePool).add(Requirement.in(LABEL_REGISTERED, ['true']), Requirement.in(LABEL_INITIALIZED, ['true']));
}

/**
 * Whether a DaemonSet's pod runs on a node of this NodePool of this instance type: it tolerates the NodePool's taints
 * (startup taints and `PreferNoSchedule` aside), and one of its required node-affinity alternatives (with its
 * nodeSelector) is compatible with {@link daemonRequirements} (labels neither well-known nor defined there fail) and
 * intersects the instance type's requirements (keys the type does not define are ignored). Core
 * `scheduling/scheduler.go` `isDaemonPodCompatible` (v1.14).
 * @param type the instance type, or undefined to ask whether it runs on some node of the NodePool
 */
function daemonRunsOn(requirements: Requirements, taints: readonly Taint[], ds: DaemonSetLike, type: InstanceType | undefined): boolean {
  const spec = ds.spec.template.spec;
  if (firstUntolerated(taints, spec.tolerations ?? [])) return false;
  return podRequirementAlternatives(spec).some((alt) => requirements.compatible(alt, WELL_KNOWN_LABELS) === undefined && (!type || type.requirements.intersects(alt) === undefined));
}

/**
 * The least daemonset overhead of any instance type of the NodePool (key-wise minimum over the groups of
 * {@link daemonOverheadGroups}; canonical units): the overhead every new node of the pool carries. The solver adds
 * the rest per instance type (see {@link buildNodePoolTemplate}).
 */
export function daemonOverhead(nodePool: NodePoolLike, daemonSets: readonly DaemonSetLike[], instanceTypes: readonly InstanceType[] = []): ResourceList {
  const groups = daemonOverheadGroups(nodePool, daemonSets, compatibleTypes(nodePoolRequirements(nodePool), instanceTypes));
  return groups.length === 0 ? add({}, ...daemonSetsOn(nodePool, daemonSets).map((ds) => podRequests(ds.spec.template.spec))) : minOverhead(groups.map((g) => g.overhead));
}

/** Instance types whose nodes run the same DaemonSets, and those DaemonSets' summed requests (canonical units). */
export interface DaemonOverheadGroup {
  /** `namespace/name` of the DaemonSets, sorted. */
  readonly daemonSets: readonly string[];
  readonly overhead: ResourceList;
  readonly instanceTypes: readonly InstanceType[];
}

/**
 * Groups a NodePool's instance types by the DaemonSets whose pods would run on their nodes (taints tolerated, node
 * affinity compatible with the NodePool and the type; see `daemonRunsOn`), each group with their summed requests: a
 * DaemonSet that excludes an instance type (`kubernetes.io/arch`, `node.kubernetes.io/instance-type`, …) costs nothing
 * on it. Core `scheduling/scheduler.go` `buildDaemonOverheadGroups` (v1.14). Groups come in order of first type.
 * @param instanceTypes the types the NodePool's requirements allow
 */
export function daemonOverheadGroups(nodePool: NodePoolLike, daemonSets: readonly DaemonSetLike[], instanceTypes: readonly InstanceType[]): DaemonOverheadGroup[] {
  const requirements = daemonRequirements(nodePool);
  const taints = nodePool.spec.template.spec.taints ?? [];
  const candidates = daemonSets.filter((ds) => daemonRunsOn(requirements, taints, ds, undefined));
  // DaemonSets without a requirement some type could fail run on every type of the pool: counted once, not per type.
  const typeDependent = candidates.filter((ds) => podRequirementAlternatives(ds.spec.template.spec).some((alt) => !alt.isEmpty()));
  const everywhere = candidates.filter((ds) => !typeDependent.includes(ds));
  const groups = new Map<string, { daemonSets: DaemonSetLike[]; instanceTypes: InstanceType[] }>();
  for (const type of instanceTypes) {
    const on = [...everywhere, ...typeDependent.filter((ds) => daemonRunsOn(requirements, taints, ds, type))];
    const key = on.map(dsKey).sort().join(',');
    const group = groups.get(key);
    if (group) group.instanceTypes.push(type);
    else groups.set(key, { daemonSets: on, instanceTypes: [type] });
  }
  return [...groups.values()].map((g) => ({ daemonSets: g.daemonSets.map(dsKey).sort(), overhead: add({}, ...g.daemonSets.map((ds) => podRequests(ds.spec.template.spec))), instanceTypes: g.instanceTypes }));
}

function dsKey(ds: DaemonSetLike): string {
  return `${ds.metadata.namespace ?? 'default'}/${ds.metadata.name}`;
}

/** Key-wise minimum of resource lists (a key missing from one list reads as 0 there). */
function minOverhead(lists: readonly ResourceList[]): ResourceList {
  const keys = new Set(lists.flatMap((l) => Object.keys(l)));
  const out: Record<string, number> = {};
  for (const k of keys) {
    const v = Math.min(...lists.map((l) => l[k] ?? 0));
    if (v > 0) out[k] = v;
  }
  return out;
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
    return [...new Set(podHostPorts(spec))].map((port) => ({ port, requirements, daemonSet: dsKey(ds) }));
  });
}

/** The DaemonSets whose pods would run on some node of this NodePool (see `daemonRunsOn`). */
function daemonSetsOn(nodePool: NodePoolLike, daemonSets: readonly DaemonSetLike[]): DaemonSetLike[] {
  const requirements = daemonRequirements(nodePool);
  const taints = nodePool.spec.template.spec.taints ?? [];
  return daemonSets.filter((ds) => daemonRunsOn(requirements, taints, ds, undefined));
}

/**
 * The instance types as the solver sees them under the daemonset overhead groups: a type whose group carries more
 * than `base` (the pool-wide {@link daemonOverhead}) gets a copy whose allocatable is smaller by the difference, so
 * "pods + base overhead fit the allocatable" is the same question as "pods + its group's overhead fit its real
 * allocatable". Capacity (limits) and offerings are unchanged; copies are shared per type and difference.
 */
function withGroupOverhead(groups: readonly DaemonOverheadGroup[], base: ResourceList, types: readonly InstanceType[]): readonly InstanceType[] {
  const hit = WITH_OVERHEAD.get(groups);
  if (hit && hit.of === types) return hit.types;
  const out = withGroupOverheadUncached(groups, base, types);
  WITH_OVERHEAD.set(groups, { of: types, types: out });
  return out;
}

/** {@link withGroupOverhead}'s answer per groups array (memoized by `groupsMemo`; `base` is derived from the groups). */
const WITH_OVERHEAD = new WeakMap<readonly DaemonOverheadGroup[], { readonly of: readonly InstanceType[]; readonly types: readonly InstanceType[] }>();

function withGroupOverheadUncached(groups: readonly DaemonOverheadGroup[], base: ResourceList, types: readonly InstanceType[]): readonly InstanceType[] {
  const extraOf = new Map<InstanceType, ResourceList>();
  for (const g of groups) {
    const extra = subtract(g.overhead, base);
    if (Object.values(extra).some((v) => v > 0)) for (const t of g.instanceTypes) extraOf.set(t, extra);
  }
  if (extraOf.size === 0) return types;
  return types.map((t) => {
    const extra = extraOf.get(t);
    return extra ? reducedType(t, extra) : t;
  });
}

/** Copies of instance types with a smaller allocatable, per type and reduction (stable identities for the solver's caches). */
const REDUCED = new WeakMap<InstanceType, Map<string, InstanceType>>();
function reducedType(type: InstanceType, extra: ResourceList): InstanceType {
  const key = JSON.stringify(Object.entries(extra).sort());
  let byExtra = REDUCED.get(type);
  if (!byExtra) REDUCED.set(type, (byExtra = new Map()));
  let copy = byExtra.get(key);
  if (!copy) {
    const allocatable = Object.fromEntries(Object.entries(type.allocatable).map(([k, v]) => [k, Math.max(0, v - (extra[k] ?? 0))]));
    byExtra.set(key, (copy = { ...type, allocatable }));
  }
  return copy;
}

/**
 * The daemonset overhead (canonical units) of a node of this template of instance type `instanceType`: the template's
 * overhead plus what its daemonset overhead group adds ({@link NodePoolTemplate.daemonExtra}); empty without a template.
 */
export function daemonOverheadOf(template: Pick<NodePoolTemplate, 'daemonOverhead' | 'daemonExtra'> | undefined, instanceType: string): ResourceList {
  if (!template) return {};
  const extra = template.daemonExtra?.[instanceType];
  return extra ? add(template.daemonOverhead, extra) : template.daemonOverhead;
}

/**
 * Builds the solver's view of a NodePool. DaemonSet overhead is per group of instance types (core v1.14
 * `buildDaemonOverheadGroups`): the template's `daemonOverhead` is the least any type carries, and a type whose
 * DaemonSets cost more comes with its allocatable reduced by the difference (`daemonExtra` names those types).
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
  // A custom-label requirement no value satisfies (`a Gt 10` with `a Lt 5`, `f Lt 0`) leaves the NodePool nothing to
  // launch: its node could carry no label its own requirements accept, and would read as drifted at once.
  const unsatisfiable = unsatisfiableCustomRequirements(requirements, nodePool.spec.template.spec.requirements);
  const types = unsatisfiable.length > 0 ? [] : compatibleTypes(requirements, instanceTypes);
  const groups = groupsMemo(nodePool, daemonSets, types);
  const base = groups.length === 0 ? daemonOverhead(nodePool, daemonSets) : minOverhead(groups.map((g) => g.overhead));
  const daemonExtra: Record<string, ResourceList> = {};
  for (const g of groups) {
    const extra = subtract(g.overhead, base);
    if (Object.values(extra).some((v) => v > 0)) for (const t of g.instanceTypes) daemonExtra[t.name] = extra;
  }
  return {
    name: nodePool.metadata.name,
    nodeClass: nodePool.spec.template.spec.nodeClassRef.name,
    weight: nodePool.spec.weight ?? 0,
    requirements,
    labels: { ...(nodePool.spec.template.metadata?.labels ?? {}), [LABEL_NODEPOOL]: nodePool.metadata.name },
    taints: nodePool.spec.template.spec.taints ?? [],
    startupTaints: nodePool.spec.template.spec.startupTaints ?? [],
    instanceTypes: withGroupOverhead(groups, base, types),
    nodeClassOs: osOf(instanceTypes),
    ...(types.length === 0
      ? { noInstanceTypes: unsatisfiable.length > 0 ? `${unsatisfiable.join('; ')}: no value of the label satisfies it, so no node can carry it` : noInstanceTypesReason(requirements, instanceTypes, nodePool.spec.template.spec.requirements) }
      : {}),
    daemonOverhead: base,
    ...(Object.keys(daemonExtra).length > 0 ? { daemonExtra } : {}),
    daemonHostPorts: daemonHostPorts(nodePool, daemonSets),
    ...(limits ? { remaining: subtract(limitList(limits), pick(usage, Object.keys(limits))), limits: limitList(limits) } : {}),
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

/**
 * {@link daemonOverheadGroups}, memoized by the types list's identity and what the grouping reads of the NodePool
 * (requirements, taints) and of the DaemonSets (their pod specs): provisioning rebuilds templates every pass.
 */
function groupsMemo(nodePool: NodePoolLike, daemonSets: readonly DaemonSetLike[], types: readonly InstanceType[]): DaemonOverheadGroup[] {
  if (daemonSets.length === 0) return [];
  const key = JSON.stringify([nodePool.metadata.name, nodePool.spec.template.metadata?.labels, nodePool.spec.template.spec.requirements, nodePool.spec.template.spec.taints, daemonSets.map((ds) => [dsKey(ds), ds.spec.template.spec])]);
  let byKey = GROUPS_MEMO.get(types);
  if (!byKey) GROUPS_MEMO.set(types, (byKey = new Map()));
  let hit = byKey.get(key);
  if (!hit) {
    hit = daemonOverheadGroups(nodePool, daemonSets, types);
    if (byKey.size >= 64) byKey.clear();
    byKey.set(key, hit);
  }
  return hit;
}

/** {@link osOf}'s results by input list. */
const OS_MEMO = new WeakMap<readonly InstanceType[], readonly string[]>();

const GROUPS_MEMO = new WeakMap<readonly InstanceType[], Map<string, DaemonOverheadGroup[]>>();

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
 * without the label has it `DoesNotExist`, aws `computeRequirements`), or else that they only do together. Requirements
 * on one key that leave no value between them (`instance-cpu Gt 8` with `Lt 4`) are named as a conflict; an `In` value
 * no type has gets the value the types do have that it most likely means ({@link nearValue}: `Spot` → `spot`,
 * `x86_64` → `amd64`, `m5.larg` → `m5.large`), and a zone the zones the types are offered in. Karpenter accepts such a
 * NodePool and never launches from it.
 * @param instanceTypes the EC2NodeClass's instance types
 * @param written the NodePool's `spec.template.spec.requirements` as written, to quote the conflicting ones
 */
function noInstanceTypesReason(requirements: Requirements, instanceTypes: readonly InstanceType[], written: readonly NodeSelectorRequirement[]): string {
  const count = instanceTypes.length.toLocaleString('en-US');
  const alone = requirements.values().filter((r) => instanceTypes.every((t) => Requirements.of(r).intersects(t.requirements) !== undefined));
  if (alone.length === 0) return `no instance type satisfies all of them together (${requirements}), though each alone is met by some of the ${count}`;
  return alone
    .map((r) => {
      if (r.size() === 0 && !r.allowsAbsence()) return conflictReason(r, written);
      const having = instanceTypes.filter((t) => t.requirements.has(r.key) && t.requirements.get(r.key).size() > 0).length;
      // How many have the label at all matters only when some lack it (a GPU count, local NVMe).
      const some = having < instanceTypes.length ? ` (${having.toLocaleString('en-US')} have a ${r.key} at all)` : '';
      const why = having === 0 ? `none of the ${count} instance types has the label ${r.key}` : `none of the ${count} instance types has such a value${some}`;
      return `${r}: ${why}${valueHint(r, instanceTypes)}`;
    })
    .join('; ');
}

/**
 * The requirements on one key that together allow no value, as written (`karpenter.k8s.aws/instance-cpu Gt [8] and
 * karpenter.k8s.aws/instance-cpu Lt [4]`), or the merged requirement when fewer than two are written on the key (one
 * may come from a template label).
 */
function conflictReason(r: Requirement, written: readonly NodeSelectorRequirement[]): string {
  const own = written.filter((w) => w.key === r.key).map((w) => `${w.key} ${w.operator}${w.values?.length ? ` [${w.values.join(' ')}]` : ''}`);
  const named = own.length >= 2 ? `the requirements ${own.slice(0, -1).join(', ')} and ${own[own.length - 1]}` : `the requirements on ${r.key}${own.length === 1 ? ` (${own[0]} and the template label)` : ''}`;
  return `${named} conflict: together they leave no value of ${r.key}, so no instance type can match`;
}

/**
 * A "did you mean" for an `In` requirement none of whose values any instance type has: per value, the value of the
 * types it most likely means; for zones, the zones the types are offered in (few, and a wrong region's zone is no
 * typo). Empty when there is nothing to suggest.
 */
function valueHint(r: Requirement, instanceTypes: readonly InstanceType[]): string {
  if (r.complement || r.values.size === 0) return '';
  const have = sortValues(new Set(instanceTypes.flatMap((t) => (t.requirements.has(r.key) && !t.requirements.get(r.key).complement ? [...t.requirements.get(r.key).values] : []))));
  if (have.length === 0) return '';
  if (r.key === LABEL_ZONE) {
    const zones = have.join(', ');
    return r.sortedValues().some((v) => have.some((z) => isNearMiss(v, z))) ? ` — did you mean one of the zones its instance types are offered in: ${zones}?` : ` — its instance types are offered in ${zones}`;
  }
  const near = r.sortedValues().flatMap((v) => {
    const s = nearValue(r.key, v, have);
    return s === undefined ? [] : [{ v, s }];
  });
  if (near.length === 0) return '';
  if (near.length === 1 && r.values.size === 1) return ` — did you mean ${r.key} In [${near[0]!.s}]?`;
  return ` — did you mean ${near.map(({ v, s }) => `${s} (for ${v})`).join(', ')}?`;
}

/**
 * The NodePool's requirements on custom keys (no instance type defines them) that a node must carry but no value
 * satisfies: what {@link resolveCustomLabels} can give no label for. Karpenter's `Requirement.Any()` panics on some of
 * these (`Lt 0`); Skiff launches nothing from such a NodePool and says why.
 */
function unsatisfiableCustomRequirements(requirements: Requirements, written: readonly NodeSelectorRequirement[]): string[] {
  const resolved = resolveCustomLabels(requirements);
  return requirements
    .values()
    .filter((r) => !WELL_KNOWN_LABELS.has(r.key) && r.key !== LABEL_NODEPOOL && !r.allowsAbsence() && resolved[r.key] === undefined && !isSchedulingKey(r.key))
    .map((r) => {
      const own = written.filter((w) => w.key === r.key).map((w) => `${w.key} ${w.operator}${w.values?.length ? ` [${w.values.join(' ')}]` : ''}`);
      return own.length > 0 ? own.join(' with ') : String(r);
    });
}

/** Keys only the lifecycle sets (registered, initialized) or the kubelet (hostname): never resolved at launch. */
function isSchedulingKey(key: string): boolean {
  return key === LABEL_REGISTERED || key === LABEL_INITIALIZED || key === 'kubernetes.io/hostname';
}

/** NodePool limits in canonical units; `nodes` is a count. */
function limitList(limits: Readonly<Record<string, string | number>>): ResourceList {
  return parseResourceList(limits);
}

function pick(list: ResourceList, keys: readonly string[]): ResourceList {
  return Object.fromEntries(keys.map((k) => [k, list[k] ?? 0]));
}

/**
 * NodePools in the order the solver tries them for a new NodeClaim: weight descending, equal weights by name
 * descending (byte order). Core `pkg/utils/nodepool/nodepool.go` `OrderByWeight`.
 * @returns a new array; `templates` is not changed
 */
export function orderByWeight<T extends { readonly name: string; readonly weight: number }>(templates: readonly T[]): T[] {
  return [...templates].sort((a, b) => b.weight - a.weight || (a.name === b.name ? 0 : a.name > b.name ? -1 : 1));
}
