/**
 * A reserved call reaches a runner or is closed within seconds (DESIGN.md §3.5), never left holding its funds until
 * the sweeper's deadline (timeout + 300 s + 30 s):
 *   (a) an API killed between the reserve commit and the queue add leaves the call `queued` with no run job: the
 *       settler's sweeper hands it out again, and the runner closes it (its input never reached the store);
 *   (b) a transient database error on the runner's claim: the run job is retried, and the call runs.
 */
import net from 'node:net';
import { expect, onTestFailed, test } from 'vitest';
import { startRunner } from '../../services/runner/worker.js';
import { createCallEngine } from '../../shared/calls/engine.js';
import type { Db } from '../../shared/db/connect.js';
import { audit } from '../../shared/ledger/audit.js';
import { startTestCluster, startTestGateway, useAudited } from '../support/gateway.js';
import { poll } from '../support/poll.js';

/** A TCP relay to Redis that can turn into a black hole: bytes are swallowed, so commands hang without an error. */
async function blackHoleRelay(redisUrl: string): Promise<{ url: string; swallow(): void; close(): Promise<void> }> {
  const target = new URL(redisUrl);
  let swallowing = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 6379), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    client.on('data', (d) => swallowing || upstream.write(d));
    upstream.on('data', (d) => swallowing || client.write(d));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `redis://127.0.0.1:${port}`,
    swallow: () => {
      swallowing = true;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

test('(a) an API killed right after a reserve: the hold is released within seconds', async () => {
  const { cluster, db, redis, stop } = await startTestCluster({ registry: 'examples' });
  const relay = await blackHoleRelay(redis.url);
  onTestFailed(() => console.error(cluster.describe()));
  try {
    await cluster.start('settler');
    await cluster.start('runner');
    // The API reaches Redis only through the relay: Postgres works, Redis will hang.
    const api = await cluster.start('api', { env: { REDIS_URL: relay.url } });
    expect(
      (await fetch(`${api.url}/v0/mandates`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(mandate) })).status,
    ).toBe(201);
    relay.swallow();
    // The call is admitted and reserved in Postgres; storing its input (Redis) hangs, so it is never queued.
    void fetch(`${api.url}/v0/calls`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mandate: mandate.id, agent: 'examples/echo-upper', input: { text: 'x' } }),
    }).catch(() => undefined);
    const id = await poll(async () => (await db.knex('calls').where({ status: 'queued' }).first('id'))?.id as string | undefined, {
      what: 'the reserved call',
      intervalMs: 5,
    });
    expect(await db.knex('holds').where({ id, status: 'held' }).first('id')).toBeDefined();
    api.kill('SIGKILL');
    const killedAt = Date.now();
    await api.exit;
    await cluster.start('api');

    const receipt = await poll(() => receiptOf(db.knex, id), {
      what: 'the stranded call to be closed',
      timeoutMs: 45_000,
      intervalMs: 100,
      context: cluster.describe,
    });
    const heldMs = Date.now() - killedAt;
    console.log(`stranded hold released ${heldMs} ms after kill -9 of the API`);
    expect(receipt).toMatchObject({ status: 'failed', error_code: 'gateway_error', billed: false });
    expect(await db.knex('holds').where({ status: 'held' })).toEqual([]);
    expect((await audit(db.knex)).problems).toEqual([]);
  } finally {
    await cluster.stopAll();
    await relay.close();
    await stop();
  }
});

test('(b) a transient database error on the claim: the run job is retried and the call runs', async () => {
  // No runner in the gateway: this test starts one whose first claim fails as a dropped connection would.
  await useAudited(await startTestGateway({ roles: ['api', 'settler'] }), async (g) => {
    await g.mandate({});
    let failed = 0;
    const flaky = new Proxy(g.gw.context.db, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop !== 'raw') return value;
        return (sql: string, ...rest: unknown[]) => {
          if (failed === 0 && /SET status = 'running'/.test(sql)) {
            failed += 1;
            return Promise.reject(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }));
          }
          return (value as (...a: unknown[]) => unknown).call(target, sql, ...rest);
        };
      },
    }) as Db;
    const noWaiter = { wait: async () => false, receiptOf: async () => null, heard: () => {}, close: async () => {} };
    const runner = await startRunner(createCallEngine({ ...g.gw.context, db: flaky }, { settlesHere: true, waiter: noWaiter }), { concurrency: 2 });
    try {
      const r = await g.post('/v0/calls', { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'again' } });
      expect(failed).toBe(1);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ output: { text: 'AGAIN' }, receipt: { status: 'succeeded', billed: true } });
    } finally {
      for (const stop of runner.stop) await stop();
      await Promise.all(runner.workers.map((w) => w.close()));
      for (const release of runner.release) await release();
    }
  });
});

const mandate = {
  id: 'alice/stranded',
  issuer: 'alice',
  grantee: 'alice/assistant',
  allow: { agents: ['examples/*'] },
  budget: { total: '1.00', currency: 'EUR' },
};

async function receiptOf(knex: Db, id: string): Promise<Record<string, unknown> | undefined> {
  return (await knex('receipts').where({ id }).first('status', 'error_code', 'billed')) ?? undefined;
}
