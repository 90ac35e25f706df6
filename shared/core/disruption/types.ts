/**
 * The shapes every disruption method shares (Karpenter core `pkg/controllers/disruption/types.go`): a method looks at
 * candidates and returns a command or nothing; a command names the candidates it disrupts, the NodeClaims it launches
 * first, and what it saves. Whether a command deletes or replaces follows from those counts alone ({@link decisionOf},
 * Karpenter's `Command.Decision()`).
 *
 * The methods themselves (emptiness, drift, multi-node and single-node consolidation) live with the disruption
 * controller (`shared/controllers/disruption/methods/`): they read the cluster the controller read; the simulation
 * they run (`consolidation.ts`) is here.
 */
import type { NodeClaimPlan } from '../provisioning/types.js';

/** The reasons a voluntary disruption method disrupts for (Karpenter's `v1.DisruptionReason` of each method). */
export type MethodReason = 'Empty' | 'Drifted' | 'Underutilized';

/** What a command does (Karpenter `Decision`: `no-op`, `delete`, `replace`). */
export type Decision = 'noop' | 'delete' | 'replace';

/**
 * A set of nodes to disrupt together (Karpenter `disruption.Command`).
 * @typeParam C how a candidate is named: a NodeClaim record in the controller, a `ConsolidationCandidate` in the
 *   consolidation simulation
 */
export interface Command<C> {
  /** The nodes the command disrupts, all of them or none. */
  readonly candidates: readonly C[];
  /**
   * The NodeClaims launched (and initialized) before the candidates drain; empty for a delete. Consolidation plans at
   * most one today (`consolidation.ts`); drift as many as its pods need.
   */
  readonly replacements: readonly NodeClaimPlan[];
  /**
   * What the command saves, USD per hour: the candidates' price minus the cheapest option of the replacement for
   * consolidation (Karpenter `EstimatedSavings`), the candidates' price for a delete; 0 where a method does not
   * weigh price (drift).
   */
  readonly savings: number;
}

/** A command a method proposes: the command, the reason it disrupts for, and why in words (the record's message). */
export interface MethodCommand<C> extends Command<C> {
  readonly reason: MethodReason;
  /** Why, in words: the record's `disruption.message` and the events' text. */
  readonly message: string;
  /**
   * The name of the method that found it ({@link DisruptionMethod.name}, e.g. `repack-consolidation`): set by the search
   * that runs the method list (`controllers/disruption/propose.ts findCommand`), kept on the record as
   * `disruption.method`. Absent from a command a method returns itself.
   */
  readonly method?: string;
}

/**
 * A disruption method (Karpenter `disruption.Method`), run from one ordered list: the first that finds a command
 * wins the pass.
 * @typeParam C how a candidate is named
 * @typeParam Ctx what the method reads besides its candidates (the world, budgets, where to report what it turned
 *   down)
 */
export interface DisruptionMethod<C, Ctx> {
  /** The method's name (`emptiness`, `drift`, `multi-node-consolidation`, `single-node-consolidation`). */
  readonly name: string;
  /** The reason its commands disrupt for. */
  readonly reason: MethodReason;
  /**
   * Searches `candidates` (every undisrupted, initialized NodeClaim) for one command (Karpenter `ComputeCommands`).
   * @returns the command, or undefined when the method finds nothing to do
   */
  computeCommand(candidates: readonly C[], ctx: Ctx): MethodCommand<C> | undefined;
  /**
   * Re-evaluates exactly `candidates`, the candidates of a command this method proposed earlier (Karpenter's
   * validators, `validation.go`): the command they make now, or undefined. Reports nothing it turns down.
   */
  validateCommand(candidates: readonly C[], ctx: Ctx): MethodCommand<C> | undefined;
}

/**
 * Whether a command replaces, deletes or does nothing, from its counts alone (Karpenter `Command.Decision()`):
 * candidates and replacements → `replace`; candidates only → `delete`; no candidates → `noop`.
 */
export function decisionOf(command: Command<unknown>): Decision {
  if (command.candidates.length > 0 && command.replacements.length > 0) return 'replace';
  if (command.candidates.length > 0) return 'delete';
  return 'noop';
}
