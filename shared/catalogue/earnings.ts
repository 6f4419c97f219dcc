/**
 * An author's view of their published versions (GET /v0/me/agents, `holon earnings`; gateway.md §7 "Earnings"):
 * each version (listed or yanked, whether its agent has an endpoint credential, its evaluation) and what it
 * earned, computed from the journal, never from receipts' `splits` or `call_events`.
 *
 * Definition. The author's earnings are the author's POSITIVE lines in journal entries of kind `settle`
 * (`settle:<call id>`). The journal keeps one line per account and currency in an entry (shared/ledger/entries.ts
 * `normalizeLines` merges them), so in a call the author paid for themself, the debit and any credit to them (a
 * royalty on a fork they called, the share of their own agent) are ONE net line, negative: that credit only
 * lowered what the call cost them, and is not reported as earned. So an entry credits the author at most once.
 * Each such line is attributed to exactly one place, through the receipt of its call (`receipts.id` = the call id):
 *   - share     the call's agent (`receipts.agent`, `id@version`) is in the author's namespace: that version.
 *               (When the author is also upstream of their own agent, the one line is all share.)
 *   - royalties otherwise: the first version in the called agent's lineage chain (`lineage.forked_from`, read
 *               from `published_versions`, yanked versions included, at most 9 levels) in the author's
 *               namespace: the version that was forked.
 *   - unattributed  a credit neither rule places (no receipt, no such version in the chain): kept apart, so that
 *               no micro-unit is lost. Empty in practice.
 * Hence, per currency, exactly: Σ over versions (share + royalties) + unattributed = total = Σ of the author's
 * positive lines in settle entries (`journal_total`, one more query, reported alongside so anyone can check).
 * Amounts are per currency (the settlement currency), formatted, never converted or summed across currencies.
 */
import { loadEvaluationSummaries } from './evaluations.js';
import type { ServiceContext } from '../context.js';
import { formatAmount, type Micros } from '../core/money.js';
import type { Db, DbBigInt } from '../db/connect.js';
import { toBigInt } from '../db/connect.js';
import { viewCredential, NO_SECRET_MESSAGE, type CredentialView } from '../publishing/credentials.js';
import { SETTLEMENT_KIND } from '../ledger/entries.js';
import { recordKey } from './agent-record.js';

/** Micro-units per currency. */
type Amounts = Map<string, Micros>;

const add = (m: Amounts, currency: string, amount: Micros) => m.set(currency, (m.get(currency) ?? 0n) + amount);
const view = (m: Amounts): Record<string, string> =>
  Object.fromEntries([...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([c, v]) => [c, formatAmount(v)]));

/** Lineage is bounded (manifest.md §8): the agent called and at most 8 upstreams. */
const MAX_CHAIN_DEPTH = 9;

const namespaceOf = (agentId: string) => agentId.split('/')[0];

interface Credit {
  called: string | null;
  currency: string;
  amount: Micros;
  calls: number;
}

/** The author's positive settle lines, grouped by the agent called (`id@version`, null without a receipt). */
async function loadCredits(db: Db, author: string): Promise<Credit[]> {
  const r = await db.raw<{ rows: Array<{ called: string | null; currency: string; amount: DbBigInt; calls: DbBigInt }> }>(
    `SELECT r.agent AS called, l.currency, sum(l.amount) AS amount, count(*) AS calls
       FROM journal_lines l
       JOIN journal_entries e ON e.id = l.entry_id AND e.kind = ?
       LEFT JOIN receipts r ON r.id = substr(e.key, length('settle:') + 1)
      WHERE l.account = ? AND l.amount > 0
      GROUP BY r.agent, l.currency`,
    [SETTLEMENT_KIND, author],
  );
  return r.rows.map((row) => ({
    called: row.called,
    currency: row.currency,
    amount: toBigInt(row.amount),
    calls: Number(row.calls),
  }));
}

/** For each called `id@version` outside the author's namespace, the nearest upstream version in it (`id@version`). */
async function forkedVersions(db: Db, author: string, called: readonly string[]): Promise<Map<string, string>> {
  if (called.length === 0) return new Map();
  const r = await db.raw<{ rows: Array<{ start: string; id: string; version: string }> }>(
    `WITH RECURSIVE chain(start, id, version, depth) AS (
       SELECT s, split_part(s, '@', 1), split_part(s, '@', 2), 0 FROM unnest(?::text[]) AS s
       UNION ALL
       SELECT c.start, split_part(p.manifest->'lineage'->>'forked_from', '@', 1), split_part(p.manifest->'lineage'->>'forked_from', '@', 2), c.depth + 1
         FROM chain c JOIN published_versions p ON p.agent_id = c.id AND p.version = c.version
        WHERE c.depth < ? AND p.manifest->'lineage'->>'forked_from' IS NOT NULL
     )
     SELECT DISTINCT ON (start) start, id, version FROM chain
      WHERE depth > 0 AND split_part(id, '/', 1) = ?
      ORDER BY start, depth`,
    [[...called], MAX_CHAIN_DEPTH, author],
  );
  return new Map(r.rows.map((row) => [row.start, recordKey(row.id, row.version)]));
}

/** Σ of the author's positive lines in settle entries, per currency: what the attributed figures must add up to. */
async function journalTotal(db: Db, author: string): Promise<Amounts> {
  const r = await db.raw<{ rows: Array<{ currency: string; amount: DbBigInt }> }>(
    `SELECT l.currency, sum(l.amount) AS amount FROM journal_lines l JOIN journal_entries e ON e.id = l.entry_id
      WHERE e.kind = ? AND l.account = ? AND l.amount > 0 GROUP BY l.currency`,
    [SETTLEMENT_KIND, author],
  );
  return new Map(r.rows.map((row) => [row.currency, toBigInt(row.amount)]));
}

interface VersionTally {
  share: Amounts;
  royalties: Amounts;
  paidCalls: number;
  forkCalls: number;
}

const emptyTally = (): VersionTally => ({ share: new Map(), royalties: new Map(), paidCalls: 0, forkCalls: 0 });

/** Earnings per `id@version` of the author's, and what could not be attributed. */
async function attribute(db: Db, author: string): Promise<{ byVersion: Map<string, VersionTally>; unattributed: Amounts }> {
  const credits = await loadCredits(db, author);
  const foreign = [...new Set(credits.flatMap((c) => (c.called && namespaceOf(c.called) !== author ? [c.called] : [])))];
  const forked = await forkedVersions(db, author, foreign);
  const byVersion = new Map<string, VersionTally>();
  const unattributed: Amounts = new Map();
  const tally = (key: string) => byVersion.get(key) ?? byVersion.set(key, emptyTally()).get(key)!;
  for (const c of credits) {
    if (c.called && namespaceOf(c.called) === author) {
      const t = tally(c.called);
      add(t.share, c.currency, c.amount);
      t.paidCalls += c.calls;
      continue;
    }
    const upstream = c.called ? forked.get(c.called) : undefined;
    if (!upstream) {
      add(unattributed, c.currency, c.amount);
      continue;
    }
    const t = tally(upstream);
    add(t.royalties, c.currency, c.amount);
    t.forkCalls += c.calls;
  }
  return { byVersion, unattributed };
}

interface PublishedRow {
  agent_id: string;
  version: string;
  license: string | null;
  listed_at: Date;
  yanked_at: Date | null;
}

async function loadVersions(db: Db, author: string): Promise<PublishedRow[]> {
  const r = await db.raw<{ rows: PublishedRow[] }>(
    `SELECT p.agent_id, p.version, p.manifest->>'license' AS license, p.listed_at, y.created_at AS yanked_at
       FROM published_versions p LEFT JOIN yanked_versions y ON y.agent_id = p.agent_id AND y.version = p.version
      WHERE p.author = ? ORDER BY p.agent_id, p.listed_at`,
    [author],
  );
  return r.rows;
}

export interface AuthorViewOptions {
  /** HOLON_FILE_SECRET: without it credentials cannot be read or set, and `credential` is null. */
  fileSecret: string | undefined;
}

/** The author's published versions and their earnings (see the definition above). */
export async function authorAgents(ctx: Pick<ServiceContext, 'db'>, author: string, options: AuthorViewOptions) {
  const { db } = ctx;
  const [rows, { byVersion, unattributed }, journal] = await Promise.all([loadVersions(db, author), attribute(db, author), journalTotal(db, author)]);
  const ids = [...new Set(rows.map((r) => r.agent_id))];
  // Each version's evaluations with every case: public ones in detail, hidden ones pass/fail (progress while running).
  const evaluations = await loadEvaluationSummaries(
    db,
    rows.map((r) => ({ id: r.agent_id, version: r.version })),
    true,
  );
  const credentials = new Map<string, CredentialView | null>(
    await Promise.all(ids.map(async (id) => [id, options.fileSecret ? await viewCredential(db, options.fileSecret, id) : null] as const)),
  );
  const totals = { share: new Map() as Amounts, royalties: new Map() as Amounts, total: new Map() as Amounts };
  const versions = rows.map((r) => {
    const key = recordKey(r.agent_id, r.version);
    const t = byVersion.get(key) ?? emptyTally();
    byVersion.delete(key);
    const total: Amounts = new Map();
    for (const [part, amounts] of [
      ['share', t.share],
      ['royalties', t.royalties],
    ] as const) {
      for (const [c, v] of amounts) {
        add(total, c, v);
        add(totals[part], c, v);
        add(totals.total, c, v);
      }
    }
    return {
      agent: r.agent_id,
      version: r.version,
      license: r.license,
      proprietary: r.license === 'proprietary',
      listed_at: new Date(r.listed_at).toISOString(),
      listed: r.yanked_at === null,
      yanked_at: r.yanked_at === null ? null : new Date(r.yanked_at).toISOString(),
      credential: credentials.get(r.agent_id) ?? null,
      evaluation: evaluations(r.agent_id, r.version),
      earnings: { paid_calls: t.paidCalls, fork_calls: t.forkCalls, share: view(t.share), royalties: view(t.royalties), total: view(total) },
    };
  });
  // Credits attributed to a version of the author's that is not in published_versions: none by construction
  // (share and royalties name published versions), but never dropped.
  for (const t of byVersion.values()) for (const amounts of [t.share, t.royalties]) for (const [c, v] of amounts) add(unattributed, c, v);
  for (const [c, v] of unattributed) add(totals.total, c, v);
  return {
    account: author,
    versions,
    totals: { share: view(totals.share), royalties: view(totals.royalties), unattributed: view(unattributed), total: view(totals.total) },
    /** Σ of the author's positive lines in settle entries: always equal to `totals.total`. */
    journal_total: view(journal),
    ...(options.fileSecret ? {} : { credentials_note: NO_SECRET_MESSAGE }),
    definition: EARNINGS_DEFINITION,
  };
}

const EARNINGS_DEFINITION =
  "your positive lines in settle journal entries: a call to your version is its share; a call to another author's fork of it pays its royalties";
