/**
 * Queue port: the SQS FIFO queue that carries pod events from the webhook to the provisioner.
 * Adapters: SQS (with the webhook), and the simulation's in-memory FIFO queue (`shared/sim/memory-queue.ts`).
 */

/** Sends messages to a FIFO queue. */
export interface Queue {
  /**
   * Enqueues `body`. A second send with the same `deduplicationId` within 5 minutes is accepted and dropped
   * (SQS FIFO content deduplication window).
   */
  send(body: string, options: { readonly groupId: string; readonly deduplicationId: string }): Promise<void>;
}
