/**
 * `skiff simulate`: the local composition root. Loads a scenario, starts an embedded DynamoDB (dynalite) for the
 * real DynamoDB adapters, wires the real provisioner, lifecycle, disruption and interruption handlers and controllers to the simulated cloud
 * and cluster, runs the simulation and validates the Result against the contract schema.
 */
import { createHandler as createDisruptionHandler } from '../../functions/disruption/handler.js';
import { createHandler as createInterruptionHandler } from '../../functions/interruption/handler.js';
import { createHandler as createLifecycleHandler } from '../../functions/lifecycle/handler.js';
import { createHandler } from '../../functions/provisioner/handler.js';
import { DynamoDbNodeClaimStore } from '../adapters/aws/dynamodb-nodeclaim-store.js';
import { DynamoDbLeaseStore } from '../adapters/aws/lease-store.js';
import { DynamoDbProvisioningPassStore } from '../adapters/aws/provisioning-pass-store.js';
import { DynamoDbUnavailableOfferingsStore } from '../adapters/aws/unavailable-offerings-store.js';
import { disrupt } from '../controllers/disruption/disrupt.js';
import { handleInterruption } from '../controllers/interruption.js';
import { reconcileLifecycle } from '../controllers/lifecycle.js';
import { provision } from '../controllers/provision.js';
import { loadCatalog } from '../core/instancetypes/catalog.js';
import { silentLog, type Log } from '../lambda/log.js';
import { SIMULATED_CLUSTER_NAME, runSimulation, type SimulationDeps, type SimulationProbe } from '../sim/engine.js';
import type { ViolationRecord } from '../sim/observer.js';
import type { SimulationResult } from '../sim/result.js';
import { ResultSchema } from '../sim/result-schema.js';
import { loadScenario, type LoadedScenario, type ScenarioOverrides } from '../sim/scenario-loader.js';
import { startDynalite } from './local-dynamodb.js';
import type { ConsolidationSetting } from '../controllers/disruption/deps.js';
import type { ProvisioningSetting } from '../controllers/provision.js';

/** Options of {@link simulateScenario}. */
export interface SimulateOptions {
  /** Seed for generated names and faults. @default 1 */
  readonly seed?: number;
  /** Wall-clock now, epoch ms: the start of a scenario without `spec.start`. @default Date.now() */
  readonly now?: number;
  /** `--start`, `--duration`, `--region`: override the Scenario document's fields. @default none */
  readonly overrides?: ScenarioOverrides;
  /**
   * Called as virtual time advances with the fraction of the scenario's duration simulated so far (0–1), at most
   * about 200 times a run and at least one virtual minute apart, then once with 1 at the end.
   * @default none (the engine schedules no progress events)
   */
  readonly onProgress?: (fraction: number) => void;
  /** Where the handlers log. @default silent */
  readonly log?: Log;
  /** Called with each violation the observer counts, as it happens (debugging and property tests). @default none */
  readonly onViolation?: (record: ViolationRecord) => void;
  /** Watches the fleet as the run goes (the cost-over-time benchmark); the Result is the same with or without it. @default none */
  readonly probe?: SimulationProbe;
  /**
   * Which consolidation moves the disruption controller makes: `skiff` — Karpenter's, then Skiff's repack and split
   * moves; `karpenter` — Karpenter's moves only, the baseline Skiff is measured against (`DisruptionDeps.consolidation`).
   * A setting of the run, not of the Scenario. @default 'skiff'
   */
  readonly consolidation?: ConsolidationSetting;
  /**
   * How the provisioner plans: `skiff` — plans that survive kube-scheduler's binding; `karpenter` — Karpenter's own
   * placement only, with consolidation `karpenter` the whole Karpenter-like baseline (`ProvisionDeps.bindingReplay`).
   * A setting of the run, not of the Scenario. @default 'skiff'
   */
  readonly provisioning?: ProvisioningSetting;
  /** One deterministic crash of a handler after its n-th side effect (crash-safety tests). @default none */
  readonly crashAfter?: SimulationDeps['crashAfter'];
  /** Called with each fault injected (`spec.faults`, a `crashAfter`), as it happens. @default none */
  readonly onFault?: SimulationDeps['onFault'];
  /** Called with each side effect a handler makes (crash-safety tests). @default none */
  readonly onSideEffect?: SimulationDeps['onSideEffect'];
  /** Called once at the end with the live Nodes and the NodeClaim records (tests of what a run leaves behind). @default none */
  readonly onEnd?: SimulationDeps['onEnd'];
}

/**
 * Loads and simulates a scenario folder or file.
 * @returns the loaded scenario and the validated Result
 * @throws {ValidationError} when a manifest or the scenario is invalid (nothing is simulated)
 * @example const { result } = await simulateScenario('examples/seed', { seed: 1 });
 */
export async function simulateScenario(path: string, options: SimulateOptions = {}): Promise<{ scenario: LoadedScenario; result: SimulationResult }> {
  const scenario = await loadScenario(path, { now: options.now ?? Date.now(), ...(options.overrides ? { overrides: options.overrides } : {}) });
  const db = await startDynalite();
  try {
    const props = { client: db.client, tableName: db.tableName, cluster: SIMULATED_CLUSTER_NAME };
    // The periodic handlers take their DynamoDB lease when invocations can overlap (spec.faults.concurrentInvocations
    // > 1); one invocation at a time never finds it held, and the two writes per pass would dominate long runs.
    const overlapping = scenario.spec.faults.concurrentInvocations > 1;
    const result = await runSimulation(scenario, options.seed ?? 1, {
      ...(options.consolidation ? { consolidation: options.consolidation } : {}),
      ...(options.provisioning ? { provisioning: options.provisioning } : {}),
      store: new DynamoDbNodeClaimStore(props),
      unavailableOfferings: new DynamoDbUnavailableOfferingsStore(props),
      passes: new DynamoDbProvisioningPassStore(props),
      catalog: loadCatalog(),
      createProvisionerHandler: (deps) => createHandler({ provision: (trigger) => provision(deps, trigger), log: options.log ?? silentLog }),
      createLifecycleHandler: (deps) => {
        let invocation = 0;
        return createLifecycleHandler({
          reconcile: () => reconcileLifecycle(deps),
          log: options.log ?? silentLog,
          ...(overlapping ? { lease: { leases: new DynamoDbLeaseStore(props), clock: deps.clock, ttlSeconds: 5 * 60, holder: () => `sim-lifecycle-${++invocation}` } } : {}),
        });
      },
      createDisruptionHandler: (deps, followUps) => {
        let invocation = 0;
        return createDisruptionHandler({
          disrupt: () => disrupt(deps),
          followUps: { passes: followUps, clock: deps.clock },
          log: options.log ?? silentLog,
          ...(overlapping ? { lease: { leases: new DynamoDbLeaseStore(props), clock: deps.clock, ttlSeconds: 15 * 60, holder: () => `sim-disruption-${++invocation}` } } : {}),
        });
      },
      createInterruptionHandler: (deps) =>
        createInterruptionHandler({ handle: (message) => handleInterruption({ ...deps, provision: () => provision(deps) }, message), log: options.log ?? silentLog }),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(options.onViolation ? { onViolation: options.onViolation } : {}),
      ...(options.probe ? { probe: options.probe } : {}),
      ...(options.crashAfter ? { crashAfter: options.crashAfter } : {}),
      ...(options.onSideEffect ? { onSideEffect: options.onSideEffect } : {}),
      ...(options.onFault ? { onFault: options.onFault } : {}),
      ...(options.onEnd ? { onEnd: options.onEnd } : {}),
    });
    ResultSchema.parse(result);
    return { scenario, result };
  } finally {
    await db.close();
  }
}
