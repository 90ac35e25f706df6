/**
 * B5, cost over time (issue 20): a scenario run through the real simulation — the real handlers, the simulated
 * kube-scheduler binding by its own scoring, consolidation, the observer — with a probe that samples the fleet every
 * interval. Each sample's fleet price is divided by the pattern LP bound (`pattern-lp.ts`) of the pods that exist at
 * that instant (bound or pending, DaemonSet pods excluded; their overhead is in the bound's node room), on the
 * scenario's own NodePools. A plan cannot cost less than the bound, so the ratio says how much the fleet pays above
 * the cheapest conceivable one, minute by minute.
 *
 *   npx tsx bench/cost-over-time.ts [scenario] [--every 60s] [--seed 1] [--consolidation skiff|karpenter] [--provisioning skiff|karpenter]    # one case, a table on stdout
 *
 * Figures per case: the time-weighted mean ratio, the ratio at steady state before each step (the last sample
 * before a timeline event) and after it (the last sample before the next step or the end), the minutes after each
 * step until the ratio is within 1.25× and 1.10×, evictions per pod, disruptions per simulated hour, the wall time of
 * each disruption pass (p50, p99) by fleet size, and the simulation's wall time.
 */
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError, Option } from 'commander';
import { parseDuration } from '../shared/core/api/duration.js';
import { loadCatalog } from '../shared/core/instancetypes/catalog.js';
import { buildNodePoolTemplate } from '../shared/core/provisioning/nodepool-template.js';
import { toSchedulingPod } from '../shared/core/provisioning/pod.js';
import type { NodePoolTemplate } from '../shared/core/provisioning/types.js';
import { simulateScenario } from '../shared/cli/simulate.js';
import type { ConsolidationSetting } from '../shared/controllers/disruption/deps.js';
import type { ProvisioningSetting } from '../shared/controllers/provision.js';
import type { DisruptionPassSample, FleetSample } from '../shared/sim/engine.js';
import type { LoadedScenario } from '../shared/sim/scenario-loader.js';
import { SimulatedEc2 } from '../shared/sim/simulated-ec2.js';
import { VirtualClock } from '../shared/sim/virtual-clock.js';
import { patternLpBound } from './pattern-lp.js';
import { percentile } from './stats.js';

/** One sample of a case: virtual minute, fleet price and bound (USD per hour), their ratio. */
export interface CostSample {
  /** Minutes since the scenario start. */
  readonly minute: number;
  readonly fleetUSD: number;
  readonly boundUSD: number;
  /** fleet ÷ bound; 1 when both are 0 (nothing to run, nothing running). */
  readonly ratio: number;
  readonly pods: number;
  readonly instances: number;
}

/** The figures around one timeline step. */
export interface StepFigures {
  /** Minutes since the start. */
  readonly atMinute: number;
  /** Ratio of the last sample before the step; null for the start. */
  readonly before: number | null;
  /** Ratio of the last sample before the next step (or the end). */
  readonly after: number;
  /** Minutes after the step until the ratio is ≤ 1.25 (and stays so until the next step); null: never. */
  readonly minutesTo125: number | null;
  /** The same for 1.10. */
  readonly minutesTo110: number | null;
}

/** Disruption-pass wall and CPU times of fleets of about one size. */
export interface PassTimes {
  /** Fleet-size bucket: passes with at most this many instances (and more than the previous bucket). */
  readonly upToNodes: number;
  readonly passes: number;
  /** Wall time, ms. */
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** CPU time of the process over the pass, ms (`DisruptionPassSample.cpuMs`): the figure the goal is judged by. */
  readonly cpuP50Ms: number;
  readonly cpuP99Ms: number;
}

/** B5's figures for one case. */
export interface CostOverTime {
  readonly scenario: string;
  readonly samples: readonly CostSample[];
  /**
   * Time-weighted mean of the ratio over the run (samples are evenly spaced, so their mean), the sample at the start
   * left out (no fleet can exist yet).
   */
  readonly meanRatio: number;
  /** What the fleet cost over the run ÷ what the bound would have: Σ fleet ÷ Σ bound over the same samples. */
  readonly costRatio: number;
  readonly steps: readonly StepFigures[];
  readonly evictionsPerPod: number;
  readonly disruptionsPerHour: number;
  readonly passTimes: readonly PassTimes[];
  readonly totalUSD: number;
  /** Pods never bound by the end (the Result's `unschedulable`). */
  readonly unplaced: number;
  readonly violations: Readonly<Record<string, number>>;
  /** Wall time of the simulation alone (bounds excluded), seconds. */
  readonly simulationSeconds: number;
  /** Wall time of the bounds, seconds. */
  readonly boundSeconds: number;
}

/** Fleet-size buckets of {@link PassTimes}, instances (issue 20: 200, 700 and 2,000 nodes). */
export const PASS_BUCKETS = [200, 700, 2000, Number.POSITIVE_INFINITY] as const;

/**
 * Runs one case.
 * @param path a scenario folder or file
 * @param options sample interval (virtual ms), seed, the consolidation setting (`karpenter`: Karpenter's moves only;
 *   default `skiff`) and the provisioning setting (`karpenter`: Karpenter's own placement, no binding replay; default
 *   `skiff`); both `karpenter` make the Karpenter-like baseline
 * @throws {ValidationError} when the scenario does not load; {@link Error} when a bound's LP fails
 */
export async function costOverTime(path: string, options: { readonly everyMs?: number; readonly seed?: number; readonly consolidation?: ConsolidationSetting; readonly provisioning?: ProvisioningSetting } = {}): Promise<CostOverTime> {
  const everyMs = options.everyMs ?? 60_000;
  const raw: { atMs: number; fleetUSD: number; instances: number; pods: FleetSample['pods'] }[] = [];
  const passes: DisruptionPassSample[] = [];
  const started = performance.now();
  const { scenario, result } = await simulateScenario(path, {
    seed: options.seed ?? 1,
    now: 0,
    ...(options.consolidation ? { consolidation: options.consolidation } : {}),
    ...(options.provisioning ? { provisioning: options.provisioning } : {}),
    probe: {
      everyMs,
      // The pods are the simulation's live objects: keep what the bound needs now.
      sample: (s) => raw.push({ atMs: s.atMs, fleetUSD: s.fleetHourlyUSD, instances: s.instances, pods: s.pods.map((p) => ({ ...p })) }),
      disruptionPass: (p) => passes.push(p),
    },
  });
  const simulationSeconds = (performance.now() - started) / 1000;

  const boundStarted = performance.now();
  const templates = await scenarioTemplates(scenario);
  const bounds = new Map<string, number>();
  const samples: CostSample[] = [];
  for (const s of raw) {
    const pods = s.pods.map((p) => toSchedulingPod(p, p.createdAt));
    const key = multisetKey(s.pods);
    let bound = bounds.get(key);
    if (bound === undefined) {
      bound = pods.length === 0 ? 0 : (await patternLpBound(pods, templates)).bound;
      bounds.set(key, bound);
    }
    const ratio = bound === 0 ? (s.fleetUSD === 0 ? 1 : Number.POSITIVE_INFINITY) : s.fleetUSD / bound;
    samples.push({ minute: (s.atMs - scenario.spec.startMs) / 60_000, fleetUSD: s.fleetUSD, boundUSD: bound, ratio, pods: s.pods.length, instances: s.instances });
  }
  const boundSeconds = (performance.now() - boundStarted) / 1000;

  const hours = scenario.spec.durationSeconds / 3600;
  const podCount = result.pods.filter((p) => !p.owner?.startsWith('DaemonSet/')).length;
  return {
    scenario: scenario.name,
    samples,
    meanRatio: mean(samples.slice(1).filter((s) => Number.isFinite(s.ratio)).map((s) => s.ratio)),
    costRatio: samples.slice(1).reduce((a, s) => a + s.fleetUSD, 0) / Math.max(1e-9, samples.slice(1).reduce((a, s) => a + s.boundUSD, 0)),
    steps: stepFigures(samples, stepMinutes(scenario)),
    evictionsPerPod: podCount === 0 ? 0 : result.pods.reduce((n, p) => n + p.evictions, 0) / podCount,
    disruptionsPerHour: result.disruptions.length / hours,
    passTimes: passTimes(passes),
    totalUSD: result.cost.totalUSD,
    unplaced: result.unschedulable.length,
    violations: Object.fromEntries(Object.entries(result.violations).filter((e): e is [string, number] => typeof e[1] === "number")),
    simulationSeconds,
    boundSeconds,
  };
}

/** The scenario's NodePools as solver templates on the simulated catalogue (limits as written, no usage). */
async function scenarioTemplates(scenario: LoadedScenario): Promise<NodePoolTemplate[]> {
  const ec2 = new SimulatedEc2(new VirtualClock(0), { region: scenario.spec.region, catalog: loadCatalog(), vmMemoryOverheadPercent: scenario.spec.settings.vmMemoryOverheadPercent, clusterName: 'bench', onRegister: () => {} });
  const templates: NodePoolTemplate[] = [];
  for (const np of scenario.nodePools) {
    const types = await ec2.getInstanceTypes({ nodeClass: np.spec.template.spec.nodeClassRef.name });
    templates.push(buildNodePoolTemplate(np, types, scenario.daemonSets, {}));
  }
  return templates;
}

/** A key equal for equal multisets of pod shapes (requests, scheduling constraints), so repeated bounds are cached. */
function multisetKey(pods: FleetSample['pods']): string {
  const counts = new Map<string, number>();
  for (const p of pods) {
    const k = JSON.stringify([p.spec.containers?.map((c) => c.resources), p.spec.initContainers?.map((c) => c.resources), p.spec.nodeSelector, p.spec.affinity?.nodeAffinity, p.spec.tolerations]);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([k, n]) => `${n}×${k}`).join('|');
}

/** Minutes of the timeline's steps (scale and apply events), deduplicated, ascending. */
function stepMinutes(scenario: LoadedScenario): number[] {
  const at = scenario.spec.events.filter((e) => e.type === 'scale' || e.type === 'apply').map((e) => e.atSeconds / 60);
  return [...new Set(at)].sort((a, b) => a - b);
}

/**
 * Figures around each step, and around the start as a step of its own (the first burst).
 * @param samples evenly spaced, ascending
 */
export function stepFigures(samples: readonly CostSample[], steps: readonly number[]): StepFigures[] {
  const all = [0, ...steps.filter((m) => m > 0)];
  return all.map((at, i) => {
    const next = all[i + 1] ?? Number.POSITIVE_INFINITY;
    const before = [...samples].reverse().find((s) => s.minute < at);
    const window = samples.filter((s) => s.minute >= at && s.minute < next);
    const after = window.at(-1) ?? before;
    const settle = (limit: number): number | null => {
      let from: number | null = null;
      for (const s of window) {
        if (s.ratio <= limit) from ??= s.minute - at;
        else from = null;
      }
      return from;
    };
    return { atMinute: at, before: before?.ratio ?? null, after: after?.ratio ?? 1, minutesTo125: settle(1.25), minutesTo110: settle(1.1) };
  });
}

/** p50 and p99 of the disruption passes' wall and CPU times per fleet-size bucket (empty buckets left out). */
export function passTimes(passes: readonly DisruptionPassSample[]): PassTimes[] {
  const out: PassTimes[] = [];
  let low = 0;
  for (const high of PASS_BUCKETS) {
    const bucket = passes.filter((p) => p.instances > low && p.instances <= high);
    const ms = bucket.map((p) => p.wallMs);
    const cpu = bucket.map((p) => p.cpuMs);
    if (ms.length > 0) out.push({ upToNodes: high, passes: ms.length, p50Ms: percentile(ms, 50), p99Ms: percentile(ms, 99), cpuP50Ms: percentile(cpu, 50), cpuP99Ms: percentile(cpu, 99) });
    low = high;
  }
  return out;
}

function mean(xs: readonly number[]): number {
  return xs.length === 0 ? 1 : xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** Renders one case as a plain-text table (the CLI's output). */
export function renderCostOverTime(c: CostOverTime): string {
  const f = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : '∞');
  /** Minutes, to a tenth where not whole. */
  const m = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(1));
  const lines = [
    `B5 ${c.scenario}: mean fleet/bound ${f(c.meanRatio)} (cost-weighted ${f(c.costRatio)}), total $${c.totalUSD.toFixed(2)}, ${c.evictionsPerPod.toFixed(2)} evictions per pod, ${c.disruptionsPerHour.toFixed(1)} disruptions/h, ${c.unplaced} unplaced`,
    `  simulation ${c.simulationSeconds.toFixed(1)} s wall, bounds ${c.boundSeconds.toFixed(1)} s; violations ${JSON.stringify(c.violations)}`,
    ...c.steps.slice(0, 20).map((s) => `  step at ${m(s.atMinute)} min: before ${s.before === null ? '-' : f(s.before)}, after ${f(s.after)}, within 1.25× after ${s.minutesTo125 === null ? 'never' : `${m(s.minutesTo125)} min`}, within 1.10× after ${s.minutesTo110 === null ? 'never' : `${m(s.minutesTo110)} min`}`),
    ...(c.steps.length > 20 ? [`  … ${c.steps.length - 20} more steps`] : []),
    ...c.passTimes.map((p) => `  disruption pass ≤${p.upToNodes} nodes: ${p.passes} passes, CPU p50 ${p.cpuP50Ms.toFixed(0)} ms, p99 ${p.cpuP99Ms.toFixed(0)} ms; wall p50 ${p.p50Ms.toFixed(0)} ms, p99 ${p.p99Ms.toFixed(0)} ms`),
    '  minute  fleet$/h  bound$/h  ratio  pods  nodes',
    ...c.samples.map((s) => `  ${String(s.minute).padStart(6)}  ${s.fleetUSD.toFixed(2).padStart(8)}  ${s.boundUSD.toFixed(2).padStart(8)}  ${f(s.ratio).padStart(5)}  ${String(s.pods).padStart(4)}  ${String(s.instances).padStart(5)}`),
  ];
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const program = new Command('cost-over-time')
    .description('B5: a scenario through the simulation, the fleet against the pattern LP bound minute by minute')
    .argument('[scenario]', 'scenario folder or file', 'examples/seed')
    .addOption(
      new Option('--every <duration>', 'sample interval, a Go duration of at least 1s').default('60s').argParser((v) => {
        let seconds: number;
        try {
          seconds = parseDuration(v);
        } catch (e) {
          throw new InvalidArgumentError(e instanceof Error ? e.message : String(e));
        }
        if (!(seconds >= 1)) throw new InvalidArgumentError(`${v} is under 1s`);
        return v;
      }),
    )
    .addOption(
      new Option('--seed <n>', 'seed, an integer 0–4294967295').default('1').argParser((v) => {
        if (!/^\d+$/.test(v) || Number(v) > 4_294_967_295) throw new InvalidArgumentError(`${v} is not an integer from 0 to 4294967295`);
        return v;
      }),
    )
    .addOption(new Option('--consolidation <setting>', "Skiff's moves, or Karpenter's only").choices(['skiff', 'karpenter']).default('skiff'))
    .addOption(new Option('--provisioning <setting>', "plans that survive kube-scheduler's binding, or Karpenter's own placement only").choices(['skiff', 'karpenter']).default('skiff'))
    .exitOverride((e) => process.exit(e.exitCode === 0 ? 0 : 2));
  program.parse();
  const o = program.opts<{ every: string; seed: string; consolidation: ConsolidationSetting; provisioning: ProvisioningSetting }>();
  const c = await costOverTime(program.args[0] ?? 'examples/seed', { everyMs: parseDuration(o.every) * 1000, seed: Number(o.seed), consolidation: o.consolidation, provisioning: o.provisioning });
  console.log(renderCostOverTime(c));
}
