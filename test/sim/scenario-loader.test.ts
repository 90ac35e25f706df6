import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ValidationError } from '../../shared/core/errors.js';
import { checkScenarioTexts, loadScenario } from '../../shared/sim/scenario-loader.js';
import { expectIssue, issuesOfAsync } from '../core/api/validation-expectations.js';

const SEED = fileURLToPath(new URL('../../examples/seed', import.meta.url));
const NOW = Date.UTC(2026, 0, 15, 10, 30, 42);

const NODE_CLASS = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: c}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: c}}]
  role: node-role
`;

const nodePool = (name: string, nodeClass = 'default') => `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: ${name}
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: ${nodeClass}
`;

const deployment = (name: string, replicas: number) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      containers: [{name: c, resources: {requests: {cpu: 100m}}}]
`;

let dir: string;

/** Writes files into the temporary scenario folder. */
function write(files: Readonly<Record<string, string>>): void {
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'skiff-scenario-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('scenario-loader', () => {
  describe('loadScenario', () => {
    it('skips kinds Skiff does not read, as validate does, and says where; a near miss of its own kinds is still an error', async () => {
      const service = 'apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n';
      write({ 'a.yaml': NODE_CLASS, 'b.yaml': nodePool('general'), 'c.yaml': `${deployment('web', 2)}---\n${service}` });
      const scenario = await loadScenario(dir, { now: NOW });
      expect(scenario.deployments.map((d) => d.metadata.name)).toEqual(['web']);
      expect(scenario.skipped).toEqual([{ kind: 'Service', apiVersion: 'v1', name: 'web', file: join(dir, 'c.yaml'), line: 13 }]);
      write({ 'd.yaml': 'apiVersion: apps/v1\nkind: Deploymnt\nmetadata: {name: x}\n' });
      expectIssue(await issuesOfAsync(loadScenario(dir, { now: NOW })), { file: join(dir, 'd.yaml'), path: 'kind', line: 2, message: /unknown kind "Deploymnt" \(apiVersion apps\/v1\) — did you mean Deployment\?; supported: /u });
    });

    it('says where Nodes and NodeClaims go when an event applies one, rather than suggesting Pod (trial)', async () => {
      write({ 'a.yaml': NODE_CLASS, 'b.yaml': nodePool('general') });
      writeFileSync(
        join(dir, 'scenario.yaml'),
        'apiVersion: skiff.dev/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nspec:\n  duration: 1h\n  events:\n    - {at: 5m, apply: {apiVersion: v1, kind: Node, metadata: {name: n}}}\n    - {at: 6m, apply: {apiVersion: karpenter.sh/v1, kind: NodeClaim, metadata: {name: c}}}\n',
      );
      const issues = await issuesOfAsync(loadScenario(dir, { now: NOW }));
      expect(issues.map((i) => `${i.line}: ${i.path}: ${i.message}`)).toEqual([
        "7: spec.events[0].apply.kind: a Node is not read as a manifest: a scenario's starting nodes are spec.nodes of its Scenario document, or the Nodes of a cluster snapshot (kubectl get nodes -o yaml, in the scenario folder); Skiff launches the rest",
        "8: spec.events[1].apply.kind: a NodeClaim is not read as a manifest: NodeClaims are Skiff's own (it creates one for each node it launches); start with nodes through spec.nodes of the Scenario document, or a cluster snapshot's Nodes",
      ]);
    });

    it('loads the whole examples/seed folder', async () => {
      const scenario = await loadScenario(SEED, { now: NOW });
      expect(scenario.name).toBe('seed');
      expect(scenario.files.map((f) => f.slice(SEED.length + 1))).toEqual([
        'deployment-gpu-inference.yaml',
        'deployment-my-service.yaml',
        'deployment-web.yaml',
        'ec2nodeclass-default.yaml',
        'ec2nodeclass-gpu-class.yaml',
        'job-batch.yaml',
        'nodepool-batch.yaml',
        'nodepool-general.yaml',
        'nodepool-gpu.yaml',
        'pdb-my-service.yaml',
        'pod-high-memory-report.yaml',
        'scenario.yaml',
      ]);
      expect(scenario.spec.startMs).toBe(Date.UTC(2026, 2, 2, 8, 0, 0));
      expect(scenario.spec.durationSeconds).toBe(3 * 3600);
      expect(scenario.spec.region).toBe('us-west-2');
      expect(scenario.spec.events).toEqual([]);
      expect(scenario.nodePools.map((p) => p.metadata.name)).toEqual(['batch', 'general', 'gpu']);
      expect(scenario.nodeClasses.map((c) => c.metadata.name)).toEqual(['default', 'gpu-class']);
      expect(scenario.deployments.map((d) => [d.metadata.name, d.spec.replicas])).toEqual([
        ['gpu-inference', 2],
        ['my-service', 3],
        ['web', 12],
      ]);
      expect(scenario.jobs.map((j) => [j.metadata.name, j.spec.parallelism])).toEqual([['batch', 10]]);
      expect(scenario.pods.map((p) => [p.metadata.name, p.spec.nodeSelector])).toEqual([['high-memory-report', { 'node-type': 'high-memory' }]]);
      expect(scenario.pdbs.map((p) => p.metadata.name)).toEqual(['my-service-pdb']);
      expect(scenario.statefulSets).toEqual([]);
      expect(scenario.daemonSets).toEqual([]);
      expect(scenario.limitRanges).toEqual([]);
      expect(scenario.warnings).toEqual([]);
    });

    it('keeps the seed values and a source on every object', async () => {
      const scenario = await loadScenario(SEED, { now: NOW });
      const general = scenario.nodePools.find((p) => p.metadata.name === 'general');
      expect(general?.spec.template.spec.expireAfter).toBe('720h');
      expect(general?.spec.disruption.budgets).toEqual([{ nodes: '10%' }]);
      expect(general?.spec.limits).toEqual({ cpu: '400', memory: '800Gi' });
      expect(scenario.nodePools.find((p) => p.metadata.name === 'gpu')?.spec.limits).toEqual({ cpu: '100' });
      expect(general?.source).toEqual({ file: join(SEED, 'nodepool-general.yaml'), line: 1 });
      expect(scenario.nodePools.find((p) => p.metadata.name === 'gpu')?.source.line).toBe(3);
      const all = [...scenario.nodePools, ...scenario.nodeClasses, ...scenario.pods, ...scenario.deployments, ...scenario.jobs, ...scenario.pdbs];
      for (const o of all) expect(o.source.file.startsWith(SEED)).toBe(true);
    });

    it('loads one multi-document file, naming the scenario after it and starting at the current minute', async () => {
      const file = join(dir, 'cluster.yml');
      writeFileSync(file, `${NODE_CLASS}---\n${nodePool('general')}---\n${deployment('web', 2)}`);
      const scenario = await loadScenario(file, { now: NOW });
      expect(scenario.name).toBe('cluster');
      expect(scenario.files).toEqual([file]);
      expect(scenario.spec.startMs).toBe(Date.UTC(2026, 0, 15, 10, 30));
      expect(scenario.spec.durationSeconds).toBe(3600);
      expect(scenario.deployments[0]?.source).toEqual({ file, line: 23 });
    });

    it('leaves out the events after the end --duration sets, counts them, and still places the issues of the events kept', async () => {
      const scenario = (events: string) => `apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: cut}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: 3h
  events:
${events}`;
      write({ 'class.yaml': NODE_CLASS, 'pool.yaml': nodePool('general'), 'web.yaml': deployment('web', 2) });
      writeFileSync(join(dir, 'scenario.yaml'), scenario(['    - {at: 10m, scale: {kind: Deployment, name: web, replicas: 4}}', '    - {at: 2h, scale: {kind: Deployment, name: web, replicas: 1}}', '    - {at: 30m, scale: {kind: Deployment, name: web, replicas: 3}}'].join('\n')));
      const cut = await loadScenario(dir, { now: NOW, overrides: { durationSeconds: 3600 } });
      expect(cut.spec.durationSeconds).toBe(3600);
      expect(cut.spec.events.map((e) => e.atSeconds)).toEqual([600, 1800]);
      expect(cut.eventsAfterEnd).toBe(1);
      // Without --duration the document's own 3 h holds every event, and nothing is counted.
      expect((await loadScenario(dir, { now: NOW })).eventsAfterEnd).toBeUndefined();

      // An event kept after one left out: its issue names its own line and index, not those of the index it moved to.
      rmSync(join(dir, 'scenario.yaml'));
      writeFileSync(join(dir, 'scenario2.yaml'), scenario(['    - {at: 2h, scale: {kind: Deployment, name: web, replicas: 1}}', '    - {at: 30m, scale: {kind: Deployment, name: web, replicas: -3}}'].join('\n')));
      const issues = await issuesOfAsync(loadScenario(dir, { now: NOW, overrides: { durationSeconds: 3600 } }));
      expect(issues.map((i) => [i.file.endsWith('scenario2.yaml'), i.line, i.path])).toEqual([[true, 9, 'spec.events[1].scale.replicas']]);
      // The same for the checks made after parsing: a kept event naming a Deployment that does not exist.
      rmSync(join(dir, 'scenario2.yaml'));
      writeFileSync(join(dir, 'scenario3.yaml'), scenario(['    - {at: 2h, scale: {kind: Deployment, name: web, replicas: 1}}', '    - {at: 30m, scale: {kind: Deployment, name: nope, replicas: 3}}'].join('\n')));
      const missing = await issuesOfAsync(loadScenario(dir, { now: NOW, overrides: { durationSeconds: 3600 } }));
      expect(missing.map((i) => [i.file.endsWith('scenario3.yaml'), i.line, i.path, i.message])).toEqual([[true, 9, 'spec.events[1].scale.name', 'no Deployment default/nope exists at that time']]);
    });

    it('reports a Deployment that does not load once, not again at the scale event that names it', async () => {
      const broken = deployment('web', 2).replace('cpu: 100m', 'cpu: 100m, memory: 1.5Gb');
      write({ 'class.yaml': NODE_CLASS, 'pool.yaml': nodePool('general'), 'web.yaml': broken });
      writeFileSync(join(dir, 'scenario.yaml'), 'apiVersion: skiff.dev/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nspec:\n  duration: 1h\n  events:\n    - {at: 10m, scale: {kind: Deployment, name: web, replicas: 4}}\n    - {at: 20m, scale: {kind: Deployment, name: api, replicas: 4}}\n');
      const issues = await issuesOfAsync(loadScenario(dir, { now: NOW }));
      expect(issues.map((i) => [i.file.split('/').pop(), i.path])).toEqual([
        ['scenario.yaml', 'spec.events[1].scale.name'],
        ['web.yaml', 'spec.template.spec.containers[0].resources.requests.memory'],
      ]);
      expect(issues[0]?.message).toBe('no Deployment default/api exists at that time');
    });

    it('reads only *.yaml and *.yml files of the folder itself, sorted', async () => {
      mkdirSync(join(dir, 'nested'));
      write({ 'b.yml': nodePool('general'), 'a.yaml': NODE_CLASS, 'notes.txt': 'not yaml', 'nested/c.yaml': 'kind: Broken' });
      const scenario = await loadScenario(dir, { now: NOW });
      expect(scenario.files).toEqual([join(dir, 'a.yaml'), join(dir, 'b.yml')]);
    });

    it('rejects a NodePool whose EC2NodeClass is missing, with file, line and path', async () => {
      write({ 'pool.yaml': nodePool('general', 'missing') });
      expectIssue(await issuesOfAsync(loadScenario(dir, { now: NOW })), {
        path: 'spec.template.spec.nodeClassRef.name',
        line: 11,
        file: join(dir, 'pool.yaml'),
        message: /EC2NodeClass "missing", which is not in the scenario/,
      });
    });

    it('suggests the name a reference most likely meant (trial: nodePool: genral had no hint)', async () => {
      write({ 'class.yaml': NODE_CLASS, 'pool.yaml': `${nodePool('general', 'defualt')}---\n${nodePool('gpu')}`, 'web.yaml': deployment('web', 1) });
      writeFileSync(
        join(dir, 'scenario.yaml'),
        'apiVersion: skiff.dev/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nspec:\n  duration: 1h\n  nodes:\n    - {name: n1, instanceType: m5.large, zone: us-west-2a, capacityType: on-demand, nodePool: genral}\n    - {name: n2, instanceType: m5.large, zone: us-west-2a, capacityType: on-demand, nodePool: zzz}\n  events:\n    - {at: 10m, scale: {kind: Deployment, name: wbe, replicas: 4}}\n',
      );
      const issues = await issuesOfAsync(loadScenario(dir, { now: NOW }));
      expect(issues.map((i) => `${i.path}: ${i.message}`)).toEqual([
        'spec.template.spec.nodeClassRef.name: NodePool general references EC2NodeClass "defualt", which is not in the scenario; did you mean "default"?',
        'spec.nodes[0].nodePool: node n1 names NodePool "genral", which is not in the scenario; did you mean "general"?',
        'spec.nodes[1].nodePool: node n2 names NodePool "zzz", which is not in the scenario',
        'spec.events[0].scale.name: no Deployment default/wbe exists at that time; did you mean "web"?',
      ]);
    });

    it('reports a Scenario document\'s checks across fields and its checks against the other objects in one run (trial: errors came in rounds)', async () => {
      write({ 'class.yaml': NODE_CLASS, 'pool.yaml': nodePool('general'), 'web.yaml': deployment('web', 1) });
      writeFileSync(
        join(dir, 'scenario.yaml'),
        'apiVersion: skiff.dev/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nspec:\n  duration: 1h\n  nodes:\n    - {name: n1, instanceType: m5.large, zone: us-west-2a, capacityType: on-demand, nodePool: genral}\n    - {name: n1, instanceType: m5.large, zone: us-west-9a, capacityType: on-demand}\n  events:\n    - {at: 10m, scale: {kind: Deployment, name: wbe, replicas: 4}}\n    - {at: 2h, scale: {kind: Deployment, name: web, replicas: 4}}\n',
      );
      const issues = await issuesOfAsync(loadScenario(dir, { now: NOW }));
      expect(issues.map((i) => i.path).sort()).toEqual(['spec.events[0].scale.name', 'spec.events[1].at', 'spec.nodes[0].nodePool', 'spec.nodes[1].name', 'spec.nodes[1].zone']);
    });

    it('reports an invalid EC2NodeClass once, not again as missing from the NodePools that name it', async () => {
      write({ 'class.yaml': `${NODE_CLASS}  blockDeviceMappings: [{deviceName: /dev/xvda, ebs: {volumeSize: 1Ki}}]\n`, 'pool.yaml': nodePool('general') });
      const issues = await issuesOfAsync(loadScenario(dir, { now: NOW }));
      expect(issues.map((i) => i.path)).toEqual(['spec.blockDeviceMappings[0].ebs.volumeSize']);
    });

    it('rejects a nodeClassRef to another provider', async () => {
      write({ 'class.yaml': NODE_CLASS, 'pool.yaml': nodePool('general').replace('group: karpenter.k8s.aws', 'group: karpenter.azure.com') });
      expectIssue(await issuesOfAsync(loadScenario(dir, { now: NOW })), { path: 'spec.template.spec.nodeClassRef.group', line: 9 });
    });

    it('rejects duplicate names of the same kind and namespace, across files', async () => {
      write({ 'a.yaml': `${NODE_CLASS}---\n${deployment('web', 1)}`, 'b.yaml': deployment('web', 2) });
      expectIssue(await issuesOfAsync(loadScenario(dir, { now: NOW })), {
        path: 'metadata.name',
        line: 4,
        file: join(dir, 'b.yaml'),
        message: new RegExp(`duplicate Deployment default/web \\(first defined at ${join(dir, 'a.yaml').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:11\\)`),
      });
    });

    it('accepts the same name in another namespace or of another kind', async () => {
      write({ 'a.yaml': `${NODE_CLASS}---\n${deployment('web', 1)}---\n${deployment('web', 1).replace('  name: web\n', '  name: web\n  namespace: other\n')}---\n${nodePool('web')}` });
      const scenario = await loadScenario(dir, { now: NOW });
      expect(scenario.deployments).toHaveLength(2);
    });

    it('rejects a second Scenario document', async () => {
      const scenario = 'apiVersion: skiff.dev/v1alpha1\nkind: Scenario\nmetadata: {name: s}\n';
      write({ 'a.yaml': NODE_CLASS, 's1.yaml': scenario, 's2.yaml': scenario });
      expectIssue(await issuesOfAsync(loadScenario(dir, { now: NOW })), { path: 'kind', line: 2, file: join(dir, 's2.yaml'), message: /at most one Scenario/ });
    });

    it('rejects a starting node that names an unknown NodePool', async () => {
      write({
        'a.yaml': `${NODE_CLASS}---\n${nodePool('general')}`,
        'scenario.yaml': 'apiVersion: skiff.dev/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nspec:\n  nodes:\n    - {name: n1, instanceType: m5.large, zone: us-west-2a, capacityType: spot, nodePool: generl}\n    - {name: n2, instanceType: m5.large, zone: us-west-2a, capacityType: spot, nodePool: general}\n',
      });
      expectIssue(await issuesOfAsync(loadScenario(dir, { now: NOW })), { path: 'spec.nodes[0].nodePool', line: 6, message: /NodePool "generl"/ });
    });

    it('rejects scaling a Deployment that does not exist yet, and accepts one applied earlier', async () => {
      write({
        'a.yaml': `${NODE_CLASS}---\n${deployment('web', 1)}`,
        'scenario.yaml': `apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: s}
spec:
  events:
    - {at: 10m, scale: {kind: Deployment, name: api, replicas: 3}}
    - at: 20m
      apply:
${deployment('api', 1).replace(/^/gm, '        ').trimEnd()}
    - {at: 30m, scale: {kind: Deployment, name: api, replicas: 5}}
    - {at: 30m, scale: {kind: Deployment, name: web, replicas: 5}}
`,
      });
      const issues = await issuesOfAsync(loadScenario(dir, { now: NOW }));
      expect(issues).toHaveLength(1);
      expectIssue(issues, { path: 'spec.events[0].scale.name', line: 6, message: /no Deployment default\/api exists/ });
    });

    it('returns applied manifests as events, not as initial objects, and checks their node class', async () => {
      write({
        'a.yaml': NODE_CLASS,
        'scenario.yaml': `apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: s}
spec:
  events:
    - at: 1h
      apply:
${nodePool('late', 'nowhere').replace(/^/gm, '        ').trimEnd()}
`,
      });
      expectIssue(await issuesOfAsync(loadScenario(dir, { now: NOW })), { path: 'spec.events[0].apply.spec.template.spec.nodeClassRef.name', line: 18 });
      write({ 'scenario.yaml': `apiVersion: skiff.dev/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nspec:\n  events:\n    - at: 1h\n      apply:\n${nodePool('late').replace(/^/gm, '        ').trimEnd()}\n` });
      const scenario = await loadScenario(dir, { now: NOW });
      expect(scenario.nodePools).toEqual([]);
      const [event] = scenario.spec.events;
      expect(event?.type === 'apply' && event.apply.kind === 'NodePool' && event.apply.object.metadata.name).toBe('late');
      expect(event?.type === 'apply' && event.apply.source).toEqual({ file: join(dir, 'scenario.yaml'), line: 7 });
    });

    it('rejects a pod bound to a node the scenario does not declare', async () => {
      write({ 'pod.yaml': 'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeName: ghost\n  containers: [{name: c}]\n' });
      expectIssue(await issuesOfAsync(loadScenario(dir, { now: NOW })), { path: 'spec.nodeName', line: 5, message: /ghost/ });
    });

    it('accepts a pod bound to a declared starting node', async () => {
      write({
        'pod.yaml': 'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeName: n1\n  containers: [{name: c}]\n',
        'scenario.yaml': 'apiVersion: skiff.dev/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nspec:\n  nodes: [{name: n1, instanceType: m5.large, zone: us-west-2a, capacityType: on-demand}]\n',
      });
      const scenario = await loadScenario(dir, { now: NOW });
      expect(scenario.pods[0]?.spec.nodeName).toBe('n1');
      expect(scenario.spec.nodes[0]?.nodePool).toBeUndefined();
    });

    it('throws one error listing the problems of every file, and returns nothing', async () => {
      write({
        'a.yaml': nodePool('general', 'missing'),
        'b.yaml': 'apiVersion: apps/v1\nkind: Deploymnt\nmetadata: {name: s}\n',
        'c.yaml': 'key: [unclosed\n',
        'd.yaml': deployment('web', 1).replace('replicas: 1', 'replicas: -1'),
      });
      let error: unknown;
      try {
        await loadScenario(dir, { now: NOW });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ValidationError);
      const files = (error as ValidationError).issues.map((i) => i.file.slice(dir.length + 1));
      expect(new Set(files)).toEqual(new Set(['a.yaml', 'b.yaml', 'c.yaml', 'd.yaml']));
    });

    it('warns about a PodDisruptionBudget that can never allow an eviction', async () => {
      write({
        'a.yaml': `${deployment('svc', 2)}---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: svc-pdb}\nspec:\n  selector: {matchLabels: {app: svc}}\n  minAvailable: 2\n`,
      });
      const scenario = await loadScenario(dir, { now: NOW });
      expect(scenario.warnings).toEqual([
        expect.objectContaining({ file: join(dir, 'a.yaml'), line: 18, path: 'spec.minAvailable', message: expect.stringMatching(/can never allow an eviction \(minAvailable 2 with 2 pod\(s\) at the start\): while it selects that many/) }),
      ]);
    });

    it('warns about a budget schedule of the accepted shape that does not evaluate, and not about one that does (trial)', async () => {
      const budgets = `  disruption:\n    budgets:\n      - {nodes: "0", schedule: "0 25 * * *", duration: 1h, reasons: [Empty]}\n      - {nodes: "0", schedule: "0 9 * * mon-fri", duration: 8h}\n`;
      write({ 'a.yaml': `${NODE_CLASS}---\n${nodePool('general')}${budgets}` });
      const scenario = await loadScenario(dir, { now: NOW });
      expect(scenario.warnings).toEqual([
        expect.objectContaining({
          file: join(dir, 'a.yaml'),
          path: 'spec.disruption.budgets[0].schedule',
          message: 'NodePool general: budget schedule "0 25 * * *" does not evaluate (CronPattern: Invalid value for hour: 25); Karpenter accepts it (its schema checks the shape only), and the budget then allows no disruption for Empty at any time',
        }),
      ]);
    });

    it('warns about requests that most likely miss their suffix, and not about ordinary ones (trial: a DaemonSet cpu: "500" launched a 896-vCPU instance)', async () => {
      const odd = deployment('web', 1).replace('cpu: 100m', 'cpu: "500", memory: 512');
      write({ 'a.yaml': odd, 'b.yaml': deployment('api', 1).replace('cpu: 100m', 'cpu: "96", memory: 1048576') });
      const scenario = await loadScenario(dir, { now: NOW });
      expect(scenario.warnings.map((w) => `${w.file?.split('/').pop()}: ${w.path}: ${w.message}`)).toEqual([
        'a.yaml: spec.template.spec.containers[0].resources.requests.cpu: Deployment web: cpu 500 is 500 cores (a quantity without a suffix counts cores); did you mean "500m" (millicores)?',
        'a.yaml: spec.template.spec.containers[0].resources.requests.memory: Deployment web: memory 512 is 512 bytes (a quantity without a suffix counts bytes); did you mean "512Mi"?',
      ]);
    });

    it('warns about requirement values no instance type can have, saying what the NodePool is left with, and about a key one typo from a well-known label (trials: capacity-type In [ondemand] beside spot never fell back to on-demand; instance-family m7, a zone us-west2-b and instance-typ narrowed quietly)', async () => {
      const requirements = (list: string) => `      requirements:\n${list}`;
      write({
        'a.yaml': `${NODE_CLASS}---\n${nodePool('general')}${requirements('        - {key: karpenter.sh/capacity-type, operator: In, values: [spot, ondemand]}\n        - {key: kubernetes.io/arch, operator: In, values: [x86_64]}\n        - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.larg, m5.xlarge]}\n        - {key: karpenter.sh/capacity-type, operator: NotIn, values: [nope]}\n        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [m7, c7i]}\n        - {key: node.kubernetes.io/instance-typ, operator: In, values: [m5.large]}\n        - {key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a, us-east1-b]}\n        - {key: topology.kubernetes.io/region, operator: In, values: [us-west-2]}\n')}`,
        'b.yaml': `${nodePool('fine')}${requirements('        - {key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand, reserved]}\n        - {key: kubernetes.io/os, operator: In, values: [linux]}\n        - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}\n        - {key: beta.kubernetes.io/arch, operator: In, values: [amd64]}\n')}`,
      });
      const scenario = await loadScenario(dir, { now: NOW });
      expect(scenario.warnings.map((w) => `${w.file?.split('/').pop()}:${w.line}: ${w.path}: ${w.message}`)).toEqual([
        'a.yaml:23: spec.template.spec.requirements[0].values[1]: NodePool general: karpenter.sh/capacity-type "ondemand" is not one of its values (spot, on-demand, reserved); did you mean "on-demand"? Karpenter accepts it and matches nothing with it: the NodePool launches only with spot',
        'a.yaml:24: spec.template.spec.requirements[1].values[0]: NodePool general: kubernetes.io/arch "x86_64" is not one of its values (amd64, arm64); did you mean "amd64"? Karpenter accepts it and matches nothing with it: no instance type matches the requirement, so the NodePool launches nothing',
        'a.yaml:25: spec.template.spec.requirements[2].values[0]: NodePool general: node.kubernetes.io/instance-type "m5.larg" is not an instance type in Skiff\'s EC2 catalogue; did you mean "m5.large"? Karpenter accepts it and matches nothing with it: the NodePool launches only with m5.xlarge',
        'a.yaml:27: spec.template.spec.requirements[4].values[0]: NodePool general: karpenter.k8s.aws/instance-family "m7" is a value no instance type in Skiff\'s EC2 catalogue has; Karpenter accepts it and matches nothing with it: the NodePool launches only with c7i',
        "a.yaml:28: spec.template.spec.requirements[5].key: NodePool general: node.kubernetes.io/instance-typ is not a label Karpenter or EC2 sets; did you mean node.kubernetes.io/instance-type? Karpenter reads it as a custom label: it narrows no instance type, and the NodePool's nodes get it as a label",
        // the run's default region (a zone of another region gets no "did you mean")
        'a.yaml:29: spec.template.spec.requirements[6].values[0]: NodePool general: topology.kubernetes.io/zone "us-east-1a" is not a zone of the run\'s region us-west-2 (us-west-2a, us-west-2b, us-west-2c, us-west-2d); Karpenter accepts it and matches nothing with it: no instance type matches the requirement, so the NodePool launches nothing',
        'a.yaml:29: spec.template.spec.requirements[6].values[1]: NodePool general: topology.kubernetes.io/zone "us-east1-b" is not a zone of the run\'s region us-west-2 (us-west-2a, us-west-2b, us-west-2c, us-west-2d); Karpenter accepts it and matches nothing with it: no instance type matches the requirement, so the NodePool launches nothing',
      ]);
      // validate's parts of a cluster name no region: their zones are not checked
      const files = ['a.yaml', 'b.yaml'].map((f) => join(dir, f));
      const parts = checkScenarioTexts(dir, files, files.map((f) => readFileSync(f, 'utf8')), { now: NOW, partial: true });
      expect(parts.warnings.filter((w) => w.message.includes('zone'))).toEqual([]);
      expect(parts.warnings).toHaveLength(5);
      // a Scenario document's region
      write({ 'c.yaml': `apiVersion: skiff.dev/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nspec: {region: us-east-1, duration: 1h}\n` });
      const withRun = await loadScenario(dir, { now: NOW });
      expect(withRun.warnings.map((w) => w.message)).toContain('NodePool general: topology.kubernetes.io/region "us-west-2" is not the run\'s region us-east-1; Karpenter accepts it and matches nothing with it: no instance type matches the requirement, so the NodePool launches nothing');
      expect(withRun.warnings.map((w) => w.message)).toContain(
        'NodePool general: topology.kubernetes.io/zone "us-east1-b" is not a zone of the run\'s region us-east-1 (us-east-1a, us-east-1b, us-east-1c, us-east-1d, us-east-1e, us-east-1f); did you mean "us-east-1b"? Karpenter accepts it and matches nothing with it: the NodePool launches only with us-east-1a',
      );
    });

    it('reports a path that does not exist, and a folder without YAML', async () => {
      expect(await issuesOfAsync(loadScenario(join(dir, 'nope'), { now: NOW }))).toEqual([expect.objectContaining({ file: join(dir, 'nope'), message: expect.stringMatching(/cannot read: ENOENT/) })]);
      expect(await issuesOfAsync(loadScenario(dir, { now: NOW }))).toEqual([expect.objectContaining({ file: dir, message: expect.stringMatching(/no \*\.yaml/) })]);
    });
  });
});
