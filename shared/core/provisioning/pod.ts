/**
 * The scheduling view of a pod: effective requests, node requirements, tolerations.
 *
 * The effective-request formula is Kubernetes' (k8s.io/component-helpers `resource.PodRequests`):
 * `max(Σ containers + Σ sidecars, max over init containers of (request + sidecars started before it)) + overhead`,
 * where a sidecar is an init container with `restartPolicy: Always`. Every pod also requests one `pods` slot.
 */
import type { NodeSelectorRequirement, Toleration } from '../api/kubernetes.js';
import { normalizedLabelKey, ownValue } from '../api/labels.js';
import { add, max, parseResourceList, type ResourceList } from '../resources/resource-list.js';
import type { LabelSelector } from '../api/object-meta.js';
import { Requirements } from '../scheduling/requirements.js';

/** The container fields the scheduler reads. */
export interface ContainerLike {
  readonly name?: string;
  readonly resources?: { readonly requests?: Readonly<Record<string, string | number>>; readonly limits?: Readonly<Record<string, string | number>> };
  readonly restartPolicy?: string;
  readonly ports?: readonly { readonly containerPort?: number; readonly hostPort?: number; readonly protocol?: string }[];
}

/** A node selector term (`matchExpressions` ANDed; `matchFields` unsupported, as in Karpenter). */
export interface NodeSelectorTermLike {
  readonly matchExpressions?: readonly NodeSelectorRequirement[];
  readonly matchFields?: readonly unknown[];
}

/** The pod spec fields the scheduler reads (a subset of `core/v1` PodSpec with the same names). */
export interface PodSpecLike {
  readonly containers: readonly ContainerLike[];
  readonly initContainers?: readonly ContainerLike[];
  readonly overhead?: Readonly<Record<string, string | number>>;
  readonly nodeSelector?: Readonly<Record<string, string>>;
  readonly nodeName?: string;
  readonly tolerations?: readonly Toleration[];
  readonly affinity?: {
    readonly nodeAffinity?: {
      readonly requiredDuringSchedulingIgnoredDuringExecution?: { readonly nodeSelectorTerms: readonly NodeSelectorTermLike[] };
      readonly preferredDuringSchedulingIgnoredDuringExecution?: readonly { readonly weight: number; readonly preference: NodeSelectorTermLike }[];
    };
    readonly podAffinity?: PodAffinityLike;
    readonly podAntiAffinity?: PodAffinityLike;
  };
  readonly topologySpreadConstraints?: readonly TopologySpreadConstraintLike[];
  readonly priority?: number;
  /** The pod uses the node's network: every container port binds on the host. */
  readonly hostNetwork?: boolean;
}

/** A pod (anti-)affinity term (`core/v1` PodAffinityTerm). */
export interface PodAffinityTermLike {
  readonly labelSelector?: LabelSelector;
  readonly namespaces?: readonly string[];
  readonly namespaceSelector?: LabelSelector;
  readonly topologyKey: string;
  readonly matchLabelKeys?: readonly string[];
  readonly mismatchLabelKeys?: readonly string[];
}

/** `affinity.podAffinity` / `affinity.podAntiAffinity`. */
export interface PodAffinityLike {
  readonly requiredDuringSchedulingIgnoredDuringExecution?: readonly PodAffinityTermLike[];
  readonly preferredDuringSchedulingIgnoredDuringExecution?: readonly { readonly weight: number; readonly podAffinityTerm: PodAffinityTermLike }[];
}

/** A topology spread constraint (`core/v1` TopologySpreadConstraint). */
export interface TopologySpreadConstraintLike {
  readonly maxSkew: number;
  readonly topologyKey: string;
  readonly whenUnsatisfiable: 'DoNotSchedule' | 'ScheduleAnyway';
  readonly labelSelector?: LabelSelector;
  readonly minDomains?: number;
  readonly nodeAffinityPolicy?: 'Honor' | 'Ignore';
  readonly nodeTaintsPolicy?: 'Honor' | 'Ignore';
  readonly matchLabelKeys?: readonly string[];
}

/** What the solver knows about one pod. Immutable. */
export interface SchedulingPod {
  /** `namespace/name`. */
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Effective requests in canonical units (cpu millicores, memory MiB), including `pods: 1`. */
  readonly requests: ResourceList;
  /**
   * Alternative requirement sets (required node affinity terms are ORed; each alternative already includes the
   * nodeSelector). A pod without constraints has one empty alternative; a pod whose every term matches no node
   * (empty or `matchFields` terms) has none.
   */
  readonly requirementAlternatives: readonly Requirements[];
  readonly tolerations: readonly Toleration[];
  /** Host ports the pod binds (`protocol/port`). */
  readonly hostPorts: readonly string[];
  /** Creation time, epoch ms (tie-breaker in the solve order). */
  readonly createdMs: number;
  /**
   * `spec.priority` (the PriorityClass value admission resolved), absent for 0: kube-scheduler's queue takes higher
   * priorities first (the binding replay, `binding-replay.ts`).
   */
  readonly priority?: number;
  /**
   * Required topology terms: required pod affinity and anti-affinity, and `DoNotSchedule` spread constraints.
   * In a relaxed view (see `preferences.ts`) the preferences not yet relaxed are here too.
   */
  readonly topology: readonly TopologyTerm[];
  /** Preferences, heaviest first; the solver treats them as required and relaxes them one at a time. */
  readonly preferences: Preferences;
  /**
   * True while `PreferNoSchedule` taints still block the pod (Karpenter avoids them until its last relaxation
   * step, `preferences.go toleratePreferNoScheduleTaints`). False in the pod's base form.
   */
  readonly avoidPreferNoSchedule: boolean;
}

/** A pod's soft constraints, each list heaviest first (stable for equal weights). */
export interface Preferences {
  readonly podAffinity: readonly TopologyTerm[];
  readonly podAntiAffinity: readonly TopologyTerm[];
  /** Preferred node affinity terms as requirements. */
  readonly nodeAffinity: readonly Requirements[];
  /** `whenUnsatisfiable: ScheduleAnyway` spread constraints. */
  readonly scheduleAnyway: readonly TopologyTerm[];
}

/** No preferences. */
export const NO_PREFERENCES: Preferences = { podAffinity: [], podAntiAffinity: [], nodeAffinity: [], scheduleAnyway: [] };

/**
 * One pod topology constraint in resolved form: which pods it counts (selector after `matchLabelKeys`, and
 * namespaces), over which node label, and for spread constraints the skew rules.
 */
export interface TopologyTerm {
  readonly kind: 'spread' | 'affinity' | 'antiAffinity';
  /** The node label whose values are the domains (beta keys normalised). */
  readonly key: string;
  /** Pods counted: a nil selector counts none (Kubernetes). `matchLabelKeys` already merged in. */
  readonly selector: LabelSelector | undefined;
  /** Namespaces whose pods are counted, or `all`. Defaults to the owning pod's namespace. */
  readonly namespaces: readonly string[] | 'all';
  /**
   * A non-empty `namespaceSelector`: pods in namespaces it selects count too. Namespaces carry only the automatic
   * `kubernetes.io/metadata.name` label in Skiff's view, so that is what it is matched against.
   */
  readonly namespaceSelector?: LabelSelector;
  /** Spread only: allowed difference between a domain's count and the global minimum. */
  readonly maxSkew: number;
  /** Spread only: with fewer eligible domains than this, the global minimum is 0. */
  readonly minDomains: number;
  /** Spread only: whether the pod's node affinity limits the eligible domains (default Honor). */
  readonly nodeAffinityPolicy: 'Honor' | 'Ignore';
  /** Spread only: whether taints the pod does not tolerate exclude domains (default Ignore). */
  readonly nodeTaintsPolicy: 'Honor' | 'Ignore';
  /** Identity of the pods counted (`key|namespaces|selector`): terms with equal `counter` share counts. */
  readonly counter: string;
  /** False for a preference (treated as required until relaxed; a placed pod's preferences repel no one). */
  readonly required: boolean;
}

/**
 * Effective requests of a pod spec in canonical units (see module doc for the formula), plus `pods: 1`.
 * @throws {QuantityError} on a malformed quantity
 */
export function podRequests(spec: PodSpecLike): ResourceList {
  let cached = requestsBySpec.get(spec);
  if (!cached) {
    cached = computePodRequests(spec);
    requestsBySpec.set(spec, cached);
  }
  return cached;
}

/** Specs are immutable once parsed, so their requests are computed once per spec object. */
const requestsBySpec = new WeakMap<PodSpecLike, ResourceList>();

function computePodRequests(spec: PodSpecLike): ResourceList {
  const containers = add(...spec.containers.map(requestsOf));
  let sidecars: ResourceList = {};
  let initMax: ResourceList = {};
  for (const c of spec.initContainers ?? []) {
    const r = requestsOf(c);
    if (c.restartPolicy === 'Always') {
      sidecars = add(sidecars, r);
      initMax = max(initMax, sidecars);
    } else {
      initMax = max(initMax, add(r, sidecars));
    }
  }
  return add(max(add(containers, sidecars), initMax), parseResourceList(spec.overhead), { pods: 1 });
}

/** A container's requests; where only a limit is set, Kubernetes defaults the request to the limit. */
function requestsOf(c: ContainerLike): ResourceList {
  return parseResourceList({ ...(c.resources?.limits ?? {}), ...(c.resources?.requests ?? {}) });
}

/** The requirement alternatives of a pod: nodeSelector ∩ each required node affinity term. Beta labels are normalised. */
export function podRequirementAlternatives(spec: PodSpecLike): Requirements[] {
  let cached = alternativesBySpec.get(spec);
  if (!cached) {
    cached = computeRequirementAlternatives(spec);
    alternativesBySpec.set(spec, cached);
  }
  return cached;
}

const alternativesBySpec = new WeakMap<PodSpecLike, Requirements[]>();

/**
 * An empty node selector term matches no node (Kubernetes `NodeSelectorTerm`: "a null or empty term matches no
 * objects"), and a term with `matchFields` (a node's name) matches no node Skiff could launch: such terms are
 * dropped. A pod whose every term is dropped has no alternative at all: no capacity can serve it.
 */
function computeRequirementAlternatives(spec: PodSpecLike): Requirements[] {
  const selector = Requirements.fromLabels(normalizeKeys(spec.nodeSelector ?? {}));
  const terms = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  if (terms.length === 0) return [selector];
  return terms.filter((t) => (t.matchExpressions?.length ?? 0) > 0 && (t.matchFields?.length ?? 0) === 0).map((t) => selector.intersect(termRequirements(t)));
}

function normalizeKeys(labels: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(labels).map(([k, v]) => [normalizedLabelKey(k), v]));
}

/**
 * Host ports a pod spec binds, as `protocol/port`. With `hostNetwork: true` every container port is a host port
 * (the API server defaults `hostPort` to `containerPort`, k8s.io/kubernetes `pkg/apis/core/v1/defaults.go`).
 */
export function podHostPorts(spec: PodSpecLike): string[] {
  return [...spec.containers, ...(spec.initContainers ?? [])].flatMap((c) =>
    (c.ports ?? [])
      .map((p) => ({ protocol: p.protocol ?? 'TCP', port: p.hostPort !== undefined && p.hostPort > 0 ? p.hostPort : spec.hostNetwork ? p.containerPort : undefined }))
      .filter((p): p is { protocol: string; port: number } => p.port !== undefined && p.port > 0)
      .map((p) => `${p.protocol}/${p.port}`),
  );
}

/**
 * Builds the scheduling view of a pod.
 * @param pod the pod's identity, labels and spec
 * @param createdMs creation time, epoch ms
 * @throws {QuantityError} on a malformed quantity
 */
export function toSchedulingPod(
  pod: { readonly namespace: string; readonly name: string; readonly labels?: Readonly<Record<string, string>>; readonly spec: PodSpecLike },
  createdMs: number,
): SchedulingPod {
  return {
    key: `${pod.namespace}/${pod.name}`,
    namespace: pod.namespace,
    name: pod.name,
    labels: pod.labels ?? {},
    requests: podRequests(pod.spec),
    requirementAlternatives: podRequirementAlternatives(pod.spec),
    tolerations: pod.spec.tolerations ?? [],
    hostPorts: podHostPorts(pod.spec),
    createdMs,
    ...(pod.spec.priority ? { priority: pod.spec.priority } : {}),
    topology: requiredTopology(pod.namespace, pod.labels ?? {}, pod.spec),
    preferences: podPreferences(pod.namespace, pod.labels ?? {}, pod.spec),
    avoidPreferNoSchedule: false,
  };
}

/**
 * The required topology terms of a pod: required pod affinity, required anti-affinity and `DoNotSchedule` spread
 * constraints, resolved against the pod's namespace and labels.
 */
export function requiredTopology(namespace: string, labels: Readonly<Record<string, string>>, spec: PodSpecLike): TopologyTerm[] {
  const a = spec.affinity;
  return [
    ...(a?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []).map((t) => affinityTerm('affinity', t, namespace, labels)),
    ...(a?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []).map((t) => affinityTerm('antiAffinity', t, namespace, labels)),
    ...(spec.topologySpreadConstraints ?? []).filter((c) => c.whenUnsatisfiable === 'DoNotSchedule').map((c) => spreadTerm(c, namespace, labels)),
  ];
}

/**
 * A running or nominated pod as the solver's topology counts it: namespace, labels and its required
 * anti-affinity terms (which repel matching newcomers).
 */
export function placedPod(pod: { readonly namespace: string; readonly labels?: Readonly<Record<string, string>>; readonly spec: PodSpecLike }): {
  namespace: string;
  labels: Readonly<Record<string, string>>;
  antiAffinity: TopologyTerm[];
} {
  const labels = pod.labels ?? {};
  return {
    namespace: pod.namespace,
    labels,
    antiAffinity: (pod.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []).map((t) => affinityTerm('antiAffinity', t, pod.namespace, labels)),
  };
}

/** A pod's preferences, heaviest first. */
export function podPreferences(namespace: string, labels: Readonly<Record<string, string>>, spec: PodSpecLike): Preferences {
  const a = spec.affinity;
  const heaviest = <T extends { weight: number }>(list: readonly T[] | undefined): T[] => [...(list ?? [])].sort((x, y) => y.weight - x.weight);
  const preference = (t: TopologyTerm): TopologyTerm => ({ ...t, required: false });
  const podAffinity = heaviest(a?.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution).map((p) => preference(affinityTerm('affinity', p.podAffinityTerm, namespace, labels)));
  const podAntiAffinity = heaviest(a?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution).map((p) => preference(affinityTerm('antiAffinity', p.podAffinityTerm, namespace, labels)));
  const nodeAffinity = heaviest(a?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution).map((p) => termRequirements(p.preference));
  const scheduleAnyway = (spec.topologySpreadConstraints ?? []).filter((c) => c.whenUnsatisfiable === 'ScheduleAnyway').map((c) => preference(spreadTerm(c, namespace, labels)));
  if (podAffinity.length + podAntiAffinity.length + nodeAffinity.length + scheduleAnyway.length === 0) return NO_PREFERENCES;
  return { podAffinity, podAntiAffinity, nodeAffinity, scheduleAnyway };
}

/**
 * A resolved pod (anti-)affinity term (Kubernetes `PodAffinityTerm`): `namespaces` ∪ the namespaces
 * `namespaceSelector` selects, the pod's own namespace when both are absent, every namespace for an empty selector;
 * `matchLabelKeys` adds `key In [own value]` and `mismatchLabelKeys` `key NotIn [own value]` to the selector.
 */
function affinityTerm(kind: 'affinity' | 'antiAffinity', t: PodAffinityTermLike, namespace: string, labels: Readonly<Record<string, string>>): TopologyTerm {
  const nsSelector = t.namespaceSelector;
  const all = nsSelector !== undefined && Object.keys(nsSelector.matchLabels ?? {}).length === 0 && (nsSelector.matchExpressions ?? []).length === 0;
  const listed = t.namespaces && t.namespaces.length > 0 ? [...t.namespaces].sort() : nsSelector ? [] : [namespace];
  const namespaces = all ? ('all' as const) : listed;
  const selector = withLabelKeys(withLabelKeys(t.labelSelector, t.matchLabelKeys, labels, 'In'), t.mismatchLabelKeys, labels, 'NotIn');
  const resolved = term(kind, normalizedLabelKey(t.topologyKey), selector, namespaces, { maxSkew: 0, minDomains: 1, nodeAffinityPolicy: 'Honor', nodeTaintsPolicy: 'Ignore' });
  if (all || !nsSelector) return resolved;
  return { ...resolved, namespaceSelector: nsSelector, counter: `${resolved.counter}|ns:${selectorKey(nsSelector)}` };
}

function spreadTerm(c: TopologySpreadConstraintLike, namespace: string, labels: Readonly<Record<string, string>>): TopologyTerm {
  const selector = withLabelKeys(c.labelSelector, c.matchLabelKeys, labels, 'In');
  return term('spread', normalizedLabelKey(c.topologyKey), selector, [namespace], {
    maxSkew: c.maxSkew,
    minDomains: c.minDomains ?? 1,
    nodeAffinityPolicy: c.nodeAffinityPolicy ?? 'Honor',
    nodeTaintsPolicy: c.nodeTaintsPolicy ?? 'Ignore',
  });
}

function term(
  kind: TopologyTerm['kind'],
  key: string,
  selector: LabelSelector | undefined,
  namespaces: readonly string[] | 'all',
  spread: Pick<TopologyTerm, 'maxSkew' | 'minDomains' | 'nodeAffinityPolicy' | 'nodeTaintsPolicy'>,
): TopologyTerm {
  return { kind, key, selector, namespaces, ...spread, counter: `${key}|${namespaces === 'all' ? '*' : namespaces.join(',')}|${selectorKey(selector)}`, required: true };
}

/**
 * `matchLabelKeys` (`In`) / `mismatchLabelKeys` (`NotIn`): the pod's own values of those keys are ANDed into the
 * selector (keys the pod lacks are ignored).
 */
function withLabelKeys(selector: LabelSelector | undefined, keys: readonly string[] | undefined, labels: Readonly<Record<string, string>>, operator: 'In' | 'NotIn'): LabelSelector | undefined {
  if (!selector || !keys || keys.length === 0) return selector;
  const extra = keys.filter((k) => ownValue(labels, k) !== undefined).map((k) => ({ key: k, operator, values: [labels[k]!] }));
  return extra.length === 0 ? selector : { ...selector, matchExpressions: [...(selector.matchExpressions ?? []), ...extra] };
}

/** A canonical string for a selector (order-independent), `nil` for none. */
export function selectorKey(selector: LabelSelector | undefined): string {
  if (!selector) return 'nil';
  const labels = Object.entries(selector.matchLabels ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .sort();
  const exprs = (selector.matchExpressions ?? []).map((e) => `${e.key} ${e.operator} ${[...(e.values ?? [])].sort().join(',')}`).sort();
  return [...labels, ...exprs].join(';') || 'all';
}

function termRequirements(t: NodeSelectorTermLike): Requirements {
  return Requirements.from((t.matchExpressions ?? []).map((r) => ({ ...r, key: normalizedLabelKey(r.key) })));
}

