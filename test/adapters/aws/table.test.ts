import { ConditionalCheckFailedException, ProvisionedThroughputExceededException, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import {
  INSTANCE_ID_INDEX,
  INSTANCE_KEY,
  disruptionKey,
  formatKey,
  instanceKey,
  leaseKey,
  nodeClaimKey,
  offeringKey,
  priceChunkKey,
  priceChunkPrefix,
  priceSnapshotPointerKey,
  storeError,
  tableDefinition,
} from '../../../shared/adapters/aws/table.js';
import { ConflictError, SkiffError, ThrottledError, ValidationError } from '../../../shared/core/errors.js';

const $metadata = {};

describe('table', () => {
  describe('tableDefinition', () => {
    const def = tableDefinition('skiff-test');

    it('keys the table on string pk/sk, billed per request', () => {
      expect(def).toMatchObject({
        TableName: 'skiff-test',
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
      });
    });

    it('has the keys-only byInstanceId index on instanceKey', () => {
      expect(def.GlobalSecondaryIndexes).toEqual([
        { IndexName: INSTANCE_ID_INDEX, KeySchema: [{ AttributeName: INSTANCE_KEY, KeyType: 'HASH' }], Projection: { ProjectionType: 'KEYS_ONLY' } },
      ]);
    });

    it('defines exactly the attributes some key schema uses (DynamoDB rejects unused definitions)', () => {
      const used = new Set([...(def.KeySchema ?? []), ...(def.GlobalSecondaryIndexes ?? []).flatMap((i) => i.KeySchema ?? [])].map((k) => k.AttributeName));
      expect(new Set(def.AttributeDefinitions?.map((a) => a.AttributeName))).toEqual(used);
      expect(def.AttributeDefinitions?.every((a) => a.AttributeType === 'S')).toBe(true);
    });
  });

  describe('keys', () => {
    it('put every item of a cluster in CLUSTER#<cluster> with a kind prefix in sk', () => {
      expect(nodeClaimKey('prod', 'default-x7k2p')).toEqual({ pk: 'CLUSTER#prod', sk: 'NODECLAIM#default-x7k2p' });
      expect(offeringKey('prod', { instanceType: 'm5.large', zone: 'us-west-2a', capacityType: 'spot' })).toEqual({
        pk: 'CLUSTER#prod',
        sk: 'OFFERING#m5.large#us-west-2a#spot',
      });
      expect(disruptionKey('prod', 'd-1')).toEqual({ pk: 'CLUSTER#prod', sk: 'DISRUPTION#d-1' });
      expect(leaseKey('prod', 'disruption')).toEqual({ pk: 'CLUSTER#prod', sk: 'LEASE#disruption' });
      expect(instanceKey('prod', 'i-0abc')).toBe('INSTANCE#prod#i-0abc');
      expect(formatKey(nodeClaimKey('prod', 'a'))).toBe('CLUSTER#prod/NODECLAIM#a');
    });

    it('put price snapshot chunks under PRICES#<version>#<index> and the pointer after every version', () => {
      expect(priceSnapshotPointerKey('prod')).toEqual({ pk: 'CLUSTER#prod', sk: 'PRICES#CURRENT' });
      expect(priceChunkKey('prod', '1767225600000-b2k9x', 7)).toEqual({ pk: 'CLUSTER#prod', sk: 'PRICES#1767225600000-b2k9x#0007' });
      expect(priceChunkKey('prod', '1767225600000-b2k9x', 7).sk.startsWith(priceChunkPrefix('1767225600000-b2k9x'))).toBe(true);
      // Versions start with a digit, so every chunk sorts before the pointer.
      expect(priceChunkKey('prod', '9999999999999-zzzzz', 9999).sk < priceSnapshotPointerKey('prod').sk).toBe(true);
    });
  });

  describe('storeError', () => {
    const context = { operation: 'PutItem', key: 'CLUSTER#prod/NODECLAIM#a', conflict: 'NodeClaim a already exists' };

    it('turns a failed condition into ConflictError with the key and the SDK error as cause', () => {
      const sdk = new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata });
      const error = storeError(sdk, context);
      expect(error).toBeInstanceOf(ConflictError);
      expect(error).toMatchObject({ message: 'NodeClaim a already exists', key: 'CLUSTER#prod/NODECLAIM#a', cause: sdk });
    });

    it('turns throttling into ThrottledError', () => {
      const sdk = new ProvisionedThroughputExceededException({ message: 'Rate exceeded', $metadata });
      expect(storeError(sdk, context)).toBeInstanceOf(ThrottledError);
      expect(storeError(Object.assign(new Error('slow down'), { name: 'ThrottlingException' }), context)).toBeInstanceOf(ThrottledError);
    });

    it('wraps anything else in a SkiffError naming operation and key', () => {
      const sdk = new ResourceNotFoundException({ message: 'Requested resource not found', $metadata });
      const error = storeError(sdk, context);
      expect(error.constructor).toBe(SkiffError);
      expect(error.message).toBe('DynamoDB PutItem CLUSTER#prod/NODECLAIM#a failed: ResourceNotFoundException: Requested resource not found');
      expect(error.cause).toBe(sdk);
      expect(storeError('boom', context).message).toContain('boom');
    });

    it('passes Skiff errors through', () => {
      const own = new ValidationError([{ file: 'x', message: 'bad' }]);
      expect(storeError(own, context)).toBe(own);
    });
  });
});
