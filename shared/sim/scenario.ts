/**
 * The `skiff.dev/v1alpha1` Scenario kind (docs/contracts.md#scenario-document): its zod schema, and its
 * normalisation into a {@link ScenarioSpec} whose times are numbers (epoch ms for the start, seconds for durations
 * and offsets), with defaults applied and events sorted by time.
 *
 * Pure: the current time comes in as an argument (it only serves the default start).
 */
import * as z from 'zod';
import { ICE_ERROR_CODES, type IceErrorCode, type ValidationIssue } from '../core/errors.js';
import { durationSecondsSchema, formatDuration } from '../core/api/duration.js';
import { instanceTypeByName } from '../core/instancetypes/catalog.js';
import { zonesOf } from './simulated-ec2.js';
import { CAPACITY_TYPES, type CapacityType } from '../core/api/labels.js';
import type { Taint } from '../core/api/kubernetes.js';
import {
  MANIFEST_KINDS,
  NAMESPACED_KINDS,
  locateIssues,
  manifestBodySchema,
  manifestErrorMap,
  withProtoKeyIssues,
  zodIssuesToPathIssues,
  type Manifest,
  type ManifestDocument,
  type ManifestKind,
  type ManifestSource,
} from '../core/api/manifest.js';
import { annotationsSchema, labelsSchema, objectMetaSchema, objectNameSchema, taintSchema } from '../core/api/object-meta.js';

/** The Scenario's apiVersion. */
export const SCENARIO_API_VERSION = 'skiff.dev/v1alpha1';
/** The Scenario's kind. */
export const SCENARIO_KIND = 'Scenario';

/** Default simulated duration without a Scenario document or `spec.duration`: 1 hour, in seconds. */
export const DEFAULT_DURATION_SECONDS = 3600;
/** The longest simulation: one year, in seconds (also the furthest a starting node may date back). */
export const MAX_DURATION_SECONDS = 366 * 24 * 3600;
/** Highest price a scenario may pin, USD per hour (the dearest EC2 instance costs under 500). */
export const MAX_PRICE_USD_PER_HOUR = 10_000;
/**
 * Lowest price a scenario may give, USD per hour: a millionth of a dollar (the cheapest EC2 spot offering costs about
 * a thousand times more). A price of 0 breaks the solver (it divides by prices) and one below DynamoDB's smallest
 * Number (1e-130) cannot be stored, so prices must be positive normal numbers at least this large.
 */
export const MIN_PRICE_USD_PER_HOUR = 0.000_001;

/**
 * A price, USD per hour: a finite number from {@link MIN_PRICE_USD_PER_HOUR} to {@link MAX_PRICE_USD_PER_HOUR}
 * (0, negative and denormal numbers such as 1e-320 are refused).
 */
export const priceSchema = z
  .number()
  .min(MIN_PRICE_USD_PER_HOUR, { error: `a price is USD per hour, positive and at least ${MIN_PRICE_USD_PER_HOUR.toFixed(6)}` })
  .max(MAX_PRICE_USD_PER_HOUR, { error: `a price is USD per hour, at most ${MAX_PRICE_USD_PER_HOUR}` });
/** Latest instant a simulation may reach, epoch ms (Date and the Result's four-digit years stay valid). */
export const LATEST_TIME_MS = Date.UTC(9000, 0, 1);
/**
 * Earliest instant a simulation may reach, epoch ms: 1970-01-01T00:00:00Z (the start, and every starting node's
 * creation time; earlier ones have no four-digit ISO-8601 form in the Result, or none at all before year 0).
 */
export const EARLIEST_TIME_MS = 0;
/**
 * Latest creation time a snapshot's Node or Pod may carry, epoch ms: the simulation starts the minute after the newest
 * one and may last a year, plus a year of starting nodes' history, before {@link LATEST_TIME_MS}.
 */
export const LATEST_CREATION_MS = LATEST_TIME_MS - 2 * MAX_DURATION_SECONDS * 1000 - 60_000;
/** Default region. */
export const DEFAULT_REGION = 'us-west-2';
/** Karpenter's `BATCH_IDLE_DURATION` default, seconds (core `options.go`). */
export const DEFAULT_BATCH_IDLE_SECONDS = 1;
/** Karpenter's `BATCH_MAX_DURATION` default, seconds. */
export const DEFAULT_BATCH_MAX_SECONDS = 10;
/** Karpenter AWS's `VM_MEMORY_OVERHEAD_PERCENT` default (a fraction, 7.5%). */
export const DEFAULT_VM_MEMORY_OVERHEAD_PERCENT = 0.075;

/** EC2 instance states an `instanceStateChange` event may announce (EventBridge "EC2 Instance State-change Notification"). */
export const INSTANCE_STATES = ['pending', 'running', 'stopping', 'stopped', 'shutting-down', 'terminated'] as const;
/** One of {@link INSTANCE_STATES}. */
export type InstanceState = (typeof INSTANCE_STATES)[number];

/** The event keys; each event has `at` plus exactly one of these. */
export const SCENARIO_EVENT_TYPES = [
  'scale',
  'apply',
  'delete',
  'insufficientCapacity',
  'spotInterruption',
  'rebalanceRecommendation',
  'instanceStateChange',
  'scheduledMaintenance',
  'nodeCondition',
  'annotate',
  'taint',
] as const;
/** One of {@link SCENARIO_EVENT_TYPES}. */
export type ScenarioEventType = (typeof SCENARIO_EVENT_TYPES)[number];

// ---- resolved types ---------------------------------------------------------------------------------------------

/** Controller settings, Karpenter's names, durations in seconds. */
export interface ScenarioSettings {
  /** Karpenter `batchIdleDuration`, seconds. @default 1 */
  readonly batchIdleDurationSeconds: number;
  /** Karpenter `batchMaxDuration`, seconds. @default 10 */
  readonly batchMaxDurationSeconds: number;
  /** Fraction of an instance type's memory reserved for the hypervisor (0–1). @default 0.075 */
  readonly vmMemoryOverheadPercent: number;
  /** Feature gates. @default {SpotToSpotConsolidation: false} */
  readonly featureGates: { readonly SpotToSpotConsolidation: boolean };
}

/** A pinned simulated spot price. */
export interface SpotPrice {
  readonly instanceType: string;
  readonly zone: string;
  /** USD per hour. */
  readonly price: number;
}

/**
 * A price given for an instance type (`spec.prices`, or a `--prices` file): in one zone, or in every zone when `zone`
 * is absent (a zone's entry wins). USD per hour. On-demand replaces the catalogue's us-east-1 list price; spot
 * replaces the simulated spot price (a `spec.spotPrices` pin still wins for its zone).
 */
export interface PriceEntry {
  readonly instanceType: string;
  readonly zone?: string;
  /** On-demand price, USD per hour. */
  readonly onDemand?: number;
  /** Spot price, USD per hour. */
  readonly spot?: number;
  /** Where it was given: `spec.prices` or the price file's path (for the Result's `pricing` words). */
  readonly source?: string;
}

/**
 * An offering EC2 does not have (`spec.offerings.unavailable`): the instance type in that zone (absent: any zone) for
 * that capacity type (absent: any). The simulated EC2 and the instance types it lists leave it out, so neither the
 * solver nor CreateFleet can use it (a type offered nowhere is not listed at all).
 */
export interface UnavailableOffering {
  readonly instanceType: string;
  readonly zone?: string;
  readonly capacityType?: CapacityType;
}

/** A node that exists (registered) when the simulation starts. */
export interface ScenarioNode {
  readonly name: string;
  readonly instanceType: string;
  readonly zone: string;
  readonly capacityType: CapacityType;
  /** The NodePool that owns it; absent for a node Skiff does not manage. */
  readonly nodePool?: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  readonly annotations: Readonly<Record<string, string>>;
  /** Creation time as an offset from the start, seconds (≤ 0; e.g. -7200 for `createdAt: -2h`). */
  readonly createdAtSeconds: number;
  /** The NodeClaim's name, for a managed node of a snapshot (its owner reference); absent: a generated one. */
  readonly nodeClaim?: string;
  /**
   * What the node can hold, canonical units (millicores, MiB, counts): a snapshot Node's `status.allocatable`;
   * absent: what Skiff computes for the instance type and EC2NodeClass.
   */
  readonly allocatable?: Readonly<Record<string, number>>;
}

/** Fault injection, seeded by `--seed`. Probabilities are 0–1. */
export interface ScenarioFaults {
  /** Chance each queue message is delivered twice. @default 0 */
  readonly duplicateDelivery: number;
  /** Overlapping invocations of each handler. @default 1 */
  readonly concurrentInvocations: number;
  /** Chance a handler dies right after any AWS/Kubernetes side effect. @default 0 */
  readonly crashAfterSideEffect: number;
  /** Chance an EC2 call fails with RequestLimitExceeded. @default 0 */
  readonly ec2Throttle: number;
  /** Chance a DynamoDB call fails with ProvisionedThroughputExceededException after the SDK's own retries. @default 0 */
  readonly dynamodbThrottle: number;
  /** Chance a Kubernetes API call fails with a 5xx (the API server overloaded or restarting). @default 0 */
  readonly apiServerErrors: number;
}

/** `scale`: set a Deployment's or StatefulSet's replicas. */
export interface ScaleEvent {
  readonly kind: 'Deployment' | 'StatefulSet';
  /** @default 'default' */
  readonly namespace: string;
  readonly name: string;
  readonly replicas: number;
}

/**
 * `delete`: delete an object of any supported kind, a Node or a NodeClaim (by the name the Result lists). `namespace`
 * is set (default `default`) for namespaced kinds only.
 */
export interface DeleteEvent {
  readonly kind: ManifestKind | 'Node' | 'NodeClaim';
  readonly namespace?: string;
  readonly name: string;
}

/** `insufficientCapacity`: EC2 returns `errorCode` for this offering for `forSeconds`. */
export interface InsufficientCapacityEvent {
  readonly instanceType: string;
  readonly zone: string;
  readonly capacityType: CapacityType;
  /** How long the offering stays unavailable, seconds. */
  readonly forSeconds: number;
  /** @default 'InsufficientInstanceCapacity' */
  readonly errorCode: IceErrorCode;
}

/** Nodes chosen by labels: `count` of the nodes whose labels include every `nodeSelector` pair ({} = any node). */
export interface NodeTarget {
  readonly nodeSelector: Readonly<Record<string, string>>;
  /** How many matching nodes are affected. @default 1 */
  readonly count: number;
}

/** `instanceStateChange`: an EC2 state-change notification for selected nodes, or for `instanceId` (a foreign instance). */
export interface InstanceStateChangeEvent extends NodeTarget {
  readonly state: InstanceState;
  /** When set, the notification is about this instance id instead of selected nodes. */
  readonly instanceId?: string;
}

/** `nodeCondition`: set the Ready condition of selected nodes. */
export interface NodeConditionEvent extends NodeTarget {
  readonly ready: boolean;
}

/**
 * `annotate`: set annotations on nodes (`kind: Node`, by `name` or `nodeSelector`) or pods (`kind: Pod`, by
 * `namespace` + `name` or label `selector`). `count` limits how many matches are annotated (absent = all).
 */
export interface AnnotateEvent {
  readonly kind: 'Node' | 'Pod';
  readonly name?: string;
  /** Pods only. @default 'default' for pods */
  readonly namespace?: string;
  /** Nodes only: node labels to match. */
  readonly nodeSelector?: Readonly<Record<string, string>>;
  /** Pods only: pod labels to match. */
  readonly selector?: Readonly<Record<string, string>>;
  readonly count?: number;
  readonly annotations: Readonly<Record<string, string>>;
}

/** `taint`: add taints to selected nodes. `count` limits how many matches are tainted (absent = all). */
export interface TaintEvent {
  readonly nodeSelector: Readonly<Record<string, string>>;
  readonly count?: number;
  readonly taints: readonly Taint[];
}

/** Fields every resolved event has. */
interface EventBase<T extends ScenarioEventType> {
  readonly type: T;
  /** Offset from the start, seconds. */
  readonly atSeconds: number;
  /** Position in `spec.events` as written (before sorting by time), for messages such as `spec.events[3]`. */
  readonly index: number;
  /** The event's position in the scenario file. */
  readonly source: ManifestSource;
}

/**
 * A timeline event, discriminated by `type`; the payload sits under the key of the same name (as in YAML).
 * @example if (e.type === 'scale') cluster.scale(e.scale.kind, e.scale.namespace, e.scale.name, e.scale.replicas);
 */
export type ScenarioEvent =
  | (EventBase<'scale'> & { readonly scale: ScaleEvent })
  | (EventBase<'apply'> & { readonly apply: Manifest })
  | (EventBase<'delete'> & { readonly delete: DeleteEvent })
  | (EventBase<'insufficientCapacity'> & { readonly insufficientCapacity: InsufficientCapacityEvent })
  | (EventBase<'spotInterruption'> & { readonly spotInterruption: NodeTarget })
  | (EventBase<'rebalanceRecommendation'> & { readonly rebalanceRecommendation: NodeTarget })
  | (EventBase<'instanceStateChange'> & { readonly instanceStateChange: InstanceStateChangeEvent })
  | (EventBase<'scheduledMaintenance'> & { readonly scheduledMaintenance: NodeTarget })
  | (EventBase<'nodeCondition'> & { readonly nodeCondition: NodeConditionEvent })
  | (EventBase<'annotate'> & { readonly annotate: AnnotateEvent })
  | (EventBase<'taint'> & { readonly taint: TaintEvent });

/** A scenario, resolved: numbers for times, defaults applied, events sorted (stably) by `atSeconds`. */
export interface ScenarioSpec {
  /** Virtual clock start, epoch ms (UTC). */
  readonly startMs: number;
  /** How long to simulate, seconds. */
  readonly durationSeconds: number;
  readonly region: string;
  readonly settings: ScenarioSettings;
  readonly spotPrices: readonly SpotPrice[];
  /** Prices given per instance type (and zone), `spec.prices` then a `--prices` file's (later entries win). @default [] */
  readonly prices?: readonly PriceEntry[];
  /** Offerings EC2 does not have. @default [] */
  readonly unavailableOfferings?: readonly UnavailableOffering[];
  readonly nodes: readonly ScenarioNode[];
  readonly events: readonly ScenarioEvent[];
  readonly faults: ScenarioFaults;
}

// ---- schema -----------------------------------------------------------------------------------------------------

/** ISO-8601 date-time with a zone (`Z` or `±hh:mm`). */
const ISO_TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;
/** An AWS region name such as `us-west-2` or `ap-southeast-1` (also `--region`). */
export const REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;

/**
 * An ISO-8601 UTC timestamp (`2026-03-02T08:00:00Z`), output as epoch milliseconds.
 * @example isoTimestampSchema.parse('2026-03-02T08:00:00Z') // 1772438400000
 */
export const isoTimestampSchema = z.string().transform((text, ctx): number => {
  const m = ISO_TIMESTAMP.exec(text.trim());
  const ms = m ? Date.parse(text.trim()) : Number.NaN;
  const [, y, mo, d, h, mi, s] = m ?? [];
  const calendarOk =
    m !== null && Number(mo) >= 1 && Number(mo) <= 12 && Number(d) >= 1 && Number(d) <= new Date(Date.UTC(Number(y), Number(mo), 0)).getUTCDate() && Number(h) <= 23 && Number(mi) <= 59 && Number(s ?? 0) <= 59;
  if (!calendarOk || Number.isNaN(ms)) {
    ctx.addIssue({ code: 'custom', message: `${JSON.stringify(text)} is not an ISO-8601 UTC time such as "2026-03-02T08:00:00Z"` });
    return z.NEVER;
  }
  return ms;
});

/** A probability 0–1. */
const probability = z.number().min(0, { error: 'a probability must be between 0 and 1' }).max(1, { error: 'a probability must be between 0 and 1' });

/**
 * A fault probability that must stay below 1: at 1 every invocation fails at the same point (every side effect crashes,
 * every call is throttled or refused), so nothing can ever progress and the run only shows that.
 */
const faultProbability = z
  .number()
  .min(0, { error: 'a probability must be between 0 and 1' })
  .lt(1, { error: 'must be below 1: at 1 every invocation fails at the same point, so nothing could ever progress (use e.g. 0.3 for a hostile run)' });

/** A label map used to pick nodes (every pair must match). */
const selectorMap = labelsSchema;

const settingsSchema = z
  .strictObject({
    batchIdleDuration: durationSecondsSchema({ positive: true }).default(DEFAULT_BATCH_IDLE_SECONDS),
    batchMaxDuration: durationSecondsSchema({ positive: true }).default(DEFAULT_BATCH_MAX_SECONDS),
    vmMemoryOverheadPercent: z
      .number()
      .min(0, { error: 'vmMemoryOverheadPercent is a fraction between 0 and 1 (0.075 = 7.5%)' })
      .max(1, { error: 'vmMemoryOverheadPercent is a fraction between 0 and 1 (0.075 = 7.5%)' })
      .default(DEFAULT_VM_MEMORY_OVERHEAD_PERCENT),
    featureGates: z.strictObject({ SpotToSpotConsolidation: z.boolean().default(false) }).prefault({}),
  })
  .superRefine((s, ctx) => {
    if (s.batchMaxDuration < s.batchIdleDuration) {
      ctx.addIssue({ code: 'custom', path: ['batchMaxDuration'], message: `batchMaxDuration (${formatDuration(s.batchMaxDuration)}) must be at least batchIdleDuration (${formatDuration(s.batchIdleDuration)})` });
    }
  })
  .transform(
    (s): ScenarioSettings => ({
      batchIdleDurationSeconds: s.batchIdleDuration,
      batchMaxDurationSeconds: s.batchMaxDuration,
      vmMemoryOverheadPercent: s.vmMemoryOverheadPercent,
      featureGates: s.featureGates,
    }),
  );

const spotPriceSchema = z.strictObject({
  instanceType: z.string().min(1),
  zone: z.string().min(1),
  price: priceSchema,
});

/** A price entry (`spec.prices[]`, a price file's `prices[]`): at least one of `onDemand` and `spot`, USD per hour. */
export const priceEntrySchema = z
  .strictObject({
    instanceType: z.string().min(1),
    zone: z.string().min(1).optional(),
    onDemand: priceSchema.optional(),
    spot: priceSchema.optional(),
  })
  .refine((p) => p.onDemand !== undefined || p.spot !== undefined, { error: 'give onDemand, spot or both (USD per hour)' });

/** An offering EC2 does not have (`spec.offerings.unavailable[]`, a price file's `unavailable[]`). */
export const unavailableOfferingSchema = z.strictObject({
  instanceType: z.string().min(1),
  zone: z.string().min(1).optional(),
  capacityType: z.enum(CAPACITY_TYPES).optional(),
});

const scenarioNodeSchema = z
  .strictObject({
    name: objectNameSchema,
    instanceType: z.string().min(1),
    zone: z.string().min(1),
    capacityType: z.enum(CAPACITY_TYPES),
    nodePool: z.string().min(1).optional(),
    labels: labelsSchema.default(() => ({})),
    taints: z.array(taintSchema).default(() => []),
    annotations: annotationsSchema.default(() => ({})),
    createdAt: durationSecondsSchema({ allowNegative: true }).default(0),
  })
  .transform(({ createdAt, nodePool, ...rest }): ScenarioNode => ({ ...rest, ...(nodePool !== undefined ? { nodePool } : {}), createdAtSeconds: createdAt }));

/**
 * The most pods one workload may ask for: a `scale` event's `replicas` here, and (checked by the loader's
 * `crossCheck`, in manifests and `apply` events alike) a Deployment's or StatefulSet's `replicas` and a Job's
 * `parallelism` and `completions`. The simulation runs every pod through the real handlers and the simulated
 * kube-scheduler; far beyond this a run takes hours and gigabytes, and a typo (`replicas: 1000000000000`) would
 * never end. Benchmarks of the solver alone go further (`npm run bench`).
 */
export const MAX_SCALE_REPLICAS = 20_000;

/** The most overlapping invocations `spec.faults.concurrentInvocations` may simulate. */
export const MAX_CONCURRENT_INVOCATIONS = 16;

const scaleSchema = z.strictObject({
  kind: z.enum(['Deployment', 'StatefulSet']),
  namespace: objectNameSchema.default('default'),
  name: z.string().min(1),
  replicas: z
    .int()
    .min(0)
    .max(MAX_SCALE_REPLICAS, { error: `the simulation takes at most ${MAX_SCALE_REPLICAS} replicas per workload (every pod goes through the real handlers)` }),
});

const DELETABLE_KINDS = [...(Object.keys(MANIFEST_KINDS) as ManifestKind[]), 'Node', 'NodeClaim'] as const;

const deleteSchema = z
  .strictObject({
    kind: z.enum(DELETABLE_KINDS),
    namespace: z.string().min(1).optional(),
    name: z.string().min(1),
  })
  .superRefine((d, ctx) => {
    if (d.namespace !== undefined && (d.kind === 'Node' || d.kind === 'NodeClaim' || !NAMESPACED_KINDS.has(d.kind))) {
      ctx.addIssue({ code: 'custom', path: ['namespace'], message: `${d.kind} is cluster-scoped: remove namespace` });
    }
  })
  .transform(
    (d): DeleteEvent =>
      d.kind !== 'Node' && d.kind !== 'NodeClaim' && NAMESPACED_KINDS.has(d.kind) ? { kind: d.kind, namespace: d.namespace ?? 'default', name: d.name } : { kind: d.kind, name: d.name },
  );

const insufficientCapacitySchema = z
  .strictObject({
    instanceType: z.string().min(1),
    zone: z.string().min(1),
    capacityType: z.enum(CAPACITY_TYPES),
    for: durationSecondsSchema({ positive: true }),
    errorCode: z.enum(ICE_ERROR_CODES).default('InsufficientInstanceCapacity'),
  })
  .transform(({ for: forSeconds, ...rest }): InsufficientCapacityEvent => ({ ...rest, forSeconds }));

const nodeTargetShape = {
  nodeSelector: selectorMap.default(() => ({})),
  count: z.int().min(1).default(1),
};

const nodeTargetSchema = z.strictObject(nodeTargetShape);

const instanceStateChangeSchema = z
  .strictObject({
    nodeSelector: selectorMap.optional(),
    count: z.int().min(1).optional(),
    instanceId: z.string().regex(/^i-[0-9a-f]+$/, { error: 'an instance id looks like i-0123456789abcdef0' }).optional(),
    state: z.enum(INSTANCE_STATES),
  })
  .superRefine((e, ctx) => {
    if (e.instanceId !== undefined && (e.nodeSelector !== undefined || e.count !== undefined)) {
      ctx.addIssue({ code: 'custom', path: ['instanceId'], message: 'give either instanceId (a foreign instance) or nodeSelector/count, not both' });
    }
  })
  .transform(
    (e): InstanceStateChangeEvent => ({
      nodeSelector: e.nodeSelector ?? {},
      count: e.count ?? 1,
      state: e.state,
      ...(e.instanceId !== undefined ? { instanceId: e.instanceId } : {}),
    }),
  );

const nodeConditionSchema = z.strictObject({ ...nodeTargetShape, ready: z.boolean() });

const annotateSchema = z
  .strictObject({
    kind: z.enum(['Node', 'Pod']).default('Node'),
    name: z.string().min(1).optional(),
    namespace: z.string().min(1).optional(),
    nodeSelector: selectorMap.optional(),
    selector: selectorMap.optional(),
    count: z.int().min(1).optional(),
    annotations: annotationsSchema.refine((a) => Object.keys(a).length > 0, { error: 'annotations must not be empty' }),
  })
  .superRefine((a, ctx) => {
    if (a.name !== undefined && (a.nodeSelector !== undefined || a.selector !== undefined)) {
      ctx.addIssue({ code: 'custom', path: ['name'], message: 'pick the target by name or by a selector, not both' });
    }
    if (a.kind === 'Node' && a.selector !== undefined) ctx.addIssue({ code: 'custom', path: ['selector'], message: 'use nodeSelector to pick nodes' });
    if (a.kind === 'Node' && a.namespace !== undefined) ctx.addIssue({ code: 'custom', path: ['namespace'], message: 'Node is cluster-scoped: remove namespace' });
    if (a.kind === 'Pod' && a.nodeSelector !== undefined) ctx.addIssue({ code: 'custom', path: ['nodeSelector'], message: 'use selector (pod labels) to pick pods' });
  })
  .transform(
    (a): AnnotateEvent => ({
      ...a,
      ...(a.kind === 'Pod' ? { namespace: a.namespace ?? 'default' } : {}),
    }),
  );

const taintEventSchema = z.strictObject({
  nodeSelector: selectorMap.default(() => ({})),
  count: z.int().min(1).optional(),
  taints: z
    .array(taintSchema)
    .min(1, { error: 'taints must not be empty' })
    .superRefine((taints, ctx) => {
      // The API server rejects a node with two taints of the same key and effect.
      const seen = new Set<string>();
      for (const [i, t] of taints.entries()) {
        const id = `${t.key}:${t.effect}`;
        if (seen.has(id)) ctx.addIssue({ code: 'custom', path: [i], message: `duplicate taint ${t.key} with effect ${t.effect}` });
        seen.add(id);
      }
    }),
});

/** An event before resolution: `at` in seconds plus exactly one payload. */
const eventSchema = z
  .strictObject({
    at: durationSecondsSchema(),
    scale: scaleSchema.optional(),
    apply: manifestBodySchema.optional(),
    delete: deleteSchema.optional(),
    insufficientCapacity: insufficientCapacitySchema.optional(),
    spotInterruption: nodeTargetSchema.optional(),
    rebalanceRecommendation: nodeTargetSchema.optional(),
    instanceStateChange: instanceStateChangeSchema.optional(),
    scheduledMaintenance: nodeTargetSchema.optional(),
    nodeCondition: nodeConditionSchema.optional(),
    annotate: annotateSchema.optional(),
    taint: taintEventSchema.optional(),
  })
  .superRefine((e, ctx) => {
    const present = SCENARIO_EVENT_TYPES.filter((t) => e[t] !== undefined);
    if (present.length === 0) ctx.addIssue({ code: 'custom', message: `an event needs \`at\` and exactly one of: ${SCENARIO_EVENT_TYPES.join(', ')}` });
    for (const extra of present.slice(1)) {
      ctx.addIssue({ code: 'custom', path: [extra], message: `an event has exactly one action; this one already has ${present[0]}` });
    }
  });

/**
 * The shape of a Scenario's `spec`: every field's own rules, without the checks across fields
 * ({@link checkScenarioSpec}). Kept apart so a document whose only problems are across fields still yields its spec,
 * and the checks against the other objects (`scenario-checks.ts`: NodePools its nodes name, Deployments its events
 * scale) report in the same run instead of the next.
 */
const scenarioSpecShape = z.strictObject({
    start: isoTimestampSchema.optional(),
    duration: durationSecondsSchema({ positive: true }).default(DEFAULT_DURATION_SECONDS),
    region: z.string().regex(REGION, { error: 'region must be an AWS region name such as us-west-2' }).default(DEFAULT_REGION),
    settings: settingsSchema.prefault({}),
    spotPrices: z.array(spotPriceSchema).default(() => []),
    prices: z.array(priceEntrySchema).default(() => []),
    offerings: z.strictObject({ unavailable: z.array(unavailableOfferingSchema).default(() => []) }).prefault({}),
    nodes: z.array(scenarioNodeSchema).default(() => []),
    events: z.array(eventSchema).default(() => []),
    faults: z
      .strictObject({
        duplicateDelivery: probability.default(0),
        concurrentInvocations: z
          .int()
          .min(1)
          .max(MAX_CONCURRENT_INVOCATIONS, { error: `at most ${MAX_CONCURRENT_INVOCATIONS} overlapping invocations (Lambda overlaps a few; more only slows the run)` })
          .default(1),
        crashAfterSideEffect: faultProbability.default(0),
        ec2Throttle: faultProbability.default(0),
        dynamodbThrottle: faultProbability.default(0),
        apiServerErrors: faultProbability.default(0),
      })
      .prefault({}),
  });

/** A parsed spec, before the checks across its fields. */
type ScenarioSpecShape = z.output<typeof scenarioSpecShape>;

/**
 * The checks across a spec's fields: zones in its region, instance types in the catalogue, events within its
 * duration, starting nodes' names unique and their `createdAt` in range, spot prices not given twice.
 * @param addIssue receives each problem, its path relative to `spec`
 */
function checkScenarioSpec(spec: ScenarioSpecShape, addIssue: (issue: { readonly code: 'custom'; readonly path: PropertyKey[]; readonly message: string }) => void): void {
  const ctx = { addIssue };
  {
    const zones = zonesOf(spec.region);
    const inRegion = (zone: string, path: PropertyKey[]) => {
      if (!zones.includes(zone)) ctx.addIssue({ code: 'custom', path, message: `zone ${zone} is not in region ${spec.region} (its zones: ${zones.join(', ')})` });
    };
    const knownType = (name: string, path: PropertyKey[]) => {
      if (!instanceTypeByName(name)) ctx.addIssue({ code: 'custom', path, message: `unknown instance type ${JSON.stringify(name)} (not in Skiff's EC2 catalogue)` });
    };
    spec.events.forEach((e, i) => {
      if (e.at > spec.duration) {
        ctx.addIssue({ code: 'custom', path: ['events', i, 'at'], message: `at ${formatDuration(e.at)} is after the end of the scenario (duration ${formatDuration(spec.duration)})` });
      }
      if (e.insufficientCapacity) {
        inRegion(e.insufficientCapacity.zone, ['events', i, 'insufficientCapacity', 'zone']);
        knownType(e.insufficientCapacity.instanceType, ['events', i, 'insufficientCapacity', 'instanceType']);
      }
    });
    const names = new Map<string, number>();
    if (spec.duration > MAX_DURATION_SECONDS) {
      ctx.addIssue({ code: 'custom', path: ['duration'], message: `a simulation lasts at most ${formatDuration(MAX_DURATION_SECONDS)} (one year)` });
    }
    if (spec.start !== undefined && spec.start + (spec.duration + MAX_DURATION_SECONDS) * 1000 > LATEST_TIME_MS) {
      ctx.addIssue({ code: 'custom', path: ['start'], message: 'start must be before the year 9000' });
    }
    if (spec.start !== undefined && spec.start < EARLIEST_TIME_MS) {
      ctx.addIssue({ code: 'custom', path: ['start'], message: 'start must be at or after 1970-01-01T00:00:00Z' });
    }
    spec.nodes.forEach((n, i) => {
      if (n.createdAtSeconds < -MAX_DURATION_SECONDS) {
        ctx.addIssue({ code: 'custom', path: ['nodes', i, 'createdAt'], message: `a starting node was created at most ${formatDuration(MAX_DURATION_SECONDS)} before the start` });
      }
      knownType(n.instanceType, ['nodes', i, 'instanceType']);
      if (spec.start !== undefined && spec.start + n.createdAtSeconds * 1000 < EARLIEST_TIME_MS) {
        ctx.addIssue({ code: 'custom', path: ['nodes', i, 'createdAt'], message: 'a starting node is created at or after 1970-01-01T00:00:00Z' });
      }
      if (n.createdAtSeconds > 0) {
        ctx.addIssue({ code: 'custom', path: ['nodes', i, 'createdAt'], message: 'a starting node is created at or before the start: use zero or a negative offset such as -2h' });
      }
      const first = names.get(n.name);
      if (first !== undefined) ctx.addIssue({ code: 'custom', path: ['nodes', i, 'name'], message: `duplicate node name ${n.name} (also spec.nodes[${first}])` });
      else names.set(n.name, i);
      inRegion(n.zone, ['nodes', i, 'zone']);
    });
    const offerings = new Map<string, number>();
    spec.prices.forEach((p, i) => {
      knownType(p.instanceType, ['prices', i, 'instanceType']);
      if (p.zone !== undefined) inRegion(p.zone, ['prices', i, 'zone']);
    });
    spec.offerings.unavailable.forEach((o, i) => {
      knownType(o.instanceType, ['offerings', 'unavailable', i, 'instanceType']);
      if (o.zone !== undefined) inRegion(o.zone, ['offerings', 'unavailable', i, 'zone']);
    });
    spec.spotPrices.forEach((p, i) => {
      const key = `${p.instanceType}/${p.zone}`;
      const first = offerings.get(key);
      if (first !== undefined) ctx.addIssue({ code: 'custom', path: ['spotPrices', i], message: `duplicate spot price for ${p.instanceType} in ${p.zone} (also spec.spotPrices[${first}])` });
      else offerings.set(key, i);
      inRegion(p.zone, ['spotPrices', i, 'zone']);
      knownType(p.instanceType, ['spotPrices', i, 'instanceType']);
    });
  }
}

/** `spec` of a Scenario (durations already in seconds; still unresolved: start, event sources, order). */
export const scenarioSpecSchema = scenarioSpecShape.superRefine((spec, ctx) => checkScenarioSpec(spec, (issue) => ctx.addIssue(issue)));

/**
 * The `skiff.dev/v1alpha1` Scenario document. Validate with `{ error: manifestErrorMap }` for readable messages;
 * an `apply` event's manifest is validated like any manifest, so its problems read
 * `spec.events[3].apply.spec.template…`.
 */
export const scenarioSchema = z.strictObject({
  apiVersion: z.literal(SCENARIO_API_VERSION),
  kind: z.literal(SCENARIO_KIND),
  metadata: objectMetaSchema,
  spec: scenarioSpecSchema.prefault({}),
});

/** {@link scenarioSchema} without the checks across the spec's fields (`parseScenarioDocument` runs them itself). */
const scenarioShapeSchema = z.strictObject({
  apiVersion: z.literal(SCENARIO_API_VERSION),
  kind: z.literal(SCENARIO_KIND),
  metadata: objectMetaSchema,
  spec: scenarioSpecShape.prefault({}),
});

/** A validated Scenario document (before resolution into a {@link ScenarioSpec}). */
export type ScenarioDocument = z.output<typeof scenarioSchema>;

// ---- resolution -------------------------------------------------------------------------------------------------

/**
 * The spec used when a scenario has no Scenario document: start at `now` truncated to the minute, 1 hour,
 * us-west-2, default settings, no nodes, events or faults.
 * @param now current time, epoch ms
 * @example defaultScenarioSpec(Date.UTC(2026, 2, 2, 8, 0, 42)).startMs // Date.UTC(2026, 2, 2, 8, 0, 0)
 */
export function defaultScenarioSpec(now: number): ScenarioSpec {
  const spec = scenarioSpecSchema.parse({});
  return { ...resolveSpec(spec, now, []), events: [] };
}

/** Truncates epoch ms to the minute. */
function toMinute(ms: number): number {
  return Math.floor(ms / 60_000) * 60_000;
}

/** Resolves a parsed spec: start default, event sources, stable order by time. */
function resolveSpec(spec: z.output<typeof scenarioSpecSchema>, now: number, sources: readonly { event: ManifestSource; apply: ManifestSource }[]): ScenarioSpec {
  const events = spec.events.map((e, i): ScenarioEvent => {
    const source = sources[i]?.event ?? { file: '', line: 0 };
    const type = SCENARIO_EVENT_TYPES.find((t) => e[t] !== undefined) ?? 'scale';
    const base = { atSeconds: e.at, index: i, source };
    switch (type) {
      case 'apply': {
        const body = e.apply;
        if (body === undefined) throw new TypeError('unreachable: apply event without a manifest');
        return { ...base, type, apply: { ...body, source: sources[i]?.apply ?? source } as Manifest };
      }
      default:
        return { ...base, type, [type]: e[type] } as ScenarioEvent;
    }
  });
  const sorted = events.map((e, i) => ({ e, i })).sort((a, b) => a.e.atSeconds - b.e.atSeconds || a.i - b.i).map(({ e }) => e);
  return {
    startMs: spec.start ?? toMinute(now),
    durationSeconds: spec.duration,
    region: spec.region,
    settings: spec.settings,
    spotPrices: spec.spotPrices,
    prices: spec.prices.map((p) => ({ ...p, source: 'spec.prices' })),
    unavailableOfferings: spec.offerings.unavailable,
    nodes: spec.nodes,
    events: sorted,
    faults: spec.faults,
  };
}

/** A Scenario document, resolved. */
export interface ParsedScenario {
  /** `metadata.name`. */
  readonly name: string;
  readonly spec: ScenarioSpec;
  /** Where the Scenario document starts. */
  readonly source: ManifestSource;
}

/** True when a document declares `kind: Scenario` (whatever its apiVersion; the schema checks that). */
export function isScenarioObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === SCENARIO_KIND;
}

/**
 * Validates and resolves a Scenario document.
 * @param doc a YAML document (from `readManifestDocuments`) whose kind is Scenario
 * @param options `now` (epoch ms) for the default start
 * @returns the resolved scenario, or the issues with file, line and path (e.g. `spec.events[3].apply.spec…`); both
 *   when every field has its own shape and only the checks across fields fail (a zone outside the region, a duplicate
 *   node name), so the caller can still check the document against the other objects (the run is refused either way)
 * @example
 * const { documents } = readManifestDocuments(text, 'scenario.yaml');
 * const { scenario } = parseScenarioDocument(documents[0]!, { now: Date.now() });
 */
export function parseScenarioDocument(doc: ManifestDocument, options: { readonly now: number }): { readonly scenario?: ParsedScenario; readonly issues: readonly ValidationIssue[] } {
  const result = scenarioShapeSchema.safeParse(doc.value, { error: manifestErrorMap });
  const problems = withProtoKeyIssues(doc.value, result.success ? [] : zodIssuesToPathIssues(result.error.issues));
  if (!result.success || problems.length > 0) return { issues: locateIssues(doc, problems) };
  const across: { path: PropertyKey[]; message: string }[] = [];
  checkScenarioSpec(result.data.spec, (issue) => across.push({ path: ['spec', ...issue.path], message: issue.message }));
  const sources = result.data.spec.events.map((_, i) => ({
    event: { file: doc.file, line: doc.locate(['spec', 'events', i]).line },
    apply: { file: doc.file, line: doc.locate(['spec', 'events', i, 'apply']).line },
  }));
  return {
    scenario: { name: result.data.metadata.name, spec: resolveSpec(result.data.spec, options.now, sources), source: { file: doc.file, line: doc.line } },
    issues: locateIssues(doc, across),
  };
}
