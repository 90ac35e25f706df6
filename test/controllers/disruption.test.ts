// The disruption controller end to end: scenarios run through the real provisioner, lifecycle and disruption
// handlers (simulateScenario), with the observer counting budget, PDB and do-not-disrupt violations independently.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { simulateScenario } from '../../shared/cli/simulate.js';
import type { SimulationResult } from '../../shared/sim/result.js';
import { nodeClassYaml } from '../support/provisioner-harness.js';

const NODE_CLASS = nodeClassYaml;

interface PoolOptions {
  readonly capacity?: string;
  readonly consolidateAfter?: string;
  readonly policy?: string;
  readonly budgets?: string;
  readonly expireAfter?: string;
  readonly terminationGracePeriod?: string;
}

const POOL = (o: PoolOptions = {}) => `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      expireAfter: ${o.expireAfter ?? '720h'}${o.terminationGracePeriod ? `\n      terminationGracePeriod: ${o.terminationGracePeriod}` : ''}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [${o.capacity ?? 'on-demand'}]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r]}
        - {key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["4"]}
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
  disruption:
    consolidationPolicy: ${o.policy ?? 'WhenEmptyOrUnderutilized'}
    consolidateAfter: ${o.consolidateAfter ?? '5m'}
    budgets: ${o.budgets ?? '[{nodes: "10%"}]'}
`;

const deployment = (name: string, replicas: number, cpu: string, memory: string, podExtra = '', templateAnnotations = '') => `
apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}${templateAnnotations ? `, annotations: {${templateAnnotations}}` : ''}}
    spec:${podExtra}
      containers: [{name: app, image: nginx, resources: {requests: {cpu: "${cpu}", memory: ${memory}}}}]
`;

const scenario = (duration: string, events = '[]', extra = '') => `
apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: disruption}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: ${duration}
  events: ${events}${extra}
`;

async function run(...docs: string[]): Promise<SimulationResult> {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-disruption-'));
  writeFileSync(join(dir, 'scenario.yaml'), docs.join('\n---\n'));
  return (await simulateScenario(dir, { seed: 3 })).result;
}

const START = Date.parse('2026-03-02T08:00:00Z');
const at = (minutes: number) => START + minutes * 60_000;

/** Fleet price at an instant, USD per hour, from the NodeClaims' prices and lifetimes. */
function hourlyCostAt(result: SimulationResult, ms: number): number {
  return result.nodeClaims
    .filter((c) => c.price !== null && c.launchedAt !== null && Date.parse(c.launchedAt) <= ms && (c.deletedAt === null || Date.parse(c.deletedAt) > ms))
    .reduce((sum, c) => sum + c.price!, 0);
}

function expectNoDisruptionViolations(result: SimulationResult): void {
  expect(result.violations).toMatchObject({ budget: 0, pdb: 0, doNotDisrupt: 0, duplicateLaunches: 0, leakedInstances: 0, placement: 0, churn: 0, evictionLoops: 0 });
}

function runningPods(result: SimulationResult, owner: string): number {
  return result.pods.filter((p) => p.owner?.startsWith(`ReplicaSet/${owner}`) && p.deletedAt === null && p.node !== null).length;
}

describe('disruption', () => {
  it('a scale-in from 60 to 5 pods brings the fleet cost down within 15 minutes after consolidateAfter', async () => {
    const result = await run(NODE_CLASS(), POOL({ consolidateAfter: '5m' }), deployment('web', 60, '1', '2Gi'), scenario('3h', `[{at: 60m, scale: {kind: Deployment, namespace: default, name: web, replicas: 5}}]`));
    expectNoDisruptionViolations(result);
    const before = hourlyCostAt(result, at(59));
    const deadline = hourlyCostAt(result, at(60 + 5 + 15));
    const end = hourlyCostAt(result, at(179));
    expect(before).toBeGreaterThan(0);
    // The 5 remaining pods need a fraction of the fleet: at least half of it is gone 15 minutes after consolidateAfter.
    expect(deadline).toBeLessThanOrEqual(before * 0.5);
    expect(end).toBeLessThanOrEqual(deadline);
    expect(result.disruptions.length).toBeGreaterThan(0);
    for (const d of result.disruptions) {
      expect(['Empty', 'Underutilized']).toContain(d.reason);
      expect(Date.parse(d.at)).toBeGreaterThanOrEqual(at(60 + 5));
      expect(d.completedAt).not.toBeNull();
    }
    expect(runningPods(result, 'web')).toBe(5);
    expect(result.unschedulable).toEqual([]);
  });

  it('a pass with work in flight asks for a follow-up 20 s later, which validates and starts the next command before the next scheduled pass', async () => {
    const result = await run(NODE_CLASS(), POOL({ consolidateAfter: '1m' }), deployment('web', 60, '1', '2Gi'), scenario('2h', `[{at: 60m, scale: {kind: Deployment, namespace: default, name: web, replicas: 5}}]`));
    expectNoDisruptionViolations(result);
    // Scheduled passes run at :30 of each minute (the schedule's offset); follow-ups in 20 s slots (:00, :20, :40).
    const starts = [...new Set(result.disruptions.map((d) => Date.parse(d.at)))].sort((a, b) => a - b);
    expect(starts.length).toBeGreaterThan(1);
    expect(starts.some((t) => (t - START) % 60_000 !== 30_000)).toBe(true);
    // Commands start less than a minute apart: the follow-up validated a proposal 20 s old, not a minute old.
    expect(starts.slice(1).some((t, i) => t - starts[i]! < 60_000)).toBe(true);
    expect(result.disruptions.every((d) => d.completedAt !== null)).toBe(true);
  });

  it('a changed EC2NodeClass replaces every node one budget at a time, each replacement initialized before its node drains', async () => {
    const changedClass = NODE_CLASS('\n  tags: {team: platform}').trim();
    const result = await run(
      NODE_CLASS(),
      POOL({ budgets: '[{nodes: "1"}]', consolidateAfter: 'Never' }),
      deployment('api', 6, '3', '4Gi', `\n      topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: api}}}]`),
      scenario('4h', `[{at: 60m, apply: ${JSON.stringify(parseYamlObject(changedClass))}}]`),
    );
    expectNoDisruptionViolations(result);
    const original = result.nodeClaims.filter((c) => c.launchedAt !== null && Date.parse(c.launchedAt) < at(60));
    expect(original.length).toBeGreaterThanOrEqual(2);
    const byName = new Map(result.nodeClaims.map((c) => [c.name, c]));
    for (const claim of original) {
      expect(claim.deletionReason).toBe('Drifted');
      const d = result.disruptions.find((x) => x.nodeClaim === claim.name)!;
      expect(d.decision).toBe('replace');
      const replacement = byName.get(d.replacement!)!;
      expect(replacement.initializedAt).not.toBeNull();
      expect(Date.parse(replacement.initializedAt!)).toBeLessThanOrEqual(Date.parse(d.drainStartedAt!));
    }
    // Budget nodes: "1": the drifted nodes' disruptions never overlap.
    const windows = result.disruptions.map((d) => [Date.parse(d.at), Date.parse(d.completedAt!)] as const).sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < windows.length; i++) expect(windows[i]![0]).toBeGreaterThanOrEqual(windows[i - 1]![1]);
    expect(runningPods(result, 'api')).toBe(6);
  });

  it('never voluntarily disrupts a node with a do-not-disrupt pod; a node annotated later is spared too; an invalid value is ignored with a Warning', async () => {
    const nodes = `
  nodes:
    - {name: n1, instanceType: m5.2xlarge, zone: us-west-2a, capacityType: on-demand, nodePool: general, createdAt: "-1h"}
    - {name: n2, instanceType: m5.2xlarge, zone: us-west-2a, capacityType: on-demand, nodePool: general, createdAt: "-1h"}
    - {name: n3, instanceType: m5.2xlarge, zone: us-west-2a, capacityType: on-demand, nodePool: general, createdAt: "-1h"}`;
    const pod = (name: string, node: string, annotations = '') => `
apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: default${annotations ? `, annotations: {${annotations}}` : ''}}
spec:
  nodeName: ${node}
  containers: [{name: app, image: nginx, resources: {requests: {cpu: "500m", memory: 1Gi}}}]
`;
    const result = await run(
      NODE_CLASS(),
      POOL({ consolidateAfter: '1m', budgets: '[{nodes: "100%"}]' }),
      pod('pinned', 'n1', 'karpenter.sh/do-not-disrupt: "true"'),
      pod('free', 'n2'),
      pod('sloppy', 'n2', 'karpenter.sh/do-not-disrupt: "yes"'),
      pod('guarded', 'n3'),
      scenario('1h', `[{at: 0s, annotate: {kind: Node, name: n3, annotations: {karpenter.sh/do-not-disrupt: "true"}}}]`, nodes),
    );
    expectNoDisruptionViolations(result);
    const claimOf = (node: string) => result.nodes.find((n) => n.name === node)!.nodeClaim!;
    const deleted = new Set(result.nodeClaims.filter((c) => c.deletedAt !== null).map((c) => c.name));
    expect(deleted.has(claimOf('n1'))).toBe(false);
    expect(deleted.has(claimOf('n3'))).toBe(false);
    // n2's pod fits beside the others: n2 goes, its (bare) pod is recreated and lands on a kept node.
    expect(deleted.has(claimOf('n2'))).toBe(true);
    expect(result.pods.find((p) => p.name === 'pinned')!.evictions).toBe(0);
    expect(result.pods.find((p) => p.name === 'guarded')!.evictions).toBe(0);
    const free = result.pods.filter((p) => p.name === 'free' && p.deletedAt === null);
    expect(free.map((p) => p.node)).toEqual([expect.stringMatching(/^n[13]$/)]);
    expect(result.disruptions.map((d) => d.nodeClaim)).toEqual([claimOf('n2')]);
    // The blocked nodes say why, as Karpenter's DisruptionBlocked events do.
    const blocked = result.events.filter((e) => e.reason === 'DisruptionBlocked');
    expect(blocked.some((e) => e.object === 'Node/n1' && e.message.includes('pod default/pinned is annotated karpenter.sh/do-not-disrupt'))).toBe(true);
    expect(blocked.some((e) => e.object === 'Node/n3' && e.message.includes('node n3 is annotated karpenter.sh/do-not-disrupt'))).toBe(true);
    // "yes" protects nothing (n2 went with it), and the pod is told so once per pod, as Karpenter does.
    expect(result.pods.find((p) => p.name === 'sloppy')!.evictions).toBe(1);
    const invalid = result.events.filter((e) => e.reason === 'InvalidDoNotDisruptAnnotation');
    expect(invalid.length).toBeGreaterThanOrEqual(1);
    expect(invalid.length).toBeLessThanOrEqual(2); // the bare pod is recreated (a new uid) and reported again
    for (const e of invalid) expect(e).toMatchObject({ type: 'Warning', object: 'Pod/default/sloppy', message: expect.stringContaining('value "yes"') });
  });

  it('writes the same DisruptionBlocked Event at most once per 15 minutes, even while the cluster keeps changing', async () => {
    // A Deployment flapping 1 ↔ 2 replicas every 2 minutes changes the world every pass, so every pass looks for
    // candidates and finds n1 blocked again.
    const flaps = Array.from({ length: 20 }, (_, i) => `{at: ${2 * i + 1}m, scale: {kind: Deployment, namespace: default, name: tick, replicas: ${i % 2 === 0 ? 2 : 1}}}`).join(', ');
    const result = await run(
      NODE_CLASS(),
      POOL({ consolidateAfter: '1m', budgets: '[{nodes: "100%"}]' }),
      `apiVersion: v1\nkind: Pod\nmetadata: {name: pinned, namespace: default, annotations: {karpenter.sh/do-not-disrupt: "true"}}\nspec:\n  nodeName: n1\n  containers: [{name: app, image: nginx, resources: {requests: {cpu: 500m, memory: 1Gi}}}]\n`,
      deployment('tick', 1, '100m', '128Mi'),
      scenario('40m', `[${flaps}]`, `\n  nodes:\n    - {name: n1, instanceType: m5.2xlarge, zone: us-west-2a, capacityType: on-demand, nodePool: general, createdAt: "-1h"}`),
    );
    const blocked = result.events.filter((e) => e.reason === 'DisruptionBlocked' && e.object === 'Node/n1');
    expect(blocked.length).toBeGreaterThanOrEqual(1);
    expect(blocked.length).toBeLessThanOrEqual(3); // 40 minutes: at 0, 15 and 30 at most
  });

  it('reports a PDB that can never allow an eviction and leaves its nodes alone', async () => {
    const pdb = `
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db, namespace: default}
spec:
  minAvailable: 2
  selector: {matchLabels: {app: db}}
`;
    const result = await run(
      NODE_CLASS(),
      POOL({ consolidateAfter: '1m', budgets: '[{nodes: "100%"}]' }),
      deployment('db', 2, '250m', '512Mi', `\n      affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: db}}}]}}`),
      pdb,
      scenario('1h'),
    );
    expectNoDisruptionViolations(result);
    expect(result.events.some((e) => e.reason === 'DisruptionBlocked' && e.message.includes('PodDisruptionBudget default/db can never allow an eviction'))).toBe(true);
    expect(result.pods.filter((p) => p.owner?.startsWith('ReplicaSet/db')).every((p) => p.evictions === 0)).toBe(true);
    expect(result.disruptions).toEqual([]);
  });

  it('expires nodes at expireAfter without waiting for budgets, and their pods run again elsewhere', async () => {
    const result = await run(NODE_CLASS(), POOL({ expireAfter: '1h', budgets: '[{nodes: "0"}]', consolidateAfter: 'Never' }), deployment('web', 4, '1', '2Gi'), scenario('150m'));
    expectNoDisruptionViolations(result);
    const first = result.nodeClaims.filter((c) => c.launchedAt !== null && Date.parse(c.launchedAt) < at(10));
    expect(first.length).toBeGreaterThan(0);
    for (const claim of first) {
      expect(claim.deletionReason).toBe('Expired');
      const expiry = Date.parse(claim.createdAt) + 3_600_000;
      // The disruption pass runs every minute; the drain waits for evicted pods to go (one more pass).
      expect(Date.parse(claim.deletedAt!)).toBeGreaterThanOrEqual(expiry);
      expect(Date.parse(claim.deletedAt!)).toBeLessThanOrEqual(expiry + 3 * 60_000);
    }
    expect(result.disruptions.every((d) => d.reason === 'Expired' && d.decision === 'delete' && d.replacement === null)).toBe(true);
    expect(runningPods(result, 'web')).toBe(4);
  });

  it('a budget of zero holds every voluntary disruption back and says so on the NodePool', async () => {
    const result = await run(
      NODE_CLASS(),
      POOL({ consolidateAfter: '1m', budgets: '[{nodes: "0"}]' }),
      deployment('web', 10, '1', '2Gi'),
      scenario('1h', `[{at: 20m, scale: {kind: Deployment, namespace: default, name: web, replicas: 1}}]`),
    );
    expectNoDisruptionViolations(result);
    expect(result.disruptions).toEqual([]);
    expect(result.events.some((e) => e.reason === 'DisruptionBlocked' && e.object === 'NodePool/general' && /No allowed disruptions for disruption reason (Empty|Underutilized) due to blocking budget/.test(e.message))).toBe(true);
  });

  it('acts on a multi-node consolidation it proposed instead of re-proposing it forever (regression)', async () => {
    // Three nodes consolidate together where their first two cannot: re-validation must simulate exactly the command's
    // candidates, not search again (the search over a shorter list dropped the command every pass).
    const { result } = await simulateScenario('test/scenarios/disruption-regressions/multi-node-revalidation-livelock.yaml', { seed: 3 });
    expectNoDisruptionViolations(result);
    // Something consolidates (once a c6a.large + c6a.xlarge → c6a.xlarge replacement, which filterOutSameType now
    // refuses in favour of deleting the c6a.large alone), and no proposal is dropped pass after pass.
    expect(result.disruptions.filter((d) => d.reason === 'Underutilized').length).toBeGreaterThanOrEqual(1);
    expect(result.events.filter((e) => e.reason === 'ConsolidationRejected').length).toBeLessThanOrEqual(2);
  });

  it('does not consolidate a zone-spread pod onto a node the provisioner would then refuse it (regression: churn every 3 minutes)', async () => {
    const { result } = await simulateScenario('test/scenarios/disruption-regressions/zone-spread-consolidation-churn.yaml', { seed: 3 });
    expectNoDisruptionViolations(result);
    // After the scale-in (1h30m) nodes only go: nothing is launched again for pods consolidation moved.
    expect(result.nodeClaims.filter((c) => c.createdAt > '2026-03-02T07:35:00.000Z').map((c) => c.name)).toEqual([]);
    expect(result.disruptions.filter((d) => d.reason === 'Underutilized').length).toBeLessThanOrEqual(2);
    expect(result.pods.filter((p) => p.deletedAt === null && p.node !== null && p.owner?.startsWith('ReplicaSet/api'))).toHaveLength(4);
  });

  it('WhenEmpty consolidates only empty nodes', async () => {
    // One replica per node (hostname anti-affinity), so scaling down empties nodes however the solver packs.
    const onePerNode = `\n      affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: web}}}]}}`;
    const result = await run(
      NODE_CLASS(),
      POOL({ policy: 'WhenEmpty', consolidateAfter: '1m', budgets: '[{nodes: "100%"}]' }),
      deployment('web', 20, '1', '2Gi', onePerNode),
      scenario('2h', `[{at: 30m, scale: {kind: Deployment, namespace: default, name: web, replicas: 2}}]`),
    );
    expectNoDisruptionViolations(result);
    expect(result.disruptions.length).toBeGreaterThan(0);
    expect(result.disruptions.every((d) => d.reason === 'Empty' && d.decision === 'delete')).toBe(true);
    expect(result.pods.filter((p) => p.owner?.startsWith('ReplicaSet/web')).every((p) => p.evictions === 0)).toBe(true);
  });
});

/** Parses a one-document YAML string into an object (for `apply` events written inline as JSON flow maps). */
function parseYamlObject(text: string): unknown {
  return parseYaml(text);
}
