// The split consolidation method on its own (Skiff's move Karpenter lacks): one large node holding pods that no
// single cheaper node takes, replaced by two or more cheaper NodeClaims; respecting do-not-disrupt, PDBs, budgets and
// the SpotToSpotConsolidation gate.
import { describe, expect, it } from 'vitest';
import { LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE } from '../../../../shared/core/api/labels.js';
import { decisionOf } from '../../../../shared/core/disruption/types.js';
import { singleNodeConsolidation } from '../../../../shared/controllers/disruption/methods/single-node-consolidation.js';
import { splitConsolidation } from '../../../../shared/controllers/disruption/methods/split-consolidation.js';
import { catalogue } from '../../../support/builders.js';
import { launched, methodContext, nodePool, pdb, runningPod, world } from '../../../support/disruption-world.js';

const types = catalogue().filter((t) => t.name.startsWith('m5.'));
const type = (name: string) => types.find((t) => t.name === name)!;

/** One m5.2xlarge ($0.384/h, 7,910m) holding nine 500m pods (4,500m): no m5.xlarge (3,920m) takes them all. */
function large(opts: { capacityType?: 'on-demand' | 'spot'; budgets?: { nodes: string }[]; podAnnotations?: Record<string, string>; guarded?: boolean } = {}) {
  const capacityType = opts.capacityType ?? 'on-demand';
  const general = nodePool('general', {
    requirements: [
      { key: LABEL_CAPACITY_TYPE, operator: 'In', values: [capacityType] },
      { key: LABEL_INSTANCE_TYPE, operator: 'In', values: ['m5.large', 'm5.xlarge', 'm5.2xlarge'] },
    ],
    budgets: opts.budgets ?? [{ nodes: '100%' }],
  });
  const pods = Array.from({ length: 9 }, (_, i) => runningPod(`p-${i}`, 'big', { cpu: '500m', labels: { app: i === 0 && opts.guarded ? 'guarded' : `p-${i}` }, ...(i === 0 && opts.podAnnotations ? { annotations: opts.podAnnotations } : {}) }));
  return world({ pools: [general], types, launched: [launched('big', general, type('m5.2xlarge'), { capacityType })], pods, pdbs: opts.guarded ? [pdb('guard', 'guarded', 0)] : [] });
}

describe('splitConsolidation', () => {
  it('replaces one large node Karpenter keeps with several cheaper ones', () => {
    const w = large();
    expect(singleNodeConsolidation.computeCommand(w.claims, methodContext(w).ctx)).toBeUndefined();
    const command = splitConsolidation.computeCommand(w.claims, methodContext(w).ctx)!;
    expect(decisionOf(command)).toBe('replace');
    expect(command.candidates.map((c) => c.name)).toEqual(['big']);
    expect(command.replacements.length).toBeGreaterThanOrEqual(2);
    expect(command.replacements.flatMap((r) => r.pods).length).toBe(9);
    const cheapest = command.replacements.reduce((sum, r) => sum + r.instanceTypes[0]!.price, 0);
    expect(cheapest).toBeLessThan(0.384 * 0.9);
    expect(command.savings).toBeCloseTo(0.384 - cheapest, 9);
    const again = splitConsolidation.validateCommand(command.candidates, methodContext(w).ctx)!;
    expect(again.savings).toBeCloseTo(command.savings, 9);
  });

  it('respects do-not-disrupt, a PDB and a budget of zero', () => {
    for (const w of [large({ podAnnotations: { 'karpenter.sh/do-not-disrupt': 'true' } }), large({ guarded: true }), large({ budgets: [{ nodes: '0' }] })]) {
      expect(splitConsolidation.computeCommand(w.claims, methodContext(w).ctx)).toBeUndefined();
    }
  });

  it('replaces a spot node with spot nodes only with the SpotToSpotConsolidation gate', () => {
    const w = large({ capacityType: 'spot' });
    const { ctx, reported } = methodContext(w);
    expect(splitConsolidation.computeCommand(w.claims, ctx)).toBeUndefined();
    expect(reported.skipped).toContainEqual({ nodeClaim: 'big', reason: 'Underutilized (split): replacing spot nodes with spot nodes needs the SpotToSpotConsolidation feature gate' });
  });
});
