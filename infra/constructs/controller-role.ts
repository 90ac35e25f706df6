/**
 * `ControllerRole`: the execution role the four controller Lambdas (provisioner, interruption, disruption, lifecycle)
 * share — the one principal the EKS access entry maps into the cluster — with the AWS adapters' policy rendered from
 * `shared/adapters/aws/iam-actions.ts`, least privilege after Karpenter's reference controller policy
 * (docs `reference/cloudformation.md`):
 *
 * - launches (`CreateFleet`, `RunInstances`, `CreateLaunchTemplate`) create resources only with the request tag
 *   `kubernetes.io/cluster/<cluster>=owned`; they may use any image, snapshot, subnet and security group of the
 *   region (those cannot carry a request tag), and only launch templates that carry the cluster tag;
 * - `CreateTags` only as part of those create calls, with the same request tag;
 * - `TerminateInstances` only on instances carrying the cluster tag and Skiff's `skiff.dev/cluster` (`aws:ResourceTag`);
 * - `iam:PassRole` only for the node role, only to EC2; instance profiles only under `/skiff/<region>/<cluster>/`;
 * - SSM reads only under the public EKS/Bottlerocket/Windows AMI parameter paths;
 * - Describe calls (which support no resource-level permission) only in the stack's region;
 * - no wildcard actions. The table statement is granted by `StateTable.grantReadWrite`, the decision bus's by
 *   `DecisionBus.grantPublish`, the price refresh's (to the lifecycle function only) by `PriceRefresh`.
 */
import { Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { AWS_ADAPTER_POLICY, ssmParameterArns, type IamStatement } from '../../shared/adapters/aws/iam-actions.js';
import { TAG_SKIFF_CLUSTER } from '../../shared/core/api/labels.js';

/** Props of {@link ControllerRole}. */
export interface ControllerRoleProps {
  /** EKS cluster name (the tag every Skiff resource carries). */
  readonly clusterName: string;
  /** ARN of the node role (EC2NodeClass `spec.role`). */
  readonly nodeRoleArn: string;
  /** The controllers run in a VPC: allow Lambda to manage their network interfaces. @default false */
  readonly vpcAccess?: boolean;
}

/** Where a statement applies: partition, region and account of the stack (tokens are fine). */
export interface PolicyContext {
  readonly clusterName: string;
  readonly nodeRoleArn: string;
  readonly partition: string;
  readonly region: string;
  readonly account: string;
}

/** EC2 resource types a launch creates (and tags). Source: Karpenter's `AllowScopedEC2InstanceActionsWithTags`. */
export const LAUNCHED_RESOURCE_TYPES = ['fleet', 'instance', 'volume', 'network-interface', 'launch-template', 'spot-instances-request'] as const;
/** The create calls `ec2:CreateTags` may run inside (`ec2:CreateAction`). */
export const CREATE_ACTIONS = ['CreateFleet', 'RunInstances', 'CreateLaunchTemplate'] as const;
/** Actions that launch instances, so also use existing images, snapshots, subnets, security groups and templates. */
const LAUNCH_ACTIONS = new Set(['ec2:CreateFleet', 'ec2:RunInstances']);

/** The cluster tag: key `kubernetes.io/cluster/<cluster>`, value `owned`. */
export function clusterTagKey(clusterName: string): string {
  return `kubernetes.io/cluster/${clusterName}`;
}

/** One PolicyStatement per rendered statement of the adapters' policy (the `table` scope excepted), plus why each may use a wildcard resource. */
export function adapterPolicyStatements(ctx: PolicyContext): { readonly statement: iam.PolicyStatement; readonly why: string }[] {
  const { partition: p, region: r, account: a } = ctx;
  const ec2 = (resource: string, account = '*') => `arn:${p}:ec2:${r}:${account}:${resource}`;
  const tag = clusterTagKey(ctx.clusterName);
  const out: { statement: iam.PolicyStatement; why: string }[] = [];
  const add = (sid: string, actions: readonly string[], resources: readonly string[], why: string, conditions?: Record<string, Record<string, unknown>>) =>
    out.push({ statement: new iam.PolicyStatement({ sid, actions: [...actions], resources: [...resources], ...(conditions ? { conditions } : {}) }), why });
  for (const s of AWS_ADAPTER_POLICY) render(s);
  return out;

  function render(s: IamStatement): void {
    switch (s.scope) {
      case 'any': {
        const ec2Actions = s.actions.filter((x) => x.startsWith('ec2:'));
        const others = s.actions.filter((x) => !x.startsWith('ec2:'));
        if (ec2Actions.length > 0) add(s.sid, ec2Actions, ['*'], 'EC2 Describe calls support no resource-level permissions; limited to the stack region', { StringEquals: { 'aws:RequestedRegion': r } });
        if (others.length > 0) add(`${s.sid}Other`, others, ['*'], 'read-only calls that support no resource-level permissions');
        return;
      }
      case 'clusterRequestTag': {
        add(s.sid, s.actions, LAUNCHED_RESOURCE_TYPES.map((t) => ec2(`${t}/*`, a)), 'new resources get generated ids; the request tag condition scopes them to the cluster', { StringEquals: { [`aws:RequestTag/${tag}`]: 'owned' } });
        const launch = s.actions.filter((x) => LAUNCH_ACTIONS.has(x));
        if (launch.length > 0) {
          add(`${s.sid}ExistingResources`, launch, [`arn:${p}:ec2:${r}::image/*`, `arn:${p}:ec2:${r}::snapshot/*`, ec2('security-group/*'), ec2('subnet/*')], 'EC2NodeClasses select any AMI, subnet and security group of the region (possibly shared from another account); these cannot carry a request tag');
          add(`${s.sid}LaunchTemplates`, launch, [ec2('launch-template/*', a)], 'launch templates have generated ids; the resource tag condition limits them to the cluster', { StringEquals: { [`aws:ResourceTag/${tag}`]: 'owned' } });
        }
        return;
      }
      case 'tagOnCreate':
        add(s.sid, s.actions, LAUNCHED_RESOURCE_TYPES.map((t) => ec2(`${t}/*`, a)), 'tags only while creating cluster-tagged resources (ec2:CreateAction and request tag conditions)', {
          StringEquals: { [`aws:RequestTag/${tag}`]: 'owned', 'ec2:CreateAction': [...CREATE_ACTIONS] },
        });
        return;
      case 'clusterResourceTag':
        // Karpenter's instances (and managed node groups') carry the cluster tag too: only Skiff's own tag lets a
        // terminate through, so a bug during a migration cannot take down nodes Skiff did not launch.
        add(s.sid, s.actions, [ec2('instance/*', a)], 'instance ids are not known in advance; the resource tag conditions limit them to instances Skiff launched for the cluster', {
          StringEquals: { [`aws:ResourceTag/${tag}`]: 'owned', [`aws:ResourceTag/${TAG_SKIFF_CLUSTER}`]: ctx.clusterName },
        });
        return;
      case 'publicAmiParameters':
        add(s.sid, s.actions, ssmParameterArns(r, p), 'AMI aliases read public parameters under fixed AWS paths whose names contain the Kubernetes version and architecture');
        return;
      case 'instanceProfilePath':
        add(s.sid, s.actions, [`arn:${p}:iam::${a}:instance-profile/skiff/${r}/${ctx.clusterName}/*`], 'instance profile names derive from EC2NodeClasses; the path limits them to this cluster and region');
        return;
      case 'nodeRole':
        add(s.sid, s.actions, [ctx.nodeRoleArn], 'the node role only', { StringEquals: { 'iam:PassedToService': 'ec2.amazonaws.com' } });
        return;
      case 'table':
        return; // StateTable.grantReadWrite
      case 'priceRefresh':
        return; // PriceRefresh (only for the function that runs the refresh)
      case 'decisionBus':
        return; // DecisionBus.grantPublish
      default: {
        const unknown: never = s.scope;
        throw new Error(`iam-actions.ts: unknown scope ${String(unknown)}`);
      }
    }
  }
}

/** The controllers' shared execution role. */
export class ControllerRole extends Construct {
  readonly role: iam.Role;

  constructor(scope: Construct, id: string, props: ControllerRoleProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Skiff controllers of EKS cluster ${props.clusterName}: provisioner, interruption, disruption, lifecycle`,
    });
    const policy = new iam.Policy(this, 'AdapterPolicy', { roles: [this.role] });
    const ctx: PolicyContext = { clusterName: props.clusterName, nodeRoleArn: props.nodeRoleArn, partition: stack.partition, region: stack.region, account: stack.account };
    const acknowledged = new Map<string, string>();
    for (const { statement, why } of adapterPolicyStatements(ctx)) {
      policy.addStatements(statement);
      for (const resource of statement.resources) if (resource.includes('*')) acknowledged.set(resource, `${statement.sid}: ${why}`);
    }
    if (props.vpcAccess === true) {
      // What AWSLambdaVPCAccessExecutionRole grants, inline: Lambda manages the functions' ENIs with the execution role.
      const eni = new iam.PolicyStatement({
        sid: 'LambdaVpcNetworkInterfaces',
        actions: ['ec2:CreateNetworkInterface', 'ec2:DescribeNetworkInterfaces', 'ec2:DescribeSubnets', 'ec2:DeleteNetworkInterface', 'ec2:AssignPrivateIpAddresses', 'ec2:UnassignPrivateIpAddresses'],
        resources: ['*'],
      });
      // On the role's default policy: Lambda checks these when the functions are created, and functions depend on it.
      this.role.addToPrincipalPolicy(eni);
      Validations.of(this.role).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason: 'Lambda manages the VPC functions’ network interfaces with the execution role before their ids exist (what AWSLambdaVPCAccessExecutionRole grants); X-Ray PutTraceSegments/PutTelemetryRecords support no resource-level permissions',
      });
    }
    for (const [resource, reason] of acknowledged) {
      Validations.of(policy).acknowledge({ id: `AwsSolutions-IAM5[Resource::${nagResource(resource, stack)}]`, reason });
    }
  }
}

/** A resource as cdk-nag names it in a finding id: CloudFormation pseudo parameters as `<AWS::Partition>`. */
function nagResource(resource: string, stack: Stack): string {
  return stack.resolve(resource) === resource ? resource : renderTokens(stack.resolve(resource));
}

function renderTokens(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (typeof o.Ref === 'string') return `<${o.Ref}>`;
    const join = o['Fn::Join'];
    if (Array.isArray(join) && Array.isArray(join[1])) return (join[1] as unknown[]).map(renderTokens).join(String(join[0]));
  }
  return JSON.stringify(value);
}
