/**
 * What the disruption controller takes (its ports and its memory) and what one pass reports. The controller's phases
 * are one file each in this folder: `world.ts` (reading the world), `budget-ledger.ts`, `propose.ts`, `validate.ts`,
 * `orchestrate.ts` (starting commands, launching replacements, waiting for them), `forceful.ts` (expiration and
 * forceful starts), `drain.ts`, and the entry points in `disrupt.ts`; the methods are in `methods/`.
 */
import type { DisruptionReason } from '../../core/api/nodeclaim.js';
import type { NodePool } from '../../core/api/nodepool.js';
import type { DaemonSetLike } from '../../core/provisioning/nodepool-template.js';
import type { Cluster } from '../../ports/cluster.js';
import type { FollowUpPasses } from '../../ports/follow-up-passes.js';
import type { LaunchDeps } from '../launch.js';
import type { EC2NodeClassLike } from '../launch.js';
import type { DisruptionMemory } from './memory.js';

/** The EC2NodeClass fields disruption reads: provisioning's, plus the whole spec for its hash. */
export type DisruptionNodeClass = EC2NodeClassLike & { readonly spec: unknown };

/**
 * Which consolidation moves the controller makes: `skiff` (default) — Karpenter's, then Skiff's repack and split
 * moves (`methods.ts`); `karpenter` — Karpenter's moves, limits and timeouts only (the baseline a simulation compares
 * with, `skiff simulate --consolidation karpenter`).
 */
export type ConsolidationSetting = 'skiff' | 'karpenter';

/** Everything the controller needs, as ports, and what it remembers between passes. */
export interface DisruptionDeps extends LaunchDeps {
  readonly cluster: Cluster<NodePool, DisruptionNodeClass, DaemonSetLike>;
  /** `settings.featureGates.SpotToSpotConsolidation` (default off). */
  readonly spotToSpotConsolidation: boolean;
  /** Which consolidation moves it makes ({@link ConsolidationSetting}). @default 'skiff' */
  readonly consolidation?: ConsolidationSetting;
  /**
   * What the controller remembers between passes over one NodeClaim store (one cluster): the last "nothing to do"
   * verdict, the `DisruptionBlocked` Events written, the invalid do-not-disrupt values reported, and caches. Created by
   * whoever wires the controller, once per NodeClaim store: the Lambda wiring once per warm container, the simulation
   * once per run (its disruption and interruption handlers share it, as they share the store).
   */
  readonly memory: DisruptionMemory;
  /**
   * Where a pass asks for its follow-up itself: when it reads work in flight — a disruption in flight (commands to
   * validate, replacements to wait for, drains and their terminationGracePeriod deadlines), an expired NodeClaim, a
   * drifted one — it asks for a pass `FOLLOW_UP_AFTER_MS` later **before its first side effect**
   * (`urgency.ts requestFollowUpEarly`), so a pass that dies part-way is resumed 20 s later, not at the schedule's next
   * minute, and reports it in `DisruptionReport.followUpAt`. Without it (or when the pass read no such work), the pass
   * leaves the request to its caller through `DisruptionReport.followUpAfterMs`, acted on after the pass.
   * @default none
   */
  readonly followUps?: FollowUpPasses;
}

/** What one pass did. */
export interface DisruptionReport {
  /** Commands proposed this pass (validated next pass). */
  readonly proposed: readonly { readonly command: string; readonly reason: DisruptionReason; readonly decision: 'delete' | 'replace'; readonly candidates: readonly string[] }[];
  /** Commands validated and started: nodes tainted, replacements launching. */
  readonly started: readonly string[];
  /** Proposals dropped at validation, or commands abandoned (a replacement failed), with why. */
  readonly rejected: readonly { readonly command: string; readonly reason: string }[];
  /** NodeClaims that expired and started draining. */
  readonly expired: readonly string[];
  /** Pods evicted (`ns/name`). */
  readonly evicted: readonly string[];
  /**
   * Pods deleted because their node's terminationGracePeriod was running out (`ns/name`; PDBs and do-not-disrupt
   * bypassed). Always set by `disrupt` and `disruptNow`; optional for reports built elsewhere.
   */
  readonly forceDeleted?: readonly string[];
  /** Pods whose eviction must wait, with why (a PDB's 429, do-not-disrupt). */
  readonly waiting: readonly { readonly pod: string; readonly reason: string }[];
  /** NodeClaims deleted (instance terminated), with the reason. */
  readonly deleted: readonly { readonly nodeClaim: string; readonly reason: DisruptionReason }[];
  /** Nodes the methods looked at and turned down, with why (Karpenter logs these at debug). */
  readonly skipped: readonly { readonly nodeClaim: string; readonly reason: string }[];
  /**
   * Consolidatable nodes a do-not-disrupt annotation or a PDB blocks, and drifted nodes whose replacement would be
   * drifted too (each gets a `DisruptionBlocked` event).
   */
  readonly blocked: readonly { readonly nodeClaim: string; readonly node: string; readonly reason: string }[];
  /** NodePools whose budgets held back a candidate, per reason (each gets a `DisruptionBlocked` event, Karpenter's words). */
  readonly budgetBlocked: readonly { readonly nodePool: string; readonly reason: 'Empty' | 'Underutilized' | 'Drifted' }[];
  /**
   * Searches that stopped on their budget before trying every candidate (`search-budget.ts`; Karpenter's consolidation
   * timeouts): the method, the candidates simulated and of how many. The next pass resumes the search. Always set by
   * `disrupt`; optional for reports built elsewhere.
   */
  readonly searchStopped?: readonly { readonly method: string; readonly evaluated: number; readonly candidates: number }[];
  /**
   * Set when the pass leaves work in flight — a proposal to validate, replacements to wait for, a drain to finish: ask
   * for another pass this long after this one, ms (`FOLLOW_UP_AFTER_MS`, `shared/ports/follow-up-passes.ts`). Absent:
   * nothing is in flight, and the schedule's next pass is soon enough.
   */
  readonly followUpAfterMs?: number;
  /**
   * The follow-up pass this pass asked for itself (ISO 8601 UTC), before its first side effect, because it read work in
   * flight ({@link DisruptionDeps.followUps}); `followUpAfterMs` is then absent (one request per pass).
   */
  readonly followUpAt?: string;
  /** Why asking for that follow-up failed (the pass went on; the schedule's next pass comes anyway). */
  readonly followUpFailure?: string;
}
