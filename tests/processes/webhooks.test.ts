/**
 * Webhooks (docs/webhooks.md): Standard Webhooks signatures, per-account secrets and their rotation, durable
 * retries and the delivery log. Every delivery a receiver gets here is verified with the `standardwebhooks` library,
 * as a receiver would, never with the gateway's own code. Timings are shortened through the settings
 * (HOLON_WEBHOOK_SCHEDULE and friends); the restart test restarts a real settler process.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, onTestFailed, test } from 'vitest';
import type { WebhookSettings, Config } from '../../shared/platform/config.js';
import { bullPrefixOf } from '../../shared/messaging/bullmq.js';
import { attemptQueued } from '../../shared/webhooks/deliveries.js';
import { generateWebhookSecret } from '../../shared/webhooks/secrets.js';
import { startFakeGitHub } from '../support/fake-github.js';
import { signInWithGitHub } from '../support/github-accounts.js';
import { startTestCluster, startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { send, workMandate, type Account } from '../support/hosted.js';
import type { ServiceProcess } from '../support/processes.js';
import { poll, sleep } from '../support/poll.js';
import { verifyReceiptTree, type KeySet } from '../support/independent-verifier.js';
import { testWebhookSettings } from '../support/webhook-settings.js';

const FILE_SECRET = 'webhook-tests-file-secret-0123456789abcdef';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

type Answer = { status: number; headers?: Record<string, string> } | 'hang';

/** A receiver on loopback: records every request, answers each with the next of `answers` (then 204). */
async function startReceiver(answers: Answer[] = []): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const hanging = new Set<import('node:http').ServerResponse>();
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      received.push({ headers: req.headers, body, at: Date.now() });
      const answer = answers.shift() ?? { status: 204 };
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      res.writeHead(answer.status, answer.headers).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  const list = cleanups.reverse();
  cleanups = [];
  for (const c of list) await c().catch(() => {});
});

/** Verifies a received request the way a receiver does; throws when it does not verify. */
const verify = (secret: string, r: Received): unknown => new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
const verifies = (secret: string, r: Received): boolean => {
  try {
    verify(secret, r);
    return true;
  } catch {
    return false;
  }
};

const fast = testWebhookSettings;

function hosted(webhooks: WebhookSettings, extra: Partial<Config> = {}) {
  return startTestGateway({ hosted: true, config: { fileSecret: FILE_SECRET, allowPrivateEndpoints: true, webhooks, ...extra } });
}

interface Signed extends Account {
  webhookSecret: string;
  /** An agent key for a mandate of the account that may call the examples. */
  agent: string;
}

async function signUpWithSecret(g: TestGateway, handle: string): Promise<Signed> {
  const r = await send(g.url, 'POST', '/v0/signup', { body: { handle, email: `${handle}@example.test` } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  expect(r.body.webhook_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  const a: Account = { handle, human: r.body.keys.human.key, sandboxAgent: r.body.keys.agent.key };
  const work = await workMandate(g.url, a);
  return { ...a, webhookSecret: r.body.webhook_secret, agent: work.agent };
}

/** An async call (the output waits for its delivery, nobody takes it) that names the receiver. */
async function callWithCallback(g: TestGateway, key: string, callbackUrl: string, text = 'hello'): Promise<string> {
  const r = await send(g.url, 'POST', '/v0/calls', {
    key,
    headers: { prefer: 'respond-async' },
    body: { agent: 'examples/echo-upper', input: { text }, callback_url: callbackUrl },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  return r.body.call.id as string;
}

async function deliveryOf(g: TestGateway, key: string, callId: string) {
  const r = await send(g.url, 'GET', `/v0/calls/${callId}/deliveries`, { key });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.delivery;
}

async function waitForState(
  g: TestGateway,
  key: string,
  callId: string,
  state: string,
  also: (d: { attempts: unknown[] }) => boolean = () => true,
  timeoutMs = 15_000,
) {
  return poll(
    async () => {
      const d = await deliveryOf(g, key, callId);
      return d?.state === state && also(d) ? d : undefined;
    },
    { what: `the delivery of ${callId} to be ${state}`, timeoutMs, intervalMs: 50 },
  );
}

describe('webhooks, hosted: each account signs with its own secret', () => {
  test('a receiver on loopback verifies the delivery with standardwebhooks; another account’s secret never verifies', async () => {
    await useAudited(await hosted(fast()), async (g) => {
      const alice = await signUpWithSecret(g, 'alice');
      const bob = await signUpWithSecret(g, 'bob');
      expect(alice.webhookSecret).not.toBe(bob.webhookSecret);
      const hook = await startReceiver();
      const aliceCall = await callWithCallback(g, alice.agent, hook.url, 'for alice');
      const bobCall = await callWithCallback(g, bob.agent, hook.url, 'for bob');
      await waitForState(g, alice.human, aliceCall, 'delivered');
      await waitForState(g, bob.human, bobCall, 'delivered');
      expect(hook.received).toHaveLength(2);
      const [forAlice, forBob] = [aliceCall, bobCall].map((id) => hook.received.find((r) => JSON.parse(r.body).call.id === id)!);

      expect(verify(alice.webhookSecret, forAlice!)).toMatchObject({
        type: 'call.completed',
        version: 1,
        call: { id: aliceCall, status: 'succeeded' },
        status: 'succeeded',
        output: { text: 'FOR ALICE' },
        receipt: { id: aliceCall, billed: true },
      });
      // The payload's receipt carries its signature, which verifies against the gateway's key set.
      const keySet = (await (await fetch(`${g.url}/.well-known/jwks.json`)).json()) as KeySet;
      expect(await verifyReceiptTree((verify(alice.webhookSecret, forAlice!) as { receipt: unknown }).receipt, keySet)).toEqual({ ok: true });
      expect(forAlice!.headers['webhook-id']).toBe(`msg_${aliceCall}`);
      expect(forAlice!.headers['content-type']).toBe('application/json');
      expect(forAlice!.headers['holon-signature']).toBeUndefined(); // the old header is gone (docs/webhooks.md)
      expect(verify(bob.webhookSecret, forBob!)).toMatchObject({ call: { id: bobCall } });
      // Neither account's secret verifies the other's delivery; a tampered body verifies under none.
      expect(verifies(bob.webhookSecret, forAlice!)).toBe(false);
      expect(verifies(alice.webhookSecret, forBob!)).toBe(false);
      expect(verifies(alice.webhookSecret, { ...forAlice!, body: forAlice!.body.replace('FOR ALICE', 'FOR MALLORY') })).toBe(false);

      // The log: one attempt, 204. Bob cannot see Alice's call or its delivery (404, as if it did not exist).
      const d = await deliveryOf(g, alice.human, aliceCall);
      expect(d).toMatchObject({ id: `msg_${aliceCall}`, state: 'delivered', reason: null, next_attempt_at: null });
      expect(d.attempts).toEqual([
        { attempt: 1, resend: false, at: expect.any(String), status_code: 204, error: null, duration_ms: expect.any(Number), next_attempt_at: null },
      ]);
      expect((await send(g.url, 'GET', `/v0/calls/${aliceCall}/deliveries`, { key: bob.human })).status).toBe(404);
      expect((await send(g.url, 'POST', `/v0/calls/${aliceCall}/deliveries`, { key: bob.agent, body: {} })).status).toBe(404);
      expect((await send(g.url, 'GET', `/v0/calls/${aliceCall}/deliveries`, { key: alice.agent })).status).toBe(200);

      // No secret at rest in plaintext, none in a receipt, a queue payload or anywhere in Redis.
      for (const secret of [alice.webhookSecret, bob.webhookSecret, alice.webhookSecret.slice(6)]) {
        expect(await rowsHolding(g, secret)).toEqual([]);
        expect(await redisHolding(g, secret)).toEqual([]);
      }
      expect(await redisHolding(g, hook.url)).toEqual([]); // jobs carry ids, not the URL
    });
  });

  test('a receiver that fails twice, then succeeds: the same webhook-id each time, every attempt in the log; a re-send is one more', async () => {
    await useAudited(await hosted(fast({ redeliveriesPerHour: 3 })), async (g) => {
      const alice = await signUpWithSecret(g, 'alice');
      const hook = await startReceiver([{ status: 500 }, { status: 503 }]);
      const id = await callWithCallback(g, alice.agent, hook.url);
      const d = await waitForState(g, alice.human, id, 'delivered');
      expect(hook.received).toHaveLength(3);
      expect(new Set(hook.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([`msg_${id}`]));
      for (const r of hook.received) expect(verify(alice.webhookSecret, r)).toMatchObject({ call: { id } });
      expect(d.attempts.map((a: { attempt: number; status_code: number }) => [a.attempt, a.status_code])).toEqual([
        [1, 500],
        [2, 503],
        [3, 204],
      ]);
      // A failed attempt says when the next one goes out; the schedule's delay (300 ms) came between them.
      expect(d.attempts[0].next_attempt_at).not.toBeNull();
      expect(d.attempts[2].next_attempt_at).toBeNull();
      expect(hook.received[1]!.at - hook.received[0]!.at).toBeGreaterThanOrEqual(250);

      // Delivered: the output is no longer kept; a re-send still tells the receiver the call ended, without it.
      const again = await send(g.url, 'POST', `/v0/calls/${id}/deliveries`, { key: alice.human, body: {} });
      expect([again.status, again.body.resend]).toEqual([202, 1]);
      const resent = await waitForState(g, alice.human, id, 'delivered', (x) => x.attempts.length === 4);
      expect(resent.attempts.at(-1)).toMatchObject({ attempt: 4, resend: true, status_code: 204 });
      expect(resent.reason).toMatch(/no longer kept/);
      expect(verify(alice.webhookSecret, hook.received[3]!)).toMatchObject({ status: 'succeeded', output: null, output_expired: true });
      expect(verify(alice.webhookSecret, hook.received[2]!)).not.toHaveProperty('output_expired');

      // A failed call has no output to lose: a re-send goes out at once, once, with the same webhook-id.
      const failing = await startReceiver([{ status: 500 }, { status: 500 }, { status: 500 }]);
      const failed = await send(g.url, 'POST', '/v0/calls', {
        key: alice.agent,
        headers: { prefer: 'respond-async' },
        body: { agent: 'examples/flaky', input: { mode: 'crash' }, callback_url: failing.url },
      });
      expect(failed.status, JSON.stringify(failed.body)).toBe(202);
      const failedId = failed.body.call.id as string;
      const gaveUp = await waitForState(g, alice.human, failedId, 'gave_up');
      expect(gaveUp.attempts).toHaveLength(3);
      expect(gaveUp.reason).toMatch(/every attempt/);
      const resend = await send(g.url, 'POST', `/v0/calls/${failedId}/deliveries`, { key: alice.human, body: {} });
      expect([resend.status, resend.body.resend]).toEqual([202, 1]);
      const delivered = await waitForState(g, alice.human, failedId, 'delivered');
      expect(delivered.attempts.at(-1)).toMatchObject({ attempt: 4, resend: true, status_code: 204 });
      expect(failing.received).toHaveLength(4);
      expect(failing.received.every((r) => r.headers['webhook-id'] === `msg_${failedId}`)).toBe(true);
      expect(verify(alice.webhookSecret, failing.received[3]!)).toMatchObject({ status: 'failed', output: null });
      // Re-sends are rate-limited per account (HOLON_RATE_REDELIVERIES_PER_HOUR = 3 here; the 409 above counted too).
      expect((await send(g.url, 'POST', `/v0/calls/${failedId}/deliveries`, { key: alice.human, body: {} })).status).toBe(202);
      const limited = await send(g.url, 'POST', `/v0/calls/${failedId}/deliveries`, { key: alice.human, body: {} });
      expect([limited.status, limited.body.error?.code]).toEqual([429, 'rate_limited']);
    });
  });

  test('410 Gone stops the retries; Retry-After delays the next attempt; an attempt is cut at its timeout', async () => {
    await useAudited(await hosted(fast({ attemptTimeoutMs: 500 })), async (g) => {
      const alice = await signUpWithSecret(g, 'alice');
      const gone = await startReceiver([{ status: 410 }]);
      const goneId = await callWithCallback(g, alice.agent, gone.url);
      const d = await waitForState(g, alice.human, goneId, 'gone');
      expect(d.reason).toMatch(/410/);
      await sleep(1_000); // two schedule delays: nothing more goes out
      expect(gone.received).toHaveLength(1);
      expect((await deliveryOf(g, alice.human, goneId)).attempts).toHaveLength(1);

      const busy = await startReceiver([{ status: 503, headers: { 'retry-after': '2' } }]);
      const busyId = await callWithCallback(g, alice.agent, busy.url);
      await waitForState(g, alice.human, busyId, 'delivered');
      expect(busy.received).toHaveLength(2);
      expect(busy.received[1]!.at - busy.received[0]!.at).toBeGreaterThanOrEqual(1_900);

      const slow = await startReceiver(['hang']);
      const slowId = await callWithCallback(g, alice.agent, slow.url);
      const done = await waitForState(g, alice.human, slowId, 'delivered');
      expect(done.attempts[0]).toMatchObject({ status_code: null, error: 'no answer within the attempt timeout' });
      expect(done.attempts[0].duration_ms).toBeGreaterThanOrEqual(450);
      expect(slow.received.map((r) => r.headers['webhook-id'])).toEqual([`msg_${slowId}`, `msg_${slowId}`]);
    });
  });

  test('an output that expired before a retry: the receiver still hears the call ended (output null, output_expired), and the log says so', async () => {
    await useAudited(await hosted(fast({ scheduleMs: [0, 2_500] }), { resultTtlS: 1 }), async (g) => {
      const alice = await signUpWithSecret(g, 'alice');
      const hook = await startReceiver([{ status: 500 }]);
      const id = await callWithCallback(g, alice.agent, hook.url);
      const d = await waitForState(g, alice.human, id, 'delivered');
      expect(d.reason).toMatch(/no longer kept/);
      expect(d.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([500, 204]);
      expect(hook.received).toHaveLength(2);
      const [first, second] = hook.received.map((r) => verify(alice.webhookSecret, r) as Record<string, unknown>);
      expect(first).toMatchObject({ status: 'succeeded' });
      expect(first!.output).not.toBeNull();
      expect(first).not.toHaveProperty('output_expired');
      expect(second).toMatchObject({ status: 'succeeded', output: null, output_expired: true, receipt: { id, billed: true } });
    });
  });

  test('rotation: during the window both the old and the new secret verify; after it only the new one', async () => {
    await useAudited(await hosted(fast({ rotationWindowS: 2 })), async (g) => {
      const alice = await signUpWithSecret(g, 'alice');
      const old = alice.webhookSecret;
      const rotated = await send(g.url, 'POST', '/v0/webhooks/secret/rotate', { key: alice.human, body: {} });
      expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
      const fresh = rotated.body.webhook_secret as string;
      expect(fresh).toMatch(/^whsec_/);
      expect(fresh).not.toBe(old);
      expect(Date.parse(rotated.body.previous_valid_until) - Date.now()).toBeLessThanOrEqual(2_500);
      // Only a human key rotates.
      expect((await send(g.url, 'POST', '/v0/webhooks/secret/rotate', { key: alice.agent, body: {} })).status).toBe(403);
      expect((await send(g.url, 'POST', '/v0/webhooks/secret/rotate', { body: {} })).status).toBe(401);

      const hook = await startReceiver();
      const during = await callWithCallback(g, alice.agent, hook.url, 'during');
      await waitForState(g, alice.human, during, 'delivered');
      const first = hook.received[0]!;
      expect(String(first.headers['webhook-signature']).split(' ')).toHaveLength(2);
      expect(verifies(old, first)).toBe(true);
      expect(verifies(fresh, first)).toBe(true);

      await sleep(Math.max(0, Date.parse(rotated.body.previous_valid_until) - Date.now()) + 300);
      const after = await callWithCallback(g, alice.agent, hook.url, 'after');
      await waitForState(g, alice.human, after, 'delivered');
      const second = hook.received[1]!;
      expect(String(second.headers['webhook-signature']).split(' ')).toHaveLength(1);
      expect(verifies(fresh, second)).toBe(true);
      expect(verifies(old, second)).toBe(false);
      // The old secret was dropped.
      const rows = await g.db.knex('webhook_secrets').where({ account: 'alice' }).count<Array<{ n: bigint }>>('* as n');
      expect(Number(rows[0]!.n)).toBe(1);
    });
  });

  test('an account made before per-account secrets gets its first one on its first rotation; until then attempts say so', async () => {
    await useAudited(await hosted(fast({ scheduleMs: [0, 1_500, 1_500] })), async (g) => {
      const alice = await signUpWithSecret(g, 'alice');
      // As if alice had signed up before migration 015.
      await g.db.knex('webhook_secrets').where({ account: 'alice' }).delete();
      const hook = await startReceiver();
      const id = await callWithCallback(g, alice.agent, hook.url);
      await poll(async () => ((await deliveryOf(g, alice.human, id))?.attempts.length ?? 0) >= 1, { what: 'the first attempt', timeoutMs: 10_000 });
      const d = await deliveryOf(g, alice.human, id);
      expect(d.attempts[0]).toMatchObject({ status_code: null, error: expect.stringMatching(/no webhook secret/) });
      expect(hook.received).toHaveLength(0);
      const rotated = await send(g.url, 'POST', '/v0/webhooks/secret/rotate', { key: alice.human, body: {} });
      expect([rotated.status, rotated.body.previous_valid_until]).toEqual([200, null]);
      await waitForState(g, alice.human, id, 'delivered');
      expect(hook.received).toHaveLength(1);
      expect(verify(rotated.body.webhook_secret, hook.received[0]!)).toMatchObject({ call: { id } });
    });
  });

  test('signing in with GitHub for the first time returns the new account’s webhook secret, once', async () => {
    const github = await startFakeGitHub();
    cleanups.push(() => github.close());
    await useAudited(await hosted(fast(), { ...github.config }), async (g) => {
      const octo = await signInWithGitHub(g.url, github, 'octo', 4242);
      expect(octo.webhookSecret).toMatch(/^whsec_/);
      const again = await signInWithGitHub(g.url, github, 'octo', 4242);
      expect(again.webhookSecret).toBeUndefined();
      expect(await rowsHolding(g, octo.webhookSecret!)).toEqual([]);
    });
  });
});

/**
 * A receiver that accepts connections and never answers (a tarpit). Each event goes to `events` in the order it
 * happened; a connection's end says whether `other()` (another receiver's count of requests) was still 0 then.
 */
async function startTarpit(events: string[], other: () => number): Promise<{ url: string; open(): number; opened(): number; maxOpen(): number }> {
  const sockets = new Set<Socket>();
  let opened = 0;
  let maxOpen = 0;
  const server = createNetServer((socket) => {
    opened++;
    sockets.add(socket);
    maxOpen = Math.max(maxOpen, sockets.size);
    socket.on('data', () => {}); // read the request, answer nothing
    socket.on('error', () => {});
    socket.on('close', () => {
      sockets.delete(socket);
      events.push(other() === 0 ? 'tarpit: an attempt ended, bob not received yet' : 'tarpit: an attempt ended');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    open: () => sockets.size,
    opened: () => opened,
    maxOpen: () => maxOpen,
  };
}

describe('webhooks, hosted: one account cannot hold back another’s (fair delivery)', () => {
  test('forty tarpit callbacks of one account in flight: another account’s delivery does not wait for them; theirs are still tried and logged', async () => {
    const cap = 4;
    const settings = fast({
      scheduleMs: [0, 3_600_000], // a failed first attempt comes back in an hour: not within this test
      attemptTimeoutMs: 15_000,
      firstByteTimeoutMs: 8_000,
      accountInFlight: cap,
      breakerFailures: 3,
      breakerCoolDownMs: 500,
    });
    await useAudited(await hosted(settings), async (g) => {
      const alice = await signUpWithSecret(g, 'alice');
      const bob = await signUpWithSecret(g, 'bob');
      const events: string[] = [];
      const hook = await startReceiver();
      const tarpit = await startTarpit(events, () => hook.received.length);

      const aliceCalls: string[] = [];
      for (let i = 0; i < 40; i += 8) {
        const batch = Array.from({ length: 8 }, (_, j) => callWithCallback(g, alice.agent, tarpit.url, `a${i + j}`));
        aliceCalls.push(...(await Promise.all(batch)));
      }
      // Alice's attempts hang at the tarpit: as many as her cap.
      await poll(() => tarpit.open() >= cap, { what: 'alice’s cap of attempts in flight at the tarpit', timeoutMs: 30_000, intervalMs: 20 });

      events.push('bob: submitted');
      const bobCall = await callWithCallback(g, bob.agent, hook.url, 'for bob');
      await waitForState(g, bob.human, bobCall, 'delivered', () => true, 30_000);
      expect(hook.received.map((r) => r.headers['webhook-id'])).toEqual([`msg_${bobCall}`]);
      // The order: bob's delivery did not wait for a slot that alice's attempts held. While it was on its way, at most
      // her cap of attempts ended (those in flight ending on their own); waiting behind her forty would take the
      // end of every slot's attempt, and her queued ones' turns, first.
      const whileBobWaited = events.slice(events.indexOf('bob: submitted')).filter((e) => e === 'tarpit: an attempt ended, bob not received yet');
      expect(whileBobWaited.length).toBeLessThanOrEqual(cap);
      // Her backlog still waited: most of her deliveries had not been tried when bob's was delivered.
      expect(tarpit.opened()).toBeLessThan(40 - cap);

      // Alice's deliveries are still tried and logged: her attempts end at the first-byte timeout; after three
      // failures the breaker holds the tarpit, and after its cool-down one probe goes at a time.
      const attemptsOfAlice = () =>
        g.db
          .knex('webhook_attempts as a')
          .join('webhook_deliveries as d', 'd.id', 'a.delivery_id')
          .where('d.account', 'alice')
          .select('a.delivery_id', 'a.error');
      const logged = await poll(
        async () => {
          const rows = await attemptsOfAlice();
          return rows.length >= 5 ? rows : undefined;
        },
        { what: 'five of alice’s attempts logged', timeoutMs: 60_000, intervalMs: 100 },
      );
      for (const r of logged) expect(r.error).toBe('no answer within the first-byte timeout');
      expect(tarpit.maxOpen()).toBeLessThanOrEqual(cap); // never more than her cap at once
      // Nothing lost, no attempt used by waiting: every delivery of hers still pending, each with one step of its
      // schedule used per attempt made (none by a postponement), the untried ones still queued.
      const rows = await g.db.knex('webhook_deliveries').where({ account: 'alice' }).select('id', 'state', 'steps_made', 'attempts', 'next_attempt_at');
      expect(new Set(rows.map((r) => String(r.id)))).toEqual(new Set(aliceCalls.map((id) => `msg_${id}`)));
      expect(new Set(rows.map((r) => r.state))).toEqual(new Set(['pending']));
      for (const r of rows) expect(Number(r.steps_made)).toBe(Number(r.attempts));
      const untried = rows.filter((r) => Number(r.attempts) === 0);
      expect(untried.length).toBeGreaterThan(0);
      for (const r of untried) {
        expect(r.next_attempt_at).not.toBeNull();
        // Its first attempt's job is still in the queue (postponed, delayed in Redis, or waiting its turn) — unless
        // it ran meanwhile, which its row then says.
        const job = { callId: String(r.id).slice('msg_'.length), deliveryId: String(r.id), step: 0 };
        const queued = await attemptQueued(g.gw.context.messaging.queues, job);
        const now = await g.db.knex('webhook_deliveries').where({ id: r.id }).first('attempts');
        if (Number(now.attempts) === 0) expect(queued).toBe(true);
      }
    });
  }, 120_000);
});

describe('webhooks, dev mode: one local secret', () => {
  test('a settler restarted between attempts still retries: the attempt waits in Redis, the new settler sends it', async () => {
    // Every process signs with the one dev secret; the second attempt comes 4 s after the first. Four processes start
    // one after another (each ~10 s on a busy machine): the test's time is theirs, as the tests above allow.
    const secret = generateWebhookSecret();
    const { cluster, redis, stop } = await startTestCluster({ env: { HOLON_CALLBACK_SECRET: secret, HOLON_WEBHOOK_SCHEDULE: '0,4s,1s' } });
    cleanups.push(stop);
    onTestFailed(() => console.error(`service output:\n${cluster.describe()}`));
    const hook = await startReceiver([{ status: 500 }]);
    const api: ServiceProcess = await cluster.start('api');
    await cluster.start('runner');
    const settler = await cluster.start('settler');
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) => send(api.url!, 'POST', path, { body, headers });
    const m = await post('/v0/mandates', {
      id: 'alice/hooks',
      issuer: 'alice',
      grantee: 'alice/assistant',
      allow: { agents: ['examples/*'] },
      budget: { total: '1.00', currency: 'EUR' },
    });
    expect(m.status, JSON.stringify(m.body)).toBe(201);
    const r = await post(
      '/v0/calls',
      { mandate: 'alice/hooks', agent: 'examples/echo-upper', input: { text: 'restart' }, callback_url: hook.url },
      { prefer: 'respond-async' },
    );
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    const id = r.body.call.id as string;

    // The first attempt failed; the second waits, delayed, in Redis. The settler dies.
    const raw = new Redis(redis.url);
    cleanups.push(async () => raw.disconnect());
    const delayed = `${bullPrefixOf(redis.prefix)}:deliver:delayed`;
    await poll(async () => hook.received.length === 1 && (await raw.zcard(delayed)) === 1, {
      what: 'the second attempt to wait in Redis',
      timeoutMs: 30_000,
      context: cluster.describe,
    });
    settler.kill('SIGKILL');
    await settler.exit;
    await sleep(4_500); // past the attempt's time: nobody is there to send it
    expect(hook.received).toHaveLength(1);

    await cluster.start('settler');
    await poll(() => hook.received.length === 2, { what: 'the retry from the new settler', timeoutMs: 30_000, context: cluster.describe });
    const [first, second] = hook.received;
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(first!.headers['webhook-id']).toBe(`msg_${id}`);
    expect(verify(secret, second!)).toMatchObject({ type: 'call.completed', call: { id }, output: { text: 'RESTART' } });
    expect(verify(secret, first!)).toMatchObject({ call: { id } });
    const log = await poll(
      async () => {
        const d = (await send(api.url!, 'GET', `/v0/calls/${id}/deliveries`)).body.delivery;
        return d?.state === 'delivered' ? d : undefined;
      },
      { what: 'the delivery to be logged delivered', timeoutMs: 10_000 },
    );
    expect(log.attempts.map((a: { attempt: number; status_code: number }) => [a.attempt, a.status_code])).toEqual([
      [1, 500],
      [2, 204],
    ]);
    // No process printed or logged the secret (the banner only prints a generated one; this one was set).
    expect(cluster.describe()).not.toContain(secret.slice(6, 30));
  }, 120_000);
});

/** Tables whose rows contain `needle` anywhere (the text of every row of every table). */
async function rowsHolding(g: TestGateway, needle: string): Promise<string[]> {
  const knex = g.db.knex;
  const tables: string[] = await knex('information_schema.tables').where({ table_schema: 'public', table_type: 'BASE TABLE' }).pluck('table_name');
  expect(tables).toEqual(expect.arrayContaining(['webhook_secrets', 'webhook_deliveries', 'webhook_attempts', 'receipts']));
  const hits: string[] = [];
  for (const table of tables) {
    const r = await knex.raw<{ rows: Array<{ n: number }> }>('SELECT count(*)::int AS n FROM ?? AS t WHERE strpos(row_to_json(t)::text, ?) > 0', [
      table,
      needle,
    ]);
    if (r.rows[0]!.n > 0) hits.push(table);
  }
  return hits;
}

/** Redis keys of this gateway whose value (string, hash, list, set or sorted set) contains `needle`. */
async function redisHolding(g: TestGateway, needle: string): Promise<string[]> {
  const raw = new Redis(g.redisUrl);
  try {
    const hits: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await raw.scan(cursor, 'MATCH', `${g.redisPrefix}*`, 'COUNT', 500);
      cursor = next;
      for (const key of keys) {
        const type = await raw.type(key);
        const values =
          type === 'string'
            ? [await raw.get(key)]
            : type === 'hash'
              ? Object.values(await raw.hgetall(key))
              : type === 'list'
                ? await raw.lrange(key, 0, -1)
                : type === 'set'
                  ? await raw.smembers(key)
                  : type === 'zset'
                    ? await raw.zrange(key, 0, -1)
                    : [];
        if (values.some((v) => v?.includes(needle))) hits.push(key);
      }
    } while (cursor !== '0');
    return hits;
  } finally {
    raw.disconnect();
  }
}
