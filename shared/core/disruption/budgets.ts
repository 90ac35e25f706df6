/**
 * NodePool disruption budgets (`spec.disruption.budgets`), as Karpenter v1 evaluates them.
 *
 * - A budget with `schedule` + `duration` is active at instant T when the cron schedule (UTC, 5 fields or a
 *   macro such as `@daily`) fired at some H with `T − duration < H ≤ T` — Karpenter's `Budget.IsActive`
 *   (core `pkg/apis/v1/nodepool.go`: `schedule.Next(now − duration) ≤ now`). A budget without a schedule is
 *   always active.
 * - For one reason (Empty, Underutilized, Drifted) the allowance is the minimum over active budgets whose
 *   `reasons` is absent, empty or contains the reason (`GetAllowedDisruptionsByReason`); with none active it is
 *   unlimited. Percentages of the NodePool's node count round up (`GetScaledValueFromIntOrPercent(…, true)`).
 * - A schedule that does not evaluate fails closed: that budget allows zero disruptions.
 * - The NodePool's remaining allowance subtracts the nodes already being disrupted and the NotReady nodes,
 *   floored at 0 (`helpers.go BuildDisruptionBudgetMapping`).
 *
 * Budgets limit the graceful methods only; expiration and interruption never consult them (docs
 * `concepts/disruption.md#nodepool-disruption-budgets`).
 */
import { Cron } from 'croner';
import { parseDuration } from '../api/duration.js';
import type { Budget, BudgetReason } from '../api/nodepool.js';
import { SkiffError } from '../errors.js';

/** A budget schedule croner cannot evaluate (the CRD pattern accepts a few shapes no cron parser does). */
export class BudgetScheduleError extends SkiffError {
  /**
   * @param schedule the offending cron expression
   * @param reason the parser's words
   */
  constructor(
    readonly schedule: string,
    readonly reason: string,
  ) {
    super(`budget schedule ${JSON.stringify(schedule)} does not parse: ${reason}`);
  }
}

/** A half-open interval `[start, end)` of UTC instants during which a scheduled budget is active. */
export interface BudgetWindow {
  readonly start: Date;
  readonly end: Date;
}

/** Cron objects by expression; parsing is the costly part and budgets are evaluated every pass. */
const PARSED = new Map<string, Cron | BudgetScheduleError>();

function cronOf(schedule: string): Cron {
  let parsed = PARSED.get(schedule);
  if (parsed === undefined) {
    try {
      // Karpenter parses with robfig/cron's standard parser: 5 fields, day-of-month OR day-of-week (croner's default).
      parsed = new Cron(schedule.trim(), { timezone: 'UTC', paused: true, mode: '5-part' });
    } catch (e) {
      parsed = new BudgetScheduleError(schedule, e instanceof Error ? e.message : String(e));
    }
    if (PARSED.size > 1000) PARSED.clear();
    PARSED.set(schedule, parsed);
  }
  if (parsed instanceof BudgetScheduleError) throw parsed;
  return parsed;
}

/**
 * Why a budget schedule will not evaluate (`"0 25 * * *"`: `Invalid value for hour: 25`), or undefined when it will.
 * Karpenter's NodePool schema checks a schedule's shape only, so such a NodePool is accepted, and its budget fails
 * closed whenever it is evaluated (core `pkg/apis/v1/nodepool.go` `GetAllowedDisruptions`: an `IsActive` error allows 0).
 * @param schedule a schedule of the shape the schema accepts (5 fields or a macro)
 */
export function budgetScheduleProblem(schedule: string): string | undefined {
  try {
    cronOf(schedule);
    return undefined;
  } catch (e) {
    return e instanceof BudgetScheduleError ? e.reason : String(e);
  }
}

/** The budget's `duration` in seconds (`14h`, `90m`, `1h30m`). */
function durationSeconds(budget: Budget): number {
  return parseDuration(budget.duration ?? '0s');
}

/**
 * Whether a budget is active at an instant.
 * @param budget a parsed budget
 * @param at the instant (UTC)
 * @returns true for a budget without a schedule; otherwise true when the schedule fired in `(at − duration, at]`
 * @throws {BudgetScheduleError} when the schedule does not evaluate (callers fail closed)
 */
export function isBudgetActive(budget: Budget, at: Date): boolean {
  if (budget.schedule === undefined) return true;
  const cron = cronOf(budget.schedule);
  const next = cron.nextRun(new Date(at.getTime() - durationSeconds(budget) * 1000));
  return next !== null && next.getTime() <= at.getTime();
}

/**
 * The windows during which a scheduled budget is active and that overlap `[from, to)`, in order; clipped to the range.
 * A budget without a schedule yields one window covering the range.
 * @throws {BudgetScheduleError} when the schedule does not evaluate
 */
export function budgetWindows(budget: Budget, from: Date, to: Date): BudgetWindow[] {
  if (budget.schedule === undefined) return [{ start: from, end: to }];
  const cron = cronOf(budget.schedule);
  const lengthMs = durationSeconds(budget) * 1000;
  const windows: BudgetWindow[] = [];
  let fire = cron.nextRun(new Date(from.getTime() - lengthMs));
  while (fire !== null && fire.getTime() < to.getTime()) {
    const start = Math.max(fire.getTime(), from.getTime());
    const end = Math.min(fire.getTime() + lengthMs, to.getTime());
    const last = windows.at(-1);
    // Overlapping firings (a window longer than the cron period) merge into one.
    if (last && start <= last.end.getTime()) windows[windows.length - 1] = { start: last.start, end: new Date(Math.max(end, last.end.getTime())) };
    else if (end > start) windows.push({ start: new Date(start), end: new Date(end) });
    fire = cron.nextRun(fire);
  }
  return windows;
}

/**
 * How many nodes one budget allows for a NodePool of `totalNodes`.
 * @param nodes the budget's `nodes`: `"10%"` (rounded up) or `"5"`
 * @param totalNodes the NodePool's managed, initialized nodes
 */
export function budgetNodes(nodes: string, totalNodes: number): number {
  if (nodes.endsWith('%')) return Math.ceil((totalNodes * Number(nodes.slice(0, -1))) / 100);
  return Number(nodes);
}

/** What limits a NodePool's disruptions for one reason at one instant. */
export interface BudgetAllowance {
  /** Nodes the active budgets allow in total (`Infinity` when none is active). */
  readonly allowed: number;
  /** `allowed` minus the nodes being disrupted and NotReady, floored at 0: what may start now. */
  readonly remaining: number;
  /** Index into `budgets` of the budget giving `allowed`, or null when none is active. */
  readonly limitingBudget: number | null;
  /** Budgets whose schedule did not evaluate (each allowed zero), with the parser's words. */
  readonly unparsable: readonly { readonly index: number; readonly message: string }[];
}

/**
 * The allowance of a NodePool's budgets for one disruption reason.
 * @param budgets `spec.disruption.budgets` (already defaulted to `[{nodes: "10%"}]` by the schema)
 * @param reason the disruption reason being planned
 * @param at the instant (UTC)
 * @param totalNodes the NodePool's managed, initialized nodes (the base of percentages)
 * @param disruptingOrNotReady nodes of the NodePool already being disrupted, or NotReady
 * @example budgetAllowance([{ nodes: '10%' }], 'Empty', now, 25, 1) // { allowed: 3, remaining: 2, … }
 */
export function budgetAllowance(budgets: readonly Budget[], reason: BudgetReason, at: Date, totalNodes: number, disruptingOrNotReady: number): BudgetAllowance {
  let allowed = Number.POSITIVE_INFINITY;
  let limitingBudget: number | null = null;
  const unparsable: { index: number; message: string }[] = [];
  budgets.forEach((budget, index) => {
    if (budget.reasons !== undefined && budget.reasons.length > 0 && !budget.reasons.includes(reason)) return;
    let nodes: number;
    try {
      if (!isBudgetActive(budget, at)) return;
      nodes = budgetNodes(budget.nodes, totalNodes);
    } catch (e) {
      if (!(e instanceof BudgetScheduleError)) throw e;
      unparsable.push({ index, message: e.message });
      nodes = 0;
    }
    if (nodes < allowed) {
      allowed = nodes;
      limitingBudget = index;
    }
  });
  return { allowed, remaining: Math.max(0, allowed - disruptingOrNotReady), limitingBudget, unparsable };
}
