import type { SQSEvent, SQSRecord, ScheduledEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createHandler as createDisruptionHandler } from '../../functions/disruption/handler.js';
import { createHandler as createLifecycleHandler } from '../../functions/lifecycle/handler.js';
import { createHandler as createProvisionerHandler } from '../../functions/provisioner/handler.js';
import type { DisruptionReport } from '../../shared/controllers/disruption.js';
import type { LifecycleReport } from '../../shared/controllers/lifecycle.js';
import type { ProvisionReport } from '../../shared/controllers/provision.js';
import type { MetricDataPoint } from '../../shared/core/metrics.js';
import { disruptionDecisions, provisionDecisions, publishDecisions } from '../../shared/lambda/decisions.js';
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

function sqsEvent(): SQSEvent {
  const body = JSON.stringify({ kind: 'pod', cluster: 'test', namespace: 'default', name: 'web-1', uid: 'u1', resourceVersion: '1' });
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

  describe('publishDecisions', () => {
    it('does nothing without a publisher or without decisions', async () => {
      const log = recordingLog();
      await publishDecisions(undefined, provisionDecisions(provisionReport), log);
      const publisher = recordingPublisher();
      await publishDecisions(publisher, [], log);
      expect(publisher.published).toEqual([]);
      expect(log.lines).toEqual([]);
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

  it('the lifecycle handler publishes its metrics', async () => {
    const report: LifecycleReport = {
      registered: ['general-bcdfg'],
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
    const points: MetricDataPoint[][] = [];
    const handler = createLifecycleHandler({ reconcile: async () => report, log: recordingLog(), metrics: { publish: (p) => void points.push([...p]) } });
    await handler(scheduled);
    expect(points.flat()).toEqual([{ name: 'karpenter_nodes_created_total', unit: 'Count', value: 1, dimensions: { nodepool: 'general' } }]);
  });
});
