/**
 * Labels a NodeClaim gets for the requirement keys no instance type defines (custom labels such as `team` or
 * `example.com/tier`), so the node it launches satisfies its NodePool's requirements and never looks drifted.
 */
import { LABEL_HOSTNAME, LABEL_INITIALIZED, LABEL_REGISTERED, WELL_KNOWN_LABELS } from '../api/labels.js';
import type { Requirements } from '../scheduling/requirements.js';

/** Keys never resolved: the restricted hostname and the labels lifecycle sets (core `schedulingSimulationKeys`). */
const NOT_RESOLVED: ReadonlySet<string> = new Set([LABEL_HOSTNAME, LABEL_REGISTERED, LABEL_INITIALIZED]);

/**
 * A concrete value for every custom (not well-known) key of a NodeClaim's requirements, as core
 * `pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go` `resolveCustomLabelsFromRequirements` does with
 * `Requirement.Any()`: `In` gives its smallest value, `NotIn`/`Exists`/`Gt`/`Lt`/`Gte`/`Lte` the smallest non-negative
 * integer they allow (see `Requirement.any`), `DoesNotExist` (or bounds that allow nothing) no label. Well-known keys
 * are left to the instance type and offering the launch picks.
 * @param requirements the NodeClaim's requirements (NodePool ∩ template labels ∩ its pods')
 * @returns label key → value; pure and deterministic
 * @example resolveCustomLabels(Requirements.from([{ key: 'team', operator: 'Exists' }])) // { team: '0' }
 */
export function resolveCustomLabels(requirements: Requirements): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of requirements.values()) {
    if (WELL_KNOWN_LABELS.has(r.key) || NOT_RESOLVED.has(r.key)) continue;
    const value = r.any();
    if (value !== undefined) out[r.key] = value;
  }
  return out;
}
