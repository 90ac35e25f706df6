/**
 * Environment variable names the Lambdas read, shared with `infra/` (a construct's `grantX(fn)` sets the variable
 * it grants), so a name is spelled in one place.
 */
import { SkiffError } from '../core/errors.js';

/** Names of the webhook Lambda's environment variables. */
export const WEBHOOK_ENV = {
  /** The EKS cluster name the stack serves; the FIFO MessageGroupId and the only cluster batches may name. */
  cluster: 'SKIFF_CLUSTER',
  /** URL of the SQS FIFO pod-event queue (`…/skiff-pod-events.fifo`). */
  podEventsQueueUrl: 'SKIFF_POD_EVENTS_QUEUE_URL',
  /** Name or ARN of the Secrets Manager secret holding the webhook HMAC key. */
  webhookSecretId: 'SKIFF_WEBHOOK_SECRET_ID',
} as const;

/** A required environment variable is missing or empty. */
export class ConfigurationError extends SkiffError {
  /** @param variable the variable's name */
  constructor(readonly variable: string, message = `environment variable ${variable} is not set`) {
    super(message);
  }
}

/**
 * The value of a required variable.
 * @throws {ConfigurationError} when it is unset or empty
 */
export function requireEnv(env: Readonly<Record<string, string | undefined>>, name: string): string {
  const value = env[name]?.trim();
  if (value === undefined || value === '') throw new ConfigurationError(name);
  return value;
}
