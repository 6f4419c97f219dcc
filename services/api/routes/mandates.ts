/**
 * Mandates: GET|POST /v0/mandates and GET /v0/mandates/{ns}/{name} (with its budget: spent, reserved, remaining).
 * Dev mode: the local operator creates any root mandate, and its issuer gets demo credit once.
 * Hosted mode (gateway.md §7): a human creates root mandates in their own namespace — the id is put there, the
 * issuer is the caller, the grantee is `<handle>/…`, the currency EUR (or, with payments from outside on, the asset's,
 * docs/payments.md) and `fx` the platform's (a caller cannot pick the rate it pays at); no credit (sign-up gave it).
 */
import { Router, type Request } from 'express';
import { HolonError, type Problem } from '../../../shared/core/errors.js';
import type { ServiceContext } from '../../../shared/context.js';
import { listRootMandates, loadMandate, mandateView, saveMandate } from '../../../shared/mandates/store.js';
import { creditSignup } from '../../../shared/ledger/demo-credit.js';
import { validateMandate } from '../../../shared/core/mandate/validate.js';
import { assertSeesMandate, requireKind } from '../principal.js';
import { requireObject } from '../body-reader.js';
import { capture, captured } from '../captures.js';
import { defineOperations, mount } from '../openapi/operations.js';
import { exact, failure, MANDATE_DOCUMENT, MANDATE_VIEW } from '../openapi/schemas.js';
import { isJsonObject, type JsonObject } from '../../../shared/core/json.js';
import { ratesInto } from '../../../shared/core/fx-table.js';
import { formatRate } from '../../../shared/core/money.js';

export const mandateOperations = defineOperations({
  list: {
    id: 'listMandates',
    method: 'get',
    path: '/v0/mandates',
    tag: 'mandates',
    auth: ['human'],
    summary: 'Your root mandates and their budgets',
    responses: {
      200: { description: 'Mandates', schema: exact('Your mandates', { mandates: { type: 'array', items: MANDATE_VIEW } }, ['mandates']) },
      401: failure('No key', 'unauthorized'),
      403: failure('Not a human key', 'forbidden'),
    },
  },
  create: {
    id: 'createMandate',
    method: 'post',
    path: '/v0/mandates',
    tag: 'mandates',
    auth: ['human'],
    summary: 'Create a root mandate in your namespace (mandates are never edited: a new one has a new id)',
    body: {
      schema: MANDATE_DOCUMENT,
      example: { id: 'research', grantee: 'alice/assistant', allow: { agents: ['holon-labs/*'] }, budget: { total: '2.00' } },
    },
    responses: {
      201: { description: 'Created', schema: MANDATE_VIEW },
      200: { description: 'Dev mode: the operator re-sent a stored mandate', schema: MANDATE_VIEW },
      400: failure('An invalid mandate, every problem listed', 'invalid_mandate'),
      401: failure('No key', 'unauthorized'),
      403: failure('Not a human key', 'forbidden'),
      409: failure('The id is taken', 'mandate_exists'),
    },
  },
  read: {
    id: 'readMandate',
    method: 'get',
    path: '/v0/mandates/{ns}/{name}',
    // The id `<ns>/<name>` as two path segments; one segment holding the whole id encoded (`alice%2Fsandbox`) is
    // read the same (Express decodes it), so clients that encode path parameters reach it too.
    route: /^\/v0\/mandates\/([^/]+)(?:\/([^/]+))?$/,
    tag: 'mandates',
    auth: ['human', 'agent'],
    summary: 'A mandate and its spent, reserved and remaining budget',
    description:
      'The mandate id `<ns>/<name>` is two path segments: `/v0/mandates/alice/sandbox`; a sub-mandate’s name holds its receipt id (`sandbox.r_…`). The whole id as one encoded segment (`/v0/mandates/alice%2Fsandbox`) is read the same.',
    params: {
      ns: { description: 'The mandate id’s namespace (its issuer’s handle): `alice` of `alice/sandbox`', example: 'alice' },
      name: { description: 'The rest of the mandate id: `sandbox` of `alice/sandbox`, `sandbox.r_…` of a sub-mandate', example: 'sandbox' },
    },
    responses: {
      200: { description: 'The mandate', schema: MANDATE_VIEW },
      401: failure('No key', 'unauthorized'),
      404: failure('No such mandate of yours', 'not_found'),
    },
  },
});

export interface MandateDeps {
  ctx: ServiceContext;
  /** Demo credit for a new issuer (HOLON_SIGNUP_CREDIT), in EUR. */
  signupCredit: bigint;
}

/** The platform's exchange rates for hosted mandates in EUR (EUR per unit): demo rates, where HOLON_FX says nothing. */
const PLATFORM_FX: Readonly<Record<string, string>> = Object.freeze({ USD: '0.92', GBP: '1.17' });

/**
 * The currencies a hosted mandate may be in, and each one's rates: EUR (demo credit's), and, with payments from
 * outside on, the asset's currency (docs/payments.md), both at the platform's rates (HOLON_FX).
 */
function hostedCurrencies(payments: ServiceContext['payments']): ReadonlyMap<string, Record<string, string>> {
  const rates = (currency: string) => Object.fromEntries(Object.entries(ratesInto(currency, payments?.fx ?? [])).map(([c, r]) => [c, formatRate(r)]));
  const out = new Map<string, Record<string, string>>([['EUR', { ...PLATFORM_FX, ...rates('EUR') }]]);
  if (payments) out.set(payments.asset.currency, rates(payments.asset.currency));
  return out;
}

/**
 * A human's mandate document, put in their namespace with the platform's rules, and the problems of what they may
 * not set (reported together with the document's own problems, so a form shows every one at its field at once).
 */
function ownMandateDoc(body: JsonObject, handle: string, currencies: ReadonlyMap<string, Record<string, string>>): { doc: JsonObject; problems: Problem[] } {
  const problems: Problem[] = [];
  const id = typeof body.id === 'string' && !body.id.includes('/') ? `${handle}/${body.id}` : body.id;
  if (typeof id === 'string' && !id.startsWith(`${handle}/`))
    problems.push({ path: '$.id', message: `must be in your namespace: "${handle}/<name>" (or just "<name>")` });
  if (body.issuer !== undefined && body.issuer !== handle) problems.push({ path: '$.issuer', message: `is you: "${handle}" (or leave it out)` });
  if (typeof body.grantee === 'string' && !body.grantee.startsWith(`${handle}/`))
    problems.push({ path: '$.grantee', message: `must be one of your agents: "${handle}/<name>"` });
  const budget = isJsonObject(body.budget) ? body.budget : undefined;
  const currency = typeof budget?.currency === 'string' && currencies.has(budget.currency) ? budget.currency : 'EUR';
  if (budget && budget.currency !== undefined && budget.currency !== currency)
    problems.push({ path: '$.budget.currency', message: `hosted mandates are in ${[...currencies.keys()].join(' or ')}` });
  if (budget && budget.fx !== undefined) problems.push({ path: '$.budget.fx', message: 'exchange rates are set by the platform' });
  const doc = { ...body, id, issuer: handle, ...(budget ? { budget: { ...budget, currency, fx: { ...currencies.get(currency) } } } : {}) };
  return { doc, problems };
}

/** The mandate id of GET /v0/mandates/{ns}/{name}: the two segments, or the one segment that holds it encoded. */
function mandateIdOf(req: Request): string {
  const name = capture(req, 1);
  return name === undefined ? captured(req, 0) : `${captured(req, 0)}/${name}`;
}

const invalid = (problems: readonly Problem[]) =>
  new HolonError('invalid_mandate', `the mandate has ${problems.length} problem${problems.length === 1 ? '' : 's'}`, problems);

export function mandateRoutes(deps: MandateDeps): Router {
  const router = Router();
  const { ctx } = deps;

  mount(router, mandateOperations.list, async (_req, res) => {
    const p = requireKind(res, ['human', 'operator'], 'list mandates');
    const stored = await listRootMandates(ctx.db, { limit: 500, ...(p.kind === 'human' ? { issuer: p.account } : {}) });
    res.json({ mandates: stored.map(mandateView) });
  });

  mount(router, mandateOperations.create, async (req, res) => {
    const p = requireKind(res, ['human', 'operator'], 'create mandates');
    const raw = requireObject(req.body);
    const own = p.kind === 'human' ? ownMandateDoc(raw, p.account, hostedCurrencies(ctx.payments)) : { doc: raw, problems: [] };
    const v = validateMandate(own.doc, { caller: true });
    // The platform's rules first, then the document's own problems at paths not already named.
    const named = new Set(own.problems.map((x) => x.path));
    const problems = [...own.problems, ...(v.ok ? [] : v.problems.filter((x) => !named.has(x.path)))];
    if (problems.length || !v.ok) throw invalid(problems);
    const { created } = await saveMandate(ctx.db, v.mandate, ctx.signingKey);
    if (!created && p.kind === 'human')
      throw new HolonError('mandate_exists', `the mandate ${v.mandate.id} exists; mandates are not edited, create one with a new id`);
    if (p.kind === 'operator') await creditSignup(ctx.db, v.mandate.issuer, deps.signupCredit);
    const stored = (await loadMandate(ctx.db, v.mandate.id))!;
    res.status(created ? 201 : 200).json(mandateView(stored));
  });

  mount(router, mandateOperations.read, async (req, res) => {
    const p = requireKind(res, ['operator', 'human', 'agent'], 'read mandates');
    const id = mandateIdOf(req);
    assertSeesMandate(p, id, `there is no mandate ${id.slice(0, 300)}`);
    const stored = await loadMandate(ctx.db, id);
    if (!stored) throw new HolonError('not_found', `there is no mandate ${id.slice(0, 300)}`);
    res.json(mandateView(stored));
  });

  return router;
}
