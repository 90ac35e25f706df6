/**
 * `FollowUpQueue`: an SQS FIFO queue of follow-up passes of one controller (`shared/ports/follow-up-passes.ts`,
 * `shared/adapters/aws/sqs-follow-up-passes.ts`). The stack has three:
 * - **Provisioner** (`ProvisionerFollowUps`): a provisioning pass that leaves pods unschedulable while offerings are
 *   marked unavailable (insufficient capacity) asks for another pass 20 s later (`ProvisionDeps.followUps`), so those
 *   pods are solved again soon after the offerings' 3 minutes, as Karpenter requeues a provisionable pod every 10 s,
 *   rather than at the relay's 6-minute re-list. Its records reach the provisioner beside the pod-event queue's.
 * - **Lifecycle** (`LifecycleFollowUps`): a lifecycle pass that finds a Node to register or initialize asks for a pass
 *   20 s later before it writes anything (`LifecycleDeps.followUps`), so a pass cut short is resumed without waiting
 *   for the next minute. The provisioner, which runs lifecycle passes for relay node events, sends to it too. The
 *   lifecycle function reserves no concurrency; its `lifecycle` lease serialises the passes.
 * - **Disruption** (`FollowUps`), described below.
 *
 * A disruption pass with work in flight sends one message, its
 * deduplication id the 20 s slot it wants; the queue holds it for {@link FOLLOW_UP_DELIVERY_DELAY} (FIFO queues take
 * no per-message delay, so the delay is the queue's `DelaySeconds`); an event source mapping (batch size 1) then
 * invokes the disruption function with it, which runs one pass under the `disruption` lease. So a proposal is
 * validated about 20 s after it was made rather than at the next minute's schedule, closer to Karpenter's loop, which
 * requeues at once after a command starts (core `pkg/controllers/disruption/controller.go` `Reconcile`) and validates
 * a command after 15 s (`commandValidationDelay`, `pkg/controllers/disruption/consolidation.go`).
 *
 * Why this cannot loop or pile up, with the function's reserved concurrency of 1:
 * - One message group: the mapping hands the function one follow-up at a time (a message in flight holds back the
 *   rest of its group), so follow-ups never run two at once. The mapping sets no maximum concurrency (SQS mappings
 *   take 2 at least, above the reserved 1); the group is what limits it.
 * - A follow-up that arrives while the scheduled pass runs is throttled; the mapping retries it, or it comes back
 *   after the visibility timeout, which equals the function's timeout (the least Lambda accepts) so a throttled or
 *   failed follow-up holds the group no longer than one pass can last. A scheduled event that meets a running
 *   follow-up is throttled and dropped after a minute (`periodic-controller.ts`). A pass that finds the lease taken
 *   backs off and succeeds, so its message is deleted, not retried.
 * - Each pass sends at most one message, for a slot 20–40 s ahead, and requests for one slot are one message (FIFO
 *   deduplication, 5 minutes); a pass with nothing in flight sends none, so the chain ends with the work. Messages are
 *   kept {@link FOLLOW_UP_RETENTION} at most, so at most 15 slots' worth can ever wait.
 * - No dead-letter queue: a follow-up that is lost, expires or keeps failing only leaves its work to the next
 *   scheduled pass, which reads all state afresh; a dead-lettered trigger would carry nothing to replay.
 */
import { Duration, Validations } from 'aws-cdk-lib';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { CONTROLLER_ENV } from '../../shared/lambda/env.js';
import type { SkiffFunction } from './skiff-function.js';

/**
 * The queue's delivery delay: a follow-up runs this long after the pass that asked for it (the port's
 * `FOLLOW_UP_AFTER_MS`, 20 s: the 15 s validation delay and 5 s of slack; `test/infra` checks they agree).
 */
export const FOLLOW_UP_DELIVERY_DELAY = Duration.seconds(20);

/** How long a follow-up is kept: the FIFO deduplication interval; an older one is stale (the schedule has run since). */
export const FOLLOW_UP_RETENTION = Duration.minutes(5);

/** Props of {@link FollowUpQueue}. */
export interface FollowUpQueueProps {
  /** Whose passes the queue carries: names the environment variable its URL goes in. @default 'disruption' */
  readonly controller?: 'disruption' | 'lifecycle' | 'provisioner';
  /** The controller's function: it sends follow-ups and consumes them. */
  readonly consumer: SkiffFunction;
  /** Its timeout: the queue's visibility timeout. */
  readonly consumerTimeout: Duration;
  /** Other functions that run the controller's passes and so send follow-ups too (the provisioner, for lifecycle). */
  readonly senders?: readonly SkiffFunction[];
}

/**
 * The follow-up queue, its event source mapping, the send grants and the URL's variable
 * (`SKIFF_DISRUPTION_FOLLOW_UP_QUEUE_URL`, `SKIFF_LIFECYCLE_FOLLOW_UP_QUEUE_URL` or
 * `SKIFF_PROVISIONER_FOLLOW_UP_QUEUE_URL`) on the consumer and the senders.
 */
export class FollowUpQueue extends Construct {
  readonly queue: sqs.Queue;

  constructor(scope: Construct, id: string, props: FollowUpQueueProps) {
    super(scope, id);
    this.queue = new sqs.Queue(this, 'Queue', {
      fifo: true,
      contentBasedDeduplication: false,
      deliveryDelay: FOLLOW_UP_DELIVERY_DELAY,
      retentionPeriod: FOLLOW_UP_RETENTION,
      visibilityTimeout: props.consumerTimeout,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    const controller = props.controller ?? 'disruption';
    const noDlq = `A follow-up ${controller} pass that is lost, expires or keeps failing only leaves its work to the next scheduled pass, which reads all state afresh; a dead-lettered trigger would carry nothing to replay.`;
    Validations.of(this.queue).acknowledge({ id: 'AwsSolutions-SQS3', reason: noDlq }, { id: 'Serverless-SQSRedrivePolicy', reason: noDlq });

    const fn = props.consumer;
    // Batch size 1: each message asks for one pass. No maximum concurrency: the one message group already allows one.
    fn.function.addEventSource(new SqsEventSource(this.queue, { batchSize: 1 }));
    Validations.of(fn).acknowledge({
      id: 'Serverless-LambdaEventSourceMappingDestination',
      reason: 'SQS event source mappings support no on-failure destination; a failed follow-up pass is left to the next scheduled pass (the queue keeps it 5 minutes at most).',
    });
    const variable = { disruption: CONTROLLER_ENV.disruptionFollowUpQueueUrl, lifecycle: CONTROLLER_ENV.lifecycleFollowUpQueueUrl, provisioner: CONTROLLER_ENV.provisionerFollowUpQueueUrl }[controller];
    for (const sender of [fn, ...(props.senders ?? [])]) {
      this.queue.grantSendMessages(sender);
      sender.addEnvironment(variable, this.queue.queueUrl);
    }
  }
}
