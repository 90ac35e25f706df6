/**
 * The lifecycle Lambda: an EventBridge schedule (every minute) runs one lifecycle pass — registration,
 * initialization, the registration timeout and garbage collection. The relay may also invoke it with a node event
 * (a Node registered, turned Ready or NotReady, or was deleted) so a new node is registered at once instead of at
 * the next minute.
 *
 * The event is a trigger, not an instruction: the controller reads the current state, so a duplicate, late or
 * overlapping invocation is harmless. An event that is neither is logged and dropped (retrying it would not help).
 * A failing pass throws, so Lambda's asynchronous retry (and the next scheduled run) tries again.
 */
import middy from '@middy/core';
import type { ScheduledEvent } from 'aws-lambda';
import { z } from 'zod';
import { PodEventSchema, type PodEvent } from '../../shared/core/api/pod-event.js';
import type { LifecycleReport } from '../../shared/controllers/lifecycle.js';
import type { Log } from '../../shared/lambda/log.js';

/** What the handler needs: one lifecycle pass, and a log. */
export interface LifecycleHandlerDeps {
  /** Runs the lifecycle controller once (the composition root binds its ports). */
  readonly reconcile: () => Promise<LifecycleReport>;
  readonly log: Log;
}

/** A relay node event (`kind: node`). */
export type NodeEvent = Extract<PodEvent, { kind: 'node' }>;

/** What the lifecycle Lambda may be invoked with. */
export type LifecycleEvent = ScheduledEvent | NodeEvent;

/** What one invocation did: which trigger it recognised and, unless it dropped the event, the pass's report. */
export interface LifecycleHandlerResult {
  readonly trigger: 'schedule' | 'node' | 'ignored';
  readonly report?: LifecycleReport;
}

/** The EventBridge scheduled event fields the handler checks. */
const ScheduledEventSchema = z.looseObject({ source: z.literal('aws.events'), 'detail-type': z.literal('Scheduled Event') });

/**
 * Builds the handler: a middy chain that recognises the trigger, runs one pass and logs its report.
 * @example
 * export const handler = createHandler({ reconcile: () => reconcileLifecycle(deps), log });
 */
export function createHandler(deps: LifecycleHandlerDeps): (event: LifecycleEvent, context?: unknown) => Promise<LifecycleHandlerResult> {
  const run = async (event: unknown): Promise<LifecycleHandlerResult> => {
    const trigger = triggerOf(event);
    if (trigger === 'ignored') {
      deps.log.error('dropping lifecycle invocation: neither an EventBridge scheduled event nor a relay node event', { keys: event && typeof event === 'object' ? Object.keys(event) : typeof event });
      return { trigger };
    }
    const report = await deps.reconcile();
    const acted = Object.values(report).some((v) => Array.isArray(v) && v.length > 0);
    if (acted) deps.log.info('lifecycle pass', { trigger, ...report });
    else deps.log.debug('lifecycle pass: nothing to do', { trigger, conflicts: report.conflicts });
    return { trigger, report };
  };
  const handler = middy<LifecycleEvent, LifecycleHandlerResult>().handler(run as (event: LifecycleEvent) => Promise<LifecycleHandlerResult>);
  return (event, context) => handler(event, (context ?? {}) as never);
}

function triggerOf(event: unknown): LifecycleHandlerResult['trigger'] {
  if (ScheduledEventSchema.safeParse(event).success) return 'schedule';
  const relay = PodEventSchema.safeParse(event);
  if (relay.success && relay.data.kind === 'node') return 'node';
  return 'ignored';
}
