/**
 * GET /v0/statement (shared/ledger/statement.ts; docs/hosted.md "Reconciling a month through the API"): for any
 * period, per currency, closing = opening + credited − billed + earned, each side read from its own table; each root
 * mandate's billed_to_date = spent without `until`; billed, earned and the mandates' figures equal what the receipts
 * the API shows add up to; the closing balance is the balance; an account sees only its own statement. Paid, failed
 * (billed and not), denied and rejected calls, a delegation tree, an orchestrator paying its hire itself, a fork's
 * royalty, admin credit in a second currency; real Postgres and Redis, the ledger audit after each test.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { Manifest } from '../../shared/core/manifest/types.js';
import { creditSignup } from '../../shared/ledger/demo-credit.js';
import { readStatement } from '../../shared/ledger/statement.js';
import { saveMandate } from '../../shared/mandates/store.js';
import { createMessaging } from '../../shared/messaging/index.js';
import { createLogger } from '../../shared/platform/log.js';
import type { RunResult } from '../../shared/runtimes/types.js';
import { settleCall } from '../../shared/calls/settle/settle.js';
import { shippedAgentsContext } from '../support/service-context.js';
import { BACKENDS, dbTest } from '../support/db.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { ADMIN_KEY, send, signUp, workMandate } from '../support/hosted.js';
import { GENEROUS_RATE_LIMITS, query, type Answer, type CallRan, type Schema } from '../support/http.js';
import { buildManifest, buildMandate } from '../support/manifest-builder.js';
import { generateSigningKey } from '../../shared/signing/keys.js';
import { createCallEngine } from '../../shared/calls/engine.js';

const RATES = GENEROUS_RATE_LIMITS;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const q = query;

/** A decimal amount string as micro-units, exactly. */
function micros(amount: string): bigint {
  const m = /^(-?)(\d+)(?:\.(\d{1,6}))?$/.exec(amount);
  if (!m) throw new Error(`not an amount: ${amount}`);
  const v = BigInt(m[2]!) * 1_000_000n + BigInt((m[3] ?? '').padEnd(6, '0'));
  return m[1] ? -v : v;
}

/** What GET /v0/receipts and GET /v0/statement answer, as the OpenAPI document defines them. */
type Receipt = Schema<'Receipt'>;
type Statement = Answer<'readStatement', 200>;
type ReceiptsPage = Answer<'listReceipts', 200>;

interface Period {
  since?: string;
  until?: string;
}

const flatten = (rs: readonly Receipt[]): Receipt[] => rs.flatMap((r) => [r, ...flatten(r.children)]);
const inPeriod = (at: string, p: Period) => (p.since === undefined || at >= p.since) && (p.until === undefined || at < p.until);
const sumBy = <T>(items: readonly T[], key: (t: T) => string, amount: (t: T) => bigint) => {
  const m = new Map<string, bigint>();
  for (const t of items) m.set(key(t), (m.get(key(t)) ?? 0n) + amount(t));
  return m;
};

async function statementOf(g: TestGateway, key: string, params: Record<string, string | undefined>): Promise<Statement> {
  const r = await send<Statement>(g.url, 'GET', `/v0/statement${q(params)}`, { key });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

async function receiptsOf(g: TestGateway, key: string): Promise<Receipt[]> {
  const out: Receipt[] = [];
  let before: string | undefined;
  do {
    const r = await send<ReceiptsPage>(g.url, 'GET', `/v0/receipts${q({ limit: '200', before })}`, { key });
    expect(r.status).toBe(200);
    out.push(...r.body.receipts);
    before = r.body.next;
  } while (before);
  return out;
}

/**
 * The statement agrees with itself (the identity), with the receipts the API shows (billed, earned, the mandates'
 * figures, computed here from the trees) and with the mandates' own `spent` when the period is open-ended.
 */
function checkStatement(s: Statement, account: string, period: Period, receipts: readonly Receipt[]): void {
  expect(s.account).toBe(account);
  for (const c of s.currencies) {
    const [opening, credited, billed, earned, closing] = [c.opening, c.credited, c.billed, c.earned, c.closing].map(micros) as [
      bigint,
      bigint,
      bigint,
      bigint,
      bigint,
    ];
    expect(closing, `${account} ${c.currency} ${JSON.stringify(period)}: ${JSON.stringify(c)}`).toBe(opening + credited - billed + earned);
    if (period.since === undefined) expect(opening).toBe(0n);
  }
  const all = flatten(receipts).filter((r) => inPeriod(r.created_at, period));
  const billed = sumBy(
    all.filter((r) => r.billed && r.payer === account),
    (r) => r.currency!,
    (r) => micros(r.cost.own),
  );
  const earned = sumBy(
    all.filter((r) => r.billed).flatMap((r) => r.splits.filter((x) => x.to === account).map((x) => ({ currency: r.currency!, amount: x.amount }))),
    (x) => x.currency,
    (x) => micros(x.amount),
  );
  const shown = (field: 'billed' | 'earned') => new Map(s.currencies.map((c) => [c.currency, micros(c[field])] as const).filter(([, v]) => v !== 0n));
  expect(shown('billed'), `${account} billed ${JSON.stringify(period)}`).toEqual(new Map([...billed].filter(([, v]) => v !== 0n)));
  expect(shown('earned'), `${account} earned ${JSON.stringify(period)}`).toEqual(new Map([...earned].filter(([, v]) => v !== 0n)));
  for (const m of s.mandates) {
    const tops = receipts.filter((r) => r.mandate === m.id);
    const total = (rs: readonly Receipt[]) => rs.reduce((a, r) => a + micros(r.cost.total), 0n);
    expect(micros(m.billed_in_range), `${m.id} in ${JSON.stringify(period)}`).toBe(total(tops.filter((r) => inPeriod(r.created_at, period))));
    expect(micros(m.billed_to_date), `${m.id} to ${JSON.stringify(period)}`).toBe(total(tops.filter((r) => inPeriod(r.created_at, { until: period.until }))));
    if (period.until === undefined) expect(m.billed_to_date).toBe(m.spent);
  }
}

describe('GET /v0/statement', () => {
  test('closing = opening + credited − billed + earned for every account and any period; billed_to_date = spent; each sees only its own', async () => {
    await useAudited(await startTestGateway({ hosted: true, config: RATES }), async (g) => {
      const alice = await signUp(g.url, 'alice');
      const bob = await signUp(g.url, 'bob');
      const work = await workMandate(g.url, alice, { delegation: { max_depth: 2 } });
      const spare = await workMandate(g.url, alice, { id: 'spare', budget: { total: '0.50' } });
      const bobWork = await workMandate(g.url, bob, { delegation: { max_depth: 2 } });
      const call = async (key: string, agent: string, input: unknown, extra: Record<string, unknown> = {}) => {
        const r = await send(g.url, 'POST', '/v0/calls', { key, body: { agent, input, ...extra } });
        expect(r.body.receipt, JSON.stringify(r.body)).toBeDefined();
        return r.body.receipt as Receipt;
      };
      const credit = async (account: string, amount: string, currency = 'EUR') => {
        const r = await send(g.url, 'POST', '/v0/admin/credit', { key: ADMIN_KEY, body: { account, amount, currency } });
        expect(r.status, JSON.stringify(r.body)).toBe(201);
      };

      // Period 1: paid, failed and billed, failed and not billed, denied, rejected.
      const first = [
        await call(work.agent, 'examples/echo-upper', { text: 'one' }),
        await call(work.agent, 'examples/flaky', { mode: 'declared_billed' }),
        await call(work.agent, 'examples/flaky', { mode: 'declared_unbilled' }),
        await call(work.agent, 'examples/echo-upper', { text: 'x' }, { max_cost: '0.001' }),
        await call(work.agent, 'examples/echo-upper', { text: 1 }),
        await call(spare.agent, 'examples/word-count', { text: 'a b c' }),
      ];
      expect(first.map((r) => [r.status, r.billed])).toEqual([
        ['succeeded', true],
        ['failed', true],
        ['failed', false],
        ['denied', false],
        ['rejected_input', false],
        ['succeeded', true],
      ]);
      await pause(25);
      // Period 2: admin credit (EUR, and USD: a second currency), bob's calls (examples and fixtures earn from
      // them), a delegation tree, a fork paying its upstream a royalty.
      await credit('alice', '1.00');
      await credit('alice', '2.50', 'USD');
      const second = [
        await call(bobWork.agent, 'examples/echo-upper', { text: 'bob' }),
        await call(bobWork.agent, 'fixtures/pipeline', { text: 'bob' }),
        await call(work.agent, 'fixtures/fork', { text: 'fork' }),
        await call(work.agent, 'fixtures/pipeline', { text: 'tree' }),
      ];
      expect(second.every((r) => r.status === 'succeeded' && r.billed)).toBe(true);
      expect(second[3]!.children).toHaveLength(2);
      await pause(25);
      // Period 3: the included orchestrator's author pays its hire out of its own (admin-credited) balance.
      await credit('fixtures', '1.00');
      const third = [await call(work.agent, 'fixtures/included', { text: 'inc' }), await call(bobWork.agent, 'examples/echo-upper', { text: 'late' })];
      expect(third[0]!.children[0]).toMatchObject({ payer: 'fixtures', billed: true });

      const receipts = [...(await receiptsOf(g, alice.human)), ...(await receiptsOf(g, bob.human))];
      const accounts: Array<[string, string]> = [
        ['alice', alice.human],
        ['bob', bob.human],
        ['examples', ADMIN_KEY],
        ['fixtures', ADMIN_KEY],
        ['holon', ADMIN_KEY],
        ['external:demo-credit', ADMIN_KEY],
      ];
      const read = (account: string, key: string, period: Period) => statementOf(g, key, { ...period, ...(key === ADMIN_KEY ? { account } : {}) });

      // Open-ended: closing is the balance, opening 0, and every root mandate's billed_to_date its spent.
      const balances = (await send(g.url, 'GET', '/v0/accounts', { key: ADMIN_KEY })).body.accounts as Array<{
        account: string;
        currency: string;
        balance: string;
      }>;
      for (const [account, key] of accounts) {
        const s = await read(account, key, {});
        expect(s).toMatchObject({ account, since: null, until: null });
        checkStatement(s, account, {}, receipts);
        expect(s.currencies.map((c) => [c.currency, c.closing])).toEqual(balances.filter((b) => b.account === account).map((b) => [b.currency, b.balance]));
      }
      const aliceAll = await read('alice', alice.human, {});
      expect(aliceAll.currencies).toEqual([
        {
          currency: 'EUR',
          opening: '0.00',
          credited: '6.00',
          billed: aliceAll.currencies[0]!.billed,
          earned: '0.00',
          closing: aliceAll.currencies[0]!.closing,
        },
        { currency: 'USD', opening: '0.00', credited: '2.50', billed: '0.00', earned: '0.00', closing: '2.50' },
      ]);
      // The mandates: alice's three roots (the sandbox, work, spare), oldest first, with their budgets.
      expect(aliceAll.mandates.map((m) => m.id)).toEqual(['alice/sandbox', 'alice/work', 'alice/spare']);
      for (const m of aliceAll.mandates) {
        const view = (await send(g.url, 'GET', `/v0/mandates/${m.id}`, { key: alice.human })).body.budget;
        expect(m).toMatchObject({ currency: 'EUR', total: view.total, spent: view.spent, reserved: view.reserved, billed_to_date: view.spent });
      }
      expect(first[5]!.cost.total).toBe('0.003');
      expect(aliceAll.mandates.find((m) => m.id === 'alice/spare')).toMatchObject({ billed_in_range: '0.003', billed_to_date: '0.003' });
      // fixtures paid its hire (billed) and earned its agents' shares; examples earned from alice's and bob's calls.
      const fixtures = await read('fixtures', ADMIN_KEY, {});
      expect(fixtures.currencies[0]).toMatchObject({ currency: 'EUR', credited: '1.00', billed: '0.01' });
      expect(micros(fixtures.currencies[0]!.earned)).toBeGreaterThan(0n);
      expect(fixtures.mandates).toEqual([]);
      const examples = await read('examples', ADMIN_KEY, {});
      expect(micros(examples.currencies[0]!.earned)).toBeGreaterThan(micros('0.04'));
      expect(examples.currencies[0]).toMatchObject({ credited: '0.00', billed: '0.00' });

      // Periods cut between the calls: period 2 holds the admin credit, and the paid calls of period 2 only.
      const at = (r: Receipt) => flatten(receipts).find((x) => x.id === r.id)!.created_at;
      const last1 = first.map(at).sort().at(-1)!;
      const first3 = third.map(at).sort()[0]!;
      const middle = { since: new Date(Date.parse(last1) + 1).toISOString(), until: first3 };
      const aliceMiddle = await read('alice', alice.human, middle);
      checkStatement(aliceMiddle, 'alice', middle, receipts);
      expect(aliceMiddle).toMatchObject({ since: middle.since, until: middle.until });
      expect(aliceMiddle.currencies.map((c) => [c.currency, c.credited])).toEqual([
        ['EUR', '1.00'],
        ['USD', '2.50'],
      ]);
      // fork 0.035 + the pipeline tree 0.09 (alice pays the tree's children too)
      expect(aliceMiddle.currencies[0]!.billed).toBe('0.125');
      expect(aliceMiddle.mandates.find((m) => m.id === 'alice/work')!.billed_in_range).toBe('0.125');

      // Any period: bounds anywhere among (and around) the receipts' instants, a millisecond either side, or none.
      const instants = [...new Set(flatten(receipts).map((r) => r.created_at))].sort();
      const bounds = [
        ...new Set(
          instants
            .flatMap((t) => [-1, 0, 1].map((d) => new Date(Date.parse(t) + d).toISOString()))
            .concat(['2000-01-01T00:00:00.000Z', '2999-01-01T00:00:00.000Z']),
        ),
      ].sort();
      await fc.assert(
        fc.asyncProperty(
          fc.option(fc.nat(bounds.length - 1)),
          fc.option(fc.nat(bounds.length - 1)),
          fc.constantFrom(...accounts),
          async (i, j, [account, key]) => {
            const [lo, hi] = i !== null && j !== null && j < i ? [j, i] : [i, j];
            const period: Period = { ...(lo !== null ? { since: bounds[lo]! } : {}), ...(hi !== null ? { until: bounds[hi]! } : {}) };
            const s = await read(account, key, period);
            checkStatement(s, account, period, receipts);
            // Periods chain: this one's closing is the next one's opening.
            if (period.until !== undefined) {
              const next = await read(account, key, { since: period.until });
              const opening = new Map(next.currencies.map((c) => [c.currency, c.opening]));
              for (const c of s.currencies) expect(opening.get(c.currency) ?? '0.00').toBe(c.closing);
            }
          },
        ),
        { numRuns: 60, seed: 20_260_401 },
      );

      // A second account sees none of the first's figures: bob's own statement, his mandates, his currency.
      const bobAll = await read('bob', bob.human, {});
      expect(bobAll.mandates.map((m) => m.id)).toEqual(['bob/sandbox', 'bob/work']);
      expect(bobAll.currencies.map((c) => c.currency)).toEqual(['EUR']);
      expect(bobAll.currencies[0]).toMatchObject({ credited: '5.00', billed: '0.11', earned: '0.00' });
      expect(JSON.stringify(bobAll)).not.toContain('alice');
      expect(await statementOf(g, bob.human, { account: 'bob' })).toEqual(bobAll);
      for (const account of ['alice', 'examples', 'holon', 'nobody']) {
        const r = await send(g.url, 'GET', `/v0/statement${q({ account })}`, { key: bob.human });
        expect(r.status).toBe(404);
        expect(r.body.error.code).toBe('not_found');
      }
    });
  });

  test('who may read which statement: a human their own, the admin any named account; bad values are a 400', async () => {
    await useAudited(await startTestGateway({ hosted: true, config: RATES }), async (g) => {
      const alice = await signUp(g.url, 'alice');
      expect((await send(g.url, 'GET', '/v0/statement')).status).toBe(401);
      const agent = await send(g.url, 'GET', '/v0/statement', { key: alice.sandboxAgent });
      expect(agent.status).toBe(403);
      expect(agent.body.error.code).toBe('forbidden');
      const unnamed = await send(g.url, 'GET', '/v0/statement', { key: ADMIN_KEY });
      expect(unnamed.status).toBe(400);
      expect(unnamed.body.error).toMatchObject({ code: 'invalid_request', problems: [{ path: 'query.account' }] });
      expect(unnamed.body.error.message).toMatch(/\baccount\b/);
      expect((await send(g.url, 'GET', '/v0/statement?account=', { key: ADMIN_KEY })).status).toBe(400);
      expect((await send(g.url, 'GET', '/v0/statement?account=nobody', { key: ADMIN_KEY })).status).toBe(404);
      expect((await send(g.url, 'GET', `/v0/statement?account=${'a'.repeat(500)}`, { key: ADMIN_KEY })).status).toBe(400);
      const named = await statementOf(g, ADMIN_KEY, { account: 'alice' });
      expect(named).toEqual(await statementOf(g, alice.human, {}));
      expect(named).toEqual({
        account: 'alice',
        since: null,
        until: null,
        currencies: [{ currency: 'EUR', opening: '0.00', credited: '5.00', billed: '0.00', earned: '0.00', closing: '5.00' }],
        mandates: [{ id: 'alice/sandbox', currency: 'EUR', total: '5.00', spent: '0.00', reserved: '0.00', billed_in_range: '0.00', billed_to_date: '0.00' }],
      });
      // Bounds as given, in UTC; an empty period is fine, a reversed one is not.
      const s = await statementOf(g, alice.human, { since: '2000-03-01T01:00:00+01:00', until: '2000-03-01T00:00:00.0000015Z' });
      expect(s).toMatchObject({ since: '2000-03-01T00:00:00.000Z', until: '2000-03-01T00:00:00.000001Z' });
      // A period before the account existed: the sign-up credit is after it.
      expect(s.currencies).toEqual([{ currency: 'EUR', opening: '0.00', credited: '0.00', billed: '0.00', earned: '0.00', closing: '0.00' }]);
      const future = await statementOf(g, alice.human, { since: '2999-01-01T00:00:00Z' });
      expect(future.currencies[0]).toMatchObject({ opening: '5.00', credited: '0.00', closing: '5.00' });
      for (const [params, name] of [
        [{ since: '2026-03-02T00:00:00Z', until: '2026-03-01T00:00:00Z' }, 'until'],
        [{ since: 'last month' }, 'since'],
        [{ until: '2026-13-01T00:00:00Z' }, 'until'],
      ] as const) {
        const r = await send(g.url, 'GET', `/v0/statement${q(params)}`, { key: ADMIN_KEY });
        expect(r.status).toBe(400);
        expect(r.body.error.message).toMatch(new RegExp(`^${name}\\b`));
      }
    });
  });

  test('dev mode: the operator names the account; a second currency is billed; a failed orchestrator’s paid child counts in spent', async () => {
    const g = await startTestGateway();
    await useAudited(g, async () => {
      const MANDATE = {
        allow: { agents: ['fixtures/*', 'examples/*'], capabilities: ['text.*', 'test.*'] },
        budget: { total: '5.00', currency: 'EUR' },
        delegation: { max_depth: 2 },
      };
      await g.mandate(MANDATE);
      expect((await g.get('/v0/statement')).status).toBe(400);
      expect((await g.post('/v0/admin/credit', { account: 'alice', amount: '1.00', currency: 'USD' })).status).toBe(201);
      await g.mandate({ id: 'alice/usd', allow: { agents: ['fixtures/*'] }, budget: { total: '1.00', currency: 'USD' } });
      const usd = await g.post<CallRan>('/v0/calls', { mandate: 'alice/usd', agent: 'fixtures/usd', input: {} });
      expect(usd.body.receipt).toMatchObject({ billed: true, currency: 'USD', cost: { total: '0.10' } });
      await g.post('/v0/calls', { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'x' } });
      // fixtures/slow-parent times out after starting a child that then succeeds: the parent is unbilled, its
      // cost_total is the child's, and spent counts it.
      const file = path.join(await mkdtemp(path.join(tmpdir(), 'holon-statement-')), 'calls.log');
      await writeFile(file, '');
      const started = await g.post<Schema<'CallQueued'>>(
        '/v0/calls',
        { mandate: 'alice/test', agent: 'fixtures/slow-parent', input: { file } },
        { prefer: 'respond-async' },
      );
      let tree: Receipt | undefined;
      for (let i = 0; i < 200 && !tree; i++) {
        const r = await g.get<Schema<'Receipt'>>(`/v0/receipts/${started.body.call.id}`);
        if (r.status === 200 && r.body.status === 'failed') tree = r.body;
        else await pause(50);
      }
      expect(tree).toMatchObject({ billed: false, cost: { own: '0.00', downstream: '0.01', total: '0.01' } });

      const receipts = (await g.get<ReceiptsPage>('/v0/receipts?limit=200')).body.receipts;
      const statement = (await g.get<Statement>('/v0/statement?account=alice')).body;
      checkStatement(statement, 'alice', {}, receipts);
      expect(statement.currencies).toEqual([
        { currency: 'EUR', opening: '0.00', credited: '5.00', billed: '0.02', earned: '0.00', closing: '4.98' },
        { currency: 'USD', opening: '0.00', credited: '1.00', billed: '0.10', earned: '0.00', closing: '0.90' },
      ]);
      expect(statement.mandates).toEqual([
        { id: 'alice/test', currency: 'EUR', total: '5.00', spent: '0.02', reserved: '0.00', billed_in_range: '0.02', billed_to_date: '0.02' },
        { id: 'alice/usd', currency: 'USD', total: '1.00', spent: '0.10', reserved: '0.00', billed_in_range: '0.10', billed_to_date: '0.10' },
      ]);
      // The tree counts where its top-level receipt was written: a period that ends before the parent's receipt but
      // after the child's has the child in `billed` and not yet in the mandate's figures.
      const parentAt = tree!.created_at;
      const childAt = tree!.children[0]!.created_at;
      expect(childAt < parentAt).toBe(true);
      const cut = await g.get<Answer<'readStatement', 200>>(
        `/v0/statement?account=alice&since=${encodeURIComponent(childAt)}&until=${encodeURIComponent(parentAt)}`,
      );
      checkStatement(cut.body, 'alice', { since: childAt, until: parentAt }, receipts);
      expect(cut.body.currencies[0]).toMatchObject({ currency: 'EUR', billed: '0.01' });
      expect(cut.body.mandates[0]).toMatchObject({ id: 'alice/test', billed_in_range: '0.00' });
      // Platform and authors, through the operator too.
      for (const account of ['holon', 'fixtures', 'examples', 'external:demo-credit']) {
        const s = await g.get<Statement>(`/v0/statement?account=${encodeURIComponent(account)}`);
        expect(s.status).toBe(200);
        checkStatement(s.body, account, {}, receipts);
      }
    });
  });
});

/**
 * The SQL itself, on both backends (PGlite is `holon serve`'s embedded default): whoever pays whom — payer, author,
 * a fork's upstream and the platform being the same account or not, at prices whose fee rounds to nothing (a
 * settlement whose lines merge to none) — each account's statement adds up over the whole history and over the
 * period since any call, with billed and earned as the receipts say (the harness of settlement-coincidences.test.ts).
 */
for (const backend of BACKENDS) {
  dbTest(backend)(`${backend}: the identity holds whatever accounts coincide, at any price`, async ({ db }) => {
    const PEOPLE = ['alice', 'bob', 'carol'] as const;
    const messaging = await createMessaging();
    const log = createLogger('test', 'silent');
    for (const who of PEOPLE) await creditSignup(db.knex, who, 100_000_000n);
    const cut: string[] = [];
    let n = 0;
    const check = async () => {
      const periods: Period[] = [{}, ...cut.map((since) => ({ since })), ...cut.map((until) => ({ until }))];
      const receipts = await db.knex('receipts').select('payer', 'billed', 'cost_own', 'splits', 'created_at');
      for (const who of [...PEOPLE, 'holon']) {
        for (const period of periods) {
          const s = await readStatement(db.knex, who, period);
          for (const c of s.currencies) expect(c.closing, `${who} ${JSON.stringify(period)}`).toBe(c.opening + c.credited - c.billed + c.earned);
          const within = receipts.filter((r) => inPeriod((r.created_at as Date).toISOString(), period));
          const billed = within.filter((r) => r.billed && r.payer === who).reduce((a, r) => a + BigInt(r.cost_own), 0n);
          const earned = within
            .filter((r) => r.billed)
            .flatMap((r) => (typeof r.splits === 'string' ? JSON.parse(r.splits) : r.splits) as Array<{ to: string; amount: string }>)
            .filter((x) => x.to === who)
            .reduce((a, x) => a + micros(x.amount), 0n);
          const eur = s.currencies.find((c) => c.currency === 'EUR');
          expect(eur?.billed ?? 0n, `${who} billed ${JSON.stringify(period)}`).toBe(billed);
          expect(eur?.earned ?? 0n, `${who} earned ${JSON.stringify(period)}`).toBe(earned);
          for (const m of s.mandates) if (period.until === undefined) expect(m.billedToDate).toBe(m.spent);
        }
      }
    };
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            payer: fc.constantFrom(...PEOPLE),
            author: fc.constantFrom(...PEOPLE),
            upstream: fc.option(fc.constantFrom(...PEOPLE), { nil: null }),
            royalty: fc.constantFrom({ num: 0n, den: 1n }, { num: 1n, den: 10n }, { num: 1n, den: 2n }),
            price: fc.oneof(fc.bigInt({ min: 1n, max: 25n }), fc.constantFrom(100n, 35_000n)),
            result: fc.constantFrom('output' as const, 'billed_error' as const, 'unbilled_error' as const),
          }),
          async (c) => {
            n += 1;
            const errors = { refused: { description: 'a billed refusal', billed: true }, nothing: { description: 'unbilled', billed: false } };
            const pricing = { model: 'per_run' as const, currency: 'EUR', amount: c.price, chargeOn: 'attempt' as const };
            const iface = { input: { type: 'object' }, output: { type: 'object' }, errors, examples: [] };
            const agents: Manifest[] = [];
            let lineage: Manifest['lineage'];
            if (c.upstream) {
              const upstream = buildManifest({ id: `${c.upstream}/base${n}`, pricing, interface: iface });
              agents.push(upstream);
              lineage = { forkedFrom: { id: upstream.id, version: upstream.version }, royalty: c.royalty };
            }
            const agent = buildManifest({ id: `${c.author}/agent${n}`, pricing, interface: iface, ...(lineage ? { lineage } : {}) });
            agents.push(agent);
            const ctx = shippedAgentsContext(db.knex, agents, messaging, log);
            const mandate = buildMandate({
              id: `${c.payer}/m${n}`,
              issuer: c.payer,
              grantee: `${c.payer}/assistant`,
              allow: { agents: PEOPLE.map((p) => `${p}/*`) },
              budget: { total: 1_000_000n },
            });
            await saveMandate(db.knex, mandate, generateSigningKey());
            const submitted = await createCallEngine(ctx).submit({ mandateId: mandate.id, agent: agent.id, input: {} });
            expect(submitted.kind).toBe('queued');
            if (submitted.kind !== 'queued') return;
            const result: RunResult =
              c.result === 'output' ? { kind: 'output', output: { ok: true } } : { kind: 'error', code: c.result === 'billed_error' ? 'refused' : 'nothing' };
            await createCallEngine(ctx).run(submitted.callId, { runtimes: { run: async () => result } });
            expect(await settleCall(ctx, submitted.callId)).toBe('settled');
            const at = await db.knex('receipts').where({ id: submitted.callId }).first('created_at');
            if (n % 5 === 0) cut.push((at.created_at as Date).toISOString());
          },
        ),
        { numRuns: 40, seed: 20_260_402 },
      );
      await check();
    } finally {
      await messaging.close();
    }
  });
}
