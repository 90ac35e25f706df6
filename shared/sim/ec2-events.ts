/**
 * The EventBridge events simulated EC2 and AWS Health send to the interruption queue, in the documented shapes
 * (EC2 User Guide: "Spot Instance interruption notices", "EC2 instance rebalance recommendations", "State change
 * events for Amazon EC2 instances"; AWS Health User Guide: "AWS Health events Amazon EventBridge schema"). The
 * interruption handler parses them with `shared/core/api/interruption-events.ts`, exactly as on AWS.
 */
import {
  AWS_HEALTH_DETAIL_TYPE,
  REBALANCE_RECOMMENDATION_DETAIL_TYPE,
  SPOT_INTERRUPTION_DETAIL_TYPE,
  STATE_CHANGE_DETAIL_TYPE,
  type Ec2InstanceState,
} from '../core/api/interruption-events.js';
import { fnv1a } from '../core/hash.js';

/** The account the simulation's events come from. */
export const SIMULATED_ACCOUNT = '000000000000';

/** Where and when an event is sent. `atMs` is epoch ms. */
export interface EventOrigin {
  readonly atMs: number;
  readonly region: string;
}

/** An EventBridge event as it arrives in SQS (the message body, before JSON encoding). */
export interface EventBridgeEvent {
  readonly version: '0';
  readonly id: string;
  readonly 'detail-type': string;
  readonly source: string;
  readonly account: string;
  /** ISO-8601 UTC, seconds precision (`yyyy-mm-ddThh:mm:ssZ`). */
  readonly time: string;
  readonly region: string;
  readonly resources: readonly string[];
  readonly detail: Readonly<Record<string, unknown>>;
}

/** The EC2 Spot Instance Interruption Warning for `instanceId`, sent two minutes before EC2 acts. */
export function spotInterruptionWarning(origin: EventOrigin, instanceId: string, action: 'terminate' | 'stop' | 'hibernate' = 'terminate'): EventBridgeEvent {
  return ec2Event(origin, SPOT_INTERRUPTION_DETAIL_TYPE, instanceId, { 'instance-id': instanceId, 'instance-action': action });
}

/** The EC2 Instance Rebalance Recommendation for `instanceId`. */
export function rebalanceRecommendation(origin: EventOrigin, instanceId: string): EventBridgeEvent {
  return ec2Event(origin, REBALANCE_RECOMMENDATION_DETAIL_TYPE, instanceId, { 'instance-id': instanceId });
}

/** The EC2 Instance State-change Notification for `instanceId` entering `state`. */
export function stateChangeNotification(origin: EventOrigin, instanceId: string, state: Ec2InstanceState): EventBridgeEvent {
  return ec2Event(origin, STATE_CHANGE_DETAIL_TYPE, instanceId, { 'instance-id': instanceId, state });
}

/**
 * The AWS Health Event of an EC2 scheduled change (category `scheduledChange`) affecting `instanceIds`, e.g. a
 * maintenance reboot or an instance retirement.
 * @param startMs when the change is scheduled to start, epoch ms
 * @param eventTypeCode e.g. `AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED`
 */
export function healthScheduledChange(origin: EventOrigin, instanceIds: readonly string[], startMs: number, eventTypeCode = 'AWS_EC2_INSTANCE_REBOOT_MAINTENANCE_SCHEDULED'): EventBridgeEvent {
  const id = eventId(`health|${eventTypeCode}|${instanceIds.join(',')}|${origin.atMs}`);
  const start = new Date(startMs).toUTCString();
  return {
    version: '0',
    id,
    'detail-type': AWS_HEALTH_DETAIL_TYPE,
    source: 'aws.health',
    account: SIMULATED_ACCOUNT,
    time: isoSeconds(origin.atMs),
    region: origin.region,
    resources: [...instanceIds],
    detail: {
      eventArn: `arn:aws:health:${origin.region}::event/EC2/${eventTypeCode}/${eventTypeCode}_${id.slice(0, 8)}`,
      service: 'EC2',
      eventTypeCode,
      eventTypeCategory: 'scheduledChange',
      eventScopeCode: 'ACCOUNT_SPECIFIC',
      startTime: start,
      endTime: new Date(startMs + 2 * 60 * 60 * 1000).toUTCString(),
      lastUpdatedTime: new Date(origin.atMs).toUTCString(),
      statusCode: 'upcoming',
      eventRegion: origin.region,
      eventDescription: [{ language: 'en_US', latestDescription: `EC2 has scheduled maintenance (${eventTypeCode}) for the affected instances.` }],
      affectedEntities: instanceIds.map((entityValue) => ({ entityValue, statusCode: 'IMPAIRED' })),
      affectedAccount: SIMULATED_ACCOUNT,
      page: '1',
      totalPages: '1',
    },
  };
}

function ec2Event(origin: EventOrigin, detailType: string, instanceId: string, detail: Record<string, unknown>): EventBridgeEvent {
  return {
    version: '0',
    id: eventId(`${detailType}|${instanceId}|${JSON.stringify(detail)}|${origin.atMs}`),
    'detail-type': detailType,
    source: 'aws.ec2',
    account: SIMULATED_ACCOUNT,
    time: isoSeconds(origin.atMs),
    region: origin.region,
    resources: [`arn:aws:ec2:${origin.region}:${SIMULATED_ACCOUNT}:instance/${instanceId}`],
    detail,
  };
}

/** EventBridge's `time`: ISO-8601 UTC without milliseconds. */
function isoSeconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** A deterministic UUID-shaped id. */
function eventId(seed: string): string {
  const h = (s: string) => fnv1a(s).toString(16).padStart(8, '0');
  const a = h(seed);
  const b = h(`${seed}|b`);
  const c = h(`${seed}|c`);
  const d = h(`${seed}|d`);
  return `${a}-${b.slice(0, 4)}-${b.slice(4)}-${c.slice(0, 4)}-${c.slice(4)}${d}`;
}
