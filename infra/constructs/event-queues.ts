/**
 * `EventQueues`: the two queues the controllers consume — the FIFO pod-event queue the webhook fills (128 message
 * groups per cluster by object uid, `messageGroupId` in `shared/core/api/pod-event.ts`: a message held in flight holds
 * back only its group; provisioning passes may overlap up to the provisioner's reserved concurrency) and the interruption queue the five EventBridge rules
 * fill (docs/karpenter-semantics.md#interruption: retention 300 s, SSE, events.amazonaws.com may send, non-TLS denied) — each
 * with a dead-letter queue.
 */
import { Duration } from 'aws-cdk-lib';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { WEBHOOK_ENV } from '../../shared/lambda/env.js';
import { DeadLetteredQueue } from './dead-lettered-queue.js';
import type { SkiffFunction } from './skiff-function.js';

/** Interruption messages are useless after 5 minutes (Karpenter's `MessageRetentionPeriod: 300`). */
export const INTERRUPTION_RETENTION = Duration.seconds(300);

/** Props of {@link EventQueues}. */
export interface EventQueuesProps {
  /** Timeout of the provisioner (the pod-event queue's visibility timeout is a minute longer). */
  readonly provisionerTimeout: Duration;
  /** Timeout of the interruption Lambda (its queue's visibility timeout is twice it). */
  readonly interruptionTimeout: Duration;
}

/** The pod-event and interruption queues. */
export class EventQueues extends Construct {
  readonly podEvents: DeadLetteredQueue;
  readonly interruptions: DeadLetteredQueue;

  constructor(scope: Construct, id: string, props: EventQueuesProps) {
    super(scope, id);
    // FIFO: while a batch is in flight its message group (the cluster) is blocked, so the visibility timeout is kept
    // short — a failed batch comes back, and unblocks the group, a minute after the provisioner's timeout.
    this.podEvents = new DeadLetteredQueue(this, 'PodEvents', {
      fifo: true,
      retentionPeriod: Duration.days(1),
      visibilityTimeout: props.provisionerTimeout.plus(Duration.minutes(1)),
      maxReceiveCount: 5,
    });
    // Within 300 s a message can be received about twice at this visibility; a third failure sends it to the DLQ.
    this.interruptions = new DeadLetteredQueue(this, 'Interruptions', {
      retentionPeriod: INTERRUPTION_RETENTION,
      visibilityTimeout: Duration.seconds(props.interruptionTimeout.toSeconds() * 2),
      maxReceiveCount: 3,
    });
  }

  /** The FIFO pod-event queue. */
  get podEventQueue(): sqs.Queue {
    return this.podEvents.queue;
  }

  /** The interruption queue. */
  get interruptionQueue(): sqs.Queue {
    return this.interruptions.queue;
  }

  /** Lets `fn` send pod events, and sets `SKIFF_POD_EVENTS_QUEUE_URL` on it. */
  grantSendPodEvents(fn: SkiffFunction): void {
    this.podEvents.queue.grantSendMessages(fn);
    fn.addEnvironment(WEBHOOK_ENV.podEventsQueueUrl, this.podEvents.queue.queueUrl);
  }
}
