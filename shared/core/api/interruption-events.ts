/**
 * The EventBridge events the interruption queue carries, as AWS documents them, and a parser that turns one SQS
 * message body into what the interruption controller acts on.
 *
 * Five EventBridge rules feed the queue (Karpenter's CloudFormation template, docs/karpenter-semantics.md#interruption):
 * - `aws.ec2` / `EC2 Spot Instance Interruption Warning` — two minutes before EC2 stops, hibernates or terminates a
 *   spot instance; `detail: {"instance-id", "instance-action": "terminate" | "stop" | "hibernate"}` (EC2 User Guide,
 *   "Spot Instance interruption notices");
 * - `aws.ec2` / `EC2 Instance Rebalance Recommendation` — a spot instance at elevated risk of interruption;
 *   `detail: {"instance-id"}` (EC2 User Guide, "EC2 instance rebalance recommendations");
 * - `aws.ec2` / `EC2 Instance State-change Notification` — `detail: {"instance-id", "state"}` with state one of
 *   pending, running, stopping, stopped, shutting-down, terminated (EC2 User Guide, "State change events for Amazon
 *   EC2 instances");
 * - `aws.health` / `AWS Health Event` — for EC2 scheduled changes (`detail.service: "EC2"`,
 *   `detail.eventTypeCategory: "scheduledChange"`), the instances are `detail.affectedEntities[].entityValue`
 *   (AWS Health User Guide, "AWS Health events Amazon EventBridge schema"); Health events of other services or
 *   categories are well formed but not acted on (Karpenter's `scheduledchange` parser ignores them too);
 * - `aws.ec2` / `EC2 Capacity Reservation Instance Interruption Warning` — two minutes before an instance in an
 *   interruptible Capacity Reservation is terminated; `detail: {"instance-id", "instance-action", ...}` (EC2 User
 *   Guide, "Monitor interruptible Capacity Reservations").
 *
 * Pure: no clock, no I/O. Unknown fields are kept out of the result and never rejected (AWS adds fields).
 */
import * as z from 'zod';

/** `detail-type` of the spot interruption warning. */
export const SPOT_INTERRUPTION_DETAIL_TYPE = 'EC2 Spot Instance Interruption Warning';
/** `detail-type` of the rebalance recommendation. */
export const REBALANCE_RECOMMENDATION_DETAIL_TYPE = 'EC2 Instance Rebalance Recommendation';
/** `detail-type` of the instance state-change notification. */
export const STATE_CHANGE_DETAIL_TYPE = 'EC2 Instance State-change Notification';
/** `detail-type` of AWS Health events. */
export const AWS_HEALTH_DETAIL_TYPE = 'AWS Health Event';
/** `detail-type` of the Capacity Reservation interruption warning. */
export const CAPACITY_RESERVATION_INTERRUPTION_DETAIL_TYPE = 'EC2 Capacity Reservation Instance Interruption Warning';

/** EC2 instance states a state-change notification carries (EC2 User Guide). */
export const EC2_INSTANCE_STATES = ['pending', 'running', 'stopping', 'stopped', 'shutting-down', 'terminated'] as const;
/** One of {@link EC2_INSTANCE_STATES}. */
export type Ec2InstanceState = (typeof EC2_INSTANCE_STATES)[number];

/** What EC2 will do to an interrupted spot instance (`instance-action`). */
export const SPOT_INSTANCE_ACTIONS = ['terminate', 'stop', 'hibernate'] as const;
/** One of {@link SPOT_INSTANCE_ACTIONS}. */
export type SpotInstanceAction = (typeof SPOT_INSTANCE_ACTIONS)[number];

/** An EC2 instance id, e.g. `i-1234567890abcdef0` (the documented examples also use the short `i-abcd1111`). */
const instanceId = z.string().regex(/^i-[0-9a-f]{8,17}$/, { error: 'not an EC2 instance id (i- and 8 to 17 hex digits)' });

/** The EventBridge envelope every event shares; `time` is ISO-8601 UTC (`yyyy-mm-ddThh:mm:ssZ`). */
const envelope = {
  version: z.string().optional(),
  id: z.string().min(1),
  source: z.string(),
  account: z.string().optional(),
  time: z.iso.datetime({ offset: true }),
  region: z.string().optional(),
  // Documented as an array of ARNs; the Capacity Reservation example shows a placeholder string. Not read.
  resources: z.union([z.array(z.string()), z.string()]).optional(),
};

const SpotInterruptionSchema = z.looseObject({
  ...envelope,
  source: z.literal('aws.ec2'),
  'detail-type': z.literal(SPOT_INTERRUPTION_DETAIL_TYPE),
  detail: z.looseObject({ 'instance-id': instanceId, 'instance-action': z.enum(SPOT_INSTANCE_ACTIONS) }),
});

const RebalanceSchema = z.looseObject({
  ...envelope,
  source: z.literal('aws.ec2'),
  'detail-type': z.literal(REBALANCE_RECOMMENDATION_DETAIL_TYPE),
  detail: z.looseObject({ 'instance-id': instanceId }),
});

const StateChangeSchema = z.looseObject({
  ...envelope,
  source: z.literal('aws.ec2'),
  'detail-type': z.literal(STATE_CHANGE_DETAIL_TYPE),
  detail: z.looseObject({ 'instance-id': instanceId, state: z.enum(EC2_INSTANCE_STATES) }),
});

const CapacityReservationSchema = z.looseObject({
  ...envelope,
  source: z.literal('aws.ec2'),
  'detail-type': z.literal(CAPACITY_RESERVATION_INTERRUPTION_DETAIL_TYPE),
  detail: z.looseObject({ 'instance-id': instanceId, 'instance-action': z.string().optional() }),
});

const HealthSchema = z.looseObject({
  ...envelope,
  source: z.literal('aws.health'),
  'detail-type': z.literal(AWS_HEALTH_DETAIL_TYPE),
  detail: z.looseObject({
    eventArn: z.string().optional(),
    service: z.string(),
    eventTypeCode: z.string().optional(),
    eventTypeCategory: z.string(),
    startTime: z.string().optional(),
    endTime: z.string().optional(),
    affectedEntities: z.array(z.looseObject({ entityValue: z.string() })).optional(),
  }),
});

/** What every parsed message carries. */
interface MessageBase {
  /** The EventBridge event id (the same event delivered twice has the same id). */
  readonly id: string;
  /** When the event was sent, epoch ms (UTC), from the envelope's `time`. */
  readonly time: number;
  /** The EC2 instances the event is about (one for EC2 events; every affected instance for AWS Health). */
  readonly instanceIds: readonly string[];
}

/**
 * A parsed interruption-queue message, one kind per EventBridge rule, plus `ignored` for a well-formed event Skiff
 * does not act on (a Health event of another service or category, or one naming no instance).
 */
export type InterruptionMessage =
  | (MessageBase & { readonly kind: 'spotInterruption'; readonly action: SpotInstanceAction })
  | (MessageBase & { readonly kind: 'rebalanceRecommendation' })
  | (MessageBase & { readonly kind: 'stateChange'; readonly state: Ec2InstanceState })
  | (MessageBase & { readonly kind: 'scheduledChange'; readonly eventTypeCode: string; readonly startTime?: string })
  | (MessageBase & { readonly kind: 'capacityReservationInterruption'; readonly action?: string })
  | (MessageBase & { readonly kind: 'ignored'; readonly why: string });

/** One of the {@link InterruptionMessage} kinds. */
export type InterruptionMessageKind = InterruptionMessage['kind'];

/** The outcome of parsing: the message, or why the body is malformed (then it is dropped, never retried). */
export type InterruptionParseResult = { readonly ok: true; readonly message: InterruptionMessage } | { readonly ok: false; readonly reason: string };

/**
 * Parses one SQS message body (the EventBridge event as JSON text) into an {@link InterruptionMessage}.
 * @returns `{ok: false, reason}` for a body that is not JSON, not one of the five events, or misses a field the
 *   action needs (e.g. `detail.instance-id`); the reason names the field path
 * @example
 * const parsed = parseInterruptionMessage(record.body);
 * if (parsed.ok && parsed.message.kind === 'spotInterruption') console.log(parsed.message.instanceIds[0]);
 */
export function parseInterruptionMessage(body: string): InterruptionParseResult {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { ok: false, reason: 'the body is not JSON' };
  }
  return parseInterruptionEvent(json);
}

/**
 * Parses an EventBridge event (already decoded from JSON); see {@link parseInterruptionMessage}.
 * @returns the message, or the reason it is malformed
 */
export function parseInterruptionEvent(event: unknown): InterruptionParseResult {
  if (!event || typeof event !== 'object' || Array.isArray(event)) return { ok: false, reason: 'the event is not a JSON object' };
  const e = event as Record<string, unknown>;
  const detailType = e['detail-type'];
  switch (detailType) {
    case SPOT_INTERRUPTION_DETAIL_TYPE: {
      const p = SpotInterruptionSchema.safeParse(event);
      if (!p.success) return malformed(detailType, p.error);
      return ok({ kind: 'spotInterruption', ...base(p.data, [p.data.detail['instance-id']]), action: p.data.detail['instance-action'] });
    }
    case REBALANCE_RECOMMENDATION_DETAIL_TYPE: {
      const p = RebalanceSchema.safeParse(event);
      if (!p.success) return malformed(detailType, p.error);
      return ok({ kind: 'rebalanceRecommendation', ...base(p.data, [p.data.detail['instance-id']]) });
    }
    case STATE_CHANGE_DETAIL_TYPE: {
      const p = StateChangeSchema.safeParse(event);
      if (!p.success) return malformed(detailType, p.error);
      return ok({ kind: 'stateChange', ...base(p.data, [p.data.detail['instance-id']]), state: p.data.detail.state });
    }
    case CAPACITY_RESERVATION_INTERRUPTION_DETAIL_TYPE: {
      const p = CapacityReservationSchema.safeParse(event);
      if (!p.success) return malformed(detailType, p.error);
      const action = p.data.detail['instance-action'];
      return ok({ kind: 'capacityReservationInterruption', ...base(p.data, [p.data.detail['instance-id']]), ...(action !== undefined ? { action } : {}) });
    }
    case AWS_HEALTH_DETAIL_TYPE: {
      const p = HealthSchema.safeParse(event);
      if (!p.success) return malformed(detailType, p.error);
      const d = p.data.detail;
      if (d.service !== 'EC2' || d.eventTypeCategory !== 'scheduledChange') {
        return ok({ kind: 'ignored', ...base(p.data, []), why: `AWS Health event of service ${d.service}, category ${d.eventTypeCategory} (only EC2 scheduledChange is acted on)` });
      }
      // Entities of an EC2 event may also be volumes or hosts; only instances can be NodeClaims.
      const ids = [...new Set((d.affectedEntities ?? []).map((a) => a.entityValue).filter((v) => instanceId.safeParse(v).success))];
      if (ids.length === 0) return ok({ kind: 'ignored', ...base(p.data, []), why: 'AWS Health scheduled change names no EC2 instance in detail.affectedEntities' });
      return ok({ kind: 'scheduledChange', ...base(p.data, ids), eventTypeCode: d.eventTypeCode ?? '', ...(d.startTime !== undefined ? { startTime: d.startTime } : {}) });
    }
    default:
      return {
        ok: false,
        reason: typeof detailType === 'string' ? `detail-type ${JSON.stringify(detailType)} is not an interruption event` : 'detail-type is missing or not a string',
      };
  }
}

function base(data: { id: string; time: string }, instanceIds: readonly string[]): MessageBase {
  return { id: data.id, time: Date.parse(data.time), instanceIds };
}

function ok(message: InterruptionMessage): InterruptionParseResult {
  return { ok: true, message };
}

function malformed(detailType: string, error: z.ZodError): InterruptionParseResult {
  const issues = error.issues.map((i) => `${i.path.join('.') || '(event)'}: ${i.message}`).join('; ');
  return { ok: false, reason: `malformed ${detailType}: ${issues}` };
}
