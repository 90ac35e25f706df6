/**
 * The real Kubernetes API behind the Cluster port, on `@kubernetes/client-node` 1.4.0: its `KubeConfig`, transport
 * and errors, with each request named by path (`kubernetes-requests.ts`, which says why not its generated API
 * classes). Its contract is the simulated cluster's (`shared/sim/simulated-cluster.ts`); errors leave translated
 * (`kubernetes-errors.ts`).
 *
 * ## Connection
 * A `KubeConfig` built in memory from the cluster endpoint, its CA (base64 PEM, as EKS `DescribeCluster` returns
 * `certificateAuthority.data`) and a bearer-token provider called before every request (for EKS: `EksTokenCache`
 * in `shared/adapters/aws/eks-token.ts`, which refreshes the 15-minute token). The provider is plugged in as a
 * client-node `Authenticator`, so no kubeconfig file or `aws` CLI is needed in the Lambda.
 *
 * ## Reads
 * Every list is paginated with `limit=500` and `continue` (the API server's chunking; a `410 Expired` continue
 * token restarts the list once). Pods are listed with `fieldSelector=status.phase!=Succeeded,status.phase!=Failed`.
 * NodePools, EC2NodeClasses, DaemonSets, PodDisruptionBudgets and Pods are parsed with the project's zod schemas;
 * an object that does not parse is logged (`warn`) and skipped, never fatal for the list.
 *
 * ## Writes
 * - `patchNode`: a JSON merge patch (`application/merge-patch+json`, RFC 7386): `metadata.labels` and
 *   `metadata.annotations` merge with `null` deleting a key; `spec.taints` is a list, so a merge patch replaces it
 *   whole. Every patch names its media type (`kubernetes-requests.ts` `MEDIA_TYPE`).
 * - `forceDeletePod`: `DELETE …/pods/{name}?gracePeriodSeconds=n` (n ≥ 1), for a drain whose terminationGracePeriod
 *   is running out; 404 is a value.
 * - `evictPod`: `POST …/pods/{name}/eviction` with a `policy/v1` Eviction; 429 (a PDB forbids it now) and 404 are
 *   values, not errors (Karpenter's terminator retries a 429 with backoff; docs/karpenter-semantics.md#termination).
 * - `recordEvent`: a `core/v1` Event with a deterministic name (`<object>.<hash of type, reason, object, message>`),
 *   so a repeat bumps `count` and `lastTimestamp` of the existing Event instead of adding one (client-go's
 *   `EventCorrelator` does this in memory; a Lambda has no memory between invocations, so the name carries it).
 * - `mirrorNodeClaim`: server-side apply (`application/apply-patch+yaml`, `fieldManager=skiff`, `force=true`) of the
 *   NodeClaim and then of its `/status` subresource: create-or-update in one request each, no resourceVersion
 *   needed, and re-applying the same record is a no-op. Then a JSON merge patch stamps the record version on it
 *   (annotation `skiff.dev/nodeclaim-version`), last, so the stamp says the object *and* its status were written:
 *   `listNodeClaimMirrors` reads it back, and the lifecycle controller rewrites only mirrors whose record changed.
 *   (The stamp is not part of the applied configuration, so the next apply leaves it alone.)
 */
import { createHash } from 'node:crypto';
// client-node's modules, not its index: the index re-exports attach/exec/port-forward (ws), cp (tar-fs), informers,
// metrics and YAML helpers, whose modules have top-level effects a bundler keeps (docs/architecture.md#lambda-bundles).
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import type { User } from '@kubernetes/client-node/dist/config_types.js';
import type { CoreV1Event } from '@kubernetes/client-node/dist/gen/models/CoreV1Event.js';
import { ec2NodeClassSchema, type EC2NodeClass } from '../../core/api/ec2nodeclass.js';
import type { NodeClaim } from '../../core/api/nodeclaim.js';
import { nodePoolSchema, type NodePool } from '../../core/api/nodepool.js';
import { pdbSchema, type PodDisruptionBudget } from '../../core/api/pdb.js';
import { daemonSetSchema, type DaemonSet } from '../../core/api/workloads.js';
import { TERMINATION_FINALIZER } from '../../core/api/labels.js';
import { isConflictError, isNotFoundError } from '../../core/errors.js';
import type { Clock } from '../../ports/clock.js';
import type { Cluster, ClusterEvent, ClusterNode, ClusterPod, EvictionOutcome, NodeClaimMirrorRef, NodeClaimOwner, NodePatch, PodEventTimes } from '../../ports/cluster.js';
import { httpStatusOf, kubernetesError } from './kubernetes-errors.js';
import { parseApiObject, podEventTime, toClusterNode, toClusterPod, type ParseOutcome, type WireObject } from './kubernetes-objects.js';
import { apiPath, kubernetesRequests, MEDIA_TYPE, type KubernetesRequest, type KubernetesRequests } from './kubernetes-requests.js';
import { NODECLAIM_RESOURCE, NODECLAIM_STATE_ANNOTATION, nodeClaimMirror } from './nodeclaim-mirror.js';

/** Items per list page (`limit`). 500 is client-go's pager default (`k8s.io/client-go/tools/pager` `defaultPageSize`). */
export const PAGE_SIZE = 500;
/** Field selector of {@link KubernetesCluster.lastPodEventTimes}: every pod bound to a node, terminal ones included. */
export const BOUND_POD_SELECTOR = 'spec.nodeName!=';
/** Field selector of {@link KubernetesCluster.listPods}: every pod that is not terminal. */
export const NON_TERMINAL_POD_SELECTOR = 'status.phase!=Succeeded,status.phase!=Failed';
/**
 * Annotation on a NodeClaim mirror: the record `version` it was completely written from (object, then status), as
 * a decimal string. Written by a merge patch after both applies.
 */
export const NODECLAIM_VERSION_ANNOTATION = 'skiff.dev/nodeclaim-version';
/** Field manager of Skiff's writes (server-side apply ownership, `managedFields`). */
export const FIELD_MANAGER = 'skiff';
/** `source.component` / `reportingComponent` of the Events Skiff writes. */
export const EVENT_COMPONENT = 'skiff';
/** Annotation on an Event carrying {@link ClusterEvent.details} as JSON (dropped beyond {@link MAX_DETAILS_BYTES}). */
export const EVENT_DETAILS_ANNOTATION = 'skiff.dev/details';
/** Largest details annotation written, bytes (annotations share a 256 KiB budget per object). */
export const MAX_DETAILS_BYTES = 32 * 1024;
/** Namespace of Events about cluster-scoped objects (Nodes, NodePools), where kubectl and kubelet put them. */
export const CLUSTER_SCOPED_EVENT_NAMESPACE = 'default';
/** Attempts at bumping an existing Event's count when another writer changed it in between (409). */
const EVENT_BUMP_ATTEMPTS = 3;
/** Name of the in-memory auth provider the token callback is registered under. */
const TOKEN_AUTH_PROVIDER = 'skiff-bearer-token';

/** What the adapter logs: objects skipped because they do not parse. Structurally a subset of the Lambda `Log`. */
export interface KubernetesLog {
  warn(message: string, attributes?: Record<string, unknown>): void;
}

/** Options of {@link KubernetesCluster}. */
export interface KubernetesClusterOptions {
  /** API server URL, e.g. `https://ABCDEF.gr7.eu-west-1.eks.amazonaws.com`. */
  readonly server: string;
  /** The cluster CA bundle, base64-encoded PEM (EKS `cluster.certificateAuthority.data`). @default the system roots */
  readonly caData?: string;
  /** A fresh bearer token (`k8s-aws-v1.…` on EKS); called before every request, so it should cache. */
  readonly token: () => Promise<string>;
  readonly clock: Clock;
  /** Where skipped objects are reported. @default `console.warn` */
  readonly log?: KubernetesLog;
  /** Items per list page. @default {@link PAGE_SIZE} */
  readonly pageSize?: number;
  /**
   * Allow a plain `http://` server (tests against a local fake). client-node only speaks HTTP when the cluster is
   * marked `skipTLSVerify`, so this sets that flag — never enable it for a real cluster. @default false
   */
  readonly allowInsecureHttp?: boolean;
}

/** A page of a list response. */
interface ListPage {
  readonly items?: readonly unknown[];
  readonly metadata?: { readonly continue?: string };
}

const consoleLog: KubernetesLog = { warn: (message, attributes) => console.warn(message, attributes ?? {}) };

/**
 * The Kubernetes API as Skiff uses it (Cluster port), plus the writes of the lifecycle and disruption
 * controllers: Node patch and delete, pod eviction, PDB listing, and the NodeClaim mirror.
 * @example
 * const tokens = new EksTokenCache({ clusterName: 'prod', region: 'eu-west-1', clock: systemClock });
 * const cluster = new KubernetesCluster({ server: endpoint, caData, token: () => tokens.token(), clock: systemClock, log });
 * const pools = await cluster.listNodePools();
 */
export class KubernetesCluster implements Cluster<NodePool, EC2NodeClass, DaemonSet> {
  readonly #api: KubernetesRequests;
  readonly #clock: Clock;
  readonly #log: KubernetesLog;
  readonly #pageSize: number;

  /**
   * @throws {RangeError} when `server` is `http://` without `allowInsecureHttp`
   */
  constructor(options: KubernetesClusterOptions) {
    const insecure = options.server.startsWith('http:');
    if (insecure && options.allowInsecureHttp !== true) throw new RangeError(`refusing plain-HTTP Kubernetes server ${options.server} (set allowInsecureHttp for tests)`);
    const kc = new KubeConfig();
    const user: User = { name: 'skiff', authProvider: { name: TOKEN_AUTH_PROVIDER, config: {} } };
    kc.loadFromClusterAndUser({ name: 'eks', server: options.server, skipTLSVerify: insecure, ...(options.caData ? { caData: options.caData } : {}) }, user);
    const authenticator: Parameters<KubeConfig['addAuthenticator']>[0] = {
      isAuthProvider: (u) => (u.authProvider as { name?: unknown } | undefined)?.name === TOKEN_AUTH_PROVIDER,
      applyAuthentication: async (_u, opts) => {
        const token = await options.token();
        opts.headers = { ...opts.headers, Authorization: `Bearer ${token}` };
      },
    };
    kc.addAuthenticator(authenticator);
    this.#api = kubernetesRequests(kc);
    this.#clock = options.clock;
    this.#log = options.log ?? consoleLog;
    this.#pageSize = options.pageSize ?? PAGE_SIZE;
  }

  // ---- reads ---------------------------------------------------------------------------------------------------

  /**
   * Every `karpenter.sh/v1` NodePool, parsed and defaulted (`nodePoolSchema`); malformed ones are logged and skipped.
   * @throws {ThrottledError} on 429 or 5xx (retry later) · {@link KubernetesApiError} on 401/403 and others
   */
  async listNodePools(): Promise<NodePool[]> {
    const items = await this.#list('NodePools', apiPath('apis', 'karpenter.sh', 'v1', 'nodepools'));
    return this.#parseAll(items, (i) => parseApiObject(nodePoolSchema, { apiVersion: 'karpenter.sh/v1', kind: 'NodePool' }, i));
  }

  /**
   * Every `karpenter.k8s.aws/v1` EC2NodeClass, parsed (`ec2NodeClassSchema`); malformed ones are logged and skipped.
   * @throws as {@link KubernetesCluster.listNodePools}
   */
  async listNodeClasses(): Promise<EC2NodeClass[]> {
    const items = await this.#list('EC2NodeClasses', apiPath('apis', 'karpenter.k8s.aws', 'v1', 'ec2nodeclasses'));
    return this.#parseAll(items, (i) => parseApiObject(ec2NodeClassSchema, { apiVersion: 'karpenter.k8s.aws/v1', kind: 'EC2NodeClass' }, i));
  }

  /**
   * Every `apps/v1` DaemonSet in every namespace, parsed (`daemonSetSchema`); malformed ones are logged and skipped.
   * @throws as {@link KubernetesCluster.listNodePools}
   */
  async listDaemonSets(): Promise<DaemonSet[]> {
    const items = await this.#list('DaemonSets', apiPath('apis', 'apps', 'v1', 'daemonsets'));
    return this.#parseAll(items, (i) => parseApiObject(daemonSetSchema, { apiVersion: 'apps/v1', kind: 'DaemonSet' }, i));
  }

  /**
   * Every Pending or Running pod (`fieldSelector=status.phase!=Succeeded,status.phase!=Failed`), spec parsed with
   * `podSchema`; a pod that does not parse is logged and skipped (Skiff will not provision for it).
   * @throws as {@link KubernetesCluster.listNodePools}
   */
  async listPods(): Promise<ClusterPod[]> {
    const items = await this.#list('Pods', apiPath('api', 'v1', 'pods'), NON_TERMINAL_POD_SELECTOR);
    return this.#parseAll(items, toClusterPod);
  }

  /**
   * The latest pod event per node from the timestamps bound pods still show (`podEventTime`): one paged list of every
   * pod with `fieldSelector=spec.nodeName!=` (terminal ones included, Job pods stay until their TTL). Not complete: a
   * pod deleted and gone between two reads leaves no time (the disruption controller notices its absence itself).
   * @throws as {@link KubernetesCluster.listNodePools}
   */
  async lastPodEventTimes(): Promise<PodEventTimes> {
    const items = await this.#list('Pods', apiPath('api', 'v1', 'pods'), BOUND_POD_SELECTOR);
    const byNode = new Map<string, number>();
    for (const item of items) {
      const event = podEventTime(item);
      if (event && event.at > (byNode.get(event.node) ?? 0)) byNode.set(event.node, event.at);
    }
    return { byNode, complete: false };
  }

  /**
   * Every Node, allocatable in canonical units (cpu millicores, memory MiB); a Node with a malformed quantity or
   * taint is logged and skipped.
   * @throws as {@link KubernetesCluster.listNodePools}
   */
  async listNodes(): Promise<ClusterNode[]> {
    const items = await this.#list('Nodes', apiPath('api', 'v1', 'nodes'));
    return this.#parseAll(items, toClusterNode);
  }

  /**
   * Every `policy/v1` PodDisruptionBudget in every namespace, parsed (`pdbSchema`); malformed ones are logged and
   * skipped.
   * @throws as {@link KubernetesCluster.listNodePools}
   */
  async listPodDisruptionBudgets(): Promise<PodDisruptionBudget[]> {
    const items = await this.#list('PodDisruptionBudgets', apiPath('apis', 'policy', 'v1', 'poddisruptionbudgets'));
    return this.#parseAll(items, (i) => parseApiObject(pdbSchema, { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget' }, i));
  }

  // ---- writes --------------------------------------------------------------------------------------------------

  /**
   * Merges `labels` and `annotations` (null deletes a key) into the Node and, when `taints` is given, replaces its
   * taints (and `finalizers`, likewise a list), with one JSON merge patch (`{metadata: {labels, annotations,
   * finalizers}, spec: {taints}}`). Lists are replaced without a resourceVersion precondition: a taint or finalizer
   * another controller adds between the caller's read and this patch is lost.
   * @throws {NotFoundError} when the Node does not exist · {ThrottledError} on 429/5xx · {KubernetesApiError} otherwise
   */
  async patchNode(name: string, patch: NodePatch): Promise<void> {
    const metadata = {
      ...(patch.labels !== undefined ? { labels: patch.labels } : {}),
      ...(patch.annotations !== undefined ? { annotations: patch.annotations } : {}),
      ...(patch.finalizers !== undefined ? { finalizers: [...patch.finalizers] } : {}),
    };
    const body = {
      ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
      ...(patch.taints !== undefined ? { spec: { taints: patch.taints.map((t) => ({ key: t.key, effect: t.effect, ...(t.value !== undefined ? { value: t.value } : {}) })) } } : {}),
    };
    try {
      await this.#api.send(mergePatch(apiPath('api', 'v1', 'nodes', name), body, { fieldManager: FIELD_MANAGER }));
    } catch (e) {
      throw kubernetesError(e, `PATCH Node ${name}`, `Node/${name}`);
    }
  }

  /**
   * Deletes the Node; a Node already gone is not an error.
   * @throws {ThrottledError} on 429/5xx · {KubernetesApiError} otherwise
   */
  async deleteNode(name: string): Promise<void> {
    try {
      await this.#api.send({ method: 'DELETE', path: apiPath('api', 'v1', 'nodes', name) });
    } catch (e) {
      if (httpStatusOf(e) === 404) return;
      throw kubernetesError(e, `DELETE Node ${name}`, `Node/${name}`);
    }
  }

  /**
   * Evicts the pod through the Eviction API (`POST /api/v1/namespaces/{ns}/pods/{name}/eviction`), which honours
   * PodDisruptionBudgets.
   * @returns `'evicted'` (201), `'blocked'` (429: a PDB forbids it now — try later), or `'gone'` (404)
   * @throws {ThrottledError} on 5xx (e.g. 500 when several PDBs select the pod) · {KubernetesApiError} otherwise
   */
  async evictPod(namespace: string, name: string): Promise<EvictionOutcome> {
    const body = { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } };
    try {
      await this.#api.send({ method: 'POST', path: apiPath('api', 'v1', 'namespaces', namespace, 'pods', name, 'eviction'), body });
      return 'evicted';
    } catch (e) {
      const status = httpStatusOf(e);
      if (status === 429) return 'blocked';
      if (status === 404) return 'gone';
      throw kubernetesError(e, `evict Pod ${namespace}/${name}`, `Pod/${namespace}/${name}`);
    }
  }

  /**
   * Deletes the pod with `gracePeriodSeconds` (`DELETE /api/v1/namespaces/{ns}/pods/{name}`), which no
   * PodDisruptionBudget can refuse.
   * @returns `'deleted'`, or `'gone'` (404)
   * @throws {ThrottledError} on 429/5xx · {KubernetesApiError} otherwise
   */
  async forceDeletePod(namespace: string, name: string, gracePeriodSeconds: number): Promise<'deleted' | 'gone'> {
    try {
      await this.#api.send({ method: 'DELETE', path: apiPath('api', 'v1', 'namespaces', namespace, 'pods', name), query: { gracePeriodSeconds: Math.max(1, Math.floor(gracePeriodSeconds)) } });
      return 'deleted';
    } catch (e) {
      if (httpStatusOf(e) === 404) return 'gone';
      throw kubernetesError(e, `DELETE Pod ${namespace}/${name}`, `Pod/${namespace}/${name}`);
    }
  }

  /**
   * Writes a `core/v1` Event about `event.object` (`Kind/namespace/name`, or `Kind/name` for cluster-scoped objects,
   * whose Events go to the `default` namespace). A repeat of the same type, reason, object and message bumps the
   * existing Event's `count` and `lastTimestamp` (see the module doc). `details` go to the `skiff.dev/details`
   * annotation as JSON. Node Events carry the node name as `involvedObject.uid`, as kubelet's do, so
   * `kubectl describe node` lists them; other kinds carry no uid (the port does not know it).
   * @throws {RangeError} when `event.object` is not `Kind/name` or `Kind/namespace/name` ·
   *   {ThrottledError} on 429/5xx · {KubernetesApiError} otherwise
   */
  async recordEvent(event: ClusterEvent): Promise<void> {
    const parts = event.object.split('/');
    if (parts.length < 2 || parts.length > 3 || parts.some((p) => p === '')) {
      throw new RangeError(`event object ${JSON.stringify(event.object)} must be Kind/name or Kind/namespace/name`);
    }
    const [kind, first, second] = parts as [string, string, string | undefined];
    const objectNamespace = second === undefined ? undefined : first;
    const objectName = second ?? first;
    const namespace = objectNamespace ?? CLUSTER_SCOPED_EVENT_NAMESPACE;
    const hash = createHash('sha256').update([event.type, event.reason, event.object, event.message].join('\n')).digest('hex').slice(0, 16);
    const name = `${objectName.slice(0, 253 - 17)}.${hash}`;
    const now = new Date(this.#clock.now());
    const details = event.details === undefined ? undefined : JSON.stringify(event.details);
    const apiVersion = EVENT_API_VERSIONS[kind];
    const body: CoreV1Event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace, ...(details !== undefined && details.length <= MAX_DETAILS_BYTES ? { annotations: { [EVENT_DETAILS_ANNOTATION]: details } } : {}) },
      involvedObject: {
        kind,
        name: objectName,
        ...(objectNamespace !== undefined ? { namespace: objectNamespace } : {}),
        ...(apiVersion !== undefined ? { apiVersion } : {}),
        ...(kind === 'Node' ? { uid: objectName } : {}),
      },
      type: event.type,
      reason: event.reason,
      message: event.message,
      source: { component: EVENT_COMPONENT },
      reportingComponent: EVENT_COMPONENT,
      reportingInstance: EVENT_COMPONENT,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    const what = `Event ${namespace}/${name}`;
    try {
      await this.#api.send({ method: 'POST', path: apiPath('api', 'v1', 'namespaces', namespace, 'events'), body });
      return;
    } catch (e) {
      const error = kubernetesError(e, `POST ${what}`, `Event/${namespace}/${name}`);
      if (!isConflictError(error)) throw error;
    }
    for (let attempt = 1; ; attempt++) {
      try {
        const path = apiPath('api', 'v1', 'namespaces', namespace, 'events', name);
        const existing = await this.#api.send<CoreV1Event>({ method: 'GET', path });
        const bump = { metadata: { resourceVersion: existing.metadata.resourceVersion }, count: (existing.count ?? 1) + 1, lastTimestamp: now.toISOString() };
        await this.#api.send(mergePatch(path, bump));
        return;
      } catch (e) {
        const error = kubernetesError(e, `bump ${what}`, `Event/${namespace}/${name}`);
        // 404: the Event expired (the API server's event TTL, 1 h by default) between our create and read.
        if (isNotFoundError(error)) return this.#createEventOnce(namespace, body, what);
        if (!isConflictError(error) || attempt >= EVENT_BUMP_ATTEMPTS) throw error;
      }
    }
  }

  async #createEventOnce(namespace: string, body: CoreV1Event, what: string): Promise<void> {
    try {
      await this.#api.send({ method: 'POST', path: apiPath('api', 'v1', 'namespaces', namespace, 'events'), body });
    } catch (e) {
      throw kubernetesError(e, `POST ${what}`, `Event/${namespace}/${body.metadata.name ?? ''}`);
    }
  }

  /**
   * Creates or updates the `karpenter.sh/v1` NodeClaim mirroring `claim` (see `nodeclaim-mirror.ts` for the
   * object): server-side apply of metadata + spec, then of `status` (a subresource on the NodeClaim CRD, so a
   * separate request). Idempotent. A claim in state `Deleted` deletes its mirror instead.
   * @throws {KubernetesApiError} 422 `Invalid` when the spec differs from the stored one (the NodeClaim CRD makes
   *   `spec` immutable), and on other 4xx · {ThrottledError} on 429/5xx
   */
  async mirrorNodeClaim(claim: NodeClaim, owner?: NodeClaimOwner): Promise<void> {
    if (claim.state === 'Deleted') return this.deleteNodeClaimMirror(claim.name);
    const mirror = nodeClaimMirror(claim, owner?.nodePoolUid);
    const key = `NodeClaim/${claim.name}`;
    const path = nodeClaimPath(claim.name);
    const apply = { fieldManager: FIELD_MANAGER, force: true };
    try {
      await this.#api.send({ method: 'PATCH', path, query: apply, body: mirror.object, contentType: MEDIA_TYPE.applyPatch });
    } catch (e) {
      throw kubernetesError(e, `apply ${key}`, key);
    }
    try {
      const status = { apiVersion: mirror.object.apiVersion, kind: mirror.object.kind, metadata: { name: claim.name }, status: mirror.status };
      await this.#api.send({ method: 'PATCH', path: `${path}/status`, query: apply, body: status, contentType: MEDIA_TYPE.applyPatch });
    } catch (e) {
      throw kubernetesError(e, `apply ${key} status`, key);
    }
    try {
      const stamp = { metadata: { annotations: { [NODECLAIM_VERSION_ANNOTATION]: String(claim.version) } } };
      await this.#api.send(mergePatch(path, stamp, { fieldManager: FIELD_MANAGER }));
    } catch (e) {
      throw kubernetesError(e, `stamp ${key} version`, key);
    }
  }

  /**
   * Every `karpenter.sh/v1` NodeClaim Skiff mirrors: those carrying the `skiff.dev/nodeclaim-state` annotation
   * (NodeClaims of another controller, e.g. Karpenter itself, are left out), with the record version stamped on
   * each (undefined when missing or not a non-negative integer: the mirror is rewritten) and, for one a user deleted
   * (its finalizer holds it), its `deletionTimestamp` in epoch ms.
   * @throws {NotFoundError} when the NodeClaim CRD is not installed (404) · {ThrottledError} on 429/5xx ·
   *   {KubernetesApiError} on other 4xx
   */
  async listNodeClaimMirrors(): Promise<NodeClaimMirrorRef[]> {
    const items = await this.#list('NodeClaims', apiPath('apis', NODECLAIM_RESOURCE.group, NODECLAIM_RESOURCE.version, NODECLAIM_RESOURCE.plural));
    const out: NodeClaimMirrorRef[] = [];
    for (const item of items) {
      const metadata = item['metadata'] as { name?: unknown; annotations?: Record<string, unknown>; deletionTimestamp?: unknown } | undefined;
      const annotations = metadata?.annotations ?? {};
      if (typeof metadata?.name !== 'string' || annotations[NODECLAIM_STATE_ANNOTATION] === undefined) continue;
      const stamp = annotations[NODECLAIM_VERSION_ANNOTATION];
      const version = typeof stamp === 'string' && /^\d{1,15}$/.test(stamp) ? Number(stamp) : undefined;
      const deletion = typeof metadata.deletionTimestamp === 'string' ? Date.parse(metadata.deletionTimestamp) : Number.NaN;
      out.push({ name: metadata.name, ...(version !== undefined ? { version } : {}), ...(Number.isNaN(deletion) ? {} : { deletionTimestamp: deletion }) });
    }
    return out;
  }

  /**
   * Removes Skiff's `karpenter.sh/termination` finalizer from the NodeClaim mirror named `name` (read, then a JSON merge
   * patch of the list without it; other finalizers are kept) and deletes it; one already gone is not an error.
   * @throws {ThrottledError} on 429/5xx · {KubernetesApiError} otherwise
   */
  async deleteNodeClaimMirror(name: string): Promise<void> {
    try {
      const path = nodeClaimPath(name);
      const current = await this.#api.send<{ metadata?: { finalizers?: readonly string[] } }>({ method: 'GET', path });
      const finalizers = current.metadata?.finalizers ?? [];
      if (finalizers.includes(TERMINATION_FINALIZER)) {
        const body = { metadata: { finalizers: finalizers.filter((f) => f !== TERMINATION_FINALIZER) } };
        await this.#api.send(mergePatch(path, body, { fieldManager: FIELD_MANAGER }));
      }
      await this.#api.send({ method: 'DELETE', path });
    } catch (e) {
      if (httpStatusOf(e) === 404) return;
      throw kubernetesError(e, `DELETE NodeClaim ${name}`, `NodeClaim/${name}`);
    }
  }

  // ---- helpers -------------------------------------------------------------------------------------------------

  /**
   * Every item of a list (`GET path?limit=…&fieldSelector=…`), following `continue` tokens until the list is
   * complete; items as the API server sent them (objects only). A `410 Expired` on a continued page (the token
   * outlived etcd's compaction window) restarts the list from the beginning, once.
   */
  async #list(what: string, path: string, fieldSelector?: string): Promise<WireObject[]> {
    for (let restart = 0; ; restart++) {
      const out: WireObject[] = [];
      let cont: string | undefined;
      try {
        do {
          const result = await this.#api.send<ListPage>({ method: 'GET', path, query: { limit: this.#pageSize, fieldSelector, continue: cont } });
          for (const item of result.items ?? []) if (typeof item === 'object' && item !== null) out.push(item as WireObject);
          cont = result.metadata?.continue;
          if (cont === '') cont = undefined;
        } while (cont !== undefined);
        return out;
      } catch (e) {
        if (cont !== undefined && httpStatusOf(e) === 410 && restart === 0) continue;
        throw kubernetesError(e, `LIST ${what}`, what);
      }
    }
  }

  /** Keeps the objects that parse; logs one warning per object that does not. */
  #parseAll<T>(items: readonly WireObject[], parse: (item: WireObject) => ParseOutcome<T>): T[] {
    const out: T[] = [];
    for (const item of items) {
      const result = parse(item);
      if (result.ok) out.push(result.value);
      else this.#log.warn(`Skipping ${result.problem}`, { problem: result.problem });
    }
    return out;
  }
}

/** `apiVersion` of the kinds Skiff writes Events about (for `involvedObject.apiVersion`). */
const EVENT_API_VERSIONS: Readonly<Record<string, string>> = {
  Pod: 'v1',
  Node: 'v1',
  NodePool: 'karpenter.sh/v1',
  NodeClaim: 'karpenter.sh/v1',
  EC2NodeClass: 'karpenter.k8s.aws/v1',
  Deployment: 'apps/v1',
  StatefulSet: 'apps/v1',
  DaemonSet: 'apps/v1',
  Job: 'batch/v1',
  PodDisruptionBudget: 'policy/v1',
};

/** A JSON merge patch of the object at `path`. */
function mergePatch(path: string, body: unknown, query?: KubernetesRequest['query']): KubernetesRequest {
  return { method: 'PATCH', path, body, contentType: MEDIA_TYPE.mergePatch, ...(query ? { query } : {}) };
}

/** The path of the cluster-scoped NodeClaim `name`. */
function nodeClaimPath(name: string): string {
  return apiPath('apis', NODECLAIM_RESOURCE.group, NODECLAIM_RESOURCE.version, NODECLAIM_RESOURCE.plural, name);
}
