/**
 * Mirror (static) pods: the pods a kubelet runs from its own manifest files and mirrors to the API server, owned by
 * their Node (owner reference `apiVersion: v1, kind: Node`, kubelet `pkg/kubelet/pod/mirror_client.go`). Karpenter
 * leaves them where they are (core `pkg/utils/pod/scheduling.go` `IsOwnedByNode`): not reschedulable
 * (`IsReschedulable`, so they neither make a node look non-empty nor are pods to move), not provisionable
 * (`IsProvisionable`), never evicted or waited for by a drain (`IsEvictable`, `IsDrainable`). They go with their node.
 *
 * A pod's owner is read as Skiff's ports carry it (`ClusterPod.owner`; the Result's `pods[].owner`, docs/contracts.md): `Kind/name` of the
 * controlling owner reference, so a mirror pod's is `Node/<node name>` (the kubelet marks that reference the
 * controller).
 */

/** The owner prefix of a mirror pod: `Node/<node name>`. */
export const NODE_OWNER_PREFIX = 'Node/';

/**
 * True when a pod's owner (`Kind/name`, or null for a bare pod) is a Node: a mirror (static) pod (Karpenter
 * `IsOwnedByNode`).
 * @example isOwnedByNode('Node/ip-10-0-1-5.ec2.internal') // true
 * @example isOwnedByNode('ReplicaSet/web-5d8f') // false
 */
export function isOwnedByNode(owner: string | null | undefined): boolean {
  return owner?.startsWith(NODE_OWNER_PREFIX) ?? false;
}

/** An owner reference as `metadata.ownerReferences` holds it (only what is read). */
export interface OwnerReferenceLike {
  readonly apiVersion?: unknown;
  readonly kind?: unknown;
  readonly name?: unknown;
}

/**
 * The owner (`Node/<name>`) of a pod whose `metadata.ownerReferences` names a Node (`apiVersion: v1`, `kind: Node`),
 * as Karpenter's `IsOwnedBy` matches it (any reference of that group, version and kind, controller or not); undefined
 * for any other pod.
 * @param refs the pod's owner references, if any
 * @example mirrorPodOwner([{ apiVersion: 'v1', kind: 'Node', name: 'n1', controller: true }]) // 'Node/n1'
 */
export function mirrorPodOwner(refs: readonly OwnerReferenceLike[] | null | undefined): string | undefined {
  const ref = refs?.find((r) => r.apiVersion === 'v1' && r.kind === 'Node' && typeof r.name === 'string' && r.name !== '');
  return ref ? `${NODE_OWNER_PREFIX}${ref.name as string}` : undefined;
}
