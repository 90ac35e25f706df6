/**
 * Kubernetes API objects → the Cluster port's shapes. Objects arrive in their wire form (JSON as the API server
 * sends it); schema-backed kinds are parsed with the project's zod schemas (the same ones `skiff validate` uses),
 * so a NodePool the controllers see is always a parsed, defaulted NodePool. A malformed object is reported as a
 * value ({@link ParseOutcome}) for the caller to log and skip; one bad object never fails a whole list.
 *
 * Sources: `core/v1` Pod and Node, k8s.io/api `core/v1/types.go` (`PodScheduled` condition with reason
 * `Unschedulable` set by kube-scheduler; the `Ready` node condition; `spec.providerID`); list items of built-in
 * kinds carry no `apiVersion`/`kind` (only the List does), so {@link parseApiObject} puts them back.
 */
import type { z } from 'zod';
import type { Taint } from '../../core/api/kubernetes.js';
import { formatPath, manifestErrorMap, zodIssuesToPathIssues } from '../../core/api/field-issues.js';
import { taintSchema } from '../../core/api/object-meta.js';
import { podSchema } from '../../core/api/pod.js';
import { parseResourceList } from '../../core/resources/resource-list.js';
import type { ClusterNode, ClusterPod } from '../../ports/cluster.js';

/** A JSON object as the API server sends it. */
export type WireObject = Readonly<Record<string, unknown>>;

/** The result of reading one API object: the value, or why it was skipped. */
export type ParseOutcome<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: string };

/** `Kind "namespace/name"` (or `Kind "name"`) of a wire object, for messages. */
export function describeObject(kind: string, item: WireObject): string {
  const meta = (item.metadata ?? {}) as { name?: unknown; namespace?: unknown };
  const name = typeof meta.name === 'string' ? meta.name : '<unnamed>';
  return `${kind} ${JSON.stringify(typeof meta.namespace === 'string' ? `${meta.namespace}/${name}` : name)}`;
}

/**
 * Parses one list item with a manifest schema, restoring `apiVersion` and `kind` when the item lacks them. Fields the
 * schema does not know are dropped, not refused: the API server has already validated the object, so an unknown field
 * comes from a newer API version (a Container or PodSpec field added in a later Kubernetes, a NodePool field of a later
 * Karpenter) and refusing it would leave the pod unprovisioned. The schemas refuse unknown fields only in the
 * manifests a user writes (`skiff validate`, `skiff simulate`), where they are typos.
 * @param schema e.g. `nodePoolSchema`, `daemonSetSchema`, `pdbSchema`
 * @param typeMeta the kind's `apiVersion` and `kind`
 * @param item the wire object
 * @returns the parsed object, or a one-line problem: `NodePool "gpu": spec.template.spec.requirements[0].operator: …`
 */
export function parseApiObject<S extends z.ZodType>(schema: S, typeMeta: { readonly apiVersion: string; readonly kind: string }, item: WireObject): ParseOutcome<z.output<S>> {
  const value = { ...item, apiVersion: item.apiVersion ?? typeMeta.apiVersion, kind: item.kind ?? typeMeta.kind };
  let result = schema.safeParse(value, { error: manifestErrorMap });
  if (!result.success) {
    const unknown = result.error.issues.filter((i): i is z.core.$ZodIssueUnrecognizedKeys => i.code === 'unrecognized_keys');
    if (unknown.length > 0) result = schema.safeParse(withoutKeys(value, unknown), { error: manifestErrorMap });
  }
  if (result.success) return { ok: true, value: result.data };
  const issues = zodIssuesToPathIssues(result.error.issues)
    .map((i) => `${i.path.length > 0 ? `${formatPath(i.path)}: ` : ''}${i.message}`)
    .join('; ');
  return { ok: false, problem: `${describeObject(typeMeta.kind, item)}: ${issues}` };
}

/** A copy of `value` without the keys the issues name at their paths (the objects on the way are copied, not changed). */
function withoutKeys(value: unknown, issues: readonly { readonly path: readonly PropertyKey[]; readonly keys: readonly string[] }[]): unknown {
  const copy = structuredClone(value) as Record<PropertyKey, unknown>;
  for (const issue of issues) {
    let at: unknown = copy;
    for (const key of issue.path) at = at !== null && typeof at === 'object' ? (at as Record<PropertyKey, unknown>)[key] : undefined;
    if (at !== null && typeof at === 'object') for (const k of issue.keys) delete (at as Record<string, unknown>)[k];
  }
  return copy;
}

/** The wire shape of the Pod fields read here (beyond what `podSchema` checks). */
interface WirePodStatus {
  readonly phase?: string;
  readonly conditions?: readonly { readonly type?: string; readonly status?: string; readonly reason?: string }[];
}

/** Epoch ms of an RFC 3339 timestamp, or 0 when absent or unparseable. */
function epochMs(timestamp: unknown): number {
  if (typeof timestamp !== 'string') return 0;
  const ms = Date.parse(timestamp);
  return Number.isNaN(ms) ? 0 : ms;
}

/** `Kind/name` of the controlling owner reference, or null. */
function controllerOf(refs: readonly { readonly kind: string; readonly name: string; readonly controller?: boolean }[] | undefined): string | null {
  const ref = refs?.find((r) => r.controller === true);
  return ref ? `${ref.kind}/${ref.name}` : null;
}

/**
 * A wire `core/v1` Pod as a {@link ClusterPod}: the spec parsed with `podSchema`; `unschedulable` when the
 * `PodScheduled` condition is `False` with reason `Unschedulable`; `owner` from the `controller: true` owner
 * reference; `createdAt` from `creationTimestamp` (epoch ms). Phase `Unknown` (deprecated, never set by current
 * kubelets) reads as Running when bound, Pending otherwise.
 */
export function toClusterPod(item: WireObject): ParseOutcome<ClusterPod> {
  const parsed = parseApiObject(podSchema, { apiVersion: 'v1', kind: 'Pod' }, item);
  if (!parsed.ok) return parsed;
  const pod = parsed.value;
  const status = (item.status ?? {}) as WirePodStatus;
  const scheduled = status.conditions?.find((c) => c.type === 'PodScheduled');
  const nodeName = pod.spec.nodeName;
  const phase = status.phase === 'Pending' || status.phase === 'Running' || status.phase === 'Succeeded' || status.phase === 'Failed' ? status.phase : nodeName ? 'Running' : 'Pending';
  return {
    ok: true,
    value: {
      namespace: pod.metadata.namespace,
      name: pod.metadata.name,
      uid: pod.metadata.uid ?? '',
      resourceVersion: pod.metadata.resourceVersion ?? '',
      labels: pod.metadata.labels ?? {},
      annotations: pod.metadata.annotations ?? {},
      spec: pod.spec,
      ...(nodeName ? { nodeName } : {}),
      phase,
      unschedulable: scheduled?.status === 'False' && scheduled.reason === 'Unschedulable',
      owner: controllerOf(pod.metadata.ownerReferences),
      createdAt: epochMs(pod.metadata.creationTimestamp),
    },
  };
}

/** The wire shape of the Node fields read here. */
interface WireNode {
  readonly metadata?: {
    readonly name?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly creationTimestamp?: string;
    readonly deletionTimestamp?: string;
    readonly finalizers?: readonly string[];
  };
  readonly spec?: { readonly providerID?: string; readonly taints?: readonly unknown[] };
  readonly status?: {
    readonly allocatable?: Readonly<Record<string, string>>;
    readonly conditions?: readonly { readonly type?: string; readonly status?: string }[];
  };
}

/**
 * A wire `core/v1` Node as a {@link ClusterNode}: `providerId` from `spec.providerID` (`''` until the cloud
 * provider sets it), taints validated with `taintSchema` (`timeAdded` dropped), `allocatable` in canonical units
 * (cpu millicores, memory MiB; `parseResourceList`), `ready` when the `Ready` condition is `True`,
 * `deletionTimestamp` (epoch ms) and `finalizers` when set.
 */
export function toClusterNode(item: WireObject): ParseOutcome<ClusterNode> {
  const node = item as WireNode;
  const name = node.metadata?.name;
  if (typeof name !== 'string' || name === '') return { ok: false, problem: 'Node without metadata.name' };
  const problems: string[] = [];
  const taints: Taint[] = [];
  (node.spec?.taints ?? []).forEach((raw, i) => {
    const t = taintSchema.safeParse(raw);
    if (t.success) taints.push({ key: t.data.key, effect: t.data.effect, ...(t.data.value !== undefined ? { value: t.data.value } : {}) });
    else problems.push(`spec.taints[${i}]: ${t.error.issues.map((x) => x.message).join(', ')}`);
  });
  let allocatable;
  try {
    allocatable = parseResourceList(node.status?.allocatable);
  } catch (e) {
    problems.push(`status.allocatable: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (problems.length > 0 || allocatable === undefined) return { ok: false, problem: `Node ${JSON.stringify(name)}: ${problems.join('; ')}` };
  return {
    ok: true,
    value: {
      name,
      providerId: node.spec?.providerID ?? '',
      labels: node.metadata?.labels ?? {},
      annotations: node.metadata?.annotations ?? {},
      taints,
      allocatable,
      ready: node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
      createdAt: epochMs(node.metadata?.creationTimestamp),
      ...(node.metadata?.deletionTimestamp ? { deletionTimestamp: epochMs(node.metadata.deletionTimestamp) } : {}),
      ...(node.metadata?.finalizers ? { finalizers: [...node.metadata.finalizers] } : {}),
    },
  };
}

/** The wire fields of a Pod {@link podEventTime} reads. */
interface WirePodTimes {
  readonly metadata?: {
    readonly deletionTimestamp?: string;
    readonly deletionGracePeriodSeconds?: number;
    readonly ownerReferences?: readonly { readonly kind: string; readonly name: string; readonly controller?: boolean }[];
  };
  readonly spec?: { readonly nodeName?: string };
  readonly status?: {
    readonly phase?: string;
    readonly conditions?: readonly { readonly type?: string; readonly status?: string; readonly lastTransitionTime?: string }[];
    readonly containerStatuses?: readonly { readonly state?: { readonly terminated?: { readonly finishedAt?: string } } }[];
  };
}

/**
 * The latest pod event a wire `core/v1` Pod still shows, as Karpenter's core
 * `pkg/controllers/nodeclaim/podevents/controller.go` triggers on them: bound (the `PodScheduled=True` condition's
 * `lastTransitionTime`), terminal (phase Succeeded/Failed: its containers' latest `state.terminated.finishedAt`, else
 * the `Ready` condition's `lastTransitionTime`) and terminating (`metadata.deletionTimestamp` minus
 * `deletionGracePeriodSeconds`: when the deletion was requested). A pod deleted and gone leaves nothing to read.
 * @returns the node and the time (epoch ms), or undefined for an unbound pod, a DaemonSet pod, or a pod without any
 *   such timestamp
 */
export function podEventTime(item: WireObject): { readonly node: string; readonly at: number } | undefined {
  const pod = item as WirePodTimes;
  const node = pod.spec?.nodeName;
  if (!node || controllerOf(pod.metadata?.ownerReferences)?.startsWith('DaemonSet/')) return undefined;
  const times: number[] = [];
  const condition = (type: string) => pod.status?.conditions?.find((c) => c.type === type);
  const scheduled = condition('PodScheduled');
  if (scheduled?.status === 'True') times.push(epochMs(scheduled.lastTransitionTime));
  if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') {
    const finished = (pod.status.containerStatuses ?? []).map((c) => epochMs(c.state?.terminated?.finishedAt));
    times.push(finished.length > 0 ? Math.max(...finished) : epochMs(condition('Ready')?.lastTransitionTime));
  }
  if (pod.metadata?.deletionTimestamp) times.push(epochMs(pod.metadata.deletionTimestamp) - (pod.metadata.deletionGracePeriodSeconds ?? 0) * 1000);
  const at = Math.max(0, ...times);
  return at > 0 ? { node, at } : undefined;
}
