/**
 * Controller reports → {@link Decision}s for the decisions port (`shared/ports/decisions.ts`), and the one way handlers
 * publish them: {@link publishDecisions} never fails the pass — a publisher that throws or gives up on entries is
 * logged at `warn`, since decisions are observability (the same facts are in the structured logs).
 */
import type { DisruptionReport } from '../controllers/disruption.js';
import type { ProvisionReport } from '../controllers/provision.js';
import type { Decision, DecisionPublisher } from '../ports/decisions.js';
import type { Log } from './log.js';
import { nodePoolOfNodeClaim } from './metrics.js';

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
 * Publishes decisions when a publisher is configured; logs (never throws) when it fails or gives up on entries.
 * @param publisher the port, or undefined (nothing to do)
 * @param decisions what to publish (none: nothing happens)
 * @param log where failures are reported, with keys `published`, `failed` (`[{type, errorCode, errorMessage}]`) or `error`
 */
export async function publishDecisions(publisher: DecisionPublisher | undefined, decisions: readonly Decision[], log: Log): Promise<void> {
  if (!publisher || decisions.length === 0) return;
  try {
    const result = await publisher.publish(decisions);
    if (result.failed.length > 0) {
      log.warn('decisions not published', {
        published: result.published,
        failed: result.failed.map((f) => ({ type: f.decision.type, errorCode: f.errorCode, errorMessage: f.errorMessage })),
      });
    }
  } catch (e) {
    log.warn('decisions not published', { decisions: decisions.length, error: e instanceof Error ? e.message : String(e) });
  }
}
