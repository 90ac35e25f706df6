import { afterEach, describe, expect, it } from 'vitest';
import type { NodeSelectorRequirement } from '../../../shared/core/api/kubernetes.js';
import { buildInstanceType } from '../../../shared/core/instancetypes/offering.js';
import { REJECTION_KINDS, diagnose, diagnosePod, splitHints, summarise, whyNot, withHints, type RejectionKind, type TopologyCheck } from '../../../shared/core/provisioning/diagnosis.js';
import type { SchedulingPod } from '../../../shared/core/provisioning/pod.js';
import { buildNodePoolTemplate } from '../../../shared/core/provisioning/nodepool-template.js';
import type { NodePoolTemplate } from '../../../shared/core/provisioning/types.js';
import type { ResourceList } from '../../../shared/core/resources/resource-list.js';
import { catalogue, instanceType, pod, template } from '../../support/builders.js';
import { ProvisionerHarness, podYaml } from '../../support/provisioner-harness.js';
import { Requirements } from '../../../shared/core/scheduling/requirements.js';

const CATEGORY = 'karpenter.k8s.aws/instance-category';

/** The seed article's general NodePool over the small test catalogue: c/m/r, labelled workload-type=general. */
const general = (opts: Parameters<typeof template>[2] = {}) =>
  template('general', catalogue(), { requirements: [{ key: CATEGORY, operator: 'In', values: ['c', 'm', 'r'] }], labels: { 'workload-type': 'general' }, ...opts });
const batch = () => template('batch', catalogue(), { labels: { 'workload-type': 'batch' }, taints: [{ key: 'workload-type', value: 'batch', effect: 'NoSchedule' }] });
const gpuPool = () => template('gpu', catalogue(), { requirements: [{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['g4dn'] }], labels: { 'workload-type': 'gpu' }, taints: [{ key: 'nvidia.com/gpu', effect: 'NoSchedule' }] });
const onGeneral = { nodeSelector: { 'workload-type': 'general' } };

/** An m5.large offered only as spot in us-west-2a and on-demand in us-west-2b. */
const splitOfferings = () =>
  buildInstanceType({
    name: 'm5.large',
    labels: { 'node.kubernetes.io/instance-type': 'm5.large', 'kubernetes.io/arch': 'amd64', [CATEGORY]: 'm' },
    capacity: { cpu: 2000, memory: 8192, pods: 29 },
    allocatable: { cpu: 1930, memory: 6903, pods: 29 },
    offerings: [
      { zone: 'us-west-2a', capacityType: 'spot', price: 0.04, available: true },
      { zone: 'us-west-2b', capacityType: 'on-demand', price: 0.096, available: true },
    ],
  });

/** A NodePool whose EC2NodeClass boots Linux (the catalogue's types are labelled kubernetes.io/os=linux). */
const linuxPool = () => ({ ...template('general', catalogue()), nodeClassOs: ['linux'] });
/** A NodePool whose EC2NodeClass boots Windows: the test catalogue relabelled as a Windows family labels it. */
const windowsPool = (requirements: NodeSelectorRequirement[] = []) => ({
  ...template(
    'windows',
    catalogue().map((t) => instanceType(t.name, { cpu: t.allocatable.cpu ?? 0, memory: t.allocatable.memory ?? 0, price: 0.1, labels: { 'kubernetes.io/os': 'windows' } })),
    { requirements },
  ),
  nodeClassOs: ['windows'],
});

interface Case {
  readonly name: string;
  readonly kind: RejectionKind;
  readonly pod: SchedulingPod;
  readonly template: NodePoolTemplate;
  readonly nodePools?: readonly NodePoolTemplate[];
  readonly remaining?: ResourceList;
  readonly topology?: TopologyCheck;
  /** Fragments the NodePool's reason must contain: the part a user acts on. */
  readonly says: readonly (string | RegExp)[];
}

const cases: readonly Case[] = [
  {
    name: 'names the taint not tolerated and the toleration to add',
    kind: 'taint',
    pod: pod('a', { nodeSelector: { 'workload-type': 'batch' } }),
    template: batch(),
    says: ["the NodePool's taint workload-type=batch:NoSchedule", 'add the toleration {key: workload-type, operator: Equal, value: batch, effect: NoSchedule}'],
  },
  {
    name: 'shows an Exists toleration for a taint without a value, and the near-miss toleration key',
    kind: 'taint',
    pod: pod('a', { gpu: 1, tolerations: [{ key: 'nvidia.com/gpus', operator: 'Exists', effect: 'NoSchedule' }] }),
    template: gpuPool(),
    says: ['nvidia.com/gpu:NoSchedule', '{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}', 'the pod tolerates nvidia.com/gpus: did you mean nvidia.com/gpu?'],
  },
  {
    name: 'names a required label no NodePool defines',
    kind: 'undefinedLabel',
    pod: pod('report', { nodeSelector: { 'node-type': 'high-memory' } }),
    template: general(),
    nodePools: [general(), batch()],
    says: ['the pod requires node-type In [high-memory]', 'neither requires nor sets the label node-type (no NodePool does)', 'add node-type: high-memory to its spec.template.metadata.labels'],
  },
  {
    name: 'says which other NodePool defines a label this one lacks',
    kind: 'undefinedLabel',
    pod: pod('a', { nodeSelector: { team: 'ml' } }),
    template: general(),
    nodePools: [general(), template('ml', catalogue(), { labels: { team: 'ml' } })],
    says: ['neither requires nor sets the label team (NodePool ml does)'],
  },
  {
    name: 'suggests the closest key for a near-miss label key',
    kind: 'undefinedLabel',
    pod: pod('a', { nodeSelector: { 'workload-typ': 'general' } }),
    template: general(),
    says: ['the label workload-typ', 'did you mean workload-type?'],
  },
  {
    name: 'never advises defining a label in a restricted domain; points at the pod instead, with the near miss',
    kind: 'undefinedLabel',
    pod: pod('a', { nodeSelector: { 'topology.kubernetes.io/zon': 'us-west-2a' } }),
    template: general(),
    says: ['no NodePool may define it', "change the pod's selector", 'did you mean topology.kubernetes.io/zone?'],
  },
  {
    name: 'says when the pod contradicts itself instead of blaming the NodePool',
    kind: 'requirements',
    pod: pod('a', {
      nodeSelector: { 'kubernetes.io/arch': 'arm64' },
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }] }] } } },
    }),
    template: general(),
    says: ["the pod's own requirements on kubernetes.io/arch contradict each other"],
  },
  {
    name: 'shows both sides when the NodePool does not allow the value',
    kind: 'labelValue',
    pod: pod('a', { nodeSelector: { [CATEGORY]: 'g' } }),
    template: general(),
    says: [`the pod requires ${CATEGORY} In [g]`, `the NodePool allows only ${CATEGORY} In [c m r]`],
  },
  {
    name: 'suggests the value a NodePool sets for a near-miss value',
    kind: 'labelValue',
    pod: pod('a', { nodeSelector: { 'node-type': 'high-memry' } }),
    template: template('memory', catalogue(), { labels: { 'node-type': 'high-memory' } }),
    says: ['node-type In [high-memry]', 'node-type In [high-memory]', 'did you mean node-type=high-memory?'],
  },
  {
    name: 'says plainly that the pod selects another NodePool',
    kind: 'labelValue',
    pod: pod('a', { nodeSelector: { 'karpenter.sh/nodepool': 'gpu' } }),
    template: general(),
    says: ['the pod selects karpenter.sh/nodepool In [gpu], and this is NodePool general'],
  },
  {
    name: 'names the host port a DaemonSet binds on every node of the NodePool',
    kind: 'hostPort',
    pod: pod('exporter', { hostPort: 9100, ...onGeneral }),
    template: { ...general(), daemonHostPorts: [{ port: 'TCP/9100', requirements: [Requirements.none], daemonSet: 'monitoring/node-exporter' }] },
    says: ['the pod binds host port TCP/9100, which DaemonSet monitoring/node-exporter binds on every node of the NodePool'],
  },
  {
    name: 'reports what the topology hook says',
    kind: 'topology',
    pod: pod('a', onGeneral),
    template: general(),
    topology: (_pod, t, requirements) => (requirements.has('workload-type') ? `topology spread on topology.kubernetes.io/zone needs us-west-2c, which NodePool ${t.name} does not allow` : undefined),
    says: ['topology spread on topology.kubernetes.io/zone needs us-west-2c, which NodePool general does not allow'],
  },
  {
    name: 'names the pod requirement no instance type satisfies, with the values the types have',
    kind: 'requirements',
    pod: pod('a', { nodeSelector: { 'karpenter.k8s.aws/instance-generation': '9' } }),
    template: general(),
    says: ['no instance type the NodePool allows has karpenter.k8s.aws/instance-generation In [9]', 'have karpenter.k8s.aws/instance-generation in [5]'],
  },
  {
    name: "names the EC2NodeClass's subnets when no type is offered in the zone the pod requires (the NodePool may set no zone)",
    kind: 'requirements',
    pod: pod('a', { nodeSelector: { 'topology.kubernetes.io/zone': 'us-west-2c' } }),
    template: general(),
    says: ['no instance type the NodePool allows has topology.kubernetes.io/zone In [us-west-2c]', 'have topology.kubernetes.io/zone in [us-west-2a, us-west-2b]', 'give EC2NodeClass default a subnet in that zone'],
  },
  {
    name: 'counts the instance types that lack a well-known label a pod requires (they have it DoesNotExist)',
    kind: 'requirements',
    pod: pod('a', { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'karpenter.k8s.aws/instance-local-nvme', operator: 'Gt', values: ['300'] }] }] } } } }),
    template: template('disk', [
      instanceType('c6id.large', { cpu: 1930, memory: 3055, price: 0.1, labels: { 'karpenter.k8s.aws/instance-local-nvme': '118' } }),
      instanceType('c6a.large', { cpu: 1930, memory: 3055, price: 0.08 }),
    ]),
    says: [
      'no instance type the NodePool allows has karpenter.k8s.aws/instance-local-nvme Gt [300]',
      'its 2 instance types have karpenter.k8s.aws/instance-local-nvme in [118] (1 of them have no karpenter.k8s.aws/instance-local-nvme label at all)',
    ],
  },
  {
    name: 'lists the values closest to what the pod asked for first, so a shortened list still shows them',
    kind: 'requirements',
    pod: pod('a', { nodeSelector: { 'karpenter.k8s.aws/instance-family': 'm7' } }),
    template: template(
      'many',
      ['c5', 'c6a', 'c6g', 'c6i', 'c7g', 'm5', 'm6a', 'm6g', 'm6i', 'm7a', 'm7i', 'r5'].map((family) =>
        instanceType(`${family}.large`, { cpu: 1930, memory: 3055, price: 0.1, labels: { 'karpenter.k8s.aws/instance-family': family } }),
      ),
    ),
    says: ['its 12 instance types have karpenter.k8s.aws/instance-family in [m5, m7a, m7i, c5, c7g, m6a, m6g, m6i and 4 more]'],
  },
  {
    name: 'says no instance type has a well-known label at all when a pod requires it to exist',
    kind: 'requirements',
    pod: pod('a', { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'karpenter.k8s.aws/instance-gpu-count', operator: 'Exists' }] }] } } } }),
    template: general(),
    says: ['no instance type the NodePool allows has karpenter.k8s.aws/instance-gpu-count Exists', 'none of its 5 instance types has the label karpenter.k8s.aws/instance-gpu-count'],
  },
  {
    name: 'suggests the instance type meant by a near-miss name',
    kind: 'requirements',
    pod: pod('a', { nodeSelector: { 'node.kubernetes.io/instance-type': 'm5.larg' } }),
    template: general(),
    says: ['node.kubernetes.io/instance-type In [m5.larg]', 'did you mean node.kubernetes.io/instance-type=m5.large?'],
  },
  {
    name: "says when the NodePool's own requirements match no instance type",
    kind: 'requirements',
    pod: pod('a'),
    template: template('empty', catalogue(), { requirements: [{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['x9z'] }] }),
    says: ["the NodePool's own requirements match no instance type of its EC2NodeClass default"],
  },
  {
    name: 'says so when no instance type the NodePool allows has the resource at all (GPU on c/m)',
    kind: 'absentResource',
    pod: pod('train', { gpu: 1 }),
    template: template('cpu-only', catalogue(), { requirements: [{ key: CATEGORY, operator: 'In', values: ['c', 'm'] }] }),
    says: ['no instance type the NodePool allows has nvidia.com/gpu', 'the pod requests nvidia.com/gpu: 1', `its requirements allow only ${CATEGORY} In [c m]`, 'instance-gpu-manufacturer In [nvidia]'],
  },
  {
    name: 'shows the largest allocatable and the daemonset overhead when no instance type has room',
    kind: 'noRoom',
    pod: pod('huge', { cpu: '64', ...onGeneral }),
    template: general({ daemonOverhead: { cpu: 200, memory: 256 } }),
    says: ['no instance type has room', 'plus daemonset overhead (cpu=200m, memory=256Mi)', 'the largest allocatable is cpu=7910m, memory=29317Mi', '(m5.2xlarge)'],
  },
  {
    name: 'counts daemonset overhead against room: a pod that fits alone but not with the daemons',
    kind: 'noRoom',
    pod: pod('big', { cpu: '7800m', ...onGeneral }),
    template: general({ daemonOverhead: { cpu: 200 } }),
    says: ['plus daemonset overhead (cpu=200m)', 'the largest allocatable is cpu=7910m'],
  },
  {
    name: 'names the offerings lost to insufficient capacity (ICE)',
    kind: 'unavailable',
    pod: pod('a'),
    template: template('general', [instanceType('m5.large', { cpu: 1930, memory: 6903, price: 0.096, zones: ['us-west-2a'], unavailable: ['us-west-2a/on-demand', 'us-west-2a/spot'] })]),
    says: ['unavailable', 'insufficient-capacity', 'm5.large on-demand in us-west-2a'],
  },
  {
    name: 'suggests widening only what the NodePool narrows: not on-demand when it already allows it (trial)',
    kind: 'unavailable',
    pod: pod('a'),
    template: template('general', [instanceType('m5.large', { cpu: 1930, memory: 6903, price: 0.096, zones: ['us-west-2a'], unavailable: ['us-west-2a/on-demand', 'us-west-2a/spot'] })]),
    says: ['tried again when the mark expires (3 minutes after the last failed launch), and allowing more instance types avoids the wait'],
  },
  {
    name: 'suggests on-demand when the NodePool allows only spot',
    kind: 'unavailable',
    pod: pod('a'),
    template: template('general', [instanceType('m5.large', { cpu: 1930, memory: 6903, price: 0.096, zones: ['us-west-2a'], unavailable: ['us-west-2a/spot'] })], { requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }] }),
    says: ['allowing more instance types or on-demand avoids the wait'],
  },
  {
    name: 'says when no fitting instance type is offered in the allowed zone and capacity type',
    kind: 'unavailable',
    pod: pod('a', { nodeSelector: { 'topology.kubernetes.io/zone': 'us-west-2a', 'karpenter.sh/capacity-type': 'on-demand' } }),
    template: template('general', [splitOfferings()]),
    says: ['no fitting instance type is offered in the allowed zones and capacity types', 'topology.kubernetes.io/zone In [us-west-2a]', 'karpenter.sh/capacity-type In [on-demand]'],
  },
  {
    name: 'names the exhausted limit, what is left and what the smallest type needs',
    kind: 'limits',
    pod: pod('a', { cpu: '1500m', ...onGeneral }),
    template: general(),
    remaining: { cpu: 1000 },
    says: ["the NodePool's limits are reached", 'cpu: 1000m left, the smallest fitting instance type needs 2000m', 'raise spec.limits.cpu'],
  },
  {
    name: 'calls a limit that could not hold the smallest fitting type even with nothing in use too small, not reached (trial)',
    kind: 'limits',
    pod: pod('a', { cpu: '1500m', ...onGeneral }),
    template: general({ limits: { cpu: 1000 } }),
    remaining: { cpu: 1000 },
    says: ["the NodePool's limits are too small for it (cpu: 1000m in all, the smallest fitting instance type needs 2000m); raise spec.limits.cpu"],
  },
  {
    name: 'says when the pod narrows the NodePool below its minValues',
    kind: 'minValues',
    pod: pod('a', { nodeSelector: { 'karpenter.k8s.aws/instance-family': 'c5' } }),
    template: template('flexible', catalogue(), { requirements: [{ key: 'karpenter.k8s.aws/instance-family', operator: 'Exists', minValues: 2 }] }),
    says: ['minValues: the NodePool needs at least 2 distinct karpenter.k8s.aws/instance-family values', 'only 1 remain (c5)', 'lower minValues'],
  },
  {
    name: 'names the OS a Linux EC2NodeClass boots when the pod needs Windows (the OS comes from the AMI family)',
    kind: 'requirements',
    pod: pod('iis', { nodeSelector: { 'kubernetes.io/os': 'windows' } }),
    template: linuxPool(),
    says: [
      /^the pod requires kubernetes\.io\/os In \[windows\], but EC2NodeClass default of the NodePool boots linux nodes/,
      "comes from the EC2NodeClass's AMI family, not from NodePool requirements",
      'windows2019@latest, windows2022@latest or windows2025@latest',
    ],
  },
  {
    name: 'names the OS a Windows EC2NodeClass boots when the pod needs Linux, though the NodePool allows only windows',
    kind: 'labelValue',
    pod: pod('tool', { nodeSelector: { 'kubernetes.io/os': 'linux' } }),
    template: windowsPool([{ key: 'kubernetes.io/os', operator: 'In', values: ['windows'] }]),
    says: [/^the pod requires kubernetes\.io\/os In \[linux\], but EC2NodeClass default of the NodePool boots windows nodes/, 'a Linux AMI family (e.g. amiSelectorTerms alias al2023@latest'],
  },
  {
    name: "blames the NodePool's os requirement when its EC2NodeClass boots the OS the pod wants",
    kind: 'labelValue',
    pod: pod('iis', { nodeSelector: { 'kubernetes.io/os': 'windows' } }),
    template: windowsPool([{ key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }]),
    says: ['the pod requires kubernetes.io/os In [windows] and EC2NodeClass default boots windows nodes, but the NodePool allows only kubernetes.io/os In [linux]', "change the NodePool's kubernetes.io/os requirement"],
  },
  {
    name: 'says a NodePool requires an OS its own EC2NodeClass does not boot',
    kind: 'requirements',
    pod: pod('any'),
    template: windowsPool([{ key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }]),
    says: [/^the NodePool requires kubernetes\.io\/os In \[linux\], but its EC2NodeClass default boots windows nodes/, 'a Linux AMI family'],
  },
  {
    name: 'says when nothing rules the NodePool out',
    kind: 'fitsAlone',
    pod: pod('a', onGeneral),
    template: general(),
    says: ['a fresh node of it could take the pod on its own'],
  },
];

describe('diagnosis', () => {
  describe('whyNot', () => {
    it.each(cases)('$kind: $name', (c) => {
      const rejection = whyNot(c.pod, c.template, c.remaining, { ...(c.nodePools ? { nodePools: c.nodePools } : {}), ...(c.topology ? { topology: c.topology } : {}) });
      expect(rejection.ok).toBe(false);
      expect(rejection.kind).toBe(c.kind);
      for (const s of c.says) {
        if (typeof s === 'string') expect(rejection.reason).toContain(s);
        else expect(rejection.reason).toMatch(s);
      }
    });

    it('has a case for every kind of reason', () => {
      expect(new Set(cases.map((c) => c.kind))).toEqual(new Set(REJECTION_KINDS));
    });

    it('reports the taint before a label the NodePool lacks (the order a user fixes things)', () => {
      const r = whyNot(pod('a', { nodeSelector: { 'node-type': 'x' } }), batch(), undefined);
      expect(r.kind).toBe('taint');
    });

    it('reports the label before the size', () => {
      const r = whyNot(pod('a', { cpu: '64', nodeSelector: { [CATEGORY]: 'g' } }), general(), undefined);
      expect(r.kind).toBe('labelValue');
    });

    it('does not call the topology hook when a label already rules the NodePool out', () => {
      let called = 0;
      whyNot(pod('a', { nodeSelector: { [CATEGORY]: 'g' } }), general(), undefined, { topology: () => (called++, 'nope') });
      expect(called).toBe(0);
    });

    it('checks topology where the solver does: after size, on the instance types that fit and stay within limits', () => {
      const seen: string[][] = [];
      const topology: TopologyCheck = (_pod, _t, _requirements, types) => {
        seen.push(types.map((t) => t.name));
        return 'anti-affinity with app=web leaves no zone';
      };
      expect(whyNot(pod('a', { cpu: '64', ...onGeneral }), general(), undefined, { topology }).kind).toBe('noRoom');
      expect(seen).toEqual([]);
      const r = whyNot(pod('a', { cpu: '3', ...onGeneral }), general(), { cpu: 4000 }, { topology });
      expect(r).toMatchObject({ kind: 'topology', reason: 'anti-affinity with app=web leaves no zone' });
      expect(seen).toEqual([['m5.xlarge']]);
    });

    it('reports, for several node affinity terms, the term that gets furthest', () => {
      const p = pod('a', {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: CATEGORY, operator: 'In', values: ['g'] }] },
                { matchExpressions: [{ key: 'karpenter.k8s.aws/instance-generation', operator: 'In', values: ['9'] }] },
              ],
            },
          },
        },
      });
      const r = whyNot(p, general(), undefined);
      expect(r.kind).toBe('requirements');
      expect(r.reason).toContain('instance-generation In [9]');
      expect(r.reason).toContain('node affinity term 2 of 2');
    });
  });

  describe("a NodePool whose own requirements can never launch (Karpenter accepts it and launches nothing)", () => {
    /** The reason a pod gets from a NodePool built as provisioning builds it, over the test catalogue (zones us-west-2a and b). */
    const reasonOf = (requirements: NodeSelectorRequirement[], types = catalogue()) =>
      whyNot(pod('a'), buildNodePoolTemplate({ metadata: { name: 'general' }, spec: { template: { spec: { nodeClassRef: { name: 'default' }, requirements } } } }, types, [], {}), undefined);

    it.each<[string, NodeSelectorRequirement, string]>([
      ['a capacity type in the wrong case', { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['Spot'] }, 'karpenter.sh/capacity-type In [Spot]: none of the 7 instance types has such a value — did you mean karpenter.sh/capacity-type In [spot]?'],
      ["uname's name for an architecture", { key: 'kubernetes.io/arch', operator: 'In', values: ['x86_64'] }, 'kubernetes.io/arch In [x86_64]: none of the 7 instance types has such a value — did you mean kubernetes.io/arch In [amd64]?'],
      ['a misspelt instance type', { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.larg'] }, 'did you mean node.kubernetes.io/instance-type In [m5.large]?'],
      ['a zone one letter off', { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-west-2z'] }, 'did you mean one of the zones its instance types are offered in: us-west-2a, us-west-2b?'],
      ['a zone far from every offered one', { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['ap-southeast-1a'] }, 'topology.kubernetes.io/zone In [ap-southeast-1a]: none of the 7 instance types has such a value — its instance types are offered in us-west-2a, us-west-2b'],
    ])('suggests what %s means', (_name, requirement, says) => {
      const r = reasonOf([requirement]);
      expect(r.kind).toBe('requirements');
      expect(r.reason).toContain("the NodePool's own requirements match no instance type of its EC2NodeClass default");
      expect(r.reason).toContain(says);
    });

    it('suggests nothing for a real value nothing offers (reserved capacity is a choice, not a typo)', () => {
      expect(reasonOf([{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['reserved'] }]).reason).not.toContain('did you mean');
    });

    it('names Gt 8 with Lt 4 on one key as requirements that conflict, not as a value no type has', () => {
      const sized = [2, 4, 8, 16].map((cpu) => instanceType(`m5.${cpu}`, { cpu: cpu * 1000, memory: cpu * 4096, price: cpu / 20, labels: { 'karpenter.k8s.aws/instance-cpu': String(cpu) } }));
      const r = reasonOf(
        [
          { key: 'karpenter.k8s.aws/instance-cpu', operator: 'Gt', values: ['8'] },
          { key: 'karpenter.k8s.aws/instance-cpu', operator: 'Lt', values: ['4'] },
        ],
        sized,
      );
      expect(r.reason).toContain('the requirements karpenter.k8s.aws/instance-cpu Gt [8] and karpenter.k8s.aws/instance-cpu Lt [4] conflict: together they leave no value of karpenter.k8s.aws/instance-cpu');
      expect(r.reason).not.toContain('has such a value');
    });
  });

  describe('summarise', () => {
    it('names the label no NodePool defines, and the labels the NodePools do set', () => {
      const p = pod('report', { nodeSelector: { 'node-type': 'high-memory' } });
      const templates = [general(), batch()];
      const d = diagnosePod(p, templates, new Map());
      expect(summarise(p, templates, d.nodePools)).toMatch(/^no NodePool defines the label node-type: the pod requires node-type In \[high-memory\]/);
      expect(d.reason).toContain('select on a label the NodePools set (workload-type)');
    });

    it('tells a pod selecting a misspelt restricted key to change its selector, not to add the key to a NodePool (no NodePool may)', () => {
      const p = pod('typo', { nodeSelector: { 'karpenter.k8s.aws/instance-categry': 'c' } });
      const d = diagnosePod(p, [general()], new Map());
      expect(d.reason).toContain("no NodePool may define it (label karpenter.k8s.aws/instance-categry is in the restricted domain karpenter.k8s.aws");
      expect(d.reason).toContain("change the pod's selector");
      expect(d.reason).not.toContain("add it to a NodePool's template labels");
    });

    it('lists every NodePool otherwise', () => {
      const d = diagnosePod(pod('a', { cpu: '64', ...onGeneral }), [general(), batch()], new Map());
      expect(d.reason).toMatch(/^no NodePool can serve the pod: general: no instance type has room .*; batch: the pod does not tolerate/);
    });

    it('says when there is no NodePool at all', () => {
      expect(diagnosePod(pod('a'), [], new Map()).reason).toMatch(/^no NodePool exists/);
    });
  });

  describe('diagnose', () => {
    it('flattens every NodePool to its reason and appends the hints to the summary', () => {
      const p = pod('a', { nodeSelector: { 'workload-typ': 'general' } });
      const why = diagnose(p, [general(), batch()], new Map());
      expect(Object.keys(why.nodePools)).toEqual(['general', 'batch']);
      expect(why.nodePools.general).toContain('did you mean workload-type?');
      const { reason, hints } = splitHints(why.reason);
      expect(reason).toMatch(/^no NodePool defines the label workload-typ/);
      expect(hints).toEqual([expect.stringMatching(/^did you mean the label workload-type\? .*NodePools batch and general define workload-type/)]);
    });

    it('passes the topology hook through to every NodePool', () => {
      const why = diagnose(pod('a', onGeneral), [general()], new Map(), { topology: () => 'the zone spread cannot be met' });
      expect(why.nodePools.general).toBe('the zone spread cannot be met');
    });

    it('uses the remaining limits of each NodePool', () => {
      const why = diagnose(pod('a', { cpu: '1500m', ...onGeneral }), [general()], new Map([['general', { cpu: 0 }]]));
      expect(why.nodePools.general).toContain('raise spec.limits.cpu');
    });
  });

  describe('splitHints', () => {
    it('is the inverse of withHints', () => {
      const hint = { kind: 'labelKey' as const, typed: 'a', suggestion: 'b', nodePools: [], message: 'did you mean b?' };
      expect(splitHints(withHints('summary', [hint, { ...hint, message: 'did you mean c?' }]))).toEqual({ reason: 'summary', hints: ['did you mean b?', 'did you mean c?'] });
      expect(splitHints('no hints here')).toEqual({ reason: 'no hints here', hints: [] });
    });
  });

  describe('through the provisioner (FailedScheduling events use the same words)', () => {
    let h: ProvisionerHarness | undefined;
    afterEach(async () => {
      await h?.close();
      h = undefined;
    });

    it('records the NodePool reason and the did-you-mean hint for a near-miss label value', async () => {
      h = await ProvisionerHarness.start();
      const p = await h.pendingPod(podYaml('typo', '500m', '1Gi').replace('workload-type: general', 'workload-type: genral'));
      await h.deliver(h.record(p));
      const event = h.cluster.events.find((e) => e.reason === 'FailedScheduling' && e.object === 'Pod/default/typo');
      expect(event).toBeDefined();
      const nodePools = event!.details?.nodePools as Record<string, string>;
      expect(nodePools.general).toContain('the NodePool allows only workload-type In [general]');
      expect(nodePools.general).toContain('did you mean workload-type=general?');
      expect(splitHints(event!.message).hints).toEqual([expect.stringContaining('did you mean workload-type=general?')]);
    });
  });
});
