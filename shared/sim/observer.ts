/**
 * The independent observer: watches the simulated cluster and simulated EC2 and counts contract violations
 * without using the code under test (its placement checks are the independent checker's, `placement-check.ts`,
 * written from the Kubernetes rules, not from Skiff's scheduling code).
 *
 * Counted now: `placement` — a pod bound to a node that breaks one of its scheduling constraints (node selector and
 * required node affinity, NoSchedule/NoExecute taints, resources, host ports, required pod affinity and
 * anti-affinity, DoNotSchedule topology spread), and a launch whose nominated pods could not all run on the
 * instance the solver launched for them ({@link Observer.onNodeClaimLaunched}); `limits` (a NodePool's running
 * instances, less those marked for deletion as Karpenter counts them, exceeding its cpu/memory/nodes limits at a
 * launch), `duplicateLaunches` (a second instance for one
 * NodeClaim, or an instance launched for a pod that another live launch already covered), `leakedInstances`
 * (running at the end with no live NodeClaim record, for longer than garbage collection takes: {@link LEAK_GRACE_MS}), and for disruption — watching the calls the handlers make to
 * the Kubernetes API and EC2, with its own reading of the rules — `budget` (a node of a NodePool tainted
 * `karpenter.sh/disrupted` for a budgeted reason while the NodePool's disrupting and NotReady nodes, this one
 * included, exceed what its active budgets allow), `pdb` (an eviction of a healthy pod that takes a PDB below its
 * desired healthy count, or an instance terminated by a disruption while pods a PDB still protects run on it, before
 * its terminationGracePeriod ran out) and `doNotDisrupt` (a pod with an active `karpenter.sh/do-not-disrupt` evicted,
 * or terminated with its node, by a voluntary disruption: Empty, Underutilized, Drifted; a pod deleted outright before
 * its node's terminationGracePeriod left it less than its own grace period counts as `pdb` or `doNotDisrupt` for what
 * it bypassed), `churn` — a replace loop:
 * a NodeClaim disrupted as Drifted whose replacement is itself drifted (its node's labels do not satisfy the NodePool's
 * requirements as applied, and neither the NodePool's template nor its EC2NodeClass changed since the disruption
 * started), a Drifted replacement replaced as Drifted again with no change in between of the NodePool's template or
 * EC2NodeClass, or a consolidation undone: a replacement consolidated again on its own, with neither the spec nor the
 * workload (the live pods per owner) changed since it was launched, into an instance that costs at least what the
 * nodes it replaced cost (the two moves together saved nothing). A replacement consolidated again into something
 * cheaper is convergence, not a loop. Drift is judged from the specs as applied and the node's labels, prices from the
 * launched instances, never by asking the controller.
 * A pod evicted by an Empty disruption counts as `budget` too: its node was not empty, so it was disrupted under a
 * budget and a decision that do not cover a node with pods. A voluntary disruption that evicts from or terminates a
 * node it never tainted is checked against the budget at that moment ({@link Observer.onUntaintedDisruption}).
 * And `evictionLoops`: a pod evicted by a drain from a node it was bound to after the node was tainted
 * `karpenter.sh/disrupted` (a turn of an evict → recreate → bind-back loop that keeps the drain from ending).
 */
import { parseDuration } from '../core/api/duration.js';
import { ownValue } from '../core/api/labels.js';
import { labelSelectorMatches } from '../core/api/object-meta.js';
import { scaledValue, type PodDisruptionBudget } from '../core/api/pdb.js';
import type { Budget } from '../core/api/nodepool.js';
import { budgetAllowance } from '../core/disruption/budgets.js';
import type { InstanceTypeInfo } from '../core/instancetypes/instance-type.js';
import { parseQuantity } from '../core/resources/quantity.js';
import type { NodeClaim } from '../core/api/nodeclaim.js';
import {
  hostPortProblem,
  interPodAffinityProblem,
  nodeAffinityProblem,
  nodeSelectorTermMatches,
  placementProblem,
  resourcesProblem,
  taintProblem,
  type MaybeBoundPod,
  type PlacementInput,
  type PlacementNode,
  type PlacementPod,
} from './placement-check.js';
import type { SimInstance } from './simulated-ec2.js';

/** Violation counters, as the Result contract names them. */
export interface ViolationCounts {
  budget: number;
  pdb: number;
  doNotDisrupt: number;
  limits: number;
  duplicateLaunches: number;
  leakedInstances: number;
  placement: number;
  /** Replace loops: see the module doc. */
  churn: number;
  /**
   * Turns of an eviction loop: a pod evicted by a drain from a node it was bound to after that node's drain began
   * (after the node was tainted `karpenter.sh/disrupted`). Only a pod that tolerates the taint can land there; evicting
   * it only lets its controller's replacement land there again, and the drain never ends.
   */
  evictionLoops: number;
}

/** A human-readable record of each violation, for debugging and tests. */
export interface ViolationRecord {
  readonly kind: keyof ViolationCounts;
  /** Epoch ms. */
  readonly at: number;
  readonly message: string;
}

/** One launch as {@link Observer.onNodeClaimLaunched} checks it. */
export interface NodeClaimLaunch {
  readonly nodeClaim: string;
  /**
   * The node the instance will register as: the instance's labels (with its hostname and region), the NodePool's
   * taints only (startup taints are removed before pods schedule) and the instance type's allocatable.
   */
  readonly node: PlacementNode;
  /** The pods nominated to the NodeClaim that are still pending (bound or deleted ones are left out). */
  readonly nominated: readonly PlacementPod[];
  /** One pod template per DaemonSet (namespace, name and labels of the DaemonSet); the observer decides which land. */
  readonly daemonSets: readonly PlacementPod[];
}

/**
 * How long an instance may run without a live NodeClaim before it counts as leaked. Garbage collection terminates an
 * orphan older than 30 s (aws `pkg/controllers/nodeclaim/garbagecollection/controller.go`) at its next pass, once a
 * minute, so 30 s + four passes (three of which a fault run may lose) = 4.5 minutes. An instance terminated by
 * design just after the run's last pass is not a leak. (The observer states the period itself rather than reading the
 * controller's constant: it checks the controller.)
 */
export const LEAK_GRACE_MS = 30 * 1000 + 4 * 60 * 1000;

/** Counts violations as the simulation runs. */
export class Observer {
  readonly counts: ViolationCounts = { budget: 0, pdb: 0, doNotDisrupt: 0, limits: 0, duplicateLaunches: 0, leakedInstances: 0, placement: 0, churn: 0, evictionLoops: 0 };
  /** Node name → when it was last tainted `karpenter.sh/disrupted` (epoch ms): the start of its drain. */
  private readonly drainStartedAt = new Map<string, number>();
  readonly records: ViolationRecord[] = [];
  private readonly instancesByClaim = new Map<string, number>();

  /**
   * @param catalog instance types by name (vCPU and memory for NodePool limits)
   * @param now the virtual clock, epoch ms
   * @param onViolation called with each violation as it is counted (for debugging and tests)
   */
  constructor(
    private readonly catalog: ReadonlyMap<string, InstanceTypeInfo>,
    private readonly now: () => number,
    private readonly onViolation?: (record: ViolationRecord) => void,
  ) {}

  /**
   * A pod was bound to a node: check the placement against every constraint (see `placementProblem`).
   * @param livePods every live pod (bound ones carry `nodeName`; `pod` itself is skipped)
   * @param liveNodes every live node (topology domains); defaults to just `node`
   * @param local the pods bound to `node` and whether a bound pod has required anti-affinity, from an index the caller
   *   keeps, so a bind reads every pod only when topology can matter (see `PlacementInput.local`); same verdict
   */
  onBind(
    pod: PlacementPod,
    node: PlacementNode,
    livePods: () => Iterable<MaybeBoundPod>,
    liveNodes: () => Iterable<PlacementNode> = () => [node],
    local?: () => PlacementInput['local'],
  ): void {
    const problem = placementProblem({ pod, node, nodes: liveNodes(), pods: livePods(), ...(local ? { local: local() } : {}) });
    if (problem) this.violate('placement', `${pod.namespace}/${pod.name} on ${node.name}: ${problem}`);
  }

  /**
   * The solver's decision, checked when EC2 launches an instance for a NodeClaim: every nominated pod must match
   * the node's labels (node selector, required node affinity) and tolerate the NodePool's taints, and all of them
   * together must fit the instance type's allocatable beside the DaemonSet pods that would land there (those whose
   * node affinity matches and that tolerate the taints), without a host-port clash and without breaking a required
   * anti-affinity term among themselves. Each breach counts once as a `placement` violation.
   */
  onNodeClaimLaunched(launch: NodeClaimLaunch): void {
    const { node } = launch;
    const where = `NodeClaim ${launch.nodeClaim} (${node.labels['node.kubernetes.io/instance-type'] ?? 'instance'})`;
    const daemons = launch.daemonSets.filter((d) => !nodeAffinityProblem(d, node) && !taintProblem(d, node));
    const placed: MaybeBoundPod[] = daemons.map((d) => ({ ...d, nodeName: node.name }));
    for (const pod of launch.nominated) {
      const nominatedSoFar = placed.slice(daemons.length);
      const problem =
        nodeAffinityProblem(pod, node) ??
        taintProblem(pod, node) ??
        resourcesProblem(pod, node, placed) ??
        hostPortProblem(pod, placed) ??
        interPodAffinityProblem(withoutPodAffinity(pod), node, [node], nominatedSoFar.map(withoutPodAffinity));
      if (problem) this.violate('placement', `${where} was launched for ${pod.namespace}/${pod.name}, which cannot run there: ${problem}`);
      placed.push({ ...pod, nodeName: node.name });
    }
  }

  /**
   * An instance was launched: check duplicates and the NodePool's limits. The NodePool's usage is what Karpenter v1.14
   * counts when it creates a NodeClaim: the capacity (vCPU, memory, extended resources, and one node each) of its
   * running instances whose NodeClaim is not marked for deletion (core `pkg/controllers/state/cluster.go`
   * `updateNodePoolResources` leaves out a node `MarkedForDeletion`; `provisioner.go` `Schedule` subtracts only
   * `nodes.Active()`): a replacement — of a consolidated, drifted, expired or interrupted node — may overlap the node it
   * replaces, while every node not being deleted counts.
   * @param running every instance EC2 holds (terminated ones are skipped)
   * @param limitsOf the NodePool's `spec.limits` as applied, undefined when it has none
   * @param markedForDeletion whether an instance's NodeClaim is marked for deletion (a disruption started on it, or it
   *   is being deleted); a voluntary replace seen starting ({@link onReplaceStart}) counts as marked too
   */
  onLaunch(
    instance: SimInstance,
    running: readonly SimInstance[],
    limitsOf: (nodePool: string) => Readonly<Record<string, string | number>> | undefined,
    markedForDeletion: (instance: SimInstance) => boolean = () => false,
  ): void {
    const claim = instance.tags['karpenter.sh/nodeclaim'];
    if (claim) {
      const n = (this.instancesByClaim.get(claim) ?? 0) + 1;
      this.instancesByClaim.set(claim, n);
      if (n > 1) this.violate('duplicateLaunches', `second instance ${instance.instanceId} for NodeClaim ${claim}`);
      this.launchedPrice.set(claim, instance.price);
      this.checkUndone(claim);
    }
    const nodePool = instance.tags['karpenter.sh/nodepool'];
    const limits = nodePool ? limitsOf(nodePool) : undefined;
    if (!nodePool || !limits) return;
    const mine = running.filter(
      (i) => i.tags['karpenter.sh/nodepool'] === nodePool && i.state !== 'terminated' && (i === instance || (!this.started.has(i.tags['karpenter.sh/nodeclaim'] ?? '') && !markedForDeletion(i))),
    );
    const usage: Record<string, number> = { nodes: mine.length, cpu: 0, memory: 0 };
    for (const i of mine) {
      const info = this.catalog.get(i.instanceType);
      usage.cpu! += info?.vcpu ?? 0;
      usage.memory! += (info?.memoryMiB ?? 0) * 2 ** 20;
      for (const [k, v] of Object.entries(info?.extendedResources ?? {})) usage[k] = (usage[k] ?? 0) + v;
    }
    for (const [k, limit] of Object.entries(limits)) {
      const value = parseQuantity(limit);
      if ((usage[k] ?? 0) > value + 1e-9) this.violate('limits', `NodePool ${nodePool} uses ${k}=${usage[k]} over its limit ${limit} after launching ${instance.instanceId}`);
    }
  }

  /** NodeClaim → the pods still pending and nominated to it when its instance launched (what drove the launch). */
  private readonly launchedFor = new Map<string, readonly string[]>();

  /**
   * The pods (`ns/name`) a NodeClaim's launch was for: those nominated to it and still pending at the launch. Pods
   * nominated to it later (it had room when they turned pending) did not drive the launch, so {@link finish} does
   * not count them as duplicates. Without this note, `finish` falls back to the record's `nominatedPods`.
   */
  noteLaunchedFor(nodeClaim: string, pods: readonly string[]): void {
    this.launchedFor.set(nodeClaim, [...pods]);
  }

  /** A pod was nominated to two live launches: the second launch duplicated the first. */
  onDuplicateNomination(pod: string, claims: readonly string[]): void {
    this.violate('duplicateLaunches', `pod ${pod} drove launches of ${claims.join(' and ')}`);
  }

  /**
   * At the end: instances still running with no live NodeClaim, and pods that drove a second launch while the
   * first launch for them was still coming up (its node not yet Ready, and the NodeClaim not failed or deleted).
   * @param readyAt instance id → when its node first turned Ready (epoch ms), from the cluster's own record
   */
  finish(instances: readonly SimInstance[], claims: readonly NodeClaim[], readyAt: ReadonlyMap<string, number>): void {
    const live = new Set(claims.filter((c) => c.state !== 'Deleted' && c.state !== 'Failed').map((c) => c.instanceId));
    const gone = new Map(claims.filter((c) => c.instanceId && !live.has(c.instanceId)).map((c) => [c.instanceId!, c.deletedAt ? Date.parse(c.deletedAt) : undefined]));
    const end = this.now();
    for (const i of instances) {
      if (i.state === 'terminated' || !i.tags['karpenter.sh/nodeclaim'] || live.has(i.instanceId)) continue;
      // Orphaned since its NodeClaim was deleted (or since launch when no record says when): garbage collection
      // terminates it within LEAK_GRACE_MS, so only an orphan older than that at the end is a leak.
      const orphanedAt = Math.max(i.launchedAt, gone.get(i.instanceId) ?? i.launchedAt);
      if (end - orphanedAt > LEAK_GRACE_MS) this.violate('leakedInstances', `instance ${i.instanceId} (${i.instanceType}) has been running with no NodeClaim for ${Math.round((end - orphanedAt) / 1000)} s`);
    }
    const launched = claims.filter((c) => c.instanceId && c.launchedAt).sort((a, b) => Date.parse(a.launchedAt!) - Date.parse(b.launchedAt!));
    const byPod = new Map<string, NodeClaim[]>();
    for (const c of launched) for (const p of this.launchedFor.get(c.name) ?? c.nominatedPods) byPod.set(p, [...(byPod.get(p) ?? []), c]);
    for (const [pod, list] of byPod) {
      for (let i = 1; i < list.length; i++) {
        const later = list[i]!;
        const at = Date.parse(later.launchedAt!);
        const stillComing = list.slice(0, i).find((earlier) => {
          const ready = readyAt.get(earlier.instanceId!) ?? Number.POSITIVE_INFINITY;
          const gone = earlier.deletedAt ? Date.parse(earlier.deletedAt) : Number.POSITIVE_INFINITY;
          return at < ready && at < gone;
        });
        if (stillComing) this.onDuplicateNomination(pod, [stillComing.name, later.name]);
      }
    }
  }

  /**
   * A handler evicted a pod (the Eviction API answered `evicted`); `world` is the cluster just before the eviction.
   * @param reason the disruption reason on the NodeClaim of the pod's node, if it is being disrupted
   */
  onEviction(pod: ObservedPod, reason: string | undefined, world: ObservedWorld): void {
    const drainStart = pod.nodeName !== undefined ? this.drainStartedAt.get(pod.nodeName) : undefined;
    if (drainStart !== undefined && pod.scheduledAt !== undefined && pod.scheduledAt > drainStart) {
      this.violate(
        'evictionLoops',
        `pod ${pod.namespace}/${pod.name} was evicted from ${pod.nodeName}, where it was bound at ${new Date(pod.scheduledAt).toISOString()}, after the node's drain began at ${new Date(drainStart).toISOString()}`,
      );
    }
    if (VOLUNTARY.has(reason ?? '') && doNotDisruptActive(pod, this.now())) {
      this.violate('doNotDisrupt', `pod ${pod.namespace}/${pod.name} (karpenter.sh/do-not-disrupt: ${pod.annotations[DO_NOT_DISRUPT]}) was evicted by a ${reason} disruption`);
    }
    if (reason === 'Empty') {
      // An Empty disruption has nothing to evict: a pod evicted by one was on a node that was not empty, disrupted under
      // the Empty budget and without the consolidation decision (and the Underutilized budget) a node with pods needs.
      this.violate('budget', `pod ${pod.namespace}/${pod.name} was evicted from ${pod.nodeName ?? 'its node'} by an Empty disruption: the node was not empty, and the Empty budget does not cover disrupting a node with pods`);
    }
    if (!isHealthy(pod, world)) return;
    for (const pdb of world.pdbs) {
      const { healthy, desired } = pdbHealth(pdb, world);
      if (selects(pdb, pod) && healthy - 1 < desired) {
        this.violate('pdb', `evicting ${pod.namespace}/${pod.name} took PodDisruptionBudget ${pdb.metadata.namespace ?? 'default'}/${pdb.metadata.name} to ${healthy - 1} healthy pods, below ${desired}`);
      }
    }
  }

  /**
   * A drain deleted a pod directly (no Eviction API: neither PDBs nor do-not-disrupt were asked). That is allowed only
   * from `allowedFromMs` on — the node's terminationGracePeriod deadline minus the pod's terminationGracePeriodSeconds
   * (Karpenter's terminator, `needsForceDelete`) — and never without a deadline (`allowedFromMs` Infinity). Earlier, a
   * pod protected by do-not-disrupt counts a `doNotDisrupt` violation, and a healthy pod whose PDB it takes below its
   * desired count a `pdb` one.
   */
  onPodDeletion(pod: ObservedPod, reason: string | undefined, world: ObservedWorld, allowedFromMs: number): void {
    if (this.now() >= allowedFromMs) return;
    const early = Number.isFinite(allowedFromMs) ? `${Math.ceil((allowedFromMs - this.now()) / 1000)} s before its terminationGracePeriod allowed it` : 'with no terminationGracePeriod to allow it';
    if (doNotDisruptActive(pod, this.now())) {
      this.violate('doNotDisrupt', `pod ${pod.namespace}/${pod.name} (karpenter.sh/do-not-disrupt: ${pod.annotations[DO_NOT_DISRUPT]}) was deleted by a ${reason ?? 'drain'} ${early}`);
    }
    if (!isHealthy(pod, world)) return;
    for (const pdb of world.pdbs) {
      const { healthy, desired } = pdbHealth(pdb, world);
      if (selects(pdb, pod) && healthy - 1 < desired) {
        this.violate('pdb', `deleting ${pod.namespace}/${pod.name} ${early} took PodDisruptionBudget ${pdb.metadata.namespace ?? 'default'}/${pdb.metadata.name} to ${healthy - 1} healthy pods, below ${desired}`);
      }
    }
  }

  /**
   * A disruption terminated its NodeClaim's instance; `pods` are the pods still bound to its node (DaemonSet pods
   * excluded) just before.
   * @param graceExpired true when the NodeClaim's terminationGracePeriod had run out (PDBs and do-not-disrupt yield)
   */
  onDisruptionTermination(nodeClaim: string, reason: string, pods: readonly ObservedPod[], world: ObservedWorld, graceExpired: boolean): void {
    if (graceExpired) return;
    for (const pod of pods) {
      if (VOLUNTARY.has(reason) && doNotDisruptActive(pod, this.now())) {
        this.violate('doNotDisrupt', `NodeClaim ${nodeClaim} (${reason}) was terminated with pod ${pod.namespace}/${pod.name} (karpenter.sh/do-not-disrupt) on it`);
      }
    }
    for (const pdb of world.pdbs) {
      const mine = pods.filter((p) => selects(pdb, p) && isHealthy(p, world));
      if (mine.length === 0) continue;
      const { healthy, desired } = pdbHealth(pdb, world);
      if (healthy - mine.length < desired) {
        this.violate('pdb', `NodeClaim ${nodeClaim} (${reason}) was terminated with ${mine.length} pod(s) of PodDisruptionBudget ${pdb.metadata.namespace ?? 'default'}/${pdb.metadata.name} on it (${healthy} healthy, ${desired} required)`);
      }
    }
  }

  /**
   * A handler tainted a node `karpenter.sh/disrupted`: the start of its disruption. For a budgeted reason, the
   * NodePool's nodes already tainted, plus its other NotReady nodes, plus this one must stay within the smallest
   * active budget for the reason.
   * @param nodePool the node's NodePool with its budgets
   * @param poolNodes the NodePool's initialized nodes before the taint (this one included)
   */
  /**
   * A handler added `karpenter.sh/disrupted` to a node that did not carry it: its drain begins now (every reason, a
   * Node deletion included). A pod bound to it later and then evicted from it is an eviction loop's turn.
   */
  onDrainTaint(node: string): void {
    this.drainStartedAt.set(node, this.now());
  }

  onDisruptionStart(node: string, reason: string, nodePool: { readonly name: string; readonly budgets: readonly Budget[] }, poolNodes: readonly ObservedNode[]): void {
    if (!BUDGETED.has(reason)) return;
    const others = poolNodes.filter((n) => n.name !== node);
    const busy = others.filter((n) => n.disrupted || !n.ready || this.untaintedStarts.has(n.name)).length + 1;
    const { allowed } = budgetAllowance(nodePool.budgets, reason as 'Empty' | 'Underutilized' | 'Drifted', new Date(this.now()), poolNodes.length, 0);
    if (busy > allowed) {
      this.violate('budget', `NodePool ${nodePool.name}: starting a ${reason} disruption of ${node} makes ${busy} nodes disrupted or NotReady out of ${poolNodes.length}, over the ${allowed} its budgets allow now`);
    }
  }

  /** Nodes a voluntary disruption evicted from or terminated without tainting them first (see {@link onUntaintedDisruption}). */
  private readonly untaintedStarts = new Set<string>();

  /**
   * A voluntary disruption evicted a pod from, or terminated the instance of, a node it had not tainted
   * `karpenter.sh/disrupted` (a start that skipped, or lost, its taint): the observer sees the disruption start here,
   * checks it against the budget as {@link onDisruptionStart} does (once per node), and counts the node as disrupted
   * in later budget checks. Karpenter always taints first (core `disruption/queue.go StartCommand`), so without this a
   * disruption that never tainted would escape the budget count altogether.
   * @param poolNodes the NodePool's initialized nodes (this one included)
   */
  onUntaintedDisruption(node: string, reason: string, nodePool: { readonly name: string; readonly budgets: readonly Budget[] }, poolNodes: readonly ObservedNode[]): void {
    if (!BUDGETED.has(reason) || this.untaintedStarts.has(node)) return;
    this.onDisruptionStart(node, reason, nodePool, poolNodes);
    this.untaintedStarts.add(node);
  }

  /** Replacement NodeClaim → the disruption that launched it, as seen when that disruption started. */
  private readonly replacedBy = new Map<string, ObservedReplaceStart>();
  /** Disrupted NodeClaim → its disruption as seen when it started. */
  private readonly started = new Map<string, ObservedReplaceStart>();
  /** NodeClaims already counted as churn (each loop step counts once). */
  private readonly churned = new Set<string>();
  /** NodeClaim → the hourly price (USD) of the instance launched for it. */
  private readonly launchedPrice = new Map<string, number>();
  /** Replacement NodeClaim → the NodeClaims whose disruptions list it (the nodes it replaces). */
  private readonly replaces = new Map<string, string[]>();
  /**
   * Replacement C → the consolidation replacement B it replaces, when B is itself consolidated with neither the spec
   * nor the workload changed since B was launched: C undoes the move that launched B if it costs at least what B
   * replaced.
   */
  private readonly undoCandidates = new Map<string, string>();

  /**
   * A voluntary disruption started (its node tainted `karpenter.sh/disrupted`). When the NodeClaim is itself a
   * replacement launched by a disruption for the same reason (Drifted or Underutilized), with the same NodePool
   * template and EC2NodeClass as applied then (and, for Underutilized, the same workload), it is a replace loop: one
   * `churn` violation.
   */
  onReplaceStart(start: ObservedReplaceStart): void {
    if (!LOOPING.has(start.reason)) return;
    this.started.set(start.nodeClaim, start);
    const parent = this.replacedBy.get(start.nodeClaim);
    const unchanged = parent !== undefined && parent.reason === start.reason && parent.spec === start.spec;
    if (unchanged && start.reason === 'Drifted') {
      this.churn(start.nodeClaim, `NodeClaim ${start.nodeClaim}, launched to replace ${parent.nodeClaim} (${parent.reason}), is itself being replaced for ${start.reason} with no change to NodePool ${start.nodePool}'s template or its EC2NodeClass since`);
    }
    for (const r of start.replacements) {
      this.replacedBy.set(r, start);
      this.replaces.set(r, [...(this.replaces.get(r) ?? []), start.nodeClaim]);
      if (unchanged && start.reason === 'Underutilized' && parent.workload === start.workload) {
        this.undoCandidates.set(r, start.nodeClaim);
        this.checkUndone(r);
      }
    }
  }

  /**
   * `claim` (C) replaces a consolidation replacement B alone, with the spec and workload unchanged since B was
   * launched: churn when C's instance costs at least what the nodes B replaced cost together — the two moves saved
   * nothing. Runs when C is known to replace B and when C's instance launches, whichever comes last.
   */
  private checkUndone(claim: string): void {
    const b = this.undoCandidates.get(claim);
    const price = this.launchedPrice.get(claim);
    if (b === undefined || price === undefined || (this.replaces.get(claim) ?? []).length !== 1) return;
    const before = this.replaces.get(b) ?? [];
    const prices = before.map((n) => this.launchedPrice.get(n));
    if (before.length === 0 || prices.some((p) => p === undefined)) return;
    const was = prices.reduce((sum: number, p) => sum + p!, 0);
    if (price < was - 1e-9) return;
    this.churn(claim, `NodeClaim ${claim} ($${price.toFixed(4)}/h) replaces ${b}, which was launched to replace ${before.join(', ')} ($${was.toFixed(4)}/h) for Underutilized with no change to the NodePool's template, its EC2NodeClass or the workload since: the two consolidations saved nothing`);
  }

  /**
   * A Drifted disruption terminated its instance: each of its replacements must not be drifted itself. A replacement
   * is drifted when the NodePool's template and EC2NodeClass are as they were when the disruption started (so it was
   * launched under the current spec) and its node's labels do not satisfy `requirements`, the NodePool's
   * `spec.template.spec.requirements` as applied (node selector semantics; `Gte n` ≡ `Gt n−1`, `Lte n` ≡ `Lt n+1`;
   * Karpenter core `nodeclaim/disruption/drift.go` `areRequirementsDrifted`). Counted once per replacement.
   * @param nodeClaim the disrupted NodeClaim
   * @param spec the NodePool template and EC2NodeClass as applied now (same form as {@link ObservedReplaceStart.spec})
   * @param replacementNodes the replacements' nodes (name and labels) that exist, by NodeClaim name; `requirements`:
   *   those of the replacement's own NodePool when it is another one (a replacement may be launched in any NodePool
   *   the pods fit: it is checked against the NodePool it belongs to, not the disrupted node's)
   */
  onDriftedTermination(
    nodeClaim: string,
    spec: string,
    requirements: readonly ObservedRequirement[],
    replacementNodes: ReadonlyMap<string, { readonly name: string; readonly labels: Readonly<Record<string, string>>; readonly requirements?: readonly ObservedRequirement[] }>,
  ): void {
    const start = this.started.get(nodeClaim);
    if (!start || start.reason !== 'Drifted' || start.spec !== spec) return;
    for (const [claim, node] of replacementNodes) {
      const unmet = unmetRequirement(node.requirements ?? requirements, node);
      if (unmet) this.churn(claim, `NodeClaim ${nodeClaim} was replaced as Drifted by ${claim}, whose node ${node.name} is drifted too: its labels do not satisfy ${unmet}`);
    }
  }

  private churn(nodeClaim: string, message: string): void {
    if (this.churned.has(nodeClaim)) return;
    this.churned.add(nodeClaim);
    this.violate('churn', message);
  }

  private violate(kind: keyof ViolationCounts, message: string): void {
    this.counts[kind]++;
    const record = { kind, at: this.now(), message };
    this.records.push(record);
    this.onViolation?.(record);
  }
}

/**
 * The pod with its required pod affinity dropped: among the pods nominated to one new node only anti-affinity (and
 * its symmetry) can be judged — affinity to pods elsewhere needs the rest of the cluster.
 */
function withoutPodAffinity<P extends PlacementPod>(pod: P): P {
  if (!pod.spec.affinity?.podAffinity) return pod;
  const { podAffinity: _dropped, ...affinity } = pod.spec.affinity;
  return { ...pod, spec: { ...pod.spec, affinity } };
}

/** The annotation the observer reads (Karpenter's). */
const DO_NOT_DISRUPT = 'karpenter.sh/do-not-disrupt';
/** Voluntary disruption reasons: they must never evict a do-not-disrupt pod. */
const VOLUNTARY = new Set(['Empty', 'Underutilized', 'Drifted']);
/** Reasons budgets limit. */
const BUDGETED = VOLUNTARY;

/** Reasons whose replacements the replace-loop check follows. */
const LOOPING = new Set(['Drifted', 'Underutilized']);

/** A voluntary disruption as {@link Observer.onReplaceStart} sees it when it starts. */
export interface ObservedReplaceStart {
  readonly nodeClaim: string;
  readonly nodePool: string;
  readonly reason: string;
  /** The replacement NodeClaims it launches (empty for a deletion). */
  readonly replacements: readonly string[];
  /** The NodePool's `spec.template` and its EC2NodeClass's `spec` as applied, in one stable string. */
  readonly spec: string;
  /** The workload: live pods (not DaemonSet pods) counted per owner, in one stable string. */
  readonly workload: string;
}

/** A NodePool requirement as applied (`karpenter.sh/v1` operators, including Gte and Lte). */
export interface ObservedRequirement {
  readonly key: string;
  readonly operator: string;
  readonly values?: readonly string[];
}

/** The first requirement the node's labels do not satisfy, in words, or undefined. */
function unmetRequirement(requirements: readonly ObservedRequirement[], node: { readonly name: string; readonly labels: Readonly<Record<string, string>> }): string | undefined {
  for (const r of requirements) {
    const values = r.values ?? [];
    const n = Number(values[0]);
    // Gte/Lte are Karpenter's; on integers they are Gt/Lt one step wider.
    const expression =
      r.operator === 'Gte' ? { key: r.key, operator: 'Gt', values: [String(n - 1)] } : r.operator === 'Lte' ? { key: r.key, operator: 'Lt', values: [String(n + 1)] } : { key: r.key, operator: r.operator, values: [...values] };
    if (!nodeSelectorTermMatches({ matchExpressions: [expression] } as Parameters<typeof nodeSelectorTermMatches>[0], node)) {
      return `${r.key} ${r.operator}${values.length ? ` [${values.join(' ')}]` : ''} (the node has ${ownValue(node.labels, r.key) === undefined ? 'no such label' : `${r.key}=${node.labels[r.key]}`})`;
    }
  }
  return undefined;
}

/** A pod as the disruption checks read it. */
export interface ObservedPod {
  readonly namespace: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  /** Epoch ms. */
  readonly createdAt: number;
  readonly phase: string;
  readonly nodeName?: string;
  /** When it was bound to `nodeName`, epoch ms. */
  readonly scheduledAt?: number;
}

/** A node as the disruption checks read it. */
export interface ObservedNode {
  readonly name: string;
  readonly ready: boolean;
  /** Carries `karpenter.sh/disrupted`. */
  readonly disrupted: boolean;
}

/** The cluster as the PDB checks read it. */
export interface ObservedWorld {
  readonly pods: readonly ObservedPod[];
  readonly readyNodes: ReadonlySet<string>;
  readonly pdbs: readonly PodDisruptionBudget[];
}

function doNotDisruptActive(pod: ObservedPod, now: number): boolean {
  const value = pod.annotations[DO_NOT_DISRUPT];
  if (value === undefined) return false;
  if (value === 'true') return true;
  try {
    return now < pod.createdAt + parseDuration(value) * 1000;
  } catch {
    return false;
  }
}

function isHealthy(pod: ObservedPod, world: ObservedWorld): boolean {
  return pod.phase === 'Running' && pod.nodeName !== undefined && world.readyNodes.has(pod.nodeName);
}

function selects(pdb: PodDisruptionBudget, pod: ObservedPod): boolean {
  return (pdb.metadata.namespace ?? 'default') === pod.namespace && labelSelectorMatches(pdb.spec.selector, pod.labels);
}

/** Healthy selected pods and the desired healthy count (kube-controller-manager's disruption controller). */
function pdbHealth(pdb: PodDisruptionBudget, world: ObservedWorld): { healthy: number; desired: number } {
  const selected = world.pods.filter((p) => selects(pdb, p));
  const expected = selected.length;
  const healthy = selected.filter((p) => isHealthy(p, world)).length;
  const desired = pdb.spec.minAvailable !== undefined ? scaledValue(pdb.spec.minAvailable, expected) : Math.max(0, expected - scaledValue(pdb.spec.maxUnavailable ?? 0, expected));
  return { healthy, desired };
}
