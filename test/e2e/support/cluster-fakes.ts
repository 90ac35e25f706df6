/**
 * The cluster side of the end-to-end run, around the fake API server (`test/support/fake-kube-apiserver.ts`): what
 * EKS and the control plane do that Skiff only observes.
 *
 * - **Kubelet:** when an instance boots (`local-aws.ts`), it joins the API server its NodeConfig names and registers
 *   its Node: `spec.providerID` `aws:///<zone>/<instance id>`, the user data's `--node-labels` and
 *   `registerWithTaints`, the kubelet's own labels (hostname, arch, os) and the cloud controller's (instance type,
 *   zone, region), allocatable from the instance, `Ready=True`.
 * - **kube-scheduler:** binds each pending pod (through the `binding` subresource) to a Ready, schedulable node whose
 *   taints it tolerates, whose labels its `nodeSelector` matches and whose allocatable has room; a pod that fits
 *   nowhere gets `PodScheduled=False` with reason `Unschedulable`, as the real scheduler reports it.
 * - **ReplicaSet controller:** keeps each Deployment's replica count of pods (an evicted or deleted pod is replaced).
 * - **Node lifecycle and pod GC:** the Node of a terminated instance is deleted, and so are the pods bound to a node
 *   that no longer exists.
 *
 * One reconcile loop every `periodMs` does the scheduler's, controllers' and GC's work.
 */
import { randomUUID } from 'node:crypto';
import { request as httpsRequest } from 'node:https';
import type { Taint, Toleration } from '../../../shared/core/api/kubernetes.js';
import { cpuMillicores, mebibytes } from '../../../shared/core/resources/quantity.js';
import { firstUntolerated } from '../../../shared/core/scheduling/taints.js';
import type { SimInstance } from '../../../shared/sim/simulated-ec2.js';
import type { FakeKubeApiServer, Json } from '../../support/fake-kube-apiserver.js';
import type { BootedInstance } from './local-aws.js';

/** A Deployment the ReplicaSet fake keeps at `replicas` pods. */
export interface FakeDeployment {
  readonly name: string;
  readonly namespace: string;
  replicas: number;
  /** Per pod, e.g. `{ cpu: '500m', memory: '512Mi' }`. */
  readonly requests: Readonly<Record<string, string>>;
  readonly nodeSelector?: Readonly<Record<string, string>>;
  readonly tolerations?: readonly Toleration[];
}

/** The running fakes. */
export interface ClusterFakes {
  readonly deployments: Map<string, FakeDeployment>;
  /** Instances whose kubelet registered, by Node name. */
  readonly registered: Map<string, BootedInstance>;
  /** Failures of the reconcile loop (a fake's own bug shows here instead of as a silent stall). */
  readonly errors: string[];
  /** The kubelet of a booted instance (wire it to `startLocalAws`'s `onBoot`). */
  boot(booted: BootedInstance): void;
  /** An instance is gone: its Node goes (wire it to `onTerminated`). */
  terminated(instance: SimInstance): void;
  /** Runs one reconcile now. */
  reconcile(): Promise<void>;
  stop(): void;
}

const meta = (o: Json) => o.metadata as { name: string; namespace?: string; uid?: string; labels?: Record<string, string>; ownerReferences?: { uid: string; name: string }[]; deletionTimestamp?: string };
const specOf = (o: Json) => (o.spec ?? {}) as Json;
const ready = (node: Json) => ((node.status as Json | undefined)?.conditions as Json[] | undefined)?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/**
 * Starts the reconcile loop.
 * @param options.token the bearer token the control-plane fakes present (any the API server accepts)
 * @param options.ca the API server's CA (PEM)
 */
export function startClusterFakes(api: FakeKubeApiServer, options: { readonly periodMs: number; readonly token: string; readonly ca: string; readonly region: string }): ClusterFakes {
  const deployments = new Map<string, FakeDeployment>();
  const registered = new Map<string, BootedInstance>();
  const gone = new Set<string>();
  const replicaSetUid = new Map<string, string>();

  const boot = (b: BootedInstance) => {
    if (b.apiServerEndpoint !== api.url) throw new Error(`kubelet of ${b.instance.instanceId}: NodeConfig names ${b.apiServerEndpoint}, not this cluster's ${api.url}`);
    if (b.instance.state === 'terminated') return;
    const alloc = b.instance.allocatable;
    const quantities = { cpu: `${alloc.cpu ?? 0}m`, memory: `${alloc.memory ?? 0}Mi`, pods: String(alloc.pods ?? 110), 'ephemeral-storage': `${alloc['ephemeral-storage'] ?? 17000}Mi` };
    registered.set(b.privateDnsName, b);
    api.put('nodes', {
      metadata: {
        name: b.privateDnsName,
        labels: {
          ...b.labels,
          'kubernetes.io/hostname': b.privateDnsName,
          'kubernetes.io/os': 'linux',
          'kubernetes.io/arch': b.instance.labels['kubernetes.io/arch'] ?? 'amd64',
          'node.kubernetes.io/instance-type': b.instance.instanceType,
          'topology.kubernetes.io/zone': b.instance.zone,
          'topology.kubernetes.io/region': options.region,
        },
      },
      spec: { providerID: `aws:///${b.instance.zone}/${b.instance.instanceId}`, ...(b.taints.length > 0 ? { taints: b.taints } : {}) },
      status: {
        capacity: quantities,
        allocatable: quantities,
        conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastTransitionTime: new Date().toISOString() }],
        nodeInfo: { kubeletVersion: 'v1.31.0-eks', osImage: 'Amazon Linux 2023', architecture: b.instance.labels['kubernetes.io/arch'] ?? 'amd64' },
      },
    });
  };

  const terminated = (instance: SimInstance) => {
    gone.add(instance.instanceId);
  };

  const bind = async (pod: Json, node: string) => {
    const m = meta(pod);
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'Binding', metadata: { name: m.name, namespace: m.namespace }, target: { apiVersion: 'v1', kind: 'Node', name: node } });
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpsRequest(
        `${api.url}/api/v1/namespaces/${m.namespace}/pods/${m.name}/binding`,
        { method: 'POST', ca: options.ca, headers: { authorization: `Bearer ${options.token}`, 'content-type': 'application/json' } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    if (status !== 201 && status !== 409 && status !== 404) throw new Error(`binding ${m.name} to ${node}: HTTP ${status}`);
  };

  const podRequests = (pod: Json) => {
    let cpu = 0;
    let memory = 0;
    for (const c of (specOf(pod).containers as Json[] | undefined) ?? []) {
      const r = ((c.resources as Json | undefined)?.requests ?? {}) as Record<string, string>;
      cpu += r.cpu !== undefined ? cpuMillicores(r.cpu) : 0;
      memory += r.memory !== undefined ? mebibytes(r.memory) : 0;
    }
    return { cpu, memory };
  };

  async function reconcile(): Promise<void> {
    // node lifecycle: the Node of a terminated instance goes
    for (const node of [...api.objects.nodes!.values()]) {
      const id = String(specOf(node).providerID ?? '').split('/').pop() ?? '';
      if (gone.has(id)) api.remove('nodes', meta(node).name);
    }
    // pod GC: pods bound to a node that no longer exists
    for (const pod of [...api.objects.pods!.values()]) {
      const nodeName = specOf(pod).nodeName as string | undefined;
      if (nodeName && !api.objects.nodes!.has(nodeName)) api.remove('pods', `${meta(pod).namespace}/${meta(pod).name}`);
    }
    // ReplicaSet controller
    for (const d of deployments.values()) {
      const rsName = `${d.name}-7d9f8b6c5`;
      const rsUid = replicaSetUid.get(d.name) ?? randomUUID();
      replicaSetUid.set(d.name, rsUid);
      const owned = [...api.objects.pods!.values()].filter((p) => meta(p).ownerReferences?.some((o) => o.uid === rsUid));
      for (let i = owned.length; i < d.replicas; i++) {
        const name = `${rsName}-${randomUUID().slice(0, 5)}`;
        api.put('pods', {
          metadata: { name, namespace: d.namespace, uid: randomUUID(), labels: { app: d.name }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rsName, uid: rsUid, controller: true, blockOwnerDeletion: true }] },
          spec: {
            containers: [{ name: 'app', image: 'public.ecr.aws/docker/library/nginx:1.27', resources: { requests: d.requests } }],
            schedulerName: 'default-scheduler',
            terminationGracePeriodSeconds: 1,
            ...(d.nodeSelector ? { nodeSelector: d.nodeSelector } : {}),
            ...(d.tolerations ? { tolerations: d.tolerations } : {}),
          },
          status: { phase: 'Pending' },
        });
      }
      // scale-in: the newest pods go first (the ReplicaSet controller's ranking prefers unscheduled and newer pods)
      const extra = owned.length - d.replicas;
      if (extra > 0) {
        const ranked = [...owned].sort((a, b) => Number(!!specOf(a).nodeName) - Number(!!specOf(b).nodeName) || Number((b.metadata as Json).resourceVersion) - Number((a.metadata as Json).resourceVersion));
        for (const p of ranked.slice(0, extra)) api.remove('pods', `${meta(p).namespace}/${meta(p).name}`);
      }
    }
    // kube-scheduler
    const nodes = [...api.objects.nodes!.values()].filter((n) => ready(n) && specOf(n).unschedulable !== true);
    const used = new Map<string, { cpu: number; memory: number }>();
    for (const pod of api.objects.pods!.values()) {
      const nodeName = specOf(pod).nodeName as string | undefined;
      if (!nodeName) continue;
      const u = used.get(nodeName) ?? { cpu: 0, memory: 0 };
      const r = podRequests(pod);
      used.set(nodeName, { cpu: u.cpu + r.cpu, memory: u.memory + r.memory });
    }
    for (const pod of [...api.objects.pods!.values()]) {
      if (specOf(pod).nodeName) continue;
      const r = podRequests(pod);
      const selector = (specOf(pod).nodeSelector ?? {}) as Record<string, string>;
      const tolerations = (specOf(pod).tolerations ?? []) as Toleration[];
      const fit = nodes.find((n) => {
        const alloc = ((n.status as Json).allocatable ?? {}) as Record<string, string>;
        const u = used.get(meta(n).name) ?? { cpu: 0, memory: 0 };
        return (
          Object.entries(selector).every(([k, v]) => meta(n).labels?.[k] === v) &&
          firstUntolerated(((specOf(n).taints ?? []) as Taint[]).filter((t) => t.effect !== 'PreferNoSchedule'), tolerations) === undefined &&
          u.cpu + r.cpu <= cpuMillicores(alloc.cpu ?? '0') &&
          u.memory + r.memory <= mebibytes(alloc.memory ?? '0')
        );
      });
      if (fit) {
        const u = used.get(meta(fit).name) ?? { cpu: 0, memory: 0 };
        used.set(meta(fit).name, { cpu: u.cpu + r.cpu, memory: u.memory + r.memory });
        await bind(pod, meta(fit).name);
        continue;
      }
      const conditions = (((pod.status as Json | undefined)?.conditions ?? []) as Json[]);
      if (!conditions.some((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable')) {
        api.put('pods', { ...pod, status: { ...(pod.status as Json), phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/0 nodes are available', lastTransitionTime: new Date().toISOString() }] } });
      }
    }
  }

  let running = Promise.resolve();
  const errors: string[] = [];
  const timer = setInterval(() => {
    running = running.then(reconcile).catch((e: unknown) => void errors.push(e instanceof Error ? e.message : String(e)));
  }, options.periodMs);
  return {
    deployments,
    registered,
    errors,
    boot,
    terminated,
    reconcile: () => (running = running.then(reconcile)),
    stop: () => clearInterval(timer),
  };
}
