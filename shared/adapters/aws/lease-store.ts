/**
 * Leases on DynamoDB (the single table of `table.ts`): one item per lease, `sk = LEASE#<name>`, holding `holder`,
 * `expiresAt` (epoch ms) and `ttl` (epoch seconds, for DynamoDB TTL cleanup only). Taking a lease is one conditional
 * put; releasing it one conditional delete. Expiry is checked in the condition against the caller's clock, because
 * DynamoDB's TTL deletion is lazy (within days) and dynalite has none.
 */
import { DeleteCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { isConflictError } from '../../core/errors.js';
import type { Leases } from '../../ports/leases.js';
import { PARTITION_KEY, TTL_ATTRIBUTE, formatKey, leaseKey, storeError } from './table.js';

/** Dependencies of {@link DynamoDbLeaseStore}. */
export interface DynamoDbLeaseStoreProps {
  /** A DocumentClient (any translate config). */
  readonly client: DynamoDBDocumentClient;
  /** Physical name of the table created from `tableDefinition`. */
  readonly tableName: string;
  /** EKS cluster name: leases are per cluster. */
  readonly cluster: string;
}

/** The stored shape of a lease item (besides `pk`/`sk`). */
interface LeaseItem {
  /** Who holds it, e.g. a Lambda request id. */
  readonly holder: string;
  /** Epoch milliseconds (UTC); the lease is held while `now < expiresAt`. */
  readonly expiresAt: number;
  /** Epoch milliseconds (UTC) of the acquire (or renewal) that wrote the item; for operators. */
  readonly acquiredAt: number;
  /** Epoch seconds, `ceil(expiresAt / 1000)`: DynamoDB TTL cleanup only. */
  readonly ttl: number;
}

/**
 * {@link Leases} on DynamoDB. `acquire` is a put conditioned on
 * `attribute_not_exists(pk) OR expiresAt <= :now OR holder = :me`, so a free, expired or own lease is taken and a
 * lease someone else holds is not; DynamoDB evaluates the condition and the write atomically, so of concurrent
 * acquirers exactly one wins. `release` is a delete conditioned on `holder = :me`. A failed condition is an expected
 * outcome (`false`, or a no-op); other DynamoDB failures leave as `ThrottledError` or `SkiffError` (see `storeError`).
 * @example
 * const leases = new DynamoDbLeaseStore({ client, tableName: 'skiff', cluster: 'prod' });
 * if (await leases.acquire('lifecycle', context.awsRequestId, 120, clock.now())) {
 *   try { await reconcileLifecycle(deps); } finally { await leases.release('lifecycle', context.awsRequestId); }
 * }
 */
export class DynamoDbLeaseStore implements Leases {
  readonly #client: DynamoDBDocumentClient;
  readonly #tableName: string;
  readonly #cluster: string;

  constructor(props: DynamoDbLeaseStoreProps) {
    this.#client = props.client;
    this.#tableName = props.tableName;
    this.#cluster = props.cluster;
  }

  /**
   * Takes (or renews) the lease `name` for `holder` until `nowMs + ttlSeconds × 1000` (see {@link Leases.acquire}).
   * @param ttlSeconds seconds, > 0 (fractions allowed)
   * @param nowMs epoch ms (UTC)
   * @returns true when `holder` holds the lease now, false when another holder's lease has not expired
   * @throws {RangeError} when `ttlSeconds` is not a positive finite number · {ThrottledError} | {SkiffError} when
   *   DynamoDB fails
   */
  async acquire(name: string, holder: string, ttlSeconds: number, nowMs: number): Promise<boolean> {
    if (!(Number.isFinite(ttlSeconds) && ttlSeconds > 0)) throw new RangeError(`lease ttlSeconds must be a positive number of seconds, got ${ttlSeconds}`);
    const key = leaseKey(this.#cluster, name);
    const expiresAt = nowMs + Math.round(ttlSeconds * 1000);
    const item: LeaseItem = { holder, expiresAt, acquiredAt: nowMs, [TTL_ATTRIBUTE]: Math.ceil(expiresAt / 1000) };
    try {
      await this.#client.send(
        new PutCommand({
          TableName: this.#tableName,
          Item: { ...item, ...key },
          ConditionExpression: 'attribute_not_exists(#pk) OR #expiresAt <= :now OR #holder = :me',
          ExpressionAttributeNames: { '#pk': PARTITION_KEY, '#expiresAt': 'expiresAt', '#holder': 'holder' },
          ExpressionAttributeValues: { ':now': nowMs, ':me': holder },
        }),
      );
      return true;
    } catch (error) {
      const translated = storeError(error, { operation: 'PutItem', key: formatKey(key), conflict: `lease ${name} is held by another holder` });
      if (isConflictError(translated)) return false;
      throw translated;
    }
  }

  /**
   * Deletes the lease item if `holder` holds it; a lease held by someone else, or already gone, is left alone.
   * @throws {ThrottledError} | {SkiffError} when DynamoDB fails (a failed condition is not a failure)
   */
  async release(name: string, holder: string): Promise<void> {
    const key = leaseKey(this.#cluster, name);
    try {
      await this.#client.send(
        new DeleteCommand({
          TableName: this.#tableName,
          Key: key,
          ConditionExpression: '#holder = :me',
          ExpressionAttributeNames: { '#holder': 'holder' },
          ExpressionAttributeValues: { ':me': holder },
        }),
      );
    } catch (error) {
      const translated = storeError(error, { operation: 'DeleteItem', key: formatKey(key), conflict: `lease ${name} is not held by ${holder}` });
      if (isConflictError(translated)) return;
      throw translated;
    }
  }
}
