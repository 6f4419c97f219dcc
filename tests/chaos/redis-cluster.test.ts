/**
 * Chaos on a Redis Cluster: the gateway scaled out (2 API, 2 runner, 1 settler processes) on the three-node test
 * cluster (tests/support/redis-cluster.ts) under paid traffic, sync and `Prefer: respond-async`, while one node at a
 * time has its clients' connections cut, again and again (`CLIENT KILL TYPE normal`: the queues' and the store's;
 * `TYPE pubsub`: the notifier's subscriptions). Nothing is lost for good: every connection comes back, and once the
 * traffic has drained the books hold (tests/support/books.ts): every call ended with its receipt, no hold live, no
 * settlement twice, each mandate's spent its billed receipts, the audit clean, no agent run twice for a call; and no
 * process died of it.
 *
 * The seed (CHAOS_SEED) fixes the traffic and the cuts' schedule, as in chaos.test.ts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, onTestFailed, test } from 'vitest';
import { parseAmount } from '../../shared/core/money.js';
import { booksProblems } from '../support/books.js';
import { startTestCluster } from '../support/gateway.js';
import { send } from '../support/hosted.js';
import { poll, sleep } from '../support/poll.js';
import { readInvocations, type ServiceProcess } from '../support/processes.js';
import { ensureRedisCluster, REDIS_CLUSTER_PORTS, redisCli } from '../support/redis-cluster.js';
import { mulberry32, type Rng } from '../support/seeded-random.js';

const SEED = process.env.CHAOS_SEED ? Number(process.env.CHAOS_SEED) >>> 0 : Math.floor(Math.random() * 2 ** 32);
/** How long the traffic runs while connections are cut. */
const TRAFFIC_MS = 40_000;
/** Between two cuts. */
const CUT_GAP_MS = [500, 1_500] as const;
const TRAFFIC_WORKERS = 6;
const SIGNUP_CREDIT = '10.00';
const MANDATES = [
  { id: 'alice/wide', issuer: 'alice', total: '25.00' },
  { id: 'bob/small', issuer: 'bob', total: '0.30' },
] as const;

const between = (rng: Rng, lo: number, hi: number) => lo + Math.floor(rng() * (hi - lo + 1));

/** A paid call: mostly quick successes, some billed and unbilled errors, some long runs (in flight when a cut comes). */
function callOf(rng: Rng): { agent: string; input: Record<string, unknown> } {
  const r = rng();
  if (r < 0.55) return { agent: 'chaos/flaky', input: { mode: 'ok', ms: between(rng, 0, 200) } };
  if (r < 0.7) return { agent: 'chaos/flaky', input: { mode: 'declared_billed' } };
  if (r < 0.8) return { agent: 'chaos/flaky', input: { mode: 'declared_unbilled' } };
  return { agent: 'fixtures/hang', input: { ms: between(rng, 300, 2_000) } };
}

test('connections to the cluster cut again and again under paid traffic: every call ends, the books balance, nothing runs twice', async () => {
  console.log(`[cluster chaos] seed ${SEED} (reproduce: CHAOS_SEED=${SEED} npm run test:chaos -- tests/chaos/redis-cluster.test.ts)`);
  const dir = await mkdtemp(path.join(tmpdir(), 'holon-cluster-chaos-'));
  const invocationsFile = path.join(dir, 'invocations.jsonl');
  const { cluster, db, stop } = await startTestCluster({
    redisUrl: await ensureRedisCluster(),
    registry: 'tests/fixtures/chaos,tests/fixtures/scale',
    env: { HOLON_TEST_INVOCATIONS: invocationsFile, HOLON_SIGNUP_CREDIT: SIGNUP_CREDIT, HOLON_SYNC_WAIT_S: '10' },
  });
  onTestFailed(() => console.error(`[cluster chaos] seed ${SEED}; service output:\n${cluster.describe()}`));
  let trafficOn = true;
  try {
    // Five processes starting at once on a busy machine may take a while: readiness waits longer than the default.
    const ready = { readyTimeoutMs: 120_000 };
    await cluster.start('settler', ready);
    const started = await Promise.all((['api', 'api', 'runner', 'runner'] as const).map((role) => cluster.start(role, ready)));
    const apis = started.filter((p) => p.role === 'api') as ServiceProcess[];
    for (const m of MANDATES) {
      const body = {
        id: m.id,
        issuer: m.issuer,
        grantee: `${m.issuer}/assistant`,
        allow: { agents: ['chaos/*', 'fixtures/*'] },
        budget: { total: m.total, currency: 'EUR' },
      };
      const r = await send(apis[0]!.url!, 'POST', '/v0/mandates', { body });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
    }

    const answers: number[] = [];
    let next = 0;
    const traffic = Array.from({ length: TRAFFIC_WORKERS }, async () => {
      while (trafficOn) {
        const i = next++;
        const rng = mulberry32(SEED ^ Math.imul(i + 1, 0x9e3779b1));
        const { agent, input } = callOf(rng);
        const mandate = rng() < 0.85 ? MANDATES[0].id : MANDATES[1].id;
        const headers: Record<string, string> = rng() < 0.4 ? { prefer: 'respond-async' } : {};
        const r = await send(apis[i % apis.length]!.url!, 'POST', '/v0/calls', { body: { mandate, agent, input }, headers }).catch(() => undefined);
        answers.push(r?.status ?? 0);
        await sleep(between(rng, 10, 80));
      }
    });

    const rng = mulberry32(SEED);
    const cuts: string[] = [];
    const until = Date.now() + TRAFFIC_MS;
    while (Date.now() < until) {
      await sleep(between(rng, CUT_GAP_MS[0], CUT_GAP_MS[1]));
      // Every node and both kinds in turn (the moments are random): six cuts cover them all, whatever the seed.
      const port = REDIS_CLUSTER_PORTS[cuts.length % REDIS_CLUSTER_PORTS.length]!;
      const type = Math.floor(cuts.length / REDIS_CLUSTER_PORTS.length) % 2 === 0 ? 'normal' : 'pubsub';
      const killed = Number(await redisCli(port, 'CLIENT', 'KILL', 'TYPE', type));
      cuts.push(`${port}/${type}: ${killed}`);
    }
    trafficOn = false;
    await Promise.all(traffic);

    await poll(
      async () => Number((await db.knex('calls').whereIn('status', ['queued', 'running', 'settling']).count<{ n: string }[]>({ n: '*' }))[0]!.n) === 0,
      {
        what: 'every call to end',
        timeoutMs: 120_000,
        intervalMs: 500,
        context: cluster.describe,
      },
    ).catch(() => {});

    const byStatus: Record<number, number> = {};
    for (const status of answers) byStatus[status] = (byStatus[status] ?? 0) + 1;
    const endings = await db
      .knex('calls')
      .select('status', 'error_code')
      .count<Array<{ status: string; error_code: string | null; n: string }>>({ n: '*' })
      .groupBy('status', 'error_code');
    console.log(
      [
        `[cluster chaos] seed ${SEED}: ${answers.length} requests, answers ${JSON.stringify(byStatus)}`,
        `  ${cuts.length} cuts, connections cut: ${cuts.reduce((n, c) => n + Number(c.split(': ')[1]), 0)}`,
        `  calls ended as ${JSON.stringify(endings.map((e) => `${e.status}${e.error_code ? `/${e.error_code}` : ''}: ${e.n}`))}`,
      ].join('\n'),
    );

    const invocations = await readInvocations(invocationsFile);
    expect(await booksProblems(db.knex, { mandates: MANDATES, credit: parseAmount(SIGNUP_CREDIT), invocations }), 'the books').toEqual([]);
    expect(
      cluster.processes.filter((p) => p.exited()).map((p) => p.name),
      'no process died of the cuts',
    ).toEqual([]);
    // The run did what it claims: calls flowed and were paid for, connections were cut on every node, of both kinds.
    expect(byStatus[200] ?? 0, 'paid calls answered 200').toBeGreaterThan(50);
    expect(
      answers.filter((s) => s !== 0 && s >= 500 && s !== 502),
      'no 5xx but the agents’ own 502s',
    ).toEqual([]);
    expect(new Set(cuts.map((c) => c.split(':')[0])).size, 'cuts on every node and of both kinds').toBe(REDIS_CLUSTER_PORTS.length * 2);
  } finally {
    trafficOn = false;
    await stop();
    await rm(dir, { recursive: true, force: true });
  }
});
