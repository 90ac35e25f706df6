/**
 * Step 4 of a pass, proposing: the first method of the ordered list that finds a command over the undisrupted,
 * initialized NodeClaims (Karpenter core `pkg/controllers/disruption/controller.go disrupt`), within each NodePool's
 * budget, written onto its candidates' records as `Proposed`, then the search again with that command counted, up to
 * {@link COMMANDS_PER_PASS} a pass; the next pass at least `VALIDATION_DELAY_MS` later validates them in the order they
 * were proposed (`validate.ts`). What the methods turned down is reported, with Karpenter's Events.
 */
import { isLive, type NodeClaim, type NodeClaimDisruption } from '../../core/api/nodeclaim.js';
import { decisionOf, type MethodCommand } from '../../core/disruption/types.js';
import { fnv1a } from '../../core/hash.js';
import { BudgetLedger } from './budget-ledger.js';
import { methodsFor } from './methods.js';
import { DISCARD, type ControllerMethod, type MethodContext, type MethodSink } from './methods/context.js';
import { recordBlocked, withoutDisruption, writeIgnoringConflict, type Pass } from './pass.js';
import type { World } from './world.js';

/**
 * A context for one search or one validation over `world`: a fresh budget ledger, the pass's settings and memory.
 * @param sink where the methods report what they turn down
 * @param gone NodeClaims the budgets count as already gone (`BudgetLedger`)
 */
export function methodContext(pass: Pass, world: World, sink: MethodSink, gone?: ReadonlySet<string>): MethodContext {
  return {
    world,
    ledger: new BudgetLedger(world, pass.deps.memory, gone),
    region: pass.deps.region,
    spotToSpot: pass.deps.spotToSpotConsolidation,
    surviveBinding: pass.deps.consolidation !== 'karpenter',
    memory: pass.deps.memory,
    sink,
  };
}

/**
 * The NodeClaims whose deletion this pass started (a delete command validated now, its drain begun): the next pass
 * finishes them before it validates anything (`disrupt.ts`), so what this pass proposes is searched with them
 * already gone from the budgets — as Karpenter, which searches again as soon as the termination controller has
 * deleted a node, would find it. A drain that takes longer holds the proposal back at its validation, whose budget
 * counts every node still there.
 * @param started the commands this pass started (its report's `started`)
 */
export function startedDeletions(world: World, started: readonly string[]): ReadonlySet<string> {
  const commands = new Set(started);
  return new Set(world.claims.filter((c) => isLive(c) && c.disruption?.decision === 'delete' && c.disruption.phase === 'Draining' && commands.has(c.disruption.command)).map((c) => c.name));
}

/**
 * A sink that fills the pass's report (`skipped`, `budgetBlocked` once per NodePool and reason, `blocked`,
 * `unconsolidatable`, `searchStopped`).
 */
function reportingSink(pass: Pass): MethodSink {
  return {
    skipped: (nodeClaim, reason) => void pass.report.skipped.push({ nodeClaim, reason }),
    budgetBlocked: (nodePool, reason) => {
      if (!pass.report.budgetBlocked.some((b) => b.nodePool === nodePool && b.reason === reason)) pass.report.budgetBlocked.push({ nodePool, reason });
    },
    blocked: (nodeClaim, node, reason) => void pass.report.blocked.push({ nodeClaim, node, reason }),
    unconsolidatable: (nodeClaim, node, reason) => void (pass.unconsolidatable ??= []).push({ nodeClaim, node, reason }),
    searchStopped: (method, evaluated, candidates) => void pass.report.searchStopped.push({ method, evaluated, candidates }),
  };
}

/** The first command a method of `methods` (in order) finds among `candidates`, with that method's name, or undefined. */
export function findCommand(methods: readonly ControllerMethod[], candidates: readonly NodeClaim[], ctx: MethodContext): MethodCommand<NodeClaim> | undefined {
  for (const method of methods) {
    const command = method.computeCommand(candidates, ctx);
    if (command) return { ...command, method: method.name };
  }
  return undefined;
}

/**
 * How many commands one pass may propose with Skiff's moves. Karpenter runs one command at a time and searches again
 * as soon as it has started one (core `disruption/controller.go Reconcile` requeues at once after a success), each after
 * its 15 s validation: three to four a minute. A Skiff pass runs once a minute, so it searches again after each
 * command it proposes, with that command's nodes counted as going away and its pods as moving (`afterMovingPods`),
 * until nothing more is found, the budgets are spent, or this many are proposed (a bound on the pass's work).
 */
export const COMMANDS_PER_PASS = 8;

/**
 * With Karpenter's moves only (the baseline, `methodsFor('karpenter')`): what Karpenter starts in a minute, one
 * command per 15 s validation plus its search — 3 in any 60 s, however often passes run (follow-up passes run every
 * 20 s while work is in flight; `DisruptionMemory.karpenterProposals` keeps the recent proposals).
 */
export const KARPENTER_COMMANDS_PER_MINUTE = 3;

/** A sink that keeps only stopped searches: the searches after a pass's first report nothing twice. */
function stopsOnly(pass: Pass): MethodSink {
  return { ...DISCARD, searchStopped: (method, evaluated, candidates) => void pass.report.searchStopped.push({ method, evaluated, candidates }) };
}

/**
 * Searches for commands with the methods of the consolidation setting (`methods.ts methodsFor`) and proposes each on
 * its candidates' records, then searches again with it counted (its budget taken, its nodes going away, its pods moving)
 * — at most {@link COMMANDS_PER_PASS} (for the baseline, {@link KARPENTER_COMMANDS_PER_MINUTE} in any minute). The first search writes
 * the Events of what was turned down. A proposal another writer got in the way of (a candidate moved on meanwhile) is
 * withdrawn and ends the pass's proposing.
 * @throws whatever the ports throw for failures other than conflicts
 */
export async function propose(pass: Pass, world: World): Promise<void> {
  const karpenter = pass.deps.consolidation === 'karpenter';
  const memory = pass.deps.memory;
  if (karpenter) memory.karpenterProposals = memory.karpenterProposals.filter((at) => world.now - at < 60_000);
  const limit = karpenter ? KARPENTER_COMMANDS_PER_MINUTE - memory.karpenterProposals.length : COMMANDS_PER_PASS;
  const methods = methodsFor(pass.deps.consolidation);
  /** Nodes per NodePool this pass's proposals take from the budgets (proposed records are not disrupting yet). */
  const taken = new Map<string, number>();
  const gone = startedDeletions(world, pass.report.started);
  let current = world;
  for (let order = 0; order < limit; order++) {
    const candidates = current.claims.filter((c) => isLive(c) && c.state === 'Initialized' && !c.disruption);
    const ctx = methodContext(pass, current, order === 0 ? reportingSink(pass) : stopsOnly(pass), gone);
    for (const [pool, n] of taken) ctx.ledger.take(pool, n);
    const proposal = findCommand(methods, candidates, ctx);
    if (order === 0) await recordTurnedDown(pass, current);
    if (!proposal) return;
    const written = await proposeCommand(pass, current, proposal, order);
    if (!written) return;
    const byName = new Map(written.map((c) => [c.name, c]));
    current = { ...current, claims: current.claims.map((c) => byName.get(c.name) ?? c) };
    for (const c of written) taken.set(c.nodePool, (taken.get(c.nodePool) ?? 0) + 1);
    if (karpenter) memory.karpenterProposals.push(world.now);
  }
}

/** Writes the Events of what the pass's first search turned down. */
async function recordTurnedDown(pass: Pass, world: World): Promise<void> {
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
}

/**
 * Writes `proposal` onto its candidates' records as `Proposed`, the `order`-th of the pass.
 * @returns the records as written, or undefined when nothing was proposed (a no-op, or a candidate another writer moved
 *   on meanwhile: the proposal is withdrawn)
 */
async function proposeCommand(pass: Pass, world: World, proposal: MethodCommand<NodeClaim>, order: number): Promise<NodeClaim[] | undefined> {
  const decision = decisionOf(proposal);
  if (decision === 'noop') return undefined;
  const names = proposal.candidates.map((c) => c.name).sort();
  const command = `${proposal.reason.toLowerCase()}-${fnv1a(`${world.now}|${names.join(',')}`).toString(36)}`;
  const disruption: NodeClaimDisruption = {
    command,
    reason: proposal.reason,
    decision,
    phase: 'Proposed',
    replacements: [],
    candidates: names,
    message: proposal.message,
    proposedAt: new Date(world.now).toISOString(),
    ...(order > 0 ? { order } : {}),
    ...(proposal.method ? { method: proposal.method } : {}),
    ...(proposal.reason === 'Underutilized' && proposal.replacements.length > 1 ? { savings: proposal.savings } : {}),
  };
  const written: NodeClaim[] = [];
  for (const claim of proposal.candidates) {
    const saved = await writeIgnoringConflict(pass, { ...claim, disruption });
    if (!saved) {
      // Someone moved a candidate on: withdraw the proposal.
      for (const w of written) await writeIgnoringConflict(pass, withoutDisruption(w));
      return undefined;
    }
    written.push(saved);
  }
  pass.report.proposed.push({ command, reason: proposal.reason, decision, candidates: names });
  return written;
}
