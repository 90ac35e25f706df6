import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Taint } from '../../shared/core/api/kubernetes.js';
import {
  hostPortsOf,
  placementProblem,
  podEffectiveRequests,
  toleratesTaint,
  type CheckedPodSpec,
  type MaybeBoundPod,
  type PlacementNode,
  type PlacementPod,
} from '../../shared/sim/placement-check.js';

// ---- builders -------------------------------------------------------------------------------------------------

const ZONE = 'topology.kubernetes.io/zone';
const HOST = 'kubernetes.io/hostname';

/** A node with a hostname label, 4 cpu, 8 GiB, 110 pods. */
function node(name: string, labels: Record<string, string> = {}, extra: Partial<PlacementNode> = {}): PlacementNode {
  return { name, labels: { [HOST]: name, ...labels }, taints: [], allocatable: { cpu: 4000, memory: 8192, pods: 110 }, ...extra };
}
const inZone = (name: string, zone: string, labels: Record<string, string> = {}, extra: Partial<PlacementNode> = {}) => node(name, { [ZONE]: zone, ...labels }, extra);

/** A pod requesting 100m / 128Mi unless `spec` says otherwise. */
function pod(name: string, spec: Partial<CheckedPodSpec> = {}, labels: Record<string, string> = {}, namespace = 'default'): PlacementPod {
  return { namespace, name, labels, spec: { containers: [{ resources: { requests: { cpu: '100m', memory: '128Mi' } } }], ...spec } };
}
const on = (p: PlacementPod, nodeName: string): MaybeBoundPod => ({ ...p, nodeName });
const requests = (cpu: string, memory = '128Mi') => ({ resources: { requests: { cpu, memory } } });

const antiTerm = (topologyKey: string, matchLabels: Record<string, string>, extra: object = {}) => ({
  podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels }, topologyKey, ...extra }] },
});
const affinityTerm = (topologyKey: string, matchLabels: Record<string, string>, extra: object = {}) => ({
  podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels }, topologyKey, ...extra }] },
});
const spread = (maxSkew: number, extra: object = {}, topologyKey = ZONE) => ({
  topologySpreadConstraints: [{ maxSkew, topologyKey, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'web' } }, ...extra }],
});
const web = (name: string, extra: Partial<CheckedPodSpec> = {}, labels: Record<string, string> = {}) => pod(name, extra, { app: 'web', ...labels });

/** One side of a case: where the pod goes and what the cluster holds. */
interface Placement {
  readonly node: PlacementNode;
  readonly nodes?: readonly PlacementNode[];
  readonly pods?: readonly MaybeBoundPod[];
  /** A different pod for this side (e.g. another policy); defaults to the case's pod. */
  readonly pod?: PlacementPod;
}

interface Case {
  readonly plugin: string;
  readonly name: string;
  readonly pod: PlacementPod;
  readonly accept: Placement;
  readonly reject: Placement;
  /** What the rejection must say. */
  readonly why: RegExp;
}

const check = (c: Case, side: Placement) => placementProblem({ pod: side.pod ?? c.pod, node: side.node, nodes: side.nodes ?? [side.node], pods: side.pods ?? [] });

// ---- the table ------------------------------------------------------------------------------------------------

const a1 = inZone('a1', 'us-west-2a');
const a2 = inZone('a2', 'us-west-2a');
const b1 = inZone('b1', 'us-west-2b');
const c1 = inZone('c1', 'us-west-2c');
const zonal = [a1, a2, b1, c1];
const tainted = (n: PlacementNode, ...taints: Taint[]) => ({ ...n, taints });

const CASES: readonly Case[] = [
  // NodeAffinity
  { plugin: 'NodeAffinity', name: 'nodeSelector', pod: pod('p', { nodeSelector: { disk: 'ssd' } }), accept: { node: node('n', { disk: 'ssd' }) }, reject: { node: node('n', { disk: 'hdd' }) }, why: /nodeSelector disk=ssd is not met \(the node has disk=hdd\)/ },
  {
    plugin: 'NodeAffinity',
    name: 'In',
    pod: pod('p', { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }] }] } } } }),
    accept: { node: node('n', { tier: 'b' }) },
    reject: { node: node('n') },
    why: /required node affinity/,
  },
  {
    plugin: 'NodeAffinity',
    name: 'NotIn (an absent label satisfies it)',
    pod: pod('p', { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['a'] }] }] } } } }),
    accept: { node: node('n') },
    reject: { node: node('n', { tier: 'a' }) },
    why: /required node affinity/,
  },
  {
    plugin: 'NodeAffinity',
    name: 'Exists',
    pod: pod('p', { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }] } } } }),
    accept: { node: node('n', { gpu: '' }) },
    reject: { node: node('n') },
    why: /required node affinity/,
  },
  {
    plugin: 'NodeAffinity',
    name: 'DoesNotExist',
    pod: pod('p', { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'gpu', operator: 'DoesNotExist' }] }] } } } }),
    accept: { node: node('n') },
    reject: { node: node('n', { gpu: 'true' }) },
    why: /required node affinity/,
  },
  {
    plugin: 'NodeAffinity',
    name: 'Gt compares integers',
    pod: pod('p', { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'gen', operator: 'Gt', values: ['5'] }] }] } } } }),
    accept: { node: node('n', { gen: '10' }) },
    reject: { node: node('n', { gen: '5' }) },
    why: /required node affinity/,
  },
  {
    plugin: 'NodeAffinity',
    name: 'Lt never matches a non-integer label',
    pod: pod('p', { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'gen', operator: 'Lt', values: ['7'] }] }] } } } }),
    accept: { node: node('n', { gen: '6' }) },
    reject: { node: node('n', { gen: 'six' }) },
    why: /required node affinity/,
  },
  {
    plugin: 'NodeAffinity',
    name: 'required terms are ORed, expressions in a term ANDed',
    pod: pod('p', {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'a', operator: 'In', values: ['1'] }, { key: 'b', operator: 'In', values: ['1'] }] },
              { matchExpressions: [{ key: 'c', operator: 'Exists' }] },
            ],
          },
        },
      },
    }),
    accept: { node: node('n', { c: 'x' }) },
    reject: { node: node('n', { a: '1' }) },
    why: /none of the 2 required node affinity term\(s\)/,
  },
  {
    plugin: 'NodeAffinity',
    name: 'a beta label reads the GA label the node carries',
    pod: pod('p', { nodeSelector: { 'beta.kubernetes.io/arch': 'arm64' } }),
    accept: { node: node('n', { 'kubernetes.io/arch': 'arm64' }) },
    reject: { node: node('n', { 'kubernetes.io/arch': 'amd64' }) },
    why: /beta.kubernetes.io\/arch=arm64 is not met/,
  },
  {
    plugin: 'NodeAffinity',
    name: 'matchFields on metadata.name',
    pod: pod('p', { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }] } } } }),
    accept: { node: node('n1') },
    reject: { node: node('n2') },
    why: /required node affinity/,
  },

  // TaintToleration
  {
    plugin: 'TaintToleration',
    name: 'NoSchedule needs a matching toleration (Equal compares the value)',
    pod: pod('p', { tolerations: [{ key: 'team', operator: 'Equal', value: 'a', effect: 'NoSchedule' }] }),
    accept: { node: tainted(node('n'), { key: 'team', value: 'a', effect: 'NoSchedule' }) },
    reject: { node: tainted(node('n'), { key: 'team', value: 'b', effect: 'NoSchedule' }) },
    why: /taint team=b:NoSchedule is not tolerated/,
  },
  {
    plugin: 'TaintToleration',
    name: 'NoExecute blocks; a toleration for another effect does not help',
    pod: pod('p', { tolerations: [{ key: 'maint', operator: 'Exists', effect: 'NoSchedule' }] }),
    accept: { node: tainted(node('n'), { key: 'maint', effect: 'NoSchedule' }) },
    reject: { node: tainted(node('n'), { key: 'maint', effect: 'NoExecute' }) },
    why: /taint maint:NoExecute is not tolerated/,
  },
  {
    plugin: 'TaintToleration',
    name: 'PreferNoSchedule never blocks',
    pod: pod('p'),
    accept: { node: tainted(node('n'), { key: 'spot', effect: 'PreferNoSchedule' }) },
    reject: { node: tainted(node('n'), { key: 'spot', effect: 'NoSchedule' }) },
    why: /taint spot:NoSchedule/,
  },
  {
    plugin: 'TaintToleration',
    name: 'an empty key with Exists tolerates every taint; without it one untolerated taint blocks',
    pod: pod('p', { tolerations: [{ operator: 'Exists' }] }),
    accept: { node: tainted(node('n'), { key: 'x', effect: 'NoExecute' }, { key: 'y', value: 'z', effect: 'NoSchedule' }) },
    reject: { pod: pod('p', { tolerations: [{ key: 'x', operator: 'Exists' }] }), node: tainted(node('n'), { key: 'x', effect: 'NoExecute' }, { key: 'y', value: 'z', effect: 'NoSchedule' }) },
    why: /taint y=z:NoSchedule/,
  },

  // NodeResourcesFit
  {
    plugin: 'NodeResourcesFit',
    name: 'cpu beside the pods already on the node',
    pod: pod('p', { containers: [requests('1')] }),
    accept: { node: node('n'), pods: [on(pod('q', { containers: [requests('3')] }), 'n')] },
    reject: { node: node('n'), pods: [on(pod('q', { containers: [requests('3001m')] }), 'n')] },
    why: /insufficient cpu \(requests 1000m, 999m free of 4000m allocatable\)/,
  },
  {
    plugin: 'NodeResourcesFit',
    name: 'an init container larger than the app containers sets the request',
    pod: pod('p', { initContainers: [requests('3')], containers: [requests('1')] }),
    accept: { node: node('n', {}, { allocatable: { cpu: 3000, memory: 8192, pods: 110 } }) },
    reject: { node: node('n', {}, { allocatable: { cpu: 2999, memory: 8192, pods: 110 } }) },
    why: /insufficient cpu \(requests 3000m/,
  },
  {
    plugin: 'NodeResourcesFit',
    name: 'a sidecar runs beside the app and beside later init containers',
    // app 1000 + sidecar 500 = 1500; the init container after the sidecar needs 1200 + 500 = 1700.
    pod: pod('p', { initContainers: [{ restartPolicy: 'Always', ...requests('500m') }, requests('1200m')], containers: [requests('1')] }),
    accept: { node: node('n', {}, { allocatable: { cpu: 1700, memory: 8192, pods: 110 } }) },
    reject: { node: node('n', {}, { allocatable: { cpu: 1699, memory: 8192, pods: 110 } }) },
    why: /insufficient cpu \(requests 1700m/,
  },
  {
    plugin: 'NodeResourcesFit',
    name: 'pod overhead counts',
    pod: pod('p', { containers: [requests('1', '1Gi')], overhead: { memory: '512Mi' } }),
    accept: { node: node('n', {}, { allocatable: { cpu: 4000, memory: 1536, pods: 110 } }) },
    reject: { node: node('n', {}, { allocatable: { cpu: 4000, memory: 1535, pods: 110 } }) },
    why: /insufficient memory \(requests 1536Mi/,
  },
  {
    plugin: 'NodeResourcesFit',
    name: 'every pod takes one of the node’s pods',
    pod: pod('p'),
    accept: { node: node('n', {}, { allocatable: { cpu: 4000, memory: 8192, pods: 2 } }), pods: [on(pod('q'), 'n')] },
    reject: { node: node('n', {}, { allocatable: { cpu: 4000, memory: 8192, pods: 2 } }), pods: [on(pod('q'), 'n'), on(pod('r'), 'n')] },
    why: /insufficient pods/,
  },
  {
    plugin: 'NodeResourcesFit',
    name: 'an extended resource the node does not offer counts as zero',
    pod: pod('p', { containers: [{ resources: { limits: { 'nvidia.com/gpu': '1' } } }] }),
    accept: { node: node('n', {}, { allocatable: { cpu: 4000, memory: 8192, pods: 110, 'nvidia.com/gpu': 1 } }) },
    reject: { node: node('n') },
    why: /insufficient nvidia.com\/gpu/,
  },

  // NodePorts
  {
    plugin: 'NodePorts',
    name: 'a host port and protocol used on the node clash; another protocol does not',
    pod: pod('p', { containers: [{ ports: [{ hostPort: 8080 }] }] }),
    accept: { node: node('n'), pods: [on(pod('q', { containers: [{ ports: [{ hostPort: 8080, protocol: 'UDP' }] }] }), 'n')] },
    reject: { node: node('n'), pods: [on(pod('q', { containers: [{ ports: [{ hostPort: 8080, protocol: 'TCP' }] }] }), 'n')] },
    why: /host port TCP\/8080 is already used on the node by default\/q/,
  },
  {
    plugin: 'NodePorts',
    name: 'with hostNetwork a container port is a host port',
    pod: pod('p', { hostNetwork: true, containers: [{ ports: [{ containerPort: 8080 }] }] }),
    accept: { node: node('n'), pods: [on(pod('q', { containers: [{ ports: [{ containerPort: 8080 }] }] }), 'n')] },
    reject: { node: node('n'), pods: [on(pod('q', { hostNetwork: true, containers: [{ ports: [{ containerPort: 8080 }] }] }), 'n')] },
    why: /host port TCP\/8080 is already used on the node by default\/q/,
  },
  {
    plugin: 'NodePorts',
    name: 'a DaemonSet pod’s host port blocks its node only',
    pod: pod('p', { containers: [{ ports: [{ hostPort: 9100 }] }] }),
    accept: { node: node('n2'), pods: [on(pod('node-exporter-x', { containers: [{ ports: [{ hostPort: 9100 }] }] }, {}, 'monitoring'), 'n1')] },
    reject: { node: node('n1'), pods: [on(pod('node-exporter-x', { containers: [{ ports: [{ hostPort: 9100 }] }] }, {}, 'monitoring'), 'n1')] },
    why: /by monitoring\/node-exporter-x/,
  },
  {
    plugin: 'NodePorts',
    name: 'distinct host IPs do not clash, 0.0.0.0 clashes with any',
    pod: pod('p', { containers: [{ ports: [{ hostPort: 53, hostIP: '10.0.0.1' }] }] }),
    accept: { node: node('n'), pods: [on(pod('q', { containers: [{ ports: [{ hostPort: 53, hostIP: '127.0.0.1' }] }] }), 'n')] },
    reject: { node: node('n'), pods: [on(pod('q', { containers: [{ ports: [{ hostPort: 53 }] }] }), 'n')] },
    why: /host port TCP\/53/,
  },

  // InterPodAffinity
  {
    plugin: 'InterPodAffinity',
    name: 'pod affinity per hostname: next to a matching pod',
    pod: pod('p', { affinity: affinityTerm(HOST, { app: 'cache' }) }),
    accept: { node: a1, nodes: zonal, pods: [on(pod('cache', {}, { app: 'cache' }), 'a1')] },
    reject: { node: a2, nodes: zonal, pods: [on(pod('cache', {}, { app: 'cache' }), 'a1')] },
    why: /required pod affinity \(app=cache per kubernetes.io\/hostname\) is not met: no matching pod runs in kubernetes.io\/hostname=a2/,
  },
  {
    plugin: 'InterPodAffinity',
    name: 'pod affinity per zone: anywhere in the matching pod’s zone',
    pod: pod('p', { affinity: affinityTerm(ZONE, { app: 'cache' }) }),
    accept: { node: a2, nodes: zonal, pods: [on(pod('cache', {}, { app: 'cache' }), 'a1')] },
    reject: { node: b1, nodes: zonal, pods: [on(pod('cache', {}, { app: 'cache' }), 'a1')] },
    why: /no matching pod runs in topology.kubernetes.io\/zone=us-west-2b/,
  },
  {
    plugin: 'InterPodAffinity',
    name: 'the first pod of a self-affine group may start anywhere; a pod not matching its own term may not',
    pod: web('w0', { affinity: affinityTerm(ZONE, { app: 'web' }) }),
    accept: { node: b1, nodes: zonal, pods: [on(pod('other', {}, { app: 'db' }), 'a1')] },
    reject: { pod: pod('w0', { affinity: affinityTerm(ZONE, { app: 'web' }) }, { app: 'api' }), node: b1, nodes: zonal, pods: [on(pod('other', {}, { app: 'db' }), 'a1')] },
    why: /cannot be the first/,
  },
  {
    plugin: 'InterPodAffinity',
    name: 'once a self-affine group has a pod, the rest must join its domain',
    pod: web('w1', { affinity: affinityTerm(ZONE, { app: 'web' }) }),
    accept: { node: a2, nodes: zonal, pods: [on(web('w0'), 'a1')] },
    reject: { node: b1, nodes: zonal, pods: [on(web('w0'), 'a1')] },
    why: /no matching pod runs in topology.kubernetes.io\/zone=us-west-2b/,
  },
  {
    plugin: 'InterPodAffinity',
    name: 'a term selects pods in the pod’s own namespace unless it names others',
    pod: pod('p', { affinity: affinityTerm(HOST, { app: 'cache' }, { namespaces: ['infra'] }) }),
    accept: { node: a1, nodes: zonal, pods: [on(pod('cache', {}, { app: 'cache' }, 'infra'), 'a1')] },
    reject: { pod: pod('p', { affinity: affinityTerm(HOST, { app: 'cache' }) }), node: a1, nodes: zonal, pods: [on(pod('cache', {}, { app: 'cache' }, 'infra'), 'a1'), on(pod('c2', {}, { app: 'cache' }), 'b1')] },
    why: /no matching pod runs in kubernetes.io\/hostname=a1/,
  },
  {
    plugin: 'InterPodAffinity',
    name: 'an empty namespaceSelector selects every namespace',
    pod: pod('p', { affinity: antiTerm(HOST, { app: 'db' }, { namespaceSelector: {} }) }),
    accept: { node: b1, nodes: zonal, pods: [on(pod('db', {}, { app: 'db' }, 'data'), 'a1')] },
    reject: { node: a1, nodes: zonal, pods: [on(pod('db', {}, { app: 'db' }, 'data'), 'a1')] },
    why: /anti-affinity .* data\/db runs in kubernetes.io\/hostname=a1/,
  },
  {
    plugin: 'InterPodAffinity',
    name: 'anti-affinity per hostname: one matching pod per node',
    pod: web('w1', { affinity: antiTerm(HOST, { app: 'web' }) }),
    accept: { node: a2, nodes: zonal, pods: [on(web('w0'), 'a1')] },
    reject: { node: a1, nodes: zonal, pods: [on(web('w0'), 'a1')] },
    why: /required pod anti-affinity \(app=web per kubernetes.io\/hostname\) is broken: default\/w0 runs in kubernetes.io\/hostname=a1/,
  },
  {
    plugin: 'InterPodAffinity',
    name: 'anti-affinity per zone: no other node of the zone either',
    pod: web('w1', { affinity: antiTerm(ZONE, { app: 'web' }) }),
    accept: { node: b1, nodes: zonal, pods: [on(web('w0'), 'a1')] },
    reject: { node: a2, nodes: zonal, pods: [on(web('w0'), 'a1')] },
    why: /topology.kubernetes.io\/zone=us-west-2a/,
  },
  {
    plugin: 'InterPodAffinity',
    name: 'anti-affinity is symmetric: a bound pod’s term keeps matching pods out of its domain',
    pod: web('w1'),
    accept: { node: b1, nodes: zonal, pods: [on(pod('db', { affinity: antiTerm(ZONE, { app: 'web' }) }), 'a1')] },
    reject: { node: a2, nodes: zonal, pods: [on(pod('db', { affinity: antiTerm(ZONE, { app: 'web' }) }), 'a1')] },
    why: /the required pod anti-affinity of default\/db \(app=web per topology.kubernetes.io\/zone\) forbids topology.kubernetes.io\/zone=us-west-2a/,
  },
  {
    plugin: 'InterPodAffinity',
    name: 'anti-affinity matchLabelKeys narrows the selector to the pod’s own value',
    pod: web('w1', { affinity: antiTerm(HOST, { app: 'web' }, { matchLabelKeys: ['pod-template-hash'] }) }, { 'pod-template-hash': 'v2' }),
    accept: { node: a1, nodes: zonal, pods: [on(web('old', {}, { 'pod-template-hash': 'v1' }), 'a1')] },
    reject: { node: a1, nodes: zonal, pods: [on(web('new', {}, { 'pod-template-hash': 'v2' }), 'a1')] },
    why: /default\/new runs in kubernetes.io\/hostname=a1/,
  },
  {
    plugin: 'InterPodAffinity',
    name: 'pod affinity needs the topology label on the node',
    pod: pod('p', { affinity: affinityTerm('rack', { app: 'cache' }) }),
    accept: { node: node('r1', { rack: '1' }), nodes: [node('r1', { rack: '1' })], pods: [on(pod('cache', {}, { app: 'cache' }), 'r1')] },
    reject: { node: node('x'), nodes: [node('r1', { rack: '1' }), node('x')], pods: [on(pod('cache', {}, { app: 'cache' }), 'r1')] },
    why: /the node has no rack label, which required pod affinity/,
  },

  // PodTopologySpread
  {
    plugin: 'PodTopologySpread',
    name: 'maxSkew 1 over zones',
    pod: web('w2', spread(1)),
    accept: { node: b1, nodes: zonal, pods: [on(web('w0'), 'a1'), on(web('w1'), 'c1')] },
    reject: { node: a2, nodes: zonal, pods: [on(web('w0'), 'a1'), on(web('w1'), 'c1')] },
    why: /topology spread on topology.kubernetes.io\/zone \(maxSkew 1\) is broken: topology.kubernetes.io\/zone=us-west-2a would hold 2 matching pod\(s\) against a global minimum of 0 over 3 eligible domain\(s\), skew 2/,
  },
  {
    plugin: 'PodTopologySpread',
    name: 'maxSkew 2 allows a domain two ahead, not three',
    pod: web('w3', spread(2)),
    accept: { node: a2, nodes: zonal, pods: [on(web('w0'), 'a1')] },
    reject: { node: a2, nodes: zonal, pods: [on(web('w0'), 'a1'), on(web('w1'), 'a2')] },
    why: /skew 3/,
  },
  {
    plugin: 'PodTopologySpread',
    name: 'fewer eligible domains than minDomains make the global minimum 0',
    pod: web('w2', spread(1, { minDomains: 2 })),
    accept: { node: a2, nodes: [a1, a2, b1], pods: [on(web('w0'), 'a1'), on(web('w1'), 'b1')] },
    reject: { pod: web('w2', spread(1, { minDomains: 3 })), node: a2, nodes: [a1, a2, b1], pods: [on(web('w0'), 'a1'), on(web('w1'), 'b1')] },
    why: /global minimum of 0 over 2 eligible domain\(s\) \(fewer than minDomains 3\)/,
  },
  {
    plugin: 'PodTopologySpread',
    name: 'nodeAffinityPolicy Honor (default) leaves out domains the pod cannot use; Ignore counts them',
    pod: web('w1', { nodeSelector: { pool: 'x' }, ...spread(1) }),
    accept: { node: inZone('a2', 'us-west-2a', { pool: 'x' }), nodes: [inZone('a1', 'us-west-2a', { pool: 'x' }), inZone('a2', 'us-west-2a', { pool: 'x' }), inZone('b1', 'us-west-2b', { pool: 'y' })], pods: [on(web('w0'), 'a1')] },
    reject: {
      pod: web('w1', { nodeSelector: { pool: 'x' }, ...spread(1, { nodeAffinityPolicy: 'Ignore' }) }),
      node: inZone('a2', 'us-west-2a', { pool: 'x' }),
      nodes: [inZone('a1', 'us-west-2a', { pool: 'x' }), inZone('a2', 'us-west-2a', { pool: 'x' }), inZone('b1', 'us-west-2b', { pool: 'y' })],
      pods: [on(web('w0'), 'a1')],
    },
    why: /global minimum of 0 over 2 eligible domain/,
  },
  {
    plugin: 'PodTopologySpread',
    name: 'nodeTaintsPolicy Honor leaves out domains whose nodes the pod does not tolerate (default Ignore counts them)',
    pod: web('w1', spread(1, { nodeTaintsPolicy: 'Honor' })),
    accept: { node: a2, nodes: [a1, a2, tainted(b1, { key: 'gpu', effect: 'NoSchedule' })], pods: [on(web('w0'), 'a1')] },
    reject: { pod: web('w1', spread(1)), node: a2, nodes: [a1, a2, tainted(b1, { key: 'gpu', effect: 'NoSchedule' })], pods: [on(web('w0'), 'a1')] },
    why: /global minimum of 0 over 2 eligible domain/,
  },
  {
    plugin: 'PodTopologySpread',
    name: 'matchLabelKeys counts only pods with the pod’s own value',
    pod: web('w1', spread(1, { matchLabelKeys: ['pod-template-hash'] }), { 'pod-template-hash': 'v2' }),
    accept: { node: a2, nodes: [a1, a2, b1], pods: [on(web('old', {}, { 'pod-template-hash': 'v1' }), 'a1')] },
    reject: { node: a2, nodes: [a1, a2, b1], pods: [on(web('new', {}, { 'pod-template-hash': 'v2' }), 'a1')] },
    why: /skew 2/,
  },
  {
    plugin: 'PodTopologySpread',
    name: 'a node without the topology key cannot take the pod',
    pod: web('w0', spread(1)),
    accept: { node: a1, nodes: [a1, node('bare')] },
    reject: { node: node('bare'), nodes: [a1, node('bare')] },
    why: /the node has no topology.kubernetes.io\/zone label, which topology spread \(DoNotSchedule\) needs/,
  },
  {
    plugin: 'PodTopologySpread',
    name: 'only pods of the pod’s namespace count',
    pod: web('w1', spread(1)),
    accept: { node: a2, nodes: [a1, a2, b1], pods: [on(pod('w0', {}, { app: 'web' }, 'staging'), 'a1')] },
    reject: { node: a2, nodes: [a1, a2, b1], pods: [on(web('w0'), 'a1')] },
    why: /skew 2/,
  },
];

// ---- tests ----------------------------------------------------------------------------------------------------

describe('placement-check', () => {
  describe('placementProblem', () => {
    it('has at least 30 cases, each plugin covered', () => {
      expect(CASES.length).toBeGreaterThanOrEqual(30);
      expect(new Set(CASES.map((c) => c.plugin))).toEqual(new Set(['NodeAffinity', 'TaintToleration', 'NodeResourcesFit', 'NodePorts', 'InterPodAffinity', 'PodTopologySpread']));
    });

    describe.each(CASES.map((c) => [`${c.plugin}: ${c.name}`, c] as const))('%s', (_, c) => {
      it('accepts the satisfying placement', () => {
        expect(check(c, c.accept)).toBeUndefined();
      });
      it('rejects the breaking placement, naming the constraint', () => {
        expect(check(c, c.reject)).toMatch(c.why);
      });
    });

    it('skips the pod itself when it is already listed as bound (as the observer sees it after the bind)', () => {
      const p = web('w0', { affinity: antiTerm(HOST, { app: 'web' }), containers: [requests('4')] });
      expect(placementProblem({ pod: p, node: a1, nodes: zonal, pods: [on(p, 'a1')] })).toBeUndefined();
    });

    it('does not filter on ScheduleAnyway spread', () => {
      const p = web('w2', { topologySpreadConstraints: [{ maxSkew: 1, topologyKey: ZONE, whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { app: 'web' } } }] });
      expect(placementProblem({ pod: p, node: a2, nodes: zonal, pods: [on(web('w0'), 'a1'), on(web('w1'), 'a1')] })).toBeUndefined();
    });
  });

  describe('podEffectiveRequests', () => {
    it('converts to canonical units and adds one pod', () => {
      expect(podEffectiveRequests(pod('p', { containers: [{ resources: { requests: { cpu: '1.5', memory: '1Gi', 'ephemeral-storage': '2Gi' } } }] }).spec)).toEqual({
        pods: 1,
        cpu: 1500,
        memory: 1024,
        'ephemeral-storage': 2048,
      });
    });

    it('takes the limit as the request when only a limit is set, and rounds cpu up to a millicore per pod', () => {
      expect(podEffectiveRequests(pod('p', { containers: [{ resources: { limits: { cpu: '250m' } } }, { resources: { requests: { cpu: '0.0001' } } }] }).spec).cpu).toBe(251);
    });
  });

  describe('toleratesTaint', () => {
    const taint: Taint = { key: 'k', value: 'v', effect: 'NoSchedule' };
    it.each([
      [{ key: 'k', operator: 'Equal', value: 'v' }, true],
      [{ key: 'k', operator: 'Equal', value: 'w' }, false],
      [{ key: 'k', value: 'v' }, true],
      [{ key: 'k', operator: 'Exists' }, true],
      [{ key: 'k', operator: 'Exists', effect: 'NoExecute' }, false],
      [{ key: 'other', operator: 'Exists' }, false],
      [{ operator: 'Exists' }, true],
      [{ operator: 'Exists', effect: 'NoSchedule' }, true],
    ] as const)('%j → %s', (toleration, expected) => {
      expect(toleratesTaint(toleration, taint)).toBe(expected);
    });
  });

  describe('hostPortsOf', () => {
    it('lists app and init container host ports with protocol and host IP defaults, skipping port 0', () => {
      const spec = pod('p', { initContainers: [{ ports: [{ hostPort: 81, protocol: 'UDP' }] }], containers: [{ ports: [{ hostPort: 80 }, { hostPort: 0 }] }] }).spec;
      expect(hostPortsOf(spec)).toEqual([
        { protocol: 'TCP', port: 80, hostIP: '0.0.0.0' },
        { protocol: 'UDP', port: 81, hostIP: '0.0.0.0' },
      ]);
    });
  });

  it('imports nothing from the solver (shared/core/scheduling, shared/core/provisioning)', () => {
    const source = readFileSync(new URL('../../shared/sim/placement-check.ts', import.meta.url), 'utf8');
    const specifiers = [...source.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+'([^']+)'/gms)].map((m) => m[1]!);
    expect(specifiers.length).toBeGreaterThan(0);
    expect(specifiers.filter((s) => /core\/(scheduling|provisioning)\//.test(s))).toEqual([]);
  });
});
