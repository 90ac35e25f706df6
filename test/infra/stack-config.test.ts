// The stack configuration is validated at synth time with messages that name the field.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_CONTEXT_KEY, StackConfigError, loadStackConfig, parseStackConfig } from '../../infra/stack-config.js';
import { SAMPLE_CONFIG } from './stack-fixture.js';

function errorOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (e instanceof StackConfigError) return e.message;
    throw e;
  }
  throw new Error('expected a StackConfigError');
}

describe('stack configuration', () => {
  describe('parseStackConfig', () => {
    it('accepts the sample and applies the defaults', () => {
      const { schedules, logRetentionDays, ...rest } = SAMPLE_CONFIG;
      const config = parseStackConfig(rest, 'sample');
      expect(config).toMatchObject({ clusterName: 'sample', schedules: { disruptionMinutes: 1, lifecycleMinutes: 1 }, logRetentionDays: 30, createAccessEntry: true, spotToSpotConsolidation: false });
      expect(schedules).toBeDefined();
      expect(logRetentionDays).toBe(30);
    });

    it('names the file and every bad field', () => {
      const message = errorOf(() =>
        parseStackConfig({ ...SAMPLE_CONFIG, clusterName: 'no spaces', nodeRoleArn: 'KarpenterNodeRole', cluster: { ...(SAMPLE_CONFIG.cluster as object), endpoint: 'http://10.0.0.1' }, logRetentionDays: 31 }, 'prod.json'),
      );
      expect(message).toContain('prod.json: clusterName: must be an EKS cluster name');
      expect(message).toContain('prod.json: nodeRoleArn: must be an IAM role ARN');
      expect(message).toContain('prod.json: cluster.endpoint: must be the https:// API server URL');
      expect(message).toContain('prod.json: logRetentionDays: must be one of 1, 3, 5');
    });

    it('requires the VPC for a private endpoint', () => {
      expect(errorOf(() => parseStackConfig({ ...SAMPLE_CONFIG, cluster: { ...(SAMPLE_CONFIG.cluster as object), endpointAccess: 'private' } }, 'c.json'))).toContain('c.json: vpc: is required when cluster.endpointAccess is private');
    });

    it('reserves concurrency for the webhook, the provisioner and the interruption handler by default, and refuses what Lambda would', () => {
      expect(parseStackConfig({ ...SAMPLE_CONFIG, reservedConcurrency: undefined }, 'c.json').reservedConcurrency).toEqual({ webhook: 10, provisioner: 2, interruption: 10 });
      expect(parseStackConfig({ ...SAMPLE_CONFIG, reservedConcurrency: { webhook: 1 } }, 'c.json').reservedConcurrency).toEqual({ webhook: 1, provisioner: 2, interruption: 10 });
      const message = errorOf(() => parseStackConfig({ ...SAMPLE_CONFIG, reservedConcurrency: { webhook: 0, provisioner: 1, interruption: 2.5 } }, 'c.json'));
      expect(message).toContain('c.json: reservedConcurrency.webhook:');
      expect(message).toContain('c.json: reservedConcurrency.provisioner:');
      expect(message).toContain('c.json: reservedConcurrency.interruption:');
      expect(errorOf(() => parseStackConfig({ ...SAMPLE_CONFIG, reservedConcurrency: { lifecycle: 1 } }, 'c.json'))).toContain('lifecycle');
    });

    it('refuses unknown keys, so a misspelt option is not silently ignored', () => {
      expect(errorOf(() => parseStackConfig({ ...SAMPLE_CONFIG, createAcessEntry: false }, 'c.json'))).toContain('createAcessEntry');
    });

    it('refuses a node role from another account', () => {
      expect(errorOf(() => parseStackConfig({ ...SAMPLE_CONFIG, nodeRoleArn: 'arn:aws:iam::999999999999:role/Node' }, 'c.json'))).toContain('c.json: nodeRoleArn: is in account 999999999999');
    });
  });

  describe('loadStackConfig', () => {
    it('says how to pass a configuration when there is none', () => {
      expect(errorOf(() => loadStackConfig(undefined))).toContain(`-c ${CONFIG_CONTEXT_KEY}=<file.json>`);
    });

    it('reads a file relative to the working directory', () => {
      const dir = mkdtempSync(join(tmpdir(), 'skiff-config-'));
      writeFileSync(join(dir, 'prod.json'), JSON.stringify({ ...SAMPLE_CONFIG, clusterName: 'prod' }));
      expect(loadStackConfig('prod.json', dir).clusterName).toBe('prod');
      writeFileSync(join(dir, 'broken.json'), '{');
      expect(errorOf(() => loadStackConfig('broken.json', dir))).toContain('broken.json is not JSON');
      expect(errorOf(() => loadStackConfig('missing.json', dir))).toContain('cannot read the Skiff stack configuration missing.json');
    });

    it('takes the object itself from the context', () => {
      expect(loadStackConfig(SAMPLE_CONFIG).clusterName).toBe('sample');
    });
  });
});
