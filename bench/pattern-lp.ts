/**
 * The pattern (configuration) LP lower bound on the hourly price of any plan, by column generation with HiGHS.
 *
 * This is the LP relaxation of bin packing in Gilmore and Gomory's form (P. C. Gilmore, R. E. Gomory, "A linear
 * programming approach to the cutting-stock problem", Operations Research 9(6), 1961): a **pattern** p is an option
 * o(p) (a (NodePool, instance type) pair, see `lp-bound.ts`) with integer pod counts a_c,p ≥ 0 per class such that
 * Σ_c a_c,p·request_c,r ≤ room_o,r for every resource r (millicores, MiB, pods, GPUs), a_c,p ≤ n_c, and a_c,p = 0 where
 * o's NodePool does not accept class c. The LP is
 *
 *     minimise Σ_p price_o(p)·x_p   subject to   Σ_p a_c,p·x_p ≥ n_c for every class c,   x ≥ 0,
 *
 * prices in USD per hour. Every node of an integral plan is a pattern, so every plan is feasible for it and its
 * optimum is ≤ the cheapest plan. Each pattern is a feasible per-class-LP point (z_c,o = a_c·x, one node), so its
 * optimum is ≥ the per-class LP's: unlike that LP it does not let one pod be split across nodes.
 *
 * Column generation: the restricted master (a subset of the patterns) is an LP solved by HiGHS, whose row duals
 * π_c ≥ 0 price the pods; for each option the pricing problem max_a π·a over its patterns is a bounded
 * multi-dimensional integer knapsack, solved exactly by {@link boundedKnapsack} (branch and bound, with a node limit),
 * and by HiGHS as a MIP ({@link knapsackMip}, with a node limit) where that branch and bound stops at its limit.
 * Patterns with π·a > price_o are added until none is left or a limit is reached. The pricing prunes patterns worth at
 * most price_o·(1 + 5e-5), half the stopping gap, so the bound converges to within 1e-4 of the LP optimum, not exactly.
 *
 * The bound reported is valid whether or not column generation converged — **Farley's bound** (A. A. Farley, "A note
 * on bounding a class of linear programming problems, including cutting stock problems", Operations Research 38(5),
 * 1990, pp. 922–923): with any π ≥ 0 and ρ = max over all patterns p of π·a_p ÷ price_o(p), π ÷ max(1, ρ) is feasible
 * for the dual of the full LP (π·a_p ≤ price for every p), so by weak duality Σ_c n_c·π_c ÷ max(1, ρ) ≤ the LP
 * optimum ≤ any plan's price. ρ uses, per option, the knapsack's proven upper bound where its branch and bound
 * stopped at the node limit, so the bound stays valid then too.
 */
import type { SchedulingPod } from '../shared/core/provisioning/pod.js';
import type { NodePoolTemplate } from '../shared/core/provisioning/types.js';
import { classFits, highs, lpNumber, paretoOptions, podClasses, type Classes, type Highs, type NodeOption } from './lp-bound.js';

const EPSILON = 1e-6;

/** One item type of a bounded knapsack. */
export interface KnapsackItem {
  /** Value of one copy (here π_c, USD per hour per pod). */
  readonly value: number;
  /** Size of one copy per dimension (here a pod's requests: millicores, MiB, pods, GPUs). */
  readonly size: readonly number[];
  /** At most this many copies (here n_c, the pods of the class). */
  readonly max: number;
}

/** The outcome of {@link boundedKnapsack}. */
export interface KnapsackResult {
  /** Best value found, Σ value·count. */
  readonly value: number;
  /** Copies of each item in the best solution found, in the order of the items given. */
  readonly counts: readonly number[];
  /**
   * A proven upper bound on the optimum: the larger of `value` and the largest bound of a pruned subtree (≤ the floor
   * where one was given); when not `exact`, also at least the largest bound of the subtrees the search did not explore
   * (each bound as in {@link boundedKnapsack}).
   */
  readonly upper: number;
  /** True when the search finished within its node limit, so `value` is the optimum when it exceeds the floor. */
  readonly exact: boolean;
  /** Branch-and-bound nodes visited. */
  readonly nodes: number;
  /**
   * Up to 3 earlier incumbents worth more than the floor (item order as given, best first), when a floor was given:
   * column generation adds them too, which speeds it up where each option gains one pattern per round.
   */
  readonly better?: readonly (readonly number[])[];
}

/** Limits of {@link boundedKnapsack}. */
export interface KnapsackLimits {
  /** Stop after this many branch-and-bound nodes; the result is then not `exact` and `upper` bounds the optimum. @default 20000 */
  readonly nodeLimit?: number;
  /**
   * Only solutions worth more than this matter: subtrees whose bound is at most `floor` are pruned, so when no
   * solution beats it the result's `value` may be below the optimum while `upper` is at most about `floor` (still a
   * proven upper bound). Column generation passes the option's price × (1 + relativeGap/2). @default 0
   */
  readonly floor?: number;
  /** Extra surrogate weights to bound with (one per dimension, ≥ 0; any such weights give a valid bound). */
  readonly surrogates?: readonly (readonly number[])[];
}

/**
 * Maximises Σ_i value_i·k_i subject to Σ_i size_i,r·k_i ≤ capacity_r for every dimension r (with an absolute tolerance
 * of 1e-6), 0 ≤ k_i ≤ max_i integer: a bounded multi-dimensional integer knapsack, by depth-first branch and bound.
 *
 * Items are branched on in decreasing value ÷ max_r(size_r ÷ capacity_r), each count tried from its largest feasible
 * value down to 0. A node's bound is the minimum, over a few **surrogate** constraints Σ_r w_r·size_r·k ≤ Σ_r
 * w_r·capacity_r with w ≥ 0 (each single dimension and a grid of mixes of pairs and of triples, normalised by capacity;
 * the 4 tightest at the root are kept for the whole search), of the
 * fractional (Dantzig) bound of that one-constraint bounded knapsack: every solution of the original problem satisfies
 * each surrogate constraint, so each such bound — and their minimum — bounds it from above (surrogate relaxation:
 * F. Glover, "Surrogate constraint duality in mathematical programming", Operations Research 23(3), 1975).
 * @param items the item types; items of value ≤ 0 are never taken
 * @param capacity capacity per dimension, same order as each item's `size`
 */
export function boundedKnapsack(items: readonly KnapsackItem[], capacity: readonly number[], limits: KnapsackLimits = {}): KnapsackResult {
  const nodeLimit = limits.nodeLimit ?? 20_000;
  const floor = limits.floor ?? 0;
  const dims = capacity.length;
  const counts = items.map(() => 0);
  // Items worth taking, with their largest feasible count.
  const live: { index: number; value: number; size: readonly number[]; max: number }[] = [];
  items.forEach((item, index) => {
    if (!(item.value > 0)) return;
    let max = Math.floor(item.max);
    for (let r = 0; r < dims; r++) if (item.size[r]! > 0) max = Math.min(max, Math.floor((capacity[r]! + EPSILON) / item.size[r]!));
    if (max > 0) live.push({ index, value: item.value, size: item.size, max });
  });
  if (live.length === 0) return { value: 0, counts, upper: 0, exact: true, nodes: 0 };
  const load = (size: readonly number[]) => Math.max(...size.map((s, r) => (capacity[r]! > 0 ? s / capacity[r]! : s > 0 ? Number.POSITIVE_INFINITY : 0)));
  live.sort((a, b) => b.value / Math.max(load(b.size), 1e-12) - a.value / Math.max(load(a.size), 1e-12));
  const m = live.length;

  // Surrogate constraints Σ_r w_r·size_r·k ≤ Σ_r w_r·capacity_r, w ≥ 0. Candidates: each dimension alone, every pair
  // mixed in steps of 1/10, and for three or more dimensions every mix of three in steps of 1/5 (weights relative to
  // capacity); the branch and bound then uses the few that give the smallest bounds at the root.
  const used = [...Array(dims).keys()].filter((r) => live.some((it) => it.size[r]! > 0) && capacity[r]! > 0);
  const mixes: number[][] = [];
  const weights = (parts: readonly (readonly [number, number])[]) => {
    const w = new Array<number>(dims).fill(0);
    for (const [r, share] of parts) w[r] = share / capacity[r]!;
    mixes.push(w);
  };
  for (const r of used) weights([[r, 1]]);
  for (let i = 0; i < used.length; i++)
    for (let j = i + 1; j < used.length; j++) for (let t = 1; t < 10; t++) weights([[used[i]!, t / 10], [used[j]!, 1 - t / 10]]);
  for (let i = 0; i < used.length; i++)
    for (let j = i + 1; j < used.length; j++)
      for (let l = j + 1; l < used.length; l++)
        for (let a = 1; a < 5; a++) for (let b = 1; a + b < 5; b++) weights([[used[i]!, a / 5], [used[j]!, b / 5], [used[l]!, 1 - (a + b) / 5]]);
  const surrogate = (w: readonly number[]) => {
    const size = live.map((it) => it.size.reduce((s, v, r) => s + w[r]! * v, 0));
    // Items by decreasing value per unit of surrogate size (size 0 first).
    const order = [...live.keys()].sort((a, b) => (size[a] === 0 ? -1 : 0) - (size[b] === 0 ? -1 : 0) || live[b]!.value / size[b]! - live[a]!.value / size[a]!);
    return { w, size, order };
  };
  for (const w of limits.surrogates ?? []) if (w.length === dims && w.every((v) => v >= 0) && w.some((v) => v > 0)) mixes.push([...w]);
  let surrogates = mixes.map(surrogate);
  /** Upper bound on the value of items level… with room `rem`, item `level` capped at `cap` copies. */
  const boundWith = (list: readonly ReturnType<typeof surrogate>[], level: number, rem: readonly number[], cap: number): number => {
    let best = Number.POSITIVE_INFINITY;
    for (const s of list) {
      let room = EPSILON * dims;
      for (let r = 0; r < dims; r++) room += s.w[r]! * rem[r]!;
      let total = 0;
      for (const i of s.order) {
        if (i < level) continue;
        const it = live[i]!;
        const q = i === level ? cap : it.max;
        const sz = s.size[i]!;
        if (sz <= 0) {
          total += it.value * q;
          continue;
        }
        if (room <= 0) break;
        const take = Math.min(q, room / sz);
        total += it.value * take;
        room -= take * sz;
      }
      if (total < best) best = total;
    }
    return best;
  };
  const surrogatesOne: ReturnType<typeof surrogate>[] = [];
  const bound = (level: number, rem: readonly number[], cap: number): number => boundWith(surrogates, level, rem, cap);

  {
    const rootBounds = surrogates.map((sg) => {
      surrogatesOne[0] = sg;
      return boundWith(surrogatesOne, 0, capacity, live[0]!.max);
    });
    const best = [...surrogates.keys()].sort((a, b) => rootBounds[a]! - rootBounds[b]!).slice(0, 4);
    surrogates = best.map((i) => surrogates[i]!);
  }
  let bestValue = 0;
  let bestCounts = new Array<number>(m).fill(0);
  const improving: number[][] = [];
  const current = new Array<number>(m).fill(0);
  let nodes = 0;
  let aborted = false;
  let openUpper = 0;
  // The largest bound of a subtree pruned because it could not beat max(incumbent, floor): with the incumbent, it
  // bounds the optimum when the search finishes (tighter than the floor itself).
  let prunedUpper = 0;
  const prune = (b: number): boolean => {
    if (b > Math.max(bestValue, floor) * (1 + 1e-12)) return false;
    if (b > prunedUpper) prunedUpper = b;
    return true;
  };

  const search = (level: number, value: number, rem: readonly number[]): void => {
    if (value > bestValue) {
      bestValue = value;
      bestCounts = [...current];
      if (bestValue > floor && floor > 0) improving.push(bestCounts);
    }
    if (level === m) return;
    if (++nodes > nodeLimit) {
      aborted = true;
      openUpper = Math.max(openUpper, value + bound(level, rem, live[level]!.max));
      return;
    }
    const it = live[level]!;
    if (prune(value + bound(level, rem, it.max))) return;
    let kmax = it.max;
    for (let r = 0; r < dims; r++) if (it.size[r]! > 0) kmax = Math.min(kmax, Math.floor((rem[r]! + EPSILON) / it.size[r]!));
    for (let k = kmax; k >= 0; k--) {
      // Prune the remaining counts k, k-1, …, 0 at once when even k copies of this item cannot beat the incumbent.
      if (k < kmax && prune(value + bound(level, rem, k))) return;
      current[level] = k;
      const next = k === 0 ? rem : rem.map((v, r) => v - k * it.size[r]!);
      search(level + 1, value + k * it.value, next);
      current[level] = 0;
      if (aborted) {
        if (k > 0) openUpper = Math.max(openUpper, value + bound(level, rem, k - 1));
        return;
      }
    }
  };
  search(0, 0, capacity);
  live.forEach((it, i) => {
    counts[it.index] = bestCounts[i]!;
  });
  const value = live.reduce((s, it, i) => s + it.value * bestCounts[i]!, 0);
  const proven = Math.max(value, prunedUpper);
  const toItems = (c: readonly number[]) => {
    const out = items.map(() => 0);
    live.forEach((it, i) => {
      out[it.index] = c[i]!;
    });
    return out;
  };
  const better = improving.slice(-4, -1).reverse().map(toItems);
  return { value, counts, upper: aborted ? Math.max(proven, openUpper) : proven, exact: !aborted, nodes: Math.min(nodes, nodeLimit), better };
}

/**
 * The same bounded multi-dimensional knapsack as {@link boundedKnapsack}, as a MIP solved by HiGHS (integer k_i,
 * 0 ≤ k_i ≤ max_i, Σ_i size_i,r·k_i ≤ capacity_r + 1e-6): the fallback for knapsacks the small branch and bound does not
 * finish within its node limit (many near-equal item densities), bounded by a node count rather than a time limit.
 * `upper` is HiGHS's `mip_dual_bound` (an upper bound for a maximisation, also when stopped at the node limit).
 * @param maxNodes HiGHS `mip_max_nodes`
 * @throws {Error} when HiGHS ends with neither an optimal nor a node-limited status
 */
export function knapsackMip(solver: Highs, items: readonly KnapsackItem[], capacity: readonly number[], maxNodes: number): KnapsackResult {
  const counts = items.map(() => 0);
  const live = items.map((it, i) => ({ it, i })).filter(({ it }) => it.value > 0 && it.max >= 1 && it.size.every((v, r) => v <= capacity[r]! + EPSILON));
  if (live.length === 0) return { value: 0, counts, upper: 0, exact: true, nodes: 0 };
  const objective = live.map(({ it, i }) => `${lpNumber(it.value)} k${i}`).join(' + ');
  const rows = capacity.flatMap((cap, r) => {
    const terms = live.filter(({ it }) => it.size[r]! > 0).map(({ it, i }) => `${lpNumber(it.size[r]!)} k${i}`);
    return terms.length > 0 ? [` c${r}: ${terms.join(' + ')} <= ${lpNumber(cap + EPSILON)}`] : [];
  });
  const bounds = live.map(({ it, i }) => ` 0 <= k${i} <= ${Math.floor(it.max)}`);
  const text = `Maximize\n obj: ${objective}\nSubject To\n${rows.join('\n')}\nBounds\n${bounds.join('\n')}\nGeneral\n ${live.map(({ i }) => `k${i}`).join(' ')}\nEnd\n`;
  return solver.withModel({ format: 'lp', data: text }, (model) => {
    model.options.set({ output_flag: false, mip_rel_gap: 1e-7, mip_max_nodes: maxNodes });
    model.run();
    const status = model.getModelStatus();
    const optimal = status === solver.constants.modelStatus.optimal;
    const upper = Number(model.info.get('mip_dual_bound'));
    if (!optimal && !Number.isFinite(upper)) throw new Error(`HiGHS knapsack MIP ended with status ${status}`);
    const x = model.getSolution().colValue;
    for (let j = 0; j < live.length; j++) counts[live[j]!.i] = Math.max(0, Math.round(x[model.getColByName(`k${live[j]!.i}`)] ?? 0));
    // The value of the rounded counts, checked to fit (HiGHS's integrality tolerance could leave a count at 0.9999999).
    const fitsAll = capacity.every((cap, r) => items.reduce((sum, it, i) => sum + it.size[r]! * counts[i]!, 0) <= cap + EPSILON);
    if (!fitsAll) counts.fill(0);
    const value = items.reduce((sum, it, i) => sum + it.value * counts[i]!, 0);
    return { value, counts, upper: Math.max(value, optimal ? Math.max(model.getObjectiveValue(), upper) : upper), exact: optimal, nodes: Number(model.info.get('mip_node_count')) };
  });
}

/** Limits of {@link patternLp}. */
export interface PatternLpLimits {
  /** Column-generation rounds (master solve + pricing of every option). @default 100 */
  readonly maxRounds?: number;
  /** Patterns added in total, beyond the initial ones. @default 4000 */
  readonly maxColumns?: number;
  /** Patterns added per round at most (those of the highest π·a ÷ price). @default 100 */
  readonly columnsPerRound?: number;
  /** Branch-and-bound nodes per pricing knapsack. @default 20000 */
  readonly knapsackNodes?: number;
  /**
   * Branch-and-bound knapsacks that stop at their node limit are priced again as MIPs by HiGHS ({@link knapsackMip})
   * with this `mip_max_nodes`. @default 5000
   */
  readonly mipNodes?: number;
  /** Stop when the bound is within this fraction of the master's optimum. @default 1e-4 */
  readonly relativeGap?: number;
}

/** The pattern LP bound of one input. */
export interface PatternLp {
  /** Farley's lower bound (see the module doc): no plan costs less. USD per hour. */
  readonly bound: number;
  /** The last restricted master's optimum, USD per hour: ≥ the pattern LP optimum ≥ `bound`. */
  readonly master: number;
  /** True when `bound` ≥ `master`·(1 − relativeGap), i.e. the pattern LP optimum is known to that precision. */
  readonly converged: boolean;
  /** 1 − bound ÷ master: how far the bound may be below the pattern LP optimum. */
  readonly gap: number;
  /** Column-generation rounds run. */
  readonly rounds: number;
  /** Patterns in the final master (initial ones included). */
  readonly columns: number;
  /** Pricing knapsacks stopped at their node limit in the last round (0 when every pricing was exact). */
  readonly inexactPricings: number;
  /** Options the last master uses (x > 0), largest cost share first, with their node counts (fractional). */
  readonly support: readonly { readonly option: NodeOption; readonly nodes: number }[];
  /** Wall time, seconds. */
  readonly seconds: number;
}

/**
 * The pattern LP bound of pods on NodePool templates: groups the pods into classes and keeps the non-dominated options
 * exactly as the per-class LP does (`podClasses`, `paretoOptions` of `lp-bound.ts`), then runs {@link patternLp}.
 * Dropping a dominated option leaves the optimum unchanged: each of its patterns fits the option that dominates it,
 * which costs no more (USD per hour).
 */
export async function patternLpBound(pods: readonly SchedulingPod[], templates: readonly NodePoolTemplate[], limits: PatternLpLimits = {}): Promise<PatternLp> {
  const classes = podClasses(pods, templates);
  return patternLp(classes, paretoOptions(templates, classes.resources), limits);
}

/**
 * Column generation for the pattern LP (see the module doc). The master starts from, for every class and every option
 * that accepts and fits one of its pods, the single-class pattern holding as many of its pods as fit (at most n_c), so
 * it is feasible from the start; each round then prices every option exactly (up to the knapsack node limit) and adds
 * the patterns with π·a > price of the highest ratio.
 * @param classes pod classes (requests in millicores, MiB, pods, GPUs) and their counts
 * @param options node options (price USD per hour, room in the same units)
 * @throws {Error} when a class fits no option, or HiGHS does not solve a master to optimality
 */
export async function patternLp(classes: Classes, options: readonly NodeOption[], limits: PatternLpLimits = {}): Promise<PatternLp> {
  const started = performance.now();
  const solver = await highs();
  const maxRounds = limits.maxRounds ?? 100;
  const maxColumns = limits.maxColumns ?? 4000;
  const perRound = limits.columnsPerRound ?? 100;
  const knapsackNodes = limits.knapsackNodes ?? 20_000;
  const mipNodes = limits.mipNodes ?? 5000;
  const relativeGap = limits.relativeGap ?? 1e-4;
  const cls = classes.classes;
  const fits = options.map((o) => cls.map((c) => classFits(c, o)));

  interface Column {
    readonly option: number;
    readonly counts: readonly number[];
  }
  const columns: Column[] = [];
  const seen = new Set<string>();
  const add = (option: number, counts: readonly number[]): boolean => {
    const key = `${option}:${counts.join(',')}`;
    if (seen.has(key) || counts.every((k) => k === 0)) return false;
    seen.add(key);
    columns.push({ option, counts });
    return true;
  };
  cls.forEach((c, ci) => {
    let any = false;
    options.forEach((o, oi) => {
      if (!fits[oi]![ci]) return;
      let k = c.count;
      c.requests.forEach((v, r) => {
        if (v > EPSILON) k = Math.min(k, Math.floor((o.room[r]! + EPSILON) / v));
      });
      if (k <= 0) return;
      any = true;
      add(oi, cls.map((_, j) => (j === ci ? k : 0)));
    });
    if (!any) throw new Error(`no instance type fits a pod requesting ${JSON.stringify(Object.fromEntries(classes.resources.map((r, i) => [r, c.requests[i]])))}`);
  });
  const initial = columns.length;

  const colText = (j: number) => `p${j}`;
  const objective = columns.map((col, j) => `${lpNumber(options[col.option]!.price)} ${colText(j)}`).join(' + ');
  const rows = cls.map((c, ci) => {
    const terms = columns.flatMap((col, j) => (col.counts[ci]! > 0 ? [`${col.counts[ci]} ${colText(j)}`] : []));
    return ` d${ci}: ${terms.join(' + ')} >= ${c.count}`;
  });
  const text = `Minimize\n obj: ${objective}\nSubject To\n${rows.join('\n')}\nEnd\n`;

  return solver.withModel({ format: 'lp', data: text }, (model) => {
    model.options.set({ output_flag: false });
    // The LP reader numbers columns in order of first appearance (the objective lists them in order).
    let master = Number.POSITIVE_INFINITY;
    let bound = 0;
    let rounds = 0;
    let inexact = 0;
    let primal: Float64Array | undefined;
    let converged = false;
    for (;;) {
      rounds++;
      model.run();
      if (model.getModelStatus() !== solver.constants.modelStatus.optimal) throw new Error(`HiGHS pattern master ended with status ${model.getModelStatus()}`);
      const solution = model.getSolution();
      master = model.getObjectiveValue();
      primal = solution.colValue;
      const pi = cls.map((_, ci) => Math.max(0, solution.rowDual[ci] ?? 0));
      const dualObjective = cls.reduce((s, c, ci) => s + c.count * pi[ci]!, 0);

      // Pricing: per option, max π·a over its patterns, by the small branch and bound; the knapsacks it does not
      // finish within its node limit are priced again as MIPs by HiGHS.
      // Patterns within a factor 1 + relativeGap/2 of the price need not be found: ρ ≤ 1 + relativeGap/2 still leaves
      // Farley's bound within the stopping gap, and pruning them spares the many near-ties of a degenerate π.
      const upper = options.map(() => 0);
      const found: { option: number; counts: readonly number[]; ratio: number }[] = [];
      const price = (oi: number, mip: boolean): boolean => {
        const o = options[oi]!;
        const items = cls.map((c, ci) => ({ value: fits[oi]![ci] ? pi[ci]! : 0, size: c.requests, max: c.count }));
        const result = mip ? knapsackMip(solver, items, o.room, mipNodes) : boundedKnapsack(items, o.room, { nodeLimit: knapsackNodes, floor: o.price * (1 + relativeGap / 2) });
        upper[oi] = result.upper;
        for (const counts of [result.counts, ...(result.better ?? [])]) {
          const value = counts.reduce((sum, k, ci) => sum + k * items[ci]!.value, 0);
          if (value > o.price * (1 + 1e-7) && !seen.has(`${oi}:${counts.join(',')}`)) found.push({ option: oi, counts, ratio: value / o.price });
        }
        return result.exact;
      };
      const again = options.flatMap((_, oi) => (price(oi, false) ? [] : [oi]));
      inexact = again.length;
      if (again.length > 0) inexact = again.filter((oi) => !price(oi, true)).length;
      const rho = Math.max(...options.map((o, oi) => upper[oi]! / o.price));
      bound = Math.max(bound, dualObjective / Math.max(1, rho));
      if (bound >= master * (1 - relativeGap)) {
        converged = true;
        break;
      }
      if (found.length === 0 || rounds >= maxRounds || columns.length - initial >= maxColumns) break;
      found.sort((a, b) => b.ratio - a.ratio);
      let added = 0;
      for (const f of found) {
        if (added >= perRound || columns.length - initial >= maxColumns) break;
        if (!add(f.option, f.counts)) continue;
        added++;
        const indices: number[] = [];
        const values: number[] = [];
        f.counts.forEach((k, ci) => {
          if (k > 0) {
            indices.push(ci);
            values.push(k);
          }
        });
        model.addCol(options[f.option]!.price, 0, Number.POSITIVE_INFINITY, { indices, values });
      }
      if (added === 0) break;
    }
    const nodes = options.map(() => 0);
    columns.forEach((col, j) => {
      nodes[col.option]! += primal?.[j] ?? 0;
    });
    const support = options
      .map((option, i) => ({ option, nodes: nodes[i]! }))
      .filter((s) => s.nodes > 1e-7)
      .sort((a, b) => b.nodes * b.option.price - a.nodes * a.option.price);
    return { bound, master, converged, gap: master > 0 ? 1 - bound / master : 0, rounds, columns: columns.length, inexactPricings: inexact, support, seconds: (performance.now() - started) / 1000 };
  });
}
