import { parse as parseToml } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import {
  CONTENT_TYPE_NODECONFIG,
  CONTENT_TYPE_SHELL,
  al2023UserData,
  al2UserData,
  bottlerocketUserData,
  headerValue,
  kubeletFlags,
  kubeletLabels,
  parseMimeMultipart,
  registrationTaints,
  serializeMimeMultipart,
  userDataFor,
  windowsUserData,
  type BootstrapInput,
  type ClusterFacts,
  type MimePart,
} from '../../../shared/adapters/aws/userdata.js';
import { CloudProviderError } from '../../../shared/core/errors.js';
import { seedNodeClass } from './aws-fixtures.js';

const CLUSTER: ClusterFacts = {
  name: 'my-cluster',
  endpoint: 'https://ABCDEF.gr7.us-west-2.eks.amazonaws.com',
  certificateAuthority: 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==',
  serviceCidr: '10.100.0.0/16',
  version: '1.31',
};
const LABELS = { 'karpenter.sh/nodepool': 'general', 'karpenter.sh/capacity-type': 'spot', 'node-role.kubernetes.io/worker': '', 'node.kubernetes.io/instance-type': 'm5.large', team: 'web' };
const TAINTS = registrationTaints([{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }], [{ key: 'example.com/agent-not-ready', effect: 'NoExecute' }]);
const input = (extra: Partial<BootstrapInput> = {}): BootstrapInput => ({ cluster: CLUSTER, labels: LABELS, taints: TAINTS, ...extra });
const contentTypes = (parts: readonly MimePart[]): (string | undefined)[] => parts.map((p) => headerValue(p.headers, 'Content-Type'));

/** The first part of an AL2023 document, as the NodeConfig object it holds. */
const nodeConfigOf = (text: string): { apiVersion: string; kind: string; spec: Record<string, any> } => parseYaml(parseMimeMultipart(text)[0]?.content ?? '') as never;

describe('registrationTaints', () => {
  it('appends karpenter.sh/unregistered:NoExecute after the NodePool taints and startup taints', () => {
    expect(TAINTS).toEqual([
      { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' },
      { key: 'example.com/agent-not-ready', effect: 'NoExecute' },
      { key: 'karpenter.sh/unregistered', effect: 'NoExecute' },
    ]);
  });

  it('does not add the unregistered taint twice, nor duplicate key/effect pairs', () => {
    const t = { key: 'karpenter.sh/unregistered', effect: 'NoExecute' } as const;
    expect(registrationTaints([t, { key: 'a', effect: 'NoSchedule' }], [{ key: 'a', effect: 'NoSchedule' }])).toEqual([t, { key: 'a', effect: 'NoSchedule' }]);
  });
});

describe('kubeletLabels', () => {
  it('drops kubernetes.io / k8s.io labels a kubelet may not set on itself and sorts the rest', () => {
    expect(kubeletLabels({ ...LABELS, 'node-restriction.kubernetes.io/x': 'y', 'kubernetes.io/arch': 'amd64', 'example.k8s.io/z': '1', 'kubelet.kubernetes.io/k': 'v' })).toEqual([
      ['karpenter.sh/capacity-type', 'spot'],
      ['karpenter.sh/nodepool', 'general'],
      ['kubelet.kubernetes.io/k', 'v'],
      ['kubernetes.io/arch', 'amd64'],
      ['node.kubernetes.io/instance-type', 'm5.large'],
      ['team', 'web'],
    ]);
  });
});

describe('kubeletFlags', () => {
  it('writes labels, taints and every kubelet setting as flags, maps sorted', () => {
    expect(
      kubeletFlags(
        input({
          kubelet: {
            maxPods: 110,
            podsPerCore: 4,
            systemReserved: { memory: '100Mi', cpu: '100m' },
            kubeReserved: { cpu: '200m' },
            evictionHard: { 'nodefs.available': '10%', 'memory.available': '5%' },
            evictionMaxPodGracePeriod: 60,
            imageGCHighThresholdPercent: 85,
            imageGCLowThresholdPercent: 80,
            cpuCFSQuota: true,
          },
        }),
      ),
    ).toEqual([
      '--node-labels=karpenter.sh/capacity-type=spot,karpenter.sh/nodepool=general,node.kubernetes.io/instance-type=m5.large,team=web',
      '--register-with-taints=dedicated=gpu:NoSchedule,example.com/agent-not-ready:NoExecute,karpenter.sh/unregistered:NoExecute',
      '--max-pods=110',
      '--pods-per-core=4',
      '--system-reserved=cpu=100m,memory=100Mi',
      '--kube-reserved=cpu=200m',
      '--eviction-hard=memory.available<5%,nodefs.available<10%',
      '--eviction-max-pod-grace-period=60',
      '--image-gc-high-threshold=85',
      '--image-gc-low-threshold=80',
      '--cpu-cfs-quota=true',
    ]);
  });
});

describe('MIME multipart', () => {
  it('round-trips parts, headers and content', () => {
    const parts: MimePart[] = [
      { headers: [['Content-Type', CONTENT_TYPE_SHELL]], content: '#!/bin/bash\necho one\n' },
      { headers: [['Content-Type', 'text/cloud-config'], ['Content-Disposition', 'attachment; filename="c.yaml"']], content: 'runcmd: [ls]' },
    ];
    const text = serializeMimeMultipart(parts);
    expect(text.startsWith('MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="//"\n\n--//\n')).toBe(true);
    expect(text.endsWith('\n--//--\n')).toBe(true);
    expect(parseMimeMultipart(text)).toEqual(parts);
  });

  it('reads CRLF documents with a token boundary and a preamble', () => {
    const text = 'Content-Type: multipart/mixed; boundary=XYZ\r\nMIME-Version: 1.0\r\n\r\npreamble\r\n--XYZ\r\nContent-Type: text/x-shellscript\r\n\r\necho hi\r\n--XYZ--\r\n';
    expect(parseMimeMultipart(text)).toEqual([{ headers: [['Content-Type', 'text/x-shellscript']], content: 'echo hi' }]);
  });

  it('picks another boundary when a part contains the default one', () => {
    const text = serializeMimeMultipart([{ headers: [['Content-Type', CONTENT_TYPE_SHELL]], content: 'echo a\n--// not a boundary' }]);
    expect(text).toContain('boundary="//1"');
    expect(parseMimeMultipart(text)[0]?.content).toBe('echo a\n--// not a boundary');
  });

  it('rejects a document without a multipart boundary with InvalidUserData', () => {
    expect(() => parseMimeMultipart('Content-Type: text/plain\n\nhi')).toThrow(CloudProviderError);
  });
});

describe('al2023UserData', () => {
  it("puts Skiff's NodeConfig first: cluster, kubelet config with registerWithTaints, node labels as a flag", () => {
    const text = al2023UserData(input({ kubelet: { maxPods: 58, systemReserved: { cpu: '100m' }, evictionHard: { 'memory.available': '100Mi' }, clusterDNS: ['10.100.0.10'] } }));
    const parts = parseMimeMultipart(text);
    expect(contentTypes(parts)).toEqual([CONTENT_TYPE_NODECONFIG]);
    expect(nodeConfigOf(text)).toEqual({
      apiVersion: 'node.eks.aws/v1alpha1',
      kind: 'NodeConfig',
      spec: {
        cluster: { name: 'my-cluster', apiServerEndpoint: CLUSTER.endpoint, certificateAuthority: CLUSTER.certificateAuthority, cidr: '10.100.0.0/16' },
        kubelet: {
          config: {
            clusterDNS: ['10.100.0.10'],
            maxPods: 58,
            systemReserved: { cpu: '100m' },
            evictionHard: { 'memory.available': '100Mi' },
            registerWithTaints: [
              { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' },
              { key: 'example.com/agent-not-ready', effect: 'NoExecute' },
              { key: 'karpenter.sh/unregistered', effect: 'NoExecute' },
            ],
          },
          flags: ['--node-labels=karpenter.sh/capacity-type=spot,karpenter.sh/nodepool=general,node.kubernetes.io/instance-type=m5.large,team=web'],
        },
      },
    });
  });

  it("appends the seed's shell script as a shell part after the NodeConfig", () => {
    const seed = seedNodeClass('default');
    const parts = parseMimeMultipart(al2023UserData(input({ userData: seed.spec.userData })));
    expect(contentTypes(parts)).toEqual([CONTENT_TYPE_NODECONFIG, CONTENT_TYPE_SHELL]);
    expect(parts[1]?.content).toBe(seed.spec.userData);
  });

  it('appends a NodeConfig YAML as a NodeConfig part, and MIME user data part by part', () => {
    const userConfig = 'apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      shutdownGracePeriod: 30s\n';
    expect(contentTypes(parseMimeMultipart(al2023UserData(input({ userData: userConfig }))))).toEqual([CONTENT_TYPE_NODECONFIG, CONTENT_TYPE_NODECONFIG]);
    const mime = serializeMimeMultipart([
      { headers: [['Content-Type', CONTENT_TYPE_NODECONFIG]], content: userConfig },
      { headers: [['Content-Type', CONTENT_TYPE_SHELL]], content: 'echo after' },
    ]);
    const parts = parseMimeMultipart(al2023UserData(input({ userData: mime })));
    expect(contentTypes(parts)).toEqual([CONTENT_TYPE_NODECONFIG, CONTENT_TYPE_NODECONFIG, CONTENT_TYPE_SHELL]);
    expect(parts[1]?.content).toBe(userConfig);
    expect(parts[2]?.content).toBe('echo after');
  });

  it('asks nodeadm for RAID0 local storage with instanceStorePolicy RAID0, and omits cidr when unknown', () => {
    const { serviceCidr: _unused, ...noCidr } = CLUSTER;
    const config = nodeConfigOf(al2023UserData(input({ cluster: noCidr, instanceStorePolicy: 'RAID0' })));
    expect(config.spec['instance']).toEqual({ localStorage: { strategy: 'RAID0' } });
    expect(config.spec['cluster']).not.toHaveProperty('cidr');
  });

  it('gives byte-equal output whatever the order labels come in', () => {
    const reversed = Object.fromEntries(Object.entries(LABELS).reverse());
    expect(al2023UserData(input({ labels: reversed }))).toBe(al2023UserData(input()));
  });
});

describe('al2UserData', () => {
  it("puts the user's script first, then bootstrap.sh with the cluster, CA and kubelet args", () => {
    const parts = parseMimeMultipart(al2UserData(input({ userData: '#!/bin/bash\necho mine', kubelet: { maxPods: 110 } })));
    expect(contentTypes(parts)).toEqual([CONTENT_TYPE_SHELL, CONTENT_TYPE_SHELL]);
    expect(parts[0]?.content).toBe('#!/bin/bash\necho mine');
    const script = parts[1]?.content ?? '';
    expect(script.split('\n')[0]).toBe('#!/bin/bash -xe');
    expect(script).toContain(`/etc/eks/bootstrap.sh 'my-cluster' --apiserver-endpoint '${CLUSTER.endpoint}' --b64-cluster-ca '${CLUSTER.certificateAuthority}'`);
    expect(script).toContain("--service-ipv4-cidr '10.100.0.0/16'");
    expect(script).toContain('--use-max-pods false');
    expect(script).toContain(
      "--kubelet-extra-args '--node-labels=karpenter.sh/capacity-type=spot,karpenter.sh/nodepool=general,node.kubernetes.io/instance-type=m5.large,team=web --register-with-taints=dedicated=gpu:NoSchedule,example.com/agent-not-ready:NoExecute,karpenter.sh/unregistered:NoExecute --max-pods=110'",
    );
  });

  it('keeps user MIME parts (all headers) ahead of the bootstrap part and adds --local-disks raid0 for RAID0', () => {
    const mime = serializeMimeMultipart([{ headers: [['Content-Type', 'text/cloud-config'], ['Content-Disposition', 'attachment']], content: 'packages: [jq]' }]);
    const parts = parseMimeMultipart(al2UserData(input({ userData: mime, instanceStorePolicy: 'RAID0' })));
    expect(parts[0]).toEqual({ headers: [['Content-Type', 'text/cloud-config'], ['Content-Disposition', 'attachment']], content: 'packages: [jq]' });
    expect(parts[1]?.content).toContain('--local-disks raid0');
    expect(parts[1]?.content).not.toContain('--use-max-pods');
  });
});

describe('bottlerocketUserData', () => {
  type Settings = { settings: Record<string, any> };
  it("writes Skiff's kubernetes settings: cluster, labels, taints and kubelet values", () => {
    const toml = parseToml(bottlerocketUserData(input({ kubelet: { maxPods: 29, podsPerCore: 2, kubeReserved: { memory: '255Mi' }, evictionHard: { 'memory.available': '100Mi' }, imageGCHighThresholdPercent: 85, cpuCFSQuota: false } }))) as Settings;
    expect(toml.settings['kubernetes']).toEqual({
      'cluster-name': 'my-cluster',
      'api-server': CLUSTER.endpoint,
      'cluster-certificate': CLUSTER.certificateAuthority,
      'node-labels': { 'karpenter.sh/capacity-type': 'spot', 'karpenter.sh/nodepool': 'general', 'node.kubernetes.io/instance-type': 'm5.large', team: 'web' },
      'node-taints': { dedicated: ['gpu:NoSchedule'], 'example.com/agent-not-ready': [':NoExecute'], 'karpenter.sh/unregistered': [':NoExecute'] },
      'max-pods': 29,
      'kube-reserved': { memory: '255Mi' },
      'eviction-hard': { 'memory.available': '100Mi' },
      'image-gc-high-threshold-percent': '85',
      'cpu-cfs-quota-enforced': false,
    });
  });

  it("merges the user's TOML under Skiff's values: other settings kept, unknown kubernetes keys and non-settings dropped, user taints replaced", () => {
    const user = [
      'motd = "dropped"',
      '[settings.host-containers.admin]',
      'enabled = true',
      '[settings.autoscaling]',
      'should-wait = true',
      '[settings.kubernetes]',
      'cluster-name = "theirs"',
      'max-pods = 7',
      'not-a-setting = 1',
      'allowed-unsafe-sysctls = ["net.core.somaxconn"]',
      '[settings.kubernetes.node-labels]',
      'team = "theirs"',
      'mine = "kept"',
      '[settings.kubernetes.node-taints]',
      'theirs = ["x:NoSchedule"]',
    ].join('\n');
    const toml = parseToml(bottlerocketUserData(input({ userData: user }))) as Settings & Record<string, unknown>;
    expect(toml).not.toHaveProperty('motd');
    expect(toml.settings['host-containers']).toEqual({ admin: { enabled: true } });
    expect(toml.settings['autoscaling']).toEqual({ 'should-wait': false });
    const k8s = toml.settings['kubernetes'] as Record<string, unknown>;
    expect(k8s['cluster-name']).toBe('my-cluster');
    expect(k8s['max-pods']).toBe(7);
    expect(k8s).not.toHaveProperty('not-a-setting');
    expect(k8s['allowed-unsafe-sysctls']).toEqual(['net.core.somaxconn']);
    expect(k8s['node-labels']).toMatchObject({ team: 'web', mine: 'kept' });
    expect(k8s['node-taints']).not.toHaveProperty('theirs');
  });

  it('adds the RAID0 bootstrap command for instanceStorePolicy RAID0', () => {
    const toml = parseToml(bottlerocketUserData(input({ instanceStorePolicy: 'RAID0' }))) as Settings;
    expect(toml.settings['bootstrap-commands']?.['000-mount-instance-storage']).toMatchObject({ mode: 'always', essential: true });
  });

  it('rejects user data that is not TOML with InvalidUserData', () => {
    expect(() => bottlerocketUserData(input({ userData: '#!/bin/bash\necho no' }))).toThrow(expect.objectContaining({ code: 'InvalidUserData' }) as Error);
  });
});

describe('windowsUserData', () => {
  it("runs the user's PowerShell, then Start-EKSBootstrap.ps1 with the cluster and kubelet args", () => {
    const text = windowsUserData(input({ userData: 'Write-Host hi', kubelet: { clusterDNS: ['172.20.0.10'] } }));
    const lines = text.split('\n');
    expect(lines[0]).toBe('<powershell>');
    expect(lines[1]).toBe('Write-Host hi');
    expect(lines.at(-1)).toBe('</powershell>');
    expect(text).toContain(`-EKSClusterName 'my-cluster' -APIServerEndpoint '${CLUSTER.endpoint}' -Base64ClusterCA '${CLUSTER.certificateAuthority}'`);
    expect(text).toContain("-KubeletExtraArgs '--node-labels=");
    expect(text).toContain("-DNSClusterIP '172.20.0.10'");
  });
});

describe('userDataFor', () => {
  it('passes Custom user data through untouched (undefined when unset)', () => {
    expect(userDataFor('Custom', input({ userData: 'anything\n' }))).toBe('anything\n');
    expect(userDataFor('Custom', input())).toBeUndefined();
  });

  it.each([
    ['AL2023', /^MIME-Version: 1.0\n/],
    ['AL2', /^MIME-Version: 1.0\n/],
    ['Bottlerocket', /^\[settings\.kubernetes\]/],
    ['Windows2022', /^<powershell>/],
  ] as const)('dispatches %s', (family, shape) => {
    expect(userDataFor(family, input())).toMatch(shape);
  });
});
