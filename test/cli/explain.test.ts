import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { explainNode, explainResult, formatExplanation, formatNodeExplanation, parsePodRef, type Explanation } from '../../shared/cli/explain.js';
import { main } from '../../shared/cli/main.js';
import { simulateScenario } from '../../shared/cli/simulate.js';
import type { SimulationResult } from '../../shared/sim/result.js';
import { GENERAL_POOL } from '../support/provisioner-harness.js';

async function explain(...args: string[]): Promise<{ status: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const status = await main(['explain', ...args], { out: (t) => (out += t), err: (t) => (err += t), isTTY: false });
  return { status, out, err };
}

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-explain-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const SCENARIO = 'apiVersion: skiff.dev/v1alpha1\nkind: Scenario\nmetadata: {name: typos}\nspec:\n  start: "2026-03-02T08:00:00Z"\n  duration: 30m\n';

const bare = (name: string, spec: string) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: default}
spec:
${spec}
  containers: [{name: c, image: x, resources: {requests: {cpu: 100m, memory: 128Mi}}}]
`;

describe('skiff explain', () => {
  describe('on examples/seed', () => {
    it('names node-type for default/high-memory-report, per NodePool, and exits 0', async () => {
      const r = await explain('examples/seed');
      expect(r.status).toBe(0);
      expect(r.out).toMatch(/^Scenario seed \(seed 1\): 1 pod pending at the end of the run/);
      expect(r.out).toContain('default/high-memory-report');
      expect(r.out).toContain('pending since 2026-03-02T08:00:00.000Z (3 h)');
      expect(r.out).toMatch(/why: no NodePool defines the label node-type/);
      expect(r.out).toMatch(/general: the pod requires node-type In \[high-memory\], but the NodePool neither requires nor sets the label node-type/);
      expect(r.out).toMatch(/batch: +the pod does not tolerate the NodePool's taint workload-type=batch:NoSchedule/);
      expect(r.out).toMatch(/gpu: +the pod does not tolerate the NodePool's taint nvidia.com\/gpu:NoSchedule/);
    });

    it('prints only the named pod as JSON, and nothing else on stdout', async () => {
      const r = await explain('examples/seed', 'default/high-memory-report', '--json');
      expect(r.status).toBe(0);
      const e = JSON.parse(r.out) as Explanation;
      expect(e).toMatchObject({ scenario: 'seed', seed: 1, at: '2026-03-02T11:00:00.000Z', pending: ['default/high-memory-report'] });
      expect(e.pods).toHaveLength(1);
      expect(e.pods[0]).toMatchObject({ pod: 'default/high-memory-report', owner: null, since: '2026-03-02T08:00:00.000Z', pendingSeconds: 10_800, hints: [] });
      expect(e.pods[0]!.reason).toMatch(/^no NodePool defines the label node-type/);
      expect(Object.keys(e.pods[0]!.nodePools).sort()).toEqual(['batch', 'general', 'gpu']);
      expect(e.pods[0]!.nodePools.general).toContain('node-type');
    });

    it('takes the run settings simulate takes, and refuses a bad one before simulating', async () => {
      const r = await explain('examples/seed', 'default/high-memory-report', '--json', '--consolidation', 'karpenter', '--provisioning', 'karpenter');
      expect(r.status).toBe(0);
      expect((JSON.parse(r.out) as Explanation).pending).toEqual(['default/high-memory-report']);
      const bad = await explain('examples/seed', '--consolidation', 'greedy');
      expect(bad.status).not.toBe(0);
      expect(bad.err).toContain("the consolidation setting must be 'skiff' or 'karpenter'");
      expect(bad.out).toBe('');
    });

    it('exits 1 for a pod that does not exist, guessing the name and listing the pending pods', async () => {
      const r = await explain('examples/seed', 'default/high-memory-reprt', '--json');
      expect(r.status).toBe(1);
      expect(r.out).toBe('');
      expect(r.err).toContain('no pod default/high-memory-reprt in the run; did you mean default/high-memory-report?');
      expect(r.err).toContain('Pending at the end of the run: default/high-memory-report');
    });

    it('never sends terminal escape sequences from the pod argument to the terminal', async () => {
      const r = await explain('examples/seed', 'a\u001b[31mred');
      expect(r.status).toBe(1);
      expect(r.err).not.toContain('\u001b');
      expect(r.err).toContain('a\\u001b[31mred');
    });
  });

  describe('explainResult', () => {
    let result: SimulationResult;
    beforeAll(async () => {
      result = (await simulateScenario('examples/seed', { seed: 1 })).result;
    });

    it('explains every pending pod without a name', () => {
      const outcome = explainResult(result);
      expect(outcome.ok && outcome.explanation.pods.map((p) => p.pod)).toEqual(['default/high-memory-report']);
    });

    it('says where a pod that is not pending runs', () => {
      const running = result.pods.find((p) => p.node !== null && p.deletedAt === null)!;
      const outcome = explainResult(result, { namespace: running.namespace, name: running.name });
      expect(outcome.ok).toBe(false);
      if (!outcome.ok) {
        expect(outcome.message).toContain(`pod ${running.namespace}/${running.name} is not pending at the end of the run: it runs on node ${running.node}`);
        expect(outcome.message).toContain('Pending at the end of the run: default/high-memory-report');
      }
      // one that waited for the NodeClaim it runs on says so (a wait under a second past its creation is not re-run)
      const waited = result.pods.find((p) => p.owner?.startsWith('ReplicaSet/gpu-inference') && p.deletedAt === null && p.scheduledAt !== null)!;
      const claim = result.nodeClaims.find((c) => c.name === waited.nodeClaim)!;
      const told = explainResult(result, { namespace: waited.namespace, name: waited.name });
      expect(!told.ok && told.message).toContain(`; it waited 1 min, from ${waited.firstPendingAt} to ${waited.scheduledAt}, for NodeClaim ${claim.name} (created at ${claim.createdAt}) to launch and register`);
    });

    it('says when a pod completed', () => {
      const done = result.pods.find((p) => p.owner === 'Job/batch' && p.deletedAt !== null)!;
      const outcome = explainResult(result, { namespace: 'default', name: done.name });
      expect(!outcome.ok && outcome.message).toContain('completed or was deleted at');
    });

    it('recognises a Deployment name and says none of its pods is pending', () => {
      const outcome = explainResult(result, { namespace: 'default', name: 'web' });
      expect(!outcome.ok && outcome.message).toMatch(/no pod default\/web in the run; web names the controller of 12 pods \(ReplicaSet\/web-\w+\), none of them pending/);
    });

    it('explains a node: what disrupted it, or what held it (trial: "why was this node not consolidated" was answered only in the JSON events)', () => {
      const emptied = result.disruptions.find((d) => d.reason === 'Empty')!;
      const gone = result.nodes.find((n) => n.nodeClaim === emptied.nodeClaim)!;
      const told = explainNode(result, gone.name);
      expect(told.ok).toBe(true);
      if (!told.ok) return;
      expect(told.node).toMatchObject({ node: gone.name, nodeClaim: emptied.nodeClaim, nodePool: 'batch', deletedAt: gone.deletedAt, deletionReason: 'Empty', podsAtEnd: [] });
      expect(told.node.disruptions).toEqual([{ at: emptied.at, reason: 'Empty', decision: 'delete', method: 'emptiness', completedAt: emptied.completedAt }]);
      expect(formatNodeExplanation(told.node)).toContain(`disrupted at ${emptied.at}: Empty (delete, emptiness), done at ${emptied.completedAt}`);
      // by its NodeClaim's name, and by its hostname without the domain
      expect(explainNode(result, emptied.nodeClaim)).toEqual(told);
      expect(explainNode(result, gone.name.split('.')[0]!)).toEqual(told);
      // a node that runs at the end lists its pods; the Events that held any node are its own, latest first
      const running = result.nodes.find((n) => n.deletedAt === null && n.nodeClaim !== null)!;
      const live = explainNode(result, running.name);
      expect(live.ok && live.node.podsAtEnd.length).toBe(result.pods.filter((p) => p.node === running.name && p.deletedAt === null).length);
      expect(live.ok && live.node.heldBy.every((h) => result.events.some((e) => e.at === h.at && e.message === h.message && (e.object === `Node/${running.name}` || e.object === `NodeClaim/${running.nodeClaim}` || e.object.startsWith('NodePool/'))))).toBe(true);
      const typo = explainNode(result, `${emptied.nodeClaim}x`);
      expect(!typo.ok && typo.message).toContain(`did you mean ${emptied.nodeClaim}?`);
      const shortTypo = explainNode(result, gone.name.split('.')[0]!.slice(0, -1));
      expect(!shortTypo.ok && shortTypo.message).toContain(`did you mean ${gone.name.split('.')[0]}?`);
      const missing = explainNode(result, 'nope');
      expect(!missing.ok && missing.message).toMatch(/^no node nope in the run\nNodes at the end: /);
    });

    it('formats the same explanation the CLI prints', () => {
      const outcome = explainResult(result);
      expect(outcome.ok && formatExplanation(outcome.explanation)).toMatch(/default\/high-memory-report\n {2}pending since/);
    });
  });

  describe('parsePodRef', () => {
    it('reads namespace/name, and a bare name in namespace default', () => {
      expect(parsePodRef('kube-system/coredns')).toEqual({ namespace: 'kube-system', name: 'coredns' });
      expect(parsePodRef('high-memory-report')).toEqual({ namespace: 'default', name: 'high-memory-report' });
    });

    it('takes --node, and refuses a pod and --node together before simulating', async () => {
      const both = await explain('examples/seed', 'default/web', '--node', 'x');
      expect(both).toMatchObject({ status: 2, out: '' });
      expect(both.err).toContain('name a pod or --node, not both');
      const empty = await explain('examples/seed', '--node', ' ');
      expect(empty).toMatchObject({ status: 2, out: '', err: 'skiff explain: --node needs a Node or NodeClaim name\n' });
      const r = await explain('examples/seed', '--node', 'nope', '--json');
      expect(r.status).toBe(1);
      expect(r.err).toMatch(/^skiff explain: no node nope in the run/);
    });

    it('exits 2 for a malformed pod argument', async () => {
      const r = await explain('examples/seed', 'a/b/c');
      expect(r.status).toBe(2);
      expect(r.err).toMatch(/expected namespace\/name or name/);
    });
  });

  it('gives did-you-mean hints for near-miss label keys, values and tolerations', async () => {
    const gpuPool = `---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    metadata: {labels: {workload-type: gpu}}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [g4dn]}]
      taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
`;
    const dir = folder({
      'pools.yaml': GENERAL_POOL + gpuPool,
      'pods.yaml': [
        bare('typo-key', '  nodeSelector: {workload-typ: general}'),
        bare('typo-value', '  nodeSelector: {workload-type: genral}'),
        bare('typo-toleration', '  nodeSelector: {workload-type: gpu}\n  tolerations: [{key: nvidia.com/gpus, operator: Exists}]'),
      ].join('---\n'),
      'scenario.yaml': SCENARIO,
    });
    const r = await explain(dir, '--json');
    expect(r.status).toBe(0);
    const e = JSON.parse(r.out) as Explanation;
    const hints = Object.fromEntries(e.pods.map((p) => [p.pod, p.hints]));
    expect(hints['default/typo-key']).toEqual([expect.stringMatching(/^did you mean the label workload-type\?/)]);
    expect(hints['default/typo-value']).toEqual([expect.stringMatching(/^did you mean workload-type=general\?/)]);
    expect(hints['default/typo-toleration']).toEqual([expect.stringMatching(/^did you mean to tolerate nvidia.com\/gpu\?/)]);
    const text = await explain(dir, 'typo-value');
    expect(text.out).toMatch(/ {2}hints:\n {4}- did you mean workload-type=general\?/);
  });

  it('explains a pod that waited and then ran at the last second before its capacity was asked for (trial: "not pending at the end" was the only answer to why it waited 25 minutes)', async () => {
    const narrow = GENERAL_POOL.replace('values: [c, m, r]}', 'values: [c, m, r]}\n        - {key: node.kubernetes.io/instance-type, operator: In, values: [c6a.large]}').replace('values: [us-west-2a, us-west-2b, us-west-2c]', 'values: [us-west-2a]');
    const events = '  region: us-west-2\n  events:\n    - {at: 0s, insufficientCapacity: {instanceType: c6a.large, zone: us-west-2a, capacityType: spot, for: 30m}}\n    - {at: 0s, insufficientCapacity: {instanceType: c6a.large, zone: us-west-2a, capacityType: on-demand, for: 10m}}\n';
    const dir = folder({ 'pools.yaml': narrow, 'pods.yaml': bare('waits', '  nodeSelector: {workload-type: general}'), 'scenario.yaml': SCENARIO + events });
    const { result } = await simulateScenario(dir, { seed: 1 });
    const record = result.pods.find((p) => p.name === 'waits')!;
    expect(record.scheduledAt).not.toBeNull();
    const r = await explain(dir, 'waits');
    expect(r.status).toBe(0);
    const created = result.nodeClaims.find((c) => c.name === record.nodeClaim)!.createdAt;
    const at = new Date(Date.parse(created) - 1000).toISOString();
    expect(r.out).toContain(`default/waits is not pending at the end of the run, but it waited`);
    expect(r.out).toContain(`from ${record.firstPendingAt} to ${record.scheduledAt}. Here is why, at ${at}`);
    expect(r.out).toContain(`Scenario typos (seed 1): 1 pod pending at ${at}\n`);
    expect(r.out).toMatch(/general: every fitting instance type is unavailable in the allowed zones and capacity types after insufficient-capacity errors \(c6a\.large on-demand in us-west-2a, c6a\.large spot in us-west-2a\)/);
    // without a pod named, nothing is pending at the end: the pod that waited longest is named, with how to ask why
    const all = await explain(dir);
    expect(all.out).toContain('Every pod was placed.\n1 pod waited during the run; default/waits longest');
    expect(all.out).toContain(`\`skiff explain ${dir} default/waits\` says why`);
    // --json prints the explanation at that moment alone
    const json = JSON.parse((await explain(dir, 'waits', '--json')).out) as Explanation;
    expect(json).toMatchObject({ at, pending: ['default/waits'], waited: { since: record.firstPendingAt, until: record.scheduledAt, seconds: (Date.parse(record.scheduledAt!) - Date.parse(record.firstPendingAt!)) / 1000 } });
  });

  it('explains a recreated bare pod by its own Events only, not by its predecessor\'s nomination (trial: "should schedule on" the NodeClaim being expired)', async () => {
    const pool = GENERAL_POOL.replace('values: [c, m, r]}', 'values: [c, m, r]}\n        - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}').replace('      requirements:', '      expireAfter: 40m\n      requirements:');
    const dir = folder({ 'pools.yaml': pool, 'pods.yaml': bare('bare', '  nodeSelector: {workload-type: general}'), 'scenario.yaml': SCENARIO.replace('duration: 30m', 'duration: 1h') });
    const { result } = await simulateScenario(dir, { seed: 1 });
    const records = result.pods.filter((p) => p.name === 'bare');
    expect(records.length).toBeGreaterThanOrEqual(2); // evicted by the expiration and created again
    const second = records[1]!;
    // the moment the new pod exists and no pass has seen it yet
    const at = Math.ceil((Date.parse(second.createdAt) - Date.parse(result.start)) / 1000);
    const r = await explain(dir, 'bare', '--duration', `${at}s`, '--json');
    const e = JSON.parse(r.out) as Explanation;
    expect(e.pods[0]!.reason).toBe('not yet seen by the provisioner');
  });

  it('exits 2 naming file and line for a bad scenario, and simulates nothing', async () => {
    const good = readFileSync('examples/seed/ec2nodeclass-default.yaml', 'utf8');
    const dir = folder({
      'a-class.yaml': good,
      'b-pool.yaml': ['apiVersion: karpenter.sh/v1', 'kind: NodePool', 'metadata: {name: general}', 'spec:', '  weight: 101', '  template:', '    spec:', '      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}', '      requirements: []', ''].join('\n'),
    });
    const r = await explain(dir, '--json');
    expect(r.status).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/^skiff explain: invalid input, nothing was simulated/);
    expect(r.err).toMatch(/b-pool\.yaml:5(:\d+)?: spec\.weight/);
  });
});
