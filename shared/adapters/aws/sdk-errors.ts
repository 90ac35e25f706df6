/**
 * Translation of AWS SDK errors into Skiff's errors, once, at the adapter edge (docs/architecture.md#errors), for every AWS
 * service Skiff calls (EC2, SSM, IAM, Pricing; DynamoDB's `storeError` shares the throttling test): throttling
 * becomes {@link ThrottledError}, anything else {@link CloudProviderError} carrying the service's error code (the SDK
 * v3 puts it in the error's `name`). EC2-specific codes (capacity, launch templates) live in `ec2-errors.ts`.
 */
import { CloudProviderError, SkiffError, ThrottledError } from '../../core/errors.js';

/**
 * Error names the SDK classifies as throttling and retries with jittered exponential backoff (EC2's is
 * `RequestLimitExceeded`). Seeing one here means the retries ran out. Source: the SDK's own list,
 * `@smithy/core` `submodules/retry/service-error-classification/constants.ts` (`THROTTLING_ERROR_CODES`), which
 * also treats HTTP 429 and a `$retryable.throttling` trait as throttling — so does {@link isThrottling}.
 */
export const THROTTLING_CODES: ReadonlySet<string> = new Set([
  'BandwidthLimitExceeded',
  'EC2ThrottledException',
  'LimitExceededException',
  'PriorRequestNotComplete',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
  'ThrottledException',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'TransactionInProgressException',
]);

/** The shape of an SDK service exception that this module reads. */
interface SdkErrorLike {
  readonly $metadata?: { readonly httpStatusCode?: number; readonly requestId?: string };
  readonly $retryable?: { readonly throttling?: boolean };
}

/** True when the SDK would classify `error` as throttling (by code, HTTP 429, or the `$retryable.throttling` trait). */
export function isThrottling(error: unknown): boolean {
  const code = awsErrorCode(error);
  if (code === undefined) return false;
  const e = error as SdkErrorLike;
  return THROTTLING_CODES.has(code) || e.$metadata?.httpStatusCode === 429 || e.$retryable?.throttling === true;
}

/**
 * The AWS error code of `e` (the SDK v3 error `name`, e.g. `InvalidLaunchTemplateName.NotFoundException`), or
 * undefined when `e` is not an error.
 * @example awsErrorCode(new NoSuchEntityException({ message: 'x', $metadata: {} })) // 'NoSuchEntityException'
 */
export function awsErrorCode(e: unknown): string | undefined {
  if (typeof e !== 'object' || e === null) return undefined;
  const code = (e as { name?: unknown; Code?: unknown }).name ?? (e as { Code?: unknown }).Code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Wraps an AWS SDK error: throttling → {@link ThrottledError}, otherwise {@link CloudProviderError} with the code.
 * Skiff's own errors pass through unchanged.
 * @param e the caught error
 * @param what what was being done, e.g. `DescribeSubnets for EC2NodeClass default`; prefixes the message
 * @returns the error to throw
 */
export function awsError(e: unknown, what: string): SkiffError {
  if (e instanceof SkiffError) return e;
  const code = awsErrorCode(e) ?? 'UnknownError';
  const detail = e instanceof Error ? e.message : String(e);
  const requestId = (e as SdkErrorLike | undefined)?.$metadata?.requestId;
  const suffix = requestId ? ` [request ${requestId}]` : '';
  if (isThrottling(e)) return new ThrottledError(`${what} throttled after the SDK's retries: ${code}: ${detail}${suffix}`, { cause: e });
  return new CloudProviderError(`${what} failed: ${code}: ${detail}${suffix}`, code, { cause: e });
}
