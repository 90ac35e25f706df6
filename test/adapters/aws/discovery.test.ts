import { DescribeSecurityGroupsCommand, DescribeSubnetsCommand, EC2Client, type Filter, type Subnet } from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import 'aws-sdk-client-mock-vitest/extend';
import { beforeEach, describe, expect, it } from 'vitest';
import { SecurityGroupDiscovery, SubnetDiscovery, securityGroupFilterSets, subnetFilterSets } from '../../../shared/adapters/aws/discovery.js';
import { CloudProviderError, ThrottledError } from '../../../shared/core/errors.js';
import { ec2Error, manualClock, nodeClass, seedNodeClass } from './aws-fixtures.js';

const ec2 = mockClient(EC2Client);
beforeEach(() => ec2.reset());
const client = (): EC2Client => new EC2Client({ region: 'us-west-2' });

const subnet = (id: string, zone: string, free: number): Subnet => ({ SubnetId: id, AvailabilityZone: zone, AvailabilityZoneId: `usw2-${zone.slice(-1)}`, AvailableIpAddressCount: free });

/** Answers DescribeSubnets by the first filter's name and values. */
function answerSubnets(byFilter: Readonly<Record<string, readonly Subnet[]>>): void {
  ec2.on(DescribeSubnetsCommand).callsFake((input: { Filters?: Filter[] }) => {
    const key = (input.Filters ?? []).map((f) => `${f.Name}=${(f.Values ?? []).join('|')}`).join('&');
    return { Subnets: byFilter[key] ?? [] };
  });
}

describe('subnetFilterSets', () => {
  it('gives each tags term its own request (tags ANDed) and all id terms one subnet-id request', () => {
    expect(
      subnetFilterSets([{ tags: { 'karpenter.sh/discovery': 'my-cluster', tier: 'private' } }, { id: 'subnet-1' }, { tags: { 'team/net': '*' } }, { id: 'subnet-2' }]),
    ).toEqual([
      [{ Name: 'subnet-id', Values: ['subnet-1', 'subnet-2'] }],
      [
        { Name: 'tag:karpenter.sh/discovery', Values: ['my-cluster'] },
        { Name: 'tag:tier', Values: ['private'] },
      ],
      [{ Name: 'tag-key', Values: ['team/net'] }],
    ]);
  });
});

describe('securityGroupFilterSets', () => {
  it('uses group-id, group-name and tag filters', () => {
    expect(securityGroupFilterSets([{ id: 'sg-1' }, { name: 'nodes' }, { tags: { 'karpenter.sh/discovery': 'my-cluster' } }, { name: 'extra' }])).toEqual([
      [{ Name: 'group-id', Values: ['sg-1'] }],
      [{ Name: 'group-name', Values: ['nodes', 'extra'] }],
      [{ Name: 'tag:karpenter.sh/discovery', Values: ['my-cluster'] }],
    ]);
  });
});

describe('SubnetDiscovery', () => {
  describe('zonalSubnets', () => {
    it("picks, per zone, the seed's discovered subnet with the most free IPs", async () => {
      answerSubnets({
        'tag:karpenter.sh/discovery=my-cluster': [subnet('subnet-a1', 'us-west-2a', 100), subnet('subnet-a2', 'us-west-2a', 4000), subnet('subnet-b1', 'us-west-2b', 10)],
      });
      const zonal = await new SubnetDiscovery({ ec2: client() }).zonalSubnets(seedNodeClass('default'));
      expect([...zonal]).toEqual([
        ['us-west-2a', 'subnet-a2'],
        ['us-west-2b', 'subnet-b1'],
      ]);
      expect(ec2).toHaveReceivedCommandExactlyOnceWith(DescribeSubnetsCommand, { Filters: [{ Name: 'tag:karpenter.sh/discovery', Values: ['my-cluster'] }] });
    });

    it('ORs terms and counts a subnet found twice once; ties go to the smaller subnet id', async () => {
      answerSubnets({
        'subnet-id=subnet-c2': [subnet('subnet-c2', 'us-west-2c', 50)],
        'tag:env=prod': [subnet('subnet-c1', 'us-west-2c', 50), subnet('subnet-c2', 'us-west-2c', 50)],
      });
      const nc = nodeClass('multi', { subnetSelectorTerms: [{ tags: { env: 'prod' } }, { id: 'subnet-c2' }] });
      const discovery = new SubnetDiscovery({ ec2: client() });
      expect((await discovery.subnets(nc)).map((s) => s.subnetId)).toEqual(['subnet-c1', 'subnet-c2']);
      expect([...(await discovery.zonalSubnets(nc))]).toEqual([['us-west-2c', 'subnet-c1']]);
      expect(ec2).toHaveReceivedCommandTimes(DescribeSubnetsCommand, 2);
    });

    it('reuses the selection for a minute, keyed by the terms (tag order does not matter)', async () => {
      answerSubnets({ 'tag:a=1&tag:b=2': [subnet('subnet-1', 'us-west-2a', 1)], 'tag:b=2&tag:a=1': [subnet('subnet-1', 'us-west-2a', 1)] });
      const clock = manualClock();
      const discovery = new SubnetDiscovery({ ec2: client(), clock });
      await discovery.zonalSubnets(nodeClass('x', { subnetSelectorTerms: [{ tags: { a: '1', b: '2' } }] }));
      clock.advance(59_999);
      await discovery.zonalSubnets(nodeClass('y', { subnetSelectorTerms: [{ tags: { b: '2', a: '1' } }] }));
      expect(ec2).toHaveReceivedCommandTimes(DescribeSubnetsCommand, 1);
      clock.advance(1);
      await discovery.zonalSubnets(nodeClass('x', { subnetSelectorTerms: [{ tags: { a: '1', b: '2' } }] }));
      expect(ec2).toHaveReceivedCommandTimes(DescribeSubnetsCommand, 2);
    });

    it('fails with SubnetsNotFound naming the node class and its terms when nothing matches, and does not cache the failure', async () => {
      answerSubnets({});
      const discovery = new SubnetDiscovery({ ec2: client() });
      const error = await discovery.zonalSubnets(seedNodeClass('default')).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CloudProviderError);
      expect(error).toMatchObject({ code: 'SubnetsNotFound' });
      expect((error as Error).message).toBe('EC2NodeClass default: no subnet matches subnetSelectorTerms [{"tags":{"karpenter.sh/discovery":"my-cluster"}}]');
      await discovery.zonalSubnets(seedNodeClass('default')).catch(() => undefined);
      expect(ec2).toHaveReceivedCommandTimes(DescribeSubnetsCommand, 2);
    });

    it('turns RequestLimitExceeded into ThrottledError and other EC2 errors into CloudProviderError with the code', async () => {
      ec2.on(DescribeSubnetsCommand).rejects(ec2Error('RequestLimitExceeded'));
      await expect(new SubnetDiscovery({ ec2: client() }).zonalSubnets(seedNodeClass('default'))).rejects.toBeInstanceOf(ThrottledError);
      ec2.reset();
      ec2.on(DescribeSubnetsCommand).rejects(ec2Error('UnauthorizedOperation'));
      await expect(new SubnetDiscovery({ ec2: client() }).zonalSubnets(seedNodeClass('default'))).rejects.toMatchObject({ code: 'UnauthorizedOperation' });
    });
  });
});

describe('SecurityGroupDiscovery', () => {
  describe('securityGroupIds', () => {
    it("returns the seed's groups found by tag, sorted", async () => {
      ec2.on(DescribeSecurityGroupsCommand).resolves({ SecurityGroups: [{ GroupId: 'sg-2', GroupName: 'b' }, { GroupId: 'sg-1', GroupName: 'a' }] });
      expect(await new SecurityGroupDiscovery({ ec2: client() }).securityGroupIds(seedNodeClass('gpu-class'))).toEqual(['sg-1', 'sg-2']);
      expect(ec2).toHaveReceivedCommandExactlyOnceWith(DescribeSecurityGroupsCommand, { Filters: [{ Name: 'tag:karpenter.sh/discovery', Values: ['my-cluster'] }] });
    });

    it('finds groups by id and by name', async () => {
      ec2.on(DescribeSecurityGroupsCommand, { Filters: [{ Name: 'group-id', Values: ['sg-9'] }] }).resolves({ SecurityGroups: [{ GroupId: 'sg-9' }] });
      ec2.on(DescribeSecurityGroupsCommand, { Filters: [{ Name: 'group-name', Values: ['nodes'] }] }).resolves({ SecurityGroups: [{ GroupId: 'sg-3', GroupName: 'nodes' }] });
      const nc = nodeClass('sg', { securityGroupSelectorTerms: [{ id: 'sg-9' }, { name: 'nodes' }] });
      expect(await new SecurityGroupDiscovery({ ec2: client() }).securityGroups(nc)).toEqual([
        { groupId: 'sg-3', name: 'nodes' },
        { groupId: 'sg-9', name: '' },
      ]);
    });

    it('fails with SecurityGroupsNotFound naming the node class and its terms when nothing matches', async () => {
      ec2.on(DescribeSecurityGroupsCommand).resolves({ SecurityGroups: [] });
      await expect(new SecurityGroupDiscovery({ ec2: client() }).securityGroupIds(seedNodeClass('default'))).rejects.toThrow(
        'EC2NodeClass default: no security group matches securityGroupSelectorTerms [{"tags":{"karpenter.sh/discovery":"my-cluster"}}]',
      );
    });
  });
});
