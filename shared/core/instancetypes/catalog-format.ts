/**
 * The compact text format of Skiff's instance-type catalogue: what `npm run catalog:build` (`scripts/build-catalog.ts`)
 * writes into `catalog-data.ts` and what `catalog.ts` decodes on first use.
 *
 * Why not JSON rows: as one object per type with every label key spelled out, the catalogue was 1.5 MB of each
 * Lambda bundle (docs/architecture.md#lambda-bundles) and a 1.5 MB object literal for V8 to parse at import time.
 * Here it is about 210 KB of text in one string constant, split and rebuilt only when a caller first asks for it.
 *
 * Layout (lines separated by `\n`):
 * 1. `skiff-catalog 1` (magic and format version);
 * 2. the header ({@link CatalogHeader}) as JSON;
 * 3. the label keys, space-separated, sorted;
 * 4. one line per instance type, sorted by name, cells separated by one space: the name; one cell per label key
 *    (`~` when the type has no such label; an empty cell is the empty value, e.g. the hypervisor of metal types); one
 *    count per {@link EXTENDED_RESOURCES} name in that order (0: none); default max ENIs; IPv4 addresses per ENI; the
 *    on-demand price in USD per instance-hour (`~`: none); Karpenter's allocatable cpu (millicores), memory (MiB),
 *    ephemeral-storage (MiB) and pods.
 *
 * A row is rebuilt by `instanceTypeInfoFromLabels`, the function that built it, so decoding gives back the very rows
 * the build produced (same values, same key order; `test/core/instancetypes/catalog.test.ts` checks the round trip).
 * Pure: no I/O.
 */
import { ValidationError } from '../errors.js';
import { EXTENDED_RESOURCES, type InstanceTypeInfo } from './instance-type.js';
import { instanceTypeInfoFromLabels } from './instance-type-info-from-labels.js';

/** Where one input of the catalogue came from. */
export interface CatalogSource {
  /** File name in the reference data folder, e.g. `ec2-instance-types.json`. */
  readonly file: string;
  /** Repository, path and commit (or generation date) the data was taken from. */
  readonly source: string;
  /** Licence of the data. */
  readonly licence: string;
  /** The source description the file itself carries, when it has one. */
  readonly detail?: string;
}

/** The header object of the catalogue. */
export interface CatalogHeader {
  /** Version of the file format; bumped when a row's shape changes. */
  readonly schemaVersion: 1;
  /** What the file holds. */
  readonly description: string;
  /** The command that generated the file. */
  readonly generatedBy: string;
  /** Date of the newest source (`YYYY-MM-DD`, UTC); the file carries no wall-clock timestamp so builds are reproducible. */
  readonly sourceDate: string;
  /** "on-demand prices are us-east-1 list prices, also used for us-east-2 and us-west-2". */
  readonly note: string;
  /** Units of the row fields, by field name. */
  readonly units: Readonly<Record<string, string>>;
  /** Sources and licences of the inputs. */
  readonly sources: readonly CatalogSource[];
  /** Number of rows, and of rows without an on-demand price. */
  readonly counts: { readonly instanceTypes: number; readonly withoutPrice: number };
}

/** The whole the catalogue: a header and the rows, sorted by name. */
export interface CatalogFile {
  readonly header: CatalogHeader;
  readonly instanceTypes: readonly InstanceTypeInfo[];
}

/** First line of the format. */
export const CATALOG_FORMAT_MAGIC = 'skiff-catalog 1';
/** The cell of an absent label or a missing price. */
const ABSENT = '~';
/** Name used in decoding errors. */
const SOURCE = 'shared/core/instancetypes/catalog-data.ts';

/**
 * Encodes a catalogue in the compact format.
 * @throws {Error} when a name or label value cannot be written as a cell (holds whitespace, or is `~`), or a row's
 *   extended resource is not one of {@link EXTENDED_RESOURCES}
 */
export function encodeCatalogText(catalog: CatalogFile): string {
  const keys = [...new Set(catalog.instanceTypes.flatMap((t) => Object.keys(t.labels)))].sort();
  const cell = (value: string, what: string): string => {
    if (/\s/.test(value) || value === ABSENT) throw new Error(`catalogue ${what} ${JSON.stringify(value)} cannot be a cell of the compact format`);
    return value;
  };
  for (const k of keys) cell(k, 'label key');
  const lines = [CATALOG_FORMAT_MAGIC, JSON.stringify(catalog.header), keys.join(' ')];
  for (const t of catalog.instanceTypes) {
    for (const r of Object.keys(t.extendedResources)) {
      if (!(EXTENDED_RESOURCES as readonly string[]).includes(r)) throw new Error(`catalogue ${t.name}: unknown extended resource ${r}`);
    }
    const a = t.karpenterAllocatable;
    lines.push(
      [
        cell(t.name, 'name'),
        ...keys.map((k) => (t.labels[k] === undefined ? ABSENT : cell(t.labels[k]!, `label ${k} of ${t.name}`))),
        ...EXTENDED_RESOURCES.map((r) => String(t.extendedResources[r] ?? 0)),
        String(t.defaultMaxENIs),
        String(t.ipv4AddressesPerInterface),
        t.onDemandPrice === null ? ABSENT : String(t.onDemandPrice),
        String(a.cpu),
        String(a.memory),
        String(a['ephemeral-storage']),
        String(a.pods),
      ].join(' '),
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Decodes the compact format into the catalogue's header and rows (not frozen; `catalog.ts` validates and freezes).
 * @throws {ValidationError} when the text is not in the format (wrong magic, a row with the wrong number of cells,
 *   a number that does not parse) or a row's labels are incomplete (from `instanceTypeInfoFromLabels`)
 */
export function decodeCatalogText(text: string): CatalogFile {
  const fail = (line: number, message: string): never => {
    throw new ValidationError([{ file: SOURCE, path: `line ${line}`, message }]);
  };
  const lines = text.split('\n');
  if (lines[0] !== CATALOG_FORMAT_MAGIC) fail(1, `expected ${JSON.stringify(CATALOG_FORMAT_MAGIC)} (regenerate with npm run catalog:build)`);
  const header = JSON.parse(lines[1] ?? 'null') as CatalogHeader;
  const keys = (lines[2] ?? '').split(' ');
  const width = 1 + keys.length + EXTENDED_RESOURCES.length + 7;
  const rows: InstanceTypeInfo[] = [];
  for (let i = 3; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === '') continue;
    const cells = line.split(' ');
    if (cells.length !== width) fail(i + 1, `expected ${width} cells, got ${cells.length}`);
    const num = (j: number): number => {
      const n = Number(cells[j]);
      return cells[j] !== '' && Number.isFinite(n) ? n : fail(i + 1, `cell ${j + 1} is not a number: ${JSON.stringify(cells[j])}`);
    };
    const name = cells[0]!;
    const labels: Record<string, string> = {};
    keys.forEach((k, j) => {
      const v = cells[1 + j]!;
      if (v !== ABSENT) labels[k] = v;
    });
    let at = 1 + keys.length;
    const extendedResources: Record<string, number> = {};
    for (const r of EXTENDED_RESOURCES) extendedResources[r] = num(at++);
    const defaultMaxENIs = num(at++);
    const ipv4AddressesPerInterface = num(at++);
    const onDemandPrice = cells[at] === ABSENT ? null : num(at);
    at++;
    const karpenterAllocatable = { cpu: num(at), memory: num(at + 1), 'ephemeral-storage': num(at + 2), pods: num(at + 3) };
    rows.push(instanceTypeInfoFromLabels({ name, labels, extendedResources, defaultMaxENIs, ipv4AddressesPerInterface, onDemandPrice, karpenterAllocatable, source: SOURCE }));
  }
  return { header, instanceTypes: rows };
}
