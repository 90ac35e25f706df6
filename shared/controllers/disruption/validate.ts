/**
 * Validating a proposal (Karpenter core `pkg/controllers/disruption/validation.go`): at least
 * {@link VALIDATION_DELAY_MS} after it was computed, the methods are run again on exactly the command's candidates,
 * as if undisrupted. The command stands when its own method finds it again — the same reason, the same decision, all
 * of its candidates — and no method before it in the list claims them first (the order a search would take them in).
 * A command that stands starts (`orchestrate.ts`); one that does not is dropped, its records written back without it.
 */
import { isLive, type NodeClaim } from '../../core/api/nodeclaim.js';
import { simulateConsolidation } from '../../core/disruption/consolidation.js';
import { decisionOf, type MethodCommand } from '../../core/disruption/types.js';
import type { NodeClaimPlan } from '../../core/provisioning/types.js';
import { methodsFor } from './methods.js';
import { DISCARD, type ControllerMethod, type MethodContext } from './methods/context.js';
import { consolidationContext, toCandidate } from './methods/consolidation-candidates.js';
import { reject, startCommand } from './orchestrate.js';
import { withoutDisruption, type Pass } from './pass.js';
import { methodContext } from './propose.js';
import type { World } from './world.js';

/** Karpenter's `commandValidationDelay`: a command is re-validated this long after it was computed. */
export const VALIDATION_DELAY_MS = 15 * 1000;

/**
 * The command `candidates` make now: each method's {@link ControllerMethod.validateCommand} in list order, the first
 * that finds one. Nothing is reported (give `ctx` a discarding sink).
 */
export function validateCommand(methods: readonly ControllerMethod[], candidates: readonly NodeClaim[], ctx: MethodContext): MethodCommand<NodeClaim> | undefined {
  for (const method of methods) {
    const command = method.validateCommand(candidates, ctx);
    if (command) return command;
  }
  return undefined;
}

/**
 * A proposal at least {@link VALIDATION_DELAY_MS} old: still valid → start it; else drop it (its records written back
 * without the disruption).
 * @param candidates the records that carry `command`
 * @throws whatever the ports throw for failures other than conflicts
 */
export async function validateProposal(pass: Pass, world: World, command: string, candidates: readonly NodeClaim[]): Promise<void> {
  const d = candidates[0]!.disruption!;
  const all = d.candidates.map((name) => world.claims.find((c) => c.name === name));
  if (all.some((c) => !c || !isLive(c) || c.disruption?.command !== command)) {
    await reject(pass, world, command, candidates, 'a candidate changed since the proposal', false);
    return;
  }
  // Re-run the methods on exactly these candidates, as if undisrupted.
  const fresh = all.map((c) => withoutDisruption(c!));
  const view: World = { ...world, claims: world.claims.map((c) => fresh.find((f) => f.name === c.name) ?? c) };
  const again = validateCommand(methodsFor(pass.deps.consolidation), fresh, methodContext(pass, view, DISCARD));
  if (!again || again.reason !== d.reason || decisionOf(again) !== d.decision || again.candidates.length !== fresh.length) {
    await reject(pass, world, command, candidates, `re-validation after ${VALIDATION_DELAY_MS / 1000}s no longer finds it (${d.reason}, ${d.decision})`, false);
    return;
  }
  // A repacking (two or more replacements, `core/disruption/repack.ts`) stands only when it still saves at least what
  // was proposed: a plan that got worse in 15 s is dropped and searched for afresh next pass.
  if (d.savings !== undefined && again.savings < d.savings - 1e-9) {
    await reject(pass, world, command, candidates, `re-validation after ${VALIDATION_DELAY_MS / 1000}s finds a saving of $${again.savings.toFixed(4)}/h, less than the $${d.savings.toFixed(4)}/h proposed`, false);
    return;
  }
  let replacements: readonly NodeClaimPlan[] = [];
  if (d.decision === 'replace') {
    // Drift planned its replacements from exactly these candidates in this world, and so did a repacking (two or more
    // replacements); Karpenter's consolidation's one replacement is simulated once more from the candidates in the
    // record's order (by name).
    replacements = d.reason === 'Drifted' || again.replacements.length > 1 ? again.replacements : consolidationReplacements(pass, view, fresh);
    if (replacements.length === 0) {
      await reject(pass, world, command, candidates, 'no replacement could be planned any more', false);
      return;
    }
  }
  await startCommand(
    pass,
    world,
    d,
    all.map((c) => c!),
    replacements,
  );
}

/** The replacement of a consolidation of exactly `candidates`, in their order, or none when it would not replace. */
function consolidationReplacements(pass: Pass, view: World, candidates: readonly NodeClaim[]): readonly NodeClaimPlan[] {
  const decision = simulateConsolidation(
    candidates.map((c) => toCandidate(view, c)!),
    consolidationContext(view, pass.deps.spotToSpotConsolidation),
    candidates.length === 1,
  );
  return decision.kind === 'replace' ? decision.replacements : [];
}
