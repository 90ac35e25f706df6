import { afterEach, describe, expect, it } from 'vitest';
import { ThrottledError } from '../../../shared/core/errors.js';
import type { CloudProvider } from '../../../shared/ports/cloud-provider.js';
import { ProvisionerHarness, podYaml } from '../../support/provisioner-harness.js';

let h: ProvisionerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('provisioner handler', () => {
  describe('a pod event', () => {
    it('launches one NodeClaim for a pending pod and nominates the pod to it', async () => {
      h = await ProvisionerHarness.start();
      const pod = await h.pendingPod(podYaml('web-1'));
      expect(pod.unschedulable).toBe(true);
      const response = await h.deliver(h.record(pod));
      expect(response.batchItemFailures).toEqual([]);
      const claims = await h.store.list();
      expect(claims).toHaveLength(1);
      expect(claims[0]).toMatchObject({ state: 'Launched', nodePool: 'general', nominatedPods: ['default/web-1'] });
      expect(h.ec2.instances).toHaveLength(1);
    });

    it('launches nothing new when the same event is delivered twice', async () => {
      h = await ProvisionerHarness.start();
      const pod = await h.pendingPod(podYaml('web-1'));
      const record = h.record(pod);
      await h.deliver(record);
      const claimsAfterFirst = await h.store.list();
      const second = await h.deliver(record);
      expect(second.batchItemFailures).toEqual([]);
      expect(await h.store.list()).toEqual(claimsAfterFirst);
      expect(h.ec2.instances).toHaveLength(1);
      expect(h.ec2.launchAttempts).toHaveLength(1);
    });

    it('launches nothing new when the duplicate arrives in the same batch', async () => {
      h = await ProvisionerHarness.start();
      const pod = await h.pendingPod(podYaml('web-1'));
      await h.deliver(h.record(pod), h.record(pod));
      expect(h.ec2.instances).toHaveLength(1);
    });

    it('launches nothing once the pod fits the in-flight NodeClaim of an earlier batch', async () => {
      h = await ProvisionerHarness.start();
      const first = await h.pendingPod(podYaml('web-1', '250m', '256Mi'));
      await h.deliver(h.record(first));
      const second = await h.pendingPod(podYaml('web-2', '250m', '256Mi'));
      await h.deliver(h.record(second));
      expect(h.ec2.instances).toHaveLength(1);
      const [claim] = await h.store.list();
      expect(claim!.nominatedPods).toEqual(['default/web-1', 'default/web-2']);
    });
  });

  describe('coalescing', () => {
    it('skips a batch whose events were all sent before the last complete pass started', async () => {
      h = await ProvisionerHarness.start();
      const first = await h.pendingPod(podYaml('web-1'));
      const sentBefore = h.clock.now();
      await h.clock.runUntil(h.clock.now() + 5_000);
      await h.deliver(h.record(first));
      expect(h.ec2.launchAttempts).toHaveLength(1);
      // A later message about a state the pass already saw: no second solve, nothing launched or written.
      const late = await h.pendingPod(podYaml('web-2', '8', '30Gi'));
      const before = await h.store.list();
      const response = await h.deliver(h.record(late, sentBefore));
      expect(response.batchItemFailures).toEqual([]);
      expect(h.ec2.launchAttempts).toHaveLength(1);
      expect(await h.store.list()).toEqual(before);
      // A message sent after that pass started gets its own pass.
      await h.deliver(h.record(late));
      expect(h.ec2.launchAttempts).toHaveLength(2);
    });
  });

  describe('malformed messages', () => {
    it('drops records that are not pod events without failing the batch or launching', async () => {
      h = await ProvisionerHarness.start();
      const response = await h.deliver(h.rawRecord('not json'), h.rawRecord(JSON.stringify({ kind: 'pod', name: 'x' })));
      expect(response.batchItemFailures).toEqual([]);
      expect(h.ec2.launchAttempts).toEqual([]);
    });
  });

  describe('throttling and crashes', () => {
    it('acknowledges the batch when EC2 throttles a launch (the FIFO group goes on), and the next lifecycle pass launches the same NodeClaim', async () => {
      let throttle = true;
      h = await ProvisionerHarness.start(undefined, (ec2) => {
        const cloud: CloudProvider = {
          getInstanceTypes: (q) => ec2.getInstanceTypes(q),
          list: () => ec2.list(),
          delete: (id) => ec2.delete(id),
          create: async (req) => {
            if (throttle) throw new ThrottledError('RequestLimitExceeded');
            return ec2.create(req);
          },
        };
        return cloud;
      });
      const pod = await h.pendingPod(podYaml('web-1'));
      const record = h.record(pod);
      const first = await h.deliver(record);
      expect(first.batchItemFailures).toEqual([]);
      const [pending] = await h.store.list();
      expect(pending).toMatchObject({ state: 'Pending', nominatedPods: ['default/web-1'] });
      expect(pending!.instanceId).toBeUndefined();
      expect(h.cluster.events.filter((e) => e.reason === 'LaunchRetrying').map((e) => e.message)).toEqual([`NodeClaim ${pending!.name} launch failed: RequestLimitExceeded, retrying`]);

      throttle = false;
      await h.clock.runUntil(h.clock.now() + 60_000);
      const report = await h.lifecyclePass();
      expect(report.launched).toEqual([pending!.name]);
      const claims = await h.store.list();
      expect(claims).toHaveLength(1);
      expect(claims[0]).toMatchObject({ name: pending!.name, state: 'Launched' });
      expect(h.ec2.instances).toHaveLength(1);
    });

    it('gives up on a NodeClaim EC2 refused for 5 minutes (Karpenter LaunchTimeout), so its pods are solved again', async () => {
      h = await ProvisionerHarness.start(undefined, (ec2) => ({
        getInstanceTypes: (q) => ec2.getInstanceTypes(q),
        list: () => ec2.list(),
        delete: (id) => ec2.delete(id),
        create: async () => {
          throw new ThrottledError('RequestLimitExceeded');
        },
      }));
      const pod = await h.pendingPod(podYaml('web-1'));
      await h.deliver(h.record(pod));
      const [pending] = await h.store.list();
      for (let minute = 1; minute <= 5; minute++) {
        await h.clock.runUntil(h.clock.now() + 60_000);
        expect((await h.lifecyclePass()).failures).toEqual([{ nodeClaim: pending!.name, error: 'RequestLimitExceeded' }]);
      }
      await h.clock.runUntil(h.clock.now() + 60_000);
      expect((await h.lifecyclePass()).launchTimeouts).toEqual([pending!.name]);
      expect(await h.store.get(pending!.name)).toMatchObject({ state: 'Failed', launchError: 'LaunchTimeout' });
    });
  });

  describe('insufficient capacity', () => {
    it('marks the offering unavailable and falls back in the same invocation', async () => {
      h = await ProvisionerHarness.start();
      // The pod can only run on m5.large, whose spot capacity is gone in every allowed zone.
      const pod = await h.pendingPod(podYaml('web-1', '500m', '1Gi').replace('{workload-type: general}', '{workload-type: general, node.kubernetes.io/instance-type: m5.large}'));
      const now = h.clock.now();
      for (const zone of ['us-west-2a', 'us-west-2b', 'us-west-2c']) h.ec2.injectCapacityError({ instanceType: 'm5.large', zone, capacityType: 'spot' }, now, now + 60 * 60_000);
      await h.deliver(h.record(pod));
      const claims = await h.store.list();
      const failed = claims.filter((c) => c.state === 'Failed');
      const launched = claims.filter((c) => c.state === 'Launched');
      expect(failed.length).toBeGreaterThanOrEqual(1);
      expect(failed[0]).toMatchObject({ launchError: 'InsufficientInstanceCapacity', deletionReason: 'LaunchFailed' });
      expect(launched).toHaveLength(1);
      expect(launched[0]).toMatchObject({ capacityType: 'on-demand', instanceType: 'm5.large' });
      expect(h.ec2.launchAttempts.map((a) => [a.capacityTypes[0], a.result])).toEqual([
        ['spot', 'InsufficientInstanceCapacity'],
        ['on-demand', 'ok'],
      ]);
      expect((await h.offerings.listUnavailable(h.clock.now())).length).toBeGreaterThan(0);
      expect(h.ec2.instances).toHaveLength(1);
      // every pod placed: no follow-up pass is needed, however many offerings are unavailable
      expect(h.followUps).toEqual([]);
    });

    it('asks for a follow-up pass 20 s later while pods stay unschedulable with offerings unavailable, and a follow-up record runs a pass that launches once the capacity is back (trial: pods waited for the relay\'s 6-minute re-list after an ICE window ended)', async () => {
      h = await ProvisionerHarness.start();
      const pod = await h.pendingPod(podYaml('web-1', '500m', '1Gi').replace('{workload-type: general}', '{workload-type: general, node.kubernetes.io/instance-type: m5.large}'));
      const start = h.clock.now();
      for (const zone of ['us-west-2a', 'us-west-2b', 'us-west-2c']) for (const capacityType of ['spot', 'on-demand'] as const) h.ec2.injectCapacityError({ instanceType: 'm5.large', zone, capacityType }, start, start + 2 * 60_000);
      await h.deliver(h.record(pod));
      expect(h.ec2.instances).toHaveLength(0);
      expect(h.followUps).toEqual([start + 20_000]);
      // Within the offerings' 3 minutes a follow-up finds them still unavailable: no launch, and it asks again.
      const followUp = () => h!.rawRecord(JSON.stringify({ kind: 'provisioner-follow-up', slot: new Date(h!.clock.now()).toISOString(), requestedAt: new Date(h!.clock.now() - 20_000).toISOString() }));
      await h.clock.runUntil(h.clock.now() + 20_000);
      expect(await h.deliver(followUp())).toEqual({ batchItemFailures: [] });
      expect(h.ec2.launchAttempts).toHaveLength(2);
      expect(h.followUps).toHaveLength(2);
      // After the 3 minutes (the ICE window is over by then): the follow-up's pass launches, and asks for nothing more.
      await h.clock.runUntil(h.clock.now() + 3 * 60_000);
      await h.deliver(followUp());
      expect(h.ec2.launchAttempts.at(-1)).toMatchObject({ result: 'ok' });
      expect(h.ec2.instances).toHaveLength(1);
      expect(h.followUps).toHaveLength(2);
    });
  });
});
