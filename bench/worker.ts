/**
 * Runs one benchmark task in a process of its own, so that each timing starts from a clean heap, peak memory is the
 * task's own, and the suite can stop a task that runs too long. Usage (from `run.ts`):
 * `node --import tsx bench/worker.ts '<task JSON>' <output file>`; the result is written to the output file as JSON.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { writeB5Case, type B5Case } from './b5-cases.js';
import { measureB6 } from './b6.js';
import type { B6Case } from './b6-cases.js';
import { costRow, exactRow } from './cost.js';
import { costOverTime } from './cost-over-time.js';
import type { ConsolidationSetting } from '../shared/controllers/disruption/deps.js';
import { costMix, catalogueInstanceTypes, catalogueTemplate, type CostMix } from './inputs.js';
import { measureLambdas } from './lambdas.js';
import { measureLatency } from './latency.js';
import { timeSolve, type SolveTimeTask } from './solve-time.js';
import { traceSnapshot } from './trace-snapshot.js';

/** A task the worker runs. */
export type WorkerTask =
  | { readonly kind: 'solve-time'; readonly task: SolveTimeTask }
  | { readonly kind: 'cost'; readonly mix: CostMix | 'trace'; readonly pods: number; readonly cmr?: boolean }
  | { readonly kind: 'exact'; readonly mix: CostMix; readonly pods: number; readonly timeLimitSeconds: number }
  | {
      readonly kind: 'latency';
      readonly replicas: number;
      readonly seed: number;
      /** The provisioner's cold start (B7's cold import + first invocation), ms; measured here when absent. */
      readonly coldStartMs?: number;
    }
  | { readonly kind: 'lambdas'; readonly imports: number }
  | { readonly kind: 'cost-over-time'; readonly case: B5Case; readonly everySeconds: number; readonly consolidation: ConsolidationSetting }
  | { readonly kind: 'b6'; readonly case: B6Case };

/** The provisioner's cold start measured as B7 measures it (median of 3 cold imports + first invocations), ms. */
async function provisionerColdStartMs(): Promise<number> {
  const [p] = await measureLambdas(ROOT, 3, ['provisioner']);
  if (!p) throw new Error('no provisioner entry (functions/provisioner/index.ts)');
  return p.importMedianMs + (p.initMedianMs ?? 0);
}

/** The repository root. */
export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Runs a task in this process.
 * @param save called with partial results worth keeping if the process is stopped (solve times so far)
 */
export async function runTask(task: WorkerTask, save: (partial: unknown) => void = () => {}): Promise<unknown> {
  switch (task.kind) {
    case 'solve-time':
      return timeSolve(task.task, save);
    case 'cost': {
      if (task.mix === 'trace') {
        const snapshot = await traceSnapshot(ROOT);
        const { plans: _plans, ...row } = await costRow({ name: 'trace', pods: snapshot.pods, templates: snapshot.templates });
        return { ...row, atSeconds: snapshot.atSeconds, nodePools: snapshot.templates.map((t) => t.name) };
      }
      const template = catalogueTemplate(await catalogueInstanceTypes(), 'on-demand', task.cmr === true);
      const { plans: _plans, ...row } = await costRow({ name: task.mix, pods: costMix(task.mix, task.pods), templates: [template] });
      return row;
    }
    case 'exact': {
      const template = catalogueTemplate(await catalogueInstanceTypes(), 'on-demand');
      return exactRow({ name: `${task.mix}-${task.pods}`, pods: costMix(task.mix, task.pods, 5), templates: [template] }, task.timeLimitSeconds);
    }
    case 'latency': {
      const r = await measureLatency(task.replicas, task.seed, task.coldStartMs ?? (await provisionerColdStartMs()));
      return { ...r, latencies: [] };
    }
    case 'lambdas':
      return measureLambdas(ROOT, task.imports);
    case 'cost-over-time': {
      const path = writeB5Case(task.case, ROOT);
      const { samples, ...summary } = await costOverTime(path, { everyMs: task.everySeconds * 1000, consolidation: task.consolidation });
      // Keep at most about 300 evenly spaced samples of the series for the report.
      const stride = Math.max(1, Math.ceil(samples.length / 300));
      return { ...summary, samples: samples.filter((_, i) => i % stride === 0) };
    }
    case 'b6':
      return measureB6(task.case);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [json, out] = process.argv.slice(2);
  if (!json || !out) throw new Error('usage: worker.ts <task JSON> <output file>');
  const value = await runTask(JSON.parse(json) as WorkerTask, (partial) => writeFileSync(`${out}.partial`, JSON.stringify(partial)));
  writeFileSync(out, JSON.stringify(value));
}
