/**
 * Consolidation: can these nodes go, their pods moving to the other nodes plus at most one new, cheaper node? The
 * answer is a {@link Command} (`types.ts`) with no replacement or one.
 * Karpenter core `disruption/consolidation.go computeConsolidation`, `multinodeconsolidation.go`,
 * `singlenodeconsolidation.go`:
 *
 * - the candidates' reschedulable pods are solved against every other node and in-flight NodeClaim (not those
 *   already being disrupted) and the NodePools; any pod left unschedulable, or more than one new NodeClaim, means no;
 * - NodePools in weight order: the pod that opens the one new NodeClaim must get it from the first NodePool (by
 *   `OrderByWeight`) whose fresh NodeClaim takes it over all its types, as in Karpenter's simulation; pods never move
 *   to a lower-weight NodePool only because it is cheaper;
 * - no new NodeClaim: delete the candidates (reason Empty when they have no pods, else Underutilized);
 * - one new NodeClaim: replace, keeping only instance types strictly cheaper than the candidates together (core
 *   `consolidation.go computeConsolidation`, `RemoveInstanceTypeOptionsByPriceAndMinValues`), and for several nodes
 *   nothing at or above the price of a candidate whose type is among the options (`multinodeconsolidation.go
 *   filterOutSameInstanceType`, multi-node only). A single node may be replaced by its own instance type when that
 *   type's offering is cheaper — an on-demand node whose type has a cheaper spot offering goes back to spot of the
 *   same type once a spot shortage ends; a node already on its type's cheapest offering gains nothing from it, the
 *   price filter drops it. The dropped types still count as topology domains, so a zone spread sees the same zones as the
 *   provisioner;
 * - spot → spot only with `SpotToSpotConsolidation` on, and for a single node only when at least
 *   {@link MIN_SPOT_TO_SPOT_TYPES} cheaper types remain (the launch list is then cut to the 15 cheapest); replacing
 *   on-demand nodes with a NodeClaim that could be spot or on-demand forces it to spot, so an ICE fails the
 *   replacement instead of landing on a pricier on-demand node;
 * - multi-node: candidates in the given order, the longest prefix (at least 2, at most
 *   {@link MAX_MULTI_NODE_CANDIDATES}) that consolidates, by binary search; single-node: the first candidate that does.
 */
import { LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE, type CapacityType } from '../api/labels.js';
import type { InstanceType } from '../instancetypes/offering.js';
import { add, addOnKeysOf, subtract, type ResourceList } from '../resources/resource-list.js';
import type { SchedulingPod } from '../provisioning/pod.js';
import type { Command } from './types.js';
import { byCpuAndMemoryDescending } from '../provisioning/queue.js';
import { firstNodePoolFor, solve } from '../provisioning/scheduler.js';
import type { PlacedPod } from '../provisioning/topology.js';
import type { ExistingCapacity, NodeClaimPlan, NodePoolTemplate } from '../provisioning/types.js';
import { Requirement } from '../scheduling/requirement.js';

/** Karpenter `MinInstanceTypesForSpotToSpotConsolidation`. */
export const MIN_SPOT_TO_SPOT_TYPES = 15;
/** Karpenter caps multi-node consolidation at 100 candidates. */
export const MAX_MULTI_NODE_CANDIDATES = 100;

/** A node that may be consolidated. */
export interface ConsolidationCandidate {
  /** The NodeClaim's name. */
  readonly nodeClaim: string;
  /** The node's name (its entry in the existing capacity). */
  readonly node: string;
  readonly nodePool: string;
  readonly instanceType: string;
  readonly capacityType: CapacityType;
  /** USD per hour. */
  readonly price: number;
  /** Its reschedulable pods: not DaemonSet pods, not terminal. */
  readonly pods: readonly SchedulingPod[];
  /**
   * What the node counts against its NodePool's `spec.limits` (its instance type's capacity, canonical units, plus
   * `nodes: 1`). A simulation frees it: Karpenter's scheduler subtracts only the nodes it is given from the limits, and
   * `SimulateScheduling` leaves the candidates out (core `scheduling/scheduler.go` `updateRemainingResources`,
   * `disruption/helpers.go`). Absent: the NodePool's limits stay as they are.
   */
  readonly capacity?: ResourceList;
  /**
   * What its pods can use (canonical units: cpu millicores, memory MiB); the repacking moves (`repack.ts`) rank
   * candidates by how much of it their pods request. Absent: unknown, ranked as if full.
   */
  readonly allocatable?: ResourceList;
}

/** What the simulation solves against. */
export interface ConsolidationContext {
  /** Every NodePool, with instance types and availability (limits as they stand). */
  readonly templates: readonly NodePoolTemplate[];
  /**
   * Every node and in-flight NodeClaim that can take pods: nodes being disrupted left out, and the room their pods will
   * take subtracted ({@link afterMovingPods}).
   */
  readonly existing: readonly ExistingCapacity[];
  /** `settings.featureGates.SpotToSpotConsolidation`. */
  readonly spotToSpot: boolean;
  /**
   * Skiff's repack and split moves (`repack.ts`): the candidates' pods are planned to survive kube-scheduler's binding —
   * its queue order and LeastAllocated scoring over the nodes left and the replacements
   * (`provisioning/binding-replay.ts`) — and a move whose plan no repair makes survive it is no move. Evicted pods are
   * bound by kube-scheduler, not by the plan: a plan that packs them tightly sends some of them to a second wave of
   * NodeClaims, which the next passes consolidate again. Karpenter's own moves ({@link simulateConsolidation}) plan as
   * Karpenter does, whatever this says, so Skiff's moves come after Karpenter's and never instead of them (with
   * the replay, a spot-to-spot replacement that Karpenter makes was found to need two NodeClaims and was not made).
   * Absent or false: no replay.
   */
  readonly surviveBinding?: boolean;
}

/**
 * The outcome of simulating one set of candidates: a {@link Command} (`kind` is its `decisionOf` in `types.ts`: `delete`
 * without replacements, `replace` with one), or `none` with why not.
 */
export type ConsolidationDecision =
  | (Command<ConsolidationCandidate> & {
      readonly kind: 'delete';
      /** None: the pods fit on the other nodes. */
      readonly replacements: readonly [];
      /** The candidates' price, USD per hour. */
      readonly savings: number;
    })
  | (Command<ConsolidationCandidate> & {
      readonly kind: 'replace';
      /** The one new NodeClaim, its options cut to those strictly cheaper than the candidates (cheapest first). */
      readonly replacements: readonly [NodeClaimPlan];
      /** Candidates' price minus the replacement's cheapest option, USD per hour (> 0). */
      readonly savings: number;
    })
  | { readonly kind: 'none'; readonly candidates: readonly ConsolidationCandidate[]; /** Why not, in words. */ readonly reason: string };

/**
 * Simulates removing `candidates` together.
 * @param single true for single-node consolidation (the 15-type spot rule applies); false for multi-node (the
 *   same-type price ceiling of `filterOutSameInstanceType` applies)
 */
export function simulateConsolidation(candidates: readonly ConsolidationCandidate[], ctx: ConsolidationContext, single: boolean): ConsolidationDecision {
  const none = (reason: string): ConsolidationDecision => ({ kind: 'none', candidates, reason });
  const gone = new Set(candidates.map((c) => c.node));
  const pods = candidates.flatMap((c) => c.pods);
  const price = candidates.reduce((sum, c) => sum + c.price, 0);
  const deleted: ConsolidationDecision = { kind: 'delete', candidates, replacements: [], savings: price };
  if (pods.length === 0) return deleted;
  // Only instance types with an offering strictly cheaper than the candidates may replace them (their own type
  // included: core `computeConsolidation` filters by price alone).
  // The others stay in the solve with no available offering: they launch nothing, but their zones remain topology
  // domains, as in the provisioner (Karpenter filters the options after a solve over every type). Without them an
  // empty zone would drop out of a zone spread, a pod would "fit" where the provisioner then refuses it, and
  // consolidation and provisioning would replace the same node back and forth.
  const templates = freeLimits(ctx.templates, candidates);
  const cheaper = templates.map((t) => cheaperTemplate(t, price));
  const results = solve(
    pods,
    cheaper,
    ctx.existing.filter((e) => !gone.has(e.name)),
  );
  const stuck = results.unschedulable[0];
  if (stuck) return none(`pod ${stuck.pod} fits neither on the other nodes nor on one instance type cheaper than $${price.toFixed(4)}/h`);
  if (results.newNodeClaims.length === 0) return deleted;
  // Karpenter's moves replace with at most one NodeClaim (core `computeConsolidation`: more than one is no command).
  if (results.newNodeClaims.length > 1) return none(`no one instance type cheaper than $${price.toFixed(4)}/h holds its pods (they would need ${results.newNodeClaims.length} new nodes, and a replacement is one NodeClaim)`);
  const plan = results.newNodeClaims[0]!;
  // NodePools in weight order: Karpenter simulates with every type of every NodePool, so the replacement comes from
  // the first NodePool (by weight) whose fresh NodeClaim takes the pod that opens it, cheaper or not; only then are
  // its types cut to the cheaper ones. Solving over the cheaper types alone would pass over a higher-weight NodePool
  // that has none cheaper and move the pods to a lower-weight one only because it is cheaper.
  const ahead = higherWeightPool(plan, pods, { ...ctx, templates }, gone);
  if (ahead) return none(ahead);
  // Multi-node (Karpenter `filterOutSameType`): a replacement of a type one candidate already has must cost less than
  // that candidate, or deleting the others alone disrupts fewer pods.
  const ceiling = single ? price : Math.min(price, sameTypeCeiling(candidates, plan.instanceTypes));
  let options = plan.instanceTypes.filter((o) => o.price < ceiling - 1e-9);
  if (options.length === 0) {
    return none(ceiling < price ? `the replacement would be the same type as a candidate (${candidates.find((c) => c.price === ceiling)?.instanceType}) at no lower price` : 'no instance type that fits its pods is cheaper');
  }
  let requirements = plan.requirements;
  const capacity = requirements.has(LABEL_CAPACITY_TYPE) ? requirements.get(LABEL_CAPACITY_TYPE) : undefined;
  const allowsSpot = !capacity || capacity.has('spot');
  const allowsOnDemand = !capacity || capacity.has('on-demand');
  if (candidates.every((c) => c.capacityType === 'spot') && allowsSpot) {
    if (!ctx.spotToSpot) return none('replacing a spot node with a spot node needs the SpotToSpotConsolidation feature gate');
    if (single && options.length < MIN_SPOT_TO_SPOT_TYPES) {
      return none(`spot-to-spot consolidation needs at least ${MIN_SPOT_TO_SPOT_TYPES} cheaper instance types, only ${options.length} are`);
    }
    options = options.slice(0, MIN_SPOT_TO_SPOT_TYPES);
    requirements = requirements.add(Requirement.in(LABEL_CAPACITY_TYPE, ['spot']));
  } else if (allowsSpot && allowsOnDemand) {
    requirements = requirements.add(Requirement.in(LABEL_CAPACITY_TYPE, ['spot']));
  }
  requirements = requirements.add(Requirement.in(LABEL_INSTANCE_TYPE, options.map((o) => o.name)));
  const replacement: NodeClaimPlan = { ...plan, requirements, instanceTypes: options };
  return { kind: 'replace', candidates, replacements: [replacement], savings: price - options[0]!.price };
}

/**
 * Why the replacement `plan` would not come from its NodePool in Karpenter, or undefined: the pod that opens it (the
 * first of its pods in Karpenter's order, `byCpuAndMemoryDescending`; the others join the NodeClaim it opened)
 * would get a new NodeClaim from a NodePool tried before the plan's, with every instance type counted. Core
 * `pkg/controllers/disruption/helpers.go` `SimulateScheduling` builds the scheduler with every NodePool and
 * instance type, which tries the templates in `OrderByWeight` order (`scheduling/scheduler.go` `addToNewNodeClaim`);
 * `consolidation.go` `computeConsolidation` then filters that NodeClaim's types by price.
 */
export function higherWeightPool(plan: NodeClaimPlan, pods: readonly SchedulingPod[], ctx: ConsolidationContext, gone: ReadonlySet<string>): string | undefined {
  const keys = new Set(plan.pods);
  const opener = pods.filter((p) => keys.has(p.key)).sort(byCpuAndMemoryDescending)[0];
  if (!opener) return undefined;
  const first = firstNodePoolFor(
    opener,
    pods,
    ctx.templates,
    ctx.existing.filter((e) => !gone.has(e.name)),
  );
  if (!first || first.name === plan.nodePool) return undefined;
  return `pod ${opener.key} would get a new node from NodePool ${first.name} (weight ${first.weight}), tried before ${plan.nodePool}, and no instance type of it that fits is cheaper`;
}

/**
 * The templates with the candidates' capacity given back to their NodePools' remaining limits (a replacement may use
 * what the nodes it replaces held), on the resources the limits name only: Karpenter's remaining resources are
 * `spec.limits` minus usage, key by key (core `pkg/controllers/provisioning/scheduling/scheduler.go`
 * `filterByRemainingResources`), so a resource the NodePool does not limit stays unlimited. (Adding the whole capacity
 * limited a NodePool with `limits: {cpu, memory}` to the candidates' pods and ephemeral storage, and no replacement
 * with more of either could be planned.)
 */
export function freeLimits(templates: readonly NodePoolTemplate[], candidates: readonly ConsolidationCandidate[]): readonly NodePoolTemplate[] {
  if (!candidates.some((c) => c.capacity)) return templates;
  return templates.map((t) => {
    if (!t.remaining) return t;
    const freed = candidates.filter((c) => c.nodePool === t.name && c.capacity).map((c) => c.capacity!);
    return freed.length === 0 ? t : { ...t, remaining: addOnKeysOf(t.remaining, ...freed) };
  });
}

/** Whether `type` has an available offering strictly cheaper than `price` (USD/h). */
function isCheaper(type: InstanceType, price: number): boolean {
  return type.offerings.some((o) => o.available && o.price < price - 1e-9);
}

/**
 * The template with only the instance types that have an offering strictly cheaper than `price` (USD/h) launchable,
 * the others {@link unlaunchable}: one object per template object and price, so a search that simulates many
 * candidates of the same price solves against the same template, whose priced instance options the scheduler then
 * works out once (`provisioning/instance-options.ts optionsOf`, kept per template object).
 */
const cheaperTemplates = new WeakMap<NodePoolTemplate, Map<number, NodePoolTemplate>>();
function cheaperTemplate(template: NodePoolTemplate, price: number): NodePoolTemplate {
  let byPrice = cheaperTemplates.get(template);
  if (!byPrice) cheaperTemplates.set(template, (byPrice = new Map()));
  let cheaper = byPrice.get(price);
  if (!cheaper) {
    if (byPrice.size >= 1000) byPrice.clear(); // bound the memory: many distinct prices only cost a recomputation
    cheaper = { ...template, instanceTypes: template.instanceTypes.map((type) => (isCheaper(type, price) ? type : unlaunchable(type))) };
    byPrice.set(price, cheaper);
  }
  return cheaper;
}

/** The same instance type with every offering unavailable (one copy per type object). */
const unlaunchableCopies = new WeakMap<InstanceType, InstanceType>();
function unlaunchable(type: InstanceType): InstanceType {
  let copy = unlaunchableCopies.get(type);
  if (!copy) {
    copy = { ...type, offerings: type.offerings.map((o) => ({ ...o, available: false })) };
    unlaunchableCopies.set(type, copy);
  }
  return copy;
}

/**
 * The price (USD/h) of the cheapest candidate whose instance type is among the replacement's options, or Infinity.
 * Karpenter core `multinodeconsolidation.go filterOutSameType`.
 */
function sameTypeCeiling(candidates: readonly ConsolidationCandidate[], options: readonly { readonly name: string }[]): number {
  const names = new Set(options.map((o) => o.name));
  let ceiling = Number.POSITIVE_INFINITY;
  for (const c of candidates) if (names.has(c.instanceType)) ceiling = Math.min(ceiling, c.price);
  return ceiling;
}

/**
 * The capacity left once the pods of nodes already being disrupted have moved. Karpenter adds those pods to every
 * consolidation simulation (core `pkg/controllers/disruption/helpers.go SimulateScheduling`:
 * `deletingNodes.CurrentlyReschedulablePods`, solved together with the candidates' pods), so a command never counts on
 * room that the pods of a node already going away will take. Skiff places them once per search, before the
 * candidates' pods (the candidates are then simulated against what is left), instead of in every simulation: the
 * same room is spoken for at a fraction of the cost, and a command is only ever more careful than Karpenter's.
 * Moving pods that fit nowhere are left to the provisioner, which launches for them as they are evicted (Karpenter:
 * a pod of a deleting node that needs a new NodeClaim makes no command fail either, `consolidation.go
 * computeConsolidation` counts only the candidates' pods).
 *
 * `closed` (a node inside its own consolidateAfter) does not apply to these pods: they belong to nodes being deleted
 * (core `scheduling/scheduler.go addToExistingNode`).
 * @param moving the reschedulable pods of the nodes being disrupted (their nodes already left out of `existing`)
 * @returns `existing` with the room they take subtracted (the same objects where nothing moved in)
 */
export function afterMovingPods(moving: readonly SchedulingPod[], templates: readonly NodePoolTemplate[], existing: readonly ExistingCapacity[]): readonly ExistingCapacity[] {
  if (moving.length === 0) return existing;
  const results = solve(
    moving,
    templates,
    existing.map((e) => (e.closed ? { ...e, closed: false } : e)),
  );
  if (results.existing.length === 0) return existing;
  const byKey = new Map(moving.map((p) => [p.key, p]));
  const byTarget = new Map<string, SchedulingPod[]>();
  for (const { pod, target } of results.existing) {
    const p = byKey.get(pod);
    if (p) byTarget.set(target, [...(byTarget.get(target) ?? []), p]);
  }
  return existing.map((e) => {
    const placed = byTarget.get(e.name);
    if (!placed) return e;
    return {
      ...e,
      available: subtract(e.available, add(...placed.map((p) => p.requests))),
      hostPorts: [...e.hostPorts, ...placed.flatMap((p) => p.hostPorts)],
      pods: [...(e.pods ?? []), ...placed.map(asPlaced)],
    };
  });
}

/** A solved pod as the topology counts it once placed: namespace, labels, its required anti-affinity terms. */
function asPlaced(pod: SchedulingPod): PlacedPod {
  return { namespace: pod.namespace, labels: pod.labels, antiAffinity: pod.topology.filter((t) => t.kind === 'antiAffinity' && t.required) };
}

/**
 * Multi-node consolidation: the longest prefix of `candidates` (at least 2) that can be deleted or replaced by one
 * cheaper node, by binary search over the prefix length (Karpenter `firstNConsolidationOption`).
 * @param candidates in Karpenter's order (cheapest to disrupt first); at most {@link MAX_MULTI_NODE_CANDIDATES} are used
 * @returns the best decision found, or `none`
 */
export function multiNodeConsolidation(candidates: readonly ConsolidationCandidate[], ctx: ConsolidationContext): ConsolidationDecision {
  const list = candidates.slice(0, MAX_MULTI_NODE_CANDIDATES);
  if (list.length < 2) return { kind: 'none', candidates: list, reason: 'fewer than two candidates' };
  let lo = 2;
  let hi = list.length;
  let best: ConsolidationDecision = { kind: 'none', candidates: list, reason: 'no two or more nodes consolidate into at most one' };
  while (lo <= hi) {
    const mid = Math.floor((lo + hi) / 2);
    const decision = simulateConsolidation(list.slice(0, mid), ctx, false);
    if (decision.kind === 'none') {
      hi = mid - 1;
    } else {
      best = decision;
      lo = mid + 1;
    }
  }
  return best;
}

/**
 * Single-node consolidation: the first candidate that can be deleted or replaced by a cheaper node.
 * @returns the decision, and why each candidate tried before it was turned down
 */
export function singleNodeConsolidation(
  candidates: readonly ConsolidationCandidate[],
  ctx: ConsolidationContext,
): { readonly decision?: ConsolidationDecision; readonly rejected: readonly { readonly nodeClaim: string; readonly reason: string }[] } {
  const rejected: { nodeClaim: string; reason: string }[] = [];
  for (const c of candidates) {
    const decision = simulateConsolidation([c], ctx, true);
    if (decision.kind !== 'none') return { decision, rejected };
    rejected.push({ nodeClaim: c.nodeClaim, reason: decision.reason });
  }
  return { rejected };
}

/**
 * Karpenter's per-pod disruption cost: `1 + deletion-cost/2^27 + priority/2^25`, clamped to [−10, 10]
 * (`utils/disruption/disruption.go EvictionCost`). Candidates with cheaper pods to move are tried first.
 * @param deletionCost the pod's `controller.kubernetes.io/pod-deletion-cost` annotation, parsed (0 when absent)
 * @param priority the pod's `spec.priority` (0 when absent)
 */
export function evictionCost(deletionCost: number, priority: number): number {
  const cost = 1 + deletionCost / 2 ** 27 + priority / 2 ** 25;
  return Math.min(10, Math.max(-10, cost));
}
