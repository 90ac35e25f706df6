import { SendMessageBatchCommand, SQSClient, SQSServiceException, type SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { isQueueSendError, QueueSendError, SqsQueue, type FifoMessage } from '../../../shared/adapters/aws/sqs-queue.js';
import { CloudProviderError, ThrottledError } from '../../../shared/core/errors.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/skiff-pod-events.fifo';
const sqs = mockClient(SQSClient);

/** The entries of every SendMessageBatch call, in order. */
const calls = (): SendMessageBatchRequestEntry[][] => sqs.commandCalls(SendMessageBatchCommand).map((c) => c.args[0].input.Entries ?? []);
const message = (i: number): FifoMessage => ({ body: `{"n":${i}}`, groupId: 'prod', deduplicationId: `uid-${i}:1` });

function queue(sleeps: number[] = []): SqsQueue {
  return new SqsQueue({ client: new SQSClient({ region: 'eu-west-1', maxAttempts: 1 }), queueUrl: QUEUE_URL, sleep: async (ms) => void sleeps.push(ms), random: () => 0.5 });
}

beforeEach(() => sqs.reset());

describe('SqsQueue', () => {
  describe('sendBatch', () => {
    it('sends at most 10 entries per call, in the given order, with group and deduplication ids', async () => {
      sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
      await queue().sendBatch(Array.from({ length: 23 }, (_, i) => message(i)));
      expect(calls().map((entries) => entries.length)).toEqual([10, 10, 3]);
      expect(calls().flat().map((e) => e.MessageDeduplicationId)).toEqual(Array.from({ length: 23 }, (_, i) => `uid-${i}:1`));
      expect(calls()[0]![0]).toEqual({ Id: '0', MessageBody: '{"n":0}', MessageGroupId: 'prod', MessageDeduplicationId: 'uid-0:1' });
    });

    it('sends only the entries that failed on the server side again, after a jittered backoff', async () => {
      sqs
        .on(SendMessageBatchCommand)
        .resolvesOnce({ Failed: [{ Id: '1', SenderFault: false, Code: 'InternalError', Message: 'try again' }] })
        .resolvesOnce({ Failed: [] });
      const sleeps: number[] = [];
      await queue(sleeps).sendBatch([message(0), message(1), message(2)]);
      expect(calls().map((entries) => entries.map((e) => e.MessageDeduplicationId))).toEqual([['uid-0:1', 'uid-1:1', 'uid-2:1'], ['uid-1:1']]);
      expect(sleeps).toEqual([50]); // random 0.5 × base 100 ms
    });

    it('retries throttled entries even when SQS calls them the sender’s fault', async () => {
      sqs
        .on(SendMessageBatchCommand)
        .resolvesOnce({ Failed: [{ Id: '0', SenderFault: true, Code: 'RequestThrottled', Message: 'slow down' }] })
        .resolvesOnce({ Failed: [] });
      await queue().sendBatch([message(0)]);
      expect(calls()).toHaveLength(2);
    });

    it('does not retry an entry the sender got wrong, and throws a QueueSendError naming it after sending the rest', async () => {
      sqs.on(SendMessageBatchCommand).resolves({ Failed: [{ Id: '0', SenderFault: true, Code: 'InvalidParameterValue', Message: 'bad id' }] });
      const error = await queue().sendBatch([message(0), ...Array.from({ length: 10 }, (_, i) => message(i + 1))]).catch((e: unknown) => e);
      expect(isQueueSendError(error)).toBe(true);
      expect((error as QueueSendError).failures).toEqual([
        { deduplicationId: 'uid-0:1', code: 'InvalidParameterValue', message: 'bad id', senderFault: true },
        { deduplicationId: 'uid-10:1', code: 'InvalidParameterValue', message: 'bad id', senderFault: true },
      ]);
      expect(calls()).toHaveLength(2); // both chunks tried, nothing retried
    });

    it('gives up after maxAttempts and reports the entries still failing', async () => {
      sqs.on(SendMessageBatchCommand).resolves({ Failed: [{ Id: '0', SenderFault: false, Code: 'ServiceUnavailable', Message: 'down' }] });
      const sleeps: number[] = [];
      const error = await queue(sleeps).sendBatch([message(0)]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(QueueSendError);
      expect((error as QueueSendError).failures.map((f) => f.code)).toEqual(['ServiceUnavailable']);
      expect(calls()).toHaveLength(4);
      expect(sleeps).toEqual([50, 100, 200]);
    });

    it('turns a throttled call into ThrottledError and any other failed call into CloudProviderError', async () => {
      const throttled = new SQSServiceException({ name: 'RequestThrottled', $fault: 'client', $metadata: { httpStatusCode: 403 }, message: 'throttled' });
      sqs.on(SendMessageBatchCommand).rejects(throttled);
      await expect(queue().sendBatch([message(0)])).rejects.toBeInstanceOf(ThrottledError);
      const missing = new SQSServiceException({ name: 'QueueDoesNotExist', $fault: 'client', $metadata: { httpStatusCode: 400 }, message: 'no queue' });
      sqs.reset();
      sqs.on(SendMessageBatchCommand).rejects(missing);
      const error = await queue().sendBatch([message(0)]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CloudProviderError);
      expect((error as CloudProviderError).code).toBe('QueueDoesNotExist');
    });
  });

  describe('send', () => {
    it('sends one message as a batch of one', async () => {
      sqs.on(SendMessageBatchCommand).resolves({ Failed: [] });
      await queue().send('{"n":1}', { groupId: 'prod', deduplicationId: 'u:1' });
      expect(calls()).toEqual([[{ Id: '0', MessageBody: '{"n":1}', MessageGroupId: 'prod', MessageDeduplicationId: 'u:1' }]]);
    });
  });

  it('rejects a maxAttempts below 1', () => {
    expect(() => new SqsQueue({ client: new SQSClient({ region: 'eu-west-1' }), queueUrl: QUEUE_URL, maxAttempts: 0 })).toThrow(/maxAttempts must be a positive integer/);
  });
});
