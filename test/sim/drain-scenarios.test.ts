import { describe, expect, it } from 'vitest';
import type { SimulationResult } from '../../shared/sim/result.js';
import { deploymentYaml as deployment, nodeClassYaml } from '../support/provisioner-harness.js';
import { simulateDocs } from '../support/simulate-docs.js';

// Drains as Karpenter's termination controller runs them (core `pkg/controllers/node/termination/controller.go`,
// `terminator/terminator.go`), through whole simulated runs read back from the Result.

const scenario = (body: string, duration = '2h') => `
apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: drain}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: ${duration}
  region: us-west-2
${body}`;

/** A NodePool of on-demand m5 nodes; `labels` are its template labels (changing them drifts its nodes). */
const pool = (labels: string, extra = '') => `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    metadata: {labels: {${labels}}}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.xlarge, m5.2xlarge]}
${extra}
  disruption: {consolidateAfter: Never}
`;

/** A Deployment whose pods tolerate every taint (`operator: Exists`, no key), as node agents often do. */
const tolerateAll = (name: string, replicas: number) => `
apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      tolerations: [{operator: Exists}]
      containers: [{name: agent, image: agent, resources: {requests: {cpu: 100m, memory: 128Mi}}}]
`;

/** The timeline event that drifts the `general` NodePool at 20m (its template label team: a → b); `extra` spec lines. */
const driftAt20m = (extra = '') => `  events:
    - at: 20m
      apply:
        apiVersion: karpenter.sh/v1
        kind: NodePool
        metadata: {name: general}
        spec:
          template:
            metadata: {labels: {team: b}}
            spec:
              nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
${extra}              requirements:
                - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
                - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.xlarge, m5.2xlarge]}
          disruption: {consolidateAfter: Never}`;

const run = (...docs: string[]): Promise<SimulationResult> => simulateDocs(7, ...docs);

const ownedBy = (r: SimulationResult, deploymentName: string) => r.pods.filter((p) => p.owner?.startsWith(`ReplicaSet/${deploymentName}-`));

describe('drain: pods that tolerate the karpenter.sh/disrupted taint', () => {
  it('evicts none of the pods that tolerate every taint, and the drift of their node completes', async () => {
    const r = await run(
      nodeClassYaml(),
      pool('team: a'),
      deployment('web', 4),
      tolerateAll('agent', 3),
      scenario(driftAt20m()),
    );
    const drifted = r.disruptions.filter((d) => d.reason === 'Drifted');
    expect(drifted.length).toBeGreaterThan(0);
    // Every drifted node was drained and terminated: the drift completed.
    expect(drifted.every((d) => d.completedAt !== null)).toBe(true);
    const original = r.nodeClaims.filter((c) => Date.parse(c.createdAt) < Date.parse('2026-03-02T08:20:00Z'));
    expect(original.every((c) => c.deletionReason === 'Drifted')).toBe(true);
    // The tolerate-all pods were never evicted: they went with their node and their controller placed them again.
    const agents = ownedBy(r, 'agent');
    expect(agents.reduce((n, p) => n + p.evictions, 0)).toBe(0);
    expect(agents.filter((p) => p.deletedAt === null)).toHaveLength(3);
    expect(agents.filter((p) => p.deletedAt === null).every((p) => p.node !== null)).toBe(true);
    // The ordinary pods were evicted once each, as the drain should.
    expect(ownedBy(r, 'web').reduce((n, p) => n + p.evictions, 0)).toBeGreaterThan(0);
    expect(r.violations.evictionLoops).toBe(0);
    expect(r.violations.pdb).toBe(0);
  }, 120_000);

  it('waits for a do-not-disrupt pod that tolerates every taint until the terminationGracePeriod deadline minus its grace', async () => {
    // Drift with terminationGracePeriod 10m takes the node although a pod is do-not-disrupt (core NewCandidate).
    // Karpenter's drain leaves a pod that tolerates the disrupted taint to die with its node; Skiff waits for it while
    // it is annotated do-not-disrupt, and deletes it at the deadline minus its 30 s grace (a soak seed found the
    // node terminated minutes early with the pod on it).
    const r = await run(
      nodeClassYaml(),
      pool('team: a', '      terminationGracePeriod: 10m'),
      tolerateAll('agent', 2).replace('metadata: {labels: {app: agent}}', 'metadata: {labels: {app: agent}, annotations: {karpenter.sh/do-not-disrupt: "true"}}'),
      scenario(driftAt20m('              terminationGracePeriod: 10m\n')),
    );
    const drifted = r.disruptions.filter((d) => d.reason === 'Drifted');
    expect(drifted.length).toBeGreaterThan(0);
    for (const d of drifted) {
      const deadline = Date.parse(d.drainStartedAt!) + 10 * 60_000;
      expect(Date.parse(d.completedAt!)).toBeGreaterThanOrEqual(deadline - 30_000);
      const agents = r.pods.filter((p) => p.nodeClaim === d.nodeClaim && p.owner?.startsWith('ReplicaSet/agent-'));
      for (const p of agents) {
        expect(p.evictions).toBe(0);
        expect(Date.parse(p.deletedAt!)).toBeGreaterThanOrEqual(deadline - 30_000);
      }
    }
    expect(r.violations.doNotDisrupt).toBe(0);
    expect(r.violations.evictionLoops).toBe(0);
  }, 120_000);

  it('waits for pods that tolerate every taint while their PDB cannot spare them, until the terminationGracePeriod deadline minus their grace', async () => {
    // Two tolerate-all pods under a PDB that allows no disruption (minAvailable 2 of 2). Karpenter's drain leaves
    // them to die with the node at once, breaking the PDB; Skiff waits for them and deletes them only at the deadline
    // minus their 30 s grace (a break-it trial counted pdb violations on a plain drift).
    const r = await run(
      nodeClassYaml(),
      pool('team: a', '      terminationGracePeriod: 10m'),
      tolerateAll('agent', 2),
      pdb('agent', 2),
      scenario(driftAt20m('              terminationGracePeriod: 10m\n')),
    );
    const drifted = r.disruptions.filter((d) => d.reason === 'Drifted');
    expect(drifted.length).toBeGreaterThan(0);
    for (const d of drifted) {
      const deadline = Date.parse(d.drainStartedAt!) + 10 * 60_000;
      expect(Date.parse(d.completedAt!)).toBeGreaterThanOrEqual(deadline - 30_000);
      const agents = r.pods.filter((p) => p.nodeClaim === d.nodeClaim && p.owner?.startsWith('ReplicaSet/agent-'));
      for (const p of agents) {
        expect(p.evictions).toBe(0);
        expect(Date.parse(p.deletedAt!)).toBeGreaterThanOrEqual(deadline - 30_000);
      }
    }
    expect(r.violations.pdb).toBe(0);
    expect(r.violations.evictionLoops).toBe(0);
  }, 120_000);
});

/** A PodDisruptionBudget for the `app: <name>` pods. */
const pdb = (name: string, minAvailable: number) => `
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: ${name}}
spec:
  minAvailable: ${minAvailable}
  selector: {matchLabels: {app: ${name}}}
`;

/** A node that exists at the start, of the `general` NodePool, that the timeline deletes at 10m. */
const deleteNodeAt10m = `  nodes:
    - {name: n1, instanceType: m5.2xlarge, zone: us-west-2a, capacityType: on-demand, nodePool: general}
  events:
    - at: 10m
      delete: {kind: Node, name: n1}`;

describe('drain: a Node a user deletes (kubectl delete node)', () => {
  it('is drained through the Eviction API without ever going below the PDB, and its instance terminated only after the drain', async () => {
    const r = await run(nodeClassYaml(), pool('team: a'), deployment('web', 4), pdb('web', 3), scenario(deleteNodeAt10m, '1h'));
    const node = r.nodes.find((n) => n.name === 'n1')!;
    const claim = r.nodeClaims.find((c) => c.name === node.nodeClaim)!;
    expect(claim).toMatchObject({ deletionReason: 'NodeDeleted' });
    const onNode = ownedBy(r, 'web').filter((p) => p.node === 'n1');
    expect(onNode).toHaveLength(4);
    // Each was evicted once, one at a time: the PDB (minAvailable 3 of 4) lets the next go only once the previous
    // one's replacement runs elsewhere.
    expect(onNode.every((p) => p.evictions === 1)).toBe(true);
    const evictedAt = onNode.map((p) => Date.parse(p.deletedAt!)).sort((a, b) => a - b);
    expect(new Set(evictedAt).size).toBe(4);
    expect(evictedAt[0]).toBeGreaterThanOrEqual(Date.parse('2026-03-02T08:10:00Z'));
    expect(r.violations.pdb).toBe(0);
    // The instance went (and the Node with it) only after the last eviction, not at the deletion.
    expect(Date.parse(claim.deletedAt!)).toBeGreaterThanOrEqual(evictedAt[3]!);
    expect(node.deletedAt).toBe(claim.deletedAt);
    expect(r.disruptions).toContainEqual(
      expect.objectContaining({ nodeClaim: claim.name, reason: 'NodeDeleted', decision: 'delete', drainStartedAt: '2026-03-02T08:10:00.000Z', completedAt: claim.deletedAt }),
    );
    // Every web pod runs again, on the capacity provisioned for the evicted ones.
    const live = ownedBy(r, 'web').filter((p) => p.deletedAt === null);
    expect(live).toHaveLength(4);
    expect(live.every((p) => p.node !== null && p.node !== 'n1')).toBe(true);
    expect(r.violations.evictionLoops).toBe(0);
  }, 120_000);

  it("waits on a PDB that allows no eviction until the NodePool's terminationGracePeriod, then terminates the instance", async () => {
    const r = await run(nodeClassYaml(), pool('team: a', '      terminationGracePeriod: 5m'), deployment('web', 4), pdb('web', 4), scenario(deleteNodeAt10m, '1h'));
    const node = r.nodes.find((n) => n.name === 'n1')!;
    const claim = r.nodeClaims.find((c) => c.name === node.nodeClaim)!;
    expect(claim.deletionReason).toBe('NodeDeleted');
    const deleted = Date.parse(claim.deletedAt!);
    const onNode = ownedBy(r, 'web').filter((p) => p.node === 'n1');
    expect(onNode.every((p) => p.evictions === 0)).toBe(true);
    // The pods the PDB kept were deleted (Karpenter's `Disrupted`) once the grace period left (from the deletion at 10m,
    // deadline 15:00) was no longer than their own 30 s — not before 14:30 — then the drained instance terminated, by
    // the deadline plus one follow-up pass at the latest.
    for (const p of onNode) expect(r.events).toContainEqual(expect.objectContaining({ reason: 'Disrupted', object: `Pod/default/${p.name}` }));
    expect(onNode.every((p) => p.deletedAt !== null && Date.parse(p.deletedAt) >= Date.parse('2026-03-02T08:14:30Z') && Date.parse(p.deletedAt) <= deleted)).toBe(true);
    expect(deleted).toBeLessThanOrEqual(Date.parse('2026-03-02T08:15:20Z'));
    expect(r.violations.pdb).toBe(0);
  }, 120_000);

  it('deletes the pods a PDB keeps once the grace period left is no longer than their own terminationGracePeriodSeconds, then terminates the drained node', async () => {
    const slow = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 120
      containers: [{name: app, image: nginx, resources: {requests: {cpu: 500m, memory: 1Gi}}}]
`;
    const r = await run(nodeClassYaml(), pool('team: a', '      terminationGracePeriod: 5m'), slow, pdb('web', 4), scenario(deleteNodeAt10m, '1h'));
    const node = r.nodes.find((n) => n.name === 'n1')!;
    const claim = r.nodeClaims.find((c) => c.name === node.nodeClaim)!;
    const onNode = ownedBy(r, 'web').filter((p) => p.node === 'n1');
    // The deadline is 15:00; each pod needs 120 s: the pass at 13:00 (a follow-up slot: the drain is work in flight)
    // deletes them with their whole 120 s left, as Karpenter's terminator does at deadline − terminationGracePeriodSeconds.
    expect(onNode.map((p) => p.deletedAt)).toEqual(onNode.map(() => '2026-03-02T08:13:00.000Z'));
    expect(r.events).toContainEqual(expect.objectContaining({ reason: 'Disrupted', message: expect.stringContaining('granted 120 seconds of grace-period of its 120') }));
    // Drained: the node goes at the next pass, well before the deadline.
    expect(claim.deletionReason).toBe('NodeDeleted');
    expect(Date.parse(claim.deletedAt!)).toBeGreaterThan(Date.parse('2026-03-02T08:13:00Z'));
    expect(Date.parse(claim.deletedAt!)).toBeLessThanOrEqual(Date.parse('2026-03-02T08:14:00Z'));
    expect(r.violations.pdb).toBe(0);
  }, 120_000);
});

describe('drain: a Node a user deletes, with a do-not-disrupt pod', () => {
  it("evicts the other pods, leaves the do-not-disrupt pod alone and waits for it until the terminationGracePeriod", async () => {
    const guarded = `
apiVersion: v1
kind: Pod
metadata: {name: batch, namespace: default, annotations: {karpenter.sh/do-not-disrupt: "true"}}
spec:
  nodeName: n1
  containers: [{name: app, image: batch, resources: {requests: {cpu: 500m, memory: 512Mi}}}]
`;
    const r = await run(nodeClassYaml(), pool('team: a', '      terminationGracePeriod: 5m'), deployment('web', 2), guarded, scenario(deleteNodeAt10m, '1h'));
    const node = r.nodes.find((n) => n.name === 'n1')!;
    const claim = r.nodeClaims.find((c) => c.name === node.nodeClaim)!;
    const batch = r.pods.find((p) => p.name === 'batch' && p.node === 'n1')!;
    expect(batch.evictions).toBe(0);
    expect(ownedBy(r, 'web').filter((p) => p.node === 'n1').every((p) => p.evictions === 1 && Date.parse(p.deletedAt!) < Date.parse('2026-03-02T08:12:00Z'))).toBe(true);
    // The drain waited for the do-not-disrupt pod until the grace period left (deadline 15:00, from the deletion at 10m)
    // was its own 30 s: deleted at 14:30 at the earliest, and the node after it, by the deadline plus one follow-up pass.
    expect(claim.deletionReason).toBe('NodeDeleted');
    expect(Date.parse(batch.deletedAt!)).toBeGreaterThanOrEqual(Date.parse('2026-03-02T08:14:30Z'));
    expect(Date.parse(claim.deletedAt!)).toBeGreaterThan(Date.parse(batch.deletedAt!));
    expect(Date.parse(claim.deletedAt!)).toBeLessThanOrEqual(Date.parse('2026-03-02T08:15:20Z'));
    expect(r.violations.doNotDisrupt).toBe(0);
  }, 120_000);
});

describe('drain: a NodeClaim a user deletes (kubectl delete nodeclaim)', () => {
  it('is terminated gracefully like a deleted Node: drained within the PDB, then its instance terminated (NodeClaimDeleted)', async () => {
    const nodes = `  nodes:
    - {name: n1, instanceType: m5.2xlarge, zone: us-west-2a, capacityType: on-demand, nodePool: general}`;
    // The NodeClaim's name is generated (deterministically for a seed): read it from a short run first.
    const before = await run(nodeClassYaml(), pool('team: a'), deployment('web', 4), pdb('web', 3), scenario(nodes, '5m'));
    const name = before.nodes.find((n) => n.name === 'n1')!.nodeClaim!;
    const r = await run(
      nodeClassYaml(),
      pool('team: a'),
      deployment('web', 4),
      pdb('web', 3),
      scenario(`${nodes}
  events:
    - at: 10m
      delete: {kind: NodeClaim, name: ${name}}`, '1h'),
    );
    const claim = r.nodeClaims.find((c) => c.name === name)!;
    expect(claim.deletionReason).toBe('NodeClaimDeleted');
    const onNode = ownedBy(r, 'web').filter((p) => p.node === 'n1');
    expect(onNode.every((p) => p.evictions === 1)).toBe(true);
    const evictedAt = onNode.map((p) => Date.parse(p.deletedAt!)).sort((a, b) => a - b);
    expect(new Set(evictedAt).size).toBe(4);
    expect(evictedAt[0]).toBeGreaterThanOrEqual(Date.parse('2026-03-02T08:10:00Z'));
    expect(Date.parse(claim.deletedAt!)).toBeGreaterThanOrEqual(evictedAt[3]!);
    expect(r.nodes.find((n) => n.name === 'n1')!.deletedAt).toBe(claim.deletedAt);
    expect(r.disruptions).toContainEqual(expect.objectContaining({ nodeClaim: name, reason: 'NodeClaimDeleted', completedAt: claim.deletedAt }));
    expect(r.violations.pdb).toBe(0);
    expect(ownedBy(r, 'web').filter((p) => p.deletedAt === null && p.node !== null)).toHaveLength(4);
  }, 120_000);

  it('says so when no NodeClaim has the name', async () => {
    const r = await run(nodeClassYaml(), pool('team: a'), scenario(`  events:
    - at: 1m
      delete: {kind: NodeClaim, name: general-none}`, '5m'));
    expect(r.events).toContainEqual(expect.objectContaining({ reason: 'ScenarioEventSkipped', object: 'Scenario/delete' }));
  }, 60_000);

  it('says so for every kind whose name matches nothing, as kubectl answers NotFound (trial: a mistyped delete looked done)', async () => {
    const r = await run(nodeClassYaml(), pool('team: a'), scenario(`  events:
    - {at: 1m, delete: {kind: NodePool, name: ghost}}
    - {at: 1m, delete: {kind: Deployment, name: ghost}}
    - {at: 1m, delete: {kind: Pod, namespace: kube-system, name: ghost}}
    - {at: 2m, delete: {kind: NodePool, name: general}}
    - {at: 3m, delete: {kind: NodePool, name: general}}`, '5m'));
    const skipped = r.events.filter((e) => e.reason === 'ScenarioEventSkipped').map((e) => e.message);
    expect(skipped).toEqual([
      'spec.events[0] (delete) matched no NodePool named ghost; skipped',
      'spec.events[1] (delete) matched no Deployment named default/ghost; skipped',
      'spec.events[2] (delete) matched no Pod named kube-system/ghost; skipped',
      // The NodePool the first of the last two deleted is gone for the second.
      'spec.events[4] (delete) matched no NodePool named general; skipped',
    ]);
  }, 60_000);
});

describe('deleting a NodePool (its NodeClaims are deleted with it)', () => {
  it('terminates every NodeClaim of the NodePool gracefully: Kubernetes garbage-collects the NodeClaim objects it owns', async () => {
    const r = await run(
      nodeClassYaml(),
      pool('team: a'),
      deployment('web', 6),
      scenario(`  events:
    - {at: 10m, delete: {kind: NodePool, name: general}}`, '1h'),
    );
    const claims = r.nodeClaims.filter((c) => c.instanceType !== null);
    expect(claims.length).toBeGreaterThan(0);
    for (const c of claims) {
      expect(c.deletionReason, c.name).toBe('NodeClaimDeleted');
      expect(Date.parse(c.deletedAt!)).toBeGreaterThanOrEqual(Date.parse('2026-03-02T08:10:00Z'));
    }
    // Drained through the Eviction API first, then terminated: nothing runs or costs at the end.
    expect(ownedBy(r, 'web').reduce((n, p) => n + p.evictions, 0)).toBeGreaterThan(0);
    expect(r.cost.finalHourlyUSD).toBe(0);
    expect(Object.values(r.violations).every((n) => n === 0), JSON.stringify(r.violations)).toBe(true);
  }, 120_000);
});
