import { beforeEach, describe, expect, it } from 'vitest';
import { REGISTRATION_TTL_MS } from '../../shared/controllers/launch.js';
import { INSTANCE_GC_MIN_AGE_MS, initializationBlocker, reconcileLifecycle, type LifecycleDeps } from '../../shared/controllers/lifecycle.js';
import { parseManifests } from '../../shared/core/api/manifest.js';
import type { Taint } from '../../shared/core/api/kubernetes.js';
import type { NodeClaim } from '../../shared/core/api/nodeclaim.js';
import { loadCatalog } from '../../shared/core/instancetypes/catalog.js';
import { ThrottledError } from '../../shared/core/errors.js';
import type { ClusterNode } from '../../shared/ports/cluster.js';
import { seededIds } from '../../shared/ports/ids.js';
import { MemoryNodeClaimStore, type NodeClaimStoreRequest } from '../../shared/sim/memory-nodeclaim-store.js';
import { SimulatedCluster, type SimNode } from '../../shared/sim/simulated-cluster.js';
import { SimulatedEc2, type SimInstance } from '../../shared/sim/simulated-ec2.js';
import { VirtualClock } from '../../shared/sim/virtual-clock.js';
import { GENERAL_POOL } from '../support/provisioner-harness.js';

const START = Date.parse('2026-03-02T08:00:00Z');
/** The simulated kubelet joins 45 s after launch and turns Ready 15 s later. */
const JOIN_MS = 45_000;
const READY_MS = 15_000;

/**
 * The lifecycle controller on the ports' in-memory implementations: the NodeClaim store (the DynamoDB adapter's
 * semantics, proven by the contract suite in test/support/nodeclaim-store-contract.ts; it records calls and injects
 * faults), simulated cluster and EC2, virtual clock.
 */
class Harness {
  readonly clock = new VirtualClock(START);
  readonly cluster: SimulatedCluster;
  readonly ec2: SimulatedEc2;
  readonly store: MemoryNodeClaimStore;
  readonly deps: LifecycleDeps;

  constructor(options: { registrationDelayMs?: number } = {}) {
    const ids = seededIds(11);
    this.cluster = new SimulatedCluster(this.clock, { region: 'us-west-2', ids, registerWithUnregisteredTaint: true });
    this.ec2 = new SimulatedEc2(this.clock, {
      region: 'us-west-2',
      catalog: loadCatalog(),
      vmMemoryOverheadPercent: 0.075,
      clusterName: 'test',
      registrationDelayMs: options.registrationDelayMs ?? JOIN_MS,
      onRegister: (i) => this.cluster.registerNode(i),
    });
    this.store = new MemoryNodeClaimStore({ cluster: 'test' });
    for (const m of parseManifests(GENERAL_POOL, 'pool.yaml')) this.cluster.apply(m);
    this.deps = { cluster: this.cluster, cloud: this.ec2, store: this.store, clock: this.clock };
  }

  /** Launches an instance for NodeClaim `name` and records it `Launched` (the provisioner's steps 1–3). */
  async launch(name: string, extra: Partial<NodeClaim> = {}, startupTaints: readonly Taint[] = []): Promise<{ claim: NodeClaim; instance: SimInstance }> {
    const instance = await this.instance(name, startupTaints);
    const iso = new Date(this.clock.now()).toISOString();
    const claim = await this.store.create({
      name,
      nodePool: 'general',
      nodeClass: 'default',
      state: 'Launched',
      requirements: [],
      instanceTypes: ['m5.large'],
      resources: { cpu: 500, memory: 1024, pods: 1 },
      labels: { 'team.example.com/owner': 'payments' },
      taints: [],
      startupTaints,
      nominatedPods: [],
      instanceId: instance.instanceId,
      providerId: `aws:///${instance.zone}/${instance.instanceId}`,
      instanceType: 'm5.large',
      zone: instance.zone,
      capacityType: 'on-demand',
      createdAt: iso,
      launchedAt: iso,
      ...extra,
    });
    return { claim, instance };
  }

  /** An EC2 instance launched as if for NodeClaim `name` (no record is written). */
  async instance(name: string, startupTaints: readonly Taint[] = []): Promise<SimInstance> {
    await this.ec2.create({
      nodeClaim: name,
      nodePool: 'general',
      nodeClass: 'default',
      capacityType: 'on-demand',
      overrides: [{ instanceType: 'm5.large', zone: 'us-west-2a', price: 0.096 }],
      tags: { 'eks:eks-cluster-name': 'test', 'karpenter.sh/nodepool': 'general', 'karpenter.sh/nodeclaim': name, 'skiff.dev/cluster': 'test' },
      labels: { 'karpenter.sh/nodepool': 'general' },
      taints: [],
      startupTaints,
    });
    return this.ec2.instances.at(-1)!;
  }

  reconcile() {
    return reconcileLifecycle(this.deps);
  }

  async advance(ms: number): Promise<void> {
    await this.clock.runUntil(this.clock.now() + ms);
  }

  claim(name: string): Promise<NodeClaim | undefined> {
    return this.store.get(name);
  }

  nodeOf(instance: SimInstance): SimNode | undefined {
    return [...this.cluster.nodes.values()].find((n) => n.instanceId === instance.instanceId);
  }

  events(reason: string) {
    return this.cluster.events.filter((e) => e.reason === reason);
  }
}

let h: Harness;

beforeEach(() => {
  h = new Harness();
});

describe('reconcileLifecycle', () => {
  describe('registration', () => {
    it('does nothing while the instance has no Node', async () => {
      await h.launch('general-a');
      const report = await h.reconcile();
      expect(report.registered).toEqual([]);
      expect((await h.claim('general-a'))?.state).toBe('Launched');
    });

    it('registers a Launched NodeClaim when its Node joins: labels, unregistered taint removed, registeredAt and node name', async () => {
      const { instance } = await h.launch('general-a');
      await h.advance(JOIN_MS);
      const node = h.nodeOf(instance)!;
      expect(node.taints.map((t) => t.key)).toContain('karpenter.sh/unregistered');

      const report = await h.reconcile();

      expect(report.registered).toEqual(['general-a']);
      const claim = await h.claim('general-a');
      expect(claim).toMatchObject({ state: 'Registered', nodeName: node.name, registeredAt: '2026-03-02T08:00:45.000Z' });
      expect(node.labels).toMatchObject({
        'workload-type': 'general',
        'karpenter.sh/nodepool': 'general',
        'karpenter.sh/registered': 'true',
        'team.example.com/owner': 'payments',
      });
      expect(node.labels['karpenter.sh/initialized']).toBeUndefined();
      expect(node.taints.map((t) => t.key)).not.toContain('karpenter.sh/unregistered');
      expect(node.finalizers).toEqual(['karpenter.sh/termination']);
      expect(h.events('Registered')).toHaveLength(1);
    });

    it("copies the NodeClaim's annotations (its NodePool template's) onto the Node", async () => {
      const { instance } = await h.launch('general-a', { annotations: { 'karpenter.sh/do-not-disrupt': 'true', 'example.com/team': 'a' } });
      await h.advance(JOIN_MS);
      await h.reconcile();
      expect(h.nodeOf(instance)!.annotations).toEqual({ 'karpenter.sh/do-not-disrupt': 'true', 'example.com/team': 'a' });
    });
  });

  describe('initialization', () => {
    it('initializes a Registered NodeClaim once its Node is Ready', async () => {
      const { instance } = await h.launch('general-a');
      await h.advance(JOIN_MS);
      expect((await h.reconcile()).initialized).toEqual([]);
      await h.advance(READY_MS);

      const report = await h.reconcile();

      expect(report.initialized).toEqual(['general-a']);
      expect(await h.claim('general-a')).toMatchObject({ state: 'Initialized', initializedAt: '2026-03-02T08:01:00.000Z' });
      expect(h.nodeOf(instance)!.labels['karpenter.sh/initialized']).toBe('true');
    });

    it('registers and initializes in one pass when the Node is already Ready', async () => {
      await h.launch('general-a');
      await h.advance(JOIN_MS + READY_MS);
      const report = await h.reconcile();
      expect(report).toMatchObject({ registered: ['general-a'], initialized: ['general-a'] });
    });

    it('waits while a startup taint remains on the Node', async () => {
      const startup: Taint = { key: 'example.com/agent-not-ready', effect: 'NoSchedule' };
      const { instance } = await h.launch('general-a', {}, [startup]);
      await h.advance(JOIN_MS + READY_MS);
      const node = h.nodeOf(instance)!;
      await h.cluster.patchNode(node.name, { taints: [...node.taints, startup] });
      expect((await h.reconcile()).initialized).toEqual([]);
      await h.cluster.patchNode(node.name, { taints: node.taints.filter((t) => t.key !== startup.key) });
      expect((await h.reconcile()).initialized).toEqual(['general-a']);
    });

    describe('initializationBlocker', () => {
      const claim = { startupTaints: [{ key: 'example.com/s', effect: 'NoSchedule' }], resources: { cpu: 1000, 'nvidia.com/gpu': 1 } } as unknown as NodeClaim;
      const node = (over: Partial<ClusterNode>): ClusterNode => ({ name: 'n', providerId: 'aws:///a/i-1', labels: {}, annotations: {}, taints: [], allocatable: { cpu: 2000, 'nvidia.com/gpu': 1 }, ready: true, createdAt: 0, ...over });
      it.each([
        ['a Ready node with everything registered', node({}), undefined],
        ['a NotReady node', node({ ready: false }), 'node is not Ready'],
        ['a startup taint (same key and effect)', node({ taints: [{ key: 'example.com/s', effect: 'NoSchedule' }] }), 'startup taint example.com/s is still present'],
        ['the startup key with another effect', node({ taints: [{ key: 'example.com/s', effect: 'NoExecute' }] }), undefined],
        ['an ephemeral taint', node({ taints: [{ key: 'node.cloudprovider.kubernetes.io/uninitialized', effect: 'NoSchedule' }] }), 'ephemeral taint node.cloudprovider.kubernetes.io/uninitialized is still present'],
        ['a readiness gate taint', node({ taints: [{ key: 'readiness.k8s.io/network', effect: 'NoSchedule' }] }), 'ephemeral taint readiness.k8s.io/network is still present'],
        ['a requested extended resource at zero', node({ allocatable: { cpu: 2000 } }), 'extended resource nvidia.com/gpu is not registered'],
      ])('%s → %s', (_, n, expected) => {
        expect(initializationBlocker(claim, n)).toBe(expected);
      });
    });
  });

  describe('liveness', () => {
    it('terminates a NodeClaim not registered 15 minutes after launch (RegistrationTimeout), not a second earlier', async () => {
      h = new Harness({ registrationDelayMs: 24 * 3600_000 });
      const { instance } = await h.launch('general-a');
      await h.advance(REGISTRATION_TTL_MS);
      expect((await h.reconcile()).registrationTimeouts).toEqual([]);
      await h.advance(1000);

      const report = await h.reconcile();

      expect(report.registrationTimeouts).toEqual(['general-a']);
      expect(await h.claim('general-a')).toMatchObject({ state: 'Deleted', deletionReason: 'RegistrationTimeout', deletedAt: '2026-03-02T08:15:01.000Z' });
      expect(instance.state).toBe('terminated');
      expect(h.events('RegistrationTimeout')).toEqual([expect.objectContaining({ type: 'Warning', object: 'NodeClaim/general-a' })]);
    });
  });

  describe('garbage collection', () => {
    it('terminates an instance with no NodeClaim once it is older than 30 s, not before', async () => {
      const orphan = await h.instance('general-ghost');
      await h.advance(INSTANCE_GC_MIN_AGE_MS - 1000);
      expect((await h.reconcile()).orphanInstances).toEqual([]);
      expect(orphan.state).toBe('running');
      await h.advance(2000);

      const report = await h.reconcile();

      expect(report.orphanInstances).toEqual([orphan.instanceId]);
      expect(orphan.state).toBe('terminated');
    });

    it('deletes the Node of an orphan instance too', async () => {
      const orphan = await h.instance('general-ghost');
      await h.advance(JOIN_MS);
      const node = h.nodeOf(orphan)!;
      const report = await h.reconcile();
      expect(report.deletedNodes).toEqual([node.name]);
      expect(h.cluster.nodes.has(node.name)).toBe(false);
    });

    it('keeps an instance whose NodeClaim is still recording it (named by its tag, no instance id yet)', async () => {
      const instance = await h.instance('general-a');
      await h.store.create({ name: 'general-a', nodePool: 'general', nodeClass: 'default', state: 'Pending', requirements: [], instanceTypes: ['m5.large'], resources: {}, labels: {}, taints: [], startupTaints: [], nominatedPods: [], createdAt: new Date(START).toISOString() });
      await h.advance(INSTANCE_GC_MIN_AGE_MS + 1000);
      expect((await h.reconcile()).orphanInstances).toEqual([]);
      expect(instance.state).toBe('running');
    });

    it('terminates an instance whose NodeClaim was deleted', async () => {
      const { claim, instance } = await h.launch('general-a');
      await h.store.update({ ...claim, state: 'Deleted', deletedAt: new Date(START).toISOString() });
      await h.advance(INSTANCE_GC_MIN_AGE_MS + 1000);
      expect((await h.reconcile()).orphanInstances).toEqual([instance.instanceId]);
    });

    it('leaves an instance a Karpenter launched (its tags, but not Skiff\'s) alone, so moving from Karpenter terminates nothing', async () => {
      const karpenters = await h.ec2.adopt({
        instanceType: 'm5.large',
        zone: 'us-west-2a',
        capacityType: 'on-demand',
        nodeClaim: 'general-k8rpt',
        nodeClass: 'default',
        labels: {},
        taints: [],
        tags: { 'eks:eks-cluster-name': 'test', 'karpenter.sh/nodepool': 'general', 'karpenter.sh/nodeclaim': 'general-k8rpt', 'karpenter.k8s.aws/ec2nodeclass': 'default' },
        launchedAt: START - 3600_000,
      });
      expect((await h.reconcile()).orphanInstances).toEqual([]);
      expect(karpenters.state).toBe('running');
    });

    it('leaves instances not launched for a NodePool alone', async () => {
      const foreign = await h.ec2.adopt({ instanceType: 'm5.large', zone: 'us-west-2a', capacityType: 'on-demand', nodeClaim: '', nodeClass: 'default', labels: {}, taints: [], tags: {}, launchedAt: START - 3600_000 });
      expect((await h.reconcile()).orphanInstances).toEqual([]);
      expect(foreign.state).toBe('running');
    });

    it('marks a registered NodeClaim whose instance is gone InstanceTerminated once its Node is not Ready, and deletes the Node', async () => {
      const { instance } = await h.launch('general-a');
      await h.advance(JOIN_MS + READY_MS);
      await h.reconcile();
      const node = h.nodeOf(instance)!;
      h.ec2.setInstanceState(instance.instanceId, 'terminated');
      // Karpenter: a Node still Ready keeps its NodeClaim (the cloud's list may lag).
      expect((await h.reconcile()).instanceTerminated).toEqual([]);
      h.cluster.setNodeReady(node, false);

      const report = await h.reconcile();

      expect(report).toMatchObject({ instanceTerminated: ['general-a'], deletedNodes: [node.name] });
      expect(await h.claim('general-a')).toMatchObject({ state: 'Deleted', deletionReason: 'InstanceTerminated' });
      expect(h.cluster.nodes.has(node.name)).toBe(false);
    });

    it('deletes a Node whose NodeClaim is Deleted', async () => {
      const { instance } = await h.launch('general-a');
      await h.advance(JOIN_MS + READY_MS);
      await h.reconcile();
      const claim = (await h.claim('general-a'))!;
      await h.store.update({ ...claim, state: 'Deleted', deletedAt: new Date(h.clock.now()).toISOString(), deletionReason: 'Expired' });
      const node = h.nodeOf(instance)!;
      const report = await h.reconcile();
      expect(report.deletedNodes).toEqual([node.name]);
    });

    it('starts the graceful termination of the NodeClaim of a Node a user deleted: Deleting, draining from the deletion, Node tainted, instance still running', async () => {
      const { instance } = await h.launch('general-a');
      await h.advance(JOIN_MS + READY_MS);
      await h.reconcile();
      const node = h.nodeOf(instance)!;
      await h.cluster.deleteNode(node.name);
      // The termination finalizer holds the Node.
      expect(h.cluster.nodes.get(node.name)?.deletionTimestamp).toBe(START + JOIN_MS + READY_MS);
      await h.advance(5_000);

      const report = await h.reconcile();

      expect(report.terminating).toEqual(['general-a']);
      expect(report.nodeDeleted).toEqual([]);
      const claim = await h.claim('general-a');
      expect(claim).toMatchObject({ state: 'Deleting', disruption: { reason: 'NodeDeleted', decision: 'delete', phase: 'Draining', drainStartedAt: '2026-03-02T08:01:00.000Z' } });
      expect(node.taints).toContainEqual({ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' });
      expect(instance.state).toBe('running');
      expect(h.cluster.nodes.has(node.name)).toBe(true);
      // A second pass leaves it to the drain.
      expect((await h.reconcile()).terminating).toEqual([]);
    });

    it('deletes at once (reason NodeDeleted) the NodeClaim of a Node that vanished without the termination finalizer', async () => {
      const { instance } = await h.launch('general-a');
      await h.advance(JOIN_MS + READY_MS);
      await h.reconcile();
      const node = h.nodeOf(instance)!;
      await h.cluster.patchNode(node.name, { finalizers: [] });
      await h.cluster.deleteNode(node.name);

      const report = await h.reconcile();

      expect(report.nodeDeleted).toEqual(['general-a']);
      expect(await h.claim('general-a')).toMatchObject({ state: 'Deleted', deletedAt: '2026-03-02T08:01:00.000Z', deletionReason: 'NodeDeleted' });
      expect(instance.state).toBe('terminated');
    });
  });

  describe('a Node a crashed pass labelled initialized', () => {
    it('is recorded Initialized even though it has turned NotReady since: the label is what cluster state reads', async () => {
      h = new Harness({ registrationDelayMs: 24 * 3600_000 });
      const { instance } = await h.launch('general-a');
      const node = h.cluster.registerNode(instance, { ready: false });
      // The pass that registered it (Ready then) patched the Node and crashed before writing the NodeClaim.
      await h.cluster.patchNode(node.name, { labels: { 'karpenter.sh/registered': 'true', 'karpenter.sh/initialized': 'true' } });

      const report = await h.reconcile();

      expect(report).toMatchObject({ registered: ['general-a'], initialized: ['general-a'] });
      expect(await h.claim('general-a')).toMatchObject({ state: 'Initialized' });
    });
  });

  describe('follow-up passes (LifecycleDeps.followUps)', () => {
    /** A follow-up port that records each request with what the pass had written by then. */
    const recording = (fail?: Error) => {
      const requests: { atMs: number; updatesBefore: number }[] = [];
      const followUps = {
        request: async (atMs: number) => {
          requests.push({ atMs, updatesBefore: h.store.calls.filter((c) => c.operation === 'update').length });
          if (fail) throw fail;
        },
      };
      return { requests, reconcile: () => reconcileLifecycle({ ...h.deps, followUps }) };
    };

    it('asks for a pass 20 s later before its first write when a Node waits to register, so a pass cut short is resumed', async () => {
      const { instance } = await h.launch('general-a');
      await h.advance(JOIN_MS + READY_MS);
      h.store.resetCalls();
      const { requests, reconcile } = recording();

      const report = await reconcile();

      expect(requests).toEqual([{ atMs: h.clock.now() + 20_000, updatesBefore: 0 }]);
      expect(report).toMatchObject({ registered: ['general-a'], followUpAt: new Date(h.clock.now() + 20_000).toISOString() });
      expect(h.nodeOf(instance)!.labels['karpenter.sh/initialized']).toBe('true');
    });

    it('asks for none while the instance has no Node, nor once every NodeClaim is settled: the chain ends with the work', async () => {
      await h.launch('general-a');
      const { requests, reconcile } = recording();
      expect((await reconcile()).followUpAt).toBeUndefined();
      await h.advance(JOIN_MS + READY_MS);
      await reconcile();
      expect(requests).toHaveLength(1);
      expect((await reconcile()).followUpAt).toBeUndefined();
      expect(requests).toHaveLength(1);
    });

    it('asks for none for a registered Node that is not ready for pods (initialization waits on the kubelet, not on a pass)', async () => {
      h = new Harness({ registrationDelayMs: 24 * 3600_000 });
      const { instance } = await h.launch('general-a');
      h.cluster.registerNode(instance, { ready: false });
      const { requests, reconcile } = recording();
      expect((await reconcile()).registered).toEqual(['general-a']);
      expect(requests).toHaveLength(1);
      expect(await h.claim('general-a')).toMatchObject({ state: 'Registered' });

      expect((await reconcile()).followUpAt).toBeUndefined();
      expect(requests).toHaveLength(1);
    });

    it('reports a request that failed and registers the Node anyway', async () => {
      await h.launch('general-a');
      await h.advance(JOIN_MS + READY_MS);
      const { reconcile } = recording(new Error('AWS.SimpleQueueService.NonExistentQueue'));

      const report = await reconcile();

      expect(report).toMatchObject({ registered: ['general-a'], followUpFailure: 'AWS.SimpleQueueService.NonExistentQueue' });
      expect(report.followUpAt).toBeUndefined();
    });
  });

  describe('NodeClaim mirrors', () => {
    it('mirrors each live NodeClaim as this pass left it, and rewrites a mirror only when its record changed', async () => {
      await h.launch('general-a');
      const first = await h.reconcile();
      expect(first.mirrored).toEqual(['general-a']);
      expect(h.cluster.nodeClaimMirrors.get('general-a')).toMatchObject({ state: 'Launched', version: 1 });

      expect((await h.reconcile()).mirrored).toEqual([]);

      await h.advance(JOIN_MS + READY_MS);
      const registered = await h.reconcile();
      expect(registered.mirrored).toEqual(['general-a']);
      // Registered and Initialized in one write (the Node was Ready when it registered): the mirror shows it.
      expect(h.cluster.nodeClaimMirrors.get('general-a')).toEqual(await h.claim('general-a'));
      expect(h.cluster.nodeClaimMirrors.get('general-a')).toMatchObject({ state: 'Initialized', version: 2 });
    });

    it('mirrors Pending NodeClaims too, and deletes the mirror once the NodeClaim is Deleted', async () => {
      await h.store.create({ name: 'general-p', nodePool: 'general', nodeClass: 'default', state: 'Pending', requirements: [], instanceTypes: ['m5.large'], resources: {}, labels: {}, taints: [], startupTaints: [], nominatedPods: [], createdAt: new Date(START).toISOString() });
      const { instance } = await h.launch('general-a');
      await h.advance(JOIN_MS + READY_MS);
      await h.reconcile();
      expect([...h.cluster.nodeClaimMirrors.keys()].sort()).toEqual(['general-a', 'general-p']);

      // The Node vanishes (its finalizer forced off): the NodeClaim is Deleted at once.
      await h.cluster.patchNode(h.nodeOf(instance)!.name, { finalizers: [] });
      await h.cluster.deleteNode(h.nodeOf(instance)!.name);
      const report = await h.reconcile();

      expect(report.nodeDeleted).toEqual(['general-a']);
      expect(report.mirrorsDeleted).toEqual(['general-a']);
      expect([...h.cluster.nodeClaimMirrors.keys()]).toEqual(['general-p']);
    });

    it('deletes a mirror whose record is gone or Failed, and keeps one whose NodeClaim was created after the pass read them', async () => {
      const failed = await h.store.create({ name: 'general-f', nodePool: 'general', nodeClass: 'default', state: 'Failed', requirements: [], instanceTypes: ['m5.large'], resources: {}, labels: {}, taints: [], startupTaints: [], nominatedPods: [], createdAt: new Date(START).toISOString(), launchError: 'InsufficientInstanceCapacity' });
      h.cluster.nodeClaimMirrors.set('general-f', { ...failed, state: 'Pending' });
      h.cluster.nodeClaimMirrors.set('general-gone', { ...failed, name: 'general-gone', state: 'Launched' });
      // A NodeClaim the provisioner records while the pass runs: the pass never read it, but its record is live.
      const { claim: late } = await h.launch('general-late');
      h.cluster.nodeClaimMirrors.set('general-late', late);
      const listed = h.store.list.bind(h.store);
      h.store.list = async () => (await listed()).filter((c) => c.name !== 'general-late');

      const report = await h.reconcile();

      expect([...report.mirrorsDeleted].sort()).toEqual(['general-f', 'general-gone']);
      expect([...h.cluster.nodeClaimMirrors.keys()]).toEqual(['general-late']);
    });

    it('reports a failed mirror write without failing the pass, and retries it in the next pass', async () => {
      await h.launch('general-a');
      await h.launch('general-b');
      const write = h.cluster.mirrorNodeClaim.bind(h.cluster);
      h.cluster.mirrorNodeClaim = async (claim) => {
        if (claim.name === 'general-a') throw new Error('apiserver unavailable');
        return write(claim);
      };
      await h.advance(JOIN_MS);

      const report = await h.reconcile();

      expect([...report.registered].sort()).toEqual(['general-a', 'general-b']);
      expect(report.mirrored).toEqual(['general-b']);
      expect(report.mirrorFailures).toEqual([{ operation: 'apply', name: 'general-a', error: 'apiserver unavailable' }]);
      h.cluster.mirrorNodeClaim = write;
      expect((await h.reconcile()).mirrored).toEqual(['general-a']);
    });

    it('reports a failed mirror list and mirrors nothing else in that pass', async () => {
      await h.launch('general-a');
      h.cluster.listNodeClaimMirrors = () => Promise.reject(new Error('the server could not find the requested resource'));
      const report = await h.reconcile();
      expect(report.mirrorFailures).toEqual([{ operation: 'list', error: 'the server could not find the requested resource' }]);
      expect(h.cluster.nodeClaimMirrors.size).toBe(0);
    });

    it('leaves mirroring out when the cluster has no mirror methods', async () => {
      await h.launch('general-a');
      const { listNodeClaimMirrors: _l, mirrorNodeClaim: _m, deleteNodeClaimMirror: _d, ...rest } = Object.fromEntries(
        ['listNodePools', 'listNodeClasses', 'listDaemonSets', 'listPods', 'listNodes', 'recordEvent', 'patchNode', 'deleteNode', 'evictPod', 'listPodDisruptionBudgets', 'listNodeClaimMirrors', 'mirrorNodeClaim', 'deleteNodeClaimMirror'].map((k) => [k, (h.cluster as unknown as Record<string, (...a: unknown[]) => unknown>)[k]!.bind(h.cluster)]),
      );
      const report = await reconcileLifecycle({ ...h.deps, cluster: rest as unknown as LifecycleDeps['cluster'] });
      expect(report).toMatchObject({ mirrored: [], mirrorsDeleted: [], mirrorFailures: [] });
      expect(h.cluster.nodeClaimMirrors.size).toBe(0);
    });
  });

  describe('NodeClaim store faults', () => {
    /** The write of a state transition of `name` to `state`. */
    const writing = (name: string, state: NodeClaim['state']) => (r: NodeClaimStoreRequest) => r.operation === 'update' && r.subject === name && r.claim?.state === state;

    it('skips the registration a rival pass wrote between this pass’s read and its write: a counted conflict, no Event, no initialization, no mirror', async () => {
      const { instance } = await h.launch('general-a');
      await h.advance(JOIN_MS + READY_MS);
      const node = h.nodeOf(instance)!;
      const rivalAt = '2026-03-02T08:00:59.000Z';
      h.store.inject({
        when: writing('general-a', 'Initialized'),
        interpose: async (store) => {
          const current = (await store.get('general-a'))!;
          await store.update({ ...current, state: 'Registered', nodeName: node.name, registeredAt: rivalAt });
        },
      });

      const report = await h.reconcile();

      expect(report).toMatchObject({ registered: [], initialized: [], conflicts: 1, mirrored: [] });
      expect(h.store.peek('general-a')).toMatchObject({ state: 'Registered', registeredAt: rivalAt, version: 2 });
      expect(h.events('Registered')).toEqual([]);
      expect(h.events('Initialized')).toEqual([]);
      // The next pass initializes the rival's record.
      expect((await h.reconcile()).initialized).toEqual(['general-a']);
      expect(h.store.peek('general-a')).toMatchObject({ state: 'Initialized', registeredAt: rivalAt, version: 3 });
    });

    it('reports a throttled registration write as that NodeClaim\'s failure, leaving the record Launched; the next pass registers it once', async () => {
      await h.launch('general-a');
      await h.advance(JOIN_MS + READY_MS);
      h.store.inject({ when: writing('general-a', 'Initialized'), error: (r) => new ThrottledError(`DynamoDB PutItem ${r.subject} throttled (simulated)`) });

      expect((await h.reconcile()).failures).toEqual([{ nodeClaim: 'general-a', error: expect.stringContaining('throttled') }]);
      expect(h.store.peek('general-a')).toMatchObject({ state: 'Launched', version: 1 });
      expect(h.events('Registered')).toEqual([]);

      expect(await h.reconcile()).toMatchObject({ registered: ['general-a'], initialized: ['general-a'], conflicts: 0 });
      expect(h.events('Registered')).toHaveLength(1);
    });

    it('tries a throttled read of the NodeClaims again within the pass instead of ending it before it did anything', async () => {
      await h.launch('general-a');
      await h.advance(JOIN_MS + READY_MS);
      h.store.failNext('list', undefined, 2);

      expect(await h.reconcile()).toMatchObject({ registered: ['general-a'], initialized: ['general-a'] });
    });

    it('registers the other NodeClaims when one NodeClaim\'s registration write is throttled (Karpenter reconciles each NodeClaim on its own)', async () => {
      await h.launch('general-a');
      await h.launch('general-b');
      await h.advance(JOIN_MS + READY_MS);
      h.store.inject({ when: writing('general-a', 'Initialized'), error: (r) => new ThrottledError(`DynamoDB PutItem ${r.subject} throttled (simulated)`) });

      const report = await h.reconcile();

      expect(report.registered).toEqual(['general-b']);
      expect(report.failures).toEqual([{ nodeClaim: 'general-a', error: expect.stringContaining('throttled') }]);
      expect(h.store.peek('general-a')).toMatchObject({ state: 'Launched' });
    });

    it('terminates nothing when the re-read before a registration timeout is throttled; the next pass times it out', async () => {
      h = new Harness({ registrationDelayMs: 24 * 3600_000 });
      const { instance } = await h.launch('general-a');
      await h.advance(REGISTRATION_TTL_MS + 1000);
      h.store.failNext('get');

      expect((await h.reconcile()).failures).toEqual([{ nodeClaim: 'general-a', error: expect.any(String) }]);
      expect(instance.state).toBe('running');
      expect(h.store.peek('general-a')).toMatchObject({ state: 'Launched', version: 1 });

      expect((await h.reconcile()).registrationTimeouts).toEqual(['general-a']);
      expect(instance.state).toBe('terminated');
    });

    it('finishes in the next pass a registration timeout whose Deleted write was throttled after the instance was terminated, with one Event', async () => {
      h = new Harness({ registrationDelayMs: 24 * 3600_000 });
      const { instance } = await h.launch('general-a');
      await h.advance(REGISTRATION_TTL_MS + 1000);
      h.store.inject({ when: writing('general-a', 'Deleted'), error: (r) => new ThrottledError(`DynamoDB PutItem ${r.subject} throttled (simulated)`) });

      expect((await h.reconcile()).failures).toEqual([{ nodeClaim: 'general-a', error: expect.stringContaining('throttled') }]);
      // Terminate first, then record: the instance is gone, the record still live for the next pass to finish.
      expect(instance.state).toBe('terminated');
      expect(h.store.peek('general-a')).toMatchObject({ state: 'Launched', version: 1 });

      const report = await h.reconcile();

      expect(report.registrationTimeouts).toEqual(['general-a']);
      expect(h.store.peek('general-a')).toMatchObject({ state: 'Deleted', deletionReason: 'RegistrationTimeout' });
      expect(h.events('RegistrationTimeout')).toHaveLength(1);
    });

    it('reads the NodeClaims once per pass and writes each transition once when nothing fails', async () => {
      await h.launch('general-a');
      await h.advance(JOIN_MS + READY_MS);
      h.store.resetCalls();

      await h.reconcile();

      expect(h.store.calls.map((c) => [c.operation, c.subject, c.claim?.state, c.outcome])).toEqual([
        ['list', undefined, undefined, 'ok'],
        // The Node was Ready when it registered: registration and initialization are one write.
        ['update', 'general-a', 'Initialized', 'ok'],
      ]);
    });
  });

  describe('two overlapping passes', () => {
    it('register, initialize and time out each NodeClaim once', async () => {
      h = new Harness({ registrationDelayMs: 24 * 3600_000 });
      await h.launch('general-late');
      await h.advance(REGISTRATION_TTL_MS + 1000);
      // A second NodeClaim whose kubelet joins (registered by hand: this harness's kubelets never join).
      const { instance } = await h.launch('general-a');
      h.cluster.registerNode(instance, { ready: true });
      const orphan = await h.instance('general-ghost');
      await h.advance(INSTANCE_GC_MIN_AGE_MS + 1000);

      const reports = await Promise.all([h.reconcile(), h.reconcile()]);

      const all = (k: 'registered' | 'initialized' | 'registrationTimeouts') => reports.flatMap((r) => r[k]);
      expect(all('registered')).toEqual(['general-a']);
      expect(all('initialized')).toEqual(['general-a']);
      expect(all('registrationTimeouts')).toEqual(['general-late']);
      expect(await h.claim('general-a')).toMatchObject({ state: 'Initialized' });
      expect(await h.claim('general-late')).toMatchObject({ state: 'Deleted', deletionReason: 'RegistrationTimeout' });
      expect(h.events('Registered')).toHaveLength(1);
      expect(h.events('Initialized')).toHaveLength(1);
      expect(h.events('RegistrationTimeout')).toHaveLength(1);
      // Instance garbage collection has no record to write: both passes may terminate it, which is idempotent.
      expect(orphan.state).toBe('terminated');
      expect(h.ec2.instances.filter((i) => i.state === 'running').map((i) => i.instanceId)).toEqual([instance.instanceId]);
    });

    it('a second pass over a settled cluster does nothing', async () => {
      await h.launch('general-a');
      await h.advance(JOIN_MS + READY_MS);
      await h.reconcile();
      expect(await h.reconcile()).toEqual({ registered: [], initialized: [], registrationTimeouts: [], instanceTerminated: [], nodeDeleted: [], terminating: [], nodeClaimDeleted: [], orphanInstances: [], deletedNodes: [], conflicts: 0, mirrored: [], mirrorsDeleted: [], mirrorFailures: [], failures: [], launched: [], launchTimeouts: [] });
    });
  });
});
