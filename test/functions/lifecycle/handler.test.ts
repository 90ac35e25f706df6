import type { ScheduledEvent } from 'aws-lambda';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler, type LifecycleEvent, type NodeEvent } from '../../../functions/lifecycle/handler.js';
import { DynamoDbLeaseStore } from '../../../shared/adapters/aws/lease-store.js';
import { leaseKey } from '../../../shared/adapters/aws/table.js';
import { startDynalite, type LocalDynamoDb } from '../../../shared/cli/local-dynamodb.js';
import { LEASE_MARGIN_SECONDS, LIFECYCLE_LEASE_NAME } from '../../../shared/lambda/periodic-lease.js';
import type { LifecycleReport } from '../../../shared/controllers/lifecycle.js';
import type { Log } from '../../../shared/lambda/log.js';
import { PodStartupTracker } from '../../../shared/lambda/metrics.js';
import type { PriceRefresher, PriceRefreshOutcome } from '../../../shared/lambda/price-refresh.js';
import type { MetricDataPoint } from '../../../shared/core/metrics.js';

const EMPTY: LifecycleReport = { registered: [], initialized: [], registrationTimeouts: [], instanceTerminated: [], nodeDeleted: [], terminating: [], nodeClaimDeleted: [], orphanInstances: [], deletedNodes: [], conflicts: 0, mirrored: [], mirrorsDeleted: [], mirrorFailures: [] };

const scheduled: ScheduledEvent = {
  version: '0',
  id: 'e-1',
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: '123456789012',
  time: '2026-03-02T08:01:00Z',
  region: 'us-west-2',
  resources: ['arn:aws:events:us-west-2:123456789012:rule/skiff-lifecycle'],
  detail: {},
};

const nodeEvent: NodeEvent = { kind: 'node', cluster: 'prod', name: 'ip-10-0-1-2.us-west-2.compute.internal', uid: 'u-1', resourceVersion: '7', event: 'registered' };

/** A log that keeps every line. */
function collectingLog(): Log & { lines: { level: string; message: string; attributes?: Record<string, unknown> }[] } {
  const lines: { level: string; message: string; attributes?: Record<string, unknown> }[] = [];
  const at = (level: string) => (message: string, attributes?: Record<string, unknown>) => void lines.push({ level, message, ...(attributes ? { attributes } : {}) });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

function setup(report: LifecycleReport | (() => Promise<LifecycleReport>) = EMPTY) {
  const log = collectingLog();
  let passes = 0;
  const handler = createHandler({
    reconcile: async () => {
      passes++;
      return typeof report === 'function' ? report() : report;
    },
    log,
  });
  return { handler, log, passes: () => passes };
}

describe('lifecycle handler', () => {
  describe('an EventBridge scheduled event', () => {
    it('runs one lifecycle pass and returns its report', async () => {
      const { handler, passes } = setup({ ...EMPTY, registered: ['general-a'] });
      const result = await handler(scheduled);
      expect(passes()).toBe(1);
      expect(result).toEqual({ trigger: 'schedule', report: { ...EMPTY, registered: ['general-a'] } });
    });

    it('logs what the pass did at info, and an idle pass at debug', async () => {
      const busy = setup({ ...EMPTY, orphanInstances: ['i-0abc'] });
      await busy.handler(scheduled);
      expect(busy.log.lines).toEqual([{ level: 'info', message: 'lifecycle pass', attributes: expect.objectContaining({ trigger: 'schedule', orphanInstances: ['i-0abc'] }) }]);
      const idle = setup();
      await idle.handler(scheduled);
      expect(idle.log.lines.map((l) => l.level)).toEqual(['debug']);
    });
  });

  describe('a relay node event', () => {
    it('runs one lifecycle pass', async () => {
      const { handler, passes } = setup();
      expect(await handler(nodeEvent)).toMatchObject({ trigger: 'node' });
      expect(passes()).toBe(1);
    });
  });

  describe('a batch from the lifecycle follow-up queue', () => {
    const followUp = {
      Records: [{ messageId: 'm-1', receiptHandle: 'r', body: '{"kind":"lifecycle-follow-up"}', attributes: {}, messageAttributes: {}, md5OfBody: '', eventSource: 'aws:sqs', eventSourceARN: 'arn:aws:sqs:us-west-2:123456789012:skiff-LifecycleFollowUps.fifo', awsRegion: 'us-west-2' }],
    } as unknown as LifecycleEvent;

    it('runs one lifecycle pass', async () => {
      const { handler, passes } = setup({ ...EMPTY, registered: ['general-a'] });
      expect(await handler(followUp)).toEqual({ trigger: 'follow-up', report: { ...EMPTY, registered: ['general-a'] } });
      expect(passes()).toBe(1);
    });

    it('logs at warn a follow-up the pass could not ask for, and still returns the report', async () => {
      const { handler, log } = setup({ ...EMPTY, registered: ['general-a'], followUpFailure: 'AWS.SimpleQueueService.NonExistentQueue' });
      expect(await handler(scheduled)).toMatchObject({ trigger: 'schedule', report: { registered: ['general-a'] } });
      expect(log.lines.filter((l) => l.level === 'warn')).toEqual([{ level: 'warn', message: expect.stringContaining('follow-up lifecycle pass not requested'), attributes: { trigger: 'schedule', error: 'AWS.SimpleQueueService.NonExistentQueue' } }]);
    });
  });

  describe('anything else', () => {
    it.each([
      ['a relay pod event', { kind: 'pod', cluster: 'prod', namespace: 'default', name: 'web', uid: 'u', resourceVersion: '1' }],
      ['another EventBridge event', { ...scheduled, 'detail-type': 'EC2 Instance State-change Notification', source: 'aws.ec2' }],
      ['a node event without a name', { ...nodeEvent, name: '' }],
      ['null', null],
    ])('drops %s with an error log and runs nothing', async (_, event) => {
      const { handler, log, passes } = setup();
      expect(await handler(event as unknown as LifecycleEvent)).toEqual({ trigger: 'ignored' });
      expect(passes()).toBe(0);
      expect(log.lines.map((l) => l.level)).toEqual(['error']);
    });
  });

  describe('mirror failures', () => {
    it('logs them at warn and still returns the report (the pass did not fail)', async () => {
      const failures = [{ operation: 'apply' as const, name: 'general-a', error: 'apiserver unavailable' }];
      const { handler, log } = setup({ ...EMPTY, mirrorFailures: failures });
      expect(await handler(scheduled)).toEqual({ trigger: 'schedule', report: { ...EMPTY, mirrorFailures: failures } });
      expect(log.lines.map((l) => [l.level, l.attributes?.['mirrorFailures']])).toEqual([
        ['warn', failures],
        ['debug', undefined],
      ]);
    });
  });

  describe('with the lifecycle lease (DynamoDB on dynalite)', () => {
    let db: LocalDynamoDb;
    let clusterSeq = 0;
    const T0 = Date.parse('2026-03-02T08:01:00Z');
    const clock = { now: () => T0 };
    beforeAll(async () => {
      db = await startDynalite();
    });
    afterAll(async () => {
      await db.close();
    });
    const leasesFor = (cluster: string) => new DynamoDbLeaseStore({ client: db.client, tableName: db.tableName, cluster });

    it('lets one of two overlapping invocations run and the other back off, then frees the lease', async () => {
      const leases = leasesFor(`hl${++clusterSeq}`);
      const log = collectingLog();
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let passes = 0;
      const handler = createHandler({ reconcile: async () => (passes++, await gate, EMPTY), log, lease: { leases, clock } });
      const invocations = [handler(scheduled, { awsRequestId: 'req-1' }), handler(nodeEvent, { awsRequestId: 'req-2' })];
      const loser = await Promise.race(invocations);
      expect(loser).toMatchObject({ backedOff: true });
      expect(loser.report).toBeUndefined();
      release();
      const results = await Promise.all(invocations);
      expect(passes).toBe(1);
      expect(results.filter((r) => r.backedOff)).toHaveLength(1);
      expect(results.filter((r) => r.report)).toHaveLength(1);
      expect(log.lines.filter((l) => l.message.startsWith('lifecycle pass skipped'))).toHaveLength(1);
      // Released: the next invocation runs at once.
      expect(await handler(scheduled, { awsRequestId: 'req-3' })).toEqual({ trigger: 'schedule', report: EMPTY });
      expect(passes).toBe(2);
    });

    it('holds the lease for the invocation\'s remaining time plus the margin, as the Lambda request id', async () => {
      const cluster = `hl${++clusterSeq}`;
      let item: Record<string, unknown> | undefined;
      const handler = createHandler({
        reconcile: async () => {
          item = (await db.client.send(new GetCommand({ TableName: db.tableName, Key: leaseKey(cluster, LIFECYCLE_LEASE_NAME), ConsistentRead: true }))).Item;
          return EMPTY;
        },
        log: collectingLog(),
        lease: { leases: leasesFor(cluster), clock },
      });
      await handler(scheduled, { awsRequestId: 'req-9', getRemainingTimeInMillis: () => 59_500 });
      expect(item).toMatchObject({ holder: 'req-9', expiresAt: T0 + (60 + LEASE_MARGIN_SECONDS) * 1000 });
    });

    it('backs off while another holder\'s lease has not expired, and runs once it has', async () => {
      const cluster = `hl${++clusterSeq}`;
      const leases = leasesFor(cluster);
      await leases.acquire(LIFECYCLE_LEASE_NAME, 'crashed-invocation', 60, T0 - 30_000);
      let now = T0;
      let runs = 0;
      const handler = createHandler({ reconcile: async () => (runs++, EMPTY), log: collectingLog(), lease: { leases, clock: { now: () => now }, ttlSeconds: 120, holder: () => 'sim' } });
      expect(await handler(scheduled)).toEqual({ trigger: 'schedule', backedOff: true });
      now = T0 + 30_000;
      expect(await handler(scheduled)).toEqual({ trigger: 'schedule', report: EMPTY });
      expect(runs).toBe(1);
    });

    it('releases the lease when the pass throws, so the retry runs', async () => {
      const leases = leasesFor(`hl${++clusterSeq}`);
      let fail = true;
      const reconcile = async () => {
        if (fail) throw new Error('DynamoDB is down');
        return EMPTY;
      };
      const handler = createHandler({ reconcile, log: collectingLog(), lease: { leases, clock } });
      await expect(handler(scheduled, { awsRequestId: 'req-1' })).rejects.toThrow('DynamoDB is down');
      fail = false;
      expect(await handler(scheduled, { awsRequestId: 'req-2' })).toEqual({ trigger: 'schedule', report: EMPTY });
    });
  });

  describe('a failing pass', () => {
    it('throws, so Lambda retries (the next scheduled run would too)', async () => {
      const { handler } = setup(() => Promise.reject(new Error('DynamoDB is down')));
      await expect(handler(scheduled)).rejects.toThrow('DynamoDB is down');
    });
  });

  describe('prices', () => {
    const refreshed: PriceRefreshOutcome = { status: 'refreshed', result: { outcome: 'stored', version: 'v', fetchedAt: 1, onDemandTypes: 800, spotOfferings: 4000 } };
    /** A refresher recording its calls; `catchUp` is what refreshIfStale does. */
    function refresher(catchUp: () => Promise<PriceRefreshOutcome> = async () => ({ status: 'fresh', ageMs: 3_600_000 }), refresh: () => Promise<PriceRefreshOutcome> = async () => refreshed) {
      const calls: string[] = [];
      const prices: PriceRefresher = {
        refresh: async () => (calls.push('refresh'), refresh()),
        refreshIfStale: async () => (calls.push('refreshIfStale'), catchUp()),
      };
      return { prices, calls };
    }

    it('refreshes on the 12-hourly task, without a lifecycle pass', async () => {
      const { prices, calls } = refresher();
      let passes = 0;
      const points: MetricDataPoint[] = [];
      const log = collectingLog();
      const handler = createHandler({ reconcile: async () => (passes++, EMPTY), log, prices, metrics: { publish: (p) => void points.push(...p) } });
      expect(await handler({ task: 'refresh-prices' })).toEqual({ trigger: 'refresh-prices', prices: refreshed });
      expect(calls).toEqual(['refresh']);
      expect(passes).toBe(0);
      expect(log.lines).toContainEqual({ level: 'info', message: 'prices refreshed', attributes: expect.objectContaining({ onDemandTypes: 800, spotOfferings: 4000 }) });
      expect(points.map((p) => [p.name, p.value])).toEqual([['skiff_price_snapshot_age_seconds', 0]]);
    });

    it('throws and counts a failed scheduled refresh', async () => {
      const { prices } = refresher(undefined, () => Promise.reject(new Error('pricing:GetProducts AccessDenied')));
      const points: MetricDataPoint[] = [];
      const handler = createHandler({ reconcile: async () => EMPTY, log: collectingLog(), prices, metrics: { publish: (p) => void points.push(...p) } });
      await expect(handler({ task: 'refresh-prices' })).rejects.toThrow('AccessDenied');
      expect(points.map((p) => p.name)).toEqual(['skiff_price_refresh_failures_total']);
    });

    it('drops the task when no refresher is wired', async () => {
      const { handler } = setup();
      expect(await handler({ task: 'refresh-prices' })).toEqual({ trigger: 'ignored' });
    });

    it('checks the snapshot’s age after a scheduled pass, not after a node-triggered one, and publishes it', async () => {
      const { prices, calls } = refresher();
      const points: MetricDataPoint[] = [];
      const handler = createHandler({ reconcile: async () => EMPTY, log: collectingLog(), prices, metrics: { publish: (p) => void points.push(...p) } });
      expect(await handler(scheduled)).toEqual({ trigger: 'schedule', report: EMPTY, prices: { status: 'fresh', ageMs: 3_600_000 } });
      await handler(nodeEvent);
      expect(calls).toEqual(['refreshIfStale']);
      expect(points.map((p) => [p.name, p.value])).toEqual([['skiff_price_snapshot_age_seconds', 3600]]);
    });

    it('never fails the pass when the catch-up refresh fails: it is logged and counted', async () => {
      const { prices } = refresher(() => Promise.reject(new Error('no route to api.pricing.us-east-1.amazonaws.com')));
      const points: MetricDataPoint[] = [];
      const log = collectingLog();
      const handler = createHandler({ reconcile: async () => EMPTY, log, prices, metrics: { publish: (p) => void points.push(...p) } });
      expect(await handler(scheduled)).toEqual({ trigger: 'schedule', report: EMPTY });
      expect(log.lines).toContainEqual({ level: 'warn', message: expect.stringContaining('price refresh failed'), attributes: { error: 'no route to api.pricing.us-east-1.amazonaws.com' } });
      expect(points.map((p) => p.name)).toEqual(['skiff_price_refresh_failures_total']);
    });
  });

  describe('usage metrics', () => {
    it('publishes the per-node gauges and pod startup durations, and keeps the usage out of the log', async () => {
      const usage = (phase: 'Pending' | 'Running', observedAt: number): LifecycleReport => ({
        ...EMPTY,
        registered: ['general-a'],
        usage: { observedAt, claims: [], nodes: [{ node: 'n1', nodePool: 'general', allocatable: { cpu: 2000 }, podRequests: { cpu: 500 }, daemonRequests: {} }], pods: [{ uid: 'p1', phase, createdAt: 0 }] },
      });
      const reports = [usage('Pending', 60_000), usage('Running', 120_000)];
      const points: MetricDataPoint[] = [];
      const log = collectingLog();
      const handler = createHandler({ reconcile: async () => reports.shift()!, log, podStartup: new PodStartupTracker(), metrics: { publish: (p) => void points.push(...p) } });
      await handler(scheduled);
      await handler(scheduled);
      expect(points.filter((p) => p.name === 'karpenter_pods_startup_duration_seconds').map((p) => p.value)).toEqual([120]);
      expect(points.filter((p) => p.name === 'karpenter_nodes_total_pod_requests').map((p) => p.value)).toEqual([0.5, 0.5]);
      for (const line of log.lines) expect(line.attributes ?? {}).not.toHaveProperty('usage');
    });
  });
});
