// The signing contract's two halves: the header checks that need no secret, and the HMAC comparison.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkSignatureHeaders, signatureMatches, signWebhookBody } from '../../../shared/lambda/webhook-signature.js';

const NOW = Date.UTC(2026, 2, 2, 8, 0, 0);
const TS = String(NOW / 1000);
const BODY = '{"cluster":"prod","events":[]}';
const hmac = (secret: string, ts: string, body: string) => `sha256=${createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex')}`;

describe('checkSignatureHeaders', () => {
  it('accepts well-formed, fresh headers and returns the timestamp and the 32 digest bytes', () => {
    const signature = hmac('k', TS, BODY);
    const checked = checkSignatureHeaders({ timestamp: TS, signature }, NOW);
    expect(checked).toEqual({ ok: true, timestamp: TS, digest: Buffer.from(signature.slice('sha256='.length), 'hex') });
    // Upper-case hex is a valid encoding of the same digest.
    expect(checkSignatureHeaders({ timestamp: TS, signature: `sha256=${signature.slice(7).toUpperCase()}` }, NOW).ok).toBe(true);
  });

  it.each([
    [{ timestamp: undefined, signature: undefined }, 'missing-timestamp'],
    [{ timestamp: '', signature: 'sha256=' + 'a'.repeat(64) }, 'missing-timestamp'],
    [{ timestamp: '1e9', signature: undefined }, 'malformed-timestamp'],
    [{ timestamp: '1234567890123', signature: undefined }, 'malformed-timestamp'],
    [{ timestamp: String(NOW / 1000 - 301), signature: undefined }, 'stale-timestamp'],
    [{ timestamp: String(NOW / 1000 + 301), signature: undefined }, 'stale-timestamp'],
    [{ timestamp: TS, signature: undefined }, 'missing-signature'],
    [{ timestamp: TS, signature: 'a'.repeat(64) }, 'malformed-signature'],
    [{ timestamp: TS, signature: 'sha1=' + 'a'.repeat(40) }, 'malformed-signature'],
    [{ timestamp: TS, signature: 'sha256=' + 'a'.repeat(63) }, 'malformed-signature'],
  ] as const)('refuses %j as %s, checking the timestamp before the signature', (headers, problem) => {
    expect(checkSignatureHeaders(headers, NOW)).toMatchObject({ ok: false, problem });
  });

  it('takes the skew window as a parameter (300 s by default)', () => {
    const at = String(NOW / 1000 - 60);
    expect(checkSignatureHeaders({ timestamp: at, signature: hmac('k', at, BODY) }, NOW).ok).toBe(true);
    expect(checkSignatureHeaders({ timestamp: at, signature: hmac('k', at, BODY) }, NOW, 59)).toMatchObject({ ok: false, problem: 'stale-timestamp' });
  });
});

describe('signatureMatches', () => {
  const checked = (signature: string, ts = TS) => {
    const c = checkSignatureHeaders({ timestamp: ts, signature }, NOW);
    if (!c.ok) throw new Error(c.message);
    return c;
  };

  it('matches the HMAC-SHA256 of "<timestamp>.<body>" under the secret, and what signWebhookBody writes', () => {
    expect(signatureMatches(checked(hmac('k', TS, BODY)), BODY, 'k')).toBe(true);
    expect(signatureMatches(checked(hmac('k', TS, BODY)), Buffer.from(BODY), 'k')).toBe(true);
    const signed = signWebhookBody('k', BODY, NOW);
    expect(signatureMatches(checked(signed['x-skiff-signature'], signed['x-skiff-timestamp']), BODY, 'k')).toBe(true);
  });

  it('does not match another secret, another body, another timestamp, or an empty secret', () => {
    const c = checked(hmac('k', TS, BODY));
    expect(signatureMatches(c, BODY, 'other')).toBe(false);
    expect(signatureMatches(c, `${BODY} `, 'k')).toBe(false);
    expect(signatureMatches(checked(hmac('k', TS, BODY), String(NOW / 1000 - 1)), BODY, 'k')).toBe(false);
    expect(signatureMatches(checked(hmac('', TS, BODY)), BODY, '')).toBe(false);
  });
});
