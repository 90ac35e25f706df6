import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { simulateScenario } from '../../shared/cli/simulate.js';
import { formatSummary } from '../../shared/cli/summary.js';
import type { SimulationResult } from '../../shared/sim/result.js';
import { deploymentYaml as deployment, GENERAL_POOL } from '../support/provisioner-harness.js';

// These cases check provisioning and the simulated world; consolidation would rearrange their fleets afterwards.
const POOL = `${GENERAL_POOL.trimEnd()}\n  disruption: {consolidateAfter: Never}\n`;

async function run(...docs: string[]): Promise<SimulationResult> {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-engine-'));
  writeFileSync(join(dir, 'scenario.yaml'), docs.map((d) => d.trim()).join('\n---\n'));
  return (await simulateScenario(dir, { seed: 3 })).result;
}

const scenario = (body: string) => `
apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: test}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: 2h
  region: us-west-2
${body}`;

const launched = (r: SimulationResult) => r.nodeClaims.filter((c) => c.instanceType !== null && c.launchError === null);

describe('simulation engine', () => {
  it('places pods on a pre-existing node with room and launches nothing', async () => {
    const r = await run(POOL, deployment('web', 3, '250m', '256Mi'), scenario(`  nodes:\n    - {name: n1, instanceType: m5.xlarge, zone: us-west-2a, capacityType: on-demand, nodePool: general, createdAt: "-2h"}`));
    expect(r.launchAttempts).toEqual([]);
    expect(r.pods.every((p) => p.node === 'n1')).toBe(true);
    expect(r.nodes).toEqual([expect.objectContaining({ name: 'n1', instanceType: 'm5.xlarge', createdAt: '2026-03-02T06:00:00.000Z' })]);
  });

  it('counts a starting node without createdAt as existing at the start, not as launched or wasted (trial)', async () => {
    const expiring = `${GENERAL_POOL.trimEnd()}\n  disruption: {consolidateAfter: Never}\n`.replace('    spec:\n', '    spec:\n      expireAfter: 30m\n');
    expect(expiring).toContain('expireAfter: 30m');
    const r = await run(expiring, scenario(`  nodes:\n    - {name: n2, instanceType: m5.large, zone: us-west-2a, capacityType: spot, nodePool: general}`));
    expect(r.launchAttempts).toEqual([]);
    const [claim] = r.nodeClaims;
    expect(claim).toMatchObject({ createdAt: '2026-03-02T08:00:00.000Z', existedAtStart: true, deletionReason: 'Expired' });
    expect(r.wastedLaunches).toEqual({ nodeClaims: 0, instanceHours: 0, costUSD: 0, byReason: {} });
    expect(formatSummary(r)).toMatch(/^NodeClaims: 0 launched, 1 existed at the start$/m);
  });

  it('starts a pod with spec.nodeName bound to that node', async () => {
    const pod = `
apiVersion: v1
kind: Pod
metadata: {name: pinned}
spec:
  nodeName: n1
  containers: [{name: app, image: nginx, resources: {requests: {cpu: 100m}}}]
`;
    const r = await run(POOL, pod, scenario(`  nodes:\n    - {name: n1, instanceType: m5.large, zone: us-west-2a, capacityType: on-demand}`));
    expect(r.pods.find((p) => p.name === 'pinned')).toMatchObject({ node: 'n1', scheduledAt: '2026-03-02T08:00:00.000Z', firstPendingAt: null });
  });

  it('launches more capacity when a scale event adds replicas, only after the event', async () => {
    const r = await run(POOL, deployment('web', 2), scenario(`  events:\n    - at: 30m\n      scale: {kind: Deployment, namespace: default, name: web, replicas: 40}`));
    const before = launched(r).filter((c) => c.createdAt < '2026-03-02T08:30:00.000Z');
    const after = launched(r).filter((c) => c.createdAt >= '2026-03-02T08:30:00.000Z');
    expect(before.length).toBeGreaterThan(0);
    expect(after.length).toBeGreaterThan(0);
    expect(r.pods).toHaveLength(40);
    expect(r.pods.every((p) => p.scheduledAt !== null)).toBe(true);
    expect(r.unschedulable).toEqual([]);
  });

  it('applies a manifest and deletes a workload at their times', async () => {
    const r = await run(
      POOL,
      scenario(`  events:
    - at: 10m
      apply: {apiVersion: apps/v1, kind: Deployment, metadata: {name: late}, spec: {replicas: 2, selector: {matchLabels: {app: late}}, template: {metadata: {labels: {app: late}}, spec: {containers: [{name: a, image: nginx, resources: {requests: {cpu: 200m}}}]}}}}
    - at: 1h
      delete: {kind: Deployment, namespace: default, name: late}`),
    );
    expect(r.pods).toHaveLength(2);
    for (const p of r.pods) {
      expect(p.createdAt).toBe('2026-03-02T08:10:00.000Z');
      expect(p.deletedAt).toBe('2026-03-02T09:00:00.000Z');
    }
  });

  it('recreates the Deployment pods of a deleted node under new names and provisions for them', async () => {
    const r = await run(
      POOL,
      deployment('web', 3, '250m', '256Mi'),
      scenario(`  nodes:\n    - {name: n1, instanceType: m5.xlarge, zone: us-west-2a, capacityType: on-demand, nodePool: general}\n  events:\n    - at: 30m\n      delete: {kind: Node, name: n1}`),
    );
    // A graceful termination (Skiff's termination finalizer holds the Node): the first disruption pass after the
    // deletion (30:30) evicts the pods; the follow-up it asks for (20 s later, rounded up to its 20 s slot: 31:00)
    // terminates the drained node.
    const gone = r.pods.filter((p) => p.node === 'n1');
    const replacements = r.pods.filter((p) => p.createdAt === '2026-03-02T08:30:30.000Z');
    expect(gone).toHaveLength(3);
    expect(gone.every((p) => p.deletedAt === '2026-03-02T08:30:30.000Z' && p.evictions === 1)).toBe(true);
    expect(replacements).toHaveLength(3);
    expect(replacements.every((p) => p.owner === gone[0]!.owner && p.scheduledAt !== null && p.node !== 'n1')).toBe(true);
    expect(r.nodes.find((n) => n.name === 'n1')!.deletedAt).toBe('2026-03-02T08:31:00.000Z');
  });

  it('says a NodePool cannot launch when its EC2NodeClass was deleted', async () => {
    const r = await run(POOL, deployment('web', 1), scenario('  events:\n    - {at: 0s, delete: {kind: EC2NodeClass, name: default}}'));
    expect(r.launchAttempts).toEqual([]);
    expect(r.unschedulable[0]!.nodePools.general).toBe('its EC2NodeClass default does not exist');
    expect(r.unschedulable[0]!.reason).toMatch(/no NodePool can launch nodes/);
  });

  it('batches pods that turn pending together into one provisioning pass (1 s idle window)', async () => {
    const r = await run(POOL, deployment('web', 6));
    const first = r.launchAttempts[0]!;
    expect(Date.parse(first.at) - Date.parse(r.start)).toBe(1000);
    expect(new Set(r.launchAttempts.map((a) => a.at)).size).toBe(1);
  });

  it('falls back to on-demand when spot has no capacity for the only allowed type', async () => {
    const pinned = deployment('web', 1).replace('containers:', 'nodeSelector: {node.kubernetes.io/instance-type: m5.large}\n      containers:');
    const r = await run(
      POOL,
      pinned,
      scenario(`  events:
${['a', 'b', 'c', 'd'].map((z) => `    - at: 0s\n      insufficientCapacity: {instanceType: m5.large, zone: us-west-2${z}, capacityType: spot, for: 30m}`).join('\n')}`),
    );
    expect(r.launchAttempts.map((a) => [a.capacityTypes[0], a.result])).toEqual([
      ['spot', 'InsufficientInstanceCapacity'],
      ['on-demand', 'ok'],
    ]);
    expect(r.nodeClaims.find((c) => c.launchError)).toMatchObject({ deletionReason: 'LaunchFailed', launchError: 'InsufficientInstanceCapacity' });
    expect(launched(r)[0]).toMatchObject({ instanceType: 'm5.large', capacityType: 'on-demand' });
  });

  it('solves pods left unschedulable by ICE again once the offerings\' 3 minutes are up, not at the relay\'s 6-minute re-list (trial; Karpenter requeues a provisionable pod every 10 s)', async () => {
    const pinned = deployment('web', 1).replace('containers:', 'nodeSelector: {node.kubernetes.io/instance-type: m5.large}\n      containers:');
    const ice = (capacityType: string, minutes: number) => ['a', 'b', 'c', 'd'].map((z) => `    - at: 0s\n      insufficientCapacity: {instanceType: m5.large, zone: us-west-2${z}, capacityType: ${capacityType}, for: ${minutes}m}`).join('\n');
    const r = await run(POOL, pinned, scenario(`  events:\n${ice('spot', 30)}\n${ice('on-demand', 10)}`));
    const attempts = r.launchAttempts.map((a) => [Date.parse(a.at) - Date.parse(r.start), a.capacityTypes[0], a.result] as const);
    // Each ICE marks the offering unavailable for 3 minutes; the follow-up passes (every 20 s while the pod is
    // unschedulable with offerings unavailable) try again as soon as they are available, 3–3.5 minutes apart.
    const starts = [...new Set(attempts.map(([ms]) => ms))];
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeLessThanOrEqual(3.5 * 60_000);
    const ok = attempts.find(([, , result]) => result === 'ok')!;
    expect(ok[1]).toBe('on-demand');
    // The on-demand window ends at 10 min: the launch comes within the 3.5 minutes after (the relay alone took up to 6 more).
    expect(ok[0]).toBeGreaterThanOrEqual(10 * 60_000);
    expect(ok[0]).toBeLessThanOrEqual(13.5 * 60_000);
    expect(r.unschedulable).toEqual([]);
  });

  it('sizes nodes for DaemonSet pods, which run on every new node', async () => {
    const ds = `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: agent, resources: {requests: {cpu: 600m, memory: 512Mi}}}]
`;
    const r = await run(POOL, ds, deployment('web', 3, '1', '1Gi'));
    const nodes = r.nodes.map((n) => n.name);
    const daemonPods = r.pods.filter((p) => p.owner === 'DaemonSet/agent');
    expect(daemonPods.map((p) => p.node).sort()).toEqual([...nodes].sort());
    expect(r.pods.filter((p) => p.owner !== 'DaemonSet/agent').every((p) => p.scheduledAt !== null)).toBe(true);
    expect(r.violations.placement).toBe(0);
  });

  it('applies LimitRange default requests to containers without requests', async () => {
    const lr = `
apiVersion: v1
kind: LimitRange
metadata: {name: defaults}
spec:
  limits: [{type: Container, defaultRequest: {cpu: "3", memory: 6Gi}}]
`;
    const bare = `
apiVersion: v1
kind: Pod
metadata: {name: no-requests}
spec:
  containers: [{name: app, image: nginx}]
`;
    const r = await run(POOL, lr, bare);
    const [claim] = launched(r);
    expect(Number.parseInt(claim!.allocatable.cpu!, 10)).toBeGreaterThanOrEqual(3000);
  });

  it('counts a NodePool limit as binding: no launch beyond it', async () => {
    const limited = POOL.replace('  template:', '  limits: {cpu: "4"}\n  template:');
    const r = await run(limited, deployment('web', 12, '1', '1Gi'));
    const cpus = launched(r).reduce((s, c) => s + Number(c.labels['karpenter.k8s.aws/instance-cpu']), 0);
    expect(cpus).toBeLessThanOrEqual(4);
    expect(r.violations.limits).toBe(0);
    expect(r.unschedulable.length).toBeGreaterThan(0);
    expect(r.unschedulable[0]!.nodePools.general).toMatch(/limits/);
  });
});
