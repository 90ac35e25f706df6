/**
 * The shared vocabulary of the provisioning solver (`scheduler.ts`) and of what reads its input and output
 * (`diagnosis.ts`, `hints.ts`, `nodepool-template.ts`, the controllers): a NodePool as the solver sees it, existing
 * capacity, the planned NodeClaims, unschedulable pods, a target's rejection, and the options of a solve.
 * Types only, plus the solve's defaults and {@link refusal} (a topology verdict as a {@link Rejection}): importing
 * them pulls in no solver code.
 */
import type { Taint } from '../api/kubernetes.js';
import type { InstanceType } from '../instancetypes/offering.js';
import type { ResourceList } from '../resources/resource-list.js';
import type { Incompatibility, Requirements } from '../scheduling/requirements.js';
import type { PlacedPod } from './topology.js';

/** A NodePool as the solver sees it. */
export interface NodePoolTemplate {
  readonly name: string;
  readonly nodeClass: string;
  /** Higher is tried first, equal weights by name descending; missing weight is 0 (Karpenter `OrderByWeight`, see `orderByWeight`). */
  readonly weight: number;
  /** The NodePool's requirements ∩ its template labels (as `In`) ∩ `karpenter.sh/nodepool In [name]`. */
  readonly requirements: Requirements;
  /** Labels every node of this pool carries (template labels and `karpenter.sh/nodepool`). */
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  /** Ignored for fit (Karpenter), carried to the NodeClaim. */
  readonly startupTaints: readonly Taint[];
  /** Candidate instance types with offerings (unavailable offerings already marked). */
  readonly instanceTypes: readonly InstanceType[];
  /**
   * The `kubernetes.io/os` values the EC2NodeClass's instance types carry before the NodePool's requirements filter
   * them (its AMI family's OS: `linux`, or `windows` for the Windows families), sorted; lets a diagnosis name the
   * OS when it is the reason. Undefined when unknown.
   */
  readonly nodeClassOs?: readonly string[];
  /**
   * When `instanceTypes` is empty: which of the NodePool's requirements rule out every instance type of its
   * EC2NodeClass, in words (e.g. `karpenter.k8s.aws/instance-local-nvme Gt [300]: none of the 1,363 instance types
   * has the label with such a value`). Optional: diagnosis falls back to a general sentence.
   */
  readonly noInstanceTypes?: string;
  /**
   * Requests of the DaemonSet pods that will run on every node of this pool (the least of any instance type's),
   * canonical units. `instanceTypes` already carry the rest: a type whose nodes run more DaemonSets comes with its
   * allocatable reduced by the difference (`daemonExtra`).
   */
  readonly daemonOverhead: ResourceList;
  /**
   * Instance type name → daemonset overhead its nodes carry beyond `daemonOverhead` (canonical units), for the types
   * whose group of DaemonSets costs more (core `buildDaemonOverheadGroups`); absent when every type carries the same.
   */
  readonly daemonExtra?: Readonly<Record<string, ResourceList>>;
  /** Host ports those DaemonSet pods bind, with where each DaemonSet runs. */
  readonly daemonHostPorts?: readonly DaemonHostPort[];
  /**
   * What the NodePool's `spec.limits` still allow (limit − current usage), canonical units plus `nodes`;
   * undefined means no limits. Only the keys present are limited.
   */
  readonly remaining?: ResourceList;
  /** The NodePool's `spec.limits` in all, canonical units plus `nodes` (messages tell a limit too small from one used up). */
  readonly limits?: ResourceList;
}

/** A host port a DaemonSet binds on the nodes it runs on. */
export interface DaemonHostPort {
  /** `protocol/port`. */
  readonly port: string;
  /** The DaemonSet's node requirement alternatives (ORed): it runs on instance types compatible with one. */
  readonly requirements: readonly Requirements[];
  /** `namespace/name`. */
  readonly daemonSet: string;
}

/** Capacity that already exists or is already being launched: a registered node or an in-flight NodeClaim. */
export interface ExistingCapacity {
  /** Node name, or NodeClaim name while it has no node. */
  readonly name: string;
  readonly kind: 'node' | 'nodeClaim';
  readonly nodePool?: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Taints that block scheduling (startup and unregistered taints excluded for in-flight NodeClaims). */
  readonly taints: readonly Taint[];
  /** Allocatable minus the requests of pods bound or nominated to it (including daemon pods). */
  readonly available: ResourceList;
  /**
   * The node's allocatable, canonical units, when known: kube-scheduler's LeastAllocated score divides by it (the
   * binding replay, `binding-replay.ts`). Without it the replay takes `available` as the whole node.
   */
  readonly allocatable?: ResourceList;
  /** Host ports already bound (`protocol/port`). */
  readonly hostPorts: readonly string[];
  /** Pods bound or nominated to it, for pod affinity, anti-affinity and topology spread counts. */
  readonly pods?: readonly PlacedPod[];
  /**
   * Takes no pod in this solve, though its pods still count for affinity and topology spread: a node still inside its
   * own consolidateAfter window, as a consolidation simulation sees it (core
   * `pkg/controllers/provisioning/scheduling/scheduler.go addToExistingNode`, `isUnderConsolidateAfter`). Set only
   * where every pod solved is a non-pending pod of a node not being deleted, the pods that rule applies to.
   */
  readonly closed?: boolean;
  /**
   * Being deleted (a node tainted `karpenter.sh/disrupted`: drained by a disruption, an expiry, an interruption or a
   * deletion): takes no pod in any solve, yet the pods still on it count for pod affinity, anti-affinity and topology
   * spread, and its labels are a domain, until they are gone. Karpenter schedules against `nodes.Active()` only (core
   * `pkg/controllers/provisioning/provisioner.go Schedule`: a node marked for deletion is not capacity) while its
   * topology counts every scheduled, non-terminal, non-terminating pod matching a selector, wherever it runs (core
   * `pkg/controllers/provisioning/scheduling/topology.go countDomains`, `IgnoredForTopology`), as kube-scheduler's
   * PodTopologySpread and InterPodAffinity do. Unlike {@link closed}, no solve reopens it.
   */
  readonly markedForDeletion?: boolean;
}

/** A NodeClaim the solve decided to launch. */
export interface NodeClaimPlan {
  readonly nodePool: string;
  readonly nodeClass: string;
  /** NodePool ∩ pods' requirements, plus `node.kubernetes.io/instance-type In [options]`. */
  readonly requirements: Requirements;
  /** Options cheapest first (by cheapest compatible available offering), at most `MAX_INSTANCE_TYPES` (600). */
  readonly instanceTypes: readonly { readonly name: string; readonly price: number }[];
  /** Keys (`ns/name`) of the pods it is for. */
  readonly pods: readonly string[];
  /** Pods' requests plus daemonset overhead, canonical units. */
  readonly requests: ResourceList;
  /**
   * The labels the NodeClaim and its Node carry before the instance type's own: the NodePool's template labels and
   * `karpenter.sh/nodepool`, every single-valued `In` of `requirements`, and a generated value for each custom key
   * (see `resolveCustomLabels`), so the node satisfies its NodePool's requirements.
   */
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  readonly startupTaints: readonly Taint[];
}

/** A pod no target can take, with the reason each NodePool gives. */
export interface UnschedulablePod {
  readonly pod: string;
  /** One sentence a user can act on. */
  readonly reason: string;
  /** NodePool name → why a new node from it cannot serve the pod. */
  readonly nodePools: Readonly<Record<string, string>>;
}

/** The outcome of a solve. */
export interface SchedulingResults {
  readonly newNodeClaims: readonly NodeClaimPlan[];
  /** Pods that fit existing nodes or in-flight NodeClaims: nothing to launch for them. */
  readonly existing: readonly { readonly pod: string; readonly target: string }[];
  readonly unschedulable: readonly UnschedulablePod[];
  /**
   * Set by a solve asked to `surviveBinding` (`SolveOptions`): false when no repair made kube-scheduler's predicted
   * binding of the plan fit every pod (the plan is then the solver's, its misfits left to a later pass).
   */
  readonly survivesBinding?: boolean;
}

/**
 * Why a target cannot take a pod (value, not error). `temporary` marks a refusal later placements can lift (a
 * zonal spread or pod affinity count); any other refusal stands for the rest of the solve, because targets only
 * fill up and narrow and topology counts only grow.
 */
export type Rejection = { readonly ok: false; readonly reason: string; readonly incompatibility?: Incompatibility; readonly temporary?: boolean };

/** What a target answers when it accepts a pod: `ok: true` plus what the check computed (`T`). */
export type Acceptance<T> = { readonly ok: true } & T;

/** How long `solve` may run by default, ms (Karpenter gives `Solve` a 1-minute timeout; Skiff 10 s). */
export const DEFAULT_SOLVE_TIMEOUT_MS = 10_000;

/**
 * Batches up to this many pods also run solver v1's two greedy passes (price-aware and first-fit) and keep the best
 * of the three plans: on small batches they cost little, and the first-fit plan bounds the price from above.
 */
export const PORTFOLIO_MAX_PODS = 200;

/** Options of `solve` (`scheduler.ts`). */
export interface SolveOptions {
  /**
   * Wall-clock budget of the solve, ms. When it runs out the solver stops optimising and completes its plan the
   * fastest way (every pod still placed or reported unschedulable, every constraint still checked).
   * @default {@link DEFAULT_SOLVE_TIMEOUT_MS}
   */
  readonly timeoutMs?: number;
  /**
   * A monotonic clock in ms, e.g. `() => performance.now()`. The core reads no clock itself (STYLE rule 1), so
   * without one the budget is not enforced; the solve is still bounded (greedy construction, bounded candidates).
   */
  readonly now?: () => number;
  /**
   * Batches up to this many pods also run solver v1's passes and keep the best plan; 0 runs the packing solver
   * alone. @default {@link PORTFOLIO_MAX_PODS}
   */
  readonly portfolioMaxPods?: number;
  /**
   * Repair the plan until kube-scheduler's predicted binding (its queue order and LeastAllocated scoring over the
   * existing, in-flight and planned nodes) fits every pod, so no pod needs a second wave of NodeClaims
   * (`surviveBinding` in `binding-replay.ts`). The provisioner sets it, and so do Skiff's consolidation moves; other
   * simulations of where pods would go (drift, interruption, Karpenter's moves) do not. @default false
   */
  readonly surviveBinding?: boolean;
  /**
   * With `surviveBinding`: also try the plan restricted to each of its main instance families (`survivingPlan`).
   * Consolidation, which simulates hundreds of candidate sets a pass, repairs the plan it has and leaves the variants
   * out. @default true
   */
  readonly bindingVariants?: boolean;
}

/** A topology refusal as a {@link Rejection}, keeping whether it is temporary. */
export function refusal(verdict: { readonly reason: string; readonly temporary?: boolean }): Rejection {
  return verdict.temporary ? { ok: false, reason: verdict.reason, temporary: true } : { ok: false, reason: verdict.reason };
}
