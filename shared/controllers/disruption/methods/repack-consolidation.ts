/**
 * Repack consolidation (Skiff's; Karpenter has no such move): k ≥ 2 nodes of one NodePool, least utilised first,
 * replaced by m ≥ 1 cheaper NodeClaims that the packing solver plans for their pods, also using the free room of the
 * other nodes (`core/disruption/repack.ts repackSearch`). It runs after Karpenter's own moves (Emptiness → Drift →
 * multi-node → single-node → repack → split): it only acts where they find nothing, so the Karpenter-like setting
 * and this one differ only where Karpenter stalls.
 *
 * It takes the same candidates as Karpenter's consolidation (`consolidation-candidates.ts`: WhenEmptyOrUnderutilized
 * NodePools, consolidateAfter passed, no do-not-disrupt, no PDB-blocked pod, Skiff's churn guard, within the
 * NodePool's budget for reason Underutilized), so every rule that holds for those holds for this move.
 */
import type { NodeClaim } from '../../../core/api/nodeclaim.js';
import { repackSearch, simulateRepack, type RepackDecision } from '../../../core/disruption/repack.js';
import type { MethodCommand } from '../../../core/disruption/types.js';
import type { BudgetedCandidate, ControllerMethod, MethodContext } from './context.js';
import { consolidationInput } from './consolidation-candidates.js';

/** Eviction cost by NodeClaim name. */
export function costsOf(withinBudget: readonly BudgetedCandidate[]): ReadonlyMap<string, number> {
  return new Map(withinBudget.map((c) => [c.claim.name, c.cost]));
}

/**
 * A repacking decision as a command over the NodeClaim records, or undefined for `none`.
 * @param withinBudget the candidates the decision was made from
 */
export function repackCommand(decision: RepackDecision, withinBudget: readonly BudgetedCandidate[]): MethodCommand<NodeClaim> | undefined {
  if (decision.kind === 'none') return undefined;
  const byName = new Map(withinBudget.map((c) => [c.claim.name, c.claim]));
  const chosen = decision.candidates.map((c) => byName.get(c.nodeClaim)!);
  const perPod = `$${(decision.savings / Math.max(decision.evictionCost, 1)).toFixed(4)}/h per pod evicted`;
  const message =
    decision.kind === 'delete'
      ? `its pods fit on other nodes`
      : `replace ${chosen.length} node(s) with ${decision.replacements.length} cheaper NodeClaim(s) (cheapest ${decision.replacements.map((r) => r.instanceTypes[0]!.name).join(', ')}), saving up to $${decision.savings.toFixed(4)}/h (${perPod})`;
  return { reason: 'Underutilized', candidates: chosen, replacements: decision.replacements, savings: decision.savings, message };
}

function computeCommand(candidates: readonly NodeClaim[], ctx: MethodContext): MethodCommand<NodeClaim> | undefined {
  const { withinBudget, context } = consolidationInput(candidates, ctx);
  if (!context) return undefined;
  return repackCommand(
    repackSearch(
      withinBudget.map((c) => c.candidate),
      context,
      costsOf(withinBudget),
    ),
    withinBudget,
  );
}

/**
 * Simulates exactly the command's candidates (two or more), all still consolidation candidates within the budget;
 * the move must still clear the churn guard's minimum saving and packing (`repack.ts`). Validation compares its
 * saving with the proposal's (`validate.ts`).
 */
function validateCommand(candidates: readonly NodeClaim[], ctx: MethodContext): MethodCommand<NodeClaim> | undefined {
  if (candidates.length < 2) return undefined;
  const { withinBudget, context } = consolidationInput(candidates, ctx);
  if (!context || withinBudget.length !== candidates.length) return undefined;
  return repackCommand(
    simulateRepack(
      withinBudget.map((c) => c.candidate),
      context,
      costsOf(withinBudget),
    ),
    withinBudget,
  );
}

/** Repack consolidation: replaces two or more nodes of a NodePool with a cheaper fresh plan of their pods. */
export const repackConsolidation: ControllerMethod = {
  name: 'repack-consolidation',
  reason: 'Underutilized',
  computeCommand,
  validateCommand,
};
