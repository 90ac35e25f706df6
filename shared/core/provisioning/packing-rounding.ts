/**
 * From the master's fractional optimum to an integral plan, and the plan's improvement (`packing.ts`): whole bins of
 * the LP's patterns ({@link roundWhole}), one bin per round for the fractional tail ({@link mostUsed},
 * {@link lookahead}), limited-discrepancy dives for small packings ({@link discrepancyDives}), then pairs of bins merged
 * ({@link mergePairs}) and re-packed ({@link repackPairs}, exhaustively by {@link exactSmall} when they hold few pods).
 */
import { EPS, FIT, cheapestHolding, fitCount, type BasicColumn, type Bin, type Column, type ColumnPool, type PackingClass, type PackingOption, type Work } from './packing-model.js';
import { solveMaster } from './packing-master.js';

/** Whole bins of every pattern the LP opens at least once (⌊λ⌋ each, most used first), capped to the pods left. */
export function roundWhole(columns: readonly BasicColumn[], leftIn: readonly number[]): number[][] {
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

/** The most used pattern's bin, capped to the pods left. */
export function mostUsed(columns: readonly BasicColumn[], left: readonly number[]): number[] {
  const top = columns.reduce((a, b) => (b.value > a.value ? b : a));
  return top.column.counts.map((k, c) => Math.min(k, left[c]!));
}

/**
 * One bin for the fractional tail (every pattern below one bin in the LP): among the most used patterns, the one
 * whose bin price plus the LP cost of what it leaves (over the pooled columns, no new pricing) is lowest; the most
 * used pattern alone when many pods are left.
 */
export function lookahead(
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
export function mergePairs(
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
 * @param packAlone packs pods per class on their own (`packing.ts` passes `packClasses` without this pass), one bin
 *   per copy; undefined when it leaves pods out
 */
export function repackPairs(
  binsIn: readonly { counts: number[]; option: number }[],
  classes: readonly PackingClass[],
  options: readonly PackingOption[],
  kept: readonly number[],
  maxBins: number,
  packAlone: (counts: readonly number[]) => Bin[] | undefined,
): { counts: number[]; option: number }[] {
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
          const packed = packAlone(counts);
          if (!packed) continue;
          replacement = packed;
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
export function exactSmall(classes: readonly PackingClass[], counts: readonly number[], options: readonly PackingOption[], kept: readonly number[], ceiling: number): { counts: number[]; option: number }[] | undefined {
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
export function discrepancyDives(
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
