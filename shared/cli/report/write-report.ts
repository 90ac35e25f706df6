/**
 * Writes the HTML report of a simulation run (`skiff simulate --report <file>`): the Result's charts and tables in
 * one self-contained file (see `html.ts`).
 */
import { statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, sep } from 'node:path';
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

/**
 * Why a report could not be written to `path`, checked before a run so that a mistyped `--report` fails at once
 * rather than after the whole simulation: an empty path, a folder (or a path ending in `/`), or a file in a folder
 * that does not exist (the report does not create folders on the command line: a typo would leave a stray tree).
 * Whether the folder is writable is left to the write itself.
 * @param path the `--report` argument
 * @returns the problem in words, or undefined when the report can be written there
 * @example reportPathProblem('') // 'the report needs a file name, e.g. report.html'
 */
export function reportPathProblem(path: string): string | undefined {
  if (path === '') return 'the report needs a file name, e.g. report.html';
  const trimmed = path.replace(/[/\\]+$/, '');
  if (trimmed !== path) return `${path} ends with ${path.at(-1)}, which names a folder; name the file to write, e.g. ${trimmed}${sep}report.html`;
  const info = look(path);
  if (info === 'directory') return `${path} is a folder; name the file to write in it, e.g. ${path}${sep}report.html`;
  if (info === 'file') return undefined;
  if (info !== 'missing' && info !== 'ENOTDIR') return `cannot reach ${path} (${info})`;
  const folder = dirname(path);
  const parent = look(folder);
  if (parent === 'directory') return undefined;
  if (parent === 'file') return `${folder} is a file, not a folder, so no report can be written in it`;
  if (parent === 'missing' || parent === 'ENOTDIR') return `the folder ${folder} does not exist; create it first, or write the report elsewhere`;
  return `cannot reach the folder ${folder} (${parent})`;
}

/**
 * What is at `path`: `directory`, `file` (anything else that exists: a file, a device), `missing`, or the error code
 * that says why it cannot be told (`ENOTDIR` when a folder on the way is a file, `EACCES`).
 */
function look(path: string): string {
  try {
    const info = statSync(path, { throwIfNoEntry: false });
    return info === undefined ? 'missing' : info.isDirectory() ? 'directory' : 'file';
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? String(e);
  }
}
