/**
 * A read cache in front of the simulation's NodeClaim store. The simulation is the store's only writer and every
 * write goes through this object, so the cached list — patched with each written record — is exactly what the
 * store would answer (a list that overlaps a write is read from the store and not kept): the cache only saves
 * wall-clock time (the lifecycle controller lists every NodeClaim each virtual
 * minute, and a record carries up to 600 instance types). Writes, `get` and `findByInstanceId` always reach the
 * store, so its conditional writes (the concurrency protocol under test) are untouched.
 */
import type { NodeClaim } from '../core/api/nodeclaim.js';
import { isConflictError } from '../core/errors.js';
import type { NodeClaimStore } from '../ports/nodeclaim-store.js';

/** {@link NodeClaimStore} that serves `list()` from memory until the next write. */
export class CachedNodeClaimStore implements NodeClaimStore {
  /** Bumped when a write starts and when it ends: a list that overlapped a write is not cached. */
  private generation = 0;
  private writing = 0;
  private cached: { readonly generation: number; readonly claims: readonly NodeClaim[] } | undefined;

  /** @param store the store every write and point read goes to */
  constructor(private readonly store: NodeClaimStore) {}

  async create(claim: Omit<NodeClaim, 'version'>): Promise<NodeClaim> {
    return this.write(() => this.store.create(claim));
  }

  async get(name: string): Promise<NodeClaim | undefined> {
    return this.store.get(name);
  }

  async update(claim: NodeClaim): Promise<NodeClaim> {
    return this.write(() => this.store.update(claim));
  }

  async list(): Promise<NodeClaim[]> {
    const hit = this.cached;
    if (hit && hit.generation === this.generation) return [...hit.claims];
    const generation = this.generation;
    const claims = await this.store.list();
    if (generation === this.generation && this.writing === 0) this.cached = { generation, claims };
    return [...claims];
  }

  async findByInstanceId(instanceId: string): Promise<NodeClaim | undefined> {
    return this.store.findByInstanceId(instanceId);
  }

  /**
   * Runs a write. A successful one patches the cached list with the record the store returned (the same value a
   * read returns); a conflict changed nothing; any other failure drops the cache (its outcome is unknown).
   */
  private async write(run: () => Promise<NodeClaim>): Promise<NodeClaim> {
    this.generation++;
    this.writing++;
    let written: NodeClaim | undefined;
    let unchanged = false;
    try {
      written = await run();
      return written;
    } catch (e) {
      unchanged = isConflictError(e);
      throw e;
    } finally {
      this.writing--;
      this.generation++;
      const base = this.cached;
      if (base && (written || unchanged)) {
        const claims = written ? patched(base.claims, written) : base.claims;
        this.cached = { generation: this.generation, claims };
      } else {
        this.cached = undefined;
      }
    }
  }
}

/**
 * `claims` with `written` in place of its record of the same name, in name order: the same list as
 * `[...claims.filter((c) => c.name !== written.name), written].sort(byName)`, worked out by one binary search when
 * `claims` is already in strict name order (as the store lists and as this function returns), which saves a sort of
 * every record on every write.
 */
function patched(claims: readonly NodeClaim[], written: NodeClaim): NodeClaim[] {
  for (let i = 1; i < claims.length; i++) if (byName(claims[i - 1]!, claims[i]!) >= 0) return [...claims.filter((c) => c.name !== written.name), written].sort(byName);
  let [lo, hi] = [0, claims.length];
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (claims[mid]!.name < written.name) lo = mid + 1;
    else hi = mid;
  }
  const out = [...claims];
  if (lo < out.length && out[lo]!.name === written.name) out[lo] = written;
  else out.splice(lo, 0, written);
  return out;
}

/** Name order, as the store lists (UTF-16 code units). */
function byName(a: NodeClaim, b: NodeClaim): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
