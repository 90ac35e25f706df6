/**
 * The time series and tables of the HTML report (`skiff simulate --report`), derived from a Result alone (plus the
 * scenario's NodePool budgets for the shaded windows). Pure: the same inputs give the same series; no clock, no I/O.
 *
 * Times are epoch milliseconds (UTC). A step series holds each value from its instant until the next one: the value
 * at `times[i]` is what was true during `[times[i], times[i + 1])`, and the last instant is the run's end.
 */
import type { Budget } from '../../core/api/nodepool.js';
import { LABEL_NODEPOOL } from '../../core/api/labels.js';
import { BudgetScheduleError, budgetWindows } from '../../core/disruption/budgets.js';
import type { Result } from '../../sim/result-schema.js';

/** The NodePool a Node without one is counted under (e.g. a scenario's unmanaged `spec.nodes`). */
export const UNMANAGED_NODEPOOL = '(unmanaged)';

/** An interval `[from, to)` of epoch ms during which `weight` counts towards `group`. */
export interface WeightedInterval {
  /** The group (dataset) the interval counts towards, e.g. `general/spot`. */
  readonly group: string;
  /** Start, epoch ms (inclusive). */
  readonly from: number;
  /** End, epoch ms (exclusive); null when it lasted past the end of the run. */
  readonly to: number | null;
  /** How much it adds while it lasts (1 for a count, USD per hour for a price). */
  readonly weight: number;
}

/** One group's values of a {@link StepSeries}, index-aligned with its `times`. */
export interface StepGroup {
  /** The group's key, e.g. `general/spot` or `general`. */
  readonly key: string;
  /** The value from `times[i]` until `times[i + 1]` (the last entry: the value at the end of the run). */
  readonly values: readonly number[];
}

/**
 * Several step functions of time sampled at the same instants, so they can be stacked: every group has a value at
 * every instant in `times`.
 */
export interface StepSeries {
  /** Ascending instants, epoch ms: the run's start, every change inside the run, and the run's end. */
  readonly times: readonly number[];
  /** One entry per group, sorted by key. */
  readonly groups: readonly StepGroup[];
}

/**
 * Samples the sum of weighted intervals per group as step functions over `[startMs, endMs]`. An interval counts at
 * instant t when `from ≤ t < to` (so a node deleted at t no longer counts at t); intervals are clipped to the run,
 * and an empty or inverted one counts nowhere. Sums are rounded to 10⁻⁶ to keep float noise out of the chart.
 * @param intervals what to add up, e.g. one per Node with weight 1
 * @param startMs the run's start, epoch ms
 * @param endMs the run's end, epoch ms
 * @example stepSeries([{ group: 'a', from: 0, to: 10, weight: 1 }], 0, 20) // { times: [0, 10, 20], groups: [{ key: 'a', values: [1, 0, 0] }] }
 */
export function stepSeries(intervals: readonly WeightedInterval[], startMs: number, endMs: number): StepSeries {
  const changes = new Set<number>([startMs, endMs]);
  const clipped: { group: string; from: number; to: number | null; weight: number }[] = [];
  const keys = new Set<string>();
  for (const i of intervals) {
    keys.add(i.group);
    const from = Math.max(startMs, i.from);
    const to = i.to ?? Number.POSITIVE_INFINITY;
    if (i.from > endMs || !(to > from)) continue;
    clipped.push({ group: i.group, from, to: to <= endMs ? to : null, weight: i.weight });
    changes.add(from);
    if (to <= endMs) changes.add(to);
  }
  const times = [...changes].sort((a, b) => a - b);
  const index = new Map(times.map((t, i) => [t, i]));
  const sortedKeys = [...keys].sort();
  // Difference arrays per group: +weight where an interval starts, −weight where it ends.
  const deltas = new Map(sortedKeys.map((k) => [k, new Array<number>(times.length).fill(0)]));
  for (const c of clipped) {
    const d = deltas.get(c.group)!;
    d[index.get(c.from)!]! += c.weight;
    if (c.to !== null) d[index.get(c.to)!]! -= c.weight;
  }
  const groups = sortedKeys.map((key) => {
    let running = 0;
    const values = deltas.get(key)!.map((delta) => {
      running += delta;
      return Math.round(running * 1e6) / 1e6;
    });
    return { key, values };
  });
  return { times, groups };
}

/**
 * Nodes over time by NodePool and capacity type (group key `<nodePool>/<capacityType>`), counted from each Node's
 * `createdAt` until its `deletedAt`. A Node's NodePool is its NodeClaim's, else its `karpenter.sh/nodepool` label,
 * else {@link UNMANAGED_NODEPOOL}.
 */
export function nodesSeries(result: Result): StepSeries {
  const poolOfClaim = new Map(result.nodeClaims.map((c) => [c.name, c.nodePool]));
  const intervals = result.nodes.map((n) => {
    const pool = (n.nodeClaim !== null ? poolOfClaim.get(n.nodeClaim) : undefined) ?? unownedNodePool(n);
    return { group: `${pool}/${n.capacityType}`, from: Date.parse(n.createdAt), to: n.deletedAt === null ? null : Date.parse(n.deletedAt), weight: 1 };
  });
  return stepSeries(intervals, Date.parse(result.start), Date.parse(result.end));
}

/** The group of a Node no NodeClaim owns: its `karpenter.sh/nodepool` label, else {@link UNMANAGED_NODEPOOL}. */
function unownedNodePool(node: Result['nodes'][number]): string {
  return node.labels[LABEL_NODEPOOL] ?? UNMANAGED_NODEPOOL;
}

/**
 * Fleet price over time by NodePool, USD per hour, every node of the fleet counted: each launched NodeClaim's `price`
 * from its `launchedAt` until its `deletedAt`, and each Node no NodeClaim owns (a managed node group's, Fargate's, a
 * scenario's unmanaged `spec.nodes`) at its instance's price (`Result.nodes[].hourlyUSD`) from its `createdAt` until
 * its `deletedAt`, grouped as {@link nodesSeries} groups it ({@link UNMANAGED_NODEPOOL} without a NodePool label). So
 * the sum is the fleet price `cost` and `whatIf` count: at the start it is `whatIf.hourlyUSDAtStart`, at the end
 * `cost.finalHourlyUSD`. NodeClaims that never launched (no price) add nothing, nor does an unowned Node of a Result
 * written before Nodes carried a price.
 */
export function costSeries(result: Result): StepSeries {
  const claims = result.nodeClaims.flatMap((c) =>
    c.price === null || c.launchedAt === null
      ? []
      : [{ group: c.nodePool, from: Date.parse(c.launchedAt), to: c.deletedAt === null ? null : Date.parse(c.deletedAt), weight: c.price }],
  );
  const unowned = result.nodes.flatMap((n) =>
    n.nodeClaim !== null || n.hourlyUSD === null || n.hourlyUSD === undefined
      ? []
      : [{ group: unownedNodePool(n), from: Date.parse(n.createdAt), to: n.deletedAt === null ? null : Date.parse(n.deletedAt), weight: n.hourlyUSD }],
  );
  return stepSeries([...claims, ...unowned], Date.parse(result.start), Date.parse(result.end));
}

/**
 * Pods pending over time (one group, `pending`): a pod counts from `firstPendingAt` (kube-scheduler marked it
 * Unschedulable) until it was scheduled or deleted, whichever came first. Pods never marked Unschedulable count
 * nowhere.
 */
export function pendingSeries(result: Result): StepSeries {
  const intervals = result.pods.flatMap((p) => {
    if (p.firstPendingAt === null) return [];
    const ends = [p.scheduledAt, p.deletedAt].filter((t): t is string => t !== null).map((t) => Date.parse(t));
    return [{ group: 'pending', from: Date.parse(p.firstPendingAt), to: ends.length > 0 ? Math.min(...ends) : null, weight: 1 }];
  });
  const series = stepSeries(intervals, Date.parse(result.start), Date.parse(result.end));
  return series.groups.length > 0 ? series : { times: series.times, groups: [{ key: 'pending', values: series.times.map(() => 0) }] };
}

/** One mark on the disruption timeline. */
export interface DisruptionMark {
  /** When, epoch ms. */
  readonly at: number;
  /** `command`: a disruption command was decided (`Result.disruptions`); `deletion`: a NodeClaim was deleted with a reason. */
  readonly kind: 'command' | 'deletion';
  /** The disruption or deletion reason (`Empty`, `Underutilized`, `Drifted`, `Expired`, `InstanceTerminated`, …). */
  readonly reason: string;
  /** The NodeClaim disrupted or deleted. */
  readonly nodeClaim: string;
  /** Its NodePool. */
  readonly nodePool: string;
  /** What the command does (`delete`, `replace`, `replace → <nodeClaim>`), or `deleted` for a deletion. */
  readonly detail: string;
}

/**
 * The disruption timeline: every disruption command of the Result and every NodeClaim deleted with a
 * `deletionReason` (failed launches, `LaunchFailed`, included), ordered by time, then kind, then NodeClaim.
 */
export function disruptionMarks(result: Result): DisruptionMark[] {
  const commands: DisruptionMark[] = result.disruptions.map((d) => ({
    at: Date.parse(d.at),
    kind: 'command',
    reason: d.reason,
    nodeClaim: d.nodeClaim,
    nodePool: d.nodePool,
    detail: d.decision === 'replace' && d.replacement !== null ? `replace → ${d.replacement}` : d.decision,
  }));
  const deletions: DisruptionMark[] = result.nodeClaims.flatMap((c) =>
    c.deletionReason !== null && c.deletedAt !== null
      ? [{ at: Date.parse(c.deletedAt), kind: 'deletion' as const, reason: c.deletionReason, nodeClaim: c.name, nodePool: c.nodePool, detail: 'deleted' }]
      : [],
  );
  return [...commands, ...deletions].sort((a, b) => a.at - b.at || a.kind.localeCompare(b.kind) || a.nodeClaim.localeCompare(b.nodeClaim));
}

/** A NodePool's name and its `spec.disruption.budgets` (as parsed, defaults applied). */
export interface NodePoolBudgets {
  /** The NodePool's `metadata.name`. */
  readonly nodePool: string;
  /** Its `spec.disruption.budgets`, in order (indexes are reported back as {@link BudgetShade.budget}). */
  readonly budgets: readonly Budget[];
}

/** A span of the run during which one scheduled budget of one NodePool is active (the report shades it). */
export interface BudgetShade {
  /** The NodePool's name. */
  readonly nodePool: string;
  /** Index of the budget in the NodePool's `spec.disruption.budgets`. */
  readonly budget: number;
  /** Start, epoch ms (inclusive). */
  readonly start: number;
  /** End, epoch ms (exclusive). */
  readonly end: number;
  /** The budget's `nodes` (`"0"`, `"10%"`); `"0"` for a schedule that does not parse (Karpenter fails closed). */
  readonly nodes: string;
  /** The reasons the budget limits; empty for all of them. */
  readonly reasons: readonly string[];
  /** The budget's schedule and duration as written, e.g. `0 9 * * * for 2h`, plus why it failed to parse if it did. */
  readonly label: string;
}

/** A budget without a schedule: active for the whole run, listed rather than shaded. */
export interface AlwaysActiveBudget {
  /** The NodePool's name. */
  readonly nodePool: string;
  /** Index of the budget in the NodePool's `spec.disruption.budgets`. */
  readonly budget: number;
  /** The budget's `nodes` (`"10%"`, `"5"`). */
  readonly nodes: string;
  /** The reasons the budget limits; empty for all of them. */
  readonly reasons: readonly string[];
}

/** The budgets of a run, as the report shows them. */
export interface BudgetOverview {
  /** Windows of scheduled budgets inside the run, by NodePool then start. */
  readonly shades: readonly BudgetShade[];
  /** Budgets without a schedule (they apply throughout, so shading them would cover the whole chart). */
  readonly always: readonly AlwaysActiveBudget[];
}

/**
 * The disruption budgets over `[startMs, endMs)`: each scheduled budget's active windows ({@link budgetWindows},
 * cron in UTC) and the budgets that are always active. A schedule that does not parse allows zero disruptions at
 * all times (fail closed, as Karpenter does), so it is shaded over the whole run with `nodes: "0"`.
 * @param nodePools the scenario's NodePools, in any order (the result is ordered by NodePool name)
 */
export function budgetOverview(nodePools: readonly NodePoolBudgets[], startMs: number, endMs: number): BudgetOverview {
  const shades: BudgetShade[] = [];
  const always: AlwaysActiveBudget[] = [];
  const from = new Date(startMs);
  const to = new Date(endMs);
  for (const pool of [...nodePools].sort((a, b) => a.nodePool.localeCompare(b.nodePool))) {
    pool.budgets.forEach((b, index) => {
      const reasons = [...(b.reasons ?? [])];
      if (b.schedule === undefined) {
        always.push({ nodePool: pool.nodePool, budget: index, nodes: b.nodes, reasons });
        return;
      }
      const label = `${b.schedule} for ${b.duration ?? '0s'}`;
      try {
        for (const w of budgetWindows(b, from, to)) {
          shades.push({ nodePool: pool.nodePool, budget: index, start: w.start.getTime(), end: w.end.getTime(), nodes: b.nodes, reasons, label });
        }
      } catch (e) {
        if (!(e instanceof BudgetScheduleError)) throw e;
        shades.push({ nodePool: pool.nodePool, budget: index, start: startMs, end: endMs, nodes: '0', reasons, label: `${label} (${e.message}; allows zero disruptions)` });
      }
    });
  }
  return { shades, always };
}

/** Everything the report's charts draw, as plain JSON-serialisable data. */
export interface ReportSeries {
  /** The run's start, epoch ms. */
  readonly start: number;
  /** The run's end, epoch ms. */
  readonly end: number;
  /**
   * Every NodePool the charts name, sorted: the scenario's, those of NodeClaims and Nodes, and
   * {@link UNMANAGED_NODEPOOL} when a Node has none. The report gives each one colour, by its index here.
   */
  readonly nodePools: readonly string[];
  /** Nodes by `<nodePool>/<capacityType>` (counts). */
  readonly nodes: StepSeries;
  /** Fleet price by NodePool, USD per hour, nodes no NodePool owns included ({@link costSeries}). */
  readonly cost: StepSeries;
  /** Pods pending (a count). */
  readonly pending: StepSeries;
  /** Disruption commands and NodeClaim deletions with a reason. */
  readonly disruptions: readonly DisruptionMark[];
  /** Budget windows to shade and always-active budgets. */
  readonly budgets: BudgetOverview;
}

/**
 * All the report's series for a Result.
 * @param nodePools the scenario's NodePools and their budgets (the Result does not carry budgets)
 * @example reportSeries(result, scenario.nodePools.map((p) => ({ nodePool: p.metadata.name, budgets: p.spec.disruption.budgets })))
 */
export function reportSeries(result: Result, nodePools: readonly NodePoolBudgets[]): ReportSeries {
  const start = Date.parse(result.start);
  const end = Date.parse(result.end);
  const nodes = nodesSeries(result);
  const names = new Set([...nodePools.map((p) => p.nodePool), ...result.nodeClaims.map((c) => c.nodePool), ...nodes.groups.map((g) => g.key.slice(0, g.key.lastIndexOf('/')))]);
  return {
    start,
    end,
    nodePools: [...names].sort(),
    nodes,
    cost: costSeries(result),
    pending: pendingSeries(result),
    disruptions: disruptionMarks(result),
    budgets: budgetOverview(nodePools, start, end),
  };
}
