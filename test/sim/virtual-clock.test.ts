import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../shared/sim/virtual-clock.js';

const T0 = Date.UTC(2026, 2, 2, 8, 0, 0);

/** Schedules a recorder at each `[offsetMs, label]` and returns the log the events append to (label@offset). */
function record(clock: VirtualClock, events: readonly (readonly [number, string])[]): string[] {
  const log: string[] = [];
  for (const [offset, label] of events) clock.at(T0 + offset, label, () => void log.push(`${label}@${clock.now() - T0}`));
  return log;
}

describe('VirtualClock', () => {
  describe('now', () => {
    it('returns the start time when nothing has run', () => {
      expect(new VirtualClock(T0).now()).toBe(T0);
    });
  });

  describe('at', () => {
    it('runs events in time order whatever order they were scheduled in', async () => {
      const clock = new VirtualClock(T0);
      const log = record(clock, [
        [3_000, 'c'],
        [1_000, 'a'],
        [2_000, 'b'],
      ]);
      await clock.runUntil(T0 + 10_000);
      expect(log).toEqual(['a@1000', 'b@2000', 'c@3000']);
    });

    it('runs events at the same instant in the order they were scheduled', async () => {
      const clock = new VirtualClock(T0);
      const labels = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh'];
      const log = record(
        clock,
        labels.map((l) => [500, l] as const),
      );
      await clock.runUntil(T0 + 500);
      expect(log).toEqual(labels.map((l) => `${l}@500`));
    });

    it('clamps a time in the past to now, after the events already due now', async () => {
      const clock = new VirtualClock(T0);
      await clock.runUntil(T0 + 5_000);
      const log = record(clock, [
        [5_000, 'due-now'],
        [-60_000, 'past'],
      ]);
      await clock.runUntil(T0 + 5_000);
      expect(log).toEqual(['due-now@5000', 'past@5000']);
      expect(clock.now()).toBe(T0 + 5_000);
    });

    it('never moves the clock backwards when an event is scheduled in the past', async () => {
      const clock = new VirtualClock(T0);
      await clock.runUntil(T0 + 1_000);
      let ranAt: number | undefined;
      clock.at(T0 - 1, 'past', () => {
        ranAt = clock.now();
      });
      await clock.runUntil(T0 + 1_000);
      expect(ranAt).toBe(T0 + 1_000);
    });
  });

  describe('after', () => {
    it('runs an event the given delay after the current time', async () => {
      const clock = new VirtualClock(T0);
      await clock.runUntil(T0 + 2_000);
      let ranAt: number | undefined;
      clock.after(750, 'delayed', () => {
        ranAt = clock.now();
      });
      await clock.runUntil(T0 + 10_000);
      expect(ranAt).toBe(T0 + 2_750);
    });
  });

  describe('runUntil', () => {
    it('stops before events later than the end and sets the clock to the end', async () => {
      const clock = new VirtualClock(T0);
      const log = record(clock, [
        [1_000, 'early'],
        [5_001, 'late'],
      ]);
      await clock.runUntil(T0 + 5_000);
      expect(log).toEqual(['early@1000']);
      expect(clock.now()).toBe(T0 + 5_000);
      expect(clock.pending).toBe(1);
    });

    it('runs an event scheduled exactly at the end', async () => {
      const clock = new VirtualClock(T0);
      const log = record(clock, [[5_000, 'edge']]);
      await clock.runUntil(T0 + 5_000);
      expect(log).toEqual(['edge@5000']);
      expect(clock.pending).toBe(0);
    });

    it('runs the remaining events on a later call', async () => {
      const clock = new VirtualClock(T0);
      const log = record(clock, [
        [1_000, 'a'],
        [8_000, 'b'],
      ]);
      await clock.runUntil(T0 + 5_000);
      await clock.runUntil(T0 + 10_000);
      expect(log).toEqual(['a@1000', 'b@8000']);
      expect(clock.now()).toBe(T0 + 10_000);
    });

    it('sets the clock to the end when no event is scheduled', async () => {
      const clock = new VirtualClock(T0);
      await clock.runUntil(T0 + 60_000);
      expect(clock.now()).toBe(T0 + 60_000);
    });

    it('does not move the clock backwards when the end is in the past', async () => {
      const clock = new VirtualClock(T0);
      await clock.runUntil(T0 + 60_000);
      await clock.runUntil(T0);
      expect(clock.now()).toBe(T0 + 60_000);
    });

    it('runs events scheduled by events within the same call when they fall before the end', async () => {
      const clock = new VirtualClock(T0);
      const log: string[] = [];
      clock.at(T0 + 1_000, 'parent', () => {
        log.push(`parent@${clock.now() - T0}`);
        clock.after(1_000, 'child', () => {
          log.push(`child@${clock.now() - T0}`);
          clock.after(0, 'grandchild', () => void log.push(`grandchild@${clock.now() - T0}`));
        });
        clock.after(10_000, 'too-late', () => void log.push('too-late'));
      });
      await clock.runUntil(T0 + 5_000);
      expect(log).toEqual(['parent@1000', 'child@2000', 'grandchild@2000']);
      expect(clock.pending).toBe(1);
    });

    it('runs a child scheduled for the same instant after the events already queued for that instant', async () => {
      const clock = new VirtualClock(T0);
      const log: string[] = [];
      clock.at(T0 + 1_000, 'a', () => {
        log.push('a');
        clock.at(T0 + 1_000, 'a-child', () => void log.push('a-child'));
      });
      clock.at(T0 + 1_000, 'b', () => void log.push('b'));
      await clock.runUntil(T0 + 1_000);
      expect(log).toEqual(['a', 'b', 'a-child']);
    });

    it('awaits an asynchronous event before running the next one', async () => {
      const clock = new VirtualClock(T0);
      const log: string[] = [];
      clock.at(T0 + 1_000, 'slow', async () => {
        log.push('slow:start');
        await new Promise((resolve) => setTimeout(resolve, 5));
        log.push('slow:end');
      });
      clock.at(T0 + 1_000, 'next', () => void log.push('next'));
      await clock.runUntil(T0 + 2_000);
      expect(log).toEqual(['slow:start', 'slow:end', 'next']);
    });

    it('shows the event its own scheduled time as now', async () => {
      const clock = new VirtualClock(T0);
      const seen: number[] = [];
      for (const offset of [30_000, 10_000, 20_000]) clock.at(T0 + offset, `e${offset}`, () => void seen.push(clock.now()));
      await clock.runUntil(T0 + 60_000);
      expect(seen).toEqual([T0 + 10_000, T0 + 20_000, T0 + 30_000]);
    });
  });

  describe('pending', () => {
    it('counts the events still waiting', async () => {
      const clock = new VirtualClock(T0);
      record(clock, [
        [1, 'a'],
        [2, 'b'],
        [3, 'c'],
      ]);
      expect(clock.pending).toBe(3);
      await clock.runUntil(T0 + 2);
      expect(clock.pending).toBe(1);
    });
  });

  describe('properties', () => {
    it('runs any set of scheduled times sorted by time, ties in scheduling order, each at its own time', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 1_000 }), { maxLength: 200 }), fc.integer({ min: 0, max: 1_000 }), async (offsets, end) => {
          const clock = new VirtualClock(T0);
          const ran: { index: number; offset: number; at: number }[] = [];
          offsets.forEach((offset, index) => clock.at(T0 + offset, `e${index}`, () => void ran.push({ index, offset, at: clock.now() - T0 })));
          await clock.runUntil(T0 + end);
          const expected = offsets
            .map((offset, index) => ({ index, offset, at: offset }))
            .filter((e) => e.offset <= end)
            .sort((a, b) => a.offset - b.offset || a.index - b.index);
          expect(ran).toEqual(expected);
          expect(clock.pending).toBe(offsets.length - expected.length);
          expect(clock.now()).toBe(T0 + end);
        }),
      );
    });
  });
});
