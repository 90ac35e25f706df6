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
 */

/** A class of interchangeable pods. */
export interface PackingClass {
  /** Requests per dimension, canonical units (millicores, MiB, pod slots, devices), each ≥ 0. */
  readonly requests: readonly number[];
  /** Pods in the class, an integer ≥ 0. */
  readonly count: number;
}

/** An instance type a bin can be. */
export interface PackingOption {
  /** Room per dimension: allocatable minus daemonset overhead, the classes' units. */
  readonly room: readonly number[];
  /** USD per hour, > 0. */
  readonly price: number;
}

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
/** Branch-and-bound nodes at most for one exact pricing (one option, one round). */
const EXACT_PRICING_NODES_PER_OPTION = 5_000;

/** Work left and done in one packing (all counts). */
interface Work {
  /** Simplex pivots left. */
  pivots: number;
  /** Heuristic pricings done. */
  pricings: number;
  /** Exact-pricing search nodes left (0: heuristic pricing only). */
  knapsackNodes: number;
}

/**
 * Default bin count up to which every pair of bins is re-packed on its own (a small packing of their pods alone);
 * the pair's new bins replace it when cheaper (large-neighbourhood search, after the LP rounding).
 */
export const REPACK_MAX_BINS = 10;

/** Default pivot budget of one {@link packClasses} call. */
export const DEFAULT_MAX_PIVOTS = 20_000;
/** Default bin count up to which the merge pass tries every pair. */
export const MERGE_MAX_BINS = 400;

/** Tolerance on resources (as `fits` in resource-list.ts). */
const FIT = 1e-6;
/** Tolerance of the simplex. */
const EPS = 1e-9;
/** Pivots between re-inversions of the basis (bounds the drift of the product-form updates). */
const REFACTOR_EVERY = 50;

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
  const merged = repackPairs(best.merged, classes, options, kept, limits.repackMaxBins ?? REPACK_MAX_BINS);
  return { bins: group(merged), unplaced, fractionalCost, stats: { rounds, pivots: budget - work.pivots, pricings: work.pricings, columns: pool.columns.length, options: kept.length } };
}

/** Indices of options not dominated by another (no dearer, at least the room in every dimension), cheapest first. */
function nonDominated(options: readonly PackingOption[]): number[] {
  const order = options.map((_, i) => i);
  // Callers usually pass options cheapest first already.
  if (options.some((o, i) => i > 0 && o.price < options[i - 1]!.price)) order.sort((a, b) => options[a]!.price - options[b]!.price || a - b);
  const d = options[0]?.room.length ?? 0;
  const rooms = new Float64Array(options.length * d);
  const kept: number[] = [];
  for (const i of order) {
    const room = options[i]!.room;
    let dominated = false;
    for (let k = 0; k < kept.length && !dominated; k++) {
      let covers = true;
      for (let j = 0; j < d && covers; j++) covers = rooms[k * d + j]! >= room[j]! - FIT;
      dominated = covers; // kept options are no dearer (cheapest first)
    }
    if (dominated) continue;
    for (let j = 0; j < d; j++) rooms[kept.length * d + j] = room[j]!;
    kept.push(i);
  }
  return kept;
}

/** How many pods of `requests` fit in `room` (Infinity when they request nothing). */
function fitCount(requests: ArrayLike<number>, room: ArrayLike<number>): number {
  let n = Number.POSITIVE_INFINITY;
  for (let j = 0; j < requests.length; j++) {
    const r = requests[j]!;
    if (r > FIT) n = Math.min(n, Math.floor((room[j]! + FIT) / r));
  }
  return Math.max(0, n);
}

/** The option with the lowest price per pod for `count` pods of one class packed alone (kept options only). */
function cheapestSingle(requests: readonly number[], count: number, options: readonly PackingOption[], kept: readonly number[]): number {
  let best = -1;
  let bestPerPod = Number.POSITIVE_INFINITY;
  for (const o of kept) {
    const k = Math.min(count, fitCount(requests, options[o]!.room));
    if (k < 1) continue;
    const perPod = options[o]!.price / k;
    if (perPod < bestPerPod - EPS) [best, bestPerPod] = [o, perPod];
  }
  return best;
}

/** The cheapest kept option whose room holds `counts` pods of `classes` (−1 when none). */
function cheapestHolding(classes: readonly PackingClass[], counts: readonly number[], options: readonly PackingOption[], kept: readonly number[]): number {
  const load = loadOf(classes, counts);
  for (const o of kept) if (holds(options[o]!.room, load)) return o;
  return -1;
}

function loadOf(classes: readonly PackingClass[], counts: readonly number[]): number[] {
  const d = classes[0]?.requests.length ?? 0;
  const load = new Array<number>(d).fill(0);
  counts.forEach((k, c) => {
    if (k > 0) for (let j = 0; j < d; j++) load[j]! += k * classes[c]!.requests[j]!;
  });
  return load;
}

function holds(room: readonly number[], load: readonly number[]): boolean {
  for (let j = 0; j < load.length; j++) if (load[j]! > room[j]! + FIT) return false;
  return true;
}

/** A packing pattern: one option holding `counts` pods per class. */
interface Column {
  readonly option: number;
  readonly counts: readonly number[];
  readonly price: number;
}

/** Columns generated so far, deduplicated, kept across rounds (each round caps them to the pods left). */
class ColumnPool {
  private readonly byKey = new Map<string, Column>();
  readonly columns: Column[] = [];
  /** Adds `column` unless an equal one is pooled; returns the pooled one and whether it is new. */
  add(column: Column): { column: Column; added: boolean } {
    const key = `${column.option}:${column.counts.join(',')}`;
    const hit = this.byKey.get(key);
    if (hit) return { column: hit, added: false };
    this.byKey.set(key, column);
    this.columns.push(column);
    return { column, added: true };
  }
}

/** A basic column of the master's optimum with its value (bins, fractional). */
interface BasicColumn {
  readonly column: Column;
  readonly value: number;
}

/**
 * Solves the master LP over the `active` classes (rows) for demand `left`: the simplex runs over the pooled
 * columns until none prices out, then pricing adds each option's best new pattern to the pool, until pricing finds
 * none with a negative reduced cost or the pivot budget is spent.
 * @returns the basic pattern columns with positive value and the objective (USD/hour), or undefined when the basis
 *   could not be inverted
 */
function solveMaster(
  classes: readonly PackingClass[],
  options: readonly PackingOption[],
  kept: readonly number[],
  active: readonly number[],
  left: readonly number[],
  pool: ColumnPool,
  work: Work,
  price = true,
): { columns: BasicColumn[]; objective: number } | undefined {
  const m = active.length;
  const rowOf = new Int32Array(classes.length).fill(-1);
  active.forEach((c, i) => (rowOf[c] = i));
  const demand = Float64Array.from(active, (c) => left[c]!);
  const vectorOf = (col: Column): Float64Array => {
    const a = new Float64Array(m);
    col.counts.forEach((k, c) => {
      const i = rowOf[c]!;
      if (i >= 0 && k > 0) a[i] = Math.min(k, left[c]!);
    });
    return a;
  };
  type Basic = { column: Column; a: Float64Array } | { surplus: number };
  // Initial basis: one single-class pattern per row (diagonal, feasible).
  const basis: Basic[] = active.map((c) => {
    const o = cheapestSingle(classes[c]!.requests, left[c]!, options, kept);
    const counts = classes.map(() => 0);
    counts[c] = Math.min(left[c]!, fitCount(classes[c]!.requests, options[o]!.room));
    const { column } = pool.add({ option: o, counts, price: options[o]!.price });
    return { column, a: vectorOf(column) };
  });
  const priceOf = (b: Basic) => ('column' in b ? b.column.price : 0);
  const vecOf = (b: Basic): Float64Array => {
    if ('column' in b) return b.a;
    const a = new Float64Array(m);
    a[b.surplus] = -1;
    return a;
  };
  let inverse = invert(basis.map(vecOf), m);
  if (!inverse) return undefined;
  let x = multiply(inverse, demand, m);
  let sinceRefactor = 0;
  const dual = new Float64Array(m);
  const computeDuals = () => {
    dual.fill(0);
    for (let k = 0; k < m; k++) {
      const p = priceOf(basis[k]!);
      if (p === 0) continue;
      for (let i = 0; i < m; i++) dual[i]! += p * inverse![k * m + i]!;
    }
  };
  // Pooled columns as sparse vectors over this solve's rows (counts capped at the pods left), built once each.
  const sparseRows: Int32Array[] = [];
  const sparseValues: Float64Array[] = [];
  const sparse = (index: number): void => {
    const counts = pool.columns[index]!.counts;
    let nnz = 0;
    for (let c = 0; c < counts.length; c++) if (counts[c]! > 0 && rowOf[c]! >= 0) nnz++;
    const rows = new Int32Array(nnz);
    const values = new Float64Array(nnz);
    for (let c = 0, t = 0; c < counts.length; c++) {
      if (counts[c]! === 0 || rowOf[c]! < 0) continue;
      rows[t] = rowOf[c]!;
      values[t++] = Math.min(counts[c]!, left[c]!);
    }
    sparseRows[index] = rows;
    sparseValues[index] = values;
  };
  const reducedCost = (index: number): number => {
    if (index >= sparseRows.length) for (let k = sparseRows.length; k <= index; k++) sparse(k);
    const rows = sparseRows[index]!;
    const values = sparseValues[index]!;
    let value = 0;
    for (let t = 0; t < rows.length; t++) value += dual[rows[t]!]! * values[t]!;
    return pool.columns[index]!.price - value;
  };
  /** One pivot with `entering`; false when the ratio test finds no leaving row (cannot happen with positive prices). */
  const pivot = (entering: Basic): boolean => {
    const a = vecOf(entering);
    const dir = multiply(inverse!, a, m);
    let leave = -1;
    let theta = Number.POSITIVE_INFINITY;
    for (let i = 0; i < m; i++) {
      if (dir[i]! <= EPS) continue;
      const t = x[i]! / dir[i]!;
      if (t < theta - EPS || (t <= theta + EPS && leave >= 0 && dir[i]! > dir[leave]!)) [theta, leave] = [t, i];
    }
    if (leave < 0) return false;
    basis[leave] = entering;
    if (++sinceRefactor >= REFACTOR_EVERY) {
      sinceRefactor = 0;
      const fresh = invert(basis.map(vecOf), m);
      if (fresh) {
        inverse = fresh;
        x = multiply(inverse, demand, m);
        return true;
      }
    }
    const pv = dir[leave]!;
    const inv = inverse!;
    for (let j = 0; j < m; j++) inv[leave * m + j]! /= pv;
    x[leave] = theta;
    for (let i = 0; i < m; i++) {
      if (i === leave) continue;
      const f = dir[i]!;
      if (f === 0) continue;
      for (let j = 0; j < m; j++) inv[i * m + j]! -= f * inv[leave * m + j]!;
      x[i] = Math.max(0, x[i]! - f * theta);
    }
    return true;
  };
  // Candidate options: those that hold at least one pod of an active class and are not dominated once rooms are
  // capped at the demand left (room beyond what all the pods need buys nothing: of the options that hold everything,
  // only the cheapest stays).
  const d = classes[0]!.requests.length;
  const need = new Array<number>(d).fill(0);
  for (const c of active) for (let j = 0; j < d; j++) need[j]! += left[c]! * classes[c]!.requests[j]!;
  const candidates: number[] = [];
  const cappedRooms = new Float64Array(kept.length * d);
  const room = new Float64Array(d);
  for (const o of kept) {
    const full = options[o]!.room;
    let holdsOne = false;
    for (let i = 0; i < m && !holdsOne; i++) holdsOne = fitCount(classes[active[i]!]!.requests, full) >= 1;
    if (!holdsOne) continue;
    for (let j = 0; j < d; j++) room[j] = Math.min(full[j]!, need[j]!);
    // `kept` is cheapest first: an earlier candidate with at least this capped room dominates.
    let dominated = false;
    for (let k = 0; k < candidates.length && !dominated; k++) {
      let covers = true;
      for (let j = 0; j < d && covers; j++) covers = cappedRooms[k * d + j]! >= room[j]! - FIT;
      dominated = covers;
    }
    if (dominated) continue;
    cappedRooms.set(room, candidates.length * d);
    candidates.push(o);
  }
  const threshold = (price: number) => -EPS * Math.max(1, price);
  const scratch = new PricingScratch(classes.length, d, m);
  const bounds = new KnapsackBound(classes, active, left, d);
  for (;;) {
    // Simplex over the pool (and the surplus columns) to its optimum.
    while (work.pivots > 0) {
      computeDuals();
      let surplus = -1;
      let enteringColumn: Column | undefined;
      let best = 0;
      for (let i = 0; i < m; i++) if (dual[i]! < Math.min(best, -EPS)) [surplus, best] = [i, dual[i]!];
      for (let index = 0; index < pool.columns.length; index++) {
        const column = pool.columns[index]!;
        const r = reducedCost(index);
        if (r < Math.min(best, threshold(column.price))) [enteringColumn, best] = [column, r];
      }
      const entering: Basic | undefined = enteringColumn ? { column: enteringColumn, a: vectorOf(enteringColumn) } : surplus >= 0 ? { surplus } : undefined;
      if (!entering) break;
      work.pivots--;
      if (!pivot(entering)) break;
    }
    if (work.pivots <= 0 || !price) break;
    // Pricing: each option's best pattern at the current duals joins the pool when it prices out.
    computeDuals();
    bounds.orderRows(dual);
    let added = 0;
    for (const o of candidates) {
      // Skip options whose patterns cannot price out (bounded fractional-knapsack bound, see `KnapsackBound`).
      if (options[o]!.price + threshold(options[o]!.price) >= bounds.bound(options[o]!.room, dual)) continue;
      work.pricings++;
      const bestCounts = pricePattern(classes, options[o]!.room, active, left, dual, options[o]!.price + threshold(options[o]!.price), scratch);
      if (bestCounts && pool.add({ option: o, counts: bestCounts, price: options[o]!.price }).added) added++;
    }
    // The small-packing search: when the greedy orders find nothing, price exactly (the LP is then the
    // configuration LP, unless a knapsack search is cut short).
    if (added === 0 && work.knapsackNodes > 0) {
      const knapsack = new KnapsackScratch(classes, active, left, dual, d);
      for (const o of candidates) {
        if (work.knapsackNodes <= 0) break;
        const minValue = options[o]!.price + threshold(options[o]!.price);
        const bestCounts = knapsack.solve(options[o]!.room, minValue, work);
        if (bestCounts && pool.add({ option: o, counts: bestCounts, price: options[o]!.price }).added) added++;
      }
    }
    if (added === 0) break;
  }
  const columns: BasicColumn[] = [];
  let objective = 0;
  basis.forEach((b, i) => {
    if (!('column' in b) || x[i]! <= EPS) return;
    columns.push({ column: b.column, value: x[i]! });
    objective += b.column.price * x[i]!;
  });
  return { columns, objective };
}

/** Inverse of the square matrix with `columns` as columns (row-major result), or undefined when singular. */
function invert(columns: readonly Float64Array[], m: number): Float64Array | undefined {
  const a = new Float64Array(m * m);
  for (let j = 0; j < m; j++) for (let i = 0; i < m; i++) a[i * m + j] = columns[j]![i]!;
  const inv = new Float64Array(m * m);
  for (let i = 0; i < m; i++) inv[i * m + i] = 1;
  for (let col = 0; col < m; col++) {
    let p = col;
    for (let r = col + 1; r < m; r++) if (Math.abs(a[r * m + col]!) > Math.abs(a[p * m + col]!)) p = r;
    if (Math.abs(a[p * m + col]!) < 1e-12) return undefined;
    if (p !== col)
      for (let j = 0; j < m; j++) {
        [a[p * m + j], a[col * m + j]] = [a[col * m + j]!, a[p * m + j]!];
        [inv[p * m + j], inv[col * m + j]] = [inv[col * m + j]!, inv[p * m + j]!];
      }
    const pv = a[col * m + col]!;
    for (let j = 0; j < m; j++) {
      a[col * m + j]! /= pv;
      inv[col * m + j]! /= pv;
    }
    for (let r = 0; r < m; r++) {
      if (r === col) continue;
      const f = a[r * m + col]!;
      if (f === 0) continue;
      for (let j = 0; j < m; j++) {
        a[r * m + j]! -= f * a[col * m + j]!;
        inv[r * m + j]! -= f * inv[col * m + j]!;
      }
    }
  }
  return inv;
}

/** `matrix` (m × m, row-major) times `v`. */
function multiply(matrix: Float64Array, v: Float64Array, m: number): Float64Array {
  const out = new Float64Array(m);
  for (let i = 0; i < m; i++) {
    let s = 0;
    for (let j = 0; j < m; j++) s += matrix[i * m + j]! * v[j]!;
    out[i] = s;
  }
  return out;
}

/**
 * An upper bound on the dual value Σ_c y_c·a_c of any pattern of one option: for each dimension j alone, the
 * fractional knapsack over the classes with at most min(pods left, pods that fit the room) of each class, filled by
 * decreasing y_c / request_c,j (Dantzig's bound, "Discrete-variable extremum problems", Operations Research 5, 1957);
 * the least over the dimensions. Every pattern meets each dimension's capacity and the count bounds, so none is
 * worth more. Bounding counts by the pods left is what makes it tight in the diving rounds, where few pods remain.
 * Exported for its tests; the master's pricing is its only user.
 */
export class KnapsackBound {
  /** Rows (indexes into `active`) with a positive dual, by decreasing value density, per dimension (row-major). */
  private readonly order: Int32Array;
  private rows = 0;
  constructor(
    private readonly classes: readonly PackingClass[],
    private readonly active: readonly number[],
    private readonly left: readonly number[],
    private readonly d: number,
  ) {
    this.order = new Int32Array(active.length * d);
  }

  /** Sorts the rows with a positive dual by density in each dimension, once per pricing pass. */
  orderRows(dual: Float64Array): void {
    const rows: number[] = [];
    for (let i = 0; i < this.active.length; i++) if (dual[i]! > EPS) rows.push(i);
    this.rows = rows.length;
    for (let j = 0; j < this.d; j++) {
      const density = (i: number) => {
        const req = this.classes[this.active[i]!]!.requests[j]!;
        return req > FIT ? dual[i]! / req : Number.POSITIVE_INFINITY;
      };
      rows.sort((a, b) => density(b) - density(a) || a - b);
      this.order.set(rows, j * this.active.length);
    }
  }

  /** Per option (by room array): pods of each row at most, min(pods left, pods that fit the room alone). */
  private readonly most = new Map<readonly number[], Float64Array>();

  /** The bound for an option of `room` at the duals last given to {@link orderRows}. */
  bound(room: readonly number[], dual: Float64Array): number {
    const m = this.active.length;
    let most = this.most.get(room);
    if (!most) {
      most = new Float64Array(m);
      for (let i = 0; i < m; i++) most[i] = Math.min(this.left[this.active[i]!]!, fitCount(this.classes[this.active[i]!]!.requests, room));
      this.most.set(room, most);
    }
    let best = Number.POSITIVE_INFINITY;
    for (let j = 0; j < this.d && best > 0; j++) {
      let free = room[j]!;
      let value = 0;
      for (let t = 0; t < this.rows; t++) {
        const i = this.order[j * m + t]!;
        const req = this.classes[this.active[i]!]!.requests;
        const k = most[i]!;
        if (k <= 0) continue;
        const r = req[j]!;
        if (r <= FIT) {
          value += dual[i]! * k;
          continue;
        }
        if (free <= FIT) break;
        const take = Math.min(k, free / r);
        value += dual[i]! * take;
        free -= take * r;
      }
      best = Math.min(best, value);
    }
    return best;
  }
}

/** Reusable buffers of {@link pricePattern} (one solve's worth). */
class PricingScratch {
  readonly counts: Float64Array;
  readonly rem: Float64Array;
  readonly items: Int32Array;
  readonly value: Float64Array;
  readonly size: Float64Array;
  readonly order: number[] = [];
  constructor(classes: number, d: number, rows: number) {
    this.counts = new Float64Array(classes);
    this.rem = new Float64Array(d);
    this.items = new Int32Array(rows);
    this.value = new Float64Array(rows);
    this.size = new Float64Array(rows);
  }
}

/**
 * Pricing for one option: patterns filled greedily at the dual prices `dual` (per row of `active`) in three orders —
 * value per unit of normalised size, value alone, and value per size re-weighted by the room still free (a quarter
 * of what fits at a time) — and the most valuable kept when its value exceeds `minValue` (the option's price: the
 * pattern then has a negative reduced cost).
 * @returns pods per class of the best pattern, or undefined when none prices out
 */
function pricePattern(
  classes: readonly PackingClass[],
  room: readonly number[],
  active: readonly number[],
  left: readonly number[],
  dual: Float64Array,
  minValue: number,
  scratch: PricingScratch,
): number[] | undefined {
  const d = room.length;
  const { items, value, size, counts, rem } = scratch;
  let n = 0;
  for (let i = 0; i < active.length; i++) {
    const y = dual[i]!;
    if (y <= EPS) continue;
    const req = classes[active[i]!]!.requests;
    if (fitCount(req, room) < 1) continue;
    let s = 0;
    for (let j = 0; j < d; j++) if (room[j]! > FIT) s += req[j]! / room[j]!;
    items[n] = active[i]!;
    value[n] = y;
    size[n] = Math.max(s, EPS);
    n++;
  }
  if (n === 0) return undefined;
  let best: number[] | undefined;
  let bestValue = minValue;
  const keep = (total: number) => {
    if (total <= bestValue) return;
    bestValue = total;
    best = Array.from(counts);
  };
  const fill = (order: readonly number[]) => {
    counts.fill(0);
    for (let j = 0; j < d; j++) rem[j] = room[j]!;
    let total = 0;
    for (const t of order) {
      const c = items[t]!;
      const req = classes[c]!.requests;
      const k = Math.min(left[c]!, fitCount(req, rem));
      if (k <= 0) continue;
      counts[c] = k;
      total += k * value[t]!;
      for (let j = 0; j < d; j++) rem[j]! -= k * req[j]!;
    }
    keep(total);
  };
  const order = scratch.order;
  order.length = n;
  for (let t = 0; t < n; t++) order[t] = t;
  fill(order.sort((a, b) => value[b]! / size[b]! - value[a]! / size[a]!));
  fill(order.sort((a, b) => value[b]! - value[a]!));
  // Dynamic: value per size against the room still free, a quarter of what fits at a time.
  counts.fill(0);
  for (let j = 0; j < d; j++) rem[j] = room[j]!;
  let total = 0;
  for (;;) {
    let pick = -1;
    let pickScore = -1;
    for (let t = 0; t < n; t++) {
      const c = items[t]!;
      const req = classes[c]!.requests;
      if (counts[c]! >= left[c]! || fitCount(req, rem) < 1) continue;
      let s = 0;
      for (let j = 0; j < d; j++) if (req[j]! > FIT) s += req[j]! / Math.max(rem[j]!, FIT);
      const score = value[t]! / Math.max(s, EPS);
      if (score > pickScore) [pick, pickScore] = [t, score];
    }
    if (pick < 0) break;
    const c = items[pick]!;
    const req = classes[c]!.requests;
    const k = Math.max(1, Math.min(left[c]! - counts[c]!, Math.floor(fitCount(req, rem) / 4)));
    counts[c]! += k;
    total += k * value[pick]!;
    for (let j = 0; j < d; j++) rem[j]! -= k * req[j]!;
  }
  keep(total);
  return best;
}

/**
 * Exact pricing: the most valuable pattern of one option at the dual prices, a bounded multi-dimensional integer
 * knapsack solved by depth-first branch and bound (Kellerer, Pferschy and Pisinger, *Knapsack Problems*, 2004):
 * items (classes with a positive dual) in order of value per normalised size, each branched on its count from
 * the most that fits down to 0; a node is pruned when its value plus an upper bound on the rest cannot beat the best —
 * the bound is the least, over dimensions, of that dimension's fractional knapsack over the items not yet branched
 * (each relaxes the problem, so each bounds it). Node-limited: it then returns the best pattern found.
 */
class KnapsackScratch {
  private readonly n: number;
  private readonly item: Int32Array;
  private readonly value: Float64Array;
  /** Per dimension, item indices by value per unit of that dimension, densest first. */
  private readonly byDensity: Int32Array[];
  private readonly pos: Int32Array;
  private readonly cap: Float64Array;
  private readonly counts: Float64Array;
  private readonly rem: Float64Array;
  constructor(
    private readonly classes: readonly PackingClass[],
    active: readonly number[],
    private readonly left: readonly number[],
    dual: Float64Array,
    private readonly d: number,
  ) {
    const item: number[] = [];
    const value: number[] = [];
    active.forEach((c, i) => {
      if (dual[i]! > EPS) [item.push(c), value.push(dual[i]!)];
    });
    this.n = item.length;
    this.item = Int32Array.from(item);
    this.value = Float64Array.from(value);
    this.byDensity = Array.from({ length: d }, (_, j) => {
      const density = (t: number) => {
        const r = classes[item[t]!]!.requests[j]!;
        return r > FIT ? value[t]! / r : Number.POSITIVE_INFINITY;
      };
      return Int32Array.from(item.map((_, t) => t).sort((a, b) => density(b) - density(a) || a - b));
    });
    this.pos = new Int32Array(this.n);
    this.cap = new Float64Array(this.n);
    this.counts = new Float64Array(classes.length);
    this.rem = new Float64Array(d);
  }

  /** The best pattern of an option with `room` worth more than `minValue`, or undefined (see the class doc). */
  solve(room: readonly number[], minValue: number, work: Work): number[] | undefined {
    const { n, d, classes, item, value, pos, cap, counts, rem } = this;
    const order: number[] = [];
    const size = new Float64Array(n);
    for (let t = 0; t < n; t++) {
      const req = classes[item[t]!]!.requests;
      cap[t] = Math.min(this.left[item[t]!]!, fitCount(req, room));
      if (cap[t]! < 1) continue;
      let s = 0;
      for (let j = 0; j < d; j++) if (room[j]! > FIT) s += req[j]! / room[j]!;
      size[t] = Math.max(s, EPS);
      order.push(t);
    }
    if (order.length === 0) return undefined;
    order.sort((a, b) => value[b]! / size[b]! - value[a]! / size[a]! || a - b);
    pos.fill(n);
    order.forEach((t, i) => (pos[t] = i));
    for (let j = 0; j < d; j++) rem[j] = room[j]!;
    counts.fill(0);
    let best: number[] | undefined;
    let bestValue = minValue;
    let nodes = Math.min(work.knapsackNodes, EXACT_PRICING_NODES_PER_OPTION);
    const used = nodes;
    /** Upper bound on the value the items from `from` on (branching order) add within `rem`. */
    const bound = (from: number): number => {
      let ub = Number.POSITIVE_INFINITY;
      for (let j = 0; j < d && ub > 0; j++) {
        let room = rem[j]!;
        let total = 0;
        for (const t of this.byDensity[j]!) {
          if (pos[t]! < from || pos[t]! >= n) continue;
          const r = classes[item[t]!]!.requests[j]!;
          const k = r > FIT ? Math.min(cap[t]!, room / r) : cap[t]!;
          total += k * value[t]!;
          if (r > FIT) {
            room -= k * r;
            if (room <= FIT) break;
          }
        }
        ub = Math.min(ub, total);
      }
      return ub;
    };
    const dfs = (i: number, total: number): void => {
      if (nodes <= 0) return;
      nodes--;
      if (total > bestValue + EPS) [bestValue, best] = [total, Array.from(counts)];
      if (i >= order.length || total + bound(i) <= bestValue + EPS) return;
      const t = order[i]!;
      const c = item[t]!;
      const req = classes[c]!.requests;
      for (let k = Math.min(cap[t]!, fitCount(req, rem)); k >= 0 && nodes > 0; k--) {
        for (let j = 0; j < d; j++) rem[j]! -= k * req[j]!;
        counts[c] = k;
        dfs(i + 1, total + k * value[t]!);
        for (let j = 0; j < d; j++) rem[j]! += k * req[j]!;
      }
      counts[c] = 0;
    };
    dfs(0, 0);
    work.knapsackNodes -= used - Math.max(nodes, 0);
    return best;
  }
}

/** Whole bins of every pattern the LP opens at least once (⌊λ⌋ each, most used first), capped to the pods left. */
function roundWhole(columns: readonly BasicColumn[], leftIn: readonly number[]): number[][] {
  const left = [...leftIn];
  const out: number[][] = [];
  for (const { column, value } of [...columns].sort((a, b) => b.value - a.value)) {
    for (let n = Math.floor(value + 1e-7); n > 0; ) {
      const capped = column.counts.map((k, c) => Math.min(k, left[c]!));
      // Copies that fit whole share one counts array (a large packing has thousands of identical bins).
      let copies = n;
      for (let c = 0; c < capped.length; c++) if (capped[c]! > 0) copies = Math.min(copies, Math.floor(left[c]! / capped[c]!));
      if (copies === 0) break;
      capped.forEach((k, c) => (left[c]! -= k * copies));
      for (let i = 0; i < copies; i++) out.push(capped);
      n -= copies;
    }
  }
  return out;
}

/** Pods at most in the fractional tail for it to be rounded with {@link lookahead} too (the cheaper plan is kept). */
export const LOOKAHEAD_PODS = 200;
/** Candidate patterns {@link lookahead} evaluates per bin. */
export const LOOKAHEAD_CANDIDATES = 8;

/**
 * One bin for the fractional tail (every pattern below one bin in the LP): among the most used patterns, the one
 * whose bin price plus the LP cost of what it leaves (over the pooled columns, no new pricing) is lowest; the most
 * used pattern alone when many pods are left.
 */
/** The most used pattern's bin, capped to the pods left. */
function mostUsed(columns: readonly BasicColumn[], left: readonly number[]): number[] {
  const top = columns.reduce((a, b) => (b.value > a.value ? b : a));
  return top.column.counts.map((k, c) => Math.min(k, left[c]!));
}

function lookahead(
  columns: readonly BasicColumn[],
  left: readonly number[],
  classes: readonly PackingClass[],
  options: readonly PackingOption[],
  kept: readonly number[],
  pool: ColumnPool,
  work: Work,
): number[] {
  const sorted = [...columns].sort((a, b) => b.value - a.value);
  const capped = (column: Column) => column.counts.map((k, c) => Math.min(k, left[c]!));
  let best: { counts: number[]; score: number } | undefined;
  for (const { column } of sorted.slice(0, LOOKAHEAD_CANDIDATES)) {
    const counts = capped(column);
    const option = cheapestHolding(classes, counts, options, kept);
    if (option < 0 || counts.every((k) => k === 0)) continue;
    const rest = left.map((n, c) => n - counts[c]!);
    const active = rest.flatMap((n, c) => (n > 0 ? [c] : []));
    const after = active.length === 0 ? { objective: 0 } : solveMaster(classes, options, kept, active, rest, pool, work, false);
    if (!after) continue;
    const score = options[option]!.price + after.objective;
    if (!best || score < best.score - EPS) best = { counts, score };
  }
  return best?.counts ?? capped(sorted[0]!.column);
}

/**
 * Merges pairs of bins whose pods one option holds for less than the two cost, cheapest merge first, until none
 * helps. Bins whose pods fit no option are left as they are.
 */
function mergePairs(
  binsIn: readonly { counts: number[]; option: number }[],
  classes: readonly PackingClass[],
  options: readonly PackingOption[],
  kept: readonly number[],
): { counts: number[]; option: number }[] {
  const bins = [...binsIn];
  for (let improved = true; improved; ) {
    improved = false;
    for (let i = 0; i < bins.length && !improved; i++) {
      for (let j = i + 1; j < bins.length; j++) {
        const [a, b] = [bins[i]!, bins[j]!];
        if (a.option < 0 || b.option < 0) continue;
        const counts = a.counts.map((k, c) => k + b.counts[c]!);
        const o = cheapestHolding(classes, counts, options, kept);
        if (o < 0 || options[o]!.price >= options[a.option]!.price + options[b.option]!.price - EPS) continue;
        bins[i] = { counts, option: o };
        bins.splice(j, 1);
        improved = true;
        break;
      }
    }
  }
  return bins;
}

/**
 * Re-packs each pair of bins alone (their pods as a packing of their own, without this pass) and keeps the result
 * when it costs less than the pair, until no pair improves. Only for at most `maxBins` bins (quadratic, and each
 * pair is a small packing).
 */
function repackPairs(binsIn: readonly { counts: number[]; option: number }[], classes: readonly PackingClass[], options: readonly PackingOption[], kept: readonly number[], maxBins: number): { counts: number[]; option: number }[] {
  if (binsIn.length > maxBins || binsIn.length < 2) return [...binsIn];
  const bins = [...binsIn];
  const price = (b: { option: number }) => (b.option >= 0 ? options[b.option]!.price : Number.POSITIVE_INFINITY);
  for (let improved = true, passes = 0; improved && passes < maxBins; passes++) {
    improved = false;
    for (let i = 0; i < bins.length && !improved; i++) {
      for (let j = i + 1; j < bins.length && !improved; j++) {
        const [a, b] = [bins[i]!, bins[j]!];
        const before = price(a) + price(b);
        if (!Number.isFinite(before)) continue;
        const counts = a.counts.map((k, c) => k + b.counts[c]!);
        const exact = exactSmall(classes, counts, options, kept, before);
        let replacement: { counts: number[]; option: number }[];
        if (exact) replacement = exact;
        else {
          if (counts.reduce((x, y) => x + y, 0) <= EXACT_MAX_PODS) continue; // searched: nothing cheaper
          const packed = packClasses(
            classes.map((c, k) => ({ requests: c.requests, count: counts[k]! })),
            options,
            { repackMaxBins: 0, mergeMaxBins: 4, knapsackNodes: 0, diveNodes: 0 },
          );
          if (packed.unplaced.some((n) => n > 0)) continue;
          replacement = packed.bins.flatMap((x) => Array.from({ length: x.copies }, () => ({ counts: [...x.counts], option: x.option })));
        }
        const after = replacement.reduce((sum, x) => sum + price(x), 0);
        if (after >= before - EPS) continue;
        bins.splice(j, 1);
        bins.splice(i, 1, ...replacement);
        improved = true;
      }
    }
  }
  return bins;
}

/** Pods at most for {@link exactSmall}'s exhaustive search. */
export const EXACT_MAX_PODS = 10;
/** Search nodes at most for one {@link exactSmall} call (then it gives up: deterministic work bound). */
const EXACT_MAX_NODES = 4_000;

/**
 * The cheapest packing of `counts` pods per class below `ceiling` USD/hour, by exhaustive search: each new bin holds
 * the first pod left, in every option and every content (most pods first), pruned by the best plan so far. Undefined
 * when there are more than {@link EXACT_MAX_PODS} pods, none is cheaper than `ceiling`, or the search ran out of nodes.
 */
function exactSmall(classes: readonly PackingClass[], counts: readonly number[], options: readonly PackingOption[], kept: readonly number[], ceiling: number): { counts: number[]; option: number }[] | undefined {
  if (counts.reduce((a, b) => a + b, 0) > EXACT_MAX_PODS) return undefined;
  const d = classes[0]?.requests.length ?? 0;
  const left = [...counts];
  const used = counts.flatMap((n, c) => (n > 0 ? [c] : []));
  // Options that hold a pod, not dominated once rooms are capped at what these pods need (cheapest first).
  const need = new Array<number>(d).fill(0);
  for (const c of used) for (let j = 0; j < d; j++) need[j]! += counts[c]! * classes[c]!.requests[j]!;
  const candidates: number[] = [];
  const rooms: number[][] = [];
  for (const o of kept) {
    if (!used.some((c) => fitCount(classes[c]!.requests, options[o]!.room) >= 1)) continue;
    const room = options[o]!.room.map((r, j) => Math.min(r, need[j]!));
    if (rooms.some((q) => q.every((r, j) => r >= room[j]! - FIT))) continue;
    candidates.push(o);
    rooms.push(room);
  }
  let best: { counts: number[]; option: number }[] | undefined;
  let bestCost = ceiling - EPS;
  let nodes = 0;
  const stack: { counts: number[]; option: number }[] = [];
  const recurse = (cost: number): void => {
    if (++nodes > EXACT_MAX_NODES) return;
    const first = used.find((c) => left[c]! > 0);
    if (first === undefined) {
      if (cost < bestCost) [best, bestCost] = [stack.map((b) => ({ counts: [...b.counts], option: b.option })), cost];
      return;
    }
    for (const o of candidates) {
      const price = options[o]!.price;
      if (cost + price >= bestCost) break; // cheapest first
      if (fitCount(classes[first]!.requests, options[o]!.room) < 1) continue;
      const content = classes.map(() => 0);
      const rem = [...options[o]!.room];
      const fill = (i: number): void => {
        if (nodes > EXACT_MAX_NODES) return;
        if (i === used.length) {
          if (content[first]! === 0) return;
          for (const c of used) left[c]! -= content[c]!;
          stack.push({ counts: content, option: o });
          recurse(cost + price);
          stack.pop();
          for (const c of used) left[c]! += content[c]!;
          return;
        }
        const c = used[i]!;
        if (c < first || left[c]! === 0) return fill(i + 1);
        const req = classes[c]!.requests;
        for (let k = Math.min(left[c]!, fitCount(req, rem)); k >= 0; k--) {
          for (let j = 0; j < d; j++) rem[j]! -= k * req[j]!;
          content[c] = k;
          fill(i + 1);
          for (let j = 0; j < d; j++) rem[j]! += k * req[j]!;
        }
        content[c] = 0;
      };
      fill(0);
    }
  };
  recurse(0);
  if (nodes > EXACT_MAX_NODES) return undefined;
  return best;
}

/** Default master-solve budget of {@link discrepancyDives}, one small packing. */
export const DIVE_NODES = 30;
/** Alternatives {@link discrepancyDives} tries at each node of a dive besides the pattern the dive takes. */
const DIVE_ALTERNATIVES = 2;

/**
 * Diving with limited discrepancy search (Sadykov, Vanderbeck, Pessoa, Tahiri and Uchoa, "Primal Heuristics for
 * Branch and Price: The Assets of Diving Methods", INFORMS Journal on Computing 31, 2019; Harvey and Ginsberg,
 * "Limited Discrepancy Search", IJCAI 1995), from all the pods: each node solves the master (with pricing) on the
 * pods left and fixes bins of one pattern of its solution — ⌊λ⌋ bins, at least one — the pattern with the largest
 * share of the LP cost (price·λ) first; a dive follows the first choice to a full plan. Every node's next
 * {@link DIVE_ALTERNATIVES} patterns are queued, and once a dive ends the queue is taken first in, first out: each
 * alternative starts a new dive — so all plans one choice away from the first dive are tried, nearest the root
 * first, before those two away. A node is cut when its bins
 * plus its LP cost reach the best plan (`incumbent` at first). Work: `maxNodes` master solves.
 * @returns the cheapest plan found (after `finish`), or undefined when none is below `incumbent`
 */
function discrepancyDives(
  classes: readonly PackingClass[],
  options: readonly PackingOption[],
  kept: readonly number[],
  pool: ColumnPool,
  work: Work,
  start: readonly number[],
  incumbent: number,
  maxNodes: number,
  finish: (bins: readonly number[][]) => { merged: Bin[]; cost: number },
): { merged: Bin[]; cost: number } | undefined {
  type State = { left: number[]; bins: number[][]; cost: number };
  let nodes = maxNodes;
  let best: { merged: Bin[]; cost: number } | undefined;
  let bestCost = incumbent;
  const queue: { state: State; column: BasicColumn }[] = [];
  const apply = (state: State, { column, value }: BasicColumn): State => {
    const left = [...state.left];
    const bins = [...state.bins];
    let cost = state.cost;
    for (let n = Math.max(1, Math.floor(value + 1e-7)); n > 0; n--) {
      const capped = column.counts.map((k, c) => Math.min(k, left[c]!));
      if (capped.every((k) => k === 0)) break;
      capped.forEach((k, c) => (left[c]! -= k));
      bins.push(capped);
      const o = cheapestHolding(classes, capped, options, kept);
      cost += o >= 0 ? options[o]!.price : column.price;
    }
    return { left, bins, cost };
  };
  const dive = (from: State): void => {
    let state = from;
    for (;;) {
      if (state.left.every((n) => n === 0)) {
        const plan = finish(state.bins);
        if (plan.cost < bestCost - EPS) [best, bestCost] = [plan, plan.cost];
        return;
      }
      if (nodes <= 0 || work.pivots <= 0) return;
      nodes--;
      const active = state.left.flatMap((n, c) => (n > 0 ? [c] : []));
      const lp = solveMaster(classes, options, kept, active, state.left, pool, work);
      if (!lp || lp.columns.length === 0) return;
      if (state.cost + lp.objective >= bestCost - EPS * Math.max(1, bestCost)) return;
      // Largest share of the LP cost first: the big bins shape the plan, the small ones fill in around them.
      const sorted = [...lp.columns].sort((a, b) => b.value * b.column.price - a.value * a.column.price);
      for (const column of sorted.slice(1, 1 + DIVE_ALTERNATIVES)) queue.push({ state, column });
      state = apply(state, sorted[0]!);
    }
  };
  dive({ left: [...start], bins: [], cost: 0 });
  for (let next = 0; next < queue.length && nodes > 0 && work.pivots > 0; next++) dive(apply(queue[next]!.state, queue[next]!.column));
  return best;
}

type Bin = { counts: number[]; option: number };

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
