/**
 * Reading a cluster snapshot as a scenario (docs/contracts.md#snapshots): what `kubectl get nodes,pods,deployments,
 * replicasets,statefulsets,daemonsets,jobs,pdb,limitranges -A -o yaml` and `kubectl get nodepools,ec2nodeclasses -o
 * yaml` write, taken unchanged.
 *
 * - A `kind: List` (apiVersion `v1`, `items`) is unpacked into its items, each located at `items[i]` of its file.
 * - Each Node becomes a starting node ({@link ScenarioNode}): instance type, zone, capacity type and NodePool from the
 *   well-known labels (`node.kubernetes.io/instance-type`, `topology.kubernetes.io/zone`, `karpenter.sh/capacity-type`,
 *   `karpenter.sh/nodepool`, Karpenter core `pkg/apis/v1/labels.go`; a managed node group's
 *   `eks.amazonaws.com/capacityType`), its labels, taints, annotations, creation time, `status.allocatable` and the
 *   NodeClaim that owns it (Karpenter sets the Node's owner reference to its NodeClaim) kept. A node whose NodePool
 *   is not in the snapshot (a managed node group, Karpenter's leftovers) is unmanaged: kept and never disrupted.
 *   Fargate nodes (`eks.amazonaws.com/compute-type: fargate`) are no EC2 instances: left out, with their pods.
 * - Every field read is checked for shape first (a map where a list belongs, a null taint, a creation time outside
 *   1970..8997): an issue at the field, never a TypeError. Duplicate Nodes and ReplicaSets, and a NodeClaim owning two
 *   Nodes or with a name that is no object name, are issues too.
 * - Pods: `Succeeded`/`Failed` ones are ignored, and so are pending ones being deleted (`metadata.deletionTimestamp`); a pod whose controller is a ReplicaSet owned by a Deployment of the
 *   snapshot belongs to that Deployment (the ReplicaSets themselves are not simulated), likewise a StatefulSet's or a
 *   Job's; so the workload's replicas and its existing pods reconcile to one count. A DaemonSet's pods are left to
 *   the simulated DaemonSet controller, which places one on each node it admits, as the real one did. A mirror
 *   (static) pod, owned by its Node (`apiVersion: v1, kind: Node`), stays a pod of the scenario with that owner: it is
 *   never evicted, moved or provisioned for and does not keep its node from being empty (Karpenter core
 *   `pkg/utils/pod/scheduling.go` `IsOwnedByNode`, `shared/core/api/pod-owner.ts`).
 *
 * Pure: works on documents already read; never reads files.
 */
import * as z from 'zod';
import type { ValidationIssue } from '../core/errors.js';
import type { Taint } from '../core/api/kubernetes.js';
import { CAPACITY_TYPES, LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE, LABEL_NODEPOOL, LABEL_REGION, LABEL_ZONE, type CapacityType } from '../core/api/labels.js';
import { documentPath, locateIssues, manifestErrorMap, zodIssuesToPathIssues, type Manifest, type ManifestDocument } from '../core/api/manifest.js';
import { objectNameSchema, TAINT_EFFECTS } from '../core/api/object-meta.js';
import { mirrorPodOwner } from '../core/api/pod-owner.js';
import { instanceTypeByName } from '../core/instancetypes/catalog.js';
import { parseResourceList, type ResourceList } from '../core/resources/resource-list.js';
import { EARLIEST_TIME_MS, LATEST_CREATION_MS, REGION, type ScenarioNode } from './scenario.js';
import { zonesOf } from './simulated-ec2.js';

/** EKS managed node groups' name label (EKS "Managed node groups" user guide). */
export const LABEL_EKS_NODEGROUP = 'eks.amazonaws.com/nodegroup';
/** EKS managed node groups' capacity type label: `ON_DEMAND`, `SPOT` or `CAPACITY_BLOCK`. */
export const LABEL_EKS_CAPACITY_TYPE = 'eks.amazonaws.com/capacityType';
/** EKS Fargate nodes carry `eks.amazonaws.com/compute-type: fargate`. */
export const LABEL_EKS_COMPUTE_TYPE = 'eks.amazonaws.com/compute-type';
/** The pre-1.17 labels a Node still carries beside the stable ones. */
const BETA_INSTANCE_TYPE = 'beta.kubernetes.io/instance-type';
const BETA_ZONE = 'failure-domain.beta.kubernetes.io/zone';

/**
 * The documents of a YAML document: a `kind: List` (apiVersion `v1`, an `items` array, as `kubectl get -o yaml` writes
 * several objects) becomes one document per item, each locating its fields at `items[i]` of the List (so an issue
 * still names the file, line and column of the field); any other document is returned as it is. A List that
 * `readManifestDocuments` read item by item (`ManifestDocument.items`) gives those item documents, each locating a
 * field by composing its entry alone.
 * @param doc one document of a file
 * @returns the item documents, or `[doc]`
 */
export function unpackList(doc: ManifestDocument): ManifestDocument[] {
  const value = doc.value as { apiVersion?: unknown; kind?: unknown; items?: unknown } | null;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [doc];
  if (value.apiVersion !== 'v1' || value.kind !== 'List' || !Array.isArray(value.items)) return [doc];
  // Read item by item (readManifestDocuments): each entry already is a document of its own.
  if (doc.items) return [...doc.items];
  return value.items.map((item, i): ManifestDocument => ({
    file: doc.file,
    index: doc.index,
    line: doc.locate(['items', i]).line,
    value: item,
    locate: (path, options) => doc.locate(['items', i, ...path], options),
    pathPrefix: ['items', i],
  }));
}

/** True for a document the snapshot reader takes that is no manifest of its own: a `v1` Node or an `apps/v1` ReplicaSet. */
export function isSnapshotOnlyObject(value: unknown): boolean {
  const o = value as { apiVersion?: unknown; kind?: unknown } | null;
  return o !== null && typeof o === 'object' && ((o.apiVersion === 'v1' && o.kind === 'Node') || (o.apiVersion === 'apps/v1' && o.kind === 'ReplicaSet'));
}

/** A workload a snapshot pod belongs to. */
export interface PodOwner {
  readonly kind: 'Deployment' | 'StatefulSet' | 'Job';
  readonly name: string;
}

/** What {@link readSnapshot} makes of a snapshot's Nodes, ReplicaSets and pods. */
export interface SnapshotReading {
  /** The starting nodes, in document order. */
  readonly nodes: readonly ScenarioNode[];
  /** Pods to leave out: completed, a DaemonSet's, or bound to a node that is not simulated. */
  readonly dropped: ReadonlySet<object>;
  /** The workload each pod of one belongs to (keyed by the pod manifest's object). */
  readonly owners: ReadonlyMap<object, PodOwner>;
  /** What was read and left out, in words (for `note:` lines and the Result's events); never an object's contents. */
  readonly notes: readonly string[];
  /** The newest `creationTimestamp` of a Node or Pod, epoch ms: when the snapshot was taken, at the latest. */
  readonly newestMs: number | undefined;
  /** The region most Nodes name (`topology.kubernetes.io/region`), if any. */
  readonly region: string | undefined;
  readonly issues: readonly ValidationIssue[];
}

/** What {@link readSnapshot} needs besides the documents. */
export interface SnapshotContext {
  /** The snapshot's Node and ReplicaSet documents. */
  readonly docs: readonly ManifestDocument[];
  /** The parsed manifests (Pods, workloads, NodePools) with their documents. */
  readonly manifests: readonly { readonly manifest: Manifest; readonly doc: ManifestDocument }[];
  /** Nodes a Scenario document declares (`spec.nodes`): a pod bound to one is kept. @default none */
  readonly declaredNodes?: ReadonlySet<string>;
}

/** Options of {@link snapshotNodes}. */
export interface SnapshotNodeOptions {
  /** The simulation's start, epoch ms (creation times become offsets from it, at most one year back). */
  readonly startMs: number;
  readonly region: string;
  /** NodePools of the scenario: a node naming another is unmanaged. */
  readonly nodePools: ReadonlySet<string>;
}

/** A raw Node as the API server returns it (only what is read). */
type RawNode = z.output<typeof rawNodeSchema>;

/**
 * A `creationTimestamp` as the API server writes it (RFC 3339, UTC), from 1970 to {@link LATEST_CREATION_MS}: the
 * simulation starts the minute after the newest one, so a time at the calendar's edge would put it there.
 */
const creationTimestampSchema = z
  .string()
  .refine((t) => Number.isFinite(Date.parse(t)), { error: 'a creationTimestamp is an RFC 3339 time such as 2026-03-01T08:00:00Z' })
  .refine((t) => Date.parse(t) >= EARLIEST_TIME_MS && Date.parse(t) <= LATEST_CREATION_MS, {
    error: `a creationTimestamp must be from 1970-01-01 to ${new Date(LATEST_CREATION_MS).toISOString().slice(0, 10)} (Skiff simulates up to two years from it, before the year 9000)`,
  });

/** Owner references as the API server writes them (only what is read is checked; other fields are tolerated). */
const ownerReferencesSchema = z.array(z.looseObject({ kind: z.string().optional(), name: z.string().optional(), controller: z.boolean().nullish() }));

/** Labels and annotations: a map of strings. */
const stringMapSchema = z.record(z.string(), z.string({ error: 'values must be strings' }));

/**
 * The fields of a snapshot's Node that {@link readSnapshot} and {@link snapshotNodes} read, checked for shape before
 * anything reads them (every other field is tolerated, as `kubectl get -o yaml` writes many).
 */
const rawNodeSchema = z.looseObject({
  metadata: z.looseObject({
    name: objectNameSchema,
    labels: stringMapSchema.nullish(),
    annotations: stringMapSchema.nullish(),
    creationTimestamp: creationTimestampSchema.nullish(),
    ownerReferences: ownerReferencesSchema.nullish(),
  }),
  spec: z
    .looseObject({
      taints: z.array(z.looseObject({ key: z.string().min(1), value: z.string().nullish(), effect: z.enum(TAINT_EFFECTS) })).nullish(),
    })
    .nullish(),
  status: z.looseObject({ allocatable: z.record(z.string(), z.unknown()).nullish() }).nullish(),
});

/** The fields of a snapshot's ReplicaSet that {@link readSnapshot} reads. */
const rawReplicaSetSchema = z.looseObject({
  metadata: z.looseObject({ name: objectNameSchema, namespace: z.string().nullish(), ownerReferences: ownerReferencesSchema.nullish() }),
});

/**
 * The shape issues of a snapshot's Node or ReplicaSet document (located at their fields), empty when every field
 * the snapshot reader reads has the shape it expects.
 * @param doc a document {@link isSnapshotOnlyObject} accepted
 */
function shapeIssues(doc: ManifestDocument): ValidationIssue[] {
  const schema = (doc.value as { kind?: unknown }).kind === 'ReplicaSet' ? rawReplicaSetSchema : rawNodeSchema;
  const parsed = schema.safeParse(doc.value, { error: manifestErrorMap });
  return parsed.success ? [] : locateIssues(doc, zodIssuesToPathIssues(parsed.error.issues));
}

/** Labels as strings (the API server's are). */
function stringRecord(value: unknown): Record<string, string> {
  if (value === null || typeof value !== 'object') return {};
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).filter(([, v]) => typeof v === 'string') as [string, string][]);
}

/**
 * Reads the snapshot's documents: the region and the newest creation time (for a start without a Scenario or flags),
 * which pods belong to which workload, and which are left out. Nodes are made by {@link snapshotNodes} once the
 * region and start are known.
 * @param context the Node and ReplicaSet documents and the parsed manifests
 */
export function readSnapshot(context: SnapshotContext): Omit<SnapshotReading, 'nodes'> {
  const notes: string[] = [];
  const issues: ValidationIssue[] = [];
  let newestMs: number | undefined;
  const seen = (ts: unknown) => {
    const ms = typeof ts === 'string' ? Date.parse(ts) : Number.NaN;
    if (Number.isFinite(ms)) newestMs = Math.max(newestMs ?? ms, ms);
  };
  const regions = new Map<string, number>();
  const fargate = new Set<string>();
  const nodeNames = new Set<string>();
  const replicaSets = new Map<string, string | undefined>();
  /** Where each Node and ReplicaSet was first seen (`file:line`), for duplicates. */
  const firstAt = new Map<string, string>();
  const duplicate = (doc: ManifestDocument, key: string, what: string): boolean => {
    const first = firstAt.get(key);
    if (first === undefined) {
      firstAt.set(key, `${doc.file}:${doc.line}`);
      return false;
    }
    const { line, column } = doc.locate(['metadata', 'name']);
    issues.push({ file: doc.file, line, column, path: 'metadata.name', message: `duplicate ${what} (also at ${first})` });
    return true;
  };
  for (const doc of context.docs) {
    const shape = shapeIssues(doc);
    if (shape.length > 0) {
      issues.push(...shape);
      continue;
    }
    const value = doc.value as RawNode & { kind: string; metadata: { name: string; namespace?: string | null } };
    if (value.kind === 'ReplicaSet') {
      const key = `${value.metadata.namespace ?? 'default'}/${value.metadata.name}`;
      if (duplicate(doc, `ReplicaSet ${key}`, `ReplicaSet ${key}`)) continue;
      const owner = controllerOf(value.metadata.ownerReferences ?? undefined);
      replicaSets.set(key, owner?.kind === 'Deployment' ? owner.name : undefined);
      continue;
    }
    const name = value.metadata.name;
    if (duplicate(doc, `Node ${name}`, `Node name ${name}`)) continue;
    seen(value.metadata.creationTimestamp);
    const labels = stringRecord(value.metadata.labels);
    nodeNames.add(name);
    if (labels[LABEL_EKS_COMPUTE_TYPE] === 'fargate') fargate.add(name);
    const region = labels[LABEL_REGION];
    if (region !== undefined && !REGION.test(region)) {
      const { line, column } = doc.locate(['metadata', 'labels', LABEL_REGION]);
      issues.push({ file: doc.file, line, column, path: documentPath(doc, ['metadata', 'labels', LABEL_REGION]), message: `Node ${name}: region ${JSON.stringify(region)} is not an AWS region name such as us-west-2` });
    } else if (region) regions.set(region, (regions.get(region) ?? 0) + 1);
  }
  if (fargate.size > 0) notes.push(`${fargate.size} Fargate node${fargate.size === 1 ? '' : 's'} left out (not EC2 instances; no NodePool manages them), with the pods bound to them`);

  const workloads = new Set(context.manifests.filter((m) => m.manifest.kind === 'Deployment' || m.manifest.kind === 'StatefulSet' || m.manifest.kind === 'Job' || m.manifest.kind === 'DaemonSet').map((m) => `${m.manifest.kind} ${m.manifest.object.metadata.namespace ?? 'default'}/${m.manifest.object.metadata.name}`));
  const dropped = new Set<object>();
  const owners = new Map<object, PodOwner>();
  let completed = 0;
  let daemon = 0;
  let deleting = 0;
  let mirror = 0;
  const orphanSets = new Set<string>();
  const missingNode = new Map<string, number>();
  for (const { manifest, doc } of context.manifests) {
    if (manifest.kind !== 'Pod') continue;
    const pod = manifest.object;
    const created = creationTimestampSchema.optional().safeParse(pod.metadata.creationTimestamp, { error: manifestErrorMap });
    if (!created.success) {
      issues.push(...locateIssues(doc, zodIssuesToPathIssues(created.error.issues).map((i) => ({ ...i, path: ['metadata', 'creationTimestamp', ...i.path] }))));
      continue;
    }
    seen(pod.metadata.creationTimestamp);
    const phase = (pod.status as { phase?: unknown } | undefined)?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') {
      completed++;
      dropped.add(pod);
      continue;
    }
    const nodeName = pod.spec.nodeName;
    // A pending pod being deleted is never scheduled (kube-scheduler pkg/scheduler/schedule_one.go skipPodSchedule
    // skips pods with a deletionTimestamp), so no node is provisioned for it: it is left out.
    if (nodeName === undefined && pod.metadata.deletionTimestamp !== undefined) {
      deleting++;
      dropped.add(pod);
      continue;
    }
    if (nodeName !== undefined && (fargate.has(nodeName) || (nodeNames.size > 0 && !nodeNames.has(nodeName) && !context.declaredNodes?.has(nodeName)))) {
      if (!fargate.has(nodeName)) missingNode.set(nodeName, (missingNode.get(nodeName) ?? 0) + 1);
      dropped.add(pod);
      continue;
    }
    // A mirror (static) pod stays a pod of the scenario: the simulated cluster keeps its Node as its owner, so it stays
    // bound there, is never evicted nor moved, and goes with its node (Karpenter core pkg/utils/pod/scheduling.go
    // IsOwnedByNode).
    if (mirrorPodOwner(pod.metadata.ownerReferences) !== undefined) {
      mirror++;
      continue;
    }
    const namespace = pod.metadata.namespace;
    const controller = controllerOf(pod.metadata.ownerReferences);
    if (!controller) continue;
    if (controller.kind === 'DaemonSet' && workloads.has(`DaemonSet ${namespace}/${controller.name}`)) {
      daemon++;
      dropped.add(pod);
    } else if (controller.kind === 'ReplicaSet') {
      const deployment = replicaSets.get(`${namespace}/${controller.name}`);
      if (deployment !== undefined && workloads.has(`Deployment ${namespace}/${deployment}`)) owners.set(pod, { kind: 'Deployment', name: deployment });
      else orphanSets.add(`${namespace}/${controller.name}`);
    } else if ((controller.kind === 'StatefulSet' || controller.kind === 'Job') && workloads.has(`${controller.kind} ${namespace}/${controller.name}`)) {
      owners.set(pod, { kind: controller.kind, name: controller.name });
    }
  }
  if (completed > 0) notes.push(`${completed} completed pod${completed === 1 ? '' : 's'} (Succeeded or Failed) ignored`);
  if (deleting > 0) notes.push(`${deleting} pending pod${deleting === 1 ? '' : 's'} being deleted (metadata.deletionTimestamp) left out: nothing schedules or provisions for them`);
  if (mirror > 0) notes.push(`${mirror} mirror (static) pod${mirror === 1 ? '' : 's'} (owned by a Node) kept on ${mirror === 1 ? 'its node' : 'their nodes'}: never evicted nor moved, gone with the node`);
  if (daemon > 0) notes.push(`${daemon} DaemonSet pod${daemon === 1 ? '' : 's'} left to the simulated DaemonSet controller (it places one on each node it admits)`);
  if (orphanSets.size > 0) notes.push(`pods of ${orphanSets.size} ReplicaSet${orphanSets.size === 1 ? '' : 's'} with no Deployment in the snapshot (e.g. ${[...orphanSets][0]}) are simulated as bare pods`);
  for (const [node, count] of missingNode) notes.push(`${count} pod${count === 1 ? '' : 's'} bound to node ${node}, which is not in the snapshot, left out`);
  return { dropped, owners, notes, newestMs, region: majorityRegion(regions), issues };
}

/** The region named most often (ties: the first in alphabetical order), if any. */
function majorityRegion(counts: ReadonlyMap<string, number>): string | undefined {
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0];
}

/**
 * The region a snapshot's Nodes are in: the `topology.kubernetes.io/region` label most of them carry (ties: the first
 * in alphabetical order), counting each Node name once and only Nodes whose fields have the shape
 * {@link readSnapshot} expects and whose label is a region name. It is what {@link readSnapshot} reports as `region`,
 * available before anything else is read: a Scenario document without `spec.region` is validated against it (its
 * zones, prices and offerings name this region's zones), as the run uses it (docs/contracts.md#snapshots).
 * @param docs the snapshot's Node documents (others are ignored)
 * @returns the region, or undefined when no Node names a valid one
 */
export function snapshotRegion(docs: readonly ManifestDocument[]): string | undefined {
  const counts = new Map<string, number>();
  const names = new Set<string>();
  for (const doc of docs) {
    if ((doc.value as { kind?: unknown }).kind !== 'Node' || shapeIssues(doc).length > 0) continue;
    const node = doc.value as RawNode;
    if (names.has(node.metadata.name)) continue;
    names.add(node.metadata.name);
    const region = stringRecord(node.metadata.labels)[LABEL_REGION];
    if (region !== undefined && REGION.test(region)) counts.set(region, (counts.get(region) ?? 0) + 1);
  }
  return majorityRegion(counts);
}

/** The controller owner reference (or the first one) of an object. */
function controllerOf(refs: readonly { kind?: unknown; name?: unknown; controller?: unknown }[] | null | undefined): { kind: string; name: string } | undefined {
  const ref = refs?.find((r) => r.controller === true) ?? refs?.[0];
  return typeof ref?.kind === 'string' && typeof ref.name === 'string' ? { kind: ref.kind, name: ref.name } : undefined;
}

/**
 * The starting nodes of a snapshot's Node documents. A node without an instance-type or zone label, with a type
 * Skiff's catalogue does not hold, or a zone outside the region is an issue at that label (file:line:column); a
 * Fargate node is left out (see {@link readSnapshot}).
 * @param docs the Node documents, in order
 * @param options start, region, the scenario's NodePools
 * @returns the nodes, notes (unmanaged nodes by kind) and issues
 */
export function snapshotNodes(docs: readonly ManifestDocument[], options: SnapshotNodeOptions): { nodes: ScenarioNode[]; notes: string[]; issues: ValidationIssue[] } {
  const nodes: ScenarioNode[] = [];
  const issues: ValidationIssue[] = [];
  const notes: string[] = [];
  const zones = zonesOf(options.region);
  const unmanaged = new Map<string, number>();
  const issue = (doc: ManifestDocument, path: readonly PropertyKey[], message: string, atKey = false) => {
    const { line, column } = doc.locate(path, { atKey });
    issues.push({ file: doc.file, line, column, path: documentPath(doc, path), message });
  };
  const names = new Set<string>();
  /** NodeClaim names taken from owner references, and the node each names. */
  const claims = new Map<string, string>();
  for (const doc of docs) {
    if ((doc.value as { kind?: unknown }).kind !== 'Node') continue;
    // Shapes and duplicate names are readSnapshot's issues (it reads the same documents): such a Node is skipped here.
    if (shapeIssues(doc).length > 0) continue;
    const node = doc.value as RawNode;
    const meta = node.metadata;
    const name = meta.name;
    if (names.has(name)) continue;
    names.add(name);
    const labels = stringRecord(meta.labels);
    if (labels[LABEL_EKS_COMPUTE_TYPE] === 'fargate') continue;
    const typeKey = labels[LABEL_INSTANCE_TYPE] !== undefined ? LABEL_INSTANCE_TYPE : BETA_INSTANCE_TYPE;
    const zoneKey = labels[LABEL_ZONE] !== undefined ? LABEL_ZONE : BETA_ZONE;
    const instanceType = labels[typeKey];
    const zone = labels[zoneKey];
    if (instanceType === undefined) {
      issue(doc, ['metadata', 'labels'], `Node ${name} has no ${LABEL_INSTANCE_TYPE} label: Skiff simulates EC2 nodes only`);
      continue;
    }
    if (!instanceTypeByName(instanceType)) {
      issue(doc, ['metadata', 'labels', typeKey], `Node ${name}: unknown instance type ${JSON.stringify(instanceType)} (not in Skiff's EC2 catalogue)`);
      continue;
    }
    if (zone === undefined) {
      issue(doc, ['metadata', 'labels'], `Node ${name} has no ${LABEL_ZONE} label`);
      continue;
    }
    if (!zones.includes(zone)) {
      issue(doc, ['metadata', 'labels', zoneKey], `Node ${name}: zone ${zone} is not in region ${options.region} (its zones: ${zones.join(', ')}); set the region with --region or spec.region`);
      continue;
    }
    const capacityType = capacityTypeOf(labels);
    if (capacityType === undefined) {
      issue(doc, ['metadata', 'labels', LABEL_CAPACITY_TYPE], `Node ${name}: capacity type ${JSON.stringify(labels[LABEL_CAPACITY_TYPE])} is not one of ${CAPACITY_TYPES.join(', ')}`);
      continue;
    }
    const pool = labels[LABEL_NODEPOOL];
    const managed = pool !== undefined && options.nodePools.has(pool);
    if (!managed) {
      const kind = labels[LABEL_EKS_NODEGROUP] !== undefined ? `managed node group ${labels[LABEL_EKS_NODEGROUP]}` : pool !== undefined ? `NodePool ${pool} (not in the snapshot)` : 'no NodePool or node group';
      unmanaged.set(kind, (unmanaged.get(kind) ?? 0) + 1);
    }
    const taints: Taint[] = [];
    for (const t of node.spec?.taints ?? []) taints.push({ key: t.key, ...(typeof t.value === 'string' && t.value !== '' ? { value: t.value } : {}), effect: t.effect });
    const created = typeof meta.creationTimestamp === 'string' ? Date.parse(meta.creationTimestamp) : Number.NaN;
    // Offsets from the start: never after it, at most a year before (an older node is as old as the simulation knows).
    const createdAtSeconds = Number.isFinite(created) ? Math.max(-366 * 24 * 3600, Math.min(0, Math.floor((created - options.startMs) / 1000))) : 0;
    const claimAt = managed ? (meta.ownerReferences ?? []).findIndex((r) => r.kind === 'NodeClaim' && typeof r.name === 'string') : -1;
    const claim = claimAt >= 0 ? meta.ownerReferences![claimAt]!.name : undefined;
    if (claim !== undefined) {
      // A NodeClaim owns one Node (Karpenter core pkg/controllers/nodeclaim/lifecycle/registration.go sets the owner
      // reference of the one Node it registers), and its name is an object name.
      const path = ['metadata', 'ownerReferences', claimAt, 'name'];
      const valid = objectNameSchema.safeParse(claim);
      if (!valid.success) {
        issue(doc, path, `Node ${name}: NodeClaim name ${JSON.stringify(claim)}: ${valid.error.issues[0]?.message ?? 'not an object name'}`);
        continue;
      }
      const other = claims.get(claim);
      if (other !== undefined) {
        issue(doc, path, `Node ${name}: NodeClaim ${claim} already owns Node ${other}; a NodeClaim owns one Node`);
        continue;
      }
      claims.set(claim, name);
    }
    const allocatable = allocatableOf(node.status?.allocatable);
    nodes.push({
      name,
      instanceType,
      zone,
      capacityType,
      ...(managed ? { nodePool: pool } : {}),
      labels,
      taints,
      annotations: stringRecord(meta.annotations),
      createdAtSeconds,
      ...(typeof claim === 'string' ? { nodeClaim: claim } : {}),
      ...(allocatable ? { allocatable } : {}),
    });
  }
  for (const [kind, count] of unmanaged) notes.push(`${count} node${count === 1 ? '' : 's'} of ${kind}: kept as they are, never disrupted`);
  return { nodes, notes, issues };
}

/** The capacity type a Node's labels give: Karpenter's label, else a managed node group's, else on-demand. */
function capacityTypeOf(labels: Readonly<Record<string, string>>): CapacityType | undefined {
  const karpenter = labels[LABEL_CAPACITY_TYPE];
  if (karpenter !== undefined) return (CAPACITY_TYPES as readonly string[]).includes(karpenter) ? (karpenter as CapacityType) : undefined;
  const eks = labels[LABEL_EKS_CAPACITY_TYPE];
  return eks === 'SPOT' ? 'spot' : eks === 'CAPACITY_BLOCK' ? 'reserved' : 'on-demand';
}

/** `status.allocatable` in canonical units (millicores, MiB, counts), or undefined when absent or unreadable. */
function allocatableOf(raw: Record<string, unknown> | null | undefined): ResourceList | undefined {
  if (!raw) return undefined;
  try {
    return parseResourceList(Object.fromEntries(Object.entries(raw).filter(([, v]) => typeof v === 'string' || typeof v === 'number')) as Record<string, string | number>);
  } catch {
    return undefined;
  }
}
