// The disruption controller's phases on in-memory ports: the NodeClaim store records every call and injects faults,
// a small in-memory cluster records patches, evictions and Events. No scenario, no dynalite: each test is one phase
// (validation, orchestration) or the controller's memory, with the records it reads and writes.
import { describe, expect, it } from 'vitest';
import type { NodeClaim, NodeClaimDisruption } from '../../../shared/core/api/nodeclaim.js';
import { ApiServerUnavailableError } from '../../../shared/core/errors.js';
import type { NodePool } from '../../../shared/core/api/nodepool.js';
import type { PodDisruptionBudget } from '../../../shared/core/api/pdb.js';
import type { InstanceType } from '../../../shared/core/instancetypes/offering.js';
import type { DisruptionDeps, DisruptionNodeClass } from '../../../shared/controllers/disruption/deps.js';
import { disrupt } from '../../../shared/controllers/disruption/disrupt.js';
import { DisruptionMemory } from '../../../shared/controllers/disruption/memory.js';
import { awaitReplacements } from '../../../shared/controllers/disruption/orchestrate.js';
import { newPass } from '../../../shared/controllers/disruption/pass.js';
import { SINGLE_NODE_SEARCH_CANDIDATES } from '../../../shared/controllers/disruption/search-budget.js';
import { validateProposal } from '../../../shared/controllers/disruption/validate.js';
import { THROTTLED_ATTEMPTS } from '../../../shared/controllers/retry.js';
import { readWorld } from '../../../shared/controllers/disruption/world.js';
import type { DaemonSetLike } from '../../../shared/core/provisioning/nodepool-template.js';
import type { Cluster, ClusterEvent, ClusterNode, ClusterPod, EvictionOutcome, NodePatch } from '../../../shared/ports/cluster.js';
import { seededIds } from '../../../shared/ports/ids.js';
import { MemoryNodeClaimStore, throttledError } from '../../../shared/sim/memory-nodeclaim-store.js';
import { VirtualClock } from '../../../shared/sim/virtual-clock.js';
import { catalogue } from '../../support/builders.js';
import { NOW, launched, nodeClass, nodePool, runningPod } from '../../support/disruption-world.js';

const types = catalogue();
const m5large = types.find((t) => t.name === 'm5.large')!;
const DISRUPTED = 'karpenter.sh/disrupted';

/** The Cluster port in memory: what the disruption controller reads, and what it did. */
class MemoryCluster implements Cluster<NodePool, DisruptionNodeClass, DaemonSetLike> {
  readonly nodes = new Map<string, ClusterNode>();
  readonly pods: ClusterPod[];
  readonly events: ClusterEvent[] = [];
  readonly patches: { node: string; patch: NodePatch }[] = [];
  readonly evicted: string[] = [];

  constructor(
    readonly pools: readonly NodePool[],
    nodes: readonly ClusterNode[],
    pods: readonly ClusterPod[] = [],
    readonly pdbs: readonly PodDisruptionBudget[] = [],
  ) {
    for (const n of nodes) this.nodes.set(n.name, n);
    this.pods = [...pods];
  }
  async listNodePools() {
    return [...this.pools];
  }
  async listNodeClasses() {
    return [nodeClass()];
  }
  async listDaemonSets() {
    return [];
  }
  async listPods() {
    return [...this.pods];
  }
  async listNodes() {
    return [...this.nodes.values()];
  }
  async listPodDisruptionBudgets() {
    return [...this.pdbs];
  }
  async recordEvent(event: ClusterEvent) {
    this.events.push(event);
  }
  async patchNode(name: string, patch: NodePatch) {
    this.patches.push({ node: name, patch });
    const node = this.nodes.get(name)!;
    this.nodes.set(name, { ...node, ...(patch.taints ? { taints: patch.taints } : {}) });
  }
  async deleteNode(name: string) {
    this.nodes.delete(name);
  }
  async evictPod(namespace: string, name: string): Promise<EvictionOutcome> {
    const i = this.pods.findIndex((p) => p.namespace === namespace && p.name === name);
    if (i < 0) return 'gone';
    this.pods.splice(i, 1);
    this.evicted.push(`${namespace}/${name}`);
    return 'evicted';
  }
  async forceDeletePod(namespace: string, name: string): Promise<'deleted' | 'gone'> {
    return (await this.evictPod(namespace, name)) === 'evicted' ? 'deleted' : 'gone';
  }
  tainted(name: string): boolean {
    return this.nodes.get(name)!.taints.some((t) => t.key === DISRUPTED);
  }
}

/** DisruptionDeps over `cluster` and `store`, with an instance-type catalogue and no unavailable offerings. */
function depsOf(cluster: MemoryCluster, store: MemoryNodeClaimStore, memory = new DisruptionMemory()): DisruptionDeps {
  const deleted: string[] = [];
  return {
    cluster,
    cloud: {
      getInstanceTypes: async (): Promise<InstanceType[]> => [...types],
      create: async () => {
        throw new Error('no launch expected');
      },
      list: async () => [],
      delete: async (instanceId: string) => void deleted.push(instanceId),
    },
    store,
    unavailableOfferings: { markUnavailable: async () => undefined, listUnavailable: async () => [] },
    clock: new VirtualClock(NOW),
    ids: seededIds(5),
    clusterName: 'test',
    region: 'us-west-2',
    spotToSpotConsolidation: false,
    memory,
  };
}

/** A proposal recorded 20 s before NOW (past the 15 s validation delay). */
function proposal(fields: Partial<NodeClaimDisruption> & Pick<NodeClaimDisruption, 'reason' | 'decision' | 'candidates'>): NodeClaimDisruption {
  return { command: 'cmd-1', phase: 'Proposed', replacements: [], message: 'why', proposedAt: new Date(NOW - 20_000).toISOString(), ...fields };
}

describe('disruption controller phases', () => {
  describe('validateProposal', () => {
    it('drops an Empty proposal whose node got a pod meanwhile: the record is written back without it, nothing is tainted', async () => {
      const pool = nodePool('general');
      const a = launched('a', pool, m5large, { claim: { disruption: proposal({ reason: 'Empty', decision: 'delete', candidates: ['a'] }) } });
      const cluster = new MemoryCluster([pool], [a.node], [runningPod('web', 'a')]);
      const store = new MemoryNodeClaimStore({ records: [a.claim] });
      const deps = depsOf(cluster, store);
      const pass = newPass(deps);
      const world = await readWorld(deps);
      await validateProposal(pass, world, 'cmd-1', world.claims);
      expect(pass.report.rejected).toEqual([{ command: 'cmd-1', reason: 're-validation after 15s no longer finds it (Empty, delete)' }]);
      expect(pass.report.started).toEqual([]);
      expect((await store.get('a'))!.disruption).toBeUndefined();
      expect(store.callsOf('update', 'a').map((c) => [c.outcome, c.written])).toEqual([['ok', true]]);
      expect(cluster.patches).toEqual([]);
      expect(cluster.events.map((e) => e.reason)).toEqual(['ConsolidationRejected']);
    });

    it('starts an Empty proposal that still holds: the record goes Draining, the node is tainted', async () => {
      const pool = nodePool('general');
      const a = launched('a', pool, m5large, { claim: { disruption: proposal({ reason: 'Empty', decision: 'delete', candidates: ['a'] }) } });
      const cluster = new MemoryCluster([pool], [a.node]);
      const store = new MemoryNodeClaimStore({ records: [a.claim] });
      const deps = depsOf(cluster, store);
      const pass = newPass(deps);
      const world = await readWorld(deps);
      await validateProposal(pass, world, 'cmd-1', world.claims);
      expect(pass.report.started).toEqual(['cmd-1']);
      const record = (await store.get('a'))!;
      expect(record.state).toBe('Deleting');
      expect(record.disruption).toMatchObject({ phase: 'Draining', startedAt: new Date(NOW).toISOString(), drainStartedAt: new Date(NOW).toISOString(), replacements: [] });
      expect(cluster.tainted('a')).toBe(true);
      expect(cluster.events.map((e) => e.reason)).toEqual(['DisruptionTerminating']);
    });

    it('drops a Drifted delete that Emptiness would now take first (the methods run in their order on the candidates)', async () => {
      const pool = nodePool('general');
      const a = launched('a', pool, m5large, { claim: { nodePoolHash: 'older-template', disruption: proposal({ reason: 'Drifted', decision: 'delete', candidates: ['a'] }) } });
      const store = new MemoryNodeClaimStore({ records: [a.claim] });
      const deps = depsOf(new MemoryCluster([pool], [a.node]), store);
      const pass = newPass(deps);
      const world = await readWorld(deps);
      await validateProposal(pass, world, 'cmd-1', world.claims);
      expect(pass.report.rejected.map((r) => r.reason)).toEqual(['re-validation after 15s no longer finds it (Drifted, delete)']);
    });

    it('drops a repacking whose re-validation saves less than its proposal said (Skiff: at least as good)', async () => {
      const pool = nodePool('general', {
        budgets: [{ nodes: '100%' }],
        requirements: [
          { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
          { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large', 'm5.xlarge', 'm5.2xlarge'] },
        ],
      });
      // One m5.2xlarge ($0.384/h) with nine 500m pods: split consolidation replaces it by two or more cheaper nodes,
      // saving well under the $0.30/h the record says was proposed.
      const big = launched('big', pool, types.find((t) => t.name === 'm5.2xlarge')!, {
        claim: { disruption: proposal({ reason: 'Underutilized', decision: 'replace', candidates: ['big'], savings: 0.3 }) },
      });
      const pods = Array.from({ length: 9 }, (_, i) => runningPod(`p-${i}`, 'big', { cpu: '500m' }));
      const store = new MemoryNodeClaimStore({ records: [big.claim] });
      const deps = depsOf(new MemoryCluster([pool], [big.node], pods), store);
      const pass = newPass(deps);
      const world = await readWorld(deps);
      await validateProposal(pass, world, 'cmd-1', world.claims);
      expect(pass.report.started).toEqual([]);
      expect(pass.report.rejected.map((r) => r.reason)).toEqual([expect.stringMatching(/^re-validation after 15s finds a saving of \$0\.\d{4}\/h, less than the \$0\.3000\/h proposed$/)]);
      expect((await store.get('big'))!.disruption).toBeUndefined();
    });

    it('leaves the record to the next pass when another writer moved it on before the write-back', async () => {
      const pool = nodePool('general');
      const a = launched('a', pool, m5large, { claim: { disruption: proposal({ reason: 'Empty', decision: 'delete', candidates: ['a'] }) } });
      const store = new MemoryNodeClaimStore({ records: [a.claim] });
      const deps = depsOf(new MemoryCluster([pool], [a.node], [runningPod('web', 'a')]), store);
      const pass = newPass(deps);
      const world = await readWorld(deps);
      const rival = { ...a.claim, lastPodEventAt: new Date(NOW).toISOString() };
      store.inject({ operation: 'update', times: 1, interpose: async (s) => void (await s.update(rival)) });
      await validateProposal(pass, world, 'cmd-1', world.claims);
      // The rejection is reported; the conflicting write is not an error, and the record keeps the rival's version.
      expect(pass.report.rejected.map((r) => r.command)).toEqual(['cmd-1']);
      expect(store.callsOf('update', 'a').map((c) => c.outcome)).toEqual(['ok', 'conflict']);
      expect((await store.get('a'))!).toMatchObject({ version: 2, lastPodEventAt: rival.lastPodEventAt, disruption: { command: 'cmd-1' } });
    });
  });

  describe('starting a command (crash safety, issue 21)', () => {
    const taint = { key: DISRUPTED, effect: 'NoSchedule' as const };

    it('taints the node before it records the command as started', async () => {
      const pool = nodePool('general');
      const a = launched('a', pool, m5large, { claim: { disruption: proposal({ reason: 'Empty', decision: 'delete', candidates: ['a'] }) } });
      const cluster = new MemoryCluster([pool], [a.node]);
      const store = new MemoryNodeClaimStore({ records: [a.claim] });
      const taintedAtWrite: boolean[] = [];
      store.inject({ operation: 'update', interpose: () => void taintedAtWrite.push(cluster.tainted('a')) });
      const deps = depsOf(cluster, store);
      const world = await readWorld(deps);
      await validateProposal(newPass(deps), world, 'cmd-1', world.claims);
      expect(taintedAtWrite).toEqual([true]);
      expect((await store.get('a'))!.disruption!.phase).toBe('Draining');
    });

    it('starts an Empty proposal with the candidates that still carry it when a dead pass wrote only some of them (Karpenter\'s EmptinessValidator keeps the valid ones)', async () => {
      const pool = nodePool('general', { budgets: [{ nodes: '100%' }] });
      const d = proposal({ reason: 'Empty', decision: 'delete', candidates: ['a', 'b', 'c'] });
      const a = launched('a', pool, m5large, { claim: { disruption: d } });
      const b = launched('b', pool, m5large, { claim: { disruption: d } });
      const c = launched('c', pool, m5large);
      const cluster = new MemoryCluster([pool], [a.node, b.node, c.node]);
      const store = new MemoryNodeClaimStore({ records: [a.claim, b.claim, c.claim] });
      const deps = depsOf(cluster, store);
      const pass = newPass(deps);
      const world = await readWorld(deps);
      await validateProposal(pass, world, 'cmd-1', world.claims.filter((x) => x.disruption?.command === 'cmd-1'));
      expect(pass.report.rejected).toEqual([]);
      expect([cluster.tainted('a'), cluster.tainted('b'), cluster.tainted('c')]).toEqual([true, true, false]);
      for (const name of ['a', 'b']) expect((await store.get(name))!.disruption).toMatchObject({ phase: 'Draining', candidates: ['a', 'b'] });
      expect((await store.get('c'))!.disruption).toBeUndefined();
    });

    it('tries a record write the store refused once again, and the command starts', async () => {
      const pool = nodePool('general');
      const a = launched('a', pool, m5large, { claim: { disruption: proposal({ reason: 'Empty', decision: 'delete', candidates: ['a'] }) } });
      const cluster = new MemoryCluster([pool], [a.node]);
      const store = new MemoryNodeClaimStore({ records: [a.claim] });
      store.inject({ operation: 'update', error: throttledError });
      const deps = depsOf(cluster, store);
      const pass = newPass(deps);
      const world = await readWorld(deps);
      await validateProposal(pass, world, 'cmd-1', world.claims);
      expect(cluster.tainted('a')).toBe(true);
      expect((await store.get('a'))!.disruption?.phase).toBe('Draining');
      expect(pass.report.rejected).toEqual([]);
    });

    it('rolls the start back when the record write stays throttled: the node loses the taint, the record the command, the error is thrown', async () => {
      const pool = nodePool('general');
      const a = launched('a', pool, m5large, { claim: { disruption: proposal({ reason: 'Empty', decision: 'delete', candidates: ['a'] }) } });
      const cluster = new MemoryCluster([pool], [a.node]);
      const store = new MemoryNodeClaimStore({ records: [a.claim] });
      store.inject({ operation: 'update', times: THROTTLED_ATTEMPTS, error: throttledError });
      const deps = depsOf(cluster, store);
      const pass = newPass(deps);
      const world = await readWorld(deps);
      await expect(validateProposal(pass, world, 'cmd-1', world.claims)).rejects.toThrow(/throttl/i);
      expect(cluster.patches.map((p) => p.patch.taints!.some((t) => t.key === DISRUPTED))).toEqual([true, false]);
      expect(cluster.tainted('a')).toBe(false);
      expect((await store.get('a'))!.state).toBe('Initialized');
      expect((await store.get('a'))!.disruption).toBeUndefined();
      expect(pass.report.rejected.map((r) => r.reason)).toEqual([expect.stringMatching(/^starting it failed/)]);
    });

    it('rolls the start back when the taint fails: nothing recorded as started, nothing left tainted', async () => {
      const pool = nodePool('general', { budgets: [{ nodes: '100%' }] });
      const a = launched('a', pool, m5large, { claim: { disruption: proposal({ reason: 'Empty', decision: 'delete', candidates: ['a', 'b'] }) } });
      const b = launched('b', pool, m5large, { claim: { disruption: proposal({ reason: 'Empty', decision: 'delete', candidates: ['a', 'b'] }) } });
      const cluster = new MemoryCluster([pool], [a.node, b.node]);
      const patchNode = cluster.patchNode.bind(cluster);
      cluster.patchNode = async (name, patch) => {
        if (name === b.node.name && patch.taints?.some((t) => t.key === DISRUPTED)) throw new ApiServerUnavailableError('PATCH nodes: 503', 503, 'ServiceUnavailable');
        return patchNode(name, patch);
      };
      const store = new MemoryNodeClaimStore({ records: [a.claim, b.claim] });
      const deps = depsOf(cluster, store);
      const world = await readWorld(deps);
      await expect(validateProposal(newPass(deps), world, 'cmd-1', world.claims)).rejects.toThrow(/503/);
      expect(cluster.tainted('a')).toBe(false);
      expect(cluster.tainted('b')).toBe(false);
      for (const name of ['a', 'b']) expect((await store.get(name))!.disruption).toBeUndefined();
    });

    it('drops an Empty command recorded as Draining whose node was never tainted and took a pod: no eviction, record Initialized again', async () => {
      const pool = nodePool('general');
      const draining: NodeClaimDisruption = { ...proposal({ reason: 'Empty', decision: 'delete', candidates: ['a'] }), phase: 'Draining', startedAt: new Date(NOW - 60_000).toISOString(), drainStartedAt: new Date(NOW - 60_000).toISOString() };
      const a = launched('a', pool, m5large, { claim: { state: 'Deleting', disruption: draining } });
      const other = launched('other', pool, m5large);
      const cluster = new MemoryCluster([pool], [a.node, other.node], [runningPod('late', 'a')]);
      const store = new MemoryNodeClaimStore({ records: [a.claim, other.claim] });
      const report = await disrupt(depsOf(cluster, store));
      expect(report.evicted).toEqual([]);
      expect(cluster.evicted).toEqual([]);
      expect(cluster.tainted('a')).toBe(false);
      expect((await store.get('a'))!.state).toBe('Initialized');
      expect((await store.get('a'))!.disruption).toBeUndefined();
      expect(report.rejected.map((r) => r.reason)).toEqual([expect.stringMatching(/^its start was interrupted and re-validation/)]);
    });

    it('resumes an Empty command recorded as Draining whose node was never tainted but is still empty and within budget', async () => {
      const pool = nodePool('general');
      const draining: NodeClaimDisruption = { ...proposal({ reason: 'Empty', decision: 'delete', candidates: ['a'] }), phase: 'Draining', startedAt: new Date(NOW - 60_000).toISOString(), drainStartedAt: new Date(NOW - 60_000).toISOString() };
      const a = launched('a', pool, m5large, { claim: { state: 'Deleting', disruption: draining } });
      const other = launched('other', pool, m5large);
      const cluster = new MemoryCluster([pool], [a.node, other.node]);
      const store = new MemoryNodeClaimStore({ records: [a.claim, other.claim] });
      const report = await disrupt(depsOf(cluster, store));
      expect(report.started).toContain('cmd-1');
      expect(report.deleted).toEqual([{ nodeClaim: 'a', reason: 'Empty' }]);
      expect(cluster.patches[0]).toMatchObject({ node: a.node.name, patch: { taints: [taint] } });
    });

    it('takes the taint off a node whose record carries no command (a start or rollback died midway), and leaves a proposal to validation', async () => {
      const pool = nodePool('general');
      const a = launched('a', pool, m5large);
      const b = launched('b', pool, m5large, { claim: { disruption: proposal({ reason: 'Empty', decision: 'delete', candidates: ['b'], proposedAt: new Date(NOW - 5_000).toISOString() }) } });
      const cluster = new MemoryCluster([pool], [{ ...a.node, taints: [taint] }, { ...b.node, taints: [taint] }], [runningPod('web', 'a'), runningPod('api', 'b')]);
      const store = new MemoryNodeClaimStore({ records: [a.claim, b.claim] });
      await disrupt(depsOf(cluster, store));
      expect(cluster.tainted('a')).toBe(false);
      expect(cluster.tainted('b')).toBe(true);
    });
  });

  describe('awaitReplacements', () => {
    it('abandons a command whose replacement failed: the candidate loses the command and its node the taint', async () => {
      const pool = nodePool('general');
      const replacing: NodeClaimDisruption = { ...proposal({ reason: 'Underutilized', decision: 'replace', candidates: ['a'] }), phase: 'Replacing', replacements: ['general-r1'], startedAt: new Date(NOW - 60_000).toISOString() };
      const a = launched('a', pool, m5large, { claim: { disruption: replacing } });
      const failed: NodeClaim = { ...launched('general-r1', pool, m5large).claim, state: 'Failed', instanceId: undefined, providerId: undefined, launchError: 'InsufficientInstanceCapacity', replacementFor: ['a'] };
      const cluster = new MemoryCluster([pool], [{ ...a.node, taints: [{ key: DISRUPTED, effect: 'NoSchedule' }] }]);
      const store = new MemoryNodeClaimStore({ records: [a.claim, failed] });
      const deps = depsOf(cluster, store);
      const pass = newPass(deps);
      const world = await readWorld(deps);
      await awaitReplacements(pass, world, 'cmd-1', [world.claims.find((c) => c.name === 'a')!]);
      expect(pass.report.rejected).toEqual([{ command: 'cmd-1', reason: 'replacement general-r1 failed (InsufficientInstanceCapacity)' }]);
      expect((await store.get('a'))!.disruption).toBeUndefined();
      expect(cluster.tainted('a')).toBe(false);
      expect(cluster.events.map((e) => e.reason)).toEqual(['DisruptionBlocked']);
    });

    it('hands the candidates to the drain once every replacement is initialized', async () => {
      const pool = nodePool('general');
      const replacing: NodeClaimDisruption = { ...proposal({ reason: 'Underutilized', decision: 'replace', candidates: ['a'] }), phase: 'Replacing', replacements: ['general-r1'], startedAt: new Date(NOW - 60_000).toISOString() };
      const a = launched('a', pool, m5large, { claim: { disruption: replacing } });
      const ready = launched('general-r1', pool, m5large, { claim: { replacementFor: ['a'] } });
      const cluster = new MemoryCluster([pool], [a.node, ready.node]);
      const store = new MemoryNodeClaimStore({ records: [a.claim, ready.claim] });
      const deps = depsOf(cluster, store);
      const pass = newPass(deps);
      const world = await readWorld(deps);
      await awaitReplacements(pass, world, 'cmd-1', [world.claims.find((c) => c.name === 'a')!]);
      expect(pass.report.started).toEqual(['cmd-1:drain:a']);
      expect((await store.get('a'))!).toMatchObject({ state: 'Deleting', disruption: { phase: 'Draining', drainStartedAt: new Date(NOW).toISOString() } });
      expect(cluster.tainted('a')).toBe(true);
    });
  });

  describe('DisruptionMemory', () => {
    /** A node consolidation may not look at yet, and one annotated do-not-disrupt: nothing to do, two reasons why. */
    function quiet(memory: DisruptionMemory) {
      const pool = nodePool('general', { consolidateAfter: '1h' });
      const young = launched('young', pool, m5large, { ageHours: 0.5, claim: { podsFingerprint: 'unchanged' } });
      const pinned = launched('pinned', pool, m5large, { ageHours: 5 });
      const cluster = new MemoryCluster([pool], [young.node, pinned.node], [runningPod('web', 'young'), runningPod('db', 'pinned', { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } })]);
      const store = new MemoryNodeClaimStore({ records: [young.claim, pinned.claim] });
      return { cluster, store, deps: depsOf(cluster, store, memory) };
    }

    it('skips the search while nothing changed since a pass found nothing, and searches again after a reset', async () => {
      const memory = new DisruptionMemory();
      const { deps } = quiet(memory);
      const first = await disrupt(deps);
      expect(first.proposed).toEqual([]);
      expect(first.skipped.map((s) => s.nodeClaim).sort()).toEqual(['pinned', 'young']);
      expect(memory.consolidated).toBeDefined();
      // Same world, same instant: the verdict stands and the methods are not run.
      expect((await disrupt(deps)).skipped).toEqual([]);
      memory.reset();
      expect(memory.consolidated).toBeUndefined();
      expect((await disrupt(deps)).skipped.map((s) => s.nodeClaim).sort()).toEqual(['pinned', 'young']);
    });

    it('writes a DisruptionBlocked Event once per memory: again after a reset, and again with a new memory', async () => {
      const memory = new DisruptionMemory();
      const { cluster, deps } = quiet(memory);
      const blocked = () => cluster.events.filter((e) => e.reason === 'DisruptionBlocked' && e.object === 'Node/pinned').length;
      await disrupt(deps);
      expect(blocked()).toBe(1);
      memory.consolidated = undefined; // search again, but remember the Events
      await disrupt(deps);
      expect(blocked()).toBe(1);
      memory.reset();
      await disrupt(deps);
      expect(blocked()).toBe(2);
      await disrupt({ ...deps, memory: new DisruptionMemory() });
      expect(blocked()).toBe(3);
    });
  });

  describe('several commands a pass (issue 20)', () => {
    /** Only on-demand m5.large, so nothing replaces a node more cheaply; steady: WhenEmpty, with room to spare. */
    function fleet(budget: string) {
      const requirements = [
        { key: 'node.kubernetes.io/instance-type', operator: 'In' as const, values: ['m5.large'] },
        { key: 'karpenter.sh/capacity-type', operator: 'In' as const, values: ['on-demand'] },
      ];
      const general = nodePool('general', { budgets: [{ nodes: budget }], requirements });
      const steady = nodePool('steady', { consolidationPolicy: 'WhenEmpty', requirements });
      const nodes = [launched('empty', general, m5large), launched('x', general, m5large), launched('z', steady, m5large)];
      const pods = [runningPod('on-x', 'x', { cpu: '1200m' }), runningPod('on-z', 'z', { cpu: '300m' })];
      return { pools: [general, steady], nodes, pods };
    }

    it('proposes every command it finds, in order, and the next pass starts them one after the other', async () => {
      const { pools, nodes, pods } = fleet('100%');
      const cluster = new MemoryCluster(pools, nodes.map((n) => n.node), pods);
      const store = new MemoryNodeClaimStore({ records: nodes.map((n) => n.claim) });
      const clock = new VirtualClock(NOW);
      const deps: DisruptionDeps = { ...depsOf(cluster, store), clock };
      const first = await disrupt(deps);
      // Emptiness first, then a search with the empty node going away: x's pod fits on z.
      expect(first.proposed.map((p) => [p.reason, p.candidates])).toEqual([
        ['Empty', ['empty']],
        ['Underutilized', ['x']],
      ]);
      expect([(await store.get('empty'))!.disruption!.order, (await store.get('x'))!.disruption!.order]).toEqual([undefined, 1]);
      await clock.runUntil(NOW + 60_000);
      const second = await disrupt(deps);
      expect(second.rejected).toEqual([]);
      expect(second.started).toEqual([first.proposed[0]!.command, first.proposed[1]!.command]);
      expect(cluster.evicted).toEqual(['default/on-x']);
    });

    it('proposes no more than the budget allows between them', async () => {
      const { pools, nodes, pods } = fleet('1');
      const store = new MemoryNodeClaimStore({ records: nodes.map((n) => n.claim) });
      const report = await disrupt(depsOf(new MemoryCluster(pools, nodes.map((n) => n.node), pods), store));
      expect(report.proposed.map((p) => p.candidates)).toEqual([['empty']]);
    });

    it('proposes for the next pass as if the deletions it started were over: their budget is free again', async () => {
      const { pools } = fleet('1');
      const nodes = [launched('x', pools[0]!, m5large), launched('y', pools[0]!, m5large), launched('z', pools[1]!, m5large)];
      const pods = [runningPod('on-x', 'x', { cpu: '300m' }), runningPod('on-y', 'y', { cpu: '300m' }), runningPod('on-z', 'z', { cpu: '300m' })];
      const cluster = new MemoryCluster(pools, nodes.map((n) => n.node), pods);
      const store = new MemoryNodeClaimStore({ records: nodes.map((n) => n.claim) });
      // A real clock moves on while a pass runs: every reading is a millisecond later.
      let t = NOW;
      const deps: DisruptionDeps = { ...depsOf(cluster, store), clock: { now: () => (t += 1) } };
      const first = await disrupt(deps);
      expect(first.proposed.map((p) => p.candidates)).toEqual([['x']]);
      t = NOW + 60_000;
      const second = await disrupt(deps);
      // x's deletion started (its pod evicted, the node goes next pass); the budget of one node is x's, yet y is proposed.
      expect(second.started).toEqual([first.proposed[0]!.command]);
      expect(cluster.tainted('x')).toBe(true);
      expect(second.proposed.map((p) => p.candidates)).toEqual([['y']]);
    });

    it('counts on no room that the pods of a node already being disrupted will take', async () => {
      const { pools, nodes, pods } = fleet('100%');
      // A node whose drain started and waits for a do-not-disrupt pod: that pod still has to go somewhere, and z is
      // where it fits.
      const leaving = launched('leaving', pools[0]!, m5large, { claim: { state: 'Deleting', disruption: { ...proposal({ reason: 'Drifted', decision: 'delete', candidates: ['leaving'] }), command: 'drift-1', phase: 'Draining', startedAt: new Date(NOW - 20_000).toISOString() } } });
      const tainted = { ...leaving.node, taints: [{ key: DISRUPTED, effect: 'NoSchedule' as const }] };
      const all = [...nodes.filter((n) => n.claim.name !== 'empty'), { claim: leaving.claim, node: tainted }];
      const store = new MemoryNodeClaimStore({ records: all.map((n) => n.claim) });
      const cluster = new MemoryCluster(pools, all.map((n) => n.node), [...pods, runningPod('on-leaving', 'leaving', { cpu: '1200m', annotations: { 'karpenter.sh/do-not-disrupt': 'true' } })]);
      const report = await disrupt(depsOf(cluster, store));
      expect(report.proposed).toEqual([]);
      expect(report.skipped.map((s) => s.nodeClaim)).toContain('x');
    });
  });

  describe('search budget', () => {
    it('stops single-node consolidation after SINGLE_NODE_SEARCH_CANDIDATES simulations, reports it, and resumes after the last one next pass', async () => {
      const n = SINGLE_NODE_SEARCH_CANDIDATES + 1;
      const pool = nodePool('general', { budgets: [{ nodes: '100%' }] });
      // Each pod needs all of a spot m5.large: no node can go (nothing cheaper fits, spot-to-spot is off), so the search
      // would try every one of them.
      const nodes = Array.from({ length: n }, (_, i) => launched(`n${String(i).padStart(3, '0')}`, pool, m5large, { ageHours: 5, capacityType: 'spot' }));
      const pods = nodes.map((x, i) => runningPod(`web-${i}`, x.node.name, { cpu: '1800m', memory: '6Gi' }));
      const cluster = new MemoryCluster([pool], nodes.map((x) => x.node), pods);
      const memory = new DisruptionMemory();
      // Karpenter's methods only: Skiff's split move would try (and skip) some of the same nodes after single-node.
      const deps: DisruptionDeps = { ...depsOf(cluster, new MemoryNodeClaimStore({ records: nodes.map((x) => x.claim) }), memory), consolidation: 'karpenter' };
      const tried = (r: Awaited<ReturnType<typeof disrupt>>) => r.skipped.filter((s) => s.reason.includes('fits neither')).map((s) => s.nodeClaim);

      const first = await disrupt(deps);
      expect(first.proposed).toEqual([]);
      expect(first.searchStopped).toEqual([{ method: 'single-node-consolidation', evaluated: SINGLE_NODE_SEARCH_CANDIDATES, candidates: n }]);
      const names = nodes.map((x) => x.claim.name);
      expect(tried(first)).toEqual(names.slice(0, SINGLE_NODE_SEARCH_CANDIDATES));
      // Not "consolidated": the next pass searches on, from the candidate after the last one simulated.
      expect(memory.consolidated).toBeUndefined();
      expect(memory.singleNodeResumeAfter).toBe(names[SINGLE_NODE_SEARCH_CANDIDATES - 1]);

      const second = await disrupt(deps);
      expect(tried(second)).toEqual([names[n - 1], ...names.slice(0, SINGLE_NODE_SEARCH_CANDIDATES - 1)]);
      expect(second.searchStopped).toEqual([{ method: 'single-node-consolidation', evaluated: SINGLE_NODE_SEARCH_CANDIDATES, candidates: n }]);
      // The two passes saw the same world and tried every candidate between them: nothing to do, the next pass skips.
      expect(memory.consolidated).toBeDefined();
      expect((await disrupt(deps)).skipped).toEqual([]);
    });
  });

  describe('a pass cut short by a crash (issue 21: liveness under faults)', () => {
    const TAINT = { key: DISRUPTED, effect: 'NoSchedule' as const };
    const draining = (reason: NodeClaimDisruption['reason'], drainStartedAgoMs: number): NodeClaim['disruption'] => ({
      command: `${reason.toLowerCase()}-x`,
      reason,
      decision: 'delete',
      phase: 'Draining',
      replacements: [],
      candidates: [],
      message: 'why',
      proposedAt: new Date(NOW - drainStartedAgoMs).toISOString(),
      startedAt: new Date(NOW - drainStartedAgoMs).toISOString(),
      drainStartedAt: new Date(NOW - drainStartedAgoMs).toISOString(),
    });

    /**
     * `deps` whose cluster, store and cloud die (throw) right after their `n`-th side effect succeeds — a Lambda crash
     * in the middle of a pass — and list every side effect in `done`.
     */
    function crashingAfter(deps: DisruptionDeps, n: number): { deps: DisruptionDeps; done: string[] } {
      const done: string[] = [];
      const after = <T>(what: string, value: T): T => {
        done.push(what);
        if (done.length === n) throw new Error(`crash after ${what}`);
        return value;
      };
      const wrap = <O extends object>(target: O, methods: Record<string, (args: unknown[]) => string>): O =>
        new Proxy(target, {
          get(t, key, receiver) {
            const value = Reflect.get(t, key, receiver);
            const name = typeof key === 'string' ? methods[key] : undefined;
            if (typeof value !== 'function') return value;
            if (!name) return value.bind(t);
            return async (...args: unknown[]) => after(name(args), await value.apply(t, args));
          },
        });
      return {
        done,
        deps: {
          ...deps,
          cluster: wrap(deps.cluster, {
            recordEvent: (a) => `event ${(a[0] as ClusterEvent).reason} ${(a[0] as ClusterEvent).object}`,
            patchNode: (a) => `patch ${a[0]}`,
            deleteNode: (a) => `delete node ${a[0]}`,
            evictPod: (a) => `evict ${a[1]}`,
            forceDeletePod: (a) => `force-delete ${a[1]}`,
          }),
          store: wrap(deps.store, { update: (a) => `write ${(a[0] as NodeClaim).name}`, create: (a) => `create ${(a[0] as NodeClaim).name}` }),
          cloud: wrap(deps.cloud, { delete: (a) => `terminate ${a[0]}`, create: () => 'launch' }),
        },
      };
    }

    it('asks for its follow-up before its first side effect when it reads work in flight, so a pass that dies is resumed 20 s later', async () => {
      const pool = nodePool('general');
      const a = launched('a', pool, m5large, { claim: { state: 'Deleting', disruption: draining('Expired', 60_000) } });
      const cluster = new MemoryCluster([pool], [{ ...a.node, taints: [TAINT] }], [runningPod('web-1', 'a'), runningPod('web-2', 'a')]);
      const requests: number[] = [];
      const { deps, done } = crashingAfter({ ...depsOf(cluster, new MemoryNodeClaimStore({ records: [a.claim] })), followUps: { request: async (atMs: number) => void requests.push(atMs) } }, 1);
      await expect(disrupt(deps)).rejects.toThrow(/crash after/);
      expect(done).toHaveLength(1);
      expect(requests).toEqual([NOW + 20_000]);
    });

    it('asks once per pass: a pass that asked before its first side effect leaves followUpAfterMs unset; one with no work asks nothing', async () => {
      const pool = nodePool('general');
      const a = launched('a', pool, m5large, { claim: { state: 'Deleting', disruption: draining('Expired', 60_000) } });
      const requests: number[] = [];
      const followUps = { request: async (atMs: number) => void requests.push(atMs) };
      const report = await disrupt({ ...depsOf(new MemoryCluster([pool], [{ ...a.node, taints: [TAINT] }], [runningPod('web-1', 'a')]), new MemoryNodeClaimStore({ records: [a.claim] })), followUps });
      expect(report.followUpAt).toBe(new Date(NOW + 20_000).toISOString());
      expect(report.followUpAfterMs).toBeUndefined();
      expect(requests).toEqual([NOW + 20_000]);
      const quiet = launched('q', pool, m5large, { claim: { podsFingerprint: 'x' } });
      const idle = await disrupt({ ...depsOf(new MemoryCluster([nodePool('general', { consolidateAfter: '1h' })], [quiet.node], [runningPod('db', 'q', { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } })]), new MemoryNodeClaimStore({ records: [quiet.claim] })), followUps });
      expect(idle.followUpAt).toBeUndefined();
      expect(requests).toHaveLength(1);
    });

    it('finishes a drain past its terminationGracePeriod deadline before it spends a side effect on any other drain', async () => {
      const pool = nodePool('general');
      // `a` (listed first) drains without a deadline; `z`'s 5-minute terminationGracePeriod ran out a minute ago.
      const a = launched('a', pool, m5large, { claim: { state: 'Deleting', disruption: draining('Expired', 60_000) } });
      const z = launched('z', pool, m5large, { claim: { state: 'Deleting', terminationGracePeriodSeconds: 300, disruption: draining('Expired', 6 * 60_000) } });
      const pods = [runningPod('a-1', 'a'), runningPod('a-2', 'a'), runningPod('z-1', 'z'), runningPod('z-2', 'z')];
      for (let n = 1; n <= 7; n++) {
        const cluster = new MemoryCluster([pool], [{ ...a.node, taints: [TAINT] }, { ...z.node, taints: [TAINT] }], pods);
        const { deps, done } = crashingAfter(depsOf(cluster, new MemoryNodeClaimStore({ records: [a.claim, z.claim] })), n);
        await disrupt(deps).catch(() => undefined);
        // z's pods deleted (each with its Disrupted Event), then its record, instance and Node: nothing of a's before.
        expect(done.every((what) => what.includes('z') || what.includes('i-z'))).toBe(true);
      }
    });

    it('writes the pod-event stamps last: after a burst, a pass that dies early has started the proposal waiting, not stamped node after node', async () => {
      const pool = nodePool('general');
      // Four nodes whose pods changed since their records were stamped (a burst), and an empty node proposed 20 s ago.
      const busy = ['b1', 'b2', 'b3', 'b4'].map((n) => launched(n, pool, m5large, { claim: { podsFingerprint: 'before-the-burst' } }));
      const empty = launched('e', pool, m5large, { claim: { disruption: proposal({ reason: 'Empty', decision: 'delete', candidates: ['e'] }) } });
      const pods = busy.map((b) => runningPod(`web-${b.claim.name}`, b.claim.name));
      const cluster = new MemoryCluster([pool], [...busy.map((b) => b.node), empty.node], pods);
      const store = new MemoryNodeClaimStore({ records: [...busy.map((b) => b.claim), empty.claim] });
      const { deps, done } = crashingAfter(depsOf(cluster, store), 1);
      await expect(disrupt(deps)).rejects.toThrow(/crash after/);
      expect(done).toEqual(['patch e']);
      // A pass that runs to the end writes them (what consolidateAfter counts from outlives the pods it came from).
      await disrupt(depsOf(cluster, store));
      for (const b of busy) expect((await store.get(b.claim.name))!.podsFingerprint).not.toBe('before-the-burst');
    });

    it('starts an expiration before the evictions of drains not yet due', async () => {
      const pool = nodePool('general');
      const a = launched('a', pool, m5large, { claim: { state: 'Deleting', disruption: draining('Expired', 60_000) } });
      const old = launched('old', pool, m5large, { ageHours: 3, claim: { expireAfterSeconds: 3600 } });
      const cluster = new MemoryCluster([pool], [{ ...a.node, taints: [TAINT] }, old.node], [runningPod('a-1', 'a'), runningPod('a-2', 'a'), runningPod('a-3', 'a'), runningPod('o-1', 'old')]);
      const { deps, done } = crashingAfter(depsOf(cluster, new MemoryNodeClaimStore({ records: [a.claim, old.claim] })), 1);
      await expect(disrupt(deps)).rejects.toThrow(/crash after/);
      expect(done).toEqual(['write old']);
    });
  });
});
