/**
 * The Chart.js UMD bundle the HTML report inlines (so the page needs no network). Chart.js does not export the
 * bundle's path, so it is found beside the package's resolved entry point (`dist/chart.cjs` → `dist/chart.umd.min.js`).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ChartJsNotFoundError } from './errors.js';

/** The bundle's file name in `chart.js/dist/` (Chart.js 4). */
export const CHART_JS_UMD_FILE = 'chart.umd.min.js';

let cached: string | undefined;

/**
 * The source of the installed Chart.js UMD bundle (it defines `window.Chart`), read once per process.
 * @throws {ChartJsNotFoundError} when chart.js is not installed or its bundle is missing
 * @example const page = renderReport({ result, nodePools, chartJs: chartJsSource() });
 */
export function chartJsSource(): string {
  if (cached !== undefined) return cached;
  let path = CHART_JS_UMD_FILE;
  try {
    path = join(dirname(createRequire(import.meta.url).resolve('chart.js')), CHART_JS_UMD_FILE);
    cached = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ChartJsNotFoundError(path, { cause: e });
  }
  return cached;
}
