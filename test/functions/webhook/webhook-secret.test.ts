import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isWebhookSecretError, webhookSecret } from '../../../shared/lambda/webhook-secret.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

const sm = mockClient(SecretsManagerClient);
const T0 = Date.UTC(2026, 2, 2, 8, 0, 0);

beforeEach(() => {
  sm.reset();
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(T0);
});
afterEach(() => vi.useRealTimers());

function secret() {
  return webhookSecret({ secretId: 'skiff/webhook', client: new SecretsManagerClient({ region: 'eu-west-1' }), clock: { now: () => Date.now() } });
}

describe('webhookSecret', () => {
  it('reads Secrets Manager once per 5 minutes', async () => {
    sm.on(GetSecretValueCommand).resolvesOnce({ SecretString: 'one' }).resolves({ SecretString: 'two' });
    const read = secret();
    expect(await read()).toBe('one');
    vi.setSystemTime(T0 + 299_000);
    expect(await read()).toBe('one');
    expect(sm.commandCalls(GetSecretValueCommand)).toHaveLength(1);
    vi.setSystemTime(T0 + 301_000);
    expect(await read()).toBe('two');
    expect(sm.commandCalls(GetSecretValueCommand).map((c) => c.args[0].input.SecretId)).toEqual(['skiff/webhook', 'skiff/webhook']);
  });

  it('honours a forced refresh at most once a minute', async () => {
    sm.on(GetSecretValueCommand).resolves({ SecretString: 'v' });
    const read = secret();
    await read();
    await read({ refresh: true });
    await read({ refresh: true });
    expect(sm.commandCalls(GetSecretValueCommand)).toHaveLength(2);
    vi.setSystemTime(T0 + 60_000);
    await read({ refresh: true });
    expect(sm.commandCalls(GetSecretValueCommand)).toHaveLength(3);
  });

  it('throws a WebhookSecretError naming the secret when it cannot be read, is binary or is empty', async () => {
    sm.on(GetSecretValueCommand).rejectsOnce(new Error('AccessDeniedException')).resolvesOnce({ SecretBinary: new Uint8Array([1]) }).resolvesOnce({ SecretString: '' });
    for (const pattern of [/reading webhook secret skiff\/webhook failed/, /is binary/, /is empty/]) {
      const error = await secret()().catch((e: unknown) => e);
      expect(isWebhookSecretError(error)).toBe(true);
      expect((error as Error).message).toMatch(pattern);
    }
  });
});
