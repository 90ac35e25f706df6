/**
 * Every IAM action the AWS adapters call, in one place, with the scope each must be granted on — what the CDK stack
 * turns into the Lambda role's policy (least privilege: no wildcard actions, create actions only with the cluster
 * request tag, terminate and tag changes only on instances carrying the cluster tag, `iam:PassRole` only for the
 * node role, SSM reads only under the public EKS AMI parameters). Pure data: no SDK import, so the stack can read it.
 * `test/adapters/aws/iam-actions.test.ts` checks that every SDK command the adapters send is listed here.
 *
 * Scopes follow Karpenter's reference controller policy (docs `reference/cloudformation.md`), narrowed to what
 * Skiff calls.
 */

/** What a statement's resources and conditions are, for the stack to render. */
export type IamScope =
  /** `Resource: *` — Describe/Get calls that support no resource-level permissions. */
  | 'any'
  /** Create calls: only with `aws:RequestTag/kubernetes.io/cluster/<cluster>` = `owned`. */
  | 'clusterRequestTag'
  /** `ec2:CreateTags` only while creating (`ec2:CreateAction` ∈ CreateFleet, RunInstances, CreateLaunchTemplate). */
  | 'tagOnCreate'
  /**
   * Instances with `aws:ResourceTag/kubernetes.io/cluster/<cluster>` = `owned` and `aws:ResourceTag/skiff.dev/cluster`
   * = `<cluster>`: only what Skiff launched (Karpenter's instances carry the first tag too).
   */
  | 'clusterResourceTag'
  /** `arn:<partition>:ssm:<region>::parameter/aws/service/{eks,bottlerocket,ami-windows-latest}/*`. */
  | 'publicAmiParameters'
  /** Instance profiles under the path `/skiff/<region>/<cluster>/`. */
  | 'instanceProfilePath'
  /** The node role's ARN only, with `iam:PassedToService` = `ec2.amazonaws.com`. */
  | 'nodeRole'
  /** The Skiff DynamoDB table and its indexes. */
  | 'table'
  /**
   * Price refresh reads (`pricing.ts`): `Resource: *` (neither call supports resource-level permissions), granted only
   * to the function that runs the refresh (the shared controller role's statement carries the condition
   * `lambda:SourceFunctionArn` = that function), `ec2:` calls limited to the stack's region.
   */
  | 'priceRefresh'
  /** `events:PutEvents` on the stack's decision bus only, with `events:source` = {@link DECISION_EVENT_SOURCE}. */
  | 'decisionBus';

/** One statement of the adapters' policy. */
export interface IamStatement {
  /** Statement id (PascalCase, unique). */
  readonly sid: string;
  readonly actions: readonly string[];
  readonly scope: IamScope;
}

/** The AWS adapters' policy. Actions appear in exactly one statement. */
export const AWS_ADAPTER_POLICY: readonly IamStatement[] = [
  // ec2-cloud-provider.ts (CreateFleet launches; RunInstances is authorised by CreateFleet on the caller's behalf).
  { sid: 'LaunchWithClusterTag', actions: ['ec2:CreateFleet', 'ec2:RunInstances', 'ec2:CreateLaunchTemplate'], scope: 'clusterRequestTag' },
  { sid: 'TagOnCreate', actions: ['ec2:CreateTags'], scope: 'tagOnCreate' },
  { sid: 'TerminateClusterInstances', actions: ['ec2:TerminateInstances'], scope: 'clusterResourceTag' },
  // Reads: instances (list, resume), images (ami.ts), subnets and security groups (discovery.ts), launch templates
  // (launch-templates.ts), instance types and offerings (instance-types.ts).
  {
    sid: 'Describe',
    actions: [
      'ec2:DescribeInstances',
      'ec2:DescribeImages',
      'ec2:DescribeSubnets',
      'ec2:DescribeSecurityGroups',
      'ec2:DescribeLaunchTemplates',
      'ec2:DescribeInstanceTypes',
      'ec2:DescribeInstanceTypeOfferings',
    ],
    scope: 'any',
  },
  // pricing.ts: the 12-hourly price refresh (docs/karpenter-semantics.md#pricing), run by the lifecycle function only.
  { sid: 'RefreshPrices', actions: ['ec2:DescribeSpotPriceHistory', 'pricing:GetProducts'], scope: 'priceRefresh' },
  // decision-events.ts: decisions on the stack's EventBridge bus.
  { sid: 'PublishDecisions', actions: ['events:PutEvents'], scope: 'decisionBus' },
  { sid: 'EksAmiParameters', actions: ['ssm:GetParameters'], scope: 'publicAmiParameters' },
  { sid: 'InstanceProfiles', actions: ['iam:GetInstanceProfile', 'iam:CreateInstanceProfile', 'iam:TagInstanceProfile', 'iam:AddRoleToInstanceProfile'], scope: 'instanceProfilePath' },
  { sid: 'PassNodeRole', actions: ['iam:PassRole'], scope: 'nodeRole' },
  { sid: 'Table', actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:Query'], scope: 'table' },
];

/**
 * The `source` of every Skiff decision event on EventBridge (`decision-events.ts` sends it; the stack's grant allows
 * only it through the `events:source` condition key, EventBridge user guide "Using IAM policy conditions").
 */
export const DECISION_EVENT_SOURCE = 'skiff';

/** The actions of every statement with `scope`, in statement order. */
export function actionsOfScope(scope: IamScope): string[] {
  return AWS_ADAPTER_POLICY.filter((s) => s.scope === scope).flatMap((s) => s.actions);
}

/**
 * Paths of the public SSM parameters alias terms read (EKS AL2/AL2023, Bottlerocket, Windows). The IAM resource is
 * `arn:<partition>:ssm:<region>::parameter<path>` (public parameters have no account); see {@link ssmParameterArns}.
 * `ssmParameter` terms that name a parameter of the user's own need that ARN granted too.
 */
export const SSM_PARAMETER_PATHS = ['/aws/service/eks/*', '/aws/service/bottlerocket/*', '/aws/service/ami-windows-latest/*'] as const;

/**
 * The IAM resource ARNs of {@link SSM_PARAMETER_PATHS} in one region.
 * @param region e.g. `us-west-2`
 * @param partition `aws`, `aws-cn`, `aws-us-gov`
 * @default partition 'aws'
 * @example ssmParameterArns('us-west-2')[0] // 'arn:aws:ssm:us-west-2::parameter/aws/service/eks/*'
 */
export function ssmParameterArns(region: string, partition = 'aws'): string[] {
  return SSM_PARAMETER_PATHS.map((path) => `arn:${partition}:ssm:${region}::parameter${path}`);
}

/** Every action of {@link AWS_ADAPTER_POLICY}, sorted. */
export function adapterActions(): string[] {
  return AWS_ADAPTER_POLICY.flatMap((s) => s.actions).sort();
}
