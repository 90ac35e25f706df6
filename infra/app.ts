/**
 * The CDK app: one {@link SkiffStack} per configuration, checked by cdk-nag's AwsSolutions and Serverless packs (a
 * finding that is not acknowledged, with a reason, next to the construct it concerns fails the synth).
 *
 * @example CDK_DISABLE_VERSION_CHECK=1 npx cdk synth -c skiff:config=infra/config/sample.json
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { SkiffStack } from './skiff-stack.js';
import { CONFIG_CONTEXT_KEY, loadStackConfig } from './stack-config.js';

const app = new App();
const config = loadStackConfig(app.node.tryGetContext(CONFIG_CONTEXT_KEY));
const account = config.account ?? process.env.CDK_DEFAULT_ACCOUNT;
new SkiffStack(app, config.stackName ?? `Skiff-${config.clusterName}`, {
  config,
  env: { region: config.region, ...(account !== undefined ? { account } : {}) },
  description: `Skiff node autoscaler for EKS cluster ${config.clusterName}`,
});
Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
app.synth();
