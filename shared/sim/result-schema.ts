/**
 * The Result contract: the one JSON object `skiff simulate --json` prints on stdout (docs/contracts.md#result).
 * It is public API: tools and benchmarks read it, so every field listed there is
 * required here, and nothing is renamed or removed without a major version.
 *
 * Objects are loose: an unknown field is accepted and kept (the contract says "a field may be added"), so a
 * reader built against this schema keeps working against a newer simulator. Times are ISO-8601 UTC strings
 * (`YYYY-MM-DDTHH:MM:SSZ` or `YYYY-MM-DDTHH:MM:SS.sssZ`), money is USD, prices are USD per hour.
 */
import * as z from 'zod';
import { CAPACITY_TYPES } from '../core/api/labels.js';
import { parseQuantity } from '../core/resources/quantity.js';

/** `YYYY-MM-DDTHH:MM:SSZ` with optional milliseconds, as `Date.prototype.toISOString` writes it. */
const UTC_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{3})?Z$/;

/** True when `s` names a real instant: the calendar fields survive a round trip through `Date` (no 30 February). */
function isCalendarTime(s: string): boolean {
  const ms = Date.parse(s);
  if (Number.isNaN(ms)) return false;
  const canonical = new Date(ms).toISOString();
  return canonical === (s.length === 20 ? `${s.slice(0, 19)}.000Z` : s);
}

/** True when `s` is a non-negative Kubernetes quantity (`1930m`, `6903Mi`, `17Gi`, `110`). */
function isQuantity(s: string): boolean {
  try {
    parseQuantity(s);
    return true;
  } catch {
    return false;
  }
}

/**
 * An instant as an ISO-8601 UTC string: `YYYY-MM-DDTHH:MM:SSZ` or `YYYY-MM-DDTHH:MM:SS.sssZ` (exactly three
 * fraction digits, as `toISOString` writes them). Offsets other than `Z` and impossible dates are rejected.
 * @example UtcTimeSchema.parse('2026-03-02T08:00:00Z')
 */
export const UtcTimeSchema = z
  .string()
  .regex(UTC_TIME, 'expected an ISO-8601 UTC time, YYYY-MM-DDTHH:MM:SS(.sss)Z')
  .refine(isCalendarTime, 'not a valid calendar date and time');

/**
 * A Kubernetes resource quantity string (`1930m`, `6903Mi`, `8`), non-negative; the grammar of
 * k8s.io/apimachinery `pkg/api/resource/quantity.go`.
 */
export const QuantityStringSchema = z.string().refine(isQuantity, 'expected a non-negative Kubernetes quantity, e.g. "1930m" or "6903Mi"');

/** A count: a non-negative safe integer. */
const Count = z.number().int().nonnegative();

/** A non-negative finite number of US dollars (or USD per hour, where the field says so). */
const Usd = z.number().nonnegative();

/** `spot`, `on-demand` or `reserved` (Karpenter v1's `karpenter.sh/capacity-type` values). */
const CapacityTypeSchema = z.enum(CAPACITY_TYPES);

/**
 * Why a NodeClaim was deleted. Mirrors `DeletionReason` in `shared/core/api/nodeclaim.ts`; the first four are
 * Karpenter's disruption reasons, the rest Skiff's lifecycle and interruption outcomes.
 */
export const DeletionReasonSchema = z.enum([
  'Empty',
  'Underutilized',
  'Drifted',
  'Expired',
  'Interrupted',
  'RegistrationTimeout',
  'LaunchFailed',
  'InstanceTerminated',
  // Added: a user deleted the Node or the NodeClaim (a graceful termination).
  'NodeDeleted',
  'NodeClaimDeleted',
]);

/** A node taint as Kubernetes writes it (`value` optional). */
const TaintSchema = z.looseObject({
  key: z.string().min(1),
  value: z.string().optional(),
  effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']),
});

/** A node selector requirement (`key operator values`) with Karpenter's optional `minValues`. */
const RequirementSchema = z.looseObject({
  key: z.string().min(1),
  operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt', 'Gte', 'Lte']),
  values: z.array(z.string()).optional(),
  minValues: z.number().int().positive().optional(),
});

/**
 * One NodeClaim ever created, failed launches included. `instanceType`, `capacityType`, `zone` and `price` are
 * null until (or unless) an instance was launched; the lifecycle times are null until reached.
 */
export const ResultNodeClaimSchema = z.looseObject({
  name: z.string().min(1),
  nodePool: z.string().min(1),
  instanceType: z.string().min(1).nullable(),
  capacityType: CapacityTypeSchema.nullable(),
  zone: z.string().min(1).nullable(),
  /** Price of the launched offering, USD per hour. */
  price: Usd.nullable(),
  labels: z.record(z.string(), z.string()),
  /** The NodePool template's annotations it carries (added; absent in Results written before). */
  annotations: z.record(z.string(), z.string()).optional(),
  taints: z.array(TaintSchema),
  /** Resource name → Kubernetes quantity string, e.g. `{cpu: "1930m", memory: "6903Mi", pods: "29"}`. */
  allocatable: z.record(z.string(), QuantityStringSchema),
  requirements: z.array(RequirementSchema),
  createdAt: UtcTimeSchema,
  launchedAt: UtcTimeSchema.nullable(),
  registeredAt: UtcTimeSchema.nullable(),
  initializedAt: UtcTimeSchema.nullable(),
  deletedAt: UtcTimeSchema.nullable(),
  deletionReason: DeletionReasonSchema.nullable(),
  /** The EC2 error code of the failed launch (e.g. `InsufficientInstanceCapacity`), else null. */
  launchError: z.string().min(1).nullable(),
  /**
   * True for the NodeClaim of a node the scenario started with (`spec.nodes`, a snapshot's Nodes), whatever its
   * `createdAt`; false for one Skiff launched during the run. An addition: absent in Results written before it, where
   * {@link existedAtStart} reads `createdAt` before the start instead.
   */
  existedAtStart: z.boolean().optional(),
  /**
   * For a NodeClaim still live at the end that is drifted then: why, as the `Drifted` disruption's message says it
   * (`NodeClassDrifted: EC2NodeClass default changed since the node was launched`). A drift the run did not get to
   * replace: blocked by a do-not-disrupt pod or a PDB, held by a budget, or found too late. Absent otherwise, and in
   * Results written before it was added.
   */
  driftedAtEnd: z.string().min(1).optional(),
});

/**
 * Whether a Result NodeClaim belongs to a node the scenario started with rather than one launched during the run: its
 * `existedAtStart`, or for a Result written before that field, `createdAt` before the run's start (a starting node
 * whose `createdAt` was left at the start is then misread as launched).
 * @param startMs the run's start, epoch ms (UTC)
 */
export function existedAtStart(claim: Pick<z.infer<typeof ResultNodeClaimSchema>, 'createdAt' | 'existedAtStart'>, startMs: number): boolean {
  return claim.existedAtStart ?? Date.parse(claim.createdAt) < startMs;
}

/**
 * One Node that ever existed; `nodeClaim` is null for a node Skiff does not own (e.g. a scenario's `nodes`).
 * `labels` are the Node's labels at the end (or when it was deleted), registration's included (a field Skiff adds).
 */
export const ResultNodeSchema = z.looseObject({
  name: z.string().min(1),
  nodeClaim: z.string().min(1).nullable(),
  instanceType: z.string().min(1),
  zone: z.string().min(1),
  capacityType: CapacityTypeSchema,
  labels: z.record(z.string(), z.string()),
  /** The Node's annotations at the end (or when it was deleted), registration's included (added; absent in Results written before). */
  annotations: z.record(z.string(), z.string()).optional(),
  createdAt: UtcTimeSchema,
  deletedAt: UtcTimeSchema.nullable(),
  /**
   * The price of the Node's instance, USD per hour (what `cost` counts for it); null when no simulated instance backs
   * it. For a node Skiff does not own (`nodeClaim` null) this is the only price the Result gives. An addition: absent
   * in Results written before it.
   */
  hourlyUSD: Usd.nullable().optional(),
});

/** One CreateFleet call: what it was allowed to choose from and how it ended (`ok` or the EC2 error code). */
export const ResultLaunchAttemptSchema = z.looseObject({
  at: UtcTimeSchema,
  nodeClaim: z.string().min(1),
  capacityTypes: z.array(CapacityTypeSchema),
  /** How many instance types the request offered (a count, not the list). */
  instanceTypes: Count,
  /** The instance types the request offered, sorted (an addition; absent in Results written before it). */
  instanceTypeNames: z.array(z.string().min(1)).optional(),
  zones: z.array(z.string().min(1)),
  /** `"ok"` or an EC2 error code such as `InsufficientInstanceCapacity`. */
  result: z.string().min(1),
});

/** One pod ever created. `owner` is `"Kind/name"` of its controller, or null for a bare pod. */
export const ResultPodSchema = z.looseObject({
  namespace: z.string().min(1),
  name: z.string().min(1),
  owner: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9]*\/[^/]+$/, 'expected "Kind/name"')
    .nullable(),
  createdAt: UtcTimeSchema,
  deletedAt: UtcTimeSchema.nullable(),
  node: z.string().min(1).nullable(),
  nodeClaim: z.string().min(1).nullable(),
  firstPendingAt: UtcTimeSchema.nullable(),
  scheduledAt: UtcTimeSchema.nullable(),
  /** How many times this pod was evicted. */
  evictions: Count,
});

/** A pod still pending at the end, with why each NodePool cannot serve it (NodePool name → reason). */
export const ResultUnschedulableSchema = z.looseObject({
  pod: z.string().regex(/^[^/]+\/[^/]+$/, 'expected "namespace/name"'),
  since: UtcTimeSchema,
  reason: z.string(),
  nodePools: z.record(z.string(), z.string()),
});

/** One disruption command (consolidation, drift, expiration, interruption) and how far it got. */
export const ResultDisruptionSchema = z.looseObject({
  at: UtcTimeSchema,
  command: z.string().min(1),
  nodeClaim: z.string().min(1),
  nodePool: z.string().min(1),
  reason: z.string().min(1),
  decision: z.enum(['delete', 'replace']),
  /**
   * The replacement NodeClaim's name when `decision` is `replace`, else null. For `Interrupted` (decided by the
   * interruption handler, not by a consolidation), the NodeClaim launched at once for the displaced pods; null when
   * those pods fit capacity that already existed, or when the handler stopped between the drain and the launch and
   * the provisioner placed the pods from their own events (no NodeClaim is then linked to the interruption).
   */
  replacement: z.string().min(1).nullable(),
  /**
   * Every replacement NodeClaim the command launched, in order (`replacement` is the first); empty for a delete. A
   * drift whose pods need two new nodes lists both. Optional: Results written before it was added lack it.
   */
  replacements: z.array(z.string().min(1)).optional(),
  /**
   * The disruption method that chose it: `emptiness`, `drift`, `multi-node-consolidation`, `single-node-consolidation`
   * (Karpenter's), Skiff's `repack-consolidation` (k nodes by m cheaper ones) and `split-consolidation` (one node by
   * several cheaper ones), or `expiration` / `interruption` for a forceful disruption. An addition: absent in Results
   * written before it.
   */
  method: z.string().min(1).optional(),
  drainStartedAt: UtcTimeSchema.nullable(),
  completedAt: UtcTimeSchema.nullable(),
  /**
   * The NodePool's disruption budget the controller's validation let it start under (`NodeClaimDisruption.budgets`):
   * its managed, initialized nodes, how many were already being disrupted or NotReady, what the most restrictive
   * active budget allowed in total (null: none active, unlimited), what was left (`allowed − disrupting`, floored at 0)
   * and that budget's index in `spec.disruption.budgets`. Null for a forceful disruption (budgets do not limit it).
   * An addition: absent in Results written before it.
   */
  budget: z
    .looseObject({ nodes: Count, disrupting: Count, allowed: Count.nullable(), remaining: Count.nullable(), budget: z.number().int().nonnegative().nullable() })
    .nullable()
    .optional(),
});

/**
 * A Kubernetes Event Skiff would write. `object` is `"Kind/namespace/name"`; a cluster-scoped object (Node,
 * NodePool, NodeClaim) may be written `"Kind/name"` or with an empty namespace, `"Kind//name"`.
 */
export const ResultEventSchema = z.looseObject({
  at: UtcTimeSchema,
  type: z.enum(['Normal', 'Warning']),
  reason: z.string().min(1),
  object: z.string().regex(/^[A-Za-z][A-Za-z0-9]*\/(?:[^/]*\/)?[^/]+$/, 'expected "Kind/namespace/name"'),
  message: z.string(),
});

/**
 * What the simulation's independent observer counted (each a non-negative count): a budget exceeded at any
 * instant, a PDB broken by an eviction, a do-not-disrupt pod evicted voluntarily, a NodePool limit exceeded,
 * a second instance for the same NodeClaim or pending pods, an instance left running with no NodeClaim, a pod
 * bound to a node that does not satisfy it or lacks room, `evictionLoops`: a pod evicted again from the draining node
 * it was put back on, and `churn`: a replace loop (a NodeClaim disrupted as Drifted whose replacement is itself
 * drifted, a Drifted replacement replaced as Drifted again with no change to its NodePool or EC2NodeClass in between,
 * or a consolidation undone: a replacement consolidated again on its own, with neither spec nor workload changed, into
 * an instance costing at least what the nodes it replaced cost).
 */
export const ViolationsSchema = z.looseObject({
  budget: Count,
  pdb: Count,
  doNotDisrupt: Count,
  limits: Count,
  duplicateLaunches: Count,
  leakedInstances: Count,
  placement: Count,
  /** Replace loops (added after v1 of the contract; every Result since carries it). */
  churn: Count,
  /**
   * Turns of an eviction loop: pods a drain evicted from a node they were bound to after its drain began (added; a
   * Result written before it has no such field).
   */
  evictionLoops: Count.optional(),
});

/** Cost of the run: `totalUSD` in USD over the whole run; `peakHourlyUSD` and `finalHourlyUSD` in USD per hour. */
export const CostSchema = z.looseObject({
  /** Total spend over the simulated run, USD. */
  totalUSD: Usd,
  /** Highest fleet price at any instant, USD per hour. */
  peakHourlyUSD: Usd,
  /** Fleet price at the end of the run, USD per hour. */
  finalHourlyUSD: Usd,
});

/**
 * Pods that were pending during the run, not only those still pending at the end: a pod counts from `firstPendingAt`
 * (kube-scheduler marked it Unschedulable) until it was scheduled or deleted, or the run ended.
 */
export const PendingFiguresSchema = z.looseObject({
  /** How many pods were pending at some point. */
  pods: Count,
  /** The most pods pending at one instant. */
  peak: Count,
  /** When that peak was first reached; null when no pod was pending. */
  peakAt: UtcTimeSchema.nullable(),
  /** Σ over pods of the time each was pending inside the run, in pod-minutes. */
  podMinutes: z.number().nonnegative(),
  /** The pod that waited longest (`namespace/name`), how long in seconds, and whether it was still pending at the end. */
  longest: z
    .looseObject({
      pod: z.string().regex(/^[^/]+\/[^/]+$/, 'expected "namespace/name"'),
      since: UtcTimeSchema,
      seconds: z.number().nonnegative(),
      stillPending: z.boolean(),
    })
    .nullable(),
});

/**
 * The answer in money of a run that starts with nodes (a cluster snapshot): the fleet's price at the start and once
 * Skiff's disruptions settled (USD per hour), the saving, each disruption in order with its method and the budget
 * that allowed it, the evictions, and the pods pending at the start (`shared/sim/what-if.ts`). An addition: present
 * only when the run started with nodes.
 */
export const WhatIfSchema = z.looseObject({
  /** The fleet's price at the start, USD per hour (every starting node, managed or not). */
  hourlyUSDAtStart: Usd,
  /** The fleet's price at `settledAt`, USD per hour (replacements and nodes launched for pending pods included). */
  hourlyUSDAfter: Usd,
  /** When the last disruption finished; the end of the run when one was still going or none happened. */
  settledAt: UtcTimeSchema,
  /** True when every disruption finished within the run (or there was none). */
  settled: z.boolean(),
  /** `hourlyUSDAtStart − hourlyUSDAfter`, USD per hour (negative when the fleet grew, e.g. for pending pods). */
  savingHourlyUSD: z.number(),
  /** The saving as a percentage of `hourlyUSDAtStart`, one decimal. */
  savingPercent: z.number(),
  /** The saving over a month of 730 hours, USD. */
  savingMonthlyUSD: z.number(),
  /**
   * Of `hourlyUSDAfter`, the NodeClaims the provisioner launched in the run (for pods pending at the start, created
   * since, or evicted with no room elsewhere) still up at `settledAt`: USD per hour, and how many. A saving that comes
   * out small or negative is often this growth. An addition.
   */
  newCapacity: z.looseObject({ hourlyUSD: z.number().nonnegative(), nodeClaims: Count }).optional(),
  /** Nodes at the start: all, those a NodePool of the scenario manages, the others (never disrupted). */
  nodesAtStart: z.looseObject({ total: Count, managed: Count, unmanaged: Count }),
  /** Nodes live at `settledAt`. */
  nodesAfter: Count,
  /** Every disruption, in start order. */
  actions: z.array(
    z.looseObject({
      order: z.number().int().positive(),
      at: UtcTimeSchema,
      nodeClaim: z.string(),
      node: z.string().nullable(),
      nodePool: z.string(),
      instanceType: z.string().nullable(),
      capacityType: CapacityTypeSchema.nullable(),
      /** The disrupted node's price, USD per hour. */
      hourlyUSD: Usd.nullable(),
      reason: z.string(),
      /** `emptiness`, `single-node-consolidation`, `multi-node-consolidation`, `repack-consolidation`, `drift`, `expiration`, `interruption`. */
      method: z.string(),
      decision: z.enum(['delete', 'replace']),
      replacements: z.array(z.looseObject({ nodeClaim: z.string(), instanceType: z.string().nullable(), capacityType: CapacityTypeSchema.nullable(), hourlyUSD: Usd.nullable() })),
      /** The budget that allowed it, in words (or that budgets do not apply). */
      budget: z.string(),
      /** That budget: its index in the NodePool's `spec.disruption.budgets`, the rule in words, how many nodes it allowed at once of the NodePool's initialized nodes then; null when none applied. */
      budgetRule: z
        .looseObject({
          index: z.number().int().nonnegative(),
          rule: z.string(),
          allowed: Count,
          nodes: Count,
          /** Of `nodes`, those already being disrupted or NotReady when it started (an addition). */
          disrupting: Count.optional(),
          /** `allowed − disrupting`, floored at 0: how many more the budget let start then (an addition). */
          remaining: Count.optional(),
        })
        .nullable(),
      /** Pods evicted from it. */
      evictions: Count,
      completedAt: UtcTimeSchema.nullable(),
    }),
  ),
  /** Evictions of the run: the total and by owner (`Kind/name`, or `Pod/namespace/name` for a bare pod), most first. */
  evictions: z.looseObject({ total: Count, byOwner: z.array(z.looseObject({ owner: z.string(), count: Count })) }),
  /** Pods live and unbound at the start: why (Skiff's first diagnosis) and what became of them. */
  pendingAtStart: z.array(z.looseObject({ pod: z.string(), owner: z.string().nullable(), reason: z.string(), outcome: z.string(), nodePools: z.record(z.string(), z.string()) })),
});

/** The six fault kinds of `spec.faults`, as numbers (probabilities, or invocations for `concurrentInvocations`). */
const faultFields = {
  duplicateDelivery: z.number(),
  concurrentInvocations: z.number(),
  crashAfterSideEffect: z.number(),
  ec2Throttle: z.number(),
  dynamodbThrottle: z.number(),
  apiServerErrors: z.number(),
};

/**
 * The faults a run injected (`spec.faults`, `shared/sim/faults.ts`), present only when any was configured: `configured`
 * is `spec.faults` as applied; `injected` counts what was drawn over the run — redelivered messages, invocations run
 * overlapped, crashes, throttled EC2 calls, throttled DynamoDB calls, API-server 503s. A run whose figures look fine
 * says so under faults, and a run whose figures look bad shows what it withstood.
 */
export const ResultFaultsSchema = z.looseObject({ configured: z.looseObject(faultFields), injected: z.looseObject(faultFields) });

/**
 * Launched-then-unused capacity (`result-waste.ts`): NodeClaims launched during the run whose node never had a pod
 * (DaemonSet pods aside) and that ended, what they ran for and cost, and why they ended.
 */
export const WastedLaunchesSchema = z.looseObject({
  /** How many such NodeClaims. */
  nodeClaims: Count,
  /** Σ of the hours each ran inside the run, from launch to deletion. */
  instanceHours: z.number().nonnegative(),
  /** What those hours cost, USD. */
  costUSD: Usd,
  /** `deletionReason` (or `launchError` of a failed record) → how many. */
  byReason: z.record(z.string(), Count),
});

/**
 * The whole Result object of `simulate --json`.
 * @example
 * const result = ResultSchema.parse(JSON.parse(stdout));
 * console.log(result.cost.totalUSD, result.violations.budget);
 */
export const ResultSchema = z.looseObject({
  /** The Scenario's `metadata.name`. */
  scenario: z.string(),
  start: UtcTimeSchema,
  end: UtcTimeSchema,
  /** The `--seed` the run's faults and generated names were drawn with (simulated spot prices are fixed per instance type and zone). */
  seed: z.number().int(),
  /**
   * The consolidation moves the run made (`skiff simulate --consolidation`): `skiff`, Karpenter's and Skiff's own, or
   * `karpenter`, Karpenter's only. Absent in Results written before the setting existed.
   */
  consolidation: z.enum(['skiff', 'karpenter']).optional(),
  /**
   * How the run's provisioner planned (`skiff simulate --provisioning`): `skiff`, plans that survive kube-scheduler's
   * binding, or `karpenter`, Karpenter's own placement only. Absent in Results written before the setting existed.
   */
  provisioning: z.enum(['skiff', 'karpenter']).optional(),
  nodeClaims: z.array(ResultNodeClaimSchema),
  nodes: z.array(ResultNodeSchema),
  launchAttempts: z.array(ResultLaunchAttemptSchema),
  pods: z.array(ResultPodSchema),
  unschedulable: z.array(ResultUnschedulableSchema),
  disruptions: z.array(ResultDisruptionSchema),
  events: z.array(ResultEventSchema),
  violations: ViolationsSchema,
  cost: CostSchema,
  /** Pods pending during the run (see {@link PendingFiguresSchema}); optional: Results written before it lack it. */
  pending: PendingFiguresSchema.optional(),
  /** The answer in money of a run that started with nodes (see {@link WhatIfSchema}); absent otherwise. */
  whatIf: WhatIfSchema.optional(),
  /** Launched-then-unused capacity (see {@link WastedLaunchesSchema}); optional: Results written before it lack it. */
  wastedLaunches: WastedLaunchesSchema.optional(),
  /** The faults configured and injected (see {@link ResultFaultsSchema}); absent when the run had none. */
  faults: ResultFaultsSchema.optional(),
});

/** A parsed Result (see {@link ResultSchema}). */
export type Result = z.infer<typeof ResultSchema>;
/** One entry of `Result.nodeClaims`. */
export type ResultNodeClaim = z.infer<typeof ResultNodeClaimSchema>;
/** One entry of `Result.nodes`. */
export type ResultNode = z.infer<typeof ResultNodeSchema>;
/** One entry of `Result.launchAttempts`. */
export type ResultLaunchAttempt = z.infer<typeof ResultLaunchAttemptSchema>;
/** One entry of `Result.pods`. */
export type ResultPod = z.infer<typeof ResultPodSchema>;
/** One entry of `Result.unschedulable`. */
export type ResultUnschedulable = z.infer<typeof ResultUnschedulableSchema>;
/** One entry of `Result.disruptions`. */
export type ResultDisruption = z.infer<typeof ResultDisruptionSchema>;
/** One entry of `Result.events`. */
export type ResultEvent = z.infer<typeof ResultEventSchema>;
/** `Result.violations`. */
export type Violations = z.infer<typeof ViolationsSchema>;
/** `Result.wastedLaunches`. */
export type WastedLaunches = z.infer<typeof WastedLaunchesSchema>;
/** `Result.pending`. */
export type PendingFigures = z.infer<typeof PendingFiguresSchema>;
/** `Result.whatIf`. */
export type WhatIf = z.infer<typeof WhatIfSchema>;
/** `Result.cost` (USD and USD per hour). */
export type Cost = z.infer<typeof CostSchema>;
/** `Result.nodeClaims[].deletionReason` when not null. */
export type ResultDeletionReason = z.infer<typeof DeletionReasonSchema>;
