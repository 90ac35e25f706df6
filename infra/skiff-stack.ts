/**
 * `SkiffStack`: everything Skiff runs on AWS for one EKS cluster, composed from the constructs in `constructs/`
 * (docs/architecture.md#event-flow):
 *
 * relay → webhook (Function URL, reserved concurrency as a cap) → FIFO pod-event queue → provisioner; five EventBridge
 * rules → interruption queue → interruption (both with reserved concurrency as a guarantee, `reservedConcurrency` of
 * the configuration); schedules → disruption (reserved concurrency 1; its passes with work in flight ask for a follow-up
 * pass 20 s later through a FIFO follow-up queue) and lifecycle (a pass that finds a Node to register asks for another
 * 20 s later through its own follow-up queue, which the provisioner's node-event passes use too), plus a 12-hourly
 * price refresh on the lifecycle function; one DynamoDB table; an EventBridge bus for the decisions of the provisioner, disruption and
 * interruption functions; the controllers' shared role with its EKS access entry; alarms and a dashboard.
 */
import { CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { CONTROLLER_ENV } from '../shared/lambda/env.js';
import { ClusterAccess } from './constructs/cluster-access.js';
import { ControllerNetwork } from './constructs/controller-network.js';
import { ControllerRole } from './constructs/controller-role.js';
import { DecisionBus } from './constructs/decision-bus.js';
import { EventQueues } from './constructs/event-queues.js';
import { FollowUpQueue } from './constructs/follow-up-queue.js';
import { InterruptionRules } from './constructs/interruption-rules.js';
import { Observability } from './constructs/observability.js';
import { PeriodicController } from './constructs/periodic-controller.js';
import { PriceRefresh } from './constructs/price-refresh.js';
import { QueueController } from './constructs/queue-controller.js';
import type { SkiffFunction, SkiffFunctionProps } from './constructs/skiff-function.js';
import { StateTable } from './constructs/state-table.js';
import { Webhook } from './constructs/webhook.js';
import type { StackConfig } from './stack-config.js';

/** Timeouts of the queue-driven controllers (their queues' visibility timeouts derive from them). */
export const PROVISIONER_TIMEOUT = Duration.minutes(2);
export const INTERRUPTION_TIMEOUT = Duration.seconds(60);
/** Timeout of the disruption function (the follow-up queue's visibility timeout is this). */
export const DISRUPTION_TIMEOUT = Duration.minutes(2);
/** Timeout of the lifecycle function (the lifecycle follow-up queue's visibility timeout is this). */
export const LIFECYCLE_TIMEOUT = Duration.minutes(2);

/** Props of {@link SkiffStack}. */
export interface SkiffStackProps extends StackProps {
  /** The validated configuration (`stack-config.ts`). */
  readonly config: StackConfig;
}

/** The stack. */
export class SkiffStack extends Stack {
  readonly table: StateTable;
  readonly queues: EventQueues;
  readonly controllerRole: ControllerRole;
  readonly webhook: Webhook;
  readonly provisioner: QueueController;
  readonly interruption: QueueController;
  readonly disruption: PeriodicController;
  readonly followUps: FollowUpQueue;
  readonly lifecycle: PeriodicController;
  readonly lifecycleFollowUps: FollowUpQueue;
  readonly provisionerFollowUps: FollowUpQueue;
  readonly decisions: DecisionBus;
  readonly priceRefresh: PriceRefresh;
  readonly observability: Observability;
  readonly clusterAccess?: ClusterAccess;
  readonly network?: ControllerNetwork;

  constructor(scope: Construct, id: string, props: SkiffStackProps) {
    super(scope, id, props);
    const { config } = props;
    const cluster = config.clusterName;
    const logRetention = config.logRetentionDays as logs.RetentionDays;

    this.table = new StateTable(this, 'State');
    this.queues = new EventQueues(this, 'Queues', { provisionerTimeout: PROVISIONER_TIMEOUT, interruptionTimeout: INTERRUPTION_TIMEOUT });
    new InterruptionRules(this, 'InterruptionRules', { queue: this.queues.interruptionQueue, deadLetterQueue: this.queues.interruptions.deadLetterQueue });
    this.webhook = new Webhook(this, 'Webhook', { clusterName: cluster, queues: this.queues, logRetention, reservedConcurrentExecutions: config.reservedConcurrency.webhook, sourceMaps: config.sourceMaps });

    if (config.vpc) {
      this.network = new ControllerNetwork(this, 'Network', {
        vpcId: config.vpc.vpcId,
        subnetIds: config.vpc.subnetIds,
        ...(config.vpc.clusterSecurityGroupId !== undefined ? { clusterSecurityGroupId: config.vpc.clusterSecurityGroupId } : {}),
      });
    }
    this.controllerRole = new ControllerRole(this, 'Controllers', { clusterName: cluster, nodeRoleArn: config.nodeRoleArn, vpcAccess: this.network !== undefined });

    // What every controller shares: the role, the cluster's facts, the VPC placement.
    const controller = (entry: string, description: string): SkiffFunctionProps => ({
      entry,
      description: `Skiff ${description} of EKS cluster ${cluster}`,
      role: this.controllerRole.role,
      logRetention,
      sourceMaps: config.sourceMaps,
      environment: {
        [CONTROLLER_ENV.cluster]: cluster,
        [CONTROLLER_ENV.clusterEndpoint]: config.cluster.endpoint,
        [CONTROLLER_ENV.clusterCertificateAuthority]: config.cluster.certificateAuthorityData,
        [CONTROLLER_ENV.kubernetesVersion]: config.cluster.kubernetesVersion,
        ...(config.cluster.serviceCidr !== undefined ? { [CONTROLLER_ENV.serviceCidr]: config.cluster.serviceCidr } : {}),
        [CONTROLLER_ENV.spotToSpotConsolidation]: String(config.spotToSpotConsolidation),
      },
      ...(this.network ? { vpc: this.network.placement } : {}),
    });

    this.provisioner = new QueueController(this, 'Provisioner', {
      ...controller('functions/provisioner/index.ts', 'provisioner'),
      queue: this.queues.podEventQueue,
      timeout: PROVISIONER_TIMEOUT,
      memorySize: 1769, // one full vCPU for the solver
      // Guaranteed even when the rest of the account is busy (e.g. a flood held off by the webhook's own cap).
      reservedConcurrentExecutions: config.reservedConcurrency.provisioner,
    });
    this.interruption = new QueueController(this, 'Interruption', {
      ...controller('functions/interruption/index.ts', 'interruption handler'),
      queue: this.queues.interruptionQueue,
      timeout: INTERRUPTION_TIMEOUT,
      memorySize: 1769,
      // A spot warning gives 2 minutes: the handler must never wait for concurrency another function took.
      reservedConcurrentExecutions: config.reservedConcurrency.interruption,
    });
    this.disruption = new PeriodicController(this, 'Disruption', {
      ...controller('functions/disruption/index.ts', 'disruption controller'),
      everyMinutes: config.schedules.disruptionMinutes,
      timeout: DISRUPTION_TIMEOUT,
      memorySize: 1769,
      // One pass at a time (the lease also guards it); a scheduled run that overlaps a long pass is throttled and
      // dropped, a follow-up retried by its event source mapping (constructs/follow-up-queue.ts).
      reservedConcurrentExecutions: 1,
    });
    // A pass with work in flight asks for another 20 s later through this FIFO queue.
    this.followUps = new FollowUpQueue(this, 'FollowUps', { consumer: this.disruption.handler, consumerTimeout: DISRUPTION_TIMEOUT });
    this.lifecycle = new PeriodicController(this, 'Lifecycle', {
      ...controller('functions/lifecycle/index.ts', 'lifecycle controller'),
      everyMinutes: config.schedules.lifecycleMinutes,
      timeout: LIFECYCLE_TIMEOUT,
      memorySize: 1024,
    });
    // A pass that finds a Node to register asks for another 20 s later, before it writes (a pass cut short is resumed).
    this.lifecycleFollowUps = new FollowUpQueue(this, 'LifecycleFollowUps', { controller: 'lifecycle', consumer: this.lifecycle.handler, consumerTimeout: LIFECYCLE_TIMEOUT, senders: [this.provisioner.handler] });
    // A pass that leaves pods unschedulable while offerings are unavailable (ICE) asks for another 20 s later.
    this.provisionerFollowUps = new FollowUpQueue(this, 'ProvisionerFollowUps', { controller: 'provisioner', consumer: this.provisioner.handler, consumerTimeout: PROVISIONER_TIMEOUT });
    const controllers: Record<string, SkiffFunction> = {
      Provisioner: this.provisioner.handler,
      Interruption: this.interruption.handler,
      Disruption: this.disruption.handler,
      Lifecycle: this.lifecycle.handler,
    };
    for (const fn of Object.values(controllers)) {
      this.table.grantReadWrite(fn);
      // The adapters' policy is a separate resource: attach it before the functions (and their triggers) exist.
      fn.function.node.addDependency(this.controllerRole);
    }
    // Decisions from the controllers that make them; the lifecycle controller records no decision.
    this.decisions = new DecisionBus(this, 'Decisions', { clusterName: cluster });
    for (const fn of [this.provisioner.handler, this.disruption.handler, this.interruption.handler]) this.decisions.grantPublish(fn);
    this.priceRefresh = new PriceRefresh(this, 'PriceRefresh', { handler: this.lifecycle.handler });

    if (config.createAccessEntry) this.clusterAccess = new ClusterAccess(this, 'ClusterAccess', { clusterName: cluster, role: this.controllerRole.role });

    this.observability = new Observability(this, 'Observability', {
      clusterName: cluster,
      functions: { Webhook: this.webhook.handler, ...controllers },
      queues: { PodEvents: this.queues.podEvents, Interruptions: this.queues.interruptions },
      interruptions: this.queues.interruptions,
      ...(config.alarmTopicArn !== undefined ? { alarmTopicArn: config.alarmTopicArn } : {}),
    });

    new CfnOutput(this, 'ControllerRoleArn', { value: this.controllerRole.role.roleArn, description: 'IAM role of the controllers (the EKS access entry principal)' });
    new CfnOutput(this, 'TableName', { value: this.table.table.tableName, description: 'DynamoDB table (skiff get nodeclaims --table …)' });
    new CfnOutput(this, 'InterruptionQueueName', { value: this.queues.interruptionQueue.queueName, description: 'Interruption queue fed by the five EventBridge rules' });
    new CfnOutput(this, 'DecisionBusName', { value: this.decisions.bus.eventBusName, description: 'EventBridge bus of Skiff’s decisions (source skiff)' });
    new CfnOutput(this, 'DashboardName', { value: this.observability.dashboard.dashboardName, description: 'CloudWatch dashboard' });
  }
}
