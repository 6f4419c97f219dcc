/**
 * GET /v0/approvals (pending), GET /v0/approvals/{id}, POST /v0/approvals/{id}:
 *   `{}` approve and run now (answers like the call would have) · `{"run": false}` grant (the grantee re-submits
 *   with `approval`) · `{"decision": "reject"}`. Each approval is decided once; the stored input is deleted the
 *   moment it stops being pending.
 */
import { Router } from 'express';
import { HolonError } from '../../../shared/errors.js';
import { approvalView, decideApproval, listPendingApprovals, loadApproval } from '../../../shared/gateway/approvals.js';
import { submitCall } from '../../../shared/gateway/submit.js';
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
    const id = String(req.params.id);
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
    const decided = await decideApproval(gateway.db, id, decision, gateway.now());
    if (!decided) {
      const found = await loadApproval(gateway.db, id, gateway.now());
      if (!found) throw new HolonError('not_found', 404, `there is no approval ${id}`);
      throw new HolonError('approval_decided', 409, `approval ${id} is ${found.approval.status}; it can be decided once`);
    }
    if (decision !== 'run') {
      res.json(approvalView(decided.approval));
      return;
    }
    const a = decided.approval;
    // Approve and run: the stored input, the exact version, the max_cost it was requested with.
    const submitted = await submitCall(gateway, {
      mandateId: a.mandateId,
      agent: `${a.agentId}@${a.agentVersion}`,
      input: decided.input,
      ...(a.maxCost !== null ? { maxCost: a.maxCost } : {}),
      preApproved: a.id,
    });
    await answerSubmission(deps, res, submitted, wantsAsync(req));
  }));

  return router;
}
