// Builds SkiffStacks for the infra tests without bundling (context `aws:cdk:bundling-stacks: []`) or network.
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SkiffStack } from '../../infra/skiff-stack.js';
import { parseStackConfig, type StackConfig } from '../../infra/stack-config.js';

/** The sample configuration, as a plain object. */
export const SAMPLE_CONFIG = JSON.parse(readFileSync(fileURLToPath(new URL('../../infra/config/sample.json', import.meta.url)), 'utf8')) as Record<string, unknown>;

/** A private-endpoint configuration: the controllers run in the cluster's VPC. */
export const PRIVATE_CONFIG = {
  ...SAMPLE_CONFIG,
  cluster: { ...(SAMPLE_CONFIG.cluster as object), endpointAccess: 'private' },
  vpc: { vpcId: 'vpc-0abc12345def67890', subnetIds: ['subnet-0aaa1111bbbb22223', 'subnet-0bbb3333cccc44445'], clusterSecurityGroupId: 'sg-0ccc5555dddd66667' },
  schedules: { disruptionMinutes: 5, lifecycleMinutes: 2 },
  createAccessEntry: false,
  alarmTopicArn: 'arn:aws:sns:us-west-2:111122223333:skiff-alarms',
};

/** A stack (not bundled) and its template. */
export function synth(raw: Record<string, unknown> = SAMPLE_CONFIG): { stack: SkiffStack; template: Template; config: StackConfig } {
  const config = parseStackConfig(raw, 'test');
  // The built-in CloudFormation schema validation loads for ~20 s on first use; `npx cdk synth` runs it, the unit tests
  // assert behaviour instead.
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] }, builtinCloudFormationValidation: false });
  const stack = new SkiffStack(app, `Skiff-${config.clusterName}`, { config, env: { region: config.region, account: config.account ?? '111122223333' } });
  return { stack, template: Template.fromStack(stack), config };
}

/** The logical id of the resource at a construct path below the stack, e.g. `Queues/PodEvents/Queue`. */
export function logicalId(stack: SkiffStack, path: string): string {
  const child = stack.node.findChild(path.split('/')[0] ?? '');
  let node = child;
  for (const part of path.split('/').slice(1)) node = node.node.findChild(part);
  const resource = node.node.defaultChild ?? node;
  return stack.resolve(stack.getLogicalId(resource as never)) as string;
}
