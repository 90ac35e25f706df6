/**
 * The disruption controller: Karpenter's second half, one pass per minute (EventBridge schedule, under a lease so
 * passes never overlap). Each NodeClaim's disruption is a small state machine kept on its DynamoDB record, so a pass
 * that dies anywhere is resumed by the next one:
 *
 *   (none) ─propose→ Proposed ─≥15 s later, re-validated→ Replacing ─replacements Initialized→ Draining ─drained→ Deleted
 *                        └─ no longer valid → (none)        └─ replacement failed → (none), node untainted
 *
 * Each pass:
 * 1. stamps each node's last pod event on its record (`lastPodEventAt`, Karpenter's `status.lastPodEventTime`;
 *    consolidateAfter counts from it), from the times the cluster reports ({@link Cluster.lastPodEventTimes});
 * 2. advances every disruption in flight: validates proposals at least {@link VALIDATION_DELAY_MS} old (Karpenter's
 *    `commandValidationDelay`), launches replacements through the provisioner's launch protocol, waits for them to
 *    initialize, taints (`karpenter.sh/disrupted:NoSchedule`) and drains through the Eviction API (PDBs answer 429:
 *    try again next pass), then deletes the record, terminates the instance and deletes the Node;
 * 3. expires NodeClaims older than their `expireAfter` at once — forceful: no budget, no replacement first
 *    (Karpenter `nodeclaim/expiration`); the drain still honours PDBs until `terminationGracePeriod` runs out. The
 *    lifecycle controller starts forceful drains too (`NodeDeleted`, `NodeClaimDeleted`: a user deleted the Node or
 *    the NodeClaim); every `Draining` NodeClaim is drained here, whoever started it;
 * 4. unless a proposal is waiting, proposes one new command from the first method that finds one, in Karpenter's
 *    order: Emptiness → Drift → multi-node consolidation → single-node consolidation (core
 *    `disruption/controller.go`), within each NodePool's budget for that reason (`core/disruption/budgets.ts`).
 *
 * Candidates (Karpenter `disruption/types.go NewCandidate`): initialized, managed, not already disrupted, no node
 * annotation `karpenter.sh/do-not-disrupt: "true"`, no pod with an active do-not-disrupt, no pod a PDB keeps from
 * being evicted (a drifted node with a `terminationGracePeriod` is exempt from both pod checks, as in Karpenter: its
 * drain deletes such pods at the grace period's deadline). Consolidation also needs `consolidateAfter` to have passed
 * since the last pod event, moves no pod onto a node still inside its own `consolidateAfter`, and — Skiff's churn guard —
 * spares nodes expiring within {@link CHURN_GUARD_MS} (or `consolidateAfter` if longer) and replacements younger
 * than that. Every candidate turned down is reported with the reason.
 */
import { NEVER, formatDuration, parseDuration } from '../core/api/duration.js';
import type { Taint } from '../core/api/kubernetes.js';
import { LABEL_INITIALIZED, LABEL_NODEPOOL } from '../core/api/labels.js';
import { isLive, type DisruptionReason, type NodeClaim, type NodeClaimDisruption } from '../core/api/nodeclaim.js';
import type { Budget, NodePool } from '../core/api/nodepool.js';
import type { PodDisruptionBudget } from '../core/api/pdb.js';
import { BudgetScheduleError, budgetAllowance, budgetWindows, type BudgetWindow } from '../core/disruption/budgets.js';
import {
  multiNodeConsolidation,
  simulateConsolidation,
  singleNodeConsolidation,
  evictionCost,
  type ConsolidationCandidate,
  type ConsolidationContext,
  type ConsolidationDecision,
} from '../core/disruption/consolidation.js';
import { DO_NOT_DISRUPT, nodeDoNotDisrupt, podDoNotDisrupt } from '../core/disruption/do-not-disrupt.js';
import { isDrainable } from '../core/disruption/drainable.js';
import { driftReason, nodeClassHash, nodePoolHash, replacementDrift } from '../core/disruption/drift.js';
import { pdbAllowances, pdbBlocks, pdbSelects, type PdbAllowance } from '../core/disruption/pdb.js';
import { isConflictError } from '../core/errors.js';
import { fnv1a } from '../core/hash.js';
import { offeringKey, withUnavailable, type InstanceType } from '../core/instancetypes/offering.js';
import { buildNodePoolTemplate, nodePoolRequirements, type DaemonSetLike } from '../core/provisioning/nodepool-template.js';
import { toSchedulingPod, type SchedulingPod } from '../core/provisioning/pod.js';
import { solve } from '../core/provisioning/scheduler.js';
import type { NodeClaimPlan, NodePoolTemplate } from '../core/provisioning/types.js';
import type { Cluster, ClusterEvent, ClusterNode, ClusterPod, PodEventTimes } from '../ports/cluster.js';
import {
  REGISTRATION_TTL_MS,
  createNodeClaimRecord,
  existingCapacity,
  instanceTypeQuery,
  isInFlight,
  launchPending,
  usageOf,
  type EC2NodeClassLike,
  type LaunchDeps,
} from './launch.js';
import { nodeClaimExtras } from './nodeclaim-extras.js';
import { deleteNodeReleasingFinalizer } from './node-termination.js';
import { recordEventBestEffort } from './events.js';

/** The API server's default pod `terminationGracePeriodSeconds` (Kubernetes `DefaultTerminationGracePeriodSeconds`). */
export const DEFAULT_POD_GRACE_SECONDS = 30;
/** Karpenter's `commandValidationDelay`: a command is re-validated this long after it was computed. */
export const VALIDATION_DELAY_MS = 15 * 1000;
/** Skiff's churn guard: no consolidation of a node expiring this soon, nor of a replacement this young. */
export const CHURN_GUARD_MS = 10 * 60 * 1000;
/** A replacement that has not initialized this long after its command started is given up (launch + registration). */
export const REPLACEMENT_TIMEOUT_MS = REGISTRATION_TTL_MS + 5 * 60 * 1000;
/** The taint a node carries from the moment its disruption starts (Karpenter `v1.DisruptedNoScheduleTaint`). */
export const DISRUPTED_TAINT: Taint = { key: 'karpenter.sh/disrupted', effect: 'NoSchedule' };

/** The EC2NodeClass fields disruption reads: provisioning's, plus the whole spec for its hash. */
export type DisruptionNodeClass = EC2NodeClassLike & { readonly spec: unknown };

/** Everything the controller needs, as ports. */
export interface DisruptionDeps extends LaunchDeps {
  readonly cluster: Cluster<NodePool, DisruptionNodeClass, DaemonSetLike>;
  /** `settings.featureGates.SpotToSpotConsolidation` (default off). */
  readonly spotToSpotConsolidation: boolean;
}

/** What one pass did. */
export interface DisruptionReport {
  /** Commands proposed this pass (validated next pass). */
  readonly proposed: readonly { readonly command: string; readonly reason: DisruptionReason; readonly decision: 'delete' | 'replace'; readonly candidates: readonly string[] }[];
  /** Commands validated and started: nodes tainted, replacements launching. */
  readonly started: readonly string[];
  /** Proposals dropped at validation, or commands abandoned (a replacement failed), with why. */
  readonly rejected: readonly { readonly command: string; readonly reason: string }[];
  /** NodeClaims that expired and started draining. */
  readonly expired: readonly string[];
  /** Pods evicted (`ns/name`). */
  readonly evicted: readonly string[];
  /**
   * Pods deleted because their node's terminationGracePeriod was running out (`ns/name`; PDBs and do-not-disrupt
   * bypassed). Always set by `disrupt` and `disruptNow`; optional for reports built elsewhere.
   */
  readonly forceDeleted?: readonly string[];
  /** Pods whose eviction must wait, with why (a PDB's 429, do-not-disrupt). */
  readonly waiting: readonly { readonly pod: string; readonly reason: string }[];
  /** NodeClaims deleted (instance terminated), with the reason. */
  readonly deleted: readonly { readonly nodeClaim: string; readonly reason: DisruptionReason }[];
  /** Nodes the methods looked at and turned down, with why (Karpenter logs these at debug). */
  readonly skipped: readonly { readonly nodeClaim: string; readonly reason: string }[];
  /**
   * Consolidatable nodes a do-not-disrupt annotation or a PDB blocks, and drifted nodes whose replacement would be
   * drifted too (each gets a `DisruptionBlocked` event).
   */
  readonly blocked: readonly { readonly nodeClaim: string; readonly node: string; readonly reason: string }[];
  /** NodePools whose budgets held back a candidate, per reason (each gets a `DisruptionBlocked` event, Karpenter's words). */
  readonly budgetBlocked: readonly { readonly nodePool: string; readonly reason: 'Empty' | 'Underutilized' | 'Drifted' }[];
}

/** The state one pass reads once. */
interface World {
  readonly now: number;
  readonly pools: ReadonlyMap<string, NodePool>;
  readonly classes: ReadonlyMap<string, DisruptionNodeClass>;
  readonly daemonSets: readonly DaemonSetLike[];
  readonly pods: readonly ClusterPod[];
  readonly nodes: readonly ClusterNode[];
  readonly nodeByProvider: ReadonlyMap<string, ClusterNode>;
  readonly podsByNode: ReadonlyMap<string, readonly ClusterPod[]>;
  readonly claims: readonly NodeClaim[];
  readonly pdbs: readonly PdbAllowance[];
  readonly types: ReadonlyMap<string, readonly InstanceType[]>;
  /** The unavailable offerings' keys, sorted and joined (what changes `types`). */
  readonly unavailableKey: string;
  /** The latest pod event per node, when the cluster reports them (read once per pass). */
  readonly podEvents?: PodEventTimes;
}

interface Pass {
  readonly deps: DisruptionDeps;
  /** Writes so far (a fresh read is needed only after one). */
  writes: number;
  /** Nodes consolidation looked at and kept this pass, with why (each gets an `Unconsolidatable` Event). */
  unconsolidatable?: { nodeClaim: string; node: string; reason: string }[];
  readonly report: {
    proposed: DisruptionReport['proposed'][number][];
    started: string[];
    rejected: { command: string; reason: string }[];
    expired: string[];
    evicted: string[];
    forceDeleted: string[];
    waiting: { pod: string; reason: string }[];
    deleted: { nodeClaim: string; reason: DisruptionReason }[];
    skipped: { nodeClaim: string; reason: string }[];
    blocked: { nodeClaim: string; node: string; reason: string }[];
    budgetBlocked: { nodePool: string; reason: 'Empty' | 'Underutilized' | 'Drifted' }[];
  };
}

/**
 * Runs one disruption pass (see the module comment). Safe to repeat and to resume after a crash; not safe to overlap
 * with itself — the handler runs it under a lease.
 * @throws whatever the ports throw for failures other than conflicts (the next pass resumes from the records)
 */
export async function disrupt(deps: DisruptionDeps): Promise<DisruptionReport> {
  const pass: Pass = { deps, writes: 0, report: { proposed: [], started: [], rejected: [], expired: [], evicted: [], forceDeleted: [], waiting: [], deleted: [], skipped: [], blocked: [], budgetBlocked: [] } };
  let world = await readWorld(deps);
  let seen = 0;
  /** The world again if anything was written since it was read. */
  const refresh = async (): Promise<World> => {
    if (pass.writes === seen) return world;
    seen = pass.writes;
    world = await readWorld(deps, world);
    return world;
  };
  await notePodEvents(pass, world);
  await reportInvalidDoNotDisrupt(pass, world);
  await refresh();

  // Disruptions in flight, one command at a time (a command's candidates move together).
  const commands = new Map<string, NodeClaim[]>();
  for (const c of world.claims) if (isLive(c) && c.disruption) commands.set(c.disruption.command, [...(commands.get(c.disruption.command) ?? []), c]);
  let proposalWaiting = false;
  for (const [command, candidates] of commands) {
    const phase = candidates[0]!.disruption!.phase;
    if (phase === 'Proposed') {
      if (world.now - Date.parse(candidates[0]!.disruption!.proposedAt) < VALIDATION_DELAY_MS) proposalWaiting = true;
      else await validateAndStart(pass, world, command, candidates);
    } else if (phase === 'Replacing') {
      await awaitReplacements(pass, world, command, candidates);
    }
  }
  await expire(pass, await refresh());
  await refresh();
  for (const claim of world.claims) if (isLive(claim) && claim.disruption?.phase === 'Draining') await drain(pass, world, claim);

  if (!proposalWaiting) {
    const latest = await refresh();
    // Karpenter's "consolidated" state: when nothing changed since a pass found nothing to do, skip the search (it
    // only repeats itself) — at most for CONSOLIDATED_TTL_MS, after which prices or budget windows may differ.
    const fingerprint = worldFingerprint(latest);
    const last = CONSOLIDATED.get(deps.store);
    if (!last || last.fingerprint !== fingerprint || latest.now - last.at >= CONSOLIDATED_TTL_MS) {
      const before = pass.report.proposed.length;
      await propose(pass, latest);
      if (pass.report.proposed.length === before) CONSOLIDATED.set(deps.store, { fingerprint, at: latest.now });
      else CONSOLIDATED.delete(deps.store);
    }
  }
  return pass.report;
}

/**
 * How long a "nothing to do" verdict stands while nothing it depends on changes (pods, nodes, records, NodePools,
 * availability, which budgets allow what): 15 minutes, so moving spot prices are looked at again.
 */
export const CONSOLIDATED_TTL_MS = 15 * 60 * 1000;

/** The last verdict per NodeClaim store (one per cluster): in memory, so a cold Lambda simply searches again. */
const CONSOLIDATED = new WeakMap<object, { fingerprint: string; at: number }>();

/** A digest of everything a proposal depends on: pods and where they run, nodes, NodeClaim versions, NodePools, availability. */
function worldFingerprint(world: World): string {
  const parts: string[] = [];
  for (const p of world.pods) parts.push(`p${p.namespace}/${p.name}@${p.nodeName ?? ''}:${p.phase}`);
  for (const n of world.nodes) parts.push(`n${n.name}:${n.ready ? 1 : 0}:${n.taints.length}:${Object.keys(n.annotations).length}`);
  for (const nc of world.classes.values()) parts.push(`nc${nc.metadata.name}:${specDigest(nc.spec)}`);
  for (const c of world.claims) {
    if (!isLive(c)) continue;
    // Time alone makes a node consolidatable (consolidateAfter passing), and open to other nodes' pods (leaving its
    // own consolidateAfter window, which the churn guard does not hold back): part of the digest too.
    const pool = world.pools.get(c.nodePool);
    const ripe = pool ? consolidationProblem(world, c, pool) === undefined : false;
    parts.push(`c${c.name}:${c.version}:${ripe ? 1 : 0}${underConsolidateAfter(world, c) ? 1 : 0}`);
  }
  for (const np of world.pools.values()) parts.push(`np${np.metadata.name}:${specDigest(np.spec)}`);
  parts.push(`u${world.unavailableKey}`);
  // Budget windows open and close with time alone.
  const ledger = new BudgetLedger(world);
  for (const pool of world.pools.keys()) parts.push(`b${pool}:${(['Empty', 'Underutilized', 'Drifted'] as const).map((r) => Math.min(ledger.remaining(pool, r), 1)).join('')}`);
  parts.sort();
  return `${parts.length}:${fnv1a(parts.join('|')).toString(36)}`;
}

/**
 * `fnv1a(JSON.stringify(spec))` in base 36, remembered per spec object: the objects the Cluster port returns are
 * read-only (a changed NodePool or EC2NodeClass is a new object), so an object that was digested before has the same
 * digest. A cluster that returns fresh objects each pass (the Kubernetes adapter) simply never hits.
 */
function specDigest(spec: unknown): string {
  if (spec === null || typeof spec !== 'object') return fnv1a(JSON.stringify(spec)).toString(36);
  let digest = SPEC_DIGESTS.get(spec);
  if (digest === undefined) SPEC_DIGESTS.set(spec, (digest = fnv1a(JSON.stringify(spec)).toString(36)));
  return digest;
}

const SPEC_DIGESTS = new WeakMap<object, string>();

/** Reads the cluster and the records; `previous` keeps the slow-changing parts (NodePools, types) of an earlier read. */
async function readWorld(deps: DisruptionDeps, previous?: World): Promise<World> {
  const now = deps.clock.now();
  // Within one pass the slow-changing parts (NodePools, classes, DaemonSets, PDBs, instance types and their
  // availability) are read once; pods, nodes and records again after each write.
  const [pods, nodes, claims, pdbList, types, podEvents] = await Promise.all([
    deps.cluster.listPods(),
    deps.cluster.listNodes(),
    deps.store.list(),
    previous ? previous.pdbs.map((a) => a.pdb) : deps.cluster.listPodDisruptionBudgets(),
    previous ? previous.types : deps.unavailableOfferings.listUnavailable(now).then((u) => u),
    previous ? previous.podEvents : deps.cluster.lastPodEventTimes?.(),
  ]);
  let pools = previous?.pools;
  let classes = previous?.classes;
  let daemonSets = previous?.daemonSets;
  let baseTypes: Map<string, readonly InstanceType[]> | undefined;
  if (!pools || !classes || !daemonSets) {
    const [poolList, classList, dsList] = await Promise.all([deps.cluster.listNodePools(), deps.cluster.listNodeClasses(), deps.cluster.listDaemonSets()]);
    pools = new Map(poolList.map((p) => [p.metadata.name, p]));
    classes = new Map(classList.map((c) => [c.metadata.name, c]));
    daemonSets = dsList;
    baseTypes = new Map();
    for (const nc of classList) baseTypes.set(nc.metadata.name, await deps.cloud.getInstanceTypes(instanceTypeQuery(nc)));
  }
  const unavailableKey = Array.isArray(types) ? types.map(offeringKey).sort().join(',') : previous!.unavailableKey;
  const available: ReadonlyMap<string, readonly InstanceType[]> = Array.isArray(types)
    ? new Map([...baseTypes!].map(([k, v]) => [k, withUnavailable(v, new Set(types.map(offeringKey)))] as const))
    : (types as ReadonlyMap<string, readonly InstanceType[]>);
  const podsByNode = new Map<string, ClusterPod[]>();
  for (const p of pods) if (p.nodeName) podsByNode.set(p.nodeName, [...(podsByNode.get(p.nodeName) ?? []), p]);
  const readyNodes = new Set(nodes.filter((n) => n.ready).map((n) => n.name));
  const pdbs = pdbAllowances(
    pdbList as PodDisruptionBudget[],
    pods.map((p) => ({ namespace: p.namespace, name: p.name, labels: p.labels, healthy: p.phase === 'Running' && !!p.nodeName && readyNodes.has(p.nodeName) })),
  );
  const world: World = {
    now,
    pools,
    classes,
    daemonSets,
    pods,
    nodes,
    nodeByProvider: new Map(nodes.map((n) => [n.providerId, n])),
    podsByNode,
    claims,
    pdbs,
    types: available,
    unavailableKey,
    ...(podEvents ? { podEvents } : {}),
  };
  return world;
}

/** The pods a drain moves: bound, not terminal, not DaemonSet pods (Karpenter leaves those to the node's end). */
function reschedulable(pods: readonly ClusterPod[]): ClusterPod[] {
  return pods.filter((p) => (p.phase === 'Running' || p.phase === 'Pending') && !p.owner?.startsWith('DaemonSet/'));
}

function nodeOfClaim(world: World, claim: NodeClaim): ClusterNode | undefined {
  return claim.providerId ? world.nodeByProvider.get(claim.providerId) : undefined;
}

function podsOn(world: World, node: ClusterNode | undefined): ClusterPod[] {
  return node ? reschedulable(world.podsByNode.get(node.name) ?? []) : [];
}

/**
 * How long the same `DisruptionBlocked` Event (object and message) is not written again: a node a PDB blocks would
 * otherwise get one every pass, every minute. Karpenter's event recorder deduplicates the same way (it bumps the
 * existing Event within its dedupe timeout); a changed reason is written at once.
 */
export const BLOCKED_EVENT_DEDUPE_MS = 15 * 60 * 1000;

/** When each `DisruptionBlocked` Event was last written, per store (one run or one Lambda container). */
const BLOCKED_WRITTEN = new WeakMap<object, Map<string, number>>();

/**
 * Writes `event` unless an Event with the same dedupe key was written less than {@link BLOCKED_EVENT_DEDUPE_MS} ago.
 * @param dedupe the dedupe key: by default the object and the message (a changed reason is written at once)
 */
async function recordBlocked(pass: Pass, now: number, event: ClusterEvent, dedupe?: string): Promise<void> {
  let written = BLOCKED_WRITTEN.get(pass.deps.store);
  if (!written) BLOCKED_WRITTEN.set(pass.deps.store, (written = new Map()));
  const key = dedupe ?? `${event.object}|${event.message}`;
  const last = written.get(key);
  if (last !== undefined && now - last < BLOCKED_EVENT_DEDUPE_MS && now >= last) return;
  if (written.size >= 10_000) written.clear(); // bound the memory; at worst an Event repeats
  written.set(key, now);
  await recordEventBestEffort(pass.deps.cluster, event);
}

/** Pods already told their do-not-disrupt value is invalid, per store (one run or one Lambda container). */
const INVALID_DND_REPORTED = new WeakMap<object, Set<string>>();

/**
 * A pod on a Skiff node whose `karpenter.sh/do-not-disrupt` is neither `"true"` nor a duration gets one
 * `InvalidDoNotDisruptAnnotation` Warning (Karpenter's event): the value is ignored, so the node can be disrupted.
 * Reported once per pod and value while the container lives (the API server would only bump the Event's count).
 */
async function reportInvalidDoNotDisrupt(pass: Pass, world: World): Promise<void> {
  let reported = INVALID_DND_REPORTED.get(pass.deps.store);
  for (const claim of world.claims) {
    if (!isLive(claim)) continue;
    for (const pod of podsOn(world, nodeOfClaim(world, claim))) {
      const dnd = podDoNotDisrupt(pod.annotations, pod.createdAt, world.now);
      if (dnd.active || dnd.invalid === undefined) continue;
      const key = `${pod.uid}|${dnd.invalid}`;
      if (!reported) INVALID_DND_REPORTED.set(pass.deps.store, (reported = new Set()));
      if (reported.has(key)) continue;
      if (reported.size >= 10_000) reported.clear(); // pods come and go: bound the memory, at worst an Event repeats
      reported.add(key);
      await recordEventBestEffort(pass.deps.cluster, {
        type: 'Warning',
        reason: 'InvalidDoNotDisruptAnnotation',
        object: `Pod/${pod.namespace}/${pod.name}`,
        message: `Invalid ${DO_NOT_DISRUPT} value ${JSON.stringify(dnd.invalid)}: want "true" or a duration such as "30m"; the annotation is ignored`,
      });
    }
  }
}

/**
 * Karpenter's `dedupeTimeout` (core `pkg/controllers/nodeclaim/podevents/controller.go`): a pod event less than
 * 10 s after the stamped one is not stamped (shorter than the 15 s validation delay, so a command computed meanwhile
 * is still invalidated).
 */
export const POD_EVENT_DEDUPE_MS = 10 * 1000;

/**
 * The node's last pod event, epoch ms, or undefined when none is known (consolidateAfter then counts from
 * initialization, core `pkg/utils/disruption/disruption.go IsUnderConsolidateAfter`): the time stamped on the record,
 * or the cluster's latest when that is at least {@link POD_EVENT_DEDUPE_MS} later.
 *
 * Why from the cluster's times and not from what one pass sees: Karpenter stamps `status.lastPodEventTime` on every
 * bind, completion and deletion as the pod update arrives (core `nodeclaim/podevents`), so a node refilled and
 * emptied between two passes, or running Jobs shorter than a pass, restarts its consolidateAfter each time. The
 * disruption Lambda runs once a minute and cannot watch pods, so it reads the times the cluster keeps
 * ({@link Cluster.lastPodEventTimes}: the simulated cluster stamps each event as it happens; the Kubernetes adapter
 * reads the bind, finish and deletion timestamps of the pods still in the API) and keeps the latest on the NodeClaim
 * record, where it outlives the pods it came from.
 */
function lastPodEventMs(world: World, claim: NodeClaim): number | undefined {
  const stored = claim.lastPodEventAt ? Date.parse(claim.lastPodEventAt) : undefined;
  const node = nodeOfClaim(world, claim);
  const seen = node ? world.podEvents?.byNode.get(node.name) : undefined;
  if (seen !== undefined && (stored === undefined || seen - stored >= POD_EVENT_DEDUPE_MS)) return seen;
  return stored;
}

/**
 * Step 1: stamps each node's last pod event on its record ({@link lastPodEventMs}). A cluster whose times are not
 * complete (the Kubernetes adapter: a pod deleted and gone between two passes leaves no timestamp) also has each
 * change in the set of pods on a node since the last pass count as an event now — never earlier than the truth, so
 * consolidateAfter is at worst a pass longer, never shorter.
 */
async function notePodEvents(pass: Pass, world: World): Promise<void> {
  for (const claim of world.claims) {
    if (claim.state !== 'Initialized' || claim.disruption) continue;
    const node = nodeOfClaim(world, claim);
    if (!node) continue;
    const pool = world.pools.get(claim.nodePool);
    // Only consolidation reads lastPodEventAt: none under consolidateAfter Never.
    if (!pool || pool.spec.disruption.consolidateAfter === NEVER) continue;
    let last = lastPodEventMs(world, claim);
    let fingerprint = claim.podsFingerprint;
    if (!world.podEvents?.complete) {
      fingerprint = fnv1a(
        podsOn(world, node)
          .map((p) => `${p.namespace}/${p.name}`)
          .sort()
          .join('\n'),
      ).toString(36);
      if (claim.podsFingerprint !== undefined && claim.podsFingerprint !== fingerprint) last = Math.max(last ?? 0, world.now);
    }
    const stamped = last !== undefined && last !== (claim.lastPodEventAt ? Date.parse(claim.lastPodEventAt) : undefined);
    if (!stamped && fingerprint === claim.podsFingerprint) continue;
    await writeIgnoringConflict(pass, { ...claim, ...(fingerprint !== undefined ? { podsFingerprint: fingerprint } : {}), ...(stamped ? { lastPodEventAt: new Date(last!).toISOString() } : {}) });
  }
}

/** A conditional write; a conflict (someone else moved the record on) is not an error: the next pass reads it again. */
async function writeIgnoringConflict(pass: Pass, claim: NodeClaim): Promise<NodeClaim | undefined> {
  pass.writes++;
  try {
    return await pass.deps.store.update(claim);
  } catch (e) {
    if (isConflictError(e)) return undefined;
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Candidates and budgets

/** Why a NodeClaim cannot be voluntarily disrupted now, or undefined. */
function candidateProblem(world: World, claim: NodeClaim, reason: DisruptionReason): string | undefined {
  if (claim.state !== 'Initialized') return `it is ${claim.state}, not initialized`;
  if (claim.disruption) return 'it is already being disrupted';
  const pool = world.pools.get(claim.nodePool);
  if (!pool) return `its NodePool ${claim.nodePool} does not exist`;
  const node = nodeOfClaim(world, claim);
  if (!node) return 'it has no node';
  if (node.labels[LABEL_NODEPOOL] === undefined) return `its node has no ${LABEL_NODEPOOL} label`;
  return blockingProblem(world, claim, node, reason);
}

/**
 * What the user set that blocks a voluntary disruption of this node (Karpenter's `DisruptionBlocked` reasons): the
 * node's do-not-disrupt annotation, a pod's active do-not-disrupt, a pod a PDB keeps from being evicted.
 *
 * The pod blockers do not hold back an eventual disruption — drift of a NodeClaim whose NodePool sets a
 * terminationGracePeriod (core `pkg/controllers/disruption/types.go NewCandidate`: `EventualDisruptionClass` with
 * `Spec.TerminationGracePeriod` set ignores the `PodBlockEvictionError`s of `ValidatePodsDisruptable`; drift is the
 * eventual class, `drift.go`): the drain evicts what it may and deletes the rest at the grace period's deadline
 * (see {@link drain}). The node's own annotation still blocks (`ValidateNodeDisruptable`).
 */
function blockingProblem(world: World, claim: NodeClaim, node: ClusterNode, reason: DisruptionReason): string | undefined {
  if (nodeDoNotDisrupt(node.annotations)) return `node ${node.name} is annotated karpenter.sh/do-not-disrupt: "true"`;
  const eventual = reason === 'Drifted' && claim.terminationGracePeriodSeconds !== undefined;
  if (eventual) return undefined;
  for (const pod of podsOn(world, node)) {
    const dnd = podDoNotDisrupt(pod.annotations, pod.createdAt, world.now);
    if (dnd.active) return `pod ${pod.namespace}/${pod.name} is annotated karpenter.sh/do-not-disrupt${dnd.untilMs !== undefined ? ` until ${new Date(dnd.untilMs).toISOString()}` : ''}`;
    const blocked = pdbBlocks(pod, world.pdbs);
    if (blocked) return `pod ${pod.namespace}/${pod.name}: ${blocked}`;
  }
  return undefined;
}

/**
 * Whether consolidation may look at this NodeClaim yet, or why not: consolidateAfter has passed since its last pod
 * event, or since its initialization when none is known (core `pkg/controllers/nodeclaim/disruption/consolidation.go`,
 * the `Consolidatable` condition), and Skiff's churn guard.
 */
function consolidationProblem(world: World, claim: NodeClaim, pool: NodePool): string | undefined {
  const after = pool.spec.disruption.consolidateAfter;
  if (after === NEVER) return 'its NodePool has consolidateAfter: Never';
  const afterMs = parseDuration(after) * 1000;
  const last = lastPodEventMs(world, claim);
  const since = last ?? Date.parse(claim.initializedAt ?? claim.createdAt);
  if (world.now - since < afterMs) return `consolidateAfter (${after}) has not passed since the last pod event on it (${new Date(since).toISOString()}${last === undefined ? ', its initialization' : ''})`;
  const guard = Math.max(afterMs, CHURN_GUARD_MS);
  if (claim.expireAfterSeconds != null && Date.parse(claim.createdAt) + claim.expireAfterSeconds * 1000 - world.now < guard) {
    return `it expires within ${Math.round(guard / 60_000)} minutes (churn guard)`;
  }
  if (claim.replacementFor && world.now - Date.parse(claim.initializedAt ?? claim.createdAt) < guard) {
    return `it replaced ${claim.replacementFor.join(', ')} less than ${Math.round(guard / 60_000)} minutes ago (churn guard)`;
  }
  return undefined;
}

/**
 * How far ahead the active windows of a budget schedule are worked out at once: 6 hours. Evaluating a cron schedule is
 * the costly part of a budget, and every pass evaluates every budget of every NodePool for each reason.
 */
const BUDGET_HORIZON_MS = 6 * 60 * 60 * 1000;

/** Active windows per schedule and duration over `[fromMs, toMs)` (core `budgetWindows`); in memory, like {@link CONSOLIDATED}. */
const BUDGET_WINDOWS = new Map<string, { readonly fromMs: number; readonly toMs: number; readonly windows: readonly BudgetWindow[] }>();

/**
 * `budgets` as they stand at `atMs`, with the same `budgetAllowance` at `atMs` for every reason and node count: a
 * scheduled budget active at `atMs` loses its schedule (a budget without one is always active), an inactive one is
 * left out, and one whose schedule does not evaluate stays as it is (`budgetAllowance` fails it closed). Activity is
 * read from the budget's windows (core `budgetWindows`: active at T exactly when the schedule fired in
 * `(T − duration, T]`, `isBudgetActive`), cached for {@link BUDGET_HORIZON_MS}.
 */
function budgetsAt(budgets: readonly Budget[], atMs: number): readonly Budget[] {
  if (budgets.every((b) => b.schedule === undefined)) return budgets;
  const out: Budget[] = [];
  for (const budget of budgets) {
    if (budget.schedule === undefined) {
      out.push(budget);
      continue;
    }
    const key = `${budget.schedule}\u0000${budget.duration ?? ''}`;
    let cached = BUDGET_WINDOWS.get(key);
    if (!cached || atMs < cached.fromMs || atMs >= cached.toMs) {
      let windows: BudgetWindow[];
      try {
        windows = budgetWindows(budget, new Date(atMs), new Date(atMs + BUDGET_HORIZON_MS));
      } catch (e) {
        if (!(e instanceof BudgetScheduleError)) throw e;
        out.push(budget);
        continue;
      }
      if (BUDGET_WINDOWS.size > 1000) BUDGET_WINDOWS.clear();
      cached = { fromMs: atMs, toMs: atMs + BUDGET_HORIZON_MS, windows };
      BUDGET_WINDOWS.set(key, cached);
    }
    if (cached.windows.some((w) => w.start.getTime() <= atMs && atMs < w.end.getTime())) {
      const { schedule: _schedule, duration: _duration, ...always } = budget;
      out.push(always as Budget);
    }
  }
  return out;
}

/** Budget bookkeeping of one pass: what each NodePool may still start, per reason. */
class BudgetLedger {
  private readonly taken = new Map<string, number>();

  constructor(private readonly world: World) {}

  /**
   * The NodePool's managed, initialized nodes (carrying its label and `karpenter.sh/initialized: "true"`): the base
   * of percentages, as Karpenter's `BuildDisruptionBudgetMapping` counts them — by node, so a node whose record is
   * already deleted but which is still there (its termination under way) still counts.
   */
  private nodes(pool: string): ClusterNode[] {
    return this.world.nodes.filter((n) => n.labels[LABEL_NODEPOOL] === pool && n.labels[LABEL_INITIALIZED] === 'true');
  }

  /** Of those, the nodes being disrupted (tainted, or their record started or ended a disruption) or NotReady. */
  private busy(nodes: readonly ClusterNode[]): number {
    const claimByProvider = new Map(this.world.claims.filter((c) => c.providerId).map((c) => [c.providerId!, c]));
    return nodes.filter((n) => {
      if (!n.ready || n.taints.some((t) => t.key === DISRUPTED_TAINT.key)) return true;
      const claim = claimByProvider.get(n.providerId);
      return !!claim && (!isLive(claim) || claim.state === 'Deleting' || (claim.disruption !== undefined && claim.disruption.phase !== 'Proposed'));
    }).length;
  }

  /**
   * How many more of the pool's nodes may start a disruption for `reason` now.
   * @param afterTaken false for the allowance before this pass's own choices ({@link take})
   */
  remaining(pool: string, reason: 'Empty' | 'Underutilized' | 'Drifted', afterTaken = true): number {
    const np = this.world.pools.get(pool);
    if (!np) return 0;
    const nodes = this.nodes(pool);
    const allowance = budgetAllowance(budgetsAt(np.spec.disruption.budgets, this.world.now), reason, new Date(this.world.now), nodes.length, this.busy(nodes));
    return Math.max(0, allowance.remaining - (afterTaken ? (this.taken.get(pool) ?? 0) : 0));
  }

  take(pool: string, n = 1): void {
    this.taken.set(pool, (this.taken.get(pool) ?? 0) + n);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Step 4: proposing

interface Proposal {
  readonly reason: 'Empty' | 'Underutilized' | 'Drifted';
  readonly decision: 'delete' | 'replace';
  readonly candidates: readonly NodeClaim[];
  readonly message: string;
}

async function propose(pass: Pass, world: World): Promise<void> {
  const proposal = findProposal(pass, world);
  for (const b of pass.report.blocked) {
    await recordBlocked(pass, world.now, { type: 'Normal', reason: 'DisruptionBlocked', object: `Node/${b.node}`, message: `Cannot disrupt Node: ${b.reason}` });
  }
  for (const b of pass.report.budgetBlocked) {
    await recordBlocked(pass, world.now, { type: 'Normal', reason: 'DisruptionBlocked', object: `NodePool/${b.nodePool}`, message: `No allowed disruptions for disruption reason ${b.reason} due to blocking budget` });
  }
  // Karpenter publishes `Unconsolidatable` on the Node and the NodeClaim, deduplicated per object for 15 minutes
  // whatever the message (core `disruption/events/events.go` `Unconsolidatable`, `DedupeValues` the UID).
  for (const u of pass.unconsolidatable ?? []) {
    const message = `Cannot consolidate: ${u.reason}`;
    for (const object of [`Node/${u.node}`, `NodeClaim/${u.nodeClaim}`]) {
      await recordBlocked(pass, world.now, { type: 'Normal', reason: 'Unconsolidatable', object, message }, `Unconsolidatable|${object}`);
    }
  }
  if (!proposal) return;
  const names = proposal.candidates.map((c) => c.name).sort();
  const command = `${proposal.reason.toLowerCase()}-${fnv1a(`${world.now}|${names.join(',')}`).toString(36)}`;
  const disruption: NodeClaimDisruption = {
    command,
    reason: proposal.reason,
    decision: proposal.decision,
    phase: 'Proposed',
    replacements: [],
    candidates: names,
    message: proposal.message,
    proposedAt: new Date(world.now).toISOString(),
  };
  const written: NodeClaim[] = [];
  for (const claim of proposal.candidates) {
    const saved = await writeIgnoringConflict(pass, { ...claim, disruption });
    if (!saved) {
      // Someone moved a candidate on: withdraw the proposal.
      for (const w of written) await writeIgnoringConflict(pass, withoutDisruption(w));
      return;
    }
    written.push(saved);
  }
  pass.report.proposed.push({ command, reason: proposal.reason, decision: proposal.decision, candidates: names });
}

function withoutDisruption(claim: NodeClaim): NodeClaim {
  const { disruption: _dropped, ...rest } = claim;
  return rest;
}

/** The first method that finds a command: Emptiness → Drift → multi-node → single-node consolidation. */
function findProposal(pass: Pass, world: World, only?: readonly NodeClaim[]): Proposal | undefined {
  const ledger = new BudgetLedger(world);
  const claims = only ?? world.claims.filter((c) => isLive(c) && c.state === 'Initialized' && !c.disruption);
  const skip = (claim: NodeClaim, reason: string) => {
    if (!only) pass.report.skipped.push({ nodeClaim: claim.name, reason });
  };
  const overBudget = (claim: NodeClaim, reason: 'Empty' | 'Underutilized' | 'Drifted') => {
    skip(claim, `${reason}: the NodePool's disruption budgets allow no more disruptions for reason ${reason} now`);
    // Only a budget that allows nothing at all is "blocking" (Karpenter's event); one this pass has used up is not.
    const blocking = ledger.remaining(claim.nodePool, reason, false) < 1;
    if (blocking && !only && !pass.report.budgetBlocked.some((b) => b.nodePool === claim.nodePool && b.reason === reason)) pass.report.budgetBlocked.push({ nodePool: claim.nodePool, reason });
  };

  // Emptiness: every empty, consolidatable candidate, within the budgets, in one command.
  const empty: NodeClaim[] = [];
  for (const claim of claims) {
    const pool = world.pools.get(claim.nodePool);
    if (!pool || podsOn(world, nodeOfClaim(world, claim)).length > 0) continue;
    const problem = candidateProblem(world, claim, 'Empty') ?? consolidationProblem(world, claim, pool);
    if (problem) {
      skip(claim, `Empty: ${problem}`);
      continue;
    }
    if (ledger.remaining(claim.nodePool, 'Empty') < 1) {
      overBudget(claim, 'Empty');
      continue;
    }
    ledger.take(claim.nodePool);
    empty.push(claim);
  }
  if (empty.length > 0) return { reason: 'Empty', decision: 'delete', candidates: empty, message: `${empty.length === 1 ? 'node is' : `${empty.length} nodes are`} empty` };

  // Drift: one at a time, empty ones first, then the oldest.
  const drifted = claims
    .map((claim) => ({ claim, why: driftOf(world, claim) }))
    .filter((d): d is { claim: NodeClaim; why: string } => d.why !== undefined)
    .sort((a, b) => podsOn(world, nodeOfClaim(world, a.claim)).length - podsOn(world, nodeOfClaim(world, b.claim)).length || a.claim.createdAt.localeCompare(b.claim.createdAt));
  for (const { claim, why } of drifted) {
    const problem = candidateProblem(world, claim, 'Drifted');
    if (problem) {
      skip(claim, `Drifted (${why}): ${problem}`);
      continue;
    }
    if (ledger.remaining(claim.nodePool, 'Drifted') < 1) {
      overBudget(claim, 'Drifted');
      continue;
    }
    const plan = replacementPlans(world, [claim], pass.deps.region);
    if (plan.unschedulable) {
      skip(claim, `Drifted (${why}): ${plan.unschedulable}`);
      // A replacement that would be drifted too is never launched: say so on the node, which stays as it is.
      const node = nodeOfClaim(world, claim);
      if (plan.loop && !only && node) pass.report.blocked.push({ nodeClaim: claim.name, node: node.name, reason: `${why}, but ${plan.unschedulable}` });
      continue;
    }
    return { reason: 'Drifted', decision: plan.plans.length > 0 ? 'replace' : 'delete', candidates: [claim], message: why };
  }

  // Consolidation (WhenEmptyOrUnderutilized NodePools only), cheapest to disrupt first.
  const candidates: { claim: NodeClaim; candidate: ConsolidationCandidate; cost: number }[] = [];
  for (const claim of claims) {
    const pool = world.pools.get(claim.nodePool);
    if (!pool) continue;
    // Nodes the NodePool's settings keep from consolidation say so (core `consolidation.go` `ShouldDisrupt`): all of
    // them under consolidateAfter Never, the non-empty ones under WhenEmpty (Emptiness takes the empty ones).
    const settings =
      pool.spec.disruption.consolidateAfter === NEVER
        ? `NodePool ${pool.metadata.name} has consolidation disabled (consolidateAfter: Never)`
        : pool.spec.disruption.consolidationPolicy !== 'WhenEmptyOrUnderutilized' && podsOn(world, nodeOfClaim(world, claim)).length > 0
          ? `NodePool ${pool.metadata.name} has consolidation policy ${pool.spec.disruption.consolidationPolicy}, but the node is not empty`
          : undefined;
    if (settings && !only) {
      const node = nodeOfClaim(world, claim);
      if (node && candidateProblem(world, claim, 'Underutilized') === undefined) (pass.unconsolidatable ??= []).push({ nodeClaim: claim.name, node: node.name, reason: settings });
    }
    if (pool.spec.disruption.consolidationPolicy !== 'WhenEmptyOrUnderutilized') continue;
    const unripe = consolidationProblem(world, claim, pool);
    const problem = unripe ?? candidateProblem(world, claim, 'Underutilized');
    if (problem) {
      skip(claim, `Underutilized: ${problem}`);
      // A node consolidation would look at but the user's settings block: say so on the node (Karpenter's event).
      const node = nodeOfClaim(world, claim);
      if (!unripe && !only && node && claim.state === 'Initialized' && !claim.disruption && blockingProblem(world, claim, node, 'Underutilized') === problem) {
        pass.report.blocked.push({ nodeClaim: claim.name, node: node.name, reason: problem });
      }
      continue;
    }
    const candidate = toCandidate(world, claim);
    if (!candidate) continue;
    candidates.push({ claim, candidate, cost: disruptionCost(world, claim) });
  }
  candidates.sort((a, b) => a.cost - b.cost || a.claim.name.localeCompare(b.claim.name));
  const withinBudget: typeof candidates = [];
  for (const c of candidates) {
    if (ledger.remaining(c.claim.nodePool, 'Underutilized') < 1) {
      overBudget(c.claim, 'Underutilized');
      continue;
    }
    ledger.take(c.claim.nodePool);
    withinBudget.push(c);
  }
  if (withinBudget.length === 0) return undefined;
  const ctx = consolidationContext(pass, world, withinBudget.map((c) => c.claim));
  const byName = new Map(withinBudget.map((c) => [c.claim.name, c.claim]));
  let decision: ConsolidationDecision | undefined;
  if (only) {
    // Re-validating a command: simulate exactly its candidates. Searching again could miss them — consolidation is
    // not monotonic (three nodes may go together where their first two cannot), and the binary search over a shorter
    // list takes other steps — and a command dropped that way would be proposed again every pass, never acted on.
    if (withinBudget.length !== only.length) return undefined;
    decision = simulateConsolidation(
      withinBudget.map((c) => c.candidate),
      ctx,
      withinBudget.length === 1,
    );
  } else {
    const multi = multiNodeConsolidation(
      withinBudget.map((c) => c.candidate),
      ctx,
    );
    decision = multi.kind !== 'none' ? multi : singleNodeDecision(pass, withinBudget, ctx, false);
  }
  if (!decision || decision.kind === 'none') return undefined;
  const chosen = decision.candidates.map((c) => byName.get(c.nodeClaim)!);
  const message =
    decision.kind === 'delete'
      ? `its pods fit on other nodes`
      : `replace with one NodeClaim of ${decision.replacement.instanceTypes.length} cheaper instance types (cheapest ${decision.replacement.instanceTypes[0]!.name}), saving up to $${decision.savings.toFixed(4)}/h`;
  return { reason: 'Underutilized', decision: decision.kind, candidates: chosen, message };
}

function singleNodeDecision(pass: Pass, candidates: readonly { claim: NodeClaim; candidate: ConsolidationCandidate }[], ctx: ConsolidationContext, validating: boolean): ConsolidationDecision | undefined {
  const single = singleNodeConsolidation(
    candidates.map((c) => c.candidate),
    ctx,
  );
  if (!validating) {
    for (const r of single.rejected) {
      pass.report.skipped.push({ nodeClaim: r.nodeClaim, reason: `Underutilized: ${r.reason}` });
      const node = candidates.find((c) => c.claim.name === r.nodeClaim)?.candidate.node;
      if (node) (pass.unconsolidatable ??= []).push({ nodeClaim: r.nodeClaim, node, reason: r.reason });
    }
  }
  return single.decision;
}

/**
 * The current NodePool hashes and requirements and EC2NodeClass hashes a drift check compares with, worked out once
 * per pass: keyed by the pass's NodePool map, which every re-read of the world within the pass keeps (see
 * {@link readWorld}).
 */
const DRIFT_INPUTS = new WeakMap<object, { pools: Map<string, { hash: string; requirements: ReturnType<typeof nodePoolRequirements> }>; classes: Map<string, string> }>();

function driftInputs(world: World): { pools: Map<string, { hash: string; requirements: ReturnType<typeof nodePoolRequirements> }>; classes: Map<string, string> } {
  let inputs = DRIFT_INPUTS.get(world.pools);
  if (!inputs) DRIFT_INPUTS.set(world.pools, (inputs = { pools: new Map(), classes: new Map() }));
  return inputs;
}

/** The NodePool's current hash and requirements, worked out once per pass. */
function driftInputsOf(world: World, pool: NodePool): { hash: string; requirements: ReturnType<typeof nodePoolRequirements> } {
  const current = driftInputs(world);
  let poolInputs = current.pools.get(pool.metadata.name);
  if (!poolInputs) current.pools.set(pool.metadata.name, (poolInputs = { hash: nodePoolHash(pool), requirements: nodePoolRequirements(pool) }));
  return poolInputs;
}

/** Why a NodeClaim has drifted, in words, or undefined. */
function driftOf(world: World, claim: NodeClaim): string | undefined {
  const pool = world.pools.get(claim.nodePool);
  if (!pool) return undefined;
  const node = nodeOfClaim(world, claim);
  const nodeClass = world.classes.get(claim.nodeClass);
  const current = driftInputs(world);
  const poolInputs = driftInputsOf(world, pool);
  let classHash = nodeClass ? current.classes.get(nodeClass.metadata.name) : undefined;
  if (nodeClass && classHash === undefined) current.classes.set(nodeClass.metadata.name, (classHash = nodeClassHash(nodeClass)));
  const reason = driftReason(
    { ...(claim.nodePoolHash ? { nodePoolHash: claim.nodePoolHash } : {}), ...(claim.nodeClassHash ? { nodeClassHash: claim.nodeClassHash } : {}), labels: node?.labels ?? claim.labels },
    poolInputs.hash,
    poolInputs.requirements,
    classHash,
  );
  if (!reason) return undefined;
  switch (reason) {
    case 'NodePoolDrifted':
      return `NodePoolDrifted: NodePool ${pool.metadata.name}'s template changed since the node was launched`;
    case 'RequirementsDrifted':
      return `RequirementsDrifted: the node no longer satisfies NodePool ${pool.metadata.name}'s requirements`;
    case 'NodeClassDrifted':
      return `NodeClassDrifted: EC2NodeClass ${claim.nodeClass} changed since the node was launched`;
    default:
      return reason satisfies never;
  }
}

/** Sum of the eviction costs of the node's pods (Karpenter orders candidates by it). */
function disruptionCost(world: World, claim: NodeClaim): number {
  return podsOn(world, nodeOfClaim(world, claim)).reduce((sum, p) => {
    const deletionCost = Number(p.annotations['controller.kubernetes.io/pod-deletion-cost'] ?? 0);
    const priority = (p.spec as { priority?: number }).priority ?? 0;
    return sum + evictionCost(Number.isFinite(deletionCost) ? deletionCost : 0, priority);
  }, 0);
}

function schedulingPods(world: World, claim: NodeClaim): SchedulingPod[] {
  return podsOn(world, nodeOfClaim(world, claim)).map((p) => toSchedulingPod(p, p.createdAt));
}

function toCandidate(world: World, claim: NodeClaim): ConsolidationCandidate | undefined {
  const node = nodeOfClaim(world, claim);
  if (!node || !claim.instanceType || !claim.capacityType || claim.price === undefined) return undefined;
  return {
    nodeClaim: claim.name,
    node: node.name,
    nodePool: claim.nodePool,
    instanceType: claim.instanceType,
    capacityType: claim.capacityType,
    price: claim.price,
    pods: schedulingPods(world, claim),
    capacity: usageOf(claim.nodePool, [claim], world.types),
  };
}

/** The solver's view: NodePools with their instance types and limits, and the capacity that is not going away. */
function solverView(world: World, leaving: readonly NodeClaim[]): { templates: NodePoolTemplate[]; existing: ReturnType<typeof existingCapacity> } {
  const live = world.claims.filter(isLive);
  const staying = live.filter((c) => !leaving.some((l) => l.name === c.name));
  const typesByClass = new Map<string, InstanceType[]>([...world.types].map(([k, v]) => [k, [...v]]));
  const templates = [...world.pools.values()]
    .filter((np) => world.classes.has(np.spec.template.spec.nodeClassRef.name))
    .map((np) => buildNodePoolTemplate(np, world.types.get(np.spec.template.spec.nodeClassRef.name) ?? [], world.daemonSets, usageOf(np.metadata.name, staying, typesByClass)));
  const inFlight = live.filter((c) => isInFlight(c, world.nodes, world.now));
  const podsByKey = new Map(world.pods.map((p) => [`${p.namespace}/${p.name}`, p]));
  const daemonByPool = new Map(templates.map((t) => [t.name, t] as const));
  const leavingNodes = new Set(leaving.map((c) => c.providerId));
  const nodes = world.nodes.filter((n) => !leavingNodes.has(n.providerId));
  return { templates, existing: existingCapacity(nodes, world.pods, live, inFlight, podsByKey, typesByClass, daemonByPool) };
}

/**
 * What a consolidation simulation solves against. Candidates stay in the existing capacity (each simulation removes
 * the ones it tries); their usage counts for limits. Nodes still inside their own consolidateAfter window take none of
 * the candidates' pods (`closed`): core `pkg/controllers/provisioning/scheduling/scheduler.go addToExistingNode`
 * skips a node `isUnderConsolidateAfter` for a pod that is not pending and not on a node being deleted — every pod a
 * consolidation here moves is such a pod (candidates are never being deleted, pending pods are the provisioner's).
 */
function consolidationContext(pass: Pass, world: World, candidates: readonly NodeClaim[]): ConsolidationContext {
  const view = solverView(world, []);
  void candidates;
  const claimByNode = new Map<string, NodeClaim>();
  for (const c of world.claims) {
    const node = isLive(c) ? nodeOfClaim(world, c) : undefined;
    if (node) claimByNode.set(node.name, c);
  }
  const existing = view.existing.map((e) => {
    const claim = e.kind === 'node' ? claimByNode.get(e.name) : undefined;
    return claim && underConsolidateAfter(world, claim) ? { ...e, closed: true } : e;
  });
  return { templates: view.templates, existing, spotToSpot: pass.deps.spotToSpotConsolidation };
}

/**
 * Core `pkg/utils/disruption/disruption.go IsUnderConsolidateAfter`: an initialized NodeClaim whose NodePool sets a
 * consolidateAfter other than Never and 0, less than that long after its last pod event (or its initialization when
 * none is known).
 */
function underConsolidateAfter(world: World, claim: NodeClaim): boolean {
  if (claim.state !== 'Initialized' || !claim.initializedAt) return false;
  const after = world.pools.get(claim.nodePool)?.spec.disruption.consolidateAfter;
  if (after === undefined || after === NEVER) return false;
  const afterMs = parseDuration(after) * 1000;
  if (afterMs === 0) return false;
  return world.now - (lastPodEventMs(world, claim) ?? Date.parse(claim.initializedAt)) < afterMs;
}

/**
 * The NodeClaims it takes to move these nodes' pods elsewhere (drift), or why they cannot move. A plan whose node
 * would itself be drifted (`replacementDrift`) is refused: launching it would start a replace loop.
 * @param region the cluster's region, on every node
 */
function replacementPlans(world: World, leaving: readonly NodeClaim[], region: string): { plans: readonly NodeClaimPlan[]; unschedulable?: string; loop?: true } {
  const pods = leaving.flatMap((c) => schedulingPods(world, c));
  if (pods.length === 0) return { plans: [] };
  const view = solverView(world, leaving);
  const results = solve(pods, view.templates, view.existing);
  const stuck = results.unschedulable[0];
  if (stuck) return { plans: [], unschedulable: `pod ${stuck.pod} could not be placed elsewhere: ${stuck.reason}` };
  for (const plan of results.newNodeClaims) {
    const pool = world.pools.get(plan.nodePool);
    if (!pool) continue;
    const drift = replacementDrift(driftInputsOf(world, pool).requirements, plan, world.types.get(plan.nodeClass) ?? [], region);
    if (drift) {
      return {
        plans: [],
        loop: true,
        unschedulable: `its replacement (${drift.instanceType} in NodePool ${plan.nodePool}) would be drifted too: its node would not satisfy ${drift.requirement}, which no instance type or label Skiff sets provides; launching it would only start a replace loop`,
      };
    }
  }
  return { plans: results.newNodeClaims };
}

// ---------------------------------------------------------------------------------------------------------------
// Step 2: validating, replacing, draining

async function reject(pass: Pass, world: World, command: string, candidates: readonly NodeClaim[], reason: string, untaint: boolean): Promise<void> {
  for (const claim of candidates) {
    const fresh = (await pass.deps.store.get(claim.name)) ?? claim;
    if (fresh.disruption?.command !== command || !isLive(fresh)) continue;
    await writeIgnoringConflict(pass, withoutDisruption(fresh));
    const node = nodeOfClaim(world, fresh);
    if (untaint && node?.taints.some((t) => t.key === DISRUPTED_TAINT.key)) {
      await pass.deps.cluster.patchNode(node.name, { taints: node.taints.filter((t) => t.key !== DISRUPTED_TAINT.key) });
    }
  }
  pass.report.rejected.push({ command, reason });
  await recordEventBestEffort(pass.deps.cluster, {
    type: 'Normal',
    reason: untaint ? 'DisruptionBlocked' : 'ConsolidationRejected',
    object: `NodeClaim/${candidates[0]!.name}`,
    message: `disruption ${command} of ${candidates.map((c) => c.name).join(', ')} abandoned: ${reason}`,
  });
}

/** A proposal at least 15 s old: still valid → start it; else drop it. */
async function validateAndStart(pass: Pass, world: World, command: string, candidates: readonly NodeClaim[]): Promise<void> {
  const d = candidates[0]!.disruption!;
  const all = d.candidates.map((name) => world.claims.find((c) => c.name === name));
  if (all.some((c) => !c || !isLive(c) || c.disruption?.command !== command)) {
    await reject(pass, world, command, candidates, 'a candidate changed since the proposal', false);
    return;
  }
  // Re-run the method on exactly these candidates, as if undisrupted.
  const fresh = all.map((c) => withoutDisruption(c!));
  const view: World = { ...world, claims: world.claims.map((c) => fresh.find((f) => f.name === c.name) ?? c) };
  const again = findProposal(pass, view, fresh);
  if (!again || again.reason !== d.reason || again.decision !== d.decision || again.candidates.length !== fresh.length) {
    await reject(pass, world, command, candidates, `re-validation after ${VALIDATION_DELAY_MS / 1000}s no longer finds it (${d.reason}, ${d.decision})`, false);
    return;
  }
  const now = new Date(world.now).toISOString();
  let replacements: NodeClaimPlan[] = [];
  if (d.decision === 'replace') {
    if (d.reason === 'Drifted') replacements = [...replacementPlans(view, fresh, pass.deps.region).plans];
    else {
      const ctx = consolidationContext(pass, view, fresh);
      // Exactly the command's candidates (see findProposal: a new search could settle on others).
      const decision = simulateConsolidation(
        fresh.map((c) => toCandidate(view, c)!),
        ctx,
        fresh.length === 1,
      );
      if (decision?.kind === 'replace') replacements = [decision.replacement];
    }
    if (replacements.length === 0) {
      await reject(pass, world, command, candidates, 'no replacement could be planned any more', false);
      return;
    }
  }
  const names = replacements.map((_, i) => `${replacements[i]!.nodePool}-r${fnv1a(`${command}|${i}`).toString(36).slice(0, 5)}`);
  const started: NodeClaimDisruption = { ...d, phase: d.decision === 'replace' ? 'Replacing' : 'Draining', replacements: names, startedAt: now, ...(d.decision === 'delete' ? { drainStartedAt: now } : {}) };
  for (const claim of all) {
    const saved = await writeIgnoringConflict(pass, { ...claim!, ...(started.phase === 'Draining' ? { state: 'Deleting' as const } : {}), disruption: started });
    if (!saved) return; // moved on meanwhile; the next pass sees what happened
    await taint(pass, nodeOfClaim(world, claim!));
  }
  pass.report.started.push(command);
  await recordEventBestEffort(pass.deps.cluster, {
    type: 'Normal',
    reason: d.decision === 'replace' ? 'DisruptionLaunching' : 'DisruptionTerminating',
    object: `NodeClaim/${all[0]!.name}`,
    message: `Disrupting NodeClaim(s) ${d.candidates.join(', ')} (${d.reason}: ${d.message})${names.length ? `; launching replacement ${names.join(', ')}` : ''}`,
  });
  for (const [i, plan] of replacements.entries()) await launchReplacement(pass, world, names[i]!, plan, d.candidates);
}

async function taint(pass: Pass, node: ClusterNode | undefined): Promise<void> {
  if (!node || node.taints.some((t) => t.key === DISRUPTED_TAINT.key)) return;
  pass.writes++;
  await pass.deps.cluster.patchNode(node.name, { taints: [...node.taints, DISRUPTED_TAINT] });
}

/** Creates (or finds) the replacement's record and launches it through the launch protocol. */
async function launchReplacement(pass: Pass, world: World, name: string, plan: NodeClaimPlan, candidates: readonly string[]): Promise<void> {
  const pool = world.pools.get(plan.nodePool);
  const extras = { ...(pool ? nodeClaimExtras(pool, world.classes.get(plan.nodeClass)) : {}), replacementFor: candidates };
  pass.writes++;
  const record = (await createNodeClaimRecord(pass.deps, plan, world.now, name, extras)) ?? (await pass.deps.store.get(name));
  if (!record || !isLive(record) || record.instanceId) return;
  await launchPending(pass.deps, record, world.types.get(plan.nodeClass) ?? [], world.nodes, world.now);
}

/** Replacing: once every replacement is initialized the candidates start draining; a failed replacement ends the command. */
async function awaitReplacements(pass: Pass, world: World, command: string, candidates: readonly NodeClaim[]): Promise<void> {
  const d = candidates[0]!.disruption!;
  for (const c of candidates) await taint(pass, nodeOfClaim(world, c));
  const replacements = d.replacements.map((name) => world.claims.find((c) => c.name === name));
  const failed = replacements.find((r) => r && !isLive(r));
  if (failed) {
    await reject(pass, world, command, candidates, `replacement ${failed.name} failed (${failed.launchError ?? failed.deletionReason ?? failed.state})`, true);
    return;
  }
  if (replacements.some((r) => !r)) {
    // The pass that started the command died before creating a replacement's record: plan it again.
    const again = d.reason === 'Drifted' ? replacementPlans(world, candidates, pass.deps.region).plans : [];
    if (d.reason !== 'Drifted' || again.length !== d.replacements.length) {
      await reject(pass, world, command, candidates, 'a replacement was never created and cannot be planned the same way again', true);
      return;
    }
    for (const [i, name] of d.replacements.entries()) if (!replacements[i]) await launchReplacement(pass, world, name, again[i]!, d.candidates);
    return;
  }
  if (replacements.every((r) => r!.state === 'Initialized')) {
    const now = new Date(world.now).toISOString();
    for (const claim of candidates) {
      const saved = await writeIgnoringConflict(pass, { ...claim, state: 'Deleting', disruption: { ...d, phase: 'Draining', drainStartedAt: now } });
      if (saved) pass.report.started.push(`${command}:drain:${claim.name}`);
    }
    return;
  }
  if (world.now - Date.parse(d.startedAt ?? d.proposedAt) > REPLACEMENT_TIMEOUT_MS) {
    await reject(pass, world, command, candidates, `replacements ${d.replacements.join(', ')} did not initialize within ${REPLACEMENT_TIMEOUT_MS / 60_000} minutes`, true);
    return;
  }
  // Resume a launch a crash interrupted (the provisioner resumes Pending records too; the protocol is safe to overlap).
  for (const r of replacements) {
    if (r!.state === 'Pending' && !r!.instanceId) await launchPending(pass.deps, r!, world.types.get(r!.nodeClass) ?? [], world.nodes, world.now);
  }
}

/** Step 3: NodeClaims past their expireAfter start draining now (no budget, no replacement first). */
async function expire(pass: Pass, world: World): Promise<void> {
  for (const claim of world.claims) {
    if (!isLive(claim) || claim.expireAfterSeconds == null || claim.state === 'Pending' || claim.state === 'Deleting') continue;
    if (claim.disruption && claim.disruption.phase !== 'Proposed') continue;
    if (world.now < Date.parse(claim.createdAt) + claim.expireAfterSeconds * 1000) continue;
    if (await startForceful(pass, world, claim, 'Expired', `expireAfter ${formatDuration(claim.expireAfterSeconds)} passed`)) pass.report.expired.push(claim.name);
  }
}

/**
 * Marks a NodeClaim for a forceful disruption (Expired, Interrupted): Draining at once, no budget, no replacement
 * first; taints its node. A disruption already past its proposal is left as it is.
 * @returns the saved record, or undefined when another writer moved it on (or it was already draining)
 */
async function startForceful(pass: Pass, world: World, claim: NodeClaim, reason: 'Expired' | 'Interrupted', message: string): Promise<NodeClaim | undefined> {
  // A node already draining drains on; a proposal or a consolidation still launching its replacement is taken over
  // (the forceful reason wins, and the replacement already on its way is kept).
  if (claim.state === 'Deleting' || claim.disruption?.phase === 'Draining') return undefined;
  const now = new Date(world.now).toISOString();
  const disruption: NodeClaimDisruption = {
    command: `${reason.toLowerCase()}-${fnv1a(claim.name).toString(36)}`,
    reason,
    decision: 'delete',
    phase: 'Draining',
    replacements: claim.disruption?.phase === 'Replacing' ? claim.disruption.replacements : [],
    candidates: [claim.name],
    message,
    proposedAt: now,
    startedAt: now,
    drainStartedAt: now,
  };
  const saved = await writeIgnoringConflict(pass, { ...claim, state: 'Deleting', disruption });
  if (!saved) return undefined;
  await taint(pass, nodeOfClaim(world, claim));
  await recordEventBestEffort(pass.deps.cluster, { type: 'Normal', reason: 'DisruptionTerminating', object: `NodeClaim/${claim.name}`, message: `Disrupting NodeClaim ${claim.name}: ${reason} (${message})` });
  return saved;
}

/**
 * Disrupts one NodeClaim forcefully now — the interruption controller's entry (a spot interruption warning, a
 * scheduled maintenance, an instance stopping): marks it Draining with `reason` (no budget, no replacement first),
 * taints its node and evicts its pods through the Eviction API (PDBs still answer; do-not-disrupt pods are waited
 * for), and when nothing is left to evict deletes the record, terminates the instance and deletes the Node. Later
 * disruption passes finish a drain this call could not. Idempotent: a NodeClaim already draining is drained further.
 * @param name the NodeClaim's name
 * @returns what was done (empty when the NodeClaim is unknown or already gone)
 * @throws whatever the ports throw for failures other than conflicts
 */
export async function disruptNow(deps: DisruptionDeps, name: string, reason: 'Expired' | 'Interrupted', message: string): Promise<DisruptionReport> {
  const pass: Pass = { deps, writes: 0, report: { proposed: [], started: [], rejected: [], expired: [], evicted: [], forceDeleted: [], waiting: [], deleted: [], skipped: [], blocked: [], budgetBlocked: [] } };
  let world = await readWorld(deps);
  const claim = world.claims.find((c) => c.name === name);
  if (!claim || !isLive(claim)) return pass.report;
  await startForceful(pass, world, claim, reason, message);
  world = await readWorld(deps, world);
  const current = world.claims.find((c) => c.name === name);
  if (current && isLive(current) && current.disruption?.phase === 'Draining') await drain(pass, world, current);
  return pass.report;
}

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
 */
async function drain(pass: Pass, world: World, claim: NodeClaim): Promise<void> {
  const d = claim.disruption!;
  const node = nodeOfClaim(world, claim);
  // Pods that tolerate the disrupted taint are neither evicted nor waited for (core `isDrainable`): they go with the node.
  // Skiff waits for such a pod (never evicting it: its replacement would land on this node again) while it is annotated
  // do-not-disrupt, or while its PodDisruptionBudget could not spare it and the others of it here; from the
  // terminationGracePeriod deadline minus its grace it is deleted like any other. Karpenter's terminator takes such
  // pods down with the node whatever their annotation or PDB says.
  const onNode = podsOn(world, node);
  const stranded = strandedByPdb(onNode.filter((p) => !isDrainable(p)), world.pdbs);
  const pods = onNode.filter((p) => isDrainable(p) || stranded.has(p) || podDoNotDisrupt(p.annotations, p.createdAt, world.now).active);
  const deadline = claim.terminationGracePeriodSeconds !== undefined ? Date.parse(d.drainStartedAt ?? d.startedAt ?? d.proposedAt) + claim.terminationGracePeriodSeconds * 1000 : Number.POSITIVE_INFINITY;
  // A forceful disruption of a node that stopped answering (its instance reclaimed or stopped) has nothing left to
  // drain gracefully: Karpenter removes the finalizer of a NotReady node whose instance is gone.
  const gone = node !== undefined && !node.ready && (d.reason === 'Interrupted' || d.reason === 'Expired' || d.reason === 'NodeDeleted' || d.reason === 'NodeClaimDeleted');
  if (node && pods.length > 0 && !gone) {
    await taint(pass, node);
    for (const pod of pods) {
      const key = `${pod.namespace}/${pod.name}`;
      // The grace period leaves the pod no more time than its own: deleted, PDBs and do-not-disrupt notwithstanding.
      const podGraceSeconds = (pod.spec as { terminationGracePeriodSeconds?: number }).terminationGracePeriodSeconds ?? DEFAULT_POD_GRACE_SECONDS;
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
        const why = `pod ${key} tolerates ${DISRUPTED_TAINT.key} (it would come back if evicted) and its PodDisruptionBudget cannot spare it now`;
        pass.report.waiting.push({ pod: key, reason: why });
        await recordBlocked(pass, world.now, { type: 'Warning', reason: 'DisruptionBlocked', object: `Node/${node.name}`, message: `drain of ${node.name} (${d.reason}) waits: ${why}${Number.isFinite(deadline) ? ` (until the terminationGracePeriod ends at ${new Date(deadline).toISOString()})` : ''}` });
        continue;
      }
      pass.writes++;
      const outcome = await pass.deps.cluster.evictPod(pod.namespace, pod.name);
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
  if ((await pass.deps.cluster.forceDeletePod(pod.namespace, pod.name, grace)) !== 'deleted') return;
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
 * does once the instance is gone): a crash in between leaves what garbage collection cleans up.
 */
async function finish(pass: Pass, world: World, claim: NodeClaim, node: ClusterNode | undefined): Promise<void> {
  const d = claim.disruption!;
  const saved = await writeIgnoringConflict(pass, { ...claim, state: 'Deleted', deletedAt: new Date(world.now).toISOString(), deletionReason: d.reason });
  if (!saved) return;
  if (claim.instanceId) await pass.deps.cloud.delete(claim.instanceId);
  if (node) await deleteNodeReleasingFinalizer(pass.deps.cluster, node);
  pass.report.deleted.push({ nodeClaim: claim.name, reason: d.reason });
}
