/**
 * B5's cases (issue 20), written as ordinary scenario folders so `skiff simulate` can run each one by hand too:
 *
 * - `burst`: pods of six shapes (250m/512Mi, 500m/1Gi, 1/2Gi, 2/4Gi, 4/8Gi, 1/4Gi, one Deployment each, equal replicas)
 *   created at once on one on-demand c/m/r NodePool (`WhenEmptyOrUnderutilized`, `consolidateAfter: 1m`, the default
 *   budget), sizes `large`, `xlarge` and `2xlarge` (`sized`, as many real clusters cap them) or any size; at +30 min
 *   every Deployment scales to 25 %; 2 hours in all;
 * - `diurnal`: 24 hours of the same six shapes in 48 Deployments on the unrestricted NodePool, the total following
 *   a day-shaped curve (±40 % around the mean, lowest at 04:00, highest at 16:00, one scale step per Deployment every
 *   30 minutes) and 2 % of the pods replaced every hour (one Deployment's template changes per hour: a rolling
 *   restart of 1/48 of the pods);
 * - `trace`: the Alibaba trace example (`examples/alibaba-trace`), as it is (its `gpu` NodePool is `WhenEmpty`) or with
 *   that NodePool's `consolidationPolicy` set to `WhenEmptyOrUnderutilized` (`gpuUnderutilized`), so that consolidation
 *   may move the GPU pods that keep large nodes alive.
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

/** The six pod shapes of issue 20: cpu (Kubernetes quantity), memory. */
export const B5_SHAPES: readonly (readonly [string, string])[] = [
  ['250m', '512Mi'],
  ['500m', '1Gi'],
  ['1', '2Gi'],
  ['2', '4Gi'],
  ['4', '8Gi'],
  ['1', '4Gi'],
];

/** One B5 case. */
export type B5Case =
  | { readonly kind: 'burst'; readonly pods: number; readonly sized: boolean }
  | { readonly kind: 'diurnal'; readonly meanPods: number }
  | { readonly kind: 'trace'; readonly gpuUnderutilized?: boolean };

/** A short name for tables, e.g. `burst 2,000 pods, sized`. */
export function b5CaseName(c: B5Case): string {
  switch (c.kind) {
    case 'burst':
      return `burst ${c.pods.toLocaleString('en-US')} pods → 25 %, ${c.sized ? 'sizes large–2xlarge' : 'any size'}`;
    case 'diurnal':
      return `diurnal 24 h, ${c.meanPods.toLocaleString('en-US')} pods ± 40 %, 2 %/h churn`;
    case 'trace':
      return c.gpuUnderutilized ? 'Alibaba trace, gpu NodePool WhenEmptyOrUnderutilized' : 'Alibaba trace';
  }
}

/** The EC2NodeClass every bench scenario's NodePools use (B5, B6). */
export const NODE_CLASS = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: KarpenterNodeRole
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: bench}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: bench}}]
`;

function nodePool(sized: boolean): string {
  return `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r]}${sized ? '\n        - {key: karpenter.k8s.aws/instance-size, operator: In, values: [large, xlarge, 2xlarge]}' : ''}
  disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 1m}
`;
}

function deployment(name: string, replicas: number, shape: readonly [string, string], restart?: string): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}${restart ? `, annotations: {bench.skiff.dev/restarted-at: "${restart}"}` : ''}}
    spec:
      containers: [{name: app, image: nginx, resources: {requests: {cpu: "${shape[0]}", memory: ${shape[1]}}}}]
`;
}

/** The burst case as one multi-document YAML. */
export function burstScenario(pods: number, sized: boolean): string {
  const each = Math.floor(pods / B5_SHAPES.length);
  const events = B5_SHAPES.map((_, i) => `    - {at: 30m, scale: {kind: Deployment, name: app-${i}, replicas: ${Math.round(each / 4)}}}`).join('\n');
  return [
    `apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: b5-burst-${pods}${sized ? '-sized' : ''}}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: 2h
  events:
${events}
`,
    NODE_CLASS,
    nodePool(sized),
    ...B5_SHAPES.map((shape, i) => deployment(`app-${i}`, each, shape)),
  ].join('---\n');
}

/** Deployments of the diurnal case (eight per shape). */
const DIURNAL_DEPLOYMENTS = 48;

/**
 * The fraction of the mean load at `hour` (0–24, UTC): 1 − 0.4·cos(2π(h − 4)/24), lowest (0.6) at 04:00, highest
 * (1.4) at 16:00.
 */
export function diurnalLoad(hour: number): number {
  return 1 - 0.4 * Math.cos((2 * Math.PI * (hour - 4)) / 24);
}

/** The diurnal case as one multi-document YAML. */
export function diurnalScenario(meanPods: number): string {
  const perDeployment = meanPods / DIURNAL_DEPLOYMENTS;
  const replicas = (hour: number) => Math.max(1, Math.round(perDeployment * diurnalLoad(hour)));
  const events: string[] = [];
  for (let step = 1; step < 48; step++) {
    const hour = step / 2;
    const at = `${Math.floor(hour)}h${step % 2 === 1 ? '30m' : ''}`;
    for (let d = 0; d < DIURNAL_DEPLOYMENTS; d++) events.push(`    - {at: ${at}, scale: {kind: Deployment, name: app-${d}, replicas: ${replicas(hour)}}}`);
  }
  // 2 % churn per hour: one Deployment in 48 gets a new template each hour (a rolling restart replaces its pods).
  for (let h = 1; h < 24; h++) {
    const d = (h * 7) % DIURNAL_DEPLOYMENTS;
    const object = deployment(`app-${d}`, replicas(h), B5_SHAPES[d % B5_SHAPES.length]!, `h${h}`)
      .trimEnd()
      .split('\n')
      .map((line) => `        ${line}`)
      .join('\n');
    events.push(`    - at: ${h}h0m30s\n      apply:\n${object}`);
  }
  return [
    `apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: b5-diurnal-${meanPods}}
spec:
  start: "2026-03-02T00:00:00Z"
  duration: 24h
  events:
${events.join('\n')}
`,
    NODE_CLASS,
    nodePool(false),
    ...Array.from({ length: DIURNAL_DEPLOYMENTS }, (_, d) => deployment(`app-${d}`, replicas(0), B5_SHAPES[d % B5_SHAPES.length]!)),
  ].join('---\n');
}

/**
 * Writes the case's scenario to a new temporary folder (the trace case is the repository's example).
 * @param root the repository root
 * @returns the scenario path to simulate
 */
export function writeB5Case(c: B5Case, root: string): string {
  if (c.kind === 'trace') return c.gpuUnderutilized ? traceWithGpuConsolidation(join(root, 'examples/alibaba-trace')) : join(root, 'examples/alibaba-trace');
  const dir = mkdtempSync(join(tmpdir(), 'skiff-b5-'));
  const file = join(dir, 'scenario.yaml');
  writeFileSync(file, c.kind === 'burst' ? burstScenario(c.pods, c.sized) : diurnalScenario(c.meanPods));
  return file;
}

/**
 * A copy of the trace example in a new temporary folder, its `gpu` NodePool's `spec.disruption.consolidationPolicy`
 * set to `WhenEmptyOrUnderutilized` (everything else as generated).
 * @throws {Error} when the example has no NodePool `gpu`
 */
function traceWithGpuConsolidation(example: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-b5-trace-'));
  cpSync(example, dir, { recursive: true });
  const file = join(dir, 'nodepools.yaml');
  const docs = parseAllDocuments(readFileSync(file, 'utf8'));
  const gpu = docs.find((d) => d.getIn(['kind']) === 'NodePool' && d.getIn(['metadata', 'name']) === 'gpu');
  if (!gpu) throw new Error(`${file}: no NodePool gpu`);
  gpu.setIn(['spec', 'disruption', 'consolidationPolicy'], 'WhenEmptyOrUnderutilized');
  writeFileSync(file, docs.map((d) => d.toString()).join('---\n'));
  return dir;
}
