import { describe, expect, it } from 'vitest';
import type { SimulationResult } from '../../shared/sim/result.js';
import { nodePoolYaml } from '../support/manifests.js';
import { nodeClassYaml } from '../support/provisioner-harness.js';
import { simulateDocs } from '../support/simulate-docs.js';

// Zone topology spread while a node is draining (break-it trial s10, no faults). Node b1 (zone b) expires and is
// drained but keeps 3 `app=web` pods it cannot evict (do-not-disrupt, or a PDB that allows no disruption). kube-scheduler
// counts them in zone b until they are gone, and so do Karpenter's topology counts (core
// `pkg/controllers/provisioning/scheduling/topology.go countDomains`: every scheduled, non-terminal, non-terminating pod
// matching the selector, on whichever node) while the node itself is no capacity (core `provisioning/provisioner.go
// Schedule`: `nodes.Active()`). The spread pods must therefore go to new nodes in zones a and c, not wait for zone b.

const scenario = `
apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: spread-draining}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: 20m
  region: us-west-2
  nodes:
    - {name: a1, instanceType: m5.xlarge, zone: us-west-2a, capacityType: on-demand, nodePool: general, createdAt: "-10m"}
    - {name: b1, instanceType: m5.2xlarge, zone: us-west-2b, capacityType: on-demand, nodePool: old, createdAt: "-2h"}
    - {name: b2, instanceType: m5.2xlarge, zone: us-west-2b, capacityType: on-demand, nodePool: general, createdAt: "-10m"}
    - {name: c1, instanceType: m5.xlarge, zone: us-west-2c, capacityType: on-demand, nodePool: general, createdAt: "-10m"}
  events:
    - {at: 3m, scale: {kind: Deployment, namespace: default, name: web, replicas: 6}}`;

/** `general` serves every zone; `old` (zone b only) holds b1, which expires at once (created 2 h ago, expireAfter 1 h). */
const whenEmpty = { consolidationPolicy: 'WhenEmpty', consolidateAfter: '30m' };
const pools = [
  nodePoolYaml({ weight: 50, requirements: { 'karpenter.k8s.aws/instance-family': ['m5'], 'topology.kubernetes.io/zone': ['us-west-2a', 'us-west-2b', 'us-west-2c'] }, disruption: whenEmpty }),
  nodePoolYaml({ name: 'old', weight: 1, template: { expireAfter: '1h' }, requirements: { 'karpenter.k8s.aws/instance-family': ['m5'], 'topology.kubernetes.io/zone': ['us-west-2b'] }, disruption: whenEmpty }),
].join('---');

/** 3 `app=web` pods pinned to `node`; `annotations` on their template. */
const pinned = (node: string, annotations = '{}') => `
apiVersion: apps/v1
kind: Deployment
metadata: {name: pin-${node}, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: web, pin: ${node}}}
  template:
    metadata: {labels: {app: web, pin: ${node}}, annotations: ${annotations}}
    spec:
      nodeSelector: {kubernetes.io/hostname: ${node}}
      containers: [{name: c, image: nginx, resources: {requests: {cpu: "1", memory: 1Gi}}}]`;

/** The spread Deployment: zone spread over every `app=web` pod, maxSkew 1, DoNotSchedule; scaled to 6 at 3m. */
const web = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 0
  selector: {matchLabels: {app: web, role: main}}
  template:
    metadata: {labels: {app: web, role: main}}
    spec:
      topologySpreadConstraints:
        - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}
      containers: [{name: c, image: nginx, resources: {requests: {cpu: "1", memory: 1Gi}}}]`;

/** A PDB that allows no disruption of b1's pinned pods. */
const blockingPdb = `
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: pin-b1}
spec:
  selector: {matchLabels: {pin: b1}}
  maxUnavailable: 0`;

const START = Date.parse('2026-03-02T08:00:00Z');

/** Seconds each `web` pod that was ever pending waited between turning pending and being scheduled (to the end of the run if never). */
function webWaits(r: SimulationResult): number[] {
  const end = Date.parse(r.end);
  return r.pods
    .filter((p) => p.owner?.startsWith('ReplicaSet/web-') && p.firstPendingAt)
    .map((p) => ((p.scheduledAt ? Date.parse(p.scheduledAt) : end) - Date.parse(p.firstPendingAt!)) / 1000);
}

/** Live `app=web` pods (the pinned ones and web's) per zone of the node they are bound to at the end. */
function webByZone(r: SimulationResult): Record<string, number> {
  const zoneOf = new Map(r.nodes.map((n) => [n.name, n.zone]));
  const out: Record<string, number> = {};
  for (const p of r.pods) {
    if (p.deletedAt || !p.node || !/^ReplicaSet\/(web|pin-)/.test(p.owner ?? '')) continue;
    const zone = zoneOf.get(p.node)!;
    out[zone] = (out[zone] ?? 0) + 1;
  }
  return out;
}

/** The zones of the nodes launched during the run that hold a `web` pod. */
function launchedZonesHoldingWeb(r: SimulationResult): string[] {
  const launched = new Map(r.nodes.filter((n) => Date.parse(n.createdAt) >= START).map((n) => [n.name, n.zone]));
  const zones = r.pods.filter((p) => p.owner?.startsWith('ReplicaSet/web-') && p.node && launched.has(p.node)).map((p) => launched.get(p.node!)!);
  return [...new Set(zones)].sort();
}

describe('zone topology spread while a node is draining', () => {
  for (const [name, docs] of [
    ['do-not-disrupt pods', [pinned('b1', '{karpenter.sh/do-not-disrupt: "true"}')]],
    ['pods a PDB keeps from eviction', [pinned('b1'), blockingPdb]],
  ] as const) {
    it(`counts the draining node's ${name} in its zone: the spread pods get new nodes in the other zones within minutes`, async () => {
      const r = await simulateDocs(7, scenario, nodeClassYaml(), pools, pinned('a1'), pinned('c1'), ...docs, web);
      const draining = r.nodes.find((n) => n.name === 'b1');
      expect(draining?.deletedAt ?? null).toBeNull(); // still there at the end, its 3 pods with it
      expect(r.unschedulable.filter((u) => u.pod.startsWith('default/web-'))).toEqual([]);
      expect(r.pods.filter((p) => p.owner?.startsWith('ReplicaSet/web-') && p.node && !p.deletedAt)).toHaveLength(6);
      expect(Math.max(0, ...webWaits(r))).toBeLessThan(180);
      // a1 and c1 are full: the pods kube-scheduler allows in zones a and c need new nodes there.
      expect(launchedZonesHoldingWeb(r)).toEqual(['us-west-2a', 'us-west-2c']);
      expect(webByZone(r)).toEqual({ 'us-west-2a': 5, 'us-west-2b': 5, 'us-west-2c': 5 });
    }, 300_000);
  }
});
