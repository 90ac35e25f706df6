import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../shared/cli/main.js';
import { validateText, type ValidationReport } from '../../shared/cli/validate.js';
import { GENERAL_POOL } from '../support/provisioner-harness.js';
import { formatIssue } from '../../shared/core/errors.js';

async function validate(...args: string[]): Promise<{ status: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const status = await main(['validate', ...args], { out: (t) => (out += t), err: (t) => (err += t), isTTY: false });
  return { status, out, err };
}

async function simulate(...args: string[]): Promise<{ status: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const status = await main(['simulate', ...args], { out: (t) => (out += t), err: (t) => (err += t), isTTY: false });
  return { status, out, err };
}

/** The `file:line:column: path: message` lines of `simulate`'s refusal (after its first line). */
function simulateIssues(err: string): string[] {
  return err.split('\n').filter((l) => l !== '' && !l.startsWith('skiff simulate:'));
}

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-validate-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const SEED = 'examples/seed';

/** A NodePool with two mistakes: weight out of range (line 6, column 11) and an unknown operator (line 12, column 21). */
const BROKEN_POOL = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: broken
spec:
  weight: 500
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - key: kubernetes.io/arch
          operator: Like
`;

const GOOD_CLASS = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: my-cluster}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: my-cluster}}]
  role: KarpenterNodeRole-my-cluster
`;

describe('skiff validate', () => {
  describe('valid files', () => {
    it('exits 0 for every seed file and says how many objects it checked', async () => {
      const files = readdirSync(SEED).map((f) => join(SEED, f));
      const r = await validate(...files);
      expect(r.status).toBe(0);
      expect(r.err).toBe('');
      expect(r.out).toBe(`${files.length} files valid (12 objects)\n`);
    });

    it('validates a folder, Scenario document included', async () => {
      const r = await validate(SEED, '--json');
      expect(r.status).toBe(0);
      const report = JSON.parse(r.out) as ValidationReport;
      expect(report.valid).toBe(true);
      const kinds = report.files.flatMap((f) => f.objects.map((o) => `${o.kind}/${o.name}`));
      expect(kinds).toEqual(expect.arrayContaining(['NodePool/general', 'NodePool/gpu', 'NodePool/batch', 'EC2NodeClass/default', 'EC2NodeClass/gpu-class', 'Scenario/seed']));
    });
  });

  describe('a broken file', () => {
    it('prints file:line:column: path: message for each problem and exits 1', async () => {
      const dir = folder({ 'pool.yaml': BROKEN_POOL });
      const r = await validate(join(dir, 'pool.yaml'));
      expect(r.status).toBe(1);
      expect(r.out.split('\n')).toEqual([
        `${join(dir, 'pool.yaml')}:6:11: spec.weight: weight must be an integer between 1 and 100`,
        expect.stringMatching(new RegExp(`^${join(dir, 'pool.yaml').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:12:21: spec\\.template\\.spec\\.requirements\\[0\\]\\.operator: .*"In"`)),
        '2 problems in 1 of 1 file',
        '',
      ]);
    });

    it('reports the same problems as JSON with file, line, column and path', async () => {
      const dir = folder({ 'pool.yaml': BROKEN_POOL });
      const r = await validate(join(dir, 'pool.yaml'), '--json');
      expect(r.status).toBe(1);
      const report = JSON.parse(r.out) as ValidationReport;
      expect(report.valid).toBe(false);
      expect(report.files[0]?.issues.map(({ line, column, path }) => ({ line, column, path }))).toEqual([
        { line: 6, column: 11, path: 'spec.weight' },
        { line: 12, column: 21, path: 'spec.template.spec.requirements[0].operator' },
      ]);
    });

    it('reports YAML syntax errors, unknown kinds, unknown fields and empty files', () => {
      expect(validateText('a: [1, 2\n', 'syntax.yaml', 0).issues[0]?.message).toMatch(/^YAML syntax error/);
      expect(validateText('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n', 'cm.yaml', 0, { strict: true }).issues).toEqual([
        expect.objectContaining({ file: 'cm.yaml', line: 2, path: 'kind', message: expect.stringMatching(/^unknown kind "ConfigMap"/) }),
      ]);
      // A near miss of a Skiff kind, or an unknown kind under karpenter.sh, is a problem even without --strict.
      expect(validateText('apiVersion: karpenter.sh/v1\nkind: NodePol\nmetadata: {name: x}\n', 'p.yaml', 0).issues[0]?.message).toMatch(/^unknown kind "NodePol"/);
      expect(validateText('apiVersion: karpenter.sh/v1\nkind: NodeOverlay\nmetadata: {name: x}\n', 'o.yaml', 0).issues[0]?.message).toMatch(/^unknown kind "NodeOverlay"/);
      expect(validateText('apiVersion: example.com/v1\nkind: Deploymnt\nmetadata: {name: x}\n', 'd.yaml', 0).issues[0]?.message).toMatch(/^unknown kind "Deploymnt"/);
      expect(validateText(GOOD_CLASS.replace('role:', 'rol:'), 'c.yaml', 0).issues.map((i) => i.message)).toContain('unknown field "rol" (did you mean "role"?)');
      expect(validateText('# nothing here\n', 'empty.yaml', 0)).toMatchObject({ valid: false, issues: [{ file: 'empty.yaml', message: 'no Kubernetes objects in this file' }] });
    });

    it("refuses annotations over the API server's 256 KiB and accepts them at the limit", () => {
      const withAnnotation = (bytes: number) => GOOD_CLASS.replace('metadata: {name: default}', `metadata: {name: default, annotations: {note: "${'x'.repeat(bytes - 'note'.length)}"}}`);
      expect(validateText(withAnnotation(256 * 1024), 'c.yaml', 0).valid).toBe(true);
      expect(validateText(withAnnotation(256 * 1024 + 1), 'c.yaml', 0).issues).toEqual([
        expect.objectContaining({ line: 3, path: 'metadata.annotations', message: 'annotations total 262145 bytes; the API server allows at most 262144 (256 KiB)' }),
      ]);
    });
  });

  describe('kinds Skiff does not read, and Karpenter v1beta1 habits', () => {
    it('skips a Service and a ConfigMap in a manifests folder, lists them, and exits 0; --strict fails on them', async () => {
      const dir = folder({
        'app.yaml': `apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {a: b}\n---\n${GOOD_CLASS}`,
      });
      const r = await validate(dir);
      expect(r.status).toBe(0);
      expect(r.out).toBe('1 file valid (1 object; skipped 2 objects of kinds Skiff does not read (ConfigMap, Service; --strict reports them))\n');
      const json = JSON.parse((await validate(dir, '--json')).out) as ValidationReport;
      expect(json.files[0]!.skipped).toEqual([
        { kind: 'Service', apiVersion: 'v1', name: 'web', line: 1 },
        { kind: 'ConfigMap', apiVersion: 'v1', name: 'cfg', line: 6 },
      ]);
      const strict = await validate(dir, '--strict');
      expect(strict.status).toBe(1);
      expect(strict.out).toMatch(/app\.yaml:2:7: kind: unknown kind "Service"/);
    });

    it('reads a List item by item (kubectl get -o yaml) and a Node as a snapshot\'s starting node, never as a typo of Pod; hidden folders and node_modules are not walked', async () => {
      const list = 'apiVersion: v1\nkind: List\nitems:\n- {apiVersion: karpenter.sh/v1, kind: NodePool, metadata: {name: bad}, spec: {weight: 1000}}\n';
      expect(validateText(list, 'l.yaml', 0).issues).toContainEqual(expect.objectContaining({ line: 4, path: 'items[0].spec.weight' }));
      // a problem across objects names the item too, as the file reads
      const pair = `apiVersion: v1\nkind: List\nitems:\n- ${GOOD_CLASS.replace(/\n(?=.)/g, '\n  ')}- {apiVersion: karpenter.sh/v1, kind: NodePool, metadata: {name: p}, spec: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: defualt}}}}}\n`;
      const dir0 = folder({ 'list.yaml': pair });
      expect((await validate(dir0)).out).toMatch(/list\.yaml:\d+:\d+: items\[1\]\.spec\.template\.spec\.nodeClassRef\.name: NodePool p references EC2NodeClass "defualt"/);
      expect(validateText('apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n', 'n.yaml', 0).issues).toEqual([expect.objectContaining({ line: 3, message: 'Node n1 has no node.kubernetes.io/instance-type label: Skiff simulates EC2 nodes only' })]);
      expect(validateText('apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {node.kubernetes.io/instance-type: m5.large, topology.kubernetes.io/zone: us-west-2a}}\n', 'n.yaml', 0)).toMatchObject({ valid: true, objects: [{ kind: 'Node', name: 'n1' }] });
      const dir = folder({ 'pool/class.yaml': GOOD_CLASS, '.github/workflows/ci.yml': 'on: push\njobs: {}\n', 'node_modules/x/a.yml': 'a: 1\n' });
      const r = await validate(dir);
      expect({ status: r.status, out: r.out }).toEqual({ status: 0, out: '1 file valid (1 object)\n' });
    });

    it('checks label keys and values where pods and NodePools name them, as the API server does (no terminal escapes reach the output)', () => {
      const pod = (spec: string) => `apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: nginx}]\n${spec}`;
      const paths = (text: string) => validateText(text, 'p.yaml', 0).issues.map((i) => i.path);
      expect(paths(pod('  nodeSelector: {"bad key!": v}\n'))).toEqual(['spec.nodeSelector["bad key!"]']);
      expect(paths(pod('  tolerations: [{key: "bad key!", value: "\\e[31m", effect: NoSchedule}]\n'))).toEqual(['spec.tolerations[0].key', 'spec.tolerations[0].value']);
      expect(paths(pod('  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: "k\\e[2J", operator: In, values: ["v\\e[2J"]}]}]}}}\n'))).toEqual([
        'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key',
        'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values[0]',
      ]);
      expect(paths(pod('  tolerations: [{operator: Exists}]\n  nodeSelector: {workload-type: general}\n'))).toEqual([]);
    });

    it('refuses a Gt value past a 64-bit integer at file:line:column, and accepts an In value no offering has (Karpenter does; explain says why it never launches)', () => {
      const pool = (requirement: string) => BROKEN_POOL.replace('  weight: 500\n', '').replace('        - key: kubernetes.io/arch\n          operator: Like\n', requirement);
      const huge = validateText(pool('        - {key: karpenter.k8s.aws/instance-cpu, operator: Gt, values: ["99999999999999999999999"]}\n'), 'pool.yaml', 0);
      expect(huge.issues.map(formatIssue)).toEqual([
        expect.stringMatching(/^pool\.yaml:10:72: spec\.template\.spec\.requirements\[0\]\.values\[0\]: operator Gt needs a non-negative integer of at most 9007199254740991, got "99999999999999999999999": it does not fit in a 64-bit integer/),
      ]);
      expect(validateText(pool('        - {key: karpenter.sh/capacity-type, operator: In, values: [Spot]}\n'), 'pool.yaml', 0)).toMatchObject({ valid: true, issues: [] });
    });

    it('says where v1beta1-era NodePool fields went in v1', () => {
      const old = BROKEN_POOL.replace('  weight: 500\n', '  disruption:\n    consolidationPolicy: WhenUnderutilized\n    expireAfter: 720h\n').replace('          operator: Like', '          operator: In\n          values: [amd64]');
      const messages = validateText(old, 'old.yaml', 0).issues.map((i) => `${i.path}: ${i.message}`);
      expect(messages).toEqual([
        expect.stringMatching(/^spec\.disruption\.consolidationPolicy: .*: WhenUnderutilized was renamed WhenEmptyOrUnderutilized in karpenter\.sh\/v1$/),
        'spec.disruption.expireAfter: unknown field "expireAfter": in karpenter.sh/v1 expireAfter moved to spec.template.spec.expireAfter',
      ]);
      // v1beta1's nodeClassRef named an apiVersion; v1's names the group
      const ref = validateText(old.replace('{group: karpenter.k8s.aws,', '{apiVersion: karpenter.k8s.aws/v1beta1, group: karpenter.k8s.aws,'), 'old.yaml', 0).issues.map((i) => `${i.path}: ${i.message}`);
      expect(ref).toContain('spec.template.spec.nodeClassRef.apiVersion: unknown field "apiVersion": in karpenter.sh/v1 nodeClassRef names the group instead (group: karpenter.k8s.aws, kind: EC2NodeClass, name)');
      const beta = validateText(GOOD_CLASS.replace('karpenter.k8s.aws/v1', 'karpenter.k8s.aws/v1beta1'), 'c.yaml', 0).issues[0]?.message;
      expect(beta).toMatch(/EC2NodeClass must have apiVersion karpenter\.k8s\.aws\/v1, got "karpenter\.k8s\.aws\/v1beta1" \(v1beta1 objects need the changes in Karpenter's v1 migration guide/);
    });
  });

  describe('several files and folders', () => {
    it('checks every file, keeps the good ones good and exits 1 when any is invalid', async () => {
      const dir = folder({ 'a-class.yaml': GOOD_CLASS, 'b-pool.yaml': BROKEN_POOL });
      const r = await validate(join(dir, 'a-class.yaml'), join(dir, 'b-pool.yaml'), '--json');
      expect(r.status).toBe(1);
      const report = JSON.parse(r.out) as ValidationReport;
      expect(report.files.map((f) => [f.file.slice(dir.length + 1), f.valid])).toEqual([
        ['a-class.yaml', true],
        ['b-pool.yaml', false],
      ]);
    });

    it('walks folders recursively in name order, reading only *.yaml and *.yml', async () => {
      const dir = folder({ 'z.yml': GOOD_CLASS.replace('name: default', 'name: z'), 'nested/deeper/pool.yaml': BROKEN_POOL, 'README.md': '# not yaml', 'a.yaml': GOOD_CLASS });
      const r = await validate(dir, '--json');
      expect(r.status).toBe(1);
      const report = JSON.parse(r.out) as ValidationReport;
      expect(report.files.map((f) => f.file.slice(dir.length + 1))).toEqual(['a.yaml', 'nested/deeper/pool.yaml', 'z.yml']);
    });

    it('checks a file named twice (directly and through its folder) once', async () => {
      const dir = folder({ 'a.yaml': GOOD_CLASS });
      const r = await validate(join(dir, 'a.yaml'), dir);
      expect(r.out).toBe('1 file valid (1 object)\n');
    });

    it('validates every document of a multi-document file', async () => {
      const dir = folder({ 'all.yaml': `${GOOD_CLASS}---\n${BROKEN_POOL}` });
      const r = await validate(join(dir, 'all.yaml'));
      expect(r.status).toBe(1);
      expect(r.out).toMatch(/all\.yaml:15:11: spec\.weight: /);
    });
  });

  describe('one verdict with simulate for one folder', () => {
    /** A Scenario document; `spec` lines are indented by two spaces. */
    const scenarioDoc = (name: string, spec: string) => `apiVersion: skiff.dev/v1alpha1\nkind: Scenario\nmetadata: {name: ${name}}\nspec:\n  start: "2026-03-02T08:00:00Z"\n  duration: 10m\n${spec}`;
    const web = 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]\n';

    it('reads a file holding the Scenario document and a workload with the folder\'s other files, as simulate does (a starting node names a NodePool of another file)', async () => {
      const nodes = '  nodes:\n    - {name: n1, instanceType: m5.large, zone: us-west-2a, capacityType: on-demand, nodePool: general}\n  events:\n    - {at: 5m, scale: {kind: Deployment, name: web, replicas: 2}}\n';
      const dir = folder({ 'pools.yaml': GENERAL_POOL, 'scenario.yaml': `${scenarioDoc('vs', nodes)}---\n${web}` });
      const check = await validate(dir);
      expect({ status: check.status, out: check.out }).toEqual({ status: 0, out: '2 files valid (4 objects)\n' });
      const run = await simulate(dir, '--json');
      expect({ status: run.status, err: run.err }).toEqual({ status: 0, err: '' });
    });

    it.each([
      [
        'a second Scenario document in another file',
        { 'a.yaml': `${GENERAL_POOL}---\n${web}---\n${scenarioDoc('a', '')}`, 'b.yaml': `${scenarioDoc('b', '')}---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web}\nspec: {minAvailable: 1, selector: {matchLabels: {app: web}}}\n` },
        ['b.yaml:2:7: kind: at most one Scenario document per scenario (the first is at {dir}/a.yaml:37)'],
      ],
      [
        'the same NodePool, EC2NodeClass and Deployment in two files that each hold a Scenario document',
        { 'a.yaml': `${GENERAL_POOL}---\n${web}---\n${scenarioDoc('a', '')}`, 'b.yaml': `${GENERAL_POOL}---\n${web}---\n${scenarioDoc('b', '')}` },
        [
          'b.yaml:4:18: metadata.name: duplicate EC2NodeClass default (first defined at {dir}/a.yaml:2)',
          'b.yaml:13:18: metadata.name: duplicate NodePool general (first defined at {dir}/a.yaml:11)',
          'b.yaml:28:18: metadata.name: duplicate Deployment default/web (first defined at {dir}/a.yaml:26)',
          'b.yaml:38:7: kind: at most one Scenario document per scenario (the first is at {dir}/a.yaml:37)',
        ],
      ],
    ])('refuses %s, line for line as simulate refuses it', async (_, files, expected) => {
      const dir = folder(files);
      const lines = expected.map((l) => `${join(dir, l.replaceAll('{dir}', dir))}`);
      const check = await validate(dir);
      expect(check.status).toBe(1);
      // Problems first, then any warning (a one-pod PDB here), which simulate would print too.
      const printed = check.out.split('\n').slice(0, -2);
      expect(printed.filter((l) => !l.startsWith('warning: '))).toEqual(lines);
      expect(printed.slice(0, lines.length)).toEqual(lines);
      expect(check.out.split('\n').at(-2)).toMatch(new RegExp(`^${lines.length} problem${lines.length === 1 ? '' : 's'} in 1 of 2 files(; \\d+ warnings?)?$`));
      const run = await simulate(dir, '--json');
      expect(run.status).toBe(2);
      expect(simulateIssues(run.err)).toEqual(lines);
    });

    it('prints the warnings simulate prints, after the problems, without failing a valid folder (trial: a budget schedule that blocks all disruption passed silently)', async () => {
      const dir = folder({
        'pool.yaml': GENERAL_POOL.concat('  disruption:\n    budgets: [{nodes: "0", schedule: "0 25 * * *", duration: 1h}]\n'),
      });
      const check = await validate(dir);
      expect(check.status).toBe(0);
      const out = check.out.trimEnd().split('\n');
      expect(out[0]).toMatch(/^warning: .*pool\.yaml:\d+:\d+: spec\.disruption\.budgets\[0\]\.schedule: NodePool general: budget schedule "0 25 \* \* \*" does not evaluate/);
      expect(out.at(-1)).toMatch(/ valid \(\d+ objects?\); 1 warning$/);
      const json = JSON.parse((await validate(dir, '--json')).out) as { valid: boolean; files: { warnings?: { path: string }[] }[] };
      expect(json.valid).toBe(true);
      expect(json.files.flatMap((f) => f.warnings ?? []).map((w) => w.path)).toEqual(['spec.disruption.budgets[0].schedule']);
    });

    it('reads each folder of a tree as its own scenario, and files named one by one with the others named in their folder', async () => {
      // Two one-file scenarios in sibling folders: the same names, two Scenario documents, and no problem.
      const one = `${GENERAL_POOL}---\n${web}---\n${scenarioDoc('one', '')}`;
      const tree = folder({ 'a/scenario.yaml': one, 'b/scenario.yaml': one.replace('name: one', 'name: two') });
      expect((await validate(tree)).out).toBe('2 files valid (8 objects)\n');
      const dir = folder({ 'a.yaml': one, 'b.yaml': one });
      expect((await validate(join(dir, 'a.yaml'))).status).toBe(0);
      expect((await validate(join(dir, 'a.yaml'), join(dir, 'b.yaml'))).out).toMatch(/b\.yaml:\d+:7: kind: at most one Scenario document per scenario/);
    });
  });

  describe('a file that is not YAML text', () => {
    it('says so with the file, line and column of the first byte that is not text, instead of a schema error', async () => {
      const dir = folder({ 'a.yaml': GOOD_CLASS });
      writeFileSync(join(dir, 'random.yaml'), Buffer.from([0x6b, 0x69, 0x6e, 0x64, 0x0a, 0x78, 0xb4, 0x00, 0x05]));
      const r = await validate(dir);
      expect(r.status).toBe(1);
      expect(r.out).toBe(`${join(dir, 'random.yaml')}:2:2: not YAML text: byte 0xb4 at byte offset 6 is not UTF-8 (a binary file, or text in another encoding? save it as UTF-8)\n1 problem in 1 of 2 files\n`);
      expect(r.out).not.toMatch(/got string/);
    });
  });

  describe('usage errors', () => {
    it('exits 2 naming a path that does not exist, and validates nothing', async () => {
      const r = await validate(join(SEED, 'nodepool-general.yaml'), 'no/such/file.yaml');
      expect(r.status).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toBe('skiff validate: no/such/file.yaml: no such file or directory\n');
    });

    it('exits 2 for a folder without YAML files', async () => {
      const dir = folder({ 'notes.txt': 'x' });
      const r = await validate(dir);
      expect(r.status).toBe(2);
      expect(r.err).toMatch(/no \*\.yaml or \*\.yml files in this folder/);
    });

    it('exits 2 without a path', async () => {
      const r = await validate();
      expect(r.status).toBe(2);
      expect(r.err).toMatch(/missing required argument/);
    });
  });
});
