import { describe, expect, it } from 'vitest';
import { SOAK_FAULTS, checkRandomScenario } from '../support/random-scenario-checks.js';

/** How many seeded scenarios the fault soak runs (override with SKIFF_SOAK_FAULT_RUNS). */
const RUNS = Number(process.env.SKIFF_SOAK_FAULT_RUNS ?? 1000);

describe('soak: random scenarios under faults', () => {
  it(`keeps every invariant over ${RUNS} seeded scenarios with duplicate delivery, overlapping invocations, crashes and throttling`, async () => {
    let pods = 0;
    let nodeClaims = 0;
    const started = Date.now();
    for (let seed = 1000; seed < 1000 + RUNS; seed++) {
      // Crash rates alternate between 5 % and 10 % of side effects.
      const r = await checkRandomScenario(seed, { ...SOAK_FAULTS, crashAfterSideEffect: seed % 2 === 0 ? 0.1 : 0.05 });
      pods += r.pods;
      nodeClaims += r.nodeClaims;
    }
    console.log(`soak: ${RUNS} scenarios under faults, ${pods} pods, ${nodeClaims} NodeClaims launched, ${((Date.now() - started) / 1000).toFixed(1)} s`);
    expect(pods).toBeGreaterThan(0);
  }, 7_200_000);
});
