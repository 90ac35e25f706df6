/**
 * The scheduling view of a pod: effective requests, node requirements, tolerations.
 *
 * The effective-request formula is Kubernetes' (k8s.io/component-helpers `resource.PodRequests`):
 * `max(Σ containers + Σ sidecars, max over init containers of (request + sidecars started before it)) + overhead`,
 * where a sidecar is an init container with `restartPolicy: Always`. Every pod also requests one `pods` slot.
 */
import type { NodeSelectorRequirement, Toleration } from '../api/kubernetes.js';
import { NORMALIZED_LABELS } from '../api/labels.js';
import { add, max, parseResourceList, type ResourceList } from '../resources/resource-list.js';
import { Requirements } from '../scheduling/requirements.js';

/** The container fields the scheduler reads. */
export interface ContainerLike {
  readonly name?: string;
  readonly resources?: { readonly requests?: Readonly<Record<string, string | number>>; readonly limits?: Readonly<Record<string, string | number>> };
  readonly restartPolicy?: string;
  readonly ports?: readonly { readonly containerPort?: number; readonly hostPort?: number; readonly protocol?: string }[];
}

/** A node selector term (`matchExpressions` ANDed; `matchFields` unsupported, as in Karpenter). */
export interface NodeSelectorTermLike {
  readonly matchExpressions?: readonly NodeSelectorRequirement[];
  readonly matchFields?: readonly unknown[];
}

/** The pod spec fields the scheduler reads (a subset of `core/v1` PodSpec with the same names). */
export interface PodSpecLike {
  readonly containers: readonly ContainerLike[];
  readonly initContainers?: readonly ContainerLike[];
  readonly overhead?: Readonly<Record<string, string | number>>;
  readonly nodeSelector?: Readonly<Record<string, string>>;
  readonly nodeName?: string;
  readonly tolerations?: readonly Toleration[];
  readonly affinity?: {
    readonly nodeAffinity?: {
      readonly requiredDuringSchedulingIgnoredDuringExecution?: { readonly nodeSelectorTerms: readonly NodeSelectorTermLike[] };
      readonly preferredDuringSchedulingIgnoredDuringExecution?: readonly { readonly weight: number; readonly preference: NodeSelectorTermLike }[];
    };
  };
  readonly priority?: number;
}

/** What the solver knows about one pod. Immutable. */
export interface SchedulingPod {
  /** `namespace/name`. */
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Effective requests in canonical units (cpu millicores, memory MiB), including `pods: 1`. */
  readonly requests: ResourceList;
  /**
   * Alternative requirement sets (required node affinity terms are ORed; each alternative already includes the
   * nodeSelector). Never empty: a pod without constraints has one empty alternative.
   */
  readonly requirementAlternatives: readonly Requirements[];
  readonly tolerations: readonly Toleration[];
  /** Host ports the pod binds (`protocol/port`). */
  readonly hostPorts: readonly string[];
  /** Creation time, epoch ms (tie-breaker in the solve order). */
  readonly createdMs: number;
}

/**
 * Effective requests of a pod spec in canonical units (see module doc for the formula), plus `pods: 1`.
 * @throws {QuantityError} on a malformed quantity
 */
export function podRequests(spec: PodSpecLike): ResourceList {
  let cached = requestsBySpec.get(spec);
  if (!cached) {
    cached = computePodRequests(spec);
    requestsBySpec.set(spec, cached);
  }
  return cached;
}

/** Specs are immutable once parsed, so their requests are computed once per spec object. */
const requestsBySpec = new WeakMap<PodSpecLike, ResourceList>();

function computePodRequests(spec: PodSpecLike): ResourceList {
  const containers = add(...spec.containers.map(requestsOf));
  let sidecars: ResourceList = {};
  let initMax: ResourceList = {};
  for (const c of spec.initContainers ?? []) {
    const r = requestsOf(c);
    if (c.restartPolicy === 'Always') {
      sidecars = add(sidecars, r);
      initMax = max(initMax, sidecars);
    } else {
      initMax = max(initMax, add(r, sidecars));
    }
  }
  return add(max(add(containers, sidecars), initMax), parseResourceList(spec.overhead), { pods: 1 });
}

/** A container's requests; where only a limit is set, Kubernetes defaults the request to the limit. */
function requestsOf(c: ContainerLike): ResourceList {
  return parseResourceList({ ...(c.resources?.limits ?? {}), ...(c.resources?.requests ?? {}) });
}

/** The requirement alternatives of a pod: nodeSelector ∩ each required node affinity term. Beta labels are normalised. */
export function podRequirementAlternatives(spec: PodSpecLike): Requirements[] {
  let cached = alternativesBySpec.get(spec);
  if (!cached) {
    cached = computeRequirementAlternatives(spec);
    alternativesBySpec.set(spec, cached);
  }
  return cached;
}

const alternativesBySpec = new WeakMap<PodSpecLike, Requirements[]>();

function computeRequirementAlternatives(spec: PodSpecLike): Requirements[] {
  const selector = Requirements.fromLabels(normalizeKeys(spec.nodeSelector ?? {}));
  const terms = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  if (terms.length === 0) return [selector];
  return terms.map((t) => selector.intersect(Requirements.from((t.matchExpressions ?? []).map((r) => ({ ...r, key: NORMALIZED_LABELS[r.key] ?? r.key })))));
}

function normalizeKeys(labels: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(labels).map(([k, v]) => [NORMALIZED_LABELS[k] ?? k, v]));
}

/** Host ports a pod spec binds, as `protocol/port`. */
export function podHostPorts(spec: PodSpecLike): string[] {
  return [...spec.containers, ...(spec.initContainers ?? [])].flatMap((c) =>
    (c.ports ?? []).filter((p) => p.hostPort !== undefined && p.hostPort > 0).map((p) => `${p.protocol ?? 'TCP'}/${p.hostPort}`),
  );
}

/**
 * Builds the scheduling view of a pod.
 * @param pod the pod's identity, labels and spec
 * @param createdMs creation time, epoch ms
 * @throws {QuantityError} on a malformed quantity
 */
export function toSchedulingPod(
  pod: { readonly namespace: string; readonly name: string; readonly labels?: Readonly<Record<string, string>>; readonly spec: PodSpecLike },
  createdMs: number,
): SchedulingPod {
  return {
    key: `${pod.namespace}/${pod.name}`,
    namespace: pod.namespace,
    name: pod.name,
    labels: pod.labels ?? {},
    requests: podRequests(pod.spec),
    requirementAlternatives: podRequirementAlternatives(pod.spec),
    tolerations: pod.spec.tolerations ?? [],
    hostPorts: podHostPorts(pod.spec),
    createdMs,
  };
}

