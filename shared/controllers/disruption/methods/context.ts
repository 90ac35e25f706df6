/**
 * What a disruption method reads besides its candidates ({@link MethodContext}), and where it reports what it turned
 * down ({@link MethodSink}). One context serves one search (or one validation): its budget ledger counts what the
 * methods of that search chose.
 */
import type { NodeClaim } from '../../../core/api/nodeclaim.js';
import type { ConsolidationCandidate, ConsolidationContext } from '../../../core/disruption/consolidation.js';
import type { DisruptionMethod } from '../../../core/disruption/types.js';
import type { BudgetLedger } from '../budget-ledger.js';
import type { DisruptionMemory } from '../memory.js';
import type { World } from '../world.js';

/** Where a method reports what it turned down (the pass's report and Events); a validation discards it all. */
export interface MethodSink {
  /** A NodeClaim the method looked at and turned down, with why (the report's `skipped`). */
  skipped(nodeClaim: string, reason: string): void;
  /** A NodePool whose budgets allow no disruption at all for `reason` now (one `DisruptionBlocked` Event each). */
  budgetBlocked(nodePool: string, reason: 'Empty' | 'Underutilized' | 'Drifted'): void;
  /** A node the user's settings (do-not-disrupt, a PDB) or a drifted replacement keep from disruption. */
  blocked(nodeClaim: string, node: string, reason: string): void;
  /** A node consolidation looked at and kept (an `Unconsolidatable` Event on the Node and the NodeClaim). */
  unconsolidatable(nodeClaim: string, node: string, reason: string): void;
  /**
   * A search that stopped on its budget before trying every candidate (`search-budget.ts`): the method, how many
   * candidates it simulated, and of how many. Optional: a sink without it ignores stops.
   */
  searchStopped?(method: string, evaluated: number, candidates: number): void;
}

/** A sink that keeps nothing: what a validation reports. */
export const DISCARD: MethodSink = { skipped: () => {}, budgetBlocked: () => {}, blocked: () => {}, unconsolidatable: () => {} };

/** A consolidation candidate within the budget: its record, the simulation's view of it, its disruption cost. */
export interface BudgetedCandidate {
  readonly claim: NodeClaim;
  readonly candidate: ConsolidationCandidate;
  /** The sum of its pods' eviction costs (`evictionCost`). */
  readonly cost: number;
}

/** The consolidation candidates of one search and what they are simulated against (`consolidation-candidates.ts`). */
export interface ConsolidationInput {
  /** Cheapest to disrupt first (then by name), each within its NodePool's budget. */
  readonly withinBudget: readonly BudgetedCandidate[];
  /** What the simulation solves against; absent when no candidate is within the budget. */
  readonly context?: ConsolidationContext;
  /**
   * Every consolidation candidate before the budget cut, cheapest to disrupt first: a method that ranks candidates
   * its own way (repack) picks as many per NodePool as `withinBudget` holds, so the budget allows the same count.
   */
  readonly eligible?: readonly BudgetedCandidate[];
}

/** What the methods of one search or one validation read. */
export interface MethodContext {
  readonly world: World;
  /** The budgets of this search: a method that chooses candidates takes them from it. */
  readonly ledger: BudgetLedger;
  /** The cluster's region (a drift replacement's node is checked against it). */
  readonly region: string;
  /** `settings.featureGates.SpotToSpotConsolidation`. */
  readonly spotToSpot: boolean;
  /**
   * Whether consolidation plans must survive kube-scheduler's binding (`ConsolidationContext.surviveBinding`): with
   * Skiff's moves, not with Karpenter's alone (the `karpenter` setting). @default false
   */
  readonly surviveBinding?: boolean;
  /** Where drift inputs are cached. */
  readonly memory: DisruptionMemory;
  readonly sink: MethodSink;
  /**
   * The consolidation candidates of this search, worked out by the first consolidation method that runs and shared
   * with the next (multi-node, then single-node look at the same candidates within the same budget).
   */
  consolidation?: ConsolidationInput;
}

/** A disruption method of the controller: over NodeClaim records, with a {@link MethodContext}. */
export type ControllerMethod = DisruptionMethod<NodeClaim, MethodContext>;

/**
 * Reports that `claim`'s NodePool allows no more disruptions for `reason` now; a NodePool whose budgets allow none at
 * all (not only none left after this search's choices) is budget-blocked (Karpenter's `DisruptionBlocked` event).
 */
export function overBudget(ctx: MethodContext, claim: NodeClaim, reason: 'Empty' | 'Underutilized' | 'Drifted'): void {
  ctx.sink.skipped(claim.name, `${reason}: the NodePool's disruption budgets allow no more disruptions for reason ${reason} now`);
  // Only a budget that allows nothing at all is "blocking" (Karpenter's event); one this pass has used up is not.
  if (ctx.ledger.remaining(claim.nodePool, reason, false) < 1) ctx.sink.budgetBlocked(claim.nodePool, reason);
}
