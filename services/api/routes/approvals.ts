/**
 * GET /v0/approvals (pending), GET /v0/approvals/{id}, POST /v0/approvals/{id}:
 *   `{}` approve and run now (answers like the call would have) · `{"run": false}` grant (the grantee re-submits
 *   with `approval`) · `{"decision": "reject"}`. Each approval is decided once; the stored input is deleted the
 *   moment it stops being pending.
 */
import { Router } from 'express';
import { approvalView, listPendingApprovals, loadApproval } from '../../../shared/calls/submit/approvals.js';
import { decideAndSubmit } from '../../../shared/calls/submit/decide-approval.js';
import { bodyReader } from '../body-reader.js';
import { assertSeesMandate, ownOrNotFound, requireKind, scopeOf } from '../principal.js';
import { answerSubmission, wantsAsync, type AnswerDeps } from './calls/answers.js';
import { defineOperations, mount } from '../openapi/operations.js';
import { CALL_FAILED, CALL_HELD, CALL_QUEUED, CALL_SUCCEEDED } from '../openapi/call-schemas.js';
import { APPROVAL, BOOLEAN, exact, failure } from '../openapi/schemas.js';

const DECIDE_BODY = {
  type: 'object',
  additionalProperties: false,
  properties: {
    run: { ...BOOLEAN, description: '`false`: grant without running (the grantee re-submits with `approval`); default true' },
    decision: { enum: ['approve', 'reject'], 'x-messages': { enum: 'must be "approve" or "reject"' } },
  },
  not: { required: ['decision', 'run'], properties: { decision: { const: 'reject' } } },
  'x-messages': { not: 'a rejection takes no "run"' },
} as const;

const ID = { id: { description: 'The approval id', example: 'a1b2c3' } } as const;
const READ_ERRORS = { 401: failure('No key', 'unauthorized'), 404: failure('No such approval of yours', 'not_found') } as const;

export const approvalOperations = defineOperations({
  list: {
    id: 'listApprovals',
    method: 'get',
    path: '/v0/approvals',
    tag: 'approvals',
    auth: ['human', 'agent'],
    summary: 'Pending approvals (an agent key: its mandate’s)',
    query: { mandate: { description: 'Only this mandate’s', schema: { type: 'string' } } },
    responses: {
      200: { description: 'Pending approvals', schema: exact('Pending approvals', { approvals: { type: 'array', items: APPROVAL } }, ['approvals']) },
      401: failure('No key', 'unauthorized'),
      404: failure('No such mandate of yours', 'not_found'),
    },
  },
  read: {
    id: 'readApproval',
    method: 'get',
    path: '/v0/approvals/{id}',
    tag: 'approvals',
    auth: ['human', 'agent'],
    summary: 'One approval and its status',
    params: ID,
    responses: { 200: { description: 'The approval', schema: APPROVAL }, ...READ_ERRORS },
  },
  decide: {
    id: 'decideApproval',
    method: 'post',
    path: '/v0/approvals/{id}',
    tag: 'approvals',
    auth: ['human'],
    summary: 'Decide: `{}` approve and run, `{"run": false}` grant, `{"decision": "reject"}` reject',
    description: 'Only the human who issued the mandate decides, once. Approving and running answers like POST /v0/calls.',
    params: ID,
    body: { schema: DECIDE_BODY, example: {} },
    headers: { Prefer: { description: '`respond-async`: answer 202 at once instead of waiting for the run' } },
    responses: {
      200: { description: 'Decided (granted or rejected), or approved, run and succeeded', schema: { oneOf: [APPROVAL, CALL_SUCCEEDED] } },
      202: { description: 'Approved; the call is on its way (or held again)', schema: { oneOf: [CALL_HELD, CALL_QUEUED] } },
      400: failure('A bad body', 'invalid_request'),
      403: failure('An agent or admin key, or the run was denied'),
      409: failure('Already decided'),
      502: { description: 'Approved and run; the agent failed', schema: CALL_FAILED },
      ...READ_ERRORS,
    },
  },
});

const readDecision = bodyReader<{ run?: boolean; decision?: 'approve' | 'reject' }>(DECIDE_BODY);

export function approvalRoutes(deps: AnswerDeps): Router {
  const router = Router();
  const { ctx } = deps;

  mount(router, approvalOperations.list, async (req, res) => {
    const p = requireKind(res, ['operator', 'human', 'agent'], 'read approvals');
    let mandate = req.query.mandate === undefined ? undefined : String(req.query.mandate);
    if (mandate !== undefined) assertSeesMandate(p, mandate, `there is no mandate ${mandate.slice(0, 300)}`);
    if (p.kind === 'agent') mandate = p.mandateId;
    const pending = await listPendingApprovals(ctx.db, ctx.now(), mandate, p.kind === 'human' ? p.account : undefined);
    const scope = scopeOf(p);
    res.json({ approvals: pending.filter((a) => scope(a.approval.mandateId)).map((a) => approvalView(a.approval, a.input)) });
  });

  mount(router, approvalOperations.read, async (req, res) => {
    const p = requireKind(res, ['operator', 'human', 'agent'], 'read approvals');
    const id = String(req.params.id);
    // Another principal's approval answers exactly like one that does not exist.
    const found = ownOrNotFound(scopeOf(p), await loadApproval(ctx.db, id, ctx.now()), (a) => a.approval.mandateId, `there is no approval ${id.slice(0, 100)}`);
    res.json(approvalView(found.approval, found.input));
  });

  mount(router, approvalOperations.decide, async (req, res) => {
    // Only the human who issued the mandate decides (never an agent key, never the admin).
    const p = requireKind(res, ['operator', 'human'], 'decide approvals');
    const id = String(req.params.id);
    ownOrNotFound(scopeOf(p), await loadApproval(ctx.db, id, ctx.now()), (a) => a.approval.mandateId, `there is no approval ${id.slice(0, 100)}`);
    const r = readDecision(req.body);
    r.done();
    const run = r.body.run;
    const decisionField = r.body.decision;
    const decision = decisionField === 'reject' ? 'reject' : run === false ? 'grant' : 'run';
    const decided = await decideAndSubmit(deps.engine, id, decision);
    if (decided.kind === 'decided') res.json(decided.approval);
    else await answerSubmission(deps, res, decided.submitted, { async: wantsAsync(req) });
  });

  return router;
}
