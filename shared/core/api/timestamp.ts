/**
 * Timestamps as the stores keep them (RFC 3339 strings, e.g. a NodeClaim's `createdAt`) read as epoch milliseconds,
 * remembered: the disruption and lifecycle passes read the same few thousand timestamps every minute, and
 * `Date.parse` costs about 180 ns a call where a lookup costs about 15 (2,000 NodeClaims, a pass a minute, a day:
 * millions of calls). Pure apart from the bounded memo, which never changes a result.
 */

/** At most this many distinct texts are remembered; past it the memo starts again (a run's results never depend on it). */
const MEMO_LIMIT = 100_000;
const memo = new Map<string, number>();

/**
 * `Date.parse(text)`, remembered.
 * @param text an RFC 3339 / ISO 8601 timestamp, UTC (`2026-03-02T00:00:01.000Z`)
 * @returns epoch milliseconds, UTC; NaN for text `Date.parse` cannot read (not remembered)
 * @example timestampMs('1970-01-01T00:00:01Z') // 1000
 */
export function timestampMs(text: string): number {
  let ms = memo.get(text);
  if (ms === undefined) {
    ms = Date.parse(text);
    if (Number.isNaN(ms)) return ms;
    if (memo.size >= MEMO_LIMIT) memo.clear();
    memo.set(text, ms);
  }
  return ms;
}
