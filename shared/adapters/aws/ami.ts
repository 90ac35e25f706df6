/**
 * AMI resolution for an EC2NodeClass: `alias` terms through the public SSM parameters AWS publishes for the
 * EKS-optimized images, `id` / `name` (+`owner`) / `tags` / `ssmParameter` terms through EC2 DescribeImages.
 *
 * Sources: aws/karpenter-provider-aws `pkg/providers/amifamily/{al2023,al2,bottlerocket,windows,ami,types}.go`
 * (SSM paths, variants per path, newest-image-wins, default owners), docs `concepts/nodeclasses.md`
 * (`amiSelectorTerms`); AWS docs "Retrieve recommended Amazon Linux AMI IDs" / "Retrieve recommended Bottlerocket
 * AMI IDs" / "Retrieve recommended Microsoft Windows AMI IDs" (EKS user guide); docs/karpenter-semantics.md#ami-aliases
 * (`eks-node@latest` is al2023@latest).
 */
import { paginateDescribeImages, type DescribeImagesCommandInput, type EC2Client, type Filter, type Image } from '@aws-sdk/client-ec2';
import { GetParametersCommand, type SSMClient } from '@aws-sdk/client-ssm';
import { ec2NodeClassAmiFamily, parseAmiAlias, type AmiAlias, type AmiFamily, type AmiSelectorTerm, type EC2NodeClass } from '../../core/api/ec2nodeclass.js';
import { LABEL_ARCH, type AWS_INSTANCE_LABELS } from '../../core/api/labels.js';
import { CloudProviderError, SkiffError } from '../../core/errors.js';
import { systemClock, type Clock } from '../../ports/clock.js';
import { awsError } from './sdk-errors.js';
import { TtlCache } from './ttl-cache.js';

/** CPU architectures as Kubernetes names them (`kubernetes.io/arch`). */
export type AmiArchitecture = 'amd64' | 'arm64';

/** The accelerator builds AWS publishes for the EKS-optimized images (Karpenter's `Variant`). */
export const AMI_VARIANTS = ['standard', 'nvidia', 'neuron'] as const;
/** One of {@link AMI_VARIANTS}. */
export type AmiVariant = (typeof AMI_VARIANTS)[number];

/** `karpenter.k8s.aws/instance-gpu-manufacturer`: `nvidia` types need the nvidia variant. */
export const LABEL_GPU_MANUFACTURER = 'karpenter.k8s.aws/instance-gpu-manufacturer' satisfies (typeof AWS_INSTANCE_LABELS)[number];
/** `karpenter.k8s.aws/instance-accelerator-manufacturer`: `aws` (Inferentia, Trainium) types need the neuron variant. */
export const LABEL_ACCELERATOR_MANUFACTURER = 'karpenter.k8s.aws/instance-accelerator-manufacturer' satisfies (typeof AWS_INSTANCE_LABELS)[number];

/** One AMI an EC2NodeClass resolves to. */
export interface ResolvedAmi {
  /** e.g. `ami-0123456789abcdef0`. */
  readonly imageId: string;
  /** The image's architecture (EC2 `x86_64` → `amd64`, `arm64` → `arm64`). */
  readonly architecture: AmiArchitecture;
  /**
   * The instance types the image is built for: `standard` (no NVIDIA GPU, no AWS accelerator), `nvidia`, `neuron`.
   * `undefined` for images selected by `id`/`name`/`tags`/`ssmParameter` (EC2 does not say what they are built for)
   * and for the Windows alias images (Karpenter gives them OS and build requirements only): as in Karpenter, they
   * serve every instance type of their architecture.
   */
  readonly variant: AmiVariant | undefined;
  /** The EC2NodeClass's effective AMI family (drives userData and default block devices). */
  readonly amiFamily: AmiFamily;
  /** Where the id came from: the SSM parameter name, or `ec2:DescribeImages`. */
  readonly source: string;
  /** The image name (DescribeImages only). */
  readonly name?: string;
  /** The image creation time, ISO-8601 UTC (DescribeImages only). */
  readonly creationDate?: string;
}

/**
 * The variant an instance type needs: `nvidia` when `karpenter.k8s.aws/instance-gpu-manufacturer=nvidia`, `neuron`
 * when `karpenter.k8s.aws/instance-accelerator-manufacturer=aws`, `standard` otherwise (AMD GPUs and other
 * accelerators included).
 * Source: Karpenter `amifamily/types.go` `Variant.Requirements` (GPU / accelerator types get the GPU / neuron AMIs).
 * @param labels the instance type's well-known labels
 * @example instanceTypeVariant({ 'karpenter.k8s.aws/instance-gpu-manufacturer': 'nvidia' }) // 'nvidia'
 */
export function instanceTypeVariant(labels: Readonly<Record<string, string>>): AmiVariant {
  if (labels[LABEL_GPU_MANUFACTURER] === 'nvidia') return 'nvidia';
  if (labels[LABEL_ACCELERATOR_MANUFACTURER] === 'aws') return 'neuron';
  return 'standard';
}

/**
 * Whether an instance type with `labels` can launch from `ami`: `kubernetes.io/arch` must equal the AMI's
 * architecture, and, when the AMI has a variant, {@link instanceTypeVariant} must equal it.
 * @param ami the AMI (only `architecture` and `variant` are read)
 * @param labels the instance type's well-known labels
 * @example amiMatches({ architecture: 'amd64', variant: 'nvidia' }, { 'kubernetes.io/arch': 'amd64', 'karpenter.k8s.aws/instance-gpu-manufacturer': 'nvidia' }) // true
 */
export function amiMatches(ami: Pick<ResolvedAmi, 'architecture' | 'variant'>, labels: Readonly<Record<string, string>>): boolean {
  if (labels[LABEL_ARCH] !== ami.architecture) return false;
  return ami.variant === undefined || ami.variant === instanceTypeVariant(labels);
}

/** One SSM parameter an alias reads, and what the image it names serves. */
export interface AliasParameter {
  /** The full parameter name, e.g. `/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/recommended/image_id`. */
  readonly name: string;
  readonly architecture: AmiArchitecture;
  /**
   * The variants the image serves (the AL2 GPU image and the Bottlerocket x86_64 image serve two); `undefined` when
   * the image serves every instance type of its architecture (the Windows images).
   */
  readonly variants: readonly (AmiVariant | undefined)[];
}

/** EC2's architecture names for the Kubernetes ones. */
const EC2_ARCH: Readonly<Record<AmiArchitecture, string>> = { amd64: 'x86_64', arm64: 'arm64' };

/**
 * The Kubernetes `major.minor` of a version string.
 * @param version `1.31`, `v1.31.2`, `1.31.2-eks-a737599`, …
 * @throws {SkiffError} when `version` does not start with `major.minor`
 * @example kubernetesMinorVersion('v1.31.2') // '1.31'
 */
export function kubernetesMinorVersion(version: string): string {
  const match = /^v?(\d+)\.(\d+)/.exec(version.trim());
  if (!match) throw new SkiffError(`Kubernetes version ${JSON.stringify(version)} does not start with major.minor (e.g. 1.31)`);
  return `${match[1]}.${match[2]}`;
}

/**
 * The SSM parameters an AMI alias reads, in a fixed order (amd64 before arm64, standard before nvidia before neuron).
 *
 * - `al2023`: `/aws/service/eks/optimized-ami/<k8s>/amazon-linux-2023/<x86_64|arm64>/<variant>/recommended/image_id`
 *   (x86_64: standard, nvidia, neuron; arm64: standard, nvidia); a pinned `vYYYYMMDD` replaces `recommended` with
 *   `amazon-eks-node-al2023-<arch>-<variant>-<k8s>-<version>` (Karpenter `al2023.go`).
 * - `al2`: `/aws/service/eks/optimized-ami/<k8s>/amazon-linux-2[-arm64|-gpu]/recommended/image_id`; the GPU image
 *   serves nvidia and neuron types; pinned: `amazon-eks[-arm64|-gpu]-node-<k8s>-<version>` (Karpenter `al2.go`).
 * - `bottlerocket`: `/aws/service/bottlerocket/aws-k8s-<k8s>[-nvidia]/<x86_64|arm64>/<latest|version>/image_id`,
 *   the version without its leading `v`; the x86_64 standard image serves neuron types too (Karpenter `bottlerocket.go`).
 * - `windows2019|2022|2025`: `/aws/service/ami-windows-latest/Windows_Server-<year>-English-Core-EKS_Optimized-<k8s>/image_id`,
 *   amd64 only, with no variant: it serves GPU and accelerator types too, as Karpenter's Windows image carries only
 *   OS and build requirements (Karpenter `windows.go` `DescribeImageQuery`; only `@latest` is valid).
 * @param alias a parsed alias (`eks-node@latest` is already `al2023@latest`)
 * @param kubernetesVersion the cluster's `major.minor`, e.g. `1.31`
 * @example aliasParameters(parseAmiAlias('bottlerocket@latest')!, '1.31')[0]?.name // '/aws/service/bottlerocket/aws-k8s-1.31/x86_64/latest/image_id'
 */
export function aliasParameters(alias: AmiAlias, kubernetesVersion: string): AliasParameter[] {
  const k8s = kubernetesVersion;
  const latest = alias.version === 'latest';
  switch (alias.family) {
    case 'al2023': {
      const out: AliasParameter[] = [];
      const perArch: readonly [AmiArchitecture, readonly AmiVariant[]][] = [
        ['amd64', ['standard', 'nvidia', 'neuron']],
        ['arm64', ['standard', 'nvidia']],
      ];
      for (const [architecture, variants] of perArch) {
        const arch = EC2_ARCH[architecture];
        for (const variant of variants) {
          const leaf = latest ? 'recommended' : `amazon-eks-node-al2023-${arch}-${variant}-${k8s}-${alias.version}`;
          out.push({ name: `/aws/service/eks/optimized-ami/${k8s}/amazon-linux-2023/${arch}/${variant}/${leaf}/image_id`, architecture, variants: [variant] });
        }
      }
      return out;
    }
    case 'al2': {
      const leaf = (infix: string): string => (latest ? 'recommended' : `amazon-eks${infix}-node-${k8s}-${alias.version}`);
      return [
        { name: `/aws/service/eks/optimized-ami/${k8s}/amazon-linux-2/${leaf('')}/image_id`, architecture: 'amd64', variants: ['standard'] },
        { name: `/aws/service/eks/optimized-ami/${k8s}/amazon-linux-2-gpu/${leaf('-gpu')}/image_id`, architecture: 'amd64', variants: ['nvidia', 'neuron'] },
        { name: `/aws/service/eks/optimized-ami/${k8s}/amazon-linux-2-arm64/${leaf('-arm64')}/image_id`, architecture: 'arm64', variants: ['standard'] },
      ];
    }
    case 'bottlerocket': {
      const version = latest ? 'latest' : alias.version.replace(/^v/, '');
      return [
        { name: `/aws/service/bottlerocket/aws-k8s-${k8s}/x86_64/${version}/image_id`, architecture: 'amd64', variants: ['standard', 'neuron'] },
        { name: `/aws/service/bottlerocket/aws-k8s-${k8s}-nvidia/x86_64/${version}/image_id`, architecture: 'amd64', variants: ['nvidia'] },
        { name: `/aws/service/bottlerocket/aws-k8s-${k8s}/arm64/${version}/image_id`, architecture: 'arm64', variants: ['standard'] },
        { name: `/aws/service/bottlerocket/aws-k8s-${k8s}-nvidia/arm64/${version}/image_id`, architecture: 'arm64', variants: ['nvidia'] },
      ];
    }
    case 'windows2019':
    case 'windows2022':
    case 'windows2025': {
      const year = alias.family.slice('windows'.length);
      return [{ name: `/aws/service/ami-windows-latest/Windows_Server-${year}-English-Core-EKS_Optimized-${k8s}/image_id`, architecture: 'amd64', variants: [undefined] }];
    }
  }
}

/** Owners searched for a `name` term without `owner` (Karpenter: "self" and "amazon", so no stranger's AMI is picked). */
export const DEFAULT_NAME_OWNERS = ['self', 'amazon'] as const;

/**
 * EC2 filters for a selector term's tags: `tag:<key>` = value, or `tag-key` = key when the value is `*`.
 * Source: Karpenter `pkg/providers/{subnet,securitygroup,amifamily}` tag filters; docs `concepts/nodeclasses.md`.
 * @example tagFilters({ 'karpenter.sh/discovery': 'my-cluster', team: '*' })
 * // [{ Name: 'tag:karpenter.sh/discovery', Values: ['my-cluster'] }, { Name: 'tag-key', Values: ['team'] }]
 */
export function tagFilters(tags: Readonly<Record<string, string>> | undefined): Filter[] {
  return Object.entries(tags ?? {}).map(([key, value]) => (value === '*' ? { Name: 'tag-key', Values: [key] } : { Name: `tag:${key}`, Values: [value] }));
}

/**
 * The DescribeImages requests for the non-alias AMI terms (terms are ORed: one request each, all `id` terms and
 * the image ids read from `ssmParameter` terms share one `image-id` request). `name` + `tags` in one term are ANDed.
 * Every request sets `IncludeDeprecated` so a pinned, since-deprecated image still resolves (as Karpenter does).
 * @param terms the node class's `amiSelectorTerms` (alias terms are skipped)
 * @param ssmImageIds image ids already read from the `ssmParameter` terms
 * @example describeImagesRequests([{ name: 'my-ami-*' }], []) // [{ Filters: [{ Name: 'name', Values: ['my-ami-*'] }], Owners: ['self', 'amazon'], IncludeDeprecated: true }]
 */
export function describeImagesRequests(terms: readonly AmiSelectorTerm[], ssmImageIds: readonly string[]): DescribeImagesCommandInput[] {
  const out: DescribeImagesCommandInput[] = [];
  const ids = [...new Set([...terms.flatMap((t) => (t.id !== undefined ? [t.id] : [])), ...ssmImageIds])];
  if (ids.length > 0) out.push({ Filters: [{ Name: 'image-id', Values: ids }], IncludeDeprecated: true });
  for (const term of terms) {
    if (term.name === undefined && term.tags === undefined) continue;
    const filters: Filter[] = [...(term.name !== undefined ? [{ Name: 'name', Values: [term.name] }] : []), ...tagFilters(term.tags)];
    const owners = term.owner !== undefined ? [term.owner] : term.name !== undefined ? [...DEFAULT_NAME_OWNERS] : undefined;
    out.push({ Filters: filters, ...(owners ? { Owners: owners } : {}), IncludeDeprecated: true });
  }
  return out;
}

/**
 * The newest image per architecture (creation date, then the smaller image id), skipping images EC2 cannot launch
 * (state other than `available`) or of another architecture. Source: Karpenter `amifamily/ami.go` (newest image
 * per requirement set wins), `types.go` `AMIs.Sort`.
 * @returns at most one image per architecture, amd64 first
 */
export function newestPerArchitecture(images: readonly Image[]): { readonly image: Image; readonly architecture: AmiArchitecture }[] {
  const best = new Map<AmiArchitecture, Image>();
  for (const image of images) {
    if (image.ImageId === undefined) continue;
    if (image.State !== undefined && image.State !== 'available') continue;
    const architecture = image.Architecture === 'x86_64' ? 'amd64' : image.Architecture === 'arm64' ? 'arm64' : undefined;
    if (architecture === undefined) continue;
    const current = best.get(architecture);
    if (current === undefined || newer(image, current)) best.set(architecture, image);
  }
  return (['amd64', 'arm64'] as const).flatMap((architecture) => {
    const image = best.get(architecture);
    return image ? [{ image, architecture }] : [];
  });
}

/** True when `a` is newer than `b` (creation date; ties: the smaller image id wins). */
function newer(a: Image, b: Image): boolean {
  const ta = Date.parse(a.CreationDate ?? '');
  const tb = Date.parse(b.CreationDate ?? '');
  const na = Number.isNaN(ta) ? -Infinity : ta;
  const nb = Number.isNaN(tb) ? -Infinity : tb;
  if (na !== nb) return na > nb;
  return (a.ImageId ?? '') < (b.ImageId ?? '');
}

/** Dependencies and settings of {@link AmiResolver}. */
export interface AmiResolverProps {
  readonly ec2: EC2Client;
  readonly ssm: SSMClient;
  /** The cluster's Kubernetes version (`1.31`, `v1.31.2`, …); only `major.minor` is used. */
  readonly kubernetesVersion: string;
  /** @default systemClock */
  readonly clock?: Clock;
  /**
   * How long an SSM parameter value is reused, ms. Source: Karpenter `SSMCacheTTL`.
   * @default 86_400_000 (24 h)
   */
  readonly ssmTtlMs?: number;
  /**
   * How long a missing SSM parameter (e.g. no neuron image for this Kubernetes version) is remembered as missing, ms.
   * @default 3_600_000 (1 h)
   */
  readonly missingParameterTtlMs?: number;
  /**
   * How long DescribeImages results for a node class's terms are reused, ms. Source: Karpenter `AMI_REFRESH_INTERVAL`.
   * @default 60_000 (1 min)
   */
  readonly imagesTtlMs?: number;
}

/** SSM's GetParameters limit. */
const SSM_BATCH = 10;

/**
 * Resolves an EC2NodeClass's `amiSelectorTerms` to AMIs.
 *
 * An `alias` term (the only term when present) reads the SSM parameters of {@link aliasParameters} (cached 24 h) and
 * yields one {@link ResolvedAmi} per (image, variant) found. Other terms are ORed into DescribeImages requests
 * ({@link describeImagesRequests}); the newest image per architecture wins, with no variant. `ssmParameter` terms
 * are read first and join the `image-id` request.
 * @example
 * const amis = new AmiResolver({ ec2, ssm, kubernetesVersion: '1.31' });
 * const resolved = await amis.resolve(nodeClass); // [{ imageId: 'ami-…', architecture: 'amd64', variant: 'standard', amiFamily: 'AL2023', … }, …]
 */
export class AmiResolver {
  readonly #ec2: EC2Client;
  readonly #ssm: SSMClient;
  readonly #k8s: string;
  readonly #parameters: TtlCache<string, string>;
  readonly #missing: TtlCache<string, true>;
  readonly #images: TtlCache<string, ResolvedAmi[]>;

  /** @throws {SkiffError} when `kubernetesVersion` has no `major.minor` */
  constructor(props: AmiResolverProps) {
    const clock = props.clock ?? systemClock;
    this.#ec2 = props.ec2;
    this.#ssm = props.ssm;
    this.#k8s = kubernetesMinorVersion(props.kubernetesVersion);
    this.#parameters = new TtlCache(props.ssmTtlMs ?? 86_400_000, clock);
    this.#missing = new TtlCache(props.missingParameterTtlMs ?? 3_600_000, clock);
    this.#images = new TtlCache(props.imagesTtlMs ?? 60_000, clock);
  }

  /** The Kubernetes `major.minor` the alias parameters are built for. */
  get kubernetesVersion(): string {
    return this.#k8s;
  }

  /**
   * The AMIs `nodeClass` selects, in a stable order (alias: parameter order; otherwise amd64 then arm64).
   * @throws {CloudProviderError} code `AMINotFound` when nothing matches (the message names the node class and its terms)
   * @throws {ThrottledError} when SSM or EC2 throttles
   * @throws {CloudProviderError} with the AWS error code on any other AWS failure
   */
  async resolve(nodeClass: EC2NodeClass): Promise<ResolvedAmi[]> {
    const amiFamily = ec2NodeClassAmiFamily(nodeClass);
    const aliasTerm = nodeClass.spec.amiSelectorTerms.find((t) => t.alias !== undefined);
    if (aliasTerm?.alias !== undefined) {
      const alias = parseAmiAlias(aliasTerm.alias);
      if (alias === undefined) throw new CloudProviderError(`EC2NodeClass ${nodeClass.metadata.name}: invalid AMI alias ${JSON.stringify(aliasTerm.alias)}`, 'InvalidAMIAlias');
      return this.#resolveAlias(nodeClass.metadata.name, aliasTerm.alias, alias, amiFamily);
    }
    const key = JSON.stringify([amiFamily, canonicalTerms(nodeClass.spec.amiSelectorTerms)]);
    return this.#images.getOrLoad(key, () => this.#resolveImages(nodeClass, amiFamily));
  }

  async #resolveAlias(nodeClass: string, written: string, alias: AmiAlias, amiFamily: AmiFamily): Promise<ResolvedAmi[]> {
    const parameters = aliasParameters(alias, this.#k8s);
    const values = await this.#getParameters(
      parameters.map((p) => p.name),
      `EC2NodeClass ${nodeClass}: SSM GetParameters for alias ${written}`,
    );
    const out: ResolvedAmi[] = [];
    for (const parameter of parameters) {
      const imageId = values.get(parameter.name);
      if (imageId === undefined) continue;
      for (const variant of parameter.variants) out.push({ imageId, architecture: parameter.architecture, variant, amiFamily, source: parameter.name });
    }
    if (out.length === 0) {
      throw new CloudProviderError(
        `EC2NodeClass ${nodeClass}: no AMI for alias ${written} (Kubernetes ${this.#k8s}): none of these SSM parameters exist: ${parameters.map((p) => p.name).join(', ')}`,
        'AMINotFound',
      );
    }
    return out;
  }

  async #resolveImages(nodeClass: EC2NodeClass, amiFamily: AmiFamily): Promise<ResolvedAmi[]> {
    const name = nodeClass.metadata.name;
    const terms = nodeClass.spec.amiSelectorTerms;
    const ssmNames = terms.flatMap((t) => (t.ssmParameter !== undefined ? [t.ssmParameter] : []));
    const ssmValues = ssmNames.length > 0 ? await this.#getParameters(ssmNames, `EC2NodeClass ${name}: SSM GetParameters for ssmParameter terms`) : new Map<string, string>();
    const requests = describeImagesRequests(terms, [...ssmValues.values()]);
    const images: Image[] = [];
    try {
      for (const request of requests) {
        for await (const page of paginateDescribeImages({ client: this.#ec2 }, request)) images.push(...(page.Images ?? []));
      }
    } catch (e) {
      throw awsError(e, `EC2NodeClass ${name}: DescribeImages`);
    }
    const newest = newestPerArchitecture(images);
    if (newest.length === 0) {
      throw new CloudProviderError(`EC2NodeClass ${name}: no amd64 or arm64 AMI matches amiSelectorTerms ${JSON.stringify(terms)}`, 'AMINotFound');
    }
    return newest.map(({ image, architecture }) => ({
      imageId: image.ImageId ?? '',
      architecture,
      variant: undefined,
      amiFamily,
      source: 'ec2:DescribeImages',
      ...(image.Name !== undefined ? { name: image.Name } : {}),
      ...(image.CreationDate !== undefined ? { creationDate: image.CreationDate } : {}),
    }));
  }

  /** Values of the SSM parameters that exist (cached), by name; missing ones are absent from the map. */
  async #getParameters(names: readonly string[], what: string): Promise<Map<string, string>> {
    const values = new Map<string, string>();
    const toFetch: string[] = [];
    for (const name of new Set(names)) {
      const cached = this.#parameters.get(name);
      if (cached !== undefined) values.set(name, cached);
      else if (this.#missing.get(name) === undefined) toFetch.push(name);
    }
    for (let i = 0; i < toFetch.length; i += SSM_BATCH) {
      const batch = toFetch.slice(i, i + SSM_BATCH);
      let output;
      try {
        output = await this.#ssm.send(new GetParametersCommand({ Names: batch }));
      } catch (e) {
        throw awsError(e, what);
      }
      for (const parameter of output.Parameters ?? []) {
        if (parameter.Name === undefined || parameter.Value === undefined) continue;
        this.#parameters.set(parameter.Name, parameter.Value);
        values.set(parameter.Name, parameter.Value);
      }
      for (const name of batch) if (!values.has(name)) this.#missing.set(name, true);
    }
    return values;
  }
}

/** Terms with tag entries sorted, so equal selections share a cache key. */
function canonicalTerms(terms: readonly AmiSelectorTerm[]): unknown[] {
  return terms.map((t) => ({ ...t, ...(t.tags ? { tags: Object.entries(t.tags).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) } : {}) }));
}
