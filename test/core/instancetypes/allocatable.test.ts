import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { QuantityError } from '../../../shared/core/errors.js';
import {
  amiFamilyLabels,
  computeAllocatable,
  computeCapacity,
  computeOverhead,
  eniLimitedPods,
  ephemeralStorageCapacity,
  evictionThreshold,
  kubeReserved,
  kubeReservedCpu,
  kubeReservedMemory,
  launchableWithAmiFamily,
  maxPods,
  memoryCapacity,
  systemReserved,
  type AllocatableOptions,
} from '../../../shared/core/instancetypes/allocatable.js';
import { instanceTypeByName, loadCatalog } from '../../../shared/core/instancetypes/catalog.js';
import type { InstanceTypeInfo } from '../../../shared/core/instancetypes/instance-type.js';

const MIB = 2 ** 20;

/** A catalogue row by name (fails the test when the catalogue lacks it). */
function catalogType(name: string): InstanceTypeInfo {
  const type = instanceTypeByName(name);
  if (!type) throw new Error(`catalogue has no ${name}`);
  return type;
}

/** A hand-made instance type: m5.large-like defaults, override what the example needs. */
function instanceType(overrides: Partial<InstanceTypeInfo> = {}): InstanceTypeInfo {
  return {
    name: 'test.large',
    vcpu: 2,
    memoryMiB: 8192,
    arch: 'amd64',
    os: 'linux',
    labels: {},
    gpu: null,
    accelerator: null,
    extendedResources: {},
    defaultMaxENIs: 3,
    ipv4AddressesPerInterface: 10,
    onDemandPrice: null,
    karpenterAllocatable: { cpu: 0, memory: 0, 'ephemeral-storage': 0, pods: 0 },
    ...overrides,
  };
}

const m5large = catalogType('m5.large');

describe('allocatable', () => {
  describe('eniLimitedPods', () => {
    it('computes ENIs × (IPv4 per ENI − 1) + 2 for m5.large', () => {
      expect(eniLimitedPods(m5large)).toBe(3 * (10 - 1) + 2);
    });

    it('uses the default network card only (p5.48xlarge: 2 ENIs → 100 pods)', () => {
      expect(eniLimitedPods(catalogType('p5.48xlarge'))).toBe(2 * 49 + 2);
    });

    it('subtracts reserved ENIs and EFA-only interfaces', () => {
      expect(eniLimitedPods(m5large, 1)).toBe(2 * 9 + 2);
      expect(eniLimitedPods(m5large, 1, 1)).toBe(1 * 9 + 2);
    });

    it('returns 0, not 2, when no ENI is usable', () => {
      expect(eniLimitedPods(m5large, 3)).toBe(0);
      expect(eniLimitedPods(m5large, 5)).toBe(0);
    });
  });

  describe('maxPods', () => {
    it('uses the ENI formula by default (t3.nano: 4, m5.4xlarge: 234)', () => {
      expect(maxPods(catalogType('t3.nano'))).toBe(4);
      expect(maxPods(catalogType('m5.4xlarge'))).toBe(234);
    });

    it('applies no 110 or 250 cap to large types (c8i.48xlarge: 1514)', () => {
      expect(maxPods(catalogType('c8i.48xlarge'))).toBe(24 * 63 + 2);
    });

    it('uses kubelet.maxPods when set, above or below the ENI limit', () => {
      expect(maxPods(m5large, { kubelet: { maxPods: 110 } })).toBe(110);
      expect(maxPods(m5large, { kubelet: { maxPods: 8 } })).toBe(8);
    });

    it('caps at podsPerCore × vCPU when podsPerCore is set', () => {
      expect(maxPods(m5large, { kubelet: { podsPerCore: 10 } })).toBe(20);
      expect(maxPods(m5large, { kubelet: { podsPerCore: 20 } })).toBe(29);
      expect(maxPods(m5large, { kubelet: { maxPods: 110, podsPerCore: 30 } })).toBe(60);
    });

    it('ignores podsPerCore when it is 0 or the AMI family is Bottlerocket', () => {
      expect(maxPods(m5large, { kubelet: { podsPerCore: 0 } })).toBe(29);
      expect(maxPods(m5large, { amiFamily: 'Bottlerocket', kubelet: { podsPerCore: 10 } })).toBe(29);
    });

    it('returns 110 on Windows, which has no ENI-limited density', () => {
      expect(maxPods(m5large, { amiFamily: 'Windows2022' })).toBe(110);
      expect(maxPods(m5large, { amiFamily: 'Windows2022', kubelet: { podsPerCore: 5 } })).toBe(10);
    });

    it('applies RESERVED_ENIS and EFA-only interfaces on network card 0', () => {
      expect(maxPods(m5large, { reservedENIs: 1 })).toBe(20);
      const efaOnly: AllocatableOptions = {
        networkInterfaces: [
          { networkCardIndex: 0, interfaceType: 'interface' },
          { networkCardIndex: 0, interfaceType: 'efa-only' },
          { networkCardIndex: 1, interfaceType: 'efa-only' },
        ],
      };
      expect(maxPods(m5large, efaOnly)).toBe(20);
    });
  });

  describe('kubeReservedCpu', () => {
    // [vCPU, millicores]: 6 % of core 1, 1 % of core 2, 0.5 % of cores 3–4, 0.25 % above 4
    const table: [number, number][] = [
      [1, 60],
      [2, 70],
      [3, 75],
      [4, 80],
      [8, 90],
      [16, 110],
      [96, 310],
      [192, 550],
    ];
    it.each(table)('reserves the tiered share for %i vCPU → %im', (vcpu, millicores) => {
      expect(kubeReservedCpu(vcpu)).toBe(millicores);
    });

    it('truncates each tier to whole millicores (5 vCPU: 80 + trunc(2.5) = 82)', () => {
      expect(kubeReservedCpu(5)).toBe(82);
    });

    it('never decreases as vCPUs grow', () => {
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 512 }), (vcpu) => kubeReservedCpu(vcpu + 1) >= kubeReservedCpu(vcpu)),
      );
    });
  });

  describe('kubeReservedMemory', () => {
    it('reserves 11 MiB per pod plus 255 MiB', () => {
      expect(kubeReservedMemory(29)).toBe(574);
      expect(kubeReservedMemory(110)).toBe(1465);
      expect(kubeReservedMemory(0)).toBe(255);
    });
  });

  describe('kubeReserved', () => {
    it('computes cpu, memory and 1 GiB of ephemeral storage for m5.large', () => {
      expect(kubeReserved(m5large)).toEqual({ cpu: 70, memory: 574, 'ephemeral-storage': 1024 });
    });

    it('sizes memory for the ENI-limited pods on AL2023 even when maxPods or podsPerCore lower max pods', () => {
      expect(kubeReserved(m5large, { kubelet: { maxPods: 110 } }).memory).toBe(574);
      expect(kubeReserved(m5large, { kubelet: { podsPerCore: 1 } }).memory).toBe(574);
      expect(kubeReserved(m5large, { reservedENIs: 2 }).memory).toBe(574);
    });

    it('sizes memory for the node max pods on Bottlerocket and Windows', () => {
      expect(kubeReserved(m5large, { amiFamily: 'Bottlerocket', kubelet: { maxPods: 110 } }).memory).toBe(1465);
      expect(kubeReserved(m5large, { amiFamily: 'Windows2022' }).memory).toBe(1465);
    });

    it('lets kubelet.kubeReserved replace each resource it names', () => {
      expect(kubeReserved(m5large, { kubelet: { kubeReserved: { cpu: '200m', memory: '1Gi' } } })).toEqual({
        cpu: 200,
        memory: 1024,
        'ephemeral-storage': 1024,
      });
    });

    it('throws a QuantityError when an override is not a quantity', () => {
      expect(() => kubeReserved(m5large, { kubelet: { kubeReserved: { memory: 'lots' } } })).toThrow(QuantityError);
    });
  });

  describe('systemReserved', () => {
    it('reserves nothing by default', () => {
      expect(systemReserved()).toEqual({});
    });

    it('converts kubelet.systemReserved to canonical units', () => {
      expect(systemReserved({ kubelet: { systemReserved: { cpu: '100m', memory: '100Mi', 'ephemeral-storage': '1Gi' } } })).toEqual({
        cpu: 100,
        memory: 100,
        'ephemeral-storage': 1024,
      });
    });
  });

  describe('memoryCapacity', () => {
    it('subtracts ceil(7.5 %) of memory in whole MiB (m5.large: 8192 − 615 = 7577)', () => {
      expect(memoryCapacity(m5large)).toBe(7577);
    });

    it('subtracts 64 MiB of CMA on arm64 before the overhead (a1.large: 4032 − 303 = 3729)', () => {
      expect(memoryCapacity(catalogType('a1.large'))).toBe(3729);
    });

    // Karpenter's own memory_test.go cases, in bytes: [MiB, arch, overhead, expected bytes]
    const table: [number, 'amd64' | 'arm64', number, number][] = [
      [8192, 'amd64', 0.075, 7945060352],
      [8192, 'arm64', 0.075, 7883194368],
      [4096, 'arm64', 0, 4227858432],
      [16384, 'arm64', 0.15, 14545846272],
      [16384, 'amd64', 0.15, 14602469376],
      [512, 'arm64', 0.075, 434110464],
      [1000, 'amd64', 0.1, 943718400],
    ];
    it.each(table)('matches Karpenter for %i MiB %s at overhead %d', (memoryMiB, arch, overhead, bytes) => {
      expect(memoryCapacity(instanceType({ memoryMiB, arch }), { vmMemoryOverheadPercent: overhead }) * MIB).toBe(bytes);
    });
  });

  describe('ephemeralStorageCapacity (aws types.go ephemeralStorage, amifamily EphemeralBlockDevice)', () => {
    const ebs = (deviceName: string | undefined, volumeSize?: string, rootVolume?: boolean) => ({
      ...(deviceName !== undefined ? { deviceName } : {}),
      ...(rootVolume !== undefined ? { rootVolume } : {}),
      ebs: volumeSize !== undefined ? { volumeSize } : {},
    });
    /** Karpenter's examples/v1/bottlerocket.yaml with a 100Gi data volume. */
    const bottlerocket100 = [ebs('/dev/xvda', '4Gi'), ebs('/dev/xvdb', '100Gi')];
    /** Karpenter's examples/v1/multiple-ebs.yaml (al2023). */
    const multipleEbs = [ebs('/dev/xvda', '20Gi'), ebs('/dev/xvdb', '100Gi'), ebs('/dev/xvdc', '2000Gi')];

    it("is the family's default ephemeral device without mappings: 20 GiB (Bottlerocket's /dev/xvdb data volume), 50 GiB on Windows", () => {
      expect(ephemeralStorageCapacity(m5large)).toBe(20480);
      expect(ephemeralStorageCapacity(m5large, { amiFamily: 'AL2' })).toBe(20480);
      expect(ephemeralStorageCapacity(m5large, { amiFamily: 'Bottlerocket' })).toBe(20480);
      expect(ephemeralStorageCapacity(m5large, { amiFamily: 'Custom' })).toBe(20480);
      expect(ephemeralStorageCapacity(m5large, { amiFamily: 'Windows2019' })).toBe(51200);
      expect(ephemeralStorageCapacity(m5large, { amiFamily: 'Windows2025' })).toBe(51200);
    });

    it("is Bottlerocket's /dev/xvdb data volume, not its 4 GiB /dev/xvda OS volume", () => {
      expect(ephemeralStorageCapacity(m5large, { amiFamily: 'Bottlerocket', blockDeviceMappings: bottlerocket100 })).toBe(102400);
      // The same mappings under AL2023 use the root device /dev/xvda.
      expect(ephemeralStorageCapacity(m5large, { amiFamily: 'AL2023', blockDeviceMappings: bottlerocket100 })).toBe(4096);
    });

    it('is the root device /dev/xvda on AL2/AL2023 however many other volumes there are (examples/v1/multiple-ebs.yaml)', () => {
      expect(ephemeralStorageCapacity(m5large, { amiFamily: 'AL2023', blockDeviceMappings: multipleEbs })).toBe(20480);
      expect(ephemeralStorageCapacity(m5large, { amiFamily: 'AL2', blockDeviceMappings: [ebs('/dev/xvda', '80Gi')] })).toBe(81920);
    });

    it("falls back to the family's default when no mapping is on its ephemeral device, or that mapping has no size", () => {
      expect(ephemeralStorageCapacity(m5large, { amiFamily: 'AL2023', blockDeviceMappings: [ebs('/dev/xvdb', '100Gi')] })).toBe(20480);
      // Karpenter's "should default to EBS defaults when volumeSize is not defined" (snapshot-only mappings).
      expect(ephemeralStorageCapacity(m5large, { amiFamily: 'AL2', blockDeviceMappings: [ebs('/dev/xvda')] })).toBe(20480);
      expect(ephemeralStorageCapacity(m5large, { amiFamily: 'Bottlerocket', blockDeviceMappings: [ebs('/dev/xvdb')] })).toBe(20480);
      expect(ephemeralStorageCapacity(m5large, { amiFamily: 'Windows2022', blockDeviceMappings: [ebs('/dev/xvda', '100Gi')] })).toBe(51200);
      expect(ephemeralStorageCapacity(m5large, { amiFamily: 'Windows2022', blockDeviceMappings: [ebs('/dev/sda1', '100Gi')] })).toBe(102400);
    });

    it('prefers the rootVolume mapping over the family device, in every family', () => {
      const mappings = [ebs('/dev/xvda', '30Gi'), ebs('/dev/xvdc', '200Gi', true), ebs('/dev/xvdb', '60Gi')];
      for (const amiFamily of ['AL2023', 'Bottlerocket', 'Custom', 'Windows2022'] as const) {
        expect(ephemeralStorageCapacity(m5large, { amiFamily, blockDeviceMappings: mappings })).toBe(204800);
      }
    });

    it('is the last mapping for Custom (20 GiB when it has no size)', () => {
      expect(ephemeralStorageCapacity(m5large, { amiFamily: 'Custom', blockDeviceMappings: [ebs('/dev/xvda', '30Gi'), ebs('/dev/xvdb', '80Gi')] })).toBe(81920);
      expect(ephemeralStorageCapacity(m5large, { amiFamily: 'Custom', blockDeviceMappings: [ebs('/dev/xvda', '30Gi'), ebs('/dev/xvdb')] })).toBe(20480);
    });

    it('reads decimal sizes exactly (100G = 10^11 bytes)', () => {
      expect(ephemeralStorageCapacity(m5large, { blockDeviceMappings: [ebs('/dev/xvda', '100G')] }) * MIB).toBe(100e9);
    });

    it('is the instance-store NVMe total with instanceStorePolicy RAID0 (m6idn.32xlarge: 7600G, as in Karpenter), else the EBS volume', () => {
      const raid = { instanceStorePolicy: 'RAID0' as const, blockDeviceMappings: [ebs('/dev/xvda', '100Gi')] };
      expect(ephemeralStorageCapacity(catalogType('m6idn.32xlarge'), raid) * MIB).toBe(7600e9);
      expect(ephemeralStorageCapacity(catalogType('m5d.large'), raid) * MIB).toBe(75e9);
      expect(ephemeralStorageCapacity(m5large, raid)).toBe(102400);
    });

    it('gives more allocatable ephemeral-storage to Bottlerocket with a 100Gi /dev/xvdb than to AL2023 with its 20Gi root', () => {
      const bottlerocket = computeAllocatable(m5large, { amiFamily: 'Bottlerocket', blockDeviceMappings: bottlerocket100 })['ephemeral-storage'];
      const al2023 = computeAllocatable(m5large)['ephemeral-storage'];
      // capacity − 1 GiB kube-reserved − 10 % nodefs eviction threshold
      expect(bottlerocket).toBe(102400 - 1024 - 10240);
      expect(al2023).toBe(20480 - 1024 - 2048);
      expect(bottlerocket).toBeGreaterThan(50 * 1024);
      expect(al2023).toBeLessThan(50 * 1024);
    });
  });

  describe('evictionThreshold', () => {
    const capacity = computeCapacity(m5large);

    it('holds back 100 MiB of memory and 10 % of the root volume by default', () => {
      expect(evictionThreshold(capacity)).toEqual({ memory: 100, 'ephemeral-storage': 2048 });
    });

    it('uses an absolute evictionHard value as a quantity', () => {
      const hard = { 'memory.available': '500Mi', 'nodefs.available': '1Gi' };
      expect(evictionThreshold(capacity, { kubelet: { evictionHard: hard } })).toEqual({ memory: 500, 'ephemeral-storage': 1024 });
    });

    it('takes a percentage of capacity, rounded up to whole bytes', () => {
      const hard = { 'memory.available': '5%', 'nodefs.available': '15%' };
      const threshold = evictionThreshold(capacity, { kubelet: { evictionHard: hard } });
      expect(threshold.memory).toBe(Math.ceil((7577 * MIB) / 100 * 5) / MIB);
      expect(threshold['ephemeral-storage']).toBe(3072);
    });

    it('treats 100% as a disabled threshold', () => {
      expect(evictionThreshold(capacity, { kubelet: { evictionHard: { 'memory.available': '100%' } } }).memory).toBe(0);
    });

    it('ignores signals that do not change allocatable', () => {
      const hard = { 'imagefs.available': '15%', 'pid.available': '10%' };
      expect(evictionThreshold(capacity, { kubelet: { evictionHard: hard } })).toEqual({ memory: 100, 'ephemeral-storage': 2048 });
    });

    it.each(['abc%', '%', '150%', '-5%', 'lots'])('throws a QuantityError when the threshold is %s', (value) => {
      expect(() => evictionThreshold(capacity, { kubelet: { evictionHard: { 'memory.available': value } } })).toThrow(QuantityError);
    });
  });

  describe('computeCapacity', () => {
    it('reports cpu, memory, storage, pods and the instance extended resources', () => {
      expect(computeCapacity(catalogType('p4d.24xlarge'))).toEqual({
        cpu: 96000,
        memory: 1179648 - Math.ceil(1179648 * 0.075),
        'ephemeral-storage': 20480,
        pods: 737,
        'nvidia.com/gpu': 8,
        'vpc.amazonaws.com/efa': 4,
        'vpc.amazonaws.com/pod-eni': 62,
      });
    });

    it('counts EFA-only interfaces as the EFA resource when networkInterfaces is set', () => {
      const p4d = catalogType('p4d.24xlarge');
      const nics = [
        { networkCardIndex: 0, interfaceType: 'interface' as const },
        { networkCardIndex: 1, interfaceType: 'efa-only' as const },
      ];
      expect(computeCapacity(p4d, { networkInterfaces: nics })['vpc.amazonaws.com/efa']).toBe(1);
      expect(computeCapacity(p4d, { networkInterfaces: [] })['vpc.amazonaws.com/efa']).toBeUndefined();
    });

    it('adds vpc.amazonaws.com/PrivateIPv4Address = IPv4 per ENI − 1 on Windows', () => {
      expect(computeCapacity(m5large, { amiFamily: 'Windows2022' })['vpc.amazonaws.com/PrivateIPv4Address']).toBe(9);
      expect(computeCapacity(m5large)['vpc.amazonaws.com/PrivateIPv4Address']).toBeUndefined();
    });
  });

  describe('computeOverhead', () => {
    it('splits the m5.large overhead into kube-reserved, system-reserved and eviction threshold', () => {
      expect(computeOverhead(m5large)).toEqual({
        kubeReserved: { cpu: 70, memory: 574, 'ephemeral-storage': 1024 },
        systemReserved: {},
        evictionThreshold: { memory: 100, 'ephemeral-storage': 2048 },
      });
    });
  });

  describe('computeAllocatable', () => {
    it('gives m5.large 1930m cpu, 6903Mi memory, 17Gi storage and 29 pods', () => {
      expect(computeAllocatable(m5large)).toEqual({
        cpu: 1930,
        memory: 6903,
        'ephemeral-storage': 17408,
        pods: 29,
        'vpc.amazonaws.com/pod-eni': 9,
      });
    });

    it('gives a1.large (Graviton) 3055Mi memory', () => {
      expect(computeAllocatable(catalogType('a1.large')).memory).toBe(3055);
    });

    it('keeps GPUs, EFA and Neuron devices as their counts', () => {
      expect(computeAllocatable(catalogType('p4d.24xlarge'))).toMatchObject({ 'nvidia.com/gpu': 8, 'vpc.amazonaws.com/efa': 4 });
      expect(computeAllocatable(catalogType('inf2.xlarge'))).toMatchObject({
        'aws.amazon.com/neuron': 1,
        'aws.amazon.com/neuroncore': 2,
      });
    });

    it('raises pods but keeps memory on AL2023 when maxPods is 110', () => {
      expect(computeAllocatable(m5large, { kubelet: { maxPods: 110 } })).toMatchObject({ pods: 110, memory: 6903 });
    });

    it('lowers memory with a larger maxPods on Bottlerocket (7577 − 1465 − 100)', () => {
      expect(computeAllocatable(m5large, { amiFamily: 'Bottlerocket', kubelet: { maxPods: 110 } })).toMatchObject({
        pods: 110,
        memory: 6012,
      });
    });

    it('lowers pods when podsPerCore is set', () => {
      expect(computeAllocatable(m5large, { kubelet: { podsPerCore: 10 } }).pods).toBe(20);
    });

    it('subtracts kubeReserved overrides instead of the computed values', () => {
      const allocatable = computeAllocatable(m5large, { kubelet: { kubeReserved: { cpu: '200m', memory: '1Gi', 'ephemeral-storage': '2Gi' } } });
      expect(allocatable).toMatchObject({ cpu: 1800, memory: 7577 - 1024 - 100, 'ephemeral-storage': 20480 - 2048 - 2048 });
    });

    it('subtracts systemReserved on top of kube-reserved', () => {
      const allocatable = computeAllocatable(m5large, {
        kubelet: { systemReserved: { cpu: '100m', memory: '100Mi', 'ephemeral-storage': '1Gi' } },
      });
      expect(allocatable).toMatchObject({ cpu: 1830, memory: 6803, 'ephemeral-storage': 16384 });
    });

    it('subtracts an absolute or percentage evictionHard instead of the defaults', () => {
      expect(computeAllocatable(m5large, { kubelet: { evictionHard: { 'memory.available': '500Mi' } } }).memory).toBe(6503);
      const percent = computeAllocatable(m5large, { kubelet: { evictionHard: { 'memory.available': '10%', 'nodefs.available': '5%' } } });
      expect(percent.memory).toBeCloseTo(7577 - 574 - 757.7, 5);
      expect(percent['ephemeral-storage']).toBe(20480 - 1024 - 1024);
    });

    it('follows vmMemoryOverheadPercent (0 → 7518, 0.1 → 6698)', () => {
      expect(computeAllocatable(m5large, { vmMemoryOverheadPercent: 0 }).memory).toBe(8192 - 574 - 100);
      expect(computeAllocatable(m5large, { vmMemoryOverheadPercent: 0.1 }).memory).toBe(8192 - 820 - 574 - 100);
    });

    it('uses 110 pods, their memory reservation and a 50 GiB volume on Windows', () => {
      expect(computeAllocatable(m5large, { amiFamily: 'Windows2022' })).toMatchObject({
        cpu: 1930,
        memory: 7577 - 1465 - 100,
        'ephemeral-storage': 51200 - 1024 - 5120,
        pods: 110,
      });
    });

    it('sizes storage from the configured volume', () => {
      expect(computeAllocatable(m5large, { blockDeviceMappings: [{ deviceName: '/dev/xvda', ebs: { volumeSize: '100Gi' } }] })['ephemeral-storage']).toBe(102400 - 1024 - 10240);
    });

    it('ignores reservations of resources the node does not have', () => {
      expect(computeAllocatable(m5large, { kubelet: { systemReserved: { 'nvidia.com/gpu': '1' } } })['nvidia.com/gpu']).toBeUndefined();
    });

    it('clamps at 0 when reservations exceed capacity', () => {
      expect(computeAllocatable(m5large, { kubelet: { systemReserved: { memory: '1Ti' } } }).memory).toBe(0);
    });

    it('never exceeds capacity and never goes negative, for any catalogue type and kubelet settings', () => {
      const catalog = loadCatalog();
      const options = fc.record(
        {
          amiFamily: fc.constantFrom('AL2023', 'AL2', 'Bottlerocket', 'Windows2022', 'Custom' as const),
          vmMemoryOverheadPercent: fc.double({ min: 0, max: 0.5, noNaN: true }),
          reservedENIs: fc.integer({ min: 0, max: 4 }),
          kubelet: fc.record(
            {
              maxPods: fc.integer({ min: 0, max: 1000 }),
              podsPerCore: fc.integer({ min: 0, max: 50 }),
              systemReserved: fc.record({ cpu: fc.constantFrom('0', '100m', '1'), memory: fc.constantFrom('0', '100Mi', '2Gi') }),
              evictionHard: fc.record({ 'memory.available': fc.constantFrom('100Mi', '5%', '100%'), 'nodefs.available': fc.constantFrom('10%', '1Gi') }),
            },
            { requiredKeys: [] },
          ),
        },
        { requiredKeys: [] },
      );
      fc.assert(
        fc.property(fc.integer({ min: 0, max: catalog.length - 1 }), options, (index, opts) => {
          const type = catalog[index] as InstanceTypeInfo;
          const capacity = computeCapacity(type, opts);
          const allocatable = computeAllocatable(type, opts);
          return Object.entries(allocatable).every(([name, amount]) => amount >= 0 && amount <= (capacity[name] ?? 0));
        }),
      );
    });
  });
});

describe('AMI family: which instance types it boots and what OS its nodes report', () => {
  it('does not boot a1 (first-generation Graviton) with AL2023, as Karpenter since v1.11 (compatibility.go amiFamilyCheck)', () => {
    const a1 = loadCatalog().filter((t) => t.name.startsWith('a1.'));
    expect(a1.length).toBeGreaterThan(0);
    for (const t of a1) {
      expect(launchableWithAmiFamily(t, 'AL2023')).toBe(false);
      expect(launchableWithAmiFamily(t)).toBe(false);
      expect(launchableWithAmiFamily(t, 'AL2')).toBe(true);
      expect(launchableWithAmiFamily(t, 'Bottlerocket')).toBe(true);
      expect(launchableWithAmiFamily(t, 'Custom')).toBe(true);
    }
    // Other Graviton generations boot AL2023.
    expect(launchableWithAmiFamily(catalogType('m6g.large'), 'AL2023')).toBe(true);
    expect(launchableWithAmiFamily(catalogType('a1.large'), 'AL2023')).toBe(false);
  });

  it('boots amd64 only on Windows (types.go getOS gives arm64 no OS; the Windows AMIs are x86_64), GPU types included', () => {
    for (const family of ['Windows2019', 'Windows2022', 'Windows2025'] as const) {
      expect(launchableWithAmiFamily(catalogType('m6g.large'), family)).toBe(false);
      expect(launchableWithAmiFamily(catalogType('a1.large'), family)).toBe(false);
      expect(launchableWithAmiFamily(m5large, family)).toBe(true);
      expect(launchableWithAmiFamily(catalogType('g4dn.xlarge'), family)).toBe(true);
    }
  });

  it('labels nodes kubernetes.io/os from the family and node.kubernetes.io/windows-build from the Windows build (labels.go)', () => {
    expect(amiFamilyLabels(m5large)['kubernetes.io/os']).toBe('linux');
    expect(amiFamilyLabels(m5large)['node.kubernetes.io/windows-build']).toBeUndefined();
    for (const family of ['AL2', 'AL2023', 'Bottlerocket', 'Custom'] as const) {
      expect(amiFamilyLabels(m5large, family)).toEqual(m5large.labels);
    }
    const builds = { Windows2019: '10.0.17763', Windows2022: '10.0.20348', Windows2025: '10.0.26100' } as const;
    for (const [family, build] of Object.entries(builds) as [keyof typeof builds, string][]) {
      expect(amiFamilyLabels(m5large, family)).toEqual({ ...m5large.labels, 'kubernetes.io/os': 'windows', 'node.kubernetes.io/windows-build': build });
    }
  });

  it('gives Windows nodes 110 pods (no ENI formula) unless maxPods says otherwise, and the private IPv4 address resource', () => {
    const c5large = catalogType('c5.large');
    expect(computeCapacity(c5large, { amiFamily: 'Windows2019' })).toMatchObject({ pods: 110, 'vpc.amazonaws.com/PrivateIPv4Address': 9 });
    expect(computeCapacity(c5large, { amiFamily: 'Windows2019', kubelet: { maxPods: 20 } }).pods).toBe(20);
    expect(computeCapacity(c5large).pods).toBe(29);
    expect(computeCapacity(c5large)['vpc.amazonaws.com/PrivateIPv4Address']).toBeUndefined();
  });
});
