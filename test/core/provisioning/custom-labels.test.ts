import { describe, expect, it } from 'vitest';
import { resolveCustomLabels } from '../../../shared/core/provisioning/custom-labels.js';
import { Requirements } from '../../../shared/core/scheduling/requirements.js';

describe('resolveCustomLabels', () => {
  it('gives every custom key a value its requirement allows and leaves well-known keys to the instance type', () => {
    const requirements = Requirements.from([
      { key: 'team', operator: 'Exists' },
      { key: 'example.com/tier', operator: 'Gt', values: ['5'] },
      { key: 'example.com/rack', operator: 'NotIn', values: ['0'] },
      { key: 'example.com/zone-pair', operator: 'In', values: ['west', 'east'] },
      { key: 'example.com/none', operator: 'DoesNotExist' },
      { key: 'karpenter.k8s.aws/instance-local-nvme', operator: 'Gt', values: ['300'] },
      { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-west-2a', 'us-west-2b'] },
      { key: 'karpenter.sh/registered', operator: 'In', values: ['true'] },
    ]);
    const labels = resolveCustomLabels(requirements);
    expect(labels).toEqual({ team: '0', 'example.com/tier': '6', 'example.com/rack': '1', 'example.com/zone-pair': 'east' });
    expect(requirements.firstUnsatisfied({ ...labels, 'karpenter.k8s.aws/instance-local-nvme': '400', 'topology.kubernetes.io/zone': 'us-west-2a', 'karpenter.sh/registered': 'true' })).toBeUndefined();
  });

  it('is deterministic', () => {
    const requirements = Requirements.from([{ key: 'a', operator: 'In', values: ['z', 'y', 'x'] }, { key: 'b', operator: 'Lt', values: ['100'] }]);
    expect(resolveCustomLabels(requirements)).toEqual(resolveCustomLabels(requirements));
    expect(resolveCustomLabels(requirements)).toEqual({ a: 'x', b: '0' });
  });
});
