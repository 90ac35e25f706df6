import { describe, expect, it } from 'vitest';
import type { Toleration } from '../../../shared/core/api/kubernetes.js';
import { isDrainable, toleratesDisruptedTaint } from '../../../shared/core/disruption/drainable.js';

describe('toleratesDisruptedTaint (core utils/pod ToleratesDisruptedNoScheduleTaint)', () => {
  const cases: [string, Toleration[] | undefined, boolean][] = [
    ['no tolerations', undefined, false],
    ['every taint: Exists with no key', [{ operator: 'Exists' }], true],
    ['every NoSchedule taint: Exists, no key, effect NoSchedule', [{ operator: 'Exists', effect: 'NoSchedule' }], true],
    ['every NoExecute taint only', [{ operator: 'Exists', effect: 'NoExecute' }], false],
    ['the key with Exists', [{ key: 'karpenter.sh/disrupted', operator: 'Exists' }], true],
    ['the key with Equal and no value (the taint has none)', [{ key: 'karpenter.sh/disrupted', operator: 'Equal' }], true],
    ['the key with Equal and another value', [{ key: 'karpenter.sh/disrupted', operator: 'Equal', value: 'x' }], false],
    ['another key', [{ key: 'example.com/dedicated', operator: 'Exists' }], false],
    ['Equal with no key (matches nothing)', [{ operator: 'Equal' }], false],
  ];
  it.each(cases)('%s → %s', (_what, tolerations, expected) => {
    expect(toleratesDisruptedTaint(tolerations)).toBe(expected);
  });
});

describe('isDrainable (core utils/pod IsDrainable)', () => {
  it('drains an ordinary pod, not one that tolerates every taint, nor a mirror pod', () => {
    expect(isDrainable({ spec: {}, owner: 'ReplicaSet/web-abc' })).toBe(true);
    expect(isDrainable({ spec: { tolerations: [{ operator: 'Exists' }] }, owner: 'ReplicaSet/agent-abc' })).toBe(false);
    expect(isDrainable({ spec: {}, owner: 'Node/ip-10-0-0-1' })).toBe(false);
    expect(isDrainable({ spec: {}, owner: null })).toBe(true);
  });
});
