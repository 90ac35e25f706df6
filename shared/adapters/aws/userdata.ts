/**
 * EC2 user data that joins a node to the cluster, per AMI family, merged with the EC2NodeClass's `spec.userData`.
 * Pure functions: the result is plain text (the caller base64-encodes it for the launch template), and equal inputs
 * give byte-equal output (labels and map keys sorted) so launch-template hashes are stable.
 *
 * Layouts (Karpenter's, docs/karpenter-semantics.md#user-data):
 * - AL2023: MIME multipart; Skiff's nodeadm `NodeConfig` first, then the user's part(s) (MIME parts as they are,
 *   else a NodeConfig YAML or a shell script).
 * - AL2: MIME multipart; the user's part(s) first, then a shell part calling `/etc/eks/bootstrap.sh`.
 * - Bottlerocket: TOML; the user's settings merged under Skiff's (Skiff's values win; unknown
 *   `settings.kubernetes` keys and anything outside `settings` are dropped).
 * - Windows: PowerShell calling `Start-EKSBootstrap.ps1`, after the user's script.
 * - Custom: the user data untouched.
 *
 * Sources: aws/karpenter-provider-aws `pkg/providers/amifamily/bootstrap/{nodeadm,eksbootstrap,bottlerocket,
 * bottlerocketsettings,windows,custom,bootstrap}.go` and `mime/mime.go`; `pkg/providers/amifamily/resolver.go`
 * (registration taints include `karpenter.sh/unregistered:NoExecute`); nodeadm API reference (awslabs/amazon-eks-ami
 * `nodeadm/doc/api.md`: `node.eks.aws/v1alpha1` NodeConfig, MIME type `application/node.eks.aws`); Bottlerocket
 * settings reference (`settings.kubernetes.*`); Kubernetes `k8s.io/kubelet/pkg/apis/well_known_labels.go`
 * (`IsKubeletLabel`: which `kubernetes.io` labels a kubelet may set on itself).
 */
import { parse as parseToml, stringify as stringifyToml } from 'smol-toml';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import type { AmiFamily, EC2NodeClassSpec } from '../../core/api/ec2nodeclass.js';
import type { Taint } from '../../core/api/kubernetes.js';
import { UNREGISTERED_TAINT_KEY } from '../../core/api/labels.js';
import { CloudProviderError } from '../../core/errors.js';

/** The cluster facts a node needs to join (EKS DescribeCluster). */
export interface ClusterFacts {
  /** EKS cluster name. */
  readonly name: string;
  /** API server URL, e.g. `https://ABCD.gr7.us-west-2.eks.amazonaws.com`. */
  readonly endpoint: string;
  /** The cluster CA bundle, base64-encoded PEM (DescribeCluster `certificateAuthority.data`). */
  readonly certificateAuthority: string;
  /** The service IPv4 CIDR, e.g. `10.100.0.0/16` (nodeadm derives the DNS address from it). */
  readonly serviceCidr?: string;
  /** Kubernetes version, e.g. `1.31`. */
  readonly version: string;
}

/** `spec.kubelet` of an EC2NodeClass. */
export type KubeletSettings = NonNullable<EC2NodeClassSpec['kubelet']>;

/** What every family's user data is built from. */
export interface BootstrapInput {
  readonly cluster: ClusterFacts;
  /** Node labels; those a kubelet may not set on itself are left out (see {@link kubeletLabels}). */
  readonly labels: Readonly<Record<string, string>>;
  /** Taints to register with, in order (see {@link registrationTaints}). */
  readonly taints: readonly Taint[];
  /** `spec.kubelet`. */
  readonly kubelet?: KubeletSettings | undefined;
  /** `spec.userData`. */
  readonly userData?: string | undefined;
  /** `spec.instanceStorePolicy`. */
  readonly instanceStorePolicy?: 'RAID0' | undefined;
}

/** The taint every launched node registers with until Skiff registers it (docs/karpenter-semantics.md#launch-registration-initialization). */
export const UNREGISTERED_TAINT: Taint = { key: UNREGISTERED_TAINT_KEY, effect: 'NoExecute' };

/**
 * The taints a node registers with: the NodePool's taints, then its startup taints, then
 * `karpenter.sh/unregistered:NoExecute` unless already present; duplicates (same key and effect) dropped.
 * Source: Karpenter `amifamily/resolver.go` (taints + startupTaints + `UnregisteredNoExecuteTaint`).
 * @example registrationTaints([{ key: 'gpu', value: 'true', effect: 'NoSchedule' }], [])
 * // [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }, { key: 'karpenter.sh/unregistered', effect: 'NoExecute' }]
 */
export function registrationTaints(taints: readonly Taint[], startupTaints: readonly Taint[]): Taint[] {
  const out: Taint[] = [];
  for (const taint of [...taints, ...startupTaints, UNREGISTERED_TAINT]) {
    if (!out.some((t) => t.key === taint.key && t.effect === taint.effect)) out.push(taint);
  }
  return out;
}

/** Labels in the kubernetes.io / k8s.io namespaces a kubelet may set on itself (`IsKubeletLabel`). */
const KUBELET_SETTABLE = new Set([
  'kubernetes.io/hostname',
  'kubernetes.io/arch',
  'kubernetes.io/os',
  'beta.kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'topology.kubernetes.io/region',
  'topology.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
]);

const inDomain = (namespace: string, domain: string): boolean => namespace === domain || namespace.endsWith(`.${domain}`);

/**
 * The labels a kubelet can register with, sorted by key. A kubelet given `--node-labels` with another label in the
 * `kubernetes.io` or `k8s.io` namespaces refuses to start, so those (e.g. `node-restriction.kubernetes.io/*`,
 * `node-role.kubernetes.io/*`) are left out; `kubelet.kubernetes.io/*` and `node.kubernetes.io/*` stay.
 * Source: Kubernetes `IsKubeletLabel`; NodeRestriction admission docs.
 */
export function kubeletLabels(labels: Readonly<Record<string, string>>): [string, string][] {
  return Object.entries(labels)
    .filter(([key]) => {
      const slash = key.indexOf('/');
      if (slash < 0) return true;
      const namespace = key.slice(0, slash);
      if (!inDomain(namespace, 'kubernetes.io') && !inDomain(namespace, 'k8s.io')) return true;
      return KUBELET_SETTABLE.has(key) || inDomain(namespace, 'kubelet.kubernetes.io') || inDomain(namespace, 'node.kubernetes.io');
    })
    .sort(([a], [b]) => compare(a, b));
}

/** `key=value:Effect`, or `key:Effect` without a value (kubelet `--register-with-taints` syntax). */
export function taintArg(taint: Taint): string {
  return `${taint.key}${taint.value ? `=${taint.value}` : ''}:${taint.effect}`;
}

/** `--node-labels=k1=v1,k2=v2`, or undefined when no label is left (see {@link kubeletLabels}). */
export function nodeLabelsFlag(labels: Readonly<Record<string, string>>): string | undefined {
  const kept = kubeletLabels(labels);
  return kept.length > 0 ? `--node-labels=${kept.map(([k, v]) => `${k}=${v}`).join(',')}` : undefined;
}

/** `--register-with-taints=t1,t2`, or undefined for no taints. */
export function registerWithTaintsFlag(taints: readonly Taint[]): string | undefined {
  return taints.length > 0 ? `--register-with-taints=${taints.map(taintArg).join(',')}` : undefined;
}

/** `k1<sep>v1,k2<sep>v2` with keys sorted. */
function joinMap(map: Readonly<Record<string, string | undefined>> | undefined, separator: string): string | undefined {
  const entries = Object.entries(map ?? {}).filter((e): e is [string, string] => e[1] !== undefined);
  return entries.length > 0 ? entries.sort(([a], [b]) => compare(a, b)).map(([k, v]) => `${k}${separator}${v}`).join(',') : undefined;
}

/**
 * Kubelet command-line flags for bootstrap scripts that take them (AL2 `--kubelet-extra-args`, Windows
 * `-KubeletExtraArgs`): labels, taints, then the `spec.kubelet` settings (`--max-pods`, `--pods-per-core`,
 * `--system-reserved`, `--kube-reserved`, `--eviction-hard` (`signal<threshold`), `--eviction-soft`,
 * `--eviction-soft-grace-period`, `--eviction-max-pod-grace-period`, `--image-gc-high-threshold`,
 * `--image-gc-low-threshold`, `--cpu-cfs-quota`). Source: Karpenter `bootstrap/bootstrap.go kubeletExtraArgs`.
 * @example kubeletFlags({ ...input, kubelet: { maxPods: 110 } }) // ['--node-labels=…', '--register-with-taints=…', '--max-pods=110']
 */
export function kubeletFlags(input: Pick<BootstrapInput, 'labels' | 'taints' | 'kubelet'>): string[] {
  const k = input.kubelet;
  const flags = [nodeLabelsFlag(input.labels), registerWithTaintsFlag(input.taints)];
  if (k !== undefined) {
    const map = (name: string, m: Readonly<Record<string, string | undefined>> | undefined, sep: string): string | undefined => {
      const joined = joinMap(m, sep);
      return joined !== undefined ? `${name}=${joined}` : undefined;
    };
    flags.push(
      k.maxPods !== undefined ? `--max-pods=${k.maxPods}` : undefined,
      k.podsPerCore !== undefined ? `--pods-per-core=${k.podsPerCore}` : undefined,
      map('--system-reserved', k.systemReserved, '='),
      map('--kube-reserved', k.kubeReserved, '='),
      map('--eviction-hard', k.evictionHard, '<'),
      map('--eviction-soft', k.evictionSoft, '<'),
      map('--eviction-soft-grace-period', k.evictionSoftGracePeriod, '='),
      k.evictionMaxPodGracePeriod !== undefined ? `--eviction-max-pod-grace-period=${k.evictionMaxPodGracePeriod}` : undefined,
      k.imageGCHighThresholdPercent !== undefined ? `--image-gc-high-threshold=${k.imageGCHighThresholdPercent}` : undefined,
      k.imageGCLowThresholdPercent !== undefined ? `--image-gc-low-threshold=${k.imageGCLowThresholdPercent}` : undefined,
      k.cpuCFSQuota !== undefined ? `--cpu-cfs-quota=${k.cpuCFSQuota}` : undefined,
    );
  }
  return flags.filter((f): f is string => f !== undefined);
}

// ---------------------------------------------------------------------------------------------------------------
// MIME multipart (RFC 2046), the subset cloud-init and nodeadm read

/** One part of a MIME multipart document. */
export interface MimePart {
  /** The part's headers in order, e.g. `[['Content-Type', 'text/x-shellscript; charset="us-ascii"']]`. */
  readonly headers: readonly (readonly [string, string])[];
  /** The body, LF line endings, without the line break that precedes the next boundary. */
  readonly content: string;
}

/** MIME type of a nodeadm NodeConfig part. */
export const CONTENT_TYPE_NODECONFIG = 'application/node.eks.aws';
/** MIME type of a shell-script part (cloud-init runs it). */
export const CONTENT_TYPE_SHELL = 'text/x-shellscript; charset="us-ascii"';
/** The boundary Skiff writes (Karpenter's); another is chosen when a part contains it. */
export const MIME_BOUNDARY = '//';

/** The value of header `name` (case-insensitive) in `headers`, or undefined. */
export function headerValue(headers: readonly (readonly [string, string])[], name: string): string | undefined {
  return headers.find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
}

/** True when `text` starts like a MIME document (`MIME-Version:` or `Content-Type:`), as Karpenter tests it. */
export function isMime(text: string): boolean {
  const head = text.trimStart();
  return /^mime-version:/i.test(head) || /^content-type:/i.test(head);
}

/** Header block → [name, value] pairs (folded lines unfolded). */
function parseHeaders(lines: readonly string[]): [string, string][] {
  const out: [string, string][] = [];
  for (const line of lines) {
    const last = out[out.length - 1];
    if (/^[ \t]/.test(line) && last !== undefined) {
      last[1] = `${last[1]} ${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) throw new CloudProviderError(`userData: malformed MIME header line ${JSON.stringify(line)}`, 'InvalidUserData');
    out.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
  }
  return out;
}

/** The `boundary` parameter of a `multipart/*` Content-Type, or undefined. */
function boundaryOf(contentType: string | undefined): string | undefined {
  if (contentType === undefined || !/^\s*multipart\//i.test(contentType)) return undefined;
  const match = /;\s*boundary\s*=\s*(?:"([^"]*)"|([^;\s]+))/i.exec(contentType);
  return match?.[1] ?? match?.[2];
}

/**
 * Parses a MIME multipart document into its parts (CRLF or LF line endings; preamble and epilogue ignored).
 * @throws {CloudProviderError} code `InvalidUserData` when the text is not a multipart document with a boundary
 * @example parseMimeMultipart(al2023UserData(input)).map((p) => headerValue(p.headers, 'Content-Type')) // ['application/node.eks.aws', …]
 */
export function parseMimeMultipart(text: string): MimePart[] {
  const lines = text.replace(/\r\n/g, '\n').replace(/^\s+/, '').split('\n');
  const blank = lines.indexOf('');
  const headers = parseHeaders(blank < 0 ? lines : lines.slice(0, blank));
  const boundary = boundaryOf(headerValue(headers, 'Content-Type'));
  if (boundary === undefined) throw new CloudProviderError('userData: MIME document has no multipart Content-Type with a boundary', 'InvalidUserData');
  const parts: MimePart[] = [];
  let current: string[] | undefined;
  const close = (): void => {
    if (current === undefined) return;
    const end = current.indexOf('');
    const partHeaders = parseHeaders(end < 0 ? current : current.slice(0, end));
    parts.push({ headers: partHeaders, content: end < 0 ? '' : current.slice(end + 1).join('\n') });
  };
  for (const line of blank < 0 ? [] : lines.slice(blank + 1)) {
    const trimmed = line.trimEnd();
    if (trimmed === `--${boundary}--`) {
      close();
      current = undefined;
      return parts;
    }
    if (trimmed === `--${boundary}`) {
      close();
      current = [];
      continue;
    }
    current?.push(line);
  }
  close();
  return parts;
}

/**
 * Writes a MIME multipart document: `MIME-Version: 1.0`, `Content-Type: multipart/mixed; boundary="//"`, the parts,
 * the closing delimiter; LF line endings. When a part contains a line starting with `--//`, `//1`, `//2`, … is used.
 * @example serializeMimeMultipart([{ headers: [['Content-Type', CONTENT_TYPE_SHELL]], content: '#!/bin/bash\necho hi' }])
 */
export function serializeMimeMultipart(parts: readonly MimePart[]): string {
  let boundary = MIME_BOUNDARY;
  for (let n = 1; parts.some((p) => p.content.split('\n').some((l) => l.startsWith(`--${boundary}`))); n++) boundary = `${MIME_BOUNDARY}${n}`;
  const out = ['MIME-Version: 1.0', `Content-Type: multipart/mixed; boundary="${boundary}"`, ''];
  for (const part of parts) {
    out.push(`--${boundary}`, ...part.headers.map(([k, v]) => `${k}: ${v}`), '', part.content);
  }
  out.push(`--${boundary}--`, '');
  return out.join('\n');
}

/** A part with just a Content-Type. */
const part = (contentType: string, content: string): MimePart => ({ headers: [['Content-Type', contentType]], content });

// ---------------------------------------------------------------------------------------------------------------
// AL2023 (nodeadm)

/** nodeadm's NodeConfig API version. */
export const NODECONFIG_API_VERSION = 'node.eks.aws/v1alpha1';

/**
 * Skiff's nodeadm NodeConfig as an object: `spec.cluster` (name, apiServerEndpoint, certificateAuthority, cidr when
 * known), `spec.kubelet.config` (the `spec.kubelet` settings under their KubeletConfiguration names, plus
 * `registerWithTaints`), `spec.kubelet.flags` (`--node-labels=…`), and `spec.instance.localStorage.strategy: RAID0`
 * for `instanceStorePolicy: RAID0`. Source: Karpenter `bootstrap/nodeadm.go` (taints in the config, labels as a flag).
 */
export function nodeConfig(input: BootstrapInput): Record<string, unknown> {
  const { cluster } = input;
  const k = input.kubelet ?? {};
  const config: Record<string, unknown> = {};
  const set = (key: string, value: unknown): void => {
    if (value !== undefined) config[key] = value;
  };
  set('clusterDNS', k.clusterDNS);
  set('maxPods', k.maxPods);
  set('podsPerCore', k.podsPerCore);
  set('systemReserved', sortedRecord(k.systemReserved));
  set('kubeReserved', sortedRecord(k.kubeReserved));
  set('evictionHard', sortedRecord(k.evictionHard));
  set('evictionSoft', sortedRecord(k.evictionSoft));
  set('evictionSoftGracePeriod', sortedRecord(k.evictionSoftGracePeriod));
  set('evictionMaxPodGracePeriod', k.evictionMaxPodGracePeriod);
  set('imageGCHighThresholdPercent', k.imageGCHighThresholdPercent);
  set('imageGCLowThresholdPercent', k.imageGCLowThresholdPercent);
  set('cpuCFSQuota', k.cpuCFSQuota);
  if (input.taints.length > 0) config['registerWithTaints'] = input.taints.map((t) => ({ key: t.key, ...(t.value ? { value: t.value } : {}), effect: t.effect }));
  const labels = nodeLabelsFlag(input.labels);
  return {
    apiVersion: NODECONFIG_API_VERSION,
    kind: 'NodeConfig',
    spec: {
      cluster: {
        name: cluster.name,
        apiServerEndpoint: cluster.endpoint,
        certificateAuthority: cluster.certificateAuthority,
        ...(cluster.serviceCidr !== undefined ? { cidr: cluster.serviceCidr } : {}),
      },
      kubelet: { config, ...(labels !== undefined ? { flags: [labels] } : {}) },
      ...(input.instanceStorePolicy === 'RAID0' ? { instance: { localStorage: { strategy: 'RAID0' } } } : {}),
    },
  };
}

/**
 * AL2023 user data: a MIME multipart document whose first part is Skiff's NodeConfig ({@link nodeConfig}, YAML,
 * `application/node.eks.aws`) followed by the user's `spec.userData`: its parts when it is MIME, else one part —
 * a shell script when it starts with `#!` or is not a YAML mapping, a NodeConfig otherwise.
 * @throws {CloudProviderError} code `InvalidUserData` when `spec.userData` looks like MIME but does not parse
 * @example parseMimeMultipart(al2023UserData(input))[0]?.content // '# Skiff generated NodeConfig\napiVersion: node.eks.aws/v1alpha1\n…'
 */
export function al2023UserData(input: BootstrapInput): string {
  const yaml = `# Skiff generated NodeConfig\n${stringifyYaml(nodeConfig(input), { lineWidth: 0 })}`;
  return serializeMimeMultipart([part(CONTENT_TYPE_NODECONFIG, yaml), ...userParts(input.userData, true)]);
}

/** The user's data as MIME parts (see {@link al2023UserData}); `nodeConfigAllowed` false makes non-MIME text a shell part. */
function userParts(userData: string | undefined, nodeConfigAllowed: boolean): MimePart[] {
  if (userData === undefined || userData.trim() === '') return [];
  if (isMime(userData)) return parseMimeMultipart(userData);
  return [part(nodeConfigAllowed && isYamlMapping(userData) ? CONTENT_TYPE_NODECONFIG : CONTENT_TYPE_SHELL, userData)];
}

/** True when `text` is not a script (`#!`) and parses as one YAML mapping. */
function isYamlMapping(text: string): boolean {
  if (text.trimStart().startsWith('#!')) return false;
  try {
    const value: unknown = parseYaml(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// AL2 (bootstrap.sh)

/** Single-quotes `s` for bash. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'"'"'`)}'`;
}

/**
 * The AL2 bootstrap script: `/etc/eks/bootstrap.sh <cluster> --apiserver-endpoint … --b64-cluster-ca …`, then
 * `--service-ipv4-cidr` (when known), `--dns-cluster-ip` / `--ip-family ipv6` (from `clusterDNS`),
 * `--use-max-pods false` (when `maxPods` is set, so bootstrap.sh's ENI value does not clash), `--kubelet-extra-args`
 * ({@link kubeletFlags}) and `--local-disks raid0`. Source: Karpenter `bootstrap/eksbootstrap.go`; awslabs/amazon-eks-ami
 * `templates/al2/runtime/bootstrap.sh` options.
 */
export function al2BootstrapScript(input: BootstrapInput): string {
  const { cluster } = input;
  const dns = input.kubelet?.clusterDNS?.[0];
  const args = [`/etc/eks/bootstrap.sh ${shellQuote(cluster.name)} --apiserver-endpoint ${shellQuote(cluster.endpoint)} --b64-cluster-ca ${shellQuote(cluster.certificateAuthority)}`];
  if (cluster.serviceCidr !== undefined) args.push(`--service-ipv4-cidr ${shellQuote(cluster.serviceCidr)}`);
  if (dns !== undefined) {
    if (dns.includes(':')) args.push('--ip-family ipv6');
    args.push(`--dns-cluster-ip ${shellQuote(dns)}`);
  }
  if (input.kubelet?.maxPods !== undefined) args.push('--use-max-pods false');
  const flags = kubeletFlags(input);
  if (flags.length > 0) args.push(`--kubelet-extra-args ${shellQuote(flags.join(' '))}`);
  if (input.instanceStorePolicy === 'RAID0') args.push('--local-disks raid0');
  return ['#!/bin/bash -xe', 'exec > >(tee /var/log/user-data.log|logger -t user-data -s 2>/dev/console) 2>&1', args.join(' \\\n')].join('\n');
}

/**
 * AL2 user data: a MIME multipart document with the user's part(s) first (MIME parts as they are, other text as a
 * shell script), then {@link al2BootstrapScript} as a shell part.
 * @throws {CloudProviderError} code `InvalidUserData` when `spec.userData` looks like MIME but does not parse
 */
export function al2UserData(input: BootstrapInput): string {
  return serializeMimeMultipart([...userParts(input.userData, false), part(CONTENT_TYPE_SHELL, al2BootstrapScript(input))]);
}

// ---------------------------------------------------------------------------------------------------------------
// Bottlerocket (TOML settings)

/** `settings.kubernetes` keys Karpenter keeps from the user's TOML (its `BottlerocketKubernetes` fields); others are dropped. */
export const BOTTLEROCKET_KUBERNETES_KEYS: ReadonlySet<string> = new Set([
  'api-server',
  'cloud-provider',
  'cluster-certificate',
  'cluster-name',
  'cluster-dns-ip',
  'credential-providers',
  'node-labels',
  'node-taints',
  'max-pods',
  'static-pods',
  'eviction-hard',
  'eviction-soft',
  'eviction-soft-grace-period',
  'eviction-max-pod-grace-period',
  'kube-reserved',
  'system-reserved',
  'allowed-unsafe-sysctls',
  'server-tls-bootstrap',
  'registry-qps',
  'registry-burst',
  'event-qps',
  'event-burst',
  'kube-api-qps',
  'kube-api-burst',
  'container-log-max-size',
  'container-log-max-files',
  'cpu-manager-policy',
  'cpu-manager-policy-options',
  'cpu-manager-reconcile-period',
  'topology-manager-scope',
  'topology-manager-policy',
  'image-gc-high-threshold-percent',
  'image-gc-low-threshold-percent',
  'ids-per-pod',
  'cpu-cfs-quota-enforced',
  'shutdown-grace-period',
  'shutdown-grace-period-for-critical-pods',
  'cluster-domain',
  'seccomp-default',
  'pod-pids-limit',
  'device-ownership-from-security-context',
  'single-process-oom-kill',
  'container-log-max-workers',
  'container-log-monitor-interval',
  'hostname-override-source',
  'log-level',
]);

const isTable = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);

/**
 * Bottlerocket user data (TOML): the user's `settings` tables kept, `settings.kubernetes` limited to
 * {@link BOTTLEROCKET_KUBERNETES_KEYS}, then Skiff's values written over them: `cluster-name`, `api-server`,
 * `cluster-certificate`, `node-labels` (merged, Skiff's win), `node-taints` (replaced: `key = ["value:Effect"]`),
 * and from `spec.kubelet`: `max-pods`, `cluster-dns-ip`, `system-reserved`, `kube-reserved`, `eviction-hard`,
 * `eviction-soft`, `eviction-soft-grace-period`, `eviction-max-pod-grace-period`, `image-gc-{high,low}-threshold-percent`
 * (strings), `cpu-cfs-quota-enforced` (`podsPerCore` is not a Bottlerocket setting). `settings.autoscaling.should-wait`
 * is forced to false (no Auto Scaling group), and `instanceStorePolicy: RAID0` adds the
 * `000-mount-instance-storage` bootstrap command. Source: Karpenter `bootstrap/bottlerocket.go`, `bottlerocketsettings.go`.
 * @throws {CloudProviderError} code `InvalidUserData` when `spec.userData` is not TOML
 */
export function bottlerocketUserData(input: BootstrapInput): string {
  let user: Record<string, unknown> = {};
  if (input.userData !== undefined && input.userData.trim() !== '') {
    try {
      user = parseToml(input.userData);
    } catch (e) {
      throw new CloudProviderError(`userData: Bottlerocket user data is not valid TOML: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`, 'InvalidUserData', { cause: e });
    }
  }
  const settings: Record<string, unknown> = isTable(user['settings']) ? { ...user['settings'] } : {};
  const userKubernetes = isTable(settings['kubernetes']) ? settings['kubernetes'] : {};
  const kubernetes: Record<string, unknown> = Object.fromEntries(Object.entries(userKubernetes).filter(([k]) => BOTTLEROCKET_KUBERNETES_KEYS.has(k)));
  const k = input.kubelet;
  kubernetes['cluster-name'] = input.cluster.name;
  kubernetes['api-server'] = input.cluster.endpoint;
  kubernetes['cluster-certificate'] = input.cluster.certificateAuthority;
  const userLabels = isTable(kubernetes['node-labels']) ? kubernetes['node-labels'] : {};
  const labels = { ...userLabels, ...Object.fromEntries(kubeletLabels(input.labels)) };
  if (Object.keys(labels).length > 0) kubernetes['node-labels'] = labels;
  else delete kubernetes['node-labels'];
  const taints: Record<string, string[]> = {};
  for (const t of input.taints) (taints[t.key] ??= []).push(`${t.value ?? ''}:${t.effect}`);
  if (Object.keys(taints).length > 0) kubernetes['node-taints'] = taints;
  else delete kubernetes['node-taints'];
  if (k !== undefined) {
    const set = (key: string, value: unknown): void => {
      if (value !== undefined) kubernetes[key] = value;
    };
    set('max-pods', k.maxPods);
    set('cluster-dns-ip', k.clusterDNS?.[0]);
    set('system-reserved', sortedRecord(k.systemReserved));
    set('kube-reserved', sortedRecord(k.kubeReserved));
    set('eviction-hard', sortedRecord(k.evictionHard));
    set('eviction-soft', sortedRecord(k.evictionSoft));
    set('eviction-soft-grace-period', sortedRecord(k.evictionSoftGracePeriod));
    set('eviction-max-pod-grace-period', k.evictionMaxPodGracePeriod);
    set('image-gc-high-threshold-percent', k.imageGCHighThresholdPercent?.toString());
    set('image-gc-low-threshold-percent', k.imageGCLowThresholdPercent?.toString());
    set('cpu-cfs-quota-enforced', k.cpuCFSQuota);
  }
  settings['kubernetes'] = kubernetes;
  if (isTable(settings['autoscaling']) && settings['autoscaling']['should-wait'] !== undefined) {
    settings['autoscaling'] = { ...settings['autoscaling'], 'should-wait': false };
  }
  if (input.instanceStorePolicy === 'RAID0') {
    const commands = isTable(settings['bootstrap-commands']) ? settings['bootstrap-commands'] : {};
    settings['bootstrap-commands'] = {
      ...commands,
      '000-mount-instance-storage': {
        commands: [
          ['apiclient', 'ephemeral-storage', 'init'],
          ['apiclient', 'ephemeral-storage', 'bind', '--dirs', '/var/lib/containerd', '/var/lib/kubelet', '/var/log/pods'],
        ],
        mode: 'always',
        essential: true,
      },
    };
  }
  return stringifyToml({ settings });
}

// ---------------------------------------------------------------------------------------------------------------
// Windows (Start-EKSBootstrap.ps1)

/** Single-quotes `s` for PowerShell. */
function psQuote(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

/**
 * Windows user data: `<powershell>`, the user's script, then `Start-EKSBootstrap.ps1` with `-EKSClusterName`,
 * `-APIServerEndpoint`, `-Base64ClusterCA`, `-KubeletExtraArgs` ({@link kubeletFlags}) and `-DNSClusterIP`.
 * Source: Karpenter `bootstrap/windows.go`; EKS user guide "Bootstrap script configuration parameters" (Windows).
 */
export function windowsUserData(input: BootstrapInput): string {
  const { cluster } = input;
  const lines = ['<powershell>'];
  if (input.userData !== undefined && input.userData.trim() !== '') lines.push(input.userData.replace(/\n$/, ''));
  lines.push('[string]$EKSBootstrapScriptFile = "$env:ProgramFiles\\Amazon\\EKS\\Start-EKSBootstrap.ps1"');
  let call = `& $EKSBootstrapScriptFile -EKSClusterName ${psQuote(cluster.name)} -APIServerEndpoint ${psQuote(cluster.endpoint)} -Base64ClusterCA ${psQuote(cluster.certificateAuthority)}`;
  const flags = kubeletFlags(input);
  if (flags.length > 0) call += ` -KubeletExtraArgs ${psQuote(flags.join(' '))}`;
  const dns = input.kubelet?.clusterDNS?.[0];
  if (dns !== undefined) call += ` -DNSClusterIP ${psQuote(dns)}`;
  lines.push(call, '</powershell>');
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------------------------

/**
 * The user data for `family` (see the module comment for each layout); `Custom` returns `spec.userData` untouched
 * (undefined when unset), and the node must then register with `karpenter.sh/unregistered:NoExecute` itself.
 * @returns plain text, not base64
 * @throws {CloudProviderError} code `InvalidUserData` when `spec.userData` cannot be merged (bad MIME or TOML)
 * @example userDataFor('AL2023', { cluster, labels: { 'karpenter.sh/nodepool': 'general' }, taints: registrationTaints([], []) })
 */
export function userDataFor(family: AmiFamily, input: BootstrapInput): string | undefined {
  switch (family) {
    case 'AL2023':
      return al2023UserData(input);
    case 'AL2':
      return al2UserData(input);
    case 'Bottlerocket':
      return bottlerocketUserData(input);
    case 'Windows2019':
    case 'Windows2022':
    case 'Windows2025':
      return windowsUserData(input);
    case 'Custom':
      return input.userData;
  }
}

/** A copy of `record` with keys sorted (undefined stays undefined, empty records too). */
function sortedRecord<V>(record: Readonly<Partial<Record<string, V>>> | undefined): Record<string, V> | undefined {
  if (record === undefined) return undefined;
  return Object.fromEntries(Object.entries(record).filter((e): e is [string, V] => e[1] !== undefined).sort(([a], [b]) => compare(a, b)));
}

/** Code-point order. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
