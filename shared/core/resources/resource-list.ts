/**
 * Resource lists in canonical units, and their arithmetic.
 *
 * Units: `cpu` in millicores; `memory`, `ephemeral-storage` and `hugepages-*` in MiB; `pods` and every
 * extended resource (`nvidia.com/gpu`, `aws.amazon.com/neuron`, `vpc.amazonaws.com/pod-eni`, …) as counts.
 * A missing key means zero. Lists are plain readonly records and are never mutated by these functions.
 */
import { cpuMillicores, mebibytes, parseQuantity } from './quantity.js';

/** Resource name → amount in canonical units (see module doc). */
export type ResourceList = Readonly<Record<string, number>>;

/** Resource names whose canonical unit is MiB. */
const BYTE_RESOURCES = new Set(['memory', 'ephemeral-storage']);

/** The canonical unit of a resource name: millicores, MiB or a count. */
export function unitOf(name: string): 'millicores' | 'MiB' | 'count' {
  if (name === 'cpu') return 'millicores';
  if (BYTE_RESOURCES.has(name) || name.startsWith('hugepages-')) return 'MiB';
  return 'count';
}

/**
 * Converts a Kubernetes resource map (`{cpu: "500m", memory: "1Gi"}`) into canonical units.
 * @throws {QuantityError} when a quantity is malformed
 */
export function parseResourceList(raw: Readonly<Record<string, string | number>> | undefined): ResourceList {
  const out: Record<string, number> = {};
  for (const [name, q] of Object.entries(raw ?? {})) {
    const unit = unitOf(name);
    out[name] = unit === 'millicores' ? cpuMillicores(q) : unit === 'MiB' ? mebibytes(q) : parseQuantity(q);
  }
  return out;
}

/** Sum of lists, key by key. */
export function add(...lists: readonly ResourceList[]): ResourceList {
  const out: Record<string, number> = {};
  for (const list of lists) for (const k in list) out[k] = (out[k] ?? 0) + list[k]!;
  return out;
}

/** `a − b`, key by key (may go negative). */
export function subtract(a: ResourceList, b: ResourceList): ResourceList {
  const out: Record<string, number> = { ...a };
  for (const k in b) out[k] = (out[k] ?? 0) - b[k]!;
  return out;
}

/** `a − b` on the keys of `a` only (for limits: a key `a` does not mention stays unlimited). */
export function subtractOnKeysOf(a: ResourceList, b: ResourceList): ResourceList {
  return Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v - (b[k] ?? 0)]));
}

/** `a + b + …` on the keys of `a` only (for limits: giving back capacity must not limit a key `a` leaves unlimited). */
export function addOnKeysOf(a: ResourceList, ...lists: readonly ResourceList[]): ResourceList {
  return Object.fromEntries(Object.entries(a).map(([k, v]) => [k, lists.reduce((sum, l) => sum + (l[k] ?? 0), v)]));
}

/** Key-by-key maximum. */
export function max(...lists: readonly ResourceList[]): ResourceList {
  const out: Record<string, number> = {};
  for (const list of lists) {
    for (const k in list) {
      const v = list[k]!;
      const current = out[k];
      if (current === undefined || v > current) out[k] = Math.max(0, v);
    }
  }
  return out;
}

/** Tolerance for comparing MiB fractions that went through float arithmetic. */
const EPSILON = 1e-6;

/**
 * True when every requested amount is within what is available (a key missing from `available` is zero).
 * Zero requests always fit.
 */
export function fits(requests: ResourceList, available: ResourceList): boolean {
  // Hot path of every solve: a plain for-in loop, no allocation.
  for (const k in requests) {
    const v = requests[k]!;
    if (v > EPSILON && v > (available[k] ?? 0) + EPSILON) return false;
  }
  return true;
}

/** `fits(add(a, b), available)` without building the sum (hot path). */
export function fitsSum(a: ResourceList, b: ResourceList, available: ResourceList): boolean {
  for (const k in b) {
    const v = (a[k] ?? 0) + b[k]!;
    if (b[k]! > EPSILON && v > EPSILON && v > (available[k] ?? 0) + EPSILON) return false;
  }
  for (const k in a) {
    if (k in b) continue;
    const v = a[k]!;
    if (v > EPSILON && v > (available[k] ?? 0) + EPSILON) return false;
  }
  return true;
}

/** `list × factor`, key by key (the requests of `factor` identical pods). */
export function scale(list: ResourceList, factor: number): ResourceList {
  const out: Record<string, number> = {};
  for (const k in list) out[k] = list[k]! * factor;
  return out;
}

/**
 * How many copies of `unit` fit in `room` at once, with the same tolerance as {@link fits} (so `fits(scale(unit,
 * n), room)` holds for the returned `n` up to float rounding). Infinity when `unit` requests nothing; never
 * negative.
 * @example fitCount({ cpu: 500, memory: 1024, pods: 1 }, { cpu: 1930, memory: 6903, pods: 29 }) // 3
 */
export function fitCount(unit: ResourceList, room: ResourceList): number {
  let n = Number.POSITIVE_INFINITY;
  for (const k in unit) {
    const v = unit[k]!;
    if (v <= EPSILON) continue;
    n = Math.min(n, Math.floor(((room[k] ?? 0) + EPSILON) / v));
  }
  return Math.max(0, n);
}

/** The resources of `requests` that do not fit in `available`, in canonical units (empty when everything fits). */
export function exceeding(requests: ResourceList, available: ResourceList): string[] {
  return Object.entries(requests)
    .filter(([k, v]) => v > EPSILON && v > (available[k] ?? 0) + EPSILON)
    .map(([k]) => k);
}

/** Formats an amount in its canonical unit for humans: `1500m`, `2048Mi`, `3`. */
export function formatAmount(name: string, amount: number): string {
  const unit = unitOf(name);
  if (unit === 'millicores') return `${Math.round(amount)}m`;
  if (unit === 'MiB') return `${Math.round(amount * 100) / 100}Mi`;
  return String(Math.round(amount * 1000) / 1000);
}

/** Formats a list for humans: `cpu=1500m, memory=2048Mi, pods=3`. */
export function formatResources(list: ResourceList): string {
  return Object.entries(list)
    .filter(([, v]) => v !== 0)
    .map(([k, v]) => `${k}=${formatAmount(k, v)}`)
    .join(', ');
}
