/**
 * Pricing of the master LP (`packing-master.ts`): which new pattern of an option has a negative reduced cost at the
 * master's dual prices. A bound that skips options whose patterns cannot price out ({@link KnapsackBound}), greedy
 * pricing in several orders ({@link pricePattern}), and exact pricing by branch and bound ({@link KnapsackScratch}),
 * which only the small-packing search uses.
 */
import { EPS, FIT, fitCount, type PackingClass, type Work } from './packing-model.js';

/** Branch-and-bound nodes at most for one exact pricing (one option, one round). */
const EXACT_PRICING_NODES_PER_OPTION = 5_000;

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
export class PricingScratch {
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
export function pricePattern(
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
export class KnapsackScratch {
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
