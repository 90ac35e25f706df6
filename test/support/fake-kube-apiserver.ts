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
 * - Every request must carry `Authorization: Bearer k8s-aws-v1.…` (401 `Unauthorized` otherwise).
 *
 * Faults are injected with {@link FakeKubeApiServer.failNext}; every request is recorded.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
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
  /** The stored object, if any. */
  get(plural: string, key: string): Json | undefined;
  /** Answers the next `times` matching requests with a Status error. */
  failNext(fault: Fault): void;
  /** Requests whose path matches. */
  requestsTo(method: string, path: string | RegExp): RecordedRequest[];
  close(): Promise<void>;
}

/** Options of {@link startFakeKubeApiServer}. */
export interface FakeKubeApiServerOptions {
  /** Accepts the bearer token. @default tokens starting with `k8s-aws-v1.` */
  readonly acceptToken?: (token: string) => boolean;
}

const NAME = '([^/]+)';
const ROUTES: readonly { readonly pattern: RegExp; readonly plural: string; readonly namespaced: boolean; readonly sub?: string }[] = [
  { pattern: new RegExp(`^/api/v1/namespaces/${NAME}/pods/${NAME}/eviction$`), plural: 'pods', namespaced: true, sub: 'eviction' },
  { pattern: new RegExp(`^/api/v1/namespaces/${NAME}/events(?:/${NAME})?$`), plural: 'events', namespaced: true },
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

  const put = (plural: string, object: Json): void => {
    objects[plural]!.set(keyOf(object), stamp(plural, object, objects[plural]!.get(keyOf(object))));
  };

  const server = createServer((req, res) => {
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
  });

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
    for (const route of ROUTES) {
      const m = route.pattern.exec(r.path);
      if (!m) continue;
      const groups = m.slice(1);
      if (route.sub === 'eviction') return evict(r, res, groups[0]!, groups[1]!);
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
    const selector = r.query.get('fieldSelector');
    if (selector) {
      for (const term of selector.split(',')) {
        const m = /^status\.phase(!=|==?)(\w+)$/.exec(term);
        if (!m) return fail(res, 400, 'BadRequest', `"${term}" is not a known field selector: only "status.phase"`);
        items = items.filter((o) => (((o.status as Json | undefined)?.phase ?? '') === m[2]) === (m[1] !== '!='));
      }
    }
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
    const metadata: Json = { resourceVersion: String(rv) };
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
    objects.pods!.delete(key);
    send(res, 201, statusBody(201, '', ''));
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    objects,
    requests,
    pdbBlocked,
    put,
    get: (plural, key) => objects[plural]?.get(key),
    failNext: (fault) => faults.push({ fault, left: fault.times ?? 1 }),
    requestsTo: (method, path) => requests.filter((q) => q.method === method && (typeof path === 'string' ? q.path === path : path.test(q.path))),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((e) => (e ? reject(e) : resolve()));
        server.closeAllConnections();
      }),
  };
}
