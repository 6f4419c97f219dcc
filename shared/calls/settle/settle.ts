/**
 * The settler's job (gateway.md §1 step 7, DESIGN.md §1): ONE transaction writes the journal entry
 * `settle:<receipt id>`, the receipt, the resolved hold, the mandate's `spent`/`reserved`, the `call_events`
 * row, the call's final status and, for a call with a `callback_url`, its webhook delivery's first row (the outbox:
 * the settler's dispatcher finds it even when the process died right after the commit; shared/webhooks/deliveries.ts).
 * A second delivery finds the call no longer `settling` and does nothing.
 */
import { ensureAccountCached, PLATFORM_ACCOUNT } from '../../ledger/accounts.js';
import { type PostedEntry, recordEntries, SETTLEMENT_KIND } from '../../ledger/entries.js';
import { ensureBalanceRow, type ResolvedHold, resolveHolds } from '../../ledger/holds.js';
import { settleBatchSharedCall, settleSharedCall, type MoneyCall, type SharedSettlement } from '../../ledger/money-functions.js';
import type { Manifest } from '../../core/manifest/types.js';
import { journalLinesForSettlement, split, type ChainLink } from '../../core/splits.js';
import type { Registry } from '../../registry/registry.js';
import { insertedReceiptView, receiptRow, type ReceiptValues, type ReceiptView } from '../../receipts/store.js';
import { signAndLog } from '../../receipts/log.js';
import type { SigningKey } from '../../signing/keys.js';
import type { ServiceContext } from '../../context.js';
import { CALLBACK_QUEUE, CALLS_DONE_CHANNEL, callsDoneNotice, type CallJob } from '../wire.js';
import { enqueueSettle } from '../transitions.js';
import { type DbBigInt, fromJsonb, toBigInt, type Tx } from '../../db/connect.js';
import type { CallOutcome } from '../call-outcome.js';
import { runErrorLabel } from '../../platform/metrics.js';
import { insertDeliveries, newDelivery, type NewDelivery } from '../../webhooks/deliveries.js';

/** The author and the upstream authors of forks, each with the royalty it pays upstream. */
function royaltyChain(manifest: Manifest, registry: Registry): ChainLink[] {
  const chain: ChainLink[] = [];
  let current: Manifest | undefined = manifest;
  const seen = new Set<string>();
  while (current && chain.length < 9 && !seen.has(current.id)) {
    seen.add(current.id);
    const upstream: Manifest | undefined = current.lineage
      ? registry.get(current.lineage.forkedFrom.id, current.lineage.forkedFrom.version)?.manifest
      : undefined;
    // A fork whose upstream is no longer listed keeps everything: its royalty has nobody to go to.
    chain.push(upstream && current.lineage ? { account: current.namespace, royalty: current.lineage.royalty } : { account: current.namespace });
    current = upstream;
  }
  return chain;
}

/** The mandates of a hold and of every hold above it, root first. */
async function ancestorMandates(trx: Tx, holdId: string): Promise<string[]> {
  const r = await trx.raw<{ rows: Array<{ mandate_id: string; level: number }> }>(
    `WITH RECURSIVE up AS (
       SELECT id, parent_hold_id, mandate_id, 0 AS level FROM holds WHERE id = ?
       UNION ALL
       SELECT h.id, h.parent_hold_id, h.mandate_id, up.level + 1 FROM holds h JOIN up ON h.id = up.parent_hold_id
     ) SELECT mandate_id, level FROM up WHERE mandate_id IS NOT NULL ORDER BY level DESC`,
    [holdId],
  );
  return r.rows.map((row) => row.mandate_id);
}

/** Children of a call that have not settled yet: a run is not settled until all its children have. */
async function openChildren(db: ServiceContext['db'], callId: string): Promise<number> {
  const r = await db('calls').where({ parent_id: callId }).whereNotIn('status', ['succeeded', 'failed']).count({ n: '*' }).first();
  return Number(r?.n ?? 0);
}

/** What a call's settlement needs before its transaction: its royalty chain, with every account's rows created. */
async function prepare(ctx: ServiceContext, pre: { agent_id: string; agent_version: string; currency: string }) {
  const agent = ctx.registry.get(pre.agent_id, pre.agent_version);
  const chain = agent ? royaltyChain(agent.manifest, ctx.registry) : [{ account: String(pre.agent_id).split('/')[0]! }];
  // Accounts and balance rows exist before the transaction, which then only takes row locks in the lock order
  // (docs/ledger.md, "Lock order").
  for (const link of chain) {
    await ensureAccountCached(ctx.db, link.account);
    await ensureBalanceRow(ctx.db, link.account, String(pre.currency));
  }
  await ensureAccountCached(ctx.db, PLATFORM_ACCOUNT);
  await ensureBalanceRow(ctx.db, PLATFORM_ACCOUNT, String(pre.currency));
  return { agent, chain };
}

interface Settled {
  /** The receipt as written, for the `calls-done` notice; null for a call run under a sub-mandate (it may have children). */
  receipt: ReceiptView | null;
  callbackUrl: string | null;
  parentId: string | null;
  /** What the metrics count once the transaction has committed (shared/platform/metrics.ts). */
  counted: { status: 'succeeded' | 'failed'; errorCode: string; agent: string; handedOffAt: unknown };
}

interface Written {
  shared: SharedSettlement;
  /** What follows the commit; its receipt is filled in once the transaction's time is known (`writeOwnRows`). */
  settled: Settled;
  /** The receipt's values, for `settled.receipt`; null when the call may have children. */
  receipt: ReceiptValues | null;
}

/** A call's row as settlement reads it, locked (`SELECT * FROM calls … FOR UPDATE`; connect.ts: how the drivers return each column). */
interface SettlingCallRow {
  id: string;
  status: string;
  mandate_id: string;
  sub_mandate_id: string | null;
  parent_id: string | null;
  caller: string;
  agent_id: string;
  agent_version: string;
  payer: string;
  currency: string;
  worst_case: DbBigInt;
  approval_id: string | null;
  delegated: boolean;
  callback_url: string | null;
  settle_enqueued_at: Date | null;
  outcome: unknown;
}

interface SettlingCall {
  id: string;
  status: string;
  mandateId: string;
  subMandateId: string | null;
  parentId: string | null;
  caller: string;
  agentId: string;
  agentVersion: string;
  payer: string;
  currency: string;
  worstCase: bigint;
  approvalId: string | null;
  delegated: boolean;
  callbackUrl: string | null;
  settleEnqueuedAt: Date | null;
  /** Written by `closeCall`: null only while the call is not yet `settling`. */
  outcome: CallOutcome | null;
}

function settlingCallFromRow(row: SettlingCallRow): SettlingCall {
  return {
    id: String(row.id),
    status: row.status,
    mandateId: String(row.mandate_id),
    subMandateId: row.sub_mandate_id ?? null,
    parentId: row.parent_id ?? null,
    caller: String(row.caller),
    agentId: String(row.agent_id),
    agentVersion: String(row.agent_version),
    payer: String(row.payer),
    currency: String(row.currency),
    worstCase: toBigInt(row.worst_case),
    approvalId: row.approval_id ?? null,
    delegated: Boolean(row.delegated),
    callbackUrl: row.callback_url ?? null,
    settleEnqueuedAt: row.settle_enqueued_at ?? null,
    outcome: (fromJsonb(row.outcome) as CallOutcome | null) ?? null,
  };
}

/**
 * The locked rows of these calls, in the given order of the query (`SELECT *, now() AS tx_now FROM calls …`), and
 * the transaction's time: every receipt it writes has it as its `created_at` (the column's default, `now()`), so the
 * receipts are signed before they are written.
 */
async function lockCalls(trx: Tx, sql: string, bindings: Array<string | string[]>): Promise<{ calls: SettlingCall[]; at: Date }> {
  const r = await trx.raw<{ rows: Array<SettlingCallRow & { tx_now: Date | string }> }>(sql, bindings);
  const at = r.rows[0] ? new Date(r.rows[0].tx_now) : new Date();
  return { calls: r.rows.map(settlingCallFromRow), at };
}

/** A `call_events` row: what the Agent Record counts (shared/catalogue/agent-record.ts). */
interface CallEventRow {
  call_id: string;
  agent_id: string;
  agent_version: string;
  status: 'succeeded' | 'failed';
  error_code: string | null;
  latency_ms: number;
  cost: string;
  currency: string;
  delegated: boolean;
}

/** A locked `settling` call with no open children: its outcome, what it charges, its royalty chain's journal lines. */
interface LiveCall {
  call: SettlingCall;
  callId: string;
  outcome: CallOutcome;
  own: bigint;
  prepared: Awaited<ReturnType<typeof prepare>>;
  currency: string;
  lines: ReturnType<typeof journalLinesForSettlement>;
}

/** What a call's rows depend on besides itself: its resolved hold, its journal entry, the mandates above its hold. */
interface CallFacts {
  hold: ResolvedHold;
  entry: PostedEntry | null;
  ancestors: string[];
  downstream: bigint;
}

/**
 * The calls' own rows — receipts, call events, final statuses, the first rows of their webhook deliveries — and each
 * call's shared rows; written by `writeOwnRows`.
 */
interface OwnRowsPlan {
  /** Each call's shared rows and what follows its commit; `deferred` for a call whose children are still open. */
  written: Map<string, Written | 'deferred'>;
  receipts: Array<ReturnType<typeof receiptRow>>;
  events: CallEventRow[];
  finals: Array<{ id: string; status: 'succeeded' | 'failed' }>;
  /** The deliveries of the calls that name a `callback_url`, opened in the settlement's transaction. */
  deliveries: NewDelivery[];
}

/** The calls that settle now (the others are `deferred`: children still open), with what each charges. */
async function liveCalls(
  trx: Tx,
  calls: readonly SettlingCall[],
  preparedOf: (callId: string) => Awaited<ReturnType<typeof prepare>>,
): Promise<{ live: LiveCall[]; deferred: string[] }> {
  const live: LiveCall[] = [];
  const deferred: string[] = [];
  for (const call of calls) {
    const callId = call.id;
    if (call.subMandateId && (await openChildren(trx, callId)) > 0) {
      deferred.push(callId);
      continue;
    }
    const outcome = call.outcome as CallOutcome;
    const own = outcome.billed ? BigInt(outcome.own) : 0n;
    const prepared = preparedOf(callId);
    live.push({
      call,
      callId,
      outcome,
      own,
      prepared,
      currency: call.currency,
      lines: journalLinesForSettlement(call.payer, own, prepared.chain),
    });
  }
  return { live, deferred };
}

/** The rows of one call, from its facts (no I/O): its receipt, its call event, its shared rows and what follows. */
function rowsOfCall(c: LiveCall, f: CallFacts): { receipt: ReturnType<typeof receiptRow>; event: CallEventRow; written: Written } {
  const { call, callId, outcome, own, prepared, currency, lines } = c;
  const { hold, entry } = f;
  const { mandateId } = call;
  const parentHold = hold.changed ? hold.parentHoldId : null;
  const succeeded = outcome.kind === 'success';
  const status = succeeded ? ('succeeded' as const) : ('failed' as const);
  const receipt = receiptRow({
    id: callId,
    parentId: call.parentId,
    mandateId,
    subMandateId: call.subMandateId,
    caller: call.caller,
    agent: `${call.agentId}@${call.agentVersion}`,
    status,
    errorCode: outcome.code ?? null,
    reasons: [],
    worstCase: call.worstCase,
    currency,
    payer: call.payer,
    billed: own > 0n,
    costOwn: own,
    costDownstream: f.downstream,
    splits: own > 0n ? split(own, prepared.chain) : [],
    approvalId: call.approvalId,
    durationMs: outcome.duration_ms,
    entryId: entry?.id ?? null,
  });
  const event: CallEventRow = {
    call_id: callId,
    agent_id: call.agentId,
    agent_version: call.agentVersion,
    status,
    error_code: outcome.code ?? null,
    latency_ms: Math.max(0, Math.round(outcome.duration_ms)),
    cost: own.toString(),
    currency,
    delegated: call.delegated,
  };
  // The rows every call shares, for the caller to change last: mandates root first (shallower before deeper, this
  // call's own mandate last), the parent hold, the balance rows. Ancestors release what was charged; the own mandate
  // releases the whole hold.
  const lineAccounts = entry?.created ? lines : [];
  const written: Written = {
    shared: {
      mandates: [...f.ancestors.map((id) => ({ id, release: own })), { id: mandateId, release: hold.changed ? hold.amount : 0n }],
      spent: own,
      parentHold: parentHold ? { id: parentHold, back: hold.amount > own ? hold.amount - own : 0n } : null,
      hold: hold.changed ? { account: hold.account, currency: hold.currency, amount: hold.amount } : null,
      lines: lineAccounts.map((l) => ({ account: l.account, currency, amount: l.amount })),
    },
    receipt: call.subMandateId ? null : receipt,
    settled: {
      receipt: null,
      callbackUrl: call.callbackUrl,
      parentId: call.parentId,
      counted: { status, errorCode: runErrorLabel(outcome.code), agent: call.agentId, handedOffAt: call.settleEnqueuedAt },
    },
  };
  return { receipt, event, written };
}

/** Passthrough children: what the child did not use goes back into its parent's hold, charged up the whole tree. */
async function factsOf(trx: Tx, c: LiveCall, hold: CallFacts['hold'], entry: CallFacts['entry']): Promise<CallFacts> {
  const parentHold = hold.changed ? hold.parentHoldId : null;
  const ancestors = parentHold ? await ancestorMandates(trx, parentHold) : [];
  const downstream =
    c.call.subMandateId && c.prepared.agent?.manifest.downstream?.mode === 'passthrough'
      ? BigInt(String((await trx('receipts').where({ parent_id: c.callId }).sum({ s: 'cost_total' }).first())?.s ?? 0))
      : 0n;
  return { hold, entry, ancestors, downstream };
}

/**
 * Locked `settling` calls' own rows, in the lock order's first step: their holds resolved and their journal entries
 * recorded (each kind in one statement for all the calls: one call for `settleCall`, a batch for `settleBatch`),
 * then the plan of the rest — receipts, call events, final statuses, and each call's shared rows (mandates, parent
 * hold, balances) for the caller to sum. A call with children still open is `deferred`.
 */
async function planOwnRows(trx: Tx, calls: readonly SettlingCall[], preparedOf: (callId: string) => Awaited<ReturnType<typeof prepare>>): Promise<OwnRowsPlan> {
  const { live, deferred } = await liveCalls(trx, calls, preparedOf);
  const plan: OwnRowsPlan = { written: new Map(deferred.map((id) => [id, 'deferred'])), receipts: [], events: [], finals: [], deliveries: [] };
  if (live.length === 0) return plan;
  const holds = await resolveHolds(
    trx,
    live.map((c) => ({ id: c.callId, outcome: c.own > 0n ? 'settled' : 'released' })),
  );
  const billed = live.filter((c) => c.own > 0n);
  const posted = await recordEntries(
    trx,
    billed.map((c) => ({ key: `settle:${c.callId}`, kind: SETTLEMENT_KIND, lines: c.lines.map((l) => ({ ...l, currency: c.currency })) })),
  );
  const entries = new Map(billed.map((c, i) => [c.callId, posted[i]!]));
  for (const c of live) {
    const rows = rowsOfCall(c, await factsOf(trx, c, holds.get(c.callId)!, entries.get(c.callId) ?? null));
    plan.receipts.push(rows.receipt);
    plan.events.push(rows.event);
    plan.finals.push({ id: c.callId, status: c.outcome.kind === 'success' ? 'succeeded' : 'failed' });
    if (c.call.callbackUrl) plan.deliveries.push(newDelivery(c.callId, c.call.payer));
    plan.written.set(c.callId, rows.written);
  }
  return plan;
}

/**
 * Write a plan: the receipts (signed: their time `at` is the transaction's), the call events, the calls' final
 * statuses and their deliveries' first rows (the calls' own rows; a delivery is a new row, not a money row,
 * referencing the call already locked), then the shared rows (`shared`, the money function built from the plan's
 * `written`: last, in the lock order) — one statement; the parts touch disjoint tables. Then the receipts join the
 * log (shared/receipts/log.ts), the transaction's last lock.
 */
async function writeOwnRows(trx: Tx, plan: OwnRowsPlan, { shared, at, key }: { shared: MoneyCall | null; at: Date; key: SigningKey }): Promise<void> {
  if (plan.finals.length === 0) {
    if (shared) await trx.raw(`SELECT ${shared.sql}`, [...shared.bindings]);
    return;
  }
  const views = plan.receipts.map((values) => insertedReceiptView(values, at));
  const signed = await signAndLog(trx, key, views, async (signatures) => {
    plan.receipts.forEach((values, i) => {
      values.signature = signatures[i]!;
    });
    await writeSignedRows(trx, plan, shared);
  });
  const byId = new Map(signed.map((r) => [r.id, r]));
  for (const w of plan.written.values()) {
    if (w !== 'deferred' && w.receipt) w.settled.receipt = byId.get(w.receipt.id) ?? null;
  }
}

/** The statement of `writeOwnRows`, its receipts signed. */
async function writeSignedRows(trx: Tx, plan: OwnRowsPlan, shared: MoneyCall | null): Promise<void> {
  const statuses = trx('calls')
    .whereIn(
      'id',
      plan.finals.map((f) => f.id),
    )
    .update({
      status: trx.raw(
        `CASE id ${plan.finals.map(() => 'WHEN ? THEN ?').join(' ')} END`,
        plan.finals.flatMap((f) => [f.id, f.status]),
      ),
    });
  const own = trx.with('receipt', trx('receipts').insert(plan.receipts)).with('event', trx('call_events').insert(plan.events)).with('final', statuses);
  const q = plan.deliveries.length > 0 ? own.with('delivery', insertDeliveries(trx, plan.deliveries)) : own;
  await (shared ? q.select(trx.raw(shared.sql, [...shared.bindings])) : q.select(trx.raw('1')));
}

/**
 * After the commit: the metrics, the parent's turn (its last child settled), the waiters, and the callback job — only
 * a wake-up for the dispatcher: the delivery's row is already written, and the settler's delivery sweep finds it
 * without the job (a process that dies here loses nothing).
 */
async function afterSettled(ctx: ServiceContext, callId: string, done: Settled): Promise<void> {
  if (ctx.metrics) {
    const { status, errorCode, agent, handedOffAt } = done.counted;
    ctx.metrics.calls.inc({ status, error_code: errorCode, agent });
    if (handedOffAt instanceof Date) ctx.metrics.settleLagSeconds.observe(Math.max(0, ctx.now() - handedOffAt.getTime()) / 1000);
  }
  if (done.parentId) {
    const parent = await ctx.db('calls').where({ id: done.parentId }).first('status');
    if (parent?.status === 'settling' && (await openChildren(ctx.db, done.parentId)) === 0) await enqueueSettle(ctx, done.parentId, ctx.now());
  }
  await ctx.messaging.notifier.publish(CALLS_DONE_CHANNEL, callsDoneNotice(callId, done.receipt ?? undefined));
  if (done.callbackUrl) {
    await ctx.messaging.queues.queue<CallJob>(CALLBACK_QUEUE).add({ callId }, { jobId: `callback-${callId}`, attempts: 8, backoffMs: 1000 });
  }
}

const PRE_COLUMNS = ['id', 'status', 'agent_id', 'agent_version', 'payer', 'currency', 'sub_mandate_id', 'parent_id'] as const;

export async function settleCall(ctx: ServiceContext, callId: string): Promise<'settled' | 'noop' | 'deferred'> {
  const pre = await ctx
    .db('calls')
    .where({ id: callId })
    .first(...PRE_COLUMNS);
  if (pre?.status !== 'settling') return 'noop';
  // The last child to settle hands its parent to the settler again.
  if (pre.sub_mandate_id && (await openChildren(ctx.db, callId)) > 0) return 'deferred';
  const prepared = await prepare(ctx, pre);
  const done = await ctx.db.transaction(async (trx) => {
    const {
      calls: [call],
      at,
    } = await lockCalls(trx, `SELECT *, now() AS tx_now FROM calls WHERE id = ? FOR UPDATE`, [callId]);
    if (call?.status !== 'settling') return null;
    const plan = await planOwnRows(trx, [call], () => prepared);
    const written = plan.written.get(callId)!;
    if (written === 'deferred') return 'deferred' as const;
    // ... then the rows every call shares, last, in the lock order (migration 007), in the receipts' statement.
    await writeOwnRows(trx, plan, { shared: settleSharedCall(written.shared), at, key: ctx.signingKey });
    return written.settled;
  });
  if (!done) return 'noop';
  if (done === 'deferred') return 'deferred';
  await afterSettled(ctx, callId, done);
  return 'settled';
}

/**
 * Group commit (docs/PERFORMANCE.md): many top-level calls settled in ONE transaction. Each call's own
 * rows are written exactly as `settleCall` writes them (its entry keeps its own idempotency key, its receipt is in
 * the same transaction as its entry); the shared rows — the calls' root mandates, the balance rows, the platform's
 * among them — are changed once for the whole batch with the sums (migration 014), last, in the lock order.
 * Only calls without a parent and without children take this path: a delegation tree's settlements move a parent
 * hold and its ancestors' mandates in an order of their own, so they are answered `single` and the caller settles
 * them one by one with `settleCall`. A batch that fails as a whole changes nothing; the caller then settles its calls
 * one by one (each finds its own way, as after a restart).
 */
export async function settleBatch(ctx: ServiceContext, callIds: readonly string[]): Promise<Map<string, 'settled' | 'noop' | 'single'>> {
  const out = new Map<string, 'settled' | 'noop' | 'single'>();
  const pres = (await ctx
    .db('calls')
    .whereIn('id', [...new Set(callIds)])
    .select(...PRE_COLUMNS)) as Array<Record<(typeof PRE_COLUMNS)[number], string | null>>;
  const byId = new Map(pres.map((p) => [String(p.id), p]));
  const batch: string[] = [];
  const prepared = new Map<string, Awaited<ReturnType<typeof prepare>>>();
  for (const id of callIds) {
    if (out.has(id) || batch.includes(id)) continue;
    const pre = byId.get(id);
    if (pre?.status !== 'settling') out.set(id, 'noop');
    else if (pre.sub_mandate_id || pre.parent_id) out.set(id, 'single');
    else {
      batch.push(id);
      prepared.set(id, await prepare(ctx, pre as { agent_id: string; agent_version: string; currency: string }));
    }
  }
  if (batch.length === 0) return out;
  // Own rows first, in the order of the call ids (no other transaction locks two calls' rows).
  batch.sort();
  const settled = await ctx.db.transaction(async (trx) => {
    const { calls: locked, at } = await lockCalls(trx, `SELECT *, now() AS tx_now FROM calls WHERE id = ANY(?) ORDER BY id COLLATE "C" FOR UPDATE`, [batch]);
    const plain = locked.filter((call) => call.status === 'settling' && !call.subMandateId && !call.parentId);
    const plan = await planOwnRows(trx, plain, (id) => prepared.get(id)!);
    const shared: SharedSettlement[] = [];
    const done = new Map<string, Settled>();
    for (const [id, w] of plan.written) {
      if (w === 'deferred') continue; // unreachable: a call without a sub-mandate has no children
      shared.push(w.shared);
      done.set(id, w.settled);
    }
    await writeOwnRows(trx, plan, { shared: settleBatchSharedCall(shared), at, key: ctx.signingKey });
    return done;
  });
  for (const id of batch) {
    const done = settled.get(id);
    out.set(id, done ? 'settled' : 'noop');
    if (done) await afterSettled(ctx, id, done);
  }
  return out;
}
