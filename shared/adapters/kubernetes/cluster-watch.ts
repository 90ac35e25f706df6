/**
 * The relay's view of the cluster: list-and-watch loops on Pods and Nodes (on client-node's `Watch`), translated into
 * the {@link PodEvent}s the webhook accepts.
 *
 * ## What is reported
 * - A pod when kube-scheduler has marked it `PodScheduled=False, reason=Unschedulable`
 *   (docs/karpenter-semantics.md#pending-pods), on
 *   every add or update that leaves it so, and again every `resyncIntervalMs` while it stays so. The resync
 *   re-lists the pending pods from the API server (not from the informer cache), so it recovers a trigger the
 *   provisioner consumed without placing the pod (a launch that failed, a node that never joined), a batch the
 *   webhook refused, and a watch event the relay never received; the default, 6 minutes, is longer than SQS FIFO's
 *   5-minute deduplication window so the re-sent event is not dropped. A pod being deleted, bound, or gated
 *   (`SchedulingGated`) is not reported.
 * - A node when first seen (`registered`, or `ready` when it already is), when its `Ready` condition turns `True`
 *   (`ready`) or stops being `True` (`notReady`), when it first shows a deletionTimestamp (`deleting`: a finalizer,
 *   e.g. Skiff's `karpenter.sh/termination`, holds its deletion) and when it is deleted (`deleted`).
 *
 * ## Informers
 * Pods are watched with the field selector `spec.nodeName=,status.phase!=Succeeded,status.phase!=Failed`: only pods
 * not bound to a node and not finished — the only ones that can be pending — so a large cluster's running pods never
 * reach the relay. Lists are paginated (`limit`/`continue`, consistent at the first page's resourceVersion).
 *
 * Each informer is a reflector, as client-go's (`tools/cache/reflector.go`): list, then watch from the list's
 * resourceVersion, keeping the resourceVersion of every event (and of `BOOKMARK`s, which are requested). When a watch
 * ends it restarts:
 * - the stream ended (the API server's watch timeout): re-watch from the last resourceVersion, without relisting;
 * - `410 Gone`/`Expired` (HTTP status or `ERROR` event): relist, and watch from the new list's resourceVersion;
 * - any other failure (connection refused, 401/403/5xx, a failed list, a non-410 `ERROR` event): retry from the last
 *   resourceVersion (or relist if there is none), reported unhealthy in {@link InformerStatus} meanwhile.
 *
 * Every restart waits {@link restartBackoffMs} (exponential, capped at `maxRestartDelayMs`, with jitter and a floor of
 * half the step), so no server answer — not even a `410` to every watch — can make the loop spin: the exponent grows
 * with each restart that made no progress and resets once a watch advanced the resourceVersion or stayed open for
 * `maxRestartDelayMs` (such a stream spaced the requests by itself).
 */
import { CoreV1Api, KubeConfig, Watch, type KubernetesListObject, type KubernetesObject, type V1Node, type V1Pod } from '@kubernetes/client-node';
import type { PodEvent } from '../../core/api/pod-event.js';
import type { Clock } from '../../ports/clock.js';
import { PAGE_SIZE } from './kubernetes-cluster.js';

/** The field selector of the pod informer: pods not bound to a node and not finished. */
export const UNBOUND_POD_SELECTOR = 'spec.nodeName=,status.phase!=Succeeded,status.phase!=Failed';
/** Default interval between re-reports of still-unschedulable pods: 6 min (> SQS FIFO's 5-minute dedup window). */
export const DEFAULT_RESYNC_INTERVAL_MS = 6 * 60_000;

/** How to reach the API server. */
export type KubernetesConnection =
  | {
      readonly kind: 'in-cluster';
      /**
       * Prefix of the service-account directory `/var/run/secrets/kubernetes.io/serviceaccount` (client-node's
       * `loadFromCluster(pathPrefix)`): the end-to-end run mounts the token and CA under a temporary folder. @default ''
       */
      readonly pathPrefix?: string;
    }
  | {
      readonly kind: 'server';
      /** e.g. `https://ABCDEF.gr7.eu-west-1.eks.amazonaws.com`, or a test server's `http://127.0.0.1:port`. */
      readonly server: string;
      /** A bearer token. */
      readonly token: string;
      /** The CA bundle, base64 PEM. @default the system roots */
      readonly caData?: string;
      /** Allow `http://` (tests only; sets client-node's `skipTLSVerify`). @default false */
      readonly allowInsecureHttp?: boolean;
    };

/** Timers, injectable so tests drive time. Node's `setTimeout`/`clearTimeout` by default. */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** What the watch logs. Structurally a subset of the Lambda `Log`. */
export interface WatchLog {
  info(message: string, attributes?: Record<string, unknown>): void;
  warn(message: string, attributes?: Record<string, unknown>): void;
}

/** The health of one informer, for the relay's readiness and liveness endpoints. */
export interface InformerStatus {
  readonly resource: 'pods' | 'nodes';
  /** True once a list has succeeded (the cache holds the cluster's state). */
  readonly synced: boolean;
  /** False while the informer waits to restart after a failure. */
  readonly healthy: boolean;
  /** Epoch ms since when it has been unhealthy, if it is. */
  readonly unhealthySinceMs?: number;
  readonly lastError?: string;
  /** Restarts after failures so far. */
  readonly restarts: number;
  /** Successful lists so far (the first one, and one per relist after `410 Gone` or a restart). */
  readonly lists: number;
}

/** Options of {@link ClusterWatch}. */
export interface ClusterWatchOptions {
  readonly connection: KubernetesConnection;
  /** The EKS cluster name written into every event. */
  readonly cluster: string;
  readonly clock: Clock;
  readonly log: WatchLog;
  /** Items per list page. @default {@link PAGE_SIZE} */
  readonly pageSize?: number;
  /** Re-report still-unschedulable pods this often, ms; 0 disables. @default {@link DEFAULT_RESYNC_INTERVAL_MS} */
  readonly resyncIntervalMs?: number;
  /**
   * Backoff step of a watch restart, ms: the first restart waits between half of it and all of it, and the step
   * doubles per consecutive restart without progress (see {@link restartBackoffMs}); at least 1. @default 1000
   */
  readonly restartDelayMs?: number;
  /** Longest restart delay, ms; at least `restartDelayMs`. @default 30000 */
  readonly maxRestartDelayMs?: number;
  /** @default Node's timers */
  readonly timers?: Timers;
  /** A number in [0, 1) for the restart jitter (see {@link restartBackoffMs}). @default Math.random */
  readonly random?: () => number;
}

const nodeTimers: Timers = { setTimeout: (cb, ms) => setTimeout(cb, ms), clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout) };

/** The condition fields read here, in both the typed (list) and the raw (watch) form of an object. */
interface Condition {
  readonly type?: string;
  readonly status?: string;
  readonly reason?: string;
}

/** True when kube-scheduler marked `pod` unschedulable and it is still pending, unbound and not being deleted. */
export function isUnschedulable(pod: V1Pod): boolean {
  if (pod.metadata?.deletionTimestamp || pod.spec?.nodeName) return false;
  if (pod.status?.phase !== undefined && pod.status.phase !== 'Pending') return false;
  const scheduled = (pod.status?.conditions as readonly Condition[] | undefined)?.find((c) => c.type === 'PodScheduled');
  return scheduled?.status === 'False' && scheduled.reason === 'Unschedulable';
}

/** True when the node's `Ready` condition is `True`. */
export function isNodeReady(node: V1Node): boolean {
  return (node.status?.conditions as readonly Condition[] | undefined)?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

/**
 * How long a watch restart waits, ms: exponential backoff with "equal jitter" (AWS Architecture Blog, "Exponential
 * Backoff and Jitter"), a delay in `[⌈step/2⌉, step]` where `step = min(capMs, baseMs × 2^(attempt−1))`. The floor of
 * half a step (unlike full jitter) means no random draw can make a restart loop spin.
 * @param attempt 1 for the first restart without progress, 2 for the next, …
 * @param baseMs the first step, ms (≥ 1)
 * @param capMs the largest step, ms (≥ `baseMs`)
 * @param random a number in [0, 1)
 * @example restartBackoffMs(3, 1000, 30_000, 0.5) // 3000: step 4000 ms, halfway between 2000 and 4000
 */
export function restartBackoffMs(attempt: number, baseMs: number, capMs: number, random: number): number {
  const step = Math.min(capMs, baseMs * 2 ** Math.min(Math.max(attempt, 1) - 1, 30));
  return Math.ceil(step / 2 + (random * step) / 2);
}

/** Why a watch is being restarted. */
type RestartCause = 'ended' | 'expired' | 'failed';

/** One informer: its cache, where its watch resumes, and its restart state. */
interface Watched<T extends KubernetesObject> {
  readonly resource: 'pods' | 'nodes';
  /** The collection's path, e.g. `/api/v1/pods`. */
  readonly path: string;
  readonly fieldSelector?: string;
  /** Lists every page (one snapshot). */
  readonly list: () => Promise<KubernetesListObject<T>>;
  readonly onChange: (object: T, change: 'add' | 'update' | 'delete') => void;
  /** `namespace/name` → the last version seen. */
  readonly cache: Map<string, T>;
  /** Where the next watch resumes; empty when a (re)list is needed first. */
  resourceVersion: string;
  synced: boolean;
  healthy: boolean;
  unhealthySinceMs?: number;
  lastError?: string;
  restarts: number;
  lists: number;
  /** Consecutive restarts without progress: the backoff exponent. */
  attempt: number;
  /** Bumped by every connect and by stop(); callbacks of an older generation are ignored. */
  generation: number;
  request?: AbortController;
  restartTimer?: unknown;
}

/** A Kubernetes object's cache key. */
const keyOf = (o: KubernetesObject): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

/**
 * Watches Pods and Nodes and emits {@link PodEvent}s (see the module comment for what is reported and how a watch
 * restarts).
 * @example
 * const watch = new ClusterWatch({ connection: { kind: 'in-cluster' }, cluster: 'prod', clock: systemClock, log });
 * watch.onEvent((e) => batcher.add(e));
 * await watch.start();
 */
export class ClusterWatch {
  readonly #options: ClusterWatchOptions;
  readonly #timers: Timers;
  readonly #random: () => number;
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #watch: Watch;
  readonly #listeners: ((event: PodEvent) => void)[] = [];
  readonly #pods: Watched<V1Pod>;
  readonly #nodes: Watched<V1Node>;
  /** Node uid → last known readiness. */
  readonly #nodeReady = new Map<string, boolean>();
  /** Uids of Nodes already reported `deleting`. */
  readonly #nodeDeleting = new Set<string>();
  #running = false;
  #resyncTimer: unknown;

  /**
   * @throws {RangeError} when a `server` connection is `http://` without `allowInsecureHttp`, or when
   *   `restartDelayMs` < 1 or `maxRestartDelayMs` < `restartDelayMs`
   * @throws {Error} from client-node when `in-cluster` is used outside a pod (no service account)
   */
  constructor(options: ClusterWatchOptions) {
    this.#options = options;
    this.#timers = options.timers ?? nodeTimers;
    this.#random = options.random ?? Math.random;
    this.#baseDelayMs = options.restartDelayMs ?? 1000;
    this.#maxDelayMs = options.maxRestartDelayMs ?? 30_000;
    if (!(this.#baseDelayMs >= 1) || !(this.#maxDelayMs >= this.#baseDelayMs)) {
      throw new RangeError(`restartDelayMs must be ≥ 1 and maxRestartDelayMs ≥ restartDelayMs (got ${this.#baseDelayMs}, ${this.#maxDelayMs})`);
    }
    const kc = kubeConfig(options.connection);
    const core = kc.makeApiClient(CoreV1Api);
    this.#watch = new Watch(kc);
    const pageSize = options.pageSize ?? PAGE_SIZE;
    this.#pods = watched('pods', '/api/v1/pods', UNBOUND_POD_SELECTOR, (pod, change) => this.#onPod(pod, change), () =>
      listAll<V1Pod>((cont) => core.listPodForAllNamespaces({ fieldSelector: UNBOUND_POD_SELECTOR, limit: pageSize, ...(cont ? { _continue: cont } : {}) })),
    );
    this.#nodes = watched('nodes', '/api/v1/nodes', undefined, (node, change) => this.#onNode(node, change), () =>
      listAll<V1Node>((cont) => core.listNode({ limit: pageSize, ...(cont ? { _continue: cont } : {}) })),
    );
  }

  /** Adds a listener for every event (called synchronously, in each informer's order). */
  onEvent(listener: (event: PodEvent) => void): void {
    this.#listeners.push(listener);
  }

  /**
   * Starts both informers and the resync timer. Resolves once each informer's first list and watch request were
   * answered (or failed: it then retries in the background, reported in {@link ClusterWatch.status}).
   */
  async start(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    await Promise.all([this.#connect(this.#pods as unknown as Watched<KubernetesObject>), this.#connect(this.#nodes as unknown as Watched<KubernetesObject>)]);
    this.#armResync();
  }

  /** Stops both informers and every timer; no event is emitted afterwards. */
  async stop(): Promise<void> {
    this.#running = false;
    for (const w of this.#all()) {
      w.generation++;
      if (w.restartTimer !== undefined) this.#timers.clearTimeout(w.restartTimer);
      w.restartTimer = undefined;
      w.request?.abort();
      w.request = undefined;
    }
    if (this.#resyncTimer !== undefined) this.#timers.clearTimeout(this.#resyncTimer);
    this.#resyncTimer = undefined;
  }

  /** The state of the pod and node informers. */
  status(): InformerStatus[] {
    return this.#all().map((w) => ({
      resource: w.resource,
      synced: w.synced,
      healthy: w.healthy,
      ...(w.unhealthySinceMs !== undefined ? { unhealthySinceMs: w.unhealthySinceMs } : {}),
      ...(w.lastError !== undefined ? { lastError: w.lastError } : {}),
      restarts: w.restarts,
      lists: w.lists,
    }));
  }

  /**
   * What the resync timer does: lists the unbound pods from the API server and emits a pod event for every one that
   * is unschedulable, whether or not the watch reported it (a missed watch event is recovered here). The list does
   * not touch the informer cache, which only the watch advances (a list older than a watch event must not undo it).
   * When the list fails, the pods the cache holds as unschedulable are emitted instead, and a warning is logged.
   * @returns how many were emitted
   */
  async resync(): Promise<number> {
    let pods: V1Pod[];
    try {
      pods = (await this.#pods.list()).items.filter(isUnschedulable);
    } catch (e) {
      this.#options.log.warn('resync list failed; re-reporting from the cache', { error: errorText(e) });
      pods = [...this.#pods.cache.values()].filter(isUnschedulable);
    }
    if (!this.#running) return 0;
    for (const pod of pods) this.#emitPod(pod);
    return pods.length;
  }

  #all(): Watched<KubernetesObject>[] {
    return [this.#pods, this.#nodes] as unknown as Watched<KubernetesObject>[];
  }

  /**
   * One list-and-watch attempt: lists when there is no resourceVersion to resume from, then opens the watch.
   * Resolves once the watch request was answered or the attempt failed; the stream's end schedules the next attempt.
   */
  async #connect(w: Watched<KubernetesObject>): Promise<void> {
    const generation = ++w.generation;
    const current = () => this.#running && w.generation === generation;
    const openedAtMs = this.#options.clock.now();
    let startVersion = w.resourceVersion;
    let expired = false;
    let streamError: Error | undefined;
    let ended = false;
    try {
      if (w.resourceVersion === '') {
        const list = await w.list();
        if (!current()) return;
        this.#replace(w, list.items);
        w.resourceVersion = list.metadata?.resourceVersion ?? '';
        startVersion = w.resourceVersion;
        w.synced = true;
        w.lists++;
        this.#markHealthy(w);
      }
      const query = { resourceVersion: w.resourceVersion, allowWatchBookmarks: true, ...(w.fieldSelector !== undefined ? { fieldSelector: w.fieldSelector } : {}) };
      const request = await this.#watch.watch(
        w.path,
        query,
        (type: string, object: unknown) => {
          if (!current()) return;
          if (type === 'ERROR') {
            const status = (object ?? {}) as { code?: unknown; reason?: unknown; message?: unknown };
            if (status.code === 410) expired = true;
            else streamError = Object.assign(new Error(String(status.message ?? status.reason ?? 'watch ERROR event')), { code: status.code });
            return;
          }
          this.#apply(w, type, object as KubernetesObject);
        },
        (err: unknown) => {
          ended = true;
          if (!current()) return;
          w.request = undefined;
          const progressed = w.resourceVersion !== startVersion || this.#options.clock.now() - openedAtMs >= this.#maxDelayMs;
          if (expired || isGone(err)) {
            w.resourceVersion = '';
            this.#restart(w, 'expired', progressed);
          } else if (err || streamError) this.#fail(w, err ?? streamError, progressed);
          else this.#restart(w, 'ended', progressed);
        },
      );
      if (!current()) {
        request.abort();
        return;
      }
      if (!ended) {
        w.request = request;
        this.#markHealthy(w);
      }
    } catch (e) {
      // a failed list, or a throw before the watch request (e.g. reading the token file)
      if (current()) this.#fail(w, e, false);
    }
  }

  /** Applies one watch event to the cache and emits what changed. */
  #apply(w: Watched<KubernetesObject>, type: string, object: KubernetesObject): void {
    const key = keyOf(object);
    switch (type) {
      case 'ADDED':
      case 'MODIFIED':
        this.#upsert(w, object);
        break;
      case 'DELETED':
        if (w.cache.delete(key)) w.onChange(object, 'delete');
        break;
      case 'BOOKMARK':
        break;
      default:
        return; // an unknown event type carries no resourceVersion to keep
    }
    const rv = object.metadata?.resourceVersion;
    if (rv) w.resourceVersion = rv;
  }

  #upsert(w: Watched<KubernetesObject>, object: KubernetesObject): void {
    const key = keyOf(object);
    const before = w.cache.get(key);
    if (before && before.metadata?.resourceVersion !== undefined && before.metadata.resourceVersion === object.metadata?.resourceVersion) return;
    w.cache.set(key, object);
    w.onChange(object, before ? 'update' : 'add');
  }

  /** Replaces the cache with a list's items: deletes what is gone, adds or updates the rest. */
  #replace(w: Watched<KubernetesObject>, items: readonly KubernetesObject[]): void {
    const keys = new Set(items.map(keyOf));
    for (const [key, object] of [...w.cache]) {
      if (keys.has(key)) continue;
      w.cache.delete(key);
      w.onChange(object, 'delete');
    }
    for (const item of items) this.#upsert(w, item);
  }

  #markHealthy(w: Watched<KubernetesObject>): void {
    w.healthy = true;
    delete w.unhealthySinceMs;
  }

  #fail(w: Watched<KubernetesObject>, err: unknown, progressed: boolean): void {
    const message = errorText(err);
    w.lastError = message;
    if (w.healthy) w.unhealthySinceMs = this.#options.clock.now();
    w.healthy = false;
    this.#restart(w, 'failed', progressed, message);
  }

  /** Schedules the next attempt after the backoff; `progressed` resets the exponent. */
  #restart(w: Watched<KubernetesObject>, cause: RestartCause, progressed: boolean, error?: string): void {
    w.attempt = progressed ? 1 : w.attempt + 1;
    const delay = restartBackoffMs(w.attempt, this.#baseDelayMs, this.#maxDelayMs, this.#random());
    switch (cause) {
      case 'failed':
        this.#options.log.warn('watch failed; restarting', { resource: w.resource, error, delayMs: delay, attempt: w.attempt });
        break;
      case 'expired':
        this.#options.log.info('watch expired (410); relisting', { resource: w.resource, delayMs: delay, attempt: w.attempt });
        break;
      case 'ended':
        break; // the API server's routine watch timeout
    }
    if (w.restartTimer !== undefined) this.#timers.clearTimeout(w.restartTimer);
    w.restartTimer = this.#timers.setTimeout(() => {
      w.restartTimer = undefined;
      if (!this.#running) return;
      if (cause === 'failed') w.restarts++;
      void this.#connect(w);
    }, delay);
  }

  #armResync(): void {
    const interval = this.#options.resyncIntervalMs ?? DEFAULT_RESYNC_INTERVAL_MS;
    if (interval <= 0 || !this.#running) return;
    this.#resyncTimer = this.#timers.setTimeout(() => {
      if (!this.#running) return;
      void this.resync().then((n) => {
        if (n > 0) this.#options.log.info('re-reported unschedulable pods', { pods: n });
        this.#armResync();
      });
    }, interval);
  }

  #onPod(pod: V1Pod, change: 'add' | 'update' | 'delete'): void {
    if (change !== 'delete' && this.#running && isUnschedulable(pod)) this.#emitPod(pod);
  }

  #emitPod(pod: V1Pod): void {
    const m = pod.metadata;
    if (!m?.name || !m.namespace || !m.uid || !m.resourceVersion) return;
    this.#emit({ kind: 'pod', cluster: this.#options.cluster, namespace: m.namespace, name: m.name, uid: m.uid, resourceVersion: m.resourceVersion });
  }

  #onNode(node: V1Node, change: 'add' | 'update' | 'delete'): void {
    const m = node.metadata;
    if (!this.#running || !m?.name || !m.uid || !m.resourceVersion) return;
    const base = { kind: 'node', cluster: this.#options.cluster, name: m.name, uid: m.uid, resourceVersion: m.resourceVersion } as const;
    if (change === 'delete') {
      this.#nodeReady.delete(m.uid);
      this.#nodeDeleting.delete(m.uid);
      this.#emit({ ...base, event: 'deleted' });
      return;
    }
    // A deletion a finalizer holds (Skiff's termination finalizer): the lifecycle controller starts the drain at once.
    if (m.deletionTimestamp && !this.#nodeDeleting.has(m.uid)) {
      this.#nodeDeleting.add(m.uid);
      this.#emit({ ...base, event: 'deleting' });
    }
    const ready = isNodeReady(node);
    const before = this.#nodeReady.get(m.uid);
    this.#nodeReady.set(m.uid, ready);
    if (before === undefined) this.#emit({ ...base, event: ready ? 'ready' : 'registered' });
    else if (before !== ready) this.#emit({ ...base, event: ready ? 'ready' : 'notReady' });
  }

  #emit(event: PodEvent): void {
    for (const listener of this.#listeners) listener(event);
  }
}

/** A new informer's state: not listed yet, nothing to resume from. */
function watched<T extends KubernetesObject>(
  resource: 'pods' | 'nodes',
  path: string,
  fieldSelector: string | undefined,
  onChange: (object: T, change: 'add' | 'update' | 'delete') => void,
  list: () => Promise<KubernetesListObject<T>>,
): Watched<T> {
  return {
    resource,
    path,
    ...(fieldSelector !== undefined ? { fieldSelector } : {}),
    list,
    onChange,
    cache: new Map(),
    resourceVersion: '',
    synced: false,
    healthy: true,
    restarts: 0,
    lists: 0,
    attempt: 0,
    generation: 0,
  };
}

/** True for `410 Gone` (client-node sets `statusCode` on a failed watch request, `code` on a failed list). */
function isGone(err: unknown): boolean {
  const e = err as { statusCode?: unknown; code?: unknown } | null | undefined;
  return e?.statusCode === 410 || e?.code === 410;
}

/** A KubeConfig for the connection. */
function kubeConfig(connection: KubernetesConnection): KubeConfig {
  const kc = new KubeConfig();
  if (connection.kind === 'in-cluster') {
    kc.loadFromCluster(connection.pathPrefix ?? '');
    return kc;
  }
  const insecure = connection.server.startsWith('http:');
  if (insecure && connection.allowInsecureHttp !== true) throw new RangeError(`refusing plain-HTTP Kubernetes server ${connection.server} (set allowInsecureHttp for tests)`);
  kc.loadFromClusterAndUser(
    { name: 'cluster', server: connection.server, skipTLSVerify: insecure, ...(connection.caData ? { caData: connection.caData } : {}) },
    { name: 'relay', token: connection.token },
  );
  return kc;
}

/** Every page of a list, as one list at the first page's resourceVersion (a `continue` list is one snapshot). */
async function listAll<T extends KubernetesObject>(page: (cont: string | undefined) => Promise<KubernetesListObject<T>>): Promise<KubernetesListObject<T>> {
  const first = await page(undefined);
  const items = [...first.items];
  let cont = first.metadata?._continue;
  while (cont) {
    const next = await page(cont);
    items.push(...next.items);
    cont = next.metadata?._continue;
  }
  return { ...first, items };
}

function errorText(err: unknown): string {
  if (err instanceof Error) {
    const status = (err as { statusCode?: unknown; code?: unknown }).statusCode ?? (err as { code?: unknown }).code;
    return typeof status === 'number' ? `${status} ${err.message}` : err.message;
  }
  return String(err);
}
