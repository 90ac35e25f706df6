/**
 * Scenarios of issue 19 items 4 and 5, run through the simulation as `skiff simulate` runs them and read through the
 * Result: what an EC2NodeClass's AMI family changes about its nodes.
 *
 * - Item 4: the instance types a family can boot (aws `pkg/providers/instancetype/compatibility/compatibility.go`:
 *   no a1 with AL2023; `types.go getOS` and the x86_64 Windows AMIs: no arm64 with Windows), the OS labels of its
 *   nodes (`kubernetes.io/os`, `node.kubernetes.io/windows-build`), Windows max pods and overhead, and an explanation
 *   that names the OS when it is why a pod waits. Karpenter's own `examples/v1/windows-*.yaml` NodePools and
 *   EC2NodeClasses are reproduced below (cluster name filled in).
 * - Item 5: the ephemeral-storage device is the family's (aws `types.go ephemeralStorage`, `amifamily/*.go
 *   EphemeralBlockDevice`): Bottlerocket's `/dev/xvdb` data volume, the last mapping for Custom, the instance-store
 *   NVMe total with `instanceStorePolicy: RAID0`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHandler as createLifecycleHandler } from '../../functions/lifecycle/handler.js';
import { createHandler } from '../../functions/provisioner/handler.js';
import { DynamoDbNodeClaimStore } from '../../shared/adapters/aws/dynamodb-nodeclaim-store.js';
import { DynamoDbProvisioningPassStore } from '../../shared/adapters/aws/provisioning-pass-store.js';
import { DynamoDbUnavailableOfferingsStore } from '../../shared/adapters/aws/unavailable-offerings-store.js';
import { explainResult } from '../../shared/cli/explain.js';
import { startDynalite } from '../../shared/cli/local-dynamodb.js';
import { reconcileLifecycle } from '../../shared/controllers/lifecycle.js';
import { provision } from '../../shared/controllers/provision.js';
import { instanceTypeByName, loadCatalog } from '../../shared/core/instancetypes/catalog.js';
import { silentLog } from '../../shared/lambda/log.js';
import { SIMULATED_CLUSTER_NAME, runSimulation } from '../../shared/sim/engine.js';
import type { SimulationResult } from '../../shared/sim/result.js';
import { ResultSchema } from '../../shared/sim/result-schema.js';
import { loadScenario } from '../../shared/sim/scenario-loader.js';

/** Runs a scenario as `skiff simulate` does and checks the Result against its schema. */
async function run(...docs: string[]): Promise<SimulationResult> {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-ami-family-'));
  writeFileSync(join(dir, 'scenario.yaml'), docs.map((d) => d.trim()).join('\n---\n'));
  const scenario = await loadScenario(dir, { now: Date.parse('2026-03-02T08:00:00Z') });
  const db = await startDynalite();
  try {
    const props = { client: db.client, tableName: db.tableName, cluster: SIMULATED_CLUSTER_NAME };
    const result = await runSimulation(scenario, 1, {
      store: new DynamoDbNodeClaimStore(props),
      unavailableOfferings: new DynamoDbUnavailableOfferingsStore(props),
      passes: new DynamoDbProvisioningPassStore(props),
      catalog: loadCatalog(),
      createProvisionerHandler: (deps) => createHandler({ provision: (trigger) => provision(deps, trigger), log: silentLog }),
      createLifecycleHandler: (deps) => createLifecycleHandler({ reconcile: () => reconcileLifecycle(deps), log: silentLog }),
    });
    ResultSchema.parse(result);
    return result;
  } finally {
    await db.close();
  }
}

const SCENARIO = `
apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: ami-family}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: 30m
  region: us-west-2
`;

/** An EC2NodeClass; `spec` lines are appended (indent them by two spaces). */
const nodeClass = (name: string, spec: string) => `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: ${name}}
spec:
  role: KarpenterNodeRole-my-cluster
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: my-cluster}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: my-cluster}}]
${spec}`;

/** A NodePool on EC2NodeClass `nodeClassName` with `requirements` (YAML flow items, one per line, indented 8). */
const nodePool = (name: string, nodeClassName: string, requirements: string, extra = '') => `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: ${name}}
spec:${extra}
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: ${nodeClassName}}
      requirements:
${requirements}`;

/** The requirements of Karpenter's `examples/v1` NodePools (windows-*, bottlerocket, general-purpose), with `os`. */
const exampleRequirements = (os: 'linux' | 'windows') => `        - {key: kubernetes.io/os, operator: In, values: [${os}]}
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r]}
        - {key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["2"]}`;

/** Karpenter's `examples/v1/windows-<year>.yaml`: a NodePool and an EC2NodeClass named `windows<year>`. */
const windowsExample = (year: string) =>
  [
    nodePool(`windows${year}`, `windows${year}`, exampleRequirements('windows')),
    nodeClass(
      `windows${year}`,
      `  amiSelectorTerms: [{alias: windows${year}@latest}]
  metadataOptions: {httpProtocolIPv6: disabled, httpTokens: required}`,
    ),
  ].join('\n---\n');

/**
 * Karpenter's `examples/v1/windows-custom-userdata.yaml`. The file's `nodeClassRef.group` is `karpenter.k8s.aws/v1`,
 * which Karpenter's own CRD rejects (pattern `^[^/]*$`), so the group is written as the CRD requires here.
 */
const WINDOWS_CUSTOM_USERDATA = [
  nodePool('windows2022', 'windows2022', exampleRequirements('windows')),
  nodeClass(
    'windows2022',
    `  amiFamily: Windows2022
  amiSelectorTerms: [{alias: windows2022@latest}]
  metadataOptions: {httpProtocolIPv6: disabled, httpTokens: required}
  userData: |
    New-Item -Path 'C:\\temp\\' -ItemType Directory
    New-Item -Path 'C:\\temp\\sample.txt' -ItemType File`,
  ),
].join('\n---\n');

/** Karpenter's `examples/v1/general-purpose.yaml` (AL2023, Linux only). */
const GENERAL_PURPOSE = [nodePool('general-purpose', 'default', exampleRequirements('linux')), nodeClass('default', '  amiSelectorTerms: [{alias: al2023@latest}]')].join('\n---\n');

/** A Deployment of `replicas` pods with `requests` and, when given, a `kubernetes.io/os` nodeSelector. */
const deployment = (name: string, replicas: number, requests: string, os?: string) => `
apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:${os ? `\n      nodeSelector: {kubernetes.io/os: ${os}}` : ''}
      containers: [{name: app, image: app, resources: {requests: ${requests}}}]
`;

/** A Windows workload as in the EKS Windows guide: IIS pods selecting `kubernetes.io/os: windows`. */
const IIS = deployment('iis', 3, '{cpu: "1", memory: 2Gi}', 'windows');

const podsOf = (r: SimulationResult, app: string) => r.pods.filter((p) => p.owner?.startsWith(`ReplicaSet/${app}-`));
const nodeOf = (r: SimulationResult, name: string | null) => r.nodes.find((n) => n.name === name);
const launched = (r: SimulationResult) => r.nodeClaims.filter((c) => c.instanceType !== null);
const catalogRow = (name: string | null) => (name === null ? undefined : instanceTypeByName(name));

describe('AMI compatibility and Windows (issue 19 item 4)', () => {
  const WINDOWS_BUILDS = { '2019': '10.0.17763', '2022': '10.0.20348', '2025': '10.0.26100' } as const;

  for (const [year, build] of Object.entries(WINDOWS_BUILDS)) {
    it(`places Windows pods on windows${year} nodes of Karpenter's examples/v1/windows-${year}.yaml, labelled os=windows and windows-build=${build}`, async () => {
      const r = await run(windowsExample(year), IIS, SCENARIO);
      const pods = podsOf(r, 'iis');
      expect(pods).toHaveLength(3);
      expect(r.unschedulable).toEqual([]);
      for (const pod of pods) {
        const node = nodeOf(r, pod.node);
        expect(node, `${pod.name} is placed`).toBeDefined();
        expect(node?.labels['kubernetes.io/os']).toBe('windows');
        expect(node?.labels['node.kubernetes.io/windows-build']).toBe(build);
        expect(node?.labels['karpenter.sh/nodepool']).toBe(`windows${year}`);
      }
      expect(launched(r).length).toBeGreaterThan(0);
      for (const claim of launched(r)) {
        expect(claim.labels['kubernetes.io/os']).toBe('windows');
        expect(claim.labels['node.kubernetes.io/windows-build']).toBe(build);
        const row = catalogRow(claim.instanceType);
        // What the example NodePool allows: amd64 c/m/r of generation > 2, on-demand.
        expect(row?.arch).toBe('amd64');
        expect(['c', 'm', 'r']).toContain(row?.labels['karpenter.k8s.aws/instance-category']);
        expect(Number(row?.labels['karpenter.k8s.aws/instance-generation'])).toBeGreaterThan(2);
        expect(claim.capacityType).toBe('on-demand');
      }
      expect(r.violations).toEqual(Object.fromEntries(Object.keys(r.violations).map((k) => [k, 0])));
    });
  }

  it("places Windows pods with Karpenter's examples/v1/windows-custom-userdata.yaml (amiFamily Windows2022 and the alias)", async () => {
    const r = await run(WINDOWS_CUSTOM_USERDATA, IIS, SCENARIO);
    const pods = podsOf(r, 'iis');
    expect(pods.map((p) => nodeOf(r, p.node)?.labels['kubernetes.io/os'])).toEqual(['windows', 'windows', 'windows']);
    expect(pods.map((p) => nodeOf(r, p.node)?.labels['node.kubernetes.io/windows-build'])).toEqual(['10.0.20348', '10.0.20348', '10.0.20348']);
    expect(r.unschedulable).toEqual([]);
  });

  it('gives a Windows node 110 pods and kube-reserved for 110 pods, not the ENI formula: 60 small pods fit one m5.large (29 pods on AL2023)', async () => {
    const pinned = (os: 'linux' | 'windows') => `        - {key: kubernetes.io/os, operator: In, values: [${os}]}
        - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}`;
    const windows = [nodePool('win', 'win', pinned('windows')), nodeClass('win', '  amiSelectorTerms: [{alias: windows2022@latest}]')].join('\n---\n');
    const linux = [nodePool('lin', 'lin', pinned('linux')), nodeClass('lin', '  amiSelectorTerms: [{alias: al2023@latest}]')].join('\n---\n');
    const small = (os: string) => deployment(`small-${os}`, 60, '{cpu: 10m, memory: 16Mi}', os);
    const r = await run(windows, linux, small('windows'), small('linux'), SCENARIO);
    const byPool = (pool: string) => launched(r).filter((c) => c.nodePool === pool);
    expect(byPool('win').map((c) => c.instanceType)).toEqual(['m5.large']);
    // aws types.go pods: 110 without the ENI formula; kubeReservedResources sizes memory for those 110 pods
    // (11 × 110 + 255 = 1465 Mi); memory capacity 8192 − ceil(8192 × 0.075) = 7577 Mi; eviction 100 Mi.
    expect(byPool('win')[0]?.allocatable).toMatchObject({ pods: '110', memory: `${7577 - 1465 - 100}Mi`, 'ephemeral-storage': `${51200 - 1024 - 5120}Mi` });
    // AL2023: 3 ENIs × 9 + 2 = 29 pods per node, so 60 pods need 3 nodes.
    expect(byPool('lin').map((c) => c.instanceType)).toEqual(['m5.large', 'm5.large', 'm5.large']);
    expect(byPool('lin')[0]?.allocatable).toMatchObject({ pods: '29' });
    expect(podsOf(r, 'small-windows').every((p) => nodeOf(r, p.node)?.labels['kubernetes.io/os'] === 'windows')).toBe(true);
    expect(podsOf(r, 'small-linux').every((p) => nodeOf(r, p.node)?.labels['kubernetes.io/os'] === 'linux')).toBe(true);
    expect(r.unschedulable).toEqual([]);
  });

  it('never launches a1 with AL2023 (Karpenter since v1.11), but does with AL2; the same NodePool gets the next Graviton instead', async () => {
    const armFamilies = `        - {key: kubernetes.io/arch, operator: In, values: [arm64]}
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [a1, m6g]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}`;
    const web = deployment('web', 2, '{cpu: 500m, memory: 512Mi}');
    const al2023 = await run(nodePool('arm', 'arm', armFamilies), nodeClass('arm', '  amiSelectorTerms: [{alias: al2023@latest}]'), web, SCENARIO);
    const al2 = await run(nodePool('arm', 'arm', armFamilies), nodeClass('arm', '  amiSelectorTerms: [{alias: al2@latest}]'), web, SCENARIO);
    const types = (r: SimulationResult) => launched(r).map((c) => c.instanceType);
    expect(types(al2023).length).toBeGreaterThan(0);
    expect(types(al2023).every((t) => t?.startsWith('m6g.'))).toBe(true);
    // a1 is the cheaper family, so AL2 (which boots it) launches it: the rule is the family's, not a price effect.
    expect(types(al2).length).toBeGreaterThan(0);
    expect(types(al2).every((t) => t?.startsWith('a1.'))).toBe(true);
    for (const r of [al2023, al2]) {
      expect(podsOf(r, 'web').every((p) => p.node !== null)).toBe(true);
      expect(r.nodes.every((n) => n.labels['kubernetes.io/os'] === 'linux' && n.labels['node.kubernetes.io/windows-build'] === undefined)).toBe(true);
    }
  });

  it('never launches arm64 for Windows: a Windows NodePool without an arch requirement gets amd64 nodes', async () => {
    const anyArch = `        - {key: kubernetes.io/os, operator: In, values: [windows]}
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [m6g, m7g, m5, m6i]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}`;
    const r = await run(nodePool('win', 'win', anyArch), nodeClass('win', '  amiSelectorTerms: [{alias: windows2019@latest}]'), IIS, SCENARIO);
    expect(launched(r).length).toBeGreaterThan(0);
    for (const claim of launched(r)) expect(catalogRow(claim.instanceType)?.arch).toBe('amd64');
    expect(podsOf(r, 'iis').every((p) => nodeOf(r, p.node)?.labels['kubernetes.io/arch'] === 'amd64')).toBe(true);
  });

  it('explains a Windows pod next to a Linux-only NodePool by the OS its EC2NodeClass boots, and places the Linux pods', async () => {
    const r = await run(GENERAL_PURPOSE, IIS, deployment('tool', 1, '{cpu: 100m}', 'linux'), SCENARIO);
    expect(podsOf(r, 'tool').map((p) => nodeOf(r, p.node)?.labels['kubernetes.io/os'])).toEqual(['linux']);
    expect(podsOf(r, 'iis').every((p) => p.node === null)).toBe(true);
    expect(r.unschedulable).toHaveLength(3);
    for (const u of r.unschedulable) {
      expect(u.nodePools['general-purpose']).toMatch(/^the pod requires kubernetes\.io\/os In \[windows\], but EC2NodeClass default of the NodePool boots linux nodes/);
      expect(u.nodePools['general-purpose']).toContain('windows2022@latest');
    }
    // `skiff explain` reads these reasons from the Result.
    const explained = explainResult(r, { namespace: 'default', name: podsOf(r, 'iis')[0]!.name });
    expect(JSON.stringify(explained)).toContain('boots linux nodes');
  });

  it('explains a Linux pod next to a Windows-only NodePool by the OS, and a NodePool whose os requirement its EC2NodeClass cannot meet', async () => {
    const mismatched = [nodePool('linux-on-windows', 'win2022', exampleRequirements('linux')), nodeClass('win2022', '  amiSelectorTerms: [{alias: windows2022@latest}]')].join('\n---\n');
    const r = await run(windowsExample('2022'), mismatched, deployment('tool', 1, '{cpu: 100m}', 'linux'), SCENARIO);
    expect(launched(r)).toEqual([]);
    expect(r.unschedulable).toHaveLength(1);
    const reasons = r.unschedulable[0]!.nodePools;
    expect(reasons.windows2022).toMatch(/^the pod requires kubernetes\.io\/os In \[linux\], but EC2NodeClass windows2022 of the NodePool boots windows nodes .*a Linux AMI family/);
    expect(reasons['linux-on-windows']).toMatch(/^the NodePool requires kubernetes\.io\/os In \[linux\], but its EC2NodeClass win2022 boots windows nodes/);
  });
});

describe('ephemeral storage by AMI family (issue 19 item 5)', () => {
  /** A pod asking for `size` of ephemeral storage. */
  const scratch = (size: string) => deployment('scratch', 1, `{cpu: 100m, ephemeral-storage: ${size}}`);
  const ephemeral = (r: SimulationResult, pool: string) => launched(r).filter((c) => c.nodePool === pool).map((c) => c.allocatable['ephemeral-storage']);
  const poolOfScratch = (r: SimulationResult) => nodeOf(r, podsOf(r, 'scratch')[0]?.node ?? null)?.labels['karpenter.sh/nodepool'];

  it('places a 50Gi ephemeral-storage pod on the Bottlerocket pool with a 100Gi /dev/xvdb, not on the preferred AL2023 pool (20Gi root)', async () => {
    const bottlerocket = nodeClass(
      'bottlerocket',
      `  amiSelectorTerms: [{alias: bottlerocket@latest}]
  blockDeviceMappings:
    - {deviceName: /dev/xvda, ebs: {volumeType: gp3, volumeSize: 4Gi}}
    - {deviceName: /dev/xvdb, ebs: {volumeType: gp3, volumeSize: 100Gi}}`,
    );
    const r = await run(
      nodePool('default', 'default', exampleRequirements('linux'), '\n  weight: 50'),
      nodeClass('default', '  amiSelectorTerms: [{alias: al2023@latest}]'),
      nodePool('bottlerocket', 'bottlerocket', exampleRequirements('linux')),
      bottlerocket,
      scratch('50Gi'),
      // A pod pinned to the AL2023 pool, so its node (and its allocatable) is in the Result too.
      deployment('web', 1, '{cpu: 100m}').replace('    spec:\n', '    spec:\n      nodeSelector: {karpenter.sh/nodepool: default}\n'),
      SCENARIO,
    );
    // The AL2023 pool has the higher weight, so it is tried first: its 20Gi root cannot hold 50Gi.
    expect(poolOfScratch(r)).toBe('bottlerocket');
    expect(nodeOf(r, podsOf(r, 'web')[0]?.node ?? null)?.labels['karpenter.sh/nodepool']).toBe('default');
    // 100Gi − 1Gi kube-reserved − 10 % nodefs eviction; AL2023: 20Gi − 1Gi − 2Gi.
    expect(ephemeral(r, 'bottlerocket')).toEqual([`${102400 - 1024 - 10240}Mi`]);
    expect(ephemeral(r, 'default')).toEqual([`${20480 - 1024 - 2048}Mi`]);
    expect(r.unschedulable).toEqual([]);
  });

  it("sizes Karpenter's examples/v1/bottlerocket.yaml nodes by the 20Gi /dev/xvdb data volume, not the 4Gi OS volume", async () => {
    const r = await run(
      nodePool('default', 'bottlerocket', exampleRequirements('linux')),
      nodeClass(
        'bottlerocket',
        `  amiSelectorTerms: [{alias: bottlerocket@latest}]
  blockDeviceMappings:
    - {deviceName: /dev/xvda, ebs: {volumeType: gp3, volumeSize: 4Gi, deleteOnTermination: true}}
    - {deviceName: /dev/xvdb, ebs: {volumeType: gp3, volumeSize: 20Gi, deleteOnTermination: true}}`,
      ),
      scratch('10Gi'),
      SCENARIO,
    );
    expect(podsOf(r, 'scratch')[0]?.node).not.toBeNull();
    expect(ephemeral(r, 'default')).toEqual([`${20480 - 1024 - 2048}Mi`]);
  });

  it('uses the last block device mapping for a Custom AMI family', async () => {
    const r = await run(
      nodePool('custom', 'custom', exampleRequirements('linux')),
      nodeClass(
        'custom',
        `  amiFamily: Custom
  amiSelectorTerms: [{id: ami-0123456789abcdef0}]
  blockDeviceMappings:
    - {deviceName: /dev/xvda, ebs: {volumeSize: 20Gi}}
    - {deviceName: /dev/xvdb, ebs: {volumeSize: 200Gi}}`,
      ),
      scratch('100Gi'),
      SCENARIO,
    );
    expect(poolOfScratch(r)).toBe('custom');
    expect(ephemeral(r, 'custom')).toEqual([`${204800 - 1024 - 20480}Mi`]);
  });

  it("puts ephemeral storage on the instance-store NVMe disks with instanceStorePolicy RAID0 (examples/v1/instance-store-ephemeral-storage.yaml)", async () => {
    const requirements = `${exampleRequirements('linux')}
        - {key: karpenter.k8s.aws/instance-local-nvme, operator: Gt, values: ["300"]}`;
    const r = await run(
      nodePool('default', 'instance-store-ephemeral-storage', requirements),
      nodeClass(
        'instance-store-ephemeral-storage',
        `  instanceStorePolicy: RAID0
  amiSelectorTerms: [{alias: al2023@latest}]`,
      ),
      scratch('500Gi'),
      SCENARIO,
    );
    const claims = launched(r);
    expect(claims).toHaveLength(1);
    const nvmeGB = Number(catalogRow(claims[0]!.instanceType)?.labels['karpenter.k8s.aws/instance-local-nvme']);
    expect(nvmeGB).toBeGreaterThan(500);
    // capacity = the NVMe total in GB (decimal); allocatable = capacity − 1Gi kube-reserved − 10 % (whole bytes).
    const capacityBytes = nvmeGB * 1e9;
    const allocatableMiB = Math.floor((capacityBytes - 2 ** 30 - Math.ceil(capacityBytes / 10)) / 2 ** 20);
    expect(claims[0]!.allocatable['ephemeral-storage']).toBe(`${allocatableMiB}Mi`);
    expect(podsOf(r, 'scratch')[0]?.node).not.toBeNull();
  });
});
