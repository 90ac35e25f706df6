/**
 * Seeded random scenarios for property and soak runs: 1–3 NodePools with random requirements, Deployments and
 * Jobs sized to fit, scale and delete events, and insufficient-capacity windows. Every pod is satisfiable by
 * construction unless it is one of the deliberately unsatisfiable "orphan" pods (nodeSelector on a label no
 * NodePool defines), so a run's invariants can be checked exactly.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mulberry32 } from '../../shared/ports/ids.js';
import type { ScenarioFaults } from '../../shared/sim/scenario.js';

/** A generated scenario folder and what the generator knows about it. */
export interface RandomScenario {
  readonly dir: string;
  /** `namespace/name` prefixes of pods that can never be scheduled. */
  readonly orphans: readonly string[];
}

const CATEGORIES = [['c', 'm', 'r'], ['c', 'm'], ['m'], ['r'], ['c']];
const CPU = ['100m', '250m', '500m', '1', '1500m', '2'];
const MEMORY = ['128Mi', '256Mi', '512Mi', '1Gi', '2Gi', '4Gi'];
const ZONES = ['us-west-2a', 'us-west-2b', 'us-west-2c', 'us-west-2d'];

/** Options of {@link randomScenario}. */
export interface RandomScenarioOptions {
  /** `spec.faults` to add to the Scenario document (probabilities 0–1). @default none */
  readonly faults?: Partial<ScenarioFaults>;
}

/**
 * Writes a random scenario for `seed` to a new temporary folder. The scenario drawn depends only on `seed`; faults
 * are added to it unchanged.
 */
export function randomScenario(seed: number, options: RandomScenarioOptions = {}): RandomScenario {
  const rnd = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const docs: string[] = [
    `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: c}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: c}}]
  role: NodeRole`,
  ];
  const pools = int(1, 3);
  for (let i = 0; i < pools; i++) {
    const zones = ZONES.filter(() => rnd() < 0.7);
    const capacity = pick([['spot', 'on-demand'], ['on-demand'], ['spot']]);
    docs.push(`apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: pool-${i}}
spec:
  weight: ${int(1, 100)}
  template:
    metadata: {labels: {pool: p${i}}}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [${pick(CATEGORIES).join(', ')}]}
        - {key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["${int(3, 5)}"]}
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [${capacity.join(', ')}]}${zones.length ? `\n        - {key: topology.kubernetes.io/zone, operator: In, values: [${zones.join(', ')}]}` : ''}`);
  }
  const events: string[] = [];
  const orphans: string[] = [];
  const deployments = int(1, 5);
  for (let d = 0; d < deployments; d++) {
    const name = `app-${d}`;
    const selector = rnd() < 0.1 ? '{node-type: nowhere}' : `{pool: p${int(0, pools - 1)}}`;
    if (selector.includes('nowhere')) orphans.push(`default/${name}-`);
    docs.push(`apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}}
spec:
  replicas: ${int(1, 20)}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      nodeSelector: ${selector}
      containers: [{name: c, image: x, resources: {requests: {cpu: "${pick(CPU)}", memory: ${pick(MEMORY)}}}}]`);
    if (rnd() < 0.5) events.push(`    - {at: ${int(5, 90)}m, scale: {kind: Deployment, namespace: default, name: ${name}, replicas: ${int(0, 30)}}}`);
  }
  if (rnd() < 0.5) {
    docs.push(`apiVersion: batch/v1
kind: Job
metadata: {name: batch}
spec:
  parallelism: ${int(1, 10)}
  completions: ${int(10, 20)}
  template:
    metadata: {annotations: {skiff.dev/run-for: ${int(5, 40)}m}}
    spec:
      restartPolicy: Never
      nodeSelector: {pool: p${int(0, pools - 1)}}
      containers: [{name: c, image: x, resources: {requests: {cpu: "${pick(CPU)}", memory: ${pick(MEMORY)}}}}]`);
  }
  for (let k = int(0, 3); k > 0; k--) {
    events.push(
      `    - {at: ${int(0, 60)}m, insufficientCapacity: {instanceType: ${pick(['m5.large', 'c5.large', 'm6i.large', 'c6i.xlarge', 'r5.large', 'm5.xlarge'])}, zone: ${pick(ZONES)}, capacityType: ${pick(['spot', 'on-demand'])}, for: ${int(5, 60)}m}}`,
    );
  }
  docs.push(`apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: random-${seed}}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: 2h
  region: us-west-2${events.length ? `\n  events:\n${events.join('\n')}` : ''}${faultsYaml(options.faults)}`);
  const dir = mkdtempSync(join(tmpdir(), `skiff-random-${seed}-`));
  writeFileSync(join(dir, 'scenario.yaml'), docs.join('\n---\n'));
  return { dir, orphans };
}

/** The `faults:` block of the Scenario spec, or nothing. */
function faultsYaml(faults: Partial<ScenarioFaults> | undefined): string {
  const entries = Object.entries(faults ?? {});
  return entries.length ? `\n  faults: {${entries.map(([k, v]) => `${k}: ${v}`).join(', ')}}` : '';
}
