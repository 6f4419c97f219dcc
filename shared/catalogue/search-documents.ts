/**
 * The catalogue's search documents in Postgres (`search_documents`, migration 022) and the search over them
 * (GET /v0/agents?q=, MCP search_agents; what a document holds and how a query is read: text-search.ts).
 *
 * One row per listed version, keyed by agent and version: its three weighted parts as text and the tsvector Postgres
 * makes of them (a generated column under a GIN index). A search sends only its words: the index finds the versions
 * that match, only those are ranked, and the answer is their keys and ranks. Its cost follows the matches, not the
 * catalogue. The table is every process's one truth about documents; which versions are candidates stays the
 * registry's (capability, listed, not yanked, not HOLON_EXCLUDEd, the latest matching version per agent): a match
 * the registry does not offer is dropped, a candidate without a match is not found.
 *
 * How rows get there:
 *   - published: written in the publish's own transaction (shared/registry/published.ts), deleted in the yank's
 *     (shared/publishing/moderation.ts). A version never changes, so a row, once there, is current.
 *   - shipped: the agents of this process's directories, upserted by each API process at start-up (their text
 *     replaced when it changed); a process never deletes a shipped row, since another process may list it
 *     (directories can differ between processes): a row nobody lists any more is never a candidate.
 *   - anything else a process lists without knowing its row is there (a version heard on the publish channel, a
 *     registry built some other way, as tests and benches do) is written the first time a search meets it:
 *     `INSERT … ON CONFLICT`, never over a published row, never for a yanked version. Each process remembers, per
 *     database handle, the versions whose row it wrote or saw, so a search sends documents only once per process.
 *   - a database upgraded in place (versions listed before migration 022): written by the next API process to start
 *     (`syncSearchDocuments`).
 * A search also leaves out yanked versions itself (`yanked_versions`), so a yank stops matching at its commit in
 * every process, before any of them has heard of it.
 */
import type { Db, Queryable } from '../db/connect.js';
import type { Manifest } from '../core/manifest/types.js';
import type { ServiceContext } from '../context.js';
import type { AgentVersion } from '../registry/agent-version.js';
import { documentParts, queryWords, type TextMatch } from './text-search.js';

/** Rows per INSERT when many documents are written at once (a few KB each). */
const BATCH = 200;

/** The versions whose row this process knows is in the table, per database handle. */
const known = new WeakMap<object, WeakSet<Manifest>>();

function knownIn(db: Queryable): WeakSet<Manifest> {
  let set = known.get(db);
  if (!set) {
    set = new WeakSet();
    known.set(db, set);
  }
  return set;
}

const keyOf = (id: string, version: string): string => `${id}@${version}`;

/**
 * Write the documents of `agents` (any number; distinct versions). A published row is never replaced (a version
 * never changes) and never written for a yanked version; a shipped row takes this text when it differs. In key
 * order, so that two processes writing the same rows at once wait for each other rather than deadlock.
 */
export async function insertDocuments(db: Queryable, agents: readonly AgentVersion[]): Promise<void> {
  const byKey = new Map<string, AgentVersion>();
  for (const a of agents) if (!byKey.has(keyOf(a.manifest.id, a.manifest.version))) byKey.set(keyOf(a.manifest.id, a.manifest.version), a);
  const sorted = [...byKey.values()].sort((x, y) =>
    x.manifest.id !== y.manifest.id
      ? x.manifest.id < y.manifest.id
        ? -1
        : 1
      : x.manifest.version < y.manifest.version
        ? -1
        : x.manifest.version > y.manifest.version
          ? 1
          : 0,
  );
  for (let i = 0; i < sorted.length; i += BATCH) {
    const batch = sorted.slice(i, i + BATCH);
    const parts = batch.map((a) => documentParts(a.manifest));
    await db.raw(
      `INSERT INTO search_documents (agent_id, version, origin, head, summary, body)
       SELECT d.agent_id, d.version, d.origin, d.head, d.summary, d.body
         FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[]) AS d(agent_id, version, origin, head, summary, body)
        WHERE d.origin = 'shipped'
           OR NOT EXISTS (SELECT 1 FROM yanked_versions y WHERE y.agent_id = d.agent_id AND y.version = d.version)
       ON CONFLICT (agent_id, version) DO UPDATE
          SET origin = excluded.origin, head = excluded.head, summary = excluded.summary, body = excluded.body
        WHERE search_documents.origin = 'shipped'
          AND (excluded.origin = 'published'
               OR (search_documents.head, search_documents.summary, search_documents.body)
                  IS DISTINCT FROM (excluded.head, excluded.summary, excluded.body))`,
      [
        batch.map((a) => a.manifest.id),
        batch.map((a) => a.manifest.version),
        batch.map((a) => a.origin),
        parts.map((p) => p[0]),
        parts.map((p) => p[1]),
        parts.map((p) => p[2]),
      ],
    );
  }
}

/** This process knows the rows of `agents` are in `db`'s table (it wrote them, or read their keys). */
export function noteDocuments(db: Queryable, agents: readonly AgentVersion[]): void {
  const set = knownIn(db);
  for (const a of agents) set.add(a.manifest);
}

/** Write the documents this process does not know are there yet; answers how many it wrote. */
async function ensureDocuments(db: Db, agents: readonly AgentVersion[]): Promise<number> {
  const set = knownIn(db);
  const missing = agents.filter((a) => !set.has(a.manifest));
  if (missing.length === 0) return 0;
  await insertDocuments(db, missing);
  noteDocuments(db, missing);
  return missing.length;
}

/** A yanked version's document leaves the table, in the yank's transaction. Shipped rows are never yanked. */
export async function deleteDocument(db: Queryable, id: string, version: string): Promise<void> {
  await db('search_documents').where({ agent_id: id, version, origin: 'published' }).delete();
}

/**
 * For an API process's start-up, after the registry lists published versions and hides yanked ones: drop the rows
 * of yanked versions (a yank that raced a first write), learn which published rows are there (their keys only),
 * then write every listed version's row that is not: the shipped agents of this process, and published versions
 * listed before this table existed (a database upgraded in place). Then ANALYZE, so the planner knows the table's
 * size and matches on the index from the first search (Postgres's autovacuum keeps it current afterwards; PGlite has
 * none). Answers how many rows it wrote.
 */
export async function syncSearchDocuments(ctx: Pick<ServiceContext, 'db' | 'registry'>): Promise<number> {
  const { db, registry } = ctx;
  await db.raw(
    `DELETE FROM search_documents d USING yanked_versions y
      WHERE d.agent_id = y.agent_id AND d.version = y.version AND d.origin = 'published'`,
  );
  const rows = (await db('search_documents').where({ origin: 'published' }).select('agent_id', 'version')) as Array<{ agent_id: string; version: string }>;
  const present = new Set(rows.map((r) => keyOf(r.agent_id, r.version)));
  const listed = registry.list();
  noteDocuments(
    db,
    listed.filter((a) => a.origin === 'published' && present.has(keyOf(a.manifest.id, a.manifest.version))),
  );
  const written = await ensureDocuments(db, listed);
  await db.raw('ANALYZE search_documents');
  return written;
}

/**
 * The versions of `agents` (the registry's candidates) that match any word of `q`, each with its relevance; the
 * others are absent. One query over the index, sent the words only (plus, the first time this process meets a
 * version it has not written or seen, that version's document). `q` is at most MAX_QUERY_LENGTH characters (the
 * callers check it).
 */
export async function matchText(db: Db, agents: readonly AgentVersion[], q: string): Promise<Map<AgentVersion, TextMatch>> {
  const out = new Map<AgentVersion, TextMatch>();
  const exactId = q.trim().toLowerCase();
  const words = queryWords(q);
  if (agents.length === 0) return out;
  if (words.length > 0) {
    await ensureDocuments(db, agents);
    // Words without a lexeme (stop words, punctuation) are left out before plainto_tsquery reads them; the others
    // are OR-ed as tsquery text, which is exactly what plainto_tsquery made (no caller text is parsed as a tsquery).
    // The query is a scalar sub-select, so the GIN index answers `@@` and only the matches are ranked.
    const r = await db.raw<{ rows: Array<{ agent_id: string; version: string; rank: string | number }> }>(
      `WITH query AS (
         SELECT string_agg('(' || plainto_tsquery('english', w)::text || ')', ' | ' ORDER BY i)::tsquery AS q
           FROM unnest(?::text[]) WITH ORDINALITY AS words(w, i)
          WHERE length(to_tsvector('english', w)) > 0
       )
       SELECT d.agent_id, d.version,
              round(ts_rank('{0.1, 0.2, 0.4, 1.0}'::float4[], d.document, (SELECT q FROM query))::numeric, 6) AS rank
         FROM search_documents d
        WHERE d.document @@ (SELECT q FROM query)
          AND NOT EXISTS (SELECT 1 FROM yanked_versions y WHERE y.agent_id = d.agent_id AND y.version = d.version)`,
      [words],
    );
    const ranks = new Map(r.rows.map((row) => [keyOf(row.agent_id, row.version), Number(row.rank)]));
    for (const agent of agents) {
      const rank = ranks.get(keyOf(agent.manifest.id, agent.manifest.version));
      if (rank !== undefined) out.set(agent, { rank, exact: agent.manifest.id === exactId });
    }
  }
  // The agent named exactly is found whatever its words (an id of stop words still finds its agent).
  for (const agent of agents) if (agent.manifest.id === exactId && !out.has(agent)) out.set(agent, { rank: 0, exact: true });
  return out;
}
