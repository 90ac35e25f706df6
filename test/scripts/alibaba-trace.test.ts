import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { parseQuantity } from '../../shared/core/resources/quantity.js';
import {
  compressTrace,
  formatDuration,
  lifetimeClass,
  parseTraceCsv,
  SCENARIO_SECONDS,
  TRACE_POD_COUNT,
  type TracePod,
} from '../../scripts/build-alibaba-trace.js';

/** The committed example folder; the test reads only these files, never the reference data. */
const FOLDER = fileURLToPath(new URL('../../examples/alibaba-trace/', import.meta.url));

/** Rows in `alibaba-openb-pod-list-default.csv`, as the folder's README documents. */
const CSV_ROWS = 8152;

type Obj = Record<string, any>;

/** Every YAML document in the folder, with the file it came from. */
function loadFolder(): { file: string; doc: Obj }[] {
  const files = readdirSync(FOLDER)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort();
  return files.flatMap((file) =>
    parseAllDocuments(readFileSync(join(FOLDER, file), 'utf8')).map((d) => {
      if (d.errors.length > 0) throw new Error(`${file}: ${d.errors[0]?.message}`);
      return { file, doc: d.toJS() as Obj };
    }),
  );
}

/** Seconds in a Go duration such as `19h4m37s`, `30m`, `0s`. */
function seconds(duration: string): number {
  expect(duration).toMatch(/^(\d+(\.\d+)?(h|m|s|ms))+$/);
  const unit: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 0.001 };
  let total = 0;
  for (const [, n, u] of duration.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)) total += Number(n) * (unit[u ?? ''] ?? NaN);
  return total;
}

/** Kubernetes toleration matching (k8s.io/api core/v1 `Toleration.ToleratesTaint`). */
function tolerates(tolerations: readonly Obj[], taint: Obj): boolean {
  return tolerations.some((t) => {
    if (t['effect'] !== undefined && t['effect'] !== taint['effect']) return false;
    if (t['operator'] === 'Exists') return t['key'] === undefined || t['key'] === '' || t['key'] === taint['key'];
    return t['key'] === taint['key'] && (t['value'] ?? '') === (taint['value'] ?? '');
  });
}

const docs = loadFolder();
const scenarios = docs.filter((d) => d.doc['kind'] === 'Scenario');
const scenario = scenarios[0]?.doc ?? {};
const events: Obj[] = scenario['spec']?.['events'] ?? [];
const jobs: Obj[] = [
  ...docs.filter((d) => d.doc['kind'] === 'Job').map((d) => d.doc),
  ...events.map((e) => e['apply']).filter((m): m is Obj => m?.['kind'] === 'Job'),
];
const nodePools = new Map<string, Obj>(docs.filter((d) => d.doc['kind'] === 'NodePool').map((d) => [d.doc['metadata']['name'], d.doc]));
const gpuTaints: Obj[] = nodePools.get('gpu')?.['spec']['template']['spec']['taints'] ?? [];

describe('examples/alibaba-trace', () => {
  describe('Scenario', () => {
    it('has exactly one Scenario document, 24 h from 2026-03-02T00:00:00Z in us-west-2', () => {
      expect(scenarios).toHaveLength(1);
      expect(scenario['apiVersion']).toBe('skiff.dev/v1alpha1');
      expect(scenario['spec']).toMatchObject({ start: '2026-03-02T00:00:00Z', region: 'us-west-2' });
      expect(seconds(scenario['spec']['duration'])).toBe(24 * 3600);
    });

    it('has only apply events, in time order, each within [0, 24h]', () => {
      expect(events.length).toBeGreaterThan(0);
      let previous = 0;
      for (const event of events) {
        expect(Object.keys(event).sort()).toEqual(['apply', 'at']);
        const at = seconds(event['at']);
        expect(at).toBeGreaterThanOrEqual(0);
        expect(at).toBeLessThanOrEqual(24 * 3600);
        expect(at).toBeGreaterThanOrEqual(previous);
        previous = at;
      }
    });
  });

  describe('Jobs', () => {
    it(`represent exactly one pod per CSV row (${CSV_ROWS}, counting parallelism)`, () => {
      const pods = jobs.reduce((n, job) => n + (job['spec']['parallelism'] ?? 1), 0);
      expect(pods).toBe(CSV_ROWS);
      expect(TRACE_POD_COUNT).toBe(CSV_ROWS);
      expect(readFileSync(join(FOLDER, 'README.md'), 'utf8')).toContain(`**${CSV_ROWS}** pods`);
    });

    it('are valid one-shot Jobs with unique DNS-1123 names and parallelism = completions', () => {
      const names = new Set<string>();
      for (const job of jobs) {
        expect(job['apiVersion']).toBe('batch/v1');
        const name: string = job['metadata']['name'];
        expect(name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
        expect(names.has(name)).toBe(false);
        names.add(name);
        expect(job['spec']['completions']).toBe(job['spec']['parallelism']);
        if (job['spec']['parallelism'] !== undefined) expect(job['spec']['parallelism']).toBeGreaterThan(1);
        expect(job['spec']['template']['spec']['restartPolicy']).toBe('Never');
      }
    });

    it('run for at least 1 s and finish by the end of the scenario', () => {
      for (const event of events) {
        const runFor = event['apply']['spec']['template']['metadata']?.['annotations']?.['skiff.dev/run-for'];
        if (runFor === undefined) continue;
        expect(seconds(runFor)).toBeGreaterThanOrEqual(1);
        expect(seconds(event['at']) + seconds(runFor)).toBeLessThanOrEqual(24 * 3600);
      }
    });

    it('request cpu in millicores and memory in MiB, and every request parses', () => {
      for (const job of jobs) {
        for (const container of job['spec']['template']['spec']['containers']) {
          const requests: Obj = container['resources']['requests'];
          expect(requests['cpu']).toMatch(/^\d+m$/);
          expect(requests['memory']).toMatch(/^\d+Mi$/);
          for (const [name, quantity] of Object.entries({ ...requests, ...container['resources']['limits'] })) {
            expect(() => parseQuantity(quantity as string | number), `${job['metadata']['name']} ${name}`).not.toThrow();
          }
          expect(parseQuantity(requests['cpu'])).toBeGreaterThan(0);
        }
      }
    });

    it('put GPU pods on the gpu NodePool: whole GPUs, requests = limits, taint tolerated', () => {
      expect(gpuTaints).toContainEqual({ key: 'nvidia.com/gpu', effect: 'NoSchedule' });
      let gpuJobs = 0;
      for (const job of jobs) {
        const spec: Obj = job['spec']['template']['spec'];
        const gpus = spec['containers'].map((c: Obj) => c['resources']['requests']['nvidia.com/gpu'] ?? 0);
        const total = gpus.reduce((a: number, b: number) => a + b, 0);
        if (total === 0) {
          expect(spec['nodeSelector']).toEqual({ 'workload-type': 'cpu' });
          continue;
        }
        gpuJobs += 1;
        expect(spec['nodeSelector']).toEqual({ 'workload-type': 'gpu' });
        for (const c of spec['containers']) {
          const n = c['resources']['requests']['nvidia.com/gpu'];
          expect(Number.isInteger(n) && n >= 1 && n <= 8).toBe(true);
          expect(c['resources']['limits']['nvidia.com/gpu']).toBe(n);
        }
        for (const taint of gpuTaints) expect(tolerates(spec['tolerations'] ?? [], taint)).toBe(true);
      }
      expect(gpuJobs).toBeGreaterThan(0);
    });
  });

  describe('NodePools and EC2NodeClass', () => {
    it('define Karpenter v1 NodePools cpu and gpu whose template labels match the pods’ nodeSelectors', () => {
      expect([...nodePools.keys()].sort()).toEqual(['cpu', 'gpu']);
      for (const [name, pool] of nodePools) {
        expect(pool['apiVersion']).toBe('karpenter.sh/v1');
        expect(pool['spec']['template']['metadata']['labels']).toEqual({ 'workload-type': name });
        expect(pool['spec']['template']['spec']['nodeClassRef']).toEqual({ group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' });
        for (const r of pool['spec']['template']['spec']['requirements']) expect(['In', 'Gt']).toContain(r['operator']);
        expect(pool['spec']['disruption']['consolidationPolicy']).toBeDefined();
        expect(Object.keys(pool['spec']['limits']).length).toBeGreaterThan(0);
      }
      expect(nodePools.get('cpu')?.['spec']['template']['spec']['taints']).toBeUndefined();
    });

    it('define the EC2NodeClass default the NodePools reference', () => {
      const classes = docs.filter((d) => d.doc['kind'] === 'EC2NodeClass').map((d) => d.doc);
      expect(classes).toHaveLength(1);
      expect(classes[0]).toMatchObject({
        apiVersion: 'karpenter.k8s.aws/v1',
        metadata: { name: 'default' },
        spec: {
          role: 'KarpenterNodeRole-my-cluster',
          amiSelectorTerms: [{ alias: 'al2023@latest' }],
          subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'my-cluster' } }],
          securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'my-cluster' } }],
        },
      });
    });

    it('cite the trace and say that GPU shares are rounded up', () => {
      const readme = readFileSync(join(FOLDER, 'README.md'), 'utf8');
      expect(readme).toContain('cluster-trace-gpu-v2023');
      expect(readme).toContain('USENIX ATC 2023');
      expect(readme).toContain('CC BY 4.0');
      expect(readme).toMatch(/GPU shares are rounded up/);
    });
  });
});

/** A trace pod with defaults for the fields a case does not care about. */
function pod(name: string, creationTime: number, deletionTime: number | null, over: Partial<TracePod> = {}): TracePod {
  return {
    name,
    cpuMilli: 1000,
    memoryMiB: 1024,
    numGpu: 0,
    gpuMilli: 0,
    gpuSpec: '',
    qos: 'LS',
    phase: 'Running',
    creationTime,
    deletionTime,
    scheduledTime: creationTime,
    ...over,
  };
}

describe('build-alibaba-trace', () => {
  describe('formatDuration', () => {
    it.each([
      [0, '0s'],
      [45, '45s'],
      [60, '1m'],
      [3600, '1h'],
      [68677, '19h4m37s'],
      [86400, '24h'],
      [3601, '1h1s'],
    ])('formats %i s as %s', (s, text) => {
      expect(formatDuration(s)).toBe(text);
    });

    it('rejects negative and fractional seconds', () => {
      expect(() => formatDuration(-1)).toThrow();
      expect(() => formatDuration(1.5)).toThrow();
    });
  });

  describe('lifetimeClass', () => {
    const tolerance = { seconds: 30, relative: 0.1 };
    it('puts lifetimes up to the tolerance in one class and runs-to-end in its own', () => {
      expect(lifetimeClass(1, tolerance)).toBe(lifetimeClass(30, tolerance));
      expect(lifetimeClass(31, tolerance)).not.toBe(lifetimeClass(30, tolerance));
      expect(lifetimeClass(null, tolerance)).toBe('end');
    });

    it('uses geometric bands above the tolerance', () => {
      expect(lifetimeClass(32, tolerance)).toBe(lifetimeClass(33, tolerance)); // both in (30, 33]
      expect(lifetimeClass(34, tolerance)).not.toBe(lifetimeClass(33, tolerance));
      expect(lifetimeClass(930, tolerance)).toBe(lifetimeClass(1000, tolerance)); // both in (30·1.1^36, 30·1.1^37] ≈ (927, 1020]
      expect(lifetimeClass(1030, tolerance)).not.toBe(lifetimeClass(1000, tolerance));
    });

    it('keeps lifetimes exact with a zero tolerance', () => {
      const exact = { seconds: 0, relative: 0 };
      expect(lifetimeClass(5, exact)).not.toBe(lifetimeClass(6, exact));
    });
  });

  describe('compressTrace', () => {
    // A 2-day trace: 172800 trace s onto 86400 scenario s, factor 2.
    const trace = [
      pod('a', 0, 40), // scaled: arrives at 0 s, runs 20 s
      pod('b', 20, 50), // scaled: 10 s, runs 15 s; same shape, window and lifetime class as a: one Job
      pod('c', 30, 100, { numGpu: 1, gpuMilli: 500 }), // another shape
      pod('d', 100_000, null), // never deleted: runs to the end
      pod('e', 100_010, 172_800), // deleted at the trace's end: runs to the end, grouped with d
      pod('z', 172_000, 172_400, { cpuMilli: 2000 }),
    ];

    it('scales times linearly and groups identical pods arriving in the same minute', () => {
      const { compression, jobs } = compressTrace(trace);
      expect(compression).toEqual({ traceStart: 0, traceEnd: 172_800, factor: 2 });
      expect(jobs.map((j) => [j.name, j.at, j.runFor, j.count, j.gpus])).toEqual([
        ['a', 0, 18, 2, 0], // mean of 20 and 15 s, rounded
        ['c', 15, 35, 1, 1],
        ['d', 50_000, null, 2, 0],
        ['z', 86_000, 200, 1, 0],
      ]);
      expect(jobs[0]?.pods).toEqual(['a', 'b']);
      expect(jobs[0]?.podRunFors).toEqual([20, 15]);
      expect(jobs.reduce((n, j) => n + j.count, 0)).toBe(trace.length);
    });

    it('keeps lifetimes exact with a zero tolerance', () => {
      const { jobs } = compressTrace(trace, 60, { seconds: 0, relative: 0 });
      expect(jobs.filter((j) => j.name === 'a' || j.name === 'b').map((j) => j.runFor)).toEqual([20, 15]);
    });

    it('gives every pod at least 1 s', () => {
      const { jobs } = compressTrace([pod('x', 0, 0), pod('y', 0, 86_400, { cpuMilli: 5 }), pod('w', 1, 172_800, { cpuMilli: 7 })]);
      expect(jobs.find((j) => j.name === 'x')?.runFor).toBe(1);
    });

    it('is deterministic whatever the input order', () => {
      expect(compressTrace([...trace].reverse())).toEqual(compressTrace(trace));
    });
  });

  describe('parseTraceCsv', () => {
    const header = 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time';

    it('reads rows, with empty times as null', () => {
      const pods = parseTraceCsv(`${header}\nopenb-pod-0001,6000,12288,1,460,,LS,Pending,427061,12902960,\n`);
      expect(pods).toEqual([
        {
          name: 'openb-pod-0001',
          cpuMilli: 6000,
          memoryMiB: 12288,
          numGpu: 1,
          gpuMilli: 460,
          gpuSpec: '',
          qos: 'LS',
          phase: 'Pending',
          creationTime: 427061,
          deletionTime: 12902960,
          scheduledTime: null,
        },
      ]);
    });

    it('names the line of a malformed row', () => {
      expect(() => parseTraceCsv(`${header}\nopenb-pod-0001,6000,12288,1,460,,LS,Running,x,1,1`)).toThrow(/line 2: creation_time/);
      expect(() => parseTraceCsv(`${header}\nopenb-pod-0001,6000`)).toThrow(/line 2: expected 11 cells/);
      expect(() => parseTraceCsv('a,b\n')).toThrow(/header/);
    });
  });

  it('compresses onto the scenario length', () => {
    expect(SCENARIO_SECONDS).toBe(86_400);
  });
});
