/**
 * The plain Kubernetes object shapes Skiff's core works with (a subset of the real API, same field names).
 * The zod schemas in this folder parse manifests into objects that satisfy these types.
 */

/** The operators of a node selector requirement; `Gte`/`Lte` are Karpenter's recent additions. */
export type Operator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt' | 'Gte' | 'Lte';

/** A node selector requirement (`key operator values`), with Karpenter's optional `minValues`. */
export interface NodeSelectorRequirement {
  readonly key: string;
  readonly operator: Operator;
  readonly values?: readonly string[];
  /** Minimum number of distinct values that must remain for this key after filtering (Karpenter `minValues`). */
  readonly minValues?: number;
}

/** Taint effects. */
export type TaintEffect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';

/** A node taint. */
export interface Taint {
  readonly key: string;
  readonly value?: string;
  readonly effect: TaintEffect;
}

/** A pod toleration. An empty `key` with `Exists` tolerates everything; a missing `effect` matches every effect. */
export interface Toleration {
  readonly key?: string;
  readonly operator?: 'Equal' | 'Exists';
  readonly value?: string;
  readonly effect?: TaintEffect;
  readonly tolerationSeconds?: number;
}

/** Object metadata Skiff reads. */
export interface ObjectMeta {
  readonly name: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly creationTimestamp?: string;
  readonly ownerReferences?: readonly { readonly kind: string; readonly name: string; readonly uid?: string; readonly controller?: boolean }[];
}
