import type { SQSEvent, SQSRecord, ScheduledEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createHandler as createDisruptionHandler } from '../../functions/disruption/handler.js';
import { createHandler as createInterruptionHandler } from '../../functions/interruption/handler.js';
import { createHandler as createLifecycleHandler } from '../../functions/lifecycle/handler.js';
import { createHandler as createProvisionerHandler } from '../../functions/provisioner/handler.js';
import type { DisruptionReport } from '../../shared/controllers/disruption/deps.js';
import type { InterruptionReport } from '../../shared/controllers/interruption.js';
import type { LifecycleReport } from '../../shared/controllers/lifecycle.js';
import type { ProvisionReport } from '../../shared/controllers/provision.js';
import type { MetricDataPoint } from '../../shared/core/metrics.js';
import { disruptionDecisions, interruptionDecisions, provisionDecisions, publishDecisions } from '../../shared/lambda/decisions.js';
import type { Log } from '../../shared/lambda/log.js';
import type { Decision, DecisionPublisher, PublishDecisionsResult } from '../../shared/ports/decisions.js';

/** A log that records every line as `[level, message, attributes]`. */
function recordingLog(): Log & { readonly lines: [string, string, Record<string, unknown> | undefined][] } {
  const lines: [string, string, Record<string, unknown> | undefined][] = [];
  const at = (level: string) => (message: string, attributes?: Record<string, unknown>) => void lines.push([level, message, attributes]);
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** A decision publisher that records what it was given, answering `result` (or throwing `error`). */
function recordingPublisher(options: { result?: (d: readonly Decision[]) => PublishDecisionsResult; error?: Error } = {}): DecisionPublisher & { readonly published: Decision[][] } {
  const published: Decision[][] = [];
  return {
    published,
    async publish(decisions) {
      published.push([...decisions]);
      if (options.error) throw options.error;
      return options.result ? options.result(decisions) : { published: decisions.length, failed: [] };
    },
  };
}

const provisionReport: ProvisionReport = {
  launched: ['general-bcdfg'],
  failed: [{ nodeClaim: 'gpu-hjklm', error: 'InsufficientInstanceCapacity' }],
  nominated: { 'default/web-1': 'general-bcdfg' },
  unschedulable: [
    {
      pod: 'default/high-memory-report',
      reason: 'no NodePool defines the label node-type',
      nodePools: { general: 'the pod requires node-type In [high-memory], but the NodePool neither requires nor sets the label node-type' },
    },
  ],
  retry: [],
};

const disruptionReport: DisruptionReport = {
  proposed: [{ command: 'cmd-1', reason: 'Underutilized', decision: 'replace', candidates: ['general-bcdfg'] }],
  started: ['cmd-0'],
  rejected: [{ command: 'cmd-9', reason: 'a pod was bound to the node' }],
  expired: ['general-nprst'],
  evicted: ['default/web-1'],
  waiting: [],
  deleted: [{ nodeClaim: 'general-vwxz2', reason: 'Empty' }],
  skipped: [],
  blocked: [{ nodeClaim: 'general-45678', node: 'ip-10-0-0-1', reason: 'pod default/db has karpenter.sh/do-not-disrupt' }],
  budgetBlocked: [{ nodePool: 'batch', reason: 'Drifted' }],
};

const scheduled: ScheduledEvent = {
  version: '0',
  id: 'e',
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: '123456789012',
  time: '2026-03-02T08:00:00Z',
  region: 'us-west-2',
  resources: [],
  detail: {},
};

const interruptionReport: InterruptionReport = {
  kind: 'spotInterruption',
  id: 'ev-1',
  action: 'CordonAndDrain',
  instances: [
    { kind: 'acted', instanceId: 'i-1', nodeClaim: 'general-bcdfg', reason: 'SpotInterrupted', replacements: ['general-rhjklm'], evicted: ['default/web-1'], deleted: false },
    { kind: 'acted', instanceId: 'i-2', nodeClaim: 'general-nprst', reason: 'SpotInterrupted', replacements: [], evicted: [], deleted: true },
    { kind: 'ignored', instanceId: 'i-3', why: 'not Skiff’s' },
  ],
  provisioned: ['gpu-vwxz2'],
};

const spotWarning = JSON.stringify({
  version: '0',
  id: 'ev-1',
  'detail-type': 'EC2 Spot Instance Interruption Warning',
  source: 'aws.ec2',
  account: '123456789012',
  time: '2026-03-02T08:00:00Z',
  region: 'us-west-2',
  resources: ['arn:aws:ec2:us-west-2a:instance/i-1234567890abcdef0'],
  detail: { 'instance-id': 'i-1234567890abcdef0', 'instance-action': 'terminate' },
});

function sqsEvent(bodyObject: Record<string, unknown> = { kind: 'pod', cluster: 'test', namespace: 'default', name: 'web-1', uid: 'u1', resourceVersion: '1' }): SQSEvent {
  const body = typeof bodyObject === 'string' ? bodyObject : JSON.stringify(bodyObject);
  const record: SQSRecord = {
    messageId: 'm-1',
    receiptHandle: 'm-1',
    body,
    attributes: { ApproximateReceiveCount: '1', SentTimestamp: '1', SenderId: 'test', ApproximateFirstReceiveTimestamp: '1' },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-west-2:123456789012:q.fifo',
    awsRegion: 'us-west-2',
  };
  return { Records: [record] };
}

describe('decisions (shared/lambda/decisions.ts)', () => {
  describe('provisionDecisions', () => {
    it('turns a provisioning report into launched, launch-failed and pod-unschedulable decisions with the per-NodePool reasons', () => {
      expect(provisionDecisions(provisionReport)).toEqual([
        { type: 'NodeClaimLaunched', nodeClaim: 'general-bcdfg', nodePool: 'general' },
        { type: 'NodeClaimLaunchFailed', nodeClaim: 'gpu-hjklm', nodePool: 'gpu', error: 'InsufficientInstanceCapacity' },
        { type: 'PodUnschedulable', pod: 'default/high-memory-report', reason: 'no NodePool defines the label node-type', nodePools: provisionReport.unschedulable[0]!.nodePools },
      ]);
    });

    it('decides nothing for a pass a later one covered', () => {
      expect(provisionDecisions({ ...provisionReport, coveredByPassAt: 5 })).toEqual([]);
    });
  });

  describe('disruptionDecisions', () => {
    it('turns a disruption report into proposed, started, expired, blocked and completed decisions', () => {
      expect(disruptionDecisions(disruptionReport)).toEqual([
        { type: 'DisruptionProposed', command: 'cmd-1', reason: 'Underutilized', decision: 'replace', candidates: ['general-bcdfg'] },
        { type: 'DisruptionStarted', command: 'cmd-0' },
        { type: 'NodeClaimExpired', nodeClaim: 'general-nprst' },
        { type: 'DisruptionBlocked', nodeClaim: 'general-45678', node: 'ip-10-0-0-1', nodePool: 'general', reason: 'pod default/db has karpenter.sh/do-not-disrupt' },
        { type: 'DisruptionBlocked', nodePool: 'batch', reason: 'No allowed disruptions for disruption reason Drifted due to blocking budget' },
        { type: 'DisruptionBlocked', command: 'cmd-9', reason: 'a pod was bound to the node' },
        { type: 'DisruptionCompleted', nodeClaim: 'general-vwxz2', nodePool: 'general', reason: 'Empty' },
      ]);
    });
  });

  describe('interruptionDecisions', () => {
    it('gives each disrupted NodeClaim a started decision, a completed one once deleted, and every launch', () => {
      expect(interruptionDecisions(interruptionReport)).toEqual([
        { type: 'DisruptionStarted', command: 'interruption/ev-1/general-bcdfg' },
        { type: 'NodeClaimLaunched', nodeClaim: 'general-rhjklm', nodePool: 'general' },
        { type: 'DisruptionStarted', command: 'interruption/ev-1/general-nprst' },
        { type: 'DisruptionCompleted', nodeClaim: 'general-nprst', nodePool: 'general', reason: 'Interrupted' },
        { type: 'NodeClaimLaunched', nodeClaim: 'gpu-vwxz2', nodePool: 'gpu' },
      ]);
    });

    it('decides nothing for a message that only recorded an Event', () => {
      expect(interruptionDecisions({ kind: 'rebalanceRecommendation', id: 'ev-2', action: 'NoAction', instances: [{ kind: 'noAction', instanceId: 'i-1', nodeClaim: 'general-bcdfg', reason: 'SpotRebalanceRecommendation' }], provisioned: [] })).toEqual([]);
    });
  });

  describe('publishDecisions', () => {
    it('does nothing without a publisher or without decisions', async () => {
      const log = recordingLog();
      await publishDecisions(undefined, provisionDecisions(provisionReport), log);
      const publisher = recordingPublisher();
      await publishDecisions(publisher, [], log);
      expect(publisher.published).toEqual([]);
      expect(log.lines).toEqual([]);
    });

    it('counts the decisions not published as skiff_decisions_unpublished_total when given metrics', async () => {
      const points: MetricDataPoint[] = [];
      const metrics = { publish: (p: readonly MetricDataPoint[]) => void points.push(...p) };
      const partial = recordingPublisher({ result: (d) => ({ published: d.length - 1, failed: [{ decision: d[0]!, errorCode: 'InternalFailure', errorMessage: 'down' }] }) });
      await publishDecisions(partial, provisionDecisions(provisionReport), recordingLog(), metrics);
      await publishDecisions(recordingPublisher({ error: new Error('AccessDenied') }), provisionDecisions(provisionReport), recordingLog(), metrics);
      await publishDecisions(recordingPublisher(), provisionDecisions(provisionReport), recordingLog(), metrics);
      expect(points.map((p) => [p.name, p.value])).toEqual([
        ['skiff_decisions_unpublished_total', 1],
        ['skiff_decisions_unpublished_total', 3],
      ]);
    });

    it('logs the decisions a publisher gave up on, and a publisher that throws, without throwing', async () => {
      const log = recordingLog();
      const partial = recordingPublisher({ result: (d) => ({ published: d.length - 1, failed: [{ decision: d[0]!, errorCode: 'InternalFailure', errorMessage: 'down' }] }) });
      await publishDecisions(partial, provisionDecisions(provisionReport), log);
      await publishDecisions(recordingPublisher({ error: new Error('AccessDenied') }), provisionDecisions(provisionReport), log);
      expect(log.lines).toEqual([
        ['warn', 'decisions not published', { published: 2, failed: [{ type: 'NodeClaimLaunched', errorCode: 'InternalFailure', errorMessage: 'down' }] }],
        ['warn', 'decisions not published', { decisions: 3, error: 'AccessDenied' }],
      ]);
    });
  });
});

describe('handlers with metrics and decisions', () => {
  it('the provisioner logs each decision with stable keys, publishes its metrics and its decisions', async () => {
    const log = recordingLog();
    const points: MetricDataPoint[][] = [];
    const decisions = recordingPublisher();
    const handler = createProvisionerHandler({ provision: async () => provisionReport, log, metrics: { publish: (p) => void points.push([...p]) }, decisions });
    expect(await handler(sqsEvent())).toEqual({ batchItemFailures: [] });
    expect(log.lines.filter(([level]) => level !== 'debug').map(([level, message, attributes]) => [level, message, attributes])).toEqual([
      ['info', 'provisioned', { launched: ['general-bcdfg'], failed: provisionReport.failed, nominated: 1, unschedulable: 1 }],
      ['info', 'launched nodeclaim', { NodeClaim: 'general-bcdfg', NodePool: 'general' }],
      ['warn', 'nodeclaim launch failed', { NodeClaim: 'gpu-hjklm', NodePool: 'gpu', error: 'InsufficientInstanceCapacity' }],
      ['info', 'pod unschedulable', { Pod: 'default/high-memory-report', reason: 'no NodePool defines the label node-type', nodePools: provisionReport.unschedulable[0]!.nodePools }],
    ]);
    expect(points.flat().map((p) => p.name)).toEqual([
      'karpenter_nodeclaims_created_total',
      'karpenter_cloudprovider_instance_launch_failures_total',
      'karpenter_scheduler_unschedulable_pods_count',
    ]);
    expect(decisions.published).toEqual([provisionDecisions(provisionReport)]);
  });

  it('the provisioner still succeeds when publishing decisions fails', async () => {
    const log = recordingLog();
    const handler = createProvisionerHandler({ provision: async () => provisionReport, log, decisions: recordingPublisher({ error: new Error('unreachable') }) });
    expect(await handler(sqsEvent())).toEqual({ batchItemFailures: [] });
    expect(log.lines.some(([level, message]) => level === 'warn' && message === 'decisions not published')).toBe(true);
  });

  it('the disruption handler logs started, expired and blocked disruptions, and publishes metrics and decisions', async () => {
    const log = recordingLog();
    const points: MetricDataPoint[][] = [];
    const decisions = recordingPublisher();
    const handler = createDisruptionHandler({ disrupt: async () => disruptionReport, log, metrics: { publish: (p) => void points.push([...p]) }, decisions });
    expect(await handler(scheduled)).toEqual({ report: disruptionReport });
    const messages = log.lines.map(([, message]) => message);
    expect(messages).toEqual(
      expect.arrayContaining(['disruption proposed', 'disruption started', 'nodeclaim expired', 'disrupted node deleted', 'disruption abandoned', 'disruption blocked', 'disruption blocked by budget', 'pods evicted']),
    );
    expect(points.flat().map((p) => p.name)).toContain('karpenter_voluntary_disruption_decisions_total');
    expect(decisions.published).toEqual([disruptionDecisions(disruptionReport)]);
  });

  it('the interruption handler publishes the decisions of the messages it handled, and succeeds when that fails', async () => {
    const decisions = recordingPublisher();
    const handler = createInterruptionHandler({ handle: async () => interruptionReport, log: recordingLog(), decisions });
    const response = await handler(sqsEvent(spotWarning as unknown as Record<string, unknown>));
    expect(response.batchItemFailures).toEqual([]);
    expect(decisions.published).toEqual([interruptionDecisions(interruptionReport)]);
    const log = recordingLog();
    const failing = createInterruptionHandler({ handle: async () => interruptionReport, log, decisions: recordingPublisher({ error: new Error('AccessDenied') }) });
    expect((await failing(sqsEvent(spotWarning as unknown as Record<string, unknown>))).batchItemFailures).toEqual([]);
    expect(log.lines.some(([level, message]) => level === 'warn' && message === 'decisions not published')).toBe(true);
  });

  it('the provisioner runs a lifecycle pass alongside provisioning when a batch has a relay node event', async () => {
    const lifecycleReport: LifecycleReport = { registered: ['general-bcdfg'], initialized: [], registrationTimeouts: [], instanceTerminated: [], nodeDeleted: [], terminating: [], nodeClaimDeleted: [], orphanInstances: [], deletedNodes: [], conflicts: 0, mirrored: [], mirrorsDeleted: [], mirrorFailures: [] };
    const log = recordingLog();
    const points: MetricDataPoint[][] = [];
    let lifecyclePasses = 0;
    let provisionPasses = 0;
    const handler = createProvisionerHandler({
      provision: async () => (provisionPasses++, provisionReport),
      log,
      metrics: { publish: (p) => void points.push([...p]) },
      lifecycle: async () => (lifecyclePasses++, { report: lifecycleReport }),
    });
    await handler(sqsEvent());
    expect(lifecyclePasses).toBe(0);
    const node = { kind: 'node', cluster: 'test', name: 'ip-10-0-1-2', uid: 'n1', resourceVersion: '3', event: 'ready' };
    expect(await handler(sqsEvent(node))).toEqual({ batchItemFailures: [] });
    expect(lifecyclePasses).toBe(1);
    expect(provisionPasses).toBe(2);
    expect(log.lines).toContainEqual(['info', 'lifecycle pass (node event)', { registered: ['general-bcdfg'], initialized: [] }]);
    expect(points.flat().map((p) => p.name)).toContain('karpenter_nodes_created_total');
  });

  it('the provisioner does not fail a batch when the node-triggered lifecycle pass fails', async () => {
    const log = recordingLog();
    const handler = createProvisionerHandler({
      provision: async () => provisionReport,
      log,
      lifecycle: async () => {
        throw new Error('API server unavailable');
      },
    });
    const node = { kind: 'node', cluster: 'test', name: 'ip-10-0-1-2', uid: 'n1', resourceVersion: '3', event: 'registered' };
    expect(await handler(sqsEvent(node))).toEqual({ batchItemFailures: [] });
    expect(log.lines).toContainEqual(['warn', 'lifecycle pass after a node event failed (the scheduled pass retries)', { error: 'API server unavailable' }]);
  });

  it('the lifecycle handler publishes its metrics', async () => {
    const report: LifecycleReport = {
      registered: ['general-bcdfg'],
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
    const points: MetricDataPoint[][] = [];
    const handler = createLifecycleHandler({ reconcile: async () => report, log: recordingLog(), metrics: { publish: (p) => void points.push([...p]) } });
    await handler(scheduled);
    expect(points.flat()).toEqual([{ name: 'karpenter_nodes_created_total', unit: 'Count', value: 1, dimensions: { nodepool: 'general' } }]);
  });
});
