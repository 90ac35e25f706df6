/**
 * Controller reports → metric data points under Karpenter's names (`shared/core/metrics.ts`), and a publisher that
 * writes them to CloudWatch as Embedded Metric Format through Powertools Metrics (one EMF log line per dimension set).
 *
 * The conversions are pure; they live here rather than in the core because they read the controllers' report types
 * (the core may not import controllers). Handlers take an optional {@link MetricsPublisher}: the AWS composition root
 * passes {@link createEmfPublisher}, the simulation passes nothing.
 *
 * What each report yields (names: ../shared/KARPENTER-V1.md §6.1; reasons lower-case as Karpenter's labels):
 * - provisioning: `karpenter_nodeclaims_created_total{nodepool, reason=provisioning}`,
 *   `karpenter_cloudprovider_instance_launch_failures_total{nodepool, error}`,
 *   `karpenter_scheduler_unschedulable_pods_count` (the pass's pending pods no NodePool can serve);
 * - lifecycle: `karpenter_nodes_created_total{nodepool}` (registered), `karpenter_nodeclaims_terminated_total` and
 *   `karpenter_nodeclaims_disrupted_total{reason=registration_timeout}`, `karpenter_nodes_terminated_total`,
 *   `skiff_orphan_instances_terminated_total`, `skiff_nodeclaim_mirror_failures_total`;
 * - disruption: `karpenter_voluntary_disruption_decisions_total{reason, decision}` (proposed),
 *   `karpenter_voluntary_disruption_failed_validations_total` (rejected), `karpenter_nodeclaims_disrupted_total` and
 *   `karpenter_nodeclaims_terminated_total{nodepool, reason}` plus the seed's
 *   `karpenter_disruption_actions_performed_total{reason}` (deleted), `karpenter_pods_eviction_requests_total{code=200}`.
 * - fleet gauges from the NodeClaim records ({@link fleetMetrics}): `karpenter_nodeclaims_total{nodepool, state}`,
 *   `karpenter_nodes_total{nodepool}`, `karpenter_nodes_allocatable{nodepool, resource_type}`.
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { NodeClaim } from '../core/api/nodeclaim.js';
import { CLUSTER_DIMENSION, METRICS_NAMESPACE, METRICS_SERVICE, countBy, metricPoint, type MetricDataPoint, type MetricUnitName } from '../core/metrics.js';
import { unitOf } from '../core/resources/resource-list.js';
import type { DisruptionReport } from '../controllers/disruption.js';
import type { LifecycleReport } from '../controllers/lifecycle.js';
import type { ProvisionReport } from '../controllers/provision.js';
import type { Log } from './log.js';

/** Publishes data points (a handler calls it once per invocation, after its report). */
export interface MetricsPublisher {
  /** Writes the points; never throws for an empty list. */
  publish(points: readonly MetricDataPoint[]): void;
}

/**
 * Publishes points when a publisher is configured; a publisher that throws is logged at `warn` (metrics never fail a
 * pass).
 * @param publisher the publisher, or undefined (nothing to do)
 * @param log where a failure is reported (`metrics not published`, key `error`)
 */
export function publishMetrics(publisher: MetricsPublisher | undefined, points: readonly MetricDataPoint[], log: Log): void {
  if (!publisher || points.length === 0) return;
  try {
    publisher.publish(points);
  } catch (e) {
    log.warn('metrics not published', { points: points.length, error: e instanceof Error ? e.message : String(e) });
  }
}

/**
 * The NodePool a NodeClaim belongs to, from its name: Skiff names NodeClaims as Karpenter does, `<nodepool>-<suffix>`
 * (`nodeClaimName` in `shared/controllers/launch.ts`; a disruption replacement is `<nodepool>-r<suffix>`).
 * @returns the NodePool's name, or undefined when the name has no generated suffix
 * @example nodePoolOfNodeClaim('general-x7k2p') // 'general'
 */
export function nodePoolOfNodeClaim(nodeClaim: string): string | undefined {
  const dash = nodeClaim.lastIndexOf('-');
  if (dash <= 0 || !/^r?[0-9a-z]{1,6}$/.test(nodeClaim.slice(dash + 1))) return undefined;
  return nodeClaim.slice(0, dash);
}

/**
 * The data points of one provisioning pass. A pass that was skipped (`coveredByPassAt`) yields none.
 * @example provisionMetrics({ launched: ['general-x7k2p'], failed: [], nominated: {}, unschedulable: [], retry: [] })
 *   // [created_total{nodepool: general, reason: provisioning} 1, unschedulable_pods_count 0]
 */
export function provisionMetrics(report: ProvisionReport): MetricDataPoint[] {
  if (report.coveredByPassAt !== undefined) return [];
  return [
    ...countBy('nodeClaimsCreated', report.launched, (name) => ({ nodepool: nodePoolOfNodeClaim(name), reason: 'provisioning' })),
    ...countBy('cloudProviderInstanceLaunchFailures', report.failed, (f) => ({ nodepool: nodePoolOfNodeClaim(f.nodeClaim), error: f.error })),
    metricPoint('schedulerUnschedulablePods', report.unschedulable.length),
  ];
}

/** The data points of one lifecycle pass (counters only; nothing when the pass did nothing). */
export function lifecycleMetrics(report: LifecycleReport): MetricDataPoint[] {
  const pool = (name: string) => ({ nodepool: nodePoolOfNodeClaim(name) });
  const terminated = [
    ...report.registrationTimeouts.map((n) => ({ n, reason: 'registration_timeout' })),
    ...report.instanceTerminated.map((n) => ({ n, reason: 'instance_terminated' })),
    ...report.nodeDeleted.map((n) => ({ n, reason: 'node_deleted' })),
  ];
  return [
    ...countBy('nodesCreated', report.registered, pool),
    ...countBy('nodeClaimsTerminated', terminated, (t) => ({ nodepool: nodePoolOfNodeClaim(t.n), reason: t.reason })),
    ...countBy('nodeClaimsDisrupted', report.registrationTimeouts, (n) => ({ nodepool: nodePoolOfNodeClaim(n), reason: 'registration_timeout' })),
    ...(report.deletedNodes.length > 0 ? [metricPoint('nodesTerminated', report.deletedNodes.length)] : []),
    ...(report.orphanInstances.length > 0 ? [metricPoint('orphanInstancesTerminated', report.orphanInstances.length)] : []),
    ...(report.mirrorFailures.length > 0 ? [metricPoint('nodeClaimMirrorFailures', report.mirrorFailures.length)] : []),
  ];
}

/** The data points of one disruption pass (counters only). Reasons are lower-cased as Karpenter's label values. */
export function disruptionMetrics(report: DisruptionReport): MetricDataPoint[] {
  const lower = (s: string) => s.toLowerCase();
  return [
    ...countBy('voluntaryDisruptionDecisions', report.proposed, (p) => ({ reason: lower(p.reason), decision: p.decision })),
    ...(report.rejected.length > 0 ? [metricPoint('voluntaryDisruptionFailedValidations', report.rejected.length)] : []),
    ...countBy('nodeClaimsDisrupted', report.deleted, (x) => ({ nodepool: nodePoolOfNodeClaim(x.nodeClaim), reason: lower(x.reason) })),
    ...countBy('nodeClaimsTerminated', report.deleted, (x) => ({ nodepool: nodePoolOfNodeClaim(x.nodeClaim), reason: lower(x.reason) })),
    ...countBy('disruptionActionsPerformed', report.deleted, (x) => ({ reason: lower(x.reason) })),
    ...(report.evicted.length > 0 ? [metricPoint('podsEvictionRequests', report.evicted.length, { code: '200' })] : []),
  ];
}

/**
 * The data points of one interruption batch (KARPENTER-V1.md §5 "Related metrics"): messages received by kind
 * (`malformed` and `ignored` for the ones no controller looked at) and messages deleted (handled, or dropped as
 * malformed: everything but the failures SQS redelivers).
 * @param counts the batch's counts (`InterruptionBatchCounts` of the interruption handler)
 * @param reports the controller's report for each message it handled (their `kind`, e.g. a spot interruption)
 */
export function interruptionMetrics(
  counts: { readonly received: number; readonly malformed: number; readonly failed: number },
  reports: readonly { readonly kind: string }[],
): MetricDataPoint[] {
  const byKind = countBy('interruptionReceivedMessages', reports, (r) => ({ message_type: r.kind }));
  const unexamined = counts.received - reports.length - counts.malformed - counts.failed;
  return [
    ...byKind,
    ...(counts.malformed > 0 ? [metricPoint('interruptionReceivedMessages', counts.malformed, { message_type: 'malformed' })] : []),
    ...(unexamined > 0 ? [metricPoint('interruptionReceivedMessages', unexamined, { message_type: 'ignored' })] : []),
    ...(counts.received - counts.failed > 0 ? [metricPoint('interruptionDeletedMessages', counts.received - counts.failed)] : []),
  ];
}

/** Canonical amount → the unit `karpenter_nodes_allocatable` reports: cpu cores, memory bytes, counts. */
function allocatableValue(resource: string, amount: number): number {
  switch (unitOf(resource)) {
    case 'millicores':
      return amount / 1000;
    case 'MiB':
      return amount * 1024 * 1024;
    case 'count':
      return amount;
  }
}

/**
 * Fleet gauges from the NodeClaim records (DynamoDB, the source of truth): NodeClaims by NodePool and state (live
 * ones), registered nodes by NodePool, and their summed allocatable by NodePool and resource (cpu in cores, memory in
 * bytes). Meant for a periodic pass (the lifecycle Lambda's composition root, after `reconcileLifecycle`).
 * @param claims every NodeClaim record of the cluster
 */
export function fleetMetrics(claims: readonly NodeClaim[]): MetricDataPoint[] {
  const live = claims.filter((c) => c.state !== 'Deleted' && c.state !== 'Failed');
  const registered = live.filter((c) => c.state === 'Registered' || c.state === 'Initialized');
  const allocatable = new Map<string, number>();
  for (const c of registered) {
    for (const [resource, amount] of Object.entries(c.allocatable ?? {})) {
      const key = `${c.nodePool}\u0000${resource}`;
      allocatable.set(key, (allocatable.get(key) ?? 0) + allocatableValue(resource, amount));
    }
  }
  return [
    ...countBy('nodeClaimsTotal', live, (c) => ({ nodepool: c.nodePool, state: c.state })),
    ...countBy('nodesTotal', registered, (c) => ({ nodepool: c.nodePool })),
    ...[...allocatable.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, value]) => {
      const [nodepool, resource] = key.split('\u0000');
      return metricPoint('nodesAllocatable', value, { nodepool, resource_type: resource });
    }),
  ];
}

/** Powertools' unit for each of Skiff's units. */
const UNITS: Readonly<Record<MetricUnitName, (typeof MetricUnit)[keyof typeof MetricUnit]>> = {
  Count: MetricUnit.Count,
  Seconds: MetricUnit.Seconds,
  Bytes: MetricUnit.Bytes,
  Percent: MetricUnit.Percent,
  None: MetricUnit.NoUnit,
};

/** Options of {@link createEmfPublisher}. */
export interface EmfPublisherOptions {
  /** A Powertools Metrics instance to publish through; default: a new one in {@link METRICS_NAMESPACE}. */
  readonly metrics?: Metrics;
  /** The `service` dimension every point carries. @default `POWERTOOLS_SERVICE_NAME`, else {@link METRICS_SERVICE} */
  readonly serviceName?: string;
  /** The EKS cluster name: the `cluster` dimension on every point. */
  readonly clusterName?: string;
  /** Further dimensions on every point. */
  readonly defaultDimensions?: Readonly<Record<string, string>>;
}

/**
 * A publisher writing EMF through Powertools Metrics: points are grouped by dimension set and each group is flushed
 * as one EMF line (`publishStoredMetrics`) carrying two dimension sets — the default ones alone (`service`, `cluster`)
 * and the defaults with the point's own — so CloudWatch keeps both the cluster-wide metric (what the stack's alarms
 * read: `{service: skiff, cluster}`) and the per-NodePool/per-reason one (for dashboards). Points of the same metric in
 * one group are summed. Powertools emits nothing when `POWERTOOLS_DEV` is set (unless `POWERTOOLS_METRICS_DISABLED=false`).
 * @example
 * const metrics = createEmfPublisher({ clusterName: 'prod' });
 * metrics.publish(provisionMetrics(report));
 */
export function createEmfPublisher(options: EmfPublisherOptions = {}): MetricsPublisher {
  const defaults = { ...options.defaultDimensions, ...(options.clusterName !== undefined ? { [CLUSTER_DIMENSION]: options.clusterName } : {}) };
  const metrics =
    options.metrics ??
    new Metrics({
      namespace: METRICS_NAMESPACE,
      serviceName: options.serviceName ?? (process.env.POWERTOOLS_SERVICE_NAME || METRICS_SERVICE),
      ...(Object.keys(defaults).length > 0 ? { defaultDimensions: defaults } : {}),
    });
  return {
    publish(points) {
      const groups = new Map<string, { dims: Readonly<Record<string, string>>; values: Map<string, { unit: MetricUnitName; value: number }> }>();
      for (const p of points) {
        const id = JSON.stringify(Object.entries(p.dimensions).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
        const group = groups.get(id) ?? { dims: p.dimensions, values: new Map() };
        groups.set(id, group);
        const prev = group.values.get(p.name);
        group.values.set(p.name, { unit: p.unit, value: (prev?.value ?? 0) + p.value });
      }
      for (const { dims, values } of groups.values()) {
        if (Object.keys(dims).length > 0) {
          metrics.addDimensions({});
          metrics.addDimensions({ ...dims });
        }
        for (const [name, { unit, value }] of values) metrics.addMetric(name, UNITS[unit], value);
        metrics.publishStoredMetrics();
      }
    },
  };
}
