/**
 * Compact scenario builder and Result view for the scheduling-fidelity suite (test/fidelity/cases.ts).
 *
 * A case describes NodePools, workloads, pre-existing nodes and events in a few lines; {@link buildScenario} turns
 * that into an ordinary multi-document scenario (the format of docs/contracts.md#scenario), and
 * {@link View} answers the questions the expectations ask of the Result (launched NodeClaims, where each pod ran,
 * which pods are still pending and why). Nothing here knows how Skiff schedules: it only writes manifests and reads
 * the Result contract.
 */
import { stringify } from 'yaml';
import type { SimulationResult } from '../../shared/sim/result.js';

// ---- vocabulary ---------------------------------------------------------------------------------------------------

export const ZONE = 'topology.kubernetes.io/zone';
export const HOST = 'kubernetes.io/hostname';
export const CAPACITY_TYPE = 'karpenter.sh/capacity-type';
export const INSTANCE_TYPE = 'node.kubernetes.io/instance-type';
export const FAMILY = 'karpenter.k8s.aws/instance-family';

/** The zones of us-west-2 in the simulation (REGION_ZONES): four of them. NodePools here default to a, b, c. */
export const A = 'us-west-2a';
export const B = 'us-west-2b';
export const C = 'us-west-2c';
export const D = 'us-west-2d';

export type Labels = Record<string, string>;
export interface Taint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}
export interface Req {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';
  values?: string[];
  minValues?: number;
}

/** A NodePool, described by what the cases vary. Requirements are ANDed in the order given. */
export interface PoolSpec {
  name: string;
  /** `karpenter.k8s.aws/instance-family In families`. */
  families?: string[];
  /** `node.kubernetes.io/instance-type In types`. */
  types?: string[];
  /** `topology.kubernetes.io/zone In zones`; @default [a, b, c] ([] = no zone requirement) */
  zones?: string[];
  /** `karpenter.sh/capacity-type In capacityTypes`; @default ['on-demand'] (prices derivable from the catalogue) */
  capacityTypes?: string[];
  /** Extra requirements (e.g. with `minValues`). */
  requirements?: Req[];
  labels?: Labels;
  taints?: Taint[];
  startupTaints?: Taint[];
  weight?: number;
  limits?: Record<string, string>;
  /** @default 'default' */
  nodeClass?: string;
}

/** An EC2NodeClass beyond the default one (AL2023, no blockDeviceMappings, no kubelet settings). */
export interface NodeClassSpec {
  name: string;
  kubelet?: Record<string, unknown>;
  blockDeviceMappings?: Record<string, unknown>[];
}

/** A workload: Deployment (default), StatefulSet, Job, bare Pod or DaemonSet, one container `app`. */
export interface WorkloadSpec {
  kind?: 'Deployment' | 'StatefulSet' | 'Job' | 'Pod' | 'DaemonSet';
  name: string;
  namespace?: string;
  /** Deployment/StatefulSet replicas, Job parallelism = completions. @default 1 */
  replicas?: number;
  /** Container requests (cpu, memory, anything else); `null` = no resources at all. @default {cpu: 100m, memory: 128Mi} */
  requests?: Record<string, string> | null;
  /** Container limits. */
  limits?: Record<string, string>;
  /** Host ports the container binds. */
  hostPorts?: number[];
  /** Pod labels. @default {app: name} */
  labels?: Labels;
  /** Workload selector. @default the pod labels */
  selector?: Labels;
  /** Merged into the pod spec (nodeSelector, affinity, tolerations, topologySpreadConstraints, initContainers, overhead, nodeName). */
  spec?: Record<string, unknown>;
  /** Job pods: the `skiff.dev/run-for` annotation. @default 2h (longer than the runs, so they stay) */
  runFor?: string;
}

/** A node registered before the start (docs/contracts.md#scenario-document, `spec.nodes`). */
export interface NodeSpec {
  name: string;
  instanceType: string;
  zone: string;
  /** @default 'on-demand' */
  capacityType?: string;
  nodePool?: string;
  labels?: Labels;
  taints?: Taint[];
}

/** Everything a case's scenario holds. */
export interface ScenarioSpec {
  pools: PoolSpec[];
  nodeClasses?: NodeClassSpec[];
  workloads: WorkloadSpec[];
  nodes?: NodeSpec[];
  /** Raw `spec.events` entries. */
  events?: Record<string, unknown>[];
  /** LimitRange `spec.limits` items in namespace default. */
  limitRanges?: Record<string, unknown>[];
  spotPrices?: { instanceType: string; zone: string; price: number }[];
  /** @default 30m */
  duration?: string;
}

// ---- small constructors for pod spec fragments ---------------------------------------------------------------------

/** A label selector on `{app: name}` (or the labels given). */
export const sel = (labels: Labels | string): { matchLabels: Labels } => ({ matchLabels: typeof labels === 'string' ? { app: labels } : labels });

/** A topology spread constraint; `extra` adds minDomains, nodeAffinityPolicy, nodeTaintsPolicy, matchLabelKeys. */
export function spread(topologyKey: string, maxSkew: number, selector: Labels | string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { maxSkew, topologyKey, whenUnsatisfiable: 'DoNotSchedule', labelSelector: sel(selector), ...extra };
}

/** A pod (anti-)affinity term on `topologyKey` selecting `selector`. */
export const term = (topologyKey: string, selector: Labels | string): Record<string, unknown> => ({ topologyKey, labelSelector: sel(selector) });

/** `affinity.podAffinity` / `podAntiAffinity` with required and/or preferred terms. */
export function podAffinity(kind: 'podAffinity' | 'podAntiAffinity', opts: { required?: Record<string, unknown>[]; preferred?: { weight: number; term: Record<string, unknown> }[] }): Record<string, unknown> {
  return {
    [kind]: {
      ...(opts.required ? { requiredDuringSchedulingIgnoredDuringExecution: opts.required } : {}),
      ...(opts.preferred ? { preferredDuringSchedulingIgnoredDuringExecution: opts.preferred.map((p) => ({ weight: p.weight, podAffinityTerm: p.term })) } : {}),
    },
  };
}

/** `affinity.nodeAffinity` with required terms (ORed) and/or weighted preferences. */
export function nodeAffinity(opts: { required?: Req[][]; preferred?: { weight: number; match: Req[] }[] }): Record<string, unknown> {
  return {
    nodeAffinity: {
      ...(opts.required ? { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: opts.required.map((t) => ({ matchExpressions: t })) } } : {}),
      ...(opts.preferred
        ? { preferredDuringSchedulingIgnoredDuringExecution: opts.preferred.map((p) => ({ weight: p.weight, preference: { matchExpressions: p.match } })) }
        : {}),
    },
  };
}

/** A requirement `key In values`. */
export const inReq = (key: string, ...values: string[]): Req => ({ key, operator: 'In', values });

// ---- scenario assembly -----------------------------------------------------------------------------------------

const NODE_CLASS_BASE = {
  amiSelectorTerms: [{ alias: 'al2023@latest' }],
  subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'fidelity' } }],
  securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'fidelity' } }],
  role: 'KarpenterNodeRole-fidelity',
};

function nodeClassDoc(spec: NodeClassSpec): unknown {
  return {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: spec.name },
    spec: { ...NODE_CLASS_BASE, ...(spec.kubelet ? { kubelet: spec.kubelet } : {}), ...(spec.blockDeviceMappings ? { blockDeviceMappings: spec.blockDeviceMappings } : {}) },
  };
}

function poolDoc(p: PoolSpec): unknown {
  const requirements: Req[] = [inReq(CAPACITY_TYPE, ...(p.capacityTypes ?? ['on-demand']))];
  if (p.families) requirements.push(inReq(FAMILY, ...p.families));
  if (p.types) requirements.push(inReq(INSTANCE_TYPE, ...p.types));
  const zones = p.zones ?? [A, B, C];
  if (zones.length > 0) requirements.push(inReq(ZONE, ...zones));
  requirements.push(...(p.requirements ?? []));
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: p.name },
    spec: {
      ...(p.weight !== undefined ? { weight: p.weight } : {}),
      ...(p.limits ? { limits: p.limits } : {}),
      // The cases check provisioning decisions: consolidation would legitimately rearrange their fleets afterwards.
      disruption: { consolidateAfter: 'Never' },
      template: {
        ...(p.labels ? { metadata: { labels: p.labels } } : {}),
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: p.nodeClass ?? 'default' },
          requirements,
          ...(p.taints ? { taints: p.taints } : {}),
          ...(p.startupTaints ? { startupTaints: p.startupTaints } : {}),
        },
      },
    },
  };
}

function podSpec(w: WorkloadSpec): Record<string, unknown> {
  const resources = w.requests === null ? undefined : { requests: w.requests ?? { cpu: '100m', memory: '128Mi' }, ...(w.limits ? { limits: w.limits } : {}) };
  const onlyLimits = w.requests === null && w.limits ? { limits: w.limits } : undefined;
  const container: Record<string, unknown> = {
    name: 'app',
    image: 'public.ecr.aws/docker/library/busybox:1.36',
    ...(resources ? { resources } : onlyLimits ? { resources: onlyLimits } : {}),
    ...(w.hostPorts ? { ports: w.hostPorts.map((p) => ({ containerPort: p, hostPort: p })) } : {}),
  };
  return { containers: [container], ...(w.kind === 'Job' ? { restartPolicy: 'Never' } : {}), ...(w.spec ?? {}) };
}

function workloadDoc(w: WorkloadSpec): unknown {
  const labels = w.labels ?? { app: w.name };
  const metadata = { name: w.name, namespace: w.namespace ?? 'default' };
  const template = { metadata: { labels, ...(w.kind === 'Job' ? { annotations: { 'skiff.dev/run-for': w.runFor ?? '2h' } } : {}) }, spec: podSpec(w) };
  switch (w.kind ?? 'Deployment') {
    case 'Pod':
      return { apiVersion: 'v1', kind: 'Pod', metadata: { ...metadata, labels }, spec: podSpec(w) };
    case 'Job':
      return { apiVersion: 'batch/v1', kind: 'Job', metadata, spec: { parallelism: w.replicas ?? 1, completions: w.replicas ?? 1, template } };
    case 'DaemonSet':
      return { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata, spec: { selector: { matchLabels: w.selector ?? labels }, template } };
    case 'StatefulSet':
      return { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata, spec: { replicas: w.replicas ?? 1, serviceName: w.name, selector: { matchLabels: w.selector ?? labels }, template } };
    default:
      return { apiVersion: 'apps/v1', kind: 'Deployment', metadata, spec: { replicas: w.replicas ?? 1, selector: { matchLabels: w.selector ?? labels }, template } };
  }
}

/** Virtual start of every case. */
export const START = '2026-03-02T08:00:00Z';

/** The whole scenario as one multi-document YAML string. */
export function buildScenario(s: ScenarioSpec, name: string): string {
  const docs: unknown[] = [
    nodeClassDoc({ name: 'default' }),
    ...(s.nodeClasses ?? []).map(nodeClassDoc),
    ...s.pools.map(poolDoc),
    ...(s.limitRanges ?? []).map((item, i) => ({ apiVersion: 'v1', kind: 'LimitRange', metadata: { name: `defaults-${i}`, namespace: 'default' }, spec: { limits: [item] } })),
    ...s.workloads.map(workloadDoc),
    {
      apiVersion: 'skiff.dev/v1alpha1',
      kind: 'Scenario',
      metadata: { name },
      spec: {
        start: START,
        duration: s.duration ?? '30m',
        region: 'us-west-2',
        ...(s.spotPrices ? { spotPrices: s.spotPrices } : {}),
        ...(s.nodes
          ? {
              nodes: s.nodes.map((n) => ({
                name: n.name,
                instanceType: n.instanceType,
                zone: n.zone,
                capacityType: n.capacityType ?? 'on-demand',
                ...(n.nodePool ? { nodePool: n.nodePool } : {}),
                ...(n.labels ? { labels: n.labels } : {}),
                ...(n.taints ? { taints: n.taints } : {}),
                createdAt: '-1h',
              })),
            }
          : {}),
        ...(s.events ? { events: s.events } : {}),
      },
    },
  ];
  return docs.map((d) => stringify(d)).join('---\n');
}

// ---- reading the Result ----------------------------------------------------------------------------------------

type Claim = SimulationResult['nodeClaims'][number];
type Pod = SimulationResult['pods'][number];
type Node = SimulationResult['nodes'][number];

/** Questions the expectations ask of a Result. Pods are the live ones (not deleted) unless said otherwise. */
export class View {
  private readonly nodesByName: Map<string, Node>;
  private readonly okClaims: Set<string>;

  constructor(readonly result: SimulationResult) {
    this.nodesByName = new Map(result.nodes.map((n) => [n.name, n]));
    this.okClaims = new Set(result.launchAttempts.filter((a) => a.result === 'ok').map((a) => a.nodeClaim));
  }

  /** NodeClaims Skiff launched during the run (an `ok` CreateFleet), optionally of one NodePool. Pre-existing nodes' claims are not included. */
  launched(nodePool?: string): Claim[] {
    return this.result.nodeClaims.filter((c) => this.okClaims.has(c.name) && (nodePool === undefined || c.nodePool === nodePool));
  }

  /** Instance types of the launched NodeClaims, sorted. */
  types(nodePool?: string): string[] {
    return this.launched(nodePool).map((c) => c.instanceType ?? '?').sort();
  }

  /** Zones of the launched NodeClaims, sorted (with repeats). */
  zones(nodePool?: string): string[] {
    return this.launched(nodePool).map((c) => c.zone ?? '?').sort();
  }

  /** Distinct zones of the launched NodeClaims, sorted. */
  distinctZones(nodePool?: string): string[] {
    return [...new Set(this.zones(nodePool))].sort();
  }

  /** Live pods of a workload: the bare pod `name`, or pods named `name-…` (Deployment, StatefulSet, Job, DaemonSet). */
  pods(name: string): Pod[] {
    return this.result.pods.filter((p) => p.deletedAt === null && (p.name === name || p.name.startsWith(`${name}-`)));
  }

  /** The node a pod runs on, if any. */
  nodeOf(pod: Pod): Node | undefined {
    return pod.node ? this.nodesByName.get(pod.node) : undefined;
  }

  /** Zones the pods of a workload run in (one entry per scheduled pod), sorted. */
  podZones(name: string): string[] {
    return this.pods(name)
      .map((p) => this.nodeOf(p)?.zone)
      .filter((z): z is string => z !== undefined)
      .sort();
  }

  /** How many pods of the workload run per zone. */
  perZone(name: string): Record<string, number> {
    const out: Record<string, number> = {};
    for (const z of this.podZones(name)) out[z] = (out[z] ?? 0) + 1;
    return out;
  }

  /** How many pods of the workloads run on each node (node name → count); only scheduled pods. */
  perNode(...names: string[]): Map<string, number> {
    const out = new Map<string, number>();
    for (const n of names) for (const p of this.pods(n)) if (p.node) out.set(p.node, (out.get(p.node) ?? 0) + 1);
    return out;
  }

  /** Distinct nodes the workloads' pods run on. */
  nodesOf(...names: string[]): string[] {
    return [...this.perNode(...names).keys()].sort();
  }

  /** Pods of the workload that are scheduled (bound to a node). */
  scheduled(name: string): Pod[] {
    return this.pods(name).filter((p) => p.node !== null);
  }

  /** `ns/name` of every pod still pending at the end. */
  pendingPods(): string[] {
    return this.result.unschedulable.map((u) => u.pod).sort();
  }

  /** Pending pods of one workload, with their reasons. */
  pending(name: string): SimulationResult['unschedulable'] {
    return this.result.unschedulable.filter((u) => {
      const pod = u.pod.split('/')[1] ?? '';
      return pod === name || pod.startsWith(`${name}-`);
    });
  }

  /** The instance family of a type name (`m5.large` → `m5`). */
  static family(type: string | null | undefined): string {
    return (type ?? '').split('.')[0] ?? '';
  }

  /** A compact account of the run, printed when a case fails. */
  summary(): string {
    const lines: string[] = [];
    for (const c of this.launched()) lines.push(`  claim ${c.name} pool=${c.nodePool} ${c.instanceType} ${c.capacityType} ${c.zone}`);
    for (const p of this.result.pods.filter((x) => x.deletedAt === null)) {
      const n = this.nodeOf(p);
      lines.push(`  pod ${p.name} -> ${n ? `${n.name} (${n.instanceType} ${n.zone} ${n.capacityType})` : 'pending'}`);
    }
    for (const u of this.result.unschedulable) lines.push(`  pending ${u.pod}: ${u.reason}`);
    lines.push(`  violations ${JSON.stringify(this.result.violations)}`);
    return lines.join('\n');
  }
}
