/**
 * `policy/v1` PodDisruptionBudget: how many of the selected pods must stay available during voluntary disruption.
 * Validation from k8s.io/kubernetes `pkg/apis/policy/validation`: exactly one of `minAvailable` / `maxUnavailable`
 * (Skiff requires one, as the seed recommends), each a non-negative integer or a percentage up to 100%.
 */
import * as z from 'zod';
import { labelSelectorSchema, namespacedObjectMetaSchema } from './object-meta.js';

/** A percentage `0%`–`100%`. */
const PERCENT = /^(100|[0-9]{1,2})%$/;

/**
 * An int-or-percent value (`2`, `"50%"`). Output keeps the written form: a number or a percentage string.
 * @example intOrPercentSchema.parse('50%') // '50%'
 */
export const intOrPercentSchema = z.union([
  z.int().min(0, { error: 'must be a non-negative integer or a percentage' }),
  z.string().regex(PERCENT, { error: 'must be a non-negative integer or a percentage between 0% and 100% (e.g. "50%")' }),
]);

/** An int-or-percent value as parsed. */
export type IntOrPercent = z.output<typeof intOrPercentSchema>;

/**
 * Resolves an int-or-percent against a total, rounding a percentage up (Kubernetes `GetScaledValueFromIntOrPercent`
 * with `roundUp = true`, as the disruption controller does for `minAvailable`).
 * @param value an integer or `"N%"`
 * @param total the number of pods the percentage refers to
 * @example scaledValue('50%', 3) // 2
 */
export function scaledValue(value: IntOrPercent, total: number): number {
  if (typeof value === 'number') return value;
  return Math.ceil((Number.parseInt(value, 10) * total) / 100);
}

/** PDB `spec`. A missing `selector` selects no pods; an empty one (`{}`) selects every pod of the namespace. */
export const pdbSpecSchema = z
  .strictObject({
    minAvailable: intOrPercentSchema.optional(),
    maxUnavailable: intOrPercentSchema.optional(),
    selector: labelSelectorSchema.optional(),
    unhealthyPodEvictionPolicy: z.enum(['IfHealthyBudget', 'AlwaysAllow']).optional(),
  })
  .superRefine((spec, ctx) => {
    if (spec.minAvailable !== undefined && spec.maxUnavailable !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['maxUnavailable'], message: 'minAvailable and maxUnavailable cannot be both set' });
    }
    if (spec.minAvailable === undefined && spec.maxUnavailable === undefined) {
      ctx.addIssue({ code: 'custom', message: 'exactly one of minAvailable or maxUnavailable must be set' });
    }
  });

/**
 * A `policy/v1` PodDisruptionBudget.
 * @example pdbSchema.parse(doc).spec.minAvailable // 2
 */
export const pdbSchema = z.strictObject({
  apiVersion: z.literal('policy/v1'),
  kind: z.literal('PodDisruptionBudget'),
  metadata: namespacedObjectMetaSchema,
  spec: pdbSpecSchema,
  status: z.looseObject({}).optional(),
});

/** A parsed PodDisruptionBudget. */
export type PodDisruptionBudget = z.output<typeof pdbSchema>;
