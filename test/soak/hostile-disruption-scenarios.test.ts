// Issue 21's fault soak: short random disruption runs (a few simulated hours: scale steps, consolidation, drift and node
// events of the disruption generator, an ICE window and a spot interruption) with every fault on at a high rate
// (HOSTILE_FAULTS), one seed per run. Every run must end with zero violations of every kind (leaks included), no pod
// lost and no satisfiable pod pending longer than 15 minutes. The figures are printed at the end for the issue note.
//
//   SKIFF_SOAK=1 SKIFF_SOAK_HOSTILE_RUNS=100 node scripts/run-tests.mjs test/soak/hostile-disruption-scenarios.test.ts
//
// SKIFF_SOAK_HOSTILE_RUNS (default 1000), SKIFF_SOAK_HOSTILE_SEED (first seed, default 50000) and
// SKIFF_SOAK_HOSTILE_HOURS (simulated hours per run, default HOSTILE_RUN_HOURS) change the sweep.
import { describe, expect, it } from 'vitest';
import { HOSTILE_FAULTS, HOSTILE_RUN_HOURS, hostileSoakSummary, runDisruptionScenario, type DisruptionRunOutcome } from '../support/random-scenario-checks.js';

/** Runs (seeds) to simulate. */
const RUNS = Number(process.env.SKIFF_SOAK_HOSTILE_RUNS ?? 1000);
/** First seed. */
const FIRST_SEED = Number(process.env.SKIFF_SOAK_HOSTILE_SEED ?? 50_000);
/** Simulated hours per run. */
const HOURS = Number(process.env.SKIFF_SOAK_HOSTILE_HOURS ?? HOSTILE_RUN_HOURS);

describe('soak: hostile disruption runs', () => {
  it(`keeps every invariant and every pod's wait under 15 minutes over ${RUNS} runs of ${HOURS} h with every fault on`, async () => {
    const outcomes: DisruptionRunOutcome[] = [];
    const started = Date.now();
    for (let seed = FIRST_SEED; seed < FIRST_SEED + RUNS; seed++) {
      outcomes.push(await runDisruptionScenario(seed, { hours: HOURS, hostile: HOSTILE_FAULTS }));
      if (outcomes.length % 50 === 0) console.log(`soak: hostile ${outcomes.length}/${RUNS} runs, ${outcomes.filter((o) => o.problems.length > 0).length} failing, ${((Date.now() - started) / 1000).toFixed(0)} s`);
    }
    console.log(hostileSoakSummary(outcomes, { firstSeed: FIRST_SEED, hours: HOURS, wallMs: Date.now() - started }));
    expect(outcomes.filter((o) => o.problems.length > 0).map((o) => `seed ${o.stats.seed}: ${o.problems.length} problem(s), first: ${o.problems[0]} (scenario ${o.savedTo})`)).toEqual([]);
  }, Math.max(3_600_000, RUNS * 60_000));
});
