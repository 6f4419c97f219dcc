/**
 * Moderation (gateway.md §7 Moderation), for the operator's admin key:
 *   - disable an account: in one transaction its keys are revoked, its email blocked from signing up again, and
 *     (when asked) its published versions yanked; one moderation_log row says what was done and why;
 *   - yank one published version (never an agent shipped with the gateway: those change with the code);
 *   - list accounts, read the log.
 * Every action carries a reason and is logged, append-only (Postgres refuses UPDATE and DELETE on the log).
 * Yanks are announced after commit on the `agents-yanked` channel, so every API process stops listing them
 * (shared/publishing/yanks.ts).
 */
import type { Db, DbBigInt, Queryable } from '../db/connect.js';
import { fromJsonb, toBigInt } from '../db/connect.js';
import { HolonError } from '../core/errors.js';
import type { ServiceContext } from '../context.js';
import { formatAmount } from '../core/money.js';
import { revokeAccountKeys } from '../accounts/keys.js';
import { deleteDocument } from '../catalogue/search-documents.js';
import { publishYanks, yankMessage } from './yanks.js';

export const MAX_REASON_LENGTH = 1000;

type ModerationContext = Pick<ServiceContext, 'db' | 'registry' | 'messaging' | 'log'>;

/** A reason is required: non-empty (not only spaces), at most 1000 characters, no NUL. */
export function checkReason(reason: unknown): string {
  const problem =
    typeof reason !== 'string'
      ? 'is required: say why'
      : reason.trim() === ''
        ? 'must not be empty'
        : reason.length > MAX_REASON_LENGTH
          ? `must be at most ${MAX_REASON_LENGTH} characters`
          : reason.includes('\u0000')
            ? 'contains a NUL character'
            : null;
  if (problem) throw new HolonError('invalid_request', `the reason ${problem}`, [{ path: '$.reason', message: problem }]);
  return reason as string;
}

/** What a log entry says was done (GET /v0/admin/log `detail`): who did it, and a disabling's consequences. */
type ModerationDetail = { by: string } | { keys_revoked: number; email_blocked: boolean; yanked: string[] };

async function appendLog(db: Queryable, entry: { action: string; target: string; reason: string; detail: ModerationDetail }): Promise<string> {
  const r = await db.raw<{ rows: Array<{ id: DbBigInt }> }>(
    `INSERT INTO moderation_log (action, target, reason, detail) VALUES (?, ?, ?, ?::jsonb) RETURNING id`,
    [entry.action, entry.target, entry.reason, JSON.stringify(entry.detail)],
  );
  return String(r.rows[0]!.id);
}

/** Record a yank, and drop the version's search document with it; false when the version was yanked already. */
async function insertYank(db: Queryable, yank: { id: string; version: string; reason: string; by: string }): Promise<boolean> {
  const { id, version, reason, by } = yank;
  const r = await db.raw<{ rows: unknown[] }>(
    `INSERT INTO yanked_versions (agent_id, version, reason, yanked_by) VALUES (?, ?, ?, ?)
     ON CONFLICT (agent_id, version) DO NOTHING RETURNING agent_id`,
    [id, version, reason, by],
  );
  if (r.rows.length === 0) return false;
  await deleteDocument(db, id, version);
  return true;
}

/** Hide committed yanks here at once, and tell every other process. */
async function announce(ctx: ModerationContext, yanks: ReadonlyArray<{ id: string; version: string }>): Promise<boolean> {
  for (const y of yanks) ctx.registry.hide(y.id, y.version);
  return publishYanks(ctx, yanks);
}

const iso = (v: Date | null): string | null => (v === null || v === undefined ? null : new Date(v).toISOString());

// ------------------------------------------------------------------ disabling an account

export interface DisableOptions {
  reason: string;
  /** Also yank every published version in the account's namespace (`<handle>/…`). */
  yankAgents?: boolean;
  /** Who did it, for yanked_versions.yanked_by (default 'admin'). */
  by?: string;
}

export interface Disabled {
  account: { handle: string; email: string | null; state: 'disabled'; disabled_at: string; disabled_reason: string };
  keys_revoked: number;
  email_blocked: boolean;
  /** `id@version` of each version this yanked (those yanked before are not repeated). */
  yanked: string[];
  log_id: string;
  /** False when the yanks could not be announced to other processes (they hide them at their next start-up). */
  announced: boolean;
}

export async function disableAccount(ctx: ModerationContext, handle: string, options: DisableOptions): Promise<Disabled> {
  const reason = checkReason(options.reason);
  const by = options.by ?? 'admin';
  // Published versions this process lists in the namespace; yanked ones are hidden here already, and the insert
  // below skips any another process yanked that this one has not heard of yet.
  const candidates = options.yankAgents ? ctx.registry.list().filter((a) => a.origin === 'published' && a.manifest.id.startsWith(`${handle}/`)) : [];

  const done = await ctx.db.transaction(async (trx) => {
    const account = (await trx('accounts').where({ handle }).forUpdate().first('handle', 'kind', 'email', 'disabled_at')) as
      | { handle: string; kind: string; email: string | null; disabled_at: Date | null }
      | undefined;
    if (!account) throw new HolonError('not_found', `there is no account ${handle.slice(0, 100)}`);
    if (account.kind !== 'user') throw new HolonError('not_a_user_account', `${handle} is a ${account.kind} account: only user accounts can be disabled`);
    if (account.disabled_at) throw new HolonError('already_disabled', `the account ${handle} was disabled on ${iso(account.disabled_at)}`);

    const [row] = (await trx('accounts').where({ handle }).update({ disabled_at: trx.fn.now(), disabled_reason: reason }).returning(['disabled_at'])) as Array<{
      disabled_at: Date;
    }>;
    const keysRevoked = await revokeAccountKeys(trx, handle);
    let emailBlocked = false;
    if (account.email) {
      await trx.raw(`INSERT INTO blocked_emails (email, reason) VALUES (?, ?) ON CONFLICT (email) DO NOTHING`, [account.email, reason]);
      emailBlocked = true;
    }
    const yanked: Array<{ id: string; version: string }> = [];
    for (const a of candidates) {
      if (await insertYank(trx, { id: a.manifest.id, version: a.manifest.version, reason, by }))
        yanked.push({ id: a.manifest.id, version: a.manifest.version });
    }
    const logId = await appendLog(trx, {
      action: 'disable_account',
      target: handle,
      reason,
      detail: { keys_revoked: keysRevoked, email_blocked: emailBlocked, yanked: yanked.map((y) => yankMessage(y.id, y.version)) },
    });
    return { account, disabledAt: iso(row!.disabled_at)!, keysRevoked, emailBlocked, yanked, logId };
  });

  const announced = await announce(ctx, done.yanked);
  ctx.log.info({ account: handle, keys_revoked: done.keysRevoked, yanked: done.yanked.length }, 'account disabled');
  return {
    account: { handle, email: done.account.email, state: 'disabled', disabled_at: done.disabledAt, disabled_reason: reason },
    keys_revoked: done.keysRevoked,
    email_blocked: done.emailBlocked,
    yanked: done.yanked.map((y) => yankMessage(y.id, y.version)),
    log_id: done.logId,
    announced,
  };
}

// ------------------------------------------------------------------ yanking one version

export interface Yanked {
  agent: string;
  version: string;
  reason: string;
  yanked_by: string;
  yanked_at: string;
  log_id: string;
  announced: boolean;
}

export async function yankVersion(ctx: ModerationContext, agentId: string, version: string, options: { reason: string; by?: string }): Promise<Yanked> {
  const reason = checkReason(options.reason);
  const by = options.by ?? 'admin';
  const ref = `${agentId.slice(0, 200)}@${version.slice(0, 100)}`;
  // get() still finds a hidden (yanked) version, so a second yank is a 409 below, not a 404.
  const agent = ctx.registry.get(agentId, version);
  if (!agent) throw new HolonError('not_found', `no version ${ref} is listed`);
  if (agent.origin === 'shipped') {
    throw new HolonError('shipped_agent', 'agents shipped with the gateway are not moderated this way: they change with the code');
  }
  const done = await ctx.db.transaction(async (trx) => {
    if (!(await insertYank(trx, { id: agentId, version, reason, by }))) throw new HolonError('already_yanked', `${ref} is yanked already`);
    const logId = await appendLog(trx, { action: 'yank_version', target: yankMessage(agentId, version), reason, detail: { by } });
    const row = (await trx('yanked_versions').where({ agent_id: agentId, version }).first('created_at')) as { created_at: Date };
    return { logId, at: iso(row.created_at)! };
  });
  const announced = await announce(ctx, [{ id: agentId, version }]);
  ctx.log.info({ agent: agentId, version }, 'version yanked');
  return { agent: agentId, version, reason, yanked_by: by, yanked_at: done.at, log_id: done.logId, announced };
}

// ------------------------------------------------------------------ reading

/** `%`, `_` and the escape character itself match literally. */
export function escapeLike(q: string): string {
  return q.replace(/[!%_]/g, (c) => `!${c}`);
}

export interface AccountListing {
  handle: string;
  email: string | null;
  created_at: string;
  state: 'active' | 'disabled';
  disabled_at: string | null;
  disabled_reason: string | null;
  /** Keys neither revoked nor expired. */
  live_keys: number;
  balances: Array<{ currency: string; balance: string; held: string; available: string }>;
}

/** User accounts whose handle or email contains `q` (case-insensitive, literally), newest first. */
export async function listAccounts(db: Db, q: string | undefined, limit: number): Promise<AccountListing[]> {
  const query = db('accounts as a')
    .where('a.kind', 'user')
    .select(
      'a.handle',
      'a.email',
      'a.created_at',
      'a.disabled_at',
      'a.disabled_reason',
      db.raw(`(SELECT count(*) FROM api_keys k WHERE k.account = a.handle AND k.revoked_at IS NULL
                AND (k.expires_at IS NULL OR k.expires_at > now()))::int AS live_keys`),
    )
    .orderBy([
      { column: 'a.created_at', order: 'desc' },
      { column: 'a.handle', order: 'asc' },
    ])
    .limit(limit);
  const needle = q?.trim() ?? '';
  if (needle !== '') {
    const pattern = `%${escapeLike(needle)}%`;
    query.where((w) => {
      w.whereRaw(`a.handle ILIKE ? ESCAPE '!'`, [pattern]).orWhereRaw(`a.email ILIKE ? ESCAPE '!'`, [pattern]);
    });
  }
  const rows: Array<{
    handle: string;
    email: string | null;
    created_at: Date;
    disabled_at: Date | null;
    disabled_reason: string | null;
    live_keys: number;
  }> = await query;
  const handles = rows.map((r) => r.handle);
  const balances = handles.length
    ? ((await db('account_balances')
        .whereIn('account', handles)
        .orderBy([{ column: 'account' }, { column: 'currency' }])
        .select('account', 'currency', 'balance', 'held')) as Array<{ account: string; currency: string; balance: unknown; held: unknown }>)
    : [];
  return rows.map((r) => ({
    handle: r.handle,
    email: r.email ?? null,
    created_at: iso(r.created_at)!,
    state: r.disabled_at ? ('disabled' as const) : ('active' as const),
    disabled_at: iso(r.disabled_at),
    disabled_reason: r.disabled_reason ?? null,
    live_keys: Number(r.live_keys),
    balances: balances
      .filter((b) => b.account === r.handle)
      .map((b) => {
        const balance = toBigInt(b.balance);
        const held = toBigInt(b.held);
        return { currency: b.currency, balance: formatAmount(balance), held: formatAmount(held), available: formatAmount(balance - held) };
      }),
  }));
}

export interface LogEntry {
  id: string;
  action: string;
  target: string;
  reason: string;
  detail: unknown;
  created_at: string;
}

/** A `moderation_log` row as the drivers return it (shared/db/connect.ts). */
interface LogRow {
  id: DbBigInt;
  action: string;
  target: string;
  reason: string;
  /** jsonb */
  detail: unknown;
  created_at: Date;
}

const logEntryFromRow = (r: LogRow): LogEntry => ({
  id: String(r.id),
  action: r.action,
  target: r.target,
  reason: r.reason,
  detail: fromJsonb(r.detail),
  created_at: iso(r.created_at)!,
});

/** The moderation log, newest first; `before` (an id) pages back. `next_before` is null on the last page. */
export async function readLog(db: Db, options: { limit: number; before?: string }): Promise<{ entries: LogEntry[]; next_before: string | null }> {
  const query = db('moderation_log')
    .select('id', 'action', 'target', 'reason', 'detail', 'created_at')
    .orderBy('id', 'desc')
    .limit(options.limit + 1);
  if (options.before !== undefined) query.where('id', '<', options.before);
  const rows: LogRow[] = await query;
  const page = rows.slice(0, options.limit);
  const entries = page.map(logEntryFromRow);
  return { entries, next_before: rows.length > options.limit ? entries[entries.length - 1]!.id : null };
}
