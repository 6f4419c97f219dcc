/**
 * Long-polling `GET /v0/calls/{id}?wait=<seconds>` (docs/lifecycle.md): the request is held until the call's
 * receipt exists or the wait ends, woken by the `calls-done` notification (shared/calls/answer/waiter.ts: one subscription
 * per process, the receipt row the truth). A client that goes away releases its place at once.
 *
 * Bounded per API process: LONG_POLL_LIMITS.perProcess held requests in all, LONG_POLL_LIMITS.perPrincipal for one
 * account (hosted) or the local operator (dev). Past either, the request is refused at once (`503` busy, `429` for
 * the principal) with `Retry-After`, rather than answered early: an early answer would only invite a tighter loop.
 */
import type { Response } from 'express';
import { HolonError } from '../../../../shared/core/errors.js';
import type { Principal } from '../../principal.js';

/** The longest wait a client may ask for, in seconds. */
const MAX_WAIT_S = 60;

const LONG_POLL_LIMITS = { perProcess: 2_000, perPrincipal: 100 };

/**
 * `?wait=` in milliseconds (0 when absent): whole or decimal seconds from 0 to 60. Anything else is a 400 that says
 * so; more than 60 is refused, not clamped, so that a client learns the bound instead of polling faster than it thinks.
 */
export function waitParam(raw: unknown): number {
  if (raw === undefined) return 0;
  const bad = (why: string): HolonError => new HolonError('invalid_request', `?wait= ${why}`, [{ path: '$.query.wait', message: why }]);
  if (typeof raw !== 'string') throw bad('must be given once, as a number of seconds from 0 to 60 (e.g. wait=30)');
  if (!/^[0-9]{1,3}(\.[0-9]{1,3})?$/.test(raw))
    throw bad(`must be a number of seconds from 0 to 60, such as 30 or 2.5, not ${JSON.stringify(raw.slice(0, 20))}`);
  const seconds = Number(raw);
  if (seconds > MAX_WAIT_S) throw bad(`must be at most ${MAX_WAIT_S} seconds, not ${raw}: ask again when it ends`);
  return Math.round(seconds * 1000);
}

/** Whose quota a long-poll counts against: the account (all its keys together), or the local operator. */
export function principalKey(p: Principal): string {
  return p.kind === 'human' || p.kind === 'agent' ? `account:${p.account}` : p.kind;
}

export class LongPolls {
  private total = 0;
  private readonly byPrincipal = new Map<string, number>();

  constructor(private readonly limits = LONG_POLL_LIMITS) {}

  get size(): number {
    return this.total;
  }

  /** Run `wait` holding a place; its signal fires when the client goes away. Throws 429/503 when there is no place. */
  async hold(res: Response, principal: string, wait: (signal: AbortSignal) => Promise<unknown>): Promise<void> {
    const mine = this.byPrincipal.get(principal) ?? 0;
    if (mine >= this.limits.perPrincipal) {
      res.set('Retry-After', '1');
      throw new HolonError('too_many_waits', `this principal already holds ${mine} long-polls: wait for one to end, or poll without ?wait=`);
    }
    if (this.total >= this.limits.perProcess) {
      res.set('Retry-After', '1');
      throw new HolonError('busy', 'this gateway process holds as many long-polls as it takes: try again shortly');
    }
    this.total += 1;
    this.byPrincipal.set(principal, mine + 1);
    const gone = new AbortController();
    const onClose = (): void => gone.abort();
    res.on('close', onClose);
    try {
      await wait(gone.signal);
    } finally {
      res.off('close', onClose);
      this.total -= 1;
      const left = (this.byPrincipal.get(principal) ?? 1) - 1;
      if (left > 0) this.byPrincipal.set(principal, left);
      else this.byPrincipal.delete(principal);
    }
  }
}
