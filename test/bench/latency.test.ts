// B4 with compute (issue 23): the queueing model of `withCompute` on hand-made runs, the probe through the real
// simulation, and the B4/B7 goals beside their figures in BENCHMARKS.md.
import { describe, expect, it } from 'vitest';
import type { BundleResult } from '../../bench/lambdas.js';
import { measureLatency, WARM_IDLE_MS, withCompute, type LatencyResult } from '../../bench/latency.js';
import { renderReport, type BenchResults } from '../../bench/report.js';
import { skipped, type Outcome } from '../../bench/spawn.js';
import type { SimulationResult } from '../../shared/sim/result.js';

const T0 = Date.parse('2026-03-02T08:00:00Z');
const iso = (ms: number) => new Date(T0 + ms).toISOString();

/** A Result with only what `withCompute` reads: pods (pending time, NodeClaim) and launch attempts. */
function run(pods: { pendingMs: number; claim: string | null }[], launches: { atMs: number; claim: string }[]): SimulationResult {
  return {
    pods: pods.map((p, i) => ({ name: `p${i}`, createdAt: iso(p.pendingMs), firstPendingAt: iso(p.pendingMs), nodeClaim: p.claim })),
    launchAttempts: launches.map((l) => ({ at: iso(l.atMs), nodeClaim: l.claim })),
  } as unknown as SimulationResult;
}

describe('withCompute', () => {
  it('adds the cold start and wall time of the invocation that launched the pod', () => {
    // Pending at 0, batch delivered at 1 s; the first invocation is cold (200 ms) and computes 300 ms: 1.5 s.
    const r = run([{ pendingMs: 0, claim: 'a' }], [{ atMs: 1000, claim: 'a' }]);
    expect(withCompute(r, [{ atMs: T0 + 1000, wallMs: 300, messages: 1 }], 200)).toEqual({ latencies: [1.5], coldStarts: 1 });
  });

  it('starts an invocation only when the previous one has finished, warm within the idle window', () => {
    // Invocation 1 at 1 s: cold 200 + 900 ms → ends at 2.1 s. Invocation 2 at 1.5 s waits for it, is warm, computes
    // 400 ms → ends at 2.5 s; its pod was pending from 0.5 s: 2.0 s.
    const r = run(
      [
        { pendingMs: 0, claim: 'a' },
        { pendingMs: 500, claim: 'b' },
      ],
      [
        { atMs: 1000, claim: 'a' },
        { atMs: 1500, claim: 'b' },
      ],
    );
    const out = withCompute(
      r,
      [
        { atMs: T0 + 1000, wallMs: 900, messages: 1 },
        { atMs: T0 + 1500, wallMs: 400, messages: 1 },
      ],
      200,
    );
    expect(out.coldStarts).toBe(1);
    expect(out.latencies[0]).toBeCloseTo(2.1, 9);
    expect(out.latencies[1]).toBeCloseTo(2.0, 9);
  });

  it('pays the cold start again after the idle window', () => {
    const later = WARM_IDLE_MS + 60_000;
    const r = run(
      [
        { pendingMs: 0, claim: 'a' },
        { pendingMs: later - 1000, claim: 'b' },
      ],
      [
        { atMs: 1000, claim: 'a' },
        { atMs: later, claim: 'b' },
      ],
    );
    const out = withCompute(
      r,
      [
        { atMs: T0 + 1000, wallMs: 100, messages: 1 },
        { atMs: T0 + later, wallMs: 100, messages: 1 },
      ],
      500,
    );
    expect(out).toEqual({ latencies: [1.6, 1.6], coldStarts: 2 });
  });

  it('keeps the simulated latency of a launch no provisioner invocation made, and skips pods without a launch', () => {
    const r = run(
      [
        { pendingMs: 0, claim: 'x' },
        { pendingMs: 0, claim: null },
      ],
      [{ atMs: 3000, claim: 'x' }],
    );
    expect(withCompute(r, [], 500)).toEqual({ latencies: [3], coldStarts: 0 });
  });
});

describe('measureLatency through the simulation', () => {
  it('times the provisioner invocations and adds them, with one cold start, to the simulated latency', { timeout: 120_000 }, async () => {
    const coldStartMs = 750;
    const r = await measureLatency(1, 1, coldStartMs);
    expect(r.latencies).toHaveLength(1);
    expect(r.invocations).toBeGreaterThanOrEqual(1);
    expect(r.coldStarts).toBe(1);
    expect(r.invocationWallMs.total).toBeGreaterThan(0);
    // At least the cold start and some compute on top of the event path.
    expect(r.withCompute.p99).toBeGreaterThan(r.p99 + coldStartMs / 1000);
  });
});

describe('the B4 and B7 rows of BENCHMARKS.md', () => {
  const latency = (replicas: number, p99: number): Outcome<LatencyResult> => ({
    ok: true,
    wallSeconds: 1,
    value: { replicas, seed: 1, latencies: [], p50: 1, p99: 1, max: 1, withCompute: { p50: p99 - 0.1, p99, max: p99 }, invocations: 2, invocationWallMs: { total: 300, max: 200 }, coldStartMs: 600, coldStarts: 1, unmatched: 0, launchAttempts: 1, wallSeconds: 1 },
  });
  const bundle = (name: string, bytes: number, importMs: number): BundleResult => ({ name, entry: `functions/${name}/index.ts`, bytes, gzipBytes: bytes / 5, importMs: [importMs], importMedianMs: importMs, initMs: [50], initMedianMs: 50, firstOutcome: '{}' });
  const results = (b7: BundleResult[]): BenchResults => ({
    machine: { cpuModel: 'test', cores: 2, memoryMiB: 1024, platform: 'linux', loadAverage: 0, node: 'v20', date: '2026-12-05' },
    quick: false,
    totalSeconds: 1,
    settings: { solveRuns: '', solveLimitSeconds: 1, plainPods: 1, costPods: 1, mipTimeLimitSeconds: 1, burstReplicas: 10_000, lambdaImports: 1 },
    b1: [],
    b2: skipped('test'),
    b3: [],
    b3exact: [],
    b4single: [latency(1, 1.2)],
    b4thousand: latency(1000, 2.5),
    b4burst: latency(10_000, 6),
    b7: { ok: true, wallSeconds: 1, value: b7 },
  });

  it('puts the latency goals beside the figures with compute', () => {
    const md = renderReport(results([bundle('webhook', 500_000, 100)]));
    expect(md).toContain('| B4 | one pod: pending → CreateFleet, with compute and cold start | p50 1.10 s, p99 1.20 s (simulated only: p99 1.0 s) | p99 ≤ 2 s | **met** |');
    expect(md).toContain('| B4 | 1,000-pod burst: pending → CreateFleet, with compute and cold start | p50 2.40 s, p99 2.50 s (simulated only: p99 1.0 s) | — | — |');
    expect(md).toContain('| B4 | 10,000-pod burst: pending → CreateFleet, with compute and cold start | p50 5.90 s, p99 6.00 s (simulated only: p99 1.0 s) | p99 ≤ 5 s | **not met** |');
  });

  it('judges each controller bundle on size and on its cold import against the webhook of the same run', () => {
    const md = renderReport(results([bundle('provisioner', 1_400_000, 190), bundle('lifecycle', 1_600_000, 250), bundle('webhook', 500_000, 100)]));
    expect(md).toContain('| B7 | provisioner Lambda: bundle (gzip) | 1.40 MB (0.28 MB) | ≤ 1.5 MB | **met** |');
    expect(md).toContain('| B7 | lifecycle Lambda: bundle (gzip) | 1.60 MB (0.32 MB) | ≤ 1.5 MB | **not met** |');
    expect(md).toContain("| B7 | provisioner Lambda: cold import ÷ the webhook's | 190 ms (1.90×); first invocation 50 ms | ≤ 2× | **met** |");
    expect(md).toContain("| B7 | lifecycle Lambda: cold import ÷ the webhook's | 250 ms (2.50×); first invocation 50 ms | ≤ 2× | **not met** |");
    expect(md).toContain('| B7 | webhook Lambda: cold import (the reference) | 100 ms; first invocation 50 ms | — | — |');
    expect(md).toMatch(/\| B7 \| `cdk synth` without esbuild warnings: bundles above esbuild's 1 MiB mark \| provisioner, lifecycle .*\| none \| \*\*not met\*\* \|/);
  });
});
