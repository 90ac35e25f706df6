/**
 * The webhook contract (docs/contracts.md#webhook): what the in-cluster relay posts and the
 * webhook Lambda accepts. One request is one batch of {@link PodEvent}s for one cluster.
 *
 * The schema is stricter than {@link PodEventSchema} alone because every accepted event becomes an SQS FIFO message
 * (MessageGroupId = cluster, MessageDeduplicationId = `uid:resourceVersion`): SQS allows 1–128 printable ASCII
 * characters in both ids (SQS API reference, `SendMessage` `MessageGroupId`/`MessageDeduplicationId`), so a batch
 * that could not be enqueued is refused up front (400) instead of failing half-way (5xx). Names follow the
 * Kubernetes object-name rules (k8s.io/apimachinery `pkg/util/validation`: DNS-1123 labels for namespaces, DNS-1123
 * subdomains for pod and node names).
 */
import * as z from 'zod';
import { PodEventSchema, deduplicationId, type PodEvent } from './pod-event.js';

/** Largest request body the webhook accepts: 256 KiB (docs/contracts.md#webhook), checked on the raw bytes before parsing. */
export const MAX_WEBHOOK_BODY_BYTES = 256 * 1024;

/**
 * Most events in one batch. 500 of the longest events (253-character names) stay under
 * {@link MAX_WEBHOOK_BODY_BYTES}; the relay splits larger flushes into several batches.
 */
export const MAX_WEBHOOK_BATCH_EVENTS = 500;

/** How far a request's `x-skiff-timestamp` may be from the webhook's clock: 300 s either way (docs/contracts.md#webhook). */
export const MAX_WEBHOOK_CLOCK_SKEW_SECONDS = 300;

/** Header carrying the request's unix time in whole seconds, e.g. `1767225600`. */
export const WEBHOOK_TIMESTAMP_HEADER = 'x-skiff-timestamp';

/** Header carrying `sha256=<64 lowercase hex>`: HMAC-SHA256 of `<timestamp>.<body>` under the shared secret. */
export const WEBHOOK_SIGNATURE_HEADER = 'x-skiff-signature';

/** The EKS cluster-name rule (EKS `CreateCluster`: 1–100 characters, `^[0-9A-Za-z][A-Za-z0-9\-_]*$`). */
const CLUSTER_NAME = /^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$/;
/** A DNS-1123 label (namespaces): at most 63 characters. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** A DNS-1123 subdomain (pod and node names): dot-separated labels, at most 253 characters in all. */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** Printable ASCII without space: what an SQS deduplication id may contain. */
const SQS_ID_CHARS = /^[\x21-\x7e]+$/;
/** Longest SQS MessageDeduplicationId. */
const MAX_SQS_ID_LENGTH = 128;

/** The EKS cluster a batch is for; also the SQS MessageGroupId. */
export const ClusterNameSchema = z.string().regex(CLUSTER_NAME, 'must be an EKS cluster name: 1–100 letters, digits, - and _, starting with a letter or digit');

/** One event as the webhook accepts it: a {@link PodEvent} whose names and ids are valid for Kubernetes and SQS. */
export const WebhookEventSchema = PodEventSchema.superRefine((e, ctx) => {
  if (e.kind === 'pod' && !DNS_LABEL.test(e.namespace)) ctx.addIssue({ code: 'custom', path: ['namespace'], message: 'must be a DNS-1123 label (lowercase letters, digits and -, at most 63 characters)' });
  if (e.name.length > 253 || !DNS_SUBDOMAIN.test(e.name)) ctx.addIssue({ code: 'custom', path: ['name'], message: 'must be a DNS-1123 subdomain (lowercase letters, digits, - and ., at most 253 characters)' });
  const id = deduplicationId(e);
  if (!SQS_ID_CHARS.test(id) || id.length > MAX_SQS_ID_LENGTH) {
    ctx.addIssue({ code: 'custom', path: ['uid'], message: `uid and resourceVersion must be printable ASCII without spaces, at most ${MAX_SQS_ID_LENGTH - 1} characters together` });
  }
});

/**
 * The body of one webhook request: `{cluster, events}` with 1–{@link MAX_WEBHOOK_BATCH_EVENTS} events, each for
 * `cluster`.
 * @example
 * WebhookBatchSchema.parse({ cluster: 'prod', events: [{ kind: 'pod', cluster: 'prod', namespace: 'default', name: 'web-1', uid: 'u1', resourceVersion: '42' }] });
 */
export const WebhookBatchSchema = z
  .object({
    cluster: ClusterNameSchema,
    events: z.array(WebhookEventSchema).min(1, 'a batch carries at least one event').max(MAX_WEBHOOK_BATCH_EVENTS, `a batch carries at most ${MAX_WEBHOOK_BATCH_EVENTS} events`),
  })
  .superRefine((batch, ctx) => {
    batch.events.forEach((e, i) => {
      if (e.cluster !== batch.cluster) ctx.addIssue({ code: 'custom', path: ['events', i, 'cluster'], message: `must be the batch's cluster ${JSON.stringify(batch.cluster)}` });
    });
  });

/** A parsed {@link WebhookBatchSchema} body. */
export interface WebhookBatch {
  readonly cluster: string;
  readonly events: readonly PodEvent[];
}

/**
 * One line per issue of a failed parse, `path: message`, for a 400 response or a log.
 * @param error the zod error of `WebhookBatchSchema.safeParse`
 */
export function describeBatchIssues(error: z.ZodError): string[] {
  return error.issues.map((i) => `${i.path.length > 0 ? i.path.join('.') : '(body)'}: ${i.message}`);
}
