// The CRDs in infra/k8s/crds/ are generated from the zod schemas (scripts/build-crds.ts). These tests keep them up to
// date, structural (as the API server requires of apiextensions.k8s.io/v1 schemas), and accepting every object Skiff
// accepts: the seed's NodePools and EC2NodeClasses, typical Karpenter v1 objects from Karpenter's docs, and the
// NodeClaim objects the mirror writes. The validator below implements the OpenAPI subset the generated schemas use.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { CRDS, CRD_DIR, REPO_ROOT, StructuralSchemaError, renderAll, toStructuralSchema, type SchemaNode } from '../../scripts/build-crds.js';
import { nodeClaimMirror } from '../../shared/adapters/kubernetes/nodeclaim-mirror.js';
import { parseManifests } from '../../shared/core/api/manifest.js';
import type { NodeClaim } from '../../shared/core/api/nodeclaim.js';

/** The generated CRD files, parsed. */
const files = new Map(CRDS.map((spec) => [spec.kind, parse(readFileSync(join(REPO_ROOT, CRD_DIR, spec.file), 'utf8')) as SchemaNode]));

/** The `openAPIV3Schema` of the CRD for `kind`. */
function schemaOf(kind: string): SchemaNode {
  const crd = files.get(kind) as { spec: { versions: { schema: { openAPIV3Schema: SchemaNode } }[] } } | undefined;
  const schema = crd?.spec.versions[0]?.schema.openAPIV3Schema;
  if (!schema) throw new Error(`no CRD for ${kind}`);
  return schema;
}

/** The type of a JSON value as OpenAPI names it. */
function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** Evaluates the one CEL form the generator writes on maps: `self.all(x, x in ['a','b'])`. */
function celKeysAllowed(rule: string, value: Record<string, unknown>): boolean | undefined {
  const m = /^self\.all\(x, x in \[(.*)\]\)$/.exec(rule);
  if (!m) return undefined;
  const allowed = new Set((m[1] ?? '').split(',').map((s) => s.trim().replace(/^'|'$/g, '')));
  return Object.keys(value).every((k) => allowed.has(k));
}

/**
 * Validates `value` against a structural schema the way the API server would for the keywords used here: type,
 * int-or-string, preserve-unknown-fields, properties (an unknown field is reported: the server would prune it),
 * required, additionalProperties, items, enum, pattern, length, bounds, item counts, and the key-set CEL rule.
 * @returns problems as `path: message`
 */
function validate(schema: SchemaNode, value: unknown, path = ''): string[] {
  const at = path || '.';
  const problems: string[] = [];
  if (value === null) return schema.nullable === true ? [] : [`${at}: null is not allowed`];
  const actual = typeOf(value);
  if (schema['x-kubernetes-int-or-string'] === true) {
    if (actual !== 'integer' && actual !== 'string') return [`${at}: expected an integer or a string, got ${actual}`];
  } else if (schema.type !== undefined) {
    const ok = schema.type === actual || (schema.type === 'number' && actual === 'integer');
    if (!ok) return [`${at}: expected ${String(schema.type)}, got ${actual}`];
  }
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) problems.push(`${at}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
  if (typeof value === 'string') {
    if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern).test(value)) problems.push(`${at}: ${JSON.stringify(value)} does not match ${schema.pattern}`);
    if (typeof schema.minLength === 'number' && value.length < schema.minLength) problems.push(`${at}: shorter than ${schema.minLength}`);
    if (typeof schema.maxLength === 'number' && value.length > schema.maxLength) problems.push(`${at}: longer than ${schema.maxLength}`);
  }
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) problems.push(`${at}: below ${schema.minimum}`);
    if (typeof schema.maximum === 'number' && value > schema.maximum) problems.push(`${at}: above ${schema.maximum}`);
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) problems.push(`${at}: fewer than ${schema.minItems} items`);
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) problems.push(`${at}: more than ${schema.maxItems} items`);
    const items = schema.items as SchemaNode | undefined;
    if (items) value.forEach((v, i) => problems.push(...validate(items, v, `${path}[${i}]`)));
  }
  if (actual === 'object') {
    const object = value as Record<string, unknown>;
    const properties = (schema.properties ?? {}) as Record<string, SchemaNode>;
    const additional = schema.additionalProperties as SchemaNode | undefined;
    for (const key of (schema.required ?? []) as string[]) if (!(key in object)) problems.push(`${path}.${key}: is required`);
    for (const [key, v] of Object.entries(object)) {
      const sub = properties[key] ?? additional;
      if (sub) problems.push(...validate(sub, v, `${path}.${key}`));
      else if (schema['x-kubernetes-preserve-unknown-fields'] !== true && path !== '.metadata' && !(path === '' && key === 'metadata')) {
        problems.push(`${path}.${key}: unknown field (the API server would prune it)`);
      }
    }
    for (const { rule, message } of (schema['x-kubernetes-validations'] ?? []) as { rule: string; message: string }[]) {
      if (celKeysAllowed(rule, object) === false) problems.push(`${at}: ${message}`);
    }
  }
  return problems;
}

/** Every schema node of `schema` with its path. */
function* nodes(schema: SchemaNode, path = ''): Generator<[string, SchemaNode]> {
  yield [path || '.', schema];
  for (const [k, v] of Object.entries((schema.properties ?? {}) as Record<string, SchemaNode>)) yield* nodes(v, `${path}.${k}`);
  if (schema.items) yield* nodes(schema.items as SchemaNode, `${path}[]`);
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object') yield* nodes(schema.additionalProperties as SchemaNode, `${path}.*`);
}

/** Every YAML document of a file as plain JS. */
function documents(text: string): unknown[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as unknown)
    .filter((d) => d !== null);
}

const SEED = join(REPO_ROOT, 'examples/seed');
const seedObjects = readdirSync(SEED)
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((f) => documents(readFileSync(join(SEED, f), 'utf8')).map((doc) => ({ file: f, doc: doc as { kind?: string; metadata?: { name?: string } } })))
  .filter(({ doc }) => doc.kind === 'NodePool' || doc.kind === 'EC2NodeClass');

/** Typical Karpenter v1 objects, written after the examples in Karpenter's docs (concepts/nodepools.md, nodeclasses.md). */
const KARPENTER_DOCS_OBJECTS = `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    metadata:
      labels:
        billing-team: my-team
      annotations:
        example.com/owner: "my-team"
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
      taints:
        - key: example.com/special-taint
          effect: NoSchedule
      startupTaints:
        - key: example.com/another-taint
          effect: NoSchedule
      expireAfter: 720h
      terminationGracePeriod: 48h
      requirements:
        - key: "karpenter.k8s.aws/instance-category"
          operator: In
          values: ["c", "m", "r"]
          minValues: 2
        - key: "karpenter.k8s.aws/instance-family"
          operator: In
          values: ["m5", "m5d", "c5", "c5d", "c4", "r4"]
          minValues: 5
        - key: "karpenter.k8s.aws/instance-cpu"
          operator: In
          values: ["4", "8", "16", "32"]
        - key: "karpenter.k8s.aws/instance-hypervisor"
          operator: In
          values: ["nitro"]
        - key: "karpenter.k8s.aws/instance-generation"
          operator: Gt
          values: ["2"]
        - key: "topology.kubernetes.io/zone"
          operator: In
          values: ["us-west-2a", "us-west-2b"]
        - key: "kubernetes.io/arch"
          operator: In
          values: ["arm64", "amd64"]
        - key: "karpenter.sh/capacity-type"
          operator: In
          values: ["spot", "on-demand"]
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 1m
    budgets:
      - nodes: 10%
      - schedule: "0 9 * * mon-fri"
        duration: 8h
        nodes: "0"
      - nodes: "5"
        reasons: ["Drifted", "Underutilized"]
  limits:
    cpu: "1000"
    memory: 1000Gi
  weight: 10
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: when-empty
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: bottlerocket}
      requirements:
        - {key: node.kubernetes.io/instance-type, operator: NotIn, values: ["t3.nano"]}
        - {key: karpenter.k8s.aws/instance-gpu-count, operator: DoesNotExist}
      expireAfter: Never
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: Never
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  kubelet:
    podsPerCore: 2
    maxPods: 20
    systemReserved: {cpu: 100m, memory: 100Mi, ephemeral-storage: 1Gi}
    kubeReserved: {cpu: 200m, memory: 100Mi, ephemeral-storage: 3Gi}
    evictionHard: {memory.available: 5%, nodefs.available: 10%, nodefs.inodesFree: 10%}
    evictionSoft: {memory.available: 500Mi, nodefs.available: 15%, nodefs.inodesFree: 15%}
    evictionSoftGracePeriod: {memory.available: 1m, nodefs.available: 1m30s, nodefs.inodesFree: 2m}
    evictionMaxPodGracePeriod: 60
    imageGCHighThresholdPercent: 85
    imageGCLowThresholdPercent: 80
    cpuCFSQuota: true
    clusterDNS: ["10.0.1.100"]
  amiFamily: AL2023
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: "my-cluster"
    - id: subnet-09fa4a0a8f233a921
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: "my-cluster"
    - name: my-security-group
    - id: sg-063d7acfb4b06c82c
  role: "KarpenterNodeRole-my-cluster"
  amiSelectorTerms:
    - alias: al2023@latest
  tags:
    team: team-a
    app: team-a-app
  metadataOptions:
    httpEndpoint: enabled
    httpProtocolIPv6: disabled
    httpPutResponseHopLimit: 1
    httpTokens: required
  blockDeviceMappings:
    - deviceName: /dev/xvda
      ebs:
        volumeSize: 100Gi
        volumeType: gp3
        iops: 10000
        encrypted: true
        kmsKeyID: "1234abcd-12ab-34cd-56ef-1234567890ab"
        deleteOnTermination: true
        throughput: 125
  instanceStorePolicy: RAID0
  userData: |
    echo "Hello world"
  detailedMonitoring: true
  associatePublicIPAddress: true
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: bottlerocket
spec:
  amiFamily: Bottlerocket
  amiSelectorTerms:
    - tags: {karpenter.sh/discovery: my-cluster}
      owner: self
    - name: "bottlerocket-aws-k8s-*"
      owner: amazon
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: my-cluster}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: my-cluster}}]
  instanceProfile: KarpenterNodeInstanceProfile-my-cluster
  blockDeviceMappings:
    - {deviceName: /dev/xvda, ebs: {volumeSize: 4Gi, volumeType: gp3, encrypted: true}}
    - {deviceName: /dev/xvdb, rootVolume: true, ebs: {volumeSize: 20Gi, volumeType: gp3, encrypted: true}}
`;

/** A launched, registered and initialized NodeClaim record, and one still pending. */
const claims: NodeClaim[] = [
  {
    name: 'general-bcdfg',
    nodePool: 'general',
    nodeClass: 'default',
    state: 'Initialized',
    requirements: [
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] },
      { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gte', values: ['5'] },
    ],
    instanceTypes: ['m5.large'],
    resources: { cpu: 1500, memory: 2048, pods: 3 },
    labels: { 'workload-type': 'general' },
    taints: [{ key: 'example.com/special', effect: 'NoSchedule' }],
    startupTaints: [{ key: 'example.com/startup', value: 'true', effect: 'NoExecute' }],
    nominatedPods: ['default/web-1'],
    instanceId: 'i-0123456789abcdef0',
    providerId: 'aws:///us-west-2a/i-0123456789abcdef0',
    nodeName: 'ip-10-0-1-2.us-west-2.compute.internal',
    instanceType: 'm5.large',
    zone: 'us-west-2a',
    capacityType: 'spot',
    price: 0.035,
    allocatable: { cpu: 1930, memory: 7134, pods: 29 },
    createdAt: '2026-03-02T08:00:00.000Z',
    launchedAt: '2026-03-02T08:00:02.000Z',
    registeredAt: '2026-03-02T08:01:00.000Z',
    initializedAt: '2026-03-02T08:01:20.000Z',
    version: 4,
  },
  {
    name: 'gpu-hjklm',
    nodePool: 'gpu',
    nodeClass: 'gpu-class',
    state: 'Pending',
    requirements: [{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['g5'] }],
    instanceTypes: ['g5.xlarge'],
    resources: { 'nvidia.com/gpu': 1 },
    labels: {},
    taints: [],
    startupTaints: [],
    nominatedPods: [],
    createdAt: '2026-03-02T08:00:00.000Z',
    version: 1,
  },
];

describe('CRDs (infra/k8s/crds)', () => {
  describe('generation', () => {
    it.each([...renderAll()])('%s is up to date with the zod schemas (run npx tsx scripts/build-crds.ts)', (file, text) => {
      expect(readFileSync(join(REPO_ROOT, file), 'utf8')).toBe(text);
    });

    it('writes one CRD per kind: apiextensions.k8s.io/v1, v1 served and stored, status subresource, cluster scope', () => {
      for (const spec of CRDS) {
        const crd = files.get(spec.kind) as { apiVersion: string; metadata: { name: string }; spec: { scope: string; names: { kind: string; categories: string[] }; versions: { name: string; served: boolean; storage: boolean; subresources: unknown }[] } };
        expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
        expect(crd.metadata.name).toBe(`${spec.plural}.${spec.group}`);
        expect(crd.spec.scope).toBe('Cluster');
        expect(crd.spec.names).toMatchObject({ kind: spec.kind, categories: ['karpenter'] });
        expect(crd.spec.versions).toEqual([expect.objectContaining({ name: 'v1', served: true, storage: true, subresources: { status: {} } })]);
      }
    });

    it("gives NodeClaims Karpenter's printer columns: Type, Capacity, Zone, Node, Ready, Age, and -o wide ID, NodePool, NodeClass", () => {
      const crd = files.get('NodeClaim') as { spec: { versions: { additionalPrinterColumns: { name: string; priority?: number }[] }[] } };
      const columns = crd.spec.versions[0]!.additionalPrinterColumns;
      expect(columns.filter((c) => !c.priority).map((c) => c.name)).toEqual(['Type', 'Capacity', 'Zone', 'Node', 'Ready', 'Age']);
      expect(columns.filter((c) => c.priority === 1).map((c) => c.name)).toEqual(['ID', 'NodePool', 'NodeClass']);
    });
  });

  describe('structural schema', () => {
    it.each(CRDS.map((s) => s.kind))('%s has no $ref, definitions or additionalProperties: false', (kind) => {
      const text = JSON.stringify(schemaOf(kind));
      expect(text).not.toMatch(/"\$ref"|"\$defs"|"definitions"|"additionalProperties":false|"oneOf"|"propertyNames"/);
    });

    it.each(CRDS.map((s) => s.kind))('%s types every node (or marks it int-or-string / preserve-unknown-fields)', (kind) => {
      const untyped = [...nodes(schemaOf(kind))]
        .filter(([, n]) => n.type === undefined && n['x-kubernetes-int-or-string'] !== true && n['x-kubernetes-preserve-unknown-fields'] !== true)
        .map(([p]) => p);
      expect(untyped).toEqual([]);
    });

    it.each(CRDS.map((s) => s.kind))('%s never sets properties and additionalProperties on one node', (kind) => {
      const both = [...nodes(schemaOf(kind))].filter(([, n]) => n.properties !== undefined && n.additionalProperties !== undefined).map(([p]) => p);
      expect(both).toEqual([]);
    });

    it('keeps only value validations inside anyOf (int-or-string)', () => {
      for (const spec of CRDS) {
        for (const [, n] of nodes(schemaOf(spec.kind))) {
          if (n.anyOf !== undefined) expect(n).toMatchObject({ 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] });
        }
      }
    });

    it('marks budgets.nodes, limits and quantities int-or-string, and loose objects preserve-unknown-fields', () => {
      const pool = schemaOf('NodePool') as any;
      expect(pool.properties.spec.properties.disruption.properties.budgets.items.properties.nodes['x-kubernetes-int-or-string']).toBe(true);
      expect(pool.properties.spec.properties.limits.additionalProperties['x-kubernetes-int-or-string']).toBe(true);
      expect(pool.properties.status['x-kubernetes-preserve-unknown-fields']).toBe(true);
      const nodeClass = schemaOf('EC2NodeClass') as any;
      expect(nodeClass.properties.spec.properties.cpuOptions).toEqual({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
      expect(nodeClass.properties.spec.properties.kubelet.properties.evictionHard['x-kubernetes-validations']).toEqual([
        expect.objectContaining({ rule: expect.stringMatching(/^self\.all\(x, x in \['memory\.available',/) }),
      ]);
    });
  });

  describe('toStructuralSchema', () => {
    it('refuses what a structural schema cannot say', () => {
      expect(() => toStructuralSchema({ $ref: '#/$defs/x' })).toThrow(StructuralSchemaError);
      expect(() => toStructuralSchema({ anyOf: [{ type: 'object', properties: {} }, { type: 'string' }] })).toThrow(/int-or-string/);
      expect(() => toStructuralSchema({ type: 'object', properties: { a: { minLength: 1 } } })).toThrow(/\.a: every node of a structural schema needs a type/);
    });

    it('turns a loose object into preserve-unknown-fields and drops additionalProperties: false', () => {
      expect(toStructuralSchema({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: {} })).toEqual({
        type: 'object',
        properties: { a: { type: 'string' } },
        'x-kubernetes-preserve-unknown-fields': true,
      });
      expect(toStructuralSchema({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false, required: [] })).toEqual({
        type: 'object',
        properties: { a: { type: 'string' } },
      });
    });
  });

  describe('existing objects stay valid', () => {
    it('finds the seed’s NodePools and EC2NodeClasses', () => {
      expect(seedObjects.map(({ doc }) => `${doc.kind}/${doc.metadata?.name}`).sort()).toEqual([
        'EC2NodeClass/default',
        'EC2NodeClass/gpu-class',
        'NodePool/batch',
        'NodePool/general',
        'NodePool/gpu',
      ]);
    });

    it.each(seedObjects.map(({ file, doc }) => [`${file} ${doc.kind}/${doc.metadata?.name}`, doc] as const))('the seed’s %s validates against the CRD', (_, doc) => {
      expect(validate(schemaOf(String(doc.kind)), doc)).toEqual([]);
    });

    it.each(documents(KARPENTER_DOCS_OBJECTS).map((d) => [`${(d as { kind: string }).kind}/${(d as { metadata: { name: string } }).metadata.name}`, d] as const))(
      'a typical Karpenter v1 %s validates against the CRD and parses with Skiff’s schema',
      (_, doc) => {
        expect(validate(schemaOf((doc as { kind: string }).kind), doc)).toEqual([]);
      },
    );

    it('Skiff’s loader accepts the same typical Karpenter v1 objects', () => {
      expect(parseManifests(KARPENTER_DOCS_OBJECTS, 'karpenter-docs.yaml').map((m) => m.kind)).toEqual(['NodePool', 'NodePool', 'EC2NodeClass', 'EC2NodeClass']);
    });

    it.each(claims.map((c) => [c.name, c] as const))('the NodeClaim mirror of %s validates against the NodeClaim CRD', (_, claim) => {
      const mirror = nodeClaimMirror(claim);
      expect(validate(schemaOf('NodeClaim'), { ...mirror.object, status: mirror.status })).toEqual([]);
    });
  });

  describe('the validator', () => {
    it('reports a wrong type, a bad enum, an unknown field, a bad key and a missing field with their paths', () => {
      const bad = {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name: 'x' },
        spec: {
          template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass' }, requirements: [{ key: 'k', operator: 'Like' }] } },
          weight: 'heavy',
          surprise: true,
        },
      };
      expect(validate(schemaOf('NodePool'), bad)).toEqual([
        '.spec.template.spec.nodeClassRef.name: is required',
        '.spec.template.spec.requirements[0].operator: "Like" is not one of ["In","NotIn","Exists","DoesNotExist","Gt","Lt","Gte","Lte"]',
        '.spec.weight: expected integer, got string',
        '.spec.surprise: unknown field (the API server would prune it)',
      ]);
      const nodeClass = schemaOf('EC2NodeClass') as any;
      expect(validate(nodeClass.properties.spec.properties.kubelet, { evictionHard: { 'memory.free': '5%' } })).toEqual([
        expect.stringMatching(/^\.evictionHard: valid keys are \['memory\.available'/),
      ]);
    });
  });
});
