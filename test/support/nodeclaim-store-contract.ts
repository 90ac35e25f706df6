/**
 * The NodeClaimStore contract (the port's `shared/ports/nodeclaim-store.ts` and the DynamoDB adapter's documented
 * semantics), as one suite that every implementation runs: the DynamoDB adapter on dynalite
 * (`test/adapters/aws/dynamodb-nodeclaim-store.test.ts`) and the in-memory store (`test/sim/memory-nodeclaim-store.test.ts`).
 * A behaviour the fake gets wrong fails here, beside the same assertion passing on the real adapter.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NodeClaim, NodeClaimState } from '../../shared/core/api/nodeclaim.js';
import { ConflictError, isConflictError } from '../../shared/core/errors.js';
import type { NodeClaimStore } from '../../shared/ports/nodeclaim-store.js';

/** How the suite gets a store: an empty one that sees only the cluster `cluster` (a fresh name for every call). */
export type NodeClaimStoreFactory = (cluster: string) => NodeClaimStore;

/** A Pending NodeClaim as the provisioner writes it; `overrides` replace fields. */
export function aNodeClaim(overrides: Partial<Omit<NodeClaim, 'version'>> = {}): Omit<NodeClaim, 'version'> {
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
export const LAUNCHED = {
  state: 'Launched',
  instanceId: 'i-0123456789abcdef0',
  providerId: 'aws:///us-west-2a/i-0123456789abcdef0',
  instanceType: 'm5.large',
  zone: 'us-west-2a',
  capacityType: 'spot',
  price: 0.0391,
  launchedAt: '2025-01-01T00:00:05.000Z',
} as const satisfies Partial<NodeClaim>;

/** The error `promise` rejects with. @throws when it resolves */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

let clusterSeq = 0;

/**
 * Registers the contract suite under `describe(name)`.
 * @param name the implementation, e.g. `DynamoDbNodeClaimStore on dynalite`
 * @param newStore an empty store for a fresh cluster name (the suite never reuses a name)
 */
export function describeNodeClaimStoreContract(name: string, newStore: NodeClaimStoreFactory): void {
  const fresh = (): { store: NodeClaimStore; cluster: string } => {
    const cluster = `contract${++clusterSeq}`;
    return { store: newStore(cluster), cluster };
  };

  describe(`${name} (NodeClaimStore contract)`, () => {
    describe('create', () => {
      it('stores the record with version 1 and returns what get returns', async () => {
        const { store } = fresh();
        const created = await store.create(aNodeClaim());
        expect(created).toStrictEqual({ ...aNodeClaim(), version: 1 });
        expect(await store.get(created.name)).toStrictEqual(created);
      });

      it('ignores a version on its argument', async () => {
        const { store } = fresh();
        const created = await store.create({ ...aNodeClaim(), version: 7 } as NodeClaim);
        expect(created.version).toBe(1);
        expect((await store.get(created.name))?.version).toBe(1);
      });

      it('throws ConflictError with the adapter’s key and message when the name exists, and keeps the first record', async () => {
        const { store, cluster } = fresh();
        const first = await store.create(aNodeClaim());
        const error = await rejection(store.create(aNodeClaim({ nodePool: 'other' })));
        expect(error).toBeInstanceOf(ConflictError);
        expect((error as ConflictError).key).toBe(`CLUSTER#${cluster}/NODECLAIM#default-x7k2p`);
        expect((error as ConflictError).message).toBe('NodeClaim default-x7k2p already exists');
        expect(await store.get(first.name)).toStrictEqual(first);
      });

      it('leaves out fields and array elements set to undefined', async () => {
        const { store } = fresh();
        const created = await store.create(aNodeClaim({ instanceId: undefined, taints: [{ key: 'k', value: undefined, effect: 'NoSchedule' }], nominatedPods: ['a/b', undefined as unknown as string] }));
        expect(created).not.toHaveProperty('instanceId');
        expect(created.taints).toStrictEqual([{ key: 'k', effect: 'NoSchedule' }]);
        expect(created.nominatedPods).toStrictEqual(['a/b']);
        expect(await store.get(created.name)).toStrictEqual(created);
      });

      it('keeps empty strings, empty lists and empty maps', async () => {
        const { store } = fresh();
        const created = await store.create(aNodeClaim({ launchError: '', labels: {}, taints: [], nominatedPods: [], resources: {} }));
        expect(created).toMatchObject({ launchError: '', labels: {}, taints: [], nominatedPods: [], resources: {} });
        expect(await store.get(created.name)).toStrictEqual(created);
      });

      it('reads a -0 back as 0 (DynamoDB numbers have no negative zero)', async () => {
        const { store } = fresh();
        await store.create(aNodeClaim({ price: -0, resources: { cpu: -0 } }));
        const read = await store.get(aNodeClaim().name);
        expect(Object.is(read?.price, 0)).toBe(true);
        expect(Object.is(read?.resources['cpu'], 0)).toBe(true);
      });
    });

    describe('get', () => {
      it('returns undefined when there is no record', async () => {
        expect(await fresh().store.get('missing')).toBeUndefined();
      });
    });

    describe('update', () => {
      it('writes the record with version + 1 when the version matches', async () => {
        const { store } = fresh();
        const v1 = await store.create(aNodeClaim());
        const v2 = await store.update({ ...v1, ...LAUNCHED });
        expect(v2).toStrictEqual({ ...v1, ...LAUNCHED, version: 2 });
        expect(await store.get(v1.name)).toStrictEqual(v2);
      });

      it('throws ConflictError with the adapter’s key and message and leaves the record unchanged when the version is stale', async () => {
        const { store, cluster } = fresh();
        const v1 = await store.create(aNodeClaim());
        const v2 = await store.update({ ...v1, ...LAUNCHED });
        const error = await rejection(store.update({ ...v1, state: 'Failed', launchError: 'InsufficientInstanceCapacity' }));
        expect(error).toBeInstanceOf(ConflictError);
        expect((error as ConflictError).key).toBe(`CLUSTER#${cluster}/NODECLAIM#${v1.name}`);
        expect((error as ConflictError).message).toBe(`NodeClaim ${v1.name} is not at version 1 (changed since read, or deleted)`);
        expect(await store.get(v1.name)).toStrictEqual(v2);
      });

      it('throws ConflictError when the version is ahead of the stored one', async () => {
        const { store } = fresh();
        const v1 = await store.create(aNodeClaim());
        await expect(store.update({ ...v1, version: 2 })).rejects.toBeInstanceOf(ConflictError);
        expect(await store.get(v1.name)).toStrictEqual(v1);
      });

      it('throws ConflictError when the record does not exist, and does not create it', async () => {
        const { store } = fresh();
        await expect(store.update({ ...aNodeClaim(), version: 1 })).rejects.toBeInstanceOf(ConflictError);
        expect(await store.get(aNodeClaim().name)).toBeUndefined();
        expect(await store.list()).toEqual([]);
      });

      it('round-trips optional fields when set, and removes those an update leaves undefined', async () => {
        const { store } = fresh();
        const v1 = await store.create(aNodeClaim());
        const v2 = await store.update({
          ...v1,
          ...LAUNCHED,
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

      it('lets exactly one of 10 concurrent updates of the same version win', async () => {
        const { store } = fresh();
        const v1 = await store.create(aNodeClaim());
        const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => store.update({ ...v1, nodeName: `ip-10-0-0-${i}.us-west-2.compute.internal` })));
        const winners = results.filter((r) => r.status === 'fulfilled');
        const losers = results.filter((r) => r.status === 'rejected');
        expect(winners).toHaveLength(1);
        expect(losers.every((r) => isConflictError(r.reason))).toBe(true);
        const stored = await store.get(v1.name);
        expect(stored).toStrictEqual(winners[0]?.value);
        expect(stored?.version).toBe(2);
      });

      it('lets exactly one of concurrent creates of the same name win', async () => {
        const { store } = fresh();
        const results = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => store.create(aNodeClaim({ nodePool: `pool-${i}` }))));
        const winners = results.filter((r): r is PromiseFulfilledResult<NodeClaim> => r.status === 'fulfilled');
        expect(winners).toHaveLength(1);
        expect(results.filter((r) => r.status === 'rejected').every((r) => isConflictError(r.reason))).toBe(true);
        expect(await store.get(aNodeClaim().name)).toStrictEqual(winners[0]!.value);
      });
    });

    describe('list', () => {
      it('returns every record in name order, deleted and failed ones included', async () => {
        const { store } = fresh();
        await fresh().store.create(aNodeClaim({ name: 'other-cluster' }));
        for (const [claimName, state] of [['c', 'Deleted'], ['a', 'Pending'], ['b', 'Failed']] as const) {
          await store.create(aNodeClaim({ name: claimName, state: state satisfies NodeClaimState }));
        }
        const list = await store.list();
        expect(list.map((c) => [c.name, c.state])).toEqual([
          ['a', 'Pending'],
          ['b', 'Failed'],
          ['c', 'Deleted'],
        ]);
        expect(list[0]).toStrictEqual(await store.get('a'));
      });

      it('orders names by UTF-16 code unit (uppercase before lowercase, "-" before digits), not by locale', async () => {
        const { store } = fresh();
        const names = ['general-b', 'General-a', 'general-10', 'general-9', 'general-a-1', 'general-a1', 'general-ä'];
        for (const n of names) await store.create(aNodeClaim({ name: n }));
        expect((await store.list()).map((c) => c.name)).toEqual(['General-a', 'general-10', 'general-9', 'general-a-1', 'general-a1', 'general-b', 'general-ä']);
      });

      it('returns an empty list for an empty store', async () => {
        expect(await fresh().store.list()).toEqual([]);
      });
    });

    describe('findByInstanceId', () => {
      it('returns the record launched as the instance', async () => {
        const { store } = fresh();
        const v1 = await store.create(aNodeClaim());
        await store.create(aNodeClaim({ name: 'pending-one' }));
        const v2 = await store.update({ ...v1, ...LAUNCHED });
        expect(await store.findByInstanceId(LAUNCHED.instanceId)).toStrictEqual(v2);
      });

      it('returns undefined for an unknown instance id, and for a Pending record without one', async () => {
        const { store } = fresh();
        await store.create(aNodeClaim());
        expect(await store.findByInstanceId('i-00000000000000000')).toBeUndefined();
      });

      it('follows the record when its instance id changes or is removed', async () => {
        const { store } = fresh();
        const v1 = await store.create(aNodeClaim());
        const v2 = await store.update({ ...v1, ...LAUNCHED });
        const v3 = await store.update({ ...v2, instanceId: 'i-0fedcba9876543210' });
        expect(await store.findByInstanceId(LAUNCHED.instanceId)).toBeUndefined();
        expect(await store.findByInstanceId('i-0fedcba9876543210')).toStrictEqual(v3);
        await store.update({ ...v3, instanceId: undefined });
        expect(await store.findByInstanceId('i-0fedcba9876543210')).toBeUndefined();
      });

      it('returns the first record by name when two carry the same instance id', async () => {
        const { store } = fresh();
        await store.create(aNodeClaim({ name: 'general-b', ...LAUNCHED }));
        const a = await store.create(aNodeClaim({ name: 'general-a', ...LAUNCHED }));
        expect(await store.findByInstanceId(LAUNCHED.instanceId)).toStrictEqual(a);
      });

      it('finds deleted records too (the port does not filter by state)', async () => {
        const { store } = fresh();
        const deleted = await store.create(aNodeClaim({ ...LAUNCHED, state: 'Deleted', deletedAt: '2025-01-01T01:00:00.000Z' }));
        expect(await store.findByInstanceId(LAUNCHED.instanceId)).toStrictEqual(deleted);
      });
    });

    describe('isolation', () => {
      it('is not changed through the objects a caller passed in or got back', async () => {
        const { store } = fresh();
        const input = aNodeClaim({ labels: { team: 'a' }, nominatedPods: ['default/web-0'] }) as { -readonly [K in keyof Omit<NodeClaim, 'version'>]: Omit<NodeClaim, 'version'>[K] };
        const created = (await store.create(input)) as unknown as { labels: Record<string, string>; nominatedPods: string[]; state: string };
        (input.labels as Record<string, string>)['team'] = 'changed-input';
        (input.nominatedPods as string[]).push('default/input');
        created.labels['team'] = 'changed-created';
        created.nominatedPods.push('default/created');
        created.state = 'Deleted';
        const got = (await store.get(input.name)) as unknown as { labels: Record<string, string> };
        got.labels['team'] = 'changed-get';
        const [listed] = (await store.list()) as unknown as { taints: unknown[] }[];
        listed!.taints.length = 0;
        expect(await store.get(input.name)).toStrictEqual({ ...aNodeClaim({ labels: { team: 'a' }, nominatedPods: ['default/web-0'] }), version: 1 });
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

      it('keeps version monotonic, the record equal to the last successful write and findByInstanceId consistent with list, whatever the operations', async () => {
        await fc.assert(
          fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 15 }), async (ops) => {
            const { store } = fresh();
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
            const expected = [...model.values()].sort((x, y) => (x.name < y.name ? -1 : 1));
            expect(await store.list()).toStrictEqual(expected);
            for (const id of ['i-1', 'i-2', 'i-3']) expect(await store.findByInstanceId(id)).toStrictEqual(expected.find((c) => c.instanceId === id));
          }),
          { numRuns: 30 },
        );
      });
    });
  });
}
