/**
 * `skiff validate <paths...> [--json]`: checks NodePool, EC2NodeClass and every other manifest kind Skiff's loader
 * knows (Pod, Deployment, StatefulSet, DaemonSet, Job, PodDisruptionBudget, LimitRange, and a `skiff.dev/v1alpha1`
 * Scenario) exactly as `simulate` and the Lambdas parse them, for a CI pipeline or a pre-commit hook.
 *
 * Each problem is printed as `file:line:column: path: message` (the manifest loader's issues, `formatIssue`), e.g.
 * `nodepool.yaml:12:21: spec.template.spec.requirements[0].operator: Invalid option: expected one of "In"|…`.
 * A path may be a YAML file or a folder (its `*.yaml`/`*.yml` files, recursively, in name order). Every check
 * `simulate` applies is applied: each object's schema, then the checks across objects (`scenario-loader.ts`
 * `crossCheck`: duplicate names, a NodePool's `nodeClassRef` group and kind, the Scenario's nodes and events) over
 * each set `simulate` would read as one scenario — a folder's files together, a file holding a Scenario document and
 * other objects on its own. Whether a NodePool's EC2NodeClass (and a bound Pod's node) must be in the set depends on
 * the set: required when it holds an EC2NodeClass or a Scenario document, as `simulate` requires; not for NodePools
 * alone, whose EC2NodeClass may already be in the cluster.
 *
 * A cluster snapshot (`kubectl get … -o yaml`, docs/contracts.md#snapshots) is read as `simulate` reads it: a `kind:
 * List` is unpacked, Nodes are checked as starting nodes (`shared/sim/snapshot.ts`) and ReplicaSets are accepted.
 *
 * Documents of kinds Skiff does not read (Service, ConfigMap, another project's CRDs) are skipped and listed, so a
 * whole manifests folder can be checked; `--strict` reports them as unknown kinds instead. A near miss of a Skiff kind
 * (`NodePol`) and anything under karpenter.sh, karpenter.k8s.aws or skiff.dev is never skipped.
 *
 * The limits `simulate` sets on a scenario's YAML apply to each file: at most `MAX_SNAPSHOT_BYTES`, of which
 * `MAX_SCENARIO_BYTES` outside the items of Lists (a larger file is not parsed), `MAX_SCENARIO_DOCUMENTS` documents and
 * `MAX_SCENARIO_ITEMS` List items; so do the checks across objects, the replica caps included.
 *
 * Exit status: 0 when every object is valid; 1 when any file has a problem (YAML syntax, unknown kind, schema, a
 * limit, or no object at all); 2 on a usage error (a path that does not exist or cannot be read, a folder without
 * YAML files).
 */
import { readdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { formatIssue, type ValidationIssue } from '../core/errors.js';
import { foreignKind, parseManifestDocument, readManifestDocuments, sortIssues, type ManifestDocument } from '../core/api/manifest.js';
import { isSnapshotOnlyObject, readSnapshot, snapshotNodes, snapshotRegion, unpackList } from '../sim/snapshot.js';
import { MAX_SCENARIO_BYTES, MAX_SCENARIO_DOCUMENTS, MAX_SCENARIO_ITEMS, bytesOutsideLists, crossCheck, invalidObjectKey, parseScenarioForRun, readLimits, readScenarioFile, scenarioSizeIssue, type Located } from '../sim/scenario-loader.js';
import { SCENARIO_API_VERSION, SCENARIO_KIND, defaultScenarioSpec, isScenarioObject, type ParsedScenario } from '../sim/scenario.js';

/** One valid object found in a file. */
export interface ValidatedObject {
  readonly kind: string;
  readonly name: string;
  /** 1-based line where its document starts. */
  readonly line: number;
}

/** A document of a kind Skiff does not read, skipped (not with `--strict`). */
export interface SkippedObject {
  readonly kind: string;
  readonly apiVersion: string;
  /** `metadata.name`, when it has one. */
  readonly name?: string;
  /** 1-based line where its document starts. */
  readonly line: number;
}

/** Options of {@link validateText}. */
export interface ValidateOptions {
  /** Report kinds Skiff does not read as problems instead of skipping them. @default false */
  readonly strict?: boolean;
}

/** The outcome for one file. */
export interface FileValidation {
  readonly file: string;
  readonly valid: boolean;
  readonly objects: readonly ValidatedObject[];
  /** Documents of kinds Skiff does not read (empty with `--strict`, where they are issues). */
  readonly skipped: readonly SkippedObject[];
  /** Problems with file, 1-based line and column, and field path; sorted by position. */
  readonly issues: readonly ValidationIssue[];
}

/** What `skiff validate --json` prints. */
export interface ValidationReport {
  readonly valid: boolean;
  readonly files: readonly FileValidation[];
}

/** A path that cannot be validated at all (exit status 2). */
export interface UsageProblem {
  readonly path: string;
  readonly message: string;
}

/**
 * Lists the YAML files a path stands for: the file itself, or a folder's `*.yaml`/`*.yml` files (recursively, sorted
 * by path; symbolic links followed when they lead to a file; hidden folders and `node_modules` left out).
 * @returns the files, or the usage problem (no such path, unreadable, folder without YAML)
 */
export async function yamlFilesOf(path: string): Promise<{ readonly files: readonly string[] } | { readonly problem: UsageProblem }> {
  let info;
  try {
    info = await stat(path);
  } catch (e) {
    return { problem: { path, message: (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : `cannot read: ${(e as NodeJS.ErrnoException).code ?? String(e)}` } };
  }
  if (!info.isDirectory()) return { files: [path] };
  const files: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const full = join(dir, e.name);
      // Hidden folders (.git, .github) and node_modules hold CI files and dependencies, not the cluster's manifests.
      if (e.isDirectory() && (e.name.startsWith('.') || e.name === 'node_modules')) continue;
      if (e.isDirectory()) await walk(full);
      else if (/\.ya?ml$/i.test(e.name) && (e.isFile() || (e.isSymbolicLink() && (await stat(full).catch(() => undefined))?.isFile()))) files.push(full);
    }
  };
  try {
    await walk(path);
  } catch (e) {
    return { problem: { path, message: `cannot read: ${(e as NodeJS.ErrnoException).code ?? String(e)}` } };
  }
  if (files.length === 0) return { problem: { path, message: 'no *.yaml or *.yml files in this folder' } };
  return { files };
}

/** One file's validation, with what the checks across objects read. */
interface ParsedFile {
  readonly validation: FileValidation;
  readonly located: readonly Located[];
  /**
   * The file's Scenario documents, not yet parsed: {@link checkAcross} parses them once the set's Nodes, and so the
   * region the run uses, are known.
   */
  readonly scenarios: readonly ManifestDocument[];
  /** `Kind/name` of the documents that did not parse (see `CrossCheckOptions.invalid`). */
  readonly invalid: readonly string[];
  /** A snapshot's Node and ReplicaSet documents (checked across files, where the NodePools and the region are known). */
  readonly nodes: readonly ManifestDocument[];
}

/** Parses and checks each object of one file's text (schemas only). */
function parseText(text: string, file: string, options: ValidateOptions): ParsedFile {
  const bytes = Buffer.byteLength(text, 'utf8');
  // Outside the items of Lists (composed one at a time) a file holds what a scenario may: more is not parsed.
  if (bytes > MAX_SCENARIO_BYTES && bytesOutsideLists(text) > MAX_SCENARIO_BYTES) return unreadFile(scenarioSizeIssue(file, MAX_SCENARIO_BYTES, { atLeast: true }));
  const read = readManifestDocuments(text, file, readLimits(file, text, { documents: MAX_SCENARIO_DOCUMENTS, items: MAX_SCENARIO_ITEMS }));
  const issues: ValidationIssue[] = [...read.issues];
  const objects: ValidatedObject[] = [];
  const skipped: SkippedObject[] = [];
  const located: Located[] = [];
  const invalid: string[] = [];
  const scenarios: ManifestDocument[] = [];
  const nodes: ManifestDocument[] = [];
  for (const doc of read.documents.flatMap(unpackList)) {
    if (isSnapshotOnlyObject(doc.value)) {
      const o = doc.value as { kind: string; metadata?: { name?: unknown } };
      objects.push({ kind: o.kind, name: typeof o.metadata?.name === 'string' ? o.metadata.name : '', line: doc.line });
      nodes.push(doc);
      continue;
    }
    const foreign = options.strict ? undefined : foreignKind(doc.value, [SCENARIO_KIND]);
    if (foreign) {
      skipped.push({ ...foreign, line: doc.line });
      continue;
    }
    if (isScenarioObject(doc.value)) {
      scenarios.push(doc);
      continue;
    }
    const result = parseManifestDocument(doc, { alsoSupported: [`${SCENARIO_KIND} (${SCENARIO_API_VERSION})`] });
    issues.push(...result.issues);
    if (result.manifest) {
      objects.push({ kind: result.manifest.kind, name: result.manifest.object.metadata.name, line: result.manifest.source.line });
      located.push({ manifest: result.manifest, doc, prefix: [], at: -Infinity });
    } else if (invalidObjectKey(doc.value)) invalid.push(invalidObjectKey(doc.value)!);
  }
  if (read.documents.length === 0 && issues.length === 0) issues.push({ file, message: 'no Kubernetes objects in this file' });
  return { validation: { file, valid: issues.length === 0, objects, skipped, issues: sortIssues(issues) }, located, scenarios, invalid, nodes };
}

/** A file that was not parsed, with the one issue that says why. */
function unreadFile(issue: ValidationIssue): ParsedFile {
  return { validation: { file: issue.file, valid: false, objects: [], skipped: [], issues: [issue] }, located: [], scenarios: [], invalid: [], nodes: [] };
}

/**
 * The checks across objects `simulate` applies (`crossCheck`), over files validated together; each issue is added to
 * the file it is in. A second Scenario document is an issue, as for `simulate`.
 */
function checkAcross(files: readonly ParsedFile[], now: number): FileValidation[] {
  const located = files.flatMap((f) => f.located);
  const nodeDocs = files.flatMap((f) => f.nodes);
  // Each Scenario document is checked against the region the run uses: without spec.region, its Nodes' region.
  const nodesRegion = nodeDocs.length > 0 ? snapshotRegion(nodeDocs) : undefined;
  const extra: ValidationIssue[] = [];
  const scenarioObjects: { file: string; object: ValidatedObject }[] = [];
  const scenarios: { doc: ManifestDocument; parsed: ParsedScenario }[] = [];
  for (const doc of files.flatMap((f) => f.scenarios)) {
    const result = parseScenarioForRun(doc, { now, nodesRegion });
    extra.push(...result.issues);
    if (!result.scenario) continue;
    scenarioObjects.push({ file: doc.file, object: { kind: SCENARIO_KIND, name: result.scenario.name, line: doc.line } });
    scenarios.push({ doc, parsed: result.scenario });
  }
  const scenario = scenarios[0];
  extra.push(...scenarios.slice(1).map(({ doc }) => ({
    file: doc.file,
    line: doc.line,
    path: 'kind',
    message: `at most one Scenario document per scenario (the first is at ${scenario!.doc.file}:${scenario!.doc.line})`,
  })));
  if (scenario) {
    for (const e of scenario.parsed.spec.events) {
      if (e.type === 'apply') located.push({ manifest: e.apply, doc: scenario.doc, prefix: ['spec', 'events', e.index, 'apply'], at: e.atSeconds });
    }
  }
  const references = scenario !== undefined || located.some((l) => l.manifest.kind === 'EC2NodeClass');
  // A snapshot's Nodes: checked as simulate makes them starting nodes; completed pods and those left out are not checked.
  const spec = scenario?.parsed.spec ?? defaultScenarioSpec(now);
  const reading = readSnapshot({ docs: nodeDocs, manifests: located.filter((l) => l.at === -Infinity), declaredNodes: new Set(spec.nodes.map((n) => n.name)) });
  extra.push(...reading.issues);
  // Without a Scenario document the run is in the Nodes' region (a Scenario document already has it, see above).
  const region = scenario ? spec.region : (nodesRegion ?? spec.region);
  const pools = new Set(located.filter((l) => l.manifest.kind === 'NodePool').map((l) => l.manifest.object.metadata.name));
  const fromSnapshot = snapshotNodes(nodeDocs, { startMs: spec.startMs, region, nodePools: pools });
  extra.push(...fromSnapshot.issues);
  const kept = located.filter((l) => !(l.manifest.kind === 'Pod' && reading.dropped.has(l.manifest.object)));
  extra.push(...crossCheck(kept, spec, scenario?.doc, { references, invalid: new Set(files.flatMap((f) => f.invalid)), nodeNames: new Set(fromSnapshot.nodes.map((n) => n.name)) }));
  return files.map(({ validation: v }) => {
    const mine = extra.filter((i) => i.file === v.file);
    const added = scenarioObjects.filter((o) => o.file === v.file).map((o) => o.object);
    const objects = added.length === 0 ? v.objects : [...v.objects, ...added].sort((a, b) => a.line - b.line);
    return mine.length === 0 ? { ...v, objects } : { ...v, valid: false, objects, issues: sortIssues([...v.issues, ...mine]) };
  });
}

/**
 * Validates the manifests of one file's text: each object, then the checks across the file's objects (see the module
 * comment). Pure apart from `now` (a Scenario's default start).
 * @param text the file's content
 * @param file the name to put in issues
 * @param now epoch ms, for a Scenario document without `spec.start`
 * @param options `strict`: kinds Skiff does not read are problems, not skipped
 * @example validateText('apiVersion: karpenter.sh/v1\nkind: NodePool\n…', 'pool.yaml', Date.now()).valid
 */
export function validateText(text: string, file: string, now: number, options: ValidateOptions = {}): FileValidation {
  return checkAcross([parseText(text, file, options)], now)[0]!;
}

/**
 * Validates every file the paths stand for: each object, then the checks across objects per scenario set (see the
 * module comment).
 * @param paths files or folders, as given on the command line
 * @param now epoch ms (a Scenario's default start)
 * @param options as for {@link validateText}
 * @returns the report, or the usage problems when a path cannot be read (nothing is validated then)
 */
export async function validatePaths(paths: readonly string[], now: number, options: ValidateOptions = {}): Promise<{ readonly report: ValidationReport } | { readonly usage: readonly UsageProblem[] }> {
  const usage: UsageProblem[] = [];
  const files: string[] = [];
  for (const path of paths) {
    const listed = await yamlFilesOf(path);
    if ('problem' in listed) usage.push(listed.problem);
    else for (const f of listed.files) if (!files.includes(f)) files.push(f);
  }
  if (usage.length > 0) return { usage };
  const parsed: ParsedFile[] = [];
  for (const file of files) {
    // A file over the size a scenario may have is not read past it, as `simulate` reads it.
    let contents;
    try {
      contents = await readScenarioFile(file, { snapshot: true });
    } catch (e) {
      return { usage: [{ path: file, message: `cannot read: ${(e as NodeJS.ErrnoException).code ?? String(e)}` }] };
    }
    if ('issue' in contents) {
      parsed.push(unreadFile(contents.issue));
      continue;
    }
    const text = contents.text;
    parsed.push(parseText(text, file, options));
  }
  // The checks across objects run per scenario as `simulate` reads one: a folder's files together, except that a file
  // holding a Scenario document and other objects is a scenario of its own (`simulate file.yaml`). A tree of scenario
  // folders, or a folder of one-file scenarios, each with its own Scenario and EC2NodeClass, has no duplicate.
  const byFolder = new Map<string, ParsedFile[]>();
  for (const p of parsed) {
    const own = p.scenarios.length > 0 && p.located.length > 0;
    const set = own ? `file:${p.validation.file}` : `folder:${dirname(p.validation.file)}`;
    byFolder.set(set, [...(byFolder.get(set) ?? []), p]);
  }
  const checked = new Map([...byFolder.values()].flatMap((group) => checkAcross(group, now)).map((v) => [v.file, v] as const));
  const results = parsed.map((p) => checked.get(p.validation.file)!);
  return { report: { valid: results.every((r) => r.valid), files: results } };
}

/** The text `skiff validate` prints without `--json`: one line per problem, then a summary line. */
export function formatValidationReport(report: ValidationReport): string {
  const lines = report.files.flatMap((f) => f.issues.map(formatIssue));
  const objects = report.files.reduce((n, f) => n + f.objects.length, 0);
  const invalid = report.files.filter((f) => !f.valid).length;
  const problems = lines.length;
  const skipped = report.files.flatMap((f) => f.skipped);
  const kinds = [...new Set(skipped.map((o) => o.kind))].sort();
  const skippedNote = skipped.length > 0 ? `; skipped ${skipped.length} object${plural(skipped.length)} of kinds Skiff does not read (${kinds.join(', ')}; --strict reports them)` : '';
  lines.push(
    report.valid
      ? `${report.files.length} file${plural(report.files.length)} valid (${objects} object${plural(objects)}${skippedNote})`
      : `${problems} problem${plural(problems)} in ${invalid} of ${report.files.length} file${plural(report.files.length)}${skippedNote ? ` (${skippedNote.slice(2)})` : ''}`,
  );
  return `${lines.join('\n')}\n`;
}

function plural(n: number): string {
  return n === 1 ? '' : 's';
}

/** Where `skiff validate` writes. */
export interface ValidateIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

/**
 * Registers `validate` on the `skiff` program.
 * @param setStatus receives the exit status (0 valid, 1 invalid, 2 usage error)
 * @param now the clock (epoch ms) for a Scenario's default start
 * @example registerValidateCommand(program, io, (s) => (status = s));
 */
export function registerValidateCommand(program: Command, io: ValidateIo, setStatus: (status: number) => void, now: () => number = Date.now): void {
  program
    .command('validate')
    .description('validate NodePool, EC2NodeClass and other manifest files (or folders of them) as Skiff parses them; prints file:line:column: path: message per problem')
    .argument('<paths...>', 'YAML files or folders (searched recursively for *.yaml and *.yml)')
    .option('--json', 'print {valid, files: [{file, valid, objects, skipped, issues}]} as JSON on stdout')
    .option('--strict', 'report kinds Skiff does not read (Service, ConfigMap, …) as problems instead of skipping them')
    .action(async (paths: string[], opts: { json?: boolean; strict?: boolean }) => {
      const outcome = await validatePaths(paths, now(), opts.strict ? { strict: true } : {});
      if ('usage' in outcome) {
        for (const u of outcome.usage) io.err(`skiff validate: ${u.path}: ${u.message}\n`);
        setStatus(2);
        return;
      }
      io.out(opts.json ? `${JSON.stringify(outcome.report, null, 2)}\n` : formatValidationReport(outcome.report));
      setStatus(outcome.report.valid ? 0 : 1);
    });
}
