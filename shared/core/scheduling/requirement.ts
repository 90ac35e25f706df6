/**
 * One label requirement in canonical form, and its algebra.
 *
 * Every operator is stored in one shape (Karpenter `pkg/scheduling/requirement.go`):
 * a set of `values` that is either the allowed set (`complement = false`) or the excluded set
 * (`complement = true`), plus optional exclusive integer bounds.
 *
 * | operator        | complement | values | bounds          |
 * |-----------------|------------|--------|-----------------|
 * | In [a,b]        | false      | {a,b}  |                 |
 * | NotIn [a,b]     | true       | {a,b}  |                 |
 * | Exists          | true       | {}     |                 |
 * | DoesNotExist    | false      | {}     |                 |
 * | Gt n  (≡ Gte n+1) | true     | {}     | greaterThan = n |
 * | Lt n  (≡ Lte n−1) | true     | {}     | lessThan = n    |
 *
 * A separate flag records whether a node *without* the label satisfies the requirement (true for NotIn and
 * DoesNotExist, and for intersections of two such). It keeps `In [a] ∩ In [b]` (nothing) apart from
 * `DoesNotExist` (label absent), which Karpenter's form conflates.
 * Values are immutable; every operation returns a new requirement.
 */
import type { NodeSelectorRequirement, Operator } from '../api/kubernetes.js';

/** A requirement on one label key. Construct with {@link Requirement.from} or the static helpers. */
export class Requirement {
  private constructor(
    /** Label key. */
    readonly key: string,
    /** When true, `values` are excluded; otherwise they are the only allowed values. */
    readonly complement: boolean,
    /** Allowed or excluded values (see `complement`). */
    readonly values: ReadonlySet<string>,
    /** Exclusive lower bound on integer values, if any. */
    readonly greaterThan: number | undefined,
    /** Exclusive upper bound on integer values, if any. */
    readonly lessThan: number | undefined,
    /** Minimum number of distinct values that must remain (Karpenter `minValues`). */
    readonly minValues: number | undefined,
    /** True when a node without this label satisfies the requirement. */
    private readonly absentAllowed: boolean,
  ) {}

  /**
   * The canonical form of a node selector requirement.
   * @throws {RangeError} when Gt/Lt/Gte/Lte has no integer value (schemas reject this earlier)
   */
  static from(r: NodeSelectorRequirement): Requirement {
    const values = r.values ?? [];
    switch (r.operator) {
      case 'In':
        return new Requirement(r.key, false, new Set(values), undefined, undefined, r.minValues, false);
      case 'NotIn':
        return new Requirement(r.key, true, new Set(values), undefined, undefined, r.minValues, true);
      case 'Exists':
        return new Requirement(r.key, true, new Set(), undefined, undefined, r.minValues, false);
      case 'DoesNotExist':
        return new Requirement(r.key, false, new Set(), undefined, undefined, r.minValues, true);
      case 'Gt':
        return new Requirement(r.key, true, new Set(), integerOf(r), undefined, r.minValues, false);
      case 'Gte':
        return new Requirement(r.key, true, new Set(), integerOf(r) - 1, undefined, r.minValues, false);
      case 'Lt':
        return new Requirement(r.key, true, new Set(), undefined, integerOf(r), r.minValues, false);
      case 'Lte':
        return new Requirement(r.key, true, new Set(), undefined, integerOf(r) + 1, r.minValues, false);
      default:
        return assertNever(r.operator);
    }
  }

  /** `key In values`. */
  static in(key: string, values: Iterable<string>, minValues?: number): Requirement {
    return new Requirement(key, false, new Set(values), undefined, undefined, minValues, false);
  }

  /** `key Exists` — any value, the label must be present. */
  static exists(key: string): Requirement {
    return new Requirement(key, true, new Set(), undefined, undefined, undefined, false);
  }

  /** `key DoesNotExist`. */
  static doesNotExist(key: string): Requirement {
    return new Requirement(key, false, new Set(), undefined, undefined, undefined, true);
  }

  /** True when a node labelled `key=value` satisfies this requirement. */
  has(value: string): boolean {
    if (!this.withinBounds(value)) return false;
    return this.complement ? !this.values.has(value) : this.values.has(value);
  }

  /** True when a node *without* this label satisfies the requirement (NotIn, DoesNotExist). */
  allowsAbsence(): boolean {
    return this.absentAllowed;
  }

  /**
   * The number of values the requirement allows: exact for a finite set, `Infinity` for a complement
   * (bounded integer ranges count their integers).
   */
  size(): number {
    if (!this.complement) return this.values.size;
    if (this.greaterThan !== undefined && this.lessThan !== undefined) {
      const span = this.lessThan - this.greaterThan - 1;
      if (span <= 0) return 0;
      let excluded = 0;
      for (const v of this.values) if (this.withinBounds(v)) excluded++;
      return span - excluded;
    }
    return Number.POSITIVE_INFINITY;
  }

  /**
   * The requirement both `this` and `other` allow. Keys must match. Never mutates either side.
   * @throws {RangeError} when the keys differ
   */
  intersection(other: Requirement): Requirement {
    if (other.key !== this.key) throw new RangeError(`cannot intersect requirements on ${this.key} and ${other.key}`);
    const greaterThan = maxDefined(this.greaterThan, other.greaterThan);
    const lessThan = minDefined(this.lessThan, other.lessThan);
    const minValues = maxDefined(this.minValues, other.minValues);
    const absent = this.absentAllowed && other.absentAllowed;
    const inBounds = (v: string) => withinBounds(v, greaterThan, lessThan);
    if (this.complement && other.complement) {
      if (greaterThan !== undefined && lessThan !== undefined && lessThan - greaterThan <= 1) {
        return new Requirement(this.key, false, new Set(), undefined, undefined, minValues, absent);
      }
      const values = new Set([...this.values, ...other.values].filter(inBounds));
      return new Requirement(this.key, true, values, greaterThan, lessThan, minValues, absent);
    }
    if (this.complement !== other.complement) {
      const [set, excluded] = this.complement ? [other, this] : [this, other];
      const values = [...set.values].filter((v) => !excluded.values.has(v) && inBounds(v));
      return new Requirement(this.key, false, new Set(values), undefined, undefined, minValues, absent);
    }
    const values = [...this.values].filter((v) => other.values.has(v) && inBounds(v));
    return new Requirement(this.key, false, new Set(values), undefined, undefined, minValues, absent);
  }

  /**
   * The operator this requirement reads as. A complement with bounds reads as `Gt` (or `Lt` if only an upper
   * bound); {@link toNodeSelectorRequirements} gives the exact round trip.
   */
  operator(): Operator {
    if (this.complement) {
      if (this.greaterThan !== undefined) return 'Gt';
      if (this.lessThan !== undefined) return 'Lt';
      return this.values.size > 0 ? 'NotIn' : 'Exists';
    }
    return this.values.size > 0 || !this.absentAllowed ? 'In' : 'DoesNotExist';
  }

  /** The values sorted (numerically when every value is an integer), for stable output. */
  sortedValues(): string[] {
    return sortValues(this.values);
  }

  /**
   * One value the requirement allows, chosen deterministically, or undefined when there is none to choose: for a
   * finite set (`In`) its smallest value in sort order; for a complement (`NotIn`, `Exists`, `Gt`, `Lt`, `Gte`,
   * `Lte`) the smallest non-negative integer within the bounds that is not excluded (undefined when the bounds leave
   * none, e.g. `Lt 0`). Karpenter's `Requirement.Any()` (core `pkg/scheduling/requirement.go`) picks the complement's
   * value at random in `[gte, lte]`; Skiff's core is deterministic, so it takes the smallest, which also never hits
   * an excluded value.
   * @example Requirement.from({ key: 'team', operator: 'Gt', values: ['300'] }).any() // '301'
   * @example Requirement.from({ key: 'team', operator: 'NotIn', values: ['0', '1'] }).any() // '2'
   */
  any(): string | undefined {
    if (!this.complement) return this.sortedValues()[0];
    const end = this.lessThan ?? Number.POSITIVE_INFINITY;
    for (let v = Math.max(0, (this.greaterThan ?? -1) + 1); v < end; v++) {
      if (!this.values.has(String(v))) return String(v);
    }
    return undefined;
  }

  /**
   * Node selector requirements equivalent to this one (one, or several for a bounded complement with exclusions).
   * Values are sorted so equal requirements serialise identically.
   */
  toNodeSelectorRequirements(): NodeSelectorRequirement[] {
    const mv = this.minValues !== undefined ? { minValues: this.minValues } : {};
    if (!this.complement) {
      // `In []` (nothing satisfies it) only arises from contradictory intersections.
      return [this.values.size > 0 || !this.absentAllowed ? { key: this.key, operator: 'In', values: this.sortedValues(), ...mv } : { key: this.key, operator: 'DoesNotExist' }];
    }
    const out: NodeSelectorRequirement[] = [];
    if (this.greaterThan !== undefined) out.push({ key: this.key, operator: 'Gt', values: [String(this.greaterThan)], ...mv });
    if (this.lessThan !== undefined) out.push({ key: this.key, operator: 'Lt', values: [String(this.lessThan)], ...(out.length ? {} : mv) });
    const bounded = out.length > 0;
    if (!bounded && !this.absentAllowed) out.push({ key: this.key, operator: 'Exists', ...mv });
    if (this.values.size > 0) out.push({ key: this.key, operator: 'NotIn', values: this.sortedValues(), ...(out.length ? {} : mv) });
    return out;
  }

  /** Readable form, e.g. `karpenter.sh/capacity-type In [on-demand spot]`. */
  toString(): string {
    return this.toNodeSelectorRequirements()
      .map((r) => `${r.key} ${r.operator}${r.values && r.values.length ? ` [${r.values.join(' ')}]` : ''}`)
      .join(', ');
  }

  private withinBounds(value: string): boolean {
    return withinBounds(value, this.greaterThan, this.lessThan);
  }
}

function withinBounds(value: string, greaterThan: number | undefined, lessThan: number | undefined): boolean {
  if (greaterThan === undefined && lessThan === undefined) return true;
  if (!/^-?\d+$/.test(value)) return false;
  const n = Number(value);
  return (greaterThan === undefined || n > greaterThan) && (lessThan === undefined || n < lessThan);
}

function integerOf(r: NodeSelectorRequirement): number {
  const raw = r.values?.[0];
  const n = raw === undefined ? Number.NaN : Number(raw);
  if (r.values?.length !== 1 || !Number.isInteger(n)) {
    throw new RangeError(`${r.key} ${r.operator} needs exactly one integer value, got ${JSON.stringify(r.values ?? [])}`);
  }
  return n;
}

function maxDefined(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.max(a, b);
}

function minDefined(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}

/** Sorts label values: numerically when all are integers, otherwise lexically. */
export function sortValues(values: Iterable<string>): string[] {
  const list = [...values];
  return list.every((v) => /^-?\d+$/.test(v)) ? list.sort((a, b) => Number(a) - Number(b)) : list.sort();
}

function assertNever(x: never): never {
  throw new RangeError(`unsupported operator ${String(x)}`);
}
