import { describe, expect, it } from 'vitest';
import type { NodeSelectorRequirement } from '../../../shared/core/api/kubernetes.js';
import { buildInstanceType } from '../../../shared/core/instancetypes/offering.js';
import { Requirements } from '../../../shared/core/scheduling/requirements.js';

const NVME = 'karpenter.k8s.aws/instance-local-nvme';
const type = (name: string, labels: Record<string, string>) =>
  buildInstanceType({
    name,
    labels: { 'node.kubernetes.io/instance-type': name, 'kubernetes.io/arch': 'amd64', ...labels },
    capacity: { cpu: 4000, memory: 8192, pods: 58 },
    allocatable: { cpu: 3920, memory: 6500, pods: 58 },
    offerings: [{ zone: 'us-west-2a', capacityType: 'on-demand', price: 0.1, available: true }],
  });

describe('buildInstanceType', () => {
  const withNvme = type('c6id.xlarge', { [NVME]: '237', 'karpenter.k8s.aws/instance-gpu-manufacturer': 'nvidia' });
  const without = type('c6a.xlarge', {});
  const allows = (t: ReturnType<typeof type>, r: NodeSelectorRequirement) => Requirements.from([r]).intersects(t.requirements) === undefined;

  // aws computeRequirements: a type without a value for a well-known instance label has it DoesNotExist.
  const table: readonly [NodeSelectorRequirement, boolean, boolean][] = [
    [{ key: NVME, operator: 'Gt', values: ['100'] }, true, false],
    [{ key: NVME, operator: 'Gt', values: ['300'] }, false, false],
    [{ key: NVME, operator: 'Lt', values: ['300'] }, true, false],
    [{ key: NVME, operator: 'Exists' }, true, false],
    [{ key: NVME, operator: 'In', values: ['237'] }, true, false],
    [{ key: NVME, operator: 'NotIn', values: ['237'] }, false, true],
    [{ key: NVME, operator: 'DoesNotExist' }, false, true],
    [{ key: 'karpenter.k8s.aws/instance-gpu-manufacturer', operator: 'In', values: ['nvidia'] }, true, false],
    [{ key: 'karpenter.k8s.aws/instance-gpu-count', operator: 'Exists' }, false, false],
    [{ key: 'node.kubernetes.io/windows-build', operator: 'Exists' }, false, false],
    [{ key: 'karpenter.k8s.aws/capacity-reservation-id', operator: 'DoesNotExist' }, true, true],
    [{ key: 'example.com/custom', operator: 'Exists' }, true, true],
  ];
  for (const [requirement, nvmeType, plainType] of table) {
    it(`${requirement.key} ${requirement.operator} ${requirement.values?.join(' ') ?? ''}: ${nvmeType ? 'keeps' : 'excludes'} a type with it, ${plainType ? 'keeps' : 'excludes'} one without`, () => {
      expect(allows(withNvme, requirement)).toBe(nvmeType);
      expect(allows(without, requirement)).toBe(plainType);
    });
  }

  it('requires its region when told it (topology.kubernetes.io/region In [region])', () => {
    const regional = buildInstanceType({ ...without, region: 'us-west-2' });
    expect(Requirements.from([{ key: 'topology.kubernetes.io/region', operator: 'In', values: ['us-east-1'] }]).intersects(regional.requirements)).toBeDefined();
    expect(Requirements.from([{ key: 'topology.kubernetes.io/region', operator: 'In', values: ['us-west-2'] }]).intersects(regional.requirements)).toBeUndefined();
    expect(regional).not.toHaveProperty('region');
  });
});
