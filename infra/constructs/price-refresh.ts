/**
 * `PriceRefresh`: the spot and on-demand price refresh (docs/karpenter-semantics.md#pricing: Karpenter refreshes both every
 * 12 h). A second EventBridge schedule on the lifecycle function sends it `{"task": "refresh-prices"}`
 * ({@link PRICE_REFRESH_EVENT}); the function fetches `GetProducts` and `DescribeSpotPriceHistory` and writes the
 * DynamoDB price snapshot the instance types read (`shared/adapters/aws/price-store.ts`). The lifecycle function also
 * refreshes after a scheduled pass when the snapshot is missing or older than 12 h and 30 minutes (a new deployment,
 * or a failed refresh), so this schedule is not retried.
 *
 * IAM: the `priceRefresh` actions of `iam-actions.ts` (`pricing:GetProducts`, `ec2:DescribeSpotPriceHistory`) support
 * no resource-level permissions, so they are granted on `*` — but only to the refreshing function: the controllers
 * share one role, and the statements carry the condition `lambda:SourceFunctionArn` = that function's ARN (Lambda
 * puts the calling function's ARN in its credentials' request context; AWS Lambda developer guide, "Using source
 * function ARN to control function access behavior"). The policy is a resource of its own, attached after the
 * function exists (the function's ARN is in it), and the schedule waits for it.
 */
import { Duration, Stack, Validations } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { actionsOfScope } from '../../shared/adapters/aws/iam-actions.js';
import type { SkiffFunction } from './skiff-function.js';

/** What the schedule sends: the lifecycle handler's price refresh task (`functions/lifecycle/handler.ts`). */
export const PRICE_REFRESH_EVENT = { task: 'refresh-prices' } as const;

/** Hours between scheduled refreshes: Karpenter's 12 h (aws `pkg/controllers/providers/pricing/controller.go`). */
export const PRICE_REFRESH_HOURS = 12;

/** Props of {@link PriceRefresh}. */
export interface PriceRefreshProps {
  /** The function that refreshes (the lifecycle controller); only it may call the pricing APIs. */
  readonly handler: SkiffFunction;
  /** Hours between refreshes. @default {@link PRICE_REFRESH_HOURS} */
  readonly everyHours?: number;
}

/** The 12-hourly price refresh schedule and its function-scoped grant. */
export class PriceRefresh extends Construct {
  readonly schedule: events.Rule;
  readonly policy: iam.Policy;

  constructor(scope: Construct, id: string, props: PriceRefreshProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const everyHours = props.everyHours ?? PRICE_REFRESH_HOURS;
    const fn = props.handler.function;
    const onlyThisFunction = { ArnEquals: { 'lambda:SourceFunctionArn': fn.functionArn } };
    const actions = actionsOfScope('priceRefresh');
    const ec2 = actions.filter((a) => a.startsWith('ec2:'));
    const others = actions.filter((a) => !a.startsWith('ec2:'));
    this.policy = new iam.Policy(this, 'Policy', {
      roles: [props.handler.role],
      statements: [
        new iam.PolicyStatement({ sid: 'RefreshSpotPrices', actions: ec2, resources: ['*'], conditions: { ...onlyThisFunction, StringEquals: { 'aws:RequestedRegion': stack.region } } }),
        // The Price List API answers from us-east-1, eu-central-1 or ap-south-1, whatever the cluster's region.
        new iam.PolicyStatement({ sid: 'RefreshOnDemandPrices', actions: others, resources: ['*'], conditions: onlyThisFunction }),
      ],
    });
    Validations.of(this.policy).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'pricing:GetProducts and ec2:DescribeSpotPriceHistory are read-only and support no resource-level permissions; the lambda:SourceFunctionArn condition limits them to the lifecycle function',
    });
    this.schedule = new events.Rule(this, 'Schedule', {
      description: `Refreshes Skiff's spot and on-demand prices every ${everyHours} hours (Karpenter's interval)`,
      schedule: events.Schedule.rate(Duration.hours(everyHours)),
    });
    this.schedule.addTarget(new targets.LambdaFunction(fn, { event: events.RuleTargetInput.fromObject(PRICE_REFRESH_EVENT), retryAttempts: 0, maxEventAge: Duration.minutes(1) }));
    this.schedule.node.addDependency(this.policy);
    Validations.of(this).acknowledge({
      id: 'Serverless-EventBusDLQ',
      reason: 'A refresh that is not delivered is made up by the lifecycle function, which refreshes after a pass whenever the snapshot is over 12.5 hours old; a dead-lettered trigger would add nothing.',
    });
  }
}
