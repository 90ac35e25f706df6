/**
 * Follow-up passes port: asks for another pass of a controller (disruption, lifecycle, provisioner) sooner than its
 * schedule or its next trigger. The provisioner asks when a pass leaves pods unschedulable while offerings are marked
 * unavailable (`ProvisionDeps.followUps`). The lifecycle controller asks before it writes anything when it finds a Node to register
 * (`LifecycleDeps.followUps`, `shared/controllers/lifecycle.ts`), so a pass that dies part-way is resumed 20 s later;
 * the rest of this comment is about the disruption controller.
 *
 * EventBridge runs the disruption Lambda once a minute, while Karpenter's disruption loop runs again as soon as a
 * command has started (core `disruption/controller.go Reconcile` requeues at once) and each command waits only its
 * 15 s validation (`commandValidationDelay`). A pass with work in flight — proposals to validate, replacements to
 * wait for, drains to finish — asks for a follow-up {@link FOLLOW_UP_AFTER_MS} later, so a command is validated 20 s
 * after it was proposed instead of a minute, and the budget a finished deletion frees is used at once. Requests for
 * the same {@link FOLLOW_UP_SLOT_MS} slot coalesce into one pass (production: an SQS FIFO queue whose deduplication id
 * is the slot; the simulation: one clock event per slot). Best effort: a lost follow-up only leaves the work to the
 * next scheduled pass.
 */

/** How long after a pass with work in flight its follow-up runs: the 15 s validation delay and 5 s of slack, ms. */
export const FOLLOW_UP_AFTER_MS = 20_000;

/** Follow-up requests are rounded up to a multiple of this (epoch ms); one pass runs per slot. */
export const FOLLOW_UP_SLOT_MS = 20_000;

/**
 * The slot a follow-up requested for `atMs` runs in: `atMs` rounded up to a multiple of {@link FOLLOW_UP_SLOT_MS}.
 * @param atMs epoch ms, UTC
 * @returns epoch ms, UTC
 */
export function followUpSlot(atMs: number): number {
  return Math.ceil(atMs / FOLLOW_UP_SLOT_MS) * FOLLOW_UP_SLOT_MS;
}

/** The controllers that ask for follow-up passes; each has its own queue, and its name is the message group. */
export type FollowUpController = 'disruption' | 'lifecycle' | 'provisioner';

/** Where follow-up passes are requested. */
export interface FollowUpPasses {
  /**
   * Asks for a pass (of the controller this port belongs to) at about `atMs` (epoch ms, UTC), in the slot {@link followUpSlot} gives; requests for
   * a slot already asked for are no-ops.
   * @throws when the request cannot be sent (the caller logs it: the scheduled pass still comes)
   */
  request(atMs: number): Promise<void>;
}
