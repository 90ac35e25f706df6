import { describe, expect, it } from 'vitest';
import { b6Scenario, writeB6Case } from '../../bench/b6-cases.js';
import type { B6Result } from '../../bench/b6.js';
import { loadCatalog } from '../../shared/core/instancetypes/catalog.js';
import { parseQuantity } from '../../shared/core/resources/quantity.js';
import { loadScenario } from '../../shared/sim/scenario-loader.js';

describe('B6 snapshot generator', () => {
  it('writes a valid Scenario of 2,000 nodes from three NodePools and 20,000 pods at 50-60 % of the nodes, the same every time', async () => {
    expect(b6Scenario({ kind: 'idle', hours: 24 })).toBe(b6Scenario({ kind: 'idle', hours: 24 }));
    const scenario = await loadScenario(writeB6Case({ kind: 'idle', hours: 24 }), { now: 0 });
    expect(scenario.spec.durationSeconds).toBe(24 * 3600);
    expect(scenario.spec.events).toEqual([]);
    expect(scenario.spec.nodes).toHaveLength(2000);
    expect(new Set(scenario.spec.nodes.map((n) => n.nodePool))).toEqual(new Set(['general', 'spot', 'memory']));
    expect(scenario.nodePools.map((p) => p.metadata.name).sort()).toEqual(['general', 'memory', 'spot']);
    expect(scenario.deployments.reduce((n, d) => n + (d.spec.replicas ?? 1), 0)).toBe(20_000);
    // Requests against the catalogue's whole vCPUs and memory, pool by pool: about 55 % (allocatable is a little less).
    const catalog = new Map(loadCatalog().map((t) => [t.name, t]));
    for (const pool of ['general', 'spot', 'memory']) {
      const nodes = scenario.spec.nodes.filter((n) => n.nodePool === pool);
      const type = catalog.get(nodes[0]!.instanceType)!;
      let cpu = 0;
      let memory = 0;
      for (const d of scenario.deployments.filter((d) => d.spec.template.spec.nodeSelector?.['karpenter.sh/nodepool'] === pool)) {
        const requests = d.spec.template.spec.containers[0]!.resources!.requests!;
        cpu += (d.spec.replicas ?? 1) * parseQuantity(String(requests.cpu));
        memory += ((d.spec.replicas ?? 1) * parseQuantity(String(requests.memory))) / 2 ** 20;
      }
      expect(cpu / (nodes.length * type.vcpu)).toBeGreaterThan(0.5);
      expect(cpu / (nodes.length * type.vcpu)).toBeLessThan(0.6);
      expect(memory / (nodes.length * type.memoryMiB)).toBeGreaterThan(0.45);
      expect(memory / (nodes.length * type.memoryMiB)).toBeLessThan(0.6);
    }
  });

  it('scales every Deployment every 30 minutes of the diurnal day, ±40 % around the snapshot', async () => {
    const scenario = await loadScenario(writeB6Case({ kind: 'diurnal', hours: 24 }), { now: 0 });
    const totals = new Map<number, number>();
    for (const e of scenario.spec.events) if (e.type === 'scale') totals.set(e.atSeconds, (totals.get(e.atSeconds) ?? 0) + e.scale.replicas);
    expect(totals.size).toBe(47);
    const values = [...totals.values()];
    expect(Math.max(...values) / 20_000).toBeCloseTo(1.4, 1);
    expect(Math.min(...values) / 20_000).toBeCloseTo(0.6, 1);
  });
});

describe('BENCHMARKS.md B6 rows', () => {
  it('judges the idle day, the diurnal day, the day-to-hour ratio and peak memory from the figures', async () => {
    const { renderReport } = await import('../../bench/report.js');
    const machine = { cpus: 2, cpuModel: 'test', memoryGiB: 8, node: 'v20', platform: 'linux' } as never;
    const failed = { ok: false, reason: 'skipped', detail: 'not run', wallSeconds: 0 } as const;
    const run = (kind: 'idle' | 'diurnal', hours: number, wallSeconds: number, peakRssMiB: number): { name: string; outcome: { ok: true; value: B6Result; wallSeconds: number } } => ({
      name: `${kind} ${hours} h`,
      outcome: {
        ok: true,
        wallSeconds: wallSeconds + 1,
        value: { case: { kind, hours }, wallSeconds, cpuSeconds: wallSeconds / 2, peakRssMiB, simulatedHours: hours, pods: 20_000, nodes: 2000, launched: 0, disruptions: 0, violations: {} },
      },
    });
    const md = renderReport({
      machine,
      quick: false,
      totalSeconds: 1,
      settings: { solveRuns: '', solveLimitSeconds: 1, plainPods: 1, costPods: 1, mipTimeLimitSeconds: 1, burstReplicas: 1, lambdaImports: 1 },
      b1: [],
      b2: failed,
      b3: [],
      b3exact: [],
      b4single: [failed],
      b4burst: failed,
      b6: [run('idle', 1, 30, 400), run('idle', 24, 100, 500), run('diurnal', 24, 700, 2100)],
      b7: failed,
    });
    expect(md).toContain('| B6 | idle 2,000-node, 20,000-pod snapshot, 24 simulated hours: wall (CPU) | 100 s (50 s) | ≤ 120 s | **met** |');
    expect(md).toContain('| B6 | the same snapshot under a diurnal load (±40 %), 24 simulated hours: wall (CPU) | 700 s (350 s) | ≤ 600 s | **not met** |');
    expect(md).toContain('| B6 | idle snapshot: wall of 24 simulated hours ÷ wall of 1 (CPU ratio) | 3.33× (3.33×) | ≤ 3× | **not met** |');
    expect(md).toContain("| B6 | peak resident memory of a case's process (highest of 3) | 2,100 MiB | ≤ 2,048 MiB | **not met** |");
    expect(md).toContain('## B6: simulation speed at real size');
    expect(md).toMatch(/\| idle 24 h \| 100\.0 \| 50\.0 \| 500 \| 20,000 \| 2,000 \| 0 \| 0 \| none \|/);
  });
});
