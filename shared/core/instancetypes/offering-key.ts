/**
 * The identity of an offering (instance type × zone × capacity type), on its own so that `core/errors.ts` can name
 * the offerings of an `InsufficientCapacityError` without importing the instance types (which import resources,
 * which import the errors).
 */
import type { CapacityType } from '../api/labels.js';

/** The identity of an offering, used by the unavailable-offerings (ICE) cache and by capacity errors. */
export interface OfferingKey {
  readonly instanceType: string;
  readonly zone: string;
  readonly capacityType: CapacityType;
}
