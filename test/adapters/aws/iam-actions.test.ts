/**
 * The one IAM action list covers every call the AWS adapters make: each SDK command sent (`new XCommand(` or
 * `paginateX(`) in shared/adapters/aws must appear, as `<service>:<X>`, in AWS_ADAPTER_POLICY — and nothing listed is
 * unused, except what a call implies (CreateFleet launches through RunInstances and tags on create).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { adapterActions, AWS_ADAPTER_POLICY } from '../../../shared/adapters/aws/iam-actions.js';

const DIR = new URL('../../../shared/adapters/aws/', import.meta.url);

/** Service prefix of each SDK package the adapters import. */
const SERVICE: Readonly<Record<string, string>> = { ec2: 'ec2', ssm: 'ssm', iam: 'iam', pricing: 'pricing', eventbridge: 'events', 'dynamodb': 'dynamodb', 'lib-dynamodb': 'dynamodb' };

/** DocumentClient commands → the DynamoDB action they call. */
const DOCUMENT_COMMANDS: Readonly<Record<string, string>> = { Get: 'GetItem', Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem', Query: 'Query' };

/** Actions implied by a call rather than sent: CreateFleet runs instances and tags them; the stack's own CreateTable is not the adapters'. */
const IMPLIED = new Set(['ec2:RunInstances', 'ec2:CreateTags', 'iam:PassRole', 'iam:TagInstanceProfile', 'dynamodb:UpdateItem']);

function calledActions(): Set<string> {
  const out = new Set<string>();
  for (const file of readdirSync(DIR).filter((f) => f.endsWith('.ts') && f !== 'iam-actions.ts')) {
    const text = readFileSync(new URL(file, DIR), 'utf8');
    const imports = [...text.matchAll(/import\s*(?:type\s*)?\{([^}]*)\}\s*from\s*'@aws-sdk\/(client-)?([a-z0-9-]+)'/g)];
    for (const [, names, , pkg] of imports) {
      const service = SERVICE[pkg!];
      if (!service) continue;
      for (const raw of names!.split(',')) {
        const name = raw.replace(/^\s*type\s+/, '').trim();
        const sent = (name.endsWith('Command') && text.includes(`new ${name}(`)) || (name.startsWith('paginate') && text.includes(`${name}(`));
        if (!sent) continue;
        const op = name.startsWith('paginate') ? name.slice('paginate'.length) : name.replace(/Command$/, '');
        if (op === 'CreateTable') continue; // local test tables only; the stack creates the real one
        out.add(`${service}:${pkg === 'lib-dynamodb' ? (DOCUMENT_COMMANDS[op] ?? op) : op}`);
      }
    }
  }
  return out;
}

describe('AWS_ADAPTER_POLICY', () => {
  it('lists every action the adapters call', () => {
    const called = [...calledActions()].sort();
    expect(called.length).toBeGreaterThan(15);
    expect(called.filter((a) => !adapterActions().includes(a))).toEqual([]);
  });

  it('lists nothing the adapters do not call or imply, each action once, and no wildcard', () => {
    const called = calledActions();
    const actions = adapterActions();
    expect(actions.filter((a) => !called.has(a) && !IMPLIED.has(a))).toEqual([]);
    expect(new Set(actions).size).toBe(actions.length);
    expect(actions.filter((a) => a.includes('*'))).toEqual([]);
    expect(new Set(AWS_ADAPTER_POLICY.map((s) => s.sid)).size).toBe(AWS_ADAPTER_POLICY.length);
  });
});
