/**
 * Preferences treated as requirements, then relaxed one at a time — Karpenter's `preferences.go Relax`
 * (docs/karpenter-semantics.md#preference-relaxation). A pod's view at level `n` has the first `n` relaxation steps applied:
 * 1. drop the heaviest preferred pod affinity term (repeated while any remain);
 * 2. drop the heaviest preferred pod anti-affinity term;
 * 3. drop the heaviest preferred node affinity term (only the heaviest remaining one is ever required, as in
 *    Karpenter's `NewPodRequirements`);
 * 4. drop a `ScheduleAnyway` topology spread constraint;
 * 5. tolerate `PreferNoSchedule` taints (until then they block like `NoSchedule`).
 * Karpenter's first step — dropping a required node affinity term when there are several — is not needed: the
 * solver tries every required term (they are ORed) at every level.
 */
import type { SchedulingPod, TopologyTerm } from './pod.js';

/** How many relaxation steps `pod` has (its most relaxed view is `view(pod, relaxationSteps(pod))`). */
export function relaxationSteps(pod: SchedulingPod): number {
  const p = pod.preferences;
  return p.podAffinity.length + p.podAntiAffinity.length + p.nodeAffinity.length + p.scheduleAnyway.length + 1;
}

const views = new WeakMap<SchedulingPod, SchedulingPod[]>();

/**
 * The pod as the solver sees it after `level` relaxation steps: preferences not yet relaxed are required.
 * Views are memoised, so equal (pod, level) give the same object.
 * @param level 0 … {@link relaxationSteps}; larger values are clamped
 */
export function view(pod: SchedulingPod, level: number): SchedulingPod {
  let list = views.get(pod);
  if (!list) {
    list = [];
    views.set(pod, list);
  }
  const n = Math.min(Math.max(0, level), relaxationSteps(pod));
  let v = list[n];
  if (!v) {
    v = build(pod, n);
    list[n] = v;
  }
  return v;
}

function build(pod: SchedulingPod, level: number): SchedulingPod {
  const p = pod.preferences;
  let left = level;
  const take = <T>(list: readonly T[]): readonly T[] => {
    const dropped = Math.min(left, list.length);
    left -= dropped;
    return list.slice(dropped);
  };
  const podAffinity = take(p.podAffinity);
  const podAntiAffinity = take(p.podAntiAffinity);
  const nodeAffinity = take(p.nodeAffinity);
  const scheduleAnyway = take(p.scheduleAnyway);
  const avoidPreferNoSchedule = left === 0;
  const topology: TopologyTerm[] = [...pod.topology, ...podAffinity, ...podAntiAffinity, ...scheduleAnyway];
  const preferred = nodeAffinity[0];
  const requirementAlternatives = preferred ? pod.requirementAlternatives.map((alt) => alt.intersect(preferred)) : pod.requirementAlternatives;
  return { ...pod, topology, requirementAlternatives, avoidPreferNoSchedule };
}
