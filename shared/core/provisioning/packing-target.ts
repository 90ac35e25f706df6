/**
 * The packing target: the instance type new NodeClaims for a group of pods are filled up to, chosen for the least
 * money per pod, and one bin planned arithmetically (vector bin packing). The packed solve (`scheduler.ts`) fills
 * NodeClaims up to this target; right-sizing later offers each as its cheapest type that still fits.
 */
import type { ResourceList } from '../resources/resource-list.js';
import type { PricedType } from './instance-options.js';

/** Tolerance of the packing arithmetic (as `fits`). */
const PACK_EPSILON = 1e-6;

/**
 * One bin of vector bin packing, planned arithmetically with the dot-product heuristic (Panigrahy et al.,
 * "Heuristics for Vector Bin Packing", 2011): repeatedly add pods of the class whose requests, normalised by the
 * room, align best with the room left — a few at a time (an eighth of what still fits), then re-align.
 * @param room room of the bin per column (canonical units)
 * @param req requests per class and column, row-major (`req[c * d + j]`)
 * @param d number of columns
 * @param left pods left per class
 * @returns pods planned per class
 */
export function planBin(room: Float64Array, req: Float64Array, d: number, left: readonly number[]): number[] {
  const weight = Float64Array.from(room, (r) => (r > 0 ? 1 / (r * r) : 0));
  const rem = Float64Array.from(room);
  const plan = left.map(() => 0);
  for (;;) {
    let best = -1;
    let bestScore = -1;
    for (let c = 0; c < left.length; c++) {
      if (plan[c]! >= left[c]!) continue;
      let score = 0;
      let fitsHere = true;
      for (let j = 0; j < d; j++) {
        const r = req[c * d + j]!;
        if (r > PACK_EPSILON && r > rem[j]! + PACK_EPSILON) {
          fitsHere = false;
          break;
        }
        score += r * rem[j]! * weight[j]!;
      }
      if (fitsHere && score > bestScore) [best, bestScore] = [c, score];
    }
    if (best < 0) return plan;
    let fit = Number.POSITIVE_INFINITY;
    for (let j = 0; j < d; j++) {
      const r = req[best * d + j]!;
      if (r > PACK_EPSILON) fit = Math.min(fit, Math.floor((rem[j]! + PACK_EPSILON) / r));
    }
    const n = Math.max(1, Math.min(left[best]! - plan[best]!, Math.floor(fit / 8)));
    plan[best]! += n;
    for (let j = 0; j < d; j++) rem[j]! -= req[best * d + j]! * n;
  }
}

/** How many candidate instance types {@link packingTargetBySimulation} packs for real (the best by fractional cost). */
const SIMULATED_TARGETS = 16;
/** At most this many pods (scaled down proportionally per class) are packed per simulated candidate. */
const SIMULATED_PODS = 1500;

/**
 * The instance type a group of pod classes packs into most cheaply: the {@link SIMULATED_TARGETS} best by
 * fractional cost ({@link packingTarget}'s estimate), each packed with {@link planBin} on a proportional sample of at
 * most {@link SIMULATED_PODS} pods, keeping the lowest price per pod (fragmentation included: big pods on small
 * types waste room the fractional estimate does not see).
 */
export function packingTargetBySimulation(
  options: readonly PricedType[],
  counts: readonly number[],
  req: Float64Array,
  d: number,
  roomOf: (o: PricedType) => Float64Array,
  overhead: ResourceList,
  keys: readonly string[],
): PricedType {
  const demand: Record<string, number> = {};
  keys.forEach((k, j) => (demand[k] = counts.reduce((sum, n, c) => sum + n * req[c * d + j]!, 0)));
  const ranked = options
    .map((option) => ({ option, cost: fractionalCost(option, demand, overhead) }))
    .sort((a, b) => a.cost - b.cost)
    .slice(0, SIMULATED_TARGETS);
  const total = counts.reduce((a, b) => a + b, 0);
  const ratio = Math.min(1, SIMULATED_PODS / Math.max(1, total));
  const sample = counts.map((n) => (n === 0 ? 0 : Math.max(1, Math.round(n * ratio))));
  const sampled = sample.reduce((a, b) => a + b, 0);
  // Each bin is priced as the cheapest option that holds it (the plan right-sizes every NodeClaim).
  const rooms = new Map<PricedType, Float64Array>();
  const roomOfCached = (o: PricedType) => {
    let r = rooms.get(o);
    if (!r) rooms.set(o, (r = roomOf(o)));
    return r;
  };
  const load = new Float64Array(d);
  const rightSized = (plan: readonly number[], fallback: number): number => {
    load.fill(0);
    plan.forEach((n, c) => {
      for (let j = 0; j < d; j++) load[j]! += n * req[c * d + j]!;
    });
    for (const o of options) {
      if (o.price >= fallback) break;
      const r = roomOfCached(o);
      let ok = true;
      for (let j = 0; j < d && ok; j++) ok = load[j]! <= r[j]! + PACK_EPSILON;
      if (ok) return o.price;
    }
    return fallback;
  };
  let best: { option: PricedType; perPod: number } | undefined;
  for (const { option } of ranked) {
    const room = roomOfCached(option);
    const left = [...sample];
    let cost = 0;
    let placed = 0;
    while (placed < sampled) {
      const plan = planBin(room, req, d, left);
      const n = plan.reduce((a, b) => a + b, 0);
      if (n === 0) break;
      plan.forEach((k, c) => (left[c]! -= k));
      placed += n;
      cost += rightSized(plan, option.price);
    }
    if (placed < sampled) continue;
    const perPod = cost / sampled;
    if (!best || perPod < best.perPod - 1e-12) best = { option, perPod };
  }
  return best?.option ?? ranked[0]!.option;
}

/** {@link packingTarget}'s estimate for one option: price × fractional nodes the demand needs (at least one). */
function fractionalCost(option: PricedType, demand: ResourceList, overhead: ResourceList): number {
  let nodes = 1;
  for (const k in demand) {
    const dk = demand[k]!;
    if (dk <= PACK_EPSILON) continue;
    const room = (option.type.allocatable[k] ?? 0) - (overhead[k] ?? 0);
    nodes = room <= 0 ? Number.POSITIVE_INFINITY : Math.max(nodes, dk / room);
  }
  return nodes * option.price;
}

/**
 * The instance type a run of pods packs into: among `options` (those that fit one pod, cheapest first), the one
 * that serves `demand` (the remaining requests, canonical units) for the least money, counting fractional nodes
 * of room = allocatable − daemonset `overhead` and at least one node — the type with the lowest price per unit of
 * the demand's dominant resource, or the cheapest that holds it all when it fits on one node.
 */
export function packingTarget(options: readonly PricedType[], demand: ResourceList, overhead: ResourceList): PricedType {
  // The demanded resources, in the demand's key order, with their overhead (hot: once per NodeClaim opened).
  const keys: string[] = [];
  const amounts: number[] = [];
  const reserved: number[] = [];
  for (const k in demand) {
    if (demand[k]! <= 1e-6) continue;
    keys.push(k);
    amounts.push(demand[k]!);
    reserved.push(overhead[k] ?? 0);
  }
  const allocatableOf = keys.map((k): ((o: PricedType) => number) => (k === 'cpu' ? (o) => o.cpu : k === 'memory' ? (o) => o.memory : k === 'pods' ? (o) => o.pods : (o) => o.type.allocatable[k] ?? 0));
  let best: PricedType | undefined;
  let bestCost = 0;
  for (const option of options) {
    let nodes = 1;
    for (let j = 0; j < keys.length; j++) {
      const room = allocatableOf[j]!(option) - reserved[j]!;
      nodes = room <= 0 ? Number.POSITIVE_INFINITY : Math.max(nodes, amounts[j]! / room);
    }
    const cost = nodes * option.price;
    if (!best || cost < bestCost - 1e-12) [best, bestCost] = [option, cost];
  }
  return best!;
}
