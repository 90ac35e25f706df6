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
 * availability, which consolidateAfter windows have passed, and which budgets allow anything. Only ever compared for
 * equality with an earlier digest of the same controller's memory (never stored or shown), so it is a multiset hash:
 * the count of parts and two independent 32-bit hashes of each part summed, which needs no sort of the parts (a
 * sorted join of one string per pod cost 30 ms a pass at 20,000 pods) and gives the same digest for the same parts
 * in any order.
 */
export function worldFingerprint(world: World, memory: DisruptionMemory): string {
  const digest = new MultisetDigest();
  for (const p of world.pods) {
    // A pod object from the Cluster port is read-only: the hashes of its part are remembered per object (a cluster
    // that lists the same objects while nothing changed — the simulated one — hashes only the pods that changed).
    let hashes = memory.podDigests.get(p);
    if (!hashes) memory.podDigests.set(p, (hashes = partHashes(`p${p.namespace}/${p.name}@${p.nodeName ?? ''}:${p.phase}`)));
    digest.addHashes(hashes);
  }
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
 * An order-independent digest of a multiset of strings: their count and, summed modulo 2^32, their FNV-1a hashes and a
 * second, independent hash (a multiplicative string hash with a murmur3 finalizer). Two different multisets share a
 * digest with a chance of about 2^-64.
 */
class MultisetDigest {
  private count = 0;
  private a = 0;
  private b = 0;

  add(part: string): void {
    this.addHashes(partHashes(part));
  }

  /** Adds a part by its {@link partHashes}. */
  addHashes(hashes: readonly [number, number]): void {
    this.count++;
    this.a = (this.a + hashes[0]) >>> 0;
    this.b = (this.b + hashes[1]) >>> 0;
  }

  toString(): string {
    return `${this.count}:${this.a.toString(36)}:${this.b.toString(36)}`;
  }
}

/** The two independent 32-bit hashes of one part of a {@link MultisetDigest}. */
function partHashes(part: string): readonly [number, number] {
  let h = 0x9747b28c;
  for (let i = 0; i < part.length; i++) h = Math.imul(h ^ part.charCodeAt(i), 0x5bd1e995) >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return [fnv1a(part), h >>> 0];
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
