/**
 * The launch protocol shared by provisioning and disruption replacements (docs/architecture.md#launch-protocol):
 * (1) conditionally create the Pending record under a decision-derived name, (2) commit it (give way to an overlapping
 * in-flight NodeClaim holding the same pods, else a conditional version bump), (3) CreateFleet with the NodeClaim name
 * as `ClientToken`, (4) record the instance conditionally. Also the view of existing capacity (nodes and in-flight
 * NodeClaims with their free room) that both controllers solve against. See `provision.ts` for why each step is safe
 * under duplicates, overlaps and crashes.
 */
import { timestampMs } from '../core/api/timestamp.js';
import type { NodeSelectorRequirement } from '../core/api/kubernetes.js';
import { DISRUPTED_TAINT_KEY, LABEL_CAPACITY_TYPE, LABEL_INITIALIZED, LABEL_NODEPOOL, LABEL_REGION, LABEL_ZONE, TAG_SKIFF_CLUSTER } from '../core/api/labels.js';
import { ec2NodeClassAmiFamily } from '../core/api/ec2nodeclass.js';
import { isLive, isMarkedForDeletion, type NodeClaim } from '../core/api/nodeclaim.js';
import { isCloudProviderError, isConflictError, isInsufficientCapacityError, isThrottledError, type InsufficientCapacityError } from '../core/errors.js';
import { fnv1a } from '../core/hash.js';
import type { AmiFamily } from '../core/instancetypes/allocatable.js';
import type { InstanceType } from '../core/instancetypes/offering.js';
import { planLaunch } from '../core/provisioning/launch.js';
import { placedPod, podHostPorts, podRequests } from '../core/provisioning/pod.js';
import { daemonOverheadOf } from '../core/provisioning/nodepool-template.js';
import type { ExistingCapacity, NodeClaimPlan, NodePoolTemplate } from '../core/provisioning/types.js';
import { add, formatResources, subtract, type ResourceList } from '../core/resources/resource-list.js';
import { Requirements } from '../core/scheduling/requirements.js';
import { EPHEMERAL_TAINT_KEYS } from '../core/scheduling/taints.js';
import type { CloudProvider, InstanceTypeQuery, LaunchedInstance } from '../ports/cloud-provider.js';
import type { Clock } from '../ports/clock.js';
import type { Cluster, ClusterNode, ClusterPod } from '../ports/cluster.js';
import type { IdGenerator } from '../ports/ids.js';
import type { NodeClaimStore } from '../ports/nodeclaim-store.js';
import type { UnavailableOfferings } from '../ports/unavailable-offerings.js';
import type { NodeClaimExtras } from './nodeclaim-extras.js';
import { recordEventBestEffort } from './events.js';

/** What launching needs, as ports (a subset of the provision controller's). */
export interface LaunchDeps {
  readonly cluster: Pick<Cluster, 'recordEvent'>;
  readonly cloud: CloudProvider;
  readonly store: NodeClaimStore;
  readonly unavailableOfferings: UnavailableOfferings;
  readonly clock: Clock;
  /** Random name suffixes (for the rare hash collision of decision-derived names). */
  readonly ids: IdGenerator;
  /** EKS cluster name, used in instance tags. */
  readonly clusterName: string;
  /** AWS region, e.g. `us-west-2` (the node's `topology.kubernetes.io/region` label). */
  readonly region: string;
}

/** How long an offering that failed with insufficient capacity stays unavailable: 3 minutes (Karpenter `UnavailableOfferingsTTL`). */
export const UNAVAILABLE_OFFERING_TTL_MS = 3 * 60 * 1000;

/** The EC2NodeClass fields provisioning (and disruption's replacements) read: what {@link instanceTypeQuery} needs. */
export interface EC2NodeClassLike {
  readonly metadata: { readonly name: string };
  readonly spec: {
    /** With the alias of `amiSelectorTerms`, decides the AMI family (`ec2NodeClassAmiFamily`). */
    readonly amiFamily?: AmiFamily;
    readonly amiSelectorTerms?: readonly { readonly alias?: string }[];
    readonly kubelet?: InstanceTypeQuery['kubelet'];
    readonly blockDeviceMappings?: readonly { readonly deviceName?: string; readonly rootVolume?: boolean; readonly ebs?: { readonly volumeSize?: string | number } }[];
    readonly instanceStorePolicy?: 'RAID0';
  };
}

/**
 * The instance-type query an EC2NodeClass implies: its effective AMI family (`ec2NodeClassAmiFamily`: labels, which
 * types it boots, allocatable), kubelet settings, and the block device mappings and instance store policy that set
 * ephemeral storage (only each mapping's device name, `rootVolume` and volume size are kept, so unrelated EBS
 * settings do not split the instance-type cache).
 */
export function instanceTypeQuery(nodeClass: EC2NodeClassLike): InstanceTypeQuery {
  const { spec } = nodeClass;
  return {
    nodeClass: nodeClass.metadata.name,
    amiFamily: ec2NodeClassAmiFamily(nodeClass),
    ...(spec.kubelet ? { kubelet: spec.kubelet } : {}),
    ...(spec.blockDeviceMappings !== undefined && spec.blockDeviceMappings.length > 0
      ? {
          blockDeviceMappings: spec.blockDeviceMappings.map((m) => ({
            ...(m.deviceName !== undefined ? { deviceName: m.deviceName } : {}),
            ...(m.rootVolume !== undefined ? { rootVolume: m.rootVolume } : {}),
            ...(m.ebs?.volumeSize !== undefined ? { ebs: { volumeSize: m.ebs.volumeSize } } : {}),
          })),
        }
      : {}),
    ...(spec.instanceStorePolicy !== undefined ? { instanceStorePolicy: spec.instanceStorePolicy } : {}),
  };
}

/** Karpenter's registration timeout: a NodeClaim whose node has not registered 15 minutes after launch is not coming. */
export const REGISTRATION_TTL_MS = 15 * 60 * 1000;

/**
 * How long a registered, not yet initialized Node may stay NotReady while the solver still counts it as capacity about
 * to be ready: 5 minutes after its NodeClaim registered, ms. Karpenter sets an uninitialized node's ephemeral taints
 * aside with no limit (core `StateNode.Taints`), so pods nominated to a Node that went NotReady before it was ever
 * initialized wait for it indefinitely (its node repair, off by default, acts after 30 minutes). Skiff stops counting
 * such a Node after this grace, so the pods get new capacity within issue 21's 15-minute bound; a kubelet normally
 * turns Ready within a minute of registering.
 */
export const INITIALIZATION_GRACE_MS = 5 * 60 * 1000;

/**
 * Karpenter's launch timeout (core `pkg/controllers/nodeclaim/lifecycle/liveness.go` `LaunchTimeout`): a NodeClaim not
 * launched 5 minutes after it was created is given up (`Failed`, `LaunchTimeout`), and its pods are solved again.
 */
export const LAUNCH_TIMEOUT_MS = 5 * 60 * 1000;

/**
 * A NodeClaim whose capacity is still coming: live, not yet initialized, launched less than
 * {@link REGISTRATION_TTL_MS} ago (or, while its launch is pending, created less than {@link LAUNCH_TIMEOUT_MS} ago:
 * Karpenter's two liveness timeouts), and whose node is not Ready yet (a registered node turns Ready after the lifecycle
 * controller registers it). Pods nominated to it are not solved again; a NodeClaim whose node came and went is not
 * capacity.
 */
export function isInFlight(claim: NodeClaim, nodes: readonly ClusterNode[], now: number): boolean {
  if (claim.state === 'Initialized' || claim.initializedAt) return false;
  if (claim.registeredAt && !nodeOf(claim, nodes)) return false;
  if (claim.launchedAt === undefined ? now - Date.parse(claim.createdAt) > LAUNCH_TIMEOUT_MS : now - Date.parse(claim.launchedAt) > REGISTRATION_TTL_MS) return false;
  return !nodeOf(claim, nodes)?.ready;
}

/** Per node list, its first node of each providerID, and the list's length when indexed ({@link nodeOf}). */
const nodeIndexes = new WeakMap<readonly ClusterNode[], { readonly length: number; readonly byProvider: ReadonlyMap<string, ClusterNode> }>();

/**
 * The node a NodeClaim became, matched by providerID (the first such node of `nodes`).
 *
 * Controllers ask this for every NodeClaim of a list they read once, so the answer comes from an index of `nodes` built
 * on the first call and kept per array object: a linear search made every sweep over the records quadratic in the fleet
 * size. The arrays are lists a controller read (`Cluster.listNodes` returns a fresh one each time) and are not modified
 * afterwards; an array whose length changed is indexed again.
 */
export function nodeOf(claim: NodeClaim, nodes: readonly ClusterNode[]): ClusterNode | undefined {
  if (!claim.providerId) return undefined;
  let index = nodeIndexes.get(nodes);
  if (!index || index.length !== nodes.length) {
    const byProvider = new Map<string, ClusterNode>();
    for (const n of nodes) if (!byProvider.has(n.providerId)) byProvider.set(n.providerId, n);
    nodeIndexes.set(nodes, (index = { length: nodes.length, byProvider }));
  }
  return index.byProvider.get(claim.providerId);
}

/**
 * What a NodePool's NodeClaims count against its `spec.limits` (canonical units: cpu millicores, memory MiB, …, plus
 * `nodes`): each live NodeClaim not marked for deletion ({@link isMarkedForDeletion}: a started disruption or a
 * deletion, as Karpenter v1.14's NodePool usage leaves out nodes `MarkedForDeletion`) adds its launched type's
 * capacity, or before the launch its first option's, and one node.
 */
export function usageOf(nodePool: string, claims: readonly NodeClaim[], typesByClass: ReadonlyMap<string, readonly InstanceType[]>): ResourceList {
  let usage: ResourceList = {};
  for (const c of claims) {
    if (c.nodePool !== nodePool || !isLive(c) || isMarkedForDeletion(c)) continue;
    const name = c.instanceType ?? c.instanceTypes[0];
    const type = typesByClass.get(c.nodeClass)?.find((t) => t.name === name);
    usage = add(usage, type?.capacity ?? {}, { nodes: 1 });
  }
  return usage;
}

/**
 * Nodes and in-flight NodeClaims with the room left after the pods bound or nominated to them. A node tainted
 * `karpenter.sh/disrupted` (being deleted) comes back `markedForDeletion`: no solve places a pod on it, but the pods on
 * it count for topology spread and pod (anti-)affinity, as Karpenter's topology and kube-scheduler count them (core
 * `pkg/controllers/provisioning/scheduling/topology.go countDomains`). A disruption simulation leaves out the nodes
 * whose pods it moves before calling this (`solverView`'s `leaving`), so those pods are never counted twice.
 * @param daemonByPool per NodePool, its template's daemonset overhead (`daemonOverhead` plus the instance type's
 *   `daemonExtra`, core `buildDaemonOverheadGroups`): what an in-flight NodeClaim's DaemonSet pods will take
 * @param options.now the caller's time, epoch ms: with it, a Node not initialized and NotReady more than
 *   {@link INITIALIZATION_GRACE_MS} after its NodeClaim registered keeps its taints (kube-scheduler will not bind there)
 * @param options.solving keys (`namespace/name`) of the pending pods the caller is solving now: a node holds no room for them
 *   even when they are nominated to it. Not passed by the provisioner yet: passing it stopped Skiff's repack moves on
 *   the 360-pod scale-in (their replacements' pods were placed elsewhere once the replacement turned Ready), so the
 *   double count below stays, counted by `Result.wastedLaunches`, until both are handled together. A node that just turned Ready still has its NodeClaim's pending pods nominated
 *   to it until kube-scheduler binds them; they are solved again (their NodeClaim is no longer in flight), and
 *   reserving their room on that node too counted each of them twice, so the solve launched a new node for pods that
 *   bound to the Ready one a moment later (issue 21: launched-then-unused NodeClaims). Karpenter's scheduler never
 *   reserves room for a pod it is scheduling (core `pkg/controllers/provisioning/scheduling/existingnode.go`: a node's
 *   room is what its bound pods leave). @default none
 */
export function existingCapacity(
  nodes: readonly ClusterNode[],
  pods: readonly ClusterPod[],
  claims: readonly NodeClaim[],
  inFlight: readonly NodeClaim[],
  podsByKey: ReadonlyMap<string, ClusterPod>,
  typesByClass: ReadonlyMap<string, InstanceType[]>,
  daemonByPool: ReadonlyMap<string, Pick<NodePoolTemplate, 'daemonOverhead' | 'daemonExtra'>>,
  options: { readonly solving?: ReadonlySet<string>; readonly now?: number } = {},
): ExistingCapacity[] {
  const solving = options.solving ?? new Set<string>();
  const out: ExistingCapacity[] = [];
  const claimByProvider = new Map(claims.filter((c) => c.providerId).map((c) => [c.providerId!, c]));
  const bound = new Map<string, ClusterPod[]>();
  for (const p of pods) if (p.nodeName && (p.phase === 'Pending' || p.phase === 'Running')) bound.set(p.nodeName, [...(bound.get(p.nodeName) ?? []), p]);
  for (const node of nodes) {
    // A node being deleted is no capacity, but the pods still on it count for topology until they are gone
    // (`markedForDeletion`, see docs/karpenter-semantics.md "Nodes being deleted"); leaving it out entirely hid them
    // from zone spread, so the solve nominated pods to a zone kube-scheduler counts as full.
    const markedForDeletion = node.taints.some((t) => t.key === DISRUPTED_TAINT_KEY);
    const claim = claimByProvider.get(node.providerId);
    const onNode = bound.get(node.name) ?? [];
    const nominatedPending = (claim?.nominatedPods ?? []).filter((k) => !solving.has(k)).map((k) => podsByKey.get(k)).filter((p): p is ClusterPod => !!p && reservedFor(claim!, p, node.name));
    const used = add(...onNode.map((p) => podRequests(p.spec)), ...nominatedPending.map((p) => podRequests(p.spec)));
    const startup = new Set((claim?.startupTaints ?? []).map((t) => t.key));
    // Karpenter `StateNode.Taints` (core `pkg/controllers/state/statenode.go`): a managed node's ephemeral and startup
    // taints are set aside only until it is initialized. An initialized node that turned NotReady carries
    // `node.kubernetes.io/not-ready` (or `unreachable`) for a reason: kube-scheduler will not bind there, so neither may
    // the solver count its room (issue 21: a pod was nominated to a NotReady node for 37 minutes). Initialized is what
    // `StateNode.Initialized` reads, the Node's `karpenter.sh/initialized` label, or the NodeClaim's record of it: a pass
    // that patched the label and crashed before its NodeClaim write has still initialized the Node.
    const initialized = node.labels[LABEL_INITIALIZED] === 'true' || (claim ? claim.initializedAt !== undefined || claim.state === 'Initialized' : node.labels[LABEL_NODEPOOL] === undefined);
    // Not initialized, NotReady, and registered longer than the grace: no longer a node about to be ready (see above).
    const stalled = !initialized && !node.ready && options.now !== undefined && claim?.registeredAt !== undefined && options.now - timestampMs(claim.registeredAt) > INITIALIZATION_GRACE_MS;
    out.push({
      name: node.name,
      kind: 'node',
      ...(claim ? { nodePool: claim.nodePool } : node.labels[LABEL_NODEPOOL] ? { nodePool: node.labels[LABEL_NODEPOOL] } : {}),
      labels: node.labels,
      taints: initialized || stalled ? node.taints : node.taints.filter((t) => !EPHEMERAL_TAINT_KEYS.has(t.key) && !startup.has(t.key)),
      available: subtract(node.allocatable, used),
      allocatable: node.allocatable,
      hostPorts: onNode.flatMap((p) => podHostPorts(p.spec)),
      pods: [...onNode, ...nominatedPending].map(placedPod),
      ...(markedForDeletion ? { markedForDeletion } : {}),
    });
  }
  for (const claim of inFlight) {
    if (!claim.instanceType || !claim.zone || !claim.capacityType || !claim.allocatable) continue;
    if (nodeOf(claim, nodes)) continue;
    const type = typesByClass.get(claim.nodeClass)?.find((t) => t.name === claim.instanceType);
    const nominatedPods = claim.nominatedPods.map((k) => podsByKey.get(k)).filter((p): p is ClusterPod => !!p && reservedFor(claim, p, undefined));
    out.push({
      name: claim.name,
      kind: 'nodeClaim',
      nodePool: claim.nodePool,
      labels: { ...(type?.labels ?? {}), ...claim.labels, [LABEL_ZONE]: claim.zone, [LABEL_CAPACITY_TYPE]: claim.capacityType },
      taints: claim.taints,
      available: subtract(claim.allocatable, add(daemonOverheadOf(daemonByPool.get(claim.nodePool), claim.instanceType), ...nominatedPods.map((p) => podRequests(p.spec)))),
      allocatable: claim.allocatable,
      hostPorts: nominatedPods.flatMap((p) => podHostPorts(p.spec)),
      pods: nominatedPods.map(placedPod),
    });
  }
  return out;
}

/**
 * Writes the Pending record (step 1 of the launch protocol) under the decision's name ({@link nodeClaimName}).
 * When the record exists already, an overlapping pass made the same decision: its record is returned and this pass
 * joins its launch. A different NodeClaim under that name (a hash collision) gets a random name instead.
 * @param claims every NodeClaim record, as the round read them
 * @returns the record, or undefined when the decision's record is over (failed or deleted: the next round re-solves)
 */
export async function createNodeClaim(deps: LaunchDeps, plan: NodeClaimPlan, now: number, claims: readonly NodeClaim[], extras: NodeClaimExtras): Promise<NodeClaim | undefined> {
  // Drawn every time so the generated names of a run do not depend on whether a collision happened.
  const fallback = `${plan.nodePool}-${deps.ids()}`;
  const name = nodeClaimName(plan.nodePool, plan.pods, claims);
  const created = await createNodeClaimRecord(deps, plan, now, name, extras);
  if (created) return created;
  const existing = await deps.store.get(name);
  if (existing && existing.nodePool === plan.nodePool && sameMembers(existing.nominatedPods, plan.pods)) return isLive(existing) ? existing : undefined;
  return createNodeClaimRecord(deps, plan, now, fallback, extras);
}

/**
 * The name of the NodeClaim a decision creates: `<nodePool>-<5 characters>` hashed from the NodePool, the pods
 * (sorted) and the NodeClaims that held any of them before (sorted names, any state). Overlapping passes that take
 * the same decision from the same records get the same name; a new decision for the same pods (after a failed launch,
 * or after their NodeClaim went away) gets a new one, because the earlier NodeClaim is now in its history.
 * @param nodePool the NodePool the NodeClaim belongs to
 * @param pods `namespace/name` of the pods the decision nominates
 * @param claims every NodeClaim record of the cluster, any state
 * @returns e.g. `general-k4bxq`; a name can collide with an unrelated NodeClaim's (27^5 suffixes), which the
 *   caller resolves by falling back to a random suffix
 */
export function nodeClaimName(nodePool: string, pods: readonly string[], claims: readonly NodeClaim[]): string {
  const mine = new Set(pods);
  const history = claims.filter((c) => c.nominatedPods.some((p) => mine.has(p))).map((c) => c.name);
  const key = [nodePool, ...[...pods].sort(), '|', ...history.sort()].join('\n');
  let h = fnv1a(key);
  let suffix = '';
  for (let i = 0; i < 5; i++) {
    suffix += NAME_ALPHABET[h % NAME_ALPHABET.length];
    h = Math.floor(h / NAME_ALPHABET.length);
  }
  return `${nodePool}-${suffix}`;
}

/** The characters of generated name suffixes (Kubernetes' generateName alphabet, as `ports/ids.ts`). */
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';


function sameMembers(a: readonly string[], b: readonly string[]): boolean {
  const set = new Set(a);
  return set.size === new Set(b).size && b.every((x) => set.has(x));
}

/**
 * Step 1 alone, under a name the caller chose (a disruption replacement's name derives from its command): the
 * conditional create of the Pending record.
 * @returns the record, or undefined when a record with that name exists
 */
export async function createNodeClaimRecord(deps: LaunchDeps, plan: NodeClaimPlan, now: number, name: string, extras: NodeClaimExtras): Promise<NodeClaim | undefined> {
  try {
    return await deps.store.create({
      ...extras,
      name,
      nodePool: plan.nodePool,
      nodeClass: plan.nodeClass,
      state: 'Pending',
      requirements: plan.requirements.toNodeSelectorRequirements(),
      instanceTypes: plan.instanceTypes.map((t) => t.name),
      resources: plan.requests,
      labels: plan.labels,
      taints: plan.taints,
      startupTaints: plan.startupTaints,
      nominatedPods: plan.pods,
      createdAt: new Date(now).toISOString(),
    });
  } catch (e) {
    if (isConflictError(e)) return undefined;
    throw e;
  }
}

/**
 * What one attempt to launch a Pending NodeClaim came to ({@link launchPending}): `launched` as an instance type;
 * `capacity` (no offering had capacity: ICE); `failed` (another EC2 error); `throttled` (EC2 throttled: left Pending,
 * a later pass retries it); `superseded` (another in-flight NodeClaim holds one of its pods, so it gave way); `gone`
 * (the record ended, vanished or was changed by another writer meanwhile). `error` names the EC2 error: its code, or the throttling message.
 */
export type LaunchOutcome =
  | { kind: 'launched'; instanceType: string }
  | { kind: 'capacity'; error: string }
  | { kind: 'failed'; error: string }
  | { kind: 'throttled'; error: string }
  | { kind: 'superseded' }
  | { kind: 'gone' };

/**
 * A Pending record that was committed to launch: its version was bumped once after the overlap check (created at 1,
 * committed at 2; no other write touches a Pending record without an instance but the one that ends it).
 */
function isCommitted(claim: NodeClaim): boolean {
  return claim.state === 'Pending' && !claim.instanceId && claim.version >= 2;
}

/**
 * Launches a Pending NodeClaim (new, joined or resumed): unless it is committed already, check that no other
 * in-flight NodeClaim holds one of its pods (else it gives way: `Superseded`) and commit it with a conditional
 * write; then launch it. Safe to run for one record from several passes at once (see the module comment).
 * @param nodes the round's nodes (which NodeClaims are still in flight)
 */
export async function launchPending(deps: LaunchDeps, claim: NodeClaim, types: readonly InstanceType[], nodes: readonly ClusterNode[], now: number): Promise<LaunchOutcome> {
  let current = claim;
  if (!isCommitted(current)) {
    const pods = new Set(current.nominatedPods);
    // The cheap test first: most records share no pod with this one (the checks are pure, their order changes nothing).
    const rival = (await deps.store.list()).find((c) => c.name !== current.name && c.nominatedPods.some((p) => pods.has(p)) && isLive(c) && isInFlight(c, nodes, now));
    if (rival) {
      await supersede(deps, current, rival.name);
      return { kind: 'superseded' };
    }
    try {
      current = await deps.store.update(current);
    } catch (e) {
      if (!isConflictError(e)) throw e;
      // Another pass committed it, launched it, or ended it since it was read.
      const fresh = await deps.store.get(claim.name);
      if (!fresh || !isLive(fresh)) return { kind: 'gone' };
      if (fresh.instanceId) return { kind: 'launched', instanceType: fresh.instanceType ?? '' };
      if (!isCommitted(fresh)) return { kind: 'gone' };
      current = fresh;
    }
  }
  return launch(deps, current, types);
}

/** Ends a NodeClaim that gave way to an overlapping one before launching (conditional; a conflict means it moved on). */
async function supersede(deps: LaunchDeps, claim: NodeClaim, by: string): Promise<void> {
  try {
    await deps.store.update({ ...claim, state: 'Failed', launchError: 'Superseded', deletionReason: 'LaunchFailed', deletedAt: new Date(deps.clock.now()).toISOString() });
  } catch (e) {
    if (!isConflictError(e)) throw e;
    return;
  }
  await recordEventBestEffort(deps.cluster, { type: 'Normal', reason: 'Superseded', object: `NodeClaim/${claim.name}`, message: `NodeClaim ${claim.name} was not launched: NodeClaim ${by} is already coming up for some of its pods` });
}

/** Steps 2–3 of the launch protocol for one committed NodeClaim. */
async function launch(deps: LaunchDeps, claim: NodeClaim, types: readonly InstanceType[]): Promise<LaunchOutcome> {
  const options = types.filter((t) => claim.instanceTypes.includes(t.name));
  const requirements = Requirements.from(claim.requirements as NodeSelectorRequirement[]);
  const plan = planLaunch(requirements, options);
  if (!plan) {
    await fail(deps, claim, 'InsufficientInstanceCapacity', true);
    return { kind: 'capacity', error: 'InsufficientInstanceCapacity' };
  }
  let instance: LaunchedInstance;
  try {
    instance = await deps.cloud.create({
      nodeClaim: claim.name,
      nodePool: claim.nodePool,
      nodeClass: claim.nodeClass,
      capacityType: plan.capacityType,
      overrides: plan.overrides,
      tags: {
        [`kubernetes.io/cluster/${deps.clusterName}`]: 'owned',
        'eks:eks-cluster-name': deps.clusterName,
        [LABEL_NODEPOOL]: claim.nodePool,
        'karpenter.k8s.aws/ec2nodeclass': claim.nodeClass,
        'karpenter.sh/nodeclaim': claim.name,
        [TAG_SKIFF_CLUSTER]: deps.clusterName,
        Name: claim.name,
      },
      labels: { ...claim.labels, [LABEL_REGION]: deps.region },
      taints: claim.taints,
      startupTaints: claim.startupTaints,
    });
  } catch (e) {
    // Only CreateFleet's own outcomes are handled here; anything else ends the pass and the retry resumes.
    if (isInsufficientCapacityError(e)) {
      await markCapacityError(deps, e);
      await fail(deps, claim, e.errorCode, true);
      return { kind: 'capacity', error: e.errorCode };
    }
    if (isThrottledError(e)) return { kind: 'throttled', error: e.message };
    if (isCloudProviderError(e)) {
      await fail(deps, claim, e.code);
      return { kind: 'failed', error: e.code };
    }
    throw e;
  }
  for (const o of instance.unavailableOfferings) await deps.unavailableOfferings.markUnavailable(o, deps.clock.now() + UNAVAILABLE_OFFERING_TTL_MS, 'InsufficientInstanceCapacity');
  return recordInstance(deps, claim.name, instance, types);
}

/**
 * Step 3: records the instance on the NodeClaim (conditional on its version). When another pass recorded it first the
 * launch still counts; when the NodeClaim ended meanwhile the instance is left to garbage collection.
 */
async function recordInstance(deps: LaunchDeps, name: string, instance: LaunchedInstance, types: readonly InstanceType[]): Promise<LaunchOutcome> {
  const launched: LaunchOutcome = { kind: 'launched', instanceType: instance.instanceType };
  const fresh = await deps.store.get(name);
  if (!fresh || !isLive(fresh)) return { kind: 'gone' };
  if (fresh.instanceId) return fresh.instanceId === instance.instanceId ? launched : { kind: 'gone' };
  const type = types.find((t) => t.name === instance.instanceType);
  try {
    await deps.store.update({
      ...fresh,
      state: 'Launched',
      instanceId: instance.instanceId,
      providerId: instance.providerId,
      instanceType: instance.instanceType,
      zone: instance.zone,
      capacityType: instance.capacityType,
      price: instance.price,
      ...(type ? { allocatable: type.allocatable } : {}),
      labels: { ...fresh.labels, ...(type?.labels ?? {}), [LABEL_ZONE]: instance.zone, [LABEL_CAPACITY_TYPE]: instance.capacityType, [LABEL_REGION]: deps.region },
      launchedAt: new Date(instance.launchedAt).toISOString(),
    });
    return launched;
  } catch (e) {
    if (!isConflictError(e)) throw e;
    const again = await deps.store.get(name);
    return again && isLive(again) && again.instanceId === instance.instanceId ? launched : { kind: 'gone' };
  }
}

async function markCapacityError(deps: LaunchDeps, e: InsufficientCapacityError): Promise<void> {
  const until = deps.clock.now() + UNAVAILABLE_OFFERING_TTL_MS;
  for (const o of e.offerings) {
    await deps.unavailableOfferings.markUnavailable(o, until, e.errorCode);
  }
}

/**
 * The Warning Event that says a NodeClaim's launch was refused for now and will be tried again (reason
 * `LaunchRetrying`, message `NodeClaim <name> launch failed: <error>, retrying`); best effort. The Result's pending
 * reasons read it (`launch failed: RequestLimitExceeded, retrying`).
 * @param error the refusal, e.g. `RequestLimitExceeded`
 */
export async function recordLaunchRetrying(deps: Pick<LaunchDeps, 'cluster'>, name: string, error: string): Promise<void> {
  await recordEventBestEffort(deps.cluster, { type: 'Warning', reason: LAUNCH_RETRYING_REASON, object: `NodeClaim/${name}`, message: `NodeClaim ${name} launch failed: ${error}, retrying` });
}

/** The reason of the Event {@link recordLaunchRetrying} writes. */
export const LAUNCH_RETRYING_REASON = 'LaunchRetrying';

/** Marks the NodeClaim failed (its pods are solved again: a failed claim is not live). */
export async function fail(deps: Pick<LaunchDeps, 'cluster' | 'store' | 'clock'>, claim: NodeClaim, error: string, capacity = false): Promise<void> {
  const fresh = (await deps.store.get(claim.name)) ?? claim;
  if (!isLive(fresh)) return;
  try {
    await deps.store.update({ ...fresh, state: 'Failed', launchError: error, deletionReason: 'LaunchFailed', deletedAt: new Date(deps.clock.now()).toISOString() });
  } catch (e) {
    if (!isConflictError(e)) throw e;
  }
  await recordEventBestEffort(deps.cluster, {
    type: 'Warning',
    reason: capacity ? 'InsufficientCapacityError' : 'LaunchFailed',
    object: `NodeClaim/${claim.name}`,
    message: `NodeClaim ${claim.name} failed to launch (${error}) for requests ${formatResources(claim.resources)}`,
  });
}


/**
 * Whether a pod nominated to a NodeClaim holds room on it: a pending, unbound pod (it is coming), or — on a disruption
 * replacement — a pod still running on the node being replaced (it moves here once that node drains; without the
 * reservation a second command could plan to use the same room).
 * @param nodeName the NodeClaim's node, if it has one (a pod already bound there is counted as bound, not reserved)
 */
function reservedFor(claim: NodeClaim, pod: ClusterPod, nodeName: string | undefined): boolean {
  if (pod.phase !== 'Pending' && pod.phase !== 'Running') return false;
  if (!pod.nodeName) return pod.phase === 'Pending';
  return claim.replacementFor !== undefined && pod.nodeName !== nodeName;
}
