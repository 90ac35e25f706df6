import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readManifestDocuments } from '../../shared/core/api/manifest.js';
import {
  DEFAULT_DURATION_SECONDS,
  defaultScenarioSpec,
  isoTimestampSchema,
  parseScenarioDocument,
  scenarioSchema,
  type ParsedScenario,
  type ScenarioEvent,
} from '../../shared/sim/scenario.js';
import type { ValidationIssue } from '../../shared/core/errors.js';
import { edit, expectIssue } from '../core/api/validation-expectations.js';

const NOW = Date.UTC(2026, 0, 15, 10, 30, 42, 123);

/** An example Scenario using every field (docs/contracts.md#scenario-document); line numbers matter to the tests below. */
const DESIGN_EXAMPLE = `apiVersion: skiff.dev/v1alpha1
kind: Scenario
metadata: {name: burst}
spec:
  start: "2026-03-02T08:00:00Z"   # virtual clock start (UTC)
  duration: 6h                     # how long to simulate
  region: us-west-2
  settings:                        # optional controller settings, Karpenter's names
    batchIdleDuration: 1s
    batchMaxDuration: 10s
    vmMemoryOverheadPercent: 0.075
    featureGates: {SpotToSpotConsolidation: false}
  spotPrices:                      # optional: pin simulated spot prices (USD/h); others are derived
    - {instanceType: m5.large, zone: us-west-2a, price: 0.035}
  nodes:                           # optional: nodes that exist at the start (already registered)
    - {name: n1, instanceType: m5.xlarge, zone: us-west-2a, capacityType: on-demand,
       nodePool: general, labels: {}, taints: [], annotations: {}, createdAt: "-2h"}
  events:                          # optional timeline; \`at\` is an offset from start
    - at: 30m
      scale: {kind: Deployment, namespace: default, name: web, replicas: 40}   # or StatefulSet
    - at: 3h
      apply:
        apiVersion: karpenter.sh/v1
        kind: NodePool
        metadata: {name: general}
        spec:
          template:
            spec:
              nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
              requirements:
                - {key: karpenter.sh/capacity-type, operator: In, values: [spot]}
    - at: 4h
      delete: {kind: Deployment, namespace: default, name: web}              # any kind, or kind: Node
    - at: 1h
      insufficientCapacity: {instanceType: m5.large, zone: us-west-2a, capacityType: spot, for: 30m,
                             errorCode: InsufficientInstanceCapacity}
    - at: 2h
      spotInterruption: {nodeSelector: {karpenter.sh/capacity-type: spot}, count: 1}
    - at: 2h
      rebalanceRecommendation: {nodeSelector: {karpenter.sh/capacity-type: spot}, count: 1}
    - at: 2h
      instanceStateChange: {nodeSelector: {karpenter.sh/nodepool: general}, count: 1, state: terminated}  # or instanceId for a foreign one
    - at: 2h
      scheduledMaintenance: {nodeSelector: {karpenter.sh/nodepool: general}, count: 1}                 # AWS Health scheduled change
    - at: 2h
      nodeCondition: {nodeSelector: {karpenter.sh/nodepool: general}, count: 1, ready: false}
    - at: 2h
      annotate: {kind: Node, nodeSelector: {karpenter.sh/nodepool: general}, annotations: {karpenter.sh/do-not-disrupt: "true"}}
    - at: 2h
      taint: {nodeSelector: {karpenter.sh/nodepool: general}, taints: [{key: example.com/maint, effect: NoSchedule}]}
  faults:                          # optional, seeded by --seed
    duplicateDelivery: 0.5         # chance each queue message is delivered twice
    concurrentInvocations: 2       # overlapping invocations of each handler
    crashAfterSideEffect: 0.1      # chance a handler dies right after any AWS/Kubernetes side effect
    ec2Throttle: 0.2               # chance an EC2 call fails with RequestLimitExceeded
`;

/** Parses a one-document scenario text. */
function parse(text: string, now = NOW): { scenario?: ParsedScenario; issues: readonly ValidationIssue[] } {
  const { documents, issues } = readManifestDocuments(text, 'scenario.yaml');
  expect(issues).toEqual([]);
  const [doc] = documents;
  if (!doc) throw new Error('no document');
  return parseScenarioDocument(doc, { now });
}

/** Parses and expects success. */
function ok(text: string, now = NOW): ParsedScenario {
  const result = parse(text, now);
  expect(result.issues).toEqual([]);
  if (!result.scenario) throw new Error('no scenario');
  return result.scenario;
}

const MINIMAL = 'apiVersion: skiff.dev/v1alpha1\nkind: Scenario\nmetadata: {name: m}\n';

describe('scenario', () => {
  describe('defaultScenarioSpec', () => {
    it('starts at the current minute and runs 1h in us-west-2 with default settings and no events', () => {
      expect(defaultScenarioSpec(NOW)).toEqual({
        startMs: Date.UTC(2026, 0, 15, 10, 30, 0, 0),
        durationSeconds: 3600,
        region: 'us-west-2',
        settings: { batchIdleDurationSeconds: 1, batchMaxDurationSeconds: 10, vmMemoryOverheadPercent: 0.075, featureGates: { SpotToSpotConsolidation: false } },
        spotPrices: [],
        prices: [],
        unavailableOfferings: [],
        nodes: [],
        events: [],
        faults: { duplicateDelivery: 0, concurrentInvocations: 1, crashAfterSideEffect: 0, ec2Throttle: 0, dynamodbThrottle: 0, apiServerErrors: 0 },
      });
    });

    it('always starts on a whole minute at or before now', () => {
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 4_102_444_800_000 }), (now) => {
          const { startMs } = defaultScenarioSpec(now);
          expect(startMs % 60_000).toBe(0);
          expect(now - startMs).toBeGreaterThanOrEqual(0);
          expect(now - startMs).toBeLessThan(60_000);
        }),
      );
    });
  });

  describe('parseScenarioDocument', () => {
    it('reads every field of the example Scenario', () => {
      const { name, spec, source } = ok(DESIGN_EXAMPLE);
      expect(name).toBe('burst');
      expect(source).toEqual({ file: 'scenario.yaml', line: 1 });
      expect(spec.startMs).toBe(Date.UTC(2026, 2, 2, 8, 0, 0));
      expect(spec.durationSeconds).toBe(6 * 3600);
      expect(spec.region).toBe('us-west-2');
      expect(spec.settings).toEqual({ batchIdleDurationSeconds: 1, batchMaxDurationSeconds: 10, vmMemoryOverheadPercent: 0.075, featureGates: { SpotToSpotConsolidation: false } });
      expect(spec.spotPrices).toEqual([{ instanceType: 'm5.large', zone: 'us-west-2a', price: 0.035 }]);
      expect(spec.nodes).toEqual([
        { name: 'n1', instanceType: 'm5.xlarge', zone: 'us-west-2a', capacityType: 'on-demand', nodePool: 'general', labels: {}, taints: [], annotations: {}, createdAtSeconds: -7200 },
      ]);
      expect(spec.faults).toEqual({ duplicateDelivery: 0.5, concurrentInvocations: 2, crashAfterSideEffect: 0.1, ec2Throttle: 0.2, dynamodbThrottle: 0, apiServerErrors: 0 });
    });

    it('sorts events stably by time and keeps their written index and line', () => {
      const { spec } = ok(DESIGN_EXAMPLE);
      expect(spec.events.map((e) => [e.type, e.atSeconds, e.index, e.source.line])).toEqual([
        ['scale', 1800, 0, 19],
        ['insufficientCapacity', 3600, 3, 34],
        ['spotInterruption', 7200, 4, 37],
        ['rebalanceRecommendation', 7200, 5, 39],
        ['instanceStateChange', 7200, 6, 41],
        ['scheduledMaintenance', 7200, 7, 43],
        ['nodeCondition', 7200, 8, 45],
        ['annotate', 7200, 9, 47],
        ['taint', 7200, 10, 49],
        ['apply', 10800, 1, 21],
        ['delete', 14400, 2, 32],
      ]);
    });

    it('resolves each event payload', () => {
      const byType = new Map(ok(DESIGN_EXAMPLE).spec.events.map((e) => [e.type, e] as const));
      const get = <T extends ScenarioEvent['type']>(type: T) => byType.get(type) as Extract<ScenarioEvent, { type: T }>;
      expect(get('scale').scale).toEqual({ kind: 'Deployment', namespace: 'default', name: 'web', replicas: 40 });
      const apply = get('apply').apply;
      expect(apply.kind).toBe('NodePool');
      expect(apply.source).toEqual({ file: 'scenario.yaml', line: 22 });
      if (apply.kind === 'NodePool') expect(apply.object.spec.disruption.budgets).toEqual([{ nodes: '10%' }]);
      expect(get('delete').delete).toEqual({ kind: 'Deployment', namespace: 'default', name: 'web' });
      expect(get('insufficientCapacity').insufficientCapacity).toEqual({ instanceType: 'm5.large', zone: 'us-west-2a', capacityType: 'spot', forSeconds: 1800, errorCode: 'InsufficientInstanceCapacity' });
      expect(get('spotInterruption').spotInterruption).toEqual({ nodeSelector: { 'karpenter.sh/capacity-type': 'spot' }, count: 1 });
      expect(get('instanceStateChange').instanceStateChange).toEqual({ nodeSelector: { 'karpenter.sh/nodepool': 'general' }, count: 1, state: 'terminated' });
      expect(get('nodeCondition').nodeCondition).toEqual({ nodeSelector: { 'karpenter.sh/nodepool': 'general' }, count: 1, ready: false });
      expect(get('annotate').annotate).toEqual({ kind: 'Node', nodeSelector: { 'karpenter.sh/nodepool': 'general' }, annotations: { 'karpenter.sh/do-not-disrupt': 'true' } });
      expect(get('taint').taint).toEqual({ nodeSelector: { 'karpenter.sh/nodepool': 'general' }, taints: [{ key: 'example.com/maint', effect: 'NoSchedule' }] });
    });

    it('applies defaults to a minimal Scenario, starting at the current minute', () => {
      const { spec } = ok(MINIMAL);
      expect(spec).toEqual(defaultScenarioSpec(NOW));
      expect(spec.durationSeconds).toBe(DEFAULT_DURATION_SECONDS);
    });

    it('applies event defaults: namespace, count, error code, a foreign instance', () => {
      const { spec } = ok(`${MINIMAL}spec:
  events:
    - {at: 0s, scale: {kind: StatefulSet, name: db, replicas: 0}}
    - {at: 1m, spotInterruption: {}}
    - {at: 2m, insufficientCapacity: {instanceType: c5.large, zone: us-west-2b, capacityType: on-demand, for: 5m}}
    - {at: 3m, instanceStateChange: {instanceId: i-0abc, state: stopped}}
    - {at: 4m, delete: {kind: Node, name: n1}}
    - {at: 5m, delete: {kind: Pod, name: p}}
    - {at: 6m, annotate: {kind: Pod, selector: {app: web}, annotations: {karpenter.sh/do-not-disrupt: "true"}}}
`);
      const payloads = spec.events.map((e) => (e as unknown as Record<string, unknown>)[e.type]);
      expect(payloads).toEqual([
        { kind: 'StatefulSet', namespace: 'default', name: 'db', replicas: 0 },
        { nodeSelector: {}, count: 1 },
        { instanceType: 'c5.large', zone: 'us-west-2b', capacityType: 'on-demand', forSeconds: 300, errorCode: 'InsufficientInstanceCapacity' },
        { nodeSelector: {}, count: 1, state: 'stopped', instanceId: 'i-0abc' },
        { kind: 'Node', name: 'n1' },
        { kind: 'Pod', namespace: 'default', name: 'p' },
        { kind: 'Pod', namespace: 'default', selector: { app: 'web' }, annotations: { 'karpenter.sh/do-not-disrupt': 'true' } },
      ]);
    });

    it('keeps events at the same time in written order', () => {
      fc.assert(
        fc.property(fc.array(fc.nat(5), { minLength: 1, maxLength: 12 }), (minutes) => {
          const events = minutes.map((m, i) => `    - {at: ${m}m, scale: {kind: Deployment, name: d${i}, replicas: ${i}}}`).join('\n');
          const { spec } = ok(`${MINIMAL}spec:\n  events:\n${events}\n`);
          const order = spec.events.map((e) => e.index);
          const expected = minutes.map((m, i) => ({ m, i })).sort((a, b) => a.m - b.m || a.i - b.i).map(({ i }) => i);
          expect(order).toEqual(expected);
        }),
      );
    });

    it('names the path inside an applied manifest, with its line', () => {
      const text = edit(DESIGN_EXAMPLE, { '{key: karpenter.sh/capacity-type, operator: In, values: [spot]}': '{key: karpenter.sh/capacity-type, operator: Within, values: [spot]}' });
      const { issues } = parse(text);
      expectIssue(issues, { path: 'spec.events[1].apply.spec.template.spec.requirements[0].operator', line: 31 });
    });

    it('rejects an applied manifest of an unknown kind at its kind', () => {
      const text = edit(DESIGN_EXAMPLE, { 'kind: NodePool\n        metadata: {name: general}': 'kind: Service\n        metadata: {name: general}' });
      expectIssue(parse(text).issues, { path: 'spec.events[1].apply.kind', line: 24, message: /unknown kind "Service"/ });
    });

    it('rejects an event with two actions at the second one', () => {
      const text = edit(DESIGN_EXAMPLE, { '      delete: {kind: Deployment, namespace: default, name: web}': '      delete: {kind: Deployment, namespace: default, name: web}\n      taint: {taints: [{key: a, effect: NoSchedule}]}' });
      expectIssue(parse(text).issues, { path: 'spec.events[2].taint', line: 34, message: /exactly one action.*delete/ });
    });

    it('rejects an event with no action, and a misspelt one with a suggestion', () => {
      const { issues } = parse(`${MINIMAL}spec:\n  events:\n    - at: 1m\n    - at: 2m\n      sclae: {kind: Deployment, name: web, replicas: 1}\n`);
      expectIssue(issues, { path: 'spec.events[0]', line: 6, message: /exactly one of: scale, apply/ });
      expectIssue(issues, { path: 'spec.events[1].sclae', line: 8, message: /did you mean "scale"/ });
    });

    it('rejects an event after the end of the scenario', () => {
      expectIssue(parse(edit(DESIGN_EXAMPLE, { 'duration: 6h': 'duration: 3h' })).issues, { path: 'spec.events[2].at', line: 32, message: /after the end/ });
    });

    it('rejects a starting node created after the start', () => {
      expectIssue(parse(edit(DESIGN_EXAMPLE, { 'createdAt: "-2h"': 'createdAt: "2h"' })).issues, { path: 'spec.nodes[0].createdAt', line: 17, message: /negative offset/ });
    });

    it('rejects a zone outside the region', () => {
      expectIssue(parse(edit(DESIGN_EXAMPLE, { 'zone: us-west-2a, price': 'zone: eu-west-1a, price' })).issues, { path: 'spec.spotPrices[0].zone', line: 14, message: /not in region us-west-2/ });
    });

    it('rejects a zone the region does not have, and an instance type not in the catalogue', () => {
      expectIssue(parse(edit(DESIGN_EXAMPLE, { 'zone: us-west-2a, price': 'zone: us-west-2z, price' })).issues, { path: 'spec.spotPrices[0].zone', line: 14, message: /its zones: us-west-2a/ });
      expectIssue(parse(edit(DESIGN_EXAMPLE, { 'instanceType: m5.large, zone: us-west-2a, price': 'instanceType: m5.lage, zone: us-west-2a, price' })).issues, {
        path: 'spec.spotPrices[0].instanceType',
        line: 14,
        message: /unknown instance type "m5.lage"/,
      });
    });

    it.each([
      ['vmMemoryOverheadPercent: 0.075', 'vmMemoryOverheadPercent: 7.5', 'spec.settings.vmMemoryOverheadPercent', 11],
      ['batchMaxDuration: 10s', 'batchMaxDuration: 500ms', 'spec.settings.batchMaxDuration', 10],
      ['batchIdleDuration: 1s', 'batchIdleDuration: 1', 'spec.settings.batchIdleDuration', 9],
      ['{SpotToSpotConsolidation: false}', '{SpotToSpotConsolidation: false, NodeRepair: true}', 'spec.settings.featureGates.NodeRepair', 12],
      ['duplicateDelivery: 0.5', 'duplicateDelivery: 1.5', 'spec.faults.duplicateDelivery', 52],
      ['concurrentInvocations: 2', 'concurrentInvocations: 0', 'spec.faults.concurrentInvocations', 53],
      ['concurrentInvocations: 2', 'concurrentInvocations: 1000', 'spec.faults.concurrentInvocations', 53],
      ['name: web, replicas: 40', 'name: web, replicas: 1000000000000', 'spec.events[0].scale.replicas', 20],
      ['ec2Throttle: 0.2', 'ec2Throttle: -0.1', 'spec.faults.ec2Throttle', 55],
      ['ec2Throttle: 0.2', 'ec2Throttle: 1', 'spec.faults.ec2Throttle', 55],
      ['crashAfterSideEffect: 0.1', 'crashAfterSideEffect: 1', 'spec.faults.crashAfterSideEffect', 54],
      ['start: "2026-03-02T08:00:00Z"', 'start: "2026-02-30T08:00:00Z"', 'spec.start', 5],
      ['start: "2026-03-02T08:00:00Z"', 'start: "next monday"', 'spec.start', 5],
      ['duration: 6h', 'duration: 0s', 'spec.duration', 6],
      ['region: us-west-2', 'region: mars', 'spec.region', 7],
      ['capacityType: on-demand,', 'capacityType: cheap,', 'spec.nodes[0].capacityType', 16],
      ['price: 0.035', 'price: -1', 'spec.spotPrices[0].price', 14],
      ['name: web, replicas: 40', 'name: web, replicas: -1', 'spec.events[0].scale.replicas', 20],
      ['kind: Deployment, namespace: default, name: web, replicas: 40', 'kind: DaemonSet, namespace: default, name: web, replicas: 40', 'spec.events[0].scale.kind', 20],
      ['errorCode: InsufficientInstanceCapacity', 'errorCode: Boom', 'spec.events[3].insufficientCapacity.errorCode', 36],
      ['capacityType: spot, for: 30m', 'capacityType: spot, for: 0s', 'spec.events[3].insufficientCapacity.for', 35],
      ['count: 1, state: terminated', 'count: 1, state: exploded', 'spec.events[6].instanceStateChange.state', 42],
      ['- at: 30m', '- at: -30m', 'spec.events[0].at', 19],
    ])('rejects %s → %s at %s, line %d', (from, to, path, line) => {
      expectIssue(parse(edit(DESIGN_EXAMPLE, { [from]: to })).issues, { path, line });
    });

    it('rejects a namespace on a cluster-scoped delete and instanceId with a nodeSelector', () => {
      const { issues } = parse(`${MINIMAL}spec:
  events:
    - {at: 1m, delete: {kind: NodePool, namespace: default, name: general}}
    - {at: 2m, instanceStateChange: {instanceId: i-0abc, nodeSelector: {a: b}, state: terminated}}
`);
      expectIssue(issues, { path: 'spec.events[0].delete.namespace', line: 6, message: /cluster-scoped/ });
      expectIssue(issues, { path: 'spec.events[1].instanceStateChange.instanceId', line: 7, message: /not both/ });
    });

    it('rejects an annotate event naming its target and selecting it too, and a taint event with one key and effect twice', () => {
      const { issues } = parse(`${MINIMAL}spec:
  events:
    - {at: 1m, annotate: {kind: Pod, name: web-0, selector: {app: web}, annotations: {a: b}}}
    - {at: 2m, taint: {taints: [{key: k, value: a, effect: NoSchedule}, {key: k, value: b, effect: NoSchedule}]}}
`);
      expectIssue(issues, { path: 'spec.events[0].annotate.name', line: 6, message: /not both/ });
      expectIssue(issues, { path: 'spec.events[1].taint.taints[1]', line: 7, message: /duplicate taint k with effect NoSchedule/ });
    });

    it('rejects duplicate node names', () => {
      const text = edit(DESIGN_EXAMPLE, { '  events:  ': '    - {name: n1, instanceType: m5.large, zone: us-west-2b, capacityType: spot}\n  events:  ' });
      expectIssue(parse(text).issues, { path: 'spec.nodes[1].name', line: 18, message: /duplicate node name n1/ });
    });

    it('rejects a wrong apiVersion and unknown spec fields', () => {
      const { issues } = parse('apiVersion: skiff.dev/v1\nkind: Scenario\nmetadata: {name: m}\nspec:\n  duraton: 1h\n');
      expectIssue(issues, { path: 'apiVersion', line: 1 });
      expectIssue(issues, { path: 'spec.duraton', line: 5, message: /did you mean "duration"/ });
    });
  });

  describe('isoTimestampSchema', () => {
    it('reads UTC and offset times as epoch ms', () => {
      expect(isoTimestampSchema.parse('2026-03-02T08:00:00Z')).toBe(Date.UTC(2026, 2, 2, 8));
      expect(isoTimestampSchema.parse('2026-03-02T10:00:00+02:00')).toBe(Date.UTC(2026, 2, 2, 8));
      expect(isoTimestampSchema.parse('2026-03-02T08:00Z')).toBe(Date.UTC(2026, 2, 2, 8));
    });

    it('round-trips any ISO string produced by Date#toISOString', () => {
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 4_102_444_800_000 }), (ms) => {
          expect(isoTimestampSchema.parse(new Date(ms).toISOString())).toBe(ms);
        }),
      );
    });

    it('rejects a time without a zone', () => {
      expect(isoTimestampSchema.safeParse('2026-03-02T08:00:00').success).toBe(false);
    });
  });

  describe('scenarioSchema', () => {
    it('is usable on a plain object', () => {
      expect(scenarioSchema.parse({ apiVersion: 'skiff.dev/v1alpha1', kind: 'Scenario', metadata: { name: 'x' } }).spec.duration).toBe(3600);
    });
  });
});
