/**
 * A read cache in front of the simulation's unavailable-offerings store, on the same terms as
 * `CachedNodeClaimStore` (`cached-nodeclaim-store.ts`): the simulation is the store's only writer and every mark goes through this object, so
 * between two marks the store's answer can only shrink as time passes (marks expire; nothing else changes). A
 * `listUnavailable(t)` is therefore answered from the last list read from the store at `t0 ≤ t`, keeping the marks
 * with `untilMs > t` — exactly what the store answers at `t`. After a mark (or one that failed: its outcome is unknown)
 * the next list reads the store again, and a list that overlapped a mark is not kept. It saves the disruption
 * controller's per-pass Query (one a virtual minute); `markUnavailable` always reaches the store, so its conditional
 * write is untouched.
 */
import type { OfferingKey } from '../core/instancetypes/offering-key.js';
import type { UnavailableOffering, UnavailableOfferings } from '../ports/unavailable-offerings.js';

/** {@link UnavailableOfferings} that serves `listUnavailable` from memory until the next mark. */
export class CachedUnavailableOfferings implements UnavailableOfferings {
  /** Bumped when a mark starts and when it ends: a list that overlapped a mark is not cached. */
  private generation = 0;
  private writing = 0;
  private cached: { readonly generation: number; readonly atMs: number; readonly offerings: readonly UnavailableOffering[] } | undefined;

  /** @param offerings the store every mark and every uncached list goes to */
  constructor(private readonly offerings: UnavailableOfferings) {}

  async markUnavailable(offering: OfferingKey, untilMs: number, reason: string): Promise<void> {
    this.generation++;
    this.writing++;
    try {
      await this.offerings.markUnavailable(offering, untilMs, reason);
    } finally {
      this.writing--;
      this.generation++;
      this.cached = undefined;
    }
  }

  async listUnavailable(nowMs: number): Promise<UnavailableOffering[]> {
    const hit = this.cached;
    if (hit && hit.generation === this.generation && hit.atMs <= nowMs) return hit.offerings.filter((o) => o.untilMs > nowMs).map((o) => ({ ...o }));
    const generation = this.generation;
    const offerings = await this.offerings.listUnavailable(nowMs);
    if (generation === this.generation && this.writing === 0) this.cached = { generation, atMs: nowMs, offerings: offerings.map((o) => ({ ...o })) };
    return offerings;
  }
}
