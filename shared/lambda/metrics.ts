/**
 * Controller reports → metric data points under Karpenter's names (`shared/core/metrics.ts`), and a publisher that
 * writes them to CloudWatch as Embedded Metric Format through Powertools Metrics (one EMF log line per dimension set).
 *
 * The conversions are pure; they live here rather than in the core because they read the controllers' report types
 * (the core may not import controllers). Handlers take an optional {@link MetricsPublisher}: the AWS composition root
 * passes {@link createEmfPublisher}, the simulation passes nothing.
 *
 * What each report yields (names: docs/karpenter-semantics.md#metrics; reasons lower-case as Karpenter's labels):
 * - provisioning: `karpenter_nodeclaims_created_total{nodepool, reason=provisioning}`,
 *   `karpenter_cloudprovider_instance_launch_failures_total{nodepool, error}`,
 *   `karpenter_scheduler_unschedulable_pods_count` (the pass's pending pods no NodePool can serve);
 * - lifecycle: `karpenter_nodes_created_total{nodepool}` (registered), `karpenter_nodeclaims_terminated_total` and
 *   `karpenter_nodeclaims_disrupted_total{reason=registration_timeout}`, `karpenter_nodes_terminated_total`,
 *   `skiff_orphan_instances_terminated_total`, `skiff_nodeclaim_mirror_failures_total`; and, from a pass run with
 *   `observeUsage` (the lifecycle Lambda's scheduled passes), the fleet gauges below, the per-node gauges
 *   ({@link nodeUsageMetrics}) and `karpenter_pods_startup_duration_seconds` ({@link PodStartupTracker});
 * - disruption: `karpenter_voluntary_disruption_decisions_total{reason, decision}` (proposed),
 *   `karpenter_voluntary_disruption_failed_validations_total` (rejected),
 *   `karpenter_voluntary_disruption_consolidation_timeouts_total{consolidation_type}` (searches stopped on their
 *   budget, `searchStopped`), `karpenter_nodeclaims_disrupted_total` and
 *   `karpenter_nodeclaims_terminated_total{nodepool, reason}` plus the seed's
 *   `karpenter_disruption_actions_performed_total{reason}` (deleted), `karpenter_pods_eviction_requests_total{code=200}`.
 * - fleet gauges from the NodeClaim records ({@link fleetMetrics}): `karpenter_nodeclaims_total{nodepool, state}`,
 *   `karpenter_nodes_total{nodepool}`.
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { NodeClaim } from '../core/api/nodeclaim.js';
import { CLUSTER_DIMENSION, DIMENSIONS, METRICS_NAMESPACE, METRICS_SERVICE, countBy, metricKindOf, metricPoint, type MetricDataPoint, type MetricUnitName } from '../core/metrics.js';
import { unitOf } from '../core/resources/resource-list.js';
import type { DisruptionReport } from '../controllers/disruption/deps.js';
import type { LifecycleReport, NodeUsage, PodObservation } from '../controllers/lifecycle.js';
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

/**
 * The data points of one lifecycle pass: counters of what it did (none when it did nothing) and, when the pass ran
 * with `observeUsage` (its report has `usage`), the fleet gauges ({@link fleetMetrics}), the per-node gauges
 * ({@link nodeUsageMetrics}) and the pod startup durations `startup` measures.
 * @param startup the container's tracker of pods seen Pending; without it no startup duration is measured
 */
export function lifecycleMetrics(report: LifecycleReport, startup?: PodStartupTracker): MetricDataPoint[] {
  const usage = report.usage;
  const observed = usage
    ? [
        ...fleetMetrics(usage.claims),
        ...nodeUsageMetrics(usage.nodes),
        ...(startup ? startup.observe(usage.pods, usage.observedAt).map((seconds) => metricPoint('podsStartupDuration', seconds)) : []),
      ]
    : [];
  return [...lifecycleCounters(report), ...observed];
}

function lifecycleCounters(report: LifecycleReport): MetricDataPoint[] {
  const pool = (name: string) => ({ nodepool: nodePoolOfNodeClaim(name) });
  const terminated = [
    ...report.registrationTimeouts.map((n) => ({ n, reason: 'registration_timeout' })),
    ...report.instanceTerminated.map((n) => ({ n, reason: 'instance_terminated' })),
    ...report.nodeDeleted.map((n) => ({ n, reason: 'node_deleted' })),
    ...report.nodeClaimDeleted.map((n) => ({ n, reason: 'nodeclaim_deleted' })),
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
    ...countBy('voluntaryDisruptionConsolidationTimeouts', report.searchStopped ?? [], (s) => ({ consolidation_type: s.method === 'single-node-consolidation' ? 'single' : 'multi' })),
    ...countBy('nodeClaimsDisrupted', report.deleted, (x) => ({ nodepool: nodePoolOfNodeClaim(x.nodeClaim), reason: lower(x.reason) })),
    ...countBy('nodeClaimsTerminated', report.deleted, (x) => ({ nodepool: nodePoolOfNodeClaim(x.nodeClaim), reason: lower(x.reason) })),
    ...countBy('disruptionActionsPerformed', report.deleted, (x) => ({ reason: lower(x.reason) })),
    ...(report.evicted.length > 0 ? [metricPoint('podsEvictionRequests', report.evicted.length, { code: '200' })] : []),
  ];
}

/**
 * The data points of one interruption batch (docs/karpenter-semantics.md#interruption,
 * docs/karpenter-semantics.md#metrics): messages received by kind
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

/**
 * A canonical amount in the unit the `karpenter_nodes_*` resource gauges report: cpu in cores (millicores / 1000),
 * memory and ephemeral-storage in bytes (MiB × 2^20), counts as they are.
 * @param resource the resource name, e.g. `cpu`
 * @param amount in Skiff's canonical unit of that resource (`unitOf`)
 */
export function resourceGaugeValue(resource: string, amount: number): number {
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
 * ones) and registered nodes by NodePool. Published by the lifecycle Lambda's scheduled passes.
 * @param claims every NodeClaim record of the cluster
 */
export function fleetMetrics(claims: readonly NodeClaim[]): MetricDataPoint[] {
  const live = claims.filter((c) => c.state !== 'Deleted' && c.state !== 'Failed');
  const registered = live.filter((c) => c.state === 'Registered' || c.state === 'Initialized');
  return [...countBy('nodeClaimsTotal', live, (c) => ({ nodepool: c.nodePool, state: c.state })), ...countBy('nodesTotal', registered, (c) => ({ nodepool: c.nodePool }))];
}

/**
 * Per-node resource gauges (Karpenter's node metrics controller): for each managed node and each resource it has
 * allocatable or that its pods request, `karpenter_nodes_allocatable`, `karpenter_nodes_total_pod_requests` and
 * `karpenter_nodes_total_daemon_requests` (0 where nothing is requested), in {@link resourceGaugeValue}'s units.
 *
 * Dimensions are only `nodepool` and `resource_type` (plus the publisher's `service` and `cluster`): Karpenter's
 * `node_name`, `capacity_type` and `zone` labels are EMF properties, because CloudWatch bills each distinct dimension
 * set as a metric and a per-node dimension would add metrics with every node launched. So a CloudWatch statistic is
 * over the NodePool's nodes: Average is the mean node, Maximum the fullest, Sum over one pass the NodePool's total;
 * one node's values are in the log lines (CloudWatch Logs Insights on `node_name`).
 * @param nodes the pass's {@link NodeUsage}
 * @example nodeUsageMetrics([{ node: 'ip-10-0-1-5', nodePool: 'general', allocatable: { cpu: 1930 }, podRequests: { cpu: 500 }, daemonRequests: {} }])
 *   // allocatable{general, cpu} 1.93, total_pod_requests{general, cpu} 0.5, total_daemon_requests{general, cpu} 0
 */
export function nodeUsageMetrics(nodes: readonly NodeUsage[]): MetricDataPoint[] {
  const points: MetricDataPoint[] = [];
  for (const n of nodes) {
    const properties = { [DIMENSIONS.nodeName]: n.node, [DIMENSIONS.capacityType]: n.capacityType, [DIMENSIONS.zone]: n.zone };
    const resources = [...new Set([...Object.keys(n.allocatable), ...Object.keys(n.podRequests), ...Object.keys(n.daemonRequests)])].sort();
    for (const resource of resources) {
      const dimensions = { nodepool: n.nodePool, resource_type: resource };
      points.push(
        metricPoint('nodesAllocatable', resourceGaugeValue(resource, n.allocatable[resource] ?? 0), dimensions, properties),
        metricPoint('nodesTotalPodRequests', resourceGaugeValue(resource, n.podRequests[resource] ?? 0), dimensions, properties),
        metricPoint('nodesTotalDaemonRequests', resourceGaugeValue(resource, n.daemonRequests[resource] ?? 0), dimensions, properties),
      );
    }
  }
  return points;
}

/** Most pods a {@link PodStartupTracker} remembers as Pending (the oldest are forgotten first). */
export const MAX_TRACKED_PENDING_PODS = 50_000;

/**
 * Measures `karpenter_pods_startup_duration_seconds` the way Karpenter's pod metrics controller does — only for pods it
 * saw Pending, once — from the pod lists of successive lifecycle passes in one Lambda container: a pod seen `Pending`
 * is remembered (uid → creation time); when a later pass sees it `Running`, the duration from its creation to that
 * pass is measured and the pod forgotten; a pod no longer listed is forgotten.
 *
 * What it measures, exactly: creation → the first lifecycle pass that lists the pod with phase `Running` (bound, and
 * its containers started). Karpenter measures creation → the PodReady condition's transition; Skiff's pod view has
 * no conditions, so a value is late by up to the lifecycle interval (1 minute by default). State is per container: a
 * new container measures nothing for pods already Running when it started (as Karpenter after a restart), and a pod
 * whose Pending and Running passes ran in different containers is not measured (two containers that both saw it
 * Pending would both measure it; lifecycle passes are serialised by their lease, so one container usually runs them).
 */
export class PodStartupTracker {
  readonly #pending = new Map<string, number>();
  readonly #max: number;

  /** @param maxTracked most pods remembered as Pending @default {@link MAX_TRACKED_PENDING_PODS} */
  constructor(maxTracked = MAX_TRACKED_PENDING_PODS) {
    this.#max = maxTracked;
  }

  /** Pods remembered as Pending. */
  get tracked(): number {
    return this.#pending.size;
  }

  /**
   * Takes one pass's pods.
   * @param pods every non-terminal pod the pass listed
   * @param observedAt when the pass listed them, epoch ms
   * @returns the startup durations of the pods first seen Running now, seconds (never negative)
   */
  observe(pods: readonly PodObservation[], observedAt: number): number[] {
    const durations: number[] = [];
    const listed = new Set<string>();
    for (const pod of pods) {
      listed.add(pod.uid);
      if (pod.phase === 'Pending') {
        if (!this.#pending.has(pod.uid)) this.#pending.set(pod.uid, pod.createdAt);
      } else if (pod.phase === 'Running') {
        const createdAt = this.#pending.get(pod.uid);
        if (createdAt === undefined) continue;
        durations.push(Math.max(0, (observedAt - createdAt) / 1000));
        this.#pending.delete(pod.uid);
      }
    }
    for (const uid of this.#pending.keys()) if (!listed.has(uid)) this.#pending.delete(uid);
    // Map iteration is insertion order: forget the longest-known first.
    for (const uid of this.#pending.keys()) {
      if (this.#pending.size <= this.#max) break;
      this.#pending.delete(uid);
    }
    return durations;
  }
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

/** Most values of one metric in one EMF line (Powertools flushes at 100; CloudWatch's EMF limit is 100). */
const MAX_VALUES_PER_LINE = 99;

/**
 * A publisher writing EMF through Powertools Metrics: points are grouped by dimension set and properties, and each group
 * is flushed as one EMF line (`publishStoredMetrics`) carrying two dimension sets — the default ones alone (`service`,
 * `cluster`) and the defaults with the point's own — so CloudWatch keeps both the cluster-wide metric (what the stack's
 * alarms read: `{service: skiff, cluster}`) and the per-NodePool/per-reason one (for dashboards). A point with a
 * `resource_type` dimension gets only the second set: a cluster-wide sum of cores, bytes and counts means nothing.
 * Points of the same counter or gauge in one group are summed; each point of a histogram (e.g.
 * `karpenter_pods_startup_duration_seconds`) stays a value of its own (EMF value arrays, at most 99 per line). A
 * point's properties are EMF properties of its line (Powertools metadata). Powertools emits nothing when
 * `POWERTOOLS_DEV` is set (unless `POWERTOOLS_METRICS_DISABLED=false`).
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
  const sorted = (record: Readonly<Record<string, string>>) => Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    publish(points) {
      const groups = new Map<string, { dims: Readonly<Record<string, string>>; props: Readonly<Record<string, string>>; values: Map<string, { unit: MetricUnitName; values: number[] }> }>();
      for (const p of points) {
        const props = p.properties ?? {};
        const id = JSON.stringify([sorted(p.dimensions), sorted(props)]);
        const group = groups.get(id) ?? { dims: p.dimensions, props, values: new Map() };
        groups.set(id, group);
        const prev = group.values.get(p.name);
        if (!prev) group.values.set(p.name, { unit: p.unit, values: [p.value] });
        else if (metricKindOf(p.name) === 'histogram') prev.values.push(p.value);
        else prev.values[0] = (prev.values[0] ?? 0) + p.value;
      }
      for (const { dims, props, values } of groups.values()) {
        for (let offset = 0; [...values.values()].some((v) => v.values.length > offset); offset += MAX_VALUES_PER_LINE) {
          if (Object.keys(dims).length > 0) {
            if (!(DIMENSIONS.resourceType in dims)) metrics.addDimensions({});
            metrics.addDimensions({ ...dims });
          }
          for (const [key, value] of Object.entries(props)) metrics.addMetadata(key, value);
          for (const [name, { unit, values: list }] of values) {
            for (const value of list.slice(offset, offset + MAX_VALUES_PER_LINE)) metrics.addMetric(name, UNITS[unit], value);
          }
          metrics.publishStoredMetrics();
        }
      }
    },
  };
}
