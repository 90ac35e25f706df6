/**
 * Taints and tolerations, with Kubernetes' matching rules (k8s.io/api `core/v1/toleration.go` `ToleratesTaint`).
 */
import type { Taint, Toleration } from '../api/kubernetes.js';
import { UNREGISTERED_TAINT_KEY } from '../api/labels.js';

/**
 * Keys of the taints a node carries while it is still being set up (Karpenter `KnownEphemeralTaints`, core
 * `pkg/scheduling/taints.go`: `node.kubernetes.io/not-ready`, `node.kubernetes.io/unreachable`,
 * `node.cloudprovider.kubernetes.io/uninitialized` and `karpenter.sh/unregistered`). Matched by key only. A node
 * carrying one is not initialized (with {@link READINESS_TAINT_PREFIX}, `lifecycle/initialization.go`), and such a
 * taint does not block scheduling onto capacity that is still coming up.
 */
export const EPHEMERAL_TAINT_KEYS: ReadonlySet<string> = new Set([
  'node.kubernetes.io/not-ready',
  'node.kubernetes.io/unreachable',
  'node.cloudprovider.kubernetes.io/uninitialized',
  UNREGISTERED_TAINT_KEY,
]);

/** Prefix of readiness-gate taints (`readiness.k8s.io/*`), ephemeral too (Karpenter `KnownEphemeralTaintKeyPrefixes`). */
export const READINESS_TAINT_PREFIX = 'readiness.k8s.io/';

/** True when `toleration` tolerates `taint`. An empty key with `Exists` tolerates every taint. */
export function tolerates(toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key && toleration.key !== taint.key) return false;
  if (!toleration.key && toleration.operator !== 'Exists') return false;
  switch (toleration.operator ?? 'Equal') {
    case 'Exists':
      return true;
    case 'Equal':
      return (toleration.value ?? '') === (taint.value ?? '');
    default:
      return false;
  }
}

/**
 * The first taint with effect NoSchedule or NoExecute that none of the tolerations tolerate, or undefined.
 * `PreferNoSchedule` blocks only when `preferNoSchedule` is true (Karpenter avoids such taints until it relaxes a
 * pod's preferences, `preferences.go toleratePreferNoScheduleTaints`); kube-scheduler never blocks on it.
 */
export function firstUntolerated(taints: readonly Taint[], tolerations: readonly Toleration[], preferNoSchedule = false): Taint | undefined {
  return taints.find((t) => (preferNoSchedule || t.effect !== 'PreferNoSchedule') && !tolerations.some((tol) => tolerates(tol, t)));
}

/** `key=value:Effect` (or `key:Effect`), as kubectl prints taints. */
export function formatTaint(t: Taint): string {
  return `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`;
}
