/**
 * UnavailableOfferings on DynamoDB (the single table of `table.ts`): one item per offering,
 * `sk = OFFERING#<instanceType>#<zone>#<capacityType>`, expiry checked on read.
 */
import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { CapacityType } from '../../core/api/labels.js';
import { isConflictError } from '../../core/errors.js';
import type { OfferingKey } from '../../core/instancetypes/offering-key.js';
import type { UnavailableOffering, UnavailableOfferings } from '../../ports/unavailable-offerings.js';
import { PARTITION_KEY, SK_PREFIX, SORT_KEY, TTL_ATTRIBUTE, clusterPk, formatKey, offeringKey, storeError, queryAll } from './table.js';

/** Dependencies of {@link DynamoDbUnavailableOfferingsStore}. */
export interface DynamoDbUnavailableOfferingsStoreProps {
  /** A DocumentClient (any translate config). */
  readonly client: DynamoDBDocumentClient;
  /** Physical name of the table created from `tableDefinition`. */
  readonly tableName: string;
  /** EKS cluster name: the store sees only this cluster's partition. */
  readonly cluster: string;
  /**
   * Items per Query page (DynamoDB `Limit`) for `listUnavailable`.
   * @default undefined — DynamoDB's own 1 MB pages
   */
  readonly pageSize?: number;
}

/** The stored shape of an unavailable-offering item (besides `pk`/`sk`). */
interface OfferingItem {
  readonly instanceType: string;
  readonly zone: string;
  readonly capacityType: CapacityType;
  readonly reason: string;
  /** Epoch milliseconds (UTC); the mark holds while `now < expiresAt`. */
  readonly expiresAt: number;
  /** Epoch seconds, `ceil(expiresAt / 1000)`: DynamoDB TTL cleanup only. */
  readonly ttl: number;
}

/**
 * {@link UnavailableOfferings} on DynamoDB. `markUnavailable` is a put conditioned on the stored expiry not being
 * later (`attribute_not_exists(expiresAt) OR expiresAt <= :until`), so marks only ever extend and a lost race is a
 * no-op; `listUnavailable` queries the cluster's `OFFERING#` items and keeps those with `expiresAt > now`.
 * DynamoDB failures leave as `ThrottledError` or `SkiffError` (see `storeError`).
 * @example
 * const offerings = new DynamoDbUnavailableOfferingsStore({ client, tableName: 'skiff', cluster: 'prod' });
 * await offerings.markUnavailable({ instanceType: 'm5.large', zone: 'us-west-2a', capacityType: 'spot' },
 *   clock.now() + 3 * 60_000, 'InsufficientInstanceCapacity');
 * const unavailable = await offerings.listUnavailable(clock.now());
 */
export class DynamoDbUnavailableOfferingsStore implements UnavailableOfferings {
  readonly #client: DynamoDBDocumentClient;
  readonly #tableName: string;
  readonly #cluster: string;
  readonly #pageSize: number | undefined;

  constructor(props: DynamoDbUnavailableOfferingsStoreProps) {
    this.#client = props.client;
    this.#tableName = props.tableName;
    this.#cluster = props.cluster;
    this.#pageSize = props.pageSize;
  }

  /**
   * Marks `offering` unavailable until `untilMs` (epoch ms, UTC) unless it is already marked until a later time.
   * Idempotent.
   * @throws {SkiffError} when DynamoDB fails (a failed condition is not a failure: the existing mark is longer)
   */
  async markUnavailable(offering: OfferingKey, untilMs: number, reason: string): Promise<void> {
    const key = offeringKey(this.#cluster, offering);
    const item: OfferingItem = {
      instanceType: offering.instanceType,
      zone: offering.zone,
      capacityType: offering.capacityType,
      reason,
      expiresAt: untilMs,
      [TTL_ATTRIBUTE]: Math.ceil(untilMs / 1000),
    };
    try {
      await this.#client.send(
        new PutCommand({
          TableName: this.#tableName,
          Item: { ...item, ...key },
          ConditionExpression: 'attribute_not_exists(#expiresAt) OR #expiresAt <= :until',
          ExpressionAttributeNames: { '#expiresAt': 'expiresAt' },
          ExpressionAttributeValues: { ':until': untilMs },
        }),
      );
    } catch (error) {
      const translated = storeError(error, { operation: 'PutItem', key: formatKey(key) });
      if (isConflictError(translated)) return; // already marked until later: nothing to do
      throw translated;
    }
  }

  /**
   * The offerings still marked at `nowMs` (epoch ms, UTC): those with `expiresAt > nowMs`, sorted by instance
   * type, zone, capacity type. Strongly consistent; expired items are filtered server-side (they still cost reads
   * until DynamoDB TTL deletes them).
   * @throws {SkiffError} when DynamoDB fails
   */
  async listUnavailable(nowMs: number): Promise<UnavailableOffering[]> {
    const items = await queryAll(
      this.#client,
      {
        TableName: this.#tableName,
        KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
        FilterExpression: '#expiresAt > :now',
        ExpressionAttributeNames: { '#pk': PARTITION_KEY, '#sk': SORT_KEY, '#expiresAt': 'expiresAt' },
        ExpressionAttributeValues: { ':pk': clusterPk(this.#cluster), ':prefix': SK_PREFIX.offering, ':now': nowMs },
        ConsistentRead: true,
      },
      { key: clusterPk(this.#cluster), pageSize: this.#pageSize },
    );
    const out: UnavailableOffering[] = items.map((raw) => {
      const item = raw as unknown as OfferingItem;
      return { instanceType: item.instanceType, zone: item.zone, capacityType: item.capacityType, untilMs: item.expiresAt, reason: item.reason };
    });
    return out.sort(byOffering);
  }
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function byOffering(a: OfferingKey, b: OfferingKey): number {
  return compareStrings(a.instanceType, b.instanceType) || compareStrings(a.zone, b.zone) || compareStrings(a.capacityType, b.capacityType);
}
