/**
 * `PeriodicController`: a controller Lambda an EventBridge schedule runs every few minutes — disruption and
 * lifecycle. A missed or failed run is not retried: the next scheduled run does the same pass on fresher state
 * (each pass reads everything it needs and takes the controller's lease), so EventBridge and Lambda's asynchronous
 * retries are turned off and a throttled event is dropped after a minute instead of piling up behind the lease.
 */
import { Duration, Validations } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import { Construct } from 'constructs';
import { SkiffFunction, type SkiffFunctionProps } from './skiff-function.js';

/** Props of {@link PeriodicController}. */
export interface PeriodicControllerProps extends SkiffFunctionProps {
  /** Minutes between runs. */
  readonly everyMinutes: number;
}

/** A scheduled controller. */
export class PeriodicController extends Construct {
  readonly handler: SkiffFunction;
  readonly schedule: events.Rule;

  constructor(scope: Construct, id: string, props: PeriodicControllerProps) {
    super(scope, id);
    const { everyMinutes, ...fn } = props;
    this.handler = new SkiffFunction(this, 'Handler', fn);
    this.handler.function.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.minutes(1) });
    this.schedule = new events.Rule(this, 'Schedule', {
      description: `Runs ${props.description} every ${everyMinutes} minute(s)`,
      schedule: events.Schedule.rate(Duration.minutes(everyMinutes)),
    });
    this.schedule.addTarget(new targets.LambdaFunction(this.handler.function, { retryAttempts: 0, maxEventAge: Duration.minutes(1) }));
    const reason = 'A scheduled pass that fails or is dropped is superseded by the next scheduled pass on fresher state; keeping the event would only replay a stale trigger. Failures are alarmed through the function’s Errors metric.';
    Validations.of(this).acknowledge({ id: 'Serverless-LambdaDLQ', reason }, { id: 'Serverless-LambdaAsyncFailureDestination', reason }, { id: 'Serverless-EventBusDLQ', reason });
  }
}
