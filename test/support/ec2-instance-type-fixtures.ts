/**
 * `DescribeInstanceTypes` entries for real instance types, built at build time from the reference data (`../shared/data`:
 * Karpenter's published labels and allocatable, amazon-eks-ami's ENI limits) rather than typed by hand. Each label is
 * turned back into the EC2 field Karpenter reads it from (aws `pkg/providers/instancetype/types.go`), in the form EC2
 * reports it: `x86_64` for amd64, manufacturer and device names in EC2's capitalisation, GHz, Gbps.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { InstanceTypeInfo as Ec2InstanceTypeInfo } from '@aws-sdk/client-ec2';
import { readSources, referenceDataDir } from '../../scripts/build-catalog.js';

/** True when the reference data folder is present (it is not in a user's clone; tests using it skip then). */
export const HAS_REFERENCE_DATA = existsSync(referenceDataDir());

/** Types whose entries are committed in {@link FIXTURE_FILE} (written by `scripts/build-test-fixtures.ts`). */
export const FIXTURE_TYPES = ['m5.large', 'c6gd.large', 'm7i-flex.large', 'p5.48xlarge', 'g4ad.xlarge', 'inf2.xlarge', 'dl2q.24xlarge', 'm5.metal', 't2.micro'] as const;

/** The committed entries, so adapter tests need no reference folder. */
export const FIXTURE_FILE = new URL('../fixtures/describe-instance-types.json', import.meta.url);

let committed: Record<string, Ec2InstanceTypeInfo> | undefined;
function committedEntries(): Record<string, Ec2InstanceTypeInfo> {
  committed ??= existsSync(FIXTURE_FILE) ? (JSON.parse(readFileSync(FIXTURE_FILE, 'utf8')) as Record<string, Ec2InstanceTypeInfo>) : {};
  return committed;
}

interface ReferenceType {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly allocatable: Readonly<Record<string, string>>;
}
interface EniLimit {
  readonly instanceType: string;
  readonly defaultMaxENIs: number;
  readonly ipv4AddressesPerInterface: number;
}

let reference: { types: Map<string, ReferenceType>; eni: Map<string, EniLimit> } | undefined;

function load(): NonNullable<typeof reference> {
  if (reference) return reference;
  const sources = readSources();
  const types = (JSON.parse(sources.instanceTypesJson) as { instanceTypes: ReferenceType[] }).instanceTypes;
  const eni = sources.eniLimitsJsonl
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as EniLimit);
  reference = { types: new Map(types.map((t) => [t.name, t])), eni: new Map(eni.map((e) => [e.instanceType, e])) };
  return reference;
}

/** Names of every instance type in the reference data. */
export function referenceTypeNames(): string[] {
  return [...load().types.keys()];
}

/** EC2's spelling of a lower-kebab-case label value (Karpenter lower-cases and dashes what EC2 reports). */
const ec2Name = (label: string): string => label.split('-').map((w) => w.toUpperCase()).join(' ');
/** EC2's spelling of CPU manufacturers. */
const CPU_MANUFACTURER: Readonly<Record<string, string>> = { intel: 'Intel', amd: 'AMD', aws: 'AWS', apple: 'Apple' };

/**
 * The `DescribeInstanceTypes` entry of an instance type: the committed fixture for {@link FIXTURE_TYPES}, else built
 * from the reference data.
 * @param usage `SupportedUsageClasses` @default ['on-demand', 'spot']
 * @throws {Error} when neither knows the type
 */
export function describeInstanceType(name: string, usage: readonly ('on-demand' | 'spot')[] = ['on-demand', 'spot']): Ec2InstanceTypeInfo {
  const fixed = committedEntries()[name];
  if (fixed) return { ...fixed, SupportedUsageClasses: [...usage] };
  return referenceDescribeInstanceType(name, usage);
}

/**
 * The `DescribeInstanceTypes` entry of a reference instance type, built from `../shared/data` (a build-time input).
 * @throws {Error} when the reference data does not know the type
 */
export function referenceDescribeInstanceType(name: string, usage: readonly ('on-demand' | 'spot')[] = ['on-demand', 'spot']): Ec2InstanceTypeInfo {
  const { types, eni } = load();
  const type = types.get(name);
  const limits = eni.get(name);
  if (!type || !limits) throw new Error(`no reference data for ${name}`);
  const label = (key: string): string | undefined => type.labels[`karpenter.k8s.aws/${key}`];
  const count = (resource: string): number => Number(type.allocatable[resource] ?? 0);
  const num = (key: string): number | undefined => (label(key) === undefined ? undefined : Number(label(key)));
  const clockMhz = num('instance-cpu-sustained-clock-speed-mhz') ?? 0;
  const bandwidthMbps = num('instance-network-bandwidth');
  const efa = count('vpc.amazonaws.com/efa');
  const neuron = count('aws.amazon.com/neuron');
  const gpuName = label('instance-gpu-name');
  const acceleratorName = label('instance-accelerator-name');
  const nvme = num('instance-local-nvme');
  const ebs = num('instance-ebs-bandwidth');
  return {
    InstanceType: name as Ec2InstanceTypeInfo['InstanceType'],
    CurrentGeneration: true,
    SupportedUsageClasses: [...usage],
    SupportedVirtualizationTypes: ['hvm'],
    BareMetal: name.includes('.metal'),
    ...(label('instance-hypervisor') ? { Hypervisor: label('instance-hypervisor') as Ec2InstanceTypeInfo['Hypervisor'] } : {}),
    ProcessorInfo: {
      SupportedArchitectures: [type.labels['kubernetes.io/arch'] === 'arm64' ? 'arm64' : 'x86_64'],
      Manufacturer: CPU_MANUFACTURER[label('instance-cpu-manufacturer') ?? ''] ?? label('instance-cpu-manufacturer'),
      ...(clockMhz > 0 ? { SustainedClockSpeedInGhz: clockMhz / 1000 } : {}),
    },
    VCpuInfo: { DefaultVCpus: num('instance-cpu') },
    MemoryInfo: { SizeInMiB: num('instance-memory') },
    InstanceStorageSupported: nvme !== undefined,
    ...(nvme !== undefined ? { InstanceStorageInfo: { TotalSizeInGB: nvme, NvmeSupport: 'required' as const } } : {}),
    EbsInfo: ebs !== undefined ? { EbsOptimizedSupport: 'default', EbsOptimizedInfo: { MaximumBandwidthInMbps: ebs } } : { EbsOptimizedSupport: 'unsupported' },
    NetworkInfo: {
      MaximumNetworkInterfaces: limits.defaultMaxENIs,
      MaximumNetworkCards: 1,
      DefaultNetworkCardIndex: 0,
      NetworkCards: [
        {
          NetworkCardIndex: 0,
          MaximumNetworkInterfaces: limits.defaultMaxENIs,
          ...(bandwidthMbps !== undefined ? { BaselineBandwidthInGbps: bandwidthMbps / 1000 } : {}),
        },
      ],
      Ipv4AddressesPerInterface: limits.ipv4AddressesPerInterface,
      EfaSupported: efa > 0,
      ...(efa > 0 ? { EfaInfo: { MaximumEfaInterfaces: efa } } : {}),
      EncryptionInTransitSupported: label('instance-encryption-in-transit-supported') === 'true',
    },
    ...(gpuName !== undefined
      ? {
          GpuInfo: {
            Gpus: [
              {
                Name: ec2Name(gpuName),
                Manufacturer: (label('instance-gpu-manufacturer') ?? '').toUpperCase(),
                Count: num('instance-gpu-count'),
                MemoryInfo: { SizeInMiB: num('instance-gpu-memory') },
              },
            ],
          },
        }
      : {}),
    ...(acceleratorName !== undefined && neuron > 0
      ? {
          NeuronInfo: {
            NeuronDevices: [
              {
                Name: acceleratorName.charAt(0).toUpperCase() + acceleratorName.slice(1),
                Count: neuron,
                CoreInfo: { Count: count('aws.amazon.com/neuroncore') / neuron, Version: 2 },
              },
            ],
          },
        }
      : {}),
    ...(acceleratorName !== undefined && neuron === 0
      ? {
          InferenceAcceleratorInfo: {
            Accelerators: [{ Name: ec2Name(acceleratorName), Manufacturer: ec2Name(label('instance-accelerator-manufacturer') ?? ''), Count: num('instance-accelerator-count') }],
          },
        }
      : {}),
  };
}
