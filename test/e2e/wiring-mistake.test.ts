// A wiring mistake made on purpose, to show the end-to-end run catches what the unit tests cannot: the stack sets the
// provisioner's table variable under another name than the code reads (renamed in the template only). Every piece
// still passes its own tests; deployed, the provisioner fails on its first invocation, no pod gets a node, and the
// pod events end in the dead-letter queue — the run reports all three.
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CONTROLLER_ENV } from '../../shared/lambda/env.js';
import { eventually } from '../support/fake-kube-apiserver.js';
import { startComposition, type Composition } from './support/composition.js';

let c: Composition;

beforeAll(async () => {
  c = await startComposition({
    mutateTemplate: (template, ids) => {
      const variables = (template.Resources[ids.Provisioner]!.Properties!.Environment as { Variables: Record<string, unknown> }).Variables;
      variables.SKIFF_TABLE = variables[CONTROLLER_ENV.tableName];
      delete variables[CONTROLLER_ENV.tableName];
    },
  });
});

afterAll(async () => {
  await c?.close();
});

it('catches an environment variable renamed in the stack only: the provisioner fails, no pod gets a node, the events reach the DLQ', async () => {
  c.fakes.deployments.set('web', { name: 'web', namespace: 'default', replicas: 2, requests: { cpu: '500m', memory: '512Mi' } });
  // the scenario check of deployed-composition.test.ts fails: the pods stay pending
  const scheduled = eventually(() => expect([...c.api.objects.pods!.values()].filter((p) => (p.spec as { nodeName?: string }).nodeName)).toHaveLength(2), 8_000);
  await expect(scheduled).rejects.toThrow();
  expect(c.aws.calls.filter((call) => call.action === 'CreateFleet')).toHaveLength(0);
  // and says why: the provisioner's cold start names the variable the stack did not set
  const failed = c.invocations.filter((i) => i.function === 'Provisioner' && !i.ok);
  expect(failed.length).toBeGreaterThan(0);
  expect(failed[0]!.error).toContain(`environment variable ${CONTROLLER_ENV.tableName} is not set`);
  // the batches were never acknowledged: after the queue's maxReceiveCount they sit in the dead-letter queue
  const dlq = c.deployment.queues.find((q) => q.logicalId.startsWith('QueuesPodEventsDeadLetters'))!;
  await eventually(async () => {
    const { Attributes } = await c.sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlq.url, AttributeNames: ['ApproximateNumberOfMessages'] }));
    expect(Number(Attributes?.ApproximateNumberOfMessages ?? 0)).toBeGreaterThan(0);
  }, 30_000);
  // the other functions, configured correctly, run
  expect(c.invocations.some((i) => i.function === 'Lifecycle' && i.ok)).toBe(true);
});
