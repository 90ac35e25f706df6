/**
 * Schemas shared by every manifest kind: object metadata, label keys and values, quantities and resource maps,
 * label selectors and taints. Formats follow k8s.io/apimachinery `pkg/util/validation` (qualified names,
 * label values, DNS subdomains) and `pkg/api/resource` (quantities).
 */
import * as z from 'zod';
import { parseQuantity } from '../resources/quantity.js';
import type { TaintEffect } from './kubernetes.js';
import { ownValue } from './labels.js';

/** A DNS-1123 subdomain: what most object names must be (lowercase, `-` and `.`, at most 253 characters). */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** The name part of a qualified name (at most 63 characters). */
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
/** A label value (may be empty, at most 63 characters). */
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/**
 * Why `key` is not a Kubernetes qualified name (`[prefix/]name`, prefix a DNS subdomain ≤ 253, name ≤ 63), or
 * undefined when it is one. Used for label, annotation, taint and requirement keys.
 */
export function qualifiedNameProblem(key: string): string | undefined {
  const slash = key.lastIndexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) {
    return `${JSON.stringify(key)}: the prefix before "/" must be a lowercase DNS subdomain`;
  }
  if (name.length === 0 || name.length > 63 || !QUALIFIED_NAME_PART.test(name)) {
    return `${JSON.stringify(key)}: must be a qualified name (alphanumerics, "-", "_" or ".", starting and ending with an alphanumeric, at most 63 characters, optionally prefixed by a DNS subdomain and "/")`;
  }
  return undefined;
}

/** A label, annotation or taint key: a Kubernetes qualified name. */
export const qualifiedNameSchema = z.string().superRefine((key, ctx) => {
  const problem = qualifiedNameProblem(key);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** A label value: empty, or at most 63 alphanumerics, `-`, `_`, `.`, starting and ending alphanumeric. */
export const labelValueSchema = z
  .string({ error: (iss) => (iss.input === undefined ? undefined : 'label values must be strings (quote numbers and booleans)') })
  .max(63, { error: 'a label value must be at most 63 characters' })
  .regex(LABEL_VALUE, { error: 'a label value must consist of alphanumerics, "-", "_" or ".", starting and ending with an alphanumeric' });

/** The largest magnitude a `Gt`/`Lt`/`Gte`/`Lte` requirement value may have: 2^53 − 1, the last integer Skiff's bounds hold exactly. */
export const MAX_REQUIREMENT_INTEGER = Number.MAX_SAFE_INTEGER;

/** The largest 64-bit signed integer: CEL's `int()` (Karpenter's NodePool CRD rule) and Go's `strconv.ParseInt` stop here. */
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Why `value` cannot be the value of a `Gt`, `Lt`, `Gte` or `Lte` requirement, or undefined. It must be a decimal
 * integer (non-negative in a NodePool: Karpenter's CRD rule `int(x.values[0]) >= 0`) whose magnitude is at most
 * {@link MAX_REQUIREMENT_INTEGER}. Past 2^63 − 1 Karpenter's CRD rule fails (`int()` overflows) and kube-scheduler
 * cannot parse a pod's value (`strconv.ParseInt(v, 10, 64)`, so the pod matches no node); between 2^53 and 2^63 − 1
 * Kubernetes accepts it, but Skiff's requirement bounds (JavaScript numbers) would round it. No instance label comes near.
 * @param operator the requirement's operator, to name it
 * @param value the requirement's one value
 * @param options `negative`: whether a negative integer is allowed (a pod's node affinity) or not (a NodePool)
 * @example requirementIntegerProblem('Gt', '99999999999999999999999', { negative: false }) // 'operator Gt needs … 64-bit …'
 * @example requirementIntegerProblem('Gt', '8', { negative: false }) // undefined
 */
export function requirementIntegerProblem(operator: string, value: string, options: { readonly negative: boolean }): string | undefined {
  const kind = options.negative ? 'an integer' : 'a non-negative integer';
  if (!(options.negative ? /^-?[0-9]+$/ : /^[0-9]+$/).test(value)) return `operator ${operator} needs ${kind}, got ${JSON.stringify(value)}`;
  const n = BigInt(value);
  const magnitude = n < 0n ? -n : n;
  if (magnitude <= BigInt(MAX_REQUIREMENT_INTEGER)) return undefined;
  const range = options.negative ? `between -${MAX_REQUIREMENT_INTEGER} and ${MAX_REQUIREMENT_INTEGER}` : `of at most ${MAX_REQUIREMENT_INTEGER}`;
  const why =
    magnitude > INT64_MAX
      ? options.negative
        ? 'it does not fit in a 64-bit integer, so kube-scheduler cannot parse it and the pod would match no node'
        : "it does not fit in a 64-bit integer, so Karpenter's NodePool CRD rejects it (its rule reads the value with int())"
      : `Kubernetes accepts it (up to ${INT64_MAX}), but Skiff compares requirement bounds exactly only up to 2^53 − 1, and no instance label comes near it`;
  return `operator ${operator} needs ${kind} ${range}, got ${JSON.stringify(value)}: ${why}`;
}

/**
 * The one key a JavaScript object cannot hold as an ordinary key: assigning it replaces the object's prototype. A
 * YAML mapping read by the `yaml` library keeps it as an own key, but zod's records skip it without a word, so every
 * record of the manifests is made with {@link ownKeysRecord}, which reports it instead.
 */
export const PROTO_KEY = '__proto__';

/** The message for a {@link PROTO_KEY} key that the map's own key rule would accept (e.g. an AWS tag key). */
export const PROTO_KEY_MESSAGE = `the key ${JSON.stringify(PROTO_KEY)} is not supported: Skiff would lose it (it replaces a JavaScript object's prototype)`;

/**
 * `z.record(key, value)` that never drops a key: an own `__proto__` key, which zod's record skips silently, is
 * checked with the record's key schema (so a label key `__proto__` gets the usual qualified-name message) or, when
 * that schema accepts it, refused with {@link PROTO_KEY_MESSAGE}. Other keys, `constructor` and `prototype` included,
 * are ordinary keys. When `__proto__` is refused, the record's other entries are not checked (zod stops there).
 * @param key the schema every key must satisfy
 * @param value the schema of every value
 * @example ownKeysRecord(qualifiedNameSchema, labelValueSchema).safeParse(JSON.parse('{"__proto__": "x"}')).success // false
 */
export function ownKeysRecord<K extends z.core.$ZodRecordKey, V extends z.core.SomeType>(key: K, value: V) {
  const record = z.record(key, value);
  const schema = z
    .unknown()
    .superRefine((input, ctx) => {
      if (input === null || typeof input !== 'object' || !Object.hasOwn(input, PROTO_KEY)) return;
      const checked = z.safeParse(key, PROTO_KEY);
      const problems = checked.success ? [{ path: [], message: PROTO_KEY_MESSAGE }] : checked.error.issues;
      for (const problem of problems) ctx.addIssue({ code: 'custom', path: [PROTO_KEY, ...problem.path], message: problem.message, params: { atKey: true } });
    })
    .pipe(record);
  OWN_KEYS_RECORDS.add(record);
  return schema;
}

/**
 * The plain records {@link ownKeysRecord} schemas pipe into (what a refinement of the wrapper still pipes into): the
 * shape a JSON Schema of the map has. The wrapper's input side is `unknown`, which would give a CRD an untyped map;
 * `scripts/build-crds.ts` reads this.
 */
export const OWN_KEYS_RECORDS = new WeakSet<object>();

/**
 * A label map (`key: value`); keys are qualified names, values label values.
 * @example labelsSchema.parse({ 'workload-type': 'general' })
 */
export const labelsSchema = ownKeysRecord(qualifiedNameSchema, labelValueSchema);

/** An annotation map; keys are qualified names, values any string, at most 256 KiB of keys and values together. */
export const annotationsSchema = ownKeysRecord(
    qualifiedNameSchema,
    z.string({ error: (iss) => (iss.input === undefined ? undefined : 'annotation values must be strings (quote numbers and booleans)') }),
  )
  .refine((a) => annotationsSize(a) <= TOTAL_ANNOTATION_SIZE_LIMIT_BYTES, {
    error: (iss) => `annotations total ${annotationsSize(iss.input as Record<string, string>)} bytes; the API server allows at most ${TOTAL_ANNOTATION_SIZE_LIMIT_BYTES} (256 KiB)`,
  });

/**
 * The API server's limit on an object's annotations, keys and values together: 256 KiB
 * (`k8s.io/apimachinery/pkg/api/validation` `TotalAnnotationSizeLimitB`).
 */
export const TOTAL_ANNOTATION_SIZE_LIMIT_BYTES = 256 * 1024;

/** Bytes of annotation keys plus values, UTF-8, as the API server counts them. */
function annotationsSize(annotations: Readonly<Record<string, string>>): number {
  const utf8 = new TextEncoder();
  let total = 0;
  for (const [k, v] of Object.entries(annotations)) total += utf8.encode(k).length + utf8.encode(v).length;
  return total;
}

/** An object name: a DNS-1123 subdomain. */
export const objectNameSchema = z
  .string()
  .min(1, { error: 'a name must not be empty' })
  .max(253, { error: 'a name must be at most 253 characters' })
  .regex(DNS_SUBDOMAIN, { error: 'a name must be a lowercase DNS subdomain (a-z, 0-9, "-" and ".", starting and ending with an alphanumeric)' });

/** The metadata fields every Kubernetes object may carry, besides `name` and `namespace`. */
const commonMetaShape = {
  generateName: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: z.int().optional(),
  selfLink: z.string().optional(),
  creationTimestamp: z
    .string()
    .nullable()
    .optional()
    .transform((v) => v ?? undefined),
  deletionTimestamp: z.string().optional(),
  deletionGracePeriodSeconds: z.int().optional(),
  labels: labelsSchema.optional(),
  annotations: annotationsSchema.optional(),
  ownerReferences: z
    .array(
      z.looseObject({
        apiVersion: z.string().optional(),
        kind: z.string(),
        name: z.string(),
        uid: z.string().optional(),
        controller: z.boolean().optional(),
        blockOwnerDeletion: z.boolean().optional(),
      }),
    )
    .optional(),
  finalizers: z.array(z.string()).optional(),
  managedFields: z.array(z.unknown()).optional(),
};

/**
 * Metadata of a cluster-scoped object (NodePool, EC2NodeClass): `name` is required; the usual ObjectMeta fields are
 * accepted, anything else is an unknown-field error (kubectl's strict field validation).
 */
export const objectMetaSchema = z.strictObject({
  name: objectNameSchema,
  namespace: z.string().optional(),
  ...commonMetaShape,
});

/**
 * Metadata of a namespaced object (Pod, Deployment, PDB, …): like {@link objectMetaSchema}, with `namespace`
 * defaulting to `default` as `kubectl apply` does without `-n`.
 * @default namespace `default`
 */
export const namespacedObjectMetaSchema = z.strictObject({
  name: objectNameSchema,
  namespace: objectNameSchema.default('default'),
  ...commonMetaShape,
});

/** Metadata of a pod template: like {@link objectMetaSchema} but every field optional (no name needed). */
export const templateMetaSchema = z.strictObject({
  name: z.string().optional(),
  namespace: z.string().optional(),
  ...commonMetaShape,
});

/**
 * A resource quantity (`500m`, `1Gi`, `400`, or a plain YAML number), output as a string in the written form
 * (numbers become their decimal string) so it round-trips into `parseResourceList`. A string is taken as it is
 * written: a quoted `"500m "` is refused, as `parseQuantity` (Kubernetes' `ParseQuantity`) refuses it.
 * @example quantitySchema.parse(400) // '400'
 */
export const quantitySchema = z.union([z.string(), z.number()]).transform((value, ctx): string => {
  const text = typeof value === 'number' ? String(value) : value;
  try {
    parseQuantity(text);
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: e instanceof Error ? e.message : String(e) });
    return z.NEVER;
  }
  return text;
});

/**
 * A resource map (`{cpu: "500m", memory: 1Gi, nvidia.com/gpu: 1}`) with validated quantities.
 * Names are qualified names; values are output as strings (see {@link quantitySchema}).
 */
export const resourceListSchema = ownKeysRecord(qualifiedNameSchema, quantitySchema);

/** One expression of a label selector. */
export const labelSelectorRequirementSchema = z
  .strictObject({
    key: qualifiedNameSchema,
    operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']),
    values: z.array(z.string()).optional(),
  })
  .superRefine((r, ctx) => {
    const n = r.values?.length ?? 0;
    if ((r.operator === 'In' || r.operator === 'NotIn') && n === 0) {
      ctx.addIssue({ code: 'custom', path: ['values'], message: `operator ${r.operator} needs at least one value` });
    }
    if ((r.operator === 'Exists' || r.operator === 'DoesNotExist') && n > 0) {
      ctx.addIssue({ code: 'custom', path: ['values'], message: `operator ${r.operator} takes no values` });
    }
  });

/** A label selector (`matchLabels` ANDed with `matchExpressions`); an empty selector matches everything. */
export const labelSelectorSchema = z.strictObject({
  matchLabels: labelsSchema.optional(),
  matchExpressions: z.array(labelSelectorRequirementSchema).optional(),
});

/** A parsed label selector. */
export type LabelSelector = z.output<typeof labelSelectorSchema>;

/**
 * True when `labels` satisfy `selector` (Kubernetes `LabelSelectorAsSelector` semantics: every matchLabels pair and
 * every expression must hold; an empty selector matches every object).
 * @param selector the selector; `undefined` matches nothing, as a nil selector does in a PDB
 * @param labels the object's labels
 */
export function labelSelectorMatches(selector: LabelSelector | undefined, labels: Readonly<Record<string, string>> | undefined): boolean {
  if (!selector) return false;
  const have = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (ownValue(have, k) !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const value = ownValue(have, e.key);
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
        if (value === undefined || !values.includes(value)) return false;
        break;
      case 'NotIn':
        if (value !== undefined && values.includes(value)) return false;
        break;
      case 'Exists':
        if (value === undefined) return false;
        break;
      case 'DoesNotExist':
        if (value !== undefined) return false;
        break;
    }
  }
  return true;
}

/** Taint effects, as Kubernetes names them. */
export const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const satisfies readonly TaintEffect[];

/** A node taint (`key[=value]:effect`); `timeAdded` is accepted as the API server writes it. */
export const taintSchema = z.strictObject({
  key: qualifiedNameSchema,
  // The API server validates a taint value as a label value (at most 63 alphanumerics, '-', '_', '.').
  value: labelValueSchema.optional(),
  effect: z.enum(TAINT_EFFECTS),
  timeAdded: z.string().optional(),
});
