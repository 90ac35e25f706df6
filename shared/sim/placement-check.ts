/**
 * The independent placement checker: does one pod, bound to one node, break a Kubernetes scheduling constraint?
 *
 * Written straight from the Kubernetes documentation ("Assigning Pods to Nodes", "Taints and Tolerations",
 * "Pod Topology Spread Constraints", "Resource Management for Pods and Containers") and the behaviour of the
 * kube-scheduler filter plugins each check is named after. It is brute force on purpose — every check rescans the
 * nodes and pods it is given — and it imports nothing from `shared/core/scheduling/` or
 * `shared/core/provisioning/`, so it stays independent of the solver it verifies. The simulated kube-scheduler
 * (`kube-scheduler.ts`) reuses these per-constraint functions as its filters; the observer re-runs
 * {@link placementProblem} on every binding.
 *
 * Units: resource amounts are Skiff's canonical ResourceList units — cpu in millicores, memory, ephemeral-storage
 * and hugepages-* in MiB, `pods` and extended resources as counts.
 *
 * Decisions where the rules leave room:
 * - Beta and alias node labels (`beta.kubernetes.io/arch`, `failure-domain.beta.kubernetes.io/zone`, … — the keys of
 *   `NORMALIZED_LABELS`): simulated nodes carry only the GA labels, while a real EKS node carries both with the same
 *   value. A pod's selector, affinity expression or topology key naming a beta key therefore reads the node's own
 *   label of that key when present, else the GA label it stands for ({@link nodeLabel}).
 * - Namespaces have no labels in the simulation beyond the automatic `kubernetes.io/metadata.name`, which is what a
 *   term's `namespaceSelector` is matched against (`{}` selects every namespace).
 * - Host ports of init containers count like those of app containers (conservative).
 */
import type { Taint, TaintEffect, Toleration } from '../core/api/kubernetes.js';
import { NORMALIZED_LABELS, ownValue } from '../core/api/labels.js';
import { parseQuantity } from '../core/resources/quantity.js';

// ---- shapes ---------------------------------------------------------------------------------------------------

/** Resource name → amount in canonical units (cpu millicores; memory, ephemeral-storage, hugepages-* MiB; counts). */
export type ResourceAmounts = Readonly<Record<string, number>>;

/** A container's fields the checker reads. */
export interface CheckedContainer {
  readonly resources?: { readonly requests?: Readonly<Record<string, string | number>>; readonly limits?: Readonly<Record<string, string | number>> };
  /** `Always` on an init container makes it a restartable sidecar. */
  readonly restartPolicy?: string;
  readonly ports?: readonly { readonly containerPort?: number; readonly hostPort?: number; readonly protocol?: string; readonly hostIP?: string }[];
}

/** A node selector requirement (`key operator values`); operators In, NotIn, Exists, DoesNotExist, Gt, Lt. */
export interface CheckedNodeSelectorRequirement {
  readonly key: string;
  readonly operator: string;
  readonly values?: readonly string[];
}

/** A node selector term: `matchExpressions` on labels and `matchFields` (only `metadata.name`), ANDed. */
export interface CheckedNodeSelectorTerm {
  readonly matchExpressions?: readonly CheckedNodeSelectorRequirement[];
  /** Requirements on `metadata.name` (the API rejects other fields); typed loosely so every pod spec type fits. */
  readonly matchFields?: readonly unknown[];
}

/** A label selector; `undefined` where a selector is optional means "matches nothing". */
export interface CheckedLabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly { readonly key: string; readonly operator: string; readonly values?: readonly string[] }[];
}

/** A pod (anti-)affinity term. */
export interface CheckedPodAffinityTerm {
  readonly labelSelector?: CheckedLabelSelector;
  readonly namespaces?: readonly string[];
  readonly namespaceSelector?: CheckedLabelSelector;
  readonly topologyKey: string;
  readonly matchLabelKeys?: readonly string[];
  readonly mismatchLabelKeys?: readonly string[];
}

/** `affinity.podAffinity` or `affinity.podAntiAffinity`. */
export interface CheckedPodAffinity {
  readonly requiredDuringSchedulingIgnoredDuringExecution?: readonly CheckedPodAffinityTerm[];
  readonly preferredDuringSchedulingIgnoredDuringExecution?: readonly { readonly weight: number; readonly podAffinityTerm: CheckedPodAffinityTerm }[];
}

/** A topology spread constraint. */
export interface CheckedSpreadConstraint {
  readonly maxSkew: number;
  readonly topologyKey: string;
  readonly whenUnsatisfiable: string;
  readonly labelSelector?: CheckedLabelSelector;
  readonly minDomains?: number;
  /** `Honor` (default) or `Ignore`. */
  readonly nodeAffinityPolicy?: string;
  /** `Ignore` (default) or `Honor`. */
  readonly nodeTaintsPolicy?: string;
  readonly matchLabelKeys?: readonly string[];
}

/** The pod spec fields the checker reads (the `core/v1` names; any parsed pod spec fits). */
export interface CheckedPodSpec {
  readonly containers: readonly CheckedContainer[];
  readonly initContainers?: readonly CheckedContainer[];
  readonly overhead?: Readonly<Record<string, string | number>>;
  readonly nodeSelector?: Readonly<Record<string, string>>;
  readonly tolerations?: readonly Toleration[];
  readonly affinity?: {
    readonly nodeAffinity?: {
      readonly requiredDuringSchedulingIgnoredDuringExecution?: { readonly nodeSelectorTerms: readonly CheckedNodeSelectorTerm[] };
      readonly preferredDuringSchedulingIgnoredDuringExecution?: readonly { readonly weight: number; readonly preference: CheckedNodeSelectorTerm }[];
    };
    readonly podAffinity?: CheckedPodAffinity;
    readonly podAntiAffinity?: CheckedPodAffinity;
  };
  readonly topologySpreadConstraints?: readonly CheckedSpreadConstraint[];
  /** The pod shares the node's network: its container ports are host ports. */
  readonly hostNetwork?: boolean;
}

/** A pod as the checker reads it. */
export interface PlacementPod {
  readonly namespace: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly spec: CheckedPodSpec;
}

/** A pod that may be bound: pods without `nodeName` are ignored wherever bound pods are expected. */
export interface MaybeBoundPod extends PlacementPod {
  readonly nodeName?: string;
}

/** A node as the checker reads it. `allocatable` is in canonical units. */
export interface PlacementNode {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  readonly allocatable: ResourceAmounts;
}

/** Everything {@link placementProblem} looks at. */
export interface PlacementInput {
  /** The pod being placed. */
  readonly pod: PlacementPod;
  /** The node it is (to be) bound to. */
  readonly node: PlacementNode;
  /** Every node of the cluster (topology domains come from these); should include `node`. */
  readonly nodes: Iterable<PlacementNode>;
  /** The pods bound so far (with `nodeName`); `pod` itself, if listed, is skipped. */
  readonly pods: Iterable<MaybeBoundPod>;
  /**
   * What a caller that indexes its pods by node already knows, so the check reads every pod only when inter-pod
   * affinity or topology spread can matter: the pods bound to `node` (in the order `pods` lists them; `pod` itself,
   * if listed, is skipped), and whether any bound pod has a required anti-affinity term. The answer is the same as
   * without it. @default absent: both are worked out from `pods`
   */
  readonly local?: { readonly podsOnNode: Iterable<MaybeBoundPod>; readonly boundRequiredAntiAffinity: boolean };
}

// ---- the whole check ------------------------------------------------------------------------------------------

/**
 * The first Kubernetes scheduling constraint that binding `pod` to `node` breaks, as a sentence, or undefined.
 * Checked in kube-scheduler's filter order: NodeAffinity, TaintToleration, NodeResourcesFit, NodePorts,
 * InterPodAffinity, PodTopologySpread.
 * @throws {QuantityError} when a resource quantity does not parse (schemas reject this earlier)
 * @example placementProblem({ pod, node, nodes: cluster.nodes.values(), pods: cluster.pods.values() }) // undefined when fine
 */
export function placementProblem(input: PlacementInput): string | undefined {
  const { pod, node } = input;
  const simple = nodeAffinityProblem(pod, node) ?? taintProblem(pod, node);
  if (simple) return simple;
  if (input.local) {
    const onNode = boundOthers(pod, input.local.podsOnNode);
    const local = resourcesProblem(pod, node, onNode) ?? hostPortProblem(pod, onNode);
    if (local) return local;
    if (!input.local.boundRequiredAntiAffinity && !ownTopologyTerms(pod)) return undefined;
  }
  const others = boundOthers(pod, input.pods);
  if (!input.local) {
    const onNode = others.filter((p) => p.nodeName === node.name);
    const local = resourcesProblem(pod, node, onNode) ?? hostPortProblem(pod, onNode);
    if (local) return local;
  }
  if (!needsTopology(pod, others)) return undefined;
  const nodes = [...input.nodes];
  if (!nodes.some((n) => n.name === node.name)) nodes.push(node);
  return interPodAffinityProblem(pod, node, nodes, others) ?? topologySpreadProblem(pod, node, nodes, others);
}

/** Bound pods other than `pod` itself. */
function boundOthers(pod: PlacementPod, pods: Iterable<MaybeBoundPod>): (MaybeBoundPod & { readonly nodeName: string })[] {
  const out: (MaybeBoundPod & { readonly nodeName: string })[] = [];
  for (const p of pods) {
    if (p.nodeName === undefined || p === pod || (p.namespace === pod.namespace && p.name === pod.name)) continue;
    out.push(p as MaybeBoundPod & { readonly nodeName: string });
  }
  return out;
}

/** True when the pod has required inter-pod (anti-)affinity terms or a `DoNotSchedule` topology spread constraint. */
function ownTopologyTerms(pod: PlacementPod): boolean {
  const a = pod.spec.affinity;
  if (a?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.length) return true;
  if (a?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.length) return true;
  return pod.spec.topologySpreadConstraints?.some((c) => c.whenUnsatisfiable === 'DoNotSchedule') ?? false;
}

/** True when inter-pod affinity or topology spread could matter: the pod has terms, or a bound pod has required anti-affinity. */
function needsTopology(pod: PlacementPod, others: readonly MaybeBoundPod[]): boolean {
  if (ownTopologyTerms(pod)) return true;
  return others.some((p) => (p.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.length ?? 0) > 0);
}

// ---- labels ---------------------------------------------------------------------------------------------------

/**
 * The value of label `key` on a node. A beta or alias key (`NORMALIZED_LABELS`, e.g. `beta.kubernetes.io/arch`)
 * the node does not carry itself reads the GA label it stands for, as a real EKS node carries both.
 */
export function nodeLabel(node: { readonly labels: Readonly<Record<string, string>> }, key: string): string | undefined {
  const own = ownValue(node.labels, key);
  if (own !== undefined) return own;
  const ga = NORMALIZED_LABELS[key];
  return ga === undefined ? undefined : ownValue(node.labels, ga);
}

/** One label requirement: the key's value must (not) be in `values`, or the key must (not) exist. */
export interface LabelRequirement {
  readonly key: string;
  readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  readonly values: readonly string[];
}

/**
 * A label selector as a list of requirements (matchLabels become `In`), or null for a missing selector, which
 * matches nothing. An empty list matches everything (Kubernetes `LabelSelectorAsSelector`).
 */
export function selectorRequirements(selector: CheckedLabelSelector | undefined): LabelRequirement[] | null {
  if (!selector) return null;
  const out: LabelRequirement[] = Object.entries(selector.matchLabels ?? {}).map(([key, v]) => ({ key, operator: 'In', values: [v] }));
  for (const e of selector.matchExpressions ?? []) out.push({ key: e.key, operator: e.operator as LabelRequirement['operator'], values: e.values ?? [] });
  return out;
}

/** True when `labels` satisfy every requirement; a null requirement list matches nothing. */
export function labelsMatch(requirements: readonly LabelRequirement[] | null, labels: Readonly<Record<string, string>>): boolean {
  if (requirements === null) return false;
  for (const r of requirements) {
    const v = ownValue(labels, r.key);
    switch (r.operator) {
      case 'In':
        if (v === undefined || !r.values.includes(v)) return false;
        break;
      case 'NotIn':
        if (v !== undefined && r.values.includes(v)) return false;
        break;
      case 'Exists':
        if (v === undefined) return false;
        break;
      case 'DoesNotExist':
        if (v !== undefined) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

// ---- NodeAffinity ---------------------------------------------------------------------------------------------

/** An integer label value for Gt/Lt (as Go's `strconv.ParseInt` reads it), or undefined when it is not one. */
function integer(v: string | undefined): number | undefined {
  return v !== undefined && /^[+-]?\d+$/.test(v) ? Number(v) : undefined;
}

/** True when one node selector requirement holds for the value `v` (undefined: the label is absent). */
function requirementHolds(operator: string, values: readonly string[], v: string | undefined): boolean {
  switch (operator) {
    case 'In':
      return v !== undefined && values.includes(v);
    case 'NotIn':
      return v === undefined || !values.includes(v);
    case 'Exists':
      return v !== undefined;
    case 'DoesNotExist':
      return v === undefined;
    case 'Gt':
    case 'Lt': {
      const have = integer(v);
      const want = integer(values[0]);
      if (have === undefined || want === undefined) return false;
      return operator === 'Gt' ? have > want : have < want;
    }
    default:
      return false;
  }
}

/**
 * True when a node selector term holds for `node`: every `matchExpressions` entry on its labels (see
 * {@link nodeLabel}) and every `matchFields` entry on `metadata.name`. A term with neither matches nothing, as in
 * Kubernetes (`NodeSelectorTerm`: "a null or empty node selector term matches no objects").
 */
export function nodeSelectorTermMatches(term: CheckedNodeSelectorTerm, node: { readonly name: string; readonly labels: Readonly<Record<string, string>> }): boolean {
  const expressions = term.matchExpressions ?? [];
  const fields = (term.matchFields ?? []) as readonly Partial<CheckedNodeSelectorRequirement>[];
  if (expressions.length === 0 && fields.length === 0) return false;
  for (const e of expressions) if (!requirementHolds(e.operator, e.values ?? [], nodeLabel(node, e.key))) return false;
  for (const f of fields) {
    if (f.key !== 'metadata.name' || typeof f.operator !== 'string') return false;
    if (!requirementHolds(f.operator, f.values ?? [], node.name)) return false;
  }
  return true;
}

/**
 * kube-scheduler's `NodeAffinity` filter: every `nodeSelector` pair matches, and (when present) at least one
 * required node affinity term does (terms are ORed, a term's expressions ANDed).
 * @returns why the node does not match, or undefined
 */
export function nodeAffinityProblem(pod: PlacementPod, node: PlacementNode): string | undefined {
  const selector = pod.spec.nodeSelector;
  if (selector) {
    for (const k in selector) {
      const v = selector[k]!;
      const have = nodeLabel(node, k);
      if (have !== v) return `nodeSelector ${k}=${v} is not met (the node has ${have === undefined ? 'no such label' : `${k}=${have}`})`;
    }
  }
  const required = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (required && !required.nodeSelectorTerms.some((t) => nodeSelectorTermMatches(t, node))) {
    return `none of the ${required.nodeSelectorTerms.length} required node affinity term(s) matches the node's labels`;
  }
  return undefined;
}

// ---- TaintToleration ------------------------------------------------------------------------------------------

/**
 * True when `toleration` tolerates `taint` (Kubernetes `Toleration.ToleratesTaint`): the effect matches or the
 * toleration has none; the key matches or the toleration's key is empty (with `Exists`: every taint); `Exists`
 * ignores the value, `Equal` (the default) needs the same value.
 */
export function toleratesTaint(toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key && toleration.key !== taint.key) return false;
  if (toleration.operator === 'Exists') return true;
  // Equal with an empty key is rejected by validation; it would only match an empty-valued taint.
  return (toleration.value ?? '') === (taint.value ?? '');
}

/** The taint effects that keep pods off a node; PreferNoSchedule only affects scoring. */
const BLOCKING_EFFECTS: readonly TaintEffect[] = ['NoSchedule', 'NoExecute'];

/**
 * The first taint whose effect is in `effects` that no toleration tolerates, or undefined.
 * @param effects @default NoSchedule and NoExecute — the effects that keep pods off a node (PreferNoSchedule only scores)
 */
export function untoleratedTaint(tolerations: readonly Toleration[], taints: readonly Taint[], effects: readonly TaintEffect[] = BLOCKING_EFFECTS): Taint | undefined {
  for (const taint of taints) {
    if (!effects.includes(taint.effect)) continue;
    let tolerated = false;
    for (const t of tolerations) {
      if (toleratesTaint(t, taint)) {
        tolerated = true;
        break;
      }
    }
    if (!tolerated) return taint;
  }
  return undefined;
}

/**
 * kube-scheduler's `TaintToleration` filter: every NoSchedule and NoExecute taint of the node is tolerated.
 * @returns the untolerated taint as a sentence, or undefined
 */
export function taintProblem(pod: PlacementPod, node: PlacementNode): string | undefined {
  const t = untoleratedTaint(pod.spec.tolerations ?? [], node.taints);
  return t ? `taint ${t.key}${t.value ? `=${t.value}` : ''}:${t.effect} is not tolerated` : undefined;
}

// ---- NodeResourcesFit -----------------------------------------------------------------------------------------

const requestsCache = new WeakMap<CheckedPodSpec, ResourceAmounts>();

/**
 * A pod's effective requests in canonical units, plus `pods: 1` (Kubernetes `PodRequests`, with sidecars):
 * `max(Σ app containers + Σ sidecars, max over init containers of (its request + sidecars started before it))
 * + overhead`, where a sidecar is an init container with `restartPolicy: Always` and a container with only a
 * limit requests its limit. cpu is rounded up to whole millicores per pod (`MilliValue`). Cached per spec object.
 * @throws {QuantityError} when a quantity does not parse
 */
export function podEffectiveRequests(spec: CheckedPodSpec): ResourceAmounts {
  let cached = requestsCache.get(spec);
  if (!cached) {
    cached = computeRequests(spec);
    requestsCache.set(spec, cached);
  }
  return cached;
}

function computeRequests(spec: CheckedPodSpec): ResourceAmounts {
  // Base units (cores, bytes, counts) until the end, so cpu is rounded once per pod as Kubernetes does.
  const plus = (a: Record<string, number>, b: Readonly<Record<string, number>>) => {
    const out = { ...a };
    for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
    return out;
  };
  const maxOf = (a: Record<string, number>, b: Readonly<Record<string, number>>) => {
    const out = { ...a };
    for (const [k, v] of Object.entries(b)) out[k] = Math.max(out[k] ?? 0, v);
    return out;
  };
  const of = (c: CheckedContainer): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const [k, q] of Object.entries({ ...(c.resources?.limits ?? {}), ...(c.resources?.requests ?? {}) })) out[k] = parseQuantity(q);
    return out;
  };
  let app: Record<string, number> = {};
  for (const c of spec.containers) app = plus(app, of(c));
  let sidecars: Record<string, number> = {};
  let init: Record<string, number> = {};
  for (const c of spec.initContainers ?? []) {
    if (c.restartPolicy === 'Always') {
      sidecars = plus(sidecars, of(c));
      init = maxOf(init, sidecars);
    } else {
      init = maxOf(init, plus(of(c), sidecars));
    }
  }
  let total = maxOf(plus(app, sidecars), init);
  const overhead: Record<string, number> = {};
  for (const [k, q] of Object.entries(spec.overhead ?? {})) overhead[k] = parseQuantity(q);
  total = plus(total, overhead);
  const out: Record<string, number> = { pods: 1 };
  for (const [k, v] of Object.entries(total)) out[k] = (out[k] ?? 0) + toCanonical(k, v);
  return out;
}

/** Base units → canonical units: cores → millicores (rounded up), bytes → MiB, counts unchanged. */
function toCanonical(resource: string, base: number): number {
  if (resource === 'cpu') return Math.ceil(Math.round(base * 1000 * 1e6) / 1e6);
  if (resource === 'memory' || resource === 'ephemeral-storage' || resource.startsWith('hugepages-')) return base / 2 ** 20;
  return base;
}

/**
 * Sum of the effective requests of `pods`, canonical units.
 * @throws {QuantityError} when a quantity does not parse
 */
export function sumRequests(pods: Iterable<PlacementPod>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of pods) for (const [k, v] of Object.entries(podEffectiveRequests(p.spec))) out[k] = (out[k] ?? 0) + v;
  return out;
}

/** Tolerance for MiB fractions that went through float arithmetic (about one byte). */
const EPSILON = 1e-6;

/**
 * True when every resource `requests` asks for (amount > 0) fits in `allocatable − requested`: the boolean form of
 * {@link insufficientResources}, without allocation (kube-scheduler's hot path).
 */
export function resourcesFit(requests: ResourceAmounts, requested: ResourceAmounts, allocatable: ResourceAmounts): boolean {
  for (const k in requests) {
    const want = requests[k]!;
    if (want > EPSILON && want > (allocatable[k] ?? 0) - (requested[k] ?? 0) + EPSILON) return false;
  }
  return true;
}

/**
 * The resources `requests` asks for (amount > 0) that do not fit in `allocatable − requested` (a resource the node
 * does not list counts as 0), as kube-scheduler's `NodeResourcesFit` filter checks them: only requested resources
 * are checked, and `pods` counts the pod itself.
 * @param requested what the pods already on the node request, canonical units
 * @returns human-readable shortfalls, empty when the pod fits
 */
export function insufficientResources(requests: ResourceAmounts, requested: ResourceAmounts, allocatable: ResourceAmounts): string[] {
  const out: string[] = [];
  for (const k in requests) {
    const want = requests[k]!;
    if (want <= EPSILON) continue;
    const free = (allocatable[k] ?? 0) - (requested[k] ?? 0);
    if (want > free + EPSILON) out.push(`${k} (requests ${fmt(k, want)}, ${fmt(k, free)} free of ${fmt(k, allocatable[k] ?? 0)} allocatable)`);
  }
  return out;
}

function fmt(resource: string, amount: number): string {
  const r = Math.round(amount * 100) / 100;
  if (resource === 'cpu') return `${r}m`;
  if (resource === 'memory' || resource === 'ephemeral-storage' || resource.startsWith('hugepages-')) return `${r}Mi`;
  return String(r);
}

/**
 * kube-scheduler's `NodeResourcesFit` filter for `pod` on `node` next to `podsOnNode`.
 * @param podsOnNode the pods already bound to the node (without `pod`)
 * @returns the shortfall as a sentence, or undefined
 * @throws {QuantityError} when a quantity does not parse
 */
export function resourcesProblem(pod: PlacementPod, node: PlacementNode, podsOnNode: Iterable<PlacementPod>): string | undefined {
  const short = insufficientResources(podEffectiveRequests(pod.spec), sumRequests(podsOnNode), node.allocatable);
  return short.length > 0 ? `insufficient ${short.join(', ')}` : undefined;
}

// ---- NodePorts ------------------------------------------------------------------------------------------------

/** A host port a pod binds: protocol (default TCP), port and host IP (default `0.0.0.0`, every address). */
export interface HostPort {
  readonly protocol: string;
  readonly port: number;
  readonly hostIP: string;
}

/** The host ports a pod spec binds (app and init containers; `hostPort` 0 or absent binds nothing). */
export function hostPortsOf(spec: CheckedPodSpec): HostPort[] {
  const out: HostPort[] = [];
  for (const c of [...spec.containers, ...(spec.initContainers ?? [])]) {
    for (const p of c.ports ?? []) {
      // With hostNetwork the API server defaults hostPort to containerPort.
      const port = p.hostPort !== undefined && p.hostPort > 0 ? p.hostPort : spec.hostNetwork ? p.containerPort : undefined;
      if (port !== undefined && port > 0) out.push({ protocol: p.protocol ?? 'TCP', port, hostIP: p.hostIP || '0.0.0.0' });
    }
  }
  return out;
}

/** True when two host ports clash: same protocol and port, and the same host IP or either is `0.0.0.0`. */
export function hostPortsClash(a: HostPort, b: HostPort): boolean {
  return a.protocol === b.protocol && a.port === b.port && (a.hostIP === b.hostIP || a.hostIP === '0.0.0.0' || b.hostIP === '0.0.0.0');
}

/**
 * kube-scheduler's `NodePorts` filter: no host port of `pod` clashes with one already used on the node (by any
 * pod, DaemonSet pods included).
 * @param podsOnNode the pods already bound to the node (without `pod`)
 */
export function hostPortProblem(pod: PlacementPod, podsOnNode: Iterable<PlacementPod>): string | undefined {
  const mine = hostPortsOf(pod.spec);
  if (mine.length === 0) return undefined;
  for (const other of podsOnNode) {
    for (const theirs of hostPortsOf(other.spec)) {
      const clash = mine.find((m) => hostPortsClash(m, theirs));
      if (clash) return `host port ${clash.protocol}/${clash.port} is already used on the node by ${other.namespace}/${other.name}`;
    }
  }
  return undefined;
}

// ---- InterPodAffinity -----------------------------------------------------------------------------------------

/**
 * A pod (anti-)affinity term resolved against the pod that owns it: the namespaces it selects and its label
 * requirements with `matchLabelKeys` / `mismatchLabelKeys` merged in from the owner's labels.
 */
export interface ResolvedPodAffinityTerm {
  readonly topologyKey: string;
  /** Namespaces listed explicitly (or the owner's own, when neither `namespaces` nor `namespaceSelector` is set). */
  readonly namespaces: ReadonlySet<string>;
  /** Requirements on namespace labels (`kubernetes.io/metadata.name`); null when there is no namespaceSelector. */
  readonly namespaceSelector: readonly LabelRequirement[] | null;
  /** Requirements on pod labels; null (no labelSelector) matches no pod. */
  readonly selector: readonly LabelRequirement[] | null;
}

/**
 * Resolves a term for its owner: namespaces default to the owner's namespace when neither `namespaces` nor
 * `namespaceSelector` is given; `matchLabelKeys` adds `key In (owner's value)` and `mismatchLabelKeys` adds
 * `key NotIn (owner's value)` for keys the owner carries (the API server merges them the same way).
 */
export function resolvePodAffinityTerm(term: CheckedPodAffinityTerm, owner: PlacementPod): ResolvedPodAffinityTerm {
  const base = selectorRequirements(term.labelSelector);
  let selector = base;
  if (base !== null) {
    const extra: LabelRequirement[] = [];
    for (const k of term.matchLabelKeys ?? []) if (ownValue(owner.labels, k) !== undefined) extra.push({ key: k, operator: 'In', values: [owner.labels[k]!] });
    for (const k of term.mismatchLabelKeys ?? []) if (ownValue(owner.labels, k) !== undefined) extra.push({ key: k, operator: 'NotIn', values: [owner.labels[k]!] });
    selector = [...base, ...extra];
  }
  const listed = term.namespaces ?? [];
  const namespaceSelector = selectorRequirements(term.namespaceSelector);
  const namespaces = new Set(listed.length === 0 && namespaceSelector === null ? [owner.namespace] : listed);
  return { topologyKey: term.topologyKey, namespaces, namespaceSelector, selector };
}

/** True when `pod` is selected by a resolved term (its namespace is selected and its labels match). */
export function podAffinityTermMatches(term: ResolvedPodAffinityTerm, pod: { readonly namespace: string; readonly labels: Readonly<Record<string, string>> }): boolean {
  const inNamespace = term.namespaces.has(pod.namespace) || (term.namespaceSelector !== null && labelsMatch(term.namespaceSelector, { 'kubernetes.io/metadata.name': pod.namespace }));
  return inNamespace && labelsMatch(term.selector, pod.labels);
}

/** The required pod affinity or anti-affinity terms of a pod, resolved for it. */
export function requiredTerms(pod: PlacementPod, kind: 'podAffinity' | 'podAntiAffinity'): ResolvedPodAffinityTerm[] {
  return (pod.spec.affinity?.[kind]?.requiredDuringSchedulingIgnoredDuringExecution ?? []).map((t) => resolvePodAffinityTerm(t, pod));
}

/** A short description of a term for messages: `app=web in zone`. */
function describeTerm(term: ResolvedPodAffinityTerm): string {
  const sel = term.selector === null ? 'no pods' : term.selector.length === 0 ? 'all pods' : term.selector.map((r) => (r.operator === 'In' && r.values.length === 1 ? `${r.key}=${r.values[0]}` : `${r.key} ${r.operator} (${r.values.join(',')})`)).join(',');
  return `${sel} per ${term.topologyKey}`;
}

/**
 * kube-scheduler's `InterPodAffinity` filter (required terms only):
 * - pod affinity: the node has every term's topology label, and for each term some pod matching ALL the terms runs
 *   in the node's domain of that term — unless no pod matching all terms runs anywhere (on a node with the terms'
 *   topology labels) and the pod matches all its own terms, which lets the first pod of a self-affine group start;
 * - pod anti-affinity: for each term whose topology label the node has, no pod matching the term runs in the
 *   node's domain;
 * - symmetry: no existing pod's required anti-affinity term that matches this pod covers the node's domain.
 * @param nodes every node of the cluster (to find the domains of bound pods)
 * @param pods the bound pods other than `pod`
 */
export function interPodAffinityProblem(pod: PlacementPod, node: PlacementNode, nodes: Iterable<PlacementNode>, pods: Iterable<MaybeBoundPod>): string | undefined {
  const nodeByName = new Map<string, PlacementNode>();
  for (const n of nodes) nodeByName.set(n.name, n);
  const placed: { pod: MaybeBoundPod; node: PlacementNode }[] = [];
  for (const p of pods) {
    const n = p.nodeName === undefined ? undefined : nodeByName.get(p.nodeName);
    if (n && p !== pod && !(p.namespace === pod.namespace && p.name === pod.name)) placed.push({ pod: p, node: n });
  }

  const affinity = requiredTerms(pod, 'podAffinity');
  if (affinity.length > 0) {
    for (const t of affinity) if (nodeLabel(node, t.topologyKey) === undefined) return `the node has no ${t.topologyKey} label, which required pod affinity (${describeTerm(t)}) needs`;
    const matchingAll = placed.filter((x) => affinity.every((t) => podAffinityTermMatches(t, x.pod)));
    const anywhere = matchingAll.some((x) => affinity.some((t) => nodeLabel(x.node, t.topologyKey) !== undefined));
    const missing = affinity.find((t) => !matchingAll.some((x) => nodeLabel(x.node, t.topologyKey) === nodeLabel(node, t.topologyKey)));
    if (missing) {
      const selfAffine = affinity.every((t) => podAffinityTermMatches(t, pod));
      if (anywhere || !selfAffine) {
        return `required pod affinity (${describeTerm(missing)}) is not met: no matching pod runs in ${missing.topologyKey}=${nodeLabel(node, missing.topologyKey)}${anywhere ? '' : ' (and the pod does not match its own terms, so it cannot be the first)'}`;
      }
    }
  }

  for (const t of requiredTerms(pod, 'podAntiAffinity')) {
    const domain = nodeLabel(node, t.topologyKey);
    if (domain === undefined) continue;
    const clash = placed.find((x) => nodeLabel(x.node, t.topologyKey) === domain && podAffinityTermMatches(t, x.pod));
    if (clash) return `required pod anti-affinity (${describeTerm(t)}) is broken: ${clash.pod.namespace}/${clash.pod.name} runs in ${t.topologyKey}=${domain}`;
  }

  for (const x of placed) {
    for (const t of requiredTerms(x.pod, 'podAntiAffinity')) {
      const domain = nodeLabel(x.node, t.topologyKey);
      if (domain === undefined || nodeLabel(node, t.topologyKey) !== domain || !podAffinityTermMatches(t, pod)) continue;
      return `the required pod anti-affinity of ${x.pod.namespace}/${x.pod.name} (${describeTerm(t)}) forbids ${t.topologyKey}=${domain}`;
    }
  }
  return undefined;
}

// ---- PodTopologySpread ----------------------------------------------------------------------------------------

/**
 * The pod selector of a spread constraint: its `labelSelector` plus `key In (pod's value)` for each
 * `matchLabelKeys` key the pod carries (keys it lacks are ignored). Null (no labelSelector) matches nothing.
 */
export function spreadSelector(constraint: CheckedSpreadConstraint, pod: PlacementPod): LabelRequirement[] | null {
  const base = selectorRequirements(constraint.labelSelector);
  if (base === null) return null;
  const extra: LabelRequirement[] = [];
  for (const k of constraint.matchLabelKeys ?? []) if (ownValue(pod.labels, k) !== undefined) extra.push({ key: k, operator: 'In', values: [pod.labels[k]!] });
  return [...base, ...extra];
}

/**
 * True when `node`'s domain counts for `constraint` of `pod`: the node carries every topology key of the pod's
 * constraints in `allKeys`, and passes the node inclusion policies — `nodeAffinityPolicy: Honor` (the default)
 * needs the pod's nodeSelector and required node affinity to match; `nodeTaintsPolicy: Honor` (default `Ignore`)
 * needs the pod to tolerate the node's NoSchedule/NoExecute taints.
 */
export function spreadEligible(pod: PlacementPod, constraint: CheckedSpreadConstraint, allKeys: readonly string[], node: PlacementNode): boolean {
  if (allKeys.some((k) => nodeLabel(node, k) === undefined)) return false;
  if ((constraint.nodeAffinityPolicy ?? 'Honor') === 'Honor' && nodeAffinityProblem(pod, node) !== undefined) return false;
  if ((constraint.nodeTaintsPolicy ?? 'Ignore') === 'Honor' && untoleratedTaint(pod.spec.tolerations ?? [], node.taints) !== undefined) return false;
  return true;
}

/**
 * kube-scheduler's `PodTopologySpread` filter, for the constraints with `whenUnsatisfiable: DoNotSchedule`: the
 * node must carry each constraint's topology key, and placing the pod there must keep
 * `skew = matching pods in the node's domain + (1 if the pod matches its own selector) − global minimum ≤ maxSkew`.
 * Matching pods are the bound pods in the pod's namespace on eligible nodes ({@link spreadEligible}); the global
 * minimum is the smallest count over the eligible domains, or 0 when there are fewer eligible domains than
 * `minDomains` (default 1).
 * @param nodes every node of the cluster
 * @param pods the bound pods other than `pod`
 */
export function topologySpreadProblem(pod: PlacementPod, node: PlacementNode, nodes: Iterable<PlacementNode>, pods: Iterable<MaybeBoundPod>): string | undefined {
  const constraints = (pod.spec.topologySpreadConstraints ?? []).filter((c) => c.whenUnsatisfiable === 'DoNotSchedule');
  if (constraints.length === 0) return undefined;
  const allKeys = [...new Set(constraints.map((c) => c.topologyKey))];
  for (const c of constraints) if (nodeLabel(node, c.topologyKey) === undefined) return `the node has no ${c.topologyKey} label, which topology spread (DoNotSchedule) needs`;
  const nodeList = [...nodes];
  const podList = [...pods].filter((p) => p.nodeName !== undefined && p !== pod && !(p.namespace === pod.namespace && p.name === pod.name));
  for (const c of constraints) {
    const selector = spreadSelector(c, pod);
    const domainOf = new Map<string, string>();
    const counts = new Map<string, number>();
    for (const n of nodeList) {
      if (!spreadEligible(pod, c, allKeys, n)) continue;
      const d = nodeLabel(n, c.topologyKey)!;
      domainOf.set(n.name, d);
      if (!counts.has(d)) counts.set(d, 0);
    }
    for (const p of podList) {
      const d = domainOf.get(p.nodeName!);
      if (d !== undefined && p.namespace === pod.namespace && labelsMatch(selector, p.labels)) counts.set(d, counts.get(d)! + 1);
    }
    const minDomains = c.minDomains ?? 1;
    const globalMin = counts.size < minDomains ? 0 : Math.min(...counts.values());
    const domain = nodeLabel(node, c.topologyKey)!;
    const here = counts.get(domain) ?? 0;
    const self = labelsMatch(selector, pod.labels) ? 1 : 0;
    const skew = here + self - globalMin;
    if (skew > c.maxSkew) {
      return `topology spread on ${c.topologyKey} (maxSkew ${c.maxSkew}) is broken: ${c.topologyKey}=${domain} would hold ${here + self} matching pod(s) against a global minimum of ${globalMin} over ${counts.size} eligible domain(s)${counts.size < minDomains ? ` (fewer than minDomains ${minDomains})` : ''}, skew ${skew}`;
    }
  }
  return undefined;
}
