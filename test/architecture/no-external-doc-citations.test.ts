/**
 * Comments cite the project's own docs/ pages, never files beside the checkout that a user's clone does not have
 * (issue 24). Reads the comments of every source and test file from the TypeScript AST's comment ranges, so code and
 * strings do not count, and checks three rules:
 * 1. no comment names one of the reference documents that live beside the checkout (REFERENCE_DOCUMENTS below);
 * 2. no comment cites a path that climbs out of the repository into the reference folder beside it, except the data
 *    the build scripts read, `../shared/data`, and only in a comment that says it is a build-time input;
 * 3. every `docs/<page>.md#<anchor>` a source or test file cites names an existing page and one of its headings, so a
 *    renamed heading cannot leave dangling citations.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, posix, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Folders holding source and test files. */
const CHECKED_ROOTS = ['shared', 'functions', 'infra', 'bench', 'scripts', 'test', 'bin', 'types'] as const;
const EXTENSIONS = ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.mts', '.cts'];

/** The reference documents beside the checkout; a comment names none of them (the docs/ pages replace them). */
const REFERENCE_DOCUMENTS = /\b(?:DESIGN\.md|KARPENTER-V1(?:\.md)?|STACK\.md|STYLE\.md)\b/;
/** A parent folder's `shared/` as a path of its own (not the tail of a deeper relative path, which stays inside). */
const PARENT_SHARED = /(?<![\w./-])\.\.\/shared\/([\w./-]*)/g;
/** The one reference folder a comment may cite: the build scripts' input data. */
const BUILD_DATA = /^data(?:\/|$)/;
/** Words that say a citation of the reference data is a build-time input. */
const BUILD_TIME = /\bbuild[- ]time\b/i;
/** A citation of a docs page with an anchor. */
const DOCS_ANCHOR = /\bdocs\/([\w-]+\.md)#([\w-]+)/g;

/** Every checked file, repo-relative with forward slashes. */
function sourceFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = posix.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && !entry.name.startsWith('.')) walk(path);
      } else if (EXTENSIONS.some((e) => entry.name.endsWith(e)) && !entry.name.endsWith('.d.ts.map')) {
        out.push(path);
      }
    }
  };
  for (const root of CHECKED_ROOTS) if (existsSync(join(ROOT, root))) walk(root);
  return out.sort();
}

/** One comment: its text and the line it starts on (1-based). */
interface Comment {
  readonly text: string;
  readonly line: number;
}

/**
 * Every comment of a TypeScript or JavaScript file, in order: the leading and trailing comment ranges around every
 * token of the AST (the ranges the compiler itself attaches), deduplicated by position.
 */
export function commentsOf(file: string, text: string): Comment[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const seen = new Map<number, Comment>();
  const add = (ranges: ts.CommentRange[] | undefined): void => {
    for (const r of ranges ?? []) {
      if (!seen.has(r.pos)) seen.set(r.pos, { text: text.slice(r.pos, r.end), line: source.getLineAndCharacterOfPosition(r.pos).line + 1 });
    }
  };
  const visit = (node: ts.Node): void => {
    add(ts.getLeadingCommentRanges(text, node.getFullStart()));
    add(ts.getTrailingCommentRanges(text, node.getEnd()));
    // Tokens carry comments too (e.g. one before a closing brace); walk them as well as the syntax nodes. JSDoc nodes
    // are the comments themselves (found as their owner's leading range), not code to look around.
    for (const child of node.getChildren(source)) if (!isJsDoc(child)) visit(child);
  };
  visit(source);
  return [...seen.entries()].sort((a, b) => a[0] - b[0]).map(([, c]) => c);
}

function isJsDoc(node: ts.Node): boolean {
  return node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode;
}

/**
 * What is wrong with the citations of one comment of `file` (repo-relative): rules 1 and 2 of the module comment.
 * @returns one message per problem, empty when the comment is fine
 */
export function citationProblems(file: string, comment: Comment): string[] {
  const problems: string[] = [];
  const at = (index: number): string => `${file}:${comment.line + (comment.text.slice(0, index).match(/\n/g)?.length ?? 0)}`;
  const named = REFERENCE_DOCUMENTS.exec(comment.text);
  if (named) problems.push(`${at(named.index)}: cites ${named[0]}, a reference document beside the checkout; cite docs/*.md#anchor or the upstream code path`);
  for (const m of comment.text.matchAll(PARENT_SHARED)) {
    const target = m[1] ?? '';
    const resolved = resolve(ROOT, dirname(file), '..', 'shared', target);
    // Relative imports end in `.js` for a `.ts` file (NodeNext).
    const inside = !relative(ROOT, resolved).startsWith('..') && (existsSync(resolved) || existsSync(resolved.replace(/\.js$/, '.ts')));
    if (inside) continue; // a file-relative path to the project's own shared/ folder
    if (BUILD_DATA.test(target) && BUILD_TIME.test(comment.text)) continue;
    problems.push(
      BUILD_DATA.test(target)
        ? `${at(m.index)}: cites ../shared/${target} without saying it is a build-time input (nothing may read it at run time)`
        : `${at(m.index)}: cites ../shared/${target}, outside the repository; cite docs/*.md#anchor or the upstream code path`,
    );
  }
  return problems;
}

/** GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to hyphens. */
export function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a docs page (its `#`–`####` headings), or undefined when the page does not exist. */
function anchorsOf(page: string): Set<string> | undefined {
  return headingsOf(posix.join('docs', page));
}

/** The anchors of a repo-relative Markdown file's `#`–`####` headings (outside code blocks), or undefined when absent. */
function headingsOf(file: string): Set<string> | undefined {
  const path = join(ROOT, file);
  if (!existsSync(path)) return undefined;
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const m = fenced ? null : /^#{1,4} (.+)$/.exec(line);
    if (m?.[1]) anchors.add(headingAnchor(m[1]));
  }
  return anchors;
}

describe('comments cite docs/, not files beside the checkout (docs/architecture.md#import-directions)', () => {
  describe('citationProblems', () => {
    const c = (text: string): Comment => ({ text, line: 1 });
    it('flags a reference document by name, with or without a path', () => {
      for (const name of ['DESIGN.md', 'KARPENTER-V1.md', 'KARPENTER-V1', 'STACK.md', 'STYLE.md']) {
        expect(citationProblems('shared/core/x.ts', c(`/** see ../shared/${name} §1.2 */`)), name).not.toEqual([]);
        expect(citationProblems('shared/core/x.ts', c(`// as ${name} says`)), name).not.toEqual([]);
      }
    });
    it('reports the line of the citation inside a block comment', () => {
      expect(citationProblems('shared/core/x.ts', { text: '/**\n * one\n * see DESIGN.md\n */', line: 10 })).toEqual([
        'shared/core/x.ts:12: cites DESIGN.md, a reference document beside the checkout; cite docs/*.md#anchor or the upstream code path',
      ]);
    });
    it('flags ../shared/data unless the comment says it is a build-time input', () => {
      expect(citationProblems('scripts/build-x.ts', c('/** reads `../shared/data` next to the repository */'))).toHaveLength(1);
      expect(citationProblems('scripts/build-x.ts', c('/** reads `../shared/data` (a build-time input) */'))).toEqual([]);
      expect(citationProblems('scripts/build-x.ts', c('/** reads ../shared/seed/article.txt at build time */'))).toHaveLength(1);
    });
    it('accepts file-relative paths into the project and docs citations', () => {
      expect(citationProblems('bench/x.ts', c("// import { solve } from '../shared/core/provisioning/scheduler.js'"))).toEqual([]);
      expect(citationProblems('test/core/x.test.ts', c('// ../../shared/core/errors.ts'))).toEqual([]);
      expect(citationProblems('shared/core/x.ts', c('/** docs/karpenter-semantics.md#batching */'))).toEqual([]);
    });
  });

  describe('commentsOf', () => {
    it('finds line and block comments, and not strings or template literals', () => {
      const text = ["const a = '// not a comment ../shared/DESIGN.md';", '/** doc */', 'const b = `x ${1 /* inner */} y`; // tail', ''].join('\n');
      expect(commentsOf('x.ts', text).map((k) => k.text)).toEqual(['/** doc */', '/* inner */', '// tail']);
    });
  });

  describe('headingAnchor', () => {
    it('spells anchors as GitHub does', () => {
      expect(headingAnchor('Taint, drain, terminate')).toBe('taint-drain-terminate');
      expect(headingAnchor('Launch, registration, initialization')).toBe('launch-registration-initialization');
      expect(headingAnchor('CreateFleet')).toBe('createfleet');
    });
  });

  const files = sourceFiles();

  it('finds the files it checks', () => {
    expect(files).toContain('shared/controllers/launch.ts');
    expect(files).toContain('test/architecture/no-external-doc-citations.test.ts');
  });

  it('every comment cites docs/ or upstream code, never a reference file beside the checkout', () => {
    const problems = files.flatMap((file) => {
      const text = readFileSync(join(ROOT, file), 'utf8');
      // Only a file whose text mentions a candidate can have a problem; parse just those (most files mention none).
      if (!REFERENCE_DOCUMENTS.test(text) && !new RegExp(PARENT_SHARED.source).test(text)) return [];
      return commentsOf(file, text).flatMap((comment) => citationProblems(file, comment));
    });
    expect(problems).toEqual([]);
  });

  it('every docs/<page>.md#<anchor> cited in a source or test file exists', () => {
    const pages = new Map<string, Set<string> | undefined>();
    const problems: string[] = [];
    for (const file of files) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const m of text.matchAll(DOCS_ANCHOR)) {
        const [, page = '', anchor = ''] = m;
        if (!pages.has(page)) pages.set(page, anchorsOf(page));
        const anchors = pages.get(page);
        const line = text.slice(0, m.index).split('\n').length;
        if (!anchors) problems.push(`${file}:${line}: docs/${page} does not exist`);
        else if (!anchors.has(anchor)) problems.push(`${file}:${line}: docs/${page} has no heading #${anchor}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('every relative link of the docs pages and README.md names an existing page and heading', () => {
    const problems: string[] = [];
    const pages = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
    for (const page of pages) {
      const text = readFileSync(join(ROOT, page), 'utf8');
      for (const m of text.matchAll(/\]\(([^)#\s]*)(?:#([^)\s]+))?\)/g)) {
        const [, target = '', anchor] = m;
        if (/^[a-z]+:/.test(target)) continue; // an external URL
        const targetPath = target === '' ? page : posix.join(posix.dirname(page), target);
        if (!existsSync(join(ROOT, targetPath))) {
          problems.push(`${page}: links to ${target}, which does not exist`);
          continue;
        }
        if (anchor === undefined || !targetPath.endsWith('.md')) continue;
        const anchors = targetPath.startsWith('docs/') ? anchorsOf(targetPath.slice('docs/'.length)) : headingsOf(targetPath);
        if (!anchors?.has(anchor)) problems.push(`${page}: links to ${targetPath}#${anchor}, which has no such heading`);
      }
    }
    expect(problems).toEqual([]);
  });
});
