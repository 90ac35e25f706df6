// Disruption timing as Karpenter v1.14 has it (issue 26), end to end through the real provisioner, lifecycle and
// disruption handlers (simulateScenario), asserted on the Result: disruption times against the pods' bind and
// completion times, the replacement's capacity type, do-not-disrupt pods' deletion time against the deadline.
import { describe, expect, it } from 'vitest';
import type { SimulationResult } from '../../shared/sim/result.js';
import { nodeClassYaml } from '../support/provisioner-harness.js';
import { simulateDocs } from '../support/simulate-docs.js';

interface PoolOptions {
  readonly capacity?: string;
  readonly types?: string;
  readonly consolidateAfter?: string;
  readonly policy?: string;
  readonly budgets?: string;
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
      expireAfter: 720h${o.terminationGracePeriod ? `\n      terminationGracePeriod: ${o.terminationGracePeriod}` : ''}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [${o.capacity ?? 'on-demand'}]}
        ${o.types ? `- {key: node.kubernetes.io/instance-type, operator: In, values: [${o.types}]}` : '- {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r]}'}
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
  disruption:
    consolidationPolicy: ${o.policy ?? 'WhenEmptyOrUnderutilized'}
    consolidateAfter: ${o.consolidateAfter ?? '5m'}
    budgets: ${o.budgets ?? '[{nodes: "100%"}]'}
`;

const scenario = (duration: string, events = '[]', extra = '') => `
apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: disruption-timing}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: ${duration}
  events: ${events}${extra}
`;

const run = (...docs: string[]): Promise<SimulationResult> => simulateDocs(3, ...docs);

const START = Date.parse('2026-03-02T08:00:00Z');
const minutesAfterStart = (iso: string) => (Date.parse(iso) - START) / 60_000;

function expectNoDisruptionViolations(result: SimulationResult): void {
  expect(result.violations).toMatchObject({ budget: 0, pdb: 0, doNotDisrupt: 0, duplicateLaunches: 0, leakedInstances: 0, placement: 0 });
}

describe('on-demand back to spot on the same instance type (core computeConsolidation: no same-type exclusion for one node)', () => {
  it('a one-type pool that fell back to on-demand during a 30-minute spot shortage is replaced by spot of that type once it ends', async () => {
    const zones = ['a', 'b', 'c', 'd'];
    const ice = zones.map((z) => `{at: 0s, insufficientCapacity: {instanceType: m5.xlarge, zone: us-west-2${z}, capacityType: spot, for: 30m}}`).join(', ');
    const result = await run(
      nodeClassYaml(),
      POOL({ capacity: 'spot, on-demand', types: 'm5.xlarge' }),
      `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: nginx, resources: {requests: {cpu: "1", memory: 2Gi}}}]
`,
      scenario('2h', `[${ice}]`),
    );
    expectNoDisruptionViolations(result);
    const first = result.nodeClaims.find((c) => c.launchError === null && c.instanceType !== null)!;
    expect(first).toMatchObject({ instanceType: 'm5.xlarge', capacityType: 'on-demand' });
    // Nothing comes back to spot while the shortage lasts…
    const spot = result.nodeClaims.filter((c) => c.capacityType === 'spot' && c.launchError === null && c.launchedAt !== null);
    expect(spot.every((c) => minutesAfterStart(c.launchedAt!) >= 30)).toBe(true);
    // …and within 15 minutes after it ends, the on-demand node is replaced by spot of the same type.
    const back = result.disruptions.find((d) => d.nodeClaim === first.name);
    expect(back).toMatchObject({ reason: 'Underutilized', decision: 'replace' });
    expect(minutesAfterStart(back!.at)).toBeGreaterThanOrEqual(30);
    expect(minutesAfterStart(back!.at)).toBeLessThan(45);
    const replacement = result.nodeClaims.find((c) => c.name === back!.replacement)!;
    expect(replacement).toMatchObject({ instanceType: 'm5.xlarge', capacityType: 'spot', launchError: null });
    expect(first.deletedAt).not.toBeNull();
    // The pods run on the spot node at the end, and the fleet stays there (no churn back and forth).
    const live = result.pods.filter((p) => p.owner?.startsWith('ReplicaSet/web') && p.deletedAt === null);
    expect(live).toHaveLength(2);
    expect(live.every((p) => p.nodeClaim === replacement.name)).toBe(true);
    expect(result.disruptions.filter((d) => minutesAfterStart(d.at) > minutesAfterStart(back!.at))).toEqual([]);
  }, 120_000);
});

const deploymentYaml = (name: string, replicas: number, cpu: string, memory: string, podExtra = '', annotations = '') => `
apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}${annotations ? `, annotations: {${annotations}}` : ''}}
    spec:${podExtra}
      containers: [{name: app, image: nginx, resources: {requests: {cpu: "${cpu}", memory: ${memory}}}}]
`;

/** A scenario `apply` event creating a Job of `completions` pods, one at a time, each running `runFor`. */
const jobEvent = (at: string, name: string, runFor: string, completions = 1) =>
  `{at: ${at}, apply: {apiVersion: batch/v1, kind: Job, metadata: {name: ${name}}, spec: {parallelism: 1, completions: ${completions}, template: {metadata: {labels: {app: ${name}}, annotations: {skiff.dev/run-for: ${runFor}}}, spec: {restartPolicy: Never, containers: [{name: a, image: busybox, resources: {requests: {cpu: 500m, memory: 512Mi}}}]}}}}}`;

describe('consolidateAfter restarts on every pod event on the node (core nodeclaim/podevents, IsUnderConsolidateAfter)', () => {
  it('a node refilled and emptied between two disruption passes (a 20-second Job) is Empty-disrupted only consolidateAfter after that Job finished', async () => {
    const result = await run(
      nodeClassYaml(),
      POOL({ policy: 'WhenEmpty', consolidateAfter: '10m' }),
      deploymentYaml('web', 1, '1', '2Gi'),
      // The node empties at 20 m; a Job's pod binds to it at 25 m and finishes 20 s later, between two passes.
      scenario('1h', `[{at: 20m, scale: {kind: Deployment, namespace: default, name: web, replicas: 0}}, ${jobEvent('25m', 'burst', '20s')}]`),
    );
    expectNoDisruptionViolations(result);
    const job = result.pods.find((p) => p.owner === 'Job/burst')!;
    const web = result.pods.find((p) => p.owner?.startsWith('ReplicaSet/web'))!;
    expect(job.nodeClaim).toBe(web.nodeClaim);
    expect(minutesAfterStart(job.scheduledAt!)).toBe(25);
    const finished = Date.parse(job.deletedAt!);
    expect((finished - START) / 1000).toBe(25 * 60 + 20);
    const empty = result.disruptions.find((d) => d.nodeClaim === web.nodeClaim)!;
    expect(empty).toMatchObject({ reason: 'Empty', decision: 'delete' });
    // consolidateAfter counts from the Job pod's completion, not from the node's first emptiness at 20 m…
    expect(Date.parse(empty.at) - finished).toBeGreaterThanOrEqual(10 * 60_000);
    // …and no later than a pass, the 15 s validation and the next pass after that.
    expect(Date.parse(empty.at) - finished).toBeLessThanOrEqual(12 * 60_000);
  }, 120_000);

  it('short Jobs keep a node busy: every bind and completion restarts consolidateAfter, so the node goes only after the last one', async () => {
    const result = await run(
      nodeClassYaml(),
      POOL({ policy: 'WhenEmpty', consolidateAfter: '5m' }),
      deploymentYaml('web', 1, '1', '2Gi'),
      // From 10 m a Job runs 40-second pods one after another every few minutes (a new Job each time), until 40 m.
      scenario(
        '1h30m',
        `[{at: 10m, scale: {kind: Deployment, namespace: default, name: web, replicas: 0}}, ${[14, 18, 22, 26, 30, 34, 38].map((m) => jobEvent(`${m}m`, `tick-${m}`, '40s')).join(', ')}]`,
      ),
    );
    expectNoDisruptionViolations(result);
    const web = result.pods.find((p) => p.owner?.startsWith('ReplicaSet/web'))!;
    const jobs = result.pods.filter((p) => p.owner?.startsWith('Job/tick-'));
    expect(jobs).toHaveLength(7);
    expect(jobs.every((p) => p.nodeClaim === web.nodeClaim)).toBe(true);
    const last = Math.max(...jobs.map((p) => Date.parse(p.deletedAt!)));
    const empty = result.disruptions.find((d) => d.nodeClaim === web.nodeClaim)!;
    expect(empty).toMatchObject({ reason: 'Empty' });
    expect(Date.parse(empty.at) - last).toBeGreaterThanOrEqual(5 * 60_000);
    // The node stayed through the whole series: every pod of it ran on the same node.
    expect(result.nodeClaims.filter((c) => c.launchedAt !== null && c.launchError === null)).toHaveLength(1);
  }, 120_000);
});

describe('no pods moved onto a node still inside its own consolidateAfter window (core scheduler.go addToExistingNode, PR #3006)', () => {
  it("a candidate's pods wait for the destination's consolidateAfter: the candidate goes only once the node that just got a pod has been quiet that long", async () => {
    const nodes = `
  nodes:
    - {name: n1, instanceType: m5.2xlarge, zone: us-west-2a, capacityType: on-demand, nodePool: general, createdAt: "-1h"}
    - {name: n2, instanceType: m5.2xlarge, zone: us-west-2a, capacityType: on-demand, nodePool: general, createdAt: "-1h"}`;
    const pod = (name: string, node: string) =>
      `{apiVersion: v1, kind: Pod, metadata: {name: ${name}, namespace: default}, spec: {nodeName: ${node}, containers: [{name: app, image: nginx, resources: {requests: {cpu: 500m, memory: 1Gi}}}]}}`;
    const result = await run(
      nodeClassYaml(),
      // One type only: n1 can go only by moving its pod to n2, never by a cheaper replacement.
      POOL({ types: 'm5.2xlarge', consolidateAfter: '10m' }),
      `
apiVersion: v1
kind: Pod
metadata: {name: old, namespace: default}
spec:
  nodeName: n1
  containers: [{name: app, image: nginx, resources: {requests: {cpu: 500m, memory: 1Gi}}}]
`,
      // n2 is never a candidate itself (do-not-disrupt on the node); it gets its first pod at 8 m.
      scenario('1h', `[{at: 0s, annotate: {kind: Node, name: n2, annotations: {karpenter.sh/do-not-disrupt: "true"}}}, {at: 8m, apply: ${pod('fresh', 'n2')}}]`, nodes),
    );
    expectNoDisruptionViolations(result);
    const n1Claim = result.nodes.find((n) => n.name === 'n1')!.nodeClaim!;
    const fresh = result.pods.find((p) => p.name === 'fresh')!;
    expect(fresh.node).toBe('n2');
    const boundAt = Date.parse(fresh.scheduledAt!);
    expect((boundAt - START) / 60_000).toBe(8);
    const moved = result.disruptions.find((d) => d.nodeClaim === n1Claim)!;
    expect(moved).toMatchObject({ reason: 'Underutilized', decision: 'delete' });
    // n1 became a candidate at 10 m (its own consolidateAfter), but n2 took no pod of it before 18 m…
    expect(Date.parse(moved.at) - boundAt).toBeGreaterThanOrEqual(10 * 60_000);
    // …and soon after, it did (a pass, the 15 s validation, the next pass).
    expect(Date.parse(moved.at) - boundAt).toBeLessThanOrEqual(12 * 60_000);
    const again = result.pods.filter((p) => p.name === 'old' && p.deletedAt === null);
    expect(again.map((p) => p.node)).toEqual(['n2']);
  }, 120_000);
});

describe('do-not-disrupt pods and terminationGracePeriod (core disruption/types.go NewCandidate, terminator needsForceDelete)', () => {
  it('drift takes a node whose pods are do-not-disrupt or PDB-blocked when the NodePool sets terminationGracePeriod; those pods are deleted at the deadline minus their own grace period', async () => {
    const classObject = JSON.stringify({
      apiVersion: 'karpenter.k8s.aws/v1',
      kind: 'EC2NodeClass',
      metadata: { name: 'default' },
      spec: {
        amiSelectorTerms: [{ alias: 'al2023@latest' }],
        subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'my-cluster' } }],
        securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'my-cluster' } }],
        role: 'KarpenterNodeRole-my-cluster',
        tags: { team: 'platform' },
      },
    });
    const pdb = `
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: solo, namespace: default}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: solo}}
`;
    const result = await run(
      nodeClassYaml(),
      POOL({ consolidateAfter: 'Never', terminationGracePeriod: '10m' }),
      // Both pods pinned together on one node (pod affinity), so one node carries both blockers.
      deploymentYaml('guarded', 1, '500m', '1Gi', '\n      terminationGracePeriodSeconds: 120', 'karpenter.sh/do-not-disrupt: "true"'),
      deploymentYaml('solo', 1, '500m', '1Gi', '\n      terminationGracePeriodSeconds: 90\n      affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: guarded}}}]}}'),
      pdb,
      scenario('1h', `[{at: 20m, apply: ${classObject}}]`),
    );
    expectNoDisruptionViolations(result);
    const guarded = result.pods.filter((p) => p.owner?.startsWith('ReplicaSet/guarded'));
    const solo = result.pods.filter((p) => p.owner?.startsWith('ReplicaSet/solo'));
    const node = guarded[0]!.nodeClaim!;
    expect(solo[0]!.nodeClaim).toBe(node);
    const drift = result.disruptions.find((d) => d.nodeClaim === node)!;
    expect(drift).toMatchObject({ reason: 'Drifted', decision: 'replace' });
    expect(minutesAfterStart(drift.at)).toBeGreaterThanOrEqual(20);
    const deadline = Date.parse(drift.drainStartedAt!) + 10 * 60_000;
    // Neither pod is evicted; each is deleted from the deadline minus its own terminationGracePeriodSeconds on
    // (within a disruption pass); the node goes once they are gone, by the deadline.
    for (const [pod, grace] of [[guarded[0]!, 120], [solo[0]!, 90]] as const) {
      expect(pod.evictions).toBe(0);
      const deleted = Date.parse(pod.deletedAt!);
      expect(deleted).toBeGreaterThanOrEqual(deadline - grace * 1000);
      expect(deleted).toBeLessThan(deadline);
      expect(deleted - (deadline - grace * 1000)).toBeLessThan(60_000);
    }
    expect(Date.parse(drift.completedAt!)).toBeGreaterThan(Math.max(...[guarded[0]!, solo[0]!].map((p) => Date.parse(p.deletedAt!))));
    expect(Date.parse(drift.completedAt!)).toBeLessThanOrEqual(deadline);
    const deletedEvents = result.events.filter((e) => e.reason === 'Disrupted' && e.object.startsWith('Pod/default/'));
    expect(deletedEvents.map((e) => e.object).sort()).toEqual([`Pod/default/${guarded[0]!.name}`, `Pod/default/${solo[0]!.name}`]);
    // Their replacements run on the replacement node.
    for (const set of [guarded, solo]) expect(set.filter((p) => p.deletedAt === null).map((p) => p.nodeClaim)).toEqual([drift.replacement]);
  }, 120_000);

  it('without terminationGracePeriod, drift still never takes a node with a do-not-disrupt pod', async () => {
    const classObject = JSON.stringify({
      apiVersion: 'karpenter.k8s.aws/v1',
      kind: 'EC2NodeClass',
      metadata: { name: 'default' },
      spec: {
        amiSelectorTerms: [{ alias: 'al2023@latest' }],
        subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'my-cluster' } }],
        securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'my-cluster' } }],
        role: 'KarpenterNodeRole-my-cluster',
        tags: { team: 'platform' },
      },
    });
    const result = await run(
      nodeClassYaml(),
      POOL({ consolidateAfter: 'Never' }),
      deploymentYaml('guarded', 1, '500m', '1Gi', '', 'karpenter.sh/do-not-disrupt: "true"'),
      scenario('1h', `[{at: 20m, apply: ${classObject}}]`),
    );
    expectNoDisruptionViolations(result);
    expect(result.disruptions).toEqual([]);
    expect(result.pods.every((p) => p.deletedAt === null && p.evictions === 0)).toBe(true);
  }, 120_000);
});
