import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SimulationResult } from '../../shared/sim/result.js';
import { deploymentYaml, nodeClassYaml } from '../support/provisioner-harness.js';
import { simulateDocs } from '../support/simulate-docs.js';

// Issue 19 item 9: NodePools are tried in Karpenter's `OrderByWeight` order (weight descending, equal weights by name
// descending), in provisioning and in consolidation's simulation alike.

const scenario = (duration: string, events = '') => `
apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: weights}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: ${duration}
  region: us-west-2
${events}`;

/** A NodePool of the `default` EC2NodeClass with these requirement lines (YAML flow maps), consolidating after 1m. */
const pool = (name: string, requirements: readonly string[], weight?: number) => `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: ${name}}
spec:
${weight === undefined ? '' : `  weight: ${weight}\n`}  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
${requirements.map((r) => `        - ${r}`).join('\n')}
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 1m
    budgets: [{nodes: "100%"}]
`;

const deployment = deploymentYaml;

const run = (...docs: string[]): Promise<SimulationResult> => simulateDocs(3, ...docs);

const AMD64 = '{key: kubernetes.io/arch, operator: In, values: [amd64]}';
const GEN = '{key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["5"]}';

describe('NodePool weights (issue 19 item 9)', () => {
  it('orders NodePools of equal weight by name descending: the pods go to "beta" although "alpha" is cheaper', async () => {
    // alpha: compute-optimised (cheapest per cpu); beta: memory-optimised. Both take the pods; neither has a weight.
    const r = await run(
      nodeClassYaml(),
      pool('alpha', [AMD64, GEN, '{key: karpenter.k8s.aws/instance-category, operator: In, values: [c]}', '{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}']),
      pool('beta', [AMD64, GEN, '{key: karpenter.k8s.aws/instance-category, operator: In, values: [r]}', '{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}']),
      deployment('web', 3, '1', '1Gi'),
      scenario('20m'),
    );
    expect(r.nodeClaims.length).toBeGreaterThan(0);
    expect(r.nodeClaims.map((c) => c.nodePool)).toEqual(r.nodeClaims.map(() => 'beta'));
    for (const c of r.nodeClaims) expect(c.instanceType).toMatch(/^r\d/);
    expect(r.pods.every((p) => p.scheduledAt !== null)).toBe(true);
  });

  it('never consolidates pods from a higher-weight NodePool into a lower-weight one only because it is cheaper', async () => {
    // "reserved" (weight 50): on-demand m5a.large only. "spot" (weight 10): spot m types, cheaper for the same pods.
    // The pods land on "reserved". Karpenter's consolidation simulates with every NodePool in weight order, so the pods
    // would get a new node from "reserved" again — an m5a.large, the candidate's own type, which is no replacement:
    // nothing happens. Solving over the cheaper types alone passed over "reserved" and moved the pods to "spot".
    // m5a.large's spot offerings are pinned above its on-demand price, so no offering of the type is cheaper than the
    // candidate (a single node may be replaced by its own type on a cheaper offering, e.g. back to spot).
    const dearSpot = ['a', 'b', 'c', 'd'].map((z) => `    - {instanceType: m5a.large, zone: us-west-2${z}, price: 0.2}`).join('\n');
    const r = await run(
      nodeClassYaml(),
      pool('reserved', [AMD64, '{key: node.kubernetes.io/instance-type, operator: In, values: [m5a.large]}', '{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}'], 50),
      pool('spot', [AMD64, GEN, '{key: karpenter.k8s.aws/instance-category, operator: In, values: [m]}', '{key: karpenter.sh/capacity-type, operator: In, values: [spot]}'], 10),
      deployment('web', 2, '500m', '1Gi'),
      scenario('1h', `  spotPrices:\n${dearSpot}`),
    );
    expect(r.nodeClaims.length).toBeGreaterThan(0);
    expect(r.nodeClaims.map((c) => `${c.nodePool}/${c.instanceType}`)).toEqual(r.nodeClaims.map(() => 'reserved/m5a.large'));
    expect(r.disruptions).toEqual([]);
    expect(r.pods.filter((p) => p.evictions > 0)).toEqual([]);
    expect(r.pods.every((p) => p.scheduledAt !== null)).toBe(true);
    // And the node says why it is kept.
    expect(r.events.find((e) => e.reason === 'Unconsolidatable' && e.object.startsWith('Node/'))?.message).toMatch(/would get a new node from NodePool reserved \(weight 50\), tried before spot/);
  });

  it('still consolidates into a lower-weight NodePool when the higher-weight one cannot take the pods at all', async () => {
    // "gpu" (weight 50) has a taint the pods do not tolerate: the pods live in "general" (weight 10), and consolidation
    // within "general", the first NodePool that takes them, still happens after a scale-down.
    const r = await run(
      nodeClassYaml(),
      `${pool('gpu', [AMD64, GEN, '{key: karpenter.k8s.aws/instance-category, operator: In, values: [m]}'], 50).replace('      requirements:', '      taints: [{key: dedicated, value: gpu, effect: NoSchedule}]\n      requirements:')}`,
      pool('general', [AMD64, GEN, '{key: karpenter.k8s.aws/instance-category, operator: In, values: [m]}', '{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}'], 10),
      deployment('web', 12, '1', '2Gi'),
      scenario('1h', '  events:\n    - {at: 10m, scale: {kind: Deployment, namespace: default, name: web, replicas: 2}}'),
    );
    expect(r.nodeClaims.filter((c) => c.nodePool !== 'general')).toEqual([]);
    expect(r.disruptions.filter((d) => d.reason === 'Underutilized' || d.reason === 'Empty').length).toBeGreaterThan(0);
  });

  it('lets a NodePool at its limit consolidate into a cheaper node: the candidate\'s capacity is freed in the simulation', async () => {
    // limits.cpu 16: 15 × 1 cpu land on one m6i.4xlarge (16 vCPU), the whole limit. Scaled to 5, an m6i.2xlarge (8
    // vCPU) holds them for half the price. Karpenter's consolidation simulates without the candidate, so its 16 vCPU
    // no longer count against the limit (core scheduling/scheduler.go updateRemainingResources counts only the nodes
    // it is given); counting them left 0 cpu and no replacement.
    const r = await run(
      nodeClassYaml(),
      pool('primary', ['{key: karpenter.k8s.aws/instance-family, operator: In, values: [m6i]}', '{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}']).replace(
        '  disruption:',
        '  limits: {cpu: "16"}\n  disruption:',
      ),
      deployment('app', 15, '1', '256Mi'),
      scenario('1h', '  events:\n    - {at: 20m, scale: {kind: Deployment, namespace: default, name: app, replicas: 5}}'),
    );
    expect(r.nodeClaims.map((c) => c.instanceType)).toEqual(['m6i.4xlarge', 'm6i.2xlarge']);
    expect(r.disruptions.map((d) => `${d.reason}/${d.decision}`)).toEqual(['Underutilized/replace']);
    expect(r.violations.limits).toBe(0);
    expect(r.pods.filter((p) => p.deletedAt === null).every((p) => p.scheduledAt !== null)).toBe(true);
  });
});
