import { describe, expect, it } from 'vitest';
import type { DeletionReason } from '../../shared/core/api/nodeclaim.js';
import { ResultSchema, UtcTimeSchema, type Result, type ResultDeletionReason } from '../../shared/sim/result-schema.js';

/** A small but complete Result: one consolidated NodeClaim, one failed launch, one pending pod. */
function validResult(): Record<string, unknown> {
  return {
    scenario: 'burst',
    start: '2026-03-02T08:00:00Z',
    end: '2026-03-02T14:00:00.000Z',
    seed: 42,
    nodeClaims: [
      {
        name: 'general-abc12',
        nodePool: 'general',
        instanceType: 'm5.large',
        capacityType: 'spot',
        zone: 'us-west-2a',
        price: 0.035,
        labels: { 'karpenter.sh/nodepool': 'general', 'node.kubernetes.io/instance-type': 'm5.large' },
        taints: [{ key: 'example.com/dedicated', value: 'web', effect: 'NoSchedule' }],
        allocatable: { cpu: '1930m', memory: '6903Mi', 'ephemeral-storage': '17Gi', pods: '29' },
        requirements: [
          { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] },
          { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['4'] },
        ],
        createdAt: '2026-03-02T08:00:05Z',
        launchedAt: '2026-03-02T08:00:07.250Z',
        registeredAt: '2026-03-02T08:00:45Z',
        initializedAt: '2026-03-02T08:00:52Z',
        deletedAt: '2026-03-02T10:10:00Z',
        deletionReason: 'Underutilized',
        launchError: null,
      },
      {
        name: 'general-def34',
        nodePool: 'general',
        instanceType: null,
        capacityType: null,
        zone: null,
        price: null,
        labels: {},
        taints: [],
        allocatable: {},
        requirements: [],
        createdAt: '2026-03-02T08:01:00Z',
        launchedAt: null,
        registeredAt: null,
        initializedAt: null,
        deletedAt: '2026-03-02T08:01:01Z',
        deletionReason: 'LaunchFailed',
        launchError: 'InsufficientInstanceCapacity',
      },
    ],
    nodes: [
      {
        name: 'ip-10-0-1-23.us-west-2.compute.internal',
        nodeClaim: 'general-abc12',
        instanceType: 'm5.large',
        zone: 'us-west-2a',
        capacityType: 'spot',
        labels: { 'karpenter.sh/nodepool': 'general', 'karpenter.sh/registered': 'true', 'karpenter.sh/initialized': 'true' },
        createdAt: '2026-03-02T08:00:45Z',
        deletedAt: '2026-03-02T10:10:00Z',
      },
    ],
    launchAttempts: [
      {
        at: '2026-03-02T08:00:06Z',
        nodeClaim: 'general-abc12',
        capacityTypes: ['spot', 'on-demand'],
        instanceTypes: 60,
        zones: ['us-west-2a', 'us-west-2b'],
        result: 'ok',
      },
      {
        at: '2026-03-02T08:01:01Z',
        nodeClaim: 'general-def34',
        capacityTypes: ['spot'],
        instanceTypes: 1,
        zones: ['us-west-2a'],
        result: 'InsufficientInstanceCapacity',
      },
    ],
    pods: [
      {
        namespace: 'default',
        name: 'web-7d9f8-x2x4q',
        owner: 'ReplicaSet/web-7d9f8',
        createdAt: '2026-03-02T08:00:00Z',
        deletedAt: null,
        node: 'ip-10-0-1-23.us-west-2.compute.internal',
        nodeClaim: 'general-abc12',
        firstPendingAt: '2026-03-02T08:00:01Z',
        scheduledAt: '2026-03-02T08:00:53Z',
        evictions: 0,
      },
      {
        namespace: 'default',
        name: 'huge',
        owner: null,
        createdAt: '2026-03-02T09:00:00Z',
        deletedAt: null,
        node: null,
        nodeClaim: null,
        firstPendingAt: '2026-03-02T09:00:01Z',
        scheduledAt: null,
        evictions: 0,
      },
    ],
    unschedulable: [
      {
        pod: 'default/huge',
        since: '2026-03-02T09:00:01Z',
        reason: 'no NodePool can serve the pod',
        nodePools: { general: 'no instance type has 512 GiB of memory' },
      },
    ],
    disruptions: [
      {
        at: '2026-03-02T10:05:00Z',
        command: 'cmd-1',
        nodeClaim: 'general-abc12',
        nodePool: 'general',
        reason: 'Underutilized',
        decision: 'delete',
        replacement: null,
        drainStartedAt: '2026-03-02T10:05:01Z',
        completedAt: '2026-03-02T10:10:00Z',
      },
    ],
    events: [
      {
        at: '2026-03-02T09:00:02Z',
        type: 'Warning',
        reason: 'FailedScheduling',
        object: 'Pod/default/huge',
        message: 'no NodePool can serve the pod',
      },
      { at: '2026-03-02T10:05:00Z', type: 'Normal', reason: 'DisruptionBlocked', object: 'NodePool/general', message: 'budget' },
    ],
    violations: { budget: 0, pdb: 0, doNotDisrupt: 0, limits: 0, duplicateLaunches: 0, leakedInstances: 0, placement: 0, churn: 0, evictionLoops: 0 },
    cost: { totalUSD: 0.0765, peakHourlyUSD: 0.035, finalHourlyUSD: 0 },
  };
}

/** A valid result with one change applied to a deep copy. */
function variant(change: (r: any) => void): unknown {
  const r = structuredClone(validResult());
  change(r);
  return r;
}

/** Issue paths of a failed parse, as dotted strings. */
function issuePaths(input: unknown): string[] {
  const parsed = ResultSchema.safeParse(input);
  expect(parsed.success).toBe(false);
  return parsed.success ? [] : parsed.error.issues.map((i) => i.path.join('.'));
}

describe('ResultSchema', () => {
  describe('parse', () => {
    it('accepts a complete result', () => {
      const parsed: Result = ResultSchema.parse(validResult());
      expect(parsed.nodeClaims).toHaveLength(2);
      expect(parsed.nodeClaims[0]?.allocatable['memory']).toBe('6903Mi');
      expect(parsed.cost.totalUSD).toBe(0.0765);
    });

    it('accepts and keeps a field it does not know (a field may be added)', () => {
      const parsed = ResultSchema.parse(variant((r) => {
        r.schemaVersion = 2;
        r.nodeClaims[0].nodeClass = 'default';
      }));
      expect(parsed['schemaVersion']).toBe(2);
      expect(parsed.nodeClaims[0]?.['nodeClass']).toBe('default');
    });

    it.each([
      ['scenario', (r: any) => delete r.scenario],
      ['cost', (r: any) => delete r.cost],
      ['cost.finalHourlyUSD', (r: any) => delete r.cost.finalHourlyUSD],
      ['violations.placement', (r: any) => delete r.violations.placement],
      ['nodeClaims.0.launchError', (r: any) => delete r.nodeClaims[0].launchError],
      ['nodeClaims.1.deletedAt', (r: any) => delete r.nodeClaims[1].deletedAt],
      ['pods.0.evictions', (r: any) => delete r.pods[0].evictions],
      ['launchAttempts.0.result', (r: any) => delete r.launchAttempts[0].result],
      ['disruptions.0.replacement', (r: any) => delete r.disruptions[0].replacement],
    ])('rejects a result missing %s', (path, change) => {
      expect(issuePaths(variant(change))).toContain(path);
    });

    it('rejects undefined where the contract says null', () => {
      expect(issuePaths(variant((r) => (r.nodeClaims[1].instanceType = undefined)))).toContain('nodeClaims.1.instanceType');
    });

    it.each([
      ['start', (r: any) => (r.start = '2026-03-02 08:00:00Z')],
      ['end', (r: any) => (r.end = '2026-03-02T14:00:00+01:00')],
      ['nodeClaims.0.createdAt', (r: any) => (r.nodeClaims[0].createdAt = '2026-03-02T08:00:05')],
      ['pods.0.scheduledAt', (r: any) => (r.pods[0].scheduledAt = 1772438453000)],
      ['events.0.at', (r: any) => (r.events[0].at = '2026-02-30T09:00:02Z')],
    ])('rejects a bad time at %s', (path, change) => {
      expect(issuePaths(variant(change))).toContain(path);
    });

    it.each(['budget', 'pdb', 'doNotDisrupt', 'limits', 'duplicateLaunches', 'leakedInstances', 'placement', 'churn'])(
      'rejects a negative or fractional violations.%s',
      (field) => {
        expect(issuePaths(variant((r) => (r.violations[field] = -1)))).toContain(`violations.${field}`);
        expect(issuePaths(variant((r) => (r.violations[field] = 0.5)))).toContain(`violations.${field}`);
      },
    );

    it('rejects an unknown deletionReason', () => {
      expect(issuePaths(variant((r) => (r.nodeClaims[0].deletionReason = 'Consolidated')))).toContain('nodeClaims.0.deletionReason');
    });

    it('rejects an allocatable that is not a quantity string', () => {
      expect(issuePaths(variant((r) => (r.nodeClaims[0].allocatable.cpu = 1930)))).toContain('nodeClaims.0.allocatable.cpu');
      expect(issuePaths(variant((r) => (r.nodeClaims[0].allocatable.memory = '6903 MiB')))).toContain('nodeClaims.0.allocatable.memory');
    });

    it('rejects a negative price or cost', () => {
      expect(issuePaths(variant((r) => (r.nodeClaims[0].price = -0.01)))).toContain('nodeClaims.0.price');
      expect(issuePaths(variant((r) => (r.cost.totalUSD = -1)))).toContain('cost.totalUSD');
    });

    it('rejects an unknown capacity type, decision or event type', () => {
      expect(issuePaths(variant((r) => (r.nodes[0].capacityType = 'preemptible')))).toContain('nodes.0.capacityType');
      expect(issuePaths(variant((r) => (r.disruptions[0].decision = 'noop')))).toContain('disruptions.0.decision');
      expect(issuePaths(variant((r) => (r.events[0].type = 'Error')))).toContain('events.0.type');
    });

    it('rejects a malformed pod owner or unschedulable pod reference', () => {
      expect(issuePaths(variant((r) => (r.pods[0].owner = 'web')))).toContain('pods.0.owner');
      expect(issuePaths(variant((r) => (r.unschedulable[0].pod = 'huge')))).toContain('unschedulable.0.pod');
    });
  });
});

describe('UtcTimeSchema', () => {
  it.each(['2026-03-02T00:00:00Z', '2026-03-02T23:59:59.999Z', '2024-02-29T12:00:00Z'])('accepts %s', (t) => {
    expect(UtcTimeSchema.safeParse(t).success).toBe(true);
  });

  it.each(['2026-03-02', '2026-03-02T00:00Z', '2026-03-02T00:00:00.5Z', '2026-03-02T00:00:00.123456Z', '2026-13-01T00:00:00Z', '2025-02-29T00:00:00Z', '2026-03-02T24:00:00Z'])(
    'rejects %s',
    (t) => {
      expect(UtcTimeSchema.safeParse(t).success).toBe(false);
    },
  );
});

describe('DeletionReasonSchema', () => {
  it('names exactly the reasons of the core DeletionReason type', () => {
    const same: [ResultDeletionReason, DeletionReason] extends [DeletionReason, ResultDeletionReason] ? true : false = true;
    expect(same).toBe(true);
  });
});
