// Hostile input through the CLI (issue 21): `skiff simulate` exits 2 with `file:line:column: path: message` on stderr
// and nothing on stdout; `skiff validate` reports the same problem (exit 1, its status for an invalid file). The
// loader side is test/sim/scenario-input-limits.test.ts.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../shared/cli/main.js';
import { MAX_SCENARIO_BYTES, MAX_SCENARIO_DOCUMENTS } from '../../shared/sim/scenario-loader.js';
import { GENERAL_POOL } from '../support/provisioner-harness.js';

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-limits-cli-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

async function skiff(...args: string[]): Promise<{ status: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const status = await main(args, { out: (t) => (out += t), err: (t) => (err += t), isTTY: false });
  return { status, out, err };
}

/** A Deployment `web`; line 6 is `replicas`, line 10 the container with its requests. */
const web = (replicas: number, requests = '{cpu: 100m}') => `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  replicas: ${replicas}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: x, resources: {requests: ${requests}}}]
`;

const scenario = (events: string) => `apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: t}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: 1h
  events:
${events}`;

describe('skiff simulate and skiff validate refuse hostile input at once', () => {
  it.each([
    ['replicas: 1000000000 on a Deployment', { 'web.yaml': web(1_000_000_000) }, /web\.yaml:6:13: spec\.replicas: replicas 1000000000 is more than the simulation runs: at most 20000 pods per workload/],
    [
      'a Job whose completions are over the cap',
      { 'job.yaml': 'apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  completions: 50000\n  template: {spec: {restartPolicy: Never, containers: [{name: c, image: x}]}}\n' },
      /job\.yaml:5:16: spec\.completions: completions 50000 is more than the simulation runs/,
    ],
    [
      'an apply event over the cap',
      { 'scenario.yaml': scenario('    - {at: 1m, apply: {apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {parallelism: 1000000, template: {spec: {restartPolicy: Never, containers: [{name: c, image: x}]}}}}}\n') },
      /scenario\.yaml:8:\d+: spec\.events\[0\]\.apply\.spec\.parallelism: parallelism 1000000 is more than the simulation runs/,
    ],
    ['a label key __proto__', { 'web.yaml': web(1).replace('labels: {app: web}', 'labels: {app: web, __proto__: x}') }, /web\.yaml:8:35: spec\.template\.metadata\.labels\.__proto__: "__proto__": must be a qualified name/],
    ['a quantity with a trailing space', { 'web.yaml': web(1, '{cpu: "100m "}') }, /web\.yaml:10:68: spec\.template\.spec\.containers\[0\]\.resources\.requests\.cpu: "100m ": not a valid Kubernetes quantity: remove the whitespace around it/],
    ['more YAML documents than a scenario may hold', { 'many.yaml': '---\n'.repeat(MAX_SCENARIO_DOCUMENTS + 5) }, /many\.yaml:10001:1: more than 10000 YAML documents/],
  ])('%s: simulate exits 2 naming file, line, column and field; validate reports the same', async (_, files, message) => {
    const dir = folder({ 'pool.yaml': GENERAL_POOL, ...files });
    const run = await skiff('simulate', dir, '--json');
    expect(run.status).toBe(2);
    expect(run.out).toBe('');
    expect(run.err).toMatch(message);
    const check = await skiff('validate', dir);
    expect(check.status).toBe(1);
    expect(check.out).toMatch(message);
  });

  it.each([
    ['an empty file', ''],
    ['a comments-only file', '# a scenario\n# to be written\n'],
  ])('refuses %s with exit 2, naming file:line:col like every input error; validate reports the file as holding no object', async (_, text) => {
    const file = join(folder({}), 'scenario.yaml');
    writeFileSync(file, text);
    const run = await skiff('simulate', file);
    expect(run.status).toBe(2);
    expect(run.out).toBe('');
    expect(run.err).toContain(`\n${file}:1:1: nothing to simulate: no YAML document in it (only comments or empty documents); a scenario needs at least one NodePool, EC2NodeClass, Pod, workload, PodDisruptionBudget, LimitRange or Scenario document\n`);
    const check = await skiff('validate', file);
    expect(check.status).toBe(1);
    expect(check.out).toContain(`${file}: no Kubernetes objects in this file`);
  });

  it('refuses a folder of kinds Skiff does not read with exit 2 (validate lists them as skipped)', async () => {
    const dir = folder({ 'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n' });
    const run = await skiff('simulate', dir);
    expect(run.status).toBe(2);
    expect(run.err).toMatch(new RegExp(`^${join(dir, 'cm.yaml')}:1:1: nothing to simulate: every document is of a kind Skiff does not read \\(ConfigMap settings at ${join(dir, 'cm.yaml')}:1\\)`, 'm'));
    expect((await skiff('validate', dir)).out).toMatch(/skipped 1 object of kinds Skiff does not read \(ConfigMap/);
  });

  it('refuses YAML over the size limit with exit 2 without parsing it; validate reports the file', async () => {
    const dir = folder({ 'pool.yaml': GENERAL_POOL, 'big.yaml': `# ${'x'.repeat(MAX_SCENARIO_BYTES)}\n` });
    const run = await skiff('simulate', dir);
    expect(run.status).toBe(2);
    expect(run.err).toContain(`\n${dir}: 16.0 MiB of YAML; a scenario may hold at most 16.0 MiB (16777216 bytes)\n`);
    const check = await skiff('validate', dir);
    expect(check.status).toBe(1);
    expect(check.out).toMatch(new RegExp(`${join(dir, 'big.yaml')}: more than 16\\.0 MiB of YAML; a scenario may hold at most 16\\.0 MiB`));
  });

  it('applies the size limit to a folder\'s files together, as simulate does: validate names the folder on its first file', async () => {
    const half = `# ${'x'.repeat(MAX_SCENARIO_BYTES / 2)}\n`;
    const dir = folder({ 'a.yaml': half, 'b.yaml': half, 'pool.yaml': GENERAL_POOL });
    const run = await skiff('simulate', dir);
    expect(run.status).toBe(2);
    expect(run.err).toContain(`\n${dir}: 16.0 MiB of YAML; a scenario may hold at most 16.0 MiB (16777216 bytes)\n`);
    const check = await skiff('validate', dir);
    expect(check.status).toBe(1);
    expect(check.out).toBe(`${dir}: 16.0 MiB of YAML; a scenario may hold at most 16.0 MiB (16777216 bytes)\n1 problem in 1 of 3 files\n`);
    expect((JSON.parse((await skiff('validate', dir, '--json')).out) as { files: { file: string; valid: boolean }[] }).files.map((f) => [f.file, f.valid])).toEqual([
      [join(dir, 'a.yaml'), false],
      [join(dir, 'b.yaml'), true],
      [join(dir, 'pool.yaml'), true],
    ]);
  });
});
