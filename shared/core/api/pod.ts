/**
 * `v1` Pod, PodSpec and PodTemplateSpec: typed where Skiff schedules on a field (resources, ports, node selection,
 * affinity, tolerations, topology spread, priority, grace periods), passed through untouched where it does not
 * (volumes, env, probes, …). Validation follows k8s.io/kubernetes `pkg/apis/core/validation` for the typed fields.
 *
 * Defaulting applied, as the API server does: a container resource with a limit but no request gets the limit as
 * its request; a port's protocol defaults to TCP; a toleration's operator to Equal.
 */
import * as z from 'zod';
import type { Toleration } from './kubernetes.js';
import {
  TAINT_EFFECTS,
  labelSelectorSchema,
  labelValueSchema,
  namespacedObjectMetaSchema,
  ownKeysRecord,
  qualifiedNameSchema,
  requirementIntegerProblem,
  resourceListSchema,
  templateMetaSchema,
} from './object-meta.js';
import { parseQuantity } from '../resources/quantity.js';

/** Node selector operators a pod may use (Kubernetes'; Karpenter's Gte/Lte are NodePool-only). */
export const POD_NODE_SELECTOR_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'] as const;

/** Resource names that are not extended resources (extended ones must be whole numbers). */
const NATIVE_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage', 'storage', 'pods']);

/** A quantity in base units, or NaN when it does not parse (already reported by the quantity schema). */
function quantityValue(q: string): number {
  try {
    return parseQuantity(q);
  } catch {
    return Number.NaN;
  }
}

/** True for extended resources such as `nvidia.com/gpu` (a domain-prefixed name outside `kubernetes.io`). */
function isExtendedResource(name: string): boolean {
  if (NATIVE_RESOURCES.has(name) || name.startsWith('hugepages-') || name.startsWith('requests.')) return false;
  const slash = name.indexOf('/');
  return slash > 0 && !name.slice(0, slash).endsWith('kubernetes.io');
}

/** A node selector requirement inside a pod's node affinity, with Kubernetes' rules. */
export const podNodeSelectorRequirementSchema = z
  .strictObject({
    key: qualifiedNameSchema,
    operator: z.enum(POD_NODE_SELECTOR_OPERATORS),
    values: z.array(labelValueSchema).optional(),
  })
  .superRefine((r, ctx) => {
    const n = r.values?.length ?? 0;
    switch (r.operator) {
      case 'In':
      case 'NotIn':
        if (n === 0) ctx.addIssue({ code: 'custom', path: ['values'], message: `operator ${r.operator} needs at least one value` });
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (n > 0) ctx.addIssue({ code: 'custom', path: ['values'], message: `operator ${r.operator} takes no values` });
        break;
      case 'Gt':
      case 'Lt':
        if (n !== 1) ctx.addIssue({ code: 'custom', path: ['values'], message: `operator ${r.operator} needs exactly one integer value` });
        else {
          const problem = requirementIntegerProblem(r.operator, r.values?.[0] ?? '', { negative: true });
          if (problem) ctx.addIssue({ code: 'custom', path: ['values', 0], message: problem });
        }
        break;
    }
  });

/** A node selector term: `matchExpressions` on labels and `matchFields` (only `metadata.name`), ANDed. */
export const nodeSelectorTermSchema = z
  .strictObject({
    matchExpressions: z.array(podNodeSelectorRequirementSchema).optional(),
    matchFields: z.array(podNodeSelectorRequirementSchema).optional(),
  })
  .superRefine((term, ctx) => {
    (term.matchFields ?? []).forEach((f, i) => {
      if (f.key !== 'metadata.name') ctx.addIssue({ code: 'custom', path: ['matchFields', i, 'key'], message: 'matchFields supports only the key metadata.name' });
      else if ((f.operator !== 'In' && f.operator !== 'NotIn') || f.values?.length !== 1) {
        ctx.addIssue({ code: 'custom', path: ['matchFields', i], message: 'matchFields on metadata.name needs operator In or NotIn with exactly one value' });
      }
    });
  });

/** `affinity.nodeAffinity`: required terms are ORed; preferred terms are weighted 1–100. */
export const nodeAffinitySchema = z.strictObject({
  requiredDuringSchedulingIgnoredDuringExecution: z
    .strictObject({ nodeSelectorTerms: z.array(nodeSelectorTermSchema).min(1, { error: 'nodeSelectorTerms must have at least one term' }) })
    .optional(),
  preferredDuringSchedulingIgnoredDuringExecution: z
    .array(z.strictObject({ weight: z.int().min(1).max(100), preference: nodeSelectorTermSchema }))
    .optional(),
});

/** A pod (anti-)affinity term: pods matching `labelSelector` in `namespaces`, counted per `topologyKey` domain. */
export const podAffinityTermSchema = z.strictObject({
  labelSelector: labelSelectorSchema.optional(),
  namespaces: z.array(z.string()).optional(),
  namespaceSelector: labelSelectorSchema.optional(),
  topologyKey: qualifiedNameSchema,
  matchLabelKeys: z.array(z.string()).optional(),
  mismatchLabelKeys: z.array(z.string()).optional(),
});

/** `affinity.podAffinity` / `affinity.podAntiAffinity`. */
export const podAffinitySchema = z.strictObject({
  requiredDuringSchedulingIgnoredDuringExecution: z.array(podAffinityTermSchema).optional(),
  preferredDuringSchedulingIgnoredDuringExecution: z
    .array(z.strictObject({ weight: z.int().min(1).max(100), podAffinityTerm: podAffinityTermSchema }))
    .optional(),
});

/** `spec.affinity`. */
export const affinitySchema = z.strictObject({
  nodeAffinity: nodeAffinitySchema.optional(),
  podAffinity: podAffinitySchema.optional(),
  podAntiAffinity: podAffinitySchema.optional(),
});

/**
 * A toleration. `operator` defaults to `Equal`; with `Exists` no value may be given; an empty key needs `Exists`;
 * `tolerationSeconds` only with effect `NoExecute`.
 */
export const tolerationSchema = z
  .strictObject({
    key: z.union([z.literal(''), qualifiedNameSchema]).optional(),
    operator: z.enum(['Equal', 'Exists']).default('Equal'),
    value: labelValueSchema.optional(),
    effect: z.enum(TAINT_EFFECTS).optional(),
    tolerationSeconds: z.int().optional(),
  })
  .superRefine((t, ctx) => {
    if (t.operator === 'Exists' && t.value !== undefined && t.value !== '') {
      ctx.addIssue({ code: 'custom', path: ['value'], message: 'value must be empty when operator is Exists' });
    }
    if ((t.key === undefined || t.key === '') && t.operator !== 'Exists') {
      ctx.addIssue({ code: 'custom', path: ['operator'], message: 'operator must be Exists when key is empty' });
    }
    if (t.tolerationSeconds !== undefined && t.effect !== 'NoExecute') {
      ctx.addIssue({ code: 'custom', path: ['tolerationSeconds'], message: "effect must be 'NoExecute' when tolerationSeconds is set" });
    }
  });

/** A topology spread constraint. `minDomains` is only valid with `whenUnsatisfiable: DoNotSchedule`. */
export const topologySpreadConstraintSchema = z
  .strictObject({
    maxSkew: z.int().min(1),
    topologyKey: qualifiedNameSchema,
    whenUnsatisfiable: z.enum(['DoNotSchedule', 'ScheduleAnyway']),
    labelSelector: labelSelectorSchema.optional(),
    minDomains: z.int().min(1).optional(),
    nodeAffinityPolicy: z.enum(['Honor', 'Ignore']).optional(),
    nodeTaintsPolicy: z.enum(['Honor', 'Ignore']).optional(),
    matchLabelKeys: z.array(z.string()).optional(),
  })
  .superRefine((c, ctx) => {
    if (c.minDomains !== undefined && c.whenUnsatisfiable !== 'DoNotSchedule') {
      ctx.addIssue({ code: 'custom', path: ['minDomains'], message: 'minDomains can only be set with whenUnsatisfiable: DoNotSchedule' });
    }
  });

/** A container port; `hostPort` (1–65535) reserves the port on the node. Its five fields only (`core/v1` ContainerPort). */
export const containerPortSchema = z.strictObject({
  containerPort: z.int().min(1).max(65535),
  hostPort: z.int().min(0).max(65535).optional(),
  protocol: z.enum(['TCP', 'UDP', 'SCTP']).default('TCP'),
  hostIP: z.string().optional(),
  name: z.string().optional(),
});

/**
 * Container `resources`. Quantities are validated; a resource with a limit and no request gets the limit as its
 * request (API server defaulting); a request above its limit and a fractional extended resource are errors. A field
 * other than `requests`, `limits` and `claims` is an error (`request:` would otherwise leave the pod requesting
 * nothing), as under `kubectl apply`'s strict field validation.
 */
export const resourceRequirementsSchema = z
  .strictObject({
    requests: resourceListSchema.optional(),
    limits: resourceListSchema.optional(),
    claims: z.array(z.unknown()).optional(),
  })
  .superRefine((r, ctx) => {
    for (const [name, limit] of Object.entries(r.limits ?? {})) {
      const request = r.requests?.[name];
      if (request !== undefined && quantityValue(request) > quantityValue(limit) + 1e-12) {
        ctx.addIssue({ code: 'custom', path: ['requests', name], message: `must be less than or equal to the ${name} limit of ${limit}` });
      }
    }
    for (const key of ['requests', 'limits'] as const) {
      for (const [name, q] of Object.entries(r[key] ?? {})) {
        const value = quantityValue(q);
        if (isExtendedResource(name) && Number.isFinite(value) && !Number.isInteger(value)) {
          ctx.addIssue({ code: 'custom', path: [key, name], message: `extended resource ${name} must be a whole number` });
        }
      }
    }
  })
  .transform((r) => {
    if (!r.limits) return r;
    const requests = { ...r.limits, ...(r.requests ?? {}) };
    return { ...r, requests };
  });

/**
 * `core/v1` Container fields Skiff does not model: accepted as they are, so real manifests load (`kubectl get -o yaml`
 * writes several). Any other field is an error with a "did you mean", as for the PodSpec.
 */
const PASSED_THROUGH_CONTAINER_FIELDS = [
  'args',
  'command',
  'env',
  'envFrom',
  'imagePullPolicy',
  'lifecycle',
  'livenessProbe',
  'readinessProbe',
  'resizePolicy',
  'restartPolicyRules',
  'securityContext',
  'startupProbe',
  'stdin',
  'stdinOnce',
  'terminationMessagePath',
  'terminationMessagePolicy',
  'tty',
  'volumeDevices',
  'volumeMounts',
  'workingDir',
] as const;

/** Object-schema entries accepting each of `fields` as it is (optional, any value). */
function passedThrough<const F extends readonly string[]>(fields: F): { [K in F[number]]: z.ZodOptional<z.ZodUnknown> } {
  return Object.fromEntries(fields.map((f) => [f, z.unknown().optional()])) as { [K in F[number]]: z.ZodOptional<z.ZodUnknown> };
}

const passedThroughContainerFields = passedThrough(PASSED_THROUGH_CONTAINER_FIELDS);

/**
 * A container (app or init). `restartPolicy: Always` on an init container makes it a sidecar. Unknown fields are
 * errors (a misspelt `resource:` would drop the requests).
 */
export const containerSchema = z.strictObject({
  ...passedThroughContainerFields,
  name: z
    .string()
    .min(1)
    .max(63)
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, { error: 'a container name must be a DNS label (lowercase alphanumerics and "-")' }),
  image: z.string().optional(),
  resources: resourceRequirementsSchema.optional(),
  ports: z.array(containerPortSchema).optional(),
  restartPolicy: z.literal('Always', { error: 'a container\'s restartPolicy can only be Always (it makes an init container a sidecar); the pod\'s restart policy is spec.restartPolicy' }).optional(),
});

/** A pod's `nodeSelector`: node labels that must all match (values are label values). */
export const nodeSelectorSchema = ownKeysRecord(qualifiedNameSchema, labelValueSchema);

/**
 * `core/v1` PodSpec fields Skiff does not model: accepted as they are, so real manifests load. Any other field is
 * an error with a "did you mean" (as `kubectl apply` with strict field validation), so a misspelt
 * `topologySpreadConstraint` or `nodeSelecter` cannot silently drop a constraint.
 */
const PASSED_THROUGH_POD_SPEC_FIELDS = [
  'activeDeadlineSeconds',
  'automountServiceAccountToken',
  'dnsConfig',
  'dnsPolicy',
  'enableServiceLinks',
  'ephemeralContainers',
  'hostAliases',
  'hostIPC',
  'hostPID',
  'hostUsers',
  'hostnameOverride',
  'hostname',
  'imagePullSecrets',
  'os',
  'preemptionPolicy',
  'readinessGates',
  'resourceClaims',
  'resources',
  'runtimeClassName',
  'schedulingGates',
  'securityContext',
  'serviceAccount',
  'serviceAccountName',
  'setHostnameAsFQDN',
  'shareProcessNamespace',
  'subdomain',
  'volumes',
] as const;

const passedThroughPodSpecFields = passedThrough(PASSED_THROUGH_POD_SPEC_FIELDS);

/** A pod's `spec`, typed where Skiff models it; the other PodSpec fields pass through; unknown fields are errors. */
export const podSpecSchema = z
  .strictObject({
    ...passedThroughPodSpecFields,
    containers: z.array(containerSchema).min(1, { error: 'a pod needs at least one container' }),
    initContainers: z.array(containerSchema).optional(),
    overhead: resourceListSchema.optional(),
    nodeSelector: nodeSelectorSchema.optional(),
    affinity: affinitySchema.optional(),
    tolerations: z.array(tolerationSchema).optional(),
    topologySpreadConstraints: z.array(topologySpreadConstraintSchema).optional(),
    nodeName: z.string().min(1).optional(),
    priority: z.int().optional(),
    priorityClassName: z.string().optional(),
    terminationGracePeriodSeconds: z.int().min(0).optional(),
    restartPolicy: z.enum(['Always', 'OnFailure', 'Never']).optional(),
    schedulerName: z.string().optional(),
    hostNetwork: z.boolean().optional(),
  })
  .superRefine((spec, ctx) => {
    const seen = new Map<string, string>();
    for (const key of ['initContainers', 'containers'] as const) {
      (spec[key] ?? []).forEach((c, i) => {
        const first = seen.get(c.name);
        if (first !== undefined) ctx.addIssue({ code: 'custom', path: [key, i, 'name'], message: `duplicate container name ${JSON.stringify(c.name)} (also ${first})` });
        else seen.set(c.name, `${key}[${i}]`);
      });
    }
    spec.containers.forEach((c, i) => {
      if (c.restartPolicy !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['containers', i, 'restartPolicy'], message: 'restartPolicy is only allowed on init containers (sidecars)' });
      }
    });
  });

/** A pod template (`metadata` without a required name, and a {@link podSpecSchema}). */
export const podTemplateSpecSchema = z.strictObject({
  metadata: templateMetaSchema.prefault({}),
  spec: podSpecSchema,
});

/**
 * A `v1` Pod. `metadata.namespace` defaults to `default`; `status` is passed through.
 * @example podSchema.parse(doc).spec.containers[0]?.resources?.requests // { cpu: '500m', memory: '1Gi' }
 */
export const podSchema = z.strictObject({
  apiVersion: z.literal('v1'),
  kind: z.literal('Pod'),
  metadata: namespacedObjectMetaSchema,
  spec: podSpecSchema,
  status: z.looseObject({}).optional(),
});

/** A parsed Pod. */
export type Pod = z.output<typeof podSchema>;
/** A parsed pod spec. */
export type PodSpec = z.output<typeof podSpecSchema>;
/** A parsed pod template. */
export type PodTemplateSpec = z.output<typeof podTemplateSpecSchema>;
/** A parsed container. */
export type Container = z.output<typeof containerSchema>;
/** A parsed node affinity. */
export type NodeAffinity = z.output<typeof nodeAffinitySchema>;
/** A parsed pod (anti-)affinity term. */
export type PodAffinityTerm = z.output<typeof podAffinityTermSchema>;
/** A parsed topology spread constraint. */
export type TopologySpreadConstraint = z.output<typeof topologySpreadConstraintSchema>;

/** True when an init container is a sidecar (`restartPolicy: Always`): it keeps running beside the app containers. */
export function isSidecar(container: Container): boolean {
  return container.restartPolicy === 'Always';
}

// Compile-time check that parsed tolerations fit the core's plain type.
const _tolerationFits = (t: z.output<typeof tolerationSchema>): Toleration => t;
void _tolerationFits;
