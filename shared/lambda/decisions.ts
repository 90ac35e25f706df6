/**
 * Controller reports → {@link Decision}s for the decisions port (`shared/ports/decisions.ts`), and the one way handlers
 * publish them: {@link publishDecisions} never fails the pass — a publisher that throws or gives up on entries is
 * logged at `warn` and counted (`skiff_decisions_unpublished_total`), since decisions are observability (the same
 * facts are in the structured logs).
 */
import type { DisruptionReport } from '../controllers/disruption/deps.js';
import type { InterruptionReport } from '../controllers/interruption.js';
import type { ProvisionReport } from '../controllers/provision.js';
import { metricPoint } from '../core/metrics.js';
import type { Decision, DecisionPublisher } from '../ports/decisions.js';
import type { Log } from './log.js';
import { nodePoolOfNodeClaim, publishMetrics, type MetricsPublisher } from './metrics.js';

/** `{ nodePool }` when the NodeClaim's name tells it, else nothing. */
function nodePoolField(nodeClaim: string): { readonly nodePool?: string } {
  const nodePool = nodePoolOfNodeClaim(nodeClaim);
  return nodePool !== undefined ? { nodePool } : {};
}

/**
 * The decisions of a provisioning pass: each NodeClaim launched or failed, and each pod left unschedulable with the
 * reason per NodePool. A skipped pass (`coveredByPassAt`) decided nothing.
 */
export function provisionDecisions(report: ProvisionReport): Decision[] {
  if (report.coveredByPassAt !== undefined) return [];
  return [
    ...report.launched.map((nodeClaim): Decision => ({ type: 'NodeClaimLaunched', nodeClaim, ...nodePoolField(nodeClaim) })),
    ...report.failed.map((f): Decision => ({ type: 'NodeClaimLaunchFailed', nodeClaim: f.nodeClaim, ...nodePoolField(f.nodeClaim), error: f.error })),
    ...report.unschedulable.map((u): Decision => ({ type: 'PodUnschedulable', pod: u.pod, reason: u.reason, nodePools: u.nodePools })),
  ];
}

/**
 * The decisions of a disruption pass: proposed, started, expired, blocked (nodes, budgets, proposals dropped at
 * validation) and completed.
 */
export function disruptionDecisions(report: DisruptionReport): Decision[] {
  return [
    ...report.proposed.map((p): Decision => ({ type: 'DisruptionProposed', command: p.command, reason: p.reason, decision: p.decision, candidates: p.candidates })),
    ...report.started.map((command): Decision => ({ type: 'DisruptionStarted', command })),
    ...report.expired.map((nodeClaim): Decision => ({ type: 'NodeClaimExpired', nodeClaim })),
    ...report.blocked.map((b): Decision => ({ type: 'DisruptionBlocked', nodeClaim: b.nodeClaim, node: b.node, ...nodePoolField(b.nodeClaim), reason: b.reason })),
    ...report.budgetBlocked.map((b): Decision => ({
      type: 'DisruptionBlocked',
      nodePool: b.nodePool,
      reason: `No allowed disruptions for disruption reason ${b.reason} due to blocking budget`,
    })),
    ...report.rejected.map((r): Decision => ({ type: 'DisruptionBlocked', command: r.command, reason: r.reason })),
    ...report.deleted.map((x): Decision => ({ type: 'DisruptionCompleted', nodeClaim: x.nodeClaim, ...nodePoolField(x.nodeClaim), reason: x.reason })),
  ];
}

/**
 * The decisions of one interruption message (the interruption controller's report): for each NodeClaim it disrupted,
 * `DisruptionStarted` (command `interruption/<EventBridge event id>/<NodeClaim>`), `DisruptionCompleted` (reason
 * `Interrupted`) when this call already deleted it, and `NodeClaimLaunched` for its replacements; then
 * `NodeClaimLaunched` for what the provisioning pass after the drain launched. A redelivered message repeats the
 * replacements it finds (EventBridge is at-least-once anyway; consumers dedupe on the detail).
 */
export function interruptionDecisions(report: InterruptionReport): Decision[] {
  const decisions: Decision[] = [];
  const launched = (nodeClaim: string): Decision => ({ type: 'NodeClaimLaunched', nodeClaim, ...nodePoolField(nodeClaim) });
  for (const i of report.instances) {
    if (i.kind !== 'acted') continue;
    decisions.push({ type: 'DisruptionStarted', command: `interruption/${report.id}/${i.nodeClaim}` });
    if (i.deleted) decisions.push({ type: 'DisruptionCompleted', nodeClaim: i.nodeClaim, ...nodePoolField(i.nodeClaim), reason: 'Interrupted' });
    decisions.push(...i.replacements.map(launched));
  }
  return [...decisions, ...report.provisioned.map(launched)];
}

/**
 * Publishes decisions when a publisher is configured; logs (never throws) when it fails or gives up on entries, and
 * counts the decisions not published as `skiff_decisions_unpublished_total` when `metrics` is given.
 * @param publisher the port, or undefined (nothing to do)
 * @param decisions what to publish (none: nothing happens)
 * @param log where failures are reported, with keys `published`, `failed` (`[{type, errorCode, errorMessage}]`) or `error`
 * @param metrics where the count of unpublished decisions goes @default none
 */
export async function publishDecisions(publisher: DecisionPublisher | undefined, decisions: readonly Decision[], log: Log, metrics?: MetricsPublisher): Promise<void> {
  if (!publisher || decisions.length === 0) return;
  let unpublished = 0;
  try {
    const result = await publisher.publish(decisions);
    if (result.failed.length > 0) {
      unpublished = result.failed.length;
      log.warn('decisions not published', {
        published: result.published,
        failed: result.failed.map((f) => ({ type: f.decision.type, errorCode: f.errorCode, errorMessage: f.errorMessage })),
      });
    }
  } catch (e) {
    unpublished = decisions.length;
    log.warn('decisions not published', { decisions: decisions.length, error: e instanceof Error ? e.message : String(e) });
  }
  if (unpublished > 0) publishMetrics(metrics, [metricPoint('decisionsUnpublished', unpublished)], log);
}
