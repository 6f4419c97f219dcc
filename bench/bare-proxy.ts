/**
 * The floor of the gateway bench (issue 14): a bare Node HTTP proxy hop to the same no-op agent — a few lines of
 * `node:http`, no logic, keep-alive to the agent — running on this (the gateway's) thread, driven by the same load.
 * `paid calls/s ÷ proxy req/s` is the figure that travels across machines.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface BareProxy {
  url: string;
  close(): Promise<void>;
}

export async function startBareProxy(agentUrl: string): Promise<BareProxy> {
  const target = new URL(agentUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const server = http.createServer((req, res) => {
    const upstream = http.request(
      { host: target.hostname, port: target.port, path: target.pathname, method: req.method, headers: req.headers, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}
