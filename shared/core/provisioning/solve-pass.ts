/**
 * What every solve pass (the packed solve in `scheduler.ts`, the greedy passes in `greedy-solvers.ts`) shares:
 * Karpenter's retry loop with preference relaxation, the diagnosis of the pods left over, the final plans of the
 * planned NodeClaims, and the price of a plan.
 */
import type { ResourceList } from '../resources/resource-list.js';
import { diagnose } from './diagnosis.js';
import type { FinalLists } from './instance-options.js';
import type { SchedulingPod } from './pod.js';
import { podShape } from './pod-shape.js';
import { PlannedNodeClaim } from './planned-nodeclaim.js';
import { view } from './preferences.js';
import type { Topology } from './topology.js';
import type { NodeClaimPlan, NodePoolTemplate, SchedulingResults, UnschedulablePod } from './types.js';

/**
 * Karpenter's retry loop (`scheduler.go Solve`): each pod is offered to `place` at its relaxation level; one that does
 * not fit has its preferences relaxed one step and is tried again after the others; fully relaxed pods are retried
 * while other pods are still being placed, until a round places and relaxes nothing.
 * @returns the pods left unplaced, with the level they reached
 */
export function placeWithRelaxation(
  pods: readonly SchedulingPod[],
  place: (pod: SchedulingPod) => boolean,
  maxLevel: (pod: SchedulingPod) => number,
): { pod: SchedulingPod; level: number }[] {
  let queue = pods.map((pod) => ({ pod, level: 0 }));
  while (queue.length > 0) {
    const next: { pod: SchedulingPod; level: number }[] = [];
    let progress = false;
    for (const item of queue) {
      if (place(view(item.pod, item.level))) {
        progress = true;
      } else if (item.level < maxLevel(item.pod)) {
        next.push({ pod: item.pod, level: item.level + 1 });
        progress = true;
      } else {
        next.push(item);
      }
    }
    queue = next;
    if (!progress) break;
  }
  return queue;
}

/**
 * Why each unplaced pod (at the relaxation level it reached) cannot be served, per NodePool. Identical pods get
 * identical reasons: diagnosed once per pod shape and limits state (pods with topology terms each on their own).
 */
export function diagnoseUnplaced(
  unplaced: readonly { readonly pod: SchedulingPod; readonly level: number }[],
  byWeight: readonly NodePoolTemplate[],
  remaining: ReadonlyMap<string, ResourceList | undefined>,
  topology: Topology,
): UnschedulablePod[] {
  const out: UnschedulablePod[] = [];
  const diagnoses = new Map<string, UnschedulablePod>();
  for (const { pod, level } of unplaced) {
    const relaxed = view(pod, level);
    const key = `${podShape(relaxed)}|${JSON.stringify([...remaining])}`;
    let why = topology.keysOf(relaxed).length > 0 ? undefined : diagnoses.get(key);
    if (!why) {
      why = diagnose(relaxed, byWeight, remaining, { topology: (p, t) => PlannedNodeClaim.rejection(t, p, remaining.get(t.name), topology)?.reason });
      diagnoses.set(key, why);
    }
    out.push({ ...why, pod: pod.key });
  }
  return out;
}

/** The plans of a pass's NodeClaims, sharing identical instance-type lists. */
export function finalizeAll(planned: readonly PlannedNodeClaim[]): NodeClaimPlan[] {
  const lists: FinalLists = new Map();
  return planned.map((c) => c.finalize(lists));
}

/** Sum of the cheapest option prices of `claims`, USD/hour. */
export function sumPrice(claims: readonly NodeClaimPlan[]): number {
  return claims.reduce((sum, c) => sum + (c.instanceTypes[0]?.price ?? 0), 0);
}

/** Sum of the cheapest option prices of the new NodeClaims, USD/hour. */
export function planPrice(results: SchedulingResults): number {
  return sumPrice(results.newNodeClaims);
}
