/**
 * B4, provisioning latency in simulated time: from a pod turning pending (kube-scheduler marks it Unschedulable,
 * the Result's `firstPendingAt`) to the CreateFleet call that launched its node (the Result's launch attempt of the
 * pod's NodeClaim). The scenario runs through the real simulation engine and handlers (`simulateScenario`, what
 * `skiff simulate` runs): relay event → SQS FIFO batch window → provisioner Lambda → simulated EC2.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simulateScenario } from '../shared/cli/simulate.js';
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
 * Runs one latency scenario through the simulation.
 * @param replicas 1 for a single pod, else a Deployment of that many replicas
 */
export async function measureLatency(replicas: number, seed = 1): Promise<LatencyResult> {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-bench-latency-'));
  try {
    writeFileSync(join(dir, 'scenario.yaml'), latencyScenario(replicas));
    const t0 = performance.now();
    const { result } = await simulateScenario(dir, { seed });
    const wallSeconds = (performance.now() - t0) / 1000;
    const { latencies, unmatched } = pendingToCreateFleet(result);
    return { replicas, seed, latencies, p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.reduce((a, b) => Math.max(a, b), Number.NEGATIVE_INFINITY), unmatched, launchAttempts: result.launchAttempts.length, wallSeconds };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
