/**
 * The few facts of the shipped catalogue the controllers read at run time, in a table of their own
 * (`catalog-facts-data.ts`, about 35 KB, written by `npm run catalog:build` beside `catalog-data.ts` from the same
 * rows). The EC2 adapter (`shared/adapters/aws/instance-types.ts`) builds each type from `DescribeInstanceTypes` and
 * takes from here only what EC2 does not report — the fallback on-demand price, Karpenter's network bandwidth and the
 * pod-eni count — and the diagnosis asks whether a name is a real EC2 type and whether it has a price. The whole
 * catalogue (every label, GPU, ENI limit and Karpenter's allocatable, 225 KB) is for the simulation and the CLI; a
 * Lambda bundle that imports only this module leaves it out (docs/architecture.md#lambda-bundles).
 *
 * Format (lines separated by `\n`): `skiff-catalog-facts 1`, then one line per type sorted by name with four cells
 * separated by one space: the name, the on-demand price in USD per instance-hour (`~`: none), the
 * `karpenter.k8s.aws/instance-network-bandwidth` label (`~`: none), the `vpc.amazonaws.com/pod-eni` count (0: none).
 * Pure: no I/O; decoded on first use.
 */
import { ValidationError } from '../errors.js';
import { CATALOG_FACTS_TEXT } from './catalog-facts-data.js';
import type { InstanceTypeInfo } from './instance-type.js';

/** First line of the format. */
export const CATALOG_FACTS_MAGIC = 'skiff-catalog-facts 1';
/** The label the network bandwidth comes from. */
const BANDWIDTH = 'karpenter.k8s.aws/instance-network-bandwidth';
/** The extended resource the pod-eni count comes from. */
const POD_ENI = 'vpc.amazonaws.com/pod-eni';
const ABSENT = '~';

/**
 * What the controllers know about an instance type from the shipped catalogue. Structurally a subset of
 * {@link InstanceTypeInfo}, so a full catalogue row can stand in for it (tests do).
 */
export interface ShippedInstanceType {
  /** EC2 instance type name, e.g. `m5.large`. */
  readonly name: string;
  /** On-demand Linux list price, USD per instance-hour (us-east-1), or `null` when unknown. */
  readonly onDemandPrice: number | null;
  /** Karpenter's network bandwidth label, Mbps as a decimal string, when the catalogue has one. */
  readonly labels: { readonly [BANDWIDTH]?: string };
  /** The pod-eni count, when above 0. */
  readonly extendedResources: { readonly [POD_ENI]?: number };
}

/**
 * Encodes the facts of catalogue rows (sorted as given).
 * @throws {Error} when a name or bandwidth cannot be a cell (holds whitespace, or is `~`)
 */
export function encodeCatalogFacts(rows: readonly InstanceTypeInfo[]): string {
  const cell = (v: string, what: string): string => {
    if (/\s/.test(v) || v === ABSENT || v === '') throw new Error(`catalogue ${what} ${JSON.stringify(v)} cannot be a cell of the facts table`);
    return v;
  };
  const lines = rows.map((r) =>
    [cell(r.name, 'name'), r.onDemandPrice === null ? ABSENT : String(r.onDemandPrice), r.labels[BANDWIDTH] === undefined ? ABSENT : cell(r.labels[BANDWIDTH], `bandwidth of ${r.name}`), String(r.extendedResources[POD_ENI] ?? 0)].join(' '),
  );
  return `${[CATALOG_FACTS_MAGIC, ...lines].join('\n')}\n`;
}

/**
 * Decodes the facts table.
 * @throws {ValidationError} when the text is not in the format (naming the line)
 */
export function decodeCatalogFacts(text: string): ShippedInstanceType[] {
  const fail = (line: number, message: string): never => {
    throw new ValidationError([{ file: 'shared/core/instancetypes/catalog-facts-data.ts', path: `line ${line}`, message }]);
  };
  const lines = text.split('\n');
  if (lines[0] !== CATALOG_FACTS_MAGIC) fail(1, `expected ${JSON.stringify(CATALOG_FACTS_MAGIC)} (regenerate with npm run catalog:build)`);
  const out: ShippedInstanceType[] = [];
  for (let i = 1; i < lines.length; i++) {
    if (lines[i] === '') continue;
    const [name, price, bandwidth, podEni, ...rest] = lines[i]!.split(' ');
    if (!name || price === undefined || bandwidth === undefined || podEni === undefined || rest.length > 0) fail(i + 1, 'expected 4 cells');
    const onDemandPrice = price === ABSENT ? null : Number(price);
    const eni = Number(podEni);
    if ((onDemandPrice !== null && !Number.isFinite(onDemandPrice)) || !Number.isSafeInteger(eni)) fail(i + 1, 'a price or count is not a number');
    out.push({ name: name!, onDemandPrice, labels: bandwidth === ABSENT ? {} : { [BANDWIDTH]: bandwidth! }, extendedResources: eni > 0 ? { [POD_ENI]: eni } : {} });
  }
  return out;
}

let facts: readonly ShippedInstanceType[] | undefined;
let byName: ReadonlyMap<string, ShippedInstanceType> | undefined;

/**
 * The facts of every catalogue type, sorted by name; decoded on the first call and memoised.
 * @throws {ValidationError} when `catalog-facts-data.ts` does not decode (regenerate it)
 */
export function shippedInstanceTypes(): readonly ShippedInstanceType[] {
  facts ??= Object.freeze(decodeCatalogFacts(CATALOG_FACTS_TEXT));
  return facts;
}

/**
 * Looks an instance type up by its EC2 name.
 * @returns its facts, or `undefined` when the catalogue does not know the type
 * @throws {ValidationError} as {@link shippedInstanceTypes}
 * @example shippedInstanceType('m5.large')?.onDemandPrice // 0.096 (USD/hour)
 */
export function shippedInstanceType(name: string): ShippedInstanceType | undefined {
  byName ??= new Map(shippedInstanceTypes().map((t) => [t.name, t]));
  return byName.get(name);
}
