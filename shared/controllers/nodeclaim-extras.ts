/** What a NodeClaim records at creation from its NodePool and EC2NodeClass, for drift and expiration later. */
import { parseDuration, parseNillableDuration } from '../core/api/duration.js';
import { nodeClassHash, nodePoolHash, type NodePoolTemplateLike } from '../core/disruption/drift.js';
import type { NodeClaimExtras } from './launch.js';

/**
 * The hashes, `expireAfter` and `terminationGracePeriod` a new NodeClaim of this NodePool records.
 * @param nodeClass the NodePool's EC2NodeClass, when it exists
 * @throws {DurationError} when a duration does not parse (the NodePool schema rejects those earlier)
 */
export function nodeClaimExtras(nodePool: NodePoolTemplateLike, nodeClass: { readonly spec: unknown } | undefined): NodeClaimExtras {
  const spec = nodePool.spec.template.spec;
  return {
    nodePoolHash: nodePoolHash(nodePool),
    ...(nodeClass ? { nodeClassHash: nodeClassHash(nodeClass) } : {}),
    expireAfterSeconds: spec.expireAfter === undefined ? null : parseNillableDuration(spec.expireAfter),
    ...(spec.terminationGracePeriod !== undefined ? { terminationGracePeriodSeconds: parseDuration(spec.terminationGracePeriod) } : {}),
  };
}
