/**
 * The what-if's BUDGET of each disruption states the budget the disruption controller used when it started it
 * (issue 22, new-user trial: emptiness rows were one node off). Expectations follow Karpenter's budget formula (core
 * `pkg/controllers/disruption/helpers.go BuildDisruptionBudgetMapping`, `nodepool.go GetAllowedDisruptionsByReason`):
 * the NodePool's managed, initialized nodes, a percentage of them rounded up, minus the nodes already being disrupted.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { simulateScenario } from '../../shared/cli/simulate.js';
import { formatSummary } from '../../shared/cli/summary.js';
import type { SimulationResult } from '../../shared/sim/result.js';
import { scenarioFolder } from '../support/simulate-docs.js';
import { GENERAL_POOL } from '../support/provisioner-harness.js';

/** 11 nodes of NodePool `general` at the start, each kept busy by a bound pod but `n-09` and `n-10`. */
const NODES = 11;
const EMPTY = ['n-09', 'n-10'];
const names = Array.from({ length: NODES }, (_, i) => `n-${String(i).padStart(2, '0')}`);

const POOL = `${GENERAL_POOL.trimEnd()}
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 30s
    budgets: [{nodes: "10%"}]
`;

const SCENARIO = `
apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: what-if-budget}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: 20m
  region: us-west-2
  nodes:
${names.map((n) => `    - {name: ${n}, instanceType: m5.large, zone: us-west-2a, capacityType: on-demand, nodePool: general, createdAt: "-2h"}`).join('\n')}
`;

/** A bare pod bound to `node` (it stays there: nothing reschedules a bare pod). */
const pinned = (node: string) => `
apiVersion: v1
kind: Pod
metadata: {name: keep-${node}}
spec:
  nodeName: ${node}
  containers: [{name: c, image: app, resources: {requests: {cpu: 500m, memory: 512Mi}}}]
`;

let result: SimulationResult;

beforeAll(async () => {
  const docs = [POOL, SCENARIO, ...names.filter((n) => !EMPTY.includes(n)).map(pinned)];
  result = (await simulateScenario(scenarioFolder(docs, 'skiff-what-if-budget-'), { seed: 1 })).result;
}, 120_000);

describe('what-if budget of an emptiness deletion', () => {
  it('counts the NodePool nodes the controller counted when it validated the deletion, the empty ones included', () => {
    const empty = result.whatIf!.actions.filter((a) => a.method === 'emptiness');
    expect(empty.map((a) => a.node).sort()).toEqual(EMPTY);
    // Both empty nodes went in one command, at one instant: the budget allowed at least two at once.
    expect(new Set(empty.map((a) => a.at)).size).toBe(1);
    // Karpenter's formula at validation: 11 initialized nodes, none disrupted yet, 10 % of 11 rounded up = 2.
    const expected = { index: 0, allowed: Math.ceil((NODES * 10) / 100), nodes: NODES, disrupting: 0, remaining: 2 };
    for (const a of empty) {
      expect(a.budgetRule).toMatchObject(expected);
      expect(a.budget).toMatch(/: 2 of 11 nodes at once$/);
    }
    // The Result records it on each disruption, the numbers the what-if shows.
    for (const d of result.disruptions.filter((x) => x.reason === 'Empty')) expect(d.budget).toEqual({ nodes: 11, disrupting: 0, allowed: 2, remaining: 2, budget: 0 });
  });

  it('prints that budget in the summary row', () => {
    const lines = formatSummary(result).split('\n');
    for (const node of EMPTY) expect(lines.find((l) => l.includes(node) && l.includes('emptiness'))).toMatch(/\bb1 2\/11\b/);
    // The one budget of 10 % for every reason is what Karpenter gives a NodePool that sets none: said so (trial).
    expect(lines).toContain('  b1: NodePool general spec.disruption.budgets[0] nodes "10%" (no schedule: always active, Karpenter\'s default budget)');
    // Both deletions finished in the run: the headline counts none as still draining.
    expect(lines.find((l) => l.startsWith('Disruptions, in order:'))).toBe('Disruptions, in order: 2 nodes (2 deleted, 0 replaced)');
  });
});
