/**
 * PodDisruptionBudgets as the disruption controller reads them: how many more of a PDB's pods may be evicted now.
 * The API server's eviction subresource decides for real (a 429 is the answer); this is the controller's forecast
 * for choosing candidates (Karpenter: a node with a pod whose PDB allows no disruption is not a candidate, and a pod
 * under several PDBs counts as blocked — `disruption/types.go`, `utils/pdb`).
 *
 * When the API server reported `status.disruptionsAllowed` (kube-controller-manager's disruption controller keeps it)
 * that figure is used; otherwise it is computed as that controller does (`pkg/controller/disruption`): expected =
 * the selected pods, desired healthy = `minAvailable` (percent of expected, rounded up) or expected − `maxUnavailable`
 * (rounded up), allowed = healthy − desired healthy, floored at 0.
 */
import { labelSelectorMatches } from '../api/object-meta.js';
import { scaledValue, type PodDisruptionBudget } from '../api/pdb.js';

/** The pod fields PDB evaluation reads. */
export interface PdbPod {
  readonly namespace: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Running on a Ready node. */
  readonly healthy: boolean;
}

/** One PDB with the disruptions it allows now. */
export interface PdbAllowance {
  /** `namespace/name`. */
  readonly key: string;
  readonly pdb: PodDisruptionBudget;
  /** Evictions it allows now (≥ 0). */
  readonly allowed: number;
  /** True when no eviction is ever possible: `maxUnavailable: 0`/`"0%"`, or `minAvailable` ≥ the selected pods. */
  readonly neverAllows: boolean;
}

/** True when the PDB selects the pod (same namespace, selector matches; no selector selects nothing). */
export function pdbSelects(pdb: PodDisruptionBudget, pod: { readonly namespace: string; readonly labels: Readonly<Record<string, string>> }): boolean {
  return (pdb.metadata.namespace ?? 'default') === pod.namespace && labelSelectorMatches(pdb.spec.selector, pod.labels);
}

/**
 * Each PDB's allowance over the given pods.
 * @param pods every non-terminal pod of the cluster
 */
export function pdbAllowances(pdbs: readonly PodDisruptionBudget[], pods: readonly PdbPod[]): PdbAllowance[] {
  return pdbs.map((pdb) => {
    const selected = pods.filter((p) => pdbSelects(pdb, p));
    const expected = selected.length;
    const healthy = selected.filter((p) => p.healthy).length;
    const desired = pdb.spec.minAvailable !== undefined ? scaledValue(pdb.spec.minAvailable, expected) : Math.max(0, expected - scaledValue(pdb.spec.maxUnavailable ?? 0, expected));
    const reported = (pdb.status as { disruptionsAllowed?: unknown } | undefined)?.disruptionsAllowed;
    const allowed = typeof reported === 'number' ? Math.max(0, reported) : Math.max(0, healthy - desired);
    const neverAllows = expected > 0 && desired >= expected;
    return { key: `${pdb.metadata.namespace ?? 'default'}/${pdb.metadata.name}`, pdb, allowed, neverAllows };
  });
}

/**
 * Why evicting this pod now would be refused, or undefined: a PDB that allows no disruption, or more than one PDB
 * selecting it (the API server refuses those evictions outright).
 */
export function pdbBlocks(pod: { readonly namespace: string; readonly labels: Readonly<Record<string, string>> }, allowances: readonly PdbAllowance[]): string | undefined {
  const mine = allowances.filter((a) => pdbSelects(a.pdb, pod));
  if (mine.length > 1) return `pod is selected by more than one PodDisruptionBudget (${mine.map((a) => a.key).join(', ')})`;
  const only = mine[0];
  if (only && only.allowed <= 0) {
    return only.neverAllows
      ? `PodDisruptionBudget ${only.key} can never allow an eviction`
      : `PodDisruptionBudget ${only.key} allows no disruption now`;
  }
  return undefined;
}
