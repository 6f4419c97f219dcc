/**
 * The metrics port (HOLON_METRICS_PORT, docs/operating.md): a tiny HTTP server any role can run, so runners,
 * settlers and evaluators, which have no HTTP port of their own, can be scraped and probed.
 *
 *   GET /metrics   the process's metrics, Prometheus text (shared/platform/metrics.ts)
 *   GET /healthz   {"ok":true} once the process has started its roles
 *
 * No key: it is meant for the cluster's internal network (bind it there with HOLON_METRICS_HOST), never for the public.
 */
import { createServer, type Server } from 'node:http';
import type { GatewayMetrics } from './metrics.js';
import type { Logger } from './log.js';

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

export async function startMetricsServer(metrics: GatewayMetrics, options: { host: string; port: number; log: Logger }): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
      return;
    }
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true }));
      return;
    }
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics or /healthz\n');
      return;
    }
    metrics.text().then(
      (text) => res.writeHead(200, { 'content-type': metrics.contentType }).end(text),
      (e: unknown) => {
        options.log.error({ err: { message: (e as Error)?.message } }, 'metrics could not be collected');
        res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics could not be collected\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(
        new Error(`holon: the metrics port cannot listen on ${options.host}:${options.port} (HOLON_METRICS_PORT, HOLON_METRICS_HOST): ${e.code ?? e.message}`),
      ),
    );
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  options.log.info({ host: options.host, port }, 'metrics port listening');
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
