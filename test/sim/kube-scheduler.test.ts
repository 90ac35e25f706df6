import { describe, expect, it } from 'vitest';
import type { Taint } from '../../shared/core/api/kubernetes.js';
import { mulberry32 } from '../../shared/ports/ids.js';
import { SchedulingCycle, leastAllocated, type SchedulerNode } from '../../shared/sim/kube-scheduler.js';
import { placementProblem, sumRequests, type CheckedPodSpec, type MaybeBoundPod } from '../../shared/sim/placement-check.js';

const ZONE = 'topology.kubernetes.io/zone';
const HOST = 'kubernetes.io/hostname';

interface TestNode extends SchedulerNode {
  used: Record<string, number>;
}
interface TestPod extends MaybeBoundPod {
  nodeName?: string;
}

function node(name: string, zone: string, extra: Partial<TestNode> = {}): TestNode {
  return { name, labels: { [HOST]: name, [ZONE]: zone, ...(extra.labels ?? {}) }, taints: [], allocatable: { cpu: 4000, memory: 8192, pods: 110 }, ready: true, used: {}, ...extra, ...(extra.labels ? { labels: { [HOST]: name, [ZONE]: zone, ...extra.labels } } : {}) };
}
function pod(name: string, spec: Partial<CheckedPodSpec> = {}, labels: Record<string, string> = {}, nodeName?: string): TestPod {
  return { namespace: 'default', name, labels, spec: { containers: [{ resources: { requests: { cpu: '100m', memory: '128Mi' } } }], ...spec }, ...(nodeName ? { nodeName } : {}) };
}
/** Sets each node's `used` from the pods bound to it, as the simulated cluster keeps it. */
function withUsage(nodes: TestNode[], pods: readonly TestPod[]): TestNode[] {
  for (const n of nodes) n.used = sumRequests(pods.filter((p) => p.nodeName === n.name));
  return nodes;
}
const cycle = (nodes: TestNode[], pods: TestPod[] = []) => new SchedulingCycle<TestNode, TestPod>(withUsage(nodes, pods), pods);
const cpu = (c: string) => ({ containers: [{ resources: { requests: { cpu: c, memory: '128Mi' } } }] });

describe('SchedulingCycle', () => {
  describe('bestNode (scoring)', () => {
    it('prefers the least allocated node (NodeResourcesFit LeastAllocated)', () => {
      const pods = [pod('busy', cpu('2'), {}, 'a')];
      expect(cycle([node('a', 'z1'), node('b', 'z1')], pods).bestNode(pod('p'))?.name).toBe('b');
    });

    it('breaks ties by node name', () => {
      expect(cycle([node('b', 'z1'), node('a', 'z1'), node('c', 'z1')]).bestNode(pod('p'))?.name).toBe('a');
    });

    it('follows preferred node affinity over a small LeastAllocated difference', () => {
      const pods = [pod('busy', cpu('1'), {}, 'ssd')];
      const preferring = pod('p', { affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 50, preference: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] } }] } } });
      expect(cycle([node('hdd', 'z1', { labels: { disk: 'hdd' } }), node('ssd', 'z1', { labels: { disk: 'ssd' } })], pods).bestNode(preferring)?.name).toBe('ssd');
    });

    it('avoids a PreferNoSchedule taint it does not tolerate, but uses it when nothing else fits', () => {
      const soft: Taint[] = [{ key: 'spot', effect: 'PreferNoSchedule' }];
      expect(cycle([node('a', 'z1', { taints: soft }), node('b', 'z1')], [pod('busy', cpu('2'), {}, 'b')]).bestNode(pod('p'))?.name).toBe('b');
      expect(cycle([node('a', 'z1', { taints: soft }), node('b', 'z1', { ready: false })]).bestNode(pod('p'))?.name).toBe('a');
      const tolerant = pod('p', { tolerations: [{ key: 'spot', operator: 'Exists' }] });
      expect(cycle([node('a', 'z1', { taints: soft }), node('b', 'z1')], [pod('busy', cpu('2'), {}, 'b')]).bestNode(tolerant)?.name).toBe('a');
    });

    it('moves towards preferred pod affinity and away from preferred anti-affinity', () => {
      const pods = [pod('cache', {}, { app: 'cache' }, 'b')];
      const term = { labelSelector: { matchLabels: { app: 'cache' } }, topologyKey: HOST };
      const near = pod('p', { affinity: { podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: term }] } } });
      const far = pod('q', { affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: term }] } } });
      expect(cycle([node('a', 'z1'), node('b', 'z1'), node('c', 'z1')], pods).bestNode(near)?.name).toBe('b');
      expect(cycle([node('a', 'z1'), node('b', 'z1'), node('c', 'z1')], pods).bestNode(far)?.name).toBe('a');
    });

    it("is drawn to a bound pod whose preferred affinity term selects it (symmetry)", () => {
      const term = { labelSelector: { matchLabels: { app: 'web' } }, topologyKey: ZONE };
      const pods = [pod('sidecar-hub', { affinity: { podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 80, podAffinityTerm: term }] } } }, {}, 'c')];
      expect(cycle([node('a', 'z1'), node('b', 'z1'), node('c', 'z2')], pods).bestNode(pod('w', {}, { app: 'web' }))?.name).toBe('c');
    });

    it('spreads over the emptier zone for a ScheduleAnyway constraint', () => {
      const pods = [pod('w0', {}, { app: 'web' }, 'a1')];
      const p = pod('w1', { topologySpreadConstraints: [{ maxSkew: 1, topologyKey: ZONE, whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { app: 'web' } } }] }, { app: 'web' });
      // a2 is emptier than b1 by LeastAllocated, but zone z2 holds no web pod.
      expect(cycle([node('a1', 'z1'), node('a2', 'z1'), node('b1', 'z2')], [...pods, pod('load', cpu('1'), {}, 'b1')]).bestNode(p)?.name).toBe('b1');
    });
  });

  describe('bestNode (filters within one cycle)', () => {
    it('puts pods with hostname anti-affinity on distinct nodes as they are assumed, then none', () => {
      const c = cycle([node('a', 'z1'), node('b', 'z1'), node('c', 'z2')]);
      const anti = { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'db' } }, topologyKey: HOST }] } } };
      const chosen: string[] = [];
      for (let i = 0; i < 4; i++) {
        const p = pod(`db-${i}`, anti, { app: 'db' });
        const n = c.bestNode(p);
        if (n) {
          chosen.push(n.name);
          c.assume({ ...p, nodeName: n.name }, n);
        } else chosen.push('none');
      }
      expect(new Set(chosen.slice(0, 3))).toEqual(new Set(['a', 'b', 'c']));
      expect(chosen[3]).toBe('none');
    });

    it('keeps zone skew within maxSkew as pods are assumed', () => {
      const nodes = [node('a1', 'z1'), node('a2', 'z1'), node('b1', 'z2')];
      const c = cycle(nodes);
      const counts: Record<string, number> = { z1: 0, z2: 0 };
      for (let i = 0; i < 6; i++) {
        const p = pod(`w${i}`, { topologySpreadConstraints: [{ maxSkew: 1, topologyKey: ZONE, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'web' } } }] }, { app: 'web' });
        const n = c.bestNode(p)!;
        c.assume({ ...p, nodeName: n.name }, n);
        counts[n.labels[ZONE]!]!++;
        expect(Math.abs(counts.z1! - counts.z2!)).toBeLessThanOrEqual(1);
      }
    });

    it('never offers a node that is not Ready', () => {
      expect(cycle([node('a', 'z1', { ready: false })]).feasibleNodes(pod('p'))).toEqual([]);
    });
  });

  describe('agrees with the placement checker (seeded random clusters)', () => {
    it.each([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])('seed %i: every node it offers passes the checker, every node it refuses fails it', (seed) => {
      const rnd = mulberry32(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
      const zones = ['z1', 'z2', 'z3'];
      const nodes: TestNode[] = Array.from({ length: 9 }, (_, i) =>
        node(`n${i}`, pick(zones), {
          labels: rnd() < 0.5 ? { pool: pick(['x', 'y']) } : {},
          taints: rnd() < 0.2 ? [{ key: 'dedicated', effect: pick(['NoSchedule', 'NoExecute', 'PreferNoSchedule'] as const) }] : [],
          allocatable: { cpu: pick([2000, 4000, 8000]), memory: 8192, pods: pick([8, 110]) },
          ready: rnd() < 0.9,
        }),
      );
      const randomSpec = (): Partial<CheckedPodSpec> => {
        const app = pick(['web', 'db', 'cache']);
        const term = { labelSelector: { matchLabels: { app: pick(['web', 'db', 'cache']) } }, topologyKey: pick([HOST, ZONE]) };
        return {
          ...cpu(pick(['100m', '500m', '900m'])),
          ...(rnd() < 0.2 ? { containers: [{ resources: { requests: { cpu: '200m' } }, ports: [{ hostPort: pick([80, 443]) }] }] } : {}),
          ...(rnd() < 0.2 ? { nodeSelector: { pool: pick(['x', 'y']) } } : {}),
          ...(rnd() < 0.3 ? { tolerations: [{ key: 'dedicated', operator: 'Exists' as const }] } : {}),
          affinity: {
            ...(rnd() < 0.2 ? { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term] } } : {}),
            ...(rnd() < 0.2 ? { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ ...term, labelSelector: { matchLabels: { app } } }] } } : {}),
          },
          ...(rnd() < 0.6
            ? {
                topologySpreadConstraints: [
                  {
                    maxSkew: pick([1, 2]),
                    topologyKey: pick([ZONE, HOST]),
                    whenUnsatisfiable: pick(['DoNotSchedule', 'ScheduleAnyway']),
                    labelSelector: { matchLabels: { app } },
                    ...(rnd() < 0.3 ? { minDomains: pick([2, 4]) } : {}),
                    ...(rnd() < 0.3 ? { nodeAffinityPolicy: pick(['Honor', 'Ignore']) } : {}),
                    ...(rnd() < 0.3 ? { nodeTaintsPolicy: pick(['Honor', 'Ignore']) } : {}),
                  },
                ],
              }
            : {}),
        };
      };
      const bound: TestPod[] = Array.from({ length: 10 }, (_, i) => {
        const spec = randomSpec();
        return pod(`b${i}`, spec, { app: pick(['web', 'db', 'cache']) }, pick(nodes).name);
      });
      const c = cycle(nodes, bound);
      const live: TestPod[] = [...bound];
      for (let i = 0; i < 20; i++) {
        const p = pod(`p${i}`, randomSpec(), { app: pick(['web', 'db', 'cache']) });
        const feasible = new Set(c.feasibleNodes(p).map((n) => n.name));
        for (const n of nodes.filter((x) => x.ready)) {
          const problem = placementProblem({ pod: p, node: n, nodes, pods: live });
          expect(problem === undefined, `seed ${seed} ${p.name} on ${n.name}: ${problem ?? 'ok'}`).toBe(feasible.has(n.name));
        }
        const chosen = c.bestNode(p);
        if (chosen) {
          const placed = { ...p, nodeName: chosen.name };
          live.push(placed);
          c.assume(placed, chosen);
        }
      }
    });
  });
});

describe('leastAllocated', () => {
  it('is the mean free fraction of cpu and memory after placing the pod', () => {
    expect(leastAllocated({ cpu: 1000, memory: 1024 }, { cpu: 1000, memory: 0 }, { cpu: 4000, memory: 8192 })).toBeCloseTo((0.5 + 7 / 8) / 2);
  });
});
