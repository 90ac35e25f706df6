/**
 * The simulation engine: runs a scenario on a virtual clock through the same handlers and controllers that run
 * on AWS, with simulated EC2 and a simulated cluster behind the ports.
 *
 * Flow: kube-scheduler marks a pod Unschedulable → the relay's pod event is enqueued on the FIFO queue (group = one
 * of the cluster's `POD_EVENT_GROUPS` by pod uid, deduplication id = pod uid + resourceVersion) → after the batch window (1 s idle, 10 s max) the queue
 * delivers an SQS event to the provisioner handler → the provision controller launches NodeClaims on simulated
 * EC2 → the instance's kubelet registers a Node (tainted `karpenter.sh/unregistered`) → the relay's node event
 * invokes the lifecycle handler, which registers the NodeClaim and removes the taint → the Node turns Ready (another
 * node event: the lifecycle handler initializes it) → kube-scheduler binds the pods.
 * The lifecycle handler also runs every minute of virtual time (the EventBridge schedule): registration timeouts and
 * garbage collection. The timeline's interruption events (`spotInterruption`, `rebalanceRecommendation`,
 * `instanceStateChange`, `scheduledMaintenance`) send the real EventBridge JSON (`ec2-events.ts`) to the interruption
 * queue, which delivers it to the interruption handler; a spot warning comes two minutes before simulated EC2
 * terminates the instance. The store (NodeClaims, unavailable offerings) and the handlers are injected by the
 * composition root.
 *
 * Faults (`spec.faults`, seeded by the run's seed; see `faults.ts`): the handlers get ports wrapped by a
 * {@link FaultInjector} (throttled EC2 calls, crashes right after side effects), every invocation runs as
 * `concurrentInvocations` overlapping ones, and the queue delivers acknowledged messages again. The observer and the
 * simulated world use the unwrapped objects.
 */
import type { ScheduledEvent, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { isThrottledError } from '../core/errors.js';
import { LABEL_HOSTNAME, LABEL_INITIALIZED, LABEL_NODEPOOL, LABEL_REGION, LABEL_REGISTERED, TAG_SKIFF_CLUSTER, TERMINATION_FINALIZER } from '../core/api/labels.js';
import { deduplicationId, messageGroupId, type PodEvent } from '../core/api/pod-event.js';
import type { NodeClaim } from '../core/api/nodeclaim.js';
import { ec2NodeClassSubnetZones } from '../core/api/ec2nodeclass.js';
import { isOwnedByNode } from '../core/api/pod-owner.js';
import type { InstanceTypeInfo } from '../core/instancetypes/instance-type.js';
import type { ConsolidationSetting, DisruptionDeps } from '../controllers/disruption/deps.js';
import { DisruptionMemory } from '../controllers/disruption/memory.js';
import type { InterruptionDeps } from '../controllers/interruption.js';
import type { LifecycleDeps } from '../controllers/lifecycle.js';
import { nodeClaimExtras } from '../controllers/nodeclaim-extras.js';
import { instanceTypeQuery } from '../controllers/launch.js';
import type { ProvisionDeps, ProvisioningSetting } from '../controllers/provision.js';
import { FOLLOW_UP_AFTER_MS, followUpSlot, type FollowUpController, type FollowUpPasses } from '../ports/follow-up-passes.js';
import type { ClusterNode, ClusterPod } from '../ports/cluster.js';
import type { NodeClaimStore } from '../ports/nodeclaim-store.js';
import { seededIds } from '../ports/ids.js';
import type { ProvisioningPasses } from '../ports/provisioning-passes.js';
import type { UnavailableOfferings } from '../ports/unavailable-offerings.js';
import { CachedNodeClaimStore } from './cached-nodeclaim-store.js';
import { CachedUnavailableOfferings } from './cached-unavailable-offerings.js';
import { healthScheduledChange, rebalanceRecommendation, spotInterruptionWarning, stateChangeNotification, type EventBridgeEvent } from './ec2-events.js';
import { FaultInjector, isSimulatedCrash, type CrashAfterSideEffectN, type FaultRecord, type SideEffectRecord } from './faults.js';
import { MemoryFifoQueue } from './memory-queue.js';
import { Observer, type ObservedPod, type ObservedWorld, type ViolationRecord } from './observer.js';
import { buildResult, type PricingNote, type SimulationResult } from './result.js';
import { driftedAtEnd } from './drift-at-end.js';
import type { InstanceState, ScenarioEvent, ScenarioSpec } from './scenario.js';
import type { LoadedScenario } from './scenario-loader.js';
import { podOwnerOf } from './workload-controllers.js';
import { whatIf } from './what-if.js';
import { SimulatedCluster, nodeNameOf, type SimNode, type SimNodeEvent, type SimPod } from './simulated-cluster.js';
import { SPOT_INTERRUPTION_NOTICE_MS, SimulatedEc2, type SimInstance } from './simulated-ec2.js';
import { VirtualClock } from './virtual-clock.js';

/** The cluster name the simulation uses in tags and queue message groups. */
export const SIMULATED_CLUSTER_NAME = 'skiff-sim';
/** The lifecycle Lambda's EventBridge schedule: every minute. */
export const LIFECYCLE_SCHEDULE_MS = 60 * 1000;
/**
 * How often the simulated relay re-reports the pods that are still unschedulable: 6 minutes, the relay's default
 * `resyncIntervalMs` (`DEFAULT_RESYNC_INTERVAL_MS` in the Kubernetes watch adapter, `cluster-watch.ts`). kube-scheduler
 * writes nothing when a retry fails for the same reasons, so this is what brings Skiff back to a pod whose capacity
 * never came (a failed launch, limits) when nothing in the cluster changes.
 */
export const RELAY_RESYNC_MS = 6 * 60 * 1000;
/** The disruption Lambda's EventBridge schedule: every minute, half a minute after the lifecycle's. */
export const DISRUPTION_SCHEDULE_MS = 60 * 1000;
/** Offset of the disruption schedule from the start, so the two periodic controllers do not run at the same instant. */
export const DISRUPTION_SCHEDULE_OFFSET_MS = 30 * 1000;
/**
 * A stopped or terminated instance's kubelet stops posting status; the node lifecycle controller marks the Node
 * NotReady after `node-monitor-grace-period`, 40 s (kube-controller-manager default).
 */
export const NODE_MONITOR_GRACE_MS = 40 * 1000;

/**
 * What the lifecycle Lambda is invoked with in the simulation: the schedule's event, a relay node event, or a batch from
 * its follow-up queue.
 */
export type SimLifecycleEvent = ScheduledEvent | Extract<PodEvent, { kind: 'node' }> | SQSEvent;

/** What the composition root provides. */
export interface SimulationDeps {
  readonly store: NodeClaimStore;
  readonly unavailableOfferings: UnavailableOfferings;
  readonly passes: ProvisioningPasses;
  readonly catalog: readonly InstanceTypeInfo[];
  /** Builds the provisioner Lambda handler around a bound controller (the same factory the Lambda uses). */
  readonly createProvisionerHandler: (deps: ProvisionDeps) => (event: SQSEvent) => Promise<SQSBatchResponse>;
  /** Builds the lifecycle Lambda handler around a bound controller (the same factory the Lambda uses). */
  readonly createLifecycleHandler: (deps: LifecycleDeps) => (event: SimLifecycleEvent) => Promise<unknown>;
  /**
   * Builds the disruption Lambda handler around a bound controller (the same factory the Lambda uses, with its
   * lease), and the follow-up passes it asks for (the simulated follow-up queue: one pass per 20 s slot, on the virtual
   * clock). Without it nothing is disrupted (nodes live to the end of the run).
   */
  readonly createDisruptionHandler?: (deps: DisruptionDeps, followUps: FollowUpPasses) => (event: ScheduledEvent | SQSEvent) => Promise<unknown>;
  /**
   * Builds the interruption Lambda handler around a bound controller (the same factory the Lambda uses). It consumes
   * the interruption queue, which the timeline's `spotInterruption`, `rebalanceRecommendation`, `instanceStateChange`
   * and `scheduledMaintenance` events feed with the real EventBridge events. The deps carry the provision controller's
   * ports too, so the composition root can bind `InterruptionDeps.provision`. Without it the events are sent to a queue
   * nobody reads (Skiff notices a reclaimed instance only through the lifecycle controller).
   */
  readonly createInterruptionHandler?: (deps: InterruptionDeps & ProvisionDeps) => (event: SQSEvent) => Promise<SQSBatchResponse>;
  /** Called as virtual time advances with the fraction done (0–1). */
  readonly onProgress?: (fraction: number) => void;
  /** Called with each violation the observer counts, as it happens (debugging and tests). */
  readonly onViolation?: (record: ViolationRecord) => void;
  /** Called with each fault injected (`spec.faults`), as it happens (debugging and tests). */
  readonly onFault?: (record: FaultRecord) => void;
  /** Watches the fleet as the run goes (the cost-over-time benchmark). @default none (no probe events are scheduled) */
  readonly probe?: SimulationProbe;
  /** The disruption controller's consolidation moves (`DisruptionDeps.consolidation`). @default 'skiff' */
  readonly consolidation?: ConsolidationSetting;
  /** How the provisioner plans (`ProvisionDeps.bindingReplay`: `karpenter` turns the binding replay off). @default 'skiff' */
  readonly provisioning?: ProvisioningSetting;
  /** One deterministic crash of a handler after its n-th side effect (tests; see `CrashAfterSideEffectN`). @default none */
  readonly crashAfter?: CrashAfterSideEffectN;
  /** Called with each side effect a handler makes, as it succeeds (tests and debugging). @default none */
  readonly onSideEffect?: (record: SideEffectRecord) => void;
  /**
   * Called once at the end with the cluster's live Nodes and the NodeClaim records as they are then (tests that check
   * what a run leaves behind, e.g. no node left tainted `karpenter.sh/disrupted` without a command). @default none
   */
  readonly onEnd?: (end: { readonly nodes: readonly ClusterNode[]; readonly nodeClaims: readonly NodeClaim[] }) => void;
}

/**
 * What the fleet looks like at one instant of a run: the running instances' price and the pods that exist.
 * Read-only views of the simulation's own objects, valid during the callback only.
 */
export interface FleetSample {
  /** Virtual time, epoch ms (UTC). */
  readonly atMs: number;
  /** Sum of the on-demand or spot prices of the instances not terminated, USD per hour. */
  readonly fleetHourlyUSD: number;
  /** Instances not terminated. */
  readonly instances: number;
  /** Pods not deleted or completed, bound or pending, DaemonSet pods excluded (they come with every node). */
  readonly pods: readonly ClusterPod[];
}

/** One disruption Lambda invocation as the probe sees it. */
export interface DisruptionPassSample {
  /** Virtual time of the pass, epoch ms (UTC). */
  readonly atMs: number;
  /** Wall time of the invocation (the handler, its DynamoDB calls on dynalite and the controller), ms. */
  readonly wallMs: number;
  /**
   * CPU time of the process over the invocation (user + system), ms: the pass's own cost, which other work on a shared
   * machine does not inflate as it does the wall time.
   */
  readonly cpuMs: number;
  /** Instances not terminated when the pass started. */
  readonly instances: number;
}

/** One provisioner Lambda invocation (one SQS batch) as the probe sees it. */
export interface ProvisionerInvocationSample {
  /** Virtual time of the invocation, epoch ms (UTC); the clock does not move while a handler runs. */
  readonly atMs: number;
  /**
   * Wall time of the invocation, ms: the handler, the provision controller (solve), its store writes on dynalite and
   * its calls to the simulated cluster and EC2 (in process: no network round trip is in it).
   */
  readonly wallMs: number;
  /** SQS messages in the batch. */
  readonly messages: number;
}

/**
 * A benchmark's view into a run. Sampling adds events to the virtual clock but changes nothing the handlers see, so
 * a Result is the same with or without a probe.
 */
export interface SimulationProbe {
  /** Sample interval, virtual ms (≥ 1,000); the first sample is at the start, the last at or before the end. */
  readonly everyMs: number;
  /** Called with each sample. */
  readonly sample: (s: FleetSample) => void;
  /** Called after each disruption pass with its wall time. @default none */
  readonly disruptionPass?: (p: DisruptionPassSample) => void;
  /** Called after each provisioner invocation with its wall time (B4, which adds compute to simulated latency). @default none */
  readonly provisionerInvocation?: (p: ProvisionerInvocationSample) => void;
}

/**
 * Runs a loaded scenario to its end and returns the Result. Deterministic for a given scenario and seed.
 * @param seed seeds generated names and fault injection (`spec.faults`)
 * @example
 * const result = await runSimulation(await loadScenario('examples/seed', { now: Date.now() }), 1, deps);
 */
export async function runSimulation(scenario: LoadedScenario, seed: number, deps: SimulationDeps): Promise<SimulationResult> {
  const spec = scenario.spec;
  const clock = new VirtualClock(spec.startMs);
  const endMs = spec.startMs + spec.durationSeconds * 1000;
  const ids = seededIds(seed);
  const catalogByName = new Map(deps.catalog.map((t) => [t.name, t]));
  const observer = new Observer(catalogByName, () => clock.now(), deps.onViolation);
  const faults = new FaultInjector(spec.faults, seed, () => clock.now(), deps.onFault, {
    ...(deps.crashAfter ? { crashAfter: deps.crashAfter } : {}),
    ...(deps.onSideEffect ? { onSideEffect: deps.onSideEffect } : {}),
  });
  const cluster = new SimulatedCluster(clock, { region: spec.region, ids, registerWithUnregisteredTaint: true });
  const ec2 = new SimulatedEc2(clock, {
    region: spec.region,
    catalog: deps.catalog,
    // Launched nodes get the labels and allocatable the solver planned with: the EC2NodeClass's AMI family, kubelet and volumes.
    instanceTypeQuery: (nodeClass) => {
      const nc = cluster.nodeClasses.get(nodeClass);
      return nc ? instanceTypeQuery(nc) : { nodeClass };
    },
    // A snapshot's EC2NodeClass lists the subnets Karpenter resolved: its types are offered in those zones only.
    nodeClassZones: (nodeClass) => {
      const nc = cluster.nodeClasses.get(nodeClass);
      return nc ? ec2NodeClassSubnetZones(nc) : undefined;
    },
    vmMemoryOverheadPercent: spec.settings.vmMemoryOverheadPercent,
    spotPrices: spec.spotPrices,
    ...(spec.prices?.length ? { prices: spec.prices } : {}),
    ...(spec.unavailableOfferings?.length ? { unavailableOfferings: spec.unavailableOfferings } : {}),
    clusterName: SIMULATED_CLUSTER_NAME,
    onRegister: (instance) => cluster.registerNode(instance),
  });
  const queue = new MemoryFifoQueue(clock, {
    queueArn: `arn:aws:sqs:${spec.region}:000000000000:skiff-pod-events.fifo`,
    batchIdleMs: spec.settings.batchIdleDurationSeconds * 1000,
    batchMaxMs: spec.settings.batchMaxDurationSeconds * 1000,
    ...(spec.faults.duplicateDelivery > 0 ? { redeliverAcknowledged: (id: string) => faults.redeliver(id) } : {}),
  });

  // The interruption queue (standard SQS, fed by EventBridge rules): no batch window, no deduplication, no ordering
  // (each message is its own group), redelivery after the visibility timeout of what the handler did not acknowledge.
  const interruptionQueue = new MemoryFifoQueue(clock, {
    queueArn: `arn:aws:sqs:${spec.region}:000000000000:skiff-interruption`,
    batchIdleMs: 0,
    batchMaxMs: 0,
    ...(spec.faults.duplicateDelivery > 0 ? { redeliverAcknowledged: (id: string) => faults.redeliver(`interruption-${id}`) } : {}),
  });
  let interruptionSeq = 0;
  const sendInterruption = (event: EventBridgeEvent): void => {
    const n = ++interruptionSeq;
    void interruptionQueue.send(JSON.stringify(event), { groupId: `interruption-${n}`, deduplicationId: `interruption-${n}` });
  };

  // Every controller of the run shares one store; its list() is cached between writes (see CachedNodeClaimStore), and
  // so is the unavailable offerings' (see CachedUnavailableOfferings).
  const store = new CachedNodeClaimStore(deps.store);
  const unavailableOfferings = new CachedUnavailableOfferings(deps.unavailableOfferings);
  observeDisruption(cluster, ec2, observer, store, clock);
  // What the handlers see: the same objects behind the fault injector (a pass-through without faults).
  const handlerCluster = faults.cluster(cluster);
  const handlerCloud = faults.cloud(observedCloud(ec2, observer, cluster, store, spec.region));
  const handlerStore = faults.store(store);
  // What the disruption controller remembers between passes, one per run: its disruption and interruption handlers
  // share it, as they share the store.
  const disruptionMemory = new DisruptionMemory();
  const provisionDeps: ProvisionDeps = {
    cluster: handlerCluster,
    cloud: handlerCloud,
    store: handlerStore,
    unavailableOfferings: faults.unavailableOfferings(unavailableOfferings),
    passes: faults.passes(deps.passes),
    clock,
    ids,
    clusterName: SIMULATED_CLUSTER_NAME,
    region: spec.region,
    ...(deps.provisioning === 'karpenter' ? { bindingReplay: false } : {}),
    // The provisioner's follow-up queue: a pass that leaves pods unschedulable while offerings are unavailable asks
    // for another 20 s later, one pass per slot (ProvisionDeps.followUps), delivered as on AWS beside the pod events.
    followUps: followUpPassesOnClock(clock, endMs, 'provisioner', async (slot) => {
      for (const outcome of await faults.invoke('provisioner', () => handler(followUpEvent(slot, spec.region, 'provisioner')))) {
        // A failed follow-up is over: the next pod event or re-list triggers a pass. Anything but an injected fault is a bug.
        if (outcome.status === 'rejected' && !isSimulatedCrash(outcome.reason) && !isThrottledError(outcome.reason)) throw outcome.reason;
      }
    }),
  };
  const handler = deps.createProvisionerHandler(provisionDeps);
  queue.subscribe(async (event) => {
    const started = deps.probe?.provisionerInvocation ? performance.now() : 0;
    const response = mergeBatchResponses(event, await faults.invoke('provisioner', () => handler(event)));
    deps.probe?.provisionerInvocation?.({ atMs: clock.now(), wallMs: performance.now() - started, messages: event.Records.length });
    return response;
  });
  // The lifecycle follow-up queue: one pass per 20 s slot (as SQS FIFO deduplication makes it on AWS).
  const lifecycleFollowUps = followUpPassesOnClock(clock, endMs, 'lifecycle', (slot) => lifecycle(followUpEvent(slot, spec.region, 'lifecycle')));
  const lifecycleHandler = deps.createLifecycleHandler({
    cluster: handlerCluster,
    cloud: handlerCloud,
    store: handlerStore,
    clock,
    // Pending NodeClaims are launched again by the lifecycle pass (Karpenter's launch controller), as on AWS.
    launch: { unavailableOfferings: provisionDeps.unavailableOfferings, ids, clusterName: SIMULATED_CLUSTER_NAME, region: spec.region, listNodeClasses: () => handlerCluster.listNodeClasses() },
    followUps: lifecycleFollowUps,
  });
  // A failed lifecycle run is over: the schedule (or the next node event) runs it again. Crashes and throttling are
  // the injected faults; anything else is a bug and stops the run.
  const lifecycle = async (event: SimLifecycleEvent): Promise<void> => {
    for (const outcome of await faults.invoke('lifecycle', () => lifecycleHandler(event))) {
      if (outcome.status === 'rejected' && !isSimulatedCrash(outcome.reason) && !isThrottledError(outcome.reason)) throw outcome.reason;
    }
  };

  // EventBridge schedule: the disruption Lambda every minute (a failed pass is over; the next one resumes it), and the
  // follow-up passes a pass with work in flight asks for (the follow-up queue, one message per 20 s slot).
  if (deps.createDisruptionHandler) {
    const followUps = followUpPassesOnClock(clock, endMs, 'disruption', (slot) => disruptionPass(slot, followUpEvent(slot, spec.region, 'disruption')));
    const disruptionHandler = deps.createDisruptionHandler({
      ...provisionDeps,
      cluster: handlerCluster,
      spotToSpotConsolidation: spec.settings.featureGates.SpotToSpotConsolidation,
      ...(deps.consolidation ? { consolidation: deps.consolidation } : {}),
      memory: disruptionMemory,
      // A pass that reads work in flight asks for its follow-up before its first side effect (`urgency.ts`).
      followUps,
    }, followUps);
    const disruptionPass = async (at: number, event: ScheduledEvent | SQSEvent): Promise<void> => {
      const started = performance.now();
      const cpuBefore = process.cpuUsage();
      const instances = deps.probe?.disruptionPass ? liveInstances(ec2).length : 0;
      for (const outcome of await faults.invoke('disruption', () => disruptionHandler(event))) {
        if (outcome.status === 'rejected' && !isSimulatedCrash(outcome.reason) && !isThrottledError(outcome.reason)) throw outcome.reason;
      }
      const cpu = process.cpuUsage(cpuBefore);
      deps.probe?.disruptionPass?.({ atMs: at, wallMs: performance.now() - started, cpuMs: (cpu.user + cpu.system) / 1000, instances });
    };
    const scheduleDisruption = (at: number): void => {
      clock.at(at, 'disruption schedule', async () => {
        await disruptionPass(at, scheduledEvent(at, spec.region, 'disruption'));
        if (at + DISRUPTION_SCHEDULE_MS <= endMs) scheduleDisruption(at + DISRUPTION_SCHEDULE_MS);
      });
    };
    scheduleDisruption(spec.startMs + DISRUPTION_SCHEDULE_OFFSET_MS);
  }

  // EventBridge rules → SQS → the interruption Lambda (a failed or crashed invocation's messages come back).
  if (deps.createInterruptionHandler) {
    const interruptionHandler = deps.createInterruptionHandler({
      ...provisionDeps,
      cluster: handlerCluster,
      spotToSpotConsolidation: spec.settings.featureGates.SpotToSpotConsolidation,
      memory: disruptionMemory,
    });
    interruptionQueue.subscribe(async (event) => mergeBatchResponses(event, await faults.invoke('interruption', () => interruptionHandler(event))));
  }

  // EventBridge schedule: the lifecycle Lambda every minute.
  const scheduleLifecycle = (at: number): void => {
    clock.at(at, 'lifecycle schedule', async () => {
      await lifecycle(scheduledEvent(at, spec.region));
      if (at + LIFECYCLE_SCHEDULE_MS <= endMs) scheduleLifecycle(at + LIFECYCLE_SCHEDULE_MS);
    });
  };
  scheduleLifecycle(spec.startMs + LIFECYCLE_SCHEDULE_MS);
  // The relay's node events invoke the lifecycle Lambda too; events of one instant go in one invocation (the relay
  // batches what it sees together).
  let relayPassQueued = false;
  let nodeEventSeq = 0;
  const relayNodeEvent = (node: SimNode, event: SimNodeEvent): void => {
    const message: SimLifecycleEvent = { kind: 'node', cluster: SIMULATED_CLUSTER_NAME, name: node.name, uid: `node-${node.instanceId}`, resourceVersion: String(++nodeEventSeq), event };
    if (relayPassQueued) return;
    relayPassQueued = true;
    clock.after(0, 'relay node event → lifecycle', async () => {
      relayPassQueued = false;
      await lifecycle(message);
    });
  };

  // The relay: report pods kube-scheduler marked Unschedulable (each patch of their PodScheduled condition), and
  // every RELAY_RESYNC_MS re-report those still unschedulable, with the resourceVersion they have.
  const reportPod = (pod: SimPod): void => {
    const event: PodEvent = { kind: 'pod', cluster: SIMULATED_CLUSTER_NAME, namespace: pod.namespace, name: pod.name, uid: pod.uid, resourceVersion: pod.resourceVersion };
    void queue.send(JSON.stringify(event), { groupId: messageGroupId(SIMULATED_CLUSTER_NAME, event), deduplicationId: deduplicationId(event) });
  };
  const scheduleResync = (at: number): void => {
    clock.at(at, 'relay resync', () => {
      for (const pod of cluster.pods.values()) if (pod.phase === 'Pending' && pod.unschedulable && !pod.nodeName) reportPod(pod);
      if (at + RELAY_RESYNC_MS <= endMs) scheduleResync(at + RELAY_RESYNC_MS);
    });
  };
  scheduleResync(spec.startMs + RELAY_RESYNC_MS);
  const checkBind = (pod: SimPod, node: SimNode): void =>
    observer.onBind(
      pod,
      node,
      () => cluster.pods.values(),
      () => cluster.nodes.values(),
      () => ({ podsOnNode: cluster.podsOn(node.name), boundRequiredAntiAffinity: cluster.hasBoundRequiredAntiAffinity() }),
    );
  /**
   * Binds made while the objects that exist at the start are loaded (a snapshot's bound pods, a manifest's
   * `spec.nodeName`), checked once all of them are: the real cluster placed them in an order the file does not keep,
   * and checking each as it is read sees states that never existed (a zone spread of a, a, a, b, b, b half loaded).
   */
  let loadingBinds: { pod: SimPod; node: SimNode }[] | undefined = [];
  cluster.hooks = {
    onUnschedulable: reportPod,
    onBind: (pod, node) => (loadingBinds ? loadingBinds.push({ pod, node }) : checkBind(pod, node)),
    onNodeEvent: relayNodeEvent,
  };

  // Warnings found while loading (e.g. a PDB that can never allow an eviction) become Kubernetes Events.
  for (const w of scenario.warnings) {
    const pdb = /^PodDisruptionBudget (\S+)\/(\S+) /.exec(w.message);
    await cluster.recordEvent({
      type: 'Warning',
      reason: pdb ? 'DisruptionBlocked' : 'ScenarioWarning',
      object: pdb ? `PodDisruptionBudget/${pdb[1]}/${pdb[2]}` : `Scenario/${scenario.name}`,
      message: w.message,
    });
  }

  // Objects that exist at the start, in dependency order.
  for (const o of scenario.nodeClasses) cluster.apply({ kind: 'EC2NodeClass', object: o });
  for (const o of scenario.nodePools) cluster.apply({ kind: 'NodePool', object: o });
  for (const o of scenario.limitRanges) cluster.apply({ kind: 'LimitRange', object: o });
  for (const o of scenario.pdbs) cluster.apply({ kind: 'PodDisruptionBudget', object: o });
  const startingNodeClaims = await seedNodes(scenario, cluster, ec2, store, ids);
  // A snapshot's pods of a workload, before the workload: its controller counts them and creates only what is missing.
  for (const { pod, owner } of scenario.ownedPods ?? []) {
    const list = owner.kind === 'Deployment' ? scenario.deployments : owner.kind === 'StatefulSet' ? scenario.statefulSets : scenario.jobs;
    const workload = list.find((w) => w.metadata.name === owner.name && (w.metadata.namespace ?? 'default') === pod.metadata.namespace);
    if (workload) cluster.adoptPod(pod, podOwnerOf(owner.kind, workload));
  }
  for (const o of scenario.daemonSets) cluster.apply({ kind: 'DaemonSet', object: o });
  for (const o of scenario.deployments) cluster.apply({ kind: 'Deployment', object: o });
  for (const o of scenario.statefulSets) cluster.apply({ kind: 'StatefulSet', object: o });
  for (const o of scenario.jobs) cluster.apply({ kind: 'Job', object: o });
  for (const o of scenario.pods) cluster.apply({ kind: 'Pod', object: o });
  const loaded = loadingBinds;
  loadingBinds = undefined;
  for (const { pod, node } of loaded) if (pod.nodeName === node.name && pod.deletedAt === undefined) checkBind(pod, node);

  // Pods live and unbound when the run starts (a snapshot's Pending pods, replicas its workloads still miss).
  const pendingAtStart = spec.nodes.length > 0 ? [...cluster.pods.values()].filter((p) => !p.nodeName && p.phase === 'Pending').map((p) => `${p.namespace}/${p.name}`) : [];
  const world: EventWorld = { cluster, ec2, clock, region: spec.region, sendInterruption };
  for (const event of spec.events) clock.at(spec.startMs + event.atSeconds * 1000, `scenario ${event.type}`, () => applyEvent(event, world));

  if (deps.onProgress) {
    const step = Math.max(60_000, Math.floor((endMs - spec.startMs) / 200));
    for (let t = spec.startMs + step; t < endMs; t += step) {
      const at = t;
      clock.at(at, 'progress', () => deps.onProgress!((at - spec.startMs) / (endMs - spec.startMs)));
    }
  }
  if (deps.probe) {
    const probe = deps.probe;
    const every = Math.max(1000, probe.everyMs);
    for (let t = spec.startMs; t <= endMs; t += every) {
      clock.at(t, 'probe', () => {
        const running = liveInstances(ec2);
        const pods = [...cluster.pods.values()].filter((p) => p.deletedAt === undefined && (p.phase === 'Pending' || p.phase === 'Running') && !p.owner?.startsWith('DaemonSet/'));
        probe.sample({ atMs: t, fleetHourlyUSD: running.reduce((sum, i) => sum + i.price, 0), instances: running.length, pods });
      });
    }
  }
  await clock.runUntil(endMs);
  deps.onProgress?.(1);

  const claims = await store.list();
  const endNodes = await cluster.listNodes();
  deps.onEnd?.({ nodes: endNodes, nodeClaims: claims });
  const drifted = driftedAtEnd(claims, await cluster.listNodePools(), await cluster.listNodeClasses(), endNodes);
  observer.finish(ec2.instances, claims, new Map(cluster.nodeHistory.filter((n) => n.readyAt !== undefined).map((n) => [n.instanceId, n.readyAt!])));
  const result = buildResult({
    scenario: scenario.name,
    startMs: spec.startMs,
    endMs,
    seed,
    consolidation: deps.consolidation ?? 'skiff',
    provisioning: deps.provisioning ?? 'skiff',
    region: spec.region,
    nodeClaims: claims,
    startingNodeClaims,
    driftedAtEnd: drifted,
    nodes: cluster.nodeHistory,
    pods: cluster.podHistory,
    livePods: [...cluster.pods.values()],
    events: cluster.events,
    launchAttempts: ec2.launchAttempts,
    instances: ec2.instances,
    violations: observer.counts,
    pricing: pricingNote(spec),
  });
  const withFaults = faults.active ? { ...result, faults: { configured: { ...spec.faults }, injected: { ...faults.counts } } } : result;
  // A run that starts with nodes (a snapshot) opens with the answer in money.
  if (spec.nodes.length === 0) return withFaults;
  return { ...withFaults, whatIf: whatIf(result, { instances: ec2.instances, nodePools: scenario.nodePools, pendingAtStart }) };
}

/**
 * The SQS partial batch response of overlapping invocations of one batch: a record counts as processed only when
 * every invocation processed it (an invocation that crashed or threw processed none of them).
 */
function mergeBatchResponses(event: SQSEvent, outcomes: readonly PromiseSettledResult<SQSBatchResponse>[]): SQSBatchResponse {
  const failed = new Set<string>();
  for (const outcome of outcomes) {
    if (outcome.status === 'rejected') for (const r of event.Records) failed.add(r.messageId);
    else for (const f of outcome.value.batchItemFailures) failed.add(f.itemIdentifier);
  }
  return { batchItemFailures: [...failed].map((itemIdentifier) => ({ itemIdentifier })) };
}

/**
 * Wraps the simulated EC2 so the observer sees every launch (it does not change behaviour): duplicates and limits,
 * and the solver's decision — the pods nominated to the NodeClaim (read from its record, written before the launch)
 * checked against the instance that was actually launched.
 */
function observedCloud(ec2: SimulatedEc2, observer: Observer, cluster: SimulatedCluster, store: NodeClaimStore, region: string): SimulatedEc2 {
  const create = ec2.create.bind(ec2);
  ec2.create = async (request) => {
    const before = ec2.instances.length;
    const launched = await create(request);
    if (ec2.instances.length > before) {
      const instance = ec2.instances[ec2.instances.length - 1]!;
      const limitsOf = (nodePool: string) => cluster.nodePools.get(nodePool)?.spec.limits as Readonly<Record<string, string | number>> | undefined;
      const pool = instance.tags['karpenter.sh/nodepool'];
      // Only a NodePool with limits needs the records: which of its NodeClaims are marked for deletion.
      const marked = pool && limitsOf(pool) ? markedForDeletion(await store.list()) : new Set<string>();
      observer.onLaunch(instance, ec2.instances, limitsOf, (i) => marked.has(i.tags['karpenter.sh/nodeclaim'] ?? ''));
      const claim = await store.get(request.nodeClaim);
      const nominated = (claim?.nominatedPods ?? []).flatMap((key) => {
        const pod = cluster.pods.get(key);
        return pod && !pod.nodeName ? [pod] : [];
      });
      observer.noteLaunchedFor(request.nodeClaim, nominated.map((p) => `${p.namespace}/${p.name}`));
      if (nominated.length > 0) {
        const name = nodeNameOf(instance.instanceId, region);
        observer.onNodeClaimLaunched({
          nodeClaim: request.nodeClaim,
          node: { name, labels: { ...instance.labels, [LABEL_HOSTNAME]: name, [LABEL_REGION]: region }, taints: request.taints, allocatable: instance.allocatable },
          nominated,
          daemonSets: [...cluster.daemonSets.values()].map((ds) => ({
            namespace: ds.metadata.namespace ?? 'default',
            name: ds.metadata.name,
            labels: ds.spec.template.metadata.labels ?? {},
            spec: ds.spec.template.spec,
          })),
        });
      }
    }
    return launched;
  };
  return ec2;
}

/**
 * Lets the observer watch what the handlers do to disrupt nodes (it does not change behaviour): each eviction and
 * forced pod deletion, each `karpenter.sh/disrupted` taint added (the start of a drain; of a disruption: budgets) and
 * each instance a disruption terminates.
 */
function observeDisruption(cluster: SimulatedCluster, ec2: SimulatedEc2, observer: Observer, store: NodeClaimStore, clock: VirtualClock): void {
  const world = (): ObservedWorld => {
    const pdbs = [...cluster.pdbs.values()];
    return {
      // Only a PodDisruptionBudget's health reads every pod (the observer's `pdbHealth`): without one, an eviction
      // takes no snapshot of every pod.
      pods: pdbs.length === 0 ? [] : [...cluster.pods.values()].map(observedPod),
      readyNodes: new Set([...cluster.nodes.values()].filter((n) => n.ready).map((n) => n.name)),
      pdbs,
    };
  };
  const claimOfNode = async (node: SimNode | undefined) => (node ? (await store.list()).find((c) => c.providerId === node.providerId && c.state !== 'Failed') : undefined);
  const poolOf = (claim: NodeClaim) => {
    const pool = cluster.nodePools.get(claim.nodePool);
    if (!pool) return undefined;
    const nodes = [...cluster.nodes.values()]
      .filter((n) => n.labels[LABEL_NODEPOOL] === pool.metadata.name && n.labels[LABEL_INITIALIZED] === 'true')
      .map((n) => ({ name: n.name, ready: n.ready, disrupted: isDisrupted(n) }));
    return { pool, nodes };
  };
  /** A disruption acting on a node it never tainted: the observer checks the budget there. */
  const untaintedDisruption = (node: SimNode | undefined, claim: NodeClaim | undefined): void => {
    if (!node || isDisrupted(node) || !claim?.disruption) return;
    const of = poolOf(claim);
    if (of) observer.onUntaintedDisruption(node.name, claim.disruption.reason, { name: of.pool.metadata.name, budgets: of.pool.spec.disruption.budgets }, of.nodes);
  };
  const evictPod = cluster.evictPod.bind(cluster);
  cluster.evictPod = async (namespace, name) => {
    const pod = cluster.pods.get(`${namespace}/${name}`);
    const before = world();
    const node = pod?.nodeName ? cluster.nodes.get(pod.nodeName) : undefined;
    const claim = await claimOfNode(node);
    const outcome = await evictPod(namespace, name);
    if (outcome === 'evicted' && pod) {
      untaintedDisruption(node, claim);
      observer.onEviction(observedPod(pod), claim?.disruption?.reason, before);
    }
    return outcome;
  };
  const forceDeletePod = cluster.forceDeletePod.bind(cluster);
  cluster.forceDeletePod = async (namespace, name, gracePeriodSeconds) => {
    const pod = cluster.pods.get(`${namespace}/${name}`);
    const before = world();
    const claim = await claimOfNode(pod?.nodeName ? cluster.nodes.get(pod.nodeName) : undefined);
    const outcome = await forceDeletePod(namespace, name, gracePeriodSeconds);
    if (outcome === 'deleted' && pod) {
      const d = claim?.disruption;
      const drainStarted = d ? Date.parse(d.drainStartedAt ?? d.startedAt ?? d.proposedAt) : Number.NaN;
      const deadline = claim?.terminationGracePeriodSeconds !== undefined && d ? drainStarted + claim.terminationGracePeriodSeconds * 1000 : Number.POSITIVE_INFINITY;
      const podGrace = (pod.spec as { terminationGracePeriodSeconds?: number }).terminationGracePeriodSeconds ?? 30;
      observer.onPodDeletion(observedPod(pod), d?.reason, before, deadline - podGrace * 1000);
    }
    return outcome;
  };
  const patchNode = cluster.patchNode.bind(cluster);
  cluster.patchNode = async (name, patch) => {
    const node = cluster.nodes.get(name);
    const tainting = !!node && !isDisrupted(node) && (patch.taints ?? []).some((t) => t.key === DISRUPTED_TAINT_KEY);
    if (tainting) {
      observer.onDrainTaint(name);
      const claim = await claimOfNode(node);
      const of = claim ? poolOf(claim) : undefined;
      if (claim?.disruption && of) {
        const pool = of.pool;
        observer.onDisruptionStart(name, claim.disruption.reason, { name: pool.metadata.name, budgets: pool.spec.disruption.budgets }, of.nodes);
        observer.onReplaceStart({
          nodeClaim: claim.name,
          nodePool: pool.metadata.name,
          reason: claim.disruption.reason,
          replacements: [...claim.disruption.replacements],
          spec: appliedSpec(cluster, pool.metadata.name, claim.nodeClass),
          workload: workloadFingerprint(cluster),
        });
      }
    }
    return patchNode(name, patch);
  };
  const del = ec2.delete.bind(ec2);
  ec2.delete = async (instanceId) => {
    const node = [...cluster.nodes.values()].find((n) => n.instanceId === instanceId);
    const claim = node ? await claimOfNode(node) : undefined;
    if (node && claim?.disruption && ec2.instances.some((i) => i.instanceId === instanceId && i.state !== 'terminated')) {
      untaintedDisruption(node, claim);
      // DaemonSet and mirror (static) pods go with their node: Karpenter neither evicts them nor lets a PDB of theirs
      // hold a node (core `pkg/utils/pod/scheduling.go` IsEvictable leaves out IsOwnedByNode).
      const pods = cluster.podsOn(node.name).filter((p) => !p.owner?.startsWith('DaemonSet/') && !isOwnedByNode(p.owner)).map(observedPod);
      const drainStarted = Date.parse(claim.disruption.drainStartedAt ?? claim.disruption.startedAt ?? claim.disruption.proposedAt);
      const graceExpired = claim.terminationGracePeriodSeconds !== undefined && clock.now() >= drainStarted + claim.terminationGracePeriodSeconds * 1000;
      observer.onDisruptionTermination(claim.name, claim.disruption.reason, pods, world(), graceExpired);
    }
    if (node && claim?.disruption?.reason === 'Drifted') {
      const pool = cluster.nodePools.get(claim.nodePool);
      const replacements = new Map(
        [...cluster.nodes.values()]
          .filter((n) => n.nodeClaim !== null && claim.disruption!.replacements.includes(n.nodeClaim))
          .map((n) => {
            // A replacement in another NodePool answers to that NodePool's requirements.
            const own = n.labels[LABEL_NODEPOOL] !== undefined && n.labels[LABEL_NODEPOOL] !== claim.nodePool ? cluster.nodePools.get(n.labels[LABEL_NODEPOOL]) : undefined;
            return [n.nodeClaim!, { name: n.name, labels: n.labels, ...(own ? { requirements: own.spec.template.spec.requirements } : {}) }] as const;
          }),
      );
      if (pool) observer.onDriftedTermination(claim.name, appliedSpec(cluster, claim.nodePool, claim.nodeClass), pool.spec.template.spec.requirements, replacements);
    }
    return del(instanceId);
  };
}

/**
 * The NodeClaims marked for deletion as the observer reads Karpenter's definition (core v1.14
 * `pkg/controllers/state/statenode.go` `MarkedForDeletion`: marked by the disruption queue, or being deleted): a record
 * whose disruption started (`Replacing`, `Draining`) or that is `Deleting`, `Deleted` or `Failed`. Written here from
 * the record's fields rather than with the controllers' helper: the observer checks the controllers.
 */
function markedForDeletion(claims: readonly NodeClaim[]): Set<string> {
  const phases = new Set(['Replacing', 'Draining']);
  const states = new Set(['Deleting', 'Deleted', 'Failed']);
  return new Set(claims.filter((c) => states.has(c.state) || phases.has(c.disruption?.phase ?? '')).map((c) => c.name));
}

/** A NodePool's `spec.template` and its EC2NodeClass's `spec` as applied to the cluster, as one string (the observer's drift baseline). */
function appliedSpec(cluster: SimulatedCluster, nodePool: string, nodeClass: string): string {
  return JSON.stringify([cluster.nodePools.get(nodePool)?.spec.template ?? null, cluster.nodeClasses.get(nodeClass)?.spec ?? null]);
}

/** The live pods that are not DaemonSet pods, counted per owner (a bare pod by its name), as one string. */
function workloadFingerprint(cluster: SimulatedCluster): string {
  const counts = new Map<string, number>();
  for (const p of cluster.pods.values()) {
    if (p.owner?.startsWith('DaemonSet/')) continue;
    const key = p.owner ?? `Pod/${p.namespace}/${p.name}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return JSON.stringify([...counts].sort((a, b) => (a[0] < b[0] ? -1 : 1)));
}

/** The taint a disruption puts on its node (Karpenter `karpenter.sh/disrupted:NoSchedule`). */
const DISRUPTED_TAINT_KEY = 'karpenter.sh/disrupted';

function isDisrupted(node: SimNode): boolean {
  return node.taints.some((t) => t.key === DISRUPTED_TAINT_KEY);
}

function observedPod(p: { namespace: string; name: string; labels: Readonly<Record<string, string>>; annotations: Readonly<Record<string, string>>; createdAt: number; phase: string; nodeName?: string; scheduledAt?: number }): ObservedPod {
  return {
    namespace: p.namespace,
    name: p.name,
    labels: p.labels,
    annotations: p.annotations,
    createdAt: p.createdAt,
    phase: p.phase,
    ...(p.nodeName ? { nodeName: p.nodeName } : {}),
    ...(p.scheduledAt !== undefined ? { scheduledAt: p.scheduledAt } : {}),
  };
}

/**
 * Which prices the run simulated, in words (the Result's `pricing`): the catalogue's us-east-1 list prices, prices
 * given by `spec.prices` or a `--prices` file (how many types, from where), pinned spot prices, simulated spot prices,
 * and offerings left out.
 */
export function pricingNote(spec: ScenarioSpec): PricingNote {
  const given = spec.prices ?? [];
  const from = (pick: (p: (typeof given)[number]) => number | undefined): string | undefined => {
    const bySource = new Map<string, Set<string>>();
    for (const p of given) if (pick(p) !== undefined) bySource.set(p.source ?? 'spec.prices', (bySource.get(p.source ?? 'spec.prices') ?? new Set()).add(p.instanceType));
    return bySource.size === 0 ? undefined : [...bySource].map(([source, types]) => `${types.size} instance type${types.size === 1 ? '' : 's'} from ${source}`).join(', ');
  };
  const od = from((p) => p.onDemand);
  const spot = from((p) => p.spot);
  const list = `us-east-1 on-demand list prices (Linux, shared tenancy), used for ${spec.region}`;
  const simulated = 'simulated: derived deterministically per instance type and zone (25–55 % of on-demand)';
  const pinned = spec.spotPrices.length > 0 ? `${spec.spotPrices.length} offering${spec.spotPrices.length === 1 ? '' : 's'} pinned by spec.spotPrices` : undefined;
  const unavailable = spec.unavailableOfferings?.length ? `; ${spec.unavailableOfferings.length} offering rule${spec.unavailableOfferings.length === 1 ? '' : 's'} marked unavailable` : '';
  return {
    onDemand: od ? `given for ${od}; ${list} for the others` : list,
    spot: `${[pinned, spot ? `given for ${spot}` : undefined].filter(Boolean).join('; ')}${pinned || spot ? `; ${simulated} for the others` : `${simulated} unless pinned by spec.spotPrices`}${unavailable}`,
  };
}

/**
 * Creates the scenario's pre-existing nodes: instances, NodeClaim records (for managed ones) and registered Nodes.
 * @returns the names of the NodeClaims created (the Result's `existedAtStart`)
 */
async function seedNodes(scenario: LoadedScenario, cluster: SimulatedCluster, ec2: SimulatedEc2, store: NodeClaimStore, ids: () => string): Promise<Set<string>> {
  const seeded = new Set<string>();
  const start = scenario.spec.startMs;
  // NodeClaim names a snapshot's Nodes give (their owner references): a generated name must not take one of them.
  const taken = new Set(scenario.spec.nodes.flatMap((n) => (n.nodeClaim !== undefined ? [n.nodeClaim] : [])));
  const generatedName = (pool: string): string => {
    let name = `${pool}-${ids()}`;
    while (taken.has(name)) name = `${pool}-${ids()}`;
    taken.add(name);
    return name;
  };
  for (const n of scenario.spec.nodes) {
    const createdAt = start + n.createdAtSeconds * 1000;
    const nodePool = n.nodePool ? cluster.nodePools.get(n.nodePool) : undefined;
    const nodeClass = nodePool?.spec.template.spec.nodeClassRef.name ?? scenario.nodeClasses[0]?.metadata.name ?? 'default';
    const claimName = nodePool ? (n.nodeClaim ?? generatedName(nodePool.metadata.name)) : '';
    // A managed node that exists at the start is registered and initialized already.
    const managed: Record<string, string> = nodePool ? { [LABEL_NODEPOOL]: nodePool.metadata.name, [LABEL_REGISTERED]: 'true', [LABEL_INITIALIZED]: 'true' } : {};
    const labels = { ...(nodePool?.spec.template.metadata?.labels ?? {}), ...managed, ...n.labels };
    const taints = [...(nodePool?.spec.template.spec.taints ?? []), ...n.taints];
    const instance = await ec2.adopt({
      instanceType: n.instanceType,
      zone: n.zone,
      capacityType: n.capacityType,
      nodeClaim: claimName,
      nodeClass,
      labels,
      taints,
      tags: nodePool ? { 'karpenter.sh/nodeclaim': claimName, [LABEL_NODEPOOL]: nodePool.metadata.name, 'eks:eks-cluster-name': SIMULATED_CLUSTER_NAME, [TAG_SKIFF_CLUSTER]: SIMULATED_CLUSTER_NAME } : {},
      launchedAt: createdAt,
      ...(n.allocatable ? { allocatable: n.allocatable } : {}),
    });
    const node = cluster.registerNode(instance, { ready: true, createdAt, name: n.name });
    // A managed node registered already carries its NodePool template's annotations and the termination finalizer
    // (registration added them).
    Object.assign(node, { annotations: { ...(nodePool?.spec.template.metadata?.annotations ?? {}), ...n.annotations } });
    if (nodePool) node.finalizers = [TERMINATION_FINALIZER];
    cluster.nodesChanged();
    if (nodePool) {
      const iso = new Date(createdAt).toISOString();
      await store.create({
        name: claimName,
        nodePool: nodePool.metadata.name,
        nodeClass,
        state: 'Initialized',
        requirements: [],
        instanceTypes: [n.instanceType],
        resources: {},
        labels: instance.labels,
        taints,
        startupTaints: [],
        nominatedPods: [],
        instanceId: instance.instanceId,
        providerId: node.providerId,
        nodeName: node.name,
        instanceType: n.instanceType,
        zone: n.zone,
        capacityType: n.capacityType,
        price: instance.price,
        allocatable: instance.allocatable,
        createdAt: iso,
        launchedAt: iso,
        registeredAt: iso,
        initializedAt: iso,
        ...nodeClaimExtras(nodePool, cluster.nodeClasses.get(nodeClass)),
      });
      seeded.add(claimName);
    }
  }
  return seeded;
}

/** The EventBridge scheduled event of a schedule rule (`skiff-lifecycle`, `skiff-disruption`) at `atMs`. */
function scheduledEvent(atMs: number, region: string, rule = 'lifecycle'): ScheduledEvent {
  return {
    version: '0',
    id: `${rule}-${atMs}`,
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: '000000000000',
    time: new Date(atMs).toISOString(),
    region,
    resources: [`arn:aws:events:${region}:000000000000:rule/skiff-${rule}`],
    detail: {},
  };
}

/**
 * A controller's follow-up queue on the virtual clock: a request runs `pass` at its slot (`followUpSlot`), once per
 * slot however many passes asked for it, as the FIFO queue's deduplication id makes it on AWS; none after `endMs`.
 */
function followUpPassesOnClock(clock: VirtualClock, endMs: number, controller: FollowUpController, pass: (slotMs: number) => Promise<void>): FollowUpPasses {
  const slots = new Set<number>();
  return {
    request: async (atMs) => {
      const slot = followUpSlot(atMs);
      if (slot > endMs || slots.has(slot)) return;
      slots.add(slot);
      clock.at(slot, `${controller} follow-up`, async () => {
        slots.delete(slot);
        await pass(slot);
      });
    },
  };
}

/** The SQS batch a follow-up pass requested for `slotMs` arrives as (one message from the controller's follow-up queue). */
function followUpEvent(slotMs: number, region: string, controller: FollowUpController): SQSEvent {
  const id = `${controller}-follow-up-${slotMs}`;
  return {
    Records: [
      {
        messageId: id,
        receiptHandle: id,
        body: JSON.stringify({ kind: `${controller}-follow-up`, slot: new Date(slotMs).toISOString(), requestedAt: new Date(slotMs - FOLLOW_UP_AFTER_MS).toISOString() }),
        attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(slotMs), SenderId: `skiff-${controller}`, ApproximateFirstReceiveTimestamp: String(slotMs), MessageGroupId: controller, MessageDeduplicationId: String(slotMs) },
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: `arn:aws:sqs:${region}:000000000000:skiff-${controller}-follow-up.fifo`,
        awsRegion: region,
      },
    ],
  };
}

/** `count` live nodes whose labels include every `nodeSelector` pair and that `want` accepts, oldest first (then by name). */
function selectNodes(cluster: SimulatedCluster, nodeSelector: Readonly<Record<string, string>>, count: number, want: (node: SimNode) => boolean = () => true): SimNode[] {
  return [...cluster.nodes.values()]
    .filter((n) => Object.entries(nodeSelector).every(([k, v]) => n.labels[k] === v) && want(n))
    .sort((a, b) => a.createdAt - b.createdAt || a.name.localeCompare(b.name))
    .slice(0, count);
}

/** Kinds a `delete` event names without a namespace. */
const CLUSTER_SCOPED_KINDS: ReadonlySet<string> = new Set(['NodePool', 'EC2NodeClass', 'Node', 'NodeClaim']);

/** Records that a timeline event found nothing to act on (it is skipped, the run goes on). */
function noTarget(cluster: SimulatedCluster, event: ScenarioEvent, what: string): void {
  void cluster.recordEvent({ type: 'Warning', reason: 'ScenarioEventSkipped', object: `Scenario/${event.type}`, message: `spec.events[${event.index}] (${event.type}) matched ${what}; skipped` });
}

/** What timeline events act on: the simulated world and the interruption queue. */
interface EventWorld {
  readonly cluster: SimulatedCluster;
  readonly ec2: SimulatedEc2;
  readonly clock: VirtualClock;
  readonly region: string;
  /** Sends an EventBridge event to the interruption queue. */
  readonly sendInterruption: (event: EventBridgeEvent) => void;
}

/**
 * An instance changes state out of band: the simulated EC2 applies it and EventBridge sends the EC2 Instance
 * State-change Notification to the interruption queue; then {@link nodeFollowsInstance}.
 * @returns false when the simulated EC2 has no such (non-terminated) instance
 */
function changeInstanceState(world: EventWorld, instanceId: string, state: InstanceState): boolean {
  const instance = world.ec2.setInstanceState(instanceId, state);
  if (!instance) return false;
  world.sendInterruption(stateChangeNotification({ atMs: world.clock.now(), region: world.region }, instanceId, state));
  nodeFollowsInstance(world, instanceId, state);
  return true;
}

/**
 * The Node of an instance that changed state: a stopped or terminated instance's Node turns NotReady after
 * {@link NODE_MONITOR_GRACE_MS}, one running again turns Ready once its kubelet is back. Skiff notices through the
 * interruption controller (the state-change notification) and the lifecycle controller (instance gone → NodeClaim
 * `InstanceTerminated`, when nothing disrupted it first).
 */
function nodeFollowsInstance(world: EventWorld, instanceId: string, state: InstanceState): void {
  const { cluster, clock } = world;
  const node = [...cluster.nodes.values()].find((n) => n.instanceId === instanceId);
  if (!node) return;
  const up = state === 'running';
  if (up || state === 'pending') {
    if (up) clock.after(15_000, `kubelet of ${instanceId} is back`, () => cluster.setNodeReady(node, true));
    return;
  }
  clock.after(NODE_MONITOR_GRACE_MS, `node ${node.name} stops reporting`, () => cluster.setNodeReady(node, false));
}

/** Nodes whose instance is running (optionally: spot only), selected as {@link selectNodes} does. */
function nodesWithRunningInstance(world: EventWorld, nodeSelector: Readonly<Record<string, string>>, count: number, spotOnly: boolean): SimNode[] {
  return selectNodes(world.cluster, nodeSelector, count, (n) =>
    world.ec2.instances.some((i) => i.instanceId === n.instanceId && i.state === 'running' && (!spotOnly || i.capacityType === 'spot')),
  );
}

/** How long after its AWS Health notice a simulated scheduled maintenance is due to start: 14 days (Health pushes them about two weeks ahead). */
export const SCHEDULED_MAINTENANCE_LEAD_MS = 14 * 24 * 60 * 60 * 1000;

/** Applies one timeline event. */
function applyEvent(event: ScenarioEvent, world: EventWorld): void {
  const { cluster, ec2, clock } = world;
  const now = clock.now();
  const origin = { atMs: now, region: world.region };
  switch (event.type) {
    case 'scale':
      cluster.scale(event.scale.kind, event.scale.namespace, event.scale.name, event.scale.replicas);
      return;
    case 'apply':
      cluster.apply(event.apply);
      return;
    case 'delete':
      // A Node deleted by a user (`kubectl delete node`): with Skiff's termination finalizer it only gets a
      // deletionTimestamp; the relay's node event makes the lifecycle controller start its graceful termination (the
      // disruption controller drains it, terminates the instance and removes the finalizer). A Node without the
      // finalizer goes at once with its pods.
      // A NodeClaim deleted by a user (`kubectl delete nodeclaim`): its mirror object only records the request (Skiff's
      // finalizer holds it); the lifecycle controller's next pass starts the same graceful termination.
      // Whatever the kind, a name that matches nothing (a typo, an object already gone) is skipped with a word, as
      // `kubectl delete` answers NotFound.
      {
        const { kind, name } = event.delete;
        const namespace = event.delete.namespace ?? 'default';
        if (!cluster.has(kind, namespace, name)) return noTarget(cluster, event, `no ${kind} named ${CLUSTER_SCOPED_KINDS.has(kind) ? name : `${namespace}/${name}`}`);
        cluster.delete(kind, namespace, name);
      }
      return;
    case 'nodeCondition': {
      const { nodeSelector, count, ready } = event.nodeCondition;
      const nodes = selectNodes(cluster, nodeSelector, count, (n) => n.ready !== ready);
      if (nodes.length === 0) return noTarget(cluster, event, `no ${ready ? 'NotReady' : 'Ready'} node with labels ${JSON.stringify(nodeSelector)}`);
      for (const node of nodes) cluster.setNodeReady(node, ready);
      return;
    }
    case 'instanceStateChange': {
      const change = event.instanceStateChange;
      if (change.instanceId !== undefined) {
        // A foreign instance (or one of the simulation's own, by id): the notification is sent whether or not the
        // simulated EC2 knows the instance (an instance of the account that no NodeClaim owns: Skiff ignores it).
        if (!changeInstanceState(world, change.instanceId, change.state)) world.sendInterruption(stateChangeNotification(origin, change.instanceId, change.state));
        return;
      }
      const nodes = selectNodes(cluster, change.nodeSelector, change.count, (n) => ec2.instances.some((i) => i.instanceId === n.instanceId && i.state !== 'terminated' && i.state !== change.state));
      if (nodes.length === 0) return noTarget(cluster, event, `no node with labels ${JSON.stringify(change.nodeSelector)} whose instance could become ${change.state}`);
      for (const node of nodes) changeInstanceState(world, node.instanceId, change.state);
      return;
    }
    case 'insufficientCapacity': {
      const ice = event.insufficientCapacity;
      ec2.injectCapacityError({ instanceType: ice.instanceType, zone: ice.zone, capacityType: ice.capacityType }, now, now + ice.forSeconds * 1000, ice.errorCode);
      return;
    }
    case 'annotate': {
      const a = event.annotate;
      const limit = a.count ?? Number.POSITIVE_INFINITY;
      const targets: (SimNode | SimPod)[] =
        a.kind === 'Node'
          ? a.name !== undefined
            ? [cluster.nodes.get(a.name)].filter((n): n is SimNode => n !== undefined)
            : selectNodes(cluster, a.nodeSelector ?? {}, limit)
          : [...cluster.pods.values()]
              .filter((p) => p.namespace === (a.namespace ?? 'default') && (a.name !== undefined ? p.name === a.name : Object.entries(a.selector ?? {}).every(([k, v]) => p.labels[k] === v)))
              .sort((x, y) => x.createdAt - y.createdAt || x.name.localeCompare(y.name))
              .slice(0, limit);
      if (targets.length === 0) return noTarget(cluster, event, `no ${a.kind}${a.name !== undefined ? ` named ${a.name}` : ' matching its selector'}`);
      for (const t of targets) cluster.annotate(t, a.annotations);
      return;
    }
    case 'taint': {
      const nodes = selectNodes(cluster, event.taint.nodeSelector, event.taint.count ?? Number.POSITIVE_INFINITY);
      if (nodes.length === 0) return noTarget(cluster, event, `no node with labels ${JSON.stringify(event.taint.nodeSelector)}`);
      for (const n of nodes) cluster.taintNode(n, event.taint.taints);
      return;
    }
    case 'spotInterruption': {
      // The warning now; EC2 terminates the instance two minutes later (then the state-change notifications).
      const { nodeSelector, count } = event.spotInterruption;
      const nodes = nodesWithRunningInstance(world, nodeSelector, count, true);
      if (nodes.length === 0) return noTarget(cluster, event, `no node with labels ${JSON.stringify(nodeSelector)} on a running spot instance`);
      for (const node of nodes) {
        const reclaimed = ec2.reclaimSpot(
          node.instanceId,
          (instance) => {
            const at = { atMs: clock.now(), region: world.region };
            world.sendInterruption(stateChangeNotification(at, instance.instanceId, 'shutting-down'));
            world.sendInterruption(stateChangeNotification(at, instance.instanceId, 'terminated'));
            nodeFollowsInstance(world, instance.instanceId, 'terminated');
          },
          SPOT_INTERRUPTION_NOTICE_MS,
        );
        if (reclaimed) world.sendInterruption(spotInterruptionWarning(origin, node.instanceId, 'terminate'));
      }
      return;
    }
    case 'rebalanceRecommendation': {
      const { nodeSelector, count } = event.rebalanceRecommendation;
      const nodes = nodesWithRunningInstance(world, nodeSelector, count, true);
      if (nodes.length === 0) return noTarget(cluster, event, `no node with labels ${JSON.stringify(nodeSelector)} on a running spot instance`);
      for (const node of nodes) world.sendInterruption(rebalanceRecommendation(origin, node.instanceId));
      return;
    }
    case 'scheduledMaintenance': {
      // One AWS Health event naming every selected instance; the instances keep running.
      const { nodeSelector, count } = event.scheduledMaintenance;
      const nodes = nodesWithRunningInstance(world, nodeSelector, count, false);
      if (nodes.length === 0) return noTarget(cluster, event, `no node with labels ${JSON.stringify(nodeSelector)} on a running instance`);
      world.sendInterruption(healthScheduledChange(origin, nodes.map((n) => n.instanceId), now + SCHEDULED_MAINTENANCE_LEAD_MS));
      return;
    }
    default:
      return event satisfies never;
  }
}

/** The instances not terminated (running, pending or stopping), for the probe. */
function liveInstances(ec2: SimulatedEc2): SimInstance[] {
  return ec2.instances.filter((i) => i.state !== 'terminated');
}
