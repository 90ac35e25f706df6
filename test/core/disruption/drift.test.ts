import { describe, expect, it } from 'vitest';
import { replacementDrift } from '../../../shared/core/disruption/drift.js';
import { nodePoolRequirements } from '../../../shared/core/provisioning/nodepool-template.js';
import { Requirements } from '../../../shared/core/scheduling/requirements.js';
import { instanceType } from '../../support/builders.js';

const pool = (requirements: { key: string; operator: 'In' | 'Exists' | 'Gt'; values?: string[] }[]) =>
  nodePoolRequirements({ metadata: { name: 'general' }, spec: { template: { spec: { nodeClassRef: { name: 'default' }, requirements } } } });

describe('replacementDrift', () => {
  const types = [instanceType('m5.large', { cpu: 1930, memory: 6903, price: 0.096 }), instanceType('c6id.large', { cpu: 1930, memory: 3055, price: 0.1, labels: { 'karpenter.k8s.aws/instance-local-nvme': '118' } })];
  const plan = (labels: Record<string, string>, names = ['m5.large']) => ({ labels: { 'karpenter.sh/nodepool': 'general', ...labels }, requirements: Requirements.none, instanceTypes: names.map((name) => ({ name })) });

  it('finds nothing when the node would carry every label the NodePool requires (custom, region, zone)', () => {
    const requirements = pool([
      { key: 'team', operator: 'Exists' },
      { key: 'topology.kubernetes.io/region', operator: 'In', values: ['us-west-2'] },
      { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-west-2a', 'us-west-2b'] },
    ]);
    expect(replacementDrift(requirements, plan({ team: '0' }), types, 'us-west-2')).toBeUndefined();
  });

  it('names the requirement a replacement would miss: a label nothing sets, or a type label out of range', () => {
    expect(replacementDrift(pool([{ key: 'topology.k8s.aws/zone-id', operator: 'Exists' }]), plan({}), types, 'us-west-2')).toEqual({
      instanceType: 'm5.large',
      requirement: expect.objectContaining({ key: 'topology.k8s.aws/zone-id' }),
    });
    expect(replacementDrift(pool([{ key: 'karpenter.k8s.aws/instance-local-nvme', operator: 'Gt', values: ['300'] }]), plan({}, ['c6id.large']), types, 'us-west-2')?.instanceType).toBe('c6id.large');
  });
});
