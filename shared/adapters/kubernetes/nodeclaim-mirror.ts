/**
 * The `karpenter.sh/v1` NodeClaim object mirroring a Skiff NodeClaim record (DynamoDB is the source of truth), so
 * `kubectl get nodeclaims -o wide` and dashboards built for Karpenter show Skiff's nodes.
 *
 * `kubectl -o wide` columns come from the NodeClaim CRD's printer columns (kubernetes-sigs/karpenter
 * `pkg/apis/crds/karpenter.sh_nodeclaims.yaml`): TYPE, CAPACITY, ZONE and NODEPOOL from the labels
 * `node.kubernetes.io/instance-type`, `karpenter.sh/capacity-type`, `topology.kubernetes.io/zone`,
 * `karpenter.sh/nodepool`; NODE from `status.nodeName`; READY from the `Ready` condition; ID from
 * `status.providerID`; NODECLASS from `spec.nodeClassRef.name`.
 *
 * Conditions (core `pkg/apis/v1/nodeclaim_status.go`; docs/karpenter-semantics.md#nodeclaim-lifecycle): `Launched`,
 * `Registered`,
 * `Initialized`, and `Ready` (True when the three are). Not-yet-reached conditions are `Unknown` with reason
 * `AwaitingReconciliation`, as operatorpkg initialises them; a failed launch makes `Launched=False`; a claim being
 * deleted gets `InstanceTerminating=True`. Every `lastTransitionTime` comes from the record's own timestamps, so the
 * same record always renders the same object and re-applying it changes nothing (idempotent by construction).
 */
import type { NodeSelectorRequirement, Taint } from '../../core/api/kubernetes.js';
import { LABEL_CAPACITY_TYPE, LABEL_EC2NODECLASS, LABEL_INSTANCE_TYPE, LABEL_NODEPOOL, LABEL_ZONE, TERMINATION_FINALIZER } from '../../core/api/labels.js';
import type { NodeClaim } from '../../core/api/nodeclaim.js';
import { unitOf, type ResourceList } from '../../core/resources/resource-list.js';

/** Group, version and plural of the NodeClaim custom resource. */
export const NODECLAIM_RESOURCE = { group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims' } as const;
/** Annotation carrying the Skiff lifecycle state (`Pending` … `Deleting`), which has no Karpenter equivalent. */
export const NODECLAIM_STATE_ANNOTATION = 'skiff.dev/nodeclaim-state';
/** Reason of a condition not reached yet (operatorpkg `status.ConditionSet` initial reason). */
export const AWAITING_RECONCILIATION = 'AwaitingReconciliation';

/** One `metav1.Condition` as the NodeClaim status carries it. */
export interface NodeClaimCondition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  /** RFC 3339 UTC. */
  readonly lastTransitionTime: string;
  /** CamelCase, matching `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`. */
  readonly reason: string;
  readonly message: string;
}

/** The object to apply (metadata + spec) and the status to apply to the `/status` subresource. */
export interface NodeClaimMirror {
  readonly object: {
    readonly apiVersion: 'karpenter.sh/v1';
    readonly kind: 'NodeClaim';
    readonly metadata: {
      readonly name: string;
      readonly labels: Readonly<Record<string, string>>;
      readonly annotations: Readonly<Record<string, string>>;
      /** `karpenter.sh/termination`: a user's `kubectl delete nodeclaim` waits for Skiff's graceful termination. */
      readonly finalizers: readonly string[];
    };
    readonly spec: {
      readonly nodeClassRef: { readonly group: 'karpenter.k8s.aws'; readonly kind: 'EC2NodeClass'; readonly name: string };
      readonly requirements: readonly NodeSelectorRequirement[];
      readonly resources: { readonly requests: Readonly<Record<string, string>> };
      readonly taints?: readonly Taint[];
      readonly startupTaints?: readonly Taint[];
    };
  };
  readonly status: {
    readonly providerID?: string;
    readonly nodeName?: string;
    readonly allocatable?: Readonly<Record<string, string>>;
    readonly conditions: readonly NodeClaimCondition[];
  };
}

/**
 * A canonical amount as a Kubernetes quantity: cpu millicores → `1500m`; MiB → `512Mi` (or `Ki` when fractional);
 * counts → `4` (or milli-units when fractional).
 * @param name the resource name (decides the unit, see `unitOf`)
 * @param amount in canonical units
 */
export function formatQuantity(name: string, amount: number): string {
  switch (unitOf(name)) {
    case 'millicores':
      return `${Math.round(amount)}m`;
    case 'MiB':
      return Number.isInteger(amount) ? `${amount}Mi` : `${Math.round(amount * 1024)}Ki`;
    case 'count':
      return Number.isInteger(amount) ? String(amount) : `${Math.round(amount * 1000)}m`;
  }
}

/** A canonical resource list as a quantity map. */
export function formatResourceList(list: ResourceList): Record<string, string> {
  return Object.fromEntries(Object.entries(list).map(([k, v]) => [k, formatQuantity(k, v)]));
}

/**
 * A requirement in the operators every Karpenter v1 CRD accepts: `Gte n` → `Gt n−1`, `Lte n` → `Lt n+1` (the same
 * set for integer labels; Skiff's canonical form uses Gte/Lte, which older installed CRDs reject).
 */
export function crdRequirement(r: NodeSelectorRequirement): NodeSelectorRequirement {
  const shift = r.operator === 'Gte' ? -1 : r.operator === 'Lte' ? 1 : 0;
  const value = r.values?.[0];
  if (shift === 0 || value === undefined || !/^-?\d+$/.test(value)) return r;
  return { ...r, operator: r.operator === 'Gte' ? 'Gt' : 'Lt', values: [String(Number.parseInt(value, 10) + shift)] };
}

/** A condition that is True since `at`, or Unknown (AwaitingReconciliation) since the claim was created. */
function reached(type: string, at: string | undefined, createdAt: string, waitingMessage: string): NodeClaimCondition {
  return at !== undefined
    ? { type, status: 'True', lastTransitionTime: at, reason: type, message: '' }
    : { type, status: 'Unknown', lastTransitionTime: createdAt, reason: AWAITING_RECONCILIATION, message: waitingMessage };
}

/**
 * The conditions of a NodeClaim record: Launched, Registered, Initialized, Ready (+ InstanceTerminating while
 * Deleting). Ready is True when the other three are; otherwise Unknown (False after a failed launch) with reason
 * `UnhealthyDependents` naming the conditions that are not True.
 */
export function nodeClaimConditions(claim: NodeClaim): NodeClaimCondition[] {
  const failed = claim.state === 'Failed';
  const launched: NodeClaimCondition = failed
    ? { type: 'Launched', status: 'False', lastTransitionTime: claim.deletedAt ?? claim.createdAt, reason: 'LaunchFailed', message: claim.launchError ?? 'the launch failed' }
    : reached('Launched', claim.launchedAt, claim.createdAt, 'waiting for the instance to launch');
  const registered = reached('Registered', claim.registeredAt, claim.createdAt, 'Node not registered with cluster');
  const initialized = reached('Initialized', claim.initializedAt, claim.createdAt, 'Node not initialized');
  const parts = [launched, registered, initialized];
  const notTrue = parts.filter((c) => c.status !== 'True');
  const ready: NodeClaimCondition =
    notTrue.length === 0
      ? { type: 'Ready', status: 'True', lastTransitionTime: claim.initializedAt ?? claim.createdAt, reason: 'Ready', message: '' }
      : {
          type: 'Ready',
          status: failed ? 'False' : 'Unknown',
          lastTransitionTime: failed ? launched.lastTransitionTime : claim.createdAt,
          reason: 'UnhealthyDependents',
          message: notTrue.map((c) => `${c.type}=${c.status}`).join(', '),
        };
  const terminating: NodeClaimCondition[] =
    claim.state === 'Deleting'
      ? [{ type: 'InstanceTerminating', status: 'True', lastTransitionTime: claim.deletedAt ?? claim.initializedAt ?? claim.createdAt, reason: 'InstanceTerminating', message: claim.deletionReason ?? '' }]
      : [];
  return [...parts, ready, ...terminating];
}

/**
 * The NodeClaim object and status mirroring `claim`. Labels: the claim's, plus NodePool, EC2NodeClass and — once
 * known — instance type, zone and capacity type. Annotations: the claim's (its NodePool template's), plus Skiff's
 * state annotation. Finalizer `karpenter.sh/termination`, as Karpenter's NodeClaims carry: deleting the object only
 * marks it, and the lifecycle controller terminates the NodeClaim gracefully, then removes the object. With the
 * NodePool's uid, an owner reference to it (`blockOwnerDeletion`, as core `nodeclaimtemplate.go` `ToNodeClaim` sets):
 * deleting the NodePool has Kubernetes' garbage collector delete the object, so its NodeClaim is terminated too.
 * @param nodePoolUid the NodePool's `metadata.uid`; without it, no owner reference
 * @example nodeClaimMirror(claim).object.metadata.labels['node.kubernetes.io/instance-type'] // 'm7g.large'
 */
export function nodeClaimMirror(claim: NodeClaim, nodePoolUid?: string): NodeClaimMirror {
  const labels: Record<string, string> = {
    ...claim.labels,
    [LABEL_NODEPOOL]: claim.nodePool,
    [LABEL_EC2NODECLASS]: claim.nodeClass,
    ...(claim.instanceType !== undefined ? { [LABEL_INSTANCE_TYPE]: claim.instanceType } : {}),
    ...(claim.zone !== undefined ? { [LABEL_ZONE]: claim.zone } : {}),
    ...(claim.capacityType !== undefined ? { [LABEL_CAPACITY_TYPE]: claim.capacityType } : {}),
  };
  return {
    object: {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: {
        name: claim.name,
        labels,
        annotations: { ...claim.annotations, [NODECLAIM_STATE_ANNOTATION]: claim.state },
        finalizers: [TERMINATION_FINALIZER],
        ...(nodePoolUid !== undefined ? { ownerReferences: [{ apiVersion: 'karpenter.sh/v1', kind: 'NodePool', name: claim.nodePool, uid: nodePoolUid, blockOwnerDeletion: true }] } : {}),
      },
      spec: {
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: claim.nodeClass },
        requirements: claim.requirements.map(crdRequirement),
        resources: { requests: formatResourceList(claim.resources) },
        ...(claim.taints.length > 0 ? { taints: claim.taints } : {}),
        ...(claim.startupTaints.length > 0 ? { startupTaints: claim.startupTaints } : {}),
      },
    },
    status: {
      ...(claim.providerId !== undefined ? { providerID: claim.providerId } : {}),
      ...(claim.nodeName !== undefined ? { nodeName: claim.nodeName } : {}),
      ...(claim.allocatable !== undefined ? { allocatable: formatResourceList(claim.allocatable) } : {}),
      conditions: nodeClaimConditions(claim),
    },
  };
}
