/**
 * Go / Karpenter durations (`720h`, `5m`, `30s`, `1h30m`, `0s`, `500ms`), parsed into seconds.
 *
 * Source: the grammar of Go's `time.ParseDuration` (a possibly signed sequence of decimal numbers, each with an
 * optional fraction and a unit suffix `ns`, `us`/`µs`, `ms`, `s`, `m`, `h`; the bare string `0` is also valid),
 * which Karpenter's `NillableDuration` uses, plus Karpenter's `Never` for fields that may be disabled
 * (kubernetes-sigs/karpenter `pkg/apis/v1/duration.go`).
 */
import * as z from 'zod';
import { SkiffError } from '../errors.js';

/** Seconds per unit suffix of a Go duration. */
const UNIT_SECONDS: Readonly<Record<string, number>> = {
  ns: 1e-9,
  us: 1e-6,
  µs: 1e-6, // U+00B5 micro sign
  μs: 1e-6, // U+03BC Greek mu
  ms: 1e-3,
  s: 1,
  m: 60,
  h: 3600,
};

/** One `<number><unit>` component, anchored at the current position (sticky). */
const COMPONENT = /([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)/y;

/** The longest Go duration, seconds (2^63 − 1 nanoseconds). */
export const MAX_DURATION_SECONDS = 9_223_372_036.854775807;

/** Karpenter's literal for "never" (e.g. `expireAfter: Never`, `consolidateAfter: Never`). */
export const NEVER = 'Never';

/**
 * A duration string that cannot be parsed. Lives here rather than in `errors.ts` because it belongs to the
 * duration grammar alone; it extends {@link SkiffError} like every Skiff error.
 */
export class DurationError extends SkiffError {
  /**
   * @param duration the offending input
   * @param reason why it is not accepted
   */
  constructor(
    readonly duration: string,
    reason = 'not a valid duration (expected e.g. 30s, 5m, 1h30m, 720h)',
  ) {
    super(`${JSON.stringify(duration)}: ${reason}`);
  }
}

/** True when `e` is a {@link DurationError}. */
export const isDurationError = (e: unknown): e is DurationError => e instanceof DurationError;

/** Options of {@link parseDuration}. */
export interface ParseDurationOptions {
  /**
   * Accept a leading `-` (scenario offsets such as `createdAt: -2h`).
   * @default false
   */
  readonly allowNegative?: boolean;
}

/**
 * Parses a Go duration into seconds.
 * @param text a Go duration such as `720h`, `5m`, `30s`, `1h30m`, `0s`, `500ms`, `1.5h` (or the bare `0`)
 * @param options whether a negative duration is accepted
 * @returns the duration in seconds (fractional for sub-second units, e.g. `500ms` → 0.5)
 * @throws {DurationError} when the text is not a Go duration, or is negative and negatives are not allowed
 * @example parseDuration('1h30m') // 5400
 * @example parseDuration('-2h', { allowNegative: true }) // -7200
 */
export function parseDuration(text: string, options: ParseDurationOptions = {}): number {
  let seconds = parsed.get(text);
  if (seconds === undefined) {
    seconds = parseSigned(text);
    if (parsed.size >= PARSED_LIMIT) parsed.clear();
    parsed.set(text, seconds);
  }
  if (seconds < 0 && !options.allowNegative) throw new DurationError(text, 'must not be negative');
  return seconds;
}

/**
 * Durations read before, by text: the controllers read the same few (a NodePool's `consolidateAfter`) for every
 * NodeClaim of every pass. Bounded; only well-formed texts are kept (a malformed one throws each time).
 */
const parsed = new Map<string, number>();
const PARSED_LIMIT = 10_000;

/** {@link parseDuration} without the sign check. @throws {DurationError} */
function parseSigned(text: string): number {
  let rest = text.trim();
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    if (rest.startsWith('-')) sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') throw new DurationError(text);
  let total = 0;
  COMPONENT.lastIndex = 0;
  while (COMPONENT.lastIndex < rest.length) {
    const match = COMPONENT.exec(rest);
    if (!match) throw new DurationError(text);
    const [, amount, unit] = match;
    total += Number(amount) * (UNIT_SECONDS[unit ?? ''] ?? Number.NaN);
  }
  // Go's time.Duration is an int64 of nanoseconds: about 2562047h47m16.854775807s at most (ParseDuration rejects more).
  if (!Number.isFinite(total) || total > MAX_DURATION_SECONDS) throw new DurationError(text, 'duration is out of range (Go durations stop at 2562047h)');
  const seconds = sign * Number.parseFloat(total.toFixed(9));
  return seconds === 0 ? 0 : seconds;
}

/**
 * Parses a Karpenter `NillableDuration`: a Go duration, or `Never`.
 * @param text a duration such as `720h`, or `Never`
 * @returns seconds, or `null` for `Never`
 * @throws {DurationError} when the text is neither
 * @example parseNillableDuration('Never') // null
 */
export function parseNillableDuration(text: string): number | null {
  return text.trim() === NEVER ? null : parseDuration(text);
}

/**
 * Formats seconds as a compact Go duration that {@link parseDuration} reads back to the same value (to the
 * millisecond): `5400` → `1h30m`, `0.5` → `500ms`, `0` → `0s`, `-7200` → `-2h`. Zero components are left out
 * (Go's `String()` would write `1h30m0s`; both parse alike).
 * @param seconds a finite number of seconds; rounded to whole milliseconds
 * @throws {DurationError} when `seconds` is not finite
 * @example formatDuration(90) // '1m30s'
 */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) throw new DurationError(String(seconds), 'must be a finite number of seconds');
  let ms = Math.round(Math.abs(seconds) * 1000);
  const sign = seconds < 0 && ms > 0 ? '-' : '';
  if (ms === 0) return '0s';
  if (ms < 1000) return `${sign}${ms}ms`;
  const hours = Math.floor(ms / 3_600_000);
  ms -= hours * 3_600_000;
  const minutes = Math.floor(ms / 60_000);
  ms -= minutes * 60_000;
  const wholeSeconds = Math.floor(ms / 1000);
  const millis = ms - wholeSeconds * 1000;
  let out = sign;
  if (hours > 0) out += `${hours}h`;
  if (minutes > 0) out += `${minutes}m`;
  if (wholeSeconds > 0 || millis > 0) {
    out += millis > 0 ? `${wholeSeconds}.${String(millis).padStart(3, '0').replace(/0+$/, '')}s` : `${wholeSeconds}s`;
  }
  return out;
}

/** Options of {@link durationSecondsSchema}. */
export interface DurationSchemaOptions extends ParseDurationOptions {
  /** Smallest accepted value, seconds (inclusive). */
  readonly minSeconds?: number;
  /** Require a value strictly greater than zero. @default false */
  readonly positive?: boolean;
}

/**
 * A zod schema that reads a Go duration string (or the number `0`) and outputs seconds. A bare non-zero number is
 * rejected because its unit would be a guess.
 * @param options negative values, minimum, positivity
 * @example durationSecondsSchema().parse('30m') // 1800
 */
export function durationSecondsSchema(options: DurationSchemaOptions = {}) {
  return z.union([z.string(), z.number()]).transform((value, ctx): number => {
    // A bare 0 needs no unit; it still meets the same bounds as "0s" (a bare 0 `duration` ran a zero-length scenario).
    if (typeof value === 'number' && value !== 0) {
      ctx.addIssue({ code: 'custom', message: `a duration needs a unit, e.g. "${value}s" or "${value}m"` });
      return z.NEVER;
    }
    let seconds: number;
    try {
      seconds = typeof value === 'number' ? 0 : parseDuration(value, options);
    } catch (e) {
      ctx.addIssue({ code: 'custom', message: e instanceof DurationError ? e.message : String(e) });
      return z.NEVER;
    }
    if (options.positive && seconds <= 0) {
      ctx.addIssue({ code: 'custom', message: `${JSON.stringify(value)}: must be greater than zero` });
      return z.NEVER;
    }
    if (options.minSeconds !== undefined && seconds < options.minSeconds) {
      ctx.addIssue({ code: 'custom', message: `${JSON.stringify(value)}: must be at least ${formatDuration(options.minSeconds)}` });
      return z.NEVER;
    }
    return seconds;
  });
}
