// Issue 6's property test at scale: random workloads, budgets, PDBs and do-not-disrupt over many simulated days, with
// zero budget, PDB, do-not-disrupt and churn (replace loop) violations as the observer counts them (plus the Result cross-checks in
// disruptionProblems). One seed is one simulated day; seeds run in sequence.
//
//   SKIFF_SOAK=1 npx vitest run test/soak/disruption-scenarios.test.ts                 # 10,000 days
//   SKIFF_SOAK=1 SKIFF_SOAK_DISRUPTION_DAYS=50 node scripts/run-tests.mjs test/soak/disruption-scenarios.test.ts
//   SKIFF_SOAK_DISRUPTION_SEED=20000 ...                                             # another range (run shards side by side)
//
// (`npm run soak -- <file>` runs every soak file: the script already names test/soak, and vitest ORs its filters.)
import { describe, expect, it } from 'vitest';
import { runDisruptionScenario, type DisruptionRunStats } from '../support/random-scenario-checks.js';

/** Simulated days to run (override with SKIFF_SOAK_DISRUPTION_DAYS). */
const DAYS = Number(process.env.SKIFF_SOAK_DISRUPTION_DAYS ?? 10_000);
/** Days per scenario (one seed each). One is the cheapest per day: longer runs accumulate pods and records. */
const DAYS_PER_SCENARIO = Number(process.env.SKIFF_SOAK_DISRUPTION_DAYS_PER_SCENARIO ?? 1);
/** First seed (override with SKIFF_SOAK_DISRUPTION_SEED to run another range, e.g. a second shard). */
const FIRST_SEED = Number(process.env.SKIFF_SOAK_DISRUPTION_SEED ?? 10_000);
/** Print a progress line every this many seeds. */
const PROGRESS_EVERY = 10;
/** Stop after this many failing seeds (each is saved under test-output/disruption-scenarios/). */
const MAX_FAILURES = 10;

describe('soak: disruption over random days', () => {
  it(`breaks no budget, PDB, do-not-disrupt or churn over ${DAYS} simulated days`, async () => {
    const scenarios = Math.ceil(DAYS / DAYS_PER_SCENARIO);
    const started = Date.now();
    const failures: string[] = [];
    const byReason: Record<string, number> = {};
    const totals = { days: 0, cpuMs: 0, pods: 0, evictions: 0, nodeClaims: 0, pendingAtEnd: 0, rejectedProposals: 0, slowest: { seed: 0, ms: 0 } };
    for (let i = 0; i < scenarios && failures.length < MAX_FAILURES; i++) {
      const seed = FIRST_SEED + i;
      const outcome = await runDisruptionScenario(seed, { days: DAYS_PER_SCENARIO });
      add(outcome.stats);
      if (outcome.problems.length > 0) failures.push(`seed ${seed}: ${outcome.problems.length} problem(s), first: ${outcome.problems[0]} (scenario ${outcome.savedTo})`);
      if ((i + 1) % PROGRESS_EVERY === 0) {
        console.log(`soak: disruption ${totals.days}/${DAYS} days, ${failures.length} failing seed(s), ${secondsPerDay()} s/day (${cpuSecondsPerDay()} s CPU); disruptions ${JSON.stringify(byReason)}, ${totals.evictions} evictions`);
      }
    }
    function add(s: DisruptionRunStats): void {
      totals.days += s.days;
      totals.cpuMs += s.cpuMs;
      totals.rejectedProposals += s.rejectedProposals;
      totals.pods += s.pods;
      totals.evictions += s.evictions;
      totals.nodeClaims += s.nodeClaims;
      totals.pendingAtEnd += s.pendingAtEnd;
      if (s.wallMs > totals.slowest.ms) totals.slowest = { seed: s.seed, ms: s.wallMs };
      for (const [reason, n] of Object.entries(s.disruptions)) byReason[reason] = (byReason[reason] ?? 0) + n;
    }
    function cpuSecondsPerDay(): string {
      return (totals.cpuMs / 1000 / Math.max(1, totals.days)).toFixed(2);
    }
    function secondsPerDay(): string {
      return ((Date.now() - started) / 1000 / Math.max(1, totals.days)).toFixed(2);
    }
    const wall = (Date.now() - started) / 1000;
    const reasons = Object.entries(byReason).sort((a, b) => b[1] - a[1]).map(([r, n]) => `${r} ${n}`).join(', ') || 'none';
    console.log(
      [
        `soak: disruption over random days — seeds ${FIRST_SEED}..${FIRST_SEED + Math.ceil(totals.days / DAYS_PER_SCENARIO) - 1}`,
        `  days simulated: ${totals.days}`,
        `  disruptions by reason: ${reasons}`,
        `  evictions: ${totals.evictions}; pods: ${totals.pods}; NodeClaims launched: ${totals.nodeClaims}; pods pending at the end: ${totals.pendingAtEnd}`,
        `  proposals dropped at re-validation (ConsolidationRejected events): ${totals.rejectedProposals}`,
        `  wall time: ${wall.toFixed(1)} s (${secondsPerDay()} s per simulated day, ${cpuSecondsPerDay()} s of CPU; slowest seed ${totals.slowest.seed}, ${(totals.slowest.ms / 1000).toFixed(1)} s)`,
        failures.length === 0 ? '  violations: 0 budget, 0 PDB, 0 do-not-disrupt, 0 churn (and none of the other kinds); every cross-check held' : `  FAILING SEEDS (${failures.length}):\n${failures.map((f) => `    ${f}`).join('\n')}`,
      ].join('\n'),
    );
    expect(failures).toEqual([]);
    expect(totals.days).toBeGreaterThanOrEqual(Math.min(DAYS, 1));
  }, Math.max(3_600_000, DAYS * 120_000));
});
