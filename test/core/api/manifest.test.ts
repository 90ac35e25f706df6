import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import {
  MANIFEST_KINDS,
  formatPath,
  manifestBodySchema,
  parseManifests,
  readManifestDocuments,
  unknownFieldMessage,
  validateManifestObject,
} from '../../../shared/core/api/manifest.js';
import { ValidationError } from '../../../shared/core/errors.js';
import { expectIssue, issuesOf } from './validation-expectations.js';

const POD = (name: string) => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
spec:
  containers: [{name: c}]
`;

describe('manifest', () => {
  describe('parseManifests', () => {
    it('parses every document of a multi-document file with its first line as source', () => {
      const text = `# leading comment\n---\n${POD('a')}---\n\n${POD('b')}`;
      const manifests = parseManifests(text, 'pods.yaml');
      expect(manifests.map((m) => [m.kind, m.apiVersion, m.object.metadata.name, m.source])).toEqual([
        ['Pod', 'v1', 'a', { file: 'pods.yaml', line: 3 }],
        ['Pod', 'v1', 'b', { file: 'pods.yaml', line: 11 }],
      ]);
    });

    it('skips empty documents and comment-only documents', () => {
      expect(parseManifests(`---\n---\n# nothing\n---\n${POD('a')}---\n`, 'f.yaml')).toHaveLength(1);
      expect(parseManifests('', 'empty.yaml')).toEqual([]);
      expect(parseManifests('# just a comment\n', 'c.yaml')).toEqual([]);
    });

    it('dispatches every supported kind', () => {
      const kinds = parseManifests(
        [
          'apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: c}\nspec: {amiSelectorTerms: [{alias: al2023@latest}], subnetSelectorTerms: [{id: subnet-1}], securityGroupSelectorTerms: [{id: sg-1}], role: r}',
          'apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: p}\nspec: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: c}}}}',
          POD('x'),
          'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c}]}}}',
          'apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}\nspec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c}]}}}',
          'apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds}\nspec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c}]}}}',
          'apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {template: {spec: {restartPolicy: Never, containers: [{name: c}]}}}',
          'apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {maxUnavailable: 1}',
          'apiVersion: v1\nkind: LimitRange\nmetadata: {name: l}\nspec: {limits: [{type: Container, defaultRequest: {cpu: 100m}}]}',
        ].join('\n---\n'),
        'all.yaml',
      ).map((m) => m.kind);
      expect(kinds.sort()).toEqual(Object.keys(MANIFEST_KINDS).sort());
    });

    it('reports a YAML syntax error with its line', () => {
      const issues = issuesOf(() => parseManifests(`${POD('a')}---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: [unclosed\n`, 'bad.yaml'));
      expect(issues).toHaveLength(1);
      expect(issues[0]).toMatchObject({ file: 'bad.yaml', message: expect.stringMatching(/^YAML syntax error/) });
      expect(issues[0]?.line).toBeGreaterThanOrEqual(10);
    });

    it('reports a duplicate key as a YAML error on its line', () => {
      const issues = issuesOf(() => parseManifests('apiVersion: v1\nkind: Pod\nkind: Pod\n', 'dup.yaml'));
      expect(issues).toEqual([expect.objectContaining({ file: 'dup.yaml', line: 3, message: expect.stringMatching(/unique/) })]);
    });

    it('reports a bad indentation on the offending line', () => {
      const issues = issuesOf(() => parseManifests('apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n labels: {}\n', 'indent.yaml'));
      expect(issues).toEqual([expect.objectContaining({ line: 5, column: 1, message: expect.stringMatching(/same column/) })]);
      const tabs = issuesOf(() => parseManifests('a:\n\t- b\n', 'tabs.yaml'));
      expect(tabs).toEqual([expect.objectContaining({ line: 2, message: expect.stringMatching(/Tabs/) })]);
    });

    it('names an unknown kind and the supported ones', () => {
      expectIssue(issuesOf(() => parseManifests('apiVersion: v1\nkind: Service\nmetadata: {name: s}\n', 'svc.yaml')), {
        path: 'kind',
        line: 2,
        message: /unknown kind "Service".*NodePool \(karpenter.sh\/v1\).*LimitRange \(v1\)/,
      });
    });

    it('rejects a known kind with the wrong apiVersion', () => {
      expectIssue(issuesOf(() => parseManifests('apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: p}\n', 'old.yaml')), {
        path: 'apiVersion',
        line: 1,
        message: /NodePool must have apiVersion karpenter.sh\/v1/,
      });
    });

    it('rejects a document that is not a mapping, and one without kind', () => {
      const issues = issuesOf(() => parseManifests('- a\n- b\n---\napiVersion: v1\nmetadata: {name: x}\n', 'odd.yaml'));
      expect(issues).toEqual([
        expect.objectContaining({ line: 1, message: expect.stringMatching(/must be a mapping/) }),
        expect.objectContaining({ line: 4, path: 'kind', message: expect.stringMatching(/is required/) }),
      ]);
    });

    it('collects the problems of every document into one error, ordered by line', () => {
      let error: unknown;
      try {
        parseManifests(`${POD('Bad_Name')}---\n${POD('ok')}---\napiVersion: v1\nkind: Nope\n---\nkey: [\n`, 'many.yaml');
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ValidationError);
      const issues = (error as ValidationError).issues;
      expect(issues.map((i) => i.line)).toEqual([4, 16, 19]);
      expect((error as ValidationError).message).toMatch(/^many\.yaml:4:\d+: metadata\.name: /);
    });

    it('points a problem inside a flow mapping at the value', () => {
      const issues = issuesOf(() => parseManifests('apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers: [{name: c, ports: [{containerPort: "x"}]}]\n', 'flow.yaml'));
      expect(issues).toEqual([expect.objectContaining({ line: 5, column: 50, path: 'spec.containers[0].ports[0].containerPort' })]);
    });

    it('points an unknown field at its key, not its value', () => {
      const issues = issuesOf(() => parseManifests('apiVersion: v1\nkind: Pod\nmetadata: {name: a, lables: x}\nspec:\n  containers: [{name: c}]\n', 'k.yaml'));
      expect(issues).toEqual([expect.objectContaining({ line: 3, column: 21, path: 'metadata.lables', message: 'unknown field "lables" (did you mean "labels"?)' })]);
    });

    it('reports a misspelt required field once, at the typo, not also as the field it meant missing', () => {
      const pod = (constraint: string) =>
        `apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, ${constraint}}]\n  containers: [{name: c}]\n`;
      const typo = issuesOf(() => parseManifests(pod('whenUnsatisfable: DoNotSchedule'), 't.yaml'));
      expect(typo.map((i) => [i.path, i.message])).toEqual([['spec.topologySpreadConstraints[0].whenUnsatisfable', 'unknown field "whenUnsatisfable" (did you mean "whenUnsatisfiable"?)']]);
      // Missing without a typo beside it: still required, and said so rather than "expected one of".
      const missing = issuesOf(() => parseManifests(pod('labelSelector: {}'), 'm.yaml'));
      expect(missing.map((i) => [i.path, i.message])).toEqual([['spec.topologySpreadConstraints[0].whenUnsatisfiable', 'is required']]);
    });

    it('follows YAML aliases and merge keys', () => {
      const text = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  labels: &l {app: a}\n  annotations: *l\nspec:\n  containers: [{name: c}]\n';
      const [pod] = parseManifests(text, 'alias.yaml');
      expect(pod?.object.metadata.annotations).toEqual({ app: 'a' });
    });
  });

  describe('readManifestDocuments', () => {
    it('locates a missing field at its deepest existing ancestor key', () => {
      const { documents } = readManifestDocuments('a:\n  b:\n    c: 1\n', 'x.yaml');
      const doc = documents[0];
      expect(doc?.locate(['a', 'b', 'missing'])).toEqual({ line: 2, column: 3 });
      expect(doc?.locate(['a', 'b', 'c'])).toEqual({ line: 3, column: 8 });
      expect(doc?.locate([])).toEqual({ line: 1, column: 1 });
    });
  });

  describe('validateManifestObject', () => {
    it('validates plain objects and returns path issues without lines', () => {
      const result = validateManifestObject({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a' }, spec: { containers: [] } });
      expect(result).toEqual({ ok: false, issues: [{ path: ['spec', 'containers'], message: 'a pod needs at least one container' }] });
    });

    it('lists extra supported kinds in the unknown-kind message', () => {
      const result = validateManifestObject({ apiVersion: 'x/v1', kind: 'Foo' }, { alsoSupported: ['Scenario (skiff.dev/v1alpha1)'] });
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.issues[0]?.message).toMatch(/Scenario \(skiff.dev\/v1alpha1\)$/);
    });
  });

  describe('manifestBodySchema', () => {
    it('reports nested problems at their path inside the embedding value', () => {
      const result = manifestBodySchema.safeParse({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a' }, spec: { containers: [{ name: 'c', ports: [{ containerPort: 0 }] }] } });
      expect(result.error?.issues.map((i) => i.path)).toEqual([['spec', 'containers', 0, 'ports', 0, 'containerPort']]);
    });
  });

  describe('formatPath', () => {
    it('writes indices in brackets and quotes keys that are not identifiers', () => {
      expect(formatPath(['spec', 'template', 'spec', 'requirements', 0, 'operator'])).toBe('spec.template.spec.requirements[0].operator');
      expect(formatPath(['metadata', 'labels', 'karpenter.sh/discovery'])).toBe('metadata.labels["karpenter.sh/discovery"]');
      expect(formatPath([])).toBe('');
    });

    it('never loses a segment', () => {
      fc.assert(
        fc.property(fc.array(fc.oneof(fc.nat(99), fc.string({ minLength: 1, maxLength: 8 })), { maxLength: 6 }), (path) => {
          const text = formatPath(path);
          for (const seg of path) expect(text).toContain(typeof seg === 'number' ? `[${seg}]` : /^[A-Za-z_$][\w$-]*$/.test(seg) ? seg : JSON.stringify(seg));
        }),
      );
    });
  });

  describe('a value outside a fixed set, and other field messages', () => {
    /** A NodePool with one requirement of `operator`, as a YAML document (numbers such as 1e400 written bare). */
    const pool = (o: { operator?: string; policy?: string; labels?: Record<string, string>; limits?: Record<string, unknown>; budgets?: unknown[] }) =>
      stringify({
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name: 'general' },
        spec: {
          template: {
            ...(o.labels ? { metadata: { labels: o.labels } } : {}),
            spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [{ key: 'karpenter.sh/capacity-type', operator: o.operator ?? 'In', values: ['spot'] }] },
          },
          ...(o.limits ? { limits: o.limits } : {}),
          disruption: { consolidationPolicy: o.policy ?? 'WhenEmpty', ...(o.budgets ? { budgets: o.budgets } : {}) },
        },
      });
    const messages = (text: string) => {
      try {
        parseManifests(text, 'pool.yaml');
      } catch (e) {
        if (e instanceof ValidationError) return e.issues.map((i) => `${i.path}: ${i.message}`);
        throw e;
      }
      return [];
    };
    const OPERATORS = '"In"|"NotIn"|"Exists"|"DoesNotExist"|"Gt"|"Lt"|"Gte"|"Lte"';

    it('suggests the option a case or spelling slip meant (trial: "operator: in" got no hint)', () => {
      expect(messages(pool({ operator: 'in', policy: 'WhenEmptyOrUnderutilised' }))).toEqual([
        `spec.template.spec.requirements[0].operator: Invalid option: expected one of ${OPERATORS} (did you mean "In"?)`,
        'spec.disruption.consolidationPolicy: Invalid option: expected one of "WhenEmpty"|"WhenEmptyOrUnderutilized" (did you mean "WhenEmptyOrUnderutilized"?)',
      ]);
    });

    it('says why a number YAML reads as Infinity is refused (trial: "received number")', () => {
      expect(messages(pool({ limits: { cpu: Number.POSITIVE_INFINITY } }).replace('.inf', '1e400'))).toEqual([
        'spec.limits.cpu: expected string or number, received Infinity (a number too large to read, or not a number)',
      ]);
    });

    it('says what a label key must be when a map refuses one (trial: "Invalid key in record")', () => {
      for (const key of ['a\u001bx', 'bad key']) {
        expect(messages(pool({ labels: { [key]: 'b' } }))).toEqual([
          `spec.template.metadata.labels[${JSON.stringify(key)}]: ${JSON.stringify(key)}: must be a qualified name (alphanumerics, "-", "_" or ".", starting and ending with an alphanumeric, at most 63 characters, optionally prefixed by a DNS subdomain and "/")`,
        ]);
      }
    });

    it('names only the format a budget nodes value breaks, not also the int32 bound (trial)', () => {
      expect(messages(pool({ budgets: [{ nodes: 'x' }] }))).toEqual([
        'spec.disruption.budgets[0].nodes: nodes must be a percentage between 0% and 100% (e.g. "10%") or a non-negative integer',
      ]);
    });

    it('does not add a "did you mean" beside a migration hint', () => {
      expect(messages(pool({ policy: 'WhenUnderutilized' }))).toEqual([
        'spec.disruption.consolidationPolicy: Invalid option: expected one of "WhenEmpty"|"WhenEmptyOrUnderutilized": WhenUnderutilized was renamed WhenEmptyOrUnderutilized in karpenter.sh/v1',
      ]);
    });

    it('keeps zod\'s message when nothing is close', () => {
      expect(messages(pool({ operator: 'Within', policy: 'Always' }))).toEqual([
        `spec.template.spec.requirements[0].operator: Invalid option: expected one of ${OPERATORS}`,
        'spec.disruption.consolidationPolicy: Invalid option: expected one of "WhenEmpty"|"WhenEmptyOrUnderutilized"',
      ]);
    });
  });

  describe('unknownFieldMessage', () => {
    it('suggests a close field and stays quiet when nothing is close', () => {
      expect(unknownFieldMessage('expireAfer', ['expireAfter', 'nodeClassRef'])).toBe('unknown field "expireAfer" (did you mean "expireAfter"?)');
      expect(unknownFieldMessage('zzz', ['expireAfter'])).toBe('unknown field "zzz"');
    });
  });
});
