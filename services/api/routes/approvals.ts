/**
 * GET /v0/approvals (pending), GET /v0/approvals/{id}, POST /v0/approvals/{id}:
 *   `{}` approve and run now (answers like the call would have) · `{"run": false}` grant (the grantee re-submits
 *   with `approval`) · `{"decision": "reject"}`. Each approval is decided once; the stored input is deleted the
 *   moment it stops being pending.
 */
import { Router } from 'express';
import { HolonError } from '../../../shared/core/errors.js';
import { approvalView, listPendingApprovals, loadApproval } from '../../../shared/admission/approvals.js';
import { decideAndSubmit } from '../../../shared/admission/decide-approval.js';
import { BodyReader, requireObject } from '../requests.js';
import { assertSeesMandate, requireKind, seesMandate } from '../principal.js';
import { asyncRoute } from '../route.js';
import { answerSubmission, wantsAsync, type AnswerDeps } from '../answers.js';

export function approvalRoutes(deps: AnswerDeps): Router {
  const router = Router();
  const { ctx } = deps;

  router.get(
    '/v0/approvals',
    asyncRoute(async (req, res) => {
      const p = requireKind(res, ['operator', 'human', 'agent'], 'read approvals');
      let mandate = req.query.mandate === undefined ? undefined : String(req.query.mandate);
      if (mandate !== undefined) assertSeesMandate(p, mandate, `there is no mandate ${mandate.slice(0, 300)}`);
      if (p.kind === 'agent') mandate = p.mandateId;
      const pending = await listPendingApprovals(ctx.db, ctx.now(), mandate, p.kind === 'human' ? p.account : undefined);
      res.json({ approvals: pending.filter((a) => seesMandate(p, a.approval.mandateId)).map((a) => approvalView(a.approval, a.input)) });
    }),
  );

  router.get(
    '/v0/approvals/:id',
    asyncRoute(async (req, res) => {
      const p = requireKind(res, ['operator', 'human', 'agent'], 'read approvals');
      const id = String(req.params.id);
      const found = await loadApproval(ctx.db, id, ctx.now());
      // Another principal's approval answers exactly like one that does not exist.
      if (!found || !seesMandate(p, found.approval.mandateId)) throw new HolonError('not_found', 404, `there is no approval ${id.slice(0, 100)}`);
      res.json(approvalView(found.approval, found.input));
    }),
  );

  router.post(
    '/v0/approvals/:id',
    asyncRoute(async (req, res) => {
      // Only the human who issued the mandate decides (never an agent key, never the admin).
      const p = requireKind(res, ['operator', 'human'], 'decide approvals');
      const id = String(req.params.id);
      const found = await loadApproval(ctx.db, id, ctx.now());
      assertSeesMandate(p, found ? found.approval.mandateId : null, `there is no approval ${id.slice(0, 100)}`);
      const r = new BodyReader(requireObject(req.body), ['run', 'decision']);
      const run = r.body.run;
      const decisionField = r.body.decision;
      if (run !== undefined && typeof run !== 'boolean') r.problems.push({ path: '$.run', message: 'must be true or false' });
      if (decisionField !== undefined && decisionField !== 'reject' && decisionField !== 'approve') {
        r.problems.push({ path: '$.decision', message: 'must be "approve" or "reject"' });
      }
      if (decisionField === 'reject' && run !== undefined) r.problems.push({ path: '$', message: 'a rejection takes no "run"' });
      r.done();
      const decision = decisionField === 'reject' ? 'reject' : run === false ? 'grant' : 'run';
      const decided = await decideAndSubmit(ctx, id, decision);
      if (decided.kind === 'decided') res.json(decided.approval);
      else await answerSubmission(deps, res, decided.submitted, wantsAsync(req));
    }),
  );

  return router;
}
