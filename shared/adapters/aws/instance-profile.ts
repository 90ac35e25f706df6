/**
 * The IAM instance profile an EC2NodeClass launches with: `spec.instanceProfile` as written, or, for `spec.role`, a
 * Skiff-managed profile with a deterministic name that holds that role, created on first use.
 *
 * Sources: aws/karpenter-provider-aws `pkg/providers/instanceprofile/instanceprofile.go` and
 * `pkg/controllers/nodeclass/instanceprofile.go` (profile per cluster/region/node class, under its own IAM path,
 * tagged for the cluster); docs `concepts/nodeclasses.md` (`spec.role`, `spec.instanceProfile`); IAM API reference
 * (`InstanceProfileName` pattern `[\w+=,.@-]+`, 1–128 characters; one role per instance profile, `LimitExceeded`
 * otherwise); docs/karpenter-semantics.md#instance-profile.
 */
import { createHash } from 'node:crypto';
import {
  AddRoleToInstanceProfileCommand,
  CreateInstanceProfileCommand,
  EntityAlreadyExistsException,
  GetInstanceProfileCommand,
  LimitExceededException,
  NoSuchEntityException,
  type IAMClient,
  type InstanceProfile,
} from '@aws-sdk/client-iam';
import type { EC2NodeClass } from '../../core/api/ec2nodeclass.js';
import { CloudProviderError } from '../../core/errors.js';
import { systemClock, type Clock } from '../../ports/clock.js';
import { awsError } from './sdk-errors.js';
import { TtlCache } from './ttl-cache.js';

/** IAM's limit on instance profile names. */
export const INSTANCE_PROFILE_NAME_MAX = 128;

/**
 * The instance profile name Skiff manages for a node class: `skiff_<cluster>_<region>_<nodeClass>`, or, when that is
 * longer than 128 characters, its first 111 characters + `_` + 16 hex digits of its SHA-256 (so it stays unique).
 * Cluster names (`[A-Za-z0-9_-]`), regions and node class names (DNS subdomains) only use characters IAM allows.
 * @example instanceProfileName('my-cluster', 'us-west-2', 'default') // 'skiff_my-cluster_us-west-2_default'
 */
export function instanceProfileName(cluster: string, region: string, nodeClass: string): string {
  const full = `skiff_${cluster}_${region}_${nodeClass}`;
  if (full.length <= INSTANCE_PROFILE_NAME_MAX) return full;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, 16);
  return `${full.slice(0, INSTANCE_PROFILE_NAME_MAX - hash.length - 1)}_${hash}`;
}

/**
 * The IAM path of Skiff's instance profiles: `/skiff/<region>/<cluster>/` (Karpenter uses
 * `/karpenter/<region>/<cluster>/<uid>/`); an IAM policy can scope the profile actions to it.
 * @example instanceProfilePath('us-west-2', 'my-cluster') // '/skiff/us-west-2/my-cluster/'
 */
export function instanceProfilePath(region: string, cluster: string): string {
  return `/skiff/${region}/${cluster}/`;
}

/**
 * The role name in `spec.role`: the name as written, or the last path segment of a role ARN
 * (`arn:aws:iam::111122223333:role/path/NodeRole` → `NodeRole`).
 */
export function roleName(role: string): string {
  return role.startsWith('arn:') ? (role.slice(role.lastIndexOf('/') + 1) || role) : role;
}

/** Dependencies and settings of {@link InstanceProfiles}. */
export interface InstanceProfilesProps {
  readonly iam: IAMClient;
  /** EKS cluster name. */
  readonly cluster: string;
  /** AWS region the cluster runs in, e.g. `us-west-2`. */
  readonly region: string;
  /** @default systemClock */
  readonly clock?: Clock;
  /**
   * How long an ensured profile is trusted before IAM is asked again, ms.
   * @default 3_600_000 (1 h)
   */
  readonly ttlMs?: number;
}

/**
 * Ensures the instance profile of an EC2NodeClass exists and holds its role. Idempotent and safe to run
 * concurrently: a profile someone else created (`EntityAlreadyExists`) or a role someone else attached is fine.
 * @example
 * const profiles = new InstanceProfiles({ iam, cluster: 'my-cluster', region: 'us-west-2' });
 * await profiles.ensure(nodeClass); // 'skiff_my-cluster_us-west-2_default'
 */
export class InstanceProfiles {
  readonly #iam: IAMClient;
  readonly #cluster: string;
  readonly #region: string;
  readonly #ensured: TtlCache<string, string>;

  /** @param props the IAM client, cluster, region, clock and cache TTL */
  constructor(props: InstanceProfilesProps) {
    this.#iam = props.iam;
    this.#cluster = props.cluster;
    this.#region = props.region;
    this.#ensured = new TtlCache(props.ttlMs ?? 3_600_000, props.clock ?? systemClock);
  }

  /**
   * The instance profile name to launch `nodeClass` with. `spec.instanceProfile` is returned as is (not checked);
   * for `spec.role`: GetInstanceProfile → CreateInstanceProfile (path {@link instanceProfilePath}, tagged
   * `kubernetes.io/cluster/<cluster>=owned`, `eks:eks-cluster-name`, `karpenter.k8s.aws/ec2nodeclass`,
   * `topology.kubernetes.io/region` over `spec.tags`) when missing → AddRoleToInstanceProfile when the role is not
   * attached. The result is cached (1 h by default).
   * @returns the instance profile name
   * @throws {CloudProviderError} code `LimitExceeded` when the profile already holds a different role (an instance
   *   profile holds one role); code `NoSuchEntity` when the role does not exist; code `InvalidNodeClass` when neither
   *   `role` nor `instanceProfile` is set
   * @throws {ThrottledError} when IAM throttles
   * @throws {CloudProviderError} with the IAM error code on any other IAM failure
   */
  async ensure(nodeClass: EC2NodeClass): Promise<string> {
    const { instanceProfile, role } = nodeClass.spec;
    if (instanceProfile !== undefined) return instanceProfile;
    if (role === undefined) throw new CloudProviderError(`EC2NodeClass ${nodeClass.metadata.name}: neither spec.role nor spec.instanceProfile is set`, 'InvalidNodeClass');
    const name = instanceProfileName(this.#cluster, this.#region, nodeClass.metadata.name);
    const wanted = roleName(role);
    return this.#ensured.getOrLoad(`${name}\n${wanted}`, () => this.#ensure(nodeClass, name, wanted));
  }

  async #ensure(nodeClass: EC2NodeClass, name: string, role: string): Promise<string> {
    const what = `EC2NodeClass ${nodeClass.metadata.name}: instance profile ${name}`;
    let profile = await this.#get(name, what);
    if (profile === undefined) {
      try {
        await this.#iam.send(
          new CreateInstanceProfileCommand({
            InstanceProfileName: name,
            Path: instanceProfilePath(this.#region, this.#cluster),
            Tags: Object.entries(this.#tags(nodeClass)).map(([Key, Value]) => ({ Key, Value })),
          }),
        );
      } catch (e) {
        if (!(e instanceof EntityAlreadyExistsException)) throw awsError(e, `${what}: CreateInstanceProfile`);
        // Someone else created it between our Get and Create: read what they made.
        profile = await this.#get(name, what);
      }
    }
    if (hasRole(profile, role)) return name;
    try {
      await this.#iam.send(new AddRoleToInstanceProfileCommand({ InstanceProfileName: name, RoleName: role }));
    } catch (e) {
      if (e instanceof LimitExceededException) {
        // One role per profile: fine when a concurrent ensure attached ours, a conflict when it is another role.
        const now = await this.#get(name, what);
        if (hasRole(now, role)) return name;
        const attached = (now?.Roles ?? []).map((r) => r.RoleName).join(', ');
        throw new CloudProviderError(`${what} already holds role ${attached || '(unknown)'}, not ${role}; an instance profile holds one role`, 'LimitExceeded', { cause: e });
      }
      if (e instanceof NoSuchEntityException) throw new CloudProviderError(`${what}: role ${role} does not exist (or IAM does not show the new profile yet)`, 'NoSuchEntity', { cause: e });
      throw awsError(e, `${what}: AddRoleToInstanceProfile ${role}`);
    }
    return name;
  }

  /** The profile, or undefined when IAM says NoSuchEntity. */
  async #get(name: string, what: string): Promise<InstanceProfile | undefined> {
    try {
      return (await this.#iam.send(new GetInstanceProfileCommand({ InstanceProfileName: name }))).InstanceProfile;
    } catch (e) {
      if (e instanceof NoSuchEntityException) return undefined;
      throw awsError(e, `${what}: GetInstanceProfile`);
    }
  }

  /** `spec.tags` under Skiff's ownership tags (which win). */
  #tags(nodeClass: EC2NodeClass): Record<string, string> {
    return {
      ...nodeClass.spec.tags,
      [`kubernetes.io/cluster/${this.#cluster}`]: 'owned',
      'eks:eks-cluster-name': this.#cluster,
      'karpenter.k8s.aws/ec2nodeclass': nodeClass.metadata.name,
      'topology.kubernetes.io/region': this.#region,
    };
  }
}

/** True when `profile` holds `role`. */
function hasRole(profile: InstanceProfile | undefined, role: string): boolean {
  return (profile?.Roles ?? []).some((r) => r.RoleName === role);
}
