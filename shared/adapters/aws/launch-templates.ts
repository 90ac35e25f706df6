/**
 * EC2 launch templates for an EC2NodeClass: one per AMI the launch's instance types need (architecture × variant),
 * named after a hash of its content so that equal content reuses one template, created or reused idempotently.
 *
 * Sources: aws/karpenter-provider-aws `pkg/providers/launchtemplate/launchtemplate.go` (one template per resolved
 * AMI, named `karpenter.k8s.aws/<hash>`, Describe → Create, reuse on `AlreadyExists`, cache invalidated on
 * `LaunchTemplateNotFound`; block devices, metadata options, monitoring, public IP via a network interface),
 * `pkg/providers/amifamily/{al2,al2023,bottlerocket,windows,custom,resolver}.go` (default block devices:
 * 20 GiB gp3 encrypted on `/dev/xvda` for AL2/AL2023; 4 GiB `/dev/xvda` + 20 GiB `/dev/xvdb` for Bottlerocket;
 * 50 GiB `/dev/sda1` for Windows; none for Custom); EC2 API reference `CreateLaunchTemplate`
 * (`RequestLaunchTemplateData`, template names `[a-zA-Z0-9().\-/_]{3,128}`, user data ≤ 16 KiB before base64);
 * docs/karpenter-semantics.md#launch-templates and docs/karpenter-semantics.md#createfleet.
 */
import { createHash } from 'node:crypto';
import {
  CreateLaunchTemplateCommand,
  DescribeLaunchTemplatesCommand,
  type EC2Client,
  type LaunchTemplateBlockDeviceMappingRequest,
  type RequestLaunchTemplateData,
  type Tag,
} from '@aws-sdk/client-ec2';
import type { IAMClient } from '@aws-sdk/client-iam';
import type { SSMClient } from '@aws-sdk/client-ssm';
import { ec2NodeClassAmiFamily, type AmiFamily, type BlockDeviceMapping, type EC2NodeClass } from '../../core/api/ec2nodeclass.js';
import { CloudProviderError } from '../../core/errors.js';
import { parseQuantity } from '../../core/resources/quantity.js';
import { systemClock, type Clock } from '../../ports/clock.js';
import { AmiResolver, amiMatches, type ResolvedAmi } from './ami.js';
import { SecurityGroupDiscovery } from './discovery.js';
import { InstanceProfiles } from './instance-profile.js';
import type { LaunchTemplateInput, LaunchTemplateSource, ResolvedLaunchTemplate } from './launch-contracts.js';
import { awsError, awsErrorCode } from './sdk-errors.js';
import { registrationTaints, userDataFor, type ClusterFacts } from './userdata.js';
import { canonicalJson } from '../../core/hash.js';

/** EC2's limit on user data, bytes before base64. */
export const USER_DATA_MAX_BYTES = 16 * 1024;

/** A mapping as Skiff writes defaults: 20 GiB gp3 encrypted unless said otherwise. */
const ebs = (deviceName: string, volumeSize: string): BlockDeviceMapping => ({ deviceName, ebs: { volumeSize, volumeType: 'gp3', encrypted: true } });

/**
 * The block devices a family gets when `spec.blockDeviceMappings` is empty: AL2/AL2023 `/dev/xvda` 20 GiB;
 * Bottlerocket `/dev/xvda` 4 GiB (OS) + `/dev/xvdb` 20 GiB (data); Windows `/dev/sda1` 50 GiB; all gp3, encrypted;
 * Custom none (the AMI's own). Source: Karpenter `amifamily/*.go DefaultBlockDeviceMappings`, `resolver.go DefaultEBS`.
 */
export function defaultBlockDeviceMappings(family: AmiFamily): BlockDeviceMapping[] {
  switch (family) {
    case 'AL2':
    case 'AL2023':
      return [ebs('/dev/xvda', '20Gi')];
    case 'Bottlerocket':
      return [ebs('/dev/xvda', '4Gi'), ebs('/dev/xvdb', '20Gi')];
    case 'Windows2019':
    case 'Windows2022':
    case 'Windows2025':
      return [ebs('/dev/sda1', '50Gi')];
    case 'Custom':
      return [];
  }
}

/**
 * A volume size quantity in whole GiB, rounded up (EC2 `VolumeSize` is GiB): `50Gi` → 50, `100G` → 94.
 * @throws {QuantityError} on a malformed quantity
 */
export function volumeSizeGiB(quantity: string): number {
  return Math.ceil(parseQuantity(quantity) / 2 ** 30);
}

/**
 * `spec.blockDeviceMappings` (or the family's {@link defaultBlockDeviceMappings} when none are given) in the
 * CreateLaunchTemplate shape; `rootVolume` only matters for Skiff's ephemeral-storage sums and is not sent.
 * @example blockDeviceMappings('AL2023', undefined)
 * // [{ DeviceName: '/dev/xvda', Ebs: { VolumeSize: 20, VolumeType: 'gp3', Encrypted: true } }]
 */
export function blockDeviceMappings(family: AmiFamily, mappings: readonly BlockDeviceMapping[] | undefined): LaunchTemplateBlockDeviceMappingRequest[] {
  const chosen = mappings !== undefined && mappings.length > 0 ? mappings : defaultBlockDeviceMappings(family);
  return chosen.map((m) => {
    const e = m.ebs;
    return {
      ...(m.deviceName !== undefined ? { DeviceName: m.deviceName } : {}),
      ...(e !== undefined
        ? {
            Ebs: {
              ...(e.volumeSize !== undefined ? { VolumeSize: volumeSizeGiB(e.volumeSize) } : {}),
              ...(e.volumeType !== undefined ? { VolumeType: e.volumeType } : {}),
              ...(e.iops !== undefined ? { Iops: e.iops } : {}),
              ...(e.throughput !== undefined ? { Throughput: e.throughput } : {}),
              ...(e.encrypted !== undefined ? { Encrypted: e.encrypted } : {}),
              ...(e.deleteOnTermination !== undefined ? { DeleteOnTermination: e.deleteOnTermination } : {}),
              ...(e.kmsKeyID !== undefined ? { KmsKeyId: e.kmsKeyID } : {}),
              ...(e.snapshotID !== undefined ? { SnapshotId: e.snapshotID } : {}),
              ...(e.volumeInitializationRate !== undefined ? { VolumeInitializationRate: e.volumeInitializationRate } : {}),
            },
          }
        : {}),
    };
  });
}

/** What one launch template holds besides the node class. */
export interface LaunchTemplateDataInput {
  readonly nodeClass: EC2NodeClass;
  readonly imageId: string;
  /** Plain-text user data (base64-encoded here), or undefined for none. */
  readonly userData: string | undefined;
  readonly instanceProfile: string;
  /** Security group ids, any order (sorted here). */
  readonly securityGroupIds: readonly string[];
}

/**
 * The CreateLaunchTemplate data: `ImageId`, `UserData` (base64), `IamInstanceProfile.Name`, `SecurityGroupIds`
 * (or, with `associatePublicIPAddress` set, one network interface at index 0 carrying the groups and the choice),
 * `BlockDeviceMappings` ({@link blockDeviceMappings}), `MetadataOptions` (`spec.metadataOptions`; the parser applies
 * Karpenter's defaults: endpoint enabled, IPv6 disabled, hop limit 1, tokens required), `Monitoring.Enabled`
 * (`detailedMonitoring`, default false). Tags for instances and volumes are CreateFleet's.
 * @throws {CloudProviderError} code `UserDataTooLarge` over {@link USER_DATA_MAX_BYTES}
 */
export function launchTemplateData(input: LaunchTemplateDataInput): RequestLaunchTemplateData {
  const { spec } = input.nodeClass;
  const family = ec2NodeClassAmiFamily(input.nodeClass);
  const groups = [...new Set(input.securityGroupIds)].sort();
  const mappings = blockDeviceMappings(family, spec.blockDeviceMappings);
  const userData = input.userData !== undefined ? Buffer.from(input.userData, 'utf8') : undefined;
  if (userData !== undefined && userData.length > USER_DATA_MAX_BYTES) {
    throw new CloudProviderError(
      `EC2NodeClass ${input.nodeClass.metadata.name}: user data is ${userData.length} bytes, over EC2's ${USER_DATA_MAX_BYTES}`,
      'UserDataTooLarge',
    );
  }
  const m = spec.metadataOptions;
  return {
    ImageId: input.imageId,
    ...(userData !== undefined ? { UserData: userData.toString('base64') } : {}),
    IamInstanceProfile: { Name: input.instanceProfile },
    ...(spec.associatePublicIPAddress !== undefined
      ? { NetworkInterfaces: [{ DeviceIndex: 0, AssociatePublicIpAddress: spec.associatePublicIPAddress, Groups: groups }] }
      : { SecurityGroupIds: groups }),
    ...(mappings.length > 0 ? { BlockDeviceMappings: mappings } : {}),
    MetadataOptions: {
      HttpEndpoint: m.httpEndpoint,
      HttpProtocolIpv6: m.httpProtocolIPv6,
      HttpPutResponseHopLimit: m.httpPutResponseHopLimit,
      HttpTokens: m.httpTokens,
    },
    Monitoring: { Enabled: spec.detailedMonitoring ?? false },
  };
}

/**
 * Tags on the launch template itself: `spec.tags` under `kubernetes.io/cluster/<cluster>=owned`,
 * `eks:eks-cluster-name=<cluster>` and `karpenter.k8s.aws/ec2nodeclass=<name>` (which win), sorted by key.
 */
export function launchTemplateTags(cluster: string, nodeClass: EC2NodeClass): Tag[] {
  const tags: Record<string, string> = {
    ...nodeClass.spec.tags,
    [`kubernetes.io/cluster/${cluster}`]: 'owned',
    'eks:eks-cluster-name': cluster,
    'karpenter.k8s.aws/ec2nodeclass': nodeClass.metadata.name,
  };
  return Object.keys(tags)
    .sort()
    .map((Key) => ({ Key, Value: tags[Key] ?? '' }));
}

/**
 * The launch template name: `skiff/<cluster>/` + the first 16 hex digits of the SHA-256 of the canonical JSON
 * (keys sorted) of the template data and its tags. Equal content → equal name, so a template is reused across
 * launches, NodeClaims and processes; the node class tag in the hash keeps node classes apart.
 * @example launchTemplateName('prod', data, tags) // 'skiff/prod/3f2a9c0d41b7e865'
 */
export function launchTemplateName(cluster: string, data: RequestLaunchTemplateData, tags: readonly Tag[]): string {
  return `skiff/${cluster}/${createHash('sha256').update(canonicalJson({ data, tags })).digest('hex').slice(0, 16)}`;
}


/** Dependencies of {@link Ec2LaunchTemplates}. */
export interface Ec2LaunchTemplatesProps {
  readonly ec2: EC2Client;
  readonly ssm: SSMClient;
  readonly iam: IAMClient;
  /** AWS region of the cluster, e.g. `us-west-2` (instance profile names and paths). */
  readonly region: string;
  /** The cluster the nodes join. */
  readonly cluster: ClusterFacts;
  /** @default systemClock */
  readonly clock?: Clock;
  /** @default new AmiResolver({ ec2, ssm, kubernetesVersion: cluster.version, clock }) */
  readonly amis?: AmiResolver;
  /** @default new SecurityGroupDiscovery({ ec2, clock }) */
  readonly securityGroups?: SecurityGroupDiscovery;
  /** @default new InstanceProfiles({ iam, cluster: cluster.name, region, clock }) */
  readonly instanceProfiles?: InstanceProfiles;
}

/**
 * {@link LaunchTemplateSource} on EC2. `resolve` finds the node class's AMIs, security groups and instance profile,
 * gives every instance type the first AMI it {@link amiMatches}, and ensures one launch template per AMI used:
 * DescribeLaunchTemplates by name → CreateLaunchTemplate when missing (`InvalidLaunchTemplateName.AlreadyExistsException`
 * = a concurrent creator won: reuse). Ensured names are cached per process until `invalidate`.
 * @example
 * const templates = new Ec2LaunchTemplates({ ec2, ssm, iam, region: 'us-west-2', cluster });
 * const resolved = await templates.resolve({ nodeClass, nodePool: 'general', nodeClaim: 'general-abc12', labels, taints: [], startupTaints: [], instanceTypes });
 * // [{ launchTemplateName: 'skiff/prod/…', imageId: 'ami-…', architecture: 'amd64', matches }]
 */
export class Ec2LaunchTemplates implements LaunchTemplateSource {
  readonly #ec2: EC2Client;
  readonly #cluster: ClusterFacts;
  readonly #amis: AmiResolver;
  readonly #securityGroups: SecurityGroupDiscovery;
  readonly #instanceProfiles: InstanceProfiles;
  /** Template name → the ensure in flight or done. */
  readonly #ensured = new Map<string, Promise<void>>();
  /** Node class name → the template names ensured for it. */
  readonly #byNodeClass = new Map<string, Set<string>>();

  /** @param props clients, region and cluster facts; collaborators are built from the clients unless given */
  constructor(props: Ec2LaunchTemplatesProps) {
    const clock = props.clock ?? systemClock;
    this.#ec2 = props.ec2;
    this.#cluster = props.cluster;
    this.#amis = props.amis ?? new AmiResolver({ ec2: props.ec2, ssm: props.ssm, kubernetesVersion: props.cluster.version, clock });
    this.#securityGroups = props.securityGroups ?? new SecurityGroupDiscovery({ ec2: props.ec2, clock });
    this.#instanceProfiles = props.instanceProfiles ?? new InstanceProfiles({ iam: props.iam, cluster: props.cluster.name, region: props.region, clock });
  }

  /**
   * The launch templates serving `input.instanceTypes`, one per AMI they need, amd64 before arm64 (AMI order).
   * Instance types no AMI serves are left out (the caller drops their overrides); when none is served the list is
   * empty and nothing is created.
   * @throws {CloudProviderError} from AMI, security group or instance profile resolution (codes `AMINotFound`,
   *   `SecurityGroupsNotFound`, `LimitExceeded`, …), bad user data (`InvalidUserData`, `UserDataTooLarge`), or EC2
   * @throws {ThrottledError} when an AWS call throttles
   */
  async resolve(input: LaunchTemplateInput): Promise<ResolvedLaunchTemplate[]> {
    const { nodeClass } = input;
    const family = ec2NodeClassAmiFamily(nodeClass);
    const [amis, securityGroupIds, instanceProfile] = await Promise.all([
      this.#amis.resolve(nodeClass),
      this.#securityGroups.securityGroupIds(nodeClass),
      this.#instanceProfiles.ensure(nodeClass),
    ]);
    const used = new Set<string>();
    for (const it of input.instanceTypes) {
      const ami = amis.find((a) => amiMatches(a, it.labels));
      if (ami !== undefined) used.add(ami.imageId);
    }
    if (used.size === 0) return [];
    const userData = userDataFor(family, {
      cluster: this.#cluster,
      labels: input.labels,
      taints: registrationTaints(input.taints, input.startupTaints),
      kubelet: nodeClass.spec.kubelet,
      userData: nodeClass.spec.userData,
      instanceStorePolicy: nodeClass.spec.instanceStorePolicy,
    });
    const tags = launchTemplateTags(this.#cluster.name, nodeClass);
    const imageIds = [...new Set(amis.map((a) => a.imageId))].filter((id) => used.has(id));
    return Promise.all(
      imageIds.map(async (imageId): Promise<ResolvedLaunchTemplate> => {
        const entries: ResolvedAmi[] = amis.filter((a) => a.imageId === imageId);
        const data = launchTemplateData({ nodeClass, imageId, userData, instanceProfile, securityGroupIds });
        const name = launchTemplateName(this.#cluster.name, data, tags);
        await this.#ensure(nodeClass.metadata.name, name, data, tags);
        return {
          launchTemplateName: name,
          imageId,
          architecture: entries[0]?.architecture ?? 'amd64',
          matches: (labels) => entries.some((a) => amiMatches(a, labels)),
        };
      }),
    );
  }

  /** Forgets the templates ensured for `nodeClass`; the next `resolve` checks EC2 (and recreates them) again. */
  invalidate(nodeClass: string): void {
    for (const name of this.#byNodeClass.get(nodeClass) ?? []) this.#ensured.delete(name);
    this.#byNodeClass.delete(nodeClass);
  }

  /** Ensures template `name` exists, once per process (shared by concurrent callers, forgotten on failure). */
  async #ensure(nodeClass: string, name: string, data: RequestLaunchTemplateData, tags: readonly Tag[]): Promise<void> {
    let ensured = this.#ensured.get(name);
    if (ensured === undefined) {
      ensured = this.#createOrReuse(nodeClass, name, data, tags).catch((e: unknown) => {
        this.#ensured.delete(name);
        throw e;
      });
      this.#ensured.set(name, ensured);
      const names = this.#byNodeClass.get(nodeClass) ?? new Set<string>();
      names.add(name);
      this.#byNodeClass.set(nodeClass, names);
    }
    return ensured;
  }

  async #createOrReuse(nodeClass: string, name: string, data: RequestLaunchTemplateData, tags: readonly Tag[]): Promise<void> {
    const what = `EC2NodeClass ${nodeClass}: launch template ${name}`;
    try {
      const found = await this.#ec2.send(new DescribeLaunchTemplatesCommand({ LaunchTemplateNames: [name] }));
      if ((found.LaunchTemplates ?? []).length > 0) return;
    } catch (e) {
      if (awsErrorCode(e) !== 'InvalidLaunchTemplateName.NotFoundException') throw awsError(e, `${what}: DescribeLaunchTemplates`);
    }
    try {
      await this.#ec2.send(
        new CreateLaunchTemplateCommand({
          LaunchTemplateName: name,
          LaunchTemplateData: data,
          TagSpecifications: [{ ResourceType: 'launch-template', Tags: [...tags] }],
        }),
      );
    } catch (e) {
      if (awsErrorCode(e) === 'InvalidLaunchTemplateName.AlreadyExistsException') return;
      throw awsError(e, `${what}: CreateLaunchTemplate`);
    }
  }
}
