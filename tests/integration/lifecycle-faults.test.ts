import { createServer, type Server } from 'node:http';
import { mkdtemp, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test as base } from 'vitest';
import { gatewayTest as test } from '../support/gateway-fixture.js';
import { startTestGateway } from '../support/gateway.js';
import { poll } from '../support/poll.js';
import { settleCall } from '../../shared/calls/settle/settle.js';
import { createCallEngine } from '../../shared/calls/engine.js';
import { sweep } from '../../services/settler/sweeper.js';
import { createRuntimes } from '../../shared/runtimes/index.js';
import { readBalance } from '../../shared/ledger/accounts.js';
import { audit } from '../../shared/ledger/audit.js';
import { HolonError } from '../../shared/core/errors.js';
import { httpStatusOf } from '../../services/api/http-status.js';
import { counterFile, lines } from '../support/temp-files.js';
import type { Schema } from '../support/http.js';

describe('at most once, exactly once', () => {
  test('a run job delivered again after its call finished does nothing; a settle job twice settles once', async ({ gateway: g }) => {
    await g.mandate({});
    const file = await counterFile();
    const r = await g.post<Schema<'CallSucceeded'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/counter', input: { file } });
    expect(r.status).toBe(200);
    const id = r.body.receipt.id;
    const runner = { runtimes: createRuntimes() };
    await g.gw.engine.run(id, runner);
    await g.gw.engine.run(id, runner);
    expect(await settleCall(g.gw.context, id)).toBe('noop');
    expect(await lines(file)).toEqual([id]);
    expect(await g.db.knex('journal_entries').where({ key: `settle:${id}` })).toHaveLength(1);
    expect((await readBalance(g.db.knex, 'alice', 'EUR')).balance).toBe(4_990_000n);
  });

  base('a run job that finds its call already started closes it failed / gateway_restarted, unbilled', async () => {
    // No runner in this gateway: the call stays queued until this test plays the runners.
    const g = await startTestGateway({ roles: ['api', 'settler'] });
    try {
      await g.mandate({});
      const file = await counterFile();
      const submitted = await g.gw.engine.submit({ mandateId: 'alice/test', agent: 'fixtures/counter', input: { file } });
      const id = (submitted as { callId: string }).callId;
      // A runner claimed it and died before finishing: the row says running, the agent never answered.
      await g.db.knex('calls').where({ id, status: 'queued' }).update({ status: 'running', started_at: new Date() });
      await g.gw.engine.run(id, { runtimes: createRuntimes() });
      await poll(() => g.db.knex('receipts').where({ id }).first(), { what: 'the receipt', timeoutMs: 5_000, intervalMs: 25, orUndefined: true });
      expect((await g.get(`/v0/receipts/${id}`)).body).toMatchObject({ status: 'failed', error: 'gateway_restarted', billed: false });
      expect(await lines(file)).toEqual([]);
      expect((await readBalance(g.db.knex, 'alice', 'EUR')).balance).toBe(5_000_000n);
      expect(await g.db.knex('holds').where({ status: 'held' })).toEqual([]);
      expect((await audit(g.db.knex)).problems).toEqual([]);
    } finally {
      await g.stop();
    }
  });

  test('the sweeper closes a call far past its deadline and a settling call whose job was lost', async ({ gateway: g }) => {
    await g.mandate({});
    const file = await counterFile();
    const a = await g.gw.engine.submit({ mandateId: 'alice/test', agent: 'fixtures/counter', input: { file, ms: 2000 } });
    const id = (a as { callId: string }).callId;
    await poll(async () => (await g.db.knex('calls').where({ id }).first()).status !== 'queued', {
      what: 'the call to start',
      timeoutMs: 2_000,
      intervalMs: 20,
      orUndefined: true,
    });
    // pretend the runner vanished: the deadline passed long ago
    await g.db
      .knex('calls')
      .where({ id, status: 'running' })
      .update({ deadline_at: new Date(Date.now() - 3_600_000) });
    const swept = await sweep(g.gw.engine);
    expect(swept.closed).toBe(1);
    await poll(() => g.db.knex('receipts').where({ id }).first(), { what: 'the receipt', timeoutMs: 5_000, intervalMs: 25, orUndefined: true });
    expect((await g.get(`/v0/receipts/${id}`)).body).toMatchObject({ status: 'failed', error: 'gateway_restarted', billed: false });
    // the runner finishing later changes nothing
    await new Promise((r) => setTimeout(r, 2200));
    expect(await g.db.knex('journal_entries').where({ key: `settle:${id}` })).toEqual([]);
    expect(await g.db.knex('holds').where({ status: 'held' })).toEqual([]);
  });
});

base('a reserved call whose job cannot be queued is closed unbilled and its hold released', async () => {
  const g = await startTestGateway();
  try {
    await g.mandate({});
    const broken = {
      ...g.gw.context,
      messaging: {
        ...g.gw.context.messaging,
        queues: {
          ...g.gw.context.messaging.queues,
          queue: () => ({
            add: async () => {
              throw new Error('redis is down');
            },
          }),
        },
      },
    };
    const e = await createCallEngine(broken as never, { settlesHere: true })
      .submit({ mandateId: 'alice/test', agent: 'examples/echo-upper', input: { text: 'x' } })
      .catch((err) => err);
    expect(e).toBeInstanceOf(HolonError);
    expect(httpStatusOf((e as HolonError).code)).toBe(503);
    expect(await g.db.knex('holds').where({ status: 'held' })).toEqual([]);
    const receipts = await g.db.knex('receipts');
    expect(receipts).toHaveLength(1);
    expect(receipts[0]).toMatchObject({ status: 'failed', error_code: 'gateway_error', billed: false });
    expect((await audit(g.db.knex)).problems).toEqual([]);
  } finally {
    await g.stop();
  }
});

describe('webhook agents that answer badly', () => {
  base('HTML, a huge answer, a redirect, no answer: agent_error or timeout, nothing billed, no hold left', async () => {
    let redirectTargetHit = false;
    const server: Server = createServer((req, res) => {
      req.resume();
      if (req.url === '/ok') res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      else if (req.url === '/html') res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hi</html>');
      else if (req.url === '/huge') {
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(1024 * 1024, 'a');
        let sent = 0;
        const more = () => {
          while (sent < 12 && res.write(chunk)) sent++;
          if (sent < 12)
            res.once('drain', () => {
              sent++;
              more();
            });
          else res.end();
        };
        res.write('{"x":"');
        more();
      } else if (req.url === '/redirect') res.writeHead(302, { location: '/target' }).end();
      else if (req.url === '/target') {
        redirectTargetHit = true;
        res.writeHead(200).end('{"ok":true}');
      } else if (req.url === '/error') res.writeHead(422, { 'content-type': 'application/json' }).end('{"error":{"code":"no_table_found","message":"none"}}');
      else if (req.url === '/nulcode') res.writeHead(200, { 'content-type': 'application/json' }).end('{"error":{"code":"bad\\u0000code"}}');
      else if (req.url === '/longcode') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'x'.repeat(5000) } }));
      // /hang: never answers
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const dir = await mkdtemp(path.join(tmpdir(), 'holon-webhooks-'));
    for (const name of ['ok', 'html', 'huge', 'redirect', 'hang', 'error', 'nulcode', 'longcode']) {
      await mkdir(path.join(dir, name));
      await writeFile(
        path.join(dir, name, 'holon.yaml'),
        [
          `id: hooks/${name}`,
          'version: 1.0.0',
          `summary: webhook ${name}`,
          'capabilities: [test.hook]',
          'license: MIT',
          'interface:',
          '  input: { type: object }',
          '  output: { type: object }',
          '  errors: { no_table_found: { description: none, billed: false } }',
          'pricing: { model: per_run, currency: EUR, amount: "0.01" }',
          `runtime: { kind: webhook, endpoint: "http://127.0.0.1:${port}/${name}", limits: { timeout_s: 1 } }`,
          '',
        ].join('\n'),
      );
    }
    const g = await startTestGateway({ config: { registryDirs: [dir] } });
    try {
      await g.mandate({ allow: { agents: ['hooks/*'] } });
      const call = (name: string) => g.post<Schema<'CallFailed'>>('/v0/calls', { mandate: 'alice/test', agent: `hooks/${name}`, input: {} });
      expect((await call('ok')).status).toBe(200);
      for (const [name, code] of [
        ['html', 'agent_error'],
        ['huge', 'agent_error'],
        ['redirect', 'agent_error'],
        ['hang', 'timeout'],
        ['error', 'no_table_found'],
        ['nulcode', 'agent_error'],
        ['longcode', 'agent_error'],
      ] as const) {
        const r = await call(name);
        expect(r.status, name).toBe(502);
        expect(r.body.receipt, name).toMatchObject({ status: 'failed', error: code, billed: false });
      }
      expect(redirectTargetHit).toBe(false);
      expect((await readBalance(g.db.knex, 'alice', 'EUR')).balance).toBe(4_990_000n);
      expect(await g.db.knex('holds').where({ status: 'held' })).toEqual([]);
      expect((await audit(g.db.knex)).problems).toEqual([]);
    } finally {
      await g.stop();
      server.closeAllConnections();
      server.close();
    }
  });
});

base('a gateway-side failure after the run claimed its call (the output store is down) closes it gateway_error, unbilled, hold released', async () => {
  // No runner of its own: this test runs the call with a runner whose output store fails.
  const g = await startTestGateway({ roles: ['api', 'settler'] });
  try {
    await g.mandate({});
    const queued = await g.post<Schema<'CallQueued'>>(
      '/v0/calls',
      { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'x' } },
      { prefer: 'respond-async' },
    );
    expect(queued.status).toBe(202);
    const id = queued.body.call.id;
    const store = g.gw.context.messaging.store;
    const broken = {
      ...g.gw.context,
      messaging: {
        ...g.gw.context.messaging,
        store: {
          ...store,
          take: store.take.bind(store),
          put: async () => {
            throw new Error('redis is down');
          },
        },
      },
    };
    await createCallEngine(broken as never, { settlesHere: true }).run(id, { runtimes: createRuntimes() });
    const receipt = await poll(
      async () => {
        const r = await g.get(`/v0/receipts/${id}`);
        return r.status === 200 ? r.body : undefined;
      },
      { what: 'the receipt', timeoutMs: 5_000, intervalMs: 25, orUndefined: true },
    );
    expect(receipt).toMatchObject({ status: 'failed', error: 'gateway_error', billed: false, cost: { total: '0.00' } });
    expect(await g.db.knex('holds').where({ status: 'held' })).toEqual([]);
    expect((await g.get<Schema<'MandateView'>>('/v0/mandates/alice/test')).body.budget).toMatchObject({ spent: '0.00', reserved: '0.00' });
    expect((await audit(g.db.knex)).problems).toEqual([]);
  } finally {
    await g.stop();
  }
});
