/**
 * Batches relay events the way Karpenter batches pending pods (`BATCH_IDLE_DURATION` 1 s, `BATCH_MAX_DURATION` 10 s;
 * docs/karpenter-semantics.md#batching): the window opens at the first event and closes when no event arrived for `idleMs`, or
 * `maxMs` after it opened, whichever comes first. Events with the same key (the object's uid) coalesce within a
 * window: the latest one replaces the earlier one in place, so a batch never carries two versions of one object.
 */
import type { Timers } from './timers.js';

/** Options of {@link EventBatcher}. Durations in ms. */
export interface EventBatcherOptions<T> {
  /** Close the window after this long without an event. @default 1000 */
  readonly idleMs?: number;
  /** Close the window this long after it opened, however busy. @default 10000 */
  readonly maxMs?: number;
  /** The coalescing key, e.g. `(e) => e.uid`. */
  readonly key: (event: T) => string;
  /** Receives each closed window's events, in first-arrival order. */
  readonly flush: (events: T[]) => void;
  readonly timers: Timers;
  /** Epoch ms. */
  readonly now: () => number;
}

/** The idle/max batch window. */
export class EventBatcher<T> {
  readonly #options: EventBatcherOptions<T>;
  readonly #idleMs: number;
  readonly #maxMs: number;
  #events = new Map<string, T>();
  #openedAt: number | undefined;
  #timer: unknown;

  /** @throws {RangeError} when a duration is not positive or idle exceeds max */
  constructor(options: EventBatcherOptions<T>) {
    this.#idleMs = options.idleMs ?? 1000;
    this.#maxMs = options.maxMs ?? 10_000;
    if (!(this.#idleMs > 0) || !(this.#maxMs >= this.#idleMs)) throw new RangeError(`batch durations must satisfy 0 < idle (${this.#idleMs} ms) <= max (${this.#maxMs} ms)`);
    this.#options = options;
  }

  /** Events waiting for the window to close. */
  get size(): number {
    return this.#events.size;
  }

  /** Adds an event, opening a window or extending the current one (up to its maximum). */
  add(event: T): void {
    const key = this.#options.key(event);
    this.#events.delete(key); // re-inserted below: the latest version, at the position of the key's newest arrival
    this.#events.set(key, event);
    const now = this.#options.now();
    this.#openedAt ??= now;
    const due = Math.min(now + this.#idleMs, this.#openedAt + this.#maxMs);
    if (this.#timer !== undefined) this.#options.timers.clearTimeout(this.#timer);
    this.#timer = this.#options.timers.setTimeout(() => this.flush(), Math.max(0, due - now));
  }

  /** Closes the window now and hands its events to `flush` (nothing when empty). */
  flush(): void {
    if (this.#timer !== undefined) this.#options.timers.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#openedAt = undefined;
    if (this.#events.size === 0) return;
    const events = [...this.#events.values()];
    this.#events = new Map();
    this.#options.flush(events);
  }
}
