/**
 * The provisioning solver: places pending pods on existing capacity, then on new NodeClaims from NodePool templates.
 *
 * Semantics follow Karpenter's scheduler (kubernetes-sigs/karpenter `pkg/controllers/provisioning/scheduling/`,
 * summarised in docs/karpenter-semantics.md#placement-order):
 * - pods are solved in order cpu desc, memory desc, creation time, name (`queue.go byCPUAndMemoryDescending`);
 * - each pod tries existing nodes and in-flight NodeClaims first (free capacity), then NodeClaims planned in this
 *   solve, then a new NodeClaim from the first NodePool by descending weight (equal weights by name descending,
 *   {@link orderByWeight}) that can take it;
 * - a pod that cannot be placed has its preferences relaxed one step at a time (`preferences.ts`) and is retried;
 * - a NodeClaim keeps every instance type that still fits all of its pods plus daemonset overhead and has an
 *   available offering its requirements allow; the list is cheapest first and truncated to 600
 *   (`MaxInstanceTypes`), so each NodeClaim launches as the cheapest type that holds it (right-sizing);
 * - NodePool limits: instance types whose capacity exceeds what the limit still allows are not considered, and
 *   each planned NodeClaim reserves its cheapest option's capacity (Karpenter reserves the largest,
 *   `subtractMax`); a NodeClaim never grows past what the limit allows, and the controller re-checks limits
 *   against actual usage before each launch.
 * Where Karpenter joins the first planned NodeClaim that fits (first-fit, kept as {@link solveFirstFit}), Skiff packs
 * for price ({@link solve}): pods bound by topology are placed one by one into NodeClaims filled up to the instance
 * type with the best price per unit of the remaining demand, and the other pods are packed in bulk (vector bin
 * packing over runs of identical pods). Bulk placement checks exactly what placing the pods one by one checks.
 * Check, then commit: every target offers `canAdd(pod)` (no mutation, returns why not) and `add()`/`commit()`.
 * Unschedulable pods are returned as data with the reason each NodePool cannot serve them.
 */
import { LABEL_CAPACITY_TYPE, LABEL_HOSTNAME, LABEL_INSTANCE_TYPE, LABEL_ZONE, WELL_KNOWN_LABELS } from '../api/labels.js';
import { cheapestOffering, type InstanceType } from '../instancetypes/offering.js';
import { add, exceeding, fitCount, fits, fitsSum, max, scale, subtract, subtractOnKeysOf, type ResourceList } from '../resources/resource-list.js';
import { Requirement } from '../scheduling/requirement.js';
import { describeIncompatibility, Requirements, type Incompatibility } from '../scheduling/requirements.js';
import { firstUntolerated, formatTaint } from '../scheduling/taints.js';
import { resolveCustomLabels } from './custom-labels.js';
import { diagnose, NO_TERM_MATCHES } from './diagnosis.js';
import { withinLimits } from './limits.js';
import { minValuesShortfall } from './min-values.js';
import { packClasses } from './packing.js';
import type { SchedulingPod } from './pod.js';
import { relaxationSteps, view } from './preferences.js';
import { domainOfTarget, domainValues, Topology } from './topology.js';
import {
  DEFAULT_SOLVE_TIMEOUT_MS,
  PORTFOLIO_MAX_PODS,
  type Acceptance,
  type DaemonHostPort,
  type ExistingCapacity,
  type NodeClaimPlan,
  type NodePoolTemplate,
  type Rejection,
  type SchedulingResults,
  type SolveOptions,
  type UnschedulablePod,
} from './types.js';

/**
 * A pod joins a planned NodeClaim when the claim's price rise is at most this factor × the price of a new
 * NodeClaim for it. Above 1 so that noise in per-type (spot) prices does not split pods that pack well; every
 * extra node also carries its own daemonset and system overhead.
 */
export const PACKING_TOLERANCE = 1.1;

/** Karpenter's `MaxInstanceTypes`: the most instance types a NodeClaim carries. */
export const MAX_INSTANCE_TYPES = 600;

/**
 * A planned NodeClaim that would have to grow (change to a dearer instance type) to take a pod is one of at most
 * this many such candidates evaluated per pod, in creation order; claims it fits for free are always looked for.
 */
export const MAX_GROWTH_CANDIDATES = 4;

/** A pod placed one at a time looks at most at this many planned NodeClaims, newest first. */
export const MAX_VISITED_CLAIMS = 64;

/** A solve's deadline from {@link SolveOptions}. */
class Deadline {
  private readonly at: number;
  private passed = false;

  constructor(private readonly options: SolveOptions) {
    this.at = options.now ? options.now() + (options.timeoutMs ?? DEFAULT_SOLVE_TIMEOUT_MS) : Number.POSITIVE_INFINITY;
  }

  /** True once the clock has reached the deadline (stays true). */
  expired(): boolean {
    if (!this.passed && this.options.now && this.options.now() >= this.at) this.passed = true;
    return this.passed;
  }
}

/**
 * Solves one batch: places pending pods on existing capacity, then on new NodeClaims, cheapest fleet first.
 *
 * Pods whose placement depends on topology (they have topology terms or are counted by one), host ports or several
 * required node affinity terms are placed one at a time in Karpenter's order with its retry and relaxation loop.
 * The other pods are then placed in bulk, per run of identical pods (same requests, requirements and tolerations)
 * in the same order: existing capacity first, then room planned NodeClaims hold for free, then new NodeClaims of the
 * highest-weight NodePool that can take them. The runs that share a NodePool and requirements are packed together
 * by column generation (`packing.ts`: an LP over packing patterns, priced by knapsacks over every instance type some
 * run fits, rounded to whole NodeClaims); groups of more than {@link MAX_PACKING_CLASSES} runs are filled up to
 * one target type instead. Every NodeClaim is then offered as its cheapest type that still fits (right-sizing).
 * Bulk placement checks exactly what placing the pods one by one checks. Small batches ({@link PORTFOLIO_MAX_PODS})
 * also run solver v1's passes and keep the best plan.
 * @param pods pending pods (any order; the solver sorts them)
 * @param templates NodePools with their instance types
 * @param existing nodes and in-flight NodeClaims with their free room
 * @param options deadline (see {@link SolveOptions}); optional
 * @example
 * const results = solve(pods, templates, existing, { now: () => performance.now(), timeoutMs: 10_000 });
 * for (const plan of results.newNodeClaims) launch(plan);
 */
export function solve(pods: readonly SchedulingPod[], templates: readonly NodePoolTemplate[], existing: readonly ExistingCapacity[], options: SolveOptions = {}): SchedulingResults {
  const deadline = new Deadline(options);
  const topology = Topology.build(pods, templates, existing);
  const packed = solvePacked(pods, templates, existing, topology, deadline);
  if (pods.length > (options.portfolioMaxPods ?? PORTFOLIO_MAX_PODS) || deadline.expired()) return packed;
  return better(packed, solveLegacy(pods, templates, existing, topology, deadline));
}

/** The better of two plans: more pods placed, then cheaper, then fewer NodeClaims; ties keep `a`. */
function better(a: SchedulingResults, b: SchedulingResults): SchedulingResults {
  if (a.unschedulable.length !== b.unschedulable.length) return a.unschedulable.length < b.unschedulable.length ? a : b;
  const [pa, pb] = [planPrice(a), planPrice(b)];
  if (Math.abs(pa - pb) > 1e-9) return pa < pb ? a : b;
  return b.newNodeClaims.length < a.newNodeClaims.length ? b : a;
}

/**
 * Solver v1: the price-aware and first-fit greedy passes, keeping per NodePool the cheaper plan.
 */
function solveLegacy(pods: readonly SchedulingPod[], templates: readonly NodePoolTemplate[], existing: readonly ExistingCapacity[], topology: Topology, deadline: Deadline): SchedulingResults {
  const priceAware = solveWith(pods, templates, existing, PACKING_TOLERANCE, topology);
  if (priceAware.newNodeClaims.length <= 1 || deadline.expired()) return priceAware;
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

/**
 * NodePools in the order the solver tries them for a new NodeClaim: weight descending, equal weights by name
 * descending (byte order). Core `pkg/utils/nodepool/nodepool.go` `OrderByWeight`.
 * @returns a new array; `templates` is not changed
 */
export function orderByWeight<T extends { readonly name: string; readonly weight: number }>(templates: readonly T[]): T[] {
  return [...templates].sort((a, b) => b.weight - a.weight || (a.name === b.name ? 0 : a.name > b.name ? -1 : 1));
}

/**
 * The NodePool a new NodeClaim opened for `pod` comes from: the first of `templates` in {@link orderByWeight} order
 * whose fresh NodeClaim takes the pod as it first asks (every preference still required, level 0 of
 * `preferences.ts`), counting topology over `batch` and `existing`. Karpenter's scheduler tries the NodeClaim
 * templates in that order and opens the NodeClaim from the first that fits (core
 * `pkg/controllers/provisioning/scheduling/scheduler.go` `addToNewNodeClaim`; the templates are ordered in
 * `NewScheduler`).
 * @param pod the pod, unrelaxed
 * @param batch every pod of the solve (topology counters)
 * @param existing the capacity the solve places on (topology domains and counts)
 * @returns the template, or undefined when no NodePool's fresh NodeClaim takes the pod
 */
export function firstNodePoolFor(pod: SchedulingPod, batch: readonly SchedulingPod[], templates: readonly NodePoolTemplate[], existing: readonly ExistingCapacity[]): NodePoolTemplate | undefined {
  const topology = Topology.build(batch, templates, existing);
  for (const template of orderByWeight(templates)) if (!PlannedNodeClaim.rejection(template, view(pod, 0), template.remaining, topology)) return template;
  return undefined;
}

/** Candidates a class of interchangeable pods still has: targets that have not refused it for good. */
interface ClassCandidates {
  /** Planned NodeClaims in creation order; refused-for-good ones are set to undefined and compacted lazily. */
  claims: (PlannedNodeClaim | undefined)[];
  dead: number;
  /** How many of the solve's planned NodeClaims were appended to `claims`. */
  seen: number;
}

/**
 * The packing solver (see {@link solve}): topology-bound pods greedily in Karpenter's order, then the rest in bulk.
 */
function solvePacked(pods: readonly SchedulingPod[], templates: readonly NodePoolTemplate[], existing: readonly ExistingCapacity[], topologyAtStart: Topology, deadline: Deadline): SchedulingResults {
  const ordered = [...pods].sort(byCpuAndMemoryDescending);
  const byWeight = orderByWeight(templates);
  const remaining = new Map(byWeight.map((t) => [t.name, t.remaining] as const));
  const topology = topologyAtStart.clone();
  const existingTargets = existing.map((e) => new ExistingTarget(e, topology));
  const planned: PlannedNodeClaim[] = [];
  const placedExisting: { pod: string; target: string }[] = [];
  const unplaced: { pod: SchedulingPod; level: number }[] = [];
  let nextId = 0;
  const preferNoSchedule = [...templates.flatMap((t) => t.taints), ...existing.flatMap((e) => e.taints)].some((t) => t.effect === 'PreferNoSchedule');
  const maxLevel = (pod: SchedulingPod) => relaxationSteps(pod) - (preferNoSchedule ? 0 : 1);
  // A pod without preferences is its own view while no taint is PreferNoSchedule: its views would differ only in
  // avoiding such taints, so a bulk pass copies no pod.
  const viewOf = (pod: SchedulingPod, level: number) => (!preferNoSchedule && relaxationSteps(pod) === 1 ? pod : view(pod, level));
  const probeOf = (t: NodePoolTemplate) => PlannedNodeClaim.probe(t, topology);
  /** The first NodePool by weight whose fresh NodeClaim takes `count` × `pod`, with the check. */
  const freshFor = (pod: SchedulingPod, count = 1): { template: NodePoolTemplate; check: Accepted } | undefined => {
    for (const template of byWeight) {
      const check = probeOf(template).canAdd(pod, remaining.get(template.name), count);
      if (check.ok) return { template, check };
    }
    return undefined;
  };
  const open = (template: NodePoolTemplate, check: Accepted, group: readonly SchedulingPod[]): PlannedNodeClaim => {
    const claim = PlannedNodeClaim.open(template, check, group, topology, `nodeclaim-${nextId++}`, remaining);
    planned.push(claim);
    return claim;
  };

  // Phase 1: pods whose placement depends on topology, host ports or alternative terms, one by one.
  const simple = (pod: SchedulingPod): boolean =>
    pod.hostPorts.length === 0 &&
    pod.requirementAlternatives.length === 1 &&
    pod.topology.length === 0 &&
    pod.preferences.podAffinity.length + pod.preferences.podAntiAffinity.length + pod.preferences.scheduleAnyway.length === 0 &&
    topology.keysOf(pod).length === 0;
  const classes = new Map<string, ClassCandidates>();
  // What is left to place (canonical units), per set of requested resource names: a NodeClaim opened for a pod
  // is filled up to the instance type that serves the demand of pods like it most cheaply (see `packingTarget`).
  // Built on the first pod placed one by one (a batch of plain pods never needs it).
  let demandOf: Map<string, Record<string, number>> | undefined;
  const signature = (pod: SchedulingPod) => Object.keys(pod.requests).filter((k) => (pod.requests[k] ?? 0) > 0).sort().join(',');
  const demand = (): Map<string, Record<string, number>> => {
    if (demandOf) return demandOf;
    demandOf = new Map();
    for (const pod of ordered) {
      const sig = signature(pod);
      const d = demandOf.get(sig) ?? {};
      for (const k in pod.requests) d[k] = (d[k] ?? 0) + pod.requests[k]!;
      demandOf.set(sig, d);
    }
    return demandOf;
  };
  const consume = (pod: SchedulingPod, n = 1) => {
    const d = demand().get(signature(pod));
    if (d) for (const k in pod.requests) d[k] = Math.max(0, d[k]! - pod.requests[k]! * n);
  };
  const placeOne = (pod: SchedulingPod): boolean => {
    const onExisting = existingTargets.find((t) => t.canAdd(pod).ok);
    if (onExisting) {
      onExisting.add(pod);
      placedExisting.push({ pod: pod.key, target: onExisting.name });
      consume(pod);
      return true;
    }
    const key = classKey(pod);
    let candidates = classes.get(key);
    // A new class looks at the most recent NodeClaims only (older ones are usually full).
    if (!candidates) classes.set(key, (candidates = { claims: [], dead: 0, seen: Math.max(0, planned.length - MAX_VISITED_CLAIMS) }));
    for (; candidates.seen < planned.length; candidates.seen++) candidates.claims.push(planned[candidates.seen]);
    const list = candidates.claims;
    const growthLimit = deadline.expired() ? 1 : MAX_GROWTH_CANDIDATES;
    // Candidates are priced with `quote`; only the chosen one is checked in full (deterministic: same answer).
    let best: { claim: PlannedNodeClaim; marginal: number } | undefined;
    const growth: { claim: PlannedNodeClaim; at: number }[] = [];
    let visited = 0;
    // Newest first: the NodeClaims still filling up.
    for (let i = list.length - 1; i >= 0 && visited < MAX_VISITED_CLAIMS; i--) {
      const claim = list[i];
      if (!claim) continue;
      visited++;
      const drop = () => {
        list[i] = undefined;
        candidates.dead++;
      };
      if (!fits(pod.requests, claim.room)) {
        drop();
        continue;
      }
      // Claims the pod would make grow past their target are checked only when no claim takes it for free.
      if (!fitsSum(claim.requested(), pod.requests, claim.fillRoom())) {
        if (growth.length < growthLimit) growth.push({ claim, at: i });
        continue;
      }
      const check = claim.quote(pod, remaining.get(claim.template.name));
      if (!check.ok) {
        if (!check.temporary) drop();
        continue;
      }
      if (check.price - claim.ceiling() <= 1e-9) {
        best = { claim, marginal: 0 };
        break;
      }
      if (growth.length < growthLimit) growth.push({ claim, at: i });
    }
    if (!best) {
      for (const { claim, at } of growth) {
        const check = claim.quote(pod, remaining.get(claim.template.name));
        if (!check.ok) {
          if (!check.temporary && list[at] === claim) {
            list[at] = undefined;
            candidates.dead++;
          }
          continue;
        }
        const marginal = check.price - claim.ceiling();
        if (!best || marginal < best.marginal - 1e-12 || (Math.abs(marginal - best.marginal) <= 1e-12 && claim.pods.length < best.claim.pods.length)) best = { claim, marginal };
      }
    }
    if (candidates.dead > 32 && candidates.dead * 2 > list.length) {
      candidates.claims = list.filter((c) => c !== undefined);
      candidates.dead = 0;
    }
    consume(pod);
    const join = (claim: PlannedNodeClaim): true => {
      claim.commit([pod], claim.canAdd(pod, remaining.get(claim.template.name)) as Accepted, remaining);
      return true;
    };
    if (best && best.marginal <= 1e-9) return join(best.claim);
    const fresh = freshFor(pod);
    if (best && (!fresh || best.marginal <= fresh.check.options[0]!.price * PACKING_TOLERANCE)) return join(best.claim);
    if (!fresh) {
      consume(pod, -1);
      return false;
    }
    const claim = open(fresh.template, fresh.check, [pod]);
    const target = packingTarget(fresh.check.options, add(pod.requests, demand().get(signature(pod)) ?? {}), fresh.template.daemonOverhead);
    claim.target = { allocatable: target.type.allocatable, price: target.price };
    return true;
  };
  const isSimple = ordered.map((p) => simple(viewOf(p, 0)));
  unplaced.push(...placeWithRelaxation(ordered.filter((_, i) => !isSimple[i]), placeOne, maxLevel));

  // Phase 2: the other pods in bulk, one run of identical pods at a time, relaxing level by level.
  /** The largest batch (≤ `count`) of `pod` `check` accepts within `ceiling` USD/hour, with its check. */
  const largestBatch = (check: (n: number) => Accepted | Rejection, count: number, ceiling: number): { n: number; check: Accepted } | undefined => {
    const ok = (n: number) => {
      const c = check(n);
      return c.ok && c.options[0]!.price <= ceiling + 1e-9 ? c : undefined;
    };
    const all = ok(count);
    if (all) return { n: count, check: all };
    let [lo, hi] = [0, count];
    let found: Accepted | undefined;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      const c = ok(mid);
      if (c) [lo, found] = [mid, c];
      else hi = mid;
    }
    if (lo === 0) return undefined;
    return { n: lo, check: found ?? ok(lo)! };
  };
  /** Existing capacity first, then room planned NodeClaims hold for free; returns the pods of `run` left over. */
  const fillExisting = (run: readonly SchedulingPod[]): SchedulingPod[] => {
    const pod = run[0]!;
    let i = 0;
    for (const target of existingTargets) {
      if (i >= run.length) break;
      if (!target.canAdd(pod).ok) continue;
      const n = Math.min(run.length - i, target.fitCount(pod.requests));
      for (const p of run.slice(i, i + n)) {
        target.add(p);
        placedExisting.push({ pod: p.key, target: target.name });
      }
      i += n;
    }
    for (const claim of planned) {
      if (i >= run.length) break;
      const n = Math.min(run.length - i, fitCount(pod.requests, claim.freeRoom()));
      if (n <= 0) continue;
      const batch = largestBatch((k) => claim.canAdd(pod, remaining.get(claim.template.name), k), n, claim.ceiling());
      if (!batch) continue;
      claim.commit(run.slice(i, i + batch.n), batch.check, remaining);
      i += batch.n;
    }
    return run.slice(i);
  };
  /**
   * Packs runs of pods that share a NodePool and requirements into new NodeClaims of one target instance type
   * (vector bin packing, dot-product heuristic: each NodeClaim is filled with the pod whose requests best align
   * with the room left, normalised by the target's room). Returns the runs' pods left over.
   */
  /**
   * Commits one planned bin: `plan[c]` pods of each run `c` from `next[c]` on, into a new NodeClaim of `template`
   * no dearer than `target`. In one check when it passes (the pods share requirements, and a fresh NodeClaim of the
   * NodePool accepts each class: what placing them one by one checks), else class by class as far as each fits.
   * Advances `next`; returns whether a NodeClaim was opened and, when the bin passed in one check, that check.
   * @param known the one-check acceptance of an identical bin (same runs, same plan) while the NodePool has no
   *   limits: the check reads only the runs' first pods, the plan and the probe (never mutated), so it would
   *   answer the same and is not repeated
   */
  const commitBin = (
    template: NodePoolTemplate,
    runs: readonly SchedulingPod[][],
    reps: readonly SchedulingPod[],
    next: number[],
    plan: readonly number[],
    target: PricedType,
    known?: Accepted,
  ): { opened: boolean; whole?: Accepted } => {
    const probe = probeOf(template);
    const first = plan.findIndex((n) => n > 0);
    if (first < 0) return { opened: false };
    const all: SchedulingPod[] = [];
    for (let c = first; c < runs.length; c++) for (let i = next[c]!, end = next[c]! + plan[c]!; i < end; i++) all.push(runs[c]![i]!);
    const checkWhole = (): Accepted | Rejection => {
      let plus: ResourceList = {};
      for (let c = first + 1; c < runs.length; c++) if (plan[c]! > 0) plus = add(plus, scale(reps[c]!.requests, plan[c]!));
      return probe.canAdd(reps[first]!, remaining.get(template.name), plan[first]!, plus);
    };
    const whole = known ?? checkWhole();
    if (whole.ok && whole.options[0]!.price <= target.price + 1e-9) {
      open(template, whole, all).target = { allocatable: target.type.allocatable, price: target.price };
      for (let c = 0; c < runs.length; c++) next[c]! += plan[c]!;
      return { opened: true, whole };
    }
    let claim: PlannedNodeClaim | undefined;
    for (let c = 0; c < runs.length; c++) {
      const n = plan[c]!;
      if (n === 0) continue;
      const pod = reps[c]!;
      const pods = runs[c]!.slice(next[c]!, next[c]! + n);
      const into = claim;
      const batch = largestBatch((k) => (into ?? probe).canAdd(pod, remaining.get(template.name), k), n, target.price);
      if (!batch) continue;
      if (into) into.commit(pods.slice(0, batch.n), batch.check, remaining);
      else (claim = open(template, batch.check, pods.slice(0, batch.n))).target = { allocatable: target.type.allocatable, price: target.price };
      next[c]! += batch.n;
    }
    return { opened: claim !== undefined };
  };
  const packGroupOneType = (template: NodePoolTemplate, options: readonly PricedType[], runs: readonly SchedulingPod[][]): SchedulingPod[][] => {
    const overhead = template.daemonOverhead;
    const reps = runs.map((r) => r[0]!);
    const fitting = options.filter((o) => reps.every((p) => fitsSum(overhead, p.requests, o.type.allocatable)));
    // Dense columns over the resources the pods request.
    const keys = [...new Set(reps.flatMap((p) => Object.keys(p.requests).filter((k) => p.requests[k]! > 0)))];
    const d = keys.length;
    const req = new Float64Array(runs.length * d);
    reps.forEach((p, c) => keys.forEach((k, j) => (req[c * d + j] = p.requests[k] ?? 0)));
    const roomOf = (o: PricedType) => Float64Array.from(keys, (k) => Math.max(0, (o.type.allocatable[k] ?? 0) - (overhead[k] ?? 0)));
    const target = packingTargetBySimulation(
      fitting.length > 0 ? fitting : options,
      runs.map((r) => r.length),
      req,
      d,
      roomOf,
      overhead,
      keys,
    );
    const room = roomOf(target);
    const next = runs.map(() => 0);
    for (;;) {
      // Plan one NodeClaim arithmetically.
      const plan = planBin(
        room,
        req,
        d,
        runs.map((r, c) => r.length - next[c]!),
      );
      const planned = plan.reduce((a, b) => a + b, 0);
      if (planned === 0) break;
      if (!commitBin(template, runs, reps, next, plan, target).opened) break;
    }
    return runs.map((run, c) => run.slice(next[c]!)).filter((run) => run.length > 0);
  };
  /**
   * Packs runs of pods that share a NodePool and requirements into new NodeClaims by column generation
   * (`packing.ts`): each run is a class, each option an instance type with its room after daemonset overhead. Every
   * bin is committed with one check of the NodePool's probe (what placing its pods one by one checks), else class by
   * class; returns the runs' pods left over. Groups of more than {@link MAX_PACKING_CLASSES} runs pack into one
   * target type instead (`packGroupOneType`).
   */
  const packGroup = (template: NodePoolTemplate, options: readonly PricedType[], runs: readonly SchedulingPod[][]): SchedulingPod[][] => {
    if (runs.length > MAX_PACKING_CLASSES) return packGroupOneType(template, options, runs);
    const overhead = template.daemonOverhead;
    const reps = runs.map((r) => r[0]!);
    const keys = [...new Set(reps.flatMap((p) => Object.keys(p.requests).filter((k) => p.requests[k]! > 0)))];
    const packing = packClasses(
      runs.map((run, c) => ({ requests: keys.map((k) => reps[c]!.requests[k] ?? 0), count: run.length })),
      options.map((o) => ({ room: keys.map((k) => Math.max(0, (o.type.allocatable[k] ?? 0) - (overhead[k] ?? 0))), price: o.price })),
    );
    const next = runs.map(() => 0);
    for (const bin of packing.bins) {
      const target = options[bin.option]!;
      // Copies of a bin are checked once while the NodePool has no limits (see `commitBin`).
      let previous: { plan: readonly number[]; whole: Accepted } | undefined;
      for (let copy = 0; copy < bin.copies; copy++) {
        // The bin's own counts while every run still has them (the plan is only read).
        const plan = bin.counts.every((k, c) => k <= runs[c]!.length - next[c]!) ? bin.counts : bin.counts.map((k, c) => Math.min(k, runs[c]!.length - next[c]!));
        if (plan.every((n) => n === 0)) break;
        const same = previous !== undefined && remaining.get(template.name) === undefined && (plan === previous.plan || plan.every((n, c) => n === previous!.plan[c]));
        const { whole } = commitBin(template, runs, reps, next, plan, target, same ? previous!.whole : undefined);
        previous = whole ? { plan, whole } : undefined;
      }
    }
    return runs.map((run, c) => run.slice(next[c]!)).filter((run) => run.length > 0);
  };
  /** Per NodePool and requirements: the instance type fallback NodeClaims pack into, chosen once. */
  const targets = new Map<string, PricedType>();
  /** Fallback: new NodeClaims for one run, from the first NodePool that takes its pods; returns what is left. */
  const openBins = (run: readonly SchedulingPod[]): SchedulingPod[] => {
    const pod = run[0]!;
    let i = 0;
    while (i < run.length) {
      const fresh = freshFor(pod);
      if (!fresh) break;
      const probe = probeOf(fresh.template);
      const left = run.length - i;
      const group = `${fresh.template.name}|${alternativeKey(pod.requirementAlternatives[0]!)}`;
      const chosen = targets.get(group);
      let target = chosen && fresh.check.options.find((o) => o.type === chosen.type);
      if (!target) {
        target = packingTarget(fresh.check.options, scale(pod.requests, left), fresh.template.daemonOverhead);
        targets.set(group, target);
      }
      const n = Math.max(1, Math.min(left, fitCount(pod.requests, subtract(target.type.allocatable, fresh.template.daemonOverhead))));
      const batch = largestBatch((k) => probe.canAdd(pod, remaining.get(fresh.template.name), k), n, target.price) ?? { n: 1, check: fresh.check };
      const claim = open(fresh.template, batch.check, run.slice(i, i + batch.n));
      claim.target = { allocatable: target.type.allocatable, price: target.price };
      i += batch.n;
    }
    return run.slice(i);
  };
  let pending = ordered.filter((_, i) => isSimple[i]);
  for (let level = 0; pending.length > 0; level++) {
    const views = pending.map((p) => viewOf(p, level));
    const runs: SchedulingPod[][] = [];
    for (const v of views) {
      const last = runs[runs.length - 1];
      if (last && sameShape(last[0]!, v)) last.push(v);
      else runs.push([v]);
    }
    const failed: SchedulingPod[] = [];
    const groups = new Map<string, { template: NodePoolTemplate; options: Set<PricedType>; runs: SchedulingPod[][] }>();
    for (const run of runs) {
      const left = fillExisting(run);
      if (left.length === 0) continue;
      const fresh = freshFor(left[0]!);
      if (!fresh) {
        failed.push(...left);
        continue;
      }
      const key = `${fresh.template.name}|${alternativeKey(left[0]!.requirementAlternatives[0]!)}`;
      const group = groups.get(key);
      if (group) {
        group.runs.push(left);
        for (const o of fresh.check.options) group.options.add(o);
      } else groups.set(key, { template: fresh.template, options: new Set(fresh.check.options), runs: [left] });
    }
    // Options: every type some run of the group fits (the smallest pods can use types the largest cannot).
    for (const group of groups.values()) for (const rest of packGroup(group.template, [...group.options].sort(byPrice), group.runs)) failed.push(...openBins(rest));
    const base = failed.length > 0 ? new Map(pending.map((p) => [p.key, p])) : undefined;
    pending = [];
    for (const v of failed) {
      const pod = base!.get(v.key)!;
      if (level < maxLevel(pod)) pending.push(pod);
      else unplaced.push({ pod, level });
    }
  }

  const unschedulable = diagnoseUnplaced(unplaced.sort((a, b) => byCpuAndMemoryDescending(a.pod, b.pod)), byWeight, remaining, topology);
  return { newNodeClaims: finalizeAll(planned), existing: placedExisting, unschedulable };
}

/** The plans of a pass's NodeClaims, sharing identical instance-type lists. */
function finalizeAll(planned: readonly PlannedNodeClaim[]): NodeClaimPlan[] {
  const lists: FinalLists = new Map();
  return planned.map((c) => c.finalize(lists));
}

/** Tolerance of the packing arithmetic (as `fits`). */
const PACK_EPSILON = 1e-6;

/**
 * One bin of vector bin packing, planned arithmetically with the dot-product heuristic (Panigrahy et al.,
 * "Heuristics for Vector Bin Packing", 2011): repeatedly add pods of the class whose requests, normalised by the
 * room, align best with the room left — a few at a time (an eighth of what still fits), then re-align.
 * @param room room of the bin per column (canonical units)
 * @param req requests per class and column, row-major (`req[c * d + j]`)
 * @param d number of columns
 * @param left pods left per class
 * @returns pods planned per class
 */
function planBin(room: Float64Array, req: Float64Array, d: number, left: readonly number[]): number[] {
  const weight = Float64Array.from(room, (r) => (r > 0 ? 1 / (r * r) : 0));
  const rem = Float64Array.from(room);
  const plan = left.map(() => 0);
  for (;;) {
    let best = -1;
    let bestScore = -1;
    for (let c = 0; c < left.length; c++) {
      if (plan[c]! >= left[c]!) continue;
      let score = 0;
      let fitsHere = true;
      for (let j = 0; j < d; j++) {
        const r = req[c * d + j]!;
        if (r > PACK_EPSILON && r > rem[j]! + PACK_EPSILON) {
          fitsHere = false;
          break;
        }
        score += r * rem[j]! * weight[j]!;
      }
      if (fitsHere && score > bestScore) [best, bestScore] = [c, score];
    }
    if (best < 0) return plan;
    let fit = Number.POSITIVE_INFINITY;
    for (let j = 0; j < d; j++) {
      const r = req[best * d + j]!;
      if (r > PACK_EPSILON) fit = Math.min(fit, Math.floor((rem[j]! + PACK_EPSILON) / r));
    }
    const n = Math.max(1, Math.min(left[best]! - plan[best]!, Math.floor(fit / 8)));
    plan[best]! += n;
    for (let j = 0; j < d; j++) rem[j]! -= req[best * d + j]! * n;
  }
}

/**
 * Runs of distinct pods up to which a group is packed by column generation (the master LP has one row per run).
 * Measured on 1,000 pods over the whole catalogue: 30 shapes 0.7 s, 60 shapes 2.5 s, 120 shapes 18.6 s by column
 * generation against 0.25–0.4 s filled into one target type (8–13 % dearer), so larger groups take the latter.
 */
export const MAX_PACKING_CLASSES = 40;

/** How many candidate instance types {@link packingTargetBySimulation} packs for real (the best by fractional cost). */
const SIMULATED_TARGETS = 16;
/** At most this many pods (scaled down proportionally per class) are packed per simulated candidate. */
const SIMULATED_PODS = 1500;

/**
 * The instance type a group of pod classes packs into most cheaply: the {@link SIMULATED_TARGETS} best by
 * fractional cost ({@link packingTarget}'s estimate), each packed with {@link planBin} on a proportional sample of at
 * most {@link SIMULATED_PODS} pods, keeping the lowest price per pod (fragmentation included: big pods on small
 * types waste room the fractional estimate does not see).
 */
function packingTargetBySimulation(
  options: readonly PricedType[],
  counts: readonly number[],
  req: Float64Array,
  d: number,
  roomOf: (o: PricedType) => Float64Array,
  overhead: ResourceList,
  keys: readonly string[],
): PricedType {
  const demand: Record<string, number> = {};
  keys.forEach((k, j) => (demand[k] = counts.reduce((sum, n, c) => sum + n * req[c * d + j]!, 0)));
  const ranked = options
    .map((option) => ({ option, cost: fractionalCost(option, demand, overhead) }))
    .sort((a, b) => a.cost - b.cost)
    .slice(0, SIMULATED_TARGETS);
  const total = counts.reduce((a, b) => a + b, 0);
  const ratio = Math.min(1, SIMULATED_PODS / Math.max(1, total));
  const sample = counts.map((n) => (n === 0 ? 0 : Math.max(1, Math.round(n * ratio))));
  const sampled = sample.reduce((a, b) => a + b, 0);
  // Each bin is priced as the cheapest option that holds it (the plan right-sizes every NodeClaim).
  const rooms = new Map<PricedType, Float64Array>();
  const roomOfCached = (o: PricedType) => {
    let r = rooms.get(o);
    if (!r) rooms.set(o, (r = roomOf(o)));
    return r;
  };
  const load = new Float64Array(d);
  const rightSized = (plan: readonly number[], fallback: number): number => {
    load.fill(0);
    plan.forEach((n, c) => {
      for (let j = 0; j < d; j++) load[j]! += n * req[c * d + j]!;
    });
    for (const o of options) {
      if (o.price >= fallback) break;
      const r = roomOfCached(o);
      let ok = true;
      for (let j = 0; j < d && ok; j++) ok = load[j]! <= r[j]! + PACK_EPSILON;
      if (ok) return o.price;
    }
    return fallback;
  };
  let best: { option: PricedType; perPod: number } | undefined;
  for (const { option } of ranked) {
    const room = roomOfCached(option);
    const left = [...sample];
    let cost = 0;
    let placed = 0;
    while (placed < sampled) {
      const plan = planBin(room, req, d, left);
      const n = plan.reduce((a, b) => a + b, 0);
      if (n === 0) break;
      plan.forEach((k, c) => (left[c]! -= k));
      placed += n;
      cost += rightSized(plan, option.price);
    }
    if (placed < sampled) continue;
    const perPod = cost / sampled;
    if (!best || perPod < best.perPod - 1e-12) best = { option, perPod };
  }
  return best?.option ?? ranked[0]!.option;
}

/** {@link packingTarget}'s estimate for one option: price × fractional nodes the demand needs (at least one). */
function fractionalCost(option: PricedType, demand: ResourceList, overhead: ResourceList): number {
  let nodes = 1;
  for (const k in demand) {
    const dk = demand[k]!;
    if (dk <= PACK_EPSILON) continue;
    const room = (option.type.allocatable[k] ?? 0) - (overhead[k] ?? 0);
    nodes = room <= 0 ? Number.POSITIVE_INFINITY : Math.max(nodes, dk / room);
  }
  return nodes * option.price;
}

/**
 * The instance type a run of pods packs into: among `options` (those that fit one pod, cheapest first), the one
 * that serves `demand` (the remaining requests, canonical units) for the least money, counting fractional nodes
 * of room = allocatable − daemonset `overhead` and at least one node — the type with the lowest price per unit of
 * the demand's dominant resource, or the cheapest that holds it all when it fits on one node.
 */
function packingTarget(options: readonly PricedType[], demand: ResourceList, overhead: ResourceList): PricedType {
  // The demanded resources, in the demand's key order, with their overhead (hot: once per NodeClaim opened).
  const keys: string[] = [];
  const amounts: number[] = [];
  const reserved: number[] = [];
  for (const k in demand) {
    if (demand[k]! <= 1e-6) continue;
    keys.push(k);
    amounts.push(demand[k]!);
    reserved.push(overhead[k] ?? 0);
  }
  const allocatableOf = keys.map((k): ((o: PricedType) => number) => (k === 'cpu' ? (o) => o.cpu : k === 'memory' ? (o) => o.memory : k === 'pods' ? (o) => o.pods : (o) => o.type.allocatable[k] ?? 0));
  let best: PricedType | undefined;
  let bestCost = 0;
  for (const option of options) {
    let nodes = 1;
    for (let j = 0; j < keys.length; j++) {
      const room = allocatableOf[j]!(option) - reserved[j]!;
      nodes = room <= 0 ? Number.POSITIVE_INFINITY : Math.max(nodes, amounts[j]! / room);
    }
    const cost = nodes * option.price;
    if (!best || cost < bestCost - 1e-12) [best, bestCost] = [option, cost];
  }
  return best!;
}

/**
 * What makes two pods interchangeable for every target: their shape (see `podShape`), namespace, labels (which
 * topology counters count them) and topology terms.
 */
const classKeys = new WeakMap<SchedulingPod, string>();
function classKey(pod: SchedulingPod): string {
  let key = classKeys.get(pod);
  if (key === undefined) {
    const terms = pod.topology.map((t) => [t.kind, t.key, t.counter, t.maxSkew, t.minDomains, t.nodeAffinityPolicy, t.nodeTaintsPolicy, t.required]);
    key = JSON.stringify([podShape(pod), pod.namespace, pod.labels, terms]);
    classKeys.set(pod, key);
  }
  return key;
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
  const byWeight = orderByWeight(templates);
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

  unschedulable.push(...diagnoseUnplaced(placeWithRelaxation(ordered, place, maxLevel), byWeight, remaining, topology));

  return { newNodeClaims: finalizeAll(planned), existing: placedExisting, unschedulable };
}

/**
 * Karpenter's retry loop (`scheduler.go Solve`): each pod is offered to `place` at its relaxation level; one that does
 * not fit has its preferences relaxed one step and is tried again after the others; fully relaxed pods are retried
 * while other pods are still being placed, until a round places and relaxes nothing.
 * @returns the pods left unplaced, with the level they reached
 */
function placeWithRelaxation(
  pods: readonly SchedulingPod[],
  place: (pod: SchedulingPod) => boolean,
  maxLevel: (pod: SchedulingPod) => number,
): { pod: SchedulingPod; level: number }[] {
  let queue = pods.map((pod) => ({ pod, level: 0 }));
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
  return queue;
}

/**
 * Why each unplaced pod (at the relaxation level it reached) cannot be served, per NodePool. Identical pods get
 * identical reasons: diagnosed once per pod shape and limits state (pods with topology terms each on their own).
 */
function diagnoseUnplaced(
  unplaced: readonly { readonly pod: SchedulingPod; readonly level: number }[],
  byWeight: readonly NodePoolTemplate[],
  remaining: ReadonlyMap<string, ResourceList | undefined>,
  topology: Topology,
): UnschedulablePod[] {
  const out: UnschedulablePod[] = [];
  const diagnoses = new Map<string, UnschedulablePod>();
  for (const { pod, level } of unplaced) {
    const relaxed = view(pod, level);
    const key = `${podShape(relaxed)}|${JSON.stringify([...remaining])}`;
    let why = topology.keysOf(relaxed).length > 0 ? undefined : diagnoses.get(key);
    if (!why) {
      why = diagnose(relaxed, byWeight, remaining, { topology: (p, t) => PlannedNodeClaim.rejection(t, p, remaining.get(t.name), topology)?.reason });
      diagnoses.set(key, why);
    }
    out.push({ ...why, pod: pod.key });
  }
  return out;
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

/** `podShape(a) === podShape(b)`, comparing by reference first (replicas of one spec share their parsed fields). */
function sameShape(a: SchedulingPod, b: SchedulingPod): boolean {
  if (a.hostPorts.length > 0 || b.hostPorts.length > 0) return podShape(a) === podShape(b);
  if (a.avoidPreferNoSchedule !== b.avoidPreferNoSchedule || a.topology.length !== b.topology.length) return false;
  if (a.requests !== b.requests && !sameRequests(a.requests, b.requests)) return false;
  const [ra, rb] = [a.requirementAlternatives, b.requirementAlternatives];
  if (ra !== rb && (ra.length !== rb.length || !ra.every((r, i) => r === rb[i] || (r.isEmpty() && rb[i]!.isEmpty()) || alternativeKey(r) === alternativeKey(rb[i]!)))) return false;
  const [ta, tb] = [a.tolerations, b.tolerations];
  return ta === tb || (ta.length === 0 && tb.length === 0) || JSON.stringify(ta) === JSON.stringify(tb);
}

/** Same keys with the same values (hot: once per pod of a bulk pass, so no key arrays are built). */
function sameRequests(a: ResourceList, b: ResourceList): boolean {
  let n = 0;
  for (const k in a) {
    if (a[k] !== b[k]) return false;
    n++;
  }
  for (const _ in b) n--;
  return n === 0;
}

/** `a.localeCompare(b)` for many comparisons (same order, much faster). */
const collator = new Intl.Collator();

/** Karpenter's pod order: cpu desc, memory desc, then creation time and name for stability. */
export function byCpuAndMemoryDescending(a: SchedulingPod, b: SchedulingPod): number {
  return (
    (b.requests.cpu ?? 0) - (a.requests.cpu ?? 0) ||
    (b.requests.memory ?? 0) - (a.requests.memory ?? 0) ||
    a.createdMs - b.createdMs ||
    collator.compare(a.key, b.key)
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
    if (this.capacity.closed) return { ok: false, reason: 'it is inside its consolidateAfter window (it takes no pods moved by consolidation)' };
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
      if (!verdict.ok) return refusal(verdict);
    }
    return { ok: true };
  }

  /** How many pods with `requests` (canonical units) the free room still holds. */
  fitCount(requests: ResourceList): number {
    return fitCount(requests, this.available);
  }

  add(pod: SchedulingPod): void {
    this.available = subtract(this.available, pod.requests);
    for (const p of pod.hostPorts) this.hostPorts.add(p);
    this.topology.record(pod, (key) => domainOfTarget(this.capacity, key));
  }
}

/** A topology refusal as a {@link Rejection}, keeping whether it is temporary. */
function refusal(verdict: { readonly reason: string; readonly temporary?: boolean }): Rejection {
  return verdict.temporary ? { ok: false, reason: verdict.reason, temporary: true } : { ok: false, reason: verdict.reason };
}

/** The one value a requirement allows, or undefined when it allows none, several or a complement. */
function singleValue(r: Requirement): string | undefined {
  return !r.complement && r.values.size === 1 ? r.values.values().next().value : undefined;
}

/** An instance type with the price of its cheapest offering a NodeClaim's requirements allow (USD/hour). */
class PricedType {
  /** The type's allocatable cpu (millicores), memory (MiB) and pods, copied for the hot fit checks. */
  readonly cpu: number;
  readonly memory: number;
  readonly pods: number;
  /** The type's other allocatable resources (extended resources, storage), canonical units. */
  readonly extras: readonly (readonly [string, number])[];
  /** The label key `bits` was computed for, and the type's value bits on it (see {@link typeValueBits}). */
  private bitsKey: string | undefined;
  private bits: number | undefined;

  constructor(
    readonly type: InstanceType,
    /** USD/hour. */
    readonly price: number,
  ) {
    this.cpu = type.allocatable.cpu ?? 0;
    this.memory = type.allocatable.memory ?? 0;
    this.pods = type.allocatable.pods ?? 0;
    this.extras = extraAllocatable(type);
  }

  /** `typeValueBits(this.type, key)`, remembered for the last key asked (solves use one or two keys). */
  valueBits(key: string): number | undefined {
    if (this.bitsKey !== key) [this.bitsKey, this.bits] = [key, typeValueBits(this.type, key)];
    return this.bits;
  }
}

/**
 * `(o) => fits(requests, o.type.allocatable)`: over the copied columns when `requests` asks only for cpu, memory and
 * pods (the usual case), else the generic check.
 */
function fitter(requests: ResourceList): (o: PricedType) => boolean {
  for (const k in requests) if (k !== 'cpu' && k !== 'memory' && k !== 'pods' && requests[k]! > FIT_EPSILON) return (o) => fits(requests, o.type.allocatable);
  const [c, m, p] = [requests.cpu ?? 0, requests.memory ?? 0, requests.pods ?? 0];
  return (o) => !((c > FIT_EPSILON && c > o.cpu + FIT_EPSILON) || (m > FIT_EPSILON && m > o.memory + FIT_EPSILON) || (p > FIT_EPSILON && p > o.pods + FIT_EPSILON));
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
    if (offering) out.push(new PricedType(type, offering.price));
  }
  return out.sort(byPrice);
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

/** What `PlannedNodeClaim.quote` returns when the pod can join: the price of the cheapest option, USD/hour. */
type Quote = Acceptance<{ price: number }>;

/** What `PlannedNodeClaim.canAdd` returns when the pod can join. */
type Accepted = Acceptance<{ requirements: Requirements; options: PricedType[]; requests: ResourceList; domains?: ReadonlyMap<string, string> }>;

const largest = new WeakMap<readonly PricedType[], ResourceList>();

/** The allocatable entries of an instance type other than cpu, memory and pods (see `PricedType.extras`), once per type. */
const extraLists = new WeakMap<InstanceType, readonly (readonly [string, number])[]>();
function extraAllocatable(type: InstanceType): readonly (readonly [string, number])[] {
  let list = extraLists.get(type);
  if (!list) extraLists.set(type, (list = Object.entries(type.allocatable).filter(([k]) => k !== 'cpu' && k !== 'memory' && k !== 'pods')));
  return list;
}

/** Key-wise maximum of the options' allocatable (canonical units), computed once per options array. */
function largestAllocatable(options: readonly PricedType[]): ResourceList {
  let out = largest.get(options);
  if (!out) {
    // Only positive maxima are kept (a missing key reads as 0); cpu, memory and pods come from the columns.
    let [cpu, memory, pods] = [0, 0, 0];
    const acc: Record<string, number> = {};
    for (const o of options) {
      if (o.cpu > cpu) cpu = o.cpu;
      if (o.memory > memory) memory = o.memory;
      if (o.pods > pods) pods = o.pods;
      for (const [k, v] of o.extras) if (!(v <= (acc[k] ?? 0))) acc[k] = Math.max(0, v);
    }
    if (cpu > 0) acc.cpu = cpu;
    if (memory > 0) acc.memory = memory;
    if (pods > 0) acc.pods = pods;
    largest.set(options, (out = acc));
  }
  return out;
}

/** Tolerance of `fits` (resource-list.ts). */
const FIT_EPSILON = 1e-6;

/**
 * `options.filter((o) => fits(requests, o.type.allocatable))` (the same array when all fit), for requests of cpu,
 * memory and pods only; undefined when `requests` has another resource (use the generic path).
 */
function fittingFast(options: PricedType[], requests: ResourceList): PricedType[] | undefined {
  for (const k in requests) if (k !== 'cpu' && k !== 'memory' && k !== 'pods' && requests[k]! > FIT_EPSILON) return undefined;
  const ok = fitter(requests);
  let i = 0;
  while (i < options.length && ok(options[i]!)) i++;
  if (i === options.length) return options;
  const out = options.slice(0, i);
  for (i++; i < options.length; i++) if (ok(options[i]!)) out.push(options[i]!);
  return out;
}

/** Probe claims per topology state and template (see `PlannedNodeClaim.probe`). */
const probes = new WeakMap<Topology, Map<NodePoolTemplate, PlannedNodeClaim>>();

/** Per label key: every value some instance type's requirement on it lists, numbered (bit positions of {@link typeValueBits}). */
const valueBits = new Map<string, { readonly bit: Map<string, number>; readonly values: string[] }>();

/** Per instance type and label key: the bits ({@link valueBits}) of the values it lists, 0 for a complement. */
const typeBits = new WeakMap<InstanceType, Map<string, number>>();

/** Bits fit a small integer: keys with more distinct values take the generic path. */
const MAX_VALUE_BITS = 30;

/** The values `type`'s requirement on `key` lists as a bit set ({@link valueBits}); undefined when there are too many. */
function typeValueBits(type: InstanceType, key: string): number | undefined {
  let byKey = typeBits.get(type);
  if (!byKey) typeBits.set(type, (byKey = new Map()));
  let mask = byKey.get(key);
  if (mask !== undefined) return mask;
  const r = type.requirements.get(key);
  let index = valueBits.get(key);
  if (!index) valueBits.set(key, (index = { bit: new Map(), values: [] }));
  mask = 0;
  if (!r.complement) {
    for (const v of r.values) {
      let bit = index.bit.get(v);
      if (bit === undefined) {
        if (index.values.length >= MAX_VALUE_BITS) return undefined;
        index.bit.set(v, (bit = index.values.length));
        index.values.push(v);
      }
      mask |= 1 << bit;
    }
  }
  byKey.set(key, mask);
  return mask;
}

/**
 * `domainValues(key, requirements, options.map((o) => o.type))` (same values, same order) as a union of per-type bit
 * sets: the types' requirements are read once per type, not once per call.
 */
function optionDomainValues(key: string, requirements: Requirements, options: readonly PricedType[]): string[] {
  const r = requirements.get(key);
  // A finite requirement bounds the values: they are exactly its own (see `domainValues`).
  if (!r.complement) return [...r.values].sort();
  let mask = 0;
  for (const o of options) {
    const bits = o.valueBits(key);
    if (bits === undefined) {
      return domainValues(
        key,
        requirements,
        options.map((x) => x.type),
      );
    }
    mask |= bits;
  }
  const out: string[] = [];
  const index = valueBits.get(key);
  if (index) for (let b = 0; b < index.values.length; b++) if (mask & (1 << b) && r.has(index.values[b]!)) out.push(index.values[b]!);
  return out.sort();
}

/**
 * Options pinned to one domain of one key: `requirements` with `key In [domain]`, and every instance type seen so far
 * that can carry the domain, priced under the pinned requirements (zone and capacity type decide offerings) and
 * ranked cheapest first (ties by name). A claim's options are always a subset of what was seen under its
 * requirements, so pinning them is a lookup and a sort of integer ranks, not a walk of requirements and offerings.
 */
class PinnedDomain {
  /** `requirements` with `key In [domain]`. */
  readonly requirements: Requirements;
  private readonly pricing: boolean;
  private readonly zone: Requirement;
  private readonly capacityType: Requirement;
  /** Instance type → its pinned option, or null when it cannot carry the domain (or has no offering there). */
  private readonly entries = new Map<InstanceType, PricedType | null>();
  /** The pinned options of every type in `rankOf`, cheapest first (ties by name). */
  private ranked: PricedType[] = [];
  /** Instance type → its index in `ranked`, or -1 when it has no pinned option. */
  private rankOf = new Map<InstanceType, number>();

  constructor(
    requirements: Requirements,
    private readonly key: string,
    private readonly domain: string,
  ) {
    this.requirements = requirements.add(Requirement.in(key, [domain]));
    this.pricing = key === LABEL_ZONE || key === LABEL_CAPACITY_TYPE;
    this.zone = this.requirements.get(LABEL_ZONE);
    this.capacityType = this.requirements.get(LABEL_CAPACITY_TYPE);
  }

  /**
   * `options` (compatible with the unpinned requirements) narrowed to the types that can carry the domain, re-priced
   * and re-sorted when the key decides offerings. Same result as `pricedOptions(options, this.requirements)`.
   */
  pin(options: readonly PricedType[]): PricedType[] {
    // The same input (a probe's cached fitted options) gets the same array, so what is cached per array stays valid.
    const hit = this.recent.find((r) => r.of === options);
    if (hit) return hit.pinned;
    const pinned = this.pinUncached(options);
    if (this.recent.length >= RECENT_PINS) this.recent.shift();
    this.recent.push({ of: options, pinned });
    return pinned;
  }

  /** The last {@link RECENT_PINS} answers of `pin`. */
  private readonly recent: { readonly of: readonly PricedType[]; readonly pinned: PricedType[] }[] = [];

  private pinUncached(options: readonly PricedType[]): PricedType[] {
    if (!this.pricing) return options.filter((o) => this.carries(o.type));
    let marks = new Uint8Array(this.ranked.length);
    for (let i = 0; i < options.length; i++) {
      const r = this.rankOf.get(options[i]!.type);
      if (r === undefined) {
        // A type not ranked yet: rank every type seen so far with the new ones, then mark again.
        this.rerank(options);
        marks = new Uint8Array(this.ranked.length);
        i = -1;
      } else if (r >= 0) marks[r] = 1;
    }
    const out: PricedType[] = [];
    for (let r = 0; r < marks.length; r++) if (marks[r]) out.push(this.ranked[r]!);
    return out;
  }

  /**
   * The first option of `pin(options.filter(keep))` without building it, or undefined when none is kept and can
   * carry the domain. `options` must be priced under the unpinned requirements (as every options list is): pinning
   * only removes offerings, so an option's price bounds its pinned price from below and the scan stops once the
   * prices pass the best pinned price found. `keep` must depend on the option's type only.
   */
  cheapest(options: readonly PricedType[], keep: (o: PricedType) => boolean): PricedType | undefined {
    if (!this.pricing) return options.find((o) => this.carries(o.type) && keep(o));
    let best: PricedType | undefined;
    for (const o of options) {
      if (best && o.price > best.price) break;
      const e = this.entry(o.type);
      if (!e || (best && byPrice(e, best) >= 0) || !keep(o)) continue;
      best = e;
    }
    return best;
  }

  /** Whether `type` lists the domain on the key. */
  private carries(type: InstanceType): boolean {
    return type.requirements.get(this.key).has(this.domain);
  }

  /** `type`'s pinned option (priced lazily, once), or null when it cannot carry the domain or has no offering there. */
  private entry(type: InstanceType): PricedType | null {
    let e = this.entries.get(type);
    if (e === undefined) {
      e = null;
      if (this.carries(type)) {
        // `cheapestOffering(type, this.requirements)` without allocating.
        let price = Number.POSITIVE_INFINITY;
        for (const offering of type.offerings) if (offering.available && offering.price < price && this.zone.has(offering.zone) && this.capacityType.has(offering.capacityType)) price = offering.price;
        if (price !== Number.POSITIVE_INFINITY) e = new PricedType(type, price);
      }
      this.entries.set(type, e);
    }
    return e;
  }

  /** Ranks every type seen so far plus the types of `options`. */
  private rerank(options: readonly PricedType[]): void {
    for (const o of options) this.entry(o.type);
    this.ranked = [...this.entries.values()].filter((e) => e !== null).sort(byPrice);
    this.rankOf = new Map([...this.entries.keys()].map((type) => [type, -1] as const));
    this.ranked.forEach((e, i) => this.rankOf.set(e.type, i));
  }
}

/** How many answers a {@link PinnedDomain} remembers. */
const RECENT_PINS = 8;

/** {@link PinnedDomain}s per requirements object, then per `key=domain`. */
const pinnedDomains = new WeakMap<Requirements, Map<string, PinnedDomain>>();

/** The {@link PinnedDomain} of (`requirements`, `key`, `domain`), shared by every claim with those requirements. */
function pinnedDomain(requirements: Requirements, key: string, domain: string): PinnedDomain {
  let byDomain = pinnedDomains.get(requirements);
  if (!byDomain) pinnedDomains.set(requirements, (byDomain = new Map()));
  const id = `${key}=${domain}`;
  let hit = byDomain.get(id);
  if (!hit) byDomain.set(id, (hit = new PinnedDomain(requirements, key, domain)));
  return hit;
}

function byPrice(a: PricedType, b: PricedType): number {
  return a.price - b.price || a.type.name.localeCompare(b.type.name);
}

/** A NodeClaim being planned in this solve. */
/** One instance-type list of {@link finalOptions}, with its requirements per claim requirements object. */
interface FinalList {
  /** The options it was built from (the first {@link MAX_INSTANCE_TYPES} count). */
  readonly head: readonly PricedType[];
  readonly instanceTypes: readonly { name: string; price: number }[];
  readonly byRequirements: WeakMap<Requirements, Requirements>;
}

/** {@link finalOptions}' answers per options array. */
const finals = new WeakMap<readonly PricedType[], FinalList>();

/**
 * The lists one solve pass has built, by a cheap signature: NodeClaims whose options differ only in array identity
 * (or beyond the first {@link MAX_INSTANCE_TYPES}) share one list.
 */
type FinalLists = Map<string, FinalList[]>;

/** Whether two option lists agree on their first {@link MAX_INSTANCE_TYPES} entries (type and price). */
function sameHead(a: readonly PricedType[], b: readonly PricedType[]): boolean {
  const n = Math.min(a.length, MAX_INSTANCE_TYPES);
  if (Math.min(b.length, MAX_INSTANCE_TYPES) !== n) return false;
  for (let i = 0; i < n; i++) if (a[i]!.type !== b[i]!.type || a[i]!.price !== b[i]!.price) return false;
  return true;
}

/**
 * A planned NodeClaim's instance-type list (its {@link MAX_INSTANCE_TYPES} cheapest options: name and USD/hour) and
 * its requirements with `node.kubernetes.io/instance-type In` that list. Cached per options array and shared, within
 * a pass (`lists`), by NodeClaims with the same list: thousands of NodeClaims share a few lists, and building a
 * 600-entry list (and a 600-value requirement) for each dominated large solves.
 */
function finalOptions(options: readonly PricedType[], requirements: Requirements, lists: FinalLists): { instanceTypes: readonly { name: string; price: number }[]; requirements: Requirements } {
  let cached = finals.get(options);
  if (!cached) {
    const n = Math.min(options.length, MAX_INSTANCE_TYPES);
    const signature = n === 0 ? '' : `${n}|${options[0]!.type.name}|${options[0]!.price}|${options[n - 1]!.type.name}|${options[n - 1]!.price}`;
    const bucket = lists.get(signature) ?? [];
    cached = bucket.find((l) => sameHead(l.head, options));
    if (!cached) {
      const instanceTypes = options.slice(0, MAX_INSTANCE_TYPES).map((o) => ({ name: o.type.name, price: o.price }));
      cached = { head: options, instanceTypes, byRequirements: new WeakMap() };
      bucket.push(cached);
      lists.set(signature, bucket);
    }
    finals.set(options, cached);
  }
  let withTypes = cached.byRequirements.get(requirements);
  if (!withTypes) {
    withTypes = requirements.add(Requirement.in(LABEL_INSTANCE_TYPE, cached.instanceTypes.map((o) => o.name)));
    cached.byRequirements.set(requirements, withTypes);
  }
  return { instanceTypes: cached.instanceTypes, requirements: withTypes };
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

class PlannedNodeClaim {
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
    private options: readonly PricedType[],
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

  /** A new NodeClaim from `template` holding `pod`, or undefined when the pod does not fit a fresh node of the pool. */
  static start(template: NodePoolTemplate, pod: SchedulingPod, remaining: ResourceList | undefined, topology: Topology, id: string): PlannedNodeClaim | undefined {
    const options = optionsOf(template);
    const candidate = new PlannedNodeClaim(
      template,
      template.requirements,
      remaining ? options.filter((o) => withinLimits(add(o.type.capacity, { nodes: 1 }), remaining)) : options,
      template.daemonOverhead,
      undefined,
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
    return this.check(pod, remaining, count, plus, false) as Accepted | Rejection;
  }

  /**
   * `canAdd` priced only: the same acceptance or rejection (reason and `temporary` flag included) and, when
   * accepted, the price (USD/hour) of the check's cheapest option — without building option lists, so evaluating
   * many candidate claims costs a short scan each. Commit with a `canAdd` of the chosen claim.
   */
  quote(pod: SchedulingPod, remaining?: ResourceList, count = 1, plus?: ResourceList): Quote | Rejection {
    const quoted = this.minValues ? undefined : this.check(pod, remaining, count, plus, true);
    if (quoted) return quoted as Quote | Rejection;
    const check = this.canAdd(pod, remaining, count, plus);
    return check.ok ? { ok: true, price: check.options[0]!.price } : check;
  }

  /**
   * `canAdd` (`priceOnly` false) or `quote` (true; undefined when the answer needs option lists: a second topology key
   * to pin). Options are filtered by what fits, by limits and by DaemonSet host ports, then pinned per topology key.
   */
  private check(pod: SchedulingPod, remaining: ResourceList | undefined, count: number, plus: ResourceList | undefined, priceOnly: boolean): Accepted | Quote | Rejection | undefined {
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
    if (alternative.keys().length === 0) return { ok: true, requirements: this.requirements, options: this.options as PricedType[] };
    const key = alternativeKey(alternative);
    let hit = (this.narrowed ??= new Map()).get(key);
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

