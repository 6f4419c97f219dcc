/**
 * Servers and a resolver for the published-agent network tests (tests/integration/published-runtime.test.ts):
 * a webhook agent and an MCP agent on 127.0.0.1, over http or over TLS with a self-signed certificate for
 * `*.published.test`, and a fake resolver the test flips between a public address and a private one.
 *
 * The guard is given the fake resolver (`lookup`) and `route`, which dials 127.0.0.1 for the public address the
 * resolver answered AFTER the production check accepted it: the verdict is always the production tables' verdict on
 * what the resolver said, so flipping the resolver to 127.0.0.1 is refused exactly as DNS rebinding would be.
 */
import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, type CallToolRequest, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { LookupAll } from '../../shared/platform/guarded-net.js';

/** A public address (example.com's) the fake resolver answers, routed to 127.0.0.1 once checked. */
export const PUBLIC_STAND_IN = '93.184.216.34';

/** Test-only key and certificate (EC P-256, 100 years) for `*.published.test` and `published.test`. */
export const TEST_TLS = {
  key: `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg7d0Oth+Bl/X7VE7e
/XedJvYKATQmrzRj+11mjzJAUw2hRANCAASmY3vV6BT+noGhpBp3D4jDk86Voww/
SuZvy7tkFVnE06kNAQFj+XKPb9NSrpCqoqP8IyHqoWFcroj2Bd+Wl44n
-----END PRIVATE KEY-----
`,
  cert: `-----BEGIN CERTIFICATE-----
MIIBtzCCAV2gAwIBAgIUXycwH/ry1BbXvKd/nuFmS64O0gYwCgYIKoZIzj0EAwIw
GTEXMBUGA1UEAwwOcHVibGlzaGVkLnRlc3QwIBcNMjYxMjAxMTAxNjAxWhgPMjEy
NjExMDcxMDE2MDFaMBkxFzAVBgNVBAMMDnB1Ymxpc2hlZC50ZXN0MFkwEwYHKoZI
zj0CAQYIKoZIzj0DAQcDQgAEpmN71egU/p6BoaQadw+Iw5POlaMMP0rmb8u7ZBVZ
xNOpDQEBY/lyj2/TUq6QqqKj/CMh6qFhXK6I9gXflpeOJ6OBgDB+MB0GA1UdDgQW
BBQQxOng67am9WE+ONQz9AarGafRgjAfBgNVHSMEGDAWgBQQxOng67am9WE+ONQz
9AarGafRgjAPBgNVHRMBAf8EBTADAQH/MCsGA1UdEQQkMCKCECoucHVibGlzaGVk
LnRlc3SCDnB1Ymxpc2hlZC50ZXN0MAoGCCqGSM49BAMCA0gAMEUCICPV4cgMe/y7
JaBREP8+Y5862gAPHRm2noRqFxegk0kuAiEAx7MlPTEjKOoTvGznjOg0gcyQDuWY
mdy4JBM8kxPwanY=
-----END CERTIFICATE-----
`,
};

export interface PublishedServer {
  /** The port on 127.0.0.1. */
  port: number;
  /** Requests received (method, path, and the Authorization header: null when none). */
  hits: Array<{ method: string; path: string; authorization: string | null }>;
  /** Make the next answers redirects (302 to the same server). */
  redirect: boolean;
  close(): Promise<void>;
}

type Handle = (req: http.IncomingMessage, res: http.ServerResponse, body: string, state: PublishedServer) => void | Promise<void>;

async function start(tls: boolean, handle: Handle): Promise<PublishedServer> {
  const state = { hits: [], redirect: false } as unknown as PublishedServer;
  const listener: http.RequestListener = (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      state.hits.push({ method: req.method ?? '', path: req.url ?? '', authorization: req.headers.authorization ?? null });
      // One request per connection: every request is a new connection, resolved and checked again (no keep-alive
      // race between the test closing idle sockets and the client reusing one).
      res.setHeader('connection', 'close');
      if (state.redirect) {
        res.writeHead(302, { location: '/elsewhere' }).end();
        return;
      }
      Promise.resolve(handle(req, res, Buffer.concat(chunks).toString('utf8'), state)).catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
      });
    });
  };
  const server = tls ? https.createServer({ key: TEST_TLS.key, cert: TEST_TLS.cert }, listener) : http.createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as AddressInfo).port;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}

/** A webhook agent: answers `{echo: <input>}`. */
export function startWebhookAgent(options: { tls: boolean }): Promise<PublishedServer> {
  return start(options.tls, (_req, res, body) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ echo: JSON.parse(body) }));
  });
}

/** An MCP agent (stateless Streamable HTTP, JSON answers) with one tool `run` answering `{echo: <arguments>}`. */
export function startMcpAgent(options: { tls: boolean }): Promise<PublishedServer> {
  return start(options.tls, async (req, res, body) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    await answerMcp(req, res, body, 'published-test-agent', async (request) => ({
      content: [],
      structuredContent: { echo: request.params.arguments ?? {} },
    }));
  });
}

/** Answer one stateless Streamable HTTP request (JSON answers) with a one-tool MCP server whose tools/call is `onCall`. */
export async function answerMcp(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  body: string,
  name: string,
  onCall: (request: CallToolRequest) => Promise<CallToolResult>,
): Promise<void> {
  const server = new Server({ name, version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(CallToolRequestSchema, onCall);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, JSON.parse(body));
}

/** A resolver the test flips: every name resolves to `answer` (a public stand-in, or a private address). */
export function flippingResolver(answer: string = PUBLIC_STAND_IN): LookupAll & { answer: string; asked: string[] } {
  const fn = ((hostname, _options, callback) => {
    fn.asked.push(hostname);
    const list: LookupAddress[] = [{ address: fn.answer, family: fn.answer.includes(':') ? 6 : 4 }];
    process.nextTick(() => callback(null, list));
  }) as LookupAll & { answer: string; asked: string[] };
  fn.answer = answer;
  fn.asked = [];
  return fn;
}

/** The guard's test seam: dial 127.0.0.1 for the public stand-in, once the check accepted it. */
export function routeStandIn(address: string): string {
  return address === PUBLIC_STAND_IN ? '127.0.0.1' : address;
}
