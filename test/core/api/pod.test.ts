import { describe, expect, it } from 'vitest';
import { parseManifests, type ManifestOf } from '../../../shared/core/api/manifest.js';
import { isSidecar, podSchema, podSpecSchema, tolerationSchema, type Pod } from '../../../shared/core/api/pod.js';
import { edit, expectIssue, issuesOf } from './validation-expectations.js';

/** A valid Pod; line numbers matter to the tests below. */
const BASE = `apiVersion: v1
kind: Pod
metadata:
  name: app
spec:
  containers:
    - name: app
      image: nginx
      resources:
        requests:
          cpu: 500m
          memory: 1Gi
`;

/** Parses one Pod document. */
function parsePod(text: string): Pod {
  const [manifest] = parseManifests(text, 'pod.yaml');
  expect(manifest?.kind).toBe('Pod');
  return (manifest as ManifestOf<'Pod'>).object;
}

const problems = (text: string) => issuesOf(() => parseManifests(text, 'pod.yaml'));

describe('Pod', () => {
  describe('podSchema', () => {
    it('keeps requests and defaults the namespace to default', () => {
      const pod = parsePod(BASE);
      expect(pod.metadata.namespace).toBe('default');
      expect(pod.spec.containers[0]?.resources?.requests).toEqual({ cpu: '500m', memory: '1Gi' });
    });

    it('keeps an explicit namespace', () => {
      expect(parsePod(edit(BASE, { '  name: app\n': '  name: app\n  namespace: team-a\n' })).metadata.namespace).toBe('team-a');
    });

    it('defaults a request to its limit when only the limit is set', () => {
      const pod = parsePod(edit(BASE, { '        requests:\n          cpu: 500m\n          memory: 1Gi\n': '        limits:\n          cpu: "1"\n          nvidia.com/gpu: 1\n        requests:\n          memory: 1Gi\n' }));
      expect(pod.spec.containers[0]?.resources?.requests).toEqual({ cpu: '1', 'nvidia.com/gpu': '1', memory: '1Gi' });
      expect(pod.spec.containers[0]?.resources?.limits).toEqual({ cpu: '1', 'nvidia.com/gpu': '1' });
    });

    it('rejects a request above its limit', () => {
      const text = edit(BASE, { '          memory: 1Gi\n': '          memory: 1Gi\n        limits:\n          cpu: 250m\n' });
      expectIssue(problems(text), { path: 'spec.containers[0].resources.requests.cpu', line: 11, message: /less than or equal/ });
    });

    it('rejects a malformed quantity and a fractional GPU', () => {
      const issues = problems(edit(BASE, { 'cpu: 500m': 'cpu: half', 'memory: 1Gi': 'nvidia.com/gpu: "0.5"' }));
      expectIssue(issues, { path: 'spec.containers[0].resources.requests.cpu', line: 11, message: /quantity/ });
      const gpu = problems(edit(BASE, { 'memory: 1Gi': 'nvidia.com/gpu: "0.5"' }));
      expectIssue(gpu, { path: 'spec.containers[0].resources.requests["nvidia.com/gpu"]', line: 12, message: /whole number/ });
    });

    it('passes fields Skiff does not model through untouched', () => {
      const pod = parsePod(edit(BASE, { '      image: nginx\n': '      image: nginx\n      env: [{name: A, value: b}]\n      volumeMounts: [{name: v, mountPath: /v}]\n', 'spec:\n': 'spec:\n  volumes: [{name: v, emptyDir: {}}]\n  serviceAccountName: sa\n' }));
      expect(pod.spec['serviceAccountName']).toBe('sa');
      expect(pod.spec.containers[0]?.['env']).toEqual([{ name: 'A', value: 'b' }]);
    });

    it('rejects a misspelt PodSpec field with a suggestion, so a constraint is never silently dropped', () => {
      const issues = problems(edit(BASE, { 'spec:\n': 'spec:\n  topologySpreadConstraint: []\n  nodeSelecter: {a: b}\n' }));
      expectIssue(issues, { path: 'spec.topologySpreadConstraint', line: 6, message: /did you mean "topologySpreadConstraints"/ });
      expectIssue(issues, { path: 'spec.nodeSelecter', line: 7, message: /did you mean "nodeSelector"/ });
    });

    it('rejects a misspelt container or resources field with a suggestion, so requests are never silently dropped (trial: resources.request left a pod requesting nothing)', () => {
      const issues = problems(edit(BASE, { '        requests:\n': '        request:\n', '      image: nginx\n': '      image: nginx\n      volumeMount: []\n' }));
      expectIssue(issues, { path: 'spec.containers[0].volumeMount', line: 9, message: /unknown field "volumeMount" \(did you mean "volumeMounts"\?\)/ });
      expectIssue(issues, { path: 'spec.containers[0].resources.request', line: 11, message: /unknown field "request" \(did you mean "requests"\?\)/ });
      expectIssue(problems(edit(BASE, { '      image: nginx\n': '      image: nginx\n      ports: [{containerPrt: 80}]\n' })), { path: 'spec.containers[0].ports[0].containerPrt', line: 9, message: /did you mean "containerPort"/ });
      expectIssue(problems(edit(BASE, { '      image: nginx\n': '      image: nginx\n      restartPolicy: Never\n' })), { path: 'spec.containers[0].restartPolicy', line: 9, message: /can only be Always \(it makes an init container a sidecar\); the pod's restart policy is spec\.restartPolicy/ });
      // every field a v1 Container has loads, as kubectl get -o yaml writes them
      const full = 'args: [a]\ncommand: [b]\nenv: []\nenvFrom: []\nimagePullPolicy: IfNotPresent\nlifecycle: {}\nlivenessProbe: {}\nreadinessProbe: {}\nresizePolicy: []\nrestartPolicyRules: []\nsecurityContext: {}\nstartupProbe: {}\nstdin: false\nstdinOnce: false\nterminationMessagePath: /dev/termination-log\nterminationMessagePolicy: File\ntty: false\nvolumeDevices: []\nvolumeMounts: []\nworkingDir: /\n';
      expect(() => parsePod(edit(BASE, { '      image: nginx\n': `      image: nginx\n${full.replace(/^/gm, '      ').replace(/ +$/, '')}` }))).not.toThrow();
    });

    it('still rejects unknown top-level and metadata fields', () => {
      const issues = problems(`${BASE}extra: 1\n`);
      expectIssue(issues, { path: 'extra', line: 13, message: /unknown field/ });
    });

    it('requires at least one container', () => {
      expectIssue(problems('apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers: []\n'), { path: 'spec.containers', line: 5, message: /at least one container/ });
    });

    it('rejects duplicate container names and restartPolicy on an app container', () => {
      const issues = problems(`${BASE}      restartPolicy: Always\n    - name: app\n`);
      expectIssue(issues, { path: 'spec.containers[1].name', line: 14, message: /duplicate/ });
      expectIssue(issues, { path: 'spec.containers[0].restartPolicy', line: 13, message: /init containers/ });
    });

    it('marks an init container with restartPolicy Always as a sidecar', () => {
      const pod = parsePod(`${BASE}  initContainers:\n    - name: proxy\n      restartPolicy: Always\n    - name: migrate\n`);
      expect(pod.spec.initContainers?.map(isSidecar)).toEqual([true, false]);
    });

    it('parses ports with hostPort and defaults the protocol to TCP', () => {
      const pod = parsePod(edit(BASE, { '      image: nginx\n': '      image: nginx\n      ports:\n        - containerPort: 80\n          hostPort: 8080\n' }));
      expect(pod.spec.containers[0]?.ports).toEqual([{ containerPort: 80, hostPort: 8080, protocol: 'TCP' }]);
    });

    it('rejects a port out of range', () => {
      expectIssue(problems(edit(BASE, { '      image: nginx\n': '      image: nginx\n      ports: [{containerPort: 70000}]\n' })), { path: 'spec.containers[0].ports[0].containerPort', line: 9 });
    });

    it('parses node selection, affinity, spread, priority and grace period', () => {
      const pod = parsePod(`${BASE}  nodeSelector:
    workload-type: general
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
          - matchExpressions:
              - {key: topology.kubernetes.io/zone, operator: In, values: [us-west-2a]}
            matchFields:
              - {key: metadata.name, operator: In, values: [n1]}
      preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 50
          preference:
            matchExpressions: [{key: karpenter.sh/capacity-type, operator: In, values: [spot]}]
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        - labelSelector: {matchLabels: {app: app}}
          topologyKey: kubernetes.io/hostname
    podAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 10
          podAffinityTerm: {topologyKey: topology.kubernetes.io/zone, labelSelector: {matchExpressions: [{key: app, operator: Exists}]}}
  topologySpreadConstraints:
    - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, minDomains: 3, labelSelector: {matchLabels: {app: app}}}
  tolerations:
    - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
    - {key: workload-type, value: batch, effect: NoSchedule}
    - {operator: Exists}
    - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}
  priority: 1000
  priorityClassName: high
  terminationGracePeriodSeconds: 120
  nodeName: n1
  overhead: {cpu: 250m}
`);
      expect(pod.spec.nodeSelector).toEqual({ 'workload-type': 'general' });
      expect(pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms[0]?.matchFields).toEqual([{ key: 'metadata.name', operator: 'In', values: ['n1'] }]);
      expect(pod.spec.tolerations?.[1]).toEqual({ key: 'workload-type', operator: 'Equal', value: 'batch', effect: 'NoSchedule' });
      expect(pod.spec.topologySpreadConstraints?.[0]?.minDomains).toBe(3);
      expect(pod.spec.priority).toBe(1000);
      expect(pod.spec.overhead).toEqual({ cpu: '250m' });
    });

    it('rejects a Karpenter-only operator in pod node affinity', () => {
      const text = `${BASE}  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n          - matchExpressions: [{key: karpenter.k8s.aws/instance-cpu, operator: Gte, values: ["4"]}]\n`;
      expectIssue(problems(text), { path: 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator', line: 17 });
    });

    it('rejects a Gt or Lt value past what Skiff holds exactly, naming why (kube-scheduler parses it as a 64-bit integer)', () => {
      const affinity = (value: string) =>
        `${BASE}  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n          - matchExpressions: [{key: team-size, operator: Lt, values: ["${value}"]}]\n`;
      const path = 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values[0]';
      expectIssue(problems(affinity('99999999999999999999')), {
        path,
        line: 17,
        message: /^operator Lt needs an integer between -9007199254740991 and 9007199254740991, got "99999999999999999999": it does not fit in a 64-bit integer, so kube-scheduler cannot parse it/,
      });
      expect(problems(`${affinity('9007199254740991')}  nodeSelector: {gpu: true}\n`).filter((i) => i.path === path)).toEqual([]);
    });

    it('rejects matchFields on anything but metadata.name', () => {
      const text = `${BASE}  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n          - matchFields: [{key: spec.unschedulable, operator: In, values: ["x"]}]\n`;
      expectIssue(problems(text), { path: 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].key', line: 17, message: /metadata.name/ });
    });

    it('rejects minDomains with ScheduleAnyway and a nodeSelector value that is not a string', () => {
      const issues = problems(`${BASE}  nodeSelector: {gpu: true}\n  topologySpreadConstraints:\n    - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, minDomains: 2}\n`);
      expectIssue(issues, { path: 'spec.nodeSelector.gpu', line: 13 });
      expectIssue(issues, { path: 'spec.topologySpreadConstraints[0].minDomains', line: 15 });
    });
  });

  describe('tolerationSchema', () => {
    it('defaults operator to Equal', () => {
      expect(tolerationSchema.parse({ key: 'a', value: 'b' })).toEqual({ key: 'a', operator: 'Equal', value: 'b' });
    });
    it('rejects a value with Exists', () => {
      expect(tolerationSchema.safeParse({ key: 'a', operator: 'Exists', value: 'b' }).success).toBe(false);
    });
    it('rejects an empty key without Exists', () => {
      expect(tolerationSchema.safeParse({ value: 'b' }).success).toBe(false);
    });
    it('rejects tolerationSeconds without NoExecute', () => {
      expect(tolerationSchema.safeParse({ key: 'a', operator: 'Exists', effect: 'NoSchedule', tolerationSeconds: 5 }).success).toBe(false);
    });
  });

  describe('podSpecSchema', () => {
    it('is usable on its own', () => {
      expect(podSpecSchema.parse({ containers: [{ name: 'a' }] }).containers).toHaveLength(1);
      expect(podSchema.safeParse({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'Bad_Name' }, spec: { containers: [{ name: 'a' }] } }).success).toBe(false);
    });
  });
});
