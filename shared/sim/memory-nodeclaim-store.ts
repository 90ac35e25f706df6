/**
 * An in-memory NodeClaimStore for controller tests: the DynamoDB adapter's semantics
 * (`shared/adapters/aws/dynamodb-nodeclaim-store.ts`) without DynamoDB, plus call recording and fault injection —
 * the fake-over-mock seam every port gets (docs/architecture.md#testing-seams; Karpenter's
 * `pkg/cloudprovider/fake/cloudprovider.go` records calls and takes the next error the same way).
 * `test/support/nodeclaim-store-contract.ts` runs one suite against both, so the two cannot drift apart.
 *
 * Same as the adapter:
 * - `create` writes version 1 on condition that no record of the name exists; `update` writes `version + 1` on
 *   condition that the stored version equals the argument's; a failed condition is a {@link ConflictError} with the
 *   adapter's message and key (`CLUSTER#<cluster>/NODECLAIM#<name>`) and leaves the record unchanged; an update of a
 *   missing record is a conflict and creates nothing.
 * - Records are plain data, stored and returned as deep copies without `undefined` (object properties and array
 *   elements set to `undefined` are dropped, as the adapter's marshalling drops them), so a write's return value
 *   equals what a later read returns and no caller can change the store through an object it holds.
 * - `get` of a missing name is `undefined`; `list` is every record, deleted and failed ones included, in name order
 *   (UTF-16 code units, as `<` compares); `findByInstanceId` is the first record by name whose `instanceId` matches.
 *
 * Not modelled: the byInstanceId index's eventual consistency (an instance id is found as soon as it is written),
 * DynamoDB's item size limit, and the SDK errors (a failure is whatever error a fault injects).
 *
 * Each call takes effect after one turn of the microtask queue (`await`), atomically, so calls issued concurrently
 * interleave the way requests to DynamoDB do: of ten concurrent updates of one version exactly one wins.
 */
import type { NodeClaim } from '../core/api/nodeclaim.js';
import { ConflictError, ThrottledError } from '../core/errors.js';
import type { NodeClaimStore } from '../ports/nodeclaim-store.js';

/** A method of the {@link NodeClaimStore} port. */
export type NodeClaimStoreOperation = 'create' | 'get' | 'update' | 'list' | 'findByInstanceId';

/** Every {@link NodeClaimStoreOperation}, in the port's order. */
export const NODECLAIM_STORE_OPERATIONS: readonly NodeClaimStoreOperation[] = ['create', 'get', 'update', 'list', 'findByInstanceId'];

/** One call as it arrives at the store: what a fault's predicate sees. */
export interface NodeClaimStoreRequest {
  readonly operation: NodeClaimStoreOperation;
  /** The NodeClaim name (`create`, `get`, `update`), the instance id (`findByInstanceId`); undefined for `list`. */
  readonly subject?: string;
  /** `update`: the version the caller read (the condition). */
  readonly expectedVersion?: number;
  /** `create` and `update`: a copy of the record the caller asked to write. */
  readonly claim?: Readonly<NodeClaim> | Readonly<Omit<NodeClaim, 'version'>>;
}

/**
 * How a call ended: `ok` (a write applied, or a read that found something — a `list` is always `ok`), `missing`
 * (`get` or `findByInstanceId` found nothing), `conflict` (a write's condition failed: nothing changed), `failed`
 * (an injected fault threw; see {@link NodeClaimStoreCall.written}).
 */
export type NodeClaimStoreOutcome = 'ok' | 'missing' | 'conflict' | 'failed';

/** One recorded call. */
export interface NodeClaimStoreCall extends NodeClaimStoreRequest {
  readonly outcome: NodeClaimStoreOutcome;
  /**
   * Whether the call changed the store: true for a successful write and for a write whose fault struck after it took
   * effect (`timing: 'after'`, a crash after the write or a lost response).
   */
  readonly written: boolean;
  /** The record's version after a write, or as read by `get`/`findByInstanceId`; undefined otherwise. */
  readonly version?: number;
  /** The error the call threw (the conflict, or the injected error). */
  readonly error?: unknown;
}

/** When an injected fault strikes. */
export type FaultTiming = 'before' | 'after';

/** The error an injected fault throws: an error, or a function of the struck request that returns one. */
export type FaultError = Error | ((request: NodeClaimStoreRequest) => Error);

/** A fault to inject with {@link MemoryNodeClaimStore.inject}. */
export interface NodeClaimStoreFault {
  /**
   * The operations it applies to.
   * @default every operation
   */
  readonly operation?: NodeClaimStoreOperation | readonly NodeClaimStoreOperation[];
  /**
   * Only calls for which this returns true (asked for calls of a matching operation only, in call order; should not
   * have side effects — use {@link interpose} for that).
   * @default every call
   */
  readonly when?: (request: NodeClaimStoreRequest) => boolean;
  /**
   * How many matching calls it strikes, then it is spent. `Infinity` strikes every matching call until
   * {@link MemoryNodeClaimStore.clearFaults}.
   * @default 1
   */
  readonly times?: number;
  /**
   * `before`: the call fails without touching the store (throttling, an unreachable table, a conflict the caller
   * must handle). `after`: the call takes effect, then fails — a crash right after the write succeeded (use
   * `SimulatedCrash` from `faults.ts`) or a response lost on the way back. A write whose condition fails throws its
   * {@link ConflictError} instead (nothing was written to fail after); the strike is spent all the same.
   * @default 'before'
   */
  readonly timing?: FaultTiming;
  /**
   * The error the call throws (or a function of the request that returns it), e.g.
   * {@link throttledError}, a {@link ConflictError}, a `SimulatedCrash`. Without it (and with {@link interpose}) the
   * call proceeds normally after the interposed action.
   */
  readonly error?: FaultError;
  /**
   * Runs just before the struck call takes effect, against the store itself, e.g. a rival writer's `update` landing
   * between a controller's read and its write (so the call meets a real version conflict). Calls it makes are recorded
   * and may be struck by other faults; while it runs, this fault strikes no call.
   */
  readonly interpose?: (store: MemoryNodeClaimStore, request: NodeClaimStoreRequest) => void | Promise<void>;
}

/** An injected fault, as {@link MemoryNodeClaimStore.inject} returns it. */
export interface InjectedFault {
  /** Matching calls it will still strike (`Infinity` for an unlimited fault). */
  readonly remaining: number;
  /** How many calls it struck so far. */
  readonly struck: number;
  /** Withdraws it (it strikes no further call). */
  cancel(): void;
}

/** Options of {@link MemoryNodeClaimStore}. */
export interface MemoryNodeClaimStoreOptions {
  /**
   * The EKS cluster name the adapter would partition by; it only appears in the key of a {@link ConflictError}
   * (`CLUSTER#<cluster>/NODECLAIM#<name>`, as the adapter's `formatKey`).
   * @default 'test'
   */
  readonly cluster?: string;
  /** Records present from the start (stored as given, versions included; not recorded as calls). */
  readonly records?: readonly NodeClaim[];
}

/** The DynamoDB operation behind each port method (as the adapter and `FaultInjector.store` name them). */
const DYNAMODB_OPERATION: Readonly<Record<NodeClaimStoreOperation, string>> = {
  create: 'PutItem',
  update: 'PutItem',
  get: 'GetItem',
  list: 'Query',
  findByInstanceId: 'Query',
};

/**
 * The error the DynamoDB adapter raises when throttling outlived the SDK's retries (`ThrottledError`, see the
 * adapter's `storeError`), for the call `request`: a ready-made {@link NodeClaimStoreFault.error}.
 * @example
 * store.inject({ operation: 'update', error: throttledError });
 */
export function throttledError(request: NodeClaimStoreRequest): ThrottledError {
  const key = request.subject !== undefined && request.operation !== 'findByInstanceId' ? ` ${request.subject}` : '';
  return new ThrottledError(`DynamoDB ${DYNAMODB_OPERATION[request.operation]}${key} throttled: ProvisionedThroughputExceededException (simulated)`);
}

interface ActiveFault {
  readonly operations: ReadonlySet<NodeClaimStoreOperation>;
  readonly fault: NodeClaimStoreFault;
  remaining: number;
  struck: number;
  /** True while its interpose runs (it strikes nothing then). */
  interposing: boolean;
}

/**
 * {@link NodeClaimStore} in memory, with the DynamoDB adapter's semantics (see the module comment), every call
 * recorded in {@link calls}, and faults injected with {@link inject}.
 * @example
 * const store = new MemoryNodeClaimStore();
 * const v1 = await store.create(aPendingClaim);                        // version 1
 * store.inject({ operation: 'update', times: 2, error: throttledError });
 * await expect(store.update({ ...v1, state: 'Launched' })).rejects.toBeInstanceOf(ThrottledError);
 * expect(store.calls.map((c) => [c.operation, c.outcome])).toEqual([['create', 'ok'], ['update', 'failed']]);
 */
export class MemoryNodeClaimStore implements NodeClaimStore {
  readonly #cluster: string;
  readonly #records = new Map<string, NodeClaim>();
  readonly #calls: NodeClaimStoreCall[] = [];
  readonly #faults: ActiveFault[] = [];

  /** @param options cluster name for conflict keys, and records to start with */
  constructor(options: MemoryNodeClaimStoreOptions = {}) {
    this.#cluster = options.cluster ?? 'test';
    for (const record of options.records ?? []) this.#records.set(record.name, copy(record));
  }

  /**
   * Writes the record with `version` 1, on condition that no record of that name exists. Fields set to `undefined`
   * are left out; any `version` on the argument is ignored.
   * @returns the stored record (a copy), equal to what {@link get} returns
   * @throws {ConflictError} when a record with the same name exists (the record is unchanged)
   * @throws whatever an injected fault throws
   */
  create(claim: Omit<NodeClaim, 'version'>): Promise<NodeClaim> {
    const record = copy<NodeClaim>({ ...claim, version: 1 }, false);
    return this.#call<NodeClaim>({ operation: 'create', subject: record.name, claim: copy(claim, false) }, () => {
      if (this.#records.has(record.name)) return { conflict: this.#conflict(record.name, `NodeClaim ${record.name} already exists`) };
      this.#records.set(record.name, copy(record));
      return { value: record, written: true, version: 1 };
    });
  }

  /**
   * The record (a copy), or undefined.
   * @throws whatever an injected fault throws
   */
  get(name: string): Promise<NodeClaim | undefined> {
    return this.#call({ operation: 'get', subject: name }, () => this.#found(this.#records.get(name)));
  }

  /**
   * Replaces the record with `claim` and `version + 1`, on condition that the stored `version` equals
   * `claim.version`. Fields set to `undefined` are removed from the record.
   * @returns the stored record (a copy), equal to what {@link get} returns
   * @throws {ConflictError} when the record changed since it was read, or does not exist; the record is unchanged
   * @throws whatever an injected fault throws
   */
  update(claim: NodeClaim): Promise<NodeClaim> {
    const record = copy<NodeClaim>({ ...claim, version: claim.version + 1 }, false);
    return this.#call<NodeClaim>({ operation: 'update', subject: record.name, expectedVersion: claim.version, claim: copy(claim, false) }, () => {
      if (this.#records.get(record.name)?.version !== claim.version) {
        return { conflict: this.#conflict(record.name, `NodeClaim ${record.name} is not at version ${claim.version} (changed since read, or deleted)`) };
      }
      this.#records.set(record.name, copy(record));
      return { value: record, written: true, version: record.version };
    });
  }

  /**
   * Every record, deleted and failed ones included, sorted by name (UTF-16 code-unit order), as copies.
   * @throws whatever an injected fault throws
   */
  list(): Promise<NodeClaim[]> {
    return this.#call({ operation: 'list' }, () => ({ value: this.#sorted().map((c) => copy(c)), written: false }));
  }

  /**
   * The record whose `instanceId` is `instanceId` (the first by name should two carry it), as a copy, or undefined.
   * @param instanceId EC2 instance id, e.g. `i-0123456789abcdef0`
   * @throws whatever an injected fault throws
   */
  findByInstanceId(instanceId: string): Promise<NodeClaim | undefined> {
    return this.#call({ operation: 'findByInstanceId', subject: instanceId }, () => this.#found(this.#sorted().find((c) => c.instanceId === instanceId)));
  }

  /**
   * Every call so far, in the order they took effect (a copy: later calls do not change it). A fault's `interpose`
   * calls come before the call they were interposed on.
   */
  get calls(): readonly NodeClaimStoreCall[] {
    return [...this.#calls];
  }

  /**
   * The recorded calls of one operation, optionally only those about one subject (NodeClaim name or instance id).
   * @example
   * expect(store.callsOf('update', 'general-a').map((c) => c.outcome)).toEqual(['conflict', 'ok']);
   */
  callsOf(operation: NodeClaimStoreOperation, subject?: string): NodeClaimStoreCall[] {
    return this.#calls.filter((c) => c.operation === operation && (subject === undefined || c.subject === subject));
  }

  /** Forgets the recorded calls (records and faults stay), e.g. after a test's setup. */
  resetCalls(): void {
    this.#calls.length = 0;
  }

  /**
   * Makes matching calls fail (or lets something happen just before them); faults are consulted in the order they
   * were injected, and the first matching one with strikes left strikes the call.
   * @returns a handle to read how often it struck and to cancel it
   * @throws {RangeError} when `times` is not a positive whole number or `Infinity`, or when neither `error` nor
   *   `interpose` is given
   * @example
   * // The next update of general-a is throttled; the one after that succeeds.
   * store.inject({ operation: 'update', when: (r) => r.subject === 'general-a', error: throttledError });
   * // The create succeeds, then the invocation dies (it never learns the write happened).
   * store.inject({ operation: 'create', timing: 'after', error: (r) => new SimulatedCrash(`store.create(${r.subject})`) });
   */
  inject(fault: NodeClaimStoreFault): InjectedFault {
    const times = fault.times ?? 1;
    if (!(times === Infinity || (Number.isInteger(times) && times > 0))) throw new RangeError(`times must be a positive whole number or Infinity, not ${times}`);
    if (fault.error === undefined && fault.interpose === undefined) throw new RangeError('a fault needs an error or an interpose action');
    const operations = fault.operation === undefined ? NODECLAIM_STORE_OPERATIONS : typeof fault.operation === 'string' ? [fault.operation] : fault.operation;
    const active: ActiveFault = { operations: new Set(operations), fault, remaining: times, struck: 0, interposing: false };
    this.#faults.push(active);
    return {
      get remaining() {
        return active.remaining;
      },
      get struck() {
        return active.struck;
      },
      cancel: () => {
        active.remaining = 0;
      },
    };
  }

  /**
   * Shorthand for {@link inject}: the next `times` calls of `operation` fail with `error` before touching the store.
   * @param error the error, or a function of the request returning it @default {@link throttledError}
   * @param times @default 1
   */
  failNext(operation: NodeClaimStoreOperation, error: FaultError = throttledError, times = 1): InjectedFault {
    return this.inject({ operation, error, times });
  }

  /** Withdraws every injected fault. */
  clearFaults(): void {
    for (const f of this.#faults) f.remaining = 0;
    this.#faults.length = 0;
  }

  /**
   * The stored record (a copy), or undefined — for assertions: not recorded, never faulted, no turn of the
   * microtask queue.
   */
  peek(name: string): NodeClaim | undefined {
    const record = this.#records.get(name);
    return record === undefined ? undefined : copy(record);
  }

  /** Every stored record in name order (copies) — for assertions: not recorded, never faulted. */
  snapshot(): NodeClaim[] {
    return this.#sorted().map((c) => copy(c));
  }

  /** Runs one call: waits a turn, applies a matching fault (before or after), performs it atomically, records it. */
  async #call<T>(request: NodeClaimStoreRequest, perform: () => Performed<T>): Promise<T> {
    await undefined;
    const fault = this.#strike(request);
    if (fault?.fault.interpose) {
      fault.interposing = true;
      try {
        await fault.fault.interpose(this, request);
      } finally {
        fault.interposing = false;
      }
    }
    const timing = fault?.fault.timing ?? 'before';
    const error = fault?.fault.error === undefined ? undefined : errorOf(fault.fault.error, request);
    if (error !== undefined && timing === 'before') return this.#fail(request, error, false);
    const done = perform();
    if ('conflict' in done) {
      this.#record({ ...request, outcome: 'conflict', written: false, error: done.conflict });
      throw done.conflict;
    }
    if (error !== undefined) return this.#fail(request, error, done.written, done.version);
    const outcome: NodeClaimStoreOutcome = done.value === undefined ? 'missing' : 'ok';
    this.#record({ ...request, outcome, written: done.written, ...(done.version !== undefined ? { version: done.version } : {}) });
    return done.value;
  }

  /** The first fault with strikes left that matches `request`, spent by one. */
  #strike(request: NodeClaimStoreRequest): ActiveFault | undefined {
    const fault = this.#faults.find((f) => f.remaining > 0 && !f.interposing && f.operations.has(request.operation) && (f.fault.when?.(request) ?? true));
    if (!fault) return undefined;
    fault.remaining--;
    fault.struck++;
    if (fault.remaining === 0) this.#faults.splice(this.#faults.indexOf(fault), 1);
    return fault;
  }

  #fail(request: NodeClaimStoreRequest, error: unknown, written: boolean, version?: number): never {
    this.#record({ ...request, outcome: 'failed', written, error, ...(version !== undefined ? { version } : {}) });
    throw error;
  }

  #record(call: NodeClaimStoreCall): void {
    this.#calls.push(call);
  }

  /** A read's result: a copy of the record, or undefined. */
  #found(record: NodeClaim | undefined): Performed<NodeClaim | undefined> {
    return record === undefined ? { value: undefined, written: false } : { value: copy(record), written: false, version: record.version };
  }

  #conflict(name: string, message: string): ConflictError {
    return new ConflictError(message, `CLUSTER#${this.#cluster}/NODECLAIM#${name}`);
  }

  #sorted(): NodeClaim[] {
    return [...this.#records.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}

/** What performing a call produced: a value (and whether it wrote, and the version), or a failed condition. */
type Performed<T> = { readonly value: T; readonly written: boolean; readonly version?: number } | { readonly conflict: ConflictError };

/** The error a fault throws for `request`. */
function errorOf(error: FaultError, request: NodeClaimStoreRequest): Error {
  return typeof error === 'function' ? error(request) : error;
}

/**
 * A deep copy of plain data without `undefined` (object properties set to `undefined` and `undefined` array elements
 * are dropped), as DynamoDB stores it with `removeUndefinedValues`.
 * @param stored true for what the store keeps: `-0` becomes `0`, as DynamoDB's number type has no negative zero (the
 *   adapter's write returns the caller's `-0`, a read returns `0`; the copy a write returns is made with false)
 */
function copy<T>(value: unknown, stored = true): T {
  if (Array.isArray(value)) return value.filter((v) => v !== undefined).map((v) => copy(v, stored)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = copy(v, stored);
    return out as T;
  }
  if (stored && typeof value === 'number' && Object.is(value, -0)) return 0 as T;
  return value as T;
}
