/**
 * A Node's end as Karpenter's termination finalizer runs it (core `pkg/controllers/node/termination/controller.go`):
 * registration puts {@link TERMINATION_FINALIZER} on every Node, so a user's `kubectl delete node` only sets its
 * deletionTimestamp; the lifecycle controller then starts a graceful termination of its NodeClaim (taint
 * `karpenter.sh/disrupted:NoSchedule`, drain through the Eviction API honouring PDBs up to the NodePool's
 * `terminationGracePeriod`, terminate the instance — the disruption controller's drain), and the finalizer is removed
 * last, once the instance is terminated (`removeFinalizer`).
 */
import { TERMINATION_FINALIZER } from '../core/api/labels.js';
import { isNotFoundError } from '../core/errors.js';
import type { Cluster, ClusterNode } from '../ports/cluster.js';

/**
 * Deletes a Node whose instance Skiff has terminated (or found gone): removes Skiff's termination finalizer — which
 * would otherwise hold the Node, deletionTimestamp set, for good — then deletes it (a no-op for a Node already being
 * deleted, which goes as its finalizer is removed). Other controllers' finalizers are kept. Idempotent.
 * @param node the Node as just read (its finalizers are the list the patch starts from)
 * @throws whatever the Cluster port throws, except for a Node that is already gone
 */
export async function deleteNodeReleasingFinalizer(cluster: Pick<Cluster, 'patchNode' | 'deleteNode'>, node: ClusterNode): Promise<void> {
  const finalizers = node.finalizers ?? [];
  if (finalizers.includes(TERMINATION_FINALIZER)) {
    try {
      await cluster.patchNode(node.name, { finalizers: finalizers.filter((f) => f !== TERMINATION_FINALIZER) });
    } catch (e) {
      if (isNotFoundError(e)) return;
      throw e;
    }
  }
  await cluster.deleteNode(node.name);
}
