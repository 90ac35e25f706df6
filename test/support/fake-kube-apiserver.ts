/**
 * A fake kube-apiserver on a local `node:http` server, for adapter tests of `KubernetesCluster`. It answers the
 * real REST paths with the real response shapes, checked against k8s.io/apiserver behaviour:
 *
 * - Lists (`GET /api/v1/pods`, `/api/v1/nodes`, `/apis/apps/v1/daemonsets`, `/apis/policy/v1/poddisruptionbudgets`,
 *   `/apis/karpenter.sh/v1/nodepools`, `/apis/karpenter.k8s.aws/v1/ec2nodeclasses`, `/apis/karpenter.sh/v1/nodeclaims`)
 *   are `{kind: <Kind>List, apiVersion, metadata: {resourceVersion, continue?, remainingItemCount?}, items}`,
 *   chunked by `limit` with an opaque `continue` token. Items of built-in kinds carry no `apiVersion`/`kind`; custom
 *   objects do (they are unstructured). `fieldSelector` supports `status.phase!=X` and `status.phase=X` terms.
 * - Errors are `Status` objects (`{kind: Status, apiVersion: v1, metadata: {}, status: Failure, message, reason,
 *   details?, code}`) with the matching HTTP code.
 * - `PATCH` checks the Content-Type: Nodes accept merge and strategic merge patches, custom objects merge patches
 *   and server-side apply (which needs `fieldManager`, and creates the object when missing); JSON Patch and anything
 *   else is `415 UnsupportedMediaType`. `POST` bodies must be `application/json`.
 * - Eviction (`POST /api/v1/namespaces/{ns}/pods/{name}/eviction`): 201 and the pod is deleted; 429 with reason
 *   `TooManyRequests` and a DisruptionBudget cause when the pod is in {@link FakeKubeApiServer.pdbBlocked}; 404.
 * - Binding (`POST /api/v1/namespaces/{ns}/pods/{name}/binding`, a `v1` `Binding` naming `target.name`): 201 and the
 *   pod gets `spec.nodeName`, phase `Running` and `PodScheduled=True`; 409 `Conflict` when it is bound already; 404.
 * - Every request must carry `Authorization: Bearer k8s-aws-v1.…` (401 `Unauthorized` otherwise).
 * - Served over TLS when {@link FakeKubeApiServerOptions.tls} is given (the URL is then `https://`).
 *
 * - Watches (`GET /api/v1/pods?watch=true`, `/api/v1/nodes?watch=true`, with `resourceVersion` and `fieldSelector`)
 *   stream chunked JSON lines `{"type":"ADDED"|"MODIFIED"|"DELETED"|"BOOKMARK"|"ERROR","object":{…}}` as the
 *   watch cache does: events after the requested resourceVersion are replayed first; a resourceVersion older than
 *   the last {@link FakeKubeApiServer.compact} gets an `ERROR` event carrying a `410 Expired` Status and the stream
 *   ends; an object that stops matching the field selector arrives as `DELETED` (and one that starts, as `ADDED`).
 *   {@link FakeKubeApiServer.bookmark} sends a BOOKMARK, {@link FakeKubeApiServer.endWatches} ends the streams (the
 *   server-side watch timeout). Every `put`, `remove`, DELETE and eviction is an event.
 *
 * Faults are injected with {@link FakeKubeApiServer.failNext}; every request is recorded.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

/** A JSON object. */
export type Json = Record<string, unknown>;

/** One request the fake received. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingMessage['headers'];
  /** Parsed JSON body, or the raw text when it is not JSON, or undefined when empty. */
  readonly body: unknown;
}

/** A fault to answer instead of the normal response. */
export interface Fault {
  readonly method?: string;
  /** The request path (exact) or a pattern. */
  readonly path: string | RegExp;
  readonly status: number;
  readonly reason: string;
  readonly message?: string;
  /** A further condition on the request (e.g. only continued pages). */
  readonly match?: (request: RecordedRequest) => boolean;
  /** How many matching requests fail. @default 1 */
  readonly times?: number;
}

/** A Status object, as the API server writes it. */
export function statusBody(code: number, reason: string, message: string, details?: Json): Json {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: code < 400 ? 'Success' : 'Failure', message, reason, ...(details ? { details } : {}), code };
}

/** Where each resource lives. */
interface Resource {
  readonly kind: string;
  readonly apiVersion: string;
  /** True for custom resources (list items keep apiVersion and kind). */
  readonly custom: boolean;
}

const RESOURCES: Readonly<Record<string, Resource>> = {
  pods: { kind: 'Pod', apiVersion: 'v1', custom: false },
  nodes: { kind: 'Node', apiVersion: 'v1', custom: false },
  events: { kind: 'Event', apiVersion: 'v1', custom: false },
  daemonsets: { kind: 'DaemonSet', apiVersion: 'apps/v1', custom: false },
  poddisruptionbudgets: { kind: 'PodDisruptionBudget', apiVersion: 'policy/v1', custom: false },
  nodepools: { kind: 'NodePool', apiVersion: 'karpenter.sh/v1', custom: true },
  ec2nodeclasses: { kind: 'EC2NodeClass', apiVersion: 'karpenter.k8s.aws/v1', custom: true },
  nodeclaims: { kind: 'NodeClaim', apiVersion: 'karpenter.sh/v1', custom: true },
};

/** The fake server: its URL, stored objects, recorded requests and fault injection. */
export interface FakeKubeApiServer {
  readonly url: string;
  /** Stored objects per plural (`pods`, `nodes`, …), keyed by `namespace/name` or `name`. */
  readonly objects: Readonly<Record<string, Map<string, Json>>>;
  readonly requests: RecordedRequest[];
  /** `namespace/name` of pods whose eviction a PDB currently forbids (429). */
  readonly pdbBlocked: Set<string>;
  /** Stores an object (wire form; namespaced objects need `metadata.namespace`). */
  put(plural: string, object: Json): void;
  /**
   * Stores an object without telling the open watches: a watch event the client missed (a dropped connection's
   * last event, an informer bug). A list still returns it, and later watch events carry later resourceVersions.
   */
  putUnwatched(plural: string, object: Json): void;
  /** The stored object, if any. */
  get(plural: string, key: string): Json | undefined;
  /** Answers the next `times` matching requests with a Status error. */
  failNext(fault: Fault): void;
  /** Requests whose path matches. */
  requestsTo(method: string, path: string | RegExp): RecordedRequest[];
  /** Deletes an object (a `DELETED` watch event), if it exists. */
  remove(plural: string, key: string): void;
  /** Open watch streams of `plural`. */
  watchers(plural: string): number;
  /** Sends a BOOKMARK with the current resourceVersion to every open watch of `plural`. */
  bookmark(plural: string): void;
  /** Ends every open watch stream (of `plural`, or all), as the API server's watch timeout does. */
  endWatches(plural?: string): void;
  /**
   * Forgets the event history, as etcd compaction does at the current revision: a watch from an older
   * resourceVersion gets `410 Expired` and must relist; one from the current resourceVersion (a list's, taken after
   * the compaction) needs no history and is served.
   */
  compact(): void;
  /** The latest resourceVersion handed out. */
  resourceVersion(): string;
  close(): Promise<void>;
}

/** Options of {@link startFakeKubeApiServer}. */
export interface FakeKubeApiServerOptions {
  /** Accepts the bearer token. @default tokens starting with `k8s-aws-v1.` */
  readonly acceptToken?: (token: string) => boolean;
  /** PEM key and certificate: serve HTTPS (as EKS does) instead of plain HTTP. */
  readonly tls?: { readonly key: string; readonly cert: string };
}

const NAME = '([^/]+)';
const ROUTES: readonly { readonly pattern: RegExp; readonly plural: string; readonly namespaced: boolean; readonly sub?: string }[] = [
  { pattern: new RegExp(`^/api/v1/namespaces/${NAME}/pods/${NAME}/eviction$`), plural: 'pods', namespaced: true, sub: 'eviction' },
  { pattern: new RegExp(`^/api/v1/namespaces/${NAME}/pods/${NAME}/binding$`), plural: 'pods', namespaced: true, sub: 'binding' },
  { pattern: new RegExp(`^/api/v1/namespaces/${NAME}/events(?:/${NAME})?$`), plural: 'events', namespaced: true },
  { pattern: new RegExp(`^/api/v1/namespaces/${NAME}/pods/${NAME}$`), plural: 'pods', namespaced: true },
  { pattern: new RegExp(`^/api/v1/nodes(?:/${NAME})?$`), plural: 'nodes', namespaced: false },
  { pattern: /^\/api\/v1\/pods$/, plural: 'pods', namespaced: false },
  { pattern: /^\/apis\/apps\/v1\/daemonsets$/, plural: 'daemonsets', namespaced: false },
  { pattern: /^\/apis\/policy\/v1\/poddisruptionbudgets$/, plural: 'poddisruptionbudgets', namespaced: false },
  { pattern: new RegExp(`^/apis/karpenter\\.sh/v1/nodepools(?:/${NAME})?$`), plural: 'nodepools', namespaced: false },
  { pattern: new RegExp(`^/apis/karpenter\\.k8s\\.aws/v1/ec2nodeclasses(?:/${NAME})?$`), plural: 'ec2nodeclasses', namespaced: false },
  { pattern: new RegExp(`^/apis/karpenter\\.sh/v1/nodeclaims(?:/${NAME})?(?:/(status))?$`), plural: 'nodeclaims', namespaced: false },
];

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const out: Json = typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as Json) } : {};
  for (const [k, v] of Object.entries(patch as Json)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

const keyOf = (o: Json): string => {
  const m = o.metadata as { name: string; namespace?: string };
  return m.namespace ? `${m.namespace}/${m.name}` : m.name;
};

/**
 * Starts the fake on `127.0.0.1` and a free port.
 * @example
 * const api = await startFakeKubeApiServer();
 * api.put('nodes', node('ip-10-0-0-1'));
 * const cluster = new KubernetesCluster({ server: api.url, token: async () => 'k8s-aws-v1.x', clock });
 */
export async function startFakeKubeApiServer(options: FakeKubeApiServerOptions = {}): Promise<FakeKubeApiServer> {
  const acceptToken = options.acceptToken ?? ((t: string) => t.startsWith('k8s-aws-v1.'));
  const objects: Record<string, Map<string, Json>> = Object.fromEntries(Object.keys(RESOURCES).map((p) => [p, new Map<string, Json>()]));
  const requests: RecordedRequest[] = [];
  const pdbBlocked = new Set<string>();
  const faults: { fault: Fault; left: number }[] = [];
  let rv = 1000;
  let uid = 1;

  const stamp = (plural: string, object: Json, existing?: Json): Json => {
    const r = RESOURCES[plural]!;
    const meta = { ...((object.metadata as Json) ?? {}) };
    const prior = (existing?.metadata as Json | undefined) ?? {};
    meta.uid = prior.uid ?? meta.uid ?? `uid-${uid++}`;
    meta.creationTimestamp = prior.creationTimestamp ?? meta.creationTimestamp ?? '2024-01-02T03:04:05Z';
    meta.resourceVersion = String(rv++);
    return { ...object, apiVersion: r.apiVersion, kind: r.kind, metadata: meta };
  };

  /** Every change, in resourceVersion order, for watch replay. */
  let history: { readonly plural: string; readonly rv: number; readonly before: Json | undefined; readonly after: Json | undefined }[] = [];
  /** Watches from a resourceVersion below this get 410 Expired (the revision of the last compaction). */
  let compactedBelow = 0;
  const watches = new Set<{ readonly plural: string; readonly selector: string | null; readonly res: ServerResponse }>();

  const notify = (plural: string, before: Json | undefined, after: Json | undefined): void => {
    const rvOf = (o: Json) => Number((o.metadata as Json).resourceVersion);
    const entry = { plural, rv: after ? rvOf(after) : rv++, before, after };
    // a deletion gets its own resourceVersion, as in etcd
    const deleted = after === undefined && before ? { ...before, metadata: { ...(before.metadata as Json), resourceVersion: String(entry.rv) } } : undefined;
    const stored = deleted ? { ...entry, before: deleted } : entry;
    history.push(stored);
    for (const w of watches) if (w.plural === plural) writeEvent(w, stored.before, stored.after);
  };

  const put = (plural: string, object: Json): void => {
    const before = objects[plural]!.get(keyOf(object));
    objects[plural]!.set(keyOf(object), stamp(plural, object, before));
    notify(plural, before, objects[plural]!.get(keyOf(object)));
  };

  /** The field-selector terms the fake understands: `status.phase` and `spec.nodeName`, `=`, `==` or `!=`. */
  const parseSelector = (selector: string | null): ((o: Json) => boolean) | string => {
    if (!selector) return () => true;
    const tests: ((o: Json) => boolean)[] = [];
    for (const term of selector.split(',')) {
      const m = /^(status\.phase|spec\.nodeName)(!=|==?)([\w.-]*)$/.exec(term);
      if (!m) return `"${term}" is not a known field selector: only "status.phase" and "spec.nodeName"`;
      const field = m[1] === 'status.phase' ? (o: Json) => String((o.status as Json | undefined)?.phase ?? '') : (o: Json) => String((o.spec as Json | undefined)?.nodeName ?? '');
      tests.push((o) => (field(o) === m[3]) === (m[2] !== '!='));
    }
    return (o) => tests.every((t) => t(o));
  };

  /** One watch event line for a change seen through the watch's field selector. */
  function writeEvent(w: { readonly selector: string | null; readonly res: ServerResponse }, before: Json | undefined, after: Json | undefined): void {
    const matches = parseSelector(w.selector) as (o: Json) => boolean;
    const was = before !== undefined && matches(before);
    const is = after !== undefined && matches(after);
    const type = was && is ? 'MODIFIED' : is ? 'ADDED' : was ? 'DELETED' : undefined;
    if (!type) return;
    // an object leaving the selector is DELETED in its new state
    const object = type === 'DELETED' && after ? after : (after ?? before);
    w.res.write(`${JSON.stringify({ type, object })}\n`);
  }

  function watch(r: RecordedRequest, res: ServerResponse, plural: string): void {
    const matches = parseSelector(r.query.get('fieldSelector'));
    if (typeof matches === 'string') return fail(res, 400, 'BadRequest', matches);
    const from = r.query.get('resourceVersion') ?? '';
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders(); // the API server answers a watch at once, before the first event
    const w = { plural, selector: r.query.get('fieldSelector'), res };
    if (from === '' || from === '0') {
      for (const o of objects[plural]!.values()) if (matches(o)) res.write(`${JSON.stringify({ type: 'ADDED', object: o })}\n`);
    } else if (Number(from) < compactedBelow) {
      const status = statusBody(410, 'Expired', `too old resource version: ${from} (${compactedBelow})`);
      res.end(`${JSON.stringify({ type: 'ERROR', object: status })}\n`);
      return;
    } else {
      for (const h of history) if (h.plural === plural && h.rv > Number(from)) writeEvent(w, h.before, h.after);
    }
    watches.add(w);
    res.on('close', () => watches.delete(w));
  }

  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      if (text !== '') {
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
      }
      const url = new URL(req.url ?? '/', 'http://fake');
      const recorded: RecordedRequest = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, body };
      requests.push(recorded);
      try {
        handle(recorded, res);
      } catch (e) {
        send(res, 500, statusBody(500, 'InternalError', `fake apiserver bug: ${e instanceof Error ? e.stack : String(e)}`));
      }
    });
  };
  const server = options.tls ? createTlsServer({ key: options.tls.key, cert: options.tls.cert }, listener) : createServer(listener);

  const send = (res: ServerResponse, code: number, body: Json): void => {
    res.writeHead(code, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const fail = (res: ServerResponse, code: number, reason: string, message: string, details?: Json): void => send(res, code, statusBody(code, reason, message, details));

  function handle(r: RecordedRequest, res: ServerResponse): void {
    const auth = r.headers.authorization ?? '';
    if (!auth.startsWith('Bearer ') || !acceptToken(auth.slice('Bearer '.length))) return fail(res, 401, 'Unauthorized', 'Unauthorized');
    const fault = faults.find((f) => (f.fault.method === undefined || f.fault.method === r.method) && (typeof f.fault.path === 'string' ? f.fault.path === r.path : f.fault.path.test(r.path)) && (f.fault.match?.(r) ?? true));
    if (fault) {
      fault.left--;
      if (fault.left <= 0) faults.splice(faults.indexOf(fault), 1);
      return fail(res, fault.fault.status, fault.fault.reason, fault.fault.message ?? fault.fault.reason);
    }
    const watchPlural = r.path === '/api/v1/pods' ? 'pods' : r.path === '/api/v1/nodes' ? 'nodes' : undefined;
    if (r.method === 'GET' && watchPlural && ['true', '1'].includes(r.query.get('watch') ?? '')) return watch(r, res, watchPlural);
    for (const route of ROUTES) {
      const m = route.pattern.exec(r.path);
      if (!m) continue;
      const groups = m.slice(1);
      if (route.sub === 'eviction') return evict(r, res, groups[0]!, groups[1]!);
      if (route.sub === 'binding') return bind(r, res, groups[0]!, groups[1]!);
      const namespace = route.namespaced ? groups[0] : undefined;
      const name = route.namespaced ? groups[1] : groups[0];
      const subresource = route.plural === 'nodeclaims' ? groups[1] : undefined;
      return crud(r, res, route.plural, namespace, name, subresource);
    }
    return fail(res, 404, 'NotFound', `the server could not find the requested resource (${r.method} ${r.path})`);
  }

  function crud(r: RecordedRequest, res: ServerResponse, plural: string, namespace: string | undefined, name: string | undefined, subresource: string | undefined): void {
    const resource = RESOURCES[plural]!;
    const store = objects[plural]!;
    const key = namespace ? `${namespace}/${name}` : name;
    const notFound = () => fail(res, 404, 'NotFound', `${plural}${resource.apiVersion.includes('/') ? `.${resource.apiVersion.split('/')[0]}` : ''} "${name}" not found`, { name, kind: plural });
    if (r.method === 'GET' && name === undefined) return list(r, res, plural, namespace);
    if (r.method === 'GET') {
      const o = store.get(key!);
      return o ? send(res, 200, o) : notFound();
    }
    if (r.method === 'POST' && name === undefined) {
      if (!String(r.headers['content-type']).startsWith('application/json')) return fail(res, 415, 'UnsupportedMediaType', `unsupported media type ${r.headers['content-type']}`);
      const o = r.body as Json;
      const meta = (o.metadata ?? {}) as Json;
      if (namespace && meta.namespace !== undefined && meta.namespace !== namespace) {
        return fail(res, 400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent on the request');
      }
      const object = { ...o, metadata: { ...meta, ...(namespace ? { namespace } : {}) } };
      if (store.has(keyOf(object))) return fail(res, 409, 'AlreadyExists', `${plural} "${meta.name}" already exists`, { name: meta.name, kind: plural });
      put(plural, object);
      return send(res, 201, store.get(keyOf(object))!);
    }
    if (r.method === 'DELETE' && name !== undefined) {
      const o = store.get(key!);
      if (!o) return notFound();
      store.delete(key!);
      notify(plural, o, undefined);
      return send(res, 200, resource.custom ? o : statusBody(200, '', '', { name, kind: plural }));
    }
    if (r.method === 'PATCH' && name !== undefined) return patch(r, res, plural, key!, name, subresource);
    return fail(res, 405, 'MethodNotAllowed', `${r.method} is not supported on ${r.path}`);
  }

  function patch(r: RecordedRequest, res: ServerResponse, plural: string, key: string, name: string, subresource: string | undefined): void {
    const store = objects[plural]!;
    const resource = RESOURCES[plural]!;
    const type = String(r.headers['content-type'] ?? '').split(';')[0]!.trim();
    const allowed = resource.custom
      ? ['application/merge-patch+json', 'application/apply-patch+yaml']
      : ['application/merge-patch+json', 'application/strategic-merge-patch+json'];
    if (!allowed.includes(type)) return fail(res, 415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${allowed.join(', ')}`);
    const existing = store.get(key);
    const body = r.body as Json;
    if (type === 'application/apply-patch+yaml') {
      if (!r.query.get('fieldManager')) return fail(res, 400, 'BadRequest', 'PATCH /apply requests require fieldManager');
      if (!existing && subresource === 'status') return fail(res, 404, 'NotFound', `${plural} "${name}" not found`);
      const base = existing ?? { metadata: { name } };
      const applied = subresource === 'status' ? { ...base, status: body.status } : { ...(mergePatch(base, { metadata: body.metadata, spec: body.spec }) as Json), status: base.status };
      put(plural, applied);
      return send(res, existing ? 200 : 201, store.get(key)!);
    }
    if (!existing) return fail(res, 404, 'NotFound', `${plural} "${name}" not found`, { name, kind: plural });
    const wantRv = (body.metadata as Json | undefined)?.resourceVersion;
    const haveRv = (existing.metadata as Json).resourceVersion;
    if (wantRv !== undefined && wantRv !== haveRv) {
      return fail(res, 409, 'Conflict', `Operation cannot be fulfilled on ${plural} "${name}": the object has been modified; please apply your changes to the latest version and try again`);
    }
    put(plural, mergePatch(existing, body) as Json);
    return send(res, 200, store.get(key)!);
  }

  function list(r: RecordedRequest, res: ServerResponse, plural: string, namespace: string | undefined): void {
    const resource = RESOURCES[plural]!;
    let items = [...objects[plural]!.values()].filter((o) => namespace === undefined || (o.metadata as Json).namespace === namespace);
    const selector = parseSelector(r.query.get('fieldSelector'));
    if (typeof selector === 'string') return fail(res, 400, 'BadRequest', selector);
    items = items.filter(selector);
    const limit = Number(r.query.get('limit') ?? '0');
    const cont = r.query.get('continue');
    let start = 0;
    if (cont) {
      const decoded = JSON.parse(Buffer.from(cont, 'base64').toString('utf8')) as { start: number; plural: string };
      if (decoded.plural !== plural) return fail(res, 400, 'BadRequest', 'continue token does not match this list');
      start = decoded.start;
    }
    const end = limit > 0 ? Math.min(items.length, start + limit) : items.length;
    const page = items.slice(start, end).map((o) => (resource.custom ? o : Object.fromEntries(Object.entries(o).filter(([k]) => k !== 'apiVersion' && k !== 'kind'))));
    const more = end < items.length;
    // the list's resourceVersion is the latest write's (etcd's current revision), so a watch from it misses nothing
    const metadata: Json = { resourceVersion: String(rv - 1) };
    if (more) {
      metadata.continue = Buffer.from(JSON.stringify({ start: end, plural })).toString('base64');
      metadata.remainingItemCount = items.length - end;
    }
    send(res, 200, { kind: `${resource.kind}List`, apiVersion: resource.apiVersion, metadata, items: page });
  }

  function evict(r: RecordedRequest, res: ServerResponse, namespace: string, name: string): void {
    if (r.method !== 'POST') return fail(res, 405, 'MethodNotAllowed', 'eviction accepts POST only');
    if (!String(r.headers['content-type']).startsWith('application/json')) return fail(res, 415, 'UnsupportedMediaType', 'eviction needs application/json');
    const body = r.body as Json;
    const meta = (body.metadata ?? {}) as Json;
    if (body.kind !== 'Eviction' || body.apiVersion !== 'policy/v1' || meta.name !== name) {
      return fail(res, 400, 'BadRequest', `name in URL does not match name in Eviction object (or not a policy/v1 Eviction)`);
    }
    const key = `${namespace}/${name}`;
    if (!objects.pods!.has(key)) return fail(res, 404, 'NotFound', `pods "${name}" not found`, { name, kind: 'pods' });
    if (pdbBlocked.has(key)) {
      return fail(res, 429, 'TooManyRequests', "Cannot evict pod as it would violate the pod's disruption budget.", {
        causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget web-pdb needs 2 healthy pods and has 2 currently' }],
      });
    }
    const evicted = objects.pods!.get(key);
    objects.pods!.delete(key);
    notify('pods', evicted, undefined);
    send(res, 201, statusBody(201, '', ''));
  }

  function bind(r: RecordedRequest, res: ServerResponse, namespace: string, name: string): void {
    if (r.method !== 'POST') return fail(res, 405, 'MethodNotAllowed', 'binding accepts POST only');
    const body = r.body as Json;
    const target = (body.target ?? {}) as Json;
    if (body.kind !== 'Binding' || typeof target.name !== 'string' || target.name === '') return fail(res, 400, 'BadRequest', 'not a v1 Binding with target.name');
    const key = `${namespace}/${name}`;
    const pod = objects.pods!.get(key);
    if (!pod) return fail(res, 404, 'NotFound', `pods "${name}" not found`, { name, kind: 'pods' });
    if ((pod.spec as Json | undefined)?.nodeName) return fail(res, 409, 'Conflict', `Operation cannot be fulfilled on pods/binding "${name}": pod ${name} is already assigned to node "${String((pod.spec as Json).nodeName)}"`);
    const status = (pod.status ?? {}) as Json;
    const conditions = ((status.conditions ?? []) as Json[]).filter((c) => c.type !== 'PodScheduled');
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    put('pods', { ...pod, spec: { ...(pod.spec as Json), nodeName: target.name }, status: { ...status, phase: 'Running', conditions: [...conditions, { type: 'PodScheduled', status: 'True', lastTransitionTime: now }] } });
    send(res, 201, statusBody(201, '', ''));
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    objects,
    requests,
    pdbBlocked,
    put,
    putUnwatched: (plural, object) => {
      objects[plural]!.set(keyOf(object), stamp(plural, object, objects[plural]!.get(keyOf(object))));
    },
    get: (plural, key) => objects[plural]?.get(key),
    failNext: (fault) => faults.push({ fault, left: fault.times ?? 1 }),
    requestsTo: (method, path) => requests.filter((q) => q.method === method && (typeof path === 'string' ? q.path === path : path.test(q.path))),
    remove: (plural, key) => {
      const before = objects[plural]?.get(key);
      if (!before) return;
      objects[plural]!.delete(key);
      notify(plural, before, undefined);
    },
    watchers: (plural) => [...watches].filter((w) => w.plural === plural).length,
    bookmark: (plural) => {
      const kind = RESOURCES[plural]!;
      for (const w of watches) {
        if (w.plural === plural) w.res.write(`${JSON.stringify({ type: 'BOOKMARK', object: { kind: kind.kind, apiVersion: kind.apiVersion, metadata: { resourceVersion: String(rv - 1) } } })}\n`);
      }
    },
    endWatches: (plural) => {
      for (const w of [...watches]) {
        if (plural !== undefined && w.plural !== plural) continue;
        watches.delete(w);
        w.res.end();
      }
    },
    compact: () => {
      history = [];
      // `rv` is the next revision to hand out; the current one (what lists and bookmarks report) stays watchable,
      // or a relist could never resume its watch and would get 410 again, forever
      compactedBelow = rv - 1;
    },
    resourceVersion: () => String(rv - 1),
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const w of watches) w.res.end();
        watches.clear();
        server.close((e) => (e ? reject(e) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/**
 * Waits for an asynchronous outcome of a watch (an event delivered over the socket, a re-watch) without asserting
 * anything about how long it takes: `check` is retried until it stops throwing, and its last error is thrown if it
 * never does within `timeoutMs` (a bound against hangs, not a timing assertion).
 * @example await eventually(() => expect(api.watchers('pods')).toBe(1));
 */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
}
