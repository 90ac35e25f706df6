// Tests shared/cli/local-dynamodb.ts: the embedded DynamoDB of the local composition root (simulate) and the adapter tests.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { DynamoDbNodeClaimStore } from '../../shared/adapters/aws/dynamodb-nodeclaim-store.js';
import { INSTANCE_ID_INDEX } from '../../shared/adapters/aws/table.js';
import { LOCAL_TABLE_NAME, localClientConfig, startDynalite, type LocalDynamoDb } from '../../shared/cli/local-dynamodb.js';

const running: LocalDynamoDb[] = [];
async function start(...args: Parameters<typeof startDynalite>): Promise<LocalDynamoDb> {
  const db = await startDynalite(...args);
  running.push(db);
  return db;
}
afterEach(async () => {
  await Promise.all(running.splice(0).map((db) => db.close()));
});

describe('startDynalite', () => {
  it('serves the table and its byInstanceId index, ACTIVE, on 127.0.0.1', async () => {
    const db = await start();
    expect(db.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(db.tableName).toBe(LOCAL_TABLE_NAME);
    const base = new DynamoDBClient(localClientConfig(db.endpoint));
    try {
      const { Table } = await base.send(new DescribeTableCommand({ TableName: db.tableName }));
      expect(Table?.TableStatus).toBe('ACTIVE');
      expect(Table?.GlobalSecondaryIndexes?.map((i) => [i.IndexName, i.IndexStatus])).toEqual([[INSTANCE_ID_INDEX, 'ACTIVE']]);
    } finally {
      base.destroy();
    }
  });

  it('takes the table name as an option', async () => {
    const db = await start({ tableName: 'other' });
    await db.client.send(new PutCommand({ TableName: 'other', Item: { pk: 'p', sk: 's' } }));
    expect((await db.client.send(new GetCommand({ TableName: 'other', Key: { pk: 'p', sk: 's' } }))).Item).toEqual({ pk: 'p', sk: 's' });
  });

  it('gives every instance its own port and its own data', async () => {
    const [a, b] = await Promise.all([start(), start()]);
    expect(a.endpoint).not.toBe(b.endpoint);
    await a.client.send(new PutCommand({ TableName: a.tableName, Item: { pk: 'p', sk: 's' } }));
    expect((await b.client.send(new GetCommand({ TableName: b.tableName, Key: { pk: 'p', sk: 's' } }))).Item).toBeUndefined();
  });

  it('starts in well under a second', async () => {
    await start(); // warm the modules and the SDK's lazy middleware
    const t0 = performance.now();
    await start();
    expect(performance.now() - t0).toBeLessThan(500); // ~10 ms measured; generous for loaded CI machines
  });

  it('closes idempotently, after which the endpoint refuses connections', async () => {
    const db = await startDynalite();
    await store(db).create(claim());
    await Promise.all([db.close(), db.close()]);
    await db.close();
    const base = new DynamoDBClient({ ...localClientConfig(db.endpoint), maxAttempts: 1 });
    try {
      await expect(base.send(new DescribeTableCommand({ TableName: db.tableName }))).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    } finally {
      base.destroy();
    }
  });

  it('never asks the environment for endpoints, credentials or region (no IMDS, no container credentials)', async () => {
    const hits: string[] = [];
    const trap: Server = createServer((req, res) => {
      hits.push(`${req.method} ${req.url}`);
      res.statusCode = 500;
      res.end();
    });
    await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
    const trapUrl = `http://127.0.0.1:${(trap.address() as AddressInfo).port}`;
    const hostile: Record<string, string | undefined> = {
      AWS_EC2_METADATA_SERVICE_ENDPOINT: trapUrl,
      AWS_CONTAINER_CREDENTIALS_FULL_URI: `${trapUrl}/credentials`,
      AWS_ENDPOINT_URL: trapUrl,
      AWS_ENDPOINT_URL_DYNAMODB: trapUrl,
      AWS_DEFAULTS_MODE: 'auto',
      AWS_PROFILE: 'skiff-no-such-profile',
      AWS_MAX_ATTEMPTS: '10',
      AWS_REGION: undefined,
      AWS_DEFAULT_REGION: undefined,
      AWS_ACCESS_KEY_ID: undefined,
      AWS_SECRET_ACCESS_KEY: undefined,
    };
    const saved = Object.fromEntries(Object.keys(hostile).map((k) => [k, process.env[k]]));
    const setEnv = (values: Record<string, string | undefined>): void => {
      for (const [k, v] of Object.entries(values)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    };
    setEnv(hostile);
    try {
      const db = await start();
      const s = store(db);
      await s.create(claim());
      expect((await s.get('a'))?.version).toBe(1);
      expect(await db.client.config.region()).toBe('us-west-2');
      expect(await db.client.config.maxAttempts()).toBe(2);
    } finally {
      setEnv(saved);
      await new Promise((resolve) => trap.close(resolve));
    }
    expect(hits).toEqual([]);
  });
});

function store(db: LocalDynamoDb): DynamoDbNodeClaimStore {
  return new DynamoDbNodeClaimStore({ client: db.client, tableName: db.tableName, cluster: 'c' });
}

function claim(): Parameters<DynamoDbNodeClaimStore['create']>[0] {
  return {
    name: 'a',
    nodePool: 'default',
    nodeClass: 'default',
    state: 'Pending',
    requirements: [],
    instanceTypes: ['m5.large'],
    resources: { cpu: 1000 },
    labels: {},
    taints: [],
    startupTaints: [],
    nominatedPods: [],
    createdAt: '2025-01-01T00:00:00.000Z',
  };
}
