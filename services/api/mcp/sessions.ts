/**
 * The open MCP sessions of one API process and their limits (docs/mcp.md, "Sessions and scale-out"):
 *
 *   total         1000 sessions in the process, exactly: an initialize takes its slot synchronously, before
 *                 anything awaits, so a burst cannot overshoot.
 *   per principal 20 sessions per account (hosted) or per client address (dev mode, where there are no keys).
 *   idle          a session with no request in flight for 10 minutes is closed.
 *
 * A principal at its own limit, or arriving at a full table, gives up its longest-idle session (typically one a
 * client left without DELETE) to the new one. When none of its sessions is idle (each has a request in flight, or
 * is still initialising), the initialize is refused: 429 at its own limit, 503 when the table is full. A principal
 * can therefore never take more than its share, and never lock another principal out by itself.
 */

export interface SessionLimits {
  total: number;
  perPrincipal: number;
  idleMs: number;
}

export const SESSION_LIMITS: SessionLimits = { total: 1000, perPrincipal: 20, idleMs: 10 * 60_000 };

export interface SessionEntry {
  /** Whose quota it counts against: `account:<id>` (hosted) or `address:<ip>` (dev mode). */
  readonly principal: string;
  /** Last request started or ended (ms), for the idle timeout. */
  lastUsed: number;
  /** Order of last use, for choosing the longest-idle session (two uses in one millisecond stay ordered). */
  seq: number;
  /** Requests of the session neither answered nor cancelled yet (an open GET stream is not use). */
  inFlight: number;
  /** Close the session (its transport); the table has already forgotten it. */
  close(): void;
}

export type Admission<E> = { ok: true; slot: Slot<E> } | { ok: false; status: 429 | 503; message: string; retryAfterS: number };

/** A reserved place in the table: `fill` it once the session has its id, else `release` it. */
interface Slot<E> {
  fill(id: string, entry: E): void;
  /** Give the place back if it was never filled (no-op after fill). */
  release(): void;
}

export class SessionTable<E extends SessionEntry> {
  private readonly open = new Map<string, E>();
  /** Initializes under way, per principal: they hold a slot but have no session yet. */
  private readonly pending = new Map<string, number>();
  private pendingTotal = 0;
  private seq = 0;

  constructor(
    readonly limits: SessionLimits,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.open.size;
  }

  get(id: string): E | undefined {
    return this.open.get(id);
  }

  /** A slot for a new session of `principal`, or why not. Synchronous: the count cannot race. */
  admit(principal: string): Admission<E> {
    const { total, perPrincipal } = this.limits;
    if (this.countOf(principal) >= perPrincipal && !this.evictIdlest(principal)) {
      return {
        ok: false,
        status: 429,
        retryAfterS: 5,
        message: `too many MCP sessions: ${perPrincipal} are open for this ${kindOf(principal)} and each is busy; end one (DELETE /mcp) or try again when a call has finished`,
      };
    }
    if (this.open.size + this.pendingTotal >= total && !this.evictIdlest(principal)) {
      return {
        ok: false,
        status: 503,
        retryAfterS: 30,
        message: `the gateway holds as many MCP sessions as it can (${total}); try again in a minute`,
      };
    }
    this.pending.set(principal, (this.pending.get(principal) ?? 0) + 1);
    this.pendingTotal += 1;
    let held = true;
    const giveBack = () => {
      if (!held) return;
      held = false;
      this.pendingTotal -= 1;
      const left = (this.pending.get(principal) ?? 1) - 1;
      if (left > 0) this.pending.set(principal, left);
      else this.pending.delete(principal);
    };
    return {
      ok: true,
      slot: {
        fill: (id, entry) => {
          giveBack();
          this.touch(entry);
          this.open.set(id, entry);
        },
        release: giveBack,
      },
    };
  }

  /** Forget a session (it closed). Only the entry given is removed, never a successor under the same id. */
  remove(id: string, entry?: E): void {
    if (entry === undefined || this.open.get(id) === entry) this.open.delete(id);
  }

  touch(entry: E): void {
    entry.lastUsed = this.now();
    entry.seq = ++this.seq;
  }

  /** A request of the session is being answered until `done` is called. */
  begin(entry: E): () => void {
    entry.inFlight += 1;
    this.touch(entry);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      entry.inFlight -= 1;
      this.touch(entry);
    };
  }

  /** Close every session idle for longer than the limit. */
  sweep(): void {
    const cutoff = this.now() - this.limits.idleMs;
    for (const [id, entry] of this.open) {
      if (entry.inFlight === 0 && entry.lastUsed < cutoff) this.evict(id, entry);
    }
  }

  /** Empty the table; the caller closes what it returns. */
  drain(): E[] {
    const all = [...this.open.values()];
    this.open.clear();
    return all;
  }

  private countOf(principal: string): number {
    let n = this.pending.get(principal) ?? 0;
    for (const entry of this.open.values()) if (entry.principal === principal) n += 1;
    return n;
  }

  /** Close the principal's longest-idle session that has nothing in flight; false when there is none. */
  private evictIdlest(principal: string): boolean {
    let found: [string, E] | undefined;
    for (const [id, entry] of this.open) {
      if (entry.principal !== principal || entry.inFlight > 0) continue;
      if (!found || entry.seq < found[1].seq) found = [id, entry];
    }
    if (!found) return false;
    this.evict(...found);
    return true;
  }

  private evict(id: string, entry: E): void {
    this.open.delete(id);
    entry.close();
  }
}

const kindOf = (principal: string): string => (principal.startsWith('account:') ? 'account' : 'client address');
