/**
 * Environment variable names the Lambdas read, shared with `infra/` (a construct's `grantX(fn)` sets the variable
 * it grants), so a name is spelled in one place.
 */
import { SkiffError } from '../core/errors.js';

/** Names of the webhook Lambda's environment variables. */
export const WEBHOOK_ENV = {
  /** The EKS cluster name the stack serves; the FIFO MessageGroupId and the only cluster batches may name. */
  cluster: 'SKIFF_CLUSTER',
  /** URL of the SQS FIFO pod-event queue (`…/skiff-pod-events.fifo`). */
  podEventsQueueUrl: 'SKIFF_POD_EVENTS_QUEUE_URL',
  /** Name or ARN of the Secrets Manager secret holding the webhook HMAC key. */
  webhookSecretId: 'SKIFF_WEBHOOK_SECRET_ID',
} as const;

/**
 * Names of the controller Lambdas' environment variables (provisioner, lifecycle, disruption, interruption), read by
 * `shared/lambda/wiring.ts` and set by the CDK stack. `AWS_REGION` is set by Lambda itself.
 */
export const CONTROLLER_ENV = {
  /** The EKS cluster name (tags, table partition, EKS token). Same variable as the webhook's. */
  cluster: WEBHOOK_ENV.cluster,
  /** AWS region of the cluster, e.g. `us-west-2` (Lambda sets it). */
  region: 'AWS_REGION',
  /** Physical name of the DynamoDB table created from `shared/adapters/aws/table.ts`'s definition. */
  tableName: 'SKIFF_TABLE_NAME',
  /** Kubernetes API server URL, `https://…eks.amazonaws.com` (EKS `DescribeCluster` `endpoint`). */
  clusterEndpoint: 'SKIFF_CLUSTER_ENDPOINT',
  /** The cluster CA bundle, base64-encoded PEM (EKS `DescribeCluster` `certificateAuthority.data`). */
  clusterCertificateAuthority: 'SKIFF_CLUSTER_CA_DATA',
  /** The cluster's Kubernetes version, e.g. `1.31` (AMI alias resolution, node user data). */
  kubernetesVersion: 'SKIFF_KUBERNETES_VERSION',
  /** Optional: the cluster's service IPv4 CIDR, e.g. `10.100.0.0/16` (node user data; nodeadm derives cluster DNS). */
  serviceCidr: 'SKIFF_SERVICE_CIDR',
  /** Optional: `true` to allow spot-to-spot consolidation (Karpenter's `SpotToSpotConsolidation` feature gate). @default false */
  spotToSpotConsolidation: 'SKIFF_SPOT_TO_SPOT_CONSOLIDATION',
  /**
   * Optional: name of the EventBridge bus decisions are published to (set by `DecisionBus.grantPublish` on the
   * provisioner, disruption and interruption functions). Unset: decisions are only logged.
   */
  decisionBusName: 'SKIFF_DECISION_BUS_NAME',
  /**
   * Optional, disruption only: URL of the SQS FIFO queue of follow-up disruption passes (`…/…FollowUps….fifo`, set by
   * `FollowUpQueue.attach` on the disruption function). A pass with work in flight asks there for another pass 20 s
   * later (`shared/adapters/aws/sqs-follow-up-passes.ts`). Unset: passes run on the schedule only.
   */
  disruptionFollowUpQueueUrl: 'SKIFF_DISRUPTION_FOLLOW_UP_QUEUE_URL',
  /**
   * Optional, lifecycle and provisioner: URL of the SQS FIFO queue of follow-up lifecycle passes (`…LifecycleFollowUps….fifo`,
   * set by `FollowUpQueue` on the lifecycle function, which consumes it, and on the provisioner, which runs lifecycle
   * passes for node events). A pass that finds a Node to register or initialize, or a NodeClaim to launch again, asks
   * there for another pass 20 s later, before it writes anything (`LifecycleDeps.followUps`). Unset: passes run on
   * the schedule and on node events only.
   */
  lifecycleFollowUpQueueUrl: 'SKIFF_LIFECYCLE_FOLLOW_UP_QUEUE_URL',
  /**
   * Optional, provisioner only: URL of the SQS FIFO queue of follow-up provisioning passes
   * (`…ProvisionerFollowUps….fifo`, set by `FollowUpQueue` on the provisioner, which consumes it). A pass that leaves
   * pods unschedulable while offerings are marked unavailable asks there for another pass 20 s later
   * (`ProvisionDeps.followUps`). Unset: such pods are solved again on the next pod event or the relay's re-list.
   */
  provisionerFollowUpQueueUrl: 'SKIFF_PROVISIONER_FOLLOW_UP_QUEUE_URL',
} as const;

/** Controller variables without which no controller Lambda can start. */
export const REQUIRED_CONTROLLER_ENV = [
  CONTROLLER_ENV.cluster,
  CONTROLLER_ENV.region,
  CONTROLLER_ENV.tableName,
  CONTROLLER_ENV.clusterEndpoint,
  CONTROLLER_ENV.clusterCertificateAuthority,
  CONTROLLER_ENV.kubernetesVersion,
] as const;

/** A required environment variable is missing or empty, or a variable's value is not usable. */
export class ConfigurationError extends SkiffError {
  /**
   * @param variable the (first) variable's name
   * @param variables every variable concerned (all missing ones, when several are)
   */
  constructor(
    readonly variable: string,
    message = `environment variable ${variable} is not set`,
    readonly variables: readonly string[] = [variable],
  ) {
    super(message);
  }
}

/** True when `e` is a {@link ConfigurationError}. */
export const isConfigurationError = (e: unknown): e is ConfigurationError => e instanceof ConfigurationError;

/**
 * The value of a required variable.
 * @throws {ConfigurationError} when it is unset or empty
 */
export function requireEnv(env: Readonly<Record<string, string | undefined>>, name: string): string {
  const value = env[name]?.trim();
  if (value === undefined || value === '') throw new ConfigurationError(name);
  return value;
}

/**
 * The values of several required variables, checked together so one error names every missing one.
 * @returns name → trimmed value
 * @throws {ConfigurationError} naming every variable of `names` that is unset or empty
 * @example requireEnvAll(process.env, REQUIRED_CONTROLLER_ENV)[CONTROLLER_ENV.tableName]
 */
export function requireEnvAll<const N extends string>(env: Readonly<Record<string, string | undefined>>, names: readonly N[]): Record<N, string> {
  const values = {} as Record<N, string>;
  const missing: N[] = [];
  for (const name of names) {
    const value = env[name]?.trim();
    if (value === undefined || value === '') missing.push(name);
    else values[name] = value;
  }
  const [first] = missing;
  if (first !== undefined) {
    const message = missing.length === 1 ? `environment variable ${first} is not set` : `environment variables ${missing.join(', ')} are not set`;
    throw new ConfigurationError(first, message, missing);
  }
  return values;
}
