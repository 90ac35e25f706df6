/**
 * The webhook's signing contract (docs/contracts.md#webhook), in one place for both ends: the relay signs with
 * {@link signWebhookBody}, the webhook Lambda checks with {@link checkSignatureHeaders} (no secret needed) and then
 * {@link signatureMatches}.
 *
 * - `x-skiff-timestamp`: the sender's unix time in whole seconds (decimal digits only).
 * - `x-skiff-signature`: `sha256=` and the lowercase hex HMAC-SHA256 of the bytes `<timestamp>.<body>` under the
 *   shared secret (the secret's UTF-8 bytes are the key; the body is hashed exactly as sent, before any parsing).
 * - A timestamp more than {@link MAX_WEBHOOK_CLOCK_SKEW_SECONDS} (300 s) away from the receiver's clock is refused,
 *   so a captured request cannot be replayed later; an exact re-post inside the window is harmless because every
 *   event is enqueued with its FIFO deduplication id (`uid:resourceVersion`).
 *
 * The comparison is constant-time (`node:crypto` `timingSafeEqual` on the 32 digest bytes), so response timing
 * reveals nothing about how much of a forged signature was right. The scheme is the one GitHub and Stripe webhooks
 * use (HMAC over timestamp and payload, `sha256=` prefix).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { MAX_WEBHOOK_CLOCK_SKEW_SECONDS, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from '../core/api/webhook-batch.js';

/** The prefix of the signature header's value. */
export const SIGNATURE_PREFIX = 'sha256=';

/** Why a request's signature was refused. Every one is a 401. */
export type SignatureProblem = 'missing-timestamp' | 'malformed-timestamp' | 'stale-timestamp' | 'missing-signature' | 'malformed-signature' | 'wrong-signature';

/** Why a request's signature was refused: the problem and the message the 401 carries. */
export type SignatureRefusal = { readonly ok: false; readonly problem: SignatureProblem; readonly message: string };

/** The two headers a signed request carries, lowercase names as on the wire. */
export type WebhookSignatureHeaders = {
  readonly 'x-skiff-timestamp': string;
  readonly 'x-skiff-signature': string;
};

/** Unix timestamps are decimal seconds: at most 12 digits (year 33658), no sign, no fraction. */
const TIMESTAMP = /^\d{1,12}$/;
/** A SHA-256 digest in hex. */
const HEX_DIGEST = /^[0-9a-f]{64}$/i;

/**
 * HMAC-SHA256 of `<timestamp>.<body>`.
 * @param secret the shared secret (its UTF-8 bytes are the key)
 * @param timestamp unix seconds, as written in the header
 * @param body the exact request body bytes (a string is taken as UTF-8)
 * @returns the 32-byte digest
 */
export function webhookDigest(secret: string, timestamp: string, body: string | Uint8Array): Buffer {
  return createHmac('sha256', secret).update(`${timestamp}.`, 'utf8').update(body).digest();
}

/**
 * The headers that sign `body` at `nowMs`.
 * @param secret the shared secret; must not be empty
 * @param body the exact body that will be sent (a string is sent as UTF-8)
 * @param nowMs the sender's clock, epoch milliseconds (floored to whole seconds)
 * @throws {RangeError} when `secret` is empty (an empty HMAC key would sign every request for anyone)
 * @example
 * const body = JSON.stringify(batch);
 * await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...signWebhookBody(secret, body, Date.now()) } });
 */
export function signWebhookBody(secret: string, body: string | Uint8Array, nowMs: number): WebhookSignatureHeaders {
  if (secret === '') throw new RangeError('the webhook secret is empty; refusing to sign with an empty key');
  const timestamp = String(Math.floor(nowMs / 1000));
  return {
    [WEBHOOK_TIMESTAMP_HEADER]: timestamp,
    [WEBHOOK_SIGNATURE_HEADER]: `${SIGNATURE_PREFIX}${webhookDigest(secret, timestamp, body).toString('hex')}`,
  } as WebhookSignatureHeaders;
}

/** The two signature headers of a request, checked for presence, format and clock skew (no secret involved). */
export interface CheckedSignatureHeaders {
  /** The `x-skiff-timestamp` value: unix seconds, decimal digits, within the skew window. */
  readonly timestamp: string;
  /** The 32 digest bytes of `x-skiff-signature` (its hex after `sha256=`). */
  readonly digest: Buffer;
}

/**
 * The checks of a request's signature headers that need no secret, in this order: timestamp present, unix seconds,
 * within `maxSkewSeconds` of `nowMs`; signature present, `sha256=` and 64 hex digits. The webhook runs them before it
 * reads the secret, so an unsigned, malformed or stale request costs no Secrets Manager call
 * (docs/contracts.md#webhook). Never throws on bad input: every problem is a value.
 * @param headers the header values, undefined when absent
 * @param nowMs the receiver's clock, epoch milliseconds
 * @param maxSkewSeconds the replay window either side of `nowMs` @default {@link MAX_WEBHOOK_CLOCK_SKEW_SECONDS}
 * @returns the timestamp and the digest to compare with {@link signatureMatches}, or why the headers are refused
 *   (never `wrong-signature`: that needs the secret)
 */
export function checkSignatureHeaders(
  headers: { readonly timestamp: string | undefined; readonly signature: string | undefined },
  nowMs: number,
  maxSkewSeconds: number = MAX_WEBHOOK_CLOCK_SKEW_SECONDS,
): ({ readonly ok: true } & CheckedSignatureHeaders) | SignatureRefusal {
  const { timestamp, signature } = headers;
  if (timestamp === undefined || timestamp === '') return refuse('missing-timestamp', `missing ${WEBHOOK_TIMESTAMP_HEADER} header`);
  if (!TIMESTAMP.test(timestamp)) return refuse('malformed-timestamp', `${WEBHOOK_TIMESTAMP_HEADER} must be unix seconds (decimal digits)`);
  const skew = Math.abs(Number(timestamp) - nowMs / 1000);
  if (!(skew <= maxSkewSeconds)) return refuse('stale-timestamp', `${WEBHOOK_TIMESTAMP_HEADER} is more than ${maxSkewSeconds} s from the webhook's clock (replayed, or the sender's clock is off)`);
  if (signature === undefined || signature === '') return refuse('missing-signature', `missing ${WEBHOOK_SIGNATURE_HEADER} header`);
  const hex = signature.startsWith(SIGNATURE_PREFIX) ? signature.slice(SIGNATURE_PREFIX.length) : undefined;
  if (hex === undefined || !HEX_DIGEST.test(hex)) return refuse('malformed-signature', `${WEBHOOK_SIGNATURE_HEADER} must be ${SIGNATURE_PREFIX}<64 hex digits>`);
  return { ok: true, timestamp, digest: Buffer.from(hex, 'hex') };
}

/**
 * True when `headers.digest` is the HMAC of `<timestamp>.<body>` under `secret`, compared in constant time. An empty
 * secret matches nothing.
 * @param headers headers that passed {@link checkSignatureHeaders}
 * @param body the exact request body bytes (a string is taken as UTF-8)
 * @param secret the shared secret
 */
export function signatureMatches(headers: CheckedSignatureHeaders, body: string | Uint8Array, secret: string): boolean {
  if (secret === '') return false;
  return timingSafeEqual(webhookDigest(secret, headers.timestamp, body), headers.digest);
}

/** The refusal of a signature that does not match (the only {@link SignatureProblem} that needs the secret). */
export const WRONG_SIGNATURE: SignatureRefusal = { ok: false, problem: 'wrong-signature', message: 'signature does not match' };

function refuse(problem: SignatureProblem, message: string): SignatureRefusal {
  return { ok: false, problem, message };
}
