import knex from 'knex';
import pg from 'pg';
import { describe, expect, onTestFinished, test } from 'vitest';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { startPgCutProxy, type PgCutProxy } from '../support/pg-cut-proxy.js';
import { isDatabaseUnreachable, isUniqueViolation } from '../../shared/db/unreachable.js';
import { readBalance } from '../../shared/ledger/accounts.js';
import { sweep } from '../../services/settler/sweeper.js';
import { admitAgain, admitCall, type AdmittedCall } from '../../shared/ledger/money-functions.js';
import { gatewayTest } from '../support/gateway-fixture.js';
import fc from 'fast-check';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { poll } from '../support/poll.js';
import { counterFile, lines } from '../support/temp-files.js';
import { row as admittedRow } from '../support/admitted-calls.js';
import type { Schema, CallRan } from '../support/http.js';

/** `g` runs the workers on a direct connection; the API answering the test reaches Postgres through `proxy`. */
async function withProxiedApi(use: (g: TestGateway, api: TestGateway, proxy: PgCutProxy) => Promise<void>): Promise<void> {
  const g = await startTestGateway({ roles: ['runner', 'settler'] });
  const proxy = await startPgCutProxy();
  await useAudited(g, async () => {
    const api = await startTestGateway({ beside: g, roles: ['api'], config: { databaseUrl: proxy.through(g.db.url!) } });
    try {
      await use(g, api, proxy);
    } finally {
      proxy.refuse(false);
      await api.stop();
      await proxy.close();
    }
  });
}

describe('an admission whose answer is lost', () => {
  test('committed, then the connection cut before the answer: confirmed by id, run once, answered 200, billed once', async () => {
    await withProxiedApi(async (g, api, proxy) => {
      await api.mandate({});
      const file = await counterFile();
      const cut = proxy.cutAfterAnswer('holon_admit');
      const r = await api.post<CallRan>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/counter', input: { file } });
      await cut;
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toMatchObject({ status: 'succeeded', receipt: { billed: true } });
      const id: string = r.body.receipt.id;
      expect(await lines(file)).toEqual([id]);
      expect(await g.db.knex('calls').where({ mandate_id: 'alice/test' }).select('id')).toEqual([{ id }]);
      expect(await g.db.knex('holds').where({ call_id: id, status: 'held' })).toEqual([]);
      expect(await g.db.knex('journal_entries').where({ key: `settle:${id}` })).toHaveLength(1);
      const mandate = await g.db.knex('mandates').where({ id: 'alice/test' }).first();
      expect(BigInt(mandate.reserved)).toBe(0n);
      expect(BigInt(mandate.spent)).toBe(5_000_000n - (await readBalance(g.db.knex, 'alice', 'EUR')).balance);
    });
  });

  test('committed, then the database out of reach: 503 database_unavailable with Retry-After, naming the call to look up', async () => {
    await withProxiedApi(async (g, api, proxy) => {
      await api.mandate({});
      const file = await counterFile();
      const cut = proxy.cutAfterAnswer('holon_admit').then(() => proxy.refuse(true));
      const r = await api.post<Schema<'Error'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/counter', input: { file } });
      await cut;
      expect(r.status, JSON.stringify(r.body)).toBe(503);
      expect(r.headers.get('retry-after')).toBe('1');
      expect(r.body.error.code).toBe('database_unavailable');
      const named = /GET \/v0\/calls\/(\S+) tells/.exec(r.body.error.message)?.[1];
      // It was admitted (its row is there) but not queued: nothing ran yet.
      expect(await g.db.knex('calls').where({ mandate_id: 'alice/test' }).select('id', 'status')).toEqual([{ id: named, status: 'queued' }]);
      expect(await lines(file)).toEqual([]);
      // The database back, the caller looks the call up as told. The sweeper hands the stranded call to a runner,
      // which finds no input (it was never kept): closed failed, unbilled, the agent never run, the hold released.
      proxy.refuse(false);
      expect((await api.get(`/v0/calls/${named}`)).status).toBe(200);
      await sweep(g.gw.engine, { strandedAfterMs: 0 });
      const done = await poll(() => api.get<Schema<'CallState'>>(`/v0/calls/${named}`).then((a) => (a.body.receipt ? a.body : undefined)), {
        what: 'the receipt',
        timeoutMs: 10_000,
      });
      expect(done.receipt).toMatchObject({ id: named, status: 'failed', billed: false });
      expect(await lines(file)).toEqual([]);
      expect((await readBalance(g.db.knex, 'alice', 'EUR')).balance).toBe(5_000_000n);
      expect(await g.db.knex('holds').where({ status: 'held' })).toEqual([]);
    });
  });
});

describe('a request that meets a lost connection', () => {
  test('a read cut mid-statement answers 503 database_unavailable with Retry-After, not 500', async () => {
    await withProxiedApi(async (_g, api, proxy) => {
      await api.mandate({});
      const cut = proxy.cutOnQuery('alice/test');
      const r = await api.get<Schema<'Error'>>('/v0/mandates/alice/test');
      await cut;
      expect(r.status, JSON.stringify(r.body)).toBe(503);
      expect(r.headers.get('retry-after')).toBe('1');
      expect(r.body.error.code).toBe('database_unavailable');
      // The next request finds a new connection.
      expect((await api.get<Schema<'MandateView'>>('/v0/mandates/alice/test')).status).toBe(200);
    });
  });

  test('a call while the database refuses connections: 503 with Retry-After, nothing admitted, nothing charged', async () => {
    await withProxiedApi(async (g, api, proxy) => {
      await api.mandate({});
      const file = await counterFile();
      proxy.refuse(true);
      const r = await api.post<Schema<'Error'>>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/counter', input: { file } });
      expect(r.status, JSON.stringify(r.body)).toBe(503);
      expect(r.headers.get('retry-after')).toBe('1');
      expect(r.body.error.code).toBe('database_unavailable');
      proxy.refuse(false);
      expect(await g.db.knex('calls')).toEqual([]);
      expect((await readBalance(g.db.knex, 'alice', 'EUR')).balance).toBe(5_000_000n);
      const again = await api.post('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/counter', input: { file } });
      expect(again.status).toBe(200);
    });
  });
});

describe('an MCP tool call that meets a lost connection', () => {
  test('get_budget cut mid-statement is a tool result with database_unavailable, not gateway_error', async () => {
    await withProxiedApi(async (_g, api, proxy) => {
      await api.mandate({});
      const client = new Client({ name: 'holon-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), { requestInit: { headers: { 'x-holon-mandate': 'alice/test' } } }));
      try {
        const cut = proxy.cutOnQuery('alice/test');
        const r = await client.callTool({ name: 'get_budget', arguments: {} });
        await cut;
        expect(r.isError).toBe(true);
        expect((r.structuredContent as { error: { code: string } }).error.code).toBe('database_unavailable');
        expect((await client.callTool({ name: 'get_budget', arguments: {} })).isError).toBeFalsy();
      } finally {
        await client.close();
      }
    });
  });
});

describe('admission again by call id (holon_admit_batch)', () => {
  const row = (id: string, worst: bigint): AdmittedCall => admittedRow(id, 'alice/test', 'alice', worst);
  const reservedNow = async (g: TestGateway) => {
    const m = await g.db.knex('mandates').where({ id: 'alice/test' }).first();
    const b = await readBalance(g.db.knex, 'alice', 'EUR');
    return { mandate: BigInt(m.reserved), held: b.held };
  };

  gatewayTest(
    'any mix of first and repeated admissions of the same calls, in any order and at once, reserves each call exactly once',
    async ({ gateway: g }) => {
      await g.mandate({});
      let round = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.record({ worst: fc.bigInt({ min: 1n, max: 50_000n }), copies: fc.integer({ min: 1, max: 4 }), firstShared: fc.boolean() }), {
            minLength: 1,
            maxLength: 6,
          }),
          async (calls) => {
            round++;
            const before = await reservedNow(g);
            const rows = calls.map((c, i) => ({ ...c, row: row(`r_prop_${round}_${i}`, c.worst) }));
            const tries = rows.flatMap((c) =>
              Array.from({ length: c.copies }, (_, k) => () => (k === 0 && c.firstShared ? admitCall(g.db.knex, c.row) : admitAgain(g.db.knex, c.row))),
            );
            const outcomes = await Promise.all(tries.map((t) => t()));
            expect(new Set(outcomes)).toEqual(new Set(['reserved']));
            const total = calls.reduce((n, c) => n + c.worst, 0n);
            const after = await reservedNow(g);
            expect(after.mandate - before.mandate).toBe(total);
            expect(after.held - before.held).toBe(total);
            for (const c of rows) expect(await g.db.knex('holds').where({ call_id: c.row.id }).select('amount')).toEqual([{ amount: c.worst }]);
          },
        ),
        { numRuns: 25 },
      );
    },
  );

  gatewayTest('a row of the same id that is another call fails the statement; nothing is reserved for it', async ({ gateway: g }) => {
    await g.mandate({});
    expect(await admitCall(g.db.knex, row('r_same_id', 1000n))).toBe('reserved');
    const before = await reservedNow(g);
    const other = await admitAgain(g.db.knex, row('r_same_id', 2000n)).catch((e) => e);
    expect(isUniqueViolation(other, 'calls_pkey')).toBe(true);
    expect(await reservedNow(g)).toEqual(before);
  });
});

describe('isDatabaseUnreachable, on errors a real Postgres and driver produce', () => {
  const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

  test('refused, terminated and pool timeouts are unreachable; SQL errors and unique violations are not', async () => {
    const refused = await new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:1/postgres' }).connect().catch((e) => e);
    expect(isDatabaseUnreachable(refused)).toBe(true);

    const victim = new pg.Client({ connectionString: url });
    await victim.connect();
    victim.on('error', () => undefined);
    const killer = new pg.Client({ connectionString: url });
    await killer.connect();
    onTestFinished(async () => {
      await killer.end();
      await victim.end().catch(() => undefined);
    });
    const pid = (await victim.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    const sleeping = victim.query('SELECT pg_sleep(30)').catch((e) => e);
    await killer.query('SELECT pg_terminate_backend($1)', [pid]);
    const terminated = await sleeping;
    expect(terminated.code).toBe('57P01');
    expect(isDatabaseUnreachable(terminated)).toBe(true);
    const afterwards = await victim.query('SELECT 1').catch((e) => e);
    expect(isDatabaseUnreachable(afterwards)).toBe(true);

    const syntax = await killer.query('SELEC 1').catch((e) => e);
    expect(isDatabaseUnreachable(syntax)).toBe(false);
    await killer.query('CREATE TEMP TABLE t (id int PRIMARY KEY)');
    await killer.query('INSERT INTO t VALUES (1)');
    const duplicate = await killer.query('INSERT INTO t VALUES (1)').catch((e) => e);
    expect(isDatabaseUnreachable(duplicate)).toBe(false);
    expect(isUniqueViolation(duplicate, 't_pkey')).toBe(true);
    expect(isUniqueViolation(duplicate, 'calls_pkey')).toBe(false);

    const pool = knex({ client: 'pg', connection: 'postgres://postgres@127.0.0.1:1/postgres', pool: { min: 0, max: 1 }, acquireConnectionTimeout: 300 });
    const timedOut = await pool.raw('SELECT 1').catch((e) => e);
    await pool.destroy();
    expect(isDatabaseUnreachable(timedOut)).toBe(true);
    expect(isDatabaseUnreachable(new Error('boom'))).toBe(false);
    expect(isDatabaseUnreachable(undefined)).toBe(false);
  });
});
