/**
 * Which NodeClaims are still drifted when a run ends: the drift the run did not get to replace (a do-not-disrupt pod
 * or a PDB held the node, a budget allowed no more, or it was found too late). The Result states it
 * (`nodeClaims[].driftedAtEnd`) and the summary counts it, so a rollout that stopped part-way does not read as done.
 * The check is the drift method's own (`core/disruption/drift.ts driftReason`, worded by `driftMessage`).
 */
import { isLive, type NodeClaim } from '../core/api/nodeclaim.js';
import type { EC2NodeClass } from '../core/api/ec2nodeclass.js';
import type { NodePool } from '../core/api/nodepool.js';
import { driftMessage, driftReason, nodeClassHash, nodePoolHash } from '../core/disruption/drift.js';
import { nodePoolRequirements } from '../core/provisioning/nodepool-template.js';
import { nodeOf } from '../controllers/launch.js';
import type { ClusterNode } from '../ports/cluster.js';

/**
 * Why each live NodeClaim is drifted, by NodeClaim name; NodeClaims that are not drifted (or not live, or whose
 * NodePool is gone) are absent.
 * @param claims every NodeClaim record at the end
 * @param pools the NodePools at the end
 * @param classes the EC2NodeClasses at the end
 * @param nodes the Nodes at the end (a node's labels are what the requirements are checked against)
 */
export function driftedAtEnd(claims: readonly NodeClaim[], pools: readonly NodePool[], classes: readonly EC2NodeClass[], nodes: readonly ClusterNode[]): Map<string, string> {
  const poolByName = new Map(pools.map((p) => [p.metadata.name, { pool: p, hash: nodePoolHash(p), requirements: nodePoolRequirements(p) }]));
  const classHash = new Map(classes.map((c) => [c.metadata.name, nodeClassHash(c)]));
  const out = new Map<string, string>();
  for (const claim of claims) {
    if (!isLive(claim)) continue;
    const current = poolByName.get(claim.nodePool);
    if (!current) continue;
    const labels = nodeOf(claim, nodes)?.labels ?? claim.labels;
    const reason = driftReason(
      { ...(claim.nodePoolHash ? { nodePoolHash: claim.nodePoolHash } : {}), ...(claim.nodeClassHash ? { nodeClassHash: claim.nodeClassHash } : {}), labels },
      current.hash,
      current.requirements,
      classHash.get(claim.nodeClass),
    );
    if (reason) out.set(claim.name, driftMessage(reason, claim.nodePool, claim.nodeClass));
  }
  return out;
}
