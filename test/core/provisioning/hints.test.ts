import { describe, expect, it } from 'vitest';
import type { Taint, Toleration } from '../../../shared/core/api/kubernetes.js';
import { HINT_MARK } from '../../../shared/core/provisioning/diagnosis.js';
import { closestNearMiss, isNearMiss, labelKeyHint, labelValueHint, nearValue, podHints, tolerationHint } from '../../../shared/core/provisioning/hints.js';
import { catalogue, pod, template } from '../../support/builders.js';

const GPU_TAINT: Taint = { key: 'nvidia.com/gpu', effect: 'NoSchedule' };
const BATCH_TAINT: Taint = { key: 'workload-type', value: 'batch', effect: 'NoSchedule' };

describe('hints', () => {
  describe('isNearMiss', () => {
    it.each([
      ['node-typ', 'node-type', true],
      ['nodetype', 'node-type', true],
      ['high-memry', 'high-memory', true],
      ['nvidia.com/gpus', 'nvidia.com/gpu', true],
      ['Node-Type', 'node-type', true],
      ['karpenter.k8s.aws/instance-categroy', 'karpenter.k8s.aws/instance-category', true],
      ['node-type', 'node-type', false],
      ['node-type', 'workload-type', false],
      ['g', 'c', false],
      ['ab', 'cd', false],
      ['gpu', 'cpu', true],
      ['zone', 'arch', false],
    ])('%s → %s: %s', (typed, candidate, expected) => {
      expect(isNearMiss(typed, candidate)).toBe(expected);
    });

    it('allows at most max(2, 30 % of the typed length) edits', () => {
      const typed = 'abcdefghijklmnopqrst'; // 20 characters: up to 6 edits
      expect(isNearMiss(typed, 'abcdefghijklmnXXXXXX')).toBe(true);
      expect(isNearMiss(typed, 'abcdefghijklmXXXXXXX')).toBe(false);
    });
  });

  describe('closestNearMiss', () => {
    it('picks the closest candidate within reach', () => {
      expect(closestNearMiss('node-typ', ['workload-type', 'node-type', 'node-types'])).toBe('node-type');
    });

    it('prefers a candidate that differs only in letter case', () => {
      expect(closestNearMiss('High-Memory', ['high-memory', 'High-Memor'])).toBe('high-memory');
    });

    it('suggests nothing when nothing is close, or the word itself is a candidate', () => {
      expect(closestNearMiss('node-type', ['workload-type', 'kubernetes.io/arch'])).toBeUndefined();
      expect(closestNearMiss('node-type', ['node-type'])).toBeUndefined();
      expect(closestNearMiss('x', [])).toBeUndefined();
    });

    it('does not depend on the order of the candidates', () => {
      expect(closestNearMiss('abcd-x', ['abcd-y', 'abcd-z'])).toBe(closestNearMiss('abcd-x', ['abcd-z', 'abcd-y']));
    });
  });

  describe('labelKeyHint', () => {
    const defined = new Map([
      ['node-type', ['memory', 'general']],
      ['workload-type', ['general']],
    ]);

    it('suggests a key NodePools define, naming them', () => {
      expect(labelKeyHint('node-typ', defined)).toEqual({
        kind: 'labelKey',
        typed: 'node-typ',
        suggestion: 'node-type',
        nodePools: ['general', 'memory'],
        message: 'did you mean the label node-type? The pod requires node-typ, which no NodePool defines; NodePools general and memory define node-type',
      });
    });

    it('suggests a well-known label', () => {
      const hint = labelKeyHint('karpenter.k8s.aws/instance-categroy', defined);
      expect(hint).toMatchObject({ suggestion: 'karpenter.k8s.aws/instance-category', nodePools: [] });
      expect(hint?.message).toContain('is a well-known label Skiff sets on nodes');
    });

    it('says nothing for a key that is defined or well-known, or far from everything', () => {
      expect(labelKeyHint('node-type', defined)).toBeUndefined();
      expect(labelKeyHint('kubernetes.io/arch', defined)).toBeUndefined();
      expect(labelKeyHint('team', defined)).toBeUndefined();
    });
  });

  describe('nearValue', () => {
    it.each([
      ['karpenter.sh/capacity-type', 'Spot', ['on-demand', 'spot'], 'spot'],
      ['karpenter.sh/capacity-type', 'on_demand', ['on-demand', 'spot'], 'on-demand'],
      ['kubernetes.io/arch', 'x86_64', ['amd64', 'arm64'], 'amd64'],
      ['kubernetes.io/arch', 'aarch64', ['amd64', 'arm64'], 'arm64'],
      ['node.kubernetes.io/instance-type', 'm5.larg', ['c5.large', 'm5.large', 'm5.xlarge'], 'm5.large'],
    ])('%s In [%s] means %s → %s', (key, typed, candidates, expected) => {
      expect(nearValue(key, typed, candidates)).toBe(expected);
    });

    it('suggests nothing for another value of a closed set, a real instance type or an alias nothing offers', () => {
      expect(nearValue('karpenter.sh/capacity-type', 'reserved', ['on-demand', 'spot'])).toBeUndefined();
      expect(nearValue('node.kubernetes.io/instance-type', 'm5.xlarge', ['m5.large'])).toBeUndefined();
      expect(nearValue('kubernetes.io/arch', 'x86_64', ['arm64'])).toBeUndefined();
    });
  });

  describe('labelValueHint', () => {
    it('suggests a value a NodePool offers (node-type In [high-memry] vs node-type=high-memory)', () => {
      expect(labelValueHint('node-type', 'high-memry', new Map([['high-memory', ['memory']]]))).toMatchObject({
        kind: 'labelValue',
        typed: 'high-memry',
        suggestion: 'high-memory',
        nodePools: ['memory'],
        message: expect.stringMatching(/^did you mean node-type=high-memory\? .*NodePool memory offers node-type=high-memory$/),
      });
    });

    it('treats another value of a closed well-known set as a choice, not a typo (arm64 is not a misspelt amd64)', () => {
      expect(labelValueHint('kubernetes.io/arch', 'arm64', new Map([['amd64', ['general']]]))).toBeUndefined();
      expect(labelValueHint('karpenter.sh/capacity-type', 'spot', new Map([['on-demand', ['general']]]))).toBeUndefined();
      // A real typo of such a value still gets its suggestion.
      expect(labelValueHint('kubernetes.io/arch', 'amd46', new Map([['amd64', ['general']]]))?.suggestion).toBe('amd64');
    });

    it("suggests the value an alias names (uname's x86_64 is Kubernetes' amd64)", () => {
      expect(labelValueHint('kubernetes.io/arch', 'x86_64', new Map([['amd64', ['general']], ['arm64', ['graviton']]]))?.message).toMatch(/^did you mean kubernetes\.io\/arch=amd64\? /);
    });

    it('says nothing for an offered value or a distant one', () => {
      const offered = new Map([['high-memory', ['memory']]]);
      expect(labelValueHint('node-type', 'high-memory', offered)).toBeUndefined();
      expect(labelValueHint('node-type', 'gpu', offered)).toBeUndefined();
    });
  });

  describe('tolerationHint', () => {
    it.each<[string, Toleration, string, string]>([
      ['a near-miss key', { key: 'nvidia.com/gpus', operator: 'Exists', effect: 'NoSchedule' }, 'tolerationKey', 'nvidia.com/gpu'],
      ['a near-miss key without an effect', { key: 'nvidia.com/gpus', operator: 'Exists' }, 'tolerationKey', 'nvidia.com/gpu'],
    ])('suggests the taint key for %s', (_, toleration, kind, suggestion) => {
      expect(tolerationHint(GPU_TAINT, [toleration], 'gpu')).toMatchObject({ kind, typed: 'nvidia.com/gpus', suggestion, nodePools: ['gpu'], taint: GPU_TAINT });
    });

    it('suggests the taint value for a near-miss value on the right key', () => {
      const hint = tolerationHint(BATCH_TAINT, [{ key: 'workload-type', operator: 'Equal', value: 'bach', effect: 'NoSchedule' }], 'batch');
      expect(hint).toMatchObject({ kind: 'tolerationValue', typed: 'bach', suggestion: 'batch' });
      expect(hint?.message).toBe("did you mean the value batch? The pod tolerates workload-type=bach, but NodePool batch's taint is workload-type=batch:NoSchedule");
    });

    it('suggests the taint effect when key and value match but the effect does not', () => {
      const hint = tolerationHint(BATCH_TAINT, [{ key: 'workload-type', operator: 'Equal', value: 'batch', effect: 'NoExecute' }], 'batch');
      expect(hint).toMatchObject({ kind: 'tolerationEffect', typed: 'NoExecute', suggestion: 'NoSchedule' });
    });

    it('says nothing for a toleration of another value on the same key (it is meant for another NodePool)', () => {
      expect(tolerationHint({ key: 'workload-type', value: 'gpu', effect: 'NoSchedule' }, [{ key: 'workload-type', operator: 'Equal', value: 'batch', effect: 'NoSchedule' }], 'gpu')).toBeUndefined();
    });

    it('says nothing when the taint is tolerated or no toleration is close', () => {
      expect(tolerationHint(GPU_TAINT, [{ key: 'nvidia.com/gpu', operator: 'Exists' }], 'gpu')).toBeUndefined();
      expect(tolerationHint(GPU_TAINT, [{ key: 'example.com/dedicated', operator: 'Exists' }], 'gpu')).toBeUndefined();
      expect(tolerationHint(GPU_TAINT, [], 'gpu')).toBeUndefined();
    });
  });

  describe('podHints', () => {
    const general = template('general', catalogue(), { requirements: [{ key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] }], labels: { 'workload-type': 'general' } });
    const memory = template('memory', catalogue(), { labels: { 'node-type': 'high-memory' } });
    const gpu = template('gpu', catalogue(), { labels: { 'workload-type': 'gpu' }, taints: [GPU_TAINT] });

    it('finds a near-miss key, value and toleration for one pod, once each', () => {
      const p = pod('a', { nodeSelector: { 'workload-typ': 'general', 'node-type': 'high-memry' }, tolerations: [{ key: 'nvidia.com/gpus', operator: 'Exists' }] });
      expect(podHints(p, [general, memory, gpu]).map((h) => [h.kind, h.suggestion])).toEqual([
        ['labelValue', 'high-memory'],
        ['labelKey', 'workload-type'],
        ['tolerationKey', 'nvidia.com/gpu'],
      ]);
    });

    it('suggests values of well-known labels from the instance types (m5.larg → m5.large)', () => {
      const hints = podHints(pod('a', { nodeSelector: { 'node.kubernetes.io/instance-type': 'm5.larg' } }), [general]);
      expect(hints.map((h) => h.suggestion)).toEqual(['m5.large']);
    });

    it('says nothing for the seed pitfall (node-type is far from every defined key)', () => {
      expect(podHints(pod('report', { nodeSelector: { 'node-type': 'high-memory' } }), [general, gpu])).toEqual([]);
    });

    it('says nothing about values when one of the allowed values is offered, or about NotIn', () => {
      const p = pod('a', {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                {
                  matchExpressions: [
                    { key: 'node-type', operator: 'In', values: ['high-memory', 'high-memry'] },
                    { key: 'workload-typ', operator: 'NotIn', values: ['x'] },
                  ],
                },
              ],
            },
          },
        },
      });
      expect(podHints(p, [general, memory])).toEqual([]);
    });

    it('writes messages that never contain the hint separator', () => {
      const p = pod('a', { nodeSelector: { 'workload-typ': 'general', 'node-type': 'high-memry' }, tolerations: [{ key: 'nvidia.com/gpus', operator: 'Exists' }] });
      for (const h of podHints(p, [general, memory, gpu])) expect(h.message).not.toContain(HINT_MARK);
    });
  });
});
