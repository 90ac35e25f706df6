/**
 * The interruption controller: what Skiff does about one interruption-queue message (EventBridge → SQS), following
 * Karpenter's action table (aws `pkg/controllers/interruption/controller.go`, `utils.go actionForMessage`;
 * docs/karpenter-semantics.md#interruption):
 *
 * | message                              | action                                   | Event                                  |
 * |--------------------------------------|------------------------------------------|----------------------------------------|
 * | spot interruption warning            | CordonAndDrain; (type, zone, spot) unavailable for 3 min | `SpotInterrupted`       |
 * | capacity reservation interruption    | CordonAndDrain                           | `CapacityReservationInstanceInterrupted` |
 * | AWS Health scheduled change (EC2)    | CordonAndDrain                           | `InstanceUnhealthy`                    |
 * | state change stopping / stopped      | CordonAndDrain                           | `InstanceStopping`                     |
 * | state change shutting-down / terminated | CordonAndDrain                        | `InstanceTerminating`                  |
 * | state change pending / running       | none                                     | —                                      |
 * | rebalance recommendation             | none                                     | `SpotRebalanceRecommendation`          |
 *
 * CordonAndDrain, for the NodeClaim owning the instance (looked up by instance id):
 * 1. (spot warning) mark the offering unavailable for {@link UNAVAILABLE_OFFERING_TTL_MS}, so nothing relaunches into
 *    the pool that was just reclaimed;
 * 2. note the pods on the node, then `disruptNow(…, 'Interrupted')`: Draining at once, no budget (interruption is
 *    forceful), node tainted `karpenter.sh/disrupted`, pods evicted through the Eviction API (PDBs still answer until
 *    the instance is gone), and when the node is empty the record Deleted, the instance terminated, the Node deleted;
 *    later disruption passes finish a drain this one could not;
 * 3. launch replacements for the noted pods at once, in parallel with the drain (a spot instance has two minutes):
 *    the solver places them on the remaining capacity and the NodePools' offerings (the marked one excluded), and each
 *    new NodeClaim goes through the launch protocol under a name derived from the interrupted NodeClaim, carrying
 *    `replacementFor` — so a duplicate message or a retry after a crash never launches twice. The pods' controllers
 *    recreate the evicted pods; kube-scheduler marks them Unschedulable and the provisioner finds the replacements in
 *    flight with room for them (Karpenter gets the same effect by counting pods on deleting nodes as pending). A retry
 *    after the pods were evicted plans nothing: the provisioner serves the recreated pods;
 * 4. record the replacements on the interrupted NodeClaim's `disruption.replacements` (conditional update), so the
 *    Result's `disruptions[].replacement` names them;
 * 5. run the injected provisioning pass, if any, for whatever is pending by then.
 *
 * An instance no NodeClaim owns is ignored (reported). Idempotent: a second delivery finds the NodeClaim Deleting
 * (drains it further, launches nothing new) or Deleted (ignored).
 */
import type { InterruptionMessage, InterruptionMessageKind } from '../core/api/interruption-events.js';
import { isLive, type NodeClaim } from '../core/api/nodeclaim.js';
import { isConflictError } from '../core/errors.js';
import { fnv1a } from '../core/hash.js';
import { offeringKey, withUnavailable, type InstanceType } from '../core/instancetypes/offering.js';
import type { OfferingKey } from '../core/instancetypes/offering-key.js';
import { buildNodePoolTemplate } from '../core/provisioning/nodepool-template.js';
import { toSchedulingPod } from '../core/provisioning/pod.js';
import { withinLimits } from '../core/provisioning/limits.js';
import { solve } from '../core/provisioning/scheduler.js';
import type { NodeClaimPlan } from '../core/provisioning/types.js';
import { add } from '../core/resources/resource-list.js';
import type { ClusterPod } from '../ports/cluster.js';
import type { DisruptionDeps } from './disruption/deps.js';
import { disruptNow } from './disruption/disrupt.js';
import { UNAVAILABLE_OFFERING_TTL_MS, createNodeClaimRecord, existingCapacity, instanceTypeQuery, isInFlight, launchPending, usageOf } from './launch.js';
import { nodeClaimExtras } from './nodeclaim-extras.js';
import type { ProvisionReport } from './provision.js';
import { recordEventBestEffort } from './events.js';
import { isOwnedByNode } from '../core/api/pod-owner.js';

/** Why an unavailable-offering mark was set by a spot interruption (shown where the marks are listed). */
export const SPOT_INTERRUPTION_REASON = 'SpotInterruption';

/** Everything the controller needs, as ports: the disruption controller's, plus an optional provisioning pass. */
export interface InterruptionDeps extends DisruptionDeps {
  /**
   * Runs one provisioning pass (the composition root binds the provision controller). Called after the drain started
   * so pods already pending get capacity without waiting for their pod events; the displaced pods' own replacements
   * are launched by this controller before that.
   * @default none (the relay's pod events trigger the provisioner)
   */
  readonly provision?: () => Promise<ProvisionReport>;
}

/** Karpenter's action for a message (aws `interruption/utils.go`). */
export type InterruptionAction = 'CordonAndDrain' | 'NoAction';

/** What happened for one instance of a message. */
export type InstanceOutcome =
  | {
      /** The NodeClaim was disrupted (or its disruption driven further). */
      readonly kind: 'acted';
      readonly instanceId: string;
      readonly nodeClaim: string;
      /** The Kubernetes Event reason recorded, e.g. `SpotInterrupted`. */
      readonly reason: string;
      /** The offering marked unavailable (spot warnings only). */
      readonly markedUnavailable?: OfferingKey;
      /** NodeClaims launched (now or by an earlier delivery) to take the node's pods. */
      readonly replacements: readonly string[];
      /** Pods evicted by this call (`ns/name`). */
      readonly evicted: readonly string[];
      /** True when the NodeClaim was deleted by this call (its node was already empty). */
      readonly deleted: boolean;
    }
  | {
      /** Nothing to do (rebalance recommendation, an instance starting): at most an Event. */
      readonly kind: 'noAction';
      readonly instanceId: string;
      readonly nodeClaim: string;
      /** The Event reason recorded, if any. */
      readonly reason?: string;
    }
  | {
      /** Not Skiff's instance, or its NodeClaim is already over. */
      readonly kind: 'ignored';
      readonly instanceId: string;
      readonly why: string;
    };

/** What one message did. */
export interface InterruptionReport {
  /** The message kind. */
  readonly kind: InterruptionMessageKind;
  /** The EventBridge event id. */
  readonly id: string;
  readonly action: InterruptionAction;
  /** One entry per instance the message names. */
  readonly instances: readonly InstanceOutcome[];
  /** Launched by the provisioning pass run after the drain (empty without one). */
  readonly provisioned: readonly string[];
}

/**
 * Karpenter's action and Event reason for a message (aws `interruption/utils.go actionForMessage`, event reasons from
 * `interruption/events/events.go`).
 */
export function actionFor(message: InterruptionMessage): { readonly action: InterruptionAction; readonly reason?: string } {
  switch (message.kind) {
    case 'spotInterruption':
      return { action: 'CordonAndDrain', reason: 'SpotInterrupted' };
    case 'capacityReservationInterruption':
      return { action: 'CordonAndDrain', reason: 'CapacityReservationInstanceInterrupted' };
    case 'scheduledChange':
      return { action: 'CordonAndDrain', reason: 'InstanceUnhealthy' };
    case 'stateChange':
      if (message.state === 'stopping' || message.state === 'stopped') return { action: 'CordonAndDrain', reason: 'InstanceStopping' };
      if (message.state === 'shutting-down' || message.state === 'terminated') return { action: 'CordonAndDrain', reason: 'InstanceTerminating' };
      return { action: 'NoAction' };
    case 'rebalanceRecommendation':
      return { action: 'NoAction', reason: 'SpotRebalanceRecommendation' };
    case 'ignored':
      return { action: 'NoAction' };
    default:
      return message satisfies never;
  }
}

/**
 * Handles one parsed interruption message (see the module comment). Safe to repeat and to overlap with itself, the
 * provisioner and the disruption and lifecycle passes: every record write is conditional, launches go through the
 * launch protocol.
 * @throws whatever the ports throw for failures other than conflicts (the message is then retried)
 * @example
 * const report = await handleInterruption(deps, parsed.message);
 */
export async function handleInterruption(deps: InterruptionDeps, message: InterruptionMessage): Promise<InterruptionReport> {
  const { action, reason } = actionFor(message);
  const instances: InstanceOutcome[] = [];
  for (const instanceId of message.instanceIds) {
    const claim = await deps.store.findByInstanceId(instanceId);
    if (!claim) {
      instances.push({ kind: 'ignored', instanceId, why: 'no NodeClaim owns this instance (not launched by Skiff)' });
      continue;
    }
    if (!isLive(claim)) {
      instances.push({ kind: 'ignored', instanceId, why: `NodeClaim ${claim.name} is already ${claim.state}` });
      continue;
    }
    if (action === 'NoAction') {
      if (reason) await recordEvent(deps, claim, reason, describe(message, instanceId, claim));
      instances.push({ kind: 'noAction', instanceId, nodeClaim: claim.name, ...(reason ? { reason } : {}) });
      continue;
    }
    instances.push(await cordonAndDrain(deps, message, instanceId, claim, reason ?? 'Interrupted'));
  }
  let provisioned: readonly string[] = [];
  if (deps.provision && instances.some((i) => i.kind === 'acted')) provisioned = (await deps.provision()).launched;
  return { kind: message.kind, id: message.id, action, instances, provisioned };
}

/** Steps 1–4 of CordonAndDrain for one NodeClaim. */
async function cordonAndDrain(deps: InterruptionDeps, message: InterruptionMessage, instanceId: string, claim: NodeClaim, reason: string): Promise<InstanceOutcome> {
  const now = deps.clock.now();
  const text = describe(message, instanceId, claim);
  let marked: OfferingKey | undefined;
  if (message.kind === 'spotInterruption' && claim.instanceType && claim.zone) {
    // Karpenter marks the spot offering (type, zone) unavailable for the ICE cache's TTL, 3 minutes.
    marked = { instanceType: claim.instanceType, zone: claim.zone, capacityType: 'spot' };
    await deps.unavailableOfferings.markUnavailable(marked, now + UNAVAILABLE_OFFERING_TTL_MS, SPOT_INTERRUPTION_REASON);
  }
  await recordEvent(deps, claim, reason, text);
  // The pods to move, read before the drain evicts them (their controllers recreate them under new names).
  const displaced = await displacedPods(deps, claim);
  const drained = await disruptNow(deps, claim.name, 'Interrupted', text);
  const replacements = await launchReplacements(deps, claim.name, displaced, now);
  await recordReplacements(deps, claim.name, replacements);
  return {
    kind: 'acted',
    instanceId,
    nodeClaim: claim.name,
    reason,
    ...(marked ? { markedUnavailable: marked } : {}),
    replacements,
    evicted: drained.evicted,
    deleted: drained.deleted.some((d) => d.nodeClaim === claim.name),
  };
}

/** The pods on the NodeClaim's node that must move (none when it has no node). */
async function displacedPods(deps: InterruptionDeps, claim: NodeClaim): Promise<ClusterPod[]> {
  if (!claim.providerId) return [];
  const [nodes, pods] = await Promise.all([deps.cluster.listNodes(), deps.cluster.listPods()]);
  const node = nodes.find((n) => n.providerId === claim.providerId);
  return node ? pods.filter((p) => p.nodeName === node.name && isDisplaced(p)) : [];
}

/**
 * Launches (or resumes) the NodeClaims that take the interrupted node's pods, after the drain started (the node is
 * tainted, so the solve does not count it). Plans only once: when NodeClaims replacing this one exist already (an
 * earlier delivery), they are resumed, not planned again; a NodeClaim draining for another reason (expiration) gets
 * none.
 * @param displaced the node's pods as they were before the drain
 * @returns the names of the live replacements
 */
async function launchReplacements(deps: InterruptionDeps, name: string, displaced: readonly ClusterPod[], now: number): Promise<string[]> {
  const [claims, nodes, pods, unavailable, pools, classes, daemonSets] = await Promise.all([
    deps.store.list(),
    deps.cluster.listNodes(),
    deps.cluster.listPods(),
    deps.unavailableOfferings.listUnavailable(now),
    deps.cluster.listNodePools(),
    deps.cluster.listNodeClasses(),
    deps.cluster.listDaemonSets(),
  ]);
  const typesByClass = new Map<string, InstanceType[]>();
  const unavailableKeys = new Set(unavailable.map(offeringKey));
  for (const nc of classes) typesByClass.set(nc.metadata.name, withUnavailable(await deps.cloud.getInstanceTypes(instanceTypeQuery(nc)), unavailableKeys));

  const existing = claims.filter((c) => isLive(c) && c.replacementFor?.includes(name));
  if (existing.length > 0) {
    for (const r of existing) if (r.state === 'Pending' && !r.instanceId) await launchPending(deps, r, typesByClass.get(r.nodeClass) ?? [], nodes, now);
    return existing.map((r) => r.name);
  }
  const claim = claims.find((c) => c.name === name);
  if (!claim || displaced.length === 0 || claim.disruption?.reason !== 'Interrupted') return [];
  const node = claim.providerId ? nodes.find((n) => n.providerId === claim.providerId) : undefined;

  const live = claims.filter(isLive);
  // The interrupted NodeClaim, like every other one being deleted, no longer counts toward its NodePool's limits
  // (`usageOf`: Karpenter leaves nodes marked for deletion out of a NodePool's usage), so its replacement launches now.
  const staying = live.filter((c) => c.name !== claim.name);
  const classByName = new Map(classes.map((c) => [c.metadata.name, c]));
  const templates = pools
    .filter((np) => classByName.has(np.spec.template.spec.nodeClassRef.name))
    .map((np) => buildNodePoolTemplate(np, typesByClass.get(np.spec.template.spec.nodeClassRef.name) ?? [], daemonSets, usageOf(np.metadata.name, staying, typesByClass)));
  const inFlight = live.filter((c) => isInFlight(c, nodes, now));
  const podsByKey = new Map(pods.map((p) => [`${p.namespace}/${p.name}`, p]));
  const daemonByPool = new Map(templates.map((t) => [t.name, t] as const));
  const capacity = existingCapacity(
    nodes.filter((n) => n.name !== node?.name),
    pods,
    live,
    inFlight,
    podsByKey,
    typesByClass,
    daemonByPool,
    { now },
  );
  const results = solve(
    displaced.map((p) => toSchedulingPod(p, p.createdAt)),
    templates,
    capacity,
  );

  const launched: string[] = [];
  for (const [i, plan] of results.newNodeClaims.entries()) {
    const template = templates.find((t) => t.name === plan.nodePool);
    const types = typesByClass.get(plan.nodeClass) ?? [];
    const allowed = template?.remaining ? types.filter((t) => withinLimits(add(t.capacity, { nodes: 1 }), template.remaining!)) : types;
    if (!plan.instanceTypes.some((o) => allowed.some((t) => t.name === o.name))) continue; // limits reached: the provisioner reports it
    const name = replacementName(plan, claim.name, i);
    const pool = pools.find((np) => np.metadata.name === plan.nodePool);
    const extras = { ...(pool ? nodeClaimExtras(pool, classByName.get(plan.nodeClass)) : {}), replacementFor: [claim.name] };
    const withinLimit = template?.remaining ? { ...plan, instanceTypes: plan.instanceTypes.filter((o) => allowed.some((t) => t.name === o.name)) } : plan;
    const record = (await createNodeClaimRecord(deps, withinLimit, now, name, extras)) ?? (await deps.store.get(name));
    if (!record || !isLive(record)) continue;
    launched.push(record.name);
    if (!record.instanceId) await launchPending(deps, record, allowed, nodes, now);
  }
  return launched;
}

/** `<nodePool>-i<5 characters>` from the interrupted NodeClaim and the plan's index: the same on every delivery. */
function replacementName(plan: NodeClaimPlan, interrupted: string, index: number): string {
  return `${plan.nodePool}-i${fnv1a(`interrupted|${interrupted}|${index}`).toString(36).slice(0, 5)}`;
}

/**
 * A pod that must move when its node goes: running or pending, neither a DaemonSet's nor a mirror (static) pod
 * (those die with the node; Karpenter core `pkg/utils/pod/scheduling.go` `IsReschedulable`).
 */
function isDisplaced(pod: ClusterPod): boolean {
  return (pod.phase === 'Running' || pod.phase === 'Pending') && !pod.owner?.startsWith('DaemonSet/') && !isOwnedByNode(pod.owner);
}

/** Records the replacements on the interrupted NodeClaim's disruption (conditional update, retried on conflict). */
async function recordReplacements(deps: InterruptionDeps, name: string, replacements: readonly string[]): Promise<void> {
  if (replacements.length === 0) return;
  for (let attempt = 0; attempt < 5; attempt++) {
    const fresh = await deps.store.get(name);
    const d = fresh?.disruption;
    if (!fresh || !d || d.reason !== 'Interrupted') return;
    const merged = [...new Set([...d.replacements, ...replacements])];
    if (merged.length === d.replacements.length) return;
    try {
      await deps.store.update({ ...fresh, disruption: { ...d, replacements: merged } });
      return;
    } catch (e) {
      if (!isConflictError(e)) throw e;
    }
  }
}

async function recordEvent(deps: InterruptionDeps, claim: NodeClaim, reason: string, message: string): Promise<void> {
  const type = reason === 'SpotRebalanceRecommendation' ? 'Normal' : 'Warning';
  await recordEventBestEffort(deps.cluster, { type, reason, object: `NodeClaim/${claim.name}`, message });
}

/** The Event message for a message about one instance. */
function describe(message: InterruptionMessage, instanceId: string, claim: NodeClaim): string {
  const of = `instance ${instanceId} of NodeClaim ${claim.name}${claim.instanceType ? ` (${claim.instanceType}, ${claim.zone ?? '?'}, ${claim.capacityType ?? '?'})` : ''}`;
  switch (message.kind) {
    case 'spotInterruption':
      return `Spot interruption warning for ${of}: EC2 will ${message.action} it in 2 minutes`;
    case 'capacityReservationInterruption':
      return `Capacity Reservation interruption warning for ${of}`;
    case 'scheduledChange':
      return `AWS Health scheduled change ${message.eventTypeCode} for ${of}${message.startTime ? ` starting ${message.startTime}` : ''}`;
    case 'stateChange':
      return `${of} is ${message.state}`;
    case 'rebalanceRecommendation':
      return `Rebalance recommendation for ${of}: elevated risk of spot interruption`;
    case 'ignored':
      return message.why;
    default:
      return message satisfies never;
  }
}
