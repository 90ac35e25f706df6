/**
 * What a pass notes of the pods: each node's last pod event on its record (what consolidateAfter counts from; read by
 * every phase at once, written at the end of the pass), and the do-not-disrupt values it cannot read.
 */
import { NEVER } from '../../core/api/duration.js';
import { isLive, type NodeClaim } from '../../core/api/nodeclaim.js';
import { DO_NOT_DISRUPT, podDoNotDisrupt } from '../../core/disruption/do-not-disrupt.js';
import { fnv1a } from '../../core/hash.js';
import { recordEventBestEffort } from '../events.js';
import { nodeOf } from '../launch.js';
import { writeIgnoringConflict, type Pass } from './pass.js';
import { lastPodEventMs, podsOfClaim, podsOn, type World } from './world.js';
import { timestampMs } from '../../core/api/timestamp.js';

/**
 * The records as they are with each node's last pod event stamped (`lastPodEventAt`, Karpenter's
 * `status.lastPodEventTime`; see `lastPodEventMs`): only those whose stamp or pods fingerprint changes. A cluster
 * whose times are not complete (the Kubernetes adapter: a pod deleted and gone between two passes leaves no
 * timestamp) also has each change in the set of pods on a node since the record's fingerprint count as an event now —
 * never earlier than the truth, so consolidateAfter is at worst a pass longer, never shorter. Pure: the records keep
 * their versions (a write of one is conditional on the record the pass read).
 */
export function podEventUpdates(world: World): NodeClaim[] {
  const out: NodeClaim[] = [];
  for (const claim of world.claims) {
    if (claim.state !== 'Initialized' || claim.disruption) continue;
    const node = nodeOf(claim, world.nodes);
    if (!node) continue;
    const pool = world.pools.get(claim.nodePool);
    // Only consolidation reads lastPodEventAt: none under consolidateAfter Never.
    if (!pool || pool.spec.disruption.consolidateAfter === NEVER) continue;
    let last = lastPodEventMs(world, claim);
    let fingerprint = claim.podsFingerprint;
    if (!world.podEvents?.complete) {
      fingerprint = fnv1a(
        podsOn(world, node)
          .map((p) => `${p.namespace}/${p.name}`)
          .sort()
          .join('\n'),
      ).toString(36);
      if (claim.podsFingerprint !== undefined && claim.podsFingerprint !== fingerprint) last = Math.max(last ?? 0, world.now);
    }
    const stamped = last !== undefined && last !== (claim.lastPodEventAt ? timestampMs(claim.lastPodEventAt) : undefined);
    if (!stamped && fingerprint === claim.podsFingerprint) continue;
    out.push({ ...claim, ...(fingerprint !== undefined ? { podsFingerprint: fingerprint } : {}), ...(stamped ? { lastPodEventAt: new Date(last!).toISOString() } : {}) });
  }
  return out;
}

/**
 * `world` with its records stamped in memory ({@link podEventUpdates}): every phase of the pass reads each node's
 * last pod event before any of it is written, and a record the pass writes for another reason (a proposal) carries
 * its stamp along. The stamps are written at the end of the pass ({@link notePodEvents}), so a pass cut short by a
 * crash has not spent its side effects on them first: on a cluster whose pods all just changed, one write per node.
 */
export function withPodEvents(world: World): World {
  const updates = podEventUpdates(world);
  if (updates.length === 0) return world;
  const byName = new Map(updates.map((c) => [c.name, c]));
  return { ...world, claims: world.claims.map((c) => byName.get(c.name) ?? c) };
}

/**
 * Writes each node's last pod event on its record ({@link podEventUpdates} of `world`, the world as read from the
 * store); a record another writer moved on meanwhile is left to the next pass.
 * @throws whatever the store throws for failures other than conflicts
 */
export async function notePodEvents(pass: Pass, world: World): Promise<void> {
  for (const claim of podEventUpdates(world)) await writeIgnoringConflict(pass, claim);
}

/**
 * A pod on a Skiff node whose `karpenter.sh/do-not-disrupt` is neither `"true"` nor a duration gets one
 * `InvalidDoNotDisruptAnnotation` Warning (Karpenter's event): the value is ignored, so the node can be disrupted.
 * Reported once per pod and value while the controller's memory lives (the API server would only bump the Event's
 * count).
 */
export async function reportInvalidDoNotDisrupt(pass: Pass, world: World): Promise<void> {
  const reported = pass.deps.memory.invalidDoNotDisruptReported;
  // Most clusters have no pod with the annotation at all: one look at each pod, not a walk of every node's pods.
  if (!world.pods.some((p) => p.annotations[DO_NOT_DISRUPT] !== undefined)) return;
  for (const claim of world.claims) {
    if (!isLive(claim)) continue;
    for (const pod of podsOfClaim(world, claim)) {
      const dnd = podDoNotDisrupt(pod.annotations, pod.createdAt, world.now);
      if (dnd.active || dnd.invalid === undefined) continue;
      const key = `${pod.uid}|${dnd.invalid}`;
      if (reported.has(key)) continue;
      if (reported.size >= 10_000) reported.clear(); // pods come and go: bound the memory, at worst an Event repeats
      reported.add(key);
      await recordEventBestEffort(pass.deps.cluster, {
        type: 'Warning',
        reason: 'InvalidDoNotDisruptAnnotation',
        object: `Pod/${pod.namespace}/${pod.name}`,
        message: `Invalid ${DO_NOT_DISRUPT} value ${JSON.stringify(dnd.invalid)}: want "true" or a duration such as "30m"; the annotation is ignored`,
      });
    }
  }
}
