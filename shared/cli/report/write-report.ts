/**
 * Writes the HTML report of a simulation run (`skiff simulate --report <file>`): the Result's charts and tables in
 * one self-contained file (see `html.ts`).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Result } from '../../sim/result-schema.js';
import type { LoadedScenario } from '../../sim/scenario-loader.js';
import { chartJsSource } from './chart-js-source.js';
import { renderReport } from './html.js';
import type { NodePoolBudgets } from './series.js';

/**
 * The scenario's NodePools with their disruption budgets, as the report shades them. These are the NodePools the
 * run started with; one changed by a timeline `apply` keeps its initial budgets in the report.
 */
export function nodePoolBudgets(scenario: Pick<LoadedScenario, 'nodePools'>): NodePoolBudgets[] {
  return scenario.nodePools.map((p) => ({ nodePool: p.metadata.name, budgets: p.spec.disruption.budgets }));
}

/**
 * Renders the report of a run and writes it to `path` (UTF-8), creating the folder if needed.
 * @param path where to write, e.g. `report.html`
 * @param run the loaded scenario (for its NodePools' budgets) and the run's Result
 * @throws {ChartJsNotFoundError} when the Chart.js bundle cannot be read; file system errors as they come
 * @example const run = await simulateScenario('examples/seed'); await writeReport('report.html', run);
 */
export async function writeReport(path: string, run: { readonly scenario: Pick<LoadedScenario, 'nodePools'>; readonly result: Result }): Promise<void> {
  const html = renderReport({ result: run.result, nodePools: nodePoolBudgets(run.scenario), chartJs: chartJsSource() });
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, html, 'utf8');
}
