/**
 * Solver v1: the greedy passes. Product code: `solve` (`scheduler.ts`) runs them on every batch of up to
 * `PORTFOLIO_MAX_PODS` pods ({@link solveLegacy}) and keeps the best of its plans, so they stay in shared/core.
 * {@link solveFirstFit} is the same first-fit pass, exposed alone; only the tests call it (as Karpenter's plan to
 * compare the packed solve against). It stays here because it is one call of the product pass {@link solveWith},
 * not a bench strategy of its own (the bench's own baselines live in bench/).
 */
import type { ResourceList } from '../resources/resource-list.js';
import type { Deadline } from './deadline.js';
import { ExistingTarget } from './existing-target.js';
import { orderByWeight } from './nodepool-template.js';
import type { SchedulingPod } from './pod.js';
import { podShape } from './pod-shape.js';
import { PACKING_TOLERANCE, PlannedNodeClaim } from './planned-nodeclaim.js';
import { relaxationSteps } from './preferences.js';
import { byCpuAndMemoryDescending } from './queue.js';
import { diagnoseUnplaced, finalizeAll, placeWithRelaxation, planPrice, sumPrice } from './solve-pass.js';
import { Topology } from './topology.js';
import type { ExistingCapacity, NodeClaimPlan, NodePoolTemplate, SchedulingResults, UnschedulablePod } from './types.js';

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
