// The Drift method on its own, over worlds built in memory: which drifted node it takes first, what replaces it, and
// why it turns the others down.
import { describe, expect, it } from 'vitest';
import { decisionOf } from '../../../../shared/core/disruption/types.js';
import { drift } from '../../../../shared/controllers/disruption/methods/drift.js';
import { catalogue } from '../../../support/builders.js';
import { launched, methodContext, nodePool, pdb, runningPod, world } from '../../../support/disruption-world.js';

const types = catalogue();
const m5large = types.find((t) => t.name === 'm5.large')!;
const m5xlarge = types.find((t) => t.name === 'm5.xlarge')!;
/** A record launched from an older NodePool template. */
const stale = { nodePoolHash: 'launched-from-an-older-template' };

describe('drift', () => {
  describe('computeCommand', () => {
    it('replaces a drifted node with a NodeClaim its pods fit on, from its NodePool', () => {
      const pool = nodePool('general');
      const w = world({ pools: [pool], types, launched: [launched('old', pool, m5xlarge, { claim: stale })], pods: [runningPod('web', 'old', { cpu: '1500m', memory: '2Gi' })] });
      const command = drift.computeCommand(w.claims, methodContext(w).ctx)!;
      expect(command.reason).toBe('Drifted');
      expect(command.candidates.map((c) => c.name)).toEqual(['old']);
      expect(decisionOf(command)).toBe('replace');
      expect(command.replacements).toHaveLength(1);
      expect(command.replacements[0]!.nodePool).toBe('general');
      expect(command.replacements[0]!.pods).toEqual(['default/web']);
      // 1500m and 2Gi fit the smallest general-purpose type of the catalogue.
      expect(command.replacements[0]!.instanceTypes.map((t) => t.name)).toContain('m5.large');
      expect(command.savings).toBe(0);
      expect(command.message).toMatch(/^NodePoolDrifted: NodePool general's template changed/);
    });

    it('deletes a drifted node that has no pods to move', () => {
      const pool = nodePool('general');
      const w = world({ pools: [pool], types, launched: [launched('old', pool, m5large, { claim: stale })] });
      const command = drift.computeCommand(w.claims, methodContext(w).ctx)!;
      expect(decisionOf(command)).toBe('delete');
      expect(command.replacements).toEqual([]);
    });

    it('takes the drifted node with the fewest pods first, then the oldest, and leaves undrifted nodes alone', () => {
      const pool = nodePool('general');
      const nodes = [
        launched('two-pods', pool, m5xlarge, { claim: stale, ageHours: 9 }),
        launched('one-pod-young', pool, m5xlarge, { claim: stale, ageHours: 2 }),
        launched('one-pod-old', pool, m5xlarge, { claim: stale, ageHours: 5 }),
        launched('current', pool, m5xlarge),
      ];
      const pods = [runningPod('a', 'two-pods'), runningPod('b', 'two-pods'), runningPod('c', 'one-pod-young'), runningPod('d', 'one-pod-old'), runningPod('e', 'current')];
      const w = world({ pools: [pool], types, launched: nodes, pods });
      expect(drift.computeCommand(w.claims, methodContext(w).ctx)?.candidates.map((c) => c.name)).toEqual(['one-pod-old']);
    });

    it('turns down a drifted node whose pod a PDB protects, and takes the next one', () => {
      const pool = nodePool('general');
      const nodes = [launched('guarded', pool, m5xlarge, { claim: stale, ageHours: 9 }), launched('free', pool, m5xlarge, { claim: stale, ageHours: 2 })];
      const pods = [runningPod('db', 'guarded', { labels: { app: 'db' } }), runningPod('web', 'free')];
      const w = world({ pools: [pool], types, launched: nodes, pods, pdbs: [pdb('db', 'db', 0)] });
      const { ctx, reported } = methodContext(w);
      expect(drift.computeCommand(w.claims, ctx)?.candidates.map((c) => c.name)).toEqual(['free']);
      expect(reported.skipped).toEqual([{ nodeClaim: 'guarded', reason: expect.stringMatching(/^Drifted \(NodePoolDrifted: .*\): pod default\/db: /) }]);
    });

    it('does not let a PDB hold back the drift of a node with a terminationGracePeriod (the drain deletes at the deadline)', () => {
      const pool = nodePool('general');
      const node = launched('guarded', pool, m5xlarge, { claim: { ...stale, terminationGracePeriodSeconds: 3600 } });
      const w = world({ pools: [pool], types, launched: [node], pods: [runningPod('db', 'guarded', { labels: { app: 'db' } })], pdbs: [pdb('db', 'db', 0)] });
      expect(drift.computeCommand(w.claims, methodContext(w).ctx)?.candidates.map((c) => c.name)).toEqual(['guarded']);
    });

    it('refuses a replacement that would be drifted too, and reports the node blocked', () => {
      // The NodePool now requires a label no instance type or Skiff label provides: every node drifts, and so would
      // any replacement.
      const pool = nodePool('general', { requirements: [{ key: 'topology.k8s.aws/zone-id', operator: 'Exists' }] });
      const w = world({ pools: [pool], types, launched: [launched('old', pool, m5large)], pods: [runningPod('web', 'old')] });
      const { ctx, reported } = methodContext(w);
      expect(drift.computeCommand(w.claims, ctx)).toBeUndefined();
      expect(reported.blocked).toEqual([{ nodeClaim: 'old', node: 'old', reason: expect.stringMatching(/^RequirementsDrifted: .*would be drifted too/) }]);
    });

    it('reports a NodePool whose budgets allow no drift at all', () => {
      const pool = nodePool('general', { budgets: [{ nodes: '0', reasons: ['Drifted'] }] });
      const w = world({ pools: [pool], types, launched: [launched('old', pool, m5large, { claim: stale })] });
      const { ctx, reported } = methodContext(w);
      expect(drift.computeCommand(w.claims, ctx)).toBeUndefined();
      expect(reported.budgetBlocked).toEqual([{ nodePool: 'general', reason: 'Drifted' }]);
    });
  });

  describe('validateCommand', () => {
    it('finds the command again while the node is still drifted, and not once its NodePool is back to its template', () => {
      const pool = nodePool('general');
      const drifted = world({ pools: [pool], types, launched: [launched('old', pool, m5large, { claim: stale })] });
      expect(drift.validateCommand(drifted.claims, methodContext(drifted).ctx)?.candidates.map((c) => c.name)).toEqual(['old']);
      const current = world({ pools: [pool], types, launched: [launched('old', pool, m5large)] });
      expect(drift.validateCommand(current.claims, methodContext(current).ctx)).toBeUndefined();
    });
  });
});
