/**
 * Repacking: two consolidation moves Karpenter lacks (issue 20). Karpenter deletes nodes or replaces N of them by at
 * most one (core `pkg/controllers/disruption/consolidation.go computeConsolidation`); a fleet whose nodes each hold a
 * few large pods that fit nowhere else then stalls well above what its pods need. Here the packing solver
 * (`provisioning/scheduler.ts solve`) plans the candidates' pods afresh — on the free room of the other nodes and on
 * as many new NodeClaims as it takes — and the move stands when those NodeClaims cost clearly less than the
 * candidates:
 *
 * - {@link repackSearch}: k ≥ 2 nodes of one NodePool, nodes of small pods first ({@link repackRank}), replaced by
 *   m ≥ 0 cheaper ones (k grows while the saving grows);
 * - {@link splitSearch}: one large node replaced by m ≥ 2 cheaper ones.
 *
 * Everything Karpenter's simulation holds holds here too (see `consolidation.ts`): every pod must be placed; pods
 * move onto no node inside its own consolidateAfter (`closed` capacity); each new NodeClaim comes from the NodePool
 * Karpenter's scheduler would open it from (the higherWeightPool rule); the candidates' capacity is given back to
 * their NodePools' limits (`freeLimits`); spot → spot only with `SpotToSpotConsolidation` (cut to the 15 cheapest
 * types, and a single spot node only with at least 15 cheaper types); a NodeClaim that could be spot or on-demand
 * replacing on-demand nodes is forced to spot. A plan of at most one NodeClaim is Karpenter's own move: it is
 * simulated exactly as Karpenter's (`simulateConsolidation`), so its validation agrees with multi- and single-node
 * consolidation.
 *
 * Churn guard (Skiff's; a later pass must not undo the move, and the move must pay for its evictions):
 * - every replacement is at least {@link MIN_PACKING} full on its dominant resource (cpu or memory) with its
 *   cheapest option, so it is no better repacking candidate than the nodes left alone; replacements younger than the
 *   churn guard are never consolidation candidates at all (`controllers/disruption/candidates.ts CHURN_GUARD_MS`);
 * - the saving is at least {@link MIN_SAVINGS_FRACTION} of the candidates' price and at least
 *   {@link MIN_SAVINGS_PER_EVICTION} per unit of eviction cost (Karpenter's `evictionCost`, 1 per ordinary pod);
 * - each replacement's options are cut so that even its priciest option keeps the saving above that minimum;
 * - the plan survives kube-scheduler's binding (`ConsolidationContext.surviveBinding`): the evicted pods are bound by
 *   its queue order and LeastAllocated scoring, not by the plan, and the NodeClaims its replay needs are counted in
 *   the saving.
 */
import { LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE } from '../api/labels.js';
import type { NodeClaimPlan } from '../provisioning/types.js';
import { solve } from '../provisioning/scheduler.js';
import type { ResourceList } from '../resources/resource-list.js';
import { Requirement } from '../scheduling/requirement.js';
import { freeLimits, higherWeightPool, MIN_SPOT_TO_SPOT_TYPES, simulateConsolidation, type ConsolidationCandidate, type ConsolidationContext } from './consolidation.js';

/**
 * The least a repacking saves, as a fraction of the candidates' price (USD/h): 10 %. Below it the move is within
 * the noise of spot prices and of the kube-scheduler placing the evicted pods by its own scoring rather than by the
 * plan, and a later pass could find a plan a few percent better that moves the same pods again.
 */
export const MIN_SAVINGS_FRACTION = 0.1;
/**
 * The least a repacking saves per unit of eviction cost (Karpenter's `evictionCost`, 1 for an ordinary pod), USD per
 * hour: $0.005/h. Twenty evicted pods must save at least $0.10/h, about an hour's price of a `large` node: every
 * evicted pod restarts (losing warm caches and in-flight work) for a saving that must last; priority and
 * `pod-deletion-cost` raise a pod's cost as they do Karpenter's candidate order.
 */
export const MIN_SAVINGS_PER_EVICTION = 0.005;
/**
 * How full each replacement must be with its cheapest option, on its dominant resource (requests plus daemon overhead
 * ÷ allocatable, cpu or memory): 50 %. A replacement that is less than half full would itself be the first
 * candidate of the next repacking: the move would be undone.
 */
export const MIN_PACKING = 0.5;
/** The most candidates one repacking takes (k); each growth step is one solve. */
export const MAX_REPACK_CANDIDATES = 32;
/** The most candidates {@link splitSearch} simulates in one search (those wasting the most USD/h first). */
export const MAX_SPLIT_TRIES = 8;

/** The outcome of a repacking simulation. */
export type RepackDecision =
  | {
      /** `delete` / `replace`: Karpenter's move (at most one new NodeClaim); `repack`: two or more new NodeClaims. */
      readonly kind: 'delete' | 'replace' | 'repack';
      readonly candidates: readonly ConsolidationCandidate[];
      /** The NodeClaims to launch first, each cut to the options that keep the saving (cheapest first). */
      readonly replacements: readonly NodeClaimPlan[];
      /** Candidates' price minus the replacements' cheapest options, USD per hour (> 0). */
      readonly savings: number;
      /** The candidates' pods' eviction cost (Karpenter `evictionCost` summed). */
      readonly evictionCost: number;
    }
  | { readonly kind: 'none'; readonly candidates: readonly ConsolidationCandidate[]; /** Why not, in words. */ readonly reason: string };

/** A found move's rank: USD/h saved per unit of eviction cost (an empty set ranks by its saving alone). */
export function savingsPerDisruption(d: { readonly savings: number; readonly evictionCost: number }): number {
  return d.savings / Math.max(d.evictionCost, 1);
}

/**
 * Simulates replacing `candidates` together by a fresh plan of their pods (see the module comment).
 * @param costs each candidate's eviction cost, by NodeClaim name (absent: one per pod)
 */
export function simulateRepack(candidates: readonly ConsolidationCandidate[], ctx: ConsolidationContext, costs: ReadonlyMap<string, number> = new Map()): RepackDecision {
  const none = (reason: string): RepackDecision => ({ kind: 'none', candidates, reason });
  const evictionCost = candidates.reduce((sum, c) => sum + (costs.get(c.nodeClaim) ?? c.pods.length), 0);
  const pods = candidates.flatMap((c) => c.pods);
  if (pods.length === 0) return none('no pods: emptiness deletes it');
  const price = candidates.reduce((sum, c) => sum + c.price, 0);
  const minimum = Math.max(MIN_SAVINGS_FRACTION * price, MIN_SAVINGS_PER_EVICTION * evictionCost);
  const gone = new Set(candidates.map((c) => c.node));
  const templates = freeLimits(ctx.templates, candidates);
  const existing = ctx.existing.filter((e) => !gone.has(e.name));
  const results = solve(pods, templates, existing, { surviveBinding: ctx.surviveBinding === true, bindingVariants: false });
  const stuck = results.unschedulable[0];
  if (stuck) return none(`pod ${stuck.pod} fits on no other node and no new NodeClaim`);
  if (results.survivesBinding === false) return none(`no plan of new NodeClaims for its pods survives kube-scheduler's binding`);
  if (results.newNodeClaims.length <= 1) {
    // Karpenter's own move: simulated as Karpenter's, so multi- and single-node validation find it again.
    const own = simulateConsolidation(candidates, ctx, candidates.length === 1);
    if (own.kind === 'none') return none(own.reason);
    if (own.savings < minimum - 1e-9) return none(`it saves $${own.savings.toFixed(4)}/h, less than the $${minimum.toFixed(4)}/h that pays for its evictions`);
    return { kind: own.kind, candidates, replacements: own.replacements, savings: own.savings, evictionCost };
  }
  const plans = results.newNodeClaims;
  for (const plan of plans) {
    const ahead = higherWeightPool(plan, pods, { ...ctx, templates }, gone);
    if (ahead) return none(ahead);
  }
  const cheapest = plans.reduce((sum, p) => sum + (p.instanceTypes[0]?.price ?? Number.POSITIVE_INFINITY), 0);
  const savings = price - cheapest;
  if (!(savings >= minimum - 1e-9) || savings <= 0) {
    return none(`${plans.length} new NodeClaims cost $${cheapest.toFixed(4)}/h: saving $${savings.toFixed(4)}/h, less than the $${minimum.toFixed(4)}/h that pays for its evictions`);
  }
  for (const plan of plans) {
    const packing = packingOf(plan, templates);
    if (packing < MIN_PACKING) return none(`a replacement would be only ${Math.round(packing * 100)} % full: a later pass would consolidate it again`);
  }
  // Each replacement may launch a pricier option than its cheapest only as far as the saving stays above the minimum.
  const slack = (savings - minimum) / plans.length;
  const allSpot = candidates.every((c) => c.capacityType === 'spot');
  const replacements: NodeClaimPlan[] = [];
  for (const plan of plans) {
    let options = plan.instanceTypes.filter((o) => o.price <= plan.instanceTypes[0]!.price + slack + 1e-9);
    let requirements = plan.requirements;
    const capacity = requirements.has(LABEL_CAPACITY_TYPE) ? requirements.get(LABEL_CAPACITY_TYPE) : undefined;
    const allowsSpot = !capacity || capacity.has('spot');
    const allowsOnDemand = !capacity || capacity.has('on-demand');
    if (allSpot && allowsSpot) {
      if (!ctx.spotToSpot) return none('replacing spot nodes with spot nodes needs the SpotToSpotConsolidation feature gate');
      if (candidates.length === 1 && options.length < MIN_SPOT_TO_SPOT_TYPES) {
        return none(`spot-to-spot consolidation needs at least ${MIN_SPOT_TO_SPOT_TYPES} cheaper instance types, only ${options.length} are`);
      }
      options = options.slice(0, MIN_SPOT_TO_SPOT_TYPES);
      requirements = requirements.add(Requirement.in(LABEL_CAPACITY_TYPE, ['spot']));
    } else if (allowsSpot && allowsOnDemand) {
      requirements = requirements.add(Requirement.in(LABEL_CAPACITY_TYPE, ['spot']));
    }
    requirements = requirements.add(Requirement.in(LABEL_INSTANCE_TYPE, options.map((o) => o.name)));
    replacements.push({ ...plan, requirements, instanceTypes: options });
  }
  return { kind: 'repack', candidates, replacements, savings, evictionCost };
}

/** How full `plan` is with its cheapest option: the larger of its cpu and memory requests ÷ that type's allocatable. */
function packingOf(plan: NodeClaimPlan, templates: ConsolidationContext['templates']): number {
  const name = plan.instanceTypes[0]?.name;
  const type = templates.find((t) => t.name === plan.nodePool)?.instanceTypes.find((t) => t.name === name);
  if (!type) return 1;
  return dominantShare(plan.requests, type.allocatable);
}

/** The larger of cpu and memory `requests` ÷ `allocatable` (0 where allocatable is unknown). */
function dominantShare(requests: ResourceList, allocatable: ResourceList): number {
  let share = 0;
  for (const r of ['cpu', 'memory']) {
    const a = allocatable[r] ?? 0;
    if (a > 0) share = Math.max(share, (requests[r] ?? 0) / a);
  }
  return share;
}

/** How much of its allocatable a candidate's pods request, on the dominant resource (1 when unknown). */
export function utilisationOf(c: ConsolidationCandidate): number {
  if (!c.allocatable) return 1;
  const requests: Record<string, number> = {};
  for (const p of c.pods) for (const r of ['cpu', 'memory']) requests[r] = (requests[r] ?? 0) + (p.requests[r] ?? 0);
  return dominantShare(requests, c.allocatable);
}

/**
 * The order repack tries a NodePool's candidates in, lowest first: the largest pod's dominant share of the node
 * (cpu or memory requests ÷ allocatable), plus the node's own utilisation as a tie-break (a tenth of it). Nodes of
 * small pods come first: their pods can fill the free room other nodes keep beside a large pod, which is what a
 * repacking gains; a node whose one large pod fits nowhere else gains nothing from being replaced.
 */
export function repackRank(c: ConsolidationCandidate): number {
  if (!c.allocatable) return 2;
  let largest = 0;
  for (const p of c.pods) largest = Math.max(largest, dominantShare(p.requests, c.allocatable));
  return largest + utilisationOf(c) / 10;
}

/** The sizes k a repacking tries, growing by about half each step, up to `n`. */
function growth(n: number): number[] {
  const sizes: number[] = [];
  for (let k = 2; k <= Math.min(n, MAX_REPACK_CANDIDATES); k = Math.max(k + 1, Math.floor(k * 1.5))) sizes.push(k);
  return sizes;
}

/**
 * Replaces k ≥ 2 nodes of one NodePool by cheaper ones. Per NodePool, its candidates in {@link repackRank} order
 * (nodes of small pods first, then by name); k grows (2, 3, 4, 6, 9, …) while the saving grows, and stops after the first k whose saving does not (or
 * after two sizes that find nothing once one did). Across NodePools the move with the most USD/h saved per unit of
 * eviction cost wins.
 * @param candidates within their NodePools' budgets (every one of them may be taken)
 * @param costs eviction cost by NodeClaim name
 * @returns the best move found, or `none` with the last reason
 */
export function repackSearch(candidates: readonly ConsolidationCandidate[], ctx: ConsolidationContext, costs: ReadonlyMap<string, number>): RepackDecision {
  const byPool = new Map<string, ConsolidationCandidate[]>();
  for (const c of candidates) if (c.pods.length > 0) byPool.set(c.nodePool, [...(byPool.get(c.nodePool) ?? []), c]);
  let best: RepackDecision | undefined;
  let last: RepackDecision = { kind: 'none', candidates: [], reason: 'fewer than two non-empty candidates in any NodePool' };
  for (const [, list] of [...byPool].sort(([a], [b]) => a.localeCompare(b))) {
    const ranked = list.map((c) => ({ c, r: repackRank(c) })).sort((a, b) => a.r - b.r || a.c.nodeClaim.localeCompare(b.c.nodeClaim)).map((x) => x.c);
    let poolBest: RepackDecision | undefined;
    let misses = 0;
    for (const k of growth(ranked.length)) {
      const d = simulateRepack(ranked.slice(0, k), ctx, costs);
      if (d.kind === 'none') {
        last = d;
        if (poolBest && ++misses >= 2) break;
        continue;
      }
      if (poolBest && poolBest.kind !== 'none' && d.savings <= poolBest.savings + 1e-9) break;
      poolBest = d;
      misses = 0;
    }
    if (poolBest && poolBest.kind !== 'none' && (!best || best.kind === 'none' || savingsPerDisruption(poolBest) > savingsPerDisruption(best) + 1e-12)) best = poolBest;
  }
  return best ?? last;
}

/**
 * Replaces one node by two or more cheaper ones. Tries the {@link MAX_SPLIT_TRIES} candidates that waste the most
 * (price × the unrequested share of the node, USD/h) and keeps the move with the most USD/h saved per unit of
 * eviction cost. A plan of at most one NodeClaim is single-node consolidation's move, which ran before: it is kept
 * only when that move is found here (it is not, unless the world changed in between).
 * @param candidates within their NodePools' budgets
 * @param costs eviction cost by NodeClaim name
 * @returns the best move, and why each candidate tried was turned down
 */
export function splitSearch(
  candidates: readonly ConsolidationCandidate[],
  ctx: ConsolidationContext,
  costs: ReadonlyMap<string, number>,
): { readonly decision?: RepackDecision; readonly rejected: readonly { readonly nodeClaim: string; readonly reason: string }[] } {
  const rejected: { nodeClaim: string; reason: string }[] = [];
  const ranked = candidates
    .filter((c) => c.pods.length > 0)
    .map((c) => ({ c, waste: c.price * (1 - Math.min(1, utilisationOf(c))) }))
    .sort((a, b) => b.waste - a.waste || a.c.nodeClaim.localeCompare(b.c.nodeClaim))
    .slice(0, MAX_SPLIT_TRIES);
  let best: RepackDecision | undefined;
  for (const { c } of ranked) {
    const d = simulateRepack([c], ctx, costs);
    if (d.kind === 'none') {
      rejected.push({ nodeClaim: c.nodeClaim, reason: d.reason });
      continue;
    }
    if (!best || best.kind === 'none' || savingsPerDisruption(d) > savingsPerDisruption(best) + 1e-12) best = d;
  }
  return best ? { decision: best, rejected } : { rejected };
}
