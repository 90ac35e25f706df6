// The Emptiness method on its own, over worlds built in memory (no scenario, no store): which empty nodes it deletes,
// in one command, and why it turns the others down.
import { describe, expect, it } from 'vitest';
import { decisionOf } from '../../../../shared/core/disruption/types.js';
import { emptiness } from '../../../../shared/controllers/disruption/methods/emptiness.js';
import { catalogue } from '../../../support/builders.js';
import { launched, methodContext, nodePool, runningPod, world } from '../../../support/disruption-world.js';

const types = catalogue();
const m5large = types.find((t) => t.name === 'm5.large')!;
const m5xlarge = types.find((t) => t.name === 'm5.xlarge')!;

describe('emptiness', () => {
  describe('computeCommand', () => {
    it('deletes every empty node in one command and leaves the nodes with pods', () => {
      const pool = nodePool('general', { budgets: [{ nodes: '100%' }] });
      const nodes = [launched('a', pool, m5large), launched('b', pool, m5xlarge), launched('busy', pool, m5large)];
      const w = world({ pools: [pool], types, launched: nodes, pods: [runningPod('web', 'busy')] });
      const { ctx } = methodContext(w);
      const command = emptiness.computeCommand(w.claims, ctx)!;
      expect(command.reason).toBe('Empty');
      expect(command.candidates.map((c) => c.name)).toEqual(['a', 'b']);
      expect(command.replacements).toEqual([]);
      expect(decisionOf(command)).toBe('delete');
      // The on-demand prices of m5.large and m5.xlarge in the catalogue.
      expect(command.savings).toBeCloseTo(0.096 + 0.192, 9);
      expect(command.message).toBe('2 nodes are empty');
    });

    it('counts a node with only DaemonSet pods as empty', () => {
      const pool = nodePool('general');
      const w = world({ pools: [pool], types, launched: [launched('a', pool, m5large)], pods: [runningPod('fluent-bit', 'a', { owner: 'DaemonSet/fluent-bit' })] });
      expect(emptiness.computeCommand(w.claims, methodContext(w).ctx)?.candidates.map((c) => c.name)).toEqual(['a']);
    });

    it('finds nothing when every node has a pod', () => {
      const pool = nodePool('general');
      const w = world({ pools: [pool], types, launched: [launched('a', pool, m5large)], pods: [runningPod('web', 'a')] });
      expect(emptiness.computeCommand(w.claims, methodContext(w).ctx)).toBeUndefined();
    });

    it('turns down an empty node still inside consolidateAfter, and one annotated do-not-disrupt, saying why', () => {
      const pool = nodePool('general', { consolidateAfter: '3h' });
      const young = launched('young', pool, m5large, { ageHours: 1 });
      const pinned = launched('pinned', pool, m5large, { ageHours: 5, nodeAnnotations: { 'karpenter.sh/do-not-disrupt': 'true' } });
      const w = world({ pools: [pool], types, launched: [young, pinned] });
      const { ctx, reported } = methodContext(w);
      expect(emptiness.computeCommand(w.claims, ctx)).toBeUndefined();
      expect(reported.skipped).toEqual([
        { nodeClaim: 'young', reason: expect.stringMatching(/^Empty: consolidateAfter \(3h\) has not passed/) },
        { nodeClaim: 'pinned', reason: 'Empty: node pinned is annotated karpenter.sh/do-not-disrupt: "true"' },
      ]);
    });

    it('takes no more empty nodes than the default budget (10%, rounded up) allows', () => {
      const pool = nodePool('general');
      const w = world({ pools: [pool], types, launched: [launched('a', pool, m5large), launched('b', pool, m5large), launched('c', pool, m5large)] });
      expect(emptiness.computeCommand(w.claims, methodContext(w).ctx)?.candidates.map((c) => c.name)).toEqual(['a']);
    });

    it('takes no more empty nodes than the Empty budget allows, and reports the NodePool blocked when it allows none', () => {
      const one = nodePool('one', { budgets: [{ nodes: '1' }] });
      const none = nodePool('none', { budgets: [{ nodes: '0', reasons: ['Empty'] }] });
      const w = world({ pools: [one, none], types, launched: [launched('a', one, m5large), launched('b', one, m5large), launched('c', none, m5large)] });
      const { ctx, reported } = methodContext(w);
      const command = emptiness.computeCommand(w.claims, ctx)!;
      expect(command.candidates.map((c) => c.name)).toEqual(['a']);
      expect(reported.skipped.map((s) => s.nodeClaim)).toEqual(['b', 'c']);
      expect(reported.skipped[0]!.reason).toContain("budgets allow no more disruptions for reason Empty");
      // "one" only ran out this search; "none" allows nothing at all.
      expect(reported.budgetBlocked).toEqual([{ nodePool: 'none', reason: 'Empty' }]);
    });
  });

  describe('validateCommand', () => {
    it('finds the command again while its nodes stay empty, and not once a pod landed on one', () => {
      const pool = nodePool('general', { budgets: [{ nodes: '100%' }] });
      const nodes = [launched('a', pool, m5large), launched('b', pool, m5large)];
      const still = world({ pools: [pool], types, launched: nodes });
      expect(emptiness.validateCommand(still.claims, methodContext(still).ctx)?.candidates.map((c) => c.name)).toEqual(['a', 'b']);
      const refilled = world({ pools: [pool], types, launched: nodes, pods: [runningPod('web', 'b')] });
      expect(emptiness.validateCommand(refilled.claims, methodContext(refilled).ctx)?.candidates.map((c) => c.name)).toEqual(['a']);
    });
  });
});
