/**
 * B7, Lambda bundles: each Lambda entry point bundled with esbuild the way `infra/constructs/skiff-function.ts`
 * (`NodejsFunction`) bundles it — ESM, `node22` target, platform node, `mainFields: module, main`, minified with
 * names kept, source map in its own file, the `createRequire` banner, no external modules — into a temporary folder;
 * then its size (bytes and gzip bytes of the `.mjs`) and the time of a cold `import()` of it in a fresh `node`
 * process (median of several; the process's own start-up is not counted).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { median } from './stats.js';

/** The banner `SkiffFunction` puts on every bundle (CommonJS dependencies call `require` for Node built-ins). */
const REQUIRE_SHIM = "import { createRequire as __skiffCreateRequire } from 'node:module'; const require = __skiffCreateRequire(import.meta.url);";

/** One Lambda entry point. */
export interface LambdaEntry {
  /** Function folder name, e.g. `provisioner`. */
  readonly name: string;
  /** Entry file relative to the repository root. */
  readonly entry: string;
}

/**
 * The Lambda entry points: every `functions/<name>/index.ts`, plus `functions/webhook/handler.ts` (the webhook's
 * entry in `infra/constructs/webhook.ts`, which has no `index.ts`). The relay is a container, not a Lambda.
 */
export function lambdaEntries(root: string): LambdaEntry[] {
  const out: LambdaEntry[] = [];
  for (const name of readdirSync(join(root, 'functions')).sort()) {
    if (existsSync(join(root, 'functions', name, 'index.ts'))) out.push({ name, entry: `functions/${name}/index.ts` });
    else if (name === 'webhook' && existsSync(join(root, 'functions', name, 'handler.ts'))) out.push({ name, entry: `functions/${name}/handler.ts` });
  }
  return out;
}

/** The figures of one bundle. */
export interface BundleResult {
  readonly name: string;
  readonly entry: string;
  /** Size of the bundle (`index.mjs`, without its source map), bytes. */
  readonly bytes: number;
  /** Its gzip size (level 9), bytes. */
  readonly gzipBytes: number;
  /** Wall time of each cold `import()`, milliseconds. */
  readonly importMs: readonly number[];
  /** Median of `importMs`. */
  readonly importMedianMs: number;
}

/**
 * Bundles each entry and times its cold import.
 * @param root the repository root
 * @param imports cold imports per bundle
 */
export async function measureLambdas(root: string, imports: number): Promise<BundleResult[]> {
  const out: BundleResult[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'skiff-bench-bundle-'));
  try {
    for (const e of lambdaEntries(root)) {
      const outfile = join(dir, e.name, 'index.mjs');
      await build({
        entryPoints: [join(root, e.entry)],
        outfile,
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node22',
        mainFields: ['module', 'main'],
        minify: true,
        keepNames: true,
        sourcemap: true,
        banner: { js: REQUIRE_SHIM },
        external: [],
        logLevel: 'silent',
      });
      const code = readFileSync(outfile);
      const importMs: number[] = [];
      for (let i = 0; i < imports; i++) importMs.push(coldImportMs(outfile));
      out.push({ name: e.name, entry: e.entry, bytes: code.length, gzipBytes: gzipSync(code, { level: 9 }).length, importMs, importMedianMs: median(importMs) });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

/** Times `import()` of a module in a new `node` process, milliseconds. */
function coldImportMs(file: string): number {
  const script = `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); console.log(performance.now() - t);`;
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { PATH: process.env.PATH ?? '', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', POWERTOOLS_DEV: 'true' },
    encoding: 'utf8',
  });
  return Number(output.trim().split('\n').pop());
}
