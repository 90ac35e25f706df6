/**
 * Label values as bit sets: every value some instance type's requirement on a label key lists gets a bit, so the
 * union of the values many instance types carry (the domains a NodeClaim's options span) is an OR of integers, not a
 * walk of requirements. Used by `PricedType.valueBits` (`instance-options.ts`) and `optionDomainValues`
 * (`pinned-domain.ts`).
 */
import type { InstanceType } from '../instancetypes/offering.js';

/** Per label key: every value some instance type's requirement on it lists, numbered (bit positions of {@link typeValueBits}). */
export const valueBits = new Map<string, { readonly bit: Map<string, number>; readonly values: string[] }>();

/** Per instance type and label key: the bits ({@link valueBits}) of the values it lists, 0 for a complement. */
const typeBits = new WeakMap<InstanceType, Map<string, number>>();

/** Bits fit a small integer: keys with more distinct values take the generic path. */
const MAX_VALUE_BITS = 30;

/** The values `type`'s requirement on `key` lists as a bit set ({@link valueBits}); undefined when there are too many. */
export function typeValueBits(type: InstanceType, key: string): number | undefined {
  let byKey = typeBits.get(type);
  if (!byKey) typeBits.set(type, (byKey = new Map()));
  let mask = byKey.get(key);
  if (mask !== undefined) return mask;
  const r = type.requirements.get(key);
  let index = valueBits.get(key);
  if (!index) valueBits.set(key, (index = { bit: new Map(), values: [] }));
  mask = 0;
  if (!r.complement) {
    for (const v of r.values) {
      let bit = index.bit.get(v);
      if (bit === undefined) {
        if (index.values.length >= MAX_VALUE_BITS) return undefined;
        index.bit.set(v, (bit = index.values.length));
        index.values.push(v);
      }
      mask |= 1 << bit;
    }
  }
  byKey.set(key, mask);
  return mask;
}
