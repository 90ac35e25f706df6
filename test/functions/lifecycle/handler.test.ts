import type { ScheduledEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createHandler, type LifecycleEvent, type NodeEvent } from '../../../functions/lifecycle/handler.js';
import type { LifecycleReport } from '../../../shared/controllers/lifecycle.js';
import type { Log } from '../../../shared/lambda/log.js';

const EMPTY: LifecycleReport = { registered: [], initialized: [], registrationTimeouts: [], instanceTerminated: [], nodeDeleted: [], orphanInstances: [], deletedNodes: [], conflicts: 0 };

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

  describe('a failing pass', () => {
    it('throws, so Lambda retries (the next scheduled run would too)', async () => {
      const { handler } = setup(() => Promise.reject(new Error('DynamoDB is down')));
      await expect(handler(scheduled)).rejects.toThrow('DynamoDB is down');
    });
  });
});
