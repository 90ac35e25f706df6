/**
 * Kubernetes resource quantities (`500m`, `1.5Gi`, `2e3`, `128974848`) parsed into Skiff's canonical units.
 *
 * Source: the quantity grammar of k8s.io/apimachinery `pkg/api/resource/quantity.go` (`ParseQuantity`: an optional
 * sign, digits with an optional fraction, then a binary suffix Ki…Ei, a decimal suffix n, u, m, k, M, G, T, P, E, or a
 * decimal exponent `e`/`E` with an optional sign) and `suffix.go`. Like `ParseQuantity`, nothing else is accepted: no
 * whitespace around or inside, no empty string. Two differences, both stricter: a negative quantity is refused (the API
 * server refuses one in every field Skiff reads), and so is a number without digits (`+`, `.`), which `ParseQuantity`
 * reads as 0 and a CRD's quantity pattern refuses.
 */
import { QuantityError } from '../errors.js';

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?\d+))?$/;

/**
 * Parses a quantity into its base unit (cores for cpu, bytes for memory, a plain count otherwise).
 * @param quantity a Kubernetes quantity string (exactly as `ParseQuantity` takes it: `" 500m"` or `"500m "` is not
 *   one), or a number already in base units
 * @returns the value in base units
 * @throws {QuantityError} when the string is not a quantity (whitespace around it included) or is negative
 * @example parseQuantity('1.5Gi') // 1610612736
 */
export function parseQuantity(quantity: string | number): number {
  if (typeof quantity === 'number') {
    if (!Number.isFinite(quantity) || quantity < 0) throw new QuantityError(String(quantity), 'must be a finite, non-negative number');
    return quantity;
  }
  const match = QUANTITY.exec(quantity);
  if (!match) throw new QuantityError(quantity, malformedReason(quantity));
  const [, num, suffix, exponent] = match;
  const value = Number(num);
  if (value < 0) throw new QuantityError(quantity, 'must not be negative');
  const result = exponent !== undefined ? value * 10 ** Number(exponent) : value * (BINARY[suffix ?? ''] ?? DECIMAL[suffix ?? ''] ?? 1);
  if (!Number.isFinite(result)) throw new QuantityError(quantity, 'is too large');
  return result;
}

/** Unit spellings people write that Kubernetes does not read, with the suffixes it does (`suffix.go`). */
const SUFFIX_FIXES: Record<string, string> = {
  KB: 'k or Ki', K: 'k or Ki', MB: 'M or Mi', GB: 'G or Gi', TB: 'T or Ti', PB: 'P or Pi', EB: 'E or Ei',
  KiB: 'Ki', MiB: 'Mi', GiB: 'Gi', TiB: 'Ti', PiB: 'Pi', EiB: 'Ei',
};

/**
 * Why `text` is not a quantity, with the fix when the mistake is a common one: whitespace around it, a space between
 * the number and its suffix, a unit spelt `MB`/`GiB`/`K`/`gi` (Kubernetes reads `M`/`Mi`, `Gi`, `k`/`Ki`, `Gi`); otherwise
 * the grammar with examples for cpu and memory (and, for text naming GPUs, where GPUs are requested).
 */
function malformedReason(text: string): string {
  const base = 'not a valid Kubernetes quantity';
  if (/^\s|\s$/.test(text)) return `${base}: remove the whitespace around it`;
  const unit = /^([+-]?(?:\d+\.?\d*|\.\d+))\s*([A-Za-z]+)$/.exec(text);
  if (unit && QUANTITY.test(`${unit[1]}${unit[2]}`)) return `${base}: remove the space between the number and its suffix ("${unit[1]}${unit[2]}")`;
  const written = unit?.[2] ?? '';
  const fix = unit ? SUFFIX_FIXES[written] ?? SUFFIX_FIXES[written.toUpperCase()] ?? Object.keys(BINARY).find((b) => b.toLowerCase() === written.toLowerCase()) : undefined;
  if (unit && fix) {
    const options = fix.split(' or ').map((s) => `"${unit[1]}${s}"`).join(' or ');
    return `${base}: Kubernetes reads no suffix "${written}"; did you mean ${options}? (Ki, Mi, Gi are powers of 1024; k, M, G powers of 1000)`;
  }
  const gpu = /gpu/i.test(text) ? '; GPUs are a resource of their own: request them as `nvidia.com/gpu: 1`' : '';
  return `${base}: expected a number with an optional suffix, e.g. "250m" or "2" for cpu, "512Mi" or "4Gi" for memory${gpu}`;
}

/**
 * A CPU quantity in millicores, rounded up as Kubernetes' `MilliValue` does.
 * @throws {QuantityError} on a malformed quantity
 * @example cpuMillicores('1.5') // 1500
 */
export function cpuMillicores(quantity: string | number): number {
  return Math.ceil(round9(parseQuantity(quantity) * 1000));
}

/**
 * A byte quantity (memory, ephemeral-storage, hugepages) in MiB. Fractions are kept (e.g. `100M` ≈ 95.37 MiB).
 * @throws {QuantityError} on a malformed quantity
 * @example mebibytes('1Gi') // 1024
 */
export function mebibytes(quantity: string | number): number {
  return parseQuantity(quantity) / 2 ** 20;
}

/** Rounds away binary floating-point noise below 1e-9 (so `0.1 * 1000` is exactly 100). */
function round9(x: number): number {
  return Math.round(x * 1e9) / 1e9;
}
