// Hostile scenario input (issue 21): every bad input is refused at once, all or nothing, with file:line:column and
// the field path, and nothing is dropped silently. The CLI side (exit status 2, stderr) is test/cli/input-limits.test.ts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { simulateScenario } from '../../shared/cli/simulate.js';
import { ownValue } from '../../shared/core/api/labels.js';
import { labelSelectorMatches } from '../../shared/core/api/object-meta.js';
import { Requirements } from '../../shared/core/scheduling/requirements.js';
import { MAX_SCENARIO_BYTES, MAX_SCENARIO_DOCUMENTS, loadScenario } from '../../shared/sim/scenario-loader.js';
import { MAX_SCALE_REPLICAS } from '../../shared/sim/scenario.js';
import { GENERAL_POOL } from '../support/provisioner-harness.js';
import { expectIssue, issuesOfAsync } from '../core/api/validation-expectations.js';

const NOW = Date.UTC(2026, 2, 2, 8);

/** A Deployment `web` (line 6 is `replicas`). */
const deployment = (replicas: number | string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]
`;

/** A Job `batch` (line 6 is `parallelism`, line 7 `completions`). */
const job = (parallelism: number, completions: number) => `apiVersion: batch/v1
kind: Job
metadata:
  name: batch
spec:
  parallelism: ${parallelism}
  completions: ${completions}
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]
`;

/** A Scenario document whose events start on line 7. */
const scenario = (events: string) => `apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: t}
spec:
  start: "2026-03-02T08:00:00Z"
  events:
${events}`;

let dir: string;
const write = (files: Readonly<Record<string, string>>) => {
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
};
const problems = () => issuesOfAsync(loadScenario(dir, { now: NOW }));

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'skiff-limits-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('replica caps', () => {
  it('refuses a Deployment or StatefulSet with more replicas than the simulation runs, and takes the cap itself', async () => {
    write({ 'a.yaml': GENERAL_POOL, 'web.yaml': deployment(1_000_000_000) });
    expectIssue(await problems(), { file: join(dir, 'web.yaml'), path: 'spec.replicas', line: 6, message: new RegExp(`replicas 1000000000 is more than the simulation runs: at most ${MAX_SCALE_REPLICAS} pods`) });
    write({ 'web.yaml': deployment(MAX_SCALE_REPLICAS).replace('kind: Deployment', 'kind: StatefulSet') });
    expect((await loadScenario(dir, { now: NOW })).statefulSets[0]?.spec.replicas).toBe(MAX_SCALE_REPLICAS);
    write({ 'web.yaml': deployment(MAX_SCALE_REPLICAS + 1).replace('kind: Deployment', 'kind: StatefulSet') });
    expectIssue(await problems(), { path: 'spec.replicas', line: 6, message: /at most 20000 pods per workload/ });
  });

  it("refuses a Job's parallelism and completions over the cap, each at its own line", async () => {
    write({ 'a.yaml': GENERAL_POOL, 'job.yaml': job(MAX_SCALE_REPLICAS + 1, 1_000_000_000) });
    const issues = await problems();
    expectIssue(issues, { file: join(dir, 'job.yaml'), path: 'spec.parallelism', line: 6, message: /parallelism 20001 is more than/ });
    expectIssue(issues, { file: join(dir, 'job.yaml'), path: 'spec.completions', line: 7, message: /completions 1000000000 is more than/ });
  });

  it('applies the caps to manifests of apply events, at their place in the Scenario document', async () => {
    const applied = (replicas: number) =>
      `    - {at: 5m, apply: {apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {replicas: ${replicas}, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: x}]}}}}}\n` +
      `    - {at: 6m, apply: {apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {parallelism: ${replicas}, template: {spec: {restartPolicy: Never, containers: [{name: c, image: x}]}}}}}\n`;
    write({ 'a.yaml': GENERAL_POOL, 'scenario.yaml': scenario(applied(1_000_000_000)) });
    const issues = await problems();
    expectIssue(issues, { file: join(dir, 'scenario.yaml'), path: 'spec.events[0].apply.spec.replicas', line: 7, message: /at most 20000 pods per workload/ });
    expectIssue(issues, { file: join(dir, 'scenario.yaml'), path: 'spec.events[1].apply.spec.parallelism', line: 8, message: /at most 20000 pods per workload/ });
    write({ 'scenario.yaml': scenario(applied(3)) });
    expect((await loadScenario(dir, { now: NOW })).spec.events).toHaveLength(2);
  });
});

describe('the YAML as a whole', () => {
  it('refuses a scenario over the size limit before parsing it, naming the folder', async () => {
    write({ 'a.yaml': GENERAL_POOL, 'b.yaml': `# ${'x'.repeat(MAX_SCENARIO_BYTES)}\n` });
    expect(await problems()).toEqual([{ file: dir, message: expect.stringMatching(/^16\.0 MiB of YAML; a scenario may hold at most 16\.0 MiB \(16777216 bytes\)$/) }]);
  });

  it('counts the files of a folder together against the size limit', async () => {
    const half = `# ${'x'.repeat(MAX_SCENARIO_BYTES / 2)}\n`;
    write({ 'a.yaml': GENERAL_POOL, 'b.yaml': half });
    await expect(loadScenario(dir, { now: NOW })).resolves.toBeDefined();
    write({ 'c.yaml': half });
    expect(await problems()).toEqual([{ file: dir, message: expect.stringMatching(/of YAML; a scenario may hold at most 16\.0 MiB/) }]);
  });

  it('stops reading at the document limit and says where it was reached, empty documents counted', async () => {
    write({ 'a.yaml': GENERAL_POOL, 'b.yaml': '---\n'.repeat(MAX_SCENARIO_DOCUMENTS - 2) });
    await expect(loadScenario(dir, { now: NOW })).resolves.toBeDefined();
    write({ 'b.yaml': '---\n'.repeat(3 * MAX_SCENARIO_DOCUMENTS) });
    const issues = await problems();
    expect(issues).toEqual([
      { file: join(dir, 'b.yaml'), line: MAX_SCENARIO_DOCUMENTS - 1, column: 1, message: expect.stringMatching(/^more than 10000 YAML documents \(empty ones counted\); a scenario may hold at most 10000/) },
    ]);
  });

  it('does not read the files after the one that reached the document limit', async () => {
    write({ 'a.yaml': GENERAL_POOL, 'b.yaml': '---\n'.repeat(MAX_SCENARIO_DOCUMENTS), 'c.yaml': 'kind: Nonsense\n' });
    const issues = await problems();
    expect(issues.map((i) => i.file)).toEqual([join(dir, 'b.yaml')]);
  });
});

describe('an empty scenario', () => {
  it.each([
    ['an empty file', ''],
    ['comments only', '# nothing here\n# at all\n'],
    ['empty documents', '---\n# one\n---\n---\n'],
  ])('refuses %s, naming file:line:col', async (_, text) => {
    write({ 's.yaml': text });
    expect(await issuesOfAsync(loadScenario(join(dir, 's.yaml'), { now: NOW }))).toEqual([
      { file: join(dir, 's.yaml'), line: 1, column: 1, message: expect.stringMatching(/^nothing to simulate: no YAML document in it \(only comments or empty documents\)/) },
    ]);
    expect(await problems()).toEqual([{ file: join(dir, 's.yaml'), line: 1, column: 1, message: expect.stringMatching(/^nothing to simulate/) }]);
  });

  it('refuses a scenario of kinds Skiff does not read only, listing them', async () => {
    write({ 'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\n' });
    expect(await problems()).toEqual([
      { file: join(dir, 'cm.yaml'), line: 1, column: 1, message: expect.stringMatching(new RegExp(`every document is of a kind Skiff does not read \\(ConfigMap settings at ${join(dir, 'cm.yaml')}:1, Service web at ${join(dir, 'cm.yaml')}:5\\)`)) },
    ]);
  });

  it('takes a Scenario document alone, or manifests without one', async () => {
    write({ 's.yaml': 'apiVersion: skiff.dev/v1alpha1\nkind: Scenario\nmetadata: {name: quiet}\n' });
    expect((await loadScenario(dir, { now: NOW })).name).toBe('quiet');
    rmSync(join(dir, 's.yaml'));
    write({ 'web.yaml': deployment(1) });
    expect((await loadScenario(dir, { now: NOW })).deployments).toHaveLength(1);
  });

  it('reports a YAML syntax error alone, not as an empty scenario', async () => {
    write({ 's.yaml': 'key: [unclosed\n' });
    const issues = await problems();
    expect(issues.length).toBeGreaterThan(0);
    expect(issues.every((i) => /YAML syntax error/.test(i.message))).toBe(true);
  });
});

describe('__proto__ and other keys a JavaScript object holds specially', () => {
  it('refuses a label, annotation, nodeSelector or resource key __proto__ with the qualified-name message', async () => {
    const pod = `apiVersion: v1
kind: Pod
metadata:
  name: p
  labels: {app: p, __proto__: x}
  annotations: {__proto__: y}
spec:
  nodeSelector: {__proto__: z}
  containers: [{name: c, image: x, resources: {requests: {cpu: 100m, __proto__: "1"}}}]
`;
    write({ 'a.yaml': GENERAL_POOL, 'pod.yaml': pod });
    const issues = await problems();
    const qualified = /"__proto__": must be a qualified name/;
    expectIssue(issues, { file: join(dir, 'pod.yaml'), path: 'metadata.labels.__proto__', line: 5, message: qualified });
    expectIssue(issues, { path: 'metadata.annotations.__proto__', line: 6, message: qualified });
    expectIssue(issues, { path: 'spec.nodeSelector.__proto__', line: 8, message: qualified });
    expectIssue(issues, { path: 'spec.containers[0].resources.requests.__proto__', line: 9, message: qualified });
    expect(issues.find((i) => i.path === 'metadata.labels.__proto__')?.column).toBe(20);
  });

  it('refuses __proto__ where any key would do (an AWS tag) or in a loose object, instead of dropping it', async () => {
    const nodeClass = GENERAL_POOL.replace('role: ', 'tags: {__proto__: x}\n  role: ');
    expect(nodeClass).not.toBe(GENERAL_POOL);
    const pod = 'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: x, resources: {claims: [{name: g, __proto__: {a: 1}}]}}]\n';
    write({ 'a.yaml': nodeClass, 'pod.yaml': pod });
    const issues = await problems();
    expectIssue(issues, { file: join(dir, 'a.yaml'), path: 'spec.tags.__proto__', line: 9, message: /the key "__proto__" is not supported: Skiff would lose it/ });
    expectIssue(issues, { file: join(dir, 'pod.yaml'), path: 'spec.containers[0].resources.claims[0].__proto__', line: 5, message: /the key "__proto__" is not supported/ });
  });

  it("refuses __proto__ in the Scenario document's maps and in applied manifests", async () => {
    const events = `    - {at: 1m, spotInterruption: {nodeSelector: {__proto__: a}}}
    - {at: 2m, apply: {apiVersion: v1, kind: Pod, metadata: {name: p, labels: {__proto__: b}}, spec: {containers: [{name: c, image: x}]}}}
`;
    const doc = scenario(events).replace('  events:\n', '  nodes: [{name: n1, instanceType: m5.large, zone: us-west-2a, capacityType: on-demand, labels: {__proto__: c}}]\n  events:\n');
    write({ 'a.yaml': GENERAL_POOL, 'scenario.yaml': doc });
    const issues = await problems();
    expectIssue(issues, { path: 'spec.nodes[0].labels.__proto__', line: 6, message: /must be a qualified name/ });
    expectIssue(issues, { path: 'spec.events[0].spotInterruption.nodeSelector.__proto__', line: 8, message: /must be a qualified name/ });
    expectIssue(issues, { path: 'spec.events[1].apply.metadata.labels.__proto__', line: 9, message: /must be a qualified name/ });
  });

  it('keeps constructor and prototype as ordinary label, annotation and nodeSelector keys', async () => {
    const pod = `apiVersion: v1
kind: Pod
metadata:
  name: p
  labels: {constructor: a, prototype: b, toString: c}
  annotations: {constructor: d}
spec:
  nodeSelector: {constructor: e, valueOf: f}
  containers: [{name: c, image: x}]
`;
    write({ 'a.yaml': GENERAL_POOL, 'pod.yaml': pod });
    const [loaded] = (await loadScenario(dir, { now: NOW })).pods;
    expect(loaded?.metadata.labels).toEqual({ constructor: 'a', prototype: 'b', toString: 'c' });
    expect(Object.keys(loaded?.metadata.labels ?? {})).toEqual(['constructor', 'prototype', 'toString']);
    expect(loaded?.metadata.annotations).toEqual({ constructor: 'd' });
    expect(loaded?.spec.nodeSelector).toEqual({ constructor: 'e', valueOf: 'f' });
  });
});

describe('quantities', () => {
  it('refuses a quoted quantity with whitespace around it, as Kubernetes\' ParseQuantity does', async () => {
    write({ 'a.yaml': GENERAL_POOL, 'web.yaml': deployment(1).replace('cpu: 100m', 'cpu: "100m ", memory: " 1Gi"') });
    const issues = await problems();
    expectIssue(issues, { file: join(dir, 'web.yaml'), path: 'spec.template.spec.containers[0].resources.requests.cpu', line: 11, message: /"100m ": not a valid Kubernetes quantity: remove the whitespace around it/ });
    expectIssue(issues, { path: 'spec.template.spec.containers[0].resources.requests.memory', line: 11, message: /" 1Gi": not a valid Kubernetes quantity/ });
  });

  it('takes a plain YAML scalar, whose surrounding spaces YAML itself strips', async () => {
    write({ 'a.yaml': GENERAL_POOL, 'web.yaml': deployment(1).replace('{cpu: 100m}', '{cpu: 100m   }') });
    expect((await loadScenario(dir, { now: NOW })).deployments[0]?.spec.template.spec.containers[0]?.resources?.requests).toEqual({ cpu: '100m' });
  });

  it('refuses whitespace in NodePool limits and LimitRange values too', async () => {
    const pool = GENERAL_POOL.replace('spec:\n  template:\n    metadata', 'spec:\n  limits: {cpu: "100 "}\n  template:\n    metadata');
    expect(pool).not.toBe(GENERAL_POOL);
    const limitRange = 'apiVersion: v1\nkind: LimitRange\nmetadata: {name: lr}\nspec:\n  limits: [{type: Container, default: {memory: "1Gi\\t"}}]\n';
    write({ 'a.yaml': pool, 'lr.yaml': limitRange });
    const issues = await problems();
    expectIssue(issues, { file: join(dir, 'a.yaml'), path: 'spec.limits.cpu', line: 15, message: /remove the whitespace/ });
    expectIssue(issues, { file: join(dir, 'lr.yaml'), path: 'spec.limits[0].default.memory', line: 5, message: /remove the whitespace/ });
  });
});

describe('label keys named like members of Object.prototype (constructor, toString, valueOf) are ordinary keys', () => {
  /** A NodePool labelling its nodes `<a>: yes`, and three pods: one selecting `<a>: yes`, one requiring `<b>` absent, one `<c>` present. */
  const cluster = (a: string, b: string, c: string) => ({
    'pool.yaml': GENERAL_POOL.replace('labels: {workload-type: general}', `labels: {workload-type: general, ${a}: "yes"}`),
    'pods.yaml': [
      `apiVersion: v1\nkind: Pod\nmetadata: {name: selects}\nspec:\n  nodeSelector: {${a}: "yes"}\n  containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]\n`,
      `apiVersion: v1\nkind: Pod\nmetadata: {name: absent}\nspec:\n  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: ${b}, operator: DoesNotExist}]}]}}}\n  containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]\n`,
      `apiVersion: v1\nkind: Pod\nmetadata: {name: present}\nspec:\n  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: ${c}, operator: Exists}]}]}}}\n  containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]\n`,
    ].join('---\n'),
    'scenario.yaml': 'apiVersion: skiff.dev/v1alpha1\nkind: Scenario\nmetadata: {name: keys}\nspec:\n  start: "2026-03-02T08:00:00Z"\n  duration: 10m\n',
  });
  /** Which pods ran, whether their node carried the NodePool's label, and why the others are pending (keys renamed back). */
  const outcome = async (files: Record<string, string>, a: string, rename: (text: string) => string) => {
    write(files);
    const { result } = await simulateScenario(dir, { seed: 1 });
    const labelOf = new Map(result.nodes.map((n) => [n.name, ownValue(n.labels, a)]));
    return {
      pods: result.pods.map((p) => ({ name: p.name, label: p.node === null ? null : labelOf.get(p.node) })),
      pending: result.unschedulable.map((u) => ({ pod: u.pod, reason: rename(u.reason) })),
      violations: result.violations,
    };
  };

  it('schedules, diagnoses and stores them as it does any other key', async () => {
    const odd = await outcome(cluster('constructor', 'toString', 'valueOf'), 'constructor', (t) => t.replaceAll('constructor', 'team').replaceAll('valueOf', 'gpu'));
    rmSync(dir, { recursive: true, force: true });
    dir = mkdtempSync(join(tmpdir(), 'skiff-limits-'));
    const plain = await outcome(cluster('team', 'zone-x', 'gpu'), 'team', (t) => t);
    expect(odd).toEqual(plain);
    // What the plain keys give: the first two pods run on a node labelled by the NodePool, the third waits.
    expect(plain.pods).toEqual([
      { name: 'selects', label: 'yes' },
      { name: 'absent', label: 'yes' },
      { name: 'present', label: null },
    ]);
  }, 120_000);

  it('matches selectors and requirements on own labels only', () => {
    expect(labelSelectorMatches({ matchExpressions: [{ key: 'constructor', operator: 'DoesNotExist' }] }, {})).toBe(true);
    expect(labelSelectorMatches({ matchExpressions: [{ key: 'toString', operator: 'Exists' }] }, {})).toBe(false);
    expect(labelSelectorMatches({ matchExpressions: [{ key: 'toString', operator: 'Exists' }] }, { toString: 'x' })).toBe(true);
    const absent = Requirements.from([{ key: 'constructor', operator: 'DoesNotExist' }]);
    expect(absent.isSatisfiedBy({})).toBe(true);
    expect(absent.firstUnsatisfied({})).toBeUndefined();
    expect(Requirements.from([{ key: 'valueOf', operator: 'Exists' }]).isSatisfiedBy({})).toBe(false);
  });
});
