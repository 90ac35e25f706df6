/**
 * Kubernetes Events are best effort, as Karpenter's event recorder is: a controller pass does not fail because the API
 * server could not take an Event right now (429 or 5xx). Otherwise a pass writing many Events — one FailedScheduling
 * per pending pod — would almost never get through an overloaded API server, and the pods it would explain last would
 * never be explained. Any other error still propagates.
 */
import { isThrottledError } from '../core/errors.js';
import type { Cluster, ClusterEvent } from '../ports/cluster.js';

/**
 * Writes an Event; a throttled or unavailable API server drops it.
 * @returns true when the Event was written
 * @throws whatever `recordEvent` throws other than {@link ThrottledError} (including `ApiServerUnavailableError`)
 */
export async function recordEventBestEffort(cluster: Pick<Cluster, 'recordEvent'>, event: ClusterEvent): Promise<boolean> {
  try {
    await cluster.recordEvent(event);
    return true;
  } catch (e) {
    if (isThrottledError(e)) return false;
    throw e;
  }
}
