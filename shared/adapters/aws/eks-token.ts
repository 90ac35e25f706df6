/**
 * EKS bearer tokens: the `aws eks get-token` / aws-iam-authenticator token the Kubernetes API server of an EKS
 * cluster accepts, made without a CLI or kubeconfig so a Lambda can talk to the cluster.
 *
 * A token is `k8s-aws-v1.` followed by the unpadded base64url of a SigV4-**presigned** STS `GetCallerIdentity` URL
 * (`https://sts.<region>.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15&X-Amz-…`) whose signed headers
 * include `x-k8s-aws-id: <cluster name>`. EKS replays the URL against STS to learn the caller's IAM identity, then
 * maps it to Kubernetes groups (access entries or the aws-auth ConfigMap).
 *
 * Sources: kubernetes-sigs/aws-iam-authenticator `pkg/token/token.go` (`v1Prefix = "k8s-aws-v1."`,
 * `clusterIDHeader = "x-k8s-aws-id"`, `X-Amz-Expires` 60, a token accepted for 15 minutes after its `X-Amz-Date`, and
 * the CLI reporting it expired one minute early, at 14 minutes); AWS CLI `awscli/customizations/eks/get_token.py`;
 * AWS docs, "Authenticating Requests: Using Query Parameters (AWS Signature Version 4)".
 */
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SignatureV4 } from '@smithy/signature-v4';
import type { Clock } from '../../ports/clock.js';

/** Prefix of every EKS token (aws-iam-authenticator `v1Prefix`). */
export const EKS_TOKEN_PREFIX = 'k8s-aws-v1.';
/** The header naming the cluster, signed into the URL so a token for one cluster is refused by another. */
export const CLUSTER_ID_HEADER = 'x-k8s-aws-id';
/** `X-Amz-Expires` of the presigned URL, seconds (aws-iam-authenticator and the AWS CLI send 60). */
export const PRESIGN_EXPIRES_SECONDS = 60;
/** How long EKS accepts a token after its `X-Amz-Date`: 15 minutes, in ms (aws-iam-authenticator `presignedURLExpiration`). */
export const TOKEN_VALIDITY_MS = 15 * 60_000;
/**
 * How long a cached token is reused: 14 minutes, in ms — one minute short of {@link TOKEN_VALIDITY_MS}, as the AWS
 * CLI's `expirationTimestamp` and aws-iam-authenticator's `GetWithOptions` report it, leaving room for clock skew
 * and a slow request.
 */
export const TOKEN_REUSE_MS = TOKEN_VALIDITY_MS - 60_000;
/** A token is not reused within this margin of its credentials' own expiry, ms. */
export const CREDENTIALS_EXPIRY_MARGIN_MS = 60_000;

/** AWS credentials, as the SDK's credential providers return them. */
export interface EksCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** Present for temporary (STS, Lambda role) credentials; goes into the URL as `X-Amz-Security-Token`. */
  readonly sessionToken?: string;
  /** When temporary credentials stop working; a cached token is refreshed before then. */
  readonly expiration?: Date;
}

/** Something that yields credentials: fixed ones, or a provider such as `@aws-sdk/credential-provider-node`'s. */
export type EksCredentialSource = EksCredentials | (() => Promise<EksCredentials>);

/** Input of {@link eksToken}. */
export interface EksTokenInput {
  /** The EKS cluster name (not its ARN), signed as the `x-k8s-aws-id` header. */
  readonly clusterName: string;
  /** The AWS region of the cluster and of the regional STS endpoint, e.g. `eu-west-1`. */
  readonly region: string;
  readonly credentials: EksCredentialSource;
  /** Signing time, epoch ms (UTC); the token is accepted until `now + 15 min`. */
  readonly now: number;
}

/**
 * SHA-256 (or HMAC-SHA-256 when a secret is given) on `node:crypto`, in the `Checksum` shape `@smithy/signature-v4`
 * expects (`new (secret?) → { update, digest, reset }`), so no `@aws-crypto/*` package is needed.
 */
export class NodeSha256 {
  readonly #secret: string | ArrayBuffer | ArrayBufferView | undefined;
  #hash: Hash | Hmac;

  /** @param secret the HMAC key; without one this is a plain SHA-256 */
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.#secret = secret;
    this.#hash = this.#fresh();
  }

  /** Feeds bytes (a string is UTF-8). */
  update(chunk: string | ArrayBuffer | ArrayBufferView): void {
    this.#hash.update(toBytes(chunk));
  }

  /** The 32-byte digest of everything fed since construction or the last {@link NodeSha256.reset}. */
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.#hash.digest());
  }

  /** Starts over with the same key. */
  reset(): void {
    this.#hash = this.#fresh();
  }

  #fresh(): Hash | Hmac {
    return this.#secret === undefined ? createHash('sha256') : createHmac('sha256', toBytes(this.#secret));
  }
}

function toBytes(data: string | ArrayBuffer | ArrayBufferView): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data);
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

/** The regional STS endpoint host, e.g. `sts.eu-west-1.amazonaws.com` (the CLI uses the regional endpoint). */
export function stsHost(region: string): string {
  return `sts.${region}.amazonaws.com`;
}

/**
 * The presigned STS `GetCallerIdentity` URL an EKS token wraps.
 * @returns `https://sts.<region>.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15&X-Amz-Algorithm=…`
 * @throws whatever the credential provider throws when credentials cannot be resolved
 */
export async function presignedCallerIdentityUrl(input: EksTokenInput): Promise<string> {
  const credentials = typeof input.credentials === 'function' ? await input.credentials() : input.credentials;
  const signer = new SignatureV4({ service: 'sts', region: input.region, credentials, sha256: NodeSha256, uriEscapePath: true, applyChecksum: false });
  const host = stsHost(input.region);
  const signed = await signer.presign(
    {
      method: 'GET',
      protocol: 'https:',
      hostname: host,
      path: '/',
      query: { Action: 'GetCallerIdentity', Version: '2011-06-15' },
      headers: { host, [CLUSTER_ID_HEADER]: input.clusterName },
    },
    { expiresIn: PRESIGN_EXPIRES_SECONDS, signingDate: new Date(input.now) },
  );
  const query = Object.entries(signed.query ?? {})
    .flatMap(([k, v]) => (Array.isArray(v) ? v.map((x: string) => [k, x] as const) : v === null || v === undefined ? [] : [[k, v] as const]))
    .map(([k, v]) => `${rfc3986(k)}=${rfc3986(v)}`)
    .join('&');
  return `https://${host}${signed.path}?${query}`;
}

/** URI-encodes as SigV4 does (RFC 3986 unreserved characters stay, everything else is %XX). */
function rfc3986(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * An EKS bearer token for `clusterName`, signed at `now`.
 * @returns `k8s-aws-v1.<unpadded base64url of the presigned GetCallerIdentity URL>`
 * @throws whatever the credential provider throws when credentials cannot be resolved
 * @example
 * const token = await eksToken({ clusterName: 'prod', region: 'eu-west-1', credentials: fromEnv(), now: Date.now() });
 * // Authorization: Bearer k8s-aws-v1.aHR0cHM6Ly9zdHMuZXUtd2VzdC0xLmFtYXpvbmF3cy5jb20v…
 */
export async function eksToken(input: EksTokenInput): Promise<string> {
  const url = await presignedCallerIdentityUrl(input);
  return EKS_TOKEN_PREFIX + Buffer.from(url, 'utf8').toString('base64url');
}

/**
 * The presigned URL inside an EKS token (the inverse of the encoding in {@link eksToken}).
 * @throws {RangeError} when `token` does not start with `k8s-aws-v1.`
 */
export function decodeEksToken(token: string): URL {
  if (!token.startsWith(EKS_TOKEN_PREFIX)) throw new RangeError(`not an EKS token (no ${EKS_TOKEN_PREFIX} prefix)`);
  return new URL(Buffer.from(token.slice(EKS_TOKEN_PREFIX.length), 'base64url').toString('utf8'));
}

/** Options of {@link EksTokenCache}. */
export interface EksTokenCacheOptions {
  readonly clusterName: string;
  readonly region: string;
  /** @default the Node credential provider chain (`@aws-sdk/credential-provider-node` `defaultProvider()`: env, SSO, web identity, ECS/EC2 metadata, the Lambda role) */
  readonly credentials?: EksCredentialSource;
  readonly clock: Clock;
}

/**
 * A token per cluster, reused for {@link TOKEN_REUSE_MS} (14 min) and refreshed before its credentials expire.
 * Concurrent callers share one signing. The Kubernetes adapter calls {@link EksTokenCache.token} before each request.
 * @example
 * const tokens = new EksTokenCache({ clusterName: 'prod', region: 'eu-west-1', clock: systemClock });
 * new KubernetesCluster({ server, caData, token: () => tokens.token() });
 */
export class EksTokenCache {
  readonly #options: EksTokenCacheOptions;
  readonly #credentials: () => Promise<EksCredentials>;
  #current: { readonly token: string; readonly reuseUntil: number } | undefined;
  #pending: Promise<string> | undefined;

  constructor(options: EksTokenCacheOptions) {
    this.#options = options;
    const source = options.credentials ?? defaultProvider();
    this.#credentials = typeof source === 'function' ? source : async () => source;
  }

  /**
   * A valid token: the cached one while fresh, else a new one.
   * @throws whatever the credential provider throws (nothing is cached then)
   */
  async token(): Promise<string> {
    const now = this.#options.clock.now();
    if (this.#current !== undefined && now < this.#current.reuseUntil) return this.#current.token;
    this.#pending ??= this.#refresh(now).finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  /** Forgets the cached token (e.g. after the API server answered 401). */
  invalidate(): void {
    this.#current = undefined;
  }

  async #refresh(now: number): Promise<string> {
    const credentials = await this.#credentials();
    const token = await eksToken({ clusterName: this.#options.clusterName, region: this.#options.region, credentials, now });
    const credentialsEnd = credentials.expiration ? credentials.expiration.getTime() - CREDENTIALS_EXPIRY_MARGIN_MS : Infinity;
    this.#current = { token, reuseUntil: Math.min(now + TOKEN_REUSE_MS, credentialsEnd) };
    return token;
  }
}
