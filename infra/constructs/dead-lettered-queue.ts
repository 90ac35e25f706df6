/**
 * `DeadLetteredQueue`: an SQS queue with its dead-letter queue and redrive, SSE (SQS-managed keys) and a policy that
 * denies non-TLS access, on both.
 */
import { Duration, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

/** Props of {@link DeadLetteredQueue}. */
export interface DeadLetteredQueueProps {
  /** A FIFO queue (and FIFO dead-letter queue). @default false */
  readonly fifo?: boolean;
  /** How long a message is kept. @default 4 days (SQS's default) */
  readonly retentionPeriod?: Duration;
  /** At least the consumer's timeout (Lambda refuses a shorter one). */
  readonly visibilityTimeout: Duration;
  /** Receives before a message moves to the dead-letter queue. */
  readonly maxReceiveCount: number;
}

/** A queue and its dead-letter queue (kept 14 days, the SQS maximum, so there is time to look). */
export class DeadLetteredQueue extends Construct {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;

  constructor(scope: Construct, id: string, props: DeadLetteredQueueProps) {
    super(scope, id);
    const fifo = props.fifo === true ? { fifo: true } : {};
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetters', {
      ...fifo,
      retentionPeriod: Duration.days(14),
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'Serverless-SQSRedrivePolicy',
      reason: 'This is the dead-letter queue; a further one would only move the messages again. It is alarmed when not empty.',
    });
    this.queue = new sqs.Queue(this, 'Queue', {
      ...fifo,
      ...(props.retentionPeriod ? { retentionPeriod: props.retentionPeriod } : {}),
      visibilityTimeout: props.visibilityTimeout,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: props.maxReceiveCount },
    });
  }

  /** Messages waiting in the dead-letter queue (Maximum over 5 minutes). */
  metricDeadLetters(): cloudwatch.Metric {
    return this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ statistic: cloudwatch.Stats.MAXIMUM, period: Duration.minutes(5) });
  }
}
