// Shared fixtures for the launch-template adapter tests: parsed EC2NodeClasses (the seed's and built ones), a
// settable clock, instance-type labels, EC2 service errors, and an SSM fake answering from a parameter table.
import { readFileSync } from 'node:fs';
import { EC2ServiceException } from '@aws-sdk/client-ec2';
import { GetParametersCommand, type SSMClient } from '@aws-sdk/client-ssm';
import type { AwsClientStub } from 'aws-sdk-client-mock';
import { parse } from 'yaml';
import { ec2NodeClassSchema, type EC2NodeClass } from '../../../shared/core/api/ec2nodeclass.js';
import type { Clock } from '../../../shared/ports/clock.js';

/** A clock the test moves by hand (epoch ms). */
export interface ManualClock extends Clock {
  advance(ms: number): void;
}

/** A {@link ManualClock} starting at 2026-03-02T08:00:00Z. */
export function manualClock(start = Date.parse('2026-03-02T08:00:00Z')): ManualClock {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

/** One of the seed's EC2NodeClasses (examples/seed/ec2nodeclass-<name>.yaml), parsed. */
export function seedNodeClass(name: 'default' | 'gpu-class'): EC2NodeClass {
  return ec2NodeClassSchema.parse(parse(readFileSync(new URL(`../../../examples/seed/ec2nodeclass-${name}.yaml`, import.meta.url), 'utf8')));
}

/** A parsed EC2NodeClass named `name` with the discovery tags of the seed, `spec` fields overriding. */
export function nodeClass(name: string, spec: Record<string, unknown> = {}): EC2NodeClass {
  return ec2NodeClassSchema.parse({
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name },
    spec: {
      amiSelectorTerms: [{ alias: 'al2023@latest' }],
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'my-cluster' } }],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'my-cluster' } }],
      role: 'KarpenterNodeRole-my-cluster',
      ...spec,
    },
  });
}

/** Well-known labels of a few instance types, as the catalogue has them. */
export const TYPES = {
  'm5.large': { 'kubernetes.io/arch': 'amd64', 'karpenter.k8s.aws/instance-family': 'm5' },
  'm6g.large': { 'kubernetes.io/arch': 'arm64', 'karpenter.k8s.aws/instance-family': 'm6g' },
  'g5.xlarge': { 'kubernetes.io/arch': 'amd64', 'karpenter.k8s.aws/instance-gpu-manufacturer': 'nvidia', 'karpenter.k8s.aws/instance-gpu-count': '1' },
  'g5g.xlarge': { 'kubernetes.io/arch': 'arm64', 'karpenter.k8s.aws/instance-gpu-manufacturer': 'nvidia', 'karpenter.k8s.aws/instance-gpu-count': '1' },
  'g4ad.xlarge': { 'kubernetes.io/arch': 'amd64', 'karpenter.k8s.aws/instance-gpu-manufacturer': 'amd', 'karpenter.k8s.aws/instance-gpu-count': '1' },
  'inf2.xlarge': { 'kubernetes.io/arch': 'amd64', 'karpenter.k8s.aws/instance-accelerator-manufacturer': 'aws', 'karpenter.k8s.aws/instance-accelerator-count': '1' },
  'dl2q.24xlarge': { 'kubernetes.io/arch': 'amd64', 'karpenter.k8s.aws/instance-accelerator-manufacturer': 'qualcomm' },
} as const satisfies Record<string, Record<string, string>>;

/** `{ name, labels }` of the named {@link TYPES}. */
export function instanceTypes(...names: (keyof typeof TYPES)[]): { name: string; labels: Readonly<Record<string, string>> }[] {
  return names.map((name) => ({ name, labels: TYPES[name] }));
}

/** An EC2 error as the SDK raises it (EC2 has no modelled exceptions: the code is the `name`). */
export function ec2Error(code: string, message = code): EC2ServiceException {
  return new EC2ServiceException({ name: code, $fault: 'client', $metadata: {}, message });
}

/** The public SSM parameters of al2023@latest for Kubernetes 1.31, with made-up image ids. */
export const AL2023_131: Readonly<Record<string, string>> = {
  '/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/recommended/image_id': 'ami-0a2023x86std',
  '/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/nvidia/recommended/image_id': 'ami-0a2023x86nv',
  '/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/neuron/recommended/image_id': 'ami-0a2023x86neu',
  '/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/arm64/standard/recommended/image_id': 'ami-0a2023armstd',
  '/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/arm64/nvidia/recommended/image_id': 'ami-0a2023armnv',
};

/** Makes `ssm` answer GetParameters from `table` (names not in it come back as InvalidParameters). */
export function answerParameters(ssm: AwsClientStub<SSMClient>, table: Readonly<Record<string, string>>): void {
  ssm.on(GetParametersCommand).callsFake((input: { Names?: string[] }) => {
    const names = input.Names ?? [];
    return {
      Parameters: names.filter((n) => n in table).map((n) => ({ Name: n, Value: table[n], Type: 'String' })),
      InvalidParameters: names.filter((n) => !(n in table)),
    };
  });
}
