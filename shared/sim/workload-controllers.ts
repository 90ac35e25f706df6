/**
 * The workload controllers of the simulated cluster (`simulated-cluster.ts`): the ReplicaSet controller of each
 * Deployment, and the StatefulSet, Job and DaemonSet controllers. Each reconciles its pods against its object's spec
 * through {@link PodApi}, the part of the simulated API server they use: the objects, the live pods, creating a pod
 * (with `generateName`) and removing a pod it scaled down.
 */
import type { Toleration } from '../core/api/kubernetes.js';
import type { PodTemplateSpec } from '../core/api/pod.js';
import { runForSeconds, type DaemonSet, type Deployment, type Job, type StatefulSet } from '../core/api/workloads.js';
import { fnv1a } from '../core/hash.js';
import type { PodSpecLike } from '../core/provisioning/pod.js';
import type { ClusterPod } from '../ports/cluster.js';
import { nodeAffinityProblem, untoleratedTaint, type PlacementNode } from './placement-check.js';

/**
 * What the workload controllers read and write in the simulated API server. Keys are `namespace/name`.
 * @typeParam P the server's pod objects (the controllers read only the `ClusterPod` fields)
 */
export interface PodApi<P extends ClusterPod> {
  readonly deployments: ReadonlyMap<string, Deployment>;
  readonly statefulSets: ReadonlyMap<string, StatefulSet>;
  /** Each Job with its pods succeeded and created so far (the Job controller counts `created`). */
  readonly jobs: ReadonlyMap<string, { job: Job; succeeded: number; created: number }>;
  readonly daemonSets: ReadonlyMap<string, DaemonSet>;
  /** Live pods. */
  readonly pods: ReadonlyMap<string, P>;
  /**
   * Creates a pod from `template` (LimitRange admission applied), bound to `nodeName` when given.
   * @param owner `Kind/name` of the controller's object, e.g. `StatefulSet/db`
   * @param runFor seconds the pod runs once bound before it completes, or null to run until deleted
   */
  createPod(namespace: string, name: string, template: PodTemplateSpec, owner: string | null, runFor: number | null, nodeName?: string): void;
  /** `prefix` plus a random suffix no live pod of `namespace` has. */
  generateName(namespace: string, prefix: string): string;
  /** Removes a pod the controller scaled down (frees its node; its controller is not reconciled again). */
  dropPod(pod: P): void;
}

/** The Deployment (ReplicaSet), StatefulSet, Job and DaemonSet controllers over one {@link PodApi}. */
export class WorkloadControllers<P extends ClusterPod> {
  constructor(private readonly api: PodApi<P>) {}

  /** Reconciles the controller of `pod` after the pod was deleted or completed (its replacement, if any). */
  reconcileOwner(pod: P): void {
    if (!pod.owner) return;
    const [kind, name] = pod.owner.split('/') as [string, string];
    if (kind === 'ReplicaSet') {
      const deployment = [...this.api.deployments.entries()].find(([k]) => k.startsWith(`${pod.namespace}/`) && name.startsWith(`${k.split('/')[1]}-`));
      if (deployment) this.reconcileDeployment(deployment[0]);
    } else if (kind === 'StatefulSet') this.reconcileStatefulSet(`${pod.namespace}/${name}`);
    else if (kind === 'Job') this.reconcileJob(`${pod.namespace}/${name}`);
  }

  private ownedPods(owner: string, namespace: string): P[] {
    return [...this.api.pods.values()].filter((p) => p.namespace === namespace && p.owner === owner);
  }

  /**
   * The Deployment's ReplicaSet controller: creates pods up to `replicas` under the ReplicaSet of the current template
   * (`<name>-<template hash>`), and scales down newest first (pending before running).
   */
  reconcileDeployment(key: string): void {
    const d = this.api.deployments.get(key);
    if (!d) return;
    const namespace = d.metadata.namespace ?? 'default';
    const hash = templateHash(d.spec.template);
    const owner = `ReplicaSet/${d.metadata.name}-${hash}`;
    const pods = this.ownedPods(owner, namespace);
    for (let i = pods.length; i < d.spec.replicas; i++) this.api.createPod(namespace, this.api.generateName(namespace, `${d.metadata.name}-${hash}-`), d.spec.template, owner, null);
    // Scale down removes the newest pods first (pending ones before running ones).
    const extra = pods.length - d.spec.replicas;
    if (extra > 0) {
      const victims = [...pods].sort((a, b) => Number(!!a.nodeName) - Number(!!b.nodeName) || b.createdAt - a.createdAt).slice(0, extra);
      for (const p of victims) this.api.dropPod(p);
    }
  }

  /** The StatefulSet controller: pods `<name>-0` … `<name>-(replicas−1)`, the higher ordinals removed on scale-down. */
  reconcileStatefulSet(key: string): void {
    const s = this.api.statefulSets.get(key);
    if (!s) return;
    const namespace = s.metadata.namespace ?? 'default';
    const owner = `StatefulSet/${s.metadata.name}`;
    for (let i = 0; i < s.spec.replicas; i++) {
      const name = `${s.metadata.name}-${i}`;
      if (!this.api.pods.has(`${namespace}/${name}`)) this.api.createPod(namespace, name, s.spec.template, owner, null);
    }
    for (const p of this.ownedPods(owner, namespace)) {
      const ordinal = Number(p.name.slice(s.metadata.name.length + 1));
      if (ordinal >= s.spec.replicas) this.api.dropPod(p);
    }
  }

  /** The Job controller: up to `parallelism` active pods until `completions` (default `parallelism`) succeeded. */
  reconcileJob(key: string): void {
    const state = this.api.jobs.get(key);
    if (!state) return;
    const { job } = state;
    const namespace = job.metadata.namespace ?? 'default';
    const owner = `Job/${job.metadata.name}`;
    const active = this.ownedPods(owner, namespace).length;
    const completions = job.spec.completions ?? job.spec.parallelism;
    const wanted = Math.max(0, Math.min(job.spec.parallelism, completions - state.succeeded) - active);
    const runFor = runForSeconds(job.spec.template);
    for (let i = 0; i < wanted && state.created < completions + 1000; i++) {
      state.created++;
      this.api.createPod(namespace, this.api.generateName(namespace, `${job.metadata.name}-`), job.spec.template, owner, runFor);
    }
  }

  /**
   * The DaemonSet controller: a pod of each DaemonSet whose pods tolerate the node's taints (with the tolerations
   * the controller adds, {@link DAEMON_POD_TOLERATIONS}) and whose node selector and required node affinity match
   * it. A node registering with `karpenter.sh/unregistered` gets its DaemonSet pods once the lifecycle controller
   * removes the taint, and those selecting a label it adds (`karpenter.sh/initialized`) once it does (patchNode runs
   * this again).
   */
  placeDaemonPods(node: PlacementNode): void {
    for (const ds of this.api.daemonSets.values()) {
      const owner = `DaemonSet/${ds.metadata.name}`;
      const namespace = ds.metadata.namespace ?? 'default';
      if ([...this.api.pods.values()].some((p) => p.owner === owner && p.nodeName === node.name)) continue;
      const template = withDaemonTolerations(ds.spec.template);
      const spec = template.spec as PodSpecLike;
      if (untoleratedTaint(spec.tolerations ?? [], node.taints)) continue;
      if (nodeAffinityProblem({ namespace, name: ds.metadata.name, labels: template.metadata.labels ?? {}, spec }, node)) continue;
      this.api.createPod(namespace, this.api.generateName(namespace, `${ds.metadata.name}-`), template, owner, null, node.name);
    }
  }
}

/**
 * Tolerations the DaemonSet controller adds to every DaemonSet pod (Kubernetes `AddOrUpdateDaemonPodTolerations`):
 * not-ready and unreachable (NoExecute), disk/memory/pid pressure and unschedulable (NoSchedule).
 */
export const DAEMON_POD_TOLERATIONS: readonly (Toleration & { readonly operator: 'Exists' })[] = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
];

/** A DaemonSet's pod template with {@link DAEMON_POD_TOLERATIONS} added (cached per template). */
function withDaemonTolerations(template: PodTemplateSpec): PodTemplateSpec {
  const cached = daemonTemplates.get(template);
  if (cached) return cached;
  const own = template.spec.tolerations ?? [];
  const added = DAEMON_POD_TOLERATIONS.filter((d) => !own.some((t) => t.key === d.key && t.effect === d.effect)).map((d) => ({ ...d }));
  const out: PodTemplateSpec = { ...template, spec: { ...template.spec, tolerations: [...own, ...added] } };
  daemonTemplates.set(template, out);
  return out;
}

const daemonTemplates = new WeakMap<PodTemplateSpec, PodTemplateSpec>();

/**
 * The owner a workload's controller gives its pods (`ResultPod.owner`): `ReplicaSet/<name>-<template hash>` for a
 * Deployment (the ReplicaSet of its current template), `StatefulSet/<name>`, `Job/<name>`. A snapshot's pods adopted
 * with this owner are counted by the controller as its own (Kubernetes' controllers adopt the pods their selector
 * matches and that have no other controller).
 * @param kind the workload's kind
 * @param workload the workload object
 */
export function podOwnerOf(kind: 'Deployment' | 'StatefulSet' | 'Job', workload: Deployment | StatefulSet | Job): string {
  return kind === 'Deployment' ? `ReplicaSet/${workload.metadata.name}-${templateHash(workload.spec.template)}` : `${kind}/${workload.metadata.name}`;
}

/** A ReplicaSet-style hash of a pod template (10 characters). */
function templateHash(template: unknown): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  let h = fnv1a(JSON.stringify(template));
  let out = '';
  for (let i = 0; i < 10; i++) {
    out += alphabet[h % alphabet.length];
    h = fnv1a(out + String(h));
  }
  return out;
}
