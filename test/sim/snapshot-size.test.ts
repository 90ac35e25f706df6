// Snapshots at real size (issue 22): `kubectl get -A -o yaml` of a large cluster is one `kind: List` of tens of MB.
// The loader reads its items one at a time (nothing it composes holds more than one object), takes a List over the
// 16 MiB bound for YAML composed whole, and keeps the hostile-input bounds of issue 21: total bytes, List items.
// Expectations come from the generated snapshot's own YAML (the `yaml` library), not from the code under test.
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Parser, parse } from 'yaml';
import { buildSnapshot } from '../../scripts/build-snapshot-example.js';
import { main } from '../../shared/cli/main.js';
import { MAX_SCENARIO_BYTES, MAX_SCENARIO_ITEMS, MAX_SNAPSHOT_BYTES, TOO_LARGE_ITEM_MESSAGE, loadScenario } from '../../shared/sim/scenario-loader.js';
import { issuesOfAsync } from '../core/api/validation-expectations.js';

const NOW = Date.UTC(2026, 2, 2, 8);

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'skiff-bigsnap-'));
});
afterEach(() => {
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

/** Records the length of every text the `yaml` library's parser is given. */
function parsedLengths(): number[] {
  const lengths: number[] = [];
  const original = Parser.prototype.parse;
  vi.spyOn(Parser.prototype, 'parse').mockImplementation(function (this: Parser, source: string, incomplete?: boolean) {
    lengths.push(source.length);
    return original.call(this, source, incomplete);
  });
  return lengths;
}

describe('a snapshot at size', () => {
  it('loads a List of a few MB one object at a time: no text the YAML parser sees holds two objects', async () => {
    const files = buildSnapshot({ nodes: 120, seed: 5 });
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    const cluster = files['cluster.yaml']!;
    expect(cluster.length).toBeGreaterThan(3_000_000);
    const items = (parse(cluster) as { items: { kind: string; metadata: { name: string } }[] }).items;
    const largest = Math.max(...items.map((i) => JSON.stringify(i).length));

    const lengths = parsedLengths();
    const scenario = await loadScenario(dir, { now: NOW });
    vi.restoreAllMocks();

    expect(scenario.spec.nodes.map((n) => n.name).sort()).toEqual(items.filter((i) => i.kind === 'Node').map((i) => i.metadata.name).sort());
    expect(scenario.snapshot?.nodes).toBe(items.filter((i) => i.kind === 'Node').length);
    // Each file's List without its entries (line breaks only), then each entry: one parse per object, none large.
    const objects = items.length + (parse(files['karpenter.yaml']!) as { items: unknown[] }).items.length;
    expect(lengths).toHaveLength(objects + Object.keys(files).length);
    const entries = lengths.filter((l, i) => i > 0 && l !== lengths[0]);
    expect(Math.max(...entries)).toBeLessThan(2 * largest);
    expect(Math.max(...entries)).toBeLessThan(cluster.length / 100);
  });

  it('takes a List over the bound for YAML composed whole, and reports an item issue at its file:line:col', async () => {
    // ConfigMaps of 0.9 MiB each (dashboards' JSON, say) in `kubectl get all,configmaps -o yaml`: skipped.
    const configMap = (i: number, bytes: number) =>
      `  - apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: dashboards-${i}\n      namespace: monitoring\n    data:\n      big.json: |\n${'        {"panel": "x"}\n'.repeat(Math.ceil(bytes / 23))}`;
    const snapshot = buildSnapshot({ nodes: 4, seed: 2 });
    const withItems = (entries: string) => snapshot['cluster.yaml']!.replace(/^items:\n/m, `items:\n${entries}`);
    const cluster = withItems(Array.from({ length: 20 }, (_, i) => configMap(i, 0.9 * 2 ** 20)).join(''));
    writeFileSync(join(dir, 'cluster.yaml'), cluster);
    writeFileSync(join(dir, 'karpenter.yaml'), snapshot['karpenter.yaml']!);
    expect(Buffer.byteLength(cluster)).toBeGreaterThan(MAX_SCENARIO_BYTES + 2 ** 20);
    const scenario = await loadScenario(dir, { now: NOW });
    expect(scenario.skipped.map((s) => s.name)).toEqual(Array.from({ length: 20 }, (_, i) => `dashboards-${i}`));
    expect(scenario.skipped[1]).toMatchObject({ file: join(dir, 'cluster.yaml'), line: cluster.split('\n').findIndex((l) => l.includes('dashboards-1')) - 2 });
    expect(scenario.spec.nodes).toHaveLength(4);
    // `skiff validate` reads it as `simulate` does.
    let out = '';
    expect(await main(['validate', dir], { out: (t) => (out += t), err: () => undefined, isTTY: false })).toBe(0);
    expect(out).toMatch(/skipped 20 objects of kinds Skiff does not read/);

    // An issue inside an item after the large ones still names its own line and column.
    const lines = cluster.split('\n');
    const typeLine = lines.findIndex((l) => l.includes('node.kubernetes.io/instance-type: '));
    lines[typeLine] = lines[typeLine]!.replace(/instance-type: \S+/, 'instance-type: m9.huge');
    writeFileSync(join(dir, 'cluster.yaml'), lines.join('\n'));
    const issues = await issuesOfAsync(loadScenario(dir, { now: NOW }));
    const itemDash = /^(\s*)- /.exec(lines[lines.indexOf('items:') + 1]!)![1]!;
    expect(issues).toContainEqual({
      file: join(dir, 'cluster.yaml'),
      line: typeLine + 1,
      column: lines[typeLine]!.indexOf('m9.huge') + 1,
      // the path as the file reads: the item of the List, then the field
      path: `items[${lines.slice(0, typeLine).filter((l) => l.startsWith(`${itemDash}- `)).length - 1}].metadata.labels["node.kubernetes.io/instance-type"]`,
      message: expect.stringMatching(/unknown instance type "m9\.huge"/),
    });

    // One item is composed whole: it may be no larger than YAML outside a List.
    writeFileSync(join(dir, 'cluster.yaml'), withItems(configMap(0, MAX_SCENARIO_BYTES + 2 ** 20)));
    expect(await issuesOfAsync(loadScenario(dir, { now: NOW }))).toEqual([{ file: join(dir, 'cluster.yaml'), line: 3, column: 3, message: TOO_LARGE_ITEM_MESSAGE }]);
  }, 120_000);

  it('refuses YAML over the bound for snapshots before reading it, naming both bounds', async () => {
    writeFileSync(join(dir, 'cluster.yaml'), '');
    truncateSync(join(dir, 'cluster.yaml'), MAX_SNAPSHOT_BYTES + 1);
    expect(await issuesOfAsync(loadScenario(dir, { now: NOW }))).toEqual([
      { file: dir, message: '128.0 MiB of YAML; a scenario may hold at most 128.0 MiB (134217728 bytes) with the items of kind: List (what kubectl get -o yaml writes), and 16.0 MiB outside them' },
    ]);
  });

  it('stops at the List item limit, naming the first item past it', async () => {
    writeFileSync(join(dir, 'cluster.yaml'), `apiVersion: v1\nkind: List\nitems:\n${'- {}\n'.repeat(MAX_SCENARIO_ITEMS + 1)}`);
    expect(await issuesOfAsync(loadScenario(dir, { now: NOW }))).toEqual([
      { file: join(dir, 'cluster.yaml'), line: 4 + MAX_SCENARIO_ITEMS, column: 1, message: `more than 100000 items of kind: List; a scenario may hold at most 100000, nothing from here on was read` },
    ]);
  }, 120_000);
});
