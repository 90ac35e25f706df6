/**
 * Skiff's single DynamoDB table: its key layout, its index, and the conventions every store on it follows
 * (docs/architecture.md#state). The CDK stack, the stores, the simulation and the tests all take
 * the layout from here. This module has no runtime dependency on the AWS SDK (type imports only), so the CDK app
 * can import it cheaply.
 *
 * ## Keys
 * Every item of a cluster lives in one partition, `pk = CLUSTER#<cluster>`; the sort key `sk` says what it is.
 * Key components never contain `#` (EKS cluster names, Kubernetes object names, instance types, zones and
 * capacity types cannot), so keys cannot collide.
 *
 * | `sk`                                           | item                           | written by                          |
 * |------------------------------------------------|--------------------------------|-------------------------------------|
 * | `NODECLAIM#<name>`                             | a NodeClaim                    | `DynamoDbNodeClaimStore`            |
 * | `OFFERING#<instanceType>#<zone>#<capacityType>`| an unavailable offering        | `DynamoDbUnavailableOfferingsStore` |
 * | `LEASE#<controller>`                           | a controller lease             | `DynamoDbLeaseStore`                |
 * | `PASS#<controller>`                            | a controller's last pass       | `DynamoDbProvisioningPassStore`     |
 * | `PRICES#CURRENT`                               | the price snapshot pointer     | `DynamoDbPriceStore`                |
 * | `PRICES#<version>#<chunk>`                     | one chunk of a price snapshot  | `DynamoDbPriceStore`                |
 *
 * NodeClaim items hold the NodeClaim's fields as top-level attributes (so `version` can be conditioned on);
 * `pk`, `sk` and `instanceKey` are reserved attribute names. Disruption state lives on the NodeClaim items too, so each
 * step is one conditional write on the record it changes: `disruption` (the command id, reason, decision, phase
 * Proposed → Replacing → Draining, replacements, timestamps; kept after deletion as history), the drift hashes
 * (`nodePoolHash`, `nodeClassHash`), `expireAfterSeconds`, `terminationGracePeriodSeconds` and `lastPodEventAt` /
 * `podsFingerprint` (consolidateAfter). Budget usage is not stored: it is counted from the records each pass, under
 * the disruption lease, so it can never drift from them. Unavailable-offering items hold `instanceType`,
 * `zone`, `capacityType`, `reason`, `expiresAt` (epoch ms) and `ttl` (epoch seconds). A price snapshot is written as
 * immutable chunk items under a new version, then made current by a conditional put of the pointer item (see
 * `price-store.ts`); versions are `<fetchedAt, 13 digits>-<nonce>`, so they sort by fetch time. Lease items hold
 * `holder`, `expiresAt` and `acquiredAt` (epoch ms) and `ttl` (epoch seconds); see `lease-store.ts`.
 *
 * ## Index `byInstanceId`
 * Partition key `instanceKey = INSTANCE#<cluster>#<instanceId>`, written only on NodeClaim items that have an
 * `instanceId` (a sparse index: Pending claims and every other kind of item stay out of it, even if a later item
 * kind carries an `instanceId` attribute of its own). Keys-only projection: a lookup reads the keys from the
 * index, then the record itself with a strongly consistent GetItem, so it never returns a stale record — index
 * reads are eventually consistent in DynamoDB.
 *
 * ## Conventions
 * - Writes are conditional puts of whole items: `attribute_not_exists(pk)` to create, `#version = :expected` to
 *   update (the stored `version` goes up by one per write). A failed condition is an expected branch and becomes a
 *   {@link ConflictError}. No transactions: dynalite, which the simulation runs on, has none.
 * - Expiring items (unavailable offerings, leases) carry their expiry as epoch milliseconds and are filtered on
 *   read against the caller's clock. The `ttl` attribute (epoch seconds) exists only so DynamoDB's TTL deletes
 *   them eventually (within days, and never in dynalite); correctness never depends on it.
 * - Reads that feed decisions are strongly consistent (`ConsistentRead`), except index queries, which cannot be.
 */
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import type { TranslateConfig } from '@aws-sdk/lib-dynamodb';
import { ConflictError, SkiffError, ThrottledError } from '../../core/errors.js';
import { isThrottling } from './sdk-errors.js';
import { QueryCommand, type DynamoDBDocumentClient, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';

/** Partition-key attribute of the table (string): `CLUSTER#<cluster>`. */
export const PARTITION_KEY = 'pk';
/** Sort-key attribute of the table (string): `<KIND>#<id>`, see the module doc. */
export const SORT_KEY = 'sk';
/** Name of the global secondary index that finds a NodeClaim by EC2 instance id. */
export const INSTANCE_ID_INDEX = 'byInstanceId';
/** Partition-key attribute of {@link INSTANCE_ID_INDEX} (string): `INSTANCE#<cluster>#<instanceId>`. */
export const INSTANCE_KEY = 'instanceKey';
/** Attribute DynamoDB TTL is configured on: expiry in epoch **seconds**, for cleanup only (see module doc). */
export const TTL_ATTRIBUTE = 'ttl';

/** Sort-key prefixes, one per item kind. `DISRUPTION#` is reserved for a later store. */
export const SK_PREFIX = {
  nodeClaim: 'NODECLAIM#',
  offering: 'OFFERING#',
  disruption: 'DISRUPTION#',
  lease: 'LEASE#',
  pass: 'PASS#',
  prices: 'PRICES#',
} as const;

/** A table key as the DocumentClient takes it. */
export interface TableKey {
  readonly pk: string;
  readonly sk: string;
}

/** The partition key of every item of `cluster`: `CLUSTER#<cluster>`. */
export function clusterPk(cluster: string): string {
  return `CLUSTER#${cluster}`;
}

/** Key of the NodeClaim `name` of `cluster`. */
export function nodeClaimKey(cluster: string, name: string): TableKey {
  return { pk: clusterPk(cluster), sk: `${SK_PREFIX.nodeClaim}${name}` };
}

/** Key of an unavailable-offering item: `OFFERING#<instanceType>#<zone>#<capacityType>`. */
export function offeringKey(cluster: string, offering: { readonly instanceType: string; readonly zone: string; readonly capacityType: string }): TableKey {
  return { pk: clusterPk(cluster), sk: `${SK_PREFIX.offering}${offering.instanceType}#${offering.zone}#${offering.capacityType}` };
}

/** Key of a disruption command (reserved for the disruption store). */
export function disruptionKey(cluster: string, id: string): TableKey {
  return { pk: clusterPk(cluster), sk: `${SK_PREFIX.disruption}${id}` };
}

/** Key of the lease item of a periodic controller: `LEASE#<controller>` (`lease-store.ts`). */
export function leaseKey(cluster: string, controller: string): TableKey {
  return { pk: clusterPk(cluster), sk: `${SK_PREFIX.lease}${controller}` };
}

/** Key of the item recording a controller's last completed pass: `PASS#<controller>`. */
export function passKey(cluster: string, controller: string): TableKey {
  return { pk: clusterPk(cluster), sk: `${SK_PREFIX.pass}${controller}` };
}

/** Key of the item naming the current price snapshot: `PRICES#CURRENT`. */
export function priceSnapshotPointerKey(cluster: string): TableKey {
  return { pk: clusterPk(cluster), sk: `${SK_PREFIX.prices}CURRENT` };
}

/**
 * Sort-key prefix of every chunk of the price snapshot `version`: `PRICES#<version>#`. `version` must not contain
 * `#` (and, starting with a digit, never collides with `CURRENT`).
 */
export function priceChunkPrefix(version: string): string {
  return `${SK_PREFIX.prices}${version}#`;
}

/** Key of chunk `index` (0-based) of the price snapshot `version`: `PRICES#<version>#<index, 4 digits>`. */
export function priceChunkKey(cluster: string, version: string, index: number): TableKey {
  return { pk: clusterPk(cluster), sk: `${priceChunkPrefix(version)}${String(index).padStart(4, '0')}` };
}

/** Value of {@link INSTANCE_KEY} for a NodeClaim of `cluster` launched as `instanceId` (e.g. `i-0abc…`). */
export function instanceKey(cluster: string, instanceId: string): string {
  return `INSTANCE#${cluster}#${instanceId}`;
}

/** A key as one string, `<pk>/<sk>`, for error messages and {@link ConflictError.key}. */
export function formatKey(key: TableKey): string {
  return `${key.pk}/${key.sk}`;
}

/**
 * The CreateTable input of the table: string `pk`/`sk`, on-demand billing (PAY_PER_REQUEST), and the keys-only
 * {@link INSTANCE_ID_INDEX}. TTL cannot be part of CreateTable: enable it on {@link TTL_ATTRIBUTE} separately
 * (the CDK stack's `timeToLiveAttribute`).
 * @param tableName the physical table name
 * @example
 * await dynamodb.send(new CreateTableCommand(tableDefinition('skiff-prod')));
 */
export function tableDefinition(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: PARTITION_KEY, AttributeType: 'S' },
      { AttributeName: SORT_KEY, AttributeType: 'S' },
      { AttributeName: INSTANCE_KEY, AttributeType: 'S' },
    ],
    KeySchema: [
      { AttributeName: PARTITION_KEY, KeyType: 'HASH' },
      { AttributeName: SORT_KEY, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: INSTANCE_ID_INDEX,
        KeySchema: [{ AttributeName: INSTANCE_KEY, KeyType: 'HASH' }],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
    ],
  };
}

/**
 * DocumentClient translation for this table: `removeUndefinedValues`, so absent optional fields are left out of
 * items instead of failing the marshalling. (The stores also strip `undefined` themselves, so they work with any
 * DocumentClient; this keeps other writers consistent.) Numbers unmarshall as JS numbers. `convertClassInstanceToMap`,
 * because the marshaller tells a plain object by `value.constructor.name === 'Object'`: a label or annotation map
 * with the valid key `constructor` (a NodeClaim's labels) would otherwise fail every write of its record.
 * @example
 * const client = DynamoDBDocumentClient.from(new DynamoDBClient({}), TRANSLATE_CONFIG);
 */
export const TRANSLATE_CONFIG: TranslateConfig = {
  marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: true },
  unmarshallOptions: { wrapNumbers: false },
};


/** What a store was doing when a DynamoDB call failed, for {@link storeError}. */
export interface StoreErrorContext {
  /** The DynamoDB operation, e.g. `PutItem`. */
  readonly operation: string;
  /** The item (or, for queries, partition) concerned, as {@link formatKey} writes it. */
  readonly key: string;
  /** Message of the {@link ConflictError} when the failure is a failed condition. */
  readonly conflict?: string;
}

/**
 * Translates a DynamoDB/SDK failure into Skiff's errors, once, at the adapter boundary: a failed condition
 * (`ConditionalCheckFailedException`) → {@link ConflictError} carrying `context.key`; throttling that outlived the
 * SDK's retries → {@link ThrottledError}; anything else → a {@link SkiffError} naming the operation and key.
 * The SDK error is kept as `cause`. A {@link SkiffError} passes through unchanged.
 * Errors are recognised by `name`, not `instanceof`, so a second copy of the SDK cannot defeat the check.
 * @returns the error to throw
 */
export function storeError(error: unknown, context: StoreErrorContext): SkiffError {
  if (error instanceof SkiffError) return error;
  const name = error instanceof Error ? error.name : undefined;
  const detail = error instanceof Error ? error.message : String(error);
  if (name === 'ConditionalCheckFailedException') {
    return new ConflictError(context.conflict ?? `${context.operation} ${context.key}: condition failed`, context.key, { cause: error });
  }
  if (isThrottling(error)) {
    return new ThrottledError(`DynamoDB ${context.operation} ${context.key} throttled: ${detail}`, { cause: error });
  }
  return new SkiffError(`DynamoDB ${context.operation} ${context.key} failed: ${name ?? 'Error'}: ${detail}`, { cause: error });
}

/**
 * Every item a Query matches, following `LastEvaluatedKey` page by page, with failures translated by
 * {@link storeError}. (A plain loop on `send` rather than `paginateQuery`, which refuses anything but a
 * DocumentClient instance — tests wrap the client to interleave writers.)
 * @param client a DocumentClient
 * @param input the Query (without `ExclusiveStartKey`)
 * @param options `key` names what was queried in errors (e.g. the cluster partition); `pageSize` sets DynamoDB's
 *   `Limit` (undefined: DynamoDB's own 1 MB pages)
 * @throws {SkiffError} | {ThrottledError} when DynamoDB fails
 */
export async function queryAll(client: DynamoDBDocumentClient, input: QueryCommandInput, options: { readonly key: string; readonly pageSize?: number | undefined }): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  try {
    do {
      const page = await client.send(new QueryCommand({ ...input, ...(options.pageSize !== undefined ? { Limit: options.pageSize } : {}), ExclusiveStartKey: startKey }));
      items.push(...(page.Items ?? []));
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
  } catch (error) {
    throw storeError(error, { operation: 'Query', key: `${options.key}${input.IndexName ? ` (index ${input.IndexName})` : ''}` });
  }
  return items;
}
