/**
 * Why a pod cannot be served: per NodePool, the first constraint that rules a fresh node out, and one sentence a
 * user can act on. Used by the solver for `unschedulable[]` (so by `FailedScheduling` events and the Result) and,
 * through the Result, by `skiff simulate` and `skiff explain`. The words live here, nowhere else.
 *
 * Constraints are checked in the order a user would fix them — first what the pod asks for, then what the
 * NodePool's instance types can give, then where capacity can go — and the first that fails is the NodePool's
 * reason ({@link REJECTION_KINDS}):
 * 1. `taint` — a template taint of the NodePool the pod does not tolerate (named, with the toleration to add);
 * 2. `undefinedLabel` — the pod requires a label the NodePool neither requires nor sets (named, and whether any
 *    NodePool defines it);
 * 3. `labelValue` — the NodePool defines the label but allows none of the pod's values (both sides shown);
 * 4. `hostPort` — the pod binds a host port a DaemonSet binds on every node of the NodePool;
 * 5. `requirements` — no instance type of the NodePool satisfies its requirements and the pod's together (the pod
 *    requirement that rules them all out, with the values the NodePool's instance types have);
 * 6. `absentResource` — the pod requests a resource no instance type the NodePool allows has at all (e.g.
 *    `nvidia.com/gpu` on a NodePool restricted to c-family); reported before size because no size fixes it;
 * 7. `noRoom` — no instance type is big enough for the pod's requests plus daemonset overhead (the largest
 *    allocatable shown);
 * 8. `unavailable` — every fitting instance type's offerings in the allowed zones and capacity types are marked
 *    unavailable after insufficient-capacity errors (ICE), or none is offered there;
 * 9. `limits` — the NodePool's `spec.limits` leave no room for the smallest fitting instance type;
 * 10. `topology` — pod affinity, anti-affinity or topology spread cannot be met on the instance types left (an
 *    extension point: {@link TopologyCheck}); checked where the solver checks it, on what fits;
 * 11. `minValues` — fewer distinct values of a `minValues` requirement remain than the NodePool demands (the
 *    solver's own check, `minValuesShortfall`);
 * 12. `fitsAlone` — none of the above: a fresh node of the NodePool could take the pod on its own.
 *
 * When `kubernetes.io/os` is what fails (at 3, at 5, or a NodePool whose own OS requirement its EC2NodeClass cannot
 * meet), the reason names the OS the EC2NodeClass's AMI family boots and the aliases that boot the other one, since no
 * NodePool requirement can change a node's OS.
 *
 * A pod with several required node affinity terms gets, per NodePool, the reason of the term that got furthest in
 * this order. Near misses ("did you mean") come from `hints.ts` and are appended after {@link HINT_MARK}.
 */
import { distance } from 'fastest-levenshtein';
import { AWS_INSTANCE_LABELS, restrictedLabelReason, LABEL_ARCH, LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE, LABEL_NODEPOOL, LABEL_OS, LABEL_WINDOWS_BUILD, LABEL_ZONE, WELL_KNOWN_LABELS, ownValue } from '../api/labels.js';
import type { Taint } from '../api/kubernetes.js';
import { shippedInstanceType } from '../instancetypes/catalog-facts.js';
import { compatibleOfferings, type InstanceType } from '../instancetypes/offering.js';
import { add, fits, formatAmount, formatResources, type ResourceList } from '../resources/resource-list.js';
import { sortValues, type Requirement } from '../scheduling/requirement.js';
import { Requirements, type Incompatibility } from '../scheduling/requirements.js';
import { formatTaint, tolerates } from '../scheduling/taints.js';
import { podHints, type Hint } from './hints.js';
import { limitFilter } from './limits.js';
import type { SchedulingPod } from './pod.js';
import { minValuesShortfall } from './min-values.js';
import type { DaemonHostPort, NodePoolTemplate, UnschedulablePod } from './types.js';

/** Why a pod whose required node affinity has only empty or `matchFields` terms can never be served. */
export const NO_TERM_MATCHES =
  "the pod's required node affinity matches no node: every nodeSelectorTerm is empty (an empty term matches nothing in Kubernetes) or selects nodes by name (matchFields), which no new node can have; give a term matchExpressions";

/** The kinds of reason a NodePool gives, in the order they are checked (the order a user would fix them). */
export const REJECTION_KINDS = [
  'taint',
  'undefinedLabel',
  'labelValue',
  'hostPort',
  'requirements',
  'absentResource',
  'noRoom',
  'unavailable',
  'limits',
  'topology',
  'minValues',
  'fitsAlone',
] as const;

/** One of {@link REJECTION_KINDS}. */
export type RejectionKind = (typeof REJECTION_KINDS)[number];

/**
 * Why a fresh node of one NodePool cannot take a pod. Assignable to the solver's `Rejection`
 * (`{ ok: false, reason, incompatibility? }`).
 */
export interface NodePoolRejection {
  readonly ok: false;
  /** Which check failed first. */
  readonly kind: RejectionKind;
  /** One sentence naming the constraint and what to change. */
  readonly reason: string;
  /** For `undefinedLabel` and `labelValue`: the requirement algebra's own account. */
  readonly incompatibility?: Incompatibility;
}

/**
 * Extension point for topology (pod affinity, pod anti-affinity, topology spread constraints): whether the pod's
 * topology can be met by a fresh node of `template`. Called only when every earlier check passed, with what a fresh
 * node could still be — the same inputs the solver's `placeTopology` works on.
 * @param pod the pending pod
 * @param template the NodePool
 * @param requirements the NodePool's requirements intersected with one of the pod's requirement alternatives
 *   (what a fresh node would be launched with, before topology narrows it)
 * @param instanceTypes the NodePool's instance types that satisfy `requirements`, fit the pod plus daemonset
 *   overhead, have an available offering `requirements` allow and stay within the NodePool's limits (never empty)
 * @returns undefined when topology does not rule the NodePool out; otherwise the reason, in words a user can act
 *   on, e.g. `topology spread on topology.kubernetes.io/zone (maxSkew 1) needs a node in us-west-2c, which the
 *   NodePool does not allow`
 */
export type TopologyCheck = (pod: SchedulingPod, template: NodePoolTemplate, requirements: Requirements, instanceTypes: readonly InstanceType[]) => string | undefined;

/** Options of {@link diagnose} and {@link diagnosePod}. */
export interface DiagnoseOptions {
  /** Checked after limits and before minValues (see the module doc). @default no topology check */
  readonly topology?: TopologyCheck;
}

/** Options of {@link whyNot}. */
export interface WhyNotOptions extends DiagnoseOptions {
  /** Every NodePool, to say whether another one defines a label this one lacks. @default only the NodePool asked about */
  readonly nodePools?: readonly NodePoolTemplate[];
  /** Hints already computed for the pod (by {@link podHints}); the NodePool's reason quotes the relevant one. @default computed */
  readonly hints?: readonly Hint[];
}

/** The whole diagnosis of one pod, before it is flattened into strings. */
export interface PodDiagnosis {
  /** `namespace/name`. */
  readonly pod: string;
  /** One sentence summing up why no NodePool can serve the pod (without hints). */
  readonly reason: string;
  /** NodePool name → its first rejection; in the order the NodePools were given. */
  readonly nodePools: Readonly<Record<string, NodePoolRejection>>;
  /** "Did you mean" hints, possibly none. */
  readonly hints: readonly Hint[];
}

/** Separates the summary from each hint in {@link UnschedulablePod.reason}; label keys and values cannot contain it. */
export const HINT_MARK = ' Hint: ';

/**
 * Explains, per NodePool, why a fresh node cannot take the pod, and sums it up in one sentence followed by the
 * "did you mean" hints (each after {@link HINT_MARK}; {@link splitHints} takes them apart again).
 * @param pod the pending pod
 * @param templates the NodePools, in the order the solver tries them
 * @param remaining NodePool name → what its `spec.limits` still allow (canonical units plus `nodes`; undefined: no limits)
 * @param options the topology check, if any
 * @example
 * const why = diagnose(pod, templates, new Map());
 * why.nodePools.general; // 'the pod requires node-type In [high-memory], but the NodePool neither requires nor sets …'
 */
export function diagnose(pod: SchedulingPod, templates: readonly NodePoolTemplate[], remaining: ReadonlyMap<string, ResourceList | undefined>, options: DiagnoseOptions = {}): UnschedulablePod {
  const d = diagnosePod(pod, templates, remaining, options);
  return {
    pod: d.pod,
    reason: withHints(d.reason, d.hints),
    nodePools: Object.fromEntries(Object.entries(d.nodePools).map(([name, r]) => [name, r.reason])),
  };
}

/**
 * {@link diagnose} before flattening: every NodePool's rejection with its kind, and the hints as data.
 * @param remaining NodePool name → what its limits still allow (canonical units plus `nodes`)
 */
export function diagnosePod(pod: SchedulingPod, templates: readonly NodePoolTemplate[], remaining: ReadonlyMap<string, ResourceList | undefined>, options: DiagnoseOptions = {}): PodDiagnosis {
  const hints = podHints(pod, templates);
  const nodePools: Record<string, NodePoolRejection> = {};
  for (const t of templates) nodePools[t.name] = whyNot(pod, t, remaining.get(t.name), { ...options, nodePools: templates, hints });
  return { pod: pod.key, reason: summarise(pod, templates, nodePools), nodePools, hints };
}

/** A summary followed by hints, each after {@link HINT_MARK}. */
export function withHints(reason: string, hints: readonly Hint[]): string {
  return [reason, ...hints.map((h) => h.message)].join(HINT_MARK);
}

/**
 * Takes a reason written by {@link diagnose} apart into the summary and its hints (the inverse of {@link withHints}).
 * A reason without hints comes back unchanged with none.
 * @example splitHints('no NodePool … Hint: did you mean …') // { reason: 'no NodePool …', hints: ['did you mean …'] }
 */
export function splitHints(reason: string): { readonly reason: string; readonly hints: readonly string[] } {
  const [summary = '', ...hints] = reason.split(HINT_MARK);
  return { reason: summary, hints };
}

/**
 * The first constraint (in the order of {@link REJECTION_KINDS}) that keeps a fresh node of `template` from taking
 * `pod`, in words a user can act on.
 * @param remaining what the NodePool's limits still allow (canonical units plus `nodes`); undefined: no limits
 */
export function whyNot(pod: SchedulingPod, template: NodePoolTemplate, remaining: ResourceList | undefined, options: WhyNotOptions = {}): NodePoolRejection {
  const hints = options.hints ?? podHints(pod, options.nodePools ?? [template]);
  // The same rule as `firstUntolerated`: PreferNoSchedule counts only while the pod still avoids it.
  const blocking = template.taints.filter((t) => (pod.avoidPreferNoSchedule || t.effect !== 'PreferNoSchedule') && !pod.tolerations.some((tol) => tolerates(tol, t)));
  const [taint] = blocking;
  if (taint) return reject('taint', taintReason(template, taint, blocking.length, hints));

  const alternatives = pod.requirementAlternatives;
  let best: { rejection: NodePoolRejection; index: number } | undefined;
  for (const [index, alternative] of alternatives.entries()) {
    const rejection = whyNotAlternative(pod, template, alternative, remaining, options, hints);
    if (!best || REJECTION_KINDS.indexOf(rejection.kind) > REJECTION_KINDS.indexOf(best.rejection.kind)) best = { rejection, index };
  }
  if (!best) return reject('requirements', NO_TERM_MATCHES);
  if (alternatives.length <= 1) return best.rejection;
  return { ...best.rejection, reason: `${best.rejection.reason} (node affinity term ${best.index + 1} of ${alternatives.length}, the one that gets furthest)` };
}

/** Checks 2–12 for one requirement alternative of the pod. */
function whyNotAlternative(pod: SchedulingPod, t: NodePoolTemplate, alternative: Requirements, remaining: ResourceList | undefined, options: WhyNotOptions, hints: readonly Hint[]): NodePoolRejection {
  // The pod's own requirements may contradict each other (Gt 8 with Lt 4, nodeSelector arm64 with affinity amd64).
  const impossible = alternative.values().find((r) => r.size() === 0 && !r.allowsAbsence());
  if (impossible) {
    return reject('requirements', `the pod's own requirements on ${impossible.key} contradict each other (its nodeSelector and node affinity together allow no value); no node can satisfy them`);
  }
  const incompatibility = t.requirements.compatible(alternative, WELL_KNOWN_LABELS);
  if (incompatibility) return { ...reject(incompatibility.kind === 'undefinedLabel' ? 'undefinedLabel' : 'labelValue', labelReason(t, incompatibility, options.nodePools ?? [t], hints)), incompatibility };

  const requirements = t.requirements.intersect(alternative);
  const everywhere = (d: DaemonHostPort) => t.instanceTypes.every((it) => d.requirements.some((alt) => alt.intersects(it.requirements) === undefined && alt.intersects(requirements) === undefined));
  const daemon = t.daemonHostPorts?.find((d) => pod.hostPorts.includes(d.port) && everywhere(d));
  if (daemon) {
    return reject(
      'hostPort',
      `the pod binds host port ${daemon.port}, which DaemonSet ${daemon.daemonSet} binds on every node of the NodePool; use another hostPort (or none) or keep that DaemonSet off the NodePool`,
    );
  }

  if (t.instanceTypes.length === 0) {
    const os = t.requirements.get(LABEL_OS);
    const booted = t.nodeClassOs ?? [];
    if (t.requirements.has(LABEL_OS) && booted.length > 0 && !booted.some((v) => os.has(v))) return reject('requirements', nodePoolOsReason(t, os, booted));
    const why = t.noInstanceTypes ? ` (${t.noInstanceTypes})` : '';
    return reject('requirements', `the NodePool's own requirements match no instance type of its EC2NodeClass ${t.nodeClass}${why}; correct or widen spec.template.spec.requirements`);
  }
  const byLabels = t.instanceTypes.filter((it) => requirements.intersects(it.requirements) === undefined);
  if (byLabels.length === 0) return reject('requirements', requirementsReason(t, alternative, requirements, hints));

  const requests = add(t.daemonOverhead, pod.requests);
  const bySize = byLabels.filter((it) => fits(requests, it.allocatable));
  if (bySize.length === 0) {
    const absent = Object.keys(pod.requests).filter((k) => (pod.requests[k] ?? 0) > 0 && byLabels.every((it) => (it.allocatable[k] ?? 0) <= 0));
    if (absent.length > 0) return reject('absentResource', absentReason(t, absent, pod.requests));
    const overhead = formatResources(t.daemonOverhead);
    return reject(
      'noRoom',
      `no instance type has room for the pod's requests (${formatResources(pod.requests)})${overhead ? ` plus daemonset overhead (${overhead})` : ''}: ${largestAllocatable(byLabels, requests)}; lower the requests or allow larger instance types`,
    );
  }

  const byOffering = bySize.filter((it) => compatibleOfferings(it, requirements).length > 0);
  if (byOffering.length === 0) return reject('unavailable', unavailableReason(bySize, requirements));

  const withinLimit = limitFilter(byOffering, remaining);
  if (withinLimit.length === 0) return reject('limits', limitsReason(byOffering, remaining ?? {}, t.limits));

  const topology = options.topology?.(pod, t, requirements, withinLimit);
  if (topology !== undefined) return reject('topology', topology);

  const shortfall = minValuesShortfall(requirements, withinLimit.map((type) => ({ type })));
  if (shortfall) return reject('minValues', `${shortfall}; relax the pod's requirements or lower minValues in the NodePool`);

  return reject('fitsAlone', 'no single constraint rules this NodePool out: a fresh node of it could take the pod on its own');
}

function reject(kind: RejectionKind, reason: string): NodePoolRejection {
  return { ok: false, kind, reason };
}

/** The taint, the toleration that would let the pod through, and a near-miss toleration if the pod has one. */
function taintReason(t: NodePoolTemplate, taint: Taint, count: number, hints: readonly Hint[]): string {
  const toleration = `{key: ${taint.key}, operator: ${taint.value ? `Equal, value: ${taint.value}` : 'Exists'}, effect: ${taint.effect}}`;
  const more = count > 1 ? ` (and ${count - 1} more of its taints)` : '';
  const near = hints.find((h) => h.taint === taint && h.nodePools.includes(t.name));
  const guess = near ? ` — the pod tolerates ${near.kind === 'tolerationKey' ? near.typed : `${taint.key} with ${near.kind === 'tolerationValue' ? 'value' : 'effect'} ${near.typed}`}: did you mean ${near.suggestion}?` : '';
  return `the pod does not tolerate the NodePool's taint ${formatTaint(taint)}${more}; to use this NodePool, add the toleration ${toleration}${guess}`;
}

/** A label the NodePool does not define, or defines without any of the pod's values. */
function labelReason(t: NodePoolTemplate, i: Incompatibility, nodePools: readonly NodePoolTemplate[], hints: readonly Hint[]): string {
  const key = i.key;
  if (i.kind === 'undefinedLabel') {
    const others = nodePools.filter((p) => p.name !== t.name && p.requirements.has(key)).map((p) => p.name);
    const elsewhere = others.length === 0 ? 'no NodePool does' : `NodePool${others.length > 1 ? 's' : ''} ${others.join(', ')} ${others.length > 1 ? 'do' : 'does'}`;
    const value = i.incoming.complement ? undefined : i.incoming.any();
    const near = hints.find((h) => h.kind === 'labelKey' && h.typed === key);
    // A key in a restricted domain (kubernetes.io, karpenter.sh, …) can be neither a template label nor a
    // requirement (Karpenter's validation): the pod's selector is what must change.
    const restricted = restrictedLabelReason(key);
    const fix = restricted
      ? `no NodePool may define it (${restricted}), so change the pod's selector`
      : value !== undefined && i.incoming.values.size === 1
        ? `add ${key}: ${value} to its spec.template.metadata.labels`
        : `add a requirement on ${key} to it`;
    return `the pod requires ${i.incoming}, but the NodePool neither requires nor sets the label ${key} (${elsewhere}); ${fix}${near ? ` — ${restricted ? 'did' : 'or did'} you mean ${near.suggestion}?` : ''}`;
  }
  const incoming = i.incoming;
  const existing = i.kind === 'noIntersection' ? i.existing : t.requirements.get(key);
  if (key === LABEL_NODEPOOL) return `the pod selects ${incoming}, and this is NodePool ${t.name}`;
  if (key === LABEL_OS) {
    const booted = t.nodeClassOs ?? [];
    // The EC2NodeClass boots an OS the pod accepts: the NodePool's own os requirement is what excludes it.
    if (booted.some((v) => incoming.has(v))) {
      return `the pod requires ${incoming} and EC2NodeClass ${t.nodeClass} boots ${booted.join(' and ')} nodes, but the NodePool allows only ${existing}; change the NodePool's ${LABEL_OS} requirement`;
    }
    if (booted.length > 0) return podOsReason(t, incoming, booted);
  }
  const near = hints.find((h) => h.kind === 'labelValue' && h.nodePools.includes(t.name) && incoming.values.has(h.typed));
  return `the pod requires ${incoming}, but the NodePool allows only ${existing}; change the pod's ${key} selector or the NodePool's requirement on it${near ? ` — or did you mean ${key}=${near.suggestion}?` : ''}`;
}

/** Names the pod requirement that rules out every instance type of the NodePool, with the values they do have. */
function requirementsReason(t: NodePoolTemplate, alternative: Requirements, requirements: Requirements, hints: readonly Hint[]): string {
  for (const key of alternative.keys()) {
    const r = requirements.get(key);
    const alone = Requirements.of(r);
    if (!t.instanceTypes.every((it) => alone.intersects(it.requirements) !== undefined)) continue;
    if (key === LABEL_OS && (t.nodeClassOs ?? []).length > 0) return podOsReason(t, alternative.get(key), t.nodeClassOs ?? []);
    const values = nearestFirst(sortValues(new Set(t.instanceTypes.flatMap((it) => valuesOf(it, key)))), r.complement ? [] : [...r.values]);
    // A type without the label has `key DoesNotExist` (aws computeRequirements): say how many lack it.
    const without = t.instanceTypes.filter((it) => valuesOf(it, key).length === 0).length;
    const have =
      values.length === 0
        ? `none of its ${t.instanceTypes.length} instance types has the label ${key}`
        : `its ${t.instanceTypes.length} instance types have ${key} in [${shortList(values, 8)}]${without > 0 ? ` (${without} of them have no ${key} label at all)` : ''}`;
    const near = hints.find((h) => h.kind === 'labelValue' && r.values.has(h.typed) && h.nodePools.includes(t.name));
    const unoffered = key === LABEL_INSTANCE_TYPE ? unofferedTypes(t, r) : '';
    // A zone is offered only where the EC2NodeClass has a subnet (aws computeRequirements): say so, the NodePool may
    // not restrict zones at all.
    const remedy = key === LABEL_ZONE ? `change the pod's requirement, widen the NodePool's, or give EC2NodeClass ${t.nodeClass} a subnet in that zone (types are offered only in its subnets' zones)` : `change the pod's requirement or widen the NodePool's`;
    return `no instance type the NodePool allows has ${r} (${have})${unoffered}; ${remedy}${near ? ` — or did you mean ${key}=${near.suggestion}?` : ''}`;
  }
  return `no instance type the NodePool allows satisfies its requirements and the pod's together (${requirements}); relax the pod's requirements or widen the NodePool's`;
}

/**
 * For a pod that names instance types: those that are real EC2 types its EC2NodeClass does not offer at all, and why
 * — Skiff has no on-demand price for the type (as Karpenter, it offers no type it cannot price), or the AMI family
 * cannot boot it (aws `pkg/providers/amifamily` compatibility, e.g. a1 with AL2023). Empty when there are none.
 */
function unofferedTypes(t: NodePoolTemplate, r: Requirement): string {
  if (r.complement) return '';
  const real = r.sortedValues().filter((v) => shippedInstanceType(v) !== undefined);
  if (real.length === 0) return '';
  const why = real.map((v) => `${v}: ${shippedInstanceType(v)!.onDemandPrice === null ? 'no on-demand price is known for it, so it is not offered' : `the AMI family of EC2NodeClass ${t.nodeClass} cannot boot it, or the NodePool's requirements leave it out`}`);
  return `; ${real.length === 1 ? 'it is an EC2 instance type' : 'they are EC2 instance types'} the NodePool cannot launch (${why.join('; ')})`;
}

/** Where a node's OS comes from, and the aliases that choose it. */
const OS_ORIGIN = `${LABEL_OS} comes from the EC2NodeClass's AMI family, not from NodePool requirements`;

/** The EC2NodeClass fix for a pod (or NodePool) that needs `wanted`. */
function osFix(wanted: Requirement): string {
  return wanted.has('windows')
    ? 'a Windows AMI family (amiSelectorTerms alias windows2019@latest, windows2022@latest or windows2025@latest)'
    : 'a Linux AMI family (e.g. amiSelectorTerms alias al2023@latest or bottlerocket@latest)';
}

/**
 * The pod needs an OS the NodePool's EC2NodeClass does not boot (Karpenter: `kubernetes.io/os` of an instance type
 * comes from the AMI family, aws `pkg/providers/instancetype/types.go getOS`).
 * @param booted the OS values the EC2NodeClass's instance types carry (not empty)
 */
function podOsReason(t: NodePoolTemplate, wanted: Requirement, booted: readonly string[]): string {
  return `the pod requires ${wanted}, but EC2NodeClass ${t.nodeClass} of the NodePool boots ${booted.join(' and ')} nodes (${OS_ORIGIN}); run the pod on a NodePool whose EC2NodeClass uses ${osFix(wanted)}`;
}

/** The NodePool requires an OS its own EC2NodeClass does not boot, so it can launch nothing. */
function nodePoolOsReason(t: NodePoolTemplate, required: Requirement, booted: readonly string[]): string {
  return `the NodePool requires ${required}, but its EC2NodeClass ${t.nodeClass} boots ${booted.join(' and ')} nodes (${OS_ORIGIN}); change the NodePool's ${LABEL_OS} requirement, or point it at an EC2NodeClass that uses ${osFix(required)}`;
}

/**
 * The values of `key` an instance type carries (zones and capacity types come from its offerings; a key it has no
 * label for, such as the region, from its requirements' finite values).
 */
function valuesOf(it: InstanceType, key: string): string[] {
  if (key === LABEL_ZONE) return it.offerings.map((o) => o.zone);
  if (key === LABEL_CAPACITY_TYPE) return it.offerings.map((o) => o.capacityType);
  const v = ownValue(it.labels, key);
  if (v !== undefined) return [v];
  const r = it.requirements.get(key);
  return r.complement ? [] : [...r.values];
}

/** Labels that choose instance types (as opposed to zones, capacity types or the NodePool). */
const INSTANCE_LABELS: ReadonlySet<string> = new Set<string>([...AWS_INSTANCE_LABELS, LABEL_INSTANCE_TYPE, LABEL_ARCH, LABEL_OS, LABEL_WINDOWS_BUILD]);

/** Requirements that select instance types with a resource, for the resources the catalogue knows. */
const RESOURCE_SELECTORS: Readonly<Record<string, string>> = {
  'nvidia.com/gpu': 'karpenter.k8s.aws/instance-gpu-manufacturer In [nvidia]',
  'amd.com/gpu': 'karpenter.k8s.aws/instance-gpu-manufacturer In [amd]',
  'aws.amazon.com/neuron': 'karpenter.k8s.aws/instance-accelerator-manufacturer In [aws]',
  'aws.amazon.com/neuroncore': 'karpenter.k8s.aws/instance-accelerator-manufacturer In [aws]',
};

/** A resource the pod requests that none of the NodePool's (label-compatible) instance types has at all. */
function absentReason(t: NodePoolTemplate, absent: readonly string[], requests: ResourceList): string {
  const asked = absent.map((k) => `${k}: ${formatAmount(k, requests[k] ?? 0)}`).join(', ');
  const shaping = t.requirements.values().filter((r) => INSTANCE_LABELS.has(r.key));
  const restricted = shaping.length > 0 ? `its requirements allow only ${shaping.map(String).join('; ')}` : `none of its ${t.instanceTypes.length} instance types has it`;
  const selector = absent.map((k) => ownValue(RESOURCE_SELECTORS, k)).find((s) => s !== undefined);
  return `no instance type the NodePool allows has ${absent.join(' or ')} (the pod requests ${asked}; ${restricted}); use a NodePool whose instance types have it${selector ? `, or allow such types here (e.g. ${selector})` : ', or allow such instance types here'}`;
}

/** Every fitting instance type is either marked unavailable (ICE) or not offered where the requirements allow. */
function unavailableReason(types: readonly InstanceType[], requirements: Requirements): string {
  const zone = requirements.get(LABEL_ZONE);
  const capacityType = requirements.get(LABEL_CAPACITY_TYPE);
  const iced = types.flatMap((it) => it.offerings.filter((o) => !o.available && zone.has(o.zone) && capacityType.has(o.capacityType)).map((o) => `${it.name} ${o.capacityType} in ${o.zone}`));
  if (iced.length > 0) {
    // Suggest widening only what the requirements narrow: a capacity type or zone they already allow all of is no cure.
    const allZones = new Set(types.flatMap((it) => it.offerings.map((o) => o.zone)));
    const wider = ['more instance types', ...([...allZones].some((z) => !zone.has(z)) ? ['zones'] : []), ...(!capacityType.has('on-demand') ? ['on-demand'] : !capacityType.has('spot') ? ['spot'] : [])];
    const list = wider.length === 1 ? wider[0]! : `${wider.slice(0, -1).join(', ')} or ${wider[wider.length - 1]}`;
    return `every fitting instance type is unavailable in the allowed zones and capacity types after insufficient-capacity errors (${shortList(iced, 3)}); they are tried again when the mark expires (3 minutes after the last failed launch), and allowing ${list} avoids the wait`;
  }
  const allowed = [zone, capacityType].filter((r) => requirements.has(r.key)).map(String).join('; ');
  return `no fitting instance type is offered in the allowed zones and capacity types${allowed ? ` (${allowed})` : ''}; allow more zones or capacity types`;
}

/**
 * Why the NodePool's `spec.limits` stop every fitting instance type: the limited resources that block them all,
 * what is left of each and what the smallest fitting type needs (capacity plus one `nodes`, as limits count it). A
 * limit that could not hold that type even with nothing in use is called too small rather than reached.
 * @param types the instance types that fit the pod and have an available offering (not empty)
 * @param remaining what the limits still allow, canonical units (cpu millicores, memory MiB, counts) plus `nodes`
 * @param limits the NodePool's `spec.limits` in all (same units); omitted, every blocking limit reads as reached
 * @example limitsReason(types, { cpu: 0 }) // "the NodePool's limits are reached (cpu: 0m left, …); raise spec.limits.cpu …"
 * @example limitsReason(types, { cpu: 24000 }, { cpu: 24000 }) // "the NodePool's limits are too small for it (cpu: 24000m in all, the smallest fitting instance type needs 96000m); raise spec.limits.cpu"
 */
export function limitsReason(types: readonly InstanceType[], remaining: ResourceList, limits?: ResourceList): string {
  const needs = (k: string) => Math.min(...types.map((t) => add(t.capacity, { nodes: 1 })[k] ?? 0));
  const blocking = Object.keys(remaining).filter((k) => types.every((t) => (add(t.capacity, { nodes: 1 })[k] ?? 0) > (remaining[k] ?? 0) + 1e-6));
  const keys = blocking.length > 0 ? blocking : Object.keys(remaining);
  const tooSmall = limits ? keys.filter((k) => limits[k] !== undefined && needs(k) > limits[k]! + 1e-6) : [];
  if (tooSmall.length > 0) {
    const parts = tooSmall.map((k) => `${k}: ${formatAmount(k, limits![k]!)} in all, the smallest fitting instance type needs ${formatAmount(k, needs(k))}`);
    return `the NodePool's limits are too small for it (${parts.join('; ')}); raise spec.limits.${tooSmall[0]}`;
  }
  const parts = keys.map((k) => `${k}: ${formatAmount(k, Math.max(0, remaining[k] ?? 0))} left, the smallest fitting instance type needs ${formatAmount(k, needs(k))}`);
  return `the NodePool's limits are reached (${parts.join('; ')}); raise spec.limits.${keys[0]} or free capacity in the NodePool`;
}

/**
 * The instance type with the most of the scarcest requested resource (ties: most cpu, then memory) and its
 * allocatable on the requested keys.
 */
function largestAllocatable(types: readonly InstanceType[], requests: ResourceList): string {
  const scarce = Object.keys(requests).filter((k) => (requests[k] ?? 0) > 0 && types.every((t) => (t.allocatable[k] ?? 0) < (requests[k] ?? 0)));
  const key = scarce[0] ?? 'cpu';
  const best = types.reduce((a, b) => {
    const d = (b.allocatable[key] ?? 0) - (a.allocatable[key] ?? 0) || (b.allocatable.cpu ?? 0) - (a.allocatable.cpu ?? 0) || (b.allocatable.memory ?? 0) - (a.allocatable.memory ?? 0);
    return d > 0 ? b : a;
  });
  const shown = Object.fromEntries(Object.keys(requests).map((k) => [k, best.allocatable[k] ?? 0]));
  return `the largest allocatable is ${formatResources(shown)} (${best.name})`;
}

/**
 * One sentence for the whole pod. A label the pod requires that no NodePool defines is the actionable cause whatever
 * else fails, so it is named first; otherwise every NodePool's reason is listed.
 * @param nodePools NodePool name → its rejection (from {@link whyNot})
 */
export function summarise(pod: SchedulingPod, templates: readonly NodePoolTemplate[], nodePools: Readonly<Record<string, NodePoolRejection>>): string {
  if (templates.length === 0) return 'no NodePool exists: create a NodePool (and its EC2NodeClass) whose requirements and taints the pod accepts';
  const undefinedEverywhere = pod.requirementAlternatives.map((alternative) => alternative.values().find((r) => !WELL_KNOWN_LABELS.has(r.key) && !r.allowsAbsence() && templates.every((t) => !t.requirements.has(r.key))));
  const [first] = undefinedEverywhere;
  if (first && undefinedEverywhere.every((r) => r !== undefined)) return undefinedLabelSummary(first, templates);
  return `no NodePool can serve the pod: ${Object.entries(nodePools)
    .map(([name, why]) => `${name}: ${why.reason}`)
    .join('; ')}`;
}

function undefinedLabelSummary(r: Requirement, templates: readonly NodePoolTemplate[]): string {
  const custom = [...new Set(templates.flatMap((t) => t.requirements.keys()))].filter((k) => !WELL_KNOWN_LABELS.has(k)).sort();
  const alternatives = custom.length > 0 ? `a label the NodePools set (${shortList(custom, 6)}) or one Skiff sets` : 'a label Skiff sets';
  // A key in a restricted domain (karpenter.k8s.aws/…, kubernetes.io/…) cannot be put on a NodePool: only the pod's
  // selector can change (a misspelt well-known label, usually).
  const restricted = restrictedLabelReason(r.key);
  const fix = restricted ? `no NodePool may define it (${restricted}), so change the pod's selector to` : `add it to a NodePool's template labels or requirements, or select on`;
  return `no NodePool defines the label ${r.key}: the pod requires ${r}, but no NodePool's requirements or template labels set ${r.key}; ${fix} ${alternatives} (e.g. karpenter.k8s.aws/instance-category)`;
}

/**
 * `values` with those closest to what the pod asked for first (fewest edits to any of `asked`, then in their order), so a
 * shortened list still shows them: a pod asking for instance family `m7` sees `m7a, m7g, m7i, …` rather than the first
 * eight of 70 families alphabetically. Unchanged when `asked` is empty.
 */
function nearestFirst(values: readonly string[], asked: readonly string[]): string[] {
  if (asked.length === 0) return [...values];
  const edits = new Map(values.map((v) => [v, Math.min(...asked.map((a) => distance(a, v)))]));
  return values.map((v, i) => ({ v, i })).sort((a, b) => edits.get(a.v)! - edits.get(b.v)! || a.i - b.i).map((x) => x.v);
}

/** `a, b, c and 4 more`. */
function shortList(items: readonly string[], max: number): string {
  return items.length <= max ? items.join(', ') : `${items.slice(0, max).join(', ')} and ${items.length - max} more`;
}
