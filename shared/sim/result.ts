/**
 * Builds the `simulate --json` Result (the contract in docs/contracts.md#result) from what the simulation recorded:
 * NodeClaim records from the store, the simulated cluster's nodes, pods and events, the simulated EC2's launch
 * attempts and instances, and the observer's violation counts. Times are ISO-8601 UTC.
 */
import { LAUNCH_RETRYING_REASON } from '../controllers/launch.js';
import type { NodeClaim } from '../core/api/nodeclaim.js';
import { formatAmount, type ResourceList } from '../core/resources/resource-list.js';
import type { ViolationCounts } from './observer.js';
import type { PendingFigures, Result, ResultPod } from './result-schema.js';
import { wastedLaunchFigures } from './result-waste.js';
import type { SimEvent, SimNode, SimPod } from './simulated-cluster.js';
import type { LaunchAttempt, SimInstance } from './simulated-ec2.js';
import { disruptionMethod } from './what-if.js';

/** Everything the Result is made from. Times are epoch ms. */
export interface ResultInputs {
  readonly scenario: string;
  readonly startMs: number;
  readonly endMs: number;
  readonly seed: number;
  /** The consolidation setting of the run. @default 'skiff' */
  readonly consolidation?: 'skiff' | 'karpenter';
  /** The provisioning setting of the run (`ProvisioningSetting`). @default 'skiff' */
  readonly provisioning?: 'skiff' | 'karpenter';
  readonly region: string;
  readonly nodeClaims: readonly NodeClaim[];
  /** Names of the NodeClaims of the nodes the scenario started with (`spec.nodes`). @default none */
  readonly startingNodeClaims?: ReadonlySet<string>;
  /** Why each NodeClaim still live at the end is drifted then (name → `driftMessage`); others are absent. @default none */
  readonly driftedAtEnd?: ReadonlyMap<string, string>;
  readonly nodes: readonly SimNode[];
  readonly pods: readonly SimPod[];
  /** Pods still live at the end. */
  readonly livePods: readonly SimPod[];
  readonly events: readonly SimEvent[];
  readonly launchAttempts: readonly LaunchAttempt[];
  readonly instances: readonly SimInstance[];
  readonly violations: ViolationCounts;
  /** Which prices were simulated, in words. @default the catalogue's list prices and simulated spot prices */
  readonly pricing?: PricingNote;
}

/** How prices were obtained, stated in every Result (a field added to the contract). */
export interface PricingNote {
  readonly onDemand: string;
  readonly spot: string;
}

/** The Result plus Skiff's additions (`pricing`). */
export type SimulationResult = Result & { readonly pricing: PricingNote };

const iso = (ms: number): string => new Date(ms).toISOString();
const isoOrNull = (ms: number | undefined): string | null => (ms === undefined ? null : iso(ms));
const isoStringOrNull = (s: string | undefined): string | null => s ?? null;

/** Assembles the Result. Lists are in creation order; nothing is filtered. */
export function buildResult(input: ResultInputs): SimulationResult {
  const claimByInstance = new Map(input.nodeClaims.filter((c) => c.instanceId).map((c) => [c.instanceId!, c]));
  const nodeByName = new Map(input.nodes.map((n) => [n.name, n]));
  const instanceById = new Map(input.instances.map((i) => [i.instanceId, i]));
  const nodeClaims = [...input.nodeClaims].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.name.localeCompare(b.name));
  const result = {
    scenario: input.scenario,
    start: iso(input.startMs),
    end: iso(input.endMs),
    seed: input.seed,
    consolidation: input.consolidation ?? 'skiff',
    provisioning: input.provisioning ?? 'skiff',
    pricing: input.pricing ?? {
      onDemand: `us-east-1 on-demand list prices (Linux, shared tenancy), used for ${input.region}`,
      spot: 'simulated: derived deterministically per instance type and zone (25–55 % of on-demand) unless pinned by spec.spotPrices',
    },
    nodeClaims: nodeClaims.map((c) => {
      return {
        name: c.name,
        nodePool: c.nodePool,
        instanceType: c.instanceType ?? null,
        capacityType: c.capacityType ?? null,
        zone: c.zone ?? null,
        price: c.price ?? null,
        labels: { ...c.labels },
        annotations: { ...(c.annotations ?? {}) },
        taints: c.taints.map((t) => ({ ...t })),
        allocatable: quantities(c.allocatable ?? {}),
        requirements: c.requirements.map((r) => ({ key: r.key, operator: r.operator, ...(r.values ? { values: [...r.values] } : {}), ...(r.minValues !== undefined ? { minValues: r.minValues } : {}) })),
        createdAt: c.createdAt,
        launchedAt: isoStringOrNull(c.launchedAt),
        registeredAt: isoStringOrNull(c.registeredAt),
        initializedAt: isoStringOrNull(c.initializedAt),
        deletedAt: isoStringOrNull(c.deletedAt),
        deletionReason: c.deletionReason ?? null,
        launchError: c.launchError ?? null,
        existedAtStart: input.startingNodeClaims?.has(c.name) ?? false,
        ...(input.driftedAtEnd?.has(c.name) ? { driftedAtEnd: input.driftedAtEnd.get(c.name)! } : {}),
      };
    }),
    nodes: input.nodes.map((n) => ({
      name: n.name,
      nodeClaim: claimByInstance.get(n.instanceId)?.name ?? null,
      instanceType: n.instanceType,
      zone: n.zone,
      capacityType: n.capacityType as 'spot' | 'on-demand' | 'reserved',
      labels: { ...n.labels },
      annotations: { ...n.annotations },
      createdAt: iso(n.createdAt),
      deletedAt: isoOrNull(n.deletedAt),
      hourlyUSD: instanceById.get(n.instanceId)?.price ?? null,
    })),
    launchAttempts: input.launchAttempts.map((a) => ({ ...a, at: iso(a.at), capacityTypes: [...a.capacityTypes], instanceTypeNames: [...a.instanceTypeNames], zones: [...a.zones] })),
    pods: input.pods.map((p) => {
      const node = p.nodeName ? nodeByName.get(p.nodeName) : undefined;
      return {
        namespace: p.namespace,
        name: p.name,
        owner: p.owner,
        createdAt: iso(p.createdAt),
        deletedAt: isoOrNull(p.deletedAt),
        node: p.nodeName ?? null,
        nodeClaim: node ? (claimByInstance.get(node.instanceId)?.name ?? null) : null,
        firstPendingAt: isoOrNull(p.firstPendingAt),
        scheduledAt: isoOrNull(p.scheduledAt),
        evictions: p.evictions,
      };
    }),
    unschedulable: unschedulable(input),
    disruptions: disruptions(input.nodeClaims),
    events: input.events.map((e) => ({ at: iso(e.at), type: e.type, reason: e.reason, object: e.object, message: e.message })),
    violations: { ...input.violations },
    cost: cost(input.instances, input.startMs, input.endMs),
  };
  return { ...result, pending: pendingFigures(result.pods, input.startMs, input.endMs), wastedLaunches: wastedLaunchFigures(result) };
}

/**
 * Pods pending during the run (see `PendingFiguresSchema`): each pod counts from `firstPendingAt` until it was
 * scheduled or deleted, whichever came first, or `endMs`, clipped to `[startMs, endMs]`. Pods never marked
 * Unschedulable count nowhere. Ties for the longest wait go to the pod that started waiting first.
 * @param pods the Result's pods (UTC ISO times)
 * @param startMs the run's start, epoch ms
 * @param endMs the run's end, epoch ms
 */
export function pendingFigures(pods: readonly ResultPod[], startMs: number, endMs: number): PendingFigures {
  const steps: { at: number; delta: number }[] = [];
  let count = 0;
  let podMs = 0;
  let longest: PendingFigures['longest'] = null;
  for (const p of pods) {
    if (p.firstPendingAt === null) continue;
    const ends = [p.scheduledAt, p.deletedAt].filter((t): t is string => t !== null).map((t) => Date.parse(t));
    const from = Math.max(startMs, Date.parse(p.firstPendingAt));
    const to = Math.min(endMs, ends.length > 0 ? Math.min(...ends) : endMs);
    if (to < from) continue;
    count++;
    podMs += to - from;
    steps.push({ at: from, delta: 1 }, { at: to, delta: -1 });
    const seconds = (to - from) / 1000;
    if (!longest || seconds > longest.seconds) longest = { pod: `${p.namespace}/${p.name}`, since: new Date(from).toISOString(), seconds, stillPending: ends.length === 0 };
  }
  // Ends before starts at one instant: a pod scheduled as another turns pending is not counted twice.
  steps.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let now = 0;
  let peak = 0;
  let peakAt: number | undefined;
  for (const s of steps) {
    now += s.delta;
    if (now > peak) [peak, peakAt] = [now, s.at];
  }
  return { pods: count, peak, peakAt: peakAt === undefined ? null : new Date(peakAt).toISOString(), podMinutes: Math.round((podMs / 60_000) * 100) / 100, longest };
}

/**
 * Every disruption that started (proposals dropped at validation are not disruptions), in start order: one entry per
 * candidate NodeClaim, with its command, reason, decision, first replacement, when its drain started and it was
 * deleted, and the budget of its NodePool the controller's validation let it start under (null when forceful).
 */
function disruptions(claims: readonly NodeClaim[]): Result['disruptions'] {
  return claims
    .filter((c) => c.disruption?.startedAt !== undefined)
    .map((c) => {
      const d = c.disruption!;
      return {
        at: d.startedAt!,
        command: d.command,
        nodeClaim: c.name,
        nodePool: c.nodePool,
        reason: d.reason,
        decision: d.decision,
        replacement: d.replacements[0] ?? null,
        replacements: [...d.replacements],
        message: d.message,
        method: disruptionMethod({ reason: d.reason, replacements: [...d.replacements], ...(d.method ? { method: d.method } : {}) }, d.candidates.length),
        drainStartedAt: d.drainStartedAt ?? null,
        completedAt: c.state === 'Deleted' ? (c.deletedAt ?? null) : null,
        budget: d.budgets?.[c.nodePool] ? { ...d.budgets[c.nodePool]! } : null,
      };
    })
    .sort((a, b) => a.at.localeCompare(b.at) || a.nodeClaim.localeCompare(b.nodeClaim));
}

/**
 * Pods still pending at the end, each with what Skiff last did about it:
 * - the latest `FailedScheduling` diagnosis, when that is the pod's latest provisioning Event;
 * - when the pod was nominated to a NodeClaim (its latest `Nominated` Event, or — when that Event was lost to a busy
 *   API server — the latest NodeClaim record that lists the pod): `launch failed: <error>, retrying (NodeClaim <name>)`
 *   while that NodeClaim is `Pending` after a `LaunchRetrying` Event; `launch of NodeClaim <name> failed (<error>);
 *   waiting for a provisioning pass to solve the pod again` once it failed; otherwise `waiting for capacity: …`;
 * - `not yet seen by the provisioner` only when no pass nominated or diagnosed the pod.
 */
function unschedulable(input: ResultInputs): Result['unschedulable'] {
  const latest = new Map<string, SimEvent>();
  const retrying = new Map<string, SimEvent>();
  for (const e of input.events) {
    if (e.object.startsWith('Pod/') && (e.reason === 'FailedScheduling' || e.reason === 'Nominated')) latest.set(e.object, e);
    if (e.reason === LAUNCH_RETRYING_REASON && e.object.startsWith('NodeClaim/')) retrying.set(e.object.slice('NodeClaim/'.length), e);
  }
  const claims = new Map(input.nodeClaims.map((c) => [c.name, c]));
  /** The latest record (by creation) that nominates each pod. */
  const nominatedBy = new Map<string, NodeClaim>();
  for (const c of [...input.nodeClaims].sort((a, b) => a.createdAt.localeCompare(b.createdAt))) for (const pod of c.nominatedPods) nominatedBy.set(pod, c);
  const about = (claim: NodeClaim, since: number): string | undefined => {
    if (claim.state === 'Failed') return `launch of NodeClaim ${claim.name} failed (${claim.launchError ?? claim.deletionReason ?? 'unknown'}); waiting for a provisioning pass to solve the pod again`;
    const refused = retrying.get(claim.name);
    if (claim.state === 'Pending' && refused && refused.at >= since) return `${refused.message.replace(`NodeClaim ${claim.name} `, '')} (NodeClaim ${claim.name})`;
    return undefined;
  };
  return input.livePods
    .filter((p) => !p.nodeName && p.phase === 'Pending')
    .map((p) => {
      const key = `${p.namespace}/${p.name}`;
      // Only this pod's own Events and nominations: a bare pod evicted and created again has its predecessor's name.
      const own = latest.get(`Pod/${key}`);
      const event = own && own.at >= p.createdAt ? own : undefined;
      const nodePools = (event?.reason === 'FailedScheduling' ? (event.details?.nodePools as Record<string, string> | undefined) : undefined) ?? {};
      let reason: string;
      if (event?.reason === 'FailedScheduling') reason = event.message;
      else {
        const named = event ? /nodeclaim\/(\S+)$/.exec(event.message)?.[1] : undefined;
        const nominating = nominatedBy.get(key);
        // A record made before this pod nominated it only while it is still coming up (Pending, Launched).
        const claim = named !== undefined ? claims.get(named) : nominating && (Date.parse(nominating.createdAt) >= p.createdAt || nominating.state === 'Pending' || nominating.state === 'Launched') ? nominating : undefined;
        const since = event?.at ?? (claim ? Date.parse(claim.createdAt) : 0);
        reason = (claim ? about(claim, since) : undefined) ?? (event ? `waiting for capacity: ${event.message}` : claim ? `waiting for capacity: NodeClaim ${claim.name} is ${claim.state}` : 'not yet seen by the provisioner');
      }
      return { pod: key, since: iso(p.firstPendingAt ?? p.createdAt), reason, nodePools: { ...nodePools } };
    });
}

/** Resource list in canonical units → Kubernetes quantity strings (`1930m`, `6903Mi`, `29`). */
export function quantities(list: ResourceList): Record<string, string> {
  return Object.fromEntries(
    Object.entries(list).map(([k, v]) => {
      const s = formatAmount(k, k === 'memory' || k === 'ephemeral-storage' ? Math.floor(v) : v);
      return [k, s];
    }),
  );
}

/**
 * Fleet cost over [start, end]: total USD (price × hours each instance ran inside the window), the peak and the
 * final fleet price in USD per hour.
 */
export function cost(instances: readonly SimInstance[], startMs: number, endMs: number): Result['cost'] {
  let total = 0;
  const changes: { at: number; delta: number }[] = [];
  for (const i of instances) {
    const from = Math.max(startMs, i.launchedAt);
    const to = Math.min(endMs, i.terminatedAt ?? endMs);
    if (to > from) total += (i.price * (to - from)) / 3_600_000;
    changes.push({ at: i.launchedAt, delta: i.price });
    if (i.terminatedAt !== undefined) changes.push({ at: i.terminatedAt, delta: -i.price });
  }
  changes.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let rate = 0;
  let peak = 0;
  for (const c of changes) {
    rate += c.delta;
    if (c.at <= endMs) peak = Math.max(peak, rate);
  }
  const final = instances.filter((i) => i.launchedAt <= endMs && (i.terminatedAt === undefined || i.terminatedAt > endMs)).reduce((s, i) => s + i.price, 0);
  const round = (x: number) => Math.round(x * 10_000) / 10_000;
  return { totalUSD: round(total), peakHourlyUSD: round(peak), finalHourlyUSD: round(final) };
}
