import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../shared/cli/main.js';
import { GENERAL_POOL } from '../support/provisioner-harness.js';

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-bad-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

async function simulate(...args: string[]): Promise<{ status: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const status = await main(['simulate', ...args], { out: (t) => (out += t), err: (t) => (err += t), isTTY: false });
  return { status, out, err };
}

const scenario = (spec: string) => `apiVersion: skiff.dev/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n  start: "2026-03-02T08:00:00Z"\n${spec}\n`;

const web = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]}}
`;

describe('skiff simulate with bad input', () => {
  it.each([
    ['a starting node of an unknown instance type', scenario('  nodes: [{name: n1, instanceType: m5.nope, zone: us-west-2a, capacityType: on-demand}]'), /spec\.nodes\[0\]\.instanceType: unknown instance type "m5\.nope"/],
    ['a duration beyond a year', scenario('  duration: 100000h'), /spec\.duration: a simulation lasts at most/],
    ['a start too far in the future', scenario('  duration: 2h').replace('2026-03-02T08:00:00Z', '9999-12-31T23:00:00Z'), /spec\.start: start must be before the year 9000/],
    ['an absurd pinned spot price', scenario('  spotPrices: [{instanceType: m5.large, zone: us-west-2a, price: 1.0e+308}]'), /spec\.spotPrices\[0\]\.price: a price is USD per hour, at most 10000/],
  ])('exits 2 naming the field for %s, and prints nothing on stdout', async (_, doc, message) => {
    const r = await simulate(folder({ 'a.yaml': GENERAL_POOL, 'scenario.yaml': doc }), '--json');
    expect(r.status).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/scenario\.yaml:\d+/);
    expect(r.err).toMatch(message);
  });

  it('exits 2 for a quantity too large to represent', async () => {
    const r = await simulate(folder({ 'a.yaml': GENERAL_POOL, 'web.yaml': web.replace('cpu: 100m', 'memory: "1e400"') }));
    expect(r.status).toBe(2);
    expect(r.err).toMatch(/web\.yaml:6:\d+: spec\.template\.spec\.containers\[0\]\.resources\.requests\.memory/);
  });

  it('exits 2 for a seed the PRNG cannot represent', async () => {
    const r = await simulate('examples/seed', '--seed', '9007199254740992');
    expect(r.status).toBe(2);
    expect(r.err).toMatch(/seed must be an integer from 0 to 4294967295/);
  });

  it('skips a scale event whose Deployment was deleted earlier, with a Warning event, instead of crashing', async () => {
    const events = '  duration: 1h\n  events:\n    - {at: 5m, delete: {kind: Deployment, name: web}}\n    - {at: 10m, scale: {kind: Deployment, name: web, replicas: 2}}';
    const r = await simulate(folder({ 'a.yaml': GENERAL_POOL, 'web.yaml': web, 'scenario.yaml': scenario(events) }), '--json');
    expect(r.status).toBe(0);
    const result = JSON.parse(r.out) as { events: { reason: string; object: string }[] };
    expect(result.events).toContainEqual(expect.objectContaining({ reason: 'ScaleTargetNotFound', object: 'Deployment/default/web' }));
  });

  it('says a binary file is not YAML text, naming the file, line and column, instead of "got string"', async () => {
    const dir = folder({ 'a.yaml': GENERAL_POOL });
    // Random bytes renamed .yaml: a NUL before any byte that is not UTF-8.
    writeFileSync(join(dir, 'blob.yaml'), Buffer.from([0x78, 0x33, 0x0a, 0x7c, 0x00, 0x9d, 0xb4]));
    const r = await simulate(dir, '--json');
    expect(r.status).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toBe(`skiff simulate: invalid input, nothing was simulated:\n${join(dir, 'blob.yaml')}:2:2: not YAML text: a NUL byte at byte offset 4 (a binary file?); Skiff reads YAML as UTF-8 text\n`);
  });

  it('reads YAML files that are symbolic links (as in a ConfigMap volume)', async () => {
    const dir = folder({ 'web.yaml': web });
    const target = join(mkdtempSync(join(tmpdir(), 'skiff-target-')), 'pool.yaml');
    writeFileSync(target, GENERAL_POOL);
    symlinkSync(target, join(dir, 'pool.yaml'));
    const r = await simulate(dir, '--json');
    expect(r.status).toBe(0);
    expect((JSON.parse(r.out) as { nodeClaims: unknown[] }).nodeClaims.length).toBeGreaterThan(0);
    expect(readFileSync(join(dir, 'pool.yaml'), 'utf8')).toBe(GENERAL_POOL);
  });
});
