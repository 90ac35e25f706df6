/**
 * The `skiff` command line. Subcommands: `simulate`, `explain`, `get` (`get.ts`) and `validate` (`validate.ts`).
 * Exit status: 0 on success, 2 when an input (manifest, scenario, argument) is invalid, 1 on any other failure —
 * including `explain` asked about a pod that does not exist or is not pending at the end of the run. `validate` is the
 * exception its purpose makes: 1 when a file it checks is invalid, 2 only on a usage error (no such file).
 */
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { formatIssue, isValidationError } from '../core/errors.js';
import type { LoadedScenario } from '../sim/scenario-loader.js';
import type { SimulationResult } from '../sim/result.js';
import { explainNode, explainResult, formatExplanation, formatNodeExplanation, longestWait, parsePodRef, pastWaitNote, type PodRef } from './explain.js';
import { registerGetCommand } from './get.js';
import { createProgressReporter } from './report/progress-reporter.js';
import { reportPathProblem, writeReport } from './report/write-report.js';
import { simulateScenario } from './simulate.js';
import type { ConsolidationSetting } from '../controllers/disruption/deps.js';
import type { ProvisioningSetting } from '../controllers/provision.js';
import { formatSummary } from './summary.js';
import { registerValidateCommand } from './validate.js';
import { createRequire } from 'node:module';
import { parseDuration } from '../core/api/duration.js';
import { EARLIEST_TIME_MS, LATEST_TIME_MS, MAX_DURATION_SECONDS, REGION, isoTimestampSchema } from '../sim/scenario.js';
import type { ScenarioOverrides } from '../sim/scenario-loader.js';

/** `--start`, `--duration`, `--region` and `--prices` as commander hands them over. */
interface ScenarioFlags {
  readonly start?: number;
  readonly duration?: number;
  readonly region?: string;
  readonly prices?: string;
}

/** Adds the flags that set what a Scenario document would (they override it; a snapshot has none). */
function scenarioFlags(command: Command): Command {
  return command
    .option('--start <time>', 'virtual clock start, ISO-8601 UTC (e.g. 2026-03-02T08:00:00Z); overrides spec.start', parseStart)
    .option('--duration <duration>', 'how long to simulate, a Go duration (e.g. 2h, 90m); overrides spec.duration', parseDurationFlag)
    .option('--region <region>', 'AWS region (e.g. eu-west-1); overrides spec.region and a snapshot\'s node labels', parseRegion)
    .option('--prices <file>', 'prices per instance type[/zone], on-demand and spot in USD/h, and offerings EC2 does not have (YAML or JSON: {prices: [{instanceType, zone?, onDemand?, spot?}], unavailable: [{instanceType, zone?, capacityType?}]}); wins over spec.prices');
}

/** `--consolidation` and `--provisioning` as commander hands them over. */
interface RunSettings {
  readonly consolidation: ConsolidationSetting;
  readonly provisioning: ProvisioningSetting;
}

/** Adds `--consolidation` and `--provisioning` (`simulate` and `explain`: explain runs the same simulation). */
function runSettings(command: Command): Command {
  return command
    .option('--consolidation <setting>', "consolidation moves: 'skiff' (Karpenter's, then Skiff's repack and split moves) or 'karpenter' (Karpenter's moves only, a baseline)", parseConsolidation, 'skiff')
    .option('--provisioning <setting>', "how the provisioner plans: 'skiff' (plans that survive kube-scheduler's binding) or 'karpenter' (no binding replay, as Karpenter; Skiff's packing kept)", parseProvisioning, 'skiff');
}

/** The overrides of the flags given. */
function overridesOf(flags: ScenarioFlags): ScenarioOverrides | undefined {
  const o = {
    ...(flags.start !== undefined ? { startMs: flags.start } : {}),
    ...(flags.duration !== undefined ? { durationSeconds: flags.duration } : {}),
    ...(flags.region !== undefined ? { region: flags.region } : {}),
    ...(flags.prices !== undefined ? { pricesFile: flags.prices } : {}),
  };
  return Object.keys(o).length > 0 ? o : undefined;
}

/**
 * `--start`: an ISO-8601 time with a zone, as `spec.start`, from 1970-01-01 to two years before the year 9000 (the
 * run may last a year and its starting nodes date back up to a year; `spec.start`'s own check needs the duration,
 * which a snapshot without a Scenario document does not give).
 */
function parseStart(value: string): number {
  const parsed = isoTimestampSchema.safeParse(value);
  if (!parsed.success) throw new InvalidArgumentError(`${JSON.stringify(value)} is not an ISO-8601 UTC time such as "2026-03-02T08:00:00Z"`);
  if (parsed.data < EARLIEST_TIME_MS || parsed.data + 2 * MAX_DURATION_SECONDS * 1000 > LATEST_TIME_MS) {
    throw new InvalidArgumentError(`the start must be from 1970-01-01 to ${new Date(LATEST_TIME_MS - 2 * MAX_DURATION_SECONDS * 1000).toISOString().slice(0, 10)} (a run may last a year, before the year 9000)`);
  }
  return parsed.data;
}

/** `--duration`: a positive Go duration of at most a year, as `spec.duration`. */
function parseDurationFlag(value: string): number {
  let seconds: number;
  try {
    seconds = parseDuration(value);
  } catch (e) {
    throw new InvalidArgumentError(e instanceof Error ? e.message : String(e));
  }
  if (!(seconds > 0) || seconds > MAX_DURATION_SECONDS) throw new InvalidArgumentError('the duration must be more than 0 and at most a year (e.g. 2h)');
  return seconds;
}

/** `--region`: an AWS region name, as `spec.region`. */
function parseRegion(value: string): string {
  if (!REGION.test(value)) throw new InvalidArgumentError('region must be an AWS region name such as us-west-2');
  return value;
}

/** Streams the CLI writes to (replaceable in tests). */
export interface CliIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  /** Whether `err` writes to a terminal: only then is a progress bar drawn (never on `out`). */
  readonly isTTY: boolean;
  /** Width of the `err` terminal in columns (for the progress bar). @default 80 */
  readonly columns?: number;
}

const defaultIo: CliIo = {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  isTTY: Boolean(process.stderr.isTTY),
  ...(process.stderr.columns ? { columns: process.stderr.columns } : {}),
};

/**
 * Runs the CLI with `argv` (without the node and script paths) and returns the exit status.
 * @example process.exitCode = await main(['simulate', 'examples/seed', '--json']);
 * @example process.exitCode = await main(['simulate', 'examples/seed', '--report', 'report.html']);
 * @example process.exitCode = await main(['explain', 'examples/seed', 'default/high-memory-report']);
 */
export async function main(argv: readonly string[], terminal: CliIo = defaultIo): Promise<number> {
  // The one place control characters are stopped: everything the commands print (summaries, notes, warnings, issues
  // echoing names, labels, owner names, skipped kinds, price-file zones) passes through here; only the progress bar,
  // which draws with them, writes to the terminal directly.
  const io = withoutControlCharactersIo(terminal);
  let status = 0;
  const program = new Command('skiff')
    .description('Karpenter-compatible node autoscaling for EKS on AWS serverless parts')
    .version(packageVersion(), '-V, --version', 'print the version')
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err });

  runSettings(scenarioFlags(program
    .command('simulate')))
    .description('simulate a scenario (a folder or multi-document YAML of NodePools, EC2NodeClasses, workloads and a Scenario) through the real handlers')
    .argument('<path>', 'scenario folder or YAML file')
    .option('--json', 'print the whole Result as JSON on stdout')
    .option('--seed <n>', 'seed for generated names and fault injection', parseSeed, 1)
    .option('--report <file>', 'also write a self-contained HTML report (charts of nodes, cost, pending pods and disruptions; tables of NodeClaims and pending pods) to <file>, in a folder that exists', parseReportPath)
    .action(async (path: string, opts: { json?: boolean; seed: number; report?: string } & RunSettings & ScenarioFlags) => {
      const run = await runScenario('simulate', path, opts.seed, io, !opts.json, opts.consolidation, overridesOf(opts), opts.provisioning);
      if (!run) {
        status = 2;
        return;
      }
      io.out(opts.json ? `${JSON.stringify(run.result, null, 2)}\n` : `${formatSummary(run.result)}\n`);
      if (opts.report === undefined) return;
      try {
        await writeReport(opts.report, run);
      } catch (e) {
        io.err(`skiff simulate: cannot write the report to ${opts.report}: ${e instanceof Error ? e.message : String(e)}\n`);
        status = 1;
        return;
      }
      if (!opts.json) io.err(`Report written to ${opts.report}\n`);
    });

  runSettings(scenarioFlags(program
    .command('explain')))
    .description('simulate a scenario as `simulate` does, then explain every pod still pending at the end (or only the named one): per NodePool, the first constraint that rules it out, and "did you mean" hints')
    .argument('<scenario>', 'scenario folder or YAML file')
    .argument('[pod]', 'namespace/name of one pending pod (a bare name means namespace default)', parsePodRef)
    .option('--json', 'print the explanation as JSON on stdout (the shape: docs/contracts.md, "skiff explain --json")')
    .option('--seed <n>', 'seed for generated names and fault injection', parseSeed, 1)
    .option('--node <name>', 'explain one node instead (its Node or NodeClaim name): what disrupted it, or what held it')
    .action(async (path: string, pod: PodRef | undefined, opts: { json?: boolean; seed: number; node?: string } & RunSettings & ScenarioFlags) => {
      if (opts.node !== undefined && opts.node.trim() === '') {
        io.err('skiff explain: --node needs a Node or NodeClaim name\n');
        status = 2;
        return;
      }
      if (opts.node !== undefined && pod !== undefined) {
        io.err('skiff explain: name a pod or --node, not both\n');
        status = 2;
        return;
      }
      const run = await runScenario('explain', path, opts.seed, io, !opts.json, opts.consolidation, overridesOf(opts), opts.provisioning);
      if (!run) {
        status = 2;
        return;
      }
      if (opts.node !== undefined) {
        const told = explainNode(run.result, opts.node);
        if (!told.ok) {
          io.err(`skiff explain: ${told.message}\n`);
          status = 1;
          return;
        }
        io.out(opts.json ? `${JSON.stringify(told.node, null, 2)}\n` : `${formatNodeExplanation(told.node)}\n`);
        return;
      }
      let outcome = explainResult(run.result, pod);
      // A pod that waited and then ran: explain it at the last second it was pending, by running the scenario again
      // up to then (the same seed and input give the same run up to that moment).
      const wait = !outcome.ok && pod ? longestWait(run.result, pod) : undefined;
      if (wait && pod) {
        const earlier = await runScenario('explain', path, opts.seed, io, !opts.json, opts.consolidation, { ...overridesOf(opts), durationSeconds: wait.explainAtSeconds }, opts.provisioning);
        const then = earlier ? explainResult(earlier.result, pod) : undefined;
        if (then?.ok) {
          outcome = { ok: true, explanation: { ...then.explanation, waited: { since: wait.since, until: wait.until, seconds: Math.round(wait.seconds) } } };
          if (!opts.json) io.out(`${pastWaitNote(pod, wait, then.explanation.at)}\n`);
        }
      }
      if (!outcome.ok) {
        // The message echoes the pod argument: control characters (terminal escapes) are shown, not sent (see main).
        io.err(`skiff explain: ${outcome.message}\n`);
        status = 1;
        return;
      }
      io.out(opts.json ? `${JSON.stringify(outcome.explanation, null, 2)}\n` : `${formatExplanation(outcome.explanation, { earlier: wait !== undefined })}\n`);
      // Nothing pending at the end, but pods waited: say which waited longest, and how to ask why.
      const longest = run.result.pending?.longest;
      if (!opts.json && pod === undefined && outcome.explanation.pods.length === 0 && longest && longest.seconds >= 60) {
        io.out(`${run.result.pending!.pods} pod${run.result.pending!.pods === 1 ? '' : 's'} waited during the run; ${longest.pod} longest (${Math.round(longest.seconds)} s, from ${longest.since}): \`skiff explain ${path} ${longest.pod}\` says why\n`);
      }
    });

  registerGetCommand(program, io, (s) => (status = s));
  registerValidateCommand(program, io, (s) => (status = s));

  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    io.err(`skiff: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    return 1;
  }
  return status;
}

/** `--consolidation`: `skiff` or `karpenter` (`SimulateOptions.consolidation`). */
function parseConsolidation(value: string): ConsolidationSetting {
  if (value !== 'skiff' && value !== 'karpenter') throw new InvalidArgumentError("the consolidation setting must be 'skiff' or 'karpenter'");
  return value;
}

/** `--provisioning`: `skiff` or `karpenter` (`SimulateOptions.provisioning`). */
function parseProvisioning(value: string): ProvisioningSetting {
  if (value !== 'skiff' && value !== 'karpenter') throw new InvalidArgumentError("the provisioning setting must be 'skiff' or 'karpenter'");
  return value;
}

/** `--report`: a file that can be written, checked before the run (`reportPathProblem`), not after it. */
function parseReportPath(value: string): string {
  const problem = reportPathProblem(value);
  if (problem) throw new InvalidArgumentError(problem);
  return value;
}

/** Seeds are unsigned 32-bit integers: the simulation's PRNG has 32 bits of state, so larger seeds would alias. */
function parseSeed(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 0xffffffff) throw new InvalidArgumentError('the seed must be an integer from 0 to 4294967295');
  return Number(value);
}

/**
 * Loads and simulates a scenario for `command`, printing load warnings and skipped kinds on stderr (not for `--json`). On an invalid scenario it prints
 * the issues (file:line:column: path: message) on stderr and returns undefined: the caller exits with status 2.
 * @param progress whether a progress bar may be drawn on stderr (when it is a terminal and the run takes over 2 s);
 *   false for `--json`, which adds nothing to any stream
 * @throws whatever else the simulation throws (exit status 1)
 */
async function runScenario(
  command: string,
  path: string,
  seed: number,
  io: SafeIo,
  progress: boolean,
  consolidation: ConsolidationSetting = 'skiff',
  overrides?: ScenarioOverrides,
  provisioning: ProvisioningSetting = 'skiff',
): Promise<{ scenario: LoadedScenario; result: SimulationResult } | undefined> {
  const enabled = progress && io.isTTY;
  const bar = createProgressReporter({ enabled, write: io.terminal.err, ...(io.columns ? { columns: io.columns } : {}) });
  try {
    // The engine's progress hook is only wired when a bar may be drawn: piped and `--json` runs stay exactly as before.
    const run = await simulateScenario(path, { seed, consolidation, provisioning, ...(overrides ? { overrides } : {}), ...(enabled ? { onProgress: (fraction: number) => bar.update(fraction) } : {}) }).finally(() => bar.stop());
    // `--json` (no progress) adds nothing to stderr: the warnings are Events in the Result, `validate` lists skipped kinds.
    if (!progress) return run;
    for (const w of run.scenario.warnings) io.err(`warning: ${formatIssue(w)}\n`);
    for (const note of run.scenario.snapshot?.notes ?? []) io.err(`note: snapshot: ${note}\n`);
    if (run.scenario.eventsAfterEnd) io.err(`note: ${run.scenario.eventsAfterEnd.toLocaleString('en-US')} event${run.scenario.eventsAfterEnd === 1 ? '' : 's'} of the scenario come${run.scenario.eventsAfterEnd === 1 ? 's' : ''} after the end --duration sets, and ${run.scenario.eventsAfterEnd === 1 ? 'is' : 'are'} not run\n`);
    for (const dir of run.scenario.unreadFolders ?? []) io.err(`note: ${dir}/: not read — a scenario folder is read as it is, not recursively (skiff validate reads subfolders); move its files up or simulate it on its own\n`);
    for (const o of run.scenario.skipped) {
      const why = o.kind === 'NodeClaim' ? "Karpenter's record: Skiff keeps its own NodeClaims and adopts the snapshot's Nodes from their labels" : 'not a kind Skiff reads';
      io.err(`note: ${o.file}:${o.line}: skipped ${o.kind}${o.name !== undefined ? ` ${JSON.stringify(o.name)}` : ''} (${o.apiVersion}): ${why}\n`);
    }
    return run;
  } catch (e) {
    if (!isValidationError(e)) throw e;
    io.err(`skiff ${command}: invalid input, nothing was simulated:\n${e.message}\n`);
    return undefined;
  }
}

/** A {@link CliIo} whose `out` and `err` show control characters instead of sending them, and the terminal's own. */
interface SafeIo extends CliIo {
  /** The streams as given (for the progress bar, which draws with carriage returns). */
  readonly terminal: CliIo;
}

/**
 * `io` with every text written through {@link withoutControlCharacters}: input-derived text (names, labels, owner
 * names, kinds, file contents echoed in issues) can never send a terminal escape sequence. JSON stays valid: inside
 * strings the escapes are JSON's own `\u00XX`, and JSON has no other control characters than newlines.
 */
function withoutControlCharactersIo(io: CliIo): SafeIo {
  return { ...io, out: (t) => io.out(withoutControlCharacters(t)), err: (t) => io.err(withoutControlCharacters(t)), terminal: io };
}

/** `text` with control characters (C0 but tab and newline, DEL, C1 — e.g. terminal escape sequences) written as `\u00XX`. */
function withoutControlCharacters(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The version in package.json (the CLI's `--version`). */
function packageVersion(): string {
  return (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
}
