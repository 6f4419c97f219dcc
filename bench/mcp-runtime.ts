/**
 * The MCP runtime bench (shared/runtimes/mcp/runtime.ts): a trivial tool on a local MCP server (the SDK's Server behind
 * StreamableHTTPServerTransport, stateful sessions, SSE answers), called through the runtime with pooled sessions
 * (`reuseConnections: true`, the default) and with one session per call (`reuseConnections: false`: initialize,
 * initialized, tools/call, then DELETE in the background).
 *
 * The server runs in a worker thread, so it has its own event loop; the machine's cores are still shared.
 * Figures: calls/s and p50 latency, 300 sequential calls, then 16 concurrent callers.
 */
import { buildManifest } from '../tests/support/manifest-builder.js';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { createMcpRuntime } from '../shared/runtimes/mcp/runtime.js';
import type { Manifest } from '../shared/core/manifest/types.js';
import type { AgentVersion, RunContext } from '../shared/runtimes/types.js';
import { quantile } from './load.js';

export type RecordFigure = (section: string, name: string, value: number | string, unit?: string) => void;

const SECTION = 'mcp runtime';
const SEQUENTIAL = 300;
const CONCURRENCY = 16;
const CONCURRENT_CALLS = 1_600;
const WARM_UP = 20;

/** The server, as the source of a worker (CommonJS eval): the SDK is imported from resolved URLs. */
function serverSource(): string {
  const sdk = (p: string) => JSON.stringify(import.meta.resolve(`@modelcontextprotocol/sdk/${p}`));
  return `
const { randomUUID } = require('node:crypto');
const http = require('node:http');
const { parentPort } = require('node:worker_threads');
(async () => {
  const { Server } = await import(${sdk('server/index.js')});
  const { StreamableHTTPServerTransport } = await import(${sdk('server/streamableHttp.js')});
  const { CallToolRequestSchema } = await import(${sdk('types.js')});
  const sessions = new Map();
  let initializes = 0;
  let calls = 0;
  const server = http.createServer(async (req, res) => {
    try {
      const sid = req.headers['mcp-session-id'];
      if (typeof sid === 'string') {
        const transport = sessions.get(sid);
        if (!transport) return void res.writeHead(404).end();
        return await transport.handleRequest(req, res);
      }
      const mcp = new Server({ name: 'bench-agent', version: '1.0.0' }, { capabilities: { tools: {} } });
      mcp.setRequestHandler(CallToolRequestSchema, async (request) => {
        calls += 1;
        return { content: [], structuredContent: { ok: true, echo: request.params.arguments ?? {} } };
      });
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => { initializes += 1; sessions.set(id, transport); },
      });
      transport.onclose = () => { if (transport.sessionId) sessions.delete(transport.sessionId); };
      await mcp.connect(transport);
      await transport.handleRequest(req, res);
    } catch {
      if (!res.headersSent) res.writeHead(500).end();
    }
  });
  server.keepAliveTimeout = 60_000;
  parentPort.on('message', (m) => {
    if (m === 'stats') parentPort.postMessage({ initializes, calls, sessions: sessions.size });
    if (m === 'close') {
      server.closeAllConnections();
      server.close(() => parentPort.postMessage({ closed: true }));
    }
  });
  server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
})();
`;
}

interface BenchServer {
  url: string;
  stats(): Promise<{ initializes: number; calls: number; sessions: number }>;
  close(): Promise<void>;
}

async function startServer(): Promise<BenchServer> {
  const worker = new Worker(serverSource(), { eval: true });
  const next = <T>(): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  const { port } = await next<{ port: number }>();
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    stats: () => {
      const answer = next<{ initializes: number; calls: number; sessions: number }>();
      worker.postMessage('stats');
      return answer;
    },
    close: async () => {
      const closed = next();
      worker.postMessage('close');
      await closed;
      await worker.terminate();
    },
  };
}

function benchManifest(endpoint: string): Manifest {
  return buildManifest({
    id: 'bench/echo',
    summary: 'A trivial MCP tool',
    capabilities: ['bench.echo'],
    runtime: { kind: 'mcp', endpoint, tool: 'echo', timeoutS: 30 },
  });
}

function context(): RunContext {
  return { callId: 'bench', signal: AbortSignal.timeout(30_000), timeoutMs: 30_000 };
}

async function measure(
  reuseConnections: boolean,
  agent: AgentVersion,
  server: BenchServer,
  record: (name: string, value: number, unit: string) => void,
): Promise<void> {
  const runtime = createMcpRuntime({ reuseConnections });
  const label = reuseConnections ? 'pooled session' : 'session per call';
  let failures = 0;
  const one = async (i: number): Promise<number> => {
    const start = performance.now();
    const r = await runtime.run(agent, { i }, context());
    if (r.kind !== 'output') failures += 1;
    return performance.now() - start;
  };
  try {
    const before = await server.stats();
    for (let i = 0; i < WARM_UP; i++) await one(i);

    const sequential: number[] = [];
    let start = performance.now();
    for (let i = 0; i < SEQUENTIAL; i++) sequential.push(await one(i));
    let ms = performance.now() - start;
    record(`${label}: calls/s, ${SEQUENTIAL} sequential`, (SEQUENTIAL * 1000) / ms, '/s');
    record(`${label}: p50 latency, sequential`, quantile(sequential, 0.5), 'ms');

    const concurrent: number[] = [];
    let issued = 0;
    start = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (issued < CONCURRENT_CALLS) {
          issued += 1;
          concurrent.push(await one(issued));
        }
      }),
    );
    ms = performance.now() - start;
    record(`${label}: calls/s, ${CONCURRENCY} concurrent`, (CONCURRENT_CALLS * 1000) / ms, '/s');
    record(`${label}: p50 latency, ${CONCURRENCY} concurrent`, quantile(concurrent, 0.5), 'ms');

    await runtime.close();
    const after = await server.stats();
    record(`${label}: sessions opened for ${WARM_UP + SEQUENTIAL + CONCURRENT_CALLS} calls`, after.initializes - before.initializes, '');
    if (failures > 0) record(`${label}: failed calls`, failures, '');
  } finally {
    await runtime.close();
  }
}

export async function mcpRuntimeBench(record: RecordFigure): Promise<void> {
  const server = await startServer();
  try {
    const agent: AgentVersion = { manifest: benchManifest(server.url), origin: 'published' };
    const put = (name: string, value: number, unit: string): void => record(SECTION, name, value, unit);
    await measure(true, agent, server, put);
    await measure(false, agent, server, put);
  } finally {
    await server.close();
  }
}
