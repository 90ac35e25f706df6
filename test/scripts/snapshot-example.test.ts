/**
 * examples/snapshot is what scripts/build-snapshot-example.ts writes (deterministic), and is the cluster the README
 * describes: 200 nodes in kubectl's `kind: List` form with the server fields, a managed node group, about 40 % of
 * the CPU requested, no YAML anchors (kubectl writes none).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildSnapshot } from '../../scripts/build-snapshot-example.js';
import { cpuMillicores } from '../../shared/core/resources/quantity.js';

const DIR = fileURLToPath(new URL('../../examples/snapshot/', import.meta.url));

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: Record<string, unknown> & { labels?: Record<string, string> };
  spec: { nodeName?: string; containers?: { resources?: { requests?: { cpu?: string } } }[] };
  status?: { phase?: string; allocatable?: { cpu: string } };
}

describe('examples/snapshot', () => {
  it('is what the generator writes, twice the same bytes', () => {
    const built = buildSnapshot();
    expect(buildSnapshot()).toEqual(built);
    for (const [name, text] of Object.entries(built)) expect(readFileSync(`${DIR}${name}`, 'utf8'), name).toBe(text);
  });

  it('is a fragmented 200-node cluster at about 40 % CPU requested, in kubectl form with the server fields', () => {
    const text = readFileSync(`${DIR}cluster.yaml`, 'utf8');
    const list = parse(text, { maxAliasCount: 0 }) as { apiVersion: string; kind: string; items: Obj[] };
    expect([list.apiVersion, list.kind]).toEqual(['v1', 'List']);
    const nodes = list.items.filter((o) => o.kind === 'Node');
    expect(nodes).toHaveLength(200);
    expect(nodes.filter((n) => n.metadata.labels?.['eks.amazonaws.com/nodegroup'] !== undefined).length).toBeGreaterThan(0);
    for (const o of list.items) for (const field of ['uid', 'resourceVersion', 'creationTimestamp']) expect(o.metadata[field], `${o.kind} ${String(o.metadata['name'])} ${field}`).toBeDefined();
    expect(nodes.every((n) => Array.isArray(n.metadata['managedFields']) && n.status?.allocatable !== undefined)).toBe(true);
    const allocatable = nodes.reduce((s, n) => s + cpuMillicores(n.status!.allocatable!.cpu), 0);
    const requested = list.items
      .filter((o) => o.kind === 'Pod' && o.status?.phase === 'Running')
      .reduce((s, p) => s + (p.spec.containers ?? []).reduce((c, k) => c + cpuMillicores(k.resources?.requests?.cpu ?? '0'), 0), 0);
    expect(requested / allocatable).toBeGreaterThan(0.3);
    expect(requested / allocatable).toBeLessThan(0.5);
  });
});
