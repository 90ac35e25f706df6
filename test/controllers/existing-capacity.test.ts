// The room a provisioning solve sees on existing nodes (`existingCapacity` in shared/controllers/launch.ts): a node holds
// room for pods nominated to it that are still pending, but not for the pods the pass is solving — those are placed
// afresh, and reserving their room too counted them twice (issue 21: a node that had just turned Ready still had its
// NodeClaim's pods nominated to it, the solve found no room there and launched a node the pods never used).
import { describe, expect, it } from 'vitest';
import { existingCapacity } from '../../shared/controllers/launch.js';
import type { ClusterPod } from '../../shared/ports/cluster.js';
import { catalogue } from '../support/builders.js';
import { launched, nodePool, runningPod } from '../support/disruption-world.js';

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
    const [room] = existingCapacity([node], pods, [claim], [], byKey, types, new Map(), new Set(['default/a']));
    expect(room!.available.cpu).toBe(node.allocatable.cpu! - 700);
    const [all] = existingCapacity([node], pods, [claim], [], byKey, types, new Map(), new Set(['default/a', 'default/b']));
    expect(all!.available).toEqual(node.allocatable);
  });
});
