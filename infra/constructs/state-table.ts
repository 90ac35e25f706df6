/**
 * `StateTable`: Skiff's single DynamoDB table, created from `shared/adapters/aws/table.ts`'s definition (keys, the
 * keys-only `byInstanceId` index, on-demand billing), with point-in-time recovery and TTL on `ttl`.
 */
import { RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { AWS_ADAPTER_POLICY } from '../../shared/adapters/aws/iam-actions.js';
import { TTL_ATTRIBUTE, tableDefinition } from '../../shared/adapters/aws/table.js';
import { CONTROLLER_ENV } from '../../shared/lambda/env.js';
import type { SkiffFunction } from './skiff-function.js';

/** The DynamoDB actions the stores call (the `table` statement of `iam-actions.ts`). */
export const TABLE_ACTIONS: readonly string[] = AWS_ADAPTER_POLICY.filter((s) => s.scope === 'table').flatMap((s) => s.actions);

/** Props of {@link StateTable}. */
export interface StateTableProps {
  /** @default RemovalPolicy.RETAIN — the table holds the NodeClaims of running instances */
  readonly removalPolicy?: RemovalPolicy;
}

const ATTRIBUTE_TYPES: Readonly<Record<string, dynamodb.AttributeType>> = {
  S: dynamodb.AttributeType.STRING,
  N: dynamodb.AttributeType.NUMBER,
  B: dynamodb.AttributeType.BINARY,
};

const PROJECTIONS: Readonly<Record<string, dynamodb.ProjectionType>> = {
  KEYS_ONLY: dynamodb.ProjectionType.KEYS_ONLY,
  ALL: dynamodb.ProjectionType.ALL,
  INCLUDE: dynamodb.ProjectionType.INCLUDE,
};

/**
 * The table. Grant with {@link StateTable.grantReadWrite}, which also sets `SKIFF_TABLE_NAME`.
 * @example table.grantReadWrite(provisioner)
 */
export class StateTable extends Construct {
  readonly table: dynamodb.Table;

  constructor(scope: Construct, id: string, props: StateTableProps = {}) {
    super(scope, id);
    // The physical name is CloudFormation's; only the layout comes from the definition.
    const definition = tableDefinition('unused');
    const attribute = (name: string): dynamodb.Attribute => {
      const type = definition.AttributeDefinitions?.find((a) => a.AttributeName === name)?.AttributeType;
      const mapped = type !== undefined ? ATTRIBUTE_TYPES[type] : undefined;
      if (!mapped) throw new Error(`table definition: attribute ${name} has no known type`);
      return { name, type: mapped };
    };
    const keyOf = (schema: readonly { AttributeName?: string | undefined; KeyType?: string | undefined }[] | undefined, type: 'HASH' | 'RANGE') => {
      const name = schema?.find((k) => k.KeyType === type)?.AttributeName;
      return name !== undefined ? attribute(name) : undefined;
    };
    const partitionKey = keyOf(definition.KeySchema, 'HASH');
    if (!partitionKey) throw new Error('table definition has no partition key');
    const sortKey = keyOf(definition.KeySchema, 'RANGE');
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey,
      ...(sortKey ? { sortKey } : {}),
      billingMode: definition.BillingMode === 'PAY_PER_REQUEST' ? dynamodb.BillingMode.PAY_PER_REQUEST : dynamodb.BillingMode.PROVISIONED,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TTL_ATTRIBUTE,
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
    });
    for (const index of definition.GlobalSecondaryIndexes ?? []) {
      const indexKey = keyOf(index.KeySchema, 'HASH');
      const projection = PROJECTIONS[index.Projection?.ProjectionType ?? 'ALL'];
      if (!index.IndexName || !indexKey || !projection) throw new Error(`table definition: index ${index.IndexName ?? '?'} is incomplete`);
      const indexSortKey = keyOf(index.KeySchema, 'RANGE');
      this.table.addGlobalSecondaryIndex({ indexName: index.IndexName, partitionKey: indexKey, ...(indexSortKey ? { sortKey: indexSortKey } : {}), projectionType: projection });
    }
  }

  /** Grants the stores' actions on the table and its indexes, and sets `SKIFF_TABLE_NAME` on `fn`. */
  grantReadWrite(fn: SkiffFunction): void {
    this.table.grant(fn, ...TABLE_ACTIONS);
    const stack = Stack.of(this);
    const logicalId = String(stack.resolve(stack.getLogicalId(this.table.node.defaultChild as dynamodb.CfnTable)));
    Validations.of(fn.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${logicalId}.Arn>/index/*]`,
      reason: 'The stores query the table’s byInstanceId index; the grant covers this table’s indexes only.',
    });
    fn.addEnvironment(CONTROLLER_ENV.tableName, this.table.tableName);
  }
}
