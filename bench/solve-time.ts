/**
 * B1 and B2, solve time: `solve()` (the public API) on the diverse mix or on plain pods over the whole catalogue
 * (spot and on-demand, every zone), timed with `performance.now()` in a process of its own (see `worker.ts`).
 */
import { solve } from '../shared/core/provisioning/scheduler.js';
import { catalogueInstanceTypes, catalogueTemplate, diverseMix, plainMix } from './inputs.js';

/** What to time. */
export interface SolveTimeTask {
  readonly mix: 'diverse' | 'plain';
  /** Number of pods. */
  readonly pods: number;
  /** Most timed runs. */
  readonly maxRuns: number;
  /** Fewest timed runs before the time budget may stop the repetitions. */
  readonly minRuns: number;
  /** After `minRuns`, no new run starts once the timed runs took this long, seconds. */
  readonly budgetSeconds: number;
}

/** The timings of one task. */
export interface SolveTimeResult {
  readonly mix: 'diverse' | 'plain';
  readonly pods: number;
  /** Wall time of each timed solve, seconds. */
  readonly runs: readonly number[];
  readonly nodeClaims: number;
  readonly unschedulable: number;
  /** Resident set size before the first solve (inputs built, warm-up done), MiB. */
  readonly rssBeforeMiB: number;
  /** Peak resident set size of the process, MiB (`process.resourceUsage().maxRSS`). */
  readonly peakRssMiB: number;
}

/**
 * Builds the inputs, warms the solver up on 200 pods of the same mix, then times up to `maxRuns` solves.
 * @param onRun called with the figures so far after each timed solve (the worker saves them, so a case stopped at
 *   its time limit still reports the solves it finished)
 * @example await timeSolve({ mix: 'diverse', pods: 1000, maxRuns: 5, minRuns: 3, budgetSeconds: 20 });
 */
export async function timeSolve(task: SolveTimeTask, onRun: (partial: SolveTimeResult) => void = () => {}): Promise<SolveTimeResult> {
  const template = catalogueTemplate(await catalogueInstanceTypes(), 'spot-and-on-demand');
  const make = task.mix === 'diverse' ? diverseMix : plainMix;
  solve(make(200, 99), [template], []);
  const pods = make(task.pods);
  const rssBeforeMiB = process.memoryUsage().rss / 1024 / 1024;
  const runs: number[] = [];
  let nodeClaims = 0;
  let unschedulable = 0;
  const figures = (): SolveTimeResult => ({ mix: task.mix, pods: task.pods, runs: [...runs], nodeClaims, unschedulable, rssBeforeMiB, peakRssMiB: process.resourceUsage().maxRSS / 1024 });
  while (runs.length < task.maxRuns && (runs.length < task.minRuns || runs.reduce((a, b) => a + b, 0) < task.budgetSeconds)) {
    const t0 = performance.now();
    const result = solve(pods, [template], []);
    runs.push((performance.now() - t0) / 1000);
    nodeClaims = result.newNodeClaims.length;
    unschedulable = result.unschedulable.length;
    onRun(figures());
  }
  return figures();
}
