/**
 * Why a pod cannot be served: per NodePool, the first constraint that rules a fresh node out, and one sentence a
 * user can act on. Used by the solver for `unschedulable[]`, by `FailedScheduling` events and by `skiff explain`.
 */
import { WELL_KNOWN_LABELS } from '../api/labels.js';
import { compatibleOfferings, type InstanceType } from '../instancetypes/offering.js';
import { add, fits, formatAmount, formatResources, type ResourceList } from '../resources/resource-list.js';
import { firstUntolerated, formatTaint } from '../scheduling/taints.js';
import { limitFilter } from './limits.js';
import type { SchedulingPod } from './pod.js';
import type { NodePoolTemplate, Rejection, UnschedulablePod } from './scheduler.js';

/** Explains, per NodePool, why a fresh node cannot take the pod, and sums it up in one sentence. */
export function diagnose(pod: SchedulingPod, templates: readonly NodePoolTemplate[], remaining: ReadonlyMap<string, ResourceList | undefined>): UnschedulablePod {
  const nodePools: Record<string, string> = {};
  for (const t of templates) nodePools[t.name] = whyNot(pod, t, remaining.get(t.name)).reason;
  return { pod: pod.key, reason: summarise(pod, templates, nodePools), nodePools };
}

function whyNot(pod: SchedulingPod, t: NodePoolTemplate, remaining: ResourceList | undefined): Rejection {
  const taint = firstUntolerated(t.taints, pod.tolerations);
  if (taint) return { ok: false, reason: `the pod does not tolerate the NodePool's taint ${formatTaint(taint)}` };
  let first: Rejection | undefined;
  for (const alternative of pod.requirementAlternatives) {
    const incompatibility = t.requirements.compatible(alternative, WELL_KNOWN_LABELS);
    if (incompatibility) {
      const reason =
        incompatibility.kind === 'undefinedLabel'
          ? `the pod requires label ${incompatibility.incoming} but the NodePool neither requires nor sets ${incompatibility.key}`
          : `the pod requires ${incompatibility.incoming} but the NodePool allows ${incompatibility.existing}`;
      first ??= { ok: false, reason, incompatibility };
      continue;
    }
    const requirements = t.requirements.intersect(alternative);
    const requests = add(t.daemonOverhead, pod.requests);
    const byLabels = t.instanceTypes.filter((it) => requirements.intersects(it.requirements) === undefined);
    if (byLabels.length === 0) {
      first ??= { ok: false, reason: `no instance type satisfies the requirements ${requirements}` };
      continue;
    }
    const bySize = byLabels.filter((it) => fits(requests, it.allocatable));
    if (bySize.length === 0) {
      const largest = largestAllocatable(byLabels, requests);
      const overhead = formatResources(t.daemonOverhead);
      first ??= {
        ok: false,
        reason: `no instance type has room for the pod's requests (${formatResources(pod.requests)})${overhead ? ` plus daemonset overhead (${overhead})` : ''}: ${largest}`,
      };
      continue;
    }
    const byOffering = bySize.filter((it) => compatibleOfferings(it, requirements).length > 0);
    if (byOffering.length === 0) {
      first ??= { ok: false, reason: `every fitting instance type is unavailable in the allowed zones and capacity types (insufficient capacity)` };
      continue;
    }
    if (remaining && limitFilter(byOffering, remaining).length === 0) {
      first ??= { ok: false, reason: limitsReason(byOffering, remaining) };
      continue;
    }
    first ??= { ok: false, reason: 'the pod fits a fresh node of this NodePool only alone' };
  }
  return first ?? { ok: false, reason: 'no requirement alternative' };
}

/** Which limited resources stop every fitting instance type, with what is left and what the smallest type needs. */
function limitsReason(types: readonly InstanceType[], remaining: ResourceList): string {
  const blocking = Object.keys(remaining).filter((k) => types.every((t) => (add(t.capacity, { nodes: 1 })[k] ?? 0) > (remaining[k] ?? 0) + 1e-6));
  const keys = blocking.length > 0 ? blocking : Object.keys(remaining);
  const parts = keys.map((k) => {
    const smallest = Math.min(...types.map((t) => add(t.capacity, { nodes: 1 })[k] ?? 0));
    return `${k}: ${formatAmount(k, Math.max(0, remaining[k] ?? 0))} left, the smallest fitting instance type needs ${formatAmount(k, smallest)}`;
  });
  return `the NodePool's limits are reached (${parts.join('; ')}); raise spec.limits.${keys[0]} or free capacity in the NodePool`;
}

/**
 * Says what is missing when no instance type is big enough: a resource no type has at all, or the type with the
 * most of the scarcest resource and its allocatable.
 */
function largestAllocatable(types: readonly InstanceType[], requests: ResourceList): string {
  const scarce = Object.keys(requests).filter((k) => (requests[k] ?? 0) > 0 && types.every((t) => (t.allocatable[k] ?? 0) < (requests[k] ?? 0)));
  const absent = scarce.filter((k) => types.every((t) => (t.allocatable[k] ?? 0) === 0));
  if (absent.length > 0) return `no instance type the NodePool allows has ${absent.join(' or ')}`;
  const key = scarce[0] ?? 'cpu';
  const best = types.reduce((a, b) => {
    const d = (b.allocatable[key] ?? 0) - (a.allocatable[key] ?? 0) || (b.allocatable.cpu ?? 0) - (a.allocatable.cpu ?? 0) || (b.allocatable.memory ?? 0) - (a.allocatable.memory ?? 0);
    return d > 0 ? b : a;
  });
  const shown = Object.fromEntries(Object.keys(requests).map((k) => [k, best.allocatable[k] ?? 0]));
  return `the largest allocatable is ${formatResources(shown)} (${best.name})`;
}

function summarise(pod: SchedulingPod, templates: readonly NodePoolTemplate[], nodePools: Readonly<Record<string, string>>): string {
  if (templates.length === 0) return 'no NodePool exists';
  // A label the pod requires that no NodePool defines is the actionable cause, whatever else also fails.
  for (const alternative of pod.requirementAlternatives.slice(0, 1)) {
    for (const key of alternative.keys()) {
      const r = alternative.get(key);
      if (WELL_KNOWN_LABELS.has(key) || r.allowsAbsence()) continue;
      if (templates.every((t) => !t.requirements.has(key))) {
        return `no NodePool defines the label ${key}: the pod requires ${r}, but no NodePool's requirements or template labels set ${key}; add it to a NodePool's template labels or requirements, or select on a label Skiff sets (e.g. karpenter.k8s.aws/instance-category)`;
      }
    }
  }
  return `no NodePool can serve the pod: ${Object.entries(nodePools)
    .map(([name, why]) => `${name}: ${why}`)
    .join('; ')}`;
}
