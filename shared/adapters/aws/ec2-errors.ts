/**
 * EC2 error codes and their translation into Skiff's errors, once, at the adapter boundary (STYLE.md rule 2).
 *
 * Two kinds of EC2 failure reach the adapter:
 * - an **exception** thrown by the SDK (the whole call failed: `UnauthorizedOperation`, `RequestLimitExceeded` after
 *   the SDK's retries, …). {@link ec2Error} turns it into a {@link ThrottledError} or a {@link CloudProviderError};
 * - an **entry of `Errors[]`** in a CreateFleet response (the call succeeded, some or all overrides failed). The
 *   provider classifies those codes with {@link isInsufficientCapacityCode} and {@link isLaunchTemplateNotFoundCode}.
 *
 * Errors are recognised by `name` (the EC2 error code the SDK puts there), never by `instanceof`, so a second
 * copy of the SDK cannot defeat the check.
 */
import { CloudProviderError, SkiffError, ThrottledError } from '../../core/errors.js';

/**
 * CreateFleet error codes that mean "no capacity for this offering right now" (ICE): the offerings are marked
 * unavailable for 3 minutes and the NodeClaim is re-solved without them.
 * Source: aws/karpenter-provider-aws `pkg/errors/errors.go` (`unfulfillableCapacityErrorCodes` and the reservation
 * check), ../shared/KARPENTER-V1.md §2.2.
 */
export const INSUFFICIENT_CAPACITY_CODES: ReadonlySet<string> = new Set([
  'InsufficientInstanceCapacity',
  'MaxSpotInstanceCountExceeded',
  'VcpuLimitExceeded',
  'UnfulfillableCapacity',
  'Unsupported',
  'InsufficientFreeAddressesInSubnet',
  'MaxFleetCountExceeded',
  'ReservationCapacityExceeded',
]);

/**
 * Codes meaning a launch template named in the request does not exist (deleted behind the cache's back): the
 * provider invalidates the node class's templates and retries once. Source: aws/karpenter-provider-aws
 * `pkg/errors/errors.go` (`InvalidLaunchTemplateName.NotFoundException`, and `InvalidLaunchTemplateId.NotFound`
 * in its not-found list); EC2 API reference "Error codes".
 */
export const LAUNCH_TEMPLATE_NOT_FOUND_CODES: ReadonlySet<string> = new Set(['InvalidLaunchTemplateName.NotFoundException', 'InvalidLaunchTemplateId.NotFound']);

/** TerminateInstances/DescribeInstances code for an instance id EC2 does not know (long gone, or never existed). */
export const INSTANCE_NOT_FOUND_CODE = 'InvalidInstanceID.NotFound';

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

/** True for a CreateFleet error code that is an insufficient-capacity error (see {@link INSUFFICIENT_CAPACITY_CODES}). */
export function isInsufficientCapacityCode(code: string | undefined): boolean {
  return code !== undefined && INSUFFICIENT_CAPACITY_CODES.has(code);
}

/** True for a code meaning a launch template does not exist (see {@link LAUNCH_TEMPLATE_NOT_FOUND_CODES}). */
export function isLaunchTemplateNotFoundCode(code: string | undefined): boolean {
  return code !== undefined && LAUNCH_TEMPLATE_NOT_FOUND_CODES.has(code);
}

/** The shape of an SDK service exception that this module reads. */
interface SdkErrorLike {
  readonly name?: unknown;
  readonly message?: unknown;
  readonly $metadata?: { readonly httpStatusCode?: number; readonly requestId?: string };
  readonly $retryable?: { readonly throttling?: boolean };
}

/**
 * The EC2 error code of an SDK exception (its `name`: `UnauthorizedOperation`, `RequestLimitExceeded`, …), or
 * undefined when `error` is not an Error.
 */
export function ec2ErrorCode(error: unknown): string | undefined {
  return error instanceof Error ? error.name : undefined;
}

/** True when the SDK would classify `error` as throttling (by name, HTTP 429, or the `$retryable.throttling` trait). */
export function isThrottling(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const e = error as SdkErrorLike;
  return THROTTLING_CODES.has(error.name) || e.$metadata?.httpStatusCode === 429 || e.$retryable?.throttling === true;
}

/**
 * Translates an exception thrown by an EC2 call into Skiff's errors: throttling that outlived the SDK's retries →
 * {@link ThrottledError}; anything else (`UnauthorizedOperation`, `InvalidParameterValue`, a network error, …) →
 * {@link CloudProviderError} whose `code` is the EC2 error code (the SDK error's `name`). The SDK error is kept as
 * `cause`; a {@link SkiffError} passes through unchanged.
 * @param error what the SDK threw
 * @param operation the EC2 action, e.g. `CreateFleet`, for the message
 * @param subject what the call was about, e.g. `NodeClaim default-x7k2p`, for the message
 * @returns the error to throw
 * @example throw ec2Error(e, 'TerminateInstances', 'i-0123456789abcdef0');
 */
export function ec2Error(error: unknown, operation: string, subject?: string): SkiffError {
  if (error instanceof SkiffError) return error;
  const code = ec2ErrorCode(error) ?? 'UnknownError';
  const detail = error instanceof Error ? error.message : String(error);
  const requestId = (error as SdkErrorLike | undefined)?.$metadata?.requestId;
  const what = `EC2 ${operation}${subject ? ` (${subject})` : ''}`;
  const suffix = requestId ? ` [request ${requestId}]` : '';
  if (isThrottling(error)) return new ThrottledError(`${what} throttled after the SDK's retries: ${code}: ${detail}${suffix}`, { cause: error });
  return new CloudProviderError(`${what} failed: ${code}: ${detail}${suffix}`, code, { cause: error });
}
