import { describe, expect, it } from 'vitest';
import { budgetSchema, type Budget } from '../../../shared/core/api/nodepool.js';
import { BudgetScheduleError, budgetAllowance, budgetNodes, budgetWindows, isBudgetActive } from '../../../shared/core/disruption/budgets.js';

const budget = (b: Record<string, unknown>): Budget => budgetSchema.parse(b);

/** The seed article's budget set: 10 % always; 5 % from 01:00 UTC for 14 h; 20 % from 18:00 UTC for 2 h. */
const SEED_BUDGETS = [budget({ nodes: '10%' }), budget({ nodes: '5%', schedule: '0 1 * * *', duration: '14h' }), budget({ nodes: '20%', schedule: '0 18 * * *', duration: '2h' })];

const at = (hhmm: string): Date => new Date(`2026-03-02T${hhmm}:00Z`);

describe('the seed budget set over a simulated day', () => {
  // Hand-derived: 40 nodes → 10 % = 4, 5 % = 2, 20 % = 8; the smallest active budget wins, so the 20 % window
  // never raises the allowance above the always-active 10 %. 25 nodes → 10 % = 2.5 → 3, 5 % = 1.25 → 2.
  const table: [time: string, of40: number, of25: number, limiting: number][] = [
    ['00:00', 4, 3, 0],
    ['00:59', 4, 3, 0],
    ['01:00', 2, 2, 1],
    ['02:00', 2, 2, 1],
    ['03:00', 2, 2, 1],
    ['04:00', 2, 2, 1],
    ['05:00', 2, 2, 1],
    ['06:00', 2, 2, 1],
    ['07:00', 2, 2, 1],
    ['08:00', 2, 2, 1],
    ['09:00', 2, 2, 1],
    ['10:00', 2, 2, 1],
    ['11:00', 2, 2, 1],
    ['12:00', 2, 2, 1],
    ['13:00', 2, 2, 1],
    ['14:00', 2, 2, 1],
    ['14:59', 2, 2, 1],
    ['15:00', 4, 3, 0],
    ['16:00', 4, 3, 0],
    ['17:00', 4, 3, 0],
    ['18:00', 4, 3, 0],
    ['19:00', 4, 3, 0],
    ['20:00', 4, 3, 0],
    ['21:00', 4, 3, 0],
    ['22:00', 4, 3, 0],
    ['23:00', 4, 3, 0],
  ];
  it.each(table)('at %s UTC: %i of 40 nodes, %i of 25', (time, of40, of25, limiting) => {
    const forty = budgetAllowance(SEED_BUDGETS, 'Underutilized', at(time), 40, 0);
    expect(forty.allowed).toBe(of40);
    expect(forty.limitingBudget).toBe(limiting);
    expect(budgetAllowance(SEED_BUDGETS, 'Drifted', at(time), 25, 0).allowed).toBe(of25);
  });

  it('the 18:00 window is active but never the smallest, so it adds nothing', () => {
    expect(isBudgetActive(SEED_BUDGETS[2]!, at('18:00'))).toBe(true);
    expect(isBudgetActive(SEED_BUDGETS[2]!, at('19:59'))).toBe(true);
    expect(isBudgetActive(SEED_BUDGETS[2]!, at('20:00'))).toBe(false);
    // Without the always-on 10 %, the window's 20 % applies and outside it nothing limits.
    const windowsOnly = SEED_BUDGETS.slice(1);
    expect(budgetAllowance(windowsOnly, 'Empty', at('18:30'), 40, 0).allowed).toBe(8);
    expect(budgetAllowance(windowsOnly, 'Empty', at('16:00'), 40, 0).allowed).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('budgetAllowance', () => {
  it('subtracts nodes already disrupting or NotReady, floored at zero', () => {
    expect(budgetAllowance([budget({ nodes: '3' })], 'Empty', at('10:00'), 10, 2).remaining).toBe(1);
    expect(budgetAllowance([budget({ nodes: '3' })], 'Empty', at('10:00'), 10, 5).remaining).toBe(0);
  });

  it('applies a budget only to the reasons it lists; an empty list means every reason', () => {
    const budgets = [budget({ nodes: '0', reasons: ['Drifted'] }), budget({ nodes: '5', reasons: [] })];
    expect(budgetAllowance(budgets, 'Drifted', at('10:00'), 10, 0).allowed).toBe(0);
    expect(budgetAllowance(budgets, 'Underutilized', at('10:00'), 10, 0).allowed).toBe(5);
  });

  it('rounds percentages up and treats 0% as zero', () => {
    expect(budgetNodes('10%', 1)).toBe(1);
    expect(budgetNodes('10%', 0)).toBe(0);
    expect(budgetNodes('0%', 50)).toBe(0);
    expect(budgetNodes('100%', 7)).toBe(7);
    expect(budgetNodes('33%', 10)).toBe(4);
  });

  it('fails closed on a schedule that passes the CRD shape check but does not evaluate', () => {
    const bad = budget({ nodes: '50%', schedule: '99 * * * *', duration: '1h' });
    const allowance = budgetAllowance([budget({ nodes: '10' }), bad], 'Empty', at('10:00'), 10, 0);
    expect(allowance.allowed).toBe(0);
    expect(allowance.limitingBudget).toBe(1);
    expect(allowance.unparsable).toHaveLength(1);
    expect(() => isBudgetActive(bad, at('10:00'))).toThrow(BudgetScheduleError);
  });

  it('honours cron macros, weekdays and the day-of-month OR day-of-week rule', () => {
    const weekdays = budget({ nodes: '0', schedule: '0 9 * * 1-5', duration: '8h' });
    expect(isBudgetActive(weekdays, new Date('2026-03-02T12:00:00Z'))).toBe(true); // Monday
    expect(isBudgetActive(weekdays, new Date('2026-03-01T12:00:00Z'))).toBe(false); // Sunday
    const daily = budget({ nodes: '0', schedule: '@daily', duration: '30m' });
    expect(isBudgetActive(daily, new Date('2026-03-02T00:29:00Z'))).toBe(true);
    expect(isBudgetActive(daily, new Date('2026-03-02T00:30:00Z'))).toBe(false);
    // 1st of the month OR a Monday (robfig/cron and Vixie cron semantics).
    const firstOrMonday = budget({ nodes: '0', schedule: '0 0 1 * 1', duration: '1h' });
    expect(isBudgetActive(firstOrMonday, new Date('2026-04-01T00:10:00Z'))).toBe(true); // Wednesday the 1st
    expect(isBudgetActive(firstOrMonday, new Date('2026-03-09T00:10:00Z'))).toBe(true); // Monday the 9th
    expect(isBudgetActive(firstOrMonday, new Date('2026-03-10T00:10:00Z'))).toBe(false);
  });
});

describe('budgetWindows', () => {
  it('lists the day’s windows clipped to the range, merging overlapping firings', () => {
    const day = [new Date('2026-03-02T00:00:00Z'), new Date('2026-03-03T00:00:00Z')] as const;
    expect(budgetWindows(SEED_BUDGETS[1]!, ...day).map((w) => [w.start.toISOString(), w.end.toISOString()])).toEqual([['2026-03-02T01:00:00.000Z', '2026-03-02T15:00:00.000Z']]);
    // A window that started the previous evening is clipped at the start of the range.
    const overnight = budget({ nodes: '1', schedule: '0 22 * * *', duration: '4h' });
    expect(budgetWindows(overnight, ...day).map((w) => [w.start.toISOString(), w.end.toISOString()])).toEqual([
      ['2026-03-02T00:00:00.000Z', '2026-03-02T02:00:00.000Z'],
      ['2026-03-02T22:00:00.000Z', '2026-03-03T00:00:00.000Z'],
    ]);
    const everyHourForTwo = budget({ nodes: '1', schedule: '0 * * * *', duration: '2h' });
    expect(budgetWindows(everyHourForTwo, ...day)).toEqual([{ start: day[0], end: day[1] }]);
    expect(budgetWindows(SEED_BUDGETS[0]!, ...day)).toEqual([{ start: day[0], end: day[1] }]);
  });
});
