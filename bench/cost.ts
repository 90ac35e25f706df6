/**
 * B3, fleet cost: the project's solver and the FFD baseline on the same inputs, both plans verified independently,
 * each priced against the LP lower bound and, on small cases, against the exact optimum (MIP).
 */
import type { SchedulingPod } from '../shared/core/provisioning/pod.js';
import { solve } from '../shared/core/provisioning/scheduler.js';
import type { NodePoolTemplate } from '../shared/core/provisioning/types.js';
import { exactOptimum, type ExactOptimum } from './exact.js';
import { firstFitDecreasing } from './ffd.js';
import { lpBound, type LpBound } from './lp-bound.js';
import { patternLpBound, type PatternLp } from './pattern-lp.js';
import { planCost, planFromResults, verifyPlan, type Plan } from './plan.js';

/** One input of the cost benchmark. */
export interface CostCase {
  readonly name: string;
  readonly pods: readonly SchedulingPod[];
  readonly templates: readonly NodePoolTemplate[];
}

/** A plan's figures. */
export interface PlanFigures {
  /** USD per hour. */
  readonly cost: number;
  readonly nodes: number;
  /** Verification problems (empty when the plan is valid); the first few. */
  readonly problems: readonly string[];
  /** Wall time to compute the plan, seconds. */
  readonly seconds: number;
}

/** The cost benchmark's figures for one case. */
export interface CostRow {
  readonly name: string;
  readonly pods: number;
  readonly solver: PlanFigures;
  readonly ffd: PlanFigures;
  /** The per-class and aggregate LP bounds (`lp-bound.ts`). */
  readonly lp: LpBound;
  /** The pattern (configuration) LP bound (`pattern-lp.ts`): the tightest of the three, still below every plan. */
  readonly pattern: PatternLp;
}

/** The figures for one small case, with its exact optimum. */
export interface ExactRow extends CostRow {
  readonly exact: ExactOptimum;
}

function figures(plan: Plan, pods: readonly SchedulingPod[], templates: readonly NodePoolTemplate[], seconds: number): PlanFigures {
  const problems = verifyPlan(plan, pods, templates);
  return { cost: planCost(plan), nodes: plan.nodes.length, problems: problems.slice(0, 5), seconds };
}

/** Runs the solver (`solve()`, the public API), the baseline and the LP bounds (per-class, aggregate, pattern) on one case. */
export async function costRow(c: CostCase): Promise<CostRow & { readonly plans: { readonly solver: Plan; readonly ffd: Plan } }> {
  let t0 = performance.now();
  const solverPlan = planFromResults(solve(c.pods, c.templates, []));
  const solverSeconds = (performance.now() - t0) / 1000;
  t0 = performance.now();
  const ffdPlan = firstFitDecreasing(c.pods, c.templates);
  const ffdSeconds = (performance.now() - t0) / 1000;
  return {
    name: c.name,
    pods: c.pods.length,
    solver: figures(solverPlan, c.pods, c.templates, solverSeconds),
    ffd: figures(ffdPlan, c.pods, c.templates, ffdSeconds),
    lp: await lpBound(c.pods, c.templates),
    pattern: await patternLpBound(c.pods, c.templates),
    plans: { solver: solverPlan, ffd: ffdPlan },
  };
}

/**
 * {@link costRow} plus the exact optimum over a candidate set: the types the solver's and the baseline's plans use,
 * the types the per-class LP uses, and 4 more cheap non-dominated types (see `exact.ts`), so both plans are feasible
 * for the MIP. The pattern LP bound is not passed to the MIP as a cut (`ExactOptions.lowerBound`): on the uniform 40-
 * and 60-pod cases HiGHS then ended its 20 s with a lower dual bound and dearer incumbents than without it; the report
 * combines the two bounds instead.
 * @param timeLimitSeconds HiGHS time limit; when reached the MIP's incumbent may be above either plan and its dual
 *   bound is reported
 */
export async function exactRow(c: CostCase, timeLimitSeconds: number): Promise<ExactRow> {
  const row = await costRow(c);
  const include = new Set<string>();
  for (const plan of [row.plans.solver, row.plans.ffd]) for (const n of plan.nodes) include.add(`${n.nodePool}/${n.instanceType}`);
  for (const s of row.lp.support) include.add(`${s.option.nodePool}/${s.option.instanceType}`);
  const valid = [row.solver, row.ffd].filter((f) => f.problems.length === 0).map((f) => f.cost);
  const upperBound = valid.length > 0 ? Math.min(...valid) : Math.max(row.solver.cost, row.ffd.cost);
  const exact = await exactOptimum(c.pods, c.templates, { include: [...include], upperBound: upperBound * (1 + 1e-9), timeLimitSeconds });
  const { plans: _plans, ...rest } = row;
  return { ...rest, exact };
}
