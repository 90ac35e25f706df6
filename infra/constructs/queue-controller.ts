/**
 * `QueueController`: a controller Lambda fed by an SQS queue — the provisioner (FIFO pod events) and the interruption
 * handler — with partial batch responses, so only the records the handler reports failed come back. With reserved
 * concurrency, the event source's maximum concurrency is set to the same value, so it never invokes more than is
 * reserved: a throttled batch goes back to the queue and counts as a receive towards the dead-letter queue.
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
  /** Reserved concurrency, also the event source's maximum concurrency; at least 2. @default none (unreserved) */
  readonly reservedConcurrentExecutions?: number;
}

/**
 * A queue-driven controller.
 * @throws {RangeError} when `reservedConcurrentExecutions` is below 2
 */
export class QueueController extends Construct {
  readonly handler: SkiffFunction;

  constructor(scope: Construct, id: string, props: QueueControllerProps) {
    super(scope, id);
    const { queue, batchSize, ...fn } = props;
    this.handler = new SkiffFunction(this, 'Handler', fn);
    const reserved = props.reservedConcurrentExecutions;
    if (reserved !== undefined && reserved < 2) throw new RangeError(`${id}: reserved concurrency ${reserved} is below 2, the least maximum concurrency an SQS event source takes`);
    const source = new SqsEventSource(queue, { batchSize: batchSize ?? 10, reportBatchItemFailures: true, ...(reserved !== undefined ? { maxConcurrency: reserved } : {}) });
    this.handler.function.addEventSource(source);
    this.handler.acknowledgeSynchronousOnly('SQS event source mapping; failed records reach the queue’s dead-letter queue through its redrive policy');
    Validations.of(this.handler).acknowledge({
      id: 'Serverless-LambdaEventSourceMappingDestination',
      reason: 'SQS event source mappings support no on-failure destination; the queue’s redrive policy moves failed records to its dead-letter queue (alarmed).',
    });
  }
}
