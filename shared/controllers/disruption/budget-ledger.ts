/**
 * The budget ledger of one pass: what each NodePool may still start, per reason, from its disruption budgets (core
 * `pkg/controllers/disruption/helpers.go BuildDisruptionBudgetMapping`; the budget arithmetic is
 * `core/disruption/budgets.ts`). Budgets are read, never decremented in place: this pass's own choices are kept
 * beside them ({@link BudgetLedger.take}).
 */
import { LABEL_INITIALIZED, LABEL_NODEPOOL } from '../../core/api/labels.js';
import { isLive, type DisruptionBudgetUsed, type NodeClaim } from '../../core/api/nodeclaim.js';
import type { Budget } from '../../core/api/nodepool.js';
import { BudgetScheduleError, budgetAllowance, budgetWindows, type BudgetWindow } from '../../core/disruption/budgets.js';
import { DISRUPTED_NO_SCHEDULE_TAINT } from '../../core/disruption/drainable.js';
import type { ClusterNode } from '../../ports/cluster.js';
import type { DisruptionMemory } from './memory.js';
import type { World } from './world.js';

/**
 * How far ahead the active windows of a budget schedule are worked out at once: 6 hours. Evaluating a cron schedule is
 * the costly part of a budget, and every pass evaluates every budget of every NodePool for each reason.
 */
const BUDGET_HORIZON_MS = 6 * 60 * 60 * 1000;

/**
 * `budgets` as they stand at `atMs`, with the same `budgetAllowance` at `atMs` for every reason and node count: a
 * scheduled budget active at `atMs` loses its schedule (a budget without one is always active), an inactive one is
 * left out, and one whose schedule does not evaluate stays as it is (`budgetAllowance` fails it closed). Activity is
 * read from the budget's windows (core `budgetWindows`: active at T exactly when the schedule fired in
 * `(T − duration, T]`, `isBudgetActive`), cached in `memory` for {@link BUDGET_HORIZON_MS}.
 */
function budgetsAt(budgets: readonly Budget[], atMs: number, memory: DisruptionMemory): ActiveBudgets {
  if (budgets.every((b) => b.schedule === undefined)) return { budgets, index: budgets.map((_, i) => i) };
  const cache = memory.budgetWindows;
  const out: Budget[] = [];
  const index: number[] = [];
  for (const [i, budget] of budgets.entries()) {
    if (budget.schedule === undefined) {
      out.push(budget);
      index.push(i);
      continue;
    }
    const key = `${budget.schedule}\u0000${budget.duration ?? ''}`;
    let cached = cache.get(key);
    if (!cached || atMs < cached.fromMs || atMs >= cached.toMs) {
      let windows: BudgetWindow[];
      try {
        windows = budgetWindows(budget, new Date(atMs), new Date(atMs + BUDGET_HORIZON_MS));
      } catch (e) {
        if (!(e instanceof BudgetScheduleError)) throw e;
        out.push(budget);
        index.push(i);
        continue;
      }
      if (cache.size > 1000) cache.clear();
      cached = { fromMs: atMs, toMs: atMs + BUDGET_HORIZON_MS, windows };
      cache.set(key, cached);
    }
    if (cached.windows.some((w) => w.start.getTime() <= atMs && atMs < w.end.getTime())) {
      const { schedule: _schedule, duration: _duration, ...always } = budget;
      out.push(always as Budget);
      index.push(i);
    }
  }
  return { budgets: out, index };
}

/** The budgets of {@link budgetsAt}, each with its index in the NodePool's `spec.disruption.budgets`. */
interface ActiveBudgets {
  readonly budgets: readonly Budget[];
  /** `index[i]` is the place of `budgets[i]` in the NodePool's `spec.disruption.budgets`. */
  readonly index: readonly number[];
}

/** A NodePool's managed, initialized nodes, and how many of them are being disrupted or NotReady. */
interface PoolNodeCounts {
  readonly nodes: number;
  readonly busy: number;
}

/**
 * Budget bookkeeping of one pass: what each NodePool may still start, per reason.
 *
 * The world a ledger reads does not change, so the per-NodePool node counts are worked out once, over every node in one
 * sweep, and each NodePool's allowance once per reason: a search asks for them for every candidate, and recounting the
 * pool's nodes (and indexing every record) each time made a pass quadratic in the fleet size.
 */
export class BudgetLedger {
  private readonly taken = new Map<string, number>();
  /** Per NodePool name, its {@link PoolNodeCounts}; worked out on the first question. */
  private counts: Map<string, PoolNodeCounts> | undefined;
  /** Per `pool\0reason`, the allowance before this pass's own choices. */
  private readonly allowances = new Map<string, DisruptionBudgetUsed>();

  /**
   * @param world what the pass read (not modified while the ledger is used)
   * @param memory where budget windows are cached
   * @param gone NodeClaims (by name) counted as already gone — neither among the NodePool's nodes nor among those being
   *   disrupted: the deletions this pass started, which are over by the time what it proposes is validated (`propose.ts`)
   */
  constructor(
    private readonly world: World,
    private readonly memory: DisruptionMemory,
    private readonly gone: ReadonlySet<string> = new Set(),
  ) {}

  /**
   * Per NodePool, its managed, initialized nodes (carrying its label and `karpenter.sh/initialized: "true"`): the base
   * of percentages, as Karpenter's `BuildDisruptionBudgetMapping` counts them — by node, so a node whose record is
   * already deleted but which is still there (its termination under way) still counts; and of those the nodes being
   * disrupted (tainted, or their record started or ended a disruption) or NotReady.
   */
  private poolCounts(pool: string): PoolNodeCounts {
    if (!this.counts) {
      const claimByProvider = new Map(this.world.claims.filter((c) => c.providerId).map((c) => [c.providerId!, c]));
      const counts = new Map<string, { nodes: number; busy: number }>();
      for (const n of this.world.nodes) {
        const name = n.labels[LABEL_NODEPOOL];
        if (name === undefined || n.labels[LABEL_INITIALIZED] !== 'true') continue;
        const claim = claimByProvider.get(n.providerId);
        if (claim && this.gone.has(claim.name)) continue;
        let entry = counts.get(name);
        if (!entry) counts.set(name, (entry = { nodes: 0, busy: 0 }));
        entry.nodes++;
        if (isBusy(n, claim)) entry.busy++;
      }
      this.counts = counts;
    }
    return this.counts.get(pool) ?? { nodes: 0, busy: 0 };
  }

  /**
   * How many more of the pool's nodes may start a disruption for `reason` now (0 for an unknown NodePool).
   * @param afterTaken false for the allowance before this pass's own choices ({@link take})
   */
  remaining(pool: string, reason: 'Empty' | 'Underutilized' | 'Drifted', afterTaken = true): number {
    const used = this.budgetUsed(pool, reason);
    if (!used) return 0;
    return Math.max(0, (used.remaining ?? Number.POSITIVE_INFINITY) - (afterTaken ? (this.taken.get(pool) ?? 0) : 0));
  }

  /**
   * What the pool's budgets allow for `reason` now, before this pass's own choices: the node count and the nodes in
   * flight it was worked out from, the most restrictive active budget's node count and index, and what is left (core
   * `helpers.go BuildDisruptionBudgetMapping`: `allowed − disrupting`, floored at 0). A validation records it on the
   * command it starts (`NodeClaimDisruption.budgets`), so a report states what the controller used.
   * @returns undefined for an unknown NodePool; `allowed`/`remaining`/`budget` null when no budget is active (unlimited)
   */
  budgetUsed(pool: string, reason: 'Empty' | 'Underutilized' | 'Drifted'): DisruptionBudgetUsed | undefined {
    const np = this.world.pools.get(pool);
    if (!np) return undefined;
    const key = `${pool}\u0000${reason}`;
    let used = this.allowances.get(key);
    if (used === undefined) {
      const { nodes, busy } = this.poolCounts(pool);
      const active = budgetsAt(np.spec.disruption.budgets, this.world.now, this.memory);
      const a = budgetAllowance(active.budgets, reason, new Date(this.world.now), nodes, busy);
      const unlimited = a.limitingBudget === null;
      used = { nodes, disrupting: busy, allowed: unlimited ? null : a.allowed, remaining: unlimited ? null : a.remaining, budget: unlimited ? null : active.index[a.limitingBudget!]! };
      this.allowances.set(key, used);
    }
    return used;
  }

  /** Counts `n` nodes of `pool` this pass chose to disrupt against what {@link remaining} allows. */
  take(pool: string, n = 1): void {
    this.taken.set(pool, (this.taken.get(pool) ?? 0) + n);
  }
}

/** Whether a managed node is being disrupted (tainted, or its record started or ended a disruption) or NotReady. */
function isBusy(node: ClusterNode, claim: NodeClaim | undefined): boolean {
  if (!node.ready || node.taints.some((t) => t.key === DISRUPTED_NO_SCHEDULE_TAINT.key)) return true;
  return !!claim && (!isLive(claim) || claim.state === 'Deleting' || (claim.disruption !== undefined && claim.disruption.phase !== 'Proposed'));
}
