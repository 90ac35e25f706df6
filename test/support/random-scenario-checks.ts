/**
 * The invariants every random scenario run must keep, shared by the quick sample in `npm test` and the soak.
 */
import { expect } from 'vitest';
import { simulateScenario } from '../../shared/cli/simulate.js';
import { ResultSchema } from '../../shared/sim/result-schema.js';
import { randomScenario } from './random-scenario.js';

/** Runs the scenario for `seed` and checks the invariants. Returns the run's cost for reporting. */
export async function checkRandomScenario(seed: number): Promise<{ pods: number; nodeClaims: number; cost: number }> {
  const { dir, orphans } = randomScenario(seed);
  const { result } = await simulateScenario(dir, { seed });
  expect(ResultSchema.safeParse(result).success, `seed ${seed}: Result schema`).toBe(true);
  expect(result.violations, `seed ${seed}: violations`).toEqual({ budget: 0, pdb: 0, doNotDisrupt: 0, limits: 0, duplicateLaunches: 0, leakedInstances: 0, placement: 0 });
  // Only the deliberately unsatisfiable pods may be pending at the end.
  const pending = result.unschedulable.map((u) => u.pod).filter((p) => !orphans.some((o) => p.startsWith(o)));
  expect(pending, `seed ${seed}: satisfiable pods left pending`).toEqual([]);
  // One instance per successful launch attempt, one attempt per NodeClaim at most succeeding.
  const ok = result.launchAttempts.filter((a) => a.result === 'ok');
  expect(new Set(ok.map((a) => a.nodeClaim)).size, `seed ${seed}: one successful launch per NodeClaim`).toBe(ok.length);
  expect(result.nodeClaims.filter((c) => c.instanceType !== null).length, `seed ${seed}: NodeClaims with instances`).toBe(ok.length);
  for (const u of result.unschedulable) expect(u.reason, `seed ${seed}: orphan explained`).toMatch(/node-type/);
  return { pods: result.pods.length, nodeClaims: ok.length, cost: result.cost.totalUSD };
}
