/**
 * Seeded random scenarios for the disruption property test and soak (issue 6): small clusters (≤ ~15 nodes) run for
 * whole days, with random `spec.disruption` (policy, consolidateAfter, 1–3 budgets mixing counts and percentages,
 * scheduled windows, reasons, now and then a schedule that has the CRD's shape but does not evaluate), expireAfter,
 * terminationGracePeriod, on-demand and/or spot, 1–4 Deployments with random replicas and requests, PDBs (int or %,
 * minAvailable or maxUnavailable, sometimes one that can never allow an eviction), `karpenter.sh/do-not-disrupt` on
 * pod templates and on nodes (annotate events), and a timeline of scale events, drift (a changed EC2NodeClass),
 * taints and node conditions. Drawn from a second stream (so the draws above are what they were before): a
 * requirement on a custom label no instance type defines (`Exists`, `NotIn`, `Gt`, `Lte` — the NodeClaim gets a
 * generated value, Karpenter's `Requirement.Any()`; a loop would show as `violations.churn`), and Deployments whose
 * pods tolerate every taint (never evicted by a drain; a loop would show as `violations.evictionLoops`).
 *
 * The generator returns, beside the YAML, what it knows the checks need: which Deployments carry do-not-disrupt
 * "true" on their template, when nodes were annotated do-not-disrupt, each NodePool's terminationGracePeriod, and the
 * instants at which pods may be evicted by something other than Skiff (a NoExecute taint, taint-based eviction after
 * a node turned NotReady).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mulberry32 } from '../../shared/ports/ids.js';
import type { ScenarioFaults } from '../../shared/sim/scenario.js';

/** A node annotation event the checks replay: every node of `nodePool` live at `atMs` got `karpenter.sh/do-not-disrupt: value`. */
export interface NodeAnnotation {
  /** Epoch ms. */
  readonly atMs: number;
  readonly nodePool: string;
  readonly value: string;
}

/** A generated disruption scenario and what the generator knows about it. */
export interface RandomDisruptionScenario {
  readonly seed: number;
  readonly dir: string;
  /** The scenario file (one multi-document YAML). */
  readonly file: string;
  readonly yaml: string;
  /** Scenario start, epoch ms. */
  readonly startMs: number;
  readonly days: number;
  /** Simulated hours, when the run is shorter than a day ({@link RandomDisruptionScenarioOptions.hours}). */
  readonly hours?: number;
  /** Deployments whose pod template carries `karpenter.sh/do-not-disrupt: "true"`. */
  readonly doNotDisruptDeployments: readonly string[];
  /** Node annotation events (do-not-disrupt "true" or "false"), in time order. */
  readonly nodeAnnotations: readonly NodeAnnotation[];
  /** NodePool → terminationGracePeriod in seconds (absent: none). */
  readonly terminationGraceSeconds: Readonly<Record<string, number>>;
  /**
   * Windows `[from, to]` (epoch ms) in which pods may be evicted by the cluster itself rather than by a disruption
   * (a NoExecute taint event; taint-based eviction 5 minutes after a node turned NotReady).
   */
  readonly involuntaryEvictionWindows: readonly (readonly [number, number])[];
  /** Every `scale` event: the Deployment and when (epoch ms). */
  readonly scaleEvents: readonly { readonly deployment: string; readonly atMs: number }[];
  /** Short description for logs: pools, deployments, PDBs, events. */
  readonly summary: string;
}

/** Options of {@link randomDisruptionScenario}. */
export interface RandomDisruptionScenarioOptions {
  /** Simulated days in the scenario. @default 1 */
  readonly days?: number;
  /**
   * A run of this many simulated hours instead of whole days (the fault soak's short runs): the one day's timeline is
   * squeezed into them (every time of day scaled by hours/24), so the run keeps its scale steps, drift, node events and,
   * when hostile, an ICE window and a spot interruption of a spot node (pool-0 then always allows spot). The random
   * draws are the same as for a one-day run of the seed. @default whole days
   */
  readonly hours?: number;
  /**
   * Issue 21's hostile day: these faults (`spec.faults`) on top, plus — from a third random stream, so every other
   * draw stays what it was — ICE windows on common offerings and spot interruptions of nodes of spot NodePools.
   * @default none (no faults, no ICE, no interruptions)
   */
  readonly hostile?: Partial<ScenarioFaults>;
  /** Folder to write the scenario into. @default a new temporary folder */
  readonly dir?: string;
}

const CPU = ['100m', '250m', '500m', '750m', '1', '1500m'];
const MEMORY = ['128Mi', '256Mi', '512Mi', '1Gi', '2Gi'];
const CONSOLIDATE_AFTER = ['0s', '1m', '5m', '30m', 'Never'];
const BUDGET_NODES = ['0', '1', '1', '2', '3', '5', '10%', '20%', '34%', '50%', '100%'];
const BUDGET_DURATIONS = ['10m', '30m', '1h', '90m', '2h', '1h30m', '6h', '14h'];
const REASONS = ['Empty', 'Underutilized', 'Drifted'] as const;
const GRACE = ['5m', '15m', '30m', '1h', '2h'];
const SIZES = '[large, xlarge, 2xlarge, 4xlarge]';
/** Requirements on a label no instance type defines (the NodeClaim gets a generated value for each). */
const CUSTOM_REQUIREMENTS = [
  '{key: example.com/team, operator: Exists}',
  '{key: example.com/tier, operator: NotIn, values: [legacy]}',
  '{key: example.com/generation, operator: Gt, values: ["2"]}',
  '{key: example.com/shard, operator: Lte, values: ["9"]}',
  '{key: example.com/owner, operator: In, values: [payments, search]}',
];
/** Taint-based eviction delay after NotReady (the simulated node lifecycle controller's `NOT_READY_TOLERATION_MS`). */
const NOT_READY_EVICTION_MS = 5 * 60_000;

const MINUTE = 60_000;

/**
 * Writes the random disruption scenario for `seed` (which alone decides it, with `days`) and returns it.
 * @example const s = randomDisruptionScenario(42); await simulateScenario(s.dir, { seed: 42 });
 */
export function randomDisruptionScenario(seed: number, options: RandomDisruptionScenarioOptions = {}): RandomDisruptionScenario {
  const hours = options.hours;
  const days = hours !== undefined ? 1 : (options.days ?? 1);
  const rnd = mulberry32(seed ^ 0x5eed_d15c);
  const chance = (p: number) => rnd() < p;
  // Features added after the first soaks draw from their own stream, leaving every earlier draw as it was.
  const extra = mulberry32(seed ^ 0x0c0f_fee5);
  const extraChance = (p: number) => extra() < p;
  const extraPick = <T>(xs: readonly T[]): T => xs[Math.floor(extra() * xs.length)]!;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const totalMinutes = hours !== undefined ? Math.round(hours * 60) : days * 24 * 60;
  /** A time of day drawn for a whole day (0–1440 min), squeezed into a short run. */
  const squeeze = (minute: number) => (hours === undefined ? minute : Math.min(totalMinutes - 2, Math.max(1, Math.round((minute * totalMinutes) / 1440))));
  // Start at a random hour of 2026-03-02 so scheduled budget windows fall anywhere in the run.
  const startMs = Date.parse('2026-03-02T00:00:00Z') + int(0, 23) * 60 * MINUTE;
  const at = (minute: number) => `${minute}m`;
  const summary: string[] = [];

  const nodeClass = (rev: number) => `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: c}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: c}}]
  role: NodeRole${rev > 0 ? `\n  tags: {revision: "${rev}"}` : ''}`;
  const docs: string[] = [nodeClass(0)];

  // NodePools.
  const pools = int(1, 3);
  const terminationGraceSeconds: Record<string, number> = {};
  for (let i = 0; i < pools; i++) {
    const name = `pool-${i}`;
    const drawn = pick([['on-demand'], ['on-demand'], ['spot'], ['spot', 'on-demand']]);
    // A short hostile run interrupts a spot node: pool-0 allows spot then (the draw stays the same).
    const capacity = hours !== undefined && options.hostile && i === 0 && !drawn.includes('spot') ? ['spot', 'on-demand'] : drawn;
    const policy = pick(['WhenEmpty', 'WhenEmptyOrUnderutilized', 'WhenEmptyOrUnderutilized']);
    const consolidateAfter = pick(CONSOLIDATE_AFTER);
    const budgets: string[] = [];
    for (let b = int(1, 3); b > 0; b--) budgets.push(randomBudget());
    const expireAfter = chance(0.3) ? `${int(2, 12)}h` : chance(0.55) ? '720h' : 'Never';
    const grace = chance(0.35) ? pick(GRACE) : undefined;
    const custom = extraChance(0.3) ? extraPick(CUSTOM_REQUIREMENTS) : undefined;
    if (grace) terminationGraceSeconds[name] = durationSeconds(grace);
    summary.push(`${name}: ${capacity.join('+')}, ${policy}/${consolidateAfter}, expireAfter ${expireAfter}${grace ? `, grace ${grace}` : ''}, budgets [${budgets.join(', ')}]${custom ? `, ${custom}` : ''}`);
    docs.push(`apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: ${name}}
spec:
  template:
    metadata: {labels: {pool: p${i}}}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      expireAfter: ${expireAfter}${grace ? `\n      terminationGracePeriod: ${grace}` : ''}
      requirements:
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [${pick([['c', 'm', 'r'], ['c', 'm'], ['m'], ['m', 'r']]).join(', ')}]}
        - {key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["4"]}
        - {key: karpenter.k8s.aws/instance-size, operator: In, values: ${SIZES}}
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [${capacity.join(', ')}]}${custom ? `\n        - ${custom}` : ''}
  disruption:
    consolidationPolicy: ${policy}
    consolidateAfter: ${consolidateAfter}
    budgets:
${budgets.map((b) => `      - ${b}`).join('\n')}`);
  }

  function randomBudget(): string {
    const parts = [`nodes: "${pick(BUDGET_NODES)}"`];
    if (chance(0.3)) {
      const reasons = REASONS.filter(() => chance(0.5));
      parts.push(`reasons: [${(reasons.length ? reasons : [pick(REASONS)]).join(', ')}]`);
    }
    if (chance(0.45)) {
      const r = rnd();
      // "61 * * * *" has the CRD's shape but does not evaluate: the budget allows nothing (fail closed).
      const schedule = r < 0.05 ? '61 * * * *' : r < 0.2 ? '@daily' : r < 0.35 ? '@hourly' : `${int(0, 59)} ${int(0, 23)} * * *`;
      const duration = schedule === '@hourly' ? pick(['10m', '30m', '45m', '1h30m']) : pick(BUDGET_DURATIONS);
      parts.push(`schedule: "${schedule}"`, `duration: ${duration}`);
    }
    return `{${parts.join(', ')}}`;
  }

  // Deployments, PDBs, pod-level do-not-disrupt.
  const events: { minute: number; text: string }[] = [];
  const scaleEvents: { deployment: string; atMs: number }[] = [];
  const doNotDisruptDeployments: string[] = [];
  const deployments = int(1, 4);
  for (let d = 0; d < deployments; d++) {
    const name = `app-${d}`;
    const pool = int(0, pools - 1);
    const replicas = int(1, 20);
    const annotations: string[] = [];
    const r = rnd();
    if (r < 0.2) {
      annotations.push('karpenter.sh/do-not-disrupt: "true"');
      doNotDisruptDeployments.push(name);
    } else if (r < 0.3) annotations.push(`karpenter.sh/do-not-disrupt: ${pick(['10m', '30m', '2h'])}`);
    const spread = chance(0.15)
      ? `\n      topologySpreadConstraints: [{maxSkew: ${int(1, 2)}, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ${pick(['DoNotSchedule', 'ScheduleAnyway'])}, labelSelector: {matchLabels: {app: ${name}}}}]`
      : '';
    const cpu = pick(CPU);
    const memory = pick(MEMORY);
    // Tolerating every taint, with neither PDB nor do-not-disrupt: such pods go with their node (core `IsDrainable`).
    const toleratesAll = extraChance(0.15) && annotations.length === 0;
    docs.push(`apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}${annotations.length ? `, annotations: {${annotations.join(', ')}}` : ''}}
    spec:
      nodeSelector: {pool: p${pool}}${spread}${toleratesAll ? '\n      tolerations: [{operator: Exists}]' : ''}
      containers: [{name: c, image: x, resources: {requests: {cpu: "${cpu}", memory: ${memory}}}}]`);
    let pdb = '';
    if (chance(0.55) && !toleratesAll) {
      const k = rnd();
      pdb =
        k < 0.1
          ? pick(['minAvailable: "100%"', 'maxUnavailable: 0', `minAvailable: ${replicas}`]) // can never allow an eviction (at this scale)
          : k < 0.35
            ? `minAvailable: ${int(1, Math.max(1, replicas - 1))}`
            : k < 0.55
              ? `minAvailable: "${pick(['25%', '50%', '66%', '80%'])}"`
              : k < 0.8
                ? `maxUnavailable: ${int(1, 3)}`
                : `maxUnavailable: "${pick(['10%', '25%', '50%'])}"`;
      docs.push(`apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: ${name}, namespace: default}
spec:
  ${pdb}
  selector: {matchLabels: {app: ${name}}}`);
    }
    summary.push(`${name}: ${replicas}×${cpu}/${memory} on p${pool}${annotations.length ? ` [${annotations.join(', ')}]` : ''}${spread ? ' [spread]' : ''}${toleratesAll ? ' [tolerates all]' : ''}${pdb ? ` PDB ${pdb}` : ''}`);
    // Scale up and down through the day(s).
    for (let k = int(1, 4) * days; k > 0; k--) {
      const minute = int(10, totalMinutes - 10);
      events.push({ minute, text: `scale: {kind: Deployment, namespace: default, name: ${name}, replicas: ${chance(0.15) ? 0 : int(1, 20)}}` });
      scaleEvents.push({ deployment: name, atMs: startMs + minute * MINUTE });
    }
  }

  // Drift: a changed EC2NodeClass.
  let revision = 0;
  for (let day = 0; day < days; day++) {
    if (chance(0.35)) events.push({ minute: squeeze(day * 1440 + int(30, 1400)), text: `apply: ${JSON.stringify(nodeClassObject(++revision))}` });
  }

  // Node-level do-not-disrupt, taints, node conditions.
  const nodeAnnotations: NodeAnnotation[] = [];
  const involuntaryEvictionWindows: [number, number][] = [];
  for (let day = 0; day < days; day++) {
    const base = day * 1440;
    if (chance(0.3)) {
      const pool = `pool-${int(0, pools - 1)}`;
      const fromDrawn = base + int(20, 1200);
      const from = squeeze(fromDrawn);
      events.push({ minute: from, text: `annotate: {kind: Node, nodeSelector: {karpenter.sh/nodepool: ${pool}}, annotations: {karpenter.sh/do-not-disrupt: "true"}}` });
      nodeAnnotations.push({ atMs: startMs + from * MINUTE, nodePool: pool, value: 'true' });
      if (chance(0.6)) {
        const to = hours === undefined ? Math.min(totalMinutes - 1, from + int(30, 240)) : Math.max(from + 1, squeeze(fromDrawn + int(30, 240)));
        events.push({ minute: to, text: `annotate: {kind: Node, nodeSelector: {karpenter.sh/nodepool: ${pool}}, annotations: {karpenter.sh/do-not-disrupt: "false"}}` });
        nodeAnnotations.push({ atMs: startMs + to * MINUTE, nodePool: pool, value: 'false' });
      }
    }
    if (chance(0.15)) {
      // Pods of one Deployment annotated do-not-disrupt while running (the observer checks these).
      events.push({ minute: squeeze(base + int(20, 1400)), text: `annotate: {kind: Pod, selector: {app: app-${int(0, deployments - 1)}}, count: ${int(1, 3)}, annotations: {karpenter.sh/do-not-disrupt: "true"}}` });
    }
    if (chance(0.25)) {
      const noExecute = chance(0.3);
      const minute = squeeze(base + int(20, 1400));
      events.push({ minute, text: `taint: {nodeSelector: {pool: p${int(0, pools - 1)}}, count: 1, taints: [{key: example.com/maintenance, value: "true", effect: ${noExecute ? 'NoExecute' : 'NoSchedule'}}]}` });
      if (noExecute) involuntaryEvictionWindows.push([startMs + minute * MINUTE, startMs + minute * MINUTE]);
    }
    if (chance(0.2)) {
      const minuteDrawn = base + int(20, 1300);
      const minute = squeeze(minuteDrawn);
      const back = hours === undefined ? minute + int(2, 60) : Math.max(minute + 1, squeeze(minuteDrawn + int(2, 60)));
      const pool = int(0, pools - 1);
      events.push({ minute, text: `nodeCondition: {nodeSelector: {pool: p${pool}}, count: 1, ready: false}` });
      // The oldest NotReady node of the pool: the one made NotReady (unless it is gone), not one still registering.
      if (back < totalMinutes) events.push({ minute: back, text: `nodeCondition: {nodeSelector: {pool: p${pool}}, count: 1, ready: true}` });
      // Taint-based eviction happens 5 minutes after NotReady, if the node is still NotReady.
      involuntaryEvictionWindows.push([startMs + minute * MINUTE + NOT_READY_EVICTION_MS, startMs + Math.max(back, minute + 6) * MINUTE + NOT_READY_EVICTION_MS]);
    }
  }
  if (options.hostile) {
    for (const minute of hostileEvents(seed, totalMinutes, pools, events, summary, hours !== undefined)) {
      // A spot interruption reclaims the instance 2 minutes after its warning, whatever disruption is under way (Karpenter's
      // do-not-disrupt does not hold off an interruption); its Node stops reporting and the cluster evicts its pods 5
      // minutes later (taint-based eviction): involuntary, until 10 minutes after the warning.
      involuntaryEvictionWindows.push([startMs + minute * MINUTE, startMs + (minute + 10) * MINUTE]);
    }
  }
  events.sort((a, b) => a.minute - b.minute);
  summary.push(`events: ${events.length} (${revision} drift)`);

  const spotToSpot = chance(0.3);
  docs.push(`apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: disruption-${seed}}
spec:
  start: "${new Date(startMs).toISOString()}"
  duration: ${hours !== undefined ? `${totalMinutes}m` : `${days * 24}h`}
  region: us-west-2${spotToSpot ? '\n  settings: {featureGates: {SpotToSpotConsolidation: true}}' : ''}${options.hostile ? `\n  faults: ${JSON.stringify(options.hostile)}` : ''}${events.length ? `\n  events:\n${events.map((e) => `    - {at: ${at(e.minute)}, ${e.text}}`).join('\n')}` : ''}`);

  const dir = options.dir ?? mkdtempSync(join(tmpdir(), `skiff-disruption-${seed}-`));
  const file = join(dir, 'scenario.yaml');
  const yaml = `# skiff disruption property scenario, seed ${seed}, ${hours !== undefined ? `${hours} hour(s)` : `${days} day(s)`}\n${docs.join('\n---\n')}\n`;
  writeFileSync(file, yaml);
  return {
    seed,
    dir,
    file,
    yaml,
    startMs,
    days,
    ...(hours !== undefined ? { hours } : {}),
    doNotDisruptDeployments,
    nodeAnnotations,
    terminationGraceSeconds,
    involuntaryEvictionWindows,
    scaleEvents,
    summary: summary.join('\n'),
  };
}

/** The EC2NodeClass at a revision, as an object for an `apply` event (revision > 0 adds a tag: drift). */
function nodeClassObject(revision: number): unknown {
  return {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: 'default' },
    spec: {
      amiSelectorTerms: [{ alias: 'al2023@latest' }],
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'c' } }],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'c' } }],
      role: 'NodeRole',
      tags: { revision: String(revision) },
    },
  };
}

/** `5m`, `1h`, `2h` → seconds (the generator's own durations only). */
function durationSeconds(d: string): number {
  const m = /^(\d+)([smh])$/.exec(d);
  if (!m) throw new RangeError(`unexpected duration ${d}`);
  return Number(m[1]) * { s: 1, m: 60, h: 3600 }[m[2] as 's' | 'm' | 'h'];
}

/** Offerings the hostile day makes EC2 refuse for a while: the types small pools pick most, in every zone. */
const ICE_TYPES = ['m5.large', 'c5.large', 'm5.xlarge', 'c5.xlarge', 'r5.large', 'm6i.large', 'c6i.large', 'm6g.large', 'c6g.large', 'm7g.large'];
const ZONES = ['us-west-2a', 'us-west-2b', 'us-west-2c', 'us-west-2d'];

/**
 * The hostile day's extra timeline (issue 21): every 2–4 hours an ICE window of 10–60 minutes on a common offering
 * (spot or on-demand, one zone or all), and every 1–3 hours a spot interruption of a node of a random NodePool (a
 * target that is not spot, or does not exist, is skipped by the scenario as EC2 would never send it). A short run
 * (`short`) gets its first ICE window and its first spot interruption (of any spot node) in its first half, then one
 * every 1–2 hours and every 45–90 minutes.
 * @returns the minutes of the spot interruptions
 */
function hostileEvents(seed: number, totalMinutes: number, pools: number, events: { minute: number; text: string }[], summary: string[], short = false): number[] {
  const rnd = mulberry32(seed ^ 0x0bad_f00d);
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  let ice = 0;
  const half = Math.max(11, Math.floor(totalMinutes / 2));
  for (let m = short ? int(10, half) : int(20, 180); m < totalMinutes - 10; m += short ? int(60, 120) : int(120, 240)) {
    const type = pick(ICE_TYPES);
    const capacity = pick(['spot', 'on-demand']);
    for (const zone of rnd() < 0.3 ? ZONES : [pick(ZONES)]) {
      events.push({ minute: m, text: `insufficientCapacity: {instanceType: ${type}, zone: ${zone}, capacityType: ${capacity}, for: ${int(10, 60)}m}` });
      ice++;
    }
  }
  const interruptions: number[] = [];
  for (let m = short ? int(15, half) : int(30, 120); m < totalMinutes - 10; m += short ? int(45, 90) : int(60, 180)) {
    const pool = int(0, pools - 1);
    events.push({ minute: m, text: `spotInterruption: {nodeSelector: {karpenter.sh/capacity-type: spot${short ? '' : `, pool: p${pool}`}}, count: 1}` });
    interruptions.push(m);
  }
  summary.push(`hostile: ${ice} ICE windows, ${interruptions.length} spot interruptions`);
  return interruptions;
}
