/**
 * The invariants every random scenario run must keep, shared by the quick samples in `npm test` and the soaks.
 */
import { expect } from 'vitest';
import { simulateScenario } from '../../shared/cli/simulate.js';
import { ResultSchema } from '../../shared/sim/result-schema.js';
import type { ScenarioFaults } from '../../shared/sim/scenario.js';
import { randomScenario } from './random-scenario.js';

/**
 * The faults the fault property test and soak run every random scenario under: every message delivered twice, every
 * invocation doubled, a crash after 5 % of side effects, and 10 % of EC2 calls throttled.
 */
export const SOAK_FAULTS: Partial<ScenarioFaults> = { duplicateDelivery: 1, concurrentInvocations: 2, crashAfterSideEffect: 0.05, ec2Throttle: 0.1, dynamodbThrottle: 0.05, apiServerErrors: 0.05 };

/**
 * Runs the scenario for `seed` (under `faults`, if given) and checks the invariants: the Result validates, no
 * violation (no duplicate launch, no leaked instance after garbage collection, …), every satisfiable pod placed, one
 * successful launch per NodeClaim. Returns the run's size and cost for reporting.
 */
export async function checkRandomScenario(seed: number, faults?: Partial<ScenarioFaults>): Promise<{ pods: number; nodeClaims: number; cost: number }> {
  const { dir, orphans } = randomScenario(seed, faults ? { faults } : {});
  const { result } = await simulateScenario(dir, { seed });
  expect(ResultSchema.safeParse(result).success, `seed ${seed}: Result schema`).toBe(true);
  expect(result.violations, `seed ${seed}: violations`).toEqual({ budget: 0, pdb: 0, doNotDisrupt: 0, limits: 0, duplicateLaunches: 0, leakedInstances: 0, placement: 0 });
  // Only the deliberately unsatisfiable pods may be pending at the end.
  const pending = result.unschedulable.map((u) => u.pod).filter((p) => !orphans.some((o) => p.startsWith(o)));
  expect(pending, `seed ${seed}: satisfiable pods left pending`).toEqual([]);
  // One instance per successful launch attempt, one attempt per NodeClaim at most succeeding.
  const ok = result.launchAttempts.filter((a) => a.result === 'ok');
  expect(new Set(ok.map((a) => a.nodeClaim)).size, `seed ${seed}: one successful launch per NodeClaim`).toBe(ok.length);
  const withInstances = result.nodeClaims.filter((c) => c.instanceType !== null).length;
  // Without faults every launch is recorded; a crash between a launch and its record may leave an instance that
  // garbage collection terminated instead (counted by leakedInstances if it had not).
  if (faults) expect(withInstances, `seed ${seed}: NodeClaims with instances`).toBeLessThanOrEqual(ok.length);
  else expect(withInstances, `seed ${seed}: NodeClaims with instances`).toBe(ok.length);
  for (const u of result.unschedulable) expect(u.reason, `seed ${seed}: orphan explained`).toMatch(/node-type/);
  return { pods: result.pods.length, nodeClaims: ok.length, cost: result.cost.totalUSD };
}
