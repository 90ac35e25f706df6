/**
 * Runs a {@link WorkerTask} in a child `node` process (`worker.ts` through tsx) with a wall-clock limit.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WorkerTask } from './worker.js';

/** The outcome of a task: its value, or why there is none. */
export type Outcome<T> =
  | {
      readonly ok: true;
      readonly value: T;
      /** Wall time of the child process, seconds. */
      readonly wallSeconds: number;
      /** The process was stopped at its limit; `value` holds what it had finished (e.g. fewer timed runs). */
      readonly limitReached?: boolean;
    }
  | { readonly ok: false; /** `timeout`, `error` or `skipped`. */ readonly reason: 'timeout' | 'error' | 'skipped'; readonly detail: string; readonly wallSeconds: number };

/** A task that did not run, and why. */
export function skipped<T>(detail: string): Outcome<T> {
  return { ok: false, reason: 'skipped', detail, wallSeconds: 0 };
}

const WORKER = fileURLToPath(new URL('./worker.ts', import.meta.url));

/**
 * Runs `task` in a fresh process; kills it (SIGKILL, that process only) after `limitSeconds`. A stopped task that
 * saved partial results (`<output>.partial`) still yields them, marked `limitReached`.
 * @param limitSeconds wall-clock limit, seconds
 */
export function inWorker<T>(task: WorkerTask, limitSeconds: number): Promise<Outcome<T>> {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-bench-worker-'));
  const out = join(dir, 'result.json');
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(task), out], {
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', POWERTOOLS_DEV: 'true' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      // Keep the start (the error message) and the end; drop the middle of a long stack.
      stderr += chunk.toString();
      if (stderr.length > 8000) stderr = `${stderr.slice(0, 3000)}\n…\n${stderr.slice(-3000)}`;
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, limitSeconds * 1000);
    child.on('close', (code) => {
      clearTimeout(timer);
      const wallSeconds = (performance.now() - started) / 1000;
      try {
        if (timedOut && existsSync(`${out}.partial`)) resolve({ ok: true, value: JSON.parse(readFileSync(`${out}.partial`, 'utf8')) as T, wallSeconds, limitReached: true });
        else if (timedOut) resolve({ ok: false, reason: 'timeout', detail: `stopped after ${limitSeconds} s`, wallSeconds });
        else if (code !== 0) resolve({ ok: false, reason: 'error', detail: errorLines(stderr), wallSeconds });
        else resolve({ ok: true, value: JSON.parse(readFileSync(out, 'utf8')) as T, wallSeconds });
      } catch (e) {
        resolve({ ok: false, reason: 'error', detail: String(e), wallSeconds });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

/** The lines of a child's stderr that name the error (not the stack frames), shortened. */
function errorLines(text: string): string {
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l.length > 0 && !l.startsWith('at ') && !l.startsWith('Node.js v') && l !== '…');
  return lines.slice(0, 4).join(' / ').slice(0, 600);
}

/**
 * {@link inWorker}, run once more after `pauseSeconds` when the first attempt fails with an error (not a time limit):
 * the working tree is shared, and a module caught half-edited fails the import of a whole task.
 */
export async function inWorkerWithRetry<T>(task: WorkerTask, limitSeconds: number, pauseSeconds = 15): Promise<Outcome<T>> {
  const first = await inWorker<T>(task, limitSeconds);
  if (first.ok || first.reason !== 'error') return first;
  await new Promise((resolve) => setTimeout(resolve, pauseSeconds * 1000));
  return inWorker<T>(task, limitSeconds);
}
