/**
 * Orchestrating a command once it is validated (Karpenter core `pkg/controllers/disruption/queue.go`):
 * taint the candidates' nodes, then record the command as started, launch the replacements through the provisioner's
 * launch protocol, wait for every replacement to initialize, then hand the candidates to the drain (`drain.ts`). A
 * replacement that fails, or does not initialize within {@link REPLACEMENT_TIMEOUT_MS}, abandons the command: the
 * candidates' records lose it and their nodes are untainted. A node left tainted by a pass that died is un-tainted
 * by the next ({@link releaseStaleTaints}); a start left incomplete is validated again (`validate.ts`).
 */
import { isLive, type NodeClaim, type NodeClaimDisruption } from '../../core/api/nodeclaim.js';
import { isNotFoundError, isThrottledError } from '../../core/errors.js';
import { fnv1a } from '../../core/hash.js';
import type { NodeClaimPlan } from '../../core/provisioning/types.js';
import { recordEventBestEffort } from '../events.js';
import { REGISTRATION_TTL_MS, createNodeClaimRecord, launchPending, nodeOf } from '../launch.js';
import type { ClusterNode } from '../../ports/cluster.js';
import { nodeClaimExtras } from '../nodeclaim-extras.js';
import { replacementPlans } from './methods/drift.js';
import { isTainted, taint, untaint, withoutDisruption, writeIgnoringConflict, type Pass } from './pass.js';
import { podsOfClaim, readWorld, type World } from './world.js';

/** A replacement that has not initialized this long after its command started is given up (launch + registration). */
export const REPLACEMENT_TIMEOUT_MS = REGISTRATION_TTL_MS + 5 * 60 * 1000;

/**
 * Drops `command` from the candidates' records (read again: only those still carrying it; a record the command had
 * moved to `Deleting` is `Initialized` again), then takes `karpenter.sh/disrupted` off their nodes (Karpenter core
 * `disruption/queue.go Reconcile`: a failed command's candidates lose the taint, `state.RequireNoScheduleTaint(…,
 * false, …)`), reports the command rejected with `reason`, and writes an Event. A node whose record another command
 * or a forceful disruption has taken over keeps its taint. Record first, taint second: a pass that dies in between
 * leaves a tainted node whose record carries no disruption, which the next pass un-taints
 * ({@link releaseStaleTaints}).
 * @param started true for a command that had started (Event `DisruptionBlocked`), false for a proposal dropped at
 *   validation (Event `ConsolidationRejected`; its nodes carry the taint only when a start died midway)
 * @throws whatever the ports throw for failures other than conflicts
 */
export async function reject(pass: Pass, world: World, command: string, candidates: readonly NodeClaim[], reason: string, started: boolean): Promise<void> {
  // The world may predate this pass's own taints: read the nodes again before un-tainting.
  let nodes: readonly ClusterNode[] | undefined;
  for (const claim of candidates) {
    const fresh = (await pass.deps.store.get(claim.name)) ?? claim;
    if (fresh.disruption?.command !== command || !isLive(fresh)) continue;
    const saved = await writeIgnoringConflict(pass, undisrupted(fresh));
    if (!saved) continue; // moved on meanwhile: its node is judged again next pass
    nodes ??= await pass.deps.cluster.listNodes();
    await untaint(pass, nodeOf(fresh, nodes));
  }
  pass.report.rejected.push({ command, reason });
  await recordEventBestEffort(pass.deps.cluster, {
    type: 'Normal',
    reason: started ? 'DisruptionBlocked' : 'ConsolidationRejected',
    object: `NodeClaim/${candidates[0]!.name}`,
    message: `disruption ${command} of ${candidates.map((c) => c.name).join(', ')} abandoned: ${reason}`,
  });
}

/**
 * The record as it was before its voluntary command: without the disruption, and `Initialized` again when the command
 * had moved it to `Deleting` (a voluntary command only takes initialized NodeClaims, `candidates.ts`).
 */
export function undisrupted(claim: NodeClaim): NodeClaim {
  const rest = withoutDisruption(claim);
  return claim.disruption && claim.state === 'Deleting' ? { ...rest, state: 'Initialized' } : rest;
}

/**
 * A failure a port reports (throttling, a 5xx, a vanished object): the pass that meets one while starting a command
 * rolls the start back. Anything else — the invocation dying — leaves what was done to the next pass.
 */
function isPortFailure(e: unknown): boolean {
  return isThrottledError(e) || isNotFoundError(e);
}

/**
 * Starts a validated command the way Karpenter's orchestration queue does (core `pkg/controllers/disruption/queue.go
 * StartCommand`: `markDisrupted` taints every candidate `karpenter.sh/disrupted:NoSchedule` first — "Cordon the old
 * nodes before we launch the replacements to prevent new pods from scheduling to the old nodes" — then
 * `createReplacementNodeClaims`): 1. each candidate's node is tainted; 2. for an Empty command, the pods are read
 * again and the command dropped if a candidate took one before its taint (Skiff's addition: an Empty disruption never
 * evicts); 3. only then are the records written as started (`Replacing` with the replacements' names, or for a delete
 * straight to `Draining`); 4. the replacements are created and launched.
 *
 * Crash safety: the taint always precedes the record, so no record says a command started while its node still takes
 * pods. A pass that dies after some taints or some record writes leaves a command whose start is incomplete; the next
 * pass validates it again before it goes on (`validate.ts resumeStart`, `validateProposal`) or drops it and un-taints.
 * A taint or record write a port fails (throttling, a 5xx, a conflict: another writer moved a candidate on) rolls the
 * start back at once — the records lose the command, the nodes the taint ({@link reject}) — and, but for a conflict,
 * the failure is thrown. Karpenter leaves that un-tainting to its next reconcile (`controller.go Reconcile`, "remove
 * this taint from candidates that are not in the orchestration queue"); Skiff does both.
 * @param d the proposal as recorded (a resumed start passes it without its started fields)
 * @param candidates the records of the command's candidates, in the proposal's order
 * @param replacements the NodeClaims to launch first (none for a delete)
 * @throws whatever the ports throw for failures other than conflicts (after rolling back what a port failed)
 */
export async function startCommand(pass: Pass, world: World, d: NodeClaimDisruption, candidates: readonly NodeClaim[], replacements: readonly NodeClaimPlan[]): Promise<void> {
  const command = d.command;
  const now = new Date(world.now).toISOString();
  const names = replacements.map((_, i) => `${replacements[i]!.nodePool}-r${fnv1a(`${command}|${i}`).toString(36).slice(0, 5)}`);
  const { startedAt: _s, drainStartedAt: _d, ...proposal } = d;
  const started: NodeClaimDisruption = { ...proposal, phase: d.decision === 'replace' ? 'Replacing' : 'Draining', replacements: names, startedAt: now, ...(d.decision === 'delete' ? { drainStartedAt: now } : {}) };
  try {
    for (const claim of candidates) await taint(pass, nodeOf(claim, world.nodes));
    if (d.reason === 'Empty') {
      // A pod bound between the validation's read and the taint would be evicted by an "Empty" drain: look again now
      // that no pod can land any more, and drop the command if one did. (Karpenter's termination drains such a pod;
      // Skiff deliberately does not let an Empty disruption evict anything.)
      const now = await readWorld(pass.deps, world);
      const taken = candidates.find((c) => podsOfClaim(now, c).length > 0);
      if (taken) {
        await reject(pass, world, command, candidates, `${taken.name}'s node took a pod after it was found empty`, true);
        return;
      }
    }
    for (const claim of candidates) {
      // A resumed start keeps what an earlier pass recorded: each pass then gets further, however often passes die.
      if (claim.disruption?.command === command && claim.disruption.phase !== 'Proposed') continue;
      const saved = await writeIgnoringConflict(pass, { ...claim, ...(started.phase === 'Draining' ? { state: 'Deleting' as const } : {}), disruption: started });
      if (!saved) {
        await reject(pass, world, command, candidates, `${claim.name} changed while the command started`, true);
        return;
      }
    }
  } catch (e) {
    if (!isPortFailure(e)) throw e;
    try {
      await reject(pass, world, command, candidates, `starting it failed: ${e instanceof Error ? e.message : String(e)}`, true);
    } catch (rollback) {
      if (!isPortFailure(rollback)) throw rollback;
      // The port still fails: the next pass un-taints or validates what is left (releaseStaleTaints, validate.ts).
    }
    throw e;
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

/**
 * Karpenter core `disruption/controller.go Reconcile` ("If Karpenter restarts or fails with an error during a
 * disruption action, some nodes can be left tainted. Idempotently remove this taint from candidates that are not in
 * the orchestration queue"): Skiff's queue is the records, so a node tainted `karpenter.sh/disrupted` whose live
 * NodeClaim carries no disruption and is not `Deleting` lost its command — a start or a rollback died midway — and
 * loses the taint. A node whose record carries a proposal keeps it until the proposal is validated again (it starts,
 * keeping the taint, or is dropped, losing it: `validate.ts`). The record is read again first, so a forceful
 * disruption written meanwhile (record first, then taint) keeps its taint.
 * @throws whatever the ports throw
 */
export async function releaseStaleTaints(pass: Pass, world: World): Promise<void> {
  for (const node of world.nodes) {
    if (!isTainted(node)) continue;
    const claim = world.claims.find((c) => c.providerId === node.providerId);
    if (!claim || !isLive(claim) || claim.state === 'Deleting' || claim.disruption) continue;
    const fresh = await pass.deps.store.get(claim.name);
    if (!fresh || !isLive(fresh) || fresh.state === 'Deleting' || fresh.disruption) continue;
    await untaint(pass, node);
  }
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
