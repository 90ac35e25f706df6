import { DynamoDBClient, ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbNodeClaimStore } from '../../../shared/adapters/aws/dynamodb-nodeclaim-store.js';
import { INSTANCE_KEY, nodeClaimKey } from '../../../shared/adapters/aws/table.js';
import type { NodeClaim, NodeClaimState } from '../../../shared/core/api/nodeclaim.js';
import { ConflictError, SkiffError, ThrottledError, isConflictError } from '../../../shared/core/errors.js';
import { localClientConfig, startDynalite, type LocalDynamoDb } from '../../../shared/cli/local-dynamodb.js';

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

/** A Pending NodeClaim as the provisioner writes it; `overrides` replace fields. */
function aNodeClaim(overrides: Partial<Omit<NodeClaim, 'version'>> = {}): Omit<NodeClaim, 'version'> {
  return {
    name: 'default-x7k2p',
    nodePool: 'default',
    nodeClass: 'default',
    state: 'Pending',
    requirements: [
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] },
      { key: 'karpenter.k8s.aws/instance-cpu', operator: 'Gte', values: ['4'], minValues: 2 },
    ],
    instanceTypes: ['m5.large', 'm5.xlarge', 'c5.xlarge'],
    resources: { cpu: 1500, memory: 3072.5, pods: 3 },
    labels: { 'karpenter.sh/nodepool': 'default' },
    taints: [{ key: 'dedicated', value: 'batch', effect: 'NoSchedule' }],
    startupTaints: [{ key: 'node.cilium.io/agent-not-ready', effect: 'NoExecute' }],
    nominatedPods: ['default/web-0', 'default/web-1'],
    createdAt: '2025-01-01T00:00:00.000Z',
    ...overrides,
  };
}

/** The fields a launch records. */
const launched = {
  state: 'Launched',
  instanceId: 'i-0123456789abcdef0',
  providerId: 'aws:///us-west-2a/i-0123456789abcdef0',
  instanceType: 'm5.large',
  zone: 'us-west-2a',
  capacityType: 'spot',
  price: 0.0391,
  launchedAt: '2025-01-01T00:00:05.000Z',
} as const satisfies Partial<NodeClaim>;

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('DynamoDbNodeClaimStore', () => {
  describe('create', () => {
    it('stores the record with version 1 and returns what get returns', async () => {
      const store = storeFor();
      const created = await store.create(aNodeClaim());
      expect(created).toStrictEqual({ ...aNodeClaim(), version: 1 });
      expect(await store.get(created.name)).toStrictEqual(created);
    });

    it('stores labels and annotations whose keys are named like Object.prototype members (constructor, toString)', async () => {
      // The marshaller tells a plain object by value.constructor.name: a `constructor` label once failed every write.
      const store = storeFor();
      const labels = { 'karpenter.sh/nodepool': 'default', constructor: 'a', toString: 'b', prototype: 'c' };
      const created = await store.create(aNodeClaim({ labels, annotations: { constructor: 'd' } }));
      expect(await store.get(created.name)).toStrictEqual({ ...aNodeClaim({ labels, annotations: { constructor: 'd' } }), version: 1 });
    });

    it('ignores a version on its argument', async () => {
      const store = storeFor();
      const created = await store.create({ ...aNodeClaim(), version: 7 } as NodeClaim);
      expect(created.version).toBe(1);
      expect((await store.get(created.name))?.version).toBe(1);
    });

    it('throws ConflictError with the key when the name exists, and keeps the first record', async () => {
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

  describe('get', () => {
    it('returns undefined when there is no record', async () => {
      expect(await storeFor().get('missing')).toBeUndefined();
    });
  });

  describe('update', () => {
    it('writes the record with version + 1 when the version matches', async () => {
      const store = storeFor();
      const v1 = await store.create(aNodeClaim());
      const v2 = await store.update({ ...v1, ...launched });
      expect(v2).toStrictEqual({ ...v1, ...launched, version: 2 });
      expect(await store.get(v1.name)).toStrictEqual(v2);
    });

    it('throws ConflictError and leaves the record unchanged when the version is stale', async () => {
      const cluster = freshCluster();
      const store = storeFor(cluster);
      const v1 = await store.create(aNodeClaim());
      const v2 = await store.update({ ...v1, ...launched });
      const error = await rejection(store.update({ ...v1, state: 'Failed', launchError: 'InsufficientInstanceCapacity' }));
      expect(error).toBeInstanceOf(ConflictError);
      expect((error as ConflictError).key).toBe(`CLUSTER#${cluster}/NODECLAIM#${v1.name}`);
      expect(await store.get(v1.name)).toStrictEqual(v2);
    });

    it('throws ConflictError when the version is ahead of the stored one', async () => {
      const store = storeFor();
      const v1 = await store.create(aNodeClaim());
      await expect(store.update({ ...v1, version: 2 })).rejects.toBeInstanceOf(ConflictError);
      expect(await store.get(v1.name)).toStrictEqual(v1);
    });

    it('throws ConflictError when the record does not exist, and does not create it', async () => {
      const store = storeFor();
      await expect(store.update({ ...aNodeClaim(), version: 1 })).rejects.toBeInstanceOf(ConflictError);
      expect(await store.get(aNodeClaim().name)).toBeUndefined();
    });

    it('lets exactly one of 10 concurrent updates of the same version win', async () => {
      const store = storeFor();
      const v1 = await store.create(aNodeClaim());
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) => store.update({ ...v1, nodeName: `ip-10-0-0-${i}.us-west-2.compute.internal` })),
      );
      const winners = results.filter((r) => r.status === 'fulfilled');
      const losers = results.filter((r) => r.status === 'rejected');
      expect(winners).toHaveLength(1);
      expect(losers.every((r) => isConflictError(r.reason))).toBe(true);
      const stored = await store.get(v1.name);
      expect(stored).toStrictEqual(winners[0]?.value);
      expect(stored?.version).toBe(2);
    });
  });

  describe('optional fields', () => {
    it('round-trip when set, and disappear when an update leaves them undefined', async () => {
      const store = storeFor();
      const v1 = await store.create(aNodeClaim());
      const v2 = await store.update({
        ...v1,
        ...launched,
        nodeName: 'ip-10-0-0-1.us-west-2.compute.internal',
        allocatable: { cpu: 1930, memory: 6903, pods: 29 },
        registeredAt: '2025-01-01T00:00:40.000Z',
        initializedAt: '2025-01-01T00:00:50.000Z',
      });
      expect(await store.get(v1.name)).toStrictEqual(v2);

      const cleared: NodeClaim = {
        ...v2,
        state: 'Deleted',
        instanceId: undefined,
        providerId: undefined,
        nodeName: undefined,
        price: undefined,
        allocatable: undefined,
        deletedAt: '2025-01-01T01:00:00.000Z',
        deletionReason: 'Empty',
      };
      const v3 = await store.update(cleared);
      const stored = await store.get(v1.name);
      expect(stored).toStrictEqual(v3);
      for (const field of ['instanceId', 'providerId', 'nodeName', 'price', 'allocatable'] as const) expect(stored).not.toHaveProperty(field);
      expect(v3).not.toHaveProperty('instanceId');
    });

    it('are left out even with a DocumentClient that does not remove undefined values', async () => {
      const store = new DynamoDbNodeClaimStore({ client: separateClient(), tableName: db.tableName, cluster: freshCluster() });
      const created = await store.create(aNodeClaim({ instanceId: undefined, taints: [{ key: 'k', value: undefined, effect: 'NoSchedule' }] }));
      expect(created).not.toHaveProperty('instanceId');
      expect(created.taints).toStrictEqual([{ key: 'k', effect: 'NoSchedule' }]);
      expect(await store.get(created.name)).toStrictEqual(created);
    });

    it('keep empty strings, empty lists and empty maps', async () => {
      const store = storeFor();
      const created = await store.create(aNodeClaim({ launchError: '', labels: {}, taints: [], nominatedPods: [], resources: {} }));
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
    it('returns every record of the cluster in name order, deleted and failed ones included', async () => {
      const store = storeFor();
      const other = storeFor();
      await other.create(aNodeClaim({ name: 'other-cluster' }));
      for (const [name, state] of [['c', 'Deleted'], ['a', 'Pending'], ['b', 'Failed']] as const) {
        await store.create(aNodeClaim({ name, state: state satisfies NodeClaimState }));
      }
      const list = await store.list();
      expect(list.map((c) => [c.name, c.state])).toEqual([
        ['a', 'Pending'],
        ['b', 'Failed'],
        ['c', 'Deleted'],
      ]);
      expect(list[0]).toStrictEqual(await store.get('a'));
    });

    it('returns an empty list for an empty cluster', async () => {
      expect(await storeFor().list()).toEqual([]);
    });

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
    it('returns the record launched as the instance', async () => {
      const store = storeFor();
      const v1 = await store.create(aNodeClaim());
      await store.create(aNodeClaim({ name: 'pending-one' }));
      const v2 = await store.update({ ...v1, ...launched });
      expect(await store.findByInstanceId(launched.instanceId)).toStrictEqual(v2);
    });

    it('returns undefined for an unknown instance id, and for a Pending record without one', async () => {
      const store = storeFor();
      await store.create(aNodeClaim());
      expect(await store.findByInstanceId('i-00000000000000000')).toBeUndefined();
    });

    it('does not see records of another cluster', async () => {
      const a = storeFor();
      const b = storeFor();
      const v1 = await a.create(aNodeClaim());
      await a.update({ ...v1, ...launched });
      expect(await b.findByInstanceId(launched.instanceId)).toBeUndefined();
    });

    it('follows the record when its instance id changes or is removed', async () => {
      const store = storeFor();
      const v1 = await store.create(aNodeClaim());
      const v2 = await store.update({ ...v1, ...launched });
      const v3 = await store.update({ ...v2, instanceId: 'i-0fedcba9876543210' });
      expect(await store.findByInstanceId(launched.instanceId)).toBeUndefined();
      expect(await store.findByInstanceId('i-0fedcba9876543210')).toStrictEqual(v3);
      await store.update({ ...v3, instanceId: undefined });
      expect(await store.findByInstanceId('i-0fedcba9876543210')).toBeUndefined();
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

  describe('invariants', () => {
    const states = ['Pending', 'Launched', 'Registered', 'Initialized', 'Deleting', 'Deleted', 'Failed'] as const;
    const optional = <T,>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(arb, { nil: undefined });
    /** Every mutable field of a NodeClaim; optional ones are sometimes `undefined`. */
    const fields = fc.record({
      state: fc.constantFrom(...states),
      instanceTypes: fc.array(fc.constantFrom('m5.large', 'c6g.xlarge', 'r7i.2xlarge'), { maxLength: 4 }),
      resources: fc.dictionary(fc.constantFrom('cpu', 'memory', 'pods', 'nvidia.com/gpu'), fc.integer({ min: 0, max: 1_000_000 })),
      labels: fc.dictionary(fc.constantFrom('team', 'karpenter.sh/nodepool', 'topology.kubernetes.io/zone'), fc.string({ unit: 'grapheme', maxLength: 8 })),
      taints: fc.array(fc.record({ key: fc.string({ minLength: 1, maxLength: 6 }), value: optional(fc.string({ maxLength: 6 })), effect: fc.constantFrom('NoSchedule', 'NoExecute') }), { maxLength: 2 }),
      instanceId: optional(fc.constantFrom('i-1', 'i-2', 'i-3')),
      nodeName: optional(fc.string({ maxLength: 12 })),
      price: optional(fc.integer({ min: 0, max: 100_000 }).map((n) => n / 10_000)),
      capacityType: optional(fc.constantFrom('spot', 'on-demand') as fc.Arbitrary<'spot' | 'on-demand'>),
      launchError: optional(fc.string({ maxLength: 10 })),
    });
    const op = fc.oneof(
      fc.record({ kind: fc.constant('create' as const), name: fc.constantFrom('a', 'b', 'c'), fields }),
      fc.record({ kind: fc.constant('update' as const), name: fc.constantFrom('a', 'b', 'c'), versionDelta: fc.constantFrom(0, 0, 0, -1, 1), fields }),
    );
    /** What the store should hold: JSON drops `undefined` properties, as the store does. */
    const normalised = (claim: NodeClaim): NodeClaim => JSON.parse(JSON.stringify(claim)) as NodeClaim;

    it('keeps version monotonic and the record equal to the last successful write, whatever the operations', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 15 }), async (ops) => {
          const store = storeFor();
          const model = new Map<string, NodeClaim>();
          for (const o of ops) {
            const before = model.get(o.name);
            if (o.kind === 'create') {
              const claim = aNodeClaim({ name: o.name, ...o.fields });
              const result = await store.create(claim).then(
                (r) => ({ ok: true as const, r }),
                (e: unknown) => ({ ok: false as const, e }),
              );
              expect(result.ok).toBe(before === undefined);
              if (result.ok) {
                expect(result.r).toStrictEqual(normalised({ ...claim, version: 1 }));
                model.set(o.name, result.r);
              } else expect(result.e).toBeInstanceOf(ConflictError);
            } else {
              const version = (before?.version ?? 1) + o.versionDelta;
              const claim: NodeClaim = { ...(before ?? { ...aNodeClaim({ name: o.name }), version }), ...o.fields, version };
              const result = await store.update(claim).then(
                (r) => ({ ok: true as const, r }),
                (e: unknown) => ({ ok: false as const, e }),
              );
              expect(result.ok).toBe(before !== undefined && o.versionDelta === 0);
              if (result.ok) {
                expect(result.r.version).toBe(version + 1);
                expect(result.r).toStrictEqual(normalised({ ...claim, version: version + 1 }));
                model.set(o.name, result.r);
              } else expect(result.e).toBeInstanceOf(ConflictError);
            }
            const stored = await store.get(o.name);
            expect(stored).toStrictEqual(model.get(o.name));
            expect(stored?.version ?? 0).toBeGreaterThanOrEqual(before?.version ?? 0);
          }
          expect(await store.list()).toStrictEqual([...model.values()].sort((x, y) => (x.name < y.name ? -1 : 1)));
        }),
        { numRuns: 30 },
      );
    });
  });
});
