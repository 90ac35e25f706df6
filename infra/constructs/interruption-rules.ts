/**
 * `InterruptionRules`: the five EventBridge rules that feed the interruption queue, as in Karpenter's CloudFormation
 * template (docs/karpenter-semantics.md#interruption). Events EventBridge cannot deliver go to the interruption queue's DLQ.
 */
import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

/** The five rules: construct id → event pattern (source and detail-type). */
export const INTERRUPTION_EVENT_PATTERNS = {
  ScheduledChange: { source: ['aws.health'], detailType: ['AWS Health Event'] },
  SpotInterruption: { source: ['aws.ec2'], detailType: ['EC2 Spot Instance Interruption Warning'] },
  Rebalance: { source: ['aws.ec2'], detailType: ['EC2 Instance Rebalance Recommendation'] },
  InstanceStateChange: { source: ['aws.ec2'], detailType: ['EC2 Instance State-change Notification'] },
  CapacityReservationInterruption: { source: ['aws.ec2'], detailType: ['EC2 Capacity Reservation Instance Interruption Warning'] },
} as const satisfies Record<string, events.EventPattern>;

/** Props of {@link InterruptionRules}. */
export interface InterruptionRulesProps {
  readonly queue: sqs.IQueue;
  /** Where events go that EventBridge could not deliver to `queue`. */
  readonly deadLetterQueue: sqs.IQueue;
}

/** The five rules. */
export class InterruptionRules extends Construct {
  readonly rules: readonly events.Rule[];

  constructor(scope: Construct, id: string, props: InterruptionRulesProps) {
    super(scope, id);
    this.rules = Object.entries(INTERRUPTION_EVENT_PATTERNS).map(([name, pattern]) => {
      const rule = new events.Rule(this, name, { description: `Skiff interruption handling: ${pattern.detailType[0]} → interruption queue`, eventPattern: { source: [...pattern.source], detailType: [...pattern.detailType] } });
      // An interruption message is stale after minutes: retry delivery briefly, then dead-letter it.
      rule.addTarget(new targets.SqsQueue(props.queue, { deadLetterQueue: props.deadLetterQueue, retryAttempts: 3, maxEventAge: Duration.minutes(5) }));
      return rule;
    });
  }
}
