/**
 * `skiff validate <paths...> [--json]`: checks NodePool, EC2NodeClass and every other manifest kind Skiff's loader
 * knows (Pod, Deployment, StatefulSet, DaemonSet, Job, PodDisruptionBudget, LimitRange, and a `skiff.dev/v1alpha1`
 * Scenario) exactly as `simulate` and the Lambdas parse them, for a CI pipeline or a pre-commit hook.
 *
 * Each problem is printed as `file:line:column: path: message` (the manifest loader's issues, `formatIssue`), e.g.
 * `nodepool.yaml:12:21: spec.template.spec.requirements[0].operator: Invalid option: expected one of "In"|…`.
 * A path may be a YAML file or a folder (its `*.yaml`/`*.yml` files, recursively, in name order). Each folder's files
 * are read together exactly as `simulate <folder>` reads them, by the same function (`scenario-loader.ts`
 * `checkScenarioTexts`): each object's schema, at most one Scenario document, then the checks across objects
 * (`scenario-checks.ts` `crossCheck`: duplicate names, a NodePool's `nodeClassRef` group and kind, the Scenario's
 * nodes and events), so `validate` and `simulate` give one verdict for one folder. Files named one by one are read with the other files
 * named in their folder (`simulate file.yaml` for one). Two leniencies for a folder that is part of a cluster's
 * manifests rather than a scenario: a NodePool's EC2NodeClass (and a bound Pod's node) must be in the folder only
 * when it holds an EC2NodeClass or a Scenario document, as `simulate` requires (NodePools alone may name an
 * EC2NodeClass already in the cluster); and a folder of kinds Skiff does not read is no problem.
 *
 * A cluster snapshot (`kubectl get … -o yaml`, docs/contracts.md#snapshots) is read as `simulate` reads it: a `kind:
 * List` is unpacked, Nodes are checked as starting nodes (`shared/sim/snapshot.ts`) and ReplicaSets are accepted.
 *
 * Documents of kinds Skiff does not read (Service, ConfigMap, another project's CRDs) are skipped and listed, so a
 * whole manifests folder can be checked; `--strict` reports them as unknown kinds instead. A near miss of a Skiff kind
 * (`NodePol`) and anything under karpenter.sh, karpenter.k8s.aws or skiff.dev is never skipped.
 *
 * The limits `simulate` sets on a scenario's YAML apply to each folder's files together, as `simulate` applies them:
 * at most `MAX_SNAPSHOT_BYTES`, of which `MAX_SCENARIO_BYTES` outside the items of Lists (a file larger than that
 * alone is reported on its own and not parsed), `MAX_SCENARIO_DOCUMENTS` documents and `MAX_SCENARIO_ITEMS` List
 * items; so do the checks across objects, the replica caps included. A file that is not YAML text (a NUL byte, bytes
 * that are not UTF-8) is reported and not parsed.
 *
 * Exit status: 0 when every object is valid; 1 when any file has a problem (YAML syntax, not YAML text, unknown kind,
 * schema, a check across objects, a limit, or no object at all); 2 on a usage error (a path that does not exist or
 * cannot be read, a folder without YAML files). Valid input that is most likely a mistake (`scenarioWarnings`: a
 * request without its suffix, a budget schedule that cannot be evaluated, a PDB that never allows an eviction) is
 * printed as `warning: file:line:column: path: message` after the problems and leaves the status as it is.
 */
import { readdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { formatIssue, type ValidationIssue } from '../core/errors.js';
import { sortIssues } from '../core/api/manifest.js';
import { MAX_SCENARIO_BYTES, bytesOutsideLists, checkScenarioTexts, readScenarioFile, scenarioSizeIssue, scenarioTextsSizeIssue, type CheckedScenario } from '../sim/scenario-loader.js';

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
  /**
   * Valid input that is most likely a mistake, as `simulate` warns of it (a request without its suffix, a budget
   * schedule that cannot be evaluated, a PDB that can never allow an eviction); they do not make the file invalid.
   * Present only when there is one (an addition to the JSON).
   */
  readonly warnings?: readonly ValidationIssue[];
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

/**
 * The text of a file to validate, or the issue that keeps it from being parsed: over the size a scenario may have
 * outside the items of Lists, such a file is not parsed (it is reported on its own, not as the folder's size).
 */
function textOrIssue(file: string, text: string): string | ValidationIssue {
  const bytes = Buffer.byteLength(text, 'utf8');
  return bytes > MAX_SCENARIO_BYTES && bytesOutsideLists(text) > MAX_SCENARIO_BYTES ? scenarioSizeIssue(file, MAX_SCENARIO_BYTES, { atLeast: true }) : text;
}

/**
 * Validates one set of files as `simulate` reads one scenario (`checkScenarioTexts`, the same reading `loadScenario`
 * runs), with validate's leniency for parts of a cluster's manifests (`partial`) and its per-file reports: each
 * issue goes to the file it names, one about the whole set (its size) to the set's first file; a file with no YAML
 * document is reported as holding no object.
 * @param path the set's folder (or the file, for one file), named by issues about the whole set
 * @param files the set's files, in reading order
 * @param texts each file's text, or the issue that kept it from being parsed; consumed (each text is dropped once
 *   parsed, as `loadScenario` drops it)
 */
function validateSet(path: string, files: readonly string[], texts: (string | ValidationIssue | undefined)[], now: number, options: ValidateOptions): FileValidation[] {
  const tooLarge = scenarioTextsSizeIssue(path, texts);
  const checked: Pick<CheckedScenario, 'issues' | 'objects' | 'skipped' | 'emptyFiles' | 'warnings'> = tooLarge
    ? { issues: texts.filter((t): t is ValidationIssue => typeof t === 'object'), objects: [], skipped: [], emptyFiles: [], warnings: [] }
    : checkScenarioTexts(path, files, texts, { now, partial: true, ...(options.strict ? { strict: true } : {}) });
  const named = new Set(files);
  const setIssues = [...(tooLarge ? [tooLarge] : []), ...checked.issues.filter((i) => !named.has(i.file))];
  return files.map((file, i) => {
    const issues = [...checked.issues.filter((x) => x.file === file), ...(i === 0 ? setIssues : [])];
    if (checked.emptyFiles.includes(file) && issues.length === 0) issues.push({ file, message: 'no Kubernetes objects in this file' });
    const objects = checked.objects.filter((o) => o.file === file).map(({ kind, name, line }) => ({ kind, name, line }));
    const skipped = checked.skipped.filter((o) => o.file === file).map(({ kind, apiVersion, name, line }) => ({ kind, apiVersion, ...(name !== undefined ? { name } : {}), line }));
    const warnings = checked.warnings.filter((w) => w.file === file);
    return { file, valid: issues.length === 0, objects, skipped, issues: sortIssues(issues), ...(warnings.length > 0 ? { warnings: sortIssues(warnings) } : {}) };
  });
}

/**
 * Validates the manifests of one file's text as `simulate file.yaml` reads it: each object, then the checks across
 * the file's objects (see the module comment). Pure apart from `now` (a Scenario's default start).
 * @param text the file's content
 * @param file the name to put in issues
 * @param now epoch ms, for a Scenario document without `spec.start`
 * @param options `strict`: kinds Skiff does not read are problems, not skipped
 * @example validateText('apiVersion: karpenter.sh/v1\nkind: NodePool\n…', 'pool.yaml', Date.now()).valid
 */
export function validateText(text: string, file: string, now: number, options: ValidateOptions = {}): FileValidation {
  return validateSet(file, [file], [textOrIssue(file, text)], now, options)[0]!;
}

/**
 * Validates every file the paths stand for: the files of each folder together, exactly as `simulate <folder>` reads
 * them (see the module comment).
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
  // One set per folder: `simulate` reads a folder's files together, whatever each holds (a Scenario document too).
  // Files named one by one are checked with the other files named in their folder. One set's texts are held at a time.
  const sets = new Map<string, string[]>();
  for (const file of files) sets.set(dirname(file), [...(sets.get(dirname(file)) ?? []), file]);
  const checked = new Map<string, FileValidation>();
  for (const [folder, set] of sets) {
    const texts: (string | ValidationIssue | undefined)[] = [];
    for (const file of set) {
      // A file over the size a scenario may have is not read past it, as `simulate` reads it.
      let contents;
      try {
        contents = await readScenarioFile(file, { snapshot: true });
      } catch (e) {
        return { usage: [{ path: file, message: `cannot read: ${(e as NodeJS.ErrnoException).code ?? String(e)}` }] };
      }
      texts.push('issue' in contents ? contents.issue : textOrIssue(file, contents.text));
    }
    for (const v of validateSet(folder, set, texts, now, options)) checked.set(v.file, v);
  }
  const results = files.map((f) => checked.get(f)!);
  return { report: { valid: results.every((r) => r.valid), files: results } };
}

/** The text `skiff validate` prints without `--json`: one line per problem, then a summary line. */
export function formatValidationReport(report: ValidationReport): string {
  const lines = report.files.flatMap((f) => f.issues.map(formatIssue));
  const problems = lines.length;
  const warnings = report.files.flatMap((f) => (f.warnings ?? []).map((w) => `warning: ${formatIssue(w)}`));
  lines.push(...warnings);
  const warned = warnings.length > 0 ? `; ${warnings.length} warning${plural(warnings.length)}` : '';
  const objects = report.files.reduce((n, f) => n + f.objects.length, 0);
  const invalid = report.files.filter((f) => !f.valid).length;
  const skipped = report.files.flatMap((f) => f.skipped);
  const kinds = [...new Set(skipped.map((o) => o.kind))].sort();
  const skippedNote = skipped.length > 0 ? `; skipped ${skipped.length} object${plural(skipped.length)} of kinds Skiff does not read (${kinds.join(', ')}; --strict reports them)` : '';
  lines.push(
    report.valid
      ? `${report.files.length} file${plural(report.files.length)} valid (${objects} object${plural(objects)}${skippedNote})${warned}`
      : `${problems} problem${plural(problems)} in ${invalid} of ${report.files.length} file${plural(report.files.length)}${skippedNote ? ` (${skippedNote.slice(2)})` : ''}${warned}`,
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
    .option('--json', 'print {valid, files: [{file, valid, objects, skipped, issues, warnings?}]} as JSON on stdout')
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
