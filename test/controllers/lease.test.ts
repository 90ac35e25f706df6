import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbLeaseStore } from '../../shared/adapters/aws/lease-store.js';
import { startDynalite, type LocalDynamoDb } from '../../shared/cli/local-dynamodb.js';
import { withLease, type LeaseRequest } from '../../shared/controllers/lease.js';
import type { Leases } from '../../shared/ports/leases.js';
import { VirtualClock } from '../../shared/sim/virtual-clock.js';

let db: LocalDynamoDb;
let clusterSeq = 0;
const T0 = Date.parse('2026-03-02T08:00:00Z');

beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

function request(holder: string, leases: Leases = new DynamoDbLeaseStore({ client: db.client, tableName: db.tableName, cluster: `wl${++clusterSeq}` })): LeaseRequest {
  return { leases, name: 'lifecycle', holder, ttlSeconds: 120, clock: new VirtualClock(T0) };
}

describe('withLease', () => {
  it('runs the pass while holding the lease and releases it afterwards', async () => {
    const a = request('a');
    let heldDuringPass: boolean | undefined;
    const outcome = await withLease(a, async () => {
      heldDuringPass = !(await a.leases.acquire('lifecycle', 'b', 120, T0));
      return 42;
    });
    expect(outcome).toEqual({ status: 'ran', value: 42 });
    expect(heldDuringPass).toBe(true);
    expect(await a.leases.acquire('lifecycle', 'b', 120, T0)).toBe(true);
  });

  it('backs off without running the pass when another holder has the lease', async () => {
    const a = request('a');
    await a.leases.acquire('lifecycle', 'other', 120, T0);
    let ran = false;
    expect(await withLease(a, async () => (ran = true))).toEqual({ status: 'backedOff', lease: 'lifecycle' });
    expect(ran).toBe(false);
    // Backing off does not release the other holder's lease.
    expect(await a.leases.acquire('lifecycle', 'c', 120, T0)).toBe(false);
  });

  it('lets exactly one of two overlapping invocations run', async () => {
    const leases = new DynamoDbLeaseStore({ client: db.client, tableName: db.tableName, cluster: `wl${++clusterSeq}` });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let runs = 0;
    const pass = async () => {
      runs++;
      await gate;
      return runs;
    };
    const invocations = [withLease(request('a', leases), pass), withLease(request('b', leases), pass)];
    const loser = await Promise.race(invocations); // the loser answers while the winner is still running
    expect(loser.status).toBe('backedOff');
    release();
    const outcomes = await Promise.all(invocations);
    expect(runs).toBe(1);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['backedOff', 'ran']);
  });

  it('releases the lease when the pass throws, and rethrows the pass error', async () => {
    const a = request('a');
    await expect(withLease(a, () => Promise.reject(new Error('EC2 is down')))).rejects.toThrow('EC2 is down');
    expect(await a.leases.acquire('lifecycle', 'b', 120, T0)).toBe(true);
  });

  it('reports a failed release as releaseError instead of failing a pass that succeeded', async () => {
    const real = request('a').leases;
    const failing: Leases = { acquire: (...args) => real.acquire(...args), release: () => Promise.reject(new Error('throttled')) };
    const outcome = await withLease(request('a', failing), async () => 'done');
    expect(outcome).toMatchObject({ status: 'ran', value: 'done', releaseError: expect.objectContaining({ message: 'throttled' }) });
  });

  it('keeps the pass error when both the pass and the release fail', async () => {
    const real = request('a').leases;
    const failing: Leases = { acquire: (...args) => real.acquire(...args), release: () => Promise.reject(new Error('throttled')) };
    await expect(withLease(request('a', failing), () => Promise.reject(new Error('pass failed')))).rejects.toThrow('pass failed');
  });
});
