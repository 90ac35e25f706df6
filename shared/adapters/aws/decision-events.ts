/**
 * Skiff's decisions on an Amazon EventBridge bus (the decisions port, `shared/ports/decisions.ts`), with `PutEvents`.
 *
 * - Each decision is one entry: `Source` {@link DECISION_SOURCE} (`skiff`), `DetailType` the decision's type
 *   (`NodeClaimLaunched`, `NodeClaimLaunchFailed`, `PodUnschedulable`, `DisruptionProposed`, `DisruptionStarted`,
 *   `NodeClaimExpired`, `DisruptionBlocked`, `DisruptionCompleted`), `Detail` the decision's fields plus `cluster`, as
 *   JSON. A rule matches e.g. `{"source": ["skiff"], "detail-type": ["PodUnschedulable"], "detail": {"cluster": ["prod"]}}`.
 * - Entries go out in requests of at most {@link PUT_EVENTS_MAX_ENTRIES} (10, the PutEvents limit) whose total entry
 *   size stays under {@link PUT_EVENTS_MAX_BYTES} (256 KiB, computed as AWS documents it: "Calculating PutEvents event
 *   entry size", EventBridge user guide). A `PodUnschedulable` detail too large on its own keeps the first
 *   NodePools' reasons and says how many it left out (`nodePoolsOmitted`).
 * - PutEvents answers per entry (`FailedEntryCount`, `Entries[i].ErrorCode`, in request order). Entries that failed on
 *   the service's side or were throttled (`InternalFailure`, `ThrottlingException`, …) are sent again, up to
 *   `maxAttempts` in all, after an exponential backoff with full jitter; others (`MalformedDetail`, access errors)
 *   are given up on at once and returned as failed. A repeated entry may be delivered twice: EventBridge is
 *   at-least-once anyway, so consumers dedupe on the detail.
 * - A failed call as a whole (network, throttling, access denied) was already retried by the SDK (standard retry
 *   mode); it leaves as {@link ThrottledError} or {@link CloudProviderError} (`sdk-errors.ts`).
 */
import { PutEventsCommand, type EventBridgeClient, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import type { Decision, DecisionPublisher, PublishDecisionsResult, UnpublishedDecision } from '../../ports/decisions.js';
import { DECISION_EVENT_SOURCE } from './iam-actions.js';
import { awsError, THROTTLING_CODES } from './sdk-errors.js';

/** The `source` of every Skiff decision event (the stack's IAM grant allows only this one). */
export const DECISION_SOURCE = DECISION_EVENT_SOURCE;
/** Most entries in one PutEvents request (EventBridge quota). */
export const PUT_EVENTS_MAX_ENTRIES = 10;
/** Largest total entry size of one PutEvents request, bytes ("The total entry size must be less than 256KB"). */
export const PUT_EVENTS_MAX_BYTES = 256 * 1024;
/** Entry error codes worth retrying (the service's fault or throttling). */
export const RETRYABLE_ENTRY_CODES: ReadonlySet<string> = new Set(['InternalFailure', 'InternalException', 'ServiceUnavailable', ...THROTTLING_CODES]);

/** Options of {@link EventBridgeDecisionPublisher}. */
export interface EventBridgeDecisionPublisherOptions {
  readonly client: EventBridgeClient;
  /** The bus name or ARN. @default the account's `default` bus */
  readonly eventBusName?: string;
  /** The EKS cluster name, added to every detail as `cluster`. */
  readonly clusterName: string;
  /** Attempts per entry, the first included. @default 3 */
  readonly maxAttempts?: number;
  /** Backoff before the second attempt, ms; doubles each attempt, full jitter. @default 100 */
  readonly baseDelayMs?: number;
  /** Longest backoff, ms. @default 2000 */
  readonly maxDelayMs?: number;
  /** Waits `ms` milliseconds. @default a `setTimeout` promise */
  readonly sleep?: (ms: number) => Promise<void>;
  /** A number in [0, 1) for the jitter. @default Math.random */
  readonly random?: () => number;
  /** The events' time. @default the current time */
  readonly now?: () => Date;
}

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** UTF-8 byte length. */
const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/** An entry's size as EventBridge counts it: 14 for `Time`, then Source, DetailType, Detail and Resources in UTF-8. */
export function putEventsEntrySize(entry: PutEventsRequestEntry): number {
  return (
    (entry.Time ? 14 : 0) + bytes(entry.Source ?? '') + bytes(entry.DetailType ?? '') + bytes(entry.Detail ?? '') + (entry.Resources ?? []).reduce((n, r) => n + bytes(r), 0)
  );
}

/**
 * The detail JSON of a decision: its fields (without `type`, which is the detail-type) and `cluster`. A
 * `PodUnschedulable` detail over `maxBytes` keeps as many NodePools' reasons as fit, in name order, and adds
 * `nodePoolsOmitted`.
 */
export function decisionDetail(decision: Decision, cluster: string, maxBytes = PUT_EVENTS_MAX_BYTES - 1024): string {
  const { type: _type, ...fields } = decision;
  const detail = JSON.stringify({ cluster, ...fields });
  if (decision.type !== 'PodUnschedulable' || bytes(detail) <= maxBytes) return detail;
  const kept: Record<string, string> = {};
  const names = Object.keys(decision.nodePools).sort();
  let omitted = names.length;
  for (const name of names) {
    const next = { ...kept, [name]: decision.nodePools[name] ?? '' };
    const text = JSON.stringify({ cluster, ...fields, nodePools: next, nodePoolsOmitted: omitted - 1 });
    if (bytes(text) > maxBytes) break;
    kept[name] = decision.nodePools[name] ?? '';
    omitted--;
  }
  const reason = bytes(decision.reason) > maxBytes / 2 ? `${decision.reason.slice(0, Math.floor(maxBytes / 8))}…` : decision.reason;
  return JSON.stringify({ cluster, ...fields, reason, nodePools: kept, nodePoolsOmitted: omitted });
}

/**
 * Publishes decisions to EventBridge.
 * @example
 * const decisions = new EventBridgeDecisionPublisher({ client: new EventBridgeClient({}), clusterName: 'prod' });
 * await decisions.publish(provisionDecisions(report));
 */
export class EventBridgeDecisionPublisher implements DecisionPublisher {
  readonly #client: EventBridgeClient;
  readonly #eventBusName: string | undefined;
  readonly #cluster: string;
  readonly #maxAttempts: number;
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #random: () => number;
  readonly #now: () => Date;

  /** @throws {RangeError} when `maxAttempts` is not a positive integer */
  constructor(options: EventBridgeDecisionPublisherOptions) {
    const maxAttempts = options.maxAttempts ?? 3;
    if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw new RangeError(`maxAttempts must be a positive integer, got ${maxAttempts}`);
    this.#client = options.client;
    this.#eventBusName = options.eventBusName;
    this.#cluster = options.clusterName;
    this.#maxAttempts = maxAttempts;
    this.#baseDelayMs = options.baseDelayMs ?? 100;
    this.#maxDelayMs = options.maxDelayMs ?? 2000;
    this.#sleep = options.sleep ?? defaultSleep;
    this.#random = options.random ?? Math.random;
    this.#now = options.now ?? (() => new Date());
  }

  /**
   * Puts the decisions on the bus in order, in requests of at most 10 entries and 256 KiB.
   * @returns how many were accepted, and the ones given up on with the service's error code
   * @throws {ThrottledError} when a call was throttled past the SDK's retries · {CloudProviderError} when it failed
   */
  async publish(decisions: readonly Decision[]): Promise<PublishDecisionsResult> {
    const time = this.#now();
    const entries = decisions.map((decision) => ({
      decision,
      entry: {
        Source: DECISION_SOURCE,
        DetailType: decision.type,
        Detail: decisionDetail(decision, this.#cluster),
        Time: time,
        ...(this.#eventBusName !== undefined ? { EventBusName: this.#eventBusName } : {}),
      } satisfies PutEventsRequestEntry,
    }));
    const failed: UnpublishedDecision[] = [];
    for (const chunk of chunks(entries)) failed.push(...(await this.#putChunk(chunk)));
    return { published: decisions.length - failed.length, failed };
  }

  /** Sends one request's entries; returns those still failed after the retries. */
  async #putChunk(chunk: readonly { decision: Decision; entry: PutEventsRequestEntry }[]): Promise<UnpublishedDecision[]> {
    let pending: readonly { decision: Decision; entry: PutEventsRequestEntry }[] = chunk;
    const final: UnpublishedDecision[] = [];
    for (let attempt = 1; pending.length > 0; attempt++) {
      let results;
      try {
        const response = await this.#client.send(new PutEventsCommand({ Entries: pending.map((p) => p.entry) }));
        results = response?.Entries ?? [];
      } catch (e) {
        throw awsError(e, `PutEvents of ${pending.length} decision(s) to ${this.#eventBusName ?? 'the default event bus'}`);
      }
      const retry: { decision: Decision; entry: PutEventsRequestEntry }[] = [];
      pending.forEach((p, i) => {
        const result = results[i];
        // The response has one entry per request entry, in order; a missing one counts as an internal failure.
        const code = result === undefined ? 'InternalFailure' : result.ErrorCode;
        if (code === undefined || code === '') return;
        if (RETRYABLE_ENTRY_CODES.has(code) && attempt < this.#maxAttempts) retry.push(p);
        else final.push({ decision: p.decision, errorCode: code, errorMessage: result?.ErrorMessage ?? 'no result for this entry' });
      });
      pending = retry;
      if (pending.length > 0) await this.#sleep(this.#backoffMs(attempt));
    }
    return final;
  }

  /** Full-jitter exponential backoff after attempt `attempt` (1-based), ms. */
  #backoffMs(attempt: number): number {
    return Math.floor(this.#random() * Math.min(this.#maxDelayMs, this.#baseDelayMs * 2 ** (attempt - 1)));
  }
}

/** Splits entries into requests of at most 10 entries and {@link PUT_EVENTS_MAX_BYTES} in total, keeping order. */
function chunks<T extends { entry: PutEventsRequestEntry }>(entries: readonly T[]): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let size = 0;
  for (const e of entries) {
    const s = putEventsEntrySize(e.entry);
    if (current.length > 0 && (current.length === PUT_EVENTS_MAX_ENTRIES || size + s >= PUT_EVENTS_MAX_BYTES)) {
      out.push(current);
      current = [];
      size = 0;
    }
    current.push(e);
    size += s;
  }
  if (current.length > 0) out.push(current);
  return out;
}
