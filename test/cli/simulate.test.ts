import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadCatalog } from '../../shared/core/instancetypes/catalog.js';
import { main } from '../../shared/cli/main.js';
import { simulateScenario } from '../../shared/cli/simulate.js';
import type { SimulationResult } from '../../shared/sim/result.js';
import { ResultSchema } from '../../shared/sim/result-schema.js';

const catalog = new Map(loadCatalog().map((t) => [t.name, t]));
const label = (type: string, key: string) => catalog.get(type)!.labels[key];

/** A new temporary folder holding the seed example's EC2NodeClass, general NodePool and web Deployment. */
function seedFolder(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  for (const f of ['ec2nodeclass-default.yaml', 'nodepool-general.yaml', 'deployment-web.yaml']) writeFileSync(join(dir, f), readFileSync(join('examples/seed', f), 'utf8'));
  return dir;
}

function capture(): { io: { out: (t: string) => void; err: (t: string) => void; isTTY: boolean }; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return { io: { out: (t) => (out += t), err: (t) => (err += t), isTTY: false }, out: () => out, err: () => err };
}

describe('skiff simulate examples/seed', () => {
  let result: SimulationResult;
  beforeAll(async () => {
    result = (await simulateScenario('examples/seed', { seed: 1 })).result;
  });

  it('produces a Result that passes the contract schema', () => {
    expect(ResultSchema.safeParse(result).success).toBe(true);
  });

  it('launches general only as c/m/r, generation > 4, amd64, in us-west-2a/b/c', () => {
    const general = result.nodeClaims.filter((c) => c.nodePool === 'general' && c.instanceType);
    expect(general.length).toBeGreaterThan(0);
    for (const c of general) {
      const options = c.requirements.find((r) => r.key === 'node.kubernetes.io/instance-type')!.values!;
      for (const t of [c.instanceType!, ...options]) {
        expect(['c', 'm', 'r']).toContain(label(t, 'karpenter.k8s.aws/instance-category'));
        expect(Number(label(t, 'karpenter.k8s.aws/instance-generation'))).toBeGreaterThan(4);
        expect(label(t, 'kubernetes.io/arch')).toBe('amd64');
      }
      expect(['us-west-2a', 'us-west-2b', 'us-west-2c']).toContain(c.zone);
    }
  });

  it('launches gpu only as on-demand g5 or g4dn', () => {
    const gpu = result.nodeClaims.filter((c) => c.nodePool === 'gpu' && c.instanceType);
    expect(gpu.length).toBeGreaterThan(0);
    for (const c of gpu) {
      expect(['g5', 'g4dn']).toContain(label(c.instanceType!, 'karpenter.k8s.aws/instance-family'));
      expect(c.capacityType).toBe('on-demand');
    }
  });

  it('launches batch only as spot c or m', () => {
    const batch = result.nodeClaims.filter((c) => c.nodePool === 'batch' && c.instanceType);
    expect(batch.length).toBeGreaterThan(0);
    for (const c of batch) {
      expect(['c', 'm']).toContain(label(c.instanceType!, 'karpenter.k8s.aws/instance-category'));
      expect(c.capacityType).toBe('spot');
    }
  });

  it('places every pod that can run', () => {
    const neverPlaced = result.pods.filter((p) => p.scheduledAt === null).map((p) => p.name);
    expect(neverPlaced).toEqual(['high-memory-report']);
  });

  it('reports the unsatisfiable pod with the label it lacks, per NodePool', () => {
    expect(result.unschedulable).toHaveLength(1);
    const [u] = result.unschedulable;
    expect(u!.pod).toBe('default/high-memory-report');
    expect(u!.reason).toMatch(/no NodePool defines the label node-type/);
    expect(Object.keys(u!.nodePools).sort()).toEqual(['batch', 'general', 'gpu']);
  });

  it('counts no violations', () => {
    expect(result.violations).toEqual({ budget: 0, pdb: 0, doNotDisrupt: 0, limits: 0, duplicateLaunches: 0, leakedInstances: 0, placement: 0, churn: 0, evictionLoops: 0 });
  });

  it('gives the same Result for the same seed', async () => {
    const again = (await simulateScenario('examples/seed', { seed: 1 })).result;
    expect(JSON.stringify(again)).toBe(JSON.stringify(result));
  });
});

describe('skiff CLI', () => {
  it('prints the whole Result with --json', async () => {
    const c = capture();
    expect(await main(['simulate', 'examples/seed', '--json'], c.io)).toBe(0);
    expect(ResultSchema.safeParse(JSON.parse(c.out())).success).toBe(true);
  });

  it('prints a summary with NodeClaims, cost and the pending pod', async () => {
    const c = capture();
    expect(await main(['simulate', 'examples/seed'], c.io)).toBe(0);
    expect(c.out()).toMatch(/NODEPOOL\s+INSTANCE TYPE\s+CAPACITY/);
    expect(c.out()).toMatch(/Cost: \$/);
    expect(c.out()).toMatch(/default\/high-memory-report/);
  });

  it('says on its first line when the run is a Karpenter-like baseline (--consolidation, --provisioning karpenter), and not otherwise', async () => {
    const baseline = capture();
    expect(await main(['simulate', 'examples/seed', '--consolidation', 'karpenter', '--provisioning', 'karpenter'], baseline.io)).toBe(0);
    expect(baseline.out().split('\n')[0]).toMatch(/seed 1, consolidation: karpenter \(Karpenter's moves only\), provisioning: karpenter \(no binding replay\)$/);
    const own = capture();
    expect(await main(['simulate', 'examples/seed'], own.io)).toBe(0);
    expect(own.out().split('\n')[0]).toMatch(/seed 1$/);
  });

  it('exits 2 naming file, line and field path for a bad manifest, and simulates nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-bad-'));
    const good = readFileSync('examples/seed/ec2nodeclass-default.yaml', 'utf8');
    writeFileSync(join(dir, 'a-class.yaml'), good);
    writeFileSync(
      join(dir, 'b-pool.yaml'),
      ['apiVersion: karpenter.sh/v1', 'kind: NodePool', 'metadata: {name: general}', 'spec:', '  weight: 101', '  template:', '    spec:', '      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}', '      requirements: []', ''].join('\n'),
    );
    const c = capture();
    expect(await main(['simulate', dir, '--json'], c.io)).toBe(2);
    expect(c.out()).toBe('');
    expect(c.err()).toMatch(/b-pool\.yaml:5(:\d+)?: spec\.weight/);
  });

  it('skips a Service in the folder with a note on stderr, and with --json writes nothing but the Result', async () => {
    const dir = seedFolder('skiff-foreign-');
    writeFileSync(join(dir, 'service.yaml'), 'apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n');
    const text = capture();
    expect(await main(['simulate', dir], text.io)).toBe(0);
    expect(text.err()).toMatch(/^note: .*service\.yaml:1: skipped Service "web" \(v1\): not a kind Skiff reads$/m);
    const json = capture();
    expect(await main(['simulate', dir, '--json'], json.io)).toBe(0);
    expect(json.err()).toBe('');
    expect(ResultSchema.safeParse(JSON.parse(json.out())).success).toBe(true);
  });

  it('says a subfolder holding YAML is not read (validate reads it, a scenario folder is not recursive)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-sub-'));
    mkdirSync(join(dir, 'karpenter', 'pools'), { recursive: true });
    mkdirSync(join(dir, 'empty'));
    mkdirSync(join(dir, '.github'));
    writeFileSync(join(dir, '.github', 'ci.yaml'), 'on: push\n');
    for (const f of ['ec2nodeclass-default.yaml', 'deployment-web.yaml']) writeFileSync(join(dir, f), readFileSync(join('examples/seed', f), 'utf8'));
    writeFileSync(join(dir, 'karpenter', 'pools', 'nodepool-general.yaml'), readFileSync('examples/seed/nodepool-general.yaml', 'utf8'));
    const c = capture();
    expect(await main(['simulate', dir], c.io)).toBe(0);
    expect(c.err().split('\n').filter((l) => l.includes('not read'))).toEqual([`note: ${join(dir, 'karpenter')}/: not read — a scenario folder is read as it is, not recursively (skiff validate reads subfolders); move its files up or simulate it on its own`]);
  });

  it('names the subfolders holding YAML when the folder has none of its own, instead of only saying it has none', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-only-sub-'));
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'sub', 'nodepool-general.yaml'), readFileSync('examples/seed/nodepool-general.yaml', 'utf8'));
    writeFileSync(join(dir, 'README.md'), '# pools\n');
    const c = capture();
    expect(await main(['simulate', dir], c.io)).toBe(2);
    expect(c.out()).toBe('');
    expect(c.err()).toBe(`skiff simulate: invalid input, nothing was simulated:\n${dir}: no *.yaml or *.yml files in this folder; ${join(dir, 'sub')} holds YAML: pass that folder (a scenario folder is read as it is, not recursively)\n`);
    // Several: each named, hidden folders and node_modules left out; none: the message as before.
    mkdirSync(join(dir, 'other', 'deeper'), { recursive: true });
    writeFileSync(join(dir, 'other', 'deeper', 'x.yml'), 'a: 1\n');
    mkdirSync(join(dir, '.github'));
    writeFileSync(join(dir, '.github', 'ci.yaml'), 'on: push\n');
    const several = capture();
    expect(await main(['simulate', dir], several.io)).toBe(2);
    expect(several.err()).toContain(`${dir}: no *.yaml or *.yml files in this folder; its subfolders ${join(dir, 'other')} and ${join(dir, 'sub')} hold YAML: pass one of them`);
    const empty = capture();
    expect(await main(['simulate', mkdtempSync(join(tmpdir(), 'skiff-no-yaml-'))], empty.io)).toBe(2);
    expect(empty.err()).toMatch(/: no \*\.yaml or \*\.yml files in this folder\n$/);
  });

  it('runs a scenario cut short by --duration without the events after its end, and says how many it left out', async () => {
    const dir = seedFolder('skiff-cut-');
    const events = ['10m', '45m', '50m'].map((at, i) => `    - {at: ${at}, scale: {kind: Deployment, name: web, replicas: ${4 + i}}}`).join('\n');
    writeFileSync(join(dir, 'scenario.yaml'), `apiVersion: skiff.dev/v1alpha1\nkind: Scenario\nmetadata: {name: cut}\nspec:\n  start: "2026-03-02T08:00:00Z"\n  duration: 1h\n  events:\n${events}\n`);
    const c = capture();
    expect(await main(['simulate', dir, '--duration', '30m'], c.io)).toBe(0);
    expect(c.err()).toBe('note: 2 events of the scenario come after the end --duration sets, and are not run\n');
    const json = capture();
    expect(await main(['simulate', dir, '--duration', '30m', '--json'], json.io)).toBe(0);
    expect(json.err()).toBe('');
    expect((JSON.parse(json.out()) as { end: string }).end).toBe('2026-03-02T08:30:00.000Z');
    // Without --duration the document's own hour runs every event, with no note.
    const whole = capture();
    expect(await main(['simulate', dir], whole.io)).toBe(0);
    expect(whole.err()).toBe('');
  });

  it("skips Karpenter's NodeClaims (kubectl get nodepools,ec2nodeclasses,nodeclaims) with a note, and still refuses a misspelt Karpenter kind", async () => {
    const dir = seedFolder('skiff-nodeclaims-');
    writeFileSync(join(dir, 'nodeclaims.yaml'), 'apiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: general-abcde}\nspec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}, requirements: []}\n');
    const c = capture();
    expect(await main(['simulate', dir], c.io)).toBe(0);
    expect(c.err()).toMatch(/^note: .*nodeclaims\.yaml:1: skipped NodeClaim "general-abcde" \(karpenter\.sh\/v1\): Karpenter's record: Skiff keeps its own NodeClaims/m);
    writeFileSync(join(dir, 'nodeclaims.yaml'), 'apiVersion: karpenter.sh/v1\nkind: NodeClaimz\nmetadata: {name: general-abcde}\n');
    const typo = capture();
    expect(await main(['simulate', dir], typo.io)).toBe(2);
  });

  it('exits 2 for a bad --seed', async () => {
    const c = capture();
    expect(await main(['simulate', 'examples/seed', '--seed', 'abc'], c.io)).toBe(2);
    expect(c.err()).toMatch(/seed/);
  });
});

describe('skiff simulate --report', () => {
  it.each([
    ['an empty path', () => '', "error: option '--report <file>' argument '' is invalid. the report needs a file name, e.g. report.html\n"],
    ['a folder', (dir: string) => dir, (dir: string) => `error: option '--report <file>' argument '${dir}' is invalid. ${dir} is a folder; name the file to write in it, e.g. ${join(dir, 'report.html')}\n`],
    ['a path ending in /', (dir: string) => `${dir}/new/`, (dir: string) => `error: option '--report <file>' argument '${dir}/new/' is invalid. ${dir}/new/ ends with /, which names a folder; name the file to write, e.g. ${join(dir, 'new', 'report.html')}\n`],
    ['a file in a folder that does not exist', (dir: string) => join(dir, 'no', 'such', 'r.html'), (dir: string) => `error: option '--report <file>' argument '${join(dir, 'no', 'such', 'r.html')}' is invalid. the folder ${join(dir, 'no', 'such')} does not exist; create it first, or write the report elsewhere\n`],
    ['a file inside a file', (dir: string) => join(dir, 'file.txt', 'r.html'), (dir: string) => `error: option '--report <file>' argument '${join(dir, 'file.txt', 'r.html')}' is invalid. ${join(dir, 'file.txt')} is a file, not a folder, so no report can be written in it\n`],
  ])('refuses %s with status 2 before simulating anything, and creates no folder', async (_, path, message) => {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-report-path-'));
    writeFileSync(join(dir, 'file.txt'), 'x');
    const c = capture();
    expect(await main(['simulate', 'examples/seed', '--report', path(dir)], c.io)).toBe(2);
    expect(c.out()).toBe(''); // nothing simulated: a run prints its summary before writing the report
    expect(c.err()).toBe(typeof message === 'string' ? message : message(dir));
    expect(existsSync(join(dir, 'no'))).toBe(false);
    expect(existsSync(join(dir, 'new'))).toBe(false);
  });

  it.runIf(existsSync('/dev/full'))('prints the summary, then fails with status 1 naming the file when writing the report fails after the run', async () => {
    const c = capture();
    expect(await main(['simulate', 'examples/seed', '--report', '/dev/full'], c.io)).toBe(1);
    expect(c.out()).toContain('Scenario seed');
    expect(c.err()).toContain('skiff simulate: cannot write the report to /dev/full: ENOSPC');
  });
});

describe('skiff simulate --consolidation', () => {
  // One c5.2xlarge holding a 3-vCPU pod and nine 500m pods; the large pod goes at 20 min. Skiff's split move replaces
  // the node by a c5.xlarge and a c5.large; Karpenter's moves keep it (no single cheaper type takes 4.5 vCPU).
  const docs = [
    'apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: default}\nspec:\n  role: R\n  amiSelectorTerms: [{alias: al2023@latest}]\n  subnetSelectorTerms: [{tags: {k: v}}]\n  securityGroupSelectorTerms: [{tags: {k: v}}]',
    'apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: general}\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      requirements:\n        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [c5]}\n        - {key: karpenter.k8s.aws/instance-size, operator: In, values: [large, xlarge, 2xlarge]}\n  disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 1m}',
    ...[['big', 1, '3'], ['small', 9, '500m']].map(
      ([name, replicas, cpu]) =>
        `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ${name}}\nspec:\n  replicas: ${replicas}\n  selector: {matchLabels: {app: ${name}}}\n  template:\n    metadata: {labels: {app: ${name}}}\n    spec:\n      containers: [{name: app, image: nginx, resources: {requests: {cpu: "${cpu}", memory: 256Mi}}}]`,
    ),
    'apiVersion: skiff.dev/v1alpha1\nkind: Scenario\nmetadata: {name: split}\nspec:\n  start: "2026-03-02T08:00:00Z"\n  duration: 50m\n  events:\n    - {at: 20m, scale: {kind: Deployment, name: big, replicas: 0}}',
  ];

  it("runs Karpenter's moves only with karpenter, Skiff's by default", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-consolidation-'));
    writeFileSync(join(dir, 'scenario.yaml'), docs.join('\n---\n'));
    const run = async (...flags: string[]) => {
      const c = capture();
      expect(await main(['simulate', dir, '--json', ...flags], c.io)).toBe(0);
      return JSON.parse(c.out()) as SimulationResult;
    };
    const karpenter = await run('--consolidation', 'karpenter');
    const skiff = await run();
    expect(karpenter.cost.finalHourlyUSD).toBeCloseTo(0.34, 6);
    expect(skiff.cost.finalHourlyUSD).toBeLessThanOrEqual(0.255 + 1e-9);
    // The Result says which moves made it.
    expect([karpenter.consolidation, skiff.consolidation]).toEqual(['karpenter', 'skiff']);
  }, 120_000);

  it('exits 2 for an unknown setting', async () => {
    const c = capture();
    expect(await main(['simulate', 'examples/seed', '--consolidation', 'greedy'], c.io)).toBe(2);
    expect(c.err()).toMatch(/skiff' or 'karpenter/);
  });
});
