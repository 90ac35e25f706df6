// What each Lambda bundle may not hold (docs/architecture.md#lambda-bundles, issue 23): every entry is bundled by
// esbuild with the options of `skiffBundling` (infra/constructs/skiff-function.ts) and its metafile read. Sizes and
// times are measured by B7 (`npm run bench`), not asserted here.
import { build, type Metafile } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { lambdaEntries } from '../../bench/lambdas.js';
import { BUNDLE_ALIASES } from '../../infra/constructs/bundle-aliases.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

type Inputs = Metafile['outputs'][string]['inputs'];

const built = new Map<string, Promise<Metafile>>();

/** The metafile of a bundle built as `SkiffFunction` builds it (built once per entry). */
function bundleMeta(entry: string): Promise<Metafile> {
  let meta = built.get(entry);
  if (meta === undefined) {
    meta = buildMeta(entry);
    built.set(entry, meta);
  }
  return meta;
}

/** The inputs of a bundle built as `SkiffFunction` builds it, with the bytes each contributes. */
async function bundleInputs(entry: string): Promise<Inputs> {
  const outputs = Object.values((await bundleMeta(entry)).outputs);
  expect(outputs).toHaveLength(1);
  return outputs[0]!.inputs;
}

async function buildMeta(entry: string): Promise<Metafile> {
  const result = await build({
    entryPoints: [`${ROOT}${entry}`],
    bundle: true,
    write: false,
    outdir: '/tmp/skiff-lambda-bundles-test',
    platform: 'node',
    format: 'esm',
    target: 'node22',
    mainFields: ['module', 'main'],
    minify: true,
    keepNames: true,
    alias: { ...BUNDLE_ALIASES },
    metafile: true,
    logLevel: 'silent',
  });
  return result.metafile;
}

describe('Lambda bundles', () => {
  const entries = lambdaEntries(ROOT);

  it('are the webhook and the four controllers', () => {
    expect(entries.map((e) => e.name)).toEqual(['disruption', 'interruption', 'lifecycle', 'provisioner', 'webhook']);
  });

  for (const { name, entry } of entries) {
    it(`${name}: no zod locale but English, no CLI or simulation code, the catalogue only as its facts table${name === 'webhook' ? ', no Kubernetes client' : ''}`, { timeout: 60_000 }, async () => {
      const inputs = Object.keys(await bundleInputs(entry));
      const offending = inputs.filter(
        (p) =>
          // The controllers talk to the API server through client-node (issue 23 keeps it as the Kubernetes client);
          // the webhook never does.
          (name === 'webhook' && p.includes('node_modules/@kubernetes/client-node/')) ||
          // zod's other locales come with the `z` re-export object (`import { z } from 'zod'`); `import * as z` keeps
          // only English, its default.
          (p.includes('node_modules/zod/v4/locales/') && !p.endsWith('/locales/en.js')) ||
          /(^|\/)shared\/(cli|sim)\//.test(p) ||
          p.endsWith('catalog.json') ||
          // The whole catalogue (225 KB) is the simulation's; the controllers read the facts table (catalog-facts.ts).
          p.endsWith('instancetypes/catalog-data.ts'),
      );
      expect(offending).toEqual([]);
    });
  }

  for (const { name, entry } of entries.filter((e) => e.name !== 'webhook')) {
    it(`${name}: client-node's modules only, not its index (no attach/exec/port-forward, cp, informers; no ws or tar)`, { timeout: 60_000 }, async () => {
      const inputs = Object.keys(await bundleInputs(entry));
      const offending = inputs.filter(
        (p) =>
          /node_modules\/@kubernetes\/client-node\/dist\/(index|attach|cp|exec|portforward|informer|cache|web-socket-handler|log|top|metrics|health|yaml)\.js$/.test(p) ||
          /node_modules\/(ws|isomorphic-ws|tar-fs|tar-stream|streamx)\//.test(p),
      );
      expect(offending).toEqual([]);
    });

    it(`${name}: no whatwg-url or tr46 (node-fetch's fallback URL, replaced by Node's own), and node-fetch the only importer of the replacement`, { timeout: 60_000 }, async () => {
      const inputs = await bundleInputs(entry);
      expect(Object.keys(inputs).filter((p) => /node_modules\/(whatwg-url|tr46|webidl-conversions)\//.test(p))).toEqual([]);
      const { inputs: all } = await bundleMeta(entry);
      const importers = Object.entries(all)
        .filter(([, v]) => v.imports.some((i) => i.path.endsWith('infra/constructs/whatwg-url-native.ts')))
        .map(([p]) => p.replace(/^.*node_modules\//, ''));
      expect(importers).toEqual(['node-fetch/lib/index.mjs']);
    });

    it(`${name}: none of client-node's generated API classes (each holds every operation of its group; requests go by path)`, { timeout: 60_000 }, async () => {
      const inputs = await bundleInputs(entry);
      const generated = Object.entries(inputs).filter(
        ([p, v]) => v.bytesInOutput > 0 && /node_modules\/@kubernetes\/client-node\/dist\/gen\/(apis\/[A-Za-z0-9]+Api\.js|types\/(ObservableAPI|PromiseAPI|ObjectParamAPI)\.js)$/.test(p),
      );
      expect(generated.map(([p]) => p)).toEqual([]);
    });
  }

  it('lifecycle, which never launches, carries no launch-template code: SSM (AMI aliases), IAM (instance profiles), user data (yaml, smol-toml)', { timeout: 60_000 }, async () => {
    const inputs = await bundleInputs('functions/lifecycle/index.ts');
    const launchOnly = Object.keys(inputs).filter(
      (p) => /node_modules\/(@aws-sdk\/client-(ssm|iam)|yaml|smol-toml)\//.test(p) || /shared\/adapters\/aws\/(launch-templates|userdata)\.ts$/.test(p),
    );
    expect(launchOnly).toEqual([]);
  });
});
