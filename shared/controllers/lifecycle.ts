/**
 * The lifecycle controller: one idempotent pass over NodeClaims, Nodes and instances (Karpenter's NodeClaim
 * lifecycle and garbage-collection controllers, docs/karpenter-semantics.md#nodeclaim-lifecycle, run as one scheduled Lambda).
 *
 * Steps, in order, for every NodeClaim read at the start of the pass:
 * 1. registration (`lifecycle/registration.go`): a `Launched` NodeClaim whose instance's Node exists (matched by
 *    providerID) → the Node gets the NodePool's template labels, `karpenter.sh/nodepool`, the NodeClaim's labels and
 *    annotations and `karpenter.sh/registered=true`, loses `karpenter.sh/unregistered`; the NodeClaim becomes
 *    `Registered`;
 * 2. initialization (`lifecycle/initialization.go`): a `Registered` NodeClaim whose Node is Ready, carries none of
 *    the NodeClaim's startup taints nor a known ephemeral taint, and shows non-zero allocatable for every extended
 *    resource the NodeClaim's pods requested → label `karpenter.sh/initialized=true`, state `Initialized`. A Node
 *    already ready for pods when it registers gets both in one patch and one write (`register`);
 * 3. liveness (`lifecycle/liveness.go`): a `Launched` NodeClaim not registered {@link REGISTRATION_TTL_MS} after
 *    launch → the instance is terminated, the NodeClaim `Deleted` with reason `RegistrationTimeout`;
 * 4. garbage collection: (a) an instance tagged for a NodePool, older than {@link INSTANCE_GC_MIN_AGE_MS}, that no
 *    live NodeClaim owns → terminated, its Node deleted (aws `nodeclaim/garbagecollection`); (b) a registered
 *    NodeClaim whose instance is gone from the cloud and whose Node is not Ready → `Deleted` with reason
 *    `InstanceTerminated`, its Node deleted (core `nodeclaim/garbagecollection`); (c) a Node whose NodeClaim is
 *    `Deleted` or `Failed` → deleted; (d) a registered NodeClaim whose Node vanished (deleted by a user without
 *    Skiff's termination finalizer, or with it forced off) → its instance is terminated and it is `Deleted` with
 *    reason `NodeDeleted` (Karpenter: deleting a Node deletes its NodeClaim) — unless the instance is gone too, which
 *    is `InstanceTerminated`; (e) a Node of
 *    a NodePool (or still carrying `karpenter.sh/unregistered`) whose instance is no longer running and that no live
 *    NodeClaim claims → deleted (a pass that crashed between terminating an orphan instance and deleting its Node
 *    leaves one behind, and no other step would find it: the instance is gone and no NodeClaim names the Node).
 * 4½. termination (core `pkg/controllers/node/termination/controller.go`): registration puts the
 *    `karpenter.sh/termination` finalizer on the Node (and a pass adds it to a registered Node that lacks it), so a
 *    user's `kubectl delete node` leaves the Node with a deletionTimestamp; a registered NodeClaim whose Node is being
 *    deleted, or whose NodeClaim object a user deleted (its mirror's deletionTimestamp), starts a graceful termination
 *    (`startNodeTermination`: `Deleting`, a forceful `NodeDeleted` / `NodeClaimDeleted` disruption that the
 *    disruption controller drains); a deleted NodeClaim whose Node has not registered is terminated at once. Every
 *    Node this controller deletes loses the finalizer first.
 * 5. mirroring (when the cluster offers the optional NodeClaim-mirror methods of the Cluster port): every live
 *    NodeClaim, as this pass left it, is written as a `karpenter.sh/v1` NodeClaim object with its status conditions
 *    (Launched, Registered, Initialized, Ready) unless the object already mirrors that record version; the mirror of
 *    a NodeClaim that is over (`Deleted`, `Failed`) or whose record is gone is deleted. A mirror failure never fails
 *    the pass: it is reported in `mirrorFailures` (the handler logs it) and the next pass tries again.
 *
 * Failures: every NodeClaim is reconciled on its own, as Karpenter's controllers reconcile one object at a time: a
 * throttled or unavailable API (`ThrottledError`) cuts short only that NodeClaim's steps (reported in `failures`; the
 * next pass retries it), and the NodeClaims pods wait on come first (`byUrgency`), so a pass cut short by a crash does
 * not starve the same NodeClaims every minute. Skiff differs in having an order at all: Karpenter reconciles NodeClaims
 * in parallel workers with a per-object backoff.
 *
 * Follow-ups: with {@link LifecycleDeps.followUps}, a pass that reads a NodeClaim pods wait on asks for another pass
 * 20 s later before its first write, so a pass cut short is resumed without waiting for the schedule.
 *
 * Concurrency: NodeClaims are read before Nodes and instances, so a NodeClaim registered by an overlapping pass
 * always finds its Node in this pass's list, and an instance launched after the read is younger than the GC age.
 * Every NodeClaim write is conditional on its version; a ConflictError means another pass did it, and the step is
 * skipped (its report entry and Event belong to the winner). Node patches and deletions and instance terminations
 * are idempotent, so doing them twice is harmless.
 */
import type { Taint } from '../core/api/kubernetes.js';
import {
  DISRUPTED_TAINT_KEY,
  LABEL_CAPACITY_TYPE,
  LABEL_INITIALIZED,
  LABEL_NODEPOOL,
  LABEL_REGISTERED,
  LABEL_ZONE,
  TAG_SKIFF_CLUSTER,
  TERMINATION_FINALIZER,
  UNREGISTERED_TAINT_KEY,
} from '../core/api/labels.js';
import { isLive, type DeletionReason, type NodeClaim, type NodeClaimDisruption } from '../core/api/nodeclaim.js';
import { DISRUPTED_NO_SCHEDULE_TAINT } from '../core/disruption/drainable.js';
import { fnv1a } from '../core/hash.js';
import { ThrottledError, isConflictError, isNotFoundError, isThrottledError } from '../core/errors.js';
import { offeringKey, withUnavailable, type InstanceType } from '../core/instancetypes/offering.js';
import { podRequests } from '../core/provisioning/pod.js';
import { add, type ResourceList } from '../core/resources/resource-list.js';
import { EPHEMERAL_TAINT_KEYS, READINESS_TAINT_PREFIX } from '../core/scheduling/taints.js';
import type { CloudInstance, CloudProvider } from '../ports/cloud-provider.js';
import type { Clock } from '../ports/clock.js';
import type { Cluster, ClusterNode, ClusterPod, NodeClaimMirrorRef } from '../ports/cluster.js';
import { FOLLOW_UP_AFTER_MS, type FollowUpPasses } from '../ports/follow-up-passes.js';
import type { IdGenerator } from '../ports/ids.js';
import type { NodeClaimStore } from '../ports/nodeclaim-store.js';
import type { UnavailableOfferings } from '../ports/unavailable-offerings.js';
import { LAUNCH_TIMEOUT_MS, REGISTRATION_TTL_MS, fail, instanceTypeQuery, launchPending, recordLaunchRetrying, type EC2NodeClassLike, type LaunchDeps, type LaunchOutcome } from './launch.js';
import { recordEventBestEffort } from './events.js';
import { retryThrottled } from './retry.js';
import { deleteNodeReleasingFinalizer } from './node-termination.js';
import { timestampMs } from '../core/api/timestamp.js';

/**
 * An instance younger than this is never garbage-collected: 30 s (aws `nodeclaim/garbagecollection/controller.go`),
 * so a launch whose NodeClaim record is being written is not mistaken for a leak.
 */
export const INSTANCE_GC_MIN_AGE_MS = 30 * 1000;

/** Resources every kubelet reports; any other requested resource must show non-zero allocatable to initialize. */
const CORE_RESOURCES: ReadonlySet<string> = new Set(['cpu', 'memory', 'pods', 'ephemeral-storage']);

/** The NodePool fields the lifecycle controller reads. */
export interface LifecycleNodePool {
  /** `uid` is the API server's (absent for an object not read from one): NodeClaim mirrors are owned by it. */
  readonly metadata: { readonly name: string; readonly uid?: string };
  readonly spec: { readonly template: { readonly metadata?: { readonly labels?: Readonly<Record<string, string>> } } };
}

/**
 * What the lifecycle controller needs to launch a `Pending` NodeClaim again (the provision controller's launch ports;
 * `LaunchDeps` in `launch.ts`).
 */
export interface LifecycleLaunch {
  readonly unavailableOfferings: UnavailableOfferings;
  /** Random name suffixes (`LaunchDeps.ids`). */
  readonly ids: IdGenerator;
  /** EKS cluster name, used in instance tags. */
  readonly clusterName: string;
  /** AWS region, e.g. `us-west-2`. */
  readonly region: string;
  /** Lists the EC2NodeClasses (the instance types a NodeClaim's class offers), e.g. `() => cluster.listNodeClasses()`. */
  readonly listNodeClasses: () => Promise<readonly EC2NodeClassLike[]>;
}

/** Everything the controller needs, as ports. */
export interface LifecycleDeps {
  readonly cluster: Cluster<LifecycleNodePool, unknown, unknown>;
  readonly cloud: CloudProvider;
  readonly store: NodeClaimStore;
  readonly clock: Clock;
  /**
   * Also list the pods and report {@link LifecycleReport.usage} (per-node allocatable and requests, pod phases), for
   * metrics. Costs one pod list per pass. @default false
   */
  readonly observeUsage?: boolean;
  /**
   * Launch `Pending` NodeClaims again (step 0, Karpenter's launch controller): a NodeClaim whose launch a throttled API
   * refused, or whose provisioner pass crashed before it launched, is launched by the next lifecycle pass.
   * @default none: the pass launches nothing (it still gives up on a launch older than `LAUNCH_TIMEOUT_MS`)
   */
  readonly launch?: LifecycleLaunch;
  /**
   * Where a pass asks for another pass sooner than the schedule's next minute: when it reads a NodeClaim that pods
   * wait on and that a pass can move on now (a `Launched` one whose Node is there, a `Registered` one whose Node is
   * ready for pods, a `Pending` one to launch again), it asks for a pass {@link FOLLOW_UP_AFTER_MS} later **before it
   * writes anything**. So a pass that dies part-way (a crash, a timeout) is followed 20 s later by one that resumes it,
   * not a minute later; Karpenter's lifecycle controller requeues each NodeClaim the same way (controller-runtime
   * retries a failed reconcile with a per-object backoff). A pass with nothing to move on asks for nothing, so the
   * chain ends with the work. A failed request is reported ({@link LifecycleReport.followUpFailure}), never the pass's
   * failure. @default none: passes run on the schedule and on node events only
   */
  readonly followUps?: FollowUpPasses;
}

/** One managed node's resources, as the pass read them (canonical units: cpu millicores, memory MiB, counts). */
export interface NodeUsage {
  /** The Node's name. */
  readonly node: string;
  /** Its `karpenter.sh/nodepool` label. */
  readonly nodePool: string;
  /** Its `karpenter.sh/capacity-type` label (`spot`, `on-demand`, `reserved`), when set. */
  readonly capacityType?: string;
  /** Its `topology.kubernetes.io/zone` label, when set. */
  readonly zone?: string;
  /** The Node's `status.allocatable`. */
  readonly allocatable: ResourceList;
  /** Requests of the non-DaemonSet pods bound to it (each pod also counts `pods: 1`). */
  readonly podRequests: ResourceList;
  /** Requests of the DaemonSet pods bound to it. */
  readonly daemonRequests: ResourceList;
}

/** A pod's phase as the pass saw it (only what the pod startup metric needs). */
export interface PodObservation {
  readonly uid: string;
  readonly phase: ClusterPod['phase'];
  /** Creation time, epoch ms. */
  readonly createdAt: number;
}

/** What a pass with `observeUsage` saw, for metrics (never logged). */
export interface LifecycleUsage {
  /** When the pass read the cluster, epoch ms. */
  readonly observedAt: number;
  /** Every NodeClaim record as the pass left it. */
  readonly claims: readonly NodeClaim[];
  /** Every Node of a NodePool that the pass did not delete. */
  readonly nodes: readonly NodeUsage[];
  /** Every non-terminal pod. */
  readonly pods: readonly PodObservation[];
}

/** A NodeClaim mirror operation that failed; the pass went on without it. */
export interface MirrorFailure {
  /** What failed: listing the mirrors (nothing was mirrored), writing one, or deleting one. */
  readonly operation: 'list' | 'apply' | 'delete';
  /** The NodeClaim concerned (absent for `list`). */
  readonly name?: string;
  /** The error's message. */
  readonly error: string;
}

/** What one pass did (names of NodeClaims, Nodes and instance ids), for logs. Only the pass that won a write lists it. */
export interface LifecycleReport {
  /** NodeClaims that became `Registered`. */
  readonly registered: readonly string[];
  /** NodeClaims that became `Initialized`. */
  readonly initialized: readonly string[];
  /** NodeClaims deleted because their Node did not register in time. */
  readonly registrationTimeouts: readonly string[];
  /** NodeClaims deleted because their instance was gone. */
  readonly instanceTerminated: readonly string[];
  /**
   * NodeClaims deleted at once because their Node vanished (deleted without Skiff's termination finalizer, or the
   * finalizer was forced off).
   */
  readonly nodeDeleted: readonly string[];
  /**
   * NodeClaims whose graceful termination this pass started because a user deleted their Node (it carries a
   * deletionTimestamp, held by Skiff's termination finalizer) or their NodeClaim object: the disruption controller
   * drains them.
   */
  readonly terminating: readonly string[];
  /** NodeClaims a user deleted before their Node registered: their instance was terminated at once. */
  readonly nodeClaimDeleted: readonly string[];
  /** Instances terminated because no live NodeClaim owns them. */
  readonly orphanInstances: readonly string[];
  /** Nodes this pass deleted. */
  readonly deletedNodes: readonly string[];
  /** `Pending` NodeClaims this pass launched (step 0). Absent in reports from before this field existed. */
  readonly launched?: readonly string[];
  /** `Pending` NodeClaims this pass gave up on: not launched within `LAUNCH_TIMEOUT_MS` (step 0). */
  readonly launchTimeouts?: readonly string[];
  /** Conditional writes another pass won (the step was skipped). */
  readonly conflicts: number;
  /** NodeClaims whose `karpenter.sh/v1` mirror this pass created or updated. */
  readonly mirrored: readonly string[];
  /** NodeClaim mirrors this pass deleted (their NodeClaim is over or gone). */
  readonly mirrorsDeleted: readonly string[];
  /** Mirror operations that failed (the pass itself did not fail; the next one retries). */
  readonly mirrorFailures: readonly MirrorFailure[];
  /**
   * NodeClaims (or, for garbage collection, instances and Nodes) whose steps a throttled or unavailable API cut short
   * in this pass (`ThrottledError`: EC2 `RequestLimitExceeded`, DynamoDB throughput, an API server 429 or 5xx), with the
   * error's message. The pass went on with the others; the next pass retries these.
   */
  readonly failures?: readonly { readonly nodeClaim: string; readonly error: string }[];
  /** What the pass saw, when run with `observeUsage`. */
  readonly usage?: LifecycleUsage;
  /** The follow-up pass this pass asked for (ISO 8601 UTC), when it found work pods wait on ({@link LifecycleDeps.followUps}). */
  readonly followUpAt?: string;
  /** Why asking for that follow-up failed (the pass went on; the schedule's next pass comes anyway). */
  readonly followUpFailure?: string;
}

/**
 * Runs one lifecycle pass. Idempotent, and safe to run concurrently with itself (see the module comment).
 * @returns what this pass did
 * @throws whatever the ports throw for failures other than conflicts and a Node that vanished mid-pass
 * @example
 * const report = await reconcileLifecycle({ cluster, cloud, store, clock });
 * log.info('lifecycle', { registered: report.registered.length });
 */
export async function reconcileLifecycle(deps: LifecycleDeps): Promise<LifecycleReport> {
  const report = {
    registered: [] as string[],
    initialized: [] as string[],
    registrationTimeouts: [] as string[],
    instanceTerminated: [] as string[],
    nodeDeleted: [] as string[],
    terminating: [] as string[],
    nodeClaimDeleted: [] as string[],
    orphanInstances: [] as string[],
    deletedNodes: [] as string[],
    conflicts: 0,
    mirrored: [] as string[],
    mirrorsDeleted: [] as string[],
    mirrorFailures: [] as MirrorFailure[],
    failures: [] as { nodeClaim: string; error: string }[],
    launched: [] as string[],
    launchTimeouts: [] as string[],
    followUpAt: undefined as string | undefined,
    followUpFailure: undefined as string | undefined,
  };
  // Order matters: NodeClaims first (see the module comment).
  // Reads refused by a throttled API are tried again (`retryThrottled`): a pass that dies on its reads does nothing at all.
  const claims = await retryThrottled(() => deps.store.list());
  const mirrors = mirrorsOf(deps.cluster);
  const [nodes, instances, nodePools, pods, listedMirrors] = await Promise.all([
    retryThrottled(() => deps.cluster.listNodes()),
    retryThrottled(() => deps.cloud.list()),
    retryThrottled(() => deps.cluster.listNodePools()),
    deps.observeUsage === true ? retryThrottled(() => deps.cluster.listPods()) : undefined,
    // A mirror list that fails never fails the pass (step 5 reports it).
    mirrors ? mirrors.listNodeClaimMirrors().catch((e: unknown) => ({ failed: messageOf(e) })) : undefined,
  ]);
  /** NodeClaims whose `karpenter.sh/v1` object a user asked to delete, with when (epoch ms). */
  const claimDeletions = new Map(Array.isArray(listedMirrors) ? listedMirrors.flatMap((m) => (m.deletionTimestamp !== undefined ? [[m.name, m.deletionTimestamp] as const] : [])) : []);
  const now = deps.clock.now();
  const nodeByProvider = new Map(nodes.map((n) => [n.providerId, n]));
  const nodeByName = new Map(nodes.map((n) => [n.name, n]));
  const running = new Map(instances.filter((i) => i.state !== 'terminated').map((i) => [i.instanceId, i]));
  const templateLabels = new Map(nodePools.map((np) => [np.metadata.name, np.spec.template.metadata?.labels ?? {}]));
  const ctx: Pass = { deps, report, now, latest: new Map(claims.map((c) => [c.name, c])), stale: new Set() };
  const deletedNodes = new Set<string>();
  const deleteNode = async (name: string) => {
    if (deletedNodes.has(name)) return;
    deletedNodes.add(name);
    const node = nodeByName.get(name);
    if (node) await deleteNodeReleasingFinalizer(deps.cluster, node);
    else await deps.cluster.deleteNode(name);
    report.deletedNodes.push(name);
  };

  /** Steps 1–4½ for one NodeClaim (see the module comment). */
  const reconcileClaim = async (claim: NodeClaim): Promise<void> => {
    const node = (claim.providerId ? nodeByProvider.get(claim.providerId) : undefined) ?? (claim.nodeName ? nodeByName.get(claim.nodeName) : undefined);
    const instanceGone = !!claim.instanceId && !running.has(claim.instanceId);
    const claimDeletion = claimDeletions.get(claim.name);
    if (claimDeletion !== undefined && (claim.state === 'Launched' || !node)) {
      // A NodeClaim a user deleted before its Node registered (no pod can run there yet): its instance goes at once.
      await terminate(ctx, claim, 'NodeClaimDeleted', report.nodeClaimDeleted, {
        type: 'Normal',
        reason: 'NodeClaimDeleted',
        message: `NodeClaim ${claim.name} was deleted before its Node registered; instance ${claim.instanceId ?? '(none)'} terminated`,
      });
      return;
    }
    if (claim.state === 'Launched') {
      if (node) {
        await register(ctx, claim, node, templateLabels.get(claim.nodePool) ?? {});
      } else if (now - timestampMs(claim.launchedAt ?? claim.createdAt) > REGISTRATION_TTL_MS) {
        await terminate(ctx, claim, 'RegistrationTimeout', report.registrationTimeouts, {
          type: 'Warning',
          reason: 'RegistrationTimeout',
          message: `NodeClaim ${claim.name} did not register within ${REGISTRATION_TTL_MS / 60_000} minutes of launch; instance ${claim.instanceId ?? '(none)'} terminated`,
        });
      }
      return;
    }
    // Registered or Initialized.
    if (!node) {
      await terminate(ctx, claim, instanceGone ? 'InstanceTerminated' : 'NodeDeleted', instanceGone ? report.instanceTerminated : report.nodeDeleted, {
        type: 'Normal',
        reason: instanceGone ? 'InstanceTerminated' : 'NodeDeleted',
        message: instanceGone
          ? `instance ${claim.instanceId} of NodeClaim ${claim.name} is gone and its Node was deleted`
          : `Node ${claim.nodeName ?? claim.providerId ?? ''} of NodeClaim ${claim.name} was deleted; NodeClaim deleted and instance ${claim.instanceId ?? ''} terminated`,
      });
      return;
    }
    if (instanceGone && !node.ready) {
      const won = await terminate(ctx, claim, 'InstanceTerminated', report.instanceTerminated, {
        type: 'Warning',
        reason: 'InstanceTerminated',
        message: `instance ${claim.instanceId} of NodeClaim ${claim.name} is gone; deleting Node ${node.name}`,
      });
      if (won !== 'skipped') await deleteNode(node.name);
      return;
    }
    if (node.deletionTimestamp !== undefined || claimDeletion !== undefined) {
      // A deleted Node, or a deleted NodeClaim (Karpenter deletes its Node then): the same graceful termination.
      const deletion = node.deletionTimestamp !== undefined ? { reason: 'NodeDeleted' as const, at: node.deletionTimestamp } : { reason: 'NodeClaimDeleted' as const, at: claimDeletion! };
      await startNodeTermination(ctx, claim, node, deletion, report.terminating);
      return;
    }
    // A Node registered before Skiff added the finalizer (or by a Skiff that did not) gets it now.
    if (!(node.finalizers ?? []).includes(TERMINATION_FINALIZER) && !(await patch(ctx, node.name, { finalizers: [...(node.finalizers ?? []), TERMINATION_FINALIZER] }))) return;
    if (claim.state === 'Registered') await initialize(ctx, claim, node);
  };

  // Each NodeClaim is its own reconcile, as in Karpenter (controller-runtime reconciles one object at a time and requeues
  // only that object on an error): a throttled or failed call skips the rest of this NodeClaim's steps and is reported
  // in `failures`; the other NodeClaims go on, and the next pass (a minute later at most) retries it. NodeClaims whose
  // pods wait on them (a Node to register, a registered Node to initialize) come first, oldest launch first, so a pass
  // cut short (a crash, a timeout) spends its time where pods wait longest and cannot starve the same ones every time.
  const isolated = async (subject: string, step: () => Promise<void>): Promise<void> => {
    try {
      await step();
    } catch (e) {
      if (!isThrottledError(e)) throw e;
      report.failures.push({ nodeClaim: subject, error: messageOf(e) });
    }
  };
  // Before the first write: a pass cut short below is followed by another 20 s later (LifecycleDeps.followUps).
  if (deps.followUps && claims.some((c) => awaitsPass(c, deps.launch !== undefined, nodeByProvider, nodeByName))) {
    const at = now + FOLLOW_UP_AFTER_MS;
    try {
      await deps.followUps.request(at);
      report.followUpAt = new Date(at).toISOString();
    } catch (e) {
      report.followUpFailure = messageOf(e);
    }
  }
  await launchPendingClaims(deps, claims, nodes, now, report, isolated);
  /**
   * True when {@link reconcileClaim} would do nothing: an Initialized NodeClaim nobody asked to delete, whose Node is
   * there with Skiff's finalizer and no deletionTimestamp, and whose instance runs (or whose Node is still Ready). The
   * same conditions as the steps above, read without a call per NodeClaim: a quiet pass over thousands of NodeClaims
   * costs a map lookup each.
   */
  const settled = (claim: NodeClaim): boolean => {
    if (claim.state !== 'Initialized' || claimDeletions.has(claim.name)) return false;
    const node = (claim.providerId ? nodeByProvider.get(claim.providerId) : undefined) ?? (claim.nodeName ? nodeByName.get(claim.nodeName) : undefined);
    if (!node || node.deletionTimestamp !== undefined || !(node.finalizers ?? []).includes(TERMINATION_FINALIZER)) return false;
    return !(!!claim.instanceId && !running.has(claim.instanceId) && !node.ready);
  };
  // The settled ones are left out before sorting: a quiet pass sorts nothing.
  for (const claim of claims.filter((c) => isLive(c) && c.state !== 'Pending' && c.state !== 'Deleting' && !settled(c)).sort(byUrgency)) {
    await isolated(claim.name, () => reconcileClaim(claim));
  }


  // (a) Instances no live NodeClaim owns. A NodeClaim still recording its instance (named by the instance's tag,
  // no instance id yet) owns it; so does the NodeClaim whose instance id it is.
  const owned = new Set(claims.filter(isLive).flatMap((c) => (c.instanceId ? [c.instanceId] : [])));
  const recording = new Set(claims.filter((c) => isLive(c) && !c.instanceId).map((c) => c.name));
  for (const instance of running.values()) {
    if (!isManaged(instance) || owned.has(instance.instanceId)) continue;
    if (recording.has(instance.tags['karpenter.sh/nodeclaim'] ?? '')) continue;
    if (now - instance.launchedAt <= INSTANCE_GC_MIN_AGE_MS) continue;
    await isolated(`Instance/${instance.instanceId}`, async () => {
      await deps.cloud.delete(instance.instanceId);
      report.orphanInstances.push(instance.instanceId);
      const node = nodeByProvider.get(providerIdOf(instance));
      if (node) await deleteNode(node.name);
      await recordEventBestEffort(deps.cluster, {
        type: 'Normal',
        reason: 'GarbageCollected',
        object: `Instance/${instance.instanceId}`,
        message: `instance ${instance.instanceId} (${instance.instanceType}) has no NodeClaim; terminated${node ? ` and Node ${node.name} deleted` : ''}`,
      });
    });
  }

  // (c) Nodes whose NodeClaim is over (Deleted or Failed) and no live NodeClaim claims.
  const liveProviders = new Set(claims.filter(isLive).flatMap((c) => (c.providerId ? [c.providerId] : [])));
  const endedProviders = new Set(claims.filter((c) => !isLive(c)).flatMap((c) => (c.providerId ? [c.providerId] : [])));
  for (const node of nodes) {
    if (endedProviders.has(node.providerId) && !liveProviders.has(node.providerId)) await isolated(`Node/${node.name}`, () => deleteNode(node.name));
  }

  // (e) Managed Nodes whose instance is gone and that no live NodeClaim claims.
  for (const node of nodes) {
    if (liveProviders.has(node.providerId) || !isManagedNode(node)) continue;
    const instanceId = node.providerId.split('/').pop() ?? '';
    if (instanceId.startsWith('i-') && !running.has(instanceId)) await isolated(`Node/${node.name}`, () => deleteNode(node.name));
  }

  await mirrorNodeClaims(ctx, report, listedMirrors, new Map(nodePools.flatMap((np) => (np.metadata.uid ? [[np.metadata.name, np.metadata.uid] as const] : []))));
  const { followUpAt, followUpFailure, ...done } = report;
  const result: LifecycleReport = { ...done, ...(followUpAt !== undefined ? { followUpAt } : {}), ...(followUpFailure !== undefined ? { followUpFailure } : {}) };
  if (!pods) return result;
  return { ...result, usage: usageOf(now, [...ctx.latest.values()], nodes.filter((n) => !deletedNodes.has(n.name)), pods) };
}

/**
 * True when pods wait on `claim` and a pass can move it on now (the work a follow-up pass is asked for,
 * {@link LifecycleDeps.followUps}): `Pending` without an instance, when the pass launches (`canLaunch`); `Launched`
 * with its Node there (to register); `Registered` with its Node ready for pods ({@link initializationBlocker}).
 */
function awaitsPass(claim: NodeClaim, canLaunch: boolean, nodeByProvider: ReadonlyMap<string, ClusterNode>, nodeByName: ReadonlyMap<string, ClusterNode>): boolean {
  if (!isLive(claim)) return false;
  if (claim.state === 'Pending') return canLaunch && !claim.instanceId;
  if (claim.state !== 'Launched' && claim.state !== 'Registered') return false;
  const node = (claim.providerId ? nodeByProvider.get(claim.providerId) : undefined) ?? (claim.nodeName ? nodeByName.get(claim.nodeName) : undefined);
  if (!node) return false;
  return claim.state === 'Launched' || initializationBlocker(claim, node) === undefined;
}

/** The pass's {@link LifecycleUsage}: requests of the pods bound to each managed Node, and every pod's phase. */
function usageOf(now: number, claims: readonly NodeClaim[], nodes: readonly ClusterNode[], pods: readonly ClusterPod[]): LifecycleUsage {
  const byNode = new Map<string, { pods: ResourceList; daemons: ResourceList }>();
  for (const pod of pods) {
    if (!pod.nodeName) continue;
    const sums = byNode.get(pod.nodeName) ?? { pods: {}, daemons: {} };
    if (pod.owner?.startsWith('DaemonSet/')) sums.daemons = add(sums.daemons, podRequests(pod.spec));
    else sums.pods = add(sums.pods, podRequests(pod.spec));
    byNode.set(pod.nodeName, sums);
  }
  const usage: NodeUsage[] = [];
  for (const node of nodes) {
    const nodePool = node.labels[LABEL_NODEPOOL];
    if (nodePool === undefined) continue;
    const capacityType = node.labels[LABEL_CAPACITY_TYPE];
    const zone = node.labels[LABEL_ZONE];
    const sums = byNode.get(node.name);
    usage.push({
      node: node.name,
      nodePool,
      ...(capacityType !== undefined ? { capacityType } : {}),
      ...(zone !== undefined ? { zone } : {}),
      allocatable: node.allocatable,
      podRequests: sums?.pods ?? {},
      daemonRequests: sums?.daemons ?? {},
    });
  }
  return { observedAt: now, claims, nodes: usage, pods: pods.map((p) => ({ uid: p.uid, phase: p.phase, createdAt: p.createdAt })) };
}

interface Pass {
  readonly deps: LifecycleDeps;
  readonly report: { registered: string[]; initialized: string[]; conflicts: number };
  readonly now: number;
  /** Every NodeClaim read at the start, as this pass last wrote it. */
  readonly latest: Map<string, NodeClaim>;
  /** NodeClaims another pass changed meanwhile: their record is newer than {@link latest}, so they are not mirrored. */
  readonly stale: Set<string>;
}

/** The optional mirror methods of the Cluster port, when the cluster has all three. */
type Mirrors = Required<Pick<Cluster, 'listNodeClaimMirrors' | 'mirrorNodeClaim' | 'deleteNodeClaimMirror'>>;

function mirrorsOf(cluster: Cluster<unknown, unknown, unknown>): Mirrors | undefined {
  const { listNodeClaimMirrors, mirrorNodeClaim, deleteNodeClaimMirror } = cluster;
  if (!listNodeClaimMirrors || !mirrorNodeClaim || !deleteNodeClaimMirror) return undefined;
  return {
    listNodeClaimMirrors: () => listNodeClaimMirrors.call(cluster),
    mirrorNodeClaim: (claim, owner) => mirrorNodeClaim.call(cluster, claim, owner),
    deleteNodeClaimMirror: (name) => deleteNodeClaimMirror.call(cluster, name),
  };
}

/**
 * Step 5: writes the mirror of every live NodeClaim whose mirror does not show its current version (owned by its
 * NodePool when the NodePool exists, `nodePoolUids`), and deletes the mirrors of NodeClaims that are over or gone. Sequential (one object at a time). Never throws: failures go to
 * `report.mirrorFailures`.
 */
async function mirrorNodeClaims(
  ctx: Pass,
  report: { mirrored: string[]; mirrorsDeleted: string[]; mirrorFailures: MirrorFailure[] },
  listed: readonly NodeClaimMirrorRef[] | { readonly failed: string } | undefined,
  nodePoolUids: ReadonlyMap<string, string>,
): Promise<void> {
  const mirrors = mirrorsOf(ctx.deps.cluster);
  if (!mirrors || listed === undefined) return;
  if (!Array.isArray(listed)) {
    report.mirrorFailures.push({ operation: 'list', error: (listed as { failed: string }).failed });
    return;
  }
  const existing: readonly NodeClaimMirrorRef[] = listed;
  const mirroredVersion = new Map(existing.map((m) => [m.name, m.version]));
  for (const claim of ctx.latest.values()) {
    if (!isLive(claim) || ctx.stale.has(claim.name)) continue;
    if (mirroredVersion.has(claim.name) && mirroredVersion.get(claim.name) === claim.version) continue;
    try {
      const uid = nodePoolUids.get(claim.nodePool);
      await mirrors.mirrorNodeClaim(claim, uid !== undefined ? { nodePoolUid: uid } : undefined);
      report.mirrored.push(claim.name);
    } catch (e) {
      report.mirrorFailures.push({ operation: 'apply', name: claim.name, error: messageOf(e) });
    }
  }
  for (const { name } of existing) {
    const known = ctx.latest.get(name);
    if (known && (isLive(known) || ctx.stale.has(name))) continue;
    try {
      // Not read at the start: created since (by the provisioner)? Only a record that is gone or over loses its mirror.
      if (!known) {
        const record = await ctx.deps.store.get(name);
        if (record && isLive(record)) continue;
      }
      await mirrors.deleteNodeClaimMirror(name);
      report.mirrorsDeleted.push(name);
    } catch (e) {
      report.mirrorFailures.push({ operation: 'delete', name, error: messageOf(e) });
    }
  }
}

/**
 * How old a `Pending` NodeClaim must be before a lifecycle pass launches it: 30 s. The provisioner (or disruption)
 * pass that wrote it launches it at once; after that it was refused (throttled) or its pass died.
 */
export const LAUNCH_RESUME_AFTER_MS = 30 * 1000;

/**
 * Step 0 (Karpenter `nodeclaim/lifecycle/launch.go` and the launch timeout of `liveness.go`): every live `Pending`
 * NodeClaim without an instance, oldest first — created more than {@link LAUNCH_TIMEOUT_MS} ago → `Failed` with
 * `LaunchTimeout` (its pods are solved again by the next provisioning pass); else, with {@link LifecycleDeps.launch} and
 * older than {@link LAUNCH_RESUME_AFTER_MS} → launched again (`launchPending`: committed unless an overlapping in-flight
 * NodeClaim holds its pods, then CreateFleet with its name as `ClientToken`, so a launch that did happen returns the
 * same instance). A refusal ends only that NodeClaim's launch, with a `LaunchRetrying` Event; the next pass (a minute
 * later) tries again — Skiff's per-NodeClaim backoff is the schedule, where Karpenter requeues with an exponential
 * per-object backoff. An insufficient-capacity answer fails the NodeClaim and marks its offerings unavailable, as the
 * provisioner's launch does.
 */
async function launchPendingClaims(
  deps: LifecycleDeps,
  claims: readonly NodeClaim[],
  nodes: readonly ClusterNode[],
  now: number,
  report: { launched: string[]; launchTimeouts: string[] },
  isolated: (subject: string, step: () => Promise<void>) => Promise<void>,
): Promise<void> {
  const pending = claims.filter((c) => isLive(c) && c.state === 'Pending' && !c.instanceId).sort((a, b) => timestampMs(a.createdAt) - timestampMs(b.createdAt));
  if (pending.length === 0) return;
  const launch = deps.launch;
  const launchDeps: LaunchDeps | undefined = launch ? { cluster: deps.cluster, cloud: deps.cloud, store: deps.store, clock: deps.clock, ...launch } : undefined;
  let typesByClass: Map<string, readonly InstanceType[]> | undefined;
  const typesOf = async (nodeClass: string): Promise<readonly InstanceType[]> => {
    if (!launch) return [];
    if (!typesByClass) {
      const [classes, unavailable] = await Promise.all([retryThrottled(() => launch.listNodeClasses()), retryThrottled(() => launch.unavailableOfferings.listUnavailable(now))]);
      const keys = new Set(unavailable.map(offeringKey));
      typesByClass = new Map();
      for (const nc of classes) typesByClass.set(nc.metadata.name, withUnavailable(await retryThrottled(() => deps.cloud.getInstanceTypes(instanceTypeQuery(nc))), keys));
    }
    return typesByClass.get(nodeClass) ?? [];
  };
  for (const claim of pending) {
    const age = now - timestampMs(claim.createdAt);
    if (age > LAUNCH_TIMEOUT_MS) {
      await isolated(claim.name, async () => {
        await fail(deps, claim, 'LaunchTimeout');
        report.launchTimeouts.push(claim.name);
      });
      continue;
    }
    if (!launchDeps || age < LAUNCH_RESUME_AFTER_MS) continue;
    await isolated(claim.name, async () => {
      let outcome: LaunchOutcome;
      try {
        outcome = await launchPending(launchDeps, claim, await typesOf(claim.nodeClass), nodes, now);
      } catch (e) {
        if (!isThrottledError(e)) throw e;
        outcome = { kind: 'throttled', error: e.message };
      }
      if (outcome.kind === 'launched') report.launched.push(claim.name);
      if (outcome.kind === 'throttled') {
        await recordLaunchRetrying(deps, claim.name, outcome.error);
        throw new ThrottledError(outcome.error);
      }
    });
  }
}

/**
 * The order a pass reconciles NodeClaims in: first those pods wait on — `Launched` (its Node to register), then
 * `Registered` (its Node to initialize) — oldest launch first; then the others, by name. Karpenter has no order (its
 * controllers reconcile objects independently, in parallel); a pass of Skiff's, cut short by a crash or a timeout,
 * would otherwise spend itself on the same first NodeClaims every time and leave a late one waiting pass after pass.
 */
function byUrgency(a: NodeClaim, b: NodeClaim): number {
  return urgencyRank(a) - urgencyRank(b) || (urgencyRank(a) < 2 ? launchedSince(a) - launchedSince(b) : 0) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/** {@link byUrgency}'s rank: Launched, then Registered, then the rest. */
function urgencyRank(c: NodeClaim): number {
  return c.state === 'Launched' ? 0 : c.state === 'Registered' ? 1 : 2;
}

/** When the NodeClaim launched (or was created), epoch ms. */
function launchedSince(c: NodeClaim): number {
  return timestampMs(c.launchedAt ?? c.createdAt);
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * An instance garbage collection may terminate: launched for a NodePool (Karpenter requires the `karpenter.sh/nodepool`
 * tag) by Skiff ({@link TAG_SKIFF_CLUSTER}) — never an instance a Karpenter running before (or beside) Skiff launched.
 */
function isManaged(instance: CloudInstance): boolean {
  return instance.tags[LABEL_NODEPOOL] !== undefined && instance.tags[TAG_SKIFF_CLUSTER] !== undefined;
}

/** A Node Skiff launched: it carries its NodePool's label, or the taint every launched node registers with. */
function isManagedNode(node: ClusterNode): boolean {
  return node.labels[LABEL_NODEPOOL] !== undefined || node.taints.some((t) => t.key === UNREGISTERED_TAINT_KEY);
}

/** `aws:///<zone>/<instance-id>`, the providerID a Node of the instance carries. */
function providerIdOf(instance: CloudInstance): string {
  return `aws:///${instance.zone}/${instance.instanceId}`;
}

/** The labels registration puts on the Node, in increasing precedence. */
function registrationLabels(claim: NodeClaim, templateLabels: Readonly<Record<string, string>>): Record<string, string> {
  return { ...templateLabels, [LABEL_NODEPOOL]: claim.nodePool, ...claim.labels, [LABEL_REGISTERED]: 'true' };
}

/**
 * Step 1, and step 2 with it when the Node is already ready for pods (Karpenter's lifecycle controller runs its
 * registration and initialization sub-reconcilers one after the other in one `Reconcile`, core
 * `nodeclaim/lifecycle/controller.go`): one Node patch carries the registration labels, taint removal and finalizer,
 * plus `karpenter.sh/initialized=true` when {@link initializationBlocker} finds nothing once the `unregistered` taint
 * is gone; one NodeClaim write then records `Registered`, or `Initialized` with both timestamps. Two side effects
 * instead of four: under crashes a pass registers twice as many nodes. A write that loses to another pass leaves at
 * most the labels on the Node, which the winner puts there too.
 */
async function register(ctx: Pass, claim: NodeClaim, node: ClusterNode, templateLabels: Readonly<Record<string, string>>): Promise<void> {
  const taints = node.taints.filter((t) => t.key !== UNREGISTERED_TAINT_KEY);
  // A Node a previous pass already labelled initialized (it crashed before its NodeClaim write) stays initialized,
  // Ready or not: the label is what Karpenter's cluster state reads (`StateNode.Initialized`).
  const ready = node.labels[LABEL_INITIALIZED] === 'true' || initializationBlocker(claim, { ...node, taints }) === undefined;
  const labels = { ...registrationLabels(claim, templateLabels), ...(ready ? { [LABEL_INITIALIZED]: 'true' } : {}) };
  const changedLabels = Object.fromEntries(Object.entries(labels).filter(([k, v]) => node.labels[k] !== v));
  // The NodeClaim's annotations (its NodePool template's) go onto the Node (`registration.go` `syncNode`).
  const changedAnnotations = Object.fromEntries(Object.entries(claim.annotations ?? {}).filter(([k, v]) => node.annotations[k] !== v));
  const taintsChanged = taints.length !== node.taints.length;
  const annotationsChanged = Object.keys(changedAnnotations).length > 0;
  // The termination finalizer (`syncNode`): a user's deletion of the Node then waits for Skiff's graceful termination.
  const finalizers = (node.finalizers ?? []).includes(TERMINATION_FINALIZER) ? undefined : [...(node.finalizers ?? []), TERMINATION_FINALIZER];
  if (Object.keys(changedLabels).length > 0 || taintsChanged || annotationsChanged || finalizers) {
    const change = { labels: changedLabels, ...(annotationsChanged ? { annotations: changedAnnotations } : {}), ...(taintsChanged ? { taints } : {}), ...(finalizers ? { finalizers } : {}) };
    if (!(await patch(ctx, node.name, change))) return;
  }
  const at = new Date(ctx.now).toISOString();
  const updated = await write(ctx, { ...claim, state: ready ? 'Initialized' : 'Registered', nodeName: node.name, registeredAt: at, ...(ready ? { initializedAt: at } : {}) });
  if (!updated) return;
  ctx.report.registered.push(claim.name);
  if (ready) ctx.report.initialized.push(claim.name);
  await recordEventBestEffort(ctx.deps.cluster, { type: 'Normal', reason: 'Registered', object: `NodeClaim/${claim.name}`, message: `Status condition transitioned, Type: Registered, Status: Unknown -> True, Reason: Registered (Node ${node.name})` });
  if (ready) await recordInitialized(ctx, claim.name, node.name);
}

/**
 * Step 2, when the Node is ready for pods — or already carries `karpenter.sh/initialized=true`: a pass that patched the
 * label and crashed before its NodeClaim write initialized the Node (Karpenter's cluster state reads the label,
 * `StateNode.Initialized`), so the record follows even if the Node has turned NotReady since; otherwise the NodeClaim
 * would stay `Registered` and the solver would keep waiting for a Node that kube-scheduler refuses.
 */
async function initialize(ctx: Pass, claim: NodeClaim, node: ClusterNode): Promise<void> {
  if (node.labels[LABEL_INITIALIZED] !== 'true' && initializationBlocker(claim, node) !== undefined) return;
  if (node.labels[LABEL_INITIALIZED] !== 'true' && !(await patch(ctx, node.name, { labels: { [LABEL_INITIALIZED]: 'true' } }))) return;
  const updated = await write(ctx, { ...claim, state: 'Initialized', initializedAt: new Date(ctx.now).toISOString() });
  if (!updated) return;
  ctx.report.initialized.push(claim.name);
  await recordInitialized(ctx, claim.name, node.name);
}

/** The `Initialized` Event of a NodeClaim (best effort). */
async function recordInitialized(ctx: Pass, claim: string, node: string): Promise<void> {
  await recordEventBestEffort(ctx.deps.cluster, { type: 'Normal', reason: 'Initialized', object: `NodeClaim/${claim}`, message: `Status condition transitioned, Type: Initialized, Status: Unknown -> True, Reason: Initialized (Node ${node})` });
}

/**
 * Why a registered NodeClaim's Node is not initialized yet, or undefined when it is (Karpenter
 * `lifecycle/initialization.go`): not Ready, a startup taint (same key and effect) or an ephemeral taint still on it,
 * or a requested extended resource (e.g. `nvidia.com/gpu`) with zero allocatable.
 */
export function initializationBlocker(claim: NodeClaim, node: ClusterNode): string | undefined {
  if (!node.ready) return 'node is not Ready';
  const startup = node.taints.find((t) => claim.startupTaints.some((s) => sameTaint(s, t)));
  if (startup) return `startup taint ${startup.key} is still present`;
  const ephemeral = node.taints.find((t) => EPHEMERAL_TAINT_KEYS.has(t.key) || t.key.startsWith(READINESS_TAINT_PREFIX));
  if (ephemeral) return `ephemeral taint ${ephemeral.key} is still present`;
  for (const [resource, quantity] of Object.entries(claim.resources)) {
    if (CORE_RESOURCES.has(resource) || !(quantity > 0)) continue;
    if (!((node.allocatable[resource] ?? 0) > 0)) return `extended resource ${resource} is not registered`;
  }
  return undefined;
}

function sameTaint(a: Taint, b: Taint): boolean {
  return a.key === b.key && a.effect === b.effect;
}

/**
 * Terminates the NodeClaim's instance (first: a crash after it leaves a live record that the next pass finishes) and
 * marks it `Deleted`. Returns `won` when this pass wrote the record, `skipped` when another pass did.
 */
async function terminate(
  ctx: Pass,
  claim: NodeClaim,
  reason: DeletionReason | undefined,
  list: string[],
  event: { type: 'Normal' | 'Warning'; reason: string; message: string },
): Promise<'won' | 'skipped'> {
  // Re-read first: a pass that already moved the NodeClaim on (registered it, deleted it) wins without a termination.
  const fresh = await ctx.deps.store.get(claim.name);
  if (!fresh || fresh.version !== claim.version) {
    ctx.report.conflicts++;
    ctx.stale.add(claim.name);
    return 'skipped';
  }
  if (claim.instanceId) await ctx.deps.cloud.delete(claim.instanceId);
  const updated = await write(ctx, { ...claim, state: 'Deleted', deletedAt: new Date(ctx.now).toISOString(), ...(reason ? { deletionReason: reason } : {}) });
  if (!updated) return 'skipped';
  list.push(claim.name);
  await recordEventBestEffort(ctx.deps.cluster, { ...event, object: `NodeClaim/${claim.name}` });
  return 'won';
}

/**
 * A Node a user deleted (its deletionTimestamp is set; Skiff's termination finalizer holds it), or a NodeClaim object
 * a user deleted (core `pkg/controllers/nodeclaim/lifecycle/controller.go` `finalize` deletes its Node then): the
 * NodeClaim starts a graceful termination, as Karpenter's termination controller runs one (core
 * `pkg/controllers/node/termination/controller.go` `finalize`: the NodeClaim is deleted too, the Node tainted
 * `karpenter.sh/disrupted:NoSchedule`, then drained). The NodeClaim becomes `Deleting` with a forceful `NodeDeleted`
 * (or `NodeClaimDeleted`) disruption in its `Draining` phase — no budget, no replacement first; a replacement already
 * launching for it is kept — whose drain started at the deletion (so `terminationGracePeriod` counts from it, as
 * Karpenter's `karpenter.sh/nodeclaim-termination-timestamp` does). The disruption controller's drain evicts its pods
 * through the Eviction API (PDBs answer 429), waits for do-not-disrupt pods, and once none is left (or the grace
 * period is over) terminates the instance and removes the finalizer.
 * @param deletion what the user deleted and when (epoch ms)
 * @param started the report list the NodeClaim's name goes to when this pass wrote it
 */
async function startNodeTermination(
  ctx: Pass,
  claim: NodeClaim,
  node: ClusterNode,
  deletion: { readonly reason: 'NodeDeleted' | 'NodeClaimDeleted'; readonly at: number },
  started: string[],
): Promise<void> {
  const at = new Date(deletion.at).toISOString();
  const what = deletion.reason === 'NodeDeleted' ? `Node ${node.name}` : `NodeClaim ${claim.name}`;
  const disruption: NodeClaimDisruption = {
    command: `${deletion.reason.toLowerCase()}-${fnv1a(claim.name).toString(36)}`,
    reason: deletion.reason,
    decision: 'delete',
    phase: 'Draining',
    replacements: claim.disruption?.phase === 'Replacing' ? claim.disruption.replacements : [],
    candidates: [claim.name],
    message: `${what} was deleted`,
    proposedAt: at,
    startedAt: at,
    drainStartedAt: at,
  };
  const updated = await write(ctx, { ...claim, state: 'Deleting', disruption });
  if (!updated) return;
  if (!node.taints.some((t) => t.key === DISRUPTED_TAINT_KEY)) await patch(ctx, node.name, { taints: [...node.taints, DISRUPTED_NO_SCHEDULE_TAINT] });
  started.push(claim.name);
  const grace = claim.terminationGracePeriodSeconds;
  await recordEventBestEffort(ctx.deps.cluster, {
    type: 'Normal',
    reason: deletion.reason,
    object: `NodeClaim/${claim.name}`,
    message: `${what} is being deleted: draining Node ${node.name}${grace !== undefined ? ` (terminationGracePeriod ${grace}s)` : ''} before instance ${claim.instanceId ?? ''} is terminated`,
  });
}

/** A conditional NodeClaim update; undefined (and a counted conflict) when the record changed since it was read. */
async function write(ctx: Pass, claim: NodeClaim): Promise<NodeClaim | undefined> {
  try {
    const updated = await ctx.deps.store.update(claim);
    ctx.latest.set(updated.name, updated);
    return updated;
  } catch (e) {
    if (!isConflictError(e)) throw e;
    ctx.report.conflicts++;
    ctx.stale.add(claim.name);
    return undefined;
  }
}

/** Patches a Node; false when it vanished meanwhile (deleted by someone else — the next pass sees that). */
async function patch(ctx: Pass, name: string, change: Parameters<Cluster['patchNode']>[1]): Promise<boolean> {
  try {
    await ctx.deps.cluster.patchNode(name, change);
    return true;
  } catch (e) {
    if (isNotFoundError(e)) return false;
    throw e;
  }
}
