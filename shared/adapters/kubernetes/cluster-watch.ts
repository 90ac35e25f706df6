/**
 * The relay's view of the cluster: list-and-watch loops on Pods and Nodes (on client-node's `Watch`), translated into
 * the {@link PodEvent}s the webhook accepts.
 *
 * ## What is reported
 * - A pod when kube-scheduler has marked it `PodScheduled=False, reason=Unschedulable` (DESIGN.md "Semantics"), on
 *   every add or update that leaves it so, and again every `resyncIntervalMs` while it stays so (a trigger the
 *   provisioner may have consumed without placing the pod — a launch that failed, a node that never joined — is
 *   re-sent; the default, 6 minutes, is longer than SQS FIFO's 5-minute deduplication window so the re-sent event is
 *   not dropped). A pod being deleted, bound, or gated (`SchedulingGated`) is not reported.
 * - A node when first seen (`registered`, or `ready` when it already is), when its `Ready` condition turns `True`
 *   (`ready`) or stops being `True` (`notReady`), and when it is deleted (`deleted`).
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
  | { readonly kind: 'in-cluster' }
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
  /** First restart delay after a failure, ms (doubles per consecutive failure, full jitter). @default 1000 */
  readonly restartDelayMs?: number;
  /** Longest restart delay, ms. @default 30000 */
  readonly maxRestartDelayMs?: number;
  /** @default Node's timers */
  readonly timers?: Timers;
  /** A number in [0, 1) for the jitter. @default Math.random */
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

/** One informer with its restart state. */
interface Watched<T extends KubernetesObject> {
  readonly resource: 'pods' | 'nodes';
  readonly informer: ListWatch<T>;
  synced: boolean;
  healthy: boolean;
  unhealthySinceMs?: number;
  lastError?: string;
  restarts: number;
  lists: number;
  consecutiveFailures: number;
  /** Every failure so far (never reset). */
  failures: number;
  restartTimer?: unknown;
}

/**
 * Watches Pods and Nodes and emits {@link PodEvent}s (see the module comment for what is reported).
 * @example
 * const watch = new ClusterWatch({ connection: { kind: 'in-cluster' }, cluster: 'prod', clock: systemClock, log });
 * watch.onEvent((e) => batcher.add(e));
 * await watch.start();
 */
export class ClusterWatch {
  readonly #options: ClusterWatchOptions;
  readonly #timers: Timers;
  readonly #random: () => number;
  readonly #listeners: ((event: PodEvent) => void)[] = [];
  readonly #pods: Watched<V1Pod>;
  readonly #nodes: Watched<V1Node>;
  /** Node uid → last known readiness. */
  readonly #nodeReady = new Map<string, boolean>();
  #running = false;
  #resyncTimer: unknown;

  /**
   * @throws {RangeError} when a `server` connection is `http://` without `allowInsecureHttp`
   * @throws {Error} from client-node when `in-cluster` is used outside a pod (no service account)
   */
  constructor(options: ClusterWatchOptions) {
    this.#options = options;
    this.#timers = options.timers ?? nodeTimers;
    this.#random = options.random ?? Math.random;
    const kc = kubeConfig(options.connection);
    const core = kc.makeApiClient(CoreV1Api);
    const pageSize = options.pageSize ?? PAGE_SIZE;
    const podList = () => listAll<V1Pod>((cont) => core.listPodForAllNamespaces({ fieldSelector: UNBOUND_POD_SELECTOR, limit: pageSize, ...(cont ? { _continue: cont } : {}) }));
    const nodeList = () => listAll<V1Node>((cont) => core.listNode({ limit: pageSize, ...(cont ? { _continue: cont } : {}) }));
    this.#pods = this.#watched('pods', new ListWatch<V1Pod>('/api/v1/pods', new Watch(kc), this.#counted(() => this.#pods, podList), false, undefined, UNBOUND_POD_SELECTOR));
    this.#nodes = this.#watched('nodes', new ListWatch<V1Node>('/api/v1/nodes', new Watch(kc), this.#counted(() => this.#nodes, nodeList), false));
    this.#pods.informer.on('add', (pod) => this.#onPod(pod));
    this.#pods.informer.on('update', (pod) => this.#onPod(pod));
    this.#nodes.informer.on('add', (node) => this.#onNode(node, 'add'));
    this.#nodes.informer.on('update', (node) => this.#onNode(node, 'update'));
    this.#nodes.informer.on('delete', (node) => this.#onNode(node, 'delete'));
  }

  /** Adds a listener for every event (called synchronously, in the informer's order). */
  onEvent(listener: (event: PodEvent) => void): void {
    this.#listeners.push(listener);
  }

  /** Starts both informers (their first list and watch run in the background) and the resync timer. */
  async start(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    await Promise.all([this.#start(this.#pods), this.#start(this.#nodes)]);
    this.#armResync();
  }

  /** Stops both informers and every timer; no event is emitted afterwards. */
  async stop(): Promise<void> {
    this.#running = false;
    for (const w of [this.#pods, this.#nodes] as Watched<KubernetesObject>[]) {
      if (w.restartTimer !== undefined) this.#timers.clearTimeout(w.restartTimer);
      w.restartTimer = undefined;
    }
    if (this.#resyncTimer !== undefined) this.#timers.clearTimeout(this.#resyncTimer);
    this.#resyncTimer = undefined;
    await Promise.all([this.#pods.informer.stop(), this.#nodes.informer.stop()]);
  }

  /** The state of the pod and node informers. */
  status(): InformerStatus[] {
    return [this.#pods, this.#nodes].map((w) => ({
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
   * Emits a pod event for every pod in the informer cache that is still unschedulable (what the resync timer does).
   * @returns how many were emitted
   */
  resync(): number {
    const pods = this.#pods.informer.list().filter(isUnschedulable);
    for (const pod of pods) this.#emitPod(pod);
    return pods.length;
  }

  #watched<T extends KubernetesObject>(resource: 'pods' | 'nodes', informer: ListWatch<T>): Watched<T> {
    const w: Watched<T> = { resource, informer, synced: false, healthy: true, restarts: 0, lists: 0, consecutiveFailures: 0, failures: 0 };
    informer.on('error', (err: unknown) => this.#onError(w as Watched<KubernetesObject>, err));
    return w;
  }

  /** Wraps a list so a success marks the informer synced and healthy. */
  #counted<T extends KubernetesObject>(watched: () => Watched<T>, list: () => Promise<KubernetesListObject<T>>): () => Promise<KubernetesListObject<T>> {
    return async () => {
      const result = await list();
      const w = watched() as unknown as Watched<KubernetesObject>;
      w.synced = true;
      w.lists++;
      this.#markHealthy(w);
      return result;
    };
  }

  /** Starts (or restarts) an informer; it is healthy again once its list or watch request was answered. */
  async #start(w: Watched<KubernetesObject>): Promise<void> {
    const failuresBefore = w.failures;
    try {
      // Resolves once the watch request is answered (the list, when one is needed, comes first); a failure calls
      // the error handler before it resolves.
      await w.informer.start();
    } catch (e) {
      this.#onError(w, e); // a throw outside the informer's own error handling (e.g. reading the token file)
    }
    if (w.failures === failuresBefore && this.#running) this.#markHealthy(w);
  }

  #markHealthy(w: Watched<KubernetesObject>): void {
    w.healthy = true;
    delete w.unhealthySinceMs;
    w.consecutiveFailures = 0;
  }

  #onError(w: Watched<KubernetesObject>, err: unknown): void {
    if (!this.#running) return; // an aborted watch during stop() is not a failure
    const message = errorText(err);
    w.lastError = message;
    if (w.healthy) w.unhealthySinceMs = this.#options.clock.now();
    w.healthy = false;
    w.consecutiveFailures++;
    w.failures++;
    const base = this.#options.restartDelayMs ?? 1000;
    const cap = this.#options.maxRestartDelayMs ?? 30_000;
    const delay = Math.floor(this.#random() * Math.min(cap, base * 2 ** Math.min(w.consecutiveFailures - 1, 30)));
    this.#options.log.warn('watch failed; restarting', { resource: w.resource, error: message, delayMs: delay, failures: w.consecutiveFailures });
    if (w.restartTimer !== undefined) this.#timers.clearTimeout(w.restartTimer);
    w.restartTimer = this.#timers.setTimeout(() => {
      w.restartTimer = undefined;
      if (!this.#running) return;
      w.restarts++;
      void this.#start(w);
    }, delay);
  }

  #armResync(): void {
    const interval = this.#options.resyncIntervalMs ?? DEFAULT_RESYNC_INTERVAL_MS;
    if (interval <= 0 || !this.#running) return;
    this.#resyncTimer = this.#timers.setTimeout(() => {
      if (!this.#running) return;
      const n = this.resync();
      if (n > 0) this.#options.log.info('re-reported unschedulable pods', { pods: n });
      this.#armResync();
    }, interval);
  }

  #onPod(pod: V1Pod): void {
    if (this.#running && isUnschedulable(pod)) this.#emitPod(pod);
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
      this.#emit({ ...base, event: 'deleted' });
      return;
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

/** A KubeConfig for the connection. */
function kubeConfig(connection: KubernetesConnection): KubeConfig {
  const kc = new KubeConfig();
  if (connection.kind === 'in-cluster') {
    kc.loadFromCluster();
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
