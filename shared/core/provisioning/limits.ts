/**
 * NodePool `spec.limits` arithmetic shared by the solver and its diagnosis. Limits are checked against capacity
 * (not allocatable) plus one `nodes`, as Karpenter's `Limits.ExceededBy` does (core `pkg/apis/v1/nodepool.go`).
 */
import type { InstanceType } from '../instancetypes/offering.js';
import { add, type ResourceList } from '../resources/resource-list.js';

/** Drops instance types whose capacity (plus one node) would exceed the pool's remaining limits. */
export function limitFilter(types: readonly InstanceType[], remaining: ResourceList | undefined): readonly InstanceType[] {
  if (!remaining) return types;
  return types.filter((t) => withinLimits(add(t.capacity, { nodes: 1 }), remaining));
}

/** True when `usage` stays within every key `remaining` limits (keys absent from `remaining` are unlimited). */
export function withinLimits(usage: ResourceList, remaining: ResourceList): boolean {
  return Object.entries(remaining).every(([k, v]) => (usage[k] ?? 0) <= v + 1e-6);
}

