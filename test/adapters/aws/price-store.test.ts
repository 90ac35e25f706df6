import { DescribeSpotPriceHistoryCommand, EC2Client } from '@aws-sdk/client-ec2';
import { GetProductsCommand, PricingClient } from '@aws-sdk/client-pricing';
import { GetCommand, PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_CHUNK_BYTES,
  DynamoDbPriceStore,
  chunkPrices,
  estimatedTypeBytes,
  refreshPrices,
  type PriceSnapshot,
} from '../../../shared/adapters/aws/price-store.js';
import { clusterPk, priceChunkKey, priceSnapshotPointerKey } from '../../../shared/adapters/aws/table.js';
import { startDynalite, type LocalDynamoDb } from '../../../shared/cli/local-dynamodb.js';
import { CloudProviderError } from '../../../shared/core/errors.js';
import { loadCatalog } from '../../../shared/core/instancetypes/catalog.js';

let db: LocalDynamoDb;
let clusterSeq = 0;
const freshCluster = (): string => `prices${++clusterSeq}`;
let nonce = 0;
const ids = (): string => `n${String(++nonce).padStart(4, '0')}`;

beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

const T0 = Date.parse('2026-01-01T00:00:00Z');
const HOUR = 3_600_000;
const ZONES = ['us-west-2a', 'us-west-2b', 'us-west-2c', 'us-west-2d'];

/**
 * A snapshot over the catalogue's priced types: on-demand = list price × `factor`, spot = 30 % of that in every zone.
 * Every price of snapshot `factor` is derived from `factor`, so a mix of two snapshots is detectable.
 */
function snapshotAt(fetchedAt: number, factor = 1, types = loadCatalog().filter((t) => t.onDemandPrice !== null).slice(0, 200)): PriceSnapshot {
  const onDemand = new Map(types.map((t) => [t.name, round((t.onDemandPrice ?? 0) * factor)]));
  const spot = new Map(types.map((t) => [t.name, new Map(ZONES.map((z) => [z, round((t.onDemandPrice ?? 0) * factor * 0.3)]))]));
  return { region: 'us-west-2', fetchedAt, onDemand, spot };
}
const round = (n: number): number => Math.round(n * 1e6) / 1e6;

/** The prices of a snapshot as plain data, for equality. */
const plain = (s: Pick<PriceSnapshot, 'onDemand' | 'spot' | 'fetchedAt' | 'region'>): unknown => ({
  region: s.region,
  fetchedAt: s.fetchedAt,
  onDemand: Object.fromEntries(s.onDemand),
  spot: Object.fromEntries([...s.spot].map(([type, zones]) => [type, Object.fromEntries(zones)])),
});

/** Sort keys of every `PRICES#` item of a cluster. */
async function priceKeys(cluster: string): Promise<string[]> {
  const { Items } = await db.client.send(
    new QueryCommand({
      TableName: db.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': clusterPk(cluster), ':p': 'PRICES#' },
      ProjectionExpression: 'sk',
      ConsistentRead: true,
    }),
  );
  return (Items ?? []).map((i) => String(i['sk'])).sort();
}

/** A DocumentClient that runs `after(command)` after each call reaches dynalite, so a test can act mid-operation. */
function hookedClient(after: (command: unknown) => Promise<void>): DynamoDBDocumentClient {
  return {
    send: async (command: Parameters<DynamoDBDocumentClient['send']>[0]) => {
      const output = await db.client.send(command);
      await after(command);
      return output;
    },
  } as unknown as DynamoDBDocumentClient;
}

const storeFor = (cluster: string, maxChunkBytes?: number, client: DynamoDBDocumentClient = db.client): DynamoDbPriceStore =>
  new DynamoDbPriceStore({ client, tableName: db.tableName, cluster, ids, ...(maxChunkBytes !== undefined ? { maxChunkBytes } : {}) });

describe('DynamoDbPriceStore', () => {
  describe('latest', () => {
    it('returns undefined before any snapshot is stored', async () => {
      expect(await storeFor(freshCluster()).latest()).toBeUndefined();
    });

    it('returns what put stored: region, fetchedAt, every on-demand and spot price', async () => {
      const store = storeFor(freshCluster());
      const snapshot = snapshotAt(T0);
      const result = await store.put(snapshot);
      expect(result).toMatchObject({ outcome: 'stored', chunks: 1, deletedChunks: 0 });
      const latest = await store.latest();
      expect(latest?.version).toBe(result.version);
      expect(result.version).toMatch(/^1767225600000-n\d{4}$/);
      expect(plain(latest!)).toEqual(plain(snapshot));
    });

    it('stores a snapshot with no prices as one empty chunk', async () => {
      const store = storeFor(freshCluster());
      await store.put({ region: 'us-west-2', fetchedAt: T0, onDemand: new Map(), spot: new Map() });
      expect(plain((await store.latest())!)).toEqual({ region: 'us-west-2', fetchedAt: T0, onDemand: {}, spot: {} });
    });
  });

  describe('currentFetchedAt', () => {
    it('gives the current snapshot’s fetch time from the pointer alone, undefined before any', async () => {
      const store = storeFor(freshCluster());
      expect(await store.currentFetchedAt()).toBeUndefined();
      await store.put(snapshotAt(T0));
      await store.put(snapshotAt(T0 + 1000));
      await store.put(snapshotAt(T0 - 1000));
      expect(await store.currentFetchedAt()).toBe(T0 + 1000);
    });
  });

  describe('put', () => {
    it('splits a snapshot into chunks under the size budget and reads them back whole', async () => {
      const cluster = freshCluster();
      const store = storeFor(cluster, 4_000);
      const snapshot = snapshotAt(T0);
      const result = await store.put(snapshot);
      expect(result.outcome).toBe('stored');
      const chunks = result.outcome === 'stored' ? result.chunks : 0;
      expect(chunks).toBeGreaterThan(5);
      expect(await priceKeys(cluster)).toEqual([
        ...Array.from({ length: chunks }, (_, i) => priceChunkKey(cluster, result.version, i).sk),
        priceSnapshotPointerKey(cluster).sk,
      ]);
      expect(plain((await store.latest())!)).toEqual(plain(snapshot));
    });

    it('keeps a snapshot far above the 400 KB item limit in items DynamoDB accepts', async () => {
      const types = Array.from({ length: 3000 }, (_, i) => ({ name: `zz${i}.48xlarge`, onDemandPrice: 1 + i / 1000 }));
      const big: PriceSnapshot = {
        region: 'us-east-1',
        fetchedAt: T0,
        onDemand: new Map(types.map((t) => [t.name, t.onDemandPrice])),
        spot: new Map(types.map((t) => [t.name, new Map(['a', 'b', 'c', 'd', 'e', 'f'].map((z) => [`us-east-1${z}`, t.onDemandPrice / 3]))])),
      };
      // As one item it is refused.
      const [whole] = chunkPrices(big, Number.POSITIVE_INFINITY);
      await expect(db.client.send(new PutCommand({ TableName: db.tableName, Item: { pk: 'CLUSTER#whole', sk: 'PRICES#whole', ...whole } }))).rejects.toThrow(/size/i);
      const store = storeFor(freshCluster());
      const result = await store.put(big);
      expect(result.outcome === 'stored' && result.chunks).toBeGreaterThan(1);
      expect(plain((await store.latest())!)).toEqual(plain(big));
    });

    it('replaces an older snapshot, keeps the one it replaced and deletes older ones', async () => {
      const cluster = freshCluster();
      const store = storeFor(cluster, 20_000);
      const first = await store.put(snapshotAt(T0, 1));
      const second = await store.put(snapshotAt(T0 + HOUR, 2));
      const third = await store.put(snapshotAt(T0 + 2 * HOUR, 3));
      expect(second).toMatchObject({ outcome: 'stored', replaced: first.version, deletedChunks: 0 });
      expect(third).toMatchObject({ outcome: 'stored', replaced: second.version });
      const firstChunks = first.outcome === 'stored' ? first.chunks : 0;
      expect(third.outcome === 'stored' && third.deletedChunks).toBe(firstChunks);
      const versions = new Set((await priceKeys(cluster)).map((sk) => sk.split('#')[1]));
      expect(versions).toEqual(new Set([second.version, third.version, 'CURRENT']));
      expect(plain((await store.latest())!)).toEqual(plain(snapshotAt(T0 + 2 * HOUR, 3)));
    });

    it('never lets an older snapshot replace a newer one, and removes the loser’s chunks', async () => {
      const cluster = freshCluster();
      const store = storeFor(cluster, 20_000);
      const newer = await store.put(snapshotAt(T0 + HOUR, 2));
      const older = await store.put(snapshotAt(T0, 1));
      expect(older).toEqual({ outcome: 'superseded', version: older.version });
      expect(plain((await store.latest())!)).toEqual(plain(snapshotAt(T0 + HOUR, 2)));
      expect((await priceKeys(cluster)).filter((sk) => sk.includes(older.version))).toEqual([]);
      expect((await store.latest())?.version).toBe(newer.version);
    });

    it('treats a snapshot with the same fetchedAt as already stored (a repeated refresh is a no-op)', async () => {
      const store = storeFor(freshCluster());
      const first = await store.put(snapshotAt(T0));
      expect((await store.put(snapshotAt(T0, 5))).outcome).toBe('superseded');
      expect((await store.latest())?.version).toBe(first.version);
    });

    it('keeps the newest of overlapping writes whatever order they finish in', async () => {
      for (const order of [[0, 1, 2], [2, 1, 0], [1, 2, 0]] as const) {
        const cluster = freshCluster();
        const store = storeFor(cluster, 8_000);
        const results = await Promise.all(order.map((k) => store.put(snapshotAt(T0 + k * HOUR, k + 1))));
        expect(plain((await store.latest())!)).toEqual(plain(snapshotAt(T0 + 2 * HOUR, 3)));
        const winner = results[order.indexOf(2)];
        expect(winner?.outcome).toBe('stored');
        expect((await store.latest())?.version).toBe(winner?.version);
      }
    });
  });

  describe('a reader during a write', () => {
    it('sees the old snapshot until the pointer flips, then the new one — never a mix', async () => {
      const cluster = freshCluster();
      await storeFor(cluster, 4_000).put(snapshotAt(T0, 1));
      const reader = storeFor(cluster);
      const seen: unknown[] = [];
      const writer = storeFor(
        cluster,
        4_000,
        hookedClient(async (command) => {
          // After every write the writer makes (each chunk, then the pointer), read the whole snapshot.
          if (command instanceof PutCommand) seen.push(plain((await reader.latest())!));
        }),
      );
      await writer.put(snapshotAt(T0 + HOUR, 2));
      const old = plain(snapshotAt(T0, 1));
      const fresh = plain(snapshotAt(T0 + HOUR, 2));
      expect(seen.length).toBeGreaterThan(5);
      expect(seen.slice(0, -1).every((s) => JSON.stringify(s) === JSON.stringify(old))).toBe(true);
      expect(seen.at(-1)).toEqual(fresh);
    });

    it('starts over when the version it is reading is deleted under it (two refreshes later)', async () => {
      const cluster = freshCluster();
      const writer = storeFor(cluster, 4_000);
      await writer.put(snapshotAt(T0, 1));
      let armed = true;
      const reader = storeFor(
        cluster,
        undefined,
        hookedClient(async (command) => {
          if (!armed || !(command instanceof GetCommand)) return;
          armed = false;
          // The reader has the pointer to snapshot 1; two refreshes replace it and delete its chunks.
          await writer.put(snapshotAt(T0 + HOUR, 2));
          await writer.put(snapshotAt(T0 + 2 * HOUR, 3));
        }),
      );
      expect(plain((await reader.latest())!)).toEqual(plain(snapshotAt(T0 + 2 * HOUR, 3)));
    });

    it('never mixes snapshots while many writes and reads overlap', async () => {
      const cluster = freshCluster();
      const writer = storeFor(cluster, 4_000);
      const reader = storeFor(cluster);
      await writer.put(snapshotAt(T0, 1));
      let writing = true;
      const writes = (async () => {
        for (let k = 2; k <= 8; k++) await writer.put(snapshotAt(T0 + k * HOUR, k));
        writing = false;
      })();
      const factors: number[] = [];
      while (writing) {
        const s = (await reader.latest())!;
        const factor = Math.round((s.fetchedAt - T0) / HOUR) || 1;
        expect(plain(s)).toEqual(plain(snapshotAt(s.fetchedAt, factor)));
        factors.push(factor);
      }
      await writes;
      expect(factors.length).toBeGreaterThan(0);
      expect(factors).toEqual([...factors].sort((a, b) => a - b));
    });
  });
});

describe('chunkPrices', () => {
  it('packs types in name order without splitting one, each chunk within the budget', () => {
    const snapshot = snapshotAt(T0);
    const budget = 3_000;
    const chunks = chunkPrices(snapshot, budget);
    const names = chunks.flatMap((c) => [...new Set([...Object.keys(c.onDemand), ...Object.keys(c.spot)])]);
    expect(names).toEqual([...snapshot.onDemand.keys()].sort());
    for (const chunk of chunks) {
      const bytes = Object.keys(chunk.onDemand).reduce((n, t) => n + estimatedTypeBytes(t, true, snapshot.spot.get(t)), 0);
      expect(bytes + 512).toBeLessThanOrEqual(budget);
    }
  });

  it('gives a type bigger than the budget a chunk of its own', () => {
    const spot = new Map([['huge.type', new Map(Array.from({ length: 50 }, (_, i) => [`zone-${i}`, 0.1]))]]);
    const chunks = chunkPrices({ onDemand: new Map([['a.large', 1], ['huge.type', 2], ['z.large', 3]]), spot }, 800);
    expect(chunks.map((c) => Object.keys(c.onDemand))).toEqual([['a.large'], ['huge.type'], ['z.large']]);
  });

  it('fits a realistic region (1,000 types × 6 zones) in at most two chunks by default', () => {
    const types = Array.from({ length: 1000 }, (_, i) => `m${i}.24xlarge`);
    const snapshot = { onDemand: new Map(types.map((t) => [t, 1.234567])), spot: new Map(types.map((t) => [t, new Map(ZONES.concat(['us-west-2e', 'us-west-2f']).map((z) => [z, 0.4321]))])) };
    expect(chunkPrices(snapshot, DEFAULT_MAX_CHUNK_BYTES).length).toBeLessThanOrEqual(2);
  });
});

describe('refreshPrices', () => {
  const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
  const pricing = new PricingClient({ region: 'us-east-1', credentials });
  const ec2 = new EC2Client({ region: 'us-west-2', credentials });
  const pricingMock = mockClient(pricing);
  const ec2Mock = mockClient(ec2);
  const entry = (instanceType: string, usd: string): string =>
    JSON.stringify({
      product: { productFamily: 'Compute Instance', attributes: { instanceType, regionCode: 'us-west-2', operatingSystem: 'Linux', tenancy: 'Shared' }, sku: 'S' },
      serviceCode: 'AmazonEC2',
      terms: { OnDemand: { 'S.JRTCKXETXF': { offerTermCode: 'JRTCKXETXF', sku: 'S', priceDimensions: { 'S.JRTCKXETXF.6YS6EN2CT7': { unit: 'Hrs', pricePerUnit: { USD: usd } } } } } },
    });
  beforeEach(() => {
    pricingMock.reset();
    ec2Mock.reset();
    pricingMock.on(GetProductsCommand).callsFake((input: { Filters?: { Value?: string }[] }) =>
      input.Filters?.some((f) => f.Value === 'Shared') ? { PriceList: [entry('m5.large', '0.0960000000'), entry('c6g.xlarge', '0.1360000000')] } : { PriceList: [] },
    );
    ec2Mock.on(DescribeSpotPriceHistoryCommand).resolves({
      SpotPriceHistory: [
        { InstanceType: 'm5.large', AvailabilityZone: 'us-west-2a', SpotPrice: '0.0374', Timestamp: new Date(T0), ProductDescription: 'Linux/UNIX' },
        { InstanceType: 'm5.large', AvailabilityZone: 'us-west-2b', SpotPrice: '0.0391', Timestamp: new Date(T0), ProductDescription: 'Linux/UNIX' },
      ],
    });
  });
  const clockAt = (t: number) => ({ now: () => t });

  it('fetches both price lists and stores them as one snapshot stamped with the clock', async () => {
    const store = storeFor(freshCluster());
    const result = await refreshPrices({ pricing, ec2, store, clock: clockAt(T0), region: 'us-west-2' });
    expect(result).toMatchObject({ outcome: 'stored', fetchedAt: T0, onDemandTypes: 2, spotOfferings: 2 });
    expect(plain((await store.latest())!)).toEqual({
      region: 'us-west-2',
      fetchedAt: T0,
      onDemand: { 'm5.large': 0.096, 'c6g.xlarge': 0.136 },
      spot: { 'm5.large': { 'us-west-2a': 0.0374, 'us-west-2b': 0.0391 } },
    });
    expect(ec2Mock.commandCalls(DescribeSpotPriceHistoryCommand)[0]?.args[0].input.StartTime).toEqual(new Date(T0));
  });

  it('keeps the newer snapshot when an older refresh finishes last', async () => {
    const store = storeFor(freshCluster());
    const late = await refreshPrices({ pricing, ec2, store, clock: clockAt(T0 + HOUR), region: 'us-west-2' });
    const early = await refreshPrices({ pricing, ec2, store, clock: clockAt(T0), region: 'us-west-2' });
    expect([late.outcome, early.outcome]).toEqual(['stored', 'superseded']);
    expect((await store.latest())?.fetchedAt).toBe(T0 + HOUR);
  });

  it('stores nothing and throws when a price list comes back empty', async () => {
    const store = storeFor(freshCluster());
    await refreshPrices({ pricing, ec2, store, clock: clockAt(T0), region: 'us-west-2' });
    ec2Mock.on(DescribeSpotPriceHistoryCommand).resolves({ SpotPriceHistory: [] });
    await expect(refreshPrices({ pricing, ec2, store, clock: clockAt(T0 + HOUR), region: 'us-west-2' })).rejects.toMatchObject({ code: 'NoSpotPrices' });
    pricingMock.on(GetProductsCommand).resolves({ PriceList: [] });
    await expect(refreshPrices({ pricing, ec2, store, clock: clockAt(T0 + HOUR), region: 'us-west-2' })).rejects.toBeInstanceOf(CloudProviderError);
    expect((await store.latest())?.fetchedAt).toBe(T0);
  });
});
