/**
 * Generates Skiff's CustomResourceDefinitions — `infra/k8s/crds/karpenter.sh_nodepools.yaml`,
 * `karpenter.sh_nodeclaims.yaml` and `karpenter.k8s.aws_ec2nodeclasses.yaml` — from the project's zod schemas, so the
 * objects the cluster accepts and the objects Skiff parses can never drift apart.
 *
 * Usage: `npx tsx scripts/build-crds.ts` (rewrites the three files; `--check` only compares and exits 1 when one is
 * out of date). `test/infra/crds.test.ts` regenerates them in memory and fails when the files differ.
 *
 * How: `z.toJSONSchema` (input side: defaults are not required, transforms are skipped) gives a JSON Schema, which
 * {@link toStructuralSchema} turns into a Kubernetes *structural* OpenAPI v3 schema
 * (kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#specifying-a-structural-schema):
 * no `$ref`, every node typed, `additionalProperties: false` dropped (the API server prunes unknown fields instead),
 * a loose zod object becomes `x-kubernetes-preserve-unknown-fields: true`, a union of a string and a number becomes
 * `x-kubernetes-int-or-string: true`, a record keyed by an enum gets Karpenter's `self.all(x, x in [...])` CEL rule,
 * and the root's `apiVersion`/`kind`/`metadata` are plain as in every CRD. Rules zod checks in code (refinements:
 * restricted label domains, cron shape, mutually exclusive selector fields) stay in Skiff's own validation
 * (`skiff validate`, the Lambdas' parsing): the CRD is the structural floor, zod the full rule set.
 *
 * Names, scope, categories, short names and printer columns are Karpenter's, copied from
 * kubernetes-sigs/karpenter `pkg/apis/crds/karpenter.sh_nodepools.yaml`, `karpenter.sh_nodeclaims.yaml` and
 * aws/karpenter-provider-aws `pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml`, so `kubectl get nodeclaims -o wide`
 * shows the same columns as with Karpenter (docs/karpenter-semantics.md#nodeclaim-lifecycle for the conditions behind READY).
 *
 * The NodeClaim has no zod schema in the core (Skiff's NodeClaim is the DynamoDB record): {@link nodeClaimObjectSchema}
 * here describes the `karpenter.sh/v1` object `shared/adapters/kubernetes/nodeclaim-mirror.ts` writes.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { stringify } from 'yaml';
import * as z from 'zod';
import { ec2NodeClassSchema, VOLUME_SIZE_PATTERN, volumeSizeSchema } from '../shared/core/api/ec2nodeclass.js';
import { MAX_REQUIREMENTS, nodeClassRefSchema, nodePoolRequirementSchema, nodePoolSchema } from '../shared/core/api/nodepool.js';
import { OWN_KEYS_RECORDS, objectMetaSchema, quantitySchema, resourceListSchema, taintSchema } from '../shared/core/api/object-meta.js';

/** The repository root (the folder holding `package.json`). */
export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Where the CRDs are written, relative to {@link REPO_ROOT}. */
export const CRD_DIR = 'infra/k8s/crds';

/**
 * A Kubernetes quantity (`k8s.io/apimachinery/pkg/api/resource`), the pattern controller-gen writes for
 * `resource.Quantity` fields (e.g. Karpenter's `spec.limits`, `spec.resources.requests`).
 */
export const QUANTITY_PATTERN = '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';

/** One `metav1.Condition` as Karpenter's status conditions carry it (`nodeclaim-mirror.ts` `NodeClaimCondition`). */
const conditionSchema = z.looseObject({
  type: z.string().min(1),
  status: z.enum(['True', 'False', 'Unknown']),
  lastTransitionTime: z.string(),
  reason: z.string().optional(),
  message: z.string().optional(),
  observedGeneration: z.int().min(0).optional(),
});

/**
 * The `karpenter.sh/v1` NodeClaim object (spec as Karpenter's `NodeClaimSpec`; status as the mirror writes it, other
 * status fields preserved). Derived from `NodeClaimMirror` in `shared/adapters/kubernetes/nodeclaim-mirror.ts`;
 * `test/infra/crds.test.ts` checks mirrors validate against the generated CRD.
 */
export const nodeClaimObjectSchema = z.strictObject({
  apiVersion: z.literal('karpenter.sh/v1'),
  kind: z.literal('NodeClaim'),
  metadata: objectMetaSchema,
  spec: z.strictObject({
    nodeClassRef: nodeClassRefSchema,
    requirements: z.array(nodePoolRequirementSchema).max(MAX_REQUIREMENTS),
    resources: z.strictObject({ requests: resourceListSchema.optional() }).optional(),
    taints: z.array(taintSchema).optional(),
    startupTaints: z.array(taintSchema).optional(),
    expireAfter: z.string().optional(),
    terminationGracePeriod: z.string().optional(),
  }),
  status: z
    .looseObject({
      providerID: z.string().optional(),
      nodeName: z.string().optional(),
      imageID: z.string().optional(),
      capacity: resourceListSchema.optional(),
      allocatable: resourceListSchema.optional(),
      conditions: z.array(conditionSchema).optional(),
      lastPodEventTime: z.string().optional(),
    })
    .optional(),
});

/** One `additionalPrinterColumns` entry of a CRD version. */
export interface PrinterColumn {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  readonly jsonPath: string;
  /** 1: shown only with `-o wide`. */
  readonly priority?: 1;
}

/** What a CRD is made of besides its schema. */
export interface CrdSpec {
  /** File name under {@link CRD_DIR}. */
  readonly file: string;
  readonly group: string;
  readonly kind: string;
  readonly plural: string;
  readonly singular: string;
  readonly shortNames?: readonly string[];
  readonly description: string;
  readonly schema: z.ZodType;
  readonly printerColumns: readonly PrinterColumn[];
}

const READY: PrinterColumn = { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' };
const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

/** The three CRDs Skiff ships, with Karpenter's names and printer columns. */
export const CRDS: readonly CrdSpec[] = [
  {
    file: 'karpenter.sh_nodepools.yaml',
    group: 'karpenter.sh',
    kind: 'NodePool',
    plural: 'nodepools',
    singular: 'nodepool',
    description: 'NodePool is the Schema for the NodePools API (Karpenter v1; served by Skiff).',
    schema: nodePoolSchema,
    printerColumns: [
      { name: 'NodeClass', type: 'string', jsonPath: '.spec.template.spec.nodeClassRef.name' },
      { name: 'Nodes', type: 'string', jsonPath: '.status.resources.nodes' },
      READY,
      AGE,
      { name: 'Weight', type: 'integer', jsonPath: '.spec.weight', priority: 1 },
      { name: 'CPU', type: 'string', jsonPath: '.status.resources.cpu', priority: 1 },
      { name: 'Memory', type: 'string', jsonPath: '.status.resources.memory', priority: 1 },
    ],
  },
  {
    file: 'karpenter.sh_nodeclaims.yaml',
    group: 'karpenter.sh',
    kind: 'NodeClaim',
    plural: 'nodeclaims',
    singular: 'nodeclaim',
    description: 'NodeClaim is the Schema for the NodeClaims API (Karpenter v1). Skiff mirrors its DynamoDB NodeClaim records into these objects.',
    schema: nodeClaimObjectSchema,
    printerColumns: [
      { name: 'Type', type: 'string', jsonPath: '.metadata.labels.node\\.kubernetes\\.io/instance-type' },
      { name: 'Capacity', type: 'string', jsonPath: '.metadata.labels.karpenter\\.sh/capacity-type' },
      { name: 'Zone', type: 'string', jsonPath: '.metadata.labels.topology\\.kubernetes\\.io/zone' },
      { name: 'Node', type: 'string', jsonPath: '.status.nodeName' },
      READY,
      AGE,
      { name: 'ID', type: 'string', jsonPath: '.status.providerID', priority: 1 },
      { name: 'NodePool', type: 'string', jsonPath: '.metadata.labels.karpenter\\.sh/nodepool', priority: 1 },
      { name: 'NodeClass', type: 'string', jsonPath: '.spec.nodeClassRef.name', priority: 1 },
    ],
  },
  {
    file: 'karpenter.k8s.aws_ec2nodeclasses.yaml',
    group: 'karpenter.k8s.aws',
    kind: 'EC2NodeClass',
    plural: 'ec2nodeclasses',
    singular: 'ec2nodeclass',
    shortNames: ['ec2nc', 'ec2ncs'],
    description: 'EC2NodeClass is the Schema for the EC2NodeClass API (Karpenter v1 AWS provider; served by Skiff).',
    schema: ec2NodeClassSchema,
    printerColumns: [READY, AGE, { name: 'Role', type: 'string', jsonPath: '.spec.role', priority: 1 }],
  },
];

/** A JSON Schema / OpenAPI node, as plain data. */
export type SchemaNode = { [key: string]: unknown };

/** JSON Schema keywords Kubernetes' structural schemas accept (besides the `x-kubernetes-*` extensions). */
const KEPT_KEYWORDS = new Set([
  'type',
  'description',
  'properties',
  'required',
  'items',
  'additionalProperties',
  'enum',
  'default',
  'nullable',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
  'format',
  'multipleOf',
]);

/** Value-only keywords allowed inside `anyOf`/`allOf` branches of a structural schema. */
const VALUE_KEYWORDS = new Set(['pattern', 'minLength', 'maxLength', 'minimum', 'maximum', 'enum', 'format', 'minItems', 'maxItems', 'multipleOf']);

/** A thrown problem: a zod construct that has no structural form (e.g. a union of objects). */
export class StructuralSchemaError extends Error {
  /**
   * @param path where in the schema, e.g. `.spec.foo`
   * @param reason what could not be converted
   */
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`${path || '.'}: ${reason}`);
    this.name = 'StructuralSchemaError';
  }
}

/** True for a JSON object (not an array). */
function isNode(value: unknown): value is SchemaNode {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The `type` of a primitive union branch, when the branch is `{type: string|integer|number}` with value keywords only. */
function primitiveBranchType(branch: unknown): string | undefined {
  if (!isNode(branch)) return undefined;
  const type = branch.type;
  if (type !== 'string' && type !== 'integer' && type !== 'number') return undefined;
  return Object.keys(branch).every((k) => k === 'type' || VALUE_KEYWORDS.has(k)) ? type : undefined;
}

/**
 * Converts a JSON Schema (as `z.toJSONSchema(..., {target: 'openapi-3.0'})` writes it) to a Kubernetes structural
 * schema node. Pure; throws on anything it cannot express.
 * @param node the JSON Schema node
 * @param path where the node is, for messages (`.spec.template`)
 * @throws {StructuralSchemaError} on `$ref`, `oneOf`/`not`, unions other than string|number, or unknown keywords
 */
export function toStructuralSchema(node: unknown, path = ''): SchemaNode {
  if (!isNode(node)) throw new StructuralSchemaError(path, `expected a schema object, got ${JSON.stringify(node)}`);
  if ('$ref' in node || '$defs' in node || 'definitions' in node) throw new StructuralSchemaError(path, '$ref/definitions cannot appear in a structural schema (use reused: inline)');
  if ('oneOf' in node || 'not' in node) throw new StructuralSchemaError(path, 'oneOf/not are not supported');
  // The empty schema (z.unknown()): any value, kept as is.
  const keys = Object.keys(node).filter((k) => k !== 'description' && k !== 'default');
  if (keys.length === 0) return { ...pick(node, ['description', 'default']), 'x-kubernetes-preserve-unknown-fields': true };

  if ('anyOf' in node) {
    const branches = node.anyOf;
    const types = Array.isArray(branches) ? branches.map(primitiveBranchType) : [];
    const set = new Set(types);
    if (types.length === 0 || types.includes(undefined) || !set.has('string') || !(set.has('integer') || set.has('number'))) {
      throw new StructuralSchemaError(path, `only a union of a string and a number can be expressed (int-or-string), got ${JSON.stringify(branches)}`);
    }
    const rest = Object.fromEntries(Object.entries(node).filter(([k]) => k !== 'anyOf'));
    return { ...convertKeywords({ ...rest, 'x-kubernetes-int-or-string': true }, path), anyOf: [{ type: 'integer' }, { type: 'string' }] };
  }
  return convertKeywords(node, path);
}

/** `node` restricted to `keys`. */
function pick(node: SchemaNode, keys: readonly string[]): SchemaNode {
  return Object.fromEntries(keys.filter((k) => k in node).map((k) => [k, node[k]]));
}

/** Converts the keywords of a node that is not a union. */
function convertKeywords(node: SchemaNode, path: string): SchemaNode {
  const out: SchemaNode = {};
  for (const [key, value] of Object.entries(node)) {
    if (key.startsWith('x-kubernetes-')) {
      out[key] = value;
      continue;
    }
    switch (key) {
      case 'properties': {
        if (!isNode(value)) throw new StructuralSchemaError(path, 'properties must be an object');
        const props = Object.entries(value);
        if (props.length > 0) out.properties = Object.fromEntries(props.map(([k, v]) => [k, toStructuralSchema(v, `${path}.${k}`)]));
        break;
      }
      case 'items':
        out.items = toStructuralSchema(value, `${path}[]`);
        break;
      case 'additionalProperties':
        // handled below, once properties are known
        break;
      case 'required':
        if (Array.isArray(value) && value.length > 0) out.required = value;
        break;
      case 'minimum':
      case 'maximum':
        // z.int() bounds every integer to the safe-integer range: noise in a CRD (int64 holds more).
        if (Math.abs(Number(value)) !== Number.MAX_SAFE_INTEGER) out[key] = value;
        break;
      case 'allOf': {
        // Several regexes on one string: value validations only, which structural schemas allow.
        if (!Array.isArray(value) || !value.every((b) => isNode(b) && Object.keys(b).every((k) => VALUE_KEYWORDS.has(k)))) {
          throw new StructuralSchemaError(path, `allOf may only hold value validations, got ${JSON.stringify(value)}`);
        }
        out.allOf = value;
        break;
      }
      default:
        if (!KEPT_KEYWORDS.has(key)) throw new StructuralSchemaError(path, `keyword ${key} is not supported in a structural schema`);
        out[key] = value;
    }
  }
  const additional = node.additionalProperties;
  const hasProperties = out.properties !== undefined;
  if (isNode(additional)) {
    if (Object.keys(additional).length === 0) {
      // z.looseObject / z.record(z.string(), z.unknown()): unknown fields are kept, not pruned.
      out['x-kubernetes-preserve-unknown-fields'] = true;
    } else if (hasProperties) {
      out['x-kubernetes-preserve-unknown-fields'] = true; // properties and additionalProperties are mutually exclusive
    } else {
      out.additionalProperties = toStructuralSchema(additional, `${path}.*`);
    }
  } else if (additional === true) {
    out['x-kubernetes-preserve-unknown-fields'] = true;
  }
  // additionalProperties: false (strict objects) is dropped: the API server prunes unknown fields.
  if (out.type === undefined && out['x-kubernetes-preserve-unknown-fields'] !== true && out['x-kubernetes-int-or-string'] !== true) {
    throw new StructuralSchemaError(path, 'every node of a structural schema needs a type');
  }
  return out;
}

/** The schema of a record whose keys are an enum (zod's `z.partialRecord(z.enum([...]), v)`), or undefined. */
function enumKeysOf(schema: z.core.$ZodType): readonly string[] | undefined {
  const def = schema._zod.def as { type?: string; keyType?: z.core.$ZodType };
  if (def.type !== 'record' || def.keyType === undefined) return undefined;
  const keyDef = def.keyType._zod.def as { type?: string; entries?: Record<string, string> };
  return keyDef.type === 'enum' && keyDef.entries ? Object.values(keyDef.entries) : undefined;
}

/** The `override` hook of `z.toJSONSchema`. */
type Override = NonNullable<Parameters<typeof z.toJSONSchema>[1]>['override'];

/**
 * The structural OpenAPI v3 schema of a zod object schema, as a CRD's `openAPIV3Schema`.
 * @param schema a zod object schema with `apiVersion`, `kind`, `metadata`, `spec` and optional `status`
 * @param description the root description
 * @throws {StructuralSchemaError} when a part of the schema has no structural form
 */
export function zodToOpenApi(schema: z.ZodType, description: string): SchemaNode {
  const override: Override = (ctx) => {
    // A map that refuses `__proto__` (ownKeysRecord) is, on the wire, the plain record it wraps.
    const def = ctx.zodSchema._zod.def as { readonly type: string; readonly out?: z.ZodType };
    const record = def.type === 'pipe' && def.out !== undefined && OWN_KEYS_RECORDS.has(def.out) ? def.out : undefined;
    if (record !== undefined) {
      for (const k of Object.keys(ctx.jsonSchema)) delete ctx.jsonSchema[k];
      Object.assign(ctx.jsonSchema, z.toJSONSchema(record, { io: 'input', target: 'openapi-3.0', unrepresentable: 'any', reused: 'inline', cycles: 'throw', override }));
      delete ctx.jsonSchema.$schema;
      return;
    }
    const keys = enumKeysOf(ctx.zodSchema);
    if (keys !== undefined) {
      const list = keys.map((k) => `'${k}'`).join(',');
      ctx.jsonSchema['x-kubernetes-validations'] = [{ message: `valid keys are [${list}]`, rule: `self.all(x, x in [${list}])` }];
    }
    if (ctx.zodSchema === quantitySchema) ctx.jsonSchema.pattern = QUANTITY_PATTERN;
    if (ctx.zodSchema === volumeSizeSchema) ctx.jsonSchema.pattern = VOLUME_SIZE_PATTERN.source;
  };
  const json = z.toJSONSchema(schema, { io: 'input', target: 'openapi-3.0', unrepresentable: 'any', reused: 'inline', cycles: 'throw', override });
  const root = toStructuralSchema(json);
  const properties = { ...(root.properties as Record<string, SchemaNode>) };
  // Every CRD's root: plain apiVersion/kind strings and an untyped metadata (the API server validates ObjectMeta).
  properties.apiVersion = { type: 'string', description: 'APIVersion defines the versioned schema of this representation of an object.' };
  properties.kind = { type: 'string', description: 'Kind is a string value representing the REST resource this object represents.' };
  properties.metadata = { type: 'object' };
  const required = Array.isArray(root.required) ? root.required.filter((k) => k !== 'apiVersion' && k !== 'kind' && k !== 'metadata') : [];
  return { type: 'object', description, properties, ...(required.length > 0 ? { required } : {}) };
}

/**
 * The CustomResourceDefinition object for one CRD spec (apiextensions.k8s.io/v1, one version `v1`, served and stored,
 * with the status subresource).
 */
export function buildCrd(spec: CrdSpec): SchemaNode {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${spec.plural}.${spec.group}`,
      annotations: { 'skiff.dev/generated-by': 'scripts/build-crds.ts' },
    },
    spec: {
      group: spec.group,
      names: {
        categories: ['karpenter'],
        kind: spec.kind,
        listKind: `${spec.kind}List`,
        plural: spec.plural,
        ...(spec.shortNames ? { shortNames: [...spec.shortNames] } : {}),
        singular: spec.singular,
      },
      scope: 'Cluster',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          additionalPrinterColumns: spec.printerColumns.map((c) => ({ name: c.name, type: c.type, jsonPath: c.jsonPath, ...(c.priority ? { priority: c.priority } : {}) })),
          schema: { openAPIV3Schema: zodToOpenApi(spec.schema, spec.description) },
          subresources: { status: {} },
        },
      ],
    },
  };
}

/** The text of one generated CRD file (a header comment, then the YAML). */
export function renderCrd(spec: CrdSpec): string {
  const header = [
    `# Generated by scripts/build-crds.ts from Skiff's zod schemas. Do not edit: run \`npx tsx scripts/build-crds.ts\`.`,
    `# ${spec.kind} (${spec.group}/v1) with Karpenter's names and printer columns; see the script's header comment.`,
  ].join('\n');
  return `${header}\n---\n${stringify(buildCrd(spec), { lineWidth: 0 })}`;
}

/** Every generated file: path relative to {@link REPO_ROOT} → text. */
export function renderAll(): ReadonlyMap<string, string> {
  return new Map(CRDS.map((spec) => [join(CRD_DIR, spec.file), renderCrd(spec)]));
}

function main(argv: readonly string[]): number {
  const check = argv.includes('--check');
  let stale = 0;
  for (const [file, text] of renderAll()) {
    const path = join(REPO_ROOT, file);
    let current: string | undefined;
    try {
      current = readFileSync(path, 'utf8');
    } catch {
      current = undefined;
    }
    if (current === text) continue;
    if (check) {
      process.stderr.write(`${file} is out of date: run npx tsx scripts/build-crds.ts\n`);
      stale++;
    } else {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
      process.stdout.write(`wrote ${file}\n`);
    }
  }
  return stale > 0 ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) process.exitCode = main(process.argv.slice(2));
