/**
 * Cost-optimal packing of interchangeable pods into instance types, by column generation over packing patterns
 * (Gilmore and Gomory, "A Linear Programming Approach to the Cutting-Stock Problem", Operations Research 9, 1961):
 *
 * - the master LP chooses how many bins of each pattern to open, a pattern being one instance type (an
 *   *option*) with a count of pods of each class: minimise Σ_j price_j·λ_j subject to Σ_j count_c,j·λ_j ≥ n_c for
 *   every class c, λ ≥ 0 — solved by a revised simplex with an explicit basis inverse (the master has one row per
 *   class, a few dozen at most in practice);
 * - new patterns come from pricing: for each option, a bounded multi-dimensional knapsack over the classes valued
 *   at the master's dual prices (greedy, several orders), entering when its reduced cost is negative;
 * - the integral plan is rounded from the LP: whole bins of every pattern the LP opens at least once, then, for
 *   the fractional tail, one bin per round re-solving the master on what is left ("diving") — the most used
 *   pattern, and when the tail is small also the pattern whose bin plus the LP cost of the rest is lowest
 *   (lookahead), keeping the cheaper plan;
 * - small packings (at most {@link SMALL_PACKING_PODS} pods) are then searched for a cheaper plan by diving with
 *   limited discrepancy search over the master's patterns, from all the pods again (Sadykov, Vanderbeck, Pessoa,
 *   Tahiri and Uchoa, "Primal Heuristics for Branch and Price: The Assets of Diving Methods", INFORMS Journal on
 *   Computing 31, 2019): each node re-solves the master on the pods left and fixes bins of one of its patterns —
 *   the largest share of the LP cost first, the next two kept as alternatives for later dives — and is cut when its
 *   bins plus its LP cost reach the best plan. The search prices exactly: a bounded multi-dimensional knapsack per
 *   option by depth-first branch and bound with per-dimension fractional bounds (Kellerer, Pferschy and Pisinger,
 *   *Knapsack Problems*, Springer 2004), so while no knapsack search is cut short by its node limits, its LPs are
 *   the configuration LP and the cuts are sound;
 * - every bin is re-sized to the cheapest option that holds its pods, pairs of bins one cheaper option holds are
 *   merged, and for a handful of bins each pair is re-packed on its own (exhaustively when it holds at most
 *   {@link EXACT_MAX_PODS} pods).
 *
 * All work limits are counts (pivots, search nodes, master solves, bins), never time, so a packing is reproducible.
 * Packings of more than {@link SMALL_PACKING_PODS} pods skip the search and exact pricing (their cost grows fast).
 *
 * Pure arithmetic on dense vectors: no Kubernetes types. The scheduler maps pods to classes and instance types to
 * options, and checks every bin it commits exactly as it checks a pod placed alone.
 *
 * This file is the entry ({@link packClasses}); the classes, options, patterns and their arithmetic are in
 * `packing-model.ts`, the master LP in `packing-master.ts`, its pricing in `packing-pricing.ts`, and the rounding,
 * dives, merging and re-packing in `packing-rounding.ts`.
 */
import { EPS, cheapestHolding, cheapestSingle, fitCount, nonDominated, ColumnPool, type Bin, type PackingClass, type PackingOption, type Work } from './packing-model.js';
import { solveMaster } from './packing-master.js';
import { DIVE_NODES, LOOKAHEAD_PODS, discrepancyDives, lookahead, mergePairs, mostUsed, repackPairs, roundWhole } from './packing-rounding.js';

/** Identical bins of a packing. */
export interface PackedBin {
  /** Index into the options given to {@link packClasses}: the cheapest that holds the bin's pods. */
  readonly option: number;
  /** Pods per class in each bin. */
  readonly counts: readonly number[];
  /** How many such bins. */
  readonly copies: number;
}

/** What {@link packClasses} returns. */
export interface Packing {
  readonly bins: readonly PackedBin[];
  /** Pods per class left out: those no option holds alone, and any left when the work budget ran out. */
  readonly unplaced: readonly number[];
  /**
   * Objective of the first master LP, USD per hour: the cost of the fractional plan the rounding starts from (an
   * estimate of the LP bound, not a bound: pricing is heuristic).
   */
  readonly fractionalCost: number;
  /** Work done: master solves (rounds), simplex pivots, pooled columns, options after dominance. */
  readonly stats: { readonly rounds: number; readonly pivots: number; readonly pricings: number; readonly columns: number; readonly options: number };
}

/** Work limits (deterministic: counted in simplex pivots, never in time). */
export interface PackingLimits {
  /** Simplex pivots over the whole packing, all rounds together; default {@link DEFAULT_MAX_PIVOTS}. */
  readonly maxPivots?: number;
  /** Bins at most for the pairwise merge pass (quadratic); default {@link MERGE_MAX_BINS}. */
  readonly mergeMaxBins?: number;
  /** Bins at most for re-packing every pair of bins on its own ({@link REPACK_MAX_BINS}); 0 turns it off. */
  readonly repackMaxBins?: number;
  /**
   * Branch-and-bound nodes of exact pricing over the whole packing, used only by the search of packings of at most
   * {@link SMALL_PACKING_PODS} pods; default {@link EXACT_PRICING_NODES}, 0 turns exact pricing off.
   */
  readonly knapsackNodes?: number;
  /**
   * Master solves of the limited-discrepancy dives ({@link discrepancyDives}), used only by packings of at most
   * {@link SMALL_PACKING_PODS} pods; default {@link DIVE_NODES}, 0 turns them off.
   */
  readonly diveNodes?: number;
}

/** Pods at most for a packing to be *small*: searched by {@link discrepancyDives} with exact pricing. */
export const SMALL_PACKING_PODS = 60;
/** Default branch-and-bound node budget of exact pricing, one small packing. */
export const EXACT_PRICING_NODES = 100_000;

/**
 * Default bin count up to which every pair of bins is re-packed on its own (a small packing of their pods alone);
 * the pair's new bins replace it when cheaper (large-neighbourhood search, after the LP rounding).
 */
export const REPACK_MAX_BINS = 10;

/** Default pivot budget of one {@link packClasses} call. */
export const DEFAULT_MAX_PIVOTS = 20_000;
/** Default bin count up to which the merge pass tries every pair. */
export const MERGE_MAX_BINS = 400;

/**
 * Packs `classes` into bins of `options` at low total price.
 * @param classes pod classes (requests per dimension, count)
 * @param options bin types (room per dimension, USD/hour); every vector has the classes' dimensions
 * @param limits work limits; when the pivot budget runs out, the rest is packed by the greedy rounding alone
 * @returns bins grouped by content, the pods no option holds, the first LP's cost
 * @throws Error when vectors' lengths differ from the first class's, or a price is not positive
 */
export function packClasses(classes: readonly PackingClass[], options: readonly PackingOption[], limits: PackingLimits = {}): Packing {
  const d = classes[0]?.requests.length ?? 0;
  for (const c of classes) if (c.requests.length !== d) throw new Error(`packClasses: a class has ${c.requests.length} dimensions, expected ${d}`);
  for (const o of options) {
    if (o.room.length !== d) throw new Error(`packClasses: an option has ${o.room.length} dimensions, expected ${d}`);
    if (!(o.price > 0)) throw new Error(`packClasses: option price ${o.price} is not positive`);
  }
  const totalPods = classes.reduce((sum, c) => sum + c.count, 0);
  const small = totalPods <= SMALL_PACKING_PODS;
  const work: Work = { pivots: limits.maxPivots ?? DEFAULT_MAX_PIVOTS, pricings: 0, knapsackNodes: 0 };
  const kept = nonDominated(options);
  const unplaced = classes.map(() => 0);
  const left = classes.map((c, i) => {
    const placeable = kept.some((o) => fitCount(c.requests, options[o]!.room) >= 1);
    if (!placeable) unplaced[i] = c.count;
    return placeable ? c.count : 0;
  });
  const initial = [...left];
  const pool = new ColumnPool();
  let fractionalCost = Number.NaN;
  let rounds = 0;
  const budget = work.pivots;
  /**
   * Packs what `left` holds into `bins`, one master solve per round: whole bins of the LP's patterns while it opens
   * any; then (the fractional tail) one bin per round picked by `dive`, or stop there when `dive` is undefined.
   */
  const run = (left: number[], bins: number[][], dive: 'most-used' | 'lookahead' | undefined): void => {
    while (left.some((n) => n > 0)) {
      rounds++;
      const active = left.flatMap((n, c) => (n > 0 ? [c] : []));
      const lp = work.pivots > 0 ? solveMaster(classes, options, kept, active, left, pool, work) : undefined;
      if (Number.isNaN(fractionalCost)) fractionalCost = lp?.objective ?? Number.NaN;
      const chosen = lp ? roundWhole(lp.columns, left) : [];
      if (chosen.length === 0 && !dive) return;
      if (chosen.length === 0 && lp && lp.columns.length > 0) {
        chosen.push(dive === 'lookahead' ? lookahead(lp.columns, left, classes, options, kept, pool, work) : mostUsed(lp.columns, left));
      }
      if (chosen.length === 0) {
        // Out of budget: one bin of the cheapest single-class pattern for the first class left.
        const c = active[0]!;
        const o = cheapestSingle(classes[c]!.requests, left[c]!, options, kept);
        const counts = classes.map(() => 0);
        counts[c] = Math.min(left[c]!, fitCount(classes[c]!.requests, options[o]!.room));
        chosen.push(counts);
      }
      for (const counts of chosen) {
        bins.push(counts);
        counts.forEach((k, c) => (left[c]! -= k));
      }
    }
  };
  const finish = (bins: readonly number[][]) => {
    // Bins that share a counts array (copies from `roundWhole`) are sized once.
    const holding = new Map<readonly number[], number>();
    const sized = bins.map((counts) => {
      let option = holding.get(counts);
      if (option === undefined) holding.set(counts, (option = cheapestHolding(classes, counts, options, kept)));
      return { counts, option };
    });
    const merged = sized.length <= (limits.mergeMaxBins ?? MERGE_MAX_BINS) ? mergePairs(sized, classes, options, kept) : sized;
    return { merged, cost: merged.reduce((sum, b) => sum + (b.option >= 0 ? options[b.option]!.price : 0), 0) };
  };
  // Whole bins while the LP opens any; the fractional tail is dived both ways when small, keeping the cheaper plan.
  const whole: number[][] = [];
  run(left, whole, undefined);
  const tail = [...left];
  const mostUsedBins = [...whole];
  run([...tail], mostUsedBins, 'most-used');
  let best = finish(mostUsedBins);
  if (tail.reduce((a, b) => a + b, 0) <= LOOKAHEAD_PODS && tail.some((n) => n > 0) && work.pivots > 0) {
    const lookaheadBins = [...whole];
    run([...tail], lookaheadBins, 'lookahead');
    const alternative = finish(lookaheadBins);
    if (alternative.cost < best.cost - EPS) best = alternative;
  }
  if (small && work.pivots > 0 && (limits.diveNodes ?? DIVE_NODES) > 0) {
    // The search prices exactly once the greedy orders find nothing: its first solve adds the patterns they missed,
    // and while no knapsack search is cut short each node's LP is the configuration LP, a sound bound to cut with.
    work.knapsackNodes = limits.knapsackNodes ?? EXACT_PRICING_NODES;
    const searched = discrepancyDives(classes, options, kept, pool, work, initial, best.cost, limits.diveNodes ?? DIVE_NODES, finish);
    if (searched && searched.cost < best.cost - EPS) best = searched;
  }
  const merged = repackPairs(best.merged, classes, options, kept, limits.repackMaxBins ?? REPACK_MAX_BINS, (counts) => packAlone(classes, options, counts));
  return { bins: group(merged), unplaced, fractionalCost, stats: { rounds, pivots: budget - work.pivots, pricings: work.pricings, columns: pool.columns.length, options: kept.length } };
}

/**
 * Pods `counts` (per class of `classes`) packed on their own, for {@link repackPairs}: no re-packing of pairs, merging
 * of 4 bins at most, no exact pricing and no dives; one bin per copy. Undefined when some pods are left out.
 */
function packAlone(classes: readonly PackingClass[], options: readonly PackingOption[], counts: readonly number[]): Bin[] | undefined {
  const packed = packClasses(
    classes.map((c, k) => ({ requests: c.requests, count: counts[k]! })),
    options,
    { repackMaxBins: 0, mergeMaxBins: 4, knapsackNodes: 0, diveNodes: 0 },
  );
  if (packed.unplaced.some((n) => n > 0)) return undefined;
  return packed.bins.flatMap((x) => Array.from({ length: x.copies }, () => ({ counts: [...x.counts], option: x.option })));
}

/** Groups identical bins (same option and counts). */
function group(bins: readonly { counts: number[]; option: number }[]): PackedBin[] {
  const byKey = new Map<string, { option: number; counts: number[]; copies: number }>();
  // Consecutive copies sharing one counts array (see `roundWhole`) are counted without building their key.
  let last: { option: number; counts: number[]; copies: number } | undefined;
  for (const b of bins) {
    if (last && last.counts === b.counts && last.option === b.option) {
      last.copies++;
      continue;
    }
    const key = `${b.option}:${b.counts.join(',')}`;
    last = byKey.get(key);
    if (last) last.copies++;
    else byKey.set(key, (last = { option: b.option, counts: b.counts, copies: 1 }));
  }
  return [...byKey.values()];
}
