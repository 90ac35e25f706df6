/**
 * Emptiness (Karpenter core `pkg/controllers/disruption/emptiness.go`): every empty, consolidatable candidate within
 * its NodePool's budget for reason `Empty`, deleted in one command.
 */
import type { NodeClaim } from '../../../core/api/nodeclaim.js';
import type { MethodCommand } from '../../../core/disruption/types.js';
import { candidateProblem, consolidationProblem } from '../candidates.js';
import { podsOfClaim } from '../world.js';
import { overBudget, type ControllerMethod, type MethodContext } from './context.js';

/**
 * The empty candidates (no reschedulable pod) that may go now, in the candidates' order, taken from the budget; the
 * others are reported with why.
 */
function emptyCommand(candidates: readonly NodeClaim[], ctx: MethodContext): MethodCommand<NodeClaim> | undefined {
  const { world, ledger } = ctx;
  const empty: NodeClaim[] = [];
  for (const claim of candidates) {
    const pool = world.pools.get(claim.nodePool);
    if (!pool || podsOfClaim(world, claim).length > 0) continue;
    const problem = candidateProblem(world, claim, 'Empty') ?? consolidationProblem(world, claim, pool);
    if (problem) {
      ctx.sink.skipped(claim.name, `Empty: ${problem}`);
      continue;
    }
    if (ledger.remaining(claim.nodePool, 'Empty') < 1) {
      overBudget(ctx, claim, 'Empty');
      continue;
    }
    ledger.take(claim.nodePool);
    empty.push(claim);
  }
  if (empty.length === 0) return undefined;
  return {
    reason: 'Empty',
    candidates: empty,
    replacements: [],
    savings: empty.reduce((sum, c) => sum + (c.price ?? 0), 0),
    message: `${empty.length === 1 ? 'node is' : `${empty.length} nodes are`} empty`,
  };
}

/** Emptiness: deletes every empty candidate the budgets allow, in one command; validation asks the same again. */
export const emptiness: ControllerMethod = {
  name: 'emptiness',
  reason: 'Empty',
  computeCommand: emptyCommand,
  validateCommand: emptyCommand,
};
