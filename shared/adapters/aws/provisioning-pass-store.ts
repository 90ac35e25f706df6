/**
 * ProvisioningPasses on DynamoDB (the single table of `table.ts`): one item `PASS#provisioner` per cluster whose
 * `startedAt` (epoch ms) only moves forward, by a put conditioned on the stored value being older.
 */
import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { isConflictError } from '../../core/errors.js';
import type { ProvisioningPasses } from '../../ports/provisioning-passes.js';
import { formatKey, passKey, storeError } from './table.js';

/** Dependencies of {@link DynamoDbProvisioningPassStore}. */
export interface DynamoDbProvisioningPassStoreProps {
  readonly client: DynamoDBDocumentClient;
  /** Physical name of the table created from `tableDefinition`. */
  readonly tableName: string;
  /** EKS cluster name. */
  readonly cluster: string;
}

/**
 * {@link ProvisioningPasses} on DynamoDB. Reads are strongly consistent; a lost race on `recordCompleted` (a newer
 * pass already recorded) is a no-op.
 * @example
 * const passes = new DynamoDbProvisioningPassStore({ client, tableName: 'skiff', cluster: 'prod' });
 * if ((await passes.lastCompletedStart()) ?? 0 > sentAt) return; // already covered
 */
export class DynamoDbProvisioningPassStore implements ProvisioningPasses {
  readonly #client: DynamoDBDocumentClient;
  readonly #tableName: string;
  readonly #cluster: string;

  constructor(props: DynamoDbProvisioningPassStoreProps) {
    this.#client = props.client;
    this.#tableName = props.tableName;
    this.#cluster = props.cluster;
  }

  /**
   * @returns epoch ms, or undefined
   * @throws {SkiffError} when DynamoDB fails
   */
  async lastCompletedStart(): Promise<number | undefined> {
    const key = passKey(this.#cluster, 'provisioner');
    try {
      const { Item } = await this.#client.send(new GetCommand({ TableName: this.#tableName, Key: key, ConsistentRead: true }));
      return typeof Item?.['startedAt'] === 'number' ? Item['startedAt'] : undefined;
    } catch (error) {
      throw storeError(error, { operation: 'GetItem', key: formatKey(key) });
    }
  }

  /**
   * @param startedAtMs epoch ms
   * @throws {SkiffError} when DynamoDB fails (a newer stored value is not an error)
   */
  async recordCompleted(startedAtMs: number): Promise<void> {
    const key = passKey(this.#cluster, 'provisioner');
    try {
      await this.#client.send(
        new PutCommand({
          TableName: this.#tableName,
          Item: { ...key, startedAt: startedAtMs },
          ConditionExpression: 'attribute_not_exists(startedAt) OR startedAt < :s',
          ExpressionAttributeValues: { ':s': startedAtMs },
        }),
      );
    } catch (error) {
      const translated = storeError(error, { operation: 'PutItem', key: formatKey(key), conflict: 'a newer pass is already recorded' });
      if (isConflictError(translated)) return;
      throw translated;
    }
  }
}
