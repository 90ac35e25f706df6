// The single-node consolidation method on its own, over worlds built in memory: the first node that can go alone,
// deleted or replaced by one cheaper node, and why each node tried before it was turned down.
import { describe, expect, it } from 'vitest';
import { LABEL_CAPACITY_TYPE } from '../../../../shared/core/api/labels.js';
import { decisionOf } from '../../../../shared/core/disruption/types.js';
import { singleNodeConsolidation } from '../../../../shared/controllers/disruption/methods/single-node-consolidation.js';
import { catalogue } from '../../../support/builders.js';
import { launched, methodContext, nodePool, runningPod, world } from '../../../support/disruption-world.js';

const types = catalogue();
const type = (name: string) => types.find((t) => t.name === name)!;

describe('singleNodeConsolidation', () => {
  describe('computeCommand', () => {
    it('replaces an oversized on-demand node with the cheapest type its pods fit, on spot', () => {
      const general = nodePool('general');
      const w = world({ pools: [general], types, launched: [launched('big', general, type('m5.2xlarge'))], pods: [runningPod('web', 'big', { cpu: '500m', memory: '1Gi' })] });
      const command = singleNodeConsolidation.computeCommand(w.claims, methodContext(w).ctx)!;
      expect(command.reason).toBe('Underutilized');
      expect(command.candidates.map((c) => c.name)).toEqual(['big']);
      expect(decisionOf(command)).toBe('replace');
      expect(command.replacements).toHaveLength(1);
      const [replacement] = command.replacements;
      // The catalogue's cheapest type with 500m and 1Gi free: c5.large, its spot offering at half of 0.085 USD/h.
      expect(replacement!.instanceTypes[0]).toEqual({ name: 'c5.large', price: 0.0425 });
      // Only options strictly cheaper than the node (0.384 USD/h on demand); its own type's spot offering is one.
      expect(replacement!.instanceTypes.every((t) => t.price < 0.384)).toBe(true);
      expect(replacement!.instanceTypes.map((t) => t.name)).toContain('m5.2xlarge');
      expect([...replacement!.requirements.get(LABEL_CAPACITY_TYPE).sortedValues()]).toEqual(['spot']);
      expect(command.savings).toBeCloseTo(0.384 - 0.0425, 9);
    });

    it('deletes a node whose pods fit on another node', () => {
      const general = nodePool('general', { budgets: [{ nodes: '100%' }] });
      const steady = nodePool('steady', { consolidationPolicy: 'WhenEmpty' });
      const nodes = [launched('small', general, type('m5.large')), launched('big', steady, type('m5.2xlarge'))];
      const w = world({ pools: [general, steady], types, launched: nodes, pods: [runningPod('web', 'small'), runningPod('db', 'big')] });
      const command = singleNodeConsolidation.computeCommand(w.claims, methodContext(w).ctx)!;
      expect(command.candidates.map((c) => c.name)).toEqual(['small']);
      expect(decisionOf(command)).toBe('delete');
      expect(command.savings).toBeCloseTo(0.096, 9);
    });

    it('turns down a spot node without the SpotToSpotConsolidation gate, says why, and tries the next', () => {
      const general = nodePool('general', { budgets: [{ nodes: '100%' }] });
      const nodes = [launched('spot', general, type('m5.2xlarge'), { capacityType: 'spot' }), launched('od', general, type('m5.2xlarge'))];
      // Neither pod fits beside the other; the spot node's pod fits a cheaper type (m5.xlarge) and is cheaper to
      // evict: it is tried first.
      const pods = [runningPod('a', 'spot', { cpu: '3000m' }), runningPod('b', 'od', { cpu: '5000m', priority: 1_000_000 })];
      const w = world({ pools: [general], types, launched: nodes, pods });
      const { ctx, reported } = methodContext(w);
      expect(singleNodeConsolidation.computeCommand(w.claims, ctx)?.candidates.map((c) => c.name)).toEqual(['od']);
      const why = 'replacing a spot node with a spot node needs the SpotToSpotConsolidation feature gate';
      expect(reported.skipped).toEqual([{ nodeClaim: 'spot', reason: `Underutilized: ${why}` }]);
      expect(reported.unconsolidatable).toEqual([{ nodeClaim: 'spot', node: 'spot', reason: why }]);
    });

    it('finds nothing when no node is cheaper to run another way', () => {
      const general = nodePool('general');
      // A pod that needs all of an m5.large: nothing cheaper fits it, and it fits nowhere else.
      const w = world({ pools: [general], types, launched: [launched('full', general, type('m5.large'), { capacityType: 'spot' })], pods: [runningPod('web', 'full', { cpu: '1800m', memory: '6Gi' })] });
      const { ctx, reported } = methodContext(w);
      expect(singleNodeConsolidation.computeCommand(w.claims, ctx)).toBeUndefined();
      expect(reported.skipped.map((s) => s.nodeClaim)).toEqual(['full']);
    });
  });

  describe('validateCommand', () => {
    it('simulates exactly its one candidate, still within the budget', () => {
      const general = nodePool('general');
      const w = world({ pools: [general], types, launched: [launched('big', general, type('m5.2xlarge'))], pods: [runningPod('web', 'big')] });
      expect(decisionOf(singleNodeConsolidation.validateCommand(w.claims, methodContext(w).ctx)!)).toBe('replace');
      const closed = nodePool('general', { budgets: [{ nodes: '0' }] });
      const blocked = world({ pools: [closed], types, launched: [launched('big', closed, type('m5.2xlarge'))], pods: [runningPod('web', 'big')] });
      expect(singleNodeConsolidation.validateCommand(blocked.claims, methodContext(blocked).ctx)).toBeUndefined();
    });
  });
});
