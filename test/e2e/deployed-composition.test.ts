// The deployed composition end to end on one machine (issue 25): relay → webhook → SQS → Lambdas → EC2 and DynamoDB,
// every part speaking its real protocol, every function built by its production factory from the synthesised
// stack's environment. Each scenario is checked from outside: what EC2 received, what the table holds, what the API
// server holds, what the functions printed.
import { DynamoDBClient, ScanCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METRIC_NAMES } from '../../infra/metric-names.js';
import { eventually } from '../support/fake-kube-apiserver.js';
import { startComposition, type Composition } from './support/composition.js';
import { THROTTLED_ATTEMPTS } from '../../shared/controllers/retry.js';

let c: Composition;

beforeAll(async () => {
  c = await startComposition();
});

afterAll(async () => {
  await c?.close();
});

/** NodeClaim items of the table (read with a plain client, as an operator would). */
async function tableNodeClaims(): Promise<Record<string, AttributeValue>[]> {
  const client = new DynamoDBClient({ region: 'us-west-2', endpoint: c.dynamoEndpoint, credentials: { accessKeyId: 'op', secretAccessKey: 'op' } });
  const { Items = [] } = await client.send(new ScanCommand({ TableName: c.deployment.tableName }));
  client.destroy();
  return Items.filter((i) => i.pk?.S === 'CLUSTER#e2e' && String(i.sk?.S ?? '').startsWith('NODECLAIM#'));
}

/** The `karpenter.sh/nodeclaim` instance tag of a CreateFleet request. */
const fleetNodeClaim = (input: Record<string, unknown>) =>
  ((input.TagSpecifications as { ResourceType: string; Tags: { Key: string; Value: string }[] }[]).find((t) => t.ResourceType === 'instance')?.Tags ?? []).find((t) => t.Key === 'karpenter.sh/nodeclaim')?.Value;

/** Requests no running node has room for (an m5.large has under 2 vCPUs allocatable): the pod needs a launch. */
const NEEDS_A_NODE = { cpu: '1500m', memory: '1Gi' };
/** Successful CreateFleet calls so far. */
const launches = () => c.aws.calls.filter((call) => call.action === 'CreateFleet' && !call.error).length;
/**
 * Waits until the fleet is settled, so the next step starts from a fleet no move in flight is changing: every node runs
 * a pod (an empty node, left by a scale-in or a replacement, is consolidated first), every running instance has
 * registered its Node (a replacement launched for consolidation is not still joining, ready to take a displaced pod),
 * no node is being disrupted, and all of that holds unchanged for 3 s.
 */
const fleetSettled = async () => {
  const signature = () => {
    const registered = new Set(nodes().map((n) => String((n.spec as { providerID: string }).providerID)));
    for (const i of c.aws.ec2.instances.filter((i) => i.state === 'running')) expect(registered.has(`aws:///${i.zone}/${i.instanceId}`), `${i.instanceId} registered`).toBe(true);
    for (const n of nodes()) {
      const name = (n.metadata as { name: string }).name;
      expect(bound().some((p) => (p.spec as { nodeName: string }).nodeName === name), `${name} runs a pod`).toBe(true);
      expect(((n.spec as { taints?: { key: string }[] }).taints ?? []).map((t) => t.key), `${name} is not being disrupted`).not.toContain('karpenter.sh/disrupted');
    }
    return JSON.stringify([[...registered].sort(), bound().map((p) => `${(p.metadata as { name: string }).name}@${(p.spec as { nodeName: string }).nodeName}`).sort()]);
  };
  await eventually(async () => {
    const before = signature();
    await new Promise((r) => setTimeout(r, 3000));
    expect(signature()).toBe(before);
  }, 90_000);
};
const pods = () => [...c.api.objects.pods!.values()];
const bound = () => pods().filter((p) => (p.spec as { nodeName?: string }).nodeName);
const nodes = () => [...c.api.objects.nodes!.values()];
/**
 * A spot node whose instance still runs and that no disruption is taking: earlier scenarios interrupt and consolidate
 * nodes, and their Node objects linger a moment after the instance is gone.
 */
const runningSpotNode = () =>
  nodes().find((n) => {
    const instance = c.aws.ec2.instances.find((i) => `aws:///${i.zone}/${i.instanceId}` === (n.spec as { providerID: string }).providerID);
    const taints = ((n.spec as { taints?: { key: string }[] }).taints ?? []).map((t) => t.key);
    return instance?.capacityType === 'spot' && instance.state === 'running' && !taints.includes('karpenter.sh/disrupted');
  });

describe('the deployed composition', { timeout: 120_000 }, () => {
  it('launches nodes for a Deployment’s pending pods: CreateFleet as EC2 receives it, NodeClaims in the table, Nodes registered, pods bound', async () => {
    c.fakes.deployments.set('web', { name: 'web', namespace: 'default', replicas: 4, requests: { cpu: '500m', memory: '512Mi' } });
    await eventually(() => expect(bound()).toHaveLength(4), 60_000);
    const fleets = c.aws.calls.filter((call) => call.service === 'ec2' && call.action === 'CreateFleet' && !call.error);
    expect(fleets.length).toBeGreaterThan(0);
    const templates = new Set(c.aws.calls.filter((call) => call.action === 'CreateLaunchTemplate' && !call.error).map((call) => call.input.LaunchTemplateName));
    for (const f of fleets) {
      expect(f.input).toMatchObject({ Type: 'instant', TargetCapacitySpecification: { TotalTargetCapacity: 1 } });
      const configs = f.input.LaunchTemplateConfigs as { LaunchTemplateSpecification: { LaunchTemplateName: string }; Overrides: { SubnetId: string }[] }[];
      // launch templates Skiff created before, overrides in the discovered subnets, the instance tagged for the cluster
      for (const config of configs) {
        expect(templates.has(config.LaunchTemplateSpecification.LaunchTemplateName)).toBe(true);
        for (const o of config.Overrides) expect(o.SubnetId).toMatch(/^subnet-0e2e\d$/);
      }
      const tags = (f.input.TagSpecifications as { ResourceType: string; Tags: { Key: string; Value: string }[] }[]).find((t) => t.ResourceType === 'instance')!.Tags;
      expect(tags).toContainEqual({ Key: 'kubernetes.io/cluster/e2e', Value: 'owned' });
    }
    // one NodeClaim record per launch, under the name the instance was tagged with
    const launched = new Set(fleets.map((f) => fleetNodeClaim(f.input)));
    const items = await tableNodeClaims();
    expect(new Set(items.map((i) => String(i.sk!.S).slice('NODECLAIM#'.length)))).toEqual(launched);
    // every Node was registered by a launched instance's kubelet, with the NodePool label its user data carried
    // (a NodeClaim launched for pods that first-fit binding then put elsewhere may still be joining, or be consolidated)
    const instances = new Set(c.aws.ec2.instances.filter((i) => launched.has(i.tags['karpenter.sh/nodeclaim'])).map((i) => `aws:///${i.zone}/${i.instanceId}`));
    expect(nodes().length).toBeGreaterThan(0);
    expect(nodes().length).toBeLessThanOrEqual(launched.size);
    for (const n of nodes()) {
      expect(instances.has(String((n.spec as { providerID: string }).providerID))).toBe(true);
      expect((n.metadata as { labels: Record<string, string> }).labels['karpenter.sh/nodepool']).toBe('general');
      // registration finished: Skiff's lifecycle took Karpenter's unregistered taint off
      expect(((n.spec as { taints?: { key: string }[] }).taints ?? []).map((t) => t.key)).not.toContain('karpenter.sh/unregistered');
    }
    // each launch was announced on the stack's decision bus
    const bus = c.deployment.functions.Provisioner.env.SKIFF_DECISION_BUS_NAME;
    await eventually(() => {
      const announced = c.aws.events.filter((e) => e.bus === bus && e.event['detail-type'] === 'NodeClaimLaunched').map((e) => (e.event.detail as { nodeClaim: string }).nodeClaim);
      for (const name of launched) expect(announced).toContain(name);
    }, 30_000);
  });

  it('drains and replaces a spot node when its interruption warning arrives as an EventBridge event', async () => {
    // a pod no other node has room for, so its node's interruption needs a replacement
    await fleetSettled();
    try {
      c.fakes.deployments.set('batch', { name: 'batch', namespace: 'default', replicas: 1, requests: NEEDS_A_NODE });
      await eventually(() => expect(bound().filter((p) => (p.metadata as { labels: Record<string, string> }).labels.app === 'batch')).toHaveLength(1), 60_000);
      await fleetSettled();
      const nodeName = (bound().find((p) => (p.metadata as { labels: Record<string, string> }).labels.app === 'batch')!.spec as { nodeName: string }).nodeName;
      const providerId = String((c.api.get('nodes', nodeName)!.spec as { providerID: string }).providerID);
      const instanceId = providerId.split('/').pop()!;
      expect(c.aws.ec2.instances.find((i) => i.instanceId === instanceId)?.capacityType, 'spot is cheaper, so the pool launched spot').toBe('spot');
      const total = bound().length;
      const fleetsBefore = launches();
      await c.aws.interruptSpot(instanceId, 30_000);
      // the interruption queue received it through the stack's rule, and the interruption function acted on it
      await eventually(() => expect(c.invocations.some((i) => i.function === 'Interruption' && i.ok && JSON.stringify(i.result).includes('"acted":1'))).toBe(true), 30_000);
      // drained through the Eviction API: no pod is left on the node, every replica runs elsewhere, on a replacement
      await eventually(() => {
        expect(bound().filter((p) => (p.spec as { nodeName: string }).nodeName === nodeName)).toHaveLength(0);
        expect(bound()).toHaveLength(total);
      }, 60_000);
      expect(launches()).toBeGreaterThan(fleetsBefore);
      expect(c.api.requestsTo('POST', /\/pods\/batch-[^/]+\/eviction$/).length).toBeGreaterThan(0);
      await eventually(() => expect(c.aws.ec2.instances.find((i) => i.instanceId === instanceId)?.state).toBe('terminated'), 60_000);
    } finally {
      // scaled away even when an assertion failed, so the scale-in test that follows starts from its own fleet
      c.fakes.deployments.get('batch')!.replicas = 0;
    }
  });

  it('consolidates the fleet after a scale-in', async () => {
    c.fakes.deployments.get('web')!.replicas = 1;
    await eventually(() => {
      expect(bound()).toHaveLength(1);
      expect(nodes()).toHaveLength(1);
      expect(c.aws.ec2.instances.filter((i) => i.state === 'running')).toHaveLength(1);
    }, 90_000);
    expect(c.aws.calls.some((call) => call.action === 'TerminateInstances' && !call.error)).toBe(true);
    // passes with work in flight asked for follow-ups, which came back through the stack's FIFO follow-up queue (after
    // its 20 s delay) and ran passes of their own
    await eventually(() => {
      const followUps = c.invocations.filter((i) => i.function === 'Disruption' && i.ok && (i.records ?? []).some((r) => r.acknowledged && r.body.includes('"disruption-follow-up"')));
      expect(followUps.length).toBeGreaterThan(0);
      expect(followUps.every((i) => 'report' in (i.result as object) || 'backedOff' in (i.result as object))).toBe(true);
    }, 30_000);
    // the table keeps the deleted NodeClaims, marked deleted; one is live
    await eventually(async () => expect((await tableNodeClaims()).filter((i) => i.deletedAt === undefined)).toHaveLength(1), 30_000);
  });

  it('keeps delivering while the webhook secret rotates (Secrets Manager first, then the relay’s Secret)', async () => {
    const secrets = new SecretsManagerClient({ region: 'us-west-2' });
    await secrets.send(new PutSecretValueCommand({ SecretId: c.deployment.secretArn, SecretString: 'rotated-0123456789abcdef0123456789abcdef' }));
    c.writeRelaySecret('rotated-0123456789abcdef0123456789abcdef');
    secrets.destroy();
    const accepted = c.invocations.filter((i) => i.function === 'Webhook' && (i.result as { statusCode?: number })?.statusCode === 202).length;
    const reads = c.aws.calls.filter((call) => call.action === 'GetSecretValue').length;
    await fleetSettled();
    const fleets = launches();
    c.fakes.deployments.set('api', { name: 'api', namespace: 'default', replicas: 1, requests: NEEDS_A_NODE });
    await eventually(() => expect(bound().filter((p) => (p.metadata as { labels: Record<string, string> }).labels.app === 'api')).toHaveLength(1), 60_000);
    expect(launches()).toBeGreaterThan(fleets);
    // the webhook took the relay's batches signed with the new key, after reading the new value from Secrets Manager
    expect(c.invocations.filter((i) => i.function === 'Webhook' && (i.result as { statusCode?: number })?.statusCode === 202).length).toBeGreaterThan(accepted);
    expect(c.aws.calls.filter((call) => call.action === 'GetSecretValue').length).toBeGreaterThan(reads);
  });

  it.each(['relay', 'Webhook', 'Provisioner', 'Lifecycle'] as const)('loses nothing when the %s restarts', async (component) => {
    const name = `after-${component.toLowerCase()}`;
    await fleetSettled();
    await c.stop(component);
    c.fakes.deployments.set(name, { name, namespace: 'default', replicas: 1, requests: NEEDS_A_NODE });
    await new Promise((r) => setTimeout(r, 1500)); // the pod is created while the component is down
    await c.resume(component); // the relay: a new process; a function: a cold start
    // still pending now that the component is back? (a pass that an earlier event triggered may have launched for it
    // meanwhile: then its own event is not needed, and the relay does not report a bound pod)
    const pendingAtResume = bound().every((p) => (p.metadata as { labels: Record<string, string> }).labels.app !== name);
    await eventually(() => expect(bound().filter((p) => (p.metadata as { labels: Record<string, string> }).labels.app === name)).toHaveLength(1), 60_000);
    // the pod's event went relay → webhook → queue → provisioner, which acknowledged it
    const podName = (pods().find((p) => (p.metadata as { labels: Record<string, string> }).labels.app === name)!.metadata as { name: string }).name;
    if (pendingAtResume) await eventually(() => {
      const handled = c.invocations.filter((i) => i.function === 'Provisioner' && i.ok).flatMap((i) => i.records ?? []).filter((r) => r.acknowledged && (JSON.parse(r.body) as { name?: string }).name === podName);
      expect(handled.length).toBeGreaterThan(0);
    }, 30_000);
    // nothing reached a dead-letter queue
    for (const q of c.deployment.queues.filter((q) => q.logicalId.includes('DeadLetters'))) {
      const { Attributes } = await c.sqs.send(new GetQueueAttributesCommand({ QueueUrl: q.url, AttributeNames: ['ApproximateNumberOfMessages'] }));
      expect(Number(Attributes?.ApproximateNumberOfMessages ?? 0)).toBe(0);
    }
  });

  it('loses no interruption message while the interruption function is down: the queue keeps it until the function is back', async () => {
    await eventually(() => expect(runningSpotNode(), 'a running spot node to interrupt').toBeDefined(), 60_000);
    const spot = runningSpotNode();
    const nodeName = (spot!.metadata as { name: string }).name;
    const instanceId = String((spot!.spec as { providerID: string }).providerID).split('/').pop()!;
    const onNode = bound().filter((p) => (p.spec as { nodeName: string }).nodeName === nodeName).length;
    const total = bound().length;
    await c.stop('Interruption');
    await c.aws.interruptSpot(instanceId, 60_000);
    await eventually(() => expect(c.invocations.some((i) => i.function === 'Interruption' && !i.ok)).toBe(true), 20_000);
    await c.resume('Interruption');
    await eventually(() => {
      expect(bound().filter((p) => (p.spec as { nodeName: string }).nodeName === nodeName)).toHaveLength(0);
      expect(bound()).toHaveLength(total);
    }, 60_000);
    expect(onNode).toBeGreaterThan(0);
  });

  it('honours batchItemFailures: the record whose handling failed comes back, the handled one is deleted', async () => {
    // Not the node the scenario above interrupted: its Node object can outlive its instance for a moment.
    await eventually(() => expect(runningSpotNode(), 'a running spot node to interrupt').toBeDefined(), 60_000);
    const spot = runningSpotNode();
    const nodeName = (spot!.metadata as { name: string }).name;
    const instanceId = String((spot!.spec as { providerID: string }).providerID).split('/').pop()!;
    // the API server refuses the interruption's taint of the node (a 500) as many times as a pass tries a call
    // (`THROTTLED_ATTEMPTS`), so the message fails once and comes back
    c.api.failNext({ method: 'PATCH', path: `/api/v1/nodes/${nodeName}`, status: 500, reason: 'InternalError', times: THROTTLED_ATTEMPTS, match: (r) => JSON.stringify(r.body).includes('karpenter.sh/disrupted') });
    const stranger = 'i-0123456789abcdef0';
    c.hold('Interruption'); // both messages wait in the queue, so they arrive in one batch
    // A receive already waiting when the hold began (1 s long poll) returns what it takes to the queue; let it end.
    await new Promise((r) => setTimeout(r, 1500));
    await c.aws.emit('aws.ec2', 'EC2 Instance State-change Notification', { 'instance-id': stranger, state: 'stopping' }, [`arn:aws:ec2:us-west-2:111122223333:instance/${stranger}`]);
    await c.aws.interruptSpot(instanceId, 60_000);
    const queueUrl = c.deployment.eventSources.find((e) => e.function === 'Interruption')!.queueUrl;
    await eventually(async () => {
      const { Attributes } = await c.sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }));
      expect(Number(Attributes?.ApproximateNumberOfMessages)).toBe(2);
    }, 10_000);
    c.release('Interruption');
    const about = (id: string) => c.invocations.filter((i) => i.function === 'Interruption').flatMap((i) => i.records ?? []).filter((r) => r.body.includes(id));
    await eventually(() => expect(about(instanceId).map((r) => r.acknowledged)).toEqual([false, true]), 30_000);
    // one batch held both: one record reported failed, the other not
    const first = c.invocations.find((i) => i.function === 'Interruption' && (i.records ?? []).some((r) => r.body.includes(instanceId)))!;
    expect(first.records!.map((r) => [r.body.includes(stranger), r.acknowledged])).toEqual(expect.arrayContaining([[true, true], [false, false]]));
    // the message about an instance Skiff does not own was handled (ignored) once, and deleted: never redelivered
    expect(about(stranger).map((r) => r.acknowledged)).toEqual([true]);
    await eventually(() => expect(bound().filter((p) => (p.spec as { nodeName: string }).nodeName === nodeName)).toHaveLength(0), 60_000);
  });

  it('prints EMF lines with Karpenter’s metric names, in the Skiff namespace with the alarms’ dimensions', () => {
    const emf = c.logs.filter((l) => l._aws !== undefined) as { _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[] }; cluster?: string }[];
    const names = new Set(emf.flatMap((l) => l._aws.CloudWatchMetrics.flatMap((m) => m.Metrics.map((x) => x.Name))));
    // Karpenter's names (kubernetes-sigs/karpenter pkg/metrics, pkg/controllers/…/metrics.go; aws provider interruption)
    for (const name of ['karpenter_nodeclaims_created_total', 'karpenter_nodes_created_total', 'karpenter_nodes_allocatable', 'karpenter_nodes_total_pod_requests', 'karpenter_scheduler_unschedulable_pods_count', 'karpenter_nodeclaims_terminated_total', 'karpenter_interruption_received_messages_total']) {
      expect(names, name).toContain(name);
    }
    for (const name of names) expect(name).toMatch(/^(karpenter|skiff)_[a-z_]+$/);
    for (const line of emf) {
      expect(line.cluster).toBe('e2e');
      for (const m of line._aws.CloudWatchMetrics) {
        expect(m.Namespace).toBe('Skiff');
        for (const set of m.Dimensions) expect(set.slice(0, 2)).toEqual(['service', 'cluster']);
      }
    }
    // what the stack's alarms read is also published with exactly their dimensions
    const alarmed = (name: string) => emf.some((l) => l._aws.CloudWatchMetrics.some((m) => m.Metrics.some((x) => x.Name === name) && m.Dimensions.some((d) => d.join() === 'service,cluster')));
    for (const name of [METRIC_NAMES.nodes, METRIC_NAMES.nodeClaims, METRIC_NAMES.unschedulablePods, METRIC_NAMES.priceSnapshotAge]) expect(alarmed(name), name).toBe(true);
  });
});
