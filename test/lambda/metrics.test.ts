import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { NodeClaim } from '../../shared/core/api/nodeclaim.js';
import { METRICS, METRICS_NAMESPACE, countBy, metricPoint } from '../../shared/core/metrics.js';
import type { DisruptionReport } from '../../shared/controllers/disruption.js';
import type { LifecycleReport } from '../../shared/controllers/lifecycle.js';
import type { ProvisionReport } from '../../shared/controllers/provision.js';
import {
  createEmfPublisher,
  disruptionMetrics,
  fleetMetrics,
  interruptionMetrics,
  lifecycleMetrics,
  nodePoolOfNodeClaim,
  provisionMetrics,
  publishMetrics,
} from '../../shared/lambda/metrics.js';
import type { Log } from '../../shared/lambda/log.js';

const provisionReport: ProvisionReport = {
  launched: ['general-bcdfg', 'general-hjklm', 'gpu-nprst'],
  failed: [
    { nodeClaim: 'gpu-vwxz2', error: 'InsufficientInstanceCapacity' },
    { nodeClaim: 'gpu-45678', error: 'InsufficientInstanceCapacity' },
  ],
  nominated: { 'default/web-1': 'general-bcdfg' },
  unschedulable: [{ pod: 'default/high-memory-report', reason: 'no NodePool defines the label node-type', nodePools: { general: 'x' } }],
  retry: [],
};

const emptyLifecycle: LifecycleReport = {
  registered: [],
  initialized: [],
  registrationTimeouts: [],
  instanceTerminated: [],
  nodeDeleted: [],
  orphanInstances: [],
  deletedNodes: [],
  conflicts: 0,
  mirrored: [],
  mirrorsDeleted: [],
  mirrorFailures: [],
};

const emptyDisruption: DisruptionReport = { proposed: [], started: [], rejected: [], expired: [], evicted: [], waiting: [], deleted: [], skipped: [], blocked: [], budgetBlocked: [] };

describe('core metrics (shared/core/metrics.ts)', () => {
  it('keeps Karpenter’s names (KARPENTER-V1.md §6.1) and the seed’s', () => {
    const names = Object.values(METRICS).map((m) => m.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'karpenter_nodes_total',
        'karpenter_nodeclaims_total',
        'karpenter_disruption_actions_performed_total',
        'karpenter_pods_startup_duration_seconds',
        'karpenter_nodes_allocatable',
        'karpenter_nodes_total_pod_requests',
        'karpenter_nodeclaims_created_total',
        'karpenter_nodeclaims_terminated_total',
        'karpenter_voluntary_disruption_decisions_total',
        'karpenter_scheduler_unschedulable_pods_count',
        'karpenter_cloudprovider_instance_launch_failures_total',
        'karpenter_nodeclaims_disrupted_total',
        'karpenter_interruption_received_messages_total',
      ]),
    );
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^(karpenter|skiff)_[a-z_]+$/);
    expect(METRICS_NAMESPACE).toBe('Skiff');
  });

  it('builds a point with the definition’s unit, dropping empty dimensions and refusing unknown ones', () => {
    expect(metricPoint('nodeClaimsCreated', 2, { nodepool: 'general', reason: undefined })).toEqual({
      name: 'karpenter_nodeclaims_created_total',
      unit: 'Count',
      value: 2,
      dimensions: { nodepool: 'general' },
    });
    expect(() => metricPoint('nodeClaimsCreated', 1, { zone: 'us-west-2a' })).toThrow(/has no dimension zone/);
    expect(() => metricPoint('nodeClaimsCreated', Number.NaN)).toThrow(RangeError);
  });

  it('counts items per distinct dimension set', () => {
    expect(countBy('nodesCreated', ['a', 'b', 'a'], (x) => ({ nodepool: x })).map((p) => [p.dimensions.nodepool, p.value])).toEqual([
      ['a', 2],
      ['b', 1],
    ]);
  });
});

describe('report metrics (shared/lambda/metrics.ts)', () => {
  describe('nodePoolOfNodeClaim', () => {
    it.each([
      ['general-bcdfg', 'general'],
      ['my-pool-bcdfg', 'my-pool'],
      ['general-rk3x9a', 'general'],
      ['nodash', undefined],
      ['general-THIS-IS-NOT-GENERATED', undefined],
    ])('%s → %s', (name, pool) => {
      expect(nodePoolOfNodeClaim(name)).toBe(pool);
    });
  });

  describe('provisionMetrics', () => {
    it('counts launches per NodePool, failures per NodePool and error code, and the unschedulable pods', () => {
      expect(provisionMetrics(provisionReport)).toEqual([
        { name: 'karpenter_nodeclaims_created_total', unit: 'Count', value: 2, dimensions: { nodepool: 'general', reason: 'provisioning' } },
        { name: 'karpenter_nodeclaims_created_total', unit: 'Count', value: 1, dimensions: { nodepool: 'gpu', reason: 'provisioning' } },
        { name: 'karpenter_cloudprovider_instance_launch_failures_total', unit: 'Count', value: 2, dimensions: { nodepool: 'gpu', error: 'InsufficientInstanceCapacity' } },
        { name: 'karpenter_scheduler_unschedulable_pods_count', unit: 'Count', value: 1, dimensions: {} },
      ]);
    });

    it('reports nothing for a pass a later one already covered', () => {
      expect(provisionMetrics({ ...provisionReport, coveredByPassAt: 1 })).toEqual([]);
    });

    it('reports zero unschedulable pods when every pod found room', () => {
      expect(provisionMetrics({ launched: [], failed: [], nominated: {}, unschedulable: [], retry: [] })).toEqual([metricPoint('schedulerUnschedulablePods', 0)]);
    });
  });

  describe('lifecycleMetrics', () => {
    it('reports nothing for a pass that did nothing', () => {
      expect(lifecycleMetrics(emptyLifecycle)).toEqual([]);
    });

    it('counts registrations, terminations by reason, registration timeouts as disruptions, deleted nodes, orphans and mirror failures', () => {
      const points = lifecycleMetrics({
        ...emptyLifecycle,
        registered: ['general-bcdfg', 'general-hjklm'],
        registrationTimeouts: ['gpu-nprst'],
        instanceTerminated: ['general-vwxz2'],
        deletedNodes: ['ip-10-0-0-1'],
        orphanInstances: ['i-1', 'i-2'],
        mirrorFailures: [{ operation: 'apply', name: 'general-bcdfg', error: 'boom' }],
      });
      expect(points.map((p) => [p.name, p.dimensions, p.value])).toEqual([
        ['karpenter_nodes_created_total', { nodepool: 'general' }, 2],
        ['karpenter_nodeclaims_terminated_total', { nodepool: 'general', reason: 'instance_terminated' }, 1],
        ['karpenter_nodeclaims_terminated_total', { nodepool: 'gpu', reason: 'registration_timeout' }, 1],
        ['karpenter_nodeclaims_disrupted_total', { nodepool: 'gpu', reason: 'registration_timeout' }, 1],
        ['karpenter_nodes_terminated_total', {}, 1],
        ['skiff_orphan_instances_terminated_total', {}, 2],
        ['skiff_nodeclaim_mirror_failures_total', {}, 1],
      ]);
    });
  });

  describe('disruptionMetrics', () => {
    it('counts decisions by reason and decision, failed validations, disruptions by NodePool and reason, and evictions', () => {
      const points = disruptionMetrics({
        ...emptyDisruption,
        proposed: [
          { command: 'c1', reason: 'Underutilized', decision: 'replace', candidates: ['general-bcdfg'] },
          { command: 'c2', reason: 'Empty', decision: 'delete', candidates: ['general-hjklm', 'general-nprst'] },
        ],
        rejected: [{ command: 'c0', reason: 'a pod arrived' }],
        deleted: [
          { nodeClaim: 'general-vwxz2', reason: 'Drifted' },
          { nodeClaim: 'gpu-45678', reason: 'Expired' },
        ],
        evicted: ['default/web-1', 'default/web-2'],
      });
      expect(points.map((p) => [p.name, p.dimensions, p.value])).toEqual([
        ['karpenter_voluntary_disruption_decisions_total', { reason: 'empty', decision: 'delete' }, 1],
        ['karpenter_voluntary_disruption_decisions_total', { reason: 'underutilized', decision: 'replace' }, 1],
        ['karpenter_voluntary_disruption_failed_validations_total', {}, 1],
        ['karpenter_nodeclaims_disrupted_total', { nodepool: 'general', reason: 'drifted' }, 1],
        ['karpenter_nodeclaims_disrupted_total', { nodepool: 'gpu', reason: 'expired' }, 1],
        ['karpenter_nodeclaims_terminated_total', { nodepool: 'general', reason: 'drifted' }, 1],
        ['karpenter_nodeclaims_terminated_total', { nodepool: 'gpu', reason: 'expired' }, 1],
        ['karpenter_disruption_actions_performed_total', { reason: 'drifted' }, 1],
        ['karpenter_disruption_actions_performed_total', { reason: 'expired' }, 1],
        ['karpenter_pods_eviction_requests_total', { code: '200' }, 2],
      ]);
    });
  });

  describe('fleetMetrics', () => {
    const claim = (name: string, nodePool: string, state: NodeClaim['state'], allocatable?: NodeClaim['allocatable']): NodeClaim => ({
      name,
      nodePool,
      nodeClass: 'default',
      state,
      requirements: [],
      instanceTypes: [],
      resources: {},
      labels: {},
      taints: [],
      startupTaints: [],
      nominatedPods: [],
      createdAt: '2026-03-02T08:00:00Z',
      version: 1,
      ...(allocatable ? { allocatable } : {}),
    });

    it('gives live NodeClaims by state, registered nodes, and their allocatable in cores, bytes and counts', () => {
      const points = fleetMetrics([
        claim('general-a', 'general', 'Initialized', { cpu: 1930, memory: 7134, pods: 29 }),
        claim('general-b', 'general', 'Registered', { cpu: 1930, memory: 7134, pods: 29 }),
        claim('general-c', 'general', 'Pending'),
        claim('general-d', 'general', 'Deleted', { cpu: 1930 }),
        claim('gpu-a', 'gpu', 'Failed'),
      ]);
      expect(points.map((p) => [p.name, p.dimensions, p.value])).toEqual([
        ['karpenter_nodeclaims_total', { nodepool: 'general', state: 'Initialized' }, 1],
        ['karpenter_nodeclaims_total', { nodepool: 'general', state: 'Pending' }, 1],
        ['karpenter_nodeclaims_total', { nodepool: 'general', state: 'Registered' }, 1],
        ['karpenter_nodes_total', { nodepool: 'general' }, 2],
        ['karpenter_nodes_allocatable', { nodepool: 'general', resource_type: 'cpu' }, 3.86],
        ['karpenter_nodes_allocatable', { nodepool: 'general', resource_type: 'memory' }, 2 * 7134 * 1024 * 1024],
        ['karpenter_nodes_allocatable', { nodepool: 'general', resource_type: 'pods' }, 58],
      ]);
    });
  });

  describe('publishMetrics', () => {
    it('logs a publisher failure instead of throwing, and skips an empty list', () => {
      const warnings: unknown[] = [];
      const log: Log = { debug() {}, info() {}, warn: (m, a) => void warnings.push([m, a]), error() {} };
      const publish = vi.fn(() => {
        throw new Error('too many dimensions');
      });
      publishMetrics({ publish }, [], log);
      expect(publish).not.toHaveBeenCalled();
      publishMetrics({ publish }, [metricPoint('schedulerUnschedulablePods', 1)], log);
      expect(warnings).toEqual([['metrics not published', { points: 1, error: 'too many dimensions' }]]);
    });
  });
});

describe('createEmfPublisher (Powertools EMF)', () => {
  let lines: string[];
  beforeEach(() => {
    lines = [];
    vi.stubEnv('POWERTOOLS_DEV', '');
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
  });
  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
  });

  it('writes one EMF line per dimension set in the Skiff namespace, each with the cluster-wide and the specific dimension set', () => {
    createEmfPublisher({ clusterName: 'prod', serviceName: 'skiff' }).publish(provisionMetrics(provisionReport));
    const emf = lines.map((l) => JSON.parse(l) as { _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] } } & Record<string, unknown>);
    expect(emf).toHaveLength(4);
    for (const blob of emf) expect(blob._aws.CloudWatchMetrics[0]!.Namespace).toBe('Skiff');
    expect(emf[0]).toMatchObject({
      _aws: {
        CloudWatchMetrics: [
          {
            Dimensions: [
              ['service', 'cluster'],
              ['service', 'cluster', 'nodepool', 'reason'],
            ],
            Metrics: [{ Name: 'karpenter_nodeclaims_created_total', Unit: 'Count' }],
          },
        ],
      },
      service: 'skiff',
      cluster: 'prod',
      nodepool: 'general',
      reason: 'provisioning',
      karpenter_nodeclaims_created_total: 2,
    });
    expect(emf[2]).toMatchObject({ nodepool: 'gpu', error: 'InsufficientInstanceCapacity', karpenter_cloudprovider_instance_launch_failures_total: 2 });
    // A point without dimensions of its own is published with the cluster-wide set only: what the stack's alarms read.
    expect(emf[3]).toMatchObject({
      _aws: { CloudWatchMetrics: [{ Dimensions: [['service', 'cluster']], Metrics: [{ Name: 'karpenter_scheduler_unschedulable_pods_count', Unit: 'Count' }] }] },
      karpenter_scheduler_unschedulable_pods_count: 1,
    });
  });

  it('sums points of one metric and dimension set into one value', () => {
    createEmfPublisher({ clusterName: 'prod' }).publish([metricPoint('nodesCreated', 1, { nodepool: 'a' }), metricPoint('nodesCreated', 2, { nodepool: 'a' })]);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ nodepool: 'a', karpenter_nodes_created_total: 3 });
  });

  it('writes nothing for no points', () => {
    createEmfPublisher({ clusterName: 'prod' }).publish([]);
    expect(lines).toEqual([]);
  });
});

describe('interruptionMetrics', () => {
  it('counts received messages by kind (malformed and unexamined ones too) and deleted ones (all but the failures)', () => {
    const points = interruptionMetrics({ received: 6, malformed: 1, failed: 1 }, [{ kind: 'spotInterruption' }, { kind: 'spotInterruption' }, { kind: 'rebalanceRecommendation' }]);
    const received = points.filter((p) => p.name === 'karpenter_interruption_received_messages_total').map((p) => [p.dimensions.message_type, p.value]);
    expect(received).toEqual([
      ['rebalanceRecommendation', 1],
      ['spotInterruption', 2],
      ['malformed', 1],
      ['ignored', 1],
    ]);
    expect(points.find((p) => p.name === 'karpenter_interruption_deleted_messages_total')?.value).toBe(5);
    expect(interruptionMetrics({ received: 0, malformed: 0, failed: 0 }, [])).toEqual([]);
  });
});
