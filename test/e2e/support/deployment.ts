/**
 * "Deploys" a synthesised SkiffStack template on this machine, the way CloudFormation would create its resources:
 * the DynamoDB table in dynalite (over HTTP), the SQS queues and their redrive to the dead-letter queues in
 * local-aws-sqs, the webhook secret and the EventBridge rules in the local AWS endpoints (`local-aws.ts`). Every
 * function's environment is the template's `Environment.Variables` with `Ref` and `Fn::GetAtt` resolved to these
 * local resources, so a handler is configured exactly as the stack configures it — a variable the stack forgot or
 * misspelt is missing here too. The event sources (SQS event source mappings, schedules) are read from the template
 * as well. An intrinsic the resolver does not know fails the deployment (no silent default).
 */
import { randomBytes } from 'node:crypto';
import { CreateTableCommand, DynamoDBClient, type CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { LocalAws } from './local-aws.js';

/** A CloudFormation template as `Template.toJSON()` gives it. */
export interface CfnTemplate {
  readonly Resources: Record<string, { readonly Type: string; readonly Properties?: Record<string, unknown> }>;
}

/** The stack's functions, by construct id. */
export const FUNCTIONS = ['Webhook', 'Provisioner', 'Interruption', 'Disruption', 'Lifecycle'] as const;
/** One of {@link FUNCTIONS}. */
export type FunctionName = (typeof FUNCTIONS)[number];

/** A deployed function's configuration. */
export interface DeployedFunction {
  readonly logicalId: string;
  /** `Environment.Variables`, resolved. */
  readonly env: Readonly<Record<string, string>>;
  /** `Timeout`, seconds. */
  readonly timeoutSeconds: number;
}

/** An SQS event source mapping of the template. */
export interface DeployedEventSource {
  readonly function: FunctionName;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly batchSize: number;
  /** `FunctionResponseTypes` has `ReportBatchItemFailures`. */
  readonly reportBatchItemFailures: boolean;
}

/** A scheduled EventBridge rule targeting a function. */
export interface DeployedSchedule {
  readonly rule: string;
  readonly function: FunctionName;
  /** The rate, seconds (`rate(1 minute)` → 60). */
  readonly rateSeconds: number;
  /** The target's constant `Input`, when set (else EventBridge sends its Scheduled Event). */
  readonly input?: string;
}

/** A queue created from the template. */
export interface DeployedQueue {
  readonly logicalId: string;
  readonly name: string;
  readonly url: string;
  readonly arn: string;
}

/** What {@link deployLocally} created. */
export interface LocalDeployment {
  readonly functions: Readonly<Record<FunctionName, DeployedFunction>>;
  readonly eventSources: readonly DeployedEventSource[];
  readonly schedules: readonly DeployedSchedule[];
  readonly queues: readonly DeployedQueue[];
  readonly tableName: string;
  readonly secretArn: string;
  /** The secret's generated value (the relay's copy of it). */
  readonly secretValue: string;
  /** `AuthType` of the webhook's Function URL (`NONE`: the HMAC signature is the auth; `AWS_IAM`: SigV4 required). */
  readonly webhookUrlAuthType: string;
}

/** Where the local services are. */
export interface DeployTargets {
  readonly stackName: string;
  /** Logical id of each function (the construct path `<Name>/Handler/Function`). */
  readonly functionIds: Readonly<Record<FunctionName, string>>;
  readonly region: string;
  readonly account: string;
  readonly dynamoEndpoint: string;
  readonly sqsEndpoint: string;
  readonly aws: LocalAws;
}

const client = { region: 'us-west-2', credentials: { accessKeyId: 'deployer', secretAccessKey: 'deployer' } };

/**
 * Creates the template's table, queues, secret and rules locally and resolves every function's environment.
 * @throws {Error} on a resource property or intrinsic this local deployment does not implement
 */
export async function deployLocally(template: CfnTemplate, targets: DeployTargets): Promise<LocalDeployment> {
  const resources = Object.entries(template.Resources);
  const physical = new Map<string, { ref: string; attributes: Record<string, string> }>();
  const resolveValue = (value: unknown): string => {
    if (typeof value === 'string') return value;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    const v = value as Record<string, unknown>;
    if (typeof v.Ref === 'string') {
      const found = physical.get(v.Ref);
      if (!found) throw new Error(`Ref to ${v.Ref}, which this local deployment did not create`);
      return found.ref;
    }
    if (Array.isArray(v['Fn::GetAtt'])) {
      const [id, attribute] = v['Fn::GetAtt'] as [string, string];
      const found = physical.get(id)?.attributes[attribute];
      if (found === undefined) throw new Error(`Fn::GetAtt ${id}.${attribute}, which this local deployment does not have`);
      return found;
    }
    if (Array.isArray(v['Fn::Join'])) {
      const [sep, parts] = v['Fn::Join'] as [string, unknown[]];
      return parts.map(resolveValue).join(sep);
    }
    throw new Error(`unsupported intrinsic ${JSON.stringify(value)}`);
  };

  // DynamoDB: the table as declared (keys, attributes, indexes, billing).
  const dynamo = new DynamoDBClient({ ...client, endpoint: targets.dynamoEndpoint });
  let tableName = '';
  for (const [id, r] of resources.filter(([, r]) => r.Type === 'AWS::DynamoDB::Table')) {
    const p = r.Properties ?? {};
    tableName = `${targets.stackName}-${id}`;
    await dynamo.send(
      new CreateTableCommand({
        TableName: tableName,
        AttributeDefinitions: p.AttributeDefinitions,
        KeySchema: p.KeySchema,
        BillingMode: p.BillingMode,
        ...(p.GlobalSecondaryIndexes ? { GlobalSecondaryIndexes: p.GlobalSecondaryIndexes } : {}),
      } as CreateTableCommandInput),
    );
    physical.set(id, { ref: tableName, attributes: { Arn: `arn:aws:dynamodb:${targets.region}:${targets.account}:table/${tableName}` } });
  }
  dynamo.destroy();

  // SQS: dead-letter queues first (a redrive policy names an existing queue).
  const sqs = new SQSClient({ ...client, endpoint: targets.sqsEndpoint });
  const queueResources = resources.filter(([, r]) => r.Type === 'AWS::SQS::Queue').sort(([, a], [, b]) => Number(a.Properties?.RedrivePolicy !== undefined) - Number(b.Properties?.RedrivePolicy !== undefined));
  const queues: DeployedQueue[] = [];
  for (const [id, r] of queueResources) {
    const p = r.Properties ?? {};
    const name = `${targets.stackName}-${id}`.slice(0, 75) + (p.FifoQueue === true ? '.fifo' : '');
    const attributes: Record<string, string> = {};
    for (const key of ['FifoQueue', 'VisibilityTimeout', 'MessageRetentionPeriod', 'ContentBasedDeduplication', 'DelaySeconds', 'ReceiveMessageWaitTimeSeconds']) {
      if (p[key] !== undefined) attributes[key] = String(p[key]);
    }
    if (p.RedrivePolicy !== undefined) {
      const redrive = p.RedrivePolicy as { deadLetterTargetArn: unknown; maxReceiveCount: number };
      attributes.RedrivePolicy = JSON.stringify({ deadLetterTargetArn: resolveValue(redrive.deadLetterTargetArn), maxReceiveCount: redrive.maxReceiveCount });
    }
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
    const arn = `arn:aws:sqs:${targets.region}:${targets.account}:${name}`;
    physical.set(id, { ref: QueueUrl!, attributes: { Arn: arn, QueueName: name, QueueUrl: QueueUrl! } });
    queues.push({ logicalId: id, name, url: QueueUrl!, arn });
  }

  // Secrets Manager: the generated HMAC key.
  let secretArn = '';
  const secretValue = randomBytes(32).toString('hex');
  for (const [id, r] of resources.filter(([, r]) => r.Type === 'AWS::SecretsManager::Secret')) {
    if (r.Properties?.GenerateSecretString === undefined) throw new Error(`secret ${id} has no GenerateSecretString`);
    secretArn = targets.aws.putSecret(`${targets.stackName}-${id}`, secretValue);
    physical.set(id, { ref: secretArn, attributes: { Id: secretArn } });
  }
  for (const [id, r] of resources.filter(([, r]) => r.Type === 'AWS::Events::EventBus')) {
    const name = String(r.Properties?.Name ?? id);
    physical.set(id, { ref: name, attributes: { Name: name, Arn: `arn:aws:events:${targets.region}:${targets.account}:event-bus/${name}` } });
  }
  const functionOf = new Map(Object.entries(targets.functionIds).map(([name, id]) => [id, name as FunctionName]));
  for (const [id] of resources.filter(([, r]) => r.Type === 'AWS::Lambda::Function')) {
    physical.set(id, { ref: id, attributes: { Arn: `arn:aws:lambda:${targets.region}:${targets.account}:function:${id}` } });
  }

  const functions = {} as Record<FunctionName, DeployedFunction>;
  for (const [name, id] of Object.entries(targets.functionIds) as [FunctionName, string][]) {
    const p = template.Resources[id]?.Properties;
    if (!p) throw new Error(`the template has no function ${id} (${name})`);
    const variables = ((p.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {}) as Record<string, unknown>;
    functions[name] = { logicalId: id, env: Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, resolveValue(v)])), timeoutSeconds: Number(p.Timeout ?? 3) };
  }

  const eventSources: DeployedEventSource[] = [];
  for (const [id, r] of resources.filter(([, r]) => r.Type === 'AWS::Lambda::EventSourceMapping')) {
    const p = r.Properties ?? {};
    const fn = functionOf.get((p.FunctionName as { Ref?: string }).Ref ?? '');
    const arn = resolveValue(p.EventSourceArn);
    const queue = queues.find((q) => q.arn === arn);
    if (!fn || !queue) throw new Error(`event source mapping ${id} names no known function or queue`);
    eventSources.push({ function: fn, queueUrl: queue.url, queueArn: arn, batchSize: Number(p.BatchSize ?? 10), reportBatchItemFailures: ((p.FunctionResponseTypes as string[] | undefined) ?? []).includes('ReportBatchItemFailures') });
  }

  const schedules: DeployedSchedule[] = [];
  const rules: Parameters<LocalAws['setRules']>[0][number][] = [];
  for (const [id, r] of resources.filter(([, r]) => r.Type === 'AWS::Events::Rule')) {
    const p = r.Properties ?? {};
    const targetsOf = (p.Targets as { Arn: unknown; Input?: string }[] | undefined) ?? [];
    if (typeof p.ScheduleExpression === 'string') {
      const m = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/.exec(p.ScheduleExpression);
      if (!m) throw new Error(`rule ${id}: unsupported schedule ${p.ScheduleExpression}`);
      const unit = m[2]!.startsWith('minute') ? 60 : m[2]!.startsWith('hour') ? 3600 : 86400;
      for (const t of targetsOf) {
        const fnId = (t.Arn as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt']?.[0] ?? '';
        const fn = functionOf.get(fnId);
        if (!fn) throw new Error(`rule ${id} targets ${fnId}, not a function of the stack`);
        schedules.push({ rule: id, function: fn, rateSeconds: Number(m[1]) * unit, ...(t.Input !== undefined ? { input: t.Input } : {}) });
      }
      continue;
    }
    const pattern = p.EventPattern as { source?: string[]; 'detail-type'?: string[] };
    for (const t of targetsOf) {
      const arn = resolveValue(t.Arn);
      const queue = queues.find((q) => q.arn === arn);
      if (!queue) throw new Error(`rule ${id} targets ${arn}, not a queue of the stack`);
      const bus = p.EventBusName !== undefined ? resolveValue(p.EventBusName) : 'default';
      rules.push({
        name: id,
        eventBusName: bus,
        pattern,
        target: async (body) => {
          const { SendMessageCommand } = await import('@aws-sdk/client-sqs');
          await sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: body }));
        },
      });
    }
  }
  targets.aws.setRules(rules);

  const url = resources.find(([, r]) => r.Type === 'AWS::Lambda::Url' && (r.Properties?.TargetFunctionArn as { 'Fn::GetAtt'?: string[] } | undefined)?.['Fn::GetAtt']?.[0] === targets.functionIds.Webhook);
  if (!url) throw new Error('the template gives the webhook function no Function URL');
  const webhookUrlAuthType = String(url[1].Properties?.AuthType);

  return { functions, eventSources, schedules, queues, tableName, secretArn, secretValue, webhookUrlAuthType };
}
