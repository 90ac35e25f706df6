/**
 * Solver v1: places pending pods on existing capacity, then on new NodeClaims from NodePool templates.
 *
 * Semantics follow Karpenter's scheduler (kubernetes-sigs/karpenter `pkg/controllers/provisioning/scheduling/`,
 * summarised in ../shared/KARPENTER-V1.md §1.2):
 * - pods are solved in order cpu desc, memory desc, creation time, name (`queue.go byCPUAndMemoryDescending`);
 * - each pod tries existing nodes and in-flight NodeClaims first (free capacity); then, in Karpenter's pass, the
 *   first NodeClaim planned in this solve that fits (fewest pods first), else a new NodeClaim from the first
 *   NodePool by descending weight that can take it;
 * - Skiff also runs a price-aware pass — a pod joins the planned NodeClaim whose price rises least, unless a new
 *   NodeClaim for it costs less than that rise (× {@link PACKING_TOLERANCE}) — and keeps, per NodePool, the
 *   cheaper plan of the two. This avoids growing a node into a much dearer type (two 1-GPU pods on a
 *   g4dn.12xlarge instead of two g4dn.xlarge) and is never dearer than first-fit;
 * - a NodeClaim keeps every instance type that still fits all of its pods plus daemonset overhead and has an
 *   available offering its requirements allow; the list is cheapest first and truncated to 600
 *   (`MaxInstanceTypes`);
 * - NodePool limits: instance types whose capacity exceeds what the limit still allows are not considered, and
 *   each planned NodeClaim reserves its cheapest option's capacity (Karpenter reserves the largest,
 *   `subtractMax`); a NodeClaim never grows past what the limit allows, and the controller re-checks limits
 *   against actual usage before each launch.
 * Check, then commit: every target offers `canAdd(pod)` (no mutation, returns why not) and `add()`.
 * Unschedulable pods are returned as data with the reason each NodePool cannot serve them.
 */
import type { Taint } from '../api/kubernetes.js';
import { LABEL_HOSTNAME, LABEL_INSTANCE_TYPE, WELL_KNOWN_LABELS } from '../api/labels.js';
import { cheapestOffering, type InstanceType } from '../instancetypes/offering.js';
import { add, exceeding, fits, max, subtract, subtractOnKeysOf, type ResourceList } from '../resources/resource-list.js';
import { Requirement } from '../scheduling/requirement.js';
import { describeIncompatibility, Requirements, type Incompatibility } from '../scheduling/requirements.js';
import { firstUntolerated, formatTaint } from '../scheduling/taints.js';
import { diagnose, NO_TERM_MATCHES } from './diagnosis.js';
import { withinLimits } from './limits.js';
import { minValuesShortfall } from './min-values.js';
import type { SchedulingPod } from './pod.js';
import { relaxationSteps, view } from './preferences.js';
import { domainOfTarget, domainValues, Topology, type PlacedPod } from './topology.js';

export { withinLimits } from './limits.js';

/**
 * A pod joins a planned NodeClaim when the claim's price rise is at most this factor × the price of a new
 * NodeClaim for it. Above 1 so that noise in per-type (spot) prices does not split pods that pack well; every
 * extra node also carries its own daemonset and system overhead.
 */
export const PACKING_TOLERANCE = 1.1;

/** Karpenter's `MaxInstanceTypes`: the most instance types a NodeClaim carries. */
export const MAX_INSTANCE_TYPES = 600;

/** A NodePool as the solver sees it. */
export interface NodePoolTemplate {
  readonly name: string;
  readonly nodeClass: string;
  /** Higher is tried first; missing weight is 0 (Karpenter `OrderByWeight`). */
  readonly weight: number;
  /** The NodePool's requirements ∩ its template labels (as `In`) ∩ `karpenter.sh/nodepool In [name]`. */
  readonly requirements: Requirements;
  /** Labels every node of this pool carries (template labels and `karpenter.sh/nodepool`). */
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  /** Ignored for fit (Karpenter), carried to the NodeClaim. */
  readonly startupTaints: readonly Taint[];
  /** Candidate instance types with offerings (unavailable offerings already marked). */
  readonly instanceTypes: readonly InstanceType[];
  /** Requests of the DaemonSet pods that will run on this pool's nodes, canonical units. */
  readonly daemonOverhead: ResourceList;
  /** Host ports those DaemonSet pods bind, with where each DaemonSet runs. */
  readonly daemonHostPorts?: readonly DaemonHostPort[];
  /**
   * What the NodePool's `spec.limits` still allow (limit − current usage), canonical units plus `nodes`;
   * undefined means no limits. Only the keys present are limited.
   */
  readonly remaining?: ResourceList;
}

/** A host port a DaemonSet binds on the nodes it runs on. */
export interface DaemonHostPort {
  /** `protocol/port`. */
  readonly port: string;
  /** The DaemonSet's node requirement alternatives (ORed): it runs on instance types compatible with one. */
  readonly requirements: readonly Requirements[];
  /** `namespace/name`. */
  readonly daemonSet: string;
}

/** Capacity that already exists or is already being launched: a registered node or an in-flight NodeClaim. */
export interface ExistingCapacity {
  /** Node name, or NodeClaim name while it has no node. */
  readonly name: string;
  readonly kind: 'node' | 'nodeClaim';
  readonly nodePool?: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Taints that block scheduling (startup and unregistered taints excluded for in-flight NodeClaims). */
  readonly taints: readonly Taint[];
  /** Allocatable minus the requests of pods bound or nominated to it (including daemon pods). */
  readonly available: ResourceList;
  /** Host ports already bound (`protocol/port`). */
  readonly hostPorts: readonly string[];
  /** Pods bound or nominated to it, for pod affinity, anti-affinity and topology spread counts. */
  readonly pods?: readonly PlacedPod[];
}

/** A NodeClaim the solve decided to launch. */
export interface NodeClaimPlan {
  readonly nodePool: string;
  readonly nodeClass: string;
  /** NodePool ∩ pods' requirements, plus `node.kubernetes.io/instance-type In [options]`. */
  readonly requirements: Requirements;
  /** Options cheapest first (by cheapest compatible available offering), at most {@link MAX_INSTANCE_TYPES}. */
  readonly instanceTypes: readonly { readonly name: string; readonly price: number }[];
  /** Keys (`ns/name`) of the pods it is for. */
  readonly pods: readonly string[];
  /** Pods' requests plus daemonset overhead, canonical units. */
  readonly requests: ResourceList;
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  readonly startupTaints: readonly Taint[];
}

/** A pod no target can take, with the reason each NodePool gives. */
export interface UnschedulablePod {
  readonly pod: string;
  /** One sentence a user can act on. */
  readonly reason: string;
  /** NodePool name → why a new node from it cannot serve the pod. */
  readonly nodePools: Readonly<Record<string, string>>;
}

/** The outcome of a solve. */
export interface SchedulingResults {
  readonly newNodeClaims: readonly NodeClaimPlan[];
  /** Pods that fit existing nodes or in-flight NodeClaims: nothing to launch for them. */
  readonly existing: readonly { readonly pod: string; readonly target: string }[];
  readonly unschedulable: readonly UnschedulablePod[];
}

/** Why a target cannot take a pod (value, not error). */
export type Rejection = { readonly ok: false; readonly reason: string; readonly incompatibility?: Incompatibility };

type Acceptance<T> = { readonly ok: true } & T;

/**
 * Solves one batch.
 * @param pods pending pods (any order; the solver sorts them)
 * @param templates NodePools with their instance types
 * @param existing nodes and in-flight NodeClaims with their free room
 * @example
 * const results = solve(pods, templates, existing);
 * for (const plan of results.newNodeClaims) launch(plan);
 */
export function solve(pods: readonly SchedulingPod[], templates: readonly NodePoolTemplate[], existing: readonly ExistingCapacity[]): SchedulingResults {
  const topology = Topology.build(pods, templates, existing);
  const priceAware = solveWith(pods, templates, existing, PACKING_TOLERANCE, topology);
  if (priceAware.newNodeClaims.length <= 1) return priceAware;
  const packed = solveWith(pods, templates, existing, Number.POSITIVE_INFINITY, topology);
  // Placing more pods beats saving money (e.g. under a cpu limit, one bigger node fits more pods than two small).
  if (packed.unschedulable.length > priceAware.unschedulable.length) return priceAware;
  if (packed.unschedulable.length < priceAware.unschedulable.length) return packed;
  // Both passes put the same pods on existing capacity and in the same NodePools: choose per NodePool.
  const podsByPool = (r: SchedulingResults) => JSON.stringify([...groupByPool(r)].map(([pool, claims]) => [pool, claims.flatMap((c) => c.pods).sort()]).sort());
  const sameExisting = JSON.stringify(packed.existing) === JSON.stringify(priceAware.existing);
  // Mixing passes per NodePool is only sound when no topology term ties NodePools together (zones chosen in one pass
  // may clash with zones chosen in the other).
  if (!sameExisting || !topology.empty || podsByPool(packed) !== podsByPool(priceAware)) return planPrice(packed) < planPrice(priceAware) ? packed : priceAware;
  const packedByPool = groupByPool(packed);
  const newNodeClaims = [...groupByPool(priceAware)].flatMap(([pool, claims]) => {
    const alternative = packedByPool.get(pool) ?? [];
    const [a, b] = [sumPrice(alternative), sumPrice(claims)];
    return a < b - 1e-9 || (Math.abs(a - b) <= 1e-9 && alternative.length < claims.length) ? alternative : claims;
  });
  return { ...priceAware, newNodeClaims };
}

function groupByPool(r: SchedulingResults): Map<string, NodeClaimPlan[]> {
  const out = new Map<string, NodeClaimPlan[]>();
  for (const c of r.newNodeClaims) out.set(c.nodePool, [...(out.get(c.nodePool) ?? []), c]);
  return out;
}

function sumPrice(claims: readonly NodeClaimPlan[]): number {
  return claims.reduce((sum, c) => sum + (c.instanceTypes[0]?.price ?? 0), 0);
}

/** Sum of the cheapest option prices of the new NodeClaims, USD/hour. */
export function planPrice(results: SchedulingResults): number {
  return sumPrice(results.newNodeClaims);
}

/**
 * Karpenter's own strategy, for comparison and benchmarks: every pod joins the first planned NodeClaim that fits.
 */
export function solveFirstFit(pods: readonly SchedulingPod[], templates: readonly NodePoolTemplate[], existing: readonly ExistingCapacity[]): SchedulingResults {
  return solveWith(pods, templates, existing, Number.POSITIVE_INFINITY, Topology.build(pods, templates, existing));
}

/**
 * One greedy pass. `tolerance` is {@link PACKING_TOLERANCE} for the price-aware pass, or Infinity for
 * Karpenter's pure first-fit packing; {@link solve} runs both and keeps the cheaper plan.
 *
 * Karpenter's retry loop (`scheduler.go Solve`): a pod that cannot be placed has its preferences relaxed one step
 * (see `preferences.ts`) and is tried again after the others; pods that fail fully relaxed are retried while other
 * pods are still being placed (a pod with required affinity to a pod later in the order), until a round places and
 * relaxes nothing.
 */
function solveWith(
  pods: readonly SchedulingPod[],
  templates: readonly NodePoolTemplate[],
  existing: readonly ExistingCapacity[],
  tolerance: number,
  topologyAtStart: Topology,
): SchedulingResults {
  const ordered = [...pods].sort(byCpuAndMemoryDescending);
  const byWeight = [...templates].sort((a, b) => b.weight - a.weight || a.name.localeCompare(b.name));
  const remaining = new Map(byWeight.map((t) => [t.name, t.remaining] as const));
  const topology = topologyAtStart.clone();
  const existingTargets = existing.map((e) => new ExistingTarget(e, topology));
  const planned: PlannedNodeClaim[] = [];
  const placedExisting: { pod: string; target: string }[] = [];
  const unschedulable: UnschedulablePod[] = [];
  const ids = { next: 0 };
  // The last relaxation step (tolerate PreferNoSchedule) changes nothing when no taint has that effect.
  const preferNoSchedule = [...templates.flatMap((t) => t.taints), ...existing.flatMap((e) => e.taints)].some((t) => t.effect === 'PreferNoSchedule');
  const maxLevel = (pod: SchedulingPod) => relaxationSteps(pod) - (preferNoSchedule ? 0 : 1);
  // Identical pods (a Deployment's replicas) ask the same question of a fresh NodeClaim: answer it once while
  // the pool's remaining limits are unchanged. Pods with topology terms depend on counts, so they always ask.
  const freshCache = new Map<string, number | undefined>();
  const diagnoses = new Map<string, UnschedulablePod>();
  const freshPriceOf = (t: NodePoolTemplate, pod: SchedulingPod, rem: ResourceList | undefined): number | undefined => {
    if (topology.keysOf(pod).length > 0) return PlannedNodeClaim.freshPrice(t, pod, rem, topology);
    const key = `${t.name}|${podShape(pod)}|${rem ? JSON.stringify(rem) : ''}`;
    if (!freshCache.has(key)) freshCache.set(key, PlannedNodeClaim.freshPrice(t, pod, rem, topology));
    return freshCache.get(key);
  };

  /** Tries existing capacity, then planned NodeClaims, then a new NodeClaim; true when the pod was placed. */
  const place = (pod: SchedulingPod): boolean => {
    const onExisting = existingTargets.find((t) => t.canAdd(pod).ok);
    if (onExisting) {
      onExisting.add(pod);
      placedExisting.push({ pod: pod.key, target: onExisting.name });
      return true;
    }
    // Karpenter (tolerance ∞): join the first planned NodeClaim that fits, fewest pods first.
    // Price-aware: join the planned NodeClaim whose price rises least, unless a new NodeClaim from the first
    // NodePool (by weight) that can take the pod costs less than that rise. Ties keep packing (fewer nodes).
    const firstFit = tolerance === Number.POSITIVE_INFINITY;
    const candidates = firstFit ? [...planned].sort((a, b) => a.pods.length - b.pods.length) : planned;
    let best: { claim: PlannedNodeClaim; marginal: number } | undefined;
    for (const claim of candidates) {
      const marginal = claim.marginalPrice(pod, remaining.get(claim.template.name));
      if (marginal === undefined) continue;
      if (!best || marginal < best.marginal || (marginal === best.marginal && claim.pods.length < best.claim.pods.length)) best = { claim, marginal };
      if (firstFit || marginal <= 0) break;
    }
    if (best && (firstFit || best.marginal <= 0)) return best.claim.tryAdd(pod, remaining);
    const freshTemplate = byWeight.find((t) => freshPriceOf(t, pod, remaining.get(t.name)) !== undefined);
    const freshPrice = freshTemplate ? freshPriceOf(freshTemplate, pod, remaining.get(freshTemplate.name))! : undefined;
    if (best && (freshPrice === undefined || best.marginal <= freshPrice * tolerance)) return best.claim.tryAdd(pod, remaining);
    if (!freshTemplate) return false;
    const fresh = PlannedNodeClaim.start(freshTemplate, pod, remaining.get(freshTemplate.name), topology, `nodeclaim-${ids.next++}`);
    if (!fresh) return false;
    planned.push(fresh);
    remaining.set(fresh.template.name, fresh.reserve(remaining.get(fresh.template.name)));
    return true;
  };

  let queue = ordered.map((pod) => ({ pod, level: 0 }));
  while (queue.length > 0) {
    const next: { pod: SchedulingPod; level: number }[] = [];
    let progress = false;
    for (const item of queue) {
      if (place(view(item.pod, item.level))) {
        progress = true;
      } else if (item.level < maxLevel(item.pod)) {
        next.push({ pod: item.pod, level: item.level + 1 });
        progress = true;
      } else {
        next.push(item);
      }
    }
    queue = next;
    if (!progress) break;
  }
  for (const { pod, level } of queue) {
    const relaxed = view(pod, level);
    // Identical pods get identical reasons: diagnose once per pod shape and limits state.
    const key = `${podShape(relaxed)}|${JSON.stringify([...remaining])}`;
    let why = topology.keysOf(relaxed).length > 0 ? undefined : diagnoses.get(key);
    if (!why) {
      why = diagnose(relaxed, byWeight, remaining, { topology: (p, t) => PlannedNodeClaim.rejection(t, p, remaining.get(t.name), topology)?.reason });
      diagnoses.set(key, why);
    }
    unschedulable.push({ ...why, pod: pod.key });
  }

  return { newNodeClaims: planned.map((c) => c.finalize()), existing: placedExisting, unschedulable };
}

/** A requirement alternative's string form, computed once per object. */
const alternativeKeys = new WeakMap<Requirements, string>();
function alternativeKey(r: Requirements): string {
  let key = alternativeKeys.get(r);
  if (key === undefined) {
    key = r.toString();
    alternativeKeys.set(r, key);
  }
  return key;
}

/**
 * What makes two pods interchangeable for a fresh NodeClaim: requests, requirement alternatives, tolerations, host
 * ports, PreferNoSchedule avoidance. Pods with topology terms are never answered from a cache.
 */
const shapes = new WeakMap<SchedulingPod, string>();
function podShape(pod: SchedulingPod): string {
  let shape = shapes.get(pod);
  if (shape === undefined) {
    shape = JSON.stringify([pod.requests, pod.requirementAlternatives.map(String), pod.tolerations, pod.hostPorts, pod.avoidPreferNoSchedule, pod.topology.length]);
    shapes.set(pod, shape);
  }
  return shape;
}

/** Karpenter's pod order: cpu desc, memory desc, then creation time and name for stability. */
export function byCpuAndMemoryDescending(a: SchedulingPod, b: SchedulingPod): number {
  return (
    (b.requests.cpu ?? 0) - (a.requests.cpu ?? 0) ||
    (b.requests.memory ?? 0) - (a.requests.memory ?? 0) ||
    a.createdMs - b.createdMs ||
    a.key.localeCompare(b.key)
  );
}

/** An existing node or in-flight NodeClaim during a solve. */
class ExistingTarget {
  readonly name: string;
  private readonly requirementsOfNode: Readonly<Record<string, string>>;
  private available: ResourceList;
  private readonly hostPorts: Set<string>;

  constructor(
    private readonly capacity: ExistingCapacity,
    private readonly topology: Topology,
  ) {
    this.name = capacity.name;
    this.requirementsOfNode = capacity.labels;
    this.available = capacity.available;
    this.hostPorts = new Set(capacity.hostPorts);
  }

  canAdd(pod: SchedulingPod): Acceptance<object> | Rejection {
    const taint = firstUntolerated(this.capacity.taints, pod.tolerations, pod.avoidPreferNoSchedule);
    if (taint) return { ok: false, reason: `taint ${formatTaint(taint)} is not tolerated` };
    if (!pod.requirementAlternatives.some((r) => r.isSatisfiedBy(this.requirementsOfNode))) {
      return { ok: false, reason: `node labels do not satisfy ${pod.requirementAlternatives[0]}` };
    }
    if (!fits(pod.requests, this.available)) return { ok: false, reason: `not enough ${exceeding(pod.requests, this.available).join(', ')}` };
    const port = pod.hostPorts.find((p) => this.hostPorts.has(p));
    if (port) return { ok: false, reason: `host port ${port} is in use` };
    for (const key of this.topology.keysOf(pod)) {
      const d = domainOfTarget(this.capacity, key);
      const verdict = this.topology.allowed(pod, key, d === undefined ? [] : [d]);
      if (!verdict.ok) return { ok: false, reason: verdict.reason };
    }
    return { ok: true };
  }

  add(pod: SchedulingPod): void {
    this.available = subtract(this.available, pod.requests);
    for (const p of pod.hostPorts) this.hostPorts.add(p);
    this.topology.record(pod, (key) => domainOfTarget(this.capacity, key));
  }
}

/** The one value a requirement allows, or undefined when it allows none, several or a complement. */
function singleValue(r: Requirement): string | undefined {
  return !r.complement && r.values.size === 1 ? r.values.values().next().value : undefined;
}

/** An instance type with the price of its cheapest offering a NodeClaim's requirements allow (USD/hour). */
interface PricedType {
  readonly type: InstanceType;
  readonly price: number;
}

/**
 * The instance types `requirements` allow, with an available offering, priced and sorted cheapest first
 * (ties by name). The order lets the cheapest type that fits some requests be found by a short scan.
 */
function pricedOptions(types: readonly (InstanceType | PricedType)[], requirements: Requirements): PricedType[] {
  const out: PricedType[] = [];
  for (const x of types) {
    const type = 'type' in x ? x.type : x;
    if (requirements.intersects(type.requirements) !== undefined) continue;
    const offering = cheapestOffering(type, requirements);
    if (offering) out.push({ type, price: offering.price });
  }
  return out.sort((a, b) => a.price - b.price || a.type.name.localeCompare(b.type.name));
}

/** Options of a template, priced under its own requirements, computed once per template object. */
const templateOptions = new WeakMap<NodePoolTemplate, PricedType[]>();
function optionsOf(template: NodePoolTemplate): PricedType[] {
  let options = templateOptions.get(template);
  if (!options) {
    options = pricedOptions(template.instanceTypes, template.requirements);
    templateOptions.set(template, options);
  }
  return options;
}

/** A NodeClaim being planned in this solve. */
class PlannedNodeClaim {
  readonly pods: SchedulingPod[] = [];
  private reserved: ResourceList = {};
  /** Options narrowed by a pod requirement alternative (before resource filtering), keyed by the alternative. */
  private narrowed = new Map<string, { requirements: Requirements; options: PricedType[] }>();

  private constructor(
    readonly template: NodePoolTemplate,
    private requirements: Requirements,
    /** Every option that fits the claim's pods, cheapest first. */
    private options: readonly PricedType[],
    private requests: ResourceList,
    private readonly hostPorts: Set<string>,
    private readonly topology: Topology,
    /** Its hostname domain while it has no node. */
    readonly id: string,
  ) {
    this.updateRoom();
    this.minValues = template.requirements.values().some((r) => r.minValues !== undefined);
  }

  /** Whether any requirement of the pool sets `minValues` (checked on every add). */
  private readonly minValues: boolean;

  /** A new NodeClaim from `template` holding `pod`, or undefined when the pod does not fit a fresh node of the pool. */
  static start(template: NodePoolTemplate, pod: SchedulingPod, remaining: ResourceList | undefined, topology: Topology, id: string): PlannedNodeClaim | undefined {
    const options = optionsOf(template);
    const candidate = new PlannedNodeClaim(
      template,
      template.requirements,
      remaining ? options.filter((o) => withinLimits(add(o.type.capacity, { nodes: 1 }), remaining)) : options,
      template.daemonOverhead,
      new Set(),
      topology,
      id,
    );
    return candidate.tryAdd(pod, undefined) ? candidate : undefined;
  }

  /**
   * The price (USD/hour) of a fresh NodeClaim from `template` for `pod` alone, or undefined when none fits.
   * Same answer as `start(...).price()` without building the claim.
   */
  static freshPrice(template: NodePoolTemplate, pod: SchedulingPod, remaining: ResourceList | undefined, topology: Topology): number | undefined {
    return PlannedNodeClaim.probe(template, topology).cheapestFit(pod, remaining);
  }

  /** Why a fresh NodeClaim from `template` cannot take `pod`, or undefined when it can. */
  static rejection(template: NodePoolTemplate, pod: SchedulingPod, remaining: ResourceList | undefined, topology: Topology): Rejection | undefined {
    const check = PlannedNodeClaim.probe(template, topology).canAdd(pod, remaining);
    return check.ok ? undefined : check;
  }

  private static probe(template: NodePoolTemplate, topology: Topology): PlannedNodeClaim {
    return new PlannedNodeClaim(template, template.requirements, optionsOf(template), template.daemonOverhead, new Set(), topology, 'a new node');
  }

  /** Check then commit: adds `pod` if it fits, updating the pool's remaining limits. */
  tryAdd(pod: SchedulingPod, remaining: Map<string, ResourceList | undefined> | undefined): boolean {
    const check = this.canAdd(pod, remaining?.get(this.template.name));
    if (!check.ok) return false;
    if (check.requirements !== this.requirements) this.narrowed = new Map();
    this.requirements = check.requirements;
    this.options = check.options;
    this.requests = check.requests;
    this.updateRoom();
    for (const p of pod.hostPorts) this.hostPorts.add(p);
    this.pods.push(pod);
    if (check.domains) this.topology.record(pod, (key) => check.domains!.get(key));
    if (remaining) remaining.set(this.template.name, this.reserve(remaining.get(this.template.name)));
    return true;
  }

  /**
   * Whether `pod` can join, and the narrowed requirements and options if so. Never mutates the claim's plan.
   * @param remaining what the pool's limits still allow besides this claim's own reservation; options that would
   *   not fit in it together with that reservation are dropped, so growing a claim never overruns a limit
   */
  canAdd(
    pod: SchedulingPod,
    remaining?: ResourceList,
  ): Acceptance<{ requirements: Requirements; options: PricedType[]; requests: ResourceList; domains?: ReadonlyMap<string, string> }> | Rejection {
    const gate = this.gate(pod);
    if (gate) return gate;
    const keys = this.topology.keysOf(pod);
    // Domains the claim is already pinned to (and its own hostname) are checked before any instance type work.
    for (const key of keys) {
      const pinned = key === LABEL_HOSTNAME ? this.id : singleValue(this.requirements.get(key));
      if (pinned === undefined) continue;
      const verdict = this.topology.allowed(pod, key, [pinned]);
      if (!verdict.ok) return { ok: false, reason: verdict.reason };
    }
    const budget = this.budget(remaining);
    const requests = add(this.requests, pod.requests);
    let firstRejection: Rejection | undefined;
    for (const alternative of pod.requirementAlternatives) {
      const narrowed = this.narrow(alternative);
      if (!narrowed.ok) {
        firstRejection ??= narrowed;
        continue;
      }
      let options = narrowed.options.filter((o) => fits(requests, o.type.allocatable) && (!budget || withinLimits(add(o.type.capacity, { nodes: 1 }), budget)));
      if (options.length === 0) {
        firstRejection ??= { ok: false, reason: 'no instance type fits' };
        continue;
      }
      const daemons = this.clashingDaemons(pod);
      if (daemons.length > 0) {
        options = options.filter((o) => !daemons.some((d) => d.requirements.some((alt) => alt.intersects(o.type.requirements) === undefined && alt.intersects(narrowed.requirements) === undefined)));
        if (options.length === 0) {
          firstRejection ??= { ok: false, reason: `host port ${daemons[0]!.port} is bound by DaemonSet ${daemons[0]!.daemonSet} on every instance type that fits` };
          continue;
        }
      }
      const placed = keys.length === 0 ? { ok: true as const, requirements: narrowed.requirements, options, domains: undefined } : this.placeTopology(pod, keys, narrowed.requirements, options);
      if (!placed.ok) {
        firstRejection ??= placed;
        continue;
      }
      const shortfall = this.minValues && minValuesShortfall(placed.requirements, placed.options);
      if (shortfall) {
        firstRejection ??= { ok: false, reason: shortfall };
        continue;
      }
      return { ok: true, requirements: placed.requirements, options: placed.options, requests, ...(placed.domains ? { domains: placed.domains } : {}) };
    }
    return firstRejection ?? { ok: false, reason: NO_TERM_MATCHES };
  }

  /**
   * Chooses the claim's domain for every topology key `pod` is involved in: the claim is pinned to one value of
   * each key (the least-loaded allowed domain for a spread constraint, then the cheapest), so counts stay exact.
   */
  private placeTopology(
    pod: SchedulingPod,
    keys: readonly string[],
    requirements: Requirements,
    options: PricedType[],
  ): Acceptance<{ requirements: Requirements; options: PricedType[]; domains: ReadonlyMap<string, string> }> | Rejection {
    const domains = new Map<string, string>();
    for (const key of keys) {
      if (key === LABEL_HOSTNAME) {
        const verdict = this.topology.allowed(pod, key, [this.id]);
        if (!verdict.ok) return { ok: false, reason: verdict.reason };
        domains.set(key, this.id);
        continue;
      }
      const pinned = singleValue(requirements.get(key));
      if (pinned !== undefined) {
        const verdict = this.topology.allowed(pod, key, [pinned]);
        if (!verdict.ok) return { ok: false, reason: verdict.reason };
        domains.set(key, pinned);
        continue;
      }
      const candidates = domainValues(
        key,
        requirements,
        options.map((o) => o.type),
      );
      const verdict = this.topology.allowed(pod, key, candidates);
      if (!verdict.ok) return { ok: false, reason: verdict.reason };
      let best: { domain: string; load: number; requirements: Requirements; options: PricedType[] } | undefined;
      for (const domain of verdict.allowed) {
        const load = this.topology.spreadLoad(pod, key, domain);
        if (best && load > best.load) continue;
        const pinned = requirements.add(Requirement.in(key, [domain]));
        const pinnedOptions = pricedOptions(options, pinned);
        if (pinnedOptions.length === 0) continue;
        if (!best || load < best.load || pinnedOptions[0]!.price < best.options[0]!.price) best = { domain, load, requirements: pinned, options: pinnedOptions };
      }
      if (verdict.allowed.length === 0) continue;
      if (!best) return { ok: false, reason: `no instance type that fits is offered in ${verdict.allowed.join(', ')} (${key})` };
      requirements = best.requirements;
      options = best.options;
      domains.set(key, best.domain);
    }
    return { ok: true, requirements, options, domains };
  }

  /** The cheapest price (USD/hour) the claim could launch at with `pod` added, or undefined if it cannot join. */
  cheapestFit(pod: SchedulingPod, remaining?: ResourceList): number | undefined {
    if (!fits(pod.requests, this.room)) return undefined;
    if (this.minValues || this.clashingDaemons(pod).length > 0 || this.topology.keysOf(pod).length > 0) {
      const check = this.canAdd(pod, remaining);
      return check.ok ? check.options[0]?.price : undefined;
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
  private room: ResourceList = {};

  private updateRoom(): void {
    this.room = subtract(max(...this.options.map((o) => o.type.allocatable)), this.requests);
  }

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
    const port = pod.hostPorts.find((p) => this.hostPorts.has(p));
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
    if (alternative.keys().length === 0) return { ok: true, requirements: this.requirements, options: this.options as PricedType[] };
    const key = alternativeKey(alternative);
    let hit = this.narrowed.get(key);
    if (!hit) {
      const requirements = this.requirements.intersect(alternative);
      // A pod that only repeats what the claim already requires (its NodePool's label, say) narrows nothing.
      hit = requirements.toString() === this.requirementsKey() ? { requirements: this.requirements, options: this.options as PricedType[] } : { requirements, options: pricedOptions(this.options, requirements) };
      this.narrowed.set(key, hit);
    }
    return { ok: true, ...hit };
  }

  private requirementsKeyCache: { of: Requirements; key: string } | undefined;
  private requirementsKey(): string {
    if (this.requirementsKeyCache?.of !== this.requirements) this.requirementsKeyCache = { of: this.requirements, key: this.requirements.toString() };
    return this.requirementsKeyCache.key;
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

  finalize(): NodeClaimPlan {
    const options = this.options.slice(0, MAX_INSTANCE_TYPES).map((o) => ({ name: o.type.name, price: o.price }));
    return {
      nodePool: this.template.name,
      nodeClass: this.template.nodeClass,
      requirements: this.requirements.add(Requirement.in(LABEL_INSTANCE_TYPE, options.map((o) => o.name))),
      instanceTypes: options,
      pods: this.pods.map((p) => p.key),
      requests: this.requests,
      labels: { ...this.template.labels, ...this.requirements.labels() },
      taints: this.template.taints,
      startupTaints: this.template.startupTaints,
    };
  }
}

