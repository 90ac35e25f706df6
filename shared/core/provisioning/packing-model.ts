/**
 * The vocabulary of the packing (`packing.ts`): pod classes, bin options, patterns (columns) and their pool, the work
 * counters and tolerances, and the arithmetic of fitting pods of classes into an option's room. Shared by the master
 * LP (`packing-master.ts`), its pricing (`packing-pricing.ts`), the rounding (`packing-rounding.ts`) and the entry.
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

/** Work left and done in one packing (all counts). */
export interface Work {
  /** Simplex pivots left. */
  pivots: number;
  /** Heuristic pricings done. */
  pricings: number;
  /** Exact-pricing search nodes left (0: heuristic pricing only). */
  knapsackNodes: number;
}

/** Tolerance on resources (as `fits` in resource-list.ts). */
export const FIT = 1e-6;
/** Tolerance of the simplex. */
export const EPS = 1e-9;

/** Indices of options not dominated by another (no dearer, at least the room in every dimension), cheapest first. */
export function nonDominated(options: readonly PackingOption[]): number[] {
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
export function fitCount(requests: ArrayLike<number>, room: ArrayLike<number>): number {
  let n = Number.POSITIVE_INFINITY;
  for (let j = 0; j < requests.length; j++) {
    const r = requests[j]!;
    if (r > FIT) n = Math.min(n, Math.floor((room[j]! + FIT) / r));
  }
  return Math.max(0, n);
}

/** The option with the lowest price per pod for `count` pods of one class packed alone (kept options only). */
export function cheapestSingle(requests: readonly number[], count: number, options: readonly PackingOption[], kept: readonly number[]): number {
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
export function cheapestHolding(classes: readonly PackingClass[], counts: readonly number[], options: readonly PackingOption[], kept: readonly number[]): number {
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
export interface Column {
  readonly option: number;
  readonly counts: readonly number[];
  readonly price: number;
}

/** Columns generated so far, deduplicated, kept across rounds (each round caps them to the pods left). */
export class ColumnPool {
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
export interface BasicColumn {
  readonly column: Column;
  readonly value: number;
}

/** A bin of a plan: pods per class and the index of the option it is (−1 when no option holds them). */
export type Bin = { counts: number[]; option: number };
