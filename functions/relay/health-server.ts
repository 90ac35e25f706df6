/**
 * The relay's probe endpoints on a small `node:http` server: `GET /healthz` (liveness) and `GET /readyz`
 * (readiness) answer 200 or 503 with the health report as JSON; anything else is 404.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RelayHealth } from './relay.js';

/** A running health server. */
export interface HealthServer {
  /** e.g. `http://0.0.0.0:8080` (the bound address). */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Starts the server.
 * @param port 0 picks a free port
 * @param host the interface to bind @default `0.0.0.0` (the kubelet probes the pod IP)
 * @example const server = await startHealthServer(() => relay.health(), 8080);
 */
export async function startHealthServer(health: () => RelayHealth, port: number, host = '0.0.0.0'): Promise<HealthServer> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://relay').pathname;
    if (req.method !== 'GET' || (path !== '/healthz' && path !== '/readyz')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /healthz or /readyz\n');
      return;
    }
    const report = health();
    const ok = path === '/healthz' ? report.live : report.ready;
    res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' }).end(`${JSON.stringify(report)}\n`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
