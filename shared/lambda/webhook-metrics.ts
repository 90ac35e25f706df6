/**
 * The webhook's own metric: requests it refused. Defined here rather than in `shared/core/metrics.ts` because only
 * the webhook Lambda publishes it; the shape is the core's {@link MetricDefinition}, the namespace and the
 * `service`/`cluster` dimension set are the ones every Skiff metric is published with (`createEmfPublisher` in
 * `shared/lambda/metrics.ts`), and the stack's alarm reads the name from here (`infra/metric-names.ts`).
 *
 * What it is for (docs/contracts.md#webhook): the relay posts one signed batch at a time and retries, so a healthy
 * webhook refuses next to nothing. Refusals that keep coming mean a flood of unsigned or forged requests (someone has
 * the Function URL) or a relay whose secret or clock is wrong; `reason` tells which.
 */
import { DIMENSIONS, type MetricDataPoint, type MetricDefinition } from '../core/metrics.js';

/** `skiff_webhook_requests_refused_total`: a counter, dimensions `code` (the HTTP status) and `reason` (the problem). */
export const WEBHOOK_REQUESTS_REFUSED: MetricDefinition = {
  name: 'skiff_webhook_requests_refused_total',
  unit: 'Count',
  dimensions: [DIMENSIONS.code, DIMENSIONS.reason],
  kind: 'counter',
  description:
    'Webhook requests refused before anything was enqueued, by HTTP status (code: 405, 413, 401, 400) and problem (reason: method, too-large, missing-timestamp, malformed-timestamp, stale-timestamp, missing-signature, malformed-signature, wrong-signature, not-json, schema, wrong-cluster). Requests Lambda throttled beyond the reserved concurrency never reach the function: they are the AWS/Lambda Throttles metric.',
  source: 'Skiff (docs/contracts.md#webhook)',
};

/**
 * The data point of one refused request: {@link WEBHOOK_REQUESTS_REFUSED}, value 1.
 * @param refusal the refusal's HTTP status (4xx) and its machine-readable problem (`WebhookRequestError.problem`)
 * @example webhookRefusalMetric({ statusCode: 401, problem: 'missing-timestamp' })
 *   // { name: 'skiff_webhook_requests_refused_total', unit: 'Count', value: 1, dimensions: { code: '401', reason: 'missing-timestamp' } }
 */
export function webhookRefusalMetric(refusal: { readonly statusCode: number; readonly problem: string }): MetricDataPoint {
  return {
    name: WEBHOOK_REQUESTS_REFUSED.name,
    unit: WEBHOOK_REQUESTS_REFUSED.unit,
    value: 1,
    dimensions: { [DIMENSIONS.code]: String(refusal.statusCode), [DIMENSIONS.reason]: refusal.problem },
  };
}
