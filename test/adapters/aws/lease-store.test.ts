import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbLeaseStore } from '../../../shared/adapters/aws/lease-store.js';
import { leaseKey } from '../../../shared/adapters/aws/table.js';
import { startDynalite, type LocalDynamoDb } from '../../../shared/cli/local-dynamodb.js';
import { SkiffError } from '../../../shared/core/errors.js';

let db: LocalDynamoDb;
let clusterSeq = 0;
const freshCluster = (): string => `lease${++clusterSeq}`;
const storeFor = (cluster = freshCluster()): DynamoDbLeaseStore => new DynamoDbLeaseStore({ client: db.client, tableName: db.tableName, cluster });

beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

const T0 = Date.parse('2026-03-02T08:00:00Z');
const TTL = 120; // seconds

describe('DynamoDbLeaseStore', () => {
  describe('acquire', () => {
    it('gives a free lease to the first holder and refuses a second holder while it has not expired', async () => {
      const leases = storeFor();
      expect(await leases.acquire('lifecycle', 'a', TTL, T0)).toBe(true);
      expect(await leases.acquire('lifecycle', 'b', TTL, T0)).toBe(false);
      expect(await leases.acquire('lifecycle', 'b', TTL, T0 + TTL * 1000 - 1)).toBe(false);
    });

    it('lets another holder take it from the moment it expires (now >= expiresAt), though the item is still there', async () => {
      const cluster = freshCluster();
      const leases = storeFor(cluster);
      await leases.acquire('lifecycle', 'a', TTL, T0);
      expect(await leases.acquire('lifecycle', 'b', TTL, T0 + TTL * 1000)).toBe(true);
      // b holds it now, until T0 + 2 TTL; a cannot take it back.
      expect(await leases.acquire('lifecycle', 'a', TTL, T0 + TTL * 1000 + 1)).toBe(false);
      const { Item } = await db.client.send(new GetCommand({ TableName: db.tableName, Key: leaseKey(cluster, 'lifecycle'), ConsistentRead: true }));
      expect(Item).toMatchObject({ holder: 'b', expiresAt: T0 + 2 * TTL * 1000, acquiredAt: T0 + TTL * 1000, ttl: (T0 + 2 * TTL * 1000) / 1000 });
    });

    it('renews for the holder that has it, moving the expiry', async () => {
      const leases = storeFor();
      await leases.acquire('lifecycle', 'a', TTL, T0);
      expect(await leases.acquire('lifecycle', 'a', TTL, T0 + 60_000)).toBe(true);
      // Expiry is now T0 + 60 s + TTL: b still cannot take it at the first expiry.
      expect(await leases.acquire('lifecycle', 'b', TTL, T0 + TTL * 1000)).toBe(false);
      expect(await leases.acquire('lifecycle', 'b', TTL, T0 + 60_000 + TTL * 1000)).toBe(true);
    });

    it('keeps leases of different names and different clusters apart', async () => {
      const leases = storeFor();
      expect(await leases.acquire('lifecycle', 'a', TTL, T0)).toBe(true);
      expect(await leases.acquire('disruption', 'b', TTL, T0)).toBe(true);
      expect(await storeFor().acquire('lifecycle', 'c', TTL, T0)).toBe(true);
    });

    it('lets exactly one of many concurrent acquirers win', async () => {
      const leases = storeFor();
      const holders = Array.from({ length: 12 }, (_, i) => `h${i}`);
      const won = await Promise.all(holders.map((h) => leases.acquire('lifecycle', h, TTL, T0)));
      expect(won.filter(Boolean)).toHaveLength(1);
      const winner = holders[won.indexOf(true)]!;
      // The winner is the one the item names: it can renew, nobody else can take it.
      expect(await leases.acquire('lifecycle', winner, TTL, T0 + 1)).toBe(true);
      expect(await leases.acquire('lifecycle', holders.find((h) => h !== winner)!, TTL, T0 + 1)).toBe(false);
    });

    it('lets exactly one of many concurrent acquirers take over an expired lease', async () => {
      const leases = storeFor();
      await leases.acquire('lifecycle', 'old', TTL, T0);
      const later = T0 + 10 * TTL * 1000;
      const won = await Promise.all(Array.from({ length: 12 }, (_, i) => leases.acquire('lifecycle', `h${i}`, TTL, later)));
      expect(won.filter(Boolean)).toHaveLength(1);
    });

    it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY])('rejects a ttl of %s seconds without writing', async (ttl) => {
      const leases = storeFor();
      await expect(leases.acquire('lifecycle', 'a', ttl, T0)).rejects.toBeInstanceOf(RangeError);
      expect(await leases.acquire('lifecycle', 'b', TTL, T0)).toBe(true);
    });

    it('fails with a SkiffError naming the item when the table does not exist', async () => {
      const leases = new DynamoDbLeaseStore({ client: db.client, tableName: 'no-such-table', cluster: 'x' });
      const error = await leases.acquire('lifecycle', 'a', TTL, T0).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SkiffError);
      expect((error as Error).message).toContain('CLUSTER#x/LEASE#lifecycle');
    });
  });

  describe('release', () => {
    it('frees the lease for the next holder at once', async () => {
      const leases = storeFor();
      await leases.acquire('lifecycle', 'a', TTL, T0);
      await leases.release('lifecycle', 'a');
      expect(await leases.acquire('lifecycle', 'b', TTL, T0 + 1)).toBe(true);
    });

    it('is a no-op for a holder that does not hold it', async () => {
      const leases = storeFor();
      await leases.acquire('lifecycle', 'a', TTL, T0);
      await expect(leases.release('lifecycle', 'b')).resolves.toBeUndefined();
      expect(await leases.acquire('lifecycle', 'b', TTL, T0 + 1)).toBe(false);
    });

    it('leaves alone a lease that expired and was taken by someone else', async () => {
      const leases = storeFor();
      await leases.acquire('lifecycle', 'a', TTL, T0);
      await leases.acquire('lifecycle', 'b', TTL, T0 + TTL * 1000);
      await leases.release('lifecycle', 'a'); // the slow first holder finishing late
      expect(await leases.acquire('lifecycle', 'c', TTL, T0 + TTL * 1000 + 1)).toBe(false);
    });

    it('is idempotent, and releasing a lease never taken is not an error', async () => {
      const leases = storeFor();
      await expect(leases.release('lifecycle', 'a')).resolves.toBeUndefined();
      await leases.acquire('lifecycle', 'a', TTL, T0);
      await leases.release('lifecycle', 'a');
      await expect(leases.release('lifecycle', 'a')).resolves.toBeUndefined();
    });
  });
});
