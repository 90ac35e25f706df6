/**
 * Every placement the solver plans satisfies every constraint of the pod on the node it will get, as judged by the
 * simulation's independent placement checker. A sample here; `npm run soak` runs thousands of seeds.
 */
import { describe, expect, it } from 'vitest';
import { constrainedCase, verifyConstrainedCase } from '../../support/constrained-solve.js';

const SEEDS = 300;

describe('solver placements, checked independently', () => {
  it(`breaks no constraint over ${SEEDS} seeded random cases`, () => {
    const breaches: string[] = [];
    let placed = 0;
    for (let seed = 1; seed <= SEEDS; seed++) {
      const outcome = verifyConstrainedCase(constrainedCase(seed));
      breaches.push(...outcome.breaches);
      placed += outcome.placed;
    }
    expect(breaches.slice(0, 10)).toEqual([]);
    expect(placed).toBeGreaterThan(SEEDS);
  });

  it('the check fails when a plan puts two hostname anti-affine replicas on one NodeClaim', () => {
    const c = Array.from({ length: 500 }, (_, i) => constrainedCase(i + 1)).find(
      (x) => x.pending.filter((p) => p.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.[0]?.topologyKey === 'kubernetes.io/hostname').length >= 2,
    )!;
    const anti = c.pending.filter((p) => p.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.[0]?.topologyKey === 'kubernetes.io/hostname').slice(0, 2);
    const honest = verifyConstrainedCase({ ...c, existingNodes: [], pending: anti });
    expect(honest.breaches).toEqual([]);
    expect(honest.results.newNodeClaims).toHaveLength(2);
    const merged = verifyConstrainedCase({ ...c, existingNodes: [], pending: anti }, (r) => ({
      ...r,
      newNodeClaims: [{ ...r.newNodeClaims[0]!, pods: r.newNodeClaims.flatMap((claim) => claim.pods) }],
    }));
    expect(merged.breaches.join('\n')).toMatch(/anti-affinity/i);
  });
});
