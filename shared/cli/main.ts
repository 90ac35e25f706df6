/**
 * The `skiff` command line. Subcommands: `simulate`.
 * Exit status: 0 on success, 2 when an input (manifest, scenario, argument) is invalid, 1 on any other failure.
 */
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { formatIssue, isValidationError } from '../core/errors.js';
import { simulateScenario } from './simulate.js';
import { formatSummary } from './summary.js';

/** Streams the CLI writes to (replaceable in tests). */
export interface CliIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly isTTY: boolean;
}

const defaultIo: CliIo = {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  isTTY: Boolean(process.stderr.isTTY),
};

/**
 * Runs the CLI with `argv` (without the node and script paths) and returns the exit status.
 * @example process.exitCode = await main(['simulate', 'examples/seed', '--json']);
 */
export async function main(argv: readonly string[], io: CliIo = defaultIo): Promise<number> {
  let status = 0;
  const program = new Command('skiff')
    .description('Karpenter-compatible node autoscaling for EKS on AWS serverless parts')
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err });

  program
    .command('simulate')
    .description('simulate a scenario (a folder or multi-document YAML of NodePools, EC2NodeClasses, workloads and a Scenario) through the real handlers')
    .argument('<path>', 'scenario folder or YAML file')
    .option('--json', 'print the whole Result as JSON on stdout')
    .option('--seed <n>', 'seed for generated names and fault injection', parseSeed, 1)
    .action(async (path: string, opts: { json?: boolean; seed: number }) => {
      try {
        const { scenario, result } = await simulateScenario(path, { seed: opts.seed });
        for (const w of scenario.warnings) io.err(`warning: ${formatIssue(w)}\n`);
        io.out(opts.json ? `${JSON.stringify(result, null, 2)}\n` : `${formatSummary(result)}\n`);
      } catch (e) {
        if (isValidationError(e)) {
          io.err(`skiff simulate: invalid input, nothing was simulated:\n${e.message}\n`);
          status = 2;
          return;
        }
        throw e;
      }
    });

  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    io.err(`skiff: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    return 1;
  }
  return status;
}

/** Seeds are unsigned 32-bit integers: the simulation's PRNG has 32 bits of state, so larger seeds would alias. */
function parseSeed(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 0xffffffff) throw new InvalidArgumentError('the seed must be an integer from 0 to 4294967295');
  return Number(value);
}
