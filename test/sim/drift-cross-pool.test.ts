// A drifted node replaced by nodes of another NodePool (a new-user trial, session 32): the observer checked the
// replacements against the drifted node's NodePool requirements, so spot replacements of an on-demand node counted as
// "drifted too" — Violations: churn=2 on a run with no replace loop. Each replacement answers to its own NodePool.
import { describe, expect, it } from 'vitest';
import { formatSummary as summary } from '../../shared/cli/summary.js';
import type { SimulationResult } from '../../shared/sim/result.js';
import { nodeClassYaml } from '../support/provisioner-harness.js';
import { simulateDocs } from '../support/simulate-docs.js';

/** The trial's folder: a spot NodePool (weight 100, limited) and an on-demand one, an AMI change at 20 m. */
const DOCS = `
apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: drift}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: 2h
  events:
    - at: 20m
      apply:
        apiVersion: karpenter.k8s.aws/v1
        kind: EC2NodeClass
        metadata: {name: default}
        spec:
          role: KarpenterNodeRole-mycluster
          amiSelectorTerms: [{alias: al2023@v20260301}]
          subnetSelectorTerms: [{tags: {karpenter.sh/discovery: mycluster}}]
          securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: mycluster}}]
    - {at: 70m, scale: {kind: StatefulSet, namespace: prod, name: db, replicas: 3}}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: spot
spec:
  weight: 100
  template:
    spec:
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: ["spot"]}
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: ["m6i", "m6a", "m7i"]}
        - {key: karpenter.k8s.aws/instance-size, operator: In, values: ["large", "xlarge", "2xlarge"]}
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      terminationGracePeriod: 10m
  limits:
    cpu: "24"
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 5m
    budgets:
      - nodes: "2"
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: on-demand
spec:
  weight: 10
  template:
    spec:
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: ["on-demand"]}
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: ["m6i", "m6a", "m7i"]}
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 5m
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: KarpenterNodeRole-mycluster
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: mycluster}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: mycluster}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: prod}
spec:
  replicas: 30
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      topologySpreadConstraints:
        - maxSkew: 1
          topologyKey: topology.kubernetes.io/zone
          whenUnsatisfiable: DoNotSchedule
          labelSelector: {matchLabels: {app: api}}
      containers: [{name: c, image: x, resources: {requests: {cpu: "1", memory: 2Gi}}}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: api, namespace: prod}
spec:
  minAvailable: 28
  selector: {matchLabels: {app: api}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: prod}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata:
      labels: {app: db}
      annotations: {karpenter.sh/do-not-disrupt: "true"}
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: "2", memory: 8Gi}}}]
`;

describe('drift replacements in another NodePool', () => {
  let run: Promise<SimulationResult> | undefined;
  const result = () => (run ??= simulateDocs(1, DOCS));

  it('are checked against their own NodePool: a cross-pool replacement is no replace loop', async () => {
    const r = await result();
    const crossPool = r.disruptions.filter((d) => d.reason === 'Drifted' && (d.replacements ?? []).some((x) => !x.startsWith(`${d.nodePool}-`)));
    expect(crossPool.length).toBeGreaterThan(0);
    expect(r.violations.churn).toBe(0);
  }, 120_000);

  it('states the drift left at the end, and what held it (trial: a do-not-disrupt pod kept its node on the old AMI while the summary read as if the rollout were done)', async () => {
    const r = await result();
    const changedAt = Date.parse('2026-03-02T08:20:00Z');
    const live = r.nodeClaims.filter((c) => c.deletedAt === null && c.launchedAt !== null);
    const nodeOf = new Map(r.nodes.filter((n) => n.deletedAt === null).map((n) => [n.nodeClaim, n.name]));
    const holdsDb = (claim: string) => r.pods.some((p) => p.deletedAt === null && p.owner === 'StatefulSet/db' && p.node === nodeOf.get(claim));
    const drifted = live.filter((c) => c.driftedAtEnd !== undefined);
    // the db pods are do-not-disrupt: the nodes launched under the old AMI that still hold one are the ones left
    expect(drifted.length).toBeGreaterThan(0);
    for (const c of drifted) {
      expect(Date.parse(c.createdAt)).toBeLessThan(changedAt);
      expect(c.driftedAtEnd).toBe('NodeClassDrifted: EC2NodeClass default changed since the node was launched');
      expect(holdsDb(c.name)).toBe(true);
    }
    // every live node launched after the change, or holding no do-not-disrupt pod, was replaced or is not drifted
    for (const c of live.filter((c) => c.driftedAtEnd === undefined)) expect(Date.parse(c.createdAt) >= changedAt || !holdsDb(c.name)).toBe(true);
    const text = summary(r);
    expect(text).toContain(`Drifted at the end and not replaced: ${drifted.length} node`);
    expect(text).toMatch(/NodeClassDrifted: EC2NodeClass default changed since the node was launched; held: Cannot disrupt Node: pod prod\/db-\d+ is annotated karpenter\.sh\/do-not-disrupt/);
  }, 120_000);

  it('says what holds a drifted node under a WhenEmpty NodePool too (break-it trial: "no disruption pass took it" for nodes held by do-not-disrupt pods and a PDB)', async () => {
    const r = await simulateDocs(1, WHEN_EMPTY);
    const held = r.nodeClaims.filter((c) => c.driftedAtEnd !== undefined);
    expect(held).toHaveLength(3);
    const text = summary(r);
    expect(text).toContain('held: Cannot disrupt Node: pod default/pinned is annotated karpenter.sh/do-not-disrupt');
    expect(text).toMatch(/held: Cannot disrupt Node: pod default\/pinned-dur is annotated karpenter\.sh\/do-not-disrupt until /);
    expect(text).toMatch(/held: Cannot disrupt Node: pod default\/guarded-\S+: PodDisruptionBudget default\/guarded can never allow an eviction/);
    expect(text).not.toContain('no disruption pass took it');
  }, 120_000);
});

/** A WhenEmpty NodePool whose nodes hold do-not-disrupt pods and a PDB's pod; the EC2NodeClass's AMI changes at 30 m. */
const pod = (name: string, annotations: string) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: default, annotations: {${annotations}}}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: "1", memory: 1Gi}}}]`;
const deployment = (name: string, replicas: number) => `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}, namespace: default}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      containers: [{name: c, image: nginx, resources: {requests: {cpu: "1", memory: 1Gi}}}]`;
const WHEN_EMPTY = [
  nodeClassYaml(),
  `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
  disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: 1m, budgets: [{nodes: "100%"}]}`,
  pod('pinned', 'karpenter.sh/do-not-disrupt: "true"'),
  pod('pinned-dur', 'karpenter.sh/do-not-disrupt: "2h"'),
  deployment('web', 2),
  deployment('guarded', 1),
  `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: guarded, namespace: default}
spec: {minAvailable: 1, selector: {matchLabels: {app: guarded}}}`,
  `apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: drift}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: 1h
  region: us-west-2
  events:
    - at: 30m
      apply:${nodeClassYaml().replace('al2023@latest', 'al2023@v20260301').replace(/\n/g, '\n        ').trimEnd()}`,
].map((d) => d.trim()).join('\n---\n');
