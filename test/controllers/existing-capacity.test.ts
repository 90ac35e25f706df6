// The room a provisioning solve sees on existing nodes (`existingCapacity` in shared/controllers/launch.ts): a node holds
// room for pods nominated to it that are still pending, but not for the pods the pass is solving — those are placed
// afresh, and reserving their room too counted them twice (issue 21: a node that had just turned Ready still had its
// NodeClaim's pods nominated to it, the solve found no room there and launched a node the pods never used).
import { describe, expect, it } from 'vitest';
import { INITIALIZATION_GRACE_MS, existingCapacity } from '../../shared/controllers/launch.js';
import { LABEL_INITIALIZED, LABEL_ZONE } from '../../shared/core/api/labels.js';
import { solve } from '../../shared/core/provisioning/scheduler.js';
import type { ClusterNode, ClusterPod } from '../../shared/ports/cluster.js';
import { catalogue, instanceType, pods as pendingPods, template } from '../support/builders.js';
import { NOW, launched, nodePool, runningPod } from '../support/disruption-world.js';

const m5large = catalogue().find((t) => t.name === 'm5.large')!;

/** A pod nominated to the node, not bound yet (kube-scheduler has not placed it). */
const pendingPod = (name: string, cpu: string): ClusterPod => {
  const { nodeName: _bound, ...rest } = runningPod(name, 'unused', { cpu });
  return { ...rest, phase: 'Pending', unschedulable: true };
};

describe('existingCapacity', () => {
  const pool = nodePool('general');
  const pods = [pendingPod('a', '500m'), pendingPod('b', '700m')];
  const { claim, node } = launched('n1', pool, m5large, { claim: { nominatedPods: ['default/a', 'default/b'] } });
  const byKey = new Map(pods.map((p) => [`default/${p.name}`, p]));
  const types = new Map([['default', [m5large]]]);

  it('reserves room on a node for the pending pods nominated to it', () => {
    const [room] = existingCapacity([node], pods, [claim], [], byKey, types, new Map());
    expect(room!.available.cpu).toBe(node.allocatable.cpu! - 1200);
  });

  it('does not reserve room for the pods being solved: they are placed afresh, once', () => {
    const [room] = existingCapacity([node], pods, [claim], [], byKey, types, new Map(), { solving: new Set(['default/a']) });
    expect(room!.available.cpu).toBe(node.allocatable.cpu! - 700);
    const [all] = existingCapacity([node], pods, [claim], [], byKey, types, new Map(), { solving: new Set(['default/a', 'default/b']) });
    expect(all!.available).toEqual(node.allocatable);
  });

  describe('a registered Node that is not initialized and NotReady (issue 21: pods waited on one for 80 minutes)', () => {
    const notReady = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' as const };
    /** Registered `minutesAgo` before NOW, never initialized, NotReady now; `label`: a pass put the initialized label on it. */
    const uninitialized = (minutesAgo: number, label = false) => {
      const at = new Date(NOW - minutesAgo * 60_000).toISOString();
      const { claim: c, node: n } = launched('n2', pool, m5large, { claim: { state: 'Registered', registeredAt: at, initializedAt: undefined } });
      const { [LABEL_INITIALIZED]: _label, ...labels } = n.labels;
      const stalledNode: ClusterNode = { ...n, ready: false, taints: [notReady], labels: label ? { ...labels, [LABEL_INITIALIZED]: 'true' } : labels };
      return { claim: c, node: stalledNode };
    };

    it('counts it as a node about to be ready (its not-ready taint set aside) within the grace after it registered, as Karpenter does', () => {
      const { claim: c, node: n } = uninitialized(INITIALIZATION_GRACE_MS / 60_000 - 1);
      const [room] = existingCapacity([n], [], [c], [], new Map(), types, new Map(), { now: NOW });
      expect(room!.taints).toEqual([]);
    });

    it('keeps its not-ready taint once the grace is over, so pods nominated to it get new capacity', () => {
      const { claim: c, node: n } = uninitialized(INITIALIZATION_GRACE_MS / 60_000 + 1);
      const [room] = existingCapacity([n], [], [c], [], new Map(), types, new Map(), { now: NOW });
      expect(room!.taints).toEqual([notReady]);
    });

    it('treats a Node carrying the initialized label as initialized even when its NodeClaim record is not (a pass crashed between the two writes)', () => {
      const { claim: c, node: n } = uninitialized(1, true);
      const [room] = existingCapacity([n], [], [c], [], new Map(), types, new Map(), { now: NOW });
      expect(room!.taints).toEqual([notReady]);
    });
  });
});

// A node being deleted (tainted karpenter.sh/disrupted) is no capacity, but the pods still on it count for topology
// spread as kube-scheduler and Karpenter count them (core `pkg/controllers/provisioning/scheduling/topology.go
// countDomains`). Break-it trial s10: a draining node's do-not-disrupt `app=web` pods were left out, so the solve sent
// the spread pods to zone b, which kube-scheduler counted as full, and they waited there for the whole run.
describe('existingCapacity: a node being deleted', () => {
  const zones = ['us-west-2a', 'us-west-2b', 'us-west-2c'];
  const large = instanceType('m5.large', { cpu: 1930, memory: 6903, price: 0.096, zones });
  const big = instanceType('m5.2xlarge', { cpu: 7910, memory: 29317, price: 0.384, zones });
  const types = new Map([['default', [large, big]]]);
  const pool = nodePool('general');
  const a1 = launched('a1', pool, large, { zone: 'us-west-2a' });
  const b1 = launched('b1', pool, large, { zone: 'us-west-2b' });
  const b2 = launched('b2', pool, big, { zone: 'us-west-2b' });
  const c1 = launched('c1', pool, large, { zone: 'us-west-2c' });
  const draining: ClusterNode = { ...b1.node, taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }] };
  const nodes = [a1.node, draining, b2.node, c1.node];
  const claims = [a1.claim, b1.claim, b2.claim, c1.claim];
  // a1, b1 and c1 hold 3 web pods each and have no room for a fourth; b2 holds 2 and has plenty of room.
  const web = (name: string, node: string) => runningPod(name, node, { cpu: '600m', labels: { app: 'web', pin: node } });
  const bound = [
    ...['a1', 'b1', 'c1'].flatMap((n) => [0, 1, 2].map((i) => web(`${n}-${i}`, n))),
    web('b2-0', 'b2'),
    web('b2-1', 'b2'),
  ];
  const byKey = new Map(bound.map((p) => [`default/${p.name}`, p]));
  const spread = { maxSkew: 1, topologyKey: LABEL_ZONE, whenUnsatisfiable: 'DoNotSchedule' as const, labelSelector: { matchLabels: { app: 'web' } } };

  it('takes no pod but keeps its pods, marked for deletion', () => {
    const existing = existingCapacity(nodes, bound, claims, [], byKey, types, new Map());
    const b1Room = existing.find((e) => e.name === 'b1');
    expect(b1Room?.markedForDeletion).toBe(true);
    expect(b1Room?.pods).toHaveLength(3);
    expect(existing.filter((e) => e.markedForDeletion).map((e) => e.name)).toEqual(['b1']);
  });

  it('counts its pods in its zone, so zone-spread pods go to new nodes in the other zones, not to the full zone', () => {
    const existing = existingCapacity(nodes, bound, claims, [], byKey, types, new Map());
    const pending = pendingPods('web-new', 2, { cpu: '600m', labels: { app: 'web' }, topologySpreadConstraints: [spread] });
    const results = solve(pending, [template('general', [large, big], { requirements: [{ key: LABEL_ZONE, operator: 'In', values: zones }] })], existing);
    // b has 5 (3 on b1, 2 on b2), a and c have 3: kube-scheduler takes one more pod in a and in c, none in b.
    expect(results.unschedulable).toEqual([]);
    expect(results.existing).toEqual([]);
    const planned = results.newNodeClaims.flatMap((plan) => plan.pods.map(() => plan.requirements.get(LABEL_ZONE).values));
    expect(planned.map((z) => [...z]).sort()).toEqual([['us-west-2a'], ['us-west-2c']]);
  });

  it('counts its pods for pod anti-affinity too: a pod that must not share a zone with them stays out of its zone', () => {
    const existing = existingCapacity(nodes, bound, claims, [], byKey, types, new Map());
    const apart = pendingPods('apart', 1, {
      cpu: '600m',
      affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: LABEL_ZONE, labelSelector: { matchLabels: { pin: 'b1' } } }] } },
    });
    // Only the draining b1 holds pin=b1 pods: zone b is closed to the pod (before, b2's room in zone b took it).
    const results = solve(apart, [template('general', [large, big], { requirements: [{ key: LABEL_ZONE, operator: 'In', values: zones }] })], existing);
    expect(results.unschedulable).toEqual([]);
    expect(results.existing).toEqual([]);
    expect(results.newNodeClaims.map((plan) => [...plan.requirements.get(LABEL_ZONE).values].every((z) => z !== 'us-west-2b'))).toEqual([true]);
  });
});
