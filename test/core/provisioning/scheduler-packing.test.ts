import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LABEL_HOSTNAME, LABEL_ZONE } from '../../../shared/core/api/labels.js';
import { placedPod, podRequests, toSchedulingPod, type SchedulingPod } from '../../../shared/core/provisioning/pod.js';
import { solveFirstFit } from '../../../shared/core/provisioning/greedy-solvers.js';
import { solve } from '../../../shared/core/provisioning/scheduler.js';
import { planPrice } from '../../../shared/core/provisioning/solve-pass.js';
import type { ExistingCapacity, NodePoolTemplate, SchedulingResults, SolveOptions } from '../../../shared/core/provisioning/types.js';
import { add, fits, subtract } from '../../../shared/core/resources/resource-list.js';
import { catalogue, instanceType, pod, pods, template } from '../../support/builders.js';
import { constrainedCase, verifyConstrainedCase, type ConstrainedCase } from '../../support/constrained-solve.js';

/** The packing solver alone (no solver v1 portfolio), so its own plans are what the assertions see. */
const PACKED: SolveOptions = { portfolioMaxPods: 0 };

/** A clock that has run out on its second read: the solve must still return a complete plan. */
function expiredClock(): SolveOptions {
  let reads = 0;
  return { now: () => (reads++ === 0 ? 0 : 1_000_000), timeoutMs: 1 };
}

/** Mixed requests, as a Deployment-heavy batch looks: a few shapes, many replicas each. */
function mixedBatch(n: number): SchedulingPod[] {
  const cpus = ['100m', '250m', '500m', '1000m', '1500m'];
  const memories = ['128Mi', '256Mi', '512Mi', '1Gi', '2Gi', '4Gi'];
  return Array.from({ length: n }, (_, i) => pod(`mixed-${i}`, { cpu: cpus[i % cpus.length]!, memory: memories[(i * 7) % memories.length]! }));
}

/** Every pod exactly once (placed or unschedulable), and each NodeClaim's cheapest option holds its pods plus overhead. */
function expectCompleteAndFitting(results: SchedulingResults, input: readonly SchedulingPod[], templates: readonly NodePoolTemplate[]): void {
  const byKey = new Map(input.map((p) => [p.key, p]));
  const keys = [...results.newNodeClaims.flatMap((c) => c.pods), ...results.existing.map((e) => e.pod), ...results.unschedulable.map((u) => u.pod)];
  expect(new Set(keys).size).toBe(keys.length);
  expect(keys.length).toBe(input.length);
  for (const claim of results.newNodeClaims) {
    const t = templates.find((x) => x.name === claim.nodePool)!;
    const cheapest = t.instanceTypes.find((x) => x.name === claim.instanceTypes[0]!.name)!;
    expect(fits(add(t.daemonOverhead, ...claim.pods.map((k) => byKey.get(k)!.requests)), cheapest.allocatable)).toBe(true);
  }
}

/** `c` solved with `options` and checked by the independent placement checker (`test/support/constrained-solve.ts`). */
function verifyWith(c: ConstrainedCase, options: SolveOptions) {
  const input = c.pending.map((p, i) => toSchedulingPod(p, i));
  const existing: ExistingCapacity[] = c.existingNodes.map(({ node, pods: running }) => ({
    name: node.name,
    kind: 'node',
    nodePool: 'general',
    labels: node.labels,
    taints: node.taints,
    available: subtract(node.allocatable, add(...running.map((p) => podRequests(p.spec)))),
    hostPorts: [],
    pods: running.map(placedPod),
  }));
  return verifyConstrainedCase(c, () => solve(input, c.templates, existing, options));
}

describe('solve (packing solver)', () => {
  describe('deadline', () => {
    it('returns a complete plan that fits when the deadline has already passed', () => {
      const input = mixedBatch(400);
      const templates = [template('general', catalogue(), { daemonOverhead: { cpu: 200, memory: 256, pods: 2 } })];
      const results = solve(input, templates, [], expiredClock());
      expectCompleteAndFitting(results, input, templates);
      expect(results.unschedulable).toEqual([]);
    });

    it('breaks no topology, taint, affinity or host port constraint when the deadline has already passed', () => {
      const breaches: string[] = [];
      for (let seed = 1; seed <= 60; seed++) breaches.push(...verifyWith(constrainedCase(seed), { ...PACKED, ...expiredClock() }).breaches);
      expect(breaches.slice(0, 10)).toEqual([]);
    });

    it('reads no clock unless given one', () => {
      const results = solve(mixedBatch(50), [template('general', catalogue())], [], { timeoutMs: 0 });
      expect(results.unschedulable).toEqual([]);
      expect(results.newNodeClaims.length).toBeGreaterThan(0);
    });
  });

  describe('bulk placement', () => {
    it('breaks no constraint over seeded random cases, checked independently', () => {
      const breaches: string[] = [];
      let placed = 0;
      for (let seed = 1; seed <= 150; seed++) {
        const outcome = verifyWith(constrainedCase(seed), PACKED);
        breaches.push(...outcome.breaches);
        placed += outcome.placed;
      }
      expect(breaches.slice(0, 10)).toEqual([]);
      expect(placed).toBeGreaterThan(150);
    });

    it('places every pod once and every NodeClaim holds its pods, whatever the mix', () => {
      const shape = fc.record({
        cpu: fc.constantFrom('100m', '250m', '500m', '1000m', '1500m'),
        memory: fc.constantFrom('100Mi', '256Mi', '512Mi', '1Gi', '2Gi', '4Gi'),
        gpu: fc.constantFrom(0, 0, 0, 1),
        zone: fc.constantFrom(undefined, 'us-west-2a', 'us-west-2b'),
        replicas: fc.integer({ min: 1, max: 30 }),
      });
      fc.assert(
        fc.property(fc.array(shape, { minLength: 1, maxLength: 8 }), (shapes) => {
          const input = shapes.flatMap((s, i) => pods(`w${i}`, s.replicas, { cpu: s.cpu, memory: s.memory, ...(s.gpu ? { gpu: s.gpu } : {}), ...(s.zone ? { nodeSelector: { [LABEL_ZONE]: s.zone } } : {}) }));
          const templates = [template('any', catalogue(), { daemonOverhead: { cpu: 100, memory: 128, pods: 1 } })];
          const results = solve(input, templates, [], PACKED);
          expectCompleteAndFitting(results, input, templates);
          const byKey = new Map(input.map((p) => [p.key, p]));
          for (const claim of results.newNodeClaims) {
            for (const k of claim.pods) expect(claim.requirements.intersects(byKey.get(k)!.requirementAlternatives[0]!)).toBeUndefined();
          }
        }),
        { numRuns: 40 },
      );
    });

    it('fills existing capacity before launching, as placing the pods one by one does', () => {
      const node: ExistingCapacity = { name: 'n1', kind: 'node', labels: {}, taints: [], available: { cpu: 1000, memory: 8192, pods: 100 }, hostPorts: [] };
      const results = solve(pods('p', 30, { cpu: '300m' }), [template('general', catalogue())], [node], PACKED);
      expect(results.existing).toHaveLength(3);
      expect(results.newNodeClaims.flatMap((c) => c.pods)).toHaveLength(27);
    });

    it('never reserves more than the NodePool limit and places as many identical pods as first-fit does', () => {
      const limited = template('general', catalogue(), { remaining: { cpu: 6000 } });
      const input = pods('p', 20, { cpu: '900m', memory: '512Mi' });
      const ours = solve(input, [limited], [], PACKED);
      const byName = new Map(catalogue().map((t) => [t.name, t]));
      const reserved = ours.newNodeClaims.reduce((sum, c) => sum + (byName.get(c.instanceTypes[0]!.name)!.capacity.cpu ?? 0), 0);
      expect(reserved).toBeLessThanOrEqual(6000);
      expect(ours.newNodeClaims.flatMap((c) => c.pods).length).toBe(solveFirstFit(input, [limited], []).newNodeClaims.flatMap((c) => c.pods).length);
    });

    it('uses a lower-weight NodePool only for pods the higher-weight one cannot take', () => {
      const high = template('high', catalogue(), { weight: 50, taints: [{ key: 'team', value: 'a', effect: 'NoSchedule' }] });
      const low = template('low', catalogue(), { weight: 10 });
      const tolerant = pods('a', 10, { cpu: '500m', tolerations: [{ key: 'team', operator: 'Equal', value: 'a', effect: 'NoSchedule' }] });
      const results = solve([...tolerant, ...pods('b', 10, { cpu: '500m' })], [high, low], [], PACKED);
      const poolOf = new Map(results.newNodeClaims.flatMap((c) => c.pods.map((k) => [k, c.nodePool] as const)));
      expect(tolerant.every((p) => poolOf.get(p.key) === 'high')).toBe(true);
      expect([...poolOf].filter(([k]) => k.startsWith('default/b-')).every(([, pool]) => pool === 'low')).toBe(true);
    });

    it('keeps replicas with hostname anti-affinity on distinct NodeClaims while packing others around them', () => {
      const anti = { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: LABEL_HOSTNAME, labelSelector: { matchLabels: { app: 'db' } } }] } };
      const input = [...pods('db', 6, { cpu: '500m', labels: { app: 'db' }, affinity: anti }), ...pods('web', 40, { cpu: '250m' })];
      const results = solve(input, [template('general', catalogue())], [], PACKED);
      for (const claim of results.newNodeClaims) expect(claim.pods.filter((k) => k.startsWith('default/db-')).length).toBeLessThanOrEqual(1);
      expect(results.unschedulable).toEqual([]);
    });
  });

  describe('cost', () => {
    it('plans a cheaper fleet than first-fit packing on a mixed batch', () => {
      const input = mixedBatch(600);
      const templates = [template('general', catalogue(), { daemonOverhead: { cpu: 200, memory: 256, pods: 2 } })];
      const ours = solve(input, templates, []);
      const karpenterLike = solveFirstFit(input, templates, []);
      expect(ours.unschedulable).toHaveLength(karpenterLike.unschedulable.length);
      expect(planPrice(ours)).toBeLessThan(planPrice(karpenterLike));
    });

    it('offers each NodeClaim as its cheapest type that fits (right-sizing the last, partly filled one)', () => {
      const linear = [instanceType('m5.large', { cpu: 1930, memory: 6903, price: 0.1 }), instanceType('m5.4xlarge', { cpu: 15890, memory: 58000, price: 0.8 })];
      const results = solve(pods('p', 16, { cpu: '1000m', memory: '1Gi' }), [template('general', linear)], [], PACKED);
      const types = results.newNodeClaims.map((c) => c.instanceTypes[0]!.name).sort();
      expect(types).toEqual(['m5.4xlarge', 'm5.large']);
    });
  });
});
