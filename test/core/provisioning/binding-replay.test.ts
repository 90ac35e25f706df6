import { describe, expect, it } from 'vitest';
import { bindingBins, replayBinding, type BindingBin } from '../../../shared/core/provisioning/binding-replay.js';
import { toSchedulingPod, type SchedulingPod } from '../../../shared/core/provisioning/pod.js';
import { solve } from '../../../shared/core/provisioning/scheduler.js';
import { planPrice } from '../../../shared/core/provisioning/solve-pass.js';
import type { NodePoolTemplate, SchedulingResults } from '../../../shared/core/provisioning/types.js';
import { add, fits } from '../../../shared/core/resources/resource-list.js';
import { instanceType, template } from '../../support/builders.js';

// kube-scheduler's default binding as the replay predicts it (docs/karpenter-semantics.md#binding-replay): queue order
// by priority then creation time, each pod to the feasible node with the most free room by LeastAllocated.

const pod = (name: string, cpu: string, createdMs: number, priority?: number): SchedulingPod =>
  toSchedulingPod({ namespace: 'default', name, spec: { containers: [{ name: 'app', resources: { requests: { cpu, memory: '1Gi' } } }], ...(priority ? { priority } : {}) } }, createdMs);

/** A 4-cpu, 16 GiB node with nothing on it. */
const node = (name: string): BindingBin => ({ name, kind: 'four-cpu', allocatable: { cpu: 4000, memory: 16384, pods: 110 }, requested: {}, taints: [], matches: () => true });

describe('replayBinding', () => {
  it("spreads the small pods created first over both nodes, so the 4-cpu pod a packing planned beside nothing finds no room", () => {
    // Capacity 8 cpu for 8 cpu of pods: the packing {4} + {1,1,1,1} fits, but the four 1-cpu pods come first and
    // LeastAllocated puts them two and two, leaving 2 cpu on each node.
    const pods = [pod('small-a', '1', 1), pod('small-b', '1', 2), pod('small-c', '1', 3), pod('small-d', '1', 4), pod('large', '4', 5)];
    const { bound, misfits } = replayBinding(pods, [node('a'), node('b')]);
    expect(misfits.map((p) => p.name)).toEqual(['large']);
    const perNode = [0, 1].map((i) => [...bound].filter(([, bin]) => bin === i).length);
    expect(perNode).toEqual([2, 2]);
  });

  it('takes higher priorities first, whatever their creation time: the 4-cpu pod binds before the small ones and all fit', () => {
    const pods = [pod('small-a', '1', 1), pod('small-b', '1', 2), pod('small-c', '1', 3), pod('small-d', '1', 4), pod('large', '4', 5, 1000)];
    const { bound, misfits } = replayBinding(pods, [node('a'), node('b')]);
    expect(misfits).toEqual([]);
    const large = bound.get('default/large');
    expect([...bound].filter(([, bin]) => bin === large)).toHaveLength(1);
  });

  it("scores by the mean free fraction: a 1-cpu pod goes to the memory-rich node whose cpu is fuller, when its memory is emptier", () => {
    // Node a: 4 cpu / 8 GiB with 1 cpu used → free fractions 0.75 and 1; node b: 4 cpu / 8 GiB with 4 GiB used → 1 and
    // 0.5. After the pod (1 cpu, 1 GiB): a scores (0.5 + 0.875) / 2 = 0.6875, b (0.75 + 0.375) / 2 = 0.5625.
    const a: BindingBin = { name: 'a', kind: 'a', allocatable: { cpu: 4000, memory: 8192 }, requested: { cpu: 1000 }, taints: [], matches: () => true };
    const b: BindingBin = { name: 'b', kind: 'b', allocatable: { cpu: 4000, memory: 8192 }, requested: { memory: 4096 }, taints: [], matches: () => true };
    expect(replayBinding([pod('p', '1', 1)], [b, a]).bound.get('default/p')).toBe(1);
  });

  it('binds no pod to a node whose taint it does not tolerate or whose labels it does not match', () => {
    const tainted: BindingBin = { ...node('t'), kind: 'tainted', taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] };
    const other: BindingBin = { ...node('o'), kind: 'other', matches: () => false };
    const { misfits } = replayBinding([pod('p', '1', 1)], [tainted, other]);
    expect(misfits.map((p) => p.name)).toEqual(['p']);
  });
});

describe('solve with surviveBinding', () => {
  // The issue-20 burst in small: six shapes created in turn (250m/512Mi … 4/8Gi), a pool capped at 2xlarge with
  // compute- and general-purpose types, and a DaemonSet's 200m/256Mi on every node.
  const types = [
    instanceType('c6g.large', { cpu: 1930, memory: 3055, pods: 29, price: 0.068 }),
    instanceType('c6g.xlarge', { cpu: 3920, memory: 6298, pods: 58, price: 0.136 }),
    instanceType('c6g.2xlarge', { cpu: 7910, memory: 14103, pods: 58, price: 0.272 }),
    instanceType('m6g.large', { cpu: 1930, memory: 6844, pods: 29, price: 0.077 }),
    instanceType('m6g.xlarge', { cpu: 3920, memory: 14103, pods: 58, price: 0.154 }),
    instanceType('m6g.2xlarge', { cpu: 7910, memory: 29258, pods: 58, price: 0.308 }),
  ];
  const templates: NodePoolTemplate[] = [template('general', types, { daemonOverhead: { cpu: 200, memory: 256, pods: 1 } })];
  const shapes: [string, string][] = [['250m', '512Mi'], ['500m', '1Gi'], ['1', '2Gi'], ['2', '4Gi'], ['4', '8Gi'], ['1', '4Gi']];
  let t = 0;
  const batch = shapes.flatMap(([cpu, memory], s) =>
    Array.from({ length: 40 }, (_, i) =>
      toSchedulingPod({ namespace: 'default', name: `app-${s}-${String(i).padStart(2, '0')}`, spec: { containers: [{ name: 'app', resources: { requests: { cpu, memory } } }] } }, t++),
    ),
  );
  const byKey = new Map(batch.map((p) => [p.key, p]));
  const misfitsOf = (r: SchedulingResults) => replayBinding(batch, bindingBins(r, byKey, templates, [])).misfits;

  it('launches a plan in which every pod fits where kube-scheduler binds it, cheaper than the plan plus a second wave for its misfits', () => {
    const plain = solve(batch, templates, [], { portfolioMaxPods: 0 });
    const misfits = misfitsOf(plain);
    // The tight plan breaks under LeastAllocated binding (the premise of the repair).
    expect(misfits.length).toBeGreaterThan(0);
    const survived = solve(batch, templates, [], { portfolioMaxPods: 0, surviveBinding: true });
    expect(misfitsOf(survived)).toEqual([]);
    // Every pod once, and each NodeClaim's cheapest option holds its nominated pods and the DaemonSet.
    const keys = survived.newNodeClaims.flatMap((c) => c.pods);
    expect(new Set(keys).size).toBe(batch.length);
    expect(keys.length).toBe(batch.length);
    for (const c of survived.newNodeClaims) {
      const cheapest = types.find((x) => x.name === c.instanceTypes[0]!.name)!;
      expect(fits(add({ cpu: 200, memory: 256, pods: 1 }, ...c.pods.map((k) => byKey.get(k)!.requests)), cheapest.allocatable)).toBe(true);
      expect(c.requests).toEqual(add({ cpu: 200, memory: 256, pods: 1 }, ...c.pods.map((k) => byKey.get(k)!.requests)));
    }
    // What Karpenter pays: its plan, then NodeClaims for the pods kube-scheduler could not fit.
    const secondWave = solve(misfits, templates, [], { portfolioMaxPods: 0 });
    expect(planPrice(survived)).toBeLessThan(planPrice(plain) + planPrice(secondWave));
  });

  it("adds no capacity past the NodePool's limits: with the limit at the tight plan's own size the plan stays within it", () => {
    const plain = solve(batch, templates, [], { portfolioMaxPods: 0 });
    const cpuOf = (r: SchedulingResults) => r.newNodeClaims.reduce((sum, c) => sum + types.find((x) => x.name === c.instanceTypes[0]!.name)!.capacity.cpu!, 0);
    const limited: NodePoolTemplate[] = [{ ...templates[0]!, remaining: { cpu: cpuOf(plain) } }];
    const survived = solve(batch, limited, [], { portfolioMaxPods: 0, surviveBinding: true });
    expect(cpuOf(survived)).toBeLessThanOrEqual(cpuOf(plain));
    expect(survived.newNodeClaims.flatMap((c) => c.pods).length + survived.unschedulable.length).toBe(batch.length);
  });

  it('leaves a plan whose replay already fits as it was', () => {
    const small = batch.filter((p) => p.name.startsWith('app-0-'));
    const plain = solve(small, templates, [], { portfolioMaxPods: 0 });
    expect(solve(small, templates, [], { portfolioMaxPods: 0, surviveBinding: true })).toEqual(plain);
  });
});
