/**
 * The relay's configuration, from its environment (the Deployment in `infra/k8s/relay.yaml` sets it):
 *
 * | variable | meaning | default |
 * |---|---|---|
 * | `WEBHOOK_URL` | the webhook Lambda's Function URL (`https://…lambda-url.<region>.on.aws/`) | required |
 * | `SKIFF_CLUSTER` | the EKS cluster name (must match the stack's) | required |
 * | `SKIFF_WEBHOOK_SECRET_FILE` | file holding the HMAC secret (a mounted Secret key; re-read on every post) | `/var/run/secrets/skiff/webhook-secret` |
 * | `SKIFF_WEBHOOK_SECRET` | the secret itself, instead of the file | unset |
 * | `HEALTH_PORT` | port of `/healthz` and `/readyz` | `8080` |
 * | `BATCH_IDLE_DURATION`, `BATCH_MAX_DURATION` | batch window (Go durations, Karpenter's names) | `1s`, `10s` |
 * | `LOG_LEVEL` | `debug`, `info`, `warn` or `error` | `info` |
 * | `SKIFF_SERVICE_ACCOUNT_PATH_PREFIX` | prefix of the in-cluster service-account folder (`/var/run/secrets/kubernetes.io/serviceaccount`); only for running the relay outside a pod, as `npm run e2e` does | empty |
 */
import { parseDuration } from '../../shared/core/api/duration.js';
import { ClusterNameSchema } from '../../shared/core/api/webhook-batch.js';
import { SkiffError } from '../../shared/core/errors.js';

/** Where the Deployment mounts the webhook secret. */
export const DEFAULT_SECRET_FILE = '/var/run/secrets/skiff/webhook-secret';

/** The relay's settings. Durations in ms. */
export interface RelayConfig {
  readonly webhookUrl: string;
  readonly cluster: string;
  /** The secret's source: a file (re-read per post, so a rotated Secret is picked up) or a literal value. */
  readonly secret: { readonly file: string } | { readonly value: string };
  readonly healthPort: number;
  readonly batchIdleMs: number;
  readonly batchMaxMs: number;
  readonly logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** Prefix of the service-account folder (`SKIFF_SERVICE_ACCOUNT_PATH_PREFIX`); empty in a pod. */
  readonly serviceAccountPathPrefix: string;
}

/** The relay's environment is unusable; the message names every bad variable. */
export class RelayConfigError extends SkiffError {
  /** @param problems one line per variable: `NAME: what is wrong` */
  constructor(readonly problems: readonly string[]) {
    super(`invalid relay configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  }
}

/**
 * Reads and checks the configuration.
 * @throws {RelayConfigError} listing every missing or malformed variable
 * @example relayConfigFromEnv({ WEBHOOK_URL: 'https://abc.lambda-url.eu-west-1.on.aws/', SKIFF_CLUSTER: 'prod' })
 */
export function relayConfigFromEnv(env: Readonly<Record<string, string | undefined>>): RelayConfig {
  const problems: string[] = [];
  const get = (name: string) => {
    const v = env[name]?.trim();
    return v === '' ? undefined : v;
  };
  const webhookUrl = get('WEBHOOK_URL');
  if (webhookUrl === undefined) problems.push('WEBHOOK_URL: required (the webhook Lambda Function URL)');
  else {
    let url: URL | undefined;
    try {
      url = new URL(webhookUrl);
    } catch {
      problems.push(`WEBHOOK_URL: ${JSON.stringify(webhookUrl)} is not a URL`);
    }
    const local = url !== undefined && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
    if (url && url.protocol !== 'https:' && !(url.protocol === 'http:' && local)) problems.push(`WEBHOOK_URL: must be https:// (plain http only to localhost), got ${url.protocol}`);
  }
  const cluster = get('SKIFF_CLUSTER');
  if (cluster === undefined) problems.push('SKIFF_CLUSTER: required (the EKS cluster name)');
  else if (!ClusterNameSchema.safeParse(cluster).success) problems.push(`SKIFF_CLUSTER: ${JSON.stringify(cluster)} is not an EKS cluster name (1–100 letters, digits, - and _)`);
  const value = env.SKIFF_WEBHOOK_SECRET;
  const secret = value !== undefined && value !== '' ? { value } : { file: get('SKIFF_WEBHOOK_SECRET_FILE') ?? DEFAULT_SECRET_FILE };
  const port = Number(get('HEALTH_PORT') ?? '8080');
  if (!Number.isInteger(port) || port < 1 || port > 65535) problems.push(`HEALTH_PORT: must be a port number (1–65535), got ${JSON.stringify(get('HEALTH_PORT'))}`);
  const duration = (name: string, fallback: string): number => {
    const text = get(name) ?? fallback;
    try {
      const ms = parseDuration(text) * 1000;
      if (ms > 0) return ms;
      problems.push(`${name}: must be longer than 0, got ${JSON.stringify(text)}`);
    } catch (e) {
      problems.push(`${name}: ${e instanceof Error ? e.message : String(e)}`);
    }
    return Number.NaN;
  };
  const batchIdleMs = duration('BATCH_IDLE_DURATION', '1s');
  const batchMaxMs = duration('BATCH_MAX_DURATION', '10s');
  if (batchIdleMs > batchMaxMs) problems.push(`BATCH_IDLE_DURATION: must not exceed BATCH_MAX_DURATION`);
  const level = get('LOG_LEVEL') ?? 'info';
  if (!['debug', 'info', 'warn', 'error'].includes(level)) problems.push(`LOG_LEVEL: one of debug, info, warn, error, got ${JSON.stringify(level)}`);
  if (problems.length > 0) throw new RelayConfigError(problems);
  const serviceAccountPathPrefix = get('SKIFF_SERVICE_ACCOUNT_PATH_PREFIX') ?? '';
  return { webhookUrl: webhookUrl!, cluster: cluster!, secret, healthPort: port, batchIdleMs, batchMaxMs, logLevel: level as RelayConfig['logLevel'], serviceAccountPathPrefix };
}
