/**
 * Simulated EC2 behind the CloudProvider port: the catalogue's instance types offered in every zone of the
 * region as on-demand and spot, CreateFleet-like launches (idempotent on the NodeClaim name, the `ClientToken`),
 * injected insufficient-capacity windows, and boot delays after which the instance's kubelet joins the
 * simulated cluster.
 *
 * Prices: on-demand is the us-east-1 list price from the catalogue, used for every region (us-east-2 and
 * us-west-2 list the same price for current families), unless given (`spec.prices`, `--prices`). Spot prices are
 * SIMULATED: derived deterministically per (instance type, zone) as 25–55 % of on-demand, unless given or pinned
 * (`spec.spotPrices`). Offerings the scenario marks unavailable (`spec.offerings.unavailable`) are not listed and
 * CreateFleet refuses them with `Unsupported`.
 */
import { InsufficientCapacityError } from '../core/errors.js';
import { LABEL_CAPACITY_TYPE, LABEL_ZONE, type CapacityType } from '../core/api/labels.js';
import type { Taint } from '../core/api/kubernetes.js';
import { amiFamilyLabels, computeAllocatable, computeCapacity, launchableWithAmiFamily, nodeClassAllocatableOptions } from '../core/instancetypes/allocatable.js';
import type { InstanceTypeInfo } from '../core/instancetypes/instance-type.js';
import { buildInstanceType, offeringKey, type InstanceType, type Offering } from '../core/instancetypes/offering.js';
import type { OfferingKey } from '../core/instancetypes/offering-key.js';
import type { CloudInstance, CloudProvider, InstanceTypeQuery, LaunchedInstance, LaunchRequest } from '../ports/cloud-provider.js';
import type { VirtualClock } from './virtual-clock.js';
import { fnv1a } from '../core/hash.js';

/** Availability zones the simulation offers per region (others get a, b, c). */
export const REGION_ZONES: Readonly<Record<string, readonly string[]>> = {
  'us-west-2': ['us-west-2a', 'us-west-2b', 'us-west-2c', 'us-west-2d'],
  'us-east-1': ['us-east-1a', 'us-east-1b', 'us-east-1c', 'us-east-1d', 'us-east-1e', 'us-east-1f'],
  'us-east-2': ['us-east-2a', 'us-east-2b', 'us-east-2c'],
};

/** Zones of a region in the simulation. */
export function zonesOf(region: string): readonly string[] {
  return REGION_ZONES[region] ?? [`${region}a`, `${region}b`, `${region}c`];
}

/**
 * The simulated spot price of a type in a zone, USD per hour: 25–55 % of on-demand, from a hash of the pair.
 * Deterministic: the same pair always gets the same price.
 */
export function simulatedSpotPrice(instanceType: string, zone: string, onDemand: number): number {
  const u = fnv1a(`${instanceType}|${zone}`) / 2 ** 32;
  return Math.round(onDemand * (0.25 + 0.3 * u) * 10_000) / 10_000;
}


type Override = LaunchRequest['overrides'][number];

/** On-demand `lowest-price`: the cheapest override (ties by type, then zone). */
export function lowestPrice(overrides: readonly Override[]): Override | undefined {
  return [...overrides].sort((a, b) => a.price - b.price || a.instanceType.localeCompare(b.instanceType) || a.zone.localeCompare(b.zone))[0];
}

/** How long before a spot instance is reclaimed EC2 sends the interruption warning: two minutes (EC2 User Guide, "Spot Instance interruption notices"). */
export const SPOT_INTERRUPTION_NOTICE_MS = 2 * 60 * 1000;

/** Spot pools within this factor of the cheapest are "lowest priced" for price-capacity-optimized. */
export const PCO_PRICE_BAND = 1.15;

/**
 * Spot `price-capacity-optimized`, simulated: among the pools priced within {@link PCO_PRICE_BAND} of the
 * cheapest, the one with the deepest (simulated, per type and zone) spare capacity. AWS documents the strategy as
 * choosing the lowest-priced pools with the highest capacity availability.
 */
export function priceCapacityOptimized(overrides: readonly Override[]): Override | undefined {
  const cheapest = lowestPrice(overrides);
  if (!cheapest) return undefined;
  const band = overrides.filter((o) => o.price <= cheapest.price * PCO_PRICE_BAND);
  return band.sort((a, b) => spareCapacity(b) - spareCapacity(a) || a.price - b.price || a.instanceType.localeCompare(b.instanceType) || a.zone.localeCompare(b.zone))[0];
}

/** Simulated spare capacity of a spot pool, 0–1, deterministic per (type, zone). */
function spareCapacity(o: Override): number {
  return fnv1a(`capacity|${o.instanceType}|${o.zone}`) / 2 ** 32;
}

/** One CreateFleet call as the Result reports it. */
export interface LaunchAttempt {
  /** Epoch ms. */
  readonly at: number;
  readonly nodeClaim: string;
  readonly capacityTypes: readonly CapacityType[];
  /** Distinct instance types in the request. */
  readonly instanceTypes: number;
  /** Those instance types, sorted. */
  readonly instanceTypeNames: readonly string[];
  readonly zones: readonly string[];
  /** `ok` or the EC2 error code. */
  readonly result: string;
}

/** An instance in the simulation, with what its kubelet registers with. */
export interface SimInstance extends CloudInstance {
  readonly nodeClaim: string;
  readonly price: number;
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  readonly startupTaints: readonly Taint[];
  readonly allocatable: Readonly<Record<string, number>>;
  terminatedAt?: number;
  state: CloudInstance['state'];
}

/** Options of {@link SimulatedEc2}. */
export interface SimulatedEc2Options {
  readonly region: string;
  readonly catalog: readonly InstanceTypeInfo[];
  readonly vmMemoryOverheadPercent: number;
  /** Pinned spot prices, USD per hour. */
  readonly spotPrices?: readonly { readonly instanceType: string; readonly zone: string; readonly price: number }[];
  /**
   * Prices given per instance type and zone (absent zone: every zone; a zone's entry wins, later entries win), USD per
   * hour: on-demand replaces the catalogue's list price, spot the simulated one (a pinned spot price still wins).
   * @default none
   */
  readonly prices?: readonly { readonly instanceType: string; readonly zone?: string; readonly onDemand?: number; readonly spot?: number }[];
  /** Offerings EC2 does not have (absent zone or capacity type: any): left out of the types listed and refused by CreateFleet. @default none */
  readonly unavailableOfferings?: readonly { readonly instanceType: string; readonly zone?: string; readonly capacityType?: CapacityType }[];
  /**
   * The zones an EC2NodeClass has subnets in (`ec2NodeClassSubnetZones`: its `status.subnets`, from a snapshot), by
   * class name; undefined: every zone of the region ({@link zonesOf}). Types are offered only there, as Karpenter
   * offers them only in the zones of the class's subnets. @default every zone for every class
   */
  readonly nodeClassZones?: (nodeClass: string) => readonly string[] | undefined;
  /** Cluster name for tags. */
  readonly clusterName: string;
  /** Instance launch → kubelet registers its Node, ms. @default 45000 */
  readonly registrationDelayMs?: number;
  /** Called when an instance's kubelet registers. */
  readonly onRegister: (instance: SimInstance) => void;
  /**
   * The instance-type query an EC2NodeClass implies (its AMI family changes labels and allocatable; its kubelet
   * settings, block device mappings and instance store policy change allocatable), so a launched or adopted
   * instance gets the labels and allocatable the solver planned with. The composition root passes the
   * provision controller's `instanceTypeQuery` of the named EC2NodeClass.
   * @default `{ nodeClass }` (the catalogue defaults: AL2023, no kubelet overrides, 20 GiB root volume)
   */
  readonly instanceTypeQuery?: (nodeClass: string) => InstanceTypeQuery;
}

/** The simulated EC2 API. */
export class SimulatedEc2 implements CloudProvider {
  /** Every launch attempt, in order. */
  readonly launchAttempts: LaunchAttempt[] = [];
  /** Every instance ever launched, in order. */
  readonly instances: SimInstance[] = [];
  private readonly byToken = new Map<string, SimInstance>();
  private readonly capacityErrors: { key: string; from: number; until: number; code: string }[] = [];
  private readonly typeCache = new Map<string, InstanceType[]>();
  private readonly pinned: Map<string, number>;
  private nextInstance = 1;

  constructor(
    private readonly clock: VirtualClock,
    private readonly options: SimulatedEc2Options,
  ) {
    this.pinned = new Map((options.spotPrices ?? []).map((p) => [`${p.instanceType}|${p.zone}`, p.price]));
    for (const p of options.prices ?? []) {
      const key = `${p.instanceType}|${p.zone ?? '*'}`;
      const had = this.given.get(key) ?? {};
      this.given.set(key, { ...had, ...(p.onDemand !== undefined ? { onDemand: p.onDemand } : {}), ...(p.spot !== undefined ? { spot: p.spot } : {}) });
    }
  }

  /** Given prices by `type|zone` and `type|*`, USD per hour. */
  private readonly given = new Map<string, { onDemand?: number; spot?: number }>();

  /**
   * The on-demand price of a type in a zone, USD per hour: a given price (the zone's, else the type's), else the
   * catalogue's us-east-1 list price; null when none is known (the type is not offered).
   */
  onDemandPrice(info: InstanceTypeInfo, zone: string): number | null {
    return this.given.get(`${info.name}|${zone}`)?.onDemand ?? this.given.get(`${info.name}|*`)?.onDemand ?? info.onDemandPrice;
  }

  /** The spot price of a type in a zone, USD per hour: pinned, else given, else simulated from the on-demand price. */
  spotPrice(name: string, zone: string, onDemand: number): number {
    return this.pinned.get(`${name}|${zone}`) ?? this.given.get(`${name}|${zone}`)?.spot ?? this.given.get(`${name}|*`)?.spot ?? simulatedSpotPrice(name, zone, onDemand);
  }

  /** Whether EC2 offers the type in the zone for the capacity type (`unavailableOfferings`). */
  offered(instanceType: string, zone: string, capacityType: CapacityType): boolean {
    return !(this.options.unavailableOfferings ?? []).some((u) => u.instanceType === instanceType && (u.zone === undefined || u.zone === zone) && (u.capacityType === undefined || u.capacityType === capacityType));
  }

  /** Makes an offering fail with `code` from `fromMs` until `untilMs` (epoch ms). */
  injectCapacityError(offering: OfferingKey, fromMs: number, untilMs: number, code = 'InsufficientInstanceCapacity'): void {
    this.capacityErrors.push({ key: offeringKey(offering), from: fromMs, until: untilMs, code });
  }

  async getInstanceTypes(query: InstanceTypeQuery): Promise<InstanceType[]> {
    // The class's subnet zones are part of the key: an EC2NodeClass applied again with other subnets offers elsewhere.
    const zones = this.options.nodeClassZones?.(query.nodeClass) ?? zonesOf(this.options.region);
    const cacheKey = JSON.stringify([query, zones]);
    const cached = this.typeCache.get(cacheKey);
    if (cached) return cached;
    const allocatableOptions = nodeClassAllocatableOptions(query, this.options.vmMemoryOverheadPercent);
    const types: InstanceType[] = [];
    for (const info of this.options.catalog) {
      if (!launchableWithAmiFamily(info, query.amiFamily)) continue;
      const offerings: Offering[] = zones.flatMap((zone): Offering[] => {
        const od = this.onDemandPrice(info, zone);
        if (od === null) return [];
        return [
          { zone, capacityType: 'on-demand' as const, price: od, available: true },
          { zone, capacityType: 'spot' as const, price: this.spotPrice(info.name, zone, od), available: true },
        ].filter((o) => this.offered(info.name, zone, o.capacityType));
      });
      if (offerings.length === 0) continue;
      types.push(
        buildInstanceType({
          name: info.name,
          labels: amiFamilyLabels(info, query.amiFamily),
          capacity: computeCapacity(info, allocatableOptions),
          allocatable: computeAllocatable(info, allocatableOptions),
          offerings,
          region: this.options.region,
        }),
      );
    }
    this.typeCache.set(cacheKey, types);
    return types;
  }

  async create(request: LaunchRequest): Promise<LaunchedInstance> {
    const now = this.clock.now();
    const existing = this.byToken.get(request.nodeClaim);
    if (existing) return this.describe(existing, []);
    const zones = [...new Set(request.overrides.map((o) => o.zone))].sort();
    const typeNames = [...new Set(request.overrides.map((o) => o.instanceType))].sort();
    const attempt = { at: now, nodeClaim: request.nodeClaim, capacityTypes: [request.capacityType], instanceTypes: typeNames.length, instanceTypeNames: typeNames, zones };
    const failedOfferings: OfferingKey[] = [];
    let failureCode = 'InsufficientInstanceCapacity';
    const usable = request.overrides.filter((o) => {
      const key = { instanceType: o.instanceType, zone: o.zone, capacityType: request.capacityType };
      if (!this.offered(o.instanceType, o.zone, request.capacityType)) {
        failedOfferings.push(key);
        failureCode = 'Unsupported';
        return false;
      }
      const error = this.activeCapacityError(key, now);
      if (error) {
        failedOfferings.push(key);
        failureCode = error;
      }
      return !error;
    });
    const choice = request.capacityType === 'spot' ? priceCapacityOptimized(usable) : lowestPrice(usable);
    if (!choice) {
      this.launchAttempts.push({ ...attempt, result: failureCode });
      throw new InsufficientCapacityError(`CreateFleet: ${failureCode} for every override of ${request.nodeClaim}`, failedOfferings, failureCode);
    }
    this.launchAttempts.push({ ...attempt, result: 'ok' });
    const info = this.options.catalog.find((t) => t.name === choice.instanceType);
    const query = this.queryFor(request.nodeClass);
    const type = (await this.getInstanceTypes(query)).find((t) => t.name === choice.instanceType);
    const instanceId = `i-${(this.nextInstance++).toString(16).padStart(17, '0')}`;
    const instance: SimInstance = {
      instanceId,
      instanceType: choice.instanceType,
      zone: choice.zone,
      capacityType: request.capacityType,
      state: 'running',
      tags: request.tags,
      launchedAt: now,
      nodeClaim: request.nodeClaim,
      price: choice.price,
      // The kubelet reports the OS of the AMI the EC2NodeClass boots (kubernetes.io/os, windows-build).
      labels: { ...(info ? amiFamilyLabels(info, query.amiFamily) : {}), ...request.labels, [LABEL_ZONE]: choice.zone, [LABEL_CAPACITY_TYPE]: request.capacityType },
      taints: request.taints,
      startupTaints: request.startupTaints,
      allocatable: type?.allocatable ?? {},
    };
    this.instances.push(instance);
    this.byToken.set(request.nodeClaim, instance);
    this.clock.after(this.options.registrationDelayMs ?? 45_000, `kubelet joins ${instanceId}`, () => {
      if (instance.state === 'running') this.options.onRegister(instance);
    });
    return this.describe(instance, failedOfferings);
  }

  /**
   * Adds an instance that already exists when the simulation starts (a scenario's `spec.nodes`).
   * @param launchedAt epoch ms
   * @throws {RangeError} when the instance type is not in the catalogue
   */
  async adopt(args: {
    instanceType: string;
    zone: string;
    capacityType: CapacityType;
    nodeClaim: string;
    nodeClass: string;
    labels: Readonly<Record<string, string>>;
    taints: readonly Taint[];
    tags: Readonly<Record<string, string>>;
    launchedAt: number;
    /** What the node can hold (a snapshot Node's `status.allocatable`), canonical units; absent: computed for the type. */
    allocatable?: Readonly<Record<string, number>>;
  }): Promise<SimInstance> {
    const info = this.options.catalog.find((t) => t.name === args.instanceType);
    if (!info) throw new RangeError(`unknown instance type ${args.instanceType}`);
    const query = this.queryFor(args.nodeClass);
    const type = (await this.getInstanceTypes(query)).find((t) => t.name === args.instanceType);
    const offering = type?.offerings.find((o) => o.zone === args.zone && o.capacityType === args.capacityType);
    const instance: SimInstance = {
      instanceId: `i-${(this.nextInstance++).toString(16).padStart(17, '0')}`,
      instanceType: args.instanceType,
      zone: args.zone,
      capacityType: args.capacityType,
      state: 'running',
      tags: args.tags,
      launchedAt: args.launchedAt,
      nodeClaim: args.nodeClaim,
      // An offering the scenario marks unavailable still has its price (the node exists).
      price: offering?.price ?? (args.capacityType === 'spot' ? this.spotPrice(info.name, args.zone, this.onDemandPrice(info, args.zone) ?? 0) : (this.onDemandPrice(info, args.zone) ?? 0)),
      labels: { ...amiFamilyLabels(info, query.amiFamily), ...args.labels, [LABEL_ZONE]: args.zone, [LABEL_CAPACITY_TYPE]: args.capacityType },
      taints: args.taints,
      startupTaints: [],
      allocatable: args.allocatable ?? type?.allocatable ?? {},
    };
    this.instances.push(instance);
    if (args.nodeClaim) this.byToken.set(args.nodeClaim, instance);
    return instance;
  }

  async list(): Promise<CloudInstance[]> {
    return this.instances.filter((i) => i.state !== 'terminated');
  }

  async delete(instanceId: string): Promise<void> {
    this.setInstanceState(instanceId, 'terminated');
  }

  /**
   * Changes an instance's state out of band (a user, an ASG, a Spot reclaim): `terminated` ends its billing. A
   * terminated instance stays terminated; an unknown id is ignored.
   * @returns the instance, or undefined when there is none (or it was already terminated)
   */
  setInstanceState(instanceId: string, state: CloudInstance['state']): SimInstance | undefined {
    const instance = this.instances.find((i) => i.instanceId === instanceId);
    if (!instance || instance.state === 'terminated') return undefined;
    instance.state = state;
    if (state === 'terminated') instance.terminatedAt = this.clock.now();
    return instance;
  }

  /**
   * A spot instance is reclaimed: EC2 sends the two-minute interruption warning now (the caller emits it) and
   * terminates the instance `noticeMs` later, unless it was terminated before. An on-demand, unknown or already
   * terminated instance is not reclaimed.
   * @param noticeMs delay before the termination, ms @default {@link SPOT_INTERRUPTION_NOTICE_MS}
   * @param onTerminated called when the instance is actually terminated by the reclaim
   * @returns the instance, or undefined when there is nothing to reclaim
   */
  reclaimSpot(instanceId: string, onTerminated: (instance: SimInstance) => void, noticeMs = SPOT_INTERRUPTION_NOTICE_MS): SimInstance | undefined {
    const instance = this.instances.find((i) => i.instanceId === instanceId);
    if (!instance || instance.capacityType !== 'spot' || instance.state === 'terminated') return undefined;
    this.clock.after(noticeMs, `spot reclaim of ${instanceId}`, () => {
      if (this.setInstanceState(instanceId, 'terminated')) onTerminated(instance);
    });
    return instance;
  }

  /** The query whose allocatable a node of `nodeClass` gets (see {@link SimulatedEc2Options.instanceTypeQuery}). */
  private queryFor(nodeClass: string): InstanceTypeQuery {
    return this.options.instanceTypeQuery?.(nodeClass) ?? { nodeClass };
  }

  private activeCapacityError(key: OfferingKey, now: number): string | undefined {
    const k = offeringKey(key);
    return this.capacityErrors.find((e) => e.key === k && e.from <= now && now < e.until)?.code;
  }

  private describe(i: SimInstance, unavailable: readonly OfferingKey[]): LaunchedInstance {
    return {
      instanceId: i.instanceId,
      providerId: `aws:///${i.zone}/${i.instanceId}`,
      instanceType: i.instanceType,
      zone: i.zone,
      capacityType: i.capacityType,
      price: i.price,
      launchedAt: i.launchedAt,
      unavailableOfferings: unavailable,
    };
  }
}
