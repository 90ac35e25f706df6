/**
 * Local AWS endpoints for the end-to-end run: one `node:http` server that speaks the wire protocols of the AWS APIs
 * Skiff calls, so the production SDK clients reach it by an endpoint override alone (`AWS_ENDPOINT_URL_EC2`, `…_SSM`,
 * `…_IAM`, `…_PRICING`, `…_EVENTBRIDGE`, `…_SECRETS_MANAGER`; AWS SDKs and Tools reference guide, "Service-specific
 * endpoints"). Requests are read and responses written from the SDK's own schemas (`aws-wire.ts`).
 *
 * | service | protocol | actions |
 * |---|---|---|
 * | EC2 | EC2 Query | CreateFleet, DescribeInstances, TerminateInstances, CreateLaunchTemplate, DescribeLaunchTemplates, DescribeImages, DescribeSubnets, DescribeSecurityGroups, DescribeInstanceTypes, DescribeInstanceTypeOfferings, DescribeSpotPriceHistory |
 * | IAM | AWS Query | GetInstanceProfile, CreateInstanceProfile, AddRoleToInstanceProfile |
 * | SSM | JSON 1.1 | GetParameters (EKS optimized AMI parameters) |
 * | Pricing | JSON 1.1 | GetProducts |
 * | EventBridge | JSON 1.1 | PutEvents (routed by the stack's rules) |
 * | Secrets Manager | JSON 1.1 | GetSecretValue, PutSecretValue |
 *
 * EC2's behaviour is the simulation's (`shared/sim/simulated-ec2.ts`: offerings, spot prices, price-capacity-optimized
 * and lowest-price choice, ClientToken idempotency, capacity errors), on a virtual clock kept at the wall clock. Each
 * request's SigV4 credential scope must name the service it reached (a client pointed at the wrong endpoint fails).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as ec2Sdk from '@aws-sdk/client-ec2';
import * as iamSdk from '@aws-sdk/client-iam';
import type { Tag } from '@aws-sdk/client-ec2';
import { parse as parseYaml } from 'yaml';
import { loadCatalog } from '../../../shared/core/instancetypes/catalog.js';
import { InsufficientCapacityError } from '../../../shared/core/errors.js';
import type { Taint } from '../../../shared/core/api/kubernetes.js';
import { SimulatedEc2, zonesOf, type SimInstance } from '../../../shared/sim/simulated-ec2.js';
import { VirtualClock } from '../../../shared/sim/virtual-clock.js';
import { AwsWireError, ec2ErrorBody, ec2Response, operationSchemas, queryErrorBody, queryResponse, readQuery } from './aws-wire.js';

/** The instance types the local EC2 offers: those with committed `DescribeInstanceTypes` entries that run pods. */
export const LOCAL_INSTANCE_TYPES = ['m5.large', 'm7i-flex.large', 'c6gd.large', 't2.micro', 'm5.metal'] as const;

const DESCRIBE_INSTANCE_TYPES = JSON.parse(readFileSync(new URL('../../fixtures/describe-instance-types.json', import.meta.url), 'utf8')) as Record<string, ec2Sdk.InstanceTypeInfo>;

/** One request a local endpoint served. */
export interface AwsCall {
  readonly service: 'ec2' | 'iam' | 'ssm' | 'pricing' | 'events' | 'secretsmanager';
  readonly action: string;
  /** The request as the SDK's input shape (read back from the wire). */
  readonly input: Record<string, unknown>;
  /** The error code answered, if any. */
  readonly error?: string;
}

/** An event as EventBridge delivers it to a target (the envelope). */
export interface BusEvent {
  readonly version: '0';
  readonly id: string;
  readonly 'detail-type': string;
  readonly source: string;
  readonly account: string;
  readonly time: string;
  readonly region: string;
  readonly resources: readonly string[];
  readonly detail: unknown;
}

/** A rule of an EventBridge bus: pattern on `source` and `detail-type`, delivering the envelope to `target`. */
export interface BusRule {
  readonly name: string;
  /** @default 'default' */
  readonly eventBusName?: string;
  readonly pattern: { readonly source?: readonly string[]; readonly 'detail-type'?: readonly string[] };
  /** Delivers one event (JSON text of the envelope), e.g. SendMessage to an SQS queue. */
  readonly target: (body: string) => Promise<void>;
}

/** What a launched instance boots with: from its launch template's user data, as nodeadm and the kubelet read it. */
export interface BootedInstance {
  readonly instance: SimInstance;
  /** Private DNS name (the Node's name on EKS). */
  readonly privateDnsName: string;
  /** `--node-labels` of the user data's NodeConfig. */
  readonly labels: Readonly<Record<string, string>>;
  /** `registerWithTaints` of the user data's NodeConfig. */
  readonly taints: readonly Taint[];
  /** The API server the NodeConfig names (`spec.cluster.apiServerEndpoint`). */
  readonly apiServerEndpoint?: string;
}

/** Options of {@link startLocalAws}. */
export interface LocalAwsOptions {
  readonly region: string;
  readonly account: string;
  readonly clusterName: string;
  /** Launch → the instance's kubelet starts, ms (wall clock). */
  readonly bootDelayMs: number;
  /** The kubelet of a launched instance starts (the fake kubelet registers its Node). */
  readonly onBoot: (booted: BootedInstance) => void;
  /** An instance terminated (by TerminateInstances or a spot reclaim). */
  readonly onTerminated?: (instance: SimInstance) => void;
}

/** The running endpoints. */
export interface LocalAws {
  /** `http://127.0.0.1:<port>`: every service's endpoint. */
  readonly url: string;
  /** The environment that points the SDK clients here (`AWS_ENDPOINT_URL_<SERVICE>`). */
  readonly endpointEnv: Readonly<Record<string, string>>;
  readonly calls: AwsCall[];
  readonly ec2: SimulatedEc2;
  /** Every event PutEvents accepted, by bus name. */
  readonly events: { readonly bus: string; readonly event: BusEvent }[];
  /** Replaces the EventBridge rules (the stack's). */
  setRules(rules: readonly BusRule[]): void;
  /** Creates (or replaces) a secret. @returns its ARN */
  putSecret(name: string, value: string): string;
  /**
   * Reclaims a spot instance as EC2 does: emits the "EC2 Spot Instance Interruption Warning" on the default bus now
   * and terminates the instance `noticeMs` later.
   */
  interruptSpot(instanceId: string, noticeMs: number): Promise<void>;
  /** Puts an AWS service event on the default bus (as EC2 or AWS Health would). */
  emit(source: string, detailType: string, detail: unknown, resources?: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

/** The EKS optimized AL2023 AMI of an architecture, as `GetParameters` and `DescribeImages` serve it. */
const amiOf = (arch: string, variant: string) => `ami-0${Buffer.from(`${arch}/${variant}`).toString('hex').slice(0, 16)}`;

/**
 * Starts the endpoints on 127.0.0.1 and a free port.
 * @example
 * const aws = await startLocalAws({ region: 'us-west-2', account: '111122223333', clusterName: 'e2e', bootDelayMs: 500, onBoot });
 * process.env = { ...process.env, ...aws.endpointEnv };
 */
export async function startLocalAws(options: LocalAwsOptions): Promise<LocalAws> {
  const { region, account, clusterName } = options;
  const zones = zonesOf(region);
  const catalog = loadCatalog().filter((t) => (LOCAL_INSTANCE_TYPES as readonly string[]).includes(t.name));
  const clock = new VirtualClock(Date.now());
  const booted = new Map<string, BootedInstance>();
  const ec2 = new SimulatedEc2(clock, {
    region,
    catalog,
    vmMemoryOverheadPercent: 0.075,
    clusterName,
    registrationDelayMs: options.bootDelayMs,
    onRegister: (instance) => {
      const b = booted.get(instance.instanceId);
      if (b) options.onBoot(b);
    },
  });
  // The virtual clock follows the wall clock (boots and spot reclaims are its timers).
  let ticking = Promise.resolve();
  const tick = () => (ticking = ticking.then(() => clock.runUntil(Date.now())).catch(() => undefined));
  const ticker = setInterval(() => void tick(), 50);

  const calls: AwsCall[] = [];
  const events: { bus: string; event: BusEvent }[] = [];
  let rules: readonly BusRule[] = [];
  const launchTemplates = new Map<string, { id: string; data: ec2Sdk.RequestLaunchTemplateData; tags: Tag[] }>();
  const instanceProfiles = new Map<string, { name: string; roles: string[]; created: Date }>();
  const secrets = new Map<string, { name: string; arn: string; versions: { id: string; value: string; created: Date }[] }>();
  const subnets = zones.map((zone, i) => ({ SubnetId: `subnet-0e2e${i}`, AvailabilityZone: zone, AvailabilityZoneId: `usw2-az${i + 1}`, AvailableIpAddressCount: 4000 - i, VpcId: 'vpc-0e2e', State: 'available' as const, Tags: [{ Key: 'karpenter.sh/discovery', Value: clusterName }] }));
  const securityGroups = [{ GroupId: 'sg-0e2e', GroupName: `eks-cluster-sg-${clusterName}`, VpcId: 'vpc-0e2e', Tags: [{ Key: 'karpenter.sh/discovery', Value: clusterName }] }];
  const images = [['x86_64', 'standard'], ['arm64', 'standard'], ['x86_64', 'nvidia'], ['x86_64', 'neuron']].map(([arch, variant]) => ({
    ImageId: amiOf(arch!, variant!),
    Architecture: arch as ec2Sdk.ArchitectureValues,
    Name: `amazon-eks-node-al2023-${arch}-${variant}-1.31-v20260101`,
    CreationDate: '2026-01-01T00:00:00.000Z',
    State: 'available' as const,
    OwnerId: '602401143452',
    ImageType: 'machine' as const,
    RootDeviceType: 'ebs' as const,
    VirtualizationType: 'hvm' as const,
  }));

  const tagsOf = (list: readonly Tag[] | undefined): Record<string, string> => Object.fromEntries((list ?? []).map((t) => [t.Key ?? '', t.Value ?? '']));
  /** EC2's filter semantics for the names the adapters use: OR within a filter's values, AND across filters. */
  const matches = (filters: readonly ec2Sdk.Filter[] | undefined, fields: (name: string) => readonly string[] | undefined): boolean =>
    (filters ?? []).every((f) => {
      const have = fields(f.Name ?? '');
      if (have === undefined) throw new AwsWireError('InvalidParameterValue', `The filter '${f.Name}' is invalid`);
      return (f.Values ?? []).some((want) => have.some((v) => new RegExp(`^${want.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`).test(v)));
    });
  const tagFields = (tags: Record<string, string>, name: string): readonly string[] | undefined => {
    if (name === 'tag-key') return Object.keys(tags);
    if (name.startsWith('tag:')) return name.slice(4) in tags ? [tags[name.slice(4)]!] : [];
    return undefined;
  };
  const dnsName = (i: SimInstance) => `ip-10-0-${parseInt(i.instanceId.slice(-4), 16) >> 8}-${parseInt(i.instanceId.slice(-4), 16) & 255}.${region}.compute.internal`;
  const instanceView = (i: SimInstance): ec2Sdk.Instance => ({
    InstanceId: i.instanceId,
    InstanceType: i.instanceType as ec2Sdk._InstanceType,
    Placement: { AvailabilityZone: i.zone },
    State: { Name: i.state as ec2Sdk.InstanceStateName, Code: { pending: 0, running: 16, 'shutting-down': 32, terminated: 48, stopping: 64, stopped: 80 }[i.state] ?? 16 },
    LaunchTime: new Date(i.launchedAt),
    PrivateDnsName: dnsName(i),
    Tags: Object.entries(i.tags).map(([Key, Value]) => ({ Key, Value })),
    ...(i.capacityType === 'spot' ? { InstanceLifecycle: 'spot' as const } : {}),
  });

  /**
   * What nodeadm hands the kubelet from AL2023 user data (MIME multipart, `application/node.eks.aws` parts merged in
   * order): `spec.kubelet.flags` `--node-labels=…`, `spec.kubelet.config.registerWithTaints`, and the cluster it
   * joins (`spec.cluster.apiServerEndpoint`).
   */
  const bootConfig = (userData: string | undefined): { labels: Record<string, string>; taints: Taint[]; apiServerEndpoint?: string } => {
    const text = Buffer.from(userData ?? '', 'base64').toString('utf8');
    const boundary = /boundary="?([^"\r\n;]+)"?/.exec(text)?.[1];
    const parts = boundary ? text.split(`--${boundary}`).slice(1, -1) : [text];
    const labels: Record<string, string> = {};
    const taints: Taint[] = [];
    let apiServerEndpoint: string | undefined;
    for (const part of parts) {
      const split = part.search(/\r?\n\r?\n/);
      if (!/content-type:\s*application\/node\.eks\.aws/i.test(part.slice(0, split))) continue;
      const doc = parseYaml(part.slice(split).trim()) as { spec?: { cluster?: { apiServerEndpoint?: string }; kubelet?: { flags?: string[]; config?: { registerWithTaints?: Taint[] } } } };
      apiServerEndpoint = doc.spec?.cluster?.apiServerEndpoint ?? apiServerEndpoint;
      taints.push(...(doc.spec?.kubelet?.config?.registerWithTaints ?? []));
      for (const flag of doc.spec?.kubelet?.flags ?? []) {
        if (!flag.startsWith('--node-labels=')) continue;
        for (const pair of flag.slice('--node-labels='.length).split(',')) {
          const eq = pair.indexOf('=');
          if (eq > 0) labels[pair.slice(0, eq)] = pair.slice(eq + 1);
        }
      }
    }
    return { labels, taints, ...(apiServerEndpoint !== undefined ? { apiServerEndpoint } : {}) };
  };

  const ec2Actions: Record<string, (input: Record<string, unknown>) => Promise<unknown> | unknown> = {
    DescribeSubnets: (input) => ({ Subnets: subnets.filter((s) => matches(input.Filters as ec2Sdk.Filter[], (n) => (n === 'subnet-id' ? [s.SubnetId] : tagFields(tagsOf(s.Tags), n)))) }),
    DescribeSecurityGroups: (input) => ({
      SecurityGroups: securityGroups.filter((g) => matches(input.Filters as ec2Sdk.Filter[], (n) => (n === 'group-id' ? [g.GroupId] : n === 'group-name' ? [g.GroupName] : tagFields(tagsOf(g.Tags), n)))),
    }),
    DescribeImages: (input) => ({ Images: images.filter((im) => matches(input.Filters as ec2Sdk.Filter[], (n) => (n === 'image-id' ? [im.ImageId] : n === 'name' ? [im.Name] : tagFields({}, n)))) }),
    DescribeInstanceTypes: () => ({ InstanceTypes: LOCAL_INSTANCE_TYPES.map((t) => DESCRIBE_INSTANCE_TYPES[t]).filter((t) => t !== undefined) }),
    DescribeInstanceTypeOfferings: () => ({ InstanceTypeOfferings: LOCAL_INSTANCE_TYPES.flatMap((t) => zones.map((z) => ({ InstanceType: t, LocationType: 'availability-zone', Location: z }))) }),
    DescribeSpotPriceHistory: async () => {
      const types = await ec2.getInstanceTypes({ nodeClass: '' });
      return {
        SpotPriceHistory: types.flatMap((t) =>
          t.offerings.filter((o) => o.capacityType === 'spot').map((o) => ({ InstanceType: t.name, AvailabilityZone: o.zone, SpotPrice: o.price.toFixed(6), ProductDescription: 'Linux/UNIX', Timestamp: new Date(clock.now() - 60_000) })),
        ),
      };
    },
    DescribeLaunchTemplates: (input) => {
      const names = (input.LaunchTemplateNames as string[] | undefined) ?? [];
      const missing = names.filter((n) => !launchTemplates.has(n));
      if (missing.length > 0) throw new AwsWireError('InvalidLaunchTemplateName.NotFoundException', `At least one of the launch templates specified in the request does not exist.`);
      return { LaunchTemplates: names.map((n) => ({ LaunchTemplateName: n, LaunchTemplateId: launchTemplates.get(n)!.id, LatestVersionNumber: 1, DefaultVersionNumber: 1, Tags: launchTemplates.get(n)!.tags })) };
    },
    CreateLaunchTemplate: (input) => {
      const name = String(input.LaunchTemplateName);
      if (launchTemplates.has(name)) throw new AwsWireError('InvalidLaunchTemplateName.AlreadyExistsException', `Launch template name already in use.`);
      const id = `lt-0${randomUUID().replace(/-/g, '').slice(0, 16)}`;
      const tags = ((input.TagSpecifications as ec2Sdk.TagSpecification[] | undefined) ?? []).flatMap((t) => t.Tags ?? []);
      launchTemplates.set(name, { id, data: input.LaunchTemplateData as ec2Sdk.RequestLaunchTemplateData, tags });
      return { LaunchTemplate: { LaunchTemplateId: id, LaunchTemplateName: name, LatestVersionNumber: 1, DefaultVersionNumber: 1, CreateTime: new Date(clock.now()), Tags: tags } };
    },
    CreateFleet: async (input) => {
      const request = input as unknown as ec2Sdk.CreateFleetRequest;
      if (request.Type !== 'instant') throw new AwsWireError('InvalidParameterValue', 'only instant fleets are served locally');
      const capacityType = request.TargetCapacitySpecification?.DefaultTargetCapacityType === 'spot' ? 'spot' : 'on-demand';
      const instanceTags = tagsOf((request.TagSpecifications ?? []).find((t) => t.ResourceType === 'instance')?.Tags);
      const nodeClass = instanceTags['karpenter.k8s.aws/ec2nodeclass'] ?? '';
      const types = await ec2.getInstanceTypes({ nodeClass });
      const price = (type: string, zone: string) => types.find((t) => t.name === type)?.offerings.find((o) => o.zone === zone && o.capacityType === capacityType)?.price;
      const overrides: { instanceType: string; zone: string; price: number; template: string; subnet?: string }[] = [];
      for (const config of request.LaunchTemplateConfigs ?? []) {
        const template = config.LaunchTemplateSpecification?.LaunchTemplateName ?? '';
        if (!launchTemplates.has(template)) throw new AwsWireError('InvalidLaunchTemplateName.NotFoundException', `The specified launch template, with template name ${template}, does not exist.`);
        for (const o of config.Overrides ?? []) {
          const zone = o.AvailabilityZone ?? subnets.find((s) => s.SubnetId === o.SubnetId)?.AvailabilityZone;
          const p = zone !== undefined ? price(o.InstanceType ?? '', zone) : undefined;
          if (zone !== undefined && p !== undefined) overrides.push({ instanceType: o.InstanceType!, zone, price: p, template, ...(o.SubnetId ? { subnet: o.SubnetId } : {}) });
        }
      }
      const token = request.ClientToken ?? randomUUID();
      const errorsOf = (failed: readonly { instanceType: string; zone: string }[], code: string): ec2Sdk.CreateFleetError[] =>
        failed.map((f) => ({ ErrorCode: code, ErrorMessage: `We currently do not have sufficient ${f.instanceType} capacity in the Availability Zone you requested (${f.zone}).`, Lifecycle: capacityType === 'spot' ? 'spot' : 'on-demand', LaunchTemplateAndOverrides: { Overrides: { InstanceType: f.instanceType as ec2Sdk._InstanceType, AvailabilityZone: f.zone } } }));
      try {
        const launched = await ec2.create({
          nodeClaim: token, // EC2's idempotency key
          nodePool: instanceTags['karpenter.sh/nodepool'] ?? '',
          nodeClass,
          capacityType,
          overrides: overrides.map(({ instanceType, zone, price: p }) => ({ instanceType, zone, price: p })),
          tags: instanceTags,
          labels: {},
          taints: [],
          startupTaints: [],
        });
        const instance = ec2.instances.find((i) => i.instanceId === launched.instanceId)!;
        const chosen = overrides.find((o) => o.instanceType === launched.instanceType && o.zone === launched.zone)!;
        if (!booted.has(instance.instanceId)) {
          booted.set(instance.instanceId, { instance, privateDnsName: dnsName(instance), ...bootConfig(launchTemplates.get(chosen.template)?.data.UserData) });
        }
        return {
          FleetId: `fleet-${token.slice(0, 8)}`,
          Errors: errorsOf(launched.unavailableOfferings.map((o) => ({ instanceType: o.instanceType, zone: o.zone })), 'InsufficientInstanceCapacity'),
          Instances: [{ InstanceIds: [instance.instanceId], InstanceType: instance.instanceType, Lifecycle: capacityType === 'spot' ? 'spot' : 'on-demand', LaunchTemplateAndOverrides: { LaunchTemplateSpecification: { LaunchTemplateName: chosen.template, Version: '1' }, Overrides: { InstanceType: instance.instanceType, AvailabilityZone: instance.zone, ...(chosen.subnet ? { SubnetId: chosen.subnet } : {}) } } }],
        };
      } catch (e) {
        if (!(e instanceof InsufficientCapacityError)) throw e;
        return { FleetId: `fleet-${token.slice(0, 8)}`, Errors: errorsOf(overrides, e.errorCode), Instances: [] };
      }
    },
    DescribeInstances: (input) => {
      const ids = input.InstanceIds as string[] | undefined;
      const found = ec2.instances.filter(
        (i) =>
          (ids === undefined || ids.includes(i.instanceId)) &&
          matches(input.Filters as ec2Sdk.Filter[], (n) => (n === 'instance-state-name' ? [i.state] : n === 'instance-id' ? [i.instanceId] : tagFields(i.tags, n))),
      );
      return { Reservations: found.map((i) => ({ ReservationId: `r-${i.instanceId.slice(2)}`, OwnerId: account, Instances: [instanceView(i)] })) };
    },
    TerminateInstances: (input) => {
      const ids = (input.InstanceIds as string[] | undefined) ?? [];
      const unknown = ids.filter((id) => !ec2.instances.some((i) => i.instanceId === id));
      if (unknown.length > 0) throw new AwsWireError('InvalidInstanceID.NotFound', `The instance IDs '${unknown.join(', ')}' do not exist`);
      return {
        TerminatingInstances: ids.map((id) => {
          const before = ec2.instances.find((i) => i.instanceId === id)!.state;
          const changed = ec2.setInstanceState(id, 'terminated');
          if (changed) options.onTerminated?.(changed);
          return { InstanceId: id, PreviousState: { Name: before, Code: before === 'terminated' ? 48 : 16 }, CurrentState: { Name: 'shutting-down', Code: 32 } };
        }),
      };
    },
  };

  const iamActions: Record<string, (input: Record<string, unknown>) => unknown> = {
    GetInstanceProfile: (input) => {
      const p = instanceProfiles.get(String(input.InstanceProfileName));
      if (!p) throw new AwsWireError('NoSuchEntity', `Instance Profile ${String(input.InstanceProfileName)} cannot be found.`, 404);
      return { InstanceProfile: profileView(p) };
    },
    CreateInstanceProfile: (input) => {
      const name = String(input.InstanceProfileName);
      if (instanceProfiles.has(name)) throw new AwsWireError('EntityAlreadyExists', `Instance Profile ${name} already exists.`, 409);
      const p = { name, roles: [] as string[], created: new Date() };
      instanceProfiles.set(name, p);
      return { InstanceProfile: profileView(p) };
    },
    AddRoleToInstanceProfile: (input) => {
      const p = instanceProfiles.get(String(input.InstanceProfileName));
      if (!p) throw new AwsWireError('NoSuchEntity', `Instance Profile ${String(input.InstanceProfileName)} cannot be found.`, 404);
      if (p.roles.length > 0) throw new AwsWireError('LimitExceeded', 'Cannot exceed quota for InstanceSessionsPerInstanceProfile: 1', 409);
      p.roles.push(String(input.RoleName));
      return {};
    },
  };
  const profileView = (p: { name: string; roles: string[]; created: Date }) => ({
    Path: '/',
    InstanceProfileName: p.name,
    InstanceProfileId: `AIPA${Buffer.from(p.name).toString('hex').slice(0, 16).toUpperCase()}`,
    Arn: `arn:aws:iam::${account}:instance-profile/${p.name}`,
    CreateDate: p.created,
    Roles: p.roles.map((r) => ({ Path: '/', RoleName: r, RoleId: `AROA${r.length}`, Arn: `arn:aws:iam::${account}:role/${r}`, CreateDate: p.created })),
  });

  const secretOf = (id: string) => {
    const s = secrets.get(id) ?? [...secrets.values()].find((x) => x.arn === id);
    if (!s) throw new AwsWireError('ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
    return s;
  };
  const putSecret = (name: string, value: string): string => {
    const existing = secrets.get(name);
    const version = { id: randomUUID(), value, created: new Date() };
    if (existing) existing.versions.push(version);
    else secrets.set(name, { name, arn: `arn:aws:secretsmanager:${region}:${account}:secret:${name}-${randomUUID().slice(0, 6)}`, versions: [version] });
    return secrets.get(name)!.arn;
  };

  const putEvents = async (entries: readonly Record<string, unknown>[]) => {
    const out: { EventId: string }[] = [];
    for (const entry of entries) {
      const event: BusEvent = {
        version: '0',
        id: randomUUID(),
        'detail-type': String(entry.DetailType),
        source: String(entry.Source),
        account,
        time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
        region,
        resources: (entry.Resources as string[] | undefined) ?? [],
        detail: JSON.parse(String(entry.Detail ?? '{}')),
      };
      const bus = String(entry.EventBusName ?? 'default').replace(/^arn:.*:event-bus\//, '');
      events.push({ bus, event });
      for (const rule of rules) {
        if ((rule.eventBusName ?? 'default') !== bus) continue;
        if (rule.pattern.source && !rule.pattern.source.includes(event.source)) continue;
        if (rule.pattern['detail-type'] && !rule.pattern['detail-type'].includes(event['detail-type'])) continue;
        await rule.target(JSON.stringify(event));
      }
      out.push({ EventId: event.id });
    }
    return { FailedEntryCount: 0, Entries: out };
  };

  const jsonActions: Record<string, Record<string, (input: Record<string, unknown>) => unknown>> = {
    AmazonSSM: {
      GetParameters: (input) => {
        const names = (input.Names as string[] | undefined) ?? [];
        const found: unknown[] = [];
        const invalid: string[] = [];
        for (const name of names) {
          const m = /^\/aws\/service\/eks\/optimized-ami\/[\d.]+\/amazon-linux-2023\/(x86_64|arm64)\/(standard|nvidia|neuron)\/recommended\/image_id$/.exec(name);
          if (m) found.push({ Name: name, Type: 'String', Value: amiOf(m[1]!, m[2]!), Version: 1, DataType: 'aws:ec2:image', ARN: `arn:aws:ssm:${region}::parameter${name}`, LastModifiedDate: 1767225600 });
          else invalid.push(name);
        }
        return { Parameters: found, InvalidParameters: invalid };
      },
    },
    AWSPriceListService: {
      GetProducts: (input) => {
        const filters = (input.Filters as { Field: string; Value: string }[] | undefined) ?? [];
        const family = filters.find((f) => f.Field === 'productFamily')?.Value;
        const types = catalog.filter((t) => t.onDemandPrice !== null && (family === 'Compute Instance (bare metal)') === t.name.endsWith('.metal'));
        return {
          FormatVersion: 'aws_v1',
          PriceList: types.map((t) =>
            JSON.stringify({ product: { productFamily: family, attributes: { instanceType: t.name, regionCode: region } }, terms: { OnDemand: { [`${t.name}.JRTCKXETXF`]: { priceDimensions: { [`${t.name}.JRTCKXETXF.6YS6EN2CT7`]: { unit: 'Hrs', pricePerUnit: { USD: t.onDemandPrice!.toFixed(4) } } } } } } }),
          ),
        };
      },
    },
    AWSEvents: { PutEvents: (input) => putEvents((input.Entries as Record<string, unknown>[] | undefined) ?? []) },
    secretsmanager: {
      GetSecretValue: (input) => {
        const s = secretOf(String(input.SecretId));
        const v = s.versions.at(-1)!;
        return { ARN: s.arn, Name: s.name, VersionId: v.id, SecretString: v.value, VersionStages: ['AWSCURRENT'], CreatedDate: v.created.getTime() / 1000 };
      },
      PutSecretValue: (input) => {
        const s = secretOf(String(input.SecretId));
        putSecret(s.name, String(input.SecretString));
        return { ARN: s.arn, Name: s.name, VersionId: s.versions.at(-1)!.id, VersionStages: ['AWSCURRENT'] };
      },
    },
  };
  const JSON_SERVICE: Record<string, AwsCall['service']> = { AmazonSSM: 'ssm', AWSPriceListService: 'pricing', AWSEvents: 'events', secretsmanager: 'secretsmanager' };

  const send = (res: ServerResponse, status: number, type: string, body: string) => {
    res.writeHead(status, { 'Content-Type': type, 'x-amzn-RequestId': randomUUID() });
    res.end(body);
  };
  /** The SigV4 credential scope's service name: the client must have signed for the service it reached. */
  const signedFor = (req: IncomingMessage) => /Credential=[^/]+\/\d{8}\/[^/]+\/([^/]+)\/aws4_request/.exec(String(req.headers.authorization ?? ''))?.[1];

  async function handle(req: IncomingMessage, text: string, res: ServerResponse): Promise<void> {
    await tick();
    const requestId = randomUUID();
    const target = String(req.headers['x-amz-target'] ?? '');
    if (target !== '') {
      const [prefix = '', action = ''] = target.split('.');
      const service = JSON_SERVICE[prefix];
      const fn = jsonActions[prefix]?.[action];
      const input = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
      const error = (code: string, message: string, status = 400) => {
        calls.push({ service: service ?? 'ssm', action, input, error: code });
        send(res, status, 'application/x-amz-json-1.1', JSON.stringify({ __type: code, message }));
      };
      if (!service || !fn) return error('UnknownOperationException', `no local ${target}`);
      if (signedFor(req) !== service) return error('InvalidSignatureException', `request for ${service} signed for ${signedFor(req)}`);
      try {
        const output = await fn(input);
        calls.push({ service, action, input });
        return send(res, 200, 'application/x-amz-json-1.1', JSON.stringify(output));
      } catch (e) {
        if (e instanceof AwsWireError) return error(e.code, e.message, e.status);
        throw e;
      }
    }
    const params = new URLSearchParams(text);
    const action = params.get('Action') ?? '';
    const version = params.get('Version');
    if (version === '2016-11-15') {
      const schemas = operationSchemas(ec2Sdk as never, action);
      const fn = ec2Actions[action];
      if (!schemas || !fn) return send(res, 400, 'text/xml', ec2ErrorBody('InvalidAction', `The action ${action} is not valid for this web service.`, requestId));
      const input = readQuery(schemas.input, params, true);
      try {
        if (signedFor(req) !== 'ec2') throw new AwsWireError('AuthFailure', `request signed for ${signedFor(req)}, not ec2`, 401);
        const output = await fn(input);
        calls.push({ service: 'ec2', action, input });
        return send(res, 200, 'text/xml;charset=UTF-8', ec2Response(action, schemas.output, output, requestId));
      } catch (e) {
        if (!(e instanceof AwsWireError)) throw e;
        calls.push({ service: 'ec2', action, input, error: e.code });
        return send(res, e.status, 'text/xml;charset=UTF-8', ec2ErrorBody(e.code, e.message, requestId));
      }
    }
    if (version === '2010-05-08') {
      const ns = 'https://iam.amazonaws.com/doc/2010-05-08/';
      const schemas = operationSchemas(iamSdk as never, action);
      const fn = iamActions[action];
      if (!schemas || !fn) return send(res, 400, 'text/xml', queryErrorBody(ns, 'InvalidAction', `Could not find operation ${action}`, requestId));
      const input = readQuery(schemas.input, params, false);
      try {
        if (signedFor(req) !== 'iam') throw new AwsWireError('SignatureDoesNotMatch', `request signed for ${signedFor(req)}, not iam`, 403);
        const output = fn(input);
        calls.push({ service: 'iam', action, input });
        return send(res, 200, 'text/xml', queryResponse(action, ns, schemas.output, output, requestId));
      } catch (e) {
        if (!(e instanceof AwsWireError)) throw e;
        calls.push({ service: 'iam', action, input, error: e.code });
        return send(res, e.status, 'text/xml', queryErrorBody(ns, e.code, e.message, requestId));
      }
    }
    send(res, 400, 'text/plain', `no local service for ${req.method} ${req.url}`);
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      handle(req, Buffer.concat(chunks).toString('utf8'), res).catch((e: unknown) => send(res, 500, 'text/plain', e instanceof Error ? (e.stack ?? e.message) : String(e)));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    endpointEnv: {
      AWS_ENDPOINT_URL_EC2: url,
      AWS_ENDPOINT_URL_IAM: url,
      AWS_ENDPOINT_URL_SSM: url,
      AWS_ENDPOINT_URL_PRICING: url,
      AWS_ENDPOINT_URL_EVENTBRIDGE: url,
      AWS_ENDPOINT_URL_SECRETS_MANAGER: url,
    },
    calls,
    ec2,
    events,
    setRules: (r) => void (rules = r),
    putSecret,
    interruptSpot: async (instanceId, noticeMs) => {
      await tick();
      const instance = ec2.reclaimSpot(instanceId, (i) => options.onTerminated?.(i), noticeMs);
      if (!instance) throw new Error(`${instanceId} is not a running spot instance`);
      await putEvents([{ Source: 'aws.ec2', DetailType: 'EC2 Spot Instance Interruption Warning', Detail: JSON.stringify({ 'instance-id': instanceId, 'instance-action': 'terminate' }), Resources: [`arn:aws:ec2:${instance.zone}:instance/${instanceId}`] }]);
    },
    emit: async (source, detailType, detail, resources = []) => void (await putEvents([{ Source: source, DetailType: detailType, Detail: JSON.stringify(detail), Resources: resources }])),
    close: async () => {
      clearInterval(ticker);
      await ticking;
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
    },
  };
}
