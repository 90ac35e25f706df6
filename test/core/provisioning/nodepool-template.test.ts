import { describe, expect, it } from 'vitest';
import { loadCatalog } from '../../../shared/core/instancetypes/catalog.js';
import type { InstanceType } from '../../../shared/core/instancetypes/offering.js';
import { buildNodePoolTemplate, daemonOverheadGroups, daemonOverheadOf, type DaemonSetLike, type NodePoolLike } from '../../../shared/core/provisioning/nodepool-template.js';
import { orderByWeight } from '../../../shared/core/provisioning/nodepool-template.js';
import { SimulatedEc2 } from '../../../shared/sim/simulated-ec2.js';
import { VirtualClock } from '../../../shared/sim/virtual-clock.js';

const ec2 = new SimulatedEc2(new VirtualClock(0), { region: 'us-west-2', catalog: loadCatalog(), vmMemoryOverheadPercent: 0.075, clusterName: 'test', onRegister: () => {} });
const types: readonly InstanceType[] = await ec2.getInstanceTypes({ nodeClass: 'default' });
const byName = (name: string) => types.find((t) => t.name === name)!;

const pool = (requirements: NodePoolLike['spec']['template']['spec']['requirements'], taints: NodePoolLike['spec']['template']['spec']['taints'] = []): NodePoolLike => ({
  metadata: { name: 'general' },
  spec: { template: { spec: { nodeClassRef: { name: 'default' }, requirements, taints } } },
});

const ds = (name: string, cpu: string, spec: Record<string, unknown> = {}): DaemonSetLike => ({
  metadata: { name, namespace: 'kube-system' },
  spec: { template: { spec: { ...spec, containers: [{ name: 'c', resources: { requests: { cpu } } }] } } },
});

const BOTH_ARCHES = pool([
  { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64', 'arm64'] },
  { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m6i.large', 'm7g.large', 'c6i.large'] },
]);

describe('daemonOverheadGroups (core buildDaemonOverheadGroups)', () => {
  it('groups instance types by the DaemonSets that run on them: an amd64-only DaemonSet costs nothing on arm64', () => {
    const groups = daemonOverheadGroups(BOTH_ARCHES, [ds('proxy', '100m'), ds('amd', '1', { nodeSelector: { 'kubernetes.io/arch': 'amd64' } })], [byName('m6i.large'), byName('m7g.large'), byName('c6i.large')]);
    expect(groups.map((g) => ({ daemonSets: g.daemonSets, cpu: g.overhead.cpu, types: g.instanceTypes.map((t) => t.name) }))).toEqual([
      { daemonSets: ['kube-system/amd', 'kube-system/proxy'], cpu: 1100, types: ['m6i.large', 'c6i.large'] },
      { daemonSets: ['kube-system/proxy'], cpu: 100, types: ['m7g.large'] },
    ]);
  });

  it('counts DaemonSets selecting karpenter.sh/registered or karpenter.sh/initialized, not those with untolerated taints or custom labels', () => {
    const tainted = pool([{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m6i.large'] }], [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }]);
    const groups = daemonOverheadGroups(
      tainted,
      [
        ds('registered', '100m', { nodeSelector: { 'karpenter.sh/registered': 'true' }, tolerations: [{ operator: 'Exists' }] }),
        ds('initialized', '200m', { nodeSelector: { 'karpenter.sh/initialized': 'true' }, tolerations: [{ operator: 'Exists' }] }),
        ds('untolerated', '400m'),
        ds('custom', '800m', { nodeSelector: { team: 'a' }, tolerations: [{ operator: 'Exists' }] }),
      ],
      [byName('m6i.large')],
    );
    expect(groups.map((g) => [g.daemonSets, g.overhead.cpu])).toEqual([[['kube-system/initialized', 'kube-system/registered'], 300]]);
  });

  it('the template carries the least overhead and each instance type the rest, as a smaller allocatable', () => {
    const template = buildNodePoolTemplate(BOTH_ARCHES, types, [ds('proxy', '100m'), ds('amd', '1', { nodeSelector: { 'kubernetes.io/arch': 'amd64' } })], {});
    expect(template.daemonOverhead.cpu).toBe(100);
    // Each DaemonSet pod takes a pod slot too.
    expect(template.daemonExtra).toEqual({ 'm6i.large': { cpu: 1000, pods: 1 }, 'c6i.large': { cpu: 1000, pods: 1 } });
    const m6i = template.instanceTypes.find((t) => t.name === 'm6i.large')!;
    expect(m6i.allocatable.cpu).toBe(byName('m6i.large').allocatable.cpu! - 1000);
    expect(m6i.capacity).toEqual(byName('m6i.large').capacity);
    expect(template.instanceTypes.find((t) => t.name === 'm7g.large')).toBe(byName('m7g.large'));
    expect(daemonOverheadOf(template, 'c6i.large').cpu).toBe(1100);
    expect(daemonOverheadOf(template, 'm7g.large').cpu).toBe(100);
  });
});

describe('orderByWeight (core OrderByWeight)', () => {
  it('orders by weight descending, equal weights by name descending', () => {
    const t = (name: string, weight: number) => ({ name, weight });
    expect(orderByWeight([t('a', 0), t('c', 10), t('b', 0), t('d', 10), t('z', 5)]).map((x) => x.name)).toEqual(['d', 'c', 'z', 'b', 'a']);
  });
});

describe('nodePoolRequirements', () => {
  it('reads deprecated beta keys as their v1 labels, as Karpenter normalizes every requirement (break-it trial: beta.kubernetes.io/arch In [amd64] launched an arm64 t4g)', () => {
    const beta = pool([
      { key: 'beta.kubernetes.io/arch', operator: 'In', values: ['amd64'] },
      { key: 'failure-domain.beta.kubernetes.io/zone', operator: 'In', values: ['us-west-2c'] },
      { key: 'beta.kubernetes.io/instance-type', operator: 'In', values: ['m6i.large', 'm7g.large'] },
    ]);
    const template = buildNodePoolTemplate(beta, types, [], {});
    expect(template.instanceTypes.map((t) => t.name)).toEqual(['m6i.large']);
    expect(template.requirements.get('topology.kubernetes.io/zone').sortedValues()).toEqual(['us-west-2c']);
    expect(template.requirements.has('beta.kubernetes.io/arch')).toBe(false);
  });
});
