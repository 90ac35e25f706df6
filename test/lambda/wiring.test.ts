// The controller Lambdas' composition root checks its environment before building anything, offline, and wires the
// decision publisher (EventBridge, mocked here), the follow-up passes (SQS, mocked here), the price refresher and the
// node-triggered lifecycle pass.
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { EventBridgeDecisionPublisher } from '../../shared/adapters/aws/decision-events.js';
import { SqsFollowUpPasses } from '../../shared/adapters/aws/sqs-follow-up-passes.js';
import type { MetricDataPoint } from '../../shared/core/metrics.js';
import { publishDecisions } from '../../shared/lambda/decisions.js';
import type { Log } from '../../shared/lambda/log.js';
import { ConfigurationError, CONTROLLER_ENV, REQUIRED_CONTROLLER_ENV, requireEnvAll } from '../../shared/lambda/env.js';
import { ec2LaunchTemplates } from '../../shared/lambda/launch-wiring.js';
import * as wiring from '../../shared/lambda/wiring.js';
import { controllerSettingsFromEnv, lifecycleDepsFromEnv } from '../../shared/lambda/wiring.js';

// The launching functions' builders as their index.ts binds them (launch templates from launch-wiring.ts).
const provisionerDepsFromEnv = (env: wiring.Env) => wiring.provisionerDepsFromEnv(env, ec2LaunchTemplates);
const disruptionDepsFromEnv = (env: wiring.Env) => wiring.disruptionDepsFromEnv(env, ec2LaunchTemplates);
const interruptionDepsFromEnv = (env: wiring.Env) => wiring.interruptionDepsFromEnv(env, ec2LaunchTemplates);

const ENV = {
  [CONTROLLER_ENV.cluster]: 'prod',
  [CONTROLLER_ENV.region]: 'eu-west-1',
  [CONTROLLER_ENV.tableName]: 'skiff-prod',
  [CONTROLLER_ENV.clusterEndpoint]: 'https://ABCDEF.gr7.eu-west-1.eks.amazonaws.com',
  [CONTROLLER_ENV.clusterCertificateAuthority]: 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t',
  [CONTROLLER_ENV.kubernetesVersion]: '1.31',
};

function configurationError(f: () => unknown): ConfigurationError {
  try {
    f();
  } catch (e) {
    if (e instanceof ConfigurationError) return e;
    throw e;
  }
  throw new Error('expected a ConfigurationError');
}

describe('requireEnvAll', () => {
  it('returns every value, trimmed, when all are set', () => {
    expect(requireEnvAll({ A: ' a ', B: 'b' }, ['A', 'B'])).toEqual({ A: 'a', B: 'b' });
  });

  it('names every missing or empty variable in one error', () => {
    const error = configurationError(() => requireEnvAll({ A: 'a', B: '  ' }, ['A', 'B', 'C']));
    expect(error.variables).toEqual(['B', 'C']);
    expect(error.variable).toBe('B');
    expect(error.message).toBe('environment variables B, C are not set');
  });
});

describe('controllerSettingsFromEnv', () => {
  it('reads the settings when every required variable is set', () => {
    expect(controllerSettingsFromEnv({ ...ENV, [CONTROLLER_ENV.serviceCidr]: '10.100.0.0/16', [CONTROLLER_ENV.spotToSpotConsolidation]: 'true' })).toEqual({
      cluster: 'prod',
      region: 'eu-west-1',
      tableName: 'skiff-prod',
      endpoint: ENV[CONTROLLER_ENV.clusterEndpoint],
      certificateAuthority: ENV[CONTROLLER_ENV.clusterCertificateAuthority],
      kubernetesVersion: '1.31',
      serviceCidr: '10.100.0.0/16',
      spotToSpotConsolidation: true,
    });
  });

  it('defaults spot-to-spot consolidation to off and leaves the service CIDR out', () => {
    const settings = controllerSettingsFromEnv(ENV);
    expect(settings.spotToSpotConsolidation).toBe(false);
    expect(settings).not.toHaveProperty('serviceCidr');
  });

  it('names every missing required variable when the environment is empty', () => {
    const error = configurationError(() => controllerSettingsFromEnv({}));
    expect(error.variables).toEqual([...REQUIRED_CONTROLLER_ENV]);
    for (const name of REQUIRED_CONTROLLER_ENV) expect(error.message).toContain(name);
  });

  it.each(REQUIRED_CONTROLLER_ENV)('names %s alone when only it is missing', (name) => {
    const env: Record<string, string> = { ...ENV };
    delete env[name];
    const error = configurationError(() => controllerSettingsFromEnv(env));
    expect(error.variables).toEqual([name]);
    expect(error.message).toBe(`environment variable ${name} is not set`);
  });

  it('refuses an endpoint that is not https', () => {
    const error = configurationError(() => controllerSettingsFromEnv({ ...ENV, [CONTROLLER_ENV.clusterEndpoint]: 'http://10.0.0.1' }));
    expect(error.variable).toBe(CONTROLLER_ENV.clusterEndpoint);
  });

  it('refuses a Kubernetes version without major.minor', () => {
    expect(configurationError(() => controllerSettingsFromEnv({ ...ENV, [CONTROLLER_ENV.kubernetesVersion]: 'latest' })).variable).toBe(CONTROLLER_ENV.kubernetesVersion);
  });

  it('refuses a spot-to-spot flag that is neither true nor false', () => {
    expect(configurationError(() => controllerSettingsFromEnv({ ...ENV, [CONTROLLER_ENV.spotToSpotConsolidation]: 'yes' })).variable).toBe(CONTROLLER_ENV.spotToSpotConsolidation);
  });
});

describe('per-function builders', () => {
  const builders = { provisionerDepsFromEnv, lifecycleDepsFromEnv, disruptionDepsFromEnv, interruptionDepsFromEnv };

  it.each(Object.entries(builders))('%s refuses an incomplete environment before building anything', (_, build) => {
    const error = configurationError(() => build({ [CONTROLLER_ENV.cluster]: 'prod' }));
    expect(error.variables).not.toContain(CONTROLLER_ENV.cluster);
    expect(error.variables).toContain(CONTROLLER_ENV.tableName);
  });

  it.each(Object.entries(builders))('%s builds its dependencies without calling AWS', (_, build) => {
    const deps = build(ENV) as unknown as Record<string, unknown>;
    expect(typeof deps.log).toBe('object');
    expect(Object.values(deps).some((v) => typeof v === 'function')).toBe(true);
  });

  it('gives the periodic controllers their lease', () => {
    expect(lifecycleDepsFromEnv(ENV).lease.leases).toBeDefined();
    expect(disruptionDepsFromEnv(ENV).lease.leases).toBeDefined();
  });

  it('gives the lifecycle function the price refresher and a pod startup tracker, and the provisioner a lifecycle pass', () => {
    const lifecycle = lifecycleDepsFromEnv(ENV);
    expect(typeof lifecycle.prices.refresh).toBe('function');
    expect(typeof lifecycle.prices.refreshIfStale).toBe('function');
    expect(lifecycle.podStartup.tracked).toBe(0);
    expect(typeof provisionerDepsFromEnv(ENV).lifecycle).toBe('function');
  });
});

describe('decision publishing', () => {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const events = mockClient(EventBridgeClient);
  const BUS = { ...ENV, [CONTROLLER_ENV.decisionBusName]: 'skiff-decisions-prod' };
  const warnings: unknown[] = [];
  const log: Log = { debug() {}, info() {}, warn: (m, a) => void warnings.push([m, a]), error() {} };
  beforeEach(() => {
    events.reset();
    warnings.length = 0;
  });
  afterAll(() => events.restore());

  it('reads the bus name when it is set', () => {
    expect(controllerSettingsFromEnv(BUS).decisionBusName).toBe('skiff-decisions-prod');
  });

  it('wires no publisher without a bus name (decisions are only logged)', () => {
    expect(provisionerDepsFromEnv(ENV).decisions).toBeUndefined();
    expect(disruptionDepsFromEnv(ENV).decisions).toBeUndefined();
    expect(interruptionDepsFromEnv(ENV).decisions).toBeUndefined();
  });

  it.each([
    ['provisionerDepsFromEnv', provisionerDepsFromEnv],
    ['disruptionDepsFromEnv', disruptionDepsFromEnv],
    ['interruptionDepsFromEnv', interruptionDepsFromEnv],
  ] as const)('%s puts decisions on the configured bus with source skiff and the cluster in the detail', async (_, build) => {
    events.on(PutEventsCommand).resolves({ FailedEntryCount: 0, Entries: [{ EventId: 'e1' }] });
    const { decisions } = build(BUS);
    expect(decisions).toBeInstanceOf(EventBridgeDecisionPublisher);
    await publishDecisions(decisions, [{ type: 'NodeClaimLaunched', nodeClaim: 'general-bcdfg', nodePool: 'general' }], log);
    const [entry] = events.commandCalls(PutEventsCommand)[0]?.args[0].input.Entries ?? [];
    expect(entry).toMatchObject({ EventBusName: 'skiff-decisions-prod', Source: 'skiff', DetailType: 'NodeClaimLaunched' });
    expect(JSON.parse(entry?.Detail ?? '{}')).toEqual({ cluster: 'prod', nodeClaim: 'general-bcdfg', nodePool: 'general' });
    expect(warnings).toEqual([]);
  });

  it('never fails the caller when PutEvents fails: the failure is logged and counted', async () => {
    events.on(PutEventsCommand).rejects(Object.assign(new Error('User is not authorized to perform: events:PutEvents'), { name: 'AccessDeniedException', $fault: 'client' }));
    const { decisions } = provisionerDepsFromEnv(BUS);
    const points: MetricDataPoint[] = [];
    await expect(publishDecisions(decisions, [{ type: 'NodeClaimLaunched', nodeClaim: 'general-bcdfg' }], log, { publish: (p) => void points.push(...p) })).resolves.toBeUndefined();
    expect(warnings).toEqual([['decisions not published', expect.objectContaining({ decisions: 1, error: expect.stringContaining('PutEvents') })]]);
    expect(points.map((p) => [p.name, p.value])).toEqual([['skiff_decisions_unpublished_total', 1]]);
  });
});

describe('follow-up passes', () => {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const sqs = mockClient(SQSClient);
  const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/123456789012/skiff-prod-FollowUps.fifo';
  const WITH_QUEUE = { ...ENV, [CONTROLLER_ENV.disruptionFollowUpQueueUrl]: QUEUE };
  beforeEach(() => sqs.reset());
  afterAll(() => sqs.restore());

  it('wires none without the queue URL: passes run on the schedule only', () => {
    expect(disruptionDepsFromEnv(ENV).followUps).toBeUndefined();
    expect(controllerSettingsFromEnv(ENV)).not.toHaveProperty('disruptionFollowUpQueueUrl');
  });

  it('asks the configured FIFO queue for the pass, on the wall clock, in the one group, deduplicated by the 20 s slot', async () => {
    sqs.on(SendMessageBatchCommand).resolves({ Failed: [] });
    const { followUps } = disruptionDepsFromEnv(WITH_QUEUE);
    expect(followUps?.passes).toBeInstanceOf(SqsFollowUpPasses);
    const before = Date.now();
    expect(followUps!.clock.now()).toBeGreaterThanOrEqual(before);
    await followUps!.passes.request(followUps!.clock.now() + 20_000);
    const calls = sqs.commandCalls(SendMessageBatchCommand);
    expect(calls).toHaveLength(1);
    const { QueueUrl, Entries = [] } = calls[0]!.args[0].input;
    expect(QueueUrl).toBe(QUEUE);
    expect(Entries).toHaveLength(1);
    expect(Entries[0]).toMatchObject({ MessageGroupId: 'disruption' });
    expect(Entries[0]).not.toHaveProperty('DelaySeconds'); // SQS refuses a per-message delay on a FIFO queue
    const slot = Number(Entries[0]!.MessageDeduplicationId);
    expect(slot % 20_000).toBe(0);
    expect(slot).toBeGreaterThanOrEqual(before + 20_000);
    expect(slot).toBeLessThan(Date.now() + 40_000);
  });

  it('refuses a queue URL that is not a FIFO queue’s', () => {
    const error = configurationError(() => disruptionDepsFromEnv({ ...ENV, [CONTROLLER_ENV.disruptionFollowUpQueueUrl]: 'https://sqs.eu-west-1.amazonaws.com/123456789012/standard' }));
    expect(error.variable).toBe(CONTROLLER_ENV.disruptionFollowUpQueueUrl);
  });

  it('reads the lifecycle follow-up queue apart from the disruption one, and refuses one that is not FIFO, naming its variable', () => {
    const LIFECYCLE = 'https://sqs.eu-west-1.amazonaws.com/123456789012/skiff-prod-LifecycleFollowUps.fifo';
    expect(controllerSettingsFromEnv({ ...ENV, [CONTROLLER_ENV.lifecycleFollowUpQueueUrl]: LIFECYCLE })).toMatchObject({ lifecycleFollowUpQueueUrl: LIFECYCLE });
    expect(controllerSettingsFromEnv({ ...ENV, [CONTROLLER_ENV.lifecycleFollowUpQueueUrl]: LIFECYCLE })).not.toHaveProperty('disruptionFollowUpQueueUrl');
    const error = configurationError(() => lifecycleDepsFromEnv({ ...ENV, [CONTROLLER_ENV.lifecycleFollowUpQueueUrl]: 'https://sqs.eu-west-1.amazonaws.com/123456789012/standard' }));
    expect(error.variable).toBe(CONTROLLER_ENV.lifecycleFollowUpQueueUrl);
  });
});
