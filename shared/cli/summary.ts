/**
 * The readable summary `skiff simulate` prints without `--json`. A run that starts with nodes (a snapshot) opens with
 * the answer in money (`Result.whatIf`: $/h now and after Skiff's disruptions settle, the saving, the disruptions in
 * order with method and budget, the evictions, the pods pending at the start). Then: NodeClaims by NodePool, instance type and
 * capacity type; cost; pods pending during the run (peak, pod-minutes, longest wait) and those pending at the end
 * and why (with "did you mean" hints); violations. `skiff explain` shows the
 * same diagnoses in more detail.
 */
import { splitHints } from '../core/provisioning/diagnosis.js';
import { pendingFigures, type SimulationResult } from '../sim/result.js';
import { existedAtStart, type WhatIf } from '../sim/result-schema.js';
import { wastedLaunchFigures } from '../sim/result-waste.js';
import { HOURS_PER_MONTH } from '../sim/what-if.js';

/** At most this many notes at the end of the summary; the Result's events have them all. */
const MAX_NOTES = 10;

/** At most this many disruptions and pending pods listed in the opening what-if; `--json` and `--report` have them all. */
const MAX_WHAT_IF_ROWS = 40;

/** Formats a Result for a terminal. Pure: same Result, same text. */
export function formatSummary(result: SimulationResult): string {
  const lines: string[] = [];
  const hours = (Date.parse(result.end) - Date.parse(result.start)) / 3_600_000;
  lines.push(`Scenario ${result.scenario}: ${result.start} → ${result.end} (${round(hours, 2)} h), seed ${result.seed}${baselineNote(result)}`);
  lines.push('');
  if (result.whatIf) lines.push(...whatIfLines(result, result.whatIf), '');

  const launched = result.nodeClaims.filter((c) => c.instanceType);
  const existed = launched.filter((c) => existedAtStart(c, Date.parse(result.start))).length;
  const failed = result.nodeClaims.filter((c) => c.launchError);
  lines.push(
    `NodeClaims: ${launched.length - existed} launched${existed ? `, ${existed} existed at the start` : ''}${failed.length ? `, ${failed.length} failed to launch` : ''}`,
  );
  const groups = new Map<string, { nodePool: string; type: string; capacity: string; zones: Set<string>; count: number; price: number }>();
  for (const c of launched) {
    const key = `${c.nodePool}|${c.instanceType}|${c.capacityType}`;
    const g = groups.get(key) ?? { nodePool: c.nodePool, type: c.instanceType!, capacity: c.capacityType!, zones: new Set<string>(), count: 0, price: 0 };
    g.count++;
    g.price += c.price ?? 0;
    if (c.zone) g.zones.add(c.zone);
    groups.set(key, g);
  }
  const rows = [...groups.values()].sort((a, b) => a.nodePool.localeCompare(b.nodePool) || b.count - a.count || a.type.localeCompare(b.type));
  if (rows.length > 0) {
    lines.push(
      table(
        ['NODEPOOL', 'INSTANCE TYPE', 'CAPACITY', 'COUNT', 'ZONES', 'USD/H EACH'],
        rows.map((r) => [r.nodePool, r.type, r.capacity, String(r.count), [...r.zones].sort().join(','), (r.price / r.count).toFixed(4)]),
      ),
    );
  }
  for (const c of failed) lines.push(`  ${c.name} (${c.nodePool}): ${c.launchError}`);
  lines.push('');

  // Disruptions: how many nodes went, why, and how (deleted, or replaced by a cheaper or newer node).
  if (result.disruptions.length > 0) {
    const byReason = new Map<string, { count: number; replaced: number; done: number; moves: Map<string, number> }>();
    for (const d of result.disruptions) {
      const r = byReason.get(d.reason) ?? { count: 0, replaced: 0, done: 0, moves: new Map<string, number>() };
      r.count++;
      // Consolidation's moves (Karpenter's multi-node and single-node, Skiff's repack and split), named short.
      const move = d.reason === 'Underutilized' && d.method ? d.method.replace(/-consolidation$/, '') : undefined;
      if (move) r.moves.set(move, (r.moves.get(move) ?? 0) + 1);
      if (d.decision === 'replace' || d.replacement !== null) r.replaced++;
      if (d.completedAt !== null) r.done++;
      byReason.set(d.reason, r);
    }
    lines.push(`Disruptions: ${result.disruptions.length} node${result.disruptions.length === 1 ? '' : 's'}`);
    for (const [reason, r] of [...byReason].sort(([a], [b]) => a.localeCompare(b))) {
      const moves = [...r.moves].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([m, n]) => `${n} ${m}`).join(', ');
      lines.push(`  ${reason}: ${r.count} (${r.replaced} replaced, ${r.count - r.replaced} deleted${moves ? `; nodes by move: ${moves}` : ''}${r.done < r.count ? `; ${r.count - r.done} still draining at the end` : ''})`);
    }
    const unsettled = stillDisrupting(result);
    if (unsettled) lines.push(`  still disrupting at the end: ${unsettled}; the final $/h is not where the fleet settles (run longer with --duration)`);
    lines.push('');
  }
  const drifted = driftedLines(result);
  if (drifted.length > 0) lines.push(...drifted, '  (`skiff explain <scenario> --node <name>` tells the whole story of one node)', '');
  const total = result.cost.totalUSD < 1 ? result.cost.totalUSD.toFixed(4) : result.cost.totalUSD.toFixed(2);
  lines.push(`Cost: $${total} in total, peak $${result.cost.peakHourlyUSD.toFixed(4)}/h, final $${result.cost.finalHourlyUSD.toFixed(4)}/h`);
  lines.push(`  on-demand: ${result.pricing.onDemand}; spot: ${result.pricing.spot}`);
  // Launched-then-unused capacity: a node launched and ended without ever running a pod.
  const wasted = result.wastedLaunches ?? wastedLaunchFigures(result);
  if (wasted.nodeClaims > 0) {
    const reasons = Object.entries(wasted.byReason).map(([reason, n]) => `${reason} ${n}`).join(', ');
    lines.push(`  launched and never used: ${wasted.nodeClaims} NodeClaim${wasted.nodeClaims === 1 ? '' : 's'}, ${wasted.instanceHours.toFixed(2)} instance-hours, $${wasted.costUSD.toFixed(4)} (${reasons})`);
  }
  lines.push('');

  const livePods = result.pods.filter((p) => p.deletedAt === null);
  const running = livePods.filter((p) => p.node !== null).length;
  const ended = result.pods.length - livePods.length;
  // What the count holds beside the workloads' own pods: a DaemonSet pod per node, and a new pod after each eviction.
  const daemonPods = result.pods.filter((p) => p.owner?.startsWith('DaemonSet/')).length;
  const evictions = result.pods.reduce((n, p) => n + p.evictions, 0);
  const among = [...(daemonPods > 0 ? [`${daemonPods} by DaemonSets`] : []), ...(evictions > 0 ? [`${evictions} after evictions`] : [])];
  lines.push(`Pods: ${result.pods.length} created${among.length > 0 ? ` (${among.join(', ')})` : ''}, ${running} running at the end, ${ended} completed or deleted, ${result.unschedulable.length} pending`);
  // Pods that waited during the run, not only those still waiting at the end (a scale-up that took 20 minutes).
  const pending = result.pending ?? pendingFigures(result.pods, Date.parse(result.start), Date.parse(result.end));
  if (pending.pods > 0) {
    lines.push(`Pending during the run: ${pending.pods} pod${pending.pods === 1 ? '' : 's'}, peak ${pending.peak} at ${pending.peakAt}, ${pending.podMinutes} pod-minutes`);
    if (pending.longest) lines.push(`  longest wait: ${duration(pending.longest.seconds)} — ${pending.longest.pod} (pending since ${pending.longest.since}${pending.longest.stillPending ? ', still pending at the end' : ''})`);
  }
  if (result.unschedulable.length > 0) {
    lines.push('Pending pods and why:');
    // Pods of one owner with the same reasons are listed once, with a count.
    const owners = new Map(result.pods.map((p) => [`${p.namespace}/${p.name}`, p.owner]));
    const groups = new Map<string, { first: (typeof result.unschedulable)[number]; count: number }>();
    for (const u of result.unschedulable) {
      const key = JSON.stringify([owners.get(u.pod) ?? u.pod, u.reason, u.nodePools]);
      const g = groups.get(key);
      if (g) g.count++;
      else groups.set(key, { first: u, count: 1 });
    }
    for (const { first: u, count } of groups.values()) {
      const owner = owners.get(u.pod);
      lines.push(count > 1 && owner ? `  ${count} pods of ${owner}, e.g. ${u.pod} (pending since ${u.since})` : `  ${u.pod} (pending since ${u.since})`);
      // The per-NodePool reasons follow; don't repeat them in the headline. Hints go last, one a line.
      const { reason, hints } = splitHints(u.reason);
      lines.push(`    ${reason.startsWith('no NodePool can serve the pod:') ? 'no NodePool can serve the pod:' : reason}`);
      for (const [pool, why] of Object.entries(u.nodePools)) lines.push(`    - NodePool ${pool}: ${why}`);
      for (const hint of hints) lines.push(`    hint: ${hint}`);
    }
  }
  lines.push('');
  const v = Object.entries(result.violations).filter((entry): entry is [string, number] => typeof entry[1] === 'number' && entry[1] > 0);
  // churn: replace loops (nodes replaced again and again for the same reason with nothing changed in between).
  lines.push(`Violations: ${v.length === 0 ? 'none' : v.map(([k, n]) => `${k}=${n}${k === 'churn' ? ' (replace loops)' : ''}`).join(', ')}`);
  if (result.faults) lines.push(faultsLine(result.faults));
  // Warnings that still hold at the end: the latest per object (a drain that waited and then went on is not listed).
  const stillDraining = new Set(result.disruptions.filter((d) => d.completedAt === null).map((d) => d.nodeClaim));
  const drainingNodes = new Set(result.nodes.filter((n) => n.nodeClaim !== null && stillDraining.has(n.nodeClaim) && n.deletedAt === null).map((n) => `Node/${n.name}`));
  const latest = new Map<string, (typeof result.events)[number]>();
  for (const e of result.events) {
    if (e.type !== 'Warning' || !['NotSimulated', 'DisruptionBlocked', 'ScenarioEventSkipped'].includes(e.reason)) continue;
    if (e.object.startsWith('Node/') && !drainingNodes.has(e.object)) continue;
    latest.set(e.reason === 'ScenarioEventSkipped' ? `${e.object}|${e.message}` : e.object, e);
  }
  const notes = [...latest.values()];
  for (const e of notes.slice(0, MAX_NOTES)) lines.push(`Note: ${e.object}: ${e.message}`);
  if (notes.length > MAX_NOTES) lines.push(`Note: … and ${notes.length - MAX_NOTES} more (see the Result's events, --json)`);
  if (result.unschedulable.length > 0) lines.push('Note: `skiff explain <scenario> [namespace/pod]` explains each pending pod in detail.');
  return lines.join('\n');
}

/**
 * The opening of a run that started with nodes (a snapshot): the fleet's price now and after Skiff's disruptions
 * settle, the saving, the disruptions in order with method and budget, the evictions, the pods pending at the start.
 */
function whatIfLines(result: SimulationResult, w: WhatIf): string[] {
  const lines: string[] = [];
  const n = w.nodesAtStart;
  lines.push(`What Skiff would do to this cluster: ${plural(n.total, 'node')} at the start, ${n.managed} managed by its NodePools${n.unmanaged ? `, ${n.unmanaged} not (kept, never disrupted)` : ''}`);
  const sign = w.savingHourlyUSD >= 0 ? '' : '-';
  lines.push(`  Fleet now:          $${w.hourlyUSDAtStart.toFixed(2)}/h`);
  // Settled: every disruption over, and none started in the run's last SETTLED_QUIET_MS (else the next pass may go on).
  const unsettled = w.settled ? stillDisrupting(result) : undefined;
  lines.push(`  After disruptions:  $${w.hourlyUSDAfter.toFixed(2)}/h (${w.settled && !unsettled ? `settled at ${w.settledAt}` : w.settled ? `at ${w.settledAt}, but still disrupting near the end: run longer to see it settle` : `at the end, ${w.settledAt}: disruptions still going`}; ${plural(w.nodesAfter, 'node')})`);
  const grown = w.newCapacity;
  if (grown && grown.nodeClaims > 0) {
    // The fleet after also holds what was launched for pods: "saving" the difference would call new work a loss
    // (trial: one starting node and 29 new pods read "Saving: -$7.90/h (-18712.3 %)"). Say what the starting nodes
    // came to, and the new capacity beside it; the JSON keeps the plain difference (`savingHourlyUSD`).
    const onStart = w.hourlyUSDAtStart - (w.hourlyUSDAfter - grown.hourlyUSD);
    const s = onStart >= 0 ? '' : '-';
    const percent = w.hourlyUSDAtStart > 0 ? ` (${((onStart / w.hourlyUSDAtStart) * 100).toFixed(1)} %)` : '';
    lines.push(`  Saving:             ${s}$${Math.abs(onStart).toFixed(2)}/h on the nodes it started with${percent}, about ${s}$${Math.abs(onStart * HOURS_PER_MONTH).toFixed(0)} a month`);
    lines.push(`  New capacity:       $${grown.hourlyUSD.toFixed(2)}/h of the fleet after is ${grown.nodeClaims} NodeClaim${grown.nodeClaims === 1 ? '' : 's'} the provisioner launched (for pods pending at the start, created since, or evicted with no room elsewhere)`);
    lines.push(`  Fleet change:       ${sign === '' ? '-' : '+'}$${Math.abs(w.savingHourlyUSD).toFixed(2)}/h in all`);
  } else {
    lines.push(`  Saving:             ${sign}$${Math.abs(w.savingHourlyUSD).toFixed(2)}/h (${w.savingPercent} %), about ${sign}$${Math.abs(w.savingMonthlyUSD).toFixed(0)} a month`);
  }
  lines.push(`  Prices simulated:   on-demand: ${result.pricing.onDemand}; spot: ${result.pricing.spot}`);
  if (w.actions.length > 0) {
    const replaced = w.actions.filter((a) => a.decision === 'replace').length;
    const draining = w.actions.filter((a) => a.completedAt === null).length;
    lines.push(`Disruptions, in order: ${w.actions.length} node${w.actions.length === 1 ? '' : 's'} (${w.actions.length - replaced} deleted, ${replaced} replaced${draining > 0 ? `; ${draining} still draining at the end` : ''})`);
    // Each budget once, below the table; a row names it and how many nodes it allowed then of how many.
    const budgets: string[] = [];
    const ref = (a: WhatIf['actions'][number]) => {
      const text = a.budgetRule ? `NodePool ${a.nodePool} ${a.budgetRule.rule}` : a.budget;
      let i = budgets.indexOf(text);
      if (i < 0) i = budgets.push(text) - 1;
      const inFlight = a.budgetRule?.disrupting ? ` (${a.budgetRule.disrupting} in flight)` : '';
      return `b${i + 1}${a.budgetRule ? ` ${a.budgetRule.allowed}/${a.budgetRule.nodes}${inFlight}` : ''}`;
    };
    const rows = w.actions.map((a) => [
      String(a.order),
      a.at.slice(11, 19),
      a.node ?? a.nodeClaim,
      a.nodePool,
      `${a.instanceType ?? '?'} ${a.capacityType ?? ''}`.trim(),
      a.hourlyUSD === null ? '' : a.hourlyUSD.toFixed(4),
      a.method,
      a.decision === 'replace' ? `replace → ${a.replacements.map((r) => `${r.instanceType ?? r.nodeClaim}${r.capacityType ? ` ${r.capacityType}` : ''}`).join(', ')}` : 'delete',
      ref(a),
      String(a.evictions),
    ]);
    lines.push(table(['#', 'AT (UTC)', 'NODE', 'NODEPOOL', 'TYPE', 'USD/H', 'METHOD', 'DECISION', 'BUDGET', 'EVICTED'], rows.slice(0, MAX_WHAT_IF_ROWS)));
    if (rows.length > MAX_WHAT_IF_ROWS) lines.push(`  … and ${rows.length - MAX_WHAT_IF_ROWS} more (all in --json whatIf.actions and the --report)`);
    for (const [i, text] of budgets.entries()) lines.push(`  b${i + 1}: ${text}`);
    if (budgets.length > 0) lines.push('  (BUDGET: the budget that allowed it, and how many nodes it allowed at once / the NodePool\'s nodes when it started, as the disruption controller counted them; "N in flight": nodes already being disrupted then, counted against it)');
  } else lines.push('Disruptions: none (nothing Skiff would consolidate, replace or expire in this run)');
  const top = w.evictions.byOwner.slice(0, 5).map((o) => `${o.owner} ${o.count}`);
  lines.push(`Evictions: ${w.evictions.total}${top.length ? ` (most: ${top.join(', ')}${w.evictions.byOwner.length > 5 ? ', …' : ''})` : ''}`);
  if (w.pendingAtStart.length === 0) lines.push('Pending at the start: none');
  else {
    lines.push(`Pending at the start: ${w.pendingAtStart.length} pod${w.pendingAtStart.length === 1 ? '' : 's'}`);
    for (const p of w.pendingAtStart.slice(0, MAX_WHAT_IF_ROWS)) {
      lines.push(`  ${p.pod}: ${splitHints(p.reason).reason}`);
      lines.push(`    → ${p.outcome.startsWith('still pending') ? 'still pending at the end' : p.outcome}`);
    }
    if (w.pendingAtStart.length > MAX_WHAT_IF_ROWS) lines.push(`  … and ${w.pendingAtStart.length - MAX_WHAT_IF_ROWS} more (--json whatIf.pendingAtStart)`);
  }
  return lines;
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => `  ${cells.map((c, i) => c.padEnd(widths[i]!)).join('  ')}`.trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** Seconds as `1h02m03s`, `4m05s` or `7s`. */
function duration(seconds: number): string {
  const s = Math.round(seconds);
  const [h, m, r] = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60];
  const pad = (n: number) => String(n).padStart(2, '0');
  return h > 0 ? `${h}h${pad(m)}m${pad(r)}s` : m > 0 ? `${m}m${pad(r)}s` : `${r}s`;
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/**
 * The run's settings when they are a baseline rather than Skiff's own (`--consolidation karpenter`, `--provisioning
 * karpenter`), for the summary's and the report's first line: `, consolidation: karpenter` and so on; empty otherwise.
 */
export function baselineNote(result: Pick<SimulationResult, 'consolidation' | 'provisioning'>): string {
  const settings = [
    ...(result.consolidation === 'karpenter' ? ["consolidation: karpenter (Karpenter's moves only)"] : []),
    ...(result.provisioning === 'karpenter' ? ["provisioning: karpenter (no binding replay)"] : []),
  ];
  return settings.map((s) => `, ${s}`).join('');
}

/**
 * How long disruption must have been quiet before the end for the summary to call the fleet settled: 5 minutes after
 * the last disruption ended, five scheduled passes that started nothing new. A heuristic: a NodePool whose
 * `consolidateAfter` is longer can still find moves later.
 */
export const SETTLED_QUIET_MS = 5 * 60 * 1000;

/**
 * Why the run ended before its disruptions settled, or undefined when they did: disruptions still in flight at the end,
 * or the last one ended less than {@link SETTLED_QUIET_MS} before it (consolidation was still finding moves). A run cut
 * short in the middle of a scale-in otherwise reports a final $/h the fleet was still moving away from.
 * @param result a simulation Result
 * @returns e.g. `3 nodes in flight, the last disruption started 2.0 min before the end (2026-03-02T09:58:00.000Z)`
 */
export function stillDisrupting(result: Pick<SimulationResult, 'disruptions' | 'end'>): string | undefined {
  if (result.disruptions.length === 0) return undefined;
  const endMs = Date.parse(result.end);
  const inFlight = result.disruptions.filter((d) => d.completedAt === null).length;
  const lastStart = result.disruptions.reduce((a, d) => (Date.parse(d.at) > Date.parse(a.at) ? d : a));
  if (inFlight > 0) return `${inFlight} node${inFlight === 1 ? '' : 's'} in flight, the last disruption started ${beforeTheEnd(endMs - Date.parse(lastStart.at))} (${lastStart.at})`;
  const lastEnd = Math.max(...result.disruptions.map((d) => Date.parse(d.completedAt!)));
  if (endMs - lastEnd >= SETTLED_QUIET_MS) return undefined;
  return `the last disruption ended ${beforeTheEnd(endMs - lastEnd)} (${new Date(lastEnd).toISOString()})`;
}

/** `as the run ended`, `20 s before the end` or `2.5 min before the end`, for a gap in ms. */
function beforeTheEnd(ms: number): string {
  if (ms < 500) return 'as the run ended';
  return ms < 60_000 ? `${Math.round(ms / 1000)} s before the end` : `${(ms / 60_000).toFixed(1)} min before the end`;
}

/** Words for each fault kind, as configured and as counted. */
const FAULT_WORDS: Readonly<Record<string, readonly [string, string]>> = {
  crashAfterSideEffect: ['crashes', 'crashes'],
  ec2Throttle: ['EC2 throttling', 'EC2 calls throttled'],
  dynamodbThrottle: ['DynamoDB throttling', 'DynamoDB calls throttled'],
  apiServerErrors: ['API-server errors', 'API-server 503s'],
  duplicateDelivery: ['duplicate delivery', 'messages redelivered'],
  concurrentInvocations: ['overlapping invocations', 'invocations overlapped'],
};

/**
 * The summary's faults line: what was configured and what was injected, e.g. `Faults (spec.faults): crashes 0.2,
 * EC2 throttling 0.3, overlapping invocations 4; injected 41 crashes, 230 EC2 calls throttled, 812 invocations
 * overlapped`. Only kinds that are on are named.
 */
function faultsLine(faults: NonNullable<SimulationResult['faults']>): string {
  const configuredOf = (k: string): number => Number(faults.configured[k] ?? 0);
  const on = Object.entries(FAULT_WORDS).filter(([k]) => configuredOf(k) > (k === 'concurrentInvocations' ? 1 : 0));
  const configured = on.map(([k, [word]]) => `${word} ${configuredOf(k)}`).join(', ');
  const injected = on.map(([k, [, counted]]) => `${Number(faults.injected[k] ?? 0)} ${counted}`).join(', ');
  return `Faults (spec.faults): ${configured}; injected ${injected}`;
}

/** `1 node`, `2 nodes`: a count with its noun, plural unless it is 1. */
function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** At most this many drifted nodes are listed by name. */
const MAX_DRIFTED_LISTED = 5;

/**
 * Nodes still drifted at the end that no disruption is taking (`nodeClaims[].driftedAtEnd`), each with what held it:
 * the latest `DisruptionBlocked` or `Unconsolidatable` Event on its Node or NodeClaim, else a budget that blocked
 * `Drifted` on its NodePool, else that no pass reached it. Empty when there are none (or the Result predates the field).
 */
export function driftedLines(result: Pick<SimulationResult, 'nodeClaims' | 'nodes' | 'disruptions' | 'events'>): string[] {
  const taken = new Set(result.disruptions.filter((d) => d.completedAt === null).map((d) => d.nodeClaim));
  const drifted = result.nodeClaims.filter((c) => c.driftedAtEnd !== undefined && !taken.has(c.name));
  if (drifted.length === 0) return [];
  const nodeOf = new Map(result.nodes.filter((n) => n.nodeClaim !== null && n.deletedAt === null).map((n) => [n.nodeClaim!, n.name]));
  const latest = new Map<string, string>();
  for (const e of result.events) {
    if (e.reason === 'DisruptionBlocked' && (e.object.startsWith('Node/') || e.object.startsWith('NodeClaim/'))) latest.set(e.object, e.message);
    if (e.reason === 'DisruptionBlocked' && e.object.startsWith('NodePool/') && /\bDrifted\b/.test(e.message)) latest.set(e.object, e.message);
  }
  const lines = [`Drifted at the end and not replaced: ${plural(drifted.length, 'node')} (the rollout did not finish)`];
  for (const c of drifted.slice(0, MAX_DRIFTED_LISTED)) {
    const node = nodeOf.get(c.name);
    const held = (node ? latest.get(`Node/${node}`) : undefined) ?? latest.get(`NodeClaim/${c.name}`) ?? latest.get(`NodePool/${c.nodePool}`) ?? 'no disruption pass took it before the end';
    lines.push(`  ${node ?? c.name} (NodePool ${c.nodePool}): ${c.driftedAtEnd}; held: ${held}`);
  }
  if (drifted.length > MAX_DRIFTED_LISTED) lines.push(`  … and ${drifted.length - MAX_DRIFTED_LISTED} more (nodeClaims[].driftedAtEnd in --json)`);
  return lines;
}
