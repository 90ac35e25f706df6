/**
 * NodePool requirement `minValues` (shared by the solver and its diagnosis).
 */
import type { InstanceType } from '../instancetypes/offering.js';
import type { Requirements } from '../scheduling/requirements.js';

/**
 * Karpenter's `minValues` under the default `Strict` policy (docs `concepts/nodepools.md#min-values`): every
 * requirement with `minValues` needs that many distinct values of its key among the NodeClaim's instance types, or
 * the pod cannot join. Returns why not, or undefined when satisfied.
 */
export function minValuesShortfall(requirements: Requirements, options: readonly { readonly type: InstanceType }[]): string | undefined {
  for (const r of requirements.values()) {
    if (r.minValues === undefined) continue;
    const seen = new Set<string>();
    for (const o of options) {
      const tr = o.type.requirements.get(r.key);
      if (!tr.complement) for (const v of tr.values) if (r.has(v)) seen.add(v);
    }
    if (seen.size < r.minValues) {
      return `minValues: the NodePool needs at least ${r.minValues} distinct ${r.key} values among the instance types that fit, only ${seen.size} remain${seen.size ? ` (${[...seen].sort().join(', ')})` : ''}`;
    }
  }
  return undefined;
}
