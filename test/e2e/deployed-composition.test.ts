// The deployed composition end to end on one machine (issue 25): relay → webhook → SQS → Lambdas → EC2 and DynamoDB,
// every part speaking its real protocol, every function built by its production factory from the synthesised
// stack's environment. Each scenario is checked from outside: what EC2 received, what the table holds, what the API
// server holds, what the functions printed.
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/fake-kube-apiserver.js';
import { startComposition, type Composition } from './support/composition.js';

let c: Composition;

beforeAll(async () => {
  c = await startComposition();
});

afterAll(async () => {
  await c?.close();
});

/** NodeClaim items of the table (read with a plain client, as an operator would). */
async function tableNodeClaims(): Promise<Record<string, unknown>[]> {
  const client = new DynamoDBClient({ region: 'us-west-2', endpoint: c.dynamoEndpoint, credentials: { accessKeyId: 'op', secretAccessKey: 'op' } });
  const { Items = [] } = await client.send(new ScanCommand({ TableName: c.deployment.tableName }));
  client.destroy();
  return Items.filter((i) => i.pk?.S === 'CLUSTER#e2e' && String(i.sk?.S ?? '').startsWith('NODECLAIM#'));
}

/** The `karpenter.sh/nodeclaim` instance tag of a CreateFleet request. */
const fleetNodeClaim = (input: Record<string, unknown>) =>
  ((input.TagSpecifications as { ResourceType: string; Tags: { Key: string; Value: string }[] }[]).find((t) => t.ResourceType === 'instance')?.Tags ?? []).find((t) => t.Key === 'karpenter.sh/nodeclaim')?.Value;

const pods = () => [...c.api.objects.pods!.values()];
const bound = () => pods().filter((p) => (p.spec as { nodeName?: string }).nodeName);
const nodes = () => [...c.api.objects.nodes!.values()];

describe('the deployed composition', () => {
  it('launches nodes for a Deployment’s pending pods: CreateFleet as EC2 receives it, NodeClaims in the table, Nodes registered, pods bound', async () => {
    c.fakes.deployments.set('web', { name: 'web', namespace: 'default', replicas: 4, requests: { cpu: '500m', memory: '512Mi' } });
    await eventually(() => expect(bound()).toHaveLength(4), 60_000);
    const fleets = c.aws.calls.filter((call) => call.service === 'ec2' && call.action === 'CreateFleet' && !call.error);
    expect(fleets.length).toBeGreaterThan(0);
    for (const f of fleets) {
      expect(f.input).toMatchObject({ Type: 'instant', TargetCapacitySpecification: { TotalTargetCapacity: 1, DefaultTargetCapacityType: 'on-demand' } });
    }
    // one NodeClaim record per launch, under the name the instance was tagged with
    const launched = new Set(fleets.map((f) => fleetNodeClaim(f.input)));
    const items = await tableNodeClaims();
    expect(new Set(items.map((i) => String(i.sk!.S).slice('NODECLAIM#'.length)))).toEqual(launched);
    // every Node was registered by a launched instance's kubelet, with the NodePool label its user data carried
    const instances = new Set(c.aws.ec2.instances.filter((i) => i.state === 'running').map((i) => `aws:///${i.zone}/${i.instanceId}`));
    expect(nodes().length).toBe(launched.size);
    for (const n of nodes()) {
      expect(instances.has(String((n.spec as { providerID: string }).providerID))).toBe(true);
      expect((n.metadata as { labels: Record<string, string> }).labels['karpenter.sh/nodepool']).toBe('general');
      // registration finished: Skiff's lifecycle took Karpenter's unregistered taint off
      expect(((n.spec as { taints?: { key: string }[] }).taints ?? []).map((t) => t.key)).not.toContain('karpenter.sh/unregistered');
    }
  });
});
