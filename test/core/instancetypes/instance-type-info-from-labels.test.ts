import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../shared/core/errors.js';
import { nodeClassAllocatableOptions } from '../../../shared/core/instancetypes/allocatable.js';
import { instanceTypeByName } from '../../../shared/core/instancetypes/catalog.js';
import { instanceTypeInfoFromLabels, type InstanceTypeFacts } from '../../../shared/core/instancetypes/instance-type-info-from-labels.js';

const m5large = instanceTypeByName('m5.large')!;
const facts = (overrides: Partial<InstanceTypeFacts> = {}): InstanceTypeFacts => ({
  name: 'm5.large',
  labels: m5large.labels,
  extendedResources: m5large.extendedResources,
  defaultMaxENIs: m5large.defaultMaxENIs,
  ipv4AddressesPerInterface: m5large.ipv4AddressesPerInterface,
  onDemandPrice: m5large.onDemandPrice,
  ...overrides,
});

describe('instanceTypeInfoFromLabels', () => {
  it('rebuilds a catalogue row from its labels and facts, computing Karpenter’s allocatable when not given', () => {
    expect(instanceTypeInfoFromLabels(facts())).toStrictEqual(m5large);
    expect(JSON.stringify(instanceTypeInfoFromLabels(facts()))).toBe(JSON.stringify(m5large));
  });

  it('sorts labels, and keeps only known extended resources with a count above zero, sorted', () => {
    const reversed = Object.fromEntries(Object.entries(m5large.labels).reverse());
    const row = instanceTypeInfoFromLabels(facts({ labels: reversed, extendedResources: { 'vpc.amazonaws.com/pod-eni': 9, 'nvidia.com/gpu': 0, 'example.com/widget': 3, 'amd.com/gpu': 1 } }));
    expect(Object.keys(row.labels)).toEqual(Object.keys(m5large.labels));
    expect(row.extendedResources).toEqual({ 'amd.com/gpu': 1, 'vpc.amazonaws.com/pod-eni': 9 });
    expect(Object.keys(row.extendedResources)).toEqual(['amd.com/gpu', 'vpc.amazonaws.com/pod-eni']);
  });

  it('rejects missing or malformed labels, naming the source', () => {
    const { ['karpenter.k8s.aws/instance-cpu']: _cpu, ...noCpu } = m5large.labels;
    expect(() => instanceTypeInfoFromLabels(facts({ labels: noCpu, source: 'DescribeInstanceTypes' }))).toThrow(/DescribeInstanceTypes: .*m5\.large has no label karpenter\.k8s\.aws\/instance-cpu/);
    expect(() => instanceTypeInfoFromLabels(facts({ labels: { ...m5large.labels, 'karpenter.k8s.aws/instance-memory': '8 GiB' } }))).toThrow(ValidationError);
    expect(() => instanceTypeInfoFromLabels(facts({ labels: { ...m5large.labels, 'kubernetes.io/arch': 'x86_64' } }))).toThrow(/unknown arch x86_64/);
    expect(() => instanceTypeInfoFromLabels(facts({ labels: { ...m5large.labels, 'karpenter.k8s.aws/instance-gpu-count': '1' } }))).toThrow(/instance-gpu-name/);
  });
});

describe('nodeClassAllocatableOptions', () => {
  it('passes the AMI family, kubelet, block device mappings and instance store policy through and sets the VM overhead', () => {
    expect(nodeClassAllocatableOptions({}, 0.075)).toEqual({ vmMemoryOverheadPercent: 0.075 });
    const kubelet = { maxPods: 110, evictionHard: { 'memory.available': '5%' } };
    const blockDeviceMappings = [{ deviceName: '/dev/xvdb', ebs: { volumeSize: '100Gi' } }];
    expect(nodeClassAllocatableOptions({ amiFamily: 'Bottlerocket', kubelet, blockDeviceMappings, instanceStorePolicy: 'RAID0' }, 0.05)).toEqual({
      vmMemoryOverheadPercent: 0.05,
      amiFamily: 'Bottlerocket',
      kubelet,
      blockDeviceMappings,
      instanceStorePolicy: 'RAID0',
    });
  });
});
