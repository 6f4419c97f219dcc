/**
 * Real traffic for the backup drill (tests/processes/backup-drill.test.ts), made through a hosted gateway's HTTP API
 * with the helpers the other tests use: sign-ups with demo credit, a paid call, a delegation tree (fixtures/pipeline),
 * an approval held then approved, an uploaded file (two chunks), a published webhook agent (GitHub sign-in, an
 * encrypted endpoint credential, an evaluation) called and paid, and a moderation action. A gateway on the restored
 * database is `startTestGateway({ databaseUrl, config: drillConfig(github) })`.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { Config } from '../../shared/platform/config.js';
import type { FakeGitHub } from './fake-github.js';
import { signInWithGitHub } from './github-accounts.js';
import { ADMIN_KEY, hostedConfig, send, signUp, type Account, type Reply } from './hosted.js';

const DRILL_FILE_SECRET = 'backup-drill-file-secret-0123456789abcdef';

/** The hosted configuration of the drill: the fake GitHub, agents on 127.0.0.1 allowed, a file secret. */
export function drillConfig(github: FakeGitHub, extra: Partial<Config> = {}): Partial<Config> {
  return hostedConfig({ ...github.config, githubTimeoutMs: 400, allowPrivateEndpoints: true, fileSecret: DRILL_FILE_SECRET, ...extra });
}

export interface Traffic {
  alice: Account;
  /** Alice's agent key for her mandate `alice/work` (examples, fixtures and bob's agents). */
  aliceAgent: string;
  bob: Account;
  fileId: string;
  fileBytes: Buffer;
}

async function ok<T = any>(what: string, reply: Promise<Reply<T>>, status = 200): Promise<T> {
  const r = await reply;
  expect(r.status, `${what}: ${JSON.stringify(r.body)}`).toBe(status);
  return r.body;
}

export async function makeTraffic(base: string, github: FakeGitHub, webhookEndpoint: string): Promise<Traffic> {
  const alice = await signUp(base, 'alice');
  await ok(
    'mandate alice/work',
    send(base, 'POST', '/v0/mandates', {
      key: alice.human,
      body: {
        id: 'work',
        grantee: 'alice/assistant',
        allow: { agents: ['examples/*', 'fixtures/*', 'bob/*'], capabilities: ['text.*', 'test.*'] },
        budget: { total: '3.00' },
        delegation: { max_depth: 2 },
        approval: { above: '0.25' },
      },
    }),
    201,
  );
  const aliceAgent = (await ok('key for alice/work', send(base, 'POST', '/v0/keys', { key: alice.human, body: { mandate: 'alice/work' } }), 201)).key as string;
  const call = (body: Record<string, unknown>) => send(base, 'POST', '/v0/calls', { key: aliceAgent, body });

  // A paid call, and a delegation tree (the orchestrator's worst case, 0.35, is above 0.25: held for approval, approved).
  await ok('paid call', call({ agent: 'examples/echo-upper', input: { text: 'backed up' } }));
  const held = await ok('held delegation', call({ agent: 'fixtures/pipeline', input: { text: 'tree' } }), 202);
  const ran = await ok('approved delegation', send(base, 'POST', `/v0/approvals/${held.approval.id}`, { key: alice.human, body: {} }));
  expect(ran.receipt.children).toHaveLength(2);

  // A file of two chunks (512 KiB each at most), random bytes: bytea exactly.
  const fileBytes = randomBytes(600 * 1024);
  const res = await fetch(`${base}/v0/files`, {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream', authorization: `Bearer ${alice.human}` },
    body: fileBytes,
  });
  expect(res.status).toBe(201);
  const fileId = ((await res.json()) as { id: string }).id;

  // A published agent with an encrypted credential, called and paid (its author earns a share).
  const bob = await signInWithGitHub(base, github, 'bob', 2001);
  github.addRepository({ owner: 'bob', name: 'echo' });
  await ok('credential', send(base, 'PUT', '/v0/agents/bob/echo/credential', { key: bob.human, body: { token: 'drill-token.0123456789-abcdef' } }));
  await ok(
    'publish bob/echo',
    send(base, 'POST', '/v0/agents', {
      key: bob.human,
      body: {
        id: 'bob/echo',
        version: '1.0.0',
        summary: 'bob/echo, published for the backup drill',
        // text.count has a public suite (evals/): publishing queues its evaluation, whose rows are backed up too
        capabilities: ['text.echo', 'text.count'],
        license: 'MIT',
        source: { repository: 'https://github.com/bob/echo' },
        interface: { input: { type: 'object' }, output: { type: 'object' } },
        pricing: { model: 'per_run', currency: 'EUR', amount: '0.01' },
        runtime: { kind: 'webhook', endpoint: webhookEndpoint, limits: { timeout_s: 10 } },
      },
    }),
    201,
  );
  await ok('call to the published agent', call({ agent: 'bob/echo', input: { n: 1 } }));

  // The moderation log (append-only, jsonb detail).
  await signUp(base, 'mallory');
  await ok(
    'disable mallory',
    send(base, 'POST', '/v0/admin/accounts/mallory/disable', { headers: { authorization: `Bearer ${ADMIN_KEY}` }, body: { reason: 'drill' } }),
  );

  return { alice, aliceAgent, bob, fileId, fileBytes };
}
