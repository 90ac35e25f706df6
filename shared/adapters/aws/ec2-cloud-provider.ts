/**
 * The real EC2 behind the CloudProvider port: one instant CreateFleet per NodeClaim, DescribeInstances to list
 * the cluster's instances, TerminateInstances to delete one. Its contract is the simulated EC2's
 * (`shared/sim/simulated-ec2.ts`); errors leave translated (`ec2-errors.ts`).
 *
 * ## CreateFleet request (Karpenter `pkg/providers/instance/instance.go`; docs/karpenter-semantics.md#createfleet)
 * - `Type: instant`, `TargetCapacitySpecification { TotalTargetCapacity: 1, DefaultTargetCapacityType }` with the
 *   request's capacity type (`spot` | `on-demand`; `reserved` is rejected: Skiff has no capacity reservations yet).
 * - Spot: `SpotOptions.AllocationStrategy = price-capacity-optimized`; on-demand:
 *   `OnDemandOptions.AllocationStrategy = lowest-price`.
 * - `LaunchTemplateConfigs`: one per launch template the {@link LaunchTemplateSource} resolves
 *   (`Version: $Latest`), each with the overrides whose instance type the template's AMI serves
 *   ({@link ResolvedLaunchTemplate.matches} on the type's labels) in zones that have a subnet:
 *   `{ InstanceType, SubnetId, AvailabilityZone, ImageId }`. An (instance type × zone) goes to the first template
 *   that serves it, once. `AvailabilityZone` is redundant with the subnet; Karpenter sends it too, so fleet errors
 *   name the zone.
 * - `ClientToken`: {@link clientToken} of the cluster and NodeClaim, so a repeated launch (an SDK retry, a Lambda
 *   retry, a resumed NodeClaim) returns the instance of the first instead of a second one.
 * - `TagSpecifications` for `instance`, `volume` and `fleet`: {@link launchTags}.
 * - `Context` from `EC2NodeClass.spec.context` when set.
 *
 * ## Retries
 * Throttling (`RequestLimitExceeded`) and transient errors are retried by the SDK client ({@link ec2Client}), never
 * here; the only retry here is the one after a launch template vanished (Karpenter invalidates its launch template
 * cache on `InvalidLaunchTemplateName.NotFoundException`).
 */
import { createHash } from 'node:crypto';
import {
  DescribeInstancesCommand,
  CreateFleetCommand,
  EC2Client,
  paginateDescribeInstances,
  TerminateInstancesCommand,
  type CreateFleetCommandInput,
  type CreateFleetCommandOutput,
  type CreateFleetError,
  type EC2ClientConfig,
  type FleetLaunchTemplateConfigRequest,
  type FleetLaunchTemplateOverridesRequest,
  type Instance,
  type InstanceStateName,
  type Tag,
} from '@aws-sdk/client-ec2';
import { ec2NodeClassAmiFamily, type EC2NodeClass } from '../../core/api/ec2nodeclass.js';
import { LABEL_EC2NODECLASS, LABEL_NODEPOOL, type CapacityType } from '../../core/api/labels.js';
import { CloudProviderError, InsufficientCapacityError } from '../../core/errors.js';
import { inZones, offeringKey, type InstanceType } from '../../core/instancetypes/offering.js';
import type { OfferingKey } from '../../core/instancetypes/offering-key.js';
import type { CloudInstance, CloudProvider, InstanceTypeQuery, LaunchedInstance, LaunchRequest } from '../../ports/cloud-provider.js';
import type { Clock } from '../../ports/clock.js';
import { ec2Error, ec2ErrorCode, INSTANCE_NOT_FOUND_CODE, isInsufficientCapacityCode, isLaunchTemplateNotFoundCode } from './ec2-errors.js';
import type { InstanceTypeSource, LaunchTemplateInput, LaunchTemplateSource, ResolvedLaunchTemplate, SubnetSource } from './launch-contracts.js';

/**
 * Attempts per EC2 call (the first plus up to 7 SDK retries). With the installed SDK (`@smithy/core` 3.41, its
 * "retries 2026" behaviour) a throttling retry waits `random(0..1) × min(1 s × 2^retry, 20 s)`, so 8 attempts wait
 * at most 1+2+4+8+16+20+20 = 71 s (35.5 s on average) before a `ThrottledError`: long enough to ride out an
 * EC2 `RequestLimitExceeded` burst (EC2 refills its per-action token buckets every second), short enough for a
 * provisioner Lambda's timeout. Source: `@smithy/core` `submodules/retry/util-retry/` (StandardRetryStrategy,
 * DefaultRetryBackoffStrategy, constants: 20 s cap, 500-token retry quota, throttling retry cost 5).
 */
export const DEFAULT_EC2_MAX_ATTEMPTS = 8;

/** EC2's limit on a `ClientToken`: 64 ASCII characters (EC2 API reference, "Ensuring idempotency"). */
export const CLIENT_TOKEN_MAX_LENGTH = 64;

/** Allocation strategy of spot launches (Karpenter without a NodeOverlay price). */
export const SPOT_ALLOCATION_STRATEGY = 'price-capacity-optimized';
/** Allocation strategy of on-demand launches (Karpenter without a NodeOverlay price). */
export const ON_DEMAND_ALLOCATION_STRATEGY = 'lowest-price';
/** Launch template version CreateFleet names (Karpenter names `$Latest`; Skiff's templates are immutable per name). */
export const LAUNCH_TEMPLATE_VERSION = '$Latest';

/** Instance states `list()` asks for: every state but `terminated`. */
const LISTED_STATES: readonly InstanceStateName[] = ['pending', 'running', 'stopping', 'stopped', 'shutting-down'];

/** Tag key Skiff puts on every instance it launches, naming the NodeClaim (`karpenter.sh/nodeclaim`). */
export const NODECLAIM_TAG = 'karpenter.sh/nodeclaim';

/** EC2's answer to a reused `ClientToken` with different parameters. */
const IDEMPOTENT_PARAMETER_MISMATCH = 'IdempotentParameterMismatch';

/** Options of {@link ec2Client}. */
export interface Ec2ClientOptions {
  /** AWS region, e.g. `us-west-2`. */
  readonly region: string;
  /** Attempts per call, first included. @default {@link DEFAULT_EC2_MAX_ATTEMPTS} (8) */
  readonly maxAttempts?: number;
}

/**
 * The EC2 client configuration Skiff uses: `retryMode: 'standard'` with `maxAttempts` (default 8). The SDK's
 * standard strategy retries throttling (`RequestLimitExceeded` is in its `THROTTLING_ERROR_CODES`) and transient
 * errors with full-jitter exponential backoff and a retry quota. Not `adaptive`: AWS recommends it only for a client
 * that talks to a single throttled resource, and it delays even first attempts; this client calls CreateFleet,
 * DescribeInstances and TerminateInstances, which EC2 throttles in separate buckets, so one action's throttling
 * would slow the others, and a Lambda container's rate estimate would not see the account-wide load anyway
 * (AWS SDKs and Tools reference guide, "Retry behavior": standard is "safe for multi-tenant applications").
 * Explicit values win over `AWS_MAX_ATTEMPTS` / `AWS_RETRY_MODE`.
 * @example new EC2Client({ ...ec2ClientConfig({ region: 'us-west-2' }), requestHandler })
 */
export function ec2ClientConfig(options: Ec2ClientOptions): EC2ClientConfig {
  return { region: options.region, maxAttempts: options.maxAttempts ?? DEFAULT_EC2_MAX_ATTEMPTS, retryMode: 'standard' };
}

/**
 * An EC2 client configured by {@link ec2ClientConfig}.
 * @example const ec2 = ec2Client({ region: 'us-west-2' }); // 8 attempts, standard retry mode
 */
export function ec2Client(options: Ec2ClientOptions): EC2Client {
  return new EC2Client(ec2ClientConfig(options));
}

/**
 * The `ClientToken` of a NodeClaim's CreateFleet: `<nodeClaim>.<12 hex of sha256(cluster)>`, plus `.r<attempt>`
 * for the launch-template retry; when that exceeds 64 characters (NodeClaim names may have 253) or is not
 * printable ASCII, the 64-hex SHA-256 of `<cluster>/<nodeClaim>/<attempt>` instead. Deterministic, so every retry of
 * the same launch reuses it (EC2 returns the first launch's result, see "Ensuring idempotency" in the EC2 API
 * reference). The cluster is part of it because tokens are per account and region, and two clusters in one account
 * can both have a NodeClaim `default-x7k2p` (5-character suffixes: 27^5 ≈ 14 million) within the 24 hours a token
 * lives.
 * @param clusterName the EKS cluster name
 * @param nodeClaim the NodeClaim name
 * @param attempt 0 for the launch, 1 for the retry after a launch template was not found (a new token: the first
 *   token's request may have been recorded with other templates, and EC2 rejects a token reused with other
 *   parameters with `IdempotentParameterMismatch`)
 * @returns at most {@link CLIENT_TOKEN_MAX_LENGTH} printable ASCII characters
 * @example clientToken('prod', 'default-x7k2p') // 'default-x7k2p.<12 hex>'
 */
export function clientToken(clusterName: string, nodeClaim: string, attempt = 0): string {
  const readable = `${nodeClaim}.${sha256(clusterName).slice(0, 12)}${attempt > 0 ? `.r${attempt}` : ''}`;
  if (readable.length <= CLIENT_TOKEN_MAX_LENGTH && /^[\x21-\x7e]+$/.test(readable)) return readable;
  return sha256(`${clusterName}/${nodeClaim}/${attempt}`);
}

/**
 * The tags of a launch (instance, its volumes, the fleet): the EC2NodeClass's `spec.tags` first, then the request's
 * tags, then Skiff's, which win: `kubernetes.io/cluster/<cluster>=owned`, `eks:eks-cluster-name=<cluster>`,
 * `karpenter.sh/nodepool`, `karpenter.sh/nodeclaim`, `karpenter.k8s.aws/ec2nodeclass`, `Name=<nodeClaim>`.
 * Source: Karpenter `pkg/utils/utils.go GetTags` (static tags merged over `spec.tags`); Karpenter adds `Name`,
 * `karpenter.sh/nodeclaim` and `eks:eks-cluster-name` after registration, Skiff at launch (docs/karpenter-semantics.md#tags).
 * The schema rejects the restricted keys in `spec.tags`, so only `Name` can actually be overridden here.
 */
export function launchTags(clusterName: string, request: LaunchRequest, nodeClassTags: Readonly<Record<string, string>> | undefined): Record<string, string> {
  return {
    ...nodeClassTags,
    ...request.tags,
    [`kubernetes.io/cluster/${clusterName}`]: 'owned',
    'eks:eks-cluster-name': clusterName,
    [LABEL_NODEPOOL]: request.nodePool,
    [NODECLAIM_TAG]: request.nodeClaim,
    [LABEL_EC2NODECLASS]: request.nodeClass,
    Name: request.nodeClaim,
  };
}

/** Dependencies of {@link Ec2CloudProvider}. */
export interface Ec2CloudProviderProps {
  /** The EC2 client; build it with {@link ec2Client} so throttling is retried by the SDK. */
  readonly ec2: EC2Client;
  /** EKS cluster name: tags every launch, scopes `list()`. */
  readonly clusterName: string;
  /** AWS region of the cluster and of `ec2`, e.g. `us-west-2` (named in `list()` errors; zones come from EC2). */
  readonly region: string;
  /** The EC2NodeClass of a name, or undefined when it does not exist. */
  readonly nodeClass: (name: string) => Promise<EC2NodeClass | undefined>;
  readonly launchTemplates: LaunchTemplateSource;
  readonly subnets: SubnetSource;
  /** Instance types with offerings and labels; `getInstanceTypes` delegates to it, `create` reads labels from it. */
  readonly instanceTypes: InstanceTypeSource;
  /** Stamps `launchedAt` of a launch (CreateFleet does not return a launch time). */
  readonly clock: Clock;
}

type Override = LaunchRequest['overrides'][number];

/** What one CreateFleet request carries, and how to read its response. */
interface FleetPlan {
  readonly configs: FleetLaunchTemplateConfigRequest[];
  /** The (type × zone) pairs sent, in request order. */
  readonly sent: readonly Override[];
  /** Subnet id → zone, for responses that name only the subnet. */
  readonly zoneOfSubnet: ReadonlyMap<string, string>;
}

/**
 * {@link CloudProvider} on EC2. See the module doc for the request shapes.
 * @example
 * const cloud = new Ec2CloudProvider({ ec2: ec2Client({ region }), clusterName, region, nodeClass, launchTemplates,
 *   subnets, instanceTypes, clock: systemClock });
 * const instance = await cloud.create(request); // one instant CreateFleet
 */
export class Ec2CloudProvider implements CloudProvider {
  readonly #props: Ec2CloudProviderProps;

  constructor(props: Ec2CloudProviderProps) {
    this.#props = props;
  }

  /**
   * The {@link InstanceTypeSource}'s types, offered only in the zones where the query's EC2NodeClass has a subnet
   * (all of them when the class is not found: `create` refuses it anyway).
   * @throws whatever the source, the EC2NodeClass lookup or subnet discovery throws
   */
  async getInstanceTypes(query: InstanceTypeQuery): Promise<InstanceType[]> {
    const [types, nodeClass] = await Promise.all([this.#props.instanceTypes.getInstanceTypes(query), this.#props.nodeClass(query.nodeClass)]);
    if (!nodeClass) return types;
    // Offered only where the EC2NodeClass has a subnet, as Karpenter's types are (aws
    // `pkg/providers/instancetype/types.go computeRequirements`): a plan for another zone could never launch.
    const zonal = await this.#props.subnets.zonalSubnets(nodeClass);
    return inZones(types, new Set(zonal.keys()));
  }

  /**
   * Launches one instance for `request.nodeClaim` with one instant CreateFleet (two when a launch template was
   * not found: the templates are invalidated, resolved again, and the launch retried once with a new token).
   * @returns the instance, with the offerings the fleet reported as out of capacity on the way (`unavailableOfferings`)
   * @throws {InsufficientCapacityError} when no instance launched and every fleet error is an ICE code
   *   (`INSUFFICIENT_CAPACITY_CODES`): the offerings the errors name (instance type × zone × the request's capacity
   *   type), or every offering sent when an error names no override; `errorCode` is the most frequent code
   * @throws {ThrottledError} when EC2 still throttles after the SDK's retries
   * @throws {CloudProviderError} on anything else, with the EC2 code: `reserved` capacity (`UnsupportedCapacityType`),
   *   an unknown EC2NodeClass (`NodeClassNotFound`), no override left after matching templates and subnets
   *   (`NoLaunchableOverrides`), a fleet error that is not ICE, an exception from the SDK
   */
  async create(request: LaunchRequest): Promise<LaunchedInstance> {
    const { clusterName } = this.#props;
    const subject = `NodeClaim ${request.nodeClaim}`;
    const capacityType = fleetCapacityType(request.capacityType, subject);
    const nodeClass = await guard(this.#props.nodeClass(request.nodeClass), 'EC2NodeClass lookup', subject);
    if (!nodeClass) throw new CloudProviderError(`cannot launch ${subject}: EC2NodeClass ${request.nodeClass} does not exist`, 'NodeClassNotFound');
    const [zonal, types] = await Promise.all([
      guard(this.#props.subnets.zonalSubnets(nodeClass), 'subnet discovery', subject),
      // Labels depend on the AMI family only (not on kubelet settings or volumes), so this query serves.
      guard(this.#props.instanceTypes.getInstanceTypes({ nodeClass: request.nodeClass, amiFamily: ec2NodeClassAmiFamily(nodeClass) }), 'instance types', subject),
    ]);
    const labelsByType = new Map(types.map((t) => [t.name, t.labels] as const));
    const requested = [...new Set(request.overrides.map((o) => o.instanceType))];
    const tags = toTagList(launchTags(clusterName, request, nodeClass.spec.tags));
    const templateInput: LaunchTemplateInput = {
      nodeClass,
      nodePool: request.nodePool,
      nodeClaim: request.nodeClaim,
      labels: request.labels,
      taints: request.taints,
      startupTaints: request.startupTaints,
      instanceTypes: requested.filter((name) => labelsByType.has(name)).map((name) => ({ name, labels: labelsByType.get(name) ?? {} })),
    };

    for (let attempt = 0; ; attempt++) {
      const templates = await guard(this.#props.launchTemplates.resolve(templateInput), 'launch template resolution', subject);
      const plan = planFleet(request, templates, zonal, labelsByType, subject);
      const input: CreateFleetCommandInput = {
        Type: 'instant',
        ClientToken: clientToken(clusterName, request.nodeClaim, attempt),
        TargetCapacitySpecification: { TotalTargetCapacity: 1, DefaultTargetCapacityType: capacityType },
        ...(capacityType === 'spot' ? { SpotOptions: { AllocationStrategy: SPOT_ALLOCATION_STRATEGY } } : { OnDemandOptions: { AllocationStrategy: ON_DEMAND_ALLOCATION_STRATEGY } }),
        LaunchTemplateConfigs: plan.configs,
        TagSpecifications: (['instance', 'volume', 'fleet'] as const).map((ResourceType) => ({ ResourceType, Tags: tags })),
        ...(nodeClass.spec.context !== undefined ? { Context: nodeClass.spec.context } : {}),
      };
      let output: CreateFleetCommandOutput;
      try {
        output = await this.#props.ec2.send(new CreateFleetCommand(input));
      } catch (e) {
        if (isLaunchTemplateNotFoundCode(ec2ErrorCode(e))) {
          this.#props.launchTemplates.invalidate(request.nodeClass);
          if (attempt === 0) continue;
        }
        if (ec2ErrorCode(e) === IDEMPOTENT_PARAMETER_MISMATCH && attempt < 2) {
          // A resumed NodeClaim whose first CreateFleet went through with other overrides (subnets, prices or the
          // ICE cache changed since): its instance carries the NodeClaim tag. No instance: launch afresh.
          const existing = await this.#instanceOf(request, subject);
          if (existing) return existing;
          continue;
        }
        throw ec2Error(e, 'CreateFleet', subject);
      }
      const errors = output.Errors ?? [];
      const templateGone = errors.some((e) => isLaunchTemplateNotFoundCode(e.ErrorCode));
      if (templateGone) this.#props.launchTemplates.invalidate(request.nodeClass);
      const launched = output.Instances?.find((i) => (i.InstanceIds?.length ?? 0) > 0);
      if (launched) return this.#launched(launched, request, plan, errors, capacityType, subject);
      if (templateGone && attempt === 0) continue;
      throw fleetFailure(errors, capacityType, plan, subject, output.$metadata?.requestId);
    }
  }

  /** The live instance already launched for the request's NodeClaim (found by its `karpenter.sh/nodeclaim` tag), if any. */
  async #instanceOf(request: LaunchRequest, subject: string): Promise<LaunchedInstance | undefined> {
    const nodeClaim = request.nodeClaim;
    let output;
    try {
      output = await this.#props.ec2.send(
        new DescribeInstancesCommand({
          Filters: [
            { Name: `tag:kubernetes.io/cluster/${this.#props.clusterName}`, Values: ['owned'] },
            { Name: `tag:${NODECLAIM_TAG}`, Values: [nodeClaim] },
            { Name: 'instance-state-name', Values: ['pending', 'running'] },
          ],
        }),
      );
    } catch (e) {
      throw ec2Error(e, 'DescribeInstances', subject);
    }
    const instance = (output.Reservations ?? []).flatMap((r) => r.Instances ?? []).map((i) => toCloudInstance(i, this.#props.clock.now())).find((i) => i !== undefined);
    if (!instance) return undefined;
    return {
      instanceId: instance.instanceId,
      providerId: `aws:///${instance.zone}/${instance.instanceId}`,
      instanceType: instance.instanceType,
      zone: instance.zone,
      capacityType: instance.capacityType,
      // The instance does not say what it cost: the request's price for its offering, else its cheapest override.
      price: request.overrides.find((o) => o.instanceType === instance.instanceType && o.zone === instance.zone)?.price ?? Math.min(...request.overrides.map((o) => o.price)),
      launchedAt: instance.launchedAt,
      unavailableOfferings: [],
    };
  }

  /**
   * The cluster's instances in every state but `terminated`: DescribeInstances (all pages) filtered on
   * `tag:kubernetes.io/cluster/<cluster>` = `owned` AND `tag-key` = `karpenter.sh/nodeclaim` AND
   * `instance-state-name` ∈ pending, running, stopping, stopped, shutting-down. The NodeClaim tag keeps instances of
   * EKS managed node groups (which carry the cluster tag too) out.
   * @throws {ThrottledError} | {CloudProviderError} as {@link ec2Error} translates
   */
  async list(): Promise<CloudInstance[]> {
    const out: CloudInstance[] = [];
    const pages = paginateDescribeInstances(
      { client: this.#props.ec2, pageSize: 1000 },
      {
        Filters: [
          { Name: `tag:kubernetes.io/cluster/${this.#props.clusterName}`, Values: ['owned'] },
          { Name: 'tag-key', Values: [NODECLAIM_TAG] },
          { Name: 'instance-state-name', Values: [...LISTED_STATES] },
        ],
      },
    );
    try {
      for await (const page of pages) {
        for (const reservation of page.Reservations ?? []) {
          for (const instance of reservation.Instances ?? []) {
            const listed = toCloudInstance(instance, this.#props.clock.now());
            if (listed && listed.state !== 'terminated') out.push(listed);
          }
        }
      }
    } catch (e) {
      throw ec2Error(e, 'DescribeInstances', `cluster ${this.#props.clusterName} in ${this.#props.region}`);
    }
    return out;
  }

  /**
   * Terminates an instance with TerminateInstances. Idempotent: EC2 accepts terminating a terminating or terminated
   * instance, and `InvalidInstanceID.NotFound` (an instance long gone) counts as success.
   * @throws {ThrottledError} | {CloudProviderError} as {@link ec2Error} translates
   */
  async delete(instanceId: string): Promise<void> {
    try {
      await this.#props.ec2.send(new TerminateInstancesCommand({ InstanceIds: [instanceId] }));
    } catch (e) {
      if (ec2ErrorCode(e) === INSTANCE_NOT_FOUND_CODE) return;
      throw ec2Error(e, 'TerminateInstances', instanceId);
    }
  }

  #launched(
    launched: NonNullable<CreateFleetCommandOutput['Instances']>[number],
    request: LaunchRequest,
    plan: FleetPlan,
    errors: readonly CreateFleetError[],
    capacityType: FleetCapacityType,
    subject: string,
  ): LaunchedInstance {
    const instanceId = launched.InstanceIds?.[0] ?? '';
    const override = launched.LaunchTemplateAndOverrides?.Overrides;
    const instanceType = launched.InstanceType ?? override?.InstanceType;
    const subnet = launched.SubnetId ?? override?.SubnetId;
    const zone = launched.AvailabilityZone ?? override?.AvailabilityZone ?? (subnet !== undefined ? plan.zoneOfSubnet.get(subnet) : undefined);
    if (instanceType === undefined || zone === undefined) {
      // Launched, but the response does not say where: the instance carries the NodeClaim tag, so garbage
      // collection finds it once the NodeClaim has failed.
      throw new CloudProviderError(`EC2 CreateFleet (${subject}) launched ${instanceId} without naming its instance type and zone`, 'UnrecognisedFleetResponse');
    }
    const actualCapacity: CapacityType = launched.Lifecycle === 'spot' ? 'spot' : 'on-demand';
    const price = request.overrides.find((o) => o.instanceType === instanceType && o.zone === zone)?.price ?? request.overrides.find((o) => o.instanceType === instanceType)?.price ?? 0;
    const self = offeringKey({ instanceType, zone, capacityType: actualCapacity });
    const unavailableOfferings = offeringsOf(
      errors.filter((e) => isInsufficientCapacityCode(e.ErrorCode)),
      plan,
      capacityType,
      false,
    ).filter((o) => offeringKey(o) !== self);
    return {
      instanceId,
      providerId: `aws:///${zone}/${instanceId}`,
      instanceType,
      zone,
      capacityType: actualCapacity,
      price,
      launchedAt: this.#props.clock.now(),
      unavailableOfferings,
    };
  }
}

/**
 * Awaits a collaborator (launch templates, subnets, instance types, node classes): their failures should already be
 * Skiff errors; a raw SDK error that slipped through is translated here, so the port's contract holds.
 */
async function guard<T>(work: Promise<T>, operation: string, subject: string): Promise<T> {
  try {
    return await work;
  } catch (e) {
    throw ec2Error(e, operation, subject);
  }
}

/** The capacity types CreateFleet is asked for here. */
type FleetCapacityType = 'spot' | 'on-demand';

/** `spot` / `on-demand` pass; `reserved` is refused (no capacity reservations in Skiff yet). */
function fleetCapacityType(capacityType: CapacityType, subject: string): FleetCapacityType {
  switch (capacityType) {
    case 'spot':
    case 'on-demand':
      return capacityType;
    case 'reserved':
      throw new CloudProviderError(
        `cannot launch ${subject}: capacity type reserved needs capacity reservations (CreateFleet DefaultTargetCapacityType reserved-capacity / capacity-block), which Skiff does not support yet`,
        'UnsupportedCapacityType',
      );
    default:
      return capacityType satisfies never;
  }
}

/**
 * Assigns each requested (type × zone) to the first template whose AMI serves the type, in a zone with a subnet.
 * @throws {CloudProviderError} `NoLaunchableOverrides` when nothing is left, naming zones without subnets and types no
 *   template serves
 */
function planFleet(
  request: LaunchRequest,
  templates: readonly ResolvedLaunchTemplate[],
  zonal: ReadonlyMap<string, string>,
  labelsByType: ReadonlyMap<string, Readonly<Record<string, string>>>,
  subject: string,
): FleetPlan {
  const byTemplate = new Map<ResolvedLaunchTemplate, FleetLaunchTemplateOverridesRequest[]>(templates.map((t) => [t, []]));
  const sent: Override[] = [];
  const seen = new Set<string>();
  const zonesWithoutSubnet = new Set<string>();
  const unserved = new Set<string>();
  const unknown = new Set<string>();
  for (const o of request.overrides) {
    const subnet = zonal.get(o.zone);
    if (subnet === undefined) {
      zonesWithoutSubnet.add(o.zone);
      continue;
    }
    const labels = labelsByType.get(o.instanceType);
    if (labels === undefined) {
      unknown.add(o.instanceType);
      continue;
    }
    const template = templates.find((t) => t.matches(labels));
    if (template === undefined) {
      unserved.add(o.instanceType);
      continue;
    }
    const key = `${o.instanceType}|${o.zone}`;
    if (seen.has(key)) continue;
    seen.add(key);
    sent.push(o);
    byTemplate.get(template)?.push({ InstanceType: o.instanceType as FleetLaunchTemplateOverridesRequest['InstanceType'], SubnetId: subnet, AvailabilityZone: o.zone, ImageId: template.imageId });
  }
  const configs = [...byTemplate]
    .filter(([, overrides]) => overrides.length > 0)
    .map(([t, overrides]) => ({ LaunchTemplateSpecification: { LaunchTemplateName: t.launchTemplateName, Version: LAUNCH_TEMPLATE_VERSION }, Overrides: overrides }));
  if (configs.length === 0) {
    const why = [
      zonesWithoutSubnet.size > 0 ? `zones without a subnet of EC2NodeClass ${request.nodeClass}: ${[...zonesWithoutSubnet].sort().join(', ')}` : '',
      unserved.size > 0 ? `instance types no AMI of the EC2NodeClass serves: ${[...unserved].sort().join(', ')}` : '',
      unknown.size > 0 ? `instance types unknown to the EC2NodeClass: ${[...unknown].sort().join(', ')}` : '',
      request.overrides.length === 0 ? 'the request has no overrides' : '',
      templates.length === 0 ? 'no launch template resolved' : '',
    ].filter((s) => s !== '');
    throw new CloudProviderError(`cannot launch ${subject}: no (instance type × zone) can be launched; ${why.join('; ')}`, 'NoLaunchableOverrides');
  }
  return { configs, sent, zoneOfSubnet: new Map([...zonal].map(([zone, subnet]) => [subnet, zone])) };
}

/**
 * The offerings fleet errors name: the error's override (type and zone, the zone from `AvailabilityZone` or the
 * subnet); a field the error leaves out matches every override sent. An error naming neither type nor zone means
 * every offering sent when `everyWhenUnnamed` (nothing launched), and nothing otherwise (an instance launched from
 * one of them).
 */
function offeringsOf(errors: readonly CreateFleetError[], plan: FleetPlan, capacityType: FleetCapacityType, everyWhenUnnamed: boolean): OfferingKey[] {
  const out = new Map<string, OfferingKey>();
  const add = (instanceType: string, zone: string): void => {
    const key: OfferingKey = { instanceType, zone, capacityType };
    out.set(offeringKey(key), key);
  };
  for (const e of errors) {
    const o = e.LaunchTemplateAndOverrides?.Overrides;
    const type = o?.InstanceType;
    const zone = o?.AvailabilityZone ?? (o?.SubnetId !== undefined ? plan.zoneOfSubnet.get(o.SubnetId) : undefined);
    if (type !== undefined && zone !== undefined) {
      add(type, zone);
      continue;
    }
    if (type === undefined && zone === undefined && !everyWhenUnnamed) continue;
    for (const s of plan.sent) if ((type === undefined || s.instanceType === type) && (zone === undefined || s.zone === zone)) add(s.instanceType, s.zone);
  }
  return [...out.values()];
}

/** The error for a fleet that launched nothing (see {@link Ec2CloudProvider.create}). */
function fleetFailure(errors: readonly CreateFleetError[], capacityType: FleetCapacityType, plan: FleetPlan, subject: string, requestId: string | undefined): Error {
  const suffix = requestId ? ` [request ${requestId}]` : '';
  const summary = [...new Set(errors.map((e) => `${e.ErrorCode ?? 'UnknownError'}: ${e.ErrorMessage ?? ''}`.trim()))].join('; ');
  if (errors.length === 0) return new CloudProviderError(`EC2 CreateFleet (${subject}) launched no instance and reported no error${suffix}`, 'NoInstanceLaunched');
  if (errors.every((e) => isInsufficientCapacityCode(e.ErrorCode))) {
    const code = mostFrequent(errors.map((e) => e.ErrorCode ?? ''));
    return new InsufficientCapacityError(`EC2 CreateFleet (${subject}) found no ${capacityType} capacity: ${summary}${suffix}`, offeringsOf(errors, plan, capacityType, true), code);
  }
  const code = errors.find((e) => !isInsufficientCapacityCode(e.ErrorCode))?.ErrorCode ?? 'UnknownError';
  return new CloudProviderError(`EC2 CreateFleet (${subject}) launched no instance: ${summary}${suffix}`, code);
}

/** The most frequent string (the first seen on a tie). */
function mostFrequent(values: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  let best = values[0] ?? '';
  for (const [v, n] of counts) if (n > (counts.get(best) ?? 0)) best = v;
  return best;
}

/** An EC2 instance as the port lists it, or undefined when EC2 left out its id, type or zone. */
function toCloudInstance(instance: Instance, now: number): CloudInstance | undefined {
  const { InstanceId: instanceId, InstanceType: instanceType } = instance;
  const zone = instance.Placement?.AvailabilityZone;
  const state = instance.State?.Name;
  if (instanceId === undefined || instanceType === undefined || zone === undefined || state === undefined) return undefined;
  return {
    instanceId,
    instanceType,
    zone,
    capacityType: capacityTypeOf(instance.InstanceLifecycle),
    state,
    tags: Object.fromEntries((instance.Tags ?? []).filter((t) => t.Key !== undefined).map((t) => [t.Key, t.Value ?? ''])),
    launchedAt: instance.LaunchTime?.getTime() ?? now,
  };
}

/** `InstanceLifecycle` → capacity type: spot, capacity blocks and interruptible reservations as Karpenter labels them. */
function capacityTypeOf(lifecycle: Instance['InstanceLifecycle']): CapacityType {
  switch (lifecycle) {
    case 'spot':
      return 'spot';
    case 'capacity-block':
    case 'interruptible-capacity-reservation':
      return 'reserved';
    default:
      return 'on-demand'; // absent (on-demand), `scheduled`, and lifecycles EC2 adds later
  }
}

/** A tag record as EC2's `Tag[]`, in insertion order. */
function toTagList(tags: Readonly<Record<string, string>>): Tag[] {
  return Object.entries(tags).map(([Key, Value]) => ({ Key, Value }));
}

/** Hex SHA-256 of a UTF-8 string (64 characters). */
function sha256(s: string): string {
  return createHash('sha256').update(s, 'utf8').digest('hex');
}
