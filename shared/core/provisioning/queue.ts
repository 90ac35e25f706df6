/**
 * The order a solve takes pods in: Karpenter's scheduling queue (kubernetes-sigs/karpenter
 * `pkg/controllers/provisioning/scheduling/queue.go` `byCPUAndMemoryDescending`).
 */
import type { SchedulingPod } from './pod.js';

/** `a.localeCompare(b)` for many comparisons (same order, much faster). */
const collator = new Intl.Collator();

/** Karpenter's pod order: cpu desc, memory desc, then creation time and name for stability. */
export function byCpuAndMemoryDescending(a: SchedulingPod, b: SchedulingPod): number {
  return (
    (b.requests.cpu ?? 0) - (a.requests.cpu ?? 0) ||
    (b.requests.memory ?? 0) - (a.requests.memory ?? 0) ||
    a.createdMs - b.createdMs ||
    collator.compare(a.key, b.key)
  );
}
