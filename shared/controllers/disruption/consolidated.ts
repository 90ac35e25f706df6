/**
 * Karpenter's "consolidated" state: when nothing changed since a pass found nothing to do, the next pass skips the
 * search (it only repeats itself) — at most for {@link CONSOLIDATED_TTL_MS}, after which prices or budget windows may
 * differ. The verdict is kept in the controller's memory; this file says what "nothing changed" means.
 */
import { isLive } from '../../core/api/nodeclaim.js';
import { fnv1a } from '../../core/hash.js';
import { BudgetLedger } from './budget-ledger.js';
import { consolidationProblem, underConsolidateAfter } from './candidates.js';
import type { DisruptionMemory } from './memory.js';
import type { World } from './world.js';

/**
 * How long a "nothing to do" verdict stands while nothing it depends on changes (pods, nodes, records, NodePools,
 * availability, which budgets allow what): 15 minutes, so moving spot prices are looked at again.
 */
export const CONSOLIDATED_TTL_MS = 15 * 60 * 1000;

/**
 * A digest of everything a proposal depends on: pods and where they run, nodes, NodeClaim versions, NodePools,
 * availability, which consolidateAfter windows have passed, and which budgets allow anything.
 */
export function worldFingerprint(world: World, memory: DisruptionMemory): string {
  const parts: string[] = [];
  for (const p of world.pods) parts.push(`p${p.namespace}/${p.name}@${p.nodeName ?? ''}:${p.phase}`);
  for (const n of world.nodes) parts.push(`n${n.name}:${n.ready ? 1 : 0}:${n.taints.length}:${Object.keys(n.annotations).length}`);
  for (const nc of world.classes.values()) parts.push(`nc${nc.metadata.name}:${specDigest(nc.spec, memory)}`);
  for (const c of world.claims) {
    if (!isLive(c)) continue;
    // Time alone makes a node consolidatable (consolidateAfter passing), and open to other nodes' pods (leaving its
    // own consolidateAfter window, which the churn guard does not hold back): part of the digest too.
    const pool = world.pools.get(c.nodePool);
    const ripe = pool ? consolidationProblem(world, c, pool) === undefined : false;
    parts.push(`c${c.name}:${c.version}:${ripe ? 1 : 0}${underConsolidateAfter(world, c) ? 1 : 0}`);
  }
  for (const np of world.pools.values()) parts.push(`np${np.metadata.name}:${specDigest(np.spec, memory)}`);
  parts.push(`u${world.unavailableKey}`);
  // Budget windows open and close with time alone.
  const ledger = new BudgetLedger(world, memory);
  for (const pool of world.pools.keys()) parts.push(`b${pool}:${(['Empty', 'Underutilized', 'Drifted'] as const).map((r) => Math.min(ledger.remaining(pool, r), 1)).join('')}`);
  parts.sort();
  return `${parts.length}:${fnv1a(parts.join('|')).toString(36)}`;
}

/**
 * `fnv1a(JSON.stringify(spec))` in base 36, remembered per spec object: the objects the Cluster port returns are
 * read-only (a changed NodePool or EC2NodeClass is a new object), so an object that was digested before has the same
 * digest. A cluster that returns fresh objects each pass (the Kubernetes adapter) simply never hits.
 */
function specDigest(spec: unknown, memory: DisruptionMemory): string {
  if (spec === null || typeof spec !== 'object') return fnv1a(JSON.stringify(spec)).toString(36);
  let digest = memory.specDigests.get(spec);
  if (digest === undefined) memory.specDigests.set(spec, (digest = fnv1a(JSON.stringify(spec)).toString(36)));
  return digest;
}
