// The launch protocol (docs/architecture.md#launch-protocol) of one Pending NodeClaim, `launchPending`: overlap check,
// commit (a conditional version bump), CreateFleet with the NodeClaim name as ClientToken, recording the instance. Run
// on the ports' in-memory implementations — the NodeClaim store injects the throttling, conflicts and crashes at each
// write, and the simulated EC2 shows what was launched — so each test is one protocol step going wrong.
import { beforeEach, describe, expect, it } from 'vitest';
import { launchPending, type LaunchDeps } from '../../shared/controllers/launch.js';
import type { NodeClaim } from '../../shared/core/api/nodeclaim.js';
import { ConflictError, ThrottledError } from '../../shared/core/errors.js';
import { loadCatalog } from '../../shared/core/instancetypes/catalog.js';
import type { InstanceType } from '../../shared/core/instancetypes/offering.js';
import type { ClusterEvent } from '../../shared/ports/cluster.js';
import { seededIds } from '../../shared/ports/ids.js';
import type { UnavailableOffering } from '../../shared/ports/unavailable-offerings.js';
import { SimulatedCrash } from '../../shared/sim/faults.js';
import { MemoryNodeClaimStore, throttledError, type NodeClaimStoreRequest } from '../../shared/sim/memory-nodeclaim-store.js';
import { SimulatedEc2 } from '../../shared/sim/simulated-ec2.js';
import { VirtualClock } from '../../shared/sim/virtual-clock.js';

const START = Date.parse('2026-03-02T08:00:00Z');
const NAME = 'general-k4bxq';

/** The ports launchPending needs, in memory, and what they saw. */
class Harness {
  readonly clock = new VirtualClock(START);
  readonly store = new MemoryNodeClaimStore({ cluster: 'test' });
  readonly ec2 = new SimulatedEc2(this.clock, { region: 'us-west-2', catalog: loadCatalog(), vmMemoryOverheadPercent: 0.075, clusterName: 'test', onRegister: () => undefined });
  readonly events: ClusterEvent[] = [];
  readonly marks: UnavailableOffering[] = [];
  readonly deps: LaunchDeps = {
    cluster: { recordEvent: async (event) => void this.events.push(event) },
    cloud: this.ec2,
    store: this.store,
    unavailableOfferings: {
      markUnavailable: async (offering, untilMs, reason) => void this.marks.push({ ...offering, untilMs, reason }),
      listUnavailable: async (nowMs) => this.marks.filter((m) => m.untilMs > nowMs),
    },
    clock: this.clock,
    ids: seededIds(3),
    clusterName: 'test',
    region: 'us-west-2',
  };
  types: InstanceType[] = [];

  async start(): Promise<this> {
    this.types = await this.ec2.getInstanceTypes({ nodeClass: 'default' });
    return this;
  }

  /** Writes the Pending record of a provisioning decision (step 1), forgetting the setup call. */
  async pending(name = NAME, pods = ['default/web-0']): Promise<NodeClaim> {
    const claim = await this.store.create({
      name,
      nodePool: 'general',
      nodeClass: 'default',
      state: 'Pending',
      requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
      instanceTypes: ['m5.large', 'm5.xlarge'],
      resources: { cpu: 500, memory: 1024, pods: 1 },
      labels: { 'karpenter.sh/nodepool': 'general' },
      taints: [],
      startupTaints: [],
      nominatedPods: pods,
      createdAt: new Date(this.clock.now()).toISOString(),
    });
    this.store.resetCalls();
    return claim;
  }

  launchPending(claim: NodeClaim) {
    return launchPending(this.deps, claim, this.types, [], this.clock.now());
  }

  /** Instances EC2 has running for the NodeClaim. */
  instancesOf(name = NAME) {
    return this.ec2.instances.filter((i) => i.nodeClaim === name && i.state === 'running');
  }
}

/** Matches the commit: the Pending record's version bump, before CreateFleet. */
const isCommit = (r: NodeClaimStoreRequest): boolean => r.operation === 'update' && r.claim?.state === 'Pending' && r.claim.instanceId === undefined;
/** Matches step 3: the write that records the instance. */
const isRecordInstance = (r: NodeClaimStoreRequest): boolean => r.operation === 'update' && r.claim?.state === 'Launched';

let h: Harness;
beforeEach(async () => {
  h = await new Harness().start();
});

describe('launchPending', () => {
  it('commits the record (version 2) before CreateFleet, then records the instance (version 3)', async () => {
    const v1 = await h.pending();
    let launchedAtCommit: number | undefined;
    h.store.inject({ when: isCommit, interpose: () => void (launchedAtCommit = h.ec2.launchAttempts.length) });

    const outcome = await h.launchPending(v1);

    expect(outcome).toEqual({ kind: 'launched', instanceType: 'm5.large' });
    expect(launchedAtCommit).toBe(0);
    expect(h.store.callsOf('update').map((c) => [c.expectedVersion, c.outcome, c.claim?.state])).toEqual([
      [1, 'ok', 'Pending'],
      [2, 'ok', 'Launched'],
    ]);
    const [instance] = h.instancesOf();
    expect(h.store.peek(NAME)).toMatchObject({ state: 'Launched', version: 3, instanceId: instance!.instanceId, instanceType: 'm5.large' });
  });

  describe('when the commit is throttled', () => {
    it('launches nothing and leaves the record Pending at version 1; the retry launches one instance', async () => {
      const v1 = await h.pending();
      h.store.inject({ when: isCommit, error: throttledError });

      await expect(h.launchPending(v1)).rejects.toBeInstanceOf(ThrottledError);

      expect(h.ec2.launchAttempts).toEqual([]);
      expect(h.store.peek(NAME)).toStrictEqual(v1);
      expect(await h.launchPending(v1)).toMatchObject({ kind: 'launched' });
      expect(h.instancesOf()).toHaveLength(1);
    });
  });

  describe('when a rival pass writes the record between this pass’s read and its commit', () => {
    it('joins a rival that committed it: one instance (the ClientToken), whichever pass records it', async () => {
      const v1 = await h.pending();
      let rivalCommitted: NodeClaim | undefined;
      h.store.inject({ when: isCommit, interpose: async (store) => void (rivalCommitted = await store.update(v1)) });

      const mine = await h.launchPending(v1);
      // The rival pass goes on with the record it committed.
      const rivals = await h.launchPending(rivalCommitted!);

      expect(h.store.callsOf('update').map((c) => c.outcome).slice(0, 2)).toEqual(['ok', 'conflict']);
      expect(mine).toMatchObject({ kind: 'launched', instanceType: 'm5.large' });
      expect(rivals).toMatchObject({ kind: 'launched', instanceType: 'm5.large' });
      expect(h.instancesOf()).toHaveLength(1);
      expect(h.store.peek(NAME)).toMatchObject({ state: 'Launched', instanceId: h.instancesOf()[0]!.instanceId });
    });

    it('gives up on a record the rival ended (Superseded): nothing is launched', async () => {
      const v1 = await h.pending();
      h.store.inject({ when: isCommit, interpose: async (store) => void (await store.update({ ...v1, state: 'Failed', launchError: 'Superseded', deletionReason: 'LaunchFailed' })) });

      expect(await h.launchPending(v1)).toEqual({ kind: 'gone' });

      expect(h.ec2.launchAttempts).toEqual([]);
      expect(h.store.peek(NAME)).toMatchObject({ state: 'Failed', launchError: 'Superseded', version: 2 });
    });
  });

  describe('when the invocation crashes right after the commit was written', () => {
    it('the resumed pass launches the committed record without committing again: one instance', async () => {
      const v1 = await h.pending();
      h.store.inject({ when: isCommit, timing: 'after', error: (r) => new SimulatedCrash(`store.update(${r.subject})`) });

      await expect(h.launchPending(v1)).rejects.toBeInstanceOf(SimulatedCrash);
      expect(h.ec2.launchAttempts).toEqual([]);
      const committed = h.store.peek(NAME)!;
      expect(committed).toMatchObject({ state: 'Pending', version: 2 });
      h.store.resetCalls();

      expect(await h.launchPending(committed)).toMatchObject({ kind: 'launched' });

      expect(h.store.callsOf('update').map((c) => [c.expectedVersion, c.claim?.state])).toEqual([[2, 'Launched']]);
      expect(h.instancesOf()).toHaveLength(1);
    });

    it('a pass still holding the version-1 record it read does not launch a second instance', async () => {
      const v1 = await h.pending();
      h.store.inject({ when: isCommit, timing: 'after', error: new SimulatedCrash('store.update') });
      await expect(h.launchPending(v1)).rejects.toBeInstanceOf(SimulatedCrash);

      // A redelivered batch read v1 before the crash: its commit conflicts, it finds the record committed and joins it.
      expect(await h.launchPending(v1)).toMatchObject({ kind: 'launched' });
      expect(h.store.callsOf('update').map((c) => [c.expectedVersion, c.outcome])).toEqual([
        [1, 'failed'],
        [1, 'conflict'],
        [2, 'ok'],
      ]);
      expect(h.instancesOf()).toHaveLength(1);
    });
  });

  describe('when recording the instance fails', () => {
    it('throttled: the instance stays for the resumed pass, which records the same instance (ClientToken) without a second CreateFleet', async () => {
      const v1 = await h.pending();
      h.store.inject({ when: isRecordInstance, error: throttledError });

      await expect(h.launchPending(v1)).rejects.toBeInstanceOf(ThrottledError);
      const [instance] = h.instancesOf();
      expect(instance).toBeDefined();
      const committed = h.store.peek(NAME)!;
      expect(committed).toMatchObject({ state: 'Pending', version: 2 });
      expect(committed).not.toHaveProperty('instanceId');

      expect(await h.launchPending(committed)).toMatchObject({ kind: 'launched' });

      expect(h.ec2.launchAttempts).toHaveLength(1);
      expect(h.instancesOf()).toEqual([instance]);
      expect(h.store.peek(NAME)).toMatchObject({ state: 'Launched', instanceId: instance!.instanceId, version: 3 });
    });

    it('a conflict because a rival recorded the same instance first still counts as launched', async () => {
      const v1 = await h.pending();
      h.store.inject({
        when: isRecordInstance,
        interpose: async (store, r) => {
          const current = (await store.get(NAME))!;
          await store.update({ ...current, ...(r.claim as NodeClaim), version: current.version });
        },
      });

      expect(await h.launchPending(v1)).toEqual({ kind: 'launched', instanceType: 'm5.large' });

      expect(h.store.callsOf('update').map((c) => c.outcome)).toEqual(['ok', 'ok', 'conflict']);
      expect(h.store.peek(NAME)).toMatchObject({ state: 'Launched', version: 3, instanceId: h.instancesOf()[0]!.instanceId });
    });

    it('a conflict because the record ended meanwhile leaves the instance to garbage collection (gone)', async () => {
      const v1 = await h.pending();
      h.store.inject({
        when: isRecordInstance,
        interpose: async (store) => {
          const current = (await store.get(NAME))!;
          await store.update({ ...current, state: 'Deleted', deletionReason: 'NodeClaimDeleted' });
        },
      });

      expect(await h.launchPending(v1)).toEqual({ kind: 'gone' });
      expect(h.store.peek(NAME)).toMatchObject({ state: 'Deleted' });
      expect(h.store.peek(NAME)).not.toHaveProperty('instanceId');
    });
  });

  describe('overlap check', () => {
    it('gives way to an in-flight NodeClaim holding one of its pods: Superseded, with an Event, nothing launched', async () => {
      await h.pending('general-rival', ['default/web-0', 'default/web-1']);
      const v1 = await h.pending(NAME, ['default/web-0']);

      expect(await h.launchPending(v1)).toEqual({ kind: 'superseded' });

      expect(h.ec2.launchAttempts).toEqual([]);
      expect(h.store.peek(NAME)).toMatchObject({ state: 'Failed', launchError: 'Superseded', deletionReason: 'LaunchFailed' });
      expect(h.events).toEqual([expect.objectContaining({ reason: 'Superseded', object: `NodeClaim/${NAME}` })]);
    });

    it('a throttled overlap check (the list) changes nothing', async () => {
      const v1 = await h.pending();
      h.store.failNext('list');
      await expect(h.launchPending(v1)).rejects.toBeInstanceOf(ThrottledError);
      expect(h.store.callsOf('update')).toEqual([]);
      expect(h.store.peek(NAME)).toStrictEqual(v1);
      expect(h.ec2.launchAttempts).toEqual([]);
    });

    it('a conflict on the Superseded write (the record moved on) records no Event', async () => {
      await h.pending('general-rival', ['default/web-0']);
      const v1 = await h.pending(NAME, ['default/web-0']);
      h.store.inject({ operation: 'update', when: (r) => r.claim?.launchError === 'Superseded', error: new ConflictError('moved on', 'k') });

      expect(await h.launchPending(v1)).toEqual({ kind: 'superseded' });
      expect(h.events).toEqual([]);
      expect(h.store.peek(NAME)).toStrictEqual(v1);
    });
  });
});
