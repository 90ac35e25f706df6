// Digests of `skiff simulate --json` Results for the examples, the regression scenarios and N seeded soak days, so a
// restructuring can prove it changed no behaviour: run it before and after and diff the two files.
//
//   npx tsx scripts/result-digests.ts > before.txt            # examples + regressions + 200 soak seeds
//   SKIFF_DIGEST_SEEDS=20 npx tsx scripts/result-digests.ts   # fewer soak seeds
//   SKIFF_DIGEST_ONLY=soak npx tsx scripts/result-digests.ts  # only the soak seeds (or: examples)
//
// One line per run: `<name> <sha256 of the Result JSON> <cost USD> <disruptions>`; the hash covers every byte of the
// Result (it holds no wall-clock figures), the other two columns make a difference readable at a glance.
import { createHash } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { simulateScenario } from '../shared/cli/simulate.js';
import { randomDisruptionScenario } from '../test/support/random-disruption-scenario.js';

/** Soak seeds to digest, starting at the soak's own first seed (test/soak/disruption-scenarios.test.ts). */
const SEEDS = Number(process.env.SKIFF_DIGEST_SEEDS ?? 200);
const FIRST_SEED = Number(process.env.SKIFF_DIGEST_FIRST_SEED ?? 10_000);
const ONLY = process.env.SKIFF_DIGEST_ONLY;

async function digest(name: string, path: string, seed: number): Promise<void> {
  const { result } = await simulateScenario(path, { seed });
  const json = JSON.stringify(result);
  const hash = createHash('sha256').update(json).digest('hex').slice(0, 16);
  console.log(`${name} ${hash} ${result.cost.totalUSD.toFixed(4)} ${result.disruptions.length}`);
}

if (ONLY !== 'soak') {
  await digest('example:seed', 'examples/seed', 1);
  await digest('example:alibaba-trace', 'examples/alibaba-trace', 1);
  await digest('scenario:report-day', 'test/scenarios/report-day.yaml', 1);
  for (const f of readdirSync('test/scenarios/disruption-regressions').sort()) {
    await digest(`regression:${f}`, join('test/scenarios/disruption-regressions', f), 1);
  }
}
if (ONLY !== 'examples') {
  for (let seed = FIRST_SEED; seed < FIRST_SEED + SEEDS; seed++) {
    const scenario = randomDisruptionScenario(seed, { days: 1 });
    try {
      await digest(`soak:${seed}`, scenario.dir, seed);
    } finally {
      rmSync(scenario.dir, { recursive: true, force: true });
    }
  }
}
