import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseManifests, type ManifestOf } from '../../../shared/core/api/manifest.js';
import { budgetSchema, disruptionSchema, isCronShape, nodePoolLabelProblem, nodePoolSchema, type NodePool } from '../../../shared/core/api/nodepool.js';
import { edit, expectIssue, issuesOf } from './validation-expectations.js';

const SEED = new URL('../../../examples/seed/', import.meta.url);

/** A valid NodePool; line numbers matter to the tests below. */
const BASE = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: test
spec:
  weight: 10
  template:
    metadata:
      labels:
        team: a
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["spot"]
  disruption:
    consolidationPolicy: WhenEmpty
    budgets:
      - nodes: "10%"
`;

/** Parses one NodePool document. */
function parsePool(text: string, file = 'pool.yaml'): NodePool {
  const [manifest] = parseManifests(text, file);
  expect(manifest?.kind).toBe('NodePool');
  return (manifest as ManifestOf<'NodePool'>).object;
}

/** Parses a seed example file holding one NodePool. */
function seedPool(name: string): NodePool {
  return parsePool(readFileSync(new URL(`nodepool-${name}.yaml`, SEED), 'utf8'), `nodepool-${name}.yaml`);
}

describe('NodePool', () => {
  describe('seed examples', () => {
    it('keeps the general pool exactly as written in the article', () => {
      const pool = seedPool('general');
      expect(pool.metadata.name).toBe('general');
      expect(pool.spec.template.metadata?.labels).toEqual({ 'workload-type': 'general' });
      expect(pool.spec.template.metadata?.annotations).toEqual({ team: 'platform' });
      expect(pool.spec.template.spec.nodeClassRef).toEqual({ group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' });
      expect(pool.spec.template.spec.requirements).toEqual([
        { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] },
        { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] },
        { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['4'] },
        { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
        { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-west-2a', 'us-west-2b', 'us-west-2c'] },
      ]);
      expect(pool.spec.template.spec.expireAfter).toBe('720h');
      expect(pool.spec.disruption).toEqual({ consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '5m', budgets: [{ nodes: '10%' }] });
      expect(pool.spec.limits).toEqual({ cpu: '400', memory: '800Gi' });
    });

    it('applies defaults to the gpu pool, which has no disruption block', () => {
      const pool = seedPool('gpu');
      expect(pool.spec.template.spec.nodeClassRef.name).toBe('gpu-class');
      expect(pool.spec.template.spec.taints).toEqual([{ key: 'nvidia.com/gpu', effect: 'NoSchedule' }]);
      expect(pool.spec.template.spec.expireAfter).toBe('720h');
      expect(pool.spec.disruption).toEqual({ consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '0s', budgets: [{ nodes: '10%' }] });
      expect(pool.spec.limits).toEqual({ cpu: '100' });
    });

    it('keeps the batch pool WhenEmpty policy and 30s consolidateAfter, defaulting budgets', () => {
      const pool = seedPool('batch');
      expect(pool.spec.template.spec.requirements[0]).toEqual({ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] });
      expect(pool.spec.template.spec.taints).toEqual([{ key: 'workload-type', value: 'batch', effect: 'NoSchedule' }]);
      expect(pool.spec.disruption).toEqual({ consolidationPolicy: 'WhenEmpty', consolidateAfter: '30s', budgets: [{ nodes: '10%' }] });
      expect(pool.spec.limits).toBeUndefined();
    });
  });

  describe('defaults', () => {
    it('gives a pool without disruption WhenEmptyOrUnderutilized, 0s and one 10% budget', () => {
      const pool = parsePool(edit(BASE, { '  disruption:\n    consolidationPolicy: WhenEmpty\n    budgets:\n      - nodes: "10%"\n': '' }));
      expect(pool.spec.disruption).toEqual({ consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '0s', budgets: [{ nodes: '10%' }] });
    });

    it('fills the missing parts of a partial disruption block', () => {
      const pool = parsePool(edit(BASE, { '    consolidationPolicy: WhenEmpty\n    budgets:\n      - nodes: "10%"\n': '    consolidateAfter: 1m\n' }));
      expect(pool.spec.disruption).toEqual({ consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '1m', budgets: [{ nodes: '10%' }] });
    });

    it('defaults expireAfter to 720h and requirements to none', () => {
      const pool = parsePool(edit(BASE, { '      requirements:\n        - key: karpenter.sh/capacity-type\n          operator: In\n          values: ["spot"]\n': '' }));
      expect(pool.spec.template.spec.expireAfter).toBe('720h');
      expect(pool.spec.template.spec.requirements).toEqual([]);
    });

    it('does not share default objects between parses', () => {
      const a = disruptionSchema.parse({});
      const b = disruptionSchema.parse({});
      expect(a.budgets).not.toBe(b.budgets);
    });

    it('accepts Never for expireAfter and consolidateAfter', () => {
      const pool = parsePool(edit(BASE, { '        name: default\n': '        name: default\n      expireAfter: Never\n', '    consolidationPolicy: WhenEmpty\n': '    consolidationPolicy: WhenEmpty\n    consolidateAfter: Never\n' }));
      expect(pool.spec.template.spec.expireAfter).toBe('Never');
      expect(pool.spec.disruption.consolidateAfter).toBe('Never');
    });

    it('keeps terminationGracePeriod when set', () => {
      const pool = parsePool(edit(BASE, { '        name: default\n': '        name: default\n      terminationGracePeriod: 48h\n' }));
      expect(pool.spec.template.spec.terminationGracePeriod).toBe('48h');
    });
  });

  describe('validation', () => {
    it.each([
      ['0', /1/],
      ['101', /100/],
      ['1.5', /integer/],
    ])('rejects weight %s at spec.weight, line 6', (weight, message) => {
      expectIssue(issuesOf(() => parseManifests(edit(BASE, { 'weight: 10': `weight: ${weight}` }), 'pool.yaml')), { path: 'spec.weight', line: 6, message, file: 'pool.yaml' });
    });

    it('accepts every integer weight from 1 to 100 and rejects every other integer', () => {
      fc.assert(
        fc.property(fc.integer({ min: -1000, max: 1000 }), (weight) => {
          const ok = nodePoolSchema.shape.spec.shape.weight.safeParse(weight).success;
          expect(ok).toBe(weight >= 1 && weight <= 100);
        }),
      );
    });

    it('rejects Gt with a non-integer value at the value, line 19', () => {
      const text = edit(BASE, { 'key: karpenter.sh/capacity-type\n          operator: In\n          values: ["spot"]': 'key: karpenter.k8s.aws/instance-generation\n          operator: Gt\n          values: ["abc"]' });
      expectIssue(issuesOf(() => parseManifests(text, 'pool.yaml')), { path: 'spec.template.spec.requirements[0].values[0]', line: 19, message: /non-negative integer/ });
    });

    it.each(['Gt', 'Lt', 'Gte', 'Lte'])('requires exactly one value for %s', (operator) => {
      const text = edit(BASE, { 'key: karpenter.sh/capacity-type\n          operator: In\n          values: ["spot"]': `key: karpenter.k8s.aws/instance-cpu\n          operator: ${operator}\n          values: ["4", "8"]` });
      expectIssue(issuesOf(() => parseManifests(text, 'pool.yaml')), { path: 'spec.template.spec.requirements[0].values', line: 19, message: /exactly one/ });
    });

    it('rejects a negative value for Gt', () => {
      const text = edit(BASE, { 'operator: In\n          values: ["spot"]': 'operator: Gt\n          values: ["-1"]' });
      const issues = issuesOf(() => parseManifests(text, 'pool.yaml')).filter((i) => /non-negative integer/.test(i.message));
      expect(issues.map((i) => [i.path, i.line])).toEqual([['spec.template.spec.requirements[0].values[0]', 19]]);
    });

    it('rejects a Gt value past a 64-bit integer at file:line:column, as the CRD rule int(x.values[0]) does, instead of echoing it as 1e+23', () => {
      const text = edit(BASE, { 'key: karpenter.sh/capacity-type\n          operator: In\n          values: ["spot"]': 'key: karpenter.k8s.aws/instance-cpu\n          operator: Gt\n          values: ["99999999999999999999999"]' });
      const issue = expectIssue(issuesOf(() => parseManifests(text, 'pool.yaml')), {
        path: 'spec.template.spec.requirements[0].values[0]',
        line: 19,
        file: 'pool.yaml',
        message: /^operator Gt needs a non-negative integer of at most 9007199254740991, got "99999999999999999999999": it does not fit in a 64-bit integer, so Karpenter's NodePool CRD rejects it/,
      });
      expect(issue.column).toBe(20);
    });

    it.each([
      ['9007199254740992', /Kubernetes accepts it \(up to 9223372036854775807\), but Skiff compares requirement bounds exactly only up to 2\^53 − 1/],
      ['9223372036854775808', /does not fit in a 64-bit integer/],
    ])('rejects Lte %s, which Skiff cannot hold exactly', (value, message) => {
      const text = edit(BASE, { 'key: karpenter.sh/capacity-type\n          operator: In\n          values: ["spot"]': `key: karpenter.k8s.aws/instance-memory\n          operator: Lte\n          values: ["${value}"]` });
      expectIssue(issuesOf(() => parseManifests(text, 'pool.yaml')), { path: 'spec.template.spec.requirements[0].values[0]', line: 19, message });
    });

    it('accepts the largest integer Skiff holds exactly, 2^53 − 1', () => {
      const text = edit(BASE, { 'key: karpenter.sh/capacity-type\n          operator: In\n          values: ["spot"]': 'key: karpenter.k8s.aws/instance-memory\n          operator: Lt\n          values: ["9007199254740991"]' });
      expect(parsePool(text).spec.template.spec.requirements[0]?.values).toEqual(['9007199254740991']);
    });

    it('accepts Gte and Lte with one integer value', () => {
      const text = edit(BASE, { 'key: karpenter.sh/capacity-type\n          operator: In\n          values: ["spot"]': 'key: karpenter.k8s.aws/instance-cpu\n          operator: Gte\n          values: ["4"]\n        - key: karpenter.k8s.aws/instance-memory\n          operator: Lte\n          values: ["65536"]' });
      expect(parsePool(text).spec.template.spec.requirements.map((r) => r.operator)).toEqual(['Gte', 'Lte']);
    });

    it('rejects In with no values at requirements[0].values, on the requirement line 17', () => {
      const text = edit(BASE, { '\n          values: ["spot"]': '' });
      expectIssue(issuesOf(() => parseManifests(text, 'pool.yaml')), { path: 'spec.template.spec.requirements[0].values', line: 17, message: /at least one value/ });
    });

    it('rejects In with an empty list of values', () => {
      const text = edit(BASE, { 'values: ["spot"]': 'values: []' });
      expectIssue(issuesOf(() => parseManifests(text, 'pool.yaml')), { path: 'spec.template.spec.requirements[0].values', line: 19 });
    });

    it.each(['Exists', 'DoesNotExist'])('rejects values on %s', (operator) => {
      const text = edit(BASE, { 'operator: In': `operator: ${operator}` });
      expectIssue(issuesOf(() => parseManifests(text, 'pool.yaml')), { path: 'spec.template.spec.requirements[0].values', line: 19, message: /no values/ });
    });

    it('accepts NotIn and Exists without values', () => {
      const text = edit(BASE, { 'operator: In\n          values: ["spot"]': 'operator: Exists\n        - key: karpenter.k8s.aws/instance-family\n          operator: NotIn\n          values: ["t3"]' });
      expect(parsePool(text).spec.template.spec.requirements).toHaveLength(2);
    });

    it('rejects an unknown operator at requirements[0].operator, line 18', () => {
      const text = edit(BASE, { 'operator: In': 'operator: Equals' });
      expectIssue(issuesOf(() => parseManifests(text, 'pool.yaml')), { path: 'spec.template.spec.requirements[0].operator', line: 18 });
    });

    it('rejects minValues above the number of In values', () => {
      const text = edit(BASE, { 'values: ["spot"]': 'values: ["spot"]\n          minValues: 2' });
      expectIssue(issuesOf(() => parseManifests(text, 'pool.yaml')), { path: 'spec.template.spec.requirements[0].minValues', line: 20, message: /exceeds/ });
    });

    it.each([0, 51])('rejects minValues %d (bounds 1–50)', (minValues) => {
      const text = edit(BASE, { 'operator: In\n          values: ["spot"]': `operator: Exists\n          minValues: ${minValues}` });
      expectIssue(issuesOf(() => parseManifests(text, 'pool.yaml')), { path: 'spec.template.spec.requirements[0].minValues', line: 19 });
    });

    it('accepts minValues with Exists (Karpenter checks the count only for In)', () => {
      const text = edit(BASE, { 'key: karpenter.sh/capacity-type\n          operator: In\n          values: ["spot"]': 'key: karpenter.k8s.aws/instance-family\n          operator: Exists\n          minValues: 5' });
      expect(parsePool(text).spec.template.spec.requirements[0]?.minValues).toBe(5);
    });

    it('rejects a kubernetes.io/hostname requirement at its key, line 17', () => {
      const text = edit(BASE, { 'key: karpenter.sh/capacity-type': 'key: kubernetes.io/hostname' });
      expectIssue(issuesOf(() => parseManifests(text, 'pool.yaml')), { path: 'spec.template.spec.requirements[0].key', line: 17, message: /restricted/ });
    });

    it.each(['karpenter.sh/foo', 'karpenter.sh/nodepool', 'kubernetes.io/hostname', 'k8s.io/thing', 'karpenter.k8s.aws/made-up'])('rejects the restricted requirement key %s', (key) => {
      const text = edit(BASE, { 'key: karpenter.sh/capacity-type': `key: ${key}` });
      expectIssue(issuesOf(() => parseManifests(text, 'pool.yaml')), { path: 'spec.template.spec.requirements[0].key', line: 17, message: /restricted/ });
    });

    it.each([
      'karpenter.k8s.aws/instance-family',
      'node.kubernetes.io/instance-type',
      'topology.kubernetes.io/zone',
      'beta.kubernetes.io/arch',
      'failure-domain.beta.kubernetes.io/zone',
      'example.com/team',
      'team',
    ])('accepts the requirement key %s', (key) => {
      expect(nodePoolLabelProblem(key)).toBeUndefined();
      const text = edit(BASE, { 'key: karpenter.sh/capacity-type\n          operator: In': `key: ${key}\n          operator: In` });
      expect(parsePool(text).spec.template.spec.requirements[0]?.key).toBe(key);
    });

    it('rejects a karpenter.sh/foo template label at its key, line 10', () => {
      const text = edit(BASE, { 'team: a': 'karpenter.sh/foo: a' });
      expectIssue(issuesOf(() => parseManifests(text, 'pool.yaml')), { path: 'spec.template.metadata.labels["karpenter.sh/foo"]', line: 10, message: /restricted domain karpenter.sh/ });
    });

    it('suggests the well-known label a restricted requirement key is one typo away from, and nothing for a key far from all', () => {
      const text = edit(BASE, { 'key: karpenter.sh/capacity-type\n          operator: In': 'key: karpenter.k8s.aws/instance-generaton\n          operator: In' });
      expectIssue(issuesOf(() => parseManifests(text, 'pool.yaml')), { path: 'spec.template.spec.requirements[0].key', line: 17, message: /restricted domain karpenter\.k8s\.aws and is not a well-known label — did you mean karpenter\.k8s\.aws\/instance-generation\?/ });
      expect(nodePoolLabelProblem('karpenter.sh/foo')).not.toContain('did you mean');
    });

    it('rejects karpenter.sh/nodepool and kubernetes.io/hostname as template labels', () => {
      const text = edit(BASE, { 'team: a': 'karpenter.sh/nodepool: x\n        kubernetes.io/hostname: y' });
      const issues = issuesOf(() => parseManifests(text, 'pool.yaml'));
      expectIssue(issues, { path: 'spec.template.metadata.labels["karpenter.sh/nodepool"]', line: 10 });
      expectIssue(issues, { path: 'spec.template.metadata.labels["kubernetes.io/hostname"]', line: 11 });
    });

    it('rejects a label value that is a number', () => {
      const text = edit(BASE, { 'team: a': 'team: 1' });
      expectIssue(issuesOf(() => parseManifests(text, 'pool.yaml')), { path: 'spec.template.metadata.labels.team', line: 10, message: /strings/ });
    });

    it('rejects a schedule without a duration at budgets[0].duration, on the budget line', () => {
      const text = edit(BASE, { '      - nodes: "10%"\n': '      - nodes: "10%"\n        schedule: "0 1 * * *"\n' });
      expectIssue(issuesOf(() => parseManifests(text, 'pool.yaml')), { path: 'spec.disruption.budgets[0].duration', line: 23, message: /'schedule' must be set with 'duration'/ });
    });

    it('rejects a duration without a schedule', () => {
      const text = edit(BASE, { '      - nodes: "10%"\n': '      - nodes: "10%"\n        duration: 2h\n' });
      expectIssue(issuesOf(() => parseManifests(text, 'pool.yaml')), { path: 'spec.disruption.budgets[0].schedule', line: 23 });
    });

    it.each(['30s', '1d', '2h30s', 'Never'])('rejects the budget duration %s (hours and minutes only)', (duration) => {
      const text = edit(BASE, { '      - nodes: "10%"\n': `      - nodes: "10%"\n        schedule: "@daily"\n        duration: ${duration}\n` });
      expectIssue(issuesOf(() => parseManifests(text, 'pool.yaml')), { path: 'spec.disruption.budgets[0].duration', line: 25 });
    });

    it.each(['14h', '2h', '90m', '1h30m', '1h30m0s'])('accepts the budget duration %s', (duration) => {
      expect(budgetSchema.safeParse({ nodes: '10%', schedule: '0 1 * * *', duration }).success).toBe(true);
    });

    it.each([
      ['0 1 * * *', true],
      ['*/15 9-17 * * MON-FRI', true],
      ['@daily', true],
      ['@hourly', true],
      ['0 1 * *', false],
      ['0 1 * * * *', false],
      ['@sometimes', false],
      ['', false],
    ])('judges the cron shape of %j as %s', (schedule, ok) => {
      expect(isCronShape(schedule)).toBe(ok);
    });

    it('rejects a 4-field schedule at budgets[0].schedule', () => {
      const text = edit(BASE, { '      - nodes: "10%"\n': '      - nodes: "10%"\n        schedule: "0 1 * *"\n        duration: 2h\n' });
      expectIssue(issuesOf(() => parseManifests(text, 'pool.yaml')), { path: 'spec.disruption.budgets[0].schedule', line: 24, message: /5-field cron/ });
    });

    it('accepts nodes as a percentage string or an integer, returning a string', () => {
      expect(budgetSchema.parse({ nodes: 5 }).nodes).toBe('5');
      expect(budgetSchema.parse({ nodes: '0' }).nodes).toBe('0');
      expect(budgetSchema.parse({ nodes: '100%' }).nodes).toBe('100%');
    });

    it('refuses a node count past an int32, as an IntOrString cannot hold it (it used to crash the run)', () => {
      expect(budgetSchema.parse({ nodes: '2147483647' }).nodes).toBe('2147483647');
      for (const nodes of ['2147483648', '9007199254740993', 2 ** 40]) {
        const r = budgetSchema.safeParse({ nodes });
        expect(r.success).toBe(false);
        expect(r.error!.issues[0]!.message).toContain('at most 2147483647');
      }
    });

    it('accepts a percentage iff it is between 0% and 100%', () => {
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 1000 }), (p) => {
          expect(budgetSchema.safeParse({ nodes: `${p}%` }).success).toBe(p <= 100);
        }),
      );
    });

    it('rejects nodes 150% at budgets[0].nodes', () => {
      const text = edit(BASE, { 'nodes: "10%"': 'nodes: "150%"' });
      expectIssue(issuesOf(() => parseManifests(text, 'pool.yaml')), { path: 'spec.disruption.budgets[0].nodes', line: 23, message: /percentage/ });
    });

    it('accepts reasons from Underutilized, Empty, Drifted and rejects others', () => {
      expect(budgetSchema.parse({ nodes: '1', reasons: ['Drifted', 'Empty'] }).reasons).toEqual(['Drifted', 'Empty']);
      const text = edit(BASE, { 'nodes: "10%"': 'nodes: "10%"\n        reasons: [Expired]' });
      expectIssue(issuesOf(() => parseManifests(text, 'pool.yaml')), { path: 'spec.disruption.budgets[0].reasons[0]', line: 24 });
    });

    it('rejects more than 50 budgets and more than 100 requirements', () => {
      expect(disruptionSchema.safeParse({ budgets: Array.from({ length: 51 }, () => ({ nodes: '1' })) }).success).toBe(false);
      expect(disruptionSchema.safeParse({ budgets: Array.from({ length: 50 }, () => ({ nodes: '1' })) }).success).toBe(true);
      const requirement = { key: 'karpenter.k8s.aws/instance-family', operator: 'Exists' };
      const spec = (n: number) => ({ nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'x' }, requirements: Array.from({ length: n }, () => requirement) });
      expect(nodePoolSchema.shape.spec.shape.template.shape.spec.safeParse(spec(101)).success).toBe(false);
      expect(nodePoolSchema.shape.spec.shape.template.shape.spec.safeParse(spec(100)).success).toBe(true);
    });

    it('rejects an unknown policy', () => {
      const text = edit(BASE, { 'consolidationPolicy: WhenEmpty': 'consolidationPolicy: WhenUnderutilized' });
      expectIssue(issuesOf(() => parseManifests(text, 'pool.yaml')), { path: 'spec.disruption.consolidationPolicy', line: 21 });
    });

    it('rejects the unknown field consolidatonPolicy and suggests the right one', () => {
      const text = edit(BASE, { 'consolidationPolicy: WhenEmpty': 'consolidatonPolicy: WhenEmpty' });
      expectIssue(issuesOf(() => parseManifests(text, 'pool.yaml')), { path: 'spec.disruption.consolidatonPolicy', line: 21, message: /unknown field "consolidatonPolicy" \(did you mean "consolidationPolicy"\?\)/ });
    });

    it('rejects unknown fields everywhere in the Karpenter object, but accepts usual metadata fields', () => {
      const text = edit(BASE, { '  name: test\n': '  name: test\n  uid: "1234"\n  resourceVersion: "7"\n  generation: 2\n  creationTimestamp: null\n' });
      expect(parsePool(text).metadata.name).toBe('test');
      const bad = edit(BASE, { '  name: test\n': '  name: test\n  nmae: x\n', '        name: default\n': '        name: default\n        apiVersion: v1\n' });
      const issues = issuesOf(() => parseManifests(bad, 'pool.yaml'));
      expectIssue(issues, { path: 'metadata.nmae', line: 5, message: /unknown field/ });
      expectIssue(issues, { path: 'spec.template.spec.nodeClassRef.apiVersion', line: 17, message: /unknown field/ });
    });

    it('requires nodeClassRef, reported on the template spec line 11', () => {
      const text = edit(BASE, { '      nodeClassRef:\n        group: karpenter.k8s.aws\n        kind: EC2NodeClass\n        name: default\n': '' });
      expectIssue(issuesOf(() => parseManifests(text, 'pool.yaml')), { path: 'spec.template.spec.nodeClassRef', line: 11, message: /required/ });
    });

    it('requires group, kind and name in nodeClassRef', () => {
      const text = edit(BASE, { '        group: karpenter.k8s.aws\n        kind: EC2NodeClass\n': '' });
      const issues = issuesOf(() => parseManifests(text, 'pool.yaml'));
      expectIssue(issues, { path: 'spec.template.spec.nodeClassRef.group', line: 12 });
      expectIssue(issues, { path: 'spec.template.spec.nodeClassRef.kind', line: 12 });
    });

    it('rejects an expireAfter Karpenter does not accept (sub-second)', () => {
      const text = edit(BASE, { '        name: default\n': '        name: default\n      expireAfter: 500ms\n' });
      expectIssue(issuesOf(() => parseManifests(text, 'pool.yaml')), { path: 'spec.template.spec.expireAfter', line: 16 });
    });

    it('rejects a malformed limit quantity at spec.limits.cpu', () => {
      const text = edit(BASE, { '  weight: 10\n': '  weight: 10\n  limits:\n    cpu: lots\n' });
      expectIssue(issuesOf(() => parseManifests(text, 'pool.yaml')), { path: 'spec.limits.cpu', line: 8, message: /quantity/ });
    });

    it('accepts numeric limits and keeps them as strings', () => {
      const text = edit(BASE, { '  weight: 10\n': '  weight: 10\n  limits:\n    cpu: 400\n    nvidia.com/gpu: 8\n' });
      expect(parsePool(text).spec.limits).toEqual({ cpu: '400', 'nvidia.com/gpu': '8' });
    });

    it('rejects a taint with an unknown effect and one without a key', () => {
      const text = edit(BASE, { '          values: ["spot"]\n': '          values: ["spot"]\n      taints:\n        - key: a\n          effect: Sometimes\n      startupTaints:\n        - effect: NoSchedule\n' });
      const issues = issuesOf(() => parseManifests(text, 'pool.yaml'));
      expectIssue(issues, { path: 'spec.template.spec.taints[0].effect', line: 22 });
      expectIssue(issues, { path: 'spec.template.spec.startupTaints[0].key', line: 24, message: /required/ });
    });

    it('reports every problem of a document at once', () => {
      const text = edit(BASE, { 'weight: 10': 'weight: 0', 'operator: In': 'operator: Gt', 'team: a': 'karpenter.sh/foo: a' });
      expect(issuesOf(() => parseManifests(text, 'pool.yaml')).map((i) => i.path)).toEqual([
        'spec.weight',
        'spec.template.metadata.labels["karpenter.sh/foo"]',
        'spec.template.spec.requirements[0].values[0]',
      ]);
    });
  });
});
