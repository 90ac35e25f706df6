/**
 * Instance types and offerings from EC2, behind the CloudProvider port's `getInstanceTypes`: `DescribeInstanceTypes`
 * mapped to catalogue rows exactly as the shipped catalogue is built, `DescribeInstanceTypeOfferings` for zones, and
 * prices from the latest stored price snapshot with the shipped catalogue as fallback. Mirrors aws/karpenter-provider-aws
 * `pkg/providers/instancetype/{instancetype.go,types.go}`.
 */
import {
  paginateDescribeInstanceTypeOfferings,
  paginateDescribeInstanceTypes,
  type EC2Client,
  type InstanceTypeInfo as Ec2InstanceTypeInfo,
} from '@aws-sdk/client-ec2';
import type { CapacityType } from '../../core/api/labels.js';
import {
  amiFamilyLabels,
  computeAllocatable,
  computeCapacity,
  DEFAULT_VM_MEMORY_OVERHEAD_PERCENT,
  launchableWithAmiFamily,
  nodeClassAllocatableOptions,
} from '../../core/instancetypes/allocatable.js';
import { shippedInstanceTypes, type ShippedInstanceType } from '../../core/instancetypes/catalog-facts.js';
import type { InstanceTypeInfo } from '../../core/instancetypes/instance-type.js';
import { instanceTypeInfoFromLabels } from '../../core/instancetypes/instance-type-info-from-labels.js';
import { buildInstanceType, type InstanceType, type Offering } from '../../core/instancetypes/offering.js';
import type { Clock } from '../../ports/clock.js';
import type { CloudProvider, InstanceTypeQuery } from '../../ports/cloud-provider.js';
import { awsError } from './sdk-errors.js';
import { TtlCache } from './ttl-cache.js';
import type { PriceSnapshot, PriceSnapshotSource } from './price-store.js';
import { canonicalJson } from '../../core/hash.js';

/**
 * How long fetched instance types, zones, prices and the instance types built from them are reused: 5 minutes
 * (Karpenter's `InstanceTypesZonesAndOfferingsTTL`, aws `pkg/cache/cache.go`), in ms.
 */
export const INSTANCE_TYPES_TTL_MS = 5 * 60_000;

/** `DescribeInstanceTypes` filters: hardware-virtualised x86_64 and arm64 types only (aws `instancetype.go UpdateInstanceTypes`). */
export const DESCRIBE_INSTANCE_TYPES_FILTERS = [
  { Name: 'supported-virtualization-type', Values: ['hvm'] },
  { Name: 'processor-info.supported-architecture', Values: ['x86_64', 'arm64'] },
] as const;

/** EC2 architecture names → Kubernetes (`kubernetes.io/arch`). Source: aws `pkg/apis/v1/labels.go AWSToKubeArchitectures`. */
const KUBE_ARCH: Readonly<Record<string, 'amd64' | 'arm64'>> = { x86_64: 'amd64', arm64: 'arm64' };

/** `(^[a-z]+)(-[0-9]+tb)?([0-9]+).*\.`: category and generation of a type name (aws `types.go instanceTypeScheme`). */
const INSTANCE_TYPE_SCHEME = /^([a-z]+)(-[0-9]+tb)?([0-9]+).*\./;

const AWS = 'karpenter.k8s.aws/';

/**
 * Karpenter's well-known labels of an EC2 instance type, one value each, as a node of the type carries them (the
 * set and value formats of Karpenter's published instance-type table, which the shipped catalogue holds): instance
 * type, arch, OS (`linux`), vCPUs, memory MiB, CPU manufacturer and sustained clock (MHz), hypervisor (absent on
 * bare metal), EBS bandwidth (Mbps, only when EBS optimisation is on by default), network bandwidth (Mbps), category,
 * family, generation, size, capability-flex, local NVMe (GB), encryption in transit, and the GPU and accelerator
 * groups (only when the type has exactly one kind; Neuron devices count as accelerators, manufacturer `aws`).
 *
 * Network bandwidth is not in `DescribeInstanceTypes`' vocabulary for Karpenter: it reads a table generated from the
 * EC2 documentation (aws `zz_generated.bandwidth.go`). So `knownBandwidthMbps` (the catalogue's label, i.e. that
 * table) wins; otherwise it is the sum of the network cards' `BaselineBandwidthInGbps` × 1000, which is what the
 * documentation's "baseline bandwidth" column lists.
 *
 * Source: aws `pkg/providers/instancetype/types.go computeRequirements`, `lowerKabobCase`.
 * @param knownBandwidthMbps the catalogue's `instance-network-bandwidth` label for the type, if it has one
 * @returns the labels, or `undefined` when the type lacks a name, vCPUs, memory or an amd64/arm64 architecture
 */
export function karpenterLabels(info: Ec2InstanceTypeInfo, knownBandwidthMbps?: string): Record<string, string> | undefined {
  const name = info.InstanceType as string | undefined;
  const vcpu = info.VCpuInfo?.DefaultVCpus;
  const memory = info.MemoryInfo?.SizeInMiB;
  const arch = (info.ProcessorInfo?.SupportedArchitectures ?? []).map((a) => KUBE_ARCH[a]).find((a) => a !== undefined);
  if (!name || vcpu === undefined || memory === undefined || !arch) return undefined;
  const labels: Record<string, string> = {
    'node.kubernetes.io/instance-type': name,
    'kubernetes.io/arch': arch,
    'kubernetes.io/os': 'linux',
    [`${AWS}instance-cpu`]: String(vcpu),
    [`${AWS}instance-memory`]: String(memory),
    [`${AWS}instance-encryption-in-transit-supported`]: String(info.NetworkInfo?.EncryptionInTransitSupported ?? false),
  };
  // `In [""]` for metal types, which EC2 reports no hypervisor for (aws `computeRequirements`).
  labels[`${AWS}instance-hypervisor`] = info.Hypervisor ?? '';
  const scheme = INSTANCE_TYPE_SCHEME.exec(name);
  if (scheme?.[1] !== undefined && scheme[3] !== undefined) {
    labels[`${AWS}instance-category`] = scheme[1];
    labels[`${AWS}instance-generation`] = scheme[3];
  }
  const parts = name.split('.');
  if (parts.length === 2 && parts[0] !== undefined && parts[1] !== undefined) {
    labels[`${AWS}instance-family`] = parts[0];
    labels[`${AWS}instance-size`] = parts[1];
  }
  labels[`${AWS}instance-capability-flex`] = String((parts[0] ?? '').includes('-flex'));
  const storage = info.InstanceStorageInfo;
  if (storage && storage.NvmeSupport !== 'unsupported' && storage.TotalSizeInGB !== undefined) {
    labels[`${AWS}instance-local-nvme`] = String(storage.TotalSizeInGB);
  }
  const bandwidth = knownBandwidthMbps ?? baselineBandwidthMbps(info);
  if (bandwidth !== undefined) labels[`${AWS}instance-network-bandwidth`] = bandwidth;
  const gpus = info.GpuInfo?.Gpus ?? [];
  if (gpus.length === 1 && gpus[0]) {
    const gpu = gpus[0];
    labels[`${AWS}instance-gpu-name`] = lowerKebabCase(gpu.Name ?? '');
    labels[`${AWS}instance-gpu-manufacturer`] = lowerKebabCase(gpu.Manufacturer ?? '');
    labels[`${AWS}instance-gpu-count`] = String(gpu.Count ?? 0);
    labels[`${AWS}instance-gpu-memory`] = String(gpu.MemoryInfo?.SizeInMiB ?? 0);
  }
  const accelerators = info.InferenceAcceleratorInfo?.Accelerators ?? [];
  if (accelerators.length === 1 && accelerators[0] && info.NeuronInfo === undefined) {
    labels[`${AWS}instance-accelerator-name`] = lowerKebabCase(accelerators[0].Name ?? '');
    labels[`${AWS}instance-accelerator-manufacturer`] = lowerKebabCase(accelerators[0].Manufacturer ?? '');
    labels[`${AWS}instance-accelerator-count`] = String(accelerators[0].Count ?? 0);
  }
  const neuron = info.NeuronInfo?.NeuronDevices ?? [];
  if (neuron.length === 1 && neuron[0]) {
    labels[`${AWS}instance-accelerator-name`] = lowerKebabCase(neuron[0].Name ?? '');
    labels[`${AWS}instance-accelerator-manufacturer`] = 'aws';
    labels[`${AWS}instance-accelerator-count`] = String(neuron[0].Count ?? 0);
  }
  if (info.ProcessorInfo) {
    labels[`${AWS}instance-cpu-manufacturer`] = lowerKebabCase(info.ProcessorInfo.Manufacturer ?? '');
    labels[`${AWS}instance-cpu-sustained-clock-speed-mhz`] = String(Math.round((info.ProcessorInfo.SustainedClockSpeedInGhz ?? 0) * 1000));
  }
  const ebs = info.EbsInfo;
  if (ebs?.EbsOptimizedSupport === 'default' && ebs.EbsOptimizedInfo) {
    labels[`${AWS}instance-ebs-bandwidth`] = String(ebs.EbsOptimizedInfo.MaximumBandwidthInMbps ?? 0);
  }
  return labels;
}

/**
 * Extended resources of an EC2 instance type, as counts: `nvidia.com/gpu` and `amd.com/gpu` (GPUs by manufacturer),
 * `aws.amazon.com/neuron` (Neuron devices), `aws.amazon.com/neuroncore` (devices × cores of the first device kind),
 * `vpc.amazonaws.com/efa` (maximum EFA interfaces). `vpc.amazonaws.com/pod-eni` (branch interfaces for security
 * groups per pod) is not in `DescribeInstanceTypes`: Karpenter takes it from the VPC resource controller's limits
 * table (aws `zz_generated.vpclimits.go`), so the caller passes the catalogue's count as `knownPodEni`.
 *
 * Source: aws `types.go computeCapacity` (`nvidiaGPUs`, `amdGPUs`, `awsNeuronDevices`, `awsNeuronCores`, `efas`,
 * `awsPodENI`).
 */
export function extendedResources(info: Ec2InstanceTypeInfo, knownPodEni?: number): Record<string, number> {
  const gpus = info.GpuInfo?.Gpus ?? [];
  const gpuCount = (manufacturer: string): number => gpus.filter((g) => g.Manufacturer === manufacturer).reduce((n, g) => n + (g.Count ?? 0), 0);
  const devices = info.NeuronInfo?.NeuronDevices ?? [];
  const first = devices[0];
  return {
    'nvidia.com/gpu': gpuCount('NVIDIA'),
    'amd.com/gpu': gpuCount('AMD'),
    'aws.amazon.com/neuron': devices.reduce((n, d) => n + (d.Count ?? 0), 0),
    'aws.amazon.com/neuroncore': first ? (first.Count ?? 0) * (first.CoreInfo?.Count ?? 0) : 0,
    'vpc.amazonaws.com/efa': info.NetworkInfo?.EfaInfo?.MaximumEfaInterfaces ?? 0,
    'vpc.amazonaws.com/pod-eni': knownPodEni ?? 0,
  };
}

/**
 * Maps one `DescribeInstanceTypes` entry to a catalogue row, the same way `npm run catalog:build` builds the shipped
 * catalogue (both go through `instanceTypeInfoFromLabels`): labels from {@link karpenterLabels}, extended resources
 * from {@link extendedResources}, ENI limits from the default network card (`MaximumNetworkInterfaces`) and
 * `Ipv4AddressesPerInterface`, and Karpenter's allocatable computed with its defaults. Facts EC2 does not report
 * (network bandwidth, pod-eni) come from `known`, the shipped catalogue's row for the type, when there is one.
 * @param known the shipped catalogue's row for this type, if any
 * @param onDemandPrice USD per instance-hour, or `null` when unknown
 * @returns the row, or `undefined` when EC2 reports too little to use the type (no name, vCPUs, memory,
 * amd64/arm64 architecture, or network card / IPv4 limits)
 */
export function instanceTypeInfoFromEc2(info: Ec2InstanceTypeInfo, known: ShippedInstanceType | undefined, onDemandPrice: number | null): InstanceTypeInfo | undefined {
  const labels = karpenterLabels(info, known?.labels[`${AWS}instance-network-bandwidth`]);
  const network = info.NetworkInfo;
  const defaultCard = network?.NetworkCards?.find((card) => card.NetworkCardIndex === (network.DefaultNetworkCardIndex ?? 0));
  const maxENIs = defaultCard?.MaximumNetworkInterfaces ?? network?.MaximumNetworkInterfaces;
  const ipv4PerENI = network?.Ipv4AddressesPerInterface;
  if (!labels || maxENIs === undefined || ipv4PerENI === undefined) return undefined;
  return instanceTypeInfoFromLabels({
    name: labels['node.kubernetes.io/instance-type'] ?? '',
    labels,
    extendedResources: extendedResources(info, known?.extendedResources['vpc.amazonaws.com/pod-eni']),
    defaultMaxENIs: maxENIs,
    ipv4AddressesPerInterface: ipv4PerENI,
    onDemandPrice,
    source: 'DescribeInstanceTypes',
  });
}

/** Dependencies of {@link Ec2InstanceTypes}. */
export interface Ec2InstanceTypesProps {
  /** An EC2 client in the cluster's region. */
  readonly ec2: EC2Client;
  /** The latest price snapshot (normally a `DynamoDbPriceStore`). */
  readonly prices: PriceSnapshotSource;
  /** Time source for the cache. */
  readonly clock: Clock;
  /** Karpenter's `VM_MEMORY_OVERHEAD_PERCENT`, a fraction. @default 0.075 */
  readonly vmMemoryOverheadPercent?: number;
  /**
   * The shipped catalogue's facts: fallback on-demand prices, network bandwidth and pod-eni per type (full catalogue
   * rows do too). @default shippedInstanceTypes() (`catalog-facts.ts`)
   */
  readonly catalog?: readonly ShippedInstanceType[];
  /** Cache lifetime in ms. @default {@link INSTANCE_TYPES_TTL_MS} */
  readonly ttlMs?: number;
}

/** Key of the single entry of the fetch cache. */
const FETCH_KEY = 'ec2';

/** What one fetch brought back, and the instance types built from it per query. */
interface Fetched {
  readonly rows: readonly Ec2Row[];
  readonly byQuery: Map<string, InstanceType[]>;
  /** The EC2 client's region (every type gets `topology.kubernetes.io/region In [region]`), when it has one. */
  readonly region?: string;
}

/** A mapped row plus what offerings need. */
interface Ec2Row {
  readonly info: InstanceTypeInfo;
  readonly usage: ReadonlySet<string>;
  /** Sorted zone names. */
  readonly zones: readonly string[];
  readonly spot: ReadonlyMap<string, number> | undefined;
}

/**
 * The EC2 side of the CloudProvider port's `getInstanceTypes`.
 *
 * - **Types:** `DescribeInstanceTypes` (every page, {@link DESCRIBE_INSTANCE_TYPES_FILTERS}) mapped by
 *   {@link instanceTypeInfoFromEc2}; types EC2 describes too thinly are left out.
 * - **Zones:** `DescribeInstanceTypeOfferings` with `LocationType=availability-zone` (every page): every zone of the
 *   region that offers the type. Restricting them to the EC2NodeClass's subnets is the caller's job.
 * - **Offerings:** per zone, on-demand when the type supports it and has a price: the snapshot's, else the shipped
 *   catalogue's (us-east-1 list price, as Karpenter falls back to its compiled-in prices); spot only where the
 *   snapshot has a spot price for that type and zone (no snapshot yet: no spot). Every offering is `available`; the
 *   ICE cache is applied by the caller. A type left with no offering is left out.
 * - **AMI family:** types the query's family cannot boot are left out (`launchableWithAmiFamily`: a1 with AL2023, arm64
 *   with Windows) and labels carry the family's OS (`amiFamilyLabels`), exactly as the simulated EC2 does.
 * - **Allocatable:** `computeCapacity`/`computeAllocatable` with `nodeClassAllocatableOptions(query, …)`, exactly as
 *   the simulated EC2 does.
 * - **Cache:** one fetch (types, zones, price snapshot) serves every query for {@link INSTANCE_TYPES_TTL_MS} after it
 *   completes (a `TtlCache` on the clock port), and the instance types built for a query are kept as long as that
 *   fetch, so a result is never older than the TTL plus one fetch. Concurrent calls share one fetch; a failed fetch
 *   is not cached.
 * @example
 * const types = new Ec2InstanceTypes({ ec2, prices: new DynamoDbPriceStore({ client, tableName, cluster }), clock: systemClock });
 * const forDefault = await types.getInstanceTypes({ nodeClass: 'default', kubelet: { maxPods: 110 } });
 */
export class Ec2InstanceTypes implements Pick<CloudProvider, 'getInstanceTypes'> {
  readonly #ec2: EC2Client;
  readonly #prices: PriceSnapshotSource;
  readonly #vmMemoryOverheadPercent: number;
  readonly #catalog: readonly ShippedInstanceType[] | undefined;
  /** One entry, {@link FETCH_KEY}: the last fetch, fresh for the TTL; concurrent misses share one load. */
  readonly #fetches: TtlCache<typeof FETCH_KEY, Fetched>;
  #known: ReadonlyMap<string, ShippedInstanceType> | undefined;

  constructor(props: Ec2InstanceTypesProps) {
    this.#ec2 = props.ec2;
    this.#prices = props.prices;
    this.#vmMemoryOverheadPercent = props.vmMemoryOverheadPercent ?? DEFAULT_VM_MEMORY_OVERHEAD_PERCENT;
    this.#catalog = props.catalog;
    this.#fetches = new TtlCache(props.ttlMs ?? INSTANCE_TYPES_TTL_MS, props.clock);
  }

  /**
   * Every instance type EC2 offers in the region that the query's AMI family can boot, with on-demand and spot
   * offerings per zone (price USD/hour), the family's labels, and allocatable for the query's AMI family, kubelet
   * settings and volumes. Repeated calls within the TTL return the same array.
   * @throws {ThrottledError} when EC2 or DynamoDB throttles past the SDK's retries
   * @throws {CloudProviderError} when an EC2 call fails
   * @throws {SkiffError} when the price store fails
   */
  async getInstanceTypes(query: InstanceTypeQuery): Promise<InstanceType[]> {
    const fetched = await this.#fetches.getOrLoad(FETCH_KEY, () => this.#fetch());
    const key = canonicalJson(query);
    const cached = fetched.byQuery.get(key);
    if (cached) return cached;
    const options = nodeClassAllocatableOptions(query, this.#vmMemoryOverheadPercent);
    const types: InstanceType[] = [];
    for (const row of fetched.rows) {
      if (!launchableWithAmiFamily(row.info, query.amiFamily)) continue;
      const offerings = offeringsOf(row);
      if (offerings.length === 0) continue;
      types.push(
        buildInstanceType({
          name: row.info.name,
          labels: amiFamilyLabels(row.info, query.amiFamily),
          capacity: computeCapacity(row.info, options),
          allocatable: computeAllocatable(row.info, options),
          offerings,
          ...(fetched.region !== undefined ? { region: fetched.region } : {}),
        }),
      );
    }
    fetched.byQuery.set(key, types);
    return types;
  }

  async #fetch(): Promise<Fetched> {
    const [infos, zones, snapshot] = await Promise.all([this.#describeInstanceTypes(), this.#describeZones(), this.#prices.latest()]);
    this.#known ??= new Map((this.#catalog ?? shippedInstanceTypes()).map((row) => [row.name, row]));
    const rows: Ec2Row[] = [];
    for (const ec2 of infos) {
      const name = ec2.InstanceType as string | undefined;
      if (!name) continue;
      const known = this.#known.get(name);
      const info = instanceTypeInfoFromEc2(ec2, known, onDemandPrice(name, snapshot, known));
      if (!info) continue;
      rows.push({ info, usage: new Set(ec2.SupportedUsageClasses ?? []), zones: [...(zones.get(name) ?? [])].sort(), spot: snapshot?.spot.get(name) });
    }
    rows.sort((a, b) => (a.info.name < b.info.name ? -1 : a.info.name > b.info.name ? 1 : 0));
    const region = await this.#region();
    return { rows, byQuery: new Map(), ...(region !== undefined ? { region } : {}) };
  }

  /** The EC2 client's configured region, or undefined when it has none (a client that cannot resolve one). */
  async #region(): Promise<string | undefined> {
    try {
      const region = await this.#ec2.config.region();
      return typeof region === 'string' && region !== '' ? region : undefined;
    } catch {
      return undefined;
    }
  }

  async #describeInstanceTypes(): Promise<Ec2InstanceTypeInfo[]> {
    const infos: Ec2InstanceTypeInfo[] = [];
    try {
      const filters = DESCRIBE_INSTANCE_TYPES_FILTERS.map((f) => ({ Name: f.Name, Values: [...f.Values] }));
      for await (const page of paginateDescribeInstanceTypes({ client: this.#ec2 }, { Filters: filters })) infos.push(...(page.InstanceTypes ?? []));
    } catch (error) {
      throw awsError(error, 'ec2:DescribeInstanceTypes');
    }
    return infos;
  }

  /** Instance type → zones offering it. */
  async #describeZones(): Promise<Map<string, Set<string>>> {
    const zones = new Map<string, Set<string>>();
    try {
      for await (const page of paginateDescribeInstanceTypeOfferings({ client: this.#ec2 }, { LocationType: 'availability-zone' })) {
        for (const offering of page.InstanceTypeOfferings ?? []) {
          const type = offering.InstanceType as string | undefined;
          if (!type || !offering.Location) continue;
          const set = zones.get(type) ?? new Set<string>();
          set.add(offering.Location);
          zones.set(type, set);
        }
      }
    } catch (error) {
      throw awsError(error, 'ec2:DescribeInstanceTypeOfferings');
    }
    return zones;
  }
}

/** On-demand USD/hour: the snapshot's price, else the shipped catalogue's, else `null`. */
function onDemandPrice(name: string, snapshot: PriceSnapshot | undefined, known: ShippedInstanceType | undefined): number | null {
  return snapshot?.onDemand.get(name) ?? known?.onDemandPrice ?? null;
}

/** Per zone (sorted): on-demand when supported and priced, then spot when supported and priced in that zone. */
function offeringsOf(row: Ec2Row): Offering[] {
  const offerings: Offering[] = [];
  const offer = (zone: string, capacityType: CapacityType, price: number): void => {
    offerings.push({ zone, capacityType, price, available: true });
  };
  for (const zone of row.zones) {
    if (row.usage.has('on-demand') && row.info.onDemandPrice !== null) offer(zone, 'on-demand', row.info.onDemandPrice);
    const spot = row.spot?.get(zone);
    if (row.usage.has('spot') && spot !== undefined) offer(zone, 'spot', spot);
  }
  return offerings;
}

/** Sum of the network cards' baseline bandwidth, in whole Mbps, or `undefined` when EC2 reports none. */
function baselineBandwidthMbps(info: Ec2InstanceTypeInfo): string | undefined {
  const cards = (info.NetworkInfo?.NetworkCards ?? []).filter((card) => card.BaselineBandwidthInGbps !== undefined);
  if (cards.length === 0) return undefined;
  return String(Math.round(cards.reduce((sum, card) => sum + (card.BaselineBandwidthInGbps ?? 0), 0) * 1000));
}

/** Karpenter's `lowerKabobCase`: spaces to dashes, lower case. */
function lowerKebabCase(s: string): string {
  return s.replaceAll(' ', '-').toLowerCase();
}


