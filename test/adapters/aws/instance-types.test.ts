import {
  DescribeInstanceTypeOfferingsCommand,
  DescribeInstanceTypesCommand,
  EC2Client,
  type DescribeInstanceTypesCommandInput,
  type InstanceTypeOffering,
} from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  DESCRIBE_INSTANCE_TYPES_FILTERS,
  Ec2InstanceTypes,
  INSTANCE_TYPES_TTL_MS,
  instanceTypeInfoFromEc2,
  karpenterLabels,
} from '../../../shared/adapters/aws/instance-types.js';
import type { PriceSnapshot, PriceSnapshotSource } from '../../../shared/adapters/aws/price-store.js';
import { CloudProviderError, ThrottledError } from '../../../shared/core/errors.js';
import { instanceTypeByName, loadCatalog } from '../../../shared/core/instancetypes/catalog.js';
import type { InstanceType } from '../../../shared/core/instancetypes/offering.js';
import { LABEL_CAPACITY_TYPE, LABEL_ZONE } from '../../../shared/core/api/labels.js';
import type { InstanceTypeQuery } from '../../../shared/ports/cloud-provider.js';
import { SimulatedEc2 } from '../../../shared/sim/simulated-ec2.js';
import { VirtualClock } from '../../../shared/sim/virtual-clock.js';
import { HAS_REFERENCE_DATA, describeInstanceType, referenceTypeNames } from '../../support/ec2-instance-type-fixtures.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const ZONES = ['us-west-2a', 'us-west-2b', 'us-west-2c'];
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };

/** The shipped catalogue's row of a type. */
const shipped = (name: string) => {
  const row = instanceTypeByName(name);
  if (!row) throw new Error(`${name} is not in the catalogue`);
  return row;
};

/** Types the mocked EC2 describes, chosen to cover every branch of the mapping. */
const TYPES = [
  'm5.large', // nitro, pod-eni, EBS bandwidth
  'c6gd.large', // arm64 (Graviton), local NVMe
  'm7i-flex.large', // capability-flex
  'p5.48xlarge', // NVIDIA GPUs, EFA
  'g4ad.xlarge', // AMD GPU
  'inf2.xlarge', // Neuron devices and cores
  'dl2q.24xlarge', // Qualcomm inference accelerator; no price anywhere
  'm5.metal', // bare metal: no hypervisor
  't2.micro', // xen, no default EBS optimisation, no bandwidth in Karpenter's table
] as const;

describe('instance-types', () => {
  describe('instanceTypeInfoFromEc2', () => {
    it.each(TYPES)('maps %s exactly to the shipped catalogue row', (name) => {
      const row = shipped(name);
      expect(instanceTypeInfoFromEc2(describeInstanceType(name), row, row.onDemandPrice)).toStrictEqual(row);
    });

    it.skipIf(!HAS_REFERENCE_DATA)('maps every one of the 1,363 reference types to its catalogue row, byte for byte (needs ../shared/data)', () => {
      const differing = referenceTypeNames().filter((name) => {
        const row = shipped(name);
        return JSON.stringify(instanceTypeInfoFromEc2(describeInstanceType(name), row, row.onDemandPrice)) !== JSON.stringify(row);
      });
      expect(differing).toEqual([]);
    });

    it('derives network bandwidth from the network cards and offers no pod-eni for a type the catalogue does not know', () => {
      const ec2 = describeInstanceType('m5.large');
      const mapped = instanceTypeInfoFromEc2({ ...ec2, InstanceType: 'm5.large' }, undefined, 0.1);
      expect(mapped?.labels['karpenter.k8s.aws/instance-network-bandwidth']).toBe('750');
      expect(mapped?.extendedResources).toEqual({});
      expect(mapped?.karpenterAllocatable).toEqual(shipped('m5.large').karpenterAllocatable);
      const multiCard = { ...ec2, NetworkInfo: { ...ec2.NetworkInfo, NetworkCards: [0, 1].map((i) => ({ NetworkCardIndex: i, MaximumNetworkInterfaces: 3, BaselineBandwidthInGbps: 0.39 })) } };
      expect(instanceTypeInfoFromEc2(multiCard, undefined, null)?.labels['karpenter.k8s.aws/instance-network-bandwidth']).toBe('780');
    });

    it('leaves out a type EC2 describes without vCPUs, memory, a usable architecture or ENI limits', () => {
      const ec2 = describeInstanceType('m5.large');
      expect(instanceTypeInfoFromEc2({ ...ec2, VCpuInfo: {} }, undefined, null)).toBeUndefined();
      expect(instanceTypeInfoFromEc2({ ...ec2, MemoryInfo: undefined }, undefined, null)).toBeUndefined();
      expect(instanceTypeInfoFromEc2({ ...ec2, ProcessorInfo: { SupportedArchitectures: ['i386'] } }, undefined, null)).toBeUndefined();
      expect(instanceTypeInfoFromEc2({ ...ec2, NetworkInfo: { NetworkCards: [] } }, undefined, null)).toBeUndefined();
    });
  });

  describe('karpenterLabels', () => {
    it('splits category and generation as Karpenter does, including high-memory names', () => {
      const ec2 = describeInstanceType('m5.large');
      const labels = karpenterLabels({ ...ec2, InstanceType: 'u-6tb1.56xlarge' as typeof ec2.InstanceType });
      expect(labels).toMatchObject({
        'karpenter.k8s.aws/instance-category': 'u',
        'karpenter.k8s.aws/instance-generation': '1',
        'karpenter.k8s.aws/instance-family': 'u-6tb1',
        'karpenter.k8s.aws/instance-size': '56xlarge',
        'karpenter.k8s.aws/instance-capability-flex': 'false',
      });
    });

    it('picks the first architecture Kubernetes knows (i386 comes first on old types)', () => {
      const ec2 = describeInstanceType('t2.micro');
      expect(karpenterLabels({ ...ec2, ProcessorInfo: { ...ec2.ProcessorInfo, SupportedArchitectures: ['i386', 'x86_64'] } })?.['kubernetes.io/arch']).toBe('amd64');
    });
  });

  describe('Ec2InstanceTypes', () => {
    const ec2 = new EC2Client({ region: 'us-west-2', credentials });
    const mock = mockClient(ec2);
    let now = T0;
    const clock = { now: () => now };
    /** A price source returning `snapshot`, counting reads. */
    const pricesOf = (snapshot: PriceSnapshot | undefined): PriceSnapshotSource & { reads: number } => {
      const source = {
        reads: 0,
        latest: async () => {
          source.reads++;
          return snapshot;
        },
      };
      return source;
    };
    const snapshot: PriceSnapshot = {
      region: 'us-west-2',
      fetchedAt: T0 - 3_600_000,
      onDemand: new Map([['m5.large', 0.1]]),
      spot: new Map([
        ['m5.large', new Map([['us-west-2a', 0.0374], ['us-west-2b', 0.0391]])],
        ['c6gd.large', new Map([['us-west-2c', 0.0262]])],
        ['inf2.xlarge', new Map([['us-west-2a', 0.31]])],
      ]),
    };
    /** Every type in every zone, except p5.48xlarge in us-west-2a and -2b only. */
    const offerings: InstanceTypeOffering[] = TYPES.flatMap((type) =>
      (type === 'p5.48xlarge' ? ZONES.slice(0, 2) : ZONES).map((zone) => ({ InstanceType: type, LocationType: 'availability-zone' as const, Location: zone })),
    );
    const describeInputs: DescribeInstanceTypesCommandInput[] = [];

    beforeEach(() => {
      now = T0;
      mock.reset();
      describeInputs.length = 0;
      // Two pages of instance types; inf2.xlarge supports on-demand only.
      mock.on(DescribeInstanceTypesCommand).callsFake((input: DescribeInstanceTypesCommandInput) => {
        describeInputs.push(structuredClone(input));
        const types = TYPES.map((t) => describeInstanceType(t, t === 'inf2.xlarge' ? ['on-demand'] : ['on-demand', 'spot']));
        return input.NextToken === undefined ? { InstanceTypes: types.slice(0, 4), NextToken: 'types-2' } : { InstanceTypes: types.slice(4) };
      });
      mock
        .on(DescribeInstanceTypeOfferingsCommand)
        .callsFake((input: { NextToken?: string }) =>
          input.NextToken === undefined ? { InstanceTypeOfferings: offerings.slice(0, 10), NextToken: 'offerings-2' } : { InstanceTypeOfferings: offerings.slice(10) },
        );
    });

    const byName = (types: readonly InstanceType[]): Map<string, InstanceType> => new Map(types.map((t) => [t.name, t]));
    const offeringsOf = (type: InstanceType | undefined): string[] => (type?.offerings ?? []).map((o) => `${o.zone} ${o.capacityType} ${o.price}`);

    it('describes hvm x86_64/arm64 types and availability-zone offerings, following every page', async () => {
      const types = await new Ec2InstanceTypes({ ec2, prices: pricesOf(snapshot), clock }).getInstanceTypes({ nodeClass: 'default' });
      expect(describeInputs.map((i) => [i.Filters, i.NextToken])).toEqual([
        [DESCRIBE_INSTANCE_TYPES_FILTERS, undefined],
        [DESCRIBE_INSTANCE_TYPES_FILTERS, 'types-2'],
      ]);
      expect(DESCRIBE_INSTANCE_TYPES_FILTERS).toEqual([
        { Name: 'supported-virtualization-type', Values: ['hvm'] },
        { Name: 'processor-info.supported-architecture', Values: ['x86_64', 'arm64'] },
      ]);
      expect(mock.commandCalls(DescribeInstanceTypeOfferingsCommand).map((c) => c.args[0].input.LocationType)).toEqual(['availability-zone', 'availability-zone']);
      expect(types.map((t) => t.name)).toEqual([...TYPES].filter((t) => t !== 'dl2q.24xlarge').sort());
    });

    it('offers on-demand in every zone of the type and spot only where the snapshot has a spot price', async () => {
      const types = byName(await new Ec2InstanceTypes({ ec2, prices: pricesOf(snapshot), clock }).getInstanceTypes({ nodeClass: 'default' }));
      expect(offeringsOf(types.get('m5.large'))).toEqual([
        'us-west-2a on-demand 0.1',
        'us-west-2a spot 0.0374',
        'us-west-2b on-demand 0.1',
        'us-west-2b spot 0.0391',
        'us-west-2c on-demand 0.1',
      ]);
      const p5 = types.get('p5.48xlarge');
      expect(offeringsOf(p5)).toEqual([`us-west-2a on-demand ${shipped('p5.48xlarge').onDemandPrice}`, `us-west-2b on-demand ${shipped('p5.48xlarge').onDemandPrice}`]);
      expect(p5?.requirements.get(LABEL_ZONE).has('us-west-2c')).toBe(false);
      expect(p5?.requirements.get(LABEL_CAPACITY_TYPE).has('spot')).toBe(false);
      expect(types.get('m5.large')?.offerings.every((o) => o.available)).toBe(true);
    });

    it('offers no spot for a type that does not support it, whatever the snapshot says', async () => {
      const types = byName(await new Ec2InstanceTypes({ ec2, prices: pricesOf(snapshot), clock }).getInstanceTypes({ nodeClass: 'default' }));
      expect(types.get('inf2.xlarge')?.offerings.map((o) => o.capacityType)).toEqual(['on-demand', 'on-demand', 'on-demand']);
    });

    it('falls back to the shipped catalogue’s on-demand price and offers no spot before any snapshot exists', async () => {
      const types = byName(await new Ec2InstanceTypes({ ec2, prices: pricesOf(undefined), clock }).getInstanceTypes({ nodeClass: 'default' }));
      expect(offeringsOf(types.get('m5.large'))).toEqual(ZONES.map((z) => `${z} on-demand 0.096`));
      expect(offeringsOf(types.get('c6gd.large'))).toEqual(ZONES.map((z) => `${z} on-demand ${shipped('c6gd.large').onDemandPrice}`));
    });

    it('leaves out a type with no on-demand price anywhere and no spot price', async () => {
      expect(shipped('dl2q.24xlarge').onDemandPrice).toBeNull();
      const types = byName(await new Ec2InstanceTypes({ ec2, prices: pricesOf(snapshot), clock }).getInstanceTypes({ nodeClass: 'default' }));
      expect(types.has('dl2q.24xlarge')).toBe(false);
      const withSpot: PriceSnapshot = { ...snapshot, spot: new Map([['dl2q.24xlarge', new Map([['us-west-2b', 2.5]])]]) };
      const spotOnly = byName(await new Ec2InstanceTypes({ ec2, prices: pricesOf(withSpot), clock }).getInstanceTypes({ nodeClass: 'default' }));
      expect(offeringsOf(spotOnly.get('dl2q.24xlarge'))).toEqual(['us-west-2b spot 2.5']);
    });

    it('computes capacity and allocatable for the query exactly as the simulated EC2 does', async () => {
      const query: InstanceTypeQuery = { nodeClass: 'tuned', kubelet: { maxPods: 110, kubeReserved: { cpu: '200m' }, evictionHard: { 'memory.available': '5%' } }, blockDeviceMappings: [{ deviceName: '/dev/xvda', ebs: { volumeSize: '100Gi' } }] };
      const real = byName(await new Ec2InstanceTypes({ ec2, prices: pricesOf(snapshot), clock, vmMemoryOverheadPercent: 0.05 }).getInstanceTypes(query));
      const sim = new SimulatedEc2(new VirtualClock(T0), { region: 'us-west-2', catalog: loadCatalog(), vmMemoryOverheadPercent: 0.05, clusterName: 'c', onRegister: () => undefined });
      const simulated = byName(await sim.getInstanceTypes(query));
      for (const name of real.keys()) {
        expect({ name, capacity: real.get(name)?.capacity, allocatable: real.get(name)?.allocatable }).toEqual({
          name,
          capacity: simulated.get(name)?.capacity,
          allocatable: simulated.get(name)?.allocatable,
        });
        expect(real.get(name)?.labels).toEqual(simulated.get(name)?.labels);
      }
      expect(real.get('m5.large')?.allocatable['ephemeral-storage']).toBeGreaterThan(80_000);
    });

    it('gives a Windows query os=windows and the windows-build, drops arm64, and sizes storage by the family, as the simulated EC2 does', async () => {
      const query: InstanceTypeQuery = { nodeClass: 'win', amiFamily: 'Windows2022' };
      const real = byName(await new Ec2InstanceTypes({ ec2, prices: pricesOf(snapshot), clock }).getInstanceTypes(query));
      const sim = byName(await new SimulatedEc2(new VirtualClock(T0), { region: 'us-west-2', catalog: loadCatalog(), vmMemoryOverheadPercent: 0.075, clusterName: 'c', onRegister: () => undefined }).getInstanceTypes(query));
      expect(real.has('c6gd.large')).toBe(false);
      expect(real.get('m5.large')?.labels).toMatchObject({ 'kubernetes.io/os': 'windows', 'node.kubernetes.io/windows-build': '10.0.20348' });
      expect(real.get('m5.large')?.capacity).toMatchObject({ pods: 110, 'ephemeral-storage': 51200 });
      for (const [name, type] of real) expect({ name, labels: type.labels, capacity: type.capacity }).toEqual({ name, labels: sim.get(name)?.labels, capacity: sim.get(name)?.capacity });
      const bottlerocket = byName(
        await new Ec2InstanceTypes({ ec2, prices: pricesOf(snapshot), clock }).getInstanceTypes({
          nodeClass: 'br',
          amiFamily: 'Bottlerocket',
          blockDeviceMappings: [{ deviceName: '/dev/xvda', ebs: { volumeSize: '4Gi' } }, { deviceName: '/dev/xvdb', ebs: { volumeSize: '100Gi' } }],
        }),
      );
      expect(bottlerocket.get('c6gd.large')?.labels['kubernetes.io/os']).toBe('linux');
      expect(bottlerocket.get('m5.large')?.capacity['ephemeral-storage']).toBe(102_400);
    });

    describe('cache', () => {
      const ec2Calls = (): number => mock.commandCalls(DescribeInstanceTypesCommand).length + mock.commandCalls(DescribeInstanceTypeOfferingsCommand).length;

      it('reuses one fetch for every query for 5 minutes, then fetches again', async () => {
        const prices = pricesOf(snapshot);
        const types = new Ec2InstanceTypes({ ec2, prices, clock });
        const first = await types.getInstanceTypes({ nodeClass: 'default' });
        expect(ec2Calls()).toBe(4);
        now = T0 + INSTANCE_TYPES_TTL_MS - 1;
        expect(await types.getInstanceTypes({ nodeClass: 'default' })).toBe(first);
        await types.getInstanceTypes({ nodeClass: 'other', kubelet: { maxPods: 20 } });
        expect(ec2Calls()).toBe(4);
        expect(prices.reads).toBe(1);
        now = T0 + INSTANCE_TYPES_TTL_MS;
        const later = await types.getInstanceTypes({ nodeClass: 'default' });
        expect(later).not.toBe(first);
        expect(later).toEqual(first);
        expect(ec2Calls()).toBe(8);
        expect(prices.reads).toBe(2);
        expect(INSTANCE_TYPES_TTL_MS).toBe(300_000);
      });

      it('keys results by query content, not by key order', async () => {
        const types = new Ec2InstanceTypes({ ec2, prices: pricesOf(snapshot), clock });
        const a = await types.getInstanceTypes({ nodeClass: 'x', kubelet: { maxPods: 20, podsPerCore: 4 }, blockDeviceMappings: [{ deviceName: '/dev/xvda', ebs: { volumeSize: '50Gi' } }] });
        const b = await types.getInstanceTypes({ blockDeviceMappings: [{ deviceName: '/dev/xvda', ebs: { volumeSize: '50Gi' } }], kubelet: { podsPerCore: 4, maxPods: 20 }, nodeClass: 'x' });
        const c = await types.getInstanceTypes({ nodeClass: 'x', kubelet: { maxPods: 30, podsPerCore: 4 }, blockDeviceMappings: [{ deviceName: '/dev/xvda', ebs: { volumeSize: '50Gi' } }] });
        expect(b).toBe(a);
        expect(c).not.toBe(a);
        expect(byName(c).get('m5.large')?.allocatable.pods).toBe(8);
        expect(byName(a).get('m5.large')?.allocatable.pods).toBe(8);
        expect(byName(c).get('p5.48xlarge')?.allocatable.pods).toBe(30);
      });

      it('shares one fetch between concurrent calls and does not cache a failed one', async () => {
        const types = new Ec2InstanceTypes({ ec2, prices: pricesOf(snapshot), clock });
        await Promise.all([types.getInstanceTypes({ nodeClass: 'a' }), types.getInstanceTypes({ nodeClass: 'b' })]);
        expect(mock.commandCalls(DescribeInstanceTypesCommand)).toHaveLength(2);

        const failing = new Ec2InstanceTypes({ ec2, prices: pricesOf(snapshot), clock });
        let fail = true;
        mock.on(DescribeInstanceTypeOfferingsCommand).callsFake(() => {
          if (!fail) return { InstanceTypeOfferings: offerings };
          fail = false;
          throw Object.assign(new Error('Rate exceeded'), { name: 'RequestLimitExceeded' });
        });
        await expect(failing.getInstanceTypes({ nodeClass: 'a' })).rejects.toBeInstanceOf(ThrottledError);
        expect((await failing.getInstanceTypes({ nodeClass: 'a' })).length).toBe(TYPES.length - 1);
      });
    });

    it('turns EC2 failures into CloudProviderError with the EC2 error code', async () => {
      mock.on(DescribeInstanceTypesCommand).rejects(Object.assign(new Error('You are not authorized'), { name: 'UnauthorizedOperation' }));
      await expect(new Ec2InstanceTypes({ ec2, prices: pricesOf(snapshot), clock }).getInstanceTypes({ nodeClass: 'default' })).rejects.toSatisfy(
        (e) => e instanceof CloudProviderError && e.code === 'UnauthorizedOperation',
      );
    });
  });
});
