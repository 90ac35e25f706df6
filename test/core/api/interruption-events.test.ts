// The five EventBridge events of the interruption queue, parsed from the JSON AWS documents for each (values of the
// documentation's examples; its placeholders replaced by real-looking values where the example has none).
import { describe, expect, it } from 'vitest';
import { parseInterruptionEvent, parseInterruptionMessage } from '../../../shared/core/api/interruption-events.js';

/** EC2 User Guide, "Spot Instance interruption notices" → "EC2 Spot Instance Interruption Warning event". */
const SPOT_INTERRUPTION = {
  version: '0',
  id: '12345678-1234-1234-1234-123456789012',
  'detail-type': 'EC2 Spot Instance Interruption Warning',
  source: 'aws.ec2',
  account: '123456789012',
  time: '2021-02-03T14:05:52Z',
  region: 'us-east-2',
  resources: ['arn:aws:ec2:us-east-2a:instance/i-1234567890abcdef0'],
  detail: { 'instance-id': 'i-1234567890abcdef0', 'instance-action': 'terminate' },
};

/** EC2 User Guide, "EC2 instance rebalance recommendations" → "Monitor rebalance recommendation signals". */
const REBALANCE = {
  version: '0',
  id: '12345678-1234-1234-1234-123456789012',
  'detail-type': 'EC2 Instance Rebalance Recommendation',
  source: 'aws.ec2',
  account: '123456789012',
  time: '2021-02-03T14:05:52Z',
  region: 'us-east-2',
  resources: ['arn:aws:ec2:us-east-2:123456789012:instance/i-1234567890abcdef0'],
  detail: { 'instance-id': 'i-1234567890abcdef0' },
};

/** EC2 User Guide, "State change events for Amazon EC2 instances" (the example's state is `pending`). */
const stateChange = (state: string) => ({
  id: '7bf73129-1428-4cd3-a780-95db273d1602',
  'detail-type': 'EC2 Instance State-change Notification',
  source: 'aws.ec2',
  account: '123456789012',
  time: '2021-11-11T21:29:54Z',
  region: 'us-east-1',
  resources: ['arn:aws:ec2:us-east-1:123456789012:instance/i-1234567890abcdef0'],
  detail: { 'instance-id': 'i-1234567890abcdef0', state },
});

/** AWS Health User Guide, "AWS Health events Amazon EventBridge schema" → sample payload of an EC2 scheduled change. */
const HEALTH_SCHEDULED_CHANGE = {
  version: '0',
  id: '7fb65329-1628-4cf3-a740-95fg457h1402',
  'detail-type': 'AWS Health Event',
  source: 'aws.health',
  account: '123456789012',
  time: '2023-01-27T01:43:21Z',
  region: 'us-west-2',
  resources: ['i-abcd1111', 'i-abcd2222'],
  detail: {
    eventArn: 'arn:aws:health:us-west-2::event/EC2/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED_ABC123-DEF456',
    service: 'EC2',
    eventTypeCode: 'AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED',
    eventTypeCategory: 'scheduledChange',
    eventScopeCode: 'ACCOUNT_SPECIFIC',
    communicationId: '1234abc01232a4012345678-1',
    startTime: 'Sat, 11 Feb 2023 15:00:00 GMT',
    endTime: 'Sat, 11 Feb 2023 17:00:00 GMT',
    lastUpdatedTime: 'Fri, 27 Jan 2023 01:43:21 GMT',
    statusCode: 'upcoming',
    eventRegion: 'us-west-2',
    eventDescription: [{ language: 'en_US', latestDescription: 'EC2 has detected degradation of the underlying hardware hosting your instances.' }],
    eventMetadata: {},
    affectedEntities: [
      { entityValue: 'i-abcd1111', lastUpdatedTime: 'Fri, 27 Jan 2023 01:43:21 GMT', statusCode: 'IMPAIRED' },
      { entityValue: 'i-abcd2222', lastUpdatedTime: 'Fri, 27 Jan 2023 01:43:21 GMT', statusCode: 'IMPAIRED' },
    ],
    affectedAccount: '123456789012',
    page: '1',
    totalPages: '1',
  },
};

/** EC2 User Guide, "Monitor interruptible Capacity Reservations" → "Instance interruption warning". */
const CAPACITY_RESERVATION_INTERRUPTION = {
  version: '0',
  id: '12345678-1234-1234-1234-123456789012',
  'detail-type': 'EC2 Capacity Reservation Instance Interruption Warning',
  source: 'aws.ec2',
  account: '123456789012',
  time: '2025-11-20T10:00:00Z',
  // The documentation shows the placeholder "[instance arn]" as a string here.
  resources: '[arn:aws:ec2:us-east-1:123456789012:instance/i-1234567890abcdef0]',
  region: 'us-east-1',
  detail: { 'instance-id': 'i-1234567890abcdef0', 'instance-action': 'terminate', 'instance-termination-time': '2025-11-20T10:02:00Z', azId: 'use1-az1' },
};

describe('parseInterruptionMessage', () => {
  describe('the documented event of each rule', () => {
    it('parses a spot interruption warning: the instance and what EC2 will do', () => {
      const r = parseInterruptionMessage(JSON.stringify(SPOT_INTERRUPTION));
      expect(r).toEqual({
        ok: true,
        message: { kind: 'spotInterruption', id: SPOT_INTERRUPTION.id, time: Date.parse('2021-02-03T14:05:52Z'), instanceIds: ['i-1234567890abcdef0'], action: 'terminate' },
      });
    });

    it('parses a rebalance recommendation', () => {
      const r = parseInterruptionMessage(JSON.stringify(REBALANCE));
      expect(r.ok && r.message).toMatchObject({ kind: 'rebalanceRecommendation', instanceIds: ['i-1234567890abcdef0'] });
    });

    it.each(['pending', 'running', 'stopping', 'stopped', 'shutting-down', 'terminated'])('parses a state-change notification to %s', (state) => {
      const r = parseInterruptionMessage(JSON.stringify(stateChange(state)));
      expect(r.ok && r.message).toEqual({ kind: 'stateChange', id: '7bf73129-1428-4cd3-a780-95db273d1602', time: Date.parse('2021-11-11T21:29:54Z'), instanceIds: ['i-1234567890abcdef0'], state });
    });

    it('parses an AWS Health scheduled change for EC2: every affected instance', () => {
      const r = parseInterruptionMessage(JSON.stringify(HEALTH_SCHEDULED_CHANGE));
      expect(r.ok && r.message).toMatchObject({
        kind: 'scheduledChange',
        instanceIds: ['i-abcd1111', 'i-abcd2222'],
        eventTypeCode: 'AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED',
        startTime: 'Sat, 11 Feb 2023 15:00:00 GMT',
      });
    });

    it('parses a Capacity Reservation interruption warning', () => {
      const r = parseInterruptionMessage(JSON.stringify(CAPACITY_RESERVATION_INTERRUPTION));
      expect(r.ok && r.message).toMatchObject({ kind: 'capacityReservationInterruption', instanceIds: ['i-1234567890abcdef0'], action: 'terminate' });
    });
  });

  describe('well-formed events Skiff does not act on', () => {
    it('ignores an AWS Health event of another service', () => {
      const event = { ...HEALTH_SCHEDULED_CHANGE, detail: { ...HEALTH_SCHEDULED_CHANGE.detail, service: 'RDS' } };
      const r = parseInterruptionEvent(event);
      expect(r.ok && r.message).toMatchObject({ kind: 'ignored', instanceIds: [] });
      expect(r.ok && r.message.kind === 'ignored' && r.message.why).toContain('RDS');
    });

    it('ignores an EC2 Health event that is an issue, not a scheduled change', () => {
      const event = { ...HEALTH_SCHEDULED_CHANGE, detail: { ...HEALTH_SCHEDULED_CHANGE.detail, eventTypeCategory: 'issue' } };
      expect(parseInterruptionEvent(event)).toMatchObject({ ok: true, message: { kind: 'ignored' } });
    });

    it('keeps only instance ids among the affected entities (a volume is not a NodeClaim)', () => {
      const event = { ...HEALTH_SCHEDULED_CHANGE, detail: { ...HEALTH_SCHEDULED_CHANGE.detail, affectedEntities: [{ entityValue: 'vol-0123456789abcdef0' }, { entityValue: 'i-abcd1111' }] } };
      expect(parseInterruptionEvent(event)).toMatchObject({ ok: true, message: { kind: 'scheduledChange', instanceIds: ['i-abcd1111'] } });
    });

    it('ignores an EC2 scheduled change that names no instance', () => {
      const event = { ...HEALTH_SCHEDULED_CHANGE, detail: { ...HEALTH_SCHEDULED_CHANGE.detail, affectedEntities: [] } };
      expect(parseInterruptionEvent(event)).toMatchObject({ ok: true, message: { kind: 'ignored' } });
    });

    it('accepts fields AWS may add', () => {
      const event = { ...SPOT_INTERRUPTION, detail: { ...SPOT_INTERRUPTION.detail, 'new-field': 1 }, extra: true };
      expect(parseInterruptionEvent(event)).toMatchObject({ ok: true, message: { kind: 'spotInterruption' } });
    });
  });

  describe('malformed messages', () => {
    it.each<[string, string, string]>([
      ['a body that is not JSON', '{"detail-type": ', 'the body is not JSON'],
      ['a JSON array', '[]', 'not a JSON object'],
      ['no detail-type', JSON.stringify({ ...SPOT_INTERRUPTION, 'detail-type': undefined }), 'detail-type is missing'],
      ['another detail-type', JSON.stringify({ ...SPOT_INTERRUPTION, 'detail-type': 'EC2 AMI State Change' }), '"EC2 AMI State Change" is not an interruption event'],
      ['a spot warning without instance-id', JSON.stringify({ ...SPOT_INTERRUPTION, detail: { 'instance-action': 'terminate' } }), 'detail.instance-id'],
      ['a spot warning with an unknown action', JSON.stringify({ ...SPOT_INTERRUPTION, detail: { ...SPOT_INTERRUPTION.detail, 'instance-action': 'explode' } }), 'detail.instance-action'],
      ['an instance id that is not one', JSON.stringify({ ...REBALANCE, detail: { 'instance-id': 'node-1' } }), 'not an EC2 instance id'],
      ['a state that does not exist', JSON.stringify(stateChange('melting')), 'detail.state'],
      ['a time that is not ISO-8601', JSON.stringify({ ...REBALANCE, time: 'yesterday' }), 'time'],
      ['a spot warning from another source', JSON.stringify({ ...SPOT_INTERRUPTION, source: 'aws.health' }), 'source'],
      ['a Health event without a detail', JSON.stringify({ ...HEALTH_SCHEDULED_CHANGE, detail: undefined }), 'detail'],
      ['no event id', JSON.stringify({ ...REBALANCE, id: undefined }), 'id'],
    ])('rejects %s, saying why', (_, body, reason) => {
      const r = parseInterruptionMessage(body);
      expect(r.ok).toBe(false);
      expect(!r.ok && r.reason).toContain(reason);
    });
  });
});
