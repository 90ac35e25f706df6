/** Errors of the HTML report (`skiff simulate --report`). */
import { SkiffError } from '../../core/errors.js';

/** The installed Chart.js bundle could not be read, so no report can be written. */
export class ChartJsNotFoundError extends SkiffError {
  /**
   * @param path where the bundle was looked for
   * @param options the underlying error (e.g. `ENOENT`) as `cause`
   */
  constructor(
    readonly path: string,
    options?: { cause?: unknown },
  ) {
    super(`cannot read the Chart.js bundle at ${path} (is the chart.js package installed?)`, options);
  }
}

/** True when `e` is a {@link ChartJsNotFoundError}. */
export function isChartJsNotFoundError(e: unknown): e is ChartJsNotFoundError {
  return e instanceof ChartJsNotFoundError;
}
