/**
 * An existing node or in-flight NodeClaim as a placement target: the first place a pod is tried (Karpenter
 * `pkg/controllers/provisioning/scheduling/existingnode.go`). Check, then commit: `canAdd` never mutates, `add`
 * records the pod's requests, host ports and topology domains.
 */
import { exceeding, fitCount, fits, subtract, type ResourceList } from '../resources/resource-list.js';
import { firstUntolerated, formatTaint } from '../scheduling/taints.js';
import type { SchedulingPod } from './pod.js';
import { domainOfTarget, type Topology } from './topology.js';
import { refusal, type Acceptance, type ExistingCapacity, type Rejection } from './types.js';

/** An existing node or in-flight NodeClaim during a solve. */
export class ExistingTarget {
  readonly name: string;
  private readonly requirementsOfNode: Readonly<Record<string, string>>;
  private available: ResourceList;
  private readonly hostPorts: Set<string>;

  constructor(
    private readonly capacity: ExistingCapacity,
    private readonly topology: Topology,
  ) {
    this.name = capacity.name;
    this.requirementsOfNode = capacity.labels;
    this.available = capacity.available;
    this.hostPorts = new Set(capacity.hostPorts);
  }

  /**
   * Whether `pod` can join without mutating anything: not being deleted, not closed, taints tolerated, labels satisfy one requirement
   * alternative, requests fit the free room, host ports free, topology allows the node's domains.
   */
  canAdd(pod: SchedulingPod): Acceptance<object> | Rejection {
    if (this.capacity.markedForDeletion) return { ok: false, reason: 'it is being deleted (karpenter.sh/disrupted): it takes no new pod' };
    if (this.capacity.closed) return { ok: false, reason: 'it is inside its consolidateAfter window (it takes no pods moved by consolidation)' };
    const taint = firstUntolerated(this.capacity.taints, pod.tolerations, pod.avoidPreferNoSchedule);
    if (taint) return { ok: false, reason: `taint ${formatTaint(taint)} is not tolerated` };
    if (!pod.requirementAlternatives.some((r) => r.isSatisfiedBy(this.requirementsOfNode))) {
      return { ok: false, reason: `node labels do not satisfy ${pod.requirementAlternatives[0]}` };
    }
    if (!fits(pod.requests, this.available)) return { ok: false, reason: `not enough ${exceeding(pod.requests, this.available).join(', ')}` };
    const port = pod.hostPorts.find((p) => this.hostPorts.has(p));
    if (port) return { ok: false, reason: `host port ${port} is in use` };
    for (const key of this.topology.keysOf(pod)) {
      const d = domainOfTarget(this.capacity, key);
      const verdict = this.topology.allowed(pod, key, d === undefined ? [] : [d]);
      if (!verdict.ok) return refusal(verdict);
    }
    return { ok: true };
  }

  /**
   * `canAdd(pod).ok`, without building a rejection: the same checks (all pure, so their order cannot change the
   * answer), the free room first. A solve asks this of every existing target for each pod it places, and in a fleet of
   * 2,000 mostly full nodes most targets refuse for room, where `canAdd` spells out which resources are short.
   */
  accepts(pod: SchedulingPod): boolean {
    if (this.capacity.closed || this.capacity.markedForDeletion || !fits(pod.requests, this.available)) return false;
    if (firstUntolerated(this.capacity.taints, pod.tolerations, pod.avoidPreferNoSchedule)) return false;
    if (!pod.requirementAlternatives.some((r) => r.isSatisfiedBy(this.requirementsOfNode))) return false;
    if (pod.hostPorts.find((p) => this.hostPorts.has(p))) return false;
    for (const key of this.topology.keysOf(pod)) {
      const d = domainOfTarget(this.capacity, key);
      if (!this.topology.allowed(pod, key, d === undefined ? [] : [d]).ok) return false;
    }
    return true;
  }

  /** How many pods with `requests` (canonical units) the free room still holds. */
  fitCount(requests: ResourceList): number {
    return fitCount(requests, this.available);
  }

  /** Commits `pod` (after an accepted `canAdd`): its requests, host ports and topology domains. */
  add(pod: SchedulingPod): void {
    this.available = subtract(this.available, pod.requests);
    for (const p of pod.hostPorts) this.hostPorts.add(p);
    this.topology.record(pod, (key) => domainOfTarget(this.capacity, key));
  }
}
