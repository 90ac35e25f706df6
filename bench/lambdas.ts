/**
 * B7, Lambda bundles: each Lambda entry point bundled with esbuild the way `infra/constructs/skiff-function.ts`
 * (`skiffBundling`, the `NodejsFunction` defaults) bundles it — ESM, `node22` target, platform node,
 * `mainFields: module, main`, minified with names kept, no source map, the `createRequire` banner, no external
 * modules, the aliases of `infra/constructs/bundle-aliases.ts` — into a temporary folder; then its size (bytes and gzip bytes of the `.mjs`) and, in a fresh `node`
 * process each time, the wall time of a cold `import()` of it and of the handler's first invocation against local
 * adapters (`lambda-init.ts`); the process's own start-up is not counted. The bundles are measured in turn, round by
 * round, so the webhook's figures (the reference of the goals) see the same machine load as the controllers'.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { BUNDLE_ALIASES } from '../infra/constructs/bundle-aliases.js';
import { coldStart, startLocalAdapters } from './lambda-init.js';
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
  /** Wall time of the first invocation after each cold import, against local adapters, milliseconds. */
  readonly initMs?: readonly number[];
  /** Median of `initMs`. */
  readonly initMedianMs?: number;
  /** What the first invocation returned (JSON, shortened), to tell a served invocation from a refused one. */
  readonly firstOutcome?: string;
}

/**
 * Bundles each entry and times its cold import and first invocation, `imports` times each, round by round.
 * @param root the repository root
 * @param imports cold starts per bundle
 * @param only function names to measure. @default every entry
 * @throws {Error} when a bundle fails to build or a cold start's process fails
 */
export async function measureLambdas(root: string, imports: number, only?: readonly string[]): Promise<BundleResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-bench-bundle-'));
  const local = await startLocalAdapters();
  try {
    const entries = lambdaEntries(root).filter((e) => only === undefined || only.includes(e.name));
    const built = [];
    for (const e of entries) {
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
        sourcemap: false,
        banner: { js: REQUIRE_SHIM },
        external: [],
        alias: BUNDLE_ALIASES,
        logLevel: 'silent',
      });
      built.push({ e, outfile, importMs: [] as number[], initMs: [] as number[], outcome: '' });
    }
    for (let i = 0; i < imports; i++) {
      for (const b of built) {
        const c = await coldStart(b.outfile, local.env(b.e.name), local.event(b.e.name));
        b.importMs.push(c.importMs);
        b.initMs.push(c.firstInvocationMs);
        b.outcome = c.outcome;
      }
    }
    return built.map((b) => {
      const code = readFileSync(b.outfile);
      return { name: b.e.name, entry: b.e.entry, bytes: code.length, gzipBytes: gzipSync(code, { level: 9 }).length, importMs: b.importMs, importMedianMs: median(b.importMs), initMs: b.initMs, initMedianMs: median(b.initMs), firstOutcome: b.outcome };
    });
  } finally {
    await local.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
