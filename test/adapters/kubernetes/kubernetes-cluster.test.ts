import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KubernetesApiError } from '../../../shared/adapters/kubernetes/kubernetes-errors.js';
import { BOUND_POD_SELECTOR, EVENT_DETAILS_ANNOTATION, KubernetesCluster, NODECLAIM_VERSION_ANNOTATION, NON_TERMINAL_POD_SELECTOR } from '../../../shared/adapters/kubernetes/kubernetes-cluster.js';
import type { NodeClaim } from '../../../shared/core/api/nodeclaim.js';
import { ApiServerUnavailableError, ConflictError, NotFoundError, ThrottledError, isThrottledError } from '../../../shared/core/errors.js';
import { startFakeKubeApiServer, type FakeKubeApiServer, type Json } from '../../support/fake-kube-apiserver.js';

const TOKEN = 'k8s-aws-v1.aHR0cHM6Ly9zdHMuZXUtd2VzdC0xLmFtYXpvbmF3cy5jb20v';
const NOW = Date.UTC(2024, 4, 6, 7, 8, 9);

// ---- wire fixtures, shaped as the API server returns them ----------------------------------------------------------

function wirePod(namespace: string, name: string, opts: { phase?: string; nodeName?: string; unschedulable?: boolean; cpu?: string; owner?: string } = {}): Json {
  const [ownerKind, ownerName] = (opts.owner ?? 'ReplicaSet/web-5d8f').split('/');
  return {
    metadata: {
      name,
      namespace,
      labels: { app: 'web' },
      creationTimestamp: '2024-05-06T07:00:00Z',
      ownerReferences: [{ apiVersion: 'apps/v1', kind: ownerKind, name: ownerName, uid: 'rs-1', controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: opts.cpu ?? '500m', memory: '1Gi' } }, imagePullPolicy: 'IfNotPresent', terminationMessagePath: '/dev/termination-log' }],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      securityContext: {},
      schedulerName: 'default-scheduler',
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
      ...(opts.nodeName ? { nodeName: opts.nodeName } : {}),
    },
    status: {
      phase: opts.phase ?? 'Pending',
      qosClass: 'Burstable',
      conditions: opts.unschedulable
        ? [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available', lastTransitionTime: '2024-05-06T07:00:01Z' }]
        : [{ type: 'PodScheduled', status: 'True', lastTransitionTime: '2024-05-06T07:00:01Z' }],
    },
  };
}

function wireNode(name: string, opts: { ready?: boolean; cpu?: string; taints?: Json[] } = {}): Json {
  return {
    metadata: { name, labels: { 'kubernetes.io/hostname': name, 'karpenter.sh/nodepool': 'general' }, annotations: { 'node.alpha.kubernetes.io/ttl': '0' }, creationTimestamp: '2024-05-06T06:00:00Z' },
    spec: { providerID: `aws:///eu-west-1a/i-${name}`, taints: opts.taints ?? [] },
    status: {
      allocatable: { cpu: opts.cpu ?? '1930m', memory: '7291060Ki', pods: '29', 'ephemeral-storage': '18242267924' },
      conditions: [
        { type: 'MemoryPressure', status: 'False' },
        { type: 'Ready', status: opts.ready === false ? 'False' : 'True', reason: 'KubeletReady' },
      ],
    },
  };
}

function wireNodePool(name: string, spec: Json = {}): Json {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name, generation: 1, annotations: { 'karpenter.sh/nodepool-hash': '123', 'karpenter.sh/nodepool-hash-version': 'v3' } },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] }],
          expireAfter: '720h',
        },
      },
      disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '0s', budgets: [{ nodes: '10%' }] },
      ...spec,
    },
    status: { conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', message: '', lastTransitionTime: '2024-05-06T06:00:00Z', observedGeneration: 1 }], resources: { cpu: '4' } },
  };
}

const wireNodeClass = (name: string): Json => ({
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name, finalizers: ['karpenter.k8s.aws/termination'] },
  spec: {
    amiSelectorTerms: [{ alias: 'al2023@latest' }],
    subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'prod' } }],
    securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'prod' } }],
    role: 'KarpenterNodeRole-prod',
  },
  status: { amis: [{ id: 'ami-1', name: 'al2023' }] },
});

const wireDaemonSet = (namespace: string, name: string): Json => ({
  metadata: { name, namespace, generation: 1, annotations: { 'deprecated.daemonset.template.generation': '1' }, creationTimestamp: '2024-05-06T06:00:00Z' },
  spec: {
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name }, creationTimestamp: null },
      spec: { containers: [{ name, image: 'fluent-bit', resources: { requests: { cpu: '100m', memory: '128Mi' } } }], restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', schedulerName: 'default-scheduler', securityContext: {}, terminationGracePeriodSeconds: 30 },
    },
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
    revisionHistoryLimit: 10,
  },
  status: { currentNumberScheduled: 3, numberMisscheduled: 0, desiredNumberScheduled: 3, numberReady: 3 },
});

const wirePdb = (namespace: string, name: string, spec: Json): Json => ({
  metadata: { name, namespace, generation: 1 },
  spec: { selector: { matchLabels: { app: 'web' } }, ...spec },
  status: { currentHealthy: 3, desiredHealthy: 2, disruptionsAllowed: 1, expectedPods: 3, observedGeneration: 1 },
});

function claim(overrides: Partial<NodeClaim> = {}): NodeClaim {
  return {
    name: 'general-abc12',
    nodePool: 'general',
    nodeClass: 'default',
    state: 'Initialized',
    requirements: [
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] },
      { key: 'karpenter.k8s.aws/instance-cpu', operator: 'Gte', values: ['4'] },
    ],
    instanceTypes: ['m7g.large', 'm7g.xlarge'],
    resources: { cpu: 1500, memory: 2048.5, pods: 3 },
    labels: { team: 'a' },
    taints: [],
    startupTaints: [{ key: 'example.com/warming', effect: 'NoSchedule' }],
    nominatedPods: ['default/web-1'],
    instanceId: 'i-0abc',
    providerId: 'aws:///eu-west-1a/i-0abc',
    nodeName: 'ip-10-0-1-2.eu-west-1.compute.internal',
    instanceType: 'm7g.large',
    zone: 'eu-west-1a',
    capacityType: 'spot',
    price: 0.04,
    allocatable: { cpu: 1930, memory: 7120.25, pods: 29 },
    createdAt: '2024-05-06T07:00:00Z',
    launchedAt: '2024-05-06T07:00:05Z',
    registeredAt: '2024-05-06T07:00:40Z',
    initializedAt: '2024-05-06T07:00:55Z',
    version: 4,
    ...overrides,
  };
}

// ---- harness --------------------------------------------------------------------------------------------------------

let api: FakeKubeApiServer;
let warnings: string[];
let cluster: KubernetesCluster;

beforeEach(async () => {
  api = await startFakeKubeApiServer({ acceptToken: (t) => t === TOKEN });
  warnings = [];
  cluster = new KubernetesCluster({ server: api.url, token: async () => TOKEN, clock: { now: () => NOW }, allowInsecureHttp: true, log: { warn: (m) => warnings.push(m) } });
});

afterEach(async () => {
  await api.close();
});

describe('KubernetesCluster', () => {
  describe('authentication', () => {
    it('sends Authorization: Bearer <token> from the provider on every request', async () => {
      let calls = 0;
      const c = new KubernetesCluster({ server: api.url, token: async () => (calls++, TOKEN), clock: { now: () => NOW }, allowInsecureHttp: true });
      await c.listNodes();
      await c.listNodePools();
      expect(calls).toBe(2);
      expect(api.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${TOKEN}`, `Bearer ${TOKEN}`]);
    });

    it('turns a 401 into a KubernetesApiError with status and reason', async () => {
      const c = new KubernetesCluster({ server: api.url, token: async () => 'k8s-aws-v1.stale', clock: { now: () => NOW }, allowInsecureHttp: true });
      const error = await c.listNodes().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(KubernetesApiError);
      expect(error).toMatchObject({ status: 401 });
    });
  });

  describe('listPods', () => {
    it('pages through 3 pages with limit and continue, asking only for non-terminal pods', async () => {
      for (let i = 0; i < 1203; i++) api.put('pods', wirePod('default', `web-${i}`));
      api.put('pods', wirePod('default', 'done', { phase: 'Succeeded' }));
      api.put('pods', wirePod('default', 'crashed', { phase: 'Failed' }));
      const pods = await cluster.listPods();
      expect(pods).toHaveLength(1203);
      const lists = api.requestsTo('GET', '/api/v1/pods');
      expect(lists).toHaveLength(3);
      expect(lists.map((r) => r.query.get('limit'))).toEqual(['500', '500', '500']);
      expect(lists.map((r) => r.query.get('fieldSelector'))).toEqual([NON_TERMINAL_POD_SELECTOR, NON_TERMINAL_POD_SELECTOR, NON_TERMINAL_POD_SELECTOR]);
      expect(lists[0]!.query.has('continue')).toBe(false);
      expect(lists[1]!.query.get('continue')).toBeTruthy();
      expect(new Set(pods.map((p) => p.name)).size).toBe(1203);
    });

    it('maps unschedulable from PodScheduled, owner from the controller reference, createdAt from creationTimestamp', async () => {
      api.put('pods', wirePod('shop', 'web-1', { unschedulable: true }));
      api.put('pods', wirePod('kube-system', 'fluent-bit-x', { phase: 'Running', nodeName: 'n1', owner: 'DaemonSet/fluent-bit' }));
      const [pending, running] = await cluster.listPods();
      expect(pending).toMatchObject({ namespace: 'shop', name: 'web-1', phase: 'Pending', unschedulable: true, owner: 'ReplicaSet/web-5d8f', createdAt: Date.parse('2024-05-06T07:00:00Z'), labels: { app: 'web' } });
      expect(pending!.uid).toMatch(/^uid-/);
      expect(pending!.resourceVersion).toMatch(/^\d+$/);
      expect(pending!.nodeName).toBeUndefined();
      expect(pending!.spec.containers[0]!.resources?.requests).toEqual({ cpu: '500m', memory: '1Gi' });
      expect(running).toMatchObject({ phase: 'Running', unschedulable: false, nodeName: 'n1', owner: 'DaemonSet/fluent-bit' });
    });

    it('skips a pod whose spec does not parse, with a message naming it', async () => {
      api.put('pods', wirePod('default', 'good'));
      api.put('pods', wirePod('default', 'bad', { cpu: 'lots' }));
      const pods = await cluster.listPods();
      expect(pods.map((p) => p.name)).toEqual(['good']);
      expect(warnings).toEqual([expect.stringMatching(/^Skipping Pod "default\/bad": spec\.containers\[0\]\.resources\.requests\.cpu: .*lots/)]);
    });

    it('reads a pod with fields of a newer Kubernetes (a PodSpec and a Container field Skiff does not know), dropping them: the API server validated it', async () => {
      const pod = wirePod('default', 'newer');
      const spec = pod.spec as Json & { containers: Json[] };
      api.put('pods', { ...pod, spec: { ...spec, futurePodField: { a: 1 }, containers: [{ ...spec.containers[0]!, futureContainerField: true, resources: { ...(spec.containers[0]!.resources as Json), futureResourcesField: [] } }] } });
      const pods = await cluster.listPods();
      expect(pods.map((p) => p.name)).toEqual(['newer']);
      expect(pods[0]!.spec.containers[0]!.resources?.requests).toEqual({ cpu: '500m', memory: '1Gi' });
      expect(warnings).toEqual([]);
    });
  });

  describe('lastPodEventTimes', () => {
    // Karpenter's podevents triggers, read from the timestamps the pods still show.
    const bound = (namespace: string, name: string, node: string, status: Json, metadata: Json = {}, owner = 'ReplicaSet/web-5d8f'): Json => {
      const pod = wirePod(namespace, name, { phase: 'Running', nodeName: node, owner });
      return { ...pod, metadata: { ...(pod.metadata as Json), ...metadata }, status: { ...(pod.status as Json), ...status } };
    };
    it('takes per node the latest bind, completion or deletion request, leaving out DaemonSet and unbound pods', async () => {
      const scheduled = (at: string) => ({ conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: at }] });
      api.put('pods', bound('default', 'a', 'n1', scheduled('2024-05-06T07:00:00Z')));
      api.put('pods', bound('default', 'b', 'n1', scheduled('2024-05-06T07:05:00Z')));
      // A Job pod that finished at 07:20 on n2 (terminal pods stay listed until their TTL).
      api.put('pods', bound('default', 'job', 'n2', { ...scheduled('2024-05-06T07:10:00Z'), phase: 'Succeeded', containerStatuses: [{ name: 'a', state: { terminated: { exitCode: 0, finishedAt: '2024-05-06T07:20:00Z' } } }] }));
      // A pod being deleted on n3: asked at 07:30 with a 30 s grace period.
      api.put('pods', bound('default', 'going', 'n3', scheduled('2024-05-06T07:01:00Z'), { deletionTimestamp: '2024-05-06T07:30:30Z', deletionGracePeriodSeconds: 30 }));
      // A DaemonSet pod bound later on n1 does not count, nor does a pending pod.
      api.put('pods', bound('kube-system', 'agent', 'n1', scheduled('2024-05-06T08:00:00Z'), {}, 'DaemonSet/agent'));
      api.put('pods', wirePod('default', 'pending', { unschedulable: true }));
      const times = await cluster.lastPodEventTimes();
      expect(times.complete).toBe(false);
      expect(Object.fromEntries([...times.byNode].map(([n, at]) => [n, new Date(at).toISOString()]))).toEqual({
        n1: '2024-05-06T07:05:00.000Z',
        n2: '2024-05-06T07:20:00.000Z',
        n3: '2024-05-06T07:30:00.000Z',
      });
      expect(api.requestsTo('GET', '/api/v1/pods').map((r) => r.query.get('fieldSelector'))).toEqual([BOUND_POD_SELECTOR]);
    });
  });

  describe('listNodes', () => {
    it('maps providerID, Ready, taints and allocatable in canonical units', async () => {
      api.put('nodes', wireNode('n1', { taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule', timeAdded: '2024-05-06T07:00:00Z' }] }));
      api.put('nodes', wireNode('n2', { ready: false }));
      const [n1, n2] = await cluster.listNodes();
      expect(n1).toEqual({
        name: 'n1',
        providerId: 'aws:///eu-west-1a/i-n1',
        labels: { 'kubernetes.io/hostname': 'n1', 'karpenter.sh/nodepool': 'general' },
        annotations: { 'node.alpha.kubernetes.io/ttl': '0' },
        taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }],
        allocatable: { cpu: 1930, memory: 7291060 / 1024, pods: 29, 'ephemeral-storage': 18242267924 / 1024 / 1024 },
        ready: true,
        createdAt: Date.parse('2024-05-06T06:00:00Z'),
      });
      expect(n2!.ready).toBe(false);
    });

    it('reads the deletionTimestamp and finalizers of a Node being deleted', async () => {
      const wire = wireNode('n1');
      api.put('nodes', { ...wire, metadata: { ...(wire.metadata as Json), deletionTimestamp: '2024-05-06T08:00:00Z', finalizers: ['karpenter.sh/termination'] } });
      const [n1] = await cluster.listNodes();
      expect(n1).toMatchObject({ deletionTimestamp: Date.parse('2024-05-06T08:00:00Z'), finalizers: ['karpenter.sh/termination'] });
    });

    it('skips a node with a malformed quantity', async () => {
      api.put('nodes', wireNode('n1', { cpu: 'two' }));
      api.put('nodes', wireNode('n2'));
      expect((await cluster.listNodes()).map((n) => n.name)).toEqual(['n2']);
      expect(warnings).toEqual([expect.stringContaining('Node "n1": status.allocatable')]);
    });
  });

  describe('listNodePools and listNodeClasses', () => {
    it('parses and defaults NodePools from /apis/karpenter.sh/v1/nodepools', async () => {
      api.put('nodepools', wireNodePool('general', { disruption: undefined }));
      const [pool] = await cluster.listNodePools();
      expect(api.requestsTo('GET', '/apis/karpenter.sh/v1/nodepools')).toHaveLength(1);
      expect(pool!.metadata.name).toBe('general');
      expect(pool!.spec.disruption.budgets).toEqual([{ nodes: '10%' }]);
    });

    it('skips a malformed NodePool with a message and keeps the others', async () => {
      api.put('nodepools', wireNodePool('good'));
      const broken = wireNodePool('broken');
      ((broken.spec as Json).template as { spec: { requirements: Json[] } }).spec.requirements = [{ key: 'karpenter.sh/capacity-type', operator: 'Near', values: ['spot'] }];
      api.put('nodepools', broken);
      const pools = await cluster.listNodePools();
      expect(pools.map((p) => p.metadata.name)).toEqual(['good']);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/^Skipping NodePool "broken": spec\.template\.spec\.requirements\[0\]\.operator: /);
    });

    it('pages NodePools with limit and continue', async () => {
      const c = new KubernetesCluster({ server: api.url, token: async () => TOKEN, clock: { now: () => NOW }, allowInsecureHttp: true, pageSize: 2 });
      for (let i = 0; i < 5; i++) api.put('nodepools', wireNodePool(`pool-${i}`));
      expect(await c.listNodePools()).toHaveLength(5);
      expect(api.requestsTo('GET', '/apis/karpenter.sh/v1/nodepools').map((r) => r.query.get('limit'))).toEqual(['2', '2', '2']);
    });

    it('parses EC2NodeClasses from /apis/karpenter.k8s.aws/v1/ec2nodeclasses', async () => {
      api.put('ec2nodeclasses', wireNodeClass('default'));
      const [nodeClass] = await cluster.listNodeClasses();
      expect(nodeClass!.spec.role).toBe('KarpenterNodeRole-prod');
      expect(nodeClass!.spec.metadataOptions).toBeDefined();
    });
  });

  describe('listDaemonSets and listPodDisruptionBudgets', () => {
    it('parses list items that carry no apiVersion/kind, as the API server sends them', async () => {
      api.put('daemonsets', wireDaemonSet('kube-system', 'fluent-bit'));
      api.put('poddisruptionbudgets', wirePdb('shop', 'web-pdb', { minAvailable: 2 }));
      api.put('poddisruptionbudgets', wirePdb('shop', 'api-pdb', { maxUnavailable: '25%' }));
      const [ds] = await cluster.listDaemonSets();
      expect(ds).toMatchObject({ apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'fluent-bit', namespace: 'kube-system' } });
      expect(ds!.spec.template.spec.containers[0]!.resources?.requests).toEqual({ cpu: '100m', memory: '128Mi' });
      const pdbs = await cluster.listPodDisruptionBudgets();
      expect(pdbs.map((p) => [p.metadata.name, p.spec.minAvailable ?? p.spec.maxUnavailable])).toEqual([
        ['web-pdb', 2],
        ['api-pdb', '25%'],
      ]);
    });

    it('skips a PDB with both minAvailable and maxUnavailable', async () => {
      api.put('poddisruptionbudgets', wirePdb('shop', 'both', { minAvailable: 1, maxUnavailable: 1 }));
      expect(await cluster.listPodDisruptionBudgets()).toEqual([]);
      expect(warnings).toEqual([expect.stringContaining('PodDisruptionBudget "shop/both": spec.maxUnavailable: minAvailable and maxUnavailable cannot be both set')]);
    });
  });

  describe('patchNode', () => {
    it('sends one JSON merge patch: labels merge, null deletes, taints replace', async () => {
      api.put('nodes', { ...wireNode('n1', { taints: [{ key: 'old', effect: 'NoSchedule' }] }), metadata: { name: 'n1', labels: { keep: 'yes', drop: 'me' } } });
      await cluster.patchNode('n1', { labels: { 'karpenter.sh/registered': 'true', drop: null }, taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }] });
      const [request] = api.requestsTo('PATCH', '/api/v1/nodes/n1');
      expect(request!.headers['content-type']).toBe('application/merge-patch+json');
      expect(request!.body).toEqual({ metadata: { labels: { 'karpenter.sh/registered': 'true', drop: null } }, spec: { taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }] } });
      const stored = api.get('nodes', 'n1')!;
      expect((stored.metadata as Json).labels).toEqual({ keep: 'yes', 'karpenter.sh/registered': 'true' });
      expect((stored.spec as Json).taints).toEqual([{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }]);
    });

    it('merges annotations into metadata.annotations, null deleting one', async () => {
      api.put('nodes', { ...wireNode('n1'), metadata: { name: 'n1', annotations: { keep: 'yes', drop: 'me' } } });
      await cluster.patchNode('n1', { annotations: { 'karpenter.sh/do-not-disrupt': 'true', drop: null } });
      expect(api.requestsTo('PATCH', '/api/v1/nodes/n1')[0]!.body).toEqual({ metadata: { annotations: { 'karpenter.sh/do-not-disrupt': 'true', drop: null } } });
      expect((api.get('nodes', 'n1')!.metadata as Json).annotations).toEqual({ keep: 'yes', 'karpenter.sh/do-not-disrupt': 'true' });
    });

    it('replaces the finalizer list as metadata.finalizers', async () => {
      const wire = wireNode('n1');
      api.put('nodes', { ...wire, metadata: { ...(wire.metadata as Json), finalizers: ['example.com/keep', 'karpenter.sh/termination'] } });
      await cluster.patchNode('n1', { finalizers: ['example.com/keep'] });
      expect(api.requestsTo('PATCH', '/api/v1/nodes/n1')[0]!.body).toEqual({ metadata: { finalizers: ['example.com/keep'] } });
      expect((api.get('nodes', 'n1')!.metadata as Json).finalizers).toEqual(['example.com/keep']);
    });

    it('leaves taints alone when none are given', async () => {
      api.put('nodes', wireNode('n1', { taints: [{ key: 'old', effect: 'NoSchedule' }] }));
      await cluster.patchNode('n1', { labels: { a: 'b' } });
      expect(api.requestsTo('PATCH', '/api/v1/nodes/n1')[0]!.body).toEqual({ metadata: { labels: { a: 'b' } } });
      expect((api.get('nodes', 'n1')!.spec as Json).taints).toEqual([{ key: 'old', effect: 'NoSchedule' }]);
    });

    it('throws NotFoundError for a missing Node', async () => {
      const error = await cluster.patchNode('ghost', { labels: { a: 'b' } }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(NotFoundError);
      expect(error).toMatchObject({ key: 'Node/ghost', message: expect.stringContaining('404 NotFound') });
    });
  });

  describe('deleteNode', () => {
    it('deletes the Node, and a second delete of the same Node is not an error', async () => {
      api.put('nodes', wireNode('n1'));
      await cluster.deleteNode('n1');
      expect(api.get('nodes', 'n1')).toBeUndefined();
      await expect(cluster.deleteNode('n1')).resolves.toBeUndefined();
      expect(api.requestsTo('DELETE', '/api/v1/nodes/n1')).toHaveLength(2);
    });
  });

  describe('forceDeletePod', () => {
    it('DELETEs the pod with the grace period (at least 1 s), PDB or not, and returns gone for a missing pod', async () => {
      api.put('pods', wirePod('shop', 'web-1', { phase: 'Running', nodeName: 'n1' }));
      api.pdbBlocked.add('shop/web-1');
      expect(await cluster.forceDeletePod('shop', 'web-1', 0)).toBe('deleted');
      const [request] = api.requestsTo('DELETE', '/api/v1/namespaces/shop/pods/web-1');
      expect(request!.query.get('gracePeriodSeconds')).toBe('1');
      expect(api.get('pods', 'shop/web-1')).toBeUndefined();
      expect(await cluster.forceDeletePod('shop', 'web-1', 30)).toBe('gone');
    });
  });

  describe('evictPod', () => {
    it('returns evicted (201) after POSTing a policy/v1 Eviction', async () => {
      api.put('pods', wirePod('shop', 'web-1', { phase: 'Running', nodeName: 'n1' }));
      expect(await cluster.evictPod('shop', 'web-1')).toBe('evicted');
      const [request] = api.requestsTo('POST', '/api/v1/namespaces/shop/pods/web-1/eviction');
      expect(request!.headers['content-type']).toBe('application/json');
      expect(request!.body).toEqual({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'web-1', namespace: 'shop' } });
      expect(api.get('pods', 'shop/web-1')).toBeUndefined();
    });

    it('returns blocked when a PDB forbids the eviction (429 TooManyRequests)', async () => {
      api.put('pods', wirePod('shop', 'web-1', { phase: 'Running', nodeName: 'n1' }));
      api.pdbBlocked.add('shop/web-1');
      expect(await cluster.evictPod('shop', 'web-1')).toBe('blocked');
      expect(api.get('pods', 'shop/web-1')).toBeDefined();
    });

    it('returns gone for a pod that no longer exists (404)', async () => {
      expect(await cluster.evictPod('shop', 'ghost')).toBe('gone');
    });

    it('throws a retryable error on 500 (several PDBs select the pod)', async () => {
      api.failNext({ path: '/api/v1/namespaces/shop/pods/web-1/eviction', status: 500, reason: 'InternalError', message: 'This pod has more than one PodDisruptionBudget' });
      const error = await cluster.evictPod('shop', 'web-1').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiServerUnavailableError);
      expect(isThrottledError(error)).toBe(true);
    });
  });

  describe('error translation', () => {
    it('turns 429 into ThrottledError and 5xx into ApiServerUnavailableError (a ThrottledError)', async () => {
      api.failNext({ path: '/api/v1/nodes', status: 429, reason: 'TooManyRequests', message: 'too many requests, please try again later' });
      const throttled = await cluster.listNodes().catch((e: unknown) => e);
      expect(throttled).toBeInstanceOf(ThrottledError);
      expect(throttled).not.toBeInstanceOf(ApiServerUnavailableError);
      expect((throttled as Error).message).toBe('LIST Nodes failed: 429 TooManyRequests: too many requests, please try again later');

      api.failNext({ path: '/apis/apps/v1/daemonsets', status: 503, reason: 'ServiceUnavailable', message: 'the server is currently unable to handle the request' });
      const unavailable = await cluster.listDaemonSets().catch((e: unknown) => e);
      expect(unavailable).toBeInstanceOf(ApiServerUnavailableError);
      expect(unavailable).toMatchObject({ status: 503, reason: 'ServiceUnavailable' });
    });

    it('turns 409 into ConflictError and 403 into KubernetesApiError with status and reason', async () => {
      api.put('nodes', wireNode('n1'));
      api.failNext({ method: 'PATCH', path: '/api/v1/nodes/n1', status: 409, reason: 'Conflict', message: 'the object has been modified' });
      await expect(cluster.patchNode('n1', { labels: { a: 'b' } })).rejects.toBeInstanceOf(ConflictError);
      api.failNext({ method: 'DELETE', path: '/api/v1/nodes/n1', status: 403, reason: 'Forbidden', message: 'nodes "n1" is forbidden: User "skiff" cannot delete resource "nodes"' });
      const forbidden = await cluster.deleteNode('n1').catch((e: unknown) => e);
      expect(forbidden).toBeInstanceOf(KubernetesApiError);
      expect(forbidden).toMatchObject({ status: 403, reason: 'Forbidden', message: expect.stringContaining('cannot delete resource') });
    });

    it('restarts a list once when its continue token expired (410 Expired), and fails on a second expiry', async () => {
      const c = new KubernetesCluster({ server: api.url, token: async () => TOKEN, clock: { now: () => NOW }, allowInsecureHttp: true, pageSize: 2 });
      for (let i = 0; i < 3; i++) api.put('nodes', wireNode(`n${i}`));
      const continued = { path: '/api/v1/nodes', status: 410, reason: 'Expired', message: 'The provided continue parameter is too old', match: (r: { query: URLSearchParams }) => r.query.has('continue') };
      api.failNext(continued);
      expect((await c.listNodes()).map((n) => n.name)).toEqual(['n0', 'n1', 'n2']);
      expect(api.requestsTo('GET', '/api/v1/nodes').map((r) => r.query.has('continue'))).toEqual([false, true, false, true]);
      api.failNext({ ...continued, times: 2 });
      await expect(c.listNodes()).rejects.toMatchObject({ status: 410, reason: 'Expired' });
    });
  });

  describe('recordEvent', () => {
    it('creates a core/v1 Event about the object, with details in an annotation', async () => {
      await cluster.recordEvent({ type: 'Warning', reason: 'FailedScheduling', object: 'Pod/shop/web-1', message: 'no NodePool fits', details: { general: 'cpu' } });
      const [request] = api.requestsTo('POST', '/api/v1/namespaces/shop/events');
      expect(request!.headers['content-type']).toBe('application/json');
      const body = request!.body as Json;
      expect(body).toMatchObject({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { namespace: 'shop', name: expect.stringMatching(/^web-1\.[0-9a-f]{16}$/), annotations: { [EVENT_DETAILS_ANNOTATION]: '{"general":"cpu"}' } },
        involvedObject: { kind: 'Pod', namespace: 'shop', name: 'web-1', apiVersion: 'v1' },
        type: 'Warning',
        reason: 'FailedScheduling',
        message: 'no NodePool fits',
        source: { component: 'skiff' },
        count: 1,
        firstTimestamp: new Date(NOW).toISOString(),
        lastTimestamp: new Date(NOW).toISOString(),
      });
    });

    it('bumps count on a repeat instead of creating a second Event', async () => {
      const event = { type: 'Normal', reason: 'Launched', object: 'Node/ip-10-0-1-2.ec2.internal', message: 'launched m7g.large' } as const;
      await cluster.recordEvent(event);
      await cluster.recordEvent(event);
      await cluster.recordEvent(event);
      const events = [...api.objects.events!.values()];
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ count: 3, metadata: { namespace: 'default' }, involvedObject: { kind: 'Node', name: 'ip-10-0-1-2.ec2.internal', uid: 'ip-10-0-1-2.ec2.internal' } });
      const patches = api.requestsTo('PATCH', /^\/api\/v1\/namespaces\/default\/events\//);
      expect(patches.map((p) => p.headers['content-type'])).toEqual(['application/merge-patch+json', 'application/merge-patch+json']);
    });

    it('rejects an object reference that is not Kind/name or Kind/namespace/name', async () => {
      await expect(cluster.recordEvent({ type: 'Normal', reason: 'X', object: 'web-1', message: 'm' })).rejects.toBeInstanceOf(RangeError);
    });
  });

  describe('mirrorNodeClaim', () => {
    it('server-side applies the NodeClaim and its status so kubectl -o wide has every column', async () => {
      await cluster.mirrorNodeClaim(claim());
      const [apply, status] = api.requestsTo('PATCH', /^\/apis\/karpenter\.sh\/v1\/nodeclaims\//);
      expect(apply!.path).toBe('/apis/karpenter.sh/v1/nodeclaims/general-abc12');
      expect(apply!.headers['content-type']).toBe('application/apply-patch+yaml');
      expect(apply!.query.get('fieldManager')).toBe('skiff');
      expect(apply!.query.get('force')).toBe('true');
      expect(status!.path).toBe('/apis/karpenter.sh/v1/nodeclaims/general-abc12/status');
      const stored = api.get('nodeclaims', 'general-abc12')!;
      expect(stored.metadata).toMatchObject({
        labels: {
          team: 'a',
          'karpenter.sh/nodepool': 'general',
          'karpenter.k8s.aws/ec2nodeclass': 'default',
          'node.kubernetes.io/instance-type': 'm7g.large',
          'topology.kubernetes.io/zone': 'eu-west-1a',
          'karpenter.sh/capacity-type': 'spot',
        },
      });
      expect(stored.spec).toEqual({
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        requirements: [
          { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] },
          { key: 'karpenter.k8s.aws/instance-cpu', operator: 'Gt', values: ['3'] },
        ],
        resources: { requests: { cpu: '1500m', memory: '2097664Ki', pods: '3' } },
        startupTaints: [{ key: 'example.com/warming', effect: 'NoSchedule' }],
      });
      const s = stored.status as { providerID: string; nodeName: string; conditions: { type: string; status: string; reason: string }[] };
      expect(s.providerID).toBe('aws:///eu-west-1a/i-0abc');
      expect(s.nodeName).toBe('ip-10-0-1-2.eu-west-1.compute.internal');
      expect(s.conditions.map((c) => `${c.type}=${c.status}`)).toEqual(['Launched=True', 'Registered=True', 'Initialized=True', 'Ready=True']);
    });

    it('owns the NodeClaim object by its NodePool when given the NodePool uid, so deleting the NodePool garbage-collects it', async () => {
      await cluster.mirrorNodeClaim(claim(), { nodePoolUid: 'np-uid-1' });
      expect(api.get('nodeclaims', 'general-abc12')!.metadata).toMatchObject({
        ownerReferences: [{ apiVersion: 'karpenter.sh/v1', kind: 'NodePool', name: 'general', uid: 'np-uid-1', blockOwnerDeletion: true }],
      });
      await cluster.mirrorNodeClaim({ ...claim(), name: 'general-zzz99' });
      expect((api.get('nodeclaims', 'general-zzz99')!.metadata as Json)['ownerReferences']).toBeUndefined();
    });

    it('is idempotent: applying the same record twice stores the same object', async () => {
      await cluster.mirrorNodeClaim(claim());
      const first = structuredClone(api.get('nodeclaims', 'general-abc12')!);
      await cluster.mirrorNodeClaim(claim());
      const second = api.get('nodeclaims', 'general-abc12')!;
      expect({ ...second, metadata: { ...(second.metadata as Json), resourceVersion: 'x' } }).toEqual({ ...first, metadata: { ...(first.metadata as Json), resourceVersion: 'x' } });
    });

    it('shows a pending claim as Launched=Unknown and Ready=Unknown, then deletes the mirror of a Deleted claim', async () => {
      await cluster.mirrorNodeClaim(claim({ state: 'Pending', launchedAt: undefined, registeredAt: undefined, initializedAt: undefined, instanceType: undefined, zone: undefined, capacityType: undefined, providerId: undefined, nodeName: undefined }));
      const status = api.get('nodeclaims', 'general-abc12')!.status as { conditions: { type: string; status: string; reason: string; message: string }[] };
      expect(status.conditions.map((c) => `${c.type}=${c.status}:${c.reason}`)).toEqual([
        'Launched=Unknown:AwaitingReconciliation',
        'Registered=Unknown:AwaitingReconciliation',
        'Initialized=Unknown:AwaitingReconciliation',
        'Ready=Unknown:UnhealthyDependents',
      ]);
      await cluster.mirrorNodeClaim(claim({ state: 'Deleted' }));
      expect(api.get('nodeclaims', 'general-abc12')).toBeUndefined();
    });

    it('stamps the record version last, with a merge patch outside the applied configuration', async () => {
      await cluster.mirrorNodeClaim(claim({ version: 7 }));
      const patches = api.requestsTo('PATCH', /^\/apis\/karpenter\.sh\/v1\/nodeclaims\//);
      expect(patches.map((p) => `${p.path} ${String(p.headers['content-type'])}`)).toEqual([
        '/apis/karpenter.sh/v1/nodeclaims/general-abc12 application/apply-patch+yaml',
        '/apis/karpenter.sh/v1/nodeclaims/general-abc12/status application/apply-patch+yaml',
        '/apis/karpenter.sh/v1/nodeclaims/general-abc12 application/merge-patch+json',
      ]);
      expect(patches[0]!.body).not.toHaveProperty(['metadata', 'annotations', NODECLAIM_VERSION_ANNOTATION]);
      expect(patches[2]!.body).toEqual({ metadata: { annotations: { [NODECLAIM_VERSION_ANNOTATION]: '7' } } });
      expect((api.get('nodeclaims', 'general-abc12')!.metadata as Json).annotations).toEqual({ 'skiff.dev/nodeclaim-state': 'Initialized', [NODECLAIM_VERSION_ANNOTATION]: '7' });
    });

    it('does not stamp the version when the status apply fails, so the mirror reads as out of date', async () => {
      api.failNext({ method: 'PATCH', path: '/apis/karpenter.sh/v1/nodeclaims/general-abc12/status', status: 500, reason: 'InternalError' });
      await expect(cluster.mirrorNodeClaim(claim({ version: 7 }))).rejects.toBeInstanceOf(ThrottledError);
      expect(await cluster.listNodeClaimMirrors()).toEqual([{ name: 'general-abc12' }]);
    });

    it("puts the termination finalizer on the mirror; deleteNodeClaimMirror removes it (keeping others') and deletes", async () => {
      await cluster.mirrorNodeClaim(claim());
      const stored = api.get('nodeclaims', 'general-abc12')!;
      expect((stored.metadata as Json).finalizers).toEqual(['karpenter.sh/termination']);
      api.put('nodeclaims', { ...stored, metadata: { ...(stored.metadata as Json), finalizers: ['example.com/keep', 'karpenter.sh/termination'], deletionTimestamp: '2026-03-02T08:10:00Z' } });
      expect(await cluster.listNodeClaimMirrors()).toEqual([expect.objectContaining({ name: 'general-abc12', deletionTimestamp: Date.parse('2026-03-02T08:10:00Z') })]);
      await cluster.deleteNodeClaimMirror('general-abc12');
      const patch = api.requestsTo('PATCH', '/apis/karpenter.sh/v1/nodeclaims/general-abc12').at(-1)!;
      expect(patch.body).toEqual({ metadata: { finalizers: ['example.com/keep'] } });
      expect(api.requestsTo('DELETE', '/apis/karpenter.sh/v1/nodeclaims/general-abc12')).toHaveLength(1);
    });

    it('deleteNodeClaimMirror deletes, and deleting a missing mirror is not an error', async () => {
      await cluster.mirrorNodeClaim(claim());
      await cluster.deleteNodeClaimMirror('general-abc12');
      expect(api.get('nodeclaims', 'general-abc12')).toBeUndefined();
      await expect(cluster.deleteNodeClaimMirror('general-abc12')).resolves.toBeUndefined();
    });
  });

  describe('listNodeClaimMirrors', () => {
    it("lists Skiff's mirrors with their stamped version, across pages, and leaves out NodeClaims of another controller", async () => {
      const c = new KubernetesCluster({ server: api.url, token: async () => TOKEN, clock: { now: () => NOW }, allowInsecureHttp: true, pageSize: 2 });
      await c.mirrorNodeClaim(claim({ name: 'general-a', version: 3 }));
      await c.mirrorNodeClaim(claim({ name: 'general-b', version: 12 }));
      api.put('nodeclaims', { metadata: { name: 'general-c', annotations: { 'skiff.dev/nodeclaim-state': 'Launched', [NODECLAIM_VERSION_ANNOTATION]: 'garbage' } }, spec: {} });
      api.put('nodeclaims', { metadata: { name: 'karpenter-xyz', labels: { 'karpenter.sh/nodepool': 'default' } }, spec: {} });
      const mirrors = await c.listNodeClaimMirrors();
      expect(mirrors.sort((x, y) => x.name.localeCompare(y.name))).toEqual([{ name: 'general-a', version: 3 }, { name: 'general-b', version: 12 }, { name: 'general-c' }]);
      expect(api.requestsTo('GET', '/apis/karpenter.sh/v1/nodeclaims').length).toBeGreaterThan(1);
    });

    it('fails with a NotFoundError when the NodeClaim CRD is not installed (404)', async () => {
      api.failNext({ method: 'GET', path: '/apis/karpenter.sh/v1/nodeclaims', status: 404, reason: 'NotFound' });
      await expect(cluster.listNodeClaimMirrors()).rejects.toBeInstanceOf(NotFoundError);
    });
  });
});
