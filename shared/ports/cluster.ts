/**
 * Cluster port: what Skiff reads from and writes to the Kubernetes API.
 * Adapters: the simulated cluster (`shared/sim/simulated-cluster.ts`) and the @kubernetes/client-node adapter
 * (`shared/adapters/kubernetes/`). Skiff never binds pods: kube-scheduler does.
 */
import type { Taint } from '../core/api/kubernetes.js';
import type { NodeClaim } from '../core/api/nodeclaim.js';
import type { PodDisruptionBudget } from '../core/api/pdb.js';
import type { PodSpecLike } from '../core/provisioning/pod.js';
import type { ResourceList } from '../core/resources/resource-list.js';

/** A pod as Skiff reads it. */
export interface ClusterPod {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly spec: PodSpecLike;
  /** The node it is bound to, if any. */
  readonly nodeName?: string;
  readonly phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed';
  /** kube-scheduler set `PodScheduled=False, reason=Unschedulable`: the only pods Skiff provisions for. */
  readonly unschedulable: boolean;
  /** `Kind/name` of the controlling owner (e.g. `ReplicaSet/web-5d8f`, `DaemonSet/fluent-bit`), or null. */
  readonly owner: string | null;
  /** Epoch ms. */
  readonly createdAt: number;
}

/** A node as Skiff reads it. */
export interface ClusterNode {
  readonly name: string;
  /** `aws:///<zone>/<instance-id>`. */
  readonly providerId: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  /** Canonical units (cpu millicores, memory MiB). */
  readonly allocatable: ResourceList;
  readonly ready: boolean;
  /** Epoch ms. */
  readonly createdAt: number;
  /** When its deletion was requested (epoch ms): it stays, being deleted, until its finalizers are gone. */
  readonly deletionTimestamp?: number;
  /** `metadata.finalizers` (e.g. `karpenter.sh/termination`, which registration adds). */
  readonly finalizers?: readonly string[];
}

/**
 * When each node last had a pod event, as Karpenter's core `pkg/controllers/nodeclaim/podevents/controller.go`
 * counts them: a pod that is not a DaemonSet pod bound to the node, going terminal (Succeeded/Failed) on it, or being
 * deleted from it (terminating). consolidateAfter counts from the latest (core `pkg/utils/disruption/disruption.go
 * IsUnderConsolidateAfter`).
 */
export interface PodEventTimes {
  /** Node name → epoch ms of its latest pod event; nodes with none known are absent. */
  readonly byNode: ReadonlyMap<string, number>;
  /**
   * True when every event is in `byNode`, deletions of pods already gone included (a cluster that saw each event as
   * it happened). False when the times are read from the pods still in the API (bind, finish and deletion-request
   * timestamps): a pod deleted and gone between two reads leaves no time, so the reader must notice its absence
   * itself.
   */
  readonly complete: boolean;
}

/** A Kubernetes Event Skiff writes. `object` is `Kind/namespace/name` (or `Kind/name` for cluster-scoped objects). */
export interface ClusterEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly object: string;
  readonly message: string;
  /** Structured details for machines (e.g. the per-NodePool reasons of a `FailedScheduling`). */
  readonly details?: Readonly<Record<string, unknown>>;
}

/** What {@link Cluster.patchNode} changes on a Node. */
export interface NodePatch {
  /** Labels to merge into the Node's; a null value deletes that label. */
  readonly labels?: Readonly<Record<string, string | null>>;
  /** When given, the Node's complete new taint list. */
  readonly taints?: readonly Taint[];
  /** Annotations to merge into the Node's; a null value deletes that annotation. */
  readonly annotations?: Readonly<Record<string, string | null>>;
  /**
   * When given, the Node's complete new finalizer list. A Node being deleted goes once its list is empty; the list
   * is replaced without a resourceVersion precondition, so pass the list just read minus (or plus) Skiff's own.
   */
  readonly finalizers?: readonly string[];
}

/**
 * What the Eviction API answered: `evicted` (the pod is being deleted), `blocked` (429: a PodDisruptionBudget
 * forbids it now — try later) or `gone` (404: no such pod).
 */
export type EvictionOutcome = 'evicted' | 'blocked' | 'gone';

/** The NodePool a NodeClaim mirror is owned by (Kubernetes `ownerReferences`). */
export interface NodeClaimOwner {
  /** The NodePool's `metadata.uid`. */
  readonly nodePoolUid: string;
}

/**
 * A `karpenter.sh/v1` NodeClaim object in the cluster that mirrors a Skiff NodeClaim record, as
 * {@link Cluster.listNodeClaimMirrors} reads it.
 */
export interface NodeClaimMirrorRef {
  /** The NodeClaim's name (the record's). */
  readonly name: string;
  /**
   * The record `version` the mirror was last completely written from, or undefined when unknown (the write was
   * interrupted, or an older Skiff wrote it): an unknown version is always rewritten.
   */
  readonly version?: number;
  /**
   * When a user asked to delete the NodeClaim object (`kubectl delete nodeclaim`), epoch ms: Skiff's termination
   * finalizer on the mirror holds it while the NodeClaim is terminated gracefully.
   */
  readonly deletionTimestamp?: number;
}

/**
 * The Kubernetes API as Skiff uses it. NodePools and EC2NodeClasses are the parsed, defaulted objects.
 *
 * The three NodeClaim-mirror methods are optional and go together: a cluster that has all three gets each
 * NodeClaim record mirrored as a `karpenter.sh/v1` NodeClaim object by the lifecycle controller (so
 * `kubectl get nodeclaims` works), and a user's deletion of such an object (its `deletionTimestamp`, held by Skiff's
 * finalizer) terminates the NodeClaim gracefully; a cluster without them is left alone.
 */
export interface Cluster<NodePool = unknown, EC2NodeClass = unknown, DaemonSet = unknown> {
  listNodePools(): Promise<NodePool[]>;
  listNodeClasses(): Promise<EC2NodeClass[]>;
  listDaemonSets(): Promise<DaemonSet[]>;
  /** Every pod that is not terminal (Pending or Running). */
  listPods(): Promise<ClusterPod[]>;
  listNodes(): Promise<ClusterNode[]>;
  /** Writes a Kubernetes Event (deduplicated by the cluster within a short window). */
  recordEvent(event: ClusterEvent): Promise<void>;
  /**
   * Merges `labels` and `annotations` (null deletes one) into the Node and, when `taints` is given, replaces its taints.
   * @throws {NotFoundError} when the Node does not exist
   */
  patchNode(name: string, patch: NodePatch): Promise<void>;
  /**
   * Deletes the Node; a Node already gone is not an error. A Node with finalizers only gets a deletionTimestamp and
   * goes once they are removed ({@link patchNode}).
   */
  deleteNode(name: string): Promise<void>;
  /**
   * Evicts the pod through the Eviction API: `evicted`, `blocked` (429: a PDB forbids it now — try later), or
   * `gone` (404).
   */
  evictPod(namespace: string, name: string): Promise<EvictionOutcome>;
  /**
   * Deletes the pod (`DELETE` with `gracePeriodSeconds`), bypassing PodDisruptionBudgets and do-not-disrupt: what a
   * drain does once its node's terminationGracePeriod leaves the pod no more time than its own grace period (Karpenter
   * `terminator/eviction.go` `forceDelete`).
   * @param gracePeriodSeconds at least 1 (0 would delete it from etcd at once)
   * @returns `deleted`, or `gone` (404: no such pod)
   */
  forceDeletePod(namespace: string, name: string, gracePeriodSeconds: number): Promise<'deleted' | 'gone'>;
  /**
   * The latest pod event per node ({@link PodEventTimes}). Optional: without it the disruption controller notices pod
   * changes only by comparing the pods it lists from one pass to the next.
   */
  lastPodEventTimes?(): Promise<PodEventTimes>;
  /** Every PodDisruptionBudget (policy/v1), parsed. */
  listPodDisruptionBudgets(): Promise<PodDisruptionBudget[]>;
  /**
   * Every NodeClaim object Skiff mirrors (those carrying Skiff's state annotation; NodeClaims another controller
   * owns, e.g. a Karpenter installed beside Skiff, are not listed, so they are never deleted), in any order.
   */
  listNodeClaimMirrors?(): Promise<NodeClaimMirrorRef[]>;
  /**
   * Creates or updates the NodeClaim object mirroring `claim` (metadata with the `karpenter.sh/termination`
   * finalizer, spec, and status conditions Launched, Registered, Initialized, Ready), then records `claim.version` on
   * it. Idempotent. With `owner`, the object carries an owner reference to its NodePool (`blockOwnerDeletion`), as
   * Karpenter's NodeClaims do: deleting the NodePool then has Kubernetes' garbage collector delete the NodeClaim
   * objects, which the lifecycle controller terminates gracefully like any deleted NodeClaim.
   * @param owner the NodePool's `metadata.uid`, when the NodePool exists
   */
  mirrorNodeClaim?(claim: NodeClaim, owner?: NodeClaimOwner): Promise<void>;
  /** Removes Skiff's finalizer from the NodeClaim object named `name` and deletes it; one already gone is not an error. */
  deleteNodeClaimMirror?(name: string): Promise<void>;
}
