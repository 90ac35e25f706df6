/**
 * Instance types as the scheduler sees them: requirements, capacity, allocatable, and offerings
 * (zone × capacity type, with price and availability). Mirrors Karpenter's `cloudprovider.InstanceType`.
 */
import { DOES_NOT_EXIST_UNLESS_SET_LABELS, LABEL_CAPACITY_TYPE, LABEL_REGION, LABEL_ZONE, type CapacityType } from '../api/labels.js';
import type { ResourceList } from '../resources/resource-list.js';
import type { OfferingKey } from './offering-key.js';
import { Requirement } from '../scheduling/requirement.js';
import { Requirements } from '../scheduling/requirements.js';

/** One place an instance type can be bought. `price` is USD per hour. */
export interface Offering {
  readonly zone: string;
  readonly capacityType: CapacityType;
  readonly price: number;
  readonly available: boolean;
}

/** `type/zone/capacityType`, the string form of an {@link OfferingKey}. */
export function offeringKey(k: OfferingKey): string {
  return `${k.instanceType}/${k.zone}/${k.capacityType}`;
}

/** An instance type ready for scheduling. */
export interface InstanceType {
  readonly name: string;
  /**
   * The type's labels as `In [value]`, `DoesNotExist` for every key of {@link DOES_NOT_EXIST_UNLESS_SET_LABELS} the type
   * has no label for, plus `zone In [offering zones]` and `capacity-type In [offering capacity types]`.
   */
  readonly requirements: Requirements;
  /** Well-known labels of the type (what a node of this type carries, before zone and capacity type). */
  readonly labels: Readonly<Record<string, string>>;
  /** Raw capacity: cpu millicores, memory MiB, pods, extended resources. Used for NodePool limits. */
  readonly capacity: ResourceList;
  /** What pods can use after kube-reserved, system-reserved, eviction threshold and VM overhead. */
  readonly allocatable: ResourceList;
  readonly offerings: readonly Offering[];
}

/** One shared `DoesNotExist` requirement per key (requirements are immutable). */
const DOES_NOT_EXIST: ReadonlyMap<string, Requirement> = new Map(DOES_NOT_EXIST_UNLESS_SET_LABELS.map((key) => [key, Requirement.doesNotExist(key)]));

/**
 * Builds an {@link InstanceType}. Its requirements cover every label, `DoesNotExist` for each well-known instance
 * label the type lacks (so `karpenter.k8s.aws/instance-local-nvme Gt 300` or `instance-gpu-count Exists` rules out a
 * type without local NVMe or GPUs, as aws `pkg/providers/instancetype/types.go` `computeRequirements` does), and zone
 * and capacity type from `offerings`.
 * @param args.labels the type's well-known labels, one value each (no zone, region or capacity type)
 * @param args.offerings where the type can be bought (price USD/hour)
 * @param args.region the region the offerings are in: adds `topology.kubernetes.io/region In [region]` (as
 *   `computeRequirements` does), so a NodePool requiring another region matches no type. @default no region requirement
 */
export function buildInstanceType(args: {
  name: string;
  labels: Readonly<Record<string, string>>;
  capacity: ResourceList;
  allocatable: ResourceList;
  offerings: readonly Offering[];
  region?: string;
}): InstanceType {
  const { region, ...rest } = args;
  const list: Requirement[] = Object.entries(args.labels).map(([k, v]) => Requirement.in(k, [v]));
  for (const [key, absent] of DOES_NOT_EXIST) if (args.labels[key] === undefined) list.push(absent);
  list.push(
    Requirement.in(LABEL_ZONE, new Set(args.offerings.map((o) => o.zone))),
    Requirement.in(LABEL_CAPACITY_TYPE, new Set(args.offerings.map((o) => o.capacityType))),
  );
  if (region !== undefined) list.push(Requirement.in(LABEL_REGION, [region]));
  return { ...rest, requirements: Requirements.of(...list) };
}

/** Offerings that are available and whose zone and capacity type `requirements` allow. */
export function compatibleOfferings(type: InstanceType, requirements: Requirements): Offering[] {
  const zone = requirements.get(LABEL_ZONE);
  const capacityType = requirements.get(LABEL_CAPACITY_TYPE);
  return type.offerings.filter((o) => o.available && zone.has(o.zone) && capacityType.has(o.capacityType));
}

/** The cheapest available offering `requirements` allow, or undefined. */
export function cheapestOffering(type: InstanceType, requirements: Requirements): Offering | undefined {
  let best: Offering | undefined;
  for (const o of compatibleOfferings(type, requirements)) if (!best || o.price < best.price) best = o;
  return best;
}

/** Marks the offerings in `unavailable` (keys from {@link offeringKey}) as not available. Returns new objects. */
export function withUnavailable(types: readonly InstanceType[], unavailable: ReadonlySet<string>): InstanceType[] {
  // Memoized per input list and set of keys: passes that see the same unavailability get the same array, so what is
  // derived from it (compatible types per NodePool) can be memoized by identity too. Callers must not mutate it.
  const key = [...unavailable].sort().join('|');
  let byKey = UNAVAILABLE_MEMO.get(types);
  if (!byKey) UNAVAILABLE_MEMO.set(types, (byKey = new Map()));
  const hit = byKey.get(key);
  if (hit) return hit;
  const result = unavailable.size === 0 ? [...types] : types.map((t) => {
    if (!t.offerings.some((o) => unavailable.has(offeringKey({ instanceType: t.name, zone: o.zone, capacityType: o.capacityType })))) return t;
    const offerings = t.offerings.map((o) =>
      unavailable.has(offeringKey({ instanceType: t.name, zone: o.zone, capacityType: o.capacityType })) ? { ...o, available: false } : o,
    );
    return { ...t, offerings };
  });
  if (byKey.size >= 64) byKey.clear();
  byKey.set(key, result);
  return result;
}

/**
 * The types with only their offerings in `zones`, their zone and capacity-type requirements narrowed to match; a
 * type left with no offering is dropped. Karpenter offers a type only in the zones of its EC2NodeClass's subnets
 * (aws `pkg/providers/instancetype/types.go computeRequirements`: offering zones ∩ subnet zones). Memoized per input
 * list and zone set, as {@link withUnavailable} is; callers must not mutate the result.
 * @param types instance types as listed
 * @param zones the zones to keep (e.g. `us-west-2a`)
 */
export function inZones(types: readonly InstanceType[], zones: ReadonlySet<string>): InstanceType[] {
  const key = [...zones].sort().join('|');
  let byKey = ZONES_MEMO.get(types);
  if (!byKey) ZONES_MEMO.set(types, (byKey = new Map()));
  const hit = byKey.get(key);
  if (hit) return hit;
  const result = types.flatMap((t): InstanceType[] => {
    if (t.offerings.every((o) => zones.has(o.zone))) return [t];
    const offerings = t.offerings.filter((o) => zones.has(o.zone));
    if (offerings.length === 0) return [];
    const requirements = t.requirements.add(
      Requirement.in(LABEL_ZONE, new Set(offerings.map((o) => o.zone))),
      Requirement.in(LABEL_CAPACITY_TYPE, new Set(offerings.map((o) => o.capacityType))),
    );
    return [{ ...t, offerings, requirements }];
  });
  // Nothing left out: the list itself, so what callers memoize by its identity still hits.
  const same = result.length === types.length && result.every((t, i) => t === types[i]) ? (types as InstanceType[]) : result;
  if (byKey.size >= 64) byKey.clear();
  byKey.set(key, same);
  return same;
}

/** {@link inZones}' results by input list, then by the sorted zones. */
const ZONES_MEMO = new WeakMap<readonly InstanceType[], Map<string, InstanceType[]>>();

/** {@link withUnavailable}'s results by input list, then by the sorted unavailable keys. */
const UNAVAILABLE_MEMO = new WeakMap<readonly InstanceType[], Map<string, InstanceType[]>>();
