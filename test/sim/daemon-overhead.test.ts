import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCatalog } from '../../shared/core/instancetypes/catalog.js';
import type { SimulationResult } from '../../shared/sim/result.js';
import { deploymentYaml, nodeClassYaml } from '../support/provisioner-harness.js';
import { simulateDocs } from '../support/simulate-docs.js';

// Issue 19 item 10: DaemonSet overhead per group of instance types (core v1.14 `buildDaemonOverheadGroups`).

const scenario = (duration = '20m') => `
apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: daemons}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: ${duration}
  region: us-west-2
`;

const pool = (requirements: readonly string[]) => `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
${requirements.map((r) => `        - ${r}`).join('\n')}
`;

const daemonSet = (name: string, cpu: string, nodeSelector: Record<string, string>) => `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ${name}, namespace: kube-system}
spec:
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      nodeSelector: ${JSON.stringify(nodeSelector)}
      containers: [{name: agent, image: agent, resources: {requests: {cpu: "${cpu}", memory: 128Mi}}}]
`;

const deployment = deploymentYaml;

const run = (...docs: string[]): Promise<SimulationResult> => simulateDocs(4, ...docs);

const catalog = new Map(loadCatalog().map((t) => [t.name, t]));
const vcpus = (type: string | null) => Number(catalog.get(type!)?.labels['karpenter.k8s.aws/instance-cpu']);
const arch = (type: string | null) => catalog.get(type!)?.labels['kubernetes.io/arch'];

describe('DaemonSet overhead per instance-type group (issue 19 item 10)', () => {
  it('a DaemonSet for amd64 only costs nothing on arm64 types: one 1-cpu pod gets a 2-vCPU arm64 node', async () => {
    const r = await run(
      nodeClassYaml(),
      pool([
        '{key: kubernetes.io/arch, operator: In, values: [amd64, arm64]}',
        '{key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m]}',
        '{key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["5"]}',
        '{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}',
      ]),
      daemonSet('amd64-agent', '1500m', { 'kubernetes.io/arch': 'amd64' }),
      deployment('web', 1, '1', '1Gi'),
      scenario(),
    );
    expect(r.nodeClaims).toHaveLength(1);
    const claim = r.nodeClaims[0]!;
    // Counting the amd64 agent's 1.5 cpu on every type needed 4 vCPUs; without it the arm64 types are the cheapest.
    expect(arch(claim.instanceType)).toBe('arm64');
    expect(vcpus(claim.instanceType)).toBe(2);
    expect(r.pods.filter((p) => p.owner === 'DaemonSet/amd64-agent')).toEqual([]);
    expect(r.pods.filter((p) => p.owner?.startsWith('ReplicaSet/web-')).every((p) => p.scheduledAt !== null)).toBe(true);
  });

  it('a DaemonSet selecting an instance type counts only on that type', async () => {
    // The agent runs only on c6i.large nodes: any other type holds the pod with nothing extra (c7i-flex.large, say).
    const r = await run(
      nodeClassYaml(),
      pool([
        '{key: kubernetes.io/arch, operator: In, values: [amd64]}',
        '{key: node.kubernetes.io/instance-type, operator: In, values: [c6i.large, c6i.xlarge, m6i.large]}',
        '{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}',
      ]),
      daemonSet('c6i-large-agent', '1', { 'node.kubernetes.io/instance-type': 'c6i.large' }),
      deployment('web', 1, '1', '1Gi'),
      scenario(),
    );
    expect(r.nodeClaims).toHaveLength(1);
    // c6i.large is the cheapest but holds only 1.93 cpu: with its agent the pod does not fit; m6i.large holds it alone
    // (cheaper than c6i.xlarge, which counting the agent everywhere would have needed).
    expect(r.nodeClaims[0]!.instanceType).toBe('m6i.large');
  });

  it('DaemonSets selecting karpenter.sh/initialized=true count on new NodeClaims', async () => {
    const r = await run(
      nodeClassYaml(),
      pool([
        '{key: kubernetes.io/arch, operator: In, values: [amd64]}',
        '{key: karpenter.k8s.aws/instance-category, operator: In, values: [c]}',
        '{key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["5"]}',
        '{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}',
      ]),
      daemonSet('monitor', '1', { 'karpenter.sh/initialized': 'true' }),
      daemonSet('registered-agent', '500m', { 'karpenter.sh/registered': 'true' }),
      deployment('web', 1, '1', '1Gi'),
      scenario(),
    );
    expect(r.nodeClaims).toHaveLength(1);
    // 1 (pod) + 1 (monitor) + 0.5 (agent) cpu: a 2-vCPU node (1.93 cpu allocatable) cannot hold them.
    expect(vcpus(r.nodeClaims[0]!.instanceType)).toBeGreaterThanOrEqual(4);
    const node = r.nodes[0]!.name;
    expect(r.pods.filter((p) => p.owner?.startsWith('DaemonSet/')).map((p) => `${p.owner}@${p.node}`).sort()).toEqual([`DaemonSet/monitor@${node}`, `DaemonSet/registered-agent@${node}`]);
    expect(r.violations.placement).toBe(0);
  });
});
