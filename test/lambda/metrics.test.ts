import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { NodeClaim } from '../../shared/core/api/nodeclaim.js';
import { METRICS, METRICS_NAMESPACE, countBy, metricPoint } from '../../shared/core/metrics.js';
import type { DisruptionReport } from '../../shared/controllers/disruption/deps.js';
import type { LifecycleReport } from '../../shared/controllers/lifecycle.js';
import type { ProvisionReport } from '../../shared/controllers/provision.js';
import {
  createEmfPublisher,
  disruptionMetrics,
  fleetMetrics,
  interruptionMetrics,
  lifecycleMetrics,
  nodePoolOfNodeClaim,
  nodeUsageMetrics,
  PodStartupTracker,
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
  terminating: [],
  nodeClaimDeleted: [],
  orphanInstances: [],
  deletedNodes: [],
  conflicts: 0,
  mirrored: [],
  mirrorsDeleted: [],
  mirrorFailures: [],
};

const emptyDisruption: DisruptionReport = { proposed: [], started: [], rejected: [], expired: [], evicted: [], waiting: [], deleted: [], skipped: [], blocked: [], budgetBlocked: [] };

describe('core metrics (shared/core/metrics.ts)', () => {
  it('keeps Karpenter’s names (docs/karpenter-semantics.md#metrics) and the seed’s', () => {
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
        searchStopped: [{ method: 'single-node-consolidation', evaluated: 100, candidates: 240 }],
      });
      expect(points.map((p) => [p.name, p.dimensions, p.value])).toEqual([
        ['karpenter_voluntary_disruption_decisions_total', { reason: 'empty', decision: 'delete' }, 1],
        ['karpenter_voluntary_disruption_decisions_total', { reason: 'underutilized', decision: 'replace' }, 1],
        ['karpenter_voluntary_disruption_failed_validations_total', {}, 1],
        ['karpenter_voluntary_disruption_consolidation_timeouts_total', { consolidation_type: 'single' }, 1],
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

    it('gives live NodeClaims by state and registered nodes (allocatable is per node: nodeUsageMetrics)', () => {
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
      ]);
    });
  });

  describe('nodeUsageMetrics', () => {
    const node = { node: 'ip-10-0-1-5', nodePool: 'general', capacityType: 'spot', zone: 'us-west-2a', allocatable: { cpu: 1930, memory: 7134, pods: 29 }, podRequests: { cpu: 500, memory: 1024, pods: 3 }, daemonRequests: { cpu: 100, pods: 1 } };

    it('gives allocatable, pod and DaemonSet requests per node and resource, in cores, bytes and counts', () => {
      const points = nodeUsageMetrics([node]);
      const table = points.map((p) => [p.name, p.dimensions.resource_type, p.value]);
      expect(table).toEqual([
        ['karpenter_nodes_allocatable', 'cpu', 1.93],
        ['karpenter_nodes_total_pod_requests', 'cpu', 0.5],
        ['karpenter_nodes_total_daemon_requests', 'cpu', 0.1],
        ['karpenter_nodes_allocatable', 'memory', 7134 * 1024 * 1024],
        ['karpenter_nodes_total_pod_requests', 'memory', 1024 * 1024 * 1024],
        ['karpenter_nodes_total_daemon_requests', 'memory', 0],
        ['karpenter_nodes_allocatable', 'pods', 29],
        ['karpenter_nodes_total_pod_requests', 'pods', 3],
        ['karpenter_nodes_total_daemon_requests', 'pods', 1],
      ]);
    });

    it('keeps the dimensions to nodepool and resource_type and carries node_name, capacity_type and zone as properties', () => {
      for (const p of nodeUsageMetrics([node])) {
        expect(Object.keys(p.dimensions).sort()).toEqual(['nodepool', 'resource_type']);
        expect(p.properties).toEqual({ node_name: 'ip-10-0-1-5', capacity_type: 'spot', zone: 'us-west-2a' });
      }
      const [bare] = nodeUsageMetrics([{ node: 'n', nodePool: 'general', allocatable: { cpu: 1000 }, podRequests: {}, daemonRequests: {} }]);
      expect(bare?.properties).toEqual({ node_name: 'n' });
    });

    it('reports a requested resource the node does not list as allocatable 0', () => {
      const points = nodeUsageMetrics([{ ...node, allocatable: {}, podRequests: { 'nvidia.com/gpu': 1 }, daemonRequests: {} }]);
      expect(points.map((p) => [p.name, p.dimensions.resource_type, p.value])).toEqual([
        ['karpenter_nodes_allocatable', 'nvidia.com/gpu', 0],
        ['karpenter_nodes_total_pod_requests', 'nvidia.com/gpu', 1],
        ['karpenter_nodes_total_daemon_requests', 'nvidia.com/gpu', 0],
      ]);
    });
  });

  describe('PodStartupTracker', () => {
    const pod = (uid: string, phase: 'Pending' | 'Running', createdAt = 0) => ({ uid, phase, createdAt });

    it('measures creation → first pass seeing Running, in seconds, once, for a pod it saw Pending', () => {
      const tracker = new PodStartupTracker();
      expect(tracker.observe([pod('a', 'Pending', 1_000)], 60_000)).toEqual([]);
      expect(tracker.observe([pod('a', 'Pending', 1_000)], 120_000)).toEqual([]);
      expect(tracker.observe([pod('a', 'Running', 1_000)], 181_000)).toEqual([180]);
      expect(tracker.observe([pod('a', 'Running', 1_000)], 241_000)).toEqual([]);
      expect(tracker.tracked).toBe(0);
    });

    it('measures nothing for a pod first seen Running (as Karpenter after a restart)', () => {
      expect(new PodStartupTracker().observe([pod('a', 'Running')], 60_000)).toEqual([]);
    });

    it('forgets pods that are no longer listed, and the oldest beyond its capacity', () => {
      const tracker = new PodStartupTracker(2);
      tracker.observe([pod('a', 'Pending'), pod('b', 'Pending'), pod('c', 'Pending')], 1);
      expect(tracker.tracked).toBe(2);
      expect(tracker.observe([pod('a', 'Running'), pod('b', 'Running'), pod('c', 'Running')], 2_000)).toEqual([2, 2]);
      tracker.observe([pod('d', 'Pending')], 3);
      tracker.observe([], 4);
      expect(tracker.tracked).toBe(0);
    });
  });

  describe('lifecycleMetrics with usage', () => {
    it('adds the fleet gauges, the per-node gauges and the startup durations of a pass that observed usage', () => {
      const tracker = new PodStartupTracker();
      const usage = (phase: 'Pending' | 'Running', observedAt: number): LifecycleReport => ({
        ...emptyLifecycle,
        usage: { observedAt, claims: [], nodes: [{ node: 'n1', nodePool: 'general', allocatable: { cpu: 2000 }, podRequests: {}, daemonRequests: {} }], pods: [{ uid: 'p', phase, createdAt: 0 }] },
      });
      expect(lifecycleMetrics(usage('Pending', 30_000), tracker).map((p) => p.name)).not.toContain('karpenter_pods_startup_duration_seconds');
      const points = lifecycleMetrics(usage('Running', 90_000), tracker);
      expect(points.find((p) => p.name === 'karpenter_pods_startup_duration_seconds')?.value).toBe(90);
      expect(points.filter((p) => p.name === 'karpenter_nodes_allocatable')).toHaveLength(1);
      expect(lifecycleMetrics(emptyLifecycle, tracker)).toEqual([]);
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

  it('keeps each value of a histogram instead of summing them', () => {
    createEmfPublisher({ clusterName: 'prod' }).publish([metricPoint('podsStartupDuration', 30), metricPoint('podsStartupDuration', 45)]);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ karpenter_pods_startup_duration_seconds: [30, 45] });
  });

  it('writes a histogram of more than 99 values over several lines', () => {
    createEmfPublisher({ clusterName: 'prod' }).publish(Array.from({ length: 150 }, (_, i) => metricPoint('podsStartupDuration', i)));
    const values = lines.map((l) => (JSON.parse(l) as { karpenter_pods_startup_duration_seconds: number[] }).karpenter_pods_startup_duration_seconds);
    expect(values.map((v) => v.length)).toEqual([99, 51]);
  });

  it('writes a per-node point as its own line with properties, and without the cluster-wide dimension set', () => {
    createEmfPublisher({ clusterName: 'prod', serviceName: 'skiff' }).publish(
      nodeUsageMetrics([
        { node: 'n1', nodePool: 'general', capacityType: 'spot', allocatable: { cpu: 2000 }, podRequests: {}, daemonRequests: {} },
        { node: 'n2', nodePool: 'general', allocatable: { cpu: 4000 }, podRequests: {}, daemonRequests: {} },
      ]),
    );
    const emf = lines.map((l) => JSON.parse(l) as Record<string, unknown> & { _aws: { CloudWatchMetrics: { Dimensions: string[][] }[] } });
    expect(emf).toHaveLength(2);
    expect(emf[0]).toMatchObject({ node_name: 'n1', capacity_type: 'spot', nodepool: 'general', resource_type: 'cpu', karpenter_nodes_allocatable: 2 });
    expect(emf[1]).toMatchObject({ node_name: 'n2', karpenter_nodes_allocatable: 4 });
    expect(emf[1]).not.toHaveProperty('capacity_type');
    for (const blob of emf) expect(blob._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service', 'cluster', 'nodepool', 'resource_type']]);
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
