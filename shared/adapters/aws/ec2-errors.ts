/**
 * EC2 error codes and their translation into Skiff's errors, once, at the adapter boundary (docs/architecture.md#errors).
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
import { ICE_ERROR_CODES, type SkiffError } from '../../core/errors.js';
import { awsError, awsErrorCode } from './sdk-errors.js';

/**
 * CreateFleet error codes that mean "no capacity for this offering right now" (ICE): the offerings are marked
 * unavailable for 3 minutes and the NodeClaim is re-solved without them.
 * Source: aws/karpenter-provider-aws `pkg/errors/errors.go` (`unfulfillableCapacityErrorCodes` and the reservation
 * check), docs/karpenter-semantics.md#insufficient-capacity.
 */
export const INSUFFICIENT_CAPACITY_CODES: ReadonlySet<string> = new Set(ICE_ERROR_CODES);

/**
 * Codes meaning a launch template named in the request does not exist (deleted behind the cache's back): the
 * provider invalidates the node class's templates and retries once. Source: aws/karpenter-provider-aws
 * `pkg/errors/errors.go` (`InvalidLaunchTemplateName.NotFoundException`, and `InvalidLaunchTemplateId.NotFound`
 * in its not-found list); EC2 API reference "Error codes".
 */
export const LAUNCH_TEMPLATE_NOT_FOUND_CODES: ReadonlySet<string> = new Set(['InvalidLaunchTemplateName.NotFoundException', 'InvalidLaunchTemplateId.NotFound']);

/** TerminateInstances/DescribeInstances code for an instance id EC2 does not know (long gone, or never existed). */
export const INSTANCE_NOT_FOUND_CODE = 'InvalidInstanceID.NotFound';

/** True for a CreateFleet error code that is an insufficient-capacity error (see {@link INSUFFICIENT_CAPACITY_CODES}). */
export function isInsufficientCapacityCode(code: string | undefined): boolean {
  return code !== undefined && INSUFFICIENT_CAPACITY_CODES.has(code);
}

/** True for a code meaning a launch template does not exist (see {@link LAUNCH_TEMPLATE_NOT_FOUND_CODES}). */
export function isLaunchTemplateNotFoundCode(code: string | undefined): boolean {
  return code !== undefined && LAUNCH_TEMPLATE_NOT_FOUND_CODES.has(code);
}

/** The EC2 error code of an SDK exception (its `name`), or undefined when `error` is not an error. */
export const ec2ErrorCode = awsErrorCode;

/**
 * Translates an exception thrown by an EC2 call into Skiff's errors (see {@link awsError}): throttling that outlived
 * the SDK's retries → {@link ThrottledError}; anything else → {@link CloudProviderError} with the EC2 code.
 * @param error what the SDK threw
 * @param operation the EC2 action, e.g. `CreateFleet`, for the message
 * @param subject what the call was about, e.g. `NodeClaim default-x7k2p`, for the message
 * @returns the error to throw
 * @example throw ec2Error(e, 'TerminateInstances', 'i-0123456789abcdef0');
 */
export function ec2Error(error: unknown, operation: string, subject?: string): SkiffError {
  return awsError(error, `EC2 ${operation}${subject ? ` (${subject})` : ''}`);
}
