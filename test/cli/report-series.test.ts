import { describe, expect, it } from 'vitest';
import {
  budgetOverview,
  costSeries,
  disruptionMarks,
  nodesSeries,
  pendingSeries,
  reportSeries,
  stepSeries,
  UNMANAGED_NODEPOOL,
} from '../../shared/cli/report/series.js';
import type { Result, ResultNode, ResultNodeClaim, ResultPod } from '../../shared/sim/result-schema.js';
import { ResultSchema } from '../../shared/sim/result-schema.js';

/** Epoch ms of 2026-03-02 at `hhmm` UTC (e.g. '08:30'). */
const at = (hhmm: string): number => Date.parse(`2026-03-02T${hhmm}:00.000Z`);
const iso = (hhmm: string): string => new Date(at(hhmm)).toISOString();

function claim(name: string, fields: Partial<ResultNodeClaim>): ResultNodeClaim {
  return {
    name,
    nodePool: 'general',
    instanceType: 'm5.large',
    capacityType: 'on-demand',
    zone: 'us-west-2a',
    price: 0.096,
    labels: {},
    taints: [],
    allocatable: {},
    requirements: [],
    createdAt: iso('08:00'),
    launchedAt: iso('08:00'),
    registeredAt: null,
    initializedAt: null,
    deletedAt: null,
    deletionReason: null,
    launchError: null,
    ...fields,
  };
}

function node(name: string, fields: Partial<ResultNode>): ResultNode {
  return { name, nodeClaim: null, instanceType: 'm5.large', zone: 'us-west-2a', capacityType: 'on-demand', labels: {}, createdAt: iso('08:00'), deletedAt: null, ...fields };
}

function pod(name: string, fields: Partial<ResultPod>): ResultPod {
  return { namespace: 'default', name, owner: null, createdAt: iso('08:00'), deletedAt: null, node: null, nodeClaim: null, firstPendingAt: null, scheduledAt: null, evictions: 0, ...fields };
}

/**
 * A two-hour run, 08:00–10:00 UTC: NodeClaim a (general, on-demand, $0.10/h) runs 08:00–09:00 and is consolidated;
 * b (general, spot, $0.04/h) launches at 08:30; c (batch) fails to launch; an unmanaged node predates the run.
 */
const result: Result = {
  scenario: 'hand-built',
  start: iso('08:00'),
  end: iso('10:00'),
  seed: 1,
  nodeClaims: [
    claim('a', { price: 0.1, launchedAt: iso('08:00'), deletedAt: iso('09:00'), deletionReason: 'Underutilized' }),
    claim('b', { capacityType: 'spot', price: 0.04, createdAt: iso('08:30'), launchedAt: iso('08:30') }),
    claim('c', { nodePool: 'batch', instanceType: null, capacityType: null, zone: null, price: null, launchedAt: null, deletedAt: iso('08:10'), deletionReason: 'LaunchFailed', launchError: 'InsufficientInstanceCapacity' }),
  ],
  nodes: [
    node('na', { nodeClaim: 'a', createdAt: iso('08:01'), deletedAt: iso('09:00') }),
    node('nb', { nodeClaim: 'b', capacityType: 'spot', createdAt: iso('08:31') }),
    node('n0', { createdAt: '2026-03-02T07:00:00.000Z' }),
  ],
  launchAttempts: [],
  pods: [
    pod('p1', { firstPendingAt: iso('08:00'), scheduledAt: iso('08:01'), node: 'na' }),
    pod('p2', { firstPendingAt: iso('08:00'), scheduledAt: iso('08:31'), node: 'nb' }),
    pod('p3', { createdAt: iso('09:30'), firstPendingAt: iso('09:30') }),
    pod('p4', { scheduledAt: iso('08:00'), node: 'n0' }),
    pod('p5', { createdAt: iso('08:40'), firstPendingAt: iso('08:40'), deletedAt: iso('08:50') }),
  ],
  unschedulable: [{ pod: 'default/p3', since: iso('09:30'), reason: 'no NodePool can serve the pod', nodePools: { general: 'too big' } }],
  disruptions: [{ at: iso('08:55'), command: 'cmd-1', nodeClaim: 'a', nodePool: 'general', reason: 'Underutilized', decision: 'replace', replacement: 'b', drainStartedAt: null, completedAt: null }],
  events: [],
  violations: { budget: 0, pdb: 0, doNotDisrupt: 0, limits: 0, duplicateLaunches: 0, leakedInstances: 0, placement: 0, churn: 0, evictionLoops: 0 },
  cost: { totalUSD: 0.18, peakHourlyUSD: 0.14, finalHourlyUSD: 0.04 },
};

describe('report series', () => {
  it('start from a Result that passes the contract schema', () => {
    expect(ResultSchema.safeParse(result).success).toBe(true);
  });

  describe('stepSeries', () => {
    it('samples each group at every change instant, the run start and the run end', () => {
      const s = stepSeries(
        [
          { group: 'x', from: 0, to: 10, weight: 1 },
          { group: 'x', from: 5, to: null, weight: 2 },
          { group: 'y', from: 10, to: 15, weight: 1 },
        ],
        0,
        20,
      );
      expect(s.times).toEqual([0, 5, 10, 15, 20]);
      expect(s.groups).toEqual([
        { key: 'x', values: [1, 3, 2, 2, 2] },
        { key: 'y', values: [0, 0, 1, 0, 0] },
      ]);
    });

    it('clips intervals to the run: one that began before counts from the start, one still open counts at the end', () => {
      const s = stepSeries([{ group: 'x', from: -100, to: null, weight: 1 }], 0, 20);
      expect(s).toEqual({ times: [0, 20], groups: [{ key: 'x', values: [1, 1] }] });
    });

    it('does not count an interval at its end instant, nor one that ended at the start or began after the end', () => {
      const s = stepSeries(
        [
          { group: 'x', from: 5, to: 20, weight: 1 },
          { group: 'x', from: -10, to: 0, weight: 1 },
          { group: 'x', from: 25, to: null, weight: 1 },
        ],
        0,
        20,
      );
      expect(s).toEqual({ times: [0, 5, 20], groups: [{ key: 'x', values: [0, 1, 0] }] });
    });

    it('counts an interval that begins exactly at the end in the last sample', () => {
      expect(stepSeries([{ group: 'x', from: 20, to: null, weight: 1 }], 0, 20).groups).toEqual([{ key: 'x', values: [0, 1] }]);
    });

    it('ignores an inverted interval but keeps its group (all zeros)', () => {
      expect(stepSeries([{ group: 'x', from: 10, to: 5, weight: 1 }], 0, 20)).toEqual({ times: [0, 20], groups: [{ key: 'x', values: [0, 0] }] });
    });

    it('rounds sums to 10⁻⁶ so prices add up without float noise', () => {
      const s = stepSeries(
        [
          { group: 'x', from: 0, to: null, weight: 0.1 },
          { group: 'x', from: 0, to: null, weight: 0.2 },
        ],
        0,
        20,
      );
      expect(s.groups[0]!.values).toEqual([0.3, 0.3]);
    });
  });

  describe('nodesSeries', () => {
    it('counts Nodes by NodePool and capacity type from createdAt until deletedAt, unowned ones as unmanaged', () => {
      const s = nodesSeries(result);
      expect(s.times).toEqual([at('08:00'), at('08:01'), at('08:31'), at('09:00'), at('10:00')]);
      expect(s.groups).toEqual([
        { key: `${UNMANAGED_NODEPOOL}/on-demand`, values: [1, 1, 1, 1, 1] },
        { key: 'general/on-demand', values: [0, 1, 1, 0, 0] },
        { key: 'general/spot', values: [0, 0, 1, 1, 1] },
      ]);
    });

    it("takes the NodePool from a Node's karpenter.sh/nodepool label when it has no NodeClaim", () => {
      const labelled = { ...result, nodes: [node('n1', { labels: { 'karpenter.sh/nodepool': 'legacy' } })] };
      expect(nodesSeries(labelled).groups.map((g) => g.key)).toEqual(['legacy/on-demand']);
    });
  });

  describe('costSeries', () => {
    it('adds launched NodeClaims’ prices (USD/h) by NodePool from launchedAt until deletedAt, failed launches not at all', () => {
      expect(costSeries(result)).toEqual({
        times: [at('08:00'), at('08:30'), at('09:00'), at('10:00')],
        groups: [{ key: 'general', values: [0.1, 0.14, 0.04, 0.04] }],
      });
    });

    it("ends at the Result's final hourly cost when every node is a NodeClaim's", () => {
      const values = costSeries(result).groups[0]!.values;
      expect(values.at(-1)).toBe(result.cost.finalHourlyUSD);
      expect(Math.max(...values)).toBe(result.cost.peakHourlyUSD);
    });
  });

  describe('pendingSeries', () => {
    it('counts pods from firstPendingAt until scheduled or deleted; never-pending pods not at all', () => {
      expect(pendingSeries(result)).toEqual({
        times: [at('08:00'), at('08:01'), at('08:31'), at('08:40'), at('08:50'), at('09:30'), at('10:00')],
        groups: [{ key: 'pending', values: [2, 1, 0, 1, 0, 1, 1] }],
      });
    });

    it('is a zero line when no pod was ever pending', () => {
      expect(pendingSeries({ ...result, pods: [] })).toEqual({ times: [at('08:00'), at('10:00')], groups: [{ key: 'pending', values: [0, 0] }] });
    });
  });

  describe('disruptionMarks', () => {
    it('puts disruption commands and NodeClaims deleted with a reason on one timeline, in time order', () => {
      expect(disruptionMarks(result)).toEqual([
        { at: at('08:10'), kind: 'deletion', reason: 'LaunchFailed', nodeClaim: 'c', nodePool: 'batch', detail: 'deleted' },
        { at: at('08:55'), kind: 'command', reason: 'Underutilized', nodeClaim: 'a', nodePool: 'general', detail: 'replace → b' },
        { at: at('09:00'), kind: 'deletion', reason: 'Underutilized', nodeClaim: 'a', nodePool: 'general', detail: 'deleted' },
      ]);
    });

    it('is empty when nothing was disrupted or deleted with a reason', () => {
      expect(disruptionMarks({ ...result, disruptions: [], nodeClaims: [claim('b', {})] })).toEqual([]);
    });
  });

  describe('budgetOverview', () => {
    const pools = [
      { nodePool: 'general', budgets: [{ nodes: '10%' }, { nodes: '0', schedule: '0 9 * * *', duration: '2h' }] },
      { nodePool: 'batch', budgets: [{ nodes: '1', schedule: '61 * * * *', duration: '1h', reasons: ['Empty' as const] }] },
    ];

    it('shades the windows of scheduled budgets, clipped to the run, and lists unscheduled ones as always active', () => {
      const o = budgetOverview(pools, at('08:00'), at('10:00'));
      expect(o.shades.filter((s) => s.nodePool === 'general')).toEqual([{ nodePool: 'general', budget: 1, start: at('09:00'), end: at('10:00'), nodes: '0', reasons: [], label: '0 9 * * * for 2h' }]);
      expect(o.always).toEqual([{ nodePool: 'general', budget: 0, nodes: '10%', reasons: [] }]);
    });

    it('shades a window that opened before the run from the run start', () => {
      const o = budgetOverview(pools.slice(0, 1), at('10:00'), at('12:00'));
      expect(o.shades.map((s) => [s.start, s.end])).toEqual([[at('10:00'), at('11:00')]]);
    });

    it('shades a budget whose schedule does not parse over the whole run as allowing zero (fail closed)', () => {
      const o = budgetOverview(pools, at('08:00'), at('10:00'));
      const batch = o.shades.filter((s) => s.nodePool === 'batch');
      expect(batch).toHaveLength(1);
      expect(batch[0]).toMatchObject({ budget: 0, start: at('08:00'), end: at('10:00'), nodes: '0', reasons: ['Empty'] });
      expect(batch[0]!.label).toMatch(/does not parse.*allows zero disruptions/);
    });

    it('orders shades by NodePool name', () => {
      expect(budgetOverview(pools, at('08:00'), at('10:00')).shades.map((s) => s.nodePool)).toEqual(['batch', 'general']);
    });
  });

  describe('reportSeries', () => {
    it("names every NodePool of the scenario, the NodeClaims and the Nodes once, sorted (one colour each)", () => {
      const s = reportSeries(result, [{ nodePool: 'gpu', budgets: [] }]);
      expect(s.nodePools).toEqual([UNMANAGED_NODEPOOL, 'batch', 'general', 'gpu']);
      expect([s.start, s.end]).toEqual([at('08:00'), at('10:00')]);
    });

    it('is plain JSON (it is embedded in the page as such)', () => {
      const s = reportSeries(result, []);
      expect(JSON.parse(JSON.stringify(s))).toEqual(s);
    });
  });
});
