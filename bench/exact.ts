/**
 * The exact optimum of small cases (≤ 60 pods) over a candidate set of node options, as a MIP solved with HiGHS.
 *
 * Model: for each candidate option o, slots k = 1…K_o with y_o,k ∈ {0,1} (the node is launched) and integer
 * n_c,o,k ≥ 0 (pods of class c on it); Σ_o,k n_c,o,k = n_c; Σ_c request_c,r·n_c,o,k ≤ room_o,r·y_o,k for every
 * resource (the `pods` resource links n to y); y_o,k ≥ y_o,k+1 (symmetry); minimise Σ price_o·y_o,k.
 *
 * K_o = min(⌊UB / price_o⌋, pods that fit o, 1 + Σ_r ⌊2·D_r / room_o,r⌋) where UB is a known plan's price and D_r the
 * demand of the pods that fit o: in an optimal plan no two nodes of one type could be merged, so at most one of them
 * is at most half full in every resource — each of the others is more than half full in some resource.
 */
import type { SchedulingPod } from '../shared/core/provisioning/pod.js';
import type { NodePoolTemplate } from '../shared/core/provisioning/types.js';
import { classFits, highs, lpNumber, paretoOptions, podClasses, type NodeOption } from './lp-bound.js';

/** The outcome of an exact solve. */
export interface ExactOptimum {
  /** Best plan found, USD per hour. */
  readonly objective: number;
  /** HiGHS `mip_dual_bound`: no plan over the candidates is cheaper, USD per hour. Equals `objective` when optimal. */
  readonly dualBound: number;
  /** True when HiGHS proved optimality (within `mip_rel_gap` 1e-6). */
  readonly optimal: boolean;
  /** The candidate instance types, `nodePool/type`. */
  readonly candidates: readonly string[];
  /** Node slots in the model (Σ K_o). */
  readonly slots: number;
  /** Wall time, seconds. */
  readonly seconds: number;
}

/** Options of {@link exactOptimum}. */
export interface ExactOptions {
  /** Instance types (`nodePool/type`) that must be candidates, e.g. those the compared plans use. */
  readonly include: readonly string[];
  /** Extra candidates: this many of the cheapest non-dominated options per unit of the case's demand. @default 4 */
  readonly extra?: number;
  /** A known plan's price, USD per hour (bounds the slots). */
  readonly upperBound: number;
  /**
   * A proven lower bound on every plan's price, USD per hour (e.g. the pattern LP bound of `pattern-lp.ts`), added as
   * the cut Σ price·y ≥ lowerBound·(1 − 1e-9) so the MIP's dual bound starts there. It must bound the optimum over
   * the whole catalogue (which is ≤ the optimum over the candidates), else the MIP may be cut wrongly.
   */
  readonly lowerBound?: number;
  /** HiGHS `time_limit`, seconds. @default 30 */
  readonly timeLimitSeconds?: number;
}

/**
 * Solves the MIP over the candidate set: the types in `include` plus the `extra` non-dominated options with the
 * lowest price per unit of the case's binding demand (price ÷ min over resources of room ÷ demand).
 * @throws {Error} when HiGHS finds no solution at all
 */
export async function exactOptimum(pods: readonly SchedulingPod[], templates: readonly NodePoolTemplate[], options: ExactOptions): Promise<ExactOptimum> {
  const started = performance.now();
  const solver = await highs();
  const { resources, classes } = podClasses(pods, templates);
  const pareto = paretoOptions(templates, resources);
  const demand = resources.map((_, r) => classes.reduce((s, c) => s + c.requests[r]! * c.count, 0));
  const efficiency = (o: NodeOption) => o.price / Math.min(...resources.map((_, r) => (demand[r]! > 0 ? o.room[r]! / demand[r]! : Number.POSITIVE_INFINITY)));
  const chosen = new Map<string, NodeOption>();
  const key = (o: NodeOption) => `${o.nodePool}/${o.instanceType}`;
  for (const o of [...pareto].filter((o) => classes.some((c) => classFits(c, o))).sort((a, b) => efficiency(a) - efficiency(b)).slice(0, options.extra ?? 4)) chosen.set(key(o), o);
  for (const name of options.include) {
    if (chosen.has(name)) continue;
    const [nodePool, instanceType] = name.split('/') as [string, string];
    const template = templates.find((t) => t.name === nodePool);
    const type = template?.instanceTypes.find((t) => t.name === instanceType);
    if (!template || !type) throw new Error(`unknown candidate ${name}`);
    const price = pareto.find((o) => key(o) === name)?.price ?? paretoOptions([{ ...template, instanceTypes: [type] }], resources)[0]?.price;
    if (price === undefined) throw new Error(`candidate ${name} has no allowed offering`);
    chosen.set(name, { nodePool, instanceType, price, room: resources.map((r) => (type.allocatable[r] ?? 0) - (template.daemonOverhead[r] ?? 0)) });
  }
  const candidates = [...chosen.values()];

  const rows: string[] = [];
  const objective: string[] = [];
  const integers: string[] = [];
  const binaries: string[] = [];
  const bounds: string[] = [];
  const assign: string[][] = classes.map(() => []);
  let slots = 0;
  candidates.forEach((o, oi) => {
    const fitting = classes.map((c, ci) => ({ c, ci })).filter(({ c }) => classFits(c, o));
    if (fitting.length === 0) return;
    const fitCount = fitting.reduce((s, { c }) => s + c.count, 0);
    const halfFull = 1 + resources.reduce((s, _, r) => {
      const d = fitting.reduce((sum, { c }) => sum + c.requests[r]! * c.count, 0);
      return s + (o.room[r]! > 0 ? Math.floor((2 * d) / o.room[r]!) : 0);
    }, 0);
    const k = Math.max(0, Math.min(Math.floor(options.upperBound / o.price + 1e-9), fitCount, halfFull));
    for (let s = 0; s < k; s++) {
      slots++;
      const y = `y${oi}_${s}`;
      binaries.push(y);
      objective.push(`${lpNumber(o.price)} ${y}`);
      if (s > 0) rows.push(` s${oi}_${s}: y${oi}_${s - 1} - ${y} >= 0`);
      resources.forEach((_, r) => {
        const terms = fitting.filter(({ c }) => c.requests[r]! > 0).map(({ c, ci }) => `${lpNumber(c.requests[r]!)} n${ci}_${oi}_${s}`);
        if (terms.length > 0) rows.push(` r${oi}_${s}_${r}: ${terms.join(' + ')} - ${lpNumber(o.room[r]!)} ${y} <= 0`);
      });
      for (const { c, ci } of fitting) {
        const n = `n${ci}_${oi}_${s}`;
        integers.push(n);
        bounds.push(` 0 <= ${n} <= ${c.count}`);
        assign[ci]!.push(n);
      }
    }
  });
  classes.forEach((c, ci) => {
    if (assign[ci]!.length === 0) throw new Error('a pod class fits no candidate slot');
    rows.push(` d${ci}: ${assign[ci]!.join(' + ')} = ${c.count}`);
  });
  if (options.lowerBound !== undefined && options.lowerBound > 0) rows.push(` lb: ${objective.join(' + ')} >= ${lpNumber(options.lowerBound * (1 - 1e-9))}`);
  const text = `Minimize\n obj: ${objective.join(' + ')}\nSubject To\n${rows.join('\n')}\nBounds\n${bounds.join('\n')}\nGeneral\n ${integers.join(' ')}\nBinary\n ${binaries.join(' ')}\nEnd\n`;
  const result = solver.withModel({ format: 'lp', data: text }, (model) => {
    model.options.set({ output_flag: false, time_limit: options.timeLimitSeconds ?? 30, mip_rel_gap: 1e-6 });
    model.run();
    return { status: model.getModelStatus(), objective: model.getObjectiveValue(), dualBound: Number(model.info.get('mip_dual_bound')) };
  });
  const optimal = result.status === solver.constants.modelStatus.optimal;
  if (!optimal && result.status !== solver.constants.modelStatus.timeLimit) throw new Error(`HiGHS MIP ended with status ${result.status}`);
  if (!Number.isFinite(result.objective)) throw new Error('HiGHS MIP found no plan within its time limit');
  return { objective: result.objective, dualBound: optimal ? result.objective : result.dualBound, optimal, candidates: candidates.map(key), slots, seconds: (performance.now() - started) / 1000 };
}
