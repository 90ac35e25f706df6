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
 * - a NodeClaim's name is derived from its decision (`nodeClaimName` in `launch.ts`: NodePool, pods, and the NodeClaims
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
import { isLive, type NodeClaim } from '../core/api/nodeclaim.js';
import { isConflictError, isThrottledError } from '../core/errors.js';
import { offeringKey, withUnavailable, type InstanceType } from '../core/instancetypes/offering.js';
import { limitsReason } from '../core/provisioning/diagnosis.js';
import { buildNodePoolTemplate, type DaemonSetLike, type NodePoolLike } from '../core/provisioning/nodepool-template.js';
import { toSchedulingPod, type SchedulingPod } from '../core/provisioning/pod.js';
import { withinLimits } from '../core/provisioning/limits.js';
import { solve } from '../core/provisioning/scheduler.js';
import type { UnschedulablePod } from '../core/provisioning/types.js';
import { add, subtractOnKeysOf, type ResourceList } from '../core/resources/resource-list.js';
import type { CloudProvider } from '../ports/cloud-provider.js';
import type { Clock } from '../ports/clock.js';
import type { Cluster, ClusterPod } from '../ports/cluster.js';
import type { IdGenerator } from '../ports/ids.js';
import type { NodeClaimStore } from '../ports/nodeclaim-store.js';
import { FOLLOW_UP_AFTER_MS, type FollowUpPasses } from '../ports/follow-up-passes.js';
import type { ProvisioningPasses } from '../ports/provisioning-passes.js';
import type { UnavailableOfferings } from '../ports/unavailable-offerings.js';
import {
  LAUNCH_TIMEOUT_MS,
  createNodeClaim,
  existingCapacity,
  fail,
  instanceTypeQuery,
  isInFlight,
  launchPending,
  recordLaunchRetrying,
  usageOf,
  type EC2NodeClassLike,
  type LaunchOutcome,
} from './launch.js';
import { nodeClaimExtras } from './nodeclaim-extras.js';
import { recordEventBestEffort } from './events.js';
import { retryThrottled } from './retry.js';
import { isOwnedByNode } from '../core/api/pod-owner.js';

/** Solve rounds per invocation: the first, plus re-solves after capacity errors. */
export const MAX_ROUNDS = 3;

/**
 * How the provisioner plans (a setting of a simulation run, `skiff simulate --provisioning`): `skiff` (default) — plans
 * that survive kube-scheduler's binding; `karpenter` — Karpenter's own placement only, the baseline a simulation
 * compares with ({@link ProvisionDeps.bindingReplay}).
 */
export type ProvisioningSetting = 'skiff' | 'karpenter';

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
  /**
   * Whether plans must survive kube-scheduler's binding (`SolveOptions.surviveBinding`, `binding-replay.ts`): the
   * solve predicts where kube-scheduler's LeastAllocated scoring will bind the batch across existing, in-flight and new
   * capacity, and repairs the plan until every pod fits. `false` plans as Karpenter's provisioner does
   * (`pkg/controllers/provisioning/scheduling/scheduler.go`: it places pods by its own first fit only, and the pods
   * kube-scheduler then binds elsewhere are left pending for a later batch) — the Karpenter-like baseline of a
   * simulation (`skiff simulate --provisioning karpenter`). @default true
   */
  readonly bindingReplay?: boolean;
  /**
   * Where a pass asks for another provisioning pass {@link FOLLOW_UP_AFTER_MS} later: when it leaves pods unschedulable
   * while offerings are marked unavailable (insufficient capacity), so those pods are solved again soon after the
   * offerings' 3 minutes are up rather than at the relay's next re-list of pending pods (6 minutes). Karpenter requeues
   * every provisionable pod every 10 s (core `pkg/controllers/provisioning/controller.go` `Reconcile`,
   * `RequeueAfter: 10 * time.Second`). Each follow-up pass that still finds them so asks again, so the chain ends when
   * the pods are placed or no offering is unavailable any more. None when absent.
   */
  readonly followUps?: FollowUpPasses;
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
   * NodeClaims that gave way to an overlapping NodeClaim in the last round (their pods may have no NodeClaim now): the
   * caller should retry the batch.
   */
  readonly retry: readonly string[];
  /**
   * NodeClaims whose launch a throttled or unavailable API refused (EC2 `RequestLimitExceeded`, DynamoDB throughput, an
   * API server 5xx), with the error: their records stay `Pending` and the lifecycle controller launches them again, one
   * NodeClaim at a time, every pass until Karpenter's launch timeout ({@link LAUNCH_TIMEOUT_MS}). The batch needs no
   * retry for them. Absent in reports from before this field existed.
   */
  readonly retrying?: readonly { readonly nodeClaim: string; readonly error: string }[];
  /** Set when the trigger was already covered by a pass that started after it (nothing was done). */
  readonly coveredByPassAt?: number;
  /** The follow-up pass this pass asked for (ISO 8601 UTC), when it left pods unschedulable with offerings unavailable. */
  readonly followUpAt?: string;
  /** Why asking for that follow-up failed (the relay's re-list of pending pods still triggers a pass). */
  readonly followUpFailure?: string;
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
    const last = await retryThrottled(() => deps.passes.lastCompletedStart());
    if (last !== undefined && trigger.sentAtMs < last) return { launched: [], failed: [], nominated: {}, unschedulable: [], retry: [], coveredByPassAt: last };
  }
  const launched: string[] = [];
  const failed: { nodeClaim: string; error: string }[] = [];
  const nominated: Record<string, string> = {};
  const retry: string[] = [];
  const retrying: { nodeClaim: string; error: string }[] = [];
  /** Pods nominated to a registered node rather than a NodeClaim still coming up. */
  const toNodes = new Set<string>();
  let unschedulable: readonly UnschedulablePod[] = [];

  const [nodePools, nodeClasses, daemonSets] = await Promise.all([retryThrottled(() => deps.cluster.listNodePools()), retryThrottled(() => deps.cluster.listNodeClasses()), retryThrottled(() => deps.cluster.listDaemonSets())]);
  const nodeClassByName = new Map(nodeClasses.map((c) => [c.metadata.name, c]));
  const typesByClass = new Map<string, InstanceType[]>();
  for (const nc of nodeClasses) typesByClass.set(nc.metadata.name, await retryThrottled(() => deps.cloud.getInstanceTypes(instanceTypeQuery(nc))));

  /** Offerings marked unavailable as the last round read them, and the capacity errors that round met. */
  let unavailableCount = 0;
  let capacityErrorsLastRound = 0;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const now = deps.clock.now();
    const [pods, nodes, claims, unavailable] = await Promise.all([
      retryThrottled(() => deps.cluster.listPods()),
      retryThrottled(() => deps.cluster.listNodes()),
      retryThrottled(() => deps.store.list()),
      retryThrottled(() => deps.unavailableOfferings.listUnavailable(now)),
    ]);
    unavailableCount = unavailable.length;
    const unavailableKeys = new Set(unavailable.map(offeringKey));
    const available = new Map([...typesByClass].map(([k, v]) => [k, withUnavailable(v, unavailableKeys)]));
    const liveClaims = claims.filter(isLive);
    const podsByKey = new Map(pods.map((p) => [`${p.namespace}/${p.name}`, p]));

    // Resume launches a crash interrupted (record written, no instance recorded yet); give up on stale ones.
    let capacityErrors = 0;
    const superseded: string[] = [];
    for (const claim of liveClaims.filter((c) => c.state === 'Pending' && !c.instanceId)) {
      if (now - Date.parse(claim.createdAt) > LAUNCH_TIMEOUT_MS) {
        await retryThrottled(() => fail(deps, claim, 'LaunchTimeout'));
        continue;
      }
      const outcome = await launchIsolated(deps, claim, available.get(claim.nodeClass) ?? [], nodes, now);
      capacityErrors += record(outcome, claim.name, launched, failed, retrying, superseded);
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
    const daemonByPool = new Map(templates.map((t) => [t.name, t] as const));
    const existing = existingCapacity(nodes, pods, liveClaims, inFlight, podsByKey, typesByClass, daemonByPool, { now });

    // The solver's deadline (10 s by default) runs on the wall clock: a huge batch returns its best complete plan.
    const results = solve(schedulingPods, templates, existing, { now: () => performance.now(), surviveBinding: deps.bindingReplay !== false });
    unschedulable = withMissingNodeClasses(results.unschedulable, nodePools, nodeClassByName);

    const byKey = new Map(schedulingPods.map((p) => [p.key, p]));
    for (const { pod, target } of results.existing) {
      nominated[pod] = target;
      const claim = liveClaims.find((c) => c.name === target);
      if (claim) await retryThrottled(() => nominate(deps, claim, pod, byKey.get(pod)?.requests ?? {}));
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
        const why = limit ? limitsReason(planned, limit, templates.find((t) => t.name === plan.nodePool)?.limits) : `the NodePool's limits are reached; raise spec.limits or free capacity in the NodePool`;
        for (const pod of plan.pods) overLimit.push({ pod, reason: `NodePool ${plan.nodePool}: ${why}`, nodePools: { [plan.nodePool]: why } });
        continue;
      }
      const pool = nodePools.find((np) => np.metadata.name === plan.nodePool);
      // The record keeps only the options within the limits, so a launch resumed later (after throttling, a crash)
      // cannot pick one that breaches them: Karpenter's NodeClaim carries only the instance types its scheduler left
      // after `filterByRemainingResources` (core `pkg/controllers/provisioning/scheduling/scheduler.go`).
      const withinLimit = limit ? { ...plan, instanceTypes: plan.instanceTypes.filter((o) => allowed.some((t) => t.name === o.name)) } : plan;
      const claim = await retryThrottled(() => createNodeClaim(deps, withinLimit, now, claims, pool ? nodeClaimExtras(pool, nodeClassByName.get(plan.nodeClass)) : {}));
      if (!claim) continue;
      for (const pod of plan.pods) nominated[pod] = claim.name;
      const outcome = await launchIsolated(deps, claim, allowed, nodes, now);
      capacityErrors += record(outcome, claim.name, launched, failed, retrying, superseded);
      // A NodeClaim that gave way or failed to launch holds none of its pods: no Nominated Event for it (the pods are
      // solved again, and nominated to what launches, or reported unschedulable).
      if (outcome.kind === 'superseded' || outcome.kind === 'capacity' || outcome.kind === 'failed') for (const pod of plan.pods) delete nominated[pod];
      if (outcome.kind === 'launched' && limit) {
        const type = types.find((t) => t.name === outcome.instanceType);
        remaining.set(plan.nodePool, subtractOnKeysOf(limit, add(type?.capacity ?? {}, { nodes: 1 })));
      } else if (outcome.kind === 'throttled' && limit) {
        // Still Pending and launched again later: it holds its first option's share of the limits meanwhile, as the
        // next pass counts it (`usageOf`), so the plans after it in this pass cannot take that share too.
        const type = types.find((t) => t.name === withinLimit.instanceTypes[0]?.name);
        remaining.set(plan.nodePool, subtractOnKeysOf(limit, add(type?.capacity ?? {}, { nodes: 1 })));
      }
    }
    unschedulable = [...unschedulable, ...overLimit];
    capacityErrorsLastRound = capacityErrors;
    if (capacityErrors === 0) break;
    // Gave way in the last round: the pods may have no NodeClaim now, so the batch is retried.
    if (round === MAX_ROUNDS - 1) retry.push(...superseded);
  }

  for (const u of unschedulable) {
    const [namespace, name] = u.pod.split('/');
    await recordEventBestEffort(deps.cluster, {
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
    await recordEventBestEffort(deps.cluster, { type: 'Normal', reason: 'Nominated', object: `Pod/${namespace}/${name}`, message: `Pod should schedule on: ${kind}/${target}` });
  }
  // Pods left unschedulable while offerings are unavailable: solve them again soon (ProvisionDeps.followUps). A capacity
  // error in the last round marked its offering after that round's read, so it counts too.
  let followUp: { followUpAt?: string; followUpFailure?: string } = {};
  if (deps.followUps && unschedulable.length > 0 && (unavailableCount > 0 || capacityErrorsLastRound > 0)) {
    const at = deps.clock.now() + FOLLOW_UP_AFTER_MS;
    try {
      await deps.followUps.request(at);
      followUp = { followUpAt: new Date(at).toISOString() };
    } catch (e) {
      followUp = { followUpFailure: e instanceof Error ? e.message : String(e) };
    }
  }
  if (retry.length === 0) await deps.passes.recordCompleted(startedAt);
  return { launched, failed, nominated, unschedulable, retry, retrying, ...followUp };
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
 * A pod Skiff provisions for: kube-scheduler marked it Unschedulable, it is not bound, and it is neither a DaemonSet
 * pod nor a mirror (static) pod (Karpenter core `pkg/utils/pod/scheduling.go` `IsProvisionable`).
 */
export function isProvisionable(pod: ClusterPod): boolean {
  return pod.phase === 'Pending' && pod.unschedulable && !pod.nodeName && !pod.owner?.startsWith('DaemonSet/') && !isOwnedByNode(pod.owner);
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
 * Launches one NodeClaim ({@link launchPending}); a throttled or unavailable API on the way (DynamoDB, the API server,
 * EC2) ends only this NodeClaim's launch, as `throttled` with the error, and leaves its record `Pending` for the
 * lifecycle controller to launch again (Karpenter: the launch controller sets `Launched=Unknown` with reason
 * `LaunchFailed` and requeues that NodeClaim with backoff, `nodeclaim/lifecycle/launch.go`). A `LaunchRetrying`
 * Warning Event on the NodeClaim says so.
 */
async function launchIsolated(deps: ProvisionDeps, claim: NodeClaim, types: readonly InstanceType[], nodes: Parameters<typeof launchPending>[3], now: number): Promise<LaunchOutcome> {
  let outcome: LaunchOutcome;
  try {
    outcome = await launchPending(deps, claim, types, nodes, now);
  } catch (e) {
    if (!isThrottledError(e)) throw e;
    outcome = { kind: 'throttled', error: e.message };
  }
  if (outcome.kind === 'throttled') await recordLaunchRetrying(deps, claim.name, outcome.error);
  return outcome;
}

/** Adds an outcome to the report's lists; returns 1 when the pods need another solve round (capacity, gave way). */
function record(outcome: LaunchOutcome, name: string, launched: string[], failed: { nodeClaim: string; error: string }[], retrying: { nodeClaim: string; error: string }[], superseded: string[]): number {
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
      retrying.push({ nodeClaim: name, error: outcome.error });
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
