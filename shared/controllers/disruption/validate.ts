/**
 * Validating a proposal (Karpenter core `pkg/controllers/disruption/validation.go`): at least
 * {@link VALIDATION_DELAY_MS} after it was computed, the methods are run again on exactly the command's candidates,
 * as if undisrupted. The command stands when its own method finds it again — the same reason, the same decision, all
 * of its candidates — and no method before it in the list claims them first (the order a search would take them in).
 * A command that stands starts (`orchestrate.ts`); one that does not is dropped, its records written back without it.
 *
 * A command whose start a dead pass left incomplete ({@link startIncomplete}) is validated the same way again before
 * it goes on, budget included ({@link resumeStart}). An Empty command goes on with those of its candidates that still
 * carry it and are still empty within the budget, as Karpenter's `EmptinessValidator` does ({@link validateEmpty}).
 */
import { isLive, type DisruptionBudgetUsed, type NodeClaim, type NodeClaimDisruption } from '../../core/api/nodeclaim.js';
import { simulateConsolidation } from '../../core/disruption/consolidation.js';
import { DISRUPTED_NO_SCHEDULE_TAINT } from '../../core/disruption/drainable.js';
import { decisionOf, type MethodCommand } from '../../core/disruption/types.js';
import type { NodeClaimPlan } from '../../core/provisioning/types.js';
import { nodeOf } from '../launch.js';
import { methodsFor } from './methods.js';
import { DISCARD, type ControllerMethod, type MethodContext } from './methods/context.js';
import { consolidationContext, toCandidate } from './methods/consolidation-candidates.js';
import { reject, startCommand, undisrupted } from './orchestrate.js';
import { VOLUNTARY_REASONS, isTainted, withoutDisruption, type Pass } from './pass.js';
import { methodContext } from './propose.js';
import type { World } from './world.js';
import { timestampMs } from '../../core/api/timestamp.js';

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
 * without the disruption, and any node a start that died midway had tainted un-tainted).
 * @param candidates the records that carry `command`
 * @throws whatever the ports throw for failures other than conflicts
 */
export async function validateProposal(pass: Pass, world: World, command: string, candidates: readonly NodeClaim[]): Promise<void> {
  const d = candidates[0]!.disruption!;
  if (d.reason === 'Empty') {
    await validateEmpty(pass, world, command, candidates, false);
    return;
  }
  const all = d.candidates.map((name) => world.claims.find((c) => c.name === name));
  if (all.some((c) => !c || !isLive(c) || c.disruption?.command !== command)) {
    await reject(pass, world, command, candidates, 'a candidate changed since the proposal', false);
    return;
  }
  const checked = revalidate(pass, world, d, all.map((c) => c!));
  if (typeof checked === 'string') {
    await reject(pass, world, command, candidates, checked, false);
    return;
  }
  await startCommand(
    pass,
    world,
    { ...d, budgets: checked.budgets },
    all.map((c) => c!),
    checked.replacements,
  );
}

/**
 * The order commands were proposed in: by `proposedAt`, then by their place in the pass that proposed them (`order`);
 * negative when `a` came first. Records without a disruption sort last.
 */
export function byProposal(a: Pick<NodeClaim, 'disruption'>, b: Pick<NodeClaim, 'disruption'>): number {
  if (!a.disruption || !b.disruption) return (a.disruption ? 0 : 1) - (b.disruption ? 0 : 1);
  return timestampMs(a.disruption.proposedAt) - timestampMs(b.disruption.proposedAt) || (a.disruption.order ?? 0) - (b.disruption.order ?? 0);
}

/**
 * Whether the start of this voluntary command (Empty, Underutilized, Drifted) was left incomplete by a pass that died
 * (or by records an earlier Skiff wrote, which recorded the start before tainting): some of its records started and
 * others are still proposed, or a started record's node — still there — lacks `karpenter.sh/disrupted`. Such a
 * command must not go on as it stands: its untainted nodes took pods meanwhile, and the budget it was validated
 * against may be spent.
 * @param candidates the live records that carry the command
 */
export function startIncomplete(world: World, candidates: readonly NodeClaim[]): boolean {
  const d = candidates[0]!.disruption!;
  if (!VOLUNTARY_REASONS.has(d.reason)) return false;
  const started = candidates.filter((c) => c.disruption!.phase !== 'Proposed');
  if (started.length === 0) return false;
  if (started.length < candidates.length) return true;
  return started.some((c) => {
    const node = nodeOf(c, world.nodes);
    return node !== undefined && !isTainted(node);
  });
}

/**
 * Resumes a command whose start was left incomplete ({@link startIncomplete}): it is validated again now — exactly as a
 * proposal is (`Empty`: still empty; `Underutilized`: the same consolidation still stands; `Drifted`: still drifted;
 * every candidate still within its NodePool's budget, counted as if the command had not started) — and then started
 * again (taint what is not tainted, record what is not recorded, launch what is not launched: `startCommand` is safe to
 * repeat) or dropped: its records lose it (a `Deleting` one is `Initialized` again) and its nodes the taint.
 *
 * Karpenter keeps its orchestration queue in memory: a restart forgets every command and un-taints their candidates
 * (core `disruption/controller.go Reconcile`), and the methods compute afresh. Skiff keeps the command on the records,
 * so it re-validates the very command instead; a command dropped here is proposed again later if it still makes sense.
 * @param candidates the live records that carry `command`
 * @throws whatever the ports throw for failures other than conflicts
 */
export async function resumeStart(pass: Pass, world: World, command: string, candidates: readonly NodeClaim[]): Promise<void> {
  const d = (candidates.find((c) => c.disruption!.phase !== 'Proposed') ?? candidates[0]!).disruption!;
  if (d.reason === 'Empty') {
    await validateEmpty(pass, world, command, candidates, true);
    return;
  }
  const all = d.candidates.map((name) => world.claims.find((c) => c.name === name));
  if (all.some((c) => !c || !isLive(c) || c.disruption?.command !== command)) {
    await reject(pass, world, command, candidates, 'its start was interrupted and a candidate has changed since', true);
    return;
  }
  const checked = revalidate(pass, world, d, all.map((c) => c!));
  if (typeof checked === 'string') {
    await reject(pass, world, command, candidates, `its start was interrupted and ${checked}`, true);
    return;
  }
  if (d.replacements.length > 0 && checked.replacements.length !== d.replacements.length) {
    await reject(pass, world, command, candidates, `its start was interrupted and its ${d.replacements.length} replacement(s) cannot be planned the same way again`, true);
    return;
  }
  await startCommand(
    pass,
    world,
    { ...d, budgets: checked.budgets },
    all.map((c) => c!),
    checked.replacements,
  );
}

/**
 * Runs the methods again on exactly `records` (the command `d`'s candidates), as if the command had never been
 * proposed: records without it (`Initialized` again where it had moved them to `Deleting`) and their nodes without
 * `karpenter.sh/disrupted`, so neither the candidate checks nor the budget count the command against itself.
 * @returns the replacements to launch (none for a delete) and the budgets the validation counted, or why the command no
 *   longer stands
 */
function revalidate(pass: Pass, world: World, d: NodeClaimDisruption, records: readonly NodeClaim[]): Revalidated | string {
  const { fresh, view } = asIfUndisrupted(world, d, records);
  const ctx = methodContext(pass, view, DISCARD);
  const again = validateCommand(methodsFor(pass.deps.consolidation), fresh, ctx);
  if (!again || again.reason !== d.reason || decisionOf(again) !== d.decision || again.candidates.length !== fresh.length) {
    return `re-validation after ${VALIDATION_DELAY_MS / 1000}s no longer finds it (${d.reason}, ${d.decision})`;
  }
  // A repacking (two or more replacements, `core/disruption/repack.ts`) stands only when it still saves at least what
  // was proposed: a plan that got worse in 15 s is dropped and searched for afresh next pass.
  if (d.savings !== undefined && again.savings < d.savings - 1e-9) {
    return `re-validation after ${VALIDATION_DELAY_MS / 1000}s finds a saving of $${again.savings.toFixed(4)}/h, less than the $${d.savings.toFixed(4)}/h proposed`;
  }
  const budgets = budgetsUsed(ctx, d.reason, fresh);
  if (d.decision !== 'replace') return { replacements: [], budgets };
  // Drift planned its replacements from exactly these candidates in this world, and so did a repacking (two or more
  // replacements); Karpenter's consolidation's one replacement is simulated once more from the candidates in the
  // record's order (by name).
  const replacements = d.reason === 'Drifted' || again.replacements.length > 1 ? again.replacements : consolidationReplacements(pass, view, fresh);
  return replacements.length > 0 ? { replacements, budgets } : 'no replacement could be planned any more';
}

/** What a validation that stands found: the replacements to launch (none for a delete) and the budgets it counted. */
interface Revalidated {
  readonly replacements: readonly NodeClaimPlan[];
  /** Per NodePool of the candidates, the budget the validation let the command start under. */
  readonly budgets: Readonly<Record<string, DisruptionBudgetUsed>>;
}

/**
 * Per NodePool of `candidates`, the budget for `reason` the validation's ledger worked out (before the command's own
 * candidates were taken from it): what the command is recorded to have started under (`NodeClaimDisruption.budgets`).
 * Empty for a forceful reason, which budgets do not limit.
 */
function budgetsUsed(ctx: MethodContext, reason: string, candidates: readonly NodeClaim[]): Record<string, DisruptionBudgetUsed> {
  const out: Record<string, DisruptionBudgetUsed> = {};
  if (reason !== 'Empty' && reason !== 'Underutilized' && reason !== 'Drifted') return out;
  for (const c of candidates) {
    if (c.nodePool in out) continue;
    const used = ctx.ledger.budgetUsed(c.nodePool, reason);
    if (used) out[c.nodePool] = used;
  }
  return out;
}

/**
 * The world as it was when command `d` was searched for: `records` (its candidates) without it (`Initialized` again
 * where it had moved them to `Deleting`) and their nodes without `karpenter.sh/disrupted`, and the proposals made after
 * it not there yet — so neither the candidate checks nor the budget count the command against itself.
 */
function asIfUndisrupted(world: World, d: NodeClaimDisruption, records: readonly NodeClaim[]): { fresh: NodeClaim[]; view: World } {
  const fresh = records.map(undisrupted);
  const nodes = new Set(records.map((c) => nodeOf(c, world.nodes)?.name));
  const view: World = {
    ...world,
    claims: world.claims.map((c) => fresh.find((f) => f.name === c.name) ?? (c.disruption?.phase === 'Proposed' && byProposal({ disruption: d }, c) < 0 ? withoutDisruption(c) : c)),
    nodes: world.nodes.map((n) => (nodes.has(n.name) && isTainted(n) ? { ...n, taints: n.taints.filter((t) => t.key !== DISRUPTED_NO_SCHEDULE_TAINT.key) } : n)),
  };
  return { fresh, view };
}

/**
 * Validates an Empty command as Karpenter's `EmptinessValidator` does (core v1.14 `pkg/controllers/disruption/
 * validation.go`: `validateCandidates` keeps the candidates that are still candidates, not nominated and within the
 * budget, and the command goes on with those; it fails only when none is left): the command goes on with the subset of
 * its candidates that still carry it (a pass that died while proposing or starting it may have written only some of
 * them) and that emptiness finds again — still empty, still candidates, each within its NodePool's `Empty` budget
 * counted as if the command had not started. The others lose it (records written back, taint removed), and a command
 * with no candidate left is dropped. Its candidates are independent deletions, so a partial command is still the same
 * decision for each node; a crash can no longer make a whole Empty command fail validation, pass after pass (issue 21).
 * @param candidates the live records that carry `command`
 * @param started true when resuming a start a dead pass left incomplete (Events say `DisruptionBlocked`)
 * @throws whatever the ports throw for failures other than conflicts
 */
async function validateEmpty(pass: Pass, world: World, command: string, candidates: readonly NodeClaim[], started: boolean): Promise<void> {
  const d = (candidates.find((c) => c.disruption!.phase !== 'Proposed') ?? candidates[0]!).disruption!;
  // In the proposal's order (its candidates by name), those still carrying it.
  const carrying = [...candidates].sort((a, b) => a.name.localeCompare(b.name));
  const { fresh, view } = asIfUndisrupted(world, d, carrying);
  const ctx = methodContext(pass, view, DISCARD);
  const again = validateCommand(methodsFor(pass.deps.consolidation), fresh, ctx);
  const valid = again?.reason === 'Empty' ? new Set(again.candidates.map((c) => c.name)) : new Set<string>();
  const keep = carrying.filter((c) => valid.has(c.name));
  const drop = carrying.filter((c) => !valid.has(c.name));
  const why = `${started ? 'its start was interrupted and ' : ''}re-validation after ${VALIDATION_DELAY_MS / 1000}s no longer finds`;
  if (keep.length === 0) {
    await reject(pass, world, command, carrying, `${why} it (${d.reason}, ${d.decision})`, started);
    return;
  }
  if (drop.length > 0) await reject(pass, world, command, drop, `${why} ${drop.map((c) => c.name).join(', ')} empty within the budget; the command goes on without them`, started);
  const names = keep.map((c) => c.name);
  await startCommand(pass, world, { ...d, candidates: names, message: `${names.length === 1 ? 'node is' : `${names.length} nodes are`} empty`, budgets: budgetsUsed(ctx, 'Empty', keep) }, keep, []);
}

/** The replacement of a consolidation of exactly `candidates`, in their order, or none when it would not replace. */
function consolidationReplacements(pass: Pass, view: World, candidates: readonly NodeClaim[]): readonly NodeClaimPlan[] {
  const decision = simulateConsolidation(
    candidates.map((c) => toCandidate(view, c)!),
    consolidationContext(view, pass.deps.spotToSpotConsolidation, pass.deps.consolidation !== 'karpenter'),
    candidates.length === 1,
  );
  return decision.kind === 'replace' ? decision.replacements : [];
}
