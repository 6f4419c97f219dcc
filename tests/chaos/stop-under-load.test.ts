/**
 * Stopping under load loses nothing and logs no error, in every role (docs/operating.md, "Stopping and draining").
 * A scaled-out gateway (2 API, 2 runner, 1 settler, 1 evaluator processes on one database and Redis prefix) under
 * mixed traffic — synchronous and asynchronous calls, short and long runs, cancellations, evaluations — while
 * processes are stopped with SIGTERM at random moments, a rolling update's way: the replacement first, then the
 * SIGTERM. Five stops per role, twenty in all, in a seeded order. For every stopped process:
 *
 * - it exits 0 within its grace (HOLON_STOP_GRACE_S here: 4 s) plus a margin, and printed no error-level line and
 *   nothing on stderr;
 * - an API, while it stops: a request on a kept-alive connection is answered 503 with Retry-After (and the
 *   connection closed), a new connection is refused; a synchronous call it held is answered, or 202 with its state
 *   URL (Location) — never dropped;
 * - a runner ends or hands back (`failed / gateway_restarted`, unbilled) what it holds, and hears cancellations until
 *   its last run ended;
 * - the settler drains its batch; the evaluator hands its evaluations to the other one.
 *
 * Then every call is final within 30 s of the last stop, every evaluation ended, and `holon audit` exits 0.
 * A second test confirms one thing on its own: a cancel sent to a call whose runner is draining ends it at once.
 *
 * Reproduce a run's order with STOP_SEED=<seed>; STOP_PER_ROLE (default 5) sets the stops per role.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, onTestFailed, test } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ensureAccount } from '../../shared/ledger/accounts.js';
import { createMessaging } from '../../shared/messaging/index.js';
import { queueEvaluations } from '../../shared/evaluation/store.js';
import { wakeEvaluators } from '../../shared/evaluation/jobs.js';
import { holonCli } from '../support/backup-checks.js';
import { startTestCluster } from '../support/gateway.js';
import { send } from '../support/hosted.js';
import { poll, sleep } from '../support/poll.js';
import { REPO_ROOT, type ServiceProcess, type ServiceRole } from '../support/processes.js';
import { mulberry32 } from '../support/seeded-random.js';

const SEED = process.env.STOP_SEED ? Number(process.env.STOP_SEED) >>> 0 : Math.floor(Math.random() * 2 ** 32);
const PER_ROLE = Number(process.env.STOP_PER_ROLE ?? 5);
const GRACE_S = 4;
const ROLES: readonly ServiceRole[] = ['api', 'runner', 'settler', 'evaluator'];
const TRAFFIC_WORKERS = 4;
const RECOVERY_MS = 30_000;

/** Error- or fatal-level pino lines (level ≥ 50). */
const errorLines = (output: string) =>
  output.split('\n').filter((line) => {
    const m = /"level":(\d+)/.exec(line);
    return m !== null && Number(m[1]) >= 50;
  });

/** What one request got: an HTTP status (with the headers that matter), or the network error's code. */
interface Answer {
  api: string;
  sync: boolean;
  status?: number;
  retryAfter?: string | null;
  location?: string | null;
  callId?: string;
  error?: string;
}

async function call(api: ServiceProcess, body: unknown, sync: boolean): Promise<Answer> {
  const a: Answer = { api: api.name, sync };
  try {
    const res = await fetch(`${api.url}/v0/calls`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(sync ? {} : { prefer: 'respond-async' }) },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    a.status = res.status;
    a.retryAfter = res.headers.get('retry-after');
    a.location = res.headers.get('location');
    const json = (await res.json().catch(() => ({}))) as { call?: { id?: string }; receipt?: { id?: string } };
    a.callId = json.call?.id ?? json.receipt?.id;
  } catch (e) {
    const err = e as Error & { cause?: { code?: string } };
    a.error = err.cause?.code ?? err.name;
  }
  return a;
}

describe('SIGTERM under load, in every role', () => {
  test(`${PER_ROLE * ROLES.length} stops (${PER_ROLE} per role) at random moments: exit 0, no error logged, every call final, the books balance`, async () => {
    const t0 = Date.now();
    const rng = mulberry32(SEED);
    console.log(`[stop] seed ${SEED} (reproduce: STOP_SEED=${SEED} npm run test:chaos)`);
    const { cluster, db, redis, stop } = await startTestCluster({
      registry: 'tests/fixtures/chaos,tests/fixtures/scale',
      env: {
        HOLON_STOP_GRACE_S: String(GRACE_S),
        HOLON_SYNC_WAIT_S: '10',
        HOLON_EVALS: 'tests/fixtures/stop-evals',
        HOLON_DB_POOL: '6',
        HOLON_SIGNUP_CREDIT: '100.00',
      },
    });
    onTestFailed(() => console.error(`[stop] seed ${SEED}; service output:\n${cluster.describe()}`));
    // The test's own producer on the cluster's queues (evaluations are queued as publishing queues them).
    const messaging = await createMessaging({ redisUrl: redis.url, prefix: redis.prefix });
    let stopTraffic = false;
    try {
      // Evaluations name a published version (a foreign key): fixtures/hang's own manifest, published as it ships.
      await ensureAccount(db.knex, 'fixtures', 'user');
      const manifest = parseYaml(await readFile(path.join(REPO_ROOT, 'tests/fixtures/scale/hang/holon.yaml'), 'utf8')) as object;
      await db.knex('published_versions').insert({ agent_id: 'fixtures/hang', version: '1.0.0', author: 'fixtures', manifest: JSON.stringify(manifest) });
      const settler = await cluster.start('settler');
      const started = await Promise.all([
        cluster.start('api'),
        cluster.start('api'),
        cluster.start('runner'),
        cluster.start('runner'),
        cluster.start('evaluator'),
      ]);
      const slots: Array<{ role: ServiceRole; proc: ServiceProcess }> = [
        { role: 'api', proc: started[0] },
        { role: 'api', proc: started[1] },
        { role: 'runner', proc: started[2] },
        { role: 'runner', proc: started[3] },
        { role: 'settler', proc: settler },
        { role: 'evaluator', proc: started[4] },
      ];
      const r = await send(started[0].url!, 'POST', '/v0/mandates', {
        body: {
          id: 'alice/stop',
          issuer: 'alice',
          grantee: 'alice/assistant',
          allow: { agents: ['chaos/*', 'fixtures/*'] },
          budget: { total: '100.00', currency: 'EUR' },
        },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);

      // ---- traffic: calls to whichever API answers, evaluations, cancels --------------------------------------
      const answers: Answer[] = [];
      const cancels: string[] = [];
      const evaluations: string[] = [];
      const apis = () => slots.filter((s) => s.role === 'api').map((s) => s.proc);
      let n = 0;
      let queueing: Promise<unknown> = Promise.resolve();
      const traffic = Array.from({ length: TRAFFIC_WORKERS }, async (_, w) => {
        const pick = mulberry32(SEED + w + 1);
        while (!stopTraffic) {
          const i = n++;
          const api = apis()[i % 2]!;
          const kind = pick();
          const sync = pick() < 0.6;
          const body =
            kind < 0.5
              ? { mandate: 'alice/stop', agent: 'chaos/flaky', input: { mode: 'ok', ms: Math.floor(pick() * 300) } }
              : // Long runs: some outlast the grace, and are handed back.
                { mandate: 'alice/stop', agent: 'fixtures/hang', input: { ms: 500 + Math.floor(pick() * (kind < 0.9 ? 2_500 : 7_000)) } };
          const a = await call(api, body, sync);
          answers.push(a);
          // Some asynchronous long runs are cancelled a moment later, while a runner may be draining.
          if (!sync && a.callId && body.agent === 'fixtures/hang' && pick() < 0.3) {
            const id = a.callId;
            void sleep(300 + Math.floor(pick() * 1_500)).then(async () => {
              for (const target of apis()) {
                const c = await fetch(`${target.url}/v0/calls/${id}/cancel`, { method: 'POST', signal: AbortSignal.timeout(15_000) }).catch(() => undefined);
                if (c && c.status < 500) {
                  cancels.push(id);
                  return;
                }
              }
            });
          }
          if (i % 15 === 0) {
            // One at a time, as the product queues them (publishing and a re-run hold the version's row): two workers
            // numbering a run at once would both take the next number.
            const queued = queueing.then(() =>
              queueEvaluations(db.knex, { agentId: 'fixtures/hang', version: '1.0.0' }, [
                { capability: 'test.hang', version: 1, hidden: false, cases: 6, threshold: '1' },
              ]),
            );
            queueing = queued.then(
              () => undefined,
              () => undefined,
            );
            const [row] = await queued;
            evaluations.push(row!.id);
            await wakeEvaluators({ messaging, log: console as never }, [row!.id]);
          }
          await sleep(a.status === undefined ? 100 : 20 + Math.floor(pick() * 80));
        }
      });

      // ---- stops: the replacement first, then SIGTERM at a random moment ----------------------------------------
      const order = ROLES.flatMap((role) => Array.from({ length: PER_ROLE }, () => role));
      for (let j = order.length - 1; j > 0; j--) {
        const k = Math.floor(rng() * (j + 1));
        [order[j], order[k]] = [order[k]!, order[j]!];
      }
      const stops: Array<{
        role: ServiceRole;
        victim: ServiceProcess;
        at: number;
        exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>;
      }> = [];
      await sleep(2_000);
      for (const role of order) {
        // A replacement is ready when its role has one more worker connected than live processes: an earlier victim of
        // the role still draining (its worker gone already) would never let that count be reached. It has gone first.
        await Promise.all(stops.filter((s) => s.role === role).map((s) => s.exit));
        const candidates = slots.filter((s) => s.role === role);
        const slot = candidates[Math.floor(rng() * candidates.length)]!;
        const victim = slot.proc;
        slot.proc = await cluster.start(role, { readyTimeoutMs: 60_000 });
        await sleep(Math.floor(rng() * 1_500));
        const at = Date.now();
        victim.kill('SIGTERM');
        const exit = Promise.race([victim.exit, sleep((GRACE_S + 20) * 1000).then(() => ({ code: null, signal: null }))]).then((e) => ({
          ...e,
          ms: Date.now() - at,
        }));
        stops.push({ role, victim, at, exit });
        if (role === 'api') {
          // Readiness fails as soon as the signal is handled: the connection is refused, or (kept open) answered 503.
          const probe = await poll(
            () =>
              fetch(`${victim.url}/readyz`, { signal: AbortSignal.timeout(2_000) }).then(
                (res) => (res.status === 200 ? undefined : res.status),
                () => 'refused',
              ),
            { what: `${victim.name}'s readiness to fail`, timeoutMs: 3_000, intervalMs: 50, orUndefined: true },
          );
          expect.soft(['refused', 503], `${victim.name} /readyz while stopping`).toContain(probe);
        }
        console.log(`[stop] t+${((at - t0) / 1000).toFixed(1)} s SIGTERM ${victim.name} (pid ${victim.pid}); ${slot.proc.name} took over`);
      }
      const exits = await Promise.all(stops.map(async (s) => ({ ...s, result: await s.exit })));
      const lastStop = Math.max(...stops.map((s) => s.at));
      await sleep(1_000);
      stopTraffic = true;
      await Promise.all(traffic);

      // ---- every stopped process: exit 0 in time, no error line, nothing on stderr ----------------------------
      for (const { role, victim, result } of exits) {
        expect.soft(result, `${victim.name} (${role}) exits 0 on SIGTERM`).toMatchObject({ code: 0, signal: null });
        expect.soft(result.ms, `${victim.name} stops within its grace and a margin`).toBeLessThan((GRACE_S + 15) * 1000);
        expect.soft(errorLines(victim.output()), `${victim.name} (${role}) logged no error while stopping`).toEqual([]);
        expect.soft(victim.output(), `${victim.name} wrote nothing on stderr`).not.toContain('[stderr]');
      }

      // ---- what the clients got ------------------------------------------------------------------------------
      const outcome = (a: Answer) => (a.status !== undefined ? String(a.status) : `error ${a.error}`);
      const byOutcome: Record<string, number> = {};
      for (const a of answers) byOutcome[outcome(a)] = (byOutcome[outcome(a)] ?? 0) + 1;
      expect
        .soft(
          answers.filter((a) => a.status === 503 && !a.retryAfter),
          '503 always with Retry-After',
        )
        .toEqual([]);
      expect
        .soft(
          answers.filter((a) => a.status === 202 && !a.location?.startsWith('/v0/calls/')),
          '202 always with the call state URL',
        )
        .toEqual([]);
      expect
        .soft(
          answers.filter((a) => a.status !== undefined && a.status >= 500 && a.status !== 502 && a.status !== 503),
          'no other 5xx',
        )
        .toEqual([]);

      // ---- every call final within 30 s of the last stop; every evaluation ended; the books balance -----------
      const open = () => db.knex('calls').whereIn('status', ['queued', 'running', 'settling']).select('id', 'status');
      await poll(async () => (await open()).length === 0, {
        what: 'every call final',
        timeoutMs: Math.max(1_000, lastStop + RECOVERY_MS - Date.now()),
        orUndefined: true,
      });
      const finalMs = Date.now() - lastStop;
      expect.soft(await open(), `every call final within ${RECOVERY_MS / 1000} s of the last stop`).toEqual([]);
      const unfinished = () => db.knex('evaluations').whereIn('id', evaluations).whereNotIn('status', ['passed', 'failed', 'error']).select('id', 'status');
      await poll(async () => (await unfinished()).length === 0, { what: 'every evaluation ended', timeoutMs: RECOVERY_MS, orUndefined: true });
      expect.soft(await unfinished(), 'every evaluation ended').toEqual([]);
      const evaluationEnds = await db.knex('evaluations').whereIn('id', evaluations).select('status', 'passed', 'total');
      expect
        .soft(
          evaluationEnds.filter((e) => e.status !== 'passed' || e.passed !== e.total),
          'every evaluation passed, no case lost or counted twice',
        )
        .toEqual([]);
      expect.soft(await db.knex('holds').where({ status: 'held' }).select('id'), 'no live hold').toEqual([]);
      const audit = await holonCli(['audit'], { DATABASE_URL: db.url });
      expect.soft(audit.code, `holon audit: ${audit.stdout}${audit.stderr}`).toBe(0);

      const calls = await db.knex('calls').select('status', 'error_code');
      const ends: Record<string, number> = {};
      for (const c of calls)
        ends[`${c.status}${c.error_code ? `/${c.error_code}` : ''}`] = (ends[`${c.status}${c.error_code ? `/${c.error_code}` : ''}`] ?? 0) + 1;
      const stopMs = ROLES.map(
        (role) =>
          `${role} ${exits
            .filter((e) => e.role === role)
            .map((e) => e.result.ms)
            .join('/')}`,
      ).join('; ');
      console.log(
        [
          `[stop] seed ${SEED}: ${stops.length} SIGTERMs (${PER_ROLE} per role), ${answers.length} requests, ${calls.length} calls, ${evaluations.length} evaluations, ${cancels.length} cancels`,
          `  answers: ${JSON.stringify(byOutcome)}`,
          `  calls ended as: ${JSON.stringify(ends)}`,
          `  SIGTERM to exit (ms): ${stopMs}`,
          `  every call final ${(finalMs / 1000).toFixed(1)} s after the last SIGTERM; done in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
        ].join('\n'),
      );
      expect.soft(byOutcome['200'] ?? 0, 'calls answered 200').toBeGreaterThan(0);
    } finally {
      stopTraffic = true;
      await messaging.close();
      await stop();
    }
  });

  test('a cancel sent while the runner drains ends the call at once: the cancel watcher stops after the runs', async () => {
    const { cluster, db, stop } = await startTestCluster({ registry: 'tests/fixtures/scale', env: { HOLON_STOP_GRACE_S: '60' } });
    onTestFailed(() => console.error(cluster.describe()));
    try {
      await cluster.start('settler');
      const [api, runner] = await Promise.all([cluster.start('api'), cluster.start('runner')]);
      const m = await send(api.url!, 'POST', '/v0/mandates', {
        body: { id: 'bob/cancel', issuer: 'bob', grantee: 'bob/assistant', allow: { agents: ['fixtures/*'] }, budget: { total: '1.00', currency: 'EUR' } },
      });
      expect(m.status).toBe(201);
      const a = await call(api, { mandate: 'bob/cancel', agent: 'fixtures/hang', input: { ms: 20_000 } }, false);
      expect(a.status).toBe(202);
      const id = a.callId!;
      await poll(async () => (await db.knex('calls').where({ id }).first('status'))?.status === 'running', { what: 'the call to run' });
      runner.kill('SIGTERM');
      await sleep(500);
      expect(runner.exited(), 'the runner drains its run').toBeUndefined();
      const cancelledAt = Date.now();
      const c = await fetch(`${api.url}/v0/calls/${id}/cancel`, { method: 'POST' });
      expect(c.status).toBeLessThan(300);
      const exit = await Promise.race([runner.exit, sleep(15_000).then(() => 'still running' as const)]);
      expect(exit, 'the runner exits once its run was cancelled').toEqual({ code: 0, signal: null });
      expect(Date.now() - cancelledAt, 'well before the 20 s run would have ended').toBeLessThan(8_000);
      const row = await poll(async () => db.knex('receipts').where({ id }).first('status', 'error_code', 'billed'), { what: 'the receipt' });
      expect(row).toMatchObject({ status: 'failed', error_code: 'cancelled', billed: false });
      expect(errorLines(runner.output())).toEqual([]);
    } finally {
      await stop();
    }
  });
});
