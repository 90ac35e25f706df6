// The multi-node consolidation method on its own, over worlds built in memory: which nodes go together, deleted or
// replaced by one cheaper node, and what it leaves to single-node consolidation.
import { describe, expect, it } from 'vitest';
import { LABEL_CAPACITY_TYPE } from '../../../../shared/core/api/labels.js';
import { decisionOf } from '../../../../shared/core/disruption/types.js';
import { multiNodeConsolidation } from '../../../../shared/controllers/disruption/methods/multi-node-consolidation.js';
import { catalogue } from '../../../support/builders.js';
import { launched, methodContext, nodePool, runningPod, world } from '../../../support/disruption-world.js';

const types = catalogue();
const type = (name: string) => types.find((t) => t.name === name)!;

describe('multiNodeConsolidation', () => {
  describe('computeCommand', () => {
    it('deletes two nodes together when their pods fit on a node it may not take', () => {
      const general = nodePool('general', { budgets: [{ nodes: '100%' }] });
      // WhenEmpty: its busy node is no candidate, but it has room for the others' pods.
      const steady = nodePool('steady', { consolidationPolicy: 'WhenEmpty' });
      const nodes = [launched('a', general, type('m5.large')), launched('b', general, type('m5.large')), launched('big', steady, type('m5.2xlarge'))];
      const pods = [runningPod('p-a', 'a', { cpu: '500m' }), runningPod('p-b', 'b', { cpu: '500m' }), runningPod('p-big', 'big', { cpu: '500m' })];
      const w = world({ pools: [general, steady], types, launched: nodes, pods });
      const { ctx, reported } = methodContext(w);
      const command = multiNodeConsolidation.computeCommand(w.claims, ctx)!;
      expect(command.reason).toBe('Underutilized');
      expect(command.candidates.map((c) => c.name).sort()).toEqual(['a', 'b']);
      expect(decisionOf(command)).toBe('delete');
      expect(command.replacements).toEqual([]);
      expect(command.savings).toBeCloseTo(2 * 0.096, 9);
      expect(command.message).toBe('its pods fit on other nodes');
      expect(reported.unconsolidatable).toEqual([{ nodeClaim: 'big', node: 'big', reason: 'NodePool steady has consolidation policy WhenEmpty, but the node is not empty' }]);
    });

    it('replaces several nodes with one cheaper node, forced to spot when the NodePool allows both capacity types', () => {
      const general = nodePool('general', { budgets: [{ nodes: '100%' }] });
      const nodes = [launched('a', general, type('m5.xlarge')), launched('b', general, type('m5.xlarge')), launched('c', general, type('m5.xlarge'))];
      const pods = [runningPod('p-a', 'a', { cpu: '300m' }), runningPod('p-b', 'b', { cpu: '300m' }), runningPod('p-c', 'c', { cpu: '300m' })];
      const w = world({ pools: [general], types, launched: nodes, pods });
      const command = multiNodeConsolidation.computeCommand(w.claims, methodContext(w).ctx)!;
      expect(command.candidates.map((c) => c.name).sort()).toEqual(['a', 'b', 'c']);
      expect(decisionOf(command)).toBe('replace');
      expect(command.replacements).toHaveLength(1);
      const [replacement] = command.replacements;
      expect(replacement!.pods.slice().sort()).toEqual(['default/p-a', 'default/p-b', 'default/p-c']);
      expect([...replacement!.requirements.get(LABEL_CAPACITY_TYPE).sortedValues()]).toEqual(['spot']);
      // Three on-demand m5.xlarge cost 3 × 0.192 USD/h; the savings are that minus the cheapest option.
      expect(command.savings).toBeCloseTo(3 * 0.192 - replacement!.instanceTypes[0]!.price, 9);
      expect(replacement!.instanceTypes.every((t) => t.price < 3 * 0.192)).toBe(true);
      expect(command.message).toContain(`cheapest ${replacement!.instanceTypes[0]!.name}`);
    });

    it('leaves a lone candidate to single-node consolidation', () => {
      const general = nodePool('general', { budgets: [{ nodes: '100%' }] });
      const w = world({ pools: [general], types, launched: [launched('a', general, type('m5.2xlarge'))], pods: [runningPod('p', 'a')] });
      expect(multiNodeConsolidation.computeCommand(w.claims, methodContext(w).ctx)).toBeUndefined();
    });

    it('looks only at as many candidates as the Underutilized budget allows, cheapest to disrupt first', () => {
      const general = nodePool('general', { budgets: [{ nodes: '2', reasons: ['Underutilized'] }] });
      const steady = nodePool('steady', { consolidationPolicy: 'WhenEmpty' });
      const nodes = [launched('a', general, type('m5.large')), launched('b', general, type('m5.large')), launched('c', general, type('m5.large')), launched('big', steady, type('m5.2xlarge'))];
      // c's pod is the most expensive to evict (high priority): it is the one the budget leaves out.
      const pods = [runningPod('p-a', 'a'), runningPod('p-b', 'b'), runningPod('p-c', 'c', { priority: 1_000_000 }), runningPod('p-big', 'big')];
      const w = world({ pools: [general, steady], types, launched: nodes, pods });
      const { ctx, reported } = methodContext(w);
      expect(multiNodeConsolidation.computeCommand(w.claims, ctx)?.candidates.map((c) => c.name).sort()).toEqual(['a', 'b']);
      expect(reported.skipped).toContainEqual({ nodeClaim: 'c', reason: "Underutilized: the NodePool's disruption budgets allow no more disruptions for reason Underutilized now" });
      expect(reported.budgetBlocked).toEqual([]);
    });

    it('never looks at the nodes of a WhenEmpty NodePool, nor at nodes inside consolidateAfter', () => {
      const whenEmpty = nodePool('when-empty', { consolidationPolicy: 'WhenEmpty', budgets: [{ nodes: '100%' }] });
      const patient = nodePool('patient', { consolidateAfter: '5h', budgets: [{ nodes: '100%' }] });
      const nodes = [launched('a', whenEmpty, type('m5.large')), launched('b', whenEmpty, type('m5.large')), launched('c', patient, type('m5.large')), launched('d', patient, type('m5.large'))];
      const pods = [runningPod('p-a', 'a'), runningPod('p-b', 'b'), runningPod('p-c', 'c'), runningPod('p-d', 'd')];
      const w = world({ pools: [whenEmpty, patient], types, launched: nodes, pods });
      const { ctx, reported } = methodContext(w);
      expect(multiNodeConsolidation.computeCommand(w.claims, ctx)).toBeUndefined();
      expect(reported.skipped.map((s) => s.nodeClaim)).toEqual(['c', 'd']);
      expect(reported.skipped[0]!.reason).toMatch(/^Underutilized: consolidateAfter \(5h\) has not passed/);
    });
  });

  describe('validateCommand', () => {
    it('simulates exactly the given candidates, and drops them once one of them may no longer be disrupted', () => {
      const general = nodePool('general', { budgets: [{ nodes: '100%' }] });
      const steady = nodePool('steady', { consolidationPolicy: 'WhenEmpty' });
      const nodes = [launched('a', general, type('m5.large')), launched('b', general, type('m5.large')), launched('big', steady, type('m5.2xlarge'))];
      const pods = [runningPod('p-a', 'a'), runningPod('p-b', 'b'), runningPod('p-big', 'big')];
      const w = world({ pools: [general, steady], types, launched: nodes, pods });
      const both = w.claims.filter((c) => c.nodePool === 'general');
      expect(decisionOf(multiNodeConsolidation.validateCommand(both, methodContext(w).ctx)!)).toBe('delete');
      expect(multiNodeConsolidation.validateCommand(both.slice(0, 1), methodContext(w).ctx)).toBeUndefined();
      const pinned = world({ pools: [general, steady], types, launched: nodes, pods: [...pods.filter((p) => p.name !== 'p-b'), runningPod('p-b', 'b', { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } })] });
      expect(multiNodeConsolidation.validateCommand(both, methodContext(pinned).ctx)).toBeUndefined();
    });
  });
});
