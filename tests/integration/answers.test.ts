/**
 * How finished calls are worded (services/api/routes/calls/answers.ts, shared/receipts/store.ts describeFailure): a failure's
 * message agrees with its receipt about money, and a 202 never carries a finished status.
 */
import type { Server } from 'node:http';
import { expect } from 'vitest';
import { createApp } from '../../services/api/app.js';
import { createCallWaiter } from '../../shared/calls/answer/waiter.js';
import type { Notifier } from '../../shared/messaging/types.js';
import { gatewayTest as test } from '../support/gateway-fixture.js';
import type { Schema } from '../support/http.js';

test('a 502 for a declared billed error says it was billed; an unbilled one says nothing was charged', async ({ gateway: g }) => {
  await g.mandate({});
  const billed = await g.post<Schema<'CallFailed'>>('/v0/calls', { mandate: 'alice/test', agent: 'examples/flaky', input: { mode: 'declared_billed' } });
  expect(billed.status).toBe(502);
  expect(billed.body.receipt.billed).toBe(true);
  expect(billed.body.error.message).toMatch(/billed, as its manifest declares/);
  expect(billed.body.error.message).not.toMatch(/nothing was charged/);
  const unbilled = await g.post<Schema<'CallFailed'>>('/v0/calls', { mandate: 'alice/test', agent: 'examples/flaky', input: { mode: 'declared_unbilled' } });
  expect(unbilled.status).toBe(502);
  expect(unbilled.body.receipt.billed).toBe(false);
  expect(unbilled.body.error.message).toMatch(/nothing was charged/);
});

test('a call that finished while its notification was lost is answered as finished, never 202 {status: failed}', async ({ gateway: g }) => {
  await g.mandate({});
  // The real waiter on a notifier that never delivers anything: every notice is lost, each wait ends at its timeout.
  const lost: Notifier = { publish: async () => {}, subscribe: async () => async () => {}, close: async () => {} };
  const deaf = await createCallWaiter(g.gw.context.db, lost);
  const app = createApp({
    ctx: g.gw.context,
    engine: g.gw.engine.withWaiter(deaf),
    waiter: deaf,
    syncWaitMs: 1_500,
    signupCredit: 0n,
    bodyLimitBytes: 1_048_576,
    origins: { allowed: [], loopbackPages: true, loopbackHostOnly: false },
    auth: { hosted: false, now: () => Date.now() },
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  try {
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v0/calls`;
    const post = async (input: unknown) => {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ mandate: 'alice/test', agent: 'examples/flaky', input }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };
    const failed = await post({ mode: 'crash' });
    expect(failed.status).toBe(502);
    expect(failed.body.receipt).toMatchObject({ status: 'failed', billed: false });
    const ok = await post({ mode: 'ok' });
    expect(ok.status).toBe(200);
    expect(ok.body.receipt.status).toBe('succeeded');
  } finally {
    server.close();
  }
});
