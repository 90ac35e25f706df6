/**
 * The latest price snapshot (on-demand and spot prices of one region) on DynamoDB, in the single table of
 * `table.ts`, and {@link refreshPrices}, which fetches both price lists and stores them.
 *
 * ## Layout
 * A snapshot is written as immutable chunk items `PRICES#<version>#<chunk>` (instance types sorted by name, packed
 * greedily so each chunk stays under {@link DEFAULT_MAX_CHUNK_BYTES}, well below DynamoDB's 400 KB item limit), then
 * made current by a conditional put of the pointer item `PRICES#CURRENT` naming the version, its `fetchedAt` and its
 * chunk count. A reader reads the pointer, then the chunks of that version; since chunks never change and the
 * pointer flips in one write, a reader sees a whole old or a whole new snapshot, never a mix.
 *
 * ## Ordering and idempotency
 * The pointer put is conditioned on `attribute_not_exists(pk) OR fetchedAt < :fetchedAt`, so an older snapshot never
 * replaces a newer one, whatever order overlapping refreshes finish in; a refresh that loses deletes the chunks it
 * wrote (no reader ever saw them). After a win, chunks of versions older than the one just replaced are deleted;
 * the replaced version is kept, so a reader that read the old pointer an instant earlier still finds its chunks.
 * Should a reader find a version's chunks incomplete anyway (a very slow reader, two refreshes later), it re-reads
 * the pointer. Versions are `<fetchedAt, 13 digits>-<nonce>`, unique per write even for equal `fetchedAt`.
 */
import { DeleteCommand, GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { EC2Client } from '@aws-sdk/client-ec2';
import type { PricingClient } from '@aws-sdk/client-pricing';
import { CloudProviderError, SkiffError, isConflictError } from '../../core/errors.js';
import type { Clock } from '../../ports/clock.js';
import { randomIds, type IdGenerator } from '../../ports/ids.js';
import { fetchOnDemandPrices, fetchSpotPrices, type OnDemandPrices, type SpotPrices } from './pricing.js';
import {
  PARTITION_KEY,
  SK_PREFIX,
  SORT_KEY,
  clusterPk,
  formatKey,
  priceChunkKey,
  priceChunkPrefix,
  priceSnapshotPointerKey,
  storeError,
  type TableKey,
  queryAll,
} from './table.js';

/** The prices of one region at one moment. */
export interface PriceSnapshot {
  /** Region the prices are for, e.g. `us-west-2`. */
  readonly region: string;
  /** When the prices were fetched: epoch ms (UTC). Orders snapshots: a newer one replaces an older one, never the reverse. */
  readonly fetchedAt: number;
  /** Instance type → on-demand USD per instance-hour (Pricing API `GetProducts`). */
  readonly onDemand: OnDemandPrices;
  /** Instance type → availability zone → spot USD per instance-hour (EC2 `DescribeSpotPriceHistory`). */
  readonly spot: SpotPrices;
}

/** A snapshot as stored, with the version it was written under. */
export interface StoredPriceSnapshot extends PriceSnapshot {
  /** `<fetchedAt, 13 digits>-<nonce>`. */
  readonly version: string;
}

/** Where instance types read prices from: the latest stored snapshot. */
export interface PriceSnapshotSource {
  /**
   * The current snapshot, or `undefined` when none has been stored yet.
   * @throws {SkiffError} when the store fails
   */
  latest(): Promise<PriceSnapshot | undefined>;
}

/** What {@link DynamoDbPriceStore.put} did. */
export type PutPriceSnapshotResult =
  | {
      /** The snapshot is current now. */
      readonly outcome: 'stored';
      readonly version: string;
      /** Number of chunk items written. */
      readonly chunks: number;
      /** The version it replaced, if any (kept for readers still reading it). */
      readonly replaced?: string;
      /** Chunk items of older versions deleted. */
      readonly deletedChunks: number;
    }
  | {
      /** A snapshot with the same or a later `fetchedAt` is already current; this one was discarded. */
      readonly outcome: 'superseded';
      readonly version: string;
    };

/** A store for price snapshots: what {@link refreshPrices} writes to. */
export interface PriceSnapshotStore extends PriceSnapshotSource {
  /**
   * Stores `snapshot` and makes it current unless a snapshot with the same or a later `fetchedAt` already is.
   * @throws {SkiffError} when the store fails
   */
  put(snapshot: PriceSnapshot): Promise<PutPriceSnapshotResult>;
}

/**
 * Default size budget of one chunk item, in bytes of DynamoDB item size (attribute names plus values), estimated
 * conservatively: 300,000, against DynamoDB's limit of 400 KB (409,600 bytes) per item. A region's full spot price
 * list (~1,000 types × 6 zones) fits in one or two chunks.
 * Source: Amazon DynamoDB Developer Guide, "Service, account, and table quotas" (item size) and "Item sizes and formats".
 */
export const DEFAULT_MAX_CHUNK_BYTES = 300_000;

/** How often {@link DynamoDbPriceStore.latest} re-reads the pointer when a version's chunks are incomplete. */
const READ_ATTEMPTS = 3;

/** Dependencies of {@link DynamoDbPriceStore}. */
export interface DynamoDbPriceStoreProps {
  /** A DocumentClient (any translate config). */
  readonly client: DynamoDBDocumentClient;
  /** Physical name of the table created from `tableDefinition`. */
  readonly tableName: string;
  /** EKS cluster name: the snapshot lives in this cluster's partition. */
  readonly cluster: string;
  /** Size budget of one chunk item, in estimated bytes. @default {@link DEFAULT_MAX_CHUNK_BYTES} */
  readonly maxChunkBytes?: number;
  /** Nonces for versions. @default randomIds */
  readonly ids?: IdGenerator;
}

/** The pointer item (besides `pk`/`sk`). */
interface PointerItem {
  readonly version: string;
  readonly region: string;
  /** Epoch ms (UTC). */
  readonly fetchedAt: number;
  readonly chunks: number;
}

/** A chunk item (besides `pk`/`sk`): the prices of a contiguous range of instance types. */
interface ChunkItem {
  readonly version: string;
  readonly index: number;
  /** Instance type → USD/hour. */
  readonly onDemand: Record<string, number>;
  /** Instance type → zone → USD/hour. */
  readonly spot: Record<string, Record<string, number>>;
}

/** The prices of one chunk: a contiguous range of instance types (sorted by name). */
export interface PriceChunk {
  readonly onDemand: Record<string, number>;
  readonly spot: Record<string, Record<string, number>>;
}

/**
 * {@link PriceSnapshotStore} on DynamoDB (layout, ordering and idempotency in the module doc). Reads are strongly
 * consistent. DynamoDB failures leave as `ThrottledError` or `SkiffError` (see `storeError`).
 * @example
 * const store = new DynamoDbPriceStore({ client, tableName: 'skiff', cluster: 'prod' });
 * await store.put({ region: 'us-west-2', fetchedAt: clock.now(), onDemand, spot });
 * (await store.latest())?.onDemand.get('m5.large') // 0.096
 */
export class DynamoDbPriceStore implements PriceSnapshotStore {
  readonly #client: DynamoDBDocumentClient;
  readonly #tableName: string;
  readonly #cluster: string;
  readonly #maxChunkBytes: number;
  readonly #ids: IdGenerator;

  constructor(props: DynamoDbPriceStoreProps) {
    this.#client = props.client;
    this.#tableName = props.tableName;
    this.#cluster = props.cluster;
    this.#maxChunkBytes = props.maxChunkBytes ?? DEFAULT_MAX_CHUNK_BYTES;
    this.#ids = props.ids ?? randomIds;
  }

  /**
   * The current snapshot, or `undefined` when none was ever stored. Reads the pointer, then every chunk of its
   * version; if the chunks are incomplete (deleted under a very slow reader) it starts over, up to 3 times.
   * @throws {SkiffError} when DynamoDB fails, or the chunks stay incomplete
   */
  async latest(): Promise<StoredPriceSnapshot | undefined> {
    for (let attempt = 1; ; attempt++) {
      const pointer = await this.#readPointer();
      if (!pointer) return undefined;
      const chunks = await this.#readChunks(pointer.version);
      const complete = chunks.length === pointer.chunks && chunks.every((chunk, i) => chunk.index === i);
      if (complete) return assemble(pointer, chunks);
      if (attempt >= READ_ATTEMPTS) {
        throw new SkiffError(`price snapshot ${pointer.version}: found ${chunks.length} of ${pointer.chunks} chunks after ${attempt} reads`);
      }
    }
  }

  /**
   * When the current snapshot's prices were fetched, from the pointer item alone (one strongly consistent GetItem,
   * no chunk read): what a staleness check needs.
   * @returns epoch ms (UTC), or `undefined` when no snapshot was ever stored
   * @throws {SkiffError} when DynamoDB fails (`ThrottledError` when it throttles past the SDK's retries)
   */
  async currentFetchedAt(): Promise<number | undefined> {
    const pointer = await this.#readPointer();
    return typeof pointer?.fetchedAt === 'number' ? pointer.fetchedAt : undefined;
  }

  /**
   * Writes `snapshot`'s chunks under a new version, then makes it current with a conditional put of the pointer,
   * unless a snapshot with the same or a later `fetchedAt` is current (then its chunks are deleted again and the
   * result says `superseded`). After a win, chunks of versions older than the replaced one are deleted.
   * @throws {SkiffError} when DynamoDB fails (the snapshot may then be current already, or not; the call can be repeated)
   */
  async put(snapshot: PriceSnapshot): Promise<PutPriceSnapshotResult> {
    const version = `${String(snapshot.fetchedAt).padStart(13, '0')}-${this.#ids()}`;
    const chunks = chunkPrices(snapshot, this.#maxChunkBytes);
    await Promise.all(
      chunks.map((chunk, index) => {
        const item: ChunkItem = { version, index, onDemand: chunk.onDemand, spot: chunk.spot };
        return this.#put(priceChunkKey(this.#cluster, version, index), item);
      }),
    );
    const pointerKey = priceSnapshotPointerKey(this.#cluster);
    const pointer: PointerItem = { version, region: snapshot.region, fetchedAt: snapshot.fetchedAt, chunks: chunks.length };
    let replaced: string | undefined;
    try {
      const { Attributes } = await this.#client.send(
        new PutCommand({
          TableName: this.#tableName,
          Item: { ...pointer, ...pointerKey },
          ConditionExpression: 'attribute_not_exists(#pk) OR #fetchedAt < :fetchedAt',
          ExpressionAttributeNames: { '#pk': PARTITION_KEY, '#fetchedAt': 'fetchedAt' },
          ExpressionAttributeValues: { ':fetchedAt': snapshot.fetchedAt },
          ReturnValues: 'ALL_OLD',
        }),
      );
      replaced = typeof Attributes?.['version'] === 'string' ? Attributes['version'] : undefined;
    } catch (error) {
      const translated = storeError(error, { operation: 'PutItem', key: formatKey(pointerKey), conflict: 'a snapshot at least as new is current' });
      if (!isConflictError(translated)) throw translated;
      // Lost to a snapshot at least as new: nobody ever read these chunks.
      await this.#deleteVersions(priceChunkPrefix(version), `${priceChunkPrefix(version)}\uffff`);
      return { outcome: 'superseded', version };
    }
    const deletedChunks = replaced === undefined ? 0 : await this.#deleteVersions(SK_PREFIX.prices, priceChunkPrefix(replaced));
    return { outcome: 'stored', version, chunks: chunks.length, ...(replaced !== undefined ? { replaced } : {}), deletedChunks };
  }

  async #readPointer(): Promise<PointerItem | undefined> {
    const key = priceSnapshotPointerKey(this.#cluster);
    try {
      const { Item } = await this.#client.send(new GetCommand({ TableName: this.#tableName, Key: key, ConsistentRead: true }));
      return Item as PointerItem | undefined;
    } catch (error) {
      throw storeError(error, { operation: 'GetItem', key: formatKey(key) });
    }
  }

  /** Every chunk item of `version`, sorted by index. */
  async #readChunks(version: string): Promise<ChunkItem[]> {
    const items = await queryAll(this.#client, {
      TableName: this.#tableName,
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
      ExpressionAttributeNames: { '#pk': PARTITION_KEY, '#sk': SORT_KEY },
      ExpressionAttributeValues: { ':pk': clusterPk(this.#cluster), ':prefix': priceChunkPrefix(version) },
      ConsistentRead: true,
    }, { key: clusterPk(this.#cluster) });
    return (items as unknown as ChunkItem[]).sort((a, b) => a.index - b.index);
  }

  /** Deletes every chunk item whose sort key is in `[from, before)`; returns how many. */
  async #deleteVersions(from: string, before: string): Promise<number> {
    const items = await queryAll(this.#client, {
      TableName: this.#tableName,
      KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :before',
      ExpressionAttributeNames: { '#pk': PARTITION_KEY, '#sk': SORT_KEY },
      ExpressionAttributeValues: { ':pk': clusterPk(this.#cluster), ':from': from, ':before': before },
      ProjectionExpression: '#pk, #sk',
      ConsistentRead: true,
    }, { key: clusterPk(this.#cluster) });
    const keys: TableKey[] = items.flatMap((item) => {
      const sk = item[SORT_KEY];
      return typeof sk === 'string' && sk < before ? [{ pk: clusterPk(this.#cluster), sk }] : [];
    });
    await Promise.all(
      keys.map(async (key) => {
        try {
          await this.#client.send(new DeleteCommand({ TableName: this.#tableName, Key: key }));
        } catch (error) {
          throw storeError(error, { operation: 'DeleteItem', key: formatKey(key) });
        }
      }),
    );
    return keys.length;
  }

  async #put(key: TableKey, item: ChunkItem): Promise<void> {
    try {
      await this.#client.send(new PutCommand({ TableName: this.#tableName, Item: { ...item, ...key } }));
    } catch (error) {
      throw storeError(error, { operation: 'PutItem', key: formatKey(key) });
    }
  }
}

/**
 * Splits a snapshot's prices into chunks: instance types sorted by name (every type with an on-demand or a spot
 * price), packed greedily while the chunk's estimated DynamoDB item size stays within `maxChunkBytes`. A type is
 * never split; a single type larger than the budget gets a chunk of its own. An empty snapshot gives one empty chunk.
 * Pure; exported for tests.
 * @param maxChunkBytes size budget per chunk, in estimated bytes (see {@link estimatedTypeBytes})
 */
export function chunkPrices(snapshot: Pick<PriceSnapshot, 'onDemand' | 'spot'>, maxChunkBytes: number): PriceChunk[] {
  const types = [...new Set([...snapshot.onDemand.keys(), ...snapshot.spot.keys()])].sort();
  const chunks: PriceChunk[] = [];
  let current: { onDemand: Record<string, number>; spot: Record<string, Record<string, number>> } = { onDemand: {}, spot: {} };
  let size = CHUNK_OVERHEAD_BYTES;
  let empty = true;
  for (const type of types) {
    const onDemand = snapshot.onDemand.get(type);
    const spot = snapshot.spot.get(type);
    const bytes = estimatedTypeBytes(type, onDemand !== undefined, spot);
    if (!empty && size + bytes > maxChunkBytes) {
      chunks.push(current);
      current = { onDemand: {}, spot: {} };
      size = CHUNK_OVERHEAD_BYTES;
    }
    if (onDemand !== undefined) current.onDemand[type] = onDemand;
    if (spot !== undefined && spot.size > 0) current.spot[type] = Object.fromEntries([...spot].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    size += bytes;
    empty = false;
  }
  chunks.push(current);
  return chunks;
}

/** Bytes of a chunk item besides its prices: key and bookkeeping attributes, generously. */
const CHUNK_OVERHEAD_BYTES = 512;
/** Upper bound of a DynamoDB number's size in bytes. Source: DynamoDB Developer Guide, "Item sizes and formats". */
const NUMBER_BYTES = 21;
/** Per map element: the element's own overhead (1 byte) plus slack. */
const ELEMENT_BYTES = 4;

/**
 * Upper estimate of the DynamoDB item bytes one instance type adds to a chunk: its name (UTF-8) and a number in the
 * on-demand map, its name and a nested map in the spot map, each zone's name and number. DynamoDB counts attribute
 * names by UTF-8 length, numbers at most 21 bytes, and 3 bytes plus 1 per element for a map.
 */
export function estimatedTypeBytes(type: string, hasOnDemand: boolean, spot: ReadonlyMap<string, number> | undefined): number {
  const name = Buffer.byteLength(type, 'utf8');
  let bytes = hasOnDemand ? name + NUMBER_BYTES + ELEMENT_BYTES : 0;
  if (spot && spot.size > 0) {
    bytes += name + 3 + ELEMENT_BYTES;
    for (const zone of spot.keys()) bytes += Buffer.byteLength(zone, 'utf8') + NUMBER_BYTES + ELEMENT_BYTES;
  }
  return bytes;
}

function assemble(pointer: PointerItem, chunks: readonly ChunkItem[]): StoredPriceSnapshot {
  const onDemand = new Map<string, number>();
  const spot = new Map<string, Map<string, number>>();
  for (const chunk of chunks) {
    for (const [type, price] of Object.entries(chunk.onDemand ?? {})) onDemand.set(type, price);
    for (const [type, zones] of Object.entries(chunk.spot ?? {})) spot.set(type, new Map(Object.entries(zones)));
  }
  return { version: pointer.version, region: pointer.region, fetchedAt: pointer.fetchedAt, onDemand, spot };
}

/** Dependencies of {@link refreshPrices}. */
export interface RefreshPricesDeps {
  /** A Pricing client, normally `createPricingClient(region)`. */
  readonly pricing: PricingClient;
  /** An EC2 client in `region`. */
  readonly ec2: EC2Client;
  /** Where the snapshot goes. */
  readonly store: PriceSnapshotStore;
  /** The time source; `now` stamps the snapshot and is the spot query's `StartTime`. */
  readonly clock: Clock;
  /** The cluster's region, e.g. `us-west-2`. */
  readonly region: string;
}

/** What {@link refreshPrices} did, as a value: stored, or superseded by a snapshot at least as new. */
export interface RefreshPricesResult {
  readonly outcome: PutPriceSnapshotResult['outcome'];
  readonly version: string;
  /** Epoch ms (UTC) the prices were fetched at. */
  readonly fetchedAt: number;
  /** Instance types with an on-demand price. */
  readonly onDemandTypes: number;
  /** (instance type, zone) pairs with a spot price. */
  readonly spotOfferings: number;
}

/**
 * Fetches on-demand (`GetProducts`) and spot (`DescribeSpotPriceHistory`) prices in parallel and stores them as one
 * snapshot stamped with `clock.now()` taken before fetching. Safe to run repeatedly and concurrently: a run whose
 * `now` is older than (or equal to) the current snapshot's leaves it in place and reports `superseded`. When either
 * fetch fails or comes back empty, nothing is stored and the current snapshot stays (Karpenter likewise keeps its
 * previous prices and reports "no on-demand pricing found" / "no spot pricing found").
 *
 * Karpenter runs this every 12 h (aws `pkg/controllers/providers/pricing/controller.go`).
 * @throws {ThrottledError} when an API or DynamoDB throttles past the SDK's retries
 * @throws {CloudProviderError} when an API call fails, or returns no prices at all (`code` `NoOnDemandPrices` /
 * `NoSpotPrices`)
 * @throws {SkiffError} when the store fails
 * @example
 * const result = await refreshPrices({ pricing: createPricingClient(region), ec2, store, clock: systemClock, region });
 * // { outcome: 'stored', version: '1767225600000-b2k9x', onDemandTypes: 812, spotOfferings: 3904, … }
 */
export async function refreshPrices(deps: RefreshPricesDeps): Promise<RefreshPricesResult> {
  const fetchedAt = deps.clock.now();
  const [onDemand, spot] = await Promise.all([fetchOnDemandPrices(deps.pricing, deps.region), fetchSpotPrices(deps.ec2, fetchedAt)]);
  if (onDemand.size === 0) throw new CloudProviderError(`pricing:GetProducts returned no on-demand prices for ${deps.region}`, 'NoOnDemandPrices');
  if (spot.size === 0) throw new CloudProviderError(`ec2:DescribeSpotPriceHistory returned no spot prices in ${deps.region}`, 'NoSpotPrices');
  const result = await deps.store.put({ region: deps.region, fetchedAt, onDemand, spot });
  let spotOfferings = 0;
  for (const zones of spot.values()) spotOfferings += zones.size;
  return { outcome: result.outcome, version: result.version, fetchedAt, onDemandTypes: onDemand.size, spotOfferings };
}

