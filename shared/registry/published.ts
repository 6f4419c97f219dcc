/**
 * Published versions reach every process's registry (gateway.md §7, "Publishing agents"). Postgres
 * (`published_versions`) is the truth: each process lists them at start-up, then follows the `agents-published`
 * channel (message `<id>@<version>`) for the versions published later, reading each from Postgres. Like yanks
 * (shared/publishing/yanks.ts), a notification is a hint: one lost while Redis is away is picked up at the next start.
 */
import type { ServiceContext } from '../context.js';
import type { Problem } from '../core/errors.js';
import { validateManifest } from '../core/manifest/validate.js';
import type { Manifest } from '../core/manifest/types.js';
import type { Db, Tx } from '../db/connect.js';
import { isYanked } from '../publishing/yanks.js';
import { insertDocuments, noteDocuments } from '../catalogue/search-documents.js';
import { parseVersionMessage, versionMessage, type AgentVersion } from './agent-version.js';
import type { Registry } from './registry.js';

const PUBLISHED_CHANNEL = 'agents-published';

export interface PublishedVersion {
  manifest: Manifest;
  author: string;
  /** The GitHub repository checked at publish time (open-source agents), if any. */
  repository?: string;
  /** An a2a version's agent card, checked at publish: the runtime uses it (shared/runtimes/a2a/). */
  a2aCard?: unknown;
}

type Ctx = Pick<ServiceContext, 'db' | 'registry' | 'messaging' | 'log'>;

function toAgentVersion(
  row: { agent_id: string; version: string; manifest: unknown; a2a_card?: unknown },
  registry: Registry,
): AgentVersion | { problems: Problem[] } {
  const doc = typeof row.manifest === 'string' ? JSON.parse(row.manifest) : row.manifest;
  const upstream = (id: string, version: string) => registry.get(id, version)?.manifest ?? null;
  const v = validateManifest(doc, { resolveUpstream: upstream });
  if (!v.ok) return { problems: v.problems };
  if (v.manifest.id !== row.agent_id || v.manifest.version !== row.version) return { problems: [{ path: '$', message: 'names another version than its row' }] };
  const card = typeof row.a2a_card === 'string' ? (JSON.parse(row.a2a_card) as unknown) : row.a2a_card;
  return { manifest: v.manifest, origin: 'published', ...(card !== null && card !== undefined ? { a2aCard: card } : {}) };
}

/** Read one published version into the registry; true when it was not listed yet. */
async function listOne(ctx: Ctx, id: string, version: string): Promise<boolean> {
  const row = await ctx.db('published_versions').where({ agent_id: id, version }).first('agent_id', 'version', 'manifest', 'a2a_card');
  if (!row) return false;
  const agent = toAgentVersion(row, ctx.registry);
  if ('problems' in agent) {
    ctx.log.error({ agent: id, version, problems: agent.problems.length }, 'a published version no longer validates: not listed');
    return false;
  }
  return ctx.registry.add(agent);
}

/**
 * One version as this process knows it, or read from Postgres when the version's publish has not reached this process
 * yet (its notification is a hint, and a job about the version — an evaluation — can come first). A version read
 * that way that was yanked since is listed, then hidden, as at start-up; `get()` still finds it. Undefined when no
 * such version was published, or its manifest no longer validates.
 */
export async function knownVersion(ctx: Ctx, id: string, version: string): Promise<AgentVersion | undefined> {
  const known = ctx.registry.get(id, version);
  if (known) return known;
  if ((await listOne(ctx, id, version)) && (await isYanked(ctx.db, id, version))) ctx.registry.hide(id, version);
  return ctx.registry.get(id, version);
}

/**
 * Record a version as published, then list it here and announce it to every process. The primary key decides a
 * race: exactly one of two publishes of the same version wins. `version_taken` when the number was ever used.
 * `within` runs in the same transaction as the insert, only for the winner (publishing queues the version's
 * evaluations there: no process ever lists it without them). The version's search document is written in that
 * transaction too (shared/catalogue/search-documents.ts): searchable from every process once it is listed there.
 */
export async function recordPublished(ctx: Ctx, p: PublishedVersion, within?: (trx: Tx) => Promise<void>): Promise<'listed' | 'version_taken'> {
  const { id, version } = p.manifest;
  if (ctx.registry.get(id, version)) return 'version_taken';
  const agent: AgentVersion = { manifest: p.manifest, origin: 'published', ...(p.a2aCard !== undefined ? { a2aCard: p.a2aCard } : {}) };
  const won = await ctx.db.transaction(async (trx) => {
    const inserted = await trx.raw<{ rows: unknown[] }>(
      `INSERT INTO published_versions (agent_id, version, author, manifest, repository, a2a_card) VALUES (?, ?, ?, ?::jsonb, ?, ?::jsonb)
       ON CONFLICT (agent_id, version) DO NOTHING RETURNING agent_id`,
      [id, version, p.author, JSON.stringify(p.manifest.doc), p.repository ?? null, p.a2aCard === undefined ? null : JSON.stringify(p.a2aCard)],
    );
    if (inserted.rows.length === 0) return false;
    await insertDocuments(trx, [agent]);
    await within?.(trx);
    return true;
  });
  if (!won) return 'version_taken';
  noteDocuments(ctx.db, [agent]);
  ctx.registry.add(agent);
  try {
    await ctx.messaging.notifier.publish(PUBLISHED_CHANNEL, versionMessage(id, version));
  } catch (err) {
    ctx.log.error(
      { agent: id, version, err: { message: (err as Error)?.message } },
      'published but not announced: other processes list it at their next start-up',
    );
  }
  return 'listed';
}

/** Every published version, oldest first (an upstream before its forks). Returns how many were listed. */
async function loadPublished(db: Db, ctx: Ctx): Promise<number> {
  const rows = (await db('published_versions').orderBy('listed_at').select('agent_id', 'version')) as Array<{ agent_id: string; version: string }>;
  let listed = 0;
  for (const r of rows) if (await listOne(ctx, r.agent_id, r.version)) listed++;
  return listed;
}

/**
 * For the gateway's start-up, before the yank follower (a yanked published version is listed, then hidden):
 * subscribe first, then read the table, so a version published in between is caught by one or the other.
 */
export async function startPublishedFollower(ctx: Ctx): Promise<() => Promise<void>> {
  const unsubscribe = await ctx.messaging.notifier.subscribe(PUBLISHED_CHANNEL, (message) => {
    const v = parseVersionMessage(message);
    if (!v) {
      ctx.log.warn({ channel: PUBLISHED_CHANNEL, message: String(message).slice(0, 100) }, 'ignored a malformed publish notification');
      return;
    }
    listOne(ctx, v.id, v.version).catch((err) =>
      ctx.log.error({ agent: v.id, version: v.version, err: { message: (err as Error)?.message } }, 'could not list a published version'),
    );
  });
  try {
    const listed = await loadPublished(ctx.db, ctx);
    if (listed > 0) ctx.log.info({ listed }, 'published versions listed');
  } catch (err) {
    await unsubscribe();
    throw err;
  }
  return unsubscribe;
}
