// Issue 21's fault soak: random disruption days (budgets, PDBs, do-not-disrupt, drift, scale steps, consolidation)
// with every fault on at a high rate (HOSTILE_FAULTS), ICE windows and spot interruptions, one seed per day. Each day
// must end with zero violations of every kind (leaks included) and no satisfiable pod pending longer than 15 minutes.
//
//   SKIFF_SOAK=1 SKIFF_SOAK_HOSTILE_DAYS=20 node scripts/run-tests.mjs test/soak/hostile-disruption-scenarios.test.ts
import { describe, expect, it } from 'vitest';
import { HOSTILE_FAULTS, runDisruptionScenario } from '../support/random-scenario-checks.js';

/** Simulated days (seeds) to run (override with SKIFF_SOAK_HOSTILE_DAYS). */
const DAYS = Number(process.env.SKIFF_SOAK_HOSTILE_DAYS ?? 1000);
/** First seed (override with SKIFF_SOAK_HOSTILE_SEED). */
const FIRST_SEED = Number(process.env.SKIFF_SOAK_HOSTILE_SEED ?? 50_000);

describe('soak: hostile disruption days', () => {
  it(`keeps every invariant and every pod's wait under 15 minutes over ${DAYS} days with every fault on`, async () => {
    const failures: string[] = [];
    const kinds: Record<string, number> = {};
    const started = Date.now();
    for (let seed = FIRST_SEED; seed < FIRST_SEED + DAYS; seed++) {
      const outcome = await runDisruptionScenario(seed, { hostile: HOSTILE_FAULTS });
      for (const p of outcome.problems) {
        const kind = p.startsWith('violations.') ? p.split(' ')[0]! : p.startsWith('pod ') && p.includes(' pending ') ? 'pending > 15 min' : p.split(' ').slice(0, 3).join(' ');
        kinds[kind] = (kinds[kind] ?? 0) + 1;
      }
      if (outcome.problems.length > 0) failures.push(`seed ${seed}: ${outcome.problems.length} problem(s), first: ${outcome.problems[0]} (scenario ${outcome.savedTo})`);
    }
    console.log(`soak: hostile disruption, seeds ${FIRST_SEED}..${FIRST_SEED + DAYS - 1}: ${failures.length} failing; problems by kind ${JSON.stringify(kinds)}; ${((Date.now() - started) / 1000).toFixed(0)} s`);
    expect(failures).toEqual([]);
  }, Math.max(3_600_000, DAYS * 120_000));
});
