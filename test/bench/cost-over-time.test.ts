import { describe, expect, it } from 'vitest';
import { passTimes, stepFigures, type CostSample } from '../../bench/cost-over-time.js';

const sample = (minute: number, ratio: number): CostSample => ({ minute, fleetUSD: ratio * 10, boundUSD: 10, ratio, pods: 1, instances: 1 });

describe('cost over time (B5)', () => {
  describe('stepFigures', () => {
    it('reads the ratio before and after each step and when it settles within 1.25× and 1.10× for good', () => {
      const ratios = [0, 1.05, 1.05, 1.2, 1.6, 1.3, 1.2, 1.3, 1.15, 1.08];
      const samples = ratios.map((r, i) => sample(i, r));
      expect(stepFigures(samples, [4])).toEqual([
        { atMinute: 0, before: null, after: 1.2, minutesTo125: 0, minutesTo110: null },
        // 1.6, 1.3, 1.2 (within 1.25 but not for good), 1.3, then 1.15 from minute 8 on; 1.08 at minute 9.
        { atMinute: 4, before: 1.2, after: 1.08, minutesTo125: 4, minutesTo110: 5 },
      ]);
    });

    it('says never when the ratio ends above the limit', () => {
      expect(stepFigures([sample(0, 1), sample(1, 1.4)], [1])[1]).toMatchObject({ before: 1, after: 1.4, minutesTo125: null, minutesTo110: null });
    });
  });

  describe('passTimes', () => {
    it('buckets disruption passes by fleet size and takes p50 and p99 of each', () => {
      const passes = [
        ...Array.from({ length: 100 }, (_, i) => ({ atMs: i, wallMs: i + 1, instances: 150 })),
        { atMs: 0, wallMs: 4000, instances: 1500 },
      ];
      expect(passTimes(passes)).toEqual([
        { upToNodes: 200, passes: 100, p50Ms: 50.5, p99Ms: expect.closeTo(99.01, 5) },
        { upToNodes: 2000, passes: 1, p50Ms: 4000, p99Ms: 4000 },
      ]);
    });
  });
});
