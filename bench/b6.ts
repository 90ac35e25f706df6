/**
 * B6 (issue 22, part 4): how long `skiff simulate` takes on a real-size cluster. One case per process (`worker.ts`):
 * the generated snapshot of `b6-cases.ts` is written to a file and simulated exactly as `skiff simulate` does
 * (`simulateScenario`: the real handlers, the DynamoDB adapter on dynalite, the simulated cluster and EC2, the
 * observer), without a probe or progress hook, so nothing is added to the run being timed.
 */
import { simulateScenario } from '../shared/cli/simulate.js';
import { existedAtStart } from '../shared/sim/result-schema.js';
import { writeB6Case, type B6Case } from './b6-cases.js';

/** What one B6 case measured. */
export interface B6Result {
  readonly case: B6Case;
  /** Wall time of loading and simulating the scenario and building its Result (module imports excluded), seconds. */
  readonly wallSeconds: number;
  /** CPU time of the process over the same span (user + system), seconds: the run's own cost on a shared machine. */
  readonly cpuSeconds: number;
  /** The process's resident set high-water mark (`process.resourceUsage().maxRSS`) at the end, MiB. */
  readonly peakRssMiB: number;
  /** Simulated duration, hours. */
  readonly simulatedHours: number;
  /** Pods ever created, nodes ever registered, NodeClaims launched in the run, disruptions started. */
  readonly pods: number;
  readonly nodes: number;
  readonly launched: number;
  readonly disruptions: number;
  /** Observer violations, by kind (only the non-zero ones). */
  readonly violations: Readonly<Record<string, number>>;
}

/**
 * Simulates one B6 case and measures it.
 * @throws whatever the simulation throws (an invalid scenario would be a bug of the generator)
 */
export async function measureB6(c: B6Case): Promise<B6Result> {
  const path = writeB6Case(c);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const { result } = await simulateScenario(path, { seed: 1 });
  const wallSeconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  return {
    case: c,
    wallSeconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    peakRssMiB: process.resourceUsage().maxRSS / 1024,
    simulatedHours: c.hours,
    pods: result.pods.length,
    nodes: result.nodes.length,
    launched: result.nodeClaims.filter((n) => n.launchedAt !== null && !existedAtStart(n, Date.parse(result.start))).length,
    disruptions: result.disruptions.length,
    violations: Object.fromEntries(Object.entries(result.violations).filter(([, n]) => typeof n === 'number' && n > 0)) as Record<string, number>,
  };
}
