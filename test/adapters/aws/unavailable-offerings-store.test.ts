import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbNodeClaimStore } from '../../../shared/adapters/aws/dynamodb-nodeclaim-store.js';
import { offeringKey } from '../../../shared/adapters/aws/table.js';
import { DynamoDbUnavailableOfferingsStore } from '../../../shared/adapters/aws/unavailable-offerings-store.js';
import { SkiffError } from '../../../shared/core/errors.js';
import type { OfferingKey } from '../../../shared/core/instancetypes/offering-key.js';
import { startDynalite, type LocalDynamoDb } from '../../../shared/cli/local-dynamodb.js';

let db: LocalDynamoDb;
let clusterSeq = 0;
const freshCluster = (): string => `c${++clusterSeq}`;
const storeFor = (cluster = freshCluster(), pageSize?: number): DynamoDbUnavailableOfferingsStore =>
  new DynamoDbUnavailableOfferingsStore({ client: db.client, tableName: db.tableName, cluster, ...(pageSize !== undefined ? { pageSize } : {}) });

beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

const T0 = Date.parse('2025-01-01T00:00:00Z');
const MIN = 60_000;
const spotM5: OfferingKey = { instanceType: 'm5.large', zone: 'us-west-2a', capacityType: 'spot' };
const odC6g: OfferingKey = { instanceType: 'c6g.xlarge', zone: 'us-west-2b', capacityType: 'on-demand' };

describe('DynamoDbUnavailableOfferingsStore', () => {
  describe('listUnavailable', () => {
    it('returns an offering while now < untilMs and not from untilMs on', async () => {
      const store = storeFor();
      await store.markUnavailable(spotM5, T0 + 3 * MIN, 'InsufficientInstanceCapacity');
      const mark = { ...spotM5, untilMs: T0 + 3 * MIN, reason: 'InsufficientInstanceCapacity' };
      expect(await store.listUnavailable(T0)).toStrictEqual([mark]);
      expect(await store.listUnavailable(T0 + 3 * MIN - 1)).toStrictEqual([mark]);
      expect(await store.listUnavailable(T0 + 3 * MIN)).toStrictEqual([]);
      expect(await store.listUnavailable(T0 + 10 * MIN)).toStrictEqual([]);
    });

    it('keeps only the unexpired marks, sorted by instance type, zone, capacity type', async () => {
      const store = storeFor();
      await store.markUnavailable({ ...spotM5, zone: 'us-west-2c' }, T0 + 3 * MIN, 'ICE');
      await store.markUnavailable(spotM5, T0 + 3 * MIN, 'ICE');
      await store.markUnavailable({ ...spotM5, capacityType: 'on-demand' }, T0 + 1 * MIN, 'ICE');
      await store.markUnavailable(odC6g, T0 + 5 * MIN, 'SpotInterrupted');
      const at = async (now: number): Promise<string[]> =>
        (await store.listUnavailable(now)).map((o) => `${o.instanceType} ${o.zone} ${o.capacityType}`);
      expect(await at(T0)).toEqual([
        'c6g.xlarge us-west-2b on-demand',
        'm5.large us-west-2a on-demand',
        'm5.large us-west-2a spot',
        'm5.large us-west-2c spot',
      ]);
      expect(await at(T0 + 2 * MIN)).toEqual(['c6g.xlarge us-west-2b on-demand', 'm5.large us-west-2a spot', 'm5.large us-west-2c spot']);
      expect(await at(T0 + 4 * MIN)).toEqual(['c6g.xlarge us-west-2b on-demand']);
    });

    it('follows LastEvaluatedKey when the filter leaves pages empty (Limit 1)', async () => {
      const store = storeFor(freshCluster(), 1);
      for (let i = 0; i < 6; i++) {
        await store.markUnavailable({ ...spotM5, instanceType: `m5.${i}xlarge` }, T0 + (i % 2 === 0 ? 1 : 5) * MIN, 'ICE');
      }
      expect((await store.listUnavailable(T0 + 2 * MIN)).map((o) => o.instanceType)).toEqual(['m5.1xlarge', 'm5.3xlarge', 'm5.5xlarge']);
    });

    it('sees only its own cluster, and no other kind of item in the partition', async () => {
      const cluster = freshCluster();
      await storeFor().markUnavailable(spotM5, T0 + MIN, 'ICE');
      await new DynamoDbNodeClaimStore({ client: db.client, tableName: db.tableName, cluster }).create({
        name: 'a',
        nodePool: 'default',
        nodeClass: 'default',
        state: 'Pending',
        requirements: [],
        instanceTypes: [],
        resources: {},
        labels: {},
        taints: [],
        startupTaints: [],
        nominatedPods: [],
        createdAt: '2025-01-01T00:00:00.000Z',
      });
      expect(await storeFor(cluster).listUnavailable(T0)).toStrictEqual([]);
    });
  });

  describe('markUnavailable', () => {
    it('is idempotent', async () => {
      const store = storeFor();
      await store.markUnavailable(spotM5, T0 + 3 * MIN, 'ICE');
      await store.markUnavailable(spotM5, T0 + 3 * MIN, 'ICE');
      await Promise.all(Array.from({ length: 5 }, () => store.markUnavailable(spotM5, T0 + 3 * MIN, 'ICE')));
      expect(await store.listUnavailable(T0)).toStrictEqual([{ ...spotM5, untilMs: T0 + 3 * MIN, reason: 'ICE' }]);
    });

    it('extends a mark to a later time', async () => {
      const store = storeFor();
      await store.markUnavailable(spotM5, T0 + 3 * MIN, 'ICE');
      await store.markUnavailable(spotM5, T0 + 6 * MIN, 'SpotInterrupted');
      expect(await store.listUnavailable(T0 + 4 * MIN)).toStrictEqual([{ ...spotM5, untilMs: T0 + 6 * MIN, reason: 'SpotInterrupted' }]);
    });

    it('never moves a mark earlier: the later expiry wins whatever order concurrent writers land in', async () => {
      const store = storeFor();
      await store.markUnavailable(spotM5, T0 + 6 * MIN, 'first');
      await store.markUnavailable(spotM5, T0 + 3 * MIN, 'second');
      expect(await store.listUnavailable(T0 + 4 * MIN)).toStrictEqual([{ ...spotM5, untilMs: T0 + 6 * MIN, reason: 'first' }]);

      const racing = storeFor();
      await Promise.all([1, 4, 2, 5, 3].map((m) => racing.markUnavailable(odC6g, T0 + m * MIN, `+${m}m`)));
      expect(await racing.listUnavailable(T0)).toStrictEqual([{ ...odC6g, untilMs: T0 + 5 * MIN, reason: '+5m' }]);
    });

    it('marks an offering again after its previous mark expired', async () => {
      const store = storeFor();
      await store.markUnavailable(spotM5, T0 + MIN, 'ICE');
      expect(await store.listUnavailable(T0 + 2 * MIN)).toStrictEqual([]);
      await store.markUnavailable(spotM5, T0 + 5 * MIN, 'ICE');
      expect(await store.listUnavailable(T0 + 2 * MIN)).toHaveLength(1);
    });

    it('writes expiresAt in epoch ms and ttl in epoch seconds (rounded up) for DynamoDB TTL', async () => {
      const cluster = freshCluster();
      await storeFor(cluster).markUnavailable(spotM5, T0 + 1_500, 'ICE');
      const { Item } = await db.client.send(new GetCommand({ TableName: db.tableName, Key: offeringKey(cluster, spotM5), ConsistentRead: true }));
      expect(Item).toMatchObject({ sk: 'OFFERING#m5.large#us-west-2a#spot', expiresAt: T0 + 1_500, ttl: T0 / 1000 + 2 });
    });

    it('wraps DynamoDB failures in a SkiffError with the SDK error as cause', async () => {
      const store = new DynamoDbUnavailableOfferingsStore({ client: db.client, tableName: 'no-such-table', cluster: 'c' });
      await expect(store.markUnavailable(spotM5, T0, 'ICE')).rejects.toSatisfy(
        (e) => e instanceof SkiffError && (e.cause as Error).name === 'ResourceNotFoundException',
      );
      await expect(store.listUnavailable(T0)).rejects.toBeInstanceOf(SkiffError);
    });
  });
});
