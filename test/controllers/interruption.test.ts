// The interruption controller against real parts: the DynamoDB adapters on dynalite, the simulated cluster and EC2 on
// a virtual clock. A NodeClaim is launched by the real provisioner, its node registers and its pods bind; then the
// controller is handed parsed messages.
import { afterEach, describe, expect, it } from 'vitest';
import { seededIds } from '../../shared/ports/ids.js';
import { parseManifests } from '../../shared/core/api/manifest.js';
import type { InterruptionMessage } from '../../shared/core/api/interruption-events.js';
import type { NodeClaim } from '../../shared/core/api/nodeclaim.js';
import { DisruptionMemory } from '../../shared/controllers/disruption/memory.js';
import { handleInterruption, type InterruptionDeps } from '../../shared/controllers/interruption.js';
import { UNAVAILABLE_OFFERING_TTL_MS } from '../../shared/controllers/launch.js';
import type { ProvisionReport } from '../../shared/controllers/provision.js';
import { ProvisionerHarness, deploymentYaml } from '../support/provisioner-harness.js';

let h: ProvisionerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

interface Setup {
  readonly h: ProvisionerHarness;
  readonly deps: InterruptionDeps;
  readonly claim: NodeClaim;
  readonly provisions: { count: number };
}

/** A NodeClaim launched for `replicas` pods of a Deployment, registered and Ready with the pods bound. */
async function launched(replicas = 3): Promise<Setup> {
  h = await ProvisionerHarness.start();
  for (const m of parseManifests(deploymentYaml('web', replicas, '500m', '1Gi').replace('spec:\n      containers', 'spec:\n      nodeSelector: {workload-type: general}\n      containers'), 'web.yaml')) h.cluster.apply(m);
  await h.clock.runUntil(h.clock.now());
  const pending = [...h.cluster.pods.values()].filter((p) => p.unschedulable);
  expect(pending).toHaveLength(replicas);
  await h.deliver(...pending.map((p) => h!.record(p)));
  await h.clock.runUntil(h.clock.now() + 70_000);
  const [claim] = await h.store.list();
  expect([...h.cluster.pods.values()].every((p) => p.nodeName)).toBe(true);
  const provisions = { count: 0 };
  const deps: InterruptionDeps = {
    cluster: h.cluster,
    cloud: h.ec2,
    store: h.store,
    unavailableOfferings: h.offerings,
    clock: h.clock,
    ids: seededIds(11),
    clusterName: 'test',
    region: 'us-west-2',
    spotToSpotConsolidation: false,
    memory: new DisruptionMemory(),
    provision: async (): Promise<ProvisionReport> => {
      provisions.count++;
      return { launched: [], failed: [], nominated: {}, unschedulable: [], retry: [] };
    },
  };
  return { h, deps, claim: claim!, provisions };
}

const message = (kind: InterruptionMessage['kind'], instanceIds: readonly string[], extra: Record<string, unknown> = {}): InterruptionMessage =>
  ({ kind, id: `evt-${kind}`, time: Date.parse('2026-03-02T08:01:10Z'), instanceIds, ...extra }) as InterruptionMessage;

describe('handleInterruption', () => {
  describe('a spot interruption warning', () => {
    it('marks the offering unavailable for 3 minutes, launches a replacement elsewhere, drains the node and records the replacement', async () => {
      const { h, deps, claim, provisions } = await launched();
      expect(claim.capacityType).toBe('spot');
      const report = await handleInterruption(deps, message('spotInterruption', [claim.instanceId!], { action: 'terminate' }));

      const offering = { instanceType: claim.instanceType!, zone: claim.zone!, capacityType: 'spot' };
      const marks = await h.offerings.listUnavailable(h.clock.now());
      expect(marks).toEqual([{ ...offering, untilMs: h.clock.now() + UNAVAILABLE_OFFERING_TTL_MS, reason: 'SpotInterruption' }]);
      expect(UNAVAILABLE_OFFERING_TTL_MS).toBe(3 * 60 * 1000);

      const [outcome] = report.instances;
      expect(report).toMatchObject({ kind: 'spotInterruption', action: 'CordonAndDrain' });
      expect(outcome).toMatchObject({ kind: 'acted', nodeClaim: claim.name, reason: 'SpotInterrupted', markedUnavailable: offering });
      expect(outcome?.kind === 'acted' && outcome.evicted).toHaveLength(3);

      const claims = await h.store.list();
      const interrupted = claims.find((c) => c.name === claim.name)!;
      expect(interrupted.state).toBe('Deleting');
      expect(interrupted.disruption).toMatchObject({ reason: 'Interrupted', decision: 'delete', phase: 'Draining' });
      const replacements = claims.filter((c) => c.replacementFor?.includes(claim.name));
      expect(replacements.length).toBeGreaterThan(0);
      expect(interrupted.disruption!.replacements).toEqual(replacements.map((r) => r.name));
      for (const r of replacements) {
        expect(r.instanceId).toBeDefined();
        expect(`${r.instanceType}/${r.zone}/${r.capacityType}`).not.toBe(`${offering.instanceType}/${offering.zone}/spot`);
      }
      const node = [...h.cluster.nodes.values()].find((n) => n.providerId === claim.providerId)!;
      expect(node.taints).toContainEqual({ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' });
      expect(h.cluster.events.filter((e) => e.reason === 'SpotInterrupted')).toHaveLength(1);
      expect(provisions.count).toBe(1);
    });

    it('does nothing harmful when the same warning is delivered again: no second replacement, no second launch', async () => {
      const { h, deps, claim } = await launched();
      const m = message('spotInterruption', [claim.instanceId!], { action: 'terminate' });
      await handleInterruption(deps, m);
      const instances = h.ec2.instances.length;
      const claimsAfterFirst = (await h.store.list()).map((c) => c.name);
      const again = await handleInterruption(deps, m);
      expect(h.ec2.instances).toHaveLength(instances);
      expect((await h.store.list()).map((c) => c.name)).toEqual(claimsAfterFirst);
      expect(again.instances[0]).toMatchObject({ kind: 'acted', evicted: [] });
      const interrupted = await h.store.get(claim.name);
      expect(interrupted!.disruption!.replacements).toHaveLength((await h.store.list()).filter((c) => c.replacementFor?.includes(claim.name)).length);
    });

    it('ignores a warning once the NodeClaim is deleted', async () => {
      const { h, deps, claim } = await launched();
      const m = message('spotInterruption', [claim.instanceId!], { action: 'terminate' });
      await handleInterruption(deps, m);
      await h.clock.runUntil(h.clock.now() + 1000);
      // The node is empty now: driving the drain again finishes it.
      await handleInterruption(deps, message('stateChange', [claim.instanceId!], { state: 'terminated' }));
      expect((await h.store.get(claim.name))!.state).toBe('Deleted');
      expect((await h.store.get(claim.name))!.deletionReason).toBe('Interrupted');
      const late = await handleInterruption(deps, m);
      expect(late.instances).toEqual([{ kind: 'ignored', instanceId: claim.instanceId, why: `NodeClaim ${claim.name} is already Deleted` }]);
    });
  });

  describe('an instance Skiff does not own', () => {
    it('is ignored and reported', async () => {
      const { h, deps, provisions } = await launched(1);
      const before = await h.store.list();
      const report = await handleInterruption(deps, message('spotInterruption', ['i-0fffffffffffffff0'], { action: 'terminate' }));
      expect(report.instances).toEqual([{ kind: 'ignored', instanceId: 'i-0fffffffffffffff0', why: 'no NodeClaim owns this instance (not launched by Skiff)' }]);
      expect(await h.store.list()).toEqual(before);
      expect(await h.offerings.listUnavailable(h.clock.now())).toEqual([]);
      expect(provisions.count).toBe(0);
    });
  });

  describe('a rebalance recommendation', () => {
    it('records SpotRebalanceRecommendation and changes nothing', async () => {
      const { h, deps, claim } = await launched(1);
      const before = await h.store.list();
      const report = await handleInterruption(deps, message('rebalanceRecommendation', [claim.instanceId!]));
      expect(report).toMatchObject({ action: 'NoAction', instances: [{ kind: 'noAction', nodeClaim: claim.name, reason: 'SpotRebalanceRecommendation' }] });
      expect(await h.store.list()).toEqual(before);
      expect(h.cluster.events.filter((e) => e.reason === 'SpotRebalanceRecommendation')).toMatchObject([{ type: 'Normal', object: `NodeClaim/${claim.name}` }]);
    });
  });

  describe('state changes', () => {
    it.each<[string, string]>([
      ['stopping', 'InstanceStopping'],
      ['stopped', 'InstanceStopping'],
      ['shutting-down', 'InstanceTerminating'],
      ['terminated', 'InstanceTerminating'],
    ])('%s → CordonAndDrain with Event %s, no offering marked', async (state, reason) => {
      const { h, deps, claim } = await launched(1);
      const report = await handleInterruption(deps, message('stateChange', [claim.instanceId!], { state }));
      expect(report.instances[0]).toMatchObject({ kind: 'acted', reason });
      expect((await h.store.get(claim.name))!.disruption).toMatchObject({ reason: 'Interrupted', phase: 'Draining' });
      expect(await h.offerings.listUnavailable(h.clock.now())).toEqual([]);
    });

    it('running → no action', async () => {
      const { h, deps, claim } = await launched(1);
      const report = await handleInterruption(deps, message('stateChange', [claim.instanceId!], { state: 'running' }));
      expect(report).toMatchObject({ action: 'NoAction', instances: [{ kind: 'noAction', nodeClaim: claim.name }] });
      expect((await h.store.get(claim.name))!.disruption).toBeUndefined();
    });
  });

  describe('an AWS Health scheduled change', () => {
    it('drains every affected NodeClaim with Event InstanceUnhealthy and ignores instances it does not own', async () => {
      const { h, deps, claim } = await launched(1);
      const report = await handleInterruption(deps, message('scheduledChange', [claim.instanceId!, 'i-0aaaaaaaaaaaaaaa0'], { eventTypeCode: 'AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED' }));
      expect(report.instances.map((i) => i.kind)).toEqual(['acted', 'ignored']);
      expect(report.instances[0]).toMatchObject({ reason: 'InstanceUnhealthy' });
      expect(h.cluster.events.some((e) => e.reason === 'InstanceUnhealthy' && e.message.includes('AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED'))).toBe(true);
    });
  });

  describe('a Capacity Reservation interruption warning', () => {
    it('drains with Event CapacityReservationInstanceInterrupted', async () => {
      const { deps, claim } = await launched(1);
      const report = await handleInterruption(deps, message('capacityReservationInterruption', [claim.instanceId!], { action: 'terminate' }));
      expect(report.instances[0]).toMatchObject({ kind: 'acted', reason: 'CapacityReservationInstanceInterrupted' });
    });
  });
});
