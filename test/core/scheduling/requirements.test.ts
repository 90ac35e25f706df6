import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NodeSelectorRequirement, Operator } from '../../../shared/core/api/kubernetes.js';
import { Requirement } from '../../../shared/core/scheduling/requirement.js';
import { Requirements } from '../../../shared/core/scheduling/requirements.js';

const K = 'karpenter.k8s.aws/instance-generation';
const r = (operator: Operator, ...values: string[]): Requirement =>
  Requirement.from({ key: K, operator, ...(values.length ? { values } : {}) });

describe('Requirement', () => {
  describe('has', () => {
    // [requirement, value, expected]
    const table: [Requirement, string, boolean][] = [
      [r('In', '5', '6'), '5', true],
      [r('In', '5', '6'), '4', false],
      [r('NotIn', '5'), '5', false],
      [r('NotIn', '5'), '4', true],
      [r('Exists'), 'anything', true],
      [r('DoesNotExist'), 'anything', false],
      [r('Gt', '4'), '5', true],
      [r('Gt', '4'), '4', false],
      [r('Gt', '4'), 'abc', false],
      [r('Gte', '4'), '4', true],
      [r('Gte', '4'), '3', false],
      [r('Lt', '4'), '3', true],
      [r('Lt', '4'), '4', false],
      [r('Lte', '4'), '4', true],
      [r('Lte', '4'), '5', false],
    ];
    it.each(table)('%s has %s → %s', (req, value, expected) => {
      expect(req.has(value)).toBe(expected);
    });
  });

  describe('allowsAbsence', () => {
    it.each([
      ['In', false],
      ['NotIn', true],
      ['Exists', false],
      ['DoesNotExist', true],
      ['Gt', false],
      ['Lt', false],
    ] as const)('%s → %s', (op, expected) => {
      const values = op === 'In' || op === 'NotIn' || op === 'Gt' || op === 'Lt' ? ['4'] : [];
      expect(r(op, ...values).allowsAbsence()).toBe(expected);
    });
  });

  describe('intersection', () => {
    // [a, b, values allowed by the result among 3..7, operator of the result]
    const table: [Requirement, Requirement, string[], Operator][] = [
      [r('In', '4', '5', '6'), r('In', '5', '6', '7'), ['5', '6'], 'In'],
      [r('In', '4', '5'), r('NotIn', '5'), ['4'], 'In'],
      [r('NotIn', '4'), r('NotIn', '5'), ['3', '6', '7'], 'NotIn'],
      [r('Exists'), r('In', '5'), ['5'], 'In'],
      // Contradictions allow nothing, not even a missing label: they read as `In []`.
      [r('Exists'), r('DoesNotExist'), [], 'In'],
      [r('Gt', '4'), r('In', '3', '5', '7'), ['5', '7'], 'In'],
      [r('Gt', '4'), r('Lt', '7'), ['5', '6'], 'Gt'],
      [r('Gt', '5'), r('Lt', '6'), [], 'In'],
      [r('Gte', '5'), r('Lte', '5'), ['5'], 'Gt'],
      [r('Gt', '4'), r('NotIn', '6'), ['5', '7'], 'Gt'],
      [r('In', '5'), r('DoesNotExist'), [], 'In'],
      [r('NotIn', '5'), r('DoesNotExist'), [], 'DoesNotExist'],
    ];
    it.each(table)('%s ∩ %s', (a, b, allowed, op) => {
      const result = a.intersection(b);
      expect(['3', '4', '5', '6', '7'].filter((v) => result.has(v))).toEqual(allowed);
      expect(result.operator()).toBe(op);
    });

    it('keeps a contradiction apart from DoesNotExist: only the latter accepts a node without the label', () => {
      expect(r('In', '4').intersection(r('In', '5')).allowsAbsence()).toBe(false);
      expect(r('NotIn', '4').intersection(r('DoesNotExist')).allowsAbsence()).toBe(true);
    });

    it('throws when keys differ', () => {
      expect(() => r('In', '5').intersection(Requirement.in('other', ['5']))).toThrow(RangeError);
    });

    it('keeps the larger minValues', () => {
      const a = Requirement.from({ key: K, operator: 'In', values: ['5', '6', '7'], minValues: 2 });
      const b = Requirement.from({ key: K, operator: 'Exists', minValues: 1 });
      expect(a.intersection(b).minValues).toBe(2);
    });
  });

  describe('toNodeSelectorRequirements', () => {
    it('round-trips every operator', () => {
      for (const [op, values] of [
        ['In', ['6', '5']],
        ['NotIn', ['5']],
        ['Exists', []],
        ['DoesNotExist', []],
        ['Gt', ['4']],
        ['Lt', ['4']],
      ] as const) {
        const req = r(op, ...values);
        const back = Requirements.from(req.toNodeSelectorRequirements()).get(K);
        for (const v of ['3', '4', '5', '6', 'x']) expect(back.has(v)).toBe(req.has(v));
      }
    });

    it('normalises Gte and Lte to Gt and Lt', () => {
      expect(r('Gte', '5').toNodeSelectorRequirements()).toEqual([{ key: K, operator: 'Gt', values: ['4'] }]);
      expect(r('Lte', '5').toNodeSelectorRequirements()).toEqual([{ key: K, operator: 'Lt', values: ['6'] }]);
    });
  });
});

describe('Requirements', () => {
  const nodePool = Requirements.from([
    { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] },
    { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] },
    { key: K, operator: 'Gt', values: ['4'] },
  ]).intersect(Requirements.fromLabels({ 'workload-type': 'general' }));
  const wellKnown = new Set(['karpenter.sh/capacity-type', 'kubernetes.io/arch', K]);

  describe('compatible', () => {
    it('accepts a pod selecting a template label the NodePool sets', () => {
      expect(nodePool.compatible(Requirements.fromLabels({ 'workload-type': 'general' }), wellKnown)).toBeUndefined();
    });

    it('rejects a pod selecting a label no NodePool defines, naming the label', () => {
      const why = nodePool.compatible(Requirements.fromLabels({ 'node-type': 'high-memory' }), wellKnown);
      expect(why).toMatchObject({ kind: 'undefinedLabel', key: 'node-type' });
    });

    it('accepts an undefined well-known label', () => {
      expect(nodePool.compatible(Requirements.fromLabels({ 'kubernetes.io/arch': 'arm64' }), wellKnown)).toBeUndefined();
    });

    it('accepts an undefined custom label the pod only excludes', () => {
      const pod = Requirements.from([{ key: 'team', operator: 'NotIn', values: ['a'] }]);
      expect(nodePool.compatible(pod, wellKnown)).toBeUndefined();
    });

    it('rejects a value outside the NodePool requirement', () => {
      const why = nodePool.compatible(Requirements.fromLabels({ 'workload-type': 'gpu' }), wellKnown);
      expect(why).toMatchObject({ kind: 'noIntersection', key: 'workload-type' });
    });

    it('rejects a generation the Gt excludes', () => {
      const why = nodePool.compatible(Requirements.from([{ key: K, operator: 'In', values: ['4'] }]), wellKnown);
      expect(why).toMatchObject({ kind: 'noIntersection', key: K });
    });

    it('accepts NotIn against DoesNotExist (both allow absence)', () => {
      const a = Requirements.from([{ key: 'x', operator: 'DoesNotExist' }]);
      const b = Requirements.from([{ key: 'x', operator: 'NotIn', values: ['1'] }]);
      expect(a.compatible(b, new Set())).toBeUndefined();
    });
  });

  describe('isSatisfiedBy', () => {
    it('checks present labels and absent ones', () => {
      const reqs = Requirements.from([
        { key: 'a', operator: 'In', values: ['1'] },
        { key: 'b', operator: 'DoesNotExist' },
      ]);
      expect(reqs.isSatisfiedBy({ a: '1' })).toBe(true);
      expect(reqs.isSatisfiedBy({ a: '1', b: 'x' })).toBe(false);
      expect(reqs.isSatisfiedBy({})).toBe(false);
    });
  });

  describe('labels', () => {
    it('returns single-valued In requirements only', () => {
      expect(nodePool.labels()).toEqual({ 'workload-type': 'general' });
    });
  });

  describe('properties', () => {
    const values = fc.constantFrom('1', '2', '3', '4', '5', '6', 'a', 'b');
    const operator = fc.constantFrom<Operator>('In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt', 'Gte', 'Lte');
    const requirement: fc.Arbitrary<NodeSelectorRequirement> = fc
      .tuple(fc.constantFrom('k1', 'k2', 'k3'), operator, fc.uniqueArray(values, { minLength: 1, maxLength: 4 }), fc.integer({ min: 0, max: 7 }))
      .map(([key, op, vs, n]) => {
        if (op === 'Exists' || op === 'DoesNotExist') return { key, operator: op };
        if (op === 'Gt' || op === 'Lt' || op === 'Gte' || op === 'Lte') return { key, operator: op, values: [String(n)] };
        return { key, operator: op, values: vs };
      });
    const requirements = fc.array(requirement, { maxLength: 5 }).map((list) => Requirements.from(list));
    const probe = fc.record({ k1: fc.option(values, { nil: undefined }), k2: fc.option(values, { nil: undefined }), k3: fc.option(values, { nil: undefined }) }).map(
      (o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Record<string, string>,
    );

    it('intersection is commutative (same labels satisfy a∩b and b∩a)', () => {
      fc.assert(
        fc.property(requirements, requirements, probe, (a, b, labels) => {
          expect(a.intersect(b).isSatisfiedBy(labels)).toBe(b.intersect(a).isSatisfiedBy(labels));
        }),
      );
    });

    it('intersection is idempotent', () => {
      fc.assert(
        fc.property(requirements, probe, (a, labels) => {
          expect(a.intersect(a).isSatisfiedBy(labels)).toBe(a.isSatisfiedBy(labels));
          expect(a.intersect(a).toNodeSelectorRequirements()).toEqual(a.toNodeSelectorRequirements());
        }),
      );
    });

    it('intersection is exactly conjunction', () => {
      fc.assert(
        fc.property(requirements, requirements, probe, (a, b, labels) => {
          expect(a.intersect(b).isSatisfiedBy(labels)).toBe(a.isSatisfiedBy(labels) && b.isSatisfiedBy(labels));
        }),
      );
    });

    it('intersection never mutates its operands', () => {
      fc.assert(
        fc.property(requirements, requirements, (a, b) => {
          const before = [JSON.stringify(a.toNodeSelectorRequirements()), JSON.stringify(b.toNodeSelectorRequirements())];
          a.intersect(b);
          b.intersect(a);
          expect([JSON.stringify(a.toNodeSelectorRequirements()), JSON.stringify(b.toNodeSelectorRequirements())]).toEqual(before);
        }),
      );
    });

    it('serialising and parsing back keeps the meaning', () => {
      fc.assert(
        fc.property(requirements, probe, (a, labels) => {
          expect(Requirements.from(a.toNodeSelectorRequirements()).isSatisfiedBy(labels)).toBe(a.isSatisfiedBy(labels));
        }),
      );
    });

    it('labels satisfying both sides imply the sides intersect', () => {
      fc.assert(
        fc.property(requirements, requirements, probe, (a, b, labels) => {
          if (a.isSatisfiedBy(labels) && b.isSatisfiedBy(labels)) expect(a.intersects(b)).toBeUndefined();
        }),
      );
    });
  });
});
