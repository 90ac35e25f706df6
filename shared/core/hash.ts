/**
 * Small deterministic hashes the core needs (no `node:crypto` in the core): decision-derived names, drift hashes,
 * simulated prices. Not for security.
 */

/**
 * 32-bit FNV-1a hash of a string's UTF-16 code units (Fowler–Noll–Vo, offset basis 0x811c9dc5, prime 0x01000193).
 * @returns an unsigned 32-bit integer
 */
export function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/**
 * JSON with object keys sorted at every level, so equal values give equal strings whatever their key order.
 * `undefined` members are dropped as `JSON.stringify` does.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

/**
 * A 64-bit structural hash of a JSON-like value as 16 hex digits: two FNV-1a passes (forward, and over the reversed
 * string) over {@link canonicalJson}. Used where Karpenter stores a hash annotation (`karpenter.sh/nodepool-hash`,
 * `karpenter.k8s.aws/ec2nodeclass-hash`) to detect drift.
 */
export function structuralHash(value: unknown): string {
  const json = canonicalJson(value);
  const reversed = [...json].reverse().join('');
  return fnv1a(json).toString(16).padStart(8, '0') + fnv1a(reversed).toString(16).padStart(8, '0');
}
