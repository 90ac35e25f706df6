/**
 * Plans that survive kube-scheduler's binding (issue 20 item 2, docs/karpenter-semantics.md#binding-replay).
 *
 * Skiff's plan says which NodeClaim each pod is for, but kube-scheduler binds by its own scoring: when a burst's nodes
 * turn Ready together it takes the pending pods in its queue order (priority descending, then creation time) and binds
 * each to the feasible node with the highest `NodeResourcesFit` score, by default LeastAllocated (the mean of the free
 * cpu and memory fractions after placing the pod; kube-scheduler `pkg/scheduler/framework/plugins/noderesources/
 * least_allocated.go`, queue order `pkg/scheduler/framework/plugins/queuesort/priority_sort.go`). The small pods come
 * first and spread over every node, so a tight packing planned for the large pods breaks: they find no node with their
 * room left and need a second wave of NodeClaims.
 *
 * {@link replayBinding} predicts that binding over the capacity a plan provides (existing nodes, in-flight NodeClaims
 * and the planned NodeClaims as their cheapest instance type, each with its daemonset overhead), and
 * {@link surviveBinding} repairs the plan until the prediction fits every pod: the predicted misfits get NodeClaims of
 * their own, planned by the same packing solver (the cheapest capacity for them), of which the fewest the replay needs
 * are kept, at most {@link MAX_REPAIR_ROUNDS} times. {@link survivingPlan} also repairs plans restricted to one instance
 * family and keeps the cheapest that fits. The repaired plan launches everything in the first wave.
 *
 * Karpenter has no such step: it launches its plan and provisions again for the pods kube-scheduler could not fit
 * (docs/karpenter-semantics.md#pending-pods). Deliberate approximations: only the pods the
 * packing solver places in bulk (no topology terms, host ports or preferences) are replayed — the others are taken as
 * bound where they were planned; in-flight NodeClaims' nominated pods are taken as bound there; scoring is
 * LeastAllocated alone (kube-scheduler's other default scores favour no node for such pods, BalancedAllocation aside);
 * and ties go to the first node in the order given, where kube-scheduler picks among equal scores at random.
 */
import type { Taint } from '../api/kubernetes.js';
import { LABEL_HOSTNAME, LABEL_INSTANCE_TYPE, WELL_KNOWN_LABELS } from '../api/labels.js';
import { add, fits, subtract, type ResourceList } from '../resources/resource-list.js';
import { Requirement } from '../scheduling/requirement.js';
import { firstUntolerated } from '../scheduling/taints.js';
import type { InstanceType } from '../instancetypes/offering.js';
import type { SchedulingPod } from './pod.js';
import { alternativeKey, classKey } from './pod-shape.js';
import type { ExistingCapacity, NodeClaimPlan, NodePoolTemplate, SchedulingResults } from './types.js';

/** Repair rounds at most: each adds NodeClaims for the misfits the last replay predicted. */
export const MAX_REPAIR_ROUNDS = 6;

/**
 * The bisection over how many of the misfits' NodeClaims a repair keeps stops once the range is within 1/this of
 * the count kept (so at most that share of them may be slack).
 */
export const BISECTION_SLACK = 32;

/** A node the replay binds pods to: a registered node, an in-flight NodeClaim or a planned NodeClaim. */
export interface BindingBin {
  /** Node or NodeClaim name (a planned NodeClaim: `planned-<i>`). */
  readonly name: string;
  /** For a planned NodeClaim, its index in the plan's `newNodeClaims`. */
  readonly plan?: number;
  /** The node's allocatable, canonical units (cpu millicores, memory MiB, pods): LeastAllocated's denominators. */
  readonly allocatable: ResourceList;
  /** What is requested on it before the replay (DaemonSet pods, pods bound or taken as bound), canonical units. */
  readonly requested: ResourceList;
  readonly taints: readonly Taint[];
  /**
   * Bins of the same kind have the same allocatable, taints and labels (what `matches` reads): the replay groups them
   * while their free room is the same too.
   */
  readonly kind: string;
  /** Whether the node's labels satisfy one of the pod's requirement alternatives. */
  readonly matches: (pod: SchedulingPod) => boolean;
}

/** What a replay predicts. */
export interface BindingReplay {
  /** Pod key → the bin (index into the bins given) kube-scheduler binds it to. */
  readonly bound: ReadonlyMap<string, number>;
  /** The pods no bin had room for when their turn came, in queue order. */
  readonly misfits: readonly SchedulingPod[];
}

/**
 * kube-scheduler's default queue order (`PrioritySort`): priority descending, then the time the pod entered the queue
 * (its creation time here), then the key for a stable answer.
 */
export function byKubeSchedulerQueue(a: SchedulingPod, b: SchedulingPod): number {
  return (b.priority ?? 0) - (a.priority ?? 0) || a.createdMs - b.createdMs || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

/** Bins of one kind in one state: interchangeable for every pod (same allocatable, taints, labels and free room). */
interface BinGroup {
  readonly kind: number;
  readonly freeCpu: number;
  readonly freeMem: number;
  readonly freePods: number;
  /** Free room in every resource (read only for pods that request more than cpu, memory and pods). */
  readonly free: ResourceList;
  /** The free room in the resources other than cpu, memory and pods, as a key. */
  readonly othersKey: string;
  /** `freeCpu / allocatable cpu + freeMem / allocatable memory`: the LeastAllocated score before the pod's own share. */
  readonly base: number;
  /** The bins (indexes into the bins given) in this state, a stack (the last pushed is taken first). */
  readonly members: number[];
}

/** A kind's LeastAllocated denominators and its groups by {@link BinGroup.base}, highest first. */
interface Kind {
  readonly invCpu: number;
  readonly invMem: number;
  readonly podsLimited: boolean;
  /** A bin of the kind (its taints and labels answer for all). */
  readonly bin: number;
  groups: BinGroup[];
}

/**
 * Replays kube-scheduler's binding of `pods` over `bins`: each pod in {@link byKubeSchedulerQueue} order goes to the
 * bin, among those whose taints it tolerates, whose labels it matches and whose free room holds its requests, with the
 * highest LeastAllocated score, `((cpu free − request) / cpu + (memory free − request) / memory) / 2`. Bins of the
 * same {@link BindingBin.kind} with the same free room are interchangeable, so the replay keeps them in groups, per
 * kind ordered by score: a pod looks, in each kind, at the emptiest group that holds it (a burst's thousands of
 * planned NodeClaims are a few kinds). Among equal scores the first kind wins, in a kind the group that reached that
 * state first, and in a group the bin that reached it last (kube-scheduler picks among equal scores at random). Pure.
 * @param pods the pods to bind (any order)
 * @param bins the nodes
 */
export function replayBinding(pods: readonly SchedulingPod[], bins: readonly BindingBin[]): BindingReplay {
  return replayQueue(queueOf(pods), bins);
}

/** Pods in kube-scheduler's queue order, each with the index of its class (`classKey`): a replay's input. */
interface Queue {
  readonly pods: readonly SchedulingPod[];
  readonly classOf: Int32Array;
  readonly classes: readonly SchedulingPod[];
}

/** `pods` sorted by {@link byKubeSchedulerQueue} and numbered by class, once for every replay of a batch. */
function queueOf(pods: readonly SchedulingPod[]): Queue {
  const sorted = [...pods].sort(byKubeSchedulerQueue);
  const ids = new Map<string, number>();
  const classes: SchedulingPod[] = [];
  const classOf = new Int32Array(sorted.length);
  sorted.forEach((p, i) => {
    const key = classKey(p);
    let id = ids.get(key);
    if (id === undefined) {
      ids.set(key, (id = classes.length));
      classes.push(p);
    }
    classOf[i] = id;
  });
  return { pods: sorted, classOf, classes };
}

/** {@link replayBinding} over a prepared queue. */
/** A bin's free room and the key of its resources other than cpu, memory and pods, per bin object (bins are reused). */
const freeOf = new WeakMap<BindingBin, { readonly free: ResourceList; readonly others: string }>();

function replayQueue(queue: Queue, bins: readonly BindingBin[]): BindingReplay {
  const kindIds = new Map<string, number>();
  const kinds: Kind[] = [];
  const groups = new Map<string, BinGroup>();
  const EPS = 1e-6;
  const place = (kindId: number, g: BinGroup): void => {
    const list = kinds[kindId]!.groups;
    // After the last group with a base at least as high (equal bases keep their order).
    let [lo, hi] = [0, list.length];
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid]!.base >= g.base - 1e-12) lo = mid + 1;
      else hi = mid;
    }
    list.splice(lo, 0, g);
  };
  const groupFor = (kindId: number, free: ResourceList, othersKey: string): BinGroup => {
    const cpu = free.cpu ?? 0;
    const mem = free.memory ?? 0;
    const podsFree = free.pods ?? 0;
    const key = `${kindId}|${cpu}|${mem}|${podsFree}|${othersKey}`;
    let g = groups.get(key);
    if (!g || g.members.length === 0) {
      const kind = kinds[kindId]!;
      g = { kind: kindId, freeCpu: cpu, freeMem: mem, freePods: kind.podsLimited ? podsFree : Number.POSITIVE_INFINITY, free, othersKey, base: cpu * kind.invCpu + mem * kind.invMem, members: [] };
      groups.set(key, g);
      place(kindId, g);
    }
    return g;
  };
  const othersOf = (free: ResourceList): string =>
    Object.keys(free)
      .filter((k) => k !== 'cpu' && k !== 'memory' && k !== 'pods')
      .sort()
      .map((k) => `${k}=${free[k]}`)
      .join(',');
  // In reverse, so that each group's first bin is popped first.
  for (let i = bins.length - 1; i >= 0; i--) {
    const b = bins[i]!;
    let id = kindIds.get(b.kind);
    if (id === undefined) {
      kindIds.set(b.kind, (id = kinds.length));
      kinds.push({ invCpu: 1 / Math.max(1, b.allocatable.cpu ?? 0), invMem: 1 / Math.max(1, b.allocatable.memory ?? 0), podsLimited: b.allocatable.pods !== undefined, bin: i, groups: [] });
    }
    let f = freeOf.get(b);
    if (!f) {
      const free = subtract(b.allocatable, b.requested);
      freeOf.set(b, (f = { free, others: othersOf(free) }));
    }
    groupFor(id, f.free, f.others).members.push(i);
  }
  const masks: (Uint8Array | undefined)[] = [];
  const maskOf = (id: number): Uint8Array => {
    let mask = masks[id];
    if (!mask) {
      const pod = queue.classes[id]!;
      mask = new Uint8Array(kinds.length);
      kinds.forEach((k, i) => {
        const bin = bins[k.bin]!;
        mask![i] = !firstUntolerated(bin.taints, pod.tolerations, pod.avoidPreferNoSchedule) && bin.matches(pod) ? 1 : 0;
      });
      masks[id] = mask;
    }
    return mask;
  };
  const bound = new Map<string, number>();
  const misfits: SchedulingPod[] = [];
  for (let q = 0; q < queue.pods.length; q++) {
    const pod = queue.pods[q]!;
    const mask = maskOf(queue.classOf[q]!);
    const cpu = pod.requests.cpu ?? 0;
    const mem = pod.requests.memory ?? 0;
    const podCount = pod.requests.pods ?? 0;
    const extra = Object.keys(pod.requests).some((k) => k !== 'cpu' && k !== 'memory' && k !== 'pods' && (pod.requests[k] ?? 0) > 0);
    let best: BinGroup | undefined;
    let bestScore = Number.NEGATIVE_INFINITY;
    for (let k = 0; k < kinds.length; k++) {
      if (mask[k] === 0) continue;
      const kind = kinds[k]!;
      const list = kind.groups;
      let empty = 0;
      for (const g of list) {
        if (g.members.length === 0) {
          empty++;
          continue;
        }
        if (g.freeCpu + EPS < cpu || g.freeMem + EPS < mem || g.freePods + EPS < podCount || (extra && !fits(pod.requests, g.free))) continue;
        const score = g.base - cpu * kind.invCpu - mem * kind.invMem;
        if (score > bestScore) {
          bestScore = score;
          best = g;
        }
        break;
      }
      if (empty > 16) kind.groups = list.filter((g) => g.members.length > 0);
    }
    if (!best) {
      misfits.push(pod);
      continue;
    }
    const bin = best.members.pop()!;
    bound.set(pod.key, bin);
    const free = subtract(best.free, pod.requests);
    groupFor(best.kind, free, extra ? othersOf(free) : best.othersKey).members.push(bin);
  }
  return { bound, misfits };
}

/**
 * Whether the replay binds `pod` freely: the packing solver's bulk pods (no topology terms, host ports or
 * preferences) that select no hostname. Other pods are taken as bound where the plan put them.
 */
export function replayable(pod: SchedulingPod): boolean {
  const p = pod.preferences;
  return (
    pod.topology.length === 0 &&
    pod.hostPorts.length === 0 &&
    p.podAffinity.length + p.podAntiAffinity.length + p.scheduleAnyway.length + p.nodeAffinity.length === 0 &&
    !pod.requirementAlternatives.some((r) => r.has(LABEL_HOSTNAME))
  );
}

/** Instance type by NodePool and name, for the planned NodeClaims' cheapest options. */
function typeIndex(templates: readonly NodePoolTemplate[]): Map<string, Map<string, InstanceType>> {
  return new Map(templates.map((t) => [t.name, new Map(t.instanceTypes.map((it) => [it.name, it]))]));
}

/**
 * The bins a plan provides: `existing` (free room as given, allocatable when known) and each planned NodeClaim as its
 * cheapest option (the type CreateFleet's lowest-price strategy launches), with the template's daemonset overhead
 * (plus the type's `daemonExtra`) requested on it. Pods that are not {@link replayable} are requested where the plan
 * put them.
 * @returns the bins, existing capacity first, then the plans in order (`planned-<i>`)
 */
export function bindingBins(
  results: SchedulingResults,
  pods: ReadonlyMap<string, SchedulingPod>,
  templates: readonly NodePoolTemplate[],
  existing: readonly ExistingCapacity[],
): BindingBin[] {
  return binder(results.existing, pods, templates, existing)(results.newNodeClaims);
}

/**
 * The bin of one existing node or in-flight NodeClaim as it stands (free room as given, allocatable when known), kept
 * per capacity object: a consolidation search replays against the same capacity objects once per simulation, and
 * building a bin (its kind's key above all) for each of 2,000 nodes every time was most of a pass.
 */
const existingBins = new WeakMap<ExistingCapacity, BindingBin>();
function existingBin(e: ExistingCapacity): BindingBin {
  let bin = existingBins.get(e);
  if (!bin) {
    const allocatable = e.allocatable ?? e.available;
    // Nodes alike but for their hostname are one kind (pods that select a hostname are not replayed).
    const labels = Object.entries(e.labels).filter(([k]) => k !== LABEL_HOSTNAME).sort((x, y) => (x[0] < y[0] ? -1 : 1));
    const kind = `existing|${JSON.stringify([allocatable, labels, e.taints])}`;
    bin = { name: e.name, kind, allocatable, requested: subtract(allocatable, e.available), taints: e.taints, matches: (pod) => pod.requirementAlternatives.some((r) => r.isSatisfiedBy(e.labels)) };
    existingBins.set(e, bin);
  }
  return bin;
}

/**
 * {@link bindingBins} for several plans that share their placements on existing capacity (a plan and its repairs):
 * the existing bins are built once, each planned NodeClaim's bin once per plan object.
 */
function binder(
  onExisting: SchedulingResults['existing'],
  pods: ReadonlyMap<string, SchedulingPod>,
  templates: readonly NodePoolTemplate[],
  existing: readonly ExistingCapacity[],
): (plans: readonly NodeClaimPlan[]) => BindingBin[] {
  const fixedOn = new Map<string, ResourceList[]>();
  for (const { pod, target } of onExisting) {
    const p = pods.get(pod);
    if (p && !replayable(p)) fixedOn.set(target, [...(fixedOn.get(target) ?? []), p.requests]);
  }
  const existingBins: BindingBin[] = [];
  for (const e of existing) {
    if (e.closed || e.markedForDeletion) continue;
    const bin = existingBin(e);
    const fixed = fixedOn.get(e.name);
    existingBins.push(fixed ? { ...bin, requested: add(bin.requested, ...fixed) } : bin);
  }
  const types = typeIndex(templates);
  const byPool = new Map(templates.map((t) => [t.name, t]));
  const planned = new Map<NodeClaimPlan, Omit<BindingBin, 'name' | 'plan'> | undefined>();
  const planBin = (plan: NodeClaimPlan): Omit<BindingBin, 'name' | 'plan'> | undefined => {
    if (planned.has(plan)) return planned.get(plan);
    const template = byPool.get(plan.nodePool);
    const type = types.get(plan.nodePool)?.get(plan.instanceTypes[0]?.name ?? '');
    let bin: Omit<BindingBin, 'name' | 'plan'> | undefined;
    if (template && type) {
      const extra = template.daemonExtra?.[type.name] ?? {};
      const fixed = plan.pods.map((k) => pods.get(k)).filter((p): p is SchedulingPod => !!p && !replayable(p));
      bin = {
        kind: `planned|${plan.nodePool}|${type.name}|${alternativeKey(plan.requirements)}|${JSON.stringify(plan.taints)}`,
        allocatable: add(type.allocatable, extra),
        requested: add(template.daemonOverhead, extra, ...fixed.map((p) => p.requests)),
        taints: plan.taints,
        matches: planMatcher(plan, type),
      };
    }
    planned.set(plan, bin);
    return bin;
  };
  return (plans) => {
    const bins = [...existingBins];
    plans.forEach((plan, i) => {
      const bin = planBin(plan);
      if (bin) bins.push({ ...bin, name: `planned-${i}`, plan: i });
    });
    return bins;
  };
}

/** Whether a pod's requirements allow a planned NodeClaim launched as `type`: one alternative compatible with both. */
function planMatcher(plan: NodeClaimPlan, type: InstanceType): (pod: SchedulingPod) => boolean {
  return (pod) => pod.requirementAlternatives.some((r) => r.isEmpty() || (plan.requirements.compatible(r, WELL_KNOWN_LABELS) === undefined && type.requirements.compatible(r, WELL_KNOWN_LABELS) === undefined));
}

/**
 * Repairs `results` until kube-scheduler's predicted binding ({@link replayBinding} over {@link bindingBins}) fits every
 * pod. Each round gives the predicted misfits NodeClaims of their own, planned by `solveMisfits` (the packing solver on
 * the misfits alone, so the added capacity is the cheapest for them), while the NodeClaims they were planned on keep
 * their instance types (their room stays: the other pods spread into it). When a replay fits everything, the pods are
 * nominated where it binds them ({@link renominate}), so a NodeClaim's nominated pods are those kube-scheduler will put
 * on it and in-flight accounting stays true until the nodes are Ready.
 *
 * A plan whose first replay fits is returned unchanged. When the rounds run out ({@link MAX_REPAIR_ROUNDS}), the time
 * is up (`expired`) or the misfits cannot be planned at all, the solver's plan is returned unchanged too: its misfits
 * are then provisioned when kube-scheduler reports them, as in Karpenter.
 * @param results the solver's plan
 * @param pods the batch that was solved
 * @param solveMisfits plans new NodeClaims for pods alone (no existing capacity), given the plan they join (whose
 *   NodeClaims count against the NodePools' limits)
 * @returns the plan to launch, the misfits each round added NodeClaims for (empty: the plan is the solver's), and
 *   whether the replay of the returned plan fits every pod
 */
export function surviveBinding(
  results: SchedulingResults,
  pods: readonly SchedulingPod[],
  templates: readonly NodePoolTemplate[],
  existing: readonly ExistingCapacity[],
  solveMisfits: (pods: readonly SchedulingPod[], plan: SchedulingResults) => SchedulingResults,
  expired: () => boolean = () => false,
): { results: SchedulingResults; moved: number[]; fits: boolean } {
  if (results.newNodeClaims.length === 0) return { results, moved: [], fits: true };
  const byKey = new Map(pods.map((p) => [p.key, p]));
  const unschedulable = new Set(results.unschedulable.map((u) => u.pod));
  const placed = pods.filter((p) => !unschedulable.has(p.key) && replayable(p));
  const moved: number[] = [];
  let current = results;
  const binsOf = binder(results.existing, byKey, templates, existing);
  const queue = queueOf(placed);
  const replayOf = (plan: SchedulingResults) => {
    const bins = binsOf(plan.newNodeClaims);
    return { bins, replay: replayQueue(queue, bins) };
  };
  let last = replayOf(current);
  if (last.replay.misfits.length === 0) return { results, moved, fits: true };
  for (let round = 0; round < MAX_REPAIR_ROUNDS && !expired(); round++) {
    const extra = solveMisfits(last.replay.misfits, current).newNodeClaims;
    if (extra.length === 0) break;
    moved.push(last.replay.misfits.length);
    const base = current;
    const withFirst = (k: number): SchedulingResults => ({ ...base, newNodeClaims: [...base.newNodeClaims, ...extra.slice(0, k)] });
    current = withFirst(extra.length);
    last = replayOf(current);
    if (last.replay.misfits.length > 0) continue;
    // The misfits' own plan is sized as if they ran alone, but the other pods spread into its nodes as well: keep the
    // fewest of its NodeClaims (in its order) with which the replay still fits.
    // Within 1/BISECTION_SLACK of the count (or exactly, for few): a few NodeClaims of slack cost less than more replays.
    let [lo, hi] = [0, extra.length];
    while (hi - lo > Math.max(1, Math.ceil(hi / BISECTION_SLACK)) && !expired()) {
      const mid = (lo + hi) >> 1;
      const tried = replayOf(withFirst(mid));
      if (tried.replay.misfits.length === 0) [hi, current, last] = [mid, withFirst(mid), tried];
      else lo = mid;
    }
    return { results: renominate(current, last.replay, last.bins, byKey, templates), moved, fits: true };
  }
  return { results, moved: [], fits: false };
}

/**
 * `results` with every replayed pod nominated where `replay` binds it: planned NodeClaims hold the pods bound to them
 * (plus their pods that are not {@link replayable}) and keep the instance types that still fit them; a planned
 * NodeClaim no pod binds to is dropped (no pod could use it); pods bound to existing capacity are placed there.
 */
export function renominate(
  results: SchedulingResults,
  replay: BindingReplay,
  bins: readonly BindingBin[],
  byKey: ReadonlyMap<string, SchedulingPod>,
  templates: readonly NodePoolTemplate[],
): SchedulingResults {
  const onPlan = new Map<number, string[]>();
  const onExisting: { pod: string; target: string }[] = [];
  for (const [pod, i] of replay.bound) {
    const bin = bins[i]!;
    if (bin.plan === undefined) {
      onExisting.push({ pod, target: bin.name });
      continue;
    }
    const list = onPlan.get(bin.plan);
    if (list) list.push(pod);
    else onPlan.set(bin.plan, [pod]);
  }
  const types = typeIndex(templates);
  const byPool = new Map(templates.map((t) => [t.name, t]));
  const newNodeClaims: NodeClaimPlan[] = [];
  results.newNodeClaims.forEach((plan, i) => {
    const keys = [...plan.pods.filter((k) => !replayable(byKey.get(k)!)), ...(onPlan.get(i) ?? [])];
    if (keys.length === 0) return;
    const requests = add(byPool.get(plan.nodePool)?.daemonOverhead ?? {}, ...keys.map((k) => byKey.get(k)!.requests));
    const pool = types.get(plan.nodePool);
    const instanceTypes = plan.instanceTypes.filter((o) => {
      const t = pool?.get(o.name);
      return !!t && fits(requests, t.allocatable);
    });
    const narrowed = instanceTypes.length === plan.instanceTypes.length ? plan.requirements : plan.requirements.add(Requirement.in(LABEL_INSTANCE_TYPE, instanceTypes.map((o) => o.name)));
    newNodeClaims.push({ ...plan, pods: keys, requests, instanceTypes, requirements: narrowed });
  });
  return {
    newNodeClaims,
    existing: [...results.existing.filter((e) => !replayable(byKey.get(e.pod)!)), ...onExisting],
    unschedulable: results.unschedulable,
  };
}

/** Instance families a plan's NodeClaims launch as, most used first, tried as homogeneous plans. */
export const MAX_FAMILY_VARIANTS = 3;

/** The label that names an instance type's family (e.g. `m6g`). */
const LABEL_INSTANCE_FAMILY = 'karpenter.k8s.aws/instance-family';

/** What {@link survivingPlan} chose. */
export interface SurvivingPlan {
  readonly results: SchedulingResults;
  /** The instance family the plan was restricted to, if a homogeneous variant won. */
  readonly family?: string;
  /** Misfits each repair round of the chosen plan added NodeClaims for. */
  readonly moved: readonly number[];
  /** Whether the chosen plan's replay fits every pod. */
  readonly fits: boolean;
}

/**
 * The cheapest plan for `pods` that survives kube-scheduler's binding, among: the solver's `plan` repaired by
 * {@link surviveBinding}, and the same batch solved with each NodePool's instance types restricted to one instance
 * family (the {@link MAX_FAMILY_VARIANTS} families `plan` uses most), each repaired the same way. Nodes of one family
 * have allocatable in about the same cpu:memory proportion, so LeastAllocated spreads the small pods evenly over them
 * and the large pods still find their room, where a mix of compute- and memory-optimised nodes draws the small pods'
 * cpu onto the memory-rich nodes first. A plan whose replay fits at once is returned as it is, and so is `plan` when
 * no candidate fits (its misfits are provisioned when kube-scheduler reports them, as in Karpenter).
 *
 * Cost: a plan restricted to one family is dearer when the batch's cpu:memory mix needs two; it wins only when that
 * costs less than the capacity the mixed plan's misfits need. Its NodeClaims offer one family's types only, so an
 * insufficient-capacity error falls back through the provisioner's re-solve (unavailable offerings excluded).
 * @param plan the solver's plan for `pods`
 * @param solveWith the solver with other templates (the same batch and existing capacity); absent: no variants, the
 *   repaired `plan` or nothing
 * @param solveMisfits the solver on pods alone (see {@link surviveBinding})
 * @param expired whether the solve's time is up (no further candidates are tried)
 */
export function survivingPlan(
  plan: SchedulingResults,
  pods: readonly SchedulingPod[],
  templates: readonly NodePoolTemplate[],
  existing: readonly ExistingCapacity[],
  solveWith: ((templates: readonly NodePoolTemplate[]) => SchedulingResults) | undefined,
  solveMisfits: (pods: readonly SchedulingPod[], plan: SchedulingResults) => SchedulingResults,
  expired: () => boolean = () => false,
): SurvivingPlan {
  const first = surviveBinding(plan, pods, templates, existing, solveMisfits, expired);
  if ((first.fits && first.moved.length === 0) || !solveWith) return first.fits ? first : { results: plan, moved: [], fits: false };
  let best: SurvivingPlan | undefined = first.fits ? first : undefined;
  const variants: { family: string; plan: SchedulingResults }[] = [];
  for (const family of familiesOf(plan, templates).slice(0, MAX_FAMILY_VARIANTS)) {
    if (expired()) break;
    const restricted = templates.map((t) => ({ ...t, instanceTypes: t.instanceTypes.filter((it) => it.labels[LABEL_INSTANCE_FAMILY] === family) }));
    const variant = solveWith(restricted);
    if (variant.unschedulable.length <= plan.unschedulable.length) variants.push({ family, plan: variant });
  }
  // Cheapest before repair first; a variant that costs more before its repair than the best repaired plan cannot win.
  variants.sort((a, b) => priceOf(a.plan) - priceOf(b.plan));
  for (const { family, plan: variant } of variants) {
    if (expired() || (best && priceOf(variant) >= priceOf(best.results) - 1e-9)) break;
    const repaired = surviveBinding(variant, pods, templates, existing, solveMisfits, expired);
    if (repaired.fits && (!best || priceOf(repaired.results) < priceOf(best.results) - 1e-9)) best = { ...repaired, family };
  }
  return best ?? { results: plan, moved: [], fits: false };
}

/** The instance families of a plan's NodeClaims (their cheapest options), most NodeClaims first. */
function familiesOf(plan: SchedulingResults, templates: readonly NodePoolTemplate[]): string[] {
  const types = typeIndex(templates);
  const count = new Map<string, number>();
  for (const c of plan.newNodeClaims) {
    const family = types.get(c.nodePool)?.get(c.instanceTypes[0]?.name ?? '')?.labels[LABEL_INSTANCE_FAMILY];
    if (family) count.set(family, (count.get(family) ?? 0) + 1);
  }
  return [...count].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([f]) => f);
}

/** The plan's price: its NodeClaims' cheapest options, USD/hour. */
function priceOf(results: SchedulingResults): number {
  return results.newNodeClaims.reduce((sum, c) => sum + (c.instanceTypes[0]?.price ?? 0), 0);
}
