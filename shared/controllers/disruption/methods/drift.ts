/**
 * Drift (Karpenter core `pkg/controllers/disruption/drift.go`): one drifted candidate at a time, empty ones first,
 * then the oldest, replaced by what its pods need (`core/disruption/drift.ts` says what drifted). A replacement that
 * would be drifted too is never launched: launching it would start a replace loop.
 */
import type { NodeClaim } from '../../../core/api/nodeclaim.js';
import type { NodePool } from '../../../core/api/nodepool.js';
import { driftMessage, driftReason, nodeClassHash, nodePoolHash, replacementDrift } from '../../../core/disruption/drift.js';
import type { MethodCommand } from '../../../core/disruption/types.js';
import { nodePoolRequirements } from '../../../core/provisioning/nodepool-template.js';
import { solve } from '../../../core/provisioning/scheduler.js';
import type { NodeClaimPlan } from '../../../core/provisioning/types.js';
import { nodeOf } from '../../launch.js';
import { blockingProblem, candidateProblem } from '../candidates.js';
import type { DisruptionMemory, DriftInputs, PoolDriftInputs } from '../memory.js';
import { schedulingPods, solverView } from '../solver-view.js';
import { podsOfClaim, type World } from '../world.js';
import { overBudget, type ControllerMethod, type MethodContext } from './context.js';

/**
 * The current NodePool hashes and requirements and EC2NodeClass hashes a drift check compares with, worked out once
 * per pass: keyed by the pass's NodePool map, which every re-read of the world within the pass keeps (`readWorld`).
 */
function driftInputs(world: World, memory: DisruptionMemory): DriftInputs {
  let inputs = memory.driftInputs.get(world.pools);
  if (!inputs) memory.driftInputs.set(world.pools, (inputs = { pools: new Map(), classes: new Map() }));
  return inputs;
}

/** The NodePool's current hash and requirements, worked out once per pass. */
function driftInputsOf(world: World, pool: NodePool, memory: DisruptionMemory): PoolDriftInputs {
  const current = driftInputs(world, memory);
  let poolInputs = current.pools.get(pool.metadata.name);
  if (!poolInputs) current.pools.set(pool.metadata.name, (poolInputs = { hash: nodePoolHash(pool), requirements: nodePoolRequirements(pool) }));
  return poolInputs;
}

/** Why a NodeClaim has drifted, in words, or undefined (see `driftReason`). */
export function driftOf(world: World, claim: NodeClaim, memory: DisruptionMemory): string | undefined {
  const pool = world.pools.get(claim.nodePool);
  if (!pool) return undefined;
  const node = nodeOf(claim, world.nodes);
  const nodeClass = world.classes.get(claim.nodeClass);
  const current = driftInputs(world, memory);
  const poolInputs = driftInputsOf(world, pool, memory);
  let classHash = nodeClass ? current.classes.get(nodeClass.metadata.name) : undefined;
  if (nodeClass && classHash === undefined) current.classes.set(nodeClass.metadata.name, (classHash = nodeClassHash(nodeClass)));
  const reason = driftReason(
    { ...(claim.nodePoolHash ? { nodePoolHash: claim.nodePoolHash } : {}), ...(claim.nodeClassHash ? { nodeClassHash: claim.nodeClassHash } : {}), labels: node?.labels ?? claim.labels },
    poolInputs.hash,
    poolInputs.requirements,
    classHash,
  );
  return reason ? driftMessage(reason, pool.metadata.name, claim.nodeClass) : undefined;
}

/**
 * The NodeClaims it takes to move these nodes' pods elsewhere (drift), or why they cannot move. A plan whose node
 * would itself be drifted (`replacementDrift`) is refused: launching it would start a replace loop.
 * @param region the cluster's region, on every node
 */
export function replacementPlans(world: World, leaving: readonly NodeClaim[], region: string, memory: DisruptionMemory): { plans: readonly NodeClaimPlan[]; unschedulable?: string; loop?: true } {
  const pods = leaving.flatMap((c) => schedulingPods(world, c));
  if (pods.length === 0) return { plans: [] };
  const view = solverView(world, leaving);
  const results = solve(pods, view.templates, view.existing);
  const stuck = results.unschedulable[0];
  if (stuck) return { plans: [], unschedulable: `pod ${stuck.pod} could not be placed elsewhere: ${stuck.reason}` };
  for (const plan of results.newNodeClaims) {
    const pool = world.pools.get(plan.nodePool);
    if (!pool) continue;
    const drift = replacementDrift(driftInputsOf(world, pool, memory).requirements, plan, world.types.get(plan.nodeClass) ?? [], region);
    if (drift) {
      return {
        plans: [],
        loop: true,
        unschedulable: `its replacement (${drift.instanceType} in NodePool ${plan.nodePool}) would be drifted too: its node would not satisfy ${drift.requirement}, which no instance type or label Skiff sets provides; launching it would only start a replace loop`,
      };
    }
  }
  return { plans: results.newNodeClaims };
}

/** The first drifted candidate (fewest pods, then oldest) that may go now and whose pods can move. */
function driftCommand(candidates: readonly NodeClaim[], ctx: MethodContext): MethodCommand<NodeClaim> | undefined {
  const { world, ledger } = ctx;
  const drifted = candidates
    .map((claim) => ({ claim, why: driftOf(world, claim, ctx.memory) }))
    .filter((d): d is { claim: NodeClaim; why: string } => d.why !== undefined)
    .sort((a, b) => podsOfClaim(world, a.claim).length - podsOfClaim(world, b.claim).length || a.claim.createdAt.localeCompare(b.claim.createdAt));
  for (const { claim, why } of drifted) {
    const problem = candidateProblem(world, claim, 'Drifted');
    if (problem) {
      ctx.sink.skipped(claim.name, `Drifted (${why}): ${problem}`);
      // A do-not-disrupt pod or a PDB that holds the drifted node: say so on the node (Karpenter's DisruptionBlocked),
      // whatever the NodePool's consolidation policy (consolidation says it only under WhenEmptyOrUnderutilized).
      const node = nodeOf(claim, world.nodes);
      if (node && claim.state === 'Initialized' && !claim.disruption && blockingProblem(world, claim, node, 'Drifted') === problem) ctx.sink.blocked(claim.name, node.name, problem);
      continue;
    }
    if (ledger.remaining(claim.nodePool, 'Drifted') < 1) {
      overBudget(ctx, claim, 'Drifted');
      continue;
    }
    const plan = replacementPlans(world, [claim], ctx.region, ctx.memory);
    if (plan.unschedulable) {
      ctx.sink.skipped(claim.name, `Drifted (${why}): ${plan.unschedulable}`);
      // A replacement that would be drifted too is never launched: say so on the node, which stays as it is.
      const node = nodeOf(claim, world.nodes);
      if (plan.loop && node) ctx.sink.blocked(claim.name, node.name, `${why}, but ${plan.unschedulable}`);
      continue;
    }
    return { reason: 'Drifted', candidates: [claim], replacements: plan.plans, savings: 0, message: why };
  }
  return undefined;
}

/** Drift: replaces (or deletes, when it has no pods) one drifted candidate; validation asks the same again. */
export const drift: ControllerMethod = {
  name: 'drift',
  reason: 'Drifted',
  computeCommand: driftCommand,
  validateCommand: driftCommand,
};
