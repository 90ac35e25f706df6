import { describe, expect, it } from 'vitest';
import type { NodeClaim } from '../../shared/core/api/nodeclaim.js';
import { loadCatalog } from '../../shared/core/instancetypes/catalog.js';
import { Observer } from '../../shared/sim/observer.js';
import type { SimNode, SimPod } from '../../shared/sim/simulated-cluster.js';
import type { SimInstance } from '../../shared/sim/simulated-ec2.js';

const T = Date.parse('2026-03-02T08:00:00Z');
const iso = (s: number) => new Date(T + s * 1000).toISOString();
const observer = () => new Observer(new Map(loadCatalog().map((t) => [t.name, t])), () => T);

function claim(name: string, instanceId: string, launchedAtS: number, pods: string[], extra: Partial<NodeClaim> = {}): NodeClaim {
  return {
    name,
    nodePool: 'general',
    nodeClass: 'default',
    state: 'Launched',
    requirements: [],
    instanceTypes: ['m5.large'],
    resources: {},
    labels: {},
    taints: [],
    startupTaints: [],
    nominatedPods: pods,
    instanceId,
    createdAt: iso(launchedAtS),
    launchedAt: iso(launchedAtS),
    version: 2,
    ...extra,
  };
}

function instance(id: string, nodeClaim: string, extra: Partial<SimInstance> = {}): SimInstance {
  return {
    instanceId: id,
    instanceType: 'm5.large',
    zone: 'us-west-2a',
    capacityType: 'spot',
    state: 'running',
    tags: { 'karpenter.sh/nodeclaim': nodeClaim, 'karpenter.sh/nodepool': 'general' },
    launchedAt: T,
    nodeClaim,
    price: 0.04,
    labels: {},
    taints: [],
    startupTaints: [],
    allocatable: { cpu: 1930, memory: 6903, pods: 29 },
    ...extra,
  };
}

describe('Observer', () => {
  describe('finish', () => {
    it('counts a second launch for a pod whose first launch had not come up yet', () => {
      const o = observer();
      const a = claim('a', 'i-a', 0, ['default/web-1']);
      const b = claim('b', 'i-b', 30, ['default/web-1']);
      o.finish([instance('i-a', 'a'), instance('i-b', 'b')], [a, b], new Map([['i-a', T + 60_000]]));
      expect(o.counts.duplicateLaunches).toBe(1);
    });

    it('does not count a relaunch after the first node was Ready or its NodeClaim was gone', () => {
      const o = observer();
      const a = claim('a', 'i-a', 0, ['default/web-1']);
      const b = claim('b', 'i-b', 120, ['default/web-1']);
      const c = claim('c', 'i-c', 0, ['default/web-2'], { state: 'Failed', deletedAt: iso(5) });
      const d = claim('d', 'i-d', 10, ['default/web-2']);
      o.finish([instance('i-a', 'a'), instance('i-b', 'b'), instance('i-d', 'd')], [a, b, c, d], new Map([['i-a', T + 60_000]]));
      expect(o.counts.duplicateLaunches).toBe(0);
    });

    it('counts a running instance with no live NodeClaim as leaked', () => {
      const o = observer();
      o.finish([instance('i-a', 'a'), instance('i-b', 'b')], [claim('a', 'i-a', 0, []), claim('b', 'i-b', 0, [], { state: 'Failed' })], new Map());
      expect(o.counts.leakedInstances).toBe(1);
    });
  });

  describe('onLaunch', () => {
    it('counts a second instance for one NodeClaim', () => {
      const o = observer();
      o.onLaunch(instance('i-a', 'a'), [instance('i-a', 'a')], () => undefined);
      o.onLaunch(instance('i-b', 'a'), [instance('i-a', 'a'), instance('i-b', 'a')], () => undefined);
      expect(o.counts.duplicateLaunches).toBe(1);
    });

    it('counts a launch that takes a NodePool over its cpu limit', () => {
      const o = observer();
      const running = [instance('i-a', 'a'), instance('i-b', 'b')];
      o.onLaunch(running[1]!, running, () => ({ cpu: '3' }));
      expect(o.counts.limits).toBe(1);
    });
  });

  describe('onBind', () => {
    const node = (labels: Record<string, string>, taints: SimNode['taints'] = []): SimNode =>
      ({ name: 'n1', labels, taints, allocatable: { cpu: 1930, memory: 6903, pods: 29 } }) as unknown as SimNode;
    const pod = (spec: object): SimPod => ({ namespace: 'default', name: 'p', nodeName: 'n1', spec: { containers: [{ name: 'c', resources: { requests: { cpu: '500m' } } }], ...spec } }) as unknown as SimPod;

    it('counts a pod bound to a node missing its nodeSelector label', () => {
      const o = observer();
      const p = pod({ nodeSelector: { 'workload-type': 'general' } });
      o.onBind(p, node({}), () => [p]);
      expect(o.counts.placement).toBe(1);
    });

    it('counts a pod bound to a node with a taint it does not tolerate', () => {
      const o = observer();
      const p = pod({});
      o.onBind(p, node({}, [{ key: 'gpu', effect: 'NoSchedule' }]), () => [p]);
      expect(o.counts.placement).toBe(1);
    });

    it('counts a pod bound to a node without room', () => {
      const o = observer();
      const pods = [pod({}), pod({}), pod({}), pod({}), pod({})];
      o.onBind(pods[4]!, node({}), () => pods);
      expect(o.counts.placement).toBe(1);
    });

    it('accepts a pod that fits and is satisfied', () => {
      const o = observer();
      const p = pod({ nodeSelector: { 'workload-type': 'general' }, tolerations: [{ key: 'gpu', operator: 'Exists' }] });
      o.onBind(p, node({ 'workload-type': 'general' }, [{ key: 'gpu', effect: 'NoSchedule' }]), () => [p]);
      expect(o.counts.placement).toBe(0);
    });
  });
});
