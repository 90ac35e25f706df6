/**
 * Builds `examples/snapshot/`: what `kubectl get nodes,pods,deployments,replicasets,statefulsets,daemonsets,jobs,pdb,limitranges -A -o yaml`
 * (`cluster.yaml`) and `kubectl get nodepools,ec2nodeclasses -o yaml` (`karpenter.yaml`) would write for a fragmented
 * EKS cluster: Karpenter NodePools `general` (on-demand and spot) and `memory`, plus a managed node group `system`
 * (nodes Karpenter does not own), at about 40 % CPU requested.
 *
 * Usage: `npx tsx scripts/build-snapshot-example.ts` (200 nodes into examples/snapshot/). Tests call
 * {@link buildSnapshot} with fewer nodes.
 *
 * Every object carries the server fields a real API server adds (uid, resourceVersion, generation,
 * creationTimestamp, managedFields, ownerReferences, status with conditions, addresses and nodeInfo), so the example
 * is read exactly as a user's own snapshot would be. Karpenter's node labels follow core `pkg/apis/v1/labels.go` and
 * the AWS provider's `pkg/apis/v1/labels.go`; a managed node group's follow EKS (`eks.amazonaws.com/nodegroup`,
 * `eks.amazonaws.com/capacityType`). Node allocatable comes from Skiff's catalogue (AL2023 defaults).
 *
 * Deterministic: a seeded generator and a fixed snapshot time, so running the script twice writes the same bytes.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { stringify } from 'yaml';
import { instanceTypeByName } from '../shared/core/instancetypes/catalog.js';
import { computeAllocatable, computeCapacity } from '../shared/core/instancetypes/allocatable.js';
import type { InstanceTypeInfo } from '../shared/core/instancetypes/instance-type.js';

/** The repository root. */
export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Where the example is written, relative to {@link REPO_ROOT}. */
export const OUTPUT_DIR = 'examples/snapshot';
/** When the snapshot was "taken" (UTC): the newest creationTimestamp in it is just before. A Monday, 08:00. */
export const SNAPSHOT_TIME = '2026-03-02T08:00:00Z';
/** The region of the generated cluster. */
export const REGION = 'us-west-2';

/** Options of {@link buildSnapshot}. */
export interface SnapshotOptions {
  /** Nodes in total (about 15 % of them in the managed node group, at least 2). @default 200 */
  readonly nodes?: number;
  /** PRNG seed. @default 1 */
  readonly seed?: number;
}

/** The files of a snapshot: file name → YAML text. */
export type SnapshotFiles = Readonly<Record<string, string>>;

/** mulberry32: a small deterministic PRNG, floats in [0, 1). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ZONES = ['us-west-2a', 'us-west-2b', 'us-west-2c'];
const ZONE_IDS: Record<string, string> = { 'us-west-2a': 'usw2-az1', 'us-west-2b': 'usw2-az2', 'us-west-2c': 'usw2-az3' };

/** A workload of the generated cluster (requests in millicores and MiB). */
interface WorkloadPlan {
  readonly kind: 'Deployment' | 'StatefulSet';
  readonly namespace: string;
  readonly name: string;
  readonly replicas: number;
  readonly cpu: number;
  readonly memoryMiB: number;
  /** Node label the pods select, if any. */
  readonly nodeSelector?: Record<string, string>;
  readonly tolerations?: Record<string, string>[];
  readonly pdb?: { readonly maxUnavailable: number };
}

/** A node being filled. */
interface NodePlan {
  readonly name: string;
  readonly type: InstanceTypeInfo;
  readonly zone: string;
  readonly capacityType: 'on-demand' | 'spot';
  readonly pool: string | null;
  readonly createdMs: number;
  readonly ip: string;
  readonly instanceId: string;
  readonly claim: string | null;
  readonly allocCpu: number;
  readonly allocMiB: number;
  /** The fill this node is aimed at (fragmentation: some nodes nearly empty, some half full). */
  readonly targetFill: number;
  usedCpu: number;
  usedMiB: number;
  pods: number;
  readonly maxPods: number;
}

/**
 * Generates the snapshot.
 * @returns `cluster.yaml` and `karpenter.yaml` as kubectl writes them (`kind: List`)
 */
export function buildSnapshot(options: SnapshotOptions = {}): SnapshotFiles {
  const total = options.nodes ?? 200;
  const rand = prng(options.seed ?? 1);
  const snapshotMs = Date.parse(SNAPSHOT_TIME);
  let rv = 184_000_000;
  let uidSeq = 0;
  const hex = (n: number) => Array.from({ length: n }, () => Math.floor(rand() * 16).toString(16)).join('');
  const uid = () => {
    uidSeq++;
    return `${hex(8)}-${hex(4)}-4${hex(3)}-${'89ab'[Math.floor(rand() * 4)]}${hex(3)}-${hex(12)}`;
  };
  const suffix = (n: number) => Array.from({ length: n }, () => 'bcdfghjklmnpqrstvwxz2456789'[Math.floor(rand() * 27)]).join('');
  const iso = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const nextRv = () => String((rv += 1 + Math.floor(rand() * 40)));

  const managedFields = (manager: string, operation: 'Apply' | 'Update', at: number, fields: Record<string, unknown>, subresource?: string) => ({
    apiVersion: 'v1',
    fieldsType: 'FieldsV1',
    fieldsV1: fields,
    manager,
    operation,
    ...(subresource ? { subresource } : {}),
    time: iso(at),
  });

  // ---- nodes ---------------------------------------------------------------------------------------------------
  const systemCount = Math.max(2, Math.round(total * 0.15));
  const memoryCount = Math.max(1, Math.round(total * 0.1));
  const generalCount = total - systemCount - memoryCount;
  const nodes: NodePlan[] = [];
  let ipSeq = 0;
  const addNode = (typeName: string, pool: string | null, capacityType: 'on-demand' | 'spot', ageHours: number, targetFill: number) => {
    const type = instanceTypeByName(typeName);
    if (!type) throw new Error(`unknown instance type ${typeName}`);
    const zone = ZONES[nodes.length % ZONES.length]!;
    ipSeq++;
    const ip = `10.0.${(ipSeq >> 8) + (ZONES.indexOf(zone) * 64)}.${ipSeq & 255}`;
    const alloc = computeAllocatable(type);
    nodes.push({
      name: `ip-${ip.replaceAll('.', '-')}.${REGION}.compute.internal`,
      type,
      zone,
      capacityType,
      pool,
      createdMs: snapshotMs - Math.round(ageHours * 3_600_000) - Math.floor(rand() * 3_600_000),
      ip,
      instanceId: `i-0${hex(16)}`,
      claim: pool ? `${pool}-${suffix(5)}` : null,
      allocCpu: alloc['cpu'] ?? 0,
      allocMiB: alloc['memory'] ?? 0,
      targetFill,
      usedCpu: 0,
      usedMiB: 0,
      pods: 0,
      maxPods: alloc['pods'] ?? 110,
    });
  };
  for (let i = 0; i < systemCount; i++) addNode('m5.large', null, 'on-demand', 24 * 30 + rand() * 240, 0.55);
  const generalTypes = ['m5.xlarge', 'm5.2xlarge', 'c5.2xlarge', 'm6i.xlarge', 'm6i.2xlarge', 'c6i.xlarge', 'r5.xlarge'];
  for (let i = 0; i < generalCount; i++) {
    // Fragmented: a third of the nodes nearly empty (after a scale-in), the rest between a third and two thirds full.
    const fill = i % 3 === 0 ? 0.08 + rand() * 0.12 : 0.35 + rand() * 0.35;
    addNode(pick(generalTypes), 'general', i % 4 === 0 ? 'spot' : 'on-demand', 2 + rand() * 24 * 12, fill);
  }
  for (let i = 0; i < memoryCount; i++) addNode(pick(['r5.2xlarge', 'r6i.2xlarge', 'r5.xlarge']), 'memory', 'on-demand', 6 + rand() * 24 * 5, 0.3 + rand() * 0.3);

  // ---- workloads -----------------------------------------------------------------------------------------------
  const namespaces = ['shop', 'payments', 'search', 'analytics', 'platform'];
  const workloads: WorkloadPlan[] = [];
  const sizes: [number, number][] = [
    [100, 128],
    [250, 512],
    [500, 1024],
    [1000, 2048],
    [250, 256],
    [750, 1536],
  ];
  const generalCpu = nodes.filter((n) => n.pool === 'general').reduce((s, n) => s + n.allocCpu * n.targetFill, 0);
  let planned = 0;
  let w = 0;
  while (planned < generalCpu * 0.97) {
    const [cpu, memoryMiB] = sizes[w % sizes.length]!;
    const replicas = 3 + Math.floor(rand() * 18);
    const ns = namespaces[w % namespaces.length]!;
    const kind = w % 9 === 4 ? 'StatefulSet' : 'Deployment';
    workloads.push({ kind, namespace: ns, name: `${['api', 'web', 'worker', 'cache', 'feed', 'auth', 'cart', 'index'][w % 8]}-${w}`, replicas, cpu, memoryMiB, nodeSelector: { 'karpenter.sh/nodepool': 'general' }, ...(w % 3 === 0 ? { pdb: { maxUnavailable: 1 } } : {}) });
    planned += replicas * cpu;
    w++;
  }
  const memoryCpu = nodes.filter((n) => n.pool === 'memory').reduce((s, n) => s + n.allocCpu * n.targetFill, 0);
  for (let planned2 = 0, i = 0; planned2 < memoryCpu * 0.95; i++) {
    const replicas = 2 + Math.floor(rand() * 6);
    workloads.push({ kind: 'Deployment', namespace: 'analytics', name: `olap-${i}`, replicas, cpu: 1000, memoryMiB: 12_288, nodeSelector: { 'karpenter.sh/nodepool': 'memory' }, tolerations: [{ key: 'workload', operator: 'Equal', value: 'memory', effect: 'NoSchedule' }] });
    planned2 += replicas * 1000;
  }
  workloads.push({ kind: 'Deployment', namespace: 'kube-system', name: 'coredns', replicas: 2, cpu: 100, memoryMiB: 70, nodeSelector: { 'eks.amazonaws.com/nodegroup': 'system' }, pdb: { maxUnavailable: 1 } });
  workloads.push({ kind: 'Deployment', namespace: 'platform', name: 'ingress', replicas: Math.max(2, systemCount), cpu: 500, memoryMiB: 512, nodeSelector: { 'eks.amazonaws.com/nodegroup': 'system' } });
  // Pending at the snapshot: more replicas than fit anywhere a NodePool allows today (Skiff launches for them), and one
  // that no NodePool can serve (it selects a label none sets).
  workloads.push({ kind: 'Deployment', namespace: 'search', name: 'reindex', replicas: 3, cpu: 7500, memoryMiB: 6144, nodeSelector: { 'karpenter.sh/nodepool': 'general' } });
  workloads.push({ kind: 'Deployment', namespace: 'analytics', name: 'gpu-notebook', replicas: 1, cpu: 2000, memoryMiB: 8192, nodeSelector: { 'node-type': 'gpu' } });

  // ---- objects -------------------------------------------------------------------------------------------------
  const items: Record<string, unknown>[] = [];
  const podItems: Record<string, unknown>[] = [];
  const ownedReplicaSets: Record<string, unknown>[] = [];
  const appsItems: Record<string, unknown>[] = [];
  const pdbItems: Record<string, unknown>[] = [];

  const kubeApiVolume = () => ({
    name: `kube-api-access-${suffix(5)}`,
    projected: {
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { items: [{ key: 'ca.crt', path: 'ca.crt' }], name: 'kube-root-ca.crt' } },
        { downwardAPI: { items: [{ fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' }, path: 'namespace' }] } },
      ],
    },
  });
  const defaultTolerations = [
    { effect: 'NoExecute', key: 'node.kubernetes.io/not-ready', operator: 'Exists', tolerationSeconds: 300 },
    { effect: 'NoExecute', key: 'node.kubernetes.io/unreachable', operator: 'Exists', tolerationSeconds: 300 },
  ];
  const container = (name: string, cpu: number, memoryMiB: number) => ({
    image: `123456789012.dkr.ecr.${REGION}.amazonaws.com/${name}:v1.${Math.floor(rand() * 40)}.0`,
    imagePullPolicy: 'IfNotPresent',
    name: 'app',
    ports: [{ containerPort: 8080, name: 'http', protocol: 'TCP' }],
    resources: { limits: { memory: `${memoryMiB}Mi` }, requests: { cpu: `${cpu}m`, memory: `${memoryMiB}Mi` } },
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
  });

  /** Picks a node for a pod: one matching the selector with room, aiming at each node's target fill. */
  const place = (wl: WorkloadPlan, ignoreTarget: boolean): NodePlan | undefined => {
    const fits = nodes.filter((n) => {
      const labelsOk = !wl.nodeSelector || Object.entries(wl.nodeSelector).every(([k, v]) => (k === 'karpenter.sh/nodepool' ? n.pool === v : k === 'eks.amazonaws.com/nodegroup' ? n.pool === null && v === 'system' : false));
      const target = ignoreTarget ? 0.9 : n.targetFill;
      return labelsOk && n.pods < n.maxPods - 4 && n.usedCpu + wl.cpu <= n.allocCpu * target && n.usedMiB + wl.memoryMiB <= n.allocMiB * 0.9;
    });
    return fits.length === 0 ? undefined : fits[Math.floor(rand() * fits.length)];
  };

  for (const wl of workloads) {
    const created = snapshotMs - Math.floor((2 + rand() * 24 * 40) * 3_600_000);
    const labels = { 'app.kubernetes.io/name': wl.name, 'app.kubernetes.io/part-of': wl.namespace };
    const templateLabels = { ...labels };
    const spec = {
      containers: [container(wl.name, wl.cpu, wl.memoryMiB)],
      dnsPolicy: 'ClusterFirst',
      ...(wl.nodeSelector ? { nodeSelector: wl.nodeSelector } : {}),
      restartPolicy: 'Always',
      schedulerName: 'default-scheduler',
      securityContext: {},
      terminationGracePeriodSeconds: 30,
      ...(wl.tolerations ? { tolerations: wl.tolerations } : {}),
    };
    const wlUid = uid();
    const rsHash = suffix(10);
    const rsName = `${wl.name}-${rsHash}`;
    const rsUid = uid();
    const generation = 1 + Math.floor(rand() * 5);
    if (wl.kind === 'Deployment') {
      appsItems.push({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: {
          annotations: { 'deployment.kubernetes.io/revision': String(generation) },
          creationTimestamp: iso(created),
          generation,
          labels,
          managedFields: [
            managedFields('kubectl-client-side-apply', 'Update', created, { 'f:metadata': { 'f:labels': { '.': {}, 'f:app.kubernetes.io/name': {} } }, 'f:spec': { 'f:replicas': {}, 'f:template': {} } }),
            managedFields('kube-controller-manager', 'Update', snapshotMs - 600_000, { 'f:status': { 'f:availableReplicas': {}, 'f:conditions': {} } }, 'status'),
          ].map((m) => ({ ...m, apiVersion: 'apps/v1' })),
          name: wl.name,
          namespace: wl.namespace,
          resourceVersion: nextRv(),
          uid: wlUid,
        },
        spec: {
          progressDeadlineSeconds: 600,
          replicas: wl.replicas,
          revisionHistoryLimit: 10,
          selector: { matchLabels: { 'app.kubernetes.io/name': wl.name } },
          strategy: { rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' }, type: 'RollingUpdate' },
          template: { metadata: { creationTimestamp: null, labels: templateLabels }, spec },
        },
        status: {
          availableReplicas: wl.replicas,
          conditions: [
            { lastTransitionTime: iso(created), lastUpdateTime: iso(created), message: `ReplicaSet "${rsName}" has successfully progressed.`, reason: 'NewReplicaSetAvailable', status: 'True', type: 'Progressing' },
            { lastTransitionTime: iso(snapshotMs - 3_600_000), lastUpdateTime: iso(snapshotMs - 3_600_000), message: 'Deployment has minimum availability.', reason: 'MinimumReplicasAvailable', status: 'True', type: 'Available' },
          ],
          observedGeneration: generation,
          readyReplicas: wl.replicas,
          replicas: wl.replicas,
          updatedReplicas: wl.replicas,
        },
      });
      ownedReplicaSets.push({
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: {
          annotations: { 'deployment.kubernetes.io/desired-replicas': String(wl.replicas), 'deployment.kubernetes.io/max-replicas': String(Math.ceil(wl.replicas * 1.25)), 'deployment.kubernetes.io/revision': String(generation) },
          creationTimestamp: iso(created),
          generation: 1,
          labels: { ...templateLabels, 'pod-template-hash': rsHash },
          managedFields: [managedFields('kube-controller-manager', 'Update', created, { 'f:metadata': { 'f:ownerReferences': {} }, 'f:spec': { 'f:replicas': {} } })].map((m) => ({ ...m, apiVersion: 'apps/v1' })),
          name: rsName,
          namespace: wl.namespace,
          ownerReferences: [{ apiVersion: 'apps/v1', blockOwnerDeletion: true, controller: true, kind: 'Deployment', name: wl.name, uid: wlUid }],
          resourceVersion: nextRv(),
          uid: rsUid,
        },
        spec: { replicas: wl.replicas, selector: { matchLabels: { 'app.kubernetes.io/name': wl.name, 'pod-template-hash': rsHash } }, template: { metadata: { creationTimestamp: null, labels: { ...templateLabels, 'pod-template-hash': rsHash } }, spec } },
        status: { availableReplicas: wl.replicas, fullyLabeledReplicas: wl.replicas, observedGeneration: 1, readyReplicas: wl.replicas, replicas: wl.replicas },
      });
    } else {
      appsItems.push({
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: {
          creationTimestamp: iso(created),
          generation,
          labels,
          managedFields: [managedFields('helm', 'Update', created, { 'f:spec': { 'f:replicas': {}, 'f:serviceName': {} } })].map((m) => ({ ...m, apiVersion: 'apps/v1' })),
          name: wl.name,
          namespace: wl.namespace,
          resourceVersion: nextRv(),
          uid: wlUid,
        },
        spec: {
          persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
          podManagementPolicy: 'OrderedReady',
          replicas: wl.replicas,
          revisionHistoryLimit: 10,
          selector: { matchLabels: { 'app.kubernetes.io/name': wl.name } },
          serviceName: wl.name,
          template: { metadata: { creationTimestamp: null, labels: templateLabels }, spec },
          updateStrategy: { rollingUpdate: { partition: 0 }, type: 'RollingUpdate' },
        },
        status: { availableReplicas: wl.replicas, collisionCount: 0, currentReplicas: wl.replicas, currentRevision: `${wl.name}-${suffix(10)}`, observedGeneration: generation, readyReplicas: wl.replicas, replicas: wl.replicas, updateRevision: `${wl.name}-${suffix(10)}`, updatedReplicas: wl.replicas },
      });
    }
    if (wl.pdb) {
      pdbItems.push({
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { creationTimestamp: iso(created), generation: 1, managedFields: [managedFields('helm', 'Update', created, { 'f:spec': { 'f:maxUnavailable': {}, 'f:selector': {} } })].map((m) => ({ ...m, apiVersion: 'policy/v1' })), name: wl.name, namespace: wl.namespace, resourceVersion: nextRv(), uid: uid() },
        spec: { maxUnavailable: wl.pdb.maxUnavailable, selector: { matchLabels: { 'app.kubernetes.io/name': wl.name } } },
        status: { conditions: [{ lastTransitionTime: iso(created), message: '', observedGeneration: 1, reason: 'SufficientPods', status: 'True', type: 'DisruptionAllowed' }], currentHealthy: wl.replicas, desiredHealthy: wl.replicas - wl.pdb.maxUnavailable, disruptionsAllowed: wl.pdb.maxUnavailable, expectedPods: wl.replicas, observedGeneration: 1 },
      });
    }
    for (let i = 0; i < wl.replicas; i++) {
      const node = place(wl, false) ?? place(wl, true);
      if (node) {
        node.usedCpu += wl.cpu;
        node.usedMiB += wl.memoryMiB;
        node.pods++;
      }
      const name = wl.kind === 'StatefulSet' ? `${wl.name}-${i}` : `${rsName}-${suffix(5)}`;
      const started = Math.max(created, node ? node.createdMs + 60_000 : created) + Math.floor(rand() * 600_000);
      const podLabels = wl.kind === 'StatefulSet' ? { ...templateLabels, 'apps.kubernetes.io/pod-index': String(i), 'controller-revision-hash': `${wl.name}-${suffix(10)}`, 'statefulset.kubernetes.io/pod-name': name } : { ...templateLabels, 'pod-template-hash': rsHash };
      const owner = wl.kind === 'StatefulSet' ? { apiVersion: 'apps/v1', blockOwnerDeletion: true, controller: true, kind: 'StatefulSet', name: wl.name, uid: wlUid } : { apiVersion: 'apps/v1', blockOwnerDeletion: true, controller: true, kind: 'ReplicaSet', name: rsName, uid: rsUid };
      const podIp = node ? `10.0.${100 + Math.floor(rand() * 100)}.${Math.floor(rand() * 254) + 1}` : undefined;
      const podCreated = node ? Math.min(started, snapshotMs - 5_000) : snapshotMs - 30_000 - Math.floor(rand() * 20_000);
      podItems.push({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          creationTimestamp: iso(podCreated),
          ...(wl.kind === 'Deployment' ? { generateName: `${rsName}-` } : {}),
          labels: podLabels,
          managedFields: [
            managedFields('kube-controller-manager', 'Update', podCreated, { 'f:metadata': { 'f:generateName': {}, 'f:labels': {}, 'f:ownerReferences': {} }, 'f:spec': { 'f:containers': {} } }),
            managedFields('kubelet', 'Update', podCreated + 30_000, { 'f:status': { 'f:conditions': {}, 'f:containerStatuses': {}, 'f:phase': {} } }, 'status'),
          ],
          name,
          namespace: wl.namespace,
          ownerReferences: [owner],
          resourceVersion: nextRv(),
          uid: uid(),
        },
        spec: {
          ...spec,
          containers: [{ ...spec.containers[0]!, volumeMounts: [{ mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', name: 'kube-api-access', readOnly: true }] }],
          enableServiceLinks: true,
          ...(wl.kind === 'StatefulSet' ? { hostname: name, subdomain: wl.name } : {}),
          ...(node ? { nodeName: node.name } : {}),
          preemptionPolicy: 'PreemptLowerPriority',
          priority: 0,
          serviceAccount: 'default',
          serviceAccountName: 'default',
          tolerations: [...(wl.tolerations ?? []), ...defaultTolerations],
          volumes: [kubeApiVolume()],
        },
        status: node
          ? {
              conditions: ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({ lastProbeTime: null, lastTransitionTime: iso(started), status: 'True', type })),
              containerStatuses: [
                {
                  containerID: `containerd://${hex(64)}`,
                  image: spec.containers[0]!.image,
                  imageID: `${spec.containers[0]!.image.split(':')[0]}@sha256:${hex(64)}`,
                  lastState: {},
                  name: 'app',
                  ready: true,
                  restartCount: 0,
                  started: true,
                  state: { running: { startedAt: iso(started + 5000) } },
                },
              ],
              hostIP: node.ip,
              hostIPs: [{ ip: node.ip }],
              phase: 'Running',
              podIP: podIp,
              podIPs: [{ ip: podIp }],
              qosClass: 'Burstable',
              startTime: iso(started),
            }
          : {
              conditions: [
                {
                  lastProbeTime: null,
                  lastTransitionTime: iso(podCreated),
                  message: `0/${nodes.length} nodes are available: ${nodes.length} node(s) didn't match Pod's node affinity/selector or had insufficient cpu. preemption: 0/${nodes.length} nodes are available: ${nodes.length} Preemption is not helpful for scheduling.`,
                  reason: 'Unschedulable',
                  status: 'False',
                  type: 'PodScheduled',
                },
              ],
              phase: 'Pending',
              qosClass: 'Burstable',
            },
      });
    }
  }

  // A DaemonSet on every node (its pods are in the snapshot too), a finished Job's completed pod, and a LimitRange.
  const dsUid = uid();
  const dsCreated = snapshotMs - 90 * 86_400_000;
  const dsSpec = { containers: [container('node-exporter', 50, 64)], dnsPolicy: 'ClusterFirst', restartPolicy: 'Always', schedulerName: 'default-scheduler', securityContext: {}, terminationGracePeriodSeconds: 30, tolerations: [{ operator: 'Exists' }] };
  appsItems.push({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { annotations: { 'deprecated.daemonset.template.generation': '1' }, creationTimestamp: iso(dsCreated), generation: 1, labels: { 'app.kubernetes.io/name': 'node-exporter' }, managedFields: [managedFields('helm', 'Update', dsCreated, { 'f:spec': { 'f:template': {} } })].map((m) => ({ ...m, apiVersion: 'apps/v1' })), name: 'node-exporter', namespace: 'platform', resourceVersion: nextRv(), uid: dsUid },
    spec: { revisionHistoryLimit: 10, selector: { matchLabels: { 'app.kubernetes.io/name': 'node-exporter' } }, template: { metadata: { creationTimestamp: null, labels: { 'app.kubernetes.io/name': 'node-exporter' } }, spec: dsSpec }, updateStrategy: { rollingUpdate: { maxSurge: 0, maxUnavailable: 1 }, type: 'RollingUpdate' } },
    status: { currentNumberScheduled: nodes.length, desiredNumberScheduled: nodes.length, numberAvailable: nodes.length, numberMisscheduled: 0, numberReady: nodes.length, observedGeneration: 1, updatedNumberScheduled: nodes.length },
  });
  for (const node of nodes) {
    const name = `node-exporter-${suffix(5)}`;
    podItems.push({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { creationTimestamp: iso(node.createdMs + 20_000), generateName: 'node-exporter-', labels: { 'app.kubernetes.io/name': 'node-exporter', 'controller-revision-hash': '6b8f9d7c5d', 'pod-template-generation': '1' }, name, namespace: 'platform', ownerReferences: [{ apiVersion: 'apps/v1', blockOwnerDeletion: true, controller: true, kind: 'DaemonSet', name: 'node-exporter', uid: dsUid }], resourceVersion: nextRv(), uid: uid() },
      spec: {
        ...dsSpec,
        affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node.name] }] }] } } },
        nodeName: node.name,
        tolerations: [{ operator: 'Exists' }, ...['not-ready', 'unreachable'].map((k) => ({ effect: 'NoExecute', key: `node.kubernetes.io/${k}`, operator: 'Exists' })), ...['disk-pressure', 'memory-pressure', 'pid-pressure', 'unschedulable'].map((k) => ({ effect: 'NoSchedule', key: `node.kubernetes.io/${k}`, operator: 'Exists' }))],
      },
      status: { hostIP: node.ip, phase: 'Running', podIP: node.ip, qosClass: 'Burstable', startTime: iso(node.createdMs + 25_000) },
    });
  }
  const jobCreated = snapshotMs - 7_200_000;
  const jobUid = uid();
  const jobSpec = { containers: [container('nightly-report', 500, 512)], dnsPolicy: 'ClusterFirst', restartPolicy: 'Never', schedulerName: 'default-scheduler', securityContext: {}, terminationGracePeriodSeconds: 30 };
  appsItems.push({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { creationTimestamp: iso(jobCreated), generation: 1, labels: { 'batch.kubernetes.io/job-name': 'nightly-report' }, name: 'nightly-report', namespace: 'analytics', resourceVersion: nextRv(), uid: jobUid },
    spec: { backoffLimit: 6, completionMode: 'NonIndexed', completions: 1, manualSelector: false, parallelism: 1, podReplacementPolicy: 'TerminatingOrFailed', selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': jobUid } }, suspend: false, template: { metadata: { creationTimestamp: null, labels: { 'batch.kubernetes.io/controller-uid': jobUid, 'batch.kubernetes.io/job-name': 'nightly-report' } }, spec: jobSpec } },
    status: { completionTime: iso(jobCreated + 1_800_000), conditions: [{ lastProbeTime: iso(jobCreated + 1_800_000), lastTransitionTime: iso(jobCreated + 1_800_000), message: 'Reached expected number of succeeded pods', reason: 'CompletionsReached', status: 'True', type: 'Complete' }], ready: 0, startTime: iso(jobCreated), succeeded: 1, terminating: 0, uncountedTerminatedPods: {} },
  });
  const doneNode = nodes.find((n) => n.pool === 'general')!;
  podItems.push({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { creationTimestamp: iso(jobCreated), generateName: 'nightly-report-', labels: { 'batch.kubernetes.io/controller-uid': jobUid, 'batch.kubernetes.io/job-name': 'nightly-report' }, name: `nightly-report-${suffix(5)}`, namespace: 'analytics', ownerReferences: [{ apiVersion: 'batch/v1', blockOwnerDeletion: true, controller: true, kind: 'Job', name: 'nightly-report', uid: jobUid }], resourceVersion: nextRv(), uid: uid() },
    spec: { ...jobSpec, nodeName: doneNode.name, tolerations: defaultTolerations },
    status: { hostIP: doneNode.ip, phase: 'Succeeded', qosClass: 'Burstable', startTime: iso(jobCreated + 5000) },
  });
  const limitRange = {
    apiVersion: 'v1',
    kind: 'LimitRange',
    metadata: { creationTimestamp: iso(dsCreated), name: 'defaults', namespace: 'analytics', resourceVersion: nextRv(), uid: uid() },
    spec: { limits: [{ default: { memory: '512Mi' }, defaultRequest: { cpu: '100m', memory: '256Mi' }, type: 'Container' }] },
  };

  const nodeItems = nodes.map((n) => nodeObject(n));
  function nodeObject(n: NodePlan): Record<string, unknown> {
    const capacity = computeCapacity(n.type);
    const alloc = computeAllocatable(n.type);
    const karpenter = n.pool !== null;
    const labels: Record<string, string> = {
      'beta.kubernetes.io/arch': n.type.arch,
      'beta.kubernetes.io/instance-type': n.type.name,
      'beta.kubernetes.io/os': 'linux',
      'failure-domain.beta.kubernetes.io/region': REGION,
      'failure-domain.beta.kubernetes.io/zone': n.zone,
      'k8s.io/cloud-provider-aws': 'a94967527effcefb5f5829f529c0a1b9',
      'kubernetes.io/arch': n.type.arch,
      'kubernetes.io/hostname': n.name,
      'kubernetes.io/os': 'linux',
      'node.kubernetes.io/instance-type': n.type.name,
      'topology.k8s.aws/zone-id': ZONE_IDS[n.zone]!,
      'topology.kubernetes.io/region': REGION,
      'topology.kubernetes.io/zone': n.zone,
      ...(karpenter
        ? {
            ...n.type.labels,
            'karpenter.k8s.aws/ec2nodeclass': 'default',
            'karpenter.sh/capacity-type': n.capacityType,
            'karpenter.sh/initialized': 'true',
            'karpenter.sh/nodepool': n.pool!,
            'karpenter.sh/registered': 'true',
            ...(n.pool === 'memory' ? { workload: 'memory' } : {}),
          }
        : {
            'eks.amazonaws.com/capacityType': 'ON_DEMAND',
            'eks.amazonaws.com/nodegroup': 'system',
            'eks.amazonaws.com/nodegroup-image': 'ami-0c2a8f6a1b7e3d4c5',
            'eks.amazonaws.com/sourceLaunchTemplateId': 'lt-0a1b2c3d4e5f60718',
            'eks.amazonaws.com/sourceLaunchTemplateVersion': '3',
          }),
    };
    // Karpenter's labels of a type (instance-cpu, …) are strings; the zone/capacity ones above win.
    const quantity = (k: string, v: number) => (k === 'cpu' ? `${v}m` : k === 'memory' ? `${Math.round(v * 1024)}Ki` : k === 'ephemeral-storage' ? `${Math.round(v * 1024 * 1024)}` : String(v));
    const list = (r: Readonly<Record<string, number>>) => ({ ...Object.fromEntries(Object.entries(r).map(([k, v]) => [k, quantity(k, v)])), 'hugepages-1Gi': '0', 'hugepages-2Mi': '0' });
    return {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        annotations: {
          'alpha.kubernetes.io/provided-node-ip': n.ip,
          ...(karpenter
            ? { 'compatibility.karpenter.k8s.aws/cluster-name-tagged': 'true', 'karpenter.k8s.aws/ec2nodeclass-hash': '15535182697325354914', 'karpenter.k8s.aws/ec2nodeclass-hash-version': 'v4', 'karpenter.sh/nodepool-hash': n.pool === 'general' ? '6821555240594823858' : '9011285014367771296', 'karpenter.sh/nodepool-hash-version': 'v3' }
            : {}),
          'node.alpha.kubernetes.io/ttl': '0',
          'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
        },
        creationTimestamp: iso(n.createdMs),
        ...(karpenter ? { finalizers: ['karpenter.sh/termination'] } : {}),
        labels,
        managedFields: [
          managedFields('kubelet', 'Update', n.createdMs, { 'f:metadata': { 'f:annotations': { 'f:alpha.kubernetes.io/provided-node-ip': {} }, 'f:labels': { 'f:kubernetes.io/hostname': {} } }, 'f:spec': { 'f:providerID': {} } }),
          ...(karpenter ? [managedFields('karpenter', 'Update', n.createdMs + 2000, { 'f:metadata': { 'f:finalizers': {}, 'f:labels': { 'f:karpenter.sh/initialized': {} }, 'f:ownerReferences': {} } })] : []),
          managedFields('kubelet', 'Update', snapshotMs - 60_000, { 'f:status': { 'f:allocatable': {}, 'f:conditions': {}, 'f:images': {}, 'f:nodeInfo': {} } }, 'status'),
        ],
        name: n.name,
        ...(karpenter ? { ownerReferences: [{ apiVersion: 'karpenter.sh/v1', blockOwnerDeletion: true, kind: 'NodeClaim', name: n.claim!, uid: uid() }] } : {}),
        resourceVersion: nextRv(),
        uid: uid(),
      },
      spec: {
        providerID: `aws:///${n.zone}/${n.instanceId}`,
        ...(n.pool === 'memory' ? { taints: [{ effect: 'NoSchedule', key: 'workload', value: 'memory' }] } : {}),
      },
      status: {
        addresses: [
          { address: n.ip, type: 'InternalIP' },
          { address: n.name, type: 'InternalDNS' },
          { address: n.name, type: 'Hostname' },
        ],
        allocatable: list(alloc),
        capacity: list(capacity),
        conditions: [
          ['MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'],
          ['DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'],
          ['PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'],
          ['Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'],
        ].map(([type, status, reason, message]) => ({ lastHeartbeatTime: iso(snapshotMs - 30_000), lastTransitionTime: iso(n.createdMs + 30_000), message, reason, status, type })),
        daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
        images: [{ names: ['602401143452.dkr.ecr.us-west-2.amazonaws.com/amazon-k8s-cni@sha256:' + hex(64), '602401143452.dkr.ecr.us-west-2.amazonaws.com/amazon-k8s-cni:v1.19.2-eksbuild.1'], sizeBytes: 47_912_836 }],
        nodeInfo: {
          architecture: n.type.arch,
          bootID: uid(),
          containerRuntimeVersion: 'containerd://1.7.27',
          kernelVersion: '6.1.132-147.221.amzn2023.x86_64',
          kubeProxyVersion: 'v1.32.3-eks-473151a',
          kubeletVersion: 'v1.32.3-eks-473151a',
          machineID: hex(32),
          operatingSystem: 'linux',
          osImage: 'Amazon Linux 2023.7.20250428',
          systemUUID: `ec2${hex(5)}-${hex(4)}-${hex(4)}-${hex(4)}-${hex(12)}`,
        },
      },
    };
  }

  const list = (objects: readonly unknown[]) => ({ apiVersion: 'v1', items: objects, kind: 'List', metadata: { resourceVersion: '' } });
  // kubectl writes no anchors or aliases: every shared object is written out in full.
  const yamlOptions = { lineWidth: 0, sortMapEntries: false, aliasDuplicateObjects: false } as const;
  const clusterItems = [...nodeItems, ...podItems, ...appsItems.filter((o) => (o as { kind: string }).kind === 'Deployment'), ...ownedReplicaSets, ...appsItems.filter((o) => (o as { kind: string }).kind !== 'Deployment'), ...pdbItems, limitRange];
  items.push(...clusterItems);
  return {
    'cluster.yaml': stringify(list(items), yamlOptions),
    'karpenter.yaml': stringify(list(karpenterObjects(snapshotMs, iso, uid, nextRv)), yamlOptions),
  };
}

/** The NodePools and EC2NodeClass, as `kubectl get nodepools,ec2nodeclasses -o yaml` writes them. */
function karpenterObjects(snapshotMs: number, iso: (ms: number) => string, uid: () => string, nextRv: () => string): unknown[] {
  const created = snapshotMs - 120 * 86_400_000;
  const ready = (extra: string[]) => ({ conditions: [...extra, 'Ready'].map((type) => ({ lastTransitionTime: iso(created + 60_000), message: '', observedGeneration: 1, reason: type, status: 'True', type })) });
  const nodePool = (name: string, spec: Record<string, unknown>) => ({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: {
      annotations: { 'karpenter.sh/nodepool-hash': '6821555240594823858', 'karpenter.sh/nodepool-hash-version': 'v3', 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ apiVersion: 'karpenter.sh/v1', kind: 'NodePool', metadata: { name } }) + '\n' },
      creationTimestamp: iso(created),
      generation: 3,
      managedFields: [{ apiVersion: 'karpenter.sh/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:disruption': {}, 'f:template': {} } }, manager: 'kubectl-client-side-apply', operation: 'Update', time: iso(created) }],
      name,
      resourceVersion: nextRv(),
      uid: uid(),
    },
    spec,
    status: { ...ready(['ValidationSucceeded', 'NodeClassReady', 'NodeRegistrationHealthy']), nodes: 0, resources: { cpu: '0', memory: '0', pods: '0' } },
  });
  const requirements = (families: string[], capacityTypes: string[]) => [
    { key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: families },
    { key: 'karpenter.sh/capacity-type', operator: 'In', values: capacityTypes },
    { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
  ];
  return [
    nodePool('general', {
      disruption: {
        budgets: [
          { nodes: '10%' },
          // No voluntary consolidation during office hours on weekdays (the seed article's budget).
          { duration: '8h', nodes: '0', reasons: ['Underutilized'], schedule: '0 9 * * mon-fri' },
        ],
        consolidateAfter: '1m',
        consolidationPolicy: 'WhenEmptyOrUnderutilized',
      },
      limits: { cpu: '4000' },
      template: { spec: { expireAfter: '720h', nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: requirements(['m5', 'm6i', 'c5', 'c6i', 'r5'], ['spot', 'on-demand']) } },
      weight: 10,
    }),
    nodePool('memory', {
      disruption: { budgets: [{ nodes: '1' }], consolidateAfter: '5m', consolidationPolicy: 'WhenEmptyOrUnderutilized' },
      template: {
        metadata: { labels: { workload: 'memory' } },
        spec: { expireAfter: '720h', nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: requirements(['r5', 'r6i'], ['on-demand']), taints: [{ effect: 'NoSchedule', key: 'workload', value: 'memory' }] },
      },
    }),
    {
      apiVersion: 'karpenter.k8s.aws/v1',
      kind: 'EC2NodeClass',
      metadata: {
        annotations: { 'karpenter.k8s.aws/ec2nodeclass-hash': '15535182697325354914', 'karpenter.k8s.aws/ec2nodeclass-hash-version': 'v4' },
        creationTimestamp: iso(created),
        finalizers: ['karpenter.k8s.aws/termination'],
        generation: 2,
        managedFields: [{ apiVersion: 'karpenter.k8s.aws/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:amiSelectorTerms': {}, 'f:role': {} } }, manager: 'kubectl-client-side-apply', operation: 'Update', time: iso(created) }],
        name: 'default',
        resourceVersion: nextRv(),
        uid: uid(),
      },
      spec: {
        amiFamily: 'AL2023',
        amiSelectorTerms: [{ alias: 'al2023@latest' }],
        metadataOptions: { httpEndpoint: 'enabled', httpProtocolIPv6: 'disabled', httpPutResponseHopLimit: 1, httpTokens: 'required' },
        role: 'KarpenterNodeRole-shop-prod',
        securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'shop-prod' } }],
        subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'shop-prod' } }],
      },
      status: {
        amis: [{ id: 'ami-0a1b2c3d4e5f60718', name: 'amazon-eks-node-al2023-x86_64-standard-1.32-v20250505', requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }] }],
        conditions: ready(['AMIsReady', 'SubnetsReady', 'SecurityGroupsReady', 'InstanceProfileReady', 'ValidationSucceeded']).conditions,
        instanceProfile: 'shop-prod_1234567890123456789',
        securityGroups: [{ id: 'sg-0123456789abcdef0', name: 'eks-cluster-sg-shop-prod' }],
        subnets: ZONES.map((zone, i) => ({ id: `subnet-0${i}23456789abcdef0`, zone, zoneID: ZONE_IDS[zone] })),
      },
    },
  ];
}

function main(): void {
  const out = join(REPO_ROOT, OUTPUT_DIR);
  mkdirSync(out, { recursive: true });
  for (const [name, text] of Object.entries(buildSnapshot())) writeFileSync(join(out, name), text);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main();
