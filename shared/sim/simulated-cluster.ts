/**
 * The simulated Kubernetes cluster behind the Cluster port: objects from the scenario, workload controllers
 * (Deployment, StatefulSet, Job, DaemonSet: `workload-controllers.ts`), LimitRange admission, a kube-scheduler that
 * binds pending pods, and kubelets that register nodes for simulated EC2 instances.
 *
 * kube-scheduler model: pending pods are tried in priority then creation order against Ready nodes, one scheduling
 * cycle per pass ({@link SchedulingCycle} in `kube-scheduler.ts`: taints, node affinity, resources, host ports,
 * inter-pod affinity and anti-affinity, topology spread; then a weighted score). A pass runs whenever something that
 * can make a pending pod fit happens (a node registers, turns Ready or loses a taint, a pod goes away, a new pod or
 * object arrives) and retries every pending pod: upstream's queueing hints move an unschedulable pod back to the
 * active queue on such Node and assigned-Pod events (`pkg/scheduler/internal/queue/scheduling_queue.go`
 * `MoveAllToActiveOrBackoffQueue`), and every 30 s a pod unschedulable for 5 minutes is retried anyway
 * (`flushUnschedulablePodsLeftover`, `podMaxInUnschedulablePodsDuration`).
 *
 * A pod that fits nowhere gets `PodScheduled=False, reason=Unschedulable` with kube-scheduler's message
 * (`0/<N> nodes are available: <count> <reason>, …`, `SchedulingCycle.unschedulableMessage`). As upstream's
 * `handleSchedulingFailure` → `updatePod` (`pkg/scheduler/schedule_one.go`), the condition is written — a new
 * resourceVersion, and {@link SimulatedClusterHooks.onUnschedulable}, which the relay reports — on the first failure
 * and on every failed retry whose message changed (a node joined or left, a node's first failing reason changed), and
 * never when a retry fails for the same reasons. So Skiff hears of a pod that did not fit where it was planned within
 * seconds of the nodes turning Ready, as in a real cluster; the 5-minute flush alone reports nothing new (the relay's
 * own resync re-reports pods that stay unschedulable, `RELAY_RESYNC_MS` in `engine.ts`).
 * Differs: upstream backs a failed pod off for 1 s doubling to 10 s before a move makes it active again; here it is
 * retried in the next pass, so it binds up to 10 s earlier than it would.
 *
 * The cluster's own bookkeeping (requests per node, DaemonSet placement) uses the independent placement checker
 * (`placement-check.ts`), never the solver's code, so the simulated cluster stays the ground truth Skiff is
 * measured against.
 */
import type { Taint, Toleration } from '../core/api/kubernetes.js';
import { LABEL_HOSTNAME, LABEL_NODEPOOL, LABEL_REGION, UNREGISTERED_TAINT_KEY } from '../core/api/labels.js';
import { labelSelectorMatches } from '../core/api/object-meta.js';
import { NotFoundError } from '../core/errors.js';
import type { LimitRange } from '../core/api/limitrange.js';
import type { EC2NodeClass } from '../core/api/ec2nodeclass.js';
import type { NodePool } from '../core/api/nodepool.js';
import { scaledValue, type PodDisruptionBudget } from '../core/api/pdb.js';
import type { Pod, PodTemplateSpec } from '../core/api/pod.js';
import { mirrorPodOwner } from '../core/api/pod-owner.js';
import type { DaemonSet, Deployment, Job, StatefulSet } from '../core/api/workloads.js';
import type { PodSpecLike } from '../core/provisioning/pod.js';
import { add, subtract, type ResourceList } from '../core/resources/resource-list.js';
import type { NodeClaim } from '../core/api/nodeclaim.js';
import type { Cluster, ClusterEvent, ClusterNode, ClusterPod, EvictionOutcome, NodeClaimMirrorRef, NodeClaimOwner, NodePatch, PodEventTimes } from '../ports/cluster.js';
import type { IdGenerator } from '../ports/ids.js';
import { SchedulingCycle } from './kube-scheduler.js';
import { WorkloadControllers } from './workload-controllers.js';
import { podEffectiveRequests } from './placement-check.js';
import type { SimInstance } from './simulated-ec2.js';
import { fnv1a } from '../core/hash.js';
import type { VirtualClock } from './virtual-clock.js';
import { firstUntolerated } from '../core/scheduling/taints.js';

/** kube-scheduler retries unschedulable pods after at most 5 minutes (`podMaxInUnschedulablePodsDuration`). */
export const UNSCHEDULABLE_RETRY_MS = 5 * 60 * 1000;
/** How often kube-scheduler moves long-unschedulable pods back to the active queue: 30 s. */
export const UNSCHEDULABLE_FLUSH_MS = 30 * 1000;
/**
 * How long a pod stays on a NotReady node before taint-based eviction: 300 s, the `tolerationSeconds` the
 * `DefaultTolerationSeconds` admission plugin gives every pod for `node.kubernetes.io/not-ready:NoExecute`.
 */
export const NOT_READY_TOLERATION_MS = 300 * 1000;
/** The taint the node lifecycle controller puts on a NotReady node (with NoSchedule and NoExecute effects). */
export const NOT_READY_TAINT_KEY = 'node.kubernetes.io/not-ready';

/** A pod in the simulation, with its history. Times are epoch ms. */
export interface SimPod extends ClusterPod {
  nodeName?: string;
  phase: ClusterPod['phase'];
  unschedulable: boolean;
  /**
   * The message of the pod's `PodScheduled=False, reason=Unschedulable` condition, as kube-scheduler last wrote it
   * (`0/<N> nodes are available: …`, see `SchedulingCycle.unschedulableMessage`); undefined before its first failure.
   */
  schedulingMessage?: string;
  resourceVersion: string;
  /** Effective requests (init containers, sidecars, overhead, `pods: 1`), canonical units: cpu millicores, memory MiB. */
  requests: ResourceList;
  deletedAt?: number;
  firstPendingAt?: number;
  scheduledAt?: number;
  evictions: number;
  /** How long the pod runs once scheduled (Job pods), seconds; null = until the end. */
  runForSeconds: number | null;
}

/** A node in the simulation. Times are epoch ms. */
export interface SimNode extends ClusterNode {
  readonly instanceId: string;
  readonly instanceType: string;
  readonly zone: string;
  readonly capacityType: string;
  readonly nodeClaim: string | null;
  ready: boolean;
  /** When the node first turned Ready, epoch ms. */
  readyAt?: number;
  taints: readonly Taint[];
  /** When a deletion was requested while it had finalizers (epoch ms); it goes once they are removed. */
  deletionTimestamp?: number;
  finalizers?: readonly string[];
  deletedAt?: number;
  /** What the pods bound to it request, canonical units (kept for kube-scheduler's resource fit). */
  used: ResourceList;
}

/** A recorded Kubernetes Event with its time (epoch ms). */
export interface SimEvent extends ClusterEvent {
  readonly at: number;
}

/** Hooks the engine and the observer attach to. */
export interface SimulatedClusterHooks {
  /** kube-scheduler marked a pod Unschedulable (the relay reports it). */
  onUnschedulable?(pod: SimPod): void;
  /** A pod was bound to a node. */
  onBind?(pod: SimPod, node: SimNode): void;
  /**
   * A Node registered, turned Ready or NotReady, got a deletionTimestamp (`deleting`: deleted while it has
   * finalizers) or was deleted (the relay reports it).
   */
  onNodeEvent?(node: SimNode, event: SimNodeEvent): void;
}

/** A Node change the relay reports (the `event` of a relay node message). */
export type SimNodeEvent = 'registered' | 'ready' | 'notReady' | 'deleting' | 'deleted';

/** Options of {@link SimulatedCluster}. Durations in ms. */
export interface SimulatedClusterOptions {
  readonly region: string;
  readonly ids: IdGenerator;
  /** Node registered → Ready, ms. @default 15000 */
  readonly readyDelayMs?: number;
  /**
   * Launched nodes register with `karpenter.sh/unregistered:NoExecute`, as Skiff's userData makes them, so no pod
   * schedules until the lifecycle controller registers the node. Off for harnesses that run no lifecycle controller.
   * @default false
   */
  readonly registerWithUnregisteredTaint?: boolean;
}

/** The simulated cluster. */
export class SimulatedCluster implements Cluster<NodePool, EC2NodeClass, DaemonSet> {
  readonly nodePools = new Map<string, NodePool>();
  readonly nodeClasses = new Map<string, EC2NodeClass>();
  readonly daemonSets = new Map<string, DaemonSet>();
  readonly deployments = new Map<string, Deployment>();
  readonly statefulSets = new Map<string, StatefulSet>();
  readonly jobs = new Map<string, { job: Job; succeeded: number; created: number }>();
  readonly pdbs = new Map<string, PodDisruptionBudget>();
  readonly limitRanges = new Map<string, LimitRange>();
  /** Live pods by `ns/name`. */
  readonly pods = new Map<string, SimPod>();
  /** Every pod ever created, in creation order. */
  readonly podHistory: SimPod[] = [];
  /** Live nodes by name. */
  readonly nodes = new Map<string, SimNode>();
  /** Every node ever registered. */
  readonly nodeHistory: SimNode[] = [];
  readonly events: SimEvent[] = [];
  /**
   * The `karpenter.sh/v1` NodeClaim objects mirrored into the cluster, by name: the record each was last written
   * from (what `kubectl get nodeclaims` would show). Only a caller that sees the mirror methods writes them.
   */
  readonly nodeClaimMirrors = new Map<string, NodeClaim>();
  /** NodeClaim mirror name → the uid of the NodePool it is owned by (its `ownerReferences`). */
  private readonly nodeClaimMirrorOwners = new Map<string, string>();
  /** The last uid handed out (`nodepool-<name>-<n>`). */
  private uids = 0;
  /**
   * NodeClaim mirrors a user asked to delete (`kubectl delete nodeclaim`), by name: when (epoch ms). The finalizer
   * Skiff puts on every mirror holds them until the lifecycle controller deletes them.
   */
  readonly nodeClaimMirrorDeletions = new Map<string, number>();
  hooks: SimulatedClusterHooks = {};
  /** Bumped by every change to a live pod or to the set of live pods ({@link podsChanged}). */
  private podVersion = 0;
  /** Bumped by every change to a live node or to the set of live nodes ({@link nodesChanged}). */
  private nodeVersion = 0;
  /** The copies {@link listNodes} made at `version`. */
  private nodeList: { readonly version: number; readonly nodes: readonly ClusterNode[] } | undefined;
  /** The copies {@link listPods} made at `version`. */
  private podList: { readonly version: number; readonly pods: readonly ClusterPod[] } | undefined;
  private rv = 1;
  private uid = 1;
  private passScheduled = false;
  private readonly dedupe = new Map<string, number>();
  /** Node name → epoch ms of the latest bind, completion or deletion of a pod on it (DaemonSet pods not counted). */
  private readonly lastPodEvent = new Map<string, number>();
  /** Node name → the live pods bound to it (kept by bind and unbind), so no per-node question scans every pod. */
  private readonly boundPods = new Map<string, Set<SimPod>>();
  /** The live bound pods with a required pod anti-affinity term (the only bound pods that constrain other pods' topology). */
  private readonly boundAntiAffinity = new Set<SimPod>();
  /** The Deployment, StatefulSet, Job and DaemonSet controllers, working on this cluster's objects and pods. */
  private readonly controllers = new WorkloadControllers<SimPod>({
    deployments: this.deployments,
    statefulSets: this.statefulSets,
    jobs: this.jobs,
    daemonSets: this.daemonSets,
    pods: this.pods,
    createPod: (namespace, name, template, owner, runFor, nodeName) => this.createPod(namespace, name, template, owner, runFor, nodeName),
    generateName: (namespace, prefix) => this.generateName(namespace, prefix),
    dropPod: (pod) => this.dropPod(pod),
  });

  constructor(
    private readonly clock: VirtualClock,
    private readonly options: SimulatedClusterOptions,
  ) {}

  // ---- Cluster port ------------------------------------------------------------------------------------------
  async listNodePools(): Promise<NodePool[]> {
    return [...this.nodePools.values()];
  }
  async listNodeClasses(): Promise<EC2NodeClass[]> {
    return [...this.nodeClasses.values()];
  }
  async listDaemonSets(): Promise<DaemonSet[]> {
    return [...this.daemonSets.values()];
  }
  /**
   * Copies of the live pods, in creation order. The copies are made again only after a pod changed (see
   * {@link podsChanged}); until then each call returns a new array of the same copies, which no caller may modify (the
   * port's pods are read-only), so a controller that reads 20,000 pods every minute of a quiet cluster neither copies
   * them nor makes garbage, and can remember what it worked out per pod object.
   */
  async listPods(): Promise<ClusterPod[]> {
    if (this.podList?.version !== this.podVersion) this.podList = { version: this.podVersion, pods: [...this.pods.values()].map((p) => ({ ...p })) };
    return [...this.podList.pods];
  }
  /**
   * Copies of the live nodes, made again only after a node changed ({@link nodesChanged}), as {@link listPods} does
   * for pods: each call returns a new array of the same read-only copies.
   */
  async listNodes(): Promise<ClusterNode[]> {
    if (this.nodeList?.version !== this.nodeVersion) this.nodeList = { version: this.nodeVersion, nodes: [...this.nodes.values()].map((n) => ({ ...n })) };
    return [...this.nodeList.nodes];
  }
  async patchNode(name: string, patch: NodePatch): Promise<void> {
    const node = this.nodes.get(name);
    if (!node) throw new NotFoundError(`node ${name} not found`, name);
    this.nodesChanged();
    if (patch.labels) Object.assign(node, { labels: mergePatch(node.labels, patch.labels) });
    if (patch.annotations) Object.assign(node, { annotations: mergePatch(node.annotations, patch.annotations) });
    if (patch.taints) node.taints = [...patch.taints];
    if (patch.taints || patch.labels) {
      // Fewer taints can admit pending pods and DaemonSet pods; new labels (`karpenter.sh/initialized`, say) can match
      // a DaemonSet's node selector (the DaemonSet controller watches Node labels as well as taints).
      this.controllers.placeDaemonPods(node);
      this.requestSchedulingPass();
    }
    if (patch.finalizers) {
      node.finalizers = [...patch.finalizers];
      // The API server finishes a deletion once the last finalizer is removed.
      if (node.deletionTimestamp !== undefined && node.finalizers.length === 0) this.removeNode(node);
    }
  }
  async deleteNode(name: string): Promise<void> {
    const node = this.nodes.get(name);
    if (node) this.requestNodeDeletion(node);
  }

  /**
   * A Node deletion as the API server does it: a Node without finalizers goes at once; one with finalizers gets a
   * deletionTimestamp (once) and stays — its pods keep running — until they are removed ({@link patchNode}).
   */
  requestNodeDeletion(node: SimNode): void {
    if (this.nodes.get(node.name) !== node) return;
    if ((node.finalizers ?? []).length === 0) return this.removeNode(node);
    if (node.deletionTimestamp !== undefined) return;
    node.deletionTimestamp = this.clock.now();
    this.nodesChanged();
    this.hooks.onNodeEvent?.(node, 'deleting');
  }
  async evictPod(namespace: string, name: string): Promise<EvictionOutcome> {
    const pod = this.pods.get(`${namespace}/${name}`);
    if (!pod) return 'gone';
    for (const pdb of this.pdbs.values()) {
      if ((pdb.metadata.namespace ?? 'default') !== namespace || !labelSelectorMatches(pdb.spec.selector, pod.labels)) continue;
      if (!this.evictionAllowed(pdb, pod)) return 'blocked';
    }
    pod.evictions++;
    this.deletePod(pod);
    if (!pod.owner) this.createPod(namespace, name, { metadata: { labels: { ...pod.labels }, annotations: { ...pod.annotations } }, spec: pod.spec } as unknown as PodTemplateSpec, null, pod.runForSeconds);
    return 'evicted';
  }
  /** Deletes the pod at once (the simulation does not model its grace period); a bare pod is recreated, as after an eviction. */
  async forceDeletePod(namespace: string, name: string, _gracePeriodSeconds: number): Promise<'deleted' | 'gone'> {
    const pod = this.pods.get(`${namespace}/${name}`);
    if (!pod) return 'gone';
    this.deletePod(pod);
    if (!pod.owner) this.createPod(namespace, name, { metadata: { labels: { ...pod.labels }, annotations: { ...pod.annotations } }, spec: pod.spec } as unknown as PodTemplateSpec, null, pod.runForSeconds);
    return 'deleted';
  }
  async listPodDisruptionBudgets(): Promise<PodDisruptionBudget[]> {
    return [...this.pdbs.values()];
  }
  /**
   * The latest pod event per live node, stamped as each happens (bind, completion, deletion or eviction of a pod
   * that is not a DaemonSet pod): complete, the way Karpenter's podevents controller sees every pod update.
   */
  async lastPodEventTimes(): Promise<PodEventTimes> {
    const byNode = new Map<string, number>();
    for (const [name, at] of this.lastPodEvent) if (this.nodes.has(name)) byNode.set(name, at);
    return { byNode, complete: true };
  }
  /** Every NodeClaim mirror, with the record version it was written from. */
  async listNodeClaimMirrors(): Promise<NodeClaimMirrorRef[]> {
    return [...this.nodeClaimMirrors.values()].map((c) => {
      const deletionTimestamp = this.nodeClaimMirrorDeletions.get(c.name);
      return { name: c.name, version: c.version, ...(deletionTimestamp !== undefined ? { deletionTimestamp } : {}) };
    });
  }
  /**
   * Records the mirror of `claim`, owned by the NodePool whose uid `owner` gives; a `Deleted` claim deletes its mirror
   * instead (as the Kubernetes adapter does).
   */
  async mirrorNodeClaim(claim: NodeClaim, owner?: NodeClaimOwner): Promise<void> {
    if (claim.state === 'Deleted') return this.deleteNodeClaimMirror(claim.name);
    this.nodeClaimMirrors.set(claim.name, claim);
    if (owner) this.nodeClaimMirrorOwners.set(claim.name, owner.nodePoolUid);
  }
  /** Deletes the mirror named `name` (its finalizer released); a missing one is not an error. */
  async deleteNodeClaimMirror(name: string): Promise<void> {
    this.nodeClaimMirrors.delete(name);
    this.nodeClaimMirrorOwners.delete(name);
    this.nodeClaimMirrorDeletions.delete(name);
  }
  async recordEvent(event: ClusterEvent): Promise<void> {
    // Kubernetes' event recorder aggregates identical events; keep one per object/reason/message per 5 minutes.
    const key = `${event.object}|${event.reason}|${event.message}`;
    const now = this.clock.now();
    const last = this.dedupe.get(key);
    if (last !== undefined && now - last < 5 * 60 * 1000) return;
    this.dedupe.set(key, now);
    this.events.push({ ...event, at: now });
  }

  /**
   * Whether the PDB lets `pod` be evicted now, as the API server's eviction subresource decides: healthy (Running,
   * on a Ready node) selected pods minus the desired healthy count must be positive; the expected count is the
   * number of selected pods (the simulation's stand-in for the controllers' scale). An unhealthy pod may go while
   * the budget is met (`IfHealthyBudget`), or always (`AlwaysAllow`).
   */
  private evictionAllowed(pdb: PodDisruptionBudget, pod: SimPod): boolean {
    const namespace = pdb.metadata.namespace ?? 'default';
    const selected = [...this.pods.values()].filter((p) => p.namespace === namespace && labelSelectorMatches(pdb.spec.selector, p.labels));
    const healthy = selected.filter((p) => this.isHealthy(p)).length;
    const expected = selected.length;
    const desired =
      pdb.spec.minAvailable !== undefined ? scaledValue(pdb.spec.minAvailable, expected) : Math.max(0, expected - scaledValue(pdb.spec.maxUnavailable ?? 0, expected));
    if (!this.isHealthy(pod)) return pdb.spec.unhealthyPodEvictionPolicy === 'AlwaysAllow' || healthy >= desired;
    return healthy - desired > 0;
  }

  private isHealthy(pod: SimPod): boolean {
    return pod.phase === 'Running' && !!pod.nodeName && this.nodes.get(pod.nodeName)?.ready === true;
  }

  /**
   * Sets a node's Ready condition, as its kubelet's status (or its absence) and the node lifecycle controller do:
   * NotReady adds `node.kubernetes.io/not-ready` (NoSchedule and NoExecute) and, after {@link NOT_READY_TOLERATION_MS},
   * evicts the pods that do not tolerate it (taint-based eviction); Ready removes the taints.
   */
  setNodeReady(node: SimNode, ready: boolean): void {
    if (!this.nodes.has(node.name) || node.ready === ready) return;
    node.ready = ready;
    this.nodesChanged();
    const others = node.taints.filter((t) => t.key !== NOT_READY_TAINT_KEY);
    if (ready) {
      node.taints = others;
      node.readyAt ??= this.clock.now();
    } else {
      node.taints = [...others, { key: NOT_READY_TAINT_KEY, effect: 'NoSchedule' }, { key: NOT_READY_TAINT_KEY, effect: 'NoExecute' }];
      const since = this.clock.now();
      this.notReadySince.set(node.name, since);
      this.clock.after(NOT_READY_TOLERATION_MS, `taint-based eviction on ${node.name}`, () => {
        if (this.nodes.get(node.name) !== node || node.ready || this.notReadySince.get(node.name) !== since) return;
        for (const p of this.podsOn(node.name)) {
          if (toleratesNotReady(p.spec.tolerations ?? [])) continue;
          p.evictions++;
          this.deletePod(p);
        }
      });
    }
    this.hooks.onNodeEvent?.(node, ready ? 'ready' : 'notReady');
    this.requestSchedulingPass();
  }

  private readonly notReadySince = new Map<string, number>();

  /** Merges annotations into a node's or a pod's (a user's `kubectl annotate`). */
  annotate(target: SimNode | SimPod, annotations: Readonly<Record<string, string>>): void {
    Object.assign(target, { annotations: { ...target.annotations, ...annotations } });
    this.podsChanged();
    this.nodesChanged();
  }

  /**
   * Adds taints to a node (a user's `kubectl taint`; a taint with the same key and effect is replaced). A NoExecute
   * taint evicts at once the pods that do not tolerate it (the taint manager; their controllers recreate them).
   */
  taintNode(node: SimNode, taints: readonly Taint[]): void {
    if (!this.nodes.has(node.name)) return;
    const replaced = node.taints.filter((t) => !taints.some((n) => n.key === t.key && n.effect === t.effect));
    node.taints = [...replaced, ...taints];
    this.nodesChanged();
    const noExecute = taints.filter((t) => t.effect === 'NoExecute');
    if (noExecute.length > 0) {
      for (const p of this.podsOn(node.name)) {
        if (!firstUntolerated(noExecute, p.spec.tolerations ?? [])) continue;
        p.evictions++;
        this.deletePod(p);
      }
    }
    this.requestSchedulingPass();
  }

  // ---- objects -----------------------------------------------------------------------------------------------
  /** Creates or replaces an object, as `kubectl apply` would, and reconciles its controller. */
  apply(manifest: { kind: string; object: unknown }): void {
    const o = manifest.object as { metadata: { name: string; namespace?: string } };
    const key = `${o.metadata.namespace ?? 'default'}/${o.metadata.name}`;
    switch (manifest.kind) {
      case 'NodePool': {
        // The API server gives every object a uid; a NodePool replaced by an apply keeps its own.
        const pool = manifest.object as NodePool;
        const uid = pool.metadata.uid ?? this.nodePools.get(o.metadata.name)?.metadata.uid ?? `nodepool-${o.metadata.name}-${++this.uids}`;
        this.nodePools.set(o.metadata.name, { ...pool, metadata: { ...pool.metadata, uid } });
        break;
      }
      case 'EC2NodeClass':
        this.nodeClasses.set(o.metadata.name, manifest.object as EC2NodeClass);
        break;
      case 'DaemonSet':
        this.daemonSets.set(key, manifest.object as DaemonSet);
        for (const node of this.nodes.values()) this.controllers.placeDaemonPods(node);
        break;
      case 'Deployment':
        this.deployments.set(key, manifest.object as Deployment);
        this.controllers.reconcileDeployment(key);
        break;
      case 'StatefulSet':
        this.statefulSets.set(key, manifest.object as StatefulSet);
        this.controllers.reconcileStatefulSet(key);
        break;
      case 'Job':
        // A Job of a snapshot counts the completions its status reports (its completed pods are not simulated).
        if (!this.jobs.has(key)) {
          const succeeded = Number((manifest.object as Job).status?.['succeeded'] ?? 0);
          this.jobs.set(key, { job: manifest.object as Job, succeeded: Number.isInteger(succeeded) && succeeded > 0 ? succeeded : 0, created: 0 });
        }
        this.controllers.reconcileJob(key);
        break;
      case 'PodDisruptionBudget':
        this.pdbs.set(key, manifest.object as PodDisruptionBudget);
        break;
      case 'LimitRange':
        this.limitRanges.set(key, manifest.object as LimitRange);
        break;
      case 'Pod': {
        // A bare pod has no owner (recreated after an eviction, as its maker would); a mirror (static) pod keeps its
        // Node as owner: Karpenter never evicts nor moves it, and it goes with its node (core pkg/utils/pod/scheduling.go
        // IsOwnedByNode).
        const pod = manifest.object as Pod;
        if (!this.pods.has(key)) this.createPod(pod.metadata.namespace ?? 'default', pod.metadata.name, pod as unknown as PodTemplateSpec, mirrorPodOwner(pod.metadata.ownerReferences) ?? null, null, pod.spec.nodeName);
        break;
      }
      default:
        throw new RangeError(`the simulation cannot apply kind ${manifest.kind}`);
    }
    this.requestSchedulingPass();
  }

  /**
   * Creates a pod of a snapshot that belongs to a workload, as its controller's own (bound when it names a node that
   * exists), so the workload's controller counts it and creates only the replicas still missing. Apply these before
   * the workload.
   * @param pod the pod as the snapshot holds it
   * @param owner the owner its controller gives its pods (`podOwnerOf` in workload-controllers.ts)
   */
  adoptPod(pod: Pod, owner: string): void {
    const namespace = pod.metadata.namespace ?? 'default';
    if (this.pods.has(`${namespace}/${pod.metadata.name}`)) return;
    this.createPod(namespace, pod.metadata.name, pod as unknown as PodTemplateSpec, owner, null, pod.spec.nodeName);
  }

  /** Deletes an object (and, for workloads, their pods). */
  delete(kind: string, namespace: string, name: string): void {
    const key = `${namespace}/${name}`;
    const deleteOwned = (owner: string) => {
      for (const p of [...this.pods.values()]) if (p.owner === owner || p.owner?.startsWith(`${owner}-`)) this.deletePod(p);
    };
    switch (kind) {
      case 'NodePool': {
        // Kubernetes' garbage collector deletes the objects the NodePool owns: the NodeClaim mirrors that carry an owner
        // reference to it (their finalizer holds them; the lifecycle controller terminates their NodeClaims).
        const uid = this.nodePools.get(name)?.metadata.uid;
        this.nodePools.delete(name);
        for (const [claim, owner] of this.nodeClaimMirrorOwners) {
          if (uid !== undefined && owner === uid && this.nodeClaimMirrors.has(claim) && !this.nodeClaimMirrorDeletions.has(claim)) this.nodeClaimMirrorDeletions.set(claim, this.clock.now());
        }
        break;
      }
      case 'EC2NodeClass':
        this.nodeClasses.delete(name);
        break;
      case 'Deployment':
        this.deployments.delete(key);
        for (const p of [...this.pods.values()]) if (p.namespace === namespace && p.owner?.startsWith(`ReplicaSet/${name}-`)) this.deletePod(p);
        break;
      case 'StatefulSet':
        this.statefulSets.delete(key);
        deleteOwned(`StatefulSet/${name}`);
        break;
      case 'Job':
        this.jobs.delete(key);
        deleteOwned(`Job/${name}`);
        break;
      case 'DaemonSet':
        this.daemonSets.delete(key);
        deleteOwned(`DaemonSet/${name}`);
        break;
      case 'PodDisruptionBudget':
        this.pdbs.delete(key);
        break;
      case 'LimitRange':
        this.limitRanges.delete(key);
        break;
      case 'Pod': {
        const p = this.pods.get(key);
        if (p) this.deletePod(p);
        break;
      }
      case 'Node': {
        const node = this.nodes.get(name);
        if (node) this.requestNodeDeletion(node);
        break;
      }
      case 'NodeClaim':
        // `kubectl delete nodeclaim`: the mirror's finalizer holds it; the lifecycle controller sees the request.
        if (this.nodeClaimMirrors.has(name) && !this.nodeClaimMirrorDeletions.has(name)) this.nodeClaimMirrorDeletions.set(name, this.clock.now());
        break;
      default:
        throw new RangeError(`the simulation cannot delete kind ${kind}`);
    }
    this.requestSchedulingPass();
  }

  /**
   * Whether an object a scenario's `delete` event can name exists now: what `kubectl delete` would find (a Node with a
   * deletion already requested still exists; a NodeClaim is its mirror object).
   * @param namespace ignored for cluster-scoped kinds (NodePool, EC2NodeClass, Node, NodeClaim)
   * @throws {RangeError} for a kind the simulation cannot delete
   */
  has(kind: string, namespace: string, name: string): boolean {
    const key = `${namespace}/${name}`;
    switch (kind) {
      case 'NodePool':
        return this.nodePools.has(name);
      case 'EC2NodeClass':
        return this.nodeClasses.has(name);
      case 'Deployment':
        return this.deployments.has(key);
      case 'StatefulSet':
        return this.statefulSets.has(key);
      case 'Job':
        return this.jobs.has(key);
      case 'DaemonSet':
        return this.daemonSets.has(key);
      case 'PodDisruptionBudget':
        return this.pdbs.has(key);
      case 'LimitRange':
        return this.limitRanges.has(key);
      case 'Pod':
        return this.pods.has(key);
      case 'Node':
        return this.nodes.has(name);
      case 'NodeClaim':
        return this.nodeClaimMirrors.has(name);
      default:
        throw new RangeError(`the simulation cannot delete kind ${kind}`);
    }
  }

  /** Sets a Deployment's or StatefulSet's replicas. */
  scale(kind: 'Deployment' | 'StatefulSet', namespace: string, name: string, replicas: number): void {
    const key = `${namespace}/${name}`;
    if (kind === 'Deployment') {
      const d = this.deployments.get(key);
      if (!d) return this.missingScaleTarget(kind, key);
      this.deployments.set(key, { ...d, spec: { ...d.spec, replicas } });
      this.controllers.reconcileDeployment(key);
    } else {
      const s = this.statefulSets.get(key);
      if (!s) return this.missingScaleTarget(kind, key);
      this.statefulSets.set(key, { ...s, spec: { ...s.spec, replicas } });
      this.controllers.reconcileStatefulSet(key);
    }
    this.requestSchedulingPass();
  }

  /** `kubectl scale` of an object that is gone: an error for that command, not for the whole run. */
  private missingScaleTarget(kind: string, key: string): void {
    void this.recordEvent({ type: 'Warning', reason: 'ScaleTargetNotFound', object: `${kind}/${key}`, message: `${kind} ${key} does not exist (any more); the scale event was skipped` });
  }

  // ---- nodes -------------------------------------------------------------------------------------------------
  /** The kubelet of `instance` registers its Node (NotReady, with its taints and startup taints), Ready later. */
  registerNode(instance: SimInstance, options: { ready?: boolean; createdAt?: number; name?: string } = {}): SimNode {
    const name = options.name ?? nodeNameOf(instance.instanceId, this.options.region);
    const node: SimNode = {
      name,
      providerId: `aws:///${instance.zone}/${instance.instanceId}`,
      instanceId: instance.instanceId,
      instanceType: instance.instanceType,
      zone: instance.zone,
      capacityType: instance.capacityType,
      nodeClaim: instance.nodeClaim || null,
      labels: { ...instance.labels, [LABEL_HOSTNAME]: name, [LABEL_REGION]: this.options.region },
      annotations: {},
      taints: options.ready
        ? instance.taints
        : [...instance.taints, ...instance.startupTaints, ...(this.options.registerWithUnregisteredTaint ? [{ key: UNREGISTERED_TAINT_KEY, effect: 'NoExecute' as const }] : [])],
      allocatable: instance.allocatable,
      ready: options.ready ?? false,
      ...(options.ready ? { readyAt: options.createdAt ?? this.clock.now() } : {}),
      createdAt: options.createdAt ?? this.clock.now(),
      used: {},
    };
    this.nodes.set(name, node);
    this.nodeHistory.push(node);
    this.nodesChanged();
    this.controllers.placeDaemonPods(node);
    if (!node.ready) {
      this.clock.after(this.options.readyDelayMs ?? 15_000, `node ${name} ready`, () => {
        if (!this.nodes.has(name)) return;
        node.ready = true;
        node.readyAt = this.clock.now();
        this.nodesChanged();
        const startup = new Set(instance.startupTaints.map((t) => t.key));
        node.taints = node.taints.filter((t) => !startup.has(t.key));
        this.hooks.onNodeEvent?.(node, 'ready');
        this.requestSchedulingPass();
      });
    }
    this.hooks.onNodeEvent?.(node, 'registered');
    this.requestSchedulingPass();
    return node;
  }

  /**
   * Removes a node (its deletion completes); its pods are deleted (pod garbage collection) and their controllers
   * replace them.
   */
  removeNode(node: SimNode): void {
    if (this.nodes.get(node.name) !== node) return;
    node.deletedAt = this.clock.now();
    this.nodes.delete(node.name);
    this.nodesChanged();
    for (const p of this.podsOn(node.name)) this.deletePod(p);
    this.lastPodEvent.delete(node.name);
    this.hooks.onNodeEvent?.(node, 'deleted');
  }

  // ---- pods --------------------------------------------------------------------------------------------------
  /**
   * `prefix` plus a random suffix no live pod of `namespace` has: the API server refuses a taken name and the
   * controller (ReplicaSet, Job, DaemonSet) retries with a new one. The 5-character suffixes collide often enough at
   * thousands of replicas that keeping both would silently drop a pod.
   */
  private generateName(namespace: string, prefix: string): string {
    for (;;) {
      const name = `${prefix}${this.options.ids()}`;
      if (!this.pods.has(`${namespace}/${name}`)) return name;
    }
  }

  private createPod(namespace: string, name: string, template: PodTemplateSpec, owner: string | null, runFor: number | null, nodeName?: string): SimPod {
    const spec = this.admit(namespace, template.spec as PodSpecLike);
    const now = this.clock.now();
    const pod: SimPod = {
      namespace,
      name,
      uid: `uid-${this.uid++}`,
      resourceVersion: String(this.rv++),
      labels: template.metadata.labels ?? {},
      annotations: template.metadata.annotations ?? {},
      spec,
      phase: 'Pending',
      unschedulable: false,
      owner,
      createdAt: now,
      requests: podEffectiveRequests(spec),
      evictions: 0,
      runForSeconds: runFor,
    };
    this.pods.set(`${namespace}/${name}`, pod);
    this.podHistory.push(pod);
    this.podsChanged();
    if (nodeName) {
      const node = this.nodes.get(nodeName);
      if (node) this.bind(pod, node);
    }
    this.requestSchedulingPass();
    return pod;
  }

  /** LimitRange admission: containers without cpu/memory requests get the namespace's `defaultRequest` (or `default`). */
  private admit(namespace: string, spec: PodSpecLike): PodSpecLike {
    const defaults: Record<string, string | number> = {};
    for (const lr of this.limitRanges.values()) {
      if ((lr.metadata.namespace ?? 'default') !== namespace) continue;
      for (const item of lr.spec.limits) {
        if (item.type !== 'Container') continue;
        Object.assign(defaults, item.default ?? {}, item.defaultRequest ?? {});
      }
    }
    if (Object.keys(defaults).length === 0) return spec;
    const withDefaults = (c: PodSpecLike['containers'][number]) => ({
      ...c,
      resources: { ...(c.resources ?? {}), requests: { ...defaults, ...(c.resources?.limits ?? {}), ...(c.resources?.requests ?? {}) } },
    });
    return { ...spec, containers: spec.containers.map(withDefaults), ...(spec.initContainers ? { initContainers: spec.initContainers.map(withDefaults) } : {}) };
  }

  /** Deletes a pod (frees its node) and lets its controller replace it. */
  deletePod(pod: SimPod): void {
    const key = `${pod.namespace}/${pod.name}`;
    if (this.pods.get(key) !== pod) return;
    this.pods.delete(key);
    pod.deletedAt = this.clock.now();
    this.podsChanged();
    this.unbind(pod);
    this.controllers.reconcileOwner(pod);
    this.requestSchedulingPass();
  }

  /** Removes a pod a workload controller scaled down: frees its node; its controller is not reconciled again. */
  private dropPod(pod: SimPod): void {
    this.pods.delete(`${pod.namespace}/${pod.name}`);
    pod.deletedAt = this.clock.now();
    this.podsChanged();
    this.unbind(pod);
  }

  private complete(pod: SimPod): void {
    const key = `${pod.namespace}/${pod.name}`;
    if (this.pods.get(key) !== pod) return;
    pod.phase = 'Succeeded';
    this.pods.delete(key);
    pod.deletedAt = this.clock.now();
    this.podsChanged();
    this.unbind(pod);
    const job = pod.owner?.startsWith('Job/') ? this.jobs.get(`${pod.namespace}/${pod.owner.slice(4)}`) : undefined;
    if (job) job.succeeded++;
    this.controllers.reconcileOwner(pod);
    this.requestSchedulingPass();
  }

  private bind(pod: SimPod, node: SimNode): void {
    pod.nodeName = node.name;
    let onNode = this.boundPods.get(node.name);
    if (!onNode) this.boundPods.set(node.name, (onNode = new Set()));
    onNode.add(pod);
    if ((pod.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.length ?? 0) > 0) this.boundAntiAffinity.add(pod);
    pod.phase = 'Running';
    pod.unschedulable = false;
    pod.scheduledAt = this.clock.now();
    pod.resourceVersion = String(this.rv++);
    this.podsChanged();
    node.used = add(node.used, pod.requests);
    this.nodesChanged();
    this.notePodEvent(pod, node.name);
    this.hooks.onBind?.(pod, node);
    if (pod.runForSeconds !== null) this.clock.after(pod.runForSeconds * 1000, `pod ${pod.name} completes`, () => this.complete(pod));
  }

  private unbind(pod: SimPod): void {
    if (pod.nodeName !== undefined) {
      const onNode = this.boundPods.get(pod.nodeName);
      if (onNode?.delete(pod) && onNode.size === 0) this.boundPods.delete(pod.nodeName);
      this.boundAntiAffinity.delete(pod);
    }
    const node = pod.nodeName ? this.nodes.get(pod.nodeName) : undefined;
    if (!node) return;
    node.used = subtract(node.used, pod.requests);
    this.nodesChanged();
    this.notePodEvent(pod, node.name);
  }

  /**
   * A live pod changed, or one was created or went: {@link listPods} copies the pods again. Every write to a pod
   * (all of them in this class: creation, bind, the Unschedulable condition, annotations, deletion, completion) calls
   * this.
   */
  private podsChanged(): void {
    this.podVersion++;
  }

  /**
   * A live node changed, or one registered or went: {@link listNodes} copies the nodes again. Every write to a node in
   * this class calls it; code that writes a node's fields itself (the engine seeding a scenario's nodes) must too.
   */
  nodesChanged(): void {
    this.nodeVersion++;
  }

  /** Karpenter's podevents triggers (bound, terminal, terminating), DaemonSet pods excepted. */
  private notePodEvent(pod: SimPod, nodeName: string): void {
    if (pod.owner?.startsWith('DaemonSet/')) return;
    this.lastPodEvent.set(nodeName, this.clock.now());
  }

  // ---- kube-scheduler ----------------------------------------------------------------------------------------
  /** Runs a scheduling pass at the current instant (coalesced). */
  requestSchedulingPass(): void {
    if (this.passScheduled) return;
    this.passScheduled = true;
    this.clock.after(0, 'kube-scheduler pass', () => {
      this.passScheduled = false;
      this.schedulePending();
    });
  }

  /** Binds every pending pod that fits a Ready node; marks the rest Unschedulable. */
  schedulePending(): void {
    const pending = [...this.pods.values()]
      .filter((p) => p.phase === 'Pending' && !p.nodeName)
      .sort((a, b) => (b.spec.priority ?? 0) - (a.spec.priority ?? 0) || a.createdAt - b.createdAt || a.name.localeCompare(b.name));
    if (pending.length === 0) return;
    const cycle = new SchedulingCycle<SimNode, SimPod>(this.nodes.values(), this.pods.values());
    for (const pod of pending) {
      const node = cycle.bestNode(pod);
      if (node) {
        this.bind(pod, node);
        cycle.assume(pod, node);
        continue;
      }
      // kube-scheduler's handleSchedulingFailure → updatePod: the PodScheduled condition is patched (a new
      // resourceVersion, a watch event the relay forwards) only when it changes — the first failure, or a retry whose
      // message differs (a node joined or left, or a node's reason changed). An unchanged retry writes nothing.
      this.retryLater(pod);
      const message = cycle.unschedulableMessage(pod);
      if (pod.unschedulable && pod.schedulingMessage === message) continue;
      pod.unschedulable = true;
      pod.schedulingMessage = message;
      pod.firstPendingAt ??= this.clock.now();
      pod.resourceVersion = String(this.rv++);
      this.podsChanged();
      this.hooks.onUnschedulable?.(pod);
    }
  }

  /**
   * Queues `pod` for kube-scheduler's periodic flush of unschedulable pods: every 30 s, pods unschedulable for
   * 5 minutes are retried, all in one scheduling pass (`flushUnschedulablePodsLeftover`). The retry reports the pod
   * again only if its message changed, as any retry does.
   */
  private retryLater(pod: SimPod): void {
    if (this.unschedulableSince.has(pod)) return;
    this.unschedulableSince.set(pod, this.clock.now());
    if (this.flushArmed) return;
    this.flushArmed = true;
    this.clock.after(UNSCHEDULABLE_FLUSH_MS, 'kube-scheduler flushes unschedulable pods', () => this.flushUnschedulable());
  }

  private flushUnschedulable(): void {
    this.flushArmed = false;
    const now = this.clock.now();
    let due = 0;
    for (const [pod, since] of this.unschedulableSince) {
      if (this.pods.get(`${pod.namespace}/${pod.name}`) !== pod || pod.nodeName) {
        this.unschedulableSince.delete(pod);
      } else if (now - since >= UNSCHEDULABLE_RETRY_MS) {
        this.unschedulableSince.delete(pod);
        due++;
      }
    }
    if (due > 0) this.schedulePending();
    if (this.unschedulableSince.size > 0 && !this.flushArmed) {
      this.flushArmed = true;
      this.clock.after(UNSCHEDULABLE_FLUSH_MS, 'kube-scheduler flushes unschedulable pods', () => this.flushUnschedulable());
    }
  }

  private readonly unschedulableSince = new Map<SimPod, number>();
  private flushArmed = false;

  /**
   * The live pods bound to the node named `nodeName`, in creation order — the order `pods` lists them in (a pod's uid
   * number grows with each creation, and a recreated pod is a new entry at the end of `pods`), so a loop over these
   * does what the same loop over every pod filtered by node did, without reading every pod.
   */
  podsOn(nodeName: string): SimPod[] {
    const onNode = this.boundPods.get(nodeName);
    return onNode ? [...onNode].sort((a, b) => uidSeq(a) - uidSeq(b)) : [];
  }

  /** Whether any live bound pod has a required pod anti-affinity term (it constrains where other pods may go). */
  hasBoundRequiredAntiAffinity(): boolean {
    return this.boundAntiAffinity.size > 0;
  }

  /** NodePool a node belongs to (its `karpenter.sh/nodepool` label), if any. */
  nodePoolOf(node: SimNode): string | undefined {
    return node.labels[LABEL_NODEPOOL];
  }
}

/** True when a toleration keeps the pod on a NotReady node indefinitely (no `tolerationSeconds`). */
function toleratesNotReady(tolerations: readonly Toleration[]): boolean {
  return tolerations.some(
    (t) =>
      (t.effect === undefined || t.effect === 'NoExecute') &&
      ((t.operator === 'Exists' && (t.key === undefined || t.key === NOT_READY_TAINT_KEY)) || t.key === NOT_READY_TAINT_KEY) &&
      t.tolerationSeconds === undefined,
  );
}

/** The creation number in a simulated pod's uid (`uid-<n>`). */
function uidSeq(pod: SimPod): number {
  return Number(pod.uid.slice(4));
}

/** EC2-style private DNS name for an instance, deterministic from its id. */
export function nodeNameOf(instanceId: string, region: string): string {
  const h = fnv1a(instanceId);
  return `ip-10-${(h >>> 16) & 0xff}-${(h >>> 8) & 0xff}-${h & 0xff}.${region}.compute.internal`;
}

/** A JSON merge patch (RFC 7386) of a string map: `null` deletes a key, any other value sets it. Returns a new map. */
function mergePatch(current: Readonly<Record<string, string>> | undefined, patch: Readonly<Record<string, string | null>>): Record<string, string> {
  const out: Record<string, string> = { ...current };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}
