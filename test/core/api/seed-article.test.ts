/**
 * The seed article's YAML must load unchanged (its NodePools are `examples/seed`; README). The example files are
 * byte-for-byte copies of the
 * article's blocks; the budget and Job snippets (fragments, not whole objects) are copied here by hand and parsed
 * with the sub-schemas they belong to.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseManifests, type ManifestOf } from '../../../shared/core/api/manifest.js';
import { disruptionSchema } from '../../../shared/core/api/nodepool.js';
import { nodeSelectorSchema, tolerationSchema } from '../../../shared/core/api/pod.js';
import { jobSchema } from '../../../shared/core/api/workloads.js';

const SEED = new URL('../../../examples/seed/', import.meta.url);
/** The article, in the read-only reference folder beside the checkout (present for developers and CI). */
const ARTICLE = new URL('../../../../shared/seed/000_acf54997326a6ec0.txt', import.meta.url);

/** The article's "Disruption Budget" snippet, copied verbatim. */
const BUDGET_SNIPPET = `disruption:
  budgets:
    # 全天默认：最多同时替换 10% 的节点
    - nodes: "10%"

    # 业务高峰期（北京时间 09:00-23:00）：最多替换 5%
    - nodes: "5%"
      schedule: "0 1 * * *"   # UTC 01:00 = 北京 09:00
      duration: 14h

    # 深夜维护窗口（北京时间 02:00-04:00）：最多替换 20%，加快节点轮换
    - nodes: "20%"
      schedule: "0 18 * * *"  # UTC 18:00 = 北京 02:00
      duration: 2h
`;

/** The article's batch Job snippet (only `spec.template.spec` scheduling fields), copied verbatim. */
const JOB_SNIPPET = `# 批处理 Job 配置
spec:
  template:
    spec:
      nodeSelector:
        workload-type: batch
      tolerations:
        - key: workload-type
          value: batch
          effect: NoSchedule
`;

/** The example files copied from the article, one object each. */
const ARTICLE_FILES = ['ec2nodeclass-default.yaml', 'nodepool-general.yaml', 'nodepool-gpu.yaml', 'nodepool-batch.yaml', 'pdb-my-service.yaml'];

describe('seed article', () => {
  describe('example files', () => {
    it.skipIf(!existsSync(ARTICLE))('are byte-for-byte copies of blocks of the article', () => {
      const article = readFileSync(ARTICLE, 'utf8');
      for (const file of ARTICLE_FILES) {
        const text = readFileSync(new URL(file, SEED), 'utf8');
        expect(text.endsWith('\n')).toBe(true);
        expect(article.includes(text.slice(0, -1)), `${file} must appear verbatim in the article`).toBe(true);
      }
    });

    it.skipIf(!existsSync(ARTICLE))('contain the snippets copied into this test verbatim', () => {
      const article = readFileSync(ARTICLE, 'utf8');
      expect(article.includes(BUDGET_SNIPPET)).toBe(true);
      expect(article.includes(JOB_SNIPPET)).toBe(true);
    });

    it.each(ARTICLE_FILES)('%s loads without a change', (file) => {
      const manifests = parseManifests(readFileSync(new URL(file, SEED), 'utf8'), file);
      expect(manifests).toHaveLength(1);
    });
  });

  describe('budget snippet', () => {
    it('parses with the disruption schema, keeping the three budgets and defaulting the policy', () => {
      const disruption = disruptionSchema.parse((parse(BUDGET_SNIPPET) as { disruption: unknown }).disruption);
      expect(disruption).toEqual({
        consolidationPolicy: 'WhenEmptyOrUnderutilized',
        consolidateAfter: '0s',
        budgets: [
          { nodes: '10%' },
          { nodes: '5%', schedule: '0 1 * * *', duration: '14h' },
          { nodes: '20%', schedule: '0 18 * * *', duration: '2h' },
        ],
      });
    });

    it('parses inside a NodePool too', () => {
      const general = readFileSync(new URL('nodepool-general.yaml', SEED), 'utf8');
      const withBudgets = general.replace(/ {2}disruption:[\s\S]*?budgets:\n {6}- nodes: "10%"\n/, BUDGET_SNIPPET.replace(/^/gm, '  ').replace(/^ {2}$/gm, ''));
      const [pool] = parseManifests(withBudgets, 'general-with-budgets.yaml') as [ManifestOf<'NodePool'>];
      expect(pool.object.spec.disruption.budgets.map((b) => b.nodes)).toEqual(['10%', '5%', '20%']);
    });
  });

  describe('batch Job snippet', () => {
    const snippet = parse(JOB_SNIPPET) as { spec: { template: { spec: { nodeSelector: unknown; tolerations: unknown } } } };

    it('parses with the pod sub-schemas', () => {
      const podSpec = snippet.spec.template.spec;
      expect(nodeSelectorSchema.parse(podSpec.nodeSelector)).toEqual({ 'workload-type': 'batch' });
      expect(z.array(tolerationSchema).parse(podSpec.tolerations)).toEqual([{ key: 'workload-type', operator: 'Equal', value: 'batch', effect: 'NoSchedule' }]);
    });

    it('is a valid Job once completed with a container and a restart policy', () => {
      const job = jobSchema.parse({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'batch' },
        spec: { template: { spec: { ...snippet.spec.template.spec, restartPolicy: 'Never', containers: [{ name: 'w' }] } } },
      });
      expect(job.spec.template.spec.nodeSelector).toEqual({ 'workload-type': 'batch' });
    });

    it('matches the seed batch Job exactly', () => {
      const [job] = parseManifests(readFileSync(new URL('job-batch.yaml', SEED), 'utf8'), 'job-batch.yaml') as [ManifestOf<'Job'>];
      expect(job.object.spec.template.spec.nodeSelector).toEqual(nodeSelectorSchema.parse(snippet.spec.template.spec.nodeSelector));
      expect(job.object.spec.template.spec.tolerations).toEqual(z.array(tolerationSchema).parse(snippet.spec.template.spec.tolerations));
    });
  });
});
