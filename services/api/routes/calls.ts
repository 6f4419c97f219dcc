/**
 * Calls: POST /v0/calls and GET /v0/calls/{id} (gateway.md §5). How each is answered: answers.ts.
 */
import { Router } from 'express';
import { HolonError } from '../../../shared/core/errors.js';
import { takeOutput } from '../../../shared/calls/outputs.js';
import { readCall } from '../../../shared/calls/transitions.js';
import { loadReceiptTree } from '../../../shared/receipts/store.js';
import { submitCall, type Submitted } from '../../../shared/admission/submit.js';
import { submitChild } from '../../../shared/admission/delegate.js';
import { parentOfToken } from '../../../shared/admission/delegation-tokens.js';
import { claimIdempotencyKey, isIdempotencyKey, recordIdempotentCall, releaseIdempotencyKey, requestHash } from '../../../shared/hosted/idempotency.js';
import { assertPublicUrl } from '../../../shared/platform/guarded-net.js';
import { answerReplay, answerSubmission, wantsAsync, type AnswerDeps } from '../answers.js';
import { BodyReader, requireObject } from '../requests.js';
import { assertSeesMandate, principalOf, requireKind } from '../principal.js';
import { asyncRoute } from '../route.js';

export interface CallRoutesDeps extends AnswerDeps {
  /** Hosted: a callback URL must resolve only to public addresses. */
  callbackGuard?: { allowPrivate: boolean };
}

const FIELDS = ['mandate', 'agent', 'capability', 'input', 'max_cost', 'callback_url', 'approval'];

export function callRoutes(deps: CallRoutesDeps): Router {
  const router = Router();

  router.post(
    '/v0/calls',
    asyncRoute(async (req, res) => {
      const r = new BodyReader(requireObject(req.body), FIELDS);
      const token = req.get('x-holon-delegation');
      // With a delegation token the mandate is implied: the run's sub-mandate.
      const mandate = r.string('mandate', { required: token === undefined && principalOf(res).kind !== 'agent', max: 300 });
      const agent = r.string('agent', { max: 300 });
      const capability = r.string('capability', { max: 200 });
      if ((agent === undefined) === (capability === undefined) && !r.problems.some((p) => p.path === '$.agent' || p.path === '$.capability')) {
        r.problems.push({ path: '$', message: 'name exactly one of "agent" or "capability"' });
      }
      if (!Object.hasOwn(r.body, 'input')) r.problems.push({ path: '$.input', message: 'is required' });
      const maxCost = r.amount('max_cost');
      const callbackUrl = r.url('callback_url');
      const approval = r.string('approval', { max: 100 });
      r.done();

      if (token !== undefined) {
        // A remote agent calling during its run: the call is the run's child, under its sub-mandate.
        const parent = await parentOfToken(deps.ctx, token);
        if (!parent) throw new HolonError('invalid_delegation', 403, 'the delegation token is unknown, expired, or its run has ended');
        if (mandate !== undefined && mandate !== parent.sub.id)
          throw new HolonError('invalid_request', 400, `a delegated call runs under its sub-mandate ${parent.sub.id}`);
        if (approval) throw new HolonError('invalid_request', 400, 'nobody can approve inside a delegated run');
        const child = await submitChild(deps.ctx, parent, capability ? { capability } : { agent: agent! }, r.body.input, {
          ...(typeof r.body.max_cost === 'string' ? { max_cost: r.body.max_cost } : {}),
        });
        await answerSubmission(deps, res, child, wantsAsync(req));
        return;
      }
      const p = requireKind(res, ['operator', 'human', 'agent'], 'call agents');
      if (callbackUrl && deps.callbackGuard) await assertPublicUrl(callbackUrl, deps.callbackGuard.allowPrivate, { path: '$.callback_url' });
      // With an agent key the mandate is the key's; a human calls under a root mandate they issued.
      const mandateId = p.kind === 'agent' ? p.mandateId : mandate!;
      if (p.kind !== 'operator') {
        if (mandate !== undefined && p.kind === 'agent' && mandate !== p.mandateId) throw new HolonError('not_found', 404, `there is no mandate ${mandate}`);
        assertSeesMandate(p, mandateId, `there is no mandate ${mandateId}`);
        if (mandateId.includes('.')) throw new HolonError('invalid_request', 400, 'a sub-mandate is used only by the delegated run it was derived for');
      }
      const submit = () =>
        submitCall(deps.ctx, {
          mandateId,
          ...(agent ? { agent } : {}),
          ...(capability ? { capability } : {}),
          input: r.body.input,
          ...(maxCost !== undefined ? { maxCost } : {}),
          ...(callbackUrl ? { callbackUrl } : {}),
          ...(approval ? { approval } : {}),
        });
      const idempotencyKey = req.get('idempotency-key');
      if (idempotencyKey === undefined) {
        await answerSubmission(deps, res, await submit(), wantsAsync(req));
        return;
      }
      // Idempotent: claimed in Postgres before anything runs; per API key (dev mode: the operator's one scope).
      if (!isIdempotencyKey(idempotencyKey)) throw new HolonError('invalid_request', 400, 'the Idempotency-Key must be 1 to 255 printable ASCII characters');
      const scope = p.kind === 'operator' ? 'operator' : p.keyPrefix;
      const hash = requestHash({ ...r.body, mandate: mandateId });
      const claim = await claimIdempotencyKey(deps.ctx.db, scope, idempotencyKey, hash);
      if (claim.kind === 'existing') {
        await answerReplay(deps.ctx, res, claim.row, hash);
        return;
      }
      let submitted: Submitted;
      try {
        submitted = await submit();
      } catch (e) {
        await releaseIdempotencyKey(deps.ctx.db, scope, idempotencyKey);
        throw e;
      }
      if (submitted.kind === 'queued') await recordIdempotentCall(deps.ctx.db, scope, idempotencyKey, submitted.callId);
      else await recordIdempotentCall(deps.ctx.db, scope, idempotencyKey, submitted.receipt.id, { status: submitted.httpStatus, code: submitted.code });
      await answerSubmission(deps, res, submitted, wantsAsync(req));
    }),
  );

  router.get(
    '/v0/calls/:id',
    asyncRoute(async (req, res) => {
      const p = requireKind(res, ['operator', 'human', 'agent'], 'read calls');
      const id = String(req.params.id);
      const call = await readCall(deps.ctx.db, id);
      const receipt = await loadReceiptTree(deps.ctx.db, id);
      if (!call && !receipt) throw new HolonError('not_found', 404, `there is no call ${id.slice(0, 100)}`);
      assertSeesMandate(p, receipt ? receipt.mandate : call!.mandateId, `there is no call ${id.slice(0, 100)}`);
      if (!receipt) {
        res.json({ call: { id, status: call!.status } });
        return;
      }
      const output = receipt.status === 'succeeded' ? await takeOutput(deps.ctx, id) : undefined;
      res.json({
        call: { id, status: receipt.status },
        receipt,
        // The output is handed over once, then gone; null when already collected or expired.
        ...(receipt.status === 'succeeded' ? { output: output ?? null } : {}),
      });
    }),
  );

  return router;
}
