/**
 * The typed client (`holon/client`, docs/client.md) against a running hosted gateway: every helper, what it answers,
 * and the HolonApiError of each refusal and failure (status, `{code, message, problems}`, the receipt). The gateway's
 * synchronous wait is 1 s here, so `call` also follows a slower call with GET /v0/calls/{id}?wait= to its end.
 * What each helper sends, against a stand-in fetch: tests/unit/client.test.ts.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createHolonClient, HolonApiError, type CallAnswerWithReceipt, type CallHeld, type CallSucceeded } from 'holon/client';
import { expect, test } from 'vitest';
import { startFakeGitHub } from '../support/fake-github.js';
import { startTestGateway, useAudited } from '../support/gateway.js';
import { signInWithGitHub } from '../support/github-accounts.js';
import { signUp, workMandate } from '../support/hosted.js';
import { GENEROUS_RATE_LIMITS } from '../support/http.js';
import { poll } from '../support/poll.js';
import { startWebhookAgent } from '../support/published-servers.js';

const SECRET = 'client-test-file-secret-0123456789abcdefghij';

/** The success a call answered, else the test fails with what it got (the types tell the two apart by `status`). */
function succeeded(answer: CallAnswerWithReceipt): CallSucceeded {
  if (answer.status !== 'succeeded') throw new Error(`expected a success, got ${JSON.stringify(answer)}`);
  return answer;
}

/** The call held for approval, else the test fails with what it got. */
function held(answer: CallAnswerWithReceipt): CallHeld {
  if (answer.status !== 'pending_approval') throw new Error(`expected a held call, got ${JSON.stringify(answer)}`);
  return answer;
}

/** What `fn` threw: a HolonApiError, else the test fails with what it got. */
async function refusal(fn: () => Promise<unknown>): Promise<HolonApiError> {
  const e = await fn().then(
    (v) => v,
    (x: unknown) => x,
  );
  if (e instanceof HolonApiError) return e;
  throw new Error(`expected a HolonApiError, got ${e instanceof Error ? e.stack : JSON.stringify(e)}`);
}

test('an agent key: calls (sync, followed past the wait, async, cancelled), refusals and failures, receipts page by page', async () => {
  await useAudited(await startTestGateway({ hosted: true, config: { ...GENEROUS_RATE_LIMITS, syncWaitS: 1 } }), async (g) => {
    const alice = await signUp(g.url, 'alice');
    const work = await workMandate(g.url, alice);
    const holon = createHolonClient({ baseUrl: g.url, key: work.agent });

    // A paid call: the output and its receipt, typed.
    const paid = succeeded(await holon.call({ agent: 'examples/echo-upper', input: { text: 'hello' } }));
    expect(paid.output).toEqual({ text: 'HELLO' });
    expect(paid.receipt).toMatchObject({ status: 'succeeded', billed: true, mandate: 'alice/work', cost: { own: '0.01', total: '0.01' } });
    expect(paid.receipt.splits.reduce((sum, s) => sum + Number(s.amount), 0)).toBeCloseTo(0.01, 10);

    // Refused: 422 with every problem and the receipt.
    const bad = await refusal(() => holon.call({ agent: 'examples/echo-upper', input: { txt: 1 } }));
    expect(bad).toMatchObject({ status: 422, code: 'rejected_input' });
    expect(bad.problems).toEqual(
      expect.arrayContaining([
        { path: '$.text', message: 'is required' },
        { path: '$.txt', message: 'is not a known field' },
      ]),
    );
    expect(bad.receipt).toMatchObject({ status: 'rejected_input', billed: false });
    // Denied by the caller's own ceiling: 403, with its receipt.
    const denied = await refusal(() => holon.call({ agent: 'examples/echo-upper', input: { text: 'x' }, max_cost: '0.001' }));
    expect(denied.status).toBe(403);
    expect(denied.receipt).toMatchObject({ status: 'denied', billed: false });
    // Unknown: 404, no receipt.
    expect(await refusal(() => holon.receipts.get('r_nope'))).toMatchObject({ status: 404, code: 'not_found', receipt: undefined });

    // Longer than the gateway's synchronous wait (1 s): answered 202, followed to its end.
    const dir = await mkdtemp(path.join(tmpdir(), 'holon-client-'));
    const slow = succeeded(await holon.call({ agent: 'fixtures/patient', input: { file: path.join(dir, 'slow.log'), ms: 1500 } }));
    expect(slow.output).toEqual({ waited: 1500 });
    expect(slow.receipt.status).toBe('succeeded');
    // A run that fails (its 1 s hard timeout), however it is learnt: 502 with the receipt's error.
    const late = await refusal(() => holon.call({ agent: 'fixtures/short-fuse', input: { ms: 3000 } }));
    expect(late).toMatchObject({ status: 502, code: 'timeout' });
    expect(late.receipt).toMatchObject({ status: 'failed', error: 'timeout' });

    // Async: 202 at once; cancelled while it runs; waited for.
    const queued = await holon.callAsync({ agent: 'fixtures/patient', input: { file: path.join(dir, 'cancel.log'), ms: 30_000 } });
    const id = queued.status === 'queued' ? queued.call.id : undefined;
    expect(id).toMatch(/^r_/);
    await poll(async () => (await readFile(path.join(dir, 'cancel.log'), 'utf8').catch(() => '')).includes('started'), {
      what: 'the call to start',
      timeoutMs: 5_000,
      intervalMs: 50,
      orUndefined: true, // cancelled before it starts is an answer too
    });
    expect(['cancelled', 'cancelling']).toContain((await holon.cancel(id!)).cancel);
    let ended = await holon.wait(id!, { seconds: 20 });
    for (let i = 0; i < 5 && !ended.receipt; i++) ended = await holon.wait(id!, { seconds: 20 });
    expect(ended.receipt).toMatchObject({ status: 'failed', error: 'cancelled', billed: false });

    // Receipts: a page, its `next`, every page, every receipt; one receipt as the call answered it.
    const first = await holon.receipts.list({ limit: 2 });
    expect(first.receipts).toHaveLength(2);
    expect(first.next).toBe(first.receipts[1]!.id);
    const pages = [];
    for await (const page of holon.receipts.pages({ limit: 2 })) pages.push(page);
    const all = [];
    for await (const r of holon.receipts.all({ limit: 2 })) all.push(r);
    expect(all).toEqual(pages.flatMap((p) => p.receipts));
    expect(all.map((r) => r.id)).toEqual(expect.arrayContaining([paid.receipt.id, slow.receipt.id, late.receipt!.id, id]));
    expect(pages.at(-1)!.next).toBeUndefined();
    expect(await holon.receipts.get(paid.receipt.id)).toEqual(paid.receipt);
    expect((await holon.receipts.list({ status: 'succeeded' })).receipts.map((r) => r.id).sort()).toEqual([paid.receipt.id, slow.receipt.id].sort());
  });
});

test('a human key: mandates, approvals, files, publishing, earnings, credentials, and the raw typed client', async () => {
  const github = await startFakeGitHub();
  const endpoint = await startWebhookAgent({ tls: false });
  const config = { ...GENEROUS_RATE_LIMITS, ...github.config, githubTimeoutMs: 400, allowPrivateEndpoints: true, fileSecret: SECRET };
  try {
    await useAudited(await startTestGateway({ hosted: true, config: config }), async (g) => {
      const alice = await signUp(g.url, 'alice');
      const holon = createHolonClient({ baseUrl: g.url, key: alice.human });

      // Mandates: create one that holds calls above 0.005 for approval, read it ("/" kept), list them.
      const created = await holon.mandates.create({
        id: 'held',
        grantee: 'alice/assistant',
        allow: { agents: ['examples/*', 'bob/*'] },
        budget: { total: '1.00' },
        approval: { above: '0.005' },
      });
      expect(created.budget).toMatchObject({ currency: 'EUR', total: '1.00', remaining: '1.00' });
      expect((await holon.mandates.get('alice/held')).mandate).toMatchObject({ id: 'alice/held' });
      expect((await holon.mandates.list()).map((m) => m.mandate.id).sort()).toEqual(['alice/held', 'alice/sandbox']);
      const taken = await refusal(() => holon.mandates.create({ id: 'held', grantee: 'alice/assistant', allow: {}, budget: { total: '1.00' } }));
      expect(taken).toMatchObject({ status: 409, code: 'mandate_exists' });

      // The raw client: any route, typed, `{data, error, response}`.
      const key = await holon.raw.POST('/v0/keys', { body: { mandate: 'alice/held' } });
      expect(key.response.status).toBe(201);
      const agent = createHolonClient({ baseUrl: g.url, key: key.data!.key });
      const me = await holon.raw.GET('/v0/me');
      expect(me.data).toMatchObject({ kind: 'human', account: { handle: 'alice' } });

      // Held for approval: call() answers with the approval and the pending receipt; the human approves and it runs.
      const asked = held(await agent.call({ agent: 'examples/echo-upper', input: { text: 'please' } }));
      expect(asked).toMatchObject({ status: 'pending_approval', approval: { status: 'pending' } });
      expect(asked.receipt).toMatchObject({ status: 'pending_approval', billed: false });
      const pending = await holon.approvals.list({ mandate: 'alice/held' });
      expect(pending.map((a) => a.id)).toEqual([asked.approval.id]);
      expect(await agent.approvals.list()).toEqual(pending);
      const ran = await holon.approvals.decide(asked.approval.id);
      expect(ran).toMatchObject({ output: { text: 'PLEASE' }, receipt: { status: 'succeeded', billed: true } });
      expect(await refusal(() => holon.approvals.decide(asked.approval.id, { decision: 'reject' }))).toMatchObject({ status: 409 });

      // Files: the bytes kept, a handle to put in an input.
      const file = await holon.files.upload(Buffer.from('a,b\n1,2\n'), { contentType: 'text/csv' });
      expect(file).toMatchObject({ handle: `holon://files/${file.id}`, size: 8, content_type: 'text/csv' });

      // Publishing: an email-only account is refused; a GitHub-linked author lists a version, once.
      const manifest = (id: string) => ({
        id,
        version: '1.0.0',
        summary: `${id}, published by the client test`,
        capabilities: ['text.echo'],
        license: 'proprietary',
        interface: { input: { type: 'object' }, output: { type: 'object' } },
        pricing: { model: 'per_run' as const, currency: 'EUR', amount: '0.004' },
        runtime: { kind: 'webhook' as const, endpoint: `http://127.0.0.1:${endpoint.port}/echo`, limits: { timeout_s: 10 } },
      });
      expect(await refusal(() => holon.publish(manifest('alice/echo')))).toMatchObject({ status: 403, code: 'github_not_linked' });
      const bob = createHolonClient({ baseUrl: g.url, key: (await signInWithGitHub(g.url, github, 'bob', 1001)).human });
      expect(await bob.publish(manifest('bob/echo'))).toMatchObject({ agent: 'bob/echo', version: '1.0.0', listed: true });
      const again = await refusal(() => bob.publish(manifest('bob/echo')));
      expect(again).toMatchObject({ status: 409, code: 'version_taken', problems: [{ path: '$.version' }] });

      // An endpoint credential: set (never answered back), then deleted; not for another's namespace.
      const set = await bob.credential.set('bob/echo', 'sk_live-token');
      expect(set).toMatchObject({ agent: 'bob/echo', credential: { set: true } });
      expect(JSON.stringify(set)).not.toContain('sk_live-token');
      expect((await bob.credential.delete('bob/echo')).credential).toMatchObject({ set: false });
      expect(await refusal(() => holon.credential.set('bob/echo', 'sk_live-token'))).toMatchObject({ status: 404 });

      // Alice pays for a call of it (below the approval threshold); Bob's earnings show it.
      expect((await agent.call({ agent: 'bob/echo', input: { n: 1 } })).receipt).toMatchObject({ status: 'succeeded', agent: 'bob/echo@1.0.0' });
      const earned = await bob.earnings();
      expect(earned).toMatchObject({ account: 'bob', versions: [{ agent: 'bob/echo', version: '1.0.0', earnings: { paid_calls: 1 } }] });
      expect(await holon.earnings()).toMatchObject({ account: 'alice', versions: [] });
      // An agent key may not: 403.
      expect(await refusal(() => agent.earnings())).toMatchObject({ status: 403 });
    });
  } finally {
    await endpoint.close();
    await github.close();
  }
});

test("a call's events and its question: events() follows the stream to `completed` (resuming after a given id), answer() answers", async () => {
  await useAudited(await startTestGateway({ hosted: true, config: GENEROUS_RATE_LIMITS }), async (g) => {
    const alice = await signUp(g.url, 'alice');
    const work = await workMandate(g.url, alice);
    const holon = createHolonClient({ baseUrl: g.url, key: work.agent });

    const streamed = await holon.callAsync({ agent: 'fixtures/streamer', input: { n: 3, gap_ms: 20 } });
    if (streamed.status !== 'queued') throw new Error(`expected a queued call, got ${JSON.stringify(streamed)}`);
    const seen = [];
    for await (const e of holon.events(streamed.call.id)) seen.push(e);
    expect(seen.map((e) => e.event)).toEqual(['queued', 'running', 'output.chunk', 'output.chunk', 'output.chunk', 'completed']);
    const last = seen.at(-1)!;
    if (last.event !== 'completed') throw new Error(`the stream ended with ${last.event}`);
    expect(last.data.receipt).toMatchObject({ delivered: { chunks: 3, units: '3' }, ended_by: 'completed' });
    const later = [];
    for await (const e of holon.events(streamed.call.id, { lastEventId: 4 })) later.push(e.id);
    expect(later).toEqual([5, 6]);

    const asking = await holon.callAsync({ agent: 'fixtures/asker', input: {} });
    if (asking.status !== 'queued') throw new Error(`expected a queued call, got ${JSON.stringify(asking)}`);
    const events = [];
    for await (const e of holon.events(asking.call.id)) {
      events.push(e.event);
      if (e.event === 'input_required') {
        const wrong = await refusal(() => holon.answer(asking.call.id, { name: 7 }, { question: e.data.question }));
        expect(wrong).toMatchObject({ status: 422, code: 'rejected_input' });
        expect(await holon.answer(asking.call.id, { name: 'Client' }, { question: e.data.question })).toMatchObject({ question: e.data.question });
      }
      if (e.event === 'completed') expect(e.data).toMatchObject({ status: 'succeeded', output: { greeting: 'hello Client' } });
    }
    expect(events).toEqual(['queued', 'running', 'progress', 'input_required', 'input_provided', 'completed']);
    const stranger = createHolonClient({ baseUrl: g.url, key: (await signUp(g.url, 'mallory')).human });
    expect(
      await refusal(async () => {
        for await (const _ of stranger.events(asking.call.id)) void _;
      }),
    ).toMatchObject({ status: 404 });
  });
});
