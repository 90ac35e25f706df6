// A small sample of issue 21's fault soak (`npm run soak` runs test/soak/hostile-disruption-scenarios.test.ts over
// 1,000 seeds): short random disruption runs with every fault on at a high rate, an ICE window and a spot interruption
// keep every invariant — no violation of any kind, no leak, no pod lost — and no pod waits longer than 15 minutes.
import { describe, expect, it } from 'vitest';
import { HOSTILE_FAULTS, HOSTILE_RUN_HOURS, MAX_PENDING_MS, runDisruptionScenario } from '../support/random-scenario-checks.js';

describe('hostile disruption runs (sample of the fault soak)', () => {
  for (const seed of [50_001, 50_005, 50_012]) {
    it(`seed ${seed}: every invariant holds and no pod waits longer than 15 minutes`, async () => {
      const outcome = await runDisruptionScenario(seed, { hours: HOSTILE_RUN_HOURS, hostile: HOSTILE_FAULTS });
      expect(outcome.problems, `scenario saved to ${outcome.savedTo ?? '-'}`).toEqual([]);
      expect(outcome.stats.violations).toBe(0);
      expect(outcome.stats.lostPods).toBe(0);
      expect(outcome.stats.longestPendingMs).toBeLessThanOrEqual(MAX_PENDING_MS);
    }, 120_000);
  }
});
