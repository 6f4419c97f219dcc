/**
 * Yanked versions leave every API process (gateway.md §7 Moderation, Publishing agents). Postgres
 * (`yanked_versions`) is the truth; each process hides those versions from its in-memory registry at start-up,
 * then follows the `agents-yanked` channel (message `<id>@<version>`) for the yanks that come later.
 *
 * A notification is a hint: one lost while Redis is away is picked up at the next start-up. Hiding is idempotent,
 * so a version heard twice (the channel and the start-up read) is harmless.
 */
import type { Db } from '../db/connect.js';
import type { ServiceContext } from '../context.js';
import type { Registry } from '../registry/registry.js';
import { parseVersionMessage, versionMessage } from '../registry/agent-version.js';

export const YANKS_CHANNEL = 'agents-yanked';

/** What travels on the channel: `ns/name@version` (shared/registry/agent-version.ts). */
export const yankMessage = versionMessage;
export const parseYankMessage = parseVersionMessage;

/** Hide every yanked version from `registry`; returns how many it was still listing. */
export async function applyYanks(db: Db, registry: Registry): Promise<number> {
  const rows = (await db('yanked_versions').select('agent_id', 'version')) as Array<{ agent_id: string; version: string }>;
  let hidden = 0;
  for (const r of rows) if (registry.hide(r.agent_id, r.version)) hidden++;
  return hidden;
}

/** Whether this version was yanked (the table is the truth; the channel only a hint). */
export async function isYanked(db: Db, id: string, version: string): Promise<boolean> {
  return (await db('yanked_versions').where({ agent_id: id, version }).first('agent_id')) !== undefined;
}

/** Hide each version announced on the channel. Returns the unsubscribe function. */
export async function followYanks(ctx: Pick<ServiceContext, 'registry' | 'messaging' | 'log'>): Promise<() => Promise<void>> {
  return ctx.messaging.notifier.subscribe(YANKS_CHANNEL, (message) => {
    const yank = parseYankMessage(message);
    if (!yank) {
      ctx.log.warn({ channel: YANKS_CHANNEL, message: String(message).slice(0, 100) }, 'ignored a malformed yank notification');
      return;
    }
    if (ctx.registry.hide(yank.id, yank.version)) ctx.log.info({ agent: yank.id, version: yank.version }, 'yanked version hidden');
  });
}

/** Announce committed yanks to every process. A failure is logged, not thrown: the yank is already the truth. */
export async function publishYanks(ctx: Pick<ServiceContext, 'messaging' | 'log'>, yanks: ReadonlyArray<{ id: string; version: string }>): Promise<boolean> {
  let ok = true;
  for (const y of yanks) {
    try {
      await ctx.messaging.notifier.publish(YANKS_CHANNEL, yankMessage(y.id, y.version));
    } catch (err) {
      ok = false;
      ctx.log.error(
        { agent: y.id, version: y.version, err: { message: (err as Error)?.message } },
        'yank committed but not announced: other processes hide it at their next start-up',
      );
    }
  }
  return ok;
}

/**
 * For the gateway's start-up: subscribe first, then read the table, so a yank committed in between is caught by
 * one or the other (never by neither). Returns the unsubscribe function, for the gateway's stop.
 */
export async function startYankFollower(ctx: Pick<ServiceContext, 'db' | 'registry' | 'messaging' | 'log'>): Promise<() => Promise<void>> {
  const unsubscribe = await followYanks(ctx);
  try {
    const hidden = await applyYanks(ctx.db, ctx.registry);
    if (hidden > 0) ctx.log.info({ hidden }, 'yanked versions hidden');
  } catch (err) {
    await unsubscribe();
    throw err;
  }
  return unsubscribe;
}
