// The interruption handler: SQS batch in, one controller call per well-formed message, partial batch failures out.
// Bodies are the EventBridge events as AWS documents them (the same examples as test/core/api/interruption-events).
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createHandler } from '../../../functions/interruption/handler.js';
import type { InterruptionMessage } from '../../../shared/core/api/interruption-events.js';
import type { InterruptionReport } from '../../../shared/controllers/interruption.js';
import type { Log } from '../../../shared/lambda/log.js';

const ec2 = (detailType: string, detail: Record<string, unknown>) =>
  JSON.stringify({
    version: '0',
    id: '12345678-1234-1234-1234-123456789012',
    'detail-type': detailType,
    source: 'aws.ec2',
    account: '123456789012',
    time: '2021-02-03T14:05:52Z',
    region: 'us-east-2',
    resources: ['arn:aws:ec2:us-east-2a:instance/i-1234567890abcdef0'],
    detail,
  });

const BODIES = {
  spot: ec2('EC2 Spot Instance Interruption Warning', { 'instance-id': 'i-1234567890abcdef0', 'instance-action': 'terminate' }),
  rebalance: ec2('EC2 Instance Rebalance Recommendation', { 'instance-id': 'i-1234567890abcdef0' }),
  stateChange: ec2('EC2 Instance State-change Notification', { 'instance-id': 'i-1234567890abcdef0', state: 'stopping' }),
  capacityReservation: ec2('EC2 Capacity Reservation Instance Interruption Warning', {
    'instance-id': 'i-1234567890abcdef0',
    'instance-action': 'terminate',
    'instance-termination-time': '2021-02-03T14:07:52Z',
    azId: 'use2-az1',
  }),
  health: JSON.stringify({
    version: '0',
    id: '7fb65329-1628-4cf3-a740-95fg457h1402',
    'detail-type': 'AWS Health Event',
    source: 'aws.health',
    account: '123456789012',
    time: '2023-01-27T01:43:21Z',
    region: 'us-west-2',
    resources: ['i-abcd1111'],
    detail: {
      eventArn: 'arn:aws:health:us-west-2::event/EC2/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED_ABC123-DEF456',
      service: 'EC2',
      eventTypeCode: 'AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED',
      eventTypeCategory: 'scheduledChange',
      startTime: 'Sat, 11 Feb 2023 15:00:00 GMT',
      eventDescription: [{ language: 'en_US', latestDescription: 'EC2 has detected degradation of the underlying hardware hosting your instance.' }],
      affectedEntities: [{ entityValue: 'i-abcd1111', statusCode: 'IMPAIRED' }],
    },
  }),
};

let n = 0;
function record(body: string): SQSRecord {
  const id = `m-${++n}`;
  return {
    messageId: id,
    receiptHandle: id,
    body,
    attributes: { ApproximateReceiveCount: '1', SentTimestamp: '1612361152000', SenderId: 'events.amazonaws.com', ApproximateFirstReceiveTimestamp: '1612361152000' },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-west-2:123456789012:skiff-interruption',
    awsRegion: 'us-west-2',
  };
}

/** A log that keeps what it is told. */
function collector(): Log & { entries: { level: string; message: string; attributes?: Record<string, unknown> }[] } {
  const entries: { level: string; message: string; attributes?: Record<string, unknown> }[] = [];
  const at = (level: string) => (message: string, attributes?: Record<string, unknown>) => void entries.push({ level, message, ...(attributes ? { attributes } : {}) });
  return { entries, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** A controller stand-in: acts on spot warnings, records the rest, fails for the instance named in `failFor`. */
function fakeController(seen: InterruptionMessage[], failFor?: string) {
  return async (message: InterruptionMessage): Promise<InterruptionReport> => {
    seen.push(message);
    if (failFor && message.instanceIds.includes(failFor)) throw new Error('DynamoDB is unavailable');
    const acted = message.kind !== 'rebalanceRecommendation';
    return {
      kind: message.kind,
      id: message.id,
      action: acted ? 'CordonAndDrain' : 'NoAction',
      instances: message.instanceIds.map((instanceId) =>
        acted
          ? { kind: 'acted' as const, instanceId, nodeClaim: 'general-abcde', reason: 'SpotInterrupted', replacements: [], evicted: [], deleted: false }
          : { kind: 'noAction' as const, instanceId, nodeClaim: 'general-abcde', reason: 'SpotRebalanceRecommendation' },
      ),
      provisioned: [],
    };
  };
}

describe('interruption handler', () => {
  describe('each documented event', () => {
    it('reaches the controller parsed, and every record is acknowledged', async () => {
      const seen: InterruptionMessage[] = [];
      const log = collector();
      const handler = createHandler({ handle: fakeController(seen), log });
      const event: SQSEvent = { Records: Object.values(BODIES).map(record) };
      const response = await handler(event);
      expect(response.batchItemFailures).toEqual([]);
      // Each handled message's log line names its kind under a key Powertools' logger keeps: it drops its reserved
      // keys (`message`, `level`, `timestamp`, `service`, …) with a warning of its own.
      const handled = log.entries.filter((e) => e.message === 'interruption handled' || e.message === 'interruption message recorded');
      expect(handled.map((e) => e.attributes?.['messageKind'])).toEqual(['spotInterruption', 'rebalanceRecommendation', 'stateChange', 'capacityReservationInterruption', 'scheduledChange']);
      const reserved = ['message', 'level', 'timestamp', 'service', 'sampling_rate', 'xray_trace_id', 'error'];
      expect(log.entries.flatMap((e) => Object.keys(e.attributes ?? {}).filter((k) => reserved.includes(k)))).toEqual([]);
      expect(seen.map((m) => [m.kind, m.instanceIds])).toEqual([
        ['spotInterruption', ['i-1234567890abcdef0']],
        ['rebalanceRecommendation', ['i-1234567890abcdef0']],
        ['stateChange', ['i-1234567890abcdef0']],
        ['capacityReservationInterruption', ['i-1234567890abcdef0']],
        ['scheduledChange', ['i-abcd1111']],
      ]);
      expect(response.counts).toEqual({ received: 5, malformed: 0, ignored: 0, acted: 4, noAction: 1, failed: 0 });
    });
  });

  describe('malformed messages', () => {
    it('are logged, counted and acknowledged (dropped, never retried), without reaching the controller', async () => {
      const seen: InterruptionMessage[] = [];
      const log = collector();
      const handler = createHandler({ handle: fakeController(seen), log });
      const bad = [record('not json'), record(ec2('EC2 Spot Instance Interruption Warning', { 'instance-action': 'terminate' })), record(ec2('EC2 AMI State Change', {}))];
      const response = await handler({ Records: [...bad, record(BODIES.spot)] });
      expect(response.batchItemFailures).toEqual([]);
      expect(seen).toHaveLength(1);
      expect(response.counts).toMatchObject({ received: 4, malformed: 3, acted: 1, failed: 0 });
      const errors = log.entries.filter((e) => e.level === 'error');
      expect(errors.map((e) => e.attributes?.['messageId'])).toEqual(bad.map((r) => r.messageId));
      expect(String(errors[1]!.attributes?.['reason'])).toContain('detail.instance-id');
    });
  });

  describe('events Skiff does not act on', () => {
    it('acknowledges a Health event of another service as ignored', async () => {
      const seen: InterruptionMessage[] = [];
      const handler = createHandler({ handle: fakeController(seen), log: collector() });
      const rds = JSON.parse(BODIES.health) as { detail: Record<string, unknown> };
      rds.detail['service'] = 'RDS';
      const response = await handler({ Records: [record(JSON.stringify(rds))] });
      expect(response.batchItemFailures).toEqual([]);
      expect(seen).toEqual([]);
      expect(response.counts).toMatchObject({ ignored: 1, acted: 0 });
    });
  });

  describe('a failing controller call', () => {
    it('reports only that record as a batch item failure, so SQS redelivers it', async () => {
      const seen: InterruptionMessage[] = [];
      const log = collector();
      const handler = createHandler({ handle: fakeController(seen, 'i-abcd1111'), log });
      const ok = record(BODIES.spot);
      const failing = record(BODIES.health);
      const response = await handler({ Records: [ok, failing] });
      expect(response.batchItemFailures).toEqual([{ itemIdentifier: failing.messageId }]);
      expect(response.counts).toMatchObject({ received: 2, acted: 1, failed: 1 });
      expect(log.entries.some((e) => e.level === 'warn' && e.attributes?.['messageId'] === failing.messageId)).toBe(true);
    });
  });

  describe('overlapping invocations', () => {
    it('each return their own counts', async () => {
      const handler = createHandler({ handle: fakeController([]), log: collector() });
      const [a, b] = await Promise.all([handler({ Records: [record(BODIES.spot)] }), handler({ Records: [record('nope'), record('nope')] })]);
      expect(a.counts).toMatchObject({ received: 1, acted: 1 });
      expect(b.counts).toMatchObject({ received: 2, malformed: 2 });
    });
  });
});
