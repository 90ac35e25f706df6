/**
 * Single-node consolidation (Karpenter core `pkg/controllers/disruption/singlenodeconsolidation.go`): the first
 * consolidation candidate, cheapest to disrupt first, that can go alone, its pods moving to the other nodes plus at
 * most one new, cheaper node (`core/disruption/consolidation.ts singleNodeConsolidation`). Each candidate tried and
 * turned down is reported, and gets an `Unconsolidatable` Event. A pass simulates at most
 * `SINGLE_NODE_SEARCH_CANDIDATES` of them and the next resumes after the last (`search-budget.ts`, Karpenter's 3-minute
 * timeout).
 */
import type { NodeClaim } from '../../../core/api/nodeclaim.js';
import { singleNodeConsolidation as searchSingleNode } from '../../../core/disruption/consolidation.js';
import type { MethodCommand } from '../../../core/disruption/types.js';
import { noteSingleNodeSearch, singleNodeSearchWindow } from '../search-budget.js';
import type { ControllerMethod, MethodContext } from './context.js';
import { consolidationCommand, consolidationInput, revalidateConsolidation } from './consolidation-candidates.js';

function computeCommand(candidates: readonly NodeClaim[], ctx: MethodContext): MethodCommand<NodeClaim> | undefined {
  const { withinBudget, context } = consolidationInput(candidates, ctx);
  if (!context) return undefined;
  const window = singleNodeSearchWindow(withinBudget, ctx);
  const single = searchSingleNode(
    window.map((c) => c.candidate),
    context,
  );
  noteSingleNodeSearch(window, withinBudget.length, single.decision !== undefined, ctx);
  for (const r of single.rejected) {
    ctx.sink.skipped(r.nodeClaim, `Underutilized: ${r.reason}`);
    const node = withinBudget.find((c) => c.claim.name === r.nodeClaim)?.candidate.node;
    if (node) ctx.sink.unconsolidatable(r.nodeClaim, node, r.reason);
  }
  return consolidationCommand(single.decision, withinBudget);
}

/** Simulates exactly the command's one candidate, still a consolidation candidate within the budget. */
function validateCommand(candidates: readonly NodeClaim[], ctx: MethodContext): MethodCommand<NodeClaim> | undefined {
  return revalidateConsolidation(candidates, ctx, true);
}

/** Single-node consolidation: deletes one candidate, or replaces it with one cheaper node. */
export const singleNodeConsolidation: ControllerMethod = {
  name: 'single-node-consolidation',
  reason: 'Underutilized',
  computeCommand,
  validateCommand,
};
