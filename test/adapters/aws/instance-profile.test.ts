import {
  AddRoleToInstanceProfileCommand,
  CreateInstanceProfileCommand,
  EntityAlreadyExistsException,
  GetInstanceProfileCommand,
  IAMClient,
  LimitExceededException,
  NoSuchEntityException,
  type InstanceProfile,
} from '@aws-sdk/client-iam';
import { mockClient } from 'aws-sdk-client-mock';
import 'aws-sdk-client-mock-vitest/extend';
import { beforeEach, describe, expect, it } from 'vitest';
import { InstanceProfiles, instanceProfileName, instanceProfilePath, roleName } from '../../../shared/adapters/aws/instance-profile.js';
import { CloudProviderError } from '../../../shared/core/errors.js';
import { manualClock, nodeClass, seedNodeClass } from './aws-fixtures.js';

const iam = mockClient(IAMClient);
beforeEach(() => iam.reset());

const NAME = 'skiff_my-cluster_us-west-2_default';
const ROLE = 'KarpenterNodeRole-my-cluster';
const profiles = (clock = manualClock()): InstanceProfiles => new InstanceProfiles({ iam: new IAMClient({ region: 'us-west-2' }), cluster: 'my-cluster', region: 'us-west-2', clock });
const profile = (...roles: string[]): { InstanceProfile: InstanceProfile } => ({
  InstanceProfile: {
    InstanceProfileName: NAME,
    InstanceProfileId: 'AIPA1',
    Arn: `arn:aws:iam::111122223333:instance-profile/skiff/us-west-2/my-cluster/${NAME}`,
    Path: '/skiff/us-west-2/my-cluster/',
    CreateDate: new Date('2026-01-01T00:00:00Z'),
    Roles: roles.map((RoleName) => ({ RoleName, RoleId: 'AROA1', Arn: `arn:aws:iam::111122223333:role/${RoleName}`, Path: '/', CreateDate: new Date('2026-01-01T00:00:00Z') })),
  },
});
const noSuchEntity = (): NoSuchEntityException => new NoSuchEntityException({ message: 'not found', $metadata: {} });

describe('instanceProfileName', () => {
  it('is skiff_<cluster>_<region>_<nodeClass>', () => {
    expect(instanceProfileName('my-cluster', 'us-west-2', 'default')).toBe(NAME);
  });

  it('stays within 128 characters by hashing when longer, deterministically and distinctly', () => {
    const long = 'n'.repeat(120);
    const a = instanceProfileName('my-cluster', 'us-west-2', `${long}-a`);
    const b = instanceProfileName('my-cluster', 'us-west-2', `${long}-b`);
    expect(a).toHaveLength(128);
    expect(a).toMatch(/^skiff_my-cluster_us-west-2_n+_[0-9a-f]{16}$/);
    expect(a).toBe(instanceProfileName('my-cluster', 'us-west-2', `${long}-a`));
    expect(a).not.toBe(b);
    expect(a).toMatch(/^[\w+=,.@-]+$/);
  });
});

describe('instanceProfilePath and roleName', () => {
  it('puts profiles under /skiff/<region>/<cluster>/', () => {
    expect(instanceProfilePath('us-west-2', 'my-cluster')).toBe('/skiff/us-west-2/my-cluster/');
  });

  it('takes the role name from a role ARN', () => {
    expect(roleName('arn:aws:iam::111122223333:role/nodes/NodeRole')).toBe('NodeRole');
    expect(roleName('NodeRole')).toBe('NodeRole');
  });
});

describe('InstanceProfiles', () => {
  describe('ensure', () => {
    it('returns spec.instanceProfile as is without calling IAM', async () => {
      const nc = nodeClass('pre', { role: undefined, instanceProfile: 'MyProfile' });
      expect(await profiles().ensure(nc)).toBe('MyProfile');
      expect(iam).not.toHaveReceivedAnyCommand();
    });

    it("creates the seed's profile under Skiff's path with cluster tags, then adds the role", async () => {
      iam.on(GetInstanceProfileCommand).rejects(noSuchEntity());
      iam.on(CreateInstanceProfileCommand).resolves(profile());
      iam.on(AddRoleToInstanceProfileCommand).resolves({});
      expect(await profiles().ensure(seedNodeClass('default'))).toBe(NAME);
      expect(iam).toHaveReceivedCommandWith(CreateInstanceProfileCommand, {
        InstanceProfileName: NAME,
        Path: '/skiff/us-west-2/my-cluster/',
        Tags: [
          { Key: 'kubernetes.io/cluster/my-cluster', Value: 'owned' },
          { Key: 'eks:eks-cluster-name', Value: 'my-cluster' },
          { Key: 'karpenter.k8s.aws/ec2nodeclass', Value: 'default' },
          { Key: 'topology.kubernetes.io/region', Value: 'us-west-2' },
        ],
      });
      expect(iam).toHaveReceivedCommandExactlyOnceWith(AddRoleToInstanceProfileCommand, { InstanceProfileName: NAME, RoleName: ROLE });
    });

    it('does nothing more when the profile already holds the role, and caches the answer', async () => {
      iam.on(GetInstanceProfileCommand).resolves(profile(ROLE));
      const p = profiles();
      expect(await p.ensure(seedNodeClass('default'))).toBe(NAME);
      expect(await p.ensure(seedNodeClass('default'))).toBe(NAME);
      expect(iam).toHaveReceivedCommandTimes(GetInstanceProfileCommand, 1);
      expect(iam).not.toHaveReceivedCommand(CreateInstanceProfileCommand);
      expect(iam).not.toHaveReceivedCommand(AddRoleToInstanceProfileCommand);
    });

    it('asks IAM again once the cache expires (1 hour)', async () => {
      iam.on(GetInstanceProfileCommand).resolves(profile(ROLE));
      const clock = manualClock();
      const p = profiles(clock);
      await p.ensure(seedNodeClass('default'));
      clock.advance(3_600_000);
      await p.ensure(seedNodeClass('default'));
      expect(iam).toHaveReceivedCommandTimes(GetInstanceProfileCommand, 2);
    });

    it('treats EntityAlreadyExists as someone else having created it, and reads it back', async () => {
      iam.on(GetInstanceProfileCommand).rejectsOnce(noSuchEntity()).resolves(profile(ROLE));
      iam.on(CreateInstanceProfileCommand).rejects(new EntityAlreadyExistsException({ message: 'exists', $metadata: {} }));
      expect(await profiles().ensure(seedNodeClass('default'))).toBe(NAME);
      expect(iam).toHaveReceivedCommandTimes(GetInstanceProfileCommand, 2);
      expect(iam).not.toHaveReceivedCommand(AddRoleToInstanceProfileCommand);
    });

    it('accepts LimitExceeded when a concurrent ensure attached the same role', async () => {
      iam.on(GetInstanceProfileCommand).resolvesOnce(profile()).resolves(profile(ROLE));
      iam.on(AddRoleToInstanceProfileCommand).rejects(new LimitExceededException({ message: 'one role', $metadata: {} }));
      expect(await profiles().ensure(seedNodeClass('default'))).toBe(NAME);
    });

    it('fails with LimitExceeded naming both roles when the profile holds a different role', async () => {
      iam.on(GetInstanceProfileCommand).resolves(profile('OtherRole'));
      iam.on(AddRoleToInstanceProfileCommand).rejects(new LimitExceededException({ message: 'Cannot exceed quota for InstanceSessionsPerInstanceProfile: 1', $metadata: {} }));
      const error = await profiles()
        .ensure(seedNodeClass('default'))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CloudProviderError);
      expect(error).toMatchObject({ code: 'LimitExceeded' });
      expect((error as Error).message).toContain('OtherRole');
      expect((error as Error).message).toContain(ROLE);
    });

    it('fails with NoSuchEntity when the role does not exist, and retries on the next call', async () => {
      iam.on(GetInstanceProfileCommand).resolves(profile());
      iam.on(AddRoleToInstanceProfileCommand).rejectsOnce(noSuchEntity()).resolves({});
      const p = profiles();
      await expect(p.ensure(seedNodeClass('default'))).rejects.toMatchObject({ code: 'NoSuchEntity' });
      expect(await p.ensure(seedNodeClass('default'))).toBe(NAME);
    });

    it('uses the role name of a role ARN and spec.tags under its own tags', async () => {
      iam.on(GetInstanceProfileCommand).rejects(noSuchEntity());
      iam.on(CreateInstanceProfileCommand).resolves(profile());
      iam.on(AddRoleToInstanceProfileCommand).resolves({});
      const nc = nodeClass('arn', { role: 'arn:aws:iam::111122223333:role/nodes/NodeRole', tags: { team: 'ml' } });
      await profiles().ensure(nc);
      expect(iam).toHaveReceivedCommandWith(AddRoleToInstanceProfileCommand, { RoleName: 'NodeRole' });
      expect(iam).toHaveReceivedCommandWith(CreateInstanceProfileCommand, { Tags: expect.arrayContaining([{ Key: 'team', Value: 'ml' }]) as { Key: string; Value: string }[] });
    });
  });
});
