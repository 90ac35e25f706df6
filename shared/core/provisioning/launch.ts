/**
 * Launch planning: which capacity type and which (instance type × zone) overrides a NodeClaim's CreateFleet
 * request carries. Source: aws/karpenter-provider-aws `pkg/providers/instance/instance.go` (`getCapacityType`:
 * reserved > spot > on-demand; the 60 cheapest instance types, `maxInstanceTypes`); docs/karpenter-semantics.md#createfleet.
 */
import { LABEL_CAPACITY_TYPE, type CapacityType } from '../api/labels.js';
import { compatibleOfferings, type InstanceType } from '../instancetypes/offering.js';
import { Requirement } from '../scheduling/requirement.js';
import type { Requirements } from '../scheduling/requirements.js';

/** Karpenter's `maxInstanceTypes`: the most instance types one CreateFleet request carries. */
export const MAX_FLEET_INSTANCE_TYPES = 60;

/** Capacity types in the order Karpenter prefers them. */
export const CAPACITY_TYPE_PREFERENCE: readonly CapacityType[] = ['reserved', 'spot', 'on-demand'];

/** What to ask the cloud for. Prices are USD per hour. */
export interface LaunchPlan {
  readonly capacityType: CapacityType;
  /** Cheapest first; at most {@link MAX_FLEET_INSTANCE_TYPES} distinct instance types. */
  readonly overrides: readonly { readonly instanceType: string; readonly zone: string; readonly price: number }[];
}

/**
 * Plans a launch for a NodeClaim.
 * @param requirements the NodeClaim's requirements
 * @param options the NodeClaim's instance types (any order), with current availability
 * @returns the plan, or undefined when no option has an available offering the requirements allow
 */
export function planLaunch(requirements: Requirements, options: readonly InstanceType[]): LaunchPlan | undefined {
  for (const capacityType of CAPACITY_TYPE_PREFERENCE) {
    if (!requirements.get(LABEL_CAPACITY_TYPE).has(capacityType)) continue;
    const narrowed = requirements.add(Requirement.in(LABEL_CAPACITY_TYPE, [capacityType]));
    const perType = options
      .map((t) => ({ type: t, offerings: compatibleOfferings(t, narrowed) }))
      .filter((x) => x.offerings.length > 0)
      .map((x) => ({ ...x, cheapest: Math.min(...x.offerings.map((o) => o.price)) }))
      .sort((a, b) => a.cheapest - b.cheapest || a.type.name.localeCompare(b.type.name))
      .slice(0, MAX_FLEET_INSTANCE_TYPES);
    if (perType.length === 0) continue;
    const overrides = perType
      .flatMap((x) => x.offerings.map((o) => ({ instanceType: x.type.name, zone: o.zone, price: o.price })))
      .sort((a, b) => a.price - b.price || a.instanceType.localeCompare(b.instanceType) || a.zone.localeCompare(b.zone));
    return { capacityType, overrides };
  }
  return undefined;
}

