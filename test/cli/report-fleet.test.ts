/**
 * The report's fleet price chart counts the whole fleet, nodes no NodePool owns included as their own series, and its
 * caption says so (issue 22, new-user trial: the chart left out a snapshot's managed node group while the what-if's
 * "Fleet now" and the caption's figures counted it). A scenario with NodePool nodes and a managed node group is
 * simulated; the unmanaged nodes' price is the catalogue's on-demand list price of their type, read independently.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { simulateScenario } from '../../shared/cli/simulate.js';
import { renderReport } from '../../shared/cli/report/html.js';
import { reportSeries, UNMANAGED_NODEPOOL, type ReportSeries } from '../../shared/cli/report/series.js';
import { instanceTypeByName } from '../../shared/core/instancetypes/catalog.js';
import type { SimulationResult } from '../../shared/sim/result.js';
import { scenarioFolder } from '../support/simulate-docs.js';
import { GENERAL_POOL } from '../support/provisioner-harness.js';

const SYSTEM_NODES = 3;
const SYSTEM_TYPE = 'm5.xlarge';

const SCENARIO = `
apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: report-fleet}
spec:
  start: "2026-03-02T08:00:00Z"
  duration: 30m
  region: us-west-2
  nodes:
    - {name: g-0, instanceType: m5.large, zone: us-west-2a, capacityType: on-demand, nodePool: general, createdAt: "-2h"}
    - {name: g-1, instanceType: m5.large, zone: us-west-2b, capacityType: on-demand, nodePool: general, createdAt: "-2h"}
${Array.from({ length: SYSTEM_NODES }, (_, i) => `    - {name: system-${i}, instanceType: ${SYSTEM_TYPE}, zone: us-west-2a, capacityType: on-demand, labels: {eks.amazonaws.com/nodegroup: system}, createdAt: "-2h"}`).join('\n')}
`;

/** One pod on g-0 keeps it; g-1 is empty and goes, so the managed part of the fleet changes during the run. */
const POD = `
apiVersion: v1
kind: Pod
metadata: {name: keep}
spec:
  nodeName: g-0
  containers: [{name: c, image: app, resources: {requests: {cpu: 500m, memory: 512Mi}}}]
`;

let result: SimulationResult;
let series: ReportSeries;
let html: string;

beforeAll(async () => {
  const docs = [`${GENERAL_POOL.trimEnd()}\n  disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: 30s}\n`, SCENARIO, POD];
  result = (await simulateScenario(scenarioFolder(docs, 'skiff-report-fleet-'), { seed: 1 })).result;
  const nodePools = [{ nodePool: 'general', budgets: [{ nodes: '10%' }] }];
  series = reportSeries(result, nodePools);
  html = renderReport({ result, nodePools, chartJs: '' });
}, 120_000);

/** The sum of every group of the fleet price series at sample `i`. */
const total = (i: number) => series.cost.groups.reduce((s, g) => s + g.values[i]!, 0);

describe('report fleet price chart', () => {
  it('draws the nodes no NodePool owns as their own series, at their instances\' list price, for the whole run', () => {
    const unmanaged = series.cost.groups.find((g) => g.key === UNMANAGED_NODEPOOL);
    const price = SYSTEM_NODES * instanceTypeByName(SYSTEM_TYPE)!.onDemandPrice!;
    expect(unmanaged).toBeDefined();
    for (const v of unmanaged!.values) expect(v).toBeCloseTo(price, 6);
    // The nodes chart counts them too, under the same name (one colour for both charts).
    expect(series.nodes.groups.find((g) => g.key === `${UNMANAGED_NODEPOOL}/on-demand`)!.values[0]).toBe(SYSTEM_NODES);
  });

  it('adds up to the fleet price the what-if and the cost figures state: at the start and at the end', () => {
    expect(result.disruptions.some((d) => d.reason === 'Empty')).toBe(true);
    expect(total(0)).toBeCloseTo(result.whatIf!.hourlyUSDAtStart, 4);
    expect(total(series.cost.times.length - 1)).toBeCloseTo(result.cost.finalHourlyUSD, 4);
  });

  it('says in its caption that the unmanaged nodes are included', () => {
    const note = /<p class="note" id="cost-note">([^<]*)<\/p>/.exec(html)?.[1];
    expect(note).toContain('each node no NodeClaim owns');
    expect(note).toContain(UNMANAGED_NODEPOOL);
  });
});
