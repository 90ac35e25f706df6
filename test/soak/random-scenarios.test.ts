import { describe, expect, it } from 'vitest';
import { checkRandomScenario } from '../support/random-scenario-checks.js';

/** How many seeded scenarios the soak runs (override with SKIFF_SOAK_RUNS). */
const RUNS = Number(process.env.SKIFF_SOAK_RUNS ?? 1000);

describe('soak: random scenarios', () => {
  it(`keeps every invariant over ${RUNS} seeded scenarios`, async () => {
    let pods = 0;
    let nodeClaims = 0;
    const started = Date.now();
    for (let seed = 1000; seed < 1000 + RUNS; seed++) {
      const r = await checkRandomScenario(seed);
      pods += r.pods;
      nodeClaims += r.nodeClaims;
    }
    console.log(`soak: ${RUNS} scenarios, ${pods} pods, ${nodeClaims} NodeClaims launched, ${((Date.now() - started) / 1000).toFixed(1)} s`);
    expect(pods).toBeGreaterThan(0);
  }, 3_600_000);
});
