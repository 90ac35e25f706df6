/**
 * What a disruption pass does first, so that a pass cut short after a few side effects (a crash, a timeout, a
 * throttled call) still moves the most urgent work on, and the next pass comes 20 s later rather than a minute:
 *
 * - {@link requestFollowUpEarly}: a pass that reads work in flight asks for its follow-up before its first side effect
 *   (the lifecycle controller does the same, `LifecycleDeps.followUps`);
 * - {@link dueDrains}: drains whose terminationGracePeriod is running out, earliest deadline first — run before
 *   anything else in the pass;
 * - {@link drainOrder}: the other drains, earliest deadline first, then those without a deadline in the order the
 *   records are listed, every pass. Not rotated: Skiff's plans predict kube-scheduler's binding of evicted pods in this
 *   order (`binding-replay.ts`), and starting each pass elsewhere made a scale-in's repacking 12 % dearer with no fault.
 *
 * Karpenter has no such order to keep: its termination controller reconciles each Node on its own worker, with a
 * per-object requeue (core `pkg/controllers/node/termination/controller.go`), and expiration is its own controller
 * (core `pkg/controllers/nodeclaim/expiration`), so nothing one node waits on delays another's deadline. Skiff runs all
 * of it in one pass per invocation, which a crash ends at once (docs/architecture.md, disruption).
 */
import { isLive, type NodeClaim } from '../../core/api/nodeclaim.js';
import { timestampMs } from '../../core/api/timestamp.js';
import { FOLLOW_UP_AFTER_MS } from '../../ports/follow-up-passes.js';
import { worldFingerprint } from './consolidated.js';
import { drainDeadline, drainDueAt } from './drain.js';
import { driftOf } from './methods/drift.js';
import type { Pass } from './pass.js';
import type { World } from './world.js';

/**
 * True when a pass reading `world` has work it may be cut short in: a disruption in flight (a proposal to validate,
 * replacements to wait for, a drain to finish — its terminationGracePeriod deadline among them), a NodeClaim past its
 * expireAfter not yet draining (`forceful.ts expire`), or a drifted NodeClaim not yet disrupted — unless the last
 * search found nothing to do in this very world (`consolidated.ts`: a drifted node the budget or a do-not-disrupt
 * holds back would otherwise keep a follow-up chain going every 20 s).
 */
export function hasWorkInFlight(pass: Pass, world: World): boolean {
  let drifted = false;
  for (const c of world.claims) {
    if (!isLive(c)) continue;
    if (c.disruption) return true;
    if (c.state === 'Pending' || c.state === 'Deleting') continue;
    if (c.expireAfterSeconds != null && world.now >= timestampMs(c.createdAt) + c.expireAfterSeconds * 1000) return true;
    if (!drifted && c.state === 'Initialized' && driftOf(world, c, pass.deps.memory) !== undefined) drifted = true;
  }
  if (!drifted) return false;
  const last = pass.deps.memory.consolidated;
  return !last || last.fingerprint !== worldFingerprint(world, pass.deps.memory);
}

/**
 * Asks for the follow-up pass ({@link FOLLOW_UP_AFTER_MS} after `world.now`) through `DisruptionDeps.followUps` when
 * {@link hasWorkInFlight}, before the pass writes anything: a pass that dies part-way is then resumed 20 s later. Sets
 * `followUpAt` on the report (the pass then leaves `followUpAfterMs` unset: one request per pass); a failed request
 * is reported (`followUpFailure`), never the pass's failure — the schedule's next pass comes anyway.
 */
export async function requestFollowUpEarly(pass: Pass, world: World): Promise<void> {
  const followUps = pass.deps.followUps;
  if (!followUps || !hasWorkInFlight(pass, world)) return;
  const at = world.now + FOLLOW_UP_AFTER_MS;
  try {
    await followUps.request(at);
    pass.report.followUpAt = new Date(at).toISOString();
  } catch (e) {
    pass.report.followUpFailure = e instanceof Error ? e.message : String(e);
  }
}

/** The live NodeClaims whose disruption reached `Draining`. */
function draining(world: World): NodeClaim[] {
  return world.claims.filter((c) => isLive(c) && c.disruption?.phase === 'Draining');
}

/**
 * Drains owed work now because of their terminationGracePeriod: pods to delete (the deadline less a pod's grace
 * period has come, `drain.ts drainDueAt`) or the node to terminate (the deadline has passed); earliest deadline first.
 */
export function dueDrains(world: World): NodeClaim[] {
  return draining(world)
    .filter((c) => world.now >= drainDueAt(world, c))
    .sort((a, b) => drainDeadline(a) - drainDeadline(b) || a.name.localeCompare(b.name));
}

/**
 * Every drain in the order a pass takes them: those with a terminationGracePeriod earliest deadline first, then those
 * without one, in the order the records are listed.
 */
export function drainOrder(world: World): NodeClaim[] {
  const all = draining(world);
  const bounded = all.filter((c) => Number.isFinite(drainDeadline(c))).sort((a, b) => drainDeadline(a) - drainDeadline(b) || a.name.localeCompare(b.name));
  return [...bounded, ...all.filter((c) => !Number.isFinite(drainDeadline(c)))];
}
