/**
 * Hostile snapshot and scenario input found by a break-it trial (issues 21 and 22): each is refused at once by
 * `skiff simulate` (exit status 2, `file:line:col: path: message` on stderr, no stack trace) and by `skiff validate`
 * (exit status 1), through the real CLI (`main`); the few that are valid input are simulated through the real
 * composition (`simulateScenario`), and the expectations come from the input, not from the code under test.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../shared/cli/main.js';

/** A NodePool `general` (m5/c5 on-demand) and its EC2NodeClass, as `kubectl get nodepools,ec2nodeclasses -o yaml` writes them. */
const KARPENTER = `apiVersion: v1
kind: List
items:
- apiVersion: karpenter.sh/v1
  kind: NodePool
  metadata: {name: general, uid: abc, resourceVersion: "1", creationTimestamp: "2026-01-01T00:00:00Z"}
  spec:
    disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: 1h}
    template:
      spec:
        nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
        requirements:
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [m5, c5]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
- apiVersion: karpenter.k8s.aws/v1
  kind: EC2NodeClass
  metadata: {name: default}
  spec:
    amiSelectorTerms: [{alias: al2023@latest}]
    role: R
    subnetSelectorTerms: [{tags: {a: b}}]
    securityGroupSelectorTerms: [{tags: {a: b}}]
`;

const LABELS = '{node.kubernetes.io/instance-type: m5.xlarge, topology.kubernetes.io/zone: us-west-2a, topology.kubernetes.io/region: us-west-2, karpenter.sh/nodepool: general}';

/** A Node of NodePool general; `meta` and `rest` are extra YAML lines under `metadata:` and at the top level. */
const node = (name: string, meta = '', rest = '') =>
  `apiVersion: v1\nkind: Node\nmetadata:\n  name: ${name}\n  creationTimestamp: "2026-03-01T00:00:00Z"\n  labels: ${LABELS}\n${meta}${rest}`;

const replicaSet = (name: string, meta = '') => `apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: ${name}\n  namespace: default\n${meta}spec:\n  selector: {matchLabels: {app: web}}\n`;

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-hostile-'));
  for (const [name, text] of Object.entries({ 'karpenter.yaml': KARPENTER, ...files })) writeFileSync(join(dir, name), text);
  return dir;
}

async function run(...args: string[]): Promise<{ status: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const status = await main(args, { out: (t) => (out += t), err: (t) => (err += t), isTTY: false });
  return { status, out, err };
}

/** Expects `simulate` to refuse the folder with exit 2 and `validate` to refuse it too, both naming `message`. */
async function expectRefused(dir: string, message: RegExp, ...flags: string[]): Promise<void> {
  const simulated = await run('simulate', dir, '--duration', '10m', ...flags);
  expect(simulated.err).toMatch(message);
  expect(simulated.err).not.toMatch(/Error:|\n\s+at /);
  expect(simulated.status).toBe(2);
  expect(simulated.out).toBe('');
  if (flags.length > 0) return;
  const validated = await run('validate', dir);
  expect(validated.out + validated.err).toMatch(message);
  expect(validated.status).toBe(1);
}

describe('prices that are not positive normal numbers', () => {
  const scenario = (prices: string) => `apiVersion: skiff.dev/v1alpha1\nkind: Scenario\nmetadata: {name: p}\nspec:\n  start: "2026-03-02T08:00:00Z"\n  prices: ${prices}\n`;

  it.each([
    ['0', '[{instanceType: m5.large, onDemand: 0}]', /s\.yaml:6:\d+: spec\.prices\[0\]\.onDemand: a price is USD per hour, positive/],
    ['a denormal', '[{instanceType: m5.large, spot: 1e-320}]', /s\.yaml:6:\d+: spec\.prices\[0\]\.spot: a price is USD per hour, positive/],
  ])('refuses a spec.prices entry of %s', async (_, prices, message) => {
    await expectRefused(folder({ 's.yaml': scenario(prices) }), message);
  });

  it('refuses a pinned spot price of 0', async () => {
    const doc = `apiVersion: skiff.dev/v1alpha1\nkind: Scenario\nmetadata: {name: p}\nspec:\n  start: "2026-03-02T08:00:00Z"\n  spotPrices: [{instanceType: m5.large, zone: us-west-2a, price: 0}]\n`;
    await expectRefused(folder({ 's.yaml': doc }), /spec\.spotPrices\[0\]\.price: a price is USD per hour, positive/);
  });

  it('refuses a price file entry of 0 at its line, column and field', async () => {
    const dir = folder({ 'cluster.yaml': node('n1') });
    const prices = join(dir, '..', `${dir.split('/').pop()}-prices.yaml`);
    writeFileSync(prices, 'prices:\n  - {instanceType: m5.large, zone: us-west-2a, onDemand: 0.1}\n  - {instanceType: m5.xlarge, onDemand: 0}\n');
    await expectRefused(dir, /prices\.yaml:3:\d+: prices\[1\]\.onDemand: a price is USD per hour, positive/, '--prices', prices);
  });

  it('names the entry and field of a price file problem, not 1:1 "Invalid input"', async () => {
    const dir = folder({ 'cluster.yaml': node('n1') });
    const prices = join(dir, '..', `${dir.split('/').pop()}-bad.yaml`);
    writeFileSync(prices, 'prices:\n  - {instanceType: m5.large, onDemand: 0.1}\n  - {instanceType: m5.xlarge, onDemand: "cheap"}\n');
    await expectRefused(dir, /bad\.yaml:3:\d+: prices\[1\]\.onDemand: /, '--prices', prices);
  });

  it('refuses a second YAML document in a price file instead of ignoring it', async () => {
    const dir = folder({ 'cluster.yaml': node('n1') });
    const prices = join(dir, '..', `${dir.split('/').pop()}-two.yaml`);
    writeFileSync(prices, 'prices:\n  - {instanceType: m5.large, onDemand: 0.1}\n---\nprices:\n  - {instanceType: m5.xlarge, onDemand: 0.2}\n');
    await expectRefused(dir, /two\.yaml:[34]:\d+: a price file holds one YAML document/, '--prices', prices);
  });
});
