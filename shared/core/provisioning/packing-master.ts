/**
 * The master LP of the column generation (`packing.ts`): how many bins of each pooled pattern to open so every pod
 * is held at least cost, by a revised simplex with an explicit basis inverse (re-inverted every
 * {@link REFACTOR_EVERY} pivots, product-form updates between), priced by `packing-pricing.ts`.
 */
import { EPS, FIT, cheapestSingle, fitCount, type BasicColumn, type Column, type ColumnPool, type PackingClass, type PackingOption, type Work } from './packing-model.js';
import { KnapsackBound, KnapsackScratch, PricingScratch, pricePattern } from './packing-pricing.js';

/** Pivots between re-inversions of the basis (bounds the drift of the product-form updates). */
const REFACTOR_EVERY = 50;

/**
 * Solves the master LP over the `active` classes (rows) for demand `left`: the simplex runs over the pooled
 * columns until none prices out, then pricing adds each option's best new pattern to the pool, until pricing finds
 * none with a negative reduced cost or the pivot budget is spent.
 * @returns the basic pattern columns with positive value and the objective (USD/hour), or undefined when the basis
 *   could not be inverted
 */
export function solveMaster(
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
