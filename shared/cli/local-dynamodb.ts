/**
 * An embedded DynamoDB for the simulation and the adapter tests: dynalite (in-process, in-memory, the real DynamoDB
 * JSON protocol) on 127.0.0.1 with an ephemeral port, Skiff's table already created. The same DynamoDB stores run
 * against it as against AWS. It lives in the CLI (the local composition root) because it wires an AWS adapter's
 * table definition, which `shared/sim` may not import.
 *
 * The DocumentClient it hands out talks to dynalite without TCP: its smithy request handler passes each signed
 * HTTP request (method, path, headers, JSON body) to dynalite's own HTTP request listener as in-memory request and
 * response objects. Everything on both sides of the socket still runs — the SDK's serialization, signing, retries
 * and error parsing; dynalite's header and signature-presence checks, validation, expression parsing and storage —
 * only the loopback socket and the HTTP parser are skipped (they were most of a simulated minute's cost). The HTTP
 * server listens as well, for clients built from {@link LocalDynamoDb.endpoint}.
 */
import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { IncomingHttpHeaders, RequestListener, Server } from 'node:http';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import dynalite from 'dynalite';
import { SkiffError } from '../core/errors.js';
import { TRANSLATE_CONFIG, tableDefinition } from '../adapters/aws/table.js';

/** Table name {@link startDynalite} creates unless told otherwise. */
export const LOCAL_TABLE_NAME = 'skiff';

/** A running embedded DynamoDB. */
export interface LocalDynamoDb {
  /** `http://127.0.0.1:<port>`. */
  readonly endpoint: string;
  /** Name of the table created from `tableDefinition`. */
  readonly tableName: string;
  /**
   * DocumentClient on the embedded DynamoDB, translated with `TRANSLATE_CONFIG`: in-process (no socket) unless
   * `transport: 'http'` was asked for.
   */
  readonly client: DynamoDBDocumentClient;
  /** Destroys the client, drops open connections and stops the server (the data is gone). Idempotent. */
  close(): Promise<void>;
}

/** Options of {@link startDynalite}. */
export interface StartDynaliteOptions {
  /** @default {@link LOCAL_TABLE_NAME} */
  readonly tableName?: string;
  /**
   * How {@link LocalDynamoDb.client} reaches dynalite: `in-process` hands each request to dynalite's HTTP request
   * listener directly (see {@link inProcessRequestHandler}); `http` goes through the loopback socket like any client
   * of {@link LocalDynamoDb.endpoint}.
   * @default 'in-process'
   */
  readonly transport?: 'in-process' | 'http';
}

/**
 * Client configuration for an embedded DynamoDB at `endpoint` that never looks at the environment for anything
 * that could reach the network: explicit endpoint, region `us-west-2`, dummy static credentials (so neither the
 * credential chain nor IMDS is consulted), `defaultsMode: 'standard'` (the `auto` mode may query IMDS), two
 * attempts (a local server is either up or not; retrying longer only slows failing tests), short timeouts.
 * @param endpoint e.g. `http://127.0.0.1:45678`
 */
export function localClientConfig(endpoint: string): DynamoDBClientConfig {
  return {
    endpoint,
    region: 'us-west-2',
    credentials: { accessKeyId: 'skiff-local', secretAccessKey: 'skiff-local' },
    defaultsMode: 'standard',
    retryMode: 'standard',
    maxAttempts: 2,
    useFipsEndpoint: false,
    useDualstackEndpoint: false,
    endpointDiscoveryEnabled: false,
    accountIdEndpointMode: 'disabled',
    requestHandler: { connectionTimeout: 1_000, requestTimeout: 15_000 },
  };
}

/**
 * Starts dynalite in this process (in-memory store, tables `ACTIVE` at once) on 127.0.0.1 with an ephemeral port,
 * creates the table from `tableDefinition` and waits until it and its index are `ACTIVE`. Measured on Node 20:
 * ~10 ms per start, ~65 ms for the first in a process, plus ~0.4 s to import dynalite and the SDK once.
 * Close it with `close()`, or the process will not exit.
 * @throws {SkiffError} when the server cannot listen or the table cannot be created (the server is closed first)
 * @example
 * const db = await startDynalite();
 * const store = new DynamoDbNodeClaimStore({ client: db.client, tableName: db.tableName, cluster: 'sim' });
 * …
 * await db.close();
 */
export async function startDynalite(options: StartDynaliteOptions = {}): Promise<LocalDynamoDb> {
  const tableName = options.tableName ?? LOCAL_TABLE_NAME;
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  const port = await listen(server);
  const endpoint = `http://127.0.0.1:${port}`;
  const listener = server.listeners('request')[0] as RequestListener | undefined;
  const inProcess = (options.transport ?? 'in-process') === 'in-process' && listener !== undefined;
  const base = new DynamoDBClient(inProcess ? { ...localClientConfig(endpoint), requestHandler: inProcessRequestHandler(listener) } : localClientConfig(endpoint));
  const client = DynamoDBDocumentClient.from(base, TRANSLATE_CONFIG);
  let closing: Promise<void> | undefined;
  // DynamoDBDocumentClient.destroy() is a no-op: the base client owns the sockets.
  const close = (): Promise<void> => (closing ??= shutdown(server, base));
  try {
    await base.send(new CreateTableCommand(tableDefinition(tableName)));
    await waitUntilActive(base, tableName);
  } catch (error) {
    await close();
    throw new SkiffError(`embedded DynamoDB: cannot create table ${tableName}`, { cause: error });
  }
  return { endpoint, tableName, client, close };
}

/** The SDK's request handler type (smithy `HttpHandler`), as the DynamoDB client's configuration names it. */
type RequestHandler = NonNullable<DynamoDBClientConfig['requestHandler']>;

/** The parts of a smithy `HttpRequest` the in-process handler reads. */
interface SignedRequest {
  readonly method: string;
  readonly path: string;
  readonly query?: Readonly<Record<string, string | readonly string[] | null>>;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: unknown;
}

/**
 * A smithy request handler that serves each request with dynalite's HTTP request listener in this process: the
 * request becomes an in-memory `IncomingMessage` look-alike (method, url, lower-case headers; the body arrives as one
 * `data` event, then `end`), the response a `ServerResponse` look-alike collecting the status, headers and body,
 * which come back to the SDK as its `HttpResponse` (`body` as bytes, which the SDK's deserializers accept). The
 * listener uses only these members (dynalite 4 `index.js httpHandler`/`sendData`). An exception the listener throws
 * (dynalite throws what it cannot answer) rejects the request instead of crashing the process.
 * @param listener dynalite's `request` listener
 */
export function inProcessRequestHandler(listener: RequestListener): RequestHandler {
  const handler = {
    handle(request: SignedRequest, options?: { abortSignal?: { aborted: boolean } }): Promise<{ response: { statusCode: number; headers: Record<string, string>; body: Uint8Array } }> {
      return new Promise((resolve, reject) => {
        if (options?.abortSignal?.aborted) {
          const aborted = new Error('Request aborted');
          aborted.name = 'AbortError';
          reject(aborted);
          return;
        }
        const headers: IncomingHttpHeaders = {};
        for (const [k, v] of Object.entries(request.headers)) headers[k.toLowerCase()] = v;
        const req = Object.assign(new EventEmitter(), { method: request.method, url: urlOf(request), headers });
        const res = new InProcessResponse((statusCode, responseHeaders, body) => resolve({ response: { statusCode, headers: responseHeaders, body } }));
        try {
          (listener as unknown as (req: EventEmitter, res: InProcessResponse) => void)(req, res);
          const body = bodyBytes(request.body);
          if (body.byteLength > 0) req.emit('data', body);
          req.emit('end');
        } catch (error) {
          reject(error);
        }
      });
    },
    updateHttpClientConfig(): void {},
    httpHandlerConfigs: () => ({}),
    destroy(): void {},
  };
  return handler as unknown as RequestHandler;
}

/** The `ServerResponse` members dynalite uses; `end` hands the response over. */
class InProcessResponse {
  statusCode = 200;
  /** dynalite stores the negotiated content type here before answering. */
  contentType: string | undefined;
  private readonly headers: Record<string, string> = {};

  constructor(private readonly done: (statusCode: number, headers: Record<string, string>, body: Uint8Array) => void) {}

  setHeader(name: string, value: string | number): this {
    this.headers[name.toLowerCase()] = String(value);
    return this;
  }

  end(body?: string | Uint8Array): this {
    this.done(this.statusCode, this.headers, typeof body === 'string' ? Buffer.from(body, 'utf8') : (body ?? new Uint8Array()));
    return this;
  }
}

/** The request line's target: path plus query string (dynalite reads the query for presigned requests). */
function urlOf(request: SignedRequest): string {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(request.query ?? {})) {
    if (v === null) query.append(k, '');
    else if (typeof v === 'string') query.append(k, v);
    else for (const one of v) query.append(k, one);
  }
  const qs = query.toString();
  return qs ? `${request.path}?${qs}` : request.path;
}

/**
 * The request body as a Buffer, as a socket would deliver it. The SDK's JSON protocol sends its own `Uint8Array`
 * subclass, whose string methods warn: it is viewed (not copied) as a plain Buffer.
 */
function bodyBytes(body: unknown): Buffer {
  if (body === undefined || body === null) return Buffer.alloc(0);
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  throw new SkiffError(`embedded DynamoDB: cannot send a request body of type ${typeof body} in process`);
}

/** Listens on 127.0.0.1 with an ephemeral port; resolves to the port. */
function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error): void => reject(new SkiffError('embedded DynamoDB: cannot listen', { cause: error }));
    server.once('error', onError);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Polls DescribeTable until the table and every index are ACTIVE (dynalite flips them on a timer after CreateTable). */
async function waitUntilActive(client: DynamoDBClient, tableName: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const active = Table?.TableStatus === 'ACTIVE' && (Table.GlobalSecondaryIndexes ?? []).every((i) => i.IndexStatus === 'ACTIVE');
    if (active) return;
    if (Date.now() > deadline) throw new SkiffError(`table ${tableName} not ACTIVE after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** Client first (its keep-alive sockets would hold `server.close` open), then the server and its store. */
async function shutdown(server: Server, client: DynamoDBClient): Promise<void> {
  client.destroy();
  server.closeAllConnections();
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
}
