import { describe, it } from 'vitest';
import { SOAK_FAULTS, checkRandomScenario } from '../support/random-scenario-checks.js';

// A small sample of the fault soak (`npm run soak` runs the same check over 1,000 seeds): random scenarios under
// duplicate delivery, overlapping invocations, crashes after side effects and EC2 throttling keep every invariant.
describe('random scenarios under faults', () => {
  for (let seed = 1; seed <= 20; seed++) {
    it(`keeps every invariant for seed ${seed}`, async () => {
      await checkRandomScenario(seed, { ...SOAK_FAULTS, crashAfterSideEffect: seed % 2 === 0 ? 0.1 : 0.05 });
    }, 60_000);
  }
});
