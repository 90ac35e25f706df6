/**
 * The provision controller: one batch of pending pods → NodeClaims launched.
 *
 * Steps (Karpenter `provisioner.go Reconcile`, adapted to a stateless Lambda with DynamoDB as the source of truth):
 * 1. read NodePools, EC2NodeClasses, DaemonSets, nodes, pods, NodeClaim records and the unavailable offerings;
 * 2. resume any NodeClaim left `Pending` without an instance (a crash between record and launch);
 * 3. solve the pending pods that are not already nominated to a live NodeClaim;
 * 4. nominate pods that fit in-flight NodeClaims (a conditional update), then for each new NodeClaim:
 *    create the record (conditional: must not exist), commit the launch (see below), CreateFleet with the NodeClaim
 *    name as idempotency token (`ClientToken`), record the instance (conditional on version);
 * 5. on insufficient capacity, mark the offerings unavailable for 3 minutes and re-solve without them
 *    (at most {@link MAX_ROUNDS} rounds) — this is how spot falls back to on-demand.
 * Expected outcomes (unschedulable pods, failed launches) are reported as values and Kubernetes Events.
 *
 * At-least-once delivery: a batch can be delivered twice, a pass can crash after any write and be retried, and two
 * passes can overlap (a redelivery while the first invocation still runs). Every step is therefore idempotent, and
 * two passes never launch for the same pods:
 * - a NodeClaim's name is derived from its decision ({@link nodeClaimName}: NodePool, pods, and the NodeClaims
 *   those pods had before), so overlapping passes that make the same decision write the same record — the second
 *   conditional create fails and that pass joins the first's launch instead of launching a second NodeClaim;
 * - commit before launch: after its record exists, a launch lists the NodeClaims, gives way (`Superseded`) when
 *   another in-flight NodeClaim holds one of its pods, and otherwise commits with a conditional write (the record's
 *   version goes from 1 to 2). Of two overlapping NodeClaims at most one commits: the one whose check ran last sees
 *   the other. Only a committed NodeClaim is launched, and a retry resumes a committed one without checking again;
 * - CreateFleet's `ClientToken` is the NodeClaim name, so launching a record twice (a retry, or two passes resuming
 *   it) returns the same instance;
 * - only `ConflictError`s and the CreateFleet errors the port names are handled; anything else (a crash, a failed
 *   write) ends the pass with the records as they are, and the retry resumes from them. A `Pending` record older
 *   than {@link REGISTRATION_TTL_MS} is no longer resumed (no Lambda runs that long): it fails, and garbage
 *   collection terminates any instance it got.
 */
import type { NodeSelectorRequirement } from '../core/api/kubernetes.js';
import { LABEL_CAPACITY_TYPE, LABEL_NODEPOOL, LABEL_REGION, LABEL_ZONE, UNREGISTERED_TAINT_KEY } from '../core/api/labels.js';
import { isLive, type NodeClaim } from '../core/api/nodeclaim.js';
import { isCloudProviderError, isConflictError, isInsufficientCapacityError, isThrottledError, type InsufficientCapacityError } from '../core/errors.js';
import { offeringKey, withUnavailable, type InstanceType } from '../core/instancetypes/offering.js';
import { planLaunch } from '../core/provisioning/launch.js';
import { limitsReason } from '../core/provisioning/diagnosis.js';
import { buildNodePoolTemplate, type DaemonSetLike, type NodePoolLike } from '../core/provisioning/nodepool-template.js';
import { placedPod, podHostPorts, podRequests, toSchedulingPod, type SchedulingPod } from '../core/provisioning/pod.js';
import { solve, withinLimits, type ExistingCapacity, type NodeClaimPlan, type UnschedulablePod } from '../core/provisioning/scheduler.js';
import { add, formatResources, subtract, subtractOnKeysOf, type ResourceList } from '../core/resources/resource-list.js';
import { mebibytes } from '../core/resources/quantity.js';
import { Requirements } from '../core/scheduling/requirements.js';
import type { CloudProvider, InstanceTypeQuery, LaunchedInstance } from '../ports/cloud-provider.js';
import type { Clock } from '../ports/clock.js';
import type { Cluster, ClusterNode, ClusterPod } from '../ports/cluster.js';
import type { IdGenerator } from '../ports/ids.js';
import type { NodeClaimStore } from '../ports/nodeclaim-store.js';
import type { ProvisioningPasses } from '../ports/provisioning-passes.js';
import type { UnavailableOfferings } from '../ports/unavailable-offerings.js';

/** How long an offering that failed with insufficient capacity stays unavailable: 3 minutes (Karpenter `UnavailableOfferingsTTL`). */
export const UNAVAILABLE_OFFERING_TTL_MS = 3 * 60 * 1000;
/** Solve rounds per invocation: the first, plus re-solves after capacity errors. */
export const MAX_ROUNDS = 3;

/** The EC2NodeClass fields provisioning reads. */
export interface EC2NodeClassLike {
  readonly metadata: { readonly name: string };
  readonly spec: {
    readonly kubelet?: InstanceTypeQuery['kubelet'];
    readonly blockDeviceMappings?: readonly { readonly deviceName?: string; readonly rootVolume?: boolean; readonly ebs?: { readonly volumeSize?: string | number } }[];
  };
}

/** Everything the controller needs, as ports. */
export interface ProvisionDeps {
  readonly cluster: Cluster<NodePoolLike, EC2NodeClassLike, DaemonSetLike>;
  readonly cloud: CloudProvider;
  readonly store: NodeClaimStore;
  readonly unavailableOfferings: UnavailableOfferings;
  /** When the last complete pass started, to coalesce triggers it already covered. */
  readonly passes: ProvisioningPasses;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  /** EKS cluster name, used in instance tags. */
  readonly clusterName: string;
  /** AWS region, e.g. `us-west-2` (the node's `topology.kubernetes.io/region` label). */
  readonly region: string;
}

/** What one invocation did. */
export interface ProvisionReport {
  /** NodeClaims launched (new or resumed). */
  readonly launched: readonly string[];
  /** NodeClaims whose launch failed (capacity or other errors), with the EC2 error code. */
  readonly failed: readonly { readonly nodeClaim: string; readonly error: string }[];
  /** Pods nominated to in-flight capacity or new NodeClaims: `ns/name` → NodeClaim or node name. */
  readonly nominated: Readonly<Record<string, string>>;
  /** Pods no NodePool can serve now. */
  readonly unschedulable: readonly UnschedulablePod[];
  /**
   * NodeClaims left `Pending` because the cloud throttled, or that gave way to an overlapping NodeClaim in the last
   * round (their pods may still need capacity); the caller should retry the batch.
   */
  readonly retry: readonly string[];
  /** Set when the trigger was already covered by a pass that started after it (nothing was done). */
  readonly coveredByPassAt?: number;
}

/** What started a pass: the latest send time (epoch ms) of the pod events in the batch. */
export interface ProvisionTrigger {
  readonly sentAtMs: number;
}

/**
 * Provisions capacity for the cluster's pending pods. The trigger (which pod events arrived) only starts the
 * work: the controller reads the current state, so a duplicate or stale trigger is harmless, and a trigger sent
 * before the start of the last complete pass is skipped (that pass already saw what it reports).
 * @param trigger the latest send time of the batch's events; omitted, the pass always runs
 * @throws whatever the ports throw for failures other than conflicts and capacity errors
 */
export async function provision(deps: ProvisionDeps, trigger?: ProvisionTrigger): Promise<ProvisionReport> {
  const startedAt = deps.clock.now();
  if (trigger) {
    const last = await deps.passes.lastCompletedStart();
    if (last !== undefined && trigger.sentAtMs < last) return { launched: [], failed: [], nominated: {}, unschedulable: [], retry: [], coveredByPassAt: last };
  }
  const launched: string[] = [];
  const failed: { nodeClaim: string; error: string }[] = [];
  const nominated: Record<string, string> = {};
  const retry: string[] = [];
  /** Pods nominated to a registered node rather than a NodeClaim still coming up. */
  const toNodes = new Set<string>();
  let unschedulable: readonly UnschedulablePod[] = [];

  const [nodePools, nodeClasses, daemonSets] = await Promise.all([deps.cluster.listNodePools(), deps.cluster.listNodeClasses(), deps.cluster.listDaemonSets()]);
  const nodeClassByName = new Map(nodeClasses.map((c) => [c.metadata.name, c]));
  const typesByClass = new Map<string, InstanceType[]>();
  for (const nc of nodeClasses) typesByClass.set(nc.metadata.name, await deps.cloud.getInstanceTypes(instanceTypeQuery(nc)));

  for (let round = 0; round < MAX_ROUNDS; round++) {
    const now = deps.clock.now();
    const [pods, nodes, claims, unavailable] = await Promise.all([
      deps.cluster.listPods(),
      deps.cluster.listNodes(),
      deps.store.list(),
      deps.unavailableOfferings.listUnavailable(now),
    ]);
    const unavailableKeys = new Set(unavailable.map(offeringKey));
    const available = new Map([...typesByClass].map(([k, v]) => [k, withUnavailable(v, unavailableKeys)]));
    const liveClaims = claims.filter(isLive);
    const podsByKey = new Map(pods.map((p) => [`${p.namespace}/${p.name}`, p]));

    // Resume launches a crash interrupted (record written, no instance recorded yet); give up on stale ones.
    let capacityErrors = 0;
    const superseded: string[] = [];
    for (const claim of liveClaims.filter((c) => c.state === 'Pending' && !c.instanceId)) {
      if (now - Date.parse(claim.createdAt) > REGISTRATION_TTL_MS) {
        await fail(deps, claim, 'LaunchTimeout');
        continue;
      }
      const outcome = await launchPending(deps, claim, available.get(claim.nodeClass) ?? [], nodes, now);
      capacityErrors += record(outcome, claim.name, launched, failed, retry, superseded);
    }

    const inFlight = liveClaims.filter((c) => isInFlight(c, nodes, now) && !superseded.includes(c.name));
    const nominatedToLive = new Set(inFlight.flatMap((c) => c.nominatedPods));
    const pending = pods.filter((p) => isProvisionable(p) && !nominatedToLive.has(`${p.namespace}/${p.name}`));
    // Nothing new to place (e.g. the rest of a burst's messages after the first batch launched for all of it).
    if (pending.length === 0) {
      unschedulable = [];
      if (capacityErrors === 0) break;
      continue;
    }
    const templates = nodePools
      .filter((np) => nodeClassByName.has(np.spec.template.spec.nodeClassRef.name))
      .map((np) => buildNodePoolTemplate(np, available.get(np.spec.template.spec.nodeClassRef.name) ?? [], daemonSets, usageOf(np.metadata.name, liveClaims, typesByClass)));
    const schedulingPods: SchedulingPod[] = pending.map((p) => toSchedulingPod(p, p.createdAt));
    const daemonByPool = new Map(templates.map((t) => [t.name, t.daemonOverhead] as const));
    const existing = existingCapacity(nodes, pods, liveClaims, inFlight, podsByKey, typesByClass, daemonByPool);

    const results = solve(schedulingPods, templates, existing);
    unschedulable = withMissingNodeClasses(results.unschedulable, nodePools, nodeClassByName);

    const byKey = new Map(schedulingPods.map((p) => [p.key, p]));
    for (const { pod, target } of results.existing) {
      nominated[pod] = target;
      const claim = liveClaims.find((c) => c.name === target);
      if (claim) await nominate(deps, claim, pod, byKey.get(pod)?.requests ?? {});
      else toNodes.add(pod);
    }
    // Limits are re-checked against actual usage before each launch (the solve reserved optimistically).
    const remaining = new Map(templates.map((t) => [t.name, t.remaining] as const));
    const overLimit: UnschedulablePod[] = [];
    for (const plan of results.newNodeClaims) {
      const types = available.get(plan.nodeClass) ?? [];
      const limit = remaining.get(plan.nodePool);
      const allowed = limit ? types.filter((t) => withinLimits(add(t.capacity, { nodes: 1 }), limit)) : types;
      if (!plan.instanceTypes.some((o) => allowed.some((t) => t.name === o.name))) {
        // Karpenter checks limits again when it creates a NodeClaim and creates nothing when they are exceeded.
        const planned = types.filter((t) => plan.instanceTypes.some((o) => o.name === t.name));
        const why = limit ? limitsReason(planned, limit) : `the NodePool's limits are reached; raise spec.limits or free capacity in the NodePool`;
        for (const pod of plan.pods) overLimit.push({ pod, reason: `NodePool ${plan.nodePool}: ${why}`, nodePools: { [plan.nodePool]: why } });
        continue;
      }
      const claim = await createNodeClaim(deps, plan, now, claims);
      if (!claim) continue;
      for (const pod of plan.pods) nominated[pod] = claim.name;
      const outcome = await launchPending(deps, claim, allowed, nodes, now);
      capacityErrors += record(outcome, claim.name, launched, failed, retry, superseded);
      if (outcome.kind === 'superseded') for (const pod of plan.pods) delete nominated[pod];
      if (outcome.kind === 'launched' && limit) {
        const type = types.find((t) => t.name === outcome.instanceType);
        remaining.set(plan.nodePool, subtractOnKeysOf(limit, add(type?.capacity ?? {}, { nodes: 1 })));
      }
    }
    unschedulable = [...unschedulable, ...overLimit];
    if (capacityErrors === 0) break;
    // Gave way in the last round: the pods may have no NodeClaim now, so the batch is retried.
    if (round === MAX_ROUNDS - 1) retry.push(...superseded);
  }

  for (const u of unschedulable) {
    const [namespace, name] = u.pod.split('/');
    await deps.cluster.recordEvent({
      type: 'Warning',
      reason: 'FailedScheduling',
      object: `Pod/${namespace}/${name}`,
      message: u.reason,
      details: { nodePools: u.nodePools },
    });
  }
  for (const [pod, target] of Object.entries(nominated)) {
    const [namespace, name] = pod.split('/');
    // Karpenter's wording: "Pod should schedule on: nodeclaim/<name>" (or node/<name> for an existing node).
    const kind = toNodes.has(pod) ? 'node' : 'nodeclaim';
    await deps.cluster.recordEvent({ type: 'Normal', reason: 'Nominated', object: `Pod/${namespace}/${name}`, message: `Pod should schedule on: ${kind}/${target}` });
  }
  if (retry.length === 0) await deps.passes.recordCompleted(startedAt);
  return { launched, failed, nominated, unschedulable, retry };
}

/** Adds, for every NodePool whose EC2NodeClass does not exist, why it cannot serve the pod. */
function withMissingNodeClasses(
  unschedulable: readonly UnschedulablePod[],
  nodePools: readonly NodePoolLike[],
  nodeClasses: ReadonlyMap<string, unknown>,
): UnschedulablePod[] {
  const missing = nodePools.filter((np) => !nodeClasses.has(np.spec.template.spec.nodeClassRef.name));
  if (missing.length === 0) return [...unschedulable];
  const reasons = Object.fromEntries(missing.map((np) => [np.metadata.name, `its EC2NodeClass ${np.spec.template.spec.nodeClassRef.name} does not exist`]));
  const onlyMissing = missing.length === nodePools.length;
  return unschedulable.map((u) => ({
    ...u,
    reason: onlyMissing ? `no NodePool can launch nodes: ${Object.entries(reasons).map(([pool, why]) => `NodePool ${pool}: ${why}`).join('; ')}` : u.reason,
    nodePools: { ...u.nodePools, ...reasons },
  }));
}

/**
 * A pod Skiff provisions for: kube-scheduler marked it Unschedulable, it is not bound, and it is not a DaemonSet
 * pod (Karpenter `IsProvisionable`).
 */
export function isProvisionable(pod: ClusterPod): boolean {
  return pod.phase === 'Pending' && pod.unschedulable && !pod.nodeName && !pod.owner?.startsWith('DaemonSet/');
}

/** The instance-type query an EC2NodeClass implies (kubelet settings and root volume size change allocatable). */
export function instanceTypeQuery(nodeClass: EC2NodeClassLike): InstanceTypeQuery {
  const root = nodeClass.spec.blockDeviceMappings?.find((m) => m.rootVolume) ?? nodeClass.spec.blockDeviceMappings?.find((m) => m.deviceName === '/dev/xvda');
  const size = root?.ebs?.volumeSize;
  return {
    nodeClass: nodeClass.metadata.name,
    ...(nodeClass.spec.kubelet ? { kubelet: nodeClass.spec.kubelet } : {}),
    ...(size !== undefined ? { rootVolumeGiB: gibOf(size) } : {}),
  };
}

/** A volume size quantity (`50Gi`, `100G`, bytes as a number) in GiB. @throws {QuantityError} when malformed (schemas reject this earlier). */
function gibOf(size: string | number): number {
  return mebibytes(size) / 1024;
}

/** Karpenter's registration timeout: a NodeClaim whose node has not registered 15 minutes after launch is not coming. */
export const REGISTRATION_TTL_MS = 15 * 60 * 1000;

/**
 * A NodeClaim whose capacity is still coming: live, not yet initialized, launched (or created, while the launch is
 * pending) less than {@link REGISTRATION_TTL_MS} ago, and whose node is not Ready yet (a registered node turns
 * Ready after the lifecycle controller registers it). Pods nominated to it are not solved again; a NodeClaim whose
 * node came and went is not capacity.
 */
function isInFlight(claim: NodeClaim, nodes: readonly ClusterNode[], now: number): boolean {
  if (claim.state === 'Initialized' || claim.initializedAt) return false;
  if (claim.registeredAt && !nodeOf(claim, nodes)) return false;
  const since = Date.parse(claim.launchedAt ?? claim.createdAt);
  if (now - since > REGISTRATION_TTL_MS) return false;
  return !nodeOf(claim, nodes)?.ready;
}

/** The node a NodeClaim became, matched by providerID. */
function nodeOf(claim: NodeClaim, nodes: readonly ClusterNode[]): ClusterNode | undefined {
  return claim.providerId ? nodes.find((n) => n.providerId === claim.providerId) : undefined;
}

/** Capacity of a NodePool's live NodeClaims (for limits): the launched type's capacity, or the first option's. */
function usageOf(nodePool: string, claims: readonly NodeClaim[], typesByClass: ReadonlyMap<string, InstanceType[]>): ResourceList {
  let usage: ResourceList = {};
  for (const c of claims) {
    if (c.nodePool !== nodePool) continue;
    const name = c.instanceType ?? c.instanceTypes[0];
    const type = typesByClass.get(c.nodeClass)?.find((t) => t.name === name);
    usage = add(usage, type?.capacity ?? {}, { nodes: 1 });
  }
  return usage;
}

/** Taints that never block scheduling on capacity that is still coming up. */
const EPHEMERAL_TAINTS = new Set([UNREGISTERED_TAINT_KEY, 'node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable', 'node.cloudprovider.kubernetes.io/uninitialized']);

/**
 * Nodes and in-flight NodeClaims with the room left after the pods bound or nominated to them.
 */
function existingCapacity(
  nodes: readonly ClusterNode[],
  pods: readonly ClusterPod[],
  claims: readonly NodeClaim[],
  inFlight: readonly NodeClaim[],
  podsByKey: ReadonlyMap<string, ClusterPod>,
  typesByClass: ReadonlyMap<string, InstanceType[]>,
  daemonByPool: ReadonlyMap<string, ResourceList>,
): ExistingCapacity[] {
  const out: ExistingCapacity[] = [];
  const claimByProvider = new Map(claims.filter((c) => c.providerId).map((c) => [c.providerId!, c]));
  const bound = new Map<string, ClusterPod[]>();
  for (const p of pods) if (p.nodeName && (p.phase === 'Pending' || p.phase === 'Running')) bound.set(p.nodeName, [...(bound.get(p.nodeName) ?? []), p]);
  for (const node of nodes) {
    if (node.taints.some((t) => t.key === 'karpenter.sh/disrupted')) continue;
    const claim = claimByProvider.get(node.providerId);
    const onNode = bound.get(node.name) ?? [];
    const nominatedPending = (claim?.nominatedPods ?? []).map((k) => podsByKey.get(k)).filter((p): p is ClusterPod => !!p && !p.nodeName && p.phase === 'Pending');
    const used = add(...onNode.map((p) => podRequests(p.spec)), ...nominatedPending.map((p) => podRequests(p.spec)));
    const startup = new Set((claim?.startupTaints ?? []).map((t) => t.key));
    out.push({
      name: node.name,
      kind: 'node',
      ...(claim ? { nodePool: claim.nodePool } : node.labels[LABEL_NODEPOOL] ? { nodePool: node.labels[LABEL_NODEPOOL] } : {}),
      labels: node.labels,
      taints: node.taints.filter((t) => !EPHEMERAL_TAINTS.has(t.key) && !startup.has(t.key)),
      available: subtract(node.allocatable, used),
      hostPorts: onNode.flatMap((p) => podHostPorts(p.spec)),
      pods: [...onNode, ...nominatedPending].map(placedPod),
    });
  }
  for (const claim of inFlight) {
    if (!claim.instanceType || !claim.zone || !claim.capacityType || !claim.allocatable) continue;
    if (nodeOf(claim, nodes)) continue;
    const type = typesByClass.get(claim.nodeClass)?.find((t) => t.name === claim.instanceType);
    const nominatedPods = claim.nominatedPods.map((k) => podsByKey.get(k)).filter((p): p is ClusterPod => !!p && !p.nodeName && p.phase === 'Pending');
    out.push({
      name: claim.name,
      kind: 'nodeClaim',
      nodePool: claim.nodePool,
      labels: { ...(type?.labels ?? {}), ...claim.labels, [LABEL_ZONE]: claim.zone, [LABEL_CAPACITY_TYPE]: claim.capacityType },
      taints: claim.taints,
      available: subtract(claim.allocatable, add(daemonByPool.get(claim.nodePool) ?? {}, ...nominatedPods.map((p) => podRequests(p.spec)))),
      hostPorts: nominatedPods.flatMap((p) => podHostPorts(p.spec)),
      pods: nominatedPods.map(placedPod),
    });
  }
  return out;
}

/**
 * Adds `pod` (and its requests) to an in-flight NodeClaim's nominations, so the next pass counts its room as taken
 * (conditional update; a conflict means someone else updated it — skip).
 */
async function nominate(deps: ProvisionDeps, claim: NodeClaim, pod: string, requests: ResourceList): Promise<void> {
  const fresh = await deps.store.get(claim.name);
  if (!fresh || !isLive(fresh) || fresh.nominatedPods.includes(pod)) return;
  try {
    await deps.store.update({ ...fresh, nominatedPods: [...fresh.nominatedPods, pod], resources: add(fresh.resources, requests) });
  } catch (e) {
    if (!isConflictError(e)) throw e;
  }
}

/**
 * Writes the Pending record (step 1 of the launch protocol) under the decision's name ({@link nodeClaimName}).
 * When the record exists already, an overlapping pass made the same decision: its record is returned and this pass
 * joins its launch. A different NodeClaim under that name (a hash collision) gets a random name instead.
 * @param claims every NodeClaim record, as the round read them
 * @returns the record, or undefined when the decision's record is over (failed or deleted: the next round re-solves)
 */
async function createNodeClaim(deps: ProvisionDeps, plan: NodeClaimPlan, now: number, claims: readonly NodeClaim[]): Promise<NodeClaim | undefined> {
  // Drawn every time so the generated names of a run do not depend on whether a collision happened.
  const fallback = `${plan.nodePool}-${deps.ids()}`;
  const name = nodeClaimName(plan.nodePool, plan.pods, claims);
  const created = await createRecord(deps, plan, now, name);
  if (created) return created;
  const existing = await deps.store.get(name);
  if (existing && existing.nodePool === plan.nodePool && sameMembers(existing.nominatedPods, plan.pods)) return isLive(existing) ? existing : undefined;
  return createRecord(deps, plan, now, fallback);
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

/** 32-bit FNV-1a hash of a string. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

function sameMembers(a: readonly string[], b: readonly string[]): boolean {
  const set = new Set(a);
  return set.size === new Set(b).size && b.every((x) => set.has(x));
}

/** The conditional create; undefined when a record with that name exists. */
async function createRecord(deps: ProvisionDeps, plan: NodeClaimPlan, now: number, name: string): Promise<NodeClaim | undefined> {
  try {
    return await deps.store.create({
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

type LaunchOutcome =
  | { kind: 'launched'; instanceType: string }
  | { kind: 'capacity'; error: string }
  | { kind: 'failed'; error: string }
  | { kind: 'throttled' }
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
async function launchPending(deps: ProvisionDeps, claim: NodeClaim, types: readonly InstanceType[], nodes: readonly ClusterNode[], now: number): Promise<LaunchOutcome> {
  let current = claim;
  if (!isCommitted(current)) {
    const pods = new Set(current.nominatedPods);
    const rival = (await deps.store.list()).find((c) => c.name !== current.name && isLive(c) && isInFlight(c, nodes, now) && c.nominatedPods.some((p) => pods.has(p)));
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
async function supersede(deps: ProvisionDeps, claim: NodeClaim, by: string): Promise<void> {
  try {
    await deps.store.update({ ...claim, state: 'Failed', launchError: 'Superseded', deletionReason: 'LaunchFailed', deletedAt: new Date(deps.clock.now()).toISOString() });
  } catch (e) {
    if (!isConflictError(e)) throw e;
    return;
  }
  await deps.cluster.recordEvent({ type: 'Normal', reason: 'Superseded', object: `NodeClaim/${claim.name}`, message: `NodeClaim ${claim.name} was not launched: NodeClaim ${by} is already coming up for some of its pods` });
}

/** Steps 2–3 of the launch protocol for one committed NodeClaim. */
async function launch(deps: ProvisionDeps, claim: NodeClaim, types: readonly InstanceType[]): Promise<LaunchOutcome> {
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
    if (isThrottledError(e)) return { kind: 'throttled' };
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
async function recordInstance(deps: ProvisionDeps, name: string, instance: LaunchedInstance, types: readonly InstanceType[]): Promise<LaunchOutcome> {
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

async function markCapacityError(deps: ProvisionDeps, e: InsufficientCapacityError): Promise<void> {
  const until = deps.clock.now() + UNAVAILABLE_OFFERING_TTL_MS;
  for (const o of e.offerings) {
    await deps.unavailableOfferings.markUnavailable(o, until, e.errorCode);
  }
}

/** Marks the NodeClaim failed (its pods are solved again: a failed claim is not live). */
async function fail(deps: ProvisionDeps, claim: NodeClaim, error: string, capacity = false): Promise<void> {
  const fresh = (await deps.store.get(claim.name)) ?? claim;
  if (!isLive(fresh)) return;
  try {
    await deps.store.update({ ...fresh, state: 'Failed', launchError: error, deletionReason: 'LaunchFailed', deletedAt: new Date(deps.clock.now()).toISOString() });
  } catch (e) {
    if (!isConflictError(e)) throw e;
  }
  await deps.cluster.recordEvent({
    type: 'Warning',
    reason: capacity ? 'InsufficientCapacityError' : 'LaunchFailed',
    object: `NodeClaim/${claim.name}`,
    message: `NodeClaim ${claim.name} failed to launch (${error}) for requests ${formatResources(claim.resources)}`,
  });
}

/** Adds an outcome to the report's lists; returns 1 when the pods need another solve round (capacity, gave way). */
function record(outcome: LaunchOutcome, name: string, launched: string[], failed: { nodeClaim: string; error: string }[], retry: string[], superseded: string[]): number {
  switch (outcome.kind) {
    case 'launched':
      launched.push(name);
      return 0;
    case 'capacity':
      failed.push({ nodeClaim: name, error: outcome.error });
      return 1;
    case 'failed':
      failed.push({ nodeClaim: name, error: outcome.error });
      return 0;
    case 'throttled':
      retry.push(name);
      return 0;
    case 'superseded':
      superseded.push(name);
      return 1;
    case 'gone':
      return 0;
    default:
      return outcome satisfies never;
  }
}
