/**
 * Bounded chaos: the gateway scaled out (2 API, 2 runner, 1 settler processes on one Postgres database and one
 * Redis prefix) under mixed traffic, while service processes are killed with SIGKILL at random and replaced.
 * Afterwards, once every call has drained, the invariants that matter must hold (DESIGN.md §3):
 *
 * - every call row is terminal (`succeeded` / `failed`) and has its receipt; no hold is live;
 * - the ledger audit (shared/ledger/audit.ts) finds nothing;
 * - every mandate: spent = Σ cost_total of its billed receipts, spent ≤ total, reserved = 0;
 * - an agent ran at most once per call (and exactly once when the call's outcome came from the agent);
 * - what each known call ended as fits what it asked for (an interruption is always allowed: unbilled).
 *
 * Traffic goes to 127.0.0.1 only, alternating between the two API slots, sync and `Prefer: respond-async`: successes,
 * billed and unbilled declared errors, timeouts, invalid output, per-unit pricing, rejected input, and mandates
 * whose budget (or whose issuer's balance) runs out. Requests that reach a dead API have an unknown outcome.
 *
 * Every choice (traffic, kill schedule) comes from a seeded PRNG; the seed is printed. Reproduce a run with
 * CHAOS_SEED=<seed> npm run test:chaos. Other knobs: CHAOS_KILLS (default 10), CHAOS_DRAIN_S (default 90).
 * Timing still varies from run to run (what is in flight when a process dies), so a seed replays the plan, not
 * the exact interleaving.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, onTestFailed, test } from 'vitest';
import { audit } from '../../shared/ledger/audit.js';
import { readBalance } from '../../shared/ledger/accounts.js';
import { parseAmount } from '../../shared/core/money.js';
import { encodeJobId } from '../../shared/messaging/bullmq.js';
import { inputKey } from '../../shared/calls/wire.js';
import { startTestCluster } from '../support/gateway.js';
import { send } from '../support/hosted.js';
import { crashAndReplace, readInvocations, type ServiceProcess, type ServiceRole } from '../support/processes.js';
import { poll, sleep } from '../support/poll.js';
import { mulberry32, type Rng } from '../support/seeded-random.js';

const SEED = process.env.CHAOS_SEED ? Number(process.env.CHAOS_SEED) >>> 0 : Math.floor(Math.random() * 2 ** 32);
const KILLS = Number(process.env.CHAOS_KILLS ?? 10);
const DRAIN_MS = Number(process.env.CHAOS_DRAIN_S ?? 90) * 1000;
/** Between two kills: 2 to 4 s, from the moment the last replacement was ready. */
const KILL_GAP_MS = [2_000, 4_000] as const;
/** The chaos phase ends at the latest this long after it began, whatever is left of the schedule. */
const CHAOS_LIMIT_MS = 120_000;
const TRAFFIC_WORKERS = 6;
const MAX_REQUESTS = 2_500;
/** The longest the test waits for one HTTP answer (the API's own sync bound is HOLON_SYNC_WAIT_S). */
const REQUEST_LIMIT_MS = 20_000;
const SIGNUP_CREDIT = '10.00';

// ---------------------------------------------------------------------------------------------------------
// A seeded PRNG (mulberry32): one stream for the kill schedule, one per request (so request i asks the same
// thing in every run with this seed, whichever traffic worker sends it).

const between = (rng: Rng, lo: number, hi: number) => lo + Math.floor(rng() * (hi - lo + 1));

function weighted<T extends { weight: number }>(rng: Rng, items: readonly T[]): T {
  let r = rng() * items.reduce((s, x) => s + x.weight, 0);
  for (const item of items) {
    r -= item.weight;
    if (r < 0) return item;
  }
  return items[items.length - 1]!;
}

// ---------------------------------------------------------------------------------------------------------
// What the traffic asks for, and what each call may end as.

const CENT = parseAmount('0.01');

interface Ending {
  status: 'succeeded' | 'failed';
  error: string | null;
  /** The billed own cost, or undefined when unbilled. */
  cost?: bigint;
}

interface Scenario {
  name: string;
  weight: number;
  agent: string;
  input(rng: Rng): Record<string, unknown>;
  /** How the call ends when nothing interrupts it; undefined: refused before any call row (422). */
  ending?(input: Record<string, unknown>): Ending;
}

const units = (input: Record<string, unknown>) => BigInt(input.units as number) * CENT;

const SCENARIOS: readonly Scenario[] = [
  {
    name: 'success',
    weight: 28,
    agent: 'chaos/flaky',
    input: (r) => ({ mode: 'ok', ms: between(r, 0, 300) }),
    ending: () => ({ status: 'succeeded', error: null, cost: CENT }),
  },
  {
    name: 'billed error',
    weight: 10,
    agent: 'chaos/flaky',
    input: (r) => ({ mode: 'declared_billed', ms: between(r, 0, 200) }),
    ending: () => ({ status: 'failed', error: 'partial', cost: CENT }),
  },
  {
    name: 'unbilled error',
    weight: 10,
    agent: 'chaos/flaky',
    input: () => ({ mode: 'declared_unbilled' }),
    ending: () => ({ status: 'failed', error: 'not_found' }),
  },
  { name: 'timeout', weight: 7, agent: 'chaos/flaky', input: () => ({ mode: 'ok', ms: 2_600 }), ending: () => ({ status: 'failed', error: 'timeout' }) },
  {
    name: 'invalid output',
    weight: 7,
    agent: 'chaos/flaky',
    input: () => ({ mode: 'invalid_output' }),
    ending: () => ({ status: 'failed', error: 'invalid_output' }),
  },
  {
    name: 'per unit',
    weight: 12,
    agent: 'chaos/units',
    input: (r) => ({ mode: 'ok', units: between(r, 1, 15), ms: between(r, 0, 200) }),
    ending: (i) => ({ status: 'succeeded', error: null, cost: units(i) }),
  },
  {
    name: 'per unit, billed error',
    weight: 5,
    agent: 'chaos/units',
    input: (r) => ({ mode: 'declared_billed', units: between(r, 1, 10) }),
    ending: (i) => ({ status: 'failed', error: 'partial', cost: units(i) }),
  },
  {
    name: 'long run',
    weight: 9,
    agent: 'fixtures/hang',
    input: (r) => ({ ms: between(r, 500, 3_000) }),
    ending: () => ({ status: 'succeeded', error: null, cost: CENT }),
  },
  { name: 'rejected input', weight: 3, agent: 'chaos/flaky', input: () => ({ mode: 'no_such_mode' }) },
];

/** An interruption (a runner or the gateway died with the call) may end any call, never billed. */
const INTERRUPTED = new Set(['gateway_restarted', 'gateway_error']);

/** Mandates: two small budgets that run out, one big one whose issuer's balance (SIGNUP_CREDIT) runs out first. */
const MANDATES = [
  { id: 'alice/wide', issuer: 'alice', total: '25.00', weight: 55 },
  { id: 'bob/small', issuer: 'bob', total: '0.40', weight: 15 },
  { id: 'carol/tiny', issuer: 'carol', total: '0.05', weight: 10 },
  { id: 'dave/units', issuer: 'dave', total: '1.50', weight: 20 },
] as const;

interface Sent {
  i: number;
  scenario: Scenario;
  input: Record<string, unknown>;
  mandate: string;
  api: string;
  async: boolean;
  at: number;
  /** Undefined: no answer (the API was dead or died): unknown outcome. */
  status?: number;
  callId?: string;
  receiptStatus?: string;
  failure?: string;
}

function outcomeOf(s: Sent): string {
  if (s.status === undefined) return 'unknown (no answer)';
  const names: Record<number, string> = { 200: '200 succeeded', 202: '202 accepted', 403: '403 denied', 422: '422 rejected input', 502: '502 agent failed' };
  return names[s.status] ?? `${s.status} other`;
}

const countBy = <T>(items: readonly T[], key: (x: T) => string): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const x of items) out[key(x)] = (out[key(x)] ?? 0) + 1;
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
};

function withLimit<T>(p: Promise<T>, ms: number): Promise<T> {
  return Promise.race([p, sleep(ms).then(() => Promise.reject(new Error(`no answer within ${ms} ms`)))]);
}

// ---------------------------------------------------------------------------------------------------------

describe('chaos: kill -9 of any service under mixed traffic', () => {
  test('2 API + 2 runner + 1 settler, processes killed and replaced at random: every call settles, the books balance, no agent runs twice', async () => {
    const t0 = Date.now();
    console.log(`[chaos] seed ${SEED} (reproduce: CHAOS_SEED=${SEED} npm run test:chaos), ${KILLS} kills, drain up to ${DRAIN_MS / 1000} s`);
    const dir = await mkdtemp(path.join(tmpdir(), 'holon-chaos-'));
    const invocationsFile = path.join(dir, 'invocations.jsonl');
    const { cluster, db, redis, stop } = await startTestCluster({
      registry: 'tests/fixtures/chaos,tests/fixtures/scale',
      env: {
        HOLON_TEST_INVOCATIONS: invocationsFile,
        HOLON_SIGNUP_CREDIT: SIGNUP_CREDIT,
        // A synchronous request answers 202 after min(timeout + 5 s, this): never longer than the test waits.
        HOLON_SYNC_WAIT_S: '10',
        HOLON_DB_POOL: '8',
      },
    });
    onTestFailed(() => console.error(`[chaos] seed ${SEED}; service output:\n${cluster.describe()}`));
    const { knex } = db;
    // Set when the chaos is over, or when the test fails first: the traffic workers then stop.
    let stopTraffic = false;

    try {
      // One process first (it opens the database), then the rest at once. A slot is a role's place in the topology.
      const settler = await cluster.start('settler');
      const [apiA, apiB, runnerA, runnerB] = await Promise.all([cluster.start('api'), cluster.start('api'), cluster.start('runner'), cluster.start('runner')]);
      const slots: Array<{ role: ServiceRole; proc: ServiceProcess }> = [
        { role: 'api', proc: apiA },
        { role: 'api', proc: apiB },
        { role: 'runner', proc: runnerA },
        { role: 'runner', proc: runnerB },
        { role: 'settler', proc: settler },
      ];
      const apiSlots = slots.filter((s) => s.role === 'api');

      for (const m of MANDATES) {
        const r = await send(apiA.url!, 'POST', '/v0/mandates', {
          body: {
            id: m.id,
            issuer: m.issuer,
            grantee: `${m.issuer}/assistant`,
            allow: { agents: ['chaos/*', 'fixtures/*'] },
            budget: { total: m.total, currency: 'EUR' },
          },
        });
        expect(r.status, JSON.stringify(r.body)).toBe(201);
      }
      const startedMs = Date.now() - t0;

      // ---- traffic -------------------------------------------------------------------------------------------
      const sent: Sent[] = [];
      let next = 0;
      const trafficLimit = Date.now() + CHAOS_LIMIT_MS + 30_000;
      const sendOne = async (i: number): Promise<Sent> => {
        const rng = mulberry32(SEED ^ Math.imul(i + 1, 0x9e3779b1));
        const scenario = weighted(rng, SCENARIOS);
        const input = scenario.input(rng);
        const mandate = weighted(rng, MANDATES).id;
        const async = rng() < 0.4;
        const slot = apiSlots[i % apiSlots.length]!;
        const s: Sent = { i, scenario, input, mandate, api: slot.proc.name, async, at: Date.now() };
        try {
          const r = await withLimit(
            send(slot.proc.url!, 'POST', '/v0/calls', { body: { mandate, agent: scenario.agent, input }, headers: async ? { prefer: 'respond-async' } : {} }),
            REQUEST_LIMIT_MS,
          );
          s.status = r.status;
          s.callId = r.body?.call?.id ?? r.body?.receipt?.id;
          s.receiptStatus = r.body?.receipt?.status;
        } catch (e) {
          s.failure = (e as Error).message;
        }
        return s;
      };
      const traffic = Array.from({ length: TRAFFIC_WORKERS }, async (_, w) => {
        const pause = mulberry32(SEED + w + 1);
        while (!stopTraffic && next < MAX_REQUESTS && Date.now() < trafficLimit) {
          const s = await sendOne(next++);
          sent.push(s);
          // A dead API refuses at once: back off a little instead of spinning on it.
          await sleep(s.status === undefined ? 200 : between(pause, 20, 120));
        }
      });

      // ---- chaos ---------------------------------------------------------------------------------------------
      const rng = mulberry32(SEED);
      // Every role dies at least once: the first three kills are api, runner and settler in a seeded order.
      const firstRoles: ServiceRole[] = ['api', 'runner', 'settler'];
      for (let j = firstRoles.length - 1; j > 0; j--) {
        const k = Math.floor(rng() * (j + 1));
        [firstRoles[j], firstRoles[k]] = [firstRoles[k]!, firstRoles[j]!];
      }
      const kills: Array<{ at: number; victim: string; pid: number; role: ServiceRole; signal: string | null; replacement: string; downMs: number }> = [];
      const chaosStart = Date.now();
      for (let k = 0; k < KILLS && Date.now() - chaosStart < CHAOS_LIMIT_MS; k++) {
        await sleep(between(rng, KILL_GAP_MS[0], KILL_GAP_MS[1]));
        const candidates = k < firstRoles.length ? slots.filter((s) => s.role === firstRoles[k]) : slots;
        const slot = candidates[Math.floor(rng() * candidates.length)]!;
        const victim = slot.proc;
        const at = Date.now();
        const { exit, replacement, downMs } = await crashAndReplace(cluster, victim);
        slot.proc = replacement;
        kills.push({ at, victim: victim.name, pid: victim.pid, role: slot.role, signal: exit.signal, replacement: replacement.name, downMs });
        console.log(`[chaos] t+${((at - t0) / 1000).toFixed(1)} s kill -9 ${victim.name} (pid ${victim.pid}); ${replacement.name} ready after ${downMs} ms`);
      }
      await sleep(2_000);
      stopTraffic = true;
      await Promise.all(traffic);
      const chaosMs = Date.now() - chaosStart;

      // ---- drain ---------------------------------------------------------------------------------------------
      for (const s of slots) expect(s.proc.exited(), `${s.proc.name} (${s.role}) is running after the chaos`).toBeUndefined();
      const drainStart = Date.now();
      const openCalls = () => knex('calls').whereIn('status', ['queued', 'running', 'settling']);
      let drained = true;
      await poll(async () => Number((await openCalls().count<{ n: string }[]>({ n: '*' }))[0]!.n) === 0, {
        what: 'every call to be terminal',
        timeoutMs: DRAIN_MS,
        intervalMs: 500,
      }).catch(() => {
        drained = false;
      });
      const drainMs = Date.now() - drainStart;

      // ---- what happened -------------------------------------------------------------------------------------
      const calls: Array<Record<string, any>> = await knex('calls').select(
        'id',
        'status',
        'error_code',
        'mandate_id',
        'agent_id',
        'created_at',
        'started_at',
        'deadline_at',
        'settle_enqueued_at',
      );
      const receipts: Array<Record<string, any>> = await knex('receipts').select(
        'id',
        'status',
        'error_code',
        'billed',
        'mandate_id',
        'cost_own',
        'cost_total',
        'reasons',
      );
      const receiptOf = new Map(receipts.map((r) => [String(r.id), r]));
      const invocations = await readInvocations(invocationsFile);
      const runsOf = countBy(invocations, (x) => x.call);

      const open = calls.filter((c) => !['succeeded', 'failed'].includes(c.status));
      if (open.length) {
        // Where each stuck call is: its run job and its input in Redis, the request that made it, the nearest API kill.
        const stuck = await Promise.all(
          open.map(async (c) => {
            const id = String(c.id);
            const request = sent.find((s) => s.callId === id);
            const created = new Date(c.created_at).getTime();
            const apiKill = kills.filter((k) => k.role === 'api').sort((a, b) => Math.abs(a.at - created) - Math.abs(b.at - created))[0];
            return {
              id,
              status: c.status,
              agent: c.agent_id,
              created: `t+${((created - t0) / 1000).toFixed(3)} s`,
              deadline: c.deadline_at,
              settleEnqueuedAt: c.settle_enqueued_at,
              runJobInRedis: (await redis.client.exists(`q:run:${encodeJobId(id)}`)) === 1,
              inputInRedis: (await redis.client.exists(`e:${inputKey(id)}`)) === 1,
              invocations: runsOf[id] ?? 0,
              answer: request ? outcomeOf(request) : 'no answer carried its id',
              nearestApiKill: apiKill ? `${apiKill.victim} killed ${apiKill.at - created} ms after the call row was written` : 'none',
            };
          }),
        );
        console.error(`[chaos] seed ${SEED}: ${open.length} call(s) not terminal after ${drainMs} ms of drain:\n${JSON.stringify(stuck, null, 2)}`);
      }

      const byEnding = countBy(calls, (c) => `${c.status}${c.error_code ? ` / ${c.error_code}` : ''}`);
      // Why requests were denied, amounts left out: budgets and balances that ran out.
      const denials = countBy(
        receipts.filter((r) => r.status === 'denied'),
        (r) => `${r.mandate_id}: ${String(r.reasons?.[0] ?? r.error_code).replace(/[0-9]+(\.[0-9]+)?/g, 'N')}`,
      );
      console.log(
        [
          `[chaos] seed ${SEED}: ${sent.length} requests in ${(chaosMs / 1000).toFixed(1)} s of chaos (cluster up after ${(startedMs / 1000).toFixed(1)} s)`,
          `  answers: ${JSON.stringify(countBy(sent, outcomeOf))}`,
          `  sync/async: ${sent.filter((s) => !s.async).length}/${sent.filter((s) => s.async).length}; by scenario: ${JSON.stringify(countBy(sent, (s) => s.scenario.name))}`,
          `  call rows: ${calls.length}, ended as ${JSON.stringify(byEnding)}`,
          `  denials: ${JSON.stringify(denials)}`,
          `  kills: ${kills.length} (${JSON.stringify(countBy(kills, (k) => k.role))}), down ${kills.map((k) => k.downMs).join('/')} ms`,
          `  drain: ${drained ? `every call terminal after ${(drainMs / 1000).toFixed(1)} s` : `NOT drained after ${(drainMs / 1000).toFixed(1)} s (${open.length} open)`}` +
            ` (${((drainStart + drainMs - (kills.at(-1)?.at ?? drainStart)) / 1000).toFixed(1)} s after the last kill)`,
          `  agent invocations: ${invocations.length} for ${Object.keys(runsOf).length} calls`,
        ].join('\n'),
      );

      // ---- invariants ----------------------------------------------------------------------------------------
      expect
        .soft(
          open.map((c) => `${c.id} ${c.status}`),
          'every call terminal',
        )
        .toEqual([]);
      expect.soft(await knex('holds').where({ status: 'held' }).select('id', 'call_id', 'amount'), 'no live hold').toEqual([]);
      expect.soft((await audit(knex)).problems, 'ledger audit').toEqual([]);
      expect
        .soft(
          calls.filter((c) => !receiptOf.has(String(c.id))).map((c) => `${c.id} ${c.status}`),
          'every terminal call has its receipt',
        )
        .toEqual(open.map((c) => `${c.id} ${c.status}`));

      for (const m of MANDATES) {
        const row = await knex('mandates').where({ id: m.id }).first('total', 'spent', 'reserved');
        const billed = receipts.filter((r) => r.mandate_id === m.id && r.billed).reduce((sum, r) => sum + BigInt(r.cost_total), 0n);
        const unbilledCosts = receipts.filter((r) => r.mandate_id === m.id && !r.billed && BigInt(r.cost_total) !== 0n).map((r) => r.id);
        expect.soft(BigInt(row.spent), `${m.id}: spent = Σ cost_total of its billed receipts`).toBe(billed);
        expect.soft(BigInt(row.spent) <= BigInt(row.total), `${m.id}: spent ${row.spent} ≤ total ${row.total}`).toBe(true);
        expect.soft(BigInt(row.reserved), `${m.id}: reserved`).toBe(0n);
        expect.soft(unbilledCosts, `${m.id}: unbilled receipts cost nothing (no delegation here)`).toEqual([]);
        const balance = await readBalance(knex, m.issuer, 'EUR');
        expect.soft(balance.balance, `${m.issuer}'s balance = credit − what its mandate spent`).toBe(parseAmount(SIGNUP_CREDIT) - billed);
        expect.soft(balance.held, `${m.issuer} has nothing held`).toBe(0n);
      }

      // An agent runs at most once per call; exactly once when the call's ending came from the agent.
      expect
        .soft(
          Object.entries(runsOf).filter(([, n]) => n > 1),
          'calls whose agent ran more than once',
        )
        .toEqual([]);
      const callIds = new Set(calls.map((c) => String(c.id)));
      expect
        .soft(
          Object.keys(runsOf).filter((id) => !callIds.has(id)),
          'invocations without a call row',
        )
        .toEqual([]);
      expect
        .soft(
          calls
            .filter((c) => ['succeeded', 'failed'].includes(c.status) && !INTERRUPTED.has(c.error_code) && runsOf[c.id] !== 1)
            .map((c) => `${c.id} ${c.status}/${c.error_code}`),
          'calls ended by their agent were invoked exactly once',
        )
        .toEqual([]);

      // What each call we know of ended as fits what it asked for (or was interrupted, unbilled); answers agree.
      const misfits: string[] = [];
      for (const s of sent) {
        const r = s.callId ? receiptOf.get(s.callId) : undefined;
        if (s.status === 422) {
          if (s.scenario.ending) misfits.push(`#${s.i} ${s.scenario.name}: 422 ${s.receiptStatus}`);
          continue;
        }
        if (s.status === 403) {
          if (r?.status !== 'denied') misfits.push(`#${s.i} ${s.scenario.name}: 403 but receipt ${r?.status}`);
          continue;
        }
        if (!r || !['succeeded', 'failed'].includes(r.status)) continue;
        const expected = s.scenario.ending?.(s.input);
        const cost = BigInt(r.cost_own);
        const fits =
          expected &&
          ((r.status === 'failed' && INTERRUPTED.has(r.error_code) && !r.billed) ||
            (r.status === expected.status &&
              (r.error_code ?? null) === expected.error &&
              r.billed === (expected.cost !== undefined) &&
              cost === (expected.cost ?? 0n)));
        if (!fits) misfits.push(`#${s.i} ${s.scenario.name} ${JSON.stringify(s.input)}: ${r.status}/${r.error_code} billed=${r.billed} cost ${cost}`);
        if (s.status === 200 && r.status !== 'succeeded') misfits.push(`#${s.i}: answered 200, receipt ${r.status}`);
        if (s.status === 502 && r.status !== 'failed') misfits.push(`#${s.i}: answered 502, receipt ${r.status}`);
      }
      expect.soft(misfits, 'calls whose ending does not fit what they asked for').toEqual([]);

      // The run exercised what it claims to: kills of every role, budgets that ran out, answers of every kind.
      expect.soft(new Set(kills.map((k) => k.role)), 'every role was killed').toEqual(new Set(['api', 'runner', 'settler']));
      expect
        .soft(
          kills.every((k) => k.signal === 'SIGKILL'),
          'every kill was a SIGKILL',
        )
        .toBe(true);
      const answered = countBy(sent, outcomeOf);
      for (const status of ['200 succeeded', '202 accepted', '403 denied', '502 agent failed'])
        expect.soft(answered[status] ?? 0, `answers ${status}`).toBeGreaterThan(0);
      console.log(`[chaos] seed ${SEED}: done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    } finally {
      stopTraffic = true;
      await stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
