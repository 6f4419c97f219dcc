/**
 * Rate-limit middleware (gateway.md §7: "Rate limits are per account, and per the address the trusted proxy
 * appended — more keys or a forged `X-Forwarded-For` buy nothing").
 *
 * - Every request counts against `addr:<address>` (services/api/client-address.ts decides the address), and,
 *   when `account(req, res)` names one, against `acct:<handle>`: one bucket per account, however many keys
 *   it has. Mount it after whatever sets the principal, or the account bucket is never used.
 *   The account is hit only when the address is admitted, so a refused address does not eat into its account.
 * - `actionLimit` gives a route its own bucket: `signup:<address>`, `publish:acct:<handle>`, `draft:acct:<handle>`.
 * - Refused: `429 {error: {code: 'rate_limited', message}}` with `Retry-After` (whole seconds).
 *
 * FAIL OPEN, on purpose: when the limiter itself fails (Redis down or too slow: the Redis limiter gives up
 * after a short command timeout), the request goes through and a warning is logged (at most one every
 * 30 s, with a count of the failures in between). Limits protect capacity against abuse; they do not
 * guard money (budgets and reservations do, in Postgres), so an outage of the limiter must not become an
 * outage of every paid call. The cost is that abuse is unthrottled while Redis is down, which the warning
 * makes visible.
 */
import { httpStatusOf } from './http-status.js';
import type { Request, RequestHandler, Response } from 'express';
import { HolonError } from '../../shared/core/errors.js';
import { createLogger, type Logger } from '../../shared/platform/log.js';
import type { RateDecision, RateLimiter, RateRule } from '../../shared/platform/rate-limit.js';
import { clientAddress } from './client-address.js';

type WarnLogger = Pick<Logger, 'warn'>;

/** Told the rule of each refusal (`address`, `account`, or an action's name): the holon_rate_limit_refusals_total counter. */
type RefusalCounter = (rule: string) => void;

export interface RateLimitOptions {
  /** HOLON_TRUST_PROXY: take the address from the last `X-Forwarded-For` entry. */
  trustProxy: boolean;
  perAddress: RateRule;
  perAccount: RateRule;
  /** The account (handle) the request acts for, when authenticated; its keys share one bucket. */
  account?: (req: Request, res: Response) => string | undefined;
  /** Where limiter failures are reported; default a `rate-limit` logger. */
  log?: WarnLogger;
  refused?: RefusalCounter;
}

export function rateLimitMiddleware(limiter: RateLimiter, options: RateLimitOptions): RequestHandler {
  const warn = failureReporter(options.log);
  return async (req, res, next) => {
    const address = clientAddress(req, options.trustProxy);
    const handle = options.account?.(req, res);
    try {
      const byAddress = await limiter.hit(`addr:${address}`, options.perAddress);
      if (!byAddress.ok) return refuse(res, byAddress, 'too many requests from this address', () => options.refused?.('address'));
      if (handle) {
        const byAccount = await limiter.hit(`acct:${handle}`, options.perAccount);
        if (!byAccount.ok) return refuse(res, byAccount, 'too many requests for this account', () => options.refused?.('account'));
      }
    } catch (e) {
      warn(e);
    }
    next();
  };
}

/** One route's own bucket, on top of the general limits: `<name>:<account>`, or `<name>:<address>` without a principal. */
export interface ActionLimit {
  /** The bucket's name (`signup`, `publish`, `draft`). */
  name: string;
  rule: RateRule;
  /** What the refusal says there were too many of ("sign-ups", "publishes", …). */
  what: string;
  /** The account the request acts for; without it (or when it answers undefined) the bucket is per address. */
  account?: (req: Request, res: Response) => string | undefined;
}

/** How an action's bucket finds the address and reports: the same as the general limits'. */
type ActionLimitOptions = Pick<RateLimitOptions, 'trustProxy' | 'log' | 'refused'>;

/**
 * `POST /v0/signup` (per address), `POST /v0/agents` and `POST /v0/agents/draft` (per account): every attempt
 * counts, refused ones included, since each costs the same work (a GitHub lookup, a DNS resolution, a request to an
 * author's server).
 */
export function actionLimit(limiter: RateLimiter, action: ActionLimit, options: ActionLimitOptions): RequestHandler {
  const { trustProxy, log, refused } = options;
  const warn = failureReporter(log);
  return async (req, res, next) => {
    const handle = action.account?.(req, res);
    const key = handle ? `${action.name}:acct:${handle}` : `${action.name}:${clientAddress(req, trustProxy)}`;
    try {
      const decision = await limiter.hit(key, action.rule);
      if (!decision.ok) return refuse(res, decision, `too many ${action.what} from this ${handle ? 'account' : 'address'}`, () => refused?.(action.name));
    } catch (e) {
      warn(e);
    }
    next();
  };
}

function refuse(res: Response, decision: RateDecision, what: string, count: () => void): void {
  count();
  const seconds = Math.max(1, decision.retryAfterS);
  const refusal = new HolonError('rate_limited', `${what}; retry in ${seconds} s`);
  res.status(httpStatusOf(refusal.code)).set('Retry-After', String(seconds)).json(refusal.toJSON());
}

const WARN_EVERY_MS = 30_000;

/** Logs a limiter failure, at most once per WARN_EVERY_MS, counting the ones it kept quiet about. */
function failureReporter(log: WarnLogger | undefined): (e: unknown) => void {
  let logger = log;
  let lastAt = -Infinity;
  let suppressed = 0;
  return (e) => {
    const t = Date.now();
    if (t - lastAt < WARN_EVERY_MS) {
      suppressed += 1;
      return;
    }
    logger ??= createLogger('rate-limit');
    logger.warn(
      { err: { message: (e as Error)?.message, name: (e as Error)?.name }, suppressed },
      'rate limiter unavailable: letting requests through unlimited',
    );
    lastAt = t;
    suppressed = 0;
  };
}

/** Keyless paid calls' limits (docs/payments.md): per client address, and per paying wallet once a payment names one. */
export interface PayLimits {
  limiter: RateLimiter;
  trustProxy: boolean;
}

const payFailures = failureReporter(undefined);

/**
 * One hit on a keyless paid call's bucket (`x402-addr:<address>` or `x402-payer:<wallet>`), `perMin` a minute; a
 * refusal throws `rate_limited` with Retry-After set. Fails open like every limit.
 */
export async function hitPayLimit(limits: PayLimits, req: Request, res: Response, bucket: { payer?: string; perMin: number }): Promise<void> {
  const key = bucket.payer ? `x402-payer:${bucket.payer}` : `x402-addr:${clientAddress(req, limits.trustProxy)}`;
  let decision: RateDecision;
  try {
    decision = await limits.limiter.hit(key, { limit: bucket.perMin, windowMs: 60_000 });
  } catch (e) {
    payFailures(e);
    return;
  }
  if (decision.ok) return;
  const seconds = Math.max(1, decision.retryAfterS);
  res.set('Retry-After', String(seconds));
  throw new HolonError('rate_limited', `too many paid calls from this ${bucket.payer ? 'wallet' : 'address'}; retry in ${seconds} s`);
}
