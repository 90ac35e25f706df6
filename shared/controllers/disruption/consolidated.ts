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
import type { ClusterPod } from '../../ports/cluster.js';
import { MultisetDigest, partHashes } from './multiset-digest.js';
import type { World } from './world.js';

/**
 * How long a "nothing to do" verdict stands while nothing it depends on changes (pods, nodes, records, NodePools,
 * availability, which budgets allow what): 15 minutes, so moving spot prices are looked at again.
 */
export const CONSOLIDATED_TTL_MS = 15 * 60 * 1000;

/**
 * A digest of everything a proposal depends on: pods and where they run, nodes, NodeClaim versions, NodePools,
 * availability, which consolidateAfter windows have passed, and which budgets allow anything. Only ever compared for
 * equality with an earlier digest of the same controller's memory (never stored or shown), so it is a multiset hash:
 * the count of parts and two independent 32-bit hashes of each part summed, which needs no sort of the parts (a
 * sorted join of one string per pod cost 30 ms a pass at 20,000 pods) and gives the same digest for the same parts
 * in any order.
 */
export function worldFingerprint(world: World, memory: DisruptionMemory): string {
  const digest = new MultisetDigest();
  digest.addDigest(podsDigest(world.pods, memory));
  for (const n of world.nodes) digest.add(`n${n.name}:${n.ready ? 1 : 0}:${n.taints.length}:${Object.keys(n.annotations).length}`);
  for (const nc of world.classes.values()) digest.add(`nc${nc.metadata.name}:${specDigest(nc.spec, memory)}`);
  for (const c of world.claims) {
    if (!isLive(c)) continue;
    // Time alone makes a node consolidatable (consolidateAfter passing), and open to other nodes' pods (leaving its
    // own consolidateAfter window, which the churn guard does not hold back): part of the digest too.
    const pool = world.pools.get(c.nodePool);
    const ripe = pool ? consolidationProblem(world, c, pool) === undefined : false;
    digest.add(`c${c.name}:${c.version}:${ripe ? 1 : 0}${underConsolidateAfter(world, c) ? 1 : 0}`);
  }
  for (const np of world.pools.values()) digest.add(`np${np.metadata.name}:${specDigest(np.spec, memory)}`);
  digest.add(`u${world.unavailableKey}`);
  // Budget windows open and close with time alone.
  const ledger = new BudgetLedger(world, memory);
  for (const pool of world.pools.keys()) digest.add(`b${pool}:${(['Empty', 'Underutilized', 'Drifted'] as const).map((r) => Math.min(ledger.remaining(pool, r), 1)).join('')}`);
  return digest.toString();
}

/**
 * The pods' part of the fingerprint. A pod object from the Cluster port is read-only, so the hashes of its part are
 * remembered per object, and the whole sum per list: a cluster that lists the same objects while nothing changed (the
 * simulated one) costs one identity comparison per pod, and only the pods that changed are hashed.
 */
function podsDigest(pods: readonly ClusterPod[], memory: DisruptionMemory): MultisetDigest {
  const last = memory.lastPods;
  if (last && last.pods.length === pods.length && last.pods.every((p, i) => p === pods[i])) return last.digest;
  const digest = new MultisetDigest();
  for (const p of pods) {
    let hashes = memory.podDigests.get(p);
    if (!hashes) memory.podDigests.set(p, (hashes = partHashes(`p${p.namespace}/${p.name}@${p.nodeName ?? ''}:${p.phase}`)));
    digest.addHashes(hashes);
  }
  memory.lastPods = { pods, digest };
  return digest;
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
