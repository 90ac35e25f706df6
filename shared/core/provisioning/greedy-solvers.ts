/**
 * Solver v1: the greedy passes. Product code: `solve` (`scheduler.ts`) runs them on every batch of up to
 * `PORTFOLIO_MAX_PODS` pods ({@link solveLegacy}) and keeps the best of its plans, so they stay in shared/core.
 * {@link solveFirstFit} is the same first-fit pass, exposed alone; only the tests call it (as Karpenter's plan to
 * compare the packed solve against). It stays here because it is one call of the product pass {@link solveWith},
 * not a bench strategy of its own (the bench's own baselines live in bench/).
 */
import type { ResourceList } from '../resources/resource-list.js';
import type { Deadline } from './deadline.js';
import type { SchedulingPod } from './pod.js';
import { podShape } from './pod-shape.js';
import { PACKING_TOLERANCE, PlannedNodeClaim } from './planned-nodeclaim.js';
import { placeWithRelaxation, planPrice, SolvePass, sumPrice } from './solve-pass.js';
import { Topology } from './topology.js';
import type { ExistingCapacity, NodeClaimPlan, NodePoolTemplate, SchedulingResults } from './types.js';

/**
 * Solver v1: the price-aware and first-fit greedy passes, keeping per NodePool the cheaper plan.
 * @param topology the batch's topology at the start of the solve (each pass works on its own clone)
 * @param deadline when it has passed, the first-fit pass is skipped
 */
export function solveLegacy(pods: readonly SchedulingPod[], templates: readonly NodePoolTemplate[], existing: readonly ExistingCapacity[], topology: Topology, deadline: Deadline): SchedulingResults {
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

/** The new NodeClaims of a plan per NodePool, in plan order. */
function groupByPool(r: SchedulingResults): Map<string, NodeClaimPlan[]> {
  const out = new Map<string, NodeClaimPlan[]>();
  for (const c of r.newNodeClaims) out.set(c.nodePool, [...(out.get(c.nodePool) ?? []), c]);
  return out;
}

/**
 * Karpenter's own strategy, for comparison and benchmarks: every pod joins the first planned NodeClaim that fits.
 */
export function solveFirstFit(pods: readonly SchedulingPod[], templates: readonly NodePoolTemplate[], existing: readonly ExistingCapacity[]): SchedulingResults {
  return solveWith(pods, templates, existing, Number.POSITIVE_INFINITY, Topology.build(pods, templates, existing));
}

/**
 * One greedy pass. `tolerance` is {@link PACKING_TOLERANCE} for the price-aware pass, or Infinity for
 * Karpenter's pure first-fit packing; `solve` (`scheduler.ts`) runs both and keeps the cheaper plan.
 *
 * Karpenter's retry loop (`scheduler.go Solve`): a pod that cannot be placed has its preferences relaxed one step
 * (see `preferences.ts`) and is tried again after the others; pods that fail fully relaxed are retried while other
 * pods are still being placed (a pod with required affinity to a pod later in the order), until a round places and
 * relaxes nothing.
 */
export function solveWith(
  pods: readonly SchedulingPod[],
  templates: readonly NodePoolTemplate[],
  existing: readonly ExistingCapacity[],
  tolerance: number,
  topologyAtStart: Topology,
): SchedulingResults {
  return new GreedySolve(pods, templates, existing, tolerance, topologyAtStart).run();
}

/**
 * One greedy pass as an object (see {@link solveWith}): each pod goes to an existing node, else joins an in-flight
 * NodeClaim (planned earlier in this pass), else opens a new NodeClaim, pod by pod in queue order.
 */
class GreedySolve extends SolvePass {
  /**
   * Identical pods (a Deployment's replicas) ask the same question of a fresh NodeClaim: answered once per NodePool,
   * pod shape and remaining limits (USD/hour, undefined: no fresh NodeClaim takes it).
   */
  private readonly freshCache = new Map<string, number | undefined>();

  constructor(
    pods: readonly SchedulingPod[],
    templates: readonly NodePoolTemplate[],
    existing: readonly ExistingCapacity[],
    /** {@link PACKING_TOLERANCE} (price-aware) or Infinity (first-fit). */
    private readonly tolerance: number,
    topologyAtStart: Topology,
  ) {
    super(pods, templates, existing, topologyAtStart);
  }

  /** Places the batch with Karpenter's retry loop and returns the plan. */
  run(): SchedulingResults {
    return this.results(
      placeWithRelaxation(
        this.ordered,
        (pod) => this.place(pod),
        (pod) => this.maxLevel(pod),
      ),
    );
  }

  /**
   * Tries existing capacity, then planned NodeClaims, then a new NodeClaim; true when the pod was placed.
   * Karpenter (tolerance ∞): join the first planned NodeClaim that fits, fewest pods first.
   * Price-aware: join the planned NodeClaim whose price rises least, unless a new NodeClaim from the first
   * NodePool (by weight) that can take the pod costs less than that rise. Ties keep packing (fewer nodes).
   */
  private place(pod: SchedulingPod): boolean {
    if (this.addToExistingNode(pod)) return true;
    const firstFit = this.tolerance === Number.POSITIVE_INFINITY;
    const best = this.cheapestInflightNodeClaim(pod, firstFit);
    if (best && (firstFit || best.marginal <= 0)) return this.addToInflightNodeClaim(best.claim, pod);
    const freshTemplate = this.byWeight.find((t) => this.freshPriceOf(t, pod, this.remaining.get(t.name)) !== undefined);
    const freshPrice = freshTemplate ? this.freshPriceOf(freshTemplate, pod, this.remaining.get(freshTemplate.name))! : undefined;
    if (best && (freshPrice === undefined || best.marginal <= freshPrice * this.tolerance)) return this.addToInflightNodeClaim(best.claim, pod);
    if (!freshTemplate) return false;
    return this.addToNewNodeClaim(freshTemplate, pod);
  }

  /**
   * The in-flight NodeClaim whose price rises least (USD/hour) if `pod` joins, scanning in creation order and
   * stopping at the first that takes it for free; first-fit scans fewest pods first and stops at the first that takes
   * it. Undefined when none takes it.
   */
  private cheapestInflightNodeClaim(pod: SchedulingPod, firstFit: boolean): { claim: PlannedNodeClaim; marginal: number } | undefined {
    const candidates = firstFit ? [...this.planned].sort((a, b) => a.pods.length - b.pods.length) : this.planned;
    let best: { claim: PlannedNodeClaim; marginal: number } | undefined;
    for (const claim of candidates) {
      const marginal = claim.marginalPrice(pod, this.remaining.get(claim.template.name));
      if (marginal === undefined) continue;
      if (!best || marginal < best.marginal || (marginal === best.marginal && claim.pods.length < best.claim.pods.length)) best = { claim, marginal };
      if (firstFit || marginal <= 0) break;
    }
    return best;
  }

  /**
   * Step 3: a new NodeClaim of `template` for `pod`, from the accepted check of the template's probe (what
   * {@link SolvePass.open} commits; it reserves the NodeClaim's share of the NodePool's limits).
   * @returns false when the fresh NodeClaim does not take the pod
   */
  private addToNewNodeClaim(template: NodePoolTemplate, pod: SchedulingPod): boolean {
    const check = this.probeOf(template).canAdd(pod, this.remaining.get(template.name));
    if (!check.ok) return false;
    this.open(template, check, [pod]);
    return true;
  }

  /** The price (USD/hour) of a fresh NodeClaim of `t` for `pod` alone, cached for pods without topology terms. */
  private freshPriceOf(t: NodePoolTemplate, pod: SchedulingPod, rem: ResourceList | undefined): number | undefined {
    // Pods with topology terms depend on counts, so they always ask.
    if (this.topology.keysOf(pod).length > 0) return PlannedNodeClaim.freshPrice(t, pod, rem, this.topology);
    const key = `${t.name}|${podShape(pod)}|${rem ? JSON.stringify(rem) : ''}`;
    if (!this.freshCache.has(key)) this.freshCache.set(key, PlannedNodeClaim.freshPrice(t, pod, rem, this.topology));
    return this.freshCache.get(key);
  }
}
