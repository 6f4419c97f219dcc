/**
 * Endpoint credentials (gateway.md §7 "Authentication"): the author sets a token (before the first version is
 * published), the hosted gateway sends it as `Authorization: Bearer <token>` to the agent's endpoint, and it is
 * write-only: encrypted in Postgres, in no answer and in no log line. A hosted gateway with the fake GitHub and
 * allowPrivateEndpoints (a webhook agent on 127.0.0.1 served by the test); real Postgres and Redis.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, expect, test, vi } from 'vitest';
import { credentialCommand } from '../../services/cli/credential.js';
import type { Config } from '../../shared/platform/config.js';
import { startFakeGitHub, type FakeGitHub } from '../support/fake-github.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { signInWithGitHub } from '../support/github-accounts.js';
import { send, signUp, workMandate, type Account, type Reply } from '../support/hosted.js';

const SECRET = 'file-secret-for-the-credentials-test-0123456789';
const TOKEN = 'sk_live-Cr3dential.for/the+test=only';

let agent: http.Server;
let endpoint: string;
/** The Authorization header of each request the agent received (null: none). */
const seen: Array<string | null> = [];

beforeAll(async () => {
  agent = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push(req.headers.authorization ?? null);
      res.setHeader('connection', 'close');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true }));
    });
  });
  await new Promise<void>((resolve) => agent.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(agent.address() as AddressInfo).port}/hook`;
});
afterAll(async () => {
  agent.closeAllConnections();
  await new Promise((resolve) => agent.close(resolve));
});

let github: FakeGitHub;
beforeEach(async () => {
  seen.length = 0;
  github = await startFakeGitHub();
  return () => github.close();
});

const withGitHub = (extra: Partial<Config> = {}): Partial<Config> => ({
  ...github.config,
  githubTimeoutMs: 400,
  allowPrivateEndpoints: true,
  fileSecret: SECRET,
  ...extra,
});

/** A proprietary webhook agent behind the test's endpoint, which wants a token. */
const manifest = (id: string, version = '1.0.0') => ({
  id,
  version,
  license: 'proprietary',
  summary: `${id}: a webhook that requires a Bearer token`,
  runtime: { kind: 'webhook', endpoint, limits: { timeout_s: 10 } },
  capabilities: ['text.echo'],
  pricing: { model: 'per_run', currency: 'EUR', amount: '0.01' },
  interface: { input: { type: 'object' }, output: { type: 'object' } },
});

/** Every log line the gateway writes in this process (pino writes to fd 1 through sonic-boom's fs calls). */
function captureLogs(): { text(): string; restore(): void } {
  const lines: string[] = [];
  const keep = (data: unknown): number => {
    const text = typeof data === 'string' ? data : Buffer.from(data as Uint8Array).toString('utf8');
    lines.push(text);
    return Buffer.byteLength(text);
  };
  const realWriteSync = fs.writeSync;
  const realWrite = fs.write;
  const writeSync = vi
    .spyOn(fs, 'writeSync')
    .mockImplementation(((fd: number, data: unknown, ...rest: unknown[]) =>
      fd === 1 || fd === 2 ? keep(data) : (realWriteSync as any)(fd, data, ...rest)) as typeof fs.writeSync);
  const write = vi.spyOn(fs, 'write').mockImplementation(((fd: number, data: unknown, ...rest: unknown[]) => {
    if (fd !== 1 && fd !== 2) return (realWrite as any)(fd, data, ...rest);
    const n = keep(data);
    const cb = rest.find((r) => typeof r === 'function') as ((e: null, n: number) => void) | undefined;
    process.nextTick(() => cb?.(null, n));
  }) as typeof fs.write);
  return {
    text: () => lines.join(''),
    restore: () => {
      writeSync.mockRestore();
      write.mockRestore();
    },
  };
}

/** Every row of every table in the public schema, as text. */
async function everyRow(g: TestGateway): Promise<string> {
  const tables = (await g.db.knex.raw(`SELECT tablename FROM pg_tables WHERE schemaname = 'public'`)).rows as Array<{ tablename: string }>;
  const out: string[] = [];
  for (const { tablename } of tables) {
    const rows = (await g.db.knex.raw(`SELECT t::text AS row FROM "${tablename}" t`)).rows as Array<{ row: string }>;
    out.push(...rows.map((r) => r.row));
  }
  return out.join('\n');
}

test('the token is sent to the endpoint as a Bearer credential, and is nowhere else: not stored in clear, answered or logged', async () => {
  const logs = captureLogs();
  const answers: Reply[] = [];
  const api = async (...args: Parameters<typeof send>) => {
    const r = await send(...args);
    answers.push(r);
    return r;
  };
  try {
    await useAudited(await startTestGateway({ hosted: true, config: withGitHub({ logLevel: 'trace' }) }), async (g) => {
      const bob = await signInWithGitHub(g.url, github, 'bob', 1001);
      const path = '/v0/agents/bob/secured/credential';

      // Set before the first version is published; nothing is set at first.
      expect((await api(g.url, 'GET', path, { key: bob.human })).body).toEqual({ set: false });
      const put = await api(g.url, 'PUT', path, { key: bob.human, body: { token: TOKEN } });
      expect(put.status, JSON.stringify(put.body)).toBe(200);
      expect(put.body).toEqual({ agent: 'bob/secured', credential: { set: true, set_at: expect.any(String) } });
      const view = await api(g.url, 'GET', path, { key: bob.human });
      expect(view.body).toEqual({ set: true, set_at: put.body.credential.set_at });
      expect(Date.parse(view.body.set_at)).not.toBeNaN();
      const row = await g.db.knex('agent_credentials').first();
      expect(row).toMatchObject({ agent_id: 'bob/secured', set_by: 'bob', key_id: expect.stringMatching(/^[0-9a-f]{16}$/) });

      // Bad tokens, never repeated in the answer.
      for (const token of ['', 'has space', 'x'.repeat(4097), 7]) {
        const r = await api(g.url, 'PUT', path, { key: bob.human, body: { token } });
        expect(r.status).toBe(400);
        expect(r.body.error.problems[0].path).toBe('$.token');
      }

      const pub = await api(g.url, 'POST', '/v0/agents', { key: bob.human, body: manifest('bob/secured') });
      expect(pub.status, JSON.stringify(pub.body)).toBe(201);
      const pub2 = await api(g.url, 'POST', '/v0/agents', { key: bob.human, body: manifest('bob/secured', '1.1.0') });
      expect(pub2.status, JSON.stringify(pub2.body)).toBe(201);

      const alice = await signUp(g.url, 'alice');
      const work = await workMandate(g.url, alice, { allow: { agents: ['bob/*'], capabilities: ['text.*'] } });
      const call = (agentRef: string) => api(g.url, 'POST', '/v0/calls', { key: work.agent, body: { agent: agentRef, input: { n: 1 } } });

      // Every version gets it.
      for (const ref of ['bob/secured@1.0.0', 'bob/secured@1.1.0']) {
        const r = await call(ref);
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        expect(r.body.receipt).toMatchObject({ billed: true });
      }
      expect(seen).toEqual([`Bearer ${TOKEN}`, `Bearer ${TOKEN}`]);

      // Another account: the credential does not exist for it (404), whatever it tries.
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const r = await api(g.url, method, path, { key: alice.human, ...(method === 'PUT' ? { body: { token: 'stolen' } } : {}) });
        expect(r.status, `${method} ${JSON.stringify(r.body)}`).toBe(404);
      }
      // An agent key is refused (403), none at all is a 401.
      expect((await api(g.url, 'PUT', path, { key: bob.sandboxAgent, body: { token: 'x' } })).status).toBe(403);
      expect((await api(g.url, 'GET', path)).status).toBe(401);
      expect((await g.db.knex('agent_credentials').first()).set_by).toBe('bob');

      // The token is nowhere but in the agent's requests.
      expect(await everyRow(g)).not.toContain(TOKEN);
      for (const r of answers) expect(JSON.stringify(r.body)).not.toContain(TOKEN);
      expect(logs.text().length).toBeGreaterThan(0);
      expect(logs.text()).not.toContain(TOKEN);

      // Deleted: the next call has no Authorization header.
      const del = await api(g.url, 'DELETE', path, { key: bob.human });
      expect(del.status).toBe(200);
      expect(del.body).toEqual({ agent: 'bob/secured', credential: { set: false } });
      expect((await api(g.url, 'GET', path, { key: bob.human })).body).toEqual({ set: false });
      seen.length = 0;
      expect((await call('bob/secured')).status).toBe(200);
      expect(seen).toEqual([null]);
    });
  } finally {
    logs.restore();
  }
});

test('a credential set under another HOLON_FILE_SECRET fails the call unbilled, saying to set it again', async () => {
  await useAudited(await startTestGateway({ hosted: true, config: withGitHub() }), async (g) => {
    const bob = await signInWithGitHub(g.url, github, 'bob', 1001);
    expect((await send(g.url, 'PUT', '/v0/agents/bob/secured/credential', { key: bob.human, body: { token: TOKEN } })).status).toBe(200);
    expect((await send(g.url, 'POST', '/v0/agents', { key: bob.human, body: manifest('bob/secured') })).status).toBe(201);

    // A second gateway (every role, its own queues) on the same database, with another secret.
    const logs = captureLogs();
    const other = await startTestGateway({
      beside: g,
      hosted: true,
      config: { redisPrefix: `${g.redisPrefix}-other`, ...withGitHub({ fileSecret: `${SECRET}-rotated` }) },
    });
    try {
      const url = other.url;
      const alice = await signUp(url, 'alice');
      const work = await workMandate(url, alice, { allow: { agents: ['bob/*'], capabilities: ['text.*'] } });
      const r = await send(url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'bob/secured', input: {} } });
      expect(r.status, JSON.stringify(r.body)).toBe(502);
      expect(r.body.receipt).toMatchObject({ billed: false });
      expect(JSON.stringify(r.body)).toMatch(/runtime_unavailable/);
      expect(JSON.stringify(r.body)).not.toContain(TOKEN);
      // The gateway says why, in plain words, in its log: never the token.
      expect(logs.text()).toContain('the credential was set under another HOLON_FILE_SECRET: set it again');
      expect(logs.text()).toContain('"agent":"bob/secured"');
      expect(logs.text()).not.toContain(TOKEN);
      expect(seen).toEqual([]);
      // The author's view there still says one is set; setting it again makes the calls go through.
      expect((await send(url, 'GET', '/v0/agents/bob/secured/credential', { key: bob.human })).body).toMatchObject({ set: true });
      expect((await send(url, 'PUT', '/v0/agents/bob/secured/credential', { key: bob.human, body: { token: TOKEN } })).status).toBe(200);
      const again = await send(url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'bob/secured', input: {} } });
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      expect(seen).toEqual([`Bearer ${TOKEN}`]);
    } finally {
      logs.restore();
      await other.stop();
    }
  });
});

test('without HOLON_FILE_SECRET the routes answer 503', async () => {
  const { fileSecret: _none, ...noSecret } = withGitHub();
  await useAudited(await startTestGateway({ hosted: true, config: noSecret }), async (g) => {
    const bob = await signUp(g.url, 'bob');
    const r = await send(g.url, 'PUT', '/v0/agents/bob/secured/credential', { key: bob.human, body: { token: TOKEN } });
    expect(r.status).toBe(503);
    expect(r.body.error.message).toBe('credentials need HOLON_FILE_SECRET');
  });
});

test('holon credential set reads the token from stdin, never from the arguments; delete removes it', async () => {
  await useAudited(await startTestGateway({ hosted: true, config: withGitHub() }), async (g) => {
    const bob: Account = await signInWithGitHub(g.url, github, 'bob', 1001);
    const out: string[] = [];
    const io = (input: string[]) => ({
      stdin: Readable.from(input.map((s) => Buffer.from(s))),
      stdout: { write: (s: string) => out.push(s) },
      stderr: { write: (s: string) => out.push(s) },
    });
    const env = { HOLON_URL: g.url, HOLON_KEY: bob.human };
    expect(await credentialCommand(['set', 'bob/secured'], env, io([`${TOKEN}\n`]))).toBe(0);
    expect((await send(g.url, 'GET', '/v0/agents/bob/secured/credential', { key: bob.human })).body).toMatchObject({ set: true });
    expect(await credentialCommand(['set', 'bob/secured', TOKEN], env, io([]))).toBe(2);
    expect(await credentialCommand(['set', 'alice/other'], env, io(['t'])), out.join('')).toBe(1);
    expect(await credentialCommand(['set', 'bob/secured'], {}, io(['t']))).toBe(2);
    expect(await credentialCommand(['delete', 'bob/secured'], env, io([]))).toBe(0);
    expect((await send(g.url, 'GET', '/v0/agents/bob/secured/credential', { key: bob.human })).body).toEqual({ set: false });
    expect(out.join('')).not.toContain(TOKEN);

    // The token as stored works: set from stdin, sent to the endpoint.
    expect(await credentialCommand(['set', 'bob/secured'], env, io([TOKEN]))).toBe(0);
    expect((await send(g.url, 'POST', '/v0/agents', { key: bob.human, body: manifest('bob/secured') })).status).toBe(201);
    const alice = await signUp(g.url, 'alice');
    const work = await workMandate(g.url, alice, { allow: { agents: ['bob/*'], capabilities: ['text.*'] } });
    expect((await send(g.url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'bob/secured', input: {} } })).status).toBe(200);
    expect(seen).toEqual([`Bearer ${TOKEN}`]);
  });
});
