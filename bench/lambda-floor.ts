/**
 * The floor of issue 23's goals for a controller bundle while it keeps `@kubernetes/client-node` and the AWS SDK v3
 * clients: `lambda-floor-entry.ts` (those libraries, no Skiff code) bundled as `lambdas.ts` bundles the functions,
 * beside the webhook's and the provisioner's bundles; sizes (bytes, gzip) and the median of `imports` cold imports in
 * fresh `node` processes, as wall time and as the process's CPU time (user + system, which other load on the machine
 * inflates less), round by round. Import only: no handler is invoked.
 *
 * Run alone: `npx tsx bench/lambda-floor.ts [imports]` (default 9). Prints one line per bundle.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { BUNDLE_ALIASES } from '../infra/constructs/bundle-aliases.js';
import { median } from './stats.js';

/** The banner `SkiffFunction` puts on every bundle. */
const REQUIRE_SHIM = "import { createRequire as __skiffCreateRequire } from 'node:module'; const require = __skiffCreateRequire(import.meta.url);";

/** The figures of one bundle. */
export interface FloorFigures {
  readonly name: string;
  /** Bundle size, bytes. */
  readonly bytes: number;
  /** Its gzip size (level 9), bytes. */
  readonly gzipBytes: number;
  /** Median wall time of a cold `import()`, milliseconds. */
  readonly importMs: number;
  /** Median CPU time (user + system) of a cold `import()`, milliseconds. */
  readonly importCpuMs: number;
}

/**
 * Bundles the floor entry, the webhook and the provisioner and times `imports` cold imports of each.
 * @param root the repository root
 * @throws {Error} when a bundle fails to build or an import fails
 */
export async function measureFloor(root: string, imports: number): Promise<FloorFigures[]> {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-bench-floor-'));
  try {
    const entries = [
      { name: 'floor (libraries only)', entry: 'bench/lambda-floor-entry.ts' },
      { name: 'provisioner', entry: 'functions/provisioner/index.ts' },
      { name: 'webhook', entry: 'functions/webhook/handler.ts' },
    ];
    const built = [];
    for (const [i, e] of entries.entries()) {
      const outfile = join(dir, String(i), 'index.mjs');
      await build({ entryPoints: [join(root, e.entry)], outfile, bundle: true, platform: 'node', format: 'esm', target: 'node22', mainFields: ['module', 'main'], minify: true, keepNames: true, sourcemap: false, banner: { js: REQUIRE_SHIM }, alias: BUNDLE_ALIASES, logLevel: 'silent' });
      built.push({ ...e, outfile, wall: [] as number[], cpu: [] as number[] });
    }
    const script = 'const c0 = process.cpuUsage(); const t0 = performance.now(); await import(process.argv[1]); const c = process.cpuUsage(c0); console.log(JSON.stringify({ wall: performance.now() - t0, cpu: (c.user + c.system) / 1000 }));';
    for (let i = 0; i < imports; i++) {
      for (const b of built) {
        const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script, pathToFileURL(b.outfile).href], { encoding: 'utf8' })) as { wall: number; cpu: number };
        b.wall.push(out.wall);
        b.cpu.push(out.cpu);
      }
    }
    return built.map((b) => {
      const code = readFileSync(b.outfile);
      return { name: b.name, bytes: code.length, gzipBytes: gzipSync(code, { level: 9 }).length, importMs: median(b.wall), importCpuMs: median(b.cpu) };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const figures = await measureFloor(fileURLToPath(new URL('../', import.meta.url)), Number(process.argv[2] ?? 9));
  const webhook = figures.find((f) => f.name === 'webhook');
  for (const f of figures) {
    const ratio = webhook ? ` (${(f.importCpuMs / webhook.importCpuMs).toFixed(2)}× the webhook's)` : '';
    console.log(`${f.name}: ${(f.bytes / 1e6).toFixed(2)} MB, gzip ${(f.gzipBytes / 1e6).toFixed(2)} MB; cold import ${f.importMs.toFixed(0)} ms wall, ${f.importCpuMs.toFixed(0)} ms CPU${ratio}`);
  }
}
