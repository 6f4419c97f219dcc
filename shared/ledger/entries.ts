/**
 * Posting journal entries: zero-sum, idempotent by key, balances updated under row locks.
 *
 * Same key and same lines → the original entry (created: false). Same key, different lines → an error.
 * Balance rows are locked in byte order of (account, currency) so concurrent entries never deadlock (docs/ledger.md,
 * "Lock order").
 */
import { createHash } from 'node:crypto';
import { namedStatement } from '../db/prepared.js';
import type { DbBigInt, Queryable, Tx } from '../db/connect.js';
import { toBigInt } from '../db/connect.js';
import { HolonError } from '../core/errors.js';
import { formatAmount, isCurrency } from '../core/money.js';
import { inTransaction } from '../db/transaction.js';

interface LineInput {
  account: string;
  currency: string;
  /** Micro-units: negative = debit (money leaves the account), positive = credit. */
  amount: bigint;
}

export interface EntryInput {
  /** Idempotency key: `signup:<account>`, `settle:<receipt id>`, `admin-credit:<request>`. */
  key: string;
  kind: string;
  lines: readonly LineInput[];
}

export interface PostedEntry {
  id: bigint;
  /** false when the key had already been posted with the same lines. */
  created: boolean;
}

/** Merge lines by (account, currency), drop zeros, sort: the canonical form that is digested and written. */
function normalizeLines(lines: readonly LineInput[]): LineInput[] {
  const merged = new Map<string, LineInput>();
  for (const l of lines) {
    const k = `${l.account}\u0000${l.currency}`;
    const prev = merged.get(k);
    merged.set(k, { account: l.account, currency: l.currency, amount: (prev?.amount ?? 0n) + l.amount });
  }
  return [...merged.values()].filter((l) => l.amount !== 0n).sort((a, b) => byteCompare(a.account, b.account) || byteCompare(a.currency, b.currency));
}

function byteCompare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** The kind of a call's settlement entry, `settle:<call id>`: the one kind that may have no lines. */
export const SETTLEMENT_KIND = 'settle';

/** Why these lines cannot form an entry, in plain words; empty when they can. */
function entryProblems(entry: EntryInput): string[] {
  const problems: string[] = [];
  if (typeof entry.key !== 'string' || entry.key === '' || entry.key.length > 300) problems.push('the entry needs an idempotency key of 1 to 300 characters');
  for (const l of entry.lines) {
    if (typeof l.amount !== 'bigint') problems.push(`the line for ${l.account} has no integer amount`);
    if (!isCurrency(l.currency)) problems.push(`the line for ${l.account} has no valid currency`);
  }
  if (problems.length) return problems;
  const lines = normalizeLines(entry.lines);
  // Only a settlement may move nothing: a charge paid into the payer's own account (as
  // shared/ledger/sql/journal_check_entry_balanced.sql checks at commit).
  if (lines.length === 1 || (lines.length === 0 && entry.kind !== SETTLEMENT_KIND)) problems.push('an entry needs at least two non-zero lines');
  const totals = new Map<string, bigint>();
  for (const l of lines) totals.set(l.currency, (totals.get(l.currency) ?? 0n) + l.amount);
  for (const [currency, total] of totals) {
    if (total !== 0n) problems.push(`the ${currency} lines sum to ${formatAmount(total)}, not zero`);
  }
  return problems;
}

function digest(kind: string, lines: readonly LineInput[]): string {
  const canonical = JSON.stringify([kind, lines.map((l) => [l.account, l.currency, l.amount.toString()])]);
  return createHash('sha256').update(canonical).digest('hex');
}

export async function postEntry(db: Queryable, entry: EntryInput): Promise<PostedEntry> {
  refuseProblems(entry);
  const lines = normalizeLines(entry.lines);
  return inTransaction(db, async (trx) => {
    // Lock first: an unknown account is refused in plain words before anything is written.
    const rows = await lockBalances(
      trx,
      lines.map((l) => ({ account: l.account, currency: l.currency })),
    );
    const posted = await recordEntry(trx, entry);
    if (posted.created) await applyToBalances(trx, lines, rows);
    return posted;
  });
}

function refuseProblems(entry: EntryInput): void {
  const problems = entryProblems(entry);
  if (problems.length) {
    throw new HolonError('invalid_entry', `journal entry ${entry.key}: ${problems.join('; ')}`);
  }
}

/**
 * Write the entry and its lines without touching cached balances: for a transaction that applies the
 * balance changes itself, at the end (see settle). Idempotent by key like `postEntry`.
 */
async function recordEntry(trx: Tx, entry: EntryInput): Promise<PostedEntry> {
  return (await recordEntries(trx, [entry]))[0]!;
}

/**
 * `recordEntry` for many entries at once (a settlement batch): the entries and the lines of those it created in one
 * statement, whatever their number. Each entry keeps its own key and is idempotent on its own: one whose
 * key was posted before with the same lines is answered `created: false`, with other lines an error. Answers in
 * the order of `entries`.
 */
export async function recordEntries(trx: Tx, entries: readonly EntryInput[]): Promise<PostedEntry[]> {
  if (entries.length === 0) return [];
  const prepared = entries.map((entry) => {
    refuseProblems(entry);
    const lines = normalizeLines(entry.lines);
    return { entry, lines, hash: digest(entry.kind, lines) };
  });
  // The entries, and the lines of those this statement created (a replayed key inserts none): one statement.
  const keys = new Set<string>();
  const firstOfKey = prepared.filter((p) => !keys.has(p.entry.key) && keys.add(p.entry.key));
  const lines = firstOfKey.flatMap((p) => p.lines.map((line) => ({ key: p.entry.key, line })));
  const inserted = await trx
    .raw<{ rows: Array<{ id: DbBigInt; key: string }> }>(
      `WITH e AS (
       INSERT INTO journal_entries (key, kind, digest) SELECT * FROM unnest(?::text[], ?::text[], ?::text[])
       ON CONFLICT (key) DO NOTHING RETURNING id, key
     ), l AS (
       INSERT INTO journal_lines (entry_id, account, currency, amount)
       SELECT e.id, x.account, x.currency, x.amount
         FROM unnest(?::text[], ?::text[], ?::text[], ?::bigint[]) WITH ORDINALITY AS x(key, account, currency, amount, n)
         JOIN e ON e.key = x.key ORDER BY x.n
     ) SELECT id, key FROM e`,
      [
        prepared.map((p) => p.entry.key),
        prepared.map((p) => p.entry.kind),
        prepared.map((p) => p.hash),
        lines.map((l) => l.key),
        lines.map((l) => l.line.account),
        lines.map((l) => l.line.currency),
        lines.map((l) => l.line.amount.toString()),
      ],
    )
    .options(namedStatement('entries_record'));
  const created = new Map(inserted.rows.map((r) => [r.key, toBigInt(r.id)]));
  // Keys posted before (a retried settlement): the original entry, if its lines are these.
  const replayed = prepared.filter((p) => !created.has(p.entry.key)).map((p) => p.entry.key);
  const existing = new Map<string, { id: DbBigInt; digest: string }>();
  if (replayed.length) {
    for (const row of await trx('journal_entries').whereIn('key', replayed).select('key', 'id', 'digest')) existing.set(row.key, row);
  }
  const out: PostedEntry[] = [];
  const first = new Set<string>();
  for (const p of prepared) {
    const id = created.get(p.entry.key);
    if (id !== undefined && !first.has(p.entry.key)) {
      first.add(p.entry.key);
      out.push({ id, created: true });
      continue;
    }
    const before = existing.get(p.entry.key) ?? (id !== undefined ? { id, digest: prepared.find((q) => q.entry.key === p.entry.key)!.hash } : undefined);
    if (!before) throw new HolonError('gateway_error', `journal entry ${p.entry.key} vanished while being posted`);
    if (before.digest !== p.hash) {
      throw new HolonError('idempotency_conflict', `journal entry ${p.entry.key} was already posted with different lines`);
    }
    out.push({ id: toBigInt(before.id), created: false });
  }
  return out;
}

/**
 * With the balance rows locked, refuse an overdraw in plain words, then apply the deltas in one statement. Postgres refuses an overdraw too (CHECK balance_covers_holds): the check here gives the reason.
 */
async function applyToBalances(trx: Tx, lines: readonly LineInput[], rows: Map<string, BalanceRow>): Promise<void> {
  for (const l of lines) {
    const row = rows.get(`${l.account}\u0000${l.currency}`)!;
    if (!row.overdraft && l.amount < 0n && row.balance + l.amount - row.held < 0n) {
      throw new HolonError(
        'insufficient_funds',
        `account ${l.account} has ${formatAmount(row.balance - row.held)} ${l.currency} available; ${formatAmount(-l.amount)} is needed`,
      );
    }
  }
  await applyBalanceDeltas(
    trx,
    lines.map((l) => ({ account: l.account, currency: l.currency, balance: l.amount, held: 0n })),
  );
}

/**
 * Add to cached balances and holds in one statement. The rows must already be locked by this transaction
 * (`lockBalances`), so the global lock order holds.
 */
async function applyBalanceDeltas(trx: Tx, deltas: ReadonlyArray<{ account: string; currency: string; balance: bigint; held: bigint }>): Promise<void> {
  if (deltas.length === 0) return;
  await trx.raw(
    `UPDATE account_balances b SET balance = b.balance + d.balance, held = b.held + d.held, version = b.version + 1
       FROM unnest(?::text[], ?::text[], ?::bigint[], ?::bigint[]) AS d(account, currency, balance, held)
      WHERE b.account = d.account AND b.currency = d.currency`,
    [deltas.map((d) => d.account), deltas.map((d) => d.currency), deltas.map((d) => d.balance.toString()), deltas.map((d) => d.held.toString())],
  );
}

export interface BalanceRow {
  account: string;
  currency: string;
  balance: bigint;
  held: bigint;
  overdraft: boolean;
  version: bigint;
}

/** An `account_balances` row as the drivers return it (shared/db/connect.ts). */
interface BalanceColumns {
  account: string;
  currency: string;
  balance: DbBigInt;
  held: DbBigInt;
  overdraft: boolean;
  version: DbBigInt;
}

const balanceFromRow = (row: BalanceColumns): BalanceRow => ({
  account: row.account,
  currency: row.currency,
  balance: toBigInt(row.balance),
  held: toBigInt(row.held),
  overdraft: Boolean(row.overdraft),
  version: toBigInt(row.version),
});

/**
 * Make sure a balance row exists for each (account, currency) and lock them all FOR UPDATE in byte order.
 * An unknown account is an error: money never lands in an account nobody created.
 */
export async function lockBalances(
  trx: Tx,
  keys: ReadonlyArray<{ account: string; currency: string }>,
  options: { create?: boolean } = {},
): Promise<Map<string, BalanceRow>> {
  const unique = [...new Map(keys.map((k) => [`${k.account}\u0000${k.currency}`, k])).values()];
  const accounts = unique.map((k) => k.account);
  const currencies = unique.map((k) => k.currency);
  // Create missing rows (unless the caller made sure they exist); an account that does not exist yields no row.
  if (options.create !== false)
    await trx.raw(
      `INSERT INTO account_balances (account, currency, overdraft)
     SELECT a.handle, k.currency, a.kind = 'external'
       FROM unnest(?::text[], ?::text[]) AS k(account, currency) JOIN accounts a ON a.handle = k.account
     ON CONFLICT (account, currency) DO NOTHING`,
      [accounts, currencies],
    );
  // Lock in the global order. The sort runs below the row-locking step, so rows are locked in this order.
  const r = await trx.raw<{ rows: BalanceColumns[] }>(
    `SELECT b.account, b.currency, b.balance, b.held, b.overdraft, b.version
       FROM account_balances b JOIN unnest(?::text[], ?::text[]) AS k(account, currency)
         ON b.account = k.account AND b.currency = k.currency
      ORDER BY b.account COLLATE "C", b.currency COLLATE "C"
        FOR UPDATE OF b`,
    [accounts, currencies],
  );
  const out = new Map<string, BalanceRow>();
  for (const row of r.rows) out.set(`${row.account}\u0000${row.currency}`, balanceFromRow(row));
  const missing = unique.find((k) => !out.has(`${k.account}\u0000${k.currency}`));
  if (missing) throw new HolonError('unknown_account', `there is no account ${missing.account}`);
  return out;
}
