/**
 * Builders for the disruption controller's view of a cluster (`World`) and a method context over it, so a disruption
 * method can be tested directly: NodePools, an EC2NodeClass, launched NodeClaims with their Nodes, pods bound to them.
 * Defaults are small and explicit: each test states only what matters to it.
 */
import { LABEL_CAPACITY_TYPE, LABEL_INITIALIZED, LABEL_INSTANCE_TYPE, LABEL_NODEPOOL, LABEL_ZONE } from '../../shared/core/api/labels.js';
import type { NodeClaim } from '../../shared/core/api/nodeclaim.js';
import { nodePoolSchema, type NodePool } from '../../shared/core/api/nodepool.js';
import { pdbSchema, type PodDisruptionBudget } from '../../shared/core/api/pdb.js';
import { pdbAllowances } from '../../shared/core/disruption/pdb.js';
import type { InstanceType } from '../../shared/core/instancetypes/offering.js';
import { BudgetLedger } from '../../shared/controllers/disruption/budget-ledger.js';
import type { DisruptionNodeClass } from '../../shared/controllers/disruption/deps.js';
import { DisruptionMemory } from '../../shared/controllers/disruption/memory.js';
import type { MethodContext, MethodSink } from '../../shared/controllers/disruption/methods/context.js';
import type { World } from '../../shared/controllers/disruption/world.js';
import { nodeClaimExtras } from '../../shared/controllers/nodeclaim-extras.js';
import type { ClusterNode, ClusterPod } from '../../shared/ports/cluster.js';

/** 2025-06-01T12:00:00Z: "now" of every world unless a test says otherwise. */
export const NOW = Date.parse('2025-06-01T12:00:00Z');
const HOUR = 60 * 60 * 1000;

/** A NodePool over the `default` EC2NodeClass; `disruption` and `template` patch its spec. */
export function nodePool(
  name: string,
  opts: {
    consolidationPolicy?: 'WhenEmpty' | 'WhenEmptyOrUnderutilized';
    consolidateAfter?: string;
    budgets?: { nodes: string; reasons?: ('Empty' | 'Underutilized' | 'Drifted')[]; schedule?: string; duration?: string }[];
    requirements?: { key: string; operator: 'In' | 'NotIn' | 'Exists'; values?: string[] }[];
    labels?: Record<string, string>;
    weight?: number;
  } = {},
): NodePool {
  return nodePoolSchema.parse({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      ...(opts.weight !== undefined ? { weight: opts.weight } : {}),
      disruption: {
        consolidationPolicy: opts.consolidationPolicy ?? 'WhenEmptyOrUnderutilized',
        consolidateAfter: opts.consolidateAfter ?? '0s',
        ...(opts.budgets ? { budgets: opts.budgets } : {}),
      },
      template: {
        ...(opts.labels ? { metadata: { labels: opts.labels } } : {}),
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: opts.requirements ?? [],
        },
      },
    },
  });
}

/** The `default` EC2NodeClass (AL2023). */
export function nodeClass(spec: Record<string, unknown> = {}): DisruptionNodeClass {
  return { metadata: { name: 'default' }, spec: { amiSelectorTerms: [{ alias: 'al2023@latest' }], ...spec } };
}

/** A launched, initialized NodeClaim and its Ready Node, in `pool`, of `type` (an instance type of the world). */
export function launched(
  name: string,
  pool: NodePool,
  type: InstanceType,
  opts: {
    capacityType?: 'on-demand' | 'spot';
    zone?: string;
    /** Hours before {@link NOW} it initialized (default 2). */
    ageHours?: number;
    nodeAnnotations?: Record<string, string>;
    /** Record fields to set or override (a drifted hash, a disruption, expireAfterSeconds …). */
    claim?: Partial<NodeClaim>;
  } = {},
): { claim: NodeClaim; node: ClusterNode } {
  const capacityType = opts.capacityType ?? 'on-demand';
  const zone = opts.zone ?? 'us-west-2a';
  const offering = type.offerings.find((o) => o.zone === zone && o.capacityType === capacityType)!;
  const at = new Date(NOW - (opts.ageHours ?? 2) * HOUR).toISOString();
  const providerId = `aws:///${zone}/i-${name}`;
  const labels = { ...type.labels, ...(pool.spec.template.metadata?.labels ?? {}), [LABEL_NODEPOOL]: pool.metadata.name, [LABEL_INSTANCE_TYPE]: type.name, [LABEL_ZONE]: zone, [LABEL_CAPACITY_TYPE]: capacityType };
  const claim: NodeClaim = {
    name,
    nodePool: pool.metadata.name,
    nodeClass: 'default',
    state: 'Initialized',
    requirements: [],
    instanceTypes: [type.name],
    resources: {},
    labels,
    taints: [],
    startupTaints: [],
    nominatedPods: [],
    instanceId: `i-${name}`,
    providerId,
    nodeName: name,
    instanceType: type.name,
    zone,
    capacityType,
    price: offering.price,
    allocatable: type.allocatable,
    createdAt: at,
    launchedAt: at,
    registeredAt: at,
    initializedAt: at,
    ...nodeClaimExtras(pool, nodeClass()),
    expireAfterSeconds: null,
    version: 1,
    ...opts.claim,
  };
  const node: ClusterNode = {
    name,
    providerId,
    labels: { ...labels, [LABEL_INITIALIZED]: 'true' },
    annotations: opts.nodeAnnotations ?? {},
    taints: [],
    allocatable: type.allocatable,
    ready: true,
    createdAt: Date.parse(at),
  };
  return { claim, node };
}

/** A Running pod bound to `nodeName`, requesting `cpu` and `memory` (Kubernetes quantities), owned by a ReplicaSet. */
export function runningPod(
  name: string,
  nodeName: string,
  opts: { cpu?: string; memory?: string; annotations?: Record<string, string>; labels?: Record<string, string>; owner?: string; priority?: number } = {},
): ClusterPod {
  return {
    namespace: 'default',
    name,
    uid: `uid-${name}`,
    resourceVersion: '1',
    labels: opts.labels ?? { app: name },
    annotations: opts.annotations ?? {},
    spec: {
      containers: [{ name: 'main', resources: { requests: { cpu: opts.cpu ?? '100m', memory: opts.memory ?? '128Mi' } } }],
      ...(opts.priority !== undefined ? { priority: opts.priority } : {}),
    },
    nodeName,
    phase: 'Running',
    unschedulable: false,
    owner: opts.owner ?? `ReplicaSet/${name}`,
    createdAt: NOW - 3 * HOUR,
  };
}

/** A PodDisruptionBudget in `default` selecting `app: <app>` with `maxUnavailable`. */
export function pdb(name: string, app: string, maxUnavailable: number): PodDisruptionBudget {
  return pdbSchema.parse({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name, namespace: 'default' }, spec: { maxUnavailable, selector: { matchLabels: { app } } } });
}

/** The world a pass would read: `types` are the `default` EC2NodeClass's instance types. */
export function world(parts: {
  pools: readonly NodePool[];
  types: readonly InstanceType[];
  launched: readonly { claim: NodeClaim; node: ClusterNode }[];
  pods?: readonly ClusterPod[];
  pdbs?: readonly PodDisruptionBudget[];
  now?: number;
}): World {
  const pods = parts.pods ?? [];
  const nodes = parts.launched.map((l) => l.node);
  const podsByNode = new Map<string, ClusterPod[]>();
  for (const p of pods) if (p.nodeName) podsByNode.set(p.nodeName, [...(podsByNode.get(p.nodeName) ?? []), p]);
  return {
    now: parts.now ?? NOW,
    pools: new Map(parts.pools.map((p) => [p.metadata.name, p])),
    classes: new Map([['default', nodeClass()]]),
    daemonSets: [],
    pods,
    nodes,
    podsByNode,
    claims: parts.launched.map((l) => l.claim),
    pdbs: pdbAllowances(
      parts.pdbs ?? [],
      pods.map((p) => ({ namespace: p.namespace, name: p.name, labels: p.labels, healthy: p.phase === 'Running' })),
    ),
    types: new Map([['default', parts.types]]),
    unavailableKey: '',
  };
}

/** What a method reported through its sink, in order. */
export interface Reported {
  readonly skipped: { nodeClaim: string; reason: string }[];
  readonly budgetBlocked: { nodePool: string; reason: string }[];
  readonly blocked: { nodeClaim: string; node: string; reason: string }[];
  readonly unconsolidatable: { nodeClaim: string; node: string; reason: string }[];
}

/** A method context over `w` with a fresh budget ledger and memory, and a sink recording into `reported`. */
export function methodContext(w: World, opts: { spotToSpot?: boolean; region?: string } = {}): { ctx: MethodContext; reported: Reported } {
  const reported: Reported = { skipped: [], budgetBlocked: [], blocked: [], unconsolidatable: [] };
  const sink: MethodSink = {
    skipped: (nodeClaim, reason) => void reported.skipped.push({ nodeClaim, reason }),
    budgetBlocked: (nodePool, reason) => void reported.budgetBlocked.push({ nodePool, reason }),
    blocked: (nodeClaim, node, reason) => void reported.blocked.push({ nodeClaim, node, reason }),
    unconsolidatable: (nodeClaim, node, reason) => void reported.unconsolidatable.push({ nodeClaim, node, reason }),
  };
  const memory = new DisruptionMemory();
  return { ctx: { world: w, ledger: new BudgetLedger(w, memory), region: opts.region ?? 'us-west-2', spotToSpot: opts.spotToSpot ?? false, memory, sink }, reported };
}
