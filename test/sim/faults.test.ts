import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHandler as createLifecycleHandler } from '../../functions/lifecycle/handler.js';
import { createHandler as createProvisionerHandler } from '../../functions/provisioner/handler.js';
import { DynamoDbNodeClaimStore } from '../../shared/adapters/aws/dynamodb-nodeclaim-store.js';
import { DynamoDbProvisioningPassStore } from '../../shared/adapters/aws/provisioning-pass-store.js';
import { DynamoDbUnavailableOfferingsStore } from '../../shared/adapters/aws/unavailable-offerings-store.js';
import { startDynalite } from '../../shared/cli/local-dynamodb.js';
import { formatSummary } from '../../shared/cli/summary.js';
import { reconcileLifecycle } from '../../shared/controllers/lifecycle.js';
import { provision } from '../../shared/controllers/provision.js';
import { ApiServerUnavailableError, isApiServerUnavailableError, isThrottledError } from '../../shared/core/errors.js';
import { loadCatalog } from '../../shared/core/instancetypes/catalog.js';
import { silentLog } from '../../shared/lambda/log.js';
import { parseManifests } from '../../shared/core/api/manifest.js';
import { seededIds } from '../../shared/ports/ids.js';
import { SIMULATED_CLUSTER_NAME, runSimulation } from '../../shared/sim/engine.js';
import { SimulatedCluster } from '../../shared/sim/simulated-cluster.js';
import { SimulatedEc2 } from '../../shared/sim/simulated-ec2.js';
import { VirtualClock } from '../../shared/sim/virtual-clock.js';
import { MemoryNodeClaimStore } from '../../shared/sim/memory-nodeclaim-store.js';
import { FaultInjector, NO_FAULTS, SimulatedCrash, isSimulatedCrash, type FaultRecord } from '../../shared/sim/faults.js';
import type { SimulationResult } from '../../shared/sim/result.js';
import { ResultSchema } from '../../shared/sim/result-schema.js';
import { loadScenario } from '../../shared/sim/scenario-loader.js';
import { deploymentYaml as deployment, GENERAL_POOL } from '../support/provisioner-harness.js';

const NO_VIOLATIONS = { budget: 0, pdb: 0, doNotDisrupt: 0, limits: 0, duplicateLaunches: 0, leakedInstances: 0, placement: 0, churn: 0, evictionLoops: 0 };

/** Two waves of pods (a burst, then a scale-up) and a capacity error, under `faults` (a YAML flow mapping). */
function scenario(faults: string): string {
  return `
apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: faults}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: 1h
  region: us-west-2
  events:
    - {at: 10m, scale: {kind: Deployment, namespace: default, name: web, replicas: 30}}
    - {at: 9m, insufficientCapacity: {instanceType: m5.large, zone: us-west-2a, capacityType: spot, for: 20m}}
  faults: ${faults}
`;
}

/** Runs the scenario through the real handlers on dynalite, recording every injected fault. */
async function run(faults: string, seed = 7): Promise<{ result: SimulationResult; faults: FaultRecord[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-faults-'));
  writeFileSync(join(dir, 'scenario.yaml'), [GENERAL_POOL, deployment('web', 12), deployment('api', 5, '1', '2Gi'), scenario(faults)].map((d) => d.trim()).join('\n---\n'));
  const loaded = await loadScenario(dir, { now: Date.now() });
  const db = await startDynalite();
  const records: FaultRecord[] = [];
  try {
    const props = { client: db.client, tableName: db.tableName, cluster: SIMULATED_CLUSTER_NAME };
    const result = await runSimulation(loaded, seed, {
      store: new DynamoDbNodeClaimStore(props),
      unavailableOfferings: new DynamoDbUnavailableOfferingsStore(props),
      passes: new DynamoDbProvisioningPassStore(props),
      catalog: loadCatalog(),
      createProvisionerHandler: (deps) => createProvisionerHandler({ provision: (trigger) => provision(deps, trigger), log: silentLog }),
      createLifecycleHandler: (deps) => createLifecycleHandler({ reconcile: () => reconcileLifecycle(deps), log: silentLog }),
      onFault: (r) => records.push(r),
    });
    expect(ResultSchema.safeParse(result).success).toBe(true);
    return { result, faults: records };
  } finally {
    await db.close();
  }
}

/** The invariants every run under faults keeps. */
function expectSurvived(result: SimulationResult): void {
  expect(result.violations).toEqual(NO_VIOLATIONS);
  // Every live pod is placed by the end.
  expect(result.unschedulable).toEqual([]);
  expect(result.pods.filter((p) => p.deletedAt === null).every((p) => p.node !== null)).toBe(true);
  // One instance per NodeClaim: one successful CreateFleet per NodeClaim, and every instance is a NodeClaim's.
  const ok = result.launchAttempts.filter((a) => a.result === 'ok');
  expect(new Set(ok.map((a) => a.nodeClaim)).size).toBe(ok.length);
  expect(result.nodes.every((n) => n.nodeClaim !== null)).toBe(true);
  // No Node is left that nothing owns: every Node still up at the end belongs to a live NodeClaim.
  const live = new Set(result.nodeClaims.filter((c) => c.deletedAt === null).map((c) => c.name));
  expect(result.nodes.filter((n) => n.deletedAt === null).every((n) => live.has(n.nodeClaim!))).toBe(true);
}

const kinds = (records: readonly FaultRecord[], kind: FaultRecord['kind']) => records.filter((r) => r.kind === kind);

describe('fault injection (spec.faults)', () => {
  describe('FaultInjector', () => {
    it('draws the same faults for the same seed, and none at probability 0', async () => {
      const draws = (seed: number) => {
        const f = new FaultInjector({ ...NO_FAULTS, duplicateDelivery: 0.5 }, seed, () => 0);
        return Array.from({ length: 32 }, (_, i) => f.redeliver(`m${i}`));
      };
      expect(draws(1)).toEqual(draws(1));
      expect(draws(1)).not.toEqual(draws(2));
      const none = new FaultInjector(NO_FAULTS, 1, () => 0);
      expect(Array.from({ length: 32 }, (_, i) => none.redeliver(`m${i}`)).some(Boolean)).toBe(false);
      expect(none.active).toBe(false);
    });

    it('crashes right after a side effect succeeded, and never after a read', async () => {
      const f = new FaultInjector({ ...NO_FAULTS, crashAfterSideEffect: 1 }, 1, () => 0);
      const deleted: string[] = [];
      const cloud = f.cloud({ getInstanceTypes: async () => [], create: async () => Promise.reject(new Error('unused')), list: async () => [], delete: async (id) => void deleted.push(id) });
      await expect(cloud.list()).resolves.toEqual([]);
      const crash = await cloud.delete('i-1').catch((e: unknown) => e);
      expect(crash).toBeInstanceOf(SimulatedCrash);
      expect(isSimulatedCrash(crash)).toBe(true);
      expect(deleted).toEqual(['i-1']);
      expect(f.counts.crashAfterSideEffect).toBe(1);
    });

    it('throttles an EC2 call before it does anything', async () => {
      const f = new FaultInjector({ ...NO_FAULTS, ec2Throttle: 1 }, 1, () => 0);
      const deleted: string[] = [];
      const cloud = f.cloud({ getInstanceTypes: async () => [], create: async () => Promise.reject(new Error('unused')), list: async () => [], delete: async (id) => void deleted.push(id) });
      const error = await cloud.delete('i-1').catch((e: unknown) => e);
      expect(isThrottledError(error)).toBe(true);
      expect((error as Error).message).toBe('RequestLimitExceeded');
      expect(deleted).toEqual([]);
    });

    it('fails a DynamoDB call with the adapter\'s throttling error before it writes anything', async () => {
      const f = new FaultInjector({ ...NO_FAULTS, dynamodbThrottle: 1 }, 1, () => 0);
      const recorded: number[] = [];
      const passes = f.passes({ lastCompletedStart: async () => undefined, recordCompleted: async (ms) => void recorded.push(ms) });
      const error = await passes.recordCompleted(5).catch((e: unknown) => e);
      expect(isThrottledError(error)).toBe(true);
      expect((error as Error).message).toContain('ProvisionedThroughputExceededException');
      expect(recorded).toEqual([]);
      expect(f.counts.dynamodbThrottle).toBe(1);
    });

    it('wraps the NodeClaim store: a throttled call never reaches it, a crash strikes after the write took effect', async () => {
      const memory = new MemoryNodeClaimStore();
      const claim = { name: 'general-a', nodePool: 'general', nodeClass: 'default', state: 'Pending', requirements: [], instanceTypes: ['m5.large'], resources: {}, labels: {}, taints: [], startupTaints: [], nominatedPods: [], createdAt: '2026-03-02T08:00:00.000Z' } as const;

      const throttled = await new FaultInjector({ ...NO_FAULTS, dynamodbThrottle: 1 }, 1, () => 0).store(memory).create(claim).catch((e: unknown) => e);
      expect(isThrottledError(throttled)).toBe(true);
      expect(memory.calls).toEqual([]);

      const crashed = await new FaultInjector({ ...NO_FAULTS, crashAfterSideEffect: 1 }, 1, () => 0).store(memory).create(claim).catch((e: unknown) => e);
      expect(crashed).toBeInstanceOf(SimulatedCrash);
      expect((crashed as SimulatedCrash).sideEffect).toBe('store.create(general-a)');
      expect(memory.calls).toEqual([expect.objectContaining({ operation: 'create', subject: 'general-a', outcome: 'ok', written: true })]);
      expect(memory.peek('general-a')).toMatchObject({ state: 'Pending', version: 1 });
    });

    it('fails a Kubernetes API call with a 5xx before it does anything', async () => {
      const f = new FaultInjector({ ...NO_FAULTS, apiServerErrors: 1 }, 1, () => 0);
      const deleted: string[] = [];
      const cluster = f.cluster({ deleteNode: async (name: string) => void deleted.push(name) } as unknown as Parameters<typeof f.cluster>[0]);
      const error = await cluster.deleteNode('n1').catch((e: unknown) => e);
      expect(isApiServerUnavailableError(error)).toBe(true);
      expect((error as ApiServerUnavailableError).status).toBe(503);
      // Callers retry it like throttling.
      expect(isThrottledError(error)).toBe(true);
      expect(deleted).toEqual([]);
    });

    it('runs n overlapping invocations and settles them all', async () => {
      const f = new FaultInjector({ ...NO_FAULTS, concurrentInvocations: 3 }, 1, () => 0);
      let running = 0;
      let peak = 0;
      let i = 0;
      const outcomes = await f.invoke('test', async () => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 5));
        running--;
        if (i++ === 0) throw new SimulatedCrash('x');
        return 'ok';
      });
      expect(peak).toBe(3);
      expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
    });
  });

  describe('the lifecycle controller after a crash', () => {
    it('deletes the Node of an orphan instance whose terminating pass crashed before deleting it', async () => {
      const clock = new VirtualClock(Date.parse('2026-03-02T08:00:00Z'));
      const cluster = new SimulatedCluster(clock, { region: 'us-west-2', ids: seededIds(3), registerWithUnregisteredTaint: true });
      for (const m of parseManifests(GENERAL_POOL, 'pool.yaml')) cluster.apply(m);
      const ec2 = new SimulatedEc2(clock, { region: 'us-west-2', catalog: loadCatalog(), vmMemoryOverheadPercent: 0.075, clusterName: 'test', onRegister: (i) => cluster.registerNode(i) });
      const store = new MemoryNodeClaimStore({ cluster: 'crash' });
      // An instance launched for a NodeClaim whose record never got written; its kubelet joins after 45 s.
      await ec2.create({
        nodeClaim: 'general-ghost',
        nodePool: 'general',
        nodeClass: 'default',
        capacityType: 'on-demand',
        overrides: [{ instanceType: 'm5.large', zone: 'us-west-2a', price: 0.096 }],
        tags: { 'karpenter.sh/nodepool': 'general', 'karpenter.sh/nodeclaim': 'general-ghost', 'skiff.dev/cluster': 'skiff-sim' },
        labels: { 'karpenter.sh/nodepool': 'general' },
        taints: [],
        startupTaints: [],
      });
      await clock.runUntil(clock.now() + 60_000);
      expect(cluster.nodes.size).toBe(1);
      const crashing = new FaultInjector({ ...NO_FAULTS, crashAfterSideEffect: 1 }, 1, () => clock.now());
      const crashed = await reconcileLifecycle({ cluster: crashing.cluster(cluster), cloud: crashing.cloud(ec2), store, clock }).catch((e: unknown) => e);
      expect(crashed).toBeInstanceOf(SimulatedCrash);
      expect(ec2.instances[0]!.state).toBe('terminated');
      expect(cluster.nodes.size).toBe(1);
      // The next run finds the Node although its instance is gone and no NodeClaim names it.
      const report = await reconcileLifecycle({ cluster, cloud: ec2, store, clock });
      expect(report.deletedNodes).toHaveLength(1);
      expect(cluster.nodes.size).toBe(0);
    });
  });

  describe('the engine', () => {
    it('injects nothing and records nothing without faults', async () => {
      const { result, faults } = await run('{}');
      expect(faults).toEqual([]);
      expectSurvived(result);
    });

    it('states the faults in the Result and the summary, with what was injected; a run without faults has neither', async () => {
      const { result, faults } = await run('{crashAfterSideEffect: 0.1, ec2Throttle: 0.2}');
      expect(result.faults).toEqual({
        configured: { duplicateDelivery: 0, concurrentInvocations: 1, crashAfterSideEffect: 0.1, ec2Throttle: 0.2, dynamodbThrottle: 0, apiServerErrors: 0 },
        injected: expect.objectContaining({ crashAfterSideEffect: kinds(faults, 'crashAfterSideEffect').length, ec2Throttle: kinds(faults, 'ec2Throttle').length }),
      });
      expect(kinds(faults, 'crashAfterSideEffect').length).toBeGreaterThan(0);
      expect(formatSummary(result)).toContain(`Faults (spec.faults): crashes 0.1, EC2 throttling 0.2; injected ${kinds(faults, 'crashAfterSideEffect').length} crashes, ${kinds(faults, 'ec2Throttle').length} EC2 calls throttled`);
      const clean = (await run('{}')).result;
      expect(clean.faults).toBeUndefined();
      expect(formatSummary(clean)).not.toContain('Faults');
    });

    it('duplicateDelivery: every message comes twice and no pod gets a second launch', async () => {
      const { result, faults } = await run('{duplicateDelivery: 1}');
      const duplicates = kinds(faults, 'duplicateDelivery');
      expect(duplicates.length).toBeGreaterThan(10);
      // Each message at most once more.
      expect(new Set(duplicates.map((d) => d.subject)).size).toBe(duplicates.length);
      expectSurvived(result);
    });

    it('concurrentInvocations: overlapping provisioner and lifecycle invocations launch one instance per decision', async () => {
      const { result, faults } = await run('{concurrentInvocations: 2}');
      const overlaps = kinds(faults, 'concurrentInvocations');
      expect(overlaps.some((f) => f.subject === 'provisioner ×2')).toBe(true);
      expect(overlaps.some((f) => f.subject === 'lifecycle ×2')).toBe(true);
      expectSurvived(result);
      // The overlapping passes made the same decisions: as many NodeClaims launched as without the fault.
      const alone = (await run('{}')).result;
      expect(result.launchAttempts.filter((a) => a.result === 'ok').length).toBe(alone.launchAttempts.filter((a) => a.result === 'ok').length);
    });

    it('crashAfterSideEffect: invocations die after writes, launches and terminations, and the retries finish the work', async () => {
      const { result, faults } = await run('{crashAfterSideEffect: 0.2}');
      const crashes = kinds(faults, 'crashAfterSideEffect');
      expect(crashes.length).toBeGreaterThan(5);
      expect(crashes.some((c) => c.subject.startsWith('store.'))).toBe(true);
      expectSurvived(result);
      // A crash between the launch and its record leaves no second instance: every NodeClaim with an instance has one.
      expect(result.nodeClaims.filter((c) => c.instanceType !== null).length).toBe(result.launchAttempts.filter((a) => a.result === 'ok').length);
    });

    it('ec2Throttle: throttled EC2 calls are retried (the batch comes back, the lifecycle runs again)', async () => {
      const { result, faults } = await run('{ec2Throttle: 0.3}');
      const throttled = kinds(faults, 'ec2Throttle');
      expect(throttled.some((t) => t.subject === 'CreateFleet')).toBe(true);
      expect(throttled.some((t) => t.subject === 'DescribeInstances')).toBe(true);
      expectSurvived(result);
    });

    it('dynamodbThrottle: throttled DynamoDB reads and writes are retried and nothing is lost', async () => {
      const { result, faults } = await run('{dynamodbThrottle: 0.2}');
      const throttled = kinds(faults, 'dynamodbThrottle');
      expect(throttled.some((t) => t.subject === 'PutItem')).toBe(true);
      expect(throttled.some((t) => t.subject === 'Query')).toBe(true);
      expectSurvived(result);
    });

    it('apiServerErrors: Kubernetes 5xx on lists and writes are retried and nothing is lost', async () => {
      // Which calls fail depends on the seed and on how many calls the run makes (so on the fleet the solver plans):
      // try a few seeds until both a list and a write have failed; every run must survive.
      const failed: FaultRecord[] = [];
      for (let seed = 7; seed < 12 && !(failed.some((t) => t.subject === 'GET pods') && failed.some((t) => t.subject.startsWith('PATCH nodes/'))); seed++) {
        const { result, faults } = await run('{apiServerErrors: 0.2}', seed);
        failed.push(...kinds(faults, 'apiServerErrors'));
        expectSurvived(result);
      }
      expect(failed.some((t) => t.subject === 'GET pods')).toBe(true);
      expect(failed.some((t) => t.subject.startsWith('PATCH nodes/'))).toBe(true);
    });

    it('survives every fault at once', async () => {
      const { result, faults } = await run('{duplicateDelivery: 1, concurrentInvocations: 2, crashAfterSideEffect: 0.1, ec2Throttle: 0.1, dynamodbThrottle: 0.1, apiServerErrors: 0.1}');
      expect(new Set(faults.map((f) => f.kind))).toEqual(new Set(['duplicateDelivery', 'concurrentInvocations', 'crashAfterSideEffect', 'ec2Throttle', 'dynamodbThrottle', 'apiServerErrors']));
      expectSurvived(result);
    });
  });
});
