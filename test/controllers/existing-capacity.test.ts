// The room a provisioning solve sees on existing nodes (`existingCapacity` in shared/controllers/launch.ts): a node holds
// room for pods nominated to it that are still pending, but not for the pods the pass is solving — those are placed
// afresh, and reserving their room too counted them twice (issue 21: a node that had just turned Ready still had its
// NodeClaim's pods nominated to it, the solve found no room there and launched a node the pods never used).
import { describe, expect, it } from 'vitest';
import { INITIALIZATION_GRACE_MS, existingCapacity } from '../../shared/controllers/launch.js';
import { LABEL_INITIALIZED } from '../../shared/core/api/labels.js';
import type { ClusterNode } from '../../shared/ports/cluster.js';
import type { ClusterPod } from '../../shared/ports/cluster.js';
import { catalogue } from '../support/builders.js';
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
