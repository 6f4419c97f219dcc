/**
 * The official MCP reference server `@modelcontextprotocol/server-everything` (a 2025-era server: it speaks
 * 2025-11-25 only) run as agents behind the gateway, its own process on 127.0.0.1: the gateway's runtime negotiates
 * the era (its `server/discover` probe falls back to initialize), and its tools are called through `call_agent` by a
 * 2026-07-28 client (the SDK v2) — a structured tool billed with its receipt, and its elicitation tool, whose form is
 * the call's question, answered by the caller over REST. The ledger audit runs after every test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, test } from 'vitest';
import { startTestGateway, TEST_REGISTRY, useAudited } from '../support/gateway.js';
import { poll } from '../support/poll.js';
import { freePort } from '../support/processes.js';

const everything = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');

/** server-everything over Streamable HTTP on a free port; resolves once it listens. */
async function startEverything(): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, [everything, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    const lines = createInterface({ input: child.stderr! });
    lines.on('line', (line) => line.includes('listening') && resolve());
    child.once('exit', (code) => reject(new Error(`server-everything exited with ${code}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    child,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

const manifest = (name: string, tool: string, input: object, output: object) => `id: everything/${name}
version: 1.0.0
summary: server-everything's ${tool}
capabilities: [test.everything]
license: MIT
interface:
  input: ${JSON.stringify(input)}
  output: ${JSON.stringify(output)}
pricing: { model: per_run, currency: EUR, amount: "0.01" }
runtime: { kind: mcp, endpoint: "ENDPOINT", tool: ${tool}, limits: { timeout_s: 20 } }
`;

/** A registry of server-everything's tools as agents, pointing at `url`. */
async function registryAt(url: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'holon-everything-'));
  const agents = {
    weather: manifest(
      'weather',
      'get-structured-content',
      { type: 'object', required: ['location'], properties: { location: { enum: ['New York', 'Chicago', 'Los Angeles'] } } },
      { type: 'object', required: ['temperature', 'conditions', 'humidity'] },
    ),
    form: manifest('form', 'trigger-elicitation-request', { type: 'object' }, { type: 'object' }),
  };
  for (const [name, text] of Object.entries(agents)) {
    await mkdir(path.join(dir, name));
    await writeFile(path.join(dir, name, 'holon.yaml'), text.replace('ENDPOINT', url));
  }
  return dir;
}

describe('server-everything behind the gateway', () => {
  test('a 2026 client calls its tools through call_agent: a structured result billed; its form is the call question', async () => {
    const server = await startEverything();
    try {
      const registry = await registryAt(server.url);
      await useAudited(
        await startTestGateway({ config: { registryDirs: [...TEST_REGISTRY, registry], mcpMandate: 'alice/test', allowPrivateEndpoints: true } }),
        async (g) => {
          await g.mandate({ allow: { agents: ['everything/*'], capabilities: [] } });
          const client = new Client({ name: 'everything-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
          await client.connect(new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`), { requestInit: { headers: { 'x-holon-mandate': 'alice/test' } } }));
          try {
            const weather = await client.callTool({ name: 'call_agent', arguments: { agent: 'everything/weather', input: { location: 'Chicago' } } });
            expect(weather.structuredContent).toMatchObject({
              status: 'succeeded',
              output: { temperature: expect.any(Number), conditions: expect.any(String), humidity: expect.any(Number) },
              receipt: { agent: 'everything/weather@1.0.0', billed: true, cost: { total: '0.01' } },
            });

            // The form: this client answers no forms, so the call waits for POST /v0/calls/{id}/input (its progress says so).
            const notes: string[] = [];
            const asking = client.callTool(
              { name: 'call_agent', arguments: { agent: 'everything/form', input: {} } },
              { onprogress: (p) => notes.push(p.message ?? '') },
            );
            const note = await poll(async () => notes.find((m) => m.startsWith('input_required')), {
              what: 'the form to reach the caller',
              timeoutMs: 15_000,
              intervalMs: 20,
            });
            const id = /\/v0\/calls\/([^/]+)\/input/.exec(note)![1]!;
            const question = (await g.get<any>(`/v0/calls/${id}`)).body;
            expect(question.call.status).toBe('input_required');
            expect(question.input_required.request.message).toBe('Please provide inputs for the following fields:');
            expect(question.input_required.request.schema.required).toEqual(['name']);
            const answered = await g.post<any>(`/v0/calls/${id}/input`, { input: { name: 'Ada Lovelace', check: true } });
            expect(answered.status).toBe(202);
            // Its answer is prose, not JSON: the call fails as the agent's error, unbilled — after the answer reached it.
            const r = await asking;
            expect(r.structuredContent).toMatchObject({ status: 'failed', receipt: { billed: false, error: 'agent_error' } });
          } finally {
            await client.close();
          }
        },
      );
    } finally {
      await server.stop();
    }
  });
});
