import { EC2ServiceException } from '@aws-sdk/client-ec2';
import { describe, expect, it } from 'vitest';
import { ec2Error, isInsufficientCapacityCode, isLaunchTemplateNotFoundCode } from '../../../shared/adapters/aws/ec2-errors.js';
import { isThrottling } from '../../../shared/adapters/aws/sdk-errors.js';
import { CloudProviderError, InsufficientCapacityError, SkiffError, ThrottledError } from '../../../shared/core/errors.js';

function serviceError(name: string, httpStatusCode = 400, extra: { $retryable?: { throttling: boolean } } = {}): EC2ServiceException {
  // The constructor does not take `$retryable`; the SDK's deserialiser sets it on the instance the same way.
  return Object.assign(new EC2ServiceException({ name, message: `${name} message`, $fault: 'client', $metadata: { httpStatusCode, requestId: 'req-9' } }), extra);
}

describe('ec2Error', () => {
  it.each([
    ['RequestLimitExceeded', 503],
    ['Throttling', 400],
    ['ThrottlingException', 400],
    ['EC2ThrottledException', 400],
  ])('turns %s (the SDK retried it already) into ThrottledError with the SDK error as cause', (name, status) => {
    const sdk = serviceError(name, status);
    const error = ec2Error(sdk, 'CreateFleet', 'NodeClaim general-x7k2p');
    expect(error).toBeInstanceOf(ThrottledError);
    expect(error.cause).toBe(sdk);
    expect(error.message).toBe(`EC2 CreateFleet (NodeClaim general-x7k2p) throttled after the SDK's retries: ${name}: ${name} message [request req-9]`);
  });

  it('treats HTTP 429 and the throttling trait as throttling, like the SDK', () => {
    expect(ec2Error(serviceError('SomethingNew', 429), 'DescribeInstances')).toBeInstanceOf(ThrottledError);
    expect(ec2Error(serviceError('SomethingElse', 400, { $retryable: { throttling: true } }), 'DescribeInstances')).toBeInstanceOf(ThrottledError);
  });

  it.each(['UnauthorizedOperation', 'InvalidParameterValue', 'IdempotentParameterMismatch', 'InternalError'])('turns %s into CloudProviderError keeping the code', (name) => {
    const sdk = serviceError(name);
    const error = ec2Error(sdk, 'TerminateInstances', 'i-0abc');
    expect(error).toBeInstanceOf(CloudProviderError);
    expect(error).toMatchObject({ code: name, cause: sdk, message: `EC2 TerminateInstances (i-0abc) failed: ${name}: ${name} message [request req-9]` });
  });

  it('passes Skiff errors through unchanged', () => {
    const ice = new InsufficientCapacityError('no capacity', [], 'InsufficientInstanceCapacity');
    expect(ec2Error(ice, 'CreateFleet')).toBe(ice);
    const skiff = new SkiffError('x');
    expect(ec2Error(skiff, 'CreateFleet')).toBe(skiff);
  });

  it('names a network error by its error name and a thrown non-Error UnknownError', () => {
    const timeout = Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
    expect(ec2Error(timeout, 'CreateFleet')).toMatchObject({ name: 'CloudProviderError', code: 'TimeoutError' });
    expect(ec2Error('boom', 'CreateFleet')).toMatchObject({ name: 'CloudProviderError', code: 'UnknownError', message: 'EC2 CreateFleet failed: UnknownError: boom' });
  });
});

describe('isThrottling', () => {
  it('is false for non-errors and client errors', () => {
    expect(isThrottling(undefined)).toBe(false);
    expect(isThrottling('RequestLimitExceeded')).toBe(false);
    expect(isThrottling(serviceError('UnauthorizedOperation', 403))).toBe(false);
  });
});

describe('isInsufficientCapacityCode', () => {
  it.each([
    ['InsufficientInstanceCapacity', true],
    ['MaxSpotInstanceCountExceeded', true],
    ['VcpuLimitExceeded', true],
    ['UnfulfillableCapacity', true],
    ['Unsupported', true],
    ['InsufficientFreeAddressesInSubnet', true],
    ['MaxFleetCountExceeded', true],
    ['ReservationCapacityExceeded', true],
    ['InvalidParameterValue', false],
    ['InvalidLaunchTemplateName.NotFoundException', false],
    ['RequestLimitExceeded', false],
    [undefined, false],
  ])('%s → %s', (code, expected) => {
    expect(isInsufficientCapacityCode(code)).toBe(expected);
  });
});

describe('isLaunchTemplateNotFoundCode', () => {
  it.each([
    ['InvalidLaunchTemplateName.NotFoundException', true],
    ['InvalidLaunchTemplateId.NotFound', true],
    ['InvalidLaunchTemplateName.MalformedException', false],
    ['InsufficientInstanceCapacity', false],
    [undefined, false],
  ])('%s → %s', (code, expected) => {
    expect(isLaunchTemplateNotFoundCode(code)).toBe(expected);
  });
});
