// When the lifecycle Lambda refreshes prices: the 12-hourly task always, the catch-up only for a missing or stale
// snapshot and at most every 15 minutes per container, both under the `prices` lease.
import { describe, expect, it } from 'vitest';
import type { RefreshPricesResult } from '../../shared/adapters/aws/price-store.js';
import { silentLog } from '../../shared/lambda/log.js';
import { PRICE_CATCH_UP_INTERVAL_MS, PRICE_REFRESH_LEASE_NAME, PRICE_SNAPSHOT_MAX_AGE_MS, createPriceRefresher } from '../../shared/lambda/price-refresh.js';
import type { Leases } from '../../shared/ports/leases.js';

const HOUR = 60 * 60 * 1000;
const T0 = Date.parse('2026-03-02T08:00:00Z');

/** A refresher on a settable clock, a settable snapshot time, and an in-memory lease store. */
function setup(options: { fetchedAt?: number; failRefresh?: boolean; leaseHeld?: boolean } = {}) {
  let now = T0;
  let fetchedAt = options.fetchedAt;
  const refreshes: number[] = [];
  const leaseCalls: string[] = [];
  const leases: Leases = {
    acquire: async (name) => (leaseCalls.push(name), !options.leaseHeld),
    release: async () => undefined,
  };
  const refresher = createPriceRefresher({
    refresh: async (): Promise<RefreshPricesResult> => {
      if (options.failRefresh) throw new Error('pricing:GetProducts AccessDenied');
      refreshes.push(now);
      fetchedAt = now;
      return { outcome: 'stored', version: `${now}-x`, fetchedAt: now, onDemandTypes: 800, spotOfferings: 4000 };
    },
    snapshotFetchedAt: async () => fetchedAt,
    clock: { now: () => now },
    log: silentLog,
    lease: { leases, clock: { now: () => now }, ttlSeconds: 120 },
  });
  return { refresher, refreshes, leaseCalls, advance: (ms: number) => void (now += ms) };
}

describe('createPriceRefresher', () => {
  describe('refresh (the 12-hourly task)', () => {
    it('refreshes under the prices lease whatever the snapshot’s age', async () => {
      const { refresher, refreshes, leaseCalls } = setup({ fetchedAt: T0 - HOUR });
      expect(await refresher.refresh({})).toMatchObject({ status: 'refreshed', result: { outcome: 'stored' } });
      expect(refreshes).toEqual([T0]);
      expect(leaseCalls).toEqual([PRICE_REFRESH_LEASE_NAME]);
    });

    it('backs off when another invocation holds the lease', async () => {
      const { refresher, refreshes } = setup({ leaseHeld: true });
      expect(await refresher.refresh({})).toEqual({ status: 'backedOff' });
      expect(refreshes).toEqual([]);
    });

    it('throws what the refresh throws', async () => {
      await expect(setup({ failRefresh: true }).refresher.refresh({})).rejects.toThrow('AccessDenied');
    });
  });

  describe('refreshIfStale (the catch-up after a scheduled pass)', () => {
    it('refreshes when no snapshot was ever stored (a new deployment)', async () => {
      const { refresher, refreshes } = setup();
      expect(await refresher.refreshIfStale({})).toMatchObject({ status: 'refreshed' });
      expect(refreshes).toHaveLength(1);
    });

    it('leaves a snapshot younger than 12.5 hours alone, and refreshes an older one', async () => {
      const fresh = setup({ fetchedAt: T0 - 12 * HOUR });
      expect(await fresh.refresher.refreshIfStale({})).toEqual({ status: 'fresh', ageMs: 12 * HOUR });
      expect(fresh.refreshes).toEqual([]);
      const stale = setup({ fetchedAt: T0 - PRICE_SNAPSHOT_MAX_AGE_MS - 1 });
      expect(await stale.refresher.refreshIfStale({})).toMatchObject({ status: 'refreshed', previousAgeMs: PRICE_SNAPSHOT_MAX_AGE_MS + 1 });
    });

    it('checks at most once per 15 minutes per container, even after a failure', async () => {
      const { refresher, advance } = setup({ failRefresh: true });
      await expect(refresher.refreshIfStale({})).rejects.toThrow('AccessDenied');
      advance(PRICE_CATCH_UP_INTERVAL_MS - 1);
      expect(await refresher.refreshIfStale({})).toEqual({ status: 'notDue' });
      advance(1);
      await expect(refresher.refreshIfStale({})).rejects.toThrow('AccessDenied');
    });
  });
});
