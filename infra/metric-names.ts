/**
 * The CloudWatch metrics the alarms and the dashboard read. Names, namespace and dimensions come from
 * `shared/core/metrics.ts` (Karpenter's names, docs/karpenter-semantics.md#metrics) and, for the webhook's refusals,
 * `shared/lambda/webhook-metrics.ts`, which the publishers use too.
 *
 * Contract with the publisher (`shared/lambda/metrics.ts`, EMF through Powertools): every point is also published with
 * exactly the dimensions of {@link alarmDimensions} — `service` (from `POWERTOOLS_SERVICE_NAME`, which the stack sets
 * to {@link METRIC_SERVICE} on every function) and `cluster` — which is what the alarms read. The dashboard's per-state
 * graphs use SEARCH, so they work with any extra dimensions.
 */
import { CLUSTER_DIMENSION, METRICS, METRICS_NAMESPACE, METRICS_SERVICE } from '../shared/core/metrics.js';
import { WEBHOOK_REQUESTS_REFUSED } from '../shared/lambda/webhook-metrics.js';

/** CloudWatch namespace of Skiff's metrics. */
export const METRIC_NAMESPACE = METRICS_NAMESPACE;

/** Powertools service name every function publishes metrics under (`POWERTOOLS_SERVICE_NAME`). */
export const METRIC_SERVICE = METRICS_SERVICE;

/** The metric names the stack reads. */
export const METRIC_NAMES = {
  /** Gauge: pods the last provisioning pass could not place. */
  unschedulablePods: METRICS.schedulerUnschedulablePods.name,
  /** Counter: failed launches. */
  launchFailures: METRICS.cloudProviderInstanceLaunchFailures.name,
  /** Gauge: registered nodes. */
  nodes: METRICS.nodesTotal.name,
  /** Gauge: NodeClaims by state. */
  nodeClaims: METRICS.nodeClaimsTotal.name,
  /** Histogram: pod creation → first seen Running, seconds. */
  podStartup: METRICS.podsStartupDuration.name,
  /** Gauge, per node (dimensions nodepool, resource_type): allocatable. */
  nodeAllocatable: METRICS.nodesAllocatable.name,
  /** Gauge, per node: requests of its non-DaemonSet pods. */
  nodePodRequests: METRICS.nodesTotalPodRequests.name,
  /** Gauge, per node: requests of its DaemonSet pods. */
  nodeDaemonRequests: METRICS.nodesTotalDaemonRequests.name,
  /** Gauge: age of the price snapshot when last checked, seconds. */
  priceSnapshotAge: METRICS.priceSnapshotAge.name,
  /** Counter: decisions not published to the decision bus. */
  decisionsUnpublished: METRICS.decisionsUnpublished.name,
  /** Counter (dimensions code, reason): requests the webhook refused with a 4xx. */
  webhookRequestsRefused: WEBHOOK_REQUESTS_REFUSED.name,
} as const;

/**
 * The dimensions the alarmed metrics are published with.
 * @param cluster the EKS cluster name
 */
export function alarmDimensions(cluster: string): Record<string, string> {
  return { service: METRIC_SERVICE, [CLUSTER_DIMENSION]: cluster };
}
