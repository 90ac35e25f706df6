import { describe, expect, it, vi } from 'vitest';
import { LABEL_CAPACITY_TYPE, LABEL_ZONE } from '../../shared/core/api/labels.js';
import { InsufficientCapacityError, isInsufficientCapacityError } from '../../shared/core/errors.js';
import { loadCatalog } from '../../shared/core/instancetypes/catalog.js';
import type { InstanceTypeInfo } from '../../shared/core/instancetypes/instance-type.js';
import type { LaunchRequest } from '../../shared/ports/cloud-provider.js';
import { SimulatedEc2, simulatedSpotPrice, zonesOf, type SimInstance, type SimulatedEc2Options } from '../../shared/sim/simulated-ec2.js';
import { VirtualClock } from '../../shared/sim/virtual-clock.js';

const T0 = Date.UTC(2026, 2, 2, 8, 0, 0);
const US_WEST_2_ZONES = ['us-west-2a', 'us-west-2b', 'us-west-2c', 'us-west-2d'];
const CATALOG = loadCatalog();
/** On-demand list prices (USD/h) from the catalogue. */
const PRICE = { 'c5.large': 0.085, 'm5.large': 0.096, 'm5.xlarge': 0.192 } as const;
const MINUTE = 60_000;

function setup(options: Partial<Omit<SimulatedEc2Options, 'onRegister'>> = {}) {
  const clock = new VirtualClock(T0);
  const registered: SimInstance[] = [];
  const onRegister = vi.fn((instance: SimInstance) => void registered.push(instance));
  const ec2 = new SimulatedEc2(clock, { region: 'us-west-2', catalog: CATALOG, vmMemoryOverheadPercent: 0.075, clusterName: 'test', onRegister, ...options });
  return { clock, ec2, onRegister, registered };
}

/**
 * An on-demand launch (CreateFleet `lowest-price`: the cheapest override wins) for NodeClaim `default-abcde` over
 * c5.large, m5.large and m5.xlarge in us-west-2a/b, listed most expensive first. Spot uses price-capacity-optimized,
 * which need not pick the cheapest, so the cheapest-override tests launch on-demand.
 */
function launchRequest(overrides: Partial<LaunchRequest> = {}): LaunchRequest {
  return {
    nodeClaim: 'default-abcde',
    nodePool: 'default',
    nodeClass: 'default',
    capacityType: 'on-demand',
    overrides: [
      { instanceType: 'm5.xlarge', zone: 'us-west-2a', price: 0.192 },
      { instanceType: 'm5.large', zone: 'us-west-2b', price: 0.096 },
      { instanceType: 'c5.large', zone: 'us-west-2b', price: 0.0851 },
      { instanceType: 'c5.large', zone: 'us-west-2a', price: 0.085 },
    ],
    tags: { 'kubernetes.io/cluster/test': 'owned', 'karpenter.sh/nodepool': 'default', 'karpenter.sh/nodeclaim': 'default-abcde' },
    labels: { 'karpenter.sh/nodepool': 'default', team: 'a' },
    taints: [{ key: 'example.com/dedicated', value: 'a', effect: 'NoSchedule' }],
    startupTaints: [{ key: 'example.com/not-ready', effect: 'NoExecute' }],
    ...overrides,
  };
}

/** The thrown value of `promise`, failing the test when it resolves. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

describe('zonesOf', () => {
  it('returns the four simulated zones of us-west-2', () => {
    expect(zonesOf('us-west-2')).toEqual(US_WEST_2_ZONES);
  });

  it('returns zones a, b and c for a region the simulation does not list', () => {
    expect(zonesOf('eu-north-1')).toEqual(['eu-north-1a', 'eu-north-1b', 'eu-north-1c']);
  });
});

describe('simulatedSpotPrice', () => {
  it('returns the same price for the same type and zone every time', () => {
    expect(simulatedSpotPrice('m5.large', 'us-west-2a', 0.096)).toBe(simulatedSpotPrice('m5.large', 'us-west-2a', 0.096));
  });

  it('derives different prices for different zones of one type', () => {
    const prices = new Set(US_WEST_2_ZONES.map((zone) => simulatedSpotPrice('m5.large', zone, 0.096)));
    expect(prices.size).toBeGreaterThan(1);
  });
});

describe('SimulatedEc2', () => {
  describe('getInstanceTypes', () => {
    it('offers every priced catalogue type the AMI family boots in every zone of the region as on-demand and spot', async () => {
      const { ec2 } = setup();
      const types = await ec2.getInstanceTypes({ nodeClass: 'default' });
      const priced = CATALOG.filter((t) => t.onDemandPrice !== null);
      // AL2023 (the default) does not boot a1; AL2 does.
      expect(types.map((t) => t.name)).toEqual(priced.filter((t) => !t.name.startsWith('a1.')).map((t) => t.name));
      expect((await ec2.getInstanceTypes({ nodeClass: 'default', amiFamily: 'AL2' })).map((t) => t.name)).toEqual(priced.map((t) => t.name));
      for (const type of types) {
        const pairs = type.offerings.map((o) => `${o.zone}/${o.capacityType}`).sort();
        expect(pairs, type.name).toEqual(US_WEST_2_ZONES.flatMap((z) => [`${z}/on-demand`, `${z}/spot`]).sort());
        expect(type.offerings.every((o) => o.available)).toBe(true);
      }
    });

    it('prices on-demand offerings at the catalogue list price', async () => {
      const { ec2 } = setup();
      const m5 = (await ec2.getInstanceTypes({ nodeClass: 'default' })).find((t) => t.name === 'm5.large');
      const onDemand = m5?.offerings.filter((o) => o.capacityType === 'on-demand').map((o) => o.price);
      expect(onDemand).toEqual([PRICE['m5.large'], PRICE['m5.large'], PRICE['m5.large'], PRICE['m5.large']]);
    });

    it('skips a type with no on-demand price', async () => {
      const unpriced = CATALOG.find((t) => t.onDemandPrice === null);
      const m5 = CATALOG.find((t) => t.name === 'm5.large');
      if (!unpriced || !m5) throw new Error('catalogue fixture missing');
      const { ec2 } = setup({ catalog: [unpriced, m5] });
      expect((await ec2.getInstanceTypes({ nodeClass: 'default' })).map((t) => t.name)).toEqual(['m5.large']);
    });

    it('prices spot deterministically at 25–55 % of on-demand, per type and zone', async () => {
      const a = await setup().ec2.getInstanceTypes({ nodeClass: 'default' });
      const b = await setup().ec2.getInstanceTypes({ nodeClass: 'other' });
      const spot = (types: typeof a) => types.flatMap((t) => t.offerings.filter((o) => o.capacityType === 'spot').map((o) => [t.name, o.zone, o.price] as const));
      expect(spot(a)).toEqual(spot(b));
      for (const type of a) {
        const onDemand = type.offerings.find((o) => o.capacityType === 'on-demand')?.price ?? Number.NaN;
        for (const o of type.offerings.filter((x) => x.capacityType === 'spot')) {
          // prices are quoted to 0.0001 USD, as EC2 quotes spot prices: allow half a tick of rounding
          expect(o.price, `${type.name} ${o.zone}`).toBeGreaterThanOrEqual(onDemand * 0.25 - 0.00005);
          expect(o.price, `${type.name} ${o.zone}`).toBeLessThanOrEqual(onDemand * 0.55 + 0.00005);
          expect(o.price).toBe(simulatedSpotPrice(type.name, o.zone, onDemand));
        }
      }
    });

    it('uses a pinned spot price for its type and zone and derives the others', async () => {
      const { ec2 } = setup({ spotPrices: [{ instanceType: 'm5.large', zone: 'us-west-2a', price: 0.035 }] });
      const m5 = (await ec2.getInstanceTypes({ nodeClass: 'default' })).find((t) => t.name === 'm5.large');
      const spot = Object.fromEntries(m5?.offerings.filter((o) => o.capacityType === 'spot').map((o) => [o.zone, o.price]) ?? []);
      expect(spot).toEqual({
        'us-west-2a': 0.035,
        'us-west-2b': simulatedSpotPrice('m5.large', 'us-west-2b', PRICE['m5.large']),
        'us-west-2c': simulatedSpotPrice('m5.large', 'us-west-2c', PRICE['m5.large']),
        'us-west-2d': simulatedSpotPrice('m5.large', 'us-west-2d', PRICE['m5.large']),
      });
    });

    it('offers the zones of the configured region', async () => {
      const { ec2 } = setup({ region: 'us-east-2' });
      const m5 = (await ec2.getInstanceTypes({ nodeClass: 'default' })).find((t) => t.name === 'm5.large');
      expect([...new Set(m5?.offerings.map((o) => o.zone))]).toEqual(['us-east-2a', 'us-east-2b', 'us-east-2c']);
    });

    it('lowers allocatable when the kubelet reserves more', async () => {
      const { ec2 } = setup();
      const base = (await ec2.getInstanceTypes({ nodeClass: 'default' })).find((t) => t.name === 'm5.large');
      const reserved = (await ec2.getInstanceTypes({ nodeClass: 'default', kubelet: { systemReserved: { memory: '1Gi' } } })).find((t) => t.name === 'm5.large');
      expect(reserved?.allocatable.memory).toBeLessThan(base?.allocatable.memory ?? 0);
    });
  });

  describe('create', () => {
    it('launches on-demand on the cheapest override (lowest-price)', async () => {
      const { ec2 } = setup();
      const launched = await ec2.create(launchRequest({ capacityType: 'on-demand' }));
      expect(launched).toMatchObject({ instanceType: 'c5.large', zone: 'us-west-2a', capacityType: 'on-demand', price: 0.085, launchedAt: T0, unavailableOfferings: [] });
      expect(launched.providerId).toBe(`aws:///us-west-2a/${launched.instanceId}`);
      expect(ec2.instances.map((i) => i.instanceId)).toEqual([launched.instanceId]);
    });

    it('launches spot on a pool priced within 15 % of the cheapest, the same one every time (price-capacity-optimized)', async () => {
      const overrides = [
        { instanceType: 'm5.xlarge', zone: 'us-west-2a', price: 0.08 },
        { instanceType: 'm5.large', zone: 'us-west-2b', price: 0.04 },
        { instanceType: 'c5.large', zone: 'us-west-2b', price: 0.031 },
        { instanceType: 'c5.large', zone: 'us-west-2a', price: 0.03 },
      ];
      const first = await setup().ec2.create(launchRequest({ capacityType: 'spot', overrides }));
      const second = await setup().ec2.create(launchRequest({ capacityType: 'spot', overrides: [...overrides].reverse() }));
      expect(first.capacityType).toBe('spot');
      expect(first.price).toBeLessThanOrEqual(0.03 * 1.15);
      expect([first.instanceType, first.zone]).toEqual([second.instanceType, second.zone]);
    });

    it('returns the same instance for a repeated NodeClaim name and launches no second instance', async () => {
      const { clock, ec2 } = setup();
      const first = await ec2.create(launchRequest());
      await clock.runUntil(T0 + 5_000);
      const again = await ec2.create(launchRequest());
      expect(again.instanceId).toBe(first.instanceId);
      expect(again.launchedAt).toBe(T0);
      expect(ec2.instances).toHaveLength(1);
      expect(ec2.launchAttempts.map((a) => [a.nodeClaim, a.result])).toEqual([['default-abcde', 'ok']]);
      expect(await ec2.list()).toHaveLength(1);
    });

    it('launches a second instance for a different NodeClaim name', async () => {
      const { ec2 } = setup();
      const a = await ec2.create(launchRequest());
      const b = await ec2.create(launchRequest({ nodeClaim: 'default-fghij' }));
      expect(b.instanceId).not.toBe(a.instanceId);
      expect(ec2.instances).toHaveLength(2);
    });

    it('records the attempt with its capacity type, distinct instance types and sorted zones', async () => {
      const { ec2 } = setup();
      await ec2.create(launchRequest());
      expect(ec2.launchAttempts).toEqual([
        { at: T0, nodeClaim: 'default-abcde', capacityTypes: ['on-demand'], instanceTypes: 3, instanceTypeNames: ['c5.large', 'm5.large', 'm5.xlarge'], zones: ['us-west-2a', 'us-west-2b'], result: 'ok' },
      ]);
    });

    it('gives the instance the type labels, the request labels, zone and capacity type, taints and allocatable', async () => {
      const { ec2 } = setup();
      const request = launchRequest();
      const launched = await ec2.create(request);
      const instance = ec2.instances[0];
      const c5 = (await ec2.getInstanceTypes({ nodeClass: 'default' })).find((t) => t.name === 'c5.large');
      expect(instance?.labels).toMatchObject({
        'node.kubernetes.io/instance-type': 'c5.large',
        'karpenter.sh/nodepool': 'default',
        team: 'a',
        [LABEL_ZONE]: launched.zone,
        [LABEL_CAPACITY_TYPE]: 'on-demand',
      });
      expect(instance?.taints).toEqual(request.taints);
      expect(instance?.startupTaints).toEqual(request.startupTaints);
      expect(instance?.tags).toEqual(request.tags);
      expect(instance?.allocatable).toEqual(c5?.allocatable);
      expect(instance?.state).toBe('running');
    });

    it("gives the instance the allocatable of its EC2NodeClass's kubelet and root volume mapping, as the solver saw it", async () => {
      const query = { nodeClass: 'default', kubelet: { maxPods: 8, systemReserved: { cpu: '300m' } }, blockDeviceMappings: [{ deviceName: '/dev/xvda', ebs: { volumeSize: '100Gi' } }] };
      const { ec2 } = setup({ instanceTypeQuery: (nodeClass) => ({ ...query, nodeClass }) });
      await ec2.create(launchRequest());
      const planned = (await ec2.getInstanceTypes(query)).find((t) => t.name === 'c5.large');
      const defaults = (await ec2.getInstanceTypes({ nodeClass: 'default' })).find((t) => t.name === 'c5.large');
      expect(ec2.instances[0]?.allocatable).toEqual(planned?.allocatable);
      expect(ec2.instances[0]?.allocatable.pods).toBe(8);
      expect(planned?.allocatable).not.toEqual(defaults?.allocatable);
    });

    it('skips an override with an injected capacity error and reports it as unavailable', async () => {
      const { ec2 } = setup();
      ec2.injectCapacityError({ instanceType: 'c5.large', zone: 'us-west-2a', capacityType: 'on-demand' }, T0, T0 + 30 * MINUTE);
      const launched = await ec2.create(launchRequest());
      expect(launched).toMatchObject({ instanceType: 'c5.large', zone: 'us-west-2b', price: 0.0851 });
      expect(launched.unavailableOfferings).toEqual([{ instanceType: 'c5.large', zone: 'us-west-2a', capacityType: 'on-demand' }]);
      expect(ec2.launchAttempts.map((a) => a.result)).toEqual(['ok']);
    });

    it('launches spot on an override with capacity when the other spot pool is out of capacity', async () => {
      const { ec2 } = setup();
      const request = launchRequest({
        capacityType: 'spot',
        overrides: [
          { instanceType: 'm5.large', zone: 'us-west-2a', price: 0.03 },
          { instanceType: 'm5.large', zone: 'us-west-2b', price: 0.04 },
        ],
      });
      ec2.injectCapacityError({ instanceType: 'm5.large', zone: 'us-west-2a', capacityType: 'spot' }, T0, T0 + 30 * MINUTE);
      const launched = await ec2.create(request);
      expect(launched).toMatchObject({ instanceType: 'm5.large', zone: 'us-west-2b', capacityType: 'spot', price: 0.04 });
      expect(launched.unavailableOfferings).toEqual([{ instanceType: 'm5.large', zone: 'us-west-2a', capacityType: 'spot' }]);
      expect(ec2.instances[0]?.labels[LABEL_CAPACITY_TYPE]).toBe('spot');
    });

    it('ignores a capacity error injected for another capacity type', async () => {
      const { ec2 } = setup();
      ec2.injectCapacityError({ instanceType: 'c5.large', zone: 'us-west-2a', capacityType: 'spot' }, T0, T0 + 30 * MINUTE);
      const launched = await ec2.create(launchRequest());
      expect(launched).toMatchObject({ instanceType: 'c5.large', zone: 'us-west-2a', unavailableOfferings: [] });
    });

    it('throws InsufficientCapacityError carrying every offering when no override has capacity, and records the error code', async () => {
      const { ec2 } = setup();
      const request = launchRequest();
      for (const o of request.overrides) ec2.injectCapacityError({ instanceType: o.instanceType, zone: o.zone, capacityType: 'on-demand' }, T0, T0 + 30 * MINUTE);
      const error = await rejection(ec2.create(request));
      expect(error).toBeInstanceOf(InsufficientCapacityError);
      if (!isInsufficientCapacityError(error)) throw error;
      expect(error.errorCode).toBe('InsufficientInstanceCapacity');
      expect(error.offerings).toEqual(request.overrides.map((o) => ({ instanceType: o.instanceType, zone: o.zone, capacityType: 'on-demand' })));
      expect(ec2.launchAttempts).toEqual([
        { at: T0, nodeClaim: 'default-abcde', capacityTypes: ['on-demand'], instanceTypes: 3, instanceTypeNames: ['c5.large', 'm5.large', 'm5.xlarge'], zones: ['us-west-2a', 'us-west-2b'], result: 'InsufficientInstanceCapacity' },
      ]);
      expect(ec2.instances).toEqual([]);
      expect(await ec2.list()).toEqual([]);
    });

    it('reports the injected error code when every override is out of capacity', async () => {
      const { ec2 } = setup();
      const request = launchRequest({ capacityType: 'spot', overrides: [{ instanceType: 'm5.large', zone: 'us-west-2a', price: 0.04 }] });
      ec2.injectCapacityError({ instanceType: 'm5.large', zone: 'us-west-2a', capacityType: 'spot' }, T0, T0 + MINUTE, 'MaxSpotInstanceCountExceeded');
      const error = await rejection(ec2.create(request));
      expect(error).toMatchObject({ errorCode: 'MaxSpotInstanceCountExceeded' });
      expect(ec2.launchAttempts.map((a) => a.result)).toEqual(['MaxSpotInstanceCountExceeded']);
    });

    it('launches for a NodeClaim whose earlier attempt failed, once capacity is back', async () => {
      const { clock, ec2 } = setup();
      const request = launchRequest({ overrides: [{ instanceType: 'm5.large', zone: 'us-west-2a', price: 0.096 }] });
      ec2.injectCapacityError({ instanceType: 'm5.large', zone: 'us-west-2a', capacityType: 'on-demand' }, T0, T0 + MINUTE);
      await rejection(ec2.create(request));
      await clock.runUntil(T0 + MINUTE);
      const launched = await ec2.create(request);
      expect(launched.instanceType).toBe('m5.large');
      expect(ec2.launchAttempts.map((a) => a.result)).toEqual(['InsufficientInstanceCapacity', 'ok']);
    });

    it('applies an injected error from its start time until just before its end time', async () => {
      const { clock, ec2 } = setup();
      const only = { overrides: [{ instanceType: 'm5.large', zone: 'us-west-2a', price: 0.096 }] };
      ec2.injectCapacityError({ instanceType: 'm5.large', zone: 'us-west-2a', capacityType: 'on-demand' }, T0 + MINUTE, T0 + 3 * MINUTE);
      const before = await ec2.create(launchRequest({ ...only, nodeClaim: 'before' }));
      expect(before.instanceType).toBe('m5.large');
      await clock.runUntil(T0 + MINUTE);
      expect(await rejection(ec2.create(launchRequest({ ...only, nodeClaim: 'at-start' })))).toBeInstanceOf(InsufficientCapacityError);
      await clock.runUntil(T0 + 3 * MINUTE - 1);
      expect(await rejection(ec2.create(launchRequest({ ...only, nodeClaim: 'just-before-end' })))).toBeInstanceOf(InsufficientCapacityError);
      await clock.runUntil(T0 + 3 * MINUTE);
      const after = await ec2.create(launchRequest({ ...only, nodeClaim: 'at-end' }));
      expect(after).toMatchObject({ instanceType: 'm5.large', zone: 'us-west-2a', unavailableOfferings: [] });
      expect(ec2.launchAttempts.map((a) => [a.nodeClaim, a.result])).toEqual([
        ['before', 'ok'],
        ['at-start', 'InsufficientInstanceCapacity'],
        ['just-before-end', 'InsufficientInstanceCapacity'],
        ['at-end', 'ok'],
      ]);
    });
  });

  describe('registration', () => {
    it('calls onRegister with the instance 45 s after launch by default', async () => {
      const { clock, ec2, onRegister, registered } = setup();
      const launched = await ec2.create(launchRequest());
      await clock.runUntil(T0 + 44_999);
      expect(onRegister).not.toHaveBeenCalled();
      await clock.runUntil(T0 + 45_000);
      expect(onRegister).toHaveBeenCalledTimes(1);
      expect(registered[0]).toMatchObject({ instanceId: launched.instanceId, nodeClaim: 'default-abcde', instanceType: 'c5.large' });
    });

    it('waits the configured registration delay', async () => {
      const { clock, ec2, onRegister } = setup({ registrationDelayMs: 90_000 });
      await clock.runUntil(T0 + 10_000);
      await ec2.create(launchRequest());
      await clock.runUntil(T0 + 99_999);
      expect(onRegister).not.toHaveBeenCalled();
      await clock.runUntil(T0 + 100_000);
      expect(onRegister).toHaveBeenCalledTimes(1);
    });

    it('registers once when the launch is repeated with the same NodeClaim name', async () => {
      const { clock, ec2, onRegister } = setup();
      await ec2.create(launchRequest());
      await ec2.create(launchRequest());
      await clock.runUntil(T0 + 10 * MINUTE);
      expect(onRegister).toHaveBeenCalledTimes(1);
    });

    it('does not register an instance deleted before its kubelet joins', async () => {
      const { clock, ec2, onRegister } = setup();
      const launched = await ec2.create(launchRequest());
      await clock.runUntil(T0 + 30_000);
      await ec2.delete(launched.instanceId);
      await clock.runUntil(T0 + 10 * MINUTE);
      expect(onRegister).not.toHaveBeenCalled();
    });
  });

  describe('delete', () => {
    it('terminates the instance at the current time and drops it from list', async () => {
      const { clock, ec2 } = setup();
      const a = await ec2.create(launchRequest({ nodeClaim: 'a' }));
      const b = await ec2.create(launchRequest({ nodeClaim: 'b' }));
      await clock.runUntil(T0 + 5 * MINUTE);
      await ec2.delete(a.instanceId);
      expect((await ec2.list()).map((i) => i.instanceId)).toEqual([b.instanceId]);
      expect(ec2.instances.find((i) => i.instanceId === a.instanceId)).toMatchObject({ state: 'terminated', terminatedAt: T0 + 5 * MINUTE });
    });

    it('ignores an unknown or already terminated instance', async () => {
      const { clock, ec2 } = setup();
      const a = await ec2.create(launchRequest());
      await ec2.delete(a.instanceId);
      await clock.runUntil(T0 + MINUTE);
      await expect(ec2.delete(a.instanceId)).resolves.toBeUndefined();
      await expect(ec2.delete('i-doesnotexist')).resolves.toBeUndefined();
      expect(ec2.instances[0]?.terminatedAt).toBe(T0);
    });
  });

  describe('adopt', () => {
    it('adds a running instance priced at its offering that a later create for the same NodeClaim returns', async () => {
      const { ec2 } = setup();
      const adopted = await ec2.adopt({
        instanceType: 'm5.xlarge',
        zone: 'us-west-2b',
        capacityType: 'on-demand',
        nodeClaim: 'n1',
        nodeClass: 'default',
        labels: {},
        taints: [],
        tags: {},
        launchedAt: T0 - 2 * 60 * MINUTE,
      });
      expect(adopted).toMatchObject({ price: PRICE['m5.xlarge'], state: 'running', labels: { [LABEL_ZONE]: 'us-west-2b', [LABEL_CAPACITY_TYPE]: 'on-demand' } });
      const again = await ec2.create(launchRequest({ nodeClaim: 'n1' }));
      expect(again.instanceId).toBe(adopted.instanceId);
      expect(ec2.launchAttempts).toEqual([]);
    });

    it("gives an adopted instance the allocatable of its EC2NodeClass's query", async () => {
      const { ec2 } = setup({ instanceTypeQuery: (nodeClass) => ({ nodeClass, kubelet: { maxPods: 11 } }) });
      const adopted = await ec2.adopt({ instanceType: 'm5.large', zone: 'us-west-2a', capacityType: 'on-demand', nodeClaim: 'n', nodeClass: 'default', labels: {}, taints: [], tags: {}, launchedAt: T0 });
      expect(adopted.allocatable.pods).toBe(11);
    });

    it('throws RangeError for a type outside the catalogue', async () => {
      const { ec2 } = setup();
      const args = { instanceType: 'x9.huge', zone: 'us-west-2a', capacityType: 'on-demand' as const, nodeClaim: 'n', nodeClass: 'd', labels: {}, taints: [], tags: {}, launchedAt: T0 };
      await expect(ec2.adopt(args)).rejects.toBeInstanceOf(RangeError);
    });
  });
});

/** Guards the fixture: the catalogue rows the tests rely on exist with the prices in {@link PRICE}. */
describe('catalogue fixture', () => {
  it('lists the on-demand prices the tests assume', () => {
    const byName = new Map<string, InstanceTypeInfo>(CATALOG.map((t) => [t.name, t]));
    for (const [name, price] of Object.entries(PRICE)) expect(byName.get(name)?.onDemandPrice, name).toBe(price);
  });
});
