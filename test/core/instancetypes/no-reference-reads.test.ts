import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, extname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** Folders that ship to users or run in AWS: nothing in them may read the reference folder. */
const RUNTIME_FOLDERS = ['shared', 'functions', 'infra'];
const SKIPPED_FOLDERS = new Set(['node_modules', 'cdk.out', '.git']);
const CODE_EXTENSIONS = new Set(['.ts', '.tsx', '.mts', '.cts', '.js', '.mjs', '.cjs']);
const FORBIDDEN = '../shared';

function* files(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIPPED_FOLDERS.has(entry.name)) yield* files(join(dir, entry.name));
    } else if (entry.isFile()) {
      yield join(dir, entry.name);
    }
  }
}

/**
 * Where `FORBIDDEN` occurs in what a file does at run time, as `line: text`. For code, only string, template and
 * regular-expression literals count (comments pointing readers at the reference docs do not read anything); for
 * data files (JSON, YAML, …) the whole text counts.
 */
function mentions(file: string, text: string): string[] {
  if (!CODE_EXTENSIONS.has(extname(file))) {
    return text.split('\n').flatMap((line, i) => (line.includes(FORBIDDEN) ? [`${i + 1}: ${line.trim()}`] : []));
  }
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const hits: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node) || ts.isRegularExpressionLiteral(node)) && node.text.includes(FORBIDDEN) && !isImportInsideRepo(file, node)) {
      const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
      hits.push(`${line + 1}: ${node.getText(source)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return hits;
}

/** A module specifier (static or dynamic import, re-export) that resolves inside the repository, e.g. `../../shared/core/x.js`. */
function isImportInsideRepo(file: string, node: ts.Node): boolean {
  const parent = node.parent;
  const isSpecifier =
    (parent && (ts.isImportDeclaration(parent) || ts.isExportDeclaration(parent)) && parent.moduleSpecifier === node) ||
    (parent && ts.isCallExpression(parent) && parent.expression.kind === ts.SyntaxKind.ImportKeyword) ||
    (parent && ts.isLiteralTypeNode(parent) && parent.parent && ts.isImportTypeNode(parent.parent));
  if (!isSpecifier || !ts.isStringLiteralLike(node)) return false;
  const target = resolve(dirname(resolve(REPO_ROOT, file)), node.text);
  return !relative(REPO_ROOT, target).startsWith('..');
}

describe('runtime code', () => {
  describe('reference data', () => {
    it(`never reads ${FORBIDDEN}: no literal under ${RUNTIME_FOLDERS.join('/, ')}/ names it (a user's clone has no reference folder)`, () => {
      const hits: string[] = [];
      for (const folder of RUNTIME_FOLDERS.map((f) => join(REPO_ROOT, f)).filter((f) => existsSync(f))) {
        for (const file of files(folder)) {
          hits.push(...mentions(file, readFileSync(file, 'utf8')).map((hit) => `${relative(REPO_ROOT, file)}:${hit}`));
        }
      }
      expect(hits).toEqual([]);
    });

    it('detects a reference path in a string or template literal but not in a comment', () => {
      const code = [
        '// see ../shared/KARPENTER-V1.md',
        '/** ../shared/STYLE.md */',
        "const a = readFileSync('../shared/data/x.json');",
        'const b = `${root}/../shared/data`;',
      ].join('\n');
      expect(mentions('x.ts', code).map((hit) => hit.split(':')[0])).toEqual(['3', '4']);
      expect(mentions('x.json', '{"path": "../shared/data"}')).toHaveLength(1);
    });

    it('allows imports that resolve inside the repository but not ones that leave it', () => {
      const code = ["import { a } from '../../shared/core/a.js';", "const b = await import('../../../shared/data/x.json');"].join('\n');
      expect(mentions(join(REPO_ROOT, 'functions/provisioner/handler.ts'), code).map((hit) => hit.split(':')[0])).toEqual(['2']);
    });
  });
});
