/**
 * `v1` LimitRange: per-namespace defaults and bounds for container and pod resources. The admission controller
 * fills a container's missing requests from `defaultRequest` (else `default`) and missing limits from `default`.
 * Validation from k8s.io/kubernetes `pkg/apis/core/validation` (`ValidateLimitRange`).
 */
import * as z from 'zod';
import { parseQuantity } from '../resources/quantity.js';
import { namespacedObjectMetaSchema, resourceListSchema } from './object-meta.js';

/** Limit types a LimitRange item may have. */
export const LIMIT_TYPES = ['Container', 'Pod', 'PersistentVolumeClaim'] as const;

/** Base-unit value of a quantity already validated by the schema (NaN if not). */
function value(q: string | undefined): number {
  if (q === undefined) return Number.NaN;
  try {
    return parseQuantity(q);
  } catch {
    return Number.NaN;
  }
}

/**
 * One `spec.limits[]` item. `default` and `defaultRequest` are only valid for `Container`; per resource,
 * `min ≤ defaultRequest ≤ default ≤ max` must hold where given.
 */
export const limitRangeItemSchema = z
  .strictObject({
    type: z.enum(LIMIT_TYPES),
    max: resourceListSchema.optional(),
    min: resourceListSchema.optional(),
    default: resourceListSchema.optional(),
    defaultRequest: resourceListSchema.optional(),
    maxLimitRequestRatio: resourceListSchema.optional(),
  })
  .superRefine((item, ctx) => {
    if (item.type !== 'Container') {
      for (const key of ['default', 'defaultRequest'] as const) {
        if (item[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: `${key} may only be set for type Container` });
      }
    }
    const names = new Set([...Object.keys(item.max ?? {}), ...Object.keys(item.min ?? {}), ...Object.keys(item.default ?? {}), ...Object.keys(item.defaultRequest ?? {})]);
    for (const name of names) {
      const chain: [string, string | undefined][] = [
        ['min', item.min?.[name]],
        ['defaultRequest', item.defaultRequest?.[name]],
        ['default', item.default?.[name]],
        ['max', item.max?.[name]],
      ];
      const present = chain.filter((c): c is [string, string] => c[1] !== undefined);
      for (let i = 1; i < present.length; i++) {
        const [lowKey, low] = present[i - 1] as [string, string];
        const [highKey, high] = present[i] as [string, string];
        if (value(low) > value(high)) {
          ctx.addIssue({ code: 'custom', path: [highKey, name], message: `${highKey} ${name} (${high}) must be at least ${lowKey} ${name} (${low})` });
        }
      }
    }
  })
  .transform(defaultLimitRangeItem);

/**
 * The API server's defaulting of a `Container` item (k8s.io/kubernetes `pkg/apis/core/v1/defaults.go`
 * `SetDefaults_LimitRangeItem`): a missing `default` comes from `max`; a missing `defaultRequest` from `default`,
 * else from `min`. Other types are returned unchanged.
 */
export function defaultLimitRangeItem<T extends { type: string; max?: Record<string, string>; min?: Record<string, string>; default?: Record<string, string>; defaultRequest?: Record<string, string> }>(item: T): T {
  if (item.type !== 'Container' || (!item.max && !item.min && !item.default)) return item;
  const defaults = { ...(item.max ?? {}), ...(item.default ?? {}) };
  const defaultRequest = { ...(item.min ?? {}), ...defaults, ...(item.defaultRequest ?? {}) };
  return {
    ...item,
    ...(Object.keys(defaults).length ? { default: defaults } : {}),
    ...(Object.keys(defaultRequest).length ? { defaultRequest } : {}),
  };
}

/**
 * A `v1` LimitRange.
 * @example limitRangeSchema.parse(doc).spec.limits[0]?.defaultRequest // { cpu: '100m', memory: '128Mi' }
 */
export const limitRangeSchema = z.strictObject({
  apiVersion: z.literal('v1'),
  kind: z.literal('LimitRange'),
  metadata: namespacedObjectMetaSchema,
  spec: z.strictObject({ limits: z.array(limitRangeItemSchema).min(1, { error: 'limits must have at least one item' }) }),
});

/** A parsed LimitRange. */
export type LimitRange = z.output<typeof limitRangeSchema>;
/** A parsed LimitRange item. */
export type LimitRangeItem = z.output<typeof limitRangeItemSchema>;
