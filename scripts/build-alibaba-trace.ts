/**
 * Builds the example scenario `examples/alibaba-trace/` from the Alibaba GPU cluster trace.
 *
 * Usage: `npm run examples:build` (reads `../shared/data` next to the repository root, or the folder named by the
 * `SKIFF_REFERENCE_DATA` environment variable; a build-time input: nothing reads it at run time).
 *
 * Inputs (see the reference folder's README.md for sources and licences):
 * - `alibaba-openb-pod-list-default.csv`: 8,152 pod requests with creation and deletion times, from
 *   alibaba/clusterdata `cluster-trace-gpu-v2023` (Weng et al., USENIX ATC 2023), CC BY 4.0;
 * - `ec2-instance-types.json` and `ec2-on-demand-prices-us-east-1.json`: only to check that every pod fits some
 *   instance type its NodePool allows, and to name the cheapest one in the report.
 *
 * Output: an EC2NodeClass, two NodePools (`cpu`, `gpu`), one `kind: Scenario` document whose events `apply` a
 * `batch/v1` Job per group of identical pods, and a README. The trace's span (first creation to last deletion) is
 * compressed linearly onto 24 h and every lifetime is scaled by the same factor.
 *
 * The output is deterministic (no wall-clock time, stable ordering), so running the script twice produces the same
 * bytes. This is the only place that reads the trace: tests read the generated folder.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Document, isMap, isScalar, isSeq, type ToStringOptions } from 'yaml';
import * as z from 'zod';
import { cpuMillicores, mebibytes, parseQuantity } from '../shared/core/resources/quantity.js';

/** The repository root (the folder holding `package.json`). */
export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Where the scenario folder is written, relative to {@link REPO_ROOT}. */
export const OUTPUT_DIR = 'examples/alibaba-trace';

/** The file names of the inputs inside the reference data folder. */
export const SOURCE_FILES = {
  trace: 'alibaba-openb-pod-list-default.csv',
  instanceTypes: 'ec2-instance-types.json',
  prices: 'ec2-on-demand-prices-us-east-1.json',
} as const;

/** Number of pods (CSV rows) in the trace; the generated scenario represents exactly this many pods. */
export const TRACE_POD_COUNT = 8152;

/** The scenario's virtual clock start (UTC). */
export const SCENARIO_START = '2026-03-02T00:00:00Z';

/** The scenario's length, seconds (24 h): the trace's whole span is compressed onto it. */
export const SCENARIO_SECONDS = 86_400;

/** Pods with identical requests and similar lifetimes whose arrivals fall in the same window (seconds) share one Job. */
export const GROUP_WINDOW_SECONDS = 60;

/** How far apart two scaled lifetimes may be and still share a Job (see {@link lifetimeClass}). */
export interface LifetimeTolerance {
  /** Lifetimes up to this many scenario seconds form one class. 0 with `relative` 0 keeps lifetimes exact. */
  readonly seconds: number;
  /** Above `seconds`, classes are geometric with this ratio minus one (0.1: each class spans 10 %). */
  readonly relative: number;
}

/**
 * The default {@link LifetimeTolerance}: lifetimes up to 30 s are one class, longer ones classes 10 % wide. A Job
 * runs for the mean of its pods' lifetimes, so no pod's lifetime moves by more than 30 s or 10 % and each Job keeps
 * its pods' total pod-seconds. Exact lifetimes would need 5,563 Jobs (about 2.6 MB of YAML) instead of about 3,460:
 * the trace's diversity is in arrival time × request shape, and most scaled lifetimes are a few seconds, much shorter
 * than a node launch, so merging them changes little in the simulation.
 */
export const LIFETIME_TOLERANCE: LifetimeTolerance = { seconds: 30, relative: 0.1 };

/** Pod template annotation holding how long a Job's pods run before completing (docs/contracts.md#scenario). */
export const RUN_FOR_ANNOTATION = 'skiff.dev/run-for';

/** The extended resource a GPU pod requests. */
export const GPU_RESOURCE = 'nvidia.com/gpu';

/** The container image of every generated pod (never pulled by the simulator). */
export const POD_IMAGE = 'registry.k8s.io/pause:3.10';

/** The node label both NodePools set and every pod selects on. */
export const WORKLOAD_LABEL = 'workload-type';

/**
 * GPU instance families the `gpu` NodePool allows. g4dn (T4), g5 (A10G) and g6 (L4) are the cheapest hosts for the
 * 1-, 2- and 4-GPU pods; g6e (L40S) is needed for the largest 8-GPU pods (120 cores, 720 GiB), which no g5/g6
 * `48xlarge` (≈ 706 GiB allocatable) and no p4d (96 vCPUs) can hold. p3 is not in the instance data.
 */
export const GPU_FAMILIES = ['g4dn', 'g5', 'g6', 'g6e'] as const;

/** A node selector requirement as written in a NodePool (operators used here: `In`, `Gt`). */
export interface PoolRequirement {
  readonly key: string;
  readonly operator: 'In' | 'Gt';
  readonly values: readonly string[];
}

/** Requirements of the `cpu` NodePool: spot or on-demand c/m/r, generation > 4, amd64, Linux. */
export const CPU_POOL_REQUIREMENTS: readonly PoolRequirement[] = [
  { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] },
  { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] },
  { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['4'] },
  { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
  { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
];

/** Requirements of the `gpu` NodePool: on-demand {@link GPU_FAMILIES}, amd64, Linux. */
export const GPU_POOL_REQUIREMENTS: readonly PoolRequirement[] = [
  { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
  { key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: [...GPU_FAMILIES] },
  { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
  { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
];

/** One row of the trace. Times are seconds from the trace's origin; `null` where the CSV cell is empty. */
export interface TracePod {
  readonly name: string;
  /** Requested CPU, millicores. */
  readonly cpuMilli: number;
  /** Requested memory, MiB. */
  readonly memoryMiB: number;
  /** Whole GPUs requested (0 for a CPU-only pod). */
  readonly numGpu: number;
  /** Share of each GPU, thousandths (1000 = a whole GPU; less means a shared GPU). */
  readonly gpuMilli: number;
  readonly gpuSpec: string;
  readonly qos: string;
  readonly phase: string;
  readonly creationTime: number;
  readonly deletionTime: number | null;
  readonly scheduledTime: number | null;
}

const CSV_COLUMNS = [
  'name',
  'cpu_milli',
  'memory_mib',
  'num_gpu',
  'gpu_milli',
  'gpu_spec',
  'qos',
  'pod_phase',
  'creation_time',
  'deletion_time',
  'scheduled_time',
] as const;

/**
 * Parses the trace CSV (header row, then one pod per row; no quoted fields).
 * @param text the CSV text
 * @returns the pods in file order
 * @throws {Error} on a wrong header, a row with the wrong number of cells, or a malformed number (naming the line)
 */
export function parseTraceCsv(text: string): TracePod[] {
  const lines = text.split(/\r?\n/).filter((line) => line.length > 0);
  const header = lines[0]?.split(',') ?? [];
  if (header.join(',') !== CSV_COLUMNS.join(',')) {
    throw new Error(`trace CSV: expected header "${CSV_COLUMNS.join(',')}", got "${header.join(',')}"`);
  }
  return lines.slice(1).map((line, i) => {
    const lineNo = i + 2;
    const cells = line.split(',');
    if (cells.length !== CSV_COLUMNS.length) throw new Error(`trace CSV line ${lineNo}: expected ${CSV_COLUMNS.length} cells, got ${cells.length}`);
    const cell = (column: (typeof CSV_COLUMNS)[number]): string => cells[CSV_COLUMNS.indexOf(column)] ?? '';
    const int = (column: (typeof CSV_COLUMNS)[number]): number => {
      const value = cell(column);
      if (!/^\d+$/.test(value)) throw new Error(`trace CSV line ${lineNo}: ${column} "${value}" is not a non-negative integer`);
      return Number(value);
    };
    const optionalInt = (column: (typeof CSV_COLUMNS)[number]): number | null => (cell(column) === '' ? null : int(column));
    const name = cell('name');
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name)) throw new Error(`trace CSV line ${lineNo}: name "${name}" is not a DNS-1123 label`);
    return {
      name,
      cpuMilli: int('cpu_milli'),
      memoryMiB: int('memory_mib'),
      numGpu: int('num_gpu'),
      gpuMilli: int('gpu_milli'),
      gpuSpec: cell('gpu_spec'),
      qos: cell('qos'),
      phase: cell('pod_phase'),
      creationTime: int('creation_time'),
      deletionTime: optionalInt('deletion_time'),
      scheduledTime: optionalInt('scheduled_time'),
    };
  });
}

/** How trace time maps onto scenario time: `scenario = round((trace − start) / factor)`. */
export interface Compression {
  /** First creation time in the trace, trace seconds. */
  readonly traceStart: number;
  /** Last creation or deletion time in the trace, trace seconds. */
  readonly traceEnd: number;
  /** Trace seconds per scenario second. */
  readonly factor: number;
}

/** One Job of the generated scenario: `count` identical pods arriving together. */
export interface TraceJob {
  /** The Job's name: the name of its first trace pod. */
  readonly name: string;
  /** Arrival, whole seconds after the scenario start. */
  readonly at: number;
  /** How long each pod runs, whole seconds (≥ 1; the mean of its pods' scaled lifetimes); `null` runs to the end. */
  readonly runFor: number | null;
  /** Requested CPU per pod, millicores. */
  readonly cpuMilli: number;
  /** Requested memory per pod, MiB. */
  readonly memoryMiB: number;
  /** Whole GPUs per pod (a fractional GPU share is rounded up to one GPU). */
  readonly gpus: number;
  /** Number of pods (`parallelism` = `completions`). */
  readonly count: number;
  /** Names of the trace pods it stands for, in arrival order. */
  readonly pods: readonly string[];
  /** Each of those pods' own scaled lifetime, seconds (null: runs to the end), same order as `pods`. */
  readonly podRunFors: readonly (number | null)[];
}

/** The compressed trace: the time mapping and the Jobs sorted by arrival, then name. */
export interface CompressedTrace {
  readonly compression: Compression;
  readonly jobs: readonly TraceJob[];
}

/**
 * The class of a scaled lifetime for grouping: `end` for a pod that runs to the end, one class for lifetimes up to
 * `tolerance.seconds`, then geometric classes `(s·r^k, s·r^(k+1)]` with `r = 1 + tolerance.relative`. Computed by
 * repeated multiplication, not logarithms, so the result is the same on every platform.
 * @param runFor scaled lifetime, whole seconds, or null when the pod runs to the end
 * @example lifetimeClass(12, { seconds: 30, relative: 0.1 }) // 'short'
 */
export function lifetimeClass(runFor: number | null, tolerance: LifetimeTolerance = LIFETIME_TOLERANCE): string {
  if (runFor === null) return 'end';
  if (runFor <= tolerance.seconds) return 'short';
  if (tolerance.relative <= 0) return `=${runFor}`;
  let k = 0;
  for (let upper = Math.max(tolerance.seconds, 1) * (1 + tolerance.relative); runFor > upper; upper *= 1 + tolerance.relative) k += 1;
  return `~${k}`;
}

/**
 * Compresses the trace's span linearly onto {@link SCENARIO_SECONDS} and groups pods into Jobs.
 *
 * A pod arrives at its scaled creation time and runs for its scaled lifetime (scaled deletion − scaled creation,
 * at least 1 s, both rounded to whole seconds). A pod with no deletion time, or deleted at the trace's very end
 * (still running when the trace was taken), runs to the end. Pods with identical requests and the same
 * {@link lifetimeClass} arriving in the same `windowSeconds` window form one Job that arrives with the earliest of
 * them and runs for the mean of their lifetimes (rounded, at least 1 s).
 * @param pods the trace, any order
 * @param windowSeconds grouping window, scenario seconds ({@link GROUP_WINDOW_SECONDS}); 1 groups only pods
 *   arriving in the same second
 * @param tolerance how different lifetimes in one Job may be ({@link LIFETIME_TOLERANCE}); `{seconds: 0,
 *   relative: 0}` keeps every lifetime exact
 * @throws {Error} when the trace is empty or spans no time
 */
export function compressTrace(
  pods: readonly TracePod[],
  windowSeconds: number = GROUP_WINDOW_SECONDS,
  tolerance: LifetimeTolerance = LIFETIME_TOLERANCE,
): CompressedTrace {
  if (pods.length === 0) throw new Error('trace is empty');
  const traceStart = Math.min(...pods.map((p) => p.creationTime));
  const traceEnd = Math.max(...pods.map((p) => Math.max(p.creationTime, p.deletionTime ?? 0)));
  if (traceEnd <= traceStart) throw new Error('trace spans no time');
  const span = traceEnd - traceStart;
  const scale = (t: number): number => Math.round(((t - traceStart) * SCENARIO_SECONDS) / span);

  const timed = pods
    .map((pod) => {
      const at = scale(pod.creationTime);
      const runsToEnd = pod.deletionTime === null || pod.deletionTime >= traceEnd;
      const runFor = runsToEnd ? null : Math.max(1, scale(pod.deletionTime ?? traceEnd) - at);
      return { pod, at, runFor };
    })
    .sort((a, b) => a.at - b.at || compareStrings(a.pod.name, b.pod.name));

  const groups = new Map<string, { at: number; pod: TracePod; names: string[]; runFors: (number | null)[] }>();
  for (const { pod, at, runFor } of timed) {
    const key = [Math.floor(at / windowSeconds), pod.cpuMilli, pod.memoryMiB, pod.numGpu, lifetimeClass(runFor, tolerance)].join('|');
    const group = groups.get(key);
    if (group) {
      group.names.push(pod.name);
      group.runFors.push(runFor);
    } else {
      groups.set(key, { at, pod, names: [pod.name], runFors: [runFor] });
    }
  }
  const jobs = [...groups.values()]
    .map((g): TraceJob => {
      const finite = g.runFors.filter((r): r is number => r !== null);
      const runFor = finite.length === 0 ? null : Math.max(1, Math.round(finite.reduce((a, b) => a + b, 0) / finite.length));
      return {
        name: g.pod.name,
        at: g.at,
        runFor,
        cpuMilli: g.pod.cpuMilli,
        memoryMiB: g.pod.memoryMiB,
        gpus: g.pod.numGpu,
        count: g.names.length,
        pods: g.names,
        podRunFors: g.runFors,
      };
    })
    .sort((a, b) => a.at - b.at || compareStrings(a.name, b.name));
  return { compression: { traceStart, traceEnd, factor: span / SCENARIO_SECONDS }, jobs };
}

/**
 * Formats whole seconds as a Go duration (the format Karpenter and Skiff durations use), zero units omitted.
 * @param seconds a non-negative whole number of seconds
 * @throws {Error} on a negative or fractional value
 * @example formatDuration(68677) // '19h4m37s'
 */
export function formatDuration(seconds: number): string {
  if (!Number.isInteger(seconds) || seconds < 0) throw new Error(`cannot format ${seconds} s as a duration`);
  if (seconds === 0) return '0s';
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s ? `${s}s` : ''}`;
}

/** A manifest as plain data. */
export type Manifest = Record<string, unknown>;

/**
 * The EC2NodeClass `default`: AL2023, subnets and security groups discovered by `karpenter.sh/discovery`.
 */
export function nodeClassManifest(): Manifest {
  return {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: 'default' },
    spec: {
      role: 'KarpenterNodeRole-my-cluster',
      amiSelectorTerms: [{ alias: 'al2023@latest' }],
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'my-cluster' } }],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'my-cluster' } }],
    },
  };
}

const NODE_CLASS_REF = { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' };

/**
 * The NodePool `cpu` for CPU-only pods: spot and on-demand c/m/r instances of generation > 4, consolidated when
 * empty or underutilized. Limits: 4,000 cores and 16,000 GiB, about five times the trace's peak CPU-pod demand.
 */
export function cpuNodePoolManifest(): Manifest {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'cpu' },
    spec: {
      template: {
        metadata: { labels: { [WORKLOAD_LABEL]: 'cpu' } },
        spec: {
          nodeClassRef: NODE_CLASS_REF,
          requirements: CPU_POOL_REQUIREMENTS.map((r) => ({ ...r, values: [...r.values] })),
          expireAfter: '720h',
        },
      },
      disruption: {
        consolidationPolicy: 'WhenEmptyOrUnderutilized',
        consolidateAfter: '1m',
        budgets: [{ nodes: '10%' }],
      },
      limits: { cpu: '4000', memory: '16000Gi' },
    },
  };
}

/**
 * The NodePool `gpu` for GPU pods: on-demand {@link GPU_FAMILIES}, tainted `nvidia.com/gpu:NoSchedule`, consolidated
 * only when empty (a GPU job is not moved while it runs). Limits: 1,000 GPUs, 20,000 cores, 100,000 GiB, several
 * times the trace's peak GPU-pod demand.
 */
export function gpuNodePoolManifest(): Manifest {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'gpu' },
    spec: {
      template: {
        metadata: { labels: { [WORKLOAD_LABEL]: 'gpu' } },
        spec: {
          nodeClassRef: NODE_CLASS_REF,
          requirements: GPU_POOL_REQUIREMENTS.map((r) => ({ ...r, values: [...r.values] })),
          taints: [{ key: GPU_RESOURCE, effect: 'NoSchedule' }],
          expireAfter: '720h',
        },
      },
      disruption: {
        consolidationPolicy: 'WhenEmpty',
        consolidateAfter: '1m',
        budgets: [{ nodes: '10%' }],
      },
      limits: { cpu: '20000', memory: '100000Gi', [GPU_RESOURCE]: '1000' },
    },
  };
}

/**
 * The `batch/v1` Job standing for one {@link TraceJob}: `parallelism = completions = count` (omitted when 1), the
 * pod template annotated with `skiff.dev/run-for` (omitted when the pods run to the end), requests `<n>m` CPU and
 * `<n>Mi` memory, and for GPU pods `nvidia.com/gpu` in requests and limits, a toleration of
 * `nvidia.com/gpu:NoSchedule` and `workload-type: gpu`; CPU pods select `workload-type: cpu`.
 */
export function jobManifest(job: TraceJob): Manifest {
  const gpu = job.gpus > 0;
  const requests: Record<string, string | number> = { cpu: `${job.cpuMilli}m`, memory: `${job.memoryMiB}Mi` };
  const resources: Record<string, unknown> = { requests };
  if (gpu) {
    requests[GPU_RESOURCE] = job.gpus;
    resources['limits'] = { [GPU_RESOURCE]: job.gpus };
  }
  const podSpec: Record<string, unknown> = {
    restartPolicy: 'Never',
    nodeSelector: { [WORKLOAD_LABEL]: gpu ? 'gpu' : 'cpu' },
  };
  if (gpu) podSpec['tolerations'] = [{ key: GPU_RESOURCE, operator: 'Exists', effect: 'NoSchedule' }];
  podSpec['containers'] = [{ name: 'main', image: POD_IMAGE, resources }];
  const template: Record<string, unknown> = {};
  if (job.runFor !== null) template['metadata'] = { annotations: { [RUN_FOR_ANNOTATION]: formatDuration(job.runFor) } };
  template['spec'] = podSpec;
  const spec: Record<string, unknown> = job.count > 1 ? { parallelism: job.count, completions: job.count } : {};
  spec['template'] = template;
  return { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: job.name }, spec };
}

/**
 * The `kind: Scenario` document: 24 h from {@link SCENARIO_START} in us-west-2, one `apply` event per Job.
 */
export function scenarioManifest(jobs: readonly TraceJob[]): Manifest {
  return {
    apiVersion: 'skiff.dev/v1alpha1',
    kind: 'Scenario',
    metadata: { name: 'alibaba-trace' },
    spec: {
      start: SCENARIO_START,
      duration: formatDuration(SCENARIO_SECONDS),
      region: 'us-west-2',
      events: jobs.map((job) => ({ at: formatDuration(job.at), apply: jobManifest(job) })),
    },
  };
}

/** An instance type as the fit check sees it. */
export interface FitInstanceType {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Allocatable CPU, millicores (Karpenter's figure: after kube-reserved, system-reserved and eviction). */
  readonly cpuMilli: number;
  /** Allocatable memory, MiB (after Karpenter's 7.5 % VM overhead and reservations). */
  readonly memoryMiB: number;
  readonly gpus: number;
  /** On-demand price, USD per hour (us-east-1 list price), or null when unknown. */
  readonly price: number | null;
}

/** The cheapest instance type that can hold one pod shape on its own, per NodePool. */
export interface ShapeFit {
  readonly nodePool: 'cpu' | 'gpu';
  readonly cpuMilli: number;
  readonly memoryMiB: number;
  readonly gpus: number;
  /** How many trace pods have this shape. */
  readonly pods: number;
  /** Cheapest fitting allowed type (by on-demand price, then name), or null when none fits. */
  readonly cheapest: FitInstanceType | null;
  /** How many allowed types fit. */
  readonly fitting: number;
}

/**
 * True when an instance type's labels satisfy every requirement. `karpenter.sh/capacity-type` is an offering
 * property, not a label, and is skipped.
 * @throws {Error} on an operator other than In or Gt
 */
export function allows(requirements: readonly PoolRequirement[], labels: Readonly<Record<string, string>>): boolean {
  return requirements.every((r) => {
    if (r.key === 'karpenter.sh/capacity-type') return true;
    const value = labels[r.key];
    if (value === undefined) return false;
    switch (r.operator) {
      case 'In':
        return r.values.includes(value);
      case 'Gt':
        return Number(value) > Number(r.values[0]);
    }
  });
}

/**
 * Checks every distinct pod shape against the instance types its NodePool allows, using Karpenter's allocatable
 * figures from the instance data.
 * @returns one entry per (NodePool, shape), largest memory first
 */
export function checkFit(pods: readonly TracePod[], instanceTypes: readonly FitInstanceType[]): ShapeFit[] {
  const shapes = new Map<string, { cpuMilli: number; memoryMiB: number; gpus: number; pods: number }>();
  for (const p of pods) {
    const key = `${p.cpuMilli}|${p.memoryMiB}|${p.numGpu}`;
    const shape = shapes.get(key);
    if (shape) shape.pods += 1;
    else shapes.set(key, { cpuMilli: p.cpuMilli, memoryMiB: p.memoryMiB, gpus: p.numGpu, pods: 1 });
  }
  const pools = {
    cpu: instanceTypes.filter((t) => t.gpus === 0 && allows(CPU_POOL_REQUIREMENTS, t.labels)),
    gpu: instanceTypes.filter((t) => t.gpus > 0 && allows(GPU_POOL_REQUIREMENTS, t.labels)),
  };
  return [...shapes.values()]
    .map((shape): ShapeFit => {
      const nodePool = shape.gpus > 0 ? 'gpu' : 'cpu';
      const fitting = pools[nodePool].filter((t) => t.cpuMilli >= shape.cpuMilli && t.memoryMiB >= shape.memoryMiB && t.gpus >= shape.gpus);
      const cheapest =
        [...fitting].sort((a, b) => (a.price ?? Infinity) - (b.price ?? Infinity) || compareStrings(a.name, b.name))[0] ?? null;
      return { nodePool, ...shape, cheapest, fitting: fitting.length };
    })
    .sort((a, b) => b.memoryMiB - a.memoryMiB || b.cpuMilli - a.cpuMilli || b.gpus - a.gpus);
}

const InstanceTypesSchema = z.object({
  instanceTypes: z.array(
    z.object({ name: z.string(), labels: z.record(z.string(), z.string()), allocatable: z.record(z.string(), z.string()) }),
  ),
});
const PricesSchema = z.object({ prices: z.record(z.string(), z.number().nonnegative()) });

/**
 * Reads the instance data and prices into {@link FitInstanceType}s.
 * @param instanceTypesJson text of `ec2-instance-types.json`
 * @param pricesJson text of `ec2-on-demand-prices-us-east-1.json`
 * @throws {Error} when either file does not have the expected shape
 */
export function parseInstanceTypes(instanceTypesJson: string, pricesJson: string): FitInstanceType[] {
  const types = InstanceTypesSchema.parse(JSON.parse(instanceTypesJson));
  const prices = PricesSchema.parse(JSON.parse(pricesJson)).prices;
  return types.instanceTypes.map((t) => ({
    name: t.name,
    labels: t.labels,
    cpuMilli: cpuMillicores(t.allocatable['cpu'] ?? '0'),
    memoryMiB: mebibytes(t.allocatable['memory'] ?? '0'),
    gpus: parseQuantity(t.allocatable[GPU_RESOURCE] ?? '0'),
    price: prices[t.name] ?? null,
  }));
}

/** Summary figures of the trace and the generated scenario, for the README and the console. */
export interface TraceStatistics {
  readonly pods: number;
  readonly jobs: number;
  readonly multiPodJobs: number;
  readonly maxParallelism: number;
  readonly runToEnd: number;
  readonly byGpuCount: Readonly<Record<string, number>>;
  /** Pods whose `gpu_milli` is below 1000 (a GPU share, rounded up to a whole GPU). */
  readonly sharedGpuPods: number;
  readonly byQos: Readonly<Record<string, number>>;
  readonly byPhase: Readonly<Record<string, number>>;
  /** Percentiles p0, p25, p50, p75, p90, p99, p100 of requested CPU, millicores. */
  readonly cpuMilli: readonly number[];
  /** Percentiles of requested memory, MiB. */
  readonly memoryMiB: readonly number[];
  /** Percentiles of lifetime (deletion − creation), trace seconds. */
  readonly lifetime: readonly number[];
  /** Percentiles of the pods' own scaled lifetimes, scenario seconds (pods that run to the end excluded). */
  readonly scaledLifetime: readonly number[];
  /** Percentiles of the generated `run-for` per pod, scenario seconds (pods that run to the end excluded). */
  readonly runFor: readonly number[];
  /**
   * Largest difference between a pod's `run-for` and its own scaled lifetime: in seconds for lifetimes up to the
   * tolerance's `seconds`, relative to the lifetime above it.
   */
  readonly runForError: { readonly shortMaxSeconds: number; readonly longMaxRelative: number };
  /** Pods arriving in each scenario hour, 0..23. */
  readonly arrivalsPerHour: readonly number[];
  /** Per NodePool, the peak demand if every pod ran from its arrival (no pending time). */
  readonly peak: Readonly<Record<'cpu' | 'gpu', Demand>>;
  /** Per NodePool, the peak demand if every pod also waited {@link PENDING_ESTIMATE_SECONDS} for a node first. */
  readonly peakWithPending: Readonly<Record<'cpu' | 'gpu', Demand>>;
}

/** A sum of pod requests: CPU in millicores, memory in MiB, whole GPUs, and the number of pods. */
export interface Demand {
  readonly cpuMilli: number;
  readonly memoryMiB: number;
  readonly gpus: number;
  readonly pods: number;
}

/** A rough node launch-to-ready time, seconds, used only to estimate peak demand for the NodePool limits. */
export const PENDING_ESTIMATE_SECONDS = 120;

/**
 * The peak of each component of the running pods' summed requests over time (the peaks may fall at different
 * instants). A pod occupies `[at, at + extraSeconds + runFor)`; one that runs to the end never leaves.
 * @param extraSeconds seconds each pod holds its requests before its run starts (pending time)
 */
export function peakDemand(jobs: readonly TraceJob[], extraSeconds = 0): Demand {
  const deltas = new Map<number, { cpuMilli: number; memoryMiB: number; gpus: number; pods: number }>();
  const bump = (t: number, job: TraceJob, sign: number): void => {
    const d = deltas.get(t) ?? { cpuMilli: 0, memoryMiB: 0, gpus: 0, pods: 0 };
    d.cpuMilli += sign * job.cpuMilli * job.count;
    d.memoryMiB += sign * job.memoryMiB * job.count;
    d.gpus += sign * job.gpus * job.count;
    d.pods += sign * job.count;
    deltas.set(t, d);
  };
  for (const job of jobs) {
    bump(job.at, job, 1);
    if (job.runFor !== null) bump(job.at + extraSeconds + job.runFor, job, -1);
  }
  const running = { cpuMilli: 0, memoryMiB: 0, gpus: 0, pods: 0 };
  const peak = { ...running };
  for (const t of [...deltas.keys()].sort((a, b) => a - b)) {
    const d = deltas.get(t);
    if (!d) continue;
    running.cpuMilli += d.cpuMilli;
    running.memoryMiB += d.memoryMiB;
    running.gpus += d.gpus;
    running.pods += d.pods;
    peak.cpuMilli = Math.max(peak.cpuMilli, running.cpuMilli);
    peak.memoryMiB = Math.max(peak.memoryMiB, running.memoryMiB);
    peak.gpus = Math.max(peak.gpus, running.gpus);
    peak.pods = Math.max(peak.pods, running.pods);
  }
  return peak;
}

/** The percentile points {@link TraceStatistics} reports. */
export const PERCENTILES = [0, 0.25, 0.5, 0.75, 0.9, 0.99, 1] as const;

/** Nearest-rank percentiles of a list of numbers. */
function percentiles(values: readonly number[]): number[] {
  const sorted = [...values].sort((a, b) => a - b);
  return PERCENTILES.map((p) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? 0);
}

/** Counts of each value, keys sorted. */
function tally(values: readonly (string | number)[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of [...values].map(String).sort(compareStrings)) out[v] = (out[v] ?? 0) + 1;
  return out;
}

/**
 * Computes the {@link TraceStatistics} of a trace and its compressed form.
 * @param tolerance the tolerance the trace was compressed with, to split the run-for error report
 */
export function traceStatistics(
  pods: readonly TracePod[],
  trace: CompressedTrace,
  tolerance: LifetimeTolerance = LIFETIME_TOLERANCE,
): TraceStatistics {
  const { compression, jobs } = trace;
  const arrivalsPerHour = new Array<number>(24).fill(0);
  for (const job of jobs) {
    const hour = Math.min(23, Math.floor(job.at / 3600));
    arrivalsPerHour[hour] = (arrivalsPerHour[hour] ?? 0) + job.count;
  }
  const cpuJobs = jobs.filter((j) => j.gpus === 0);
  const gpuJobs = jobs.filter((j) => j.gpus > 0);
  const runFors = jobs.flatMap((j) => (j.runFor === null ? [] : new Array<number>(j.count).fill(j.runFor)));
  const own = jobs.flatMap((j) => j.podRunFors.filter((r): r is number => r !== null));
  const runForError = { shortMaxSeconds: 0, longMaxRelative: 0 };
  for (const job of jobs) {
    for (const r of job.podRunFors) {
      if (r === null || job.runFor === null) continue;
      const error = Math.abs(job.runFor - r);
      if (r <= tolerance.seconds) runForError.shortMaxSeconds = Math.max(runForError.shortMaxSeconds, error);
      else runForError.longMaxRelative = Math.max(runForError.longMaxRelative, error / r);
    }
  }
  return {
    pods: pods.length,
    jobs: jobs.length,
    multiPodJobs: jobs.filter((j) => j.count > 1).length,
    maxParallelism: Math.max(...jobs.map((j) => j.count)),
    runToEnd: jobs.filter((j) => j.runFor === null).reduce((n, j) => n + j.count, 0),
    byGpuCount: tally(pods.map((p) => p.numGpu)),
    sharedGpuPods: pods.filter((p) => p.numGpu > 0 && p.gpuMilli < 1000).length,
    byQos: tally(pods.map((p) => p.qos)),
    byPhase: tally(pods.map((p) => p.phase)),
    cpuMilli: percentiles(pods.map((p) => p.cpuMilli)),
    memoryMiB: percentiles(pods.map((p) => p.memoryMiB)),
    lifetime: percentiles(pods.map((p) => (p.deletionTime ?? compression.traceEnd) - p.creationTime)),
    scaledLifetime: percentiles(own),
    runFor: percentiles(runFors),
    runForError,
    arrivalsPerHour,
    peak: { cpu: peakDemand(cpuJobs), gpu: peakDemand(gpuJobs) },
    peakWithPending: { cpu: peakDemand(cpuJobs, PENDING_ESTIMATE_SECONDS), gpu: peakDemand(gpuJobs, PENDING_ESTIMATE_SECONDS) },
  };
}

/** Code-point string order (locale-independent, so the output does not depend on the machine). */
function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Renders a map as `k: v, k: v`. */
function inline(record: Readonly<Record<string, number>>): string {
  return Object.entries(record)
    .map(([k, v]) => `${k || '(empty)'}: ${v}`)
    .join(', ');
}

/** Renders a percentile row. */
function percentileRow(label: string, values: readonly number[], unit: string): string {
  return `| ${label} | ${values.map((v) => `${Math.round(v * 100) / 100}`).join(' | ')} | ${unit} |`;
}

/**
 * The folder's README: source and licence, how the trace was turned into a scenario, statistics, NodePools.
 */
export function renderReadme(
  stats: TraceStatistics,
  compression: Compression,
  fits: readonly ShapeFit[],
  sizes: Readonly<Record<string, number>>,
  exact: { readonly jobs: number; readonly bytes: number },
): string {
  const unfit = fits.filter((f) => f.cheapest === null);
  const largest = [
    ...['cpu', 'gpu'].flatMap((pool) => {
      const inPool = fits.filter((f) => f.nodePool === pool);
      const byCpu = [...inPool].sort((a, b) => b.cpuMilli - a.cpuMilli)[0];
      const byMemory = inPool[0];
      return [byMemory, byCpu].filter((f): f is ShapeFit => f !== undefined);
    }),
    ...[2, 4, 8].flatMap((g) => fits.filter((f) => f.gpus === g).slice(0, 1)),
  ].filter((f, i, all) => all.indexOf(f) === i);
  const hours = stats.arrivalsPerHour.map((n, h) => `| ${String(h).padStart(2, '0')}h | ${n} |`);
  const lastSixHours = stats.arrivalsPerHour.slice(18).reduce((a, b) => a + b, 0);
  return [
    '# Example scenario: the Alibaba GPU cluster trace',
    '',
    'Generated by `npm run examples:build` (`scripts/build-alibaba-trace.ts`); do not edit by hand.',
    '',
    `**${TRACE_POD_COUNT}** pods: every row of the trace is represented by exactly one pod of one Job`,
    '(`test/scripts/alibaba-trace.test.ts` counts them from these files alone).',
    '',
    '## Source',
    '',
    '`openb_pod_list_default.csv` from alibaba/clusterdata, `cluster-trace-gpu-v2023`',
    '(https://github.com/alibaba/clusterdata/tree/master/cluster-trace-gpu-v2023), described in',
    'Qizhen Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient',
    'Descent", USENIX ATC 2023. The trace is published under CC BY 4.0; this folder is a derived work',
    '(time-compressed, grouped, and with GPU shares rounded up as described below).',
    '',
    '## Files',
    '',
    '| file | content | bytes |',
    '|---|---|---|',
    `| \`ec2nodeclass.yaml\` | EC2NodeClass \`default\` (AL2023, discovery tag \`karpenter.sh/discovery: my-cluster\`) | ${sizes['ec2nodeclass.yaml'] ?? 0} |`,
    `| \`nodepools.yaml\` | NodePools \`cpu\` and \`gpu\` | ${sizes['nodepools.yaml'] ?? 0} |`,
    `| \`scenario.yaml\` | the Scenario: 24 h from ${SCENARIO_START}, us-west-2, ${stats.jobs} \`apply\` events | ${sizes['scenario.yaml'] ?? 0} |`,
    '',
    '## How the trace became a scenario',
    '',
    `- **Time.** The trace spans ${compression.traceEnd - compression.traceStart} s (${round((compression.traceEnd - compression.traceStart) / 86_400, 1)} days, first creation to last deletion).`,
    `  It is compressed linearly onto 24 h: one scenario second is ${round(compression.factor, 2)} trace seconds. Arrivals and`,
    '  lifetimes are scaled by the same factor and rounded to whole seconds; every lifetime is at least 1 s. The',
    `  trace is dense only in its last weeks, so ${round((lastSixHours / stats.pods) * 100, 1)} % of the pods arrive in the scenario's last 6 hours, and most`,
    '  scaled lifetimes are a few seconds (see the statistics below).',
    `- **Pods that never ended.** A pod deleted at the trace's very end (still running when the trace was taken; ${stats.runToEnd} pods)`,
    '  carries no `skiff.dev/run-for` and runs to the end of the scenario.',
    '- **Encoding.** Each pod is a pod of a `batch/v1` Job applied at its arrival (`apply` event); the pod template',
    '  carries `skiff.dev/run-for: <lifetime>`, so the pod completes after running that long. Pods with identical',
    `  requests arriving in the same ${GROUP_WINDOW_SECONDS} s window (scenario time) whose scaled lifetimes are close share one Job`,
    '  with `parallelism = completions = n` (omitted when n = 1). "Close" means both at most',
    `  ${LIFETIME_TOLERANCE.seconds} s, or in the same ${Math.round(LIFETIME_TOLERANCE.relative * 100)} %-wide band above that; the Job runs for the mean of its pods\' lifetimes, so`,
    '  its total pod-seconds are kept. The Job is applied at the earliest arrival of its pods (so a pod may arrive',
    `  up to ${GROUP_WINDOW_SECONDS - 1} s early) and named after that pod. Result: ${stats.jobs} Jobs, ${stats.multiPodJobs} of them with more than one pod`,
    `  (at most ${stats.maxParallelism}). A pod's run-for differs from its own scaled lifetime by at most ${stats.runForError.shortMaxSeconds} s for lifetimes`,
    `  up to ${LIFETIME_TOLERANCE.seconds} s and by at most ${round(stats.runForError.longMaxRelative * 100, 1)} % above. Exact lifetimes would need ${exact.jobs} Jobs`,
    `  (${round(exact.bytes / 1e6, 2)} MB of YAML instead of ${round((sizes['scenario.yaml'] ?? 0) / 1e6, 2)} MB): the trace varies mostly in arrival time × request shape,`,
    '  and most scaled lifetimes are a few seconds, far shorter than a node launch, so merging them changes little in',
    '  a simulation.',
    '- **Requests.** `cpu: <cpu_milli>m`, `memory: <memory_mib>Mi`. A GPU pod requests `nvidia.com/gpu: <num_gpu>` (in',
    '  requests and limits), tolerates `nvidia.com/gpu:NoSchedule` and selects `workload-type: gpu`; a CPU-only pod',
    '  selects `workload-type: cpu`.',
    `- **GPU shares are rounded up.** Kubernetes cannot request a fraction of a GPU. ${stats.sharedGpuPods} pods ask for`,
    '  `gpu_milli` < 1000 (a share of one GPU, as the trace\'s GPU-sharing scheduler allowed); each is given a whole',
    '  GPU, so the scenario asks for more GPUs than the original cluster used.',
    '- **Not used.** `gpu_spec` (empty in every row: any GPU model will do), `qos`, `pod_phase` (failed, pending',
    '  and succeeded pods are all replayed as pods that run for their lifetime), `scheduled_time`.',
    '- `skiff.dev/run-for` counts from when the pod starts running, so in the simulation a pod also waits for its',
    '  node; the scenario compresses the demand, not the node launch time.',
    '',
    '## Trace statistics',
    '',
    `- Pods: ${stats.pods}. By GPUs requested: ${inline(stats.byGpuCount)}.`,
    `- QoS: ${inline(stats.byQos)}. Phase: ${inline(stats.byPhase)}.`,
    '',
    `| | ${PERCENTILES.map((p) => (p === 0 ? 'min' : p === 1 ? 'max' : `p${Math.round(p * 100)}`)).join(' | ')} | unit |`,
    `|---|${PERCENTILES.map(() => '---').join('|')}|---|`,
    percentileRow('cpu request', stats.cpuMilli, 'millicores'),
    percentileRow('memory request', stats.memoryMiB, 'MiB'),
    percentileRow('lifetime (trace)', stats.lifetime, 's'),
    percentileRow('lifetime (scaled)', stats.scaledLifetime, 's'),
    percentileRow('run-for (generated)', stats.runFor, 's'),
    '',
    'Peak requests of running pods (each figure\'s own peak), if every pod ran from its arrival, and if it first',
    `waited ${PENDING_ESTIMATE_SECONDS} s for a node:`,
    '',
    '| NodePool | pods | cores | GiB | GPUs | with pending: pods | cores | GiB | GPUs |',
    '|---|---|---|---|---|---|---|---|---|',
    ...(['cpu', 'gpu'] as const).map((pool) => {
      const a = stats.peak[pool];
      const b = stats.peakWithPending[pool];
      const cells = (d: Demand): string => `${d.pods} | ${round(d.cpuMilli / 1000, 1)} | ${round(d.memoryMiB / 1024, 1)} | ${d.gpus}`;
      return `| ${pool} | ${cells(a)} | ${cells(b)} |`;
    }),
    '',
    'Arrivals per scenario hour:',
    '',
    '| hour | pods |',
    '|---|---|',
    ...hours,
    '',
    '## NodePools and fit',
    '',
    '- `cpu`: `workload-type: cpu`; spot and on-demand; categories c, m, r; generation > 4; amd64; consolidation',
    '  `WhenEmptyOrUnderutilized` after 1m; limits 4000 cores, 16000Gi.',
    `- \`gpu\`: \`workload-type: gpu\`, taint \`nvidia.com/gpu:NoSchedule\`; on-demand; families ${GPU_FAMILIES.join(', ')}; amd64;`,
    '  consolidation `WhenEmpty` after 1m; limits 1000 GPUs, 20000 cores, 100000Gi. g6e is there for the largest',
    '  8-GPU pods (120 cores, 720 GiB): g5/g6 `48xlarge` offer about 706 GiB allocatable and p4d only 96 vCPUs.',
    '',
    'Every distinct pod shape was checked against the allocatable CPU, memory and GPUs Karpenter computes for each',
    'allowed instance type (`ec2-instance-types.json`: AL2023, after kube-reserved, system-reserved, eviction',
    'threshold and 7.5 % VM memory overhead). Largest pods and the cheapest type that holds one alone',
    '(us-east-1 on-demand list price, USD per hour; the reference data notes us-west-2 lists the same price for the',
    'common current-generation families):',
    '',
    '| NodePool | cpu (m) | memory (MiB) | GPUs | pods | cheapest fit | USD/h | allowed types that fit |',
    '|---|---|---|---|---|---|---|---|',
    ...largest.map(
      (f) =>
        `| ${f.nodePool} | ${f.cpuMilli} | ${f.memoryMiB} | ${f.gpus} | ${f.pods} | ${f.cheapest?.name ?? '**none**'} | ${f.cheapest?.price ?? ''} | ${f.fitting} |`,
    ),
    '',
    unfit.length === 0
      ? 'Every pod fits at least one instance type its NodePool allows.'
      : `**Pods no instance type can hold:** ${unfit.map((f) => `${f.pods} × (${f.cpuMilli}m, ${f.memoryMiB}Mi, ${f.gpus} GPU)`).join('; ')}.`,
    '',
  ].join('\n');
}

/** Rounds to `digits` decimals. */
function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** The raw text of the inputs, so {@link buildAlibabaTrace} stays free of file-system access. */
export interface TraceSources {
  readonly traceCsv: string;
  readonly instanceTypesJson: string;
  readonly pricesJson: string;
}

/** The generated folder (file name → content) and what the build found. */
export interface GeneratedTrace {
  readonly files: Readonly<Record<string, string>>;
  readonly stats: TraceStatistics;
  readonly fits: readonly ShapeFit[];
  readonly compression: Compression;
}

const HEADER = `Generated by scripts/build-alibaba-trace.ts from alibaba/clusterdata cluster-trace-gpu-v2023
(Weng et al., USENIX ATC 2023, CC BY 4.0). Do not edit: run \`npm run examples:build\`.`;

const YAML_OPTIONS: ToStringOptions = { lineWidth: 0, flowCollectionPadding: false };

/** Stringifies manifests as a multi-document YAML file with the generated-file header. */
function yamlFile(manifests: readonly Manifest[], flowEvents = false): string {
  return manifests
    .map((manifest, i) => {
      const doc = new Document(manifest);
      if (i === 0) doc.commentBefore = ` ${HEADER.replace(/\n/g, '\n ')}`;
      const start = doc.getIn(['spec', 'start'], true);
      if (isScalar(start)) start.type = 'QUOTE_DOUBLE'; // a timestamp to a YAML 1.1 reader otherwise
      if (flowEvents) {
        const events = doc.getIn(['spec', 'events'], true);
        if (isSeq(events)) for (const item of events.items) if (isMap(item)) item.flow = true;
      }
      return doc.toString(YAML_OPTIONS);
    })
    .join('---\n');
}

/**
 * Builds the scenario folder from the inputs. Pure: same inputs, same output.
 * @throws {Error} when an input is malformed or the trace does not hold {@link TRACE_POD_COUNT} pods
 * @example
 * const { files } = buildAlibabaTrace(readSources());
 * for (const [name, text] of Object.entries(files)) writeFileSync(join(OUTPUT_DIR, name), text);
 */
export function buildAlibabaTrace(sources: TraceSources): GeneratedTrace {
  const pods = parseTraceCsv(sources.traceCsv);
  if (pods.length !== TRACE_POD_COUNT) throw new Error(`trace has ${pods.length} pods, expected ${TRACE_POD_COUNT}`);
  const trace = compressTrace(pods);
  const stats = traceStatistics(pods, trace);
  const fits = checkFit(pods, parseInstanceTypes(sources.instanceTypesJson, sources.pricesJson));
  const yamlFiles: Record<string, string> = {
    'ec2nodeclass.yaml': yamlFile([nodeClassManifest()]),
    'nodepools.yaml': yamlFile([cpuNodePoolManifest(), gpuNodePoolManifest()]),
    'scenario.yaml': yamlFile([scenarioManifest(trace.jobs)], true),
  };
  const sizes = Object.fromEntries(Object.entries(yamlFiles).map(([name, text]) => [name, Buffer.byteLength(text)]));
  const exactJobs = compressTrace(pods, GROUP_WINDOW_SECONDS, { seconds: 0, relative: 0 }).jobs;
  const exact = { jobs: exactJobs.length, bytes: Buffer.byteLength(yamlFile([scenarioManifest(exactJobs)], true)) };
  return {
    files: { 'README.md': renderReadme(stats, trace.compression, fits, sizes, exact), ...yamlFiles },
    stats,
    fits,
    compression: trace.compression,
  };
}

/**
 * The reference data folder (a build-time input): `$SKIFF_REFERENCE_DATA` when set, else `../shared/data` beside the
 * repository.
 * @param env the environment to read (defaults to `process.env`)
 */
export function referenceDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const override = env['SKIFF_REFERENCE_DATA'];
  return override ? resolve(override) : resolve(REPO_ROOT, '..', 'shared', 'data');
}

/**
 * Reads the inputs from the reference data folder.
 * @throws {Error} when a file is missing (the message names the folder and `SKIFF_REFERENCE_DATA`)
 */
export function readSources(dir: string = referenceDataDir()): TraceSources {
  const read = (file: string): string => {
    try {
      return readFileSync(join(dir, file), 'utf8');
    } catch (cause) {
      throw new Error(`cannot read ${join(dir, file)} (set SKIFF_REFERENCE_DATA to the reference data folder)`, { cause });
    }
  };
  return { traceCsv: read(SOURCE_FILES.trace), instanceTypesJson: read(SOURCE_FILES.instanceTypes), pricesJson: read(SOURCE_FILES.prices) };
}

function main(): void {
  const { files, stats, fits, compression } = buildAlibabaTrace(readSources());
  const dir = join(REPO_ROOT, OUTPUT_DIR);
  mkdirSync(dir, { recursive: true });
  let total = 0;
  for (const [name, text] of Object.entries(files)) {
    writeFileSync(join(dir, name), text);
    total += Buffer.byteLength(text);
  }
  const unfit = fits.filter((f) => f.cheapest === null);
  console.log(`wrote ${OUTPUT_DIR}/ (${Object.keys(files).join(', ')}), ${total} bytes`);
  console.log(`${stats.pods} pods as ${stats.jobs} Jobs (${stats.multiPodJobs} with parallelism > 1, max ${stats.maxParallelism}); ${stats.runToEnd} run to the end`);
  console.log(`time compression: ${round(compression.factor, 3)} trace s per scenario s`);
  console.log(`arrivals per scenario hour: ${stats.arrivalsPerHour.join(' ')}`);
  for (const f of fits.slice(0, 3)) console.log(`largest: ${f.nodePool} ${f.cpuMilli}m ${f.memoryMiB}Mi ${f.gpus} GPU → ${f.cheapest?.name ?? 'NONE'}`);
  if (unfit.length > 0) {
    console.error(`pods no allowed instance type can hold: ${unfit.map((f) => `${f.pods} × ${f.cpuMilli}m/${f.memoryMiB}Mi/${f.gpus} GPU (${f.nodePool})`).join('; ')}`);
  } else {
    console.log('every pod fits at least one instance type its NodePool allows');
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main();
