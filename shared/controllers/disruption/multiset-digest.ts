/**
 * An order-independent digest of a multiset of strings, for the disruption controller's "consolidated" fingerprint
 * (`consolidated.ts`): a digest is only ever compared for equality with another of the same controller's memory.
 */
import { fnv1a } from '../../core/hash.js';

/**
 * An order-independent digest of a multiset of strings: their count and, summed modulo 2^32, their FNV-1a hashes and a
 * second, independent hash (a multiplicative string hash with a murmur3 finalizer). Two different multisets share a
 * digest with a chance of about 2^-64.
 */
export class MultisetDigest {
  private count = 0;
  private a = 0;
  private b = 0;

  /** Adds one part. */
  add(part: string): void {
    this.addHashes(partHashes(part));
  }

  /** Adds a part by its {@link partHashes}. */
  addHashes(hashes: readonly [number, number]): void {
    this.count++;
    this.a = (this.a + hashes[0]) >>> 0;
    this.b = (this.b + hashes[1]) >>> 0;
  }

  /** Adds every part of `other`. */
  addDigest(other: MultisetDigest): void {
    this.count += other.count;
    this.a = (this.a + other.a) >>> 0;
    this.b = (this.b + other.b) >>> 0;
  }

  /** The digest as `<count>:<hash a>:<hash b>` (base 36). */
  toString(): string {
    return `${this.count}:${this.a.toString(36)}:${this.b.toString(36)}`;
  }
}

/** The two independent 32-bit hashes of one part of a {@link MultisetDigest}. */
export function partHashes(part: string): readonly [number, number] {
  let h = 0x9747b28c;
  for (let i = 0; i < part.length; i++) h = Math.imul(h ^ part.charCodeAt(i), 0x5bd1e995) >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return [fnv1a(part), h >>> 0];
}
