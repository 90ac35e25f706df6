/**
 * The Alibaba trace snapshot of the cost benchmark (B3): the pods of `examples/alibaba-trace` running at the instant
 * the most of them run at once (each pod counted from its Job's `apply` for its `skiff.dev/run-for`, or to the end of
 * the scenario without one; no node launch wait), with the scenario's own NodePools `cpu` and `gpu` as templates.
 * See `scripts/build-alibaba-trace.ts` for how the scenario was made from the trace.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runForSeconds } from '../shared/core/api/workloads.js';
import { loadCatalog } from '../shared/core/instancetypes/catalog.js';
import { buildNodePoolTemplate } from '../shared/core/provisioning/nodepool-template.js';
import { toSchedulingPod, type PodSpecLike, type SchedulingPod } from '../shared/core/provisioning/pod.js';
import type { NodePoolTemplate } from '../shared/core/provisioning/types.js';
import { loadScenario } from '../shared/sim/scenario-loader.js';
import { SimulatedEc2 } from '../shared/sim/simulated-ec2.js';
import { VirtualClock } from '../shared/sim/virtual-clock.js';

/** The scenario folder, from the repository root. */
export const TRACE_SCENARIO = 'examples/alibaba-trace';

/** A snapshot of the trace: the pods running at one instant and the NodePools that serve them. */
export interface TraceSnapshot {
  /** Offset of the instant from the scenario start, seconds. */
  readonly atSeconds: number;
  readonly pods: readonly SchedulingPod[];
  /** The scenario's NodePools as solver templates (limits as written, no usage). */
  readonly templates: readonly NodePoolTemplate[];
}

/**
 * Loads the trace scenario and takes the snapshot with the most concurrently running pods (earliest such instant).
 * @param root the repository root
 * @throws {ValidationError} when the scenario does not load
 */
export async function traceSnapshot(root = fileURLToPath(new URL('..', import.meta.url))): Promise<TraceSnapshot> {
  const scenario = await loadScenario(join(root, TRACE_SCENARIO), { now: 0 });
  const end = scenario.spec.durationSeconds;
  const jobs: { at: number; until: number; count: number; name: string; spec: PodSpecLike; labels: Readonly<Record<string, string>> }[] = [];
  for (const e of scenario.spec.events) {
    if (e.type !== 'apply' || e.apply.kind !== 'Job') continue;
    const job = e.apply.object;
    const runFor = runForSeconds(job.spec.template);
    jobs.push({
      at: e.atSeconds,
      until: runFor === null ? end : Math.min(end, e.atSeconds + runFor),
      count: job.spec.parallelism,
      name: job.metadata.name,
      spec: job.spec.template.spec as PodSpecLike,
      labels: job.spec.template.metadata.labels ?? {},
    });
  }
  // Sweep: the running count only rises at an arrival, so the best instant is one of the arrival times.
  const changes = jobs.flatMap((j) => [{ t: j.at, d: j.count }, { t: j.until, d: -j.count }]).sort((a, b) => a.t - b.t || a.d - b.d);
  let running = 0;
  let best = { t: 0, running: -1 };
  for (const c of changes) {
    running += c.d;
    if (running > best.running) best = { t: c.t, running };
  }
  const pods = jobs
    .filter((j) => j.at <= best.t && best.t < j.until)
    .flatMap((j) => Array.from({ length: j.count }, (_, i) => toSchedulingPod({ namespace: 'default', name: `${j.name}-${i}`, labels: j.labels, spec: j.spec }, scenario.spec.startMs + j.at * 1000)));
  const ec2 = new SimulatedEc2(new VirtualClock(0), { region: scenario.spec.region, catalog: loadCatalog(), vmMemoryOverheadPercent: scenario.spec.settings.vmMemoryOverheadPercent, clusterName: 'bench', onRegister: () => {} });
  const types = await ec2.getInstanceTypes({ nodeClass: 'default' });
  const templates = scenario.nodePools.map((np) => buildNodePoolTemplate(np, types, scenario.daemonSets, {}));
  return { atSeconds: best.t, pods, templates };
}
