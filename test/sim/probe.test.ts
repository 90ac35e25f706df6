// The simulation probe (what bench/cost-over-time.ts reads): it samples the fleet without changing the run.
import { describe, expect, it } from 'vitest';
import { simulateScenario } from '../../shared/cli/simulate.js';
import type { DisruptionPassSample, FleetSample } from '../../shared/sim/engine.js';

describe('runSimulation', () => {
  describe('probe', () => {
    it('samples the fleet every interval and leaves the Result unchanged', async () => {
      const plain = await simulateScenario('examples/seed', { seed: 1, now: 0 });
      const samples: { atMs: number; fleet: number; instances: number; pods: number; pending: number }[] = [];
      const passes: DisruptionPassSample[] = [];
      const probed = await simulateScenario('examples/seed', {
        seed: 1,
        now: 0,
        probe: {
          everyMs: 10 * 60_000,
          sample: (s: FleetSample) => samples.push({ atMs: s.atMs, fleet: s.fleetHourlyUSD, instances: s.instances, pods: s.pods.length, pending: s.pods.filter((p) => !p.nodeName).length }),
          disruptionPass: (p) => passes.push(p),
        },
      });
      expect(JSON.stringify(probed.result)).toBe(JSON.stringify(plain.result));

      const start = Date.parse(plain.result.start);
      const end = Date.parse(plain.result.end);
      expect(samples.map((s) => s.atMs)).toEqual(Array.from({ length: Math.floor((end - start) / 600_000) + 1 }, (_, i) => start + i * 600_000));
      // At the start nothing runs and the pods are pending; at the end the fleet is the Result's final fleet.
      expect(samples[0]).toMatchObject({ fleet: 0, instances: 0 });
      expect(samples[0]!.pending).toBe(samples[0]!.pods);
      expect(samples.at(-1)!.fleet).toBeCloseTo(plain.result.cost.finalHourlyUSD, 3);
      expect(samples.some((s) => s.instances > 0 && s.pods > s.pending)).toBe(true);
      // One pass a minute from the first minute on, each timed.
      expect(passes.length).toBeGreaterThan((end - start) / 60_000 - 2);
      expect(passes.every((p) => p.wallMs >= 0 && p.instances >= 0)).toBe(true);
    }, 120_000);
  });
});
