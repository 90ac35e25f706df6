/**
 * A small in-memory cache whose entries expire after a fixed time, read against the {@link Clock} port so tests and
 * the simulation control time. Used for AWS look-ups Karpenter caches too: SSM parameters (24 h), subnets, security
 * groups and images (1 min), instance profiles.
 *
 * Source: aws/karpenter-provider-aws `pkg/cache/cache.go` (`SSMCacheTTL` 24 h, `DefaultTTL` 1 min);
 * docs/karpenter-semantics.md#caches-and-refresh (AMI and subnet refresh 1 min, SSM cache 24 h).
 */
import type { Clock } from '../../ports/clock.js';

/** One cached value and when it stops being fresh. */
interface Entry<V> {
  readonly value: V;
  /** Epoch milliseconds (UTC); the entry is fresh while `now < expiresAt`. */
  readonly expiresAt: number;
}

/**
 * A map whose entries expire `ttlMs` after they were set. Loads are de-duplicated: concurrent
 * {@link TtlCache.getOrLoad} calls for one key share one promise, and a rejected load is not cached.
 * @example
 * const ssm = new TtlCache<string, string>(24 * 3_600_000, systemClock);
 * const id = await ssm.getOrLoad(name, () => fetchParameter(name));
 */
export class TtlCache<K, V> {
  readonly #ttlMs: number;
  readonly #clock: Clock;
  readonly #entries = new Map<K, Entry<V>>();
  readonly #loading = new Map<K, Promise<V>>();

  /**
   * @param ttlMs how long an entry stays fresh, in milliseconds (> 0)
   * @param clock the time source
   */
  constructor(ttlMs: number, clock: Clock) {
    this.#ttlMs = ttlMs;
    this.#clock = clock;
  }

  /** The fresh value under `key`, or undefined when absent or expired (an expired entry is dropped). */
  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (this.#clock.now() >= entry.expiresAt) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** Stores `value` under `key`, fresh for the cache's TTL from now. */
  set(key: K, value: V): void {
    this.#entries.set(key, { value, expiresAt: this.#clock.now() + this.#ttlMs });
  }

  /** Drops `key` (no-op when absent). */
  delete(key: K): void {
    this.#entries.delete(key);
  }

  /** Drops every entry. */
  clear(): void {
    this.#entries.clear();
  }

  /**
   * The fresh value under `key`, else the result of `load()` (stored, and shared with concurrent callers).
   * @throws whatever `load` throws; nothing is cached then
   */
  async getOrLoad(key: K, load: () => Promise<V>): Promise<V> {
    const cached = this.get(key);
    if (cached !== undefined) return cached;
    const inFlight = this.#loading.get(key);
    if (inFlight !== undefined) return inFlight;
    const promise = (async (): Promise<V> => {
      try {
        const value = await load();
        this.set(key, value);
        return value;
      } finally {
        this.#loading.delete(key);
      }
    })();
    this.#loading.set(key, promise);
    return promise;
  }
}
