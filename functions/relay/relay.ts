/**
 * The relay: events from the cluster watch go through the batch window to the webhook poster, one post at a time.
 * While a post is being retried, later windows queue up in an outbox, coalesced by object uid (the latest version
 * wins), so memory stays bounded by the number of objects, not by the outage's length.
 *
 * Health, for the Deployment's probes:
 * - live (`/healthz`): false only when a watch has been failing for longer than `unhealthyAfterMs` (a restart may
 *   help: a new process gets fresh connections and credentials);
 * - ready (`/readyz`): true once both informers have listed, while they are healthy, the last webhook request (if
 *   any) succeeded, and the relay is not shutting down.
 * The report also carries the totals, among them the requests the webhook refused for good by HTTP status (a 400
 * means the relay and the webhook disagree on the format: a bug to report, which a restart would not heal).
 */
import type { PodEvent } from '../../shared/core/api/pod-event.js';
import type { Log } from '../../shared/lambda/log.js';
import { EventBatcher } from './batcher.js';
import type { PostOutcome } from './poster.js';
import type { Timers } from './timers.js';

/** One informer's health, as the cluster watch reports it. */
export interface SourceStatus {
  readonly resource: string;
  readonly synced: boolean;
  readonly healthy: boolean;
  /** Epoch ms. */
  readonly unhealthySinceMs?: number;
  readonly lastError?: string;
}

/** Where events come from (the Kubernetes adapter's `ClusterWatch`). */
export interface EventSource {
  onEvent(listener: (event: PodEvent) => void): void;
  start(): Promise<void>;
  stop(): Promise<void>;
  status(): readonly SourceStatus[];
}

/** Where batches go (`WebhookPoster`). */
export interface EventSink {
  post(events: readonly PodEvent[], signal?: AbortSignal): Promise<PostOutcome>;
  readonly lastRequestSucceeded: boolean;
}

/** The relay's health report. */
export interface RelayHealth {
  readonly live: boolean;
  readonly ready: boolean;
  /** Why it is not ready or not live, one line each. */
  readonly problems: readonly string[];
  readonly sources: readonly SourceStatus[];
  /** Events waiting in the batch window and the outbox. */
  readonly pending: number;
  /** Counts since start: what was relayed, and what the webhook refused for good, by HTTP status. */
  readonly totals: RelayTotals;
}

/** What the relay did since it started. */
export interface RelayTotals {
  /** Events from the watch. */
  events: number;
  /** Events the webhook accepted. */
  delivered: number;
  /** Events in batches the webhook refused for good (see `refused`); the watch's resync reports their pods again. */
  rejected: number;
  /** Events given up at shutdown. */
  abandoned: number;
  /** Webhook requests, retries included. */
  requests: number;
  /** Requests refused for good, by HTTP status (`{ "400": 2 }`). */
  refused: Record<string, number>;
  /** Batches split in two after a 413. */
  splits: number;
}

/** Options of {@link Relay}. Durations in ms. */
export interface RelayOptions {
  readonly source: EventSource;
  readonly sink: EventSink;
  readonly log: Log;
  readonly timers: Timers;
  /** Epoch ms. */
  readonly now: () => number;
  /** @default 1000 */
  readonly batchIdleMs?: number;
  /** @default 10000 */
  readonly batchMaxMs?: number;
  /** A watch failing this long makes the relay not live. @default 300000 (5 min) */
  readonly unhealthyAfterMs?: number;
  /** How long {@link Relay.stop} keeps trying to deliver what is left. @default 20000 (under the pod's 30 s grace) */
  readonly shutdownTimeoutMs?: number;
}

/** Watch → batch → post. */
export class Relay {
  readonly #o: RelayOptions;
  readonly #batcher: EventBatcher<PodEvent>;
  #outbox = new Map<string, PodEvent>();
  #pumping: Promise<void> | undefined;
  readonly #abort = new AbortController();
  #state: 'new' | 'running' | 'stopping' | 'stopped' = 'new';
  /** Totals since start, for logs, the health report and tests. */
  readonly totals: RelayTotals = { events: 0, delivered: 0, rejected: 0, abandoned: 0, requests: 0, refused: {}, splits: 0 };

  constructor(options: RelayOptions) {
    this.#o = options;
    this.#batcher = new EventBatcher<PodEvent>({
      idleMs: options.batchIdleMs ?? 1000,
      maxMs: options.batchMaxMs ?? 10_000,
      key: (e) => e.uid,
      flush: (events) => this.#enqueue(events),
      timers: options.timers,
      now: options.now,
    });
    options.source.onEvent((event) => {
      if (this.#state !== 'running') return;
      this.totals.events++;
      this.#batcher.add(event);
    });
  }

  /** Starts watching. */
  async start(): Promise<void> {
    if (this.#state !== 'new') throw new Error(`relay already ${this.#state}`);
    this.#state = 'running';
    await this.#o.source.start();
    this.#o.log.info('relay started');
  }

  /**
   * Graceful shutdown: stops the watch, closes the batch window, and delivers what is pending for up to
   * `shutdownTimeoutMs`; what is still undelivered then is abandoned (and logged).
   */
  async stop(): Promise<void> {
    if (this.#state === 'stopping' || this.#state === 'stopped') return;
    this.#state = 'stopping';
    await this.#o.source.stop();
    this.#batcher.flush();
    const deadline = this.#o.timers.setTimeout(() => this.#abort.abort(), this.#o.shutdownTimeoutMs ?? 20_000);
    await this.drained();
    this.#o.timers.clearTimeout(deadline);
    this.#abort.abort();
    this.#state = 'stopped';
    this.#o.log.info('relay stopped', { ...this.totals, undelivered: this.#outbox.size });
  }

  /** Resolves when the outbox is empty and no post is in flight. */
  async drained(): Promise<void> {
    while (this.#pumping) await this.#pumping;
  }

  /** Health for the probes. */
  health(): RelayHealth {
    const sources = this.#o.source.status();
    const now = this.#o.now();
    const limit = this.#o.unhealthyAfterMs ?? 300_000;
    const problems: string[] = [];
    let live = true;
    for (const s of sources) {
      if (!s.synced) problems.push(`${s.resource}: not listed yet${s.lastError ? ` (${s.lastError})` : ''}`);
      if (!s.healthy) {
        const since = s.unhealthySinceMs ?? now;
        problems.push(`${s.resource}: watch failing for ${Math.round((now - since) / 1000)} s: ${s.lastError ?? 'unknown error'}`);
        if (now - since > limit) live = false;
      }
    }
    if (!this.#o.sink.lastRequestSucceeded) problems.push('webhook: the last request failed');
    if (this.#state !== 'running') problems.push(`relay is ${this.#state}`);
    return { live, ready: problems.length === 0, problems, sources, pending: this.#batcher.size + this.#outbox.size, totals: { ...this.totals, refused: { ...this.totals.refused } } };
  }

  #enqueue(events: readonly PodEvent[]): void {
    for (const e of events) {
      this.#outbox.delete(e.uid);
      this.#outbox.set(e.uid, e);
    }
    this.#pumping ??= this.#pump().finally(() => {
      this.#pumping = undefined;
    });
  }

  async #pump(): Promise<void> {
    while (this.#outbox.size > 0 && !this.#abort.signal.aborted) {
      const events = [...this.#outbox.values()];
      this.#outbox = new Map();
      const outcome = await this.#o.sink.post(events, this.#abort.signal);
      this.totals.delivered += outcome.delivered;
      this.totals.rejected += outcome.rejected;
      this.totals.requests += outcome.requests;
      this.totals.abandoned += outcome.abandoned;
      this.totals.splits += outcome.splits;
      for (const [status, n] of Object.entries(outcome.refused)) this.totals.refused[status] = (this.totals.refused[status] ?? 0) + n;
      if (outcome.abandoned > 0) this.#o.log.error('relay shutting down with undelivered events', { events: outcome.abandoned });
      this.#o.log.debug('posted batch', { ...outcome });
    }
  }
}
