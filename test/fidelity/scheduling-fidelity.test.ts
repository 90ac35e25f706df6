/**
 * Scheduling fidelity (issue 3's acceptance suite): every case in ./cases.ts is simulated end to end (scenario →
 * `simulateScenario` → Result) and checked against what Karpenter v1 semantics say must happen. Every case also
 * requires `violations.placement === 0` (the observer's independent check of each binding) and exactly the number
 * of pending pods it declares (0 unless it says otherwise; every other pod must be running).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { simulateScenario } from '../../shared/cli/simulate.js';
import type { SimulationResult } from '../../shared/sim/result.js';
import { View, buildScenario } from './builder.js';
import { cases } from './cases.js';

const dir = mkdtempSync(join(tmpdir(), 'skiff-fidelity-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function simulate(name: string, yaml: string): Promise<SimulationResult> {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, yaml);
  return (await simulateScenario(file, { seed: 1 })).result;
}

// Cases are independent (each has its own embedded DynamoDB and virtual clock), so they run concurrently: a run
// spends much of its wall time waiting on the local DynamoDB, and the whole file stays well under a minute.
describe.concurrent('scheduling fidelity', () => {
  it('has at least 45 uniquely named cases', ({ expect }) => {
    expect(cases.length).toBeGreaterThanOrEqual(45);
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
  });

  for (const c of cases) {
    it(`${c.name}: ${c.expectation}`, async ({ expect }) => {
      const result = await simulate(c.name, buildScenario(c.scenario, c.name));
      const view = new View(result);
      try {
        expect(result.violations.placement, 'violations.placement').toBe(0);
        expect(view.pendingPods(), 'pods pending at the end').toHaveLength(c.pending ?? 0);
        c.expect(view);
      } catch (e) {
        if (e instanceof Error) e.message += `\n--- ${c.name} (${c.constraint}) ---\n${view.summary()}`;
        throw e;
      }
    });
  }
});
