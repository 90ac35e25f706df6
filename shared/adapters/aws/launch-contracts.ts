/**
 * The contracts between the EC2 CloudProvider (`ec2-cloud-provider.ts`) and the adapters that supply what a
 * CreateFleet request names: launch templates (`launch-templates.ts`), the subnet of each zone (`discovery.ts`)
 * and instance types with their labels (`instance-types*.ts`). The provider codes against these interfaces only,
 * so each side can be built, tested and faked alone.
 *
 * Source of the split: aws/karpenter-provider-aws `pkg/providers/instance/instance.go` asks the launch-template
 * provider for one template per AMI / architecture / GPU variant (`EnsureAll`), the subnet provider for one subnet
 * per zone (`ZonalSubnetsForLaunch`), and builds one override per (instance type × zone) from them
 * (docs/karpenter-semantics.md#createfleet).
 */
import type { EC2NodeClass } from '../../core/api/ec2nodeclass.js';
import type { Taint } from '../../core/api/kubernetes.js';
import type { InstanceType } from '../../core/instancetypes/offering.js';
import type { InstanceTypeQuery } from '../../ports/cloud-provider.js';

/** A launch template that exists in EC2 (or will by the time CreateFleet runs), with the AMI it launches. */
export interface ResolvedLaunchTemplate {
  /** The template's EC2 name, e.g. `karpenter.k8s.aws/<hash of options>`; CreateFleet names it with `Version: $Latest`. */
  readonly launchTemplateName: string;
  /** The AMI (`ami-…`) the template's instances boot; sent as each override's `ImageId`. */
  readonly imageId: string;
  /** CPU architecture of the AMI. */
  readonly architecture: 'amd64' | 'arm64';
  /**
   * True when this template's AMI serves an instance type with these labels (arch, and GPU/Neuron variant).
   * @param labels the instance type's labels (`kubernetes.io/arch`, `karpenter.k8s.aws/instance-gpu-*`, …)
   */
  matches(labels: Readonly<Record<string, string>>): boolean;
}

/** What a launch needs its launch templates to carry (userData, block devices, …) for one NodeClaim. */
export interface LaunchTemplateInput {
  /** The NodeClaim's EC2NodeClass, as parsed from the cluster. */
  readonly nodeClass: EC2NodeClass;
  readonly nodePool: string;
  readonly nodeClaim: string;
  /** Node labels the kubelet registers with. */
  readonly labels: Readonly<Record<string, string>>;
  /** Taints the kubelet registers with. */
  readonly taints: readonly Taint[];
  /** Startup taints, registered too. */
  readonly startupTaints: readonly Taint[];
  /** The instance types the launch may use (distinct), with their labels, so one template per AMI variant is resolved. */
  readonly instanceTypes: readonly { readonly name: string; readonly labels: Readonly<Record<string, string>> }[];
}

/** Supplies launch templates (implemented in `launch-templates.ts`). */
export interface LaunchTemplateSource {
  /**
   * The launch templates a launch uses, creating missing ones; together they serve every instance type of
   * `input` that some AMI of the EC2NodeClass serves. May return an empty list.
   */
  resolve(input: LaunchTemplateInput): Promise<ResolvedLaunchTemplate[]>;
  /** Forget cached templates of a node class (after LaunchTemplateNotFound). @param nodeClass the EC2NodeClass name */
  invalidate(nodeClass: string): void;
}

/** Supplies subnets (implemented in `discovery.ts`). */
export interface SubnetSource {
  /**
   * Zone → subnet id with the most free IPs among the node class's subnets.
   * @returns e.g. `Map { 'us-west-2a' => 'subnet-0a…', 'us-west-2b' => 'subnet-0b…' }`; a zone without a subnet is absent
   */
  zonalSubnets(nodeClass: EC2NodeClass): Promise<ReadonlyMap<string, string>>;
}

/** Supplies instance types with offerings (implemented in `instance-types*.ts`); the CloudProvider delegates to it. */
export interface InstanceTypeSource {
  /** Every instance type the EC2NodeClass of `query` can launch, with offerings (see `CloudProvider.getInstanceTypes`). */
  getInstanceTypes(query: InstanceTypeQuery): Promise<InstanceType[]>;
}
