/**
 * The independent observer: watches the simulated cluster and simulated EC2 and counts contract violations
 * without using the code under test (its own label, taint and resource checks, written from the Kubernetes
 * rules, not from Skiff's scheduling code).
 *
 * Counted now: `placement` (a pod bound to a node that does not satisfy its nodeSelector / required node affinity,
 * does not tolerate a NoSchedule/NoExecute taint, or lacks room), `limits` (a NodePool's running instances
 * exceeding its cpu/memory/nodes limits at a launch), `duplicateLaunches` (a second instance for one NodeClaim,
 * or an instance launched for a pod that another live launch already covered), `leakedInstances` (running at the
 * end with no live NodeClaim record). Budget, PDB and do-not-disrupt counters stay 0 until disruption exists.
 */
import type { InstanceTypeInfo } from '../core/instancetypes/instance-type.js';
import { parseQuantity } from '../core/resources/quantity.js';
import type { NodeClaim } from '../core/api/nodeclaim.js';
import type { SimNode, SimPod } from './simulated-cluster.js';
import type { SimInstance } from './simulated-ec2.js';

/** Violation counters, as the Result contract names them. */
export interface ViolationCounts {
  budget: number;
  pdb: number;
  doNotDisrupt: number;
  limits: number;
  duplicateLaunches: number;
  leakedInstances: number;
  placement: number;
}

/** A human-readable record of each violation, for debugging and tests. */
export interface ViolationRecord {
  readonly kind: keyof ViolationCounts;
  /** Epoch ms. */
  readonly at: number;
  readonly message: string;
}

interface NodeSelectorRequirementLike {
  key: string;
  operator: string;
  values?: readonly string[];
}

/** Counts violations as the simulation runs. */
export class Observer {
  readonly counts: ViolationCounts = { budget: 0, pdb: 0, doNotDisrupt: 0, limits: 0, duplicateLaunches: 0, leakedInstances: 0, placement: 0 };
  readonly records: ViolationRecord[] = [];
  private readonly instancesByClaim = new Map<string, number>();

  constructor(
    private readonly catalog: ReadonlyMap<string, InstanceTypeInfo>,
    private readonly now: () => number,
  ) {}

  /** A pod was bound to a node: check the placement. */
  onBind(pod: SimPod, node: SimNode, livePods: () => Iterable<SimPod>): void {
    const problem = this.placementProblem(pod, node, livePods);
    if (problem) this.violate('placement', `${pod.namespace}/${pod.name} on ${node.name}: ${problem}`);
  }

  /** An instance was launched: check duplicates and the NodePool's limits. */
  onLaunch(instance: SimInstance, running: readonly SimInstance[], limitsOf: (nodePool: string) => Readonly<Record<string, string | number>> | undefined): void {
    const claim = instance.tags['karpenter.sh/nodeclaim'];
    if (claim) {
      const n = (this.instancesByClaim.get(claim) ?? 0) + 1;
      this.instancesByClaim.set(claim, n);
      if (n > 1) this.violate('duplicateLaunches', `second instance ${instance.instanceId} for NodeClaim ${claim}`);
    }
    const nodePool = instance.tags['karpenter.sh/nodepool'];
    const limits = nodePool ? limitsOf(nodePool) : undefined;
    if (!nodePool || !limits) return;
    const mine = running.filter((i) => i.tags['karpenter.sh/nodepool'] === nodePool && i.state !== 'terminated');
    const usage: Record<string, number> = { nodes: mine.length, cpu: 0, memory: 0 };
    for (const i of mine) {
      const info = this.catalog.get(i.instanceType);
      usage.cpu! += info?.vcpu ?? 0;
      usage.memory! += (info?.memoryMiB ?? 0) * 2 ** 20;
      for (const [k, v] of Object.entries(info?.extendedResources ?? {})) usage[k] = (usage[k] ?? 0) + v;
    }
    for (const [k, limit] of Object.entries(limits)) {
      const value = parseQuantity(limit);
      if ((usage[k] ?? 0) > value + 1e-9) this.violate('limits', `NodePool ${nodePool} uses ${k}=${usage[k]} over its limit ${limit} after launching ${instance.instanceId}`);
    }
  }

  /** A pod was nominated to two live launches: the second launch duplicated the first. */
  onDuplicateNomination(pod: string, claims: readonly string[]): void {
    this.violate('duplicateLaunches', `pod ${pod} drove launches of ${claims.join(' and ')}`);
  }

  /**
   * At the end: instances still running with no live NodeClaim, and pods that drove a second launch while the
   * first launch for them was still coming up (its node not yet Ready, and the NodeClaim not failed or deleted).
   * @param readyAt instance id → when its node first turned Ready (epoch ms), from the cluster's own record
   */
  finish(instances: readonly SimInstance[], claims: readonly NodeClaim[], readyAt: ReadonlyMap<string, number>): void {
    const live = new Set(claims.filter((c) => c.state !== 'Deleted' && c.state !== 'Failed').map((c) => c.instanceId));
    for (const i of instances) {
      if (i.state === 'terminated' || !i.tags['karpenter.sh/nodeclaim']) continue;
      if (!live.has(i.instanceId)) this.violate('leakedInstances', `instance ${i.instanceId} (${i.instanceType}) is running with no NodeClaim`);
    }
    const launched = claims.filter((c) => c.instanceId && c.launchedAt).sort((a, b) => Date.parse(a.launchedAt!) - Date.parse(b.launchedAt!));
    const byPod = new Map<string, NodeClaim[]>();
    for (const c of launched) for (const p of c.nominatedPods) byPod.set(p, [...(byPod.get(p) ?? []), c]);
    for (const [pod, list] of byPod) {
      for (let i = 1; i < list.length; i++) {
        const later = list[i]!;
        const at = Date.parse(later.launchedAt!);
        const stillComing = list.slice(0, i).find((earlier) => {
          const ready = readyAt.get(earlier.instanceId!) ?? Number.POSITIVE_INFINITY;
          const gone = earlier.deletedAt ? Date.parse(earlier.deletedAt) : Number.POSITIVE_INFINITY;
          return at < ready && at < gone;
        });
        if (stillComing) this.onDuplicateNomination(pod, [stillComing.name, later.name]);
      }
    }
  }

  private violate(kind: keyof ViolationCounts, message: string): void {
    this.counts[kind]++;
    this.records.push({ kind, at: this.now(), message });
  }

  private placementProblem(pod: SimPod, node: SimNode, livePods: () => Iterable<SimPod>): string | undefined {
    for (const [k, v] of Object.entries(pod.spec.nodeSelector ?? {})) {
      if (node.labels[k] !== v) return `nodeSelector ${k}=${v} not met (node has ${node.labels[k] ?? 'no such label'})`;
    }
    const terms = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
    if (terms && terms.length > 0 && !terms.some((t) => (t.matchExpressions ?? []).every((e) => matches(e, node.labels)))) return 'required node affinity not met';
    for (const taint of node.taints) {
      if (taint.effect === 'PreferNoSchedule') continue;
      const ok = (pod.spec.tolerations ?? []).some(
        (t) =>
          (t.effect === undefined || t.effect === taint.effect) &&
          (t.operator === 'Exists' ? t.key === undefined || t.key === '' || t.key === taint.key : t.key === taint.key && (t.value ?? '') === (taint.value ?? '')),
      );
      if (!ok) return `taint ${taint.key}:${taint.effect} not tolerated`;
    }
    const used: Record<string, number> = {};
    for (const p of livePods()) {
      if (p.nodeName !== node.name) continue;
      for (const [k, v] of Object.entries(simpleRequests(p))) used[k] = (used[k] ?? 0) + v;
    }
    for (const [k, v] of Object.entries(used)) {
      const cap = allocatableBase(k, node.allocatable[k]);
      if (v > cap * (1 + 1e-9) + 1e-6) return `${k} overcommitted: pods request ${v} of ${cap}`;
    }
    return undefined;
  }
}

function matches(e: NodeSelectorRequirementLike, labels: Readonly<Record<string, string>>): boolean {
  const v = labels[e.key];
  const values = e.values ?? [];
  switch (e.operator) {
    case 'In':
      return v !== undefined && values.includes(v);
    case 'NotIn':
      return v === undefined || !values.includes(v);
    case 'Exists':
      return v !== undefined;
    case 'DoesNotExist':
      return v === undefined;
    case 'Gt':
      return v !== undefined && Number(v) > Number(values[0]);
    case 'Lt':
      return v !== undefined && Number(v) < Number(values[0]);
    default:
      return false;
  }
}

/** Requests in base units (cores, bytes, counts): max(Σ containers, max init) + overhead, plus one pod. */
function simpleRequests(p: SimPod): Record<string, number> {
  const sum: Record<string, number> = { pods: 1 };
  const of = (c: { resources?: { requests?: Readonly<Record<string, string | number>>; limits?: Readonly<Record<string, string | number>> } }) => {
    const out: Record<string, number> = {};
    for (const [k, v] of Object.entries({ ...(c.resources?.limits ?? {}), ...(c.resources?.requests ?? {}) })) out[k] = parseQuantity(v);
    return out;
  };
  const containers: Record<string, number> = {};
  for (const c of p.spec.containers) for (const [k, v] of Object.entries(of(c))) containers[k] = (containers[k] ?? 0) + v;
  const init: Record<string, number> = {};
  let sidecars: Record<string, number> = {};
  for (const c of p.spec.initContainers ?? []) {
    const r = of(c);
    if (c.restartPolicy === 'Always') {
      const next = { ...sidecars };
      for (const [k, v] of Object.entries(r)) next[k] = (next[k] ?? 0) + v;
      sidecars = next;
      for (const [k, v] of Object.entries(sidecars)) init[k] = Math.max(init[k] ?? 0, v);
    } else {
      for (const [k, v] of Object.entries(r)) init[k] = Math.max(init[k] ?? 0, v + (sidecars[k] ?? 0));
    }
  }
  for (const [k, v] of Object.entries(sidecars)) containers[k] = (containers[k] ?? 0) + v;
  for (const k of new Set([...Object.keys(containers), ...Object.keys(init)])) sum[k] = Math.max(containers[k] ?? 0, init[k] ?? 0);
  for (const [k, v] of Object.entries(p.spec.overhead ?? {})) sum[k] = (sum[k] ?? 0) + parseQuantity(v);
  return sum;
}

/** Node allocatable is kept in Skiff's canonical units (millicores, MiB); convert back to base units. */
function allocatableBase(resource: string, amount: number | undefined): number {
  if (amount === undefined) return 0;
  if (resource === 'cpu') return amount / 1000;
  if (resource === 'memory' || resource === 'ephemeral-storage' || resource.startsWith('hugepages-')) return amount * 2 ** 20;
  return amount;
}
