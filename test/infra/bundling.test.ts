// How every Lambda is bundled (issue 23): the esbuild options of each function of the stack, and — with real bundling
// by the local esbuild, as `cdk synth` runs it — what lands in the deployed asset.
import { App, Stack } from 'aws-cdk-lib';
import { OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SkiffFunction } from '../../infra/constructs/skiff-function.js';
import type { SkiffStack } from '../../infra/skiff-stack.js';
import { SAMPLE_CONFIG, synth } from './stack-fixture.js';

/** Every SkiffFunction of a stack, by construct path. */
function functionsOf(stack: SkiffStack): Map<string, SkiffFunction> {
  const out = new Map<string, SkiffFunction>();
  for (const c of stack.node.findAll()) if (c instanceof SkiffFunction) out.set(c.node.path, c);
  return out;
}

/** The environment variables of a function as the template declares them. */
function environmentOf(stack: SkiffStack, fn: SkiffFunction): Record<string, unknown> {
  const cfn = fn.function.node.defaultChild as { environment?: { variables?: Record<string, unknown> } };
  return (stack.resolve(cfn.environment) as { variables?: Record<string, unknown> } | undefined)?.variables ?? {};
}

describe('Lambda bundling options', () => {
  const { stack } = synth();
  const fns = functionsOf(stack);

  it('covers the webhook and the four controllers', () => {
    expect([...fns.keys()].map((p) => p.split('/')[1]).sort()).toEqual(['Disruption', 'Interruption', 'Lifecycle', 'Provisioner', 'Webhook']);
  });

  it('bundles each as a minified ESM file for Node.js 22, AWS SDK included, whatwg-url aliased to Node\'s URL, by the local esbuild, without a source map', () => {
    for (const [path, fn] of fns) {
      expect({ path, ...fn.bundling }).toEqual({
        path,
        format: OutputFormat.ESM,
        target: 'node22',
        mainFields: ['module', 'main'],
        minify: true,
        keepNames: true,
        sourceMap: false,
        banner: expect.stringContaining('createRequire'),
        externalModules: [],
        // node-fetch's fallback URL for Node before 10 (infra/constructs/whatwg-url-native.ts).
        esbuildArgs: { '--alias:whatwg-url': expect.stringMatching(/infra\/constructs\/whatwg-url-native\.ts$/) },
        forceDockerBundling: false,
      });
      expect(environmentOf(stack, fn)).not.toHaveProperty('NODE_OPTIONS');
    }
  });

  it('writes a source map beside the bundle and enables it only when the configuration asks', () => {
    const { stack: withMaps } = synth({ ...SAMPLE_CONFIG, sourceMaps: true });
    for (const fn of functionsOf(withMaps).values()) {
      expect(fn.bundling).toMatchObject({ sourceMap: true, sourceMapMode: 'default' });
      expect(environmentOf(withMaps, fn)).toMatchObject({ NODE_OPTIONS: '--enable-source-maps' });
    }
  });
});

describe('the deployed asset (real bundling)', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** Synthesizes one SkiffFunction (the webhook's entry unless told) with bundling and returns its asset folder. */
  function assetDir(sourceMaps: boolean | undefined, entry = 'functions/webhook/handler.ts'): string {
    const outdir = mkdtempSync(join(tmpdir(), 'skiff-bundling-'));
    dirs.push(outdir);
    const app = new App({ outdir });
    const stack = new Stack(app, 'Bundled', { env: { region: 'us-west-2', account: '111122223333' } });
    new SkiffFunction(stack, 'Fn', { entry, description: 'bundling test', ...(sourceMaps !== undefined ? { sourceMaps } : {}) });
    app.synth();
    const assets = readdirSync(outdir).filter((f) => f.startsWith('asset.'));
    expect(assets).toHaveLength(1);
    const dir = join(outdir, assets[0]!);
    expect(existsSync(join(dir, 'index.mjs'))).toBe(true);
    return dir;
  }

  /** The files of the webhook-entry asset, after checking the bundle names a source map only when asked. */
  function assetFiles(sourceMaps: boolean | undefined): string[] {
    const dir = assetDir(sourceMaps);
    expect(readFileSync(join(dir, 'index.mjs'), 'utf8').includes('sourceMappingURL')).toBe(sourceMaps === true);
    return readdirSync(dir).sort();
  }

  it('holds the bundle only, no source map, by default', { timeout: 60_000 }, () => {
    expect(assetFiles(undefined)).toEqual(['index.mjs']);
  });

  it('holds the source map beside the bundle when asked', { timeout: 60_000 }, () => {
    expect(assetFiles(true)).toEqual(['index.mjs', 'index.mjs.map']);
  });

  it("replaces whatwg-url in a controller's bundle: tr46's mapping table is not in it, node-fetch's URL is Node's", { timeout: 120_000 }, () => {
    const bundle = readFileSync(join(assetDir(undefined, 'functions/provisioner/index.ts'), 'index.mjs'), 'utf8');
    // A status string of tr46's mapping table (lib/mappingTable.json), present many times when the table is bundled.
    expect(bundle).not.toContain('disallowed_STD3_valid');
    expect(bundle).toContain('globalThis.URL');
  });
});
