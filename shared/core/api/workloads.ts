/**
 * Workload controllers a scenario may contain: `apps/v1` Deployment, StatefulSet and DaemonSet, and `batch/v1` Job.
 * Fields follow the Kubernetes API; the spec objects are strict (a typo such as `replica:` is an error) and the pod
 * template is a {@link podTemplateSpecSchema}. Defaults as the API server applies them: `replicas: 1`; a Job's
 * `parallelism: 1` and, when neither is given, `completions: 1`.
 *
 * Validation from k8s.io/kubernetes `pkg/apis/apps/validation` and `pkg/apis/batch/validation`: the selector must be
 * non-empty and match the template's labels; a Job's pods must use `restartPolicy` `Never` or `OnFailure`.
 */
import * as z from 'zod';
import { parseDuration } from './duration.js';
import { labelSelectorMatches, labelSelectorSchema, namespacedObjectMetaSchema, type LabelSelector } from './object-meta.js';
import { podTemplateSpecSchema, type PodTemplateSpec } from './pod.js';

/**
 * Pod-template annotation giving how long each of a Job's pods runs before completing (a Go duration, e.g. `2h`).
 * Without it the pods run until the end of the simulation (docs/contracts.md#scenario).
 */
export const RUN_FOR_ANNOTATION = 'skiff.dev/run-for';

/** Checks that a selector is non-empty and selects the template's labels. */
function checkSelector(selector: LabelSelector | undefined, template: PodTemplateSpec, ctx: z.RefinementCtx): void {
  if (!selector) return;
  if (Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0) {
    ctx.addIssue({ code: 'custom', path: ['selector'], message: 'selector must not be empty' });
    return;
  }
  if (!labelSelectorMatches(selector, template.metadata.labels)) {
    ctx.addIssue({ code: 'custom', path: ['template', 'metadata', 'labels'], message: '`selector` does not match template `labels`' });
  }
}

/** Checks the `skiff.dev/run-for` annotation on a pod template, if present. */
function checkRunFor(template: PodTemplateSpec, ctx: z.RefinementCtx): void {
  const value = template.metadata.annotations?.[RUN_FOR_ANNOTATION];
  if (value === undefined) return;
  try {
    parseDuration(value);
  } catch (e) {
    ctx.addIssue({
      code: 'custom',
      path: ['template', 'metadata', 'annotations', RUN_FOR_ANNOTATION],
      message: `${RUN_FOR_ANNOTATION} must be a duration such as 2h or 30m: ${e instanceof Error ? e.message : String(e)}`,
    });
  }
}

/** A non-negative replica count, defaulting to 1. */
const replicasSchema = z.int().min(0).default(1);

/** `apps/v1` Deployment `spec`. */
export const deploymentSpecSchema = z
  .strictObject({
    replicas: replicasSchema,
    selector: labelSelectorSchema,
    template: podTemplateSpecSchema,
    strategy: z.looseObject({}).optional(),
    minReadySeconds: z.int().min(0).optional(),
    revisionHistoryLimit: z.int().min(0).optional(),
    progressDeadlineSeconds: z.int().min(0).optional(),
    paused: z.boolean().optional(),
  })
  .superRefine((spec, ctx) => {
    checkSelector(spec.selector, spec.template, ctx);
    checkRunFor(spec.template, ctx);
  });

/**
 * An `apps/v1` Deployment; `spec.replicas` defaults to 1.
 * @example deploymentSchema.parse(doc).spec.replicas // 3
 */
export const deploymentSchema = z.strictObject({
  apiVersion: z.literal('apps/v1'),
  kind: z.literal('Deployment'),
  metadata: namespacedObjectMetaSchema,
  spec: deploymentSpecSchema,
  status: z.looseObject({}).optional(),
});

/** `apps/v1` StatefulSet `spec`. */
export const statefulSetSpecSchema = z
  .strictObject({
    replicas: replicasSchema,
    selector: labelSelectorSchema,
    template: podTemplateSpecSchema,
    serviceName: z.string().optional(),
    podManagementPolicy: z.enum(['OrderedReady', 'Parallel']).optional(),
    updateStrategy: z.looseObject({}).optional(),
    volumeClaimTemplates: z.array(z.looseObject({})).optional(),
    persistentVolumeClaimRetentionPolicy: z.looseObject({}).optional(),
    revisionHistoryLimit: z.int().min(0).optional(),
    minReadySeconds: z.int().min(0).optional(),
    ordinals: z.looseObject({}).optional(),
  })
  .superRefine((spec, ctx) => {
    checkSelector(spec.selector, spec.template, ctx);
    checkRunFor(spec.template, ctx);
  });

/** An `apps/v1` StatefulSet; `spec.replicas` defaults to 1. */
export const statefulSetSchema = z.strictObject({
  apiVersion: z.literal('apps/v1'),
  kind: z.literal('StatefulSet'),
  metadata: namespacedObjectMetaSchema,
  spec: statefulSetSpecSchema,
  status: z.looseObject({}).optional(),
});

/** `apps/v1` DaemonSet `spec`. */
export const daemonSetSpecSchema = z
  .strictObject({
    selector: labelSelectorSchema,
    template: podTemplateSpecSchema,
    updateStrategy: z.looseObject({}).optional(),
    minReadySeconds: z.int().min(0).optional(),
    revisionHistoryLimit: z.int().min(0).optional(),
  })
  .superRefine((spec, ctx) => checkSelector(spec.selector, spec.template, ctx));

/** An `apps/v1` DaemonSet: one pod per node whose taints and labels admit the template. */
export const daemonSetSchema = z.strictObject({
  apiVersion: z.literal('apps/v1'),
  kind: z.literal('DaemonSet'),
  metadata: namespacedObjectMetaSchema,
  spec: daemonSetSpecSchema,
  status: z.looseObject({}).optional(),
});

/**
 * `batch/v1` Job `spec`. `parallelism` defaults to 1; `completions` to 1 only when neither is set (otherwise it
 * stays unset: a work-queue Job that completes when its pods do). The template's `restartPolicy` must be `Never`
 * or `OnFailure`; its `skiff.dev/run-for` annotation, if any, must be a duration.
 */
export const jobSpecSchema = z
  .strictObject({
    parallelism: z.int().min(0).optional(),
    completions: z.int().min(0).optional(),
    template: podTemplateSpecSchema,
    selector: labelSelectorSchema.optional(),
    manualSelector: z.boolean().optional(),
    activeDeadlineSeconds: z.int().min(1).optional(),
    backoffLimit: z.int().min(0).optional(),
    backoffLimitPerIndex: z.int().min(0).optional(),
    maxFailedIndexes: z.int().min(0).optional(),
    completionMode: z.enum(['NonIndexed', 'Indexed']).optional(),
    suspend: z.boolean().optional(),
    ttlSecondsAfterFinished: z.int().min(0).optional(),
    podFailurePolicy: z.looseObject({}).optional(),
    successPolicy: z.looseObject({}).optional(),
    podReplacementPolicy: z.enum(['TerminatingOrFailed', 'Failed']).optional(),
    managedBy: z.string().optional(),
  })
  .superRefine((spec, ctx) => {
    const policy = spec.template.spec.restartPolicy;
    if (policy !== 'Never' && policy !== 'OnFailure') {
      ctx.addIssue({
        code: 'custom',
        path: ['template', 'spec', 'restartPolicy'],
        message: `a Job's pods need restartPolicy Never or OnFailure${policy === undefined ? '' : ` (got ${policy})`}`,
      });
    }
    if (spec.manualSelector === true) checkSelector(spec.selector, spec.template, ctx);
    checkRunFor(spec.template, ctx);
  })
  .transform((spec) => ({
    ...spec,
    parallelism: spec.parallelism ?? 1,
    completions: spec.completions ?? (spec.parallelism === undefined ? 1 : undefined),
  }));

/**
 * A `batch/v1` Job. Its pods run for the template's `skiff.dev/run-for` duration, then complete.
 * @example jobSchema.parse(doc).spec.parallelism // 10
 */
export const jobSchema = z.strictObject({
  apiVersion: z.literal('batch/v1'),
  kind: z.literal('Job'),
  metadata: namespacedObjectMetaSchema,
  spec: jobSpecSchema,
  status: z.looseObject({}).optional(),
});

/** A parsed Deployment. */
export type Deployment = z.output<typeof deploymentSchema>;
/** A parsed StatefulSet. */
export type StatefulSet = z.output<typeof statefulSetSchema>;
/** A parsed DaemonSet. */
export type DaemonSet = z.output<typeof daemonSetSchema>;
/** A parsed Job. */
export type Job = z.output<typeof jobSchema>;

/**
 * How long each pod of a Job runs, from its `skiff.dev/run-for` template annotation.
 * @param template the Job's (or any) pod template
 * @returns seconds, or `null` when the annotation is absent (run until the end of the simulation)
 * @throws {DurationError} when the annotation is not a duration (cannot happen for a parsed Job)
 * @example runForSeconds(job.spec.template) // 7200 for `skiff.dev/run-for: 2h`
 */
export function runForSeconds(template: PodTemplateSpec): number | null {
  const value = template.metadata.annotations?.[RUN_FOR_ANNOTATION];
  return value === undefined ? null : parseDuration(value);
}
