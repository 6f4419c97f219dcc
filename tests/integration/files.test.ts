/**
 * Files (gateway.md §6 `_meta["holon/files"]`, §7 "Files"; docs/files.md), end to end on real Postgres and Redis
 * (and once on PGlite with the in-process queue, as `npm start` runs): upload, a call naming the handle, the agent
 * downloading through its signed link and checking size and SHA-256 — over MCP and over a webhook —, who may pass a
 * file (its owner must be the root mandate's issuer, delegated calls included), the links refused, the 24 h deletion
 * with a moved clock, a file gone between admission and run, the size limit and the quota, bad input. The ledger
 * audit runs after every gateway test.
 */
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startEmbeddedGateway } from '../support/embedded.js';
import { startRunner } from '../../services/runner/worker.js';
import { startFileSweeper, sweepFiles } from '../../services/settler/file-sweeper.js';
import { createCallWaiter } from '../../shared/calls/answer/waiter.js';
import { fileHandle } from '../../shared/files/handles.js';
import { signFileLink } from '../../shared/files/links.js';
import { FILE_TTL_MS, MAX_FILE_BYTES } from '../../shared/files/store.js';
import { audit } from '../../shared/ledger/audit.js';
import type { Config } from '../../shared/platform/config.js';
import { type AnnouncedFile, type FileAgentServer, startFileAgents } from '../support/file-agents.js';
import { startTestGateway, TEST_REGISTRY, useAudited, type TestGateway } from '../support/gateway.js';
import { ADMIN_KEY, hostedConfig, send, signUp, workMandate } from '../support/hosted.js';
import { poll } from '../support/poll.js';
import type { Schema } from '../support/http.js';

const SECRET = 'file-secret-for-the-files-tests-0123456789';
const MiB = 1024 * 1024;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

interface Uploaded {
  status: number;
  body: any;
}

async function upload(base: string, body: Buffer | ReadableStream<Uint8Array> | undefined, options: { key?: string; type?: string } = {}): Promise<Uploaded> {
  const res = await fetch(`${base}/v0/files`, {
    method: 'POST',
    headers: { ...(options.type ? { 'content-type': options.type } : {}), ...(options.key ? { authorization: `Bearer ${options.key}` } : {}) },
    ...(body !== undefined ? { body, ...(body instanceof ReadableStream ? { duplex: 'half' } : {}) } : {}),
  } as RequestInit);
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: parsed };
}

/** A body sent in pieces, without a Content-Length (chunked). */
function streamOf(total: number, piece = 256 * 1024): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= total) {
        controller.close();
        return;
      }
      const n = Math.min(piece, total - sent);
      sent += n;
      controller.enqueue(new Uint8Array(n).fill(7));
    },
  });
}

async function fileRows(g: TestGateway): Promise<{ files: number; chunks: number }> {
  const [f] = await g.db.knex('files').count({ n: '*' });
  const [c] = await g.db.knex('file_chunks').count({ n: '*' });
  return { files: Number(f!.n), chunks: Number(c!.n) };
}

async function withFileAgents(use: (agents: FileAgentServer) => Promise<void>): Promise<void> {
  const agents = await startFileAgents();
  try {
    await use(agents);
  } finally {
    await agents.close();
  }
}

/** A hosted gateway with the file agents listed, HOLON_FILE_SECRET set; the audit runs after. */
async function hosted(agents: FileAgentServer, use: (g: TestGateway) => Promise<void>, extra: Partial<Config> = {}): Promise<void> {
  await useAudited(await startTestGateway({ config: hostedConfig({ fileSecret: SECRET, registryDirs: [...TEST_REGISTRY, agents.registry], ...extra }) }), use);
}

const DELEGATING = { delegation: { max_depth: 1 } };

describe('uploads and calls that name them', () => {
  test('upload → an MCP agent gets a signed link in _meta["holon/files"], downloads the file and finds its size and SHA-256', async () => {
    await withFileAgents((agents) =>
      hosted(agents, async (g) => {
        const alice = await signUp(g.url, 'alice');
        const work = await workMandate(g.url, alice);
        const bytes = randomBytes(MiB + 12_345);
        const up = await upload(g.url, bytes, { key: work.agent, type: 'application/pdf' });
        expect(up.status).toBe(201);
        expect(up.body).toMatchObject({ handle: `holon://files/${up.body.id}`, size: bytes.length, sha256: sha(bytes), content_type: 'application/pdf' });
        expect(Object.keys(up.body).sort()).toEqual(['content_type', 'expires_at', 'handle', 'id', 'sha256', 'size']);
        const ttl = Date.parse(up.body.expires_at) - Date.now();
        expect(ttl).toBeGreaterThan(FILE_TTL_MS - 60_000);
        expect(ttl).toBeLessThanOrEqual(FILE_TTL_MS);
        // Three chunk rows of at most 512 KiB: streamed in, never one blob.
        expect(await fileRows(g)).toEqual({ files: 1, chunks: 3 });

        const r = await send(g.url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'fixtures/files-mcp', input: { file: up.body.handle } } });
        expect(r.status).toBe(200);
        expect(r.body.output.announced).toBe(1);
        expect(r.body.output.files[0]).toMatchObject({
          handle: up.body.handle,
          status: 200,
          size: bytes.length,
          sha256: sha(bytes),
          matches: true,
          headers: {
            content_type: 'application/pdf',
            disposition: `attachment; filename="${up.body.id}"`,
            nosniff: 'nosniff',
            csp: "sandbox; default-src 'none'",
            length: String(bytes.length),
          },
        });
        expect(r.body.receipt).toMatchObject({ status: 'succeeded', billed: true });
        // The map: exactly the announced fields, a link on the gateway's own origin (dev: its listening URL), 15 minutes.
        const seen = agents.seen.at(-1)!;
        expect(seen.via).toBe('mcp');
        const announced = seen.files![up.body.handle]!;
        expect(Object.keys(announced).sort()).toEqual(['content_type', 'expires', 'sha256', 'size', 'url']);
        expect(announced.url.startsWith(`${g.url}/v0/files/${up.body.id}?exp=`)).toBe(true);
        const left = Date.parse(announced.expires) - Date.now();
        expect(left).toBeGreaterThan(14 * 60_000);
        expect(left).toBeLessThanOrEqual(15 * 60_000);
        // The receipt says nothing of the file's content.
        expect(JSON.stringify(r.body.receipt)).not.toContain(sha(bytes));
      }),
    );
  });

  test('the same for a webhook agent, through the x-holon-files header; a call without files gets no header', async () => {
    await withFileAgents((agents) =>
      hosted(agents, async (g) => {
        const alice = await signUp(g.url, 'alice');
        const work = await workMandate(g.url, alice);
        const a = Buffer.from('name,age\nada,36\n');
        const b = randomBytes(700_000);
        const upA = await upload(g.url, a, { key: alice.human, type: 'text/csv' });
        const upB = await upload(g.url, b, { key: work.agent });
        expect(upB.body.content_type).toBe('application/octet-stream');
        const r = await send(g.url, 'POST', '/v0/calls', {
          key: work.agent,
          body: { agent: 'fixtures/files-webhook', input: { file: upA.body.handle, note: `and also ${upB.body.handle}` } },
        });
        expect(r.status).toBe(200);
        expect(r.body.output.announced).toBe(2);
        const byHandle = Object.fromEntries(r.body.output.files.map((f: any) => [f.handle, f]));
        expect(byHandle[upA.body.handle]).toMatchObject({ matches: true, size: a.length, headers: { content_type: 'text/csv' } });
        expect(byHandle[upB.body.handle]).toMatchObject({ matches: true, size: b.length, headers: { content_type: 'application/octet-stream' } });
        expect(agents.seen.at(-1)!.via).toBe('webhook');

        const plain = await send(g.url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'fixtures/files-webhook', input: { note: 'nothing' } } });
        expect(plain.status).toBe(200);
        expect(plain.body.output.announced).toBe(0);
        expect(agents.seen.at(-1)!.files).toBeUndefined();
      }),
    );
  });

  test("another account's file: file_not_found at admission, unbilled, nothing held, the agent never called", async () => {
    await withFileAgents((agents) =>
      hosted(agents, async (g) => {
        const alice = await signUp(g.url, 'alice');
        const bob = await signUp(g.url, 'bob');
        const work = await workMandate(g.url, alice);
        const bobs = await upload(g.url, Buffer.from('bob only'), { key: bob.human });
        const before = (await send(g.url, 'GET', '/v0/accounts', { key: alice.human })).body.accounts;
        const r = await send(g.url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'fixtures/files-mcp', input: { file: bobs.body.handle } } });
        expect(r.status).toBe(422);
        expect(r.body.error.code).toBe('file_not_found');
        expect(r.body.error.message).toContain(bobs.body.handle);
        expect(r.body.receipt).toMatchObject({ status: 'failed', error: 'file_not_found', billed: false, cost: { total: '0.00' }, payer: 'alice' });
        expect(agents.seen).toHaveLength(0);
        const m = await send(g.url, 'GET', `/v0/mandates/${work.mandate}`, { key: alice.human });
        expect(m.body.budget).toMatchObject({ spent: '0.00', reserved: '0.00' });
        expect((await send(g.url, 'GET', '/v0/accounts', { key: alice.human })).body.accounts).toEqual(before);
        // The refusal is a receipt like any other: listed, and the same words for a file that never existed.
        const listed = await send(g.url, 'GET', `/v0/receipts/${r.body.receipt.id}`, { key: alice.human });
        expect(listed.status).toBe(200);
        const never = await send(g.url, 'POST', '/v0/calls', {
          key: work.agent,
          body: { agent: 'fixtures/files-mcp', input: { file: fileHandle('f_0123456789abcdefghijkl') } },
        });
        expect(never.status).toBe(422);
        expect(never.body.error.message.replace(/holon:\/\/files\/\S+/, 'H')).toBe(r.body.error.message.replace(/holon:\/\/files\/\S+/, 'H'));
        // Over MCP (call_agent), the same refusal.
        const client = new Client({ name: 'files-test', version: '1.0.0' });
        await client.connect(
          new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${work.agent}` } } }),
        );
        try {
          const viaMcp = await client.callTool({ name: 'call_agent', arguments: { agent: 'fixtures/files-mcp', input: { file: bobs.body.handle } } });
          expect(viaMcp.isError).toBe(true);
          expect(viaMcp.structuredContent).toMatchObject({ status: 'failed', error: { code: 'file_not_found' }, receipt: { billed: false } });
        } finally {
          await client.close();
        }
        expect(agents.seen).toHaveLength(0);
        // Bob's own call with it works.
        const bobWork = await workMandate(g.url, bob);
        const ok = await send(g.url, 'POST', '/v0/calls', { key: bobWork.agent, body: { agent: 'fixtures/files-mcp', input: { file: bobs.body.handle } } });
        expect(ok.status).toBe(200);
        expect(ok.body.output.files[0].matches).toBe(true);
      }),
    );
  });

  test('delegated calls: a child may pass only files of the ROOT mandate’s issuer', async () => {
    await withFileAgents((agents) =>
      hosted(agents, async (g) => {
        const alice = await signUp(g.url, 'alice');
        const bob = await signUp(g.url, 'bob');
        const work = await workMandate(g.url, alice, DELEGATING);
        const mine = await upload(g.url, Buffer.from('alice file'), { key: alice.human, type: 'text/plain' });
        const bobs = await upload(g.url, Buffer.from('bob file'), { key: bob.human });

        // The orchestrator builds the handle of Alice's own file: the child call runs, its agent downloads it.
        const own = await send(g.url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'fixtures/files-forward', input: { file_id: mine.body.id } } });
        expect(own.status).toBe(200);
        expect(own.body.output).toMatchObject({ ok: true, child: { announced: 1 } });
        expect(own.body.output.child.files[0]).toMatchObject({ matches: true, size: 10 });
        expect(own.body.receipt.children[0]).toMatchObject({ agent: 'fixtures/files-mcp@1.0.0', status: 'succeeded' });

        // The same orchestrator handed Bob's id: the child call is refused file_not_found, unbilled.
        const seen = agents.seen.length;
        const foreign = await send(g.url, 'POST', '/v0/calls', {
          key: work.agent,
          body: { agent: 'fixtures/files-forward', input: { file_id: bobs.body.id } },
        });
        expect(foreign.status).toBe(200);
        expect(foreign.body.output).toEqual({ ok: false, error: 'file_not_found' });
        const child = foreign.body.receipt.children[0];
        expect(child).toMatchObject({ status: 'failed', error: 'file_not_found', billed: false, payer: 'alice', cost: { total: '0.00' } });
        expect(agents.seen.length).toBe(seen);
        const m = await send(g.url, 'GET', `/v0/mandates/${work.mandate}`, { key: alice.human });
        expect(m.body.budget.reserved).toBe('0.00');
      }),
    );
  });
});

describe('signed links', () => {
  test('expired, tampered, another file’s signature → 403; unknown or deleted file → 404; never the content', async () => {
    await withFileAgents((agents) =>
      hosted(agents, async (g) => {
        const alice = await signUp(g.url, 'alice');
        const work = await workMandate(g.url, alice);
        const bytes = Buffer.from('%PDF-1.7 secret contents');
        const one = await upload(g.url, bytes, { key: alice.human, type: 'application/pdf' });
        const two = await upload(g.url, Buffer.from('second'), { key: alice.human });
        await send(g.url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'fixtures/files-mcp', input: { file: one.body.handle } } });
        const link = new URL((agents.seen.at(-1)!.files![one.body.handle] as AnnouncedFile).url);
        const exp = link.searchParams.get('exp')!;
        const sig = link.searchParams.get('sig')!;
        const get = async (p: string, headers: Record<string, string> = {}) => {
          const res = await fetch(g.url + p, { headers });
          const body = await res.text();
          expect(body).not.toContain('secret contents');
          return { status: res.status, body: body.startsWith('{') ? JSON.parse(body) : body, headers: res.headers };
        };

        // The link itself works, any number of times while valid, and needs no key.
        const fine = await fetch(link);
        expect(fine.status).toBe(200);
        expect(Buffer.from(await fine.arrayBuffer()).equals(bytes)).toBe(true);
        const head = await fetch(link, { method: 'HEAD' });
        expect(head.status).toBe(200);
        expect(head.headers.get('content-length')).toBe(String(bytes.length));

        const flip = (s: string) => s.slice(0, 10) + (s[10] === 'A' ? 'B' : 'A') + s.slice(11);
        const tampered = await get(`/v0/files/${one.body.id}?exp=${exp}&sig=${flip(sig)}`);
        expect(tampered.status).toBe(403);
        expect(tampered.body.error.code).toBe('invalid_link');
        expect((await get(`/v0/files/${one.body.id}?exp=${Number(exp) + 60}&sig=${sig}`)).status).toBe(403);
        // A valid signature of file one, presented for file two.
        expect((await get(`/v0/files/${two.body.id}?exp=${exp}&sig=${sig}`)).status).toBe(403);
        expect((await get(`/v0/files/${one.body.id}`)).status).toBe(403);
        expect((await get(`/v0/files/${one.body.id}?exp=${exp}&sig=${sig}&sig=${sig}`)).status).toBe(403);
        // Expired: signed with the real secret, an expiry in the past.
        const past = Math.floor(Date.now() / 1000) - 1;
        const expired = await get(`/v0/files/${one.body.id}?exp=${past}&sig=${signFileLink(SECRET, { kind: 'upload', id: one.body.id }, past)}`);
        expect(expired.status).toBe(403);
        expect(expired.body.error.code).toBe('link_expired');
        // Signed under another secret.
        const future = Math.floor(Date.now() / 1000) + 600;
        expect(
          (await get(`/v0/files/${one.body.id}?exp=${future}&sig=${signFileLink('another-secret', { kind: 'upload', id: one.body.id }, future)}`)).status,
        ).toBe(403);
        // Signed right, but no such file.
        const ghost = 'f_zzzzzzzzzzzzzzzzzzzzzz';
        const unknown = await get(`/v0/files/${ghost}?exp=${future}&sig=${signFileLink(SECRET, { kind: 'upload', id: ghost }, future)}`);
        expect(unknown.status).toBe(404);
        // Not an id at all; a NUL in the URL.
        expect((await get(`/v0/files/..%2f..%2fetc?exp=${exp}&sig=${sig}`)).status).toBe(403);
        expect((await get(`/v0/files/${one.body.id}%00?exp=${exp}&sig=${sig}`)).status).toBe(400);
        // Deleted (the sweeper, 24 h later): the still-valid link answers 404.
        await sweepFiles({ ...g.gw.context, now: () => Date.now() + FILE_TTL_MS + 1000 });
        expect((await get(`${link.pathname}${link.search}`)).status).toBe(404);
      }),
    );
  });
});

describe('deletion 24 hours after upload', () => {
  test('the sweeper deletes at 24 h (not before), on start too; a call naming a deleted file fails file_not_found, unbilled', async () => {
    await withFileAgents((agents) =>
      hosted(agents, async (g) => {
        const alice = await signUp(g.url, 'alice');
        const work = await workMandate(g.url, alice);
        const up = await upload(g.url, randomBytes(600_000), { key: alice.human });
        const created = Date.parse(up.body.expires_at) - FILE_TTL_MS;
        const at = (ms: number) => ({ ...g.gw.context, now: () => created + ms });

        expect(await sweepFiles(at(FILE_TTL_MS - 1000))).toBe(0);
        expect(await fileRows(g)).toEqual({ files: 1, chunks: 2 });
        // A settler starting 25 h later deletes it at once, before its first interval.
        const sweeper = startFileSweeper(at(FILE_TTL_MS + 3_600_000), 3_600_000);
        await poll(async () => (await fileRows(g)).files === 0, { what: 'the sweep', timeoutMs: 2_000, intervalMs: 20, orUndefined: true });
        await sweeper.stop();
        expect(await fileRows(g)).toEqual({ files: 0, chunks: 0 });

        const r = await send(g.url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'fixtures/files-mcp', input: { file: up.body.handle } } });
        expect(r.status).toBe(422);
        expect(r.body.receipt).toMatchObject({ status: 'failed', error: 'file_not_found', billed: false });
      }),
    );
  });

  test('expired but not yet swept counts for nothing: refused at admission, not counted in the quota', async () => {
    await withFileAgents((agents) =>
      hosted(
        agents,
        async (g) => {
          const alice = await signUp(g.url, 'alice');
          const up = await upload(g.url, randomBytes(MiB), { key: alice.human });
          expect(up.status).toBe(201);
          expect((await upload(g.url, randomBytes(MiB + 1), { key: alice.human })).status).toBe(409);
          // Move the database's view of time instead of the clock: the row says it expired a second ago.
          await g.db
            .knex('files')
            .where({ id: up.body.id })
            .update({ expires_at: new Date(Date.now() - 1000) });
          expect((await upload(g.url, randomBytes(MiB + 1), { key: alice.human })).status).toBe(201);
          const work = await workMandate(g.url, alice);
          const r = await send(g.url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'fixtures/files-mcp', input: { file: up.body.handle } } });
          expect(r.body.error.code).toBe('file_not_found');
        },
        { fileQuotaBytes: 2 * MiB },
      ),
    );
  });

  test('a file deleted between admission and run: the runner closes the call failed / file_not_found, unbilled, its hold released', async () => {
    await withFileAgents(async (agents) => {
      // No runner yet: the call waits in the queue while its file goes.
      const g = await startTestGateway({
        roles: ['api', 'settler', 'evaluator'],
        config: { fileSecret: SECRET, registryDirs: [...TEST_REGISTRY, agents.registry] },
      });
      await useAudited(g, async (g) => {
        await g.mandate({});
        const up = await upload(g.url, Buffer.from('soon gone'));
        expect(up.status).toBe(201);
        const queued = await g.post<Schema<'CallQueued'>>(
          '/v0/calls',
          { mandate: 'alice/test', agent: 'fixtures/files-mcp', input: { file: up.body.handle } },
          { prefer: 'respond-async' },
        );
        expect(queued.status).toBe(202);
        const callId = queued.body.call.id;
        expect((await g.get<Schema<'MandateView'>>('/v0/mandates/alice/test')).body.budget.reserved).toBe('0.01');
        await sweepFiles({ ...g.gw.context, now: () => Date.now() + FILE_TTL_MS + 1000 });

        const waiter = await createCallWaiter(g.db.knex, g.gw.context.messaging.notifier);
        const runner = await startRunner(g.gw.engine.withWaiter(waiter), { concurrency: 1, fileLinks: { secret: SECRET, origin: () => g.url } });
        try {
          let call: any;
          await poll(
            async () => {
              call = await g.get(`/v0/calls/${callId}`);
              return call.body.receipt;
            },
            { what: 'the receipt', timeoutMs: 6_000, intervalMs: 20, orUndefined: true },
          );
          expect(call.body.receipt).toMatchObject({ status: 'failed', error: 'file_not_found', billed: false, cost: { total: '0.00' } });
        } finally {
          for (const stop of runner.stop) await stop();
          await Promise.all(runner.workers.map((w) => w.close()));
          for (const release of runner.release) await release();
          await waiter.close();
        }
        expect(agents.seen).toHaveLength(0);
        expect((await g.get<Schema<'MandateView'>>('/v0/mandates/alice/test')).body.budget).toMatchObject({ spent: '0.00', reserved: '0.00' });
        // Not the agent's doing: its record counts no run.
        const record = await g.db.knex('call_events').where({ agent_id: 'fixtures/files-mcp' }).first('error_code');
        expect(record?.error_code).toBe('file_not_found');
      });
    });
  });
});

describe('limits', () => {
  test('20 MB is accepted, 20 MB + 1 byte is refused 413 — declared or streamed — and leaves no row behind', async () => {
    await withFileAgents((agents) =>
      hosted(agents, async (g) => {
        const alice = await signUp(g.url, 'alice');
        const exact = randomBytes(MAX_FILE_BYTES);
        expect(MAX_FILE_BYTES).toBe(20 * MiB);
        const ok = await upload(g.url, exact, { key: alice.human, type: 'application/zip' });
        expect(ok.status).toBe(201);
        expect(ok.body).toMatchObject({ size: 20 * MiB, sha256: sha(exact) });
        expect(await fileRows(g)).toEqual({ files: 1, chunks: 40 });

        const declared = await upload(g.url, Buffer.concat([exact, Buffer.from([1])]), { key: alice.human });
        expect(declared.status).toBe(413);
        expect(declared.body.error).toMatchObject({ code: 'file_too_large' });
        expect(declared.body.error.message).toContain('20 MB');
        const streamed = await upload(g.url, streamOf(MAX_FILE_BYTES + 1), { key: alice.human });
        expect(streamed.status).toBe(413);
        expect(await fileRows(g)).toEqual({ files: 1, chunks: 40 });
        // Streamed and within the limit: accepted without a Content-Length.
        const chunked = await upload(g.url, streamOf(3 * MiB + 5), { key: alice.human });
        expect(chunked.status).toBe(201);
        expect(chunked.body.size).toBe(3 * MiB + 5);
        // The download is the exact 20 MB, streamed back.
        const work = await workMandate(g.url, alice);
        const r = await send(g.url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'fixtures/files-mcp', input: { file: ok.body.handle } } });
        expect(r.body.output.files[0]).toMatchObject({ matches: true, size: 20 * MiB, headers: { content_type: 'application/zip' } });
      }),
    );
  });

  test('the live-file quota per account → 409 in plain words; other accounts are not affected', async () => {
    await withFileAgents((agents) =>
      hosted(
        agents,
        async (g) => {
          const alice = await signUp(g.url, 'alice');
          const bob = await signUp(g.url, 'bob');
          for (let i = 0; i < 3; i++) expect((await upload(g.url, randomBytes(MiB), { key: alice.human })).status).toBe(201);
          const declared = await upload(g.url, randomBytes(10), { key: alice.human });
          expect(declared.status).toBe(409);
          expect(declared.body.error.code).toBe('file_quota_exceeded');
          expect(declared.body.error.message).toMatch(/past 3 MB of live files/);
          // Streamed (no Content-Length): refused as it crosses the line, nothing kept.
          expect((await upload(g.url, streamOf(MiB), { key: alice.human })).status).toBe(409);
          expect((await fileRows(g)).files).toBe(3);
          expect((await upload(g.url, randomBytes(MiB), { key: bob.human })).status).toBe(201);
          // Concurrent uploads cannot both take the last megabyte.
          await sweepFiles({ ...g.gw.context, now: () => Date.now() + FILE_TTL_MS + 1000 });
          expect((await upload(g.url, randomBytes(2 * MiB), { key: alice.human })).status).toBe(201);
          const racing = await Promise.all([0, 1, 2].map(() => upload(g.url, streamOf(MiB), { key: alice.human })));
          expect(racing.map((r) => r.status).sort()).toEqual([201, 409, 409]);
        },
        { fileQuotaBytes: 3 * MiB },
      ),
    );
  });

  test('the default limits are the spec’s: 20 MB per file, 200 MB per account', async () => {
    const g = await startTestGateway({ config: hostedConfig({ fileSecret: SECRET }) });
    await useAudited(g, async (g) => {
      expect(g.gw.config.fileQuotaBytes).toBe(200 * MiB);
    });
  });
});

describe('bad input', () => {
  test('no body, keys that may not upload, a malformed content type, NUL, holon://evals and malformed handles in a call', async () => {
    await withFileAgents((agents) =>
      hosted(agents, async (g) => {
        const alice = await signUp(g.url, 'alice');
        const work = await workMandate(g.url, alice);
        const none = await upload(g.url, undefined, { key: alice.human });
        expect(none.status).toBe(400);
        expect(none.body.error.message).toContain('the request body is the file');
        expect((await upload(g.url, Buffer.alloc(0), { key: alice.human })).status).toBe(400);
        expect((await upload(g.url, streamOf(0), { key: alice.human })).status).toBe(400);
        expect((await upload(g.url, Buffer.from('x'))).status).toBe(401);
        expect((await upload(g.url, Buffer.from('x'), { key: 'hlk_h_not-a-real-key' })).status).toBe(401);
        expect((await upload(g.url, Buffer.from('x'), { key: ADMIN_KEY })).status).toBe(403);
        expect((await upload(g.url, Buffer.from('x'), { key: alice.human, type: 'not a type' })).status).toBe(400);
        const nul = await fetch(`${g.url}/v0/files%00`, { method: 'POST', headers: { authorization: `Bearer ${alice.human}` }, body: 'x' });
        expect(nul.status).toBe(400);
        // A body that is JSON is just a file; the upload path in another case is the same route.
        const json = await upload(g.url, Buffer.from('{"a":1}'), { key: alice.human, type: 'application/json' });
        expect(json.status).toBe(201);
        expect(json.body.content_type).toBe('application/json');
        const shouted = await fetch(`${g.url}/V0/FILES/`, { method: 'POST', headers: { authorization: `Bearer ${alice.human}` }, body: 'abc' });
        expect(shouted.status).toBe(201);
        // Other routes still take JSON only.
        const text = await fetch(`${g.url}/v0/calls`, {
          method: 'POST',
          headers: { authorization: `Bearer ${work.agent}`, 'content-type': 'text/plain' },
          body: 'x',
        });
        expect(text.status).toBe(415);
        expect((await fileRows(g)).files).toBe(2);

        const call = (input: unknown) => send(g.url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'fixtures/files-mcp', input } });
        for (const input of [
          { file: 'holon://evals/test.files/case-1.pdf' },
          { note: 'see holon://evals/test.files/hidden.csv please' },
          { file: 'holon://files/not-an-id' },
        ]) {
          const r = await call(input);
          expect(r.status).toBe(422);
          expect(r.body.error.code).toBe('file_not_found');
          expect(r.body.receipt).toMatchObject({ status: 'failed', error: 'file_not_found', billed: false });
        }
        const many = await call({ note: Array.from({ length: 21 }, (_, i) => fileHandle(`f_${String(i).padStart(22, '0')}`)).join(' ') });
        expect(many.status).toBe(422);
        expect(many.body.error.code).toBe('rejected_input');
        expect(agents.seen).toHaveLength(0);
      }),
    );
  });
});

describe('dev mode on the embedded defaults (PGlite, in-process queue)', () => {
  test('the local operator uploads without a key and without HOLON_FILE_SECRET; an MCP agent downloads through the link', async () => {
    await withFileAgents(async (agents) => {
      const gw = await startEmbeddedGateway('files-pglite', { registryDirs: [...TEST_REGISTRY, agents.registry], unset: ['HOLON_FILE_SECRET'] });
      try {
        expect(gw.db.kind).toBe('pglite');
        const url = `http://127.0.0.1:${gw.port}`;
        const m = await send(url, 'POST', '/v0/mandates', {
          body: {
            id: 'carol/files',
            issuer: 'carol',
            grantee: 'carol/assistant',
            allow: { agents: ['fixtures/*'] },
            budget: { total: '1.00', currency: 'EUR' },
          },
        });
        expect(m.status).toBe(201);
        const bytes = randomBytes(2 * MiB + 3);
        const up = await upload(url, bytes, { type: 'image/png' });
        expect(up.status).toBe(201);
        expect(up.body.sha256).toBe(sha(bytes));
        const r = await send(url, 'POST', '/v0/calls', { body: { mandate: 'carol/files', agent: 'fixtures/files-mcp', input: { file: up.body.handle } } });
        expect(r.status).toBe(200);
        expect(r.body.output.files[0]).toMatchObject({ matches: true, size: bytes.length, headers: { content_type: 'image/png' } });
        const tooBig = await upload(url, Buffer.alloc(MAX_FILE_BYTES + 1));
        expect(tooBig.status).toBe(413);
        expect(Number((await gw.db.knex('files').count({ n: '*' }))[0]!.n)).toBe(1);
        const report = await audit(gw.db.knex);
        expect(report.problems).toEqual([]);
      } finally {
        await gw.stop();
      }
    });
  });
});
