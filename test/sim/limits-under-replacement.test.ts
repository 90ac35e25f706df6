// NodePool limits while nodes are being replaced (issue 21, item 1 of the remaining findings). Karpenter v1.14 counts a
// NodePool's usage over its nodes that are not marked for deletion (core `pkg/controllers/state/cluster.go`
// `updateNodePoolResources`, `provisioner.go` `Schedule` over `nodes.Active()`): an interrupted, expiring or
// consolidated node no longer counts once its deletion started, so its replacement launches at once even when the
// NodePool is at its limit, and the observer judges limits the same way.
import { describe, expect, it } from 'vitest';
import { nodeClassYaml } from '../support/provisioner-harness.js';
import { simulateDocs } from '../support/simulate-docs.js';

/** A spot-only NodePool of 4-vCPU types limited to 8 vCPUs: two nodes fill it. */
const POOL = `${nodeClassYaml()}---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: spot}
spec:
  limits: {cpu: "8"}
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [spot]}
        - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.xlarge, c5.xlarge, r5.xlarge, m6i.xlarge]}
`;

/** Two pods of 3 vCPUs: one per 4-vCPU node, so the NodePool runs at its limit. */
const WEB = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: nginx, resources: {requests: {cpu: "3", memory: 1Gi}}}]
`;

const scenario = (events: string) => `
apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: limits-under-replacement}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: 40m
  events:
${events}`;

const INTERRUPTED_AT = Date.parse('2026-03-02T08:10:00Z');

describe('simulation: NodePool limits while nodes are replaced', () => {
  it('replaces both interrupted nodes of a NodePool at its cpu limit at once, and the observer counts no breach', async () => {
    const r = await simulateDocs(3, POOL, WEB, scenario('    - {at: 10m, spotInterruption: {nodeSelector: {karpenter.sh/capacity-type: spot}, count: 2}}'));
    const interrupted = r.nodeClaims.filter((c) => c.deletionReason === 'Interrupted');
    expect(interrupted).toHaveLength(2);
    // The interrupted nodes are being deleted: they no longer count toward the limit, so the NodeClaims for their pods
    // are created with the warning, not after the interrupted NodeClaims are gone.
    const replacements = r.nodeClaims.filter((c) => Date.parse(c.createdAt) >= INTERRUPTED_AT && c.launchedAt !== null);
    expect(replacements).toHaveLength(2);
    for (const c of replacements) expect(Date.parse(c.createdAt) - INTERRUPTED_AT).toBeLessThan(5_000);
    // Overlapping the nodes they replace is within the limit as Karpenter counts it.
    expect(r.violations.limits).toBe(0);
    // The NodePool's steady usage stays within its limit: two 4-vCPU nodes.
    expect(r.nodeClaims.filter((c) => c.deletedAt === null && c.launchedAt !== null)).toHaveLength(2);
    expect(r.unschedulable).toEqual([]);
  }, 60_000);
});
