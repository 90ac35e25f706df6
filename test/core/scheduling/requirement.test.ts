import { describe, expect, it } from 'vitest';
import type { NodeSelectorRequirement } from '../../../shared/core/api/kubernetes.js';
import { Requirement } from '../../../shared/core/scheduling/requirement.js';

const r = (operator: NodeSelectorRequirement['operator'], values?: string[]) => Requirement.from({ key: 'team', operator, ...(values ? { values } : {}) });

describe('Requirement', () => {
  describe('any', () => {
    // Truth table: the value generated for a custom label must satisfy the requirement (core Requirement.Any()).
    const table: readonly [string, Requirement, string | undefined][] = [
      ['In [b a] → smallest in sort order', r('In', ['b', 'a']), 'a'],
      ['In [10 9] → smallest integer', r('In', ['10', '9']), '9'],
      ['Exists → 0', r('Exists'), '0'],
      ['NotIn [0 1 3] → 2', r('NotIn', ['0', '1', '3']), '2'],
      ['NotIn [x] → 0', r('NotIn', ['x']), '0'],
      ['Gt 300 → 301', r('Gt', ['300']), '301'],
      ['Gte 7 → 7', r('Gte', ['7']), '7'],
      ['Lt 3 → 0', r('Lt', ['3']), '0'],
      ['Lte 0 → 0', r('Lte', ['0']), '0'],
      ['Lt 0 → none (no non-negative integer)', r('Lt', ['0']), undefined],
      ['Gt -5 → 0 (never negative)', r('Gt', ['-5']), '0'],
      ['DoesNotExist → none', r('DoesNotExist'), undefined],
      ['Gt 4 ∩ Lt 6 ∩ NotIn [5] → none', r('Gt', ['4']).intersection(r('Lt', ['6'])).intersection(r('NotIn', ['5'])), undefined],
      ['Gte 10 ∩ Lte 12 ∩ NotIn [10] → 11', r('Gte', ['10']).intersection(r('Lte', ['12'])).intersection(r('NotIn', ['10'])), '11'],
    ];
    for (const [name, requirement, expected] of table) {
      it(name, () => {
        expect(requirement.any()).toBe(expected);
        if (expected !== undefined) expect(requirement.has(expected)).toBe(true);
      });
    }
  });
});
