// The workload controllers against a fake PodApi (plain maps, a counter for generated names): what each controller
// creates and removes, without the simulated cluster's scheduler or clock.
import { describe, expect, it } from 'vitest';
import { parseManifests } from '../../shared/core/api/manifest.js';
import type { PodTemplateSpec } from '../../shared/core/api/pod.js';
import type { DaemonSet, Deployment, Job, StatefulSet } from '../../shared/core/api/workloads.js';
import type { ClusterPod } from '../../shared/ports/cluster.js';
import type { PlacementNode } from '../../shared/sim/placement-check.js';
import { WorkloadControllers, type PodApi } from '../../shared/sim/workload-controllers.js';

type Pod = ClusterPod & { runFor: number | null };

/** An in-memory PodApi: pods get increasing `createdAt`, generated names a running counter; drops are recorded. */
function fakeApi() {
  let created = 0;
  let generated = 0;
  const dropped: string[] = [];
  const api: PodApi<Pod> & {
    deployments: Map<string, Deployment>;
    statefulSets: Map<string, StatefulSet>;
    jobs: Map<string, { job: Job; succeeded: number; created: number }>;
    daemonSets: Map<string, DaemonSet>;
    pods: Map<string, Pod>;
    dropped: string[];
  } = {
    deployments: new Map<string, Deployment>(),
    statefulSets: new Map<string, StatefulSet>(),
    jobs: new Map<string, { job: Job; succeeded: number; created: number }>(),
    daemonSets: new Map<string, DaemonSet>(),
    pods: new Map<string, Pod>(),
    dropped,
    createPod(namespace: string, name: string, template: PodTemplateSpec, owner: string | null, runFor: number | null, nodeName?: string) {
      const pod: Pod = {
        namespace,
        name,
        uid: `uid-${name}`,
        resourceVersion: '1',
        labels: template.metadata.labels ?? {},
        annotations: {},
        spec: template.spec as ClusterPod['spec'],
        ...(nodeName ? { nodeName } : {}),
        phase: nodeName ? 'Running' : 'Pending',
        unschedulable: false,
        owner,
        createdAt: created++,
        runFor,
      };
      api.pods.set(`${namespace}/${name}`, pod);
    },
    generateName: (_namespace: string, prefix: string) => `${prefix}${generated++}`,
    dropPod(pod: Pod) {
      api.pods.delete(`${pod.namespace}/${pod.name}`);
      dropped.push(pod.name);
    },
  };
  return api;
}

function object<T>(yaml: string): T {
  const [manifest] = parseManifests(yaml, 'test.yaml');
  return manifest!.object as T;
}

const deployment = (replicas: number, cpu = '100m') =>
  object<Deployment>(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: nginx, resources: {requests: {cpu: ${cpu}}}}]
`);

const node = (name: string, taints: PlacementNode['taints'] = []): PlacementNode => ({ name, labels: { 'kubernetes.io/os': 'linux' }, taints, allocatable: { cpu: 4000, memory: 16000, pods: 58 } });

describe('WorkloadControllers', () => {
  describe('reconcileDeployment', () => {
    it('creates the replicas under the ReplicaSet of the template, and scales down pending pods first, newest first', () => {
      const api = fakeApi();
      const controllers = new WorkloadControllers(api);
      api.deployments.set('default/web', deployment(4));
      controllers.reconcileDeployment('default/web');
      const pods = [...api.pods.values()];
      expect(pods).toHaveLength(4);
      const owner = pods[0]!.owner!;
      expect(owner).toMatch(/^ReplicaSet\/web-[a-z0-9]{10}$/);
      expect(pods.every((p) => p.owner === owner && p.name.startsWith(`${owner.slice('ReplicaSet/'.length)}-`))).toBe(true);
      // Two of them run; scaling to 1 drops both pending ones (newest first), then the newest running one.
      for (const p of pods.slice(0, 2)) api.pods.set(`default/${p.name}`, { ...p, nodeName: 'n1', phase: 'Running' });
      api.deployments.set('default/web', deployment(1));
      controllers.reconcileDeployment('default/web');
      expect(api.dropped).toEqual([pods[3]!.name, pods[2]!.name, pods[1]!.name]);
      expect([...api.pods.values()].map((p) => p.name)).toEqual([pods[0]!.name]);
    });

    it('gives a changed template a new ReplicaSet and leaves the old pods to their own owner', () => {
      const api = fakeApi();
      const controllers = new WorkloadControllers(api);
      api.deployments.set('default/web', deployment(1));
      controllers.reconcileDeployment('default/web');
      api.deployments.set('default/web', deployment(1, '200m'));
      controllers.reconcileDeployment('default/web');
      const owners = [...api.pods.values()].map((p) => p.owner);
      expect(new Set(owners).size).toBe(2);
    });
  });

  describe('reconcileStatefulSet', () => {
    it('keeps pods <name>-0 … <name>-(replicas−1) and removes the higher ordinals on scale-down', () => {
      const api = fakeApi();
      const controllers = new WorkloadControllers(api);
      const db = (replicas: number) =>
        object<StatefulSet>(`
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: postgres}]
`);
      api.statefulSets.set('default/db', db(3));
      controllers.reconcileStatefulSet('default/db');
      expect([...api.pods.keys()]).toEqual(['default/db-0', 'default/db-1', 'default/db-2']);
      api.pods.delete('default/db-1');
      api.statefulSets.set('default/db', db(2));
      controllers.reconcileStatefulSet('default/db');
      expect(api.dropped).toEqual(['db-2']);
      expect([...api.pods.keys()].sort()).toEqual(['default/db-0', 'default/db-1']);
    });
  });

  describe('reconcileJob', () => {
    it('runs up to parallelism pods until completions succeeded, each with the template’s run time', () => {
      const api = fakeApi();
      const controllers = new WorkloadControllers(api);
      const job = object<Job>(`
apiVersion: batch/v1
kind: Job
metadata: {name: batch, annotations: {}}
spec:
  parallelism: 2
  completions: 3
  template:
    metadata: {annotations: {skiff.dev/run-for: 60s}}
    spec:
      restartPolicy: Never
      containers: [{name: work, image: busybox}]
`);
      const state = { job, succeeded: 0, created: 0 };
      api.jobs.set('default/batch', state);
      controllers.reconcileJob('default/batch');
      expect([...api.pods.values()].map((p) => [p.owner, p.runFor])).toEqual([
        ['Job/batch', 60],
        ['Job/batch', 60],
      ]);
      // One completes: a third pod starts; once two more complete, none does.
      const [first, second] = [...api.pods.values()];
      api.pods.delete(`default/${first!.name}`);
      state.succeeded++;
      controllers.reconcileOwner(first!);
      expect(api.pods.size).toBe(2);
      expect(state.created).toBe(3);
      for (const p of [second!, ...[...api.pods.values()].filter((p) => p !== second)]) {
        api.pods.delete(`default/${p.name}`);
        state.succeeded++;
        controllers.reconcileOwner(p);
      }
      expect(api.pods.size).toBe(0);
      expect(state.created).toBe(3);
    });
  });

  describe('placeDaemonPods', () => {
    it('places one pod per node, tolerating not-ready with the tolerations the controller adds, not a NoSchedule taint of the user', () => {
      const api = fakeApi();
      const controllers = new WorkloadControllers(api);
      api.daemonSets.set(
        'kube-system/agent',
        object<DaemonSet>(`
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: agent, resources: {requests: {cpu: 50m}}}]
`),
      );
      const notReady = node('n1', [{ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }]);
      const dedicated = node('n2', [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }]);
      controllers.placeDaemonPods(notReady);
      controllers.placeDaemonPods(notReady);
      controllers.placeDaemonPods(dedicated);
      const pods = [...api.pods.values()];
      expect(pods.map((p) => [p.namespace, p.owner, p.nodeName])).toEqual([['kube-system', 'DaemonSet/agent', 'n1']]);
      expect(pods[0]!.spec.tolerations).toEqual(expect.arrayContaining([expect.objectContaining({ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' })]));
    });
  });
});
