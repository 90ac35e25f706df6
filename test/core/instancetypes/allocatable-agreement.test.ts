import { describe, expect, it } from 'vitest';
import { computeAllocatable } from '../../../shared/core/instancetypes/allocatable.js';
import { loadCatalog } from '../../../shared/core/instancetypes/catalog.js';
import type { InstanceTypeInfo } from '../../../shared/core/instancetypes/instance-type.js';
import { formatResources, type ResourceList } from '../../../shared/core/resources/resource-list.js';

/** A type whose computed allocatable differs from Karpenter's published one. */
interface Disagreement {
  readonly name: string;
  readonly differs: readonly string[];
  readonly skiff: ResourceList;
  readonly karpenter: ResourceList;
}

/** Compares Skiff's default allocatable with the catalogue's `karpenterAllocatable` column for one type. */
function compare(type: InstanceTypeInfo): { cpu: boolean; pods: boolean; memory: boolean; storage: boolean; disagreement?: Disagreement } {
  const skiff = computeAllocatable(type);
  const karpenter = type.karpenterAllocatable;
  const result = {
    cpu: skiff.cpu === karpenter.cpu,
    pods: skiff.pods === karpenter.pods,
    memory: Math.abs((skiff.memory ?? 0) - karpenter.memory) <= 1,
    storage: skiff['ephemeral-storage'] === karpenter['ephemeral-storage'],
  };
  const differs = Object.entries(result)
    .filter(([, ok]) => !ok)
    .map(([name]) => name);
  return differs.length === 0 ? result : { ...result, disagreement: { name: type.name, differs, skiff, karpenter } };
}

describe('computeAllocatable', () => {
  describe('agreement with Karpenter (AL2023, defaults, every catalogue type)', () => {
    const catalog = loadCatalog();
    const results = catalog.map(compare);
    const rate = (key: 'cpu' | 'pods' | 'memory' | 'storage'): number => results.filter((r) => r[key]).length / catalog.length;
    const exceptions = results.flatMap((r) => (r.disagreement ? [r.disagreement] : []));

    it('reports the match rates and lists every exception', () => {
      const pct = (key: 'cpu' | 'pods' | 'memory' | 'storage'): string => `${(rate(key) * 100).toFixed(2)} %`;
      const lines = exceptions.map(
        (e) => `  ${e.name} (${e.differs.join(', ')}): skiff ${formatResources(e.skiff)} | karpenter ${formatResources(e.karpenter)}`,
      );
      console.info(
        [
          `allocatable agreement over ${catalog.length} types: cpu ${pct('cpu')}, pods ${pct('pods')}, memory ±1Mi ${pct('memory')}, ephemeral-storage ${pct('storage')}`,
          `exceptions (${exceptions.length}):${exceptions.length === 0 ? ' none' : ''}`,
          ...lines,
        ].join('\n'),
      );
      expect(results).toHaveLength(catalog.length);
    });

    it('matches cpu and pods exactly and memory within 1 MiB on at least 99 % of types', () => {
      expect(exceptions.length / catalog.length).toBeLessThanOrEqual(0.01);
    });

    it.each(['cpu', 'pods', 'memory', 'storage'] as const)('matches %s on at least 99 % of types', (key) => {
      expect(rate(key)).toBeGreaterThanOrEqual(0.99);
    });

    it('keeps every extended resource the instance offers, as its count', () => {
      const mismatched = catalog.filter((type) => {
        const allocatable = computeAllocatable(type);
        return Object.entries(type.extendedResources).some(([name, count]) => allocatable[name] !== count);
      });
      expect(mismatched.map((t) => t.name)).toEqual([]);
    });
  });
});
