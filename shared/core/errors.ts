import type { OfferingKey } from './instancetypes/offering-key.js';

/**
 * Skiff's error hierarchy. One base class, small named subclasses with typed context, `isX()` guards.
 * Expected outcomes (an unschedulable pod, a disruption that should not happen) are values, not errors;
 * these classes are for failures.
 */

/** Base class of every error Skiff throws on purpose. `cause` chains the underlying error. */
export class SkiffError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Where in an input file a problem was found. `line` is 1-based; `path` is a field path like `spec.template.spec.requirements[0].operator`. */
export interface SourceLocation {
  readonly file: string;
  readonly line?: number;
  readonly column?: number;
  readonly path?: string;
}

/** One problem in an input manifest or scenario. */
export interface ValidationIssue extends SourceLocation {
  readonly message: string;
}

/**
 * An input (manifest, scenario, CLI argument) is invalid. Carries every issue found so the user can fix them
 * all in one go; `message` lists them as `file:line: path: message`.
 */
export class ValidationError extends SkiffError {
  readonly issues: readonly ValidationIssue[];
  constructor(issues: readonly ValidationIssue[], options?: { cause?: unknown }) {
    super(issues.map(formatIssue).join('\n'), options);
    this.issues = issues;
  }
}

/** Formats an issue as `file:line:column: path: message` (omitting what is unknown). */
export function formatIssue(issue: ValidationIssue): string {
  const where = [issue.file, issue.line, issue.line !== undefined ? issue.column : undefined].filter((x) => x !== undefined).join(':');
  return `${where}: ${issue.path ? `${issue.path}: ` : ''}${issue.message}`;
}

/** A Kubernetes quantity string (e.g. `500m`, `1.5Gi`) that cannot be parsed. */
export class QuantityError extends SkiffError {
  constructor(readonly quantity: string, reason = 'not a valid Kubernetes quantity') {
    super(`${JSON.stringify(quantity)}: ${reason}`);
  }
}

/** An optimistic-concurrency or conditional-write conflict in a store: somebody else got there first. */
export class ConflictError extends SkiffError {
  constructor(message: string, readonly key: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The requested record does not exist in a store. */
export class NotFoundError extends SkiffError {
  constructor(message: string, readonly key: string) {
    super(message);
  }
}

/** Capacity errors (ICE) for the given offerings: the caller marks them unavailable and re-solves without them. */
export class InsufficientCapacityError extends SkiffError {
  constructor(
    message: string,
    readonly offerings: readonly OfferingKey[],
    readonly errorCode: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A cloud API call was throttled (EC2 `RequestLimitExceeded`); retry with backoff. */
export class ThrottledError extends SkiffError {}

/** A cloud-provider call failed for a reason other than capacity or throttling. `code` is the provider's error code. */
export class CloudProviderError extends SkiffError {
  constructor(message: string, readonly code: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * The Kubernetes API server answered 5xx (`InternalError`, `ServiceUnavailable`, `Timeout`): retry with backoff. A subclass of
 * {@link ThrottledError}, so `isThrottledError` is true for it.
 */
export class ApiServerUnavailableError extends ThrottledError {
  /**
   * @param status the HTTP status code (500–599)
   * @param reason the Status `reason`, or `''`
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

/** True when `e` is a {@link ValidationError}. */
export const isValidationError = (e: unknown): e is ValidationError => e instanceof ValidationError;
/** True when `e` is a {@link ConflictError}. */
export const isConflictError = (e: unknown): e is ConflictError => e instanceof ConflictError;
/** True when `e` is a {@link NotFoundError}. */
export const isNotFoundError = (e: unknown): e is NotFoundError => e instanceof NotFoundError;
/** True when `e` is an {@link InsufficientCapacityError}. */
export const isInsufficientCapacityError = (e: unknown): e is InsufficientCapacityError => e instanceof InsufficientCapacityError;
/** True when `e` is a {@link ThrottledError}. */
export const isThrottledError = (e: unknown): e is ThrottledError => e instanceof ThrottledError;
/** True when `e` is an {@link ApiServerUnavailableError}. */
export const isApiServerUnavailableError = (e: unknown): e is ApiServerUnavailableError => e instanceof ApiServerUnavailableError;
/** True when `e` is a {@link CloudProviderError}. */
export const isCloudProviderError = (e: unknown): e is CloudProviderError => e instanceof CloudProviderError;

/** EC2 error codes Karpenter treats as insufficient capacity (aws `pkg/errors/errors.go`; docs/karpenter-semantics.md#insufficient-capacity). */
export const ICE_ERROR_CODES = [
  'InsufficientInstanceCapacity',
  'MaxSpotInstanceCountExceeded',
  'VcpuLimitExceeded',
  'UnfulfillableCapacity',
  'Unsupported',
  'InsufficientFreeAddressesInSubnet',
  'MaxFleetCountExceeded',
  'ReservationCapacityExceeded',
] as const;
/** One of {@link ICE_ERROR_CODES}. */
export type IceErrorCode = (typeof ICE_ERROR_CODES)[number];
