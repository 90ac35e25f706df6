// Issue 21, liveness under faults: the disruption controller when passes die after a few side effects
// (crashAfterSideEffect). Nodes already past expireAfter, a short terminationGracePeriod and a PDB that lets one pod go
// at a time: every drain must still end by its deadline (plus the time between passes) and every expired node go.
import { describe, expect, it } from 'vitest';
import { nodePoolYaml } from '../support/manifests.js';
import { nodeClassYaml } from '../support/provisioner-harness.js';
import { simulateDocs } from '../support/simulate-docs.js';

const TGP_MS = 3 * 60_000;
const START = Date.parse('2026-03-02T08:00:00Z');

const scenario = `
apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: expiry-under-crashes}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: 20m
  region: us-west-2
  nodes:
${[2, 3, 4, 5, 6, 7].map((h, i) => `    - {name: n${i}, instanceType: m5.xlarge, zone: us-west-2${'abc'[i % 3]}, capacityType: on-demand, nodePool: general, createdAt: "-${h}h"}`).join('\n')}
  faults:
    crashAfterSideEffect: 0.2`;

const pool = nodePoolYaml({
  template: { expireAfter: '1h', terminationGracePeriod: '3m' },
  requirements: { 'karpenter.k8s.aws/instance-family': ['m5'], 'karpenter.k8s.aws/instance-size': ['xlarge'] },
  disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: '30m', budgets: [{ nodes: '1' }] },
});

const workload = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 12
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: nginx, resources: {requests: {cpu: 1500m, memory: 2Gi}}}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
  maxUnavailable: 1`;

describe('disruption under crash faults (crashAfterSideEffect 0.2)', () => {
  it('ends every drain by its terminationGracePeriod deadline plus a pass or two, and removes every expired node within minutes', async () => {
    for (const seed of [1, 2]) {
      const r = await simulateDocs(seed, nodeClassYaml(), pool, workload, scenario);
      expect(r.disruptions.filter((d) => d.reason === 'Expired').length).toBeGreaterThanOrEqual(6);
      for (const d of r.disruptions) {
        if (!d.drainStartedAt) continue;
        // The deadline, then at most two passes 20 s apart that die before they finish the drain.
        const by = Date.parse(d.drainStartedAt) + TGP_MS + 90_000;
        expect({ nodeClaim: d.nodeClaim, late: d.completedAt === null ? Date.parse(r.end) > by : Date.parse(d.completedAt) > by }).toEqual({ nodeClaim: d.nodeClaim, late: false });
      }
      // The six nodes were past expireAfter when the run began: expired by the first passes, gone by their deadline.
      const initial = r.nodeClaims.filter((c) => Date.parse(c.createdAt) < START);
      expect(initial).toHaveLength(6);
      for (const c of initial) expect(c.deletedAt !== null && Date.parse(c.deletedAt) <= START + 2 * 60_000 + TGP_MS + 90_000).toBe(true);
      expect(Object.values(r.violations).every((v) => v === 0)).toBe(true);
    }
  }, 120_000);
});
