/**
 * A NodeClaim planned in this solve: the pods it holds, its requirements narrowed by theirs, and every instance
 * option that still fits them (Karpenter `pkg/controllers/provisioning/scheduling/nodeclaim.go`). Check, then
 * commit: `canAdd`/`quote` never mutate the plan, `commit` applies an accepted check. A probe (never launched) answers
 * what a fresh NodeClaim of a NodePool would do.
 */
import { LABEL_HOSTNAME, WELL_KNOWN_LABELS } from '../api/labels.js';
import type { InstanceType } from '../instancetypes/offering.js';
import { add, fits, max, scale, subtract, subtractOnKeysOf, type ResourceList } from '../resources/resource-list.js';
import type { Requirement } from '../scheduling/requirement.js';
import { describeIncompatibility, type Requirements } from '../scheduling/requirements.js';
import { firstUntolerated, formatTaint } from '../scheduling/taints.js';
import { resolveCustomLabels } from './custom-labels.js';
import { NO_TERM_MATCHES } from './diagnosis.js';
import { finalOptions, fitter, fittingFast, largestAllocatable, optionsOf, pricedOptions, type FinalLists, type PricedType } from './instance-options.js';
import { withinLimits } from './limits.js';
import { minValuesShortfall } from './min-values.js';
import { optionDomainValues, pinnedDomain, type PinnedDomain } from './pinned-domain.js';
import type { SchedulingPod } from './pod.js';
import { alternativeKey } from './pod-shape.js';
import type { Topology } from './topology.js';
import { refusal, type Acceptance, type DaemonHostPort, type NodeClaimPlan, type NodePoolTemplate, type Rejection } from './types.js';

/**
 * A pod joins a planned NodeClaim when the claim's price rise is at most this factor × the price of a new
 * NodeClaim for it. Above 1 so that noise in per-type (spot) prices does not split pods that pack well; every
 * extra node also carries its own daemonset and system overhead.
 */
export const PACKING_TOLERANCE = 1.1;

/** What `PlannedNodeClaim.quote` returns when the pod can join: the price of the cheapest option, USD/hour. */
export type Quote = Acceptance<{ price: number }>;

/** What `PlannedNodeClaim.canAdd` returns when the pod can join. */
export type Accepted = Acceptance<{ requirements: Requirements; options: PricedType[]; requests: ResourceList; domains?: ReadonlyMap<string, string> }>;

/**
 * What a planned NodeClaim's check builds: the full acceptance with its option lists (`canAdd`, {@link Accepted}) or
 * the price only (`quote`, {@link Quote}). Each mode has its own typed answer, a union discriminated on `ok`:
 * - `'full'`: {@link Accepted} | {@link Rejection};
 * - `'price'`: {@link Quote} | {@link Rejection} | {@link Unpriced}.
 */
type CheckMode = 'full' | 'price';

/** A price-only check that cannot answer without option lists (a second topology key to pin): ask `canAdd`. */
type Unpriced = undefined;

/** Probe claims per topology state and template (see `PlannedNodeClaim.probe`). */
const probes = new WeakMap<Topology, Map<NodePoolTemplate, PlannedNodeClaim>>();

/** The one value a requirement allows, or undefined when it allows none, several or a complement. */
function singleValue(r: Requirement): string | undefined {
  return !r.complement && r.values.size === 1 ? r.values.values().next().value : undefined;
}

/** Whether any requirement of a NodePool sets `minValues`, once per template. */
const minValuesTemplates = new WeakMap<NodePoolTemplate, boolean>();
function hasMinValues(template: NodePoolTemplate): boolean {
  let answer = minValuesTemplates.get(template);
  if (answer === undefined) minValuesTemplates.set(template, (answer = template.requirements.values().some((r) => r.minValues !== undefined)));
  return answer;
}

/**
 * The labels a NodeClaim's requirements decide: a generated value for each custom key (`resolveCustomLabels`, core
 * `resolveCustomLabelsFromRequirements`), then every single-valued `In` (`requirements.labels()`). Once per
 * (immutable) requirements object: NodeClaims of one check share it.
 */
const requirementLabels = new WeakMap<Requirements, Readonly<Record<string, string>>>();
function labelsOf(requirements: Requirements): Readonly<Record<string, string>> {
  let labels = requirementLabels.get(requirements);
  if (!labels) requirementLabels.set(requirements, (labels = { ...resolveCustomLabels(requirements), ...requirements.labels() }));
  return labels;
}

/** A NodeClaim being planned in this solve. */
export class PlannedNodeClaim {
  readonly pods: SchedulingPod[] = [];
  private reserved: ResourceList = {};
  /**
   * Options narrowed by a pod requirement alternative (before resource filtering), keyed by the alternative. This
   * and the other caches are created on first use: a bulk pass keeps thousands of claims that never need them.
   */
  private narrowed: Map<string, { requirements: Requirements; options: PricedType[] }> | undefined;

  private constructor(
    readonly template: NodePoolTemplate,
    private requirements: Requirements,
    /** Every option that fits the claim's pods, cheapest first. */
    private options: PricedType[],
    private requests: ResourceList,
    /** Host ports its pods bind; created on the first pod that binds one. */
    private hostPorts: Set<string> | undefined,
    private readonly topology: Topology,
    /** Its hostname domain while it has no node. */
    readonly id: string,
  ) {
    this.updateRoom();
    this.minValues = hasMinValues(template);
  }

  /** Whether any requirement of the pool sets `minValues` (checked on every add). */
  private readonly minValues: boolean;

  /**
   * The price (USD/hour) of a fresh NodeClaim from `template` for `pod` alone, or undefined when none fits.
   * Same answer as the price of the NodeClaim `open` plans from the probe's accepted `canAdd`, without building it.
   */
  static freshPrice(template: NodePoolTemplate, pod: SchedulingPod, remaining: ResourceList | undefined, topology: Topology): number | undefined {
    return PlannedNodeClaim.probe(template, topology).cheapestFit(pod, remaining);
  }

  /** Why a fresh NodeClaim from `template` cannot take `pod`, or undefined when it can. */
  static rejection(template: NodePoolTemplate, pod: SchedulingPod, remaining: ResourceList | undefined, topology: Topology): Rejection | undefined {
    const check = PlannedNodeClaim.probe(template, topology).canAdd(pod, remaining);
    return check.ok ? undefined : check;
  }

  /**
   * An empty NodeClaim of `template` that is never launched: `canAdd` on it answers what a fresh NodeClaim would
   * do. Kept per topology state, so its narrowing cache serves every pod of the solve pass (it is never mutated).
   */
  static probe(template: NodePoolTemplate, topology: Topology): PlannedNodeClaim {
    let byTemplate = probes.get(topology);
    if (!byTemplate) probes.set(topology, (byTemplate = new Map()));
    let probe = byTemplate.get(template);
    if (!probe) {
      probe = new PlannedNodeClaim(template, template.requirements, optionsOf(template), template.daemonOverhead, undefined, topology, 'a new node');
      probe.isProbe = true;
      byTemplate.set(template, probe);
    }
    return probe;
  }

  /**
   * A new NodeClaim from `template` holding `pods`, from an accepted `canAdd` of the template's probe (same
   * template, topology and limits state): the check is not repeated.
   */
  static open(template: NodePoolTemplate, check: Accepted, pods: readonly SchedulingPod[], topology: Topology, id: string, remaining: Map<string, ResourceList | undefined>): PlannedNodeClaim {
    const claim = new PlannedNodeClaim(template, template.requirements, check.options, template.daemonOverhead, undefined, topology, id);
    claim.commit(pods, check, remaining);
    return claim;
  }

  /** Check then commit: adds `pod` if it fits, updating the pool's remaining limits. */
  tryAdd(pod: SchedulingPod, remaining: Map<string, ResourceList | undefined> | undefined): boolean {
    const check = this.canAdd(pod, remaining?.get(this.template.name));
    if (!check.ok) return false;
    this.commit([pod], check, remaining);
    return true;
  }

  /**
   * Commits an accepted `canAdd` (computed against the claim's current state) for `pods`: one pod, or
   * `check`'s `count` identical pods without topology terms or host ports. Updates the pool's remaining limits.
   */
  commit(pods: readonly SchedulingPod[], check: Accepted, remaining: Map<string, ResourceList | undefined> | undefined): void {
    if (check.requirements !== this.requirements) {
      this.narrowed = undefined;
      this.largest = undefined;
    }
    this.fitCache?.clear();
    this.requirements = check.requirements;
    this.options = check.options;
    this.requests = check.requests;
    this.updateRoom();
    for (const pod of pods) {
      for (const p of pod.hostPorts) (this.hostPorts ??= new Set()).add(p);
      this.pods.push(pod);
      // A NodeClaim's hostname domain is its own id (a probe's check names the probe).
      if (check.domains) this.topology.record(pod, (key) => (key === LABEL_HOSTNAME ? this.id : check.domains!.get(key)));
    }
    if (remaining) remaining.set(this.template.name, this.reserve(remaining.get(this.template.name)));
  }

  /**
   * The size the packing solver fills this claim up to (allocatable of its target instance type, canonical units)
   * and that type's price (USD/hour); undefined for claims opened pod by pod.
   */
  target: { readonly allocatable: ResourceList; readonly price: number } | undefined;

  /**
   * Whether `pod` can join, and the narrowed requirements and options if so. Never mutates the claim's plan.
   * `count` asks for that many identical pods at once; `plus` adds the requests (canonical units) of other pods
   * joining with it that the caller has checked share its requirements and pass the taint gate (bulk packing).
   * @param remaining what the pool's limits still allow besides this claim's own reservation; options that would
   *   not fit in it together with that reservation are dropped, so growing a claim never overruns a limit
   */
  canAdd(pod: SchedulingPod, remaining?: ResourceList, count = 1, plus?: ResourceList): Accepted | Rejection {
    return this.check(pod, remaining, count, plus, 'full');
  }

  /**
   * `canAdd` priced only: the same acceptance or rejection (reason and `temporary` flag included) and, when
   * accepted, the price (USD/hour) of the check's cheapest option — without building option lists, so evaluating
   * many candidate claims costs a short scan each. Commit with a `canAdd` of the chosen claim.
   */
  quote(pod: SchedulingPod, remaining?: ResourceList, count = 1, plus?: ResourceList): Quote | Rejection {
    const quoted = this.minValues ? undefined : this.check(pod, remaining, count, plus, 'price');
    if (quoted) return quoted;
    const check = this.canAdd(pod, remaining, count, plus);
    return check.ok ? { ok: true, price: check.options[0]!.price } : check;
  }

  /**
   * `canAdd` (`mode` `'full'`) or `quote` (`'price'`; {@link Unpriced} when the answer needs option lists: a second
   * topology key to pin). Options are filtered by what fits, by limits and by DaemonSet host ports, then pinned per
   * topology key. The overloads give each mode its own answer type (see {@link CheckMode}).
   */
  private check(pod: SchedulingPod, remaining: ResourceList | undefined, count: number, plus: ResourceList | undefined, mode: 'full'): Accepted | Rejection;
  private check(pod: SchedulingPod, remaining: ResourceList | undefined, count: number, plus: ResourceList | undefined, mode: 'price'): Quote | Rejection | Unpriced;
  private check(pod: SchedulingPod, remaining: ResourceList | undefined, count: number, plus: ResourceList | undefined, mode: CheckMode): Accepted | Quote | Rejection | Unpriced {
    const priceOnly = mode === 'price';
    const gate = this.gate(pod);
    if (gate) return gate;
    const keys = this.topology.keysOf(pod);
    // Domains the claim is already pinned to (and its own hostname) are checked before any instance type work.
    for (const key of keys) {
      const pinned = key === LABEL_HOSTNAME ? this.id : singleValue(this.requirements.get(key));
      if (pinned === undefined) continue;
      const verdict = this.topology.allowed(pod, key, [pinned]);
      if (!verdict.ok) return refusal(verdict);
    }
    const budget = this.budget(remaining);
    const own = add(this.requests, count === 1 ? pod.requests : scale(pod.requests, count));
    const requests = plus ? add(own, plus) : own;
    let firstRejection: Rejection | undefined;
    let temporary = false;
    for (const alternative of pod.requirementAlternatives) {
      const narrowed = this.narrow(alternative);
      if (!narrowed.ok) {
        firstRejection ??= narrowed;
        continue;
      }
      const daemons = this.clashingDaemons(pod);
      const clashes = (o: PricedType) => daemons.some((d) => d.requirements.some((alt) => alt.intersects(o.type.requirements) === undefined && alt.intersects(narrowed.requirements) === undefined));
      const fitsRequests = fitter(requests);
      const fitsType = budget ? (o: PricedType) => fitsRequests(o) && withinLimits(add(o.type.capacity, { nodes: 1 }), budget) : fitsRequests;
      // The fitted options (full check), or the first of them (quote).
      let options: PricedType[] | undefined;
      let first: PricedType | undefined;
      if (priceOnly) first = narrowed.options.find(fitsType);
      else first = (options = this.fitting(narrowed.options, requests, budget))[0];
      if (!first) {
        firstRejection ??= { ok: false, reason: 'no instance type fits' };
        continue;
      }
      if (daemons.length > 0) {
        if (options) first = (options = options.filter((o) => !clashes(o)))[0];
        else first = narrowed.options.find((o) => fitsType(o) && !clashes(o));
        if (!first) {
          firstRejection ??= { ok: false, reason: `host port ${daemons[0]!.port} is bound by DaemonSet ${daemons[0]!.daemonSet} on every instance type that fits` };
          continue;
        }
      }
      const keep = daemons.length === 0 ? fitsType : (o: PricedType) => fitsType(o) && !clashes(o);
      const placed =
        keys.length === 0
          ? { ok: true as const, requirements: narrowed.requirements, options, price: first.price, domains: undefined }
          : this.placeTopology(pod, keys, narrowed.requirements, options, first.price, narrowed.options, keep);
      if (!placed) return undefined;
      if (!placed.ok) {
        firstRejection ??= placed;
        temporary ||= placed.temporary === true;
        continue;
      }
      if (!placed.options) return { ok: true, price: placed.price };
      const shortfall = this.minValues && minValuesShortfall(placed.requirements, placed.options);
      if (shortfall) {
        firstRejection ??= { ok: false, reason: shortfall };
        continue;
      }
      return { ok: true, requirements: placed.requirements, options: placed.options, requests, ...(placed.domains ? { domains: placed.domains } : {}) };
    }
    if (temporary && firstRejection) return { ...firstRejection, temporary: true };
    return firstRejection ?? { ok: false, reason: NO_TERM_MATCHES };
  }

  /** True for a {@link PlannedNodeClaim.probe}: never committed, so its answers can be cached. */
  private isProbe = false;

  /** Filtered options by (options array, requests, budget), while the claim's state stands (probes: for good). */
  private fitCache: Map<string, { of: readonly PricedType[]; options: PricedType[] }> | undefined;

  /**
   * The options that fit `requests` and, with a budget, stay within the pool's limits. The same array comes back for
   * the same question while the claim is unchanged, so what is derived from it stays cached (see `domainsOf`).
   */
  private fitting(options: PricedType[], requests: ResourceList, budget: ResourceList | undefined): PricedType[] {
    const keep = (o: PricedType) => fits(requests, o.type.allocatable) && (!budget || withinLimits(add(o.type.capacity, { nodes: 1 }), budget));
    // Only a probe (never committed) asks the same question twice.
    if (!this.isProbe) return (!budget && fittingFast(options, requests)) || (options.every(keep) ? options : options.filter(keep));
    const key = budget ? `${JSON.stringify(requests)}|${JSON.stringify(budget)}` : JSON.stringify(requests);
    const hit = (this.fitCache ??= new Map()).get(key);
    if (hit && hit.of === options) return hit.options;
    const out = options.every(keep) ? options : options.filter(keep);
    if (this.fitCache.size > 256) this.fitCache.clear();
    this.fitCache.set(key, { of: options, options: out });
    return out;
  }

  /**
   * Chooses the claim's domain for every topology key `pod` is involved in: the claim is pinned to one value of
   * each key (the least-loaded allowed domain for a spread constraint, then the cheapest), so counts stay exact.
   * @param options the fitted options (`base` filtered by `keep`), or undefined to price only (then undefined comes
   *   back when a second key would need the pinned lists)
   * @param price the first fitted option's price, USD/hour
   * @param base the options before the resource filter (domains are read from them)
   * @param keep the resource, limits and host-port filter
   */
  private placeTopology(
    pod: SchedulingPod,
    keys: readonly string[],
    requirements: Requirements,
    options: PricedType[] | undefined,
    price: number,
    base: PricedType[],
    keep: (o: PricedType) => boolean,
  ): Acceptance<{ requirements: Requirements; options: PricedType[] | undefined; price: number; domains: ReadonlyMap<string, string> }> | Rejection | undefined {
    const domains = new Map<string, string>();
    let pins = 0;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      if (key === LABEL_HOSTNAME) {
        const verdict = this.topology.allowed(pod, key, [this.id]);
        if (!verdict.ok) return refusal(verdict);
        domains.set(key, this.id);
        continue;
      }
      const pinned = singleValue(requirements.get(key));
      if (pinned !== undefined) {
        const verdict = this.topology.allowed(pod, key, [pinned]);
        if (!verdict.ok) return refusal(verdict);
        domains.set(key, pinned);
        continue;
      }
      if (!options && pins++ > 0) return undefined;
      // Domains come from the options before the resource filter (`base`, stable while the claim is unchanged, so
      // cached across pods); each candidate domain is priced by its cheapest kept option (pinning commutes with
      // filtering), and only the chosen domain's list is built.
      const values = this.domainsOf(base, requirements, key);
      const verdict = this.topology.allowed(pod, key, values);
      if (!verdict.ok) return refusal(verdict);
      let best: { domain: string; load: number; pinned: PinnedDomain; price: number } | undefined;
      for (const domain of verdict.allowed) {
        const load = this.topology.spreadLoad(pod, key, domain);
        if (best && load > best.load) continue;
        const pinned = pinnedDomain(requirements, key, domain);
        const first = pinned.cheapest(base, keep);
        if (!first) continue;
        if (!best || load < best.load || first.price < best.price) best = { domain, load, pinned, price: first.price };
      }
      if (verdict.allowed.length === 0) continue;
      if (!best) return { ok: false, reason: `no instance type that fits is offered in ${verdict.allowed.join(', ')} (${key})`, temporary: true };
      requirements = best.pinned.requirements;
      price = best.price;
      if (options) {
        options = best.pinned.pin(options);
        // Only a later key that is neither pinned nor the hostname reads `base`.
        if (keys.slice(i + 1).some((k) => k !== LABEL_HOSTNAME)) base = best.pinned.pin(base);
      }
      domains.set(key, best.domain);
    }
    return { ok: true, requirements, options, price, domains };
  }

  /** The last {@link optionDomainValues} answer per key, with the (options, requirements) it was for. */
  private domainValues: Map<string, { readonly base: readonly PricedType[]; readonly requirements: Requirements; readonly values: readonly string[] }> | undefined;

  /**
   * `domainValues(key, requirements, types of base)`, remembered per key while (base, requirements) — both immutable
   * — stay the same, so that every pod asking a probe (or the same planned NodeClaim state) pays for it once.
   */
  private domainsOf(base: readonly PricedType[], requirements: Requirements, key: string): readonly string[] {
    const hit = (this.domainValues ??= new Map()).get(key);
    if (hit && hit.base === base && hit.requirements === requirements) return hit.values;
    const values = optionDomainValues(key, requirements, base);
    this.domainValues.set(key, { base, requirements, values });
    return values;
  }

  /** The cheapest price (USD/hour) the claim could launch at with `pod` added, or undefined if it cannot join. */
  cheapestFit(pod: SchedulingPod, remaining?: ResourceList): number | undefined {
    if (!fits(pod.requests, this.room)) return undefined;
    if (this.minValues || this.clashingDaemons(pod).length > 0 || this.topology.keysOf(pod).length > 0) {
      const check = this.quote(pod, remaining);
      return check.ok ? check.price : undefined;
    }
    if (this.gate(pod)) return undefined;
    const budget = this.budget(remaining);
    const requests = add(this.requests, pod.requests);
    let best: number | undefined;
    for (const alternative of pod.requirementAlternatives) {
      const narrowed = this.narrow(alternative);
      if (!narrowed.ok) continue;
      const first = narrowed.options.find((o) => fits(requests, o.type.allocatable) && (!budget || withinLimits(add(o.type.capacity, { nodes: 1 }), budget)));
      if (first && (best === undefined || first.price < best)) best = first.price;
    }
    return best;
  }

  /** What the largest option has free (key-wise) after the claim's requests: a quick upper bound for a new pod. */
  room: ResourceList = {};

  private updateRoom(): void {
    this.largest ??= largestAllocatable(this.options);
    this.room = subtract(this.largest, this.requests);
  }

  /**
   * Key-wise largest allocatable over the options the claim had when its requirements last changed: a superset of
   * its options, so `room` stays an upper bound (recomputed only when requirements narrow).
   */
  private largest: ResourceList | undefined;

  /** DaemonSet host ports `pod` also binds (it cannot share a node with those DaemonSets). */
  private clashingDaemons(pod: SchedulingPod): readonly DaemonHostPort[] {
    const ports = this.template.daemonHostPorts;
    if (!ports || ports.length === 0 || pod.hostPorts.length === 0) return [];
    return ports.filter((d) => pod.hostPorts.includes(d.port));
  }

  /** Taints and host ports: checks that do not depend on instance types. */
  private gate(pod: SchedulingPod): Rejection | undefined {
    const taint = firstUntolerated(this.template.taints, pod.tolerations, pod.avoidPreferNoSchedule);
    if (taint) return { ok: false, reason: `the NodePool's taint ${formatTaint(taint)} is not tolerated` };
    const used = this.hostPorts;
    const port = used && pod.hostPorts.find((p) => used.has(p));
    if (port) return { ok: false, reason: `host port ${port} is already used on the node` };
    return undefined;
  }

  /** Limits budget for growing this claim: what is left plus what the claim already reserved. */
  private budget(remaining: ResourceList | undefined): ResourceList | undefined {
    return remaining ? Object.fromEntries(Object.entries(remaining).map(([k, v]) => [k, v + (this.reserved[k] ?? 0)])) : undefined;
  }

  /** The claim's requirements and options narrowed by one pod requirement alternative (cached per alternative). */
  private narrow(alternative: Requirements): ({ ok: true } & { requirements: Requirements; options: PricedType[] }) | Rejection {
    const incompatibility = this.requirements.compatible(alternative, WELL_KNOWN_LABELS);
    if (incompatibility) return { ok: false, reason: describeIncompatibility(incompatibility), incompatibility };
    if (alternative.keys().length === 0) return { ok: true, requirements: this.requirements, options: this.options };
    const key = alternativeKey(alternative);
    let hit = (this.narrowed ??= new Map()).get(key);
    if (!hit) {
      const requirements = this.requirements.intersect(alternative);
      // A pod that only repeats what the claim already requires (its NodePool's label, say) narrows nothing.
      hit = requirements.toString() === this.requirementsKey() ? { requirements: this.requirements, options: this.options } : { requirements, options: pricedOptions(this.options, requirements) };
      this.narrowed.set(key, hit);
    }
    return { ok: true, ...hit };
  }

  private requirementsKeyCache: { of: Requirements; key: string } | undefined;
  private requirementsKey(): string {
    if (this.requirementsKeyCache?.of !== this.requirements) this.requirementsKeyCache = { of: this.requirements, key: this.requirements.toString() };
    return this.requirementsKeyCache.key;
  }

  /** The claim's requests so far (its pods plus daemonset overhead), canonical units. */
  requested(): ResourceList {
    return this.requests;
  }

  /** Allocatable of the claim's cheapest option (empty when it has none), canonical units. */
  cheapestAllocatable(): ResourceList {
    return this.options[0]?.type.allocatable ?? {};
  }

  /** The allocatable the claim may fill up to: its packing target if it has one, else its cheapest option's. */
  fillRoom(): ResourceList {
    return this.target?.allocatable ?? this.options[0]?.type.allocatable ?? {};
  }

  /** What is left of {@link fillRoom} after the claim's requests, canonical units. */
  freeRoom(): ResourceList {
    return subtract(this.fillRoom(), this.requests);
  }

  /** The price (USD/hour) the claim may grow to for free-room pods: its target's, else its current price. */
  ceiling(): number {
    return Math.max(this.target?.price ?? 0, this.price());
  }

  private cheapestType(): InstanceType | undefined {
    return this.options[0]?.type;
  }

  /** The cheapest price (USD/hour) the claim can launch at now: its cheapest option's cheapest allowed offering. */
  price(): number {
    return this.options[0]?.price ?? Number.POSITIVE_INFINITY;
  }

  /** How much the claim's cheapest price would rise (USD/hour) if `pod` joined, or undefined if it cannot join. */
  marginalPrice(pod: SchedulingPod, remaining?: ResourceList): number | undefined {
    const next = this.cheapestFit(pod, remaining);
    return next === undefined ? undefined : next - this.price();
  }

  /**
   * Re-reserves this claim's share of the pool's limits: its cheapest option's capacity plus one node (what it
   * will most likely launch as). Karpenter reserves the largest option (`subtractMax`), which starves a pool
   * whose options include metal sizes; Skiff instead re-checks limits against actual usage before each launch.
   */
  reserve(remaining: ResourceList | undefined): ResourceList | undefined {
    if (!remaining) return undefined;
    const cheapest = this.cheapestType();
    const next = add({ nodes: 1 }, cheapest?.capacity ?? max(...this.options.map((o) => o.type.capacity)));
    const updated = Object.fromEntries(Object.entries(remaining).map(([k, v]) => [k, v + (this.reserved[k] ?? 0)]));
    this.reserved = next;
    return subtractOnKeysOf(updated, next);
  }

  /** The plan of this NodeClaim; `lists` shares instance-type lists between the NodeClaims of one pass. */
  finalize(lists: FinalLists): NodeClaimPlan {
    const { instanceTypes, requirements } = finalOptions(this.options, this.requirements, lists);
    return {
      nodePool: this.template.name,
      nodeClass: this.template.nodeClass,
      requirements,
      instanceTypes,
      pods: this.pods.map((p) => p.key),
      requests: this.requests,
      labels: { ...this.template.labels, ...labelsOf(this.requirements) },
      taints: this.template.taints,
      startupTaints: this.template.startupTaints,
    };
  }
}
