/**
 * Multi-node consolidation (Karpenter core `pkg/controllers/disruption/multinodeconsolidation.go`): the longest
 * prefix of the consolidation candidates (at least two) that can go together, their pods moving to the other nodes
 * plus at most one new, cheaper node (`core/disruption/consolidation.ts multiNodeConsolidation`).
 */
import type { NodeClaim } from '../../../core/api/nodeclaim.js';
import { multiNodeConsolidation as searchMultiNode } from '../../../core/disruption/consolidation.js';
import type { MethodCommand } from '../../../core/disruption/types.js';
import type { ControllerMethod, MethodContext } from './context.js';
import { consolidationCommand, consolidationInput, revalidateConsolidation } from './consolidation-candidates.js';

function computeCommand(candidates: readonly NodeClaim[], ctx: MethodContext): MethodCommand<NodeClaim> | undefined {
  const { withinBudget, context } = consolidationInput(candidates, ctx);
  if (!context) return undefined;
  return consolidationCommand(
    searchMultiNode(
      withinBudget.map((c) => c.candidate),
      context,
    ),
    withinBudget,
  );
}

/**
 * Simulates exactly the command's candidates (two or more), all of them still consolidation candidates within the
 * budget. Searching again could miss them — consolidation is not monotonic (three nodes may go together where their
 * first two cannot), and the binary search over a shorter list takes other steps — and a command dropped that way
 * would be proposed again every pass, never acted on.
 */
function validateCommand(candidates: readonly NodeClaim[], ctx: MethodContext): MethodCommand<NodeClaim> | undefined {
  return revalidateConsolidation(candidates, ctx, false);
}

/** Multi-node consolidation: deletes two or more candidates together, or replaces them with one cheaper node. */
export const multiNodeConsolidation: ControllerMethod = {
  name: 'multi-node-consolidation',
  reason: 'Underutilized',
  computeCommand,
  validateCommand,
};
