/**
 * The disruption controller: Karpenter's second half, one pass per minute (EventBridge schedule, under a lease so
 * passes never overlap). Each NodeClaim's disruption is a small state machine kept on its DynamoDB record, so a pass
 * that dies anywhere is resumed by the next one:
 *
 *   (none) ─propose→ Proposed ─≥15 s later, re-validated→ Replacing ─replacements Initialized→ Draining ─drained→ Deleted
 *                        └─ no longer valid → (none)        └─ replacement failed → (none), node untainted
 *
 * Each pass, most urgent first — a pass may die after any side effect (a crash, a timeout), and the next one must not
 * spend itself on the same first items again (`urgency.ts`):
 * 0. when it reads work in flight (a disruption in flight, an expired or drifted NodeClaim), asks for a follow-up pass
 *    20 s later before its first side effect (`DisruptionDeps.followUps`; without it, or with nothing in flight at the
 *    start, the request is left to the caller, `DisruptionReport.followUpAfterMs`, step 8): a pass that dies is
 *    resumed 20 s later, nearer Karpenter's loop, which runs again as soon as a command has started;
 * 1. finishes the drains whose terminationGracePeriod is running out (pods to delete, or the node to terminate),
 *    earliest deadline first, before it spends a side effect on anything else (Karpenter enforces the deadline in
 *    each node's own termination reconcile, which nothing else delays);
 * 2. expires NodeClaims older than their `expireAfter` at once — forceful: no budget, no replacement first
 *    (Karpenter `nodeclaim/expiration`); the drain still honours PDBs until `terminationGracePeriod` runs out. The
 *    lifecycle controller starts forceful drains too (`NodeDeleted`, `NodeClaimDeleted`: a user deleted the Node or
 *    the NodeClaim);
 * 3. takes `karpenter.sh/disrupted` off nodes whose record carries no disruption (a start or a rollback died midway,
 *    `orchestrate.ts releaseStaleTaints`);
 * 4. drains every `Draining` NodeClaim, whoever started it — earliest deadline first, then those without one in the
 *    order the records are listed. A deletion the previous pass started is usually over now, and the budget it frees is what the proposals below were searched with;
 * 5. validates again a voluntary command whose start was left incomplete — a record started but its node untainted,
 *    or some records started and others not — before it goes on, or drops it (`validate.ts resumeStart`); then
 *    advances every disruption in flight, one command after the other in the order they were proposed: validates
 *    proposals at least `VALIDATION_DELAY_MS` old (`validate.ts`; Karpenter's `commandValidationDelay`), taints the
 *    candidates before recording the start (`orchestrate.ts startCommand`), launches replacements through the
 *    provisioner's launch protocol, waits for them to initialize and drains through the Eviction API (PDBs answer
 *    429: try again next pass), then deletes the record, terminates the instance and deletes the Node;
 * 6. unless a proposal is waiting, proposes new commands from the first method that finds one, in Karpenter's
 *    order: Emptiness → Drift → multi-node consolidation → single-node consolidation (core
 *    `disruption/controller.go`), within each NodePool's budget for that reason (`core/disruption/budgets.ts`), and
 *    searches again with each command counted, as Karpenter searches again as soon as it has started one
 *    (`propose.ts`, at most `COMMANDS_PER_PASS`). A pass runs once a minute where Karpenter's loop runs every few
 *    seconds, so a pass proposes for the next one: the deletions it started count as gone from the budgets
 *    (`propose.ts startedDeletions`) and the next pass finishes them before it validates;
 * 7. stamps each node's last pod event on its record (`lastPodEventAt`, Karpenter's `status.lastPodEventTime`;
 *    consolidateAfter counts from it), from the times the cluster reports (`Cluster.lastPodEventTimes`). Every phase
 *    above read them already, in memory (`pod-events.ts withPodEvents`); written last, they cost a pass cut short
 *    nothing (after a burst every node has one to write);
 * 8. unless it asked already (step 0), while any disruption is in flight, asks for a follow-up pass 20 s later
 *    (`DisruptionReport.followUpAfterMs`, `shared/ports/follow-up-passes.ts`): proposals are validated after 20 s
 *    rather than a minute.
 *
 * Candidates (Karpenter `disruption/types.go NewCandidate`): initialized, managed, not already disrupted, no node
 * annotation `karpenter.sh/do-not-disrupt: "true"`, no pod with an active do-not-disrupt, no pod a PDB keeps from
 * being evicted (a drifted node with a `terminationGracePeriod` is exempt from both pod checks, as in Karpenter: its
 * drain deletes such pods at the grace period's deadline). Consolidation also needs `consolidateAfter` to have passed
 * since the last pod event, moves no pod onto a node still inside its own `consolidateAfter`, and — Skiff's churn guard —
 * spares nodes expiring within `CHURN_GUARD_MS` (`candidates.ts`; or `consolidateAfter` if longer) and replacements
 * younger than that. Every candidate turned down is reported with the reason.
 *
 * The phases are one file each beside this one (see `deps.ts`); the methods are in `methods/`, run from the ordered
 * list in `methods.ts`.
 */
import { isLive, type NodeClaim } from '../../core/api/nodeclaim.js';
import { FOLLOW_UP_AFTER_MS } from '../../ports/follow-up-passes.js';
import { CONSOLIDATED_TTL_MS, worldFingerprint } from './consolidated.js';
import type { DisruptionDeps, DisruptionReport } from './deps.js';
import type { DisruptionMemory } from './memory.js';
import { drain } from './drain.js';
import { expire, startForceful } from './forceful.js';
import { awaitReplacements, releaseStaleTaints } from './orchestrate.js';
import { newPass } from './pass.js';
import { notePodEvents, reportInvalidDoNotDisrupt, withPodEvents } from './pod-events.js';
import { propose } from './propose.js';
import { VALIDATION_DELAY_MS, byProposal, resumeStart, startIncomplete, validateProposal } from './validate.js';
import { drainOrder, dueDrains, requestFollowUpEarly } from './urgency.js';
import { readWorld, type World } from './world.js';
import { timestampMs } from '../../core/api/timestamp.js';

/**
 * Runs one disruption pass (see the module comment). Safe to repeat and to resume after a crash; not safe to overlap
 * with itself — the handler runs it under a lease.
 * @throws whatever the ports throw for failures other than conflicts (the next pass resumes from the records)
 */
export async function disrupt(deps: DisruptionDeps): Promise<DisruptionReport> {
  const pass = newPass(deps);
  // `read` as the store and the cluster have it; `world` with each node's last pod event stamped in memory
  // (`pod-events.ts withPodEvents`), what every phase reads. The stamps are written at the end of the pass.
  let read = await readWorld(deps);
  let world = withPodEvents(read);
  let seen = 0;
  /** The world again if anything was written since it was read. */
  const refresh = async (): Promise<World> => {
    if (pass.writes === seen) return world;
    seen = pass.writes;
    read = await readWorld(deps, read);
    world = withPodEvents(read);
    return world;
  };
  // Before the first side effect: a pass that finds work in flight asks for its follow-up now, so one cut short below
  // (a crash, a timeout) is resumed 20 s later rather than at the schedule's next minute (`follow-up-passes.ts`).
  await requestFollowUpEarly(pass, world);
  const drained = new Set<string>();
  /** Drains `claim` unless its command's start is incomplete (validated again first, `resumeStart` below). */
  const drainOnce = async (claim: NodeClaim): Promise<void> => {
    if (drained.has(claim.name) || !isLive(claim) || claim.disruption?.phase !== 'Draining') return;
    if (startIncomplete(world, world.claims.filter((c) => isLive(c) && c.disruption?.command === claim.disruption!.command))) return;
    drained.add(claim.name);
    await drain(pass, world, claim);
  };
  // Deadlines first: a drain whose terminationGracePeriod is running out (pods to delete now, or the node to terminate)
  // is finished before the pass spends a side effect on anything else, earliest deadline first — Karpenter's
  // termination controller enforces the deadline on each node in its own reconcile, which no other work delays.
  for (const claim of dueDrains(world)) await drainOnce(claim);
  // Then forceful starts: expiration needs no budget and starts the terminationGracePeriod's clock, so it is not left
  // behind the evictions below (each drain goes on next pass; an expiration not started would wait for ever).
  await expire(pass, await refresh());
  await refresh();
  await reportInvalidDoNotDisrupt(pass, world);
  await releaseStaleTaints(pass, await refresh());
  await refresh();
  // Drains next: a deletion the previous pass started is usually over by now (its pods had a minute to go), and the
  // budget it frees is what the proposals waiting below were searched with (`propose.ts startedDeletions`). Earliest
  // deadline first, then the others in the order the records are listed.
  for (const claim of drainOrder(world)) await drainOnce(claim);
  await refresh();

  // Disruptions in flight, one command at a time (a command's candidates move together).
  // Commands in the order they were proposed, and each step on the world as the steps before it left it: a pass that
  // proposed several validates them one after the other, each against the budget the ones before it took.
  const commands = new Map<string, NodeClaim[]>();
  for (const c of world.claims) if (isLive(c) && c.disruption) commands.set(c.disruption.command, [...(commands.get(c.disruption.command) ?? []), c]);
  let proposalWaiting = false;
  for (const command of [...commands.keys()].sort((a, b) => byProposal(commands.get(a)![0]!, commands.get(b)![0]!) || a.localeCompare(b))) {
    const current = await refresh();
    const candidates = current.claims.filter((c) => isLive(c) && c.disruption?.command === command);
    if (candidates.length === 0) continue;
    const phase = candidates[0]!.disruption!.phase;
    if (startIncomplete(current, candidates)) {
      await resumeStart(pass, current, command, candidates);
    } else if (phase === 'Proposed') {
      if (current.now - timestampMs(candidates[0]!.disruption!.proposedAt) < VALIDATION_DELAY_MS) proposalWaiting = true;
      else await validateProposal(pass, current, command, candidates);
    } else if (phase === 'Replacing') {
      await awaitReplacements(pass, current, command, candidates);
    }
  }
  await refresh();
  // Drains a command above moved to Draining begin now.
  for (const claim of drainOrder(world)) await drainOnce(claim);

  let fingerprint: string | undefined;
  if (!proposalWaiting) {
    const latest = await refresh();
    // Karpenter's "consolidated" state: when nothing changed since a pass found nothing to do, skip the search (it
    // only repeats itself) — at most for CONSOLIDATED_TTL_MS, after which prices or budget windows may differ.
    fingerprint = worldFingerprint(latest, deps.memory);
    const last = deps.memory.consolidated;
    if (!last || last.fingerprint !== fingerprint || latest.now - last.at >= CONSOLIDATED_TTL_MS) {
      const before = pass.report.proposed.length;
      await propose(pass, latest);
      deps.memory.consolidated = pass.report.proposed.length === before && searchedEverything(pass.report.searchStopped, fingerprint, deps.memory) ? { fingerprint, at: latest.now } : undefined;
    }
  }
  // Last, the pod events every phase above read in memory: a pass cut short has spent no side effect on them first.
  await refresh();
  const stampsFrom = pass.writes;
  await notePodEvents(pass, read);
  // The stamps move the records' versions on, not what the search saw (it read them in memory): the verdicts this
  // pass remembered hold for the world as it is now written.
  if (fingerprint !== undefined && pass.writes !== stampsFrom) await rebaseVerdicts(deps.memory, fingerprint, () => refresh().then((w) => worldFingerprint(w, deps.memory)));
  // Work in flight: a follow-up pass validates the proposals 20 s from now, not a minute (`follow-up-passes.ts`).
  // (Unless this pass asked already, before its first side effect: one request per pass.)
  if (pass.report.followUpAt === undefined && (await refresh()).claims.some((c) => isLive(c) && c.disruption)) pass.report.followUpAfterMs = FOLLOW_UP_AFTER_MS;
  return pass.report;
}

/**
 * Moves the "consolidated" verdict and the stopped searches remembered for the world digested as `before` onto the
 * same world after the pass wrote its pod-event stamps (`after`, read only when one of them needs it).
 */
async function rebaseVerdicts(memory: DisruptionMemory, before: string, after: () => Promise<string>): Promise<void> {
  const consolidated = memory.consolidated;
  const stopped = memory.stoppedSearches;
  if (consolidated?.fingerprint !== before && stopped?.fingerprint !== before) return;
  const fingerprint = await after();
  if (consolidated?.fingerprint === before) memory.consolidated = { ...consolidated, fingerprint };
  if (stopped?.fingerprint === before) memory.stoppedSearches = { ...stopped, fingerprint };
}

/**
 * Whether the pass's search, having found nothing, tried every candidate. A search stopped on its budget has not
 * (`search-budget.ts`): the next pass resumes it, after the last candidate it simulated. Passes that stop over the same
 * world (the same `fingerprint`) add up, and once they have simulated as many candidates as there are, every one was
 * tried in that world: nothing to do, as if one pass had searched them all.
 */
function searchedEverything(stopped: readonly { readonly evaluated: number; readonly candidates: number }[], fingerprint: string, memory: DisruptionMemory): boolean {
  if (stopped.length === 0) {
    memory.stoppedSearches = undefined;
    return true;
  }
  const evaluated = stopped.reduce((sum, s) => sum + s.evaluated, 0);
  const candidates = Math.max(...stopped.map((s) => s.candidates));
  const sofar = memory.stoppedSearches?.fingerprint === fingerprint ? memory.stoppedSearches.evaluated + evaluated : evaluated;
  if (sofar >= candidates) {
    memory.stoppedSearches = undefined;
    return true;
  }
  memory.stoppedSearches = { fingerprint, evaluated: sofar };
  return false;
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
  const pass = newPass(deps);
  let world = await readWorld(deps);
  const claim = world.claims.find((c) => c.name === name);
  if (!claim || !isLive(claim)) return pass.report;
  await startForceful(pass, world, claim, reason, message);
  world = await readWorld(deps, world);
  const current = world.claims.find((c) => c.name === name);
  if (current && isLive(current) && current.disruption?.phase === 'Draining') await drain(pass, world, current);
  return pass.report;
}

