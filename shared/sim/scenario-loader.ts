/**
 * Loads a scenario (docs/contracts.md#scenario) from a folder of YAML files or one multi-document
 * file: every manifest validated, at most one Scenario document, and cross-object checks (`scenario-checks.ts`:
 * duplicate names, a NodePool's EC2NodeClass, a starting node's NodePool, a pod's node, a scale target). All or
 * nothing: any problem throws one {@link ValidationError} listing every issue with file, line and field path.
 * `skiff validate` reads each folder with the same {@link checkScenarioTexts}.
 */
import { open, readdir, stat } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import { ValidationError, type ValidationIssue } from '../core/errors.js';
import { parseDuration } from '../core/api/duration.js';
import type { EC2NodeClass } from '../core/api/ec2nodeclass.js';
import type { LimitRange } from '../core/api/limitrange.js';
import {
  foreignKind,
  parseManifestDocument,
  readManifestDocuments,
  sortIssues,
  type Manifest,
  type ManifestDocument,
  type ManifestKind,
  type ManifestObjectOf,
  type ManifestSource,
  type ReadManifestOptions,
} from '../core/api/manifest.js';
import type { NodePool } from '../core/api/nodepool.js';
import { listItemRegions } from '../core/api/yaml-list.js';
import type { PodDisruptionBudget } from '../core/api/pdb.js';
import type { Pod } from '../core/api/pod.js';
import type { DaemonSet, Deployment, Job, StatefulSet } from '../core/api/workloads.js';
import { SCENARIO_API_VERSION, SCENARIO_KIND, defaultScenarioSpec, isScenarioObject, parseScenarioDocument, type ScenarioNode, type ScenarioSpec } from './scenario.js';
import { parsePriceFile } from './price-file.js';
import { isSnapshotOnlyObject, readSnapshot, snapshotNodes, snapshotRegion, unpackList, type PodOwner, type SnapshotReading } from './snapshot.js';
import { decodeYamlText } from './yaml-text.js';
import { crossCheck, invalidObjectKey, issueAt, scenarioWarnings, type Located } from './scenario-checks.js';

/** A parsed object with where it came from. */
export type Sourced<T> = T & { readonly source: ManifestSource };

/** Everything a simulation starts from. Objects keep file order (files sorted by name, documents in order). */
export interface LoadedScenario {
  /** The Scenario's `metadata.name`, else the folder's or file's base name (without extension). */
  readonly name: string;
  /** The files read, in the order read. */
  readonly files: readonly string[];
  readonly spec: ScenarioSpec;
  readonly nodePools: readonly Sourced<NodePool>[];
  readonly nodeClasses: readonly Sourced<EC2NodeClass>[];
  readonly pods: readonly Sourced<Pod>[];
  readonly deployments: readonly Sourced<Deployment>[];
  readonly statefulSets: readonly Sourced<StatefulSet>[];
  readonly jobs: readonly Sourced<Job>[];
  readonly daemonSets: readonly Sourced<DaemonSet>[];
  readonly pdbs: readonly Sourced<PodDisruptionBudget>[];
  readonly limitRanges: readonly Sourced<LimitRange>[];
  /**
   * Problems that do not stop a simulation but deserve a word, e.g. a PodDisruptionBudget that can never allow an
   * eviction (its minAvailable equals the replica count: the seed article's warning).
   */
  readonly warnings: readonly ValidationIssue[];
  /**
   * Documents of kinds Skiff does not read (Service, ConfigMap, another project's CRDs), skipped as `skiff validate`
   * skips them, with where each starts: a manifests folder can be simulated as it is.
   */
  readonly skipped: readonly { readonly kind: string; readonly apiVersion: string; readonly name?: string; readonly file: string; readonly line: number }[];
  /**
   * Subfolders of the scenario folder that hold YAML files, which a scenario does not read (a folder is read as it is,
   * not recursively; `skiff validate` does read them): named so the CLI can say so rather than simulate without them.
   */
  readonly unreadFolders?: readonly string[];
  /** Events of the Scenario document after the end `--duration` sets, left out of the run (absent when none). */
  readonly eventsAfterEnd?: number;
  /**
   * Pods of a snapshot that belong to a workload of the scenario (a Deployment through its ReplicaSet, a StatefulSet,
   * a Job): the workload's controller counts them as its own, so its replicas and these pods reconcile to one count.
   * Not in {@link pods}, which holds the bare pods. Empty for a scenario without such pods.
   */
  readonly ownedPods: readonly { readonly pod: Sourced<Pod>; readonly owner: PodOwner }[];
  /**
   * Present when the scenario holds Nodes (a cluster snapshot, docs/contracts.md#snapshots): how many starting nodes
   * came from it and what was read or left out, in words (never an object's contents).
   */
  readonly snapshot?: { readonly nodes: number; readonly notes: readonly string[] };
}

/**
 * Command-line flags that set what a Scenario document would (`--start`, `--duration`, `--region`): each overrides the
 * document's field (a snapshot has none).
 */
export interface ScenarioOverrides {
  /** Virtual clock start, epoch ms. */
  readonly startMs?: number;
  /** How long to simulate, seconds (> 0, at most a year). */
  readonly durationSeconds?: number;
  /** AWS region, e.g. `eu-west-1`. */
  readonly region?: string;
  /** `--prices`: a price file (`shared/sim/price-file.ts`); its entries come after `spec.prices`, so they win. */
  readonly pricesFile?: string;
}

/** Options of {@link loadScenario}. */
export interface LoadScenarioOptions {
  /**
   * The current time, epoch ms: the default start (truncated to the minute) when there is no `spec.start`, no
   * `--start` and no snapshot (a snapshot starts at the minute after its newest Node or Pod was created).
   */
  readonly now: number;
  /** Flags overriding the Scenario document. @default none */
  readonly overrides?: ScenarioOverrides;
}

/**
 * The most bytes of YAML one scenario may hold outside the items of Lists, all its files together: 16 MiB. This YAML
 * is composed a whole document at a time (the `yaml` library keeps every node, with its source range, until the
 * document is converted). The largest example, examples/alibaba-trace (3,460 `apply` events, one per Job of the
 * trace), is 1.6 MB and parses in about 4 s and 250 MB; ten times that still parses in under a minute and a few GB.
 * Far beyond, parsing alone takes minutes and tens of gigabytes, which a simulation would then spend on a wrong file
 * (hostile input, issue 21). A snapshot's `kind: List` items are read one at a time: {@link MAX_SNAPSHOT_BYTES}.
 */
export const MAX_SCENARIO_BYTES = 16 * 2 ** 20;

/**
 * The most bytes of YAML one scenario may hold, all its files together, the items of Lists included: 128 MiB.
 * `kubectl get nodes,pods,… -A -o yaml` of a 2,000-node, 20,000-pod cluster is one `kind: List` of 60 to 120 MB
 * (`scripts/build-snapshot-example.ts` writes 59 MB for 2,000 nodes); its items are composed one at a time and
 * dropped (`readManifestDocuments`), so memory grows with the plain values: about 18 bytes per byte of YAML at the
 * peak (the 59 MB snapshot: 1.0 GiB, docs/contracts.md#snapshots). 128 MiB bounds that to about 2.3 GB however the
 * file is made (hostile input, issue 21), and still takes the largest real snapshot.
 */
export const MAX_SNAPSHOT_BYTES = 128 * 2 ** 20;

/**
 * The most YAML documents one scenario may hold, all its files together, empty ones (`---` alone) counted: 10,000.
 * The examples hold at most a dozen (examples/seed), and a scenario's events live inside its one Scenario document;
 * each document costs parsing time and memory of its own, so a stream of millions of `---` (16 MiB of them: 4
 * million documents) would otherwise take two minutes and 4 GB.
 */
export const MAX_SCENARIO_DOCUMENTS = 10_000;

/**
 * The most items of Lists one scenario may hold, all its files together: 100,000. A 2,000-node, 20,000-pod snapshot
 * holds about 25,000 (its Nodes, Pods, ReplicaSets, workloads); each item is composed as a document of its own, so
 * without a bound 128 MiB of `- {}` (30 million items) would take as long as 30 million documents.
 */
export const MAX_SCENARIO_ITEMS = 100_000;

/** `12.3 MiB`: a byte count for messages. */
function mebibytesText(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

/**
 * The issue for YAML over {@link MAX_SCENARIO_BYTES}.
 * @param file the file or folder the issue names
 * @param bytes how big it is
 * @param options `atLeast`: reading stopped at `bytes`, there is more
 */
export function scenarioSizeIssue(file: string, bytes: number, options: { readonly atLeast?: boolean } = {}): ValidationIssue {
  const size = `${options.atLeast ? 'more than ' : ''}${mebibytesText(bytes)}`;
  return { file, message: `${size} of YAML; a scenario may hold at most ${mebibytesText(MAX_SCENARIO_BYTES)} (${MAX_SCENARIO_BYTES} bytes)` };
}

/**
 * The issue for YAML over {@link MAX_SNAPSHOT_BYTES}.
 * @param file the file or folder the issue names
 * @param bytes how big it is
 * @param options `atLeast`: reading stopped at `bytes`, there is more
 */
export function snapshotSizeIssue(file: string, bytes: number, options: { readonly atLeast?: boolean } = {}): ValidationIssue {
  const size = `${options.atLeast ? 'more than ' : ''}${mebibytesText(bytes)}`;
  return {
    file,
    message: `${size} of YAML; a scenario may hold at most ${mebibytesText(MAX_SNAPSHOT_BYTES)} (${MAX_SNAPSHOT_BYTES} bytes) with the items of kind: List (what kubectl get -o yaml writes), and ${mebibytesText(MAX_SCENARIO_BYTES)} outside them`,
  };
}

/** The message for the first List item past {@link MAX_SCENARIO_ITEMS}. */
export const TOO_MANY_ITEMS_MESSAGE = `more than ${MAX_SCENARIO_ITEMS} items of kind: List; a scenario may hold at most ${MAX_SCENARIO_ITEMS}, nothing from here on was read`;

/**
 * The message for one List item over {@link MAX_SCENARIO_BYTES}: each item is composed whole, so no composition is
 * larger than YAML outside a List may be (the `yaml` library's time grows faster than the size on some hostile input).
 */
export const TOO_LARGE_ITEM_MESSAGE = `an item of kind: List may hold at most ${mebibytesText(MAX_SCENARIO_BYTES)} of YAML (${MAX_SCENARIO_BYTES} bytes); this one is larger`;

/** The message for the first document past {@link MAX_SCENARIO_DOCUMENTS}. */
export const TOO_MANY_DOCUMENTS_MESSAGE = `more than ${MAX_SCENARIO_DOCUMENTS} YAML documents (empty ones counted); a scenario may hold at most ${MAX_SCENARIO_DOCUMENTS}, nothing from here on was read`;

/**
 * Reads a file as UTF-8, at most {@link MAX_SCENARIO_BYTES} (with `snapshot`, {@link MAX_SNAPSHOT_BYTES}): a pipe or
 * a device (`/dev/stdin`, `/dev/zero`) has no size to check beforehand, and a file may grow after it was listed.
 * @param file the file to read
 * @param options `snapshot`: the file may be a snapshot whose List items are read one at a time
 * @returns the text; or the issue and why: `size` when there is more than the limit (nothing past it was read),
 *   `not-text` when the file is not YAML text (a NUL byte, bytes that are not UTF-8: `yaml-text.ts`)
 * @throws the file system's error when it cannot be read
 */
export async function readScenarioFile(
  file: string,
  options: { readonly snapshot?: boolean } = {},
): Promise<{ readonly text: string } | { readonly issue: ValidationIssue; readonly reason: 'size' | 'not-text' }> {
  const max = options.snapshot ? MAX_SNAPSHOT_BYTES : MAX_SCENARIO_BYTES;
  const handle = await open(file, 'r');
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.alloc(Math.min(2 ** 20, max + 1 - total));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
      if (total > max) return { issue: (options.snapshot ? snapshotSizeIssue : scenarioSizeIssue)(file, total, { atLeast: true }), reason: 'size' };
    }
    const decoded = decodeYamlText(Buffer.concat(chunks), file);
    return 'issue' in decoded ? { issue: decoded.issue, reason: 'not-text' } : decoded;
  } finally {
    await handle.close();
  }
}

/** Lists the YAML files of a folder (sorted, non-recursive) or returns the file itself, each with its size in bytes. */
async function scenarioFiles(path: string): Promise<{ readonly file: string; readonly bytes: number }[]> {
  let info;
  try {
    info = await stat(path);
  } catch (e) {
    throw new ValidationError([{ file: path, message: `cannot read: ${(e as NodeJS.ErrnoException).code ?? String(e)}` }], { cause: e });
  }
  if (!info.isDirectory()) return [{ file: path, bytes: info.size }];
  const entries = await readdir(path, { withFileTypes: true });
  const candidates = entries
    .filter((e) => (e.isFile() || e.isSymbolicLink()) && /\.ya?ml$/i.test(e.name))
    .map((e) => e.name)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((name) => join(path, name));
  // Symbolic links count when they lead to a file (Kubernetes ConfigMap volumes are made of links).
  const files: { file: string; bytes: number }[] = [];
  for (const file of candidates) {
    const target = await stat(file).catch((e: NodeJS.ErrnoException) => {
      throw new ValidationError([{ file, message: `cannot read: ${e.code ?? String(e)}` }], { cause: e });
    });
    if (target.isFile()) files.push({ file, bytes: target.size });
  }
  if (files.length === 0) throw new ValidationError([{ file: path, message: `no *.yaml or *.yml files in this folder${subfoldersHint(await foldersWithYaml(path))}` }]);
  return files;
}

/**
 * For a scenario folder without YAML of its own: the subfolders that hold some, which `simulate` does not read (a
 * folder is read as it is, not recursively), named so the user can pass one; empty when there are none.
 * @param folders the subfolders holding YAML ({@link foldersWithYaml}), sorted
 */
function subfoldersHint(folders: readonly string[]): string {
  if (folders.length === 0) return '';
  if (folders.length === 1) return `; ${folders[0]} holds YAML: pass that folder (a scenario folder is read as it is, not recursively)`;
  const named = folders.length > 3 ? `${folders.slice(0, 3).join(', ')} and ${folders.length - 3} more` : `${folders.slice(0, -1).join(', ')} and ${folders.at(-1)}`;
  return `; its subfolders ${named} hold YAML: pass one of them (a scenario folder is read as it is, not recursively)`;
}

/**
 * The subfolders of `path` (a folder) that hold a `*.yaml`/`*.yml` file at any depth, sorted; hidden folders and
 * node_modules left out, as `skiff validate` leaves them out. Unreadable folders count as holding none.
 */
async function foldersWithYaml(path: string): Promise<string[]> {
  const holdsYaml = async (dir: string): Promise<boolean> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    if (entries.some((e) => !e.isDirectory() && /\.ya?ml$/i.test(e.name))) return true;
    for (const e of entries) if (e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules' && (await holdsYaml(join(dir, e.name)))) return true;
    return false;
  };
  const entries = (await readdir(path, { withFileTypes: true }).catch(() => [])).filter((e) => e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules');
  const out: string[] = [];
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) if (await holdsYaml(join(path, e.name))) out.push(join(path, e.name));
  return out;
}

/**
 * Loads and validates a scenario.
 * @param path a folder (all `*.yaml`/`*.yml` files in it, sorted by name, not recursive) or one YAML file
 * @param options `now`, epoch ms, for the default start
 * @returns the scenario, every object carrying its `source` (file, line)
 * @throws {ValidationError} listing every problem (unreadable file, a file that is not YAML text, YAML syntax, schema,
 *   cross-object) with file, line and field path; nothing is returned when anything is wrong. Also when the scenario
 *   is over {@link MAX_SNAPSHOT_BYTES}, or over {@link MAX_SCENARIO_BYTES} outside the items of its Lists (then
 *   nothing is parsed), over {@link MAX_SCENARIO_DOCUMENTS} or {@link MAX_SCENARIO_ITEMS} (nothing past the limit is
 *   read), or holds no document of a kind Skiff reads (nothing to simulate)
 * @example
 * const scenario = await loadScenario('examples/seed', { now: Date.now() });
 * scenario.nodePools.map((p) => p.metadata.name); // ['batch', 'general', 'gpu']
 */
export async function loadScenario(path: string, options: LoadScenarioOptions): Promise<LoadedScenario> {
  const listed = await scenarioFiles(path);
  const files = listed.map((f) => f.file);
  const bytes = listed.reduce((sum, f) => sum + f.bytes, 0);
  if (bytes > MAX_SNAPSHOT_BYTES) throw new ValidationError([snapshotSizeIssue(path, bytes)]);
  const texts = await readTexts(files);
  const tooLarge = scenarioTextsSizeIssue(path, texts);
  if (tooLarge) throw new ValidationError([tooLarge]);
  const checked = checkScenarioTexts(path, files, texts, { now: options.now, ...(options.overrides ? { overrides: options.overrides } : {}) });
  const issues = [...checked.issues];
  let spec = checked.spec;
  if (options.overrides?.pricesFile !== undefined) {
    const file = options.overrides.pricesFile;
    try {
      const contents = await readScenarioFile(file);
      if ('issue' in contents) throw new ValidationError([contents.issue]);
      const prices = parsePriceFile(contents.text, file, spec.region);
      spec = { ...spec, prices: [...(spec.prices ?? []), ...prices.prices], unavailableOfferings: [...(spec.unavailableOfferings ?? []), ...prices.unavailable] };
    } catch (e) {
      if (e instanceof ValidationError) issues.push(...e.issues);
      else issues.push({ file, message: `cannot read: ${(e as NodeJS.ErrnoException).code ?? String(e)}` });
    }
  }
  if (issues.length > 0) throw new ValidationError(sortIssues(issues));
  const { reading, snapshot } = checked;
  spec = { ...spec, nodes: [...spec.nodes, ...(snapshot?.nodes ?? [])] };

  const initial = checked.located.filter((l) => l.at === -Infinity).map((l) => l.manifest);
  const of = <K extends ManifestKind>(kind: K): Sourced<ManifestObjectOf<K>>[] =>
    initial.filter((m) => m.kind === kind).map((m) => ({ ...m.object, source: m.source }) as unknown as Sourced<ManifestObjectOf<K>>);
  const pods = initial.filter((m): m is Extract<Manifest, { kind: 'Pod' }> => m.kind === 'Pod');
  const sourced = (m: Extract<Manifest, { kind: 'Pod' }>) => ({ ...m.object, source: m.source }) as Sourced<Pod>;
  const loaded = {
    name: checked.name ?? basename(path, extname(path)),
    files,
    spec,
    nodePools: of('NodePool'),
    nodeClasses: of('EC2NodeClass'),
    pods: pods.filter((m) => !reading.owners.has(m.object)).map(sourced),
    ownedPods: pods.filter((m) => reading.owners.has(m.object)).map((m) => ({ pod: sourced(m), owner: reading.owners.get(m.object)! })),
    deployments: of('Deployment'),
    statefulSets: of('StatefulSet'),
    jobs: of('Job'),
    daemonSets: of('DaemonSet'),
    pdbs: of('PodDisruptionBudget'),
    limitRanges: of('LimitRange'),
  };
  const unreadFolders = files.length > 1 || files[0] !== path ? await foldersWithYaml(path) : [];
  return {
    ...loaded,
    warnings: checked.warnings,
    skipped: checked.skipped,
    ...(unreadFolders.length > 0 ? { unreadFolders } : {}),
    ...(checked.eventsAfterEnd > 0 ? { eventsAfterEnd: checked.eventsAfterEnd } : {}),
    ...(snapshot ? { snapshot: { nodes: snapshot.nodes.length, notes: snapshot.notes } } : {}),
  };
}

/** Options of {@link checkScenarioTexts}. */
export interface CheckScenarioOptions {
  /** The current time, epoch ms, as {@link LoadScenarioOptions.now}. */
  readonly now: number;
  /** `--start`, `--duration`, `--region` (`pricesFile` is read by {@link loadScenario}, not here). @default none */
  readonly overrides?: ScenarioOverrides;
  /** `skiff validate --strict`: a document of a kind Skiff does not read is an issue, not skipped. @default false */
  readonly strict?: boolean;
  /**
   * `skiff validate`: the files may be part of a cluster's manifests rather than a whole scenario. A NodePool's
   * EC2NodeClass and a bound pod's node need then be among them only when they hold an EC2NodeClass or a Scenario
   * document (NodePools alone may name an EC2NodeClass already in the cluster), and files with nothing to simulate
   * (only kinds Skiff skips) are no issue. @default false: a whole scenario, as `simulate` reads it
   */
  readonly partial?: boolean;
}

/** One document read as an object of the scenario: a manifest that parsed, a snapshot's Node or ReplicaSet, the Scenario. */
export interface ScenarioObject {
  readonly kind: string;
  /** `metadata.name` (empty for a snapshot object without one). */
  readonly name: string;
  readonly file: string;
  /** 1-based line where its document starts. */
  readonly line: number;
}

/** What {@link checkScenarioTexts} read and found: everything {@link loadScenario} builds a scenario from. */
export interface CheckedScenario {
  /** Every problem, with file, line and field path (unsorted); the scenario is valid when there is none. */
  readonly issues: readonly ValidationIssue[];
  /** The Scenario document's `metadata.name`, when it has one that parsed. */
  readonly name?: string;
  /**
   * The spec the run uses: the Scenario document's (else the default), a snapshot's start and region when it names
   * none, the flags over both; without the snapshot's nodes (in {@link snapshot}) and without `--prices`.
   */
  readonly spec: ScenarioSpec;
  /** The initial manifests (pods a snapshot leaves out dropped), then those the Scenario's `apply` events apply. */
  readonly located: readonly Located[];
  /** What the snapshot's documents say: which pods a workload owns (empty for a scenario without a snapshot). */
  readonly reading: Omit<SnapshotReading, 'nodes'>;
  /** Present when the scenario holds Nodes: the starting nodes made from them and the notes on what was read. */
  readonly snapshot?: { readonly nodes: readonly ScenarioNode[]; readonly notes: readonly string[] };
  /** Documents of kinds Skiff does not read, skipped (none with `strict`). */
  readonly skipped: LoadedScenario['skipped'];
  /** Every object read, by file in reading order, then by line. */
  readonly objects: readonly ScenarioObject[];
  /** Files that hold no YAML document at all (only comments or nothing) and no YAML syntax error. */
  readonly emptyFiles: readonly string[];
  /** Events of the Scenario document after the end `--duration` sets, left out (0 when none). */
  readonly eventsAfterEnd: number;
  /** Valid input that is most likely a mistake ({@link scenarioWarnings}): the run goes on, `simulate` says so. */
  readonly warnings: readonly ValidationIssue[];
}

/**
 * Parses and checks a scenario's files, already read: every document (a List item by item, within
 * {@link MAX_SCENARIO_DOCUMENTS} and {@link MAX_SCENARIO_ITEMS} for all files together), at most one Scenario
 * document, a snapshot's Nodes and pods, and the checks across objects ({@link crossCheck}). The one reading of a
 * scenario: {@link loadScenario} builds the simulation from it, `skiff validate` reports on each folder with it.
 * Pure apart from `now`.
 * @param path the scenario's file or folder (named by an issue about the whole scenario)
 * @param files its files, in reading order
 * @param texts each file's text, or the issue saying why it could not be read; each text is dropped from the array
 *   once parsed, so a large snapshot's text is not kept while the next file is parsed
 * @param options `now`; the flags; `strict` and `partial` for `skiff validate`
 * @returns what was read, and every issue (none when the scenario is valid)
 * @example checkScenarioTexts('pool.yaml', ['pool.yaml'], [text], { now: Date.now() }).issues
 */
export function checkScenarioTexts(path: string, files: readonly string[], texts: (string | ValidationIssue | undefined)[], options: CheckScenarioOptions): CheckedScenario {
  let documentsLeft = MAX_SCENARIO_DOCUMENTS;
  let itemsLeft = MAX_SCENARIO_ITEMS;
  /** Documents of Skiff's kinds (a Scenario, or any other that is not skipped), valid or not. */
  let ours = 0;
  const issues: ValidationIssue[] = [];
  const located: Located[] = [];
  const invalid = new Set<string>();
  const skipped: { kind: string; apiVersion: string; name?: string; file: string; line: number }[] = [];
  const objects: ScenarioObject[] = [];
  const emptyFiles: string[] = [];
  let scenario: { doc: ManifestDocument; parsed: NonNullable<ReturnType<typeof parseScenarioDocument>['scenario']> } | undefined;
  let firstScenario: ManifestSource | undefined;
  /** The Scenario document: parsed once every file is read, when the region the run uses is known. */
  let scenarioDoc: ManifestDocument | undefined;
  const snapshotDocs: ManifestDocument[] = [];
  const object = (kind: string, name: unknown, doc: { readonly file: string; readonly line: number }) =>
    objects.push({ kind, name: typeof name === 'string' ? name : '', file: doc.file, line: doc.line });

  for (const [i, file] of files.entries()) {
    const text = texts[i];
    if (typeof text !== 'string') {
      issues.push(text!);
      continue;
    }
    texts[i] = undefined;
    const read = readManifestDocuments(text, file, readLimits(file, text, { documents: documentsLeft, items: itemsLeft }));
    documentsLeft -= read.count;
    itemsLeft -= read.items;
    issues.push(...read.issues);
    if (read.documents.length === 0 && read.issues.length === 0) emptyFiles.push(file);
    for (const doc of read.documents.flatMap(unpackList)) {
      // A snapshot's Nodes and ReplicaSets are read by shared/sim/snapshot.ts, not as manifests of their own.
      if (isSnapshotOnlyObject(doc.value)) {
        snapshotDocs.push(doc);
        const o = doc.value as { kind: string; metadata?: { name?: unknown } };
        object(o.kind, o.metadata?.name, doc);
        if (o.kind === 'Node') ours++;
        continue;
      }
      const foreign = options.strict ? undefined : foreignKind(doc.value, [SCENARIO_KIND]);
      if (!foreign) ours++;
      if (isScenarioObject(doc.value)) {
        if (firstScenario) {
          issues.push({ ...issueAt({ doc, prefix: [] }, ['kind'], `at most one Scenario document per scenario (the first is at ${firstScenario.file}:${firstScenario.line})`) });
          continue;
        }
        firstScenario = { file: doc.file, line: doc.line };
        scenarioDoc = doc;
        continue;
      }
      if (foreign) {
        skipped.push({ ...foreign, file: doc.file, line: doc.line });
        continue;
      }
      const result = parseManifestDocument(doc, { alsoSupported: [`${SCENARIO_KIND} (${SCENARIO_API_VERSION})`] });
      issues.push(...result.issues);
      if (result.manifest) {
        located.push({ manifest: result.manifest, doc, prefix: [], at: -Infinity });
        object(result.manifest.kind, result.manifest.object.metadata.name, result.manifest.source);
      } else if (invalidObjectKey(doc.value)) invalid.add(invalidObjectKey(doc.value)!);
    }
    // Past a limit nothing more is read: the issue says where it was reached.
    if (read.issues.some((i) => i.message === TOO_MANY_DOCUMENTS_MESSAGE || i.message === TOO_MANY_ITEMS_MESSAGE)) break;
  }
  if (ours === 0 && issues.length === 0 && !options.partial) issues.push(emptyScenarioIssue(path, files, skipped));
  const nodeDocs = snapshotDocs.filter((d) => (d.value as { kind: string }).kind === 'Node');
  // A snapshot without spec.region runs in its Nodes' region: the Scenario document is validated against that region
  // (its nodes', spot prices', prices' and offerings' zones), not the default one.
  const nodesRegion = nodeDocs.length > 0 ? snapshotRegion(nodeDocs) : undefined;
  let eventsAfterEnd = 0;
  if (scenarioDoc) {
    const result = parseScenarioForRun(scenarioDoc, { now: options.now, overrides: options.overrides, nodesRegion });
    issues.push(...result.issues);
    if (result.scenario) {
      scenario = { doc: scenarioDoc, parsed: result.scenario };
      object(SCENARIO_KIND, result.scenario.name, scenarioDoc);
    }
    eventsAfterEnd = result.eventsAfterEnd ?? 0;
  }

  // A snapshot: which pods belong to which workload, which are left out, when it was taken and in which region.
  const reading = readSnapshot({
    docs: snapshotDocs,
    manifests: located.filter((l) => l.at === -Infinity).map((l) => ({ manifest: l.manifest, doc: l.doc })),
    declaredNodes: new Set(scenario?.parsed.spec.nodes.map((n) => n.name) ?? []),
  });
  issues.push(...reading.issues);
  const written = (scenario?.doc.value as { spec?: { start?: unknown; region?: unknown } } | undefined)?.spec;
  let spec = scenario?.parsed.spec ?? defaultScenarioSpec(options.now);
  // Without a start or region written, a snapshot starts the minute after its newest object and in its nodes' region.
  if (nodeDocs.length > 0 && written?.start === undefined && reading.newestMs !== undefined) spec = { ...spec, startMs: Math.ceil((reading.newestMs + 1) / 60_000) * 60_000 };
  if (written?.region === undefined && nodesRegion !== undefined) spec = { ...spec, region: nodesRegion };
  spec = withOverrides(spec, options.overrides);
  const poolNames = new Set(located.filter((l) => l.at === -Infinity && l.manifest.kind === 'NodePool').map((l) => l.manifest.object.metadata.name));
  const fromSnapshot = snapshotNodes(nodeDocs, { startMs: spec.startMs, region: spec.region, nodePools: poolNames });
  issues.push(...fromSnapshot.issues);
  const declared = new Map(spec.nodes.map((n, i) => [n.name, i]));
  for (const n of fromSnapshot.nodes) {
    const i = declared.get(n.name);
    if (i !== undefined) issues.push({ file: nodeDocs[0]!.file, message: `Node ${n.name} is also declared at spec.nodes[${i}] of the Scenario document` });
  }
  const kept = located.filter((l) => !(l.manifest.kind === 'Pod' && reading.dropped.has(l.manifest.object)));

  if (scenario) {
    const scenarioDoc = scenario.doc;
    for (const e of scenario.parsed.spec.events) {
      if (e.type === 'apply') kept.push({ manifest: e.apply, doc: scenarioDoc, prefix: ['spec', 'events', e.index, 'apply'], at: e.atSeconds });
    }
  }
  // Parts of a cluster's manifests (validate) need not hold what their NodePools and pods name, unless they are a scenario.
  const references = !options.partial || scenarioDoc !== undefined || located.some((l) => l.manifest.kind === 'EC2NodeClass');
  issues.push(...crossCheck(kept, spec, scenario?.doc, { references, invalid, nodeNames: new Set(fromSnapshot.nodes.map((n) => n.name)) }));
  const order = new Map(files.map((f, i) => [f, i]));
  objects.sort((a, b) => (order.get(a.file) ?? 0) - (order.get(b.file) ?? 0) || a.line - b.line);
  return {
    issues,
    ...(scenario ? { name: scenario.parsed.name } : {}),
    spec,
    located: kept,
    reading,
    ...(nodeDocs.length > 0 ? { snapshot: { nodes: fromSnapshot.nodes, notes: [...reading.notes, ...fromSnapshot.notes] } } : {}),
    skipped,
    objects,
    emptyFiles,
    eventsAfterEnd,
    // Zones are checked against the run's region wherever there is a run: simulate (its default or --region), a
    // Scenario document, a snapshot's Nodes; not for validate's parts of a cluster, which name no region.
    warnings: scenarioWarnings(kept, !options.partial || scenario !== undefined || nodeDocs.length > 0 ? spec.region : undefined),
  };
}

/**
 * The bytes of YAML text outside the items of its Lists: what is composed a whole document at a time, bounded by
 * {@link MAX_SCENARIO_BYTES} (`shared/core/api/yaml-list.ts` finds the items).
 * @param text a file's content
 */
export function bytesOutsideLists(text: string): number {
  return Buffer.byteLength(text) - listItemRegions(text).reduce((sum, r) => sum + Buffer.byteLength(text.slice(r.start, r.end)), 0);
}

/**
 * The limits every file's YAML is read with, as {@link readManifestDocuments} options: documents and List items
 * left, YAML composed whole, one List item.
 * @param file the file (named by the size issue)
 * @param text its content
 * @param left documents and List items the scenario may still hold
 */
export function readLimits(file: string, text: string, left: { readonly documents: number; readonly items: number }): ReadManifestOptions {
  return {
    limit: { documents: left.documents, message: TOO_MANY_DOCUMENTS_MESSAGE },
    itemLimit: { items: left.items, message: TOO_MANY_ITEMS_MESSAGE },
    wholeLimit: { chars: MAX_SCENARIO_BYTES, message: scenarioSizeIssue(file, Buffer.byteLength(text)).message },
    entryLimit: { chars: MAX_SCENARIO_BYTES, message: TOO_LARGE_ITEM_MESSAGE },
  };
}

/**
 * Reads every file of a scenario before any is parsed.
 * @param files its files, in reading order
 * @returns each file's text, or the issue saying why it could not be read (the file system's error, or not YAML text)
 * @throws {ValidationError} when a file is over {@link MAX_SNAPSHOT_BYTES}
 */
async function readTexts(files: readonly string[]): Promise<(string | ValidationIssue | undefined)[]> {
  const texts: (string | ValidationIssue | undefined)[] = [];
  for (const file of files) {
    let contents;
    try {
      contents = await readScenarioFile(file, { snapshot: true });
    } catch (e) {
      texts.push({ file, message: `cannot read: ${(e as NodeJS.ErrnoException).code ?? String(e)}` });
      continue;
    }
    if ('issue' in contents && contents.reason === 'size') throw new ValidationError([contents.issue]);
    texts.push('issue' in contents ? contents.issue : contents.text);
  }
  return texts;
}

/**
 * The issue for a scenario whose files, read, hold more than it may: over {@link MAX_SNAPSHOT_BYTES} in all, or over
 * {@link MAX_SCENARIO_BYTES} outside the items of their Lists (what is composed a whole document at a time). Such a
 * scenario is not parsed.
 * @param path the scenario's file or folder (named by the issue)
 * @param texts its files' texts (an entry that is an issue counts for nothing)
 * @returns the issue, or undefined when the scenario is within both limits
 */
export function scenarioTextsSizeIssue(path: string, texts: readonly (string | ValidationIssue | undefined)[]): ValidationIssue | undefined {
  const strings = texts.filter((t): t is string => typeof t === 'string');
  const bytes = strings.reduce((sum, t) => sum + Buffer.byteLength(t), 0);
  if (bytes > MAX_SNAPSHOT_BYTES) return snapshotSizeIssue(path, bytes);
  const whole = strings.reduce((sum, t) => sum + bytesOutsideLists(t), 0);
  return whole > MAX_SCENARIO_BYTES ? scenarioSizeIssue(path, whole) : undefined;
}

/**
 * Validates and resolves a Scenario document as the run will use it (`parseScenarioDocument` over {@link withFlags}):
 * with the flags' `--start`, `--duration` and `--region`, and without `spec.region` or `--region` in the snapshot's
 * region, so its zones, prices, offerings and events are checked against the region and duration the run has.
 * `simulate` and `skiff validate` both parse a Scenario document this way.
 * @param doc the Scenario document
 * @param options `now` (epoch ms) for the default start; the flags; the region of the scenario's Nodes
 *   ({@link snapshotRegion}), when it holds any
 * @returns as `parseScenarioDocument`: the scenario, or the issues (file, line, path; events named by their index as
 *   written); plus `eventsAfterEnd`, the events `--duration` left out, when there are any
 */
export function parseScenarioForRun(
  doc: ManifestDocument,
  options: { readonly now: number; readonly overrides?: ScenarioOverrides | undefined; readonly nodesRegion?: string | undefined },
): ReturnType<typeof parseScenarioDocument> & { readonly eventsAfterEnd?: number } {
  const flagged = withFlags(doc, options.overrides, options.nodesRegion);
  const result = parseScenarioDocument(flagged.doc, { now: options.now });
  if (flagged.eventsAfterEnd === 0) return result;
  // Issues name the document's own event index, as their lines do.
  const original = (n: number) => flagged.kept?.[n] ?? n;
  const issues = result.issues.map((i) => (i.path === undefined ? i : { ...i, path: i.path.replace(/^spec\.events\[(\d+)\]/, (_, n: string) => `spec.events[${original(Number(n))}]`) }));
  // So do the events, for the checks and messages that locate them later (`crossCheck`, ScenarioEventSkipped).
  const scenario = result.scenario && { ...result.scenario, spec: { ...result.scenario.spec, events: result.scenario.spec.events.map((e) => ({ ...e, index: original(e.index) })) } };
  return { ...result, ...(scenario ? { scenario } : {}), issues, eventsAfterEnd: flagged.eventsAfterEnd };
}

/** `spec.events[i].at` in seconds, or undefined when it is missing or not a Go duration (validation says so). */
function rawEventAtSeconds(event: unknown): number | undefined {
  const at = event !== null && typeof event === 'object' ? (event as { at?: unknown }).at : undefined;
  if (typeof at !== 'string') return undefined;
  try {
    return parseDuration(at);
  } catch {
    return undefined;
  }
}

/**
 * The Scenario document read as if it had the flags' values (`--start`, `--duration`, `--region` replace its fields)
 * and, without `spec.region` or `--region`, the snapshot's region: its zones, events and nodes are then checked
 * against the region and duration the run will have. Field positions stay the document's own. A `spec` that is not a
 * map is left as it is (its own issue says so).
 *
 * `--duration` cuts the run short: the events written for after its end are left out (counted in `eventsAfterEnd`,
 * which the CLI notes), where the document's own `spec.duration` would call them an error. A look at the first two
 * hours of the Alibaba trace would otherwise be refused with 3,400 errors. Issues of the events kept still name
 * their own lines.
 * @param doc the Scenario document
 * @param overrides the command line's flags
 * @param nodesRegion the region of the snapshot's Nodes ({@link snapshotRegion}), when the scenario holds Nodes
 */
function withFlags(
  doc: ManifestDocument,
  overrides: ScenarioOverrides | undefined,
  nodesRegion: string | undefined,
): { readonly doc: ManifestDocument; readonly eventsAfterEnd: number; readonly kept?: readonly number[] } {
  const unchanged = { doc, eventsAfterEnd: 0 };
  const value = doc.value as { spec?: unknown } | null;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return unchanged;
  if (value.spec !== undefined && (value.spec === null || typeof value.spec !== 'object' || Array.isArray(value.spec))) return unchanged;
  const spec = (value.spec ?? {}) as Record<string, unknown>;
  const region = overrides?.region ?? (spec['region'] === undefined ? nodesRegion : undefined);
  if (overrides?.startMs === undefined && overrides?.durationSeconds === undefined && region === undefined) return unchanged;
  const duration = overrides?.durationSeconds;
  const events = spec['events'];
  // The index in the document of each event kept, when --duration left some out.
  const kept = duration !== undefined && Array.isArray(events) ? events.flatMap((e, i) => ((rawEventAtSeconds(e) ?? 0) > duration ? [] : [i])) : undefined;
  const eventsAfterEnd = kept && Array.isArray(events) ? events.length - kept.length : 0;
  const flagged = {
    ...spec,
    ...(overrides?.startMs !== undefined ? { start: new Date(overrides.startMs).toISOString() } : {}),
    ...(duration !== undefined ? { duration: `${duration}s` } : {}),
    ...(region !== undefined ? { region } : {}),
    ...(kept && eventsAfterEnd > 0 ? { events: kept.map((i) => (events as unknown[])[i]) } : {}),
  };
  const locate: ManifestDocument['locate'] =
    kept && eventsAfterEnd > 0
      ? (path, options) => doc.locate(path[0] === 'spec' && path[1] === 'events' && typeof path[2] === 'number' ? ['spec', 'events', kept[path[2]] ?? path[2], ...path.slice(3)] : path, options)
      : doc.locate;
  return { doc: { ...doc, value: { ...value, spec: flagged }, locate }, eventsAfterEnd, ...(kept && eventsAfterEnd > 0 ? { kept } : {}) };
}

/**
 * The spec with the command line's flags applied (each replaces the document's field).
 * @throws nothing: the flags are checked where they are parsed (`shared/cli/main.ts`)
 */
function withOverrides(spec: ScenarioSpec, overrides: ScenarioOverrides | undefined): ScenarioSpec {
  if (!overrides) return spec;
  return {
    ...spec,
    ...(overrides.startMs !== undefined ? { startMs: overrides.startMs } : {}),
    ...(overrides.durationSeconds !== undefined ? { durationSeconds: overrides.durationSeconds } : {}),
    ...(overrides.region !== undefined ? { region: overrides.region } : {}),
  };
}

/**
 * The issue for a scenario with nothing to simulate: no document of a kind Skiff reads (only comments, empty
 * documents, or kinds it skips), which would otherwise simulate an empty cluster and exit 0. Like every other input
 * error it names a `file:line:col`: the first skipped document, else line 1, column 1 of the scenario's first file
 * (where a document was expected); the scenario's path alone only when it has no file at all.
 * @param path the scenario's file or folder
 * @param files the scenario's YAML files, in reading order
 * @param skipped the documents skipped as kinds Skiff does not read
 */
function emptyScenarioIssue(path: string, files: readonly string[], skipped: readonly { readonly kind: string; readonly name?: string; readonly file: string; readonly line: number }[]): ValidationIssue {
  const needs = 'a scenario needs at least one NodePool, EC2NodeClass, Pod, workload, PodDisruptionBudget, LimitRange or Scenario document';
  const what = files.length > 1 ? `none of the ${files.length} files of ${path} holds a YAML document` : 'no YAML document in it';
  if (skipped.length === 0) return { ...(files[0] !== undefined ? { file: files[0], line: 1, column: 1 } : { file: path }), message: `nothing to simulate: ${what} (only comments or empty documents); ${needs}` };
  const listed = skipped.slice(0, 3).map((s) => `${s.kind}${s.name !== undefined ? ` ${s.name}` : ''} at ${s.file}:${s.line}`);
  const more = skipped.length > 3 ? ` and ${skipped.length - 3} more` : '';
  return { file: skipped[0]!.file, line: skipped[0]!.line, column: 1, message: `nothing to simulate: every document is of a kind Skiff does not read (${listed.join(', ')}${more}); ${needs}` };
}
