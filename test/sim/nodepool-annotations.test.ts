import { describe, expect, it } from 'vitest';
import type { SimulationResult } from '../../shared/sim/result.js';
import { deploymentYaml as deployment, nodeClassYaml } from '../support/provisioner-harness.js';
import { simulateDocs } from '../support/simulate-docs.js';

// NodePool template annotations (`spec.template.metadata.annotations`) reach the NodeClaim and the Node, as
// Karpenter's `ToNodeClaim` and registration's `syncNode` copy them; `karpenter.sh/do-not-disrupt: "true"` set there
// protects every node of the NodePool from Empty, Underutilized and Drifted disruptions, not from expiration.

const scenario = (body: string, duration = '2h') => `
apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: annotations}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: ${duration}
  region: us-west-2
${body}`;

const pool = (annotations: string, expireAfter = '90m') => `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    metadata:
      labels: {team: a}
      annotations: {${annotations}}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      expireAfter: ${expireAfter}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [m]}
        - {key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["4"]}
        - {key: karpenter.k8s.aws/instance-size, operator: In, values: [xlarge]}
  disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s}
`;

const run = (...docs: string[]): Promise<SimulationResult> => simulateDocs(11, ...docs);

/**
 * Scale the workload down so one of its two nodes is empty or underutilized (20m), drift the nodes (40m), and scale
 * the workload to nothing so every node is empty (60m).
 */
const timeline = `  events:
    - at: 20m
      scale: {kind: Deployment, namespace: default, name: web, replicas: 2}
    - at: 40m
      apply:
        apiVersion: karpenter.k8s.aws/v1
        kind: EC2NodeClass
        metadata: {name: default}
        spec:
          amiSelectorTerms: [{alias: al2023@latest}]
          subnetSelectorTerms: [{tags: {karpenter.sh/discovery: my-cluster}}]
          securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: my-cluster}}]
          role: KarpenterNodeRole-other
    - at: 60m
      scale: {kind: Deployment, namespace: default, name: web, replicas: 0}`;

describe('NodePool template annotations', () => {
  it('reach every NodeClaim and Node; do-not-disrupt there blocks Empty, Underutilized and Drifted but not expiration', async () => {
    const r = await run(nodeClassYaml(), pool('example.com/owner: team-a, karpenter.sh/do-not-disrupt: "true"'), deployment('web', 6, '1', '2Gi'), scenario(timeline));
    expect(r.nodeClaims.length).toBeGreaterThan(1);
    for (const c of r.nodeClaims) expect(c.annotations).toMatchObject({ 'example.com/owner': 'team-a', 'karpenter.sh/do-not-disrupt': 'true' });
    for (const n of r.nodes) expect(n.annotations).toMatchObject({ 'example.com/owner': 'team-a', 'karpenter.sh/do-not-disrupt': 'true' });
    // The node left empty or underutilized at 20m, the drifted nodes (40m) and the empty ones (60m) all stayed until
    // they expired.
    expect(r.disruptions.filter((d) => d.reason !== 'Expired')).toEqual([]);
    const launchedAtStart = r.nodeClaims.filter((c) => c.launchedAt !== null && Date.parse(c.createdAt) < Date.parse('2026-03-02T08:05:00Z'));
    expect(launchedAtStart.length).toBeGreaterThan(1);
    for (const c of launchedAtStart) {
      expect(c.deletionReason).toBe('Expired');
      expect(Date.parse(c.deletedAt!) - Date.parse(c.createdAt)).toBeGreaterThanOrEqual(90 * 60_000);
    }
    expect(r.violations.doNotDisrupt).toBe(0);
  }, 120_000);

  it('leaves the same nodes to Empty, Underutilized or Drifted disruption without the annotation (the control)', async () => {
    const r = await run(nodeClassYaml(), pool('example.com/owner: team-a'), deployment('web', 6, '1', '2Gi'), scenario(timeline));
    for (const n of r.nodes) expect(n.annotations).toMatchObject({ 'example.com/owner': 'team-a' });
    expect(r.disruptions.some((d) => (d.reason === 'Empty' || d.reason === 'Underutilized') && d.at < '2026-03-02T08:40:00Z')).toBe(true);
    expect(r.disruptions.some((d) => d.reason === 'Drifted' && d.completedAt !== null)).toBe(true);
    expect(r.disruptions.some((d) => d.reason === 'Empty' && d.at > '2026-03-02T09:00:00Z')).toBe(true);
    expect(r.disruptions.every((d) => Date.parse(d.at) < Date.parse('2026-03-02T09:30:00Z') || d.reason === 'Expired')).toBe(true);
  }, 120_000);
});
