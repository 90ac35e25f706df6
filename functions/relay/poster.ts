/**
 * Posts batches of events to the webhook: splits them to the webhook's limits, signs each request
 * (`shared/lambda/webhook-signature.ts`), and retries what may succeed later.
 *
 * | answer | what the poster does |
 * |---|---|
 * | 2xx | done |
 * | network error, timeout, 5xx, 429 | retry after an exponential backoff with full jitter (capped) |
 * | 401 | retry likewise: a secret being rotated, or a clock briefly off, heals by itself; it is logged as an error |
 * | 413 | split the batch in two and post each half (a proxy in front of the webhook may take less than
 *   {@link MAX_WEBHOOK_BODY_BYTES}); a single event answered 413 is given up like a 400 |
 * | other 4xx (400, 405) | give up on that batch, log an error and count it by status ({@link PostOutcome.refused}):
 *   sending it again cannot succeed; the watch's periodic resync reports its pods again if they stay pending |
 *
 * Retries go on until the batch is delivered or the `signal` aborts (shutdown), so events are not lost while the
 * webhook is down; re-posting is safe because the webhook enqueues every event with its FIFO deduplication id.
 */
import type { PodEvent } from '../../shared/core/api/pod-event.js';
import { MAX_WEBHOOK_BATCH_EVENTS, MAX_WEBHOOK_BODY_BYTES } from '../../shared/core/api/webhook-batch.js';
import type { Log } from '../../shared/lambda/log.js';
import { signWebhookBody } from '../../shared/lambda/webhook-signature.js';
import { backoffMs, sleep, type Timers } from './timers.js';

/** Options of {@link WebhookPoster}. */
export interface WebhookPosterOptions {
  /** The webhook's Function URL. */
  readonly url: string;
  /** The cluster name, written into every batch. */
  readonly cluster: string;
  /** The current HMAC secret; called for every request so a rotated secret file is picked up. */
  readonly secret: () => Promise<string>;
  readonly log: Log;
  readonly timers: Timers;
  /** Epoch ms (the signature timestamp). */
  readonly now: () => number;
  /** @default the global fetch */
  readonly fetch?: typeof fetch;
  /** First retry delay, ms. @default 500 */
  readonly baseDelayMs?: number;
  /** Longest retry delay, ms. @default 30000 */
  readonly maxDelayMs?: number;
  /** Per-request timeout, ms. @default 10000 */
  readonly requestTimeoutMs?: number;
  /** @default Math.random */
  readonly random?: () => number;
}

/** What happened to the events of one {@link WebhookPoster.post} call. */
export interface PostOutcome {
  /** Events the webhook accepted. */
  readonly delivered: number;
  /** Events in batches the webhook refused for good (4xx other than 401/429). */
  readonly rejected: number;
  /** Events not delivered because the signal aborted first. */
  readonly abandoned: number;
  /** Requests sent, retries included. */
  readonly requests: number;
  /** Requests the webhook refused for good, by HTTP status (`{ "400": 1 }`); 413s that were split are not counted. */
  readonly refused: Readonly<Record<string, number>>;
  /** Batches split in two after a 413. */
  readonly splits: number;
}

/** One HTTP attempt's result. */
type Attempt = { readonly kind: 'ok' } | { readonly kind: 'retry'; readonly detail: string } | { readonly kind: 'reject'; readonly status: number; readonly detail: string };

/**
 * Splits `events` into webhook batches: at most {@link MAX_WEBHOOK_BATCH_EVENTS} events and
 * {@link MAX_WEBHOOK_BODY_BYTES} bytes of JSON each, in order.
 * @returns the JSON bodies
 */
export function batchBodies(cluster: string, events: readonly PodEvent[]): string[] {
  return batchEvents(events, cluster).map((batch) => JSON.stringify({ cluster, events: batch }));
}

/** {@link batchBodies}' batches, as event lists. */
function batchEvents(events: readonly PodEvent[], cluster = ''): PodEvent[][] {
  const batches: PodEvent[][] = [];
  let current: PodEvent[] = [];
  const empty = Buffer.byteLength(JSON.stringify({ cluster, events: [] }));
  let bytes = empty;
  for (const event of events) {
    const size = Buffer.byteLength(JSON.stringify(event)) + 1; // + the comma
    if (current.length > 0 && (current.length >= MAX_WEBHOOK_BATCH_EVENTS || bytes + size > MAX_WEBHOOK_BODY_BYTES)) {
      batches.push(current);
      current = [];
      bytes = empty;
    }
    current.push(event);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/** Signs and posts batches to the webhook, with retries. */
export class WebhookPoster {
  readonly #o: WebhookPosterOptions;
  readonly #fetch: typeof fetch;
  /** Outcome of the last request: for readiness. */
  #lastOk = true;

  constructor(options: WebhookPosterOptions) {
    this.#o = options;
    this.#fetch = options.fetch ?? fetch;
  }

  /** False when the last request failed (the webhook is unreachable or refusing). */
  get lastRequestSucceeded(): boolean {
    return this.#lastOk;
  }

  /**
   * Delivers `events` (split into batches, one request at a time, in order).
   * @param signal aborts the retries (shutdown); a request in flight is aborted too
   */
  async post(events: readonly PodEvent[], signal?: AbortSignal): Promise<PostOutcome> {
    let delivered = 0;
    let rejected = 0;
    let abandoned = 0;
    let requests = 0;
    let splits = 0;
    const refused: Record<string, number> = {};
    // Batches still to send, next first; a 413 puts its two halves in front.
    const queue = batchEvents(events, this.#o.cluster);
    for (let batch = queue.shift(); batch !== undefined; batch = queue.shift()) {
      const body = JSON.stringify({ cluster: this.#o.cluster, events: batch });
      const count = batch.length;
      for (let attempt = 1; ; attempt++) {
        if (signal?.aborted) {
          abandoned += count;
          break;
        }
        requests++;
        const result = await this.#attempt(body, signal);
        this.#lastOk = result.kind === 'ok';
        if (result.kind === 'ok') {
          delivered += count;
          break;
        }
        if (result.kind === 'reject' && result.status === 413 && count > 1) {
          splits++;
          const half = Math.ceil(count / 2);
          queue.unshift(batch.slice(0, half), batch.slice(half));
          this.#o.log.warn('webhook refused a batch as too large; splitting it', { events: count, detail: result.detail });
          break;
        }
        if (result.kind === 'reject') {
          rejected += count;
          refused[result.status] = (refused[result.status] ?? 0) + 1;
          this.#o.log.error('webhook refused a batch; dropping it', { events: count, status: result.status, detail: result.detail });
          break;
        }
        const delay = backoffMs(attempt, this.#o.baseDelayMs ?? 500, this.#o.maxDelayMs ?? 30_000, (this.#o.random ?? Math.random)());
        this.#o.log[result.detail.startsWith('401') ? 'error' : 'warn']('webhook post failed; retrying', { events: count, attempt, delayMs: delay, detail: result.detail });
        await sleep(this.#o.timers, delay, signal);
      }
    }
    return { delivered, rejected, abandoned, requests, refused, splits };
  }

  async #attempt(body: string, signal: AbortSignal | undefined): Promise<Attempt> {
    const timeout = AbortSignal.timeout(this.#o.requestTimeoutMs ?? 10_000);
    try {
      const headers = { 'content-type': 'application/json', 'user-agent': 'skiff-relay', ...signWebhookBody(await this.#o.secret(), body, this.#o.now()) };
      const response = await this.#fetch(this.#o.url, { method: 'POST', body, headers, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
      const text = (await response.text()).slice(0, 300);
      if (response.ok) return { kind: 'ok' };
      const detail = `${response.status} ${text}`;
      if (response.status >= 500 || response.status === 429 || response.status === 401 || response.status === 408) return { kind: 'retry', detail };
      return { kind: 'reject', status: response.status, detail };
    } catch (e) {
      return { kind: 'retry', detail: e instanceof Error ? `${e.name}: ${e.message}${e.cause instanceof Error ? ` (${e.cause.message})` : ''}` : String(e) };
    }
  }
}
