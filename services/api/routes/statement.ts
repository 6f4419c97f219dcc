/**
 * An account's statement for a period (docs/hosted.md "Reconciling a month through the API"):
 *   GET /v0/statement[?since=&until=][&account=]   human: their own account · admin (and the local operator): the
 *                                                  `account` named, which they must name
 * Opening and closing balances from the journal, what was credited, billed and earned from the entries and receipts
 * of the period, and the account's root mandates with what their receipts cost: shared/ledger/statement.ts.
 */
import { Router } from 'express';
import { HolonError } from '../../../shared/core/errors.js';
import { formatAmount } from '../../../shared/core/money.js';
import type { ServiceContext } from '../../../shared/context.js';
import { accountExists, readStatement } from '../../../shared/ledger/statement.js';
import { requireKind } from '../principal.js';
import { badQuery, queryPeriod, queryString } from '../query.js';
import { defineOperations, mount } from '../openapi/operations.js';
import { AMOUNT, exact, failure } from '../openapi/schemas.js';

const NULLABLE_TIMESTAMP = { type: ['string', 'null'], format: 'date-time' } as const;

const CURRENCY_STATEMENT = {
  type: 'object',
  additionalProperties: false,
  required: ['currency', 'opening', 'credited', 'billed', 'earned', 'closing'],
  properties: {
    currency: { type: 'string', examples: ['EUR'] },
    opening: { ...AMOUNT, description: 'Σ the account’s journal lines in entries created before `since` (0 without `since`)' },
    credited: { ...AMOUNT, description: 'Σ its lines in the period in entries other than settlements: sign-up and admin credit' },
    billed: { ...AMOUNT, description: 'Σ `cost.own` of the billed receipts it paid (`payer`), written in the period' },
    earned: { ...AMOUNT, description: 'Σ the splits paid to it in billed receipts written in the period' },
    closing: { ...AMOUNT, description: 'Σ its journal lines in entries created before `until` (all of them without `until`)' },
  },
} as const;

const MANDATE_STATEMENT = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'currency', 'total', 'spent', 'reserved', 'billed_in_range', 'billed_to_date'],
  properties: {
    id: { type: 'string', examples: ['alice/work'] },
    currency: { type: 'string' },
    total: AMOUNT,
    spent: AMOUNT,
    reserved: AMOUNT,
    billed_in_range: { ...AMOUNT, description: 'Σ `cost.total` of its top-level receipts written in the period' },
    billed_to_date: { ...AMOUNT, description: 'Σ `cost.total` of its top-level receipts written before `until`: `spent`, without `until`' },
  },
} as const;

export const statementOperations = defineOperations({
  read: {
    id: 'readStatement',
    method: 'get',
    path: '/v0/statement',
    tag: 'accounts',
    auth: ['human', 'admin'],
    summary: 'An account’s statement for a period: opening, credited, billed, earned, closing; its mandates',
    description:
      'For reconciling a month. Each side is read from its own table, in one snapshot: on a consistent ledger `closing = opening + credited − billed + earned` per currency, and each root mandate’s `billed_to_date` equals its `spent` when `until` is left out. The period is `[since, until)` on `created_at`; a delegation tree counts in the period its top-level receipt was written.',
    query: {
      since: {
        description: 'The period’s start, inclusive (RFC 3339 with a time zone); from the beginning without it',
        schema: { type: 'string', format: 'date-time', examples: ['2026-03-01T00:00:00Z'] },
      },
      until: {
        description: 'The period’s end, exclusive (not before `since`); everything so far without it',
        schema: { type: 'string', format: 'date-time', examples: ['2026-04-01T00:00:00Z'] },
      },
      account: {
        description: 'The account (admin: required). A human key reads its own account only.',
        schema: { type: 'string', maxLength: 100, examples: ['alice'] },
      },
    },
    responses: {
      200: {
        description: 'The statement',
        schema: exact(
          'An account’s statement for a period (shared/ledger/statement.ts)',
          {
            account: { type: 'string' },
            since: { ...NULLABLE_TIMESTAMP, description: 'As given, in UTC; null without it' },
            until: { ...NULLABLE_TIMESTAMP, description: 'As given, in UTC; null without it' },
            currencies: { type: 'array', items: CURRENCY_STATEMENT },
            mandates: { type: 'array', items: MANDATE_STATEMENT, description: 'The account’s root mandates, oldest first' },
          },
          ['account', 'since', 'until', 'currencies', 'mandates'],
        ),
      },
      400: failure('A bad query parameter, named in the message; an admin key without `account`', 'invalid_request'),
      401: failure('No key', 'unauthorized'),
      403: failure('An agent key', 'forbidden'),
      404: failure('No such account (a human key: any account but its own)', 'not_found'),
    },
  },
});

export function statementRoutes(ctx: ServiceContext): Router {
  const router = Router();
  mount(router, statementOperations.read, async (req, res) => {
    const p = requireKind(res, ['operator', 'admin', 'human'], 'read a statement');
    const named = queryString(req, 'account', 100);
    const period = queryPeriod(req);
    let account: string;
    if (p.kind === 'human') {
      // Another account is not there for a human key, exactly like one that does not exist.
      if (named !== undefined && named !== p.account) throw new HolonError('not_found', `there is no account ${named}`);
      account = p.account;
    } else {
      if (named === undefined || named === '') throw badQuery('account', 'is required: the handle of the account whose statement to read', 'is required');
      if (!(await accountExists(ctx.db, named))) throw new HolonError('not_found', `there is no account ${named}`);
      account = named;
    }
    const statement = await readStatement(ctx.db, account, {
      ...(period.since ? { since: period.since.iso } : {}),
      ...(period.until ? { until: period.until.iso } : {}),
    });
    res.set('Cache-Control', 'private, no-store');
    res.json({
      account,
      since: period.since?.iso ?? null,
      until: period.until?.iso ?? null,
      currencies: statement.currencies.map((c) => ({
        currency: c.currency,
        opening: formatAmount(c.opening),
        credited: formatAmount(c.credited),
        billed: formatAmount(c.billed),
        earned: formatAmount(c.earned),
        closing: formatAmount(c.closing),
      })),
      mandates: statement.mandates.map((m) => ({
        id: m.id,
        currency: m.currency,
        total: formatAmount(m.total),
        spent: formatAmount(m.spent),
        reserved: formatAmount(m.reserved),
        billed_in_range: formatAmount(m.billedInRange),
        billed_to_date: formatAmount(m.billedToDate),
      })),
    });
  });
  return router;
}
