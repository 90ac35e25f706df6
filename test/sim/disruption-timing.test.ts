// Disruption timing as Karpenter v1.14 has it (issue 26), end to end through the real provisioner, lifecycle and
// disruption handlers (simulateScenario), asserted on the Result: disruption times against the pods' bind and
// completion times, the replacement's capacity type, do-not-disrupt pods' deletion time against the deadline.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { simulateScenario } from '../../shared/cli/simulate.js';
import type { SimulationResult } from '../../shared/sim/result.js';
import { nodeClassYaml } from '../support/provisioner-harness.js';

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

async function run(...docs: string[]): Promise<SimulationResult> {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-disruption-timing-'));
  writeFileSync(join(dir, 'scenario.yaml'), docs.join('\n---\n'));
  return (await simulateScenario(dir, { seed: 3 })).result;
}

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
