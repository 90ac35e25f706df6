import {
  CreateLaunchTemplateCommand,
  DescribeLaunchTemplatesCommand,
  DescribeSecurityGroupsCommand,
  EC2Client,
  type CreateLaunchTemplateCommandInput,
  type RequestLaunchTemplateData,
} from '@aws-sdk/client-ec2';
import { AddRoleToInstanceProfileCommand, CreateInstanceProfileCommand, GetInstanceProfileCommand, IAMClient, NoSuchEntityException } from '@aws-sdk/client-iam';
import { SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import 'aws-sdk-client-mock-vitest/extend';
import { beforeEach, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { LaunchTemplateInput } from '../../../shared/adapters/aws/launch-contracts.js';
import { canonicalJson } from '../../../shared/core/hash.js';
import {
  Ec2LaunchTemplates,
  blockDeviceMappings,
  launchTemplateData,
  launchTemplateName,
  launchTemplateTags,
  volumeSizeGiB,
} from '../../../shared/adapters/aws/launch-templates.js';
import { CONTENT_TYPE_NODECONFIG, CONTENT_TYPE_SHELL, headerValue, parseMimeMultipart, type ClusterFacts } from '../../../shared/adapters/aws/userdata.js';
import type { EC2NodeClass } from '../../../shared/core/api/ec2nodeclass.js';
import { AL2023_131, TYPES, answerParameters, ec2Error, instanceTypes, manualClock, nodeClass, seedNodeClass } from './aws-fixtures.js';

const ec2 = mockClient(EC2Client);
const ssm = mockClient(SSMClient);
const iam = mockClient(IAMClient);

const CLUSTER: ClusterFacts = {
  name: 'my-cluster',
  endpoint: 'https://ABCDEF.gr7.us-west-2.eks.amazonaws.com',
  certificateAuthority: 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==',
  serviceCidr: '10.100.0.0/16',
  version: '1.31',
};
const PROFILE = 'skiff_my-cluster_us-west-2_default';

/** Every AWS answer a launch needs, for the seed: AL2023 images, two security groups, a fresh instance profile, no templates yet. */
function answerAll(): void {
  answerParameters(ssm, AL2023_131);
  ec2.on(DescribeSecurityGroupsCommand).resolves({ SecurityGroups: [{ GroupId: 'sg-0b' }, { GroupId: 'sg-0a' }] });
  ec2.on(DescribeLaunchTemplatesCommand).rejects(ec2Error('InvalidLaunchTemplateName.NotFoundException'));
  ec2.on(CreateLaunchTemplateCommand).resolves({ LaunchTemplate: { LaunchTemplateId: 'lt-1' } });
  iam.on(GetInstanceProfileCommand).rejects(new NoSuchEntityException({ message: 'none', $metadata: {} }));
  iam.on(CreateInstanceProfileCommand).resolves({});
  iam.on(AddRoleToInstanceProfileCommand).resolves({});
}

beforeEach(() => {
  ec2.reset();
  ssm.reset();
  iam.reset();
  answerAll();
});

const templates = (): Ec2LaunchTemplates =>
  new Ec2LaunchTemplates({
    ec2: new EC2Client({ region: 'us-west-2' }),
    ssm: new SSMClient({ region: 'us-west-2' }),
    iam: new IAMClient({ region: 'us-west-2' }),
    region: 'us-west-2',
    cluster: CLUSTER,
    clock: manualClock(),
  });

const launch = (nc: EC2NodeClass, ...types: (keyof typeof TYPES)[]): LaunchTemplateInput => ({
  nodeClass: nc,
  nodePool: 'general',
  nodeClaim: 'general-abcde',
  labels: { 'karpenter.sh/nodepool': 'general', 'karpenter.k8s.aws/ec2nodeclass': nc.metadata.name },
  taints: [],
  startupTaints: [],
  instanceTypes: instanceTypes(...types),
});

/** The CreateLaunchTemplate inputs sent, in order. */
const created = (): CreateLaunchTemplateCommandInput[] => ec2.commandCalls(CreateLaunchTemplateCommand).map((c) => c.args[0].input);
const dataOf = (imageId: string): RequestLaunchTemplateData | undefined => created().find((c) => c.LaunchTemplateData?.ImageId === imageId)?.LaunchTemplateData;
const userDataText = (data: RequestLaunchTemplateData | undefined): string => Buffer.from(data?.UserData ?? '', 'base64').toString('utf8');

describe('volumeSizeGiB', () => {
  it.each([
    ['50Gi', 50],
    ['20Gi', 20],
    ['100G', 94],
    ['1Ti', 1024],
  ])('%s is %i GiB', (q, gib) => expect(volumeSizeGiB(q)).toBe(gib));
});

describe('blockDeviceMappings', () => {
  it.each([
    ['AL2023', [{ DeviceName: '/dev/xvda', Ebs: { VolumeSize: 20, VolumeType: 'gp3', Encrypted: true } }]],
    ['AL2', [{ DeviceName: '/dev/xvda', Ebs: { VolumeSize: 20, VolumeType: 'gp3', Encrypted: true } }]],
    [
      'Bottlerocket',
      [
        { DeviceName: '/dev/xvda', Ebs: { VolumeSize: 4, VolumeType: 'gp3', Encrypted: true } },
        { DeviceName: '/dev/xvdb', Ebs: { VolumeSize: 20, VolumeType: 'gp3', Encrypted: true } },
      ],
    ],
    ['Windows2022', [{ DeviceName: '/dev/sda1', Ebs: { VolumeSize: 50, VolumeType: 'gp3', Encrypted: true } }]],
    ['Custom', []],
  ] as const)('defaults %s to %o', (family, expected) => {
    expect(blockDeviceMappings(family, undefined)).toEqual(expected);
  });

  it("maps the seed's 50Gi gp3 root volume to the EC2 shape", () => {
    expect(blockDeviceMappings('AL2023', seedNodeClass('default').spec.blockDeviceMappings)).toEqual([
      { DeviceName: '/dev/xvda', Ebs: { VolumeSize: 50, VolumeType: 'gp3', Iops: 3000, Throughput: 125, Encrypted: true, DeleteOnTermination: true } },
    ]);
  });

  it('maps kmsKeyID, snapshotID and volumeInitializationRate', () => {
    expect(blockDeviceMappings('AL2', [{ deviceName: '/dev/xvdb', rootVolume: true, ebs: { snapshotID: 'snap-1', kmsKeyID: 'arn:kms', volumeInitializationRate: 300 } }])).toEqual([
      { DeviceName: '/dev/xvdb', Ebs: { SnapshotId: 'snap-1', KmsKeyId: 'arn:kms', VolumeInitializationRate: 300 } },
    ]);
  });
});

describe('launchTemplateData', () => {
  const base = { imageId: 'ami-1', userData: 'hello', instanceProfile: 'p', securityGroupIds: ['sg-2', 'sg-1'] };

  it("applies Karpenter's IMDS defaults, monitoring off and sorted security groups", () => {
    expect(launchTemplateData({ ...base, nodeClass: nodeClass('d') })).toEqual({
      ImageId: 'ami-1',
      UserData: Buffer.from('hello').toString('base64'),
      IamInstanceProfile: { Name: 'p' },
      SecurityGroupIds: ['sg-1', 'sg-2'],
      BlockDeviceMappings: [{ DeviceName: '/dev/xvda', Ebs: { VolumeSize: 20, VolumeType: 'gp3', Encrypted: true } }],
      MetadataOptions: { HttpEndpoint: 'enabled', HttpProtocolIpv6: 'disabled', HttpPutResponseHopLimit: 1, HttpTokens: 'required' },
      Monitoring: { Enabled: false },
    });
  });

  it('takes metadataOptions and detailedMonitoring from the node class', () => {
    const nc = nodeClass('m', { metadataOptions: { httpPutResponseHopLimit: 2, httpTokens: 'optional' }, detailedMonitoring: true });
    const data = launchTemplateData({ ...base, nodeClass: nc });
    expect(data.MetadataOptions).toEqual({ HttpEndpoint: 'enabled', HttpProtocolIpv6: 'disabled', HttpPutResponseHopLimit: 2, HttpTokens: 'optional' });
    expect(data.Monitoring).toEqual({ Enabled: true });
  });

  it('moves the security groups onto a network interface when associatePublicIPAddress is set', () => {
    const data = launchTemplateData({ ...base, nodeClass: nodeClass('pub', { associatePublicIPAddress: false }) });
    expect(data.SecurityGroupIds).toBeUndefined();
    expect(data.NetworkInterfaces).toEqual([{ DeviceIndex: 0, AssociatePublicIpAddress: false, Groups: ['sg-1', 'sg-2'] }]);
  });

  it('omits UserData for none and BlockDeviceMappings for Custom without mappings', () => {
    const data = launchTemplateData({ ...base, userData: undefined, nodeClass: nodeClass('c', { amiFamily: 'Custom', amiSelectorTerms: [{ id: 'ami-1' }] }) });
    expect(data).not.toHaveProperty('UserData');
    expect(data).not.toHaveProperty('BlockDeviceMappings');
  });

  it('refuses user data over 16 KiB with UserDataTooLarge', () => {
    expect(() => launchTemplateData({ ...base, userData: 'x'.repeat(16 * 1024 + 1), nodeClass: nodeClass('big') })).toThrow(expect.objectContaining({ code: 'UserDataTooLarge' }) as Error);
  });
});

describe('launchTemplateName', () => {
  const data = launchTemplateData({ nodeClass: nodeClass('d'), imageId: 'ami-1', userData: 'u', instanceProfile: 'p', securityGroupIds: ['sg-1'] });
  const tags = launchTemplateTags('my-cluster', nodeClass('d'));

  it('is skiff/<cluster>/<16 hex> and depends only on content, not key order', () => {
    const name = launchTemplateName('my-cluster', data, tags);
    expect(name).toMatch(/^skiff\/my-cluster\/[0-9a-f]{16}$/);
    const reordered = JSON.parse(canonicalJson(data)) as RequestLaunchTemplateData;
    expect(launchTemplateName('my-cluster', { ...reordered }, tags)).toBe(name);
  });

  it('changes with the data and with the node class', () => {
    const name = launchTemplateName('my-cluster', data, tags);
    expect(launchTemplateName('my-cluster', { ...data, ImageId: 'ami-2' }, tags)).not.toBe(name);
    expect(launchTemplateName('my-cluster', data, launchTemplateTags('my-cluster', nodeClass('other')))).not.toBe(name);
  });

  it('tags the template for the cluster and node class over spec.tags', () => {
    expect(launchTemplateTags('my-cluster', nodeClass('d', { tags: { team: 'web', Name: 'n' } }))).toEqual([
      { Key: 'Name', Value: 'n' },
      { Key: 'eks:eks-cluster-name', Value: 'my-cluster' },
      { Key: 'karpenter.k8s.aws/ec2nodeclass', Value: 'd' },
      { Key: 'kubernetes.io/cluster/my-cluster', Value: 'owned' },
      { Key: 'team', Value: 'web' },
    ]);
  });
});

describe('Ec2LaunchTemplates', () => {
  describe('resolve', () => {
    it("creates one template per AMI the seed's default class needs: amd64 standard, arm64 standard, amd64 nvidia", async () => {
      const resolved = await templates().resolve(launch(seedNodeClass('default'), 'm5.large', 'm6g.large', 'g5.xlarge'));
      expect(resolved.map((t) => `${t.imageId} ${t.architecture}`)).toEqual(['ami-0a2023x86std amd64', 'ami-0a2023x86nv amd64', 'ami-0a2023armstd arm64']);
      expect(new Set(resolved.map((t) => t.launchTemplateName)).size).toBe(3);
      for (const t of resolved) expect(t.launchTemplateName).toMatch(/^skiff\/my-cluster\/[0-9a-f]{16}$/);
      expect(created().map((c) => c.LaunchTemplateName)).toEqual(resolved.map((t) => t.launchTemplateName));

      const [std, nvidia, arm] = resolved;
      expect(std?.matches(TYPES['m5.large'])).toBe(true);
      expect(std?.matches(TYPES['g5.xlarge'])).toBe(false);
      expect(std?.matches(TYPES['m6g.large'])).toBe(false);
      expect(nvidia?.matches(TYPES['g5.xlarge'])).toBe(true);
      expect(arm?.matches(TYPES['m6g.large'])).toBe(true);
    });

    it('writes the data shape: AMI, base64 user data (NodeConfig then the seed script), profile, groups, 50 GiB root, IMDS, tags', async () => {
      const seed = seedNodeClass('default');
      await templates().resolve(launch(seed, 'm5.large'));
      const [input] = created();
      expect(input?.TagSpecifications).toEqual([{ ResourceType: 'launch-template', Tags: launchTemplateTags('my-cluster', seed) }]);
      const data = input?.LaunchTemplateData;
      expect(data).toMatchObject({
        ImageId: 'ami-0a2023x86std',
        IamInstanceProfile: { Name: PROFILE },
        SecurityGroupIds: ['sg-0a', 'sg-0b'],
        BlockDeviceMappings: [{ DeviceName: '/dev/xvda', Ebs: { VolumeSize: 50, VolumeType: 'gp3', Iops: 3000, Throughput: 125, Encrypted: true, DeleteOnTermination: true } }],
        MetadataOptions: { HttpEndpoint: 'enabled', HttpProtocolIpv6: 'disabled', HttpPutResponseHopLimit: 1, HttpTokens: 'required' },
        Monitoring: { Enabled: false },
      });
      const parts = parseMimeMultipart(userDataText(data));
      expect(parts.map((p) => headerValue(p.headers, 'Content-Type'))).toEqual([CONTENT_TYPE_NODECONFIG, CONTENT_TYPE_SHELL]);
      const config = parseYaml(parts[0]?.content ?? '') as { spec: { cluster: unknown; kubelet: { config: { registerWithTaints: unknown }; flags: string[] } } };
      expect(config.spec.cluster).toEqual({ name: 'my-cluster', apiServerEndpoint: CLUSTER.endpoint, certificateAuthority: CLUSTER.certificateAuthority, cidr: '10.100.0.0/16' });
      expect(config.spec.kubelet.config.registerWithTaints).toEqual([{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }]);
      expect(config.spec.kubelet.flags).toEqual(['--node-labels=karpenter.k8s.aws/ec2nodeclass=default,karpenter.sh/nodepool=general']);
      expect(parts[1]?.content).toBe(seed.spec.userData);
    });

    it("resolves the seed's gpu-class for g5 to the NVIDIA AL2023 image with a 100 GiB root volume", async () => {
      const resolved = await templates().resolve(launch(seedNodeClass('gpu-class'), 'g5.xlarge'));
      expect(resolved.map((t) => t.imageId)).toEqual(['ami-0a2023x86nv']);
      expect(dataOf('ami-0a2023x86nv')?.BlockDeviceMappings?.[0]?.Ebs?.VolumeSize).toBe(100);
      expect(dataOf('ami-0a2023x86nv')?.IamInstanceProfile).toEqual({ Name: 'skiff_my-cluster_us-west-2_gpu-class' });
    });

    it('registers with the NodePool taints and startup taints before the unregistered taint', async () => {
      await templates().resolve({
        ...launch(seedNodeClass('gpu-class'), 'g5.xlarge'),
        taints: [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }],
        startupTaints: [{ key: 'example.com/setup', effect: 'NoExecute' }],
      });
      const config = parseYaml(parseMimeMultipart(userDataText(dataOf('ami-0a2023x86nv')))[0]?.content ?? '') as { spec: { kubelet: { config: { registerWithTaints: unknown } } } };
      expect(config.spec.kubelet.config.registerWithTaints).toEqual([
        { key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' },
        { key: 'example.com/setup', effect: 'NoExecute' },
        { key: 'karpenter.sh/unregistered', effect: 'NoExecute' },
      ]);
    });

    it('names templates the same across processes for the same input', async () => {
      const a = await templates().resolve(launch(seedNodeClass('default'), 'm5.large', 'm6g.large'));
      const b = await templates().resolve(launch(seedNodeClass('default'), 'm6g.large', 'm5.large'));
      expect(b.map((t) => t.launchTemplateName)).toEqual(a.map((t) => t.launchTemplateName));
    });

    it('reuses a template that already exists (DescribeLaunchTemplates finds it) without creating one', async () => {
      ec2.on(DescribeLaunchTemplatesCommand).resolves({ LaunchTemplates: [{ LaunchTemplateId: 'lt-existing' }] });
      const [t] = await templates().resolve(launch(seedNodeClass('default'), 'm5.large'));
      expect(ec2).toHaveReceivedCommandWith(DescribeLaunchTemplatesCommand, { LaunchTemplateNames: [t?.launchTemplateName ?? ''] });
      expect(ec2).not.toHaveReceivedCommand(CreateLaunchTemplateCommand);
    });

    it('treats InvalidLaunchTemplateName.AlreadyExistsException as a concurrent creator winning: reuse', async () => {
      ec2.on(CreateLaunchTemplateCommand).rejects(ec2Error('InvalidLaunchTemplateName.AlreadyExistsException'));
      const resolved = await templates().resolve(launch(seedNodeClass('default'), 'm5.large'));
      expect(resolved).toHaveLength(1);
    });

    it('checks EC2 once per template per process, and again after invalidate(nodeClass)', async () => {
      const t = templates();
      const input = launch(seedNodeClass('default'), 'm5.large');
      await t.resolve(input);
      await t.resolve(input);
      expect(ec2).toHaveReceivedCommandTimes(DescribeLaunchTemplatesCommand, 1);
      expect(ec2).toHaveReceivedCommandTimes(CreateLaunchTemplateCommand, 1);
      t.invalidate('gpu-class');
      await t.resolve(input);
      expect(ec2).toHaveReceivedCommandTimes(DescribeLaunchTemplatesCommand, 1);
      t.invalidate('default');
      await t.resolve(input);
      expect(ec2).toHaveReceivedCommandTimes(DescribeLaunchTemplatesCommand, 2);
      expect(ec2).toHaveReceivedCommandTimes(CreateLaunchTemplateCommand, 2);
    });

    it('shares one ensure between concurrent resolves', async () => {
      const t = templates();
      const input = launch(seedNodeClass('default'), 'm5.large');
      await Promise.all([t.resolve(input), t.resolve(input), t.resolve(input)]);
      expect(ec2).toHaveReceivedCommandTimes(CreateLaunchTemplateCommand, 1);
      expect(iam).toHaveReceivedCommandTimes(CreateInstanceProfileCommand, 1);
    });

    it('does not cache a failed create', async () => {
      ec2.on(CreateLaunchTemplateCommand).rejectsOnce(ec2Error('InternalError')).resolves({});
      const t = templates();
      const input = launch(seedNodeClass('default'), 'm5.large');
      await expect(t.resolve(input)).rejects.toMatchObject({ code: 'InternalError' });
      await t.resolve(input);
      expect(ec2).toHaveReceivedCommandTimes(CreateLaunchTemplateCommand, 2);
    });

    it('uses one template for an image that serves two variants (Bottlerocket x86_64: standard and neuron)', async () => {
      ssm.reset();
      answerParameters(ssm, { '/aws/service/bottlerocket/aws-k8s-1.31/x86_64/latest/image_id': 'ami-br' });
      const br = nodeClass('br', { amiSelectorTerms: [{ alias: 'bottlerocket@latest' }] });
      const resolved = await templates().resolve(launch(br, 'm5.large', 'inf2.xlarge'));
      expect(resolved).toHaveLength(1);
      expect(resolved[0]?.matches(TYPES['inf2.xlarge'])).toBe(true);
      expect(resolved[0]?.matches(TYPES['m5.large'])).toBe(true);
      const data = dataOf('ami-br');
      expect(data?.BlockDeviceMappings?.map((m) => `${m.DeviceName} ${m.Ebs?.VolumeSize}`)).toEqual(['/dev/xvda 4', '/dev/xvdb 20']);
      expect(userDataText(data)).toMatch(/^\[settings\.kubernetes\]\ncluster-name = "my-cluster"/);
    });

    it('leaves out instance types no AMI serves, and returns no template (creating none) when none is served', async () => {
      const resolved = await templates().resolve(launch(seedNodeClass('default'), 'm5.large', 'g4ad.xlarge'));
      expect(resolved.map((t) => t.imageId)).toEqual(['ami-0a2023x86std']);
      ec2.resetHistory();
      ssm.reset();
      answerParameters(ssm, { '/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/arm64/standard/recommended/image_id': 'ami-armonly' });
      expect(await templates().resolve(launch(nodeClass('arm'), 'm5.large'))).toEqual([]);
      expect(ec2).not.toHaveReceivedCommand(CreateLaunchTemplateCommand);
    });

    it('passes the instance profile of spec.instanceProfile without IAM calls', async () => {
      const nc = nodeClass('pre', { role: undefined, instanceProfile: 'MyProfile' });
      await templates().resolve(launch(nc, 'm5.large'));
      expect(dataOf('ami-0a2023x86std')?.IamInstanceProfile).toEqual({ Name: 'MyProfile' });
      expect(iam).not.toHaveReceivedAnyCommand();
    });
  });
});
