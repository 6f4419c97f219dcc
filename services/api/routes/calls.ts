/**
 * POST /v0/calls and GET /v0/calls/{id} (gateway.md §5).
 * 200 succeeded · 202 pending approval, async, or still running past the sync bound · 403 denied ·
 * 404 unknown mandate or agent · 422 rejected input · 502 the agent failed (with its receipt).
 */
import { Router, type Request, type Response } from 'express';
import { HolonError } from '../../../shared/core/errors.js';
import type { ServiceContext } from '../../../shared/context.js';
import { takeOutput } from '../../../shared/calls/outputs.js';
import { loadReceiptTree, type ReceiptView } from '../../../shared/receipts/store.js';
import { submitCall, type Submitted } from '../../../shared/admission/submit.js';
import { submitChild } from '../../../shared/admission/delegate.js';
import { parentOfToken } from '../../../shared/admission/delegation-tokens.js';
import type { CallWaiter } from '../../../shared/calls/waiter.js';
import { BodyReader, requireObject } from '../requests.js';
import { assertSeesMandate, principalOf, requireKind } from '../principal.js';
import {
  claimIdempotencyKey,
  isIdempotencyKey,
  recordIdempotentCall,
  releaseIdempotencyKey,
  requestHash,
  STALE_CLAIM_MS,
  type IdempotencyRow,
} from '../../../shared/hosted/idempotency.js';
import { assertPublicUrl } from '../../../shared/platform/guarded-net.js';
import { asyncRoute } from '../route.js';

export interface CallRoutesDeps {
  gateway: ServiceContext;
  waiter: CallWaiter;
  /** The longest a synchronous request waits before answering 202 (HOLON_SYNC_WAIT_S). */
  syncWaitMs: number;
  /** Hosted: a callback URL must resolve only to public addresses. */
  callbackGuard?: { allowPrivate: boolean };
}

const FIELDS = ['mandate', 'agent', 'capability', 'input', 'max_cost', 'callback_url', 'approval'];

export function wantsAsync(req: Request): boolean {
  return /\brespond-async\b/i.test(req.get('prefer') ?? '');
}

export function callRoutes(deps: CallRoutesDeps): Router {
  const router = Router();

  router.post('/v0/calls', asyncRoute(async (req, res) => {
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
      const parent = await parentOfToken(deps.gateway, token);
      if (!parent) throw new HolonError('invalid_delegation', 403, 'the delegation token is unknown, expired, or its run has ended');
      if (mandate !== undefined && mandate !== parent.sub.id) throw new HolonError('invalid_request', 400, `a delegated call runs under its sub-mandate ${parent.sub.id}`);
      if (approval) throw new HolonError('invalid_request', 400, 'nobody can approve inside a delegated run');
      const child = await submitChild(deps.gateway, parent, capability ? { capability } : { agent: agent! }, r.body.input, {
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
    const submit = () => submitCall(deps.gateway, {
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
    const claim = await claimIdempotencyKey(deps.gateway.db, scope, idempotencyKey, hash);
    if (claim.kind === 'existing') {
      await answerReplay(deps.gateway, res, claim.row, hash);
      return;
    }
    let submitted: Submitted;
    try {
      submitted = await submit();
    } catch (e) {
      await releaseIdempotencyKey(deps.gateway.db, scope, idempotencyKey);
      throw e;
    }
    if (submitted.kind === 'queued') await recordIdempotentCall(deps.gateway.db, scope, idempotencyKey, submitted.callId);
    else await recordIdempotentCall(deps.gateway.db, scope, idempotencyKey, submitted.receipt.id, { status: submitted.httpStatus, code: submitted.code });
    await answerSubmission(deps, res, submitted, wantsAsync(req));
  }));

  router.get('/v0/calls/:id', asyncRoute(async (req, res) => {
    const p = requireKind(res, ['operator', 'human', 'agent'], 'read calls');
    const id = String(req.params.id);
    const call = await deps.gateway.db('calls').where({ id }).first('id', 'status', 'error_code', 'mandate_id');
    const receipt = await loadReceiptTree(deps.gateway.db, id);
    if (!call && !receipt) throw new HolonError('not_found', 404, `there is no call ${id.slice(0, 100)}`);
    assertSeesMandate(p, receipt ? receipt.mandate : String(call.mandate_id), `there is no call ${id.slice(0, 100)}`);
    if (!receipt) {
      res.json({ call: { id, status: call.status } });
      return;
    }
    const output = receipt.status === 'succeeded' ? await takeOutput(deps.gateway, id) : undefined;
    res.json({
      call: { id, status: receipt.status },
      receipt,
      // The output is handed over once, then gone; null when already collected or expired.
      ...(receipt.status === 'succeeded' ? { output: output ?? null } : {}),
    });
  }));

  return router;
}

/** Answer a submission as POST /v0/calls does: refusals, 202 async, or wait (bounded) for the outcome. */
export async function answerSubmission(deps: CallRoutesDeps, res: Response, submitted: Submitted, async: boolean): Promise<void> {
  if (submitted.kind === 'refused') {
    res.status(submitted.httpStatus).json({
      ...(submitted.httpStatus === 202
        ? { status: 'pending_approval', approval: submitted.approval }
        : { error: { code: submitted.code, message: submitted.message, ...(submitted.problems ? { problems: submitted.problems } : {}) } }),
      receipt: submitted.receipt,
    });
    return;
  }
  const { callId, timeoutMs } = submitted;
  if (async) {
    res.status(202).json({ call: { id: callId, status: 'queued' } });
    return;
  }
  const finished = await deps.waiter.wait(callId, Math.min(timeoutMs + 5_000, deps.syncWaitMs));
  if (!finished) {
    const row = await deps.gateway.db('calls').where({ id: callId }).first('status');
    res.status(202).json({ call: { id: callId, status: row?.status ?? 'queued' } });
    return;
  }
  const receipt = (await loadReceiptTree(deps.gateway.db, callId))!;
  await answerFinished(deps.gateway, res, receipt);
}

/** A repeated Idempotency-Key: the original receipt (never its output), or 409/422 (shared/hosted/idempotency.ts). */
async function answerReplay(gateway: ServiceContext, res: Response, row: IdempotencyRow, hash: string): Promise<void> {
  if (row.requestHash !== hash) {
    throw new HolonError('idempotency_key_reused', 422, 'this Idempotency-Key was used for a different request; use a new key for a new request');
  }
  const interrupted = new HolonError(
    'idempotency_key_interrupted',
    409,
    'the call under this Idempotency-Key was interrupted by a restart and its outcome is unknown: check GET /v0/receipts before sending it again with a new key',
  );
  if (row.status === 'interrupted') throw interrupted;
  if (row.callId === null) {
    if (gateway.now() - row.createdAt.getTime() > STALE_CLAIM_MS) throw interrupted;
    throw new HolonError('idempotency_key_in_use', 409, 'the call under this Idempotency-Key is still running');
  }
  const receipt = await loadReceiptTree(gateway.db, row.callId);
  if (!receipt) throw new HolonError('idempotency_key_in_use', 409, `the call under this Idempotency-Key is still running (call ${row.callId})`);
  if (receipt.error === 'gateway_restarted') throw interrupted;
  if (row.refused) {
    res.status(row.refused.status).json({
      replayed: true,
      status: receipt.status,
      ...(receipt.status === 'pending_approval' ? {} : { error: { code: row.refused.code, message: receipt.reasons[0] ?? row.refused.code } }),
      receipt,
    });
    return;
  }
  res.status(receipt.status === 'succeeded' ? 200 : 502).json({
    replayed: true,
    status: receipt.status,
    ...(receipt.status === 'succeeded' ? { output: null } : { error: { code: receipt.error ?? 'agent_error', message: `the agent failed: ${receipt.error ?? 'agent_error'}` } }),
    receipt,
  });
}

async function answerFinished(gateway: ServiceContext, res: Response, receipt: ReceiptView): Promise<void> {
  if (receipt.status === 'succeeded') {
    const output = await takeOutput(gateway, receipt.id);
    res.status(200).json({ output: output ?? null, receipt });
    return;
  }
  res.status(502).json({
    error: { code: receipt.error ?? 'agent_error', message: `the agent failed: ${receipt.error ?? 'agent_error'}; nothing was charged` },
    receipt,
  });
}
