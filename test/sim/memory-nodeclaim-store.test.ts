import { describe, expect, it } from 'vitest';
import type { NodeClaim } from '../../shared/core/api/nodeclaim.js';
import { ConflictError, SkiffError, ThrottledError, isConflictError } from '../../shared/core/errors.js';
import { SimulatedCrash } from '../../shared/sim/faults.js';
import { MemoryNodeClaimStore, throttledError } from '../../shared/sim/memory-nodeclaim-store.js';
import { LAUNCHED, aNodeClaim, describeNodeClaimStoreContract, rejection } from '../support/nodeclaim-store-contract.js';

describeNodeClaimStoreContract('MemoryNodeClaimStore', (cluster) => new MemoryNodeClaimStore({ cluster }));

/** A store holding `default-x7k2p` at version 1, with its setup call forgotten. */
async function storeWithOne(): Promise<{ store: MemoryNodeClaimStore; v1: NodeClaim }> {
  const store = new MemoryNodeClaimStore();
  const v1 = await store.create(aNodeClaim());
  store.resetCalls();
  return { store, v1 };
}

describe('MemoryNodeClaimStore', () => {
  describe('constructor', () => {
    it('starts with the given records, versions as given, without recording them', async () => {
      const store = new MemoryNodeClaimStore({ records: [{ ...aNodeClaim({ name: 'b' }), version: 5 }, { ...aNodeClaim({ name: 'a' }), version: 2 }] });
      expect(store.calls).toEqual([]);
      expect((await store.list()).map((c) => [c.name, c.version])).toEqual([
        ['a', 2],
        ['b', 5],
      ]);
      await expect(store.update({ ...aNodeClaim({ name: 'b' }), version: 4 })).rejects.toBeInstanceOf(ConflictError);
      expect((await store.update({ ...aNodeClaim({ name: 'b' }), version: 5 })).version).toBe(6);
    });

    it("puts the cluster name in a conflict's key, as the adapter does", async () => {
      const store = new MemoryNodeClaimStore({ cluster: 'prod' });
      await store.create(aNodeClaim());
      const error = await rejection(store.create(aNodeClaim()));
      expect((error as ConflictError).key).toBe('CLUSTER#prod/NODECLAIM#default-x7k2p');
    });
  });

  describe('calls', () => {
    it('records each call: operation, subject, expected version, outcome, whether it wrote, the version', async () => {
      const store = new MemoryNodeClaimStore();
      const v1 = await store.create(aNodeClaim());
      await store.create(aNodeClaim()).catch(() => undefined);
      await store.get('missing');
      await store.get(v1.name);
      const v2 = await store.update({ ...v1, ...LAUNCHED });
      await store.update({ ...v1, state: 'Failed' }).catch(() => undefined);
      await store.list();
      await store.findByInstanceId(LAUNCHED.instanceId);
      await store.findByInstanceId('i-unknown');

      const summary = store.calls.map(({ operation, subject, expectedVersion, outcome, written, version }) => ({ operation, subject, expectedVersion, outcome, written, version }));
      expect(summary).toEqual([
        { operation: 'create', subject: v1.name, expectedVersion: undefined, outcome: 'ok', written: true, version: 1 },
        { operation: 'create', subject: v1.name, expectedVersion: undefined, outcome: 'conflict', written: false, version: undefined },
        { operation: 'get', subject: 'missing', expectedVersion: undefined, outcome: 'missing', written: false, version: undefined },
        { operation: 'get', subject: v1.name, expectedVersion: undefined, outcome: 'ok', written: false, version: 1 },
        { operation: 'update', subject: v1.name, expectedVersion: 1, outcome: 'ok', written: true, version: 2 },
        { operation: 'update', subject: v1.name, expectedVersion: 1, outcome: 'conflict', written: false, version: undefined },
        { operation: 'list', subject: undefined, expectedVersion: undefined, outcome: 'ok', written: false, version: undefined },
        { operation: 'findByInstanceId', subject: LAUNCHED.instanceId, expectedVersion: undefined, outcome: 'ok', written: false, version: v2.version },
        { operation: 'findByInstanceId', subject: 'i-unknown', expectedVersion: undefined, outcome: 'missing', written: false, version: undefined },
      ]);
      expect(store.calls[1]?.error).toBeInstanceOf(ConflictError);
      expect(store.calls[5]?.error).toBeInstanceOf(ConflictError);
    });

    it('records the record a write asked for, as a copy the caller cannot change afterwards', async () => {
      const store = new MemoryNodeClaimStore();
      const claim = aNodeClaim({ labels: { team: 'a' } });
      await store.create(claim);
      (claim.labels as Record<string, string>)['team'] = 'b';
      expect(store.calls[0]?.claim?.labels).toEqual({ team: 'a' });
    });

    it('returns a snapshot: later calls do not appear in an array read earlier', async () => {
      const { store } = await storeWithOne();
      const before = store.calls;
      await store.list();
      expect(before).toEqual([]);
      expect(store.calls).toHaveLength(1);
    });

    it('records calls in the order they took effect when issued concurrently', async () => {
      const { store, v1 } = await storeWithOne();
      const results = await Promise.allSettled([store.update({ ...v1, nodeName: 'x' }), store.update({ ...v1, nodeName: 'y' }), store.get(v1.name)]);
      expect(store.calls.map((c) => [c.operation, c.outcome])).toEqual([
        ['update', 'ok'],
        ['update', 'conflict'],
        ['get', 'ok'],
      ]);
      expect((results[2] as PromiseFulfilledResult<NodeClaim>).value).toMatchObject({ nodeName: 'x', version: 2 });
    });

    it('callsOf filters by operation and subject', async () => {
      const store = new MemoryNodeClaimStore();
      await store.create(aNodeClaim({ name: 'a' }));
      await store.create(aNodeClaim({ name: 'b' }));
      await store.get('a');
      expect(store.callsOf('create').map((c) => c.subject)).toEqual(['a', 'b']);
      expect(store.callsOf('create', 'b')).toHaveLength(1);
      expect(store.callsOf('update')).toEqual([]);
    });

    it('resetCalls forgets the calls but keeps the records and the faults', async () => {
      const { store, v1 } = await storeWithOne();
      await store.get(v1.name);
      store.failNext('get');
      store.resetCalls();
      expect(store.calls).toEqual([]);
      await expect(store.get(v1.name)).rejects.toBeInstanceOf(ThrottledError);
      expect(store.peek(v1.name)).toStrictEqual(v1);
    });

    it('peek and snapshot read without recording and without faults', async () => {
      const { store, v1 } = await storeWithOne();
      store.inject({ error: new Error('down'), times: Infinity });
      expect(store.peek(v1.name)).toStrictEqual(v1);
      expect(store.peek('missing')).toBeUndefined();
      expect(store.snapshot()).toStrictEqual([v1]);
      expect(store.calls).toEqual([]);
      const peeked = store.peek(v1.name) as { state: string };
      peeked.state = 'Deleted';
      expect(store.peek(v1.name)?.state).toBe('Pending');
    });
  });

  describe('inject', () => {
    it('fails the next call of the operation before it touches the store, once by default', async () => {
      const { store, v1 } = await storeWithOne();
      const fault = store.inject({ operation: 'update', error: throttledError });

      const error = await rejection(store.update({ ...v1, ...LAUNCHED }));

      expect(error).toBeInstanceOf(ThrottledError);
      expect((error as ThrottledError).message).toBe('DynamoDB PutItem default-x7k2p throttled: ProvisionedThroughputExceededException (simulated)');
      expect(store.peek(v1.name)).toStrictEqual(v1);
      expect(store.calls).toEqual([expect.objectContaining({ operation: 'update', outcome: 'failed', written: false, error })]);
      expect(fault).toMatchObject({ struck: 1, remaining: 0 });
      expect((await store.update({ ...v1, ...LAUNCHED })).version).toBe(2);
    });

    it('strikes only the operations named, leaving others alone', async () => {
      const { store, v1 } = await storeWithOne();
      store.inject({ operation: ['list', 'findByInstanceId'], error: throttledError, times: Infinity });
      expect(await store.get(v1.name)).toStrictEqual(v1);
      await expect(store.list()).rejects.toBeInstanceOf(ThrottledError);
      await expect(store.findByInstanceId('i-1')).rejects.toBeInstanceOf(ThrottledError);
    });

    it('strikes every operation when none is named', async () => {
      const { store, v1 } = await storeWithOne();
      store.inject({ error: new SkiffError('table gone'), times: Infinity });
      for (const call of [store.create(aNodeClaim({ name: 'n' })), store.get(v1.name), store.update(v1), store.list(), store.findByInstanceId('i-1')]) {
        await expect(call).rejects.toThrow('table gone');
      }
      expect(store.snapshot()).toStrictEqual([v1]);
    });

    it('strikes the next N matching calls, then lets calls through', async () => {
      const { store, v1 } = await storeWithOne();
      const fault = store.failNext('get', throttledError, 2);
      const outcomes: string[] = [];
      for (let i = 0; i < 3; i++) outcomes.push(await store.get(v1.name).then(() => 'ok', (e: unknown) => (e instanceof ThrottledError ? 'throttled' : 'other')));
      expect(outcomes).toEqual(['throttled', 'throttled', 'ok']);
      expect(fault).toMatchObject({ struck: 2, remaining: 0 });
    });

    it('strikes only calls matching its predicate, counting only those', async () => {
      const store = new MemoryNodeClaimStore();
      const fault = store.inject({ operation: 'create', when: (r) => r.subject === 'general-b', error: throttledError });
      await store.create(aNodeClaim({ name: 'general-a' }));
      await expect(store.create(aNodeClaim({ name: 'general-b' }))).rejects.toBeInstanceOf(ThrottledError);
      await store.create(aNodeClaim({ name: 'general-b' }));
      expect(store.snapshot().map((c) => c.name)).toEqual(['general-a', 'general-b']);
      expect(fault.struck).toBe(1);
    });

    it('lets a predicate see what the write asks for (e.g. only the update that launches)', async () => {
      const { store, v1 } = await storeWithOne();
      store.inject({ operation: 'update', when: (r) => r.claim?.state === 'Launched', error: throttledError, times: Infinity });
      const v2 = await store.update({ ...v1, nominatedPods: [...v1.nominatedPods, 'default/web-2'] });
      await expect(store.update({ ...v2, ...LAUNCHED })).rejects.toBeInstanceOf(ThrottledError);
      expect(store.peek(v1.name)).toStrictEqual(v2);
    });

    it('timing after: the write takes effect, then the call fails (a crash after the write succeeded)', async () => {
      const { store, v1 } = await storeWithOne();
      store.inject({ operation: 'update', timing: 'after', error: (r) => new SimulatedCrash(`store.update(${r.subject})`) });

      const error = await rejection(store.update({ ...v1, ...LAUNCHED }));

      expect(error).toBeInstanceOf(SimulatedCrash);
      expect((error as SimulatedCrash).sideEffect).toBe('store.update(default-x7k2p)');
      expect(store.peek(v1.name)).toStrictEqual({ ...v1, ...LAUNCHED, version: 2 });
      expect(store.calls).toEqual([expect.objectContaining({ operation: 'update', outcome: 'failed', written: true, version: 2 })]);
      // The caller retries with what it read: the write it never saw acknowledged now conflicts.
      await expect(store.update({ ...v1, ...LAUNCHED })).rejects.toBeInstanceOf(ConflictError);
    });

    it('timing after on a write whose condition fails reports the conflict, not the fault (nothing was written)', async () => {
      const { store, v1 } = await storeWithOne();
      const fault = store.inject({ operation: 'create', timing: 'after', error: new SimulatedCrash('store.create') });
      await expect(store.create(aNodeClaim())).rejects.toBeInstanceOf(ConflictError);
      expect(fault.struck).toBe(1);
      expect(store.calls).toEqual([expect.objectContaining({ outcome: 'conflict', written: false })]);
      expect(store.peek(v1.name)).toStrictEqual(v1);
    });

    it('can inject a conflict that the store itself would not raise', async () => {
      const { store, v1 } = await storeWithOne();
      store.failNext('update', new ConflictError('injected', 'k'));
      const error = await rejection(store.update({ ...v1, ...LAUNCHED }));
      expect(isConflictError(error)).toBe(true);
      expect(store.peek(v1.name)).toStrictEqual(v1);
    });

    it('interpose runs a rival write just before the call, so the call meets a real conflict', async () => {
      const { store, v1 } = await storeWithOne();
      store.inject({
        operation: 'update',
        interpose: async (s, r) => {
          const current = (await s.get(r.subject!))!;
          await s.update({ ...current, state: 'Failed', launchError: 'Superseded' });
        },
      });

      const error = await rejection(store.update({ ...v1, ...LAUNCHED }));

      expect(error).toBeInstanceOf(ConflictError);
      expect(store.peek(v1.name)).toMatchObject({ state: 'Failed', version: 2 });
      // The interposed calls are recorded (and not struck again by the fault), before the call they preceded.
      expect(store.calls.map((c) => [c.operation, c.outcome])).toEqual([
        ['get', 'ok'],
        ['update', 'ok'],
        ['update', 'conflict'],
      ]);
    });

    it('an unlimited interposing fault does not strike the calls its own interpose makes', async () => {
      const { store, v1 } = await storeWithOne();
      const fault = store.inject({
        operation: 'update',
        times: Infinity,
        interpose: async (s, r) => void (await s.update((await s.get(r.subject!))!)),
      });
      await expect(store.update(v1)).rejects.toBeInstanceOf(ConflictError);
      expect(store.calls.map((c) => [c.operation, c.outcome])).toEqual([
        ['get', 'ok'],
        ['update', 'ok'],
        ['update', 'conflict'],
      ]);
      expect(fault.struck).toBe(1);
      // It strikes again afterwards.
      await expect(store.update(store.peek(v1.name)!)).rejects.toBeInstanceOf(ConflictError);
      expect(fault.struck).toBe(2);
    });

    it('faults are consulted in the order injected; the first with strikes left wins', async () => {
      const { store, v1 } = await storeWithOne();
      store.failNext('get', new SkiffError('first'));
      store.failNext('get', new SkiffError('second'));
      await expect(store.get(v1.name)).rejects.toThrow('first');
      await expect(store.get(v1.name)).rejects.toThrow('second');
      expect(await store.get(v1.name)).toStrictEqual(v1);
    });

    it('cancel and clearFaults withdraw faults', async () => {
      const { store, v1 } = await storeWithOne();
      const fault = store.failNext('get', throttledError, Infinity);
      fault.cancel();
      expect(await store.get(v1.name)).toStrictEqual(v1);
      store.failNext('list', throttledError, Infinity);
      store.failNext('get', throttledError, 3);
      store.clearFaults();
      expect(await store.list()).toStrictEqual([v1]);
      expect(await store.get(v1.name)).toStrictEqual(v1);
    });

    it.each([0, -1, 1.5, Number.NaN])('refuses times = %s', (times) => {
      expect(() => new MemoryNodeClaimStore().inject({ error: throttledError, times })).toThrow(RangeError);
    });

    it('refuses a fault with neither an error nor an interpose action', () => {
      expect(() => new MemoryNodeClaimStore().inject({ operation: 'get' })).toThrow(RangeError);
    });
  });
});
