/**
 * Reading the world: what one disruption pass knows of the cluster and the records, read once and again only after a
 * write (`disrupt.ts`), and the questions every phase asks of it (a node's pods, a node's last pod event).
 */
import type { NodeClaim } from '../../core/api/nodeclaim.js';
import type { NodePool } from '../../core/api/nodepool.js';
import type { PodDisruptionBudget } from '../../core/api/pdb.js';
import { pdbAllowances, type PdbAllowance } from '../../core/disruption/pdb.js';
import { offeringKey, withUnavailable, type InstanceType } from '../../core/instancetypes/offering.js';
import type { DaemonSetLike } from '../../core/provisioning/nodepool-template.js';
import type { ClusterNode, ClusterPod, PodEventTimes } from '../../ports/cluster.js';
import { instanceTypeQuery, nodeOf } from '../launch.js';
import { THROTTLED_ATTEMPTS, retryThrottled } from '../retry.js';
import type { DisruptionDeps, DisruptionNodeClass } from './deps.js';
import type { DisruptionMemory } from './memory.js';
import { timestampMs } from '../../core/api/timestamp.js';
import { isOwnedByNode } from '../../core/api/pod-owner.js';

/** The state one pass reads once (and again after a write). */
export interface World {
  /** The pass's clock, epoch ms. */
  readonly now: number;
  readonly pools: ReadonlyMap<string, NodePool>;
  readonly classes: ReadonlyMap<string, DisruptionNodeClass>;
  readonly daemonSets: readonly DaemonSetLike[];
  readonly pods: readonly ClusterPod[];
  readonly nodes: readonly ClusterNode[];
  /** Pods by the name of the node they are bound to. */
  readonly podsByNode: ReadonlyMap<string, readonly ClusterPod[]>;
  readonly claims: readonly NodeClaim[];
  readonly pdbs: readonly PdbAllowance[];
  /** Instance types per EC2NodeClass name, with the unavailable offerings marked. */
  readonly types: ReadonlyMap<string, readonly InstanceType[]>;
  /** The unavailable offerings' keys, sorted and joined (what changes `types`). */
  readonly unavailableKey: string;
  /** The latest pod event per node, when the cluster reports them (read once per pass). */
  readonly podEvents?: PodEventTimes;
}

/**
 * Reads the cluster and the records; `previous` keeps the slow-changing parts (NodePools, types) of an earlier read.
 * Each read refused by a throttled or briefly unavailable API is tried again (`retryThrottled`).
 * @throws whatever the ports throw (a `ThrottledError` only after {@link THROTTLED_ATTEMPTS} refusals of one read)
 */
export async function readWorld(deps: DisruptionDeps, previous?: World): Promise<World> {
  const now = deps.clock.now();
  // Within one pass the slow-changing parts (NodePools, classes, DaemonSets, PDBs, instance types and their
  // availability) are read once; pods, nodes and records again after each write.
  // Every read is tried again when a throttled or briefly unavailable API refuses it (`retry.ts`): a pass reads the
  // world after each of its writes, and one refused read used to end the pass (issue 21: under API-server errors and
  // DynamoDB throttling most passes died reading, and empty nodes were never deleted).
  const [pods, nodes, claims, pdbList, types, podEvents] = await Promise.all([
    retryThrottled(() => deps.cluster.listPods()),
    retryThrottled(() => deps.cluster.listNodes()),
    retryThrottled(() => deps.store.list()),
    previous ? previous.pdbs.map((a) => a.pdb) : retryThrottled(() => deps.cluster.listPodDisruptionBudgets()),
    previous ? previous.types : retryThrottled(() => deps.unavailableOfferings.listUnavailable(now)),
    previous ? previous.podEvents : deps.cluster.lastPodEventTimes ? retryThrottled(() => deps.cluster.lastPodEventTimes!()) : undefined,
  ]);
  let pools = previous?.pools;
  let classes = previous?.classes;
  let daemonSets = previous?.daemonSets;
  let baseTypes: Map<string, readonly InstanceType[]> | undefined;
  if (!pools || !classes || !daemonSets) {
    const [poolList, classList, dsList] = await Promise.all([
      retryThrottled(() => deps.cluster.listNodePools()),
      retryThrottled(() => deps.cluster.listNodeClasses()),
      retryThrottled(() => deps.cluster.listDaemonSets()),
    ]);
    pools = new Map(poolList.map((p) => [p.metadata.name, p]));
    classes = new Map(classList.map((c) => [c.metadata.name, c]));
    daemonSets = dsList;
    baseTypes = new Map();
    for (const nc of classList) baseTypes.set(nc.metadata.name, await retryThrottled(() => deps.cloud.getInstanceTypes(instanceTypeQuery(nc))));
  }
  const unavailableKey = Array.isArray(types) ? types.map(offeringKey).sort().join(',') : previous!.unavailableKey;
  const available: ReadonlyMap<string, readonly InstanceType[]> = Array.isArray(types)
    ? new Map([...baseTypes!].map(([k, v]) => [k, withUnavailable(v, new Set(types.map(offeringKey)))] as const))
    : (types as ReadonlyMap<string, readonly InstanceType[]>);
  const podsByNode = groupByNode(pods, deps.memory);
  const readyNodes = new Set(nodes.filter((n) => n.ready).map((n) => n.name));
  // Without a PodDisruptionBudget there is nothing to work out per pod.
  const pdbs = pdbList.length === 0 ? [] : pdbAllowances(
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
    podsByNode,
    claims,
    pdbs,
    types: available,
    unavailableKey,
    ...(podEvents ? { podEvents } : {}),
  };
  return world;
}

/**
 * Pods by the name of their node. The pod objects a Cluster port lists are read-only, so a list of the same objects
 * in the same order as the last one grouped (what the simulated cluster lists while no pod changes) reuses that
 * grouping: an identity comparison per pod instead of a map insertion.
 */
function groupByNode(pods: readonly ClusterPod[], memory: DisruptionMemory): ReadonlyMap<string, readonly ClusterPod[]> {
  const last = memory.lastPodsByNode;
  if (last && last.pods.length === pods.length && last.pods.every((p, i) => p === pods[i])) return last.byNode;
  const byNode = new Map<string, ClusterPod[]>();
  for (const p of pods) {
    if (!p.nodeName) continue;
    const onNode = byNode.get(p.nodeName);
    if (onNode) onNode.push(p);
    else byNode.set(p.nodeName, [p]);
  }
  memory.lastPodsByNode = { pods, byNode };
  return byNode;
}

/**
 * The pods a drain moves: bound, not terminal, neither DaemonSet pods nor mirror (static) pods (Karpenter core
 * `pkg/utils/pod/scheduling.go` `IsReschedulable`: those go with the node). A node with none of them is empty.
 */
function reschedulable(pods: readonly ClusterPod[]): ClusterPod[] {
  return pods.filter((p) => (p.phase === 'Running' || p.phase === 'Pending') && !p.owner?.startsWith('DaemonSet/') && !isOwnedByNode(p.owner));
}

/** The pods a disruption of `node` moves ({@link reschedulable}); none without a node. */
export function podsOn(world: World, node: ClusterNode | undefined): ClusterPod[] {
  return node ? reschedulable(world.podsByNode.get(node.name) ?? []) : [];
}

/** The pods a disruption of the NodeClaim's node moves (see {@link podsOn}). */
export function podsOfClaim(world: World, claim: NodeClaim): ClusterPod[] {
  return podsOn(world, nodeOf(claim, world.nodes));
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
 * (`Cluster.lastPodEventTimes`: the simulated cluster stamps each event as it happens; the Kubernetes adapter
 * reads the bind, finish and deletion timestamps of the pods still in the API) and keeps the latest on the NodeClaim
 * record, where it outlives the pods it came from.
 */
export function lastPodEventMs(world: World, claim: NodeClaim): number | undefined {
  const stored = claim.lastPodEventAt ? timestampMs(claim.lastPodEventAt) : undefined;
  const node = nodeOf(claim, world.nodes);
  const seen = node ? world.podEvents?.byNode.get(node.name) : undefined;
  if (seen !== undefined && (stored === undefined || seen - stored >= POD_EVENT_DEDUPE_MS)) return seen;
  return stored;
}
