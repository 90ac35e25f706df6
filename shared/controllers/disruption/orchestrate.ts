/**
 * Orchestrating a command once it is validated (Karpenter core `pkg/controllers/disruption/queue.go`):
 * taint the candidates' nodes, launch the replacements through the provisioner's launch protocol, wait for every
 * replacement to initialize, then hand the candidates to the drain (`drain.ts`). A replacement that fails, or does not
 * initialize within {@link REPLACEMENT_TIMEOUT_MS}, abandons the command: the candidates' records lose it and their
 * nodes are untainted.
 */
import { isLive, type NodeClaim, type NodeClaimDisruption } from '../../core/api/nodeclaim.js';
import { DISRUPTED_NO_SCHEDULE_TAINT } from '../../core/disruption/drainable.js';
import { fnv1a } from '../../core/hash.js';
import type { NodeClaimPlan } from '../../core/provisioning/types.js';
import { recordEventBestEffort } from '../events.js';
import { REGISTRATION_TTL_MS, createNodeClaimRecord, launchPending, nodeOf } from '../launch.js';
import { nodeClaimExtras } from '../nodeclaim-extras.js';
import { replacementPlans } from './methods/drift.js';
import { taint, withoutDisruption, writeIgnoringConflict, type Pass } from './pass.js';
import type { World } from './world.js';

/** A replacement that has not initialized this long after its command started is given up (launch + registration). */
export const REPLACEMENT_TIMEOUT_MS = REGISTRATION_TTL_MS + 5 * 60 * 1000;

/**
 * Drops `command` from the candidates' records (read again: only those still carrying it), reports it rejected with
 * `reason`, and writes an Event (`ConsolidationRejected` for a proposal dropped at validation, `DisruptionBlocked` for
 * a command abandoned after it started).
 * @param untaint true for a command that had started: its candidates' nodes lose the disrupted taint
 * @throws whatever the ports throw for failures other than conflicts
 */
export async function reject(pass: Pass, world: World, command: string, candidates: readonly NodeClaim[], reason: string, untaint: boolean): Promise<void> {
  for (const claim of candidates) {
    const fresh = (await pass.deps.store.get(claim.name)) ?? claim;
    if (fresh.disruption?.command !== command || !isLive(fresh)) continue;
    await writeIgnoringConflict(pass, withoutDisruption(fresh));
    const node = nodeOf(fresh, world.nodes);
    if (untaint && node?.taints.some((t) => t.key === DISRUPTED_NO_SCHEDULE_TAINT.key)) {
      await pass.deps.cluster.patchNode(node.name, { taints: node.taints.filter((t) => t.key !== DISRUPTED_NO_SCHEDULE_TAINT.key) });
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

/**
 * Starts a validated command: its records move to `Replacing` (with the replacements' names) or, for a delete,
 * straight to `Draining`; each candidate's node is tainted; then the replacements are created and launched.
 * @param d the proposal as recorded
 * @param candidates the records of the command's candidates, in the proposal's order
 * @param replacements the NodeClaims to launch first (none for a delete)
 * @throws whatever the ports throw for failures other than conflicts
 */
export async function startCommand(pass: Pass, world: World, d: NodeClaimDisruption, candidates: readonly NodeClaim[], replacements: readonly NodeClaimPlan[]): Promise<void> {
  const command = d.command;
  const now = new Date(world.now).toISOString();
  const names = replacements.map((_, i) => `${replacements[i]!.nodePool}-r${fnv1a(`${command}|${i}`).toString(36).slice(0, 5)}`);
  const started: NodeClaimDisruption = { ...d, phase: d.decision === 'replace' ? 'Replacing' : 'Draining', replacements: names, startedAt: now, ...(d.decision === 'delete' ? { drainStartedAt: now } : {}) };
  for (const claim of candidates) {
    const saved = await writeIgnoringConflict(pass, { ...claim, ...(started.phase === 'Draining' ? { state: 'Deleting' as const } : {}), disruption: started });
    if (!saved) return; // moved on meanwhile; the next pass sees what happened
    await taint(pass, nodeOf(claim, world.nodes));
  }
  pass.report.started.push(command);
  await recordEventBestEffort(pass.deps.cluster, {
    type: 'Normal',
    reason: d.decision === 'replace' ? 'DisruptionLaunching' : 'DisruptionTerminating',
    object: `NodeClaim/${candidates[0]!.name}`,
    message: `Disrupting NodeClaim(s) ${d.candidates.join(', ')} (${d.reason}: ${d.message})${names.length ? `; launching replacement ${names.join(', ')}` : ''}`,
  });
  for (const [i, plan] of replacements.entries()) await launchReplacement(pass, world, names[i]!, plan, d.candidates);
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

/**
 * Replacing: once every replacement is initialized the candidates start draining; a failed replacement ends the
 * command; a replacement whose record a crash kept from being created is planned again (drift only).
 * @throws whatever the ports throw for failures other than conflicts
 */
export async function awaitReplacements(pass: Pass, world: World, command: string, candidates: readonly NodeClaim[]): Promise<void> {
  const d = candidates[0]!.disruption!;
  for (const c of candidates) await taint(pass, nodeOf(c, world.nodes));
  const replacements = d.replacements.map((name) => world.claims.find((c) => c.name === name));
  const failed = replacements.find((r) => r && !isLive(r));
  if (failed) {
    await reject(pass, world, command, candidates, `replacement ${failed.name} failed (${failed.launchError ?? failed.deletionReason ?? failed.state})`, true);
    return;
  }
  if (replacements.some((r) => !r)) {
    // The pass that started the command died before creating a replacement's record: plan it again.
    const again = d.reason === 'Drifted' ? replacementPlans(world, candidates, pass.deps.region, pass.deps.memory).plans : [];
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
