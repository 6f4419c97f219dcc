/**
 * Group commit (shared/calls/settle/settle.ts settleBatch, shared/calls/settle/batcher.ts): many top-level calls
 * settled in one transaction, the shared rows changed once with the sums. It must be exactly what settling them one
 * by one does — every receipt, hold, mandate and balance — whatever accounts coincide and however small the amounts;
 * two settlers racing on the same calls settle each once; a batch that fails as a whole changes nothing and its
 * calls are then settled one by one.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import type { Manifest } from '../../shared/core/manifest/types.js';
import { PLATFORM_ACCOUNT, readBalance } from '../../shared/ledger/accounts.js';
import { audit } from '../../shared/ledger/audit.js';
import { creditSignup } from '../../shared/ledger/demo-credit.js';
import { saveMandate } from '../../shared/mandates/store.js';
import { createMessaging } from '../../shared/messaging/index.js';
import type { Messaging } from '../../shared/messaging/types.js';
import { createLogger } from '../../shared/platform/log.js';
import { settleBatch, settleCall } from '../../shared/calls/settle/settle.js';
import { createSettleBatcher } from '../../shared/calls/settle/batcher.js';
import type { RunResult } from '../../shared/runtimes/types.js';
import { shippedAgentsContext } from '../support/service-context.js';
import { dbTest, type TestDatabase } from '../support/db.js';
import { buildManifest, buildMandate } from '../support/manifest-builder.js';
import { generateSigningKey } from '../../shared/signing/keys.js';
import { createCallEngine } from '../../shared/calls/engine.js';

const test = dbTest('postgres');
const PEOPLE = ['alice', 'bob', 'carol'] as const;
type Person = (typeof PEOPLE)[number];

interface Case {
  payer: Person;
  author: Person;
  upstream: Person | null;
  royalty: { num: bigint; den: bigint };
  price: bigint;
  chargeOn: 'success' | 'attempt';
  result: 'output' | 'billed_error' | 'unbilled_error' | 'timeout';
}

const arbCase: fc.Arbitrary<Case> = fc.record({
  payer: fc.constantFrom(...PEOPLE),
  author: fc.constantFrom(...PEOPLE),
  upstream: fc.option(fc.constantFrom(...PEOPLE), { nil: null }),
  royalty: fc.constantFrom({ num: 0n, den: 1n }, { num: 1n, den: 10n }, { num: 1n, den: 2n }, { num: 9n, den: 10n }),
  price: fc.oneof(fc.bigInt({ min: 1n, max: 25n }), fc.constantFrom(100n, 35_000n)),
  chargeOn: fc.constantFrom('success' as const, 'attempt' as const),
  result: fc.constantFrom('output' as const, 'billed_error' as const, 'unbilled_error' as const, 'timeout' as const),
});

const RESULTS: Record<Case['result'], RunResult> = {
  output: { kind: 'output', output: { ok: true } },
  billed_error: { kind: 'error', code: 'refused' },
  unbilled_error: { kind: 'error', code: 'not_here' },
  timeout: { kind: 'failure', code: 'timeout', message: 'too slow' },
};

const errors = { refused: { description: 'billed', billed: true }, not_here: { description: 'unbilled', billed: false } };

/** The people of one world: `alice` in world 1 is `alice1`. */
const who = (p: Person, world: number) => `${p}w${world}x`;
const strip = (s: string, world: number) => s.replaceAll(`w${world}x`, '');

/** Calls brought to `settling` through the real admission and runner code, with the agents each case names. */
async function settlingCalls(db: TestDatabase, messaging: Messaging, cases: readonly Case[], world: number, tag: string) {
  const agents: Manifest[] = [];
  const plan = cases.map((c, i) => {
    const pricing = { model: 'per_run' as const, currency: 'EUR', amount: c.price, chargeOn: c.chargeOn };
    const iface = { input: { type: 'object' }, output: { type: 'object' }, errors, examples: [] };
    let lineage: Manifest['lineage'];
    if (c.upstream) {
      const upstream = buildManifest({ id: `${who(c.upstream, world)}/base-${tag}-${i}`, pricing, interface: iface });
      agents.push(upstream);
      lineage = { forkedFrom: { id: upstream.id, version: upstream.version }, royalty: c.royalty };
    }
    const agent = buildManifest({ id: `${who(c.author, world)}/agent-${tag}-${i}`, pricing, interface: iface, ...(lineage ? { lineage } : {}) });
    agents.push(agent);
    return { c, agent };
  });
  const ctx = shippedAgentsContext(db.knex, agents, messaging, createLogger('test', 'silent'));
  const ids: string[] = [];
  for (const [i, { c, agent }] of plan.entries()) {
    // Several calls under one mandate, so a batch sums a mandate's releases and charges.
    const mandate = buildMandate({
      id: `${who(c.payer, world)}/m-${tag}-${i % 2}`,
      issuer: who(c.payer, world),
      grantee: `${who(c.payer, world)}/assistant`,
      allow: { agents: PEOPLE.map((p) => `${who(p, world)}/*`) },
      budget: { total: 10_000_000n },
    });
    await saveMandate(db.knex, mandate, generateSigningKey()).catch(() => undefined); // the second call of a pair finds it saved
    const submitted = await createCallEngine(ctx).submit({ mandateId: mandate.id, agent: agent.id, input: {} });
    if (submitted.kind !== 'queued') throw new Error(`not queued: ${JSON.stringify(submitted)}`);
    await createCallEngine(ctx).run(submitted.callId, { runtimes: { run: async () => RESULTS[c.result] } });
    ids.push(submitted.callId);
  }
  return { ctx, ids };
}

async function balances(db: TestDatabase, world: number) {
  const out: Record<string, [bigint, bigint]> = {};
  for (const p of PEOPLE) {
    const b = await readBalance(db.knex, who(p, world), 'EUR');
    out[p] = [b.balance, b.held];
  }
  const platform = await readBalance(db.knex, PLATFORM_ACCOUNT, 'EUR');
  out.platform = [platform.balance, platform.held];
  return out;
}

async function outcomes(db: TestDatabase, ids: readonly string[], world: number) {
  return Promise.all(
    ids.map(async (id) => {
      const r = await db.knex('receipts').where({ id }).first('status', 'error_code', 'billed', 'cost_own', 'splits');
      const h = await db.knex('holds').where({ id }).first('status', 'amount');
      const c = await db.knex('calls').where({ id }).first('status');
      const splits = (typeof r.splits === 'string' ? JSON.parse(r.splits) : r.splits) as Array<{ to: string }>;
      return { ...r, splits: JSON.parse(strip(JSON.stringify(splits), world)), hold: h, call: c.status };
    }),
  );
}

async function mandatesOf(db: TestDatabase, world: number) {
  const rows = (await db.knex('mandates').where('id', 'like', `%w${world}x/m-%`).orderBy('id').select('id', 'spent', 'reserved')) as Array<{
    id: string;
    spent: string;
    reserved: string;
  }>;
  return rows.map((r) => ({ id: strip(r.id, world), spent: String(r.spent), reserved: String(r.reserved) }));
}

test('a batch settles exactly as one-by-one settlement does: receipts, holds, mandates, balances, whatever coincides', async ({ db }) => {
  const messaging = await createMessaging();
  let run = 0;
  try {
    await fc.assert(
      fc.asyncProperty(fc.array(arbCase, { minLength: 1, maxLength: 12 }), async (cases) => {
        run += 1;
        const one = 2 * run - 1;
        const many = 2 * run;
        for (const world of [one, many]) for (const p of PEOPLE) await creditSignup(db.knex, who(p, world), 100_000_000n);

        const sequential = await settlingCalls(db, messaging, cases, one, 't');
        const platformBefore = await readBalance(db.knex, PLATFORM_ACCOUNT, 'EUR');
        for (const id of sequential.ids) expect(await settleCall(sequential.ctx, id)).toBe('settled');
        const platformMid = await readBalance(db.knex, PLATFORM_ACCOUNT, 'EUR');

        const batched = await settlingCalls(db, messaging, cases, many, 't');
        const platformMid2 = await readBalance(db.knex, PLATFORM_ACCOUNT, 'EUR');
        const results = await settleBatch(batched.ctx, batched.ids);
        expect([...results.values()]).toEqual(batched.ids.map(() => 'settled'));
        const platformAfter = await readBalance(db.knex, PLATFORM_ACCOUNT, 'EUR');

        expect(await outcomes(db, batched.ids, many)).toEqual(await outcomes(db, sequential.ids, one));
        expect(await mandatesOf(db, many)).toEqual(await mandatesOf(db, one));
        const [a, b] = [await balances(db, one), await balances(db, many)];
        for (const p of PEOPLE) expect(b[p]).toEqual(a[p]);
        expect(platformAfter.balance - platformMid2.balance).toBe(platformMid.balance - platformBefore.balance);
        // A second settlement of the same calls changes nothing, batched or not.
        expect([...(await settleBatch(batched.ctx, batched.ids)).values()].every((r) => r === 'noop')).toBe(true);
        const report = await audit(db.knex);
        expect(report.problems).toEqual([]);
      }),
      { numRuns: 25, seed: 20261214 },
    );
  } finally {
    await messaging.close();
  }
});

test('two settlers batching the same calls at once settle each exactly once, and the books balance', async ({ db }) => {
  const messaging = await createMessaging();
  try {
    for (const p of PEOPLE) await creditSignup(db.knex, who(p, 0), 100_000_000n);
    const cases: Case[] = Array.from({ length: 30 }, (_, i) => ({
      payer: PEOPLE[i % 3]!,
      author: PEOPLE[(i + 1) % 3]!,
      upstream: i % 4 === 0 ? PEOPLE[(i + 2) % 3]! : null,
      royalty: { num: 1n, den: 10n },
      price: 10_000n,
      chargeOn: 'success',
      result: i % 5 === 0 ? 'unbilled_error' : 'output',
    }));
    const { ctx, ids } = await settlingCalls(db, messaging, cases, 0, 'race');
    const shuffled = [...ids].reverse();
    const [first, second] = await Promise.all([settleBatch(ctx, ids), settleBatch(ctx, shuffled)]);
    for (const id of ids) expect([first.get(id), second.get(id)].sort()).toEqual(['noop', 'settled']);
    expect(Number((await db.knex('receipts').whereIn('id', ids).count<Array<{ n: string }>>('* as n'))[0]!.n)).toBe(30);
    expect(
      Number(
        (
          await db
            .knex('journal_entries')
            .whereIn(
              'key',
              ids.map((id) => `settle:${id}`),
            )
            .count<Array<{ n: string }>>('* as n')
        )[0]!.n,
      ),
    ).toBe(24);
    const report = await audit(db.knex);
    expect(report.problems).toEqual([]);
  } finally {
    await messaging.close();
  }
});

/** `n` calls of alice's to bob's agent at 1,000 micro-units, charged on success, with these results. */
const aliceToBob = (n: number, result: (i: number) => Case['result']): Case[] =>
  Array.from({ length: n }, (_, i) => ({
    payer: 'alice',
    author: 'bob',
    upstream: null,
    royalty: { num: 0n, den: 1n },
    price: 1_000n,
    chargeOn: 'success',
    result: result(i),
  }));

test('a batch that fails as a whole changes nothing; the batcher then settles its calls one by one', async ({ db }) => {
  const messaging = await createMessaging();
  try {
    for (const p of PEOPLE) await creditSignup(db.knex, who(p, 0), 100_000_000n);
    const cases = aliceToBob(5, (i) => (i === 2 ? 'billed_error' : 'output'));
    const { ctx, ids } = await settlingCalls(db, messaging, cases, 0, 'bad');
    // One call's recorded outcome is corrupt: settling it throws, and with it the whole batch.
    await db
      .knex('calls')
      .where({ id: ids[3] })
      .update({ outcome: JSON.stringify({ kind: 'success', billed: true, own: 'not a number', duration_ms: 1 }) });
    await expect(settleBatch(ctx, ids)).rejects.toThrow();
    expect(Number((await db.knex('receipts').whereIn('id', ids).count<Array<{ n: string }>>('* as n'))[0]!.n)).toBe(0);

    const batcher = createSettleBatcher(ctx, { maxBatch: 64 });
    const settled = await Promise.allSettled(ids.map((id) => batcher.settle(id)));
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(settled.filter((s) => s.status === 'fulfilled').map((s) => (s as PromiseFulfilledResult<string>).value)).toEqual([
      'settled',
      'settled',
      'settled',
      'settled',
    ]);
    const stuck = await db.knex('calls').where({ id: ids[3] }).first('status');
    expect(stuck.status).toBe('settling');
    const report = await audit(db.knex);
    expect(report.problems).toEqual([]);
  } finally {
    await messaging.close();
  }
});

test("a batch's after-commit work goes out together: every notice is sent before any is answered, and one that fails keeps no other from being sent", async ({
  db,
}) => {
  const messaging = await createMessaging();
  try {
    for (const p of PEOPLE) await creditSignup(db.knex, who(p, 0), 100_000_000n);
    const cases = aliceToBob(4, () => 'output');
    const { ctx, ids } = await settlingCalls(db, messaging, cases, 0, 'notices');
    // Redis answers no notice until all four were sent (a batch that sent them one after another would wait for
    // ever: the gate's timeout fails it); then the notice of the second call fails.
    const sent: string[] = [];
    let open!: () => void;
    const allSent = new Promise<void>((resolve) => (open = resolve));
    const gate = setTimeout(() => open(), 5_000);
    const publish = messaging.notifier.publish.bind(messaging.notifier);
    const notifier = {
      ...messaging.notifier,
      publish: async (channel: string, message: string) => {
        sent.push(message);
        if (sent.length === ids.length) open();
        const waited = Date.now();
        await allSent;
        if (Date.now() - waited >= 4_000) throw new Error('the notices were sent one after another');
        if (message.includes(ids[1]!)) throw new Error('Redis refused this notice');
        return publish(channel, message);
      },
    };
    const heard: string[] = [];
    const withGate = { ...ctx, messaging: { ...messaging, notifier } };
    await expect(settleBatch(withGate, ids, (id) => heard.push(id))).rejects.toThrow('Redis refused this notice');
    clearTimeout(gate);
    expect(sent).toHaveLength(ids.length);
    expect([...heard].sort()).toEqual([...ids].sort());
    // The batch committed: every call is settled, once; its failure only sends the batcher's calls one by one (no-ops).
    const statuses = await db.knex('calls').whereIn('id', ids).pluck('status');
    expect(statuses).toEqual(ids.map(() => 'succeeded'));
    expect(Number((await db.knex('receipts').whereIn('id', ids).count<Array<{ n: string }>>('* as n'))[0]!.n)).toBe(ids.length);
    expect((await audit(db.knex)).problems).toEqual([]);
  } finally {
    await messaging.close();
  }
});
