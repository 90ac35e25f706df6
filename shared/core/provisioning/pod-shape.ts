/**
 * Keys that say when pods are interchangeable, so a solve can answer a question once for identical pods (a
 * Deployment's replicas): their shape for a fresh NodeClaim, their class for every target, and the string form of a
 * requirement alternative. Each is computed once per (immutable) object.
 */
import type { ResourceList } from '../resources/resource-list.js';
import type { Requirements } from '../scheduling/requirements.js';
import type { SchedulingPod } from './pod.js';

/** {@link alternativeKey}'s answers per requirements object. */
const alternativeKeys = new WeakMap<Requirements, string>();

/** A requirement alternative's string form (`Requirements.toString()`), computed once per object. */
export function alternativeKey(r: Requirements): string {
  let key = alternativeKeys.get(r);
  if (key === undefined) {
    key = r.toString();
    alternativeKeys.set(r, key);
  }
  return key;
}

/** {@link podShape}'s answers per pod object. */
const shapes = new WeakMap<SchedulingPod, string>();

/**
 * What makes two pods interchangeable for a fresh NodeClaim: requests, requirement alternatives, tolerations, host
 * ports, PreferNoSchedule avoidance. Pods with topology terms are never answered from a cache.
 * @returns a JSON string; equal strings mean interchangeable pods
 */
export function podShape(pod: SchedulingPod): string {
  let shape = shapes.get(pod);
  if (shape === undefined) {
    shape = JSON.stringify([pod.requests, pod.requirementAlternatives.map(String), pod.tolerations, pod.hostPorts, pod.avoidPreferNoSchedule, pod.topology.length]);
    shapes.set(pod, shape);
  }
  return shape;
}

/** `podShape(a) === podShape(b)`, comparing by reference first (replicas of one spec share their parsed fields). */
export function sameShape(a: SchedulingPod, b: SchedulingPod): boolean {
  if (a.hostPorts.length > 0 || b.hostPorts.length > 0) return podShape(a) === podShape(b);
  if (a.avoidPreferNoSchedule !== b.avoidPreferNoSchedule || a.topology.length !== b.topology.length) return false;
  if (a.requests !== b.requests && !sameRequests(a.requests, b.requests)) return false;
  const [ra, rb] = [a.requirementAlternatives, b.requirementAlternatives];
  if (ra !== rb && (ra.length !== rb.length || !ra.every((r, i) => r === rb[i] || (r.isEmpty() && rb[i]!.isEmpty()) || alternativeKey(r) === alternativeKey(rb[i]!)))) return false;
  const [ta, tb] = [a.tolerations, b.tolerations];
  return ta === tb || (ta.length === 0 && tb.length === 0) || JSON.stringify(ta) === JSON.stringify(tb);
}

/** Same keys with the same values (hot: once per pod of a bulk pass, so no key arrays are built). */
function sameRequests(a: ResourceList, b: ResourceList): boolean {
  let n = 0;
  for (const k in a) {
    if (a[k] !== b[k]) return false;
    n++;
  }
  for (const _ in b) n--;
  return n === 0;
}

/** {@link classKey}'s answers per pod object. */
const classKeys = new WeakMap<SchedulingPod, string>();

/**
 * What makes two pods interchangeable for every target: their shape (see `podShape`), namespace, labels (which
 * topology counters count them) and topology terms.
 * @returns a JSON string; pods with equal keys share their candidate NodeClaims in the packed solve
 */
export function classKey(pod: SchedulingPod): string {
  let key = classKeys.get(pod);
  if (key === undefined) {
    const terms = pod.topology.map((t) => [t.kind, t.key, t.counter, t.maxSkew, t.minDomains, t.nodeAffinityPolicy, t.nodeTaintsPolicy, t.required]);
    key = JSON.stringify([podShape(pod), pod.namespace, pod.labels, terms]);
    classKeys.set(pod, key);
  }
  return key;
}
