/**
 * Forceful disruptions: no budget, no replacement first, Draining at once (Karpenter's forceful class). Expiration
 * (core `pkg/controllers/nodeclaim/expiration`) starts them from a pass; the interruption controller through
 * `disruptNow`.
 */
import { formatDuration } from '../../core/api/duration.js';
import { isLive, type NodeClaim, type NodeClaimDisruption } from '../../core/api/nodeclaim.js';
import { fnv1a } from '../../core/hash.js';
import { recordEventBestEffort } from '../events.js';
import { nodeOf } from '../launch.js';
import { taint, writeIgnoringConflict, type Pass } from './pass.js';
import type { World } from './world.js';
import { timestampMs } from '../../core/api/timestamp.js';

/**
 * Step 3: NodeClaims past their expireAfter start draining now (no budget, no replacement first).
 * @throws whatever the ports throw for failures other than conflicts
 */
export async function expire(pass: Pass, world: World): Promise<void> {
  for (const claim of world.claims) {
    if (!isLive(claim) || claim.expireAfterSeconds == null || claim.state === 'Pending' || claim.state === 'Deleting') continue;
    if (claim.disruption && claim.disruption.phase !== 'Proposed') continue;
    if (world.now < timestampMs(claim.createdAt) + claim.expireAfterSeconds * 1000) continue;
    if (await startForceful(pass, world, claim, 'Expired', `expireAfter ${formatDuration(claim.expireAfterSeconds)} passed`)) pass.report.expired.push(claim.name);
  }
}

/**
 * Marks a NodeClaim for a forceful disruption (Expired, Interrupted): Draining at once, no budget, no replacement
 * first; taints its node. A disruption already past its proposal is left as it is.
 * @returns the saved record, or undefined when another writer moved it on (or it was already draining)
 * @throws whatever the ports throw for failures other than conflicts
 */
export async function startForceful(pass: Pass, world: World, claim: NodeClaim, reason: 'Expired' | 'Interrupted', message: string): Promise<NodeClaim | undefined> {
  // A node already draining drains on; a proposal or a consolidation still launching its replacement is taken over
  // (the forceful reason wins, and the replacement already on its way is kept).
  if (claim.state === 'Deleting' || claim.disruption?.phase === 'Draining') return undefined;
  const now = new Date(world.now).toISOString();
  const disruption: NodeClaimDisruption = {
    command: `${reason.toLowerCase()}-${fnv1a(claim.name).toString(36)}`,
    reason,
    decision: 'delete',
    phase: 'Draining',
    replacements: claim.disruption?.phase === 'Replacing' ? claim.disruption.replacements : [],
    candidates: [claim.name],
    message,
    proposedAt: now,
    startedAt: now,
    drainStartedAt: now,
  };
  const saved = await writeIgnoringConflict(pass, { ...claim, state: 'Deleting', disruption });
  if (!saved) return undefined;
  await taint(pass, nodeOf(claim, world.nodes));
  await recordEventBestEffort(pass.deps.cluster, { type: 'Normal', reason: 'DisruptionTerminating', object: `NodeClaim/${claim.name}`, message: `Disrupting NodeClaim ${claim.name}: ${reason} (${message})` });
  return saved;
}
