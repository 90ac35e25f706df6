/**
 * Runs YAML documents as one scenario through `skiff simulate`'s composition (`simulateScenario`: the real handlers,
 * the simulated cluster and EC2, DynamoDB on dynalite), for scenario tests that read the Result.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simulateScenario } from '../../shared/cli/simulate.js';
import type { SimulationResult } from '../../shared/sim/result.js';

/** Writes `docs` (YAML documents, any order) to a fresh folder as `scenario.yaml` and returns the folder. */
export function scenarioFolder(docs: readonly string[], prefix = 'skiff-scenario-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(join(dir, 'scenario.yaml'), docs.map((d) => d.trim()).join('\n---\n'));
  return dir;
}

/**
 * Simulates `docs` as one scenario with the given seed and returns the validated Result.
 * @throws {ValidationError} when a document is invalid (nothing is simulated)
 */
export async function simulateDocs(seed: number, ...docs: readonly string[]): Promise<SimulationResult> {
  return (await simulateScenario(scenarioFolder(docs), { seed })).result;
}
