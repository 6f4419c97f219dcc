/**
 * GET /v0/approvals (pending), GET /v0/approvals/{id}, POST /v0/approvals/{id}:
 *   `{}` approve and run now (answers like the call would have) · `{"run": false}` grant (the grantee re-submits
 *   with `approval`) · `{"decision": "reject"}`. Each approval is decided once; the stored input is deleted the
 *   moment it stops being pending.
 */
import { Router } from 'express';
import { HolonError } from '../../../shared/errors.js';
import { approvalView, listPendingApprovals, loadApproval } from '../../../shared/gateway/approvals.js';
import { decideAndSubmit } from '../../../shared/gateway/decide-approval.js';
import { BodyReader, requireObject } from '../requests.js';
import { asyncRoute } from '../route.js';
import { answerSubmission, wantsAsync, type CallRoutesDeps } from './calls.js';

export function approvalRoutes(deps: CallRoutesDeps): Router {
  const router = Router();
  const { gateway } = deps;

  router.get('/v0/approvals', asyncRoute(async (req, res) => {
    const mandate = req.query.mandate === undefined ? undefined : String(req.query.mandate);
    const pending = await listPendingApprovals(gateway.db, gateway.now(), mandate);
    res.json({ approvals: pending.map((p) => approvalView(p.approval, p.input)) });
  }));

  router.get('/v0/approvals/:id', asyncRoute(async (req, res) => {
    const found = await loadApproval(gateway.db, String(req.params.id), gateway.now());
    if (!found) throw new HolonError('not_found', 404, `there is no approval ${String(req.params.id)}`);
    res.json(approvalView(found.approval, found.input));
  }));

  router.post('/v0/approvals/:id', asyncRoute(async (req, res) => {
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
    const decided = await decideAndSubmit(gateway, String(req.params.id), decision);
    if (decided.kind === 'decided') res.json(decided.approval);
    else await answerSubmission(deps, res, decided.submitted, wantsAsync(req));
  }));

  return router;
}
