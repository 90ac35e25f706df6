/**
 * Split consolidation (Skiff's; Karpenter has no such move): one node replaced by two or more cheaper NodeClaims that
 * the packing solver plans for its pods, also using the free room of the other nodes (`core/disruption/repack.ts
 * splitSearch`) — a large node left holding a few small pods after a scale-in, which Karpenter keeps because no
 * single cheaper type takes them all. Runs last (Emptiness → Drift → multi-node → repack → single-node → split), on
 * the same candidates as Karpenter's consolidation (`consolidation-candidates.ts`). Each candidate tried and turned
 * down is reported as skipped.
 */
import type { NodeClaim } from '../../../core/api/nodeclaim.js';
import { simulateRepack, splitSearch } from '../../../core/disruption/repack.js';
import type { MethodCommand } from '../../../core/disruption/types.js';
import type { ControllerMethod, MethodContext } from './context.js';
import { consolidationInput } from './consolidation-candidates.js';
import { costsOf, repackCommand } from './repack-consolidation.js';

function computeCommand(candidates: readonly NodeClaim[], ctx: MethodContext): MethodCommand<NodeClaim> | undefined {
  const { withinBudget, context } = consolidationInput(candidates, ctx);
  if (!context) return undefined;
  const split = splitSearch(
    withinBudget.map((c) => c.candidate),
    context,
    costsOf(withinBudget),
  );
  for (const r of split.rejected) ctx.sink.skipped(r.nodeClaim, `Underutilized (split): ${r.reason}`);
  return split.decision ? repackCommand(split.decision, withinBudget) : undefined;
}

/** Simulates exactly the command's one candidate, still a consolidation candidate within the budget. */
function validateCommand(candidates: readonly NodeClaim[], ctx: MethodContext): MethodCommand<NodeClaim> | undefined {
  if (candidates.length !== 1) return undefined;
  const { withinBudget, context } = consolidationInput(candidates, ctx);
  if (!context || withinBudget.length !== 1) return undefined;
  const decision = simulateRepack(
    withinBudget.map((c) => c.candidate),
    context,
    costsOf(withinBudget),
  );
  return repackCommand(decision, withinBudget);
}

/** Split consolidation: replaces one node with two or more cheaper ones. */
export const splitConsolidation: ControllerMethod = {
  name: 'split-consolidation',
  reason: 'Underutilized',
  computeCommand,
  validateCommand,
};
