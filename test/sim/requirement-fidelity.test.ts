// NodePool requirements mean what they mean in Karpenter (issue 19, items 1–3), end to end through `simulateScenario`
// (provisioner, lifecycle and disruption handlers, the observer): a requirement on a well-known label an instance
// type does not have rules the type out; a requirement on a custom label gives the NodeClaim and its Node a value
// that satisfies it; and no node is replaced as drifted by a replacement that is drifted itself.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatSummary } from '../../shared/cli/summary.js';
import { ValidationError } from '../../shared/core/errors.js';
import { instanceTypeByName } from '../../shared/core/instancetypes/catalog.js';
import type { SimulationResult } from '../../shared/sim/result.js';
import { nodeClassYaml } from '../support/provisioner-harness.js';
import { simulateDocs } from '../support/simulate-docs.js';

const NVME = 'karpenter.k8s.aws/instance-local-nvme';
const GPU_MANUFACTURER = 'karpenter.k8s.aws/instance-gpu-manufacturer';
const GPU_COUNT = 'karpenter.k8s.aws/instance-gpu-count';

/** A NodePool `general` with the given extra requirement lines (YAML flow maps), on-demand, amd64. */
const pool = (requirements: readonly string[], disruption = '{consolidateAfter: Never}') => `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
${requirements.map((r) => `        - ${r}`).join('\n')}
  disruption: ${disruption}
`;

const deployment = (name: string, replicas: number, podSpecExtra = '') => `
apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:${podSpecExtra}
      containers: [{name: app, image: nginx, resources: {requests: {cpu: 500m, memory: 512Mi}}}]
`;

const scenario = (duration = '30m') => `
apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: requirement-fidelity}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: ${duration}
  region: us-west-2
`;

const run = (...docs: string[]): Promise<SimulationResult> => simulateDocs(3, nodeClassYaml(), ...docs);

const launched = (r: SimulationResult) => r.nodeClaims.filter((c) => c.instanceType !== null && c.launchError === null);
/** The catalogue's value of a label for an instance type (the published data, not Skiff's code). */
const catalogLabel = (type: string, key: string) => instanceTypeByName(type)?.labels[key];

describe('requirements on well-known labels an instance type does not have (issue 19 item 1)', () => {
  it('launches only types with local NVMe over 300 GB for instance-local-nvme Gt 300', async () => {
    const r = await run(pool([`{key: ${NVME}, operator: Gt, values: ["300"]}`]), deployment('web', 4), scenario());
    expect(launched(r).length).toBeGreaterThan(0);
    for (const c of launched(r)) {
      expect(Number(catalogLabel(c.instanceType!, NVME)), c.instanceType!).toBeGreaterThan(300);
      expect(Number(c.labels[NVME])).toBeGreaterThan(300);
    }
    expect(r.pods.every((p) => p.node !== null)).toBe(true);
  }, 60_000);

  it('launches only NVIDIA GPU types for instance-gpu-manufacturer In [nvidia], and only GPU types for instance-gpu-count Exists', async () => {
    for (const requirement of [`{key: ${GPU_MANUFACTURER}, operator: In, values: [nvidia]}`, `{key: ${GPU_COUNT}, operator: Exists}`]) {
      const r = await run(pool([requirement]), deployment('web', 2), scenario());
      expect(launched(r).length, requirement).toBeGreaterThan(0);
      for (const c of launched(r)) {
        expect(instanceTypeByName(c.instanceType!)?.gpu, `${requirement}: ${c.instanceType}`).not.toBeNull();
        if (requirement.includes(GPU_MANUFACTURER)) expect(catalogLabel(c.instanceType!, GPU_MANUFACTURER)).toBe('nvidia');
      }
    }
  }, 120_000);

  it('keeps types without the label for NotIn and DoesNotExist on it', async () => {
    for (const requirement of [`{key: ${NVME}, operator: DoesNotExist}`, `{key: ${GPU_MANUFACTURER}, operator: NotIn, values: [nvidia]}`]) {
      const r = await run(pool([requirement, '{key: karpenter.k8s.aws/instance-family, operator: In, values: [c6a, c6id]}']), deployment('web', 2), scenario());
      expect(launched(r).length, requirement).toBeGreaterThan(0);
      // c6a has neither local NVMe nor a GPU: the cheapest type the NodePool allows.
      for (const c of launched(r)) expect(c.instanceType!.startsWith('c6a.'), `${requirement}: ${c.instanceType}`).toBe(true);
    }
  }, 120_000);

  it('gives metal types the empty instance-hypervisor label, as Karpenter does: DoesNotExist on it launches nothing, Exists launches metal', async () => {
    const metal = '{key: karpenter.k8s.aws/instance-size, operator: In, values: [metal]}';
    const absent = await run(pool([`{key: karpenter.k8s.aws/instance-hypervisor, operator: DoesNotExist}`]), deployment('web', 1), scenario('30m'));
    expect(launched(absent)).toEqual([]);
    const exists = await run(pool([metal, '{key: karpenter.k8s.aws/instance-hypervisor, operator: Exists}', '{key: karpenter.k8s.aws/instance-category, operator: In, values: [c]}']), deployment('web', 1), scenario('30m'));
    expect(launched(exists).length).toBeGreaterThan(0);
    for (const c of launched(exists)) {
      expect(c.instanceType).toMatch(/^c.*\.metal$/);
      expect(c.labels['karpenter.k8s.aws/instance-hypervisor']).toBe('');
    }
  }, 60_000);

  it('launches nothing for a NodePool that requires another region (every type is In [the run\'s region])', async () => {
    const r = await run(pool(['{key: topology.kubernetes.io/region, operator: In, values: [us-east-1]}']), deployment('web', 1), scenario('30m'));
    expect(launched(r)).toEqual([]);
    expect(r.disruptions).toEqual([]);
    expect(r.unschedulable[0]?.nodePools.general).toContain("the NodePool's own requirements match no instance type");
    expect(r.unschedulable[0]?.nodePools.general).toMatch(/topology\.kubernetes\.io\/region In \[us-east-1\]: none of the [\d,]+ instance types has such a value/);
  }, 60_000);

  it("names the NodePool requirement that rules out every type: GPUs on a NodePool of c6a, NVMe together with c6a", async () => {
    const gpu = await run(pool([`{key: ${GPU_COUNT}, operator: Exists}`, '{key: karpenter.k8s.aws/instance-family, operator: In, values: [c6a]}']), deployment('web', 1), scenario('10m'));
    expect(launched(gpu)).toEqual([]);
    expect(gpu.unschedulable[0]?.nodePools.general).toContain('match no instance type');
    expect(gpu.unschedulable[0]?.nodePools.general).not.toContain(`${GPU_COUNT} Exists: none`);
    expect(gpu.unschedulable[0]?.nodePools.general).toContain('no instance type satisfies all of them together');
    const nvme = await run(pool([`{key: ${NVME}, operator: Gt, values: ["1000000"]}`]), deployment('web', 1), scenario('10m'));
    expect(nvme.unschedulable[0]?.nodePools.general).toMatch(/karpenter\.k8s\.aws\/instance-local-nvme Gt \[1000000\]: none of the [\d,]+ instance types has such a value \([\d,]+ have a karpenter\.k8s\.aws\/instance-local-nvme at all\)/);
  }, 60_000);

  it('names the missing label when a pod asks for local NVMe a NodePool of NVMe-less types cannot give', async () => {
    const affinity = `
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms: [{matchExpressions: [{key: ${NVME}, operator: Gt, values: ["300"]}]}]`;
    const r = await run(pool(['{key: karpenter.k8s.aws/instance-family, operator: In, values: [c6a]}']), deployment('disk', 1, affinity), scenario('10m'));
    expect(launched(r)).toEqual([]);
    expect(r.unschedulable).toHaveLength(1);
    const why = r.unschedulable[0]!.nodePools.general!;
    expect(why).toContain(`${NVME} Gt [300]`);
    expect(why).toMatch(/none of its \d+ instance types has the label karpenter\.k8s\.aws\/instance-local-nvme/);
  }, 60_000);

  it('says a real instance type the NodePool cannot launch is one, instead of suggesting a look-alike (a1.large is no typo for m1.large)', async () => {
    const select = (type: string) => `
      nodeSelector: {node.kubernetes.io/instance-type: ${type}}`;
    const r = await run(pool([]), deployment('arm', 1, select('a1.large')), deployment('qualcomm', 1, select('dl2q.24xlarge')), scenario('10m'));
    expect(launched(r)).toEqual([]);
    const why = (prefix: string) => r.unschedulable.find((u) => u.pod.startsWith(`default/${prefix}-`))!;
    expect(why('arm').nodePools.general).toContain('a1.large: the AMI family of EC2NodeClass default cannot boot it');
    expect(why('qualcomm').nodePools.general).toContain('dl2q.24xlarge: no on-demand price is known for it');
    for (const u of r.unschedulable) expect(`${u.reason} ${Object.values(u.nodePools).join(' ')}`).not.toContain('did you mean');
  }, 60_000);
});

describe('requirements on custom labels (issue 19 item 2)', () => {
  it('gives NodeClaims and Nodes of a NodePool with team Exists a team label and never replaces them as drifted (2 hours)', async () => {
    const affinity = `
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms: [{matchExpressions: [{key: team, operator: Exists}]}]`;
    const r = await run(
      pool(['{key: team, operator: Exists}'], '{consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 5m}'),
      deployment('web', 3, affinity),
      scenario('2h'),
    );
    expect(launched(r).length).toBeGreaterThan(0);
    for (const c of launched(r)) expect(c.labels.team).toMatch(/^\d+$/);
    const nodes = r.nodes.filter((n) => n.nodeClaim !== null);
    expect(nodes.length).toBeGreaterThan(0);
    for (const n of nodes) expect(n.labels.team).toBe(r.nodeClaims.find((c) => c.name === n.nodeClaim)!.labels.team);
    expect(r.disruptions.filter((d) => d.reason === 'Drifted')).toEqual([]);
    // The pods select `team Exists`: kube-scheduler placed them, so their Nodes carry the label.
    const live = r.pods.filter((p) => p.deletedAt === null);
    expect(live).toHaveLength(3);
    expect(live.every((p) => p.node !== null)).toBe(true);
    expect(r.violations.placement).toBe(0);
  }, 120_000);

  it('generates a value each operator allows: Gt, Lt, NotIn, Gte/Lte and In with several values', async () => {
    const affinity = `
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms: [{matchExpressions: [{key: example.com/tier, operator: Gt, values: ["5"]}, {key: example.com/slot, operator: Lt, values: ["3"]}]}]`;
    const r = await run(
      pool([
        '{key: example.com/tier, operator: Gt, values: ["5"]}',
        '{key: example.com/slot, operator: Lt, values: ["3"]}',
        '{key: example.com/rack, operator: NotIn, values: ["0", "1"]}',
        '{key: example.com/shelf, operator: Gte, values: ["10"]}',
        '{key: example.com/shelf, operator: Lte, values: ["12"]}',
        '{key: example.com/team, operator: In, values: [payments, analytics]}',
      ], '{consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 5m}'),
      deployment('web', 2, affinity),
      scenario('1h'),
    );
    expect(launched(r).length).toBeGreaterThan(0);
    for (const c of launched(r)) {
      expect(Number(c.labels['example.com/tier'])).toBeGreaterThan(5);
      expect(Number(c.labels['example.com/slot'])).toBeLessThan(3);
      expect(['0', '1']).not.toContain(c.labels['example.com/rack']);
      expect(c.labels['example.com/rack']).toMatch(/^\d+$/);
      expect(Number(c.labels['example.com/shelf'])).toBeGreaterThanOrEqual(10);
      expect(Number(c.labels['example.com/shelf'])).toBeLessThanOrEqual(12);
      expect(['payments', 'analytics']).toContain(c.labels['example.com/team']);
    }
    expect(r.disruptions.filter((d) => d.reason === 'Drifted')).toEqual([]);
    expect(r.pods.filter((p) => p.deletedAt === null).every((p) => p.node !== null)).toBe(true);
  }, 120_000);

  it('launches nothing for a custom-label requirement no value satisfies (a Gt 10 with a Lt 5, f Lt 0), and says so', async () => {
    for (const requirements of [['{key: example.com/a, operator: Gt, values: ["10"]}', '{key: example.com/a, operator: Lt, values: ["5"]}'], ['{key: example.com/f, operator: Lt, values: ["0"]}']]) {
      const r = await run(pool(requirements), deployment('web', 1), scenario('40m'));
      expect(launched(r), requirements.join()).toEqual([]);
      expect(r.disruptions).toEqual([]);
      expect(r.unschedulable[0]?.nodePools.general).toContain('no value of the label satisfies it, so no node can carry it');
    }
  }, 120_000);
});

describe('no drift loops (issue 19 item 3)', () => {
  // `topology.k8s.aws/zone-id` is well-known (so no value is generated for it) but no instance type or offering of
  // Skiff's sets it: every node of this NodePool lacks it and is drifted, and so would be every replacement.
  const ZONE_ID_POOL = pool(['{key: topology.k8s.aws/zone-id, operator: Exists}'], '{consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 5m}');

  it('never launches a replacement that would itself be drifted, and says why the drifted node stays', async () => {
    const r = await run(ZONE_ID_POOL, deployment('web', 3), scenario('1h'));
    expect(launched(r).length).toBeGreaterThan(0);
    expect(r.violations.churn).toBe(0);
    expect(r.disruptions.filter((d) => d.reason === 'Drifted' && d.decision === 'replace')).toEqual([]);
    const blocked = r.events.filter((e) => e.reason === 'DisruptionBlocked' && e.message.includes('would be drifted too'));
    expect(blocked.length).toBeGreaterThan(0);
    expect(blocked[0]!.message).toContain('topology.k8s.aws/zone-id');
    // The summary counts churn like every other kind: "Violations: none" cannot hide a loop.
    expect(formatSummary(r)).toContain('Violations: none');
    expect(formatSummary({ ...r, violations: { ...r.violations, churn: 14 } })).toContain('Violations: churn=14 (replace loops)');
  }, 120_000);
});

describe("an EC2NodeClass's subnets decide the zones (Karpenter: offering zones ∩ subnet zones)", () => {
  // What `kubectl get ec2nodeclasses -o yaml` shows once Karpenter resolved subnetSelectorTerms: subnets in 2b only.
  const subnetStatus = `
status:
  subnets:
    - {id: subnet-0b, zone: us-west-2b, zoneID: usw2-az2}`;
  const spread = `
      topologySpreadConstraints:
        - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: web}}}`;

  it('launches only in the zones of the subnets the status lists, and in every zone of the region without a status', async () => {
    const zones = (r: SimulationResult) => new Set(launched(r).map((c) => c.zone));
    const attempted = (r: SimulationResult) => new Set(r.launchAttempts.flatMap((a) => a.zones));
    const restricted = await simulateDocs(3, nodeClassYaml(subnetStatus), pool([]), deployment('web', 12, spread), scenario());
    expect(launched(restricted).length).toBeGreaterThan(0);
    expect(zones(restricted)).toEqual(new Set(['us-west-2b']));
    expect(attempted(restricted)).toEqual(new Set(['us-west-2b']));
    expect(restricted.unschedulable).toEqual([]);
    // The control: the same cluster with no status spreads over more than one zone.
    const open = await run(pool([]), deployment('web', 12, spread), scenario());
    expect(zones(open).size).toBeGreaterThan(1);
  }, 120_000);

  it('offers in the new zones once the EC2NodeClass is applied again with other subnets', async () => {
    const events = `
apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: subnets-change}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: 40m
  region: us-west-2
  events:
    - {at: 10m, apply: {apiVersion: karpenter.k8s.aws/v1, kind: EC2NodeClass, metadata: {name: default}, spec: {amiSelectorTerms: [{alias: al2023@latest}], subnetSelectorTerms: [{tags: {karpenter.sh/discovery: my-cluster}}], securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: my-cluster}}], role: KarpenterNodeRole-my-cluster}, status: {subnets: [{id: subnet-0c, zone: us-west-2c}]}}}
    - {at: 15m, scale: {kind: Deployment, name: web, replicas: 12}}
`;
    const r = await simulateDocs(3, nodeClassYaml(subnetStatus), pool([]), deployment('web', 2), events);
    const at = (c: SimulationResult['nodeClaims'][number]) => Date.parse(c.createdAt) - Date.parse('2026-03-02T08:00:00Z');
    const before = launched(r).filter((c) => at(c) < 10 * 60_000);
    const after = launched(r).filter((c) => at(c) >= 15 * 60_000);
    expect(before.length).toBeGreaterThan(0);
    expect(after.length).toBeGreaterThan(0);
    expect(new Set(before.map((c) => c.zone))).toEqual(new Set(['us-west-2b']));
    expect(new Set(after.map((c) => c.zone))).toEqual(new Set(['us-west-2c']));
  }, 120_000);

  it("refuses a subnet zone of another region, naming the EC2NodeClass's field", async () => {
    const other = `
status:
  subnets:
    - {id: subnet-0b, zone: eu-west-1a}`;
    const error = await simulateDocs(3, nodeClassYaml(other), pool([]), deployment('web', 1), scenario()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues).toContainEqual(
      expect.objectContaining({ path: 'status.subnets[0].zone', message: expect.stringContaining('zone "eu-west-1a" is not in region us-west-2') }),
    );
  });
});
