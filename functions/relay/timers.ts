/** Timers and sleeping, injectable so the relay's tests drive time instead of waiting for it. */

/** `setTimeout`/`clearTimeout`. */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Node's timers. Handles are unref'd: a pending retry or batch window never keeps a stopping process alive. */
export const nodeTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * Waits `ms` on `timers`, or until `signal` aborts (then resolves early; the caller checks the signal).
 * @param ms milliseconds
 */
export function sleep(timers: Timers, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      timers.clearTimeout(handle);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const handle = timers.setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Exponential backoff with full jitter (AWS Architecture Blog, "Exponential Backoff and Jitter"): a uniform delay in
 * `[0, min(capMs, baseMs × 2^(attempt−1)))`.
 * @param attempt 1 for the delay after the first failure
 * @param random a number in [0, 1)
 */
export function backoffMs(attempt: number, baseMs: number, capMs: number, random: number): number {
  return Math.floor(random * Math.min(capMs, baseMs * 2 ** Math.min(attempt - 1, 30)));
}
