/**
 * Which pods a drain evicts and waits for (Karpenter core `pkg/utils/pod/scheduling.go` `IsDrainable`,
 * `ToleratesDisruptedNoScheduleTaint`; used by `pkg/controllers/node/termination/terminator/terminator.go` `Drain`).
 *
 * A pod that tolerates the `karpenter.sh/disrupted:NoSchedule` taint is left alone: it is neither evicted nor waited
 * for, and goes with its node. Evicting it would be pointless — its controller's replacement tolerates the taint too,
 * so kube-scheduler may put it straight back on the draining node (an eviction loop that never lets the drain end).
 * A pod that tolerates every taint (`tolerations: [{operator: Exists}]`, no key) is the common case. Mirror (static)
 * pods, owned by their Node, cannot be deleted through the API server and are left alone too.
 */
import type { Taint, Toleration } from '../api/kubernetes.js';
import { DISRUPTED_TAINT_KEY } from '../api/labels.js';
import { isOwnedByNode } from '../api/pod-owner.js';
import { tolerates } from '../scheduling/taints.js';

/** The taint a node carries while it is disrupted or terminated (Karpenter `v1.DisruptedNoScheduleTaint`). */
export const DISRUPTED_NO_SCHEDULE_TAINT: Taint = { key: DISRUPTED_TAINT_KEY, effect: 'NoSchedule' };

/**
 * True when one of `tolerations` tolerates `karpenter.sh/disrupted:NoSchedule` (Kubernetes `ToleratesTaint` rules:
 * an empty key with `Exists` matches every key; an empty effect matches every effect).
 * @example toleratesDisruptedTaint([{ operator: 'Exists' }]) // true
 */
export function toleratesDisruptedTaint(tolerations: readonly Toleration[] | undefined): boolean {
  return (tolerations ?? []).some((t) => tolerates(t, DISRUPTED_NO_SCHEDULE_TAINT));
}

/** The pod fields {@link isDrainable} reads. */
export interface DrainablePod {
  readonly spec: { readonly tolerations?: readonly Toleration[] };
  /** `Kind/name` of the controlling owner, or null; `Node/…` marks a mirror (static) pod. */
  readonly owner: string | null;
}

/**
 * Whether a drain evicts this pod and waits for it to go (Karpenter `IsDrainable`): not when it tolerates the
 * disrupted taint, nor when it is a mirror pod. (A pod with an active `karpenter.sh/do-not-disrupt` is drainable:
 * the drain waits for it without evicting it.)
 */
export function isDrainable(pod: DrainablePod): boolean {
  return !toleratesDisruptedTaint(pod.spec.tolerations) && !isOwnedByNode(pod.owner);
}
