/**
 * Periodic controllers (lifecycle, disruption) run one pass per invocation under the controller's lease
 * (docs/architecture.md#leases): an overlapping invocation backs off instead of acting twice.
 */
import { randomUUID } from 'node:crypto';
import { withLease } from '../controllers/lease.js';
import type { Clock } from '../ports/clock.js';
import type { Leases } from '../ports/leases.js';
import type { Log } from './log.js';

/**
 * Lease duration when the invocation's remaining time is unknown: 5 minutes, seconds. Lambda's own remaining time
 * (plus {@link LEASE_MARGIN_SECONDS}) is used when the context gives it.
 */
export const DEFAULT_LEASE_TTL_SECONDS = 300;
/**
 * Name of the lifecycle controller's lease (the table item `LEASE#lifecycle`), taken by the lifecycle Lambda and by the
 * provisioner when a relay node event makes it run a lifecycle pass.
 */
export const LIFECYCLE_LEASE_NAME = 'lifecycle';

/** Added to the invocation's remaining time for the lease duration, seconds (clock skew between invocations). */
export const LEASE_MARGIN_SECONDS = 30;

/** The lease that serialises a periodic controller's passes. */
export interface PeriodicLease {
  readonly leases: Leases;
  /** The clock the expiry is computed from (the controller's). */
  readonly clock: Clock;
  /** Lease duration, seconds. @default the invocation's remaining time + margin, else {@link DEFAULT_LEASE_TTL_SECONDS} */
  readonly ttlSeconds?: number;
  /** A holder id for an invocation without a Lambda request id (the simulation). @default a random UUID */
  readonly holder?: () => string;
}

/** The Lambda context fields read (both optional: the simulation passes none). */
export interface InvocationContext {
  readonly awsRequestId?: string;
  readonly getRemainingTimeInMillis?: () => number;
}

/**
 * Runs `pass` under the lease `name` (or directly without a lease).
 * @returns the pass's report, or `backedOff` when another invocation holds the lease
 * @throws whatever the pass throws, and DynamoDB failures taking the lease
 */
export async function runUnderLease<T>(name: string, lease: PeriodicLease | undefined, context: InvocationContext, pass: () => Promise<T>, log: Log): Promise<{ readonly report: T } | { readonly backedOff: true }> {
  if (!lease) return { report: await pass() };
  const holder = context.awsRequestId ?? lease.holder?.() ?? randomUUID();
  const outcome = await withLease({ leases: lease.leases, name, holder, ttlSeconds: leaseTtlSeconds(lease, context), clock: lease.clock }, pass);
  if (outcome.status === 'backedOff') {
    log.info(`${name} pass skipped: another invocation holds the ${name} lease`, { holder });
    return { backedOff: true };
  }
  if (outcome.releaseError !== undefined) log.warn(`could not release the ${name} lease; it expires on its own`, { holder, error: String(outcome.releaseError) });
  return { report: outcome.value };
}

/** The lease duration: explicit, else the invocation's remaining time plus a margin, else the default. */
function leaseTtlSeconds(lease: PeriodicLease, context: InvocationContext): number {
  if (lease.ttlSeconds !== undefined) return lease.ttlSeconds;
  const remainingMs = typeof context.getRemainingTimeInMillis === 'function' ? context.getRemainingTimeInMillis() : undefined;
  return remainingMs !== undefined && remainingMs > 0 ? Math.ceil(remainingMs / 1000) + LEASE_MARGIN_SECONDS : DEFAULT_LEASE_TTL_SECONDS;
}
