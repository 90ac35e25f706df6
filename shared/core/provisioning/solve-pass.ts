/**
 * What every solve pass (the packed solve in `scheduler.ts`, the greedy passes in `greedy-solvers.ts`) shares: the
 * state of a pass over one batch ({@link SolvePass}) with the first step of Karpenter's placement order (an existing
 * node), Karpenter's retry loop with preference relaxation, the diagnosis of the pods left over, the final plans of
 * the planned NodeClaims, and the price of a plan.
 */
import type { ResourceList } from '../resources/resource-list.js';
import { diagnose } from './diagnosis.js';
import { ExistingTarget } from './existing-target.js';
import type { FinalLists } from './instance-options.js';
import { orderByWeight } from './nodepool-template.js';
import type { SchedulingPod } from './pod.js';
import { podShape } from './pod-shape.js';
import { PlannedNodeClaim, type Accepted } from './planned-nodeclaim.js';
import { relaxationSteps, view } from './preferences.js';
import { byCpuAndMemoryDescending } from './queue.js';
import type { Topology } from './topology.js';
import type { ExistingCapacity, NodeClaimPlan, NodePoolTemplate, SchedulingResults, UnschedulablePod } from './types.js';

/**
 * One pass of a solve over a batch: its state (the pods in queue order, the NodePools by weight, what their limits
 * still allow, the topology counts, the existing targets, the NodeClaims planned so far and the pods placed on existing
 * capacity) and the steps every pass takes the same way. A pass places each pod in Karpenter's order (core
 * `pkg/controllers/provisioning/scheduling/scheduler.go` `add`): an existing node (`addToExistingNode`, here; registered
 * nodes and NodeClaims launched before this solve), then an in-flight NodeClaim (one planned earlier in this pass,
 * Karpenter's `addToInflightNodeClaim`, here too), then a new NodeClaim (Karpenter's `addToNewNodeClaim`, here
 * {@link SolvePass.open} from a NodePool probe's accepted check). Every pass places through these three; a subclass
 * decides only which in-flight NodeClaim to try and whether a new NodeClaim is the cheaper choice.
 */
export abstract class SolvePass {
  /** The batch in Karpenter's queue order ({@link byCpuAndMemoryDescending}). */
  readonly ordered: SchedulingPod[];
  /** The NodePools in the order a new NodeClaim tries them ({@link orderByWeight}). */
  readonly byWeight: NodePoolTemplate[];
  /** NodePool name → what its limits still allow (canonical units plus `nodes`; undefined: no limits), updated as NodeClaims are planned. */
  readonly remaining: Map<string, ResourceList | undefined>;
  /** This pass's topology counts: a clone of the solve's, so passes do not see each other's placements. */
  readonly topology: Topology;
  /** Existing nodes and in-flight NodeClaims launched before this solve, in the caller's order. */
  readonly existingTargets: ExistingTarget[];
  /** NodeClaims planned in this pass, in creation order. */
  readonly planned: PlannedNodeClaim[] = [];
  /** Pods placed on existing capacity, in placement order. */
  readonly placedExisting: { pod: string; target: string }[] = [];
  /** Whether any NodePool or existing target has a PreferNoSchedule taint. */
  protected readonly preferNoSchedule: boolean;
  private nextId = 0;

  /**
   * @param pods the batch (any order)
   * @param templates the NodePools with their instance types
   * @param existing nodes and in-flight NodeClaims with their free room
   * @param topologyAtStart the batch's topology counts before anything is placed (cloned, never mutated)
   */
  constructor(pods: readonly SchedulingPod[], templates: readonly NodePoolTemplate[], existing: readonly ExistingCapacity[], topologyAtStart: Topology) {
    this.ordered = [...pods].sort(byCpuAndMemoryDescending);
    this.byWeight = orderByWeight(templates);
    this.remaining = new Map(this.byWeight.map((t) => [t.name, t.remaining] as const));
    this.topology = topologyAtStart.clone();
    this.existingTargets = existing.map((e) => new ExistingTarget(e, this.topology));
    this.preferNoSchedule = [...templates.flatMap((t) => t.taints), ...existing.flatMap((e) => e.taints)].some((t) => t.effect === 'PreferNoSchedule');
  }

  /**
   * The last relaxation level of `pod` (see `preferences.ts`): the last step (tolerate PreferNoSchedule) changes
   * nothing when no taint has that effect, so it is skipped then.
   */
  maxLevel(pod: SchedulingPod): number {
    return relaxationSteps(pod) - (this.preferNoSchedule ? 0 : 1);
  }

  /** The next planned NodeClaim's id, `nodeclaim-<n>` (its hostname domain while it has no node). */
  protected newId(): string {
    return `nodeclaim-${this.nextId++}`;
  }

  /**
   * Step 1 of the placement order: the first existing node or in-flight NodeClaim launched before this solve that
   * takes `pod` (free capacity) gets it.
   * @returns whether the pod was placed
   */
  addToExistingNode(pod: SchedulingPod): boolean {
    const onExisting = this.existingTargets.find((t) => t.accepts(pod));
    if (!onExisting) return false;
    onExisting.add(pod);
    this.placedExisting.push({ pod: pod.key, target: onExisting.name });
    return true;
  }

  /**
   * Step 2 of the placement order: `pod` joins `claim`, an in-flight NodeClaim (planned earlier in this pass), if the
   * claim's full check (`canAdd`) accepts it; the pool's remaining limits are updated.
   * @returns whether the pod was placed
   */
  addToInflightNodeClaim(claim: PlannedNodeClaim, pod: SchedulingPod): boolean {
    return claim.tryAdd(pod, this.remaining);
  }

  /** The never-launched NodeClaim of `template` that answers what a fresh NodeClaim would do (`PlannedNodeClaim.probe`). */
  probeOf(template: NodePoolTemplate): PlannedNodeClaim {
    return PlannedNodeClaim.probe(template, this.topology);
  }

  /** The first NodePool by weight whose fresh NodeClaim takes `count` × `pod`, with the check. */
  freshFor(pod: SchedulingPod, count = 1): { template: NodePoolTemplate; check: Accepted } | undefined {
    for (const template of this.byWeight) {
      const check = this.probeOf(template).canAdd(pod, this.remaining.get(template.name), count);
      if (check.ok) return { template, check };
    }
    return undefined;
  }

  /** Plans a new NodeClaim of `template` for `group` from an accepted check of the template's probe (not repeated). */
  open(template: NodePoolTemplate, check: Accepted, group: readonly SchedulingPod[]): PlannedNodeClaim {
    const claim = PlannedNodeClaim.open(template, check, group, this.topology, this.newId(), this.remaining);
    this.planned.push(claim);
    return claim;
  }

  /**
   * The pass's outcome: the unplaced pods diagnosed (in the order given), then the plans of the planned NodeClaims.
   * @param unplaced the pods no target took, with the relaxation level each reached
   */
  protected results(unplaced: readonly { readonly pod: SchedulingPod; readonly level: number }[]): SchedulingResults {
    const unschedulable = diagnoseUnplaced(unplaced, this.byWeight, this.remaining, this.topology);
    return { newNodeClaims: finalizeAll(this.planned), existing: this.placedExisting, unschedulable };
  }
}

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
