/**
 * `karpenter.k8s.aws/v1` EC2NodeClass: schema and validation, plus Skiff's `eks-node@latest` alias.
 *
 * Sources: aws/karpenter-provider-aws `pkg/apis/v1/ec2nodeclass.go` and
 * `pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml` (fields, patterns, CEL rules), docs
 * `concepts/nodeclasses.md`; docs/karpenter-semantics.md#ami-aliases (the `eks-node@latest` alias means
 * the EKS-optimized AL2023 image). Objects are strict: an unknown field is an error.
 */
import * as z from 'zod';
import { objectMetaSchema, ownKeysRecord, quantitySchema } from './object-meta.js';

/** AMI alias families Karpenter accepts (`family@version`). */
export const AMI_ALIAS_FAMILIES = ['al2023', 'al2', 'bottlerocket', 'windows2019', 'windows2022', 'windows2025'] as const;
/** One of {@link AMI_ALIAS_FAMILIES}. */
export type AmiAliasFamily = (typeof AMI_ALIAS_FAMILIES)[number];

/** Skiff's own alias family (docs/karpenter-semantics.md#ami-aliases): `eks-node@latest` is the EKS-optimized AL2023 image. Only `latest` is valid. */
export const EKS_NODE_ALIAS_FAMILY = 'eks-node';

/** `spec.amiFamily` values. */
export const AMI_FAMILIES = ['AL2', 'AL2023', 'Bottlerocket', 'Custom', 'Windows2019', 'Windows2022', 'Windows2025'] as const;
/** One of {@link AMI_FAMILIES}. */
export type AmiFamily = (typeof AMI_FAMILIES)[number];

/** The `amiFamily` each alias family implies. */
const FAMILY_OF_ALIAS: Readonly<Record<AmiAliasFamily, AmiFamily>> = {
  al2023: 'AL2023',
  al2: 'AL2',
  bottlerocket: 'Bottlerocket',
  windows2019: 'Windows2019',
  windows2022: 'Windows2022',
  windows2025: 'Windows2025',
};

/** A resolved AMI alias. */
export interface AmiAlias {
  /** The Karpenter family the alias selects (`eks-node` resolves to `al2023`). */
  readonly family: AmiAliasFamily;
  /** `latest` or a pinned version such as `v20240625`. */
  readonly version: string;
  /** The `amiFamily` the alias implies (`AL2023` for `al2023@…` and `eks-node@latest`). */
  readonly amiFamily: AmiFamily;
}

/** Resolves an alias, or says why it is invalid. */
function resolveAlias(alias: string): AmiAlias | { readonly problem: string } {
  const at = alias.indexOf('@');
  if (at <= 0 || at === alias.length - 1) return { problem: `alias ${JSON.stringify(alias)} must have the form family@version, e.g. al2023@latest` };
  const family = alias.slice(0, at);
  const version = alias.slice(at + 1);
  if (family === EKS_NODE_ALIAS_FAMILY) {
    if (version !== 'latest') return { problem: `alias ${JSON.stringify(alias)}: ${EKS_NODE_ALIAS_FAMILY} only supports @latest (it means al2023@latest)` };
    return { family: 'al2023', version, amiFamily: 'AL2023' };
  }
  const known = AMI_ALIAS_FAMILIES.find((f) => f === family);
  if (known === undefined) {
    return {
      problem: `alias ${JSON.stringify(alias)}: unknown AMI family ${JSON.stringify(family)}; supported: ${[...AMI_ALIAS_FAMILIES, EKS_NODE_ALIAS_FAMILY].map((f) => `${f}@latest`).join(', ')} (or a pinned @vX version)`,
    };
  }
  if (version !== 'latest' && !/^v[0-9A-Za-z.\-_]+$/.test(version)) {
    return { problem: `alias ${JSON.stringify(alias)}: the version must be latest or a pinned version such as v20240625` };
  }
  if (known.startsWith('windows') && version !== 'latest') return { problem: `alias ${JSON.stringify(alias)}: Windows families only support @latest` };
  return { family: known, version, amiFamily: FAMILY_OF_ALIAS[known] };
}

/**
 * Parses an AMI alias (`family@version`).
 * @param alias e.g. `al2023@latest`, `bottlerocket@v1.20.0`, or Skiff's `eks-node@latest`
 * @returns the family, version and implied amiFamily, or undefined when the alias is invalid (see {@link amiAliasProblem})
 * @example parseAmiAlias('eks-node@latest') // { family: 'al2023', version: 'latest', amiFamily: 'AL2023' }
 */
export function parseAmiAlias(alias: string): AmiAlias | undefined {
  const resolved = resolveAlias(alias);
  return 'problem' in resolved ? undefined : resolved;
}

/**
 * Why `alias` is not a valid AMI alias, or undefined when it is.
 * @example amiAliasProblem('foo@latest') // 'alias "foo@latest": unknown AMI family "foo"; supported: …'
 */
export function amiAliasProblem(alias: string): string | undefined {
  const resolved = resolveAlias(alias);
  return 'problem' in resolved ? resolved.problem : undefined;
}

/** Tag map used by selector terms: no empty keys or values (`*` selects any value). At most 20 entries. */
const selectorTagsSchema = ownKeysRecord(z.string(), z.string({ error: (iss) => (iss.input === undefined ? undefined : 'tag values must be strings') }))
  .superRefine((tags, ctx) => {
    const entries = Object.entries(tags);
    if (entries.length > 20) ctx.addIssue({ code: 'custom', message: 'at most 20 tags per selector term' });
    for (const [k, v] of entries) {
      if (k === '' || v === '') ctx.addIssue({ code: 'custom', path: [k], message: "empty tag keys or values aren't supported" });
    }
  });

/** Reports an issue when more than one of `exclusive` and any other field of `term` are set. */
function requireAlone(term: Record<string, unknown>, field: string, ctx: z.RefinementCtx, what: string): void {
  if (term[field] === undefined) return;
  const others = Object.keys(term).filter((k) => k !== field && term[k] !== undefined);
  if (others.length > 0) {
    ctx.addIssue({ code: 'custom', path: [field], message: `'${field}' is mutually exclusive, cannot be set with ${others.map((o) => `'${o}'`).join(', ')} in ${what}` });
  }
}

/** One AMI selector term: `alias` | `id` | `name` (+`owner`) | `tags` (+`owner`) | `ssmParameter`. */
export const amiSelectorTermSchema = z
  .strictObject({
    alias: z.string().max(30).optional(),
    id: z.string().regex(/^ami-[0-9a-z]+$/, { error: 'an AMI id looks like ami-0123456789abcdef0' }).optional(),
    name: z.string().min(1).optional(),
    owner: z.string().min(1).optional(),
    tags: selectorTagsSchema.optional(),
    ssmParameter: z.string().min(1).optional(),
  })
  .superRefine((term, ctx) => {
    if (term.alias === undefined && term.id === undefined && term.name === undefined && term.tags === undefined && term.ssmParameter === undefined) {
      ctx.addIssue({ code: 'custom', message: "expected at least one of 'alias', 'id', 'name', 'tags', 'ssmParameter'" });
    }
    if (term.alias !== undefined) {
      const problem = amiAliasProblem(term.alias);
      if (problem) ctx.addIssue({ code: 'custom', path: ['alias'], message: problem });
    }
    requireAlone(term, 'alias', ctx, 'amiSelectorTerms');
    requireAlone(term, 'id', ctx, 'amiSelectorTerms');
    requireAlone(term, 'ssmParameter', ctx, 'amiSelectorTerms');
  });

/** One subnet selector term: `tags` or `id`. */
export const subnetSelectorTermSchema = z
  .strictObject({
    id: z.string().regex(/^subnet-[0-9a-z]+$/, { error: 'a subnet id looks like subnet-0123456789abcdef0' }).optional(),
    tags: selectorTagsSchema.optional(),
  })
  .superRefine((term, ctx) => {
    if (term.id === undefined && term.tags === undefined) ctx.addIssue({ code: 'custom', message: "expected at least one of 'tags', 'id'" });
    requireAlone(term, 'id', ctx, 'subnetSelectorTerms');
  });

/** One security-group selector term: `tags`, `id` or `name`. */
export const securityGroupSelectorTermSchema = z
  .strictObject({
    id: z.string().regex(/^sg-[0-9a-z]+$/, { error: 'a security group id looks like sg-0123456789abcdef0' }).optional(),
    name: z.string().min(1).optional(),
    tags: selectorTagsSchema.optional(),
  })
  .superRefine((term, ctx) => {
    if (term.id === undefined && term.tags === undefined && term.name === undefined) {
      ctx.addIssue({ code: 'custom', message: "expected at least one of 'tags', 'id', 'name'" });
    }
    requireAlone(term, 'id', ctx, 'securityGroupSelectorTerms');
    requireAlone(term, 'name', ctx, 'securityGroupSelectorTerms');
  });

/** EBS volume types. */
export const VOLUME_TYPES = ['standard', 'io1', 'io2', 'gp2', 'sc1', 'st1', 'gp3'] as const;

/**
 * The sizes an EBS `volumeSize` may take: 1–59,000 Gi, 1–64,000 G, 1–58 Ti or 1–64 T, written in one of those units
 * (aws `pkg/apis/v1/ec2nodeclass.go` `BlockDevice.VolumeSize`, its kubebuilder pattern; EBS allows up to 64 TiB).
 */
export const VOLUME_SIZE_PATTERN = /^((?:[1-9][0-9]{0,3}|[1-4][0-9]{4}|[5][0-8][0-9]{3}|59000)Gi|(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|[6][0-3][0-9]{3}|64000)G|([1-9]|[1-5][0-7]|58)Ti|([1-9]|[1-5][0-9]|6[0-3]|64)T)$/;

/** An EBS `volumeSize` as written (a string or number matching {@link VOLUME_SIZE_PATTERN}); the CRDs carry the pattern. */
export const volumeSizeSchema = z
  .union([z.string(), z.number()])
  .refine((v) => VOLUME_SIZE_PATTERN.test(String(v)), { message: 'volumeSize must be a whole number of Gi (up to 59000Gi), G (64000G), Ti (58Ti) or T (64T), as Karpenter\'s EC2NodeClass pattern allows' });

/** `blockDeviceMappings[].ebs`. `volumeSize` is a quantity (`50Gi`); one of `volumeSize`/`snapshotID` is required. */
export const ebsSchema = z
  .strictObject({
    volumeSize: volumeSizeSchema.pipe(quantitySchema).optional(),
    volumeType: z.enum(VOLUME_TYPES).optional(),
    iops: z.int().min(0).optional(),
    throughput: z.int().min(0).optional(),
    encrypted: z.boolean().optional(),
    deleteOnTermination: z.boolean().optional(),
    kmsKeyID: z.string().optional(),
    snapshotID: z.string().optional(),
    volumeInitializationRate: z.int().min(0).optional(),
  })
  .superRefine((ebs, ctx) => {
    if (ebs.volumeSize === undefined && ebs.snapshotID === undefined) ctx.addIssue({ code: 'custom', message: 'snapshotID or volumeSize must be defined' });
  });

/** One block device mapping. */
export const blockDeviceMappingSchema = z.strictObject({
  deviceName: z.string().min(1).optional(),
  rootVolume: z.boolean().optional(),
  ebs: ebsSchema.optional(),
});

/** Kubelet eviction signals Karpenter accepts. */
export const EVICTION_SIGNALS = ['memory.available', 'nodefs.available', 'nodefs.inodesFree', 'imagefs.available', 'imagefs.inodesFree', 'pid.available'] as const;

/** A map keyed by eviction signal, values a quantity or a percentage. */
const evictionThresholdsSchema = z.partialRecord(
  z.enum(EVICTION_SIGNALS, { error: `valid eviction signals are ${EVICTION_SIGNALS.join(', ')}` }),
  z.string().regex(/^((\d{1,2}(\.\d{1,2})?|100(\.0{1,2})?)%|[+]?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?[0-9]+))?)$/, {
    error: 'an eviction threshold is a quantity (e.g. 100Mi) or a percentage (e.g. 10%)',
  }),
);

/** Reserved-resource map: keys cpu, memory, ephemeral-storage, pid; non-negative quantities. */
const reservedSchema = z.partialRecord(
  z.enum(['cpu', 'memory', 'ephemeral-storage', 'pid'], { error: 'valid keys are cpu, memory, ephemeral-storage, pid' }),
  quantitySchema,
);

/** `spec.kubelet`: the subset of kubelet configuration Karpenter passes through. */
export const kubeletSchema = z
  .strictObject({
    clusterDNS: z.array(z.string()).optional(),
    maxPods: z.int().min(0).optional(),
    podsPerCore: z.int().min(0).optional(),
    systemReserved: reservedSchema.optional(),
    kubeReserved: reservedSchema.optional(),
    evictionHard: evictionThresholdsSchema.optional(),
    evictionSoft: evictionThresholdsSchema.optional(),
    evictionSoftGracePeriod: z.partialRecord(z.enum(EVICTION_SIGNALS), z.string()).optional(),
    evictionMaxPodGracePeriod: z.int().optional(),
    imageGCHighThresholdPercent: z.int().min(0).max(100).optional(),
    imageGCLowThresholdPercent: z.int().min(0).max(100).optional(),
    cpuCFSQuota: z.boolean().optional(),
  })
  .superRefine((k, ctx) => {
    if (k.imageGCHighThresholdPercent !== undefined && k.imageGCLowThresholdPercent !== undefined && k.imageGCHighThresholdPercent <= k.imageGCLowThresholdPercent) {
      ctx.addIssue({ code: 'custom', path: ['imageGCHighThresholdPercent'], message: 'imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent' });
    }
    for (const signal of Object.keys(k.evictionSoft ?? {})) {
      if (!(signal in (k.evictionSoftGracePeriod ?? {}))) {
        ctx.addIssue({ code: 'custom', path: ['evictionSoft', signal], message: `evictionSoft ${signal} has no matching evictionSoftGracePeriod` });
      }
    }
    for (const signal of Object.keys(k.evictionSoftGracePeriod ?? {})) {
      if (!(signal in (k.evictionSoft ?? {}))) {
        ctx.addIssue({ code: 'custom', path: ['evictionSoftGracePeriod', signal], message: `evictionSoftGracePeriod ${signal} has no matching evictionSoft` });
      }
    }
  });

/** `spec.metadataOptions` (IMDS), with Karpenter's defaults: enabled, IPv6 disabled, hop limit 1, tokens required. */
export const metadataOptionsSchema = z.strictObject({
  httpEndpoint: z.enum(['enabled', 'disabled']).default('enabled'),
  httpProtocolIPv6: z.enum(['enabled', 'disabled']).default('disabled'),
  httpPutResponseHopLimit: z.int().min(1).max(64).default(1),
  httpTokens: z.enum(['required', 'optional']).default('required'),
});

/** Tag keys Karpenter reserves for itself (CRD rules on `spec.tags`). */
const RESTRICTED_TAGS = ['karpenter.sh/nodepool', 'karpenter.sh/nodeclaim', 'karpenter.sh/managed-by', 'karpenter.k8s.aws/ec2nodeclass', 'eks:eks-cluster-name'];

/** `spec.tags`: tags applied to instances, volumes and launch templates; restricted keys rejected. */
const nodeClassTagsSchema = ownKeysRecord(z.string(), z.string()).superRefine((tags, ctx) => {
  for (const key of Object.keys(tags)) {
    if (key === '') ctx.addIssue({ code: 'custom', path: [key], message: "empty tag keys aren't supported" });
    else if (key.startsWith('kubernetes.io/cluster')) ctx.addIssue({ code: 'custom', path: [key], message: 'tag contains a restricted tag matching kubernetes.io/cluster/' });
    else if (RESTRICTED_TAGS.includes(key)) ctx.addIssue({ code: 'custom', path: [key], message: `tag contains a restricted tag matching ${key}` });
  }
});

/** `spec` of an EC2NodeClass. */
export const ec2NodeClassSpecSchema = z
  .strictObject({
    amiFamily: z.enum(AMI_FAMILIES).optional(),
    amiSelectorTerms: z.array(amiSelectorTermSchema).min(1, { error: 'amiSelectorTerms must not be empty' }).max(30),
    subnetSelectorTerms: z.array(subnetSelectorTermSchema).min(1, { error: 'subnetSelectorTerms cannot be empty' }).max(30),
    securityGroupSelectorTerms: z.array(securityGroupSelectorTermSchema).min(1, { error: 'securityGroupSelectorTerms cannot be empty' }).max(30),
    capacityReservationSelectorTerms: z
      .array(z.strictObject({ id: z.string().optional(), ownerID: z.string().optional(), tags: selectorTagsSchema.optional(), instanceMatchCriteria: z.string().optional() }))
      .optional(),
    placementGroupSelector: z.looseObject({}).optional(),
    role: z.string().min(1, { error: 'role cannot be empty' }).optional(),
    instanceProfile: z.string().min(1, { error: 'instanceProfile cannot be empty' }).optional(),
    userData: z.string().optional(),
    tags: nodeClassTagsSchema.optional(),
    blockDeviceMappings: z.array(blockDeviceMappingSchema).max(50).optional(),
    instanceStorePolicy: z.enum(['RAID0']).optional(),
    kubelet: kubeletSchema.optional(),
    metadataOptions: metadataOptionsSchema.prefault({}),
    associatePublicIPAddress: z.boolean().optional(),
    detailedMonitoring: z.boolean().optional(),
    ipPrefixCount: z.int().min(0).optional(),
    networkInterfaces: z.array(z.looseObject({})).optional(),
    connectionTracking: z.looseObject({}).optional(),
    cpuOptions: z.looseObject({}).optional(),
    context: z.string().optional(),
  })
  .superRefine((spec, ctx) => {
    if ((spec.role === undefined) === (spec.instanceProfile === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: spec.role !== undefined ? ['instanceProfile'] : [],
        message: "must specify exactly one of ['role', 'instanceProfile']",
      });
    }
    const aliasIndex = spec.amiSelectorTerms.findIndex((t) => t.alias !== undefined);
    if (aliasIndex >= 0 && spec.amiSelectorTerms.length > 1) {
      ctx.addIssue({
        code: 'custom',
        path: ['amiSelectorTerms', aliasIndex, 'alias'],
        message: "'alias' is mutually exclusive, cannot be set with a combination of other amiSelectorTerms",
      });
    }
    const aliasTerm = spec.amiSelectorTerms[aliasIndex];
    const alias = aliasTerm?.alias !== undefined ? parseAmiAlias(aliasTerm.alias) : undefined;
    if (aliasIndex < 0 && spec.amiFamily === undefined) {
      ctx.addIssue({ code: 'custom', path: ['amiFamily'], message: 'must specify amiFamily if amiSelectorTerms does not contain an alias' });
    }
    if (alias !== undefined && spec.amiFamily !== undefined && spec.amiFamily !== 'Custom' && spec.amiFamily !== alias.amiFamily) {
      ctx.addIssue({ code: 'custom', path: ['amiFamily'], message: `if set, amiFamily must be '${alias.amiFamily}' or 'Custom' when using a ${alias.family} alias` });
    }
    const roots = (spec.blockDeviceMappings ?? []).filter((m) => m.rootVolume === true).length;
    if (roots > 1) ctx.addIssue({ code: 'custom', path: ['blockDeviceMappings'], message: 'must have only one blockDeviceMappings with rootVolume' });
  });

/**
 * A `karpenter.k8s.aws/v1` EC2NodeClass. `metadataOptions` gets Karpenter's defaults; everything else is as
 * written. Use {@link ec2NodeClassAmiFamily} for the effective AMI family and {@link parseAmiAlias} for an alias.
 * @example ec2NodeClassSchema.parse(doc).spec.amiSelectorTerms[0]?.alias // 'eks-node@latest'
 */
export const ec2NodeClassSchema = z.strictObject({
  apiVersion: z.literal('karpenter.k8s.aws/v1'),
  kind: z.literal('EC2NodeClass'),
  metadata: objectMetaSchema,
  spec: ec2NodeClassSpecSchema,
  // What Karpenter's controller resolved (kept from a `kubectl get ec2nodeclasses -o yaml` snapshot): only the
  // subnets' zones are read (`ec2NodeClassSubnetZones`); the rest is tolerated as written.
  status: z
    .looseObject({
      subnets: z.array(z.looseObject({ id: z.string(), zone: z.string().min(1), zoneID: z.string().optional() })).optional(),
    })
    .optional(),
});

/** A parsed EC2NodeClass (see {@link ec2NodeClassSchema}). */
export type EC2NodeClass = z.output<typeof ec2NodeClassSchema>;
/**
 * The zones of the subnets an EC2NodeClass's status lists (`status.subnets[].zone`, what Karpenter's subnet
 * controller resolved from `subnetSelectorTerms`), sorted; undefined when the status lists none (a manifest written
 * by hand: nothing was resolved). Karpenter offers an instance type only in these zones (aws
 * `pkg/providers/instancetype/types.go computeRequirements`: offering zones ∩ subnet zones).
 * @example ec2NodeClassSubnetZones({ status: { subnets: [{ id: 'subnet-1', zone: 'us-west-2b' }] } }) // ['us-west-2b']
 */
export function ec2NodeClassSubnetZones(nodeClass: { readonly status?: { readonly subnets?: readonly { readonly zone: string }[] } }): string[] | undefined {
  const subnets = nodeClass.status?.subnets;
  if (!subnets || subnets.length === 0) return undefined;
  return [...new Set(subnets.map((s) => s.zone))].sort();
}

/** A parsed `spec` of an EC2NodeClass. */
export type EC2NodeClassSpec = z.output<typeof ec2NodeClassSpecSchema>;
/** A parsed AMI selector term. */
export type AmiSelectorTerm = z.output<typeof amiSelectorTermSchema>;
/** A parsed block device mapping. */
export type BlockDeviceMapping = z.output<typeof blockDeviceMappingSchema>;

/** The part of an EC2NodeClass that decides its AMI family (a parsed EC2NodeClass is assignable to it). */
export interface AmiFamilySource {
  readonly spec: {
    readonly amiFamily?: AmiFamily;
    readonly amiSelectorTerms?: readonly { readonly alias?: string }[];
  };
}

/**
 * The AMI family an EC2NodeClass launches: `spec.amiFamily` when set (validation allows only the alias's family or
 * `Custom` next to an alias), else the family its alias implies, else `Custom`.
 * Source: aws `pkg/apis/v1/ec2nodeclass.go` `AMIFamily`.
 * @param nodeClass a parsed EC2NodeClass (valid, so one of the two is set)
 * @example ec2NodeClassAmiFamily(seedDefault) // 'AL2023' (from eks-node@latest)
 */
export function ec2NodeClassAmiFamily(nodeClass: AmiFamilySource): AmiFamily {
  if (nodeClass.spec.amiFamily !== undefined) return nodeClass.spec.amiFamily;
  for (const term of nodeClass.spec.amiSelectorTerms ?? []) {
    if (term.alias === undefined) continue;
    const alias = parseAmiAlias(term.alias);
    if (alias !== undefined) return alias.amiFamily;
  }
  return 'Custom';
}
