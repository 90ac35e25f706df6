/**
 * A provisioner under test with real parts: the real handler and controller, the DynamoDB adapters on an
 * embedded dynalite, the simulated cluster and EC2 on a virtual clock. Tests feed it SQS events directly.
 */
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { createHandler } from '../../functions/provisioner/handler.js';
import { DynamoDbNodeClaimStore } from '../../shared/adapters/aws/dynamodb-nodeclaim-store.js';
import { DynamoDbProvisioningPassStore } from '../../shared/adapters/aws/provisioning-pass-store.js';
import { DynamoDbUnavailableOfferingsStore } from '../../shared/adapters/aws/unavailable-offerings-store.js';
import { startDynalite, type LocalDynamoDb } from '../../shared/cli/local-dynamodb.js';
import { reconcileLifecycle, type LifecycleReport } from '../../shared/controllers/lifecycle.js';
import { provision, type ProvisionDeps } from '../../shared/controllers/provision.js';
import { parseManifests } from '../../shared/core/api/manifest.js';
import { deduplicationId, type PodEvent } from '../../shared/core/api/pod-event.js';
import { loadCatalog } from '../../shared/core/instancetypes/catalog.js';
import type { CloudProvider } from '../../shared/ports/cloud-provider.js';
import { seededIds } from '../../shared/ports/ids.js';
import { silentLog } from '../../shared/lambda/log.js';
import { SimulatedCluster, type SimPod } from '../../shared/sim/simulated-cluster.js';
import { SimulatedEc2 } from '../../shared/sim/simulated-ec2.js';
import { VirtualClock } from '../../shared/sim/virtual-clock.js';

/** The `default` EC2NodeClass (YAML); `extra` lines are appended to its spec (indent them by two spaces). */
export function nodeClassYaml(extra = ''): string {
  return `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: my-cluster}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: my-cluster}}]
  role: KarpenterNodeRole-my-cluster${extra}
`;
}

/** The seed article's default EC2NodeClass and general NodePool, trimmed to what provisioning reads. */
export const GENERAL_POOL = `${nodeClassYaml()}---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    metadata: {labels: {workload-type: general}}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r]}
        - {key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["4"]}
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
        - {key: topology.kubernetes.io/zone, operator: In, values: [us-west-2a, us-west-2b, us-west-2c]}
`;

/** A provisioner wired to real adapters and simulated cloud/cluster. Call {@link ProvisionerHarness.close}. */
export class ProvisionerHarness {
  readonly clock = new VirtualClock(Date.parse('2026-03-02T08:00:00Z'));
  readonly cluster: SimulatedCluster;
  readonly ec2: SimulatedEc2;
  readonly store: DynamoDbNodeClaimStore;
  readonly offerings: DynamoDbUnavailableOfferingsStore;
  readonly handler: ReturnType<typeof createHandler>;
  /** When the passes asked for a follow-up provisioning pass (`ProvisionDeps.followUps`), epoch ms, in order. */
  readonly followUps: number[] = [];
  /** One lifecycle pass over the same world, launching Pending NodeClaims again (`LifecycleDeps.launch`). */
  readonly lifecyclePass: () => Promise<LifecycleReport>;
  private nextMessage = 0;

  private constructor(
    private readonly db: LocalDynamoDb,
    manifests: string,
    wrapCloud: (ec2: SimulatedEc2) => CloudProvider,
  ) {
    const ids = seededIds(7);
    this.cluster = new SimulatedCluster(this.clock, { region: 'us-west-2', ids });
    this.ec2 = new SimulatedEc2(this.clock, { region: 'us-west-2', catalog: loadCatalog(), vmMemoryOverheadPercent: 0.075, clusterName: 'test', onRegister: (i) => this.cluster.registerNode(i) });
    const props = { client: db.client, tableName: db.tableName, cluster: 'test' };
    this.store = new DynamoDbNodeClaimStore(props);
    this.offerings = new DynamoDbUnavailableOfferingsStore(props);
    for (const m of parseManifests(manifests, 'harness.yaml')) this.cluster.apply(m);
    const passes = new DynamoDbProvisioningPassStore(props);
    const followUps = { request: async (atMs: number) => void this.followUps.push(atMs) };
    const deps: ProvisionDeps = { cluster: this.cluster, cloud: wrapCloud(this.ec2), store: this.store, unavailableOfferings: this.offerings, passes, clock: this.clock, ids, clusterName: 'test', region: 'us-west-2', followUps };
    this.handler = createHandler({ provision: (trigger) => provision(deps, trigger), log: silentLog });
    const launch = { unavailableOfferings: this.offerings, ids, clusterName: 'test', region: 'us-west-2', listNodeClasses: () => this.cluster.listNodeClasses() };
    this.lifecyclePass = () => reconcileLifecycle({ cluster: this.cluster, cloud: deps.cloud, store: this.store, clock: this.clock, launch });
  }

  /** Starts dynalite and applies `manifests` (multi-document YAML) to the simulated cluster. */
  static async start(manifests = GENERAL_POOL, wrapCloud: (ec2: SimulatedEc2) => CloudProvider = (e) => e): Promise<ProvisionerHarness> {
    return new ProvisionerHarness(await startDynalite(), manifests, wrapCloud);
  }

  /** Creates a bare pod and runs kube-scheduler so it is marked Unschedulable. Returns it. */
  async pendingPod(yaml: string): Promise<SimPod> {
    const [manifest] = parseManifests(yaml, 'pod.yaml');
    this.cluster.apply(manifest!);
    await this.clock.runUntil(this.clock.now());
    const o = manifest!.object as { metadata: { name: string; namespace?: string } };
    return this.cluster.pods.get(`${o.metadata.namespace ?? 'default'}/${o.metadata.name}`)!;
  }

  /** The SQS record the webhook would enqueue for `pod`, sent now (virtual time) unless `sentAt` is given. */
  record(pod: SimPod, sentAt = this.clock.now()): SQSRecord {
    const event: PodEvent = { kind: 'pod', cluster: 'test', namespace: pod.namespace, name: pod.name, uid: pod.uid, resourceVersion: pod.resourceVersion };
    return this.rawRecord(JSON.stringify(event), deduplicationId(event), sentAt);
  }

  /** An SQS record with any body, sent now (virtual time) unless `sentAt` (epoch ms) is given. */
  rawRecord(body: string, dedup = `raw-${this.nextMessage}`, sentAt = this.clock.now()): SQSRecord {
    const id = `m-${++this.nextMessage}`;
    return {
      messageId: id,
      receiptHandle: id,
      body,
      attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(sentAt), SenderId: 'test', ApproximateFirstReceiveTimestamp: String(sentAt), MessageGroupId: 'test', MessageDeduplicationId: dedup },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-west-2:000000000000:pod-events.fifo',
      awsRegion: 'us-west-2',
    };
  }

  /** Delivers records to the handler as one SQS event. */
  deliver(...records: SQSRecord[]): Promise<{ batchItemFailures: { itemIdentifier: string }[] }> {
    const event: SQSEvent = { Records: records };
    return this.handler(event);
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}

/** A pending bare pod manifest. */
export function podYaml(name: string, cpu = '500m', memory = '1Gi', extra = ''): string {
  return `
apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: default}
spec:
  nodeSelector: {workload-type: general}${extra}
  containers:
    - name: app
      image: nginx
      resources: {requests: {cpu: "${cpu}", memory: ${memory}}}
`;
}

/** A Deployment manifest (YAML) with `replicas` pods requesting `cpu` and `memory`, labelled `app: <name>`. */
export function deploymentYaml(name: string, replicas: number, cpu = '500m', memory = '1Gi'): string {
  return `
apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      containers: [{name: app, image: nginx, resources: {requests: {cpu: "${cpu}", memory: ${memory}}}}]
`;
}
