import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { simulateScenario } from '../../shared/cli/simulate.js';
import type { SimulationResult } from '../../shared/sim/result.js';
import { deploymentYaml as deployment, GENERAL_POOL } from '../support/provisioner-harness.js';

const scenario = (body: string, duration = '1h') => `
apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: lifecycle}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: ${duration}
  region: us-west-2
${body}`;

async function run(...docs: string[]): Promise<SimulationResult> {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-lifecycle-'));
  writeFileSync(join(dir, 'scenario.yaml'), docs.map((d) => d.trim()).join('\n---\n'));
  return (await simulateScenario(dir, { seed: 5 })).result;
}

const NO_VIOLATIONS = { budget: 0, pdb: 0, doNotDisrupt: 0, limits: 0, duplicateLaunches: 0, leakedInstances: 0, placement: 0, churn: 0, evictionLoops: 0 };
const webPodsPlaced = (r: SimulationResult) => r.pods.filter((p) => p.owner?.startsWith('ReplicaSet/web-') && p.deletedAt === null).every((p) => p.node !== null);

describe('simulation engine: NodeClaim lifecycle', () => {
  it('registers and initializes every launched NodeClaim and labels its Node', async () => {
    const r = await run(GENERAL_POOL, deployment('web', 3), scenario(''));
    expect(r.nodeClaims.length).toBeGreaterThan(0);
    for (const c of r.nodeClaims) {
      expect(c.registeredAt).not.toBeNull();
      expect(c.initializedAt).not.toBeNull();
      // The kubelet joins 45 s after launch and turns Ready 15 s later; the relay's node events run the lifecycle.
      expect(Date.parse(c.registeredAt!) - Date.parse(c.launchedAt!)).toBe(45_000);
      expect(Date.parse(c.initializedAt!) - Date.parse(c.registeredAt!)).toBe(15_000);
    }
    for (const n of r.nodes) {
      expect(n.labels).toMatchObject({ 'karpenter.sh/nodepool': 'general', 'workload-type': 'general', 'karpenter.sh/registered': 'true', 'karpenter.sh/initialized': 'true' });
    }
    expect(r.pods.every((p) => p.scheduledAt !== null)).toBe(true);
    expect(r.violations).toEqual(NO_VIOLATIONS);
  });

  it('drains a NodeClaim whose instance is terminated out of band (its state-change notification: Interrupted) and places its pods again', async () => {
    const r = await run(
      GENERAL_POOL,
      deployment('web', 4),
      scenario(`  events:
    - at: 20m
      instanceStateChange: {nodeSelector: {karpenter.sh/nodepool: general}, count: 1, state: terminated}`),
    );
    // The interruption controller acts on the notification at once (Karpenter's CordonAndDrain, Event
    // InstanceTerminating); the lifecycle controller's InstanceTerminated cleanup covers a lost notification
    // (test/controllers/lifecycle.test.ts).
    const gone = r.nodeClaims.filter((c) => c.deletionReason === 'Interrupted');
    expect(gone).toHaveLength(1);
    expect(r.events).toContainEqual(expect.objectContaining({ reason: 'InstanceTerminating', object: `NodeClaim/${gone[0]!.name}`, at: '2026-03-02T08:20:00.000Z' }));
    // Pods evicted at once; the next disruption pass finds the node empty and deletes it.
    expect(gone[0]!.deletedAt).toBe('2026-03-02T08:20:30.000Z');
    const node = r.nodes.find((n) => n.nodeClaim === gone[0]!.name)!;
    expect(node.deletedAt).toBe('2026-03-02T08:20:30.000Z');
    expect(r.pods.filter((p) => p.node === node.name).every((p) => p.deletedAt !== null)).toBe(true);
    expect(webPodsPlaced(r)).toBe(true);
    expect(r.pods.filter((p) => p.owner?.startsWith('ReplicaSet/web-') && p.deletedAt === null)).toHaveLength(4);
    expect(r.violations).toEqual(NO_VIOLATIONS);
    expect(r.events.filter((e) => e.reason === 'NotSimulated')).toEqual([]);
  });

  it('drains the Node a user deletes, then deletes its NodeClaim (NodeDeleted), terminates its instance and places its pods again', async () => {
    const r0 = await run(GENERAL_POOL, deployment('web', 2), scenario('', '5m'));
    const nodeName = r0.nodes[0]!.name;
    const r = await run(
      GENERAL_POOL,
      deployment('web', 2),
      scenario(`  events:
    - at: 10m
      delete: {kind: Node, name: ${nodeName}}`),
    );
    const claim = r.nodeClaims.find((c) => r.nodes.find((n) => n.name === nodeName)?.nodeClaim === c.name)!;
    // The termination finalizer holds the Node: the lifecycle pass the deletion triggers starts the termination, the
    // next disruption pass (10:30) evicts its pods, and the follow-up it asks for (the 11:00 slot) finds it drained and
    // terminates it.
    expect(claim).toMatchObject({ deletedAt: '2026-03-02T08:11:00.000Z', deletionReason: 'NodeDeleted' });
    expect(r.pods.filter((p) => p.node === nodeName && !p.owner?.startsWith('DaemonSet/')).every((p) => p.evictions === 1 && p.deletedAt === '2026-03-02T08:10:30.000Z')).toBe(true);
    expect(r.nodeClaims.filter((c) => c.deletedAt === null).length).toBeGreaterThan(0);
    expect(webPodsPlaced(r)).toBe(true);
    expect(r.events).toContainEqual(expect.objectContaining({ reason: 'NodeDeleted', object: `NodeClaim/${claim.name}` }));
    expect(r.violations).toEqual(NO_VIOLATIONS);
  });

  it('deletes at once a NodeClaim whose instance stops before its kubelet joins (InstanceStopping) and launches again', async () => {
    const r = await run(
      GENERAL_POOL,
      deployment('web', 2),
      scenario(`  events:
    - at: 20s
      instanceStateChange: {instanceId: i-00000000000000001, state: stopped}`),
    );
    // Without the notification the lifecycle controller's RegistrationTimeout would end it after 15 minutes
    // (test/controllers/lifecycle.test.ts); the interruption controller does not wait.
    const first = r.nodeClaims[0]!;
    expect(first).toMatchObject({ registeredAt: null, deletionReason: 'Interrupted', deletedAt: '2026-03-02T08:00:20.000Z' });
    expect(r.events).toContainEqual(expect.objectContaining({ reason: 'InstanceStopping', object: `NodeClaim/${first.name}` }));
    expect(r.nodeClaims.length).toBeGreaterThan(1);
    expect(webPodsPlaced(r)).toBe(true);
    expect(r.violations).toEqual(NO_VIOLATIONS);
  });

  it('sets a node NotReady (its pods are evicted after 5 minutes) and launches capacity for them at once: a NotReady node takes no pods', async () => {
    const r = await run(
      GENERAL_POOL,
      deployment('web', 2),
      scenario(`  events:
    - at: 10m
      nodeCondition: {nodeSelector: {karpenter.sh/nodepool: general}, count: 1, ready: false}
    - at: 30m
      nodeCondition: {nodeSelector: {karpenter.sh/nodepool: general}, count: 1, ready: true}`),
    );
    const evicted = r.pods.filter((p) => p.evictions > 0);
    expect(evicted.length).toBeGreaterThan(0);
    expect(evicted.every((p) => p.deletedAt === '2026-03-02T08:15:00.000Z')).toBe(true);
    // Karpenter honours an initialized node's taints (core `StateNode.Taints`), and a NotReady node carries
    // `node.kubernetes.io/not-ready:NoSchedule`, which the pods do not tolerate: the solver does not count its room, so
    // the evicted pods' replacements get a new NodeClaim instead of waiting 15 minutes for the node to come back.
    const replacements = r.pods.filter((p) => p.owner?.startsWith('ReplicaSet/web-') && p.firstPendingAt === '2026-03-02T08:15:00.000Z');
    expect(replacements.length).toBe(evicted.length);
    for (const p of replacements) expect(Date.parse(p.scheduledAt!) - Date.parse(p.firstPendingAt!)).toBeLessThan(5 * 60_000);
    expect(r.nodeClaims.filter((c) => Date.parse(c.createdAt) >= Date.parse('2026-03-02T08:15:00.000Z')).length).toBeGreaterThan(0);
    expect(webPodsPlaced(r)).toBe(true);
    expect(r.events.filter((e) => e.reason === 'NotSimulated')).toEqual([]);
    expect(r.violations).toEqual(NO_VIOLATIONS);
  });

  it('says so when a timeline event matches no node', async () => {
    const r = await run(
      GENERAL_POOL,
      scenario(`  events:
    - at: 1m
      nodeCondition: {nodeSelector: {team: none}, ready: false}`),
    );
    expect(r.events).toContainEqual(expect.objectContaining({ reason: 'ScenarioEventSkipped', object: 'Scenario/nodeCondition' }));
  });
});
