/**
 * The stack's configuration: one JSON document, validated with zod at synth time so a mistake fails `cdk synth` with
 * the field's path instead of failing a deployment (or a Lambda) later.
 *
 * Where it comes from: the CDK context key {@link CONFIG_CONTEXT_KEY}, either a path to a JSON file
 * (`npx cdk synth -c skiff:config=infra/config/sample.json`, relative to the working directory) or the object itself
 * (in `cdk.json` / `cdk.context.json`). See `infra/config/sample.json`.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import * as z from 'zod';

/** The CDK context key naming the configuration (a file path, or the object). */
export const CONFIG_CONTEXT_KEY = 'skiff:config';

/** Retention periods CloudWatch Logs accepts, days (`AWS::Logs::LogGroup` `RetentionInDays`). */
export const LOG_RETENTION_DAYS = [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653] as const;

const minutes = z.number().int().min(1).max(60);

/**
 * Default reserved concurrency per function (see {@link StackConfigSchema}'s `reservedConcurrency`).
 * - `webhook` 10: the relay posts one batch at a time (`functions/relay/relay.ts`: its outbox is drained by one post
 *   loop) from one replica (`infra/k8s/relay.yaml`), so legitimate traffic needs one execution; a second relay pod
 *   during a rollout and a retry that overlaps a request the relay timed out (10 s, against the function's 15 s)
 *   make three. Ten leaves room for that and for a slow SQS call, while a flood of unsigned requests can hold at
 *   most ten executions: Lambda answers the rest 429 before running any code (not billed), and the relay retries a
 *   429 with backoff.
 * - `provisioner` 2: the pod-event queue is FIFO with one message group (the cluster), so Lambda runs one batch at a
 *   time; 2 is the least an SQS event source's maximum concurrency may be, and that maximum is set to the same value
 *   so the event source never invokes more than is reserved (a throttled batch would count as a receive).
 * - `interruption` 10: spot interruption warnings (2 minutes) and health events arrive in bursts when a pool is
 *   reclaimed; ten batches of ten at once, guaranteed even when the rest of the account is busy.
 * The disruption function always reserves 1 (one pass at a time); the lifecycle function reserves none (a throttled
 * scheduled pass is superseded by the next one).
 */
export const DEFAULT_RESERVED_CONCURRENCY = { webhook: 10, provisioner: 2, interruption: 10 } as const;

/** Lambda's per-function ceiling of reserved concurrency is the account's; 1000 is the default account quota. */
const reserved = (min: number) => z.number().int().min(min).max(1000);

/** The configuration schema. Unknown keys are errors (a misspelt optional key would otherwise be ignored). */
export const StackConfigSchema = z
  .strictObject({
    /** EKS cluster name (EKS: 1–100 characters, letters, digits, `-`, `_`, starting with a letter or digit). */
    clusterName: z.string().regex(/^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$/, 'must be an EKS cluster name: letters, digits, - and _, starting with a letter or digit, at most 100 characters'),
    /** Region of the cluster and the stack, e.g. `us-west-2`. */
    region: z.string().regex(/^[a-z]{2}(-gov|-iso[a-z]*)?-[a-z]+-\d+$/, 'must be an AWS region such as us-west-2'),
    /** Account to deploy to. @default the CLI's account (`CDK_DEFAULT_ACCOUNT`) */
    account: z.string().regex(/^\d{12}$/, 'must be a 12-digit AWS account id').optional(),
    /** Stack name. @default `Skiff-<clusterName>` */
    stackName: z.string().regex(/^[A-Za-z][A-Za-z0-9-]{0,127}$/, 'must be a CloudFormation stack name').optional(),
    /** What the Lambdas need to reach and describe the cluster: `aws eks describe-cluster --name <cluster>`. */
    cluster: z.strictObject({
      /** `cluster.endpoint`. */
      endpoint: z.string().regex(/^https:\/\/[^/\s]+\/?$/, 'must be the https:// API server URL (aws eks describe-cluster … --query cluster.endpoint)'),
      /** `cluster.certificateAuthority.data` (base64 PEM). */
      certificateAuthorityData: z.base64('must be the base64 CA bundle (aws eks describe-cluster … --query cluster.certificateAuthority.data)').min(1),
      /** `cluster.version`, e.g. `1.31` (AMI aliases resolve for it). Redeploy after a cluster upgrade. */
      kubernetesVersion: z.string().regex(/^\d+\.\d+$/, 'must be major.minor, e.g. 1.31'),
      /** `cluster.kubernetesNetworkConfig.serviceIpv4Cidr` (nodeadm derives the cluster DNS address from it). */
      serviceCidr: z.cidrv4('must be an IPv4 CIDR such as 10.100.0.0/16').optional(),
      /**
       * `public`: the Lambdas reach the API server over the internet. `private`: they run in `vpc` (required then).
       * @default 'public'
       */
      endpointAccess: z.enum(['public', 'private']).default('public'),
    }),
    /** ARN of the IAM role nodes run with (EC2NodeClass `spec.role`); the only role Skiff may pass to EC2. */
    nodeRoleArn: z.string().regex(/^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]+$/, 'must be an IAM role ARN (arn:aws:iam::<account>:role/<name>)'),
    /** Where the controller Lambdas run. Required when `cluster.endpointAccess` is `private`. */
    vpc: z
      .strictObject({
        vpcId: z.string().regex(/^vpc-([0-9a-f]{8}|[0-9a-f]{17})$/, 'must be a VPC id (vpc- and 8 or 17 hex digits)'),
        /** Private subnets with a route to the AWS APIs (NAT gateway or VPC endpoints) and to the API server. */
        subnetIds: z.array(z.string().regex(/^subnet-([0-9a-f]{8}|[0-9a-f]{17})$/, 'must be a subnet id (subnet- and 8 or 17 hex digits)')).min(1, 'needs at least one subnet'),
        /** The cluster security group: when set, the stack lets the Lambdas' security group reach it on TCP 443. */
        clusterSecurityGroupId: z.string().regex(/^sg-([0-9a-f]{8}|[0-9a-f]{17})$/, 'must be a security group id (sg- and 8 or 17 hex digits)').optional(),
      })
      .optional(),
    /** Schedules of the periodic controllers, in minutes. @default every minute (Karpenter's disruption loop runs continuously) */
    schedules: z.strictObject({ disruptionMinutes: minutes.default(1), lifecycleMinutes: minutes.default(1) }).default({ disruptionMinutes: 1, lifecycleMinutes: 1 }),
    /**
     * Reserved concurrency of the webhook and of the queue-driven controllers: a cap for the webhook (a flood of
     * requests to its public URL cannot use up the account's concurrency) and a guarantee for the provisioner and the
     * interruption handler (they keep running when other functions in the account use up the rest). The queue-driven
     * controllers' SQS event sources get the same value as their maximum concurrency (at least 2, the least Lambda
     * allows). Lambda keeps at least 100 of the account's concurrency unreserved, so the account quota must exceed the
     * sum (23 by default, with the disruption function's 1) by 100. @default {@link DEFAULT_RESERVED_CONCURRENCY}
     */
    reservedConcurrency: z
      .strictObject({
        webhook: reserved(1).default(DEFAULT_RESERVED_CONCURRENCY.webhook),
        provisioner: reserved(2).default(DEFAULT_RESERVED_CONCURRENCY.provisioner),
        interruption: reserved(2).default(DEFAULT_RESERVED_CONCURRENCY.interruption),
      })
      .default(DEFAULT_RESERVED_CONCURRENCY),
    /** Create the EKS access entry for the controllers' role (needs authentication mode API or API_AND_CONFIG_MAP). @default true */
    createAccessEntry: z.boolean().default(true),
    /** Karpenter's `SpotToSpotConsolidation` feature gate. @default false */
    spotToSpotConsolidation: z.boolean().default(false),
    /** Lambda log retention, days (a value CloudWatch accepts). @default 30 */
    logRetentionDays: z
      .number()
      .int()
      .refine((d) => (LOG_RETENTION_DAYS as readonly number[]).includes(d), `must be one of ${LOG_RETENTION_DAYS.join(', ')}`)
      .default(30),
    /**
     * Ship a source map with each Lambda and run it with `NODE_OPTIONS=--enable-source-maps`, so stack traces in the
     * logs name TypeScript lines. Off by default: the maps are 3–14 MB per function in the deployed package
     * (`infra/constructs/skiff-function.ts` `skiffBundling`). @default false
     */
    sourceMaps: z.boolean().default(false),
    /** SNS topic ARN the alarms notify. @default none (alarms only change state) */
    alarmTopicArn: z.string().regex(/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[\w-]+$/, 'must be an SNS topic ARN').optional(),
  })
  .superRefine((config, ctx) => {
    if (config.cluster.endpointAccess === 'private' && config.vpc === undefined) {
      ctx.addIssue({ code: 'custom', path: ['vpc'], message: 'is required when cluster.endpointAccess is private (the Lambdas must run in the VPC to reach the API server)' });
    }
    const roleAccount = /^arn:aws[a-z-]*:iam::(\d{12}):/.exec(config.nodeRoleArn)?.[1];
    if (config.account !== undefined && roleAccount !== undefined && roleAccount !== config.account) {
      ctx.addIssue({ code: 'custom', path: ['nodeRoleArn'], message: `is in account ${roleAccount}, not the stack's account ${config.account}` });
    }
  });

/** The validated configuration, defaults applied. */
export type StackConfig = z.output<typeof StackConfigSchema>;

/** The configuration is missing or invalid; `message` names the source and every bad field. */
export class StackConfigError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StackConfigError';
  }
}

/**
 * Validates a configuration object.
 * @param source where it came from, for the message (a file path or `context skiff:config`)
 * @throws {StackConfigError} listing every issue as `<source>: <field path>: <message>`
 * @example parseStackConfig(JSON.parse(text), 'infra/config/prod.json')
 */
export function parseStackConfig(value: unknown, source: string): StackConfig {
  const parsed = StackConfigSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((issue) => `  ${source}: ${issue.path.length > 0 ? issue.path.join('.') : '(root)'}: ${issue.message}`);
  throw new StackConfigError(`invalid Skiff stack configuration:\n${lines.join('\n')}`);
}

/**
 * The configuration named by the context value of {@link CONFIG_CONTEXT_KEY}: a JSON file path, or the object.
 * @param contextValue `app.node.tryGetContext('skiff:config')`
 * @param cwd base of a relative path. @default process.cwd()
 * @throws {StackConfigError} when the value is missing, the file cannot be read or parsed, or the configuration is invalid
 */
export function loadStackConfig(contextValue: unknown, cwd = process.cwd()): StackConfig {
  if (contextValue === undefined || contextValue === null || contextValue === '') {
    throw new StackConfigError(`no Skiff stack configuration: pass -c ${CONFIG_CONTEXT_KEY}=<file.json> (start from infra/config/sample.json), or set "${CONFIG_CONTEXT_KEY}" in cdk.json's context`);
  }
  if (typeof contextValue !== 'string') return parseStackConfig(contextValue, `context ${CONFIG_CONTEXT_KEY}`);
  const path = resolve(cwd, contextValue);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new StackConfigError(`cannot read the Skiff stack configuration ${contextValue}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new StackConfigError(`${contextValue} is not JSON: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  return parseStackConfig(value, contextValue);
}
