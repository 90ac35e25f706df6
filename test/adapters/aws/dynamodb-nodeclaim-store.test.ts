import { DynamoDBClient, ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbNodeClaimStore } from '../../../shared/adapters/aws/dynamodb-nodeclaim-store.js';
import { INSTANCE_KEY, nodeClaimKey } from '../../../shared/adapters/aws/table.js';
import type { NodeClaim } from '../../../shared/core/api/nodeclaim.js';
import { ConflictError, SkiffError, ThrottledError } from '../../../shared/core/errors.js';
import { localClientConfig, startDynalite, type LocalDynamoDb } from '../../../shared/cli/local-dynamodb.js';
import { LAUNCHED as launched, aNodeClaim, describeNodeClaimStoreContract, rejection } from '../../support/nodeclaim-store-contract.js';

let db: LocalDynamoDb;
let clusterSeq = 0;
/** Each test gets its own cluster, i.e. its own partition of the one table. */
const freshCluster = (): string => `c${++clusterSeq}`;
const storeFor = (cluster = freshCluster(), pageSize?: number): DynamoDbNodeClaimStore =>
  new DynamoDbNodeClaimStore({ client: db.client, tableName: db.tableName, cluster, ...(pageSize !== undefined ? { pageSize } : {}) });

/** Extra clients a test builds (for middleware it must not install on the shared one); destroyed after each test. */
const extraClients: DynamoDBClient[] = [];
function separateClient(): DynamoDBDocumentClient {
  const base = new DynamoDBClient(localClientConfig(db.endpoint));
  extraClients.push(base);
  return DynamoDBDocumentClient.from(base); // deliberately without removeUndefinedValues
}

beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});
afterEach(() => {
  for (const c of extraClients.splice(0)) c.destroy();
});

// The port's semantics (create, update, conflicts, get, list order, findByInstanceId, copies, a model-based property)
// are the shared contract; this file adds what is the adapter's own: the table layout, partitions per cluster,
// pagination, the DocumentClient's translation config and the SDK errors.
describeNodeClaimStoreContract('DynamoDbNodeClaimStore on dynalite', (cluster) => storeFor(cluster));

describe('DynamoDbNodeClaimStore', () => {
  describe('create', () => {
    it('stores labels and annotations whose keys are named like Object.prototype members (constructor, toString)', async () => {
      // The marshaller tells a plain object by value.constructor.name: a `constructor` label once failed every write.
      const store = storeFor();
      const labels = { 'karpenter.sh/nodepool': 'default', constructor: 'a', toString: 'b', prototype: 'c' };
      const created = await store.create(aNodeClaim({ labels, annotations: { constructor: 'd' } }));
      expect(await store.get(created.name)).toStrictEqual({ ...aNodeClaim({ labels, annotations: { constructor: 'd' } }), version: 1 });
    });

    it('throws ConflictError with the key and the SDK’s ConditionalCheckFailedException as cause when the name exists, and keeps the first record', async () => {
      const cluster = freshCluster();
      const store = storeFor(cluster);
      const first = await store.create(aNodeClaim());
      const error = await rejection(store.create(aNodeClaim({ nodePool: 'other' })));
      expect(error).toBeInstanceOf(ConflictError);
      expect((error as ConflictError).key).toBe(`CLUSTER#${cluster}/NODECLAIM#default-x7k2p`);
      expect((error as ConflictError).cause).toMatchObject({ name: 'ConditionalCheckFailedException' });
      expect(await store.get(first.name)).toStrictEqual(first);
    });

    it('lets two clusters use the same name', async () => {
      const [a, b] = [storeFor(), storeFor()];
      await a.create(aNodeClaim({ nodePool: 'a' }));
      await b.create(aNodeClaim({ nodePool: 'b' }));
      expect((await a.get('default-x7k2p'))?.nodePool).toBe('a');
      expect((await b.get('default-x7k2p'))?.nodePool).toBe('b');
    });
  });

  describe('optional fields', () => {
    it('are left out even with a DocumentClient that does not remove undefined values', async () => {
      const store = new DynamoDbNodeClaimStore({ client: separateClient(), tableName: db.tableName, cluster: freshCluster() });
      const created = await store.create(aNodeClaim({ instanceId: undefined, taints: [{ key: 'k', value: undefined, effect: 'NoSchedule' }] }));
      expect(created).not.toHaveProperty('instanceId');
      expect(created.taints).toStrictEqual([{ key: 'k', effect: 'NoSchedule' }]);
      expect(await store.get(created.name)).toStrictEqual(created);
    });

    it('store no table attribute in the record', async () => {
      const cluster = freshCluster();
      const store = storeFor(cluster);
      const v1 = await store.create(aNodeClaim());
      await store.update({ ...v1, ...launched });
      const { Item } = await db.client.send(new GetCommand({ TableName: db.tableName, Key: nodeClaimKey(cluster, v1.name), ConsistentRead: true }));
      expect(Item?.[INSTANCE_KEY]).toBe(`INSTANCE#${cluster}#${launched.instanceId}`);
      const read = await store.get(v1.name);
      expect(read).not.toHaveProperty('pk');
      expect(read).not.toHaveProperty('sk');
      expect(read).not.toHaveProperty(INSTANCE_KEY);
    });
  });

  describe('list', () => {
    it('follows LastEvaluatedKey across pages (Limit 3)', async () => {
      const cluster = freshCluster();
      const client = separateClient();
      let queries = 0;
      client.middlewareStack.add(
        (next, context) => (args) => {
          if (context.commandName === 'QueryCommand') queries++;
          return next(args);
        },
        { step: 'initialize', name: 'countQueries' },
      );
      const store = new DynamoDbNodeClaimStore({ client, tableName: db.tableName, cluster, pageSize: 3 });
      const names = Array.from({ length: 10 }, (_, i) => `claim-${String(i).padStart(2, '0')}`);
      await Promise.all([...names].reverse().map((name) => store.create(aNodeClaim({ name }))));
      expect((await store.list()).map((c) => c.name)).toEqual(names);
      expect(queries).toBe(4); // 3 + 3 + 3 + 1
    });

    it('follows LastEvaluatedKey past DynamoDB’s 1 MB page', async () => {
      const cluster = freshCluster();
      const client = separateClient();
      let queries = 0;
      client.middlewareStack.add(
        (next, context) => (args) => {
          if (context.commandName === 'QueryCommand') queries++;
          return next(args);
        },
        { step: 'initialize', name: 'countQueries' },
      );
      const store = new DynamoDbNodeClaimStore({ client, tableName: db.tableName, cluster });
      // Eight items of ~170 KB (4,000 nominated pods of 42 bytes; the item limit is 400 KB) make ~1.4 MB: two 1 MB pages.
      const nominatedPods = Array.from({ length: 4_000 }, (_, i) => `namespace-${i % 7}/deployment-abcdef-${String(i).padStart(6, '0')}-xyz12`);
      const names = Array.from({ length: 8 }, (_, i) => `big-${i}`);
      await Promise.all(names.map((name) => store.create(aNodeClaim({ name, nominatedPods }))));
      const list = await store.list();
      expect(list.map((c) => c.name)).toEqual(names);
      expect(list.every((c) => c.nominatedPods.length === 4_000)).toBe(true);
      expect(queries).toBeGreaterThanOrEqual(2);
    });
  });

  describe('findByInstanceId', () => {
    it('does not see records of another cluster', async () => {
      const a = storeFor();
      const b = storeFor();
      const v1 = await a.create(aNodeClaim());
      await a.update({ ...v1, ...launched });
      expect(await b.findByInstanceId(launched.instanceId)).toBeUndefined();
    });
  });

  describe('errors', () => {
    it('wraps a non-conditional DynamoDB error in a SkiffError with the SDK error as cause', async () => {
      const store = new DynamoDbNodeClaimStore({ client: db.client, tableName: 'no-such-table', cluster: 'c' });
      for (const call of [store.get('a'), store.create(aNodeClaim()), store.list(), store.findByInstanceId('i-1')]) {
        const error = await rejection(call);
        expect(error).toBeInstanceOf(SkiffError);
        expect(error).not.toBeInstanceOf(ConflictError);
        expect((error as SkiffError).cause).toMatchObject({ name: 'ResourceNotFoundException' });
        expect((error as SkiffError).message).toMatch(/^DynamoDB (GetItem|PutItem|Query) CLUSTER#c/);
      }
    });

    it('turns throttling the SDK gave up on into ThrottledError (injected: dynalite never throttles)', async () => {
      const client = separateClient();
      client.middlewareStack.add(
        () => () => Promise.reject(new ProvisionedThroughputExceededException({ message: 'Rate exceeded', $metadata: {} })),
        { step: 'initialize', name: 'throttle' },
      );
      const store = new DynamoDbNodeClaimStore({ client, tableName: db.tableName, cluster: freshCluster() });
      const error = await rejection(store.update({ ...aNodeClaim(), version: 1 }));
      expect(error).toBeInstanceOf(ThrottledError);
      expect((error as ThrottledError).cause).toBeInstanceOf(ProvisionedThroughputExceededException);
    });
  });
});
