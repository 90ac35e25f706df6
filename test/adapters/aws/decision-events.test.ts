import { EventBridgeClient, EventBridgeServiceException, PutEventsCommand, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  DECISION_SOURCE,
  EventBridgeDecisionPublisher,
  PUT_EVENTS_MAX_BYTES,
  decisionDetail,
  putEventsEntrySize,
} from '../../../shared/adapters/aws/decision-events.js';
import { CloudProviderError, ThrottledError } from '../../../shared/core/errors.js';
import type { Decision } from '../../../shared/ports/decisions.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

const events = mockClient(EventBridgeClient);
const NOW = new Date('2026-03-02T08:00:00Z');

/** The entries of every PutEvents call, in order. */
const calls = (): PutEventsRequestEntry[][] => events.commandCalls(PutEventsCommand).map((c) => c.args[0].input.Entries ?? []);
const launched = (i: number): Decision => ({ type: 'NodeClaimLaunched', nodeClaim: `general-b${String(i).padStart(4, 'c')}`, nodePool: 'general' });
const ok = (n: number) => ({ FailedEntryCount: 0, Entries: Array.from({ length: n }, (_, i) => ({ EventId: `e${i}` })) });

function publisher(sleeps: number[] = [], options: { maxAttempts?: number; eventBusName?: string } = {}): EventBridgeDecisionPublisher {
  return new EventBridgeDecisionPublisher({
    client: new EventBridgeClient({ region: 'eu-west-1', maxAttempts: 1 }),
    clusterName: 'prod',
    sleep: async (ms) => void sleeps.push(ms),
    random: () => 0.5,
    now: () => NOW,
    ...options,
  });
}

beforeEach(() => events.reset());

describe('EventBridgeDecisionPublisher', () => {
  describe('publish', () => {
    it('puts each decision as one entry: source skiff, detail-type the decision type, detail JSON with the cluster', async () => {
      events.on(PutEventsCommand).resolves(ok(2));
      const decisions: Decision[] = [
        { type: 'NodeClaimLaunchFailed', nodeClaim: 'general-bcdfg', nodePool: 'general', error: 'InsufficientInstanceCapacity' },
        { type: 'PodUnschedulable', pod: 'default/high-memory-report', reason: 'no NodePool defines the label node-type', nodePools: { general: 'the pod requires node-type In [high-memory]' } },
      ];
      const result = await publisher([], { eventBusName: 'skiff-prod' }).publish(decisions);
      expect(result).toEqual({ published: 2, failed: [] });
      expect(calls()).toEqual([
        [
          {
            Source: 'skiff',
            DetailType: 'NodeClaimLaunchFailed',
            Detail: '{"cluster":"prod","nodeClaim":"general-bcdfg","nodePool":"general","error":"InsufficientInstanceCapacity"}',
            Time: NOW,
            EventBusName: 'skiff-prod',
          },
          {
            Source: 'skiff',
            DetailType: 'PodUnschedulable',
            Detail: JSON.stringify({ cluster: 'prod', pod: 'default/high-memory-report', reason: 'no NodePool defines the label node-type', nodePools: { general: 'the pod requires node-type In [high-memory]' } }),
            Time: NOW,
            EventBusName: 'skiff-prod',
          },
        ],
      ]);
      expect(DECISION_SOURCE).toBe('skiff');
    });

    it('sends at most 10 entries per request, in order', async () => {
      events.on(PutEventsCommand).callsFake((input: { Entries: unknown[] }) => ok(input.Entries.length));
      const result = await publisher().publish(Array.from({ length: 23 }, (_, i) => launched(i)));
      expect(calls().map((c) => c.length)).toEqual([10, 10, 3]);
      expect(calls().flat().map((e) => JSON.parse(e.Detail!).nodeClaim)).toEqual(Array.from({ length: 23 }, (_, i) => launched(i)).map((d) => (d as { nodeClaim: string }).nodeClaim));
      expect(result.published).toBe(23);
    });

    it('makes no call for no decisions', async () => {
      expect(await publisher().publish([])).toEqual({ published: 0, failed: [] });
      expect(calls()).toEqual([]);
    });

    it('sends only the entries that failed retryably again, after a jittered backoff (partial failure)', async () => {
      events
        .on(PutEventsCommand)
        .resolvesOnce({
          FailedEntryCount: 2,
          Entries: [{ EventId: 'a' }, { ErrorCode: 'InternalFailure', ErrorMessage: 'try again' }, { EventId: 'c' }, { ErrorCode: 'ThrottlingException', ErrorMessage: 'slow down' }],
        })
        .resolvesOnce(ok(2));
      const sleeps: number[] = [];
      const result = await publisher(sleeps).publish([launched(0), launched(1), launched(2), launched(3)]);
      expect(calls().map((c) => c.map((e) => JSON.parse(e.Detail!).nodeClaim))).toEqual([
        ['general-bccc0', 'general-bccc1', 'general-bccc2', 'general-bccc3'],
        ['general-bccc1', 'general-bccc3'],
      ]);
      expect(sleeps).toEqual([50]); // random 0.5 × base 100 ms
      expect(result).toEqual({ published: 4, failed: [] });
    });

    it('gives up on an entry the service rejects (MalformedDetail) without retrying it, and returns it', async () => {
      events.on(PutEventsCommand).resolves({ FailedEntryCount: 1, Entries: [{ EventId: 'a' }, { ErrorCode: 'MalformedDetail', ErrorMessage: 'Detail is malformed.' }] });
      const result = await publisher().publish([launched(0), launched(1)]);
      expect(calls()).toHaveLength(1);
      expect(result).toEqual({ published: 1, failed: [{ decision: launched(1), errorCode: 'MalformedDetail', errorMessage: 'Detail is malformed.' }] });
    });

    it('returns the entries still failing after maxAttempts, having tried every request', async () => {
      events.on(PutEventsCommand).callsFake((input: { Entries: unknown[] }) => ({
        FailedEntryCount: 1,
        Entries: input.Entries.map((_, i) => (i === 0 ? { ErrorCode: 'InternalFailure', ErrorMessage: 'down' } : { EventId: `e${i}` })),
      }));
      const sleeps: number[] = [];
      const result = await publisher(sleeps, { maxAttempts: 3 }).publish(Array.from({ length: 12 }, (_, i) => launched(i)));
      // request 1 (10 entries): entry 0 fails three times; request 2 (2 entries): entry 10 fails three times
      expect(calls().map((c) => c.length)).toEqual([10, 1, 1, 2, 1, 1]);
      expect(sleeps).toEqual([50, 100, 50, 100]);
      expect(result.published).toBe(10);
      expect(result.failed.map((f) => [(f.decision as { nodeClaim: string }).nodeClaim, f.errorCode])).toEqual([
        ['general-bccc0', 'InternalFailure'],
        ['general-bcc10', 'InternalFailure'],
      ]);
    });

    it('counts a missing result entry as an internal failure and retries it', async () => {
      events.on(PutEventsCommand).resolvesOnce({ FailedEntryCount: 0, Entries: [{ EventId: 'a' }] }).resolvesOnce(ok(1));
      const result = await publisher().publish([launched(0), launched(1)]);
      expect(calls().map((c) => c.length)).toEqual([2, 1]);
      expect(result.failed).toEqual([]);
    });

    it('translates a throttled call into ThrottledError and any other failed call into CloudProviderError', async () => {
      events.on(PutEventsCommand).rejectsOnce(new EventBridgeServiceException({ name: 'ThrottlingException', $fault: 'client', $metadata: { httpStatusCode: 400 }, message: 'Rate exceeded' }));
      await expect(publisher().publish([launched(0)])).rejects.toBeInstanceOf(ThrottledError);
      events.reset();
      events.on(PutEventsCommand).rejectsOnce(new EventBridgeServiceException({ name: 'AccessDeniedException', $fault: 'client', $metadata: { httpStatusCode: 400 }, message: 'no' }));
      const error = await publisher().publish([launched(0)]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CloudProviderError);
      expect((error as CloudProviderError).code).toBe('AccessDeniedException');
    });

    it('rejects a maxAttempts that is not a positive integer', () => {
      expect(() => publisher([], { maxAttempts: 0 })).toThrow(RangeError);
    });
  });

  describe('request size', () => {
    it('starts a new request before the entries of one would reach 256 KiB', async () => {
      events.on(PutEventsCommand).callsFake((input: { Entries: unknown[] }) => ok(input.Entries.length));
      const big = (i: number): Decision => ({ type: 'DisruptionBlocked', nodePool: `pool-${i}`, reason: 'x'.repeat(100 * 1024) });
      await publisher().publish([big(0), big(1), big(2), big(3)]);
      expect(calls().map((c) => c.length)).toEqual([2, 2]);
      for (const c of calls()) expect(c.reduce((n, e) => n + putEventsEntrySize(e), 0)).toBeLessThan(PUT_EVENTS_MAX_BYTES);
    });

    it('counts an entry as AWS documents: 14 bytes for Time, then Source, DetailType and Detail in UTF-8', () => {
      expect(putEventsEntrySize({ Time: NOW, Source: 'skiff', DetailType: 'X', Detail: '{"a":"é"}' })).toBe(14 + 5 + 1 + 10);
    });

    it('keeps the first NodePools’ reasons of a PodUnschedulable too large for one entry, and says how many it left out', () => {
      const nodePools = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`pool-${String(i).padStart(2, '0')}`, 'r'.repeat(10 * 1024)]));
      const detail = JSON.parse(decisionDetail({ type: 'PodUnschedulable', pod: 'default/p', reason: 'no NodePool fits', nodePools }, 'prod'));
      expect(Buffer.byteLength(JSON.stringify(detail))).toBeLessThan(PUT_EVENTS_MAX_BYTES);
      const kept = Object.keys(detail.nodePools);
      expect(kept[0]).toBe('pool-00');
      expect(kept.length + detail.nodePoolsOmitted).toBe(50);
      expect(detail.nodePoolsOmitted).toBeGreaterThan(0);
      expect(detail).toMatchObject({ cluster: 'prod', pod: 'default/p', reason: 'no NodePool fits' });
    });
  });
});
