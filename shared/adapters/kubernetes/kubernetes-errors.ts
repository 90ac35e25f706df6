/**
 * Translation of Kubernetes API errors into Skiff's errors, once, at the adapter edge (docs/architecture.md#errors).
 *
 * The API server answers a failed request with a `Status` object (`{kind: Status, apiVersion: v1, status: Failure,
 * reason, code, message}`, k8s.io/apimachinery `pkg/apis/meta/v1/types.go` `StatusReason`); `@kubernetes/client-node`
 * 1.x throws an `ApiException` whose `code` is the HTTP status and whose `body` is that Status as text.
 *
 * | HTTP | Status reason | becomes |
 * |---|---|---|
 * | 404 | NotFound | {@link NotFoundError} (key: the object, e.g. `Node/ip-10-0-1-2.ec2.internal`) |
 * | 409 | AlreadyExists, Conflict | {@link ConflictError} |
 * | 429 | TooManyRequests | {@link ThrottledError} (API Priority and Fairness rejected it; retry with backoff) |
 * | 5xx | InternalError, ServiceUnavailable, Timeout | {@link ApiServerUnavailableError}, a ThrottledError subclass |
 * | other | Forbidden, Unauthorized, Invalid, BadRequest, … | {@link KubernetesApiError} with status and reason |
 *
 * 5xx is made retryable as a {@link ThrottledError} subclass on purpose: callers already back off and retry on
 * `isThrottledError`, and an overloaded or restarting control plane (EKS scales and rolls API servers) needs
 * exactly that; `isApiServerUnavailableError` tells the two apart for logs and metrics. Eviction's 429 is not an
 * error at all: `evictPod` turns it into the value `'blocked'` before this module sees it.
 */
import { ApiServerUnavailableError, ConflictError, NotFoundError, SkiffError, ThrottledError } from '../../core/errors.js';

/** The parts of a `meta/v1` Status object Skiff reads. */
export interface KubernetesStatus {
  /** e.g. `NotFound`, `TooManyRequests`, `Conflict`, `Invalid`; may be empty. */
  readonly reason?: string;
  readonly message?: string;
  /** HTTP status code, as the server repeated it in the body. */
  readonly code?: number;
}

/** A Kubernetes API call failed with a status Skiff has no dedicated error for (403, 401, 422, 400, …). */
export class KubernetesApiError extends SkiffError {
  /**
   * @param message what was being done and what the server said
   * @param status the HTTP status code (0 when the request never got an answer: DNS, TLS, connection refused)
   * @param reason the Status `reason` (`Forbidden`, `Invalid`, …) or `''` when the body had none
   */
  constructor(
    message: string,
    readonly status: number,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** True when `e` is a {@link KubernetesApiError}. */
export const isKubernetesApiError = (e: unknown): e is KubernetesApiError => e instanceof KubernetesApiError;

/**
 * The HTTP status of a failed client-node call: `ApiException.code`, or undefined when `e` carries none (a network
 * error, a bug).
 */
export function httpStatusOf(e: unknown): number | undefined {
  if (typeof e !== 'object' || e === null) return undefined;
  const code = (e as { code?: unknown }).code;
  return typeof code === 'number' && code >= 100 && code <= 599 ? code : undefined;
}

/**
 * The Status object in a failed call's body (client-node keeps the body as text), or `{}` when there is none or it
 * is not JSON.
 */
export function statusOf(e: unknown): KubernetesStatus {
  if (typeof e !== 'object' || e === null) return {};
  const body = (e as { body?: unknown }).body;
  let parsed: unknown = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      return body.trim() === '' ? {} : { message: body.trim().slice(0, 500) };
    }
  }
  if (typeof parsed !== 'object' || parsed === null) return {};
  const s = parsed as { reason?: unknown; message?: unknown; code?: unknown };
  return {
    ...(typeof s.reason === 'string' ? { reason: s.reason } : {}),
    ...(typeof s.message === 'string' ? { message: s.message } : {}),
    ...(typeof s.code === 'number' ? { code: s.code } : {}),
  };
}

/**
 * Translates an error thrown by `@kubernetes/client-node` (see the module table). Skiff's own errors pass through.
 * @param e the caught error
 * @param what what was being done, e.g. `PATCH Node ip-10-0-1-2.ec2.internal`; prefixes the message
 * @param key the object, `Kind/name` or `Kind/namespace/name`; the `key` of a NotFoundError or ConflictError
 * @returns the error to throw
 */
export function kubernetesError(e: unknown, what: string, key: string): SkiffError {
  if (e instanceof SkiffError) return e;
  const status = httpStatusOf(e);
  const { reason = '', message } = statusOf(e);
  const detail = message ?? (status === undefined && e instanceof Error ? e.message : '');
  const text = `${what} failed: ${status ?? 'no response'}${reason ? ` ${reason}` : ''}${detail ? `: ${detail}` : ''}`;
  if (status === 404) return withCause(new NotFoundError(text, key), e);
  if (status === 409) return new ConflictError(text, key, { cause: e });
  if (status === 429) return new ThrottledError(text, { cause: e });
  if (status !== undefined && status >= 500) return new ApiServerUnavailableError(text, status, reason, { cause: e });
  return new KubernetesApiError(text, status ?? 0, reason, { cause: e });
}

/** NotFoundError takes no options; attach the cause afterwards so the chain survives. */
function withCause<E extends Error>(error: E, cause: unknown): E {
  Object.defineProperty(error, 'cause', { value: cause, enumerable: false, writable: true, configurable: true });
  return error;
}
