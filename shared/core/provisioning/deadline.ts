/**
 * A solve's wall-clock budget. The core reads no clock itself (STYLE rule 1): the caller passes a monotonic clock in
 * {@link SolveOptions}, and without one the budget is never enforced.
 */
import { DEFAULT_SOLVE_TIMEOUT_MS, type SolveOptions } from './types.js';

/** A solve's deadline from {@link SolveOptions}. */
export class Deadline {
  private readonly at: number;
  private passed = false;

  constructor(private readonly options: SolveOptions) {
    this.at = options.now ? options.now() + (options.timeoutMs ?? DEFAULT_SOLVE_TIMEOUT_MS) : Number.POSITIVE_INFINITY;
  }

  /** True once the clock has reached the deadline (stays true). */
  expired(): boolean {
    if (!this.passed && this.options.now && this.options.now() >= this.at) this.passed = true;
    return this.passed;
  }
}
