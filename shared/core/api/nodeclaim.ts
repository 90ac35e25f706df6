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

/** Why a NodeClaim was deleted, as the Result contract names it. */
export type DeletionReason =
  | 'Empty'
  | 'Underutilized'
  | 'Drifted'
  | 'Expired'
  | 'Interrupted'
  | 'RegistrationTimeout'
  | 'LaunchFailed'
  | 'InstanceTerminated';

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
  readonly version: number;
}

/** True while the NodeClaim holds or will hold capacity (not deleted, not failed). */
export function isLive(claim: NodeClaim): boolean {
  return claim.state !== 'Deleted' && claim.state !== 'Failed';
}
