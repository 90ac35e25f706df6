/**
 * Skiff's metrics under Karpenter's names, so dashboards and alerts built for Karpenter carry over
 * (docs/karpenter-semantics.md#metrics). Pure: names, units, dimensions and the CloudWatch namespace, plus the
 * data-point shape; publishing lives in `shared/lambda/metrics.ts` (EMF through Powertools), and the CDK stack reads
 * the same constants for alarms and dashboards.
 *
 * Sources: docs/karpenter-semantics.md#metrics (v1 metric names, from Karpenter's docs `reference/metrics.md`) and
 * docs/karpenter-semantics.md#interruption (interruption metrics); the seed article's names (`karpenter_nodes_total`,
 * `karpenter_nodeclaims_total`, `karpenter_disruption_actions_performed_total`, `karpenter_pods_startup_duration_seconds`,
 * `karpenter_nodes_allocatable`, `karpenter_nodes_total_pod_requests`), which Skiff also emits because the seed's
 * dashboards use them. Prometheus labels become CloudWatch dimensions with the same names (`nodepool`, `reason`,
 * `capacity_type`, …); label values keep Karpenter's spelling (lower-case reasons such as `underutilized`).
 * Names starting with `skiff_` are Skiff's own (no Karpenter equivalent).
 */

/** The CloudWatch namespace every Skiff metric is published in. */
export const METRICS_NAMESPACE = 'Skiff';

/**
 * The Powertools `service` dimension every Skiff function publishes under (the stack sets `POWERTOOLS_SERVICE_NAME` to
 * it). With {@link CLUSTER_DIMENSION} it forms the dimension set every metric is also published with, so alarms can
 * read a cluster-wide metric: `{ service: 'skiff', cluster: <name> }`.
 */
export const METRICS_SERVICE = 'skiff';

/** The dimension naming the EKS cluster, on every Skiff metric. */
export const CLUSTER_DIMENSION = 'cluster';

/** CloudWatch units Skiff's metrics use (a subset of CloudWatch's `StandardUnit`). */
export type MetricUnitName = 'Count' | 'Seconds' | 'Bytes' | 'Percent' | 'None';

/** What a Prometheus metric is; CloudWatch has no types, but it tells which statistic makes sense (Sum vs Maximum). */
export type MetricKind = 'counter' | 'gauge' | 'histogram';

/** One metric: its name, unit, dimensions (Karpenter's label names), kind and where its name comes from. */
export interface MetricDefinition {
  /** The metric name, exactly as Karpenter exports it (or `skiff_…` for Skiff's own). */
  readonly name: string;
  readonly unit: MetricUnitName;
  /** Dimension names a data point may carry (a subset is allowed; the CloudWatch metric is per exact set). */
  readonly dimensions: readonly string[];
  /**
   * Karpenter labels carried as EMF properties instead of dimensions (searchable in CloudWatch Logs Insights, not
   * metric dimensions): kept out of the dimensions because CloudWatch bills per distinct dimension set, and a per-node
   * dimension would create a metric per node. @default none
   */
  readonly properties?: readonly string[];
  readonly kind: MetricKind;
  /** One line on what it counts or measures. */
  readonly description: string;
  /** Where the name comes from: a section of `docs/karpenter-semantics.md`, the seed, or Skiff. */
  readonly source: string;
}

/** Dimension names (Karpenter's Prometheus label names). */
export const DIMENSIONS = {
  nodePool: 'nodepool',
  reason: 'reason',
  capacityType: 'capacity_type',
  decision: 'decision',
  state: 'state',
  error: 'error',
  resourceType: 'resource_type',
  messageType: 'message_type',
  code: 'code',
  nodeName: 'node_name',
  zone: 'zone',
  consolidationType: 'consolidation_type',
} as const;

/** A dimension name. */
export type DimensionName = (typeof DIMENSIONS)[keyof typeof DIMENSIONS];

const d = DIMENSIONS;

/**
 * Every metric Skiff publishes or reserves, keyed by a camel-case handle. Counters are published as the increment of
 * one invocation (use the Sum statistic); gauges as the current value (Maximum or Average).
 */
export const METRICS = {
  // NodeClaims (docs/karpenter-semantics.md#metrics).
  nodeClaimsCreated: {
    name: 'karpenter_nodeclaims_created_total',
    unit: 'Count',
    dimensions: [d.nodePool, d.reason],
    kind: 'counter',
    description: 'NodeClaims launched (reason: provisioning, or the disruption reason of a replacement).',
    source: 'docs/karpenter-semantics.md#metrics',
  },
  nodeClaimsTerminated: {
    name: 'karpenter_nodeclaims_terminated_total',
    unit: 'Count',
    dimensions: [d.nodePool, d.reason],
    kind: 'counter',
    description: 'NodeClaims deleted (instance terminated), by why.',
    source: 'docs/karpenter-semantics.md#metrics',
  },
  nodeClaimsDisrupted: {
    name: 'karpenter_nodeclaims_disrupted_total',
    unit: 'Count',
    dimensions: [d.nodePool, d.reason],
    kind: 'counter',
    description: 'NodeClaims disrupted (empty, underutilized, drifted, expired, interrupted, registration_timeout).',
    source: 'docs/karpenter-semantics.md#metrics, docs/karpenter-semantics.md#launch-registration-initialization (liveness reasons)',
  },
  nodeClaimsTotal: {
    name: 'karpenter_nodeclaims_total',
    unit: 'Count',
    dimensions: [d.nodePool, d.state],
    kind: 'gauge',
    description: 'NodeClaims by lifecycle state (Pending, Launched, Registered, Initialized, Deleting).',
    source: 'seed article',
  },
  // Nodes.
  nodesTotal: {
    name: 'karpenter_nodes_total',
    unit: 'Count',
    dimensions: [d.nodePool],
    kind: 'gauge',
    description: 'Nodes Skiff launched that are registered with the cluster.',
    source: 'seed article',
  },
  nodesCreated: {
    name: 'karpenter_nodes_created_total',
    unit: 'Count',
    dimensions: [d.nodePool],
    kind: 'counter',
    description: 'Nodes that registered (their NodeClaim became Registered).',
    source: 'docs/karpenter-semantics.md#metrics',
  },
  nodesTerminated: {
    name: 'karpenter_nodes_terminated_total',
    unit: 'Count',
    dimensions: [d.nodePool],
    kind: 'counter',
    description: 'Node objects Skiff deleted.',
    source: 'docs/karpenter-semantics.md#metrics',
  },
  nodesAllocatable: {
    name: 'karpenter_nodes_allocatable',
    unit: 'None',
    dimensions: [d.nodePool, d.resourceType],
    properties: [d.nodeName, d.capacityType, d.zone],
    kind: 'gauge',
    description:
      'Allocatable of one managed node (a point per node and resource per lifecycle pass): cpu in cores, memory and ephemeral-storage in bytes, pods and extended resources as counts. Average over a NodePool is the mean node; Sum over one pass the NodePool total.',
    source: 'seed article; docs/karpenter-semantics.md#metrics',
  },
  nodesTotalPodRequests: {
    name: 'karpenter_nodes_total_pod_requests',
    unit: 'None',
    dimensions: [d.nodePool, d.resourceType],
    properties: [d.nodeName, d.capacityType, d.zone],
    kind: 'gauge',
    description: 'Requests of the non-DaemonSet pods bound to one managed node, in the units of karpenter_nodes_allocatable (resource pods: how many).',
    source: 'seed article; docs/karpenter-semantics.md#metrics',
  },
  nodesTotalDaemonRequests: {
    name: 'karpenter_nodes_total_daemon_requests',
    unit: 'None',
    dimensions: [d.nodePool, d.resourceType],
    properties: [d.nodeName, d.capacityType, d.zone],
    kind: 'gauge',
    description: 'Requests of the DaemonSet pods bound to one managed node, in the units of karpenter_nodes_allocatable.',
    source: 'docs/karpenter-semantics.md#metrics',
  },
  // Pods.
  podsStartupDuration: {
    name: 'karpenter_pods_startup_duration_seconds',
    unit: 'Seconds',
    dimensions: [],
    kind: 'histogram',
    description:
      'Time from a pod’s creation until the lifecycle pass first sees it Running, for pods the same Lambda container saw Pending before (Karpenter records pods it saw pending, until PodReady); resolution: the lifecycle schedule (1 minute by default).',
    source: 'seed article; docs/karpenter-semantics.md#metrics',
  },
  podsEvictionRequests: {
    name: 'karpenter_pods_eviction_requests_total',
    unit: 'Count',
    dimensions: [d.code],
    kind: 'counter',
    description: 'Eviction API requests, by HTTP status code (200 evicted; a PDB answers 429).',
    source: 'docs/karpenter-semantics.md#metrics',
  },
  // Disruption.
  disruptionActionsPerformed: {
    name: 'karpenter_disruption_actions_performed_total',
    unit: 'Count',
    dimensions: [d.reason, d.decision],
    kind: 'counter',
    description: 'Disruptions completed (the node deleted), by reason and decision. Pre-v1 name kept for the seed’s dashboards.',
    source: 'seed article (Karpenter before v1; v1 dropped the karpenter_disruption_* family, docs/karpenter-semantics.md#metrics)',
  },
  voluntaryDisruptionDecisions: {
    name: 'karpenter_voluntary_disruption_decisions_total',
    unit: 'Count',
    dimensions: [d.reason, d.decision],
    kind: 'counter',
    description: 'Voluntary disruption decisions (delete or replace) by reason (empty, underutilized, drifted); Skiff counts them when proposed.',
    source: 'docs/karpenter-semantics.md#metrics',
  },
  voluntaryDisruptionFailedValidations: {
    name: 'karpenter_voluntary_disruption_failed_validations_total',
    unit: 'Count',
    dimensions: [],
    kind: 'counter',
    description: 'Proposed disruptions dropped when re-validated a pass later (or abandoned when a replacement failed).',
    source: 'docs/karpenter-semantics.md#metrics',
  },
  voluntaryDisruptionConsolidationTimeouts: {
    name: 'karpenter_voluntary_disruption_consolidation_timeouts_total',
    unit: 'Count',
    dimensions: [d.consolidationType],
    kind: 'counter',
    description: 'Consolidation searches stopped before trying every candidate; Skiff stops on a per-pass candidate budget, not a timeout (consolidation_type: single).',
    source: 'docs/karpenter-semantics.md#metrics',
  },
  // Scheduler and cloud provider.
  schedulerUnschedulablePods: {
    name: 'karpenter_scheduler_unschedulable_pods_count',
    unit: 'Count',
    dimensions: [],
    kind: 'gauge',
    description: 'Pending pods no NodePool can serve, after the last provisioning pass.',
    source: 'docs/karpenter-semantics.md#metrics',
  },
  cloudProviderInstanceLaunchFailures: {
    name: 'karpenter_cloudprovider_instance_launch_failures_total',
    unit: 'Count',
    dimensions: [d.nodePool, d.error],
    kind: 'counter',
    description: 'Failed launches (CreateFleet), by EC2 error code (e.g. InsufficientInstanceCapacity).',
    source: 'docs/karpenter-semantics.md#metrics',
  },
  // Interruption (docs/karpenter-semantics.md#interruption).
  interruptionReceivedMessages: {
    name: 'karpenter_interruption_received_messages_total',
    unit: 'Count',
    dimensions: [d.messageType],
    kind: 'counter',
    description: 'Interruption messages received from the SQS queue, by kind (spot_interrupted, scheduled_change, …).',
    source: 'docs/karpenter-semantics.md#interruption',
  },
  interruptionDeletedMessages: {
    name: 'karpenter_interruption_deleted_messages_total',
    unit: 'Count',
    dimensions: [],
    kind: 'counter',
    description: 'Interruption messages handled and deleted.',
    source: 'docs/karpenter-semantics.md#interruption',
  },
  // Skiff's own.
  orphanInstancesTerminated: {
    name: 'skiff_orphan_instances_terminated_total',
    unit: 'Count',
    dimensions: [],
    kind: 'counter',
    description: 'Instances tagged for the cluster with no NodeClaim, terminated by garbage collection (Karpenter only logs these).',
    source: 'Skiff (docs/architecture.md#idempotency)',
  },
  decisionsUnpublished: {
    name: 'skiff_decisions_unpublished_total',
    unit: 'Count',
    dimensions: [],
    kind: 'counter',
    description: 'Decisions the EventBridge publisher gave up on (PutEvents failed, or rejected entries after retries); the pass went on.',
    source: 'Skiff',
  },
  priceRefreshFailures: {
    name: 'skiff_price_refresh_failures_total',
    unit: 'Count',
    dimensions: [],
    kind: 'counter',
    description: 'Price refreshes (GetProducts, DescribeSpotPriceHistory, the DynamoDB snapshot) that failed; the previous snapshot stays.',
    source: 'Skiff',
  },
  priceSnapshotAge: {
    name: 'skiff_price_snapshot_age_seconds',
    unit: 'Seconds',
    dimensions: [],
    kind: 'gauge',
    description: 'Age of the stored price snapshot when a lifecycle pass checked it (Karpenter refreshes every 12 h).',
    source: 'Skiff (docs/karpenter-semantics.md#pricing)',
  },
  nodeClaimMirrorFailures: {
    name: 'skiff_nodeclaim_mirror_failures_total',
    unit: 'Count',
    dimensions: [],
    kind: 'counter',
    description: 'NodeClaim mirror writes that failed (the lifecycle pass went on; the next pass retries).',
    source: 'Skiff',
  },
} as const satisfies Record<string, MetricDefinition>;

/** The handle of a metric in {@link METRICS}. */
export type MetricKey = keyof typeof METRICS;

/** One value to publish: a metric, its value in the metric's unit, and its dimensions. */
export interface MetricDataPoint {
  readonly name: string;
  readonly unit: MetricUnitName;
  readonly value: number;
  /** Dimension name → value; only names from the metric's definition. */
  readonly dimensions: Readonly<Record<string, string>>;
  /** Property name → value (EMF properties, not dimensions); only names from the definition's `properties`. */
  readonly properties?: Readonly<Record<string, string>>;
}

/**
 * A data point of `key` (unit and name from the definition). Dimensions and properties whose value is undefined or
 * empty are left out, so a point always has a valid (possibly smaller) dimension set.
 * @param key the metric
 * @param value in the metric's unit (counters: the increment)
 * @param dimensions values for (some of) the metric's dimensions
 * @param properties values for (some of) the metric's properties (EMF properties, not dimensions)
 * @throws {RangeError} when a dimension or property is not one of the metric's, or the value is not finite
 * @example metricPoint('nodeClaimsCreated', 1, { nodepool: 'general', reason: 'provisioning' })
 * @example metricPoint('nodesAllocatable', 4, { nodepool: 'general', resource_type: 'cpu' }, { node_name: 'ip-10-0-1-5' })
 */
export function metricPoint(
  key: MetricKey,
  value: number,
  dimensions: Readonly<Record<string, string | undefined>> = {},
  properties?: Readonly<Record<string, string | undefined>>,
): MetricDataPoint {
  const def: MetricDefinition = METRICS[key];
  if (!Number.isFinite(value)) throw new RangeError(`${def.name}: value must be finite, got ${value}`);
  const dims: Record<string, string> = {};
  for (const [name, v] of Object.entries(dimensions)) {
    if (!def.dimensions.includes(name)) throw new RangeError(`${def.name} has no dimension ${name} (it has: ${def.dimensions.join(', ') || 'none'})`);
    if (v !== undefined && v !== '') dims[name] = v;
  }
  if (properties === undefined) return { name: def.name, unit: def.unit, value, dimensions: dims };
  const allowed = def.properties ?? [];
  const props: Record<string, string> = {};
  for (const [name, v] of Object.entries(properties)) {
    if (!allowed.includes(name)) throw new RangeError(`${def.name} has no property ${name} (it has: ${allowed.join(', ') || 'none'})`);
    if (v !== undefined && v !== '') props[name] = v;
  }
  return { name: def.name, unit: def.unit, value, dimensions: dims, properties: props };
}

/**
 * The kind of the metric named `name` (a Karpenter or `skiff_` name), or undefined for a name Skiff does not define.
 * @example metricKindOf('karpenter_pods_startup_duration_seconds') // 'histogram'
 */
export function metricKindOf(name: string): MetricKind | undefined {
  return (Object.values(METRICS) as readonly MetricDefinition[]).find((m) => m.name === name)?.kind;
}

/**
 * Counts items per dimension value and returns one point per distinct value (sorted), e.g. NodeClaims launched per
 * NodePool.
 * @param key a counter
 * @param items what to count
 * @param dimensionsOf the dimensions of one item
 * @example countBy('nodeClaimsTerminated', deleted, (x) => ({ nodepool: x.nodePool, reason: 'empty' }))
 */
export function countBy<T>(key: MetricKey, items: readonly T[], dimensionsOf: (item: T) => Readonly<Record<string, string | undefined>>): MetricDataPoint[] {
  const counts = new Map<string, { dims: Readonly<Record<string, string | undefined>>; n: number }>();
  for (const item of items) {
    const dims = dimensionsOf(item);
    const id = JSON.stringify(Object.entries(dims).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    const entry = counts.get(id);
    if (entry) entry.n++;
    else counts.set(id, { dims, n: 1 });
  }
  return [...counts.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, { dims, n }]) => metricPoint(key, n, dims));
}
