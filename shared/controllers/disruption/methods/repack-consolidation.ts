/**
 * Repack consolidation (Skiff's; Karpenter has no such move): k ≥ 2 nodes of one NodePool, nodes of small pods first,
 * replaced by m ≥ 0 cheaper NodeClaims that the packing solver plans for their pods, also using the free room of the
 * other nodes (`core/disruption/repack.ts repackSearch`). It runs after multi-node consolidation and before
 * single-node (Emptiness → Drift → multi-node → repack → single-node → split; `methods.ts` says why).
 *
 * It takes the same candidates as Karpenter's consolidation (`consolidation-candidates.ts`: WhenEmptyOrUnderutilized
 * NodePools, consolidateAfter passed, no do-not-disrupt, no PDB-blocked pod, Skiff's churn guard, within the
 * NodePool's budget for reason Underutilized), so every rule that holds for those holds for this move.
 */
import type { NodeClaim } from '../../../core/api/nodeclaim.js';
import { repackRank, repackSearch, simulateRepack, type RepackDecision } from '../../../core/disruption/repack.js';
import type { MethodCommand } from '../../../core/disruption/types.js';
import type { BudgetedCandidate, ConsolidationInput, ControllerMethod, MethodContext } from './context.js';
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

/**
 * The candidates repack looks at: per NodePool, as many as the budget let through (`withinBudget`), but chosen from
 * every eligible candidate by repack's own rank (`repackRank`: nodes of small pods first) rather than by eviction cost
 * — the nodes cheapest to disrupt are often those holding one large pod that fits nowhere else, which no repacking
 * moves; the nodes of many small pods are the ones whose pods can fill the free room beside those large pods.
 */
function repackCandidates(input: ConsolidationInput): readonly BudgetedCandidate[] {
  const allowance = new Map<string, number>();
  for (const c of input.withinBudget) allowance.set(c.claim.nodePool, (allowance.get(c.claim.nodePool) ?? 0) + 1);
  const ranked = [...(input.eligible ?? input.withinBudget)].map((c) => ({ c, rank: repackRank(c.candidate) })).sort((a, b) => a.rank - b.rank || a.c.claim.name.localeCompare(b.c.claim.name));
  const picked: BudgetedCandidate[] = [];
  for (const { c } of ranked) {
    const left = allowance.get(c.claim.nodePool) ?? 0;
    if (left < 1) continue;
    allowance.set(c.claim.nodePool, left - 1);
    picked.push(c);
  }
  return picked;
}

function computeCommand(candidates: readonly NodeClaim[], ctx: MethodContext): MethodCommand<NodeClaim> | undefined {
  const input = consolidationInput(candidates, ctx);
  if (!input.context) return undefined;
  const picked = repackCandidates(input);
  return repackCommand(
    repackSearch(
      picked.map((c) => c.candidate),
      input.context,
      costsOf(picked),
    ),
    picked,
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
