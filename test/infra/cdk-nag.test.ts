// cdk-nag's AwsSolutions and Serverless packs find nothing unacknowledged in SkiffStack, and every acknowledgement
// says why.
import { Validations } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { IConstruct } from 'constructs';
import { AwsSolutionsChecks, ServerlessChecks, type NagPack } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { PRIVATE_CONFIG, SAMPLE_CONFIG, synth } from './stack-fixture.js';

const packs = (): NagPack[] => [new AwsSolutionsChecks(), new ServerlessChecks()];

/** `rule @ construct path` of every unacknowledged finding. */
function findings(scope: IConstruct): string[] {
  return packs().flatMap((pack) => pack.validateScope(scope).violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} @ ${(r as { constructPath?: string }).constructPath ?? r.resourceLogicalId}`)));
}

/** Every acknowledgement recorded in the tree (metadata `{ [qualified rule id]: reason }`): construct path, rule id, reason. */
function acknowledgements(scope: IConstruct): { path: string; id: string; reason: string }[] {
  return scope.node.findAll().flatMap((c) =>
    c.node.metadata
      .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((m) => Object.entries(m.data as Record<string, string>))
      .map(([id, reason]) => ({ path: c.node.path, id, reason })),
  );
}

describe('cdk-nag', () => {
  describe.each([
    ['a public endpoint', SAMPLE_CONFIG],
    ['a private endpoint (controllers in a VPC)', PRIVATE_CONFIG],
  ])('SkiffStack with %s', (_, config) => {
    const { stack } = synth(config);

    it('has no unacknowledged AwsSolutions or Serverless finding', () => {
      expect(findings(stack)).toEqual([]);
    });

    it('gives a reason for every acknowledgement', () => {
      const acks = acknowledgements(stack);
      expect(acks.length).toBeGreaterThan(0);
      for (const ack of acks) expect(ack.reason.length, `${ack.id} @ ${ack.path}`).toBeGreaterThan(30);
    });
  });

  it('reports what is not acknowledged (the check is not vacuous)', () => {
    const { stack } = synth();
    new sqs.Queue(stack, 'Unchecked', { encryption: sqs.QueueEncryption.UNENCRYPTED });
    expect(findings(stack)).toEqual(expect.arrayContaining([expect.stringMatching(/^AwsSolutions-SQS3 @ .*Unchecked/), expect.stringMatching(/^Serverless-SQSRedrivePolicy @ .*Unchecked/)]));
  });

  it('acknowledges only these rules (a new kind of finding needs a conscious decision)', () => {
    const ids = new Set(acknowledgements(synth(PRIVATE_CONFIG).stack).map((a) => a.id.replace(/^Annotation::/, '').replace(/\[.*\]$/, '[…]')));
    expect([...ids].sort()).toEqual([
      'AwsSolutions-IAM5[…]',
      'AwsSolutions-L1',
      'AwsSolutions-SMG4',
      'AwsSolutions-SQS3', // the follow-up queue: a lost follow-up leaves its work to the schedule
      'Serverless-EventBusDLQ',
      'Serverless-LambdaAsyncFailureDestination',
      'Serverless-LambdaDLQ',
      'Serverless-LambdaEventSourceMappingDestination',
      'Serverless-LambdaLatestVersion',
      'Serverless-SQSRedrivePolicy',
    ]);
  });
});
