// Interruption end to end: the timeline's spotInterruption, rebalanceRecommendation and scheduledMaintenance events
// send the real EventBridge JSON to the interruption queue, and the real interruption handler and controller (with the
// provisioner, lifecycle and disruption handlers) react, while the observer counts violations independently.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { simulateScenario } from '../../shared/cli/simulate.js';
import type { SimulationResult } from '../../shared/sim/result.js';
import { deploymentYaml, GENERAL_POOL } from '../support/provisioner-harness.js';

const scenario = (events: string, duration = '30m') => `
apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: interruption}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: ${duration}
  region: us-west-2
  events:
${events}`;

/** The general NodePool with spot only (every node is a spot node). */
const SPOT_POOL = GENERAL_POOL.replace('values: [spot, on-demand]', 'values: [spot]');
const web = deploymentYaml('web', 4, '1', '2Gi').replace('spec:\n      containers', 'spec:\n      nodeSelector: {workload-type: general}\n      containers');

async function run(...docs: string[]): Promise<SimulationResult> {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-interruption-'));
  writeFileSync(join(dir, 'scenario.yaml'), docs.map((d) => d.trim()).join('\n---\n'));
  return (await simulateScenario(dir, { seed: 3 })).result;
}

const NO_VIOLATIONS = { budget: 0, pdb: 0, doNotDisrupt: 0, limits: 0, duplicateLaunches: 0, leakedInstances: 0, placement: 0, churn: 0, evictionLoops: 0 };
const liveWebPods = (r: SimulationResult) => r.pods.filter((p) => p.owner?.startsWith('ReplicaSet/web-') && p.deletedAt === null);

describe('simulation: interruption', () => {
  it('drains an interrupted spot node at once, places its pods again on a replacement in another offering, and reports the deletion as Interrupted', async () => {
    const r = await run(SPOT_POOL, web, scenario('    - {at: 10m, spotInterruption: {nodeSelector: {karpenter.sh/capacity-type: spot}, count: 1}}'));
    const interrupted = r.nodeClaims.filter((c) => c.deletionReason === 'Interrupted');
    expect(interrupted).toHaveLength(1);
    const victim = interrupted[0]!;
    // Drained and deleted well within the two minutes' notice.
    expect(Date.parse(victim.deletedAt!)).toBeGreaterThanOrEqual(Date.parse('2026-03-02T08:10:00Z'));
    expect(Date.parse(victim.deletedAt!)).toBeLessThan(Date.parse('2026-03-02T08:12:00Z'));

    const entry = r.disruptions.find((d) => d.nodeClaim === victim.name)!;
    expect(entry).toMatchObject({ reason: 'Interrupted', decision: 'delete', at: '2026-03-02T08:10:00.000Z', drainStartedAt: '2026-03-02T08:10:00.000Z', completedAt: victim.deletedAt });
    expect(entry.replacement).not.toBeNull();
    const replacement = r.nodeClaims.find((c) => c.name === entry.replacement)!;
    // Launched in parallel with the drain, not after it, and not into the pool that was just reclaimed.
    expect(replacement.createdAt).toBe('2026-03-02T08:10:00.000Z');
    expect(replacement.deletedAt).toBeNull();
    expect(replacement.capacityType).toBe('spot');
    expect(`${replacement.instanceType}/${replacement.zone}/${replacement.capacityType}`).not.toBe(`${victim.instanceType}/${victim.zone}/${victim.capacityType}`);

    // The victim's pods were evicted and their successors run again.
    const victimNode = r.nodes.find((n) => n.nodeClaim === victim.name)!;
    const evicted = r.pods.filter((p) => p.node === victimNode.name);
    expect(evicted.length).toBeGreaterThan(0);
    expect(evicted.every((p) => p.deletedAt === '2026-03-02T08:10:00.000Z' && p.evictions === 1)).toBe(true);
    expect(liveWebPods(r)).toHaveLength(4);
    expect(liveWebPods(r).every((p) => p.node !== null)).toBe(true);
    expect(r.unschedulable).toEqual([]);

    expect(r.events).toContainEqual(expect.objectContaining({ reason: 'SpotInterrupted', object: `NodeClaim/${victim.name}`, at: '2026-03-02T08:10:00.000Z' }));
    expect(r.events.filter((e) => e.reason === 'NotSimulated' || e.reason === 'ScenarioEventSkipped')).toEqual([]);
    expect(r.violations).toEqual(NO_VIOLATIONS);
  });

  it('drains a node under an AWS Health scheduled change (the instance keeps running until Skiff terminates it)', async () => {
    const r = await run(GENERAL_POOL, web, scenario('    - {at: 10m, scheduledMaintenance: {nodeSelector: {karpenter.sh/nodepool: general}, count: 1}}'));
    const interrupted = r.nodeClaims.filter((c) => c.deletionReason === 'Interrupted');
    expect(interrupted).toHaveLength(1);
    expect(r.events).toContainEqual(expect.objectContaining({ reason: 'InstanceUnhealthy', object: `NodeClaim/${interrupted[0]!.name}` }));
    expect(r.disruptions.find((d) => d.nodeClaim === interrupted[0]!.name)?.replacement).not.toBeNull();
    expect(liveWebPods(r).every((p) => p.node !== null)).toBe(true);
    expect(r.violations).toEqual(NO_VIOLATIONS);
  });

  it('only records a rebalance recommendation', async () => {
    const r = await run(SPOT_POOL, web, scenario('    - {at: 10m, rebalanceRecommendation: {nodeSelector: {karpenter.sh/capacity-type: spot}, count: 1}}', '15m'));
    expect(r.events.filter((e) => e.reason === 'SpotRebalanceRecommendation')).toHaveLength(1);
    expect(r.disruptions).toEqual([]);
    expect(r.nodeClaims.every((c) => c.deletedAt === null)).toBe(true);
    expect(r.violations).toEqual(NO_VIOLATIONS);
  });

  it('ignores a state change of an instance Skiff does not own', async () => {
    const r = await run(GENERAL_POOL, web, scenario('    - {at: 5m, instanceStateChange: {instanceId: i-0abcdef0123456789, state: stopped}}', '10m'));
    expect(r.disruptions).toEqual([]);
    expect(r.nodeClaims.every((c) => c.deletedAt === null)).toBe(true);
    expect(r.violations).toEqual(NO_VIOLATIONS);
  });
});
