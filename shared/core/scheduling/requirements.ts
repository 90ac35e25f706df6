/**
 * A set of requirements keyed by label, and the compatibility rules Karpenter applies between a pod and a
 * NodeClaim or instance type (kubernetes-sigs/karpenter `pkg/scheduling/requirements.go`: `Compatible`,
 * `Intersects`). Immutable: every operation returns a new set.
 */
import type { NodeSelectorRequirement } from '../api/kubernetes.js';
import { ownValue } from '../api/labels.js';
import { Requirement } from './requirement.js';

/** Why two requirement sets cannot be combined. */
export type Incompatibility =
  /** The pod selects on a label that is neither well-known nor defined by the NodePool (labels or requirements). */
  | { readonly kind: 'undefinedLabel'; readonly key: string; readonly incoming: Requirement }
  /** Both sides constrain `key` and no value satisfies both. */
  | { readonly kind: 'noIntersection'; readonly key: string; readonly incoming: Requirement; readonly existing: Requirement };

/** Human-readable form of an {@link Incompatibility}. */
export function describeIncompatibility(i: Incompatibility): string {
  switch (i.kind) {
    case 'undefinedLabel':
      return `label ${i.key} is not defined: no requirement or template label of the NodePool sets it (${i.incoming})`;
    case 'noIntersection':
      return `${i.incoming} conflicts with ${i.existing}`;
    default:
      return assertNever(i);
  }
}

/** Requirements keyed by label. A key that is absent is unconstrained. */
export class Requirements {
  private constructor(private readonly byKey: ReadonlyMap<string, Requirement>) {}

  /** The empty set (no constraints). */
  static readonly none = new Requirements(new Map());

  /**
   * Builds a set from node selector requirements; several entries on one key are intersected.
   * @throws {RangeError} on a malformed numeric operator
   */
  static from(list: readonly NodeSelectorRequirement[]): Requirements {
    return Requirements.of(...list.map((r) => Requirement.from(r)));
  }

  /** `key In [value]` for every label. */
  static fromLabels(labels: Readonly<Record<string, string>>): Requirements {
    return Requirements.of(...Object.entries(labels).map(([k, v]) => Requirement.in(k, [v])));
  }

  /** A set of the given requirements; several on one key are intersected. */
  static of(...requirements: readonly Requirement[]): Requirements {
    const map = new Map<string, Requirement>();
    for (const r of requirements) {
      const existing = map.get(r.key);
      map.set(r.key, existing ? existing.intersection(r) : r);
    }
    return new Requirements(map);
  }

  /** True when no key is constrained. */
  isEmpty(): boolean {
    return this.byKey.size === 0;
  }

  /** True when `key` is constrained. */
  has(key: string): boolean {
    return this.byKey.has(key);
  }

  /** The requirement on `key`; an unconstrained key reads as `Exists`. */
  get(key: string): Requirement {
    return this.byKey.get(key) ?? Requirement.exists(key);
  }

  /** The constrained keys, sorted. */
  keys(): string[] {
    return [...this.byKey.keys()].sort();
  }

  /** Every requirement, in key order. */
  values(): Requirement[] {
    return this.keys().map((k) => this.byKey.get(k)!);
  }

  /** This set narrowed by `other` (key-wise intersection). Neither side changes. */
  intersect(other: Requirements): Requirements {
    if (other.byKey.size === 0) return this;
    if (this.byKey.size === 0) return other;
    const map = new Map(this.byKey);
    for (const [k, r] of other.byKey) {
      const existing = map.get(k);
      map.set(k, existing ? existing.intersection(r) : r);
    }
    return new Requirements(map);
  }

  /** This set with `requirements` added (intersected on shared keys). */
  add(...requirements: readonly Requirement[]): Requirements {
    return this.intersect(Requirements.of(...requirements));
  }

  /**
   * Every shared key has a value both sides allow. Two sides that both allow the label's absence
   * (NotIn / DoesNotExist) are compatible even with no common value (Karpenter `Intersects`).
   * @returns the first incompatibility in key order, or undefined
   */
  intersects(incoming: Requirements): Incompatibility | undefined {
    const [small, large] = this.byKey.size <= incoming.byKey.size ? [this.byKey, incoming.byKey] : [incoming.byKey, this.byKey];
    const keys = [...small.keys()].filter((k) => large.has(k)).sort();
    for (const key of keys) {
      const existing = this.byKey.get(key)!;
      const theirs = incoming.byKey.get(key)!;
      if (existing.intersection(theirs).size() === 0 && !(existing.allowsAbsence() && theirs.allowsAbsence())) {
        return { kind: 'noIntersection', key, incoming: theirs, existing };
      }
    }
    return undefined;
  }

  /**
   * Whether a pod's requirements (`incoming`) can be met by a NodeClaim with these requirements
   * (Karpenter `Compatible`): a label the pod needs must be defined here unless it is in `allowUndefined`
   * (the well-known labels) or the pod only excludes it (NotIn / DoesNotExist); shared keys must intersect.
   * @returns the first incompatibility, or undefined when compatible
   */
  compatible(incoming: Requirements, allowUndefined: ReadonlySet<string>): Incompatibility | undefined {
    for (const key of incoming.keys()) {
      if (allowUndefined.has(key) || this.byKey.has(key)) continue;
      const r = incoming.byKey.get(key)!;
      if (r.allowsAbsence()) continue;
      return { kind: 'undefinedLabel', key, incoming: r };
    }
    return this.intersects(incoming);
  }

  /**
   * True when a node with exactly these labels satisfies every requirement: a present label must be allowed,
   * an absent label must be allowed to be absent.
   */
  isSatisfiedBy(labels: Readonly<Record<string, string>>): boolean {
    for (const [key, r] of this.byKey) {
      const value = ownValue(labels, key);
      if (value === undefined ? !r.allowsAbsence() : !r.has(value)) return false;
    }
    return true;
  }

  /** The first requirement a node with these labels does not satisfy, or undefined. */
  firstUnsatisfied(labels: Readonly<Record<string, string>>): Requirement | undefined {
    for (const key of this.keys()) {
      const r = this.byKey.get(key)!;
      const value = ownValue(labels, key);
      if (value === undefined ? !r.allowsAbsence() : !r.has(value)) return r;
    }
    return undefined;
  }

  /** Labels implied by single-valued `In` requirements (what a node launched for these requirements will carry). */
  labels(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const key of this.keys()) {
      const r = this.byKey.get(key)!;
      if (!r.complement && r.values.size === 1) out[key] = r.any()!;
    }
    return out;
  }

  /** Equivalent node selector requirements, sorted by key, for storage and output. */
  toNodeSelectorRequirements(): NodeSelectorRequirement[] {
    return this.values().flatMap((r) => r.toNodeSelectorRequirements());
  }

  /** Readable form, one requirement per key joined by `; `. */
  toString(): string {
    return this.values().map(String).join('; ');
  }
}

function assertNever(x: never): never {
  throw new RangeError(`unexpected ${JSON.stringify(x)}`);
}
