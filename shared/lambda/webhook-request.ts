/**
 * Reading one webhook request (a Lambda Function URL event, payload format 2.0) into a verified
 * {@link WebhookBatch}, in the order that spends the least on a bad request and never parses an unauthenticated body:
 *
 * | step | refused with |
 * |---|---|
 * | method is `POST` | 405 |
 * | body at most {@link MAX_WEBHOOK_BODY_BYTES} bytes (after base64 decoding, before parsing) | 413 |
 * | `x-skiff-timestamp` present, unix seconds, within ±300 s; `x-skiff-signature` present, `sha256=` and 64 hex digits | 401 |
 * | the signature matches under the secret (read only now; read again, refreshed, once on a mismatch) | 401 |
 * | body is JSON | 400 |
 * | body matches {@link WebhookBatchSchema}, and is for this webhook's cluster | 400 |
 *
 * Every refusal is a {@link WebhookRequestError} carrying the status; `@middy/http-error-handler` turns it into the
 * response (its `expose` is true, so the message is the body). Header names are matched case-insensitively
 * (HTTP/1.1 headers are; Function URLs pass them through lowercased, but a test or another front end may not).
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { SkiffError } from '../core/errors.js';
import {
  MAX_WEBHOOK_BODY_BYTES,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  WebhookBatchSchema,
  describeBatchIssues,
  type WebhookBatch,
} from '../core/api/webhook-batch.js';
import { deduplicationId, messageGroupId } from '../core/api/pod-event.js';
import { checkSignatureHeaders, signatureMatches, WRONG_SIGNATURE, type SignatureProblem } from './webhook-signature.js';

/** A webhook request was refused: `statusCode` is the HTTP status (4xx) and `message` the response body. */
export class WebhookRequestError extends SkiffError {
  /** Read by `@middy/http-error-handler`: the message is safe to return to the caller. */
  readonly expose = true;
  /**
   * @param statusCode 400, 401, 405 or 413
   * @param message what was wrong, returned as the response body
   * @param problem a short machine-readable reason for logs and metrics, e.g. `stale-timestamp`, `schema`
   */
  constructor(
    readonly statusCode: 400 | 401 | 405 | 413,
    message: string,
    readonly problem: SignatureProblem | 'method' | 'too-large' | 'not-json' | 'schema' | 'wrong-cluster',
  ) {
    super(message);
  }
}

/** True when `e` is a {@link WebhookRequestError}. */
export const isWebhookRequestError = (e: unknown): e is WebhookRequestError => e instanceof WebhookRequestError;

/** What reading a request needs. */
export interface WebhookRequestContext {
  /**
   * The shared HMAC secret, read only once the request passed the method, size and header checks (presence, format,
   * clock skew), so an unsigned, malformed or stale request never reads it. When a signature does not match, it is
   * asked once more with `refresh: true` (the secret may have been rotated since it was cached).
   */
  readonly secret: (options?: { readonly refresh?: boolean }) => Promise<string>;
  /** The receiver's clock, epoch milliseconds. */
  readonly nowMs: number;
  /** The cluster this webhook serves; a batch for another cluster is refused. */
  readonly cluster: string;
}

/** The request fields read here (a subset of the Function URL event). */
export type WebhookHttpEvent = Pick<APIGatewayProxyEventV2, 'headers' | 'body' | 'isBase64Encoded'> & {
  readonly requestContext?: { readonly http?: { readonly method?: string } };
};

/**
 * The value of header `name`, matched case-insensitively; repeated headers (joined with `,` by API Gateway) count as
 * malformed for the signature headers, so this returns them as they are.
 */
export function headerValue(headers: APIGatewayProxyEventV2['headers'] | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  const direct = headers[name];
  if (direct !== undefined) return direct;
  const lower = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === lower) return value;
  return undefined;
}

/**
 * The exact body bytes, or a 413 when they are over the limit. A base64 body whose encoded length alone proves it
 * too large is refused without decoding it.
 * @throws {WebhookRequestError} 413
 */
export function requestBodyBytes(event: WebhookHttpEvent, maxBytes: number = MAX_WEBHOOK_BODY_BYTES): Buffer {
  const raw = event.body ?? '';
  const tooLarge = (bytes: number | string) => new WebhookRequestError(413, `request body is ${bytes} bytes; the limit is ${maxBytes} bytes (256 KiB)`, 'too-large');
  if (event.isBase64Encoded) {
    // 4 base64 characters carry 3 bytes; anything longer than this cannot decode to <= maxBytes.
    if (raw.length > Math.ceil(maxBytes / 3) * 4 + 4) throw tooLarge(`about ${Math.floor((raw.length * 3) / 4)}`);
    const bytes = Buffer.from(raw, 'base64');
    if (bytes.length > maxBytes) throw tooLarge(bytes.length);
    return bytes;
  }
  // A UTF-16 code unit is at least one UTF-8 byte, so the string length is a lower bound of the byte length.
  if (raw.length > maxBytes) throw tooLarge(`at least ${raw.length}`);
  const bytes = Buffer.from(raw, 'utf8');
  if (bytes.length > maxBytes) throw tooLarge(bytes.length);
  return bytes;
}

/**
 * Verifies and parses one webhook request (see the module table for the order of the checks).
 * @returns the batch, its events parsed (unknown fields dropped)
 * @throws {WebhookRequestError} 405, 413, 401 or 400, saying what was wrong · whatever `context.secret` throws
 * @example
 * const batch = await readWebhookRequest(event, { secret: async () => key, nowMs: Date.now(), cluster: 'prod' });
 */
export async function readWebhookRequest(event: WebhookHttpEvent, context: WebhookRequestContext): Promise<WebhookBatch> {
  const method = event.requestContext?.http?.method;
  if (method !== undefined && method.toUpperCase() !== 'POST') throw new WebhookRequestError(405, `method ${method} is not allowed; POST a signed batch`, 'method');
  const body = requestBodyBytes(event);
  // Presence, format and clock skew first: a request refused here costs no secret read (and no Secrets Manager call).
  const headers = checkSignatureHeaders({ timestamp: headerValue(event.headers, WEBHOOK_TIMESTAMP_HEADER), signature: headerValue(event.headers, WEBHOOK_SIGNATURE_HEADER) }, context.nowMs);
  if (!headers.ok) throw new WebhookRequestError(401, headers.message, headers.problem);
  if (!signatureMatches(headers, body, await context.secret()) && !signatureMatches(headers, body, await context.secret({ refresh: true }))) {
    throw new WebhookRequestError(401, WRONG_SIGNATURE.message, WRONG_SIGNATURE.problem);
  }
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch (e) {
    throw new WebhookRequestError(400, `request body is not JSON: ${e instanceof Error ? e.message : String(e)}`, 'not-json');
  }
  const parsed = WebhookBatchSchema.safeParse(json);
  if (!parsed.success) throw new WebhookRequestError(400, `request body is not a webhook batch:\n${describeBatchIssues(parsed.error).slice(0, 20).join('\n')}`, 'schema');
  if (parsed.data.cluster !== context.cluster) {
    throw new WebhookRequestError(400, `batch is for cluster ${JSON.stringify(parsed.data.cluster)}; this webhook serves ${JSON.stringify(context.cluster)}`, 'wrong-cluster');
  }
  return parsed.data;
}

/** One pod-event queue message (the SQS adapter's `FifoMessage`). */
export interface WebhookQueueMessage {
  /** The event as JSON: what the provisioner parses with `PodEventSchema`. */
  readonly body: string;
  /** MessageGroupId: `<cluster>#<n>` by the object's uid (`messageGroupId` in `pod-event.ts`), so one object's events stay in order. */
  readonly groupId: string;
  /** MessageDeduplicationId: `uid:resourceVersion` (`deduplicationId` in `pod-event.ts`). */
  readonly deduplicationId: string;
}

/**
 * The queue messages of a batch, in order, one per event: group = one of the cluster's `POD_EVENT_GROUPS` by the
 * object's uid (`messageGroupId`), deduplication id =
 * `uid:resourceVersion`, so a batch posted twice (or an event repeated across batches) is enqueued once within SQS
 * FIFO's 5-minute window.
 */
export function toQueueMessages(batch: WebhookBatch): WebhookQueueMessage[] {
  return batch.events.map((e) => ({ body: JSON.stringify(e), groupId: messageGroupId(batch.cluster, e), deduplicationId: deduplicationId(e) }));
}
