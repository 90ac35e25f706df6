/**
 * The decisions port: Skiff's decisions — what it launched, what failed, which pods stay pending and why, which
 * disruptions started, were blocked or completed — as events other systems can subscribe to. The AWS adapter
 * (`shared/adapters/aws/decision-events.ts`) puts them on an EventBridge bus (source `skiff`, detail-type the
 * decision's {@link Decision.type}); handlers take the port as an optional dependency, so nothing in the controllers
 * or handlers knows about EventBridge.
 */

/** A NodeClaim was launched (its instance exists). */
export interface NodeClaimLaunchedDecision {
  readonly type: 'NodeClaimLaunched';
  readonly nodeClaim: string;
  /** The NodePool, when known (from the NodeClaim's `<nodepool>-<suffix>` name). */
  readonly nodePool?: string;
}

/** A NodeClaim's launch failed. */
export interface NodeClaimLaunchFailedDecision {
  readonly type: 'NodeClaimLaunchFailed';
  readonly nodeClaim: string;
  readonly nodePool?: string;
  /** The EC2 error code, e.g. `InsufficientInstanceCapacity`. */
  readonly error: string;
}

/** A pending pod no NodePool can serve, with the reason each NodePool gives (the words of `skiff explain`). */
export interface PodUnschedulableDecision {
  readonly type: 'PodUnschedulable';
  /** `namespace/name`. */
  readonly pod: string;
  /** One sentence a user can act on. */
  readonly reason: string;
  /** NodePool name → why a node from it cannot serve the pod. */
  readonly nodePools: Readonly<Record<string, string>>;
}

/** A disruption command was proposed (validated again a pass later). */
export interface DisruptionProposedDecision {
  readonly type: 'DisruptionProposed';
  readonly command: string;
  /** `Empty`, `Underutilized`, `Drifted`, `Expired` or `Interrupted`. */
  readonly reason: string;
  readonly decision: 'delete' | 'replace';
  /** NodeClaims the command disrupts. */
  readonly candidates: readonly string[];
}

/** A disruption command was validated and started: nodes tainted, replacements launching or drain begun. */
export interface DisruptionStartedDecision {
  readonly type: 'DisruptionStarted';
  readonly command: string;
}

/** A NodeClaim expired (`expireAfter`) and started draining (forceful: no budget, no replacement first). */
export interface NodeClaimExpiredDecision {
  readonly type: 'NodeClaimExpired';
  readonly nodeClaim: string;
}

/**
 * A disruption was held back: a node by a do-not-disrupt annotation or a PDB, or a NodePool by its budgets (Karpenter's
 * `DisruptionBlocked` event, docs/karpenter-semantics.md#events), or a proposal dropped at validation.
 */
export interface DisruptionBlockedDecision {
  readonly type: 'DisruptionBlocked';
  readonly nodeClaim?: string;
  readonly node?: string;
  readonly nodePool?: string;
  readonly command?: string;
  /** Why, in words (or the budget's disruption reason, e.g. `Underutilized`). */
  readonly reason: string;
}

/** A disrupted NodeClaim is gone: pods evicted, instance terminated. */
export interface DisruptionCompletedDecision {
  readonly type: 'DisruptionCompleted';
  readonly nodeClaim: string;
  readonly nodePool?: string;
  readonly reason: string;
}

/** One of Skiff's decisions; `type` is the EventBridge detail-type. */
export type Decision =
  | NodeClaimLaunchedDecision
  | NodeClaimLaunchFailedDecision
  | PodUnschedulableDecision
  | DisruptionProposedDecision
  | DisruptionStartedDecision
  | NodeClaimExpiredDecision
  | DisruptionBlockedDecision
  | DisruptionCompletedDecision;

/** A decision's type (the EventBridge detail-type). */
export type DecisionType = Decision['type'];

/** A decision that could not be published after the publisher's retries. */
export interface UnpublishedDecision {
  readonly decision: Decision;
  /** The service's error code, e.g. `ThrottlingException`, `InternalFailure`. */
  readonly errorCode: string;
  readonly errorMessage: string;
}

/** What one publish did. */
export interface PublishDecisionsResult {
  /** Decisions accepted. */
  readonly published: number;
  /** Decisions given up on (entry-level failures that outlived the retries). */
  readonly failed: readonly UnpublishedDecision[];
}

/** Where decisions go. */
export interface DecisionPublisher {
  /**
   * Publishes the decisions (none: nothing happens), retrying failed entries.
   * @returns how many were accepted and which were given up on
   * @throws when the service cannot be reached at all after retries (the caller logs and goes on: decisions are
   *   observability, never a reason to fail a pass)
   */
  publish(decisions: readonly Decision[]): Promise<PublishDecisionsResult>;
}
