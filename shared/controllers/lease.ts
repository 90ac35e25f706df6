/**
 * Running a periodic controller's pass under a lease (docs/architecture.md#leases): the pass runs
 * only if its invocation takes the controller's lease, and an overlapping invocation backs off instead of acting
 * twice. Shared by the lifecycle and disruption handlers.
 */
import type { Clock } from '../ports/clock.js';
import type { Leases } from '../ports/leases.js';

/** Which lease to take, for whom and for how long. */
export interface LeaseRequest {
  readonly leases: Leases;
  /** The lease, one per controller, e.g. `lifecycle`. Must not contain `#`. */
  readonly name: string;
  /** Who takes it: distinct per invocation (a Lambda request id, which Lambda keeps across async retries). */
  readonly holder: string;
  /**
   * How long the lease holds unless released, seconds. Must exceed the longest pass (a Lambda's timeout), or a slow
   * pass can overlap the next one.
   */
  readonly ttlSeconds: number;
  /** The clock the expiry is computed from (epoch ms, UTC). */
  readonly clock: Clock;
}

/**
 * What {@link withLease} did: `ran` with the pass's value (and, if releasing failed, the error — the lease then
 * simply expires), or `backedOff` because another holder holds the lease.
 */
export type LeaseOutcome<T> =
  | { readonly status: 'ran'; readonly value: T; readonly releaseError?: unknown }
  | { readonly status: 'backedOff'; readonly lease: string };

/**
 * Runs `pass` while holding the lease: acquires it (backing off when another holder has it), runs `pass`, and
 * releases the lease whatever happens, so the next invocation need not wait for the expiry. A failure to release is
 * not the pass's failure: it is returned as `releaseError` when the pass succeeded and dropped when the pass threw
 * (the pass's error is the one that matters; the lease expires on its own).
 * @returns `{status: 'ran', value}`, or `{status: 'backedOff'}` without running `pass`
 * @throws whatever `pass` throws (after releasing), and whatever `leases.acquire` throws (nothing ran)
 * @example
 * const outcome = await withLease({ leases, name: 'lifecycle', holder: context.awsRequestId, ttlSeconds: 120, clock },
 *   () => reconcileLifecycle(deps));
 * if (outcome.status === 'backedOff') log.info('another lifecycle pass is running; backing off');
 */
export async function withLease<T>(lease: LeaseRequest, pass: () => Promise<T>): Promise<LeaseOutcome<T>> {
  const { leases, name, holder, ttlSeconds, clock } = lease;
  if (!(await leases.acquire(name, holder, ttlSeconds, clock.now()))) return { status: 'backedOff', lease: name };
  let value: T;
  try {
    value = await pass();
  } catch (error) {
    await leases.release(name, holder).catch(() => undefined);
    throw error;
  }
  try {
    await leases.release(name, holder);
    return { status: 'ran', value };
  } catch (releaseError) {
    return { status: 'ran', value, releaseError };
  }
}
