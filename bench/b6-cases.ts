/**
 * B6's cases (issue 22, part 4): a generated snapshot of a real-size cluster as an ordinary Scenario, so
 * `skiff simulate` runs it by hand too (`npx tsx bench/b6-cases.ts idle /tmp/b6-idle.yaml`).
 *
 * The cluster: 2,000 nodes from three Karpenter NodePools, 20,000 pods of 40 Deployments, about 55 % of every node's
 * cpu and memory requested, generated deterministically (no randomness: every choice is a function of the index).
 *
 * - `general`: 1,000 on-demand `m5.2xlarge` (8 vCPU, 32 GiB), `consolidationPolicy: WhenEmpty`;
 * - `spot`: 600 spot `c5.2xlarge` (8 vCPU, 16 GiB), `consolidationPolicy: WhenEmpty`;
 * - `memory`: 400 on-demand `r5.xlarge` (4 vCPU, 32 GiB), `WhenEmptyOrUnderutilized` under a maintenance freeze (a
 *   budget of `nodes: "0"` all day, which Karpenter users set to keep a pool still during business hours).
 *
 * Each pool's Deployments select its nodes (`nodeSelector: karpenter.sh/nodepool`) and ask for 10 pods per node whose
 * requests add up to about 55 % of the node's allocatable cpu and memory. The pods are not bound in the file: the
 * Scenario contract binds a bare pod with `spec.nodeName`, not a Deployment's, so kube-scheduler binds them in the
 * first instant of the run (it spreads them: about 10 per node). Nothing can then be disrupted: no node is empty,
 * none expires within a day (created 1 h to 20 days before the start, `expireAfter` 720 h), the underutilized pool's
 * budget is zero, and nothing drifts.
 *
 * - `idle`: no events, 24 hours from 10:00 UTC (or 1 hour, for the 24 h ÷ 1 h ratio);
 * - `diurnal`: the same start, every Deployment scaled every 30 minutes along a day-shaped curve ±40 % around the
 *   snapshot's replicas (B5's `diurnalLoad`: lowest at 04:00, highest at 16:00; at 10:00 it is the mean).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_CLASS, diurnalLoad } from './b5-cases.js';

/** One B6 case. */
export type B6Case = { readonly kind: 'idle'; readonly hours: number } | { readonly kind: 'diurnal'; readonly hours: number };

/** A short name for tables, e.g. `idle 24 h`. */
export function b6CaseName(c: B6Case): string {
  return `${c.kind} ${c.hours} h, ${B6_NODES.toLocaleString('en-US')} nodes, ${B6_PODS.toLocaleString('en-US')} pods`;
}

/** One NodePool of the generated cluster and the nodes and Deployments it holds. */
interface PoolShape {
  readonly name: string;
  readonly instanceType: string;
  readonly capacityType: 'on-demand' | 'spot';
  readonly nodes: number;
  readonly deployments: number;
  /** The requests of one pod, cpu millicores and memory MiB: about 5.5 % of the node's allocatable each. */
  readonly cpuMillis: number;
  readonly memoryMiB: number;
  readonly underutilized: boolean;
}

const POOLS: readonly PoolShape[] = [
  // m5.2xlarge: 7,910m and about 29.6 GiB allocatable (al2023, 7.5 % VM overhead, kube/system reserved).
  { name: 'general', instanceType: 'm5.2xlarge', capacityType: 'on-demand', nodes: 1000, deployments: 20, cpuMillis: 430, memoryMiB: 1660, underutilized: false },
  // c5.2xlarge: 7,910m and about 13.9 GiB.
  { name: 'spot', instanceType: 'c5.2xlarge', capacityType: 'spot', nodes: 600, deployments: 12, cpuMillis: 430, memoryMiB: 780, underutilized: false },
  // r5.xlarge: 3,920m and about 29.7 GiB.
  { name: 'memory', instanceType: 'r5.xlarge', capacityType: 'on-demand', nodes: 400, deployments: 8, cpuMillis: 215, memoryMiB: 1660, underutilized: true },
];

/** Nodes of the generated cluster. */
export const B6_NODES = POOLS.reduce((n, p) => n + p.nodes, 0);
/** Pods of the generated cluster (10 per node). */
export const B6_PODS = B6_NODES * 10;
/** Pods per node. */
const PODS_PER_NODE = 10;
const ZONES = ['us-west-2a', 'us-west-2b', 'us-west-2c'];
/** 10:00 UTC, where the diurnal curve is at its mean. */
const START = '2026-03-02T10:00:00Z';
const START_HOUR = 10;

function nodePool(p: PoolShape): string {
  const family = p.instanceType.split('.')[0];
  const disruption = p.underutilized
    ? `{consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 1m, budgets: [{nodes: "0"}]}`
    : `{consolidationPolicy: WhenEmpty, consolidateAfter: 5m}`;
  return `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: ${p.name}}
spec:
  template:
    metadata: {labels: {team: ${p.name}}}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [${p.capacityType}]}
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [${family}]}
  disruption: ${disruption}
`;
}

/** Replicas of each Deployment of `p` at the snapshot: its nodes' pods shared out, the first ones one more. */
function replicasOf(p: PoolShape, d: number): number {
  const total = p.nodes * PODS_PER_NODE;
  return Math.floor(total / p.deployments) + (d < total % p.deployments ? 1 : 0);
}

function deployment(p: PoolShape, d: number, replicas: number): string {
  // Shapes vary ±20 % around the pool's mean, in pairs that cancel out (d even: larger, odd: smaller).
  const f = d % 2 === 0 ? 1 + 0.2 * ((d % 4) / 2) : 1 - 0.2 * (((d - 1) % 4) / 2);
  const name = `${p.name}-app-${d}`;
  return `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      nodeSelector: {karpenter.sh/nodepool: ${p.name}}
      containers: [{name: app, image: nginx, resources: {requests: {cpu: ${Math.round(p.cpuMillis * f)}m, memory: ${Math.round(p.memoryMiB * f)}Mi}}}]
`;
}

/** The Scenario's `spec.nodes`: every node of every pool, zones round-robin, created 1 h to 20 days before the start. */
function nodes(): string[] {
  const lines: string[] = [];
  let i = 0;
  for (const p of POOLS) {
    for (let n = 0; n < p.nodes; n++, i++) {
      const hoursAgo = 1 + ((i * 7919) % (20 * 24 - 1));
      lines.push(`    - {name: ${p.name}-${String(n).padStart(4, '0')}, instanceType: ${p.instanceType}, zone: ${ZONES[i % ZONES.length]}, capacityType: ${p.capacityType}, nodePool: ${p.name}, createdAt: "-${hoursAgo}h"}`);
    }
  }
  return lines;
}

/** The diurnal events: each Deployment's replicas every 30 minutes, the snapshot's times {@link diurnalLoad}. */
function diurnalEvents(hours: number): string[] {
  const events: string[] = [];
  for (let step = 1; step < hours * 2; step++) {
    const hour = START_HOUR + step / 2;
    const at = `${Math.floor(step / 2)}h${step % 2 === 1 ? '30m' : ''}`;
    for (const p of POOLS) {
      for (let d = 0; d < p.deployments; d++) {
        const replicas = Math.max(1, Math.round(replicasOf(p, d) * diurnalLoad(hour % 24)));
        events.push(`    - {at: ${at}, scale: {kind: Deployment, name: ${p.name}-app-${d}, replicas: ${replicas}}}`);
      }
    }
  }
  return events;
}

/** The case as one multi-document YAML Scenario. */
export function b6Scenario(c: B6Case): string {
  const events = c.kind === 'diurnal' ? diurnalEvents(c.hours) : [];
  return [
    `apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: b6-${c.kind}-${c.hours}h}
spec:
  start: "${START}"
  duration: ${c.hours}h
  nodes:
${nodes().join('\n')}
${events.length > 0 ? `  events:\n${events.join('\n')}\n` : ''}`,
    NODE_CLASS,
    ...POOLS.map(nodePool),
    ...POOLS.flatMap((p) => Array.from({ length: p.deployments }, (_, d) => deployment(p, d, replicasOf(p, d)))),
  ].join('---\n');
}

/**
 * Writes the case's scenario to `file`, or to a new temporary folder.
 * @returns the scenario path to simulate
 */
export function writeB6Case(c: B6Case, file?: string): string {
  const path = file ?? join(mkdtempSync(join(tmpdir(), 'skiff-b6-')), 'scenario.yaml');
  writeFileSync(path, b6Scenario(c));
  return path;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [kind, file, hours] = process.argv.slice(2);
  if ((kind !== 'idle' && kind !== 'diurnal') || !file) throw new Error('usage: b6-cases.ts idle|diurnal <file> [hours, default 24]');
  writeB6Case({ kind, hours: hours ? Number(hours) : 24 }, file);
}
