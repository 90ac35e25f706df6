/**
 * Launched-then-unused capacity (issue 21): NodeClaims whose instance was launched during the run, whose node never had
 * a pod bound to it (DaemonSet pods aside), and that ended — consolidated as empty, expired, interrupted, timed out,
 * garbage-collected. Under duplicate deliveries, overlapping invocations and crashes, a launch the pods did not need
 * shows up here, even when no invariant was broken (a duplicate launch the observer counts is one case; a launch for pods
 * another node took first is another). Computed from the Result alone, so a reader can compute it for a Result written
 * before the field existed.
 */
import { existedAtStart, type Result, type WastedLaunches } from './result-schema.js';

/**
 * The launched-then-unused figures of a Result (see `WastedLaunchesSchema`): NodeClaims created at or after the start
 * (a scenario's `spec.nodes` are not launches of the run) with a `launchedAt`, a `deletedAt`, and no pod of the Result
 * ever bound to their node other than a DaemonSet's. Instance-hours run from `launchedAt` to `deletedAt`, clipped to
 * the run; their cost is `price` (USD/h) × those hours.
 * @param result the Result's NodeClaims, nodes, pods and interval (UTC ISO times)
 * @returns counts, hours (rounded to 4 decimals), USD (rounded to 4 decimals) and the count per `deletionReason`
 *   (`launchError` when the record failed instead, `unknown` when neither is set)
 */
export function wastedLaunchFigures(result: Pick<Result, 'start' | 'end' | 'nodeClaims' | 'nodes' | 'pods'>): WastedLaunches {
  const startMs = Date.parse(result.start);
  const endMs = Date.parse(result.end);
  const used = new Set<string>();
  const claimOfNode = new Map(result.nodes.filter((n) => n.nodeClaim !== null).map((n) => [n.name, n.nodeClaim!]));
  for (const p of result.pods) {
    if (p.node === null || p.owner?.startsWith('DaemonSet/')) continue;
    const claim = p.nodeClaim ?? claimOfNode.get(p.node);
    if (claim) used.add(claim);
  }
  let nodeClaims = 0;
  let hours = 0;
  let usd = 0;
  const byReason: Record<string, number> = {};
  for (const c of result.nodeClaims) {
    if (c.launchedAt === null || c.deletedAt === null || existedAtStart(c, startMs) || used.has(c.name)) continue;
    nodeClaims++;
    const h = Math.max(0, Math.min(endMs, Date.parse(c.deletedAt)) - Math.max(startMs, Date.parse(c.launchedAt))) / 3_600_000;
    hours += h;
    usd += h * (c.price ?? 0);
    const reason = c.deletionReason ?? c.launchError ?? 'unknown';
    byReason[reason] = (byReason[reason] ?? 0) + 1;
  }
  const round = (x: number) => Math.round(x * 10_000) / 10_000;
  return { nodeClaims, instanceHours: round(hours), costUSD: round(usd), byReason };
}
