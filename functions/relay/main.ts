/**
 * The relay's entry point, run in the cluster by `infra/k8s/relay.yaml` (`node main.js` of the bundled relay):
 * reads the configuration, watches the cluster with the in-cluster service account, posts signed batches to the
 * webhook, serves the probes, and on SIGTERM or SIGINT shuts down gracefully (stop watching, deliver what is
 * pending for up to 20 s, exit 0). A bad configuration exits with status 2 and the problems on stderr.
 *
 * This is the relay's composition root, the one file under `functions/` allowed to import a Kubernetes adapter
 * (`ClusterWatch`; see the exception in `test/architecture/import-directions.test.ts`): the relay is not a Lambda,
 * so it has no `shared/lambda/` wiring of its own.
 */
import { readFile } from 'node:fs/promises';
import { ClusterWatch } from '../../shared/adapters/kubernetes/cluster-watch.js';
import { systemClock } from '../../shared/ports/clock.js';
import { relayConfigFromEnv, RelayConfigError, type RelayConfig } from './config.js';
import { startHealthServer } from './health-server.js';
import { jsonLog } from './json-log.js';
import { WebhookPoster } from './poster.js';
import { Relay } from './relay.js';
import { nodeTimers } from './timers.js';

/** Reads the secret from its source; a file's trailing newline is dropped (`kubectl create secret --from-file`). */
export function secretReader(source: RelayConfig['secret']): () => Promise<string> {
  if ('value' in source) return async () => source.value;
  return async () => {
    const text = (await readFile(source.file, 'utf8')).replace(/\r?\n$/, '');
    if (text === '') throw new Error(`webhook secret file ${source.file} is empty`);
    return text;
  };
}

/** Runs the relay until a termination signal. */
export async function main(env: Readonly<Record<string, string | undefined>> = process.env): Promise<void> {
  let config: RelayConfig;
  try {
    config = relayConfigFromEnv(env);
  } catch (e) {
    if (!(e instanceof RelayConfigError)) throw e;
    process.stderr.write(`${e.message}\n`);
    process.exit(2);
  }
  const now = () => systemClock.now();
  const log = jsonLog(config.logLevel, now);
  const source = new ClusterWatch({ connection: { kind: 'in-cluster', pathPrefix: config.serviceAccountPathPrefix }, cluster: config.cluster, clock: systemClock, log, timers: nodeTimers });
  const sink = new WebhookPoster({ url: config.webhookUrl, cluster: config.cluster, secret: secretReader(config.secret), log, timers: nodeTimers, now });
  const relay = new Relay({ source, sink, log, timers: nodeTimers, now, batchIdleMs: config.batchIdleMs, batchMaxMs: config.batchMaxMs });
  const health = await startHealthServer(() => relay.health(), config.healthPort);
  await relay.start();
  log.info('relay running', { cluster: config.cluster, webhook: new URL(config.webhookUrl).host, health: health.url });
  const shutdown = async (signal: string) => {
    log.info('shutting down', { signal });
    await relay.stop();
    await health.close();
    process.exit(0);
  };
  process.once('SIGTERM', (s) => void shutdown(s));
  process.once('SIGINT', (s) => void shutdown(s));
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('/relay/main.js') || process.argv[1]?.endsWith('/relay/main.ts')) {
  main().catch((e: unknown) => {
    process.stderr.write(`relay failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
}
