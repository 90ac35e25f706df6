/**
 * Field issues: a zod parse failure as messages at field paths (`spec.template.spec.requirements[0].operator: is
 * required`, `unknown field "consolidatonPolicy" (did you mean "consolidationPolicy"?)`). Shared by the manifest
 * reader (`manifest.ts`, YAML with lines and columns) and the Kubernetes adapter, which parses API objects with the
 * same schemas and must not carry the YAML parser into the Lambda bundles (docs/architecture.md#lambda-bundles).
 *
 * Pure.
 */
import { distance } from 'fastest-levenshtein';
import type * as z from 'zod';

/** A problem at a field path inside one object (no file or line yet). */
export interface PathIssue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
  /** Point at the key rather than the value (an unknown field). */
  readonly atKey?: boolean;
}

/**
 * Formats a field path as `spec.template.spec.requirements[0].operator`; keys that are not plain identifiers are
 * quoted in brackets (`metadata.labels["karpenter.sh/discovery"]`).
 * @example formatPath(['spec', 'budgets', 0, 'nodes']) // 'spec.budgets[0].nodes'
 */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else {
      const key = String(seg);
      if (/^[A-Za-z_$][\w$-]*$/.test(key)) out += out === '' ? key : `.${key}`;
      else out += `[${JSON.stringify(key)}]`;
    }
  }
  return out;
}

/**
 * The message for an unknown field, with a suggestion when a known field is close
 * (`unknown field "consolidatonPolicy" (did you mean "consolidationPolicy"?)`).
 * @param key the unknown field
 * @param known the fields the object accepts
 */
export function unknownFieldMessage(key: string, known: readonly string[]): string {
  const meant = nearestOption(key, known);
  return `unknown field ${JSON.stringify(key)}${meant !== undefined ? ` (did you mean ${JSON.stringify(meant)}?)` : ''}`;
}

/** Separator the error map uses to keep one message per unknown key inside a single zod issue. */
const KEY_MESSAGE_SEPARATOR = '\u0000';

/** Known keys of the object schema that raised an `unrecognized_keys` issue (zod keeps it as `inst`). */
function knownKeysOf(inst: unknown): string[] {
  const shape = (inst as { _zod?: { def?: { shape?: Record<string, unknown> } } } | undefined)?._zod?.def?.shape;
  return shape ? Object.keys(shape) : [];
}

/**
 * The zod error map used for manifests: "is required" for a missing field, one "unknown field" message per
 * unrecognised key (with a suggestion), and a readable message for a value of the wrong type in a union.
 * Pass it as `schema.safeParse(value, { error: manifestErrorMap })`.
 */
export const manifestErrorMap: z.core.$ZodErrorMap = (iss) => {
  // A missing field of a fixed set of values (an enum, a literal) is missing too, not a wrong value.
  if ((iss.code === 'invalid_type' || iss.code === 'invalid_value') && iss.input === undefined) return 'is required';
  if (iss.code === 'unrecognized_keys') {
    const known = knownKeysOf(iss.inst);
    return iss.keys.map((k) => unknownFieldMessage(k, known)).join(KEY_MESSAGE_SEPARATOR);
  }
  if (iss.code === 'invalid_value' && typeof iss.input === 'string' && iss.values.length > 1) {
    const meant = nearestOption(iss.input, iss.values.filter((v): v is string => typeof v === 'string'));
    if (meant !== undefined) return `Invalid option: expected one of ${iss.values.map((v) => (typeof v === 'string' ? `"${v}"` : String(v))).join('|')} (did you mean ${JSON.stringify(meant)}?)`;
  }
  // A map key its key rule refuses: zod's own words are "Invalid key in record"; the rule's say what a key must be.
  if (iss.code === 'invalid_key') {
    const why = iss.issues[0]?.message;
    if (why !== undefined) return why.startsWith(JSON.stringify(iss.input)) ? why : `${JSON.stringify(iss.input)}: ${why}`;
  }
  if (iss.code === 'invalid_union') {
    const expected = iss.errors.flatMap((branch) => (branch.length === 1 && branch[0]?.code === 'invalid_type' ? [branch[0].expected] : []));
    if (expected.length === iss.errors.length && expected.length > 0) {
      return `expected ${[...new Set(expected)].join(' or ')}, received ${describe(iss.input)}`;
    }
  }
  return undefined;
};

/**
 * The option `written` most likely meant, ignoring case: the nearest by edit distance, when within
 * max(2, a third of its length) (`in` → `In`, `WhenEmptyOrUnderutilised` → `WhenEmptyOrUnderutilized`; `Underutilised`
 * is too far from anything). Undefined when none is close. Shared by unknown fields, values outside an enum and names
 * that match no object (`scenario-checks.ts`).
 * @example nearestOption('genral', ['general', 'gpu']) // 'general'
 */
export function nearestOption(written: string, options: readonly string[]): string | undefined {
  const lower = written.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const o of options) {
    const d = distance(lower, o.toLowerCase());
    if (d < bestDistance) {
      best = o;
      bestDistance = d;
    }
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(best.length / 3)) ? best : undefined;
}

/** A short name of a value's type (`null`, `a list`, `a mapping`, `string`, …). */
function describe(value: unknown): string {
  if (value === null) return 'null';
  // YAML reads 1e400 as Infinity: "received number" would hide why a number was refused.
  if (typeof value === 'number' && !Number.isFinite(value)) return `${value} (a number too large to read, or not a number)`;
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return typeof value;
}

/**
 * Converts zod issues into path issues: one per unknown field (path ending at the field), nested union failures
 * flattened to their most specific branch.
 */
export function zodIssuesToPathIssues(issues: readonly z.core.$ZodIssue[]): PathIssue[] {
  const out: PathIssue[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      const messages = issue.message.split(KEY_MESSAGE_SEPARATOR);
      issue.keys.forEach((key, i) => {
        out.push({ path: [...issue.path, key], message: messages.length === issue.keys.length ? (messages[i] ?? '') : `unknown field ${JSON.stringify(key)}`, atKey: true });
      });
    } else {
      const atKey = issue.code === 'custom' && (issue.params as { atKey?: unknown } | undefined)?.atKey === true;
      out.push({ path: issue.path, message: issue.message, ...(atKey ? { atKey } : {}) });
    }
  }
  return withoutMisspeltRequired(out);
}

/**
 * Drops a field's "is required" when an unknown field beside it is its misspelling (`whenUnsatisfable` with
 * `whenUnsatisfiable` missing): the one issue to fix is the typo, whose message already names the field.
 */
function withoutMisspeltRequired(issues: readonly PathIssue[]): PathIssue[] {
  const misspelt = new Set<string>();
  for (const i of issues) {
    const meant = /^unknown field ".*" \(did you mean "(.*)"\?\)$/.exec(i.message)?.[1];
    if (meant !== undefined) misspelt.add(JSON.stringify([...i.path.slice(0, -1), meant]));
  }
  if (misspelt.size === 0) return [...issues];
  return issues.filter((i) => !(i.message === 'is required' && misspelt.has(JSON.stringify(i.path))));
}
