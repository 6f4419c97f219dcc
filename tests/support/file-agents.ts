/**
 * Agents that receive files, for tests/integration/files.test.ts: one HTTP server on 127.0.0.1 serving
 *   POST /mcp   an MCP agent (stateless Streamable HTTP) with the tool `inspect`, reading `_meta["holon/files"]`
 *   POST /hook  a webhook agent, reading the `x-holon-files` header
 * Each downloads every file it is given through its signed link, as an agent would, and answers what it found: the
 * size and SHA-256 it computed, whether they match what the gateway announced, and the download's headers. Every
 * map received is kept in `seen` (the test reuses and tampers with the links). Also a registry directory with the
 * fixture manifests of tests/fixtures/file-agents, their endpoints pointing at the server.
 */
import { createHash } from 'node:crypto';
import { cp, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { answerMcp } from './published-servers.js';

const FILE_AGENTS_DIR = path.resolve('tests/fixtures/file-agents');

export interface AnnouncedFile {
  url: string;
  content_type: string;
  size: number;
  sha256: string;
  expires: string;
}

interface Downloaded {
  handle: string;
  status: number;
  size: number;
  sha256: string;
  /** Size and SHA-256 are what the gateway announced. */
  matches: boolean;
  headers: { content_type: string | null; disposition: string | null; nosniff: string | null; csp: string | null; length: string | null };
}

export interface FileAgentServer {
  url: string;
  /** Every files map received, by the agent that received it. */
  seen: Array<{ via: 'mcp' | 'webhook'; files: Record<string, AnnouncedFile> | undefined }>;
  /** A registry directory with files-mcp, files-webhook and files-forward pointing at this server. */
  registry: string;
  close(): Promise<void>;
}

async function download(handle: string, f: AnnouncedFile): Promise<Downloaded> {
  const res = await fetch(f.url);
  const bytes = Buffer.from(await res.arrayBuffer());
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const h = (name: string) => res.headers.get(name);
  return {
    handle,
    status: res.status,
    size: bytes.length,
    sha256,
    matches: res.status === 200 && bytes.length === f.size && sha256 === f.sha256,
    headers: {
      content_type: h('content-type'),
      disposition: h('content-disposition'),
      nosniff: h('x-content-type-options'),
      csp: h('content-security-policy'),
      length: h('content-length'),
    },
  };
}

async function inspect(files: Record<string, AnnouncedFile> | undefined): Promise<Record<string, unknown>> {
  const entries = Object.entries(files ?? {});
  return { announced: entries.length, files: await Promise.all(entries.map(([handle, f]) => download(handle, f))) };
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

async function mcp(req: http.IncomingMessage, res: http.ServerResponse, body: string, state: FileAgentServer): Promise<void> {
  await answerMcp(req, res, body, 'files-test-agent', async (request) => {
    const files = request.params._meta?.['holon/files'] as Record<string, AnnouncedFile> | undefined;
    state.seen.push({ via: 'mcp', files });
    return { content: [], structuredContent: await inspect(files) };
  });
}

async function hook(req: http.IncomingMessage, res: http.ServerResponse, state: FileAgentServer): Promise<void> {
  const header = req.headers['x-holon-files'];
  const files = typeof header === 'string' ? (JSON.parse(header) as Record<string, AnnouncedFile>) : undefined;
  state.seen.push({ via: 'webhook', files });
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(await inspect(files)));
}

export async function startFileAgents(): Promise<FileAgentServer> {
  const state = { seen: [] } as unknown as FileAgentServer;
  const server = http.createServer((req, res) => {
    readBody(req)
      .then(async (body) => {
        const route = (req.url ?? '').split('?')[0];
        if (req.method === 'POST' && route === '/mcp') return mcp(req, res, body, state);
        if (req.method === 'POST' && route === '/hook') return hook(req, res, state);
        if (req.method === 'GET' && route === '/mcp') {
          res.writeHead(405).end();
          return;
        }
        res.writeHead(404).end();
      })
      .catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.registry = await mkdtemp(path.join(tmpdir(), 'holon-file-agents-'));
  for (const [name, endpoint] of [
    ['files-mcp', `${state.url}/mcp`],
    ['files-webhook', `${state.url}/hook`],
    ['files-forward', undefined],
  ] as const) {
    await cp(path.join(FILE_AGENTS_DIR, name), path.join(state.registry, name), { recursive: true });
    if (endpoint) {
      const file = path.join(state.registry, name, 'holon.yaml');
      await writeFile(file, (await readFile(file, 'utf8')).replace(/endpoint:\s*"[^"]*"/, `endpoint: "${endpoint}"`));
    }
  }
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}
