/**
 * A provisioning plan as the cost benchmark compares it — nodes, each an instance type from a NodePool with the pods
 * it is for — and an independent check of a plan (every pod placed exactly once, every node's type allows and fits
 * its pods plus the NodePool's daemonset overhead), so neither the project's solver nor the baseline is trusted for
 * its own cost.
 */
import { WELL_KNOWN_LABELS } from '../shared/core/api/labels.js';
import { cheapestOffering, type InstanceType } from '../shared/core/instancetypes/offering.js';
import type { SchedulingPod } from '../shared/core/provisioning/pod.js';
import type { NodePoolTemplate, SchedulingResults } from '../shared/core/provisioning/types.js';
import { add, exceeding } from '../shared/core/resources/resource-list.js';
import { firstUntolerated } from '../shared/core/scheduling/taints.js';

/** One node of a plan. */
export interface PlannedNode {
  /** NodePool (template) name. */
  readonly nodePool: string;
  /** The instance type it launches. */
  readonly instanceType: string;
  /** What it costs, USD per hour. */
  readonly price: number;
  /** Keys (`namespace/name`) of its pods. */
  readonly pods: readonly string[];
}

/** A plan: the nodes to launch and the pods left without one. */
export interface Plan {
  readonly nodes: readonly PlannedNode[];
  /** Pod keys no node is planned for. */
  readonly unplaced: readonly string[];
}

/**
 * The plan of a `solve()` result: each new NodeClaim launches its cheapest option (`instanceTypes[0]`, as CreateFleet
 * `lowest-price` does for on-demand). Pods placed on existing capacity count as unplaced (the benchmark gives none).
 */
export function planFromResults(results: SchedulingResults): Plan {
  return {
    nodes: results.newNodeClaims.map((c) => ({ nodePool: c.nodePool, instanceType: c.instanceTypes[0]?.name ?? '(none)', price: c.instanceTypes[0]?.price ?? Number.NaN, pods: c.pods })),
    unplaced: [...results.unschedulable.map((u) => u.pod), ...results.existing.map((e) => e.pod)],
  };
}

/** Total price of a plan's nodes, USD per hour. */
export function planCost(plan: Plan): number {
  return plan.nodes.reduce((sum, n) => sum + n.price, 0);
}

/**
 * The cheapest price of an instance type among the available offerings a NodePool allows, USD per hour, or
 * undefined when it allows none.
 */
export function allowedPrice(type: InstanceType, template: NodePoolTemplate): number | undefined {
  return cheapestOffering(type, template.requirements)?.price;
}

/**
 * Checks a plan against its inputs without the solver: every pod is placed on exactly one node (none unplaced, none
 * unknown); every node's NodePool exists, offers its instance type with an available offering at no more than the
 * node's price, its taints are tolerated and its requirements are compatible with each pod's; and each node's pods'
 * requests plus the NodePool's daemonset overhead fit the type's allocatable (cpu, memory, pods, GPUs — every
 * resource). Topology constraints are not checked (the cost benchmark's pods have none).
 * @returns the problems found, empty when the plan is valid
 */
export function verifyPlan(plan: Plan, pods: readonly SchedulingPod[], templates: readonly NodePoolTemplate[]): string[] {
  const problems: string[] = [];
  const byKey = new Map(pods.map((p) => [p.key, p]));
  const seen = new Map<string, number>();
  for (const key of plan.unplaced) problems.push(`pod ${key} is not placed`);
  for (const [i, node] of plan.nodes.entries()) {
    const where = `node ${i} (${node.nodePool}/${node.instanceType})`;
    const template = templates.find((t) => t.name === node.nodePool);
    const type = template?.instanceTypes.find((t) => t.name === node.instanceType);
    if (!template || !type) {
      problems.push(`${where}: NodePool or instance type unknown`);
      continue;
    }
    const price = allowedPrice(type, template);
    if (price === undefined) problems.push(`${where}: no available offering the NodePool allows`);
    else if (node.price < price - 1e-9) problems.push(`${where}: priced ${node.price} below its cheapest allowed offering ${price}`);
    if (node.pods.length === 0) problems.push(`${where}: no pods`);
    const requests = [template.daemonOverhead];
    for (const key of node.pods) {
      seen.set(key, (seen.get(key) ?? 0) + 1);
      const pod = byKey.get(key);
      if (!pod) {
        problems.push(`${where}: unknown pod ${key}`);
        continue;
      }
      requests.push(pod.requests);
      const taint = firstUntolerated(template.taints, pod.tolerations);
      if (taint) problems.push(`${where}: pod ${key} does not tolerate ${taint.key}`);
      if (!pod.requirementAlternatives.some((alt) => template.requirements.compatible(alt, WELL_KNOWN_LABELS) === undefined && type.requirements.intersects(alt) === undefined)) {
        problems.push(`${where}: pod ${key} requirements incompatible`);
      }
    }
    const over = exceeding(add(...requests), type.allocatable);
    if (over.length > 0) problems.push(`${where}: pods + daemonset overhead exceed allocatable ${over.join(', ')}`);
  }
  for (const pod of pods) {
    const count = seen.get(pod.key) ?? 0;
    if (count === 0 && !plan.unplaced.includes(pod.key)) problems.push(`pod ${pod.key} is on no node`);
    if (count > 1) problems.push(`pod ${pod.key} is on ${count} nodes`);
  }
  return problems;
}
