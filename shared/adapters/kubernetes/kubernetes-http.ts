/**
 * The HTTPS transport of the Lambdas' Kubernetes adapter (`kubernetes-cluster.ts`): JSON requests to the API server
 * over `node:https` with the cluster CA and a bearer token, on one keep-alive agent.
 *
 * Why not client-node's generated API classes: they cannot be tree-shaken (`CoreV1Api` is one 375 KB class, the
 * `ObservableAPI`/`ObjectParamAPI` wrappers and the model serializer add 800 KB, its node-fetch transport brings
 * whatwg-url and a 260 KB Unicode table), so `KubeConfig` + four API classes were 1.85 MB of each controller bundle for
 * the 17 requests Skiff makes (docs/architecture.md#lambda-bundles). The requests are the same REST paths,
 * query parameters and media types client-node sent; `@kubernetes/client-node` stays the client of the relay
 * (`cluster-watch.ts`, a container where size does not matter) and gives this adapter its wire types.
 *
 * Errors: an answer outside 2xx rejects with a {@link KubernetesHttpError} carrying `code` (the HTTP status) and `body`
 * (the `Status` object's text), the shape `kubernetes-errors.ts` reads from client-node's `ApiException`; a request
 * that gets no answer (DNS, TLS, connection refused) rejects with Node's error, which has no numeric `code`.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** Media types of the request bodies Skiff sends. */
export const MEDIA_TYPE = {
  json: 'application/json',
  /** JSON merge patch (RFC 7386). */
  mergePatch: 'application/merge-patch+json',
  /** Server-side apply (the body is JSON, which is YAML). */
  apply: 'application/apply-patch+yaml',
} as const;

/** A request's query parameters; `undefined` values are left out. */
export type Query = Readonly<Record<string, string | number | boolean | undefined>>;

/** The API server answered outside 2xx. */
export class KubernetesHttpError extends Error {
  /**
   * @param code the HTTP status
   * @param body the response body as text (a `meta/v1` Status as JSON, usually)
   */
  constructor(
    readonly code: number,
    readonly body: string,
    what: string,
  ) {
    super(`${what}: HTTP ${code}`);
    this.name = 'KubernetesHttpError';
  }
}

/** Options of {@link KubernetesHttp}. */
export interface KubernetesHttpOptions {
  /** API server URL, `https://…` (or `http://` with `allowInsecureHttp`). */
  readonly server: string;
  /** The cluster CA bundle, base64-encoded PEM. @default the system roots */
  readonly caData?: string;
  /** A fresh bearer token, called before every request. */
  readonly token: () => Promise<string>;
  /** Allow a plain `http://` server (tests against a local fake). @default false */
  readonly allowInsecureHttp?: boolean;
}

/** JSON over HTTPS to one API server. */
export class KubernetesHttp {
  readonly #base: URL;
  readonly #insecure: boolean;
  readonly #agent: HttpAgent;
  readonly #token: () => Promise<string>;

  /** @throws {RangeError} when `server` is `http://` without `allowInsecureHttp` */
  constructor(options: KubernetesHttpOptions) {
    this.#base = new URL(options.server);
    this.#insecure = this.#base.protocol === 'http:';
    if (this.#insecure && options.allowInsecureHttp !== true) throw new RangeError(`refusing plain-HTTP Kubernetes server ${options.server} (set allowInsecureHttp for tests)`);
    this.#agent = this.#insecure ? new HttpAgent({ keepAlive: true }) : new HttpsAgent({ keepAlive: true, ...(options.caData ? { ca: Buffer.from(options.caData, 'base64') } : {}) });
    this.#token = options.token;
  }

  /**
   * Sends one request and parses the JSON answer.
   * @param path the REST path, e.g. `/api/v1/nodes/ip-10-0-1-2` (segments already encoded)
   * @param contentType the body's media type. @default {@link MEDIA_TYPE.json}
   * @returns the parsed body (`undefined` when empty)
   * @throws {KubernetesHttpError} on an answer outside 2xx · Node's error when no answer came
   */
  async request<T = unknown>(method: string, path: string, options: { readonly query?: Query; readonly body?: unknown; readonly contentType?: string } = {}): Promise<T> {
    const url = new URL(path, this.#base);
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const headers: Record<string, string> = { Accept: MEDIA_TYPE.json, Authorization: `Bearer ${await this.#token()}` };
    if (body !== undefined) {
      headers['Content-Type'] = options.contentType ?? MEDIA_TYPE.json;
      headers['Content-Length'] = String(Buffer.byteLength(body));
    }
    const send = this.#insecure ? httpRequest : httpsRequest;
    const response = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = send(url, { method, headers, agent: this.#agent }, (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
    if (response.status < 200 || response.status > 299) throw new KubernetesHttpError(response.status, response.text, `${method} ${url.pathname}`);
    return (response.text === '' ? undefined : JSON.parse(response.text)) as T;
  }
}

/** One path segment, encoded (object names are DNS names, but a caller's typo must not change the path). */
export const segment = (s: string): string => encodeURIComponent(s);
