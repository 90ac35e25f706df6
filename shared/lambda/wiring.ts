/**
 * The controller Lambdas' production dependencies (their AWS composition root): DynamoDB stores on the one table,
 * the EC2 CloudProvider with its launch templates, subnets and instance types, the Kubernetes API with an EKS token,
 * the wall clock and a Powertools logger — configured from the environment ({@link CONTROLLER_ENV}, set by the CDK
 * stack). The webhook has its own, smaller root (`webhook-wiring.ts`).
 *
 * Every builder only creates clients: nothing calls AWS or the API server until a handler runs, so a function's
 * `index.ts` can build its dependencies on the first invocation and a test can check the environment offline.
 * The result of each builder is structurally the `…HandlerDeps` of `functions/<name>/handler.ts` (this layer may not
 * import functions).
 *
 * Decisions: when `SKIFF_DECISION_BUS_NAME` is set (the stack sets it on the provisioner, disruption and interruption
 * functions), their handlers get an `EventBridgeDecisionPublisher` on that bus; publishing is best effort
 * (`decisions.ts`). Follow-ups: when `SKIFF_DISRUPTION_FOLLOW_UP_QUEUE_URL` is set (the stack sets it on the
 * disruption function), a disruption pass with work in flight asks for a follow-up pass on that SQS FIFO queue
 * (`shared/adapters/aws/sqs-follow-up-passes.ts`); likewise the lifecycle function and the provisioner on theirs
 * (`SKIFF_LIFECYCLE_FOLLOW_UP_QUEUE_URL`, `SKIFF_PROVISIONER_FOLLOW_UP_QUEUE_URL`). Prices: the lifecycle function gets the price refresher
 * (`price-refresh.ts`: the 12-hourly task and the catch-up). The provisioner gets a lifecycle pass to run when relay
 * node events arrive.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { EventBridgeDecisionPublisher } from '../adapters/aws/decision-events.js';
import { DynamoDbNodeClaimStore } from '../adapters/aws/dynamodb-nodeclaim-store.js';
import { SubnetDiscovery } from '../adapters/aws/discovery.js';
import { Ec2CloudProvider, ec2Client } from '../adapters/aws/ec2-cloud-provider.js';
import { EksTokenCache } from '../adapters/aws/eks-token.js';
import { Ec2InstanceTypes } from '../adapters/aws/instance-types.js';
import type { LaunchTemplateSource } from '../adapters/aws/launch-contracts.js';
import { DynamoDbLeaseStore } from '../adapters/aws/lease-store.js';
import { DynamoDbPriceStore, refreshPrices } from '../adapters/aws/price-store.js';
import { createPricingClient } from '../adapters/aws/pricing.js';
import { DynamoDbProvisioningPassStore } from '../adapters/aws/provisioning-pass-store.js';
import { SqsFollowUpPasses } from '../adapters/aws/sqs-follow-up-passes.js';
import { TRANSLATE_CONFIG } from '../adapters/aws/table.js';
import { DynamoDbUnavailableOfferingsStore } from '../adapters/aws/unavailable-offerings-store.js';
import { KubernetesCluster } from '../adapters/kubernetes/kubernetes-cluster.js';
import type { DisruptionReport } from '../controllers/disruption/deps.js';
import { disrupt } from '../controllers/disruption/disrupt.js';
import { DisruptionMemory } from '../controllers/disruption/memory.js';
import { handleInterruption, type InterruptionReport } from '../controllers/interruption.js';
import { reconcileLifecycle, type LifecycleReport } from '../controllers/lifecycle.js';
import { provision, type ProvisionReport, type ProvisionTrigger } from '../controllers/provision.js';
import type { InterruptionMessage } from '../core/api/interruption-events.js';
import { systemClock, type Clock } from '../ports/clock.js';
import type { DecisionPublisher } from '../ports/decisions.js';
import type { FollowUpPasses } from '../ports/follow-up-passes.js';
import { randomIds, type IdGenerator } from '../ports/ids.js';
import { ConfigurationError, CONTROLLER_ENV, REQUIRED_CONTROLLER_ENV, requireEnvAll } from './env.js';
import type { Log } from './log.js';
import { createEmfPublisher, PodStartupTracker, type MetricsPublisher } from './metrics.js';
import { LIFECYCLE_LEASE_NAME, runUnderLease, type InvocationContext, type PeriodicLease } from './periodic-lease.js';
import { createPriceRefresher, type PriceRefresher } from './price-refresh.js';
import { powertoolsLog } from './webhook-wiring.js';

/** An environment as `process.env` gives it. */
export type Env = Readonly<Record<string, string | undefined>>;

/** What the controllers are configured with, parsed from the environment. */
export interface ControllerSettings {
  /** EKS cluster name. */
  readonly cluster: string;
  /** AWS region, e.g. `us-west-2`. */
  readonly region: string;
  /** DynamoDB table name. */
  readonly tableName: string;
  /** API server URL (`https://…`). */
  readonly endpoint: string;
  /** Cluster CA, base64 PEM. */
  readonly certificateAuthority: string;
  /** Kubernetes version, e.g. `1.31`. */
  readonly kubernetesVersion: string;
  /** Service IPv4 CIDR, when configured. */
  readonly serviceCidr?: string;
  /** Karpenter's `SpotToSpotConsolidation` feature gate. @default false */
  readonly spotToSpotConsolidation: boolean;
  /** The EventBridge bus decisions go to, when configured (`SKIFF_DECISION_BUS_NAME`). */
  readonly decisionBusName?: string;
  /** The FIFO queue of follow-up disruption passes, when configured (`SKIFF_DISRUPTION_FOLLOW_UP_QUEUE_URL`). */
  readonly disruptionFollowUpQueueUrl?: string;
  /** The FIFO queue of follow-up lifecycle passes, when configured (`SKIFF_LIFECYCLE_FOLLOW_UP_QUEUE_URL`). */
  readonly lifecycleFollowUpQueueUrl?: string;
  /** The FIFO queue of follow-up provisioning passes, when configured (`SKIFF_PROVISIONER_FOLLOW_UP_QUEUE_URL`). */
  readonly provisionerFollowUpQueueUrl?: string;
}

/**
 * Reads and checks the controller variables.
 * @throws {ConfigurationError} naming every required variable that is missing (one error for all of them), or the
 *   variable whose value is unusable (an endpoint that is not `https://`, a flag that is not `true`/`false`)
 * @example controllerSettingsFromEnv(process.env).tableName
 */
export function controllerSettingsFromEnv(env: Env): ControllerSettings {
  const values = requireEnvAll(env, REQUIRED_CONTROLLER_ENV);
  const endpoint = values[CONTROLLER_ENV.clusterEndpoint];
  if (!/^https:\/\/[^/\s]+/.test(endpoint)) {
    throw new ConfigurationError(CONTROLLER_ENV.clusterEndpoint, `environment variable ${CONTROLLER_ENV.clusterEndpoint} must be the cluster's https:// API server URL, not ${JSON.stringify(endpoint)}`);
  }
  const version = values[CONTROLLER_ENV.kubernetesVersion];
  if (!/^v?\d+\.\d+/.test(version)) {
    throw new ConfigurationError(CONTROLLER_ENV.kubernetesVersion, `environment variable ${CONTROLLER_ENV.kubernetesVersion} must start with major.minor (e.g. 1.31), not ${JSON.stringify(version)}`);
  }
  const flag = env[CONTROLLER_ENV.spotToSpotConsolidation]?.trim().toLowerCase() ?? '';
  if (flag !== '' && flag !== 'true' && flag !== 'false') {
    throw new ConfigurationError(CONTROLLER_ENV.spotToSpotConsolidation, `environment variable ${CONTROLLER_ENV.spotToSpotConsolidation} must be true or false, not ${JSON.stringify(flag)}`);
  }
  const serviceCidr = env[CONTROLLER_ENV.serviceCidr]?.trim();
  const decisionBusName = env[CONTROLLER_ENV.decisionBusName]?.trim();
  const followUpQueueUrl = fifoQueueUrl(env, CONTROLLER_ENV.disruptionFollowUpQueueUrl);
  const lifecycleFollowUpQueueUrl = fifoQueueUrl(env, CONTROLLER_ENV.lifecycleFollowUpQueueUrl);
  const provisionerFollowUpQueueUrl = fifoQueueUrl(env, CONTROLLER_ENV.provisionerFollowUpQueueUrl);
  return {
    cluster: values[CONTROLLER_ENV.cluster],
    region: values[CONTROLLER_ENV.region],
    tableName: values[CONTROLLER_ENV.tableName],
    endpoint,
    certificateAuthority: values[CONTROLLER_ENV.clusterCertificateAuthority],
    kubernetesVersion: version,
    ...(serviceCidr ? { serviceCidr } : {}),
    spotToSpotConsolidation: flag === 'true',
    ...(decisionBusName ? { decisionBusName } : {}),
    ...(followUpQueueUrl ? { disruptionFollowUpQueueUrl: followUpQueueUrl } : {}),
    ...(lifecycleFollowUpQueueUrl ? { lifecycleFollowUpQueueUrl } : {}),
    ...(provisionerFollowUpQueueUrl ? { provisionerFollowUpQueueUrl } : {}),
  };
}

/**
 * An optional variable holding an SQS FIFO queue's URL: its trimmed value, or undefined when unset or blank.
 * @throws {ConfigurationError} naming the variable when the value is not a `…/<name>.fifo` URL
 */
function fifoQueueUrl(env: Env, name: string): string | undefined {
  const url = env[name]?.trim();
  if (url && !/^https?:\/\/[^/\s]+\/.+\.fifo$/.test(url)) {
    throw new ConfigurationError(name, `environment variable ${name} must be the URL of an SQS FIFO queue (…/<name>.fifo), not ${JSON.stringify(url)}`);
  }
  return url || undefined;
}

/** The adapters every controller shares, bound to one cluster. Built once per Lambda container. */
export interface ControllerAdapters {
  readonly settings: ControllerSettings;
  readonly cluster: KubernetesCluster;
  readonly cloud: Ec2CloudProvider;
  readonly store: DynamoDbNodeClaimStore;
  /** The price snapshot (read by the instance types, written by the lifecycle function's refresh). */
  readonly prices: DynamoDbPriceStore;
  /** The region's EC2 client (spot prices). */
  readonly ec2: ReturnType<typeof ec2Client>;
  readonly unavailableOfferings: DynamoDbUnavailableOfferingsStore;
  readonly passes: DynamoDbProvisioningPassStore;
  readonly leases: DynamoDbLeaseStore;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly log: Log;
  /** Karpenter-named metrics as EMF (namespace `Skiff`, dimensions `service` and `cluster`). */
  readonly metrics: MetricsPublisher;
  /** Decisions on the EventBridge bus, when `settings.decisionBusName` is set. */
  readonly decisions?: DecisionPublisher;
}

/** How a function's EC2 cloud provider gets its launch templates. */
export type LaunchTemplatesFor = (settings: ControllerSettings, ec2: ReturnType<typeof ec2Client>, clock: Clock) => LaunchTemplateSource;

/**
 * The lifecycle function never launches (its controller lists and deletes instances), so it is built without launch
 * templates. The launching functions get `ec2LaunchTemplates` from `launch-wiring.ts`, which this module does not
 * import: the lifecycle bundle then holds neither the SSM and IAM clients nor the user-data code with `yaml` and
 * `smol-toml` (docs/architecture.md#lambda-bundles). A launch through it is a bug and fails.
 */
export const noLaunchTemplates: LaunchTemplatesFor = () => ({
  resolve: () => Promise.reject(new Error('the lifecycle function does not launch instances')),
  invalidate: () => {},
});

/**
 * Builds the shared adapters from checked settings. Creates clients only (no network call).
 * @param settings from {@link controllerSettingsFromEnv}
 * @param service the Powertools service name of the logs, e.g. `skiff-provisioner`
 * @param launchTemplates `ec2LaunchTemplates` (`launch-wiring.ts`), or {@link noLaunchTemplates} for a function that never launches
 */
export function controllerAdapters(settings: ControllerSettings, service: string, launchTemplates: LaunchTemplatesFor): ControllerAdapters {
  const { cluster: clusterName, region, tableName } = settings;
  const clock = systemClock;
  const log = powertoolsLog(new Logger({ serviceName: service, persistentKeys: { cluster: clusterName } }));
  const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region }), TRANSLATE_CONFIG);
  const table = { client, tableName, cluster: clusterName };
  const tokens = new EksTokenCache({ clusterName, region, clock });
  const cluster = new KubernetesCluster({ server: settings.endpoint, caData: settings.certificateAuthority, token: () => tokens.token(), clock, log });
  const ec2 = ec2Client({ region });
  const prices = new DynamoDbPriceStore(table);
  const cloud = new Ec2CloudProvider({
    ec2,
    clusterName,
    region,
    nodeClass: async (name) => (await cluster.listNodeClasses()).find((c) => c.metadata.name === name),
    launchTemplates: launchTemplates(settings, ec2, clock),
    subnets: new SubnetDiscovery({ ec2, clock }),
    instanceTypes: new Ec2InstanceTypes({ ec2, prices, clock }),
    clock,
  });
  return {
    settings,
    cluster,
    cloud,
    store: new DynamoDbNodeClaimStore(table),
    prices,
    ec2,
    unavailableOfferings: new DynamoDbUnavailableOfferingsStore(table),
    passes: new DynamoDbProvisioningPassStore(table),
    leases: new DynamoDbLeaseStore(table),
    clock,
    ids: randomIds,
    log,
    metrics: createEmfPublisher({ clusterName }),
    ...(settings.decisionBusName !== undefined
      ? { decisions: new EventBridgeDecisionPublisher({ client: new EventBridgeClient({ region }), eventBusName: settings.decisionBusName, clusterName }) }
      : {}),
  };
}

/** The provision controller's ports, bound to the adapters. */
function provisionDeps(a: ControllerAdapters) {
  return {
    cluster: a.cluster,
    cloud: a.cloud,
    store: a.store,
    unavailableOfferings: a.unavailableOfferings,
    passes: a.passes,
    clock: a.clock,
    ids: a.ids,
    clusterName: a.settings.cluster,
    region: a.settings.region,
  };
}

/** The disruption controller's ports, bound to the adapters. */
function disruptionDeps(a: ControllerAdapters) {
  return {
    cluster: a.cluster,
    cloud: a.cloud,
    store: a.store,
    unavailableOfferings: a.unavailableOfferings,
    clock: a.clock,
    ids: a.ids,
    clusterName: a.settings.cluster,
    region: a.settings.region,
    spotToSpotConsolidation: a.settings.spotToSpotConsolidation,
    // One per warm container, as the store it remembers things about.
    memory: new DisruptionMemory(),
  };
}

/** The lifecycle controller's ports, bound to the adapters. */
function lifecycleDeps(a: ControllerAdapters, observeUsage: boolean) {
  // `launch`: the pass launches Pending NodeClaims again (a launch a throttled API refused, a provisioner pass that died).
  const launch = { unavailableOfferings: a.unavailableOfferings, ids: a.ids, clusterName: a.settings.cluster, region: a.settings.region, listNodeClasses: () => a.cluster.listNodeClasses() };
  const queueUrl = a.settings.lifecycleFollowUpQueueUrl;
  const followUps = queueUrl !== undefined ? { followUps: new SqsFollowUpPasses({ client: new SQSClient({ region: a.settings.region }), queueUrl, clock: a.clock, controller: 'lifecycle' }) } : {};
  return { cluster: a.cluster, cloud: a.cloud, store: a.store, clock: a.clock, observeUsage, launch, ...followUps };
}

/** Structurally `ProvisionerHandlerDeps` (`functions/provisioner/handler.ts`). */
export interface ProvisionerDeps {
  readonly provision: (trigger: ProvisionTrigger) => Promise<ProvisionReport>;
  readonly log: Log;
  readonly metrics: MetricsPublisher;
  readonly decisions?: DecisionPublisher;
  /** A lifecycle pass under the `lifecycle` lease, for batches with relay node events (no usage observed). */
  readonly lifecycle: (context: InvocationContext) => Promise<{ readonly report: LifecycleReport } | { readonly backedOff: true }>;
}

/**
 * The provisioner's dependencies from `env`.
 * @param launchTemplates where launches get their launch templates: `ec2LaunchTemplates` (`launch-wiring.ts`)
 * @throws {ConfigurationError} see {@link controllerSettingsFromEnv}
 * @example export const handler = createHandler(provisionerDepsFromEnv(process.env, ec2LaunchTemplates));
 */
export function provisionerDepsFromEnv(env: Env, launchTemplates: LaunchTemplatesFor): ProvisionerDeps {
  const a = controllerAdapters(controllerSettingsFromEnv(env), 'skiff-provisioner', launchTemplates);
  const queueUrl = a.settings.provisionerFollowUpQueueUrl;
  const followUps = queueUrl !== undefined ? { followUps: new SqsFollowUpPasses({ client: new SQSClient({ region: a.settings.region }), queueUrl, clock: a.clock, controller: 'provisioner' }) } : {};
  const deps = { ...provisionDeps(a), ...followUps };
  const lifecycle = lifecycleDeps(a, false);
  const lease: PeriodicLease = { leases: a.leases, clock: a.clock };
  return {
    provision: (trigger) => provision(deps, trigger),
    log: a.log,
    metrics: a.metrics,
    ...(a.decisions ? { decisions: a.decisions } : {}),
    lifecycle: (context) => runUnderLease(LIFECYCLE_LEASE_NAME, lease, context, () => reconcileLifecycle(lifecycle), a.log),
  };
}

/** Structurally `LifecycleHandlerDeps` (`functions/lifecycle/handler.ts`). */
export interface LifecycleDeps {
  readonly reconcile: () => Promise<LifecycleReport>;
  readonly log: Log;
  readonly lease: PeriodicLease;
  readonly metrics: MetricsPublisher;
  /** This container's pod startup tracker (`karpenter_pods_startup_duration_seconds`). */
  readonly podStartup: PodStartupTracker;
  /** The price refresh: the 12-hourly task and the catch-up after scheduled passes. */
  readonly prices: PriceRefresher;
}

/**
 * The lifecycle Lambda's dependencies from `env`, with the `lifecycle` lease (duration: the invocation's remaining
 * time plus a margin), passes that observe usage (per-node and pod startup metrics), and the price refresher
 * (Pricing client on the endpoint that serves the region, the region's EC2 client, the table's snapshot, the
 * `prices` lease).
 * @throws {ConfigurationError} see {@link controllerSettingsFromEnv}
 */
export function lifecycleDepsFromEnv(env: Env): LifecycleDeps {
  const a = controllerAdapters(controllerSettingsFromEnv(env), 'skiff-lifecycle', noLaunchTemplates);
  const deps = lifecycleDeps(a, true);
  const lease: PeriodicLease = { leases: a.leases, clock: a.clock };
  const refresh = { pricing: createPricingClient(a.settings.region), ec2: a.ec2, store: a.prices, clock: a.clock, region: a.settings.region };
  return {
    reconcile: () => reconcileLifecycle(deps),
    log: a.log,
    lease,
    metrics: a.metrics,
    podStartup: new PodStartupTracker(),
    prices: createPriceRefresher({ refresh: () => refreshPrices(refresh), snapshotFetchedAt: () => a.prices.currentFetchedAt(), clock: a.clock, log: a.log, lease }),
  };
}

/** Structurally `DisruptionHandlerDeps` (`functions/disruption/handler.ts`). */
export interface DisruptionDeps {
  readonly disrupt: () => Promise<DisruptionReport>;
  readonly log: Log;
  readonly lease: PeriodicLease;
  readonly metrics: MetricsPublisher;
  readonly decisions?: DecisionPublisher;
  /** Follow-up passes on the SQS FIFO queue, and the clock their delay counts from; absent without the queue. */
  readonly followUps?: { readonly passes: FollowUpPasses; readonly clock: Clock };
}

/**
 * The disruption Lambda's dependencies from `env`, with the `disruption` lease and, when
 * `SKIFF_DISRUPTION_FOLLOW_UP_QUEUE_URL` is set, follow-up passes on that FIFO queue (`SqsFollowUpPasses` on the wall
 * clock, the queue's delay the port's 20 s as the stack sets it); without it passes run on the schedule only.
 * @param launchTemplates where replacements get their launch templates: `ec2LaunchTemplates` (`launch-wiring.ts`)
 * @throws {ConfigurationError} see {@link controllerSettingsFromEnv}; also when the follow-up queue URL is not a FIFO queue's
 */
export function disruptionDepsFromEnv(env: Env, launchTemplates: LaunchTemplatesFor): DisruptionDeps {
  const a = controllerAdapters(controllerSettingsFromEnv(env), 'skiff-disruption', launchTemplates);
  const queueUrl = a.settings.disruptionFollowUpQueueUrl;
  const passes = queueUrl !== undefined ? new SqsFollowUpPasses({ client: new SQSClient({ region: a.settings.region }), queueUrl, clock: a.clock }) : undefined;
  // The pass asks for its follow-up itself before its first side effect when it reads work in flight; else the handler
  // asks after the pass (`DisruptionReport.followUpAfterMs`).
  const deps = { ...disruptionDeps(a), ...(passes ? { followUps: passes } : {}) };
  return {
    disrupt: () => disrupt(deps),
    log: a.log,
    lease: { leases: a.leases, clock: a.clock },
    metrics: a.metrics,
    ...(a.decisions ? { decisions: a.decisions } : {}),
    ...(passes ? { followUps: { passes, clock: a.clock } } : {}),
  };
}

/** Structurally `InterruptionHandlerDeps` (`functions/interruption/handler.ts`). */
export interface InterruptionDeps {
  readonly handle: (message: InterruptionMessage) => Promise<InterruptionReport>;
  readonly log: Log;
  readonly metrics: MetricsPublisher;
  readonly decisions?: DecisionPublisher;
}

/**
 * The interruption Lambda's dependencies from `env`: the interruption controller with the disruption controller's
 * ports, plus a provisioning pass after each drain (as the simulation wires it).
 * @param launchTemplates where the pass's launches get their launch templates: `ec2LaunchTemplates` (`launch-wiring.ts`)
 * @throws {ConfigurationError} see {@link controllerSettingsFromEnv}
 */
export function interruptionDepsFromEnv(env: Env, launchTemplates: LaunchTemplatesFor): InterruptionDeps {
  const a = controllerAdapters(controllerSettingsFromEnv(env), 'skiff-interruption', launchTemplates);
  const pass = provisionDeps(a);
  const deps = { ...disruptionDeps(a), provision: () => provision(pass) };
  return { handle: (message) => handleInterruption(deps, message), log: a.log, metrics: a.metrics, ...(a.decisions ? { decisions: a.decisions } : {}) };
}
