/**
 * `npm start` (and `npx holon …`, `npm run holon -- …`) runs the gateway under `sh -c "node bin/holon.mjs …"`. npm
 * passes SIGTERM on to that shell, and the shell (dash, on Debian) dies without passing it to its child: the gateway,
 * and the reference agent host inside it, would be left running, reparented, still holding their ports. Ctrl-C is
 * not affected (the terminal signals the whole process group, the gateway included).
 *
 * So a process started by npm (`npm_lifecycle_event` is set) treats the end of its parent as a stop, like SIGTERM —
 * also when the parent went while the gateway was still starting. Outside npm nothing is watched: `nohup holon serve &`
 * and a shell that exits must leave the gateway running.
 */
import { readFileSync } from 'node:fs';

/** The parent this process started under: bin/holon.mjs reads it first thing, before the sources load (seconds). */
const STARTED_UNDER = ((globalThis as Record<symbol, unknown>)[Symbol.for('holon.startedUnder')] as number | undefined) ?? process.ppid;

/** Calls `stop` once the process that started this one has gone; returns what cancels the watch. */
export function stopWhenParentGoes(stop: () => void, env: NodeJS.ProcessEnv = process.env, intervalMs = 250): () => void {
  const parent = STARTED_UNDER;
  if (env.npm_lifecycle_event === undefined || parent <= 1) return () => {};
  const check = () => {
    if (!parentGone(parent)) return;
    clearInterval(timer);
    stop();
  };
  const timer = setInterval(check, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Whether `parent` is no longer this process's parent. On Linux the parent of now is read from /proc (an orphan is
 * adopted at once, even while its dead parent is a zombie nobody reaped); elsewhere, whether that process still exists.
 */
function parentGone(parent: number): boolean {
  const now = currentParent();
  if (now !== undefined) return now !== parent;
  try {
    process.kill(parent, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'EPERM';
  }
}

/** The parent's pid from /proc/self/stat (`pid (comm) state ppid …`), or undefined where there is no /proc. */
function currentParent(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return Number.isSafeInteger(ppid) ? ppid : undefined;
  } catch {
    return undefined;
  }
}
