// Crash safety of the disruption controller (issue 21): a small Empty, Underutilized (with a replacement) and Drifted
// disruption, each run once per side effect the disruption handler makes — a taint, a record write, a replacement's
// record and launch, an eviction, an instance termination, a Node deletion, an Event — with the invocation crashing
// right after that one side effect (the fault injector's deterministic `crashAfter`). Whatever the crash interrupted,
// the next passes must finish the disruption or drop it cleanly, within the budget, and never evict a pod from a node
// chosen as empty. Also the seeded fault run (overlapping invocations, crashes at 0.3).
import { describe, expect, it } from 'vitest';
import { simulateScenario } from '../../shared/cli/simulate.js';
import { isLive, type NodeClaim } from '../../shared/core/api/nodeclaim.js';
import type { ClusterNode } from '../../shared/ports/cluster.js';
import type { FaultRecord, SideEffectRecord } from '../../shared/sim/faults.js';
import type { SimulationResult } from '../../shared/sim/result.js';
import { nodeClassYaml } from '../support/provisioner-harness.js';
import { randomScenario } from '../support/random-scenario.js';
import { scenarioFolder } from '../support/simulate-docs.js';

const NO_VIOLATIONS = { budget: 0, pdb: 0, doNotDisrupt: 0, limits: 0, duplicateLaunches: 0, leakedInstances: 0, placement: 0, churn: 0, evictionLoops: 0 };
const DISRUPTED = 'karpenter.sh/disrupted';
const START = Date.parse('2026-03-02T08:00:00Z');

const pool = (sizes: string, policy: string, consolidateAfter: string, budget: string) => `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m]}
        - {key: karpenter.k8s.aws/instance-size, operator: In, values: [${sizes}]}
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
  disruption:
    consolidationPolicy: ${policy}
    consolidateAfter: ${consolidateAfter}
    budgets: [{nodes: "${budget}"}]
`;

const deployment = (name: string, replicas: number, cpu: string, podExtra = '') => `
apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:${podExtra}
      containers: [{name: c, image: x, resources: {requests: {cpu: "${cpu}", memory: 512Mi}}}]
`;

const scenario = (name: string, events: string) => `
apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: ${name}}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: 40m
  region: us-west-2
  events: ${events}
`;

const onePerNode = `\n      affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: web}}}]}}`;

interface CrashCase {
  readonly name: string;
  readonly docs: readonly string[];
  /** The budget (nodes) of the NodePool: never more nodes disrupted at once. */
  readonly budget: number;
  /** When the disruption's trigger happens (ms after the start): crashes are injected from then on. */
  readonly triggerMs: number;
  /** What must hold at the end whatever the crash: the disruption completed (or was dropped and done again). */
  readonly finished: (result: SimulationResult) => void;
}

const CASES: readonly CrashCase[] = [
  {
    // Four one-pod nodes; three go empty at 10m (budget 2: one command of two nodes, then one of one). At 12m small
    // pods arrive: they land on any candidate a crash left untainted, which must then never be evicted.
    name: 'Empty',
    docs: [
      nodeClassYaml(),
      pool('large', 'WhenEmpty', '30s', '2'),
      deployment('web', 4, '1', onePerNode),
      deployment('late', 0, '100m'),
      scenario('empty-crash', `[{at: 10m, scale: {kind: Deployment, namespace: default, name: web, replicas: 1}}, {at: 12m, scale: {kind: Deployment, namespace: default, name: late, replicas: 3}}]`),
    ],
    budget: 2,
    triggerMs: 10 * 60_000,
    finished: (result) => {
      // Nothing evicts: an Empty disruption never evicts, and nothing else disrupts.
      expect(result.pods.filter((p) => p.evictions > 0).map((p) => p.name)).toEqual([]);
      // Whatever started completed (a crash before the start may leave the candidates to take the late pods instead).
      expect(result.disruptions.every((d) => d.reason === 'Empty' && d.completedAt !== null)).toBe(true);
    },
  },
  {
    // A 5-CPU pod and a 1-CPU pod share a 2xlarge; the 5-CPU one goes at 10m: the 2xlarge is replaced by a large.
    name: 'Underutilized (replace)',
    docs: [
      nodeClassYaml(),
      pool('large, 2xlarge', 'WhenEmptyOrUnderutilized', '30s', '1'),
      deployment('big', 1, '5'),
      deployment('small', 1, '1'),
      scenario('underutilized-crash', `[{at: 10m, scale: {kind: Deployment, namespace: default, name: big, replicas: 0}}]`),
    ],
    budget: 1,
    triggerMs: 10 * 60_000,
    finished: (result) => {
      const live = result.nodeClaims.filter((c) => c.deletedAt === null);
      expect(live.map((c) => c.instanceType)).toEqual([expect.stringMatching(/\.large$/)]);
      expect(result.disruptions.some((d) => d.reason === 'Underutilized' && d.decision === 'replace' && d.completedAt !== null)).toBe(true);
    },
  },
  {
    // One node; its EC2NodeClass changes at 10m: drifted, replaced by a new node first.
    name: 'Drifted (replace)',
    docs: [
      nodeClassYaml(),
      pool('large', 'WhenEmpty', 'Never', '1'),
      deployment('web', 1, '1'),
      scenario(
        'drift-crash',
        `[{at: 10m, apply: {apiVersion: karpenter.k8s.aws/v1, kind: EC2NodeClass, metadata: {name: default}, spec: {amiSelectorTerms: [{alias: al2023@latest}], subnetSelectorTerms: [{tags: {karpenter.sh/discovery: c}}], securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: c}}], role: NodeRole, tags: {team: platform}}}}]`,
      ),
    ],
    budget: 1,
    triggerMs: 10 * 60_000,
    finished: (result) => {
      const first = result.nodeClaims.filter((c) => Date.parse(c.createdAt) < START + 10 * 60_000);
      expect(first.every((c) => c.deletionReason === 'Drifted')).toBe(true);
      expect(result.nodeClaims.filter((c) => c.deletedAt === null)).toHaveLength(1);
    },
  },
];

interface Run {
  readonly result: SimulationResult;
  readonly sideEffects: readonly SideEffectRecord[];
  readonly crashes: readonly FaultRecord[];
  readonly end: { readonly nodes: readonly ClusterNode[]; readonly nodeClaims: readonly NodeClaim[] };
}

async function run(c: CrashCase, crashAfter?: number): Promise<Run> {
  const sideEffects: SideEffectRecord[] = [];
  const crashes: FaultRecord[] = [];
  let end: Run['end'] = { nodes: [], nodeClaims: [] };
  const { result } = await simulateScenario(scenarioFolder(c.docs, 'skiff-crash-'), {
    seed: 1,
    ...(crashAfter !== undefined ? { crashAfter: { handler: 'disruption', sideEffect: crashAfter } } : {}),
    onSideEffect: (s) => void (s.handler === 'disruption' && sideEffects.push(s)),
    onEnd: (e) => void (end = e),
    onFault: (f) => void crashes.push(f),
  });
  return { result, sideEffects, crashes, end };
}

/**
 * What every run must show, whatever was interrupted: no violation of any kind (budget, PDB, do-not-disrupt, …), no pod
 * evicted from a node disrupted as Empty, never more nodes disrupted at once than the budget allows, and nothing left
 * half-done — no record still carrying a disruption proposed more than 10 minutes before the end, no node tainted
 * `karpenter.sh/disrupted` without a live command.
 */
function expectSettled(c: CrashCase, r: Run, label: string): void {
  const { result, end } = r;
  expect(result.violations, `${label}: violations`).toEqual(NO_VIOLATIONS);
  const reasonOf = new Map(result.disruptions.map((d) => [d.nodeClaim, d.reason]));
  const fromEmpty = result.pods.filter((p) => p.evictions > 0 && p.nodeClaim !== null && reasonOf.get(p.nodeClaim) === 'Empty');
  expect(fromEmpty.map((p) => p.name), `${label}: pods evicted from a node disrupted as Empty`).toEqual([]);
  // The budget, from the records: the nodes whose disruption had started and not finished at each start.
  for (const d of result.disruptions) {
    const t = Date.parse(d.at);
    const busy = result.disruptions.filter((e) => Date.parse(e.at) <= t && (e.completedAt === null || Date.parse(e.completedAt) > t));
    expect(busy.length, `${label}: nodes disrupted at once at ${d.at}`).toBeLessThanOrEqual(c.budget);
  }
  // A command proposed in the last minutes may still be under way when the run ends; older ones must be settled.
  const settledBy = Date.parse(result.end) - 10 * 60_000;
  const stuck = end.nodeClaims.filter((n) => isLive(n) && n.disruption !== undefined && Date.parse(n.disruption.proposedAt) < settledBy);
  expect(
    stuck.map((n) => `${n.name} ${n.disruption!.phase}`),
    `${label}: records still carrying a disruption at the end`,
  ).toEqual([]);
  const live = new Map(end.nodeClaims.filter(isLive).map((n) => [n.providerId, n]));
  const tainted = end.nodes.filter((n) => n.taints.some((t) => t.key === DISRUPTED) && live.has(n.providerId) && live.get(n.providerId)!.disruption === undefined);
  expect(
    tainted.map((n) => n.name),
    `${label}: nodes left tainted ${DISRUPTED} without a command`,
  ).toEqual([]);
  // A Node whose NodeClaim is gone is being removed (a crash between the record's deletion and the Node's leaves it to
  // the next pass or the lifecycle controller), but not for long.
  const claimOf = new Map(end.nodeClaims.map((n) => [n.providerId, n]));
  const orphaned = end.nodes.filter((n) => !live.has(n.providerId) && claimOf.has(n.providerId) && Date.parse(result.end) - Date.parse(claimOf.get(n.providerId)!.deletedAt ?? result.end) > 2 * 60_000);
  expect(
    orphaned.map((n) => n.name),
    `${label}: Nodes left behind more than 2 minutes after their NodeClaim was deleted`,
  ).toEqual([]);
  c.finished(result);
}

describe('disruption under a crash after each side effect, one by one', () => {
  for (const c of CASES) {
    it(`${c.name}: finishes or drops the disruption cleanly whichever side effect the crash follows`, async () => {
      const baseline = await run(c);
      expectSettled(c, baseline, `${c.name}, no crash`);
      // Every side effect of the disruption handler from the trigger to the last Node deletion: the disruption's own.
      const from = baseline.sideEffects.find((s) => s.at >= START + c.triggerMs)!.index;
      const to = Math.max(...baseline.sideEffects.filter((s) => s.what.startsWith('cluster.deleteNode')).map((s) => s.index));
      expect(to - from).toBeGreaterThan(8);
      const kinds = new Set(baseline.sideEffects.filter((s) => s.index >= from && s.index <= to).map((s) => s.what.replace(/\(.*$/, '')));
      expect([...kinds].sort()).toEqual(expect.arrayContaining(['cloud.delete', 'cluster.deleteNode', 'cluster.patchNode', 'store.update']));
      for (let n = from; n <= to; n++) {
        const what = baseline.sideEffects.find((s) => s.index === n)!.what;
        const crashed = await run(c, n);
        // The crash struck where intended, once: the run matches the baseline up to it.
        expect(crashed.sideEffects.find((s) => s.index === n)?.what, `crash #${n}`).toBe(what);
        expect(crashed.crashes.map((f) => `${f.kind} ${f.subject}`), `crash #${n}`).toEqual([`crashAfterSideEffect ${what}`]);
        expectSettled(c, crashed, `${c.name}, crash after #${n} ${what}`);
      }
    }, 900_000);
  }
});

describe('the issue\'s seeded fault run: overlapping disruption invocations crashing after 30 % of side effects', () => {
  // Fifteen empty nodes under a 50 % budget, late pods arriving while commands start (see the scenario's header). The
  // old start order evicted a late pod from an "empty" node with these seeds.
  for (const seed of [2, 19, 20]) {
    it(`never evicts from an Empty node, stays within the budget and leaves nothing half-done (seed ${seed})`, async () => {
      let end: Run['end'] = { nodes: [], nodeClaims: [] };
      const { result } = await simulateScenario('test/scenarios/disruption-regressions/empty-crash-eviction.yaml', { seed, onEnd: (e) => void (end = e) });
      const c: CrashCase = { name: 'seeded', docs: [], budget: Number.POSITIVE_INFINITY, triggerMs: 0, finished: () => {} };
      expectSettled(c, { result, sideEffects: [], crashes: [], end }, `seed ${seed}`);
      expect(result.disruptions.filter((d) => d.reason === 'Empty').length).toBeGreaterThan(0);
    }, 120_000);
  }
});

describe('a random fault scenario (test/sim/fault-scenarios) under the issue\'s faults', () => {
  it('seed 13, 8 overlapping invocations crashing after 30 % of side effects: no eviction from an Empty node, no violation', async () => {
    // The old start order evicted a pod from an "empty" node here (counted as a budget violation by the observer).
    const seed = 13;
    const { dir } = randomScenario(seed, { faults: { concurrentInvocations: 8, crashAfterSideEffect: 0.3 } });
    let end: Run['end'] = { nodes: [], nodeClaims: [] };
    const { result } = await simulateScenario(dir, { seed, onEnd: (e) => void (end = e) });
    const c: CrashCase = { name: 'random', docs: [], budget: Number.POSITIVE_INFINITY, triggerMs: 0, finished: () => {} };
    expectSettled(c, { result, sideEffects: [], crashes: [], end }, `random seed ${seed}`);
    expect(result.disruptions.some((d) => d.reason === 'Empty')).toBe(true);
  }, 180_000);
});
