/**
 * Manifest builders for scenario tests: the parts every test writes the same way, so that a test's YAML shows only
 * what it is about.
 */
import { stringify } from 'yaml';

/** What differs between the NodePools of scenario tests. */
export interface NodePoolYamlOptions {
  /** `metadata.name`. @default 'general' */
  readonly name?: string;
  /** `karpenter.sh/capacity-type` values. @default ['on-demand'] */
  readonly capacityTypes?: readonly string[];
  /** Further `In` requirements after the capacity type, label key → values, in this order. */
  readonly requirements?: Readonly<Record<string, readonly string[]>>;
  /** Further fields of `spec.template.spec`, e.g. `{expireAfter: '1h', terminationGracePeriod: '3m'}`. */
  readonly template?: Readonly<Record<string, unknown>>;
  /** `spec.disruption` as written. @default {consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '1m'} */
  readonly disruption?: Readonly<Record<string, unknown>>;
  /** `spec.weight`; absent when not given. */
  readonly weight?: number;
  /** `spec.limits`; absent when not given. */
  readonly limits?: Readonly<Record<string, string>>;
}

/**
 * A `karpenter.sh/v1` NodePool on the `default` EC2NodeClass ({@link nodeClassYaml} in `provisioner-harness.ts`),
 * as one YAML document (no `---`).
 */
export function nodePoolYaml(options: NodePoolYamlOptions = {}): string {
  const requirements = [
    { key: 'karpenter.sh/capacity-type', operator: 'In', values: options.capacityTypes ?? ['on-demand'] },
    ...Object.entries(options.requirements ?? {}).map(([key, values]) => ({ key, operator: 'In', values })),
  ];
  return `\n${stringify({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: options.name ?? 'general' },
    spec: {
      ...(options.weight !== undefined ? { weight: options.weight } : {}),
      template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, ...options.template, requirements } },
      ...(options.limits ? { limits: options.limits } : {}),
      disruption: options.disruption ?? { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '1m' },
    },
  })}`;
}
