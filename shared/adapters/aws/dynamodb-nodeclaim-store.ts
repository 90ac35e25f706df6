/**
 * NodeClaimStore on DynamoDB (the single table of `table.ts`). Used in AWS and, against embedded dynalite, by the
 * simulation.
 */
import { GetCommand, PutCommand, type DynamoDBDocumentClient, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { NodeClaim } from '../../core/api/nodeclaim.js';
import type { NodeClaimStore } from '../../ports/nodeclaim-store.js';
import {
  INSTANCE_ID_INDEX,
  INSTANCE_KEY,
  PARTITION_KEY,
  SK_PREFIX,
  SORT_KEY,
  clusterPk,
  formatKey,
  instanceKey,
  nodeClaimKey,
  storeError,
  queryAll,
} from './table.js';

/** Attribute names the table reserves on NodeClaim items; a NodeClaim field with one of these names would clash. */
type ReservedAttribute = typeof PARTITION_KEY | typeof SORT_KEY | typeof INSTANCE_KEY;
/** Compile-time guard: fails to type-check if NodeClaim ever gains a field named like a reserved attribute. */
type AssertNever<T extends never> = T;
type NodeClaimFieldsDoNotClash = AssertNever<Extract<keyof NodeClaim, ReservedAttribute>>;

/** Dependencies of {@link DynamoDbNodeClaimStore}. */
export interface DynamoDbNodeClaimStoreProps {
  /** A DocumentClient; any translate config works (the store strips `undefined` itself). */
  readonly client: DynamoDBDocumentClient;
  /** Physical name of the table created from `tableDefinition`. */
  readonly tableName: string;
  /** EKS cluster name: the store sees only this cluster's partition. */
  readonly cluster: string;
  /**
   * Items per Query page (DynamoDB `Limit`) for `list` and `findByInstanceId`.
   * @default undefined — DynamoDB's own 1 MB pages
   */
  readonly pageSize?: number;
}

/**
 * {@link NodeClaimStore} on DynamoDB. One item per NodeClaim (`pk = CLUSTER#<cluster>`, `sk = NODECLAIM#<name>`,
 * the NodeClaim's fields as attributes); optimistic concurrency through conditional puts of the whole record.
 * Every DynamoDB failure leaves as a Skiff error (see `storeError`): {@link ConflictError} for a failed
 * condition, `ThrottledError`, or `SkiffError` with the SDK error as `cause`.
 * @example
 * const store = new DynamoDbNodeClaimStore({ client, tableName: 'skiff', cluster: 'prod' });
 * const claim = await store.create({ name: 'default-x7k2p', state: 'Pending', … });  // version 1
 * await store.update({ ...claim, state: 'Launched', instanceId: 'i-0abc' });         // version 2
 */
export class DynamoDbNodeClaimStore implements NodeClaimStore {
  readonly #client: DynamoDBDocumentClient;
  readonly #tableName: string;
  readonly #cluster: string;
  readonly #pageSize: number | undefined;

  constructor(props: DynamoDbNodeClaimStoreProps) {
    this.#client = props.client;
    this.#tableName = props.tableName;
    this.#cluster = props.cluster;
    this.#pageSize = props.pageSize;
  }

  /**
   * Writes the record with `version` 1, on condition that no record of that name exists (`attribute_not_exists`).
   * Fields set to `undefined` are left out. Any `version` on the argument is ignored.
   * @returns the stored record, equal to what {@link get} returns
   * @throws {ConflictError} when a record with the same name already exists (`key` = `CLUSTER#…/NODECLAIM#…`)
   */
  async create(claim: Omit<NodeClaim, 'version'>): Promise<NodeClaim> {
    const record = withoutUndefined<NodeClaim>({ ...claim, version: 1 });
    await this.#conditionalPut(record, { ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': PARTITION_KEY } }, `NodeClaim ${record.name} already exists`);
    return record;
  }

  /**
   * The record (strongly consistent read), or undefined.
   * @throws {SkiffError} when DynamoDB fails
   */
  async get(name: string): Promise<NodeClaim | undefined> {
    const key = nodeClaimKey(this.#cluster, name);
    try {
      const { Item } = await this.#client.send(new GetCommand({ TableName: this.#tableName, Key: key, ConsistentRead: true }));
      return Item === undefined ? undefined : fromItem(Item);
    } catch (error) {
      throw storeError(error, { operation: 'GetItem', key: formatKey(key) });
    }
  }

  /**
   * Replaces the record with `claim` and `version + 1`, on condition that the stored `version` equals
   * `claim.version`. Fields set to `undefined` are removed from the record.
   * @returns the stored record, equal to what {@link get} returns
   * @throws {ConflictError} when the record changed since it was read, or does not exist; the record is unchanged
   */
  async update(claim: NodeClaim): Promise<NodeClaim> {
    const record = withoutUndefined<NodeClaim>({ ...claim, version: claim.version + 1 });
    await this.#conditionalPut(
      record,
      { ConditionExpression: '#version = :expected', ExpressionAttributeNames: { '#version': 'version' }, ExpressionAttributeValues: { ':expected': claim.version } },
      `NodeClaim ${record.name} is not at version ${claim.version} (changed since read, or deleted)`,
    );
    return record;
  }

  /** Puts `record` under `condition`; a failed condition becomes a {@link ConflictError} saying `conflict`. */
  async #conditionalPut(
    record: NodeClaim,
    condition: { ConditionExpression: string; ExpressionAttributeNames: Record<string, string>; ExpressionAttributeValues?: Record<string, unknown> },
    conflict: string,
  ): Promise<void> {
    const key = nodeClaimKey(this.#cluster, record.name);
    try {
      await this.#client.send(new PutCommand({ TableName: this.#tableName, Item: this.#toItem(record), ...condition }));
    } catch (error) {
      throw storeError(error, { operation: 'PutItem', key: formatKey(key), conflict });
    }
  }

  /**
   * Every record of the cluster, deleted and failed ones included, sorted by name (UTF-16 code-unit order, as
   * `<` compares strings). Reads the partition page by page (strongly consistent) until no `LastEvaluatedKey`.
   * @throws {SkiffError} when DynamoDB fails
   */
  async list(): Promise<NodeClaim[]> {
    const items = await this.#queryAll({
      TableName: this.#tableName,
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
      ExpressionAttributeNames: { '#pk': PARTITION_KEY, '#sk': SORT_KEY },
      ExpressionAttributeValues: { ':pk': clusterPk(this.#cluster), ':prefix': SK_PREFIX.nodeClaim },
      ConsistentRead: true,
    });
    return items.map(fromItem).sort(byName);
  }

  /**
   * The record whose `instanceId` is `instanceId`, or undefined. Looks the key up in the `byInstanceId` index, then
   * reads the record consistently and checks its `instanceId` still matches, so the answer is never stale; but an
   * instance id written within the last moment may not be in the index yet (DynamoDB index reads are eventually
   * consistent). Should two records carry the same instance id, the first by name wins.
   * @param instanceId EC2 instance id, e.g. `i-0123456789abcdef0`
   * @throws {SkiffError} when DynamoDB fails
   */
  async findByInstanceId(instanceId: string): Promise<NodeClaim | undefined> {
    const keys = await this.#queryAll({
      TableName: this.#tableName,
      IndexName: INSTANCE_ID_INDEX,
      KeyConditionExpression: '#ik = :ik',
      ExpressionAttributeNames: { '#ik': INSTANCE_KEY },
      ExpressionAttributeValues: { ':ik': instanceKey(this.#cluster, instanceId) },
    });
    const names = keys
      .map((k) => k[SORT_KEY])
      .filter((sk): sk is string => typeof sk === 'string' && sk.startsWith(SK_PREFIX.nodeClaim))
      .map((sk) => sk.slice(SK_PREFIX.nodeClaim.length))
      .sort(compareStrings);
    for (const name of names) {
      const claim = await this.get(name);
      if (claim?.instanceId === instanceId) return claim;
    }
    return undefined;
  }

  /** The item of `record`: its fields plus the table key and, once launched, the index key. */
  #toItem(record: NodeClaim): Record<string, unknown> {
    return {
      ...record,
      ...nodeClaimKey(this.#cluster, record.name),
      ...(record.instanceId !== undefined ? { [INSTANCE_KEY]: instanceKey(this.#cluster, record.instanceId) } : {}),
    };
  }

  /** Every item a query matches (all pages). */
  async #queryAll(input: QueryCommandInput): Promise<Record<string, unknown>[]> {
    return queryAll(this.#client, input, { key: clusterPk(this.#cluster), pageSize: this.#pageSize });
  }
}

/** The NodeClaim of an item: the item without the table's reserved attributes. */
function fromItem(item: Record<string, unknown>): NodeClaim {
  const { [PARTITION_KEY]: _pk, [SORT_KEY]: _sk, [INSTANCE_KEY]: _ik, ...fields } = item;
  return fields as unknown as NodeClaim;
}

/**
 * A deep copy of plain data without `undefined`: object properties set to `undefined` are dropped, as are
 * `undefined` array elements — exactly what `removeUndefinedValues` marshalling stores — so the value a write
 * returns equals the value a read returns.
 */
function withoutUndefined<T>(value: unknown): T {
  if (Array.isArray(value)) return value.filter((v) => v !== undefined).map((v) => withoutUndefined(v)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = withoutUndefined(v);
    return out as T;
  }
  return value as T;
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function byName(a: NodeClaim, b: NodeClaim): number {
  return compareStrings(a.name, b.name);
}
