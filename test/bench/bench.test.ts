import { beforeAll, describe, expect, it } from 'vitest';
import { exactOptimum } from '../../bench/exact.js';
import { firstFitDecreasing } from '../../bench/ffd.js';
import { catalogueInstanceTypes, catalogueTemplate, costMix, diverseMix, plainMix, plainPod } from '../../bench/inputs.js';
import { highs, lpBound, type Classes, type NodeOption } from '../../bench/lp-bound.js';
import { boundedKnapsack, knapsackMip, patternLp, patternLpBound } from '../../bench/pattern-lp.js';
import { planCost, verifyPlan, type Plan } from '../../bench/plan.js';
import { median, percentile, seededRandom } from '../../bench/stats.js';
import type { NodePoolTemplate } from '../../shared/core/provisioning/types.js';

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

describe('pattern LP bound', () => {
  const oneBin = (room: number): NodeOption[] => [{ nodePool: 'p', instanceType: 'bin', price: 1, room: [room] }];
  const sizes = (...list: [size: number, count: number][]): Classes => ({
    resources: ['cpu'],
    classes: list.map(([size, count]) => ({ requests: [size], nodePools: new Set(['p']), count })),
  });

  it('equals the configuration LP worked by hand on a cutting-stock case', async () => {
    // Bins of 10; items 6 ×2, 4 ×2, 3 ×3 (total 29). Patterns (6,4), (6,3), (4,3,3), (3,3,3) each cost 1; the duals
    // π = (2/3, 1/3, 1/3) price every pattern at ≤ 1 and give 2·2/3 + 2·1/3 + 3·1/3 = 3, and x(6,4) = 2, x(3,3,3) = 1
    // costs 3: the LP optimum is 3 (above the 2.9 of splitting items, the per-class LP here).
    const r = await patternLp(sizes([6, 2], [4, 2], [3, 3]), oneBin(10));
    expect(r.converged).toBe(true);
    // Farley's bound is within the stopping gap (1e-4) below the LP optimum, never above it.
    expect(r.bound).toBeCloseTo(3, 4);
    expect(r.bound).toBeLessThanOrEqual(3 + 1e-9);
    expect(r.master).toBeCloseTo(3, 6);
  });

  it('is fractional where the configuration LP is, and above splitting pods', async () => {
    // Items 4 ×2 and 3 ×3 in bins of 10 (total 17, so splitting gives 1.7). Patterns (4,4), (4,3,3), (3,3,3), …:
    // x(4,3,3) = 1.5, x(4,4) = 0.25 covers both (1.5 + 0.5 fours, 3 threes) at 1.75, and the duals π4 = ½, π3 = ¼
    // price every pattern at ≤ 1 ((4,4) 1, (4,3,3) 1, (3,3,3) ¾) with 2·½ + 3·¼ = 1.75: the optimum is 1.75.
    const r = await patternLp(sizes([4, 2], [3, 3]), oneBin(10));
    expect(r.converged).toBe(true);
    expect(r.bound).toBeCloseTo(1.75, 4);
    expect(r.bound).toBeLessThanOrEqual(1.75 + 1e-9);
    expect((await patternLp(sizes([6, 3]), oneBin(10))).bound).toBeCloseTo(3, 4);
  });

  it('solves bounded multi-dimensional knapsacks exactly, as HiGHS does, and bounds them when stopped', async () => {
    const solver = await highs();
    const items = [
      { value: 10, size: [5, 1], max: 3 },
      { value: 7, size: [3, 4], max: 4 },
      { value: 4, size: [2, 2], max: 5 },
      { value: 3, size: [1, 3], max: 2 },
    ];
    for (const capacity of [[10, 10], [17, 9], [4, 20]]) {
      const bb = boundedKnapsack(items, capacity);
      const mip = knapsackMip(solver, items, capacity, 1000);
      expect(bb.exact).toBe(true);
      expect(bb.value).toBeCloseTo(mip.value, 9);
      for (let r = 0; r < capacity.length; r++) expect(items.reduce((s, it, i) => s + it.size[r]! * bb.counts[i]!, 0)).toBeLessThanOrEqual(capacity[r]!);
      const stopped = boundedKnapsack(items, capacity, { nodeLimit: 1 });
      expect(stopped.upper).toBeGreaterThanOrEqual(bb.value - 1e-9);
    }
  });

  it("gives Farley's bound below the converged value when column generation stops early", async () => {
    const classes = sizes([6, 2], [4, 2], [3, 3], [2, 5], [5, 3]);
    const full = await patternLp(classes, oneBin(10));
    const early = await patternLp(classes, oneBin(10), { maxRounds: 1 });
    expect(full.converged).toBe(true);
    expect(early.bound).toBeLessThanOrEqual(full.bound + 1e-9);
    expect(early.master).toBeGreaterThanOrEqual(full.master - 1e-9);
    expect(early.bound).toBeGreaterThan(0);
  });

  it('lies between the per-class LP and the exact optimum on small catalogue cases', async () => {
    for (const [mix, n] of [['bimodal', 8], ['uniform', 6], ['heavy-tailed', 6]] as const) {
      const pods = costMix(mix, n, 11);
      const ffd = firstFitDecreasing(pods, [template]);
      const lp = await lpBound(pods, [template]);
      const pattern = await patternLpBound(pods, [template]);
      const exact = await exactOptimum(pods, [template], { include: ffd.nodes.map((x) => `bench/${x.instanceType}`), upperBound: planCost(ffd) * (1 + 1e-9), timeLimitSeconds: 10 });
      expect(pattern.converged).toBe(true);
      expect(pattern.bound).toBeGreaterThanOrEqual(lp.bound * (1 - 1e-6));
      expect(exact.optimal).toBe(true);
      expect(pattern.bound).toBeLessThanOrEqual(exact.objective * (1 + 1e-6));
      // The bound as a MIP cut leaves the optimum unchanged.
      const cut = await exactOptimum(pods, [template], { include: ffd.nodes.map((x) => `bench/${x.instanceType}`), upperBound: planCost(ffd) * (1 + 1e-9), lowerBound: pattern.bound, timeLimitSeconds: 10 });
      expect(cut.objective).toBeCloseTo(exact.objective, 6);
    }
  }, 60_000);
});
