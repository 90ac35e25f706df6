/**
 * One pass's bookkeeping, shared by every phase: the report it fills, the count of its writes (a fresh read of the
 * world is needed only after one), and the writes every phase makes the same way (a conditional record write, a
 * deduplicated Event, the disrupted taint).
 */
import type { DisruptionReason, NodeClaim } from '../../core/api/nodeclaim.js';
import { DISRUPTED_NO_SCHEDULE_TAINT } from '../../core/disruption/drainable.js';
import { isConflictError } from '../../core/errors.js';
import type { ClusterEvent, ClusterNode } from '../../ports/cluster.js';
import { recordEventBestEffort } from '../events.js';
import { retryThrottled } from '../retry.js';
import type { DisruptionDeps, DisruptionReport } from './deps.js';

/**
 * The reasons of voluntary disruptions (Karpenter's graceful methods: budgeted, validated before they start, started by
 * tainting their nodes); the others (Expired, Interrupted, NodeDeleted, NodeClaimDeleted) are forceful.
 */
export const VOLUNTARY_REASONS: ReadonlySet<string> = new Set(['Empty', 'Underutilized', 'Drifted']);

/** One pass (of `disrupt`, or one `disruptNow`): its ports, its writes so far, and its report as it fills. */
export interface Pass {
  readonly deps: DisruptionDeps;
  /** Writes so far (a fresh read is needed only after one). */
  writes: number;
  /** Nodes consolidation looked at and kept this pass, with why (each gets an `Unconsolidatable` Event). */
  unconsolidatable?: { nodeClaim: string; node: string; reason: string }[];
  readonly report: {
    proposed: DisruptionReport['proposed'][number][];
    started: string[];
    rejected: { command: string; reason: string }[];
    expired: string[];
    evicted: string[];
    forceDeleted: string[];
    waiting: { pod: string; reason: string }[];
    deleted: { nodeClaim: string; reason: DisruptionReason }[];
    skipped: { nodeClaim: string; reason: string }[];
    blocked: { nodeClaim: string; node: string; reason: string }[];
    budgetBlocked: { nodePool: string; reason: 'Empty' | 'Underutilized' | 'Drifted' }[];
    searchStopped: { method: string; evaluated: number; candidates: number }[];
    followUpAfterMs?: number;
    followUpAt?: string;
    followUpFailure?: string;
  };
}

/** A new pass with an empty report and no writes. */
export function newPass(deps: DisruptionDeps): Pass {
  return { deps, writes: 0, report: { proposed: [], started: [], rejected: [], expired: [], evicted: [], forceDeleted: [], waiting: [], deleted: [], skipped: [], blocked: [], budgetBlocked: [], searchStopped: [] } };
}

/**
 * A conditional write; a conflict (someone else moved the record on) is not an error: the next pass reads it again.
 * A write a throttled store refused (it did nothing) is tried again (`retryThrottled`).
 * @returns the saved record, or undefined on a conflict
 * @throws whatever the store throws for failures other than conflicts (a `ThrottledError` after three refusals)
 */
export async function writeIgnoringConflict(pass: Pass, claim: NodeClaim): Promise<NodeClaim | undefined> {
  pass.writes++;
  try {
    return await retryThrottled(() => pass.deps.store.update(claim));
  } catch (e) {
    if (isConflictError(e)) return undefined;
    throw e;
  }
}

/** The record without its disruption (a proposal withdrawn or rejected). */
export function withoutDisruption(claim: NodeClaim): NodeClaim {
  const { disruption: _dropped, ...rest } = claim;
  return rest;
}

/**
 * How long the same `DisruptionBlocked` Event (object and message) is not written again: a node a PDB blocks would
 * otherwise get one every pass, every minute. Karpenter's event recorder deduplicates the same way (it bumps the
 * existing Event within its dedupe timeout); a changed reason is written at once.
 */
export const BLOCKED_EVENT_DEDUPE_MS = 15 * 60 * 1000;

/**
 * Writes `event` unless an Event with the same dedupe key was written less than {@link BLOCKED_EVENT_DEDUPE_MS} ago
 * (remembered in the controller's memory, per NodeClaim store).
 * @param now epoch ms
 * @param dedupe the dedupe key: by default the object and the message (a changed reason is written at once)
 */
export async function recordBlocked(pass: Pass, now: number, event: ClusterEvent, dedupe?: string): Promise<void> {
  const written = pass.deps.memory.blockedWritten;
  const key = dedupe ?? `${event.object}|${event.message}`;
  const last = written.get(key);
  if (last !== undefined && now - last < BLOCKED_EVENT_DEDUPE_MS && now >= last) return;
  if (written.size >= 10_000) written.clear(); // bound the memory; at worst an Event repeats
  written.set(key, now);
  await recordEventBestEffort(pass.deps.cluster, event);
}

/** True when the node carries `karpenter.sh/disrupted` (any effect). */
export function isTainted(node: ClusterNode | undefined): boolean {
  return !!node && node.taints.some((t) => t.key === DISRUPTED_NO_SCHEDULE_TAINT.key);
}

/**
 * Taints the node `karpenter.sh/disrupted:NoSchedule` (Karpenter `v1.DisruptedNoScheduleTaint`) unless it has it; a
 * patch a briefly unavailable API server refused (it did nothing) is tried again (`retryThrottled`).
 * @returns true when this call added the taint (false without a node or when it was there already)
 * @throws whatever the cluster port throws (a `ThrottledError` after three refusals)
 */
export async function taint(pass: Pass, node: ClusterNode | undefined): Promise<boolean> {
  if (!node || isTainted(node)) return false;
  pass.writes++;
  await retryThrottled(() => pass.deps.cluster.patchNode(node.name, { taints: [...node.taints, DISRUPTED_NO_SCHEDULE_TAINT] }));
  return true;
}

/**
 * Removes `karpenter.sh/disrupted` from the node if it has it (Karpenter core `state.RequireNoScheduleTaint(…, false,
 * …)`), keeping its other taints; a refused patch is tried again (`retryThrottled`).
 * @throws whatever the cluster port throws (a `ThrottledError` after three refusals)
 */
export async function untaint(pass: Pass, node: ClusterNode | undefined): Promise<void> {
  if (!node || !isTainted(node)) return;
  pass.writes++;
  await retryThrottled(() => pass.deps.cluster.patchNode(node.name, { taints: node.taints.filter((t) => t.key !== DISRUPTED_NO_SCHEDULE_TAINT.key) }));
}
