import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  amiAliasProblem,
  ec2NodeClassAmiFamily,
  ec2NodeClassSchema,
  parseAmiAlias,
  type EC2NodeClass,
} from '../../../shared/core/api/ec2nodeclass.js';
import { parseManifests, type ManifestOf } from '../../../shared/core/api/manifest.js';
import { edit, expectIssue, issuesOf } from './validation-expectations.js';

const SEED = new URL('../../../examples/seed/', import.meta.url);

/** A valid EC2NodeClass; line numbers matter to the tests below. */
const BASE = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: test
spec:
  amiSelectorTerms:
    - alias: al2023@latest
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: my-cluster
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: my-cluster
  role: KarpenterNodeRole-my-cluster
`;

/** Parses one EC2NodeClass document. */
function parseClass(text: string): EC2NodeClass {
  const [manifest] = parseManifests(text, 'class.yaml');
  expect(manifest?.kind).toBe('EC2NodeClass');
  return (manifest as ManifestOf<'EC2NodeClass'>).object;
}

/** Issues of parsing `text`. */
const problems = (text: string) => issuesOf(() => parseManifests(text, 'class.yaml'));

describe('EC2NodeClass', () => {
  describe('seed examples', () => {
    it('keeps the article default class, alias eks-node@latest included', () => {
      const nodeClass = parseClass(readFileSync(new URL('ec2nodeclass-default.yaml', SEED), 'utf8'));
      expect(nodeClass.metadata.name).toBe('default');
      expect(nodeClass.spec.amiSelectorTerms).toEqual([{ alias: 'eks-node@latest' }]);
      expect(nodeClass.spec.subnetSelectorTerms).toEqual([{ tags: { 'karpenter.sh/discovery': 'my-cluster' } }]);
      expect(nodeClass.spec.securityGroupSelectorTerms).toEqual([{ tags: { 'karpenter.sh/discovery': 'my-cluster' } }]);
      expect(nodeClass.spec.role).toBe('KarpenterNodeRole-my-cluster');
      expect(nodeClass.spec.instanceProfile).toBeUndefined();
      expect(nodeClass.spec.userData).toContain('"maxPods": 110');
      expect(nodeClass.spec.userData?.startsWith('#!/bin/bash\n')).toBe(true);
      expect(nodeClass.spec.blockDeviceMappings).toEqual([
        { deviceName: '/dev/xvda', ebs: { volumeSize: '50Gi', volumeType: 'gp3', iops: 3000, throughput: 125, encrypted: true, deleteOnTermination: true } },
      ]);
      expect(ec2NodeClassAmiFamily(nodeClass)).toBe('AL2023');
    });

    it('keeps the gpu-class the gpu NodePool references', () => {
      const nodeClass = parseClass(readFileSync(new URL('ec2nodeclass-gpu-class.yaml', SEED), 'utf8'));
      expect(nodeClass.metadata.name).toBe('gpu-class');
      expect(nodeClass.spec.amiSelectorTerms).toEqual([{ alias: 'al2023@latest' }]);
      expect(nodeClass.spec.role).toBe('KarpenterNodeRole-my-cluster');
    });
  });

  describe('defaults', () => {
    it('gives metadataOptions Karpenter defaults', () => {
      expect(parseClass(BASE).spec.metadataOptions).toEqual({ httpEndpoint: 'enabled', httpProtocolIPv6: 'disabled', httpPutResponseHopLimit: 1, httpTokens: 'required' });
    });

    it('fills only the missing metadataOptions fields', () => {
      const nodeClass = parseClass(`${BASE}  metadataOptions:\n    httpPutResponseHopLimit: 2\n`);
      expect(nodeClass.spec.metadataOptions).toEqual({ httpEndpoint: 'enabled', httpProtocolIPv6: 'disabled', httpPutResponseHopLimit: 2, httpTokens: 'required' });
    });
  });

  describe('parseAmiAlias', () => {
    it.each([
      ['eks-node@latest', { family: 'al2023', version: 'latest', amiFamily: 'AL2023' }],
      ['al2023@latest', { family: 'al2023', version: 'latest', amiFamily: 'AL2023' }],
      ['al2023@v20240625', { family: 'al2023', version: 'v20240625', amiFamily: 'AL2023' }],
      ['al2@latest', { family: 'al2', version: 'latest', amiFamily: 'AL2' }],
      ['bottlerocket@v1.20.0', { family: 'bottlerocket', version: 'v1.20.0', amiFamily: 'Bottlerocket' }],
      ['windows2019@latest', { family: 'windows2019', version: 'latest', amiFamily: 'Windows2019' }],
      ['windows2022@latest', { family: 'windows2022', version: 'latest', amiFamily: 'Windows2022' }],
      ['windows2025@latest', { family: 'windows2025', version: 'latest', amiFamily: 'Windows2025' }],
    ])('resolves %s', (alias, expected) => {
      expect(parseAmiAlias(alias)).toEqual(expected);
      expect(amiAliasProblem(alias)).toBeUndefined();
    });

    it.each([
      ['foo@latest', /unknown AMI family "foo"/],
      ['ubuntu@latest', /unknown AMI family/],
      ['eks-node@v1', /only supports @latest/],
      ['windows2022@v2024', /Windows families only support @latest/],
      ['al2023', /family@version/],
      ['al2023@', /family@version/],
      ['al2023@1.0', /latest or a pinned version/],
    ])('rejects %s', (alias, message) => {
      expect(parseAmiAlias(alias)).toBeUndefined();
      expect(amiAliasProblem(alias)).toMatch(message);
    });
  });

  describe('validation', () => {
    it('takes EBS volume sizes only as Karpenter\'s pattern does (whole Gi, G, Ti or T within EBS limits)', () => {
      const ebs = (volumeSize: unknown) => ec2NodeClassSchema.safeParse({
        apiVersion: 'karpenter.k8s.aws/v1',
        kind: 'EC2NodeClass',
        metadata: { name: 'x' },
        spec: { amiSelectorTerms: [{ alias: 'al2023@latest' }], subnetSelectorTerms: [{ id: 'subnet-1' }], securityGroupSelectorTerms: [{ id: 'sg-1' }], role: 'R', blockDeviceMappings: [{ deviceName: '/dev/xvda', ebs: { volumeSize } }] },
      }).success;
      for (const ok of ['20Gi', '59000Gi', '100G', '64000G', '1Ti', '58Ti', '64T']) expect(ebs(ok), ok).toBe(true);
      for (const bad of ['0', '1Ki', '0.5Gi', '1e3', '64Ti', '60000Gi', '20', 20, '20 Gi']) expect(ebs(bad), String(bad)).toBe(false);
    });

    it('rejects the unknown alias foo@latest at the alias, line 7, listing the supported families', () => {
      expectIssue(problems(edit(BASE, { 'al2023@latest': 'foo@latest' })), {
        path: 'spec.amiSelectorTerms[0].alias',
        line: 7,
        message: /unknown AMI family "foo".*al2023@latest.*eks-node@latest/,
      });
    });

    it('rejects an alias next to another term', () => {
      expectIssue(problems(edit(BASE, { '    - alias: al2023@latest\n': '    - alias: al2023@latest\n    - id: ami-0123456789abcdef0\n' })), {
        path: 'spec.amiSelectorTerms[0].alias',
        line: 7,
        message: /other amiSelectorTerms/,
      });
    });

    it('rejects an alias combined with other fields in its term', () => {
      expectIssue(problems(edit(BASE, { '    - alias: al2023@latest\n': '    - alias: al2023@latest\n      name: my-ami\n' })), {
        path: 'spec.amiSelectorTerms[0].alias',
        line: 7,
        message: /mutually exclusive/,
      });
    });

    it('rejects an id combined with tags', () => {
      const text = edit(BASE, { '    - alias: al2023@latest\n': '    - id: ami-0123456789abcdef0\n      tags: {a: b}\n  amiFamily: AL2023\n' });
      expectIssue(problems(text), { path: 'spec.amiSelectorTerms[0].id', line: 7, message: /mutually exclusive/ });
    });

    it('rejects an empty AMI term and an owner alone', () => {
      const text = edit(BASE, { '    - alias: al2023@latest\n': '    - {}\n    - owner: self\n  amiFamily: AL2023\n' });
      const issues = problems(text);
      expectIssue(issues, { path: 'spec.amiSelectorTerms[0]', line: 7, message: /at least one/ });
      expectIssue(issues, { path: 'spec.amiSelectorTerms[1]', line: 8, message: /at least one/ });
    });

    it('requires amiFamily when no term is an alias', () => {
      const text = edit(BASE, { '    - alias: al2023@latest\n': '    - name: my-ami-*\n      owner: self\n' });
      expectIssue(problems(text), { path: 'spec.amiFamily', line: 5, message: /must specify amiFamily/ });
      const ok = parseClass(`${text}  amiFamily: AL2023\n`);
      expect(ec2NodeClassAmiFamily(ok)).toBe('AL2023');
    });

    it('accepts ssmParameter and tags terms with an amiFamily', () => {
      const text = edit(BASE, { '    - alias: al2023@latest\n': '    - ssmParameter: /my/ami\n    - tags: {team: a}\n  amiFamily: Bottlerocket\n' });
      expect(parseClass(text).spec.amiSelectorTerms).toHaveLength(2);
    });

    it('rejects an amiFamily that contradicts the alias, but accepts Custom', () => {
      expectIssue(problems(`${BASE}  amiFamily: Bottlerocket\n`), { path: 'spec.amiFamily', line: 15, message: /AL2023/ });
      expect(ec2NodeClassAmiFamily(parseClass(`${BASE}  amiFamily: Custom\n`))).toBe('Custom');
    });

    it('rejects role and instanceProfile together at instanceProfile', () => {
      expectIssue(problems(`${BASE}  instanceProfile: my-profile\n`), { path: 'spec.instanceProfile', line: 15, message: /exactly one of \['role', 'instanceProfile'\]/ });
    });

    it('rejects neither role nor instanceProfile, on the spec line', () => {
      const issues = problems(edit(BASE, { '  role: KarpenterNodeRole-my-cluster\n': '' }));
      expect(issues).toEqual([expect.objectContaining({ line: 5, path: 'spec', message: expect.stringMatching(/exactly one/) })]);
    });

    it('accepts instanceProfile instead of role', () => {
      expect(parseClass(edit(BASE, { 'role: KarpenterNodeRole-my-cluster': 'instanceProfile: my-profile' })).spec.instanceProfile).toBe('my-profile');
    });

    it('rejects empty subnetSelectorTerms and missing securityGroupSelectorTerms', () => {
      const text = edit(BASE, {
        '  subnetSelectorTerms:\n    - tags:\n        karpenter.sh/discovery: my-cluster\n': '  subnetSelectorTerms: []\n',
        '  securityGroupSelectorTerms:\n    - tags:\n        karpenter.sh/discovery: my-cluster\n': '',
      });
      const issues = problems(text);
      expectIssue(issues, { path: 'spec.subnetSelectorTerms', line: 8, message: /cannot be empty/ });
      expectIssue(issues, { path: 'spec.securityGroupSelectorTerms', line: 5, message: /required/ });
    });

    it('accepts subnet and security group ids and a security group name', () => {
      const text = edit(BASE, {
        '    - tags:\n        karpenter.sh/discovery: my-cluster\n  securityGroupSelectorTerms:': '    - id: subnet-0abc\n  securityGroupSelectorTerms:\n    - id: sg-0abc\n    - name: my-sg',
      });
      const nodeClass = parseClass(text);
      expect(nodeClass.spec.subnetSelectorTerms).toEqual([{ id: 'subnet-0abc' }]);
      expect(nodeClass.spec.securityGroupSelectorTerms).toHaveLength(3);
    });

    it('rejects a security group term with both id and name, and a malformed subnet id', () => {
      const text = edit(BASE, {
        '    - tags:\n        karpenter.sh/discovery: my-cluster\n  securityGroupSelectorTerms:': '    - id: vpc-0abc\n  securityGroupSelectorTerms:\n    - id: sg-0abc\n      name: my-sg',
      });
      const issues = problems(text);
      expectIssue(issues, { path: 'spec.subnetSelectorTerms[0].id', line: 9 });
      expectIssue(issues, { path: 'spec.securityGroupSelectorTerms[0].id', line: 11, message: /mutually exclusive/ });
    });

    it('rejects empty tag values in selector terms', () => {
      expectIssue(problems(edit(BASE, { 'karpenter.sh/discovery: my-cluster\n  securityGroupSelectorTerms': 'karpenter.sh/discovery: ""\n  securityGroupSelectorTerms' })), {
        path: 'spec.subnetSelectorTerms[0].tags["karpenter.sh/discovery"]',
        line: 10,
      });
    });

    it('parses blockDeviceMappings, kubelet and the other documented fields', () => {
      const nodeClass = parseClass(`${BASE}  userData: |
    echo hi
  blockDeviceMappings:
    - deviceName: /dev/xvda
      rootVolume: true
      ebs: {volumeSize: 100Gi, volumeType: io2, iops: 10000, encrypted: true, kmsKeyID: arn:aws:kms:x, deleteOnTermination: false}
    - deviceName: /dev/xvdb
      ebs: {snapshotID: snap-0abc}
  kubelet:
    maxPods: 110
    podsPerCore: 10
    systemReserved: {cpu: 100m, memory: 100Mi}
    kubeReserved: {cpu: 200m, memory: 300Mi, ephemeral-storage: 1Gi}
    evictionHard: {memory.available: 5%, nodefs.available: 10%}
    evictionSoft: {memory.available: 500Mi}
    evictionSoftGracePeriod: {memory.available: 1m}
    imageGCHighThresholdPercent: 85
    imageGCLowThresholdPercent: 80
    clusterDNS: [10.0.0.10]
  tags: {team: platform}
  associatePublicIPAddress: false
  detailedMonitoring: true
  instanceStorePolicy: RAID0
  context: my-context
`);
      expect(nodeClass.spec.blockDeviceMappings?.[0]?.ebs?.volumeSize).toBe('100Gi');
      expect(nodeClass.spec.kubelet?.maxPods).toBe(110);
      expect(nodeClass.spec.kubelet?.kubeReserved).toEqual({ cpu: '200m', memory: '300Mi', 'ephemeral-storage': '1Gi' });
      expect(nodeClass.spec.instanceStorePolicy).toBe('RAID0');
    });

    it('rejects an EBS volume with neither size nor snapshot, and two root volumes', () => {
      const text = `${BASE}  blockDeviceMappings:
    - deviceName: /dev/xvda
      rootVolume: true
      ebs: {volumeType: gp3}
    - deviceName: /dev/xvdb
      rootVolume: true
      ebs: {volumeSize: 10Gi}
`;
      const issues = problems(text);
      expectIssue(issues, { path: 'spec.blockDeviceMappings[0].ebs', line: 18, message: /snapshotID or volumeSize/ });
      expectIssue(issues, { path: 'spec.blockDeviceMappings', line: 15, message: /only one/ });
    });

    it('rejects a malformed volumeSize and an unknown volumeType', () => {
      const issues = problems(`${BASE}  blockDeviceMappings:\n    - ebs: {volumeSize: big, volumeType: gp9}\n`);
      expectIssue(issues, { path: 'spec.blockDeviceMappings[0].ebs.volumeSize', line: 16 });
      expectIssue(issues, { path: 'spec.blockDeviceMappings[0].ebs.volumeType', line: 16 });
    });

    it('rejects kubelet evictionSoft without a grace period, bad reserved keys and inverted GC thresholds', () => {
      const issues = problems(`${BASE}  kubelet:
    evictionSoft: {memory.available: 500Mi}
    systemReserved: {gpu: "1"}
    imageGCHighThresholdPercent: 50
    imageGCLowThresholdPercent: 80
`);
      expect(issues.map((i) => i.path).sort()).toEqual(['spec.kubelet.evictionSoft["memory.available"]', 'spec.kubelet.imageGCHighThresholdPercent', 'spec.kubelet.systemReserved.gpu']);
      const refined = problems(`${BASE}  kubelet:
    evictionSoft: {memory.available: 500Mi}
    imageGCHighThresholdPercent: 50
    imageGCLowThresholdPercent: 80
`);
      expectIssue(refined, { path: 'spec.kubelet.evictionSoft["memory.available"]', line: 16, message: /evictionSoftGracePeriod/ });
      expectIssue(refined, { path: 'spec.kubelet.imageGCHighThresholdPercent', line: 17, message: /greater than/ });
    });

    it('rejects restricted tags', () => {
      const issues = problems(`${BASE}  tags:\n    kubernetes.io/cluster/my-cluster: owned\n    karpenter.sh/nodepool: x\n    team: ok\n`);
      expectIssue(issues, { path: 'spec.tags["kubernetes.io/cluster/my-cluster"]', line: 16, message: /restricted/ });
      expectIssue(issues, { path: 'spec.tags["karpenter.sh/nodepool"]', line: 17, message: /restricted/ });
    });

    it('rejects unknown fields with a suggestion', () => {
      expectIssue(problems(`${BASE}  userdata: x\n`), { path: 'spec.userdata', line: 15, message: /did you mean "userData"/ });
    });

    it('exposes a schema usable on plain objects', () => {
      const result = ec2NodeClassSchema.safeParse({ apiVersion: 'karpenter.k8s.aws/v1', kind: 'EC2NodeClass', metadata: { name: 'x' }, spec: {} });
      expect(result.success).toBe(false);
    });
  });
});
