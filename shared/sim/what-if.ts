/**
 * The answer in money for a run that starts with nodes (a cluster snapshot, docs/contracts.md#result-whatif): the
 * fleet's price at the start and once Skiff's disruptions settled, the saving, which nodes Skiff disrupted in what
 * order, by which method and under which disruption budget, the evictions that caused, and the pods pending at the
 * start with what became of them. Built from the Result and the simulated instances; adds nothing the run did not do.
 */
import type { BudgetReason, NodePool } from '../core/api/nodepool.js';
import { existedAtStart, type Result, type WhatIf } from './result-schema.js';
import type { SimInstance } from './simulated-ec2.js';

/** What {@link whatIf} reads besides the Result. */
export interface WhatIfInputs {
  /** Every instance of the run (prices in USD per hour, times epoch ms). */
  readonly instances: readonly SimInstance[];
  /** The NodePools at the start (their budgets say which window allowed each disruption). */
  readonly nodePools: readonly NodePool[];
  /** `namespace/name` of the pods live and not bound to a node when the run started. */
  readonly pendingAtStart: readonly string[];
}

/** Karpenter's graceful reasons, the only ones disruption budgets limit (docs `concepts/disruption.md`). */
const BUDGETED: ReadonlySet<string> = new Set<BudgetReason>(['Empty', 'Underutilized', 'Drifted']);

/** Hours in a month as AWS bills them (730 = 8,760 / 12). */
export const HOURS_PER_MONTH = 730;

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

/**
 * The fleet's price at an instant, USD per hour: every instance launched at or before `atMs` and not terminated by then.
 * @param instances the run's instances
 * @param atMs epoch ms
 */
export function fleetHourlyUSD(instances: readonly SimInstance[], atMs: number): number {
  return round4(instances.filter((i) => i.launchedAt <= atMs && (i.terminatedAt === undefined || i.terminatedAt > atMs)).reduce((s, i) => s + i.price, 0));
}

/**
 * The disruption method of a Result disruption: the one its record names (`method`, Karpenter's names, core
 * `pkg/controllers/disruption/*.go`, and Skiff's `repack-consolidation`, `split-consolidation`), `expiration` or
 * `interruption` for a forceful disruption, and for a Result written before records named it, read back from what the
 * Result holds: `emptiness`, `drift`, and for `Underutilized` `multi-node-consolidation` (a command of several
 * candidates), `single-node-consolidation`, or `repack-consolidation` when one command launched two or more
 * replacements.
 * @param candidatesOfCommand how many NodeClaims the disruption's command took
 */
export function disruptionMethod(d: Pick<Result['disruptions'][number], 'reason' | 'replacements' | 'method'>, candidatesOfCommand: number): string {
  if (d.method) return d.method;
  switch (d.reason) {
    case 'Empty':
      return 'emptiness';
    case 'Drifted':
      return 'drift';
    case 'Expired':
      return 'expiration';
    case 'Interrupted':
      return 'interruption';
    default:
      if ((d.replacements?.length ?? 0) > 1) return 'repack-consolidation';
      return candidatesOfCommand > 1 ? 'multi-node-consolidation' : 'single-node-consolidation';
  }
}

/**
 * Builds the `whatIf` figures of a Result.
 * @param result the Result (without `whatIf`)
 * @param inputs instances, NodePools at the start, pods pending at the start
 * @returns the figures: prices in USD per hour, times UTC
 */
export function whatIf(result: Result, inputs: WhatIfInputs): WhatIf {
  const startMs = Date.parse(result.start);
  const endMs = Date.parse(result.end);
  const disruptions = result.disruptions;
  const allDone = disruptions.length > 0 && disruptions.every((d) => d.completedAt !== null);
  const settledMs = allDone ? Math.max(...disruptions.map((d) => Date.parse(d.completedAt!))) : endMs;
  const atStart = fleetHourlyUSD(inputs.instances, startMs);
  const after = fleetHourlyUSD(inputs.instances, settledMs);
  const saving = round4(atStart - after);
  // Of `after`, the NodeClaims the provisioner launched in the run (for pods pending at the start, created since, or
  // evicted with no room elsewhere), still up at `settledAt`; replacements (consolidation, drift, interruption) aside.
  const replacementNames = new Set(disruptions.flatMap((d) => d.replacements ?? (d.replacement ? [d.replacement] : [])));
  const forPods = result.nodeClaims.filter(
    (c) => !existedAtStart(c, startMs) && Date.parse(c.createdAt) <= settledMs && !replacementNames.has(c.name) && c.instanceType !== null && c.launchError === null && (c.deletedAt === null || Date.parse(c.deletedAt) > settledMs),
  );
  const newCapacity = round4(forPods.reduce((sum, c) => sum + (c.price ?? 0), 0));

  const claims = new Map(result.nodeClaims.map((c) => [c.name, c]));
  const nodeOfClaim = new Map(result.nodes.filter((n) => n.nodeClaim !== null).map((n) => [n.nodeClaim!, n.name]));
  const perCommand = new Map<string, number>();
  for (const d of disruptions) perCommand.set(d.command, (perCommand.get(d.command) ?? 0) + 1);
  const evictedFrom = new Map<string, number>();
  let evictions = 0;
  const byOwner = new Map<string, number>();
  for (const p of result.pods) {
    if (p.evictions === 0) continue;
    evictions += p.evictions;
    if (p.nodeClaim !== null) evictedFrom.set(p.nodeClaim, (evictedFrom.get(p.nodeClaim) ?? 0) + p.evictions);
    const owner = p.owner ?? `Pod/${p.namespace}/${p.name}`;
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + p.evictions);
  }
  const pools = new Map(inputs.nodePools.map((p) => [p.metadata.name, p]));

  const actions = disruptions.map((d, i) => {
    const claim = claims.get(d.nodeClaim);
    const replacements = (d.replacements ?? (d.replacement ? [d.replacement] : [])).map((name) => {
      const r = claims.get(name);
      return { nodeClaim: name, instanceType: r?.instanceType ?? null, capacityType: r?.capacityType ?? null, hourlyUSD: r?.price ?? null };
    });
    return {
      order: i + 1,
      at: d.at,
      nodeClaim: d.nodeClaim,
      node: nodeOfClaim.get(d.nodeClaim) ?? null,
      nodePool: d.nodePool,
      instanceType: claim?.instanceType ?? null,
      capacityType: claim?.capacityType ?? null,
      hourlyUSD: claim?.price ?? null,
      reason: d.reason,
      method: disruptionMethod(d, perCommand.get(d.command) ?? 1),
      decision: d.decision,
      replacements,
      ...budgetOf(pools.get(d.nodePool), d),
      evictions: evictedFrom.get(d.nodeClaim) ?? 0,
      completedAt: d.completedAt,
    };
  });

  const pods = new Map(result.pods.map((p) => [`${p.namespace}/${p.name}`, p]));
  const stillPending = new Map(result.unschedulable.map((u) => [u.pod, u]));
  // Skiff's first word on each pod: its diagnosis (FailedScheduling) or the NodeClaim it was nominated to.
  const firstDiagnosis = new Map<string, string>();
  for (const e of result.events) {
    if ((e.reason !== 'FailedScheduling' && e.reason !== 'Nominated') || !e.object.startsWith('Pod/')) continue;
    const key = e.object.slice('Pod/'.length);
    if (!firstDiagnosis.has(key)) firstDiagnosis.set(key, e.reason === 'Nominated' ? `no node had room: Skiff nominated it to new capacity (${e.message})` : e.message);
  }
  const pendingAtStart = inputs.pendingAtStart.map((key) => {
    const p = pods.get(key);
    const pending = stillPending.get(key);
    let outcome: string;
    if (pending) outcome = `still pending at the end: ${pending.reason}`;
    else if (p?.scheduledAt && p.node) {
      const claim = p.nodeClaim ? claims.get(p.nodeClaim) : undefined;
      const launched = claim && !existedAtStart(claim, startMs);
      outcome = `scheduled at ${p.scheduledAt} on ${p.node}${launched ? ` (NodeClaim ${claim.name}, ${claim.instanceType ?? '?'} ${claim.capacityType ?? ''}, launched for pending pods)`.replace(' )', ')') : ' (a node that already existed)'}`;
    } else if (p?.deletedAt) outcome = `deleted at ${p.deletedAt}`;
    else outcome = 'pending';
    return { pod: key, owner: p?.owner ?? null, reason: pending?.reason ?? firstDiagnosis.get(key) ?? 'it fits a node that exists: kube-scheduler binds it', outcome, nodePools: { ...(pending?.nodePools ?? {}) } };
  });

  const startNodes = result.nodes.filter((n) => Date.parse(n.createdAt) <= startMs && (n.deletedAt === null || Date.parse(n.deletedAt) > startMs));
  const managed = startNodes.filter((n) => n.nodeClaim !== null).length;
  // The instances `hourlyUSDAfter` prices: one launched just before `settledAt` counts though its Node registers after.
  const settledNodes = inputs.instances.filter((i) => i.launchedAt <= settledMs && (i.terminatedAt === undefined || i.terminatedAt > settledMs)).length;
  return {
    hourlyUSDAtStart: atStart,
    hourlyUSDAfter: after,
    settledAt: new Date(settledMs).toISOString(),
    settled: allDone || disruptions.length === 0,
    savingHourlyUSD: saving,
    savingPercent: atStart > 0 ? Math.round((saving / atStart) * 1000) / 10 : 0,
    savingMonthlyUSD: Math.round(saving * HOURS_PER_MONTH * 100) / 100,
    newCapacity: { hourlyUSD: newCapacity, nodeClaims: forPods.length },
    nodesAtStart: { total: startNodes.length, managed, unmanaged: startNodes.length - managed },
    nodesAfter: settledNodes,
    actions,
    evictions: { total: evictions, byOwner: [...byOwner].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([owner, count]) => ({ owner, count })) },
    pendingAtStart,
  };
}

/** The budget that allowed a disruption: in words, and which one with its count then (null when none applies). */
interface BudgetUsed {
  readonly budget: string;
  readonly budgetRule: {
    readonly index: number;
    readonly rule: string;
    readonly allowed: number;
    readonly nodes: number;
    readonly disrupting: number;
    readonly remaining: number;
  } | null;
}

/**
 * Which budget allowed a disruption, as the disruption controller's validation recorded it when the disruption started
 * (`Result.disruptions[].budget`, Karpenter core `pkg/controllers/disruption/helpers.go BuildDisruptionBudgetMapping`
 * with `GetAllowedDisruptionsByReason`): the NodePool's most restrictive budget active for the reason, how many nodes it
 * allowed in total of the NodePool's managed, initialized nodes then, and of those how many were already being
 * disrupted. Read, not worked out again: a recount from the Result at the start instant missed, for instance, the node
 * an Empty deletion removes at that very instant, which the validation counted. For expiration, interruption and
 * deletions, that budgets do not apply.
 */
function budgetOf(pool: NodePool | undefined, d: Result['disruptions'][number]): BudgetUsed {
  if (!BUDGETED.has(d.reason)) return { budget: `${FORCEFUL[d.reason] ?? d.reason} is forceful: disruption budgets do not limit it`, budgetRule: null };
  if (!pool) return { budget: 'the NodePool is not among the starting NodePools', budgetRule: null };
  const used = d.budget;
  if (!used) return { budget: 'not recorded by the disruption controller', budgetRule: null };
  if (used.budget === null || used.allowed === null) return { budget: `no budget of NodePool ${pool.metadata.name} is active for ${d.reason}: unlimited`, budgetRule: null };
  const b = pool.spec.disruption.budgets[used.budget];
  const window = b?.schedule !== undefined ? `schedule "${b.schedule}" for ${b.duration ?? '0s'} (UTC), active then` : 'no schedule: always active';
  const reasons = b?.reasons && b.reasons.length > 0 ? `, reasons ${b.reasons.join(', ')}` : '';
  // One budget of 10 % for every reason, always active: what Karpenter's schema defaults a NodePool without budgets to.
  const byDefault = pool.spec.disruption.budgets.length === 1 && b?.nodes === '10%' && b.schedule === undefined && !b.reasons?.length ? ", Karpenter's default budget" : '';
  const rule = `spec.disruption.budgets[${used.budget}] nodes ${JSON.stringify(b?.nodes ?? '?')}${reasons} (${window}${byDefault})`;
  const remaining = used.remaining ?? used.allowed;
  const inFlight = used.disrupting > 0 ? `, ${used.disrupting} already being disrupted: ${remaining} more` : '';
  return {
    budget: `${rule}: ${used.allowed} of ${used.nodes} nodes at once${inFlight}`,
    budgetRule: { index: used.budget, rule, allowed: used.allowed, nodes: used.nodes, disrupting: used.disrupting, remaining },
  };
}

/** The forceful reasons in words. */
const FORCEFUL: Readonly<Record<string, string>> = { Expired: 'expiration', Interrupted: 'interruption', NodeDeleted: 'deleting the Node', NodeClaimDeleted: 'deleting the NodeClaim' };
