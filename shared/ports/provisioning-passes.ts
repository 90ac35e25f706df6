/**
 * ProvisioningPasses port: when the last complete provisioning pass started. Pod events are triggers; a pass that
 * started after an event was sent has already seen the state that event reports, so the event needs no pass of its
 * own. This coalesces a burst (2,000 pending pods arrive as 200 SQS batches of 10) into one solve.
 * Adapter: DynamoDB (`shared/adapters/aws/provisioning-pass-store.ts`).
 */

/** The provisioner's record of completed passes for one cluster. Times are epoch ms (UTC). */
export interface ProvisioningPasses {
  /** Start time of the latest pass that completed, or undefined when none has. */
  lastCompletedStart(): Promise<number | undefined>;
  /** Records that a pass which started at `startedAtMs` completed. Keeps the latest; an older value is a no-op. */
  recordCompleted(startedAtMs: number): Promise<void>;
}
