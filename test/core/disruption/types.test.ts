import { describe, expect, it } from 'vitest';
import { decisionOf } from '../../../shared/core/disruption/types.js';
import type { NodeClaimPlan } from '../../../shared/core/provisioning/types.js';

describe('decisionOf', () => {
  const plan = { nodePool: 'general' } as NodeClaimPlan;
  it.each([
    [['a'], [plan], 'replace'],
    [['a', 'b'], [plan, plan], 'replace'],
    [['a'], [], 'delete'],
    [['a', 'b'], [], 'delete'],
    [[], [], 'noop'],
    [[], [plan], 'noop'],
  ] as const)('%j candidates, %j replacements: %s (Karpenter Command.Decision)', (candidates, replacements, decision) => {
    expect(decisionOf({ candidates, replacements, savings: 0 })).toBe(decision);
  });
});
