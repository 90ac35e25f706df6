// Layer 1 of the end-to-end run: Skiff's production AWS adapters, built the way shared/lambda/wiring.ts builds them
// (clients given a region only), reach the local endpoints through AWS_ENDPOINT_URL_<SERVICE> alone and do their work
// over the real wire protocols — EC2 Query backed by the simulated EC2, IAM Query, and JSON 1.1 for SSM, Pricing,
// EventBridge and Secrets Manager. Request serialization, response parsing and error parsing are the SDK's.
import { EC2Client } from '@aws-sdk/client-ec2';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { IAMClient } from '@aws-sdk/client-iam';
import { PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SSMClient } from '@aws-sdk/client-ssm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventBridgeDecisionPublisher } from '../../shared/adapters/aws/decision-events.js';
import { SubnetDiscovery } from '../../shared/adapters/aws/discovery.js';
import { Ec2CloudProvider, ec2Client } from '../../shared/adapters/aws/ec2-cloud-provider.js';
import { Ec2InstanceTypes } from '../../shared/adapters/aws/instance-types.js';
import { Ec2LaunchTemplates } from '../../shared/adapters/aws/launch-templates.js';
import { createPricingClient, fetchOnDemandPrices, fetchSpotPrices } from '../../shared/adapters/aws/pricing.js';
import { loadCatalog } from '../../shared/core/instancetypes/catalog.js';
import { systemClock } from '../../shared/ports/clock.js';
import { webhookSecret } from '../../shared/lambda/webhook-secret.js';
import { zonesOf } from '../../shared/sim/simulated-ec2.js';
import { nodeClass } from '../adapters/aws/aws-fixtures.js';
import { LOCAL_INSTANCE_TYPES, startLocalAws, type BootedInstance, type LocalAws } from './support/local-aws.js';

const REGION = 'us-west-2';
const CLUSTER = 'e2e';
let aws: LocalAws;
const booted: BootedInstance[] = [];
const saved = { ...process.env };

beforeAll(async () => {
  aws = await startLocalAws({ region: REGION, account: '111122223333', clusterName: CLUSTER, bootDelayMs: 10, onBoot: (b) => booted.push(b) });
  // What a Lambda's runtime gives the function (credentials, region), plus the endpoint override.
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'AKIDE2E', AWS_SECRET_ACCESS_KEY: 'e2e', AWS_REGION: REGION, AWS_EC2_METADATA_DISABLED: 'true', ...aws.endpointEnv });
});

afterAll(async () => {
  process.env = saved;
  await aws.close();
});

/** The CloudProvider as `controllerAdapters` builds it, with the seed's discovery tags on the local cluster. */
function cloud(): Ec2CloudProvider {
  const ec2 = ec2Client({ region: REGION });
  const prices = { latest: async () => undefined, currentFetchedAt: async () => undefined } as never;
  const cls = nodeClass('default', {
    subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': CLUSTER } }],
    securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': CLUSTER } }],
    role: 'KarpenterNodeRole-e2e',
  });
  return new Ec2CloudProvider({
    ec2,
    clusterName: CLUSTER,
    region: REGION,
    nodeClass: async (name) => (name === 'default' ? cls : undefined),
    launchTemplates: new Ec2LaunchTemplates({
      ec2,
      ssm: new SSMClient({ region: REGION }),
      iam: new IAMClient({ region: REGION }),
      region: REGION,
      cluster: { name: CLUSTER, endpoint: 'https://127.0.0.1:6443', certificateAuthority: Buffer.from('ca').toString('base64'), version: '1.31', serviceCidr: '10.100.0.0/16' },
      clock: systemClock,
    }),
    subnets: new SubnetDiscovery({ ec2, clock: systemClock }),
    instanceTypes: new Ec2InstanceTypes({ ec2, prices, clock: systemClock }),
    clock: systemClock,
  });
}

describe('local AWS endpoints, reached by endpoint override only', () => {
  it('serves DescribeInstanceTypes and DescribeInstanceTypeOfferings as the instance-type adapter reads them', async () => {
    const types = await cloud().getInstanceTypes({ nodeClass: 'default' });
    const linux = loadCatalog().filter((t) => (LOCAL_INSTANCE_TYPES as readonly string[]).includes(t.name) && t.onDemandPrice !== null);
    expect(types.map((t) => t.name).sort()).toEqual(linux.map((t) => t.name).sort());
    const m5 = types.find((t) => t.name === 'm5.large')!;
    // EC2's fields came through the XML: 2 vCPUs, 8 GiB, every zone of the region on-demand (no price snapshot: no spot)
    expect(m5.capacity.cpu).toBe(2000);
    expect(m5.capacity.memory).toBeGreaterThan(7000); // 8 GiB less the VM overhead
    expect(m5.capacity.memory).toBeLessThan(8192);
    expect(new Set(m5.offerings.map((o) => o.zone))).toEqual(new Set(zonesOf(REGION)));
    expect(m5.offerings.every((o) => o.capacityType === 'on-demand')).toBe(true);
  });

  it('launches through SSM, IAM and EC2: the CreateFleet request is what EC2 receives, and the instance boots with the user data’s labels', async () => {
    const provider = cloud();
    const launched = await provider.create({
      nodeClaim: 'general-abcde',
      nodePool: 'general',
      nodeClass: 'default',
      capacityType: 'on-demand',
      overrides: zonesOf(REGION).map((zone) => ({ instanceType: 'm5.large', zone, price: 0.096 })),
      tags: {},
      labels: { 'karpenter.sh/nodepool': 'general', team: 'e2e' },
      taints: [{ key: 'dedicated', value: 'e2e', effect: 'NoSchedule' }],
      startupTaints: [],
    });
    expect(launched.instanceType).toBe('m5.large');
    expect(launched.providerId).toBe(`aws:///${launched.zone}/${launched.instanceId}`);
    const fleet = aws.calls.filter((c) => c.action === 'CreateFleet');
    expect(fleet).toHaveLength(1);
    expect(fleet[0]!.input).toMatchObject({ Type: 'instant', TargetCapacitySpecification: { TotalTargetCapacity: 1, DefaultTargetCapacityType: 'on-demand' }, OnDemandOptions: { AllocationStrategy: 'lowest-price' } });
    // the template did not exist: DescribeLaunchTemplates' NotFound error was parsed, the template created once
    const actions = aws.calls.map((c) => `${c.service}:${c.action}${c.error ? `!${c.error}` : ''}`);
    expect(actions).toContain('ssm:GetParameters');
    expect(actions).toContain('iam:GetInstanceProfile!NoSuchEntity');
    expect(actions).toContain('iam:AddRoleToInstanceProfile');
    expect(actions).toContain('ec2:DescribeLaunchTemplates!InvalidLaunchTemplateName.NotFoundException');
    expect(actions.filter((a) => a === 'ec2:CreateLaunchTemplate')).toHaveLength(1);
    // the kubelet starts with what nodeadm was given
    await expect.poll(() => booted.find((b) => b.instance.instanceId === launched.instanceId)).toBeDefined();
    const boot = booted.find((b) => b.instance.instanceId === launched.instanceId)!;
    expect(boot.labels).toMatchObject({ team: 'e2e', 'karpenter.sh/nodepool': 'general' });
    expect(boot.taints).toContainEqual({ key: 'dedicated', value: 'e2e', effect: 'NoSchedule' });
    expect(boot.taints).toContainEqual({ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }); // Karpenter's registration taint
    expect(boot.apiServerEndpoint).toBe('https://127.0.0.1:6443');

    // the ClientToken makes a repeated launch return the same instance
    const again = await provider.create({ nodeClaim: 'general-abcde', nodePool: 'general', nodeClass: 'default', capacityType: 'on-demand', overrides: [{ instanceType: 'm5.large', zone: launched.zone, price: 0.096 }], tags: {}, labels: {}, taints: [], startupTaints: [] });
    expect(again.instanceId).toBe(launched.instanceId);

    expect((await provider.list()).map((i) => i.instanceId)).toContain(launched.instanceId);
    await provider.delete(launched.instanceId);
    expect((await provider.list()).map((i) => i.instanceId)).not.toContain(launched.instanceId);
    expect(aws.ec2.instances.find((i) => i.instanceId === launched.instanceId)?.state).toBe('terminated');
  });

  it('serves on-demand prices over the Pricing API and spot prices over DescribeSpotPriceHistory', async () => {
    const onDemand = await fetchOnDemandPrices(createPricingClient(REGION), REGION);
    expect(onDemand.get('m5.large')).toBe(loadCatalog().find((t) => t.name === 'm5.large')!.onDemandPrice);
    const spot = await fetchSpotPrices(new EC2Client({ region: REGION }), Date.now());
    expect([...(spot.get('m5.large')?.keys() ?? [])].sort()).toEqual([...zonesOf(REGION)].sort());
  });

  it('serves the webhook secret from Secrets Manager, and a new value after PutSecretValue', async () => {
    const arn = aws.putSecret('skiff-webhook', 'first-secret-value');
    const secret = webhookSecret({ secretId: arn, clock: systemClock, minRefreshIntervalSeconds: 0 });
    expect(await secret()).toBe('first-secret-value');
    await new SecretsManagerClient({ region: REGION }).send(new PutSecretValueCommand({ SecretId: arn, SecretString: 'rotated-secret-value' }));
    expect(await secret()).toBe('first-secret-value'); // cached, as in a warm Lambda
    expect(await secret({ refresh: true })).toBe('rotated-secret-value');
  });

  it('accepts decisions on the named bus with PutEvents', async () => {
    const publisher = new EventBridgeDecisionPublisher({ client: new EventBridgeClient({ region: REGION }), eventBusName: 'skiff-decisions', clusterName: CLUSTER });
    const result = await publisher.publish([{ type: 'NodeClaimLaunched', nodeClaim: 'general-abcde', nodePool: 'general' }]);
    expect(result).toEqual({ published: 1, failed: [] });
    expect(aws.events.filter((e) => e.bus === 'skiff-decisions').map((e) => [e.event.source, e.event['detail-type']])).toEqual([['skiff', 'NodeClaimLaunched']]);
  });

  it('refuses a request signed for another service (a client pointed at the wrong endpoint)', async () => {
    const { DescribeSubnetsCommand } = await import('@aws-sdk/client-ec2');
    const wrong = new EC2Client({ region: REGION, endpoint: aws.url, signingName: 'ssm' } as never);
    await expect(wrong.send(new DescribeSubnetsCommand({}))).rejects.toMatchObject({ name: 'AuthFailure' });
  });
});
