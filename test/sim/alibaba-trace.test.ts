import { describe, expect, it } from 'vitest';
import { simulateScenario } from '../../shared/cli/simulate.js';
import { ResultSchema } from '../../shared/sim/result-schema.js';

/** Pods in the Alibaba openb trace (alibaba/clusterdata cluster-trace-gpu-v2023, openb_pod_list_default.csv). */
const TRACE_PODS = 8152;

describe('examples/alibaba-trace end to end', () => {
  it('creates every trace pod, places them all, and breaks no rule', async () => {
    const { result } = await simulateScenario('examples/alibaba-trace', { seed: 1 });
    expect(ResultSchema.safeParse(result).success).toBe(true);
    // Every trace pod, plus one new pod for each eviction (consolidation moves pods; their controllers recreate them).
    const evictions = result.pods.reduce((sum, p) => sum + p.evictions, 0);
    expect(result.pods).toHaveLength(TRACE_PODS + evictions);
    expect(result.disruptions.length).toBeGreaterThan(0);
    expect(result.pods.filter((p) => p.scheduledAt === null)).toEqual([]);
    expect(result.unschedulable).toEqual([]);
    expect(Object.values(result.violations).every((n) => n === 0)).toBe(true);
    // GPU pods ran on the gpu NodePool's nodes, CPU pods on the cpu NodePool's.
    const poolOf = new Map(result.nodeClaims.map((c) => [c.name, c.nodePool]));
    const pools = new Set(result.pods.map((p) => poolOf.get(p.nodeClaim ?? '')));
    expect([...pools].sort()).toEqual(['cpu', 'gpu']);
    expect(result.cost.totalUSD).toBeGreaterThan(0);
  }, 120_000);
});
