/**
 * `QueueController`: a controller Lambda fed by an SQS queue — the provisioner (FIFO pod events) and the interruption
 * handler — with partial batch responses, so only the records the handler reports failed come back.
 */
import { Validations, type Duration } from 'aws-cdk-lib';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { SkiffFunction, type SkiffFunctionProps } from './skiff-function.js';

/** Props of {@link QueueController}. */
export interface QueueControllerProps extends SkiffFunctionProps {
  readonly queue: sqs.IQueue;
  /** Must not exceed the queue's visibility timeout. */
  readonly timeout: Duration;
  /** Records per invocation. @default 10 */
  readonly batchSize?: number;
}

/** A queue-driven controller. */
export class QueueController extends Construct {
  readonly handler: SkiffFunction;

  constructor(scope: Construct, id: string, props: QueueControllerProps) {
    super(scope, id);
    const { queue, batchSize, ...fn } = props;
    this.handler = new SkiffFunction(this, 'Handler', fn);
    const source = new SqsEventSource(queue, { batchSize: batchSize ?? 10, reportBatchItemFailures: true });
    this.handler.function.addEventSource(source);
    this.handler.acknowledgeSynchronousOnly('SQS event source mapping; failed records reach the queue’s dead-letter queue through its redrive policy');
    Validations.of(this.handler).acknowledge({
      id: 'Serverless-LambdaEventSourceMappingDestination',
      reason: 'SQS event source mappings support no on-failure destination; the queue’s redrive policy moves failed records to its dead-letter queue (alarmed).',
    });
  }
}
