/**
 * `Webhook`: the Lambda behind a Function URL that the in-cluster relay posts signed pod and node events to, and the
 * Secrets Manager secret holding the HMAC key both sides share. The Function URL has no IAM auth: the relay runs in
 * the cluster without AWS credentials, and the HMAC signature (checked before anything is parsed) is the auth
 * (docs/contracts.md#webhook). Reserved concurrency caps what a flood of requests to the public URL can use of the
 * account's concurrency, so it cannot throttle the controllers (README, "Cluster ingress").
 */
import { CfnOutput, Duration, Validations } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { WEBHOOK_ENV } from '../../shared/lambda/env.js';
import type { EventQueues } from './event-queues.js';
import { SkiffFunction } from './skiff-function.js';

/** Props of {@link Webhook}. */
export interface WebhookProps {
  readonly clusterName: string;
  readonly queues: EventQueues;
  /** @default one month */
  readonly logRetention?: logs.RetentionDays;
  /**
   * Reserved concurrency: the most executions the public URL can hold at once; Lambda answers requests beyond it 429
   * without running the function. Required, so the stack always caps it (`reservedConcurrency.webhook` of the stack
   * configuration).
   */
  readonly reservedConcurrentExecutions: number;
  /** Ship a source map (`SkiffFunctionProps.sourceMaps`). @default false */
  readonly sourceMaps?: boolean;
}

/** The webhook function, its URL and its secret. */
export class Webhook extends Construct {
  readonly handler: SkiffFunction;
  readonly url: lambda.FunctionUrl;
  readonly secret: secretsmanager.Secret;

  constructor(scope: Construct, id: string, props: WebhookProps) {
    super(scope, id);
    this.secret = new secretsmanager.Secret(this, 'Secret', {
      description: `HMAC key the Skiff relay of EKS cluster ${props.clusterName} signs webhook requests with (SecretString = the key)`,
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
    });
    Validations.of(this.secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason: 'The HMAC key is shared with the relay through a Kubernetes Secret, so it is rotated by hand (new value here, then the relay); a rotation Lambda could not update the cluster side. The webhook refreshes a changed key within a minute of the first mismatch.',
    });
    this.handler = new SkiffFunction(this, 'Handler', {
      entry: 'functions/webhook/handler.ts',
      description: `Skiff webhook of EKS cluster ${props.clusterName}: verifies relay batches and enqueues pod events`,
      memorySize: 256,
      timeout: Duration.seconds(15),
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      environment: { [WEBHOOK_ENV.cluster]: props.clusterName },
      ...(props.logRetention !== undefined ? { logRetention: props.logRetention } : {}),
      ...(props.sourceMaps !== undefined ? { sourceMaps: props.sourceMaps } : {}),
    });
    props.queues.grantSendPodEvents(this.handler);
    this.secret.grantRead(this.handler);
    this.handler.addEnvironment(WEBHOOK_ENV.webhookSecretId, this.secret.secretArn);
    this.handler.acknowledgeSynchronousOnly('Function URL; the relay retries a failed request');
    this.url = this.handler.function.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.NONE });
    new CfnOutput(this, 'Url', { value: this.url.url, description: 'POST endpoint of the relay (WEBHOOK_URL in infra/k8s/relay.yaml)' });
    new CfnOutput(this, 'SecretArn', { value: this.secret.secretArn, description: 'Secrets Manager secret holding the relay HMAC key' });
  }
}
