/**
 * `skiff explain <scenario> [namespace/pod]`: why pods are still pending at the end of a scenario.
 *
 * The scenario runs exactly as `skiff simulate` runs it ({@link simulateScenario}, same loader, same seed); the
 * explanation is read from the Result's `unschedulable[]`, whose reasons the solver's diagnosis wrote
 * (`shared/core/provisioning/diagnosis.ts`). Nothing is diagnosed a second time here: this module only selects,
 * groups and prints.
 */
import { InvalidArgumentError } from 'commander';
import { splitHints } from '../core/provisioning/diagnosis.js';
import { closestNearMiss } from '../core/provisioning/hints.js';
import type { SimulationResult } from '../sim/result.js';

/** A pod named on the command line. */
export interface PodRef {
  readonly namespace: string;
  readonly name: string;
}

/**
 * Parses the `[namespace/pod]` argument: `namespace/name`, or `name` for a pod in namespace `default`.
 * @throws {InvalidArgumentError} when the value is empty or has more than one `/` (commander turns it into exit status 2)
 * @example parsePodRef('default/high-memory-report') // { namespace: 'default', name: 'high-memory-report' }
 */
export function parsePodRef(value: string): PodRef {
  const parts = value.split('/');
  if (parts.length > 2 || parts.some((p) => p.trim() === '')) throw new InvalidArgumentError(`expected namespace/name or name, got ${JSON.stringify(value)}`);
  return parts.length === 2 ? { namespace: parts[0]!, name: parts[1]! } : { namespace: 'default', name: parts[0]! };
}

/** One pending pod, explained. */
export interface ExplainedPod {
  /** `namespace/name`. */
  readonly pod: string;
  /** The controller that owns it, `Kind/name`, or null for a bare pod. */
  readonly owner: string | null;
  /** When it first became pending, ISO-8601 UTC. */
  readonly since: string;
  /** How long it has been pending at the end of the run, seconds. */
  readonly pendingSeconds: number;
  /** One sentence summing up why no NodePool can serve it (the Result's `reason` without its hints). */
  readonly reason: string;
  /** NodePool name → the first constraint that rules the NodePool out (the Result's `nodePools`). */
  readonly nodePools: Readonly<Record<string, string>>;
  /** "Did you mean" hints (near-miss label keys, label values, toleration keys); possibly none. */
  readonly hints: readonly string[];
}

/**
 * What `skiff explain --json` prints (one object on stdout):
 * ```
 * { scenario, seed, at,              // the scenario's name, the seed, the end of the run (ISO-8601 UTC)
 *   pending: ["ns/name", …],         // every pod pending at the end, in the Result's order
 *   pods: [{ pod, owner, since, pendingSeconds, reason, nodePools: {<nodePool>: why}, hints: [string] }],
 *   waited?: { since, until, seconds } }  // a named pod that waited and then ran, explained at `at`, before the end
 * ```
 * `pods` holds every pending pod, or only the one named on the command line.
 */
export interface Explanation {
  readonly scenario: string;
  readonly seed: number;
  /** The end of the run (or, with `waited`, the earlier moment explained), ISO-8601 UTC: the moment the pods are pending at. */
  readonly at: string;
  readonly pending: readonly string[];
  readonly pods: readonly ExplainedPod[];
  /**
   * For a named pod that waited during the run and then ran, explained at an earlier moment (`at`): when its wait
   * began and ended (ISO-8601 UTC) and how long it was, seconds. Absent otherwise.
   */
  readonly waited?: { readonly since: string; readonly until: string; readonly seconds: number };
}

/** The outcome of {@link explainResult}: an explanation, or why the named pod cannot be explained. */
export type ExplainOutcome = { readonly ok: true; readonly explanation: Explanation } | { readonly ok: false; readonly message: string };

/**
 * Explains the pods pending at the end of a run, or only `pod`.
 * @param result the Result of `simulateScenario`
 * @param pod the pod to explain; undefined for every pending pod
 * @returns `ok: false` with a message (naming the pending pods) when `pod` does not exist or is not pending
 * @example
 * const { result } = await simulateScenario('examples/seed', { seed: 1 });
 * const outcome = explainResult(result, { namespace: 'default', name: 'high-memory-report' });
 */
export function explainResult(result: SimulationResult, pod?: PodRef): ExplainOutcome {
  const endMs = Date.parse(result.end);
  const owners = new Map(result.pods.map((p) => [`${p.namespace}/${p.name}`, p.owner]));
  const pending = result.unschedulable.map((u) => u.pod);
  const explained = result.unschedulable.map((u): ExplainedPod => {
    const { reason, hints } = splitHints(u.reason);
    return { pod: u.pod, owner: owners.get(u.pod) ?? null, since: u.since, pendingSeconds: Math.max(0, Math.round((endMs - Date.parse(u.since)) / 1000)), reason, nodePools: { ...u.nodePools }, hints };
  });
  const base = { scenario: result.scenario, seed: result.seed, at: result.end, pending };
  if (!pod) return { ok: true, explanation: { ...base, pods: explained } };
  const key = `${pod.namespace}/${pod.name}`;
  const found = explained.find((p) => p.pod === key);
  if (found) return { ok: true, explanation: { ...base, pods: [found] } };
  return { ok: false, message: `${notPending(result, pod)}\n${pendingList(pending)}` };
}

/** A wait of a pod that is not pending at the end: when it began and ended, and the moment to explain it at. */
export interface PastWait {
  /** ISO-8601 UTC. */
  readonly since: string;
  /** When it was scheduled (or deleted), ISO-8601 UTC. */
  readonly until: string;
  readonly seconds: number;
  /**
   * The last second before the capacity it finally ran on was asked for (its NodeClaim created), or before it was
   * scheduled when it ran on a node that existed already: seconds after the run's start, at least 1.
   */
  readonly explainAtSeconds: number;
}

/**
 * The longest time `pod` waited pending during the run (over every record of it: a bare pod evicted and recreated has
 * several), and when to explain it: the last second before the NodeClaim it ran on was created (why nothing launched
 * for it until then), else the last second before it was scheduled. Undefined when it never waited, when its NodeClaim
 * was asked for within seconds (it only waited for the launch), or when the moment falls in the run's first second.
 */
export function longestWait(result: Pick<SimulationResult, 'pods' | 'nodeClaims' | 'start'>, pod: PodRef): PastWait | undefined {
  const startMs = Date.parse(result.start);
  const claimCreated = new Map(result.nodeClaims.map((c) => [c.name, Date.parse(c.createdAt)]));
  let best: PastWait | undefined;
  for (const p of result.pods) {
    if (p.namespace !== pod.namespace || p.name !== pod.name || p.firstPendingAt === null) continue;
    const until = p.scheduledAt ?? p.deletedAt;
    if (until === null) continue;
    const sinceMs = Date.parse(p.firstPendingAt);
    const seconds = (Date.parse(until) - sinceMs) / 1000;
    if (seconds <= 0 || (best && seconds <= best.seconds)) continue;
    const created = p.nodeClaim ? claimCreated.get(p.nodeClaim) : undefined;
    // Capacity asked for within seconds: the wait was the launch itself, which the not-pending message states.
    if (created !== undefined && created >= sinceMs && created - sinceMs < PROMPT_LAUNCH_MS) continue;
    const end = created !== undefined && created > sinceMs ? created : Date.parse(until);
    const explainAtSeconds = Math.ceil((end - startMs) / 1000) - 1;
    if (explainAtSeconds >= 1) best = { since: p.firstPendingAt, until, seconds, explainAtSeconds };
  }
  return best;
}

/** A NodeClaim created this soon after its pod turned pending was asked for at once (the provisioner's batching). */
const PROMPT_LAUNCH_MS = 5_000;

/** The line `skiff explain` prints before explaining a pod at an earlier moment of its run (then formatted `earlier`). */
export function pastWaitNote(pod: PodRef, wait: PastWait, at: string): string {
  return `${pod.namespace}/${pod.name} is not pending at the end of the run, but it waited ${duration(Math.round(wait.seconds))}, from ${wait.since} to ${wait.until}. Here is why, at ${at} (the run again, up to then):`;
}

/**
 * `; it waited 1 min, from … to …, for NodeClaim x (created at …) to launch and register` for a pod that waited for the
 * NodeClaim it runs on; empty otherwise.
 */
function waitedFor(result: SimulationResult, record: SimulationResult['pods'][number]): string {
  if (record.firstPendingAt === null || record.scheduledAt === null || record.nodeClaim === null) return '';
  const seconds = Math.round((Date.parse(record.scheduledAt) - Date.parse(record.firstPendingAt)) / 1000);
  const claim = result.nodeClaims.find((c) => c.name === record.nodeClaim);
  if (seconds <= 0 || !claim || Date.parse(claim.createdAt) < Date.parse(record.firstPendingAt)) return '';
  return `; it waited ${duration(seconds)}, from ${record.firstPendingAt} to ${record.scheduledAt}, for NodeClaim ${claim.name} (created at ${claim.createdAt}) to launch and register`;
}

/** Why `pod` is not among the pending pods: where it runs, when it ended, or that it never existed (with a guess). */
function notPending(result: SimulationResult, pod: PodRef): string {
  const key = `${pod.namespace}/${pod.name}`;
  // A bare pod that was evicted is recreated under the same name: the last record is the current one.
  const record = result.pods.filter((p) => p.namespace === pod.namespace && p.name === pod.name).at(-1);
  if (record?.deletedAt) return `pod ${key} is not pending at the end of the run: it completed or was deleted at ${record.deletedAt}`;
  if (record?.node) return `pod ${key} is not pending at the end of the run: it runs on node ${record.node}${record.scheduledAt ? ` (scheduled at ${record.scheduledAt})` : ''}${waitedFor(result, record)}`;
  if (record) return `pod ${key} is not pending at the end of the run`;
  // `default/web` may name a controller: its pods are `ReplicaSet/web-<hash>`'s (a Deployment) or `Job/web`'s.
  const owned = result.pods.filter((p) => p.namespace === pod.namespace && p.owner !== null && ownedBy(p.owner, pod.name));
  if (owned.length > 0) {
    const owners = [...new Set(owned.map((p) => p.owner!))].join(', ');
    const live = owned.filter((p) => p.deletedAt === null).map((p) => `${p.namespace}/${p.name}`);
    const pendingOwned = live.filter((k) => result.unschedulable.some((u) => u.pod === k));
    return `no pod ${key} in the run; ${pod.name} names the controller of ${owned.length} pod${owned.length === 1 ? '' : 's'} (${owners}), ${pendingOwned.length > 0 ? `of which pending: ${shortList(pendingOwned, 10)}` : 'none of them pending'}`;
  }
  const guess = closestNearMiss(key, result.pods.map((p) => `${p.namespace}/${p.name}`));
  return `no pod ${key} in the run${guess ? `; did you mean ${guess}?` : ''}`;
}

/** How the diagnosis starts a summary that lists every NodePool's reason. */
const EVERY_NODEPOOL = 'no NodePool can serve the pod';

/** True when `owner` (`Kind/name`) is the controller `name` or the ReplicaSet of Deployment `name`. */
function ownedBy(owner: string, name: string): boolean {
  const [kind, ownerName = ''] = owner.split('/');
  return ownerName === name || (kind === 'ReplicaSet' && ownerName.startsWith(`${name}-`) && !ownerName.slice(name.length + 1).includes('-'));
}

function pendingList(pending: readonly string[]): string {
  return pending.length === 0 ? 'No pod is pending at the end of the run.' : `Pending at the end of the run: ${shortList(pending, 20)}`;
}

/**
 * Formats an explanation for a terminal: per pending pod (replicas of one owner with the same diagnosis are shown
 * once, with a count), when it became pending, the summary, every NodePool's first constraint, and the hints.
 * Pure: same explanation, same text.
 * @param options `earlier`: the explanation is of a moment before the end (a pod that waited and then ran), so the
 *   header names the moment, not the end of the run
 */
export function formatExplanation(e: Explanation, options: { readonly earlier?: boolean } = {}): string {
  const lines: string[] = [];
  const subject = e.pods.length === e.pending.length ? `${e.pending.length} pod${e.pending.length === 1 ? '' : 's'} pending` : `${e.pods.length} of ${e.pending.length} pending pods`;
  lines.push(`Scenario ${e.scenario} (seed ${e.seed}): ${subject} ${options.earlier ? 'at' : 'at the end of the run,'} ${e.at}`);
  if (e.pods.length === 0) {
    lines.push('Every pod was placed.');
    return lines.join('\n');
  }
  const groups = new Map<string, { first: ExplainedPod; count: number }>();
  for (const p of e.pods) {
    const key = JSON.stringify([p.owner ?? p.pod, p.reason, p.nodePools, p.hints]);
    const g = groups.get(key);
    if (!g) groups.set(key, { first: p, count: 1 });
    else {
      g.count++;
      if (p.since < g.first.since) g.first = { ...g.first, since: p.since, pendingSeconds: p.pendingSeconds };
    }
  }
  for (const { first: p, count } of groups.values()) {
    lines.push('');
    lines.push(count > 1 && p.owner ? `${p.pod} and ${count - 1} more pod${count > 2 ? 's' : ''} of ${p.owner} with the same diagnosis` : `${p.pod}${p.owner ? ` (${p.owner})` : ''}`);
    lines.push(`  pending since ${p.since} (${duration(p.pendingSeconds)})`);
    // A summary that lists every NodePool's reason is shown once, below, one NodePool a line.
    lines.push(`  why: ${p.reason.startsWith(EVERY_NODEPOOL) && Object.keys(p.nodePools).length > 0 ? `${EVERY_NODEPOOL} (each NodePool's reason follows)` : p.reason}`);
    const pools = Object.entries(p.nodePools);
    if (pools.length > 0) {
      lines.push('  per NodePool, the first constraint that rules it out:');
      const width = Math.max(...pools.map(([name]) => name.length));
      for (const [name, why] of pools) lines.push(`    ${`${name}:`.padEnd(width + 1)} ${why}`);
    }
    if (p.hints.length > 0) {
      lines.push('  hints:');
      for (const h of p.hints) lines.push(`    - ${h}`);
    }
  }
  return lines.join('\n');
}

/** `3 h`, `2 h 5 min`, `45 min`, `30 s`. */
function duration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  if (h === 0) return `${m} min`;
  return m === 0 ? `${h} h` : `${h} h ${m} min`;
}

function shortList(items: readonly string[], max: number): string {
  return items.length <= max ? items.join(', ') : `${items.slice(0, max).join(', ')} and ${items.length - max} more`;
}

/**
 * One node of a run and why it was, or was not, disrupted: what `skiff explain <scenario> --node <name>` prints, and
 * the object `--json` prints. Built from the Result's `nodes`, `nodeClaims`, `pods`, `disruptions` and `events`.
 */
export interface ExplainedNode {
  readonly node: string;
  /** Its NodeClaim, or null for a node Skiff does not own (a scenario's `nodes`). */
  readonly nodeClaim: string | null;
  readonly nodePool: string | null;
  readonly instanceType: string;
  readonly capacityType: string;
  readonly zone: string;
  /** USD per hour; null when no simulated instance backs it. */
  readonly hourlyUSD: number | null;
  /** ISO-8601 UTC. */
  readonly createdAt: string;
  /** ISO-8601 UTC, or null when it runs at the end. */
  readonly deletedAt: string | null;
  /** Why its NodeClaim was deleted (`Underutilized`, `Drifted`, …), or null. */
  readonly deletionReason: string | null;
  /** The pods on it at the end (`namespace/name`), or when it was deleted: none. */
  readonly podsAtEnd: readonly string[];
  /** Why it is drifted at the end (`nodeClaims[].driftedAtEnd`), or null. */
  readonly driftedAtEnd: string | null;
  /** The disruption commands that took it, in order. */
  readonly disruptions: readonly { readonly at: string; readonly reason: string; readonly decision: string; readonly method: string | null; readonly completedAt: string | null }[];
  /**
   * Why disruption passes left it, latest first, one per reason and message: the `Unconsolidatable` and
   * `DisruptionBlocked` Events on the Node and its NodeClaim, and the budget Events on its NodePool.
   */
  readonly heldBy: readonly { readonly at: string; readonly reason: string; readonly message: string }[];
}

/** The outcome of {@link explainNode}. */
export type NodeExplainOutcome = { readonly ok: true; readonly node: ExplainedNode } | { readonly ok: false; readonly message: string };

/**
 * Explains one node of a run by its Node name or its NodeClaim's name: what it was, what disrupted it, and what held
 * it — the answer to "why was this node not consolidated (or replaced)?".
 * @returns `ok: false` with a message (a guess at the name, and the nodes at the end) when no node has that name
 */
export function explainNode(result: SimulationResult, name: string): NodeExplainOutcome {
  // The Node's name, its NodeClaim's, or the hostname without its domain (`ip-10-0-1-2` for ip-10-0-1-2.ec2.internal) when
  // only one node has it.
  const exact = result.nodes.filter((n) => n.name === name || n.nodeClaim === name);
  const short = new Set(result.nodes.filter((n) => n.name.startsWith(`${name}.`)).map((n) => n.name));
  const node = (exact.length > 0 ? exact : short.size === 1 ? result.nodes.filter((n) => short.has(n.name)) : []).at(-1);
  if (!node) {
    // Guess among what a node can be named by: its Node name, its hostname without the domain, its NodeClaim.
    const guess = closestNearMiss(name, result.nodes.flatMap((n) => [n.name, n.name.split('.')[0]!, ...(n.nodeClaim ? [n.nodeClaim] : [])]));
    const live = result.nodes.filter((n) => n.deletedAt === null).map((n) => n.name);
    return { ok: false, message: `no node ${name} in the run${guess ? `; did you mean ${guess}?` : ''}\nNodes at the end: ${live.length > 0 ? shortList(live, 10) : 'none'}` };
  }
  const claim = node.nodeClaim !== null ? result.nodeClaims.find((c) => c.name === node.nodeClaim) : undefined;
  const nodePool = claim?.nodePool ?? node.labels['karpenter.sh/nodepool'] ?? null;
  const objects = new Set([`Node/${node.name}`, ...(claim ? [`NodeClaim/${claim.name}`] : [])]);
  const held = new Map<string, { at: string; reason: string; message: string }>();
  for (const e of result.events) {
    const own = objects.has(e.object) && (e.reason === 'Unconsolidatable' || e.reason === 'DisruptionBlocked');
    const budget = nodePool !== null && e.object === `NodePool/${nodePool}` && e.reason === 'DisruptionBlocked';
    if (!own && !budget) continue;
    const key = `${e.reason}|${e.message}`;
    held.delete(key);
    held.set(key, { at: e.at, reason: e.reason, message: e.message });
  }
  return {
    ok: true,
    node: {
      node: node.name,
      nodeClaim: node.nodeClaim,
      nodePool,
      instanceType: node.instanceType,
      capacityType: node.capacityType,
      zone: node.zone,
      hourlyUSD: node.hourlyUSD ?? null,
      createdAt: node.createdAt,
      deletedAt: node.deletedAt,
      deletionReason: claim?.deletionReason ?? null,
      podsAtEnd: node.deletedAt === null ? result.pods.filter((p) => p.node === node.name && p.deletedAt === null).map((p) => `${p.namespace}/${p.name}`) : [],
      driftedAtEnd: claim?.driftedAtEnd ?? null,
      disruptions: result.disruptions.filter((d) => d.nodeClaim === node.nodeClaim).map((d) => ({ at: d.at, reason: d.reason, decision: d.decision, method: d.method ?? null, completedAt: d.completedAt })),
      heldBy: [...held.values()].reverse(),
    },
  };
}

/** At most this many reasons a node was held are printed; `--json` has them all. */
const MAX_HELD_SHOWN = 8;

/** The text `skiff explain --node` prints for a node. */
export function formatNodeExplanation(n: ExplainedNode): string {
  const lines = [
    `Node ${n.node}${n.nodeClaim ? ` (NodeClaim ${n.nodeClaim}, NodePool ${n.nodePool})` : ' (not Skiff\'s: no NodeClaim)'}: ${n.instanceType} ${n.capacityType} in ${n.zone}${n.hourlyUSD !== null ? `, $${n.hourlyUSD.toFixed(4)}/h` : ''}`,
    `  created ${n.createdAt}; ${n.deletedAt ? `deleted ${n.deletedAt}${n.deletionReason ? ` (${n.deletionReason})` : ''}` : `runs at the end with ${n.podsAtEnd.length} pod${n.podsAtEnd.length === 1 ? '' : 's'}${n.podsAtEnd.length > 0 ? `: ${shortList(n.podsAtEnd, 6)}` : ''}`}`,
  ];
  if (n.driftedAtEnd) lines.push(`  drifted at the end: ${n.driftedAtEnd}`);
  for (const d of n.disruptions) lines.push(`  disrupted at ${d.at}: ${d.reason} (${d.decision}${d.method ? `, ${d.method}` : ''}), ${d.completedAt ? `done at ${d.completedAt}` : 'still going at the end'}`);
  if (n.heldBy.length === 0) {
    lines.push(n.deletedAt ? '  no disruption pass reported holding it' : '  no disruption pass reported holding it: no move was found for it, or it was never a candidate (consolidateAfter, a WhenEmpty NodePool with pods, not initialized)');
  } else {
    lines.push('  held by (latest first):');
    for (const h of n.heldBy.slice(0, MAX_HELD_SHOWN)) lines.push(`    ${h.at} ${h.reason}: ${h.message}`);
    if (n.heldBy.length > MAX_HELD_SHOWN) lines.push(`    … and ${n.heldBy.length - MAX_HELD_SHOWN} more (--json)`);
  }
  return lines.join('\n');
}
