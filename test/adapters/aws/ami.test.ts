import { DescribeImagesCommand, EC2Client, type ArchitectureValues, type Image } from '@aws-sdk/client-ec2';
import { GetParametersCommand, SSMClient, SSMServiceException } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import 'aws-sdk-client-mock-vitest/extend';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  AmiResolver,
  aliasParameters,
  amiMatches,
  describeImagesRequests,
  instanceTypeVariant,
  kubernetesMinorVersion,
  tagFilters,
} from '../../../shared/adapters/aws/ami.js';
import { ssmParameterArns } from '../../../shared/adapters/aws/iam-actions.js';
import { parseAmiAlias, type AmiAlias } from '../../../shared/core/api/ec2nodeclass.js';
import { CloudProviderError, SkiffError, ThrottledError } from '../../../shared/core/errors.js';
import { AL2023_131, TYPES, answerParameters, manualClock, nodeClass, seedNodeClass } from './aws-fixtures.js';

const ec2 = mockClient(EC2Client);
const ssm = mockClient(SSMClient);
beforeEach(() => {
  ec2.reset();
  ssm.reset();
});

const alias = (text: string): AmiAlias => {
  const parsed = parseAmiAlias(text);
  if (!parsed) throw new Error(`bad alias ${text}`);
  return parsed;
};
const names = (text: string, k8s = '1.31'): string[] => aliasParameters(alias(text), k8s).map((p) => p.name);
const resolver = (clock = manualClock()): AmiResolver => new AmiResolver({ ec2: new EC2Client({ region: 'us-west-2' }), ssm: new SSMClient({ region: 'us-west-2' }), kubernetesVersion: '1.31', clock });

describe('aliasParameters', () => {
  it('reads the five AL2023 recommended parameters for al2023@latest (x86_64 standard/nvidia/neuron, arm64 standard/nvidia)', () => {
    expect(names('al2023@latest')).toEqual([
      '/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/recommended/image_id',
      '/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/nvidia/recommended/image_id',
      '/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/neuron/recommended/image_id',
      '/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/arm64/standard/recommended/image_id',
      '/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/arm64/nvidia/recommended/image_id',
    ]);
  });

  it("treats Skiff's eks-node@latest exactly as al2023@latest", () => {
    expect(aliasParameters(alias('eks-node@latest'), '1.31')).toEqual(aliasParameters(alias('al2023@latest'), '1.31'));
  });

  it('names the release in the path for a pinned al2023 version', () => {
    expect(names('al2023@v20240807', '1.30')[0]).toBe(
      '/aws/service/eks/optimized-ami/1.30/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.30-v20240807/image_id',
    );
    expect(names('al2023@v20240807', '1.30')[4]).toBe(
      '/aws/service/eks/optimized-ami/1.30/amazon-linux-2023/arm64/nvidia/amazon-eks-node-al2023-arm64-nvidia-1.30-v20240807/image_id',
    );
  });

  it('reads amazon-linux-2, -gpu and -arm64 for al2, the GPU image serving nvidia and neuron types', () => {
    expect(aliasParameters(alias('al2@latest'), '1.29')).toEqual([
      { name: '/aws/service/eks/optimized-ami/1.29/amazon-linux-2/recommended/image_id', architecture: 'amd64', variants: ['standard'] },
      { name: '/aws/service/eks/optimized-ami/1.29/amazon-linux-2-gpu/recommended/image_id', architecture: 'amd64', variants: ['nvidia', 'neuron'] },
      { name: '/aws/service/eks/optimized-ami/1.29/amazon-linux-2-arm64/recommended/image_id', architecture: 'arm64', variants: ['standard'] },
    ]);
    expect(names('al2@v20240917', '1.29')).toEqual([
      '/aws/service/eks/optimized-ami/1.29/amazon-linux-2/amazon-eks-node-1.29-v20240917/image_id',
      '/aws/service/eks/optimized-ami/1.29/amazon-linux-2-gpu/amazon-eks-gpu-node-1.29-v20240917/image_id',
      '/aws/service/eks/optimized-ami/1.29/amazon-linux-2-arm64/amazon-eks-arm64-node-1.29-v20240917/image_id',
    ]);
  });

  it('reads aws-k8s-<k8s>[-nvidia] for bottlerocket, the version without its v', () => {
    expect(aliasParameters(alias('bottlerocket@latest'), '1.31')).toEqual([
      { name: '/aws/service/bottlerocket/aws-k8s-1.31/x86_64/latest/image_id', architecture: 'amd64', variants: ['standard', 'neuron'] },
      { name: '/aws/service/bottlerocket/aws-k8s-1.31-nvidia/x86_64/latest/image_id', architecture: 'amd64', variants: ['nvidia'] },
      { name: '/aws/service/bottlerocket/aws-k8s-1.31/arm64/latest/image_id', architecture: 'arm64', variants: ['standard'] },
      { name: '/aws/service/bottlerocket/aws-k8s-1.31-nvidia/arm64/latest/image_id', architecture: 'arm64', variants: ['nvidia'] },
    ]);
    expect(names('bottlerocket@v1.20.3')[0]).toBe('/aws/service/bottlerocket/aws-k8s-1.31/x86_64/1.20.3/image_id');
  });

  it.each([
    ['windows2019@latest', '2019'],
    ['windows2022@latest', '2022'],
    ['windows2025@latest', '2025'],
  ])('reads the EKS-optimized Windows Server Core parameter for %s, an image for every amd64 type (GPU types too)', (text, year) => {
    const parameters = aliasParameters(alias(text), '1.31');
    expect(parameters).toEqual([
      { name: `/aws/service/ami-windows-latest/Windows_Server-${year}-English-Core-EKS_Optimized-1.31/image_id`, architecture: 'amd64', variants: [undefined] },
    ]);
    // Karpenter's windows.go gives the image OS and build requirements only: an NVIDIA type launches from it, arm64 does not.
    const image = { architecture: 'amd64' as const, variant: parameters[0]?.variants[0] };
    expect(amiMatches(image, { 'kubernetes.io/arch': 'amd64', 'karpenter.k8s.aws/instance-gpu-manufacturer': 'nvidia' })).toBe(true);
    expect(amiMatches(image, { 'kubernetes.io/arch': 'amd64' })).toBe(true);
    expect(amiMatches(image, { 'kubernetes.io/arch': 'arm64' })).toBe(false);
  });
});

describe('kubernetesMinorVersion', () => {
  it.each([
    ['1.31', '1.31'],
    ['v1.31.2', '1.31'],
    ['1.30.4-eks-a737599', '1.30'],
  ])('reads %s as %s', (input, expected) => expect(kubernetesMinorVersion(input)).toBe(expected));

  it('throws a SkiffError for a version without major.minor', () => {
    expect(() => kubernetesMinorVersion('latest')).toThrow(SkiffError);
  });
});

describe('instanceTypeVariant and amiMatches', () => {
  it.each([
    ['m5.large', 'standard'],
    ['g5.xlarge', 'nvidia'],
    ['inf2.xlarge', 'neuron'],
    ['g4ad.xlarge', 'standard'],
    ['dl2q.24xlarge', 'standard'],
  ] as const)('%s needs the %s variant', (type, variant) => {
    expect(instanceTypeVariant(TYPES[type])).toBe(variant);
  });

  it.each([
    [{ architecture: 'amd64', variant: 'standard' }, 'm5.large', true],
    [{ architecture: 'amd64', variant: 'standard' }, 'm6g.large', false],
    [{ architecture: 'amd64', variant: 'standard' }, 'g5.xlarge', false],
    [{ architecture: 'amd64', variant: 'nvidia' }, 'g5.xlarge', true],
    [{ architecture: 'arm64', variant: 'nvidia' }, 'g5.xlarge', false],
    [{ architecture: 'arm64', variant: 'nvidia' }, 'g5g.xlarge', true],
    [{ architecture: 'amd64', variant: 'neuron' }, 'inf2.xlarge', true],
    [{ architecture: 'amd64', variant: 'neuron' }, 'm5.large', false],
    [{ architecture: 'amd64', variant: undefined }, 'g5.xlarge', true],
    [{ architecture: 'amd64', variant: undefined }, 'm6g.large', false],
  ] as const)('%o serves %s: %s', (ami, type, expected) => {
    expect(amiMatches(ami, TYPES[type])).toBe(expected);
  });
});

describe('tagFilters and describeImagesRequests', () => {
  it('turns a * value into a tag-key filter and others into tag:<key>', () => {
    expect(tagFilters({ 'karpenter.sh/discovery': 'my-cluster', team: '*' })).toEqual([
      { Name: 'tag:karpenter.sh/discovery', Values: ['my-cluster'] },
      { Name: 'tag-key', Values: ['team'] },
    ]);
  });

  it('ORs terms: ids (and ssmParameter values) share one image-id request; name defaults to owners self and amazon', () => {
    expect(
      describeImagesRequests([{ id: 'ami-1' }, { name: 'my-ami-*' }, { name: 'theirs', owner: '123456789012' }, { tags: { env: 'prod', team: '*' } }, { id: 'ami-2' }], ['ami-3']),
    ).toEqual([
      { Filters: [{ Name: 'image-id', Values: ['ami-1', 'ami-2', 'ami-3'] }], IncludeDeprecated: true },
      { Filters: [{ Name: 'name', Values: ['my-ami-*'] }], Owners: ['self', 'amazon'], IncludeDeprecated: true },
      { Filters: [{ Name: 'name', Values: ['theirs'] }], Owners: ['123456789012'], IncludeDeprecated: true },
      {
        Filters: [
          { Name: 'tag:env', Values: ['prod'] },
          { Name: 'tag-key', Values: ['team'] },
        ],
        IncludeDeprecated: true,
      },
    ]);
  });
});

describe('ssmParameterArns', () => {
  it('builds the public-parameter ARNs (no account) for the stack', () => {
    expect(ssmParameterArns('us-west-2')).toEqual([
      'arn:aws:ssm:us-west-2::parameter/aws/service/eks/*',
      'arn:aws:ssm:us-west-2::parameter/aws/service/bottlerocket/*',
      'arn:aws:ssm:us-west-2::parameter/aws/service/ami-windows-latest/*',
    ]);
  });
});

describe('AmiResolver', () => {
  describe('resolve (alias)', () => {
    it("resolves the seed's eks-node@latest to the AL2023 images per architecture and variant with one GetParameters call", async () => {
      answerParameters(ssm, AL2023_131);
      const amis = await resolver().resolve(seedNodeClass('default'));
      expect(amis.map(({ imageId, architecture, variant, amiFamily }) => ({ imageId, architecture, variant, amiFamily }))).toEqual([
        { imageId: 'ami-0a2023x86std', architecture: 'amd64', variant: 'standard', amiFamily: 'AL2023' },
        { imageId: 'ami-0a2023x86nv', architecture: 'amd64', variant: 'nvidia', amiFamily: 'AL2023' },
        { imageId: 'ami-0a2023x86neu', architecture: 'amd64', variant: 'neuron', amiFamily: 'AL2023' },
        { imageId: 'ami-0a2023armstd', architecture: 'arm64', variant: 'standard', amiFamily: 'AL2023' },
        { imageId: 'ami-0a2023armnv', architecture: 'arm64', variant: 'nvidia', amiFamily: 'AL2023' },
      ]);
      expect(ssm).toHaveReceivedCommandTimes(GetParametersCommand, 1);
      expect(ssm).toHaveReceivedCommandWith(GetParametersCommand, { Names: Object.keys(AL2023_131) });
      expect(ec2).not.toHaveReceivedAnyCommand();
    });

    it("resolves the seed's gpu-class (al2023@latest) the same way", async () => {
      answerParameters(ssm, AL2023_131);
      const amis = await resolver().resolve(seedNodeClass('gpu-class'));
      expect(amis.find((a) => a.variant === 'nvidia' && a.architecture === 'amd64')?.imageId).toBe('ami-0a2023x86nv');
    });

    it('skips parameters that do not exist and keeps the rest', async () => {
      const { ['/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/neuron/recommended/image_id']: _gone, ...rest } = AL2023_131;
      answerParameters(ssm, rest);
      const amis = await resolver().resolve(seedNodeClass('default'));
      expect(amis.map((a) => a.variant)).toEqual(['standard', 'nvidia', 'standard', 'nvidia']);
    });

    it('yields one entry per variant an image serves (the AL2 GPU image serves nvidia and neuron)', async () => {
      answerParameters(ssm, {
        '/aws/service/eks/optimized-ami/1.31/amazon-linux-2/recommended/image_id': 'ami-al2',
        '/aws/service/eks/optimized-ami/1.31/amazon-linux-2-gpu/recommended/image_id': 'ami-al2gpu',
      });
      const amis = await resolver().resolve(nodeClass('al2', { amiSelectorTerms: [{ alias: 'al2@latest' }] }));
      expect(amis.map((a) => `${a.imageId} ${a.architecture} ${a.variant} ${a.amiFamily}`)).toEqual([
        'ami-al2 amd64 standard AL2',
        'ami-al2gpu amd64 nvidia AL2',
        'ami-al2gpu amd64 neuron AL2',
      ]);
    });

    it('reuses SSM values for 24 hours, then reads them again', async () => {
      answerParameters(ssm, AL2023_131);
      const clock = manualClock();
      const amis = resolver(clock);
      await amis.resolve(seedNodeClass('default'));
      clock.advance(24 * 3_600_000 - 1);
      await amis.resolve(seedNodeClass('gpu-class'));
      expect(ssm).toHaveReceivedCommandTimes(GetParametersCommand, 1);
      clock.advance(1);
      await amis.resolve(seedNodeClass('default'));
      expect(ssm).toHaveReceivedCommandTimes(GetParametersCommand, 2);
    });

    it('asks again for a missing parameter only after an hour', async () => {
      answerParameters(ssm, { '/aws/service/bottlerocket/aws-k8s-1.31/x86_64/latest/image_id': 'ami-br' });
      const clock = manualClock();
      const amis = resolver(clock);
      const br = nodeClass('br', { amiSelectorTerms: [{ alias: 'bottlerocket@latest' }] });
      await amis.resolve(br);
      await amis.resolve(br);
      expect(ssm).toHaveReceivedCommandTimes(GetParametersCommand, 1);
      clock.advance(3_600_000);
      await amis.resolve(br);
      expect(ssm).toHaveReceivedCommandTimes(GetParametersCommand, 2);
      expect(ssm).toHaveReceivedNthCommandWith(GetParametersCommand, 2, {
        Names: [
          '/aws/service/bottlerocket/aws-k8s-1.31-nvidia/x86_64/latest/image_id',
          '/aws/service/bottlerocket/aws-k8s-1.31/arm64/latest/image_id',
          '/aws/service/bottlerocket/aws-k8s-1.31-nvidia/arm64/latest/image_id',
        ],
      });
    });

    it('fails with AMINotFound naming the node class, the alias and the parameters when none exists', async () => {
      answerParameters(ssm, {});
      const error = await resolver()
        .resolve(seedNodeClass('default'))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CloudProviderError);
      expect(error).toMatchObject({ code: 'AMINotFound' });
      expect((error as Error).message).toContain('EC2NodeClass default');
      expect((error as Error).message).toContain('eks-node@latest');
      expect((error as Error).message).toContain('/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/recommended/image_id');
    });

    it('turns SSM throttling into ThrottledError and other failures into CloudProviderError with the code', async () => {
      ssm.on(GetParametersCommand).rejects(new SSMServiceException({ name: 'ThrottlingException', $fault: 'client', $metadata: {}, message: 'Rate exceeded' }));
      await expect(resolver().resolve(seedNodeClass('default'))).rejects.toBeInstanceOf(ThrottledError);
      ssm.reset();
      ssm.on(GetParametersCommand).rejects(new SSMServiceException({ name: 'AccessDeniedException', $fault: 'client', $metadata: {}, message: 'no' }));
      await expect(resolver().resolve(seedNodeClass('default'))).rejects.toMatchObject({ code: 'AccessDeniedException' });
    });
  });

  describe('resolve (selector terms)', () => {
    const image = (id: string, arch: ArchitectureValues, created: string, extra: Partial<Image> = {}): Image => ({
      ImageId: id,
      Architecture: arch,
      CreationDate: created,
      State: 'available',
      Name: id,
      ...extra,
    });

    it('keeps the newest image per architecture across ORed terms, with no variant', async () => {
      ec2.on(DescribeImagesCommand).resolves({
        Images: [
          image('ami-old', 'x86_64', '2025-01-01T00:00:00.000Z'),
          image('ami-new', 'x86_64', '2025-06-01T00:00:00.000Z'),
          image('ami-arm', 'arm64', '2025-03-01T00:00:00.000Z'),
          image('ami-pending', 'x86_64', '2025-09-01T00:00:00.000Z', { State: 'pending' }),
          image('ami-mac', 'x86_64_mac', '2025-09-01T00:00:00.000Z'),
        ],
      });
      const custom = nodeClass('custom', { amiFamily: 'AL2023', amiSelectorTerms: [{ name: 'team-ami-*' }, { tags: { 'team/ami': '*' } }] });
      const amis = await resolver().resolve(custom);
      expect(amis).toEqual([
        { imageId: 'ami-new', architecture: 'amd64', variant: undefined, amiFamily: 'AL2023', source: 'ec2:DescribeImages', name: 'ami-new', creationDate: '2025-06-01T00:00:00.000Z' },
        { imageId: 'ami-arm', architecture: 'arm64', variant: undefined, amiFamily: 'AL2023', source: 'ec2:DescribeImages', name: 'ami-arm', creationDate: '2025-03-01T00:00:00.000Z' },
      ]);
      expect(ec2).toHaveReceivedCommandTimes(DescribeImagesCommand, 2);
      expect(ec2).toHaveReceivedNthCommandWith(DescribeImagesCommand, 1, { Filters: [{ Name: 'name', Values: ['team-ami-*'] }], Owners: ['self', 'amazon'], IncludeDeprecated: true });
      expect(ec2).toHaveReceivedNthCommandWith(DescribeImagesCommand, 2, { Filters: [{ Name: 'tag-key', Values: ['team/ami'] }], IncludeDeprecated: true });
    });

    it('breaks a creation-date tie by the smaller image id', async () => {
      ec2.on(DescribeImagesCommand).resolves({ Images: [image('ami-b', 'x86_64', '2025-01-01T00:00:00.000Z'), image('ami-a', 'x86_64', '2025-01-01T00:00:00.000Z')] });
      const amis = await resolver().resolve(nodeClass('ids', { amiFamily: 'Custom', amiSelectorTerms: [{ id: 'ami-a' }, { id: 'ami-b' }] }));
      expect(amis.map((a) => a.imageId)).toEqual(['ami-a']);
      expect(ec2).toHaveReceivedCommandWith(DescribeImagesCommand, { Filters: [{ Name: 'image-id', Values: ['ami-a', 'ami-b'] }], IncludeDeprecated: true });
    });

    it('reads ssmParameter terms first and looks their image ids up by image-id', async () => {
      answerParameters(ssm, { '/my/ami': 'ami-fromssm' });
      ec2.on(DescribeImagesCommand).resolves({ Images: [image('ami-fromssm', 'arm64', '2025-01-01T00:00:00.000Z')] });
      const amis = await resolver().resolve(nodeClass('ssm', { amiFamily: 'Bottlerocket', amiSelectorTerms: [{ ssmParameter: '/my/ami' }] }));
      expect(amis.map((a) => `${a.imageId} ${a.architecture} ${a.amiFamily}`)).toEqual(['ami-fromssm arm64 Bottlerocket']);
      expect(ec2).toHaveReceivedCommandWith(DescribeImagesCommand, { Filters: [{ Name: 'image-id', Values: ['ami-fromssm'] }] });
    });

    it('reuses DescribeImages results for a minute', async () => {
      ec2.on(DescribeImagesCommand).resolves({ Images: [image('ami-a', 'x86_64', '2025-01-01T00:00:00.000Z')] });
      const clock = manualClock();
      const amis = resolver(clock);
      const custom = nodeClass('custom', { amiFamily: 'AL2023', amiSelectorTerms: [{ id: 'ami-a' }] });
      await amis.resolve(custom);
      clock.advance(59_999);
      await amis.resolve(custom);
      expect(ec2).toHaveReceivedCommandTimes(DescribeImagesCommand, 1);
      clock.advance(1);
      await amis.resolve(custom);
      expect(ec2).toHaveReceivedCommandTimes(DescribeImagesCommand, 2);
    });

    it('fails with AMINotFound naming the node class and its terms when no image matches', async () => {
      ec2.on(DescribeImagesCommand).resolves({ Images: [] });
      await expect(resolver().resolve(nodeClass('nothing', { amiFamily: 'AL2023', amiSelectorTerms: [{ name: 'nope-*' }] }))).rejects.toThrow(
        /EC2NodeClass nothing: no amd64 or arm64 AMI matches amiSelectorTerms \[\{"name":"nope-\*"\}\]/,
      );
    });
  });
});
