/**
 * The search budget of single-node consolidation: how many candidates one pass simulates, and where the next pass
 * resumes when a pass stops before the end of the list.
 *
 * Karpenter bounds the same search by time (core `pkg/controllers/disruption/singlenodeconsolidation.go`:
 * `SingleNodeConsolidationTimeoutDuration`, 3 minutes; on a timeout it abandons the search, counts
 * `karpenter_voluntary_disruption_consolidation_timeouts_total` and tries the NodePools it did not reach first next
 * time). A Skiff pass is one Lambda invocation a minute, and each simulation solves the candidate's pods against every
 * other node, so trying every candidate makes a pass quadratic in the fleet size (p99 13 s at 2,000 nodes).
 *
 * Skiff deliberately differs: the budget is a number of simulations, {@link SINGLE_NODE_SEARCH_CANDIDATES}, not wall
 * time, so a pass does the same thing however loaded the machine is and a simulation stays reproducible. A pass
 * that stops on the budget remembers the last candidate it simulated (`DisruptionMemory.singleNodeResumeAfter`); the
 * next pass starts with the candidates after it in the same order (cheapest to disrupt first) and wraps around to the
 * ones before it, so every candidate is simulated within ⌈candidates / budget⌉ passes. The stop is reported
 * (`DisruptionReport.searchStopped`) and the pass does not record the "consolidated" state (`consolidated.ts`), so
 * the next pass searches on — until passes over the same world (the same fingerprint) have simulated every candidate
 * between them, which counts as one search that found nothing (`disrupt.ts`). A cold Lambda starts from the head of
 * the list.
 *
 * Multi-node consolidation needs no budget of its own: it looks at the first 100 candidates only
 * (`MAX_MULTI_NODE_CANDIDATES`, Karpenter's cap) and binary-searches their prefixes, at most ⌈log2 100⌉ = 7
 * simulations.
 */
import type { MethodContext } from './methods/context.js';

/**
 * The most candidates single-node consolidation simulates in one pass: 100, Karpenter's multi-node candidate cap
 * (core `multinodeconsolidation.go`: `maxParallel`, clamped to 100). One simulation costs about linear in the fleet
 * (the pods are tried against every other node), so a pass's search is linear too instead of quadratic.
 */
export const SINGLE_NODE_SEARCH_CANDIDATES = 100;

/**
 * The candidates one single-node search simulates, in order: those after the one the previous pass stopped at
 * (`ctx.memory.singleNodeResumeAfter`, by name; from the head when it is not among them), then the ones before it,
 * at most `limit`.
 * @param candidates cheapest to disrupt first
 */
export function singleNodeSearchWindow<T extends { readonly claim: { readonly name: string } }>(candidates: readonly T[], ctx: MethodContext, limit = SINGLE_NODE_SEARCH_CANDIDATES): readonly T[] {
  const after = ctx.memory.singleNodeResumeAfter;
  const at = after === undefined ? -1 : candidates.findIndex((c) => c.claim.name === after);
  const rotated = at < 0 ? candidates : [...candidates.slice(at + 1), ...candidates.slice(0, at + 1)];
  return rotated.length > limit ? rotated.slice(0, limit) : rotated;
}

/**
 * Records how a single-node search over `window` (from {@link singleNodeSearchWindow}) ended. Found a command: the
 * next search starts where this one did (the command's candidate has left the list). Found nothing over every
 * candidate: the next one starts from the head. Found nothing and left candidates out: the next one resumes after the
 * last candidate simulated, and the stop is reported on the sink.
 * @param total how many candidates there were
 * @param found whether the search found a command
 */
export function noteSingleNodeSearch(window: readonly { readonly claim: { readonly name: string } }[], total: number, found: boolean, ctx: MethodContext): void {
  if (found) return;
  if (window.length >= total) {
    ctx.memory.singleNodeResumeAfter = undefined;
    return;
  }
  ctx.memory.singleNodeResumeAfter = window[window.length - 1]!.claim.name;
  ctx.sink.searchStopped?.('single-node-consolidation', window.length, total);
}
