/**
 * `karpenter.sh/v1` NodePool: schema, Karpenter's defaults and its validation rules.
 *
 * Sources: kubernetes-sigs/karpenter `pkg/apis/v1/nodepool.go` (defaults, CEL rules), `nodeclaim_validation.go`
 * (`ValidateRequirement`, `SupportedNodeSelectorOps`), `pkg/apis/crds/karpenter.sh_nodepools.yaml` (patterns,
 * bounds) and docs/karpenter-semantics.md#requirements, docs/karpenter-semantics.md#consolidation,
 * docs/karpenter-semantics.md#budgets. Objects are strict like kubectl's strict field validation:
 * an unknown field is an error.
 */
import * as z from 'zod';
import { LABEL_NODEPOOL, NORMALIZED_LABELS, restrictedLabelReason } from './labels.js';
import type { NodeSelectorRequirement, Operator, Taint } from './kubernetes.js';
import { NEVER, parseDuration } from './duration.js';
import {
  annotationsSchema,
  labelValueSchema,
  labelsSchema,
  objectMetaSchema,
  qualifiedNameSchema,
  requirementIntegerProblem,
  resourceListSchema,
  taintSchema,
} from './object-meta.js';

/** Requirement operators a NodePool accepts (`Gte`/`Lte` are Karpenter's recent additions). */
export const NODEPOOL_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt', 'Gte', 'Lte'] as const satisfies readonly Operator[];

/** Maximum number of requirements on a NodePool (CRD `maxItems: 100`). */
export const MAX_REQUIREMENTS = 100;
/** Maximum number of disruption budgets on a NodePool (CRD `maxItems: 50`). */
export const MAX_BUDGETS = 50;

/** Default `spec.template.spec.expireAfter` (Karpenter `nodepool.go`). */
export const DEFAULT_EXPIRE_AFTER = '720h';
/** Default `spec.disruption.consolidateAfter`. */
export const DEFAULT_CONSOLIDATE_AFTER = '0s';
/** Default `spec.disruption.consolidationPolicy`. */
export const DEFAULT_CONSOLIDATION_POLICY = 'WhenEmptyOrUnderutilized';
/** Default budget `nodes` (one budget of 10%). */
export const DEFAULT_BUDGET_NODES = '10%';

/** Consolidation policies Skiff supports. */
export const CONSOLIDATION_POLICIES = ['WhenEmpty', 'WhenEmptyOrUnderutilized'] as const;
/** A NodePool's consolidation policy. */
export type ConsolidationPolicy = (typeof CONSOLIDATION_POLICIES)[number];

/** Disruption reasons a budget may be limited to. */
export const BUDGET_REASONS = ['Underutilized', 'Empty', 'Drifted'] as const;
/** One of {@link BUDGET_REASONS}. */
export type BudgetReason = (typeof BUDGET_REASONS)[number];

/** `^([0-9]+(s|m|h))+$` — Karpenter's pattern for `terminationGracePeriod`. */
const KARPENTER_DURATION = /^([0-9]+(s|m|h))+$/;
/** Budget `duration`: hours and/or minutes only, optionally with Go's trailing `0s` (CRD pattern). */
const BUDGET_DURATION = /^(([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?$/;
/** The largest budget `nodes` count: 2^31 − 1, the int32 a Kubernetes IntOrString holds (Karpenter parses it with `intstr.Parse`). */
export const MAX_BUDGET_NODES = 2 ** 31 - 1;

/** Budget `nodes`: a percentage 0–100% or a non-negative integer (CRD pattern). */
const BUDGET_NODES = /^((100|[0-9]{1,2})%|[0-9]+)$/;
/** Cron macros Karpenter's schedule pattern accepts. */
const CRON_MACRO = /^@(annually|yearly|monthly|weekly|daily|midnight|hourly)$/;
/** One field of a 5-field cron expression (shape only). */
const CRON_FIELD = /^[0-9A-Za-z*?,\/\-#LW]+$/;

/**
 * Why a key may not be used in a NodePool (requirement key or template label), or undefined.
 * Deprecated beta labels are accepted (Karpenter normalises them); `karpenter.sh/nodepool` is set by Karpenter itself.
 */
export function nodePoolLabelProblem(key: string): string | undefined {
  if (key in NORMALIZED_LABELS) return undefined;
  if (key === LABEL_NODEPOOL) return `label ${key} is restricted: Karpenter sets it to the NodePool's name`;
  return restrictedLabelReason(key);
}

/** A Karpenter duration string (`30s`, `5m`, `1h30m`, integer amounts of s/m/h only). */
const karpenterDuration = z
  .string()
  .regex(KARPENTER_DURATION, { error: 'must be a duration of whole seconds, minutes or hours such as 30s, 5m, 1h30m or 720h' })
  .refine(inGoRange, { error: 'duration is out of range (Go durations stop at 2562047h)' });

/** A Karpenter `NillableDuration`: a duration, or `Never`. */
const nillableKarpenterDuration = z
  .string()
  .refine((v) => v === NEVER || KARPENTER_DURATION.test(v), {
    error: 'must be a duration of whole seconds, minutes or hours such as 30s, 5m or 720h, or Never',
  })
  .refine((v) => v === NEVER || inGoRange(v), { error: 'duration is out of range (Go durations stop at 2562047h)' });

/** False only for a well-formed duration too long for Go's time.Duration (Karpenter parses with it). */
function inGoRange(v: string): boolean {
  if (!KARPENTER_DURATION.test(v)) return true;
  try {
    parseDuration(v);
    return true;
  } catch {
    return false;
  }
}

/**
 * A NodePool requirement (`key`, `operator`, `values`, optional `minValues`) with Karpenter's rules: In needs ≥ 1
 * value; Gt/Lt/Gte/Lte exactly one non-negative integer; Exists/DoesNotExist no values; `minValues` 1–50 and, with
 * In, at most the number of values; the key may not be in a restricted label domain.
 */
export const nodePoolRequirementSchema = z
  .strictObject({
    key: qualifiedNameSchema.max(316),
    operator: z.enum(NODEPOOL_OPERATORS),
    values: z.array(labelValueSchema).optional(),
    minValues: z.int().min(1).max(50).optional(),
  })
  .superRefine((r, ctx) => {
    const problem = nodePoolLabelProblem(r.key);
    if (problem) ctx.addIssue({ code: 'custom', path: ['key'], message: problem });
    const values = r.values ?? [];
    switch (r.operator) {
      case 'In':
        if (values.length === 0) ctx.addIssue({ code: 'custom', path: ['values'], message: `operator In needs at least one value (key ${r.key})` });
        if (r.minValues !== undefined && r.minValues > values.length) {
          ctx.addIssue({
            code: 'custom',
            path: ['minValues'],
            message: `minValues ${r.minValues} exceeds the ${values.length} value(s) given for key ${r.key}`,
          });
        }
        break;
      case 'NotIn':
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) ctx.addIssue({ code: 'custom', path: ['values'], message: `operator ${r.operator} takes no values` });
        break;
      case 'Gt':
      case 'Lt':
      case 'Gte':
      case 'Lte':
        if (values.length !== 1) {
          ctx.addIssue({ code: 'custom', path: ['values'], message: `operator ${r.operator} needs exactly one non-negative integer value` });
        } else {
          const problem = requirementIntegerProblem(r.operator, values[0] ?? '', { negative: false });
          if (problem) ctx.addIssue({ code: 'custom', path: ['values', 0], message: problem });
        }
        break;
    }
  });

/** Template labels: label map whose keys must not be restricted (Karpenter's CRD rules on `template.metadata.labels`). */
const templateLabelsSchema = labelsSchema.superRefine((labels, ctx) => {
  for (const key of Object.keys(labels)) {
    const problem = nodePoolLabelProblem(key);
    if (problem) ctx.addIssue({ code: 'custom', path: [key], message: problem });
  }
  if (Object.keys(labels).length > 100) ctx.addIssue({ code: 'custom', message: 'at most 100 labels' });
});

/** `spec.template.spec.nodeClassRef`: which node class (e.g. an EC2NodeClass) nodes of this pool use. */
export const nodeClassRefSchema = z.strictObject({
  group: z.string().min(1),
  kind: z.string().min(1),
  name: z.string().min(1),
});

/**
 * One disruption budget. `nodes` is a percentage (`"10%"`) or a count (`"5"` or `5`), output as a string;
 * `schedule` (5-field cron or `@daily`-style macro, UTC, checked for shape only) and `duration` (`Xh`, `Ym`,
 * `XhYm`) must be set together; `reasons` ⊆ {Underutilized, Empty, Drifted}, empty or absent means all.
 */
export const budgetSchema = z
  .strictObject({
    nodes: z
      .union([z.string(), z.int().nonnegative()])
      .transform((v) => String(v))
      .refine((v) => BUDGET_NODES.test(v), { error: 'nodes must be a percentage between 0% and 100% (e.g. "10%") or a non-negative integer' })
      // Karpenter reads `nodes` as an IntOrString (`intstr.Parse`), whose integer is an int32.
      .refine((v) => !/^\d+$/.test(v) || Number(v) <= MAX_BUDGET_NODES, { error: `nodes must be at most ${MAX_BUDGET_NODES} (an int32, as Kubernetes' IntOrString holds it)` })
      .default(DEFAULT_BUDGET_NODES),
    reasons: z.array(z.enum(BUDGET_REASONS)).optional(),
    schedule: z
      .string()
      .refine(isCronShape, { error: 'schedule must be a 5-field cron expression (UTC) such as "0 1 * * *", or a macro such as @daily' })
      .optional(),
    duration: z
      .string()
      .refine((v) => BUDGET_DURATION.test(v), { error: 'duration must be hours and/or minutes only, such as 14h, 90m or 1h30m' })
      .optional(),
  })
  .superRefine((b, ctx) => {
    if (b.schedule !== undefined && b.duration === undefined) {
      ctx.addIssue({ code: 'custom', path: ['duration'], message: "'schedule' must be set with 'duration'" });
    }
    if (b.duration !== undefined && b.schedule === undefined) {
      ctx.addIssue({ code: 'custom', path: ['schedule'], message: "'duration' must be set with 'schedule'" });
    }
  });

/** True when `schedule` has the shape of a 5-field cron expression or a supported macro (no evaluation). */
export function isCronShape(schedule: string): boolean {
  const s = schedule.trim();
  if (CRON_MACRO.test(s)) return true;
  const fields = s.split(/\s+/);
  return fields.length === 5 && fields.every((f) => CRON_FIELD.test(f));
}

/** `spec.disruption`, with Karpenter's defaults: WhenEmptyOrUnderutilized, `0s`, one budget of 10%. */
export const disruptionSchema = z.strictObject({
  consolidationPolicy: z.enum(CONSOLIDATION_POLICIES).default(DEFAULT_CONSOLIDATION_POLICY),
  consolidateAfter: nillableKarpenterDuration.default(DEFAULT_CONSOLIDATE_AFTER),
  budgets: z
    .array(budgetSchema)
    .max(MAX_BUDGETS, { error: `at most ${MAX_BUDGETS} budgets` })
    .default(() => [{ nodes: DEFAULT_BUDGET_NODES }]),
});

/** `spec.template.spec`: the NodeClaim template. */
export const nodeClaimTemplateSpecSchema = z.strictObject({
  nodeClassRef: nodeClassRefSchema,
  requirements: z
    .array(nodePoolRequirementSchema)
    .max(MAX_REQUIREMENTS, { error: `at most ${MAX_REQUIREMENTS} requirements` })
    .default(() => []),
  taints: z.array(taintSchema).optional(),
  startupTaints: z.array(taintSchema).optional(),
  expireAfter: nillableKarpenterDuration.default(DEFAULT_EXPIRE_AFTER),
  terminationGracePeriod: karpenterDuration.optional(),
});

/** `spec.template`: labels/annotations for the nodes, and the NodeClaim template spec. */
export const nodePoolTemplateSchema = z.strictObject({
  metadata: z
    .strictObject({
      labels: templateLabelsSchema.optional(),
      annotations: annotationsSchema.optional(),
    })
    .optional(),
  spec: nodeClaimTemplateSpecSchema,
});

/** `spec` of a NodePool. */
export const nodePoolSpecSchema = z.strictObject({
  template: nodePoolTemplateSchema,
  disruption: disruptionSchema.prefault({}),
  limits: resourceListSchema.optional(),
  weight: z.int({ error: 'weight must be an integer between 1 and 100' }).min(1).max(100).optional(),
});

/**
 * A `karpenter.sh/v1` NodePool, defaults applied (`expireAfter: 720h`, disruption `WhenEmptyOrUnderutilized` /
 * `0s` / `[{nodes: "10%"}]`). Durations and quantities stay strings as written (`720h`, `800Gi`); parse them with
 * `parseNillableDuration` and `parseResourceList`.
 * @example nodePoolSchema.parse(yaml.parse(text)).spec.disruption.budgets // [{ nodes: '10%' }]
 */
export const nodePoolSchema = z.strictObject({
  apiVersion: z.literal('karpenter.sh/v1'),
  kind: z.literal('NodePool'),
  metadata: objectMetaSchema,
  spec: nodePoolSpecSchema,
  status: z.looseObject({}).optional(),
});

/** A parsed NodePool (see {@link nodePoolSchema}). */
export type NodePool = z.output<typeof nodePoolSchema>;
/** A parsed `spec.disruption`. */
export type Disruption = z.output<typeof disruptionSchema>;
/** A parsed disruption budget. */
export type Budget = z.output<typeof budgetSchema>;
/** A parsed NodePool requirement (assignable to {@link NodeSelectorRequirement}). */
export type NodePoolRequirement = z.output<typeof nodePoolRequirementSchema>;

// Compile-time checks that the parsed shapes fit the core's plain types.
const _requirementFits = (r: NodePoolRequirement): NodeSelectorRequirement => r;
const _taintFits = (t: z.output<typeof taintSchema>): Taint => t;
void _requirementFits;
void _taintFits;
