import { describe, expect, it } from 'vitest';
import { nodePoolSchema } from '../../../shared/core/api/nodepool.js';
import { pdbSchema } from '../../../shared/core/api/pdb.js';
import { nodeDoNotDisrupt, podDoNotDisrupt } from '../../../shared/core/disruption/do-not-disrupt.js';
import { driftReason, nodeClassHash, nodePoolHash } from '../../../shared/core/disruption/drift.js';
import { pdbAllowances, pdbBlocks } from '../../../shared/core/disruption/pdb.js';
import { nodePoolRequirements } from '../../../shared/core/provisioning/nodepool-template.js';

const pool = (patch: Record<string, unknown> = {}, templatePatch: Record<string, unknown> = {}) =>
  nodePoolSchema.parse({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'general' },
    spec: {
      template: {
        metadata: { labels: { team: 'a' } },
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
          ...templatePatch,
        },
      },
      ...patch,
    },
  });

describe('drift', () => {
  it('ignores the behavioural fields weight, limits and disruption', () => {
    const base = nodePoolHash(pool());
    expect(nodePoolHash(pool({ weight: 50 }))).toBe(base);
    expect(nodePoolHash(pool({ limits: { cpu: '100' } }))).toBe(base);
    expect(nodePoolHash(pool({ disruption: { consolidateAfter: '10m' } }))).toBe(base);
  });

  it('changes with taints, labels, expireAfter and the nodeClassRef, but not with requirements (checked on their own)', () => {
    const base = nodePoolHash(pool());
    expect(nodePoolHash(pool({}, { taints: [{ key: 'k', effect: 'NoSchedule' }] }))).not.toBe(base);
    expect(nodePoolHash(pool({}, { expireAfter: '24h' }))).not.toBe(base);
    expect(nodePoolHash(pool({}, { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'other' } }))).not.toBe(base);
    expect(nodePoolHash(pool({}, { requirements: [] }))).toBe(base);
  });

  it('names the first drift reason: template, then requirements, then the EC2NodeClass', () => {
    const np = pool();
    const requirements = nodePoolRequirements(np);
    const labels = { team: 'a', 'karpenter.sh/capacity-type': 'on-demand', 'karpenter.sh/nodepool': 'general' };
    const hash = nodePoolHash(np);
    expect(driftReason({ nodePoolHash: hash, nodeClassHash: 'x', labels }, hash, requirements, 'x')).toBeUndefined();
    expect(driftReason({ nodePoolHash: 'old', labels }, hash, requirements, 'x')).toBe('NodePoolDrifted');
    expect(driftReason({ nodePoolHash: hash, labels: { ...labels, 'karpenter.sh/capacity-type': 'spot' } }, hash, requirements, 'x')).toBe('RequirementsDrifted');
    expect(driftReason({ nodePoolHash: hash, nodeClassHash: 'old', labels }, hash, requirements, 'x')).toBe('NodeClassDrifted');
    // A record launched before hashes were kept is not drifted on that count.
    expect(driftReason({ labels }, hash, requirements, 'x')).toBeUndefined();
  });

  it('hashes an EC2NodeClass spec by content, not key order', () => {
    expect(nodeClassHash({ spec: { a: 1, b: [1, 2] } })).toBe(nodeClassHash({ spec: { b: [1, 2], a: 1 } }));
    expect(nodeClassHash({ spec: { a: 1 } })).not.toBe(nodeClassHash({ spec: { a: 2 } }));
  });
});

describe('karpenter.sh/do-not-disrupt', () => {
  const created = Date.parse('2026-03-02T08:00:00Z');
  it('"true" protects for good, a duration until the pod is that old, anything else not at all', () => {
    expect(podDoNotDisrupt({ 'karpenter.sh/do-not-disrupt': 'true' }, created, created + 1e9)).toEqual({ active: true });
    expect(podDoNotDisrupt({ 'karpenter.sh/do-not-disrupt': '30m' }, created, created + 29 * 60_000)).toEqual({ active: true, untilMs: created + 30 * 60_000 });
    expect(podDoNotDisrupt({ 'karpenter.sh/do-not-disrupt': '30m' }, created, created + 30 * 60_000)).toEqual({ active: false });
    expect(podDoNotDisrupt({ 'karpenter.sh/do-not-disrupt': 'yes' }, created, created)).toEqual({ active: false, invalid: 'yes' });
    expect(podDoNotDisrupt({}, created, created)).toEqual({ active: false });
  });

  it('on a node only "true" counts', () => {
    expect(nodeDoNotDisrupt({ 'karpenter.sh/do-not-disrupt': 'true' })).toBe(true);
    expect(nodeDoNotDisrupt({ 'karpenter.sh/do-not-disrupt': '1h' })).toBe(false);
  });
});

describe('PodDisruptionBudgets', () => {
  const pdb = (spec: Record<string, unknown>, status?: Record<string, unknown>) =>
    pdbSchema.parse({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'db', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'db' } }, ...spec }, ...(status ? { status } : {}) });
  const db = (name: string, healthy = true) => ({ namespace: 'default', name, labels: { app: 'db' }, healthy });

  it('computes allowed disruptions as kube-controller-manager does', () => {
    const pods = [db('a'), db('b'), db('c')];
    expect(pdbAllowances([pdb({ minAvailable: 2 })], pods)[0]).toMatchObject({ allowed: 1, neverAllows: false });
    expect(pdbAllowances([pdb({ minAvailable: '50%' })], pods)[0]).toMatchObject({ allowed: 1 }); // 50 % of 3 → 2
    expect(pdbAllowances([pdb({ maxUnavailable: 1 })], [db('a'), db('b', false), db('c')])[0]).toMatchObject({ allowed: 0 });
    expect(pdbAllowances([pdb({ minAvailable: 3 })], pods)[0]).toMatchObject({ allowed: 0, neverAllows: true });
    expect(pdbAllowances([pdb({ maxUnavailable: 0 })], pods)[0]).toMatchObject({ allowed: 0, neverAllows: true });
  });

  it('prefers the status the API server reported', () => {
    expect(pdbAllowances([pdb({ minAvailable: 1 }, { disruptionsAllowed: 0 })], [db('a'), db('b')])[0]!.allowed).toBe(0);
  });

  it('blocks a pod under a PDB with no allowance, or under two PDBs', () => {
    const one = pdbAllowances([pdb({ minAvailable: 2 })], [db('a'), db('b')]);
    expect(pdbBlocks(db('a'), one)).toContain('can never allow an eviction');
    const other = pdb({ minAvailable: 0 });
    const two = pdbAllowances([pdb({ minAvailable: 0 }), { ...other, metadata: { ...other.metadata, name: 'db2' } }], [db('a'), db('b')]);
    expect(pdbBlocks(db('a'), two)).toContain('more than one PodDisruptionBudget');
    expect(pdbBlocks({ namespace: 'default', labels: { app: 'web' } }, one)).toBeUndefined();
  });
});
