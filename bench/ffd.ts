/**
 * A Karpenter-like first-fit-decreasing baseline for the cost benchmark, written independently of the project's
 * solver (kubernetes-sigs/karpenter `pkg/controllers/provisioning/scheduling/scheduler.go`, summarised in
 * docs/karpenter-semantics.md#placement-order):
 * - pods sorted by cpu descending, then memory descending (then creation time and key, for stability);
 * - each pod joins the first in-flight NodeClaim — in Karpenter's order, fewest pods first, ties in creation order —
 *   whose NodePool it tolerates and is compatible with and that still has some instance type fitting all its pods
 *   plus the NodePool's daemonset overhead;
 * - otherwise it opens a new NodeClaim from the first NodePool (weight descending, then name) where some instance
 *   type fits it alone plus the overhead;
 * - at the end each NodeClaim launches the cheapest instance type still fitting it (price: the cheapest available
 *   offering its NodePool allows).
 * Not modelled: topology constraints, host ports, NodePool limits (the benchmark's inputs need none of them).
 */
import { WELL_KNOWN_LABELS } from '../shared/core/api/labels.js';
import type { InstanceType } from '../shared/core/instancetypes/offering.js';
import type { SchedulingPod } from '../shared/core/provisioning/pod.js';
import type { NodePoolTemplate } from '../shared/core/provisioning/types.js';
import type { ResourceList } from '../shared/core/resources/resource-list.js';
import { firstUntolerated } from '../shared/core/scheduling/taints.js';
import { allowedPrice, type Plan } from './plan.js';

const EPSILON = 1e-6;

/** An instance type a NodePool can launch, as a dense capacity vector with its price. */
interface Option {
  readonly type: InstanceType;
  readonly price: number;
  /** Allocatable minus daemonset overhead, per resource of the run's resource list. */
  readonly room: Float64Array;
}

interface Claim {
  readonly template: NodePoolTemplate;
  readonly pods: string[];
  readonly used: Float64Array;
  options: Option[];
  readonly order: number;
}

/**
 * Runs the baseline.
 * @param pods pending pods (any order)
 * @param templates NodePools with their instance types and daemonset overhead
 * @returns the plan; pods no NodePool can take are `unplaced`
 * @example const plan = firstFitDecreasing(pods, [template]); planCost(plan); // USD per hour
 */
export function firstFitDecreasing(pods: readonly SchedulingPod[], templates: readonly NodePoolTemplate[]): Plan {
  const keys = resourceKeys(pods, templates);
  const vector = (list: ResourceList) => Float64Array.from(keys, (k) => list[k] ?? 0);
  const byWeight = [...templates].sort((a, b) => b.weight - a.weight || a.name.localeCompare(b.name));
  const options = new Map<string, Option[]>();
  for (const t of byWeight) {
    const overhead = vector(t.daemonOverhead);
    const list: Option[] = [];
    for (const type of t.instanceTypes) {
      const price = allowedPrice(type, t);
      if (price === undefined) continue;
      const room = vector(type.allocatable).map((v, i) => v - overhead[i]!);
      if (room.every((v) => v >= -EPSILON)) list.push({ type, price, room });
    }
    options.set(t.name, list);
  }
  const ordered = [...pods].sort(
    (a, b) => (b.requests.cpu ?? 0) - (a.requests.cpu ?? 0) || (b.requests.memory ?? 0) - (a.requests.memory ?? 0) || a.createdMs - b.createdMs || a.key.localeCompare(b.key),
  );
  const claims: Claim[] = [];
  const unplaced: string[] = [];
  const accepts = new Map<string, boolean>();
  const podAccepts = (t: NodePoolTemplate, pod: SchedulingPod): boolean => {
    const cacheKey = `${t.name}|${JSON.stringify([pod.tolerations, pod.requirementAlternatives.map(String)])}`;
    let ok = accepts.get(cacheKey);
    if (ok === undefined) {
      ok = !firstUntolerated(t.taints, pod.tolerations) && pod.requirementAlternatives.some((alt) => t.requirements.compatible(alt, WELL_KNOWN_LABELS) === undefined);
      accepts.set(cacheKey, ok);
    }
    return ok;
  };
  for (const pod of ordered) {
    const need = vector(pod.requests);
    const candidates = [...claims].sort((a, b) => a.pods.length - b.pods.length || a.order - b.order);
    let placed = false;
    for (const claim of candidates) {
      if (!podAccepts(claim.template, pod)) continue;
      const total = claim.used.map((v, i) => v + need[i]!);
      const fitting = claim.options.filter((o) => fitsIn(total, o.room));
      if (fitting.length === 0) continue;
      claim.options = fitting;
      claim.used.set(total);
      claim.pods.push(pod.key);
      placed = true;
      break;
    }
    if (placed) continue;
    const template = byWeight.find((t) => podAccepts(t, pod) && options.get(t.name)!.some((o) => fitsIn(need, o.room)));
    if (!template) {
      unplaced.push(pod.key);
      continue;
    }
    claims.push({ template, pods: [pod.key], used: need, options: options.get(template.name)!.filter((o) => fitsIn(need, o.room)), order: claims.length });
  }
  return {
    nodes: claims.map((c) => {
      const cheapest = c.options.reduce((best, o) => (o.price < best.price || (o.price === best.price && o.type.name < best.type.name) ? o : best));
      return { nodePool: c.template.name, instanceType: cheapest.type.name, price: cheapest.price, pods: c.pods };
    }),
    unplaced,
  };
}

function fitsIn(need: Float64Array, room: Float64Array): boolean {
  for (let i = 0; i < need.length; i++) if (need[i]! > EPSILON && need[i]! > room[i]! + EPSILON) return false;
  return true;
}

/** Every resource name any pod requests or any NodePool's daemonsets request. */
export function resourceKeys(pods: readonly SchedulingPod[], templates: readonly NodePoolTemplate[]): string[] {
  const keys = new Set<string>(['cpu', 'memory', 'pods']);
  for (const p of pods) for (const k in p.requests) keys.add(k);
  for (const t of templates) for (const k in t.daemonOverhead) keys.add(k);
  return [...keys];
}
