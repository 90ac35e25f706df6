/**
 * NodeClaim: Skiff's record of one node it launched or is launching. DynamoDB is the source of truth; the
 * Kubernetes `karpenter.sh/v1` NodeClaim object is a mirror. All times are ISO-8601 UTC strings.
 */
import type { CapacityType } from './labels.js';
import type { NodeSelectorRequirement, Taint } from './kubernetes.js';
import type { ResourceList } from '../resources/resource-list.js';

/**
 * Lifecycle states, in order: `Pending` (record written, no instance yet) → `Launched` (instance exists) →
 * `Registered` (a Node joined with the instance's providerID) → `Initialized` (Ready, startup taints gone).
 * `Deleting` and `Deleted` end it; `Failed` is a launch that will not be retried.
 */
export type NodeClaimState = 'Pending' | 'Launched' | 'Registered' | 'Initialized' | 'Deleting' | 'Deleted' | 'Failed';

/**
 * Why a NodeClaim was deleted, as the Result contract names it. `NodeDeleted` and `NodeClaimDeleted` are a user's
 * manual deletion of its Node or of its NodeClaim object (Karpenter's manual method, docs `concepts/disruption.md`),
 * carried out as a graceful termination.
 */
export type DeletionReason =
  | 'Empty'
  | 'Underutilized'
  | 'Drifted'
  | 'Expired'
  | 'Interrupted'
  | 'RegistrationTimeout'
  | 'LaunchFailed'
  | 'InstanceTerminated'
  | 'NodeDeleted'
  | 'NodeClaimDeleted';

/**
 * A disruption's reason, as budgets and the Result name it: the voluntary methods (`Empty`, `Underutilized`,
 * `Drifted`, budgeted) and the forceful ones (`Expired`, `Interrupted`, and a user's `NodeDeleted` /
 * `NodeClaimDeleted`: no budget, no replacement first, the drain honours PDBs until `terminationGracePeriod`).
 */
export type DisruptionReason = 'Empty' | 'Underutilized' | 'Drifted' | 'Expired' | 'Interrupted' | 'NodeDeleted' | 'NodeClaimDeleted';

/** The forceful disruption reasons (no budget, no replacement first). */
export type ForcefulReason = 'Expired' | 'Interrupted' | 'NodeDeleted' | 'NodeClaimDeleted';

/**
 * Where a NodeClaim's disruption stands: `Proposed` (chosen; re-validated at least 15 s later before anything
 * happens), `Replacing` (node tainted `karpenter.sh/disrupted:NoSchedule`, replacements launching), `Draining`
 * (replacements initialized or none needed: pods are being evicted, then the instance is terminated).
 */
export type DisruptionPhase = 'Proposed' | 'Replacing' | 'Draining';

/** The disruption of one NodeClaim (one of a command's candidates). */
export interface NodeClaimDisruption {
  /** The command's id; the candidates of one command share it. */
  readonly command: string;
  readonly reason: DisruptionReason;
  readonly decision: 'delete' | 'replace';
  readonly phase: DisruptionPhase;
  /** Names of the NodeClaims launched to replace the command's candidates (empty for a delete). */
  readonly replacements: readonly string[];
  /** The command's other candidates (NodeClaim names), this one included. */
  readonly candidates: readonly string[];
  /** Why, in words (e.g. the drift reason, or the replacement's saving). */
  readonly message: string;
  /** When it was proposed (ISO). */
  readonly proposedAt: string;
  /**
   * The disruption method whose search proposed it: `emptiness`, `drift`, `multi-node-consolidation`,
   * `single-node-consolidation`, or Skiff's `repack-consolidation` and `split-consolidation`
   * (`controllers/disruption/methods.ts`). Absent for a forceful disruption (Expired, Interrupted: no method chose it)
   * and on records written before it was kept.
   */
  readonly method?: string;
  /**
   * What the proposal expected to save, USD per hour: set for a consolidation that launches two or more replacements
   * (Skiff's repack and split moves, `core/disruption/repack.ts`), whose validation must find a move at least as good.
   */
  readonly savings?: number;
  /**
   * Its place among the commands one pass proposed at `proposedAt` (0 first; absent: 0). Each was searched with the
   * ones before it already counted as going away, and is validated the same way (`controllers/disruption/validate.ts`).
   */
  readonly order?: number;
  /**
   * Per NodePool of its candidates, the disruption budget its validation let it start under (Empty, Underutilized and
   * Drifted only; absent on forceful disruptions and on records written before Skiff kept it). Reports read it
   * instead of working the budget out again (`Result.whatIf.actions[].budgetRule`).
   */
  readonly budgets?: Readonly<Record<string, DisruptionBudgetUsed>>;
  /** When it was validated and started: the node tainted (ISO). */
  readonly startedAt?: string;
  /** When eviction started (ISO). */
  readonly drainStartedAt?: string;
}

/**
 * A NodePool's disruption budget for one reason as the disruption controller worked it out at one instant (core
 * `pkg/controllers/disruption/helpers.go BuildDisruptionBudgetMapping`, `nodepool.go GetAllowedDisruptionsByReason`):
 * the most restrictive active budget's node count over the NodePool's managed, initialized nodes (a percentage rounded
 * up), minus the nodes already being disrupted or NotReady, floored at 0.
 */
export interface DisruptionBudgetUsed {
  /** The NodePool's managed, initialized nodes: the base of percentages. */
  readonly nodes: number;
  /** Of those, the nodes already being disrupted (tainted, or their record's disruption started) or NotReady. */
  readonly disrupting: number;
  /** Nodes the most restrictive active budget allows in total; null when no budget is active (unlimited). */
  readonly allowed: number | null;
  /** `allowed − disrupting`, floored at 0: how many more may start; null when unlimited. */
  readonly remaining: number | null;
  /** That budget's index in the NodePool's `spec.disruption.budgets`; null when unlimited. */
  readonly budget: number | null;
}

/** One instance-type choice a NodeClaim may launch as; the list on a NodeClaim is cheapest first. */
export interface InstanceTypeOption {
  readonly instanceType: string;
  /** Cheapest available compatible offering's price, USD per hour. */
  readonly price: number;
}

/** A NodeClaim record. `version` increases by one on every write (optimistic concurrency). */
export interface NodeClaim {
  readonly name: string;
  readonly nodePool: string;
  readonly nodeClass: string;
  readonly state: NodeClaimState;
  /** Requirements the instance must satisfy (NodePool's ∩ every nominated pod's), canonical form. */
  readonly requirements: readonly NodeSelectorRequirement[];
  /** Instance types it may launch as, cheapest first (at most 600, Karpenter's `MaxInstanceTypes`). */
  readonly instanceTypes: readonly string[];
  /** Sum of the nominated pods' requests plus daemonset overhead, canonical units. */
  readonly resources: ResourceList;
  readonly labels: Readonly<Record<string, string>>;
  /**
   * The NodePool template's annotations (`spec.template.metadata.annotations`) at creation, which registration copies
   * onto the Node (core `pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go` `ToNodeClaim`,
   * `pkg/controllers/nodeclaim/lifecycle/registration.go` `syncNode`); absent when the template has none (and on
   * records written before Skiff kept them).
   */
  readonly annotations?: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  readonly startupTaints: readonly Taint[];
  /** `namespace/name` of the pods this NodeClaim was launched for; they are not solved again while it lives. */
  readonly nominatedPods: readonly string[];
  readonly instanceId?: string;
  readonly providerId?: string;
  readonly nodeName?: string;
  readonly instanceType?: string;
  readonly zone?: string;
  readonly capacityType?: CapacityType;
  /** USD per hour of the launched offering. */
  readonly price?: number;
  readonly allocatable?: ResourceList;
  readonly createdAt: string;
  readonly launchedAt?: string;
  readonly registeredAt?: string;
  readonly initializedAt?: string;
  readonly deletedAt?: string;
  readonly deletionReason?: DeletionReason;
  /** EC2 error code of the failed launch, e.g. `InsufficientInstanceCapacity`. */
  readonly launchError?: string;
  /** Hash of the NodePool's template at launch (Karpenter's `karpenter.sh/nodepool-hash`), for drift. */
  readonly nodePoolHash?: string;
  /** Hash of the EC2NodeClass's spec at launch, for drift. */
  readonly nodeClassHash?: string;
  /** The NodePool's `expireAfter` at launch, seconds; null for `Never` (Karpenter copies it onto the NodeClaim). */
  readonly expireAfterSeconds?: number | null;
  /** The NodePool's `terminationGracePeriod` at launch, seconds; absent means drains wait indefinitely. */
  readonly terminationGracePeriodSeconds?: number;
  /** The NodeClaim(s) this one was launched to replace (a disruption replacement). */
  readonly replacementFor?: readonly string[];
  /** Last time a pod was bound to or left its node (Karpenter `status.lastPodEventTime`); consolidateAfter counts from it. */
  readonly lastPodEventAt?: string;
  /** Fingerprint of the pods on the node when {@link lastPodEventAt} was taken (how the next change is noticed). */
  readonly podsFingerprint?: string;
  /** Set once a disruption chose this NodeClaim; kept after deletion as its history. */
  readonly disruption?: NodeClaimDisruption;
  readonly version: number;
}

/** True while the NodeClaim holds or will hold capacity (not deleted, not failed). */
export function isLive(claim: NodeClaim): boolean {
  return claim.state !== 'Deleted' && claim.state !== 'Failed';
}

/**
 * True when the NodeClaim is marked for deletion in Karpenter's sense (core v1.14 `pkg/controllers/state/statenode.go`
 * `MarkedForDeletion`): a disruption started on it — its node tainted and the command recorded (`Replacing`, or
 * `Draining`), which is Karpenter's orchestration queue marking the candidates — or it is being deleted (`Deleting`:
 * a forceful disruption, a drain, Karpenter's deletion timestamp). A `Proposed` disruption does not mark it.
 *
 * Such a NodeClaim no longer counts toward its NodePool's `spec.limits`: Karpenter's NodePool usage adds a node's
 * capacity only while it is not marked for deletion (`pkg/controllers/state/cluster.go` `updateNodePoolResources`,
 * read by `Provisioner.Create` through `NodePoolResourcesFor` and by the nodepool counter), and its scheduler
 * subtracts only the active nodes (`provisioner.go` `Schedule`: `nodes.Active()`; `scheduling/scheduler.go`
 * `calculateExistingNodeClaims`). So a replacement may overlap the node it replaces (docs
 * `karpenter-semantics.md#limits`).
 */
export function isMarkedForDeletion(claim: NodeClaim): boolean {
  return claim.state === 'Deleting' || claim.disruption?.phase === 'Replacing' || claim.disruption?.phase === 'Draining';
}
