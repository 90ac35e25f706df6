// The lifecycle lease in the simulation: the real lifecycle handler with a DynamoDB lease on dynalite, under
// overlapping invocations and crashes (spec.faults). The composition mirrors shared/cli/simulate.ts plus the lease.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHandler as createLifecycleHandler, type LifecycleHandlerResult } from '../../functions/lifecycle/handler.js';
import { createHandler as createProvisionerHandler } from '../../functions/provisioner/handler.js';
import { DynamoDbNodeClaimStore } from '../../shared/adapters/aws/dynamodb-nodeclaim-store.js';
import { DynamoDbLeaseStore } from '../../shared/adapters/aws/lease-store.js';
import { DynamoDbProvisioningPassStore } from '../../shared/adapters/aws/provisioning-pass-store.js';
import { DynamoDbUnavailableOfferingsStore } from '../../shared/adapters/aws/unavailable-offerings-store.js';
import { startDynalite } from '../../shared/cli/local-dynamodb.js';
import { reconcileLifecycle } from '../../shared/controllers/lifecycle.js';
import { provision } from '../../shared/controllers/provision.js';
import { loadCatalog } from '../../shared/core/instancetypes/catalog.js';
import { silentLog } from '../../shared/lambda/log.js';
import { SIMULATED_CLUSTER_NAME, runSimulation } from '../../shared/sim/engine.js';
import { loadScenario } from '../../shared/sim/scenario-loader.js';
import { deploymentYaml as deployment, GENERAL_POOL } from '../support/provisioner-harness.js';

const SCENARIO = `
apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: lease}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: 30m
  region: us-west-2
  events:
    - {at: 10m, scale: {kind: Deployment, namespace: default, name: web, replicas: 20}}
  faults: {concurrentInvocations: 3, crashAfterSideEffect: 0.05}
`;

describe('the lifecycle lease in the simulation', () => {
  it('lets one of each set of overlapping lifecycle invocations run, the others back off, and the run stays correct', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-lease-'));
    writeFileSync(join(dir, 'scenario.yaml'), [GENERAL_POOL, deployment('web', 8), SCENARIO].map((d) => d.trim()).join('\n---\n'));
    const loaded = await loadScenario(dir, { now: Date.now() });
    const db = await startDynalite();
    const outcomes: LifecycleHandlerResult[] = [];
    try {
      const props = { client: db.client, tableName: db.tableName, cluster: SIMULATED_CLUSTER_NAME };
      const leases = new DynamoDbLeaseStore(props);
      const result = await runSimulation(loaded, 3, {
        store: new DynamoDbNodeClaimStore(props),
        unavailableOfferings: new DynamoDbUnavailableOfferingsStore(props),
        passes: new DynamoDbProvisioningPassStore(props),
        catalog: loadCatalog(),
        createProvisionerHandler: (deps) => createProvisionerHandler({ provision: (trigger) => provision(deps, trigger), log: silentLog }),
        createLifecycleHandler: (deps) => {
          const handler = createLifecycleHandler({ reconcile: () => reconcileLifecycle(deps), log: silentLog, lease: { leases, clock: deps.clock, ttlSeconds: 60 } });
          return async (event) => {
            const outcome = await handler(event);
            outcomes.push(outcome);
            return outcome;
          };
        },
      });
      expect(result.violations).toMatchObject({ duplicateLaunches: 0, leakedInstances: 0, placement: 0, churn: 0, evictionLoops: 0 });
      expect(result.unschedulable).toEqual([]);
      const ran = outcomes.filter((o) => o.report !== undefined).length;
      const backedOff = outcomes.filter((o) => o.backedOff).length;
      expect(ran).toBeGreaterThan(30); // at least every scheduled minute
      expect(backedOff).toBeGreaterThan(0);
      // Every live pod ends on a node, so the lifecycle passes that ran registered and initialized every node.
      expect(result.pods.filter((p) => p.deletedAt === null).every((p) => p.node !== null)).toBe(true);
    } finally {
      await db.close();
    }
  });
});
