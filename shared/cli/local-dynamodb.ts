/**
 * An embedded DynamoDB for the simulation and the adapter tests: dynalite (in-process, in-memory, the real DynamoDB
 * JSON protocol) on 127.0.0.1 with an ephemeral port, Skiff's table already created. The same DynamoDB stores run
 * against it as against AWS. It lives in the CLI (the local composition root) because it wires an AWS adapter's
 * table definition, which `shared/sim` may not import.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
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
  /** DocumentClient on {@link endpoint}, translated with `TRANSLATE_CONFIG`. */
  readonly client: DynamoDBDocumentClient;
  /** Destroys the client, drops open connections and stops the server (the data is gone). Idempotent. */
  close(): Promise<void>;
}

/** Options of {@link startDynalite}. */
export interface StartDynaliteOptions {
  /** @default {@link LOCAL_TABLE_NAME} */
  readonly tableName?: string;
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
  const base = new DynamoDBClient(localClientConfig(endpoint));
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
