/**
 * The price file of `skiff simulate --prices <file>` (docs/contracts.md#price-file): prices per instance type (and
 * zone), on-demand and spot, USD per hour, plus offerings EC2 does not have — for a region whose list prices differ
 * from the catalogue's us-east-1 ones, or an account with discounts. YAML or JSON (JSON is YAML):
 *
 * ```yaml
 * prices:
 *   - {instanceType: m5.large, onDemand: 0.107}                    # every zone
 *   - {instanceType: m5.large, zone: eu-west-1a, spot: 0.035}      # one zone
 * unavailable:
 *   - {instanceType: c5.large, zone: eu-west-1c}                   # not offered there (any capacity type)
 *   - {instanceType: p3.2xlarge, capacityType: spot}               # no spot offering anywhere
 * ```
 *
 * A bare list is read as `prices`. Entries are checked as `spec.prices` and `spec.offerings.unavailable` are
 * (`shared/sim/scenario.ts`); problems name the file, line, column and field.
 */
import * as z from 'zod';
import { ValidationError, type ValidationIssue } from '../core/errors.js';
import { locateIssues, manifestErrorMap, readManifestDocuments, zodIssuesToPathIssues } from '../core/api/manifest.js';
import { instanceTypeByName } from '../core/instancetypes/catalog.js';
import { priceEntrySchema, unavailableOfferingSchema, type PriceEntry, type UnavailableOffering } from './scenario.js';
import { zonesOf } from './simulated-ec2.js';

/** A price file's schema as a bare list of prices. */
const priceListSchema = z.array(priceEntrySchema).transform((prices) => ({ prices, unavailable: [] as z.output<typeof unavailableOfferingSchema>[] }));
/** A price file's schema as `{prices, unavailable}`. */
const priceObjectSchema = z.strictObject({ prices: z.array(priceEntrySchema).default(() => []), unavailable: z.array(unavailableOfferingSchema).default(() => []) });

/** What a price file gives. */
export interface PriceFile {
  readonly file: string;
  /** Each entry's `source` is the file's path. */
  readonly prices: readonly PriceEntry[];
  readonly unavailable: readonly UnavailableOffering[];
}

/**
 * Parses and checks a price file's text against the region the simulation runs in (the loader reads the file,
 * `shared/sim/scenario-loader.ts`).
 * @param text the file's content
 * @param file the path given to `--prices` (for issues and the entries' `source`)
 * @param region the simulation's region (zones are checked against it)
 * @throws {ValidationError} when the text is not one YAML/JSON document of the shape above, gives a price that is not
 *   a positive number from 0.000001 to 10,000 USD/h (`shared/sim/scenario.ts` `priceSchema`), names an instance type Skiff's
 *   catalogue does not hold, or a zone outside the region (each issue with file, line, column and path)
 */
export function parsePriceFile(text: string, file: string, region: string): PriceFile {
  const read = readManifestDocuments(text, file);
  const issues: ValidationIssue[] = [...read.issues];
  const doc = read.documents[0];
  if (!doc) throw new ValidationError(issues.length > 0 ? issues : [{ file, line: 1, column: 1, message: 'an empty price file: give prices: [{instanceType, zone?, onDemand?, spot?}]' }]);
  // One document only: a second one would be silently ignored otherwise.
  const extra = read.documents[1];
  if (extra) issues.push({ file, line: extra.line, column: 1, message: 'a price file holds one YAML document; put every entry in the first one\'s prices: and unavailable:' });
  // The shape picks the schema (a union would report only "Invalid input" at 1:1), so issues name the entry's field.
  const parsed = (Array.isArray(doc.value) ? priceListSchema : priceObjectSchema).safeParse(doc.value, { error: manifestErrorMap });
  if (!parsed.success) throw new ValidationError([...issues, ...locateIssues(doc, zodIssuesToPathIssues(parsed.error.issues))]);
  const zones = zonesOf(region);
  const base = Array.isArray(doc.value) ? [] : ['prices'];
  const check = (path: PropertyKey[], entry: { instanceType: string; zone?: string | undefined }) => {
    if (!instanceTypeByName(entry.instanceType)) issues.push(...locateIssues(doc, [{ path: [...path, 'instanceType'], message: `unknown instance type ${JSON.stringify(entry.instanceType)} (not in Skiff's EC2 catalogue)` }]));
    if (entry.zone !== undefined && !zones.includes(entry.zone)) issues.push(...locateIssues(doc, [{ path: [...path, 'zone'], message: `zone ${entry.zone} is not in region ${region} (its zones: ${zones.join(', ')})` }]));
  };
  parsed.data.prices.forEach((p, i) => check([...base, i], p));
  parsed.data.unavailable.forEach((o, i) => check(['unavailable', i], o));
  if (issues.length > 0) throw new ValidationError(issues);
  return {
    file,
    prices: parsed.data.prices.map((p) => ({ ...withoutUndefined(p), source: file })),
    unavailable: parsed.data.unavailable.map((o) => withoutUndefined(o)),
  };
}

/** The object without its undefined fields (exactOptionalPropertyTypes). */
function withoutUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
