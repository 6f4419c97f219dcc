/**
 * An output reaches every consumer the call declared (shared/calls/answer/outputs.ts, docs/lifecycle.md "The output and its
 * consumers", docs/webhooks.md): it is kept until the synchronous answer (when there is one) and the webhook (when
 * `callback_url` is set) both have it, or until HOLON_RESULT_TTL_S ends. Reading it — GET /v0/calls/{id}, a long-poll,
 * an Idempotency-Key replay, a failed webhook attempt — takes nothing. Once it is gone the answer says why:
 * `output_gone: collected | expired`. Run on Redis and on the in-process store; across API processes on Redis, with
 * the API holding a synchronous wait stopped (SIGSTOP) or killed (SIGKILL).
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, onTestFailed, test } from 'vitest';
import { audit } from '../../shared/ledger/audit.js';
import type { Config, WebhookSettings } from '../../shared/platform/config.js';
import { generateWebhookSecret } from '../../shared/webhooks/secrets.js';
import { startTestCluster, startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { send, workMandate, type Account } from '../support/hosted.js';
import { poll, sleep } from '../support/poll.js';
import { testWebhookSettings } from '../support/webhook-settings.js';

const FILE_SECRET = 'output-consumer-tests-file-secret-0123456789';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  const list = cleanups.reverse();
  cleanups = [];
  for (const c of list) await c().catch(() => {});
});

/** A receiver on loopback: records every request, answers each with the next status of `statuses` (then 204). */
/**
 * A webhook receiver answering `statuses` in turn, then 204. With `holdAfter: n`, every request after the n-th is
 * answered only once `release()` was called (what the test must do before a delivery completes: under load a retry
 * may come early).
 */
async function startReceiver(statuses: number[] = [], options: { holdAfter?: number } = {}): Promise<{ url: string; received: Received[]; release(): void }> {
  const received: Received[] = [];
  let release = (): void => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      const status = statuses.shift() ?? 204;
      const answer = () => res.writeHead(status).end();
      if (options.holdAfter !== undefined && received.length > options.holdAfter) void released.then(answer);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received, release };
}

/** What a receiver reads, verified with standardwebhooks as a receiver would. */
const verified = (secret: string, r: Received) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as Record<string, unknown>;

/** A first attempt that fails, a retry 800 ms later: time for the other consumers to come first. */
const RETRY_LATER: WebhookSettings = testWebhookSettings({ scheduleMs: [0, 800, 800] });

type Backend = 'redis' | 'memory';

function gateway(backend: Backend, extra: Partial<Config> = {}) {
  // `redisUrl: ''` overrides REDIS_URL: the in-process queues, notifier and store.
  return startTestGateway({
    hosted: true,
    config: {
      fileSecret: FILE_SECRET,
      allowPrivateEndpoints: true,
      webhooks: RETRY_LATER,
      ...(backend === 'memory' ? { redisUrl: '' } : {}),
      ...extra,
    },
  });
}

interface Caller extends Account {
  webhookSecret: string;
  agent: string;
  mandate: string;
}

async function signUpCaller(g: TestGateway, handle = 'alice'): Promise<Caller> {
  const r = await send(g.url, 'POST', '/v0/signup', { body: { handle, email: `${handle}@example.test` } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  const a: Account = { handle, human: r.body.keys.human.key, sandboxAgent: r.body.keys.agent.key };
  const work = await workMandate(g.url, a);
  return { ...a, webhookSecret: r.body.webhook_secret, agent: work.agent, mandate: work.mandate };
}

async function delivered(g: TestGateway, key: string, callId: string) {
  return poll(
    async () => {
      const d = (await send(g.url, 'GET', `/v0/calls/${callId}/deliveries`, { key })).body.delivery;
      return d?.state === 'delivered' ? d : undefined;
    },
    { what: `the delivery of ${callId}`, timeoutMs: 15_000, intervalMs: 50 },
  );
}

const get = (g: { url: string }, key: string, id: string, wait?: number) =>
  send(g.url, 'GET', `/v0/calls/${id}${wait === undefined ? '' : `?wait=${wait}`}`, { key });

describe.each(['redis', 'memory'] as const)('an output reaches every consumer the call declared (%s)', (backend) => {
  test('a long-poll, GET twice, then the webhook: every one of them gets the output; once delivered it is collected', async () => {
    await useAudited(await gateway(backend), async (g) => {
      const alice = await signUpCaller(g);
      // The retry is answered only after the reads below: however late they come, the output is still kept for it.
      const hook = await startReceiver([500], { holdAfter: 1 });
      const queued = await send(g.url, 'POST', '/v0/calls', {
        key: alice.agent,
        headers: { prefer: 'respond-async' },
        body: { agent: 'examples/slow', input: { ms: 300 }, callback_url: hook.url },
      });
      expect(queued.status, JSON.stringify(queued.body)).toBe(202);
      const id = queued.body.call.id as string;

      // The long-poll is answered when the call ends, with the output, and takes nothing.
      const polled = await get(g, alice.agent, id, 20);
      expect(polled.body).toMatchObject({ call: { id, status: 'succeeded' }, output: { waited: 300 } });
      expect(polled.body).not.toHaveProperty('output_gone');
      for (let i = 0; i < 2; i++) expect((await get(g, alice.agent, id)).body).toEqual(polled.body);
      hook.release();

      // The webhook's first attempt failed; its retry, after all those reads, still carries the output.
      const d = await delivered(g, alice.human, id);
      expect(d.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([500, 204]);
      expect(d.reason).toBeNull();
      const [first, retry] = hook.received.map((r) => verified(alice.webhookSecret, r));
      for (const body of [first, retry]) {
        expect(body).toMatchObject({ status: 'succeeded', output: { waited: 300 } });
        expect(body).not.toHaveProperty('output_expired');
        expect(body).not.toHaveProperty('output_gone');
      }

      // The webhook was the one consumer this call declared: now it is collected, and the answer says so.
      const after = await get(g, alice.agent, id);
      expect(after.body).toEqual({ ...polled.body, output: null, output_gone: 'collected' });
      // A re-send says the same to the receiver, and the log says why.
      expect((await send(g.url, 'POST', `/v0/calls/${id}/deliveries`, { key: alice.human, body: {} })).status).toBe(202);
      await poll(() => hook.received.length === 3, { what: 'the re-send', timeoutMs: 10_000, intervalMs: 50 });
      expect(verified(alice.webhookSecret, hook.received[2]!)).toMatchObject({ output: null, output_expired: true, output_gone: 'collected' });
      const log = await poll(
        async () => {
          const x = (await send(g.url, 'GET', `/v0/calls/${id}/deliveries`, { key: alice.human })).body.delivery;
          return x.attempts.length === 3 ? x : undefined;
        },
        { what: 'the re-send in the log', timeoutMs: 10_000, intervalMs: 50 },
      );
      expect(log.reason).toMatch(/no longer kept: every consumer the call declared had it/);
    });
  });

  test('a synchronous answer and the webhook of the same call both get the output; GET between; then collected', async () => {
    await useAudited(await gateway(backend), async (g) => {
      const alice = await signUpCaller(g);
      const hook = await startReceiver([500]);
      const answered = await send(g.url, 'POST', '/v0/calls', {
        key: alice.agent,
        body: { agent: 'examples/echo-upper', input: { text: 'both' }, callback_url: hook.url },
      });
      expect(answered.status, JSON.stringify(answered.body)).toBe(200);
      expect(answered.body.output).toEqual({ text: 'BOTH' });
      const id = answered.body.receipt.id as string;
      // The synchronous answer had it; the webhook (its first attempt failed) still needs it: a GET reads it.
      expect((await get(g, alice.agent, id)).body).toMatchObject({ output: { text: 'BOTH' } });
      await delivered(g, alice.human, id);
      expect(hook.received.map((r) => verified(alice.webhookSecret, r).output)).toEqual([{ text: 'BOTH' }, { text: 'BOTH' }]);
      expect((await get(g, alice.agent, id)).body).toMatchObject({ call: { id, status: 'succeeded' }, output: null, output_gone: 'collected' });
    });
  });

  test('a synchronous answer without a callback collects it; after HOLON_RESULT_TTL_S an output nobody collected is expired', async () => {
    await useAudited(await gateway(backend, { resultTtlS: 1, webhooks: { ...RETRY_LATER, scheduleMs: [0, 2_500] } }), async (g) => {
      const alice = await signUpCaller(g);
      const sync = await send(g.url, 'POST', '/v0/calls', { key: alice.agent, body: { agent: 'examples/echo-upper', input: { text: 'once' } } });
      expect(sync.body.output).toEqual({ text: 'ONCE' });
      const syncId = sync.body.receipt.id as string;
      expect((await get(g, alice.agent, syncId)).body).toMatchObject({ output: null, output_gone: 'collected' });

      // Async, no callback: read as often as asked until the TTL ends; then `expired`, never `collected`.
      const queued = await send(g.url, 'POST', '/v0/calls', {
        key: alice.agent,
        headers: { prefer: 'respond-async' },
        body: { agent: 'examples/echo-upper', input: { text: 'later' } },
      });
      const id = queued.body.call.id as string;
      expect((await get(g, alice.agent, id, 10)).body.output).toEqual({ text: 'LATER' });
      expect((await get(g, alice.agent, id)).body.output).toEqual({ text: 'LATER' });
      // A webhook whose retry comes after the TTL: the receiver is told it expired.
      const hook = await startReceiver([500]);
      const late = await send(g.url, 'POST', '/v0/calls', {
        key: alice.agent,
        headers: { prefer: 'respond-async' },
        body: { agent: 'examples/echo-upper', input: { text: 'late' }, callback_url: hook.url },
      });
      const lateId = late.body.call.id as string;
      await sleep(1_600);
      const expired = await get(g, alice.agent, id);
      expect(expired.body).toMatchObject({ call: { id, status: 'succeeded' }, output: null, output_gone: 'expired' });
      const d = await delivered(g, alice.human, lateId);
      expect(d.reason).toMatch(/HOLON_RESULT_TTL_S ended before this attempt/);
      expect(verified(alice.webhookSecret, hook.received[0]!)).toMatchObject({ output: { text: 'LATE' } });
      expect(verified(alice.webhookSecret, hook.received[1]!)).toMatchObject({ output: null, output_expired: true, output_gone: 'expired' });
    });
  });

  test('an Idempotency-Key replay returns the output while it is kept (the client of the synchronous answer went away)', async () => {
    await useAudited(await gateway(backend), async (g) => {
      const alice = await signUpCaller(g);
      const file = path.join(await mkdtemp(path.join(tmpdir(), 'holon-replay-')), 'runs.log');
      const body = { agent: 'fixtures/counter', input: { file, ms: 600 } };
      const headers = { 'idempotency-key': 'order-7' };
      // The client gives up while the call runs: its answer is lost, and the output is handed to nobody.
      const gone = new AbortController();
      const lost = fetch(`${g.url}/v0/calls`, {
        method: 'POST',
        signal: gone.signal,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${alice.agent}`, ...headers },
        body: JSON.stringify(body),
      }).catch((e: unknown) => e);
      await poll(async () => (await readFile(file, 'utf8').catch(() => '')).length > 0, { what: 'the call to run', timeoutMs: 10_000, intervalMs: 20 });
      gone.abort();
      await lost;
      const id = (await readFile(file, 'utf8')).trim();
      await poll(async () => (await get(g, alice.agent, id)).body.receipt, { what: 'the receipt', timeoutMs: 10_000, intervalMs: 50 });
      await sleep(200); // the abandoned request has woken and answered nobody

      const replay = await send(g.url, 'POST', '/v0/calls', { key: alice.agent, body, headers });
      expect(replay.status).toBe(200);
      expect(replay.body).toMatchObject({ replayed: true, status: 'succeeded', output: { ok: true }, receipt: { id, billed: true } });
      expect(replay.body).not.toHaveProperty('output_gone');
      // A replay reads, like GET: both still have it, as often as asked.
      expect((await get(g, alice.agent, id)).body.output).toEqual({ ok: true });
      expect((await send(g.url, 'POST', '/v0/calls', { key: alice.agent, body, headers })).body.output).toEqual({ ok: true });
      expect((await readFile(file, 'utf8')).trim().split('\n')).toEqual([id]); // it ran once
    });
  });
});

describe('across API processes (Redis)', () => {
  test('long-polls on two API processes both read the output; the webhook still gets it; then either answers collected', async () => {
    await useAudited(await gateway('redis'), async (g) => {
      const other = await startTestGateway({
        beside: g,
        roles: ['api'],
        hosted: true,
        config: { fileSecret: FILE_SECRET, allowPrivateEndpoints: true, webhooks: RETRY_LATER },
      });
      cleanups.push(() => other.stop());
      const alice = await signUpCaller(g);
      const hook = await startReceiver([500]);
      const queued = await send(g.url, 'POST', '/v0/calls', {
        key: alice.agent,
        headers: { prefer: 'respond-async' },
        body: { agent: 'examples/slow', input: { ms: 200 }, callback_url: hook.url },
      });
      const id = queued.body.call.id as string;
      const [a, b] = await Promise.all([get(g, alice.agent, id, 20), get(other, alice.agent, id, 20)]);
      expect(a.body.output).toEqual({ waited: 200 });
      expect(b.body).toEqual(a.body);
      await delivered(g, alice.human, id);
      expect(verified(alice.webhookSecret, hook.received.at(-1)!)).toMatchObject({ output: { waited: 200 } });
      expect((await get(other, alice.agent, id)).body).toMatchObject({ output: null, output_gone: 'collected' });
    });
  });

  test('the API holding a synchronous wait stopped while the webhook delivers, then killed mid-wait: GET and the replay still get the output', async () => {
    // Every process signs with the one dev secret; a failed delivery is tried again after a second.
    const secret = generateWebhookSecret();
    const { cluster, db, stop } = await startTestCluster({ env: { HOLON_CALLBACK_SECRET: secret, HOLON_WEBHOOK_SCHEDULE: '0,1s,1s' } });
    cleanups.push(stop);
    onTestFailed(() => console.error(`service output:\n${cluster.describe()}`));
    const [holder, reader] = await Promise.all([cluster.start('api'), cluster.start('api'), cluster.start('runner'), cluster.start('settler')]);
    const m = await send(reader.url!, 'POST', '/v0/mandates', {
      body: { id: 'alice/out', issuer: 'alice', grantee: 'alice/assistant', allow: { agents: ['fixtures/*'] }, budget: { total: '1.00', currency: 'EUR' } },
    });
    expect(m.status, JSON.stringify(m.body)).toBe(201);
    const dir = await mkdtemp(path.join(tmpdir(), 'holon-consumers-'));
    const hook = await startReceiver();

    // 1. A synchronous call with a callback; its API is stopped (SIGSTOP) once the call runs, so the webhook delivers
    //    first. The output stays for the held answer: a GET on the other API reads it, and so does the held answer.
    const first = path.join(dir, 'first.log');
    const held = send(holder.url!, 'POST', '/v0/calls', {
      body: { mandate: 'alice/out', agent: 'fixtures/counter', input: { file: first, ms: 500 }, callback_url: hook.url },
    });
    await poll(async () => (await readFile(first, 'utf8').catch(() => '')).length > 0, { what: 'the call to run', timeoutMs: 15_000, intervalMs: 20 });
    holder.kill('SIGSTOP');
    let resumed = false;
    cleanups.push(async () => {
      if (!resumed) holder.kill('SIGCONT');
    });
    const id = (await readFile(first, 'utf8')).trim();
    await poll(() => hook.received.length === 1, { what: 'the webhook', timeoutMs: 15_000, intervalMs: 50, context: cluster.describe });
    expect(verified(secret, hook.received[0]!)).toMatchObject({ call: { id }, output: { ok: true } });
    const read = await send(reader.url!, 'GET', `/v0/calls/${id}`);
    expect(read.body).toMatchObject({ call: { id, status: 'succeeded' }, output: { ok: true } });
    holder.kill('SIGCONT');
    resumed = true;
    const answer = await held;
    expect([answer.status, answer.body.output]).toEqual([200, { ok: true }]);
    // Both consumers had it: collected, whichever API answers.
    expect((await send(reader.url!, 'GET', `/v0/calls/${id}`)).body).toMatchObject({ output: null, output_gone: 'collected' });

    // 2. The API holding a synchronous wait dies (SIGKILL) mid-call: the client's retry with its Idempotency-Key, on
    //    the other API, gets the output (and GET still reads it: nobody was handed it).
    const second = path.join(dir, 'second.log');
    const body = { mandate: 'alice/out', agent: 'fixtures/counter', input: { file: second, ms: 800 } };
    const headers = { 'idempotency-key': 'retry-me' };
    const dying = send(holder.url!, 'POST', '/v0/calls', { body, headers }).catch((e: unknown) => e);
    await poll(async () => (await readFile(second, 'utf8').catch(() => '')).length > 0, { what: 'the call to run', timeoutMs: 15_000, intervalMs: 20 });
    holder.kill('SIGKILL');
    await holder.exit;
    await dying;
    const secondId = (await readFile(second, 'utf8')).trim();
    await poll(async () => (await send(reader.url!, 'GET', `/v0/calls/${secondId}`)).body.receipt, {
      what: 'the receipt',
      timeoutMs: 15_000,
      intervalMs: 50,
      context: cluster.describe,
    });
    const replay = await send(reader.url!, 'POST', '/v0/calls', { body, headers });
    expect([replay.status, replay.body.replayed, replay.body.output]).toEqual([200, true, { ok: true }]);
    expect((await send(reader.url!, 'GET', `/v0/calls/${secondId}`)).body.output).toEqual({ ok: true });
    expect((await readFile(second, 'utf8')).trim().split('\n')).toEqual([secondId]);
    expect((await audit(db.knex)).problems).toEqual([]);
  });
});
