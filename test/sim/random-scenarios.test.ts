import { describe, it } from 'vitest';
import { checkRandomScenario } from '../support/random-scenario-checks.js';

// A small sample of the soak (`npm run soak` runs the same check over many more seeds).
describe('random scenarios', () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    it(`keeps every invariant for seed ${seed}`, async () => {
      await checkRandomScenario(seed);
    }, 60_000);
  }
});
