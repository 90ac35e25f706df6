/**
 * Domain pinning: a planned NodeClaim that takes a pod with a topology term is pinned to one domain of the term's
 * key (one zone, one capacity type, …), and its options narrow to the instance types that can carry that domain,
 * re-priced under the pinned requirements. Shared per requirements object, so pinning is a lookup.
 */
import { LABEL_CAPACITY_TYPE, LABEL_ZONE } from '../api/labels.js';
import type { InstanceType } from '../instancetypes/offering.js';
import { Requirement } from '../scheduling/requirement.js';
import type { Requirements } from '../scheduling/requirements.js';
import { byPrice, PricedType } from './instance-options.js';
import { domainValues } from './topology.js';
import { valueBits } from './value-bits.js';

/**
 * `domainValues(key, requirements, options.map((o) => o.type))` (same values, same order) as a union of per-type bit
 * sets: the types' requirements are read once per type, not once per call.
 */
export function optionDomainValues(key: string, requirements: Requirements, options: readonly PricedType[]): string[] {
  const r = requirements.get(key);
  // A finite requirement bounds the values: they are exactly its own (see `domainValues`).
  if (!r.complement) return [...r.values].sort();
  let mask = 0;
  for (const o of options) {
    const bits = o.valueBits(key);
    if (bits === undefined) {
      return domainValues(
        key,
        requirements,
        options.map((x) => x.type),
      );
    }
    mask |= bits;
  }
  const out: string[] = [];
  const index = valueBits.get(key);
  if (index) for (let b = 0; b < index.values.length; b++) if (mask & (1 << b) && r.has(index.values[b]!)) out.push(index.values[b]!);
  return out.sort();
}

/**
 * Options pinned to one domain of one key: `requirements` with `key In [domain]`, and every instance type seen so far
 * that can carry the domain, priced under the pinned requirements (zone and capacity type decide offerings) and
 * ranked cheapest first (ties by name). A claim's options are always a subset of what was seen under its
 * requirements, so pinning them is a lookup and a sort of integer ranks, not a walk of requirements and offerings.
 */
export class PinnedDomain {
  /** `requirements` with `key In [domain]`. */
  readonly requirements: Requirements;
  private readonly pricing: boolean;
  private readonly zone: Requirement;
  private readonly capacityType: Requirement;
  /** Instance type → its pinned option, or null when it cannot carry the domain (or has no offering there). */
  private readonly entries = new Map<InstanceType, PricedType | null>();
  /** The pinned options of every type in `rankOf`, cheapest first (ties by name). */
  private ranked: PricedType[] = [];
  /** Instance type → its index in `ranked`, or -1 when it has no pinned option. */
  private rankOf = new Map<InstanceType, number>();

  constructor(
    requirements: Requirements,
    private readonly key: string,
    private readonly domain: string,
  ) {
    this.requirements = requirements.add(Requirement.in(key, [domain]));
    this.pricing = key === LABEL_ZONE || key === LABEL_CAPACITY_TYPE;
    this.zone = this.requirements.get(LABEL_ZONE);
    this.capacityType = this.requirements.get(LABEL_CAPACITY_TYPE);
  }

  /**
   * `options` (compatible with the unpinned requirements) narrowed to the types that can carry the domain, re-priced
   * and re-sorted when the key decides offerings. Same result as `pricedOptions(options, this.requirements)`.
   */
  pin(options: readonly PricedType[]): PricedType[] {
    // The same input (a probe's cached fitted options) gets the same array, so what is cached per array stays valid.
    const hit = this.recent.find((r) => r.of === options);
    if (hit) return hit.pinned;
    const pinned = this.pinUncached(options);
    if (this.recent.length >= RECENT_PINS) this.recent.shift();
    this.recent.push({ of: options, pinned });
    return pinned;
  }

  /** The last {@link RECENT_PINS} answers of `pin`. */
  private readonly recent: { readonly of: readonly PricedType[]; readonly pinned: PricedType[] }[] = [];

  private pinUncached(options: readonly PricedType[]): PricedType[] {
    if (!this.pricing) return options.filter((o) => this.carries(o.type));
    let marks = new Uint8Array(this.ranked.length);
    for (let i = 0; i < options.length; i++) {
      const r = this.rankOf.get(options[i]!.type);
      if (r === undefined) {
        // A type not ranked yet: rank every type seen so far with the new ones, then mark again.
        this.rerank(options);
        marks = new Uint8Array(this.ranked.length);
        i = -1;
      } else if (r >= 0) marks[r] = 1;
    }
    const out: PricedType[] = [];
    for (let r = 0; r < marks.length; r++) if (marks[r]) out.push(this.ranked[r]!);
    return out;
  }

  /**
   * The first option of `pin(options.filter(keep))` without building it, or undefined when none is kept and can
   * carry the domain. `options` must be priced under the unpinned requirements (as every options list is): pinning
   * only removes offerings, so an option's price bounds its pinned price from below and the scan stops once the
   * prices pass the best pinned price found. `keep` must depend on the option's type only.
   */
  cheapest(options: readonly PricedType[], keep: (o: PricedType) => boolean): PricedType | undefined {
    if (!this.pricing) return options.find((o) => this.carries(o.type) && keep(o));
    let best: PricedType | undefined;
    for (const o of options) {
      if (best && o.price > best.price) break;
      const e = this.entry(o.type);
      if (!e || (best && byPrice(e, best) >= 0) || !keep(o)) continue;
      best = e;
    }
    return best;
  }

  /** Whether `type` lists the domain on the key. */
  private carries(type: InstanceType): boolean {
    return type.requirements.get(this.key).has(this.domain);
  }

  /** `type`'s pinned option (priced lazily, once), or null when it cannot carry the domain or has no offering there. */
  private entry(type: InstanceType): PricedType | null {
    let e = this.entries.get(type);
    if (e === undefined) {
      e = null;
      if (this.carries(type)) {
        // `cheapestOffering(type, this.requirements)` without allocating.
        let price = Number.POSITIVE_INFINITY;
        for (const offering of type.offerings) if (offering.available && offering.price < price && this.zone.has(offering.zone) && this.capacityType.has(offering.capacityType)) price = offering.price;
        if (price !== Number.POSITIVE_INFINITY) e = new PricedType(type, price);
      }
      this.entries.set(type, e);
    }
    return e;
  }

  /** Ranks every type seen so far plus the types of `options`. */
  private rerank(options: readonly PricedType[]): void {
    for (const o of options) this.entry(o.type);
    this.ranked = [...this.entries.values()].filter((e) => e !== null).sort(byPrice);
    this.rankOf = new Map([...this.entries.keys()].map((type) => [type, -1] as const));
    this.ranked.forEach((e, i) => this.rankOf.set(e.type, i));
  }
}

/** How many answers a {@link PinnedDomain} remembers. */
const RECENT_PINS = 8;

/** {@link PinnedDomain}s per requirements object, then per `key=domain`. */
const pinnedDomains = new WeakMap<Requirements, Map<string, PinnedDomain>>();

/** The {@link PinnedDomain} of (`requirements`, `key`, `domain`), shared by every claim with those requirements. */
export function pinnedDomain(requirements: Requirements, key: string, domain: string): PinnedDomain {
  let byDomain = pinnedDomains.get(requirements);
  if (!byDomain) pinnedDomains.set(requirements, (byDomain = new Map()));
  const id = `${key}=${domain}`;
  let hit = byDomain.get(id);
  if (!hit) byDomain.set(id, (hit = new PinnedDomain(requirements, key, domain)));
  return hit;
}
