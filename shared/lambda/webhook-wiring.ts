/**
 * The webhook Lambda's production dependencies (its AWS composition root): the SQS FIFO adapter, the cached Secrets
 * Manager secret, the wall clock, a Powertools logger and the EMF metrics publisher, configured from the environment
 * ({@link WEBHOOK_ENV}).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SqsQueue } from '../adapters/aws/sqs-queue.js';
import { systemClock, type Clock } from '../ports/clock.js';
import { requireEnv, WEBHOOK_ENV } from './env.js';
import type { Log } from './log.js';
import { createEmfPublisher, type MetricsPublisher } from './metrics.js';
import type { WebhookQueueMessage } from './webhook-request.js';
import { webhookSecret, type WebhookSecret } from './webhook-secret.js';

/** The webhook handler's dependencies (structurally `WebhookHandlerDeps` of `functions/webhook/handler.ts`). */
export interface WebhookDeps {
  readonly cluster: string;
  readonly secret: WebhookSecret;
  readonly enqueue: (messages: readonly WebhookQueueMessage[]) => Promise<void>;
  readonly clock: Clock;
  readonly log: Log;
  /** `skiff_webhook_requests_refused_total` as EMF (namespace `Skiff`, dimensions `service` and `cluster`). */
  readonly metrics: MetricsPublisher;
}

/**
 * Builds the webhook's dependencies from `env`. Creates clients only (no network call until the first request).
 * @throws {ConfigurationError} naming the first missing variable of {@link WEBHOOK_ENV}
 */
export function webhookDepsFromEnv(env: Readonly<Record<string, string | undefined>>): WebhookDeps {
  const cluster = requireEnv(env, WEBHOOK_ENV.cluster);
  const queue = new SqsQueue({ client: new SQSClient({}), queueUrl: requireEnv(env, WEBHOOK_ENV.podEventsQueueUrl) });
  const secret = webhookSecret({ secretId: requireEnv(env, WEBHOOK_ENV.webhookSecretId), clock: systemClock });
  return {
    cluster,
    secret,
    enqueue: (messages) => queue.sendBatch(messages),
    clock: systemClock,
    log: powertoolsLog(new Logger({ serviceName: 'skiff-webhook', persistentKeys: { cluster } })),
    metrics: createEmfPublisher({ clusterName: cluster }),
  };
}

/** A Powertools `Logger` behind the {@link Log} surface (attributes become structured keys). */
export function powertoolsLog(logger: Logger): Log {
  const at = (attributes?: Record<string, unknown>) => (attributes ? [attributes] : []) as [];
  return {
    debug: (message, attributes) => logger.debug(message, ...at(attributes)),
    info: (message, attributes) => logger.info(message, ...at(attributes)),
    warn: (message, attributes) => logger.warn(message, ...at(attributes)),
    error: (message, attributes) => logger.error(message, ...at(attributes)),
  };
}
