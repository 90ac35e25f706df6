/**
 * The Lambdas' requests to the API server, sent by `@kubernetes/client-node` 1.4.0 through the configuration its
 * `KubeConfig.makeApiClient` builds for every API class — the cluster as the base server, the `KubeConfig` as the
 * authentication (CA, bearer token from the registered authenticator, TLS options, proxies), client-node's HTTP
 * library (node-fetch) as the transport — and failed with client-node's `ApiException`.
 *
 * What it leaves out is the generated per-group API classes (`CoreV1Api`, `AppsV1Api`, `PolicyV1Api`,
 * `CustomObjectsApi`). Each is one class holding every operation of its group (`CoreV1Api`: about 250, 375 KB
 * minified) plus its Observable and object-parameter wrappers, and a bundler cannot drop the methods a program never
 * calls: the four were 0.9 MB of each controller bundle for the 17 operations Skiff sends
 * (docs/architecture.md#lambda-bundles). Here each operation is named by its method, path and query, as client-node's
 * own generic `KubernetesObjectApi` (`dist/object.js`) does, and the body is the API's JSON both ways: no model
 * classes, so nothing to convert back to wire form (`kubernetes-cluster.ts` parses objects with zod).
 *
 * Skiff deliberately differs from the generated classes in two ways: it asks for `Accept: application/json` only
 * (they also offer YAML and protobuf; the API server answers JSON to both), and a failed request's `ApiException`
 * always carries the response body (a generated 401 carries none), so the Status `reason` reaches the error.
 */
import type { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { ApiException } from '@kubernetes/client-node/dist/gen/apis/exception.js';
import type { Configuration } from '@kubernetes/client-node/dist/gen/configuration.js';
import { HttpMethod } from '@kubernetes/client-node/dist/gen/http/http.js';

/** Media types of request bodies (`Content-Type`), as the API server names them. */
export const MEDIA_TYPE = {
  /** A whole object (create). */
  json: 'application/json',
  /** JSON merge patch (RFC 7386): maps merge, `null` deletes a key, lists are replaced whole. */
  mergePatch: 'application/merge-patch+json',
  /** Server-side apply; a JSON body is YAML. */
  applyPatch: 'application/apply-patch+yaml',
} as const;

/** One API request. */
export interface KubernetesRequest {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** The path with its parameters already encoded (see {@link apiPath}), e.g. `/api/v1/namespaces/default/events`. */
  readonly path: string;
  /** Query parameters; undefined ones are left out. */
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  /** The body, sent as JSON. */
  readonly body?: unknown;
  /** The body's media type. @default {@link MEDIA_TYPE}.json */
  readonly contentType?: (typeof MEDIA_TYPE)[keyof typeof MEDIA_TYPE];
}

/**
 * A path from its segments, each one URI-encoded (`apiPath('api', 'v1', 'namespaces', ns, 'pods', name, 'eviction')`
 * → `/api/v1/namespaces/kube-system/pods/coredns-1/eviction`).
 */
export function apiPath(...segments: readonly string[]): string {
  return `/${segments.map((s) => encodeURIComponent(s)).join('/')}`;
}

/**
 * Sends {@link KubernetesRequest}s with a client-node configuration. Build it as client-node builds its API classes:
 * `kubeConfig.makeApiClient(KubernetesRequests)`.
 * @example
 * const api = kc.makeApiClient(KubernetesRequests);
 * const nodes = await api.send<{ items: unknown[] }>({ method: 'GET', path: '/api/v1/nodes', query: { limit: 500 } });
 */
export class KubernetesRequests {
  readonly #configuration: Configuration;

  /** @param configuration what `KubeConfig.makeApiClient` passes every API class */
  constructor(configuration: Configuration) {
    this.#configuration = configuration;
  }

  /**
   * Sends the request and returns the response's JSON (undefined for an empty body).
   * @throws {ApiException} (client-node's) on a status outside 2xx: `code` is the HTTP status, `body` the response
   *   text (the API server's `Status` object as JSON) · the transport's error when no response came (DNS, TLS,
   *   connection refused) · a `SyntaxError` when a 2xx body is not JSON
   */
  async send<T>(request: KubernetesRequest): Promise<T> {
    const config = this.#configuration;
    const context = config.baseServer.makeRequestContext(request.path, HttpMethod[request.method]);
    context.setHeaderParam('Accept', 'application/json');
    for (const [name, value] of Object.entries(request.query ?? {})) if (value !== undefined) context.setQueryParam(name, String(value));
    if (request.body !== undefined) {
      context.setHeaderParam('Content-Type', request.contentType ?? MEDIA_TYPE.json);
      context.setBody(JSON.stringify(request.body));
    }
    // As the generated classes do: the BearerToken method (unset by KubeConfig) and then the default (the KubeConfig).
    await config.authMethods.BearerToken?.applySecurityAuthentication(context);
    await config.authMethods.default?.applySecurityAuthentication(context);
    const response = await config.httpApi.send(context).toPromise();
    const text = await response.body.text();
    if (response.httpStatusCode < 200 || response.httpStatusCode > 299) {
      throw new ApiException(response.httpStatusCode, 'Unsuccessful HTTP request', text, response.headers);
    }
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }
}

/** {@link KubernetesRequests} on a `KubeConfig` (its current cluster and user). */
export function kubernetesRequests(kc: KubeConfig): KubernetesRequests {
  return kc.makeApiClient(KubernetesRequests);
}
