import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  DurationError,
  durationSecondsSchema,
  formatDuration,
  isDurationError,
  parseDuration,
  parseNillableDuration,
} from '../../../shared/core/api/duration.js';

describe('duration', () => {
  describe('parseDuration', () => {
    it.each([
      ['720h', 2_592_000],
      ['5m', 300],
      ['30s', 30],
      ['1h30m', 5400],
      ['0s', 0],
      ['0', 0],
      ['500ms', 0.5],
      ['1.5h', 5400],
      ['1h0m0s', 3600],
      ['2h45m30s', 9930],
      ['100us', 0.0001],
      ['1µs', 0.000001],
      ['250ns', 0.00000025],
    ])('reads %s as %d seconds', (text, seconds) => {
      expect(parseDuration(text)).toBe(seconds);
    });

    it('reads a negative offset when negatives are allowed', () => {
      expect(parseDuration('-2h', { allowNegative: true })).toBe(-7200);
      expect(parseDuration('-1h30m', { allowNegative: true })).toBe(-5400);
    });

    it('rejects a negative duration when negatives are not allowed', () => {
      expect(() => parseDuration('-2h')).toThrow(/must not be negative/);
    });

    it.each(['', '5', 'h', '1x', '1h 30m', '1hh', 'Never', '1d', '-', '.h'])('rejects %j', (text) => {
      expect(() => parseDuration(text)).toThrow(DurationError);
    });

    it('throws an error that the guard recognises', () => {
      try {
        parseDuration('soon');
        expect.unreachable();
      } catch (e) {
        expect(isDurationError(e)).toBe(true);
        expect((e as DurationError).duration).toBe('soon');
      }
    });
  });

  describe('parseNillableDuration', () => {
    it('reads Never as null', () => {
      expect(parseNillableDuration('Never')).toBeNull();
    });
    it('reads a duration as seconds', () => {
      expect(parseNillableDuration('720h')).toBe(2_592_000);
    });
  });

  describe('formatDuration', () => {
    it.each([
      [0, '0s'],
      [0.5, '500ms'],
      [30, '30s'],
      [90, '1m30s'],
      [5400, '1h30m'],
      [3605, '1h5s'],
      [2_592_000, '720h'],
      [-7200, '-2h'],
      [1.25, '1.25s'],
    ])('formats %d seconds as %s', (seconds, text) => {
      expect(formatDuration(seconds)).toBe(text);
    });

    it('rejects a non-finite number', () => {
      expect(() => formatDuration(Number.POSITIVE_INFINITY)).toThrow(DurationError);
    });

    it('round-trips through parseDuration for any whole number of milliseconds', () => {
      fc.assert(
        fc.property(fc.integer({ min: -10_000_000_000, max: 10_000_000_000 }), (ms) => {
          const seconds = ms / 1000;
          expect(parseDuration(formatDuration(seconds), { allowNegative: true })).toBe(seconds);
        }),
      );
    });

    it('agrees with the h/m/s arithmetic for any XhYmZs', () => {
      fc.assert(
        fc.property(fc.nat(10_000), fc.nat(59), fc.nat(59), (h, m, s) => {
          expect(parseDuration(`${h}h${m}m${s}s`)).toBe(h * 3600 + m * 60 + s);
        }),
      );
    });
  });

  describe('durationSecondsSchema', () => {
    it('outputs seconds for a duration string', () => {
      expect(durationSecondsSchema().parse('30m')).toBe(1800);
    });

    it('accepts the number 0', () => {
      expect(durationSecondsSchema().parse(0)).toBe(0);
    });

    it('rejects a bare non-zero number with a hint about units', () => {
      const result = durationSecondsSchema().safeParse(90);
      expect(result.success).toBe(false);
      expect(result.error?.issues[0]?.message).toMatch(/needs a unit/);
    });

    it('rejects zero when positive is required, written "0s" or as a bare 0', () => {
      expect(durationSecondsSchema({ positive: true }).safeParse('0s').success).toBe(false);
      const bare = durationSecondsSchema({ positive: true }).safeParse(0);
      expect(bare.success).toBe(false);
      expect(bare.error?.issues[0]?.message).toBe('0: must be greater than zero');
      expect(durationSecondsSchema({ minSeconds: 60 }).safeParse(0).success).toBe(false);
    });

    it('accepts a negative offset only when allowed', () => {
      expect(durationSecondsSchema().safeParse('-2h').success).toBe(false);
      expect(durationSecondsSchema({ allowNegative: true }).parse('-2h')).toBe(-7200);
    });

    it('composes inside an object schema', () => {
      const schema = z.object({ at: durationSecondsSchema() });
      expect(schema.parse({ at: '1h30m' })).toEqual({ at: 5400 });
    });
  });
});

describe('Go duration range', () => {
  it('refuses durations longer than Go time.Duration holds, in the parser and in the NodePool schema', async () => {
    const { parseDuration, MAX_DURATION_SECONDS } = await import('../../../shared/core/api/duration.js');
    const { nodePoolSchema } = await import('../../../shared/core/api/nodepool.js');
    expect(parseDuration('2562047h')).toBe(2562047 * 3600);
    expect(2562047 * 3600).toBeLessThan(MAX_DURATION_SECONDS);
    expect(() => parseDuration('2562048h')).toThrow(/out of range/);
    const pool = (expireAfter: string) =>
      nodePoolSchema.safeParse({
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name: 'p' },
        spec: { template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'd' }, expireAfter, requirements: [] } } },
      });
    expect(pool('720h').success).toBe(true);
    const huge = pool('99999999999999999999h');
    expect(huge.success).toBe(false);
    expect(huge.error?.issues.map((i) => i.message)).toEqual(['duration is out of range (Go durations stop at 2562047h)']);
  });
});
