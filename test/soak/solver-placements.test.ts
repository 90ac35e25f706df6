import { describe, expect, it } from 'vitest';
import { constrainedCase, verifyConstrainedCase } from '../support/constrained-solve.js';

/** How many seeded solver cases the soak checks (override with SKIFF_SOAK_SOLVER_RUNS). */
const RUNS = Number(process.env.SKIFF_SOAK_SOLVER_RUNS ?? 5000);

describe('soak: solver placements, checked independently', () => {
  it(`breaks no constraint over ${RUNS} seeded cases`, () => {
    const breaches: string[] = [];
    let placed = 0;
    let unschedulable = 0;
    let nodeClaims = 0;
    const started = Date.now();
    for (let seed = 100_000; seed < 100_000 + RUNS; seed++) {
      const outcome = verifyConstrainedCase(constrainedCase(seed));
      breaches.push(...outcome.breaches);
      placed += outcome.placed;
      unschedulable += outcome.unschedulable;
      nodeClaims += outcome.nodeClaims;
    }
    console.log(`soak: ${RUNS} solver cases, ${placed} placements checked, ${unschedulable} unschedulable, ${nodeClaims} NodeClaims, ${breaches.length} breaches, ${((Date.now() - started) / 1000).toFixed(1)} s`);
    expect(breaches.slice(0, 20)).toEqual([]);
  }, 3_600_000);
});
