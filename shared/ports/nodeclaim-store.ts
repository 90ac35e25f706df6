/**
 * NodeClaimStore port: durable NodeClaim records with optimistic concurrency.
 * Adapters: DynamoDB (`shared/adapters/aws/dynamodb-nodeclaim-store.ts`, also used by the simulation against
 * embedded dynalite). In memory, for controller tests, with call recording and fault injection:
 * `shared/sim/memory-nodeclaim-store.ts`. Both pass one contract suite (`test/support/nodeclaim-store-contract.ts`).
 */
import type { NodeClaim } from '../core/api/nodeclaim.js';

/** Durable NodeClaim records for one cluster. */
export interface NodeClaimStore {
  /**
   * Creates a record with `version` 1. Idempotency guard of the launch protocol.
   * @throws {ConflictError} when a record with the same name already exists
   */
  create(claim: Omit<NodeClaim, 'version'>): Promise<NodeClaim>;
  /** The record, or undefined. */
  get(name: string): Promise<NodeClaim | undefined>;
  /**
   * Writes `claim` if the stored version equals `claim.version`; returns the stored record with version + 1.
   * @throws {ConflictError} when the record changed since it was read, or does not exist
   */
  update(claim: NodeClaim): Promise<NodeClaim>;
  /** Every record of the cluster, including deleted and failed ones, in name order. */
  list(): Promise<NodeClaim[]>;
  /** The record whose `instanceId` matches, or undefined (lookup by instance id). */
  findByInstanceId(instanceId: string): Promise<NodeClaim | undefined>;
}
