/**
 * Step 4 of a pass, proposing: the first method of the ordered list that finds a command over the undisrupted,
 * initialized NodeClaims (Karpenter core `pkg/controllers/disruption/controller.go disrupt`), within each NodePool's
 * budget, written onto its candidates' records as `Proposed`; the next pass at least `VALIDATION_DELAY_MS` later
 * validates it (`validate.ts`). What the methods turned down is reported, with Karpenter's Events.
 */
import { isLive, type NodeClaim, type NodeClaimDisruption } from '../../core/api/nodeclaim.js';
import { decisionOf, type MethodCommand } from '../../core/disruption/types.js';
import { fnv1a } from '../../core/hash.js';
import { BudgetLedger } from './budget-ledger.js';
import { methodsFor } from './methods.js';
import type { ControllerMethod, MethodContext, MethodSink } from './methods/context.js';
import { recordBlocked, withoutDisruption, writeIgnoringConflict, type Pass } from './pass.js';
import type { World } from './world.js';

/**
 * A context for one search or one validation over `world`: a fresh budget ledger, the pass's settings and memory.
 * @param sink where the methods report what they turn down
 */
export function methodContext(pass: Pass, world: World, sink: MethodSink): MethodContext {
  return { world, ledger: new BudgetLedger(world, pass.deps.memory), region: pass.deps.region, spotToSpot: pass.deps.spotToSpotConsolidation, memory: pass.deps.memory, sink };
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

/** The first command a method of `methods` (in order) finds among `candidates`, or undefined. */
export function findCommand(methods: readonly ControllerMethod[], candidates: readonly NodeClaim[], ctx: MethodContext): MethodCommand<NodeClaim> | undefined {
  for (const method of methods) {
    const command = method.computeCommand(candidates, ctx);
    if (command) return command;
  }
  return undefined;
}

/**
 * Searches for one command with the methods of the consolidation setting (`methods.ts methodsFor`), writes the Events of what was turned down, and proposes
 * the command on its candidates' records (withdrawn when another writer moved a candidate on meanwhile).
 * @throws whatever the ports throw for failures other than conflicts
 */
export async function propose(pass: Pass, world: World): Promise<void> {
  const candidates = world.claims.filter((c) => isLive(c) && c.state === 'Initialized' && !c.disruption);
  const proposal = findCommand(methodsFor(pass.deps.consolidation), candidates, methodContext(pass, world, reportingSink(pass)));
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
  const decision = decisionOf(proposal);
  if (decision === 'noop') return;
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
    ...(proposal.reason === 'Underutilized' && proposal.replacements.length > 1 ? { savings: proposal.savings } : {}),
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
  pass.report.proposed.push({ command, reason: proposal.reason, decision, candidates: names });
}
