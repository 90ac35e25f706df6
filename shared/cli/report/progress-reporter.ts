/**
 * The progress bar of a long simulation (cli-progress): virtual time done over the scenario's duration, drawn on the
 * error stream of a terminal only, and only once the run has taken a couple of seconds of wall time — a quick run
 * prints nothing, and piped or `--json` output never sees it.
 */
import { Writable } from 'node:stream';
import cliProgress from 'cli-progress';

/** Wall time a run may take before the bar appears, ms. */
export const PROGRESS_DELAY_MS = 2_000;

/** Options of {@link createProgressReporter}. */
export interface ProgressReporterOptions {
  /**
   * Whether a bar may be drawn at all: true only when the stream is a terminal and the output is not machine-read
   * (`skiff simulate` passes `stderr.isTTY && !--json`).
   */
  readonly enabled: boolean;
  /** Writes terminal text (the bar and its escape sequences), e.g. to stderr. Never stdout. */
  readonly write: (text: string) => void;
  /** Terminal width in columns. @default 80 */
  readonly columns?: number;
  /** Wall time to wait before drawing, ms. @default {@link PROGRESS_DELAY_MS} */
  readonly delayMs?: number;
  /** Wall clock, ms (monotonic). @default performance.now */
  readonly now?: () => number;
}

/** Receives a run's progress; draws a bar when allowed (see {@link createProgressReporter}). */
export interface ProgressReporter {
  /**
   * Reports the fraction of the scenario's virtual duration simulated so far.
   * @param fraction 0–1 (clamped)
   */
  update(fraction: number): void;
  /** Removes the bar (if one was drawn) and restores the cursor. Idempotent; call it before writing anything else. */
  stop(): void;
  /** Whether a bar has been drawn. */
  readonly shown: boolean;
}

/** Steps of the bar: a fraction is shown in tenths of a percent. */
const STEPS = 1000;

/**
 * A progress reporter that draws nothing until `delayMs` of wall time has passed since it was created, then a
 * cli-progress bar (`simulating ████░░░░ 42% of virtual time | 5 s elapsed`) on `write`, redrawn at most every 100 ms and cleared on
 * {@link ProgressReporter.stop}. When `enabled` is false it never writes.
 * @example
 * const progress = createProgressReporter({ enabled: process.stderr.isTTY && !json, write: (t) => process.stderr.write(t) });
 * try { await simulateScenario(path, { onProgress: (f) => progress.update(f) }); } finally { progress.stop(); }
 */
export function createProgressReporter(options: ProgressReporterOptions): ProgressReporter {
  const now = options.now ?? (() => performance.now());
  const startedAt = now();
  const delayMs = options.delayMs ?? PROGRESS_DELAY_MS;
  let bar: cliProgress.SingleBar | undefined;
  let stopped = false;
  return {
    update(fraction: number): void {
      if (!options.enabled || stopped) return;
      const value = Math.round(Math.min(1, Math.max(0, Number.isFinite(fraction) ? fraction : 0)) * STEPS);
      const elapsedMs = now() - startedAt;
      const payload = { elapsed: `${Math.floor(elapsedMs / 1000)} s` };
      if (bar) {
        bar.update(value, payload);
        return;
      }
      if (elapsedMs < delayMs) return;
      bar = new cliProgress.SingleBar(
        {
          stream: terminalStream(options.write, options.columns ?? 80),
          format: 'simulating {bar} {percentage}% of virtual time | {elapsed} elapsed',
          // No SIGINT handler (it would keep Ctrl-C from ending the run) and so no hidden cursor to restore.
          hideCursor: false,
          gracefulExit: false,
          clearOnComplete: true,
          stopOnComplete: false,
          barsize: 30,
          fps: 10,
        },
        cliProgress.Presets.shades_classic,
      );
      bar.start(STEPS, value, payload);
    },
    stop(): void {
      if (stopped) return;
      stopped = true;
      bar?.stop();
    },
    get shown(): boolean {
      return bar !== undefined;
    },
  };
}

/** A writable stream that cli-progress takes for a terminal (`isTTY`, `columns`) and that forwards text to `write`. */
function terminalStream(write: (text: string) => void, columns: number): NodeJS.WritableStream {
  const stream = new Writable({
    decodeStrings: false,
    write(chunk: unknown, _encoding, callback) {
      write(typeof chunk === 'string' ? chunk : String(chunk));
      callback();
    },
  });
  return Object.assign(stream, { isTTY: true, columns });
}
