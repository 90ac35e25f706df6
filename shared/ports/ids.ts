/** Id generation port: random suffixes for generated names. The simulation supplies a seeded generator. */
import { randomBytes } from 'node:crypto';

/** Returns a fresh 5-character lowercase alphanumeric suffix, like Kubernetes' generateName. */
export type IdGenerator = () => string;

const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** Cryptographically random suffixes, for production. */
export const randomIds: IdGenerator = () => [...randomBytes(5)].map((b) => ALPHABET[b % ALPHABET.length]).join('');

/**
 * A deterministic generator for the simulation (mulberry32 PRNG).
 * @param seed any 32-bit integer
 */
export function seededIds(seed: number): IdGenerator {
  const next = mulberry32(seed);
  return () => Array.from({ length: 5 }, () => ALPHABET[Math.floor(next() * ALPHABET.length)]).join('');
}

/**
 * mulberry32: a small, fast 32-bit PRNG returning floats in [0, 1). Public-domain algorithm by Tommy Ettinger.
 * @param seed any 32-bit integer
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
