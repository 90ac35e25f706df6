/**
 * When the lifecycle Lambda refreshes prices (docs/karpenter-semantics.md#pricing: Karpenter refreshes on-demand and spot
 * prices every 12 h):
 *
 * - **On schedule.** A second EventBridge schedule (infra `PriceRefresh`, every 12 h) invokes the lifecycle function
 *   with `{"task": "refresh-prices"}`; {@link PriceRefresher.refresh} fetches and stores a snapshot.
 * - **Catch-up.** After a scheduled lifecycle pass, {@link PriceRefresher.refreshIfStale} reads the snapshot's age (one
 *   GetItem of the pointer) and refreshes when there is none or it is older than {@link PRICE_SNAPSHOT_MAX_AGE_MS}
 *   (12 h 30 min: past the schedule's own run, so normally the schedule does it). This covers a new deployment (the
 *   first 12-hourly run comes 12 h after the stack is created) and a failed or dropped scheduled run. A container
 *   checks at most every {@link PRICE_CATCH_UP_INTERVAL_MS} (15 min), so a refresh that keeps failing (e.g. no route
 *   to the Pricing API) costs one attempt per quarter hour, not one per lifecycle pass.
 *
 * Both run under the `prices` lease, so overlapping invocations do not fetch twice; the snapshot writer is idempotent
 * and never lets an older refresh replace a newer one (`price-store.ts`), so a second refresh is only waste.
 */
import type { Clock } from '../ports/clock.js';
import type { RefreshPricesResult } from '../adapters/aws/price-store.js';
import type { Log } from './log.js';
import { runUnderLease, type InvocationContext, type PeriodicLease } from './periodic-lease.js';

/** Name of the price refresh's lease (the table item `LEASE#prices`). */
export const PRICE_REFRESH_LEASE_NAME = 'prices';

/** A snapshot older than this is refreshed by the catch-up: 12 h 30 min, ms (Karpenter's 12 h, plus the schedule's slack). */
export const PRICE_SNAPSHOT_MAX_AGE_MS = 12.5 * 60 * 60 * 1000;

/** Least time between two catch-up checks of one container, ms: 15 minutes. */
export const PRICE_CATCH_UP_INTERVAL_MS = 15 * 60 * 1000;

/** What a refresh call did. */
export type PriceRefreshOutcome =
  /** Prices were fetched and stored (or superseded by a newer snapshot: `result.outcome`). */
  | { readonly status: 'refreshed'; readonly result: RefreshPricesResult; readonly previousAgeMs?: number }
  /** The snapshot is recent enough; nothing fetched. `ageMs`: its age, ms. */
  | { readonly status: 'fresh'; readonly ageMs: number }
  /** Another invocation holds the `prices` lease (it is refreshing). */
  | { readonly status: 'backedOff' }
  /** This container checked less than {@link PRICE_CATCH_UP_INTERVAL_MS} ago. */
  | { readonly status: 'notDue' };

/** Dependencies of {@link createPriceRefresher}. */
export interface PriceRefresherDeps {
  /** Fetches both price lists and stores a snapshot (`refreshPrices` of `price-store.ts`, bound). */
  readonly refresh: () => Promise<RefreshPricesResult>;
  /** When the current snapshot was fetched, epoch ms, or undefined when there is none (`DynamoDbPriceStore.currentFetchedAt`). */
  readonly snapshotFetchedAt: () => Promise<number | undefined>;
  readonly clock: Clock;
  readonly log: Log;
  /** The lease store; without it refreshes are not serialised (each is still safe). */
  readonly lease?: PeriodicLease;
  /** @default {@link PRICE_SNAPSHOT_MAX_AGE_MS} */
  readonly maxAgeMs?: number;
  /** @default {@link PRICE_CATCH_UP_INTERVAL_MS} */
  readonly catchUpIntervalMs?: number;
}

/** The lifecycle Lambda's two ways to refresh prices. */
export interface PriceRefresher {
  /**
   * Refreshes now (the 12-hourly task), under the `prices` lease.
   * @throws {ThrottledError} · {CloudProviderError} (an API failed or returned no prices) · {SkiffError} (DynamoDB)
   */
  refresh(context: InvocationContext): Promise<PriceRefreshOutcome>;
  /**
   * Refreshes when the snapshot is missing or older than the maximum age, at most once per catch-up interval per
   * container (the interval starts at the check, whatever its outcome).
   * @throws the same as {@link PriceRefresher.refresh}, and the snapshot age read's DynamoDB errors
   */
  refreshIfStale(context: InvocationContext): Promise<PriceRefreshOutcome>;
}

/**
 * Builds the refresher (one per Lambda container: the catch-up interval is remembered in it).
 * @example
 * const prices = createPriceRefresher({ refresh: () => refreshPrices(deps), snapshotFetchedAt: () => store.currentFetchedAt(), clock, log, lease });
 * await prices.refreshIfStale(context);
 */
export function createPriceRefresher(deps: PriceRefresherDeps): PriceRefresher {
  const maxAgeMs = deps.maxAgeMs ?? PRICE_SNAPSHOT_MAX_AGE_MS;
  const intervalMs = deps.catchUpIntervalMs ?? PRICE_CATCH_UP_INTERVAL_MS;
  let lastCheck: number | undefined;
  const underLease = async (context: InvocationContext, previousAgeMs?: number): Promise<PriceRefreshOutcome> => {
    const outcome = await runUnderLease(PRICE_REFRESH_LEASE_NAME, deps.lease, context, deps.refresh, deps.log);
    if ('backedOff' in outcome) return { status: 'backedOff' };
    return { status: 'refreshed', result: outcome.report, ...(previousAgeMs !== undefined ? { previousAgeMs } : {}) };
  };
  return {
    refresh: (context) => underLease(context),
    async refreshIfStale(context) {
      const now = deps.clock.now();
      if (lastCheck !== undefined && now - lastCheck < intervalMs) return { status: 'notDue' };
      lastCheck = now;
      const fetchedAt = await deps.snapshotFetchedAt();
      const ageMs = fetchedAt === undefined ? undefined : Math.max(0, now - fetchedAt);
      if (ageMs !== undefined && ageMs <= maxAgeMs) return { status: 'fresh', ageMs };
      return underLease(context, ageMs);
    },
  };
}
