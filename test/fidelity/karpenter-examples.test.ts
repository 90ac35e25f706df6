import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { simulateScenario } from '../../shared/cli/simulate.js';
import { loadCatalog } from '../../shared/core/instancetypes/catalog.js';
import type { SimulationResult } from '../../shared/sim/result.js';

// Issue 19's "Done when": every file of Karpenter's `examples/v1` (aws/karpenter-provider-aws v1.14.1, copied unchanged
// into test/fixtures/karpenter-examples/) loads, and a small workload on each launches only instance types that satisfy
// the NodePool as Karpenter reads it, with no Drifted disruption in two simulated hours (nothing in the spec changes).
//
// "As Karpenter reads it" is checked here independently of Skiff's requirements algebra, from the catalogue's facts:
// a label the instance type does not have satisfies only NotIn and DoesNotExist (aws `computeRequirements` gives the
// type `DoesNotExist` for it), and `kubernetes.io/os` comes from the EC2NodeClass's AMI family.

const EXAMPLES = join(__dirname, '../fixtures/karpenter-examples/v1');

interface Requirement {
  readonly key: string;
  readonly operator: string;
  readonly values?: readonly string[];
}

interface Pool {
  readonly name: string;
  readonly requirements: readonly Requirement[];
  readonly taints: readonly { key: string; value?: string; effect: string }[];
  readonly nodeClass: string;
}

/** NodePools and EC2NodeClass AMI aliases of one example file, read as plain YAML. */
function readExample(file: string): { pools: Pool[]; osOf: Map<string, string> } {
  const docs = parseAllDocuments(readFileSync(join(EXAMPLES, file), 'utf8')).map((d) => d.toJS() as Record<string, any> | null);
  const pools: Pool[] = [];
  const osOf = new Map<string, string>();
  for (const doc of docs) {
    if (!doc) continue;
    if (doc.kind === 'NodePool') {
      const spec = doc.spec.template.spec;
      pools.push({ name: doc.metadata.name, requirements: spec.requirements ?? [], taints: spec.taints ?? [], nodeClass: spec.nodeClassRef.name });
    }
    if (doc.kind === 'EC2NodeClass') {
      const alias: string | undefined = doc.spec.amiSelectorTerms?.find((t: { alias?: string }) => t.alias)?.alias;
      osOf.set(doc.metadata.name, alias?.startsWith('windows') ? 'windows' : 'linux');
    }
  }
  return { pools, osOf };
}

/** True when a node with `labels` satisfies `r`, by the Kubernetes node selector rules. */
function satisfies(labels: Readonly<Record<string, string>>, r: Requirement): boolean {
  const value = labels[r.key];
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Gte':
    case 'Lt':
    case 'Lte': {
      if (value === undefined || !/^-?\d+$/.test(value)) return false;
      const n = Number(value);
      const bound = Number(values[0]);
      return r.operator === 'Gt' ? n > bound : r.operator === 'Gte' ? n >= bound : r.operator === 'Lt' ? n < bound : n <= bound;
    }
    default:
      throw new Error(`unknown operator ${r.operator}`);
  }
}

/** A Deployment of `replicas` pods for `pool`: selects it by name, tolerates its taints, and asks for its OS. */
function workload(pool: Pool, os: string, replicas: number): string {
  const tolerations = pool.taints.map((t) => ({ key: t.key, operator: t.value === undefined ? 'Exists' : 'Equal', ...(t.value !== undefined ? { value: t.value } : {}), effect: t.effect }));
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: `inflate-${pool.name}`, namespace: 'default' },
    spec: {
      replicas,
      selector: { matchLabels: { app: `inflate-${pool.name}` } },
      template: {
        metadata: { labels: { app: `inflate-${pool.name}` } },
        spec: {
          nodeSelector: { 'karpenter.sh/nodepool': pool.name, 'kubernetes.io/os': os },
          tolerations,
          containers: [{ name: 'inflate', image: 'public.ecr.aws/eks-distro/kubernetes/pause:3.2', resources: { requests: { cpu: '1', memory: '256M' } } }],
        },
      },
    },
  });
}

/**
 * Upstream files Karpenter's own CRDs reject, with the fix a user makes: `windows-custom-userdata.yaml` gives
 * `nodeClassRef.group: karpenter.k8s.aws/v1`, which core `pkg/apis/v1/nodeclaim.go` (`NodeClassReference.Group`,
 * pattern `^[^/]*$`) refuses, so `kubectl apply` fails on it as Skiff's load does.
 */
const INVALID_UPSTREAM: Readonly<Record<string, { readonly error: RegExp; readonly fix: (yaml: string) => string }>> = {
  'windows-custom-userdata.yaml': {
    error: /windows-custom-userdata\.yaml:\d+:\d+: spec\.template\.spec\.nodeClassRef\.group: .*karpenter\.k8s\.aws\/v1/,
    fix: (yaml) => yaml.replace('group: karpenter.k8s.aws/v1', 'group: karpenter.k8s.aws'),
  },
};

async function simulateExample(file: string): Promise<{ result: SimulationResult; pools: Pool[]; osOf: Map<string, string> }> {
  const { pools, osOf } = readExample(file);
  const dir = mkdtempSync(join(tmpdir(), 'skiff-karpenter-example-'));
  const yaml = readFileSync(join(EXAMPLES, file), 'utf8');
  writeFileSync(join(dir, file), INVALID_UPSTREAM[file]?.fix(yaml) ?? yaml);
  const scenario = ['apiVersion: skiff.dev/v1alpha1', 'kind: Scenario', 'metadata: {name: example}', 'spec: {start: "2026-03-02T08:00:00Z", duration: 2h, region: us-west-2}'].join('\n');
  const workloads = pools.map((p) => workload(p, osOf.get(p.nodeClass) ?? 'linux', 5));
  writeFileSync(join(dir, 'workload.yaml'), [scenario, ...workloads].join('\n---\n'));
  const { result } = await simulateScenario(dir, { seed: 1 });
  return { result, pools, osOf };
}

describe("Karpenter's examples/v1", () => {
  const catalog = new Map(loadCatalog().map((t) => [t.name, t]));
  const files = readdirSync(EXAMPLES).filter((f) => f.endsWith('.yaml')).sort();

  it('holds every file of the upstream folder', () => {
    expect(files.length).toBeGreaterThanOrEqual(22);
    expect(files).toContain('windows-2022.yaml');
  });

  for (const [file, { error }] of Object.entries(INVALID_UPSTREAM)) {
    it(`${file}: is refused by simulate and validate alike, naming the file, line and field, as Karpenter's CRD refuses it`, async () => {
      await expect(simulateScenario(join(EXAMPLES, file))).rejects.toThrow(error);
      const validate = spawnSync('npx', ['tsx', 'shared/cli/skiff.ts', 'validate', join(EXAMPLES, file)], { encoding: 'utf8' });
      expect(validate.status).toBe(1); // validate's "invalid" status (2 is a usage error)
      expect(validate.stdout + validate.stderr).toMatch(error);
    }, 60_000);
  }

  for (const file of files) {
    it(`${file}: places a small workload on instance types the NodePool allows, with no drift`, async () => {
      const { result, pools, osOf } = await simulateExample(file);
      expect(result.unschedulable).toEqual([]);
      const launched = result.nodeClaims.filter((c) => c.instanceType !== null);
      expect(launched.length).toBeGreaterThan(0);
      for (const claim of launched) {
        const pool = pools.find((p) => p.name === claim.nodePool)!;
        const info = catalog.get(claim.instanceType!)!;
        const labels: Record<string, string> = {
          ...info.labels,
          'kubernetes.io/os': osOf.get(pool.nodeClass) ?? 'linux',
          'karpenter.sh/capacity-type': claim.capacityType!,
          'topology.kubernetes.io/zone': claim.zone!,
          'karpenter.sh/nodepool': pool.name,
        };
        const broken = pool.requirements.filter((r) => !satisfies(labels, r));
        expect(broken, `${claim.name} (${claim.instanceType}) breaks ${JSON.stringify(broken)}`).toEqual([]);
        expect(claim.labels['kubernetes.io/os']).toBe(labels['kubernetes.io/os']);
      }
      expect(result.disruptions.filter((d) => d.reason === 'Drifted')).toEqual([]);
      expect(Object.values(result.violations).every((n) => n === 0), JSON.stringify(result.violations)).toBe(true);
    }, 120_000);
  }
});
