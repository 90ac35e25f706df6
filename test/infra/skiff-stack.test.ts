// SkiffStack's behaviour, read from the synthesized template (no bundling, no network).
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { CONTROLLERS_KUBERNETES_GROUP } from '../../infra/constructs/cluster-access.js';
import { INTERRUPTION_EVENT_PATTERNS } from '../../infra/constructs/interruption-rules.js';
import { PRICE_REFRESH_EVENT } from '../../infra/constructs/price-refresh.js';
import { WEBHOOK_REFUSALS_ALARM_THRESHOLD } from '../../infra/constructs/observability.js';
import { METRIC_NAMES, METRIC_NAMESPACE } from '../../infra/metric-names.js';
import type { SkiffStack } from '../../infra/skiff-stack.js';
import { adapterActions, ssmParameterArns } from '../../shared/adapters/aws/iam-actions.js';
import { INSTANCE_ID_INDEX, TTL_ATTRIBUTE } from '../../shared/adapters/aws/table.js';
import { CONTROLLER_ENV, WEBHOOK_ENV } from '../../shared/lambda/env.js';
import { FOLLOW_UP_AFTER_MS } from '../../shared/ports/follow-up-passes.js';
import { DEFAULT_RESERVED_CONCURRENCY } from '../../infra/stack-config.js';
import { PRIVATE_CONFIG, SAMPLE_CONFIG, logicalId, synth } from './stack-fixture.js';

type Resources = Record<string, { Type: string; Properties: Record<string, unknown>; DependsOn?: string[] }>;
interface Statement {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
  Principal?: unknown;
}

let stack: SkiffStack;
let template: Template;
let resources: Resources;
let privateStack: SkiffStack;
let privateTemplate: Template;

beforeAll(() => {
  ({ stack, template } = synth());
  resources = template.toJSON().Resources as Resources;
  ({ stack: privateStack, template: privateTemplate } = synth(PRIVATE_CONFIG));
});

const ofType = (type: string, from: Resources = resources) => Object.entries(from).filter(([, r]) => r.Type === type);
const list = <T>(v: T | T[]): T[] => (Array.isArray(v) ? v : [v]);
const ref = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });
/** Every statement of every IAM policy of the stack. */
const statements = (): Statement[] => ofType('AWS::IAM::Policy').flatMap(([, r]) => (r.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
const statement = (sid: string): Statement => {
  const found = statements().find((s) => s.Sid === sid);
  if (!found) throw new Error(`no statement ${sid}`);
  return found;
};
const functionId = (s: SkiffStack, construct: string) => logicalId(s, `${construct}/Handler/Function`);
const fnProps = (id: string, from: Resources = resources) => {
  const r = from[id];
  if (!r) throw new Error(`no resource ${id}`);
  return r.Properties;
};

describe('SkiffStack', () => {
  describe('queues', () => {
    it('makes the pod-event queue FIFO, encrypted, with a FIFO dead-letter queue after 5 receives', () => {
      const dlq = logicalId(stack, 'Queues/PodEvents/DeadLetters');
      template.hasResourceProperties('AWS::SQS::Queue', { FifoQueue: true, SqsManagedSseEnabled: true, RedrivePolicy: { deadLetterTargetArn: ref(dlq), maxReceiveCount: 5 } });
      expect(fnProps(dlq)).toMatchObject({ FifoQueue: true, SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 86400 });
    });

    it('keeps interruption messages 300 s, encrypted, with a dead-letter queue (Karpenter §5)', () => {
      const dlq = logicalId(stack, 'Queues/Interruptions/DeadLetters');
      const queue = fnProps(logicalId(stack, 'Queues/Interruptions/Queue'));
      expect(queue).toMatchObject({ MessageRetentionPeriod: 300, SqsManagedSseEnabled: true, RedrivePolicy: { deadLetterTargetArn: ref(dlq), maxReceiveCount: 3 } });
      expect(queue).not.toHaveProperty('FifoQueue');
    });

    it('denies non-TLS access to every queue', () => {
      const policies = ofType('AWS::SQS::QueuePolicy');
      expect(policies).toHaveLength(7); // pod events and interruptions with their dead-letter queues, the three follow-up queues
      for (const [, policy] of policies) {
        const document = policy.Properties.PolicyDocument as { Statement: Statement[] };
        expect(document.Statement).toContainEqual(expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }));
      }
    });

    it('lets events.amazonaws.com send to the interruption queue, only from the five rules', () => {
      const queue = logicalId(stack, 'Queues/Interruptions/Queue');
      const [, policy] = ofType('AWS::SQS::QueuePolicy').find(([, p]) => JSON.stringify(p.Properties.Queues) === JSON.stringify([{ Ref: queue }])) ?? [];
      const allows = (policy?.Properties.PolicyDocument as { Statement: Statement[] }).Statement.filter((s) => s.Effect === 'Allow');
      expect(allows).toHaveLength(5);
      for (const s of allows) {
        expect(s.Principal).toEqual({ Service: 'events.amazonaws.com' });
        expect(list(s.Action)).toContain('sqs:SendMessage');
        expect(s.Condition?.ArnEquals?.['aws:SourceArn']).toBeDefined();
      }
    });

    it('gives each queue a visibility timeout no shorter than its consumer’s timeout', () => {
      for (const [queue, fn] of [
        ['Queues/PodEvents/Queue', 'Provisioner'],
        ['Queues/Interruptions/Queue', 'Interruption'],
        ['FollowUps/Queue', 'Disruption'],
        ['LifecycleFollowUps/Queue', 'Lifecycle'],
        ['ProvisionerFollowUps/Queue', 'Provisioner'],
      ] as const) {
        expect(fnProps(logicalId(stack, queue)).VisibilityTimeout as number).toBeGreaterThanOrEqual(fnProps(functionId(stack, fn)).Timeout as number);
      }
    });
  });

  describe('follow-up queue', () => {
    const queueId = () => logicalId(stack, 'FollowUps/Queue');

    it('is FIFO without content deduplication (the slot is the deduplication id), encrypted, kept 5 minutes, with no dead-letter queue', () => {
      const queue = fnProps(queueId());
      expect(queue).toMatchObject({ FifoQueue: true, ContentBasedDeduplication: false, SqsManagedSseEnabled: true, MessageRetentionPeriod: 300 });
      expect(queue).not.toHaveProperty('RedrivePolicy');
    });

    it('delays every message by the port’s follow-up delay, as the adapter expects (FIFO queues take no per-message delay)', () => {
      expect((fnProps(queueId()).DelaySeconds as number) * 1000).toBe(FOLLOW_UP_AFTER_MS);
    });

    it('hides a received follow-up exactly as long as a disruption pass may run', () => {
      expect(fnProps(queueId()).VisibilityTimeout).toBe(fnProps(functionId(stack, 'Disruption')).Timeout);
    });

    it('invokes the disruption function with one message at a time, without a maximum concurrency (its one message group allows one), and keeps its reserved concurrency of 1', () => {
      const mappings = ofType('AWS::Lambda::EventSourceMapping').filter(([, r]) => JSON.stringify(r.Properties.EventSourceArn) === JSON.stringify(ref(queueId())));
      expect(mappings).toHaveLength(1);
      expect(mappings[0]![1].Properties).toMatchObject({ FunctionName: { Ref: functionId(stack, 'Disruption') }, BatchSize: 1 });
      expect(mappings[0]![1].Properties).not.toHaveProperty('ScalingConfig');
      expect(fnProps(functionId(stack, 'Disruption')).ReservedConcurrentExecutions).toBe(1);
    });

    it('lets the controllers send to it and receive and delete from it', () => {
      const on = statements().filter((s) => JSON.stringify(s.Resource) === JSON.stringify(ref(queueId())));
      const actions = on.flatMap((s) => list(s.Action));
      expect(actions).toEqual(expect.arrayContaining(['sqs:SendMessage', 'sqs:ReceiveMessage', 'sqs:DeleteMessage']));
    });

    it('names its URL to the disruption function only', () => {
      const variables = (name: string) => (fnProps(functionId(stack, name)).Environment as { Variables: Record<string, unknown> }).Variables;
      expect(variables('Disruption')[CONTROLLER_ENV.disruptionFollowUpQueueUrl]).toEqual({ Ref: queueId() });
      for (const name of ['Provisioner', 'Interruption', 'Lifecycle', 'Webhook']) expect(variables(name)).not.toHaveProperty(CONTROLLER_ENV.disruptionFollowUpQueueUrl);
    });
  });

  describe('lifecycle follow-up queue', () => {
    const queueId = () => logicalId(stack, 'LifecycleFollowUps/Queue');
    const variables = (name: string) => (fnProps(functionId(stack, name)).Environment as { Variables: Record<string, unknown> }).Variables;

    it('is FIFO, delayed by the port’s follow-up delay, kept 5 minutes, hidden as long as a lifecycle pass may run, with no dead-letter queue', () => {
      const queue = fnProps(queueId());
      expect(queue).toMatchObject({ FifoQueue: true, ContentBasedDeduplication: false, SqsManagedSseEnabled: true, MessageRetentionPeriod: 300, DelaySeconds: FOLLOW_UP_AFTER_MS / 1000 });
      expect(queue).not.toHaveProperty('RedrivePolicy');
      expect(queue.VisibilityTimeout).toBe(fnProps(functionId(stack, 'Lifecycle')).Timeout);
    });

    it('invokes the lifecycle function with one message at a time', () => {
      const mappings = ofType('AWS::Lambda::EventSourceMapping').filter(([, r]) => JSON.stringify(r.Properties.EventSourceArn) === JSON.stringify(ref(queueId())));
      expect(mappings).toHaveLength(1);
      expect(mappings[0]![1].Properties).toMatchObject({ FunctionName: { Ref: functionId(stack, 'Lifecycle') }, BatchSize: 1 });
    });

    it('names its URL to the lifecycle function and the provisioner (its node-event passes ask for follow-ups too), and to no other', () => {
      for (const name of ['Lifecycle', 'Provisioner']) expect(variables(name)[CONTROLLER_ENV.lifecycleFollowUpQueueUrl]).toEqual({ Ref: queueId() });
      for (const name of ['Disruption', 'Interruption', 'Webhook']) expect(variables(name)).not.toHaveProperty(CONTROLLER_ENV.lifecycleFollowUpQueueUrl);
    });
  });

  describe('provisioner follow-up queue', () => {
    const queueId = () => logicalId(stack, 'ProvisionerFollowUps/Queue');
    const variables = (name: string) => (fnProps(functionId(stack, name)).Environment as { Variables: Record<string, unknown> }).Variables;

    it('is FIFO, delayed by the port’s follow-up delay, kept 5 minutes, hidden as long as a provisioning pass may run, with no dead-letter queue', () => {
      const queue = fnProps(queueId());
      expect(queue).toMatchObject({ FifoQueue: true, ContentBasedDeduplication: false, SqsManagedSseEnabled: true, MessageRetentionPeriod: 300, DelaySeconds: FOLLOW_UP_AFTER_MS / 1000 });
      expect(queue).not.toHaveProperty('RedrivePolicy');
      expect(queue.VisibilityTimeout).toBe(fnProps(functionId(stack, 'Provisioner')).Timeout);
    });

    it('invokes the provisioner with one message at a time, beside its pod-event queue', () => {
      const mappings = ofType('AWS::Lambda::EventSourceMapping').filter(([, r]) => JSON.stringify(r.Properties.EventSourceArn) === JSON.stringify(ref(queueId())));
      expect(mappings).toHaveLength(1);
      expect(mappings[0]![1].Properties).toMatchObject({ FunctionName: { Ref: functionId(stack, 'Provisioner') }, BatchSize: 1 });
    });

    it('names its URL to the provisioner only', () => {
      expect(variables('Provisioner')[CONTROLLER_ENV.provisionerFollowUpQueueUrl]).toEqual({ Ref: queueId() });
      for (const name of ['Disruption', 'Interruption', 'Lifecycle', 'Webhook']) expect(variables(name)).not.toHaveProperty(CONTROLLER_ENV.provisionerFollowUpQueueUrl);
    });
  });

  describe('table', () => {
    it('is created from table.ts’s definition, with point-in-time recovery and TTL on ttl', () => {
      template.resourceCountIs('AWS::DynamoDB::Table', 1);
      template.hasResourceProperties('AWS::DynamoDB::Table', {
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: [{ IndexName: INSTANCE_ID_INDEX, KeySchema: [{ AttributeName: 'instanceKey', KeyType: 'HASH' }], Projection: { ProjectionType: 'KEYS_ONLY' } }],
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
      });
      template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    });
  });

  describe('functions', () => {
    it('runs all five on nodejs22.x, arm64, with active tracing and a log retention', () => {
      const functions = ofType('AWS::Lambda::Function');
      expect(functions).toHaveLength(5);
      for (const [, fn] of functions) expect(fn.Properties).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'], TracingConfig: { Mode: 'Active' }, Handler: 'index.handler' });
      const groups = ofType('AWS::Logs::LogGroup');
      expect(groups).toHaveLength(5);
      for (const [, group] of groups) expect(group.Properties.RetentionInDays).toBe(30);
    });

    it('caps the webhook at a reserved concurrency of 10, reserves 2 for the provisioner, 10 for interruption, 1 for disruption, none for lifecycle', () => {
      expect(DEFAULT_RESERVED_CONCURRENCY).toEqual({ webhook: 10, provisioner: 2, interruption: 10 });
      for (const [name, reserved] of [
        ['Webhook', 10],
        ['Provisioner', 2],
        ['Interruption', 10],
        ['Disruption', 1],
      ] as const) {
        expect(fnProps(functionId(stack, name)).ReservedConcurrentExecutions, name).toBe(reserved);
      }
      expect(fnProps(functionId(stack, 'Lifecycle'))).not.toHaveProperty('ReservedConcurrentExecutions');
    });

    it('lets each queue’s event source invoke at most what its consumer has reserved, so a batch is never throttled back to the queue', () => {
      for (const [fn, queue, reserved] of [
        ['Provisioner', 'Queues/PodEvents/Queue', 2],
        ['Interruption', 'Queues/Interruptions/Queue', 10],
      ] as const) {
        template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { FunctionName: { Ref: functionId(stack, fn) }, EventSourceArn: ref(logicalId(stack, queue)), ScalingConfig: { MaximumConcurrency: reserved } });
      }
    });

    it('takes the reserved concurrency from the configuration', () => {
      const { stack: custom, template: customTemplate } = synth({ ...SAMPLE_CONFIG, reservedConcurrency: { webhook: 3, provisioner: 4, interruption: 25 } });
      const props = (name: string) => (customTemplate.toJSON().Resources as Resources)[functionId(custom, name)]!.Properties;
      expect(['Webhook', 'Provisioner', 'Interruption', 'Disruption'].map((name) => props(name).ReservedConcurrentExecutions)).toEqual([3, 4, 25, 1]);
      customTemplate.hasResourceProperties('AWS::Lambda::EventSourceMapping', { FunctionName: { Ref: functionId(custom, 'Interruption') }, ScalingConfig: { MaximumConcurrency: 25 } });
      customTemplate.hasResourceProperties('AWS::Lambda::EventSourceMapping', { FunctionName: { Ref: functionId(custom, 'Provisioner') }, ScalingConfig: { MaximumConcurrency: 4 } });
    });

    it('gives the controllers the cluster’s facts and the table name, and the webhook its queue and secret', () => {
      for (const name of ['Provisioner', 'Interruption', 'Disruption', 'Lifecycle']) {
        const variables = (fnProps(functionId(stack, name)).Environment as { Variables: Record<string, unknown> }).Variables;
        expect(variables).toMatchObject({
          [CONTROLLER_ENV.cluster]: 'sample',
          [CONTROLLER_ENV.clusterEndpoint]: expect.stringMatching(/^https:\/\//),
          [CONTROLLER_ENV.clusterCertificateAuthority]: expect.any(String),
          [CONTROLLER_ENV.kubernetesVersion]: '1.31',
          [CONTROLLER_ENV.tableName]: { Ref: logicalId(stack, 'State/Table') },
        });
        expect(variables).not.toHaveProperty('AWS_REGION');
      }
      const webhook = (fnProps(functionId(stack, 'Webhook')).Environment as { Variables: Record<string, unknown> }).Variables;
      expect(webhook).toMatchObject({ [WEBHOOK_ENV.cluster]: 'sample', [WEBHOOK_ENV.podEventsQueueUrl]: { Ref: logicalId(stack, 'Queues/PodEvents/Queue') }, [WEBHOOK_ENV.webhookSecretId]: { Ref: logicalId(stack, 'Webhook/Secret') } });
    });

    it('consumes each queue in batches of 10 with partial batch responses', () => {
      for (const [fn, queue] of [
        ['Provisioner', 'Queues/PodEvents/Queue'],
        ['Interruption', 'Queues/Interruptions/Queue'],
      ] as const) {
        template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { FunctionName: { Ref: functionId(stack, fn) }, EventSourceArn: ref(logicalId(stack, queue)), BatchSize: 10, FunctionResponseTypes: ['ReportBatchItemFailures'] });
      }
    });

    it('puts the webhook behind a Function URL without IAM auth (the HMAC is the auth)', () => {
      template.resourceCountIs('AWS::Lambda::Url', 1);
      template.hasResourceProperties('AWS::Lambda::Url', { AuthType: 'NONE', TargetFunctionArn: ref(functionId(stack, 'Webhook')) });
      template.resourceCountIs('AWS::SecretsManager::Secret', 1);
    });

    it('shares one controller role between the four controllers, and gives the webhook its own', () => {
      const role = { 'Fn::GetAtt': [logicalId(stack, 'Controllers/Role'), 'Arn'] };
      for (const name of ['Provisioner', 'Interruption', 'Disruption', 'Lifecycle']) expect(fnProps(functionId(stack, name)).Role).toEqual(role);
      expect(fnProps(functionId(stack, 'Webhook')).Role).not.toEqual(role);
    });
  });

  describe('EventBridge', () => {
    it('routes the five interruption event types to the interruption queue, dead-lettering what it cannot deliver', () => {
      const queue = ref(logicalId(stack, 'Queues/Interruptions/Queue'));
      const dlq = ref(logicalId(stack, 'Queues/Interruptions/DeadLetters'));
      const patterns = ofType('AWS::Events::Rule').filter(([, r]) => r.Properties.EventPattern !== undefined);
      expect(patterns).toHaveLength(5);
      for (const pattern of Object.values(INTERRUPTION_EVENT_PATTERNS)) {
        template.hasResourceProperties('AWS::Events::Rule', {
          EventPattern: { source: [...pattern.source], 'detail-type': [...pattern.detailType] },
          Targets: [Match.objectLike({ Arn: queue, DeadLetterConfig: { Arn: dlq } })],
        });
      }
      expect(Object.values(INTERRUPTION_EVENT_PATTERNS).map((p) => p.detailType[0])).toEqual([
        'AWS Health Event',
        'EC2 Spot Instance Interruption Warning',
        'EC2 Instance Rebalance Recommendation',
        'EC2 Instance State-change Notification',
        'EC2 Capacity Reservation Instance Interruption Warning',
      ]);
    });

    it('runs disruption and lifecycle every minute by default, without retries', () => {
      for (const name of ['Disruption', 'Lifecycle']) {
        template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(1 minute)', Targets: [Match.objectLike({ Arn: ref(functionId(stack, name)), RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 } })] });
        template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', { FunctionName: { Ref: functionId(stack, name) }, MaximumRetryAttempts: 0 });
      }
    });

    it('takes the schedules from the configuration', () => {
      privateTemplate.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(5 minutes)', Targets: [Match.objectLike({ Arn: ref(functionId(privateStack, 'Disruption')) })] });
      privateTemplate.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(2 minutes)', Targets: [Match.objectLike({ Arn: ref(functionId(privateStack, 'Lifecycle')) })] });
    });
  });

  describe('price refresh', () => {
    const refreshRule = () => {
      const found = ofType('AWS::Events::Rule').find(([, r]) => r.Properties.ScheduleExpression === 'rate(12 hours)');
      if (!found) throw new Error('no 12-hourly rule');
      return found;
    };

    it('invokes the lifecycle function every 12 hours (Karpenter’s interval) with the refresh-prices task', () => {
      const [, rule] = refreshRule();
      expect(rule.Properties.Targets).toEqual([expect.objectContaining({ Arn: ref(functionId(stack, 'Lifecycle')), Input: JSON.stringify(PRICE_REFRESH_EVENT), RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 } })]);
      expect(JSON.parse(JSON.stringify(PRICE_REFRESH_EVENT))).toEqual({ task: 'refresh-prices' });
      template.hasResourceProperties('AWS::Lambda::Permission', { Action: 'lambda:InvokeFunction', FunctionName: ref(functionId(stack, 'Lifecycle')), Principal: 'events.amazonaws.com', SourceArn: ref(refreshRule()[0]) });
    });

    it('grants pricing:GetProducts and ec2:DescribeSpotPriceHistory to the lifecycle function only, read-only on *, spot prices in the stack’s region', () => {
      const onlyLifecycle = { ArnEquals: { 'lambda:SourceFunctionArn': ref(functionId(stack, 'Lifecycle')) } };
      const pricing = statements().filter((s) => list(s.Action).some((a) => a === 'pricing:GetProducts' || a === 'ec2:DescribeSpotPriceHistory'));
      expect(pricing.map((s) => [s.Sid, list(s.Action), s.Resource])).toEqual([
        ['RefreshSpotPrices', ['ec2:DescribeSpotPriceHistory'], '*'],
        ['RefreshOnDemandPrices', ['pricing:GetProducts'], '*'],
      ]);
      expect(statement('RefreshSpotPrices').Condition).toEqual({ ...onlyLifecycle, StringEquals: { 'aws:RequestedRegion': 'us-west-2' } });
      expect(statement('RefreshOnDemandPrices').Condition).toEqual(onlyLifecycle);
    });

    it('attaches that policy to the controller role, and starts the schedule only once it is attached', () => {
      const policyId = logicalId(stack, 'PriceRefresh/Policy');
      expect(fnProps(policyId).Roles).toEqual([{ Ref: logicalId(stack, 'Controllers/Role') }]);
      const [, rule] = refreshRule();
      expect(rule.DependsOn).toContain(policyId);
      // The lifecycle function does not wait for it (the policy names the function's ARN).
      expect(resources[functionId(stack, 'Lifecycle')]?.DependsOn ?? []).not.toContain(policyId);
    });
  });

  describe('decision bus', () => {
    it('creates one EventBridge bus of the stack’s own', () => {
      template.resourceCountIs('AWS::Events::EventBus', 1);
    });

    it('lets the controllers put events on that bus only, with source skiff only', () => {
      const bus = logicalId(stack, 'Decisions/Bus');
      const grants = statements().filter((s) => list(s.Action).includes('events:PutEvents'));
      expect(grants).toHaveLength(1);
      expect(list(grants[0]!.Action)).toEqual(['events:PutEvents']);
      expect(grants[0]!.Resource).toEqual(ref(bus));
      expect(grants[0]!.Condition).toEqual({ StringEquals: { 'events:source': 'skiff' } });
    });

    it('names the bus to the provisioner, disruption and interruption functions only', () => {
      const bus = { Ref: logicalId(stack, 'Decisions/Bus') };
      const variables = (name: string) => (fnProps(functionId(stack, name)).Environment as { Variables: Record<string, unknown> }).Variables;
      for (const name of ['Provisioner', 'Disruption', 'Interruption']) expect(variables(name)[CONTROLLER_ENV.decisionBusName]).toEqual(bus);
      for (const name of ['Lifecycle', 'Webhook']) expect(variables(name)).not.toHaveProperty(CONTROLLER_ENV.decisionBusName);
      template.hasOutput('DecisionBusName', { Value: bus });
    });
  });

  describe('cluster access', () => {
    it('maps the controller role to the group lambda-rbac.yaml binds', () => {
      template.hasResourceProperties('AWS::EKS::AccessEntry', {
        ClusterName: 'sample',
        PrincipalArn: { 'Fn::GetAtt': [logicalId(stack, 'Controllers/Role'), 'Arn'] },
        KubernetesGroups: [CONTROLLERS_KUBERNETES_GROUP],
        Type: 'STANDARD',
      });
      const rbac = parseAllDocuments(readFileSync(fileURLToPath(new URL('../../infra/k8s/lambda-rbac.yaml', import.meta.url)), 'utf8')).map((d) => d.toJS() as { kind: string; subjects?: { kind: string; name: string }[] });
      const binding = rbac.find((d) => d.kind === 'ClusterRoleBinding');
      expect(binding?.subjects).toContainEqual(expect.objectContaining({ kind: 'Group', name: CONTROLLERS_KUBERNETES_GROUP }));
    });

    it('leaves the access entry out when the configuration says so', () => {
      privateTemplate.resourceCountIs('AWS::EKS::AccessEntry', 0);
    });

    it('runs the controllers, not the webhook, in the VPC for a private endpoint, and opens the API server to them', () => {
      const sg = { 'Fn::GetAtt': [logicalId(privateStack, 'Network/SecurityGroup'), 'GroupId'] };
      const privateResources = privateTemplate.toJSON().Resources as Resources;
      for (const name of ['Provisioner', 'Interruption', 'Disruption', 'Lifecycle']) {
        expect(fnProps(functionId(privateStack, name), privateResources).VpcConfig).toEqual({ SubnetIds: ['subnet-0aaa1111bbbb22223', 'subnet-0bbb3333cccc44445'], SecurityGroupIds: [sg] });
      }
      expect(fnProps(functionId(privateStack, 'Webhook'), privateResources)).not.toHaveProperty('VpcConfig');
      privateTemplate.hasResourceProperties('AWS::EC2::SecurityGroupIngress', { GroupId: 'sg-0ccc5555dddd66667', SourceSecurityGroupId: sg, IpProtocol: 'tcp', FromPort: 443, ToPort: 443 });
      privateTemplate.hasResourceProperties('AWS::EC2::SecurityGroup', { SecurityGroupEgress: [{ CidrIp: '0.0.0.0/0', IpProtocol: 'tcp', FromPort: 443, ToPort: 443, Description: Match.anyValue() }] });
      template.resourceCountIs('AWS::EC2::SecurityGroup', 0);
      for (const [, fn] of ofType('AWS::Lambda::Function')) expect(fn.Properties).not.toHaveProperty('VpcConfig');
    });
  });

  describe('IAM', () => {
    const tag = 'kubernetes.io/cluster/sample';

    it('grants no wildcard action anywhere', () => {
      const actions = statements().flatMap((s) => list(s.Action));
      expect(actions.length).toBeGreaterThan(20);
      expect(actions.filter((a) => a.includes('*'))).toEqual([]);
    });

    it('grants every action the adapters call (iam-actions.ts)', () => {
      const granted = new Set(statements().flatMap((s) => list(s.Action)));
      expect(adapterActions().filter((a) => !granted.has(a))).toEqual([]);
    });

    it('lets launches create resources only with the cluster request tag', () => {
      const launch = statement('LaunchWithClusterTag');
      expect(list(launch.Action).sort()).toEqual(['ec2:CreateFleet', 'ec2:CreateLaunchTemplate', 'ec2:RunInstances']);
      expect(launch.Condition).toEqual({ StringEquals: { [`aws:RequestTag/${tag}`]: 'owned' } });
      expect(statement('LaunchWithClusterTagLaunchTemplates').Condition).toEqual({ StringEquals: { [`aws:ResourceTag/${tag}`]: 'owned' } });
      expect(list(statement('LaunchWithClusterTagExistingResources').Action).sort()).toEqual(['ec2:CreateFleet', 'ec2:RunInstances']);
    });

    it('tags only while creating cluster-tagged resources', () => {
      expect(statement('TagOnCreate').Condition).toEqual({ StringEquals: { [`aws:RequestTag/${tag}`]: 'owned', 'ec2:CreateAction': ['CreateFleet', 'RunInstances', 'CreateLaunchTemplate'] } });
    });

    it('terminates only instances Skiff launched: the cluster tag and skiff.dev/cluster (Karpenter\'s carry only the first)', () => {
      const terminate = statement('TerminateClusterInstances');
      expect(list(terminate.Action)).toEqual(['ec2:TerminateInstances']);
      expect(terminate.Condition).toEqual({ StringEquals: { [`aws:ResourceTag/${tag}`]: 'owned', 'aws:ResourceTag/skiff.dev/cluster': 'sample' } });
      expect(JSON.stringify(terminate.Resource)).toMatch(/:instance\/\*"\]\]\}$/);
      expect(JSON.stringify(terminate.Resource)).not.toContain('launch-template');
      expect(statements().filter((s) => list(s.Action).includes('ec2:TerminateInstances'))).toHaveLength(1);
    });

    it('passes only the node role, only to EC2', () => {
      const pass = statements().filter((s) => list(s.Action).includes('iam:PassRole'));
      expect(pass).toHaveLength(1);
      expect(pass[0]?.Resource).toBe('arn:aws:iam::111122223333:role/KarpenterNodeRole-sample');
      expect(pass[0]?.Condition).toEqual({ StringEquals: { 'iam:PassedToService': 'ec2.amazonaws.com' } });
    });

    it('reads SSM parameters only under the public AMI paths', () => {
      const ssm = statements().filter((s) => list(s.Action).some((a) => a.startsWith('ssm:')));
      expect(ssm).toHaveLength(1);
      expect(JSON.stringify(stack.resolve(ssmParameterArns('us-west-2', stack.partition)))).toBe(JSON.stringify(ssm[0]?.Resource));
    });

    it('limits Describe calls to the stack’s region and instance profiles to the cluster’s path', () => {
      expect(statement('Describe').Condition).toEqual({ StringEquals: { 'aws:RequestedRegion': 'us-west-2' } });
      expect(JSON.stringify(statement('InstanceProfiles').Resource)).toContain(':instance-profile/skiff/us-west-2/sample/*');
    });

    it('grants the table actions on the table and its indexes only', () => {
      const table = logicalId(stack, 'State/Table');
      const grants = statements().filter((s) => list(s.Action).some((a) => a.startsWith('dynamodb:')));
      expect(grants).toHaveLength(1);
      expect(list(grants[0]?.Action ?? []).sort()).toEqual(['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem']);
      expect(JSON.stringify(grants[0]?.Resource)).toContain(table);
    });

    it('gives the webhook only its queue, its secret and its logs', () => {
      const webhookPolicy = ofType('AWS::IAM::Policy').find(([, p]) => JSON.stringify(p.Properties.Roles).includes(logicalId(stack, 'Webhook/Handler/Role')));
      const actions = (webhookPolicy?.[1].Properties.PolicyDocument as { Statement: Statement[] }).Statement.flatMap((s) => list(s.Action));
      expect(actions.every((a) => /^(sqs:SendMessage|sqs:GetQueueAttributes|sqs:GetQueueUrl|secretsmanager:(GetSecretValue|DescribeSecret)|logs:(CreateLogStream|PutLogEvents)|xray:Put\w+)$/.test(a))).toBe(true);
    });
  });

  describe('alarms and dashboard', () => {
    it('alarms on pods pending for 5 minutes and on persistent launch failures', () => {
      expect(METRIC_NAMES).toMatchObject({ unschedulablePods: 'karpenter_scheduler_unschedulable_pods_count', launchFailures: 'karpenter_cloudprovider_instance_launch_failures_total' });
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: METRIC_NAMESPACE,
        MetricName: METRIC_NAMES.unschedulablePods,
        Dimensions: Match.arrayWith([{ Name: 'cluster', Value: 'sample' }]),
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 0,
        EvaluationPeriods: 5,
        Period: 60,
      });
      template.hasResourceProperties('AWS::CloudWatch::Alarm', { Namespace: METRIC_NAMESPACE, MetricName: METRIC_NAMES.launchFailures, Statistic: 'Sum' });
    });

    it('alarms when a dead-letter queue is not empty', () => {
      for (const dlq of ['Queues/PodEvents/DeadLetters', 'Queues/Interruptions/DeadLetters']) {
        template.hasResourceProperties('AWS::CloudWatch::Alarm', {
          Namespace: 'AWS/SQS',
          MetricName: 'ApproximateNumberOfMessagesVisible',
          Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(stack, dlq), 'QueueName'] } }],
          ComparisonOperator: 'GreaterThanThreshold',
          Threshold: 0,
        });
      }
    });

    it('alarms on errors and throttles of every function', () => {
      for (const name of ['Webhook', 'Provisioner', 'Interruption', 'Disruption', 'Lifecycle']) {
        for (const metric of ['Errors', 'Throttles']) {
          // The disruption function's follow-up and scheduled passes take turns at its one reserved slot: a few
          // throttles are expected, so only many in a row alarm.
          const threshold = metric === 'Throttles' && name === 'Disruption' ? 10 : 1;
          template.hasResourceProperties('AWS::CloudWatch::Alarm', { Namespace: 'AWS/Lambda', MetricName: metric, Threshold: threshold, Dimensions: [{ Name: 'FunctionName', Value: { Ref: functionId(stack, name) } }] });
        }
      }
    });

    it('alarms when interruption messages wait over a minute', () => {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateAgeOfOldestMessage',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(stack, 'Queues/Interruptions/Queue'), 'QueueName'] } }],
        Threshold: 60,
      });
      template.resourceCountIs('AWS::CloudWatch::Alarm', 17);
    });

    it('alarms when the price snapshot is over 13 hours old (refreshes every 12 h keep failing)', () => {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: METRIC_NAMESPACE,
        MetricName: METRIC_NAMES.priceSnapshotAge,
        Statistic: 'Minimum',
        Period: 3600,
        Threshold: 46_800,
        ComparisonOperator: 'GreaterThanThreshold',
      });
    });

    it('alarms when the webhook refuses at least 10 requests in each of three 5-minute periods (a flood, or a mis-keyed relay)', () => {
      expect(METRIC_NAMES.webhookRequestsRefused).toBe('skiff_webhook_requests_refused_total');
      expect(WEBHOOK_REFUSALS_ALARM_THRESHOLD).toBe(10);
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'Skiff',
        MetricName: 'skiff_webhook_requests_refused_total',
        // Exactly the cluster-wide set every point is also published with (not the per-code/reason one).
        Dimensions: [
          { Name: 'cluster', Value: 'sample' },
          { Name: 'service', Value: 'skiff' },
        ],
        Statistic: 'Sum',
        Period: 300,
        Threshold: 10,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        EvaluationPeriods: 3,
        DatapointsToAlarm: 3,
        TreatMissingData: 'notBreaching',
        AlarmDescription: Match.stringLikeRegexp('webhook has refused'),
      });
    });

    it('notifies the configured topic', () => {
      const alarms = Object.values(privateTemplate.findResources('AWS::CloudWatch::Alarm')) as { Properties: { AlarmActions?: unknown[] } }[];
      for (const alarm of alarms) expect(alarm.Properties.AlarmActions).toEqual(['arn:aws:sns:us-west-2:111122223333:skiff-alarms']);
      for (const [, alarm] of ofType('AWS::CloudWatch::Alarm')) expect(alarm.Properties).not.toHaveProperty('AlarmActions');
    });

    it('shows the alarmed metrics and nodes and NodeClaims by state on a dashboard', () => {
      const [, dashboard] = ofType('AWS::CloudWatch::Dashboard')[0] ?? [];
      const body = JSON.stringify(dashboard?.Properties.DashboardBody);
      for (const text of [METRIC_NAMES.unschedulablePods, METRIC_NAMES.launchFailures, METRIC_NAMES.nodes, METRIC_NAMES.nodeClaims, 'ApproximateNumberOfMessagesVisible', 'ApproximateAgeOfOldestMessage', 'Throttles', 'Nodes by state', 'NodeClaims by state']) {
        expect(body).toContain(text);
      }
    });

    it('shows pod startup durations, per-node usage by NodePool, the price snapshot’s age and unpublished decisions', () => {
      const [, dashboard] = ofType('AWS::CloudWatch::Dashboard')[0] ?? [];
      const body = JSON.stringify(dashboard?.Properties.DashboardBody);
      expect(METRIC_NAMES).toMatchObject({
        podStartup: 'karpenter_pods_startup_duration_seconds',
        nodeAllocatable: 'karpenter_nodes_allocatable',
        nodePodRequests: 'karpenter_nodes_total_pod_requests',
        nodeDaemonRequests: 'karpenter_nodes_total_daemon_requests',
      });
      for (const text of [METRIC_NAMES.podStartup, METRIC_NAMES.nodeAllocatable, METRIC_NAMES.nodePodRequests, METRIC_NAMES.nodeDaemonRequests, METRIC_NAMES.priceSnapshotAge, METRIC_NAMES.decisionsUnpublished, '{Skiff,cluster,nodepool,resource_type,service}', 'p90']) {
        expect(body).toContain(text);
      }
    });

    it('shows webhook refusals by status and reason', () => {
      const [, dashboard] = ofType('AWS::CloudWatch::Dashboard')[0] ?? [];
      const body = JSON.stringify(dashboard?.Properties.DashboardBody);
      for (const text of ['{Skiff,cluster,code,reason,service}', METRIC_NAMES.webhookRequestsRefused, 'Webhook requests refused']) {
        expect(body).toContain(text);
      }
    });
  });
});
