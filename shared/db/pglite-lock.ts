/**
 * One process at a time on a PGlite data directory. PGlite is Postgres inside this process, with no server to share:
 * two processes opening the same directory both write it, and its files end up corrupt. (PGlite's own
 * `postmaster.pid` cannot tell: it holds no real process id and survives a crash.) So whoever opens a PGlite
 * directory through openDatabase — the gateway, `holon backup`, `restore`, `audit` — first writes `holon.lock` in
 * it: the pid, the host, the command and when. While that process lives, any other is refused with a
 * DatabaseInUseError, a plain sentence saying who holds it; a lock whose process is gone (a crash, `kill -9`) is
 * stale and taken over. Opens within one process share the lock (counted); the last close removes the file.
 */
import { hostname } from 'node:os';
import path from 'node:path';
import { open, readFile, unlink } from 'node:fs/promises';

const PGLITE_LOCK_FILE = 'holon.lock';

export interface LockHolder {
  pid: number;
  host: string;
  command: string;
  since: string;
}

export class DatabaseInUseError extends Error {
  override readonly name = 'DatabaseInUseError';
  constructor(
    readonly dir: string,
    readonly holder: LockHolder,
  ) {
    const who = `${holder.command ? `\`${holder.command}\`, ` : ''}pid ${holder.pid}${holder.host !== hostname() ? ` on ${holder.host}` : ''}, since ${holder.since}`;
    super(
      `the PGlite database ${dir} is in use by another process (${who}). PGlite allows one process at a time: stop that ` +
        `one first (Ctrl-C, or kill ${holder.pid}), then run this again. If nothing runs there any more, delete ${path.join(dir, PGLITE_LOCK_FILE)}`,
    );
  }
}

/** Opens of each directory in this process. */
const held = new Map<string, number>();

/** What this process says about itself in the lock. */
function me(): LockHolder {
  const args = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const command = process.argv[1]?.endsWith('holon.mjs') && args[0] ? `holon ${args[0]}` : path.basename(process.argv[1] ?? 'node');
  return { pid: process.pid, host: hostname(), command, since: new Date().toISOString() };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function readHolder(file: string): Promise<LockHolder | undefined> {
  try {
    const h = JSON.parse(await readFile(file, 'utf8')) as Partial<LockHolder>;
    if (!Number.isSafeInteger(h.pid) || typeof h.host !== 'string') return undefined;
    return { pid: h.pid!, host: h.host, command: typeof h.command === 'string' ? h.command : '', since: typeof h.since === 'string' ? h.since : '?' };
  } catch {
    return undefined;
  }
}

/** The holder of a directory's lock when it is a live process other than this one (on another host: assumed live). */
async function pgliteHolder(dir: string): Promise<LockHolder | undefined> {
  const holder = await readHolder(path.join(path.resolve(dir), PGLITE_LOCK_FILE));
  if (!holder || holder.pid === process.pid) return undefined;
  if (holder.host !== hostname()) return holder;
  return alive(holder.pid) ? holder : undefined;
}

/** Takes the directory's lock (the directory exists); returns its release. Throws DatabaseInUseError when held. */
export async function lockPglite(dir: string): Promise<() => Promise<void>> {
  const key = path.resolve(dir);
  const file = path.join(key, PGLITE_LOCK_FILE);
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    const left = (held.get(key) ?? 1) - 1;
    if (left > 0) {
      held.set(key, left);
      return;
    }
    held.delete(key);
    if ((await readHolder(file))?.pid === process.pid) await unlink(file).catch(() => {});
  };
  if (held.has(key)) {
    held.set(key, held.get(key)! + 1);
    return release;
  }
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await open(file, 'wx');
      try {
        await handle.writeFile(`${JSON.stringify(me())}\n`);
      } finally {
        await handle.close();
      }
      held.set(key, 1);
      return release;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const holder = await pgliteHolder(key);
      if (holder) throw new DatabaseInUseError(key, holder);
      if (attempt >= 2) throw e;
      // A stale lock (its process has gone): taken over.
      await unlink(file).catch(() => {});
    }
  }
}
