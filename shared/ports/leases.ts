/**
 * Leases port: mutual exclusion for the periodic controllers (docs/architecture.md#leases: the
 * disruption and lifecycle controllers take a lease (conditional put with an expiry) so an overlapping invocation
 * backs off instead of acting twice).
 *
 * A lease is named (one per controller, e.g. `lifecycle`, `disruption`) and held by one holder (an invocation id,
 * e.g. the Lambda request id) until it is released or it expires. Expiry is decided against the caller's clock in
 * the write's condition, never by deletion: DynamoDB's TTL deletes items lazily (within days) and dynalite never
 * does, so an expired lease item may still be there — it simply no longer counts.
 *
 * A lease is an optimisation of at-least-once work, not a correctness device on its own: a holder that outlives
 * its lease (a pass longer than the TTL) can overlap the next holder, so everything done under a lease must still be
 * idempotent and conditional (as the lifecycle controller is). Pick a TTL longer than the longest pass — for a
 * Lambda, its timeout — so that only a holder that is surely dead loses its lease by expiry.
 *
 * Adapter: DynamoDB (`shared/adapters/aws/lease-store.ts`, also used by the simulation against embedded dynalite).
 */

/** Named leases for one cluster. Times are epoch milliseconds (UTC); durations are seconds. */
export interface Leases {
  /**
   * Takes the lease `name` for `holder` until `nowMs + ttlSeconds × 1000`. Succeeds when nobody holds it (never
   * taken, released, or expired: its expiry ≤ `nowMs`) or when `holder` already holds it (a renewal, which moves the
   * expiry to the new value). Atomic: of concurrent callers that find the lease free, exactly one succeeds.
   * @param name the lease, e.g. `lifecycle`; must not contain `#`
   * @param holder who takes it, e.g. a Lambda request id; distinct per invocation
   * @param ttlSeconds how long it is held unless released, seconds (> 0)
   * @param nowMs the caller's clock, epoch ms (UTC)
   * @returns true when `holder` now holds the lease; false when another holder holds an unexpired one (back off)
   * @throws {RangeError} when `ttlSeconds` is not a positive finite number
   */
  acquire(name: string, holder: string, ttlSeconds: number, nowMs: number): Promise<boolean>;
  /**
   * Releases the lease `name` if `holder` holds it (expired or not); otherwise does nothing — a lease that expired
   * and was taken by someone else is theirs. Idempotent.
   */
  release(name: string, holder: string): Promise<void>;
}
