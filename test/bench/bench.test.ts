import { beforeAll, describe, expect, it } from 'vitest';
import { exactOptimum } from '../../bench/exact.js';
import { firstFitDecreasing } from '../../bench/ffd.js';
import { catalogueInstanceTypes, catalogueTemplate, costMix, diverseMix, plainMix, plainPod } from '../../bench/inputs.js';
import { lpBound } from '../../bench/lp-bound.js';
import { planCost, verifyPlan, type Plan } from '../../bench/plan.js';
import { median, percentile, seededRandom } from '../../bench/stats.js';
import type { NodePoolTemplate } from '../../shared/core/provisioning/scheduler.js';

let template: NodePoolTemplate;

beforeAll(async () => {
  template = catalogueTemplate(await catalogueInstanceTypes(), 'on-demand');
});

describe('bench inputs', () => {
  it('builds the same pods for the same seed and different ones for another', () => {
    const requests = (seed: number) => plainMix(50, seed).map((p) => p.requests);
    expect(requests(4)).toEqual(requests(4));
    expect(requests(4)).not.toEqual(requests(5));
  });

  it('makes the diverse mix 20 % of each kind, constrained pods carrying their required terms', () => {
    const pods = diverseMix(100);
    expect(pods).toHaveLength(100);
    expect(pods.filter((p) => p.topology.length === 0)).toHaveLength(20);
    const kinds = new Map<string, number>();
    for (const p of pods) for (const t of p.topology) kinds.set(`${t.kind}/${t.key}`, (kinds.get(`${t.kind}/${t.key}`) ?? 0) + 1);
    expect(Object.fromEntries(kinds)).toEqual({
      'spread/topology.kubernetes.io/zone': 20,
      'spread/kubernetes.io/hostname': 20,
      'affinity/topology.kubernetes.io/zone': 20,
      'antiAffinity/kubernetes.io/hostname': 20,
    });
  });

  it('draws cost mixes from their stated request sets', () => {
    for (const p of costMix('uniform', 200)) {
      expect([250, 500, 750, 1000, 1500, 2000]).toContain(p.requests.cpu);
      expect([256, 512, 1024, 2048, 4096]).toContain(p.requests.memory);
    }
    const heavy = costMix('heavy-tailed', 2000).map((p) => p.requests.cpu!);
    expect(Math.min(...heavy)).toBe(100);
    expect(median(heavy)).toBeLessThanOrEqual(200);
    expect(Math.max(...heavy)).toBeLessThanOrEqual(12_800);
  });
});

describe('bench stats', () => {
  it('computes medians and percentiles by interpolation', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([1, 2, 3, 4])).toBe(2.5);
    expect(percentile([0, 10], 99)).toBeCloseTo(9.9);
    const rng = seededRandom(1);
    expect(rng()).toBeGreaterThanOrEqual(0);
  });
});

describe('verifyPlan', () => {
  const pods = [plainPod('a', { cpu: 1000, memory: 1024 }), plainPod('b', { cpu: 1000, memory: 1024 })];

  it('accepts a plan that places every pod once on a type that holds them plus the daemonset overhead', () => {
    const plan: Plan = { nodes: [{ nodePool: 'bench', instanceType: 'm5.xlarge', price: 0.192, pods: ['default/a', 'default/b'] }], unplaced: [] };
    expect(verifyPlan(plan, pods, [template])).toEqual([]);
  });

  it('reports a pod placed twice, a pod on no node, an overfull node and a price below the offering', () => {
    const plan: Plan = { nodes: [{ nodePool: 'bench', instanceType: 't3.micro', price: 0.001, pods: ['default/a', 'default/a'] }], unplaced: [] };
    const problems = verifyPlan(plan, pods, [template]).join('\n');
    expect(problems).toMatch(/default\/a is on 2 nodes/);
    expect(problems).toMatch(/default\/b is on no node/);
    expect(problems).toMatch(/exceed allocatable cpu/);
    expect(problems).toMatch(/below its cheapest allowed offering/);
  });
});

describe('FFD baseline, LP bound and exact optimum on a tiny case', () => {
  it('orders LP aggregate ≤ LP per class ≤ exact optimum ≤ FFD, and the FFD plan verifies', async () => {
    const pods = costMix('bimodal', 8, 11);
    const ffd = firstFitDecreasing(pods, [template]);
    expect(verifyPlan(ffd, pods, [template])).toEqual([]);
    const lp = await lpBound(pods, [template]);
    const exact = await exactOptimum(pods, [template], { include: ffd.nodes.map((n) => `bench/${n.instanceType}`), upperBound: planCost(ffd) * (1 + 1e-9), timeLimitSeconds: 10 });
    expect(lp.aggregate).toBeLessThanOrEqual(lp.bound + 1e-9);
    expect(lp.bound).toBeLessThanOrEqual(exact.dualBound + 1e-9);
    expect(exact.optimal).toBe(true);
    expect(exact.objective).toBeLessThanOrEqual(planCost(ffd) + 1e-9);
    expect(lp.bound).toBeGreaterThan(0);
  });

  it('packs like Karpenter: the first NodeClaim keeps pods while one type still fits them all', () => {
    const pods = Array.from({ length: 4 }, (_, i) => plainPod(`p${i}`, { cpu: 500, memory: 512 }, i));
    const plan = firstFitDecreasing(pods, [template]);
    expect(plan.nodes).toHaveLength(1);
    expect(plan.nodes[0]!.pods).toHaveLength(4);
    expect(plan.unplaced).toEqual([]);
  });

  it('leaves a pod no type fits unplaced', () => {
    const plan = firstFitDecreasing([plainPod('huge', { cpu: 10_000_000, memory: 1 })], [template]);
    expect(plan.unplaced).toEqual(['default/huge']);
  });
});
