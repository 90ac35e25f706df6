/**
 * CloudProvider port: instance types with offerings, and instance launch/terminate.
 * Adapters: simulated EC2 (`shared/sim/simulated-ec2.ts`) and EC2 (`shared/adapters/aws/ec2-cloud-provider.ts`).
 * Errors are translated once by the adapter: capacity errors become `InsufficientCapacityError` (carrying the
 * offerings), throttling `ThrottledError`, anything else `CloudProviderError`.
 */
import type { Taint } from '../core/api/kubernetes.js';
import type { CapacityType } from '../core/api/labels.js';
import type { AmiFamily, EphemeralBlockDeviceMapping } from '../core/instancetypes/allocatable.js';
import type { InstanceType } from '../core/instancetypes/offering.js';
import type { OfferingKey } from '../core/instancetypes/offering-key.js';

/**
 * Inputs that change what an EC2NodeClass's instance types are: the AMI family (labels, which types it boots,
 * allocatable), kubelet settings, block device mappings and instance store policy (allocatable).
 */
export interface InstanceTypeQuery {
  readonly nodeClass: string;
  /** The EC2NodeClass's effective AMI family. @default 'AL2023' */
  readonly amiFamily?: AmiFamily;
  readonly kubelet?: {
    readonly maxPods?: number;
    readonly podsPerCore?: number;
    readonly systemReserved?: Readonly<Record<string, string>>;
    readonly kubeReserved?: Readonly<Record<string, string>>;
    readonly evictionHard?: Readonly<Record<string, string>>;
  };
  /** `spec.blockDeviceMappings` (only device name, `rootVolume` and EBS volume size matter). @default the family's defaults */
  readonly blockDeviceMappings?: readonly EphemeralBlockDeviceMapping[];
  /** `spec.instanceStorePolicy`. @default undefined */
  readonly instanceStorePolicy?: 'RAID0';
}

/** One CreateFleet-style launch: one instance for one NodeClaim. */
export interface LaunchRequest {
  /** The NodeClaim name; used as the idempotency token (EC2 `ClientToken`). */
  readonly nodeClaim: string;
  readonly nodePool: string;
  readonly nodeClass: string;
  /** The single capacity type of this request (Karpenter: reserved > spot > on-demand). */
  readonly capacityType: CapacityType;
  /** Allowed (instance type × zone) pairs with their prices in USD per hour, cheapest first. */
  readonly overrides: readonly { readonly instanceType: string; readonly zone: string; readonly price: number }[];
  /** Tags for the instance (cluster, NodePool, NodeClaim, Name). */
  readonly tags: Readonly<Record<string, string>>;
  /** Node labels the kubelet registers with (carried in userData, as Karpenter's bootstrap does). */
  readonly labels: Readonly<Record<string, string>>;
  /** Taints the kubelet registers with (`--register-with-taints`). */
  readonly taints: readonly Taint[];
  /** Startup taints, registered too and removed by a daemon once the node is set up. */
  readonly startupTaints: readonly Taint[];
}

/** A launched (or already existing, for a repeated token) instance. */
export interface LaunchedInstance {
  readonly instanceId: string;
  readonly providerId: string;
  readonly instanceType: string;
  readonly zone: string;
  readonly capacityType: CapacityType;
  /** USD per hour. */
  readonly price: number;
  /** Epoch ms. */
  readonly launchedAt: number;
  /** Offerings the fleet reported as out of capacity while still launching on another one. */
  readonly unavailableOfferings: readonly OfferingKey[];
}

/** An instance as the provider lists it. */
export interface CloudInstance {
  readonly instanceId: string;
  readonly instanceType: string;
  readonly zone: string;
  readonly capacityType: CapacityType;
  readonly state: 'pending' | 'running' | 'stopping' | 'stopped' | 'shutting-down' | 'terminated';
  readonly tags: Readonly<Record<string, string>>;
  /** Epoch ms. */
  readonly launchedAt: number;
}

/** The cloud the cluster runs in. */
export interface CloudProvider {
  /**
   * Every instance type the EC2NodeClass can launch, with offerings (zone × capacity type, price USD/hour).
   * The ICE cache is applied by the caller, not here.
   */
  getInstanceTypes(query: InstanceTypeQuery): Promise<InstanceType[]>;
  /**
   * Launches one instance; repeating a request with the same `nodeClaim` returns the same instance.
   * @throws {InsufficientCapacityError} when no override has capacity
   * @throws {ThrottledError} when the API throttles
   * @throws {CloudProviderError} on any other failure
   */
  create(request: LaunchRequest): Promise<LaunchedInstance>;
  /** Instances tagged for this cluster, any state but terminated. */
  list(): Promise<CloudInstance[]>;
  /** Terminates an instance; terminating a gone instance is not an error. */
  delete(instanceId: string): Promise<void>;
}

