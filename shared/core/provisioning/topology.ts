/**
 * Pod affinity, pod anti-affinity and topology spread during a solve: counts of matching pods per topology
 * domain, which domains a pod may go to, and the bookkeeping when it is placed.
 *
 * Semantics (Kubernetes `InterPodAffinity` and `PodTopologySpread` filters, with Karpenter's adaptations from
 * kubernetes-sigs/karpenter `pkg/controllers/provisioning/scheduling/{topology,topologygroup}.go`):
 * - a domain is a value of the term's node label (`topologyKey`); a node without the label is in no domain;
 * - the domains of a key are those NodePools can launch into (requirement values, instance type labels and
 *   offerings) plus those of existing nodes, so an empty zone counts as 0 and forces spreading into it;
 * - spread: a pod may join domain `d` when `count(d) + 1 (if it matches its own selector) − min ≤ maxSkew`, where
 *   `min` is the smallest count over eligible domains — 0 when fewer than `minDomains` are eligible, and always 0
 *   for `kubernetes.io/hostname` because a new node is a new empty domain (Karpenter `domainMinCount`). Eligible
 *   domains honour `nodeAffinityPolicy` (default Honor: only domains the pod's node affinity allows) and
 *   `nodeTaintsPolicy` (default Ignore; Honor drops domains reachable only through taints it does not tolerate);
 * - affinity: a domain already holding a matching pod; when no matching pod exists anywhere and the pod matches
 *   its own term, any domain (the first replica of a self-affine group);
 * - anti-affinity: a domain holding no matching pod, and (symmetry) no pod whose required anti-affinity term
 *   matches the incoming pod;
 * - new NodeClaims are pinned to one domain for every key a pod placed on them counts in, so the counts are
 *   exact and replicas with zonal anti-affinity launch together (Karpenter records such pods in every zone the
 *   NodeClaim might get and launches them one at a time).
 * Under `nodeAffinityPolicy: Honor` (and `nodeTaintsPolicy: Honor`) matching pods on existing nodes the pod could
 * not use are not counted, as in kube-scheduler; pods placed during the solve always count.
 */
import type { Taint } from '../api/kubernetes.js';
import { LABEL_HOSTNAME, WELL_KNOWN_LABELS, ownValue } from '../api/labels.js';
import { labelSelectorMatches } from '../api/object-meta.js';
import type { InstanceType } from '../instancetypes/offering.js';
import { Requirement } from '../scheduling/requirement.js';
import type { Requirements } from '../scheduling/requirements.js';
import { firstUntolerated } from '../scheduling/taints.js';
import type { SchedulingPod, TopologyTerm } from './pod.js';

/** A pod already running (or nominated) on existing capacity, as topology sees it. */
export interface PlacedPod {
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Its required anti-affinity terms (they repel matching newcomers: symmetry). */
  readonly antiAffinity: readonly TopologyTerm[];
}

/** Where a domain can come from: a NodePool (by requirements) or an existing node (by labels). */
interface DomainSource {
  readonly requirements?: Requirements;
  readonly labels?: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
}

/** Counts of one set of counted pods (a term's `counter`) per domain. */
interface Counter {
  readonly key: string;
  readonly selector: TopologyTerm['selector'];
  readonly namespaces: TopologyTerm['namespaces'];
  readonly namespaceSelector?: TopologyTerm['namespaceSelector'];
  /** domain → pods matching the selector. */
  readonly matching: Map<string, number>;
  /** The matching pods that were already on existing capacity, per target (for the spread policies). */
  readonly existing: { readonly domain: string; readonly labels: Readonly<Record<string, string>>; readonly taints: readonly Taint[]; n: number }[];
  /** domain → pods owning a required anti-affinity term with this counter (they repel matching pods). */
  readonly owners: Map<string, number>;
  /** Some anti-affinity term counts with it, so its owners repel the pods it matches. */
  anti: boolean;
}

/** A NodePool as topology needs it: requirements, taints and instance types. */
export interface TopologyTemplate {
  readonly requirements: Requirements;
  readonly taints: readonly Taint[];
  readonly instanceTypes: readonly InstanceType[];
}

/** Existing capacity as topology needs it. */
export interface TopologyTarget {
  /** Node name (or in-flight NodeClaim name): its hostname domain. */
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  readonly pods?: readonly PlacedPod[];
}

/**
 * Which domains a pod may go to, or why none, as a sentence. A refusal is `temporary` when later placements can
 * lift it (a spread constraint on a key other than hostname, whose global minimum can rise, and pod affinity,
 * whose matching pods can arrive); every other refusal only hardens as the solve places pods (counts only grow).
 */
export type TopologyVerdict = { readonly ok: true; readonly allowed: readonly string[] } | { readonly ok: false; readonly reason: string; readonly temporary?: boolean };

/** Topology state for one solve pass. Mutable: {@link Topology.record} updates counts. */
export class Topology {
  private readonly counters: Map<string, Counter>;
  /** key → domain → sources. */
  private readonly universe: Map<string, Map<string, DomainSource[]>>;
  private readonly countedIn = new WeakMap<SchedulingPod, Counter[]>();
  private readonly repelledBy = new WeakMap<SchedulingPod, Counter[]>();
  private readonly eligibleCache = new WeakMap<SchedulingPod, Map<string, ReadonlySet<string>>>();
  private readonly excludedCache = new WeakMap<SchedulingPod, Map<string, ReadonlyMap<string, number>>>();

  private constructor(counters: Map<string, Counter>, universe: Map<string, Map<string, DomainSource[]>>) {
    this.counters = counters;
    this.universe = universe;
  }

  /**
   * Builds the state for a solve.
   * @param pods the pending pods (base form: their preferences are included as possible constraints)
   * @param templates NodePools that can launch capacity
   * @param targets existing nodes and in-flight NodeClaims with the pods on them
   */
  static build(pods: readonly SchedulingPod[], templates: readonly TopologyTemplate[], targets: readonly TopologyTarget[]): Topology {
    const counters = new Map<string, Counter>();
    const register = (t: TopologyTerm) => {
      let c = counters.get(t.counter);
      if (!c) {
        c = { key: t.key, selector: t.selector, namespaces: t.namespaces, ...(t.namespaceSelector ? { namespaceSelector: t.namespaceSelector } : {}), matching: new Map(), owners: new Map(), existing: [], anti: false };
        counters.set(t.counter, c);
      }
      if (t.kind === 'antiAffinity' && t.required) c.anti = true;
    };
    for (const p of pods) {
      for (const t of p.topology) register(t);
      for (const t of [...p.preferences.podAffinity, ...p.preferences.podAntiAffinity, ...p.preferences.scheduleAnyway]) register(t);
    }
    for (const target of targets) for (const p of target.pods ?? []) for (const t of p.antiAffinity) register(t);

    if (counters.size === 0) return new Topology(counters, new Map());
    const keys = new Set([...counters.values()].map((c) => c.key));
    const universe = new Map<string, Map<string, DomainSource[]>>();
    for (const key of keys) {
      const domains = new Map<string, DomainSource[]>();
      const addSource = (d: string, s: DomainSource) => domains.set(d, [...(domains.get(d) ?? []), s]);
      if (key !== LABEL_HOSTNAME) {
        for (const t of templates) {
          for (const d of domainValues(key, t.requirements, t.instanceTypes)) addSource(d, { requirements: t.requirements.add(Requirement.in(key, [d])), taints: t.taints });
        }
      }
      for (const target of targets) {
        const d = domainOfTarget(target, key);
        if (d !== undefined) addSource(d, { labels: target.labels, taints: target.taints });
      }
      universe.set(key, domains);
    }
    const topology = new Topology(counters, universe);
    for (const target of targets) for (const p of target.pods ?? []) topology.recordPlaced(p, target);
    return topology;
  }

  /** A copy with the same counts (each solve pass starts from the same state). */
  clone(): Topology {
    // `existing` is fixed after build; the maps change during a pass.
    const counters = new Map([...this.counters].map(([id, c]) => [id, { ...c, matching: new Map(c.matching), owners: new Map(c.owners) }] as const));
    return new Topology(counters, this.universe);
  }

  /** True when no term of any pod or placed pod exists: every check is a no-op. */
  get empty(): boolean {
    return this.counters.size === 0;
  }

  /**
   * The node label keys for which a target must know its domain before `pod` can be placed there: keys of the
   * pod's own terms and of every counter that counts it.
   */
  keysOf(pod: SchedulingPod): string[] {
    if (this.empty) return [];
    const keys = new Set<string>();
    for (const t of pod.topology) keys.add(t.key);
    for (const c of this.countersCounting(pod)) keys.add(c.key);
    return [...keys].sort(byKeyOrder);
  }

  /** Which of `candidates` (domains of `key` a target could be in) `pod` may go to, or why none. */
  allowed(pod: SchedulingPod, key: string, candidates: readonly string[]): TopologyVerdict {
    if (candidates.length === 0) {
      // A node without the label: spread and affinity cannot be met there; anti-affinity is (Kubernetes).
      const needs = pod.topology.find((t) => t.key === key && t.kind !== 'antiAffinity');
      return needs ? { ok: false, reason: `the node would have no ${key} label, which the pod's ${needs.kind === 'spread' ? 'topology spread constraint' : 'pod affinity'} needs` } : { ok: true, allowed: [] };
    }
    let allowed = candidates;
    for (const term of pod.topology) {
      if (term.key !== key) continue;
      const counter = this.counters.get(term.counter)!;
      const before = allowed;
      switch (term.kind) {
        case 'spread': {
          const min = this.globalMin(pod, term, counter);
          const self = selects(counter, pod) ? 1 : 0;
          const eligible = key === LABEL_HOSTNAME ? undefined : this.eligibleDomains(pod, term);
          allowed = allowed.filter((d) => (eligible === undefined || eligible.has(d)) && this.spreadCount(pod, term, counter, d) + self - min <= term.maxSkew);
          if (allowed.length === 0) {
            const where = before.map((d) => `${d} has ${this.spreadCount(pod, term, counter, d)}`).join(', ');
            const eligibleCount = eligible?.size;
            const floor =
              eligibleCount !== undefined && eligibleCount < term.minDomains
                ? `only ${eligibleCount} eligible ${key} domain${eligibleCount === 1 ? '' : 's'} exist, fewer than minDomains ${term.minDomains}, so the global minimum counts as 0; allow more ${key} values (the NodePool's requirements, the pod's node affinity, the EC2NodeClass's subnets) or lower minDomains`
                : `the least loaded eligible domain has ${min}`;
            return { ok: false, reason: `topology spread on ${key} (maxSkew ${term.maxSkew}) would be broken: ${where || 'no domain'} of the pods matching ${describeSelector(term)}, and ${floor}`, temporary: key !== LABEL_HOSTNAME };
          }
          break;
        }
        case 'affinity': {
          const anywhere = [...counter.matching.values()].some((n) => n > 0);
          if (!anywhere && selects(counter, pod)) break;
          allowed = allowed.filter((d) => (counter.matching.get(d) ?? 0) > 0);
          if (allowed.length === 0) {
            const holding = [...counter.matching].filter(([, n]) => n > 0).map(([d]) => d);
            return {
              ok: false,
              temporary: true,
              reason: holding.length
                ? `pod affinity on ${key}: pods matching ${describeSelector(term)} are only in ${holding.join(', ')}`
                : `pod affinity on ${key}: no pod matching ${describeSelector(term)} is running or being placed`,
            };
          }
          break;
        }
        case 'antiAffinity': {
          allowed = allowed.filter((d) => (counter.matching.get(d) ?? 0) === 0);
          if (allowed.length === 0) return { ok: false, reason: `pod anti-affinity on ${key}: a pod matching ${describeSelector(term)} is already in ${before.join(', ') || 'every domain'}` };
          break;
        }
      }
    }
    for (const counter of this.countersRepelling(pod)) {
      if (counter.key !== key) continue;
      const before = allowed;
      allowed = allowed.filter((d) => (counter.owners.get(d) ?? 0) === 0);
      if (allowed.length === 0) return { ok: false, reason: `a pod in ${before.join(', ')} has required anti-affinity on ${key} against pods like this one (${describeSelector(counter)})` };
    }
    return { ok: true, allowed };
  }

  /**
   * How loaded domain `d` of `key` is for `pod`'s spread constraints (matching pods summed over its spread terms
   * on `key`): among allowed domains the least loaded is preferred (Karpenter `nextDomainTopologySpread`).
   */
  spreadLoad(pod: SchedulingPod, key: string, d: string): number {
    let load = 0;
    for (const t of pod.topology) if (t.kind === 'spread' && t.key === key) load += this.spreadCount(pod, t, this.counters.get(t.counter)!, d);
    return load;
  }

  /**
   * Records `pod` as placed: increments every counter that counts it, and the owner counts of its required
   * anti-affinity terms (not preferences: kube-scheduler's symmetry applies to required terms only), in the
   * domain `domainOf(key)` gives (undefined: the target has no such label).
   */
  record(pod: SchedulingPod, domainOf: (key: string) => string | undefined): void {
    if (this.empty) return;
    for (const c of this.countersCounting(pod)) bump(c.matching, domainOf(c.key));
    for (const t of pod.topology) if (t.kind === 'antiAffinity' && t.required) bump(this.counters.get(t.counter)!.owners, domainOf(t.key));
  }

  private recordPlaced(p: PlacedPod, target: TopologyTarget): void {
    for (const c of this.countersSelecting(p)) {
      const domain = domainOfTarget(target, c.key);
      if (domain === undefined) continue;
      bump(c.matching, domain);
      const entry = c.existing.find((e) => e.labels === target.labels && e.domain === domain);
      if (entry) entry.n++;
      else c.existing.push({ domain, labels: target.labels, taints: target.taints, n: 1 });
    }
    for (const t of p.antiAffinity) bump(this.counters.get(t.counter)!.owners, domainOfTarget(target, t.key));
  }

  /**
   * Matching pods in domain `d` as `pod`'s spread term counts them: pods on existing nodes its node affinity
   * (policy Honor) or its tolerations (`nodeTaintsPolicy: Honor`) rule out do not count.
   */
  private spreadCount(pod: SchedulingPod, term: TopologyTerm, counter: Counter, d: string): number {
    const all = counter.matching.get(d) ?? 0;
    if (counter.existing.length === 0) return all;
    let byTerm = this.excludedCache.get(pod);
    if (!byTerm) {
      byTerm = new Map();
      this.excludedCache.set(pod, byTerm);
    }
    const id = `${term.counter}|${term.nodeAffinityPolicy}|${term.nodeTaintsPolicy}`;
    let excluded = byTerm.get(id);
    if (!excluded) {
      const out = new Map<string, number>();
      for (const e of counter.existing) {
        const affinityOut = term.nodeAffinityPolicy === 'Honor' && !pod.requirementAlternatives.some((alt) => alt.isSatisfiedBy(e.labels));
        const taintsOut = term.nodeTaintsPolicy === 'Honor' && firstUntolerated(e.taints, pod.tolerations) !== undefined;
        if (affinityOut || taintsOut) out.set(e.domain, (out.get(e.domain) ?? 0) + e.n);
      }
      excluded = out;
      byTerm.set(id, excluded);
    }
    return all - (excluded.get(d) ?? 0);
  }

  private countersCounting(pod: SchedulingPod): Counter[] {
    let list = this.countedIn.get(pod);
    if (!list) {
      list = this.countersSelecting(pod);
      this.countedIn.set(pod, list);
    }
    return list;
  }

  /** Counters by one `matchLabels` pair of their selector (`key\0value`), the rest, and each counter's position. */
  private index: { readonly byLabel: Map<string, Counter[]>; readonly rest: Counter[]; readonly position: Map<Counter, number> } | undefined;

  /**
   * The counters whose selector and namespaces select `pod`, in registration order. A selector with `matchLabels`
   * can only select pods carrying its first pair, so only those counters are matched against the pod's labels.
   */
  private countersSelecting(pod: { readonly namespace: string; readonly labels: Readonly<Record<string, string>> }): Counter[] {
    if (!this.index) {
      const index = { byLabel: new Map<string, Counter[]>(), rest: [] as Counter[], position: new Map<Counter, number>() };
      for (const c of this.counters.values()) {
        index.position.set(c, index.position.size);
        const first = Object.entries(c.selector?.matchLabels ?? {})[0];
        if (!first) {
          index.rest.push(c);
          continue;
        }
        const id = `${first[0]}\0${first[1]}`;
        const list = index.byLabel.get(id);
        if (list) list.push(c);
        else index.byLabel.set(id, [c]);
      }
      this.index = index;
    }
    const { byLabel, rest, position } = this.index;
    const out = rest.filter((c) => selects(c, pod));
    let indexed = false;
    for (const k in pod.labels) {
      const list = byLabel.get(`${k}\0${pod.labels[k]}`);
      if (!list) continue;
      for (const c of list) if (selects(c, pod)) out.push(c);
      indexed = true;
    }
    return indexed && out.length > 1 ? out.sort((a, b) => position.get(a)! - position.get(b)!) : out;
  }

  /** Counters with anti-affinity owners whose selector matches `pod` (the symmetric side). */
  private countersRepelling(pod: SchedulingPod): Counter[] {
    let list = this.repelledBy.get(pod);
    if (!list) {
      list = this.countersCounting(pod).filter((c) => c.anti);
      this.repelledBy.set(pod, list);
    }
    return list;
  }

  /** The smallest matching count over the eligible domains (0 below `minDomains`; always 0 for hostname). */
  private globalMin(pod: SchedulingPod, term: TopologyTerm, counter: Counter): number {
    if (term.key === LABEL_HOSTNAME) return 0;
    const eligible = this.eligibleDomains(pod, term);
    if (eligible.size < term.minDomains) return 0;
    let min = Number.POSITIVE_INFINITY;
    for (const d of eligible) min = Math.min(min, this.spreadCount(pod, term, counter, d));
    return Number.isFinite(min) ? min : 0;
  }

  /** Domains of `term.key` that count for `pod` under the term's node affinity and taint policies. */
  private eligibleDomains(pod: SchedulingPod, term: TopologyTerm): ReadonlySet<string> {
    let byTerm = this.eligibleCache.get(pod);
    if (!byTerm) {
      byTerm = new Map();
      this.eligibleCache.set(pod, byTerm);
    }
    const id = `${term.key}|${term.nodeAffinityPolicy}|${term.nodeTaintsPolicy}`;
    let set = byTerm.get(id);
    if (!set) {
      const out = new Set<string>();
      for (const [d, sources] of this.universe.get(term.key) ?? []) {
        const ok = sources.some((s) => {
          if (term.nodeTaintsPolicy === 'Honor' && firstUntolerated(s.taints, pod.tolerations)) return false;
          if (term.nodeAffinityPolicy === 'Ignore') return true;
          return pod.requirementAlternatives.some((alt) => (s.requirements ? s.requirements.compatible(alt, WELL_KNOWN_LABELS) === undefined : alt.isSatisfiedBy(s.labels ?? {})));
        });
        if (ok) out.add(d);
      }
      set = out;
      byTerm.set(id, set);
    }
    return set;
  }
}

/** The domain of an existing target for `key`: its label, or its name for the hostname key. */
export function domainOfTarget(target: { readonly name: string; readonly labels: Readonly<Record<string, string>> }, key: string): string | undefined {
  return ownValue(target.labels, key) ?? (key === LABEL_HOSTNAME ? target.name : undefined);
}

/**
 * The values of `key` a node from `requirements` and `types` could carry: the finite values of the requirement,
 * of the instance types' labels, and (for zone and capacity type) of their offerings, filtered by the requirement.
 */
export function domainValues(key: string, requirements: Requirements, types: readonly { readonly requirements: Requirements }[]): string[] {
  const r = requirements.get(key);
  const out = new Set<string>();
  if (!r.complement) for (const v of r.values) out.add(v);
  for (const t of types) {
    const tr = t.requirements.get(key);
    if (tr.complement) continue;
    for (const v of tr.values) if (r.has(v)) out.add(v);
  }
  return [...out].sort();
}

function selects(
  c: { readonly selector: TopologyTerm['selector']; readonly namespaces: TopologyTerm['namespaces']; readonly namespaceSelector?: TopologyTerm['namespaceSelector'] },
  pod: { readonly namespace: string; readonly labels: Readonly<Record<string, string>> },
): boolean {
  const inNamespace = c.namespaces === 'all' || c.namespaces.includes(pod.namespace) || (c.namespaceSelector !== undefined && labelSelectorMatches(c.namespaceSelector, { [NAMESPACE_NAME_LABEL]: pod.namespace }));
  return inNamespace && labelSelectorMatches(c.selector, pod.labels);
}

/** The label every namespace carries with its own name (Kubernetes 1.22+). */
const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

function bump(map: Map<string, number>, domain: string | undefined): void {
  if (domain !== undefined) map.set(domain, (map.get(domain) ?? 0) + 1);
}

/** Hostname last: a planned NodeClaim's zone and capacity type are pinned before its own name is checked. */
function byKeyOrder(a: string, b: string): number {
  return Number(a === LABEL_HOSTNAME) - Number(b === LABEL_HOSTNAME) || a.localeCompare(b);
}

/** `app=web` style description of the pods a term counts. */
export function describeSelector(c: { readonly selector: TopologyTerm['selector']; readonly namespaces?: TopologyTerm['namespaces'] }): string {
  const s = c.selector;
  if (!s) return 'nothing (no labelSelector)';
  const parts = [
    ...Object.entries(s.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`),
    ...(s.matchExpressions ?? []).map((e) => `${e.key} ${e.operator}${e.values?.length ? ` [${e.values.join(' ')}]` : ''}`),
  ];
  return parts.length ? parts.join(',') : 'every pod';
}
