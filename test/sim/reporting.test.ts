import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../shared/cli/main.js';
import { simulateScenario } from '../../shared/cli/simulate.js';
import type { SimulationResult } from '../../shared/sim/result.js';
import { ResultSchema } from '../../shared/sim/result-schema.js';
import { deploymentYaml, nodeClassYaml } from '../support/provisioner-harness.js';

// Issue 19 item 11: what users read — pods pending during the run, every replacement of a disruption, validate's
// checks, and why a node with spare room is kept.

const scenario = (duration: string, events = '') => `
apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: reporting}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: ${duration}
  region: us-west-2
${events}`;

const pool = (requirements: readonly string[], extra = '') => `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
${requirements.map((r) => `        - ${r}`).join('\n')}
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 1m
    budgets: [{nodes: "100%"}]
${extra}`;

const deployment = deploymentYaml;

function folder(...docs: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-reporting-'));
  writeFileSync(join(dir, 'scenario.yaml'), docs.map((d) => d.trim()).join('\n---\n'));
  return dir;
}

async function run(...docs: string[]): Promise<SimulationResult> {
  return (await simulateScenario(folder(...docs), { seed: 2 })).result;
}

function capture(): { io: { out: (t: string) => void; err: (t: string) => void; isTTY: boolean }; out: () => string } {
  let out = '';
  return { io: { out: (t) => (out += t), err: () => {}, isTTY: false }, out: () => out };
}

const M_ON_DEMAND = ['{key: kubernetes.io/arch, operator: In, values: [amd64]}', '{key: karpenter.k8s.aws/instance-category, operator: In, values: [m]}', '{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}'];

describe('what users read (issue 19 item 11)', () => {
  it('the summary reports pods that were pending during the run, not only those pending at the end', async () => {
    // A cpu limit of 4 holds "first" (3 × 1 cpu on a 4-vCPU node); "second"'s pods wait until "first" scales to 0 at 20m.
    const dir = folder(
      nodeClassYaml(),
      pool([...M_ON_DEMAND, '{key: karpenter.k8s.aws/instance-cpu, operator: In, values: ["4"]}'], '  limits: {cpu: "4"}\n'),
      deployment('first', 3, '1', '1Gi'),
      deployment('second', 2, '1', '1Gi'),
      scenario('40m', '  events:\n    - {at: 20m, scale: {kind: Deployment, namespace: default, name: first, replicas: 0}}'),
    );
    const c = capture();
    expect(await main(['simulate', dir], c.io)).toBe(0);
    const text = c.out();
    // Nothing is pending at the end…
    expect(text).toMatch(/, 0 pending\n/);
    // …but all 5 pods waited for the first node (about a minute), and "second"'s 2 about 20 minutes more: the summary
    // says so, naming the longest wait.
    const line = text.split('\n').find((l) => l.startsWith('Pending during the run:'));
    expect(line).toMatch(/^Pending during the run: 5 pods, peak 5 at 2026-03-02T08:00:\d\d\.\d{3}Z, (\d+(\.\d+)?) pod-minutes$/);
    const podMinutes = Number(/, ([\d.]+) pod-minutes$/.exec(line!)![1]);
    expect(podMinutes).toBeGreaterThan(40);
    expect(podMinutes).toBeLessThan(46);
    expect(text).toMatch(/ {2}longest wait: 2\dm\d\ds — default\/second-[a-z0-9]+-[a-z0-9]+ \(pending since 2026-03-02T08:00:/);

    const j = capture();
    expect(await main(['simulate', dir, '--json'], j.io)).toBe(0);
    const result = ResultSchema.parse(JSON.parse(j.out()));
    expect(result.pending).toMatchObject({ pods: 5, peak: 5, longest: { stillPending: false } });
    expect(result.pending!.longest!.pod).toMatch(/^default\/second-/);
    expect(result.pending!.longest!.seconds).toBeGreaterThan(19 * 60);
  });

  it('disruptions[].replacements lists the replacement NodeClaims (replacement is the first)', async () => {
    // 8 × 1 cpu pods on one big node, scaled to 1: consolidation replaces the node with a smaller one.
    const r = await run(nodeClassYaml(), pool(M_ON_DEMAND), deployment('web', 8, '1', '1Gi'), scenario('40m', '  events:\n    - {at: 10m, scale: {kind: Deployment, namespace: default, name: web, replicas: 1}}'));
    const replaced = r.disruptions.filter((d) => d.decision === 'replace');
    expect(replaced.length).toBeGreaterThan(0);
    for (const d of replaced) {
      expect(d.replacements).toEqual([d.replacement]);
      expect(r.nodeClaims.map((c) => c.name)).toContain(d.replacement);
    }
    for (const d of r.disruptions.filter((x) => x.decision === 'delete')) expect(d.replacements).toEqual([]);
  });

  it('an Unconsolidatable Event on the Node and the NodeClaim says why a node with spare room is kept, deduplicated', async () => {
    // One instance type only: after the scale-down the node has room to spare but nothing cheaper can replace it.
    const r = await run(
      nodeClassYaml(),
      pool(['{key: node.kubernetes.io/instance-type, operator: In, values: [m5.xlarge]}', '{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}']),
      deployment('web', 3, '1', '1Gi'),
      scenario('1h', '  events:\n    - {at: 5m, scale: {kind: Deployment, namespace: default, name: web, replicas: 1}}'),
    );
    expect(r.nodeClaims).toHaveLength(1);
    expect(r.disruptions).toEqual([]);
    const claim = r.nodeClaims[0]!.name;
    const node = r.nodes[0]!.name;
    const events = r.events.filter((e) => e.reason === 'Unconsolidatable');
    const onNode = events.filter((e) => e.object === `Node/${node}`);
    const onClaim = events.filter((e) => e.object === `NodeClaim/${claim}`);
    expect(onNode.length).toBeGreaterThan(0);
    expect(onClaim.length).toBe(onNode.length);
    expect(onNode[0]!.message).toMatch(/^Cannot consolidate: .*cheaper/);
    // At most one per object every 15 minutes (the node is a candidate every minute for ~50 minutes).
    expect(onNode.length).toBeLessThanOrEqual(4);
    for (let i = 1; i < onNode.length; i++) expect(Date.parse(onNode[i]!.at) - Date.parse(onNode[i - 1]!.at)).toBeGreaterThanOrEqual(15 * 60_000);
  });

  it('an Unconsolidatable Event names the NodePool setting that keeps a node: WhenEmpty with pods, consolidateAfter Never', async () => {
    const whenEmpty = await run(
      nodeClassYaml(),
      pool(M_ON_DEMAND).replace('consolidationPolicy: WhenEmptyOrUnderutilized', 'consolidationPolicy: WhenEmpty'),
      deployment('web', 1, '1', '1Gi'),
      scenario('30m'),
    );
    const node = whenEmpty.nodes[0]!.name;
    expect(whenEmpty.events.filter((e) => e.reason === 'Unconsolidatable' && e.object === `Node/${node}`).map((e) => e.message)).toEqual([
      'Cannot consolidate: NodePool general has consolidation policy WhenEmpty, but the node is not empty',
      'Cannot consolidate: NodePool general has consolidation policy WhenEmpty, but the node is not empty',
    ]);
    const never = await run(nodeClassYaml(), pool(M_ON_DEMAND).replace('consolidateAfter: 1m', 'consolidateAfter: Never'), deployment('web', 1, '1', '1Gi'), scenario('10m'));
    expect(never.events.find((e) => e.reason === 'Unconsolidatable' && e.object.startsWith('NodeClaim/'))?.message).toBe('Cannot consolidate: NodePool general has consolidation disabled (consolidateAfter: Never)');
  });

  it('skiff validate applies the checks simulate applies across objects: nodeClassRef group and EC2NodeClass name', async () => {
    const wrongGroup = folder(nodeClassYaml(), pool(M_ON_DEMAND).replace('group: karpenter.k8s.aws', 'group: karpenter.azure.com'));
    const c1 = capture();
    expect(await main(['validate', wrongGroup], c1.io)).toBe(1);
    expect(c1.out()).toMatch(/scenario\.yaml:\d+:\d+: spec\.template\.spec\.nodeClassRef\.group: nodeClassRef\.group must be karpenter\.k8s\.aws/);
    const s1 = capture();
    expect(await main(['simulate', wrongGroup], s1.io)).toBe(2);

    const missingClass = folder(nodeClassYaml(), pool(M_ON_DEMAND).replace('name: default}', 'name: gpu}'));
    const c2 = capture();
    expect(await main(['validate', missingClass], c2.io)).toBe(1);
    expect(c2.out()).toMatch(/nodeClassRef\.name: NodePool general references EC2NodeClass "gpu", which is not in the scenario/);

    // A folder of NodePools alone may name an EC2NodeClass already in the cluster: not a problem there.
    const poolsOnly = folder(pool(M_ON_DEMAND));
    const c3 = capture();
    expect(await main(['validate', poolsOnly], c3.io)).toBe(0);
  });
});
