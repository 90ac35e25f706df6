// The repack consolidation method on its own (Skiff's move Karpenter lacks): two or more nodes of a NodePool that
// Karpenter's moves leave alone — no node's pods fit elsewhere, no single cheaper node takes them — replaced by a
// cheaper fresh plan of two or more NodeClaims; within the budget, never over a PDB or do-not-disrupt, and never for a
// saving below the churn guard's minimum.
import { describe, expect, it } from 'vitest';
import { LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE } from '../../../../shared/core/api/labels.js';
import { MIN_PACKING } from '../../../../shared/core/disruption/repack.js';
import { decisionOf } from '../../../../shared/core/disruption/types.js';
import { multiNodeConsolidation } from '../../../../shared/controllers/disruption/methods/multi-node-consolidation.js';
import { repackConsolidation } from '../../../../shared/controllers/disruption/methods/repack-consolidation.js';
import { singleNodeConsolidation } from '../../../../shared/controllers/disruption/methods/single-node-consolidation.js';
import { KARPENTER_METHODS, methodsFor } from '../../../../shared/controllers/disruption/methods.js';
import { catalogue } from '../../../support/builders.js';
import { launched, methodContext, nodePool, pdb, runningPod, world } from '../../../support/disruption-world.js';

const types = catalogue().filter((t) => t.name.startsWith('m5.'));
const type = (name: string) => types.find((t) => t.name === name)!;
const ON_DEMAND_M5 = [
  { key: LABEL_CAPACITY_TYPE, operator: 'In' as const, values: ['on-demand'] },
  { key: LABEL_INSTANCE_TYPE, operator: 'In' as const, values: ['m5.large', 'm5.xlarge', 'm5.2xlarge'] },
];

/**
 * Two m5.2xlarge ($0.384/h each, 7,910m) each holding a 3,000m and two 1,500m pods (6,000m): only one 1,500m pod fits
 * on the other node (1,910m free), the rest (4,500m) fits no cheaper single type, 12,000m fit no single type —
 * Karpenter keeps both. A fresh plan fits them on an m5.2xlarge and an m5.xlarge ($0.576/h).
 */
function stalled(opts: { budgets?: { nodes: string; reasons?: ('Empty' | 'Underutilized' | 'Drifted')[] }[]; annotations?: Record<string, string>; pdbOnB?: boolean } = {}) {
  const general = nodePool('general', { requirements: ON_DEMAND_M5, budgets: opts.budgets ?? [{ nodes: '100%' }] });
  const nodes = [launched('a', general, type('m5.2xlarge')), launched('b', general, type('m5.2xlarge'), { nodeAnnotations: opts.annotations ?? {} })];
  const pods = [
    runningPod('a-big', 'a', { cpu: '3000m' }),
    runningPod('a-s1', 'a', { cpu: '1500m' }),
    runningPod('a-s2', 'a', { cpu: '1500m' }),
    runningPod('b-big', 'b', { cpu: '3000m' }),
    runningPod('b-s1', 'b', { cpu: '1500m', labels: { app: 'guarded' } }),
    runningPod('b-s2', 'b', { cpu: '1500m' }),
  ];
  return world({ pools: [general], types, launched: nodes, pods, pdbs: opts.pdbOnB ? [pdb('guard', 'guarded', 0)] : [] });
}

describe('repackConsolidation', () => {
  describe('computeCommand', () => {
    it('replaces two nodes Karpenter keeps with several cheaper, well-packed NodeClaims', () => {
      const w = stalled();
      expect(multiNodeConsolidation.computeCommand(w.claims, methodContext(w).ctx)).toBeUndefined();
      expect(singleNodeConsolidation.computeCommand(w.claims, methodContext(w).ctx)).toBeUndefined();
      const command = repackConsolidation.computeCommand(w.claims, methodContext(w).ctx)!;
      expect(command.reason).toBe('Underutilized');
      expect(decisionOf(command)).toBe('replace');
      expect(command.candidates.map((c) => c.name).sort()).toEqual(['a', 'b']);
      expect(command.replacements.length).toBeGreaterThanOrEqual(2);
      expect(command.replacements.flatMap((r) => r.pods).sort()).toEqual(['default/a-big', 'default/a-s1', 'default/a-s2', 'default/b-big', 'default/b-s1', 'default/b-s2']);
      const cheapest = command.replacements.reduce((sum, r) => sum + r.instanceTypes[0]!.price, 0);
      expect(command.savings).toBeCloseTo(2 * 0.384 - cheapest, 9);
      // 0.768 USD/h → a plan at least the churn guard's 10 % cheaper (an m5.2xlarge and an m5.xlarge would be 0.576).
      expect(cheapest).toBeLessThanOrEqual(0.9 * 0.768 + 1e-9);
      // Every replacement, whatever option launches, keeps the saving above the minimum: no option costs more than
      // the cheapest plus its share of the slack.
      for (const r of command.replacements) expect(r.instanceTypes.every((o) => o.price <= r.instanceTypes[0]!.price + command.savings)).toBe(true);
      expect(command.message).toMatch(/^replace 2 node\(s\) with \d cheaper NodeClaim\(s\)/);
    });

    it('validates its own command again on exactly the same candidates, saving as much', () => {
      const w = stalled();
      const command = repackConsolidation.computeCommand(w.claims, methodContext(w).ctx)!;
      const again = repackConsolidation.validateCommand(command.candidates, methodContext(w).ctx)!;
      expect(again.candidates.map((c) => c.name).sort()).toEqual(['a', 'b']);
      expect(again.savings).toBeCloseTo(command.savings, 9);
      expect(again.replacements.length).toBe(command.replacements.length);
    });

    it('takes no more candidates than the NodePool budget for Underutilized allows', () => {
      const w = stalled({ budgets: [{ nodes: '1', reasons: ['Underutilized'] }] });
      expect(repackConsolidation.computeCommand(w.claims, methodContext(w).ctx)).toBeUndefined();
      const none = stalled({ budgets: [{ nodes: '0' }] });
      expect(repackConsolidation.computeCommand(none.claims, methodContext(none).ctx)).toBeUndefined();
    });

    it('never takes a node a PDB or a do-not-disrupt annotation keeps', () => {
      for (const w of [stalled({ pdbOnB: true }), stalled({ annotations: { 'karpenter.sh/do-not-disrupt': 'true' } })]) {
        const { ctx, reported } = methodContext(w);
        expect(repackConsolidation.computeCommand(w.claims, ctx)).toBeUndefined();
        expect(reported.blocked.map((b) => b.nodeClaim)).toEqual(['b']);
      }
    });

    it('turns down a plan that saves less than the churn guard minimum', () => {
      // m5.xlarge nodes ($0.192/h) each with a 2,100m pod: two of them cannot share a node of 3,920m, and a 2,100m pod
      // needs an m5.xlarge: a fresh plan is the same fleet, it saves nothing.
      const general = nodePool('general', { requirements: ON_DEMAND_M5, budgets: [{ nodes: '100%' }] });
      const nodes = [launched('a', general, type('m5.xlarge')), launched('b', general, type('m5.xlarge'))];
      const pods = [runningPod('p-a', 'a', { cpu: '2100m' }), runningPod('p-b', 'b', { cpu: '2100m' })];
      const w = world({ pools: [general], types, launched: nodes, pods });
      expect(repackConsolidation.computeCommand(w.claims, methodContext(w).ctx)).toBeUndefined();
    });

    it('is not among the methods of the karpenter setting', () => {
      expect(KARPENTER_METHODS.map((m) => m.name)).toEqual(['emptiness', 'drift', 'multi-node-consolidation', 'single-node-consolidation']);
      expect(methodsFor('karpenter')).toBe(KARPENTER_METHODS);
      expect(methodsFor(undefined).map((m) => m.name)).toEqual(['emptiness', 'drift', 'multi-node-consolidation', 'repack-consolidation', 'single-node-consolidation', 'split-consolidation']);
      expect(MIN_PACKING).toBe(0.5);
    });
  });
});
