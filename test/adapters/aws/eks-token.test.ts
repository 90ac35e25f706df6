import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  decodeEksToken,
  EKS_TOKEN_PREFIX,
  eksToken,
  EksTokenCache,
  NodeSha256,
  TOKEN_REUSE_MS,
  type EksCredentials,
} from '../../../shared/adapters/aws/eks-token.js';

/** The AWS documentation's example key pair (SigV4 test suite / IAM docs). */
const CREDENTIALS: EksCredentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const NOW = Date.UTC(2024, 0, 2, 3, 4, 5);

/** SigV4 query-string signing, written out step by step from the AWS docs ("Create a signed AWS API request"). */
function independentSignature(url: URL, headers: Readonly<Record<string, string>>, secret: string): string {
  const enc = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const params = [...url.searchParams.entries()].filter(([k]) => k !== 'X-Amz-Signature');
  const canonicalQuery = params
    .map(([k, v]) => [enc(k), enc(v)] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const names = Object.keys(headers).map((h) => h.toLowerCase()).sort();
  const canonicalHeaders = names.map((h) => `${h}:${headers[h]!.trim()}\n`).join('');
  const canonicalRequest = ['GET', '/', canonicalQuery, canonicalHeaders, names.join(';'), createHash('sha256').update('').digest('hex')].join('\n');
  const amzDate = url.searchParams.get('X-Amz-Date')!;
  const [, date, region, service] = url.searchParams.get('X-Amz-Credential')!.split('/');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonicalRequest).digest('hex')].join('\n');
  const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();
  const kSigning = hmac(hmac(hmac(hmac(`AWS4${secret}`, date!), region!), service!), 'aws4_request');
  return createHmac('sha256', kSigning).update(stringToSign).digest('hex');
}

describe('eksToken', () => {
  it('wraps a presigned STS GetCallerIdentity URL in k8s-aws-v1.<base64url>', async () => {
    const token = await eksToken({ clusterName: 'prod', region: 'eu-west-1', credentials: CREDENTIALS, now: NOW });
    expect(token.startsWith(EKS_TOKEN_PREFIX)).toBe(true);
    expect(token.slice(EKS_TOKEN_PREFIX.length)).toMatch(/^[A-Za-z0-9_-]+$/); // base64url, no padding
    const url = decodeEksToken(token);
    expect(url.protocol).toBe('https:');
    expect(url.host).toBe('sts.eu-west-1.amazonaws.com');
    expect(url.pathname).toBe('/');
    const q = url.searchParams;
    expect(q.get('Action')).toBe('GetCallerIdentity');
    expect(q.get('Version')).toBe('2011-06-15');
    expect(q.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256');
    expect(q.get('X-Amz-Credential')).toBe('AKIDEXAMPLE/20240102/eu-west-1/sts/aws4_request');
    expect(q.get('X-Amz-Date')).toBe('20240102T030405Z');
    expect(q.get('X-Amz-Expires')).toBe('60');
    expect(q.get('X-Amz-SignedHeaders')?.split(';')).toEqual(['host', 'x-k8s-aws-id']);
    expect(q.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('signs so that an independent SigV4 computation gives the same signature', async () => {
    const url = decodeEksToken(await eksToken({ clusterName: 'prod', region: 'eu-west-1', credentials: CREDENTIALS, now: NOW }));
    const expected = independentSignature(url, { host: 'sts.eu-west-1.amazonaws.com', 'x-k8s-aws-id': 'prod' }, CREDENTIALS.secretAccessKey);
    expect(url.searchParams.get('X-Amz-Signature')).toBe(expected);
  });

  it('signs the cluster name: another cluster gets another signature', async () => {
    const a = decodeEksToken(await eksToken({ clusterName: 'prod', region: 'eu-west-1', credentials: CREDENTIALS, now: NOW }));
    const b = decodeEksToken(await eksToken({ clusterName: 'staging', region: 'eu-west-1', credentials: CREDENTIALS, now: NOW }));
    expect(a.searchParams.get('X-Amz-Signature')).not.toBe(b.searchParams.get('X-Amz-Signature'));
    const forgery = independentSignature(a, { host: 'sts.eu-west-1.amazonaws.com', 'x-k8s-aws-id': 'staging' }, CREDENTIALS.secretAccessKey);
    expect(a.searchParams.get('X-Amz-Signature')).not.toBe(forgery);
  });

  it('carries a session token as X-Amz-Security-Token, covered by the signature', async () => {
    const session = { ...CREDENTIALS, sessionToken: 'IQoJb3JpZ2luX2Vj/+session==' };
    const url = decodeEksToken(await eksToken({ clusterName: 'prod', region: 'us-east-1', credentials: async () => session, now: NOW }));
    expect(url.host).toBe('sts.us-east-1.amazonaws.com');
    expect(url.searchParams.get('X-Amz-Security-Token')).toBe(session.sessionToken);
    const expected = independentSignature(url, { host: 'sts.us-east-1.amazonaws.com', 'x-k8s-aws-id': 'prod' }, CREDENTIALS.secretAccessKey);
    expect(url.searchParams.get('X-Amz-Signature')).toBe(expected);
  });
});

describe('NodeSha256', () => {
  it('hashes, and HMACs when given a secret (RFC 4231 test case 2)', async () => {
    const plain = new NodeSha256();
    plain.update('abc');
    expect(Buffer.from(await plain.digest()).toString('hex')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    const mac = new NodeSha256('Jefe');
    mac.update(new TextEncoder().encode('what do ya want for nothing?'));
    expect(Buffer.from(await mac.digest()).toString('hex')).toBe('5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');
    mac.reset();
    mac.update('what do ya want ');
    mac.update('for nothing?');
    expect(Buffer.from(await mac.digest()).toString('hex')).toBe('5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');
  });
});

describe('EksTokenCache', () => {
  const clockAt = (start: number) => {
    const clock = { t: start, now: () => clock.t };
    return clock;
  };

  it('reuses a token for 14 minutes, then signs a new one', async () => {
    const clock = clockAt(NOW);
    let calls = 0;
    const cache = new EksTokenCache({ clusterName: 'prod', region: 'eu-west-1', clock, credentials: async () => (calls++, CREDENTIALS) });
    const first = await cache.token();
    clock.t += TOKEN_REUSE_MS - 1;
    expect(await cache.token()).toBe(first);
    clock.t += 1;
    const second = await cache.token();
    expect(second).not.toBe(first);
    expect(decodeEksToken(second).searchParams.get('X-Amz-Date')).toBe('20240102T031805Z');
    expect(calls).toBe(2);
  });

  it('refreshes before the credentials expire, and shares one signing between concurrent callers', async () => {
    const clock = clockAt(NOW);
    let calls = 0;
    const expiring = { ...CREDENTIALS, sessionToken: 's', expiration: new Date(NOW + 5 * 60_000) };
    const cache = new EksTokenCache({ clusterName: 'prod', region: 'eu-west-1', clock, credentials: async () => (calls++, expiring) });
    const [a, b] = await Promise.all([cache.token(), cache.token()]);
    expect(a).toBe(b);
    expect(calls).toBe(1);
    clock.t += 4 * 60_000; // one minute before the credentials expire
    expect(await cache.token()).not.toBe(a);
    expect(calls).toBe(2);
  });

  it('signs again after invalidate()', async () => {
    const clock = clockAt(NOW);
    let calls = 0;
    const cache = new EksTokenCache({ clusterName: 'prod', region: 'eu-west-1', clock, credentials: async () => (calls++, CREDENTIALS) });
    await cache.token();
    cache.invalidate();
    await cache.token();
    expect(calls).toBe(2);
  });
});
