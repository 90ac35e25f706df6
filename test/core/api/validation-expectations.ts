/**
 * Test helpers for validation: run a parse and get its issues, and assert one issue by path and line.
 * (Not a test file itself; imported by the api and sim tests.)
 */
import { expect } from 'vitest';
import { ValidationError, type ValidationIssue } from '../../../shared/core/errors.js';

/** Runs `fn` and returns the issues of the ValidationError it throws; fails when it does not throw one. */
export function issuesOf(fn: () => unknown): ValidationIssue[] {
  try {
    fn();
  } catch (e) {
    if (e instanceof ValidationError) return [...e.issues];
    throw e;
  }
  throw new Error('expected a ValidationError, but parsing succeeded');
}

/** Awaits `promise` and returns the issues of the ValidationError it rejects with. */
export async function issuesOfAsync(promise: Promise<unknown>): Promise<ValidationIssue[]> {
  try {
    await promise;
  } catch (e) {
    if (e instanceof ValidationError) return [...e.issues];
    throw e;
  }
  throw new Error('expected a ValidationError, but loading succeeded');
}

/** Asserts that exactly one issue has `path`, and that it is on `line` and its message matches `message`. */
export function expectIssue(issues: readonly ValidationIssue[], expected: { path: string; line: number; message?: RegExp; file?: string }): ValidationIssue {
  const matching = issues.filter((i) => i.path === expected.path);
  expect(matching, `issues: ${JSON.stringify(issues, null, 1)}`).toHaveLength(1);
  const issue = matching[0] as ValidationIssue;
  expect(issue.line).toBe(expected.line);
  if (expected.message) expect(issue.message).toMatch(expected.message);
  if (expected.file) expect(issue.file).toBe(expected.file);
  return issue;
}

/** Replaces each `from` (which must occur exactly once) by `to` in `text`. */
export function edit(text: string, replacements: Readonly<Record<string, string>>): string {
  let out = text;
  for (const [from, to] of Object.entries(replacements)) {
    const at = out.indexOf(from);
    if (at < 0 || out.indexOf(from, at + 1) >= 0) throw new Error(`edit: ${JSON.stringify(from)} must occur exactly once`);
    out = out.slice(0, at) + to + out.slice(at + from.length);
  }
  return out;
}
