/**
 * UnavailableOfferings port: offerings (instance type × zone × capacity type) that recently failed to launch with
 * an insufficient-capacity error, so the solver leaves them out until the mark expires. This is Karpenter's
 * unavailable-offerings cache (aws/karpenter-provider-aws `pkg/cache/unavailableofferings.go`; entries live
 * `UnavailableOfferingsTTL` = 3 minutes, `pkg/cache/cache.go`), made durable and shared by every invocation.
 * Adapters: DynamoDB (`shared/adapters/aws/unavailable-offerings-store.ts`, also used by the simulation against
 * embedded dynalite).
 */
import type { OfferingKey } from '../core/instancetypes/offering-key.js';

/** An offering marked unavailable, as {@link UnavailableOfferings.listUnavailable} returns it. */
export interface UnavailableOffering extends OfferingKey {
  /** When the mark expires, epoch milliseconds (UTC). The offering is unavailable while `now < untilMs`. */
  readonly untilMs: number;
  /** Why it was marked, e.g. the EC2 error code `InsufficientInstanceCapacity`. */
  readonly reason: string;
}

/** Durable unavailable-offering marks for one cluster. Expiry is decided on read against the caller's clock. */
export interface UnavailableOfferings {
  /**
   * Marks `offering` unavailable until `untilMs` (epoch milliseconds, UTC). Idempotent: repeating a call changes
   * nothing, and a mark never moves its expiry earlier — when the offering is already marked until a later time,
   * the call is a no-op (the longer mark wins, whatever order concurrent callers write in).
   */
  markUnavailable(offering: OfferingKey, untilMs: number, reason: string): Promise<void>;
  /**
   * The offerings whose mark has not expired at `nowMs` (epoch milliseconds, UTC): exactly those with
   * `untilMs > nowMs`, ordered by instance type, zone, then capacity type.
   */
  listUnavailable(nowMs: number): Promise<UnavailableOffering[]>;
}
