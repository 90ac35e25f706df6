/**
 * What both consolidation methods look at (Karpenter core `pkg/controllers/disruption/consolidation.go`
 * `ShouldDisrupt`, `sortCandidates`): the candidates of WhenEmptyOrUnderutilized NodePools that consolidation may take
 * now, cheapest to disrupt first, within their NodePool's budget for reason `Underutilized`; and what a simulation of
 * them solves against. Worked out once per search, by the first consolidation method that runs.
 */
import { NEVER } from '../../../core/api/duration.js';
import { isLive, type NodeClaim } from '../../../core/api/nodeclaim.js';
import { afterMovingPods, evictionCost, simulateConsolidation, type ConsolidationCandidate, type ConsolidationContext, type ConsolidationDecision } from '../../../core/disruption/consolidation.js';
import type { MethodCommand } from '../../../core/disruption/types.js';
import { nodeOf, usageOf } from '../../launch.js';
import { blockingProblem, candidateProblem, consolidationProblem, underConsolidateAfter } from '../candidates.js';
import type { SchedulingPod } from '../../../core/provisioning/pod.js';
import { schedulingPods, solverView } from '../solver-view.js';
import { podsOfClaim, type World } from '../world.js';
import { overBudget, type BudgetedCandidate, type ConsolidationInput, type MethodContext } from './context.js';

/** Sum of the eviction costs of the node's pods (Karpenter orders candidates by it). */
function disruptionCost(world: World, claim: NodeClaim): number {
  return podsOfClaim(world, claim).reduce((sum, p) => {
    const deletionCost = Number(p.annotations['controller.kubernetes.io/pod-deletion-cost'] ?? 0);
    const priority = (p.spec as { priority?: number }).priority ?? 0;
    return sum + evictionCost(Number.isFinite(deletionCost) ? deletionCost : 0, priority);
  }, 0);
}

/** The simulation's view of a NodeClaim, or undefined when it has no node, type, capacity type or price. */
export function toCandidate(world: World, claim: NodeClaim): ConsolidationCandidate | undefined {
  const node = nodeOf(claim, world.nodes);
  if (!node || !claim.instanceType || !claim.capacityType || claim.price === undefined) return undefined;
  return {
    nodeClaim: claim.name,
    node: node.name,
    nodePool: claim.nodePool,
    instanceType: claim.instanceType,
    capacityType: claim.capacityType,
    price: claim.price,
    pods: schedulingPods(world, claim),
    capacity: usageOf(claim.nodePool, [claim], world.types),
    ...(claim.allocatable ? { allocatable: claim.allocatable } : {}),
  };
}

/**
 * What a consolidation simulation solves against. Candidates stay in the existing capacity (each simulation removes
 * the ones it tries); their usage counts for limits. Nodes still inside their own consolidateAfter window take none of
 * the candidates' pods (`closed`): core `pkg/controllers/provisioning/scheduling/scheduler.go addToExistingNode`
 * skips a node `isUnderConsolidateAfter` for a pod that is not pending and not on a node being deleted — every pod a
 * consolidation here moves is such a pod (candidates are never being deleted, pending pods are the provisioner's).
 *
 * Nodes whose NodeClaim carries a disruption — proposed, replacing or draining, by any reason — are going away: they
 * take no pod, and their pods take room elsewhere first (core `afterMovingPods`, Karpenter's `SimulateScheduling`
 * with the deleting nodes' pods). A search that proposes several commands therefore sees the earlier ones' nodes
 * gone and their pods moved, and so does each command's validation for the commands started or proposed before it
 * (`validate.ts`).
 * @param surviveBinding Skiff's moves: plans must survive kube-scheduler's binding (`ConsolidationContext`)
 */
export function consolidationContext(world: World, spotToSpot: boolean, surviveBinding = false): ConsolidationContext {
  const view = solverView(world, []);
  const claimByNode = new Map<string, NodeClaim>();
  const leaving = new Set<string>();
  const moving: SchedulingPod[] = [];
  for (const c of world.claims) {
    const node = isLive(c) ? nodeOf(c, world.nodes) : undefined;
    if (!node) continue;
    claimByNode.set(node.name, c);
    if (c.disruption) {
      leaving.add(node.name);
      moving.push(...schedulingPods(world, c));
    }
  }
  const existing = view.existing
    .filter((e) => !leaving.has(e.name))
    .map((e) => {
      const claim = e.kind === 'node' ? claimByNode.get(e.name) : undefined;
      return claim && underConsolidateAfter(world, claim) ? { ...e, closed: true } : e;
    });
  return { templates: view.templates, existing: afterMovingPods(moving, view.templates, existing), spotToSpot, surviveBinding };
}

/**
 * The consolidation candidates among `claims` (see the module comment), worked out on the first call of a search and
 * kept on its context. Reports the ones turned down, and nodes the NodePool's settings keep from consolidation.
 */
export function consolidationInput(claims: readonly NodeClaim[], ctx: MethodContext): ConsolidationInput {
  if (ctx.consolidation) return ctx.consolidation;
  const { world, ledger } = ctx;
  const candidates: BudgetedCandidate[] = [];
  for (const claim of claims) {
    const pool = world.pools.get(claim.nodePool);
    if (!pool) continue;
    // Nodes the NodePool's settings keep from consolidation say so (core `consolidation.go` `ShouldDisrupt`): all of
    // them under consolidateAfter Never, the non-empty ones under WhenEmpty (Emptiness takes the empty ones).
    const settings =
      pool.spec.disruption.consolidateAfter === NEVER
        ? `NodePool ${pool.metadata.name} has consolidation disabled (consolidateAfter: Never)`
        : pool.spec.disruption.consolidationPolicy !== 'WhenEmptyOrUnderutilized' && podsOfClaim(world, claim).length > 0
          ? `NodePool ${pool.metadata.name} has consolidation policy ${pool.spec.disruption.consolidationPolicy}, but the node is not empty`
          : undefined;
    if (settings) {
      const node = nodeOf(claim, world.nodes);
      if (node && candidateProblem(world, claim, 'Underutilized') === undefined) ctx.sink.unconsolidatable(claim.name, node.name, settings);
    }
    if (pool.spec.disruption.consolidationPolicy !== 'WhenEmptyOrUnderutilized') continue;
    const unripe = consolidationProblem(world, claim, pool);
    const problem = unripe ?? candidateProblem(world, claim, 'Underutilized');
    if (problem) {
      ctx.sink.skipped(claim.name, `Underutilized: ${problem}`);
      // A node consolidation would look at but the user's settings block: say so on the node (Karpenter's event).
      const node = nodeOf(claim, world.nodes);
      if (!unripe && node && claim.state === 'Initialized' && !claim.disruption && blockingProblem(world, claim, node, 'Underutilized') === problem) {
        ctx.sink.blocked(claim.name, node.name, problem);
      }
      continue;
    }
    const candidate = toCandidate(world, claim);
    if (!candidate) continue;
    candidates.push({ claim, candidate, cost: disruptionCost(world, claim) });
  }
  candidates.sort((a, b) => a.cost - b.cost || a.claim.name.localeCompare(b.claim.name));
  const withinBudget: BudgetedCandidate[] = [];
  for (const c of candidates) {
    if (ledger.remaining(c.claim.nodePool, 'Underutilized') < 1) {
      overBudget(ctx, c.claim, 'Underutilized');
      continue;
    }
    ledger.take(c.claim.nodePool);
    withinBudget.push(c);
  }
  ctx.consolidation = withinBudget.length === 0 ? { withinBudget, eligible: candidates } : { withinBudget, eligible: candidates, context: consolidationContext(world, ctx.spotToSpot, ctx.surviveBinding === true) };
  return ctx.consolidation;
}

/**
 * A consolidation decision as a command over the NodeClaim records, or undefined for `none`.
 * @param withinBudget the candidates the decision was made from (its candidates are among them)
 */
export function consolidationCommand(decision: ConsolidationDecision | undefined, withinBudget: readonly BudgetedCandidate[]): MethodCommand<NodeClaim> | undefined {
  if (!decision || decision.kind === 'none') return undefined;
  const byName = new Map(withinBudget.map((c) => [c.claim.name, c.claim]));
  const chosen = decision.candidates.map((c) => byName.get(c.nodeClaim)!);
  const message =
    decision.kind === 'delete'
      ? `its pods fit on other nodes`
      : `replace with one NodeClaim of ${decision.replacements[0].instanceTypes.length} cheaper instance types (cheapest ${decision.replacements[0].instanceTypes[0]!.name}), saving up to $${decision.savings.toFixed(4)}/h`;
  return { reason: 'Underutilized', candidates: chosen, replacements: decision.replacements, savings: decision.savings, message };
}

/**
 * Karpenter's consolidation of exactly `candidates` (a proposed command's, all still consolidation candidates within
 * the budget), simulated again for its validation: the command they make now, or undefined.
 * @param single true for single-node consolidation (one candidate; the 15-type spot rule), false for multi-node (two
 *   or more; the same-type price ceiling)
 */
export function revalidateConsolidation(candidates: readonly NodeClaim[], ctx: MethodContext, single: boolean): MethodCommand<NodeClaim> | undefined {
  if (single ? candidates.length !== 1 : candidates.length < 2) return undefined;
  const { withinBudget, context } = consolidationInput(candidates, ctx);
  if (!context || withinBudget.length !== candidates.length) return undefined;
  return consolidationCommand(
    simulateConsolidation(
      withinBudget.map((c) => c.candidate),
      context,
      single,
    ),
    withinBudget,
  );
}
