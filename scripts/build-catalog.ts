/**
 * Builds Skiff's instance-type catalogue, `shared/core/instancetypes/catalog-data.ts` (the compact text format of
 * `shared/core/instancetypes/catalog-format.ts` in one string constant), from the reference data.
 *
 * Usage: `npm run catalog:build` (reads `../shared/data` next to the repository root, or the folder named by the
 * `SKIFF_REFERENCE_DATA` environment variable; a build-time input: nothing reads it at run time).
 *
 * Inputs (see the reference folder's README.md for sources and licences):
 * - `ec2-instance-types.json`: Karpenter's labels and allocatable per instance type;
 * - `ec2-on-demand-prices-us-east-1.json`: on-demand Linux list prices, USD per instance-hour;
 * - `eni-limits.jsonl`: default max ENIs and IPv4 addresses per ENI.
 *
 * The output is deterministic (rows sorted by name, keys in a fixed order, no wall-clock timestamp), so running the
 * script twice on the same inputs produces the same bytes. This is the only place that reads the reference folder:
 * the runtime imports the generated module and decodes it on first use.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as z from 'zod';
import { encodeCatalogFacts } from '../shared/core/instancetypes/catalog-facts.js';
import { encodeCatalogText, type CatalogFile, type CatalogHeader, type CatalogSource } from '../shared/core/instancetypes/catalog-format.js';
import { EXTENDED_RESOURCES, type InstanceTypeInfo } from '../shared/core/instancetypes/instance-type.js';
import { instanceTypeInfoFromLabels } from '../shared/core/instancetypes/instance-type-info-from-labels.js';
import { cpuMillicores, mebibytes, parseQuantity } from '../shared/core/resources/quantity.js';

/** The repository root (the folder holding `package.json`). */
export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Where the generated catalogue is written, relative to {@link REPO_ROOT}. */
export const CATALOG_PATH = 'shared/core/instancetypes/catalog-data.ts';
/** Where the facts table the controllers read (`catalog-facts.ts`) is written, relative to {@link REPO_ROOT}. */
export const CATALOG_FACTS_PATH = 'shared/core/instancetypes/catalog-facts-data.ts';

/** The file names of the three inputs inside the reference data folder. */
export const SOURCE_FILES = {
  instanceTypes: 'ec2-instance-types.json',
  prices: 'ec2-on-demand-prices-us-east-1.json',
  eniLimits: 'eni-limits.jsonl',
  readme: 'README.md',
} as const;

/** The note every consumer of the prices must see. */
export const PRICE_NOTE = 'on-demand prices are us-east-1 list prices, also used for us-east-2 and us-west-2';

/**
 * The reference data folder (a build-time input): `$SKIFF_REFERENCE_DATA` when set, else `../shared/data` beside the
 * repository.
 * @param env the environment to read (defaults to `process.env`)
 */
export function referenceDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const override = env.SKIFF_REFERENCE_DATA;
  return override ? resolve(override) : resolve(REPO_ROOT, '..', 'shared', 'data');
}

/** The raw text of the reference inputs, so {@link buildCatalog} stays free of file-system access. */
export interface ReferenceSources {
  readonly instanceTypesJson: string;
  readonly pricesJson: string;
  readonly eniLimitsJsonl: string;
  readonly readme: string;
}

/**
 * Reads the reference inputs from a folder.
 * @throws {Error} when a file is missing (the message names the folder and `SKIFF_REFERENCE_DATA`)
 */
export function readSources(dir: string = referenceDataDir()): ReferenceSources {
  const read = (file: string): string => {
    try {
      return readFileSync(join(dir, file), 'utf8');
    } catch (cause) {
      throw new Error(`cannot read ${join(dir, file)} (set SKIFF_REFERENCE_DATA to the reference data folder)`, { cause });
    }
  };
  return {
    instanceTypesJson: read(SOURCE_FILES.instanceTypes),
    pricesJson: read(SOURCE_FILES.prices),
    eniLimitsJsonl: read(SOURCE_FILES.eniLimits),
    readme: read(SOURCE_FILES.readme),
  };
}

const InstanceTypesSchema = z.object({
  source: z.string(),
  note: z.string().optional(),
  instanceTypes: z
    .array(
      z.object({
        name: z.string().regex(/^[a-z0-9-]+\.[a-z0-9-]+$/),
        labels: z.record(z.string(), z.string()),
        allocatable: z.record(z.string(), z.string()),
      }),
    )
    .min(1),
});

const PricesSchema = z.object({
  source: z.string(),
  region: z.literal('us-east-1'),
  unit: z.string(),
  prices: z.record(z.string(), z.number().nonnegative()),
});

const EniLimitSchema = z.object({
  instanceType: z.string(),
  defaultMaxENIs: z.number().int().nonnegative(),
  ipv4AddressesPerInterface: z.number().int().positive(),
});

type EniLimit = z.infer<typeof EniLimitSchema>;

/**
 * Builds the catalogue from the reference inputs. Pure: same inputs, same output. Each row is assembled by
 * `instanceTypeInfoFromLabels` (shared with the EC2 adapter, which derives the same labels from DescribeInstanceTypes).
 * @throws {Error} when an input does not have the expected shape, or an instance type has no ENI limits
 * @throws {ValidationError} when a row's labels are incomplete or malformed
 */
export function buildCatalog(sources: ReferenceSources): CatalogFile {
  const types = parseJson(InstanceTypesSchema, sources.instanceTypesJson, SOURCE_FILES.instanceTypes);
  const prices = parseJson(PricesSchema, sources.pricesJson, SOURCE_FILES.prices);
  const eniLimits = parseEniLimits(sources.eniLimitsJsonl);

  const rows = types.instanceTypes.map((source): InstanceTypeInfo => {
    const eni = eniLimits.get(source.name);
    if (!eni) throw new Error(`${SOURCE_FILES.eniLimits}: no ENI limits for ${source.name}`);
    const price = prices.prices[source.name];
    return toRow(source, eni, price === undefined ? null : price);
  });
  rows.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (let i = 1; i < rows.length; i++) {
    if (rows[i]?.name === rows[i - 1]?.name) throw new Error(`${SOURCE_FILES.instanceTypes}: duplicate instance type ${rows[i]?.name}`);
  }

  const readmeRows = parseReadmeTable(sources.readme);
  const describe = (file: string, detail: string): CatalogSource => {
    const row = readmeRows.get(file);
    if (!row) throw new Error(`${SOURCE_FILES.readme}: no row for ${file}`);
    return { file, source: row.source, licence: row.licence, ...(detail ? { detail } : {}) };
  };
  const catalogSources = [
    describe(SOURCE_FILES.instanceTypes, types.source),
    describe(SOURCE_FILES.prices, prices.source),
    describe(SOURCE_FILES.eniLimits, ''),
  ];
  const dates = catalogSources.flatMap((s) => [...`${s.source} ${s.detail ?? ''}`.matchAll(/\b(\d{4}-\d{2}-\d{2})/g)].map((m) => m[1] ?? ''));
  const sourceDate = dates.sort().at(-1);
  if (!sourceDate) throw new Error('no date found in the source descriptions');

  const header: CatalogHeader = {
    schemaVersion: 1,
    description:
      "EC2 instance types for Skiff: facts, Karpenter's well-known labels, on-demand prices and Karpenter's published allocatable (reference column)",
    generatedBy: 'npm run catalog:build (scripts/build-catalog.ts)',
    sourceDate,
    note: PRICE_NOTE,
    units: {
      vcpu: 'vCPUs',
      memoryMiB: 'MiB',
      'gpu.memoryMiB': 'MiB per GPU',
      extendedResources: 'counts',
      onDemandPrice: `${prices.unit}, ${prices.region} (null when the price table has no entry)`,
      karpenterAllocatable: 'cpu millicores, memory MiB, ephemeral-storage MiB, pods count; amiFamily AL2023, no blockDeviceMappings',
    },
    sources: catalogSources,
    counts: { instanceTypes: rows.length, withoutPrice: rows.filter((r) => r.onDemandPrice === null).length },
  };
  return { header, instanceTypes: rows };
}

/**
 * Serialises a catalogue as the TypeScript module `catalog-data.ts`: the compact text of `encodeCatalogText` (one
 * instance type per line, so diffs stay readable) in a `String.raw` template literal. Ends with a newline.
 * @throws {Error} when the text holds a backquote, `${` or a backslash (it could not sit in the literal unchanged), or
 *   a value `encodeCatalogText` refuses
 */
export function formatCatalog(catalog: CatalogFile): string {
  const text = encodeCatalogText(catalog);
  if (/`|\$\{|\\/.test(text)) throw new Error('the catalogue text holds a backquote, ${ or a backslash; it cannot be written as a String.raw literal');
  return [
    '// Generated by `npm run catalog:build` (scripts/build-catalog.ts) from the reference data: do not edit.',
    '// The compact text format of `catalog-format.ts`; `catalog.ts` decodes it on first use.',
    '',
    '/** The catalogue in the compact text format of `catalog-format.ts`. */',
    `export const CATALOG_TEXT = String.raw\`${text}\`;`,
    '',
  ].join('\n');
}

/**
 * Serialises the facts table of a catalogue (`encodeCatalogFacts`) as the TypeScript module `catalog-facts-data.ts`.
 * @throws {Error} as {@link formatCatalog}
 */
export function formatCatalogFacts(catalog: CatalogFile): string {
  return generatedModule('CATALOG_FACTS_TEXT', 'the facts table of `catalog-facts.ts`', encodeCatalogFacts(catalog.instanceTypes));
}

/** A generated module holding `text` in one `String.raw` constant. */
function generatedModule(name: string, what: string, text: string): string {
  if (/`|\$\{|\\/.test(text)) throw new Error(`${what} holds a backquote, \${ or a backslash; it cannot be written as a String.raw literal`);
  return [
    '// Generated by `npm run catalog:build` (scripts/build-catalog.ts) from the reference data: do not edit.',
    '',
    `/** ${what[0]!.toUpperCase()}${what.slice(1)}. */`,
    `export const ${name} = String.raw\`${text}\`;`,
    '',
  ].join('\n');
}

function toRow(
  source: z.infer<typeof InstanceTypesSchema>['instanceTypes'][number],
  eni: EniLimit,
  onDemandPrice: number | null,
): InstanceTypeInfo {
  const { name, labels, allocatable } = source;
  const extendedResources: Record<string, number> = {};
  for (const resource of EXTENDED_RESOURCES) {
    const quantity = allocatable[resource];
    if (quantity !== undefined && parseQuantity(quantity) > 0) extendedResources[resource] = toInt(quantity, `${name} ${resource}`);
  }
  const required = (key: string): string => {
    const value = allocatable[key];
    if (value === undefined) throw new Error(`${SOURCE_FILES.instanceTypes}: ${name} has no allocatable ${key}`);
    return value;
  };
  return instanceTypeInfoFromLabels({
    name,
    // Karpenter gives every type `instance-hypervisor In [<EC2's Hypervisor>]`, the empty string for metal types, which
    // EC2 reports no hypervisor for (aws `pkg/providers/instancetype/types.go` `computeRequirements`); the docs table
    // this file is built from leaves such an empty label out, so it is put back here.
    labels: { 'karpenter.k8s.aws/instance-hypervisor': '', ...labels },
    extendedResources,
    defaultMaxENIs: eni.defaultMaxENIs,
    ipv4AddressesPerInterface: eni.ipv4AddressesPerInterface,
    onDemandPrice,
    karpenterAllocatable: {
      cpu: cpuMillicores(required('cpu')),
      memory: mebibytes(required('memory')),
      'ephemeral-storage': mebibytes(required('ephemeral-storage')),
      pods: parseQuantity(required('pods')),
    },
    source: SOURCE_FILES.instanceTypes,
  });
}

function toInt(text: string, what: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${SOURCE_FILES.instanceTypes}: ${what} is not a non-negative integer: ${text}`);
  return n;
}

function parseJson<T>(schema: z.ZodType<T>, text: string, file: string): T {
  const result = schema.safeParse(JSON.parse(text));
  if (!result.success) throw new Error(`${file}: ${z.prettifyError(result.error)}`);
  return result.data;
}

function parseEniLimits(text: string): Map<string, EniLimit> {
  const limits = new Map<string, EniLimit>();
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') return;
    const result = EniLimitSchema.safeParse(JSON.parse(line));
    if (!result.success) throw new Error(`${SOURCE_FILES.eniLimits}:${index + 1}: ${z.prettifyError(result.error)}`);
    limits.set(result.data.instanceType, result.data);
  });
  return limits;
}

/** Reads the `| file | what | source | licence |` table of the reference README into file → {source, licence}. */
function parseReadmeTable(readme: string): Map<string, { source: string; licence: string }> {
  const rows = new Map<string, { source: string; licence: string }>();
  for (const line of readme.split('\n')) {
    const cells = line.split(' | ');
    const file = /^\| `([^`]+)`$/.exec(cells[0] ?? '')?.[1];
    if (!file || cells.length !== 4) continue;
    const clean = (cell: string | undefined): string => (cell ?? '').replace(/`/g, '').replace(/\s*\|\s*$/, '').trim();
    rows.set(file, { source: clean(cells[2]), licence: clean(cells[3]) });
  }
  return rows;
}

function main(): void {
  const dir = referenceDataDir();
  const catalog = buildCatalog(readSources(dir));
  const text = formatCatalog(catalog);
  const out = join(REPO_ROOT, CATALOG_PATH);
  writeFileSync(out, text);
  writeFileSync(join(REPO_ROOT, CATALOG_FACTS_PATH), formatCatalogFacts(catalog));
  const missing = catalog.instanceTypes.filter((r) => r.onDemandPrice === null).map((r) => r.name);
  console.log(`read ${dir}`);
  console.log(`wrote ${CATALOG_PATH}: ${catalog.instanceTypes.length} instance types, ${(Buffer.byteLength(text) / 1024).toFixed(0)} KiB, and ${CATALOG_FACTS_PATH}`);
  console.log(`no on-demand price for ${missing.length}: ${missing.join(', ')}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main();
