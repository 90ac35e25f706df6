// Enforces the import directions of docs/architecture.md#import-directions and the pure core of
// docs/architecture.md#layout on every `.ts` file under shared/,
// functions/ and infra/, by reading the AST (import/export-from declarations, `import x = require()`, `require()`,
// dynamic `import()` and `import('…')` types), never the text, so comments and strings do not count.
import { readFileSync, readdirSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHECKED_ROOTS = ['shared', 'functions', 'infra'] as const;

type Layer = 'core' | 'ports' | 'controllers' | 'adapters' | 'sim' | 'lambda' | 'cli' | 'functions' | 'infra';
const LAYERS: readonly Layer[] = ['core', 'ports', 'controllers', 'adapters', 'sim', 'lambda', 'functions', 'cli', 'infra'];

/** Pure libraries the core may use: parsing and cron only, no I/O. `zod` also matches `zod/v4` and the like. */
const PURE = ['zod', 'yaml', 'croner', 'fastest-levenshtein'];
/** SDKs per adapter folder (`shared/adapters/<folder>/`). */
const ADAPTER_SDKS: Readonly<Record<string, readonly string[]>> = {
  // smol-toml: Bottlerocket userData is TOML (shared/adapters/aws/userdata.ts merges the user's settings).
  aws: ['@aws-sdk/*', '@smithy/*', '@aws-crypto/*', 'smol-toml'],
  kubernetes: ['@kubernetes/client-node'],
};
const ALL_SDKS = Object.values(ADAPTER_SDKS).flat();
/** Lambda runtime libraries: middy, powertools, and the `aws-lambda` event types. */
const LAMBDA_RUNTIME = ['@middy/*', '@aws-lambda-powertools/*', 'aws-lambda'];

/** What one layer may import. Every layer may import its own files. */
interface Rule {
  /** Other layers it may import. `'*'`: anything in the repository. */
  readonly layers: readonly Layer[] | '*';
  /** Exact files (repo-relative, `.ts`) it may import in addition to `layers`. */
  readonly files?: readonly string[];
  /** Layers whose imports must be type-only. */
  readonly typeOnly?: readonly Layer[];
  /** Allowed bare specifiers: `name`, `name/*` (subpaths match `name` too), `@scope/*`, `node:*`. `'*'`: any. */
  readonly packages: readonly string[] | '*';
  /** The rule's words, printed with each violation. */
  readonly says: string;
}

const RULES: Readonly<Record<Layer, Rule>> = {
  core: { layers: [], packages: PURE, says: 'core imports only core and pure libraries (zod, yaml, croner, fastest-levenshtein); no node: builtins' },
  ports: { layers: ['core'], typeOnly: ['core'], packages: [], says: 'ports import core types and ports only' },
  controllers: { layers: ['core', 'ports'], packages: PURE, says: 'controllers import core and ports only' },
  adapters: { layers: ['core', 'ports'], packages: [...PURE, 'node:*'], says: 'adapters import core, ports and their own SDK' },
  // aws-lambda: the event types the in-memory SQS queue emits (type-only; the package has no runtime code).
  // node:* : the scenario loader reads the scenario folder; the simulation only ever runs locally.
  sim: { layers: ['core', 'ports', 'controllers'], packages: [...PURE, 'node:*', 'aws-lambda'], says: 'sim imports core, ports, controllers and sim (no adapters, lambda, functions)' },
  lambda: {
    layers: ['core', 'ports', 'controllers', 'adapters'],
    packages: [...PURE, 'node:*', ...LAMBDA_RUNTIME, ...ALL_SDKS],
    says: 'lambda wires adapters, controllers, core and ports',
  },
  functions: {
    layers: ['core', 'ports', 'controllers', 'lambda'],
    packages: [...PURE, 'node:*', ...LAMBDA_RUNTIME],
    says: 'functions import lambda, controllers, core and ports only (and their own folder)',
  },
  cli: { layers: '*', packages: '*', says: 'cli may import anything' },
  infra: {
    layers: [],
    // table.ts: the stack creates the table from the stores' own definition (keys, index, billing, TTL attribute), so
    // the layout is spelled once; it loads @aws-sdk/lib-dynamodb at synth time, nothing else.
    // webhook-metrics.ts: the webhook's refusal metric (name and dimensions), which the stack alarms on; pure data.
    // labels.ts: the cluster tag the IAM conditions name (constants only, it imports nothing).
    files: ['shared/lambda/env.ts', 'shared/core/metrics.ts', 'shared/lambda/webhook-metrics.ts', 'shared/core/api/labels.ts', 'shared/adapters/aws/iam-actions.ts', 'shared/adapters/aws/table.ts'],
    // zod + node:fs: the stack configuration file is read and validated at synth time (infra/stack-config.ts).
    packages: ['aws-cdk-lib', 'constructs', 'cdk-nag', 'zod', 'node:fs', 'node:path', 'node:url'],
    says: 'infra imports aws-cdk-lib, constructs, cdk-nag, zod, node:fs/path/url, shared/lambda/env.ts, shared/core/metrics.ts, shared/lambda/webhook-metrics.ts, shared/core/api/labels.ts, shared/adapters/aws/iam-actions.ts and shared/adapters/aws/table.ts only',
  },
};

/** Documented exceptions: `file → bare specifiers` it may import beyond its layer's rule. */
const EXCEPTIONS: Readonly<Record<string, readonly string[]>> = {
  // randomIds: production name suffixes need a CSPRNG; the port is the one place it is read.
  'shared/ports/ids.ts': ['node:crypto'],
};

/**
 * Documented exceptions: `file → repository files` it may import beyond its layer's rule.
 * The in-cluster relay is a long-running program, not a Lambda, so it has no `shared/lambda/` wiring: its entry point
 * is its own composition root and picks the Kubernetes watch adapter itself. Only `main.ts`, and only that adapter;
 * the relay's other files see the watch through the `EventSource` interface of `functions/relay/relay.ts`.
 */
const FILE_EXCEPTIONS: Readonly<Record<string, readonly string[]>> = {
  'functions/relay/main.ts': ['shared/adapters/kubernetes/cluster-watch.ts'],
};

/** One import found in a source file. */
interface ImportRef {
  readonly specifier: string;
  /** True when only types are imported (erased at runtime). */
  readonly typeOnly: boolean;
  readonly line: number;
}

/** The layer of a repo-relative path, or undefined when the path is in none. */
function layerOf(path: string): Layer | undefined {
  const [top, second] = path.split('/');
  if (top === 'functions' || top === 'infra') return top;
  if (top === 'shared' && second !== undefined && (LAYERS as readonly string[]).includes(second) && second !== 'functions' && second !== 'infra') {
    return second as Layer;
  }
  return undefined;
}

/** Every import of `text` (a TypeScript module at repo-relative `file`): static, re-export, dynamic, require, import types. */
function collectImports(file: string, text: string): { imports: ImportRef[]; computed: number[] } {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const imports: ImportRef[] = [];
  const computed: number[] = [];
  const lineOf = (node: ts.Node): number => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const add = (specifier: ts.Expression | undefined, typeOnly: boolean, at: ts.Node): void => {
    if (specifier && ts.isStringLiteralLike(specifier)) imports.push({ specifier: specifier.text, typeOnly, line: lineOf(at) });
    else computed.push(lineOf(at));
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      add(node.moduleSpecifier, isTypeOnlyImport(node.importClause), node);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
      const typeOnly = node.isTypeOnly || (!!node.exportClause && ts.isNamedExports(node.exportClause) && node.exportClause.elements.length > 0 && node.exportClause.elements.every((e) => e.isTypeOnly));
      add(node.moduleSpecifier, typeOnly, node);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node.moduleReference.expression, node.isTypeOnly, node);
    } else if (ts.isCallExpression(node) && (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require'))) {
      add(node.arguments[0], false, node);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node.argument.literal as ts.Expression, true, node);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { imports, computed };
}

function isTypeOnlyImport(clause: ts.ImportClause | undefined): boolean {
  if (!clause) return false; // `import 'x'` runs x
  if (clause.isTypeOnly) return true;
  if (clause.name) return false;
  const bindings = clause.namedBindings;
  return !!bindings && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly);
}

/** `@scope/name` or `name` of a bare specifier. */
function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

function packageAllowed(specifier: string, patterns: readonly string[] | '*'): boolean {
  if (patterns === '*') return true;
  const name = packageName(specifier);
  return patterns.some((p) => {
    if (p === 'node:*') return specifier.startsWith('node:');
    if (p.endsWith('/*') && p.startsWith('@')) return name.startsWith(p.slice(0, -1));
    return specifier === p || name === p;
  });
}

/** Every import of `file` that breaks its layer's rule, as `file: imports X (rule)`. */
function importViolations(file: string, text: string): string[] {
  const layer = layerOf(file);
  if (!layer) return [`${file}: is in no layer (layers: ${LAYERS.join(', ')}; docs/architecture.md#import-directions)`];
  const rule = RULES[layer];
  const { imports, computed } = collectImports(file, text);
  const out = computed.map((line) => `${file}: imports a computed specifier at line ${line} (cannot be checked; use a string literal)`);
  for (const ref of imports) {
    const problem = checkImport(file, layer, rule, ref);
    if (problem) out.push(`${file}: imports ${problem}`);
  }
  return [...new Set(out)];
}

function checkImport(file: string, layer: Layer, rule: Rule, ref: ImportRef): string | undefined {
  const { specifier } = ref;
  if (!specifier.startsWith('.') && !specifier.startsWith('/')) {
    const own = layer === 'adapters' ? (ADAPTER_SDKS[file.split('/')[2] ?? ''] ?? []) : [];
    if (packageAllowed(specifier, rule.packages) || packageAllowed(specifier, own) || (EXCEPTIONS[file] ?? []).includes(specifier)) return undefined;
    const builtin = specifier.startsWith('node:') ? ' — node: builtins are I/O' : '';
    return `${specifier} (${rule.says}${builtin})`;
  }
  if (specifier.startsWith('/')) return `${specifier} (absolute paths are not allowed: use a relative import)`;
  const target = posix.normalize(posix.join(posix.dirname(file), specifier)).replace(/\.js$/, '.ts');
  if (target.startsWith('../')) return `${specifier} (outside the repository)`;
  if (rule.layers === '*') return undefined;
  const targetLayer = layerOf(target);
  if (rule.files?.includes(target) || (FILE_EXCEPTIONS[file] ?? []).includes(target)) return undefined;
  if (targetLayer === layer) {
    // a function imports only its own folder, never another function
    if (layer === 'functions' && file.split('/')[1] !== target.split('/')[1]) return `${target} (${rule.says}; not another function)`;
    return undefined;
  }
  if (targetLayer === undefined || !rule.layers.includes(targetLayer)) return `${target} (${rule.says})`;
  if (rule.typeOnly?.includes(targetLayer) && !ref.typeOnly) return `${target} as a value (${rule.says}: use \`import type\`)`;
  return undefined;
}

/**
 * The import graph of `sources` (repo-relative path → text): each file → the files of `sources` it imports, sorted,
 * through any import {@link collectImports} sees. Type-only imports count: two files that name each other's types
 * cannot be read, moved or tested one without the other either.
 */
function importGraph(sources: ReadonlyMap<string, string>): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const [file, text] of sources) {
    const targets = new Set<string>();
    for (const { specifier } of collectImports(file, text).imports) {
      if (!specifier.startsWith('.')) continue;
      const target = posix.normalize(posix.join(posix.dirname(file), specifier)).replace(/\.js$/, '.ts');
      if (sources.has(target)) targets.add(target);
    }
    graph.set(file, [...targets].sort());
  }
  return graph;
}

/**
 * Every import cycle of `graph`, one line each: the strongly connected components (Tarjan) of more than one file, or of
 * one file that imports itself, as a shortest cycle through the component's first file (`a.ts → b.ts → a.ts`), and,
 * when the component holds more files than that cycle, every file of it. Components in order of their first file.
 */
function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) components.push(component.sort());
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) connect(v);
  return components
    .sort((a, b) => (a[0]! < b[0]! ? -1 : 1))
    .map((component) => {
      const path = shortestCycle(graph, component[0]!, new Set(component));
      const all = component.length > path.length - 1 ? ` (${component.length} files import each other: ${component.join(', ')})` : '';
      return `${path.join(' → ')}${all}`;
    });
}

/** A shortest path `start → … → start` through `within` (breadth first, neighbours in sorted order). */
function shortestCycle(graph: ReadonlyMap<string, readonly string[]>, start: string, within: ReadonlySet<string>): string[] {
  const previous = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const v = queue[i]!;
    for (const w of graph.get(v) ?? []) {
      if (!within.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let u: string | undefined = v; u !== start && u !== undefined; u = previous.get(u)) path.splice(1, 0, u);
        return [...path, start];
      }
      if (!previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}

/** Global reads that make code impure: `process.*`, `console.*`, clock reads, randomness. Matched on property-access chains. */
const IMPURE_ACCESS: readonly { readonly path: readonly string[]; readonly says: string }[] = [
  { path: ['process'], says: 'no environment or process access' },
  { path: ['console'], says: 'no console: return values, the caller logs' },
  { path: ['Date', 'now'], says: 'no clock reads: time comes in as an argument' },
  { path: ['performance', 'now'], says: 'no clock reads: time comes in as an argument' },
  { path: ['Math', 'random'], says: 'no randomness: ids and seeds come in as arguments' },
  { path: ['crypto'], says: 'no randomness: ids and seeds come in as arguments' },
];
/** Calls that make code impure. */
const IMPURE_CALLS: Readonly<Record<string, string>> = {
  fetch: 'no network',
  setTimeout: 'no timers: time comes in as an argument',
  setInterval: 'no timers: time comes in as an argument',
  setImmediate: 'no timers: time comes in as an argument',
  Date: 'no clock reads: `Date()` is the current time',
};
const GLOBAL_OBJECTS = new Set(['globalThis', 'global', 'window', 'self']);

/** `a.b['c']` → ['a', 'b', 'c'] without a leading `globalThis`; undefined when the chain is not all names. */
function accessPath(expr: ts.Expression): string[] | undefined {
  const parts: string[] = [];
  let e: ts.Expression = expr;
  for (;;) {
    if (ts.isParenthesizedExpression(e) || ts.isNonNullExpression(e)) e = e.expression;
    else if (ts.isPropertyAccessExpression(e)) {
      parts.unshift(e.name.text);
      e = e.expression;
    } else if (ts.isElementAccessExpression(e) && ts.isStringLiteralLike(e.argumentExpression)) {
      parts.unshift(e.argumentExpression.text);
      e = e.expression;
    } else if (ts.isIdentifier(e)) {
      parts.unshift(e.text);
      break;
    } else return undefined;
  }
  while (parts.length > 1 && GLOBAL_OBJECTS.has(parts[0] ?? '')) parts.shift();
  return parts;
}

/** Every impure global use in `text`, as `file:line: uses X (rule)`. */
function purityViolations(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: string[] = [];
  const report = (node: ts.Node, what: string, says: string): void => {
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    out.push(`${file}:${line}: uses ${what} (the core is pure: ${says})`);
  };
  const visit = (node: ts.Node): void => {
    const isAccess = ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node);
    const parent = node.parent;
    // only the outermost link of a chain: `process.env.X` is one use
    const isInner = parent !== undefined && (ts.isPropertyAccessExpression(parent) || ts.isElementAccessExpression(parent)) && parent.expression === node;
    if (isAccess && !isInner) {
      const path = accessPath(node);
      const hit = path && IMPURE_ACCESS.find((r) => r.path.every((p, i) => path[i] === p));
      if (path && hit) report(node, `${path.slice(0, Math.max(hit.path.length, 2)).join('.')}`, hit.says);
    }
    if (ts.isCallExpression(node)) {
      const path = accessPath(node.expression);
      const name = path?.length === 1 ? path[0] : undefined;
      if (name !== undefined && Object.hasOwn(IMPURE_CALLS, name)) report(node, `${name}()`, IMPURE_CALLS[name] ?? '');
    }
    if (ts.isNewExpression(node) && (node.arguments?.length ?? 0) === 0) {
      const path = accessPath(node.expression);
      if (path?.length === 1 && path[0] === 'Date') report(node, 'new Date()', 'no clock reads: time comes in as an argument');
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** Repo-relative paths of every `.ts` file under `roots`. */
function sourceFiles(roots: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    let entries;
    try {
      entries = readdirSync(posix.join(ROOT, dir), { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return; // e.g. infra/ before its first construct
      throw error;
    }
    for (const e of entries) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory() && e.name !== 'node_modules') walk(path);
      else if (e.isFile() && e.name.endsWith('.ts')) out.push(path);
    }
  };
  for (const root of roots) walk(root);
  return out.sort();
}

const FILES = sourceFiles(CHECKED_ROOTS);
const read = (file: string): string => readFileSync(posix.join(ROOT, file), 'utf8');
/** Fails with one violation per line so the report says what to fix. */
function expectNone(violations: readonly string[]): void {
  expect(violations, `\n${violations.join('\n')}\n`).toEqual([]);
}

describe('import directions (docs/architecture.md#import-directions)', () => {
  describe('importViolations', () => {
    it('reports a core file that imports an adapter, a node: builtin and an SDK', () => {
      const text = [
        "import { z } from 'zod';",
        "import { parse } from 'yaml';",
        "import { readFile } from 'node:fs/promises';",
        "import { DynamoDBClient } from '@aws-sdk/client-dynamodb';",
        "import { tableDefinition } from '../../adapters/aws/table.js';",
        "import { Requirement } from '../scheduling/requirement.js';",
        '// import { nope } from "../../cli/main.js" — a comment is not an import',
        "const s = \"import x from '../../sim/engine.js'\";",
      ].join('\n');
      expect(importViolations('shared/core/api/example.ts', text)).toEqual([
        `shared/core/api/example.ts: imports node:fs/promises (${RULES.core.says} — node: builtins are I/O)`,
        `shared/core/api/example.ts: imports @aws-sdk/client-dynamodb (${RULES.core.says})`,
        `shared/core/api/example.ts: imports shared/adapters/aws/table.ts (${RULES.core.says})`,
      ]);
    });

    it('reports sim importing an adapter — the reason dynalite moved to shared/cli/local-dynamodb.ts', () => {
      const text = "import { TRANSLATE_CONFIG, tableDefinition } from '../adapters/aws/table.js';\nimport dynalite from 'dynalite';";
      expect(importViolations('shared/sim/dynalite.ts', text)).toEqual([
        `shared/sim/dynalite.ts: imports shared/adapters/aws/table.ts (${RULES.sim.says})`,
        `shared/sim/dynalite.ts: imports dynalite (${RULES.sim.says})`,
      ]);
      expect(importViolations('shared/cli/local-dynamodb.ts', text)).toEqual([]);
    });

    it('sees re-exports, dynamic imports, require and import types', () => {
      const text = [
        "export { handler } from '../../functions/provisioner/handler.js';",
        "const m = await import('../lambda/log.js');",
        "const r = require('../adapters/aws/table.js');",
        "type T = typeof import('../cli/main.js');",
        'const computed = await import(name);',
      ].join('\n');
      expect(importViolations('shared/controllers/example.ts', text)).toEqual([
        'shared/controllers/example.ts: imports a computed specifier at line 5 (cannot be checked; use a string literal)',
        `shared/controllers/example.ts: imports functions/provisioner/handler.ts (${RULES.controllers.says})`,
        `shared/controllers/example.ts: imports shared/lambda/log.ts (${RULES.controllers.says})`,
        `shared/controllers/example.ts: imports shared/adapters/aws/table.ts (${RULES.controllers.says})`,
        `shared/controllers/example.ts: imports shared/cli/main.ts (${RULES.controllers.says})`,
      ]);
    });

    it('lets ports import core types only, and node:crypto only in ids.ts', () => {
      const text = [
        "import type { NodeClaim } from '../core/api/nodeclaim.js';",
        "import { type Taint } from '../core/api/kubernetes.js';",
        "import { parseQuantity } from '../core/resources/quantity.js';",
        "import type { Clock } from './clock.js';",
        "import { randomBytes } from 'node:crypto';",
      ].join('\n');
      expect(importViolations('shared/ports/example.ts', text)).toEqual([
        `shared/ports/example.ts: imports shared/core/resources/quantity.ts as a value (${RULES.ports.says}: use \`import type\`)`,
        `shared/ports/example.ts: imports node:crypto (${RULES.ports.says} — node: builtins are I/O)`,
      ]);
      expect(importViolations('shared/ports/ids.ts', text)).toEqual([
        `shared/ports/ids.ts: imports shared/core/resources/quantity.ts as a value (${RULES.ports.says}: use \`import type\`)`,
      ]);
    });

    it('lets an adapter import its own SDK but not another adapter folder’s SDK', () => {
      const text = "import { EC2Client } from '@aws-sdk/client-ec2';\nimport { KubeConfig } from '@kubernetes/client-node';";
      expect(importViolations('shared/adapters/aws/ec2.ts', text)).toEqual([`shared/adapters/aws/ec2.ts: imports @kubernetes/client-node (${RULES.adapters.says})`]);
      expect(importViolations('shared/adapters/kubernetes/cluster.ts', text)).toEqual([
        `shared/adapters/kubernetes/cluster.ts: imports @aws-sdk/client-ec2 (${RULES.adapters.says})`,
      ]);
    });

    it('lets a function import lambda, controllers, core and its own folder, but not adapters or another function', () => {
      const text = [
        "import middy from '@middy/core';",
        "import { provision } from '../../shared/controllers/provision.js';",
        "import { log } from '../../shared/lambda/log.js';",
        "import { parse } from './parse.js';",
        "import { DynamoDbNodeClaimStore } from '../../shared/adapters/aws/dynamodb-nodeclaim-store.js';",
        "import { other } from '../webhook/handler.js';",
      ].join('\n');
      expect(importViolations('functions/provisioner/handler.ts', text)).toEqual([
        `functions/provisioner/handler.ts: imports shared/adapters/aws/dynamodb-nodeclaim-store.ts (${RULES.functions.says})`,
        `functions/provisioner/handler.ts: imports functions/webhook/handler.ts (${RULES.functions.says}; not another function)`,
      ]);
    });

    it('lets only the relay’s entry point import the cluster-watch adapter, and no other adapter', () => {
      const text = [
        "import { ClusterWatch } from '../../shared/adapters/kubernetes/cluster-watch.js';",
        "import { KubernetesCluster } from '../../shared/adapters/kubernetes/kubernetes-cluster.js';",
      ].join('\n');
      expect(importViolations('functions/relay/main.ts', text)).toEqual([
        `functions/relay/main.ts: imports shared/adapters/kubernetes/kubernetes-cluster.ts (${RULES.functions.says})`,
      ]);
      expect(importViolations('functions/relay/relay.ts', text)).toEqual([
        `functions/relay/relay.ts: imports shared/adapters/kubernetes/cluster-watch.ts (${RULES.functions.says})`,
        `functions/relay/relay.ts: imports shared/adapters/kubernetes/kubernetes-cluster.ts (${RULES.functions.says})`,
      ]);
    });

    it('lets infra import CDK, constructs, zod, lambda/env.ts, core/metrics.ts, core/api/labels.ts and the AWS table and IAM definitions only', () => {
      const text = [
        "import { Stack } from 'aws-cdk-lib';",
        "import { Queue } from 'aws-cdk-lib/aws-sqs';",
        "import { Construct } from 'constructs';",
        "import { ENV } from '../../shared/lambda/env.js';",
        "import { METRICS } from '../../shared/core/metrics.js';",
        "import { SkiffFunction } from './skiff-function.js';",
        "import { tableDefinition } from '../../shared/adapters/aws/table.js';",
        "import { z } from 'zod';",
        "import { readFileSync } from 'node:fs';",
        "import { log } from '../../shared/lambda/log.js';",
        "import { DynamoDbLeaseStore } from '../../shared/adapters/aws/lease-store.js';",
        "import { Requirement } from '../../shared/core/scheduling/requirement.js';",
        "import { SQSClient } from '@aws-sdk/client-sqs';",
      ].join('\n');
      expect(importViolations('infra/constructs/provisioner.ts', text)).toEqual([
        `infra/constructs/provisioner.ts: imports shared/lambda/log.ts (${RULES.infra.says})`,
        `infra/constructs/provisioner.ts: imports shared/adapters/aws/lease-store.ts (${RULES.infra.says})`,
        `infra/constructs/provisioner.ts: imports shared/core/scheduling/requirement.ts (${RULES.infra.says})`,
        `infra/constructs/provisioner.ts: imports @aws-sdk/client-sqs (${RULES.infra.says})`,
      ]);
    });

    it('lets the cli import anything in the repository', () => {
      const text = "import { startDynalite } from './local-dynamodb.js';\nimport { createHandler } from '../../functions/provisioner/handler.js';\nimport dynalite from 'dynalite';";
      expect(importViolations('shared/cli/simulate.ts', text)).toEqual([]);
    });

    it('reports a file outside every layer', () => {
      expect(importViolations('shared/util/helpers.ts', '')).toEqual([expect.stringMatching(/^shared\/util\/helpers\.ts: is in no layer/)]);
    });
  });

  describe('importCycles', () => {
    const cyclesOf = (sources: Record<string, string>): string[] => importCycles(importGraph(new Map(Object.entries(sources))));

    it('reports a cycle through a type-only import and a re-export, with a file that only points into it left out', () => {
      expect(
        cyclesOf({
          'shared/core/a.ts': "import type { B } from './b.js';",
          'shared/core/b.ts': "export { c } from './sub/c.js';",
          'shared/core/sub/c.ts': "import { a } from '../a.js';\nimport { z } from 'zod';",
          'shared/core/d.ts': "import { a } from './a.js';",
        }),
      ).toEqual(['shared/core/a.ts → shared/core/b.ts → shared/core/sub/c.ts → shared/core/a.ts']);
    });

    it('reports nothing for a DAG, diamonds included', () => {
      expect(
        cyclesOf({
          'shared/core/top.ts': "import { l } from './left.js';\nimport { r } from './right.js';",
          'shared/core/left.ts': "import type { B } from './bottom.js';",
          'shared/core/right.ts': "import { b } from './bottom.js';\n// import { t } from './top.js' — a comment is not an import",
          'shared/core/bottom.ts': "const s = \"import { t } from './top.js'\";",
        }),
      ).toEqual([]);
    });

    it('reports each cycle once, a file importing itself, and every file of a component larger than its shortest cycle', () => {
      expect(
        cyclesOf({
          'shared/controllers/x.ts': "import { y } from './y.js';",
          'shared/controllers/y.ts': "import { x } from './x.js';\nimport { z } from './z.js';",
          'shared/controllers/z.ts': "import type { X } from './x.js';",
          'shared/sim/self.ts': "type T = typeof import('./self.js');",
          'functions/f/handler.ts': "import { p } from '../../shared/controllers/x.js';",
        }),
      ).toEqual([
        'shared/controllers/x.ts → shared/controllers/y.ts → shared/controllers/x.ts (3 files import each other: shared/controllers/x.ts, shared/controllers/y.ts, shared/controllers/z.ts)',
        'shared/sim/self.ts → shared/sim/self.ts',
      ]);
    });
  });

  describe('purityViolations', () => {
    it('reports clock reads, env, randomness, console and network in code but not in comments or strings', () => {
      const text = [
        '// Date.now() and process.env are fine in a comment',
        "const doc = 'Math.random() in a string is fine';",
        'export const a = Date.now();',
        'export const b = new Date();',
        'export const c = new Date(0);',
        'export const d = process.env.HOME;',
        'export const e = Math.random();',
        "console.log('x');",
        'export const f = globalThis.Date.now();',
        "export const g = process['env'];",
        "export const h = fetch('https://example.com');",
        'export const i = Date.UTC(2026, 0, 1);',
      ].join('\n');
      expect(purityViolations('shared/core/example.ts', text)).toEqual([
        'shared/core/example.ts:3: uses Date.now (the core is pure: no clock reads: time comes in as an argument)',
        'shared/core/example.ts:4: uses new Date() (the core is pure: no clock reads: time comes in as an argument)',
        'shared/core/example.ts:6: uses process.env (the core is pure: no environment or process access)',
        'shared/core/example.ts:7: uses Math.random (the core is pure: no randomness: ids and seeds come in as arguments)',
        'shared/core/example.ts:8: uses console.log (the core is pure: no console: return values, the caller logs)',
        'shared/core/example.ts:9: uses Date.now (the core is pure: no clock reads: time comes in as an argument)',
        'shared/core/example.ts:10: uses process.env (the core is pure: no environment or process access)',
        'shared/core/example.ts:11: uses fetch() (the core is pure: no network)',
      ]);
    });
  });

  describe('the repository', () => {
    it('finds the source files to check', () => {
      expect(FILES).toContain('shared/core/errors.ts');
      expect(FILES).toContain('shared/cli/local-dynamodb.ts');
      expect(FILES.length).toBeGreaterThan(40);
    });

    it.each(LAYERS)('keeps every %s file within its import directions', (layer) => {
      expectNone(FILES.filter((f) => layerOf(f) === layer).flatMap((f) => importViolations(f, read(f))));
    });

    it('puts every file under shared/, functions/ and infra/ in a layer', () => {
      expectNone(FILES.filter((f) => layerOf(f) === undefined).map((f) => `${f}: is in no layer`));
    });

    it('has no import cycle among shared/, functions/ and infra/ (type-only imports count)', () => {
      expectNone(importCycles(importGraph(new Map(FILES.map((f) => [f, read(f)])))));
    });

    it('keeps shared/core pure: no process, console, Date.now, new Date(), Math.random, timers or fetch', () => {
      expectNone(FILES.filter((f) => layerOf(f) === 'core').flatMap((f) => purityViolations(f, read(f))));
    });
  });
});
