/**
 * B4, provisioning latency: from a pod turning pending (kube-scheduler marks it Unschedulable, the Result's
 * `firstPendingAt`) to the CreateFleet call that launched its node (the Result's launch attempt of the pod's
 * NodeClaim). The scenario runs through the real simulation engine and handlers (`simulateScenario`, what
 * `skiff simulate` runs): relay event → SQS FIFO batch window → provisioner Lambda → simulated EC2.
 *
 * The virtual clock does not move while a handler computes, so the simulated figure is the event path and batch
 * window only. {@link withCompute} adds what a real provisioner spends: each invocation's measured wall time (the
 * probe's `provisionerInvocation`: handler, solve, DynamoDB writes on dynalite) and a cold start when the invocation
 * is the first after {@link WARM_IDLE_MS} of idle, with the FIFO queue's one-batch-at-a-time order (an invocation
 * starts when the previous one has finished, not before).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simulateScenario } from '../shared/cli/simulate.js';
import type { ProvisionerInvocationSample } from '../shared/sim/engine.js';
import type { SimulationResult } from '../shared/sim/result.js';
import { percentile } from './stats.js';

/** The EC2NodeClass and NodePool of the latency scenarios: the seed article's general pool, no consolidation. */
export const LATENCY_POOL = `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: my-cluster}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: my-cluster}}]
  role: KarpenterNodeRole-my-cluster
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r]}
        - {key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["4"]}
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
  disruption: {consolidateAfter: Never}
`;

/** A latency scenario: one pod, or a Deployment of `replicas` created at once, 500m / 1 GiB each. */
export function latencyScenario(replicas: number): string {
  const workload =
    replicas === 1
      ? `apiVersion: v1
kind: Pod
metadata: {name: single}
spec:
  containers: [{name: app, image: nginx, resources: {requests: {cpu: 500m, memory: 1Gi}}}]`
      : `apiVersion: apps/v1
kind: Deployment
metadata: {name: burst}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: burst}}
  template:
    metadata: {labels: {app: burst}}
    spec:
      containers: [{name: app, image: nginx, resources: {requests: {cpu: 500m, memory: 1Gi}}}]`;
  const scenario = `apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: latency-${replicas}}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: 20m
  region: us-west-2`;
  return [LATENCY_POOL.trim(), workload, scenario].join('\n---\n');
}

/**
 * How long a Lambda execution environment is assumed to stay warm without invocations, ms. AWS documents no figure;
 * environments are commonly reclaimed after 5–15 idle minutes, and the shorter end is taken (more cold starts).
 */
export const WARM_IDLE_MS = 5 * 60_000;

/** Latency figures of one run. */
export interface LatencyResult {
  readonly replicas: number;
  readonly seed: number;
  /** Pending → CreateFleet per pod that got a node, seconds (simulated time), in pod order. */
  readonly latencies: readonly number[];
  readonly p50: number;
  readonly p99: number;
  /** Largest latency, seconds. */
  readonly max: number;
  /** Pending → CreateFleet with the provisioner's compute and cold starts ({@link withCompute}), seconds: p50, p99, max. */
  readonly withCompute: { readonly p50: number; readonly p99: number; readonly max: number };
  /** Provisioner invocations in the run. */
  readonly invocations: number;
  /** Their wall time, ms: the sum and the longest. */
  readonly invocationWallMs: { readonly total: number; readonly max: number };
  /** The cold start added to an invocation after idle, ms (the provisioner's cold import + init from B7, or measured). */
  readonly coldStartMs: number;
  /** Invocations that paid it. */
  readonly coldStarts: number;
  /** Pods whose node came from no launch attempt the Result records (or that never got a node). */
  readonly unmatched: number;
  readonly launchAttempts: number;
  /** Wall time of the simulation, seconds. */
  readonly wallSeconds: number;
}

/** Pending → CreateFleet latency of every pod in a Result, seconds. */
export function pendingToCreateFleet(result: SimulationResult): { latencies: number[]; unmatched: number } {
  const firstAttempt = new Map<string, number>();
  for (const a of result.launchAttempts) {
    const at = Date.parse(a.at);
    if (!firstAttempt.has(a.nodeClaim) || at < firstAttempt.get(a.nodeClaim)!) firstAttempt.set(a.nodeClaim, at);
  }
  const latencies: number[] = [];
  let unmatched = 0;
  for (const p of result.pods) {
    const pending = Date.parse(p.firstPendingAt ?? p.createdAt);
    const launched = p.nodeClaim ? firstAttempt.get(p.nodeClaim) : undefined;
    if (launched === undefined) unmatched++;
    else latencies.push((launched - pending) / 1000);
  }
  return { latencies, unmatched };
}

/**
 * Pending → CreateFleet of every pod with the provisioner's compute counted, seconds. The provisioner's invocations
 * run one at a time (FIFO queue, one message group): invocation *i* starts at `max(its virtual time, end of i − 1)`,
 * pays `coldStartMs` when it starts more than `idleMs` after the previous one ended (or is the first), and ends
 * `wallMs` later. A launch attempt at virtual time *t* was made by the last invocation at *t*; it is counted at that
 * invocation's end (its CreateFleet calls happen during it, so this is the later bound). A pod whose launch no
 * invocation made (another controller's, e.g. the interruption handler's) keeps its simulated latency.
 * @param invocations in the order they ran (virtual time ascending)
 * @param coldStartMs ms added to an invocation after idle
 * @param idleMs idle time after which the next invocation is cold, ms
 */
export function withCompute(result: SimulationResult, invocations: readonly ProvisionerInvocationSample[], coldStartMs: number, idleMs = WARM_IDLE_MS): { latencies: number[]; coldStarts: number } {
  const endAt = new Map<number, number>();
  let previousEnd = Number.NEGATIVE_INFINITY;
  let coldStarts = 0;
  for (const inv of invocations) {
    const start = Math.max(inv.atMs, previousEnd);
    const cold = start - previousEnd > idleMs;
    if (cold) coldStarts++;
    previousEnd = start + (cold ? coldStartMs : 0) + inv.wallMs;
    endAt.set(inv.atMs, previousEnd);
  }
  const firstAttempt = new Map<string, number>();
  for (const a of result.launchAttempts) {
    const at = Date.parse(a.at);
    if (!firstAttempt.has(a.nodeClaim) || at < firstAttempt.get(a.nodeClaim)!) firstAttempt.set(a.nodeClaim, at);
  }
  const latencies: number[] = [];
  for (const p of result.pods) {
    const launched = p.nodeClaim ? firstAttempt.get(p.nodeClaim) : undefined;
    if (launched === undefined) continue;
    latencies.push(((endAt.get(launched) ?? launched) - Date.parse(p.firstPendingAt ?? p.createdAt)) / 1000);
  }
  return { latencies, coldStarts };
}

const maxOf = (xs: readonly number[]) => xs.reduce((a, b) => Math.max(a, b), Number.NEGATIVE_INFINITY);

/**
 * Runs one latency scenario through the simulation, with a probe timing each provisioner invocation.
 * @param replicas 1 for a single pod, else a Deployment of that many replicas
 * @param coldStartMs the provisioner's cold start, ms (B7's cold import + init of its bundle)
 */
export async function measureLatency(replicas: number, seed: number, coldStartMs: number): Promise<LatencyResult> {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-bench-latency-'));
  try {
    writeFileSync(join(dir, 'scenario.yaml'), latencyScenario(replicas));
    const invocations: ProvisionerInvocationSample[] = [];
    // One fleet sample per simulated hour: the probe is here for the provisioner's invocations.
    const probe = { everyMs: 3_600_000, sample: () => {}, provisionerInvocation: (p: ProvisionerInvocationSample) => invocations.push(p) };
    const t0 = performance.now();
    const { result } = await simulateScenario(dir, { seed, probe });
    const wallSeconds = (performance.now() - t0) / 1000;
    const { latencies, unmatched } = pendingToCreateFleet(result);
    const computed = withCompute(result, invocations, coldStartMs);
    const walls = invocations.map((i) => i.wallMs);
    return {
      replicas,
      seed,
      latencies,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: maxOf(latencies),
      withCompute: { p50: percentile(computed.latencies, 50), p99: percentile(computed.latencies, 99), max: maxOf(computed.latencies) },
      invocations: invocations.length,
      invocationWallMs: { total: walls.reduce((a, b) => a + b, 0), max: maxOf(walls) },
      coldStartMs,
      coldStarts: computed.coldStarts,
      unmatched,
      launchAttempts: result.launchAttempts.length,
      wallSeconds,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
