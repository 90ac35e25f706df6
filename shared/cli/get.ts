/**
 * `skiff get nodeclaims [name…] [-o wide|json|yaml]`: the NodeClaims of a cluster, read straight from Skiff's
 * DynamoDB table (the source of truth), printed as `kubectl get nodeclaims` prints Karpenter's.
 *
 * Columns are the NodeClaim CRD's printer columns (kubernetes-sigs/karpenter `pkg/apis/crds/karpenter.sh_nodeclaims.yaml`):
 * NAME, TYPE, CAPACITY, ZONE, NODE, READY, AGE; `-o wide` adds ID (the providerID), NODEPOOL and NODECLASS (the CRD's
 * priority-1 columns, without DRIFTED: Skiff has no drift yet), then Skiff's own STATE (the record's lifecycle state)
 * and PRICE (USD per hour of the launched offering). READY is the `Ready` condition the NodeClaim mirror shows
 * (`nodeclaim-mirror.ts`), so this command and `kubectl get nodeclaims` agree. A value not known yet is a blank cell.
 * The table is laid out as kubectl's tabwriter does (columns at least 6 wide, 3 spaces of padding, the last column
 * unpadded); AGE is kubectl's `HumanDuration`. `-o json|yaml` print the `karpenter.sh/v1` NodeClaim objects in a
 * `v1` `List` (one object when exactly one name is asked for).
 *
 * Only live NodeClaims are listed (those Kubernetes would still show), unless `--all` adds `Deleted` and `Failed`
 * ones; a NodeClaim asked for by name is shown in any state. Exit status: 0; 1 when a named NodeClaim does not exist
 * or DynamoDB fails; 2 on invalid arguments (missing table or cluster, unknown resource or output format).
 */
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Command, InvalidArgumentError, Option } from 'commander';
import { stringify } from 'yaml';
import { DynamoDbNodeClaimStore } from '../adapters/aws/dynamodb-nodeclaim-store.js';
import { TRANSLATE_CONFIG } from '../adapters/aws/table.js';
import { nodeClaimConditions, nodeClaimMirror } from '../adapters/kubernetes/nodeclaim-mirror.js';
import { isLive, type NodeClaim } from '../core/api/nodeclaim.js';
import type { NodeClaimStore } from '../ports/nodeclaim-store.js';
import { localClientConfig } from './local-dynamodb.js';

/** Output formats of `skiff get nodeclaims`: the default table, the wide table, or the objects as JSON or YAML. */
export type NodeClaimOutput = 'table' | 'wide' | 'json' | 'yaml';

/** Environment variable giving the DynamoDB table when `--table` is not passed. */
export const TABLE_ENV = 'SKIFF_TABLE';
/** Environment variable giving the EKS cluster name when `--cluster` is not passed. */
export const CLUSTER_ENV = 'SKIFF_CLUSTER';

/** Headers of the default table (the CRD's priority-0 printer columns). */
export const NODECLAIM_COLUMNS = ['NAME', 'TYPE', 'CAPACITY', 'ZONE', 'NODE', 'READY', 'AGE'] as const;
/** Headers `-o wide` adds after {@link NODECLAIM_COLUMNS}. */
export const NODECLAIM_WIDE_COLUMNS = ['ID', 'NODEPOOL', 'NODECLASS', 'STATE', 'PRICE'] as const;

/** One NodeClaim as table cells (blank when not known yet). */
export interface NodeClaimRow {
  readonly name: string;
  /** Instance type, e.g. `m7g.large`. */
  readonly type: string;
  /** `spot`, `on-demand` or `reserved`. */
  readonly capacity: string;
  readonly zone: string;
  /** Node name. */
  readonly node: string;
  /** Status of the `Ready` condition: `True`, `False` or `Unknown`. */
  readonly ready: string;
  /** Time since `createdAt`, as kubectl writes it (`45s`, `5m12s`, `3h`, `2d4h`). */
  readonly age: string;
  /** providerID, `aws:///<zone>/<instance-id>`. */
  readonly id: string;
  readonly nodePool: string;
  readonly nodeClass: string;
  /** Skiff's lifecycle state, `Pending` … `Failed`. */
  readonly state: string;
  /** USD per hour with 4 decimals, e.g. `$0.0960`. */
  readonly price: string;
}

/**
 * A duration as kubectl writes ages (k8s.io/apimachinery `pkg/util/duration.HumanDuration`): seconds below 2 minutes,
 * `XmYs` below 10 minutes, minutes below 3 hours, `XhYm` below 8 hours, hours below 2 days, `XdYh` below 8 days, days
 * below 2 years, `XyYd` below 8 years, then years. A zero remainder is left out (`5m`, not `5m0s`). Up to one second in
 * the future (clock skew) is `0s`; further is `<invalid>`.
 * @param ms duration in milliseconds (truncated to whole seconds)
 * @example humanDuration(3 * 3600_000 + 5 * 60_000) // '3h5m'
 */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const days = Math.trunc(hours / 24) % 365;
    const years = Math.trunc(hours / 24 / 365);
    return days === 0 ? `${years}y` : `${years}y${days}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

/**
 * The table cells of a NodeClaim record.
 * @param nowMs the current time, epoch ms (UTC), for AGE
 */
export function nodeClaimRow(claim: NodeClaim, nowMs: number): NodeClaimRow {
  const ready = nodeClaimConditions(claim).find((c) => c.type === 'Ready')?.status ?? '';
  return {
    name: claim.name,
    type: claim.instanceType ?? '',
    capacity: claim.capacityType ?? '',
    zone: claim.zone ?? '',
    node: claim.nodeName ?? '',
    ready,
    age: humanDuration(nowMs - Date.parse(claim.createdAt)),
    id: claim.providerId ?? '',
    nodePool: claim.nodePool,
    nodeClass: claim.nodeClass,
    state: claim.state,
    price: claim.price !== undefined ? `$${claim.price.toFixed(4)}` : '',
  };
}

/**
 * Lays out `rows` under `headers` as kubectl does (Go `text/tabwriter` with minimum width 6, padding 3, padded with
 * spaces): every column but the last is as wide as its widest cell plus 3, and at least 6; the last is not padded.
 * @returns the lines, each ending in `\n`
 */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const lines = [headers, ...rows];
  const widths = headers.map((_, i) => Math.max(6, ...lines.map((cells) => (cells[i] ?? '').length + 3)));
  return lines.map((cells) => `${cells.map((cell, i) => (i < cells.length - 1 ? cell.padEnd(widths[i] ?? 0) : cell)).join('')}\n`).join('');
}

/**
 * A NodeClaim as the `karpenter.sh/v1` object `kubectl get -o yaml` would show: the mirror's metadata, spec and
 * status, plus `metadata.creationTimestamp` (RFC 3339, whole seconds, UTC).
 */
export function nodeClaimObject(claim: NodeClaim): Record<string, unknown> {
  const { object, status } = nodeClaimMirror(claim);
  const created = new Date(Date.parse(claim.createdAt)).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return { apiVersion: object.apiVersion, kind: object.kind, metadata: { ...object.metadata, creationTimestamp: created }, spec: object.spec, status };
}

/**
 * Renders NodeClaim records in `output` format: a table (header line included) or the objects as JSON or YAML. An
 * empty list renders as an empty string for tables (the caller says "No resources found") and as an empty `List`
 * for JSON and YAML, as kubectl does.
 * @param options `nowMs`: epoch ms for AGE; `single`: render one object instead of a `List` (JSON/YAML)
 */
export function formatNodeClaims(claims: readonly NodeClaim[], output: NodeClaimOutput, options: { readonly nowMs: number; readonly single?: boolean }): string {
  switch (output) {
    case 'table':
    case 'wide': {
      if (claims.length === 0) return '';
      const wide = output === 'wide';
      const rows = claims.map((c) => {
        const r = nodeClaimRow(c, options.nowMs);
        const cells = [r.name, r.type, r.capacity, r.zone, r.node, r.ready, r.age];
        return wide ? [...cells, r.id, r.nodePool, r.nodeClass, r.state, r.price] : cells;
      });
      return formatTable(wide ? [...NODECLAIM_COLUMNS, ...NODECLAIM_WIDE_COLUMNS] : NODECLAIM_COLUMNS, rows);
    }
    case 'json':
    case 'yaml': {
      const objects = claims.map(nodeClaimObject);
      const value = options.single && objects.length === 1 ? objects[0] : { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: objects };
      return output === 'json' ? `${JSON.stringify(value, null, 4)}\n` : stringify(value);
    }
  }
}

/** What `skiff get nodeclaims` reads and how it prints. */
export interface GetNodeClaimsOptions {
  /** Physical name of Skiff's DynamoDB table. */
  readonly table: string;
  /** EKS cluster name (the table partition `CLUSTER#<cluster>`). */
  readonly cluster: string;
  /** AWS region. @default the SDK's (AWS_REGION, the profile) */
  readonly region?: string;
  /**
   * DynamoDB endpoint of a local DynamoDB (dynalite, DynamoDB Local), e.g. `http://127.0.0.1:8000`; dummy credentials
   * are used with it. @default the region's AWS endpoint, with the SDK's credential chain
   */
  readonly endpoint?: string;
  /** @default 'table' */
  readonly output?: NodeClaimOutput;
  /** Include `Deleted` and `Failed` NodeClaims. @default false */
  readonly all?: boolean;
  /** Only these NodeClaims (in this order), in any state. @default every NodeClaim */
  readonly names?: readonly string[];
}

/** Where `skiff get` writes. */
export interface GetIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

/**
 * Reads the cluster's NodeClaims from DynamoDB and prints them (see the module doc).
 * @param deps `store`: read from this store instead of building one from `options` (tests); `now`: the clock for AGE,
 *   epoch ms @default Date.now
 * @returns the exit status: 0, or 1 when a named NodeClaim is missing or DynamoDB fails (the error on `io.err`)
 * @example process.exitCode = await getNodeClaims({ table: 'skiff', cluster: 'prod', output: 'wide' }, io);
 */
export async function getNodeClaims(options: GetNodeClaimsOptions, io: GetIo, deps: { readonly store?: NodeClaimStore; readonly now?: () => number } = {}): Promise<number> {
  const output = options.output ?? 'table';
  let base: DynamoDBClient | undefined;
  let store = deps.store;
  if (!store) {
    base = new DynamoDBClient(clientConfig(options));
    store = new DynamoDbNodeClaimStore({ client: DynamoDBDocumentClient.from(base, TRANSLATE_CONFIG), tableName: options.table, cluster: options.cluster });
  }
  let claims: NodeClaim[];
  try {
    claims = await store.list();
  } catch (e) {
    io.err(`error: cannot read NodeClaims of cluster ${options.cluster} from table ${options.table}: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  } finally {
    base?.destroy();
  }
  let status = 0;
  let shown: NodeClaim[];
  const missing: string[] = [];
  if (options.names && options.names.length > 0) {
    const byName = new Map(claims.map((c) => [c.name, c]));
    shown = [];
    for (const name of options.names) {
      const claim = byName.get(name);
      if (claim) shown.push(claim);
      else missing.push(name);
    }
  } else {
    shown = options.all ? claims : claims.filter(isLive);
  }
  const text = formatNodeClaims(shown, output, { nowMs: (deps.now ?? Date.now)(), single: options.names?.length === 1 });
  if (text !== '' && (shown.length > 0 || missing.length === 0)) io.out(text);
  for (const name of missing) {
    io.err(`Error from server (NotFound): nodeclaims.karpenter.sh "${name}" not found\n`);
    status = 1;
  }
  if (shown.length === 0 && missing.length === 0 && (output === 'table' || output === 'wide')) io.err('No resources found\n');
  return status;
}

/** Client configuration: the local endpoint's (dummy credentials, no IMDS) or the SDK defaults, with `region`. */
function clientConfig(options: GetNodeClaimsOptions): DynamoDBClientConfig {
  const region = options.region !== undefined ? { region: options.region } : {};
  return options.endpoint !== undefined ? { ...localClientConfig(options.endpoint), ...region } : region;
}

/** Resources `skiff get` knows, by every name it accepts. */
const RESOURCE_NAMES: ReadonlySet<string> = new Set(['nodeclaims', 'nodeclaim', 'nodeclaims.karpenter.sh', 'nodeclaim.karpenter.sh']);

/**
 * Adds the `get` subcommand to the `skiff` program.
 * @param setStatus receives the exit status of a run (0, 1 or 2; commander's own usage errors exit 2 through
 *   `main`)
 */
export function registerGetCommand(program: Command, io: GetIo, setStatus: (status: number) => void): void {
  program
    .command('get')
    .description(`list NodeClaims from Skiff's DynamoDB table, as \`kubectl get nodeclaims\` would (resource: nodeclaims)`)
    .argument('<resource>', 'nodeclaims (or nodeclaim)', parseResource)
    .argument('[names...]', 'only these NodeClaims (shown in any state)')
    .addOption(new Option('--table <name>', "Skiff's DynamoDB table").env(TABLE_ENV))
    .addOption(new Option('--cluster <name>', 'EKS cluster name').env(CLUSTER_ENV))
    .option('--region <region>', 'AWS region (default: the AWS SDK configuration)')
    .option('--endpoint <url>', 'DynamoDB endpoint of a local DynamoDB, e.g. http://127.0.0.1:8000 (dummy credentials)', parseEndpoint)
    .option('-o, --output <format>', 'wide, json or yaml', parseOutput)
    .option('-A, --all', 'include Deleted and Failed NodeClaims')
    .action(async (_resource: string, names: string[], opts: { table?: string; cluster?: string; region?: string; endpoint?: string; output?: NodeClaimOutput; all?: boolean }) => {
      if (opts.table === undefined || opts.cluster === undefined) {
        const absent = [opts.table === undefined ? `--table (or ${TABLE_ENV})` : undefined, opts.cluster === undefined ? `--cluster (or ${CLUSTER_ENV})` : undefined];
        io.err(`skiff get: ${absent.filter((x) => x !== undefined).join(' and ')} required\n`);
        setStatus(2);
        return;
      }
      if (opts.table.trim() === '' || opts.cluster.trim() === '') {
        io.err(`skiff get: ${opts.table.trim() === '' ? '--table' : '--cluster'} must not be empty\n`);
        setStatus(2);
        return;
      }
      setStatus(
        await getNodeClaims(
          {
            table: opts.table,
            cluster: opts.cluster,
            names,
            ...(opts.region !== undefined ? { region: opts.region } : {}),
            ...(opts.endpoint !== undefined ? { endpoint: opts.endpoint } : {}),
            ...(opts.output !== undefined ? { output: opts.output } : {}),
            ...(opts.all ? { all: true } : {}),
          },
          io,
        ),
      );
    });
}

function parseResource(value: string): string {
  if (!RESOURCE_NAMES.has(value.toLowerCase())) throw new InvalidArgumentError(`unknown resource "${value}": skiff get knows nodeclaims`);
  return 'nodeclaims';
}

function parseEndpoint(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError(`"${value}" is not a URL (for example http://127.0.0.1:8000)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidArgumentError(`the endpoint must be an http or https URL, not ${url.protocol}`);
  return value;
}

function parseOutput(value: string): NodeClaimOutput {
  if (value === 'wide' || value === 'json' || value === 'yaml') return value;
  throw new InvalidArgumentError('the output format must be wide, json or yaml');
}
