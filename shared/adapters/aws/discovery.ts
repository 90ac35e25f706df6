/**
 * Subnet and security-group discovery for an EC2NodeClass: `subnetSelectorTerms` / `securityGroupSelectorTerms` to
 * EC2 DescribeSubnets / DescribeSecurityGroups filters, cached for a minute, and the subnet Karpenter launches into
 * per zone (the one with the most free IPv4 addresses).
 *
 * Sources: aws/karpenter-provider-aws `pkg/providers/subnet/subnet.go` (filters, `ZonalSubnetsForLaunch`),
 * `pkg/providers/securitygroup/securitygroup.go` (filters), `pkg/operator/options` (`SUBNET_REFRESH_INTERVAL` 1 m);
 * docs `concepts/nodeclasses.md` (terms ORed, conditions in a term ANDed, `*` tag values);
 * docs/karpenter-semantics.md#subnets-and-security-groups (overrides carry one subnet per zone).
 */
import { paginateDescribeSecurityGroups, paginateDescribeSubnets, type EC2Client, type Filter } from '@aws-sdk/client-ec2';
import type { EC2NodeClass } from '../../core/api/ec2nodeclass.js';
import { CloudProviderError } from '../../core/errors.js';
import { systemClock, type Clock } from '../../ports/clock.js';
import { tagFilters } from './ami.js';
import type { SubnetSource } from './launch-contracts.js';
import { awsError } from './sdk-errors.js';
import { TtlCache } from './ttl-cache.js';

/** A subnet selector term as parsed (`spec.subnetSelectorTerms[i]`). */
export type SubnetSelectorTerm = EC2NodeClass['spec']['subnetSelectorTerms'][number];
/** A security-group selector term as parsed (`spec.securityGroupSelectorTerms[i]`). */
export type SecurityGroupSelectorTerm = EC2NodeClass['spec']['securityGroupSelectorTerms'][number];

/**
 * The DescribeSubnets filter sets for `terms`, one request each (terms are ORed, a term's tags are ANDed); every
 * `id` term joins one `subnet-id` request. A filter (not `SubnetIds`) is used for ids so that a deleted subnet drops
 * out instead of failing the whole call, as in Karpenter.
 * @example subnetFilterSets([{ tags: { 'karpenter.sh/discovery': 'my-cluster' } }, { id: 'subnet-1' }])
 * // [[{ Name: 'subnet-id', Values: ['subnet-1'] }], [{ Name: 'tag:karpenter.sh/discovery', Values: ['my-cluster'] }]]
 */
export function subnetFilterSets(terms: readonly SubnetSelectorTerm[]): Filter[][] {
  const ids = [...new Set(terms.flatMap((t) => (t.id !== undefined ? [t.id] : [])))];
  const sets: Filter[][] = ids.length > 0 ? [[{ Name: 'subnet-id', Values: ids }]] : [];
  for (const term of terms) if (term.id === undefined && term.tags !== undefined) sets.push(tagFilters(term.tags));
  return sets;
}

/**
 * The DescribeSecurityGroups filter sets for `terms`, one request each: all `id` terms share a `group-id` request,
 * all `name` terms a `group-name` request, each `tags` term has its own (tags ANDed).
 * @example securityGroupFilterSets([{ name: 'nodes' }, { tags: { team: '*' } }])
 * // [[{ Name: 'group-name', Values: ['nodes'] }], [{ Name: 'tag-key', Values: ['team'] }]]
 */
export function securityGroupFilterSets(terms: readonly SecurityGroupSelectorTerm[]): Filter[][] {
  const ids = [...new Set(terms.flatMap((t) => (t.id !== undefined ? [t.id] : [])))];
  const names = [...new Set(terms.flatMap((t) => (t.name !== undefined ? [t.name] : [])))];
  const sets: Filter[][] = [];
  if (ids.length > 0) sets.push([{ Name: 'group-id', Values: ids }]);
  if (names.length > 0) sets.push([{ Name: 'group-name', Values: names }]);
  for (const term of terms) if (term.id === undefined && term.name === undefined && term.tags !== undefined) sets.push(tagFilters(term.tags));
  return sets;
}

/** A subnet an EC2NodeClass selects. */
export interface DiscoveredSubnet {
  readonly subnetId: string;
  /** Zone name, e.g. `us-west-2a`. */
  readonly zone: string;
  /** Zone id, e.g. `usw2-az1` (empty when EC2 did not say). */
  readonly zoneId: string;
  /** Free IPv4 addresses (EC2 `AvailableIpAddressCount`). */
  readonly availableIpAddressCount: number;
}

/** A security group an EC2NodeClass selects. */
export interface DiscoveredSecurityGroup {
  readonly groupId: string;
  readonly name: string;
}

/** Dependencies and settings of {@link SubnetDiscovery} and {@link SecurityGroupDiscovery}. */
export interface DiscoveryProps {
  readonly ec2: EC2Client;
  /** @default systemClock */
  readonly clock?: Clock;
  /**
   * How long a node class's selection is reused, ms. Source: Karpenter `SUBNET_REFRESH_INTERVAL`.
   * @default 60_000 (1 min)
   */
  readonly ttlMs?: number;
}

/**
 * Finds the subnets an EC2NodeClass selects and, per zone, the one to launch into.
 * @example
 * const subnets = new SubnetDiscovery({ ec2 });
 * await subnets.zonalSubnets(nodeClass); // Map { 'us-west-2a' => 'subnet-0a…', 'us-west-2b' => 'subnet-0b…' }
 */
export class SubnetDiscovery implements SubnetSource {
  readonly #ec2: EC2Client;
  readonly #cache: TtlCache<string, DiscoveredSubnet[]>;

  /** @param props the EC2 client, clock and cache TTL */
  constructor(props: DiscoveryProps) {
    this.#ec2 = props.ec2;
    this.#cache = new TtlCache(props.ttlMs ?? 60_000, props.clock ?? systemClock);
  }

  /**
   * Every subnet `nodeClass` selects, sorted by subnet id (cached 1 min per set of terms).
   * @throws {CloudProviderError} code `SubnetsNotFound` when no subnet matches, naming the node class and its terms
   * @throws {ThrottledError} when EC2 throttles
   * @throws {CloudProviderError} with the EC2 error code on any other EC2 failure
   */
  async subnets(nodeClass: EC2NodeClass): Promise<DiscoveredSubnet[]> {
    const terms = nodeClass.spec.subnetSelectorTerms;
    return this.#cache.getOrLoad(canonicalKey(terms), async () => {
      const found = new Map<string, DiscoveredSubnet>();
      try {
        for (const filters of subnetFilterSets(terms)) {
          for await (const page of paginateDescribeSubnets({ client: this.#ec2 }, { Filters: filters })) {
            for (const s of page.Subnets ?? []) {
              if (s.SubnetId === undefined || s.AvailabilityZone === undefined) continue;
              found.set(s.SubnetId, { subnetId: s.SubnetId, zone: s.AvailabilityZone, zoneId: s.AvailabilityZoneId ?? '', availableIpAddressCount: s.AvailableIpAddressCount ?? 0 });
            }
          }
        }
      } catch (e) {
        throw awsError(e, `EC2NodeClass ${nodeClass.metadata.name}: DescribeSubnets`);
      }
      if (found.size === 0) {
        throw new CloudProviderError(`EC2NodeClass ${nodeClass.metadata.name}: no subnet matches subnetSelectorTerms ${JSON.stringify(terms)}`, 'SubnetsNotFound');
      }
      return [...found.values()].sort((a, b) => compare(a.subnetId, b.subnetId));
    });
  }

  /**
   * Zone → the selected subnet with the most available IPv4 addresses there (ties: the smaller subnet id).
   * Source: Karpenter `subnet.go ZonalSubnetsForLaunch` (without its in-flight IP accounting).
   * @throws {CloudProviderError} code `SubnetsNotFound` when no subnet matches
   */
  async zonalSubnets(nodeClass: EC2NodeClass): Promise<ReadonlyMap<string, string>> {
    const best = new Map<string, DiscoveredSubnet>();
    for (const subnet of await this.subnets(nodeClass)) {
      const current = best.get(subnet.zone);
      if (current === undefined || subnet.availableIpAddressCount > current.availableIpAddressCount) best.set(subnet.zone, subnet);
    }
    return new Map([...best.entries()].sort(([a], [b]) => compare(a, b)).map(([zone, s]) => [zone, s.subnetId]));
  }
}

/**
 * Finds the security groups an EC2NodeClass selects.
 * @example
 * const groups = new SecurityGroupDiscovery({ ec2 });
 * await groups.securityGroupIds(nodeClass); // ['sg-0a…', 'sg-0b…']
 */
export class SecurityGroupDiscovery {
  readonly #ec2: EC2Client;
  readonly #cache: TtlCache<string, DiscoveredSecurityGroup[]>;

  /** @param props the EC2 client, clock and cache TTL */
  constructor(props: DiscoveryProps) {
    this.#ec2 = props.ec2;
    this.#cache = new TtlCache(props.ttlMs ?? 60_000, props.clock ?? systemClock);
  }

  /**
   * Every security group `nodeClass` selects, sorted by group id (cached 1 min per set of terms).
   * @throws {CloudProviderError} code `SecurityGroupsNotFound` when none matches, naming the node class and its terms
   * @throws {ThrottledError} when EC2 throttles
   * @throws {CloudProviderError} with the EC2 error code on any other EC2 failure
   */
  async securityGroups(nodeClass: EC2NodeClass): Promise<DiscoveredSecurityGroup[]> {
    const terms = nodeClass.spec.securityGroupSelectorTerms;
    return this.#cache.getOrLoad(canonicalKey(terms), async () => {
      const found = new Map<string, DiscoveredSecurityGroup>();
      try {
        for (const filters of securityGroupFilterSets(terms)) {
          for await (const page of paginateDescribeSecurityGroups({ client: this.#ec2 }, { Filters: filters })) {
            for (const g of page.SecurityGroups ?? []) if (g.GroupId !== undefined) found.set(g.GroupId, { groupId: g.GroupId, name: g.GroupName ?? '' });
          }
        }
      } catch (e) {
        throw awsError(e, `EC2NodeClass ${nodeClass.metadata.name}: DescribeSecurityGroups`);
      }
      if (found.size === 0) {
        throw new CloudProviderError(
          `EC2NodeClass ${nodeClass.metadata.name}: no security group matches securityGroupSelectorTerms ${JSON.stringify(terms)}`,
          'SecurityGroupsNotFound',
        );
      }
      return [...found.values()].sort((a, b) => compare(a.groupId, b.groupId));
    });
  }

  /**
   * The ids of {@link SecurityGroupDiscovery.securityGroups}, sorted.
   * @throws {CloudProviderError} as {@link SecurityGroupDiscovery.securityGroups}
   */
  async securityGroupIds(nodeClass: EC2NodeClass): Promise<string[]> {
    return (await this.securityGroups(nodeClass)).map((g) => g.groupId);
  }
}

/** A cache key for selector terms that ignores tag order. */
function canonicalKey(terms: readonly { readonly tags?: Readonly<Record<string, string>> | undefined }[]): string {
  return JSON.stringify(terms.map((t) => ({ ...t, ...(t.tags ? { tags: Object.entries(t.tags).sort(([a], [b]) => compare(a, b)) } : {}) })));
}

/** Code-point order (locale-independent). */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
