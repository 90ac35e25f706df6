/**
 * Fault injection for the simulation (a scenario's `spec.faults`, docs/contracts.md#faults), seeded by `--seed`:
 *
 * - `duplicateDelivery` p — each SQS message the provisioner acknowledged is, with probability p, delivered once more
 *   after its visibility timeout (its deletion "was lost": SQS redelivers it, with a higher receive count; the FIFO
 *   deduplication window does not apply to redelivery). Applied by the in-memory queue through
 *   {@link FaultInjector.redeliver}.
 * - `concurrentInvocations` n — every handler invocation (a provisioner batch, a lifecycle run) runs as n overlapping
 *   invocations at the same virtual instant ({@link FaultInjector.invoke}); their awaits interleave against the same
 *   DynamoDB store (dynalite), simulated EC2 and simulated cluster.
 * - `crashAfterSideEffect` p — right after a side effect succeeds (an EC2 launch or termination, a NodeClaim write,
 *   an unavailable-offering mark, a provisioning-pass record, a Node patch or deletion, an eviction, an Event), the
 *   invocation dies with probability p: {@link SimulatedCrash} propagates out of the handler like a Lambda crash or
 *   timeout, so an SQS batch is not acknowledged (it comes back after the visibility timeout) and a scheduled run is
 *   simply over (the schedule runs it again next minute).
 * - `ec2Throttle` p — every EC2 call the handlers make (DescribeInstanceTypes included: a cold Lambda has no cache,
 *   so it can be throttled too; CreateFleet, DescribeInstances, TerminateInstances) fails with
 *   `ThrottledError('RequestLimitExceeded')` with probability p, before it does anything.
 *
 * - `dynamodbThrottle` p — every DynamoDB call the handlers make (NodeClaim store, unavailable offerings, provisioning
 *   passes) fails with probability p, before it does anything, with the error the DynamoDB adapter raises when
 *   `ProvisionedThroughputExceededException` outlived the SDK's retries (`ThrottledError`, see `table.ts storeError`).
 * - `apiServerErrors` p — every Kubernetes API call the handlers make (lists, Events, Node patches and deletions,
 *   evictions) fails with probability p, before it does anything, with the error the Kubernetes adapter raises for
 *   a 5xx (`ApiServerUnavailableError`, see `kubernetes-errors.ts`).
 *
 * A throttled or failed call fails the invocation; the provisioner's batch comes back after the visibility timeout and
 * the lifecycle runs again at the next minute — the retry path AWS gives the real handlers.
 *
 * Faults are applied only to what the handlers see: the wrapped ports below. The observer, the simulated world's own
 * bookkeeping (kubelets registering, kube-scheduler binding, the engine reading the store for the Result) use the
 * unwrapped objects.
 *
 * Determinism: every draw comes from one mulberry32 stream seeded from the run's seed, so a run without
 * `concurrentInvocations` is reproducible; with overlapping invocations the order of draws follows the order their
 * awaits resume in, which depends on the embedded DynamoDB's I/O timing.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { OfferingKey } from '../core/instancetypes/offering-key.js';
import { ApiServerUnavailableError, SkiffError, ThrottledError } from '../core/errors.js';
import type { NodeClaim } from '../core/api/nodeclaim.js';
import type { CloudInstance, CloudProvider, InstanceTypeQuery, LaunchedInstance, LaunchRequest } from '../ports/cloud-provider.js';
import type { Cluster, ClusterEvent, EvictionOutcome, NodePatch } from '../ports/cluster.js';
import { mulberry32 } from '../ports/ids.js';
import type { NodeClaimStore } from '../ports/nodeclaim-store.js';
import type { ProvisioningPasses } from '../ports/provisioning-passes.js';
import type { UnavailableOffering, UnavailableOfferings } from '../ports/unavailable-offerings.js';
import type { ScenarioFaults } from './scenario.js';

/**
 * A deterministic crash, for tests that crash a handler after each of its side effects in turn: the invocation of
 * `handler` (the name {@link FaultInjector.invoke} is given: `disruption`, `provisioner`, `lifecycle`, `interruption`)
 * dies with {@link SimulatedCrash} right after the `sideEffect`-th side effect (1-based) that invocations of that
 * handler make over the run, counted in the order they succeed. It strikes once, whatever `crashAfterSideEffect` says,
 * and draws nothing from the seeded stream.
 */
export interface CrashAfterSideEffectN {
  readonly handler: string;
  /** Which side effect of the handler's, counted from 1 over the whole run. */
  readonly sideEffect: number;
}

/** A side effect a handler invocation made (see {@link FaultInjector}'s `onSideEffect`). */
export interface SideEffectRecord {
  /** The handler whose invocation made it (`disruption`, `provisioner`, …), or undefined outside {@link FaultInjector.invoke}. */
  readonly handler: string | undefined;
  /** Its number among that handler's side effects over the run, from 1. */
  readonly index: number;
  /** What succeeded, e.g. `cluster.patchNode(ip-10-0-0-1…)`, `store.update(general-abcde)`. */
  readonly what: string;
  /** Epoch ms (virtual). */
  readonly at: number;
}

/** No faults: what a scenario without `spec.faults` gets. */
export const NO_FAULTS: ScenarioFaults = { duplicateDelivery: 0, concurrentInvocations: 1, crashAfterSideEffect: 0, ec2Throttle: 0, dynamodbThrottle: 0, apiServerErrors: 0 };

/** Mixed into the run's seed so fault draws are independent of the generated names (which use the seed itself). */
const FAULT_SEED_SALT = 0x5eedfa17;

/**
 * A simulated crash of a handler invocation right after a side effect (`crashAfterSideEffect`). Nothing in Skiff
 * catches it: it ends the invocation like a Lambda crash or timeout.
 */
export class SimulatedCrash extends SkiffError {
  /** @param sideEffect what had just succeeded, e.g. `cloud.create(general-bcdfg)` */
  constructor(readonly sideEffect: string) {
    super(`simulated crash after ${sideEffect}`);
  }
}

/** True when `e` is a {@link SimulatedCrash}. */
export const isSimulatedCrash = (e: unknown): e is SimulatedCrash => e instanceof SimulatedCrash;

/** Which fault fired. */
export type FaultKind = 'duplicateDelivery' | 'concurrentInvocations' | 'crashAfterSideEffect' | 'ec2Throttle' | 'dynamodbThrottle' | 'apiServerErrors';

/** One injected fault, for tests and debugging. */
export interface FaultRecord {
  readonly kind: FaultKind;
  /** Epoch ms (virtual). */
  readonly at: number;
  /** What it hit: a message id, a handler, a side effect or an EC2 call. */
  readonly subject: string;
}

/** How often each fault fired in a run. */
export type FaultCounts = Record<FaultKind, number>;

/**
 * Draws and applies the faults of one run. Wrap each port the handlers get, route queue acknowledgements through
 * {@link redeliver} and run every handler invocation through {@link invoke}.
 * @example
 * const faults = new FaultInjector(spec.faults, seed, () => clock.now());
 * const cloud = faults.cloud(observedEc2);
 * queue.subscribe((event) => faults.invoke('provisioner', () => handler(event)).then(mergeBatchResponses));
 */
export class FaultInjector {
  /** Faults injected so far, by kind. */
  readonly counts: FaultCounts = { duplicateDelivery: 0, concurrentInvocations: 0, crashAfterSideEffect: 0, ec2Throttle: 0, dynamodbThrottle: 0, apiServerErrors: 0 };
  private readonly random: () => number;
  /** The handler whose invocation is running, through its awaits ({@link invoke}). */
  private readonly handler = new AsyncLocalStorage<string>();
  /** Side effects so far per handler. */
  private readonly sideEffects = new Map<string | undefined, number>();
  /** Whether the deterministic crash has struck. */
  private crashed = false;

  /**
   * @param faults the scenario's `spec.faults` (probabilities 0–1, `concurrentInvocations` ≥ 1)
   * @param seed the run's `--seed`
   * @param now the virtual clock, epoch ms (for records)
   * @param onFault called with each fault as it is injected
   * @param options `crashAfter`: one deterministic crash (tests); `onSideEffect`: called with every side effect a
   *   handler made, as it succeeds (before any crash it triggers)
   */
  constructor(
    readonly faults: ScenarioFaults,
    seed: number,
    private readonly now: () => number,
    private readonly onFault?: (record: FaultRecord) => void,
    private readonly options: { readonly crashAfter?: CrashAfterSideEffectN; readonly onSideEffect?: (record: SideEffectRecord) => void } = {},
  ) {
    this.random = mulberry32((seed ^ FAULT_SEED_SALT) >>> 0);
  }

  /** True when any fault is configured (a deterministic crash included). */
  get active(): boolean {
    const f = this.faults;
    return this.options.crashAfter !== undefined || f.duplicateDelivery > 0 || f.concurrentInvocations > 1 || f.crashAfterSideEffect > 0 || f.ec2Throttle > 0 || f.dynamodbThrottle > 0 || f.apiServerErrors > 0;
  }

  /**
   * `duplicateDelivery`: whether a message the consumer acknowledged is delivered once more anyway.
   * @param messageId for the record
   */
  redeliver(messageId: string): boolean {
    return this.draw('duplicateDelivery', this.faults.duplicateDelivery, messageId);
  }

  /**
   * `concurrentInvocations`: runs `invocation` n times at once (n = 1 without the fault) and settles them all, so a
   * crash of one does not stop the others — they are separate Lambdas.
   * @param handler a name for the record, e.g. `provisioner`
   * @returns every invocation's outcome, in start order
   */
  async invoke<T>(handler: string, invocation: () => Promise<T>): Promise<PromiseSettledResult<T>[]> {
    const n = Math.max(1, Math.floor(this.faults.concurrentInvocations));
    if (n > 1) this.record('concurrentInvocations', `${handler} ×${n}`);
    return Promise.allSettled(Array.from({ length: n }, () => this.handler.run(handler, invocation)));
  }

  /** The CloudProvider the handlers see: `ec2Throttle` before every call, `crashAfterSideEffect` after create and delete. */
  cloud(cloud: CloudProvider): CloudProvider {
    return {
      getInstanceTypes: async (query: InstanceTypeQuery) => {
        this.throttle('DescribeInstanceTypes');
        return cloud.getInstanceTypes(query);
      },
      create: async (request: LaunchRequest): Promise<LaunchedInstance> => {
        this.throttle('CreateFleet');
        return this.sideEffect(`cloud.create(${request.nodeClaim})`, () => cloud.create(request));
      },
      list: async (): Promise<CloudInstance[]> => {
        this.throttle('DescribeInstances');
        return cloud.list();
      },
      delete: async (instanceId: string) => {
        this.throttle('TerminateInstances');
        return this.sideEffect(`cloud.delete(${instanceId})`, () => cloud.delete(instanceId));
      },
    };
  }

  /** The NodeClaimStore the handlers see: `dynamodbThrottle` before every call, `crashAfterSideEffect` after create and update. */
  store(store: NodeClaimStore): NodeClaimStore {
    return {
      create: (claim: Omit<NodeClaim, 'version'>) => this.dynamodb('PutItem', () => this.sideEffect(`store.create(${claim.name})`, () => store.create(claim))),
      get: (name: string) => this.dynamodb('GetItem', () => store.get(name)),
      update: (claim: NodeClaim) => this.dynamodb('PutItem', () => this.sideEffect(`store.update(${claim.name})`, () => store.update(claim))),
      list: () => this.dynamodb('Query', () => store.list()),
      findByInstanceId: (instanceId: string) => this.dynamodb('Query', () => store.findByInstanceId(instanceId)),
    };
  }

  /** The UnavailableOfferings the handlers see: `dynamodbThrottle` before every call, `crashAfterSideEffect` after a mark. */
  unavailableOfferings(offerings: UnavailableOfferings): UnavailableOfferings {
    return {
      markUnavailable: (offering: OfferingKey, untilMs: number, reason: string) =>
        this.dynamodb('PutItem', () =>
          this.sideEffect(`unavailableOfferings.markUnavailable(${offering.instanceType}/${offering.zone}/${offering.capacityType})`, () => offerings.markUnavailable(offering, untilMs, reason)),
        ),
      listUnavailable: (nowMs: number): Promise<UnavailableOffering[]> => this.dynamodb('Query', () => offerings.listUnavailable(nowMs)),
    };
  }

  /** The ProvisioningPasses the handler sees: `dynamodbThrottle` before every call, `crashAfterSideEffect` after a pass is recorded. */
  passes(passes: ProvisioningPasses): ProvisioningPasses {
    return {
      lastCompletedStart: () => this.dynamodb('GetItem', () => passes.lastCompletedStart()),
      recordCompleted: (startedAtMs: number) => this.dynamodb('PutItem', () => this.sideEffect('passes.recordCompleted', () => passes.recordCompleted(startedAtMs))),
    };
  }

  /**
   * The Cluster the handlers see: `apiServerErrors` before every call, `crashAfterSideEffect` after every write (Event,
   * Node patch or deletion, eviction); the optional NodeClaim-mirror methods pass through as they are.
   */
  cluster<N, C, D>(cluster: Cluster<N, C, D>): Cluster<N, C, D> {
    const api = <T>(call: string, run: () => Promise<T>): Promise<T> => {
      if (this.draw('apiServerErrors', this.faults.apiServerErrors, call)) {
        return Promise.reject(new ApiServerUnavailableError(`${call}: the server is currently unable to handle the request (simulated 503)`, 503, 'ServiceUnavailable'));
      }
      return run();
    };
    return {
      listNodePools: () => api('GET nodepools', () => cluster.listNodePools()),
      listNodeClasses: () => api('GET ec2nodeclasses', () => cluster.listNodeClasses()),
      listDaemonSets: () => api('GET daemonsets', () => cluster.listDaemonSets()),
      listPods: () => api('GET pods', () => cluster.listPods()),
      listNodes: () => api('GET nodes', () => cluster.listNodes()),
      listPodDisruptionBudgets: () => api('GET poddisruptionbudgets', () => cluster.listPodDisruptionBudgets()),
      ...(cluster.lastPodEventTimes ? { lastPodEventTimes: () => api('GET pods (event times)', () => cluster.lastPodEventTimes!()) } : {}),
      recordEvent: (event: ClusterEvent) => api('POST events', () => this.sideEffect(`cluster.recordEvent(${event.reason} ${event.object})`, () => cluster.recordEvent(event))),
      patchNode: (name: string, patch: NodePatch) => api(`PATCH nodes/${name}`, () => this.sideEffect(`cluster.patchNode(${name})`, () => cluster.patchNode(name, patch))),
      deleteNode: (name: string) => api(`DELETE nodes/${name}`, () => this.sideEffect(`cluster.deleteNode(${name})`, () => cluster.deleteNode(name))),
      evictPod: (namespace: string, name: string): Promise<EvictionOutcome> =>
        api(`POST pods/${namespace}/${name}/eviction`, () => this.sideEffect(`cluster.evictPod(${namespace}/${name})`, () => cluster.evictPod(namespace, name))),
      forceDeletePod: (namespace: string, name: string, gracePeriodSeconds: number) =>
        api(`DELETE pods/${namespace}/${name}`, () => this.sideEffect(`cluster.forceDeletePod(${namespace}/${name})`, () => cluster.forceDeletePod(namespace, name, gracePeriodSeconds))),
      // The NodeClaim mirror (how a user's `kubectl delete nodeclaim` reaches Skiff), passed through without faults:
      // drawing for these calls would shift every seeded fault sequence, and a mirror failure never fails a pass.
      ...(cluster.listNodeClaimMirrors && cluster.mirrorNodeClaim && cluster.deleteNodeClaimMirror
        ? {
            listNodeClaimMirrors: cluster.listNodeClaimMirrors.bind(cluster),
            mirrorNodeClaim: cluster.mirrorNodeClaim.bind(cluster),
            deleteNodeClaimMirror: cluster.deleteNodeClaimMirror.bind(cluster),
          }
        : {}),
    };
  }

  /** Runs a DynamoDB call; with probability `dynamodbThrottle` it fails first, as throttling that outlived the SDK's retries. */
  private dynamodb<T>(operation: string, run: () => Promise<T>): Promise<T> {
    if (this.draw('dynamodbThrottle', this.faults.dynamodbThrottle, operation)) {
      return Promise.reject(new ThrottledError(`DynamoDB ${operation} throttled: ProvisionedThroughputExceededException (simulated)`));
    }
    return run();
  }

  /**
   * Runs a side effect; when it succeeded, the invocation dies if it is the deterministic crash's
   * ({@link CrashAfterSideEffectN}), else with probability `crashAfterSideEffect`.
   */
  private async sideEffect<T>(what: string, run: () => Promise<T>): Promise<T> {
    const value = await run();
    const handler = this.handler.getStore();
    const index = (this.sideEffects.get(handler) ?? 0) + 1;
    this.sideEffects.set(handler, index);
    this.options.onSideEffect?.({ handler, index, what, at: this.now() });
    const crash = this.options.crashAfter;
    if (crash && !this.crashed && handler === crash.handler && index === crash.sideEffect) {
      this.crashed = true;
      this.record('crashAfterSideEffect', what);
      throw new SimulatedCrash(what);
    }
    if (this.draw('crashAfterSideEffect', this.faults.crashAfterSideEffect, what)) throw new SimulatedCrash(what);
    return value;
  }

  /** @throws {ThrottledError} with probability `ec2Throttle` */
  private throttle(call: string): void {
    if (this.draw('ec2Throttle', this.faults.ec2Throttle, call)) throw new ThrottledError('RequestLimitExceeded');
  }

  /** True with probability `p`; draws nothing when p is 0 (a run without faults consumes no randomness). */
  private draw(kind: FaultKind, p: number, subject: string): boolean {
    if (!(p > 0)) return false;
    if (this.random() >= p) return false;
    this.record(kind, subject);
    return true;
  }

  private record(kind: FaultKind, subject: string): void {
    this.counts[kind]++;
    this.onFault?.({ kind, at: this.now(), subject });
  }
}
