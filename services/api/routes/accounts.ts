/**
 * Accounts:
 *   GET    /v0/accounts                   balances: the admin (and the local operator) all, a human their own
 * Hosted only (gateway.md §7; dev mode has one principal and no accounts to sign up):
 *   POST   /v0/signup {handle, email}     none   → account, demo credit, starter mandate, human + agent key (once)
 *   GET    /v0/me                         human: account, balance, mandates, keys · agent: its mandate and budget
 */
import { maskAddress, payoutAddress } from '../../../shared/payments/payout-address.js';
import { Router, type RequestHandler } from 'express';
import type { ServiceContext } from '../../../shared/context.js';
import { listRootMandates, loadMandate, mandateView } from '../../../shared/mandates/store.js';
import { keyView, listKeys } from '../../../shared/accounts/keys.js';
import { signup } from '../../../shared/accounts/signup.js';
import type { WebhookSecrets } from '../../../shared/webhooks/secrets.js';
import { readAccount, readBalances } from '../../../shared/ledger/accounts.js';
import { formatAmount } from '../../../shared/core/money.js';
import { requireKind } from '../principal.js';
import { bodyReader } from '../body-reader.js';
import { defineOperations, mount } from '../openapi/operations.js';
import { SIGNED_UP } from '../openapi/author-schemas.js';
import { BALANCE, exact, failure, KEY_VIEW, MANDATE_VIEW, TIMESTAMP, text } from '../openapi/schemas.js';

const SIGNUP_BODY = {
  type: 'object',
  additionalProperties: false,
  required: ['handle', 'email'],
  properties: {
    handle: text(100, '2 to 39 characters of a-z, 0-9 and "-", like a GitHub login'),
    email: text(254, 'Not verified; sign in with GitHub with the same email to publish'),
  },
} as const;

export const accountOperations = defineOperations({
  balances: {
    id: 'listBalances',
    method: 'get',
    path: '/v0/accounts',
    tag: 'accounts',
    auth: ['human', 'admin'],
    summary: 'Balances: the admin sees every account, a human their own',
    responses: {
      200: { description: 'Balances', schema: exact('Balances by account and currency', { accounts: { type: 'array', items: BALANCE } }, ['accounts']) },
      401: failure('No key', 'unauthorized'),
      403: failure('An agent key', 'forbidden'),
    },
  },
  signup: {
    id: 'signUp',
    method: 'post',
    path: '/v0/signup',
    tag: 'accounts',
    auth: ['none'],
    hostedOnly: true,
    summary: 'Create an account by email: demo credit, a sandbox mandate, a human key and an agent key (shown once)',
    body: { schema: SIGNUP_BODY, example: { handle: 'alice', email: 'alice@example.com' } },
    responses: {
      201: { description: 'The account and its keys, shown once', schema: SIGNED_UP },
      400: failure(
        'A bad body or email (`invalid_request`), or a handle that is malformed or reserved (`invalid_handle`)',
        'invalid_request',
        'invalid_handle',
      ),
      403: failure('The email belonged to a disabled account', 'email_blocked'),
      409: failure('The handle (`handle_taken`) or the email (`email_taken`) is taken', 'handle_taken', 'email_taken'),
      429: failure('Too many sign-ups from this address', 'rate_limited'),
    },
  },
  me: {
    id: 'readMe',
    method: 'get',
    path: '/v0/me',
    tag: 'accounts',
    auth: ['human', 'agent'],
    hostedOnly: true,
    summary: 'Your account, balance, mandates and keys (human); the key’s mandate and budget (agent)',
    responses: {
      200: {
        description: 'The principal’s view',
        schema: {
          oneOf: [
            exact(
              'A human key: the account, its balances, root mandates and keys',
              {
                kind: { const: 'human' },
                account: exact(
                  'The account',
                  {
                    handle: { type: 'string' },
                    email: { type: ['string', 'null'] },
                    github: {
                      type: ['string', 'null'],
                      description: 'The GitHub login the account is linked to; null: an email account, which cannot publish yet',
                    },
                    created_at: TIMESTAMP,
                    payout_address: {
                      type: ['string', 'null'],
                      description: 'Where payouts go, masked (`0x1234…abcd`); null: none set (PUT /v0/me/payout-address)',
                    },
                  },
                  ['handle', 'email', 'github', 'created_at', 'payout_address'],
                ),
                key: { type: 'string', description: 'The prefix of the key that asked' },
                balances: { type: 'array', items: BALANCE },
                mandates: {
                  type: 'array',
                  items: exact(
                    'A root mandate and its budget',
                    {
                      id: { type: 'string' },
                      grantee: { type: 'string' },
                      ...MANDATE_VIEW.properties.budget.properties,
                    },
                    ['id', 'grantee', 'currency', 'total', 'spent', 'reserved', 'remaining'],
                  ),
                },
                keys: { type: 'array', items: KEY_VIEW },
              },
              ['kind', 'account', 'key', 'balances', 'mandates', 'keys'],
            ),
            exact(
              'An agent key: its one mandate and budget',
              {
                kind: { const: 'agent' },
                account: { type: 'string' },
                key: { type: 'string' },
                ask_in_client: { type: 'boolean' },
                mandate: { type: ['object', 'null'], description: 'The mandate document (spec mandate.md)' },
                budget: MANDATE_VIEW.properties.budget,
                statement: MANDATE_VIEW.properties.statement,
                signature: MANDATE_VIEW.properties.signature,
              },
              ['kind', 'account', 'key', 'ask_in_client', 'mandate'],
            ),
          ],
        },
      },
      401: failure('No key', 'unauthorized'),
    },
  },
});

const readSignup = bodyReader<{ handle: string; email: string }>(SIGNUP_BODY);

export interface AccountDeps {
  ctx: ServiceContext;
  signupCredit: bigint;
  hosted: boolean;
  /** Sign-up mints the account's webhook signing secret (shared/webhooks/secrets.ts). */
  webhooks?: WebhookSecrets;
}

function balancesHandler(deps: AccountDeps): RequestHandler {
  return async (_req, res) => {
    // Balances: the admin sees all, a human their own account's.
    const p = requireKind(res, ['operator', 'admin', 'human'], 'read balances');
    const balances = await readBalances(deps.ctx.db, p.kind === 'human' ? p.account : undefined);
    res.json({
      accounts: balances.map((b) => ({
        account: b.account,
        currency: b.currency,
        balance: formatAmount(b.balance),
        held: formatAmount(b.held),
        available: formatAmount(b.available),
      })),
    });
  };
}

function signupHandler(deps: AccountDeps): RequestHandler {
  const { ctx } = deps;
  return async (req, res) => {
    const r = readSignup(req.body);
    r.done();
    const made = await signup(
      ctx.db,
      { handle: r.body.handle, email: r.body.email },
      {
        credit: deps.signupCredit,
        registry: ctx.registry,
        signingKey: ctx.signingKey,
        ...(deps.webhooks ? { webhooks: deps.webhooks } : {}),
      },
    );
    res.status(201).json({
      ...made,
      note: 'the keys and the webhook secret are shown once: keep them now. The human key decides approvals; the agent key acts under the sandbox mandate; the webhook secret verifies callbacks (docs/webhooks.md).',
    });
  };
}

const maskedOrNull = (a: string | null) => (a ? maskAddress(a) : null);

function meHandler(deps: AccountDeps): RequestHandler {
  const { ctx } = deps;
  return async (_req, res) => {
    const p = requireKind(res, ['human', 'agent'], 'read an account');
    if (p.kind === 'agent') {
      const stored = await loadMandate(ctx.db, p.mandateId);
      res.json({ kind: 'agent', account: p.account, key: p.keyPrefix, ask_in_client: p.askInClient, ...(stored ? mandateView(stored) : { mandate: null }) });
      return;
    }
    const account = (await readAccount(ctx.db, p.account))!;
    const balances = await readBalances(ctx.db, p.account);
    const views = (await listRootMandates(ctx.db, { issuer: p.account, limit: 500 })).map((stored) => ({
      id: stored.mandate.id,
      grantee: stored.mandate.grantee,
      ...mandateView(stored).budget,
    }));
    res.json({
      kind: 'human',
      // `github`: the GitHub login the account is linked to, or null (an email account: it cannot publish yet).
      account: {
        handle: account.handle,
        email: account.email,
        github: account.githubLogin,
        created_at: account.createdAt.toISOString(),
        payout_address: maskedOrNull(await payoutAddress(ctx.db, p.account)),
      },
      key: p.keyPrefix,
      balances: balances.map((b) => ({
        currency: b.currency,
        balance: formatAmount(b.balance),
        held: formatAmount(b.held),
        available: formatAmount(b.available),
      })),
      mandates: views,
      keys: (await listKeys(ctx.db, p.account)).map((k) => keyView(k, ctx.now())),
    });
  };
}

export function accountRoutes(deps: AccountDeps): Router {
  const router = Router();
  mount(router, accountOperations.balances, balancesHandler(deps));
  // Sign-up and /v0/me are the hosted gateway's (a dev gateway has no accounts to sign up to).
  if (!deps.hosted) return router;
  mount(router, accountOperations.signup, signupHandler(deps));
  mount(router, accountOperations.me, meHandler(deps));
  return router;
}
