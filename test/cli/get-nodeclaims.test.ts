// Tests shared/cli/get.ts (`skiff get nodeclaims`) against dynalite, with records written by the real DynamoDB store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DynamoDbNodeClaimStore } from '../../shared/adapters/aws/dynamodb-nodeclaim-store.js';
import { formatTable, getNodeClaims, humanDuration, type GetNodeClaimsOptions } from '../../shared/cli/get.js';
import { startDynalite, type LocalDynamoDb } from '../../shared/cli/local-dynamodb.js';
import { main } from '../../shared/cli/main.js';
import type { NodeClaim } from '../../shared/core/api/nodeclaim.js';

let db: LocalDynamoDb;
let clusterSeq = 0;
const NOW = Date.parse('2026-03-02T12:00:00Z');
const ago = (ms: number): string => new Date(NOW - ms).toISOString();
const MIN = 60_000;
const HOUR = 60 * MIN;

beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.close();
});

function base(name: string, createdAt: string): Omit<NodeClaim, 'version'> {
  return {
    name,
    nodePool: 'general',
    nodeClass: 'default',
    state: 'Pending',
    requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] }],
    instanceTypes: ['m7g.large'],
    resources: { cpu: 1500, memory: 2048, pods: 3 },
    labels: {},
    taints: [],
    startupTaints: [],
    nominatedPods: ['default/web-1'],
    createdAt,
  };
}

function running(name: string, createdAt: string, extra: Partial<NodeClaim> = {}): Omit<NodeClaim, 'version'> {
  return {
    ...base(name, createdAt),
    state: 'Initialized',
    instanceId: 'i-0abc1234',
    providerId: 'aws:///us-west-2a/i-0abc1234',
    nodeName: 'ip-10-0-1-2.us-west-2.compute.internal',
    instanceType: 'm7g.large',
    zone: 'us-west-2a',
    capacityType: 'spot',
    price: 0.0408,
    launchedAt: createdAt,
    registeredAt: createdAt,
    initializedAt: createdAt,
    ...extra,
  };
}

/** A fresh cluster partition holding `claims`, written through the real store. */
async function clusterWith(...claims: Omit<NodeClaim, 'version'>[]): Promise<string> {
  const cluster = `get${++clusterSeq}`;
  const store = new DynamoDbNodeClaimStore({ client: db.client, tableName: db.tableName, cluster });
  for (const c of claims) await store.create(c);
  return cluster;
}

async function run(options: Omit<GetNodeClaimsOptions, 'table' | 'endpoint'>): Promise<{ status: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const status = await getNodeClaims({ table: db.tableName, endpoint: db.endpoint, ...options }, { out: (t) => (out += t), err: (t) => (err += t) }, { now: () => NOW });
  return { status, out, err };
}

describe('humanDuration', () => {
  it.each([
    [-5_000, '<invalid>'],
    [-1_000, '0s'],
    [0, '0s'],
    [45_000, '45s'],
    [119_999, '119s'],
    [2 * MIN, '2m'],
    [5 * MIN + 12_000, '5m12s'],
    [10 * MIN + 59_000, '10m'],
    [179 * MIN, '179m'],
    [3 * HOUR, '3h'],
    [3 * HOUR + 5 * MIN, '3h5m'],
    [8 * HOUR + 5 * MIN, '8h'],
    [47 * HOUR, '47h'],
    [48 * HOUR, '2d'],
    [52 * HOUR, '2d4h'],
    [8 * 24 * HOUR + 5 * HOUR, '8d'],
    [400 * 24 * HOUR, '400d'],
    [(2 * 365 + 10) * 24 * HOUR, '2y10d'],
    [9 * 365 * 24 * HOUR, '9y'],
  ])('writes %d ms as %s, as kubectl does', (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });
});

describe('formatTable', () => {
  it('pads every column but the last to its widest cell + 3, at least 6, as kubectl tabwriter does', () => {
    expect(formatTable(['NAME', 'X', 'AGE'], [['a', '', '5m'], ['long-name', 'yes', '2d']])).toBe(
      ['NAME        X     AGE', 'a                 5m', 'long-name   yes   2d', ''].join('\n'),
    );
  });
});

describe('skiff get nodeclaims', () => {
  it("prints Karpenter's printer columns, live NodeClaims only, by name", async () => {
    const cluster = await clusterWith(
      running('general-b2c3d', ago(3 * HOUR + 5 * MIN)),
      base('general-a1b2c', ago(45_000)),
      { ...running('general-zzzzz', ago(2 * 24 * HOUR)), state: 'Deleted', deletedAt: ago(HOUR), deletionReason: 'Empty' },
    );
    const { status, out, err } = await run({ cluster });
    expect(status).toBe(0);
    expect(err).toBe('');
    expect(out).toBe(
      [
        'NAME            TYPE        CAPACITY   ZONE         NODE                                     READY     AGE',
        'general-a1b2c                                                                                Unknown   45s',
        'general-b2c3d   m7g.large   spot       us-west-2a   ip-10-0-1-2.us-west-2.compute.internal   True      3h5m',
        '',
      ].join('\n'),
    );
  });

  it('adds ID, NODEPOOL, NODECLASS, STATE and PRICE with -o wide, and Deleted and Failed NodeClaims with --all', async () => {
    const cluster = await clusterWith(running('general-b2c3d', ago(10 * MIN)), { ...base('general-f0f0f', ago(MIN)), state: 'Failed', launchError: 'InsufficientInstanceCapacity' });
    const { out } = await run({ cluster, output: 'wide', all: true });
    const [header, ...rows] = out.trimEnd().split('\n');
    expect(header!.split(/\s+/)).toEqual(['NAME', 'TYPE', 'CAPACITY', 'ZONE', 'NODE', 'READY', 'AGE', 'ID', 'NODEPOOL', 'NODECLASS', 'STATE', 'PRICE']);
    expect(rows[0]!.split(/\s+/)).toEqual(['general-b2c3d', 'm7g.large', 'spot', 'us-west-2a', 'ip-10-0-1-2.us-west-2.compute.internal', 'True', '10m', 'aws:///us-west-2a/i-0abc1234', 'general', 'default', 'Initialized', '$0.0408']);
    expect(rows[1]!.split(/\s+/)).toEqual(['general-f0f0f', 'False', '60s', 'general', 'default', 'Failed']);
    // Columns line up: every cell starts where its header does.
    const at = (line: string, text: string) => line.indexOf(text);
    expect(at(rows[1]!, 'False')).toBe(at(header!, 'READY'));
    expect(at(rows[1]!, 'general ')).toBe(at(header!, 'NODEPOOL'));
  });

  it('says "No resources found" on stderr for an empty table, and prints nothing on stdout', async () => {
    const cluster = await clusterWith();
    expect(await run({ cluster })).toEqual({ status: 0, out: '', err: 'No resources found\n' });
    expect(await run({ cluster, output: 'wide' })).toEqual({ status: 0, out: '', err: 'No resources found\n' });
  });

  it('counts only live NodeClaims as resources: all Deleted is "No resources found" too', async () => {
    const cluster = await clusterWith({ ...running('general-b2c3d', ago(HOUR)), state: 'Deleted' });
    expect((await run({ cluster })).err).toBe('No resources found\n');
  });

  it('prints the karpenter.sh/v1 objects as a List with -o json and -o yaml', async () => {
    const cluster = await clusterWith(running('general-b2c3d', '2026-03-02T08:00:00.000Z'));
    const json = JSON.parse((await run({ cluster, output: 'json' })).out) as { kind: string; items: { apiVersion: string; kind: string; metadata: { name: string; creationTimestamp: string; labels: Record<string, string> }; status: { providerID: string; conditions: { type: string; status: string }[] } }[] };
    expect(json.kind).toBe('List');
    expect(json.items).toHaveLength(1);
    const [item] = json.items;
    expect(item).toMatchObject({ apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', metadata: { name: 'general-b2c3d', creationTimestamp: '2026-03-02T08:00:00Z' }, status: { providerID: 'aws:///us-west-2a/i-0abc1234' } });
    expect(item!.metadata.labels['node.kubernetes.io/instance-type']).toBe('m7g.large');
    expect(item!.status.conditions.map((c) => `${c.type}=${c.status}`)).toEqual(['Launched=True', 'Registered=True', 'Initialized=True', 'Ready=True']);
    expect(parse((await run({ cluster, output: 'yaml' })).out)).toEqual(json);
    expect(JSON.parse((await run({ cluster: await clusterWith(), output: 'json' })).out)).toEqual({ apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: [] });
  });

  it('shows named NodeClaims in any state (one object for one name with -o json) and fails naming the missing ones', async () => {
    const cluster = await clusterWith(running('general-b2c3d', ago(HOUR)), { ...running('general-zzzzz', ago(HOUR)), state: 'Deleted' });
    expect(JSON.parse((await run({ cluster, names: ['general-zzzzz'], output: 'json' })).out)).toMatchObject({ kind: 'NodeClaim', metadata: { name: 'general-zzzzz' } });
    const { status, out, err } = await run({ cluster, names: ['general-b2c3d', 'general-nope'] });
    expect(status).toBe(1);
    expect(out.split('\n').map((l) => l.split(' ')[0])).toEqual(['NAME', 'general-b2c3d', '']);
    expect(err).toBe('Error from server (NotFound): nodeclaims.karpenter.sh "general-nope" not found\n');
  });

  it('fails with status 1 and a message when the table does not exist', async () => {
    let err = '';
    const status = await getNodeClaims({ table: 'no-such-table', cluster: 'c', endpoint: db.endpoint }, { out: () => undefined, err: (t) => (err += t) });
    expect(status).toBe(1);
    expect(err).toMatch(/^error: cannot read NodeClaims of cluster c from table no-such-table: .*ResourceNotFoundException/);
  });

  describe('through the skiff command line', () => {
    const cli = async (argv: string[], env: Record<string, string> = {}) => {
      let out = '';
      let err = '';
      const saved = { table: process.env.SKIFF_TABLE, cluster: process.env.SKIFF_CLUSTER };
      delete process.env.SKIFF_TABLE;
      delete process.env.SKIFF_CLUSTER;
      Object.assign(process.env, env);
      try {
        const status = await main(argv, { out: (t) => (out += t), err: (t) => (err += t), isTTY: false });
        return { status, out, err };
      } finally {
        for (const [k, v] of [['SKIFF_TABLE', saved.table], ['SKIFF_CLUSTER', saved.cluster]] as const) {
          if (v === undefined) delete process.env[k];
          else process.env[k] = v;
        }
      }
    };

    it('reads --table, --cluster and --endpoint, and -o wide', async () => {
      const cluster = await clusterWith(running('general-b2c3d', new Date().toISOString()));
      const { status, out } = await cli(['get', 'nodeclaims', '--table', db.tableName, '--cluster', cluster, '--endpoint', db.endpoint, '-o', 'wide']);
      expect(status).toBe(0);
      expect(out).toMatch(/^NAME\s+TYPE\s+CAPACITY\s+ZONE\s+NODE\s+READY\s+AGE\s+ID\s+NODEPOOL\s+NODECLASS\s+STATE\s+PRICE\n/);
      expect(out).toMatch(/\ngeneral-b2c3d\s+m7g\.large\s+spot\s+us-west-2a\s+\S+\s+True\s+\d+s\s+aws:\/\/\/us-west-2a\/i-0abc1234\s+general\s+default\s+Initialized\s+\$0\.0408\n$/);
    });

    it('takes the table and cluster from SKIFF_TABLE and SKIFF_CLUSTER, and accepts nodeclaim', async () => {
      const cluster = await clusterWith();
      const { status, err } = await cli(['get', 'nodeclaim', '--endpoint', db.endpoint], { SKIFF_TABLE: db.tableName, SKIFF_CLUSTER: cluster });
      expect({ status, err }).toEqual({ status: 0, err: 'No resources found\n' });
    });

    it.each([
      [['get', 'nodeclaims', '--endpoint', 'http://127.0.0.1:1'], /--table \(or SKIFF_TABLE\) and --cluster \(or SKIFF_CLUSTER\) required/],
      [['get', 'pods', '--table', 't', '--cluster', 'c'], /unknown resource "pods"/],
      [['get', 'nodeclaims', '--table', 't', '--cluster', 'c', '-o', 'name'], /the output format must be wide, json or yaml/],
      [['get', 'nodeclaims', '--table', 't', '--cluster', 'c', '--endpoint', 'notaurl'], /"notaurl" is not a URL/],
      [['get', 'nodeclaims', '--table', '', '--cluster', 'c'], /--table must not be empty/],
      [['get', 'nodeclaims', '--table', 't', '--cluster', ' '], /--cluster must not be empty/],
      [['get', 'nodeclaims', '--table', 't', '--cluster', 'c', '--endpoint', 'ftp://127.0.0.1'], /http or https URL, not ftp:/],
    ])('exits 2 on invalid arguments: %j', async (argv, message) => {
      const { status, err } = await cli(argv);
      expect(status).toBe(2);
      expect(err).toMatch(message);
    });
  });
});
