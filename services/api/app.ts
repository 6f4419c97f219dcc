/**
 * The HTTP API (Express). Today: liveness and balances. Calls, mandates, receipts and approvals
 * arrive with the call lifecycle (issue 3 onwards).
 */
import express, { type ErrorRequestHandler, type Express } from 'express';
import type { Db } from '../../shared/db/connect.js';
import { HolonError } from '../../shared/errors.js';
import { readBalances } from '../../shared/ledger/accounts.js';
import { formatAmount } from '../../shared/money.js';
import type { Logger } from '../../shared/log.js';

export interface ApiDeps {
  db: Db;
  log: Logger;
}

export function createApp(deps: ApiDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(express.json({ limit: '1mb' }));

  app.get('/healthz', (_req, res) => {
    res.json({ ok: true });
  });

  app.get('/v0/accounts', async (_req, res, next) => {
    try {
      const balances = await readBalances(deps.db);
      res.json({
        accounts: balances.map((b) => ({
          account: b.account,
          currency: b.currency,
          balance: formatAmount(b.balance),
          held: formatAmount(b.held),
          available: formatAmount(b.available),
        })),
      });
    } catch (e) {
      next(e);
    }
  });

  app.use((_req, _res, next) => next(new HolonError('not_found', 404, 'no such route')));
  app.use(errorHandler(deps.log));
  return app;
}

/** Every error becomes `{error: {code, message}}`; bad input is a 4xx, never a stack trace. */
function errorHandler(log: Logger): ErrorRequestHandler {
  return (err, _req, res, _next) => {
    let e: HolonError;
    if (err instanceof HolonError) e = err;
    else if (err?.type === 'entity.parse.failed') e = new HolonError('invalid_json', 400, 'the request body is not valid JSON');
    else if (err?.type === 'entity.too.large') e = new HolonError('body_too_large', 413, 'the request body is larger than 1 MB');
    else if (typeof err?.status === 'number' && err.status >= 400 && err.status < 500) e = new HolonError('bad_request', err.status, 'the request could not be read');
    else {
      log.error({ err: { message: (err as Error)?.message, name: (err as Error)?.name } }, 'unexpected error');
      e = new HolonError('gateway_error', 500, 'the gateway failed; nothing was charged');
    }
    res.status(e.status).json(e.toJSON());
  };
}
