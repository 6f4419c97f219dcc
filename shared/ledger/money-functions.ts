/**
 * The only caller of the SQL money functions of admission and settlement (`holon_admit_one`, `holon_admit_batch`,
 * `holon_settle_shared`, `holon_settle_batch`: shared/calls/sql/<name>.sql); the reservation inside a transaction,
 * `holon_reserve`, is the hold's (shared/ledger/holds.ts `reserveHold`). Each changes the hot rows every call shares —
 * the mandates' `reserved`/`spent`, the balances' `held` and `balance` — in ONE round trip, in the global lock order
 * (docs/ledger.md, "Lock order"). Named fields here; positional arguments only at the SQL boundary.
 */
import type { Db, Tx } from '../db/connect.js';
import { groupCommit } from '../db/group-commit.js';
import { namedStatement, type SqlFragment } from '../db/prepared.js';

/** What a reservation found; `revoked`: the mandate's row says it is revoked, whatever a cached document said. */
export type Reservation = 'reserved' | 'budget_short' | 'balance_short' | 'revoked';

/**
 * A new call's row, as `holon_admit_one` and `holon_admit_batch` write it: status `queued`, or `running` for a call
 * the admitting process runs at once (shared/calls/run/run-here.ts); its hold's id is the call's.
 */
export interface AdmittedCall {
  id: string;
  root_id: string;
  parent_id: string | null;
  mandate_id: string;
  caller: string;
  agent_id: string;
  agent_version: string;
  payer: string;
  currency: string;
  /** The amount reserved, as a decimal string of micro-units. */
  worst_case: string;
  max_cost: string | null;
  depth: number;
  delegated: boolean;
  timeout_ms: number;
  deadline_at: Date;
  callback_url: string | null;
  /** Absent: `queued`. */
  status?: 'running';
}

/** Admissions that arrive together, per database handle: one statement for many (`admitCall`). */
const admitters = new WeakMap<object, (call: AdmittedCall) => Promise<Reservation>>();
/** At most this many calls per statement (each is its own reservation, in arrival order). */
const ADMIT_BATCH_MAX = 64;

const admitOne = async (db: Db, call: AdmittedCall): Promise<Reservation> => {
  const res = await db
    .raw<{ rows: Array<{ outcome: Reservation }> }>(`SELECT holon_admit_one(?::jsonb) AS outcome`, [JSON.stringify(call)])
    .options(namedStatement('admit_one'));
  return res.rows[0]!.outcome;
};

const admitBatch = async (db: Db, calls: readonly AdmittedCall[]): Promise<Reservation[]> => {
  const res = await db
    .raw<{ rows: Array<{ outcome: Reservation }> }>(`SELECT t.outcome FROM unnest(holon_admit_batch(?::jsonb)) WITH ORDINALITY AS t(outcome, n) ORDER BY t.n`, [
      JSON.stringify(calls),
    ])
    .options(namedStatement('admit_batch'));
  return res.rows.map((r) => r.outcome);
};

/**
 * Admit a call again, by its id (`holon_admit_batch`, shared/calls/sql/holon_admit_batch.sql): `reserved` without reserving twice when an earlier admission of it
 * committed (its answer lost with the connection), or still in flight (its locks are waited for); otherwise admitted
 * as the first time. For a call whose first admission's outcome is unknown; never for a new call (one statement more).
 */
export async function admitAgain(db: Db, call: AdmittedCall): Promise<Reservation> {
  return (await admitBatch(db, [call]))[0]!;
}

/**
 * Admit a call: its row and its hold's reservation in ONE autocommitted statement (`holon_admit_one`,
 * shared/calls/sql/holon_admit_one.sql): the mandate's
 * budget, the payer's balance, then the row and its hold. A shortfall writes nothing and is answered as what was
 * short. Calls admitted while another admission's statement is in flight go together in the next statement
 * (`holon_admit_batch`, group commit: shared/db/group-commit.ts) — each reserved on its own, in arrival order, exactly
 * as alone; a batch that fails as a whole is admitted call by call.
 */
export function admitCall(db: Db, call: AdmittedCall): Promise<Reservation> {
  let admit = admitters.get(db);
  if (!admit) {
    admit = groupCommit<AdmittedCall, Reservation>({
      maxBatch: ADMIT_BATCH_MAX,
      batch: async (calls) => (calls.length === 1 ? [await admitOne(db, calls[0]!)] : admitBatch(db, calls)),
      // A batch that failed as a whole may have committed (its answer lost with the connection): each call again, by id.
      one: (c) => admitAgain(db, c),
    });
    admitters.set(db, admit);
  }
  return admit(call);
}

/**
 * What one settlement moves on the hot rows: the mandates' `reserved`/`spent`, a parent hold, the balances' `held`
 * and `balance` (built by the settlement's plan, shared/calls/settle/plan.ts).
 */
export interface SettlementMoves {
  /** Mandates root first; each releases `release` from `reserved` and adds `spent` to `spent`. */
  mandates: ReadonlyArray<{ id: string; release: bigint }>;
  spent: bigint;
  /** A passthrough child's parent hold gets back what the child did not use, if it is still held. */
  parentHold: { id: string; back: bigint } | null;
  /**
   * The budget lease the call's hold was carved from, when the hold ended now (docs/ledger.md, "Budget leases"):
   * `charged` goes to `spent`; while the lease is open, the rest of the hold stays reserved under it (the SQL
   * function takes it back into the mandate's `reserved` and the balance's `held`).
   */
  lease?: { id: string; charged: bigint };
  /** The call's own hold, ended by this settlement: its amount leaves the account's `held`. Null when it had ended before. */
  hold: { account: string; currency: string; amount: bigint } | null;
  /** The journal entry's lines, applied to the cached balances. */
  lines: ReadonlyArray<{ account: string; currency: string; amount: bigint }>;
}

/** A call of a SQL money function as a select-list item (`holon_…(?, …) AS name`), for a statement to embed. */
export type MoneyCall = SqlFragment;

/**
 * `holon_settle_shared` (shared/calls/sql/holon_settle_shared.sql) for one settlement's moves, answering `back`: what
 * went back into the parent hold.
 */
export function oneSettlementMoneyCall(s: SettlementMoves): MoneyCall {
  return {
    sql: `holon_settle_shared(?::text[], ?::bigint[], ?::bigint, ?::text, ?::bigint, ?::text, ?::text, ?::bigint, ?::text[], ?::text[], ?::bigint[], ?::text, ?::bigint) AS back`,
    bindings: [
      s.mandates.map((m) => m.id),
      s.mandates.map((m) => m.release.toString()),
      s.spent.toString(),
      s.parentHold?.id ?? null,
      (s.parentHold?.back ?? 0n).toString(),
      s.hold?.account ?? null,
      s.hold?.currency ?? null,
      (s.hold?.amount ?? 0n).toString(),
      s.lines.map((l) => l.account),
      s.lines.map((l) => l.currency),
      s.lines.map((l) => l.amount.toString()),
      s.lease?.id ?? null,
      (s.lease?.charged ?? 0n).toString(),
    ],
  };
}

/** Apply one settlement's moves in a statement of their own; returns what went back into the parent hold. */
export async function applySettlementMoves(trx: Tx, s: SettlementMoves): Promise<bigint> {
  const call = oneSettlementMoneyCall(s);
  const res = await trx.raw<{ rows: Array<{ back: string | number }> }>(`SELECT ${call.sql}`, [...call.bindings]);
  return BigInt(res.rows[0]?.back ?? 0);
}

/**
 * `holon_settle_batch` (shared/calls/sql/holon_settle_batch.sql) for the moves of a batch of top-level settlements:
 * every mandate once with its sums, every balance row once with the sum of the lines and held deltas touching it;
 * null when the batch moves nothing. A settlement with a parent hold has no place in a batch (its order is its own):
 * this refuses it rather than mis-apply it.
 */
export function batchSettlementMoneyCall(settlements: readonly SettlementMoves[]): MoneyCall | null {
  const mandates: string[] = [];
  const release: string[] = [];
  const spent: string[] = [];
  const accounts: string[] = [];
  const currencies: string[] = [];
  const balance: string[] = [];
  const held: string[] = [];
  const leases = { ids: [] as string[], holds: [] as string[], charged: [] as string[] };
  for (const s of settlements) {
    if (s.parentHold) throw new Error('a settlement with a parent hold cannot be batched');
    for (const m of s.mandates) {
      mandates.push(m.id);
      release.push(m.release.toString());
      spent.push(s.spent.toString());
    }
    for (const l of s.lines) {
      accounts.push(l.account);
      currencies.push(l.currency);
      balance.push(l.amount.toString());
      held.push('0');
    }
    if (s.hold) {
      accounts.push(s.hold.account);
      currencies.push(s.hold.currency);
      balance.push('0');
      held.push((-s.hold.amount).toString());
      if (s.lease) {
        leases.ids.push(s.lease.id);
        leases.holds.push(s.hold.amount.toString());
        leases.charged.push(s.lease.charged.toString());
      }
    }
  }
  if (mandates.length === 0 && accounts.length === 0) return null;
  return {
    sql: `holon_settle_batch(?::text[], ?::bigint[], ?::bigint[], ?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::text[], ?::bigint[], ?::bigint[]) AS batch`,
    bindings: [mandates, release, spent, accounts, currencies, balance, held, leases.ids, leases.holds, leases.charged],
  };
}
