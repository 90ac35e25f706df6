/**
 * The simulated kube-scheduler's filter and score: which Ready node a pending pod binds to.
 *
 * Filters (kube-scheduler's default filter plugins, in their order): `TaintToleration`, `NodeAffinity`,
 * `NodeResourcesFit`, `NodePorts`, `InterPodAffinity` (required terms, with the self-affinity special case and
 * anti-affinity symmetry) and `PodTopologySpread` (`DoNotSchedule`). The per-node checks are the independent
 * placement checker's (`placement-check.ts`), so the simulated kube-scheduler is the Kubernetes ground truth and
 * shares no code with Skiff's solver; the inter-pod checks use the checker's term matching but aggregate counts per
 * topology domain once per scheduling cycle (kube-scheduler's PreFilter idea) instead of rescanning every pod for
 * every node, and update them as pods are assumed. The observer re-verifies every binding by brute force.
 *
 * Score — an APPROXIMATION of kube-scheduler's scoring, a weighted sum of per-plugin scores in 0..1 with the
 * default plugin weights of the kube-scheduler configuration (`NodeResourcesFit` 1, `NodeAffinity` 2,
 * `TaintToleration` 3, `InterPodAffinity` 2, `PodTopologySpread` 2):
 * - LeastAllocated: the mean free fraction of cpu and memory after placing the pod (not normalised, as upstream);
 * - preferred node affinity: the sum of the weights of the matching preferred terms, divided by the best node's;
 * - PreferNoSchedule taints the pod does not tolerate: `1 − count / max count`;
 * - preferred pod (anti-)affinity: Σ weight × matching pods in the node's domain (anti-affinity negative), plus the
 *   symmetric contributions of bound pods' preferred terms and required affinity terms (weight 1, upstream's
 *   `hardPodAffinityWeight`) that match the pod, min–max normalised over the feasible nodes;
 * - `ScheduleAnyway` topology spread: fewer matching pods in the node's domains (summed over the constraints) scores
 *   higher, min–max normalised; nodes without the constraints' topology keys score 0.
 * Not modelled: BalancedAllocation, ImageLocality, the cluster-level default spreading, upstream's logarithmic
 * domain weights in spread scoring, and percentage-of-nodes sampling (every node is scored). Ties go to the first
 * node by name.
 */
import {
  hostPortsClash,
  hostPortsOf,
  labelsMatch,
  nodeAffinityProblem,
  nodeLabel,
  nodeSelectorTermMatches,
  podAffinityTermMatches,
  podEffectiveRequests,
  requiredTerms,
  resolvePodAffinityTerm,
  resourcesFit,
  spreadEligible,
  spreadSelector,
  untoleratedTaint,
  type CheckedSpreadConstraint,
  type HostPort,
  type MaybeBoundPod,
  type PlacementNode,
  type ResolvedPodAffinityTerm,
  type ResourceAmounts,
} from './placement-check.js';

/** A node as the simulated kube-scheduler sees it. */
export interface SchedulerNode extends PlacementNode {
  /** Only Ready nodes are candidates (the simulation's stand-in for the `node.kubernetes.io/not-ready` taint). */
  readonly ready: boolean;
  /** What the pods bound to it request, canonical units (cpu millicores, memory MiB, counts). */
  readonly used: ResourceAmounts;
}

/** Weights of the score plugins, from kube-scheduler's default plugin configuration (config API v1). */
export const SCORE_WEIGHTS = { NodeResourcesFit: 1, NodeAffinity: 2, TaintToleration: 3, InterPodAffinity: 2, PodTopologySpread: 2 } as const;

/** `hardPodAffinityWeight`: how much a bound pod's required affinity term matching the pod counts in scoring (default 1). */
export const HARD_POD_AFFINITY_WEIGHT = 1;

/** Domain counts of the pods a matcher selects: `key\0value` → count. */
interface TermCounts {
  readonly matches: (pod: MaybeBoundPod) => boolean;
  readonly keys: readonly string[];
  readonly counts: Map<string, number>;
}

/** Per-domain counts of one spread constraint over its eligible nodes. */
interface SpreadCounts {
  readonly matches: (pod: MaybeBoundPod) => boolean;
  /** Eligible node name → its domain. */
  readonly eligible: Map<string, string>;
  /** Domain → matching pods (every eligible domain is present, possibly with 0). */
  readonly counts: Map<string, number>;
}

/** A bound pod with the node it runs on. */
interface Placed<P extends MaybeBoundPod, N extends SchedulerNode> {
  readonly pod: P;
  readonly node: N;
}

/** What one pod's filters need, computed once per pod per cycle (kube-scheduler's PreFilter state). */
interface PodState {
  readonly requests: ResourceAmounts;
  readonly ports: readonly HostPort[];
  readonly affinity?: { readonly terms: readonly ResolvedPodAffinityTerm[]; readonly counts: TermCounts; readonly canStartAlone: boolean };
  readonly anti: readonly { readonly term: ResolvedPodAffinityTerm; readonly counts: TermCounts }[];
  /** Domains forbidden by bound pods' required anti-affinity that matches the pod: key → values. */
  readonly forbidden: ReadonlyMap<string, ReadonlySet<string>>;
  readonly spread: readonly { readonly constraint: CheckedSpreadConstraint; readonly counts: SpreadCounts; readonly min: number; readonly self: number }[];
}

const pair = (key: string, value: string) => `${key}\u0000${value}`;

/** The taint the node lifecycle controller puts on a NotReady node; how kube-scheduler's message names a node that is not Ready. */
const NOT_READY_TAINT = 'node.kubernetes.io/not-ready';

/**
 * One kube-scheduler cycle over a snapshot of the cluster: pick a node for each pending pod in turn, and
 * {@link SchedulingCycle.assume} each binding so later pods see it.
 * @typeParam N the caller's node type (returned as is)
 * @typeParam P the caller's pod type
 * @example
 * const cycle = new SchedulingCycle(cluster.nodes.values(), cluster.pods.values());
 * for (const pod of pending) { const node = cycle.bestNode(pod); if (node) { bind(pod, node); cycle.assume(pod, node); } }
 */
export class SchedulingCycle<N extends SchedulerNode, P extends MaybeBoundPod> {
  /** Every node, by name order (domains come from all of them; only Ready ones are candidates). */
  private readonly nodes: readonly N[];
  private readonly byName: Map<string, N>;
  /** Requested resources per node, canonical units, updated by {@link assume}. */
  private readonly requested = new Map<string, Record<string, number>>();
  private readonly placed: Placed<P, N>[] = [];
  private podsByNode?: Map<string, P[]>;
  private antiHolders?: { readonly at: Placed<P, N>; readonly terms: readonly ResolvedPodAffinityTerm[] }[];
  private scoreHolders?: { readonly at: Placed<P, N>; readonly terms: readonly { readonly term: ResolvedPodAffinityTerm; readonly weight: number }[] }[];
  private readonly termCounts = new Map<string, TermCounts>();
  private readonly spreadCounts = new Map<string, SpreadCounts>();
  /** {@link unschedulableMessage} per pod spec, with how many pods were placed when it was computed. */
  private readonly messages = new WeakMap<object, { readonly assumed: number; readonly message: string }>();

  /**
   * @param nodes every live node (Ready or not); sorted here by name
   * @param pods every live pod; those with a `nodeName` on one of `nodes` are the bound pods
   */
  constructor(nodes: Iterable<N>, pods: Iterable<P>) {
    this.nodes = [...nodes].sort((a, b) => a.name.localeCompare(b.name));
    this.byName = new Map(this.nodes.map((n) => [n.name, n]));
    for (const n of this.nodes) this.requested.set(n.name, { ...n.used });
    for (const p of pods) {
      const node = p.nodeName === undefined ? undefined : this.byName.get(p.nodeName);
      if (node) this.placed.push({ pod: p, node });
    }
  }

  /**
   * The Ready node `pod` should bind to: the feasible node with the highest score (ties: first by name), or
   * undefined when no node passes the filters.
   * @throws {QuantityError} when a quantity of the pod does not parse
   */
  bestNode(pod: P): N | undefined {
    const feasible = this.feasibleNodes(pod);
    if (feasible.length <= 1) return feasible[0];
    const scores = this.scores(pod, feasible);
    let best = 0;
    for (let i = 1; i < feasible.length; i++) if (scores[i]! > scores[best]!) best = i;
    return feasible[best];
  }

  /** The Ready nodes that pass every filter for `pod`, in name order. */
  feasibleNodes(pod: P): N[] {
    const state = this.preFilter(pod);
    const out: N[] = [];
    for (const n of this.nodes) if (n.ready && this.passes(pod, state, n)) out.push(n);
    return out;
  }

  /**
   * The weighted score of each of `nodes` for `pod` (see the module doc), in the same order.
   * @param nodes feasible nodes (normalisation is over these)
   */
  scores(pod: P, nodes: readonly N[]): number[] {
    const requests = podEffectiveRequests(pod.spec);
    const total = nodes.map((n) => SCORE_WEIGHTS.NodeResourcesFit * leastAllocated(requests, this.requested.get(n.name) ?? {}, n.allocatable));
    const addComponent = (weight: number, values: readonly number[] | undefined) => {
      if (values) for (let i = 0; i < nodes.length; i++) total[i]! += weight * values[i]!;
    };
    addComponent(SCORE_WEIGHTS.NodeAffinity, this.nodeAffinityScores(pod, nodes));
    addComponent(SCORE_WEIGHTS.TaintToleration, taintScores(pod, nodes));
    addComponent(SCORE_WEIGHTS.InterPodAffinity, this.interPodAffinityScores(pod, nodes));
    addComponent(SCORE_WEIGHTS.PodTopologySpread, this.spreadScores(pod, nodes));
    return total;
  }

  /** Records that `pod` was bound to `node`, so the rest of the cycle counts it. */
  assume(pod: P, node: N): void {
    const at = { pod, node };
    this.placed.push(at);
    const used = this.requested.get(node.name);
    if (used) for (const [k, v] of Object.entries(podEffectiveRequests(pod.spec))) used[k] = (used[k] ?? 0) + v;
    if (this.podsByNode) {
      const list = this.podsByNode.get(node.name);
      if (list) list.push(pod);
      else this.podsByNode.set(node.name, [pod]);
    }
    if (this.antiHolders) {
      const terms = requiredTerms(pod, 'podAntiAffinity');
      if (terms.length > 0) this.antiHolders.push({ at, terms });
    }
    if (this.scoreHolders) {
      const terms = scoringTerms(pod);
      if (terms.length > 0) this.scoreHolders.push({ at, terms });
    }
    for (const tc of this.termCounts.values()) countInto(tc, pod, node);
    for (const sc of this.spreadCounts.values()) {
      const domain = sc.eligible.get(node.name);
      if (domain !== undefined && sc.matches(pod)) sc.counts.set(domain, (sc.counts.get(domain) ?? 0) + 1);
    }
  }

  /**
   * Why `pod` fits no node, worded as kube-scheduler writes it into the pod's `PodScheduled=False` condition and its
   * `FailedScheduling` Event (upstream `pkg/scheduler/framework/types.go` `FitError.Error`): `0/<N> nodes are available:
   * <count> <reason>, …` with N every node of the snapshot (Ready or not) and, per node, the reasons of the first filter
   * plugin that rejects it, in the default plugin order (`TaintToleration`, `NodeAffinity`, `NodePorts`,
   * `NodeResourcesFit`, `PodTopologySpread`, `InterPodAffinity`), counted and sorted as strings. A node that is not
   * Ready counts as upstream's `node.kubernetes.io/not-ready` taint does (after any untolerated taint it carries). With
   * no node at all: `no nodes available to schedule pods` (upstream `ErrNoNodesAvailable`).
   *
   * The message changes exactly when kube-scheduler's would — a node joins or leaves, or a node's first failing
   * reason changes — which is what makes kube-scheduler patch the pod again (see `simulated-cluster.ts`).
   * Differs: upstream appends the preemption outcome (`preemption: 0/N nodes are available: …`); it follows from the
   * same per-node statuses here (no pod preempts), so it is left out.
   * @throws {QuantityError} when a quantity of the pod does not parse
   */
  unschedulableMessage(pod: P): string {
    if (this.nodes.length === 0) return 'no nodes available to schedule pods';
    // Replicas share their template's spec: without inter-pod terms (where the pod's own labels count) the same spec
    // gets the same message until the next binding of the cycle changes what the nodes hold.
    const a = pod.spec.affinity;
    const cacheable = !a?.podAffinity && !a?.podAntiAffinity && (pod.spec.topologySpreadConstraints ?? []).length === 0;
    const cached = cacheable ? this.messages.get(pod.spec) : undefined;
    if (cached && cached.assumed === this.placed.length) return cached.message;
    const state = this.preFilter(pod);
    const counts = new Map<string, number>();
    for (const n of this.nodes) {
      for (const reason of this.rejection(pod, state, n)) counts.set(reason, (counts.get(reason) ?? 0) + 1);
    }
    const reasons = [...counts].map(([reason, count]) => `${count} ${reason}`).sort();
    const message = `0/${this.nodes.length} nodes are available: ${reasons.join(', ')}.`;
    if (cacheable) this.messages.set(pod.spec, { assumed: this.placed.length, message });
    return message;
  }

  // ---- filter --------------------------------------------------------------------------------------------------

  /**
   * The reasons the first failing filter plugin gives for `node`, in kube-scheduler's default plugin order and wording
   * (`taint_toleration.go`, `node_affinity.go`, `node_ports.go`, `fit.go`, `podtopologyspread/filtering.go`,
   * `interpodaffinity/filtering.go`); empty when the node passes (only {@link unschedulableMessage} calls it, so the
   * hot path {@link passes} stays allocation-free).
   */
  private rejection(pod: P, s: PodState, node: N): readonly string[] {
    const taint = untoleratedTaint(pod.spec.tolerations ?? [], node.taints);
    if (taint) return [`node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`];
    if (!node.ready) return [`node(s) had untolerated taint {${NOT_READY_TAINT}: }`];
    if (nodeAffinityProblem(pod, node) !== undefined) return ["node(s) didn't match Pod's node affinity/selector"];
    if (s.ports.length > 0) {
      for (const other of this.pods(node.name)) {
        if (hostPortsOf(other.spec).some((theirs) => s.ports.some((mine) => hostPortsClash(mine, theirs)))) return ["node(s) didn't have free ports for the requested pod ports"];
      }
    }
    const requested = this.requested.get(node.name) ?? {};
    if (!resourcesFit(s.requests, requested, node.allocatable)) {
      const short: string[] = [];
      for (const k of Object.keys(s.requests).sort()) {
        if (!resourcesFit({ [k]: s.requests[k]! }, requested, node.allocatable)) short.push(k === 'pods' ? 'Too many pods' : `Insufficient ${k}`);
      }
      return short;
    }
    for (const { constraint, counts, min, self } of s.spread) {
      const v = nodeLabel(node, constraint.topologyKey);
      if (v === undefined) return ["node(s) didn't match pod topology spread constraints (missing required label)"];
      if ((counts.counts.get(v) ?? 0) + self - min > constraint.maxSkew) return ["node(s) didn't match pod topology spread constraints"];
    }
    for (const [key, values] of s.forbidden) {
      const v = nodeLabel(node, key);
      if (v !== undefined && values.has(v)) return ["node(s) didn't satisfy existing pods anti-affinity rules"];
    }
    for (const { term, counts } of s.anti) {
      const v = nodeLabel(node, term.topologyKey);
      if (v !== undefined && (counts.counts.get(pair(term.topologyKey, v)) ?? 0) > 0) return ["node(s) didn't match pod anti-affinity rules"];
    }
    if (s.affinity) {
      let allPresent = true;
      for (const t of s.affinity.terms) {
        const v = nodeLabel(node, t.topologyKey);
        if (v === undefined) return ["node(s) didn't match pod affinity rules"];
        if ((s.affinity.counts.counts.get(pair(t.topologyKey, v)) ?? 0) <= 0) allPresent = false;
      }
      if (!allPresent && !s.affinity.canStartAlone) return ["node(s) didn't match pod affinity rules"];
    }
    return [];
  }

  private preFilter(pod: P): PodState {
    const affinityTerms = requiredTerms(pod, 'podAffinity');
    let affinity: PodState['affinity'];
    if (affinityTerms.length > 0) {
      const counts = this.termCountsFor('all', affinityTerms, (p) => affinityTerms.every((t) => podAffinityTermMatches(t, p)));
      const anywhere = [...counts.counts.values()].some((c) => c > 0);
      affinity = { terms: affinityTerms, counts, canStartAlone: !anywhere && affinityTerms.every((t) => podAffinityTermMatches(t, pod)) };
    }
    const anti = requiredTerms(pod, 'podAntiAffinity').map((term) => ({ term, counts: this.termCountsFor('one', [term], (p) => podAffinityTermMatches(term, p)) }));
    const forbidden = new Map<string, Set<string>>();
    for (const h of this.antiAffinityHolders()) {
      for (const t of h.terms) {
        const domain = nodeLabel(h.at.node, t.topologyKey);
        if (domain === undefined || !podAffinityTermMatches(t, pod)) continue;
        const set = forbidden.get(t.topologyKey) ?? new Set<string>();
        set.add(domain);
        forbidden.set(t.topologyKey, set);
      }
    }
    const hard = (pod.spec.topologySpreadConstraints ?? []).filter((c) => c.whenUnsatisfiable === 'DoNotSchedule');
    const hardKeys = [...new Set(hard.map((c) => c.topologyKey))];
    const spread = hard.map((constraint) => {
      const counts = this.spreadCountsFor(pod, constraint, hardKeys);
      const values = [...counts.counts.values()];
      const min = values.length < (constraint.minDomains ?? 1) ? 0 : Math.min(...values);
      return { constraint, counts, min, self: labelsMatch(spreadSelector(constraint, pod), pod.labels) ? 1 : 0 };
    });
    return { requests: podEffectiveRequests(pod.spec), ports: hostPortsOf(pod.spec), ...(affinity ? { affinity } : {}), anti, forbidden, spread };
  }

  private passes(pod: P, s: PodState, node: N): boolean {
    if (untoleratedTaint(pod.spec.tolerations ?? [], node.taints)) return false;
    if (nodeAffinityProblem(pod, node) !== undefined) return false;
    if (!resourcesFit(s.requests, this.requested.get(node.name) ?? {}, node.allocatable)) return false;
    if (s.ports.length > 0) {
      for (const other of this.pods(node.name)) if (hostPortsOf(other.spec).some((theirs) => s.ports.some((mine) => hostPortsClash(mine, theirs)))) return false;
    }
    if (s.affinity) {
      let allPresent = true;
      for (const t of s.affinity.terms) {
        const v = nodeLabel(node, t.topologyKey);
        if (v === undefined) return false;
        if ((s.affinity.counts.counts.get(pair(t.topologyKey, v)) ?? 0) <= 0) allPresent = false;
      }
      if (!allPresent && !s.affinity.canStartAlone) return false;
    }
    for (const { term, counts } of s.anti) {
      const v = nodeLabel(node, term.topologyKey);
      if (v !== undefined && (counts.counts.get(pair(term.topologyKey, v)) ?? 0) > 0) return false;
    }
    for (const [key, values] of s.forbidden) {
      const v = nodeLabel(node, key);
      if (v !== undefined && values.has(v)) return false;
    }
    for (const { constraint, counts, min, self } of s.spread) {
      const v = nodeLabel(node, constraint.topologyKey);
      if (v === undefined) return false;
      if ((counts.counts.get(v) ?? 0) + self - min > constraint.maxSkew) return false;
    }
    return true;
  }

  // ---- score ---------------------------------------------------------------------------------------------------

  private nodeAffinityScores(pod: P, nodes: readonly N[]): number[] | undefined {
    const preferred = pod.spec.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [];
    if (preferred.length === 0) return undefined;
    const raw = nodes.map((n) => preferred.reduce((sum, p) => sum + (nodeSelectorTermMatches(p.preference, n) ? p.weight : 0), 0));
    const max = Math.max(...raw);
    return max > 0 ? raw.map((r) => r / max) : undefined;
  }

  private interPodAffinityScores(pod: P, nodes: readonly N[]): number[] | undefined {
    const own = [
      ...(pod.spec.affinity?.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((p) => ({ term: resolvePodAffinityTerm(p.podAffinityTerm, pod), weight: p.weight })),
      ...(pod.spec.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((p) => ({ term: resolvePodAffinityTerm(p.podAffinityTerm, pod), weight: -p.weight })),
    ];
    // Symmetric part: bound pods whose terms select this pod attract (or repel) it to their domains.
    const byPair = new Map<string, number>();
    const keys = new Set<string>();
    for (const h of this.scoringHolders()) {
      for (const { term, weight } of h.terms) {
        const domain = nodeLabel(h.at.node, term.topologyKey);
        if (domain === undefined || !podAffinityTermMatches(term, pod)) continue;
        keys.add(term.topologyKey);
        byPair.set(pair(term.topologyKey, domain), (byPair.get(pair(term.topologyKey, domain)) ?? 0) + weight);
      }
    }
    if (own.length === 0 && byPair.size === 0) return undefined;
    const ownCounts = own.map(({ term, weight }) => ({ term, weight, counts: this.termCountsFor('one', [term], (p) => podAffinityTermMatches(term, p)) }));
    const raw = nodes.map((n) => {
      let s = 0;
      for (const { term, weight, counts } of ownCounts) {
        const v = nodeLabel(n, term.topologyKey);
        if (v !== undefined) s += weight * (counts.counts.get(pair(term.topologyKey, v)) ?? 0);
      }
      for (const key of keys) {
        const v = nodeLabel(n, key);
        if (v !== undefined) s += byPair.get(pair(key, v)) ?? 0;
      }
      return s;
    });
    return minMaxNormalised(raw);
  }

  private spreadScores(pod: P, nodes: readonly N[]): number[] | undefined {
    const soft = (pod.spec.topologySpreadConstraints ?? []).filter((c) => c.whenUnsatisfiable === 'ScheduleAnyway');
    if (soft.length === 0) return undefined;
    const keys = [...new Set(soft.map((c) => c.topologyKey))];
    const counted = soft.map((c) => ({ c, counts: this.spreadCountsFor(pod, c, keys) }));
    const ignored = nodes.map((n) => keys.some((k) => nodeLabel(n, k) === undefined));
    const raw = nodes.map((n, i) => (ignored[i] ? 0 : counted.reduce((sum, { c, counts }) => sum + (counts.counts.get(nodeLabel(n, c.topologyKey)!) ?? 0), 0)));
    const considered = raw.filter((_, i) => !ignored[i]);
    if (considered.length === 0) return undefined;
    const max = Math.max(...considered);
    const min = Math.min(...considered);
    return raw.map((r, i) => (ignored[i] ? 0 : max > min ? (max - r) / (max - min) : 1));
  }

  // ---- indexes -------------------------------------------------------------------------------------------------

  /** Pods bound to a node (index built on first use). */
  private pods(nodeName: string): readonly P[] {
    if (!this.podsByNode) {
      this.podsByNode = new Map();
      for (const { pod, node } of this.placed) {
        const list = this.podsByNode.get(node.name);
        if (list) list.push(pod);
        else this.podsByNode.set(node.name, [pod]);
      }
    }
    return this.podsByNode.get(nodeName) ?? [];
  }

  /** Bound pods with required anti-affinity terms (built on first use). */
  private antiAffinityHolders(): NonNullable<typeof this.antiHolders> {
    if (!this.antiHolders) {
      this.antiHolders = [];
      for (const at of this.placed) {
        const terms = requiredTerms(at.pod, 'podAntiAffinity');
        if (terms.length > 0) this.antiHolders.push({ at, terms });
      }
    }
    return this.antiHolders;
  }

  /** Bound pods with terms that score symmetrically (built on first use). */
  private scoringHolders(): NonNullable<typeof this.scoreHolders> {
    if (!this.scoreHolders) {
      this.scoreHolders = [];
      for (const at of this.placed) {
        const terms = scoringTerms(at.pod);
        if (terms.length > 0) this.scoreHolders.push({ at, terms });
      }
    }
    return this.scoreHolders;
  }

  /** Domain counts of the bound pods `matches` selects, over the terms' topology keys (cached per term signature). */
  private termCountsFor(kind: 'all' | 'one', terms: readonly ResolvedPodAffinityTerm[], matches: (p: MaybeBoundPod) => boolean): TermCounts {
    const signature = JSON.stringify([kind, terms.map(termSignature)]);
    let tc = this.termCounts.get(signature);
    if (!tc) {
      tc = { matches, keys: [...new Set(terms.map((t) => t.topologyKey))], counts: new Map() };
      for (const { pod, node } of this.placed) countInto(tc, pod, node);
      this.termCounts.set(signature, tc);
    }
    return tc;
  }

  /** Per-domain counts for one spread constraint of `pod` (cached per selector, namespace and eligibility inputs). */
  private spreadCountsFor(pod: P, constraint: CheckedSpreadConstraint, allKeys: readonly string[]): SpreadCounts {
    const selector = spreadSelector(constraint, pod);
    const honorAffinity = (constraint.nodeAffinityPolicy ?? 'Honor') === 'Honor';
    const honorTaints = (constraint.nodeTaintsPolicy ?? 'Ignore') === 'Honor';
    const signature = JSON.stringify([
      pod.namespace,
      selector,
      constraint.topologyKey,
      [...allKeys].sort(),
      honorAffinity ? [pod.spec.nodeSelector ?? null, pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? null] : null,
      honorTaints ? (pod.spec.tolerations ?? []) : null,
    ]);
    let sc = this.spreadCounts.get(signature);
    if (!sc) {
      const namespace = pod.namespace;
      sc = { matches: (p) => p.namespace === namespace && labelsMatch(selector, p.labels), eligible: new Map(), counts: new Map() };
      for (const n of this.nodes) {
        if (!spreadEligible(pod, constraint, allKeys, n)) continue;
        const domain = nodeLabel(n, constraint.topologyKey)!;
        sc.eligible.set(n.name, domain);
        if (!sc.counts.has(domain)) sc.counts.set(domain, 0);
      }
      for (const { pod: p, node } of this.placed) {
        const domain = sc.eligible.get(node.name);
        if (domain !== undefined && sc.matches(p)) sc.counts.set(domain, sc.counts.get(domain)! + 1);
      }
      this.spreadCounts.set(signature, sc);
    }
    return sc;
  }
}

/** Adds `pod` on `node` to `tc` when it matches: one count per topology key the node carries. */
function countInto(tc: TermCounts, pod: MaybeBoundPod, node: PlacementNode): void {
  if (!tc.matches(pod)) return;
  for (const key of tc.keys) {
    const v = nodeLabel(node, key);
    if (v !== undefined) tc.counts.set(pair(key, v), (tc.counts.get(pair(key, v)) ?? 0) + 1);
  }
}

/** What makes two resolved terms select the same pods over the same key. */
function termSignature(t: ResolvedPodAffinityTerm): unknown {
  return [t.topologyKey, [...t.namespaces].sort(), t.namespaceSelector, t.selector];
}

/** A pod's terms that score symmetrically for other pods: preferred affinity (+), preferred anti-affinity (−), required affinity (+hardPodAffinityWeight). */
function scoringTerms(pod: MaybeBoundPod): { term: ResolvedPodAffinityTerm; weight: number }[] {
  const a = pod.spec.affinity;
  if (!a?.podAffinity && !a?.podAntiAffinity) return [];
  return [
    ...(a.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((p) => ({ term: resolvePodAffinityTerm(p.podAffinityTerm, pod), weight: p.weight })),
    ...(a.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((p) => ({ term: resolvePodAffinityTerm(p.podAffinityTerm, pod), weight: -p.weight })),
    ...requiredTerms(pod, 'podAffinity').map((term) => ({ term, weight: HARD_POD_AFFINITY_WEIGHT })),
  ];
}

/** PreferNoSchedule taints the pod does not tolerate: `1 − count / max` (undefined when no node has any). */
function taintScores(pod: MaybeBoundPod, nodes: readonly SchedulerNode[]): number[] | undefined {
  const tolerations = pod.spec.tolerations ?? [];
  const raw = nodes.map((n) => (n.taints.some((t) => t.effect === 'PreferNoSchedule') ? n.taints.filter((t) => untoleratedTaint(tolerations, [t], ['PreferNoSchedule'])).length : 0));
  const max = Math.max(...raw);
  return max > 0 ? raw.map((r) => 1 - r / max) : undefined;
}

/** `(x − min) / (max − min)`, undefined when every value is equal. */
function minMaxNormalised(raw: readonly number[]): number[] | undefined {
  const max = Math.max(...raw);
  const min = Math.min(...raw);
  if (!(max > min)) return undefined;
  return raw.map((r) => (r - min) / (max - min));
}

/**
 * kube-scheduler's `LeastAllocated` score (the default `NodeResourcesFit` scoring strategy): the mean, over cpu
 * and memory, of the fraction of allocatable still free after placing the pod, 0..1.
 * @param requests the pod's effective requests, canonical units (cpu millicores, memory MiB)
 * @param requested what the pods already on the node request, canonical units
 * @param allocatable the node's allocatable, canonical units
 * @returns 0 (full) … 1 (empty); negative when the pod does not fit
 */
export function leastAllocated(requests: ResourceAmounts, requested: ResourceAmounts, allocatable: ResourceAmounts): number {
  // Written out rather than through a per-call closure: this runs for every pending pod and every feasible node.
  const [cpu, memory] = [allocatable.cpu ?? 0, allocatable.memory ?? 0];
  return ((cpu - (requested.cpu ?? 0) - (requests.cpu ?? 0)) / Math.max(1, cpu) + (memory - (requested.memory ?? 0) - (requests.memory ?? 0)) / Math.max(1, memory)) / 2;
}
