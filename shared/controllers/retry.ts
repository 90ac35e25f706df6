/**
 * Calls that a throttled or briefly unavailable API refused are tried again within the pass.
 *
 * Karpenter's controllers read NodePools, Nodes, Pods and NodeClaims from informer caches, so a read never fails; the
 * API calls that can be throttled are its writes and the cloud provider's. Skiff's controllers are stateless Lambdas
 * that read the API server, DynamoDB and EC2 live at the start of every pass, so one refused read used to end the pass
 * before it did anything (issue 21: with every fault on, half of the lifecycle passes died on their first reads).
 * A refused call did nothing (a `ThrottledError` is raised before the request is served: EC2 `RequestLimitExceeded`,
 * DynamoDB `ProvisionedThroughputExceededException`, an API server 429 or 5xx), so trying a read, or a conditional
 * write, again is always safe.
 */
import { isThrottledError } from '../core/errors.js';

/** How many times a pass tries one call before it gives up (the first try included). */
export const THROTTLED_ATTEMPTS = 3;

/**
 * Runs `call`, trying it again (at once, up to {@link THROTTLED_ATTEMPTS} tries in all) when it fails with a
 * `ThrottledError`. The AWS SDK and the Kubernetes client have already backed off before such an error reaches Skiff,
 * so the extra tries are not delayed.
 * @param call a read (a list, a get) or a conditional write: a call whose repetition cannot act twice
 * @returns what `call` returns
 * @throws the last `ThrottledError` when every try was refused, and any other error at once
 * @example const nodes = await retryThrottled(() => deps.cluster.listNodes());
 */
export async function retryThrottled<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (e) {
      if (!isThrottledError(e) || attempt >= THROTTLED_ATTEMPTS) throw e;
    }
  }
}
