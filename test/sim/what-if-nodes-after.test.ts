// `whatIf.nodesAfter` counts the fleet `hourlyUSDAfter` prices (a new-user trial: "settled …; 6 nodes" beside a price
// of 7 instances, one of which had launched just before `settledAt` and registered its Node 6 s after).
import { describe, expect, it } from 'vitest';
import type { Result } from '../../shared/sim/result-schema.js';
import type { SimInstance } from '../../shared/sim/simulated-ec2.js';
import { whatIf } from '../../shared/sim/what-if.js';

const T0 = Date.parse('2026-02-20T10:00:00Z');
const at = (s: number) => T0 + s * 1000;
const iso = (s: number) => new Date(at(s)).toISOString();

const instance = (id: string, price: number, launched: number, terminated?: number) => ({ instanceId: id, price, launchedAt: at(launched), ...(terminated !== undefined ? { terminatedAt: at(terminated) } : {}) }) as unknown as SimInstance;

describe('whatIf.nodesAfter', () => {
  it('counts the instances running at settledAt, as hourlyUSDAfter prices them, a Node not yet registered included', () => {
    const result = {
      start: iso(0),
      end: iso(3600),
      nodeClaims: [],
      pods: [],
      unschedulable: [],
      events: [],
      disruptions: [{ at: iso(60), command: 'c', nodeClaim: 'old', nodePool: 'general', reason: 'Underutilized', decision: 'replace', replacement: 'new', replacements: ['new'], message: '', drainStartedAt: iso(70), completedAt: iso(660) }],
      nodes: [
        { name: 'kept', nodeClaim: null, createdAt: iso(-600), deletedAt: null },
        { name: 'old', nodeClaim: 'old', createdAt: iso(-600), deletedAt: iso(660) },
        // The replacement's instance launched at 600 s; its Node registered at 666 s, after the last disruption ended.
        { name: 'new', nodeClaim: 'new', createdAt: iso(666), deletedAt: null },
      ],
    } as unknown as Result;
    const instances = [instance('i-kept', 0.2, -600), instance('i-old', 0.4, -600, 660), instance('i-new', 0.1, 600)];

    const w = whatIf(result, { instances, nodePools: [], pendingAtStart: [] });

    expect(w.settledAt).toBe(iso(660));
    expect(w.hourlyUSDAfter).toBeCloseTo(0.3, 6);
    expect(w.nodesAfter).toBe(2);
  });
});
