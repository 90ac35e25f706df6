/**
 * `Observability`: the alarms and the dashboard. Alarms: pods pending (unschedulable) for 5 minutes, persistent
 * launch failures, any message in a dead-letter queue, Lambda errors and throttles, and interruption messages
 * waiting longer than a minute (a spot warning gives two), a price snapshot over 13 hours old, and webhook requests
 * refused for 15 minutes (a flood, or a mis-keyed relay). The dashboard shows those, plus nodes and NodeClaims by
 * state, pod startup durations, per-NodePool node usage (the mean node's pod and DaemonSet requests against its
 * allocatable, cpu and memory), the price snapshot's age, decisions the bus did not take and webhook refusals by
 * status and reason. Metric names: `../metric-names.ts`.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { METRIC_NAMES, METRIC_NAMESPACE, alarmDimensions } from '../metric-names.js';
import type { DeadLetteredQueue } from './dead-lettered-queue.js';
import type { SkiffFunction } from './skiff-function.js';

/**
 * Webhook refusals (`skiff_webhook_requests_refused_total`, Sum) per 5-minute period that, in three periods in a row,
 * raise the `WebhookRefusals` alarm. Half of what a relay with a wrong secret produces (about 20 per 5 minutes: a
 * 401 is retried after a full-jitter backoff capped at 30 s), far above a healthy webhook's (none).
 */
export const WEBHOOK_REFUSALS_ALARM_THRESHOLD = 10;

/** Props of {@link Observability}. */
export interface ObservabilityProps {
  readonly clusterName: string;
  /** Every Skiff Lambda, by display name. */
  readonly functions: Readonly<Record<string, SkiffFunction>>;
  /** Every queue with a dead-letter queue, by display name. */
  readonly queues: Readonly<Record<string, DeadLetteredQueue>>;
  /** The interruption queue (its oldest message's age is alarmed). */
  readonly interruptions: DeadLetteredQueue;
  /** SNS topic the alarms notify. @default none */
  readonly alarmTopicArn?: string;
}

/** Alarms and dashboard. */
export class Observability extends Construct {
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    const topic = props.alarmTopicArn !== undefined ? sns.Topic.fromTopicArn(this, 'AlarmTopic', props.alarmTopicArn) : undefined;
    const alarm = (alarmId: string, metric: cloudwatch.Metric | cloudwatch.MathExpression, options: Omit<cloudwatch.CreateAlarmOptions, 'alarmDescription'> & { readonly description: string }): cloudwatch.Alarm => {
      const { description, ...rest } = options;
      const created = metric.createAlarm(this, alarmId, { treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING, alarmDescription: `Skiff (${props.clusterName}): ${description}`, ...rest });
      if (topic) created.addAlarmAction(new actions.SnsAction(topic));
      this.alarms.push(created);
      return created;
    };
    const skiffMetric = (metricName: string, statistic: string, period: Duration) => new cloudwatch.Metric({ namespace: METRIC_NAMESPACE, metricName, dimensionsMap: alarmDimensions(props.clusterName), statistic, period });

    const pending = skiffMetric(METRIC_NAMES.unschedulablePods, cloudwatch.Stats.MAXIMUM, Duration.minutes(1));
    alarm('PodsPending', pending, {
      description: 'pods have been unschedulable for 5 minutes (see the provisioner log, or run skiff explain)',
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 5,
      datapointsToAlarm: 5,
    });
    const launchFailures = skiffMetric(METRIC_NAMES.launchFailures, cloudwatch.Stats.SUM, Duration.minutes(5));
    // Capacity errors are normal (spot falls back to other pools): alarm only when launches keep failing.
    alarm('LaunchFailures', launchFailures, {
      description: 'instance launches have failed in each of the last three 5-minute periods',
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 3,
    });
    for (const [name, queue] of Object.entries(props.queues)) {
      alarm(`${name}DeadLetters`, queue.metricDeadLetters(), {
        description: `the ${name} dead-letter queue is not empty (messages the consumer gave up on)`,
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
      });
    }
    for (const [name, fn] of Object.entries(props.functions)) {
      alarm(`${name}Errors`, fn.function.metricErrors({ period: Duration.minutes(5), statistic: cloudwatch.Stats.SUM }), {
        description: `the ${name} Lambda has failed in each of the last three 5-minute periods`,
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 3,
      });
      // The disruption function reserves 1: while work is in flight its follow-up passes (every 20 s, the follow-up
      // queue) and the schedule's meet at that one slot, and a few throttles are how they take turns. Up to 20
      // invocations are asked for in 5 minutes; 10 throttles in each of three periods means passes are being lost.
      const throttles = name === 'Disruption' ? 10 : 1;
      alarm(`${name}Throttles`, fn.function.metricThrottles({ period: Duration.minutes(5), statistic: cloudwatch.Stats.SUM }), {
        description: `the ${name} Lambda has been throttled ${throttles === 1 ? '' : `${throttles} times or more `}in each of the last three 5-minute periods`,
        threshold: throttles,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 3,
      });
    }
    const age = props.interruptions.queue.metricApproximateAgeOfOldestMessage({ statistic: cloudwatch.Stats.MAXIMUM, period: Duration.minutes(1) });
    alarm('InterruptionQueueAge', age, {
      description: 'interruption messages have waited over 60 s (a spot warning gives 2 minutes)',
      threshold: 60,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 2,
      datapointsToAlarm: 2,
    });

    // The relay posts one batch at a time and backs off (capped at 30 s, full jitter) on a 401, so a relay with a wrong
    // secret or clock produces about 20 refusals per 5 minutes, and a healthy one next to none; a secret rotated in the
    // wrong order refuses for a minute or two. At least WEBHOOK_REFUSALS_ALARM_THRESHOLD in each of three 5-minute
    // periods is a flood of unsigned or forged requests (someone has the Function URL) or a mis-keyed relay.
    const refusals = skiffMetric(METRIC_NAMES.webhookRequestsRefused, cloudwatch.Stats.SUM, Duration.minutes(5));
    alarm('WebhookRefusals', refusals, {
      description: `the webhook has refused at least ${WEBHOOK_REFUSALS_ALARM_THRESHOLD} requests in each of the last three 5-minute periods: a flood of unsigned or forged requests, or a relay with the wrong secret or clock (see skiff_webhook_requests_refused_total by reason)`,
      threshold: WEBHOOK_REFUSALS_ALARM_THRESHOLD,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 3,
    });

    // Refreshed every 12 h; a snapshot over 13 h old means the refresh keeps failing (Pricing route, permissions).
    alarm('PricesStale', skiffMetric(METRIC_NAMES.priceSnapshotAge, cloudwatch.Stats.MINIMUM, Duration.hours(1)), {
      description: 'the price snapshot is over 13 hours old: price refreshes are failing (see skiff_price_refresh_failures_total)',
      threshold: 13 * 3600,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
    });

    const byState = (metricName: string, label: string) =>
      new cloudwatch.MathExpression({ expression: `SEARCH('{${METRIC_NAMESPACE}} MetricName="${metricName}" cluster="${props.clusterName}"', 'Maximum', 60)`, label, period: Duration.minutes(1) });
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', { defaultInterval: Duration.hours(6) });
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({ title: 'Pods pending (unschedulable)', left: [pending], width: 8 }),
      new cloudwatch.GraphWidget({ title: 'Nodes by state', left: [byState(METRIC_NAMES.nodes, 'nodes')], width: 8 }),
      new cloudwatch.GraphWidget({ title: 'NodeClaims by state', left: [byState(METRIC_NAMES.nodeClaims, 'NodeClaims')], width: 8 }),
    );
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({ title: 'Launch failures', left: [launchFailures], width: 8 }),
      new cloudwatch.GraphWidget({ title: 'Dead-letter queues', left: Object.values(props.queues).map((q) => q.metricDeadLetters()), width: 8 }),
      new cloudwatch.GraphWidget({ title: 'Interruption queue: oldest message (s)', left: [age], width: 8 }),
    );
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({ title: 'Lambda errors', left: Object.values(props.functions).map((f) => f.function.metricErrors({ period: Duration.minutes(5) })), width: 8 }),
      new cloudwatch.GraphWidget({ title: 'Lambda throttles', left: Object.values(props.functions).map((f) => f.function.metricThrottles({ period: Duration.minutes(5) })), width: 8 }),
      new cloudwatch.GraphWidget({ title: 'Lambda duration (p99)', left: Object.values(props.functions).map((f) => f.function.metricDuration({ period: Duration.minutes(5), statistic: 'p99' })), width: 8 }),
    );
    const startup = (statistic: string) => new cloudwatch.Metric({ namespace: METRIC_NAMESPACE, metricName: METRIC_NAMES.podStartup, dimensionsMap: alarmDimensions(props.clusterName), statistic, period: Duration.minutes(5), label: statistic });
    // Per-node gauges carry nodepool and resource_type; Average over a NodePool's nodes is its mean node.
    const perNode = (metricName: string, resource: string, label: string) =>
      new cloudwatch.MathExpression({
        expression: `SEARCH('{${METRIC_NAMESPACE},cluster,nodepool,resource_type,service} MetricName="${metricName}" cluster="${props.clusterName}" resource_type="${resource}"', 'Average', 300)`,
        label,
        period: Duration.minutes(5),
      });
    const usage = (resource: string) => [
      perNode(METRIC_NAMES.nodeAllocatable, resource, 'allocatable'),
      perNode(METRIC_NAMES.nodePodRequests, resource, 'pod requests'),
      perNode(METRIC_NAMES.nodeDaemonRequests, resource, 'DaemonSet requests'),
    ];
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({ title: 'Pod startup: creation → Running (s)', left: [startup('p50'), startup('p90'), startup(cloudwatch.Stats.MAXIMUM)], width: 8 }),
      new cloudwatch.GraphWidget({ title: 'CPU per node by NodePool (cores, mean node)', left: usage('cpu'), width: 8 }),
      new cloudwatch.GraphWidget({ title: 'Memory per node by NodePool (bytes, mean node)', left: usage('memory'), width: 8 }),
    );
    const priceAge = new cloudwatch.MathExpression({ expression: 'age / 3600', usingMetrics: { age: skiffMetric(METRIC_NAMES.priceSnapshotAge, cloudwatch.Stats.MAXIMUM, Duration.minutes(15)) }, label: 'price snapshot age (h)', period: Duration.minutes(15) });
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({ title: 'Price snapshot age (hours; refreshed every 12)', left: [priceAge], width: 12 }),
      new cloudwatch.GraphWidget({ title: 'Decisions not published to the bus', left: [skiffMetric(METRIC_NAMES.decisionsUnpublished, cloudwatch.Stats.SUM, Duration.minutes(5))], width: 12 }),
    );
    const refusalsByReason = new cloudwatch.MathExpression({
      expression: `SEARCH('{${METRIC_NAMESPACE},cluster,code,reason,service} MetricName="${METRIC_NAMES.webhookRequestsRefused}" cluster="${props.clusterName}"', 'Sum', 300)`,
      label: 'refused',
      period: Duration.minutes(5),
    });
    this.dashboard.addWidgets(new cloudwatch.GraphWidget({ title: 'Webhook requests refused, by status and reason (per 5 min)', left: [refusalsByReason], width: 24 }));
    this.dashboard.addWidgets(new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24 }));
  }
}
