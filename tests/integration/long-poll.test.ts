/**
 * Long-polling `GET /v0/calls/{id}?wait=<seconds>` (services/api/routes/calls/long-poll.ts, shared/calls/answer/waiter.ts): held until
 * the call is final or the wait ends, on any API process (woken by `calls-done`, the receipt row the truth), with
 * the same answer as a plain GET; strangers get 404 as ever; a client that goes away releases its place.
 */
import { EventEmitter } from 'node:events';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Response } from 'express';
import { describe, expect, test } from 'vitest';
import { HolonError } from '../../shared/core/errors.js';
import { LongPolls, waitParam } from '../../services/api/routes/calls/long-poll.js';
import { startTestGateway, useAudited } from '../support/gateway.js';
import { send, signUp, workMandate } from '../support/hosted.js';
import { poll } from '../support/poll.js';
import { httpStatusOf } from '../../services/api/http-status.js';

async function started(file: string): Promise<void> {
  await poll(async () => (await readFile(file, 'utf8').catch(() => '')).includes('started'), { what: 'the call to run', timeoutMs: 10_000, intervalMs: 20 });
}

describe('long-polling a call', () => {
  test('answers as soon as the call ends, on the API process that did not take it; after the wait otherwise; strangers 404', async () => {
    await useAudited(await startTestGateway({ hosted: true }), async (g) => {
      const other = await startTestGateway({ beside: g, roles: ['api'], hosted: true });
      try {
        const alice = await signUp(g.url, 'alice');
        const { mandate, agent } = await workMandate(g.url, alice);
        const mallory = await signUp(g.url, 'mallory');

        // A call that ends after ~600 ms, submitted to one API, long-polled on the other.
        const submitted = await send(g.url, 'POST', '/v0/calls', {
          key: agent,
          headers: { prefer: 'respond-async' },
          body: { mandate, agent: 'examples/slow', input: { ms: 600 } },
        });
        expect(submitted.status).toBe(202);
        const id = submitted.body.call.id;
        const t0 = Date.now();
        const polled = await send(other.url, 'GET', `/v0/calls/${id}?wait=20`, { key: agent });
        const took = Date.now() - t0;
        expect(polled.status).toBe(200);
        expect(polled.body).toMatchObject({ call: { id, status: 'succeeded' }, output: { waited: 600 }, receipt: { id, billed: true } });
        // Held while the agent worked (it was not final when asked), and answered on the notification, not at the end of the wait.
        expect(took).toBeGreaterThan(300);
        expect(took).toBeLessThan(5_000);
        // The same answer as GET without wait, on either process: a read takes nothing (docs/lifecycle.md).
        expect((await send(g.url, 'GET', `/v0/calls/${id}?wait=5`, { key: agent })).body).toEqual(polled.body);

        // A call still running when the wait ends: answered after the wait with its status.
        const file = path.join(await mkdtemp(path.join(tmpdir(), 'holon-poll-')), 'patient.log');
        const long = await send(g.url, 'POST', '/v0/calls', {
          key: agent,
          headers: { prefer: 'respond-async' },
          body: { mandate, agent: 'fixtures/patient', input: { file, ms: 20_000 } },
        });
        const longId = long.body.call.id;
        await started(file);
        const t1 = Date.now();
        const still = await send(other.url, 'GET', `/v0/calls/${longId}?wait=1.5`, { key: agent });
        const waited = Date.now() - t1;
        expect(still.status).toBe(200);
        expect(still.body).toEqual({ call: { id: longId, status: 'running' } });
        expect(waited).toBeGreaterThanOrEqual(1_450);
        expect(waited).toBeLessThan(4_000);

        // wait=0 is a plain GET; another principal's call does not exist for it, wait or not (and it is not held).
        expect((await send(g.url, 'GET', `/v0/calls/${longId}?wait=0`, { key: agent })).body).toEqual({ call: { id: longId, status: 'running' } });
        const t2 = Date.now();
        const stranger = await send(other.url, 'GET', `/v0/calls/${longId}?wait=10`, { key: mallory.sandboxAgent });
        expect(stranger.status).toBe(404);
        expect(Date.now() - t2).toBeLessThan(1_000);

        // Cancelled while a long-poll waits: the long-poll hears the end at once.
        const poll = send(other.url, 'GET', `/v0/calls/${longId}?wait=30`, { key: agent });
        await new Promise((resolve) => setTimeout(resolve, 200));
        const t3 = Date.now();
        expect((await send(g.url, 'POST', `/v0/calls/${longId}/cancel`, { key: agent })).status).toBe(200);
        const ended = await poll;
        expect(Date.now() - t3).toBeLessThan(5_000);
        expect(ended.body).toMatchObject({ call: { id: longId, status: 'failed' }, receipt: { error: 'cancelled', billed: false } });
      } finally {
        await other.stop();
      }
    });
  });

  test('?wait= takes 0 to 60 seconds, whole or decimal; anything else is a 400 that says so', async () => {
    await useAudited(await startTestGateway({ hosted: true }), async (g) => {
      const alice = await signUp(g.url, 'alice');
      const { mandate, agent } = await workMandate(g.url, alice);
      const done = await send(g.url, 'POST', '/v0/calls', { key: agent, body: { mandate, agent: 'examples/echo-upper', input: { text: 'a' } } });
      expect(done.status).toBe(200);
      const id = done.body.receipt.id;
      for (const bad of ['61', '60.5', '-1', 'abc', '', '1e3', '0x10', ' 5', '5s', 'wait=1&wait=2']) {
        const query = bad.startsWith('wait=') ? bad : `wait=${encodeURIComponent(bad)}`;
        const r = await send(g.url, 'GET', `/v0/calls/${id}?${query}`, { key: agent });
        expect(r.status, `wait=${bad}`).toBe(400);
        expect(r.body.error.code).toBe('invalid_request');
        expect(r.body.error.message).toMatch(/^\?wait= must /);
      }
      expect((await send(g.url, 'GET', `/v0/calls/${id}?wait=61`, { key: agent })).body.error.message).toContain('at most 60 seconds');
      for (const good of ['0', '60', '2.5', '0.25']) {
        // A final call is answered at once whatever the wait.
        const t = Date.now();
        const r = await send(g.url, 'GET', `/v0/calls/${id}?wait=${good}`, { key: agent });
        expect(r.status, `wait=${good}`).toBe(200);
        expect(r.body.call).toEqual({ id, status: 'succeeded' });
        expect(Date.now() - t).toBeLessThan(1_000);
      }
    });
  });
});

describe('long-poll places (services/api/routes/calls/long-poll.ts)', () => {
  const fakeResponse = () => Object.assign(new EventEmitter(), { set: () => undefined }) as unknown as Response & EventEmitter;

  test('a client that goes away ends its wait and gives its place back; the limits refuse with 429 and 503', async () => {
    const polls = new LongPolls({ perProcess: 3, perPrincipal: 2 });
    const waits: Array<{ res: Response & EventEmitter; ended: Promise<void>; aborted: () => boolean }> = [];
    const hold = (principal: string) => {
      const res = fakeResponse();
      let signal: AbortSignal | undefined;
      const ended = polls.hold(res, principal, (s) => {
        signal = s;
        return new Promise<void>((resolve) => s.addEventListener('abort', () => resolve(), { once: true }));
      });
      waits.push({ res, ended, aborted: () => Boolean(signal?.aborted) });
      return ended;
    };
    void hold('account:a');
    void hold('account:a');
    await expect(hold('account:a')).rejects.toSatisfy((e: unknown) => e instanceof HolonError && e.code === 'too_many_waits' && httpStatusOf(e.code) === 429);
    void hold('account:b');
    expect(polls.size).toBe(3);
    await expect(hold('account:c')).rejects.toSatisfy((e: unknown) => e instanceof HolonError && httpStatusOf(e.code) === 503);
    // The first client disconnects: its wait is told at once, and its place is free for someone else.
    waits[0]!.res.emit('close');
    await waits[0]!.ended;
    expect(waits[0]!.aborted()).toBe(true);
    expect(polls.size).toBe(2);
    void hold('account:a');
    expect(polls.size).toBe(3);
    for (const w of waits) w.res.emit('close');
    await Promise.allSettled(waits.map((w) => w.ended));
    expect(polls.size).toBe(0);
  });

  test('waitParam: milliseconds, 0 without a wait', () => {
    expect(waitParam(undefined)).toBe(0);
    expect(waitParam('0')).toBe(0);
    expect(waitParam('2.5')).toBe(2_500);
    expect(waitParam('60')).toBe(60_000);
    expect(() => waitParam(['1', '2'])).toThrow(/given once/);
    expect(() => waitParam('60.001')).toThrow(/at most 60/);
  });
});
