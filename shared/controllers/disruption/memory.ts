/**
 * What the disruption controller remembers between passes, in one object its wiring creates and a test can reset:
 * once per NodeClaim store (one cluster) — the Lambda wiring keeps one per warm container, the simulation one per run.
 * A cold Lambda starts with an empty one and simply searches, reports and computes again.
 */
import type { MultisetDigest } from './multiset-digest.js';
import type { ClusterPod } from '../../ports/cluster.js';
import type { BudgetWindow } from '../../core/disruption/budgets.js';
import type { nodePoolRequirements } from '../../core/provisioning/nodepool-template.js';

/** The current NodePool hash and requirements a drift check compares with. */
export interface PoolDriftInputs {
  readonly hash: string;
  readonly requirements: ReturnType<typeof nodePoolRequirements>;
}

/** The drift inputs of one pass: per NodePool, and the EC2NodeClass hashes per class name. */
export interface DriftInputs {
  readonly pools: Map<string, PoolDriftInputs>;
  readonly classes: Map<string, string>;
}

/** The active windows of one budget schedule over `[fromMs, toMs)` (epoch ms). */
export interface CachedBudgetWindows {
  readonly fromMs: number;
  readonly toMs: number;
  readonly windows: readonly BudgetWindow[];
}

/**
 * The disruption controller's memory. The first five fields change what a pass does (they hold back repeated work
 * and repeated Events); the rest are caches of pure computations, which only save time.
 */
export class DisruptionMemory {
  /**
   * The last "nothing to do" verdict: the world's fingerprint and when (epoch ms). While the fingerprint stays the
   * same, and for at most `CONSOLIDATED_TTL_MS`, the search is skipped (Karpenter's "consolidated" state).
   */
  consolidated: { readonly fingerprint: string; readonly at: number } | undefined;
  /**
   * The NodeClaim a single-node consolidation search stopped at on its budget (`search-budget.ts`): the next search
   * resumes after it. Undefined: start from the head of the candidates.
   */
  singleNodeResumeAfter: string | undefined;
  /**
   * Searches stopped on their budget while the world's fingerprint stayed `fingerprint`: how many candidates they
   * simulated in all. Once that covers every candidate, nothing was found in the same world and the "consolidated"
   * verdict is recorded (`disrupt.ts`).
   */
  stoppedSearches: { readonly fingerprint: string; evaluated: number } | undefined;
  /**
   * When the Karpenter-like baseline (`consolidation: 'karpenter'`) proposed its recent commands (epoch ms): it
   * proposes at most `KARPENTER_COMMANDS_PER_MINUTE` in any minute, however often passes run (`propose.ts`).
   */
  karpenterProposals: number[] = [];
  /** When each `DisruptionBlocked` (or `Unconsolidatable`) Event was last written (epoch ms), by dedupe key. */
  readonly blockedWritten = new Map<string, number>();
  /** Pods already told their do-not-disrupt value is invalid, as `uid|value`. */
  readonly invalidDoNotDisruptReported = new Set<string>();
  /** `fnv1a(JSON.stringify(spec))` in base 36 per NodePool or EC2NodeClass spec object (read-only objects). */
  specDigests = new WeakMap<object, string>();
  /** The fingerprint's hashes of each pod object the Cluster port listed (read-only objects; `consolidated.ts`). */
  podDigests = new WeakMap<object, readonly [number, number]>();
  /** The last pod list the fingerprint digested, and its digest (`consolidated.ts`). */
  lastPods: { readonly pods: readonly object[]; readonly digest: MultisetDigest } | undefined;
  /**
   * The last pod list a pass grouped by node, and the grouping (`world.ts readWorld`): a list of the same read-only
   * objects in the same order (a cluster where no pod changed) is grouped once.
   */
  lastPodsByNode: { readonly pods: readonly object[]; readonly byNode: ReadonlyMap<string, readonly ClusterPod[]> } | undefined;
  /** Active windows per budget schedule and duration (key `schedule\0duration`). */
  readonly budgetWindows = new Map<string, CachedBudgetWindows>();
  /** The drift inputs worked out in one pass, keyed by the pass's NodePool map (kept by every re-read of the pass). */
  driftInputs = new WeakMap<object, DriftInputs>();

  /** Forgets everything: the next pass behaves as the first pass of a cold container. */
  reset(): void {
    this.consolidated = undefined;
    this.singleNodeResumeAfter = undefined;
    this.stoppedSearches = undefined;
    this.karpenterProposals = [];
    this.blockedWritten.clear();
    this.invalidDoNotDisruptReported.clear();
    this.specDigests = new WeakMap();
    this.podDigests = new WeakMap();
    this.lastPods = undefined;
    this.lastPodsByNode = undefined;
    this.budgetWindows.clear();
    this.driftInputs = new WeakMap();
  }
}
