import { describe, expect, it } from 'vitest';
import type { SimulationResult } from '../../shared/sim/result.js';
import type { RandomDisruptionScenario } from '../support/random-disruption-scenario.js';
import { checkDisruptionScenario, disruptionProblems } from '../support/random-scenario-checks.js';

// Issue 6's property test, a small sample (`npm run soak` runs the same check over 10,000 simulated days): random
// NodePool budgets (counts, percentages, scheduled windows, reasons, a schedule that does not evaluate), expireAfter,
// terminationGracePeriod, PDBs, do-not-disrupt on pods and nodes, drift, taints and NotReady nodes, one simulated day
// per seed — no budget, PDB or do-not-disrupt violation as the observer counts them, and the Result's cross-checks.
// A failing seed is saved to test-output/disruption-scenarios/ with the observer's violation records.
describe('disruption over random days', () => {
  // Seeds chosen for cover at a low cost: Empty, Underutilized, Drifted and Expired disruptions, evictions under
  // PDBs, do-not-disrupt pods and nodes.
  for (const seed of [6, 9, 11, 12, 15, 16]) {
    it(`keeps every disruption invariant for seed ${seed} (one simulated day)`, async () => {
      await checkDisruptionScenario(seed);
    }, 180_000);
  }
});

describe('disruptionProblems (the cross-checks themselves)', () => {
  const START = Date.parse('2026-03-02T00:00:00Z');
  const iso = (minutes: number) => new Date(START + minutes * 60_000).toISOString();
  const scenario: RandomDisruptionScenario = {
    seed: 0,
    dir: '',
    file: '',
    yaml: '',
    startMs: START,
    days: 1,
    doNotDisruptDeployments: ['app-0'],
    nodeAnnotations: [
      { atMs: START + 60 * 60_000, nodePool: 'pool-0', value: 'true' },
      { atMs: START + 120 * 60_000, nodePool: 'pool-0', value: 'false' },
    ],
    terminationGraceSeconds: { 'pool-1': 600 },
    involuntaryEvictionWindows: [[START + 300 * 60_000, START + 300 * 60_000]],
    scaleEvents: [{ deployment: 'app-0', atMs: START + 400 * 60_000 }],
    summary: '',
  };
  const zero = { budget: 0, pdb: 0, doNotDisrupt: 0, limits: 0, duplicateLaunches: 0, leakedInstances: 0, placement: 0, churn: 0, evictionLoops: 0 };
  const disruption = (nodeClaim: string, reason: string, at: number, completed: number | null, drain = at) => ({
    at: iso(at),
    command: `c-${nodeClaim}`,
    nodeClaim,
    nodePool: nodeClaim.startsWith('pool-1') ? 'pool-1' : 'pool-0',
    reason,
    decision: 'delete',
    replacement: null,
    drainStartedAt: iso(drain),
    completedAt: completed === null ? null : iso(completed),
  });
  const pod = (name: string, owner: string, nodeClaim: string, deleted: number, evictions: number) => ({ namespace: 'default', name, owner, nodeClaim, node: `node-${nodeClaim}`, deletedAt: iso(deleted), evictions });
  const result = (extra: Partial<Record<'disruptions' | 'pods' | 'nodes', unknown[]>>, violations = zero) =>
    ({
      violations,
      disruptions: extra.disruptions ?? [],
      pods: extra.pods ?? [],
      nodes: extra.nodes ?? [],
      nodeClaims: [{ name: 'pool-0-a', nodePool: 'pool-0' }, { name: 'pool-0-b', nodePool: 'pool-0' }, { name: 'pool-1-a', nodePool: 'pool-1' }],
    }) as unknown as SimulationResult;

  it('passes a clean Result', () => {
    expect(disruptionProblems(scenario, result({}))).toEqual([]);
  });

  it('flags any violation count', () => {
    expect(disruptionProblems(scenario, result({}, { ...zero, pdb: 1 }))).toEqual(['violations.pdb = 1']);
    expect(disruptionProblems(scenario, result({}, { ...zero, churn: 2 }))).toEqual(['violations.churn = 2']);
    const { churn: _churn, ...withoutChurn } = zero;
    expect(disruptionProblems(scenario, result({}, withoutChurn as typeof zero))).toEqual(['violations.churn is missing: the observer does not count replace loops']);
  });

  it('flags a disruption that completes before it starts', () => {
    expect(disruptionProblems(scenario, result({ disruptions: [disruption('pool-0-a', 'Expired', 10, 9)] }))).toHaveLength(2);
  });

  it('flags a do-not-disrupt pod evicted or terminated by a voluntary disruption, not by a forceful one, after grace, or by a NoExecute taint', () => {
    const problems = disruptionProblems(
      scenario,
      result({
        disruptions: [disruption('pool-0-a', 'Underutilized', 10, 20), disruption('pool-0-b', 'Expired', 10, 20), disruption('pool-1-a', 'Drifted', 10, 40)],
        pods: [
          pod('app-0-x-1', 'ReplicaSet/app-0-x', 'pool-0-a', 15, 1), // evicted by Underutilized: flagged
          pod('app-0-x-2', 'ReplicaSet/app-0-x', 'pool-0-a', 20, 0), // terminated with the node: flagged
          pod('app-0-x-3', 'ReplicaSet/app-0-x', 'pool-0-b', 15, 1), // Expired: forceful, fine
          pod('app-0-x-4', 'ReplicaSet/app-0-x', 'pool-1-a', 30, 1), // after pool-1's 10-minute grace: fine
          pod('app-0-x-5', 'ReplicaSet/app-0-x', 'pool-1-a', 15, 1), // within the grace: flagged
          pod('app-1-y-1', 'ReplicaSet/app-1-y', 'pool-0-a', 15, 1), // no do-not-disrupt: fine
          pod('app-0-x-6', 'ReplicaSet/app-0-x', 'pool-0-a', 17, 0), // scaled down during the disruption: fine
        ],
      }),
    );
    expect(problems.map((p) => p.split(' ')[1])).toEqual(['default/app-0-x-1', 'default/app-0-x-2', 'default/app-0-x-5']);
    const involuntary = disruptionProblems(scenario, result({ disruptions: [disruption('pool-0-a', 'Underutilized', 290, 310)], pods: [pod('app-0-x-7', 'ReplicaSet/app-0-x', 'pool-0-a', 300, 1)] }));
    expect(involuntary).toEqual([]);
  });

  it('does not flag a do-not-disrupt pod its Deployment scaled away at the instant the drain waiting for it completed (seed 50670)', () => {
    const scaled = disruptionProblems(scenario, result({ disruptions: [disruption('pool-0-a', 'Drifted', 390, 400)], pods: [pod('app-0-x-8', 'ReplicaSet/app-0-x', 'pool-0-a', 400, 0)] }));
    expect(scaled).toEqual([]);
    // The same instant without a scale event is a pod terminated with its node.
    const terminated = disruptionProblems(scenario, result({ disruptions: [disruption('pool-0-a', 'Drifted', 380, 390)], pods: [pod('app-0-x-9', 'ReplicaSet/app-0-x', 'pool-0-a', 390, 0)] }));
    expect(terminated.map((p) => p.split(' ')[1])).toEqual(['default/app-0-x-9']);
  });

  it('flags a do-not-disrupt pod deleted directly by a drain before the deadline minus its 30 s grace, not after', () => {
    const disrupted = (name: string) => ({ at: iso(10), type: 'Normal', reason: 'Disrupted', object: `Pod/default/${name}`, message: '' });
    const problems = disruptionProblems(
      scenario,
      {
        ...result({
          disruptions: [disruption('pool-1-a', 'Drifted', 10, 40)],
          pods: [
            pod('app-0-x-8', 'ReplicaSet/app-0-x', 'pool-1-a', 19, 0), // 10-minute grace from minute 10: allowed from 19:30
            pod('app-0-x-9', 'ReplicaSet/app-0-x', 'pool-1-a', 20, 0), // at 20: fine
          ],
        }),
        events: [disrupted('app-0-x-8'), disrupted('app-0-x-9')],
      } as unknown as SimulationResult,
    );
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/default\/app-0-x-8 .* was deleted directly/);
  });

  it('flags a node annotated do-not-disrupt that starts a voluntary disruption while annotated', () => {
    const node = (name: string, nodeClaim: string, created: number) => ({ name, nodeClaim, labels: { 'karpenter.sh/nodepool': 'pool-0' }, createdAt: iso(created), deletedAt: null });
    const problems = disruptionProblems(
      scenario,
      result({
        nodes: [node('n-a', 'pool-0-a', 0), node('n-b', 'pool-0-b', 0)],
        disruptions: [disruption('pool-0-a', 'Drifted', 90, 95), disruption('pool-0-b', 'Empty', 130, 131)],
      }),
    );
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('node n-a');
  });
});
