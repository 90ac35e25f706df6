/**
 * The webhook's HMAC secret from AWS Secrets Manager, through Powertools Parameters (`SecretsProvider`), cached for
 * `maxAgeSeconds` so a warm Lambda calls `GetSecretValue` at most once per window (Powertools caches per provider
 * instance, in memory). The secret's `SecretString` is the key itself (the relay reads the same string from its
 * Kubernetes Secret).
 *
 * Rotation: after the secret changes, a warm webhook still holds the old value for up to `maxAgeSeconds`. A request
 * whose signature does not match asks for a forced refresh ({@link WebhookSecret} with `refresh: true`), honoured at
 * most once per `minRefreshIntervalSeconds`, so a new secret is picked up at once while a flood of forged requests
 * cannot turn into a flood of Secrets Manager calls.
 */
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SkiffError } from '../core/errors.js';
import type { Clock } from '../ports/clock.js';

/** How long a fetched secret is reused, seconds. @see webhookSecret */
export const WEBHOOK_SECRET_MAX_AGE_SECONDS = 300;
/** Least time between two forced refreshes, seconds. */
export const WEBHOOK_SECRET_MIN_REFRESH_SECONDS = 60;

/** The webhook secret could not be read, or is not usable as an HMAC key. */
export class WebhookSecretError extends SkiffError {
  /** @param secretId the secret's name or ARN */
  constructor(
    message: string,
    readonly secretId: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** True when `e` is a {@link WebhookSecretError}. */
export const isWebhookSecretError = (e: unknown): e is WebhookSecretError => e instanceof WebhookSecretError;

/** Returns the current secret; `refresh: true` asks to bypass the cache (rate-limited). */
export type WebhookSecret = (options?: { readonly refresh?: boolean }) => Promise<string>;

/** Options of {@link webhookSecret}. */
export interface WebhookSecretOptions {
  /** Name or ARN of the Secrets Manager secret. */
  readonly secretId: string;
  /** Cache lifetime, seconds. @default {@link WEBHOOK_SECRET_MAX_AGE_SECONDS} */
  readonly maxAgeSeconds?: number;
  /** Least time between forced refreshes, seconds. @default {@link WEBHOOK_SECRET_MIN_REFRESH_SECONDS} */
  readonly minRefreshIntervalSeconds?: number;
  /** The SDK client (tests pass a mocked one). @default a new client for the Lambda's region */
  readonly client?: SecretsManagerClient;
  readonly clock: Clock;
}

/**
 * A cached reader of the webhook secret.
 * @throws (from the returned function) {@link WebhookSecretError} when Secrets Manager fails, the secret is binary, or
 * it is empty
 * @example
 * const secret = webhookSecret({ secretId: process.env.SKIFF_WEBHOOK_SECRET_ARN!, clock: systemClock });
 * const key = await secret();
 */
export function webhookSecret(options: WebhookSecretOptions): WebhookSecret {
  const provider = new SecretsProvider(options.client ? { awsSdkV3Client: options.client } : {});
  const maxAge = options.maxAgeSeconds ?? WEBHOOK_SECRET_MAX_AGE_SECONDS;
  const minRefreshMs = (options.minRefreshIntervalSeconds ?? WEBHOOK_SECRET_MIN_REFRESH_SECONDS) * 1000;
  let lastForcedAt = Number.NEGATIVE_INFINITY;
  return async (request) => {
    const now = options.clock.now();
    const forceFetch = request?.refresh === true && now - lastForcedAt >= minRefreshMs;
    if (forceFetch) lastForcedAt = now;
    let value: string | Uint8Array | undefined;
    try {
      value = await provider.get(options.secretId, { maxAge, forceFetch });
    } catch (e) {
      throw new WebhookSecretError(`reading webhook secret ${options.secretId} failed: ${e instanceof Error ? e.message : String(e)}`, options.secretId, { cause: e });
    }
    if (value instanceof Uint8Array) throw new WebhookSecretError(`webhook secret ${options.secretId} is binary (SecretBinary); store the key as SecretString`, options.secretId);
    if (value === undefined || value === '') throw new WebhookSecretError(`webhook secret ${options.secretId} is empty`, options.secretId);
    return value;
  };
}
