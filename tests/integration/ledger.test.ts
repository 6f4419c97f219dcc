import { describe, expect } from 'vitest';
import fc from 'fast-check';
import { BACKENDS, dbTest } from '../support/db.js';
import { audit, DEMO_CREDIT_ACCOUNT, ensureAccount, postEntry, readBalance, readBalances, resolveHold } from '../../shared/ledger/index.js';
import { recordEntries } from '../../shared/ledger/entries.js';
import { ensureBalanceRow, resolveHolds } from '../../shared/ledger/holds.js';
import { placeHold } from '../support/place-hold.js';
import { HolonError } from '../../shared/core/errors.js';
import type { Queryable } from '../../shared/db/connect.js';
import { httpStatusOf } from '../../services/api/http-status.js';

const EUR = 'EUR';

async function credit(db: Queryable, account: string, amount: bigint, key = `signup:${account}`) {
  await ensureAccount(db, DEMO_CREDIT_ACCOUNT);
  await ensureAccount(db, account);
  return postEntry(db, {
    key,
    kind: 'signup',
    lines: [
      { account: DEMO_CREDIT_ACCOUNT, currency: EUR, amount: -amount },
      { account, currency: EUR, amount },
    ],
  });
}

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a rejection');
}

describe.each(BACKENDS)('ledger on %s', (backend) => {
  const test = dbTest(backend, { poolMax: 60 });

  test('posts a balanced entry and updates cached balances', async ({ db }) => {
    const posted = await credit(db.knex, 'bob', 5_000_000n);
    expect(posted.created).toBe(true);
    await ensureAccount(db.knex, 'holon');
    await ensureAccount(db.knex, 'lena');
    await ensureAccount(db.knex, 'acme');
    await postEntry(db.knex, {
      key: 'settle:r1',
      kind: 'settle',
      lines: [
        { account: 'bob', currency: EUR, amount: -35_000n },
        { account: 'holon', currency: EUR, amount: 3_500n },
        { account: 'lena', currency: EUR, amount: 26_775n },
        { account: 'acme', currency: EUR, amount: 4_725n },
      ],
    });
    const balances = Object.fromEntries((await readBalances(db.knex)).map((b) => [b.account, b.balance]));
    expect(balances).toEqual({ acme: 4_725n, bob: 4_965_000n, 'external:demo-credit': -5_000_000n, holon: 3_500n, lena: 26_775n });
    expect((await audit(db.knex)).problems).toEqual([]);
  });

  test('the same key with the same lines returns the original entry, once', async ({ db }) => {
    const first = await credit(db.knex, 'bob', 5_000_000n);
    const again = await credit(db.knex, 'bob', 5_000_000n);
    expect(again).toEqual({ id: first.id, created: false });
    expect((await readBalance(db.knex, 'bob', EUR)).balance).toBe(5_000_000n);
    expect(Number((await db.knex('journal_entries').count({ n: '*' }).first())!.n)).toBe(1);
  });

  test('the same key with different lines is an error and changes nothing', async ({ db }) => {
    await credit(db.knex, 'bob', 5_000_000n);
    const e = await rejection(credit(db.knex, 'bob', 6_000_000n));
    expect(e).toBeInstanceOf(HolonError);
    expect((e as HolonError).code).toBe('idempotency_conflict');
    expect(httpStatusOf((e as HolonError).code)).toBe(409);
    expect((await readBalance(db.knex, 'bob', EUR)).balance).toBe(5_000_000n);
  });

  test('concurrent posts of one key record one entry', async ({ db }) => {
    await ensureAccount(db.knex, DEMO_CREDIT_ACCOUNT);
    await ensureAccount(db.knex, 'bob');
    const results = await Promise.all(Array.from({ length: 10 }, () => credit(db.knex, 'bob', 1_000_000n, 'admin-credit:x')));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.id)).size).toBe(1);
    expect((await readBalance(db.knex, 'bob', EUR)).balance).toBe(1_000_000n);
  });

  test('code refuses unbalanced, one-line and bad entries with plain words', async ({ db }) => {
    await ensureAccount(db.knex, 'bob');
    await ensureAccount(db.knex, 'holon');
    const unbalanced = await rejection(
      postEntry(db.knex, {
        key: 'k1',
        kind: 't',
        lines: [
          { account: 'bob', currency: EUR, amount: -10n },
          { account: 'holon', currency: EUR, amount: 9n },
        ],
      }),
    );
    expect(unbalanced.message).toContain('EUR lines sum to -0.000001, not zero');
    const single = await rejection(postEntry(db.knex, { key: 'k2', kind: 't', lines: [{ account: 'bob', currency: EUR, amount: 0n }] }));
    expect(single.message).toContain('at least two');
    const badCurrency = await rejection(
      postEntry(db.knex, {
        key: 'k3',
        kind: 't',
        lines: [
          { account: 'bob', currency: 'eur', amount: -1n },
          { account: 'holon', currency: 'eur', amount: 1n },
        ],
      }),
    );
    expect(badCurrency.message).toContain('no valid currency');
    const unknown = await rejection(
      postEntry(db.knex, {
        key: 'k4',
        kind: 't',
        lines: [
          { account: 'nobody', currency: EUR, amount: 1n },
          { account: 'external:x', currency: EUR, amount: -1n },
        ],
      }),
    );
    expect((unknown as HolonError).code).toBe('unknown_account');
    expect(Number((await db.knex('journal_entries').count({ n: '*' }).first())!.n)).toBe(0);
  });

  test('Postgres refuses an unbalanced entry at commit, not before', async ({ db }) => {
    await ensureAccount(db.knex, 'bob');
    await ensureAccount(db.knex, 'holon');
    let statementsAccepted = false;
    const e = await rejection(
      db.knex.transaction(async (trx) => {
        const [{ id }] = await trx('journal_entries').insert({ key: 'raw-1', kind: 't', digest: 'x' }).returning('id');
        await trx('journal_lines').insert({ entry_id: id, account: 'bob', currency: EUR, amount: '-100' });
        await trx('journal_lines').insert({ entry_id: id, account: 'holon', currency: EUR, amount: '99' });
        statementsAccepted = true;
      }),
    );
    expect(statementsAccepted).toBe(true);
    expect(e.message).toMatch(/does not balance/);
    expect(Number((await db.knex('journal_lines').count({ n: '*' }).first())!.n)).toBe(0);

    // Balanced across several statements: each intermediate state is unbalanced, the commit is not.
    await db.knex.transaction(async (trx) => {
      const [{ id }] = await trx('journal_entries').insert({ key: 'raw-2', kind: 't', digest: 'x' }).returning('id');
      await trx('journal_lines').insert({ entry_id: id, account: 'bob', currency: EUR, amount: '-100' });
      await trx('journal_lines').insert({ entry_id: id, account: 'holon', currency: EUR, amount: '60' });
      await trx('journal_lines').insert({ entry_id: id, account: 'holon', currency: EUR, amount: '40' });
    });
    // The cached balances were bypassed by the raw inserts: the audit must notice, then we repair the cache.
    const report = await audit(db.knex);
    expect(report.problems.some((p) => p.includes('cached balance'))).toBe(true);
    await db.knex
      .raw(`INSERT INTO account_balances (account, currency, balance) VALUES ('bob', 'EUR', -100), ('holon', 'EUR', 100)
                       ON CONFLICT (account, currency) DO UPDATE SET balance = EXCLUDED.balance`)
      .catch(async () => {
        // bob may not go negative: mark it overdraft for this raw-SQL test
        await db.knex.raw(`INSERT INTO account_balances (account, currency, balance, overdraft) VALUES ('bob', 'EUR', -100, true), ('holon', 'EUR', 100, false)
                         ON CONFLICT (account, currency) DO UPDATE SET balance = EXCLUDED.balance, overdraft = EXCLUDED.overdraft`);
      });
  });

  test('Postgres refuses an entry with a single line, and two currencies must each balance', async ({ db }) => {
    await ensureAccount(db.knex, 'bob');
    await ensureAccount(db.knex, 'holon');
    const single = await rejection(
      db.knex.transaction(async (trx) => {
        await trx('journal_entries').insert({ key: 'lonely', kind: 't', digest: 'x' });
      }),
    );
    expect(single.message).toMatch(/needs at least two/);
    const mixed = await rejection(
      db.knex.transaction(async (trx) => {
        const [{ id }] = await trx('journal_entries').insert({ key: 'fx', kind: 't', digest: 'x' }).returning('id');
        await trx('journal_lines').insert([
          { entry_id: id, account: 'bob', currency: 'EUR', amount: '-100' },
          { entry_id: id, account: 'holon', currency: 'USD', amount: '100' },
        ]);
      }),
    );
    expect(mixed.message).toMatch(/does not balance/);
  });

  test('journal rows can never be updated, deleted or truncated', async ({ db }) => {
    await credit(db.knex, 'bob', 5_000_000n);
    for (const attempt of [
      () => db.knex('journal_lines').update({ amount: '1' }),
      () => db.knex('journal_lines').delete(),
      () => db.knex('journal_entries').update({ kind: 'other' }),
      () => db.knex('journal_entries').delete(),
      () => db.knex.raw('TRUNCATE journal_lines CASCADE'),
      () => db.knex.raw('TRUNCATE journal_entries CASCADE'),
      () => db.knex.raw(`INSERT INTO journal_entries (key, kind, digest) VALUES ('signup:bob', 'x', 'y')`),
    ]) {
      const e = await rejection(attempt());
      expect(e.message).toMatch(/append-only|duplicate key|unique/);
    }
    expect((await readBalance(db.knex, 'bob', EUR)).balance).toBe(5_000_000n);
    expect(Number((await db.knex('journal_lines').count({ n: '*' }).first())!.n)).toBe(2);
  });

  test('an overdraw is refused with what was short, and nothing is written', async ({ db }) => {
    await credit(db.knex, 'bob', 1_000_000n);
    await ensureAccount(db.knex, 'holon');
    const e = await rejection(
      postEntry(db.knex, {
        key: 'settle:big',
        kind: 'settle',
        lines: [
          { account: 'bob', currency: EUR, amount: -1_000_001n },
          { account: 'holon', currency: EUR, amount: 1_000_001n },
        ],
      }),
    );
    expect((e as HolonError).code).toBe('insufficient_funds');
    expect(e.message).toBe('account bob has 1.00 EUR available; 1.000001 is needed');
    expect((await readBalance(db.knex, 'holon', EUR)).balance).toBe(0n);
    expect(await db.knex('journal_entries').where({ key: 'settle:big' }).first()).toBeUndefined();
  });

  test('Postgres refuses an overdraw even when code skips the check', async ({ db }) => {
    await credit(db.knex, 'bob', 1_000n);
    const e = await rejection(db.knex.raw(`UPDATE account_balances SET balance = balance - 1001 WHERE account = 'bob'`));
    expect(e.message).toMatch(/balance_covers_holds/);
  });

  test('holds reduce what is available and are resolved exactly once', async ({ db }) => {
    await credit(db.knex, 'bob', 1_000_000n);
    await db.knex.transaction((trx) => placeHold(trx, { id: 'h1', account: 'bob', currency: EUR, amount: 700_000n }));
    expect(await readBalance(db.knex, 'bob', EUR)).toMatchObject({ balance: 1_000_000n, held: 700_000n, available: 300_000n });
    const tooMuch = await rejection(db.knex.transaction((trx) => placeHold(trx, { id: 'h2', account: 'bob', currency: EUR, amount: 300_001n })));
    expect(tooMuch.message).toBe("account bob has 0.30 EUR available; the call's worst case is 0.300001 EUR");
    await ensureAccount(db.knex, 'holon');
    const spend = await rejection(
      postEntry(db.knex, {
        key: 'x',
        kind: 't',
        lines: [
          { account: 'bob', currency: EUR, amount: -300_001n },
          { account: 'holon', currency: EUR, amount: 300_001n },
        ],
      }),
    );
    expect((spend as HolonError).code).toBe('insufficient_funds');
    const first = await db.knex.transaction((trx) => resolveHold(trx, 'h1', 'voided'));
    const second = await db.knex.transaction((trx) => resolveHold(trx, 'h1', 'posted'));
    expect(first.kind).toBe('voided');
    expect(second).toMatchObject({ kind: 'already_resolved', as: 'voided' });
    expect(await db.knex('holds').where({ id: 'h1' }).first()).toMatchObject({ status: 'released' });
    expect(await readBalance(db.knex, 'bob', EUR)).toMatchObject({ held: 0n, available: 1_000_000n });
  });

  test('entries and holds of a batch: new ones written once, replays answered as they were, a changed replay refused', async ({ db }) => {
    await credit(db.knex, 'bob', 1_000_000n);
    await ensureAccount(db.knex, 'holon');
    await ensureBalanceRow(db.knex, 'holon', EUR);
    const entry = (key: string, amount: bigint) => ({
      key,
      kind: 'settle',
      lines: [
        { account: 'bob', currency: EUR, amount: -amount },
        { account: 'holon', currency: EUR, amount },
      ],
    });
    const first = await db.knex.transaction((trx) => recordEntries(trx, [entry('b:1', 5n), entry('b:2', 7n)]));
    expect(first.map((e) => e.created)).toEqual([true, true]);
    // A replay of b:2 next to a new b:3: b:2 is the original entry, b:3 new; lines only for b:3.
    const second = await db.knex.transaction((trx) => recordEntries(trx, [entry('b:2', 7n), entry('b:3', 9n)]));
    expect(second.map((e) => e.created)).toEqual([false, true]);
    expect(second[0]!.id).toBe(first[1]!.id);
    const lines = async (key: string) =>
      Number((await db.knex('journal_lines').join('journal_entries', 'journal_entries.id', 'journal_lines.entry_id').where({ key }).count({ n: '*' }))[0]!.n);
    expect([await lines('b:1'), await lines('b:2'), await lines('b:3')]).toEqual([2, 2, 2]);
    const conflict = await rejection(db.knex.transaction((trx) => recordEntries(trx, [entry('b:4', 1n), entry('b:1', 6n)])));
    expect((conflict as HolonError).code).toBe('idempotency_conflict');
    expect(await db.knex('journal_entries').where({ key: 'b:4' }).first()).toBeUndefined();
    // The entries moved no cached balance (the caller applies those): put them back through the balance rows.
    await db.knex('account_balances').where({ account: 'bob' }).decrement('balance', 21);
    await db.knex('account_balances').where({ account: 'holon' }).increment('balance', 21);

    await db.knex.transaction(async (trx) => {
      await placeHold(trx, { id: 'hb1', account: 'bob', currency: EUR, amount: 10n });
      await placeHold(trx, { id: 'hb2', account: 'bob', currency: EUR, amount: 20n });
    });
    const resolved = await db.knex.transaction((trx) =>
      resolveHolds(trx, [
        { id: 'hb1', as: 'posted' },
        { id: 'hb2', as: 'voided' },
      ]),
    );
    expect([resolved.get('hb1')!.kind, resolved.get('hb2')!.kind]).toEqual(['posted', 'voided']);
    const again = await db.knex.transaction((trx) => resolveHolds(trx, [{ id: 'hb1', as: 'voided' }]));
    expect(again.get('hb1')).toMatchObject({ kind: 'already_resolved', as: 'posted', amount: 10n });
    expect(await db.knex('holds').whereIn('id', ['hb1', 'hb2']).orderBy('id').pluck('status')).toEqual(['settled', 'released']);
    expect((await rejection(db.knex.transaction((trx) => resolveHolds(trx, [{ id: 'nope', as: 'voided' }])))) as HolonError).toMatchObject({
      code: 'unknown_hold',
    });
    await db.knex('account_balances').where({ account: 'bob' }).decrement('held', 30);
  });

  test('the audit catches a tampered cache, a stray hold, a wrong mandate and an unbalanced journal', async ({ db }) => {
    await credit(db.knex, 'bob', 1_000_000n);
    const rollback = new Error('rollback');
    let report: Awaited<ReturnType<typeof audit>> | undefined;
    // Tamper inside a transaction, audit what it sees, roll everything back. The deferred zero-sum
    // trigger never fires because the transaction never commits.
    const e = await rejection(
      db.knex.transaction(async (trx) => {
        await trx.raw(`UPDATE account_balances SET balance = balance + 1 WHERE account = 'bob'`);
        await trx.raw(`UPDATE account_balances SET held = 5 WHERE account = 'bob'`);
        const [{ id }] = await trx('journal_entries').insert({ key: 'bad', kind: 't', digest: 'x' }).returning('id');
        await trx('journal_lines').insert({ entry_id: id, account: 'bob', currency: EUR, amount: '7' });
        await trx('mandates').insert({ id: 'bob/m', issuer: 'bob', grantee: 'bob/a', doc: '{}', currency: EUR, total: '100', spent: '10', reserved: '20' });
        report = await audit(trx);
        throw rollback;
      }),
    );
    expect(e).toBe(rollback);
    const text = report!.problems.join('\n');
    expect(report!.ok).toBe(false);
    expect(text).toContain('EUR: all accounts together sum to 0.000007, not zero');
    expect(text).toContain('entry bad: its EUR lines sum to 0.000007');
    expect(text).toContain('bob EUR: cached balance 1.000001 but journal lines sum to 1.000007');
    expect(text).toContain('bob EUR: cached holds 0.000005 but live holds sum to 0.00');
    expect(text).toContain('mandate bob/m: reserved 0.00002 but live holds sum to 0.00');
    expect(text).toContain("mandate bob/m: spent 0.00001 but its receipts' costs sum to 0.00");
    expect((await audit(db.knex)).problems).toEqual([]);
  });

  test('50 concurrent spends from one account never overdraw it', async ({ db }) => {
    await credit(db.knex, 'bob', 10_000_000n);
    await ensureAccount(db.knex, 'holon');
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) =>
        postEntry(db.knex, {
          key: `spend:${i}`,
          kind: 'settle',
          lines: [
            { account: 'bob', currency: EUR, amount: -300_000n },
            { account: 'holon', currency: EUR, amount: 300_000n },
          ],
        }),
      ),
    );
    const ok = results.filter((r) => r.status === 'fulfilled').length;
    const refused = results.filter((r) => r.status === 'rejected');
    expect(ok).toBe(33);
    expect(refused).toHaveLength(17);
    for (const r of refused) expect(((r as PromiseRejectedResult).reason as HolonError).code).toBe('insufficient_funds');
    expect(await readBalance(db.knex, 'bob', EUR)).toMatchObject({ balance: 100_000n });
  });

  test('property: concurrent spends and holds from one account never overdraw it', async ({ db }) => {
    await ensureAccount(db.knex, 'holon');
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.bigInt({ min: 0n, max: 5_000_000n }),
        fc.array(fc.record({ amount: fc.bigInt({ min: 1n, max: 1_000_000n }), hold: fc.boolean() }), { minLength: 1, maxLength: 50 }),
        async (start, ops) => {
          const account = `p${run++}`;
          if (start > 0n) await credit(db.knex, account, start, `signup:${account}`);
          else await ensureAccount(db.knex, account);
          const outcomes = await Promise.allSettled(
            ops.map((op, i) =>
              op.hold
                ? db.knex.transaction((trx) => placeHold(trx, { id: `${account}-h${i}`, account, currency: EUR, amount: op.amount }))
                : postEntry(db.knex, {
                    key: `${account}-s${i}`,
                    kind: 'settle',
                    lines: [
                      { account, currency: EUR, amount: -op.amount },
                      { account: 'holon', currency: EUR, amount: op.amount },
                    ],
                  }),
            ),
          );
          let spent = 0n;
          let held = 0n;
          outcomes.forEach((o, i) => {
            if (o.status === 'rejected') expect((o.reason as HolonError).code).toBe('insufficient_funds');
            else if (ops[i]!.hold) held += ops[i]!.amount;
            else spent += ops[i]!.amount;
          });
          const b = await readBalance(db.knex, account, EUR);
          expect(b.balance).toBe(start - spent);
          expect(b.held).toBe(held);
          expect(b.available).toBeGreaterThanOrEqual(0n);
          // every refusal was necessary: the smallest refused operation would not have fit at the end
          const refused = ops.filter((_, i) => outcomes[i]!.status === 'rejected').map((op) => op.amount);
          if (refused.length) expect(refused.reduce((a, c) => (c < a ? c : a))).toBeGreaterThan(b.available);
          // release the holds so the closing audit sees a settled world
          await db.knex.transaction(async (trx) => {
            for (const h of await trx('holds').where({ account, status: 'held' })) await resolveHold(trx, h.id, 'voided');
          });
        },
      ),
      { numRuns: backend === 'postgres' ? 25 : 10 },
    );
  });
});
