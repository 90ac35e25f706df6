import { describe, expect, it } from 'vitest';
import { createProgressReporter, PROGRESS_DELAY_MS } from '../../shared/cli/report/progress-reporter.js';

/** A progress reporter on a recorded terminal, with a wall clock the test moves by hand. */
function harness(enabled: boolean) {
  let wall = 1_000;
  let text = '';
  const progress = createProgressReporter({ enabled, write: (t) => (text += t), columns: 100, now: () => wall });
  return {
    progress,
    advance: (ms: number) => (wall += ms),
    text: () => text,
  };
}

// eslint-disable-next-line no-control-regex
const visible = (s: string): string => s.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '');

describe('createProgressReporter', () => {
  describe('update', () => {
    it('draws nothing while the run is younger than the delay', () => {
      const h = harness(true);
      h.progress.update(0.1);
      h.advance(PROGRESS_DELAY_MS - 1);
      h.progress.update(0.2);
      expect(h.text()).toBe('');
      expect(h.progress.shown).toBe(false);
      h.progress.stop();
    });

    it('draws a bar with the fraction of virtual time done once the delay has passed', () => {
      const h = harness(true);
      h.advance(PROGRESS_DELAY_MS);
      h.progress.update(0.25);
      expect(h.progress.shown).toBe(true);
      expect(visible(h.text())).toMatch(/simulating .* 25% of virtual time \| 2 s elapsed/);
      h.progress.stop();
    });

    it('clamps fractions to 0–100 %', () => {
      const h = harness(true);
      h.advance(PROGRESS_DELAY_MS);
      h.progress.update(7);
      expect(visible(h.text())).toContain(' 100% of virtual time');
      h.progress.stop();
    });

    it('never writes when disabled (not a terminal, or --json)', () => {
      const h = harness(false);
      h.advance(10 * PROGRESS_DELAY_MS);
      h.progress.update(0.5);
      h.progress.stop();
      expect(h.text()).toBe('');
      expect(h.progress.shown).toBe(false);
    });
  });

  describe('stop', () => {
    it('clears the bar’s line and ignores later updates', () => {
      const h = harness(true);
      h.advance(PROGRESS_DELAY_MS);
      h.progress.update(0.5);
      h.progress.stop();
      const afterStop = h.text();
      expect(afterStop.endsWith('\u001b[2K')).toBe(true);
      h.advance(PROGRESS_DELAY_MS);
      h.progress.update(0.9);
      h.progress.stop();
      expect(h.text()).toBe(afterStop);
    });

    it('writes nothing when no bar was drawn', () => {
      const h = harness(true);
      h.progress.update(0.5);
      h.progress.stop();
      expect(h.text()).toBe('');
    });
  });
});
