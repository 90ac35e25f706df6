/**
 * Draining a NodeClaim whose disruption reached `Draining`, whoever started it (a command, expiration, the
 * interruption controller, the lifecycle controller's `NodeDeleted`/`NodeClaimDeleted`): evict its pods through the
 * Eviction API, delete those its terminationGracePeriod leaves no time for, then delete the record, terminate the
 * instance and delete the Node.
 */
import type { NodeClaim } from '../../core/api/nodeclaim.js';
import { podDoNotDisrupt } from '../../core/disruption/do-not-disrupt.js';
import { DISRUPTED_NO_SCHEDULE_TAINT, isDrainable } from '../../core/disruption/drainable.js';
import { pdbBlocks, pdbSelects, type PdbAllowance } from '../../core/disruption/pdb.js';
import type { ClusterNode, ClusterPod } from '../../ports/cluster.js';
import { recordEventBestEffort } from '../events.js';
import { nodeOf } from '../launch.js';
import { deleteNodeReleasingFinalizer } from '../node-termination.js';
import { retryThrottled } from '../retry.js';
import { VOLUNTARY_REASONS, isTainted, recordBlocked, taint, writeIgnoringConflict, type Pass } from './pass.js';
import { podsOn, type World } from './world.js';

/** The API server's default pod `terminationGracePeriodSeconds` (Kubernetes `DefaultTerminationGracePeriodSeconds`). */
export const DEFAULT_POD_GRACE_SECONDS = 30;

/**
 * Draining (core `pkg/controllers/node/termination/terminator/terminator.go` `Drain`): evict the node's drainable pods
 * through the Eviction API (a PDB's 429 waits for the next pass; do-not-disrupt pods are left alone and waited for;
 * pods that tolerate the `karpenter.sh/disrupted` taint are neither evicted nor waited for, `utils/pod/scheduling.go`
 * `IsDrainable`); a pod whose node's terminationGracePeriod ends within its own grace period is deleted instead
 * ({@link forceDelete}). Once none is left, or the terminationGracePeriod has run out (every pod deleted), delete the
 * record, terminate the instance and delete the Node.
 *
 * The deadline is the drain's start plus the terminationGracePeriod (as the NodeClaim's deletion timestamp plus it is
 * in core); from `deadline − terminationGracePeriodSeconds` on a pod is deleted with the time left as its grace
 * period (core `terminator/eviction.go` `needsForceDelete`). A pod without `terminationGracePeriodSeconds` counts the
 * API server's default, {@link DEFAULT_POD_GRACE_SECONDS}.
 * @throws whatever the ports throw for failures other than conflicts
 */
export async function drain(pass: Pass, world: World, claim: NodeClaim): Promise<void> {
  const d = claim.disruption!;
  const node = nodeOf(claim, world.nodes);
  // A voluntary drain goes on only on a node its start tainted. Without the taint, the pass that started it died
  // before tainting (or the taint was taken off): the node may have taken pods since, and the budget may be spent —
  // the disruption pass validates that command again first (`validate.ts resumeStart`). Forceful drains taint here.
  if (node && VOLUNTARY_REASONS.has(d.reason) && !isTainted(node)) return;
  // Pods that tolerate the disrupted taint are neither evicted nor waited for (core `isDrainable`): they go with the node.
  // Skiff waits for such a pod (never evicting it: its replacement would land on this node again) while it is annotated
  // do-not-disrupt, or while its PodDisruptionBudget could not spare it and the others of it here; from the
  // terminationGracePeriod deadline minus its grace it is deleted like any other. Karpenter's terminator takes such
  // pods down with the node whatever their annotation or PDB says.
  const onNode = podsOn(world, node);
  const stranded = strandedByPdb(onNode.filter((p) => !isDrainable(p)), world.pdbs);
  const pods = onNode.filter((p) => isDrainable(p) || stranded.has(p) || podDoNotDisrupt(p.annotations, p.createdAt, world.now).active);
  const deadline = drainDeadline(claim);
  // A forceful disruption of a node that stopped answering (its instance reclaimed or stopped) has nothing left to
  // drain gracefully: Karpenter removes the finalizer of a NotReady node whose instance is gone.
  const gone = node !== undefined && !node.ready && (d.reason === 'Interrupted' || d.reason === 'Expired' || d.reason === 'NodeDeleted' || d.reason === 'NodeClaimDeleted');
  if (node && pods.length > 0 && !gone) {
    await taint(pass, node);
    // In the order the pods are listed, every pass: Skiff's plans predict kube-scheduler's binding of the evicted pods
    // in this order (`binding-replay.ts`); starting each pass at another pod made a scale-in's repacking 12 % dearer.
    for (const pod of pods) {
      const key = `${pod.namespace}/${pod.name}`;
      // The grace period leaves the pod no more time than its own: deleted, PDBs and do-not-disrupt notwithstanding.
      const podGraceSeconds = podGraceSecondsOf(pod);
      if (world.now >= deadline - podGraceSeconds * 1000) {
        await forceDelete(pass, world, node, pod, deadline, podGraceSeconds);
        continue;
      }
      const dnd = podDoNotDisrupt(pod.annotations, pod.createdAt, world.now);
      if (dnd.active) {
        pass.report.waiting.push({ pod: key, reason: 'annotated karpenter.sh/do-not-disrupt' });
        await recordBlocked(pass, world.now, {
          type: 'Warning',
          reason: 'DisruptionBlocked',
          object: `Node/${node.name}`,
          message: `drain of ${node.name} (${d.reason}) waits for pod ${key}, annotated karpenter.sh/do-not-disrupt${Number.isFinite(deadline) ? ` (until the terminationGracePeriod ends at ${new Date(deadline).toISOString()})` : ''}`,
        });
        continue;
      }
      if (!isDrainable(pod)) {
        const why = `pod ${key} tolerates ${DISRUPTED_NO_SCHEDULE_TAINT.key} (it would come back if evicted) and its PodDisruptionBudget cannot spare it now`;
        pass.report.waiting.push({ pod: key, reason: why });
        await recordBlocked(pass, world.now, { type: 'Warning', reason: 'DisruptionBlocked', object: `Node/${node.name}`, message: `drain of ${node.name} (${d.reason}) waits: ${why}${Number.isFinite(deadline) ? ` (until the terminationGracePeriod ends at ${new Date(deadline).toISOString()})` : ''}` });
        continue;
      }
      pass.writes++;
      // An eviction the API server refused with a 429/5xx did nothing: tried again (`retryThrottled`; a PDB's 429 is
      // the port's 'blocked' outcome, not an error).
      const outcome = await retryThrottled(() => pass.deps.cluster.evictPod(pod.namespace, pod.name));
      if (outcome === 'evicted') pass.report.evicted.push(key);
      if (outcome === 'blocked') {
        const why = pdbBlocks(pod, world.pdbs) ?? 'a PodDisruptionBudget refused the eviction (429)';
        pass.report.waiting.push({ pod: key, reason: why });
        await recordBlocked(pass, world.now, { type: 'Warning', reason: 'DisruptionBlocked', object: `Node/${node.name}`, message: `drain of ${node.name} (${d.reason}) waits: pod ${key}: ${why}` });
      }
    }
    // Evicted pods take their grace period to go: the node is terminated on a later pass, once none is left. Past the
    // deadline every pod was just deleted: the node goes now.
    if (world.now < deadline) return;
  }
  await finish(pass, world, claim, node);
}

/**
 * When the drain of `claim` must be over (epoch ms): its start (`drainStartedAt`, else the command's start or
 * proposal) plus the NodeClaim's terminationGracePeriod — core's `nodeTerminationTime`, the NodeClaim's deletion
 * timestamp plus `spec.terminationGracePeriod` (`pkg/controllers/node/termination/controller.go`). +Infinity without a
 * terminationGracePeriod. Only meaningful for a NodeClaim whose disruption reached `Draining`.
 */
export function drainDeadline(claim: NodeClaim): number {
  const d = claim.disruption;
  if (!d || claim.terminationGracePeriodSeconds === undefined) return Number.POSITIVE_INFINITY;
  return Date.parse(d.drainStartedAt ?? d.startedAt ?? d.proposedAt) + claim.terminationGracePeriodSeconds * 1000;
}

/** A pod's `terminationGracePeriodSeconds`, or the API server's default ({@link DEFAULT_POD_GRACE_SECONDS}), seconds. */
function podGraceSecondsOf(pod: ClusterPod): number {
  return (pod.spec as { terminationGracePeriodSeconds?: number }).terminationGracePeriodSeconds ?? DEFAULT_POD_GRACE_SECONDS;
}

/**
 * When the drain of `claim` must start deleting pods (epoch ms): its {@link drainDeadline} less the longest grace
 * period of the pods on its node — from then on each pass owes it force-deletions and, at the deadline, the node's
 * termination (core `terminator/eviction.go` `needsForceDelete`). +Infinity without a terminationGracePeriod.
 */
export function drainDueAt(world: World, claim: NodeClaim): number {
  const deadline = drainDeadline(claim);
  if (!Number.isFinite(deadline)) return deadline;
  const pods = podsOn(world, nodeOf(claim, world.nodes));
  return deadline - Math.max(0, ...pods.map(podGraceSecondsOf)) * 1000;
}

/**
 * Of the pods a drain leaves to go with their node (they tolerate the disrupted taint), those a PodDisruptionBudget
 * could not spare: the PDB allows fewer disruptions now than it has such pods on the node, so terminating the node
 * would take it below its desired healthy count.
 */
function strandedByPdb(pods: readonly ClusterPod[], allowances: readonly PdbAllowance[]): Set<ClusterPod> {
  const out = new Set<ClusterPod>();
  for (const a of allowances) {
    const mine = pods.filter((p) => pdbSelects(a.pdb, p));
    if (mine.length > a.allowed) for (const p of mine) out.add(p);
  }
  return out;
}

/**
 * Deletes a pod the drain can wait for no longer — its node's terminationGracePeriod ends (`deadline`, epoch ms) within
 * the pod's own grace period — with the time that is left (at least 1 s), bypassing PDBs and do-not-disrupt, and
 * writes Karpenter's `Disrupted` Event (core `terminator/eviction.go` `needsForceDelete`, `forceDelete`).
 */
async function forceDelete(pass: Pass, world: World, node: ClusterNode, pod: ClusterPod, deadline: number, podGraceSeconds: number): Promise<void> {
  const grace = Math.max(1, Math.floor((deadline - world.now) / 1000));
  pass.writes++;
  if ((await retryThrottled(() => pass.deps.cluster.forceDeletePod(pod.namespace, pod.name, grace))) !== 'deleted') return;
  pass.report.forceDeleted.push(`${pod.namespace}/${pod.name}`);
  await recordEventBestEffort(pass.deps.cluster, {
    type: 'Normal',
    reason: 'Disrupted',
    object: `Pod/${pod.namespace}/${pod.name}`,
    message: `Deleting the pod to accommodate the terminationTime ${new Date(deadline).toISOString()} of the node ${node.name}. The pod was granted ${grace} seconds of grace-period of its ${podGraceSeconds} terminationGracePeriodSeconds. This bypasses the PDB of the pod and the do-not-disrupt annotation.`,
  });
}

/**
 * Record first, then the instance, then the Node (its termination finalizer removed last, as Karpenter's `finalize`
 * does once the instance is gone): a crash in between leaves what garbage collection cleans up. A termination a
 * throttled EC2 refused (it did nothing; TerminateInstances is idempotent) is tried again (`retryThrottled`).
 */
async function finish(pass: Pass, world: World, claim: NodeClaim, node: ClusterNode | undefined): Promise<void> {
  const d = claim.disruption!;
  const saved = await writeIgnoringConflict(pass, { ...claim, state: 'Deleted', deletedAt: new Date(world.now).toISOString(), deletionReason: d.reason });
  if (!saved) return;
  if (claim.instanceId) await retryThrottled(() => pass.deps.cloud.delete(claim.instanceId!));
  if (node) await deleteNodeReleasingFinalizer(pass.deps.cluster, node);
  pass.report.deleted.push({ nodeClaim: claim.name, reason: d.reason });
}
