/**
 * The simulation's virtual time: a clock the ports read, and a discrete-event loop that advances it.
 * Events at the same instant run in the order they were scheduled.
 */
import type { Clock } from '../ports/clock.js';

interface Scheduled {
  readonly at: number;
  readonly seq: number;
  readonly label: string;
  readonly run: () => void | Promise<void>;
}

/** A virtual clock and event loop. Times are epoch ms (UTC). */
export class VirtualClock implements Clock {
  private current: number;
  private seq = 0;
  private readonly heap: Scheduled[] = [];

  constructor(startMs: number) {
    this.current = startMs;
  }

  /** The current virtual time, epoch ms. */
  now(): number {
    return this.current;
  }

  /**
   * Schedules `run` at `atMs` (clamped to now: the past is not reachable).
   * @param label for debugging
   */
  at(atMs: number, label: string, run: () => void | Promise<void>): void {
    this.push({ at: Math.max(atMs, this.current), seq: this.seq++, label, run });
  }

  /** Schedules `run` `delayMs` from now. */
  after(delayMs: number, label: string, run: () => void | Promise<void>): void {
    this.at(this.current + delayMs, label, run);
  }

  /** Runs events in time order until none is left before `untilMs`, then sets the clock to `untilMs`. */
  async runUntil(untilMs: number): Promise<void> {
    for (;;) {
      const next = this.heap[0];
      if (!next || next.at > untilMs) break;
      this.pop();
      this.current = next.at;
      await next.run();
    }
    this.current = Math.max(this.current, untilMs);
  }

  /** Number of events waiting. */
  get pending(): number {
    return this.heap.length;
  }

  private push(item: Scheduled): void {
    const h = this.heap;
    h.push(item);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (before(h[parent]!, h[i]!)) break;
      [h[parent], h[i]] = [h[i]!, h[parent]!];
      i = parent;
    }
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop()!;
    if (h.length === 0) return;
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let smallest = i;
      if (l < h.length && before(h[l]!, h[smallest]!)) smallest = l;
      if (r < h.length && before(h[r]!, h[smallest]!)) smallest = r;
      if (smallest === i) break;
      [h[smallest], h[i]] = [h[i]!, h[smallest]!];
      i = smallest;
    }
  }
}

function before(a: Scheduled, b: Scheduled): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
