import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { limitRangeSchema } from '../../../shared/core/api/limitrange.js';
import { parseManifests, type Manifest, type ManifestOf } from '../../../shared/core/api/manifest.js';
import { pdbSchema, scaledValue } from '../../../shared/core/api/pdb.js';
import { jobSchema, runForSeconds } from '../../../shared/core/api/workloads.js';
import { edit, expectIssue, issuesOf } from './validation-expectations.js';

const SEED = new URL('../../../examples/seed/', import.meta.url);

/** Parses a seed example file holding one object. */
function seed(file: string): Manifest {
  const [manifest] = parseManifests(readFileSync(new URL(file, SEED), 'utf8'), file);
  if (!manifest) throw new Error(`no manifest in ${file}`);
  return manifest;
}

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers: [{name: web}]
`;

const JOB = `apiVersion: batch/v1
kind: Job
metadata:
  name: batch
spec:
  template:
    metadata:
      annotations:
        skiff.dev/run-for: 2h
    spec:
      restartPolicy: Never
      containers: [{name: w}]
`;

const problems = (text: string) => issuesOf(() => parseManifests(text, 'w.yaml'));

describe('workloads', () => {
  describe('Deployment', () => {
    it('defaults replicas to 1', () => {
      const [m] = parseManifests(DEPLOYMENT, 'w.yaml') as [ManifestOf<'Deployment'>];
      expect(m.object.spec.replicas).toBe(1);
      expect(m.object.metadata.namespace).toBe('default');
    });

    it('keeps the seed web, gpu-inference and my-service deployments', () => {
      const web = seed('deployment-web.yaml') as ManifestOf<'Deployment'>;
      expect(web.object.spec.replicas).toBe(12);
      expect(web.object.spec.template.spec.nodeSelector).toEqual({ 'workload-type': 'general' });
      expect(web.object.spec.template.spec.containers[0]?.resources?.requests).toEqual({ cpu: '500m', memory: '1Gi' });
      const gpu = seed('deployment-gpu-inference.yaml') as ManifestOf<'Deployment'>;
      expect(gpu.object.spec.replicas).toBe(2);
      expect(gpu.object.spec.template.spec.containers[0]?.resources?.requests?.['nvidia.com/gpu']).toBe('1');
      expect(gpu.object.spec.template.spec.tolerations).toEqual([{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }]);
      const service = seed('deployment-my-service.yaml') as ManifestOf<'Deployment'>;
      expect(service.object.spec.replicas).toBe(3);
      expect(service.object.spec.template.metadata.labels).toEqual({ app: 'my-service' });
    });

    it('rejects a selector that does not match the template labels', () => {
      expectIssue(problems(edit(DEPLOYMENT, { 'labels: {app: web}': 'labels: {app: api}' })), { path: 'spec.template.metadata.labels', line: 10, message: /does not match/ });
    });

    it('rejects an empty selector and a missing one', () => {
      expectIssue(problems(edit(DEPLOYMENT, { 'matchLabels: {app: web}': 'matchLabels: {}' })), { path: 'spec.selector', line: 6, message: /empty/ });
      expectIssue(problems(edit(DEPLOYMENT, { '  selector:\n    matchLabels: {app: web}\n': '' })), { path: 'spec.selector', line: 5, message: /required/ });
    });

    it('rejects the typo replica: as an unknown field', () => {
      expectIssue(problems(edit(DEPLOYMENT, { 'spec:\n  selector': 'spec:\n  replica: 3\n  selector' })), { path: 'spec.replica', line: 6, message: /did you mean "replicas"/ });
    });

    it('rejects negative replicas', () => {
      expectIssue(problems(edit(DEPLOYMENT, { 'spec:\n  selector': 'spec:\n  replicas: -1\n  selector' })), { path: 'spec.replicas', line: 6 });
    });
  });

  describe('StatefulSet and DaemonSet', () => {
    it('parse with their own fields', () => {
      const manifests = parseManifests(
        `${DEPLOYMENT.replace('Deployment', 'StatefulSet').replace('spec:\n  selector', 'spec:\n  serviceName: web\n  podManagementPolicy: Parallel\n  replicas: 3\n  selector')}---\n${DEPLOYMENT.replace('Deployment', 'DaemonSet')}`,
        'w.yaml',
      );
      expect(manifests.map((m) => m.kind)).toEqual(['StatefulSet', 'DaemonSet']);
      expect((manifests[0] as ManifestOf<'StatefulSet'>).object.spec.replicas).toBe(3);
      expect((manifests[1] as ManifestOf<'DaemonSet'>).source.line).toBe(17);
    });

    it('rejects replicas on a DaemonSet', () => {
      expectIssue(problems(DEPLOYMENT.replace('Deployment', 'DaemonSet').replace('spec:\n  selector', 'spec:\n  replicas: 2\n  selector')), { path: 'spec.replicas', line: 6, message: /unknown field/ });
    });
  });

  describe('Job', () => {
    it('defaults parallelism and completions to 1 when neither is set', () => {
      const job = jobSchema.parse(parseManifests(JOB, 'j.yaml')[0]?.object);
      expect(job.spec.parallelism).toBe(1);
      expect(job.spec.completions).toBe(1);
    });

    it('leaves completions unset when only parallelism is given (a work queue)', () => {
      const [m] = parseManifests(edit(JOB, { 'spec:\n  template': 'spec:\n  parallelism: 4\n  template' }), 'j.yaml') as [ManifestOf<'Job'>];
      expect(m.object.spec.parallelism).toBe(4);
      expect(m.object.spec.completions).toBeUndefined();
    });

    it('keeps the seed batch Job: parallelism 10, article nodeSelector and toleration, run-for 2h', () => {
      const job = seed('job-batch.yaml') as ManifestOf<'Job'>;
      expect(job.object.spec.parallelism).toBe(10);
      expect(job.object.spec.template.spec.nodeSelector).toEqual({ 'workload-type': 'batch' });
      expect(job.object.spec.template.spec.tolerations).toEqual([{ key: 'workload-type', operator: 'Equal', value: 'batch', effect: 'NoSchedule' }]);
      expect(job.object.spec.template.spec.containers[0]?.resources?.requests).toEqual({ cpu: '1', memory: '2Gi' });
      expect(runForSeconds(job.object.spec.template)).toBe(7200);
    });

    it('returns null run-for without the annotation', () => {
      const [m] = parseManifests(edit(JOB, { '    metadata:\n      annotations:\n        skiff.dev/run-for: 2h\n': '' }), 'j.yaml') as [ManifestOf<'Job'>];
      expect(runForSeconds(m.object.spec.template)).toBeNull();
    });

    it('rejects a run-for annotation that is not a duration', () => {
      expectIssue(problems(edit(JOB, { 'run-for: 2h': 'run-for: two hours' })), { path: 'spec.template.metadata.annotations["skiff.dev/run-for"]', line: 9, message: /duration/ });
    });

    it('rejects a Job whose pods would restart forever', () => {
      expectIssue(problems(edit(JOB, { '      restartPolicy: Never\n': '' })), { path: 'spec.template.spec.restartPolicy', line: 10, message: /Never or OnFailure/ });
      expectIssue(problems(edit(JOB, { 'restartPolicy: Never': 'restartPolicy: Always' })), { path: 'spec.template.spec.restartPolicy', line: 11 });
    });
  });

  describe('PodDisruptionBudget', () => {
    it('keeps the seed my-service-pdb', () => {
      const pdb = seed('pdb-my-service.yaml') as ManifestOf<'PodDisruptionBudget'>;
      expect(pdb.object.metadata.name).toBe('my-service-pdb');
      expect(pdb.object.spec).toEqual({ selector: { matchLabels: { app: 'my-service' } }, minAvailable: 2 });
    });

    it('rejects both minAvailable and maxUnavailable, and neither', () => {
      const base = { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'p' } };
      expect(pdbSchema.safeParse({ ...base, spec: { minAvailable: 1, maxUnavailable: 1 } }).success).toBe(false);
      expect(pdbSchema.safeParse({ ...base, spec: {} }).success).toBe(false);
      expect(pdbSchema.safeParse({ ...base, spec: { maxUnavailable: '25%' } }).success).toBe(true);
    });

    it('rejects a percentage above 100% and a count written as a string', () => {
      const text = 'apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: p}\nspec:\n  minAvailable: "150%"\n';
      expectIssue(problems(text), { path: 'spec.minAvailable', line: 5 });
      expectIssue(problems(text.replace('"150%"', '"2"')), { path: 'spec.minAvailable', line: 5 });
    });

    it('scales a percentage up and keeps a count', () => {
      expect(scaledValue('50%', 3)).toBe(2);
      expect(scaledValue('10%', 1)).toBe(1);
      expect(scaledValue(2, 10)).toBe(2);
    });
  });

  describe('LimitRange', () => {
    const base = { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'l' } };
    it('parses container defaults', () => {
      const lr = limitRangeSchema.parse({ ...base, spec: { limits: [{ type: 'Container', default: { cpu: '500m' }, defaultRequest: { cpu: '100m', memory: '128Mi' }, max: { cpu: 2 } }] } });
      expect(lr.spec.limits[0]?.defaultRequest).toEqual({ cpu: '100m', memory: '128Mi' });
      expect(lr.spec.limits[0]?.max).toEqual({ cpu: '2' });
      expect(lr.metadata.namespace).toBe('default');
    });

    it('defaults like the API server: default from max, defaultRequest from default, else from min', () => {
      const [maxOnly, minOnly, both, pod] = limitRangeSchema.parse({
        ...base,
        spec: {
          limits: [
            { type: 'Container', max: { cpu: '2' } },
            { type: 'Container', min: { memory: '1Gi' } },
            { type: 'Container', min: { cpu: '100m' }, default: { cpu: '1' }, defaultRequest: { memory: '64Mi' } },
            { type: 'Pod', max: { cpu: '4' } },
          ],
        },
      }).spec.limits;
      expect([maxOnly?.default, maxOnly?.defaultRequest]).toEqual([{ cpu: '2' }, { cpu: '2' }]);
      expect([minOnly?.default, minOnly?.defaultRequest]).toEqual([undefined, { memory: '1Gi' }]);
      expect([both?.default, both?.defaultRequest]).toEqual([{ cpu: '1' }, { cpu: '1', memory: '64Mi' }]);
      expect([pod?.default, pod?.defaultRequest]).toEqual([undefined, undefined]);
    });

    it('rejects defaults on type Pod and a default above max', () => {
      const text = 'apiVersion: v1\nkind: LimitRange\nmetadata: {name: l}\nspec:\n  limits:\n    - type: Pod\n      default: {cpu: 1}\n    - type: Container\n      default: {cpu: "4"}\n      max: {cpu: "2"}\n';
      const issues = problems(text);
      expectIssue(issues, { path: 'spec.limits[0].default', line: 7, message: /only be set for type Container/ });
      expectIssue(issues, { path: 'spec.limits[1].max.cpu', line: 10, message: /at least default/ });
    });
  });
});
