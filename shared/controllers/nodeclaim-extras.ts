/** What a NodeClaim records at creation from its NodePool and EC2NodeClass, for drift and expiration later. */
import { parseDuration, parseNillableDuration } from '../core/api/duration.js';
import { nodeClassHash, nodePoolHash, type NodePoolTemplateLike } from '../core/disruption/drift.js';
import type { NodeClaim } from '../core/api/nodeclaim.js';

/**
 * What a new record carries beside the plan: what drift and expiration compare against later, and the NodePool
 * template's annotations that registration puts on its Node.
 */
export type NodeClaimExtras = Pick<NodeClaim, 'nodePoolHash' | 'nodeClassHash' | 'expireAfterSeconds' | 'terminationGracePeriodSeconds' | 'replacementFor' | 'annotations'>;

/**
 * The hashes, `expireAfter`, `terminationGracePeriod` and template annotations a new NodeClaim of this NodePool
 * records. The annotations are `spec.template.metadata.annotations` as they are (core
 * `pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go` `ToNodeClaim` copies the template's metadata onto the
 * NodeClaim); registration later copies them onto the Node, so e.g. `karpenter.sh/do-not-disrupt: "true"` there
 * protects every node of the NodePool from voluntary disruption.
 * @param nodeClass the NodePool's EC2NodeClass, when it exists
 * @throws {DurationError} when a duration does not parse (the NodePool schema rejects those earlier)
 */
export function nodeClaimExtras(nodePool: NodePoolTemplateLike, nodeClass: { readonly spec: unknown } | undefined): NodeClaimExtras {
  const spec = nodePool.spec.template.spec;
  const annotations = nodePool.spec.template.metadata?.annotations ?? {};
  return {
    ...(Object.keys(annotations).length > 0 ? { annotations: { ...annotations } } : {}),
    nodePoolHash: nodePoolHash(nodePool),
    ...(nodeClass ? { nodeClassHash: nodeClassHash(nodeClass) } : {}),
    expireAfterSeconds: spec.expireAfter === undefined ? null : parseNillableDuration(spec.expireAfter),
    ...(spec.terminationGracePeriod !== undefined ? { terminationGracePeriodSeconds: parseDuration(spec.terminationGracePeriod) } : {}),
  };
}
