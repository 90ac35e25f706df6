// The EC2 CloudProvider against a mocked EC2: exact CreateFleet / DescribeInstances / TerminateInstances shapes with
// aws-sdk-client-mock (which replaces `send`, so no middleware runs), and the SDK's own retries through a fake HTTP
// handler under the real middleware stack (serialisation, retry, deserialisation).
import { Readable } from 'node:stream';
import {
  CreateFleetCommand,
  DescribeInstancesCommand,
  EC2Client,
  EC2ServiceException,
  TerminateInstancesCommand,
  type CreateFleetCommandInput,
  type CreateFleetCommandOutput,
  type Instance,
} from '@aws-sdk/client-ec2';
import { ConfiguredRetryStrategy } from '@smithy/core/retry';
import { mockClient } from 'aws-sdk-client-mock';
import { allCustomMatcher } from 'aws-sdk-client-mock-vitest';
import 'aws-sdk-client-mock-vitest/extend';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  CLIENT_TOKEN_MAX_LENGTH,
  clientToken,
  DEFAULT_EC2_MAX_ATTEMPTS,
  Ec2CloudProvider,
  ec2Client,
  ec2ClientConfig,
  type Ec2CloudProviderProps,
} from '../../../shared/adapters/aws/ec2-cloud-provider.js';
import type { LaunchTemplateInput, LaunchTemplateSource, ResolvedLaunchTemplate, SubnetSource } from '../../../shared/adapters/aws/launch-contracts.js';
import { ec2NodeClassSchema, type EC2NodeClass } from '../../../shared/core/api/ec2nodeclass.js';
import type { CapacityType } from '../../../shared/core/api/labels.js';
import { CloudProviderError, InsufficientCapacityError, ThrottledError } from '../../../shared/core/errors.js';
import type { InstanceType } from '../../../shared/core/instancetypes/offering.js';
import type { LaunchRequest } from '../../../shared/ports/cloud-provider.js';
import { instanceType } from '../../support/builders.js';

expect.extend(allCustomMatcher);

const CLUSTER = 'prod';
const REGION = 'us-west-2';
const NOW = Date.parse('2025-06-01T12:00:00Z');
const GPU = 'karpenter.k8s.aws/instance-gpu-manufacturer';

const NODE_CLASS: EC2NodeClass = ec2NodeClassSchema.parse({
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name: 'default' },
  spec: {
    amiSelectorTerms: [{ alias: 'al2023@latest' }],
    subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': CLUSTER } }],
    securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': CLUSTER } }],
    role: 'KarpenterNodeRole-prod',
    tags: { team: 'payments', Name: 'set-by-user' },
  },
});

const TYPES: InstanceType[] = [
  instanceType('m5.large', { cpu: 1930, memory: 6903, price: 0.096 }),
  instanceType('m5.xlarge', { cpu: 3920, memory: 14162, price: 0.192 }),
  instanceType('m6g.large', { cpu: 1930, memory: 6903, price: 0.077, labels: { 'kubernetes.io/arch': 'arm64' } }),
  instanceType('g5.xlarge', { cpu: 3920, memory: 14162, price: 1.006, labels: { [GPU]: 'nvidia' } }),
];

/** A template serving one architecture, with or without NVIDIA GPUs (as the AL2023 standard and nvidia AMIs do). */
function lt(name: string, imageId: string, architecture: 'amd64' | 'arm64', nvidia = false): ResolvedLaunchTemplate {
  return {
    launchTemplateName: name,
    imageId,
    architecture,
    matches: (labels) => labels['kubernetes.io/arch'] === architecture && (labels[GPU] === 'nvidia') === nvidia,
  };
}
const AMD = lt('karpenter.k8s.aws/amd', 'ami-amd64', 'amd64');
const ARM = lt('karpenter.k8s.aws/arm', 'ami-arm64', 'arm64');
const NVIDIA = lt('karpenter.k8s.aws/nvidia', 'ami-nvidia', 'amd64', true);

/** LaunchTemplateSource fake: fixed templates, records resolve inputs and invalidations. */
class FakeLaunchTemplates implements LaunchTemplateSource {
  readonly inputs: LaunchTemplateInput[] = [];
  readonly invalidated: string[] = [];
  constructor(public templates: ResolvedLaunchTemplate[] = [AMD, ARM]) {}
  async resolve(input: LaunchTemplateInput): Promise<ResolvedLaunchTemplate[]> {
    this.inputs.push(input);
    return this.templates;
  }
  invalidate(nodeClass: string): void {
    this.invalidated.push(nodeClass);
  }
}

/** SubnetSource fake: us-west-2a and us-west-2b have subnets, us-west-2c none. */
const SUBNETS: SubnetSource = {
  zonalSubnets: async () =>
    new Map([
      ['us-west-2a', 'subnet-aaaa'],
      ['us-west-2b', 'subnet-bbbb'],
    ]),
};

function request(overrides: Partial<LaunchRequest> = {}): LaunchRequest {
  return {
    nodeClaim: 'general-x7k2p',
    nodePool: 'general',
    nodeClass: 'default',
    capacityType: 'spot',
    overrides: [
      { instanceType: 'm6g.large', zone: 'us-west-2a', price: 0.03 },
      { instanceType: 'm5.large', zone: 'us-west-2c', price: 0.035 },
      { instanceType: 'm5.large', zone: 'us-west-2a', price: 0.04 },
      { instanceType: 'm5.large', zone: 'us-west-2a', price: 0.04 },
      { instanceType: 'm5.large', zone: 'us-west-2b', price: 0.041 },
      { instanceType: 'm5.xlarge', zone: 'us-west-2b', price: 0.08 },
    ],
    // What the provision controller passes (shared/controllers/provision.ts).
    tags: {
      'kubernetes.io/cluster/prod': 'owned',
      'eks:eks-cluster-name': 'prod',
      'karpenter.sh/nodepool': 'general',
      'karpenter.k8s.aws/ec2nodeclass': 'default',
      'karpenter.sh/nodeclaim': 'general-x7k2p',
      Name: 'general-x7k2p',
    },
    labels: { 'karpenter.sh/nodepool': 'general', 'topology.kubernetes.io/region': REGION },
    taints: [{ key: 'dedicated', value: 'batch', effect: 'NoSchedule' }],
    startupTaints: [{ key: 'node.cilium.io/agent-not-ready', value: 'true', effect: 'NoExecute' }],
    ...overrides,
  };
}

interface Harness {
  readonly provider: Ec2CloudProvider;
  readonly ec2: EC2Client;
  readonly templates: FakeLaunchTemplates;
}

function harness(opts: { ec2?: EC2Client; templates?: FakeLaunchTemplates; nodeClass?: EC2NodeClass | undefined; types?: InstanceType[] } = {}): Harness {
  const ec2 = opts.ec2 ?? mockedEc2;
  const templates = opts.templates ?? new FakeLaunchTemplates();
  const nodeClass = 'nodeClass' in opts ? opts.nodeClass : NODE_CLASS;
  const props: Ec2CloudProviderProps = {
    ec2,
    clusterName: CLUSTER,
    region: REGION,
    nodeClass: async (name) => (name === 'default' ? nodeClass : undefined),
    launchTemplates: templates,
    subnets: SUBNETS,
    instanceTypes: { getInstanceTypes: async () => opts.types ?? TYPES },
    clock: { now: () => NOW },
  };
  return { provider: new Ec2CloudProvider(props), ec2, templates };
}

type FleetInstance = NonNullable<CreateFleetCommandOutput['Instances']>[number];
type FleetError = NonNullable<CreateFleetCommandOutput['Errors']>[number];

/** A fleet instance as CreateFleet reports it (the override it launched from, Lifecycle, ids). */
function fleetInstance(id: string, type: string, subnet: string, zone: string | undefined, lifecycle: 'spot' | 'absent' = 'spot'): FleetInstance {
  return {
    LaunchTemplateAndOverrides: {
      LaunchTemplateSpecification: { LaunchTemplateName: AMD.launchTemplateName, Version: '1' },
      Overrides: { InstanceType: type as FleetInstance['InstanceType'], SubnetId: subnet, ...(zone ? { AvailabilityZone: zone } : {}), ImageId: AMD.imageId },
    },
    ...(lifecycle === 'spot' ? { Lifecycle: lifecycle } : {}),
    InstanceIds: [id],
    InstanceType: type as FleetInstance['InstanceType'],
  };
}

/** A fleet error for one override (or for none, when `type` is undefined). */
function fleetError(code: string, type?: string, subnet?: string, zone?: string): FleetError {
  return {
    ...(type !== undefined
      ? {
          LaunchTemplateAndOverrides: {
            LaunchTemplateSpecification: { LaunchTemplateName: AMD.launchTemplateName, Version: '1' },
            Overrides: { InstanceType: type as FleetInstance['InstanceType'], ...(subnet ? { SubnetId: subnet } : {}), ...(zone ? { AvailabilityZone: zone } : {}) },
          },
        }
      : {}),
    Lifecycle: 'spot',
    ErrorCode: code,
    ErrorMessage: `${code} for ${type ?? 'the request'}`,
  };
}

function serviceError(name: string, message = `${name} happened`, httpStatusCode = 400): EC2ServiceException {
  return new EC2ServiceException({ name, message, $fault: 'client', $metadata: { httpStatusCode, requestId: 'req-1' } });
}

/** The client the mock replaces `send` of (this instance only: the retry tests below use real clients). */
const mockedEc2 = new EC2Client({ region: REGION, credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' } });
const ec2Mock = mockClient(mockedEc2);
beforeEach(() => ec2Mock.reset());

function sentFleets(): CreateFleetCommandInput[] {
  return ec2Mock.commandCalls(CreateFleetCommand).map((c) => c.args[0].input);
}

const SKIFF_TAGS = [
  { Key: 'team', Value: 'payments' },
  { Key: 'Name', Value: 'general-x7k2p' },
  { Key: 'kubernetes.io/cluster/prod', Value: 'owned' },
  { Key: 'eks:eks-cluster-name', Value: 'prod' },
  { Key: 'karpenter.sh/nodepool', Value: 'general' },
  { Key: 'karpenter.k8s.aws/ec2nodeclass', Value: 'default' },
  { Key: 'karpenter.sh/nodeclaim', Value: 'general-x7k2p' },
];

describe('Ec2CloudProvider', () => {
  describe('create', () => {
    it('sends one instant CreateFleet: a config per template, overrides per zone subnet with the template AMI, tags on instance, volume and fleet', async () => {
      ec2Mock.on(CreateFleetCommand).resolves({ Instances: [fleetInstance('i-0abc', 'm6g.large', 'subnet-aaaa', 'us-west-2a')] });
      const { provider } = harness();
      await provider.create(request());
      expect(ec2Mock).toHaveReceivedCommandTimes(CreateFleetCommand, 1);
      expect(sentFleets()[0]).toStrictEqual({
        Type: 'instant',
        ClientToken: clientToken(CLUSTER, 'general-x7k2p'),
        TargetCapacitySpecification: { TotalTargetCapacity: 1, DefaultTargetCapacityType: 'spot' },
        SpotOptions: { AllocationStrategy: 'price-capacity-optimized' },
        LaunchTemplateConfigs: [
          {
            LaunchTemplateSpecification: { LaunchTemplateName: 'karpenter.k8s.aws/amd', Version: '$Latest' },
            Overrides: [
              { InstanceType: 'm5.large', SubnetId: 'subnet-aaaa', AvailabilityZone: 'us-west-2a', ImageId: 'ami-amd64' },
              { InstanceType: 'm5.large', SubnetId: 'subnet-bbbb', AvailabilityZone: 'us-west-2b', ImageId: 'ami-amd64' },
              { InstanceType: 'm5.xlarge', SubnetId: 'subnet-bbbb', AvailabilityZone: 'us-west-2b', ImageId: 'ami-amd64' },
            ],
          },
          {
            LaunchTemplateSpecification: { LaunchTemplateName: 'karpenter.k8s.aws/arm', Version: '$Latest' },
            Overrides: [{ InstanceType: 'm6g.large', SubnetId: 'subnet-aaaa', AvailabilityZone: 'us-west-2a', ImageId: 'ami-arm64' }],
          },
        ],
        TagSpecifications: [
          { ResourceType: 'instance', Tags: SKIFF_TAGS },
          { ResourceType: 'volume', Tags: SKIFF_TAGS },
          { ResourceType: 'fleet', Tags: SKIFF_TAGS },
        ],
      });
    });

    it.each<[CapacityType, Partial<CreateFleetCommandInput>]>([
      ['spot', { SpotOptions: { AllocationStrategy: 'price-capacity-optimized' } }],
      ['on-demand', { OnDemandOptions: { AllocationStrategy: 'lowest-price' } }],
    ])('asks for %s with its allocation strategy and no options of the other market', async (capacityType, options) => {
      ec2Mock.on(CreateFleetCommand).resolves({ Instances: [fleetInstance('i-0abc', 'm5.large', 'subnet-aaaa', 'us-west-2a', capacityType === 'spot' ? 'spot' : 'absent')] });
      await harness().provider.create(request({ capacityType }));
      const sent = sentFleets()[0]!;
      expect(sent.TargetCapacitySpecification).toStrictEqual({ TotalTargetCapacity: 1, DefaultTargetCapacityType: capacityType });
      expect({ SpotOptions: sent.SpotOptions, OnDemandOptions: sent.OnDemandOptions }).toStrictEqual({ SpotOptions: undefined, OnDemandOptions: undefined, ...options });
    });

    it('sends the same ClientToken on every call for a NodeClaim, and a different one for another NodeClaim or cluster', async () => {
      ec2Mock.on(CreateFleetCommand).resolves({ Instances: [fleetInstance('i-0abc', 'm5.large', 'subnet-aaaa', 'us-west-2a')] });
      const { provider } = harness();
      await provider.create(request());
      await provider.create(request());
      await provider.create(request({ nodeClaim: 'general-b2c4d' }));
      const [first, second, other] = sentFleets().map((i) => i.ClientToken);
      expect(first).toBe(second);
      expect(first).not.toBe(other);
      expect(first).toMatch(/^general-x7k2p\.[0-9a-f]{12}$/);
      expect(clientToken('staging', 'general-x7k2p')).not.toBe(first);
    });

    it('keeps the ClientToken within 64 ASCII characters for a 253-character NodeClaim name, stable and distinct', () => {
      const long = `${'a'.repeat(245)}-x7k2p`.slice(0, 253);
      const other = `${'a'.repeat(245)}-b2c4d`.slice(0, 253);
      const token = clientToken(CLUSTER, long);
      expect(token).toMatch(/^[0-9a-f]{64}$/);
      expect(token.length).toBeLessThanOrEqual(CLIENT_TOKEN_MAX_LENGTH);
      expect(clientToken(CLUSTER, long)).toBe(token);
      expect(clientToken(CLUSTER, other)).not.toBe(token);
      expect(clientToken(CLUSTER, long, 1)).not.toBe(token);
      // The longest readable token: 64 characters exactly; one more and it is hashed.
      expect(clientToken(CLUSTER, 'n'.repeat(51))).toHaveLength(64);
      expect(clientToken(CLUSTER, 'n'.repeat(52))).toMatch(/^[0-9a-f]{64}$/);
    });

    it("tags with spec.tags first and Skiff's tags winning (Name is the NodeClaim, not spec.tags' Name)", async () => {
      ec2Mock.on(CreateFleetCommand).resolves({ Instances: [fleetInstance('i-0abc', 'm5.large', 'subnet-aaaa', 'us-west-2a')] });
      await harness().provider.create(request({ tags: { ...request().tags, 'cost-center': '42' } }));
      const tagSpecs = sentFleets()[0]!.TagSpecifications!;
      expect(tagSpecs.map((t) => t.ResourceType)).toStrictEqual(['instance', 'volume', 'fleet']);
      for (const spec of tagSpecs) {
        expect(Object.fromEntries(spec.Tags!.map((t) => [t.Key, t.Value]))).toStrictEqual({
          team: 'payments',
          Name: 'general-x7k2p',
          'cost-center': '42',
          'kubernetes.io/cluster/prod': 'owned',
          'eks:eks-cluster-name': 'prod',
          'karpenter.sh/nodepool': 'general',
          'karpenter.sh/nodeclaim': 'general-x7k2p',
          'karpenter.k8s.aws/ec2nodeclass': 'default',
        });
      }
    });

    it('sends spec.context as Context', async () => {
      ec2Mock.on(CreateFleetCommand).resolves({ Instances: [fleetInstance('i-0abc', 'm5.large', 'subnet-aaaa', 'us-west-2a')] });
      await harness({ nodeClass: { ...NODE_CLASS, spec: { ...NODE_CLASS.spec, context: 'ctx-123' } } }).provider.create(request());
      expect(sentFleets()[0]!.Context).toBe('ctx-123');
    });

    it("resolves launch templates with the NodeClaim's labels, taints and the requested types with their labels", async () => {
      ec2Mock.on(CreateFleetCommand).resolves({ Instances: [fleetInstance('i-0abc', 'm5.large', 'subnet-aaaa', 'us-west-2a')] });
      const { provider, templates } = harness();
      const r = request();
      await provider.create(r);
      expect(templates.inputs).toHaveLength(1);
      const input = templates.inputs[0]!;
      expect(input.nodeClass).toBe(NODE_CLASS);
      expect({ nodePool: input.nodePool, nodeClaim: input.nodeClaim, labels: input.labels, taints: input.taints, startupTaints: input.startupTaints }).toStrictEqual({
        nodePool: 'general',
        nodeClaim: 'general-x7k2p',
        labels: r.labels,
        taints: r.taints,
        startupTaints: r.startupTaints,
      });
      expect(input.instanceTypes.map((t) => [t.name, t.labels['kubernetes.io/arch']])).toStrictEqual([
        ['m6g.large', 'arm64'],
        ['m5.large', 'amd64'],
        ['m5.xlarge', 'amd64'],
      ]);
    });

    it('sends GPU types only under the template whose AMI serves them', async () => {
      ec2Mock.on(CreateFleetCommand).resolves({ Instances: [fleetInstance('i-0abc', 'g5.xlarge', 'subnet-aaaa', 'us-west-2a')] });
      const templates = new FakeLaunchTemplates([AMD, ARM, NVIDIA]);
      await harness({ templates }).provider.create(
        request({
          overrides: [
            { instanceType: 'm5.large', zone: 'us-west-2a', price: 0.04 },
            { instanceType: 'g5.xlarge', zone: 'us-west-2a', price: 0.5 },
          ],
        }),
      );
      expect(sentFleets()[0]!.LaunchTemplateConfigs).toStrictEqual([
        {
          LaunchTemplateSpecification: { LaunchTemplateName: 'karpenter.k8s.aws/amd', Version: '$Latest' },
          Overrides: [{ InstanceType: 'm5.large', SubnetId: 'subnet-aaaa', AvailabilityZone: 'us-west-2a', ImageId: 'ami-amd64' }],
        },
        {
          LaunchTemplateSpecification: { LaunchTemplateName: 'karpenter.k8s.aws/nvidia', Version: '$Latest' },
          Overrides: [{ InstanceType: 'g5.xlarge', SubnetId: 'subnet-aaaa', AvailabilityZone: 'us-west-2a', ImageId: 'ami-nvidia' }],
        },
      ]);
    });

    it('returns the launched instance: its type, zone, capacity type from Lifecycle, the price of its override, providerId', async () => {
      ec2Mock.on(CreateFleetCommand).resolves({ Instances: [fleetInstance('i-0abc', 'm5.large', 'subnet-bbbb', 'us-west-2b')] });
      expect(await harness().provider.create(request())).toStrictEqual({
        instanceId: 'i-0abc',
        providerId: 'aws:///us-west-2b/i-0abc',
        instanceType: 'm5.large',
        zone: 'us-west-2b',
        capacityType: 'spot',
        price: 0.041,
        launchedAt: NOW,
        unavailableOfferings: [],
      });
    });

    it('takes the zone from the subnet when the response names only the subnet, and on-demand when Lifecycle is absent', async () => {
      ec2Mock.on(CreateFleetCommand).resolves({ Instances: [fleetInstance('i-0abc', 'm5.xlarge', 'subnet-bbbb', undefined, 'absent')] });
      const launched = await harness().provider.create(request({ capacityType: 'on-demand' }));
      expect({ zone: launched.zone, capacityType: launched.capacityType, price: launched.price, providerId: launched.providerId }).toStrictEqual({
        zone: 'us-west-2b',
        capacityType: 'on-demand',
        price: 0.08,
        providerId: 'aws:///us-west-2b/i-0abc',
      });
    });

    it('throws InsufficientCapacityError with the offerings the errors name when every error is an ICE code', async () => {
      ec2Mock.on(CreateFleetCommand).resolves({
        Instances: [],
        Errors: [
          fleetError('InsufficientInstanceCapacity', 'm5.large', 'subnet-aaaa', 'us-west-2a'),
          fleetError('InsufficientInstanceCapacity', 'm5.large', 'subnet-bbbb'), // zone from the subnet
          fleetError('MaxSpotInstanceCountExceeded', 'm6g.large', 'subnet-aaaa', 'us-west-2a'),
        ],
      });
      const error = await harness().provider.create(request()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InsufficientCapacityError);
      const ice = error as InsufficientCapacityError;
      expect(ice.errorCode).toBe('InsufficientInstanceCapacity');
      expect(ice.offerings).toStrictEqual([
        { instanceType: 'm5.large', zone: 'us-west-2a', capacityType: 'spot' },
        { instanceType: 'm5.large', zone: 'us-west-2b', capacityType: 'spot' },
        { instanceType: 'm6g.large', zone: 'us-west-2a', capacityType: 'spot' },
      ]);
      expect(ice.message).toContain('MaxSpotInstanceCountExceeded');
    });

    it.each([
      'InsufficientInstanceCapacity',
      'MaxSpotInstanceCountExceeded',
      'VcpuLimitExceeded',
      'UnfulfillableCapacity',
      'Unsupported',
      'InsufficientFreeAddressesInSubnet',
      'MaxFleetCountExceeded',
      'ReservationCapacityExceeded',
    ])('treats %s naming no override as ICE for every offering sent', async (code) => {
      ec2Mock.on(CreateFleetCommand).resolves({ Errors: [fleetError(code)] });
      const error = await harness().provider.create(request({ capacityType: 'on-demand' })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InsufficientCapacityError);
      expect((error as InsufficientCapacityError).errorCode).toBe(code);
      expect((error as InsufficientCapacityError).offerings).toStrictEqual([
        { instanceType: 'm6g.large', zone: 'us-west-2a', capacityType: 'on-demand' },
        { instanceType: 'm5.large', zone: 'us-west-2a', capacityType: 'on-demand' },
        { instanceType: 'm5.large', zone: 'us-west-2b', capacityType: 'on-demand' },
        { instanceType: 'm5.xlarge', zone: 'us-west-2b', capacityType: 'on-demand' },
      ]);
    });

    it('reports the ICE offerings as unavailableOfferings when an instance launched anyway', async () => {
      ec2Mock.on(CreateFleetCommand).resolves({
        Instances: [fleetInstance('i-0abc', 'm5.large', 'subnet-bbbb', 'us-west-2b')],
        Errors: [
          fleetError('InsufficientInstanceCapacity', 'm6g.large', 'subnet-aaaa', 'us-west-2a'),
          fleetError('InsufficientInstanceCapacity', 'm5.large', 'subnet-aaaa', 'us-west-2a'),
          fleetError('InvalidParameterValue', 'm5.xlarge', 'subnet-bbbb', 'us-west-2b'),
        ],
      });
      const launched = await harness().provider.create(request());
      expect(launched.instanceId).toBe('i-0abc');
      expect(launched.unavailableOfferings).toStrictEqual([
        { instanceType: 'm6g.large', zone: 'us-west-2a', capacityType: 'spot' },
        { instanceType: 'm5.large', zone: 'us-west-2a', capacityType: 'spot' },
      ]);
    });

    it('throws CloudProviderError with the EC2 code when a non-ICE error is among the errors', async () => {
      ec2Mock.on(CreateFleetCommand).resolves({
        Errors: [fleetError('InsufficientInstanceCapacity', 'm5.large', 'subnet-aaaa', 'us-west-2a'), fleetError('InvalidParameterValue', 'm5.xlarge', 'subnet-bbbb', 'us-west-2b')],
      });
      const error = await harness().provider.create(request()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CloudProviderError);
      expect((error as CloudProviderError).code).toBe('InvalidParameterValue');
      expect((error as CloudProviderError).message).toContain('InvalidParameterValue for m5.xlarge');
    });

    it('throws CloudProviderError NoInstanceLaunched when the fleet reports neither an instance nor an error', async () => {
      ec2Mock.on(CreateFleetCommand).resolves({ FleetId: 'fleet-1', Instances: [], Errors: [] });
      await expect(harness().provider.create(request())).rejects.toMatchObject({ name: 'CloudProviderError', code: 'NoInstanceLaunched' });
    });

    it('invalidates the templates and retries once with a new token when the fleet reports a launch template not found', async () => {
      ec2Mock
        .on(CreateFleetCommand)
        .resolvesOnce({ Errors: [fleetError('InvalidLaunchTemplateName.NotFoundException', 'm5.large', 'subnet-aaaa', 'us-west-2a')] })
        .resolvesOnce({ Instances: [fleetInstance('i-0abc', 'm5.large', 'subnet-aaaa', 'us-west-2a')] });
      const { provider, templates } = harness();
      const launched = await provider.create(request());
      expect(launched.instanceId).toBe('i-0abc');
      expect(templates.invalidated).toStrictEqual(['default']);
      expect(templates.inputs).toHaveLength(2);
      expect(sentFleets().map((i) => i.ClientToken)).toStrictEqual([clientToken(CLUSTER, 'general-x7k2p'), clientToken(CLUSTER, 'general-x7k2p', 1)]);
    });

    it('invalidates and retries once when CreateFleet throws a launch template not found, then gives up with its code', async () => {
      ec2Mock.on(CreateFleetCommand).rejects(serviceError('InvalidLaunchTemplateName.NotFoundException'));
      const { provider, templates } = harness();
      const error = await provider.create(request()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CloudProviderError);
      expect((error as CloudProviderError).code).toBe('InvalidLaunchTemplateName.NotFoundException');
      expect(ec2Mock).toHaveReceivedCommandTimes(CreateFleetCommand, 2);
      expect(templates.invalidated).toStrictEqual(['default', 'default']);
    });

    it('returns the instance a resumed NodeClaim already launched when its ClientToken no longer matches (IdempotentParameterMismatch)', async () => {
      ec2Mock.on(CreateFleetCommand).rejects(serviceError('IdempotentParameterMismatch'));
      ec2Mock.on(DescribeInstancesCommand).resolves({
        Reservations: [{ Instances: [{ InstanceId: 'i-0first', InstanceType: 'm5.large', Placement: { AvailabilityZone: 'us-west-2b' }, State: { Name: 'running' }, InstanceLifecycle: 'spot', LaunchTime: new Date(NOW - 60_000) }] }],
      });
      const launched = await harness().provider.create(request());
      expect(launched).toMatchObject({ instanceId: 'i-0first', zone: 'us-west-2b', capacityType: 'spot', price: 0.041, providerId: 'aws:///us-west-2b/i-0first' });
      expect(ec2Mock).toHaveReceivedCommandTimes(CreateFleetCommand, 1);
      expect(ec2Mock).toHaveReceivedCommandWith(DescribeInstancesCommand, {
        Filters: [
          { Name: 'tag:kubernetes.io/cluster/prod', Values: ['owned'] },
          { Name: 'tag:karpenter.sh/nodeclaim', Values: ['general-x7k2p'] },
          { Name: 'instance-state-name', Values: ['pending', 'running'] },
        ],
      });
    });

    it('launches afresh under a new token when the mismatched token launched nothing', async () => {
      ec2Mock.on(CreateFleetCommand).rejectsOnce(serviceError('IdempotentParameterMismatch')).resolves({ Instances: [fleetInstance('i-0new', 'm5.large', 'subnet-aaaa', 'us-west-2a')] });
      ec2Mock.on(DescribeInstancesCommand).resolves({ Reservations: [] });
      const launched = await harness().provider.create(request());
      expect(launched.instanceId).toBe('i-0new');
      const tokens = sentFleets().map((f) => f.ClientToken);
      expect(tokens).toHaveLength(2);
      expect(tokens[0]).not.toBe(tokens[1]);
    });

    it('keeps the EC2 code and the SDK error as cause for an unknown exception', async () => {
      const sdk = serviceError('UnauthorizedOperation', 'You are not authorized to perform this operation. Encoded authorization failure message: abc', 403);
      ec2Mock.on(CreateFleetCommand).rejects(sdk);
      const error = await harness().provider.create(request()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CloudProviderError);
      expect(error).toMatchObject({ code: 'UnauthorizedOperation', cause: sdk });
      expect((error as Error).message).toContain('Encoded authorization failure message: abc');
    });

    it('throws ThrottledError when the SDK gives up on RequestLimitExceeded', async () => {
      ec2Mock.on(CreateFleetCommand).rejects(serviceError('RequestLimitExceeded', 'Request limit exceeded.', 503));
      await expect(harness().provider.create(request())).rejects.toBeInstanceOf(ThrottledError);
    });

    it('rejects the reserved capacity type without calling EC2', async () => {
      const error = await harness().provider.create(request({ capacityType: 'reserved' })).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'CloudProviderError', code: 'UnsupportedCapacityType' });
      expect(ec2Mock).not.toHaveReceivedCommand(CreateFleetCommand);
    });

    it('throws CloudProviderError naming zones without subnets and types no AMI serves when no override is left', async () => {
      const templates = new FakeLaunchTemplates([ARM]);
      const error = await harness({ templates })
        .provider.create(
          request({
            overrides: [
              { instanceType: 'm5.large', zone: 'us-west-2a', price: 0.04 },
              { instanceType: 'm6g.large', zone: 'us-west-2c', price: 0.03 },
            ],
          }),
        )
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CloudProviderError);
      expect((error as CloudProviderError).code).toBe('NoLaunchableOverrides');
      expect((error as Error).message).toContain('zones without a subnet of EC2NodeClass default: us-west-2c');
      expect((error as Error).message).toContain('instance types no AMI of the EC2NodeClass serves: m5.large');
      expect(ec2Mock).not.toHaveReceivedCommand(CreateFleetCommand);
    });

    it('throws CloudProviderError NodeClassNotFound for an unknown EC2NodeClass', async () => {
      await expect(harness({ nodeClass: undefined }).provider.create(request())).rejects.toMatchObject({ name: 'CloudProviderError', code: 'NodeClassNotFound' });
      expect(ec2Mock).not.toHaveReceivedCommand(CreateFleetCommand);
    });
  });

  describe('list', () => {
    const instance = (id: string, extra: Partial<Instance> = {}): Instance => ({
      InstanceId: id,
      InstanceType: 'm5.large',
      Placement: { AvailabilityZone: 'us-west-2a' },
      State: { Name: 'running', Code: 16 },
      LaunchTime: new Date(NOW - 60_000),
      Tags: [
        { Key: 'karpenter.sh/nodeclaim', Value: `claim-${id}` },
        { Key: 'kubernetes.io/cluster/prod', Value: 'owned' },
      ],
      ...extra,
    });

    it("filters on the cluster tag, Skiff's NodeClaim tag and every state but terminated, and reads every page", async () => {
      // The paginator reuses one input object for every page, so each request is copied when it is sent.
      const calls: unknown[] = [];
      const pages = [
        { Reservations: [{ Instances: [instance('i-1'), instance('i-2', { InstanceLifecycle: 'spot', State: { Name: 'pending', Code: 0 } })] }], NextToken: 'page-2' },
        { Reservations: [{ Instances: [instance('i-3', { State: { Name: 'shutting-down', Code: 32 }, Placement: { AvailabilityZone: 'us-west-2b' } })] }] },
      ];
      ec2Mock.on(DescribeInstancesCommand).callsFake((input: unknown) => {
        calls.push(structuredClone(input));
        return pages[calls.length - 1];
      });
      const listed = await harness().provider.list();
      // toEqual: the paginator sends the first page with `NextToken: undefined`, which is not serialised.
      expect(calls).toEqual([
        {
          Filters: [
            { Name: 'tag:kubernetes.io/cluster/prod', Values: ['owned'] },
            { Name: 'tag-key', Values: ['karpenter.sh/nodeclaim'] },
            { Name: 'instance-state-name', Values: ['pending', 'running', 'stopping', 'stopped', 'shutting-down'] },
          ],
          MaxResults: 1000,
        },
        {
          Filters: [
            { Name: 'tag:kubernetes.io/cluster/prod', Values: ['owned'] },
            { Name: 'tag-key', Values: ['karpenter.sh/nodeclaim'] },
            { Name: 'instance-state-name', Values: ['pending', 'running', 'stopping', 'stopped', 'shutting-down'] },
          ],
          MaxResults: 1000,
          NextToken: 'page-2',
        },
      ]);
      expect(listed).toStrictEqual([
        {
          instanceId: 'i-1',
          instanceType: 'm5.large',
          zone: 'us-west-2a',
          capacityType: 'on-demand',
          state: 'running',
          tags: { 'karpenter.sh/nodeclaim': 'claim-i-1', 'kubernetes.io/cluster/prod': 'owned' },
          launchedAt: NOW - 60_000,
        },
        {
          instanceId: 'i-2',
          instanceType: 'm5.large',
          zone: 'us-west-2a',
          capacityType: 'spot',
          state: 'pending',
          tags: { 'karpenter.sh/nodeclaim': 'claim-i-2', 'kubernetes.io/cluster/prod': 'owned' },
          launchedAt: NOW - 60_000,
        },
        {
          instanceId: 'i-3',
          instanceType: 'm5.large',
          zone: 'us-west-2b',
          capacityType: 'on-demand',
          state: 'shutting-down',
          tags: { 'karpenter.sh/nodeclaim': 'claim-i-3', 'kubernetes.io/cluster/prod': 'owned' },
          launchedAt: NOW - 60_000,
        },
      ]);
    });

    it('translates a throttled DescribeInstances into ThrottledError', async () => {
      ec2Mock.on(DescribeInstancesCommand).rejects(serviceError('RequestLimitExceeded', 'Request limit exceeded.', 503));
      await expect(harness().provider.list()).rejects.toBeInstanceOf(ThrottledError);
    });
  });

  describe('delete', () => {
    it('terminates the instance with TerminateInstances', async () => {
      ec2Mock.on(TerminateInstancesCommand).resolves({ TerminatingInstances: [{ InstanceId: 'i-0abc' }] });
      await harness().provider.delete('i-0abc');
      expect(ec2Mock).toHaveReceivedCommandExactlyOnceWith(TerminateInstancesCommand, { InstanceIds: ['i-0abc'] });
      expect(ec2Mock.commandCalls(TerminateInstancesCommand)[0]!.args[0].input).toStrictEqual({ InstanceIds: ['i-0abc'] });
    });

    it('succeeds when the instance is already gone (InvalidInstanceID.NotFound)', async () => {
      ec2Mock.on(TerminateInstancesCommand).rejects(serviceError('InvalidInstanceID.NotFound', "The instance ID 'i-0abc' does not exist"));
      await expect(harness().provider.delete('i-0abc')).resolves.toBeUndefined();
    });

    it('throws CloudProviderError with the EC2 code for other failures', async () => {
      ec2Mock.on(TerminateInstancesCommand).rejects(serviceError('UnauthorizedOperation', 'not allowed', 403));
      await expect(harness().provider.delete('i-0abc')).rejects.toMatchObject({ name: 'CloudProviderError', code: 'UnauthorizedOperation' });
    });
  });

  describe('getInstanceTypes', () => {
    it("gives the source's list itself when every offering is in a zone with a subnet", async () => {
      expect(await harness().provider.getInstanceTypes({ nodeClass: 'default' })).toBe(TYPES);
    });

    it('offers a type only in the zones where the EC2NodeClass has a subnet, as Karpenter does', async () => {
      // us-west-2c has no subnet (SUBNETS): a plan there could never launch.
      const wide = TYPES.map((t) => instanceType(t.name, { cpu: 1930, memory: 6903, price: 0.1, zones: ['us-west-2a', 'us-west-2b', 'us-west-2c'] }));
      const { provider } = harness({ types: wide });
      const types = await provider.getInstanceTypes({ nodeClass: 'default' });
      expect(types.map((t) => t.name)).toEqual(TYPES.map((t) => t.name));
      for (const t of types) {
        expect(new Set(t.offerings.map((o) => o.zone))).toEqual(new Set(['us-west-2a', 'us-west-2b']));
        expect(t.requirements.get('topology.kubernetes.io/zone').has('us-west-2c')).toBe(false);
      }
      // A type offered only where there is no subnet is not offered at all.
      const only = await harness({ types: [instanceType('m5.large', { cpu: 1930, memory: 6903, price: 0.1, zones: ['us-west-2c'] })] }).provider.getInstanceTypes({ nodeClass: 'default' });
      expect(only).toEqual([]);
    });
  });
});

// ---- The SDK's retries, through the real middleware stack ----

/** One scripted HTTP response of the fake EC2 endpoint. */
interface Scripted {
  readonly status: number;
  readonly xml: string;
}

/** EC2's error document for a code (query protocol). */
function errorXml(code: string, message: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error><Code>${code}</Code><Message>${message}</Message></Error></Errors><RequestID>req-1</RequestID></Response>`;
}

/** A CreateFleet response launching one spot m5.large in us-west-2a. */
const LAUNCHED_XML = `<CreateFleetResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>req-2</requestId><fleetId>fleet-1</fleetId><errorSet/><fleetInstanceSet><item><launchTemplateAndOverrides><launchTemplateSpecification><launchTemplateName>karpenter.k8s.aws/amd</launchTemplateName><version>1</version></launchTemplateSpecification><overrides><instanceType>m5.large</instanceType><subnetId>subnet-aaaa</subnetId><availabilityZone>us-west-2a</availabilityZone></overrides></launchTemplateAndOverrides><lifecycle>spot</lifecycle><instanceIds><item>i-0abc</item></instanceIds><instanceType>m5.large</instanceType></item></fleetInstanceSet></CreateFleetResponse>`;

const THROTTLED: Scripted = { status: 503, xml: errorXml('RequestLimitExceeded', 'Request limit exceeded.') };

/** A fake HTTP handler: answers each request with the next scripted response (the last repeats), records bodies. */
function fakeEndpoint(script: readonly Scripted[]): { handler: NonNullable<ConstructorParameters<typeof EC2Client>[0]>['requestHandler']; bodies: string[] } {
  const bodies: string[] = [];
  const handler = {
    async handle(req: { body?: unknown }) {
      bodies.push(String(req.body));
      const next = script[Math.min(bodies.length - 1, script.length - 1)]!;
      return { response: { statusCode: next.status, headers: { 'content-type': 'text/xml;charset=UTF-8' }, body: Readable.from([next.xml]) } };
    },
    updateHttpClientConfig() {},
    httpHandlerConfigs: () => ({}),
  };
  return { handler: handler as never, bodies };
}

/** The ClientToken of a form-encoded CreateFleet body. */
function tokenOf(body: string): string | null {
  return new URLSearchParams(body).get('ClientToken');
}

describe('Ec2CloudProvider with the SDK retry strategy', () => {
  const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' };
  /** Skiff's client configuration with a 1 ms backoff instead of the SDK's 1 s throttling base (the SDK's own strategy class). */
  const fastClient = (handler: ReturnType<typeof fakeEndpoint>['handler']): EC2Client =>
    new EC2Client({ ...ec2ClientConfig({ region: REGION }), credentials, requestHandler: handler, retryStrategy: new ConfiguredRetryStrategy(DEFAULT_EC2_MAX_ATTEMPTS, () => 1) });

  it('launches once when RequestLimitExceeded comes twice, resending the same ClientToken', async () => {
    const endpoint = fakeEndpoint([THROTTLED, THROTTLED, { status: 200, xml: LAUNCHED_XML }]);
    const launched = await harness({ ec2: fastClient(endpoint.handler) }).provider.create(request());
    expect(launched).toMatchObject({ instanceId: 'i-0abc', zone: 'us-west-2a', capacityType: 'spot', price: 0.04 });
    expect(endpoint.bodies).toHaveLength(3);
    expect(new Set(endpoint.bodies.map(tokenOf))).toStrictEqual(new Set([clientToken(CLUSTER, 'general-x7k2p')]));
  });

  it('throws ThrottledError after maxAttempts (8) when RequestLimitExceeded never stops', async () => {
    const endpoint = fakeEndpoint([THROTTLED]);
    const error = await harness({ ec2: fastClient(endpoint.handler) }).provider.create(request()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ThrottledError);
    expect((error as Error).cause).toMatchObject({ name: 'RequestLimitExceeded', $metadata: { attempts: 8 } });
    expect(endpoint.bodies).toHaveLength(8);
  });

  it('does not retry a client error such as UnauthorizedOperation', async () => {
    const endpoint = fakeEndpoint([{ status: 403, xml: errorXml('UnauthorizedOperation', 'You are not authorized to perform this operation.') }]);
    const error = await harness({ ec2: fastClient(endpoint.handler) }).provider.create(request()).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'CloudProviderError', code: 'UnauthorizedOperation' });
    expect(endpoint.bodies).toHaveLength(1);
  });

  describe('the production client (ec2Client), on fake timers', () => {
    beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] }));
    afterEach(() => vi.useRealTimers());

    it('retries RequestLimitExceeded with its own standard strategy (no test backoff) and launches once', async () => {
      const endpoint = fakeEndpoint([THROTTLED, THROTTLED, { status: 200, xml: LAUNCHED_XML }]);
      const ec2 = new EC2Client({ ...ec2ClientConfig({ region: REGION }), credentials, requestHandler: endpoint.handler });
      const launching = harness({ ec2 }).provider.create(request());
      await vi.advanceTimersByTimeAsync(71_000); // the most 8 attempts can wait: 1+2+4+8+16+20+20 s
      expect((await launching).instanceId).toBe('i-0abc');
      expect(endpoint.bodies.map(tokenOf)).toStrictEqual(Array(3).fill(clientToken(CLUSTER, 'general-x7k2p')));
    });
  });
});

describe('ec2ClientConfig', () => {
  it('uses the standard retry mode with 8 attempts unless told otherwise', () => {
    expect(ec2ClientConfig({ region: REGION })).toStrictEqual({ region: REGION, maxAttempts: 8, retryMode: 'standard' });
    expect(ec2ClientConfig({ region: REGION, maxAttempts: 3 })).toStrictEqual({ region: REGION, maxAttempts: 3, retryMode: 'standard' });
  });

  it('builds a client whose resolved retry strategy is standard with 8 attempts', async () => {
    const client = ec2Client({ region: REGION });
    const strategy = await client.config.retryStrategy();
    expect((strategy as { mode?: string }).mode).toBe('standard');
    expect(await client.config.maxAttempts()).toBe(8);
    expect(await client.config.region()).toBe(REGION);
  });
});
