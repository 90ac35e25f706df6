/**
 * Which NodeClaims a voluntary disruption may take, and why not (Karpenter core `pkg/controllers/disruption/types.go
 * NewCandidate`): initialized, managed, not already disrupted, no node annotation `karpenter.sh/do-not-disrupt:
 * "true"`, no pod with an active do-not-disrupt, no pod a PDB keeps from being evicted (a drifted node with a
 * `terminationGracePeriod` is exempt from both pod checks). Consolidation also needs `consolidateAfter` to have passed
 * since the last pod event and — Skiff's churn guard — spares nodes expiring within {@link CHURN_GUARD_MS} (or
 * `consolidateAfter` if longer) and replacements younger than that.
 */
import { NEVER, parseDuration } from '../../core/api/duration.js';
import { LABEL_NODEPOOL } from '../../core/api/labels.js';
import type { DisruptionReason, NodeClaim } from '../../core/api/nodeclaim.js';
import type { NodePool } from '../../core/api/nodepool.js';
import { nodeDoNotDisrupt, podDoNotDisrupt } from '../../core/disruption/do-not-disrupt.js';
import { pdbBlocks } from '../../core/disruption/pdb.js';
import type { ClusterNode } from '../../ports/cluster.js';
import { nodeOf } from '../launch.js';
import { lastPodEventMs, podsOn, type World } from './world.js';
import { timestampMs } from '../../core/api/timestamp.js';

/** Skiff's churn guard: no consolidation of a node expiring this soon, nor of a replacement this young. */
export const CHURN_GUARD_MS = 10 * 60 * 1000;

/** Why a NodeClaim cannot be voluntarily disrupted now for `reason`, or undefined. */
export function candidateProblem(world: World, claim: NodeClaim, reason: DisruptionReason): string | undefined {
  if (claim.state !== 'Initialized') return `it is ${claim.state}, not initialized`;
  if (claim.disruption) return 'it is already being disrupted';
  const pool = world.pools.get(claim.nodePool);
  if (!pool) return `its NodePool ${claim.nodePool} does not exist`;
  const node = nodeOf(claim, world.nodes);
  if (!node) return 'it has no node';
  if (node.labels[LABEL_NODEPOOL] === undefined) return `its node has no ${LABEL_NODEPOOL} label`;
  return blockingProblem(world, claim, node, reason);
}

/**
 * What the user set that blocks a voluntary disruption of this node (Karpenter's `DisruptionBlocked` reasons): the
 * node's do-not-disrupt annotation, a pod's active do-not-disrupt, a pod a PDB keeps from being evicted.
 *
 * The pod blockers do not hold back an eventual disruption — drift of a NodeClaim whose NodePool sets a
 * terminationGracePeriod (core `pkg/controllers/disruption/types.go NewCandidate`: `EventualDisruptionClass` with
 * `Spec.TerminationGracePeriod` set ignores the `PodBlockEvictionError`s of `ValidatePodsDisruptable`; drift is the
 * eventual class, `drift.go`): the drain evicts what it may and deletes the rest at the grace period's deadline
 * (see `drain.ts`). The node's own annotation still blocks (`ValidateNodeDisruptable`).
 */
export function blockingProblem(world: World, claim: NodeClaim, node: ClusterNode, reason: DisruptionReason): string | undefined {
  if (nodeDoNotDisrupt(node.annotations)) return `node ${node.name} is annotated karpenter.sh/do-not-disrupt: "true"`;
  const eventual = reason === 'Drifted' && claim.terminationGracePeriodSeconds !== undefined;
  if (eventual) return undefined;
  for (const pod of podsOn(world, node)) {
    const dnd = podDoNotDisrupt(pod.annotations, pod.createdAt, world.now);
    if (dnd.active) return `pod ${pod.namespace}/${pod.name} is annotated karpenter.sh/do-not-disrupt${dnd.untilMs !== undefined ? ` until ${new Date(dnd.untilMs).toISOString()}` : ''}`;
    const blocked = pdbBlocks(pod, world.pdbs);
    if (blocked) return `pod ${pod.namespace}/${pod.name}: ${blocked}`;
  }
  return undefined;
}

/**
 * Whether consolidation may look at this NodeClaim yet, or why not: consolidateAfter has passed since its last pod
 * event, or since its initialization when none is known (core `pkg/controllers/nodeclaim/disruption/consolidation.go`,
 * the `Consolidatable` condition), and Skiff's churn guard.
 */
export function consolidationProblem(world: World, claim: NodeClaim, pool: NodePool): string | undefined {
  const after = pool.spec.disruption.consolidateAfter;
  if (after === NEVER) return 'its NodePool has consolidateAfter: Never';
  const afterMs = parseDuration(after) * 1000;
  const last = lastPodEventMs(world, claim);
  const since = last ?? timestampMs(claim.initializedAt ?? claim.createdAt);
  if (world.now - since < afterMs) return `consolidateAfter (${after}) has not passed since the last pod event on it (${new Date(since).toISOString()}${last === undefined ? ', its initialization' : ''})`;
  const guard = Math.max(afterMs, CHURN_GUARD_MS);
  if (claim.expireAfterSeconds != null && timestampMs(claim.createdAt) + claim.expireAfterSeconds * 1000 - world.now < guard) {
    return `it expires within ${Math.round(guard / 60_000)} minutes (churn guard)`;
  }
  if (claim.replacementFor && world.now - timestampMs(claim.initializedAt ?? claim.createdAt) < guard) {
    return `it replaced ${claim.replacementFor.join(', ')} less than ${Math.round(guard / 60_000)} minutes ago (churn guard)`;
  }
  return undefined;
}

/**
 * Core `pkg/utils/disruption/disruption.go IsUnderConsolidateAfter`: an initialized NodeClaim whose NodePool sets a
 * consolidateAfter other than Never and 0, less than that long after its last pod event (or its initialization when
 * none is known).
 */
export function underConsolidateAfter(world: World, claim: NodeClaim): boolean {
  if (claim.state !== 'Initialized' || !claim.initializedAt) return false;
  const after = world.pools.get(claim.nodePool)?.spec.disruption.consolidateAfter;
  if (after === undefined || after === NEVER) return false;
  const afterMs = parseDuration(after) * 1000;
  if (afterMs === 0) return false;
  return world.now - (lastPodEventMs(world, claim) ?? timestampMs(claim.initializedAt)) < afterMs;
}
