/**
 * Manifest parsing: multi-document YAML → typed, validated, defaulted Kubernetes/Karpenter objects, with every
 * problem reported as one {@link ValidationError} whose issues carry file, 1-based line and column, and a field
 * path such as `spec.template.spec.requirements[0].operator`.
 *
 * Pure: takes text and a file name for messages; never reads files.
 */
import { Composer, LineCounter, Parser, isAlias, isMap, isNode, isScalar, isSeq, type Document } from 'yaml';
import * as z from 'zod';
import { ValidationError, type ValidationIssue } from '../errors.js';
import { ec2NodeClassSchema } from './ec2nodeclass.js';
import { limitRangeSchema } from './limitrange.js';
import { nodePoolSchema } from './nodepool.js';
import { PROTO_KEY, PROTO_KEY_MESSAGE } from './object-meta.js';
import { pdbSchema } from './pdb.js';
import { podSchema } from './pod.js';
import { daemonSetSchema, deploymentSchema, jobSchema, statefulSetSchema } from './workloads.js';
import { distance } from 'fastest-levenshtein';
import { formatPath, manifestErrorMap, zodIssuesToPathIssues, type PathIssue } from './field-issues.js';
import { listItemRegions, type ListItemRegion, type ListItemSpan } from './yaml-list.js';

// The field-issue formatting lives in field-issues.ts (the Kubernetes adapter uses it without this module's YAML).
export { formatPath, manifestErrorMap, unknownFieldMessage, zodIssuesToPathIssues, type PathIssue } from './field-issues.js';

/** Every kind `parseManifests` understands, with its apiVersion and schema. */
export const MANIFEST_KINDS = {
  NodePool: { apiVersion: 'karpenter.sh/v1', schema: nodePoolSchema },
  EC2NodeClass: { apiVersion: 'karpenter.k8s.aws/v1', schema: ec2NodeClassSchema },
  Pod: { apiVersion: 'v1', schema: podSchema },
  Deployment: { apiVersion: 'apps/v1', schema: deploymentSchema },
  StatefulSet: { apiVersion: 'apps/v1', schema: statefulSetSchema },
  DaemonSet: { apiVersion: 'apps/v1', schema: daemonSetSchema },
  Job: { apiVersion: 'batch/v1', schema: jobSchema },
  PodDisruptionBudget: { apiVersion: 'policy/v1', schema: pdbSchema },
  LimitRange: { apiVersion: 'v1', schema: limitRangeSchema },
} as const;

/** A kind `parseManifests` understands. */
export type ManifestKind = keyof typeof MANIFEST_KINDS;

/** Kinds whose objects live in a namespace (the others are cluster-scoped). */
export const NAMESPACED_KINDS: ReadonlySet<ManifestKind> = new Set<ManifestKind>([
  'Pod',
  'Deployment',
  'StatefulSet',
  'DaemonSet',
  'Job',
  'PodDisruptionBudget',
  'LimitRange',
]);

/** Where a manifest came from: the file and the 1-based line where its document (or embedded object) starts. */
export interface ManifestSource {
  readonly file: string;
  readonly line: number;
}

/** The parsed object type of each kind. */
export type ManifestObjectOf<K extends ManifestKind> = z.output<(typeof MANIFEST_KINDS)[K]['schema']>;

/** One parsed manifest of kind `K`: its kind, apiVersion, the validated object (defaults applied) and its source. */
export interface ManifestOf<K extends ManifestKind> {
  readonly kind: K;
  readonly apiVersion: (typeof MANIFEST_KINDS)[K]['apiVersion'];
  readonly object: ManifestObjectOf<K>;
  readonly source: ManifestSource;
}

/**
 * A parsed manifest: a discriminated union on `kind` — NodePool, EC2NodeClass, Pod, Deployment, StatefulSet,
 * DaemonSet, Job, PodDisruptionBudget or LimitRange.
 */
export type Manifest = { [K in ManifestKind]: ManifestOf<K> }[ManifestKind];

/** A manifest without its source (as validated from a plain object, e.g. a scenario's `apply` event). */
export type ManifestBody = { [K in ManifestKind]: Omit<ManifestOf<K>, 'source'> }[ManifestKind];

/** Options of {@link validateManifestObject}. */
export interface ValidateManifestOptions {
  /** Further `Kind (apiVersion)` names to list as supported in an unknown-kind message (e.g. a Scenario). */
  readonly alsoSupported?: readonly string[];
}

/** A short name of a value's type, as YAML users see it. */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return typeof value;
}

/** Lists the supported kinds for messages: `NodePool (karpenter.sh/v1), …`. */
function supportedKinds(extra: readonly string[] = []): string {
  return [...Object.entries(MANIFEST_KINDS).map(([kind, { apiVersion }]) => `${kind} (${apiVersion})`), ...extra].join(', ');
}

/** The supported kind at most 2 edits from `kind`, letter case aside (`Deamonset` → `DaemonSet`); undefined when none. */
function nearKind(kind: string, extra: readonly string[] = []): string | undefined {
  let best: { kind: string; edits: number } | undefined;
  for (const k of [...Object.keys(MANIFEST_KINDS), ...extra]) {
    const edits = distance(k.toLowerCase(), kind.toLowerCase());
    if (edits <= 2 && (!best || edits < best.edits)) best = { kind: k, edits };
  }
  return best?.kind;
}

/**
 * Kubernetes kinds a scenario has in other forms, with where they go: a near-miss suggestion (`Node` → `Pod`) would
 * mislead for these.
 */
const NOT_READ_KINDS: Readonly<Record<string, string>> = {
  Node: "a scenario's starting nodes are spec.nodes of its Scenario document, or the Nodes of a cluster snapshot (kubectl get nodes -o yaml, in the scenario folder); Skiff launches the rest",
  NodeClaim: "NodeClaims are Skiff's own (it creates one for each node it launches); start with nodes through spec.nodes of the Scenario document, or a cluster snapshot's Nodes",
};

/** The kind entry for a kind name, if supported. */
function kindEntry(kind: string): (typeof MANIFEST_KINDS)[ManifestKind] | undefined {
  return Object.hasOwn(MANIFEST_KINDS, kind) ? MANIFEST_KINDS[kind as ManifestKind] : undefined;
}

/**
 * Fields Karpenter v1 renamed or moved (docs `upgrading/v1-migration.md`): the issue's message gains where the field
 * went, so a v1beta1-era manifest says what to change rather than only "unknown field".
 */
const MIGRATION_HINTS: readonly { readonly kind: string; readonly path: string; readonly value?: string; readonly hint: string }[] = [
  { kind: 'NodePool', path: 'spec.disruption.expireAfter', hint: 'in karpenter.sh/v1 expireAfter moved to spec.template.spec.expireAfter' },
  { kind: 'NodePool', path: 'spec.disruption.consolidationPolicy', value: 'WhenUnderutilized', hint: 'WhenUnderutilized was renamed WhenEmptyOrUnderutilized in karpenter.sh/v1' },
  { kind: 'NodePool', path: 'spec.template.spec.kubelet', hint: 'in karpenter.sh/v1 kubelet settings moved to the EC2NodeClass (spec.kubelet)' },
  { kind: 'NodePool', path: 'spec.template.spec.nodeClassRef.apiVersion', hint: 'in karpenter.sh/v1 nodeClassRef names the group instead (group: karpenter.k8s.aws, kind: EC2NodeClass, name)' },
];

function withMigrationHint(kind: string, issue: PathIssue, value: unknown): PathIssue {
  const path = formatPath(issue.path);
  const hint = MIGRATION_HINTS.find((h) => h.kind === kind && h.path === path && (h.value === undefined || valueAt(value, issue.path) === h.value));
  // The hint says what the field or value became: a "did you mean" beside it would say it twice.
  return hint ? { ...issue, message: `${issue.message.replace(/ \(did you mean "[^"]*"\?\)$/, '')}: ${hint.hint}` } : issue;
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let at = value;
  for (const key of path) at = at !== null && typeof at === 'object' ? (at as Record<PropertyKey, unknown>)[key] : undefined;
  return at;
}

/** Kubernetes kinds a near-miss check must not mistake for a typo of Skiff's (`Node` is one edit from `Pod`). */
const BUILT_IN_KINDS: ReadonlySet<string> = new Set(['Node', 'Role', 'Lease', 'Event', 'Secret', 'Service', 'Binding', 'Endpoints', 'Namespace', 'ReplicaSet', 'CronJob', 'Ingress', 'PodTemplate']);

/**
 * A document of a kind Skiff does not read (a Service, a ConfigMap, a CRD of another project), with what names it;
 * undefined for Skiff's kinds, a near miss of one (`NodePol`; Kubernetes' own kinds such as `Node` are not near
 * misses), a `…List` (it may hold Skiff's objects), anything under karpenter.sh, karpenter.k8s.aws or skiff.dev, and
 * anything without a string apiVersion and kind — those must still be reported.
 * @param value one YAML document as a plain value
 * @param alsoSupported other kind names the caller reads (e.g. `Scenario`)
 */
export function foreignKind(value: unknown, alsoSupported: readonly string[] = []): { readonly kind: string; readonly apiVersion: string; readonly name?: string } | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const { apiVersion, kind, metadata } = value as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown } };
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' || kindEntry(kind)) return undefined;
  // Karpenter's NodeClaims (`kubectl get nodepools,ec2nodeclasses,nodeclaims -o yaml`): Skiff keeps its own records,
  // and adopts a snapshot's nodes from their labels, so these are skipped like any kind it does not read.
  if (kind === 'NodeClaim' && /^karpenter\.sh\//.test(apiVersion)) return { kind, apiVersion, ...(typeof metadata?.name === 'string' ? { name: metadata.name } : {}) };
  if (/^(karpenter\.sh|karpenter\.k8s\.aws|skiff\.dev)\//.test(apiVersion)) return undefined;
  // A List (`kubectl get nodepools -o yaml`) may hold Skiff's objects: never skipped unchecked.
  if (kind.endsWith('List')) return undefined;
  const ours = [...Object.keys(MANIFEST_KINDS), ...alsoSupported];
  if (!BUILT_IN_KINDS.has(kind) && ours.some((k) => distance(k.toLowerCase(), kind.toLowerCase()) <= 2)) return undefined;
  const name = typeof metadata?.name === 'string' ? metadata.name : undefined;
  return { kind, apiVersion, ...(name !== undefined ? { name } : {}) };
}

/**
 * The path of every own `__proto__` key in a plain value (a YAML document as the `yaml` library reads it, which keeps
 * that key as an own key), in document order. Iterative, so any depth of nesting is safe; a value reached twice
 * (a YAML alias) is walked once.
 * @param value a YAML document as plain JS
 * @example protoKeyPaths(JSON.parse('{"metadata": {"labels": {"__proto__": "x"}}}')) // [['metadata', 'labels', '__proto__']]
 */
export function protoKeyPaths(value: unknown): PropertyKey[][] {
  const found: PropertyKey[][] = [];
  const seen = new Set<object>();
  const stack: { value: unknown; path: PropertyKey[] }[] = [{ value, path: [] }];
  while (stack.length > 0) {
    const { value: at, path } = stack.pop()!;
    if (at === null || typeof at !== 'object' || seen.has(at)) continue;
    seen.add(at);
    const entries: [PropertyKey, unknown][] = Array.isArray(at) ? at.map((v, i) => [i, v]) : Object.keys(at).map((k) => [k, (at as Record<string, unknown>)[k]]);
    if (!Array.isArray(at) && Object.hasOwn(at, PROTO_KEY)) found.push([...path, PROTO_KEY]);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      if (key !== PROTO_KEY) stack.push({ value: child, path: [...path, key] });
    }
  }
  return found;
}

/**
 * Adds an issue for every own `__proto__` key of `value` that `issues` do not already name: zod drops such a key
 * without a word (a record skips it, a loose object does not copy it), so without this it would vanish from the
 * parsed object. Nothing of a document is dropped silently; the schemas' own messages (an unknown field, a label key
 * that is not a qualified name) take precedence.
 * @param value the raw document (or embedded object)
 * @param issues the problems its schema found
 * @returns `issues` plus one {@link PROTO_KEY_MESSAGE} issue per `__proto__` key not yet reported
 */
export function withProtoKeyIssues(value: unknown, issues: readonly PathIssue[]): PathIssue[] {
  const reported = new Set(issues.map((i) => formatPath(i.path)));
  const extra = protoKeyPaths(value)
    .filter((path) => !reported.has(formatPath(path)))
    .map((path): PathIssue => ({ path, message: PROTO_KEY_MESSAGE, atKey: true }));
  return [...issues, ...extra];
}

/**
 * Validates one plain object as a manifest: dispatches on `apiVersion` + `kind`, applies the kind's schema.
 * @param value a plain object (e.g. one YAML document converted to JS)
 * @param options extra kind names for the unknown-kind message
 * @returns the typed manifest body, or the problems with their field paths
 * @example validateManifestObject({apiVersion: 'v1', kind: 'Pod', …}) // { ok: true, manifest: { kind: 'Pod', … } }
 */
export function validateManifestObject(
  value: unknown,
  options: ValidateManifestOptions = {},
): { readonly ok: true; readonly manifest: ManifestBody } | { readonly ok: false; readonly issues: readonly PathIssue[] } {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, issues: [{ path: [], message: `a manifest must be a mapping with apiVersion and kind, got ${describe(value)}` }] };
  }
  const { apiVersion, kind } = value as { apiVersion?: unknown; kind?: unknown };
  const issues: PathIssue[] = [];
  if (typeof apiVersion !== 'string') issues.push({ path: ['apiVersion'], message: apiVersion === undefined ? 'is required' : 'must be a string' });
  if (typeof kind !== 'string') issues.push({ path: ['kind'], message: kind === undefined ? `is required (supported: ${supportedKinds(options.alsoSupported)})` : 'must be a string' });
  if (typeof kind !== 'string' || typeof apiVersion !== 'string') return { ok: false, issues };
  const entry = kindEntry(kind);
  if (!entry && kind.endsWith('List') && Array.isArray((value as { items?: unknown }).items)) {
    return { ok: false, issues: [{ path: ['kind'], message: `a ${kind} is not read: put each of its items in a YAML document of its own (separated by ---)`}] };
  }
  const notApplied = NOT_READ_KINDS[kind];
  if (!entry && notApplied !== undefined && !options.alsoSupported?.includes(kind)) {
    return { ok: false, issues: [{ path: ['kind'], message: `a ${kind} is not read as a manifest: ${notApplied}` }] };
  }
  if (!entry) {
    const meant = nearKind(kind, options.alsoSupported);
    return { ok: false, issues: [{ path: ['kind'], message: `unknown kind ${JSON.stringify(kind)} (apiVersion ${apiVersion})${meant ? ` — did you mean ${meant}?` : ''}; supported: ${supportedKinds(options.alsoSupported)}` }] };
  }
  if (apiVersion !== entry.apiVersion) {
    const beta = /^karpenter\.(sh|k8s\.aws)\/v1beta1$/.test(apiVersion) ? ' (v1beta1 objects need the changes in Karpenter\'s v1 migration guide: karpenter.sh/docs/upgrading/v1-migration)' : '';
    return { ok: false, issues: [{ path: ['apiVersion'], message: `${kind} must have apiVersion ${entry.apiVersion}, got ${JSON.stringify(apiVersion)}${beta}` }] };
  }
  const result = (entry.schema as z.ZodType).safeParse(value, { error: manifestErrorMap });
  const problems = withProtoKeyIssues(value, result.success ? [] : zodIssuesToPathIssues(result.error.issues).map((i) => withMigrationHint(kind, i, value)));
  if (!result.success || problems.length > 0) return { ok: false, issues: problems };
  return { ok: true, manifest: { kind, apiVersion, object: result.data } as ManifestBody };
}

/**
 * A zod schema accepting any supported manifest (dispatching like {@link validateManifestObject}); problems are
 * reported at their path inside the value, so inside a Scenario they read `spec.events[3].apply.spec.template…`.
 */
export const manifestBodySchema = z.unknown().transform((value, ctx): ManifestBody => {
  const result = validateManifestObject(value);
  if (result.ok) return result.manifest;
  for (const issue of result.issues) {
    ctx.addIssue({ code: 'custom', path: [...issue.path], message: issue.message, ...(issue.atKey ? { params: { atKey: true } } : {}) });
  }
  return z.NEVER;
});

/** One YAML document of a file, converted to plain JS, able to point at the line of any field path. */
export interface ManifestDocument {
  readonly file: string;
  /** 0-based position of the document in its file (empty documents counted). */
  readonly index: number;
  /** 1-based line where the document's content starts. */
  readonly line: number;
  /** The document as plain JS (mappings → objects, sequences → arrays). */
  readonly value: unknown;
  /**
   * The 1-based line and column of the node at `path`: the value for a scalar (or its key with `atKey`), the key
   * for a mapping or list reached through a key, or the deepest existing ancestor when the path does not exist
   * (a missing field).
   */
  locate(path: readonly PropertyKey[], options?: { readonly atKey?: boolean }): { readonly line: number; readonly column: number };
  /**
   * For a document whose top-level `items` was read item by item (a `kind: List`, see {@link readManifestDocuments}):
   * each entry as a document of its own (its `line` the entry's first line, its `locate` relative to the entry).
   * `value.items` holds the same values.
   */
  readonly items?: readonly ManifestDocument[];
  /**
   * Where this document sits inside the YAML document of its file, for a document that is one item of a `kind: List`
   * (`['items', 3]`): issue paths are shown with it in front (`items[3].spec.replicas`), so they read as the file
   * does. Absent for a document of its own.
   */
  readonly pathPrefix?: readonly PropertyKey[];
}

/**
 * The path of a field of `doc` as an issue shows it: `path` behind the document's {@link ManifestDocument.pathPrefix}.
 * @example documentPath(itemOfList, ['spec', 'replicas']) // 'items[3].spec.replicas'
 */
export function documentPath(doc: Pick<ManifestDocument, 'pathPrefix'>, path: readonly PropertyKey[]): string {
  return formatPath(doc.pathPrefix ? [...doc.pathPrefix, ...path] : path);
}

/** The start offset of a YAML node, if it has one. */
function startOf(node: unknown): number | undefined {
  return isNode(node) && node.range ? node.range[0] : undefined;
}

/** Builds the `locate` function of a document. */
function locator(doc: Document.Parsed, lines: LineCounter): ManifestDocument['locate'] {
  return (path, options = {}) => {
    let node: unknown = doc.contents;
    let offset = startOf(node) ?? 0;
    let resolved = true;
    for (const seg of path) {
      if (isAlias(node)) node = node.resolve(doc);
      if (isMap(node)) {
        const pair = node.items.find((p) => (isScalar(p.key) ? String(p.key.value) : String(p.key)) === String(seg));
        if (!pair) {
          resolved = false;
          break;
        }
        offset = startOf(pair.key) ?? offset;
        node = pair.value;
      } else if (isSeq(node) && typeof seg === 'number' && node.items[seg] !== undefined) {
        node = node.items[seg];
        offset = startOf(node) ?? offset;
      } else {
        resolved = false;
        break;
      }
    }
    if (resolved && !options.atKey && isScalar(node) && node.value !== null) offset = startOf(node) ?? offset;
    const pos = lines.linePos(offset);
    return { line: pos.line, column: pos.col };
  };
}

/** The first line of a YAML library message, without its position suffix. */
function yamlMessage(message: string): string {
  return (message.split('\n')[0] ?? message).replace(/ at line \d+, column \d+:?$/, '');
}

/** Options of {@link readManifestDocuments}. */
export interface ReadManifestOptions {
  /**
   * Stop after this many documents (empty ones counted): the next one gets an issue with `message` at its start and
   * nothing after it is parsed, so a stream of millions of `---` costs no more than the limit. @default no limit
   */
  readonly limit?: { readonly documents: number; readonly message: string };
  /**
   * Stop after this many items of Lists read item by item: the next item gets an issue with `message` at its `-`,
   * and neither it nor anything after it in its List is composed. @default no limit
   */
  readonly itemLimit?: { readonly items: number; readonly message: string };
  /**
   * The most characters of a file composed as whole documents, the items of Lists read item by item aside: a file
   * whose Lists cannot be read item by item (see {@link listItemRegions}' caveats) and that is longer gets an issue
   * with `message` at its first line instead. @default no limit
   */
  readonly wholeLimit?: { readonly chars: number; readonly message: string };
  /**
   * The most characters of one List item: a longer item gets an issue with `message` at its `-` and is not composed,
   * so no single composition is larger than this, as no document composed whole is larger than `wholeLimit`.
   * @default no limit
   */
  readonly entryLimit?: { readonly chars: number; readonly message: string };
}

/** What {@link readManifestDocuments} returns. */
export interface ManifestDocuments {
  /** The non-empty documents without syntax errors, in file order. */
  readonly documents: readonly ManifestDocument[];
  /** YAML syntax problems and limits reached, with file, line and column. */
  readonly issues: readonly ValidationIssue[];
  /** How many documents were read, empty ones included (at most the document limit). */
  readonly count: number;
  /** How many List items were composed one by one (at most the item limit). */
  readonly items: number;
}

/** The Composer options every document is read with. */
const COMPOSE_OPTIONS = { merge: true, uniqueKeys: true } as const;

/** A YAML syntax issue at an offset of the text a LineCounter counted, its lines shifted by `lineShift`. */
function syntaxIssue(file: string, lines: LineCounter, offset: number, message: string, lineShift = 0): ValidationIssue {
  const pos = lines.linePos(offset);
  return { file, line: pos.line + lineShift, column: pos.col, message };
}

/**
 * Splits YAML text into documents (skipping empty ones, e.g. a leading `---` after a comment), keeping what is
 * needed to map field paths back to lines.
 *
 * A top-level `items:` block sequence (a `kind: List`, as `kubectl get -o yaml` writes a cluster) is read item by item
 * (`shared/core/api/yaml-list.ts`): each entry is composed as a document of its own, converted to plain JS and
 * dropped, and the rest of its document is composed without the entries; a field of an entry is located by
 * composing that entry again when an issue needs it. Memory then grows with the plain values, not with the `yaml`
 * library's nodes (which keep source ranges for every scalar): a 59 MB snapshot no longer needs 2.6 GB to parse.
 * Where Skiff differs from composing the document whole: an alias in an entry cannot name an anchor outside that
 * entry (the entry's issue says `Unresolved alias`); kubectl writes neither.
 * @param text the file's content
 * @param file the file name to put in issues
 * @param options limits on the number of documents and List items, and on text composed whole
 * @returns see {@link ManifestDocuments}; a List read item by item is one document whose `items` holds its entries
 */
export function readManifestDocuments(text: string, file: string, options: ReadManifestOptions = {}): ManifestDocuments {
  const regions = listItemRegions(text);
  if (regions.length > 0) {
    const split = readSplit(text, file, regions, options);
    if (split) return split;
  }
  const whole = options.wholeLimit;
  if (whole !== undefined && text.length > whole.chars) return { documents: [], issues: [{ file, line: 1, column: 1, message: whole.message }], count: 0, items: 0 };
  return readWhole(text, file, options);
}

/** The documents of a text composed at once, before conversion: each with its 0-based position (empty ones counted). */
interface Composed {
  readonly parsed: readonly Document.Parsed[];
  readonly lines: LineCounter;
  /** Stream-level syntax errors and the document limit, when reached. */
  readonly issues: readonly ValidationIssue[];
}

/** Composes every document of a text, stopping at the document limit. */
function composeAll(text: string, file: string, options: ReadManifestOptions): Composed {
  const lines = new LineCounter();
  // `parseAllDocuments`, one document at a time, so that reading can stop at the limit.
  const parser = new Parser(lines.addNewLine);
  const composer = new Composer(COMPOSE_OPTIONS);
  const parsed: Document.Parsed[] = [];
  const issues: ValidationIssue[] = [];
  const limit = options.limit;
  for (const doc of composer.compose(parser.parse(text))) {
    if (limit !== undefined && parsed.length >= limit.documents) {
      issues.push(syntaxIssue(file, lines, doc.range[0], limit.message));
      break;
    }
    parsed.push(doc);
  }
  if (parsed.length === 0 && issues.length === 0) {
    for (const error of composer.streamInfo().errors) issues.push(syntaxIssue(file, lines, error.pos[0], `YAML syntax error: ${yamlMessage(error.message)}`));
  }
  return { parsed, lines, issues };
}

/** A composed document as a {@link ManifestDocument}, or its issues; undefined for an empty document. */
function toManifestDocument(doc: Document.Parsed, index: number, file: string, lines: LineCounter): ManifestDocument | ValidationIssue[] | undefined {
  const read = documentValue(doc, file, lines);
  if ('issues' in read) return read.issues;
  if (read.value === null || read.value === undefined) return undefined;
  return { file, index, line: lines.linePos(startOf(doc.contents) ?? 0).line, value: read.value, locate: locator(doc, lines) };
}

/** Composes every document of the text at once (a file without a List, or whose List cannot be read item by item). */
function readWhole(text: string, file: string, options: ReadManifestOptions): ManifestDocuments {
  const { parsed, lines, issues: found } = composeAll(text, file, options);
  const documents: ManifestDocument[] = [];
  const issues = [...found];
  parsed.forEach((doc, index) => {
    const read = toManifestDocument(doc, index, file, lines);
    if (Array.isArray(read)) issues.push(...read);
    else if (read) documents.push(read);
  });
  return { documents, issues, count: parsed.length, items: 0 };
}

/** A composed document as plain JS, or its syntax issues (lines shifted by `lineShift`). */
function documentValue(doc: Document.Parsed, file: string, lines: LineCounter, lineShift = 0): { readonly value: unknown } | { readonly issues: ValidationIssue[] } {
  if (doc.errors.length > 0) return { issues: doc.errors.map((e) => syntaxIssue(file, lines, e.pos[0], `YAML syntax error: ${yamlMessage(e.message)}`, lineShift)) };
  try {
    return { value: doc.toJS({ maxAliasCount: 1000 }) };
  } catch (e) {
    return { issues: [syntaxIssue(file, lines, startOf(doc.contents) ?? 0, `YAML error: ${e instanceof Error ? e.message : String(e)}`, lineShift)] };
  }
}

/**
 * The text of a List's entry as a document of its own: a block sequence holding only that entry, its `-` at the
 * column it had, so every character keeps its column and the entry's line `n` is line `span.line + n - 1` of the
 * file. Kept a sequence (not the entry's content alone) because a block scalar's indentation indicator (`- |2-`)
 * counts from the sequence's indentation: composed without its sequence, the scalar would lose or gain spaces.
 */
function entryText(text: string, span: ListItemSpan): string {
  return ' '.repeat(span.dash - span.lineStart) + text.slice(span.dash, span.end);
}

/**
 * Composes one entry of a List, with a LineCounter over its text; `extra` when the text held more than one document.
 * The document's contents are a one-entry sequence: the entry is its item 0.
 */
function composeEntry(text: string, span: ListItemSpan): { readonly doc: Document.Parsed | undefined; readonly lines: LineCounter; readonly extra: boolean } {
  const lines = new LineCounter();
  const docs = [...new Composer(COMPOSE_OPTIONS).compose(new Parser(lines.addNewLine).parse(entryText(text, span)))];
  return { doc: docs[0], lines, extra: docs.length > 1 };
}

/** The node of the entry in a document {@link composeEntry} composed: item 0 of its one-entry sequence. */
function entryNode(doc: Document.Parsed): unknown {
  return isSeq(doc.contents) ? doc.contents.items[0] : undefined;
}

/** Locates a path inside a List's entry by composing the entry again (only when an issue needs a position). */
function entryLocator(text: string, span: ListItemSpan): ManifestDocument['locate'] {
  return (path, options) => {
    const { doc, lines } = composeEntry(text, span);
    if (!doc) return { line: span.line, column: span.dash - span.lineStart + 1 };
    const pos = locator(doc, lines)([0, ...path], options);
    return { line: pos.line + span.line - 1, column: pos.column };
  };
}

/** Locates a path of a List read item by item: `items[i]…` inside entry `i`, anything else in the rest of the document. */
function listLocator(rest: ManifestDocument['locate'], items: readonly ManifestDocument[]): ManifestDocument['locate'] {
  return (path, options) => {
    const [first, index, ...inner] = path;
    const item = first === 'items' && typeof index === 'number' ? items[index] : undefined;
    return item ? item.locate(inner, options) : rest(path, options);
  };
}

/** True when `key` (an offset) is the key of a top-level `items` pair of the document, with no value of its own. */
function holdsRegion(doc: Document.Parsed, key: number): boolean {
  if (!isMap(doc.contents)) return false;
  const pair = doc.contents.items.find((p) => isScalar(p.key) && p.key.range?.[0] === key);
  if (!pair || !isScalar(pair.key) || pair.key.value !== 'items') return false;
  return pair.value === null || (isScalar(pair.value) && pair.value.value === null && pair.value.source === '');
}

/**
 * Reads a text whose Lists are read item by item: the text without the entries (each region replaced by as many
 * line breaks, so lines and columns stay the file's) is composed as usual, then each entry on its own. Undefined when
 * a region turns out not to be a top-level `items` key of a mapping with nothing else as its value (an `items:` line
 * inside a block scalar at a document's root): the text is then read whole.
 */
function readSplit(text: string, file: string, regions: readonly ListItemRegion[], options: ReadManifestOptions): ManifestDocuments | undefined {
  const pieces: string[] = [];
  let at = 0;
  /** Where each region's `items` key lands in the text without entries. */
  const keys: number[] = [];
  let removed = 0;
  for (const region of regions) {
    pieces.push(text.slice(at, region.start), '\n'.repeat(region.lines));
    keys.push(region.key - removed);
    removed += region.end - region.start - region.lines;
    at = region.end;
  }
  pieces.push(text.slice(at));
  const { parsed, lines, issues: found } = composeAll(pieces.join(''), file, options);
  pieces.length = 0;

  const documents: ManifestDocument[] = [];
  const issues: ValidationIssue[] = [...found];
  let itemsLeft = options.itemLimit?.items ?? Number.POSITIVE_INFINITY;
  let itemCount = 0;
  let stopped = false;
  let next = 0;
  for (const [index, doc] of parsed.entries()) {
    const own: ListItemRegion[] = [];
    for (; next < regions.length && keys[next]! < doc.range[2]; next++) {
      if (keys[next]! < doc.range[0]) return undefined;
      if (!holdsRegion(doc, keys[next]!)) return undefined;
      own.push(regions[next]!);
    }
    if (own.length > 1) return undefined;
    // Past the item limit nothing more is read (the issue says where it was reached).
    if (stopped) continue;
    const read = toManifestDocument(doc, index, file, lines);
    if (Array.isArray(read)) {
      issues.push(...read);
      continue;
    }
    if (!read) continue;
    const region = own[0];
    if (!region) {
      documents.push(read);
      continue;
    }
    const items: ManifestDocument[] = [];
    const values: unknown[] = [];
    let failed = false;
    for (const span of region.items) {
      if (itemsLeft <= 0) {
        issues.push({ file, line: span.line, column: span.dash - span.lineStart + 1, message: options.itemLimit!.message });
        stopped = true;
        break;
      }
      itemsLeft--;
      itemCount++;
      if (options.entryLimit !== undefined && span.end - span.dash > options.entryLimit.chars) {
        issues.push({ file, line: span.line, column: span.dash - span.lineStart + 1, message: options.entryLimit.message });
        failed = true;
        continue;
      }
      const { doc: entry, lines: entryLines, extra } = composeEntry(text, span);
      if (extra) return undefined;
      const read = entry ? documentValue(entry, file, entryLines, span.line - 1) : { value: [null] };
      if ('issues' in read) {
        issues.push(...read.issues);
        failed = true;
        continue;
      }
      const value = Array.isArray(read.value) ? (read.value[0] as unknown) : null;
      const line = entry ? entryLines.linePos(startOf(entryNode(entry)) ?? 0).line + span.line - 1 : span.line;
      values.push(value);
      items.push({ file, index, line, value, locate: entryLocator(text, span), pathPrefix: ['items', items.length] });
    }
    if (failed || stopped) continue;
    (read.value as Record<string, unknown>).items = values;
    documents.push({ ...read, locate: listLocator(read.locate, items), items });
  }
  return { documents, issues, count: parsed.length, items: itemCount };
}

/**
 * Turns path issues of one document into validation issues with file, line, column and formatted path.
 * @param doc the document the paths refer to
 * @param issues problems at paths inside `doc.value`
 */
export function locateIssues(doc: ManifestDocument, issues: readonly PathIssue[]): ValidationIssue[] {
  return issues.map((issue) => {
    const { line, column } = doc.locate(issue.path, { atKey: issue.atKey === true });
    const path = documentPath(doc, issue.path);
    return { file: doc.file, line, column, ...(path ? { path } : {}), message: issue.message };
  });
}

/**
 * Validates one document as a manifest.
 * @param doc a document from {@link readManifestDocuments}
 * @param options extra kind names for the unknown-kind message
 * @returns the manifest (source = file and the document's first line), or the located issues
 */
export function parseManifestDocument(
  doc: ManifestDocument,
  options: ValidateManifestOptions = {},
): { readonly manifest?: Manifest; readonly issues: readonly ValidationIssue[] } {
  const result = validateManifestObject(doc.value, options);
  if (!result.ok) return { issues: locateIssues(doc, result.issues) };
  return { manifest: { ...result.manifest, source: { file: doc.file, line: doc.line } } as Manifest, issues: [] };
}

/**
 * Parses a multi-document YAML file of Kubernetes/Karpenter manifests.
 * @param text the file's content
 * @param file the file name used in sources and issues
 * @returns the manifests in document order, validated and defaulted
 * @throws {ValidationError} listing every problem (YAML syntax, unknown kind, schema violation) with file, line,
 *   column and field path; nothing is returned when any document is invalid
 * @example
 * const [pool] = parseManifests(text, 'nodepool-general.yaml');
 * if (pool?.kind === 'NodePool') pool.object.spec.disruption.budgets; // [{ nodes: '10%' }]
 */
export function parseManifests(text: string, file: string): Manifest[] {
  const { documents, issues } = readManifestDocuments(text, file);
  const all: ValidationIssue[] = [...issues];
  const manifests: Manifest[] = [];
  for (const doc of documents) {
    const result = parseManifestDocument(doc);
    all.push(...result.issues);
    if (result.manifest) manifests.push(result.manifest);
  }
  if (all.length > 0) throw new ValidationError(sortIssues(all));
  return manifests;
}

/** Orders issues by file, then line, then column (stable). */
export function sortIssues(issues: readonly ValidationIssue[]): ValidationIssue[] {
  return [...issues].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) || (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
}
