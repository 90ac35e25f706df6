/**
 * The scheduler's view of the world a disruption simulates against (core `pkg/controllers/disruption/helpers.go
 * SimulateScheduling`): NodePools with their instance types and what is left of their limits, and the capacity that
 * is not going away.
 */
import { isLive, type NodeClaim } from '../../core/api/nodeclaim.js';
import type { InstanceType } from '../../core/instancetypes/offering.js';
import { buildNodePoolTemplate } from '../../core/provisioning/nodepool-template.js';
import { toSchedulingPod, type SchedulingPod } from '../../core/provisioning/pod.js';
import type { NodePoolTemplate } from '../../core/provisioning/types.js';
import { existingCapacity, isInFlight, usageOf } from '../launch.js';
import { podsOfClaim, type World } from './world.js';

/**
 * The solver's view: NodePools with their instance types and limits, and the capacity that is not going away. Other
 * nodes already being deleted (tainted `karpenter.sh/disrupted`) come back `markedForDeletion` (`existingCapacity`):
 * they take no pod, and the pods still on them count for topology where they are.
 * @param leaving the NodeClaims whose nodes are left out entirely (their pods are the ones the caller moves, so they
 *   must not count in their old domains too) and whose usage no longer counts against limits
 */
export function solverView(world: World, leaving: readonly NodeClaim[]): { templates: NodePoolTemplate[]; existing: ReturnType<typeof existingCapacity> } {
  const live = world.claims.filter(isLive);
  const staying = live.filter((c) => !leaving.some((l) => l.name === c.name));
  const typesByClass = new Map<string, InstanceType[]>([...world.types].map(([k, v]) => [k, [...v]]));
  const templates = [...world.pools.values()]
    .filter((np) => world.classes.has(np.spec.template.spec.nodeClassRef.name))
    .map((np) => buildNodePoolTemplate(np, world.types.get(np.spec.template.spec.nodeClassRef.name) ?? [], world.daemonSets, usageOf(np.metadata.name, staying, typesByClass)));
  const inFlight = live.filter((c) => isInFlight(c, world.nodes, world.now));
  const podsByKey = new Map(world.pods.map((p) => [`${p.namespace}/${p.name}`, p]));
  const daemonByPool = new Map(templates.map((t) => [t.name, t] as const));
  const leavingNodes = new Set(leaving.map((c) => c.providerId));
  const nodes = world.nodes.filter((n) => !leavingNodes.has(n.providerId));
  return { templates, existing: existingCapacity(nodes, world.pods, live, inFlight, podsByKey, typesByClass, daemonByPool, { now: world.now }) };
}

/** The NodeClaim's node's reschedulable pods as the scheduler sees them. */
export function schedulingPods(world: World, claim: NodeClaim): SchedulingPod[] {
  return podsOfClaim(world, claim).map((p) => toSchedulingPod(p, p.createdAt));
}
