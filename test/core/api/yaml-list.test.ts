// Reading a `kind: List` item by item (issue 22): every entry is composed as a document of its own, and what the
// reader returns — values, field positions, syntax errors — is what composing the whole document gives. The oracle
// is the `yaml` library composing the whole text (parseDocument / parseAllDocuments), not the code under test.
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LineCounter, Parser, isNode, parseAllDocuments, parseDocument, stringify } from 'yaml';
import { readManifestDocuments } from '../../../shared/core/api/manifest.js';
import { listItemRegions } from '../../../shared/core/api/yaml-list.js';

/**
 * A List of `n` entries in the given layout (`''`: kubectl's `- ` at column 0; `'  '`: indented), with every shape
 * a line scan could mistake for an entry boundary: block scalars holding `- ` lines, comments at column 0 between
 * and inside entries, multi-line quoted strings, flow collections over several lines, an empty entry, a nested
 * sequence and a CRLF line.
 */
function list(n: number, indent: string): string {
  const lines = ['apiVersion: v1', 'items:'];
  const at = (s: string) => lines.push(indent + s);
  for (let i = 0; i < n; i++) {
    switch (i % 7) {
      case 0:
        at('- apiVersion: v1');
        at('  kind: Pod');
        at('  metadata:');
        at(`    name: pod-${i}`);
        at('    annotations:');
        at('      script: |');
        at('        - not an entry');
        at(`        ${indent}- nor this`);
        at('');
        at('        items:');
        at('  spec: {containers: [{name: c,');
        at('    image: x}]}');
        break;
      case 1:
        lines.push('# a comment at column 0, between entries');
        at('- kind: ConfigMap');
        at('  metadata:');
        at(`    name: pod-${i}`);
        at('  data:');
        at('    quoted: "a long');
        at('      - string"');
        lines.push('# a comment inside an entry');
        at("    single: 'it''s'");
        break;
      case 2:
        at('-');
        at('  kind: Node');
        at('  metadata:');
        at(`    name: pod-${i}\r`);
        break;
      case 3:
        at('- - nested');
        at(`  - pod-${i}`);
        break;
      case 4:
        at('- ');
        break;
      case 5:
        at(`- {kind: Pod, metadata: {name: pod-${i}}, x: [1,`);
        at('    2]}');
        break;
      default:
        at(`- kind: Pod   # trailing comment`);
        at('  metadata:');
        at(`    name: pod-${i}`);
        at('  folded: >-');
        at('    one');
        at('');
        at('    two');
    }
  }
  lines.push('kind: List', 'metadata:', '  resourceVersion: ""', '');
  return lines.join('\n');
}

/** Line and column (1-based) of the node at `path` as the yaml library finds it composing the whole text. */
function wholePositions(text: string): (path: readonly (string | number)[], atKey?: boolean) => { line: number; column: number } {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines });
  return (path, atKey = false) => position(doc, lines, path, atKey);
}

function position(doc: ReturnType<typeof parseDocument>, lines: LineCounter, path: readonly (string | number)[], atKey: boolean): { line: number; column: number } {
  const parent = doc.getIn(path.slice(0, -1), true);
  let offset: number | undefined;
  if (atKey && isNode(parent) && 'items' in parent) {
    const pair = (parent.items as { key: { value?: unknown; range?: number[] } }[]).find((p) => p.key.value === path.at(-1));
    offset = pair?.key.range?.[0];
  } else {
    const node = doc.getIn(path, true);
    offset = isNode(node) ? node.range?.[0] : undefined;
  }
  const pos = lines.linePos(offset!);
  return { line: pos.line, column: pos.col };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('reading a kind: List item by item', () => {
  it.each([
    ["kubectl's layout (entries at column 0)", ''],
    ['an indented layout', '  '],
  ])('%s: every entry is composed on its own, with the values and positions the whole document has', (_, indent) => {
    const n = 700;
    const text = list(n, indent);
    const sources: string[] = [];
    const parse = Parser.prototype.parse;
    vi.spyOn(Parser.prototype, 'parse').mockImplementation(function (this: Parser, source: string, incomplete?: boolean) {
      sources.push(source);
      return parse.call(this, source, incomplete);
    });
    const read = readManifestDocuments(text, 'list.yaml');
    expect(read.issues).toEqual([]);
    expect(read.items).toBe(n);
    // Nothing composed holds more than one entry: the document without its entries, then each entry alone.
    expect(text.length).toBeGreaterThan(50_000);
    expect(sources).toHaveLength(n + 1);
    expect(sources[0]!.replace(/\n+/g, '\n')).toBe('apiVersion: v1\nitems:\nkind: List\nmetadata:\n  resourceVersion: ""\n');
    expect(sources.slice(1).every((s) => s.split('pod-').length <= 2)).toBe(true);

    const [doc] = read.documents;
    expect(read.documents).toHaveLength(1);
    expect(doc!.value).toEqual(parseAllDocuments(text)[0]!.toJS());
    expect(doc!.items).toHaveLength(n);
    vi.restoreAllMocks();
    const wholePosition = wholePositions(text);
    for (let i = 0; i < n; i += 1) {
      const named = i % 7 !== 3 && i % 7 !== 4;
      const path = named ? ['items', i, 'metadata', 'name'] : ['items', i];
      if (i % 7 === 4) continue;
      expect(doc!.locate(path), `items[${i}]`).toEqual(wholePosition(path));
      expect(doc!.locate(path, { atKey: true }), `items[${i}] at key`).toEqual(wholePosition(path, named));
      expect(doc!.items![i]!.line, `items[${i}] line`).toBe(wholePosition(['items', i]).line);
    }
    expect(doc!.locate(['metadata', 'resourceVersion'])).toEqual(wholePosition(['metadata', 'resourceVersion']));
    // A path that does not exist stops at its deepest existing ancestor, inside the entry.
    expect(doc!.locate(['items', 0, 'metadata', 'missing'])).toEqual(wholePosition(['items', 0, 'metadata'], true));
  });

  it("reports a syntax error inside an entry at the file's line and column, and leaves the List out", () => {
    const entries = Array.from({ length: 300 }, (_, i) => `- kind: Pod\n  metadata:\n    name: p${i}\n`);
    entries[120] = '- kind: Pod\n  metadata:\n    name: p120\n    name: again\n';
    entries[250] = '- kind: Pod\n  metadata: {name: p250\n';
    const text = `apiVersion: v1\nkind: List\nitems:\n${entries.join('')}`;
    const lineOf = (s: string) => text.split('\n').findIndex((l) => l.includes(s)) + 1;
    const read = readManifestDocuments(text, 'list.yaml');
    expect(read.items).toBe(300);
    expect(read.documents).toEqual([]);
    // What composing the whole document reports, at the same lines and columns.
    const lines = new LineCounter();
    const whole = parseDocument(text, { lineCounter: lines, uniqueKeys: true });
    const expected = whole.errors.map((e) => ({ file: 'list.yaml', line: lines.linePos(e.pos[0]).line, column: lines.linePos(e.pos[0]).col, message: `YAML syntax error: ${e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}` }));
    expect(expected).toHaveLength(2);
    expect(expected[0]).toMatchObject({ line: lineOf('name: again'), column: 5, message: 'YAML syntax error: Map keys must be unique' });
    expect(read.issues).toEqual(expected);
  });

  it('keeps the leading spaces of a block scalar whose indentation indicator counts from the sequence', () => {
    // `|2-` counts from the sequence's indentation (2 here), so the content " !" sits at column 4 after its own space.
    const text = 'apiVersion: v1\nitems:\n  - |2-\n     !\n  - >3\n        folded\nkind: List\n';
    const whole = parseDocument(text).toJS();
    expect(whole.items).toEqual([' !', '   folded\n']);
    const read = readManifestDocuments(text, 'list.yaml');
    expect(read.items).toBe(2);
    expect(read.documents[0]!.value).toEqual(whole);
    expect(read.documents[0]!.items!.map((i) => i.line)).toEqual([3, 5]);
  });

  it('gives the values composing the whole document gives, for any List the yaml library writes', () => {
    fc.assert(
      fc.property(
        // No `<<` key: the reader takes it as a merge key, as Kubernetes' YAML does (`<<: null` is an error there), while
        // the whole-document parse below reads YAML 1.2 without merges (counterexample [{"<<": null}], ~1 run in 12).
        fc.array(fc.jsonValue({ maxDepth: 3 }).filter((v) => !JSON.stringify(v).includes('"<<"')), { maxLength: 8 }),
        fc.record({ indentSeq: fc.boolean(), indent: fc.constantFrom(2, 4), lineWidth: fc.constantFrom(0, 20, 80), defaultStringType: fc.constantFrom('PLAIN', 'QUOTE_DOUBLE', 'BLOCK_LITERAL', 'BLOCK_FOLDED') } as const),
        (items, style) => {
          const text = stringify({ apiVersion: 'v1', items, kind: 'List' }, { ...style, defaultKeyType: 'PLAIN', minContentWidth: 0 });
          const read = readManifestDocuments(text, 'x.yaml');
          const whole = parseAllDocuments(text).map((d) => d.toJS({ maxAliasCount: 1000 }));
          expect(read.issues).toEqual([]);
          expect(read.items).toBe(items.length);
          expect(read.documents.map((d) => d.value)).toEqual(whole.filter((v) => v !== null && v !== undefined));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('stops at the item limit, naming the first item past it, and composes nothing after it', () => {
    const text = `apiVersion: v1\nkind: List\nitems:\n${'- {kind: Pod}\n'.repeat(50)}`;
    const read = readManifestDocuments(text, 'list.yaml', { itemLimit: { items: 40, message: 'too many items' } });
    expect(read.items).toBe(40);
    expect(read.documents).toEqual([]);
    expect(read.issues).toEqual([{ file: 'list.yaml', line: 4 + 40, column: 1, message: 'too many items' }]);
  });

  it('reads whole what is not a List at a mapping root (an items: line inside a root block scalar), as the yaml library does', () => {
    const text = '--- |\nitems:\n- a\n- b\n';
    expect(listItemRegions(text)).toHaveLength(1);
    const read = readManifestDocuments(text, 'x.yaml');
    expect(read.documents.map((d) => d.value)).toEqual(parseAllDocuments(text).map((d) => d.toJS()));
    expect(read.items).toBe(0);
  });

  it('refuses text it must compose whole over the limit for that, at its first line', () => {
    const text = `%YAML 1.2\n---\napiVersion: v1\nkind: List\nitems:\n${'- {kind: Pod}\n'.repeat(10)}`;
    expect(readManifestDocuments(text, 'x.yaml', { wholeLimit: { chars: 100, message: 'too big' } }).issues).toEqual([{ file: 'x.yaml', line: 1, column: 1, message: 'too big' }]);
    expect(readManifestDocuments(text, 'x.yaml').documents[0]!.value).toEqual(parseAllDocuments(text)[0]!.toJS());
  });
});
