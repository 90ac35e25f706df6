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
 * Where Karpenter joins the first planned NodeClaim that fits (first-fit, kept as `solveFirstFit` in
 * `greedy-solvers.ts`), Skiff packs for price ({@link solve}): pods bound by topology are placed one by one into NodeClaims filled up to the instance
 * type with the best price per unit of the remaining demand, and the other pods are packed in bulk (vector bin
 * packing over runs of identical pods). Bulk placement checks exactly what placing the pods one by one checks.
 * Check, then commit: every target offers `canAdd(pod)` (no mutation, returns why not) and `add()`/`commit()`.
 * Unschedulable pods are returned as data with the reason each NodePool cannot serve them.
 *
 * One concept per file, as in Karpenter's `scheduling/` package: `types.ts` (the solver's vocabulary),
 * `existing-target.ts` (`existingnode.go`), `planned-nodeclaim.ts` (`nodeclaim.go`), `instance-options.ts`,
 * `pinned-domain.ts` and `value-bits.ts` (a NodeClaim's instance options and the domains they span),
 * `packing-target.ts` and `bulk-packing.ts` (the bulk phase), `greedy-solvers.ts` (solver v1), `solve-pass.ts` (what
 * every pass shares, and the first placement step), `queue.ts` (`queue.go`). This file keeps {@link solve} and the
 * packed solve, whose methods read in placement order: existing node, in-flight NodeClaim, new NodeClaim.
 */
import { add, fits, fitsSum, subtractOnKeysOf, type ResourceList } from '../resources/resource-list.js';
import { survivingPlan } from './binding-replay.js';
import { BulkPlacement } from './bulk-packing.js';
import { Deadline } from './deadline.js';
import { solveLegacy } from './greedy-solvers.js';
import { byPrice, type PricedType } from './instance-options.js';
import { orderByWeight } from './nodepool-template.js';
import { packingTarget } from './packing-target.js';
import { PACKING_TOLERANCE, PlannedNodeClaim, type Accepted } from './planned-nodeclaim.js';
import type { SchedulingPod } from './pod.js';
import { alternativeKey, classKey, sameShape } from './pod-shape.js';
import { relaxationSteps, view } from './preferences.js';
import { byCpuAndMemoryDescending } from './queue.js';
import { placeWithRelaxation, planPrice, SolvePass } from './solve-pass.js';
import { Topology } from './topology.js';
import { PORTFOLIO_MAX_PODS, type ExistingCapacity, type NodePoolTemplate, type SchedulingResults, type SolveOptions } from './types.js';

/**
 * A planned NodeClaim that would have to grow (change to a dearer instance type) to take a pod is one of at most
 * this many such candidates evaluated per pod, in creation order; claims it fits for free are always looked for.
 */
export const MAX_GROWTH_CANDIDATES = 4;

/** A pod placed one at a time looks at most at this many planned NodeClaims, newest first. */
export const MAX_VISITED_CLAIMS = 64;

/**
 * Solves one batch: places pending pods on existing capacity, then on new NodeClaims, cheapest fleet first.
 *
 * Pods whose placement depends on topology (they have topology terms or are counted by one), host ports or several
 * required node affinity terms are placed one at a time in Karpenter's order with its retry and relaxation loop.
 * The other pods are then placed in bulk, per run of identical pods (same requests, requirements and tolerations)
 * in the same order: existing capacity first, then room planned NodeClaims hold for free, then new NodeClaims of the
 * highest-weight NodePool that can take them. The runs that share a NodePool and requirements are packed together
 * by column generation (`packing.ts`: an LP over packing patterns, priced by knapsacks over every instance type some
 * run fits, rounded to whole NodeClaims); groups of more than `MAX_PACKING_CLASSES` (`bulk-packing.ts`) runs are filled up to
 * one target type instead. Every NodeClaim is then offered as its cheapest type that still fits (right-sizing).
 * Bulk placement checks exactly what placing the pods one by one checks. Small batches ({@link PORTFOLIO_MAX_PODS})
 * also run solver v1's passes and keep the best plan. With `options.surviveBinding` (the provisioner) the plan is then
 * checked against kube-scheduler's predicted binding and repaired until every pod fits (`survivingPlan` in
 * `binding-replay.ts`, docs/karpenter-semantics.md#binding-replay; Karpenter has no such step).
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
  const packed = new PackedSolve(pods, templates, existing, topology, deadline).run();
  const plan = pods.length > (options.portfolioMaxPods ?? PORTFOLIO_MAX_PODS) || deadline.expired() ? packed : better(packed, solveLegacy(pods, templates, existing, topology, deadline));
  if (!options.surviveBinding) return plan;
  // The misfits' own NodeClaims: the packed solve on them alone, every NodePool's limits less what the plan reserves.
  const solveMisfits = (misfits: readonly SchedulingPod[], joining: SchedulingResults) => {
    const left = limitsLeft(templates, joining);
    return new PackedSolve(misfits, left, [], Topology.build(misfits, left, []), deadline).run();
  };
  const solveWith = (restricted: readonly NodePoolTemplate[]) => new PackedSolve(pods, restricted, existing, Topology.build(pods, restricted, existing), deadline).run();
  const surviving = survivingPlan(plan, pods, templates, existing, options.bindingVariants === false ? undefined : solveWith, solveMisfits, () => deadline.expired());
  return surviving.fits ? surviving.results : { ...surviving.results, survivesBinding: false };
}

/**
 * `templates` with `remaining` lowered by the capacity (plus one node) of the cheapest option of each NodeClaim
 * `results` plans in the pool (the reservation `PlannedNodeClaim.reserve` makes); pools without limits unchanged.
 */
function limitsLeft(templates: readonly NodePoolTemplate[], results: SchedulingResults): NodePoolTemplate[] {
  return templates.map((t) => {
    if (!t.remaining) return t;
    let remaining: ResourceList = t.remaining;
    for (const c of results.newNodeClaims) {
      if (c.nodePool !== t.name) continue;
      const type = t.instanceTypes.find((it) => it.name === c.instanceTypes[0]?.name);
      remaining = subtractOnKeysOf(remaining, add(type?.capacity ?? {}, { nodes: 1 }));
    }
    return { ...t, remaining };
  });
}

/** The better of two plans: more pods placed, then cheaper, then fewer NodeClaims; ties keep `a`. */
function better(a: SchedulingResults, b: SchedulingResults): SchedulingResults {
  if (a.unschedulable.length !== b.unschedulable.length) return a.unschedulable.length < b.unschedulable.length ? a : b;
  const [pa, pb] = [planPrice(a), planPrice(b)];
  if (Math.abs(pa - pb) > 1e-9) return pa < pb ? a : b;
  return b.newNodeClaims.length < a.newNodeClaims.length ? b : a;
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

/** The resource names a pod requests (positive amounts), sorted and joined: the key of its demand in {@link PackedSolve}. */
function signature(pod: SchedulingPod): string {
  return Object.keys(pod.requests)
    .filter((k) => (pod.requests[k] ?? 0) > 0)
    .sort()
    .join(',');
}

/**
 * The packing solver (see {@link solve}) as an object: {@link PackedSolve.run} places the topology-bound pods one by
 * one in Karpenter's order ({@link PackedSolve.placeOne}: {@link SolvePass.addToExistingNode}, then
 * {@link SolvePass.addToInflightNodeClaim}, then {@link PackedSolve.addToNewNodeClaim}), then the rest in bulk
 * ({@link PackedSolve.placeInBulk}, the same order per run of identical pods).
 */
class PackedSolve extends SolvePass {
  /** Per class of interchangeable pods (`classKey`): the in-flight NodeClaims it may still join. */
  private readonly classes = new Map<string, ClassCandidates>();
  /**
   * What is left to place (canonical units), per set of requested resource names ({@link signature}): a NodeClaim
   * opened for a pod is filled up to the instance type that serves the demand of pods like it most cheaply (see
   * `packingTarget`). Built on the first pod placed one by one (a batch of plain pods never needs it).
   */
  private demandOf: Map<string, Record<string, number>> | undefined;
  private readonly bulk = new BulkPlacement(this);

  constructor(pods: readonly SchedulingPod[], templates: readonly NodePoolTemplate[], existing: readonly ExistingCapacity[], topologyAtStart: Topology, private readonly deadline: Deadline) {
    super(pods, templates, existing, topologyAtStart);
  }

  /** Phase 1, the pods {@link PackedSolve.simple} rejects, one by one; phase 2, the others in bulk; then the plan. */
  run(): SchedulingResults {
    const unplaced: { pod: SchedulingPod; level: number }[] = [];
    const isSimple = this.ordered.map((p) => this.simple(this.viewOf(p, 0)));
    unplaced.push(
      ...placeWithRelaxation(
        this.ordered.filter((_, i) => !isSimple[i]),
        (pod) => this.placeOne(pod),
        (pod) => this.maxLevel(pod),
      ),
    );
    unplaced.push(...this.placeInBulk(this.ordered.filter((_, i) => isSimple[i])));
    return this.results(unplaced.sort((a, b) => byCpuAndMemoryDescending(a.pod, b.pod)));
  }

  /**
   * `pod` at `level` of relaxation. A pod without preferences is its own view while no taint is PreferNoSchedule: its
   * views would differ only in avoiding such taints, so a bulk pass copies no pod.
   */
  private viewOf(pod: SchedulingPod, level: number): SchedulingPod {
    return !this.preferNoSchedule && relaxationSteps(pod) === 1 ? pod : view(pod, level);
  }

  /** Whether `pod` can be placed in bulk: its placement depends on no topology, host port or alternative term. */
  private simple(pod: SchedulingPod): boolean {
    return (
      pod.hostPorts.length === 0 &&
      pod.requirementAlternatives.length === 1 &&
      pod.topology.length === 0 &&
      pod.preferences.podAffinity.length + pod.preferences.podAntiAffinity.length + pod.preferences.scheduleAnyway.length === 0 &&
      this.topology.keysOf(pod).length === 0
    );
  }

  /** {@link PackedSolve.demandOf}, built from the whole batch on first use. */
  private demand(): Map<string, Record<string, number>> {
    if (this.demandOf) return this.demandOf;
    this.demandOf = new Map();
    for (const pod of this.ordered) {
      const sig = signature(pod);
      const d = this.demandOf.get(sig) ?? {};
      for (const k in pod.requests) d[k] = (d[k] ?? 0) + pod.requests[k]!;
      this.demandOf.set(sig, d);
    }
    return this.demandOf;
  }

  /** Takes `n` × `pod`'s requests off what is left to place (a negative `n` gives them back). */
  private consume(pod: SchedulingPod, n = 1): void {
    const d = this.demand().get(signature(pod));
    if (d) for (const k in pod.requests) d[k] = Math.max(0, d[k]! - pod.requests[k]! * n);
  }

  /**
   * One pod in Karpenter's order: an existing node, else an in-flight NodeClaim (planned earlier in this solve) that
   * takes it for free or for a price rise no more than {@link PACKING_TOLERANCE} × a new NodeClaim's price, else a new
   * NodeClaim from the first NodePool by weight that takes it.
   * @returns whether the pod was placed
   */
  private placeOne(pod: SchedulingPod): boolean {
    if (this.addToExistingNode(pod)) {
      this.consume(pod);
      return true;
    }
    const best = this.cheapestInflightNodeClaim(pod);
    this.consume(pod);
    if (best && best.marginal <= 1e-9) return this.addToInflightNodeClaim(best.claim, pod);
    const fresh = this.freshFor(pod);
    if (best && (!fresh || best.marginal <= fresh.check.options[0]!.price * PACKING_TOLERANCE)) return this.addToInflightNodeClaim(best.claim, pod);
    if (!fresh) {
      this.consume(pod, -1);
      return false;
    }
    return this.addToNewNodeClaim(pod, fresh);
  }

  /**
   * The in-flight NodeClaim `pod` joins most cheaply, with the price rise (USD/hour) over the claim's ceiling: the
   * newest of its class's candidates (at most {@link MAX_VISITED_CLAIMS}) that takes it for free, else the cheapest of
   * at most {@link MAX_GROWTH_CANDIDATES} that would grow (fewer pods on a tie). Candidates are priced with `quote`; only
   * the chosen one is checked in full (deterministic: same answer). Drops candidates that refuse the class for good.
   */
  private cheapestInflightNodeClaim(pod: SchedulingPod): { claim: PlannedNodeClaim; marginal: number } | undefined {
    const key = classKey(pod);
    let candidates = this.classes.get(key);
    // A new class looks at the most recent NodeClaims only (older ones are usually full).
    if (!candidates) this.classes.set(key, (candidates = { claims: [], dead: 0, seen: Math.max(0, this.planned.length - MAX_VISITED_CLAIMS) }));
    for (; candidates.seen < this.planned.length; candidates.seen++) candidates.claims.push(this.planned[candidates.seen]);
    const list = candidates.claims;
    const growthLimit = this.deadline.expired() ? 1 : MAX_GROWTH_CANDIDATES;
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
      const check = claim.quote(pod, this.remaining.get(claim.template.name));
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
        const check = claim.quote(pod, this.remaining.get(claim.template.name));
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
    return best;
  }

  /** Step 3: a new NodeClaim from the accepted `fresh` check, filled up to the type that serves pods like `pod` most cheaply. */
  private addToNewNodeClaim(pod: SchedulingPod, fresh: { template: NodePoolTemplate; check: Accepted }): true {
    const claim = this.open(fresh.template, fresh.check, [pod]);
    const target = packingTarget(fresh.check.options, add(pod.requests, this.demand().get(signature(pod)) ?? {}), fresh.template.daemonOverhead);
    claim.target = { allocatable: target.type.allocatable, price: target.price };
    return true;
  }

  /**
   * Phase 2: `pending` (in queue order) in bulk, one run of identical pods at a time and level by level of
   * relaxation: existing capacity and the free room of in-flight NodeClaims first, then new NodeClaims packed per
   * group of runs that share a NodePool and requirements, then new NodeClaims run by run.
   * @returns the pods left unplaced fully relaxed, with their level
   */
  private placeInBulk(pending: SchedulingPod[]): { pod: SchedulingPod; level: number }[] {
    const unplaced: { pod: SchedulingPod; level: number }[] = [];
    for (let level = 0; pending.length > 0; level++) {
      const views = pending.map((p) => this.viewOf(p, level));
      const runs: SchedulingPod[][] = [];
      for (const v of views) {
        const last = runs[runs.length - 1];
        if (last && sameShape(last[0]!, v)) last.push(v);
        else runs.push([v]);
      }
      const failed: SchedulingPod[] = [];
      const groups = new Map<string, { template: NodePoolTemplate; options: Set<PricedType>; runs: SchedulingPod[][] }>();
      for (const run of runs) {
        const left = this.bulk.fillExisting(run);
        if (left.length === 0) continue;
        const fresh = this.freshFor(left[0]!);
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
      for (const group of groups.values()) for (const rest of this.bulk.packGroup(group.template, [...group.options].sort(byPrice), group.runs)) failed.push(...this.bulk.openBins(rest));
      const base = failed.length > 0 ? new Map(pending.map((p) => [p.key, p])) : undefined;
      pending = [];
      for (const v of failed) {
        const pod = base!.get(v.key)!;
        if (level < this.maxLevel(pod)) pending.push(pod);
        else unplaced.push({ pod, level });
      }
    }
    return unplaced;
  }
}
