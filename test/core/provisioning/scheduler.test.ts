import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE, LABEL_ZONE } from '../../../shared/core/api/labels.js';
import { solveFirstFit } from '../../../shared/core/provisioning/greedy-solvers.js';
import { MAX_INSTANCE_TYPES } from '../../../shared/core/provisioning/instance-options.js';
import { solve } from '../../../shared/core/provisioning/scheduler.js';
import { planPrice } from '../../../shared/core/provisioning/solve-pass.js';
import type { ExistingCapacity, SchedulingResults } from '../../../shared/core/provisioning/types.js';
import { add, fits } from '../../../shared/core/resources/resource-list.js';
import { catalogue, instanceType, pod, pods, template } from '../../support/builders.js';

const general = () =>
  template('general', catalogue(), {
    requirements: [{ key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] }],
    labels: { 'workload-type': 'general' },
  });

function existingNode(name: string, available: { cpu: number; memory: number }, labels: Record<string, string> = {}, taints: ExistingCapacity['taints'] = []): ExistingCapacity {
  return { name, kind: 'node', labels, taints, available: { ...available, pods: 100 }, hostPorts: [] };
}

describe('solve', () => {
  describe('existing capacity', () => {
    it('places a pod on an existing node with room and launches nothing', () => {
      const r = solve([pod('a', { cpu: '500m' })], [general()], [existingNode('n1', { cpu: 1000, memory: 2048 })]);
      expect(r.newNodeClaims).toEqual([]);
      expect(r.existing).toEqual([{ pod: 'default/a', target: 'n1' }]);
    });

    it('places no pod on a node marked for deletion, not even one that tolerates every taint (core provisioner.go: only nodes.Active() are capacity)', () => {
      const tolerant = pod('a', { cpu: '500m', tolerations: [{ operator: 'Exists' }] });
      const r = solve([tolerant], [general()], [{ ...existingNode('leaving', { cpu: 4000, memory: 8192 }), markedForDeletion: true }]);
      expect(r.existing).toEqual([]);
      expect(r.newNodeClaims.flatMap((c) => c.pods)).toEqual(['default/a']);
    });

    it('launches when the existing node lacks room', () => {
      const r = solve([pod('a', { cpu: '1500m' })], [general()], [existingNode('n1', { cpu: 1000, memory: 2048 })]);
      expect(r.existing).toEqual([]);
      expect(r.newNodeClaims).toHaveLength(1);
    });

    it('skips an existing node whose taint the pod does not tolerate', () => {
      const tainted = existingNode('n1', { cpu: 4000, memory: 8192 }, {}, [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }]);
      const r = solve([pod('a')], [general()], [tainted]);
      expect(r.existing).toEqual([]);
      expect(r.newNodeClaims).toHaveLength(1);
    });

    it('skips an existing node whose labels do not satisfy the nodeSelector', () => {
      const r = solve([pod('a', { nodeSelector: { 'workload-type': 'general' } })], [general()], [existingNode('n1', { cpu: 4000, memory: 8192 }, { 'workload-type': 'batch' })]);
      expect(r.existing).toEqual([]);
      expect(r.newNodeClaims[0]?.nodePool).toBe('general');
    });

    it('accounts for pods already placed on an existing node in the same solve', () => {
      const r = solve(pods('p', 3, { cpu: '400m' }), [general()], [existingNode('n1', { cpu: 1000, memory: 8192 })]);
      expect(r.existing).toHaveLength(2);
      expect(r.newNodeClaims.flatMap((c) => c.pods)).toHaveLength(1);
    });
  });

  describe('new NodeClaims', () => {
    it('packs many small pods per NodeClaim', () => {
      const batch = pods('web', 12, { cpu: '500m', memory: '1Gi' });
      const r = solve(batch, [general()], []);
      expect(r.newNodeClaims.length).toBeLessThanOrEqual(3);
      expect(r.newNodeClaims.every((c) => c.pods.length >= 2)).toBe(true);
      // No dearer than Karpenter's first fit.
      expect(planPrice(r)).toBeLessThanOrEqual(planPrice(solveFirstFit(batch, [general()], [])) + 1e-9);
    });

    it('prefers fewer NodeClaims when the price is the same', () => {
      const linear = [instanceType('m5.large', { cpu: 1930, memory: 6903, price: 0.1 }), instanceType('m5.xlarge', { cpu: 3920, memory: 14162, price: 0.2 })];
      const r = solve(pods('web', 6, { cpu: '500m', memory: '1Gi' }), [template('general', linear)], []);
      expect(r.newNodeClaims).toHaveLength(1);
    });

    it('lists instance types cheapest first and adds them as an instance-type requirement', () => {
      const [claim] = solve([pod('a', { cpu: '500m' })], [general()], []).newNodeClaims;
      const prices = claim!.instanceTypes.map((t) => t.price);
      expect(prices).toEqual([...prices].sort((a, b) => a - b));
      expect(claim!.requirements.get(LABEL_INSTANCE_TYPE).sortedValues()).toEqual(claim!.instanceTypes.map((t) => t.name).sort());
    });

    it('keeps only instance types that fit every pod of the claim', () => {
      const [claim] = solve([pod('a', { cpu: '1500m', memory: '10Gi' })], [general()], []).newNodeClaims;
      expect(claim!.instanceTypes.map((t) => t.name)).not.toContain('m5.large');
      expect(claim!.instanceTypes.map((t) => t.name)).toContain('r5.large');
    });

    it('truncates options to 600 instance types', () => {
      const many = Array.from({ length: 650 }, (_, i) => instanceType(`m5.x${i}`, { cpu: 4000, memory: 16384, price: 1 + i / 1000 }));
      const [claim] = solve([pod('a')], [template('big', many)], []).newNodeClaims;
      expect(claim!.instanceTypes).toHaveLength(MAX_INSTANCE_TYPES);
      expect(claim!.instanceTypes[0]!.name).toBe('m5.x0');
    });

    it('carries the NodePool template labels and the pod-narrowed requirements', () => {
      const [claim] = solve([pod('a', { nodeSelector: { [LABEL_ZONE]: 'us-west-2b' } })], [general()], []).newNodeClaims;
      expect(claim!.labels).toMatchObject({ 'workload-type': 'general', 'karpenter.sh/nodepool': 'general', [LABEL_ZONE]: 'us-west-2b' });
      expect(claim!.requirements.get(LABEL_ZONE).sortedValues()).toEqual(['us-west-2b']);
    });

    it('tries NodePools by descending weight', () => {
      const low = template('low', catalogue(), { weight: 10 });
      const high = template('high', catalogue(), { weight: 50 });
      expect(solve([pod('a')], [low, high], []).newNodeClaims[0]!.nodePool).toBe('high');
    });

    it('adds daemonset overhead to the requests, choosing a larger type when needed', () => {
      const withDaemons = template('general', catalogue(), { daemonOverhead: { cpu: 1000, memory: 512, pods: 1 } });
      const [claim] = solve([pod('a', { cpu: '1500m' })], [withDaemons], []).newNodeClaims;
      expect(claim!.requests.cpu).toBe(2500);
      expect(claim!.instanceTypes.every((t) => !t.name.endsWith('.large'))).toBe(true);
    });

    it('puts pods with the same host port on different NodeClaims', () => {
      const r = solve([pod('a', { hostPort: 8080 }), pod('b', { hostPort: 8080 })], [general()], []);
      expect(r.newNodeClaims).toHaveLength(2);
    });

    it('tries each required node affinity term (terms are ORed)', () => {
      const affinity = {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'workload-type', operator: 'In' as const, values: ['gpu'] }] },
              { matchExpressions: [{ key: 'workload-type', operator: 'In' as const, values: ['general'] }] },
            ],
          },
        },
      };
      const r = solve([pod('a', { affinity })], [general()], []);
      expect(r.unschedulable).toEqual([]);
      expect(r.newNodeClaims[0]!.nodePool).toBe('general');
    });

    it('puts two 1-GPU pods on two 1-GPU nodes rather than one 4-GPU node', () => {
      const gpu = template('gpu', catalogue(), { requirements: [{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['g4dn'] }] });
      const r = solve(pods('infer', 2, { cpu: '2', memory: '8Gi', gpu: 1 }), [gpu], []);
      expect(r.newNodeClaims.map((c) => c.instanceTypes[0]!.name)).toEqual(['g4dn.xlarge', 'g4dn.xlarge']);
    });
  });

  describe('limits', () => {
    it('does not consider instance types larger than what the limits still allow', () => {
      const limited = template('general', catalogue(), { remaining: { cpu: 2000 } });
      const [claim] = solve([pod('a')], [limited], []).newNodeClaims;
      expect(claim!.instanceTypes.every((t) => ['m5.large', 'c5.large', 'r5.large'].includes(t.name))).toBe(true);
    });

    it('reports a pod as unschedulable when the NodePool limit is used up', () => {
      const limited = template('general', catalogue(), { remaining: { cpu: 2000 } });
      const r = solve(pods('p', 2, { cpu: '1500m' }), [limited], []);
      expect(r.newNodeClaims).toHaveLength(1);
      expect(r.unschedulable).toHaveLength(1);
      expect(r.unschedulable[0]!.nodePools.general).toMatch(/limits/);
    });

    it('names the exhausted resource, what is left and what the smallest type needs', () => {
      const limited = template('general', catalogue(), { remaining: { cpu: 2000, memory: 100000 } });
      const r = solve(pods('p', 2, { cpu: '1500m' }), [limited], []);
      expect(r.unschedulable[0]!.nodePools.general).toMatch(/cpu: 0m left, the smallest fitting instance type needs 2000m\); raise spec.limits.cpu/);
    });

    it('never grows a planned NodeClaim past what the limit allows', () => {
      const limited = template('general', catalogue(), { remaining: { cpu: 4000 } });
      const r = solve(pods('p', 10, { cpu: '900m', memory: '512Mi' }), [limited], []);
      const types = new Map(catalogue().map((t) => [t.name, t]));
      const reserved = r.newNodeClaims.reduce((sum, c) => sum + (types.get(c.instanceTypes[0]!.name)!.capacity.cpu ?? 0), 0);
      expect(reserved).toBeLessThanOrEqual(4000);
      expect(r.newNodeClaims.every((c) => c.instanceTypes.every((t) => (types.get(t.name)!.capacity.cpu ?? 0) <= 4000))).toBe(true);
    });

    it('prefers the plan that places more pods within the limit over the cheaper one', () => {
      // 16 cpu of limit: two 8-cpu nodes hold 6 pods of 2 cpu, one 16-cpu node holds 7.
      const types = [instanceType('c6a.2xlarge', { cpu: 7910, memory: 14162, price: 0.3, spotPrice: 0.079 }), instanceType('c5a.4xlarge', { cpu: 15890, memory: 29317, price: 0.6, spotPrice: 0.19 })];
      for (const t of types) Object.assign(t, { capacity: { ...t.capacity, cpu: t.name.startsWith('c6a') ? 8000 : 16000 } });
      const r = solve(pods('p', 10, { cpu: '2', memory: '1Gi' }), [template('limited', types, { remaining: { cpu: 16000 } })], []);
      expect(r.newNodeClaims.flatMap((c) => c.pods)).toHaveLength(7);
      expect(r.unschedulable).toHaveLength(3);
    });

    it('stops opening copies of one packed bin at the limit (bulk pods are re-checked per NodeClaim under limits)', () => {
      // 60 pods of 3 cpu need four of the largest type (15 each); two nodes are allowed.
      const limited = template('general', catalogue(), { remaining: { nodes: 2 } });
      const r = solve(pods('p', 60, { cpu: '3', memory: '1Gi' }), [limited], []);
      expect(r.newNodeClaims).toHaveLength(2);
      const placed = r.newNodeClaims.flatMap((c) => c.pods);
      expect(placed.length + r.unschedulable.length).toBe(60);
      expect(r.unschedulable.length).toBeGreaterThanOrEqual(30);
      expect(r.unschedulable[0]!.nodePools.general).toMatch(/limits/);
    });

    it('limits the number of nodes when `nodes` is limited', () => {
      const limited = template('general', catalogue(), { remaining: { nodes: 1 } });
      const r = solve(pods('p', 2, { cpu: '1500m', memory: '5Gi' }).concat([pod('q', { cpu: '1500m', hostPort: 1 }), pod('s', { cpu: '1500m', hostPort: 1 })]), [limited], []);
      expect(r.newNodeClaims).toHaveLength(1);
      expect(r.unschedulable.length).toBeGreaterThan(0);
    });
  });

  describe('unschedulable pods', () => {
    const batch = template('batch', catalogue(), { labels: { 'workload-type': 'batch' }, taints: [{ key: 'workload-type', value: 'batch', effect: 'NoSchedule' }] });

    it('names the label no NodePool defines (the seed article pitfall 2)', () => {
      const r = solve([pod('report', { nodeSelector: { 'node-type': 'high-memory' } })], [general(), batch], []);
      expect(r.newNodeClaims).toEqual([]);
      expect(r.unschedulable[0]!.reason).toMatch(/no NodePool defines the label node-type/);
      expect(r.unschedulable[0]!.nodePools.general).toMatch(/node-type/);
      expect(r.unschedulable[0]!.nodePools.batch).toMatch(/taint workload-type=batch:NoSchedule/);
    });

    it('names the largest allocatable when no instance type is big enough', () => {
      const r = solve([pod('huge', { cpu: '64' })], [general()], []);
      expect(r.unschedulable[0]!.nodePools.general).toMatch(/largest allocatable is cpu=7910m/);
    });

    it('says plainly when no instance type of the NodePool has the resource at all', () => {
      const cpuOnly = template('general', catalogue(), { requirements: [{ key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm'] }] });
      const r = solve([pod('train', { gpu: 1 })], [cpuOnly], []);
      expect(r.unschedulable[0]!.nodePools.general).toMatch(/no instance type the NodePool allows has nvidia.com\/gpu/);
    });

    it('says when every fitting offering is unavailable (insufficient capacity)', () => {
      const types = [instanceType('m5.large', { cpu: 1930, memory: 6903, price: 0.096, unavailable: ['us-west-2a/on-demand', 'us-west-2a/spot', 'us-west-2b/on-demand', 'us-west-2b/spot'] })];
      const r = solve([pod('a')], [template('general', types)], []);
      expect(r.unschedulable[0]!.nodePools.general).toMatch(/unavailable/);
    });

    it('rejects a value outside the NodePool requirement', () => {
      const r = solve([pod('a', { nodeSelector: { 'karpenter.k8s.aws/instance-category': 'g' } })], [general()], []);
      expect(r.unschedulable[0]!.nodePools.general).toMatch(/instance-category/);
    });

    it('honours capacity type requirements from the pod', () => {
      const [claim] = solve([pod('a', { nodeSelector: { [LABEL_CAPACITY_TYPE]: 'on-demand' } })], [general()], []).newNodeClaims;
      expect(claim!.requirements.get(LABEL_CAPACITY_TYPE).sortedValues()).toEqual(['on-demand']);
    });
  });

  describe('properties', () => {
    const podArb = fc.record({
      cpu: fc.constantFrom('100m', '250m', '500m', '1000m', '1500m'),
      memory: fc.constantFrom('100Mi', '256Mi', '512Mi', '1Gi', '2Gi', '4Gi'),
      gpu: fc.constantFrom(0, 0, 0, 1),
      zone: fc.constantFrom(undefined, 'us-west-2a', 'us-west-2b'),
    });
    const scenario = fc.array(podArb, { minLength: 1, maxLength: 40 });
    const build = (specs: { cpu: string; memory: string; gpu: number; zone: string | undefined }[]) =>
      specs.map((s, i) => pod(`p${i}`, { cpu: s.cpu, memory: s.memory, ...(s.gpu ? { gpu: s.gpu } : {}), ...(s.zone ? { nodeSelector: { [LABEL_ZONE]: s.zone } } : {}) }));

    /** Independent check: the cheapest option of every claim holds all its pods and satisfies their selectors. */
    function checkPlacements(results: SchedulingResults, byKey: Map<string, ReturnType<typeof pod>>): void {
      const types = new Map(catalogue().map((t) => [t.name, t]));
      for (const claim of results.newNodeClaims) {
        const cheapest = types.get(claim.instanceTypes[0]!.name)!;
        const requests = add(...claim.pods.map((k) => byKey.get(k)!.requests));
        expect(fits(requests, cheapest.allocatable)).toBe(true);
        for (const k of claim.pods) {
          const selector = byKey.get(k)!.requirementAlternatives[0]!;
          const zone = claim.requirements.get(LABEL_ZONE);
          if (selector.has(LABEL_ZONE)) expect(zone.sortedValues()).toEqual(selector.get(LABEL_ZONE).sortedValues());
        }
      }
    }

    it('places every pod exactly once, each NodeClaim holding its pods', () => {
      fc.assert(
        fc.property(scenario, (specs) => {
          const ps = build(specs);
          const r = solve(ps, [template('any', catalogue())], []);
          const placed = r.newNodeClaims.flatMap((c) => c.pods);
          expect(new Set(placed).size).toBe(placed.length);
          expect(placed.length + r.unschedulable.length).toBe(ps.length);
          checkPlacements(r, new Map(ps.map((p) => [p.key, p])));
        }),
        { numRuns: 60 },
      );
    });

    it('never plans a fleet dearer than first-fit packing', () => {
      fc.assert(
        fc.property(scenario, (specs) => {
          const ps = build(specs);
          const t = [template('any', catalogue())];
          const ours = solve(ps, t, []);
          const karpenterLike = solveFirstFit(ps, t, []);
          if (ours.unschedulable.length === karpenterLike.unschedulable.length) expect(planPrice(ours)).toBeLessThanOrEqual(planPrice(karpenterLike) + 1e-9);
        }),
        { numRuns: 60 },
      );
    });

    it('does not depend on the order pods arrive in', () => {
      fc.assert(
        fc.property(scenario, fc.integer(), (specs, seed) => {
          const ps = build(specs);
          const shuffled = [...ps].sort((a, b) => ((a.createdMs * 7919 + seed) % 101) - ((b.createdMs * 7919 + seed) % 101));
          const t = [template('any', catalogue())];
          expect(planPrice(solve(shuffled, t, []))).toBeCloseTo(planPrice(solve(ps, t, [])), 9);
        }),
        { numRuns: 40 },
      );
    });
  });
});
