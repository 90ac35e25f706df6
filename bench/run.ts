/**
 * The benchmark suite: `npm run bench` (full) or `npm run bench -- --quick` (fewer sizes and repetitions, for
 * development). Runs B1 (diverse-mix solve time), B2 (plain pods per second, peak memory), B3 (fleet cost against
 * the LP bound, the exact optimum and a Karpenter-like FFD baseline), B4 (pending → CreateFleet through the
 * simulation, with the provisioner's measured compute and cold start), B5 (fleet cost over time through the
 * simulation, against the pattern LP bound), B6 (simulation speed on a 2,000-node, 20,000-pod snapshot) and B7 (Lambda bundle sizes, cold import and first-invocation time),
 * each case in a process of its own with a time limit, and writes
 * BENCHMARKS.md at the repository root. Speed goals live here, never in timed unit tests.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { b5CaseName, type B5Case } from './b5-cases.js';
import type { B6Result } from './b6.js';
import { b6CaseName, type B6Case } from './b6-cases.js';
import type { ExactRow } from './cost.js';
import type { CostOverTime } from './cost-over-time.js';
import { COST_MIXES } from './inputs.js';
import type { BundleResult } from './lambdas.js';
import type { LatencyResult } from './latency.js';
import { renderReport, type BenchResults, type TraceCostRow } from './report.js';
import type { SolveTimeResult } from './solve-time.js';
import { inWorkerWithRetry as inWorker, skipped, type Outcome } from './spawn.js';
import { machineInfo } from './stats.js';
import { ROOT } from './worker.js';

/** How much the suite does. */
export interface SuiteSettings {
  readonly quick: boolean;
  /** B1 sizes, pods. */
  readonly diverseSizes: readonly number[];
  readonly maxRuns: number;
  readonly minRuns: number;
  /** After `minRuns`, stop repeating once the timed solves took this long, seconds. */
  readonly budgetSeconds: number;
  /** Wall-clock limit of one solve-time case (process), seconds. */
  readonly solveLimitSeconds: number;
  /** B2 size, pods. */
  readonly plainPods: number;
  /** B3 synthetic case size, pods. */
  readonly costPods: number;
  /** B3 exact-optimum case sizes, pods. */
  readonly exactSizes: readonly number[];
  /** HiGHS time limit of each MIP, seconds. */
  readonly mipTimeLimitSeconds: number;
  /** B4 single-pod seeds. */
  readonly singleSeeds: readonly number[];
  /** B4 burst size, pods. */
  readonly burstReplicas: number;
  /** Wall-clock limit of the burst simulation, seconds. */
  readonly burstLimitSeconds: number;
  /** B7 cold imports per bundle. */
  readonly lambdaImports: number;
  /** B5 cases, each one simulation. */
  readonly b5Cases: readonly B5Case[];
  /** B5 sample interval, virtual seconds. */
  readonly b5EverySeconds: number;
  /** Wall-clock limit of one B5 case, seconds. */
  readonly b5LimitSeconds: number;
  /** B6 cases, each one simulation of the generated snapshot (`b6-cases.ts`). */
  readonly b6Cases: readonly B6Case[];
  /** Wall-clock limit of one B6 case, seconds. */
  readonly b6LimitSeconds: number;
}

/** The full suite's settings, or the quick ones. */
export function suiteSettings(quick: boolean): SuiteSettings {
  return quick
    ? { quick, diverseSizes: [1000, 5000], maxRuns: 2, minRuns: 1, budgetSeconds: 5, solveLimitSeconds: 60, plainPods: 10_000, costPods: 300, exactSizes: [20], mipTimeLimitSeconds: 10, singleSeeds: [1], burstReplicas: 1000, burstLimitSeconds: 120, lambdaImports: 2, b5Cases: [{ kind: 'burst', pods: 2000, sized: true }], b5EverySeconds: 60, b5LimitSeconds: 600, b6Cases: [{ kind: 'idle', hours: 1 }], b6LimitSeconds: 600 }
    : {
        quick,
        diverseSizes: [1000, 5000, 10_000, 20_000],
        maxRuns: 5,
        minRuns: 3,
        budgetSeconds: 20,
        solveLimitSeconds: 240,
        plainPods: 50_000,
        costPods: 1000,
        exactSizes: [20, 40, 60],
        mipTimeLimitSeconds: 120,
        singleSeeds: [1, 2, 3],
        burstReplicas: 10_000,
        burstLimitSeconds: 600,
        lambdaImports: 5,
        b5Cases: [
          { kind: 'burst', pods: 2000, sized: true },
          { kind: 'burst', pods: 2000, sized: false },
          { kind: 'burst', pods: 10_000, sized: true },
          { kind: 'burst', pods: 10_000, sized: false },
          { kind: 'diurnal', meanPods: 2000 },
          { kind: 'trace' },
          { kind: 'trace', gpuUnderutilized: true },
        ],
        b5EverySeconds: 60,
        b5LimitSeconds: 3600,
        // The 1-hour idle run is the reference of the 24 h ÷ 1 h ratio.
        b6Cases: [
          { kind: 'idle', hours: 1 },
          { kind: 'idle', hours: 24 },
          { kind: 'diurnal', hours: 24 },
        ],
        b6LimitSeconds: 1800,
      };
}

const log = (message: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

function describe(o: Outcome<unknown>): string {
  return o.ok ? `done in ${o.wallSeconds.toFixed(1)} s` : `${o.reason}: ${o.detail}`;
}

/** Runs the suite and writes BENCHMARKS.md; returns the results. */
export async function runSuite(settings: SuiteSettings): Promise<BenchResults> {
  const started = performance.now();
  const machine = machineInfo();
  const s = settings;

  log('B7 Lambda bundles');
  const b7 = await inWorker<readonly BundleResult[]>({ kind: 'lambdas', imports: s.lambdaImports }, 600);
  log(`B7 ${describe(b7)}`);

  const b1: { pods: number; outcome: Outcome<SolveTimeResult> }[] = [];
  let stop: string | undefined;
  for (const pods of s.diverseSizes) {
    if (stop) {
      b1.push({ pods, outcome: skipped(stop) });
      continue;
    }
    log(`B1 diverse mix, ${pods} pods`);
    const outcome = await inWorker<SolveTimeResult>({ kind: 'solve-time', task: { mix: 'diverse', pods, maxRuns: s.maxRuns, minRuns: s.minRuns, budgetSeconds: s.budgetSeconds } }, s.solveLimitSeconds);
    log(`B1 ${pods}: ${describe(outcome)}`);
    if (!outcome.ok) stop = `${pods.toLocaleString('en-US')} pods ${outcome.reason === 'timeout' ? 'timed out' : 'failed'}`;
    else if (outcome.limitReached) stop = `${pods.toLocaleString('en-US')} pods reached the ${s.solveLimitSeconds} s limit`;
    b1.push({ pods, outcome });
  }

  log(`B2 plain pods, ${s.plainPods}`);
  const b2 = await inWorker<SolveTimeResult>({ kind: 'solve-time', task: { mix: 'plain', pods: s.plainPods, maxRuns: s.minRuns, minRuns: s.minRuns, budgetSeconds: s.budgetSeconds } }, s.solveLimitSeconds);
  log(`B2 ${describe(b2)}`);

  const b3: { name: string; outcome: Outcome<TraceCostRow> }[] = [];
  for (const mix of [...COST_MIXES, 'trace' as const]) {
    log(`B3 ${mix}`);
    const outcome = await inWorker<TraceCostRow>({ kind: 'cost', mix, pods: s.costPods }, 300);
    log(`B3 ${mix}: ${describe(outcome)}`);
    b3.push({ name: mix, outcome });
  }
  {
    // The yardstick: greedy packing on a real c/m/r price list lands 16–19 % above the LP bound.
    const name = 'uniform, c/m/r';
    log(`B3 ${name}`);
    const outcome = await inWorker<TraceCostRow>({ kind: 'cost', mix: 'uniform', pods: s.costPods, cmr: true }, 300);
    log(`B3 ${name}: ${describe(outcome)}`);
    b3.push({ name, outcome });
  }
  const b3exact: { name: string; outcome: Outcome<ExactRow> }[] = [];
  for (const pods of s.exactSizes) {
    for (const mix of COST_MIXES) {
      log(`B3 exact ${mix} ${pods}`);
      const outcome = await inWorker<ExactRow>({ kind: 'exact', mix, pods, timeLimitSeconds: s.mipTimeLimitSeconds }, s.mipTimeLimitSeconds + 120);
      log(`B3 exact ${mix} ${pods}: ${describe(outcome)}`);
      b3exact.push({ name: `${mix}, ${pods} pods`, outcome });
    }
  }

  // B4 counts the provisioner's cold start as B7 measured it in this run (cold import + first invocation); a worker
  // measures it itself when B7 failed.
  const provisioner = b7.ok ? b7.value.find((b) => b.name === 'provisioner') : undefined;
  const coldStartMs = provisioner ? provisioner.importMedianMs + (provisioner.initMedianMs ?? 0) : undefined;
  const latencyTask = (replicas: number, seed: number) => ({ kind: 'latency' as const, replicas, seed, ...(coldStartMs !== undefined ? { coldStartMs } : {}) });
  const b4single: Outcome<LatencyResult>[] = [];
  for (const seed of s.singleSeeds) {
    log(`B4 one pod, seed ${seed}`);
    b4single.push(await inWorker<LatencyResult>(latencyTask(1, seed), 180));
  }
  // The quick suite's burst is already 1,000 pods.
  let b4thousand: Outcome<LatencyResult> | undefined;
  if (s.burstReplicas !== 1000) {
    log('B4 burst of 1000');
    b4thousand = await inWorker<LatencyResult>(latencyTask(1000, 1), s.burstLimitSeconds);
    log(`B4 burst of 1000: ${describe(b4thousand)}`);
  }
  log(`B4 burst of ${s.burstReplicas}`);
  const b4burst = await inWorker<LatencyResult>(latencyTask(s.burstReplicas, 1), s.burstLimitSeconds);
  log(`B4 burst: ${describe(b4burst)}`);

  const b5: { name: string; outcome: Outcome<CostOverTime>; karpenter: Outcome<CostOverTime> }[] = [];
  for (const c of s.b5Cases) {
    const name = b5CaseName(c);
    log(`B5 ${name}`);
    const outcome = await inWorker<CostOverTime>({ kind: 'cost-over-time', case: c, everySeconds: s.b5EverySeconds, consolidation: 'skiff' }, s.b5LimitSeconds);
    log(`B5 ${name}: ${describe(outcome)}`);
    // The same case with Karpenter's consolidation moves only, in the same suite run: "cheaper than Karpenter" is a
    // ratio measured side by side.
    const karpenter = await inWorker<CostOverTime>({ kind: 'cost-over-time', case: c, everySeconds: s.b5EverySeconds, consolidation: 'karpenter' }, s.b5LimitSeconds);
    log(`B5 ${name}, Karpenter-like: ${describe(karpenter)}`);
    b5.push({ name, outcome, karpenter });
  }

  const b6: { name: string; outcome: Outcome<B6Result> }[] = [];
  for (const c of s.b6Cases) {
    const name = b6CaseName(c);
    log(`B6 ${name}`);
    const outcome = await inWorker<B6Result>({ kind: 'b6', case: c }, s.b6LimitSeconds);
    log(`B6 ${name}: ${describe(outcome)}`);
    b6.push({ name, outcome });
  }

  const results: BenchResults = {
    machine,
    quick: s.quick,
    totalSeconds: (performance.now() - started) / 1000,
    settings: {
      solveRuns: `B1: up to ${s.maxRuns} timed solves, at least ${s.minRuns}, no new one after ${s.budgetSeconds} s; B2: ${s.minRuns}; limit ${s.solveLimitSeconds} s per size`,
      solveLimitSeconds: s.solveLimitSeconds,
      plainPods: s.plainPods,
      costPods: s.costPods,
      mipTimeLimitSeconds: s.mipTimeLimitSeconds,
      burstReplicas: s.burstReplicas,
      lambdaImports: s.lambdaImports,
    },
    b1,
    b2,
    b3,
    b3exact,
    b4single,
    ...(b4thousand ? { b4thousand } : {}),
    b4burst,
    b5,
    b6,
    b7,
  };
  writeFileSync(join(ROOT, 'BENCHMARKS.md'), renderReport(results));
  log(`wrote BENCHMARKS.md in ${results.totalSeconds.toFixed(0)} s`);
  return results;
}

await runSuite(suiteSettings(process.argv.includes('--quick')));
