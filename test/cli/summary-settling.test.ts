// A run cut short in the middle of a scale-in must say so: its final $/h is one the fleet was still moving away from
// (an observer that cannot see that the fleet had not settled reads as "done").
import { describe, expect, it } from 'vitest';
import { SETTLED_QUIET_MS, formatSummary, stillDisrupting } from '../../shared/cli/summary.js';
import { nodePoolYaml } from '../support/manifests.js';
import { nodeClassYaml } from '../support/provisioner-harness.js';
import { simulateDocs } from '../support/simulate-docs.js';

const POOL = nodePoolYaml({ requirements: { 'karpenter.k8s.aws/instance-family': ['c5'], 'karpenter.k8s.aws/instance-size': ['large'] } });
const DEPLOYMENT = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 12
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: nginx, resources: {requests: {cpu: 800m, memory: 1Gi}}}]
`;
/** 12 pods on 12 c5.large, scaled to 2 at 20 min; the run ends `duration` after the start. */
const scenario = (duration: string) => `
apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: settling}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: ${duration}
  region: us-west-2
  events:
    - {at: 20m, scale: {kind: Deployment, name: web, replicas: 2}}
`;

describe('the summary says when disruptions had not settled by the end', () => {
  it('names the last disruption when the run ends during a scale-in, and says nothing once the fleet was quiet', async () => {
    const cut = await simulateDocs(1, nodeClassYaml(), POOL, DEPLOYMENT, scenario('23m'));
    expect(cut.disruptions.length).toBeGreaterThan(0);
    const last = cut.disruptions.map((d) => Date.parse(d.at)).reduce((a, b) => Math.max(a, b));
    expect(Date.parse(cut.end) - last).toBeLessThan(SETTLED_QUIET_MS);
    expect(formatSummary(cut)).toMatch(/still disrupting at the end: .*the last disruption (started|ended) (\d+\.\d min before the end|\d+ s before the end|as the run ended)/);

    const long = await simulateDocs(1, nodeClassYaml(), POOL, DEPLOYMENT, scenario('90m'));
    // The pod count says what it holds beside the workloads' own pods: none here (no DaemonSet, no eviction) …
    expect(long.pods.every((p) => p.evictions === 0 && !p.owner?.startsWith('DaemonSet/'))).toBe(true);
    expect(formatSummary(long)).toContain(`Pods: ${long.pods.length} created, `);
    // … and, with a DaemonSet pod and two evictions, both.
    const [first, ...rest] = long.pods;
    const more = { ...long, pods: [{ ...first!, evictions: 2 }, ...rest, { ...first!, name: 'agent-x', owner: 'DaemonSet/agent', evictions: 0 }] };
    expect(formatSummary(more)).toContain(`Pods: ${long.pods.length + 1} created (1 by DaemonSets, 2 after evictions), `);
    // The same scale-in, ended well before the end: every disruption over and the fleet quiet after.
    expect(long.disruptions.length).toBeGreaterThan(0);
    expect(long.disruptions.every((d) => d.completedAt !== null)).toBe(true);
    expect(stillDisrupting(long)).toBeUndefined();
    expect(formatSummary(long)).not.toContain('still disrupting');
  }, 120_000);

  it('says seconds, not "0.0 min", for a disruption that ended under a minute before the end', () => {
    const end = '2026-03-02T10:00:00.000Z';
    const ended = (completedAt: string) => ({ end, disruptions: [{ at: '2026-03-02T09:58:00.000Z', completedAt }] }) as never;
    expect(stillDisrupting(ended('2026-03-02T09:59:40.000Z'))).toBe('the last disruption ended 20 s before the end (2026-03-02T09:59:40.000Z)');
    expect(stillDisrupting(ended('2026-03-02T10:00:00.000Z'))).toBe('the last disruption ended as the run ended (2026-03-02T10:00:00.000Z)');
    expect(stillDisrupting(ended('2026-03-02T09:57:30.000Z'))).toBe('the last disruption ended 2.5 min before the end (2026-03-02T09:57:30.000Z)');
  });
});
