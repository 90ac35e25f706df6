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
];

function withMigrationHint(kind: string, issue: PathIssue, value: unknown): PathIssue {
  const path = formatPath(issue.path);
  const hint = MIGRATION_HINTS.find((h) => h.kind === kind && h.path === path && (h.value === undefined || valueAt(value, issue.path) === h.value));
  return hint ? { ...issue, message: `${issue.message}: ${hint.hint}` } : issue;
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
  if (!entry) {
    return { ok: false, issues: [{ path: ['kind'], message: `unknown kind ${JSON.stringify(kind)} (apiVersion ${apiVersion}); supported: ${supportedKinds(options.alsoSupported)}` }] };
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
}

/**
 * Splits YAML text into documents (skipping empty ones, e.g. a leading `---` after a comment), keeping what is
 * needed to map field paths back to lines.
 * @param text the file's content
 * @param file the file name to put in issues
 * @param options a limit on the number of documents
 * @returns the non-empty documents, the YAML syntax problems (documents with syntax errors are left out) and how
 *   many documents were read, empty ones included (at most the limit)
 */
export function readManifestDocuments(
  text: string,
  file: string,
  options: ReadManifestOptions = {},
): { readonly documents: readonly ManifestDocument[]; readonly issues: readonly ValidationIssue[]; readonly count: number } {
  const lines = new LineCounter();
  // `parseAllDocuments`, one document at a time, so that reading can stop at the limit.
  const parser = new Parser(lines.addNewLine);
  const composer = new Composer({ merge: true, uniqueKeys: true });
  const parsed: Document.Parsed[] = [];
  const documents: ManifestDocument[] = [];
  const issues: ValidationIssue[] = [];
  const limit = options.limit;
  for (const doc of composer.compose(parser.parse(text))) {
    if (limit !== undefined && parsed.length >= limit.documents) {
      const pos = lines.linePos(doc.range[0]);
      issues.push({ file, line: pos.line, column: pos.col, message: limit.message });
      break;
    }
    parsed.push(doc);
  }
  if (parsed.length === 0 && issues.length === 0) {
    for (const error of composer.streamInfo().errors) {
      const pos = lines.linePos(error.pos[0]);
      issues.push({ file, line: pos.line, column: pos.col, message: `YAML syntax error: ${yamlMessage(error.message)}` });
    }
  }
  parsed.forEach((doc, index) => {
    if (doc.errors.length > 0) {
      for (const error of doc.errors) {
        const pos = lines.linePos(error.pos[0]);
        issues.push({ file, line: pos.line, column: pos.col, message: `YAML syntax error: ${yamlMessage(error.message)}` });
      }
      return;
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 1000 });
    } catch (e) {
      const pos = lines.linePos(startOf(doc.contents) ?? 0);
      issues.push({ file, line: pos.line, column: pos.col, message: `YAML error: ${e instanceof Error ? e.message : String(e)}` });
      return;
    }
    if (value === null || value === undefined) return;
    documents.push({ file, index, line: lines.linePos(startOf(doc.contents) ?? 0).line, value, locate: locator(doc, lines) });
  });
  return { documents, issues, count: parsed.length };
}

/**
 * Turns path issues of one document into validation issues with file, line, column and formatted path.
 * @param doc the document the paths refer to
 * @param issues problems at paths inside `doc.value`
 */
export function locateIssues(doc: ManifestDocument, issues: readonly PathIssue[]): ValidationIssue[] {
  return issues.map((issue) => {
    const { line, column } = doc.locate(issue.path, { atKey: issue.atKey === true });
    const path = formatPath(issue.path);
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
