/**
 * `DecisionBus`: the EventBridge bus Skiff's decisions go to (`shared/adapters/aws/decision-events.ts`: source
 * `skiff`, detail-type `NodeClaimLaunched`, `PodUnschedulable`, `DisruptionStarted`, …). A bus of the stack's own
 * rather than the account's default bus, so the grant names one resource the stack owns and subscribers' rules see
 * only Skiff's events. Grant with {@link DecisionBus.grantPublish}, which also sets `SKIFF_DECISION_BUS_NAME`.
 */
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { DECISION_EVENT_SOURCE, actionsOfScope } from '../../shared/adapters/aws/iam-actions.js';
import { CONTROLLER_ENV } from '../../shared/lambda/env.js';
import type { SkiffFunction } from './skiff-function.js';

/** Props of {@link DecisionBus}. */
export interface DecisionBusProps {
  /** EKS cluster name (the bus's description). */
  readonly clusterName: string;
}

/**
 * The decision bus.
 * @example bus.grantPublish(provisioner)
 */
export class DecisionBus extends Construct {
  readonly bus: events.EventBus;

  constructor(scope: Construct, id: string, props: DecisionBusProps) {
    super(scope, id);
    this.bus = new events.EventBus(this, 'Bus', { description: `Skiff decisions of EKS cluster ${props.clusterName} (source ${DECISION_EVENT_SOURCE})` });
  }

  /**
   * Lets `fn` put events on this bus only, with source `skiff` only (the `decisionBus` statement of
   * `iam-actions.ts`), and sets `SKIFF_DECISION_BUS_NAME` on it. Functions sharing a role share the one statement.
   */
  grantPublish(fn: SkiffFunction): void {
    iam.Grant.addToPrincipal({
      grantee: fn,
      actions: actionsOfScope('decisionBus'),
      resourceArns: [this.bus.eventBusArn],
      conditions: { StringEquals: { 'events:source': DECISION_EVENT_SOURCE } },
    });
    fn.addEnvironment(CONTROLLER_ENV.decisionBusName, this.bus.eventBusName);
  }
}
