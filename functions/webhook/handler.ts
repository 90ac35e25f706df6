/**
 * The webhook Lambda, behind a Function URL: the in-cluster relay posts signed batches of pod and node events; each
 * valid event becomes one message on the SQS FIFO pod-event queue (group = cluster, deduplication id =
 * `uid:resourceVersion`).
 *
 * Responses: 202 `{"accepted": n}` when every event is enqueued; 405/413/401/400 when the request is refused (see
 * `shared/lambda/webhook-request.ts`), and then nothing is enqueued; 503 when the queue did not take every event
 * (the relay retries the whole batch — FIFO deduplication drops the events already stored); 500 when the secret
 * cannot be read. The request body is never logged. Every refused request (4xx) is logged at `warn` and counted in
 * `skiff_webhook_requests_refused_total{code, reason}` (`shared/lambda/webhook-metrics.ts`), which the stack alarms on.
 */
import middy from '@middy/core';
import httpErrorHandler from '@middy/http-error-handler';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { WebhookBatch } from '../../shared/core/api/webhook-batch.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { Log } from '../../shared/lambda/log.js';
import { publishMetrics, type MetricsPublisher } from '../../shared/lambda/metrics.js';
import { webhookRefusalMetric } from '../../shared/lambda/webhook-metrics.js';
import { readWebhookRequest, toQueueMessages, WebhookRequestError, type WebhookQueueMessage } from '../../shared/lambda/webhook-request.js';
import type { WebhookSecret } from '../../shared/lambda/webhook-secret.js';
import { webhookDepsFromEnv } from '../../shared/lambda/webhook-wiring.js';

/** What the handler needs. */
export interface WebhookHandlerDeps {
  /** The cluster this webhook serves (the stack's cluster); batches for another are refused. */
  readonly cluster: string;
  /** The HMAC secret (cached; `refresh` asks for a fresh read after a signature mismatch). */
  readonly secret: WebhookSecret;
  /** Enqueues messages in order; throws when some were not stored. */
  readonly enqueue: (messages: readonly WebhookQueueMessage[]) => Promise<void>;
  readonly clock: Clock;
  readonly log: Log;
  /** Where `skiff_webhook_requests_refused_total` goes (EMF in the Lambda); none: not counted. */
  readonly metrics?: MetricsPublisher;
}

/**
 * Builds the handler: header normalisation, then verify-and-parse (a refusal is counted), enqueue, and the HTTP
 * error mapping.
 * @example
 * const handle = createHandler({ cluster: 'prod', secret: async () => 's3cret', enqueue: (m) => queue.sendBatch(m), clock: systemClock, log });
 */
export function createHandler(deps: WebhookHandlerDeps): (event: APIGatewayProxyEventV2, context?: unknown) => Promise<APIGatewayProxyStructuredResultV2> {
  const run = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
    let batch: WebhookBatch;
    try {
      batch = await readWebhookRequest(event, { secret: deps.secret, nowMs: deps.clock.now(), cluster: deps.cluster });
    } catch (e) {
      if (e instanceof WebhookRequestError) publishMetrics(deps.metrics, [webhookRefusalMetric(e)], deps.log);
      throw e;
    }
    try {
      await deps.enqueue(toQueueMessages(batch));
    } catch (e) {
      deps.log.error('webhook batch not enqueued; the relay will retry', { cluster: batch.cluster, events: batch.events.length, error: e instanceof Error ? e.message : String(e) });
      return json(503, { message: 'the pod-event queue did not take every event; retry the batch' });
    }
    deps.log.info('webhook batch enqueued', { cluster: batch.cluster, events: batch.events.length });
    return json(202, { accepted: batch.events.length });
  };
  const handler = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>()
    .use(httpHeaderNormalizer())
    .use(
      httpErrorHandler({
        logger: (e: unknown) => {
          if (e instanceof WebhookRequestError) deps.log.warn('webhook request refused', { status: e.statusCode, problem: e.problem, message: e.message.split('\n')[0] });
          else deps.log.error('webhook request failed', { error: e instanceof Error ? e.message : String(e) });
        },
        fallbackMessage: 'internal error',
      }),
    )
    .handler(run);
  return (event, context) => handler(event, (context ?? {}) as never);
}

function json(statusCode: number, body: unknown): APIGatewayProxyStructuredResultV2 {
  return { statusCode, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

let production: ReturnType<typeof createHandler> | undefined;

/**
 * The Lambda entry point: builds the production dependencies from the environment on the first invocation (no
 * import-time side effects) and reuses them while the Lambda stays warm.
 * @throws {ConfigurationError} on the first invocation when an environment variable is missing
 */
export const handler = (event: APIGatewayProxyEventV2, context?: unknown): Promise<APIGatewayProxyStructuredResultV2> => {
  production ??= createHandler(webhookDepsFromEnv(process.env));
  return production(event, context);
};
