import { describe, expect, it } from 'vitest';
import { crdRequirement, formatQuantity, nodeClaimConditions } from '../../../shared/adapters/kubernetes/nodeclaim-mirror.js';
import type { NodeClaim } from '../../../shared/core/api/nodeclaim.js';

const base: NodeClaim = {
  name: 'general-abc12',
  nodePool: 'general',
  nodeClass: 'default',
  state: 'Pending',
  requirements: [],
  instanceTypes: ['m7g.large'],
  resources: {},
  labels: {},
  taints: [],
  startupTaints: [],
  nominatedPods: [],
  createdAt: '2024-05-06T07:00:00Z',
  version: 1,
};

describe('nodeclaim-mirror', () => {
  describe('crdRequirement', () => {
    it.each([
      [{ key: 'k', operator: 'Gte', values: ['4'] }, { key: 'k', operator: 'Gt', values: ['3'] }],
      [{ key: 'k', operator: 'Lte', values: ['8'] }, { key: 'k', operator: 'Lt', values: ['9'] }],
      [{ key: 'k', operator: 'In', values: ['a'] }, { key: 'k', operator: 'In', values: ['a'] }],
      [{ key: 'k', operator: 'Exists' }, { key: 'k', operator: 'Exists' }],
    ] as const)('rewrites %o as %o', (input, output) => {
      expect(crdRequirement(input)).toEqual(output);
    });
  });

  describe('formatQuantity', () => {
    it.each([
      ['cpu', 1500, '1500m'],
      ['memory', 512, '512Mi'],
      ['memory', 0.5, '512Ki'],
      ['ephemeral-storage', 20480, '20480Mi'],
      ['pods', 29, '29'],
      ['nvidia.com/gpu', 1, '1'],
    ] as const)('formats %s %d as %s', (name, amount, text) => {
      expect(formatQuantity(name, amount)).toBe(text);
    });
  });

  describe('nodeClaimConditions', () => {
    const summary = (claim: NodeClaim) => nodeClaimConditions(claim).map((c) => `${c.type}=${c.status}:${c.reason}`);

    it('marks a failed launch Launched=False and Ready=False, with the EC2 error as the message', () => {
      const conditions = nodeClaimConditions({ ...base, state: 'Failed', launchError: 'InsufficientInstanceCapacity', deletedAt: '2024-05-06T07:00:09Z' });
      expect(conditions.map((c) => `${c.type}=${c.status}:${c.reason}`)).toEqual([
        'Launched=False:LaunchFailed',
        'Registered=Unknown:AwaitingReconciliation',
        'Initialized=Unknown:AwaitingReconciliation',
        'Ready=False:UnhealthyDependents',
      ]);
      expect(conditions[0]).toMatchObject({ message: 'InsufficientInstanceCapacity', lastTransitionTime: '2024-05-06T07:00:09Z' });
    });

    it('adds InstanceTerminating=True while Deleting', () => {
      const claim: NodeClaim = { ...base, state: 'Deleting', launchedAt: '2024-05-06T07:00:05Z', registeredAt: '2024-05-06T07:00:40Z', initializedAt: '2024-05-06T07:00:55Z', deletionReason: 'Empty' };
      expect(summary(claim)).toEqual(['Launched=True:Launched', 'Registered=True:Registered', 'Initialized=True:Initialized', 'Ready=True:Ready', 'InstanceTerminating=True:InstanceTerminating']);
    });

    it('names the conditions that are not True in the Ready message', () => {
      const ready = nodeClaimConditions({ ...base, state: 'Launched', launchedAt: '2024-05-06T07:00:05Z' }).find((c) => c.type === 'Ready');
      expect(ready).toMatchObject({ status: 'Unknown', reason: 'UnhealthyDependents', message: 'Registered=Unknown, Initialized=Unknown' });
    });
  });
});
