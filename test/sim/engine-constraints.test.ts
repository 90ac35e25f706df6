import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHandler as createLifecycleHandler } from '../../functions/lifecycle/handler.js';
import { createHandler } from '../../functions/provisioner/handler.js';
import { DynamoDbNodeClaimStore } from '../../shared/adapters/aws/dynamodb-nodeclaim-store.js';
import { DynamoDbProvisioningPassStore } from '../../shared/adapters/aws/provisioning-pass-store.js';
import { DynamoDbUnavailableOfferingsStore } from '../../shared/adapters/aws/unavailable-offerings-store.js';
import { startDynalite } from '../../shared/cli/local-dynamodb.js';
import { reconcileLifecycle } from '../../shared/controllers/lifecycle.js';
import { provision } from '../../shared/controllers/provision.js';
import { loadCatalog } from '../../shared/core/instancetypes/catalog.js';
import { silentLog } from '../../shared/lambda/log.js';
import { SIMULATED_CLUSTER_NAME, runSimulation } from '../../shared/sim/engine.js';
import type { ViolationRecord } from '../../shared/sim/observer.js';
import type { SimulationResult } from '../../shared/sim/result.js';
import { ResultSchema } from '../../shared/sim/result-schema.js';
import { loadScenario } from '../../shared/sim/scenario-loader.js';
import { GENERAL_POOL } from '../support/provisioner-harness.js';

/** Runs a scenario as `skiff simulate` does, also collecting the observer's violation records. */
async function run(...docs: string[]): Promise<{ result: SimulationResult; records: ViolationRecord[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-constraints-'));
  writeFileSync(join(dir, 'scenario.yaml'), docs.map((d) => d.trim()).join('\n---\n'));
  const scenario = await loadScenario(dir, { now: Date.parse('2026-03-02T08:00:00Z') });
  const db = await startDynalite();
  const records: ViolationRecord[] = [];
  try {
    const props = { client: db.client, tableName: db.tableName, cluster: SIMULATED_CLUSTER_NAME };
    const result = await runSimulation(scenario, 3, {
      store: new DynamoDbNodeClaimStore(props),
      unavailableOfferings: new DynamoDbUnavailableOfferingsStore(props),
      passes: new DynamoDbProvisioningPassStore(props),
      catalog: loadCatalog(),
      createProvisionerHandler: (deps) => createHandler({ provision: (trigger) => provision(deps, trigger), log: silentLog }),
      createLifecycleHandler: (deps) => createLifecycleHandler({ reconcile: () => reconcileLifecycle(deps), log: silentLog }),
      onViolation: (r) => records.push(r),
    });
    ResultSchema.parse(result);
    return { result, records };
  } finally {
    await db.close();
  }
}

const scenario = (body = '') => `
apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: constraints}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: 2h
  region: us-west-2
${body}`;

/** A Deployment whose pods need one node each (hostname anti-affinity) spread over zones (DoNotSchedule). */
const SPREAD_WEB = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            - {labelSelector: {matchLabels: {app: web}}, topologyKey: kubernetes.io/hostname}
      topologySpreadConstraints:
        - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}
      containers: [{name: app, image: nginx, resources: {requests: {cpu: 250m, memory: 256Mi}}}]
`;

/** A binding the observer saw (launch checks of the solver's plan start with "NodeClaim"). */
const bindingRecords = (records: readonly ViolationRecord[]) => records.filter((r) => r.kind === 'placement' && !r.message.startsWith('NodeClaim '));

describe('simulation engine with pod anti-affinity and topology spread', () => {
  it('binds the pods one per node, and every binding satisfies the anti-affinity and the zone spread', async () => {
    const { result, records } = await run(GENERAL_POOL, SPREAD_WEB, scenario());
    expect(result.events.filter((e) => e.reason === 'ConstraintNotSimulated')).toEqual([]);
    expect(bindingRecords(records)).toEqual([]);
    // Whatever the solver launched (it is being taught these constraints separately), kube-scheduler never doubles up.
    const bound = result.pods.filter((p) => p.owner?.startsWith('ReplicaSet/web-') && p.node !== null);
    expect(new Set(bound.map((p) => p.node)).size).toBe(bound.length);
    // The launch checks of the solver's decisions are the only other placement violations counted.
    expect(result.violations.placement).toBe(records.filter((r) => r.kind === 'placement').length);
  });

  it('binds onto pre-existing nodes one per node and leaves the pod with no allowed node pending', async () => {
    const nodes = `  nodes:
    - {name: a1, instanceType: m5.large, zone: us-west-2a, capacityType: on-demand, nodePool: general}
    - {name: a2, instanceType: m5.large, zone: us-west-2a, capacityType: on-demand, nodePool: general}
    - {name: b1, instanceType: m5.large, zone: us-west-2b, capacityType: on-demand, nodePool: general}`;
    const limited = GENERAL_POOL.replace('  template:', '  limits: {cpu: "0"}\n  template:');
    const { result, records } = await run(limited, SPREAD_WEB, scenario(nodes));
    expect(bindingRecords(records)).toEqual([]);
    // a1 first (ties by name), then zone b (a second pod in zone a would make the skew 2), then a2; the fourth
    // pod has no node left without a web pod, and the NodePool's limit launches nothing.
    expect(result.pods.filter((p) => p.node !== null).map((p) => p.node).sort()).toEqual(['a1', 'a2', 'b1']);
    expect(result.unschedulable).toHaveLength(1);
  });

  it('counts a deliberately broken binding: a pod pinned with spec.nodeName next to a pod whose anti-affinity forbids it', async () => {
    const nodes = `  nodes:
    - {name: a1, instanceType: m5.large, zone: us-west-2a, capacityType: on-demand, nodePool: general}
    - {name: b1, instanceType: m5.large, zone: us-west-2b, capacityType: on-demand, nodePool: general}
  events:
    - at: 10m
      apply: {apiVersion: v1, kind: Pod, metadata: {name: intruder, labels: {app: web}}, spec: {nodeName: a1, containers: [{name: app, image: nginx, resources: {requests: {cpu: 100m}}}]}}`;
    const two = SPREAD_WEB.replace('replicas: 4', 'replicas: 2');
    const { result, records } = await run(GENERAL_POOL, two, scenario(nodes));
    expect(result.pods.find((p) => p.name === 'intruder')?.node).toBe('a1');
    expect(bindingRecords(records)).toEqual([
      expect.objectContaining({ at: Date.parse('2026-03-02T08:10:00Z'), message: expect.stringMatching(/^default\/intruder on a1: the required pod anti-affinity of default\/web-.* \(app=web per kubernetes.io\/hostname\) forbids kubernetes.io\/hostname=a1$/) }),
    ]);
    expect(result.violations.placement).toBeGreaterThanOrEqual(1);
  });
});
