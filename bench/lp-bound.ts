/**
 * Lower bounds on the hourly price of any plan, from linear programs solved with HiGHS (npm `highs`, WebAssembly).
 *
 * Options are (NodePool, instance type) pairs with price = the cheapest available offering the NodePool allows
 * (USD per hour) and room = allocatable − the NodePool's daemonset overhead. Pod classes group pods with equal requests
 * that the same NodePools accept.
 *
 * - Aggregate bound: min Σ price_o·x_o subject to Σ room_o,r·x_o ≥ Σ_pods request_r for each resource r (cpu, memory,
 *   pods, GPUs…), x ≥ 0.
 * - Per-class bound (the one the report divides by): x_o ≥ 0 nodes of option o and z_c,o ≥ 0 pods of class c on them,
 *   z only where one pod of class c fits o alone and o's NodePool accepts c; Σ_o z_c,o = n_c for each class and
 *   Σ_c request_c,r·z_c,o ≤ room_o,r·x_o for each option and resource. Any integral plan is feasible for it, so its
 *   optimum is a lower bound; unlike the aggregate bound, a pod too big for a type cannot be counted there.
 * Options dominated within their NodePool (another costs no more and has at least the room in every resource) are
 * dropped first; this does not change either optimum for pods without instance-type requirements.
 */
import highsModule, { type Highs as HighsApi } from 'highs';
import { WELL_KNOWN_LABELS } from '../shared/core/api/labels.js';
import type { SchedulingPod } from '../shared/core/provisioning/pod.js';
import type { NodePoolTemplate } from '../shared/core/provisioning/types.js';
import { firstUntolerated } from '../shared/core/scheduling/taints.js';
import { resourceKeys } from './ffd.js';
import { allowedPrice } from './plan.js';

const EPSILON = 1e-6;

/** The loaded HiGHS module. */
export type Highs = HighsApi;

// `highs` ships one CommonJS-typed declaration for both its CommonJS and ES builds: under NodeNext the default
// import is typed as the module object, while at run time the ES build's default export is the loader itself.
const loadHighs = ((highsModule as unknown as { default?: unknown }).default ?? highsModule) as () => Promise<Highs>;

let highsPromise: Promise<Highs> | undefined;

/** Loads HiGHS once per process. */
export function highs(): Promise<Highs> {
  highsPromise ??= loadHighs();
  return highsPromise;
}

/** A (NodePool, instance type) pair a node can be. */
export interface NodeOption {
  readonly nodePool: string;
  readonly instanceType: string;
  /** Cheapest available offering the NodePool allows, USD per hour. */
  readonly price: number;
  /** Allocatable minus daemonset overhead, per resource of {@link Classes.resources} (millicores, MiB, counts). */
  readonly room: readonly number[];
}

/** Pods grouped into classes with the resources they request. */
export interface Classes {
  /** Resource names, in the order of every vector. */
  readonly resources: readonly string[];
  readonly classes: readonly PodClass[];
}

/** Pods with equal requests accepted by the same NodePools. */
export interface PodClass {
  /** Requests per resource of {@link Classes.resources}. */
  readonly requests: readonly number[];
  /** NodePools that accept these pods (taints tolerated, requirements compatible). */
  readonly nodePools: ReadonlySet<string>;
  readonly count: number;
}

/** Groups pods into classes. */
export function podClasses(pods: readonly SchedulingPod[], templates: readonly NodePoolTemplate[]): Classes {
  const resources = resourceKeys(pods, templates);
  const byKey = new Map<string, { requests: number[]; nodePools: Set<string>; count: number }>();
  for (const pod of pods) {
    const requests = resources.map((r) => pod.requests[r] ?? 0);
    const nodePools = new Set(
      templates
        .filter((t) => !firstUntolerated(t.taints, pod.tolerations) && pod.requirementAlternatives.some((alt) => t.requirements.compatible(alt, WELL_KNOWN_LABELS) === undefined))
        .map((t) => t.name),
    );
    const key = JSON.stringify([requests, [...nodePools]]);
    const c = byKey.get(key);
    if (c) c.count++;
    else byKey.set(key, { requests, nodePools, count: 1 });
  }
  return { resources, classes: [...byKey.values()] };
}

/**
 * The non-dominated options of each NodePool (see the module doc).
 * @param resources resource names, in vector order
 */
export function paretoOptions(templates: readonly NodePoolTemplate[], resources: readonly string[]): NodeOption[] {
  const out: NodeOption[] = [];
  for (const t of templates) {
    const all: NodeOption[] = [];
    for (const type of t.instanceTypes) {
      const price = allowedPrice(type, t);
      if (price === undefined) continue;
      const room = resources.map((r) => (type.allocatable[r] ?? 0) - (t.daemonOverhead[r] ?? 0));
      if (room.some((v) => v < -EPSILON)) continue;
      all.push({ nodePool: t.name, instanceType: type.name, price, room });
    }
    all.sort((a, b) => a.price - b.price || a.instanceType.localeCompare(b.instanceType));
    const kept: NodeOption[] = [];
    for (const o of all) {
      if (!kept.some((k) => k.price <= o.price && k.room.every((v, i) => v >= o.room[i]! - EPSILON))) kept.push(o);
    }
    out.push(...kept);
  }
  return out;
}

/** Whether one pod of class `c` fits option `o` alone, in a NodePool that accepts it. */
export function classFits(c: PodClass, o: NodeOption): boolean {
  return c.nodePools.has(o.nodePool) && c.requests.every((v, i) => v <= EPSILON || v <= o.room[i]! + EPSILON);
}

/** The LP bounds of one input. */
export interface LpBound {
  /** The per-class bound, USD per hour. */
  readonly bound: number;
  /** The aggregate (per-resource only) bound, USD per hour. */
  readonly aggregate: number;
  /** Options the per-class LP uses (x > 0), most used first, with their node counts (fractional). */
  readonly support: readonly { readonly option: NodeOption; readonly nodes: number }[];
  /** Non-dominated options considered. */
  readonly options: number;
  /** Pod classes. */
  readonly classes: number;
  /** Wall time of both solves, seconds. */
  readonly seconds: number;
}

/** A number as LP-format text. */
export function lpNumber(v: number): string {
  return Number.isInteger(v) ? String(v) : v.toPrecision(12);
}

/**
 * Computes both LP bounds.
 * @throws {Error} when HiGHS does not report an optimal LP (e.g. a pod no option fits makes it infeasible)
 */
export async function lpBound(pods: readonly SchedulingPod[], templates: readonly NodePoolTemplate[]): Promise<LpBound> {
  const started = performance.now();
  const solver = await highs();
  const { resources, classes } = podClasses(pods, templates);
  const options = paretoOptions(templates, resources);
  const x = (o: number) => `x${o}`;
  const objective = options.map((o, i) => `${lpNumber(o.price)} ${x(i)}`).join(' + ');

  // Aggregate.
  const demand = resources.map((_, r) => classes.reduce((s, c) => s + c.requests[r]! * c.count, 0));
  const aggregateRows = resources
    .map((_, r) => (demand[r]! > EPSILON ? ` agg${r}: ${options.map((o, i) => `${lpNumber(o.room[r]!)} ${x(i)}`).join(' + ')} >= ${lpNumber(demand[r]!)}` : ''))
    .filter(Boolean);
  const aggregate = solveLp(solver, `Minimize\n obj: ${objective}\nSubject To\n${aggregateRows.join('\n')}\nEnd\n`);

  // Per class.
  const rows: string[] = [];
  const z = (c: number, o: number) => `z${c}_${o}`;
  const onOption = options.map(() => [] as number[]);
  classes.forEach((c, ci) => {
    const fits = options.flatMap((o, oi) => (classFits(c, o) ? [oi] : []));
    if (fits.length === 0) throw new Error(`no instance type fits a pod requesting ${JSON.stringify(Object.fromEntries(resources.map((r, i) => [r, c.requests[i]])))}`);
    for (const oi of fits) onOption[oi]!.push(ci);
    rows.push(` d${ci}: ${fits.map((oi) => z(ci, oi)).join(' + ')} = ${c.count}`);
  });
  options.forEach((o, oi) => {
    const on = onOption[oi]!;
    if (on.length === 0) return;
    resources.forEach((_, r) => {
      const terms = on.filter((ci) => classes[ci]!.requests[r]! > EPSILON).map((ci) => `${lpNumber(classes[ci]!.requests[r]!)} ${z(ci, oi)}`);
      if (terms.length > 0) rows.push(` c${oi}_${r}: ${terms.join(' + ')} - ${lpNumber(o.room[r]!)} ${x(oi)} <= 0`);
    });
  });
  const perClass = solveLp(solver, `Minimize\n obj: ${objective}\nSubject To\n${rows.join('\n')}\nEnd\n`);
  const support = options
    .map((option, i) => ({ option, nodes: perClass.columns[x(i)] ?? 0 }))
    .filter((s) => s.nodes > 1e-7)
    .sort((a, b) => b.nodes * b.option.price - a.nodes * a.option.price);
  return { bound: perClass.objective, aggregate: aggregate.objective, support, options: options.length, classes: classes.length, seconds: (performance.now() - started) / 1000 };
}

function solveLp(solver: Highs, text: string): { objective: number; columns: Record<string, number> } {
  const result = solver.solve(text, { output_flag: false });
  if (result.Status !== 'Optimal') throw new Error(`HiGHS LP ended ${result.Status}`);
  const columns: Record<string, number> = {};
  for (const [name, col] of Object.entries(result.Columns)) columns[name] = (col as { Primal?: number }).Primal ?? 0;
  return { objective: result.ObjectiveValue, columns };
}
