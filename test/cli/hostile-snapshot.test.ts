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
import { instanceTypeByName } from '../../shared/core/instancetypes/catalog.js';
import { simulateScenario } from '../../shared/cli/simulate.js';

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

describe('a snapshot whose fields have the wrong shape', () => {
  it.each([
    ['taints that are a map', node('n1', '', 'spec:\n  taints: {key: a, effect: NoSchedule}\n'), /cluster\.yaml:8:\d+: spec\.taints: /],
    ['a null taint', node('n1', '', 'spec:\n  taints: [null]\n'), /cluster\.yaml:8:\d+: spec\.taints\[0\]: /],
    ['a Node whose ownerReferences are a map', node('n1', '  ownerReferences: {kind: NodeClaim, name: c1}\n'), /cluster\.yaml:7:\d+: metadata\.ownerReferences: /],
    ['a ReplicaSet whose ownerReferences are a map', `${node('n1')}---\n${replicaSet('web-1', '  ownerReferences: {kind: Deployment, name: web}\n')}`, /cluster\.yaml:13:\d+: metadata\.ownerReferences: /],
  ])('refuses %s at the field', async (_, cluster, message) => {
    await expectRefused(folder({ 'cluster.yaml': cluster }), message);
  });
});

describe('NodeClaim names from owner references', () => {
  it('refuses two Nodes owned by one NodeClaim', async () => {
    const owned = '  ownerReferences: [{kind: NodeClaim, name: same}]\n';
    await expectRefused(folder({ 'cluster.yaml': `${node('n1', owned)}---\n${node('n2', owned)}` }), /cluster\.yaml:15:\d+: metadata\.ownerReferences\[0\]\.name: Node n2: NodeClaim same already owns Node n1/);
  });

  it('refuses an empty NodeClaim name', async () => {
    await expectRefused(folder({ 'cluster.yaml': node('n1', '  ownerReferences: [{kind: NodeClaim, name: ""}]\n') }), /cluster\.yaml:7:\d+: metadata\.ownerReferences\[0\]\.name: Node n1: NodeClaim name "": a name must not be empty/);
  });

  it('gives an owner-less node a NodeClaim name no other node of the snapshot owns', async () => {
    // The name the owner-less node gets on its own, then given to another node's NodeClaim.
    const alone = await simulateScenario(folder({ 'cluster.yaml': node('n1') }), { seed: 1, overrides: { durationSeconds: 60 } });
    const generated = alone.result.nodes.find((n) => n.name === 'n1')!.nodeClaim!;
    expect(generated).toMatch(/^general-/);
    const cluster = `${node('n1')}---\n${node('n2', `  ownerReferences: [{kind: NodeClaim, name: ${generated}}]\n`)}`;
    const { result } = await simulateScenario(folder({ 'cluster.yaml': cluster }), { seed: 1, overrides: { durationSeconds: 60 } });
    const claims = ['n1', 'n2'].map((name) => result.nodes.find((n) => n.name === name)!.nodeClaim);
    expect(claims[1]).toBe(generated);
    expect(claims[0]).not.toBe(generated);
    expect(claims[0]).toMatch(/^general-/);
  });
});

describe('duplicate objects in a snapshot', () => {
  it('refuses two Nodes of one name', async () => {
    await expectRefused(folder({ 'cluster.yaml': `${node('n1')}---\n${node('n1')}` }), /cluster\.yaml:11:\d+: metadata\.name: duplicate Node name n1 \(also at .*cluster\.yaml:1\)/);
  });

  it('refuses two ReplicaSets of one namespace and name', async () => {
    await expectRefused(folder({ 'cluster.yaml': `${node('n1')}---\n${replicaSet('web-1')}---\n${replicaSet('web-1')}` }), /cluster\.yaml:19:\d+: metadata\.name: duplicate ReplicaSet default\/web-1/);
  });
});

describe('times at the edge of the calendar', () => {
  it.each([
    ['the year 9999', '9999-12-31T23:00:00Z'],
    ['the year +275760', '+275760-09-13T00:00:00Z'],
  ])('refuses a Node created in %s', async (_, time) => {
    await expectRefused(folder({ 'cluster.yaml': node('n1').replace('2026-03-01T00:00:00Z', time) }), /cluster\.yaml:5:\d+: metadata\.creationTimestamp: a creationTimestamp must be from 1970-01-01/);
  });

  it('refuses --start in the year 9999', async () => {
    const r = await run('simulate', folder({ 'cluster.yaml': node('n1') }), '--start', '9999-12-31T23:30:00Z', '--duration', '1h');
    expect(r.err).toMatch(/the start must be from 1970-01-01/);
    expect(r.status).toBe(2);
  });

  it('refuses a Scenario start in the year 0', async () => {
    const doc = 'apiVersion: skiff.dev/v1alpha1\nkind: Scenario\nmetadata: {name: y0}\nspec:\n  start: "0000-01-01T00:00:00Z"\n  duration: 10m\n';
    await expectRefused(folder({ 's.yaml': doc }), /s\.yaml:5:\d+: spec\.start: start must be at or after 1970-01-01/);
  });
});

describe('regions', () => {
  it('refuses a region label that is no region name', async () => {
    const cluster = node('n1').replace('topology.kubernetes.io/region: us-west-2', 'topology.kubernetes.io/region: "us west 2"');
    await expectRefused(folder({ 'cluster.yaml': cluster }), /cluster\.yaml:6:\d+: metadata\.labels\["topology\.kubernetes\.io\/region"\]: Node n1: region "us west 2" is not an AWS region name/);
  });

  /** Node n1 of the snapshot moved to eu-west-1a (region eu-west-1), and a Scenario document without spec.region. */
  const euNode = node('n1').replace('topology.kubernetes.io/zone: us-west-2a', 'topology.kubernetes.io/zone: eu-west-1a').replace('topology.kubernetes.io/region: us-west-2', 'topology.kubernetes.io/region: eu-west-1');
  const scenarioIn = (zone: (letter: string) => string) => `apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: what-if}
spec:
  nodes:
  - {name: spare, instanceType: m5.large, zone: ${zone('b')}, capacityType: on-demand}
  spotPrices:
  - {instanceType: m5.large, zone: ${zone('c')}, price: 0.03}
  prices:
  - {instanceType: m5.xlarge, zone: ${zone('a')}, onDemand: 0.1}
  offerings:
    unavailable:
    - {instanceType: c5.large, zone: ${zone('a')}}
`;

  it("checks a Scenario document without spec.region against the snapshot's region, which the run uses", async () => {
    const dir = folder({ 'cluster.yaml': euNode, 'scenario.yaml': scenarioIn((l) => `eu-west-1${l}`) });
    const simulated = await run('simulate', dir, '--duration', '10m');
    expect(simulated.err).not.toMatch(/not in region/);
    expect(simulated.status).toBe(0);
    const validated = await run('validate', dir);
    expect(validated.out + validated.err).not.toMatch(/not in region/);
    expect(validated.status).toBe(0);
    const { result } = await simulateScenario(dir, { seed: 1, overrides: { durationSeconds: 600 } });
    expect(result.pricing.onDemand).toContain('used for eu-west-1');
    expect(result.nodes.find((n) => n.name === 'spare')?.zone).toBe('eu-west-1b');
  });

  it("refuses a Scenario document without spec.region that names zones of another region than the snapshot's", async () => {
    const dir = folder({ 'cluster.yaml': euNode, 'scenario.yaml': scenarioIn((l) => `us-west-2${l}`) });
    await expectRefused(dir, /scenario\.yaml:6:\d+: spec\.nodes\[0\]\.zone: zone us-west-2b is not in region eu-west-1/);
    await expectRefused(dir, /scenario\.yaml:8:\d+: spec\.spotPrices\[0\]\.zone: zone us-west-2c is not in region eu-west-1/);
    await expectRefused(dir, /scenario\.yaml:13:\d+: spec\.offerings\.unavailable\[0\]\.zone: zone us-west-2a is not in region eu-west-1/);
  });
});

describe('terminal escapes in input', () => {
  it('shows control characters of a skipped kind instead of sending them', async () => {
    const foreign = 'apiVersion: example.com/v1\nkind: "Evil\\e[2J\\e]0;owned\\a"\nmetadata: {name: "x\\e[31m"}\n';
    const r = await run('simulate', folder({ 'cluster.yaml': node('n1'), 'foreign.yaml': foreign }), '--duration', '1m');
    expect(r.status).toBe(0);
    expect(r.err).toMatch(/skipped Evil/);
    // eslint-disable-next-line no-control-regex
    expect(r.err + r.out).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(r.err).toContain('\\u001b[2J');
  });
});

describe('pods being deleted', () => {
  it('provisions nothing for a pending pod that is being deleted', async () => {
    const pod = (name: string, meta = '') =>
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  namespace: default\n  creationTimestamp: "2026-03-01T00:00:00Z"\n${meta}spec:\n  containers: [{name: c, image: x, resources: {requests: {cpu: "3"}}}]\nstatus: {phase: Pending}\n`;
    // n1 (m5.xlarge, 4 vCPU) is full with a 3-CPU pod; the second one, being deleted, would need a new node.
    const cluster = `${node('n1')}---\n${pod('runs').replace('spec:\n', 'spec:\n  nodeName: n1\n')}---\n${pod('going', '  deletionTimestamp: "2026-03-01T00:00:30Z"\n')}`;
    const { result } = await simulateScenario(folder({ 'cluster.yaml': cluster }), { seed: 1, overrides: { durationSeconds: 600 } });
    expect(result.nodes.map((n) => n.name)).toEqual(['n1']);
  });
});

describe('the what-if names the new capacity in the fleet after', () => {
  it('names the NodeClaim launched for a pending pod, which makes the saving negative though an empty node was deleted', async () => {
    // n1 is empty (deleted by emptiness); a pending 8-cpu pod fits nowhere and gets a NodeClaim of its own.
    const karpenter = KARPENTER.replace('consolidateAfter: 1h', 'consolidateAfter: 1m');
    const pending = `apiVersion: v1\nkind: Pod\nmetadata: {name: big, namespace: default, creationTimestamp: "2026-03-01T00:00:30Z"}\nspec:\n  containers: [{name: c, image: x, resources: {requests: {cpu: "8", memory: 8Gi}}}]\nstatus: {phase: Pending}\n`;
    const { result } = await simulateScenario(folder({ 'karpenter.yaml': karpenter, 'cluster.yaml': `${node('n1')}---\n${pending}` }), { seed: 1, overrides: { durationSeconds: 1800 } });
    const w = result.whatIf!;
    // The NodeClaim that runs the pod at the end (a second launch for the same pod, if any, was deleted as empty).
    const launched = result.nodeClaims.filter((c) => c.name !== result.nodes.find((n) => n.name === 'n1')!.nodeClaim && c.launchError === null && c.deletedAt === null);
    expect(launched).toHaveLength(1);
    expect(result.pods.find((p) => p.name === 'big')!.nodeClaim).toBe(launched[0]!.name);
    expect(result.nodes.find((n) => n.name === 'n1')!.deletedAt).not.toBeNull();
    // The fleet grew (an 8-cpu node for the pod, the 4-cpu n1 gone), but deleting n1 saved n1's list price.
    const m5xlarge = instanceTypeByName('m5.xlarge')!.onDemandPrice!;
    expect(w.newCapacity).toEqual({ hourlyUSD: launched[0]!.price, nodeClaims: 1 });
    expect(w.savingHourlyUSD).toBeCloseTo(m5xlarge - launched[0]!.price!, 4);
    const r = await run('simulate', folder({ 'karpenter.yaml': karpenter, 'cluster.yaml': `${node('n1')}---\n${pending}` }), '--duration', '30m');
    expect(r.out).toContain(`New capacity:       $${launched[0]!.price!.toFixed(2)}/h of the fleet after is 1 NodeClaim the provisioner launched`);
    // The summary's saving is on the nodes the cluster started with (n1 deleted: all of it), not the negative
    // difference a new pod's node makes (trial: "Saving: -$7.90/h (-18712.3 %)"); the change in all follows it.
    expect(r.out).toContain(`  Saving:             $${m5xlarge.toFixed(2)}/h on the nodes it started with (100.0 %), about $${(m5xlarge * 730).toFixed(0)} a month\n`);
    expect(r.out).toContain(`  Fleet change:       +$${Math.abs(w.savingHourlyUSD).toFixed(2)}/h in all\n`);
  });
});

describe('mirror (static) pods', () => {
  /**
   * A kubelet's mirror pod of node `n`, as the API server returns it: owned by its Node (`apiVersion: v1, kind: Node`),
   * bound to it, running (Karpenter core pkg/utils/pod/scheduling.go IsOwnedByNode).
   */
  const mirror = (n: string) =>
    `apiVersion: v1\nkind: Pod\nmetadata:\n  name: kube-proxy-${n}\n  namespace: kube-system\n  creationTimestamp: "2026-03-01T00:00:10Z"\n` +
    `  annotations: {kubernetes.io/config.mirror: 6f2e0c, kubernetes.io/config.source: file}\n` +
    `  ownerReferences: [{apiVersion: v1, kind: Node, name: ${n}, uid: 0b5e7a4c-0000-4000-8000-00000000000${n.length}, controller: true}]\n` +
    `spec:\n  nodeName: ${n}\n  containers: [{name: kube-proxy, image: kube-proxy, resources: {requests: {cpu: 100m, memory: 64Mi}}}]\nstatus: {phase: Running}\n`;
  const bare = (name: string, n: string) =>
    `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  namespace: default\n  creationTimestamp: "2026-03-01T00:00:20Z"\n` +
    `spec:\n  nodeName: ${n}\n  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]\nstatus: {phase: Running}\n`;

  it('deletes an otherwise empty Karpenter node as empty, and neither evicts nor reschedules its mirror pod', async () => {
    // consolidateAfter 1m instead of 1h: n1 is empty (its only pod is a mirror pod) once a minute passes.
    const karpenter = KARPENTER.replace('consolidateAfter: 1h', 'consolidateAfter: 1m');
    const { result } = await simulateScenario(folder({ 'karpenter.yaml': karpenter, 'cluster.yaml': `${node('n1')}---\n${mirror('n1')}` }), { seed: 1, overrides: { durationSeconds: 1800 } });
    const n1 = result.nodes.find((n) => n.name === 'n1')!;
    expect(n1.deletedAt).not.toBeNull();
    expect(result.whatIf!.actions.filter((a) => a.node === 'n1').map((a) => [a.method, a.decision, a.evictions])).toEqual([['emptiness', 'delete', 0]]);
    // The mirror pod stays bound to n1 until n1 goes, is never evicted, and no node is launched for it.
    const copies = result.pods.filter((p) => p.name === 'kube-proxy-n1');
    expect(copies.map((p) => [p.node, p.evictions])).toEqual([['n1', 0]]);
    expect(result.launchAttempts).toEqual([]);
    expect(result.nodes.map((n) => n.name)).toEqual(['n1']);
    const r = await run('simulate', folder({ 'karpenter.yaml': karpenter, 'cluster.yaml': `${node('n1')}---\n${mirror('n1')}` }), '--duration', '10m');
    expect(r.err).toContain('note: snapshot: 1 mirror (static) pod (owned by a Node) kept on its node');
  });

  it("counts no PDB violation when a node goes with a mirror pod a PDB covers (Karpenter's IsEvictable leaves it out)", async () => {
    const karpenter = KARPENTER.replace('consolidateAfter: 1h', 'consolidateAfter: 1m');
    const pdb = `apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: static, namespace: kube-system}\nspec:\n  minAvailable: 1\n  selector: {matchLabels: {app: static}}\n`;
    const labelled = mirror('n1').replace('  annotations:', '  labels: {app: static}\n  annotations:');
    const { result } = await simulateScenario(folder({ 'karpenter.yaml': karpenter, 'cluster.yaml': `${node('n1')}---\n${labelled}---\n${pdb}` }), { seed: 1, overrides: { durationSeconds: 1800 } });
    expect(result.nodes.find((n) => n.name === 'n1')!.deletedAt).not.toBeNull();
    expect(result.violations.pdb).toBe(0);
  });

  it('drains a node without evicting its mirror pod: only the other pods move', async () => {
    // expireAfter 10m: n1 (created 2026-03-01) has expired when the run starts; its drain moves the bare pod only.
    const karpenter = KARPENTER.replace('      spec:\n        nodeClassRef', '      spec:\n        expireAfter: 10m\n        nodeClassRef');
    const { result } = await simulateScenario(folder({ 'karpenter.yaml': karpenter, 'cluster.yaml': `${node('n1')}---\n${mirror('n1')}---\n${bare('app', 'n1')}` }), { seed: 1, overrides: { durationSeconds: 1800 } });
    expect(result.nodes.find((n) => n.name === 'n1')!.deletedAt).not.toBeNull();
    const action = result.whatIf!.actions.find((a) => a.node === 'n1')!;
    expect([action.method, action.evictions]).toEqual(['expiration', 1]);
    expect(result.pods.filter((p) => p.name === 'kube-proxy-n1').map((p) => [p.node, p.evictions])).toEqual([['n1', 0]]);
    const app = result.pods.filter((p) => p.name === 'app');
    expect(app[0]!.evictions).toBe(1);
    expect(app.at(-1)!.node).not.toBe('n1');
    expect(result.whatIf!.evictions.byOwner.map((o) => o.owner)).toEqual(['Pod/default/app']);
  });
});
