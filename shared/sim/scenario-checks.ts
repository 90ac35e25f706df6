/**
 * The checks a scenario gets across its objects, once each object has parsed (docs/contracts.md#scenario): duplicate
 * names, a NodePool's EC2NodeClass, a starting node's NodePool, a pod's node, a scale target, the replica caps, an
 * EC2NodeClass's zones against the region; and the warnings that do not stop a run (a PodDisruptionBudget that can
 * never allow an eviction). `scenario-loader.ts` reads a scenario and runs them, for `simulate` and `skiff validate`
 * alike.
 */
import type { ValidationIssue } from '../core/errors.js';
import { nearestOption } from '../core/api/field-issues.js';
import { NAMESPACED_KINDS, documentPath, type Manifest, type ManifestDocument } from '../core/api/manifest.js';
import { labelSelectorMatches } from '../core/api/object-meta.js';
import type { PodSpec } from '../core/api/pod.js';
import { scaledValue } from '../core/api/pdb.js';
import { budgetScheduleProblem } from '../core/disruption/budgets.js';
import { LABEL_INSTANCE_TYPE, LABEL_REGION, LABEL_ZONE, WELL_KNOWN_LABELS, normalizedLabelKey } from '../core/api/labels.js';
import { loadCatalog } from '../core/instancetypes/catalog.js';
import { closedValues, closestNearMiss, nearValue } from '../core/provisioning/hints.js';
import { MAX_SCALE_REPLICAS, type ScenarioSpec } from './scenario.js';
import { zonesOf } from './simulated-ec2.js';

/** A manifest and the document (plus path prefix inside it) it was read from, for locating cross-object issues. */
export interface Located {
  readonly manifest: Manifest;
  readonly doc: ManifestDocument;
  readonly prefix: readonly PropertyKey[];
  /** For manifests applied by an event: its time (seconds); initial objects have -Infinity. */
  readonly at: number;
}

/**
 * An issue at `path` (relative to the located object).
 * @param where the object, or a document and the path prefix inside it
 * @param path the field path below the prefix
 * @param message what is wrong
 */
export function issueAt(where: Located | { doc: ManifestDocument; prefix: readonly PropertyKey[] }, path: readonly PropertyKey[], message: string): ValidationIssue {
  const full = [...where.prefix, ...path];
  const { line, column } = where.doc.locate(full);
  return { file: where.doc.file, line, column, path: documentPath(where.doc, full), message };
}

/** `kind namespace/name` identity used for duplicate detection. */
function identity(m: Manifest): string {
  const meta = m.object.metadata;
  return NAMESPACED_KINDS.has(m.kind) ? `${m.kind} ${meta.namespace ?? 'default'}/${meta.name}` : `${m.kind} ${meta.name}`;
}

/** Options of {@link crossCheck}. */
export interface CrossCheckOptions {
  /**
   * Whether the objects must be complete: a NodePool's EC2NodeClass and a bound Pod's node must be among them.
   * `simulate` requires it; `validate` does for a set with an EC2NodeClass or a Scenario document (a folder of
   * NodePools alone may name EC2NodeClasses that are already in the cluster). @default true
   */
  readonly references?: boolean;
  /**
   * `Kind/name` of the documents that did not parse: a reference to one of them is not reported as missing (its own
   * issues say what is wrong with it). @default none
   */
  readonly invalid?: ReadonlySet<string>;
  /** Names of nodes declared outside the Scenario document (a snapshot's Nodes): a pod may be bound to one. @default none */
  readonly nodeNames?: ReadonlySet<string>;
}

/**
 * `Kind/name` of a document that did not parse, when its raw value says (for {@link CrossCheckOptions.invalid}).
 * @param value the document's raw YAML value
 */
export function invalidObjectKey(value: unknown): string | undefined {
  const o = value as { kind?: unknown; metadata?: { name?: unknown } } | null;
  return typeof o?.kind === 'string' && typeof o.metadata?.name === 'string' ? `${o.kind}/${o.metadata.name}` : undefined;
}

/**
 * Every check `simulate` applies across objects, over the initial objects and the manifests applied by Scenario
 * events: duplicate names; a NodePool's `nodeClassRef` group (`karpenter.k8s.aws`), kind (`EC2NodeClass`) and name
 * (an EC2NodeClass of the set, present when the NodePool is); the Scenario's nodes, scale events and bound pods.
 * `skiff validate` runs the same function over the files it is given.
 * @param located every manifest with where it was read (events' manifests with their time)
 * @param spec the Scenario's spec (or the default one)
 * @param scenarioDoc the Scenario document, when there is one
 * @returns the issues, with file, line and field path; empty when all is well
 */
export function crossCheck(located: readonly Located[], spec: ScenarioSpec, scenarioDoc: ManifestDocument | undefined, options: CrossCheckOptions = {}): ValidationIssue[] {
  const references = options.references ?? true;
  const issues: ValidationIssue[] = [];
  const initial = located.filter((l) => l.at === -Infinity);

  // Duplicate names among the initial objects (an applied manifest replaces, as kubectl apply does).
  const seen = new Map<string, Located>();
  for (const l of initial) {
    const id = identity(l.manifest);
    const first = seen.get(id);
    if (first) issues.push(issueAt(l, ['metadata', 'name'], `duplicate ${id} (first defined at ${first.manifest.source.file}:${first.manifest.source.line})`));
    else seen.set(id, l);
  }

  /** `; did you mean "x"?` for the nearest name of an object of `kind`/`namespace` there by `at`, or nothing. */
  const didYouMean = (kind: Manifest['kind'], namespace: string | undefined, name: string, at: number) => {
    const names = located.filter((l) => l.manifest.kind === kind && l.at <= at && (namespace === undefined || (l.manifest.object.metadata.namespace ?? 'default') === namespace)).map((l) => l.manifest.object.metadata.name);
    const meant = nearestOption(name, names);
    return meant === undefined ? '' : `; did you mean ${JSON.stringify(meant)}?`;
  };
  /** True when an object of `kind`/`namespace`/`name` exists initially or is applied at or before `at`. */
  const exists = (kind: Manifest['kind'], namespace: string | undefined, name: string, at: number) =>
    located.some(
      (l) => l.manifest.kind === kind && l.at <= at && l.manifest.object.metadata.name === name && (namespace === undefined || (l.manifest.object.metadata.namespace ?? 'default') === namespace),
    );

  // Every replica-like count, in the initial objects and in applied manifests: the simulation runs each pod through
  // the real handlers, so `replicas: 1000000000` would run for days and take gigabytes (MAX_SCALE_REPLICAS).
  for (const l of located) {
    for (const [field, value] of replicaCounts(l.manifest)) {
      if (value > MAX_SCALE_REPLICAS) {
        issues.push(issueAt(l, ['spec', field], `${field} ${value} is more than the simulation runs: at most ${MAX_SCALE_REPLICAS} pods per workload (every pod goes through the real handlers)`));
      }
    }
  }

  // An EC2NodeClass's subnets decide where its types are offered (`ec2NodeClassSubnetZones`): each zone must be one
  // of the run's region, as a Node's zone must (`snapshot.ts`), or nodes would launch in another region's zones.
  const regionZones = zonesOf(spec.region);
  for (const l of located) {
    if (l.manifest.kind !== 'EC2NodeClass') continue;
    for (const [i, subnet] of (l.manifest.object.status?.subnets ?? []).entries()) {
      if (!regionZones.includes(subnet.zone)) {
        issues.push(issueAt(l, ['status', 'subnets', i, 'zone'], `zone ${JSON.stringify(subnet.zone)} is not in region ${spec.region} (its zones: ${regionZones.join(', ')}); set the region with --region or spec.region`));
      }
    }
  }

  for (const l of located) {
    if (l.manifest.kind !== 'NodePool') continue;
    const ref = l.manifest.object.spec.template.spec.nodeClassRef;
    const refPath = ['spec', 'template', 'spec', 'nodeClassRef'];
    if (ref.group !== 'karpenter.k8s.aws') issues.push(issueAt(l, [...refPath, 'group'], `nodeClassRef.group must be karpenter.k8s.aws (Skiff launches through EC2NodeClass), got ${ref.group}`));
    else if (ref.kind !== 'EC2NodeClass') issues.push(issueAt(l, [...refPath, 'kind'], `nodeClassRef.kind must be EC2NodeClass, got ${ref.kind}`));
    else if (references && !exists('EC2NodeClass', undefined, ref.name, l.at) && !options.invalid?.has(`EC2NodeClass/${ref.name}`)) {
      issues.push(issueAt(l, [...refPath, 'name'], `NodePool ${l.manifest.object.metadata.name} references EC2NodeClass ${JSON.stringify(ref.name)}, which is not in the scenario${didYouMean('EC2NodeClass', undefined, ref.name, l.at)}`));
    }
  }

  if (scenarioDoc) {
    const where = { doc: scenarioDoc, prefix: ['spec'] };
    const nodeNames = new Set([...spec.nodes.map((n) => n.name), ...(options.nodeNames ?? [])]);
    spec.nodes.forEach((n, i) => {
      if (n.nodePool !== undefined && !exists('NodePool', undefined, n.nodePool, -Infinity) && !options.invalid?.has(`NodePool/${n.nodePool}`)) {
        issues.push(issueAt(where, ['nodes', i, 'nodePool'], `node ${n.name} names NodePool ${JSON.stringify(n.nodePool)}, which is not in the scenario${didYouMean('NodePool', undefined, n.nodePool, -Infinity)}`));
      }
    });
    for (const e of spec.events) {
      // A workload whose own document failed to load has its own issue: not a second one here.
      if (e.type === 'scale' && !exists(e.scale.kind, e.scale.namespace, e.scale.name, e.atSeconds) && !options.invalid?.has(`${e.scale.kind}/${e.scale.name}`)) {
        issues.push(issueAt(where, ['events', e.index, 'scale', 'name'], `no ${e.scale.kind} ${e.scale.namespace}/${e.scale.name} exists at that time${didYouMean(e.scale.kind, e.scale.namespace, e.scale.name, e.atSeconds)}`));
      }
    }
    for (const l of initial) {
      if (l.manifest.kind === 'Pod' && l.manifest.object.spec.nodeName !== undefined && !nodeNames.has(l.manifest.object.spec.nodeName)) {
        const meant = nearestOption(l.manifest.object.spec.nodeName, [...nodeNames]);
        issues.push(issueAt(l, ['spec', 'nodeName'], `node ${JSON.stringify(l.manifest.object.spec.nodeName)} is not among the scenario's spec.nodes${meant === undefined ? '' : `; did you mean ${JSON.stringify(meant)}?`}`));
      }
    }
  } else if (references) {
    for (const l of initial) {
      if (l.manifest.kind === 'Pod' && l.manifest.object.spec.nodeName !== undefined && !options.nodeNames?.has(l.manifest.object.spec.nodeName)) {
        issues.push(issueAt(l, ['spec', 'nodeName'], `node ${JSON.stringify(l.manifest.object.spec.nodeName)} does not exist: declare it under spec.nodes of a Scenario document, or add the Node (kubectl get nodes -o yaml)`));
      }
    }
  }
  return issues;
}

/** The replica-like counts of a manifest, by field of its `spec`: Deployment/StatefulSet `replicas`, Job `parallelism` and `completions`. */
function replicaCounts(m: Manifest): [string, number][] {
  switch (m.kind) {
    case 'Deployment':
    case 'StatefulSet':
      return [['replicas', m.object.spec.replicas]];
    case 'Job':
      return [
        ['parallelism', m.object.spec.parallelism],
        ...(m.object.spec.completions !== undefined ? [['completions', m.object.spec.completions] as [string, number]] : []),
      ];
    default:
      return [];
  }
}

/**
 * Valid input that is most likely a mistake, as warnings: budget schedules that cannot be evaluated, NodePool
 * requirements that narrow less or more than they seem to, requests missing their suffix, PodDisruptionBudgets that can
 * never allow an eviction (of the initial objects).
 * @param located the scenario's objects, initial and applied by events
 * @param region the region the run uses, when the input makes a run (a Scenario document or a snapshot's Nodes); zones
 *   are checked against it
 */
export function scenarioWarnings(located: readonly Located[], region?: string): ValidationIssue[] {
  return [...budgetScheduleWarnings(located), ...requirementValueWarnings(located, region), ...requestWarnings(located), ...pdbWarnings(located.filter((l) => l.at === -Infinity))];
}

/**
 * Warnings for NodePool disruption budgets whose schedule has the shape the schema accepts but does not evaluate
 * (`"0 25 * * *"`): Karpenter accepts such a NodePool and the budget then allows no disruption at any time
 * (`budgetScheduleProblem`), which nothing else in a run would say.
 * @param located every NodePool of the scenario, initial or applied by an event
 * @returns one warning per such budget, at its `schedule`
 */
export function budgetScheduleWarnings(located: readonly Located[]): ValidationIssue[] {
  const warnings: ValidationIssue[] = [];
  for (const l of located) {
    if (l.manifest.kind !== 'NodePool') continue;
    const pool = l.manifest.object;
    pool.spec.disruption.budgets.forEach((b, i) => {
      const problem = b.schedule === undefined ? undefined : budgetScheduleProblem(b.schedule);
      if (problem === undefined) return;
      warnings.push(
        issueAt(
          l,
          ['spec', 'disruption', 'budgets', i, 'schedule'],
          `NodePool ${pool.metadata.name}: budget schedule ${JSON.stringify(b.schedule)} does not evaluate (${problem}); Karpenter accepts it (its schema checks the shape only), and the budget then allows no disruption${b.reasons?.length ? ` for ${b.reasons.join(', ')}` : ''} at any time`,
        ),
      );
    });
  }
  return warnings;
}

/**
 * Warnings for NodePool requirements that quietly narrow less or more than they seem to, with the key or value most
 * likely meant ({@link closestNearMiss}, {@link nearValue}). Karpenter accepts all of these:
 * - a key one typo from a well-known label (`node.kubernetes.io/instance-typ`): read as a custom label, it narrows no
 *   instance type and only labels the nodes;
 * - an `In` value no instance type can have, so the NodePool quietly launches only with the others (`capacity-type In
 *   [spot, ondemand]` never falls back to on-demand), or nothing: a capacity type, architecture or OS outside its closed
 *   set (`ondemand`, `x86_64`), an instance type Skiff's catalogue lacks (`m5.larg`), a value of an instance label no
 *   type in the catalogue has (`instance-family m7`), and, when the run's region is known, a zone or region outside it.
 * @param located every NodePool of the scenario, initial or applied by an event
 * @param region the region the run uses (zones are checked against it); omitted, zones are not checked
 * @returns one warning per such key or value, at it
 */
export function requirementValueWarnings(located: readonly Located[], region?: string): ValidationIssue[] {
  const warnings: ValidationIssue[] = [];
  for (const l of located) {
    if (l.manifest.kind !== 'NodePool') continue;
    const pool = l.manifest.object;
    pool.spec.template.spec.requirements.forEach((r, i) => {
      const at = ['spec', 'template', 'spec', 'requirements', i];
      // A deprecated beta key stands for its v1 label (Karpenter NormalizedLabels).
      const key = normalizedLabelKey(r.key);
      if (!WELL_KNOWN_LABELS.has(key)) {
        const meant = closestNearMiss(r.key, WELL_KNOWN_LABELS);
        if (meant) warnings.push(issueAt(l, [...at, 'key'], `NodePool ${pool.metadata.name}: ${r.key} is not a label Karpenter or EC2 sets; did you mean ${meant}? Karpenter reads it as a custom label: it narrows no instance type, and the NodePool's nodes get it as a label`));
        return;
      }
      if (r.operator !== 'In') return;
      const domain = valueDomain(key, region);
      if (!domain) return;
      const values = r.values ?? [];
      const kept = values.filter((v) => domain.values.has(v));
      values.forEach((v, j) => {
        if (domain.values.has(v)) return;
        // A zone of another region is no typo for one of this region's.
        // A zone or region of another region is no typo for this one's.
        const near = (key === LABEL_ZONE && /^[a-z]{2}(-[a-z]+)+-\d[a-z]$/.test(v)) || (key === LABEL_REGION && /^[a-z]{2}(-[a-z]+)+-\d$/.test(v)) ? undefined : nearValue(key, v, domain.values);
        const outcome =
          kept.length === 0
            ? 'no instance type matches the requirement, so the NodePool launches nothing'
            : r.minValues !== undefined && kept.length < r.minValues
              ? `only ${kept.join(', ')} ${kept.length === 1 ? 'is' : 'are'} left, fewer than its minValues ${r.minValues}, so the NodePool launches nothing`
              : `the NodePool launches only with ${kept.join(', ')}`;
        warnings.push(issueAt(l, [...at, 'values', j], `NodePool ${pool.metadata.name}: ${r.key} ${JSON.stringify(v)} ${domain.what}${near ? `; did you mean ${JSON.stringify(near)}?` : ';'} Karpenter accepts it and matches nothing with it: ${outcome}`));
      });
    });
  }
  return warnings;
}

/** The values a well-known label can take on a node of the run, and how to say a value is not one; undefined when open. */
function valueDomain(key: string, region: string | undefined): { readonly values: ReadonlySet<string>; readonly what: string } | undefined {
  const closed = closedValues(key);
  if (closed) return { values: closed, what: `is not one of its values (${[...closed].join(', ')})` };
  if (key === LABEL_REGION) return region === undefined ? undefined : { values: new Set([region]), what: `is not the run's region ${region}` };
  if (key === LABEL_ZONE) {
    if (region === undefined) return undefined;
    const zones = zonesOf(region);
    return { values: new Set(zones), what: `is not a zone of the run's region ${region} (${zones.join(', ')})` };
  }
  // Every catalogue type carries its own name as node.kubernetes.io/instance-type, so the names are among the values.
  const values = catalogLabelValues().get(key);
  if (!values) return undefined;
  return { values, what: key === LABEL_INSTANCE_TYPE ? "is not an instance type in Skiff's EC2 catalogue" : "is a value no instance type in Skiff's EC2 catalogue has" };
}

/** Each label the catalogue's instance types carry → the values they have (memoized: the catalogue does not change). */
function catalogLabelValues(): ReadonlyMap<string, ReadonlySet<string>> {
  if (!labelValuesMemo) {
    const byKey = new Map<string, Set<string>>();
    for (const t of loadCatalog()) for (const [k, v] of Object.entries(t.labels)) (byKey.get(k) ?? byKey.set(k, new Set()).get(k)!).add(v);
    labelValuesMemo = byKey;
  }
  return labelValuesMemo;
}
let labelValuesMemo: ReadonlyMap<string, ReadonlySet<string>> | undefined;

/** A bare cpu count from this many cores up reads as a missing `m` (millicores): only the largest EC2 types hold it. */
const SUSPECT_CPU_CORES = 100;
/** A bare memory count below this many bytes (1 MiB) reads as a missing `Mi`: no container runs in it. */
const SUSPECT_MEMORY_BYTES = 2 ** 20;

/**
 * Warnings for container requests that are valid quantities but most likely miss their suffix: a bare `cpu: 500` is
 * 500 cores (Skiff, like Karpenter, would launch an instance of 500 vCPUs or more for it), a bare `memory: 512` is 512
 * bytes. Pods and the pod templates of workloads, initial or applied by an event.
 * @returns one warning per such request, at it
 */
export function requestWarnings(located: readonly Located[]): ValidationIssue[] {
  const warnings: ValidationIssue[] = [];
  for (const l of located) {
    const m = l.manifest;
    const at: { spec: PodSpec; path: PropertyKey[] } | undefined =
      m.kind === 'Pod' ? { spec: m.object.spec, path: ['spec'] } : m.kind === 'Deployment' || m.kind === 'StatefulSet' || m.kind === 'Job' || m.kind === 'DaemonSet' ? { spec: m.object.spec.template.spec, path: ['spec', 'template', 'spec'] } : undefined;
    if (!at) continue;
    for (const field of ['initContainers', 'containers'] as const) {
      (at.spec[field] ?? []).forEach((c, i) => {
        const requests = (c.resources?.requests ?? {}) as Readonly<Record<string, string | number>>;
        const path = [...at.path, field, i, 'resources', 'requests'];
        const bare = (v: string | number | undefined) => (v !== undefined && /^\d+(\.\d+)?$/.test(String(v)) ? Number(v) : undefined);
        const cpu = bare(requests.cpu);
        if (cpu !== undefined && cpu >= SUSPECT_CPU_CORES) {
          warnings.push(issueAt(l, [...path, 'cpu'], `${m.kind} ${m.object.metadata.name}: cpu ${requests.cpu} is ${cpu} cores (a quantity without a suffix counts cores); did you mean "${requests.cpu}m" (millicores)?`));
        }
        const memory = bare(requests.memory);
        if (memory !== undefined && memory > 0 && memory < SUSPECT_MEMORY_BYTES) {
          warnings.push(issueAt(l, [...path, 'memory'], `${m.kind} ${m.object.metadata.name}: memory ${requests.memory} is ${memory} bytes (a quantity without a suffix counts bytes); did you mean "${requests.memory}Mi"?`));
        }
      });
    }
  }
  return warnings;
}

/**
 * Warnings for PodDisruptionBudgets that can never allow an eviction given the desired pods they select
 * (Deployment/StatefulSet replicas, Job parallelism, bare pods; a PDB that selects DaemonSet pods is skipped, since
 * their count depends on the nodes). Mirrors the seed article's advice: minAvailable equal to the replica count
 * stalls node rotation.
 * @param initial the scenario's initial objects (not those applied by events)
 * @returns one warning per such PodDisruptionBudget, at its `minAvailable` or `maxUnavailable`
 */
export function pdbWarnings(initial: readonly Located[]): ValidationIssue[] {
  const warnings: ValidationIssue[] = [];
  const objects = initial.map((l) => l.manifest);
  for (const l of initial) {
    if (l.manifest.kind !== 'PodDisruptionBudget') continue;
    const pdb = l.manifest.object;
    const ns = pdb.metadata.namespace;
    const selects = (namespace: string, labels: Readonly<Record<string, string>> | undefined) => namespace === ns && labelSelectorMatches(pdb.spec.selector, labels);
    let count = 0;
    let daemon = false;
    for (const m of objects) {
      switch (m.kind) {
        case 'Deployment':
        case 'StatefulSet':
          if (selects(m.object.metadata.namespace, m.object.spec.template.metadata.labels)) count += m.object.spec.replicas;
          break;
        case 'Job':
          if (selects(m.object.metadata.namespace, m.object.spec.template.metadata.labels)) count += m.object.spec.parallelism;
          break;
        case 'Pod':
          if (selects(m.object.metadata.namespace, m.object.metadata.labels)) count += 1;
          break;
        case 'DaemonSet':
          if (selects(m.object.metadata.namespace, m.object.spec.template.metadata.labels)) daemon = true;
          break;
        default:
          break;
      }
    }
    if (daemon || count === 0) continue;
    const { minAvailable, maxUnavailable } = pdb.spec;
    const allowed = minAvailable !== undefined ? count - scaledValue(minAvailable, count) : maxUnavailable !== undefined ? scaledValue(maxUnavailable, count) : count;
    if (allowed > 0) continue;
    const field = minAvailable !== undefined ? 'minAvailable' : 'maxUnavailable';
    warnings.push(
      issueAt(
        l,
        ['spec', field],
        `PodDisruptionBudget ${ns}/${pdb.metadata.name} can never allow an eviction (${field} ${String(minAvailable ?? maxUnavailable)} with ${count} pod(s) at the start): while it selects that many, nodes running these pods cannot be drained until their NodePool's terminationGracePeriod`,
      ),
    );
  }
  return warnings;
}
